"""Pre-flight for every supervised run, and the GPU hygiene between runs.

* Core size limit 0 for the repro unless asked (``--core-dumps``): a ROCm GPU core dump is 30–50 GB
  per rank and a crashing bisection step would fill the disk. The limit is set on dbglog's own
  process around the spawn (inherited by the child) instead of in a ``preexec_fn``, which is unsafe
  with threads (the pump, parallel bisection jobs).
* GPU processes already holding memory (``nvidia-smi --query-compute-apps``, ``rocm-smi --showpids``)
  are reported as ``infra_tainted`` evidence: the next launch may OOM at the NCCL barrier, and a
  failure then says more about the machine than about the code.
* After a server-shaped repro, wait until the GPU tools no longer list our processes (reference
  §5.4: do not start the next step while VRAM is still held).

Every tool call goes through ``envinfo.probe`` (own session, time limit, killed as a group), so a
tool stuck in state D after an Xid costs a bounded wait, never the run.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import threading
import time

_LIMIT_LOCK = threading.Lock()
_NV_QUERY = ["nvidia-smi", "--query-compute-apps=pid,process_name,used_memory", "--format=csv,noheader"]
_ROCM_QUERY = ["rocm-smi", "--showpids"]
# rocm-smi --showpids rows: PID, PROCESS NAME, GPU(s), VRAM USED, SDMA USED, CU OCCUPANCY (tab separated)
_ROCM_ROW = re.compile(r"^\s*(\d+)\s+(\S+)\s+(\S+)\s+(\d+)\b")


@contextlib.contextmanager
def core_limit(core_dumps: bool):
    """Soft RLIMIT_CORE 0 while the child is spawned (it inherits it), unless ``core_dumps``."""
    try:
        import resource
    except ImportError:  # not POSIX
        yield None
        return
    if core_dumps:
        yield resource.getrlimit(resource.RLIMIT_CORE)[0]
        return
    with _LIMIT_LOCK:
        old = resource.getrlimit(resource.RLIMIT_CORE)
        try:
            resource.setrlimit(resource.RLIMIT_CORE, (0, old[1]))
        except (ValueError, OSError):
            old = None
        try:
            yield 0
        finally:
            if old is not None:
                try:
                    resource.setrlimit(resource.RLIMIT_CORE, old)
                except (ValueError, OSError):
                    pass


def gpu_tools() -> list[str]:
    return [t for t in ("nvidia-smi", "rocm-smi") if shutil.which(t)]


def parse_nvidia_apps(text: str) -> list[dict]:
    """``12345, python3, 20480 MiB`` rows (``[N/A]`` memory on some drivers)."""
    out = []
    for line in (text or "").splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 3 and parts[0].isdigit():
            out.append({"pid": int(parts[0]), "name": parts[1], "memory": parts[2], "tool": "nvidia-smi"})
    return out


def parse_rocm_pids(text: str) -> list[dict]:
    """The KFD process table of ``rocm-smi --showpids`` (``No KFD PIDs currently running``: none)."""
    out = []
    for line in (text or "").splitlines():
        m = _ROCM_ROW.match(line)
        if m:
            out.append({"pid": int(m.group(1)), "name": m.group(2), "gpus": m.group(3),
                        "memory": f"{int(m.group(4))} B", "tool": "rocm-smi"})
    return out


def gpu_processes(timeout: float = 5.0) -> tuple[list[str], list[dict], list[str]]:
    """(tools found, processes holding GPU memory, errors). No tool: ([], [], [])."""
    from dbglog.run import envinfo  # only with a GPU tool present: a run on a machine without one skips the import

    tools, procs, errors = gpu_tools(), [], []
    for tool in tools:
        cmd, parse = (_NV_QUERY, parse_nvidia_apps) if tool == "nvidia-smi" else (_ROCM_QUERY, parse_rocm_pids)
        rc, out, err = envinfo.probe(cmd, timeout)
        if rc == 0:
            procs.extend(parse(out))
        else:
            errors.append((err or out).strip().splitlines()[-1][:200] if (err or out).strip()
                          else f"{tool} exited {rc}")
    return tools, procs, errors


def taint_evidence(procs: list[dict]) -> dict:
    """Stale GPU processes as evidence: the run's result may reflect the machine, not the code."""
    listed = ", ".join(f"{p['pid']} {p['name']} ({p['memory']})" for p in procs[:6])
    more = f" and {len(procs) - 6} more" if len(procs) > 6 else ""
    summary = (f"infra_tainted: {len(procs)} process(es) already held GPU memory before the run: {listed}{more}")
    return {"kind": "infra_tainted", "summary": summary, "findings": [], "processes": procs[:50]}


def check(timeout: float = 5.0) -> dict:
    """What every supervised run records before it starts: GPU tools and stale GPU processes."""
    tools, procs, errors = gpu_processes(timeout) if gpu_tools() else ([], [], [])
    out: dict = {"gpu_tools": tools, "gpu_processes": procs}
    if errors:
        out["errors"] = errors
    return out


def wait_gpu_released(pids, timeout: float = 30.0, interval: float = 0.5) -> dict:
    """Poll the GPU tools until none of ``pids`` is listed (or ``timeout``). No tool: nothing to wait
    for. Returns {"waited_s", "released", "still": [...]}."""
    pids = set(pids)
    if not gpu_tools() or not pids:
        return {"waited_s": 0.0, "released": True, "still": [], "checked": False}
    t0 = time.monotonic()
    while True:
        _, procs, _ = gpu_processes(min(5.0, timeout))
        still = [p for p in procs if p["pid"] in pids]
        if not still or time.monotonic() - t0 >= timeout:
            return {"waited_s": round(time.monotonic() - t0, 3), "released": not still, "still": still,
                    "checked": True}
        time.sleep(interval)
