"""Runs needed by dbglog's history bisection (pure algorithm, fake oracle).

Cases: linear histories of 1,024 and 10,000 commits (good = first, bad = last,
culprit at several positions), a 21-commit untestable (skip) cluster centred on
the culprit in 1,024 commits, 500 histories with several short build-broken
ranges interleaved with buildable commits on both sides of the culprit (the
layouts of tests/test_bisect_history_skips.py), k-ary rounds for ``--jobs J``,
and random DAGs with merges.  Counts exclude the driver's 2 endpoint checks.

Peer: ``git bisect run`` with a skip script, simulated step for step
(tests/git_bisect_sim.py, checked against git 2.39.5 by the tests) on the same
layouts; bisect-anchors.md measured git at 28 runs for the 21-commit cluster.

Run:  PYTHONPATH=. python bench/history_algo_bench.py
"""

from __future__ import annotations

import hashlib
import math
import random
import statistics
import sys
import time
from pathlib import Path

from dbglog.bisect.algorithms import HistoryBisect, Verdict, bisect_history

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from git_bisect_sim import git_bisect_run  # noqa: E402
from test_bisect_history_skips import layout  # noqa: E402

G, B, S = Verdict.GOOD, Verdict.BAD, Verdict.SKIP


def linear(n: int) -> dict[str, tuple[str, ...]]:
    return {str(i): ((str(i - 1),) if i else ()) for i in range(n)}


def run_linear(n: int, culprit: int, skipped=frozenset(), jobs=1):
    parents = linear(n)

    def oracle(c):
        i = int(c)
        return S if i in skipped else (B if i >= culprit else G)

    s = HistoryBisect(parents, str(n - 1), ["0"])
    rounds = 0
    while not s.done:
        steps = s.next_steps(jobs)
        rounds += 1
        for c in steps:
            s.record(c, oracle(c))
    return s.result, rounds


def random_dag(n: int, rng: random.Random, merge_p=0.3):
    parents = {"0": ()}
    for i in range(1, n):
        ps = [str(rng.randint(max(0, i - 3), i - 1))]
        if i > 2 and rng.random() < merge_p:
            p2 = str(rng.randint(0, i - 1))
            if p2 not in ps:
                ps.append(p2)
        parents[str(i)] = tuple(ps)
    return parents


def ancestors(parents, c, memo):
    if c in memo:
        return memo[c]
    out, stack = set(), [c]
    while stack:
        x = stack.pop()
        if x not in out:
            out.add(x)
            stack.extend(parents[x])
    memo[c] = out
    return out


def main() -> int:
    t0 = time.perf_counter()
    rng = random.Random(7)
    print("history bisection (algorithm only; the driver adds 2 endpoint checks)\n")
    print(f"{'case':<46} {'runs mean/max':>14} {'bound':>8} {'result':>22}")
    for n in (1024, 10_000):
        culprits = [1, n // 3, n // 2, n - 1] + [rng.randint(1, n - 1) for _ in range(16)]
        runs = []
        for c in culprits:
            r, _ = run_linear(n, c)
            assert r.first_bad == str(c)
            runs.append(r.runs)
        bound = math.ceil(math.log2(n - 1))
        print(f"{f'linear {n}':<46} {f'{statistics.mean(runs):.1f}/{max(runs)}':>14} "
              f"{'<=' + str(bound):>8} {'found':>22}")

    def git(n, culprit, skipped, tag):
        names = [hashlib.sha1(f"{tag}:{i}".encode()).hexdigest() for i in range(n)]
        return len(git_bisect_run(names, lambda i: "skip" if i in skipped
                                  else ("bad" if i >= culprit else "good"))[0])

    runs, sizes, gits = [], [], []
    for c in (100, 333, 500, 512, 777, 900, 1000):
        sk = frozenset(range(c - 10, c + 11))
        r, _ = run_linear(1024, c, sk)
        assert r.status == "inconclusive" and not r.untested
        runs.append(r.runs)
        sizes.append(len(r.candidates))
        gits.append(git(1024, c, sk, c))
    print(f"{'linear 1024, 21 skipped around culprit':<46} {f'{statistics.mean(runs):.1f}/{max(runs)}':>14} "
          f"{f'git {statistics.mean(gits):.1f}':>8} {f'inconclusive, {min(sizes)}-{max(sizes)} cands':>22}")

    rows = []
    for seed in range(500):
        n, culprit, broken = layout(random.Random(seed))
        r, _ = run_linear(n, culprit, frozenset(broken))
        ident = culprit not in broken and culprit - 1 not in broken
        assert (r.status == "found" and r.first_bad == str(culprit)) == ident
        rows.append((ident, r.runs, git(n, culprit, broken, seed)))
    for ident in (True, False):
        mine = [o for i, o, _ in rows if i is ident]
        theirs = [g for i, _, g in rows if i is ident]
        le = sum(o <= g for i, o, g in rows if i is ident)
        name = f"interleaved broken ranges, {'identifiable' if ident else 'not identifiable'} ({len(mine)})"
        print(f"{name:<46} {f'{statistics.mean(mine):.2f}/{max(mine)}':>14} "
              f"{f'git {statistics.mean(theirs):.2f}':>8} "
              f"{(f'found, <= git in {le}' if ident else f'exact set, <= git in {le}'):>22}")

    for j in (2, 4, 8):
        rounds_l, runs_l = [], []
        for c in (1, 341, 700, 1023):
            r, rounds = run_linear(1024, c, jobs=j)
            assert r.first_bad == str(c)
            rounds_l.append(rounds)
            runs_l.append(r.runs)
        bound = math.ceil(math.log(1023) / math.log(j + 1))
        print(f"{f'linear 1024, --jobs {j}: rounds':<46} "
              f"{f'{statistics.mean(rounds_l):.1f}/{max(rounds_l)}':>14} "
              f"{'~' + str(bound):>8} {f'{max(runs_l)} runs max':>22}")

    for n in (200, 2000):
        runs, ok = [], 0
        for _ in range(20):
            parents = random_dag(n, rng)
            memo: dict = {}
            bad = str(n - 1)
            cands = sorted(ancestors(parents, bad, memo) - {"0"}, key=int)
            culprit = rng.choice(cands)
            res, _ = bisect_history(parents, bad, ["0"],
                                    lambda c: B if culprit in ancestors(parents, c, memo) else G)
            ok += res.first_bad == culprit
            runs.append(res.runs)
        print(f"{f'random DAG {n} (30% merges)':<46} {f'{statistics.mean(runs):.1f}/{max(runs)}':>14} "
              f"{'~' + str(math.ceil(math.log2(n))):>8} {f'{ok}/20 correct':>22}")
    print(f"\n(bench time {time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
