"""Flaky history bisection: dbglog's probabilistic search against a hand-written ``git bisect run``.

    python bench/flaky_bisect_bench.py [--seeds 20] [--shapes issue,hang,cells,toggles] [--sizes 128,1024]
                                       [--known-rate] [--earlier N] [--json]

Both tools run on the same simulated histories in the same run (same culprit, same build breaks,
same random stream per draw):

* **hand** -- what an engineer writes: ``git bisect run`` (git's own commit choice and skip logic,
  ``tests/git_bisect_sim.py``) with the six-line script "exit 125 on an import error; exit 1 as
  soon as one of up to 6 runs fails; else 0".  A build break costs one run (the import error).
* **dbglog** -- ``bisect git --flaky``'s engine (``dbglog.bisect.bayes.FlakyHistory``) driven the
  way ``bisect/flaky.py`` drives it: the bad end run until it fails (the target), a build break is
  one run and the commit is skipped from then on, every other run is evidence.

Shapes (all: P(fail | good) = 0 -- a good build never shows the hunted failure):

* ``issue``: issue 29's history -- 250 commits, 15 build breaks, two of them among the culprit's
  nearest neighbours (so sometimes its parent: then no one can tell the break from the culprit and
  git's "could be any of" list is the right answer), failing in half the runs from the culprit on;
* ``hang``: the trial's server hang -- 120 commits, 8 commits whose server dies on a SyntaxError
  (skips, one beside the culprit), the hang shows in 35 % of the runs from the culprit on;
* ``cells``: the 128 / 1,024-commit cells of the last round, no build breaks, failure rates 0.8,
  0.5, 0.3 (``--sizes``);
* ``toggles``: a toggle search on a deterministic repro (14 suspects): the search's runs against
  the confirmation's, adaptive against 3 runs per check.

``--known-rate`` adds a reference row ``known``: the same engine given P(fail | bad) up front (a
prior worth 1,000 runs at the true rate).  No real bisection knows it; the row shows how much of
dbglog's cost is learning the rate, the thing the hand script's "6 tries" assumes.

``--earlier N`` adds a row ``earlier``: ``bisect git --flaky`` as it starts in an investigation
that already holds N runs of the same command at the bad end (``dbglog run --repeat N --attempt
baseline``, on a clean checkout of it).  Those runs are evidence of P(fail | bad) and give the
target, so the bad end is not run first; they are not counted as the bisection's runs (the hand
script's author had run the repro too, to choose "6 tries").  Drawn from their own stream.

Columns: ``right`` = the answer is the culprit (or git's list of it and untestable commits);
``conf.wrong`` = a wrong answer given as the answer (dbglog: at >= the confidence; the hand script
gives every answer as certain); mean and 90th-percentile runs of the repro (build breaks included).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from dbglog.bisect.bayes import FlakyHistory, RatePrior  # noqa: E402
from dbglog.bisect.flaky import BAD_END_RUNS, GOOD_END_RUNS, default_budget  # noqa: E402
from git_bisect_sim import git_bisect_run  # noqa: E402

HAND_TRIES = 6


def history(n: int, breaks: int, near: int, seed: int) -> tuple[int, set[int], random.Random]:
    """A culprit (never an end) and ``breaks`` build breaks, ``near`` of them within two commits."""
    rng = random.Random(seed)
    c = rng.randrange(1, n - 1)
    close = [p for p in (c - 2, c - 1, c + 1, c + 2) if 0 <= p < n - 1]
    br = set(rng.sample(close, min(near, len(close), breaks)))
    while len(br) < breaks:
        p = rng.randrange(0, n - 1)
        if p != c:
            br.add(p)
    return c, br, rng


def right_answer(answer: list[int], culprit: int, breaks: set[int]) -> bool:
    return culprit in answer and all(x == culprit or x in breaks for x in answer)


def hand(n: int, culprit: int, breaks: set[int], a: float, rng: random.Random) -> dict:
    names = [f"{(i * 2654435761) % (1 << 32):08x}{i:06d}" for i in range(n + 1)]  # 0: the good end
    runs = 0

    def script(i: int) -> str:
        nonlocal runs
        pos = i - 1
        runs += 1
        if pos in breaks:
            return "skip"
        for k in range(HAND_TRIES):
            runs += k > 0
            if pos >= culprit and rng.random() < a:
                return "bad"
        return "good"

    _, _, answer = git_bisect_run(names, script)
    ok = right_answer([x - 1 for x in answer], culprit, breaks)
    return {"right": ok, "wrong_confident": not ok, "runs": runs}


def dbglog(n: int, culprit: int, breaks: set[int], a: float, rng: random.Random, confidence: float,
           known: bool = False, earlier: tuple[int, int] = (0, 0)) -> dict:
    """``known``: the reference row -- the same engine told P(fail | bad) (a prior of 1,000 runs at
    the true rate), which no real bisection has; it shows what learning the rate costs."""
    rates = RatePrior((1000 * a, 1000 * (1 - a)), RatePrior.line().good) if known else None
    fh = FlakyHistory(n, confidence=confidence, budget=default_budget(n), bad_end_runs=BAD_END_RUNS,
                      good_end_runs=GOOD_END_RUNS, rates=rates)
    if earlier[1]:
        fh.earlier(earlier[0], earlier[1] - earlier[0])
    while not fh.done:
        for pos in fh.next_runs():
            if pos in breaks:  # the build break: one run, then the commit is skipped
                fh.runs += 1
                fh.skipped(pos)
                continue
            f = pos >= culprit and rng.random() < a
            fh.record(pos, int(f), int(not f))
    lo, hi, _ = fh.answer()
    ok = fh.status == "confident" and right_answer(list(range(lo, hi + 1)), culprit, breaks)
    return {"right": ok, "wrong_confident": fh.status == "confident" and not ok, "runs": fh.runs}


def shape_rows(label: str, n: int, breaks: int, near: int, a: float, seeds: int, confidence: float,
               known: bool = False, earlier: int = 0) -> dict:
    rows = {"hand": [], "dbglog": []} | ({"known": []} if known else {}) | ({"earlier": []} if earlier else {})
    for s in range(seeds):
        c, br, rng = history(n, breaks, near, 7919 * n + s)
        before = random.Random(104729 * n + s)  # the runs made before the bisection: their own stream
        ran = sum(before.random() < a for _ in range(earlier))
        state = rng.getstate()
        rows["hand"].append(hand(n, c, br, a, rng))
        rng.setstate(state)
        rows["dbglog"].append(dbglog(n, c, br, a, rng, confidence))
        if known:
            rng.setstate(state)
            rows["known"].append(dbglog(n, c, br, a, rng, confidence, known=True))
        if earlier:
            rng.setstate(state)
            rows["earlier"].append(dbglog(n, c, br, a, rng, confidence, earlier=(ran, earlier)))
    out = {"shape": label, "commits": n, "build_breaks": breaks, "p_fail_bad": a, "seeds": seeds}
    for tool, rs in rows.items():
        runs = sorted(r["runs"] for r in rs)
        out[tool] = {"right": sum(r["right"] for r in rs), "confidently_wrong": sum(r["wrong_confident"] for r in rs),
                     "mean_runs": round(statistics.mean(runs), 1),
                     "p90_runs": runs[max(0, -(-9 * len(runs) // 10) - 1)]}
    return out


def toggle_rows(seeds: int) -> list[dict]:
    """Toggles on a deterministic repro (14 suspects): runs of the search (and the two ends) against
    the confirmation and completeness checks, one run per failing check and adaptive repeats of a
    passing one (``SafeToggleSearch._pass_runs``), next to 3 runs per check (the old rule)."""
    from dbglog.bisect.algorithms import SafeToggleSearch

    def go(hidden, confirm_runs):
        s = SafeToggleSearch(14, confirm_runs=confirm_runs)
        search = 0
        while not s.done:
            for req in s.next_runs():
                bad = any(h <= req.query for h in hidden)
                k = 1 if bad and req.stop == "bad" else req.runs
                search += k if s.inner.purpose.get(req.query, "search") not in ("confirm", "pool") else 0
                s.record(req.query, k if bad else 0, 0 if bad else k)
        return s.runs, search, {frozenset(x) for x in s.result.sets} == set(hidden)

    out = []
    for label, sizes in (("single + pair", (1, 2)), ("single", (1,)), ("pair", (2,)), ("triple", (3,))):
        rng = random.Random(11)
        rows, old = [], []
        for _ in range(seeds):
            picks = rng.sample(range(14), sum(sizes))
            hidden = [frozenset(picks[:sizes[0]])] + ([frozenset(picks[sizes[0]:])] if len(sizes) > 1 else [])
            rows.append(go(hidden, 1))
            old.append(go(hidden, 3)[0])
        total, search = statistics.mean(r[0] for r in rows), statistics.mean(r[1] for r in rows)
        out.append({"culprits": label, "search_runs": round(search, 1), "total_runs": round(total, 1),
                    "ratio": round(total / search, 2), "right": sum(r[2] for r in rows),
                    "three_per_check": round(statistics.mean(old), 1)})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--shapes", default="issue,hang,cells,toggles")
    ap.add_argument("--sizes", default="128,1024")
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--known-rate", action="store_true",
                    help="add a reference row 'known': the same engine told P(fail | bad), which no real run has")
    ap.add_argument("--earlier", type=int, default=0, metavar="N",
                    help="add a row 'earlier': dbglog given N runs of the bad end made before the bisection")
    args = ap.parse_args()
    plan = []
    shapes = args.shapes.split(",")
    if "issue" in shapes:
        plan.append(("issue: 250 commits, 15 breaks", 250, 15, 2, 0.5))
    if "hang" in shapes:
        plan.append(("server hang: 120 commits, 8 breaks", 120, 8, 1, 0.35))
    if "cells" in shapes:
        plan += [(f"cell {n} commits", n, 0, 0, a) for n in map(int, args.sizes.split(",")) for a in (0.8, 0.5, 0.3)]
    out = []
    if not args.json:
        print(f"{'shape':36} {'P(f|bad)':>8} | {'tool':6} {'right':>7} {'conf.wrong':>10} {'mean':>6} {'p90':>5}")
    for label, n, breaks, near, a in plan:
        r = shape_rows(label, n, breaks, near, a, args.seeds, args.confidence, args.known_rate, args.earlier)
        out.append(r)
        if not args.json:
            for tool in [t for t in ("hand", "dbglog", "known", "earlier") if t in r]:
                t = r[tool]
                print(f"{label if tool == 'hand' else '':36} {a if tool == 'hand' else '':>8} | {tool:7} "
                      f"{t['right']:>3}/{args.seeds:<3} {t['confidently_wrong']:>10} {t['mean_runs']:>6} "
                      f"{t['p90_runs']:>5}", flush=True)
    if "toggles" in shapes:
        rows = toggle_rows(args.seeds)
        out.append({"toggles": rows})
        if not args.json:
            print(f"\ntoggles, deterministic, 14 suspects: {'culprits':14} {'search':>7} {'total':>6} {'x':>5} "
                  f"{'right':>6} | {'3 per check':>11}")
            for r in rows:
                print(f"{'':36} {r['culprits']:14} {r['search_runs']:>7} {r['total_runs']:>6} {r['ratio']:>5} "
                      f"{r['right']:>3}/{args.seeds:<2} | {r['three_per_check']:>11}")
    if args.json:
        print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
