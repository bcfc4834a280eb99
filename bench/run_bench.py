"""Supervision overhead and tree-kill latency of dbglog.run.runner. Prints a table; not a test.

usage: PYTHONPATH=. python bench/run_bench.py [--n 30] [--tree 50]
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from dbglog.run import runner  # noqa: E402

TREE = r'''
import subprocess, sys, threading
n = int(sys.argv[1])
# root + groups of (sh + 7 sleeps) + single sleeps to reach exactly n processes
procs, count = [], 1
while count + 8 <= n:
    procs.append(subprocess.Popen(["sh", "-c", "for i in 1 2 3 4 5 6 7; do sleep 1000 & done; wait"]))
    count += 8
while count < n:
    procs.append(subprocess.Popen(["sleep", "1000"]))
    count += 1
print("tree ready", flush=True)
threading.Event().wait()
'''


def med(xs):
    return statistics.median(xs)


def overhead(cmd: list[str], n: int, tmp: Path) -> tuple[float, float]:
    bare, sup = [], []
    for i in range(n):  # interleave so machine noise hits both equally
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        bare.append(time.perf_counter() - t)
        t = time.perf_counter()
        runner.run(cmd, run_dir=tmp / f"{cmd[0].replace('/', '_')}-{i}", echo=False)
        sup.append(time.perf_counter() - t)
    return med(bare), med(sup)


def tree_kill(size: int, tmp: Path, timeout: float = 3.0) -> tuple[float, int, int]:
    import psutil

    r = runner.run([sys.executable, "-c", TREE, str(size)], run_dir=tmp / "tree", timeout=timeout, grace=2.0,
                   echo=False, git_info=False)
    snap = (tmp / "tree" / "hang" / "snapshot.json").read_text()
    import json

    pids = [p["pid"] for p in json.loads(snap)]
    alive = [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    return r.duration_s - timeout, len(pids), len(alive)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--tree", type=int, default=50)
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        runner.run(["true"], run_dir=tmp / "warm", echo=False)  # imports, page cache
        for label, cmd in (("true", ["true"]), ("python -c pass", [sys.executable, "-c", "pass"])):
            b, s = overhead(cmd, a.n, tmp)
            rows.append((label, f"{b * 1000:.1f} ms", f"{s * 1000:.1f} ms", f"{s / b:.2f}x", f"+{(s - b) * 1000:.1f} ms"))
        kill_s, procs, alive = tree_kill(a.tree, tmp)
    print(f"{'command':<16} {'bare median':>12} {'runner median':>14} {'ratio':>7} {'overhead':>10}")
    for r in rows:
        print(f"{r[0]:<16} {r[1]:>12} {r[2]:>14} {r[3]:>7} {r[4]:>10}")
    print()
    print(f"tree of {procs} processes: timeout -> all gone in {kill_s:.3f} s "
          f"(includes snapshot capture and SIGTERM; grace unused), survivors: {alive}")


if __name__ == "__main__":
    main()
