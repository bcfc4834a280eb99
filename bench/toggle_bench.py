"""Runs needed to find failure-inducing toggle sets, dbglog vs picire (ddmin).

Fake monotone oracle: the target fails iff the enabled set contains one of the
hidden sets.  For every case the hidden sets are drawn at random (fixed seed) a
number of times; the table shows mean and max runs for each tool on exactly the
same draws, in the same process.

Counting rules:
* dbglog: distinct queries asked, including the 2 endpoint checks, the
  confirmation runs (set alone fails, each member removed passes) and the final
  "are there more sets?" checks (exhaustive mode: every minimal hitting set of
  the sets found).
* picire: calls to the tester with its ConfigCache on (cache hits excluded, the
  per-iteration re-assertion included), as in bisect-anchors.md section 4.
  picire returns ONE 1-minimal set; "found" says whether that covers every
  hidden set (it cannot for two independent culprits).

Run:  PYTHONPATH=. python bench/toggle_bench.py [--draws N]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

from dbglog.bisect.algorithms import Verdict, find_minimal_sets

try:
    import picire  # type: ignore
except Exception:  # pragma: no cover - optional
    picire = None


def make_case(kind: str, n: int, rng: random.Random) -> list[frozenset[int]]:
    if kind == "1 culprit":
        return [frozenset(rng.sample(range(n), 1))]
    if kind == "pair (AND)":
        return [frozenset(rng.sample(range(n), 2))]
    if kind == "triple (AND)":
        return [frozenset(rng.sample(range(n), 3))]
    if kind == "2 independent":
        a, b = rng.sample(range(n), 2)
        return [frozenset([a]), frozenset([b])]
    if kind == "c OR (a AND b)":
        a, b, c = rng.sample(range(n), 3)
        return [frozenset([c]), frozenset([a, b])]
    raise ValueError(kind)


def ours(n: int, hidden: list[frozenset[int]]) -> tuple[int, bool]:
    def test(q):
        return Verdict.BAD if any(h <= q for h in hidden) else Verdict.GOOD

    r = find_minimal_sets(n, test)
    return r.runs, {frozenset(s) for s in r.sets} == set(hidden)


def theirs(n: int, hidden: list[frozenset[int]]) -> tuple[int, bool]:
    calls = [0]

    def test(config, config_id):
        calls[0] += 1
        s = set(config)
        return picire.Outcome.FAIL if any(h <= s for h in hidden) else picire.Outcome.PASS

    dd = picire.DD(test, cache=picire.ConfigCache())
    result = frozenset(dd(list(range(n))))
    return calls[0], {result} == set(hidden)


def fmt(xs: list[int]) -> str:
    return f"{statistics.mean(xs):6.1f} / {max(xs):4d}"


def flaky_table(seed: int, draws: int = 200) -> None:
    """Repro *runs* of the flaky-safe search (SafeToggleSearch) on a race that fails at a rate."""
    from dbglog.bisect.algorithms import SafeToggleSearch

    print("\nflaky race: a pair among 12 toggles failing at a rate; runs = repro runs (endpoints included)")
    print(f"{'rate':>6}  {'options':<22} {'runs mean/max':>14} {'exact':>7} {'not sure':>9} {'wrong':>6}")
    for options in ({}, {"repeat": 5}, {"repeat": 6, "bad_if_any": True}):
        for rate in (1.0, 0.65, 0.3):
            runs, exact, unsure, wrong = [], 0, 0, 0
            for d in range(draws):
                rng = random.Random(seed * 100003 + d)
                pair = frozenset(rng.sample(range(12), 2))
                s = SafeToggleSearch(12, **options)
                while not s.done:
                    for req in s.next_runs():
                        b = g = 0
                        for _ in range(req.runs):
                            f = pair <= req.query and rng.random() < rate
                            b, g = b + f, g + (not f)
                            if (req.stop == "bad" and f) or (req.stop == "mixed" and b and g):
                                break
                        s.record(req.query, b, g)
                r = s.result
                if r.status == "complete" and not r.uncertain:
                    runs.append(r.runs)
                    exact += r.sets == (tuple(sorted(pair)),)
                    wrong += r.sets != (tuple(sorted(pair)),)
                else:
                    unsure += 1
            name = ", ".join(f"{k}={v}" for k, v in options.items()) or "default"
            rm = f"{statistics.mean(runs):.0f}/{max(runs)}" if runs else "-"
            print(f"{rate:>6}  {name:<22} {rm:>14} {exact:>7} {unsure:>9} {wrong:>6}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=20, help="random placements per case")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)

    kinds = ["1 culprit", "pair (AND)", "triple (AND)", "2 independent", "c OR (a AND b)"]
    targets = {(90, "1 culprit"): 11, (90, "pair (AND)"): 25, (1024, "1 culprit"): 15,
               (1024, "pair (AND)"): 35, (1024, "triple (AND)"): 60}
    print(f"toggle bisection, fake oracle, {args.draws} random placements per case "
          f"(seed {args.seed}); runs as mean / max")
    if picire is None:
        print("picire: n/a (not importable; install with `pip install picire`)")
    hdr = (f"{'n':>5}  {'case':<16} {'dbglog runs':>14} {'all sets':>8} {'target':>6}   "
           f"{'picire runs':>14} {'all sets':>8}")
    print(hdr)
    print("-" * len(hdr))
    t0 = time.perf_counter()
    for n in (90, 1024):
        for kind in kinds:
            rng = random.Random(f"{args.seed}-{n}-{kind}")
            cases = [make_case(kind, n, rng) for _ in range(args.draws)]
            o = [ours(n, h) for h in cases]
            o_runs, o_ok = [r for r, _ in o], all(ok for _, ok in o)
            tgt = targets.get((n, kind))
            line = (f"{n:>5}  {kind:<16} {fmt(o_runs):>14} {('yes' if o_ok else 'NO'):>8} "
                    f"{('<=' + str(tgt)) if tgt else '':>6}   ")
            if picire is not None:
                p = [theirs(n, h) for h in cases]
                p_runs = [r for r, _ in p]
                p_ok = sum(ok for _, ok in p)
                line += f"{fmt(p_runs):>14} {f'{p_ok}/{len(p)}':>8}"
            else:
                line += f"{'n/a':>14} {'n/a':>8}"
            print(line)
    # pathological ddmin case from the anchors: 32 required elements out of 64
    dense = [frozenset(range(0, 64, 2))]
    o_runs, _ = ours(64, dense)
    line = f"{64:>5}  {'32 of 64 (AND)':<16} {o_runs:>14} {'yes':>8} {'':>6}   "
    if picire is not None:
        p_runs, p_ok = theirs(64, dense)
        line += f"{p_runs:>14} {('1/1' if p_ok else '0/1'):>8}"
    else:
        line += f"{'n/a':>14} {'n/a':>8}"
    print(line)
    flaky_table(args.seed)
    print(f"\n(bench time {time.perf_counter() - t0:.1f} s)  Peers quoted from bisect-anchors.md: "
          "Go bisect n=90: 1 culprit 11, 2 singles 23, single+pair 35 runs; "
          "picire measured there: n=90 19/60/103, n=1024 29/71/158 (1/pair/triple).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
