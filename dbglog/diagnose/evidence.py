"""Evidence: structured facts read out of what GPU debuggers and logs print -- the registry.

A signature names the failure; evidence says where it happened. The readers are pure functions from
text to plain dicts (JSON-ready), one module per dump kind, tested against the formats the tools
document:

* ``debug_agent`` -- rocm-debug-agent wave dumps (stop reasons, faulting instruction, code object,
  framework op, faulting lanes' registers, the race-victim caution); ``amdpc`` -- the PC's source line
  through llvm-objdump of the saved code object;
* ``rocgdb`` -- dispatches, queues, waves and their source lines; rows in a layout not read are said;
  where a C++ exception was thrown (``catch throw`` then ``bt``);
* ``docker`` -- a container's ``docker inspect`` record (how it ended, /dev/shm, GPUs passed in);
* ``cuda`` -- CUDA core dumps (progress lines, the cudacore -> nvdisasm chain, a hang dump's kernel
  and line) and cuda-gdb (exceptions, stops, warps, kernels);
* ``sanitizer`` -- compute-sanitizer / cuda-memcheck reports;
* ``threads`` -- py-spy, gdb and faulthandler thread dumps and the hang verdict;
* ``smi`` (nvidia-smi -q, rocm-smi), ``gpustate`` (use and VRAM at failure), ``kernlog`` (Xid, amdgpu);
* ``hiplog`` (AMD_LOG_LEVEL), ``memory`` (memory_summary), ``nccl`` (collective mismatches, the
  watchdog's counters, NCCL_DEBUG=INFO rings), ``fr_trace`` (the flight recorder's report);
* ``kernel_api`` -- SGLang / FlashInfer kernel-API logs (re-exported by ``signatures``).

Their names are re-exported here for the callers of ``dbglog.diagnose.evidence``. Every kind is
registered once in ``PARSERS`` (kind, the literal markers may_hold_dump looks for, the parser);
extract() runs them in that order.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Callable, Iterable, Sequence

from dbglog.util import config
from dbglog.util.errors import DbglogError


# The readers live one module per dump kind; their names are re-exported here, where the registry
# below (PARSERS) and the callers of dbglog.diagnose.evidence find them.
from dbglog.diagnose.kernels import (  # noqa: F401
    demangle, short_kernel,
)
from dbglog.diagnose.debug_agent import (  # noqa: F401
    KERNEL_OPS, STOP_REASONS, faulting_lanes, find_saved_code_object, kernel_op, parse_debug_agent,
    saved_code_object_name,
)
from dbglog.diagnose.docker import parse_docker_inspect  # noqa: F401
from dbglog.diagnose.rocgdb import (  # noqa: F401
    parse_catch_throw,
    parse_rocgdb,
)
from dbglog.diagnose.cuda import (  # noqa: F401
    CUDA_EXCEPTION_MEANINGS, cuda_core_chain, format_chain, nccl_kernel_info, parse_cuda_coredump_progress,
    parse_cuda_gdb, parse_cuda_gdb_kernels, parse_cuobjdump_fun, parse_nvdisasm_chain,
)
from dbglog.diagnose.smi import (  # noqa: F401
    parse_nvidia_smi_q, parse_rocm_smi,
)
from dbglog.diagnose.kernlog import (  # noqa: F401
    parse_kernel_log,
)
from dbglog.diagnose.hiplog import (  # noqa: F401
    parse_amd_log,
)
from dbglog.diagnose.fr_trace import (  # noqa: F401
    fr_trace_evidence, fr_trace_verdict, parse_fr_trace,
)
from dbglog.diagnose.sanitizer import (  # noqa: F401
    _cs_host_short, parse_compute_sanitizer,
)
from dbglog.diagnose.memory import (  # noqa: F401
    _ms_bytes, parse_memory_summary,
)
from dbglog.diagnose.nccl import (  # noqa: F401
    _CM_HEAD, parse_collective_mismatch, parse_nccl_topology, parse_nccl_watchdog,
)
from dbglog.diagnose.threads import (  # noqa: F401
    MAX_FRAMES, Frame, Thread, parse_thread_stacks, split_threads,
)
from dbglog.diagnose.amdpc import (  # noqa: F401
    amd_pc_line,
)
from dbglog.diagnose.gpustate import (  # noqa: F401
    parse_gpu_query,
)

# --- user tables in .dbglog/config.toml -------------------------------------------------------

def load_kernel_ops(config_path: str | Path | None) -> list[tuple[str, str]]:
    """``[[kernel_op]]`` tables (fragment, op) from config.toml; bad entries are skipped."""
    if not config_path:
        return []
    try:
        data = config.load(config_path, needle=b"kernel_op")
    except DbglogError:  # reading a dump never fails over a setting
        return []
    out = []
    for e in data.get("kernel_op", []) if isinstance(data.get("kernel_op"), list) else []:
        if isinstance(e, dict) and isinstance(e.get("fragment"), str) and isinstance(e.get("op"), str) and e["fragment"]:
            out.append((e["fragment"], e["op"]))
    return out



# --- everything a run left behind -------------------------------------------------------------

# Every kind of evidence, in the order extract() tries them (most specific first): the kind, the
# literal markers may_hold_dump() looks for, and its parser. A new kind is registered here, once.
PARSERS: tuple[tuple[str, tuple[str, ...], Callable[..., dict | None]], ...] = (
    ("rocm-debug-agent", ("wave_", "XNACK error state", "Memory access fault at GPU Node"), parse_debug_agent),
    ("rocgdb", ("AMDGPU ", "No dispatches"), parse_rocgdb),
    ("cpp-throw", ("(exception thrown)",), parse_catch_throw),
    ("cuda-gdb", ("CUDA Exception", "CUDA_EXCEPTION_", "cudacore", " in section .text.",
                  "Switching focus to CUDA kernel"), parse_cuda_gdb),
    ("cuda-gdb-kernels", ("SMs Mask",), parse_cuda_gdb_kernels),
    ("cuda-coredump", ("coredump:",), parse_cuda_coredump_progress),
    ("compute-sanitizer", ("========= ",), parse_compute_sanitizer),
    # thread stacks: py-spy dump, gdb thread apply all bt, faulthandler
    ("thread-stacks", ('(idle): "', '(active): "', '(active+gil): "', " (LWP ", " (most recent call first):\n", "\n#0 "),
     parse_thread_stacks),
    ("nvidia-smi", ("NVSMI LOG",), parse_nvidia_smi_q),
    ("kernel-log", ("NVRM: Xid", "page fault (src_id", "timeout, signaled seq=", "MES failed to respond",
                    "GPU reset begin"), parse_kernel_log),
    ("amd-log", (" us: ",), parse_amd_log),
    ("collective-mismatch", (_CM_HEAD,), parse_collective_mismatch),
    ("nccl-watchdog", ("failure detected by watchdog", "Timeout at NCCL work",
                       "Watchdog caught collective operation timeout"), parse_nccl_watchdog),
    ("memory-summary", ("memory summary, device ID", "| Allocated memory "), parse_memory_summary),
    ("nccl-topology", (" NCCL INFO ",), parse_nccl_topology),
    ("rocm-smi", ("ROCm System Management Interface",), parse_rocm_smi),
    ("gpu-state", ("utilization.gpu [%]",), parse_gpu_query),
    ("docker", ('"OOMKilled":',), parse_docker_inspect),
    # read in a run's output only: in a capture file it is the nccl-fr preset's, which records its verdict itself
    ("nccl-flight-recorder", ("Not all ranks joining collective", " at entry "), parse_fr_trace),
)
KINDS = tuple(k for k, _, _ in PARSERS)
_DUMP_MARKERS = tuple(dict.fromkeys(m for _, markers, _ in PARSERS for m in markers))


def may_hold_dump(data: str | bytes) -> bool:
    """Cheap test (a few substring scans, no decoding) for text any parser here could use."""
    if isinstance(data, (bytes, bytearray)):
        return any(m.encode() in data for m in _DUMP_MARKERS)
    return any(m in data for m in _DUMP_MARKERS)


# A hang capture's file names the process it was taken of: hang/py-spy.1234.txt, faulthandler.1234.txt
_CAPTURE_PID = re.compile(r"(?:^|[/\\])[\w-]+\.(\d+)\.txt$")


def _parse_one(kind: str, fn: Callable, text: str, src: str, save_dirs, ops, roots) -> dict | None:
    try:
        if kind == "rocm-debug-agent":
            return fn(text, save_dirs=save_dirs, ops=ops)
        return fn(text, roots=roots) if kind == "thread-stacks" else fn(text)
    except Exception as exc:  # a parser must never cost the run its record
        return {"kind": "error", "summary": f"evidence parser failed on {src}: {exc!r}"}


def extract(output: str | bytes, *, files: Iterable[str | Path] = (), save_dirs: Iterable[str | Path] = (),
            config_path: str | Path | None = None, run_tools: bool = True, tool_timeout: float = 120.0,
            path: str | None = None, cwd: str | None = None, roots: Sequence[str] = ()) -> list[dict]:
    """All evidence in a run's output and in the capture files it produced, most specific first.
    ``roots``: where relative source paths in thread dumps are read (the run's working directory).
    Evidence from one process's capture file carries its ``pid`` and says it first in its summary."""
    if not may_hold_dump(output):
        output = ""  # nothing to read: do not decode megabytes of ordinary output
    if isinstance(output, (bytes, bytearray)):
        output = bytes(output).decode("utf-8", "replace")
    ops = load_kernel_ops(config_path)
    texts = [("output", output)] if output else []
    for f in files:
        try:
            texts.append((str(f), Path(f).read_text(encoding="utf-8", errors="replace")))
        except OSError:
            continue
    found: list[dict] = []
    cores: list[str] = []
    for src, text in texts:
        pid = _CAPTURE_PID.search(src) if src != "output" else None
        for kind, _, fn in PARSERS:
            if kind == "nccl-flight-recorder" and src != "output":
                continue
            e = _parse_one(kind, fn, text, src, save_dirs, ops, tuple(roots))
            if e:
                # "source" is the parser's file:line where it has one (cuda-gdb, compute-sanitizer), else
                # the origin, as before; "origin" is always the output or capture file the text came from
                e["origin"] = src
                e.setdefault("source", src)
                if pid and "pid" not in e:
                    e["pid"] = int(pid.group(1))
                    if e.get("summary"):
                        e["summary"] = f"pid {e['pid']}: {e['summary']}"
                found.append(e)
                if e["kind"] == "cuda-coredump":
                    cores.extend(e.get("files") or [])
    found.extend(_tool_steps(found, cores, run_tools, tool_timeout, path, cwd))
    return found


def _tool_steps(found: list[dict], cores: list[str], run_tools: bool, timeout: float, path: str | None,
                cwd: str | None) -> list[dict]:
    """The steps that run a read-only tool on what the dumps named: llvm-objdump of a saved AMD code
    object at the PC, the cuda-gdb / nvdisasm chain of a CUDA core dump."""
    out = []
    if run_tools:
        out.extend(amd_pc_line(e["code_object_file"], e["pc"], e.get("loaded_at"), timeout=timeout, path=path)
                   for e in found if e["kind"] == "rocm-debug-agent" and e.get("code_object_file") and e.get("pc"))
    for core in dict.fromkeys(cores):
        if not os.path.exists(core):
            out.append({"kind": "cuda-core-chain", "core": core, "status": "no-core",
                        "summary": f"core dump {core} was announced but is not on disk"})
        elif run_tools:
            out.append(cuda_core_chain(core, timeout=timeout, path=path, cwd=cwd))
    return out


def summary_lines(evidence: Iterable[dict], limit: int = 6) -> list[str]:
    out = []
    for e in evidence:
        s = e.get("summary")
        if s and s not in out:
            out.append(s)
        for f in (e.get("findings") or [])[1:3]:
            out.append(f"  {f}")
    return out[:limit]


def kernel_api_evidence(boundary: dict) -> dict:
    """A kernel-API boundary (signatures.parse_kernel_api_log) as evidence with a one-line summary."""
    b = dict(boundary)
    if b.get("status") == "unread":
        b.update(kind="kernel-api", summary=f"kernel-API log: {b.get('note')}")
        return b
    status = {"in_flight": "in flight (started, never returned)", "completed": "completed",
              "exception": "raised", "started": "started (level 1 logs show no returns)"}.get(b.get("status"), b.get("status"))
    s = f"last {b.get('framework')} API call: {b.get('name')} {status}"
    if b.get("exception"):
        s += f": {b['exception'][:160]}"
    ins = [f"{i['arg']} {i.get('shape') or ''} {i.get('dtype') or ''}".strip() for i in b.get("inputs") or []]
    if ins:
        s += "; inputs " + ", ".join(ins[:4]) + (" …" if len(ins) > 4 else "")
    if b.get("dump_dir"):
        s += f"; inputs dumped to {b['dump_dir']}"
    if b.get("note"):
        s += f" ({b['note']})"
    b.update(kind="kernel-api", summary=s)
    return b


def config_near(path: str | Path) -> Path | None:
    """The .dbglog/config.toml of the workspace a run directory lives in (None outside one)."""
    p = Path(path).resolve()
    for d in (p, *p.parents):
        if d.name == ".dbglog":
            cfg = d / "config.toml"
            return cfg if cfg.exists() else None
    return None


def code_object_dirs(env: dict, cwd: str | Path) -> list[str]:
    """Where rocm-debug-agent --save-code-objects[=DIR] writes: DIR, else the process's cwd."""
    out = []
    opts = env.get("ROCM_DEBUG_AGENT_OPTIONS") or ""
    m = re.search(r"(?:--save-code-objects|(?<!\S)-s)(?:=|\s+)(?!-)(\S+)", opts)
    if m:
        d = Path(m.group(1))
        out.append(str(d if d.is_absolute() else Path(cwd) / d))
    out.append(str(cwd))
    return out
