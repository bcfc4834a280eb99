"""Benchmark: `dbglog attempt add` end to end as the investigation grows, and start-up time.

Run: python bench/record_bench.py   (prints a table; not part of the test suite)
Targets (issue 2): attempt add on 1,000 attempts < 150 ms median, near-flat from 10 to 1,000.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ENV = dict(os.environ, PYTHONPATH=str(REPO), DBGLOG_NO_EDITOR="1")
# Measure what an installed dbglog costs: pip writes bytecode at install time, so let Python write
# and reuse .pyc files here too (some CI/sandbox images set PYTHONDONTWRITEBYTECODE=1, which makes
# every start re-compile every module: ~40 ms that users never pay).
ENV.pop("PYTHONDONTWRITEBYTECODE", None)
# What the installed `dbglog` console script runs (python -m would add runpy's ~7 ms).
DBGLOG = [sys.executable, "-c", "import sys; sys.argv[0] = 'dbglog'; from dbglog.cli import main; main()"]


def timed(cmd, cwd, n=15) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       stdin=subprocess.DEVNULL, check=True)
        out.append((time.perf_counter() - t) * 1000)
    return out


def fill(ws: Path, inv_id: str, upto: int) -> None:
    sys.path.insert(0, str(REPO))
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace

    recs = Records(Workspace(ws / ".dbglog"))
    have = recs.store.next_attempt_number(inv_id) - 1
    # Bulk-insert directly, then render once: the benchmark measures the next add, not the fill.
    from dbglog.core.model import Attempt, now_iso

    with recs.store.write():
        for n in range(have + 1, upto + 1):
            recs.store.upsert_attempt(inv_id, Attempt(
                number=n, title=f"attempt {n}", hypothesis="mbarrier phase not restored by kernel replay",
                did=f"ncu --replay-mode kernel --section S{n} ./app", result="Still hangs at 0%",
                conclusion="not this section", outcome="failed", created=now_iso()))
        recs.store.touch(inv_id, now_iso())
        recs.publish(inv_id)
    recs.close()


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as d:
        ws = Path(d)
        r = subprocess.run(DBGLOG + ["new", "bench", "--no-env", "--json"], cwd=ws, env=ENV,
                           capture_output=True, text=True, check=True)
        inv_id = json.loads(r.stdout)["id"]
        timed(DBGLOG + ["list"], ws, n=2)  # warm-up: writes the .pyc files
        for size in (10, 100, 1000):
            fill(ws, inv_id, size)
            ms = timed(DBGLOG + ["attempt", "add", "bench add", "--did", "x", "--result", "y"], ws, n=21)
            rows.append((f"attempt add @ {size} attempts", statistics.median(ms), max(ms)))
        rows.append(("dbglog list", statistics.median(ms := timed(DBGLOG + ["list"], ws)), max(ms)))
        rows.append(("dbglog --help", statistics.median(ms := timed(DBGLOG + ["--help"], ws)), max(ms)))
        rows.append(("python -c pass (peer: bare interpreter)",
                     statistics.median(ms := timed([sys.executable, "-c", "pass"], ws)), max(ms)))
    print(f"{'operation':<44} {'median ms':>10} {'max ms':>8}")
    for name, med, mx in rows:
        print(f"{name:<44} {med:>10.1f} {mx:>8.1f}")


if __name__ == "__main__":
    main()
