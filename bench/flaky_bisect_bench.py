"""Flaky history bisection: dbglog's probabilistic search against plain git-bisect logic.

    python bench/flaky_bisect_bench.py [--draws 200] [--sizes 128,1024] [--confidence 0.95] [--json]

A seeded oracle per draw: the culprit is drawn uniformly among the candidates (the bad end is the
last one); a run at a commit at/after the culprit fails with P(fail | bad), before it with
P(fail | good). Cells: repro rates 1.0 / 0.8 / 0.5 / 0.3 / 0.1 (P(fail | good) = 0) and the noise
model 0.8 / 0.2, for each history size.

Columns: ``right`` = the answer is the culprit; ``conf. wrong`` = a wrong commit given with
probability >= the confidence; runs = every repro run, the endpoint calibration included (the bad
end is run until it fails and 3 times in all, the good end once). ``git`` = plain git-bisect logic
on the same draws (same culprit, same random stream after it): one run per step, the verdict
trusted, no endpoint checks (git's own count). The engine is pure Python; the 1,024 rows take
minutes (``--sizes 128`` for a quick look).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dbglog.bisect.bayes import FlakyHistory  # noqa: E402

CELLS = [(1.0, 0.0), (0.8, 0.0), (0.5, 0.0), (0.3, 0.0), (0.1, 0.0), (0.8, 0.2)]


def draw(n: int, a: float, b: float, seed: int, confidence: float) -> dict:
    rng = random.Random(seed)
    culprit = rng.randrange(n)
    state = rng.getstate()
    fh = FlakyHistory(n, confidence=confidence)
    while not fh.done and fh.runs < 20000:
        for pos in fh.next_runs():
            f = rng.random() < (a if pos >= culprit else b)
            fh.record(pos, int(f), int(not f))
    (top, p), = fh.result(k=1).top
    rng.setstate(state)
    lo, hi, git_runs = -1, n - 1, 0
    while hi - lo > 1:  # git bisect on a line: halve, trust the one run
        mid = (lo + hi + 1) // 2
        git_runs += 1
        if rng.random() < (a if mid >= culprit else b):
            hi = mid
        else:
            lo = mid
    return {"right": top == culprit and fh.status == "confident", "wrong_confident": top != culprit and p >= confidence,
            "runs": fh.runs, "status": fh.status, "git_right": hi == culprit, "git_runs": git_runs}


def cell(n: int, a: float, b: float, draws: int, confidence: float) -> dict:
    t0 = time.perf_counter()
    rows = [draw(n, a, b, 1_000_003 * n + s, confidence) for s in range(draws)]
    runs = sorted(r["runs"] for r in rows)
    return {"commits": n, "p_fail_bad": a, "p_fail_good": b, "draws": draws,
            "right": sum(r["right"] for r in rows) / draws,
            "confidently_wrong": sum(r["wrong_confident"] for r in rows) / draws,
            "mean_runs": round(statistics.mean(runs), 1), "p95_runs": runs[max(0, int(0.95 * draws) - 1)],
            "not_concluded": sum(r["status"] != "confident" for r in rows),
            "git_right": sum(r["git_right"] for r in rows) / draws,
            "git_runs": round(statistics.mean(r["git_runs"] for r in rows), 1),
            "seconds": round(time.perf_counter() - t0, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--sizes", default="128,1024")
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--cells", help="P(fail|bad):P(fail|good) pairs, comma-separated (default: all six)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = []
    if not args.json:
        print(f"{'commits':>7} {'P(f|bad)/P(f|good)':>18} | {'right':>6} {'conf.wrong':>10} {'mean':>6} {'p95':>5} "
              f"| {'git right':>9} {'git runs':>8} | {'s':>5}")
    for n in (int(x) for x in args.sizes.split(",")):
        cells = [tuple(map(float, c.split(":"))) for c in args.cells.split(",")] if args.cells else CELLS
        for a, b in cells:
            r = cell(n, a, b, args.draws, args.confidence)
            out.append(r)
            if not args.json:
                print(f"{n:>7} {f'{a:g}/{b:g}':>18} | {r['right']:>6.1%} {r['confidently_wrong']:>10.1%} "
                      f"{r['mean_runs']:>6} {r['p95_runs']:>5} | {r['git_right']:>9.1%} {r['git_runs']:>8} "
                      f"| {r['seconds']:>5}", flush=True)
    if args.json:
        print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
