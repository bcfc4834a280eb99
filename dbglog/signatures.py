"""Failure signatures: turn a run's output into the one most *causal* failure name.

The catalog follows /work/shared/reference/gpu-debug-practice.md §1 (each row cites its source
there). Two rules shape this module:

* Report the most causal match, not the last line. Several messages are wrappers that re-print an
  earlier error (NCCL "watchdog thread terminated with exception", vLLM "See root cause above",
  ``terminate called ...``, pytest's ``FAILED`` summary). Every signature therefore carries a
  ``rank``; higher means "closer to the real cause". Ties go to the earliest line, because the
  cause is printed before its consequences (chained tracebacks, assert site before CUDA error).
* Never raise on arbitrary text: classification runs on whatever a crashing process printed,
  including invalid UTF-8 already decoded with replacement characters.

Rank bands (keep new signatures inside them so precedence stays predictable):
  90-99 infrastructure (hardware Xid, ECC)      80-89 GPU fault (illegal address, assert, ...)
  70-79 OOM, build/arch, driver, Triton          60-69 fatal signals seen by Python, collectives
  40-59 Python exceptions, test timeouts         20-39 hints, summaries, shell job messages
  0-19  wrappers that re-print an earlier error
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from dbglog.errors import DbglogError

# A resolver turns a regex match into (reported name, rank); used where the name depends on the
# text (``py.traceback:ValueError``, the ``cudaError...`` token, hardware vs app Xids).
Resolver = Callable[["re.Match[str]"], "tuple[str, int]"]


@dataclass(frozen=True)
class Signature:
    name: str
    patterns: tuple[str, ...]
    rank: int
    outcome: str | None = None  # hint for the runner: "oom", "hang"
    wrapper: bool = False  # re-prints an earlier error; never the cause itself
    description: str = ""
    flags: int = 0
    resolve: Resolver | None = None
    source: str = "builtin"  # "builtin" or the config file a user signature came from
    # Per pattern, literals one of which every match contains (None: scan everything). Only lines
    # holding a needle are handed to the regex, so a 10 MB log costs a few str.find calls per
    # pattern and no pattern can backtrack across megabytes of unrelated output.
    needles: tuple = ()

    def compiled(self) -> list[re.Pattern[str]]:
        return [_compile(p, self.flags) for p in self.patterns]


@dataclass
class Match:
    """The chosen signature for a text, with the evidence that supports it."""

    name: str  # reported name, e.g. "gpu.illegal_address" or "py.traceback:ValueError"
    signature: str  # catalog entry that fired, e.g. "py.traceback"
    rank: int
    line_no: int  # 1-based line of the deciding match
    line: str
    outcome: str | None = None
    groups: tuple[str | None, ...] = ()
    key_lines: list[tuple[int, str]] = field(default_factory=list)  # deciding line first
    others: list[str] = field(default_factory=list)  # other names seen, most causal first

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "signature": self.signature,
            "rank": self.rank,
            "line_no": self.line_no,
            "line": self.line,
            "outcome": self.outcome,
            "key_lines": [{"line": n, "text": t} for n, t in self.key_lines],
            "others": list(self.others),
        }


_CACHE: dict[tuple[str, int], re.Pattern[str]] = {}


def _compile(pattern: str, flags: int = 0) -> re.Pattern[str]:
    key = (pattern, flags)
    rx = _CACHE.get(key)
    if rx is None:
        # MULTILINE: we scan the whole text with each regex in C (fast on tens of MB) and map
        # offsets back to line numbers, instead of looping over lines in Python.
        rx = _CACHE[key] = re.compile(pattern, flags | re.MULTILINE)
    return rx


# --- resolvers -------------------------------------------------------------------------------

# The machine token torch prints ("Search for `cudaErrorIllegalAddress' in ...") is the best single
# key (reference §7.1); map it onto the same names the text messages use so both agree.
_TOKEN_NAMES = {
    "IllegalAddress": ("gpu.illegal_address", 81),
    "Assert": ("gpu.device_assert", 81),
    "MisalignedAddress": ("gpu.misaligned", 81),
    "LaunchFailure": ("gpu.launch_failure", 81),
    "IllegalInstruction": ("gpu.illegal_instruction", 81),
    "LaunchTimeout": ("gpu.launch_timeout", 77),
    "NoKernelImageForDevice": ("build.no_kernel_image", 78),
    "NoBinaryForGpu": ("build.no_kernel_image", 78),
    "MemoryAllocation": ("oom.runtime", 71),
    "OutOfMemory": ("oom.runtime", 71),
    "StreamCaptureUnsupported": ("gpu.graph_capture", 75),
}


def _resolve_error_token(m: re.Match[str]) -> tuple[str, int]:
    token = m.group(1)
    suffix = re.sub(r"^(?:cuda|hip)Error", "", token)
    if suffix in _TOKEN_NAMES:
        return _TOKEN_NAMES[suffix]
    return f"gpu.error:{token}", 79


def _resolve_traceback(m: re.Match[str]) -> tuple[str, int]:
    exc = m.group("exc").rsplit(".", 1)[-1]
    if exc in ("KeyboardInterrupt", "SystemExit", "GeneratorExit"):
        return f"py.traceback:{exc}", 35
    return f"py.traceback:{exc}", 45


# Xids the NVIDIA catalog lists as hardware/infrastructure (reference row 30); the rest are
# usually application-induced (13, 31, 43, 45) and rank below the CUDA error they accompany.
_HW_XIDS = {48, 63, 64, 74, 79, 92, 94, 95, 119, 120}


def _resolve_xid(m: re.Match[str]) -> tuple[str, int]:
    try:
        xid = int(m.group(2))
    except (TypeError, ValueError):
        return "kernel.xid", 72
    return (f"kernel.xid:{xid}", 95) if xid in _HW_XIDS else (f"kernel.xid:{xid}", 72)


def _resolve_hw_exception(m: re.Match[str]) -> tuple[str, int]:
    return ("rocm.hw_exception", 94) if m.group(3) == "ECC" else ("rocm.hw_exception", 83)


def _resolve_memory_fault(m: re.Match[str]) -> tuple[str, int]:
    return ("rocm.memory_fault", 94) if "ECC" in (m.group(5) or "") else ("rocm.memory_fault", 84)


# vLLM prefixes engine-core output with "(EngineCore_DP0 pid=123) "; torch.distributed with "[rank0]: ".
_PREFIX = r"(?:\([\w.-]+ pid=\d+\) |\[rank\d+\]:[ \t]?)?"
_EXC = r"(?P<exc>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt))"

# --- the catalog ------------------------------------------------------------------------------
# Patterns use [ \t] instead of \s where a match must stay on one line (MULTILINE scanning).

_S = Signature
BUILTIN: tuple[Signature, ...] = (
    # GPU faults (rows 1-12): CUDA and HIP share the strings, so one (CUDA|HIP) prefix covers both.
    _S("gpu.illegal_address", (r"(?:CUDA|HIP) error: an illegal memory access was encountered",
                               r"Cuda failure 'an illegal memory access was encountered'"), 80),
    _S("gpu.device_assert", (r"(?:CUDA|HIP) error: device-side assert triggered",), 80),
    # The assert() print names the kernel source site; more specific than the CUDA error, and
    # printed first, so it wins and the CUDA error becomes a supporting key line.
    _S("gpu.device_assert.site",
       (r"^(.{1,512}?):(\d+): (.{0,512}?): block: \[(\d+),(\d+),(\d+)\], thread: \[(\d+),(\d+),(\d+)\] "
        r"Assertion `(.*)` failed\.",), 82),
    _S("gpu.misaligned", (r"(?:CUDA|HIP) error: misaligned address",), 80),
    _S("gpu.launch_failure", (r"(?:CUDA|HIP) error: unspecified launch failure",), 80),
    _S("gpu.illegal_instruction", (r"(?:CUDA|HIP) error: an illegal instruction was encountered",), 80),
    _S("gpu.launch_timeout", (r"the launch timed out and was terminated",), 76),
    _S("build.no_kernel_image", (r"no kernel image is available for execution on the device",), 77),
    _S("build.hip_no_binary",
       (r"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!",), 77),
    _S("gpu.graph_capture", (r"operation not permitted when stream is capturing",), 74),
    _S("gpu.error_name", (r"Search for `((?:cuda|hip)Error\w+)' in",), 81,
       resolve=_resolve_error_token, description="torch's machine token; mapped to the text name"),
    _S("gpu.async_hint",
       (r"CUDA kernel errors might be asynchronously reported at some other API call",), 20,
       description="a hint printed next to sticky errors, never a cause"),
    # Memory (rows 13-18).
    _S("oom.torch_cuda", (r"CUDA out of memory\. Tried to allocate ([\d.]+ [KMGT]?i?B)",), 72, "oom"),
    _S("oom.torch_hip", (r"HIP out of memory\. Tried to allocate",), 72, "oom"),
    _S("oom.exception_type", (r"(?:torch\.)?(?:cuda\.)?OutOfMemoryError",), 70, "oom"),
    _S("oom.runtime", (r"(?:CUDA|HIP) error: out of memory",), 71, "oom"),
    _S("oom.vllm_kv", (r"No available memory for the cache blocks",), 70, "oom"),
    _S("oom.host_killer", (r"(?:Memory cgroup out of memory|Out of memory): Killed process (\d+) \((.+?)\)",),
       73, "oom"),
    # ROCm runtime (rows 19-21): printed without any torch message.
    _S("rocm.memory_fault",
       (r"Memory access fault by GPU node-(\d+) \(Agent handle: (\S+)\) on address (\S+?)"
        r"(\(may not be exact address\))?\. Reason: (.+)\.",), 84, resolve=_resolve_memory_fault),
    _S("rocm.hw_exception",
       (r"HW Exception by GPU node-(\d+) \(Agent handle: (\S+)\) reason ?:(GPU Hang|ECC)",), 83,
       resolve=_resolve_hw_exception),
    _S("rocm.queue_abort",
       (r"Callback: Queue (\S+) [Aa]borting with error : (HSA_STATUS_\w+): (.*?) code: (0x[0-9a-fA-F]+)",),
       79, flags=re.IGNORECASE),
    # Collectives (rows 22-27).
    _S("nccl.watchdog_timeout",
       (r"Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(\d+), OpType=(\w+).*?"
        r"Timeout\(ms\)=(\d+)\) ran for (\d+) milliseconds before timing out",), 62, "hang"),
    _S("nccl.watchdog_stuck",
       (r"ProcessGroupNCCL's watchdog got stuck for (\d+) seconds without making progress",), 61, "hang"),
    _S("nccl.teardown",
       (r"Some NCCL operations have failed or timed out",
        r"Process group watchdog thread terminated with exception: (.*)"), 15, wrapper=True),
    _S("nccl.error", (r"NCCL error in: (\S+):(\d+), (.*)",), 58),
    _S("nccl.result_text",
       (r"unhandled cuda error \(run with NCCL_DEBUG=INFO", r"unhandled system error",
        r"remote process exited or there was a network error", r"internal error - please report"), 57),
    _S("nccl.warn", (r"NCCL WARN (.*)",), 52),
    # Triton (rows 28-29).
    _S("triton.out_of_resources",
       (r"out of resource: (.+?),? Required: (\d+),? Hardware limit: ?(\d+)",), 74),
    _S("triton.driver_error", (r"Triton Error \[CUDA\]: (.*)",), 75),
    # Kernel log lines (rows 30-34), seen when dmesg is merged into the output.
    _S("kernel.xid", (r"NVRM: Xid \((?:PCI:)?([0-9a-fA-F:.]+)\): (\d+), (.*)",), 95, resolve=_resolve_xid),
    _S("kernel.hung_task", (r"INFO: task (.+):(\d+) blocked for more than (\d+) seconds",), 60, "hang"),
    _S("kernel.segfault",
       (r"(?<!\S)(\S{1,64})\[(\d+)\]: segfault at ([0-9a-f]+) ip ([0-9a-f]+) sp ([0-9a-f]+) error (\d+)",), 64),
    _S("kernel.amdgpu_ring_timeout", (r"amdgpu_job_timedout.*\*ERROR\* ring (\S+) timeout",), 78, "hang"),
    _S("kernel.amdgpu_page_fault",
       (r"\[(gfxhub|mmhub)\d*\] (?:(?:no-)?retry )?page fault \(src_id:(\d+) ring:(\d+) vmid:(\d+) pasid:(\d+)",),
       79),
    # Python (rows 35-37). The traceback pattern needs the "Traceback" header earlier; see
    # _traceback_matches. pytest prints exceptions as "E   ValueError: ..." lines instead.
    _S("py.traceback", (r"^" + _PREFIX + _EXC + r"(?::[ \t]*(?P<msg>.*))?$",
                        r"^E[ \t]+" + _EXC + r"(?::[ \t]*(?P<msg>.*))?$"), 45,
       resolve=_resolve_traceback),
    _S("py.fatal",
       (r"^Fatal Python error: (Segmentation fault|Aborted|Bus error|Floating point exception|Illegal instruction)",),
       65),
    _S("py.faulthandler_timeout", (r"^Timeout \((\d+:\d\d:\d\d(?:\.\d+)?)\)!$",), 47, "hang"),
    # C++ and shell (rows 38-39).
    _S("cpp.terminate", (r"terminate called after throwing an instance of '([^']+)'",), 30),
    _S("shell.signal",
       # bash prints "Segmentation fault (core dumped)" alone, or "line 1: 123 Killed   cmd" for
       # a job; zsh prints "zsh: IOT instruction (core dumped)  cmd".
       (r"^(?:.*\b\d+ )?(?:Segmentation fault|Aborted|Killed|Bus error|Floating point exception"
        r"|Illegal instruction)(?:[ \t]+\(core dumped\))?(?:[ \t]{2,}.*)?$",
        r"IOT instruction \(core dumped\)",
        r"^zsh: (?:segmentation fault|abort|killed|bus error|illegal hardware instruction)"), 25),
    # GPU coredump progress (row 40): accompanies the real fault.
    _S("gpu.coredump_written",
       (r"coredump: Detected an exception of type (CUDBG_EXCEPTION_\w+)",
        r"coredump: Writing ELF file to (\S+)"), 35),
    # vLLM wrappers (rows 41-42): the cause is printed earlier.
    _S("vllm.engine_init", (r"Engine core initialization failed\. See root cause above\.",), 10, wrapper=True),
    _S("vllm.engine_dead",
       (r"EngineCore encountered an issue\. See stack trace \(above\) for the root cause\.",), 10, wrapper=True),
    # pytest (rows 43-44).
    _S("test.pytest_failed", (r"^(?:FAILED|ERROR) (\S+?)(?: - (.*))?$",), 12, wrapper=True),
    _S("test.pytest_timeout",
       (r"^\+{5,} Timeout \+{5,}$", r"Timeout \(>([\d.]+)s\) from pytest-timeout\.",
        r"Failed: Timeout >([\d.]+)s"), 48, "hang"),
    # Sanitizers (rows 45-47): precise reports of the faulting access, above the CUDA error.
    _S("sanitizer.memcheck",
       (r"^========= Invalid __(global|shared|local)__ (read|write) of size (\d+)(?: bytes)?",
        r"^=========     Address (0x[0-9a-f]+) is (out of bounds|misaligned)",
        r"^========= Program hit (cuda\w+)"), 86),
    _S("sanitizer.racecheck",
       (r"^========= (?:Error|WARN): Race reported between (Read|Write) access",), 86),
    _S("sanitizer.initcheck", (r"Uninitialized __global__ memory read of size",), 85),
    _S("sanitizer.summary",
       (r"^========= ERROR SUMMARY: ([1-9]\d*) errors?",
        r"^========= RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)"), 30),
    _S("sanitizer.asan", (r"^==(\d+)==ERROR: AddressSanitizer: ([\w-]+)", r"^SUMMARY: AddressSanitizer: "), 86),
    _S("sanitizer.tsan", (r"^WARNING: ThreadSanitizer: (data race|[\w -]+)",), 86),
    _S("sanitizer.ubsan", (r"\S:\d+:\d+: runtime error: ",), 66),
    # Numerics (rows 48-49).
    _S("numeric.nan_anomaly", (r"Function '(\w+)' returned nan values in its (\d+)th output\.",), 50),
    _S("numeric.nan_stats", (r"^[ \t]*(?:min=\S+ max=\S+ mean=\S+ )?nan_count=([1-9]\d*)",
                             r"\binf_count=([1-9]\d*)"), 28),
)
del _S

_NEEDLES = {'gpu.illegal_address': [(' error: an illegal memory access was encountered',), ("Cuda failure 'an illegal memory access",)], 'gpu.device_assert': [(' error: device-side assert triggered',)], 'gpu.device_assert.site': [('], thread: [',)], 'gpu.misaligned': [(' error: misaligned address',)], 'gpu.launch_failure': [(' error: unspecified launch failure',)], 'gpu.illegal_instruction': [(' error: an illegal instruction was encountered',)], 'gpu.launch_timeout': [('the launch timed out and was terminated',)], 'build.no_kernel_image': [('no kernel image is available',)], 'build.hip_no_binary': [('hipErrorNoBinaryForGpu',)], 'gpu.graph_capture': [('operation not permitted when stream is capturing',)], 'gpu.error_name': [('Search for `',)], 'gpu.async_hint': [('CUDA kernel errors might be asynchronously',)], 'oom.torch_cuda': [('CUDA out of memory.',)], 'oom.torch_hip': [('HIP out of memory.',)], 'oom.exception_type': [('OutOfMemoryError',)], 'oom.runtime': [(' error: out of memory',)], 'oom.vllm_kv': [('No available memory for the cache blocks',)], 'oom.host_killer': [(': Killed process ',)], 'rocm.memory_fault': [('Memory access fault by GPU node-',)], 'rocm.hw_exception': [('HW Exception by GPU node-',)], 'rocm.queue_abort': [('HSA_STATUS_',)], 'nccl.watchdog_timeout': [('Watchdog caught collective operation timeout',)], 'nccl.watchdog_stuck': [('watchdog got stuck for',)], 'nccl.teardown': [('Some NCCL operations have failed',), ('Process group watchdog thread terminated with exception',)], 'nccl.error': [('NCCL error in: ',)], 'nccl.result_text': [('unhandled cuda error',), ('unhandled system error',), ('remote process exited or there was a network error',), ('internal error - please report',)], 'nccl.warn': [('NCCL WARN ',)], 'triton.out_of_resources': [('out of resource: ',)], 'triton.driver_error': [('Triton Error [CUDA]: ',)], 'kernel.xid': [('NVRM: Xid (',)], 'kernel.hung_task': [('INFO: task ',)], 'kernel.segfault': [(']: segfault at ',)], 'kernel.amdgpu_ring_timeout': [('amdgpu_job_timedout',)], 'kernel.amdgpu_page_fault': [('page fault (src_id:',)], 'py.traceback': [('Error', 'Exception', 'Exit', 'Interrupt'), ('Error', 'Exception', 'Exit', 'Interrupt')], 'py.fatal': [('Fatal Python error: ',)], 'py.faulthandler_timeout': [('Timeout (',)], 'cpp.terminate': [('terminate called after throwing',)], 'shell.signal': [('Segmentation fault', 'Aborted', 'Killed', 'Bus error', 'Floating point exception', 'Illegal instruction'), ('IOT instruction',), ('zsh: ',)], 'gpu.coredump_written': [('coredump: Detected',), ('coredump: Writing ELF',)], 'vllm.engine_init': [('See root cause above',)], 'vllm.engine_dead': [('EngineCore encountered an issue',)], 'test.pytest_failed': [('FAILED ', 'ERROR ')], 'test.pytest_timeout': [('+++++ Timeout +++++',), ('from pytest-timeout',), ('Failed: Timeout >',)], 'sanitizer.memcheck': [('========= Invalid __',), ('=========     Address ',), ('========= Program hit ',)], 'sanitizer.racecheck': [('Race reported between',)], 'sanitizer.initcheck': [('Uninitialized __global__',)], 'sanitizer.summary': [('ERROR SUMMARY: ',), ('RACECHECK SUMMARY: ',)], 'sanitizer.asan': [('ERROR: AddressSanitizer: ',), ('SUMMARY: AddressSanitizer: ',)], 'sanitizer.tsan': [('WARNING: ThreadSanitizer: ',)], 'sanitizer.ubsan': [(': runtime error: ',)], 'numeric.nan_anomaly': [('returned nan values',)], 'numeric.nan_stats': [('nan_count=',), ('inf_count=',)]}
BUILTIN = tuple(Signature(**{**sig.__dict__, "needles": tuple(_NEEDLES[sig.name])}) for sig in BUILTIN)
assert all(len(sig.needles) == len(sig.patterns) for sig in BUILTIN)
CATEGORY_NAMES = tuple(s.name for s in BUILTIN)

_TRACEBACK_HEADER = re.compile(r"^" + _PREFIX + r"Traceback \(most recent call last\):", re.MULTILINE)
_WRAPPER_TEXT = re.compile(
    r"See root cause above|See stack trace \(above\)|Process group watchdog thread terminated"
)


class _Lines:
    """Offset -> 1-based line number and line text, without splitting a huge string."""

    def __init__(self, text: str):
        self.text = text
        self.starts = [0]
        find = text.find
        pos = find("\n")
        while pos != -1:
            self.starts.append(pos + 1)
            pos = find("\n", pos + 1)

    def locate(self, offset: int) -> tuple[int, str]:
        i = bisect.bisect_right(self.starts, offset) - 1
        start = self.starts[i]
        end = self.text.find("\n", start)
        line = self.text[start:] if end == -1 else self.text[start:end]
        return i + 1, line.rstrip("\r")


@dataclass
class _Hit:
    name: str
    sig: Signature
    rank: int
    offset: int
    groups: tuple


def _needle_lines(text: str, needles: Sequence[str]) -> list[tuple[int, int]]:
    """(start, end) of every line containing one of ``needles``, in order, without duplicates."""
    spans = set()
    for n in needles:
        pos = text.find(n)
        while pos != -1:
            start = text.rfind("\n", 0, pos) + 1
            end = text.find("\n", pos)
            end = len(text) if end == -1 else end
            spans.add((start, end))
            pos = text.find(n, end)
    return sorted(spans)


def _finditer(rx: re.Pattern[str], text: str, needles) -> Iterable[re.Match[str]]:
    if needles is None:
        yield from rx.finditer(text)
        return
    for start, end in _needle_lines(text, needles):
        # pos/endpos keep offsets absolute; "^" and "$" still match at line boundaries.
        yield from rx.finditer(text, start, end)


def _hits(text: str, sigs: Sequence[Signature]) -> list[_Hit]:
    hits: list[_Hit] = []
    header_offsets: list[int] | None = None
    for sig in sigs:
        for idx, rx in enumerate(sig.compiled()):
            needles = sig.needles[idx] if idx < len(sig.needles) else None
            for m in _finditer(rx, text, needles):
                if m.end() == m.start():
                    continue  # an empty user pattern would otherwise match everywhere
                name, rank = (sig.resolve(m) if sig.resolve else (sig.name, sig.rank))
                if sig.name == "py.traceback" and sig.source == "builtin":
                    if idx == 0:
                        # A bare "XError: msg" line is only an exception if a traceback header
                        # came before it; otherwise log lines like "ValueError: ..." would fire.
                        if header_offsets is None:
                            header_offsets = [h.start() for h in _TRACEBACK_HEADER.finditer(text)]
                        if not header_offsets or header_offsets[0] > m.start():
                            continue
                    # A Python exception that only re-raises an earlier failure ("...See root
                    # cause above") is itself a wrapper.
                    if _WRAPPER_TEXT.search(m.group("msg") or ""):
                        rank = 11
                hits.append(_Hit(name, sig, rank, m.start(), m.groups()))
    return hits


def classify_text(text: str | bytes, signatures: Iterable[Signature] | None = None,
                  *, max_key_lines: int = 8) -> Match | None:
    """Return the most causal signature match in ``text`` (None if nothing matched).

    ``signatures`` defaults to the built-in catalog; pass ``all_signatures(config)`` to include the
    user's. Never raises on odd input (bytes are decoded with replacement characters).
    """
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    if not text:
        return None
    sigs = list(BUILTIN if signatures is None else signatures)
    hits = _hits(text, sigs)
    if not hits:
        return None
    # Highest rank wins; on a tie the earliest line wins (causes print before consequences);
    # user signatures win ties against built-ins because the user asked for them.
    hits.sort(key=lambda h: (-h.rank, h.sig.source == "builtin", h.offset))
    best = hits[0]
    lines = _Lines(text)
    line_no, line = lines.locate(best.offset)
    key: list[tuple[int, str]] = [(line_no, line)]
    seen_lines = {line_no}
    others: list[str] = []
    for h in hits[1:]:
        if h.name != best.name and h.name not in others:
            others.append(h.name)
        if len(key) < max_key_lines:
            n, t = lines.locate(h.offset)
            if n not in seen_lines:
                seen_lines.add(n)
                key.append((n, t))
    return Match(name=best.name, signature=best.sig.name, rank=best.rank, line_no=line_no,
                 line=line, outcome=best.sig.outcome, groups=tuple(best.groups),
                 key_lines=key, others=others)


# --- user signatures in .dbglog/config.toml ---------------------------------------------------

DEFAULT_USER_RANK = 75  # above OOM and collectives: a user signature names what they are hunting


def _toml():
    try:
        import tomllib  # Python >= 3.11
    except ModuleNotFoundError:  # pragma: no cover - 3.10
        import tomli as tomllib
    return tomllib


def _validate(name: str, pattern: str, rank, where: str) -> Signature:
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.:\-]+", name or ""):
        raise DbglogError(f"{where}: signature name {name!r} must be letters, digits, '.', '_', ':' or '-'")
    if not isinstance(pattern, str) or not pattern:
        raise DbglogError(f"{where}: signature {name!r} needs a non-empty pattern string")
    try:
        re.compile(pattern)
    except re.error as e:
        raise DbglogError(f"{where}: signature {name!r} has an invalid regex ({e}); fix the pattern") from None
    if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank <= 100:
        raise DbglogError(f"{where}: signature {name!r} rank must be an integer 0-100, got {rank!r}")
    return Signature(name=name, patterns=(pattern,), rank=rank, source=where)


def load_user_signatures(path: str | Path) -> list[Signature]:
    """Read ``[[signature]]`` tables (name, pattern, optional rank/outcome) from a config.toml.

    A missing file means no user signatures. A malformed one is a DbglogError naming the file.
    """
    path = Path(path)
    if not path.exists():
        return []
    try:
        data = _toml().loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise DbglogError(f"cannot read {path}: {e}; fix or remove the file") from None
    entries = data.get("signature", [])
    if not isinstance(entries, list):
        raise DbglogError(f"{path}: 'signature' must be an array of tables ([[signature]])")
    out = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise DbglogError(f"{path}: signature #{i + 1} must be a table")
        sig = _validate(entry.get("name"), entry.get("pattern"), entry.get("rank", DEFAULT_USER_RANK), str(path))
        outcome = entry.get("outcome")
        if outcome is not None:
            if outcome not in ("oom", "hang", "fail", "crash"):
                raise DbglogError(f"{path}: signature {sig.name!r} outcome must be oom, hang, fail or crash")
            sig = Signature(**{**sig.__dict__, "outcome": outcome})
        out.append(sig)
    return out


def _toml_str(s: str) -> str:
    # TOML literal strings ('...') keep regex backslashes readable; fall back to a basic string.
    if "'" not in s and "\n" not in s:
        return f"'{s}'"
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def add_user_signature(path: str | Path, name: str, pattern: str, rank: int = DEFAULT_USER_RANK) -> Signature:
    """Append a ``[[signature]]`` table to config.toml, keeping every existing byte as it was.

    Appending text (rather than load + dump) preserves the user's comments and layout.
    """
    path = Path(path)
    sig = _validate(name, pattern, rank, str(path))
    existing = [s.name for s in load_user_signatures(path)]
    if name in existing:
        raise DbglogError(f"{path}: a signature named {name!r} already exists; pick another name")
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    block = f"[[signature]]\nname = {_toml_str(name)}\npattern = {_toml_str(pattern)}\nrank = {rank}\n"
    sep = "" if not old else ("\n" if old.endswith("\n") else "\n\n")
    new = old + sep + block
    _toml().loads(new)  # never leave an unparsable config behind
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(new, encoding="utf-8")
    tmp.replace(path)
    return sig


def all_signatures(config_path: str | Path | None = None) -> list[Signature]:
    """Built-ins plus the user's signatures from ``config_path`` (if given and present)."""
    sigs = list(BUILTIN)
    if config_path is not None:
        sigs.extend(load_user_signatures(config_path))
    return sigs


# --- kernel-API logs (reference §6) -----------------------------------------------------------

_API_CALL = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\] (SGLang Kernel|FlashInfer) API Call: (.+?)\s*$")
_API_DONE = re.compile(r"^(Output:|Output value:)\s*$")
_API_EXC = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\] SGLang Kernel API Exception: (\S+) \((\w+): (.*)\)\s*$")


@dataclass
class ApiBoundary:
    """The last kernel-API call in a log and whether it finished."""

    framework: str  # "SGLang Kernel" or "FlashInfer"
    name: str
    timestamp: str
    line_no: int
    status: str  # "in_flight" | "completed" | "exception" | "started" (level 1: no markers)
    exception: str | None = None
    calls: int = 0
    source: str | None = None

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def parse_kernel_api_log(text: str | bytes, source: str | None = None) -> ApiBoundary | None:
    """Find the in-flight boundary: the last API call that started and did not finish.

    "API Call" is written before the kernel runs and "Output:"/"Output value:" only after a
    successful return, so the last call without a completion marker is where the process was
    when it died (host side; CUDA errors are asynchronous, so the faulting kernel may be earlier).
    Returns the last call with its status when every call finished, None when there is no call.
    """
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    calls: list[dict] = []
    markers_seen = False
    for no, raw in enumerate(text.splitlines(), 1):
        m = _API_CALL.match(raw)
        if m:
            calls.append({"ts": m.group(1), "fw": m.group(2), "name": m.group(3), "line": no,
                          "status": "in_flight", "exc": None})
            continue
        if not calls:
            continue
        if _API_DONE.match(raw):
            markers_seen = True
            calls[-1]["status"] = "completed"
            continue
        m = _API_EXC.match(raw)
        if m:
            markers_seen = True
            calls[-1]["status"] = "exception"
            calls[-1]["exc"] = f"{m.group(3)}: {m.group(4)}"
    if not calls:
        return None
    # Calls in one file (one process) are sequential, so only the last one can be in flight.
    chosen = calls[-1]
    status = chosen["status"]
    if status == "in_flight" and not markers_seen:
        status = "started"  # level 1 logs have no completion markers: only "last call started"
    return ApiBoundary(framework=chosen["fw"], name=chosen["name"], timestamp=chosen["ts"],
                       line_no=chosen["line"], status=status, exception=chosen["exc"],
                       calls=len(calls), source=source)
