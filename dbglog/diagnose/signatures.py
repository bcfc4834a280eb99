"""Failure signatures: turn a run's output into the one most *causal* failure name.

The catalog follows /work/shared/reference/gpu-debug-practice.md §1 and the wordings collected from
public failure logs for tests/corpus/logs/ (CUDA, HIP/HSA/ROCm 5-7, NCCL/RCCL, cuBLAS/cuDNN/MIOpen,
Triton, torchrun/elastic, vLLM/SGLang engines, kernel logs, cuda-gdb, rocgdb, gdb, rocm-debug-agent).
Three rules shape this module:

* Report the most causal match, not the last line. Several messages are wrappers that re-print an
  earlier error (NCCL "watchdog thread terminated with exception", vLLM "See root cause above",
  ``terminate called ...``, torchrun's ``ChildFailedError``, pytest's ``FAILED`` summary) and some are
  consequences ("Aborted (core dumped)", "Fatal Python error: Aborted"). Every signature carries a
  ``rank``; higher means "closer to the real cause". Ties go to the earliest line, because the cause
  is printed before its consequences (chained tracebacks, assert site before CUDA error).
* Never raise on arbitrary text: classification runs on whatever a crashing process printed,
  including invalid UTF-8 already decoded with replacement characters.
* Stay linear in the size of the output. Built-in patterns only look at lines holding one of their
  literal needles (a handful of ``str.find`` scans in C), giant lines are looked at through a window
  around the needle, and a user's own regex runs under a time budget (it may backtrack
  catastrophically; the slow pattern is named and skipped, never allowed to hang ``run``).

Rank bands (keep new signatures inside them so precedence stays predictable):
  90-99 infrastructure (hardware Xid, ECC)      80-89 GPU fault (illegal address, assert, traps, ...)
  70-79 OOM, build/arch, driver, libraries      60-69 fatal signals seen by Python, collectives
  40-59 Python exceptions, test timeouts         20-39 hints, summaries, shell job messages
  0-19  wrappers that re-print an earlier error
"""

from __future__ import annotations

import bisect
import gc
import itertools
import json
import os
import re
import signal as _signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from dbglog.util import config
from dbglog.util.errors import DbglogError
from dbglog.util import recache

# A resolver turns a regex match into (reported name, rank); used where the name depends on the
# text (``py.traceback:ValueError``, the ``cudaError...`` token, hardware vs app Xids, wave stop
# reasons, the signal a torchrun rank died of).
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
    # holding a needle are handed to the regex, so a 100 MB log costs a few str.find calls per
    # needle and no pattern can backtrack across megabytes of unrelated output.
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
    warnings: list[str] = field(default_factory=list)  # e.g. a user pattern that ran out of time

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
            "warnings": list(self.warnings),
        }


_CACHE: dict[tuple[str, int], re.Pattern[str]] = {}


def _compile(pattern: str, flags: int = 0) -> re.Pattern[str]:
    key = (pattern, flags)
    rx = _CACHE.get(key)
    if rx is None:
        # MULTILINE: "^"/"$" hold at line boundaries when the regex runs over a slice of the text.
        rx = _CACHE[key] = re.compile(pattern, flags | re.MULTILINE)
    return rx


# --- resolvers -------------------------------------------------------------------------------

# The machine token ("Search for `cudaErrorIllegalAddress' in ...", "CUDA_ERROR_ILLEGAL_ADDRESS",
# "hipErrorNoBinaryForGpu") is the best single key (reference §7.1); map it onto the same names the
# text messages use so both agree.
_TOKEN_NAMES = {
    "illegaladdress": ("gpu.illegal_address", 81),
    "assert": ("gpu.device_assert", 81),
    "misalignedaddress": ("gpu.misaligned", 81),
    "launchfailure": ("gpu.launch_failure", 81),
    "illegalinstruction": ("gpu.illegal_instruction", 81),
    "launchtimeout": ("gpu.launch_timeout", 77),
    "nokernelimagefordevice": ("build.no_kernel_image", 78),
    "nobinaryforgpu": ("build.hip_no_binary", 78),
    "invaliddevicefunction": ("build.invalid_device_function", 78),
    "memoryallocation": ("oom.runtime", 71),
    "outofmemory": ("oom.runtime", 71),
    "launchoutofresources": ("gpu.launch_out_of_resources", 75),
    "streamcaptureunsupported": ("gpu.graph_capture", 75),
    # the other stream-capture violations (CUDA 900-908); "invalidated" only reports an earlier one
    "streamcaptureinvalidated": ("gpu.graph_capture", 74),
    "streamcapturemerge": ("gpu.graph_capture", 75),
    "streamcaptureunmatched": ("gpu.graph_capture", 75),
    "streamcaptureunjoined": ("gpu.graph_capture", 75),
    "streamcaptureisolation": ("gpu.graph_capture", 75),
    "streamcaptureimplicit": ("gpu.graph_capture", 75),
    "capturedevent": ("gpu.graph_capture", 75),
    "streamcapturewrongthread": ("gpu.graph_capture", 75),
    "hardwarestackerror": ("gpu.stack_overflow", 81),
    "eccuncorrectable": ("gpu.ecc_error", 93),
    "insufficientdriver": ("driver.insufficient", 76),
    "nodevice": ("driver.no_device", 75),
    "devicesunavailable": ("driver.no_device", 75),
    "initializationerror": ("driver.init_failed", 70),
    "systemnotready": ("driver.init_failed", 70),
    "unsupportedptxversion": ("driver.insufficient", 76),
    "nvlinkuncorrectable": ("gpu.nvlink_error", 92),
    "notinitialized": ("driver.init_failed", 70),
}


def _token_key(token: str) -> str:
    return re.sub(r"^(?:cuda|hip)Error|^CUDA_ERROR_|^HIP_ERROR_", "", token).replace("_", "").lower()


def _resolve_error_token(m: re.Match[str]) -> tuple[str, int]:
    token = m.group("tok")
    known = _TOKEN_NAMES.get(_token_key(token))
    if known:
        return known
    # An unknown token in torch's "Search for" hint is the error; elsewhere it may be a mention.
    return f"gpu.error:{token}", (79 if m.re.pattern.startswith("Search for") else 56)


_CODE_WORDS = r"\berror code"
# The runtime's error text -> the name every other wording of the same error gets.
_CUDA_TEXTS = (
    ("an illegal memory access was encountered", "gpu.illegal_address", 80),
    ("illegal memory access", "gpu.illegal_address", 80),
    ("device-side assert triggered", "gpu.device_assert", 80),
    ("misaligned address", "gpu.misaligned", 80),
    ("unspecified launch failure", "gpu.launch_failure", 80),
    ("an illegal instruction was encountered", "gpu.illegal_instruction", 80),
    ("the launch timed out and was terminated", "gpu.launch_timeout", 76),
    ("no kernel image is available", "build.no_kernel_image", 77),
    ("invalid device function", "build.invalid_device_function", 77),
    ("too many resources requested for launch", "gpu.launch_out_of_resources", 74),
    ("out of memory", "oom.runtime", 71),
    ("operation not permitted when stream is capturing", "gpu.graph_capture", 74),
    ("operation failed due to a previous error during capture", "gpu.graph_capture", 73),
    ("operation would result in a merge of separate capture sequences", "gpu.graph_capture", 74),
    ("capture was not ended in the same stream as it began", "gpu.graph_capture", 74),
    ("capturing stream has unjoined work", "gpu.graph_capture", 74),
    ("dependency created on uncaptured work in another stream", "gpu.graph_capture", 74),
    ("operation would make the legacy stream depend on a capturing blocking stream", "gpu.graph_capture", 74),
    ("operation not permitted on an event last recorded in a capturing stream", "gpu.graph_capture", 74),
    ("attempt to terminate a thread-local capture sequence from another thread", "gpu.graph_capture", 74),
    ("uncorrectable ecc error", "gpu.ecc_error", 93),
    ("driver version is insufficient", "driver.insufficient", 76),
    ("no cuda-capable device", "driver.no_device", 75),
    ("busy or unavailable", "driver.no_device", 75),
    ("initialization error", "driver.init_failed", 70),
    # NVSwitch systems before nvidia-fabricmanager is up (cudaErrorSystemNotReady)
    ("system not yet initialized", "driver.init_failed", 70),
    # kernel module and user-space driver (or a forward-compat package) do not match: Error 803
    ("unsupported display driver / cuda driver combination", "driver.init_failed", 70),
    # PTX JIT needs a driver at least as new as the toolkit that wrote the PTX
    ("the provided ptx was compiled with an unsupported toolchain", "driver.insufficient", 76),
    ("uncorrectable nvlink error", "gpu.nvlink_error", 92),
)


def _resolve_cuda_failure(m: re.Match[str]) -> tuple[str, int]:
    """NCCL's "Cuda failure 700 'text'", vLLM's "Cuda error file:line 'text'", CNTK's
    "CUDA failure 77: text": name it by the runtime's text when we know the text."""
    text = (m.group("text") or "").lower()
    for needle, name, rank in _CUDA_TEXTS:
        if needle in text:
            return name, rank
    return "gpu.cuda_failure", 59


# A CUDA error given only as its number ("[700] Call to cuCtxSynchronize results in UNKNOWN_CUDA_ERROR",
# "CUresult error result=2", "cudaLaunchKernel failed with error code 719"): the codes the runtime
# (cudaError_t) and the driver API (CUresult) number alike, named like their texts and tokens. Other
# numbers say nothing certain (1 is "invalid value" in both, 999 "unknown") and are no match.
_CUDA_CODES = {
    2: ("oom.runtime", 70), 3: ("driver.init_failed", 69), 35: ("driver.insufficient", 75),
    98: ("build.invalid_device_function", 76), 100: ("driver.no_device", 74), 209: ("build.no_kernel_image", 76),
    214: ("gpu.ecc_error", 92), 222: ("driver.insufficient", 75), 700: ("gpu.illegal_address", 79),
    701: ("gpu.launch_out_of_resources", 73), 702: ("gpu.launch_timeout", 75), 710: ("gpu.device_assert", 79),
    715: ("gpu.illegal_instruction", 79), 716: ("gpu.misaligned", 79), 719: ("gpu.launch_failure", 79),
    802: ("driver.init_failed", 69), 803: ("driver.init_failed", 69), 804: ("driver.init_failed", 69),
}


def _resolve_cuda_code(m: re.Match[str]) -> tuple[str, int]:
    known = _CUDA_CODES.get(int(m.group("code")))
    if known is None:
        return "gpu.error_code", -1
    # the generic "error code N" form only on a line that is about CUDA: the word CUDA/HIP or an API
    # call, not a path or a tool holding it ("/usr/local/cuda/bin/nvcc failed with error code 2",
    # "hipcc exited with error code 3": a process's exit status, not a CUDA error)
    if m.re.pattern.startswith(_CODE_WORDS) and not _ABOUT_CUDA.search(m.string):
        return "gpu.error_code", -1
    return known


_ABOUT_CUDA = recache.compile(r"(?<![\w/\\-])(?i:cuda|hip)(?![\w/\\])|\b(?:cu|cuda|hip)[A-Z]\w+")


# Severity marks of a warning line: glog/absl "W0123 ..." or TF's ": W tensorflow/...cc:64]", ONNX
# Runtime's "[W:onnxruntime:...]", Python's "UserWarning:", a "WARNING" logger level.
_WARNING_LINE = recache.compile(r"^\s*W\d{4} |: W [\w./-]+:\d+\]|\[W:|Warning\b|\bWARN(?:ING)?\b")


def _resolve_loader(m: re.Match[str]) -> tuple[str, int]:
    if ("shared object" in m.re.pattern or "undefined symbol" in m.re.pattern) and _WARNING_LINE.search(m.string):
        return "env.library_missing", -1
    return "env.library_missing", 74


def _resolve_collective(m: re.Match[str]) -> tuple[str, int]:
    # A traceback's frame in a collective ('File "...", line 3696, in barrier') is the way to an exception raised
    # there: a hang only when nothing else failed (a Ctrl-C on the hung job); under an NCCL or CUDA error it is that
    # error's path, so it ranks below them. A thread dump's frame (py-spy, faulthandler) is the hang itself.
    return ("nccl.collective_hang", 56 if _TRACEBACK_FRAME.search(m.group(0)) else 60)


_TRACEBACK_FRAME = recache.compile(r'", line \d+, in ')


def _resolve_xformers_torch(m: re.Match[str]) -> tuple[str, int]:
    # the same torch on both sides ("2.2.0+cu121 (you have 2.2.0+cu121)"): the torch is not what differs
    # (above xformers_without_cuda: "wasn't built with CUDA support" is what an extension that would not load reports)
    return ("build.xformers_torch_mismatch", -1 if m.group(1) == m.group(2) else 78)


def _resolve_extension_symbol(m: re.Match[str]) -> tuple[str, int]:
    # (as env.library_missing's loader lines: one at warning severity is no failure)
    if _WARNING_LINE.search(m.string):
        return "build.extension_torch_mismatch", -1
    return ("build.extension_cxx11_abi" if "__cxx11" in m.group(2) else "build.extension_torch_mismatch"), 76


def _resolve_compile_error(m: re.Match[str]) -> tuple[str, int]:
    # A source in ROCm's code-object manager's temp dir (".../comgr-9004-512-cc9f7f/include/x.hpp") is a
    # library compiling its kernels at run time (MIOpen, hipRTC): its own error line ("MIOpen Error: ...
    # Code object build failed") reports it and ranks above this compiler detail.
    if re.search(r"[/\\]comgr-[\w-]+[/\\]", m.group(0)):
        return "build.compile_error", 60
    return "build.compile_error", 73


def _resolve_traceback(m: re.Match[str]) -> tuple[str, int]:
    exc = m.group("exc").rsplit(".", 1)[-1]
    if exc in ("KeyboardInterrupt", "SystemExit", "GeneratorExit"):
        return f"py.traceback:{exc}", 35
    if exc == "ChildFailedError":
        return "elastic.child_failed", 9  # torchrun re-raises a rank's failure; the rank printed why
    if exc in _WRAPPER_EXCEPTIONS:
        return f"py.traceback:{exc}", 11
    return f"py.traceback:{exc}", 45


# Exceptions that only carry an earlier failure (printed before them, or in their message).
_WRAPPER_EXCEPTIONS = {"EngineDeadError", "BackendCompilerFailed", "InductorError", "RayTaskError",
                       "ActorDiedError", "RayActorError", "WorkerError",
                       # a launcher (accelerate, a build's setup.py) re-raising its child's exit status
                       "CalledProcessError"}

# Xids the NVIDIA catalog lists as hardware/infrastructure (reference row 30; 140, 149 and 154 from
# the catalog's fatal NVLink/ECC/reboot entries); the rest are usually application-induced
# (13, 31, 43, 45) and rank below the CUDA error they accompany.
_HW_XIDS = {48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120, 140, 149, 154}


_XID_CAUSED_BY = recache.compile(r"caused by previous Xid (\d+)")


def _resolve_xid(m: re.Match[str]) -> tuple[str, int]:
    if m.groupdict().get("bus"):
        return "kernel.xid:79", 95  # the multi-line "has fallen off the bus" wording, no Xid number
    try:
        xid = int(m.group("xid"))
    except (TypeError, ValueError, IndexError):
        return "kernel.xid", 72
    # Newer drivers say which earlier Xid an Xid 45 (channel teardown) follows from; the earlier
    # one is the cause, even when its own line fell outside the captured log.
    prev = _XID_CAUSED_BY.search(m.group(0))
    if prev:
        xid = int(prev.group(1))
    return (f"kernel.xid:{xid}", 95) if xid in _HW_XIDS else (f"kernel.xid:{xid}", 72)


def _resolve_hw_exception(m: re.Match[str]) -> tuple[str, int]:
    return ("rocm.hw_exception", 94) if m.group(3) == "ECC" else ("rocm.hw_exception", 83)


def _resolve_memory_fault(m: re.Match[str]) -> tuple[str, int]:
    return ("rocm.memory_fault", 94) if "ECC" in m.group(0) else ("rocm.memory_fault", 84)


# rocm-debug-agent / rocm-dbgapi wave stop reasons (rocr_debug_agent stop_reason_util.cpp). Several
# can be joined with "|"; the most severe names the run.
_WAVE_STOPS = {
    "ECC_ERROR": ("rocm.ecc_error", 94),
    "ASSERT_TRAP": ("rocm.assert_trap", 86),
    "MEMORY_VIOLATION": ("rocm.memory_violation", 86),
    "ADDRESS_ERROR": ("rocm.address_error", 86),
    "ILLEGAL_INSTRUCTION": ("rocm.illegal_instruction", 86),
    "FATAL_HALT": ("rocm.fatal_halt", 85),
    "FP_DIVIDE_BY_0": ("rocm.math_error", 84), "FP_OVERFLOW": ("rocm.math_error", 84),
    "FP_UNDERFLOW": ("rocm.math_error", 84), "FP_INEXACT": ("rocm.math_error", 84),
    "FP_INVALID_OPERATION": ("rocm.math_error", 84), "FP_INPUT_DENORMAL": ("rocm.math_error", 84),
    "INT_DIVIDE_BY_0": ("rocm.math_error", 84),
}


def _resolve_wave_stop(m: re.Match[str]) -> tuple[str, int]:
    if m.groupdict().get("xnack"):
        return "rocm.memory_violation", 86  # the old agent's "wavefront(s) found in XNACK error state"
    reasons = [r for r in (m.group("reason") or "").split("|") if r]
    best = max((_WAVE_STOPS.get(r, (f"rocm.wave_stop:{r}", 21)) for r in reasons), key=lambda t: t[1],
               default=("rocm.wave_stop", 21))
    return best


# cuda-gdb exception names (CUDA-GDB manual, "CUDA Exception Codes") and the CUDBG_EXCEPTION_*
# tokens of the core-dump progress lines; the same fault classes as the runtime's error texts.
_CUDA_EXCEPTIONS = {
    "warpillegaladdress": "gpu.illegal_address", "laneillegaladdress": "gpu.illegal_address",
    "deviceillegaladdress": "gpu.illegal_address", "warpoutofrangeaddress": "gpu.illegal_address",
    "warpinvalidaddressspace": "gpu.illegal_address",
    "warpmisalignedaddress": "gpu.misaligned", "lanemisalignedaddress": "gpu.misaligned",
    "warpillegalinstruction": "gpu.illegal_instruction", "warpinvalidpc": "gpu.invalid_pc",
    "deviceinvalidpc": "gpu.invalid_pc", "warpassert": "gpu.device_assert",
    "laneuserstackoverflow": "gpu.stack_overflow", "warphardwarestackoverflow": "gpu.stack_overflow",
    "devicehardwarestackoverflow": "gpu.stack_overflow", "lanesyscallerror": "gpu.syscall_error",
    "deviceunknownexception": "gpu.exception",
}


def _resolve_cuda_exception(m: re.Match[str]) -> tuple[str, int]:
    raw = m.group("exc") or ""
    key = re.sub(r"[^a-z]", "", raw.lower())
    return _CUDA_EXCEPTIONS.get(key, f"gpu.exception:{raw.strip()}"), 83


_SIGNAMES = {1: "SIGHUP", 2: "SIGINT", 4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL",
             11: "SIGSEGV", 13: "SIGPIPE", 15: "SIGTERM"}


def _resolve_rank_signal(m: re.Match[str]) -> tuple[str, int]:
    """torchrun/elastic: a rank died of a signal. SIGKILL sent by nobody in the log is most often the
    host OOM killer (check dmesg); other signals come with the rank's own message, which outranks."""
    name = m.groupdict().get("name")
    if not name:
        try:
            name = _SIGNAMES.get(int(m.group("sig")), f"SIG{m.group('sig')}")
        except (TypeError, ValueError):
            name = "SIG?"
    return f"elastic.rank_killed:{name}", (63 if name == "SIGKILL" else 26)


# A fault in native code (a cause), against an abort (most often a consequence of another error)
_FATAL_SIGNALS = frozenset(("SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL"))


def _resolve_gdb_signal(m: re.Match[str]) -> tuple[str, int]:
    sig = m.group("sig")
    if sig in _FATAL_SIGNALS:
        return f"gdb.signal:{sig}", 64
    if sig == "SIGABRT":
        return f"gdb.signal:{sig}", 28
    return f"gdb.signal:{sig}", 15  # SIGTRAP, SIGINT, real-time signals: debugger traffic


def _resolve_ucx_signal(m: re.Match[str]) -> tuple[str, int]:
    sig = _SIGNAMES.get(int(m.group("num")), f"SIG{m.group('num')}")
    return f"ucx.signal:{sig}", (64 if sig in _FATAL_SIGNALS else 28)


def _resolve_fatal(m: re.Match[str]) -> tuple[str, int]:
    # "Aborted" is what every C++ terminate, CUDA core-dump trigger and ROCm fault ends in: a
    # consequence. A segfault/bus error/FPE/illegal instruction in native code is a cause.
    return ("py.fatal", 29) if m.group(1) == "Aborted" else ("py.fatal", 65)


# Old PyTorch (THC) printed a cuBLAS status as its message: "cublas runtime error : the GPU program failed to
# execute at .../THCBlas.cu:258" is CUBLAS_STATUS_EXECUTION_FAILED (THCGeneral's table, message for status)
_THC_CUBLAS = {
    "library not initialized": "CUBLAS_STATUS_NOT_INITIALIZED",
    "resource allocation failed": "CUBLAS_STATUS_ALLOC_FAILED",
    "an invalid numeric value was used as an argument": "CUBLAS_STATUS_INVALID_VALUE",
    "an absent device architectural feature is required": "CUBLAS_STATUS_ARCH_MISMATCH",
    "an access to GPU memory space failed": "CUBLAS_STATUS_MAPPING_ERROR",
    "the GPU program failed to execute": "CUBLAS_STATUS_EXECUTION_FAILED",
    "an internal operation failed": "CUBLAS_STATUS_INTERNAL_ERROR",
}


def _resolve_library_status(m: re.Match[str]) -> tuple[str, int]:
    tok = m.groupdict().get("tok") or _THC_CUBLAS[m.group("msg")]
    lib = m.group("lib").lower()
    return f"{lib}:{tok}", 74


# RCCL/NCCL advisories printed at init on healthy runs ("Missing \"iommu=pt\" from kernel command
# line which can lead to ...", deprecated variables): noise, never the cause.
_NCCL_ADVISORY = recache.compile(r'^Missing "|\bwhich can lead to\b|\bdeprecated\b')


# A WARN saying a connection to a peer failed: an InfiniBand/RoCE completion error, a socket reset or
# closed by the other side, a connect that failed. The fabric, or a peer process that went away; it
# ranks above the watchdog timeout it leads to and below a peer's own crash (segfault, SIGKILL).
_NCCL_NET = recache.compile(r"Got completion (?:from peer|with error)|Connection (?:closed by remote peer|reset by peer|refused"
                       r"|timed out)|Broken pipe|Software caused connection abort|No route to host"
                       r"|\bCall to (?:recv|send|connect)\b[^\n]*\bfailed\b|\bConnect to \S+ failed\b")


def _resolve_nccl_warn(m: re.Match[str]) -> tuple[str, int]:
    msg = m.group(1) or ""
    if _NCCL_ADVISORY.search(msg):
        return "nccl.warn", -1
    return ("nccl.network_error", 62) if _NCCL_NET.search(msg) else ("nccl.warn", 58)


def _resolve_amdgpu_page_fault(m: re.Match[str]) -> tuple[str, int]:
    # pasid 0 is no user process: the driver's own access, typically while resetting after a ring
    # timeout; it ranks below that timeout. A fault with a process's pasid is the process's fault.
    return ("kernel.amdgpu_page_fault", 76) if m.group(5) == "0" else ("kernel.amdgpu_page_fault", 79)


def _resolve_headerless(m: re.Match[str]) -> tuple[str, int]:
    """An exception line pasted without its traceback: the same name, one rank below a confirmed one."""
    name, rank = _resolve_traceback(m)
    if _WRAPPER_TEXT.search(m.group("msg") or ""):
        rank = min(rank, 9)
    return name, min(rank, 44)


def _resolve_assert(m: re.Match[str]) -> tuple[str, int]:
    line = m.group(0)
    if "__assert_fail" in line and (re.search(r'\.(?:hip|cu|cuh)"', line) or "hip_assert.h" in line):
        return "gpu.device_assert", 80
    return "cpp.assert", 44


def _resolve_init_failed(m: re.Match[str]) -> tuple[str, int]:
    # torch's device-count probe failing is why it later says "No CUDA GPUs are available"
    # (driver.no_device): the probe's error outranks that consequence, and so does the kernel
    # driver failing to attach the GPU (RmInitAdapter), which is why the probe fails.
    line = m.group(0)
    return "driver.init_failed", (76 if "cudaGetDeviceCount" in line or "CUDA initialization" in line
                                  or "RmInitAdapter" in line else 70)


def _resolve_watchdog(m: re.Match[str]) -> tuple[str, int]:
    return "nccl.watchdog_timeout", (60 if "checkTimeout" in m.group(0) else 62)


def _resolve_miopen_status(m: re.Match[str]) -> tuple[str, int]:
    return f"miopen:{m.group('tok')}", 68


# Log-line prefixes that sit in front of a Python exception line: k8s/docker timestamps, process
# tags ("(EngineCore_DP0 pid=2345) ", "(VllmWorker rank=5 pid=33503) ", "(SGLangEngine pid=952,
# ip=...) "), torch.distributed "[rank0]: ", accelerate "stderr: ", vLLM's logger "ERROR 07-21
# 13:02:07 [core.py:588] " (older: "ERROR 01-28 03:21:01 engine.py:387] "); and, in pasted
# multi-process logs, markdown quotes ("> "), srun --label ("3: "), Open MPI --tag-output
# ("[1,3]<stderr>:"), torchrun --tee ("[default3]:") and glog/absl ("I0517 16:48:59.6 140 f.py:255] ").
_PREFIX = (r"(?:> ?)?(?:\d{1,5}: )?(?:\[\d+,\d+\]<std(?:out|err)>:)?"
           r"(?:\d{4}-\d\d-\d\d[T ][\d:.,]+(?:Z|[+-]\d\d:?\d\d)?(?: (?:stdout|stderr) [FP])?(?: \|)? )?"
           # glog / absl: "I0517 16:48:59.615311 140650292352064 run_docker.py:255] "
           r"(?:[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [\w./-]+:\d+\] )?"
           r"(?:\([^()\n]{1,100}\) ){0,3}"
           r"(?:(?:stdout|stderr): )?"
           r"(?:\[(?:rank|default)\d+\]:[ \t]?)?"
           r"(?:(?:INFO|WARNING|ERROR|DEBUG|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[?[\w./-]+:\d+\] )?")
_EXC = r"(?P<exc>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt))"
_TRACEBACK_HEADER_TEXT = "Traceback (most recent call last)"
_FRAME_TEXT = 'File "'
_RAISED_FROM = "Exception raised from "
_FRAME = recache.compile(r'File "[^"\n]+", line \d+')
_WRAPPER_TEXT = recache.compile(
    r"See root cause above|See stack trace \(above\)|watchdog thread terminated|"
    r"please check the stack trace above|Failed core proc|"
    # torch's ExceptionWrapper: the worker's own exception follows under "Original Traceback"
    r"Caught \w+ in (?:replica \d+ on device \d+|DataLoader worker process \d+)"
)


# --- the catalog ------------------------------------------------------------------------------
# Patterns use [ \t] / [^\n] instead of \s / . where a match must stay on one line. Each pattern
# comes with its needles: literals, one of which is in every line the pattern can match.


def _S(name: str, pats: Sequence[tuple[str, str | tuple[str, ...]]], rank: int, outcome: str | None = None,
       **kw) -> Signature:
    patterns = tuple(p for p, _ in pats)
    needles = tuple((n,) if isinstance(n, str) else tuple(n) for _, n in pats)
    return Signature(name=name, patterns=patterns, rank=rank, outcome=outcome, needles=needles, **kw)


_TOK = (r"(?P<tok>\b(?:cuda|hip)Error(?!Success\b|NotReady\b)[A-Z]\w+|\bCUDA_ERROR_(?!NOT_READY\b)[A-Z_]+"
        r"|\bHIP_ERROR_(?!NotReady\b)[A-Za-z_]+)")


# macOS libc's assert(): "Assertion failed: (cond), function f, file x.cpp, line 31." (the file's
# pattern is the caller's: mps.failed_assertion takes Metal/MPS sources, cpp.assert any)
def _macos_assert(file: str) -> str:
    return r"Assertion failed: \((.*)\), function (\w+), file (" + file + r"), line (\d+)\."


BUILTIN: tuple[Signature, ...] = (
    # GPU faults (rows 1-12). CUDA and HIP share the runtime's texts; the same text also arrives
    # through NCCL ("Cuda failure 700 '...'"), llama.cpp ("CUDA error: ..."), Warp, CNTK, NVHPC
    # ("CUDA_ERROR_ILLEGAL_ADDRESS"), so the text itself is the key, whoever prints it.
    _S("gpu.illegal_address",
       [(r"an illegal memory access was encountered", "illegal memory access"),
        (r"\bCUDA_ERROR_ILLEGAL_ADDRESS\b|Illegal address during kernel execution", ("ILLEGAL_ADDRESS", "Illegal address")),
        (r"\b(?:cuda|hip)ErrorIllegalAddress\b", "ErrorIllegalAddress")], 80),
    _S("gpu.device_assert", [(r"device-side assert triggered", "device-side assert")], 80),
    # The assert() print names the kernel source site; more specific than the CUDA error, and
    # printed first, so it wins and the CUDA error becomes a supporting key line.
    _S("gpu.device_assert.site",
       [(r"^([^\n]{1,512}?):(\d+): ([^\n]{0,512}?): block: \[(\d+),(\d+),(\d+)\], thread: \[(\d+),(\d+),(\d+)\] "
         # markdown often eats the backticks when the line is pasted into an issue
         r"Assertion `?([^\n`]*?)`? failed\.", "], thread: [")], 82),
    _S("gpu.misaligned", [(r"(?:error|ERROR|failure|Error)[^\n]{0,40}misaligned address|'misaligned address'",
                           "misaligned address")], 80),
    _S("gpu.launch_failure", [(r"unspecified launch failure", "unspecified launch failure")], 80),
    _S("gpu.ecc_error", [(r"uncorrectable ECC error encountered", "uncorrectable ECC error")], 93,
       description="the GPU's memory failed: infrastructure, not the code"),
    _S("gpu.illegal_instruction", [(r"an illegal instruction was encountered", "illegal instruction was")], 80),
    # nvidia-smi / NVML when the GPU stopped answering (Xid 79 territory): the node, not the code.
    _S("gpu.device_lost",
       [(r"Unable to determine the device handle for GPU ?[\w:.]*: Unknown Error|GPU is lost\. Reboot the system",
         ("Unable to determine the device handle", "GPU is lost"))], 92,
       description="the driver lost the GPU (fell off the bus, hung): drain the node and check dmesg for Xid 79"),
    _S("gpu.nvlink_error", [(r"(?i:uncorrectable NVLink error)", ("uncorrectable NVLink error", "Uncorrectable NVLink error"))],
       92, description="an NVLink link failed: infrastructure (check nvidia-smi nvlink -e, dmesg Xid 74)"),
    _S("gpu.launch_timeout", [(r"the launch timed out and was terminated", "launch timed out")], 76),
    _S("gpu.launch_out_of_resources",
       [(r"too many resources requested for launch", "too many resources requested"),
        (r"\bCUDA_ERROR_LAUNCH_OUT_OF_RESOURCES\b|\b(?:cuda|hip)ErrorLaunchOutOfResources\b", "OutOfResources"),
        (r"ERROR_LAUNCH_OUT_OF_RESOURCES", "ERROR_LAUNCH_OUT_OF_RESOURCES")], 74),
    _S("build.no_kernel_image", [(r"no kernel image is available for execution on the device", "no kernel image")], 77),
    # ggml's own check that the build holds code for this GPU ("mmv.cu:53: ERROR: CUDA kernel mul_mat_vec has no
    # device code compatible with CUDA arch 520. ggml-cuda.cu was compiled for: 520", or at start-up "ggml was not
    # compiled with any CUDA arch <= 750"): the cause of the launch failure that follows, so it outranks it
    _S("build.no_device_code",
       [(r"CUDA kernel (\w+) has no device code compatible with CUDA arch (\d+)", "has no device code compatible"),
        (r"ggml was not compiled with any CUDA arch <= (\d+)", "was not compiled with any CUDA arch")], 81,
       description="the llama.cpp/ggml build has no kernels for this GPU's architecture: rebuild it with that arch "
                   "in CMAKE_CUDA_ARCHITECTURES"),
    # torch's warning that the wheel was built without this GPU's architecture: the cause its "no kernel image"
    # error only reports, so it outranks it (the architecture stays in the key: sm_120 and sm_37 need other wheels)
    _S("build.no_arch_in_wheel",
       [(r"with CUDA capability (sm_\d+) is not compatible with the current PyTorch installation",
         "is not compatible with the current PyTorch installation")], 78,
       description="the installed torch wheel has no kernels for this GPU's architecture: install one built for it"),
    # CUDA touched in a parent that then forked its workers (vLLM, DataLoader, multiprocessing): the message names
    # the cause and the fix ('spawn'), whichever logger wraps it
    _S("runtime.cuda_in_forked_child",
       [(r"Cannot re-initialize CUDA in forked subprocess", "Cannot re-initialize CUDA in forked subprocess")], 74,
       description="CUDA was initialised before a fork: start workers with 'spawn' (vLLM: VLLM_WORKER_MULTIPROC_METHOD=spawn)"),
    # bitsandbytes (before 0.43) choosing its native binary at import: the CPU one when it found no CUDA runtime (Windows,
    # which it did not support; a container whose CUDA libraries are off the loader's path), or one for a CUDA version
    # its package does not ship ("libbitsandbytes_cuda114_nocublaslt.so"); the binary's name tells the two apart. Its
    # banner prints "bin <path>" at every import, so this is read only for a run that failed.
    _S("build.bitsandbytes_binary",
       [(r"^bin [^\n]*?(libbitsandbytes_(?:cpu|cuda\w+)\.(?:so|dll))[ \t]*$", "libbitsandbytes_"),
        (r"CUDA SETUP: Required library version not found: (libbitsandbytes_\w+\.(?:so|dll))", "libbitsandbytes_"),
        (r"CUDA Setup failed despite GPU being available", "CUDA Setup failed despite")], 74,
       description="bitsandbytes loaded its CPU binary or one its package does not ship: on Windows install bitsandbytes "
                   "0.43 or later; on Linux put the CUDA runtime on the library path, or upgrade it"),
    # bitsandbytes before 0.43 on Windows: its CUDA setup picks a Linux binary (".so" on a drive's path) and hands ctypes a
    # WindowsPath ("argument of type 'WindowsPath' is not iterable"); the cuda118 or the CPU binary, the same bug and fix
    _S("build.bitsandbytes_windows",
       [(r"CUDA SETUP: Loading binary [A-Za-z]:\\[^\n]{0,400}?(libbitsandbytes_\w+\.so)\b", "CUDA SETUP: Loading binary")], 75,
       description="a bitsandbytes without Windows support loaded on Windows (a Linux .so binary): install bitsandbytes "
                   "0.43 or later"),
    _S("build.hip_no_binary",
       [(r"hipErrorNoBinaryForGpu: (?:Unable to find code object for all current devices|Coudn't find binary)",
         "hipErrorNoBinaryForGpu")], 77),
    _S("build.rocblas_no_arch",
       [(r"rocBLAS error: Cannot read (\S*TensileLibrary\S*)[^\n]*?GPU arch ?: ?(\w+)", "rocBLAS error: Cannot read")], 77,
       description="rocBLAS/Tensile has no kernels for this gfx target"),
    # Building a CUDA extension (flash-attn, apex, a setup.py): the compiler's first error is the cause;
    # "ninja: build stopped", CalledProcessError and "Error compiling objects" only report it.
    _S("build.compile_error",
       [(r"nvcc fatal\s*: ([^\n]+)", "nvcc fatal"),
        (r"^(?:[^\n]{0,40}?)(\S+\.(?:cu|cuh|cpp|cc|cxx|c|h|hpp))\((\d+)\): error: ([^\n]+)", "): error: "),
        (r"^(?:[^\n]{0,40}?)(\S+\.(?:cu|cuh|cpp|cc|cxx|c|h|hpp)):(\d+):(?:\d+:)? (?:fatal )?error: ([^\n]+)",
         (": error: ", ": fatal error: ")),
        # ... or to link: GNU ld names the library it could not find ("/usr/bin/ld: cannot find -lcurand")
        (r"(?<!\S)(?:\S*/)?ld(?:\.\w+)?: cannot find (-l[\w.+-]+)", "cannot find -l")], 73,
       resolve=_resolve_compile_error,
       description="a CUDA/C++ extension failed to compile or link (nvcc, the host compiler or the linker)"),
    _S("build.invalid_device_function",
       [(r"(?i:invalid device function)", ("invalid device function", "Invalid device function"))], 77),
    # CUDA graph capture. The other capture violations (cudaErrorStreamCapture*: "operation failed due
    # to a previous error during capture", "dependency created on uncaptured work in another stream", ...)
    # arrive as "CUDA error: <text>" / NCCL's "Cuda failure '<text>'" / the token, and get this name
    # through _CUDA_TEXTS and _TOKEN_NAMES without a needle of their own.
    _S("gpu.graph_capture", [(r"operation not permitted when stream is capturing", "stream is capturing")], 74,
       description="a CUDA graph capture hit an operation that cannot be captured (sync, allocation, host read, another stream)"),
    # Driver and device setup: nothing ran on the GPU yet, so any later error is a consequence.
    _S("driver.insufficient",
       [(r"(?i:CUDA driver version is insufficient for CUDA runtime version)", "version is insufficient"),
        # torch's check of the driver against the CUDA it was built for
        (r"The NVIDIA driver on your system is too old|NVIDIA driver too old \(found version \d+\)",
         ("driver on your system is too old", "NVIDIA driver too old")),
        # XLA linking the PTX it compiled with the driver's linker, which is older than the ptxas that wrote it
        (r"cuLinkAddData fails\. This is usually caused by stale driver version", "cuLinkAddData fails")], 76,
       description="the installed driver is older than the CUDA runtime the program was built with"),
    _S("driver.no_driver", [(r"Found no NVIDIA driver on your system", "Found no NVIDIA driver")], 76),
    # NVML's NVML_ERROR_NO_PERMISSION ("Insufficient Permissions"; pynvml raises NVMLError_NoPermission):
    # typically a MIG instance queried from a container without NVIDIA_MIG_MONITOR_DEVICES, or a
    # non-root user asking for device-wide state.
    _S("nvml.no_permission", [(r"\bInsufficient Permissions\b", "Insufficient Permissions")], 68,
       description="NVML refused a query (MIG device in a container, non-root user): the monitoring tool, not the GPU code"),
    # Docker's GPU hook (nvidia-container-cli) failing before the container starts: the driver's
    # libraries are not visible to the toolkit ("load library failed: libnvidia-ml.so.1"), a mount
    # or requirement check failed. runc's "error running hook #0" lines around it only carry it.
    # (needles with a hub's literal in them: a needle of their own would be one more pass over a big log)
    _S("driver.container_toolkit",
       [(r"nvidia-container-cli: ((?:initialization|mount|requirement|detection|device|ldcache|container) error): ([^\n]*)",
         ("cli: initialization error", "cli: mount error", "cli: requirement error", "cli: detection error",
          "cli: device error", "cli: ldcache error", "cli: container error"))], 76,
       description="the NVIDIA container toolkit could not set the GPU up for the container (host driver libraries)"),
    # A GPU library found but not loadable (cuDNN 8 sub-libraries on Windows: "Could not load library
    # cudnn_cnn_infer64_8.dll. Error code 126"; on Linux "... Error: libcuda.so: cannot open ..."):
    # the install or the library path is wrong, the code is not.
    _S("env.library_missing",
       [(r"Could not load library (\S+?)\. Error(?: code (\d+)|: ([^\n]*))", ". Error"),
        # CTranslate2 / cuDNN 9's loader after "Unable to load any of {libcudnn_ops.so.9.1.0, ...}"
        (r"Invalid handle\. Cannot load symbol (\w+)", "Invalid handle. Cannot load symbol"),
        # ONNX Runtime's CUDA provider DLL: 'LoadLibrary failed with error 126 "" when trying to load "...dll"'
        (r'LoadLibrary failed with error (\d+) "[^"\n]*" when trying to load "([^"\n]*)', "LoadLibrary failed with error"),
        # the cuDNN found is older than the one the framework was built with: TF/XLA's "Loaded runtime
        # CuDNN library: 8.0.4 but source was compiled with: 8.1.0", Caffe2's "cuDNN compiled (7102) and
        # runtime (7005) versions mismatch" (long needles: a short one such as "uDNN " makes a pass over a
        # big log several times slower)
        (r"Loaded runtime CuDNN library: (\S+)(?: \(compatibility version \d+\))? but source was compiled with:? (\S+?)\.?(?= |$)",
         "Loaded runtime CuDNN library"),
        (r"cuDNN compiled \((\d+)\) and runtime \((\d+)\) versions mismatch", "cuDNN compiled ("),
        # XLA has neither the CUDA toolkit's ptxas nor nvJitLink to compile its kernels
        (r"No PTX compilation provider is available", "PTX compilation provider"),
        # The dynamic loader's own words, whatever the library (a framework's native extension, a
        # non-CUDA dependency): "libfoo.so.1: cannot open shared object file", and an extension built
        # against another torch/CUDA: "ImportError: ext.so: undefined symbol: _ZN3c10...". A loader line
        # at warning severity (TensorFlow's dso_loader probing optional libraries) is no failure.
        # ((?<!\S) below: a match starts a word, as it would anyway; without it a long word is quadratic)
        (r"(?<!\S)(\S+\.so(?:\.[\w.]+)?): cannot open shared object file", "cannot open shared object file"),
        # (on the exception's line: its "rror" is a hub literal, so a big log pays no pass of its own)
        (r"(?<!\S)(\S+\.so(?:\.[\w.]+)?): undefined symbol: (\S+)", "rror")], 74,
       resolve=_resolve_loader,
       description="a GPU runtime library (cuDNN, cuBLAS, a provider DLL) is missing, does not load or is an older version"),
    # A CPU-only torch wheel: nothing about the GPU or the code is wrong yet.
    _S("build.torch_without_gpu", [(r"Torch not compiled with CUDA enabled", "not compiled with CUDA"),
                                   # xformers' load check names the CPU-only torch: "(you have 2.1.2+cpu)"
                                   (r"PyTorch \S+(?: with CUDA \S+)? \(you have [\w.]+\+cpu\)", "(you have ")], 78,
       description="the installed torch is a CPU-only build (pip picked the wrong wheel index)"),
    # xformers' dispatcher under "No operator found for `memory_efficient_attention_forward`", operator by operator:
    # the installed xformers has no CUDA kernels at all (a CPU-only or mismatched build), which names the cause its
    # "No operator found" only reports (that message alone has five causes: a tensor on the CPU, a dtype, a bias)
    _S("build.xformers_without_cuda",
       [(r"xFormers wasn't buil[dt] with CUDA support", "xFormers wasn't buil")], 77,
       description="the installed xformers has no CUDA kernels: install the xformers wheel built for this torch and CUDA"),
    # the same dispatcher turning down bf16 inputs operator by operator on a GPU before Ampere (a T4, a V100, a 2080 Ti):
    # the cause its "No operator found" only reports; run the model in fp16 or fp32 there
    _S("gpu.xformers_bf16_unsupported",
       [(r"bf16 is only supported on A100\+ GPUs", "bf16 is only supported on A100")], 76,
       description="xformers has no bf16 kernels for this GPU (before Ampere): run attention in fp16 or fp32"),
    # ... and turning down a GPU newer than the build knows, operator by operator ("requires device with capability <=
    # (9, 0) but your GPU has capability (12, 0) (too new)": a Blackwell card under an xformers built before it)
    _S("gpu.xformers_gpu_too_new",
       [(r"but your GPU has capability \((\d+), (\d+)\) \(too new\)", "(too new)")], 76,
       description="xformers has no kernels for a GPU this new: install an xformers built for its architecture, or run "
                   "attention without xformers (PyTorch's scaled_dot_product_attention)"),
    # ... and turning down tensors on a device it has no kernels for, operator by operator ("device=mps (supported:
    # {'cuda'})"): xformers enabled on an Apple-silicon Mac (or on the CPU), whatever the shapes and operators listed
    _S("build.xformers_device_unsupported",
       [(r"device=(mps|cpu|xpu|meta) \(supported: \{'cuda'", "(supported: {'cuda'")], 76,
       description="xformers was handed tensors on a device it has no kernels for (an Apple-silicon Mac's mps, the "
                   "CPU): run without xformers there (uninstall it, or drop --xformers)"),
    # A CUDA extension built where the compiler finds nvcc but not the toolkit's headers (a conda env with nvcc alone):
    # "cc1plus: fatal error: cuda_runtime.h: No such file or directory", the header in the key
    _S("build.cuda_headers_missing",
       [(r"fatal error: ((?:cuda|cublas|cudnn|curand|cusparse|cusolver|cufft|nccl|nvrtc)\w*\.h(?:pp)?)\s*:\s*"
         r"No (?:such )?file or directory", "fatal error: ")], 75,
       description="the compiler cannot find the CUDA toolkit's headers: install the full toolkit (or its dev headers) "
                   "where CUDA_HOME points"),
    # jaxlib's CUDA plugin failing to load one of the CUDA libraries it checks at start-up, worded two ways by its
    # versions ("RuntimeError: Unable to load cuSPARSE. Is it installed?", "operation cusparseGetProperty(...) failed:
    # The cuSPARSE library was not found."): the library is the failure (fingerprint._PER_OP keeps them apart)
    _S("build.jax_cuda_library",
       # (behind "CUDA backend failed to initialize: " it is how JAX fell back to the CPU: jax.backend_init)
       [(r"(?<!initialize: )Unable to load (cu[A-Za-z]+|NCCL)\. Is it installed\?", "Is it installed?"),
        (r"operation \w+\(.*?\) failed: The (cu[A-Za-z]+|NCCL) library was not found", "library was not found")], 72,
       description="jaxlib's CUDA plugin cannot load a CUDA library: a system CUDA on LD_LIBRARY_PATH often shadows "
                   "the pip-installed nvidia-* wheels (unset it, or install the library the plugin needs)"),
    # torch.utils.cpp_extension's check before it builds an extension: nvcc's CUDA is not the one torch was built with
    _S("build.cuda_version_mismatch",
       [(r"The detected CUDA version \(([\d.]+)\) mismatches the version that was used to compile",
         "mismatches the version that was used to compile")], 76,
       description="the CUDA toolkit (nvcc) found is another version than the one torch was built with"),
    # JAX at start-up: a CUDA library (the runtime, cuDNN, cuSOLVER, cuBLAS...) older than the one jaxlib was built
    # against ("Found cuDNN version 8600, but JAX was built against version 8906"); the library is the fix
    _S("jax.library_too_old",
       [(r"(?:CUDA backend failed to initialize|Unable to initialize backend '(?:cuda|gpu)'): Found (?P<lib>[\w-]{2,30}) "
         r"version \d+, but JAX was built against version \d+", ("CUDA backend failed", "Unable to initialize backend"))],
       78, description="a CUDA library older than the one jaxlib was built against: update it (or install the jax "
                       "wheel for it)"),
    _S("jax.backend_init",
       # (not "Unable to initialize backend 'rocm': NOT_FOUND" at INFO: JAX probes every backend it knows, and a
       # machine without one logs that as it goes on)
       [(r"(?:CUDA|ROCm) backend failed to initialize: \S", "backend failed to initialize")], 58,
       description="JAX fell back to the CPU: its GPU backend did not start (the message after the colon says why)"),
    # torch's warning that the GPU is older than any architecture the wheel was built for (cc 2.1 on torch 1.x, Kepler
    # on torch 1.13+): the cause of the "no kernel image" that follows; only an older torch or a source build runs there
    _S("build.gpu_too_old",
       [(r"PyTorch no longer supports this GPU because it is too old", "no longer supports this GPU")], 79,
       description="the GPU is older than every architecture the installed torch was built for: an older torch or a build from source"),
    # xformers' load check, "xFormers was built for: / PyTorch 2.3.0+cu121 with CUDA 1201 (you have 2.0.0+cu117)":
    # the wheel is for another torch (a "(you have 2.1.2+cpu)" is a CPU-only torch: build.torch_without_gpu)
    _S("build.xformers_torch_mismatch",
       [(r"PyTorch (\S+)(?: with CUDA \S+)? \(you have (?![\w.]+\+cpu\))([^()\s]+)\)", "(you have ")], 78,
       resolve=_resolve_xformers_torch,
       description="the installed xformers was built for another torch: install the xformers wheel made for this torch"),
    # A compiled extension (flash-attn, apex, a custom op) missing a symbol of torch's own C++ namespaces (c10, at, torch):
    # it was built against another torch than the one loaded; with a std::__cxx11 type in the symbol it was built with the
    # other C++ ABI (a cxx11abiTRUE wheel on a pip torch, or the reverse)
    _S("build.extension_torch_mismatch",
       [(r"(?<!\S)(\S+\.so(?:\.[\w.]+)?): undefined symbol: (_ZN?K?\d*(?:3c10|2at|5torch)\w*)", "undefined symbol: _Z"),
        # the same loader error as ImportError printed it without the library's path ("ImportError: undefined symbol:
        # _ZN3c104cuda9SetDeviceEi"): the symbol still says torch's C++ is not the one the extension was built against
        (r"(ImportError): undefined symbol: (_ZN?K?\d*(?:3c10|2at|5torch)\w*)", "undefined symbol: _Z")], 76,
       resolve=_resolve_extension_symbol,
       description="a compiled extension was built against another torch (or its other C++ ABI): reinstall or rebuild it for this torch"),
    _S("driver.no_device",
       [(r"no CUDA-capable device is detected|No (?:CUDA|HIP) GPUs are available|no ROCm-capable device is detected"
         r"|rocBLAS error: Could not initialize Tensile host: No devices found",
         # needles that share a hub or a pass: each direct needle is a pass over a big log
         ("-capable device is detected", "GPUs are available", "rocBLAS error: Could not")),
        # exclusive-process compute mode or a GPU held by another process / in a bad state
        (r"CUDA-capable devices? (?:\(s\) is/are|are) busy or unavailable", "busy or unavailable")], 75),
    _S("driver.init_failed",
       [(r"(?:CUDA|HIP) error: initialization error|CUDA driver initialization failed",
         (" error: initialization error", "CUDA driver initialization failed")),
        (r"failed to initialize (?:CUDA|HIP|ROCm): ([^\n]*)", ("failed to initialize CUDA", "failed to initialize HIP",
                                                                 "failed to initialize ROCm")),
        # torch's DeferredCudaCallError (bad CUDA_VISIBLE_DEVICES, arch parsing, driver) names the init failure
        (r"CUDA call failed lazily at initialization with error: ([^\n]*)", "CUDA call failed lazily"),
        # torch's device count probe ("Error 804: forward compatibility was attempted on non supported HW",
        # "Error 802: system not yet initialized"), also as the "CUDA initialization: ..." UserWarning
        (r"Unexpected error from cudaGetDeviceCount\(\)[^\n]*|CUDA initialization: CUDA unknown error",
         ("Unexpected error from cudaGetDeviceCount", "CUDA initialization: CUDA unknown error")),
        # JAX/XLA raising because the platform it was told to use would not start (TPU held by another
        # process, no topology, no driver); its INFO-level fallback to the CPU is not this line
        (r"RuntimeError: Unable to initialize backend '(\w+)': ([^\n]*)|Requested backend (\w+), but it failed"
         r" to initialize: ([^\n]*)", ("RuntimeError: Unable", "but it failed to initialize")),
        # ROCm's HSA runtime could not start (hsa_init, rocminfo: /dev/kfd access, KFD resources); a queue
        # aborting with this status is rocm.queue_abort, which outranks it
        (r"HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources",
         "HSA_STATUS_ERROR_OUT_OF_RESOURCES"),
        # the NVIDIA kernel module could not bring the GPU up (dmesg): "NVRM: GPU 0000:01:00.0:
        # RmInitAdapter failed! (0x22:0x56:894)" (power, PCIe link, a GPU that fell off the bus)
        (r"RmInitAdapter failed! ?\(([^)\n]*)\)", "RmInitAdapter failed")], 70,
       resolve=_resolve_init_failed,
       description="the CUDA/HIP runtime could not initialize (driver, container runtime, fork after CUDA init)"),
    _S("gpu.error_name", [(r"Search for `" + _TOK + r"' in", "Search for `"),
                          (_TOK, ("cudaError", "hipError", "CUDA_ERROR_", "HIP_ERROR_"))], 81,
       resolve=_resolve_error_token, description="the runtime's machine token; mapped to the text name"),
    _S("gpu.async_hint",
       [(r"(?:CUDA|HIP) kernel errors might be asynchronously reported at some other API call",
         "kernel errors might be asynchronously")], 20,
       description="a hint printed next to sticky errors, never a cause"),
    _S("gpu.cuda_failure",
       [(r"Cuda failure (?:\d+ |\S+:\d+ )?'(?P<text>[^'\n]+)'", "Cuda failure"),
        # a program's own check macro: "Cuda failure: 222 the provided PTX was compiled with an unsupported toolchain."
        (r"Cuda failure: \d{1,3} (?P<text>[A-Za-z][^\n]*)", "Cuda failure: "),
        (r"Cuda error (?:\S+?):\d+ '(?P<text>[^'\n]+)'", "Cuda error "),
        (r"CUDA (?:failure|error) \d+: (?P<text>[^\n]+)", ("CUDA failure", "CUDA error ")),
        # torch/llama.cpp "CUDA error: <runtime text>" whose text has no entry of its own: still a CUDA failure
        (r"(?:CUDA|HIP)(?: driver)? error: (?P<text>[A-Za-z][^\n]*)", ("CUDA error: ", "HIP error: ", "CUDA driver error: ")),
        # older llama.cpp: "CUDA error 2 at ggml-cuda.cu:5509: out of memory"
        (r"CUDA error \d+ at \S+:\d+: (?P<text>[^\n]+)", "CUDA error "),
        # torch < 1.0: "cuda runtime error (35) : CUDA driver version is insufficient ... at file:line"
        (r"cuda runtime error \(\d+\) : (?P<text>[^\n]+)", "cuda runtime error ("),
        # torch's THC check, the line before that exception: "THCudaCheck FAIL file=.../THCGeneral.cpp line=50
        # error=802 : system not yet initialized" (a paste often stops there)
        (r"THCudaCheck FAIL file=\S+ line=\d+ error=\d+ : (?P<text>[^\n]+)", "THCudaCheck FAIL"),
        # Caffe / MXNet / glog CHECKs: "Check failed: error == cudaSuccess (803 vs. 0)  <runtime text>"
        (r"Check failed: \w+ == cudaSuccess \((\d+) vs\. 0\)\s*:?\s*(?P<text>[^\n]+)", "Check failed: "),
        # the CUDA_CHECK macro of CUDA's libraries and their samples (CCCL, RAFT): "CUDA Error at sort.cu:72 - <text>"
        (r"CUDA [Ee]rror at \S{1,300}?:\d+ - (?P<text>[^\n]+)", ("CUDA Error at", "CUDA error at")),
        # nccl-tests / rccl-tests: "host: Test CUDA failure common.cu:941 'invalid device ordinal'"
        (r"Test CUDA failure \S+:\d+ '(?P<text>[^'\n]+)'", "Test CUDA failure")], 59,
       resolve=_resolve_cuda_failure, description="a CUDA call failed inside NCCL/RCCL or a C++ extension"),
    # The error's number without its text (numba/pycuda "[700] Call to cuX results in TOKEN", a CUresult
    # printed as a number, "failed with error code 700"): named by the number (_CUDA_CODES), one rank
    # below the text or token of the same error.
    _S("gpu.error_code",
       [(r"\[(?P<code>\d{1,3})\] Call to (cu\w+) results in (\w*CUDA_ERROR\w*)", "CUDA_ERROR"),
        (r"\bCUresult error\s*(?:result\s*)?(?:[=:]\s*)?(?P<code>\d{1,3})\b", "CUresult error"),
        # "CUDA error 700", "CUDA error [700]", "Cuda failure 719" with no text after the number (with a
        # text, gpu.cuda_failure names it by the text; both agree)
        (r"\b(?:CUDA|Cuda|cuda) (?:error|failure) \[?(?P<code>\d{1,3})\]?(?![\d.])", ("CUDA error ", "Cuda failure", "CUDA failure")),
        # (one run of blanks each side of the sign: two adjacent runs are quadratic on a line of blanks)
        (_CODE_WORDS + r"[ \t]*(?:[:=][ \t]*)?\(?(?P<code>\d{1,3})\b(?![.:]\d)", "error code")], 79,
       resolve=_resolve_cuda_code, description="a CUDA error reported by its number only"),
    # cuda-gdb ("CUDA Exception: Warp Illegal Address", "received signal CUDA_EXCEPTION_14, ...") and
    # the CUDA core dump's progress lines name the exception precisely, and the kernel with it.
    _S("cuda.exception",
       [(r"CUDA Exception: (?P<exc>[A-Z][\w -]*?[A-Za-z])[ \t]*$", "CUDA Exception: "),
        (r"(?:received signal )?CUDA_EXCEPTION_\d+, (?P<exc>[A-Z][\w -]*?[A-Za-z])\.", "CUDA_EXCEPTION_"),
        (r"coredump: Detected an exception of type CUDBG_EXCEPTION_(?P<exc>[A-Z_]+?) \(\d+\)", "CUDBG_EXCEPTION_")],
       83, resolve=_resolve_cuda_exception, description="cuda-gdb / CUDA core dump exception of the faulting warp"),
    # Memory (rows 13-18).
    _S("oom.torch_cuda", [(r"CUDA out of memory\. Tried to allocate ([\d.]+ [KMGT]?i?B)", "CUDA out of memory.")], 72, "oom"),
    _S("oom.torch_hip", [(r"HIP out of memory\. Tried to allocate", "HIP out of memory.")], 72, "oom"),
    _S("oom.exception_type", [(r"(?:torch\.)?(?:cuda\.)?OutOfMemoryError", "OutOfMemoryError")], 70, "oom"),
    _S("oom.runtime", [(r"(?:CUDA|HIP) error: out of memory", " error: out of memory"),
                       (r"returned error 2: Out of memory", "error 2: Out of memory"),
                       # XLA (JAX, TF, torch_xla): "RESOURCE_EXHAUSTED: Out of memory while trying to allocate",
                       # "... Failed to allocate request for 2.99GiB", the TPU compiler's "Ran out of memory in
                       # memory space vmem", older jaxlib's "Resource exhausted: Out of memory"
                       (r"(?:RESOURCE_EXHAUSTED|Resource exhausted): (?:Out of memory|Failed to allocate request for"
                        r"|[^\n]{0,80}?Ran out of memory in memory space)", ("RESOURCE_EXHAUSTED: ", "Resource exhausted: ")),
                       # NCCL's "Last error:" when its cudaMalloc failed: the device had no room left
                       (r"Failed to CUDA (?:calloc|malloc)(?: async)? (\d+) bytes", "Failed to CUDA "),
                       # llama.cpp / ggml: "cudaMalloc failed: out of memory", "hipMalloc failed: out of memory"
                       (r"\b(?:cuda|hip|cuMem)Malloc\w* failed: out of memory", "alloc failed: out of memory"),
                       # the TPU runtime: "Attempting to reserve 3.95G at the bottom of memory. That was not possible."
                       (r"Attempting to (?:reserve|allocate) [\d.]+ ?[KMGT]i?B? at the (?:bottom|top) of memory\. "
                        r"That was not possible", "of memory. That was not possible"),
                       # TensorFlow's allocator: "Resource exhausted: OOM when allocating tensor with shape[...]"
                       # (its ResourceExhaustedError / "Resource exhausted:" holds a hub literal: no pass of its own)
                       (r"\bOOM when allocating tensor", ("Resource exhausted: OOM", "ExhaustedError")),
                       # TensorRT's logger: "Cuda Error in allocate: 2 (out of memory)"
                       (r"Cuda Error in \w+: 2 \(out of memory\)", "2 (out of memory)"),
                       # LMDeploy's TurboMind: "[TM][ERROR] CUDA runtime error: out of memory .../allocator.cc:49"
                       (r"CUDA runtime error: out of memory", "runtime error: out of memory")], 71, "oom"),
    # PyTorch on Apple silicon: "MPS backend out of memory (MPS allocated: ..., max allowed: ...)"
    _S("oom.mps", [(r"MPS backend out of memory(?: \(MPS allocated: ([^,)\n]+))?", "MPS backend out of memory")], 72, "oom",
       description="the Metal (MPS) allocator hit its high-watermark limit (PYTORCH_MPS_HIGH_WATERMARK_RATIO)"),
    _S("oom.vllm_kv", [(r"No available memory for the cache blocks", "No available memory for the cache"),
                       # SGLang's KV pool: "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."
                       (r"Not enough memory\. Please try to increase --mem-fraction-static", "increase --mem-fraction-static"),
                       # vLLM: "The model's max seq len (4096) is larger than the maximum number of tokens that
                       # can be stored in KV cache (3664)"
                       (r"max seq len \((\d+)\) is larger than the maximum number of tokens that can be stored in KV cache",
                        "stored in KV cache")],
       70, "oom", description="the inference engine's KV cache does not fit (vLLM gpu_memory_utilization, SGLang mem-fraction-static)"),
    # DataLoader workers share batches through /dev/shm; a container's default 64 MB runs out.
    _S("oom.shm",
       [(r"Unexpected bus error encountered in worker\. This might be caused by insufficient shared memory",
         "Unexpected bus error encountered in worker"),
        (r"DataLoader worker \(pid[^\n]*?\) is killed by signal: Bus error", "is killed by signal: Bus error")], 71, "oom",
       description="shared memory (/dev/shm) ran out in DataLoader workers (docker --shm-size / --ipc=host)"),
    _S("oom.host_killer",
       [(r"(?:Memory cgroup out of memory|Out of memory): Killed process (\d+) \((.+?)\)", "Killed process "),
        # older kernels: "Killed process 935 (python) total-vm:113656kB, anon-rss:..."
        (r"Killed process (\d+) \((.+?)\) total-vm:", "Killed process "),
        (r"oom-kill:constraint=\w+,[^\n]*?task=([^,\n]+),pid=(\d+)", "oom-kill:constraint=")], 73, "oom"),
    # ROCm runtime (rows 19-21): printed without any torch message. Wordings from ROCm 2 to 7.2,
    # including the older one without the agent handle and LLVM offload's "OFFLOAD ERROR: memory
    # access fault by GPU N (agent 0x..) at virtual address ... Reasons:".
    _S("rocm.memory_fault",
       [(r"Memory access fault by GPU node-(\d+)(?: \(Agent handle: (\S+)\))? on address (\S+?)"
         r"(\(may not be exact address\))?(?:\.? Reason: ([^\n]*)|\.?(?=\s|$))", "Memory access fault by GPU node-"),
        (r"(?i:memory access fault by GPU) (\d+) \(agent (\S+)\) at virtual address (\S+?)\.? Reasons?: ([^\n]*)",
         ("emory access fault by GPU ",)),
        (r"Memory access fault (?:at GPU Node: (\d+)|by GPU agent: ([^\n]+))", "Memory access fault "),
        (r"System event \(HSA_AMD_GPU_MEMORY_FAULT_EVENT: ([^\n]*)\)", "HSA_AMD_GPU_MEMORY_FAULT_EVENT")], 84,
       resolve=_resolve_memory_fault),
    _S("rocm.hw_exception",
       [(r"HW Exception by GPU node-(\d+) \(Agent handle: (\S+)\) reason ?:(GPU Hang|ECC)", "HW Exception by GPU node-")],
       83, resolve=_resolve_hw_exception),
    _S("rocm.queue_abort",
       [(r"(?:Callback: Queue (\S+) |callbackQueue )[Aa]borting with error : (HSA_STATUS_\w+)([^\n]*)",
         "borting with error : HSA_STATUS_"),
        (r"Queue error \((HSA_STATUS_\w+): ([^\n]*)\)", "Queue error (HSA_STATUS_"),
        (r"STATUS_CHECK Error: (HSA_STATUS_\w+) \((0x[0-9a-fA-F]+)\)", "STATUS_CHECK Error: HSA_STATUS_"),
        # older and newer runtimes' other abort wordings: a queue or an abort, then the status code
        (r"(?i:abort|queue)[^\n]{0,120}?\b(HSA_STATUS_ERROR_[A-Z_]+)([^\n]*)", "HSA_STATUS_ERROR_")], 79),
    # rocm-debug-agent (and rocgdb) wave dumps: the wave's stop reason is the precise cause; the
    # "Queue error"/"Aborted" around it are consequences.
    _S("rocm.wave_stop",
       [(r"\(stopped, reason: (?P<reason>[A-Z_0-9|]+)\)", "(stopped, reason: "),
        (r"(?P<xnack>wavefront\(s\) found in XNACK error state)", "XNACK error state")], 86,
       resolve=_resolve_wave_stop, description="rocm-debug-agent wave stop reason (ASSERT_TRAP, MEMORY_VIOLATION, ...)"),
    # Libraries: cuBLAS, cuDNN, hipBLAS/rocBLAS, MIOpen. EXECUTION_FAILED is often the first place
    # an earlier asynchronous fault surfaces, so a GPU fault in the same log outranks it.
    _S("blas.status",
       [(r"(?P<tok>(?P<lib>CUBLAS)_STATUS_(?!SUCCESS\b)[A-Z_]+)", "CUBLAS_STATUS_"),
        (r"(?P<tok>(?P<lib>HIPBLAS|HIPBLASLT)_STATUS_(?!SUCCESS\b)[A-Z_]+)", "BLAS_STATUS_"),
        (r"(?P<tok>(?P<lib>rocblas)_status_(?!success\b)[a-z_]+)", "rocblas_status_"),
        # ONNX Runtime's call macro without the status: "CUBLAS error executing cublasGemmEx(...)"
        (r"(?P<lib>CUBLAS) error executing (?P<tok>\w+)", "error executing"),
        (r"(?P<lib>cublas) runtime error : (?P<msg>" + "|".join(_THC_CUBLAS) + ")", "cublas runtime error")], 74,
       resolve=_resolve_library_status, description="cuBLAS / hipBLAS / rocBLAS status (cublas:CUBLAS_STATUS_...)"),
    _S("cudnn.status",
       [(r"(?P<tok>(?P<lib>CUDNN)_STATUS_(?!SUCCESS\b)[A-Z_0-9]+)", "CUDNN_STATUS_"),
        # ONNX Runtime's call macro without the status: "CUDNN error executing cudnnConvolutionForward(...)"
        (r"(?P<lib>CUDNN) error executing (?P<tok>\w+)", "error executing")], 74,
       resolve=_resolve_library_status, description="cuDNN status (cudnn:CUDNN_STATUS_...)"),
    _S("miopen.error",
       [(r"MIOpen Error: (\S+?):(\d+): ([^\n]*)", "MIOpen Error: "),
        # the logger's prefix: "MIOpen(HIP): Error [X]" (ROCm <= 6), "MIOpen: Error [X]" (TheRock builds)
        (r"MIOpen(?:\(HIP\))?: Error \[(\w+)\] ([^\n]*)", ("MIOpen(HIP): Error", "MIOpen: Error"))], 70),
    _S("miopen.status", [(r"(?P<tok>\bmiopenStatus(?!Success\b)\w+)", "miopenStatus")], 68,
       resolve=_resolve_miopen_status),
    # Collectives (rows 22-27). Older torch prints no SeqNum; older watchdog says "NCCL watchdog".
    _S("nccl.watchdog_timeout",
       [(r"Watchdog caught collective operation timeout: WorkNCCL\((?:SeqNum=(\d+), )?OpType=(\w+)[^\n]*?"
         r"Timeout\(ms\)=(\d+)\) ran for (\d+) milliseconds before timing out", "Watchdog caught collective"),
        # Only the watchdog's C++ stack survived (the message was cut or scrolled away): a frame in
        # WorkNCCL::checkTimeout is that timeout; it ranks below the message, which says which collective.
        (r"ProcessGroupNCCL::WorkNCCL::checkTimeout\(", "WorkNCCL::checkTimeout")], 62, "hang",
       resolve=_resolve_watchdog),
    _S("nccl.watchdog_stuck",
       [(r"ProcessGroupNCCL's watchdog got stuck for (\d+) seconds without making progress", "watchdog got stuck")],
       61, "hang"),
    _S("nccl.teardown",
       [(r"Some NCCL operations have failed or timed out", "Some NCCL operations have failed"),
        (r"(?:Process group|NCCL) watchdog thread terminated with exception: ([^\n]*)", "watchdog thread terminated")],
       15, wrapper=True),
    # Below nccl.warn: a WARN printed after the result code (another process, or NCCL_DEBUG only
    # switched on later) still says why.
    _S("nccl.error", [(r"NCCL error in: (\S+):(\d+), ([^\n]*)", "NCCL error"),
                      (r"NCCL error: ([^\n]*)", "NCCL error"),
                      # a C++ NCCLCHECK macro (TensorRT-LLM, vLLM kernels): "NCCL error file.cpp:90 'invalid usage ...'"
                      (r"NCCL error (\S+?):(\d+) '([^'\n]+)'", "NCCL error")], 57),
    _S("nccl.result_text",
       [(r"unhandled cuda error", "unhandled cuda error"), (r"unhandled system error", "unhandled system error"),
        (r"internal error - please report", "internal error - please report"),
        (r"\bnccl(?:SystemError|InternalError|InvalidUsage|UnhandledCudaError|InvalidArgument)\b",
         ("ncclSystemError", "ncclInternalError", "ncclInvalidUsage", "ncclUnhandledCudaError",
          "ncclInvalidArgument"))], 57),
    # NCCL's result for a failed peer connection (ncclRemoteError, 2.14+): a remote rank exited or the
    # network failed. The WARN naming the connection (nccl.warn's resolver calls those
    # nccl.network_error, ranked higher) is the deciding line when the log has one.
    _S("nccl.network_error",
       [(r"remote process exited or there was a network error", "remote process exited"),
        (r"\bncclRemoteError\b", "ncclRemoteError")], 58,
       description="a connection to a peer failed: a remote rank exited (read its log first) or the network/fabric "
                   "(InfiniBand/RoCE, sockets) failed"),
    # The first NCCL WARN states the cause; the result code NCCL returns afterwards ("unhandled
    # system error", "NCCL error in: ...") only classifies it, so a warning outranks them (ties: earliest).
    _S("nccl.warn", [(r"NCCL WARN ([^\n]*)", "NCCL WARN "),
                     # NCCL 2.0-2.3: "host:pid:tid [0] include/socket.h:185 WARN msg", no "NCCL"
                     (r"\[\d+\] [\w./-]+\.(?:h|cc|cu|c|cpp):\d+ WARN ([^\n]*)", " WARN "),
                     # an InfiniBand completion error quoted without its "NCCL WARN" prefix
                     (r"NET/IB\w*\s*:\s*(Got completion from peer [^\n]*)", "Got completion from peer")], 58,
       resolve=_resolve_nccl_warn),
    # NCCL's shared-memory transport could not make its segment: /dev/shm too small or full (a container's 64 MB
    # default); printed as the "Last error:" under torch's "unhandled system error", and more telling than it.
    _S("nccl.shm_create", [(r"Error while creating shared memory segment (\S+)(?: \(size \d+\))?",
                            "Error while creating shared memory segment")], 59,
       description="NCCL could not create its shared-memory segment in /dev/shm (too small or full: docker "
                   "--shm-size or --ipc=host)"),
    _S("nccl.aborted", [(r"NCCL communicator was aborted", "communicator was aborted")], 30,
       description="a consequence of a timeout or failure elsewhere"),
    # Triton (rows 28-29), its compiler (the CompilationError often arrives without the traceback
    # header, e.g. re-printed by Inductor's "backend='inductor' raised:").
    _S("triton.out_of_resources",
       [(r"out of resource: ([a-z][a-z ]*?),? ?Required: ?(\d+)[, ]*Hardware limit(?:ation)?: ?(\d+)", "out of resource: "),
        # (a Triton that words it "OutOfResources: shared memory, Required: ...", with no "out of resource:")
        (r"OutOfResources: ([a-z][a-z ]*?),? ?Required: ?(\d+)[, ]*Hardware limit(?:ation)?: ?(\d+)", "OutOfResources: "),
        # the exception line cut short (or printed without numbers) still names it
        (r"OutOfResources: out of resource: ([a-z][a-z ]*)", "OutOfResources: out of resource: ")], 74),
    _S("triton.driver_error", [(r"Triton Error \[(?:CUDA|HIP)\]: ([^\n]*)", "Triton Error [")], 75),
    _S("triton.compilation_error",
       [(r"(?:triton\.compiler\.errors\.|triton\.code_gen\.)?CompilationError: at (\d+):(\d+):?", "CompilationError: at "),
        # the compiler's MLIR pass pipeline failing (make_ttir/make_ttgir/make_llir): the kernel, the
        # Triton build or the backend cannot lower it
        (r"PassManager::run failed", "PassManager::run failed"),
        # MLIR's diagnostic on an op of a Triton dialect (tt., ttg., ttng., triton_gpu., amdgpu.) that a
        # lowering could not convert (a backend without support for it, or a Triton build mismatch)
        (r"error: failed to legalize operation '((?:tt|ttg|ttng|triton_gpu|triton_nvidia_gpu|tritongpu|amdgpu)\.\w+)'",
         "failed to legalize operation")],
       74),
    # Kernel log lines (rows 30-34), seen when dmesg is merged into the output.
    _S("kernel.xid",
       [(r"NVRM: Xid \((?:PCI:)?([0-9a-fA-F:.]+)\): (?P<xid>\d+), ([^\n]*)", "NVRM: Xid ("),
        (r"NVRM: (?P<bus>fallen off the bus and is not responding to commands)", "fallen off the bus")], 95,
       resolve=_resolve_xid),
    _S("kernel.hung_task", [(r"INFO: task (.+):(\d+) blocked for more than (\d+) seconds", "blocked for more than")],
       60, "hang"),
    _S("kernel.segfault",
       [(r"(?<!\S)(\S{1,64})\[(\d+)\]: segfault at ([0-9a-f]+) ip ([0-9a-f]+) sp ([0-9a-f]+) error (\d+)", "]: segfault at ")],
       64),
    _S("kernel.amdgpu_ring_timeout",
       [(r"ring (\S+) timeout, signaled seq=(\d+), emitted seq=(\d+)", " timeout, signaled seq="),
        (r"amdgpu_job_timedout[^\n]*?ring (\S+) timeout", "amdgpu_job_timedout")], 78, "hang"),
    _S("kernel.amdgpu_page_fault",
       [(r"\[(gfxhub|mmhub)\d*\] (?:(?:no-)?retry )?page fault \(src_id:(\d+) ring:(\d+) vmid:(\d+) pasid:(\d+)",
         "page fault (src_id:")], 79, resolve=_resolve_amdgpu_page_fault),
    _S("kernel.amdgpu_mes", [(r"MES(?:\(\d+\))? failed to respond to msg=(\w+)", "failed to respond to msg=")], 77, "hang"),
    # torchrun / torch.distributed.elastic: the ChildFailedError table names the rank's signal.
    _S("elastic.rank_killed",
       [(r"exitcode\s*: -(?P<sig>\d+) \(pid: \d+\)", "exitcode"),
        (r"failed \(exitcode: -(?P<sig>\d+)\) local_rank: \d+", "exitcode"),
        (r"Signal (?P<sig>\d+) \((?P<name>SIG\w+)\) received by PID \d+", "received by PID"),
        # the DeepSpeed launcher: "[launch.py:321:sigkill_handler] ['python', ...] exits with return code = -9"
        (r"exits with return code = -(?P<sig>\d+)", "exits with return code")], 63,
       resolve=_resolve_rank_signal, description="a torchrun rank died of a signal (SIGKILL: usually the OOM killer)"),
    _S("elastic.child_failed",
       [(r"ChildFailedError", "ChildFailedError"), (r"failed \(exitcode: \d+\) local_rank: \d+", "exitcode"),
        (r"exits with return code = \d+", "exits with return code")], 9,
       wrapper=True, description="torchrun re-raising a rank's failure; the rank's own output says why"),
    # Python (rows 35-37). The exception line must follow a "Traceback" header (see _scan_tracebacks);
    # pytest prints exceptions as "E   ValueError: ..." lines instead.
    _S("py.traceback", [(r"^" + _PREFIX + _EXC + r"(?::[ \t]*(?P<msg>[^\n]*))?$", (_TRACEBACK_HEADER_TEXT, _FRAME_TEXT)),
                        (r"^E[ \t]+" + _EXC + r"(?::[ \t]*(?P<msg>[^\n]*))?$", ("E   ", "E\t")),
                        # A module-qualified exception with a message is one even when its traceback was
                        # not pasted ("torch.distributed.DistStoreError: Timed out after 1801 seconds ...").
                        (r"^" + _PREFIX + r"[`'\"]?(?P<exc>[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+\.[A-Z]\w*(?:Error|Exception))"
                         r":[ \t]+(?P<msg>\S[^\n]*)$", ("Error: ", "Exception: ")),
                        # torch.compile's wrapper with the inner exception on the same line:
                        # "BackendCompilerFailed: backend='inductor' raised: RuntimeError: Cannot find ..."
                        (r"(?:BackendCompilerFailed|InductorError): [^\n]*?raised:[ \t]+" + _EXC
                         + r"(?::[ \t]*(?P<msg>[^\n]*))?$", ("BackendCompilerFailed: ", "InductorError: "))], 45,
       resolve=_resolve_traceback),
    # Issue reports often paste only the exception line (and what the exception printed below it):
    # a CamelCase "...Error:"/"...Exception:" at the start of a line is the failure when nothing
    # better is in the log; a traceback-confirmed exception of the same name ranks above it.
    _S("py.traceback_headerless",
       [(r"^" + _PREFIX + r"[`'\"]?(?P<exc>[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)*(?:Error|Exception)):"
         r"(?:[ \t]+(?P<msg>\S(?:[^\n]*[^ \t`'\"\n])?))?[ \t`'\"]*$", ("Error:", "Exception:"))], 44,
       resolve=_resolve_headerless, description="a Python exception line without its traceback"),
    # Host-side C/C++ assertions: llama.cpp/ggml's GGML_ASSERT (old "GGML_ASSERT: file:line: cond",
    # new "file:line: GGML_ASSERT(cond) failed") and glibc's assert() ("prog: file:line: func:
    # Assertion `cond' failed."); a device-side assert with block/thread is gpu.device_assert.site.
    # TensorRT's logger at error/fatal level: "[E] [TRT] file.cpp (20) - Assertion Error in min: ...",
    # "[F] [TRT] Assertion failed: cond", TRT 8+ "Error Code 2: Internal Error (Assertion X failed. )".
    # The first one is the cause; the app's "Assertion `engine != nullptr' failed" (cpp.assert) and
    # trtexec's "Engine could not be created" follow from it. Warnings ([W]) are not matched.
    # An engine built against one cuBLAS/cuBLASLt/cuDNN and run against another (an older CUDA's libraries first on the
    # loader's path): Myelin refuses it, worded by TensorRT's version ("myelinVersionMismatch : Compiled against cuBLAS
    # 11.3.0.0 but running against cuBLAS 11.2.1.0", "Error Code 1: Myelin (Compiled against cuBLASLt ...)"); the cause
    # whatever the library or versions.
    _S("build.trt_library_mismatch",
       [(r"(?:myelinVersionMismatch\s*:\s*)?Compiled against (cu[A-Za-z]+) ([\d.]+\d) but running against (cu[A-Za-z]+) "
         r"([\d.]+\d)", "Compiled against ")], 62,
       description="a TensorRT engine runs against other CUDA library versions (cuBLAS, cuDNN) than it was built "
                   "with: put the build's CUDA libraries first on the loader's path, or rebuild the engine there"),
    _S("tensorrt.error",
       [(r"Error Code \d+: ([\w ]*(?:Error|Myelin) \([^\n]*)", "Error Code "),
        # (the Python API's logger prints "[TRT] [E] ...", the C++ samples "[E] [TRT] ...")
        (r"(?:\[[EF]\] \[TRT\]|\[TRT\] \[[EF]\]) ([^\n]* Error in [^\n]*)", " Error in "),
        (r"(?:\[[EF]\] \[TRT\]|\[TRT\] \[[EF]\]) ([^\n]*Assertion failed[^\n]*)", "Assertion failed"),
        # the ONNX parser's "[E] [TRT] ModelImporter.cpp:720: ERROR: ... In node 3 (parseGraph): ..."
        (r"(?:\[[EF]\] \[TRT\]|\[TRT\] \[[EF]\]) ([^\n]*ERROR: [^\n]*)", "ERROR: "),
        # onnx-tensorrt's status without the logger's prefix: "In node 0 (importModel): INVALID_GRAPH:
        # Assertion failed: X", "(deserializeOnnxModel): MODEL_DESERIALIZE_FAILED: Assertion failed: X",
        # and TensorRT 5-7's "ERROR: ModelImporter.cpp:296 In function importModel:" + "[5] Assertion failed: X"
        (r"\(\w+\): ([A-Z_]+: Assertion failed: [^\n]*)", "Assertion failed: "),
        (r"^\[\d+\] (Assertion failed: [^\n]*)", "Assertion failed: "),
        # The logger's own grammar, whatever the message: a line at error or fatal severity is TensorRT
        # refusing something, and the first one says what. The samples/trtexec logger ("[E] [TRT] msg"),
        # the Python API's ("[TRT] [E] msg"), TensorRT 5-7's Python logger ("[TensorRT] ERROR: msg") and
        # its C++ samples' logger with a right-aligned severity ("[2020-08-20 11:03:50   ERROR] msg", also
        # relayed inside ONNX Runtime's TensorRT provider lines). [W]/[I]/[V] lines are never matched.
        (r"(?:\[[EF]\] \[TRT\]|\[TRT\] \[[EF]\]) ([^\n]*\S)", "[TRT]"),
        (r"\[TensorRT\] (?:INTERNAL )?ERROR: ([^\n]*\S)", "ERROR: "),
        (r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?: {2,}| INTERNAL_)ERROR\] ([^\n]*\S)", "ERROR] ")], 50,
       description="TensorRT refused the network or failed building/running the engine (its first error names why)"),
    # TensorRT-LLM's own errors ("[TensorRT-LLM][ERROR] Assertion failed: ... (file.cpp:180)", re-printed
    # inside a TllmException or "Failed to initialize executor on rank 0: ..."): the first one is the
    # cause; a CUDA fault it carries (illegal address, OOM) outranks it under its own name.
    _S("trtllm.error",
       [(r"\[TensorRT-LLM\]\[ERROR\] (?:[\w:]+Exception: \[TensorRT-LLM\]\[ERROR\] )?([^\n]*)", "[TensorRT-LLM][ERROR] ")], 50,
       description="TensorRT-LLM's runtime or executor failed (its first [TensorRT-LLM][ERROR] names the file and condition)"),
    # Apple frameworks (Metal, MPS) abort with "File.mm:782: failed assertion `[MPSNDArray ...] Error: ...":
    # a PyTorch MPS op handed Metal a bad shape or buffer.
    _S("mps.failed_assertion",
       # (a paste may break the line after the file:line, leaving "failed assertion `...'" alone)
       [(r"(?:(?<!\S)(\S+\.(?:mm|m|swift|metal)):(\d+): )?failed assertion `([^\n]*)", "failed assertion `"),
        # the macOS assert() form from an Objective-C++ Metal/MPS source (GPUReductionOps.mm)
        (_macos_assert(r"\S+\.(?:mm|metal)"), "Assertion failed: (")], 46,
       description="a Metal/MPS framework assertion aborted the process (an MPS op got a shape or buffer it rejects)"),
    # PyTorch on Apple silicon calling an op with no MPS kernel (torch < 1.13 said "not current implemented");
    # the dispatcher's form names the backend ('MPS', 'SparseMPS'). Above the NotImplementedError it raises.
    _S("mps.unsupported_op",
       # (needles: the NotImplementedError it raises holds a hub literal, so a big log costs no pass of its own)
       # (an issue's paste may set the op in bold: "The operator **'aten::_index_put_impl_'** is not ...")
       [(r"The operator (?:\*\*)?'([^'\n]+)'(?:\*\*)? is not current(?:ly)? implemented for the MPS device",
         "NotImplementedError: "),
        (r"Could not run '([^'\n]+)' with arguments from the '(\w*MPS)' backend", "NotImplementedError: ")], 48,
       description="an op has no MPS (Apple GPU) kernel in this torch (PYTORCH_ENABLE_MPS_FALLBACK=1 runs it on the CPU)"),
    _S("cpp.assert",
       [(r"GGML_ASSERT: (\S+?):(\d+): ([^\n]*)", "GGML_ASSERT: "),
        # (needles holding a hub: "fail" lines are looked up together on big logs)
        (r"(?<!\S)(\S+?):(\d+): GGML_ASSERT\((.*)\) failed", ") failed"),
        # ggml's GGML_ABORT("fatal error"): "ggml-cuda/fattn.cu:579: fatal error", the file and line its only words
        # (a compiler's "x.c:12:10: fatal error: y.h: No such file" has a column and goes on)
        (r"(?<!\S)(\S+\.(?:c|cc|cpp|cu|cuh|h|m)):(\d+): fatal error\s*$", ": fatal error"),
        (r"(?<!\S)(\S+?):(\d+): ([^\n]{0,4096}?): Assertion `([^'\n]*)' failed\.", "' failed"),
        # the same assert() grammar from a library's own macro, "file.c:LINE  Assertion `cond' failed" with
        # no function (UCX's ucs_assert: "[host:pid:0:tid]   eager_snd.c:25   Assertion `x == 0' failed")
        (r"(?<!\S)(\S+\.(?:c|cc|cpp|cxx|cu|h|hpp|inl)):(\d+)[ \t]+Assertion `([^'\n]*)' failed", "' failed"),
        # gdb/rocgdb stopped in __assert_fail: in a HIP kernel (a .hip/.cu file, hip_assert.h) it is
        # a device-side assert
        (r'__assert_fail \(assertion=[^"\n]*"([^"\n]*)",\s*file=[^"\n]*"([^"\n]*)",\s*line=(\d+)[^\n]*',
         "__assert_fail ("),
        # macOS libc: "Assertion failed: (cond), function f, file x.cpp, line 31."
        (_macos_assert(r"\S+"), "Assertion failed: ("),
        # XLA/TSL's internal check: "INTERNAL: RET_CHECK failure (xla/service/x.cc:120) cond"
        (r"RET_CHECK failure \(([^()\n]+):(\d+)\) ([^\n]*)", "RET_CHECK failure")], 44,
       resolve=_resolve_assert, description="a host-side C/C++ assertion failed (the condition and file:line name the bug)"),
    _S("py.fatal",
       [(r"Fatal Python error: (Segmentation fault|Aborted|Bus error|Floating point exception|Illegal instruction)",
         "Fatal Python error: ")], 65, resolve=_resolve_fatal),
    _S("py.faulthandler_timeout", [(r"^Timeout \((\d+:\d\d:\d\d(?:\.\d+)?)\)!$", "Timeout (")], 47, "hang"),
    # C++ and shell (rows 38-39).
    _S("cpp.terminate", [(r"terminate called after throwing an instance of '([^']+)'", "terminate called after")], 30),
    _S("cpp.check_failed", [(r"^F\d{4} [\d:.]+ +\d+ (\S+):(\d+)\] Check failed: ([^\n]*)", "] Check failed: ")], 44),
    # glibc's allocator found its heap corrupted and aborted ("free(): double free detected in tcache 2",
    # "double free or corruption (!prev)", "munmap_chunk(): invalid pointer", old glibc's "*** Error in
    # `python': free(): invalid pointer: 0x... ***"): native code wrote out of bounds or freed twice; the
    # "Aborted (core dumped)" after it is the consequence. (needles: two long ones, the rest hold hub literals)
    _S("cpp.heap_corruption",
       [(r"double free or corruption(?: \([!\w]+\))?|double free detected in tcache \d"
         r"|\b(?:free|munmap_chunk|realloc|malloc)\(\): invalid (?:pointer|size|next size(?: \(\w+\))?)"
         r"|malloc\(\): memory corruption",
         ("double free or corruption", "double free detected in tcache", "(): invalid ", "(): memory corruption"))], 64,
       description="the C allocator found its heap corrupted and aborted: an out-of-bounds write or double free in "
                   "native code (an extension, a driver library)"),
    _S("gdb.signal",
       [(r"(?:Program|Thread \d+ \"[^\"\n]*\") received signal (?P<sig>SIG[A-Z0-9]+), ([^\n]*)", "received signal SIG"),
        (r"Program terminated with signal (?P<sig>SIG[A-Z0-9]+), ([^\n]*)", "terminated with signal SIG")],
       64, resolve=_resolve_gdb_signal, description="gdb/rocgdb stopped the process on a signal"),
    # UCX (and so UCC, Open MPI's UCX layer, HPC-X, NCCL's IB plugin) catching a fatal signal, before its backtrace:
    # "[host:pid :0:tid] Caught signal 7 (Bus error: nonexistent physical address)"
    _S("ucx.signal",
       [(r"Caught signal (?P<num>\d{1,2}) \((?P<desc>[A-Z][\w ]+)(?::[^)\n]*)?\)", "Caught signal ")],
       64, resolve=_resolve_ucx_signal, description="UCX caught a fatal signal in the process (its backtrace "
                                                     "follows)"),
    _S("shell.signal",
       # bash prints "Segmentation fault (core dumped)" alone, or "line 1: 123 Killed   cmd" for
       # a job; zsh prints "zsh: IOT instruction (core dumped)  cmd"; fish "terminated by signal".
       # (a pasted one may be wrapped in markdown: "**Killed**", "`Segmentation fault (core dumped)`")
       [(r"^(?:[^\n]*\b\d+ )?(?:\*\*|`)?(?:Segmentation fault|Aborted|Killed|Bus error|Floating point exception"
         r"|Illegal instruction)(?:[ \t]+\(core dumped\))?(?:\*\*|`)?(?:[ \t]{2,}[^\n]*)?$",
         ("Segmentation fault", "Aborted", "Killed", "Bus error", "Floating point exception", "Illegal instruction")),
        (r"IOT instruction \(core dumped\)", "IOT instruction"),
        (r"^zsh: (?:segmentation fault|abort|killed|bus error|illegal hardware instruction)",
         ("zsh: segmentation fault", "zsh: abort", "zsh: killed", "zsh: bus error", "zsh: illegal hardware")),
        (r"terminated by signal (SIG\w+) \(([^)\n]*)\)", "terminated by signal"),
        # bash in a zh_CN locale: 已杀死 (Killed), 段错误 (Segmentation fault), 已放弃 (Aborted), "(核心已转储)"
        (r"^(?:[^\n]*\b\d+ )?(?:已杀死|段错误|已放弃)(?:[ \t]*[(（]核心已转储[)）])?(?:[ \t]+[^\n]*)?[ \t]*$",
         ("已杀死", "已放弃", "段错误"))], 25),  # (whole words: a one-character needle is a slow pass)
    # GPU coredump progress (row 40): accompanies the real fault.
    _S("gpu.coredump_written", [(r"coredump: Writing ELF file to (\S+)", "coredump: Writing ELF")], 35),
    # Engine wrappers (rows 41-42): the cause is printed earlier.
    _S("vllm.engine_init", [(r"Engine core initialization failed\. See root cause above\.", "See root cause above"),
                            # the engine process's own line before its traceback (V1)
                            (r"EngineCore failed to start\.", "EngineCore failed to start")],
       10, wrapper=True),
    _S("vllm.engine_dead",
       [(r"EngineCore encountered an issue\. See stack trace \(above\) for the root cause\.", "EngineCore encountered"),
        (r"Engine core proc (\S+) died unexpectedly", "died unexpectedly"),
        (r"Worker proc (\S+) died unexpectedly", "died unexpectedly"),
        (r"Worker failed with error '?(.*?)'?, please check the stack trace above", "please check the stack trace")],
       10, wrapper=True),
    _S("sglang.child_failed", [(r"Received sigquit from a child process", "Received sigquit")], 10, wrapper=True),
    # Ray's notice that a worker process vanished (OOM killer, SIGSEGV, ray stop): what killed it is in
    # the worker's own log or dmesg; above a bare RayActorError because it says how the worker exited.
    _S("ray.worker_died",
       [(r"Worker exit type: (SYSTEM_ERROR|NODE_OUT_OF_MEMORY|USER_ERROR)(?: Worker exit detail: ([^\n]*))?",
         "Worker exit type: "),
        (r"A worker died or was killed while executing a task by an unexpected system error",
         "A worker died or was killed"),
        (r"The actor (?:is dead because its worker process has died|died unexpectedly before finishing this task)",
         ("The actor is dead", "The actor died unexpectedly"))], 12, wrapper=True),
    # pytest (rows 43-44).
    _S("test.pytest_failed", [(r"^(?:FAILED|ERROR) (\S+?)(?: - ([^\n]*))?$", ("FAILED ", "ERROR "))], 12, wrapper=True),
    _S("test.pytest_timeout",
       [(r"^\+{5,} Timeout \+{5,}$", "+++++ Timeout +++++"), (r"Timeout \(>([\d.]+)s\) from pytest-timeout\.", "from pytest-timeout"),
        (r"Failed: Timeout >([\d.]+)s", "Failed: Timeout >")], 48, "hang"),
    # Sanitizers (rows 45-47): precise reports of the faulting access, above the CUDA error.
    _S("sanitizer.memcheck",
       # CI logs indent the report, and log prefixes sit in front of it: "========= " need not start the line.
       # Newer releases say "Access at/to 0x... is out of bounds" where older ones said "Address".
       [(r"^[^\n=]{0,60}========= Invalid __(global|shared|local)__ (read|write) of size (\d+)(?: bytes)?",
         "========= Invalid __"),
        (r"^[^\n=]{0,60}=========     (?:Address|Access at|Access to) (0x[0-9a-f]+) is (out of bounds|misaligned)",
         "=========     A"),
        (r"^[^\n=]{0,60}========= Program hit (cuda\w+)", "========= Program hit ")], 86),
    _S("sanitizer.racecheck",
       [(r"^[^\n=]{0,60}========= (?:Error|WARN): Race reported between (Read|Write) access", "Race reported between")], 86),
    _S("sanitizer.initcheck", [(r"Uninitialized __global__ memory read of size", "Uninitialized __global__")], 85),
    _S("sanitizer.summary",
       [(r"^[^\n=]{0,60}========= ERROR SUMMARY: ([1-9]\d*) errors?", "ERROR SUMMARY: "),
        (r"^[^\n=]{0,60}========= RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)", "RACECHECK SUMMARY: ")],
       30),
    _S("sanitizer.asan", [(r"^==(\d+)==ERROR: AddressSanitizer: ([\w-]+)", "ERROR: AddressSanitizer: "),
                          (r"^SUMMARY: AddressSanitizer: ", "SUMMARY: AddressSanitizer: ")], 86),
    _S("sanitizer.tsan", [(r"^WARNING: ThreadSanitizer: (data race|[\w -]+)", "WARNING: ThreadSanitizer: ")], 86),
    _S("sanitizer.ubsan", [(r"\S:\d+:\d+: runtime error: ", ": runtime error: ")], 66),
    # Numerics (rows 48-49).
    _S("numeric.nan_anomaly", [(r"Function '(\w+)' returned nan values in its (\d+)(?:st|nd|rd|th) output",
                                "returned nan values")], 50),
    # DeepSpeed / Megatron fp16 loss scaler: every step overflowed (inf/NaN gradients) down to the minimum scale.
    # (DeepSpeed raises a bare Exception; its "xception" makes the lookup share a hub pass on big logs)
    _S("numeric.loss_scale_min", [(r"Exception: Current loss scale already at minimum",
                                   "Exception: Current loss scale")], 50,
       description="fp16 gradients overflow on every step: the dynamic loss scale hit its floor"),
    # A training loop's own report; a hint that ranks below any crash in the same log.
    _S("numeric.loss_nan", [(r"\b(?i:loss)(?:=| ?= ?|: ?| is )(?i:nan)\b",
                             ("nan", "NaN"))], 27),  # few needles: each is a pass over a big log
    _S("numeric.nan_stats", [(r"^[ \t]*(?:min=\S+ max=\S+ mean=\S+ )?nan_count=([1-9]\d*)", "nan_count="),
                             (r"\binf_count=([1-9]\d*)", "inf_count=")], 28),
    # A framework's own error on a non-finite loss or gradient (detectron2's trainer, torch's
    # clip_grad_norm_(error_if_nonfinite=True), a loop's check): above the exception it is raised as.
    _S("numeric.nonfinite_loss",
       [(r"Loss became infinite or NaN at iteration=(\d+)", "became infinite or NaN"),
        (r"total norm of order [\d.a-z]+ for gradients from parameters is non-finite", "is non-finite"),
        (r"(?:FloatingPointError|ValueError|RuntimeError|AssertionError|ArithmeticError): [^\n]*?\b(?i:loss)\b[^\n]*?"
         r"(?:\b(?i:nan|inf)\b|(?i:infinite|non-finite|not finite))",
         ("FloatingPointError: ", "ValueError: ", "RuntimeError: ", "AssertionError: ", "ArithmeticError: "))], 55,
       description="the loss or the gradients became NaN/inf and the framework stopped the run"),
    # numpy.seterr(..='raise'), jax_debug_nans: the operation that produced the NaN/inf raised.
    _S("numeric.floating_point", [(r"\bFloatingPointError: ([^\n]*)", "FloatingPointError: ")], 52),
    # Compiler codegen (ptxas, Triton's PTX step, LLVM's register allocator): the build of a kernel
    # failed, not its run. The register-allocation line is the cause; "aborted due to errors" follows it.
    _S("compile.register_allocation",
       [(r"Register allocation failed with register count of '(\d+)'", "Register allocation failed"),
        (r"ran out of registers during register allocation", "ran out of registers")], 77),
    _S("compile.ptxas",
       [(r"ptxas (?:error|fatal)\s*: (?!Ptx assembly aborted)([^\n]*)", ("ptxas error", "ptxas fatal")),
        (r"ptxas fatal\s*: Ptx assembly aborted due to errors", "Ptx assembly aborted")], 76),
    _S("triton.ptx_codegen",
       [(r"Internal Triton PTX codegen error", "Internal Triton PTX codegen error"),
        (r"PTXASError: ([^\n]*)", "PTXASError: ")], 74),
    # A hang in a collective, read from a thread dump (py-spy, faulthandler) of ranks inside
    # torch.distributed's collectives: the dump itself is the evidence of the hang.
    _S("nccl.collective_hang",
       [(r"^\s+(all_reduce|allreduce|barrier|all_gather\w*|reduce_scatter\w*|broadcast|all_to_all\w*|"
         r"reduce|gather|scatter|send|recv|wait) \([^()\n]*distributed_c10d\.py:\d+\)", "distributed_c10d.py:"),
        (r'File "[^"\n]*distributed_c10d\.py", line \d+,? in (all_reduce|allreduce|barrier|all_gather\w*|'
         r"reduce_scatter\w*|broadcast|all_to_all\w*|reduce|gather|scatter|send|recv|wait)\b", "distributed_c10d.py\"")],
       60, "hang", resolve=_resolve_collective),
)
del _S
assert all(len(sig.needles) == len(sig.patterns) for sig in BUILTIN)
CATEGORY_NAMES = tuple(s.name for s in BUILTIN)
_BY_NAME = {s.name: s for s in BUILTIN}


# --- the scanning engine ----------------------------------------------------------------------
#
# Cost model (measured on 100 MB): a bytes.find pass ~20 ms, splitting into lines ~0.4 s, a Python
# loop ~0.1 us per line. Big logs are repetitive (training steps, progress bars, NCCL INFO chatter),
# so lines are first grouped by a key (the line without its digits and hex letters, so counters,
# timestamps and pointers collapse); the needles are looked up in one representative line per
# group, and only groups whose representative holds a needle are expanded back to their lines,
# where the regexes run one line at a time. A log without repetition is scanned directly, one
# bytes.find pass per needle. Regexes never see more than one line (or a window of a giant line).

_KEY_DELETE = b"0123456789abcdefABCDEF"
_ANSI = recache.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")  # CSI colours, OSC titles/links
_DEDUPE_MIN_LINES = 20_000
_LAZY_NEEDLES = {"E   ", "E\t"}  # looked up only when needed (see _pytest_output)
_MAX_HITS = 2000  # per pattern: enough to rank; bounded work on logs that repeat one failure
_MAX_MEMBERS = 20_000  # lines of one group looked at
_PARALLEL_MIN_TEXT = 24 << 20
_LONG_LINE = 65536  # longer lines are looked at through windows around the needle
_WINDOW = 4096
_TRACEBACK_SPAN = 2000  # lines after a "Traceback" header in which its exception line is looked for
# Big texts: a needle is looked up among the lines holding its hub (a short literal it contains),
# found with one pass, instead of with a pass of its own; a hub on too many lines is not used.
_HUBS = ("rror", "RROR", "ault", "xception", "imeout", "STATUS", "CUDA", "NCCL", "bort", "ncounter", "emory",
         "nval", "ddress", "fail", "atchdog", "eceived", "=====", "llegal", "esource", "illed", "ignal", "erminate",
         "xited", "xit", "ailure")
_HUB_MIN_TEXT = 8 << 20
_HUB_MAX_LINES = 50_000


_HUB_MIN_NEEDLES = 4  # a hub pass (short literal: ~3x slower than a long needle's) must save more


def _hub_for(needle: str) -> str | None:
    return _HUB_OF.get(needle)


def _greedy_hubs(left: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    while True:
        best, held = None, []
        for h in _HUBS:
            got = [n for n in left if h in n]
            if len(got) > len(held):
                best, held = h, got
        if best is None or len(held) < _HUB_MIN_NEEDLES:
            return out
        for n in held:
            out[n] = best
        left = [n for n in left if n not in out]


def _assign_hubs(needles: Iterable[str]) -> dict[str, str]:
    """Greedy cover: the hub held by the most unassigned needles first, while it holds enough."""
    left = list(dict.fromkeys(needles))
    best = _greedy_hubs(left)
    # A needle looked up alone can be the hub of longer needles holding it (" WARN " of "NCCL WARN ",
    # "nan" of "nan_count="): its one pass then serves them all (it is its own hub so that pass is shared).
    direct = sorted((n for n in left if n not in best), key=len)
    for n in reversed(direct):
        if n in best:
            continue
        h = next((h for h in direct if h != n and h in n and best.get(h, h) == h), None)
        if h is not None:
            best[n] = best[h] = h
    return best


class _Text:
    """A log as bytes lines, grouped for needle lookup, decoded lazily line by line."""

    def __init__(self, data: bytes, hubs_from: int | None = None):
        self.data = data
        self.hubs_from = _HUB_MIN_TEXT if hubs_from is None else hubs_from  # text size from which needles are looked up through their hubs
        self.lines = data.split(b"\n")
        n = len(self.lines)
        self.keys: list[bytes] | None = None
        reps: Sequence[int] = range(n)
        if n >= _DEDUPE_MIN_LINES and self._repetitive():
            keys = list(map(bytes.translate, self.lines, itertools.repeat(None), itertools.repeat(_KEY_DELETE)))
            first = dict(zip(reversed(keys), range(n - 1, -1, -1)))
            if len(first) <= n // 2:
                self.keys = keys
                reps = sorted(first.values())
        self.reps = reps
        if self.keys is None:
            self.rep_text = data
            lens = map(len, self.lines)
        else:
            self.rep_text = b"\n".join([self.lines[i] for i in reps])
            lens = (len(self.lines[i]) for i in reps)
        self.rep_starts = list(itertools.accumulate(map((1).__add__, lens), initial=0))
        self._groups: dict[bytes, list[int]] | None = None
        self._decoded: dict[int, str] = {}
        self._needle_reps: dict[str, list[tuple[int, int]]] = {}
        self._full: str | None = None
        self._hubs: dict[str, tuple[bytes, list[int], list[int]] | None | bool] = {}

    def _repetitive(self) -> bool:
        """Grouping pays only when lines repeat; judge from an evenly spread sample of lines."""
        lines = self.lines
        step = max(1, len(lines) // 4000)
        sample = [ln.translate(None, _KEY_DELETE) for ln in lines[::step]]
        return len(set(sample)) <= len(sample) // 2

    def _hub(self, hub: str) -> tuple[bytes, list[int], list[int]] | None | bool:
        """The representative lines holding ``hub``, joined: (text, starts, rep index per line).
        None: the hub is absent. False: it is everywhere, look needles up in the full text."""
        if hub in self._hubs:
            return self._hubs[hub]
        hb = hub.encode()
        text, starts = self.rep_text, self.rep_starts
        reps: list[int] = []
        pos = text.find(hb)
        result: tuple[bytes, list[int], list[int]] | None | bool = None
        while pos != -1:
            if len(reps) >= _HUB_MAX_LINES:
                result = False
                break
            r = bisect.bisect_right(starts, pos) - 1
            reps.append(r)
            pos = text.find(hb, starts[r + 1])
        else:
            if reps:
                parts = [text[starts[r]:starts[r + 1] - 1] for r in reps]
                hstarts = list(itertools.accumulate(map((1).__add__, map(len, parts)), initial=0))
                result = (b"\n".join(parts), hstarts, reps)
        self._hubs[hub] = result
        return result

    # --- needles -> lines ---
    def prefetch(self, needles: Sequence[str]) -> None:
        """Look all ``needles`` up. On a big text that did not group (no repetition) this is one
        pass per needle over tens of megabytes: share the passes with a forked child (2 cores halve
        it). The child only runs bytes.find and pickles the positions back."""
        todo = [n for n in dict.fromkeys(needles) if n not in self._needle_reps]
        if (len(self.rep_text) >= _PARALLEL_MIN_TEXT and len(todo) > 8 and hasattr(os, "fork")
                and (os.cpu_count() or 1) > 1 and threading.active_count() == 1):
            import pickle

            theirs, mine = self._split(todo)
            try:
                rfd, wfd = os.pipe()
                pid = os.fork()
            except OSError:
                pid = -1
            if pid == 0:  # child: look up its half, send it, leave without cleanup handlers
                try:
                    os.close(rfd)
                    payload = pickle.dumps({n: self.needle_reps(n) for n in theirs})
                    with os.fdopen(wfd, "wb") as f:
                        f.write(payload)
                finally:
                    os._exit(0)
            if pid > 0:
                os.close(wfd)
                for n in mine:
                    self.needle_reps(n)
                with os.fdopen(rfd, "rb") as f:
                    payload = f.read()
                os.waitpid(pid, 0)
                try:
                    got = pickle.loads(payload)
                except Exception:  # the child died: do its half here
                    got = {}
                for n, v in got.items():
                    self._needle_reps.setdefault(n, v)
        for n in todo:
            self.needle_reps(n)

    def _split(self, todo: list[str]) -> tuple[list[str], list[str]]:
        """Two halves of equal cost for the two processes. Needles sharing a hub go to the same side,
        or both would make the hub's pass; a hub pass weighs ~3 needle passes."""
        groups: dict[str, list[str]] = {}
        for n in todo:
            h = _hub_for(n) if len(self.rep_text) > self.hubs_from else None
            groups.setdefault("\0" + h if h else n, []).append(n)
        sides: tuple[list[str], list[str]] = ([], [])
        load = [0.0, 0.0]
        for key, members in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            k = 0 if load[0] <= load[1] else 1
            sides[k].extend(members)
            load[k] += (3.0 + 0.1 * len(members)) if key.startswith("\0") else 1.0
        return sides

    def needle_reps(self, needle: str) -> list[tuple[int, int]]:
        """(representative index, byte offset of the needle in that line) for each representative
        line holding ``needle`` (first occurrence per line; giant lines: every occurrence)."""
        got = self._needle_reps.get(needle)
        if got is not None:
            return got
        nb = needle.encode("utf-8")
        out: list[tuple[int, int]] = []
        hub = _hub_for(needle) if len(self.rep_text) > self.hubs_from else None
        sub = self._hub(hub) if hub else False
        if sub is None:
            self._needle_reps[needle] = out
            return out
        if sub is not False:
            htext, hstarts, hreps = sub  # type: ignore[misc]
            pos = htext.find(nb)
            while pos != -1:
                k = bisect.bisect_right(hstarts, pos) - 1
                r = hreps[k]
                out.append((r, pos - hstarts[k]))
                pos = htext.find(nb, hstarts[k + 1])
            self._needle_reps[needle] = out
            return out
        text, starts = self.rep_text, self.rep_starts
        pos = text.find(nb)
        while pos != -1 and len(out) < _MAX_MEMBERS:
            r = bisect.bisect_right(starts, pos) - 1
            out.append((r, pos - starts[r]))
            line_len = starts[r + 1] - 1 - starts[r]
            nxt = starts[r + 1] if line_len <= _LONG_LINE else pos + _WINDOW
            pos = text.find(nb, max(nxt, pos + 1))
        self._needle_reps[needle] = out
        return out

    def expand(self, rep_hits: Iterable[tuple[int, int]], needle: str) -> list[tuple[int, int]]:
        """(line index, byte offset of the needle) of every line in the groups of ``rep_hits``."""
        if self.keys is None:
            return [(self.reps[r], off) for r, off in rep_hits]
        groups = self._groups
        assert groups is not None
        nb = needle.encode("utf-8")
        out: list[tuple[int, int]] = []
        seen: set[int] = set()
        for r, off in rep_hits:
            idx = self.reps[r]
            if len(self.lines[idx]) > _LONG_LINE:
                out.append((idx, off))  # giant lines are never grouped together meaningfully
                continue
            for i in groups.get(self.keys[idx], (idx,)):
                if i not in seen:
                    seen.add(i)
                    o = self.lines[i].find(nb)
                    if o != -1:
                        out.append((i, o))
        out.sort()
        return out

    def lines_with(self, needle: str) -> list[tuple[int, int]]:
        """(line index, byte offset of the needle) of every line holding ``needle``: its
        representatives (``needle_reps``), then the members of their groups."""
        reps = self.needle_reps(needle)
        if not reps:
            return []
        self.prepare_groups(r for r, _ in reps)
        return self.expand(reps, needle)

    def prepare_groups(self, rep_indices: Iterable[int]) -> None:
        """One pass over all lines collecting the members of the groups that matter (capped)."""
        if self.keys is None:
            return
        wanted = {self.keys[self.reps[r]] for r in rep_indices}
        if self._groups is not None:
            wanted -= set(self._groups)
        groups = self._groups if self._groups is not None else {}
        if wanted:
            for k in wanted:
                groups[k] = []
            for i, k in enumerate(self.keys):
                if k in wanted:
                    g = groups[k]
                    if len(g) < _MAX_MEMBERS:
                        g.append(i)
        self._groups = groups

    # --- decoding ---
    def line(self, i: int) -> str:
        s = self._decoded.get(i)
        if s is None:
            raw = self.lines[i]
            if len(raw) > _LONG_LINE:
                raw = raw[:_LONG_LINE]
            if b"\x1b" in raw:
                raw = _ANSI.sub(b"", raw)  # coloured loggers: "\x1b[31mKeyError\x1b[0m: 'w'" is a KeyError line
            s = self._decoded[i] = raw.decode("utf-8", "replace").rstrip("\r")
        return s

    def window(self, i: int, off: int) -> tuple[str, int]:
        """Text to run a regex on for line ``i`` around byte ``off``, and its byte start."""
        raw = self.lines[i]
        if len(raw) <= _LONG_LINE:
            return self.line(i), 0
        start = max(0, off - _WINDOW)
        return raw[start:off + _WINDOW].decode("utf-8", "replace"), start

    def display(self, i: int, off: int = 0) -> str:
        raw = self.lines[i]
        if len(raw) > 4096:
            raw = raw[max(0, off - 2048):off + 2048]
        if b"\x1b" in raw:
            raw = _ANSI.sub(b"", raw)
        return raw.decode("utf-8", "replace").rstrip("\r")

    def full_text(self) -> str:
        if self._full is None:
            self._full = self.data.decode("utf-8", "replace")
        return self._full


@dataclass
class _Hit:
    name: str
    sig: Signature
    rank: int
    line: int  # 0-based line index
    col: int  # byte offset within the line, for ordering and display
    groups: tuple
    text: str | None = None  # the line as displayed, once its text is no longer at hand (a streamed scan)


def _add(hits: list[_Hit], sig: Signature, m, line: int, col: int) -> None:
    if m.end() == m.start():
        return  # an empty user pattern would otherwise match everywhere
    name, rank = sig.resolve(m) if sig.resolve else (sig.name, sig.rank)
    if rank < 0:
        return  # a resolver's verdict: this line is noise (e.g. RCCL's start-up advisories)
    if sig.name == "py.traceback" and sig.source == "builtin" and _WRAPPER_TEXT.search(m.group("msg") or ""):
        # A Python exception that only re-raises an earlier failure: below the engines' own wrapper
        # lines too (vllm.engine_init says more than "RuntimeError" does).
        rank = min(rank, 9)
    hits.append(_Hit(name, sig, rank, line, col, m.groups()))


def _not_output(t: _Text, sig: Signature, i: int, s: str, m: re.Match) -> str:
    """Why a match on line ``i`` is not a failure's output ('' when it is): "code", the code a traceback frame shows
    (raise RuntimeError(f"NCCL error: ...")), which no later match on the line is either; "advice", a library naming an
    error it did not hit ("If you get `CUDA error: invalid device function` ..."); "prose", a headerless exception
    name with no exception output around it."""
    if sig.name == "py.traceback_headerless" and not _exception_output_around(t, i):
        return "prose"
    if sig.name != "py.traceback" and _frame_source(t, i):
        return "code"
    if _HINT.search(s, max(0, m.start() - 200), m.start()):
        return "advice"
    return ""


def _scan_builtin(t: _Text, sig: Signature, hits: list[_Hit]) -> None:
    # Patterns are compiled only when a needle is present: most never are, and compiling the whole
    # catalog costs more than scanning a typical log.
    for idx, pattern in enumerate(sig.patterns):
        needles = sig.needles[idx] if idx < len(sig.needles) else ()
        if sig.name == "py.traceback" and idx == 0:
            if any(t.needle_reps(n) for n in needles) or t.needle_reps(_RAISED_FROM):
                _scan_tracebacks(t, _compile(pattern, sig.flags), sig, hits)
            continue
        if sig.name == "py.traceback" and idx == 1 and not _pytest_output(t):
            continue
        cands: list[tuple[int, int]] = []
        for n in needles:
            cands.extend(t.lines_with(n))
        if not cands:
            continue
        if len(needles) > 1:
            cands = sorted(set(cands))
        rx = _compile(pattern, sig.flags)
        found = 0
        last = None
        for i, off in cands:
            if i == last and len(t.lines[i]) <= _LONG_LINE:
                continue  # one pass over a line is enough for every needle it holds
            last = i
            s, base = t.window(i, off)
            before = found
            for m in rx.finditer(s):
                said = _not_output(t, sig, i, s, m)
                if said == "code":
                    break
                if said:
                    continue
                _add(hits, sig, m, i, base + m.start())
                found += 1
            if sig.name == "py.traceback" and idx == 3 and found == before and s.rstrip().endswith("raised:"):
                # "BackendCompilerFailed: backend='inductor' raised:" pasted without its traceback: the
                # exception it wraps is on the next lines
                found += _wrapped_below(t, i, _compile(sig.patterns[0], sig.flags), sig, hits)
            if found >= _MAX_HITS:
                break


# A library's advice that names an error it did not hit: "If you get `CUDA error: invalid device function` errors, the
# above might be the cause" (bitsandbytes' setup), "if you see X, set Y". (Searched in the 200 characters before a match,
# on its line only: anchored at a line start or the window's.)
_HINT = recache.compile(r"(?:^|\n)[ \t>*-]{0,8}(?:if|when|should) you (?:get|see|encounter|hit|run into|ever see)\b[^\n]*$",
                        re.I)


# After a log prefix: a line starting like "Name:" / "pkg.Name: " is output; one starting like a
# statement (raise ..., x = ..., f(...), obj.attr...) is code. (compiled on first use, through
# _compile's cache: most classifications never need them)
_OUTPUT_START = r"[A-Za-z_][\w.]*:(?:[ \t]|$)"
_CODE_START = r"(?:raise|return|assert|yield|await)\b|[A-Za-z_][\w.]*(?:\[[^\]\n]*\])?[ \t]*(?:=|\(|\.)"


def _frame_source(t: _Text, i: int) -> bool:
    """Line ``i`` is the source line Python shows under a traceback frame (the line above is
    'File "x.py", line 3, in f'): code, so what it says is no failure. Code is indented deeper than
    its frame; a paste that lost the indentation still shows a statement. A frame without source
    (<stdin>, a C extension) is followed by the exception line itself, and a line another process
    printed in between is neither: both stay output."""
    if i == 0 or len(t.lines[i - 1]) > _LONG_LINE:
        return False
    prev = t.line(i - 1)
    if not _FRAME.search(prev):
        return False
    prefix = _compile(_PREFIX)
    cur = t.line(i)
    body = cur[prefix.match(cur).end():]
    code = body.lstrip(" \t")
    if _compile(_OUTPUT_START).match(code):
        return False
    frame = prev[prefix.match(prev).end():]
    if len(body) - len(code) > len(frame) - len(frame.lstrip(" \t")):
        return True
    return _compile(_CODE_START).match(code) is not None


def _wrapped_below(t: _Text, i: int, rx: re.Pattern[str], sig: Signature, hits: list[_Hit]) -> int:
    for j in range(i + 1, min(i + 4, len(t.lines))):
        if len(t.lines[j]) > _LONG_LINE:
            break
        m = rx.match(t.line(j))
        if m:
            _add(hits, sig, m, j, m.start())
            return 1
    return 0


_LOGGED_EXC = recache.compile(r"\b(?P<exc>[A-Z][A-Za-z0-9]*(?:Error|Exception)): (?P<msg>\S[^\n]*)$")


def _exception_output_around(t: _Text, i: int) -> bool:
    """A bare "XError: msg" line is Python's exception output (not a log line that mentions an
    error) when what Python prints around one is there: the message continued on indented lines
    below it, or the bottom of a rich traceback box just above it."""
    if i + 1 < len(t.lines) and len(t.lines[i + 1]) <= _LONG_LINE:
        nxt = t.line(i + 1)
        if nxt[:1] in (" ", "\t") and nxt.strip() and not nxt.lstrip().startswith(("File \"", "at ")):
            return True
    return i > 0 and len(t.lines[i - 1]) <= _LONG_LINE and t.line(i - 1).lstrip().startswith("╰")


def _pytest_output(t: _Text) -> bool:
    """pytest's "E   ValueError" lines are looked for only in pytest output (cheaper, and "E  "
    is too common a literal to look for in every log)."""
    return any(t.needle_reps(n) for n in ("FAILED ", "ERROR ", " FAILURES ", "short test summary"))


def _tb_exception(t: _Text, rx: re.Pattern[str], sig: Signature, hits: list[_Hit], h: int, stop: int) -> int:
    """The exception line that ends the traceback under header ``h`` (and the inner one a wrapper
    prints below it); returns its line, or ``stop`` when none was found."""
    # A log pasted indented (a CI step, a code block in a list) indents the exception line
    # as much as its header: read the lines below at the header's indentation.
    head = t.line(h)
    indent = head[:len(head) - len(head.lstrip(" \t"))] if head[:1] in (" ", "\t") else ""
    for j in range(h + 1, stop):
        if len(t.lines[j]) > _LONG_LINE:
            continue
        line = t.line(j)
        m = rx.match(line[len(indent):] if indent and line.startswith(indent) else line)
        if not m:
            continue
        _add(hits, sig, m, j, m.start())
        # A wrapper that prints what it wraps on the next line ("BackendCompilerFailed:
        # backend='inductor' raised:" / "ImportError: ...") names the inner one too.
        if hits[-1].rank <= 11 or not (m.group("msg") or "").strip() or m.group(0).rstrip().endswith(":"):
            for k2 in range(j + 1, min(j + 4, stop)):
                m2 = rx.match(t.line(k2)) if len(t.lines[k2]) <= _LONG_LINE else None
                if m2:
                    _add(hits, sig, m2, k2, m2.start())
                    break
        return j
    return stop


def _tb_headers(t: _Text, rx: re.Pattern[str], sig: Signature, hits: list[_Hit]) -> list[tuple[int, int]]:
    """Each "Traceback (most recent call last)" header's exception; the (header, exception line)
    spans read."""
    covered: list[tuple[int, int]] = []
    n = len(t.lines)
    headers = [i for i, _ in t.lines_with(_TRACEBACK_HEADER_TEXT)][:_MAX_HITS]
    for k, h in enumerate(headers):
        stop = min(headers[k + 1] if k + 1 < len(headers) else n, h + 1 + _TRACEBACK_SPAN, n)
        end = _tb_exception(t, rx, sig, hits, h, stop)
        if end == stop and h > 0 and len(t.lines[h - 1]) <= _LONG_LINE:
            # The exception line was cut off (a truncated paste): a logger that prints the exception
            # above its traceback ("CRITICAL Uncaught RuntimeError: msg", logging.exception) names it.
            m = _LOGGED_EXC.search(t.line(h - 1))
            if m:
                _add(hits, sig, m, h - 1, m.start())
                hits[-1].rank = min(hits[-1].rank, 44)
        covered.append((h, end))
    return covered


def _tb_headless(t: _Text, rx: re.Pattern[str], sig: Signature, hits: list[_Hit], covered: list) -> None:
    """A traceback whose header was cut off: the exception a few lines below its last frame."""
    n = len(t.lines)
    frames = [i for i, _ in t.lines_with(_FRAME_TEXT)][:_MAX_MEMBERS]
    starts = [h for h, _ in covered]
    found = 0
    for x, f in enumerate(frames):
        if x + 1 < len(frames) and frames[x + 1] <= f + 3:
            continue  # not the last frame of its run
        c = bisect.bisect_right(starts, f) - 1
        if c >= 0 and covered[c][0] < f <= covered[c][1]:
            continue  # read through its header already
        if len(t.lines[f]) > _LONG_LINE or not _FRAME.search(t.line(f)):
            continue
        for j in range(f + 1, min(f + 5, n)):
            if len(t.lines[j]) > _LONG_LINE:
                break
            m = rx.match(t.line(j))
            if m:
                _add(hits, sig, m, j, m.start())
                found += 1
                break
        if found >= _MAX_HITS:
            break


def _scan_tracebacks(t: _Text, rx: re.Pattern[str], sig: Signature, hits: list[_Hit]) -> None:
    """A bare "XError: msg" line is an exception only when it ends a traceback: the first such line
    after each "Traceback (most recent call last)" header (frames are indented, so the first
    unindented exception line is the one raised), never anywhere in the log. A traceback whose
    header was cut off (a pasted or truncated log) still ends its last 'File "...", line N' frame
    with the exception a few lines below."""
    covered = _tb_headers(t, rx, sig, hits)
    # A c10::Error printed without its Python traceback: the message line, then "Exception raised
    # from <fn> at <file>:<line> (most recent call first):" and the C++ frames.
    for i, _ in t.lines_with(_RAISED_FROM)[:_MAX_HITS]:
        for j in range(i - 1, max(-1, i - 3), -1):
            if len(t.lines[j]) > _LONG_LINE:
                break
            m = rx.match(t.line(j).lstrip("`'\" \t"))
            if m:
                _add(hits, sig, m, j, m.start())
                break
    _tb_headless(t, rx, sig, hits, covered)


# --- user patterns under a time budget ---------------------------------------------------------

USER_PATTERN_BUDGET = 1.0  # seconds per user pattern per classification (DBGLOG_PATTERN_BUDGET overrides)


def _budget() -> float:
    """DBGLOG_PATTERN_BUDGET (seconds, 0.05..60; the hostile probes use a short one), else the default."""
    try:
        v = float(os.environ.get("DBGLOG_PATTERN_BUDGET", ""))
    except ValueError:
        return USER_PATTERN_BUDGET
    return min(max(v, 0.05), 60.0) if v == v else USER_PATTERN_BUDGET


class _Slow(Exception):
    pass


def _alarm_usable() -> bool:
    if threading.current_thread() is not threading.main_thread() or not hasattr(_signal, "setitimer"):
        return False
    try:
        handler = _signal.getsignal(_signal.SIGALRM)
        delay, _ = _signal.getitimer(_signal.ITIMER_REAL)
    except (ValueError, OSError):
        return False
    # Someone else (pytest-timeout's signal method, the application) owns SIGALRM: leave it alone.
    return handler in (_signal.SIG_DFL, _signal.SIG_IGN, None) and delay == 0.0


def _on_alarm(signum, frame):
    raise _Slow()


def _user_matches_alarm(rx: re.Pattern[str], text: str, budget: float) -> list[tuple[int, int, tuple]] | None:
    """Run in this process; SRE checks for signals while it backtracks, so SIGALRM interrupts it."""
    old = _signal.signal(_signal.SIGALRM, _on_alarm)
    try:
        _signal.setitimer(_signal.ITIMER_REAL, budget)
        out = [(m.start(), m.end(), m.groups()) for m in itertools.islice(rx.finditer(text), _MAX_HITS)]
        _signal.setitimer(_signal.ITIMER_REAL, 0)
        return out
    except _Slow:
        return None
    finally:
        _signal.setitimer(_signal.ITIMER_REAL, 0)
        _signal.signal(_signal.SIGALRM, old)


_WORKER = (
    "import itertools,json,re,sys\n"
    "p,f,n=json.loads(sys.stdin.readline())\n"
    "t=sys.stdin.read()\n"
    "rx=re.compile(p,f)\n"
    "out=[(m.start(),m.end(),m.groups()) for m in itertools.islice(rx.finditer(t),n)]\n"
    "sys.stdout.write(json.dumps(out))\n"
)


def _cpu_seconds(pid: int) -> float:
    """CPU time a process has used (Linux /proc); where it cannot be read, infinity (the wall clock rules)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
    except (OSError, ValueError, IndexError):
        return float("inf")


def _user_matches_subprocess(rx: re.Pattern[str], text: str, budget: float) -> list[tuple[int, int, tuple]] | None:
    """Off the main thread (or with SIGALRM taken) a regex cannot be interrupted in-process: run it
    in a child that is killed when the budget runs out. Offsets are in characters, as here.

    The budget is the child's CPU time: on a loaded machine its start-up alone can take a second of
    wall clock, which says nothing about the pattern. The wall clock still bounds it (a starved machine)."""
    header = json.dumps([rx.pattern, rx.flags & ~re.UNICODE, _MAX_HITS]) + "\n"
    try:
        p = subprocess.Popen([sys.executable, "-I", "-S", "-c", _WORKER], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        return []
    data = (header + text).encode("utf-8", "surrogatepass")
    waited, bound = 0.0, max(30.0, 20 * budget)
    try:
        while True:
            try:  # (a retried communicate keeps what it sent and read: the input is given once)
                out, _ = p.communicate(None if waited else data, timeout=budget + 0.5)
                break
            except subprocess.TimeoutExpired:
                waited += budget + 0.5
                if _cpu_seconds(p.pid) >= budget or waited >= bound:
                    raise
    except subprocess.TimeoutExpired:
        try:  # the worker leads its own session: its group is it (and anything it started)
            os.killpg(p.pid, _signal.SIGKILL)
        except OSError:
            pass
        p.communicate()
        return None
    except OSError:
        return []
    try:
        return [(s, e, tuple(g)) for s, e, g in json.loads(out.decode("utf-8") or "[]")]
    except (ValueError, TypeError):
        return []


class _UserMatch:
    """Enough of re.Match for _Hit: start(), end(), groups() of a match found under the budget."""

    __slots__ = ("_s", "_e", "_g")

    def __init__(self, s: int, e: int, g: tuple):
        self._s, self._e, self._g = s, e, g

    def start(self) -> int:
        return self._s

    def end(self) -> int:
        return self._e

    def groups(self) -> tuple:
        return self._g


def _scan_user(t: _Text, sig: Signature, hits: list[_Hit], warnings: list[str], budget: float) -> None:
    text = t.full_text()
    for rx in sig.compiled():
        found = (_user_matches_alarm(rx, text, budget) if _alarm_usable()
                 else _user_matches_subprocess(rx, text, budget))
        if found is None:
            warnings.append(f"user signature {sig.name!r} ({sig.source}) took over {budget:g}s on this output "
                            f"and was skipped: its pattern {rx.pattern!r} backtracks too much; "
                            "simplify it (avoid nested quantifiers such as (a+)+)")
            continue
        line, prev = 0, 0
        for s, e, g in sorted(found):
            line += text.count("\n", prev, s)
            prev = s
            col = s - (text.rfind("\n", 0, s) + 1)
            _add(hits, sig, _UserMatch(s, e, g), line, col)


# --- classification ---------------------------------------------------------------------------

def classify_text(text: str | bytes, signatures: Iterable[Signature] | None = None,
                  *, max_key_lines: int = 8, warnings: list[str] | None = None,
                  budget: float | None = None) -> Match | None:
    """Return the most causal signature match in ``text`` (None if nothing matched).

    ``signatures`` defaults to the built-in catalog; pass ``all_signatures(config)`` to include the
    user's. Never raises on odd input (bytes are decoded with replacement characters). A user
    pattern that needs more than ``budget`` seconds (default USER_PATTERN_BUDGET) is skipped and
    named in ``warnings`` (a list the caller passes) and in the returned Match's ``warnings``.
    """
    # A big log becomes millions of short-lived lists and tuples but no reference cycles: the cyclic
    # collector would only walk the line lists again and again, so it waits until we are done.
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        m = _classify(text, signatures, max_key_lines, warnings, budget)
        if m is None or m.rank < _UNWRAP_BELOW:
            for joined in (unwrap(text), join_partial_lines(text), join_prefixed(text), join_numbered(text)):
                if joined is None:
                    continue
                # a terminal cut the lines, or a log collector split them: read them joined back
                j = _classify(joined[0], signatures, max_key_lines, None, budget)
                if j is not None and (m is None or j.rank > m.rank):
                    j.warnings.append(f"read with {joined[1]} joined back")
                    _renumber(j, joined[2])  # the log's own line numbers
                    return j
        return m
    finally:
        if paused:
            gc.enable()


def _renumber(m: Match, starts: list[int]) -> None:
    """Line numbers of a match in a joined text, as lines of the original (its first row)."""
    def orig(n: int) -> int:
        return starts[n - 1] + 1 if 0 < n <= len(starts) else n

    m.line_no = orig(m.line_no)
    m.key_lines = [(orig(n), t) for n, t in m.key_lines]


_UNWRAP_BELOW = 40  # a wrapper, hint or summary only: the cause may be in a wrapped line
_UNWRAP_MAX = 32 << 20  # bytes; a log this big was written to a file, not copied from a terminal
_UNWRAP_MIN_WIDTH = 60


def cut_length(line: str) -> int:
    """A line's length as a cut at a terminal's width reads it: 0 for a line a capture padded with spaces (a cut line is
    text to its last column, or one space where the terminal broke at a word)."""
    return 0 if line.endswith(("  ", "\t")) else len(line)


def unwrap(text: str | bytes) -> tuple[bytes, str, list[int]] | None:
    """The text with terminal-wrapped lines joined back, how, and each joined line's first original
    line (0-based), when it looks wrapped: no line is longer than a width W (>= 60) and at least two
    lines are exactly W long (each such line continues on the next). None otherwise."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    if len(data) > _UNWRAP_MAX:
        return None
    lines = data.replace(b"\r\n", b"\n").split(b"\n")
    lengths = [cut_length(x.decode("utf-8", "replace")) for x in lines]
    width = max(lengths, default=0)
    if width < _UNWRAP_MIN_WIDTH or lengths.count(width) < 2:
        return None
    out: list[bytes] = []
    starts: list[int] = []
    carry, first = b"", 0
    for i, (line, n) in enumerate(zip(lines, lengths)):
        if not carry:
            first = i
        carry += line
        if n != width:
            out.append(carry)
            starts.append(first)
            carry = b""
    if carry:
        out.append(carry)
        starts.append(first)
    return b"\n".join(out), f"the lines wrapped at {width} columns", starts


# The container runtime's log format (CRI, what `kubectl logs` reads from the node's files):
# "<RFC3339 time> <stdout|stderr> <P|F> <text>", P a partial line that the next line continues.
_CRI = recache.compile(rb"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d) (?:stdout|stderr) ([PF]) ?(.*)$")


def join_partial_lines(text: str | bytes) -> tuple[bytes, str, list[int]] | None:
    """The text with the container runtime's partial lines (flag P) joined to the line that ends
    them and the CRI prefix taken off, how, and each line's first original line; None when no line
    is a partial one."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    if len(data) > _UNWRAP_MAX or b" P " not in data:
        return None
    out: list[bytes] = []
    starts: list[int] = []
    carry, first, partial = None, 0, 0
    for i, line in enumerate(data.split(b"\n")):
        m = _CRI.match(line)
        if carry is None:
            first = i
        if m is not None and m.group(1) == b"P":
            carry = (carry or b"") + m.group(2)
            partial += 1
            continue
        out.append((carry or b"") + (line if m is None else m.group(2)))
        starts.append(first)
        carry = None
    if not partial:
        return None
    if carry is not None:
        out.append(carry)
        starts.append(first)
    return b"\n".join(out), f"{partial} partial line(s) of the container log", starts


# A prefix a log collector, a launcher or a pager puts on every line it prints: a timestamp
# (kubectl --timestamps, CI logs), a journal's "Mon dd hh:mm:ss host unit[pid]: ", torchrun's
# "[rank3]:", mpirun's "[1,0]<stderr>:", srun -l's "0: ". Group ts varies from line to line; the
# rest (tag) says which stream a line belongs to.
_LINE_PREFIX = recache.compile(
    rb"(?P<ts>\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?[ \t]"
    rb"|[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d )"
    rb"|(?P<tag>\[(?:rank|default)\d+\]:|\[\d+,\d+\]<std(?:out|err)>:|\d{1,5}: "
    rb"|[\w.-]+ [\w.@/-]+\[\d+\]: )")
_PREFIX_MAX = 4  # parts of one line's prefix


def _line_prefix(line: bytes) -> tuple[int, bytes]:
    """(length of ``line``'s prefix, the key of its stream: the prefix without times and numbers)."""
    at, key = 0, b""
    for _ in range(_PREFIX_MAX):
        m = _LINE_PREFIX.match(line, at)
        if m is None or m.end() == at:
            break
        if m.group("tag"):
            key += m.group("tag")
        at = m.end()
    return at, key


def join_prefixed(text: str | bytes) -> tuple[bytes, str, list[int]] | None:
    """The text with lines split at a fixed width *and prefixed again* joined back: a logger or a
    collector that cut a long line into chunks, each with the stream's prefix ("[rank3]:", a
    timestamp). A line whose body (after its prefix) is exactly W long (the longest body, W >= 60,
    at least two such lines) continues on the next line of the same stream (the same prefix but
    for its times). Returns the text, how, and each joined line's first original line (0-based);
    None when nothing is joined."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    if len(data) > _UNWRAP_MAX:
        return None
    lines = data.replace(b"\r\n", b"\n").split(b"\n")
    cut = [_line_prefix(x) for x in lines]
    if sum(1 for n, _ in cut if n) < 2:
        return None  # no prefixes: the plain unwrap's case
    widths = [len(x[n:].decode("utf-8", "replace")) for x, (n, _) in zip(lines, cut)]
    width = max(widths, default=0)
    if width < _UNWRAP_MIN_WIDTH or widths.count(width) < 2:
        return None
    runs = _split_runs(lines, cut, widths, width)
    if not runs:
        return None
    out: list[bytes] = []
    starts: list[int] = []
    taken: set[int] = set()
    for i, line in enumerate(lines):
        if i in taken:
            continue
        for j in runs.get(i, ()):
            line += lines[j][cut[j][0]:]
            taken.add(j)
        out.append(line)
        starts.append(i)
    joined = len(taken)
    return b"\n".join(out), f"{joined} line(s) split under a log prefix", starts


def _mid_word(a: bytes, b: bytes) -> bool:
    """A cut between ``a`` and ``b`` falls inside a word (where a fixed-width cut mostly falls)."""
    return a[-1:].isalnum() and b[:1].isalnum()


def _split_runs(lines: list[bytes], cut: list[tuple[int, bytes]], widths: list[int],
                width: int) -> dict[int, list[int]]:
    """First line -> the lines that continue it: a prefixed line exactly ``width`` wide goes on in
    the next line of its stream (streams interleave), until one shorter ends the run. A run that
    never ends shorter (lines all as wide as each other), or whose every cut falls between words
    (templated lines that happen to be the widest), is no split."""
    nxt: dict[int, int] = {}
    last: dict[bytes, int] = {}
    for i, (n, key) in enumerate(cut):
        if n:
            if key in last:
                nxt[last[key]] = i
            last[key] = i
    runs: dict[int, list[int]] = {}
    inside: set[int] = set()
    for i, (n, _) in enumerate(cut):
        if not n or widths[i] != width or i in inside:
            continue
        chain, j = [], nxt.get(i)
        while j is not None:
            chain.append(j)
            if widths[j] != width:
                break
            j = nxt.get(j)
        if chain and widths[chain[-1]] < width and any(
                _mid_word(lines[a], lines[b][cut[b][0]:]) for a, b in zip([i, *chain], chain)):
            runs[i] = chain
            inside.update(chain)
    return runs


_NUMBERED = recache.compile(rb"[ \t]*\d{1,7}[ \t]")


def join_numbered(text: str | bytes) -> tuple[bytes, str, list[int]] | None:
    """The text with a pager's wrapped rows joined back (``less -N``, ``cat -n`` of a screen): a
    line numbered in a column, its rows after the first blank in that column. A row exactly as wide
    as the screen (the longest row, >= 60, at least two such) continues on the next blank-column
    row. Returns the text (numbers kept), how, and each joined line's first original line."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    if len(data) > _UNWRAP_MAX:
        return None
    lines = data.replace(b"\r\n", b"\n").split(b"\n")
    cols = [m.end() if (m := _NUMBERED.match(x)) else 0 for x in lines]
    if sum(1 for c in cols if c) < 2:
        return None
    widths = [len(x.decode("utf-8", "replace")) for x in lines]
    width = max(widths, default=0)
    if width < _UNWRAP_MIN_WIDTH or widths.count(width) < 2:
        return None
    out: list[bytes] = []
    starts: list[int] = []
    col, joined, i = 0, 0, 0
    while i < len(lines):
        line, first = lines[i], i
        col = cols[i] or col
        while widths[i] == width and i + 1 < len(lines) and not cols[i + 1] and col \
                and len(lines[i + 1]) > col and not lines[i + 1][:col].strip():
            i += 1
            line += lines[i][col:]
            joined += 1
        out.append(line)
        starts.append(first)
        i += 1
    if not joined:
        return None
    return b"\n".join(out), f"{joined} row(s) a pager wrapped", starts


# NCCL's line grammar: "host:pid:tid [dev] ...". After an error NCCL unwinds with return-code lines from
# the same thread ("NCCL INFO init.cc:766 -> 2"); after a WARN it recovers from (an optional library it
# probed for, libibverbs missing, then "NET/Socket : Using eth0") it simply goes on.
# ((?<!\S): tried at the start of a word only -- the same match, and linear on a 64 KB line of one word)
_NCCL_THREAD = recache.compile(r"(?<!\S)(\S+:\d+:\d+) \[\d+\] ")
_NCCL_RETURN = recache.compile(r"NCCL INFO [^\n]*?\S:\d+ -> \d+")  # (\S, not \S+: one char is as true, and linear)
_NCCL_LOOKAHEAD = 60


def _nccl_went_on(t: _Text, i: int) -> bool:
    """The NCCL WARN on line ``i`` was followed by the same thread going on with its INFO lines (no
    return-code unwinding): an advisory the run recovered from, no failure. A WARN with nothing after
    it (NCCL_DEBUG=WARN, a paste of the WARN alone) is kept."""
    m = _NCCL_THREAD.search(t.line(i))
    if m is None:
        return False
    me = m.group(1) + " ["
    for j in range(i + 1, min(i + 1 + _NCCL_LOOKAHEAD, len(t.lines))):
        line = t.line(j)
        if me not in line or "NCCL INFO " not in line:
            continue
        return _NCCL_RETURN.search(line) is None
    return False


def _scan(data: bytes, sigs: list[Signature], budget: float | None,
          hubs_from: int | None = None) -> tuple[_Text, list[_Hit], list[str]]:
    """Every hit of ``sigs`` in ``data`` (unsorted), the text they index, and the user patterns' notes."""
    t = _Text(data, hubs_from)
    builtin = [s for s in sigs if s.source == "builtin"]
    # Needle phase first, so the groups to expand are collected in a single pass over the lines.
    wanted = [n for sig in builtin for needles in sig.needles for n in needles if n not in _LAZY_NEEDLES]
    t.prefetch(wanted)
    rep_hits: list[int] = []
    for n in wanted:
        rep_hits.extend(r for r, _ in t.needle_reps(n))
    t.prepare_groups(rep_hits)
    hits: list[_Hit] = []
    notes: list[str] = []
    for sig in sigs:
        if sig.source == "builtin":
            _scan_builtin(t, sig, hits)
        else:
            _scan_user(t, sig, hits, notes, _budget() if budget is None else budget)
    if any(h.name == "nccl.warn" for h in hits):
        hits = [h for h in hits if not (h.name == "nccl.warn" and _nccl_went_on(t, h.line))]
    return t, hits, notes


def _order(h: _Hit) -> tuple:
    # Highest rank wins; on a tie the earliest line wins (causes print before consequences);
    # user signatures win ties against built-ins because the user asked for them.
    return (-h.rank, h.sig.source == "builtin", h.line, h.col)


def _best(hits: list[_Hit], display: Callable[[_Hit], str], max_key_lines: int, notes: list[str]) -> Match | None:
    """The Match of a list of hits: the best one, the other names, the key lines."""
    if not hits:
        return None
    hits = sorted(hits, key=_order)
    best = hits[0]
    others: list[str] = []
    key: list[tuple[int, str]] = [(best.line + 1, display(best))]
    seen_lines = {best.line}
    for h in hits[1:]:
        if h.name != best.name and h.name not in others:
            others.append(h.name)
        if len(key) < max_key_lines and h.line not in seen_lines:
            seen_lines.add(h.line)
            key.append((h.line + 1, display(h)))
    # A resolver may name another entry ("Cuda failure 'out of memory'" is oom.runtime): its outcome.
    named = _BY_NAME.get(best.name) if best.sig.source == "builtin" else None
    outcome = (named.outcome if named else None) or best.sig.outcome
    return Match(name=best.name, signature=best.sig.name, rank=best.rank, line_no=best.line + 1,
                 line=key[0][1], outcome=outcome, groups=tuple(best.groups),
                 key_lines=key, others=others, warnings=notes)


def _classify(text: str | bytes, signatures: Iterable[Signature] | None, max_key_lines: int,
              warnings: list[str] | None, budget: float | None) -> Match | None:
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    if not data:
        return None
    t, hits, notes = _scan(data, list(BUILTIN if signatures is None else signatures), budget)
    if warnings is not None:
        warnings.extend(notes)
    return _best(hits, lambda h: t.display(h.line, h.col), max_key_lines, notes)


_HUB_OF = _assign_hubs(n for sig in BUILTIN for needles in sig.needles for n in needles)


def describe(name: str) -> Signature | None:
    """The catalog entry a reported name comes from ("gpu.error:cudaErrorX" -> gpu.error_name)."""
    if name in _BY_NAME:
        return _BY_NAME[name]
    for prefix, entry in (("py.traceback:", "py.traceback"), ("kernel.xid", "kernel.xid"),
                          ("rocm.", "rocm.wave_stop"), ("gpu.error:", "gpu.error_name"),
                          ("elastic.rank_killed:", "elastic.rank_killed"), ("gdb.signal:", "gdb.signal"),
                          ("cublas:", "blas.status"), ("hipblas", "blas.status"), ("rocblas:", "blas.status"),
                          ("cudnn:", "cudnn.status"), ("miopen:", "miopen.status"), ("gpu.exception", "cuda.exception")):
        if name.startswith(prefix):
            return _BY_NAME.get(entry)
    return None


# --- user signatures in .dbglog/config.toml ---------------------------------------------------

DEFAULT_USER_RANK = 75  # above OOM and collectives: a user signature names what they are hunting


def _validate(name: str, pattern: str, rank, where: str) -> Signature:
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.:\-]+", name or ""):
        raise DbglogError(f"{where}: signature name {name!r} must be letters, digits, '.', '_', ':' or '-'")
    if not isinstance(pattern, str) or not pattern:
        raise DbglogError(f"{where}: signature {name!r} needs a non-empty pattern string")
    try:
        re.compile(pattern)
    except (re.error, OverflowError, RecursionError) as e:  # a{4294967296}: OverflowError, not re.error
        raise DbglogError(f"{where}: signature {name!r} has an invalid regex ({e}); fix the pattern") from None
    if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank <= 100:
        raise DbglogError(f"{where}: signature {name!r} rank must be an integer 0-100, got {rank!r}")
    return Signature(name=name, patterns=(pattern,), rank=rank, source=where)


def load_user_signatures(path: str | Path) -> list[Signature]:
    """Read ``[[signature]]`` tables (name, pattern, optional rank/outcome) from a config.toml.

    A missing file means no user signatures. A malformed one is a DbglogError naming the file.
    """
    path = Path(path)
    out = []
    for entry in config.tables(config.load(path), "signature", path):
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
    if any(b.name == name for b in BUILTIN):  # (it would label unrelated lines as that failure, and key them so)
        raise DbglogError(f"{name!r} is a built-in signature; name yours otherwise (e.g. 'local.{name}')")
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    block = f"[[signature]]\nname = {_toml_str(name)}\npattern = {_toml_str(pattern)}\nrank = {rank}\n"
    sep = "" if not old else ("\n" if old.endswith("\n") else "\n\n")
    new = old + sep + block
    try:
        config.parse(new)  # never leave an unparsable config behind
    except ValueError as e:
        raise config.unreadable(path, e) from None
    from dbglog.util.fsutil import atomic_write  # (a full disk leaves no config.toml.tmp behind)

    atomic_write(path, new.encode("utf-8"))
    return sig


def all_signatures(config_path: str | Path | None = None) -> list[Signature]:
    """Built-ins plus the user's signatures from ``config_path`` (if given and present)."""
    sigs = list(BUILTIN)
    if config_path is not None:
        sigs.extend(load_user_signatures(config_path))
    return sigs


# --- kernel-API logs: dbglog/diagnose/kernel_api.py (re-exported: runner and ops call them from here)

from dbglog.diagnose.kernel_api import ApiBoundary, parse_kernel_api_log  # noqa: E402,F401


# --- what the user names as "the" failure (--expect, --match) ---------------------------------

_REPORTED_PREFIXES = ("py.traceback:", "gpu.error:", "elastic.rank_killed:", "gdb.signal:", "cublas:", "hipblas",
                      "rocblas:", "cudnn:", "miopen:", "gpu.exception", "kernel.xid", "rocm.")
_REGEX_CHARS = recache.compile(r"[\\^$|()+{}]")


def _near_miss(value: str, names: list[str], outcomes: list[str]) -> tuple[str | None, dict[str, str]]:
    """The outcome or name ``value`` nearly spells, and the names by their words (a word of a name,
    e.g. "segfault", suggests kernel.segfault)."""
    import difflib

    by_word: dict[str, str] = {}
    for n in names:
        for w in re.split(r"[.:_]", n):
            if len(w) >= 4:
                by_word.setdefault(w, n)
    for cands, cutoff in ((outcomes, 0.7), (names + list(by_word), 0.75)):
        got = difflib.get_close_matches(value, cands, n=1, cutoff=cutoff) \
            or difflib.get_close_matches(value.lower(), cands, n=1, cutoff=cutoff)
        if got:
            return got[0], by_word
    return None, by_word


def check_target(value: str | None, sigs: Iterable[Signature], outcomes: Iterable[str], *,
                 option: str = "--expect", regex: bool = False) -> None:
    """Refuse a failure name that can never match (``--expect segfualt`` would turn every bad run
    into "a different failure", i.e. a skip). Valid: a run outcome, a signature name as runs report
    it (``kernel.segfault``, ``py.traceback:KeyError``, ``cublas:...``), a glob matching one
    (``py.traceback:*``, ``gpu.*``), and with ``regex`` any regex over the output, except a plain
    word that is a near miss of an outcome or signature name (then it is a typo, not a search)."""
    if value is None:
        return
    import fnmatch

    outcomes = list(outcomes)
    names = sorted({s.name for s in sigs})
    if not value.strip():
        raise DbglogError(f"{option} is empty: name a signature (dbglog signature list), a glob or an outcome")
    if value in outcomes or value in names or describe(value) is not None:
        return
    samples = names + [p + "x" for p in _REPORTED_PREFIXES]
    globbed = any(c in value for c in "*?[")
    if globbed:
        head, colon, _ = value.partition(":")
        pat = head + ":*" if colon else value
        if any(fnmatch.fnmatchcase(s, pat) or fnmatch.fnmatchcase(s, value) for s in samples):
            return
    plain = _REGEX_CHARS.search(value) is None
    if regex:
        try:
            re.compile(value)
        except (re.error, OverflowError, RecursionError) as e:
            raise DbglogError(f"{option} {value!r}: not a signature, glob, outcome or valid regex ({e})") from None
        if not plain or globbed:
            return
    close, by_word = _near_miss(value, names, outcomes)
    if regex and (close is None or close.lower() == value.lower()):
        return  # a word, not a near miss of a name ("OOM", "segfault"): text to find in the output
    # an outcome is its own name, even when it is also a word of a signature's (hang, nccl.collective_hang)
    hint = (close if close in outcomes else by_word.get(close, close)) if close else None
    if regex:
        raise DbglogError(f"{option} {value!r} looks like a misspelled signature or outcome (did you mean {hint}?); "
                          f"to search the output for this text, write it as a regex, e.g. '{value}\\b'")
    raise DbglogError(f"{option} {value!r} is not a signature, glob or outcome that a run can report"
                      + (f" (did you mean {hint}?)" if hint else "")
                      + "; see dbglog signature list (outcomes: " + ", ".join(outcomes) + ")")
