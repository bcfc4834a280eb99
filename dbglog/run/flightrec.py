"""The ``nccl-fr`` capture: PyTorch's NCCL flight recorder, armed at launch, read after a hang.

The recorder only helps when its variables are set before the processes start (two of them are off
by default), so the preset is an environment plus a collection step:

* ``TORCH_NCCL_TRACE_BUFFER_SIZE`` > 0 (newer releases read ``TORCH_FR_BUFFER_SIZE``),
* ``TORCH_NCCL_DUMP_ON_TIMEOUT=1``: a rank whose collective times out writes its buffer,
* ``TORCH_NCCL_DEBUG_INFO_TEMP_FILE=<run dir>/nccl_trace_rank_`` (newer: ``TORCH_FR_DUMP_TEMP_FILE``):
  one pickle per rank, ``<prefix><rank>``,
* ``TORCH_NCCL_DEBUG_INFO_PIPE_FILE=<run dir>/nccl_trace_pipe_``: on a hang dbglog writes to each
  rank's ``<prefix><rank>.pipe`` to ask for a dump without waiting for the watchdog (non-destructive).

Afterwards ``python -m torch.distributed.flight_recorder.fr_trace <dir> --prefix nccl_trace_rank_``
(when torch is importable) names the collective that not all ranks joined and the missing ranks; its
report is kept in the run folder and the verdict is read from it (``parse_verdict``).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

PRESET = "nccl-fr"
DUMP_PREFIX = "nccl_trace_rank_"
PIPE_PREFIX = "nccl_trace_pipe_"
BUFFER_ENTRIES = "2000"


def env(run_dir: Path) -> dict[str, str]:
    """The variables that arm the recorder (old and new names: PyTorch renamed them in 2.7)."""
    dump = str(Path(run_dir) / DUMP_PREFIX)
    return {
        "TORCH_NCCL_TRACE_BUFFER_SIZE": BUFFER_ENTRIES, "TORCH_FR_BUFFER_SIZE": BUFFER_ENTRIES,
        "TORCH_NCCL_DUMP_ON_TIMEOUT": "1",
        "TORCH_NCCL_DEBUG_INFO_TEMP_FILE": dump, "TORCH_FR_DUMP_TEMP_FILE": dump,
        "TORCH_NCCL_DEBUG_INFO_PIPE_FILE": str(Path(run_dir) / PIPE_PREFIX),
    }


def request_dumps(run_dir: Path, wait: float = 5.0) -> int:
    """Ask every rank that opened its dump pipe for a dump (a hang: the watchdog may never fire).
    Returns how many pipes were written to; waits up to ``wait`` s for the dumps to appear."""
    pipes = sorted(Path(run_dir).glob(PIPE_PREFIX + "*.pipe"))
    asked = 0
    for p in pipes:
        try:
            fd = os.open(p, os.O_WRONLY | os.O_NONBLOCK)  # no reader: ENXIO, skip it
        except OSError:
            continue
        try:
            os.write(fd, b"1")
            asked += 1
        except OSError:
            pass
        finally:
            os.close(fd)
    deadline = time.monotonic() + wait
    while asked and len(dumps(run_dir)) < asked and time.monotonic() < deadline:
        time.sleep(0.05)
    return asked


def dumps(run_dir: Path) -> list[Path]:
    return sorted(p for p in Path(run_dir).glob(DUMP_PREFIX + "*") if not p.name.endswith(".pipe"))


def parse_verdict(text: str) -> dict | None:
    """The first mismatch in an fr_trace report: {"collective", "missing_ranks", "group", "seq"}
    (read by dbglog.run.evidence, which also reads reports pasted into ``signature test``)."""
    from dbglog.diagnose.evidence import fr_trace_verdict

    return fr_trace_verdict(text)


def torch_importable() -> bool:
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


def collect(run_dir: Path, limit: float = 60.0, python: str | None = None) -> tuple[list[dict], dict | None]:
    """After a hang or a timeout: list the per-rank dumps and run the analyzer on them.
    Returns (capture entries, verdict or None)."""
    run_dir = Path(run_dir)
    files = dumps(run_dir)
    out: list[dict] = []
    if not files:
        out.append({"name": PRESET, "status": "skipped", "path": None,
                    "note": "no flight-recorder dump was written (no NCCL process group, or no rank timed out)"})
        return out, None
    out.append({"name": PRESET, "status": "ok", "path": str(files[0]),
                "note": f"{len(files)} per-rank dump(s)", "dumps": [str(f) for f in files]})
    if python is None and not torch_importable():
        out.append({"name": f"{PRESET}:fr_trace", "status": "missing", "path": None,
                    "note": "torch is not importable here; analyse with: python -m "
                            f"torch.distributed.flight_recorder.fr_trace {run_dir} --prefix {DUMP_PREFIX}"})
        return out, None
    report = run_dir / "fr_trace.txt"
    argv = [python or sys.executable, "-m", "torch.distributed.flight_recorder.fr_trace", str(run_dir),
            "--prefix", DUMP_PREFIX]
    try:
        with open(report, "wb") as f:
            p = subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=limit)
        status = "ok" if p.returncode == 0 else "failed"
        note = None if p.returncode == 0 else f"fr_trace exited {p.returncode}"
    except subprocess.TimeoutExpired:
        status, note = "timeout", f"fr_trace did not finish within {limit:g}s"
    except OSError as e:
        status, note = "failed", str(e)
    try:
        verdict = parse_verdict(report.read_text(errors="replace"))
    except OSError:
        verdict = None
    out.append({"name": f"{PRESET}:fr_trace", "status": status, "path": str(report), "note": note})
    return out, verdict


def evidence(verdict: dict) -> dict:
    """The verdict as an evidence record (the shape of dbglog/run/evidence.py's entries)."""
    from dbglog.diagnose.evidence import fr_trace_evidence

    return fr_trace_evidence(verdict)
