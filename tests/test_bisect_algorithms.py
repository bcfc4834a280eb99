"""Tests for dbglog.bisect.algorithms with fake oracles (no I/O)."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dbglog.bisect.algorithms import (
    CountSearch,
    HistoryBisect,
    ToggleSearch,
    Verdict,
    bisect_history,
    complement,
    disable_mode_oracle,
    drive,
    find_minimal_sets,
    find_nth,
    minimal_hitting_sets,
)

G, B, S, F = Verdict.GOOD, Verdict.BAD, Verdict.SKIP, Verdict.FLAKY
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def linear(n: int) -> dict[str, tuple[str, ...]]:
    return {str(i): ((str(i - 1),) if i else ()) for i in range(n)}


def full_ancestors(parents, c):
    out, stack = set(), [c]
    while stack:
        x = stack.pop()
        if x in out:
            continue
        out.add(x)
        stack.extend(parents.get(x, ()))
    return out


@st.composite
def dags(draw, min_n=3, max_n=80):
    """Random DAG: node i's first parent is an earlier node; some nodes are merges."""
    n = draw(st.integers(min_n, max_n))
    parents = {"0": ()}
    for i in range(1, n):
        p1 = draw(st.integers(max(0, i - 3), i - 1))  # mostly a mainline
        ps = [str(p1)]
        if i > 2 and draw(st.booleans()):
            p2 = draw(st.integers(0, i - 1))
            if p2 != p1:
                ps.append(str(p2))
        parents[str(i)] = tuple(ps)
    return parents


class Counter:
    def __init__(self, fn):
        self.fn = fn
        self.calls = []

    def __call__(self, q):
        self.calls.append(q)
        return self.fn(q)


def family_oracle(sets):
    sets = [frozenset(s) for s in sets]
    return lambda q: B if any(s <= q for s in sets) else G


def minimal_family(sets):
    sets = {frozenset(s) for s in sets}
    return {s for s in sets if not any(o < s for o in sets)}


# ---------------------------------------------------------------------------
# Verdict
# ---------------------------------------------------------------------------


def test_verdict_from_counts_and_str():
    assert Verdict.from_counts(0, 3) is G
    assert Verdict.from_counts(3, 3) is B
    assert Verdict.from_counts(1, 3) is F
    assert Verdict.from_counts(0, 0) is S
    assert Verdict("bad") is B and B == "bad"
    assert F.uncertain and S.uncertain and not G.uncertain


# ---------------------------------------------------------------------------
# Section 1: history
# ---------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(culprit=st.integers(1, 1023))
def test_linear_1024_within_log2(culprit):
    parents = linear(1024)
    oracle = Counter(lambda c: B if int(c) >= culprit else G)
    res, _ = bisect_history(parents, "1023", ["0"], oracle)
    assert res.status == "found" and res.first_bad == str(culprit)
    assert len(oracle.calls) == res.runs <= math.ceil(math.log2(1023))
    assert len(set(oracle.calls)) == len(oracle.calls)


def test_linear_10000():
    parents = linear(10_000)
    res, _ = bisect_history(parents, "9999", ["0"], lambda c: B if int(c) >= 7777 else G)
    assert res.first_bad == "7777" and res.runs <= 14


@FAST
@given(data=st.data())
def test_random_dag_finds_true_culprit(data):
    parents = data.draw(dags())
    n = len(parents)
    bad = str(n - 1)
    anc_bad = sorted(full_ancestors(parents, bad) - {"0"}, key=int)
    assume(anc_bad)
    culprit = data.draw(st.sampled_from(anc_bad))
    anc = {c: full_ancestors(parents, c) for c in parents}
    oracle = Counter(lambda c: B if culprit in anc[c] else G)
    res, _ = bisect_history(parents, bad, ["0"], oracle)
    assert res.status == "found", res
    assert res.first_bad == culprit
    assert len(set(oracle.calls)) == len(oracle.calls)
    # sanity bound: never more runs than candidates
    assert res.runs <= len(anc_bad)


@FAST
@given(data=st.data())
def test_first_parent_finds_the_merge(data):
    parents = data.draw(dags(min_n=5))
    n = len(parents)
    bad = str(n - 1)
    anc = {c: full_ancestors(parents, c) for c in parents}
    culprit = data.draw(st.sampled_from(sorted(anc[bad] - {"0"}, key=int)))
    chain, c = [], bad
    while True:
        chain.append(c)
        if not parents[c]:
            break
        c = parents[c][0]
    # expected: the oldest first-parent commit that contains the culprit
    expected = [c for c in chain if culprit in anc[c]][-1]
    res, _ = bisect_history(parents, bad, ["0"], lambda c: B if culprit in anc[c] else G,
                            first_parent=True)
    assert res.status == "found" and res.first_bad == expected
    assert res.runs <= max(1, math.ceil(math.log2(len(chain))))


def test_first_parent_side_branch_merge():
    # mainline m0..m5, side branch s1..s3 forked at m1, merged at m4 (second parent s3)
    parents = {
        "m0": (), "m1": ("m0",), "m2": ("m1",), "m3": ("m2",),
        "s1": ("m1",), "s2": ("s1",), "s3": ("s2",),
        "m4": ("m3", "s3"), "m5": ("m4",),
    }
    anc = {c: full_ancestors(parents, c) for c in parents}
    oracle = lambda c: B if "s2" in anc[c] else G  # noqa: E731
    res, _ = bisect_history(parents, "m5", ["m0"], oracle, first_parent=True)
    assert res.first_bad == "m4"
    res, _ = bisect_history(parents, "m5", ["m0"], oracle)
    assert res.first_bad == "s2"


def omniscient_candidates(n, culprit, skipped):
    """Candidates if every commit had been tested (linear history 0..n-1, good 0, bad n-1)."""
    lo = max([i for i in range(culprit) if i not in skipped], default=0)
    hi = min(i for i in range(culprit, n) if i not in skipped or i == n - 1)
    return {str(i) for i in range(lo + 1, hi + 1)}


def test_skip_cluster_21_around_culprit_every_commit_tried_as_many_runs_as_git():
    import hashlib

    from git_bisect_sim import git_bisect_run

    parents = linear(1024)
    ours = theirs = 0
    for culprit in (100, 333, 500, 512, 777, 900, 1000):
        skipped = set(range(culprit - 10, culprit + 11))
        oracle = Counter(lambda c: S if int(c) in skipped else (B if int(c) >= culprit else G))
        res, _ = bisect_history(parents, "1023", ["0"], oracle)
        assert res.status == "inconclusive"
        assert set(res.candidates) == omniscient_candidates(1024, culprit, skipped)
        # nothing assumed: every skipped candidate was tried, nothing left untried
        assert set(res.skipped) == {str(i) for i in skipped} and res.untested == ()
        ours += res.runs
        names = [hashlib.sha1(f"{culprit}:{i}".encode()).hexdigest() for i in range(1024)]
        tried, status, cands = git_bisect_run(names, lambda i: "skip" if i in skipped
                                              else ("bad" if i >= culprit else "good"))
        assert status == "inconclusive" and {str(c) for c in cands} == set(res.candidates)
        theirs += len(tried)
    assert ours <= theirs, (ours, theirs)  # git must try all 21 too: 212 vs 217 runs


@FAST
@given(culprit=st.integers(1, 255), lo_off=st.integers(0, 30), hi_off=st.integers(0, 30))
def test_skip_contiguous_cluster_exact_set(culprit, lo_off, hi_off):
    n = 256
    skipped = {i for i in range(culprit - lo_off, culprit + hi_off + 1) if 0 < i < n - 1}
    parents = linear(n)
    res, _ = bisect_history(
        parents, str(n - 1), ["0"],
        lambda c: S if int(c) in skipped else (B if int(c) >= culprit else G))
    exact = omniscient_candidates(n, culprit, skipped)
    assert set(res.candidates) == exact
    assert res.status == ("found" if len(exact) == 1 else "inconclusive")
    assert str(culprit) in res.candidates and res.untested == ()


@FAST
@given(culprit=st.integers(1, 127), skipped=st.sets(st.integers(1, 126), max_size=40))
def test_skip_random_sets_exact(culprit, skipped):
    n = 128
    parents = linear(n)
    oracle = Counter(lambda c: S if int(c) in skipped else (B if int(c) >= culprit else G))  # noqa: E731
    res, _ = bisect_history(parents, str(n - 1), ["0"], oracle)
    assert set(res.candidates) == omniscient_candidates(n, culprit, skipped)
    assert len(set(oracle.calls)) == len(oracle.calls) == res.runs
    # an inconclusive answer lists only commits tried and untestable, and the bad one after them
    if res.status == "inconclusive":
        assert set(res.candidates) - set(res.skipped) == {max(res.candidates, key=int)}
        assert set(res.skipped) <= set(oracle.calls)


@FAST
@given(data=st.data())
def test_random_dag_with_skips_is_sound(data):
    parents = data.draw(dags())
    n = len(parents)
    bad = str(n - 1)
    anc = {c: full_ancestors(parents, c) for c in parents}
    cands = sorted(anc[bad] - {"0"}, key=int)
    assume(cands)
    culprit = data.draw(st.sampled_from(cands))
    skipped = data.draw(st.sets(st.sampled_from(cands), max_size=max(1, len(cands) // 2)))
    s = HistoryBisect(parents, bad, ["0"])
    oracle = Counter(lambda c: S if c in skipped else (B if culprit in anc[c] else G))
    while not s.done:
        for c in s.next_steps(data.draw(st.sampled_from([1, 1, 3]))):
            s.record(c, oracle(c))
    r = s.result
    assert culprit in r.candidates
    assert r.status in ("found", "inconclusive")
    if r.status == "found":
        assert r.first_bad == culprit
    else:
        # every candidate was tried: untestable, or bad (the lowest bad ones)
        assert r.untested == ()
        assert all(s.verdicts.get(c) in (S, B) or c == bad for c in r.candidates)
        assert set(r.skipped) <= set(oracle.calls)
    assert len(set(oracle.calls)) == len(oracle.calls)


def test_budget_stops_and_lists_what_was_not_tried():
    parents = linear(256)
    skipped = set(range(100, 140))
    oracle = Counter(lambda c: S if int(c) in skipped else (B if int(c) >= 120 else G))
    res, _ = bisect_history(parents, "255", ["0"], oracle, max_runs=12)
    assert res.status == "budget_exhausted" and res.runs == 12 == len(oracle.calls)
    assert "120" in res.candidates and res.untested
    assert set(res.untested).isdisjoint(oracle.calls)
    (rest,) = set(res.candidates) - set(res.skipped) - set(res.untested)
    assert rest in oracle.calls and oracle.fn(rest) is B  # the lowest bad commit seen
    # a replay with a larger budget goes on from there (the replayed verdicts count)
    s = HistoryBisect(parents, "255", ["0"], max_runs=100)
    for c in oracle.calls:
        s.record(c, oracle.fn(c))
    assert s.runs == 12 and not s.done
    while not s.done:
        for c in s.next_steps():
            s.record(c, oracle.fn(c))
    assert s.result.status == "inconclusive" and s.result.untested == ()
    assert set(s.result.candidates) == {str(i) for i in range(100, 141)}


def test_skip_posterior_broken_ranges():
    from dbglog.bisect.algorithms import skip_posterior

    T, U = False, True
    p = skip_posterior([T, None, None, U, None, U, None, None, T], 0.1, 0.7)
    assert p[0] == 0.0 and p[3] == 1.0 and p[-1] == 0.0
    assert p[4] > 0.9  # between two untestable commits: probably broken too
    assert p[2] > p[1]  # closer to the broken one
    assert p[6] < p[4] and p[1] < p[4]  # next to a testable end: less likely
    assert skip_posterior([], 0.1, 0.7) == []


def test_corrected_verdict_and_unknown_bad():
    s = HistoryBisect(linear(8), "7", ["0"])
    s.record("4", B)
    s.record("4", G)  # corrected after more repeats
    assert "4" not in s.candidates and "7" in s.candidates
    with pytest.raises(ValueError):
        HistoryBisect(linear(8), "nope", ["0"])


def test_flaky_reports_commit_and_resolves_with_more_evidence():
    parents = linear(64)
    culprit = 40
    s = HistoryBisect(parents, "63", ["0"])
    while not s.done:
        (c,) = s.next_steps()
        if int(c) == culprit:
            s.record(c, Verdict.from_counts(1, 3), bad_runs=1, total_runs=3)
        else:
            s.record(c, B if int(c) >= culprit else G)
    r = s.result
    assert r.status == "flaky" and r.flaky == ("40",)
    assert set(r.candidates) == {"40", "41"}
    assert s.evidence["40"] == (1, 3)
    s.record("40", B, bad_runs=3, total_runs=3)  # more repeats settle it
    assert s.result.status == "found" and s.result.first_bad == "40"
    assert s.evidence["40"] == (4, 6)


def test_flaky_avoided_like_skip():
    parents = linear(1024)
    res, _ = bisect_history(parents, "1023", ["0"],
                            lambda c: F if int(c) == 511 else (B if int(c) >= 300 else G))
    assert res.status == "found" and res.first_bad == "300"


@pytest.mark.parametrize("jobs", [2, 3, 4, 7])
def test_kary_rounds(jobs):
    parents = linear(1024)
    for culprit in (1, 257, 600, 1023):
        res, rounds = bisect_history(parents, "1023", ["0"],
                                     lambda c: B if int(c) >= culprit else G, jobs=jobs)
        assert res.first_bad == str(culprit)
        assert rounds <= math.ceil(math.log(1023) / math.log(jobs + 1)) + 1


def test_kary_splits_evenly():
    s = HistoryBisect(linear(1001), "1000", ["0"])
    steps = sorted(int(c) for c in s.next_steps(3))
    assert steps == [250, 500, 750]


def test_replay_same_sequence_no_reruns():
    parents = linear(500)
    skipped = set(range(200, 215))
    oracle = lambda c: S if int(c) in skipped else (B if int(c) >= 207 else G)  # noqa: E731
    s1 = HistoryBisect(parents, "499", ["0"])
    cache, seq1 = {}, []
    while not s1.done:
        for c in s1.next_steps():
            seq1.append(c)
            cache[c] = oracle(c)
            s1.record(c, cache[c])
    # resume: same algorithm, verdicts from the cache, no oracle calls
    s2 = HistoryBisect(parents, "499", ["0"])
    seq2 = []
    while not s2.done:
        for c in s2.next_steps():
            seq2.append(c)
            s2.record(c, cache[c])
    assert seq1 == seq2 and s1.result == s2.result
    # bulk-loading the cache in any order gives the same final state
    s3 = HistoryBisect(parents, "499", ["0"])
    items = list(cache.items())
    random.Random(1).shuffle(items)
    for c, v in items:
        s3.record(c, v)
    assert s3.done and set(s3.result.candidates) == set(s1.result.candidates)


def test_inconsistent_and_estimates():
    parents = linear(10)
    s = HistoryBisect(parents, "3", ["7"])
    assert s.result.status == "inconsistent" and s.done
    s = HistoryBisect(linear(1024), "1023", ["0"])
    assert s.estimated_steps_left() == 10
    assert s.estimated_steps_left(3) == 5
    assert len(s.candidates) == 1023


def test_multiple_goods_and_merge_candidates():
    # two branches merged; goods on both branches
    parents = {"r": (), "a1": ("r",), "a2": ("a1",), "b1": ("r",), "b2": ("b1",),
               "m": ("a2", "b2"), "t": ("m",)}
    s = HistoryBisect(parents, "t", ["a1", "b1"])
    assert set(s.candidates) == {"a2", "b2", "m", "t"}


# ---------------------------------------------------------------------------
# Section 2: toggles
# ---------------------------------------------------------------------------

TARGETS = {(90, 1): 11, (90, 2): 25, (1024, 1): 15, (1024, 2): 35, (1024, 3): 60}


@settings(max_examples=30, deadline=None)
@given(data=st.data())
@pytest.mark.parametrize("n,k", sorted(TARGETS))
def test_toggle_targets_single_set(n, k, data):
    hidden = frozenset(data.draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k,
                                          unique=True)))
    oracle = Counter(family_oracle([hidden]))
    r = find_minimal_sets(n, oracle)
    assert r.status == "complete"
    assert r.sets == (tuple(sorted(hidden)),)
    assert r.runs == len(oracle.calls) == len(set(oracle.calls))
    assert r.runs <= TARGETS[(n, k)], (sorted(hidden), r.runs)


@st.composite
def families(draw, n):
    kind = draw(st.sampled_from(["single", "pair", "triple", "or", "indep", "overlap", "mixed"]))
    pick = lambda k: frozenset(draw(st.lists(st.integers(0, n - 1), min_size=k,  # noqa: E731
                                             max_size=k, unique=True)))
    if kind == "single":
        return [pick(1)]
    if kind == "pair":
        return [pick(2)]
    if kind == "triple":
        return [pick(3)]
    if kind == "or":  # c OR (a AND b)
        abc = list(pick(3))
        return [frozenset(abc[:1]), frozenset(abc[1:])]
    if kind == "indep":
        return [pick(draw(st.integers(1, 3))) for _ in range(draw(st.integers(2, 4)))]
    if kind == "overlap":  # (a AND b) OR (a AND c) [OR (b AND c)]
        abc = list(pick(3))
        fam = [frozenset(abc[:2]), frozenset([abc[0], abc[2]])]
        if draw(st.booleans()):
            fam.append(frozenset(abc[1:]))
        return fam
    return [pick(draw(st.integers(1, 4))) for _ in range(draw(st.integers(1, 3)))]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_toggle_finds_all_minimal_sets(data):
    n = data.draw(st.one_of(st.sampled_from([4, 5, 17, 90, 300, 1024]), st.integers(8, 1024)))
    fam = data.draw(families(n))
    fam = [s for s in fam if s]
    assume(frozenset(range(n)) not in fam or n > 1)
    oracle = Counter(family_oracle(fam))
    jobs = data.draw(st.sampled_from([1, 1, 3]))
    r = find_minimal_sets(n, oracle, jobs=jobs)
    want = minimal_family(fam)
    assert r.status == "complete"
    got = {frozenset(s) for s in r.sets}
    assert got == want
    assert len(r.sets) == len(got)
    for s in got:  # each reported set fails and is minimal
        assert oracle.fn(s) is B
        assert all(oracle.fn(s - {e}) is G for e in s)
    assert len(set(oracle.calls)) == len(oracle.calls)  # never the same query twice


def test_toggle_c_or_ab_and_overlap():
    r = find_minimal_sets(1024, family_oracle([{700}, {10, 500}]))
    assert set(r.sets) == {(700,), (10, 500)}
    r = find_minimal_sets(90, family_oracle([{1, 2}, {1, 3}, {2, 3}]))
    assert set(r.sets) == {(1, 2), (1, 3), (2, 3)}
    # non-exhaustive (Go-style) mode stops after disjoint sets
    r = find_minimal_sets(90, family_oracle([{1, 2}, {1, 3}]), exhaustive=False)
    assert len(r.sets) == 1 and r.status == "complete"


def test_toggle_completeness_asks_each_hitting_pool_not_also_all_minus_union():
    """With a pair found, ``all - union`` lies inside every ``all - H`` pool: their passing implies
    it, so it is not run on its own (one run fewer per search) and every set is still found."""
    seen = []
    oracle = family_oracle([{3}, {5, 9}])
    r = find_minimal_sets(14, lambda q: seen.append(frozenset(q)) or oracle(q))
    assert set(r.sets) == {(3,), (5, 9)} and r.status == "complete"
    assert frozenset(range(14)) - {3, 5, 9} not in seen
    assert {frozenset(range(14)) - {3, 5}, frozenset(range(14)) - {3, 9}} <= set(seen)
    # with a single found set there is one pool, and it is ``all - union`` itself
    seen.clear()
    oracle = family_oracle([{3}])
    assert find_minimal_sets(14, lambda q: seen.append(frozenset(q)) or oracle(q)).sets == ((3,),)
    assert frozenset(range(14)) - {3} in seen


def test_a_members_removal_is_asked_as_the_pool_that_removes_it_so_no_pool_is_asked_after():
    """Each member's removal is checked on ``all - {member}``: it holds ``set - {member}``, so its
    passing shows the member is needed and settles that completeness pool in the same query."""
    U = frozenset(range(14))
    s = ToggleSearch(14)
    r = drive(s, family_oracle([{5, 9}]))
    assert r.sets == ((5, 9),) and r.status == "complete"
    assert s.asked[-2:] == [U - {5}, U - {9}]  # nothing asked after the two wide checks
    assert frozenset({5}) not in s.asked  # the narrow check of 9 was never needed
    # a second set makes a wide check fail: that member's narrow check is asked, and both sets found
    s = ToggleSearch(14)
    r = drive(s, family_oracle([{5, 9}, {2}]))
    assert set(r.sets) == {(2,), (5, 9)} and r.status == "complete"
    assert U - {2} in s.asked and frozenset() in s.asked
    # Go-style (non-exhaustive) mode asks no hitting pools, so it keeps the narrow checks
    s = ToggleSearch(14, exhaustive=False)
    drive(s, family_oracle([{5, 9}]))
    assert U - {9} not in s.asked and frozenset({5}) in s.asked


def test_confirming_a_set_on_a_repro_that_never_disagreed_costs_at_most_half_the_search():
    """Issue 29's bar for toggles on a deterministic repro: the confirmation and completeness checks
    add at most half the runs of the search (and its two ends), for a single, a pair and a triple."""
    from dbglog.bisect.algorithms import SafeToggleSearch

    for size in (1, 2, 3):
        rng = random.Random(11)
        total = search = 0
        for _ in range(30):
            hidden = frozenset(rng.sample(range(14), size))
            s = SafeToggleSearch(14)
            while not s.done:
                for req in s.next_runs():
                    bad = hidden <= req.query
                    k = 1 if bad and req.stop == "bad" else req.runs
                    search += k if s.inner.purpose.get(req.query, "search") not in ("confirm", "pool") else 0
                    s.record(req.query, k if bad else 0, 0 if bad else k)
            assert s.result.sets == (tuple(sorted(hidden)),)
            total += s.runs
        assert total <= 1.5 * search, (size, total / search)


def test_toggle_budgets():
    fam = [{3}, {50}, {70, 80}, {10, 20, 30}]
    r = find_minimal_sets(90, family_oracle(fam), max_sets=2)
    assert r.status == "max_sets" and len(r.sets) == 2
    for cap in (3, 10, 20, 30):
        oracle = Counter(family_oracle(fam))
        r = find_minimal_sets(90, oracle, max_runs=cap)
        assert r.status == "budget_exhausted" and r.runs <= cap and len(oracle.calls) <= cap
        assert {frozenset(s) for s in r.sets} <= minimal_family(fam)
    r = find_minimal_sets(90, family_oracle([{10, 20, 30}]), max_set_size=2)
    assert r.status == "max_set_size" and r.sets == ()
    r = find_minimal_sets(90, family_oracle([{5}, {10, 20, 30}]), max_set_size=2)
    assert r.status == "max_set_size" and r.sets == ((5,),)


def test_toggle_bad_endpoints():
    assert find_minimal_sets(10, lambda q: G).status == "bad_endpoints"
    assert find_minimal_sets(10, lambda q: B).status == "bad_endpoints"
    assert find_minimal_sets(10, lambda q: S).status == "bad_endpoints"


def test_toggle_skip_is_conservative_and_reported():
    base = family_oracle([{40}])
    oracle = lambda q: S if len(q) == 45 else base(q)  # noqa: E731
    r = find_minimal_sets(90, oracle)
    assert r.uncertain and not r.certain
    assert all(v in (S, F) for _, v in r.uncertain)
    assert r.sets  # the culprit is still found around the skipped queries
    for s in r.sets:  # whatever is reported is confirmed failing
        assert base(frozenset(s)) is B


def test_toggle_nonmonotone_result_is_one_minimal():
    # fails iff 7 in q and (8 in q or 9 not in q): {7} alone fails
    oracle = lambda q: B if 7 in q and (8 in q or 9 not in q) else G  # noqa: E731
    r = find_minimal_sets(12, oracle, exhaustive=False)
    assert r.sets == ((7,),)  # {7} alone fails; the loop below must not pass on an empty result
    for s in r.sets:
        s = frozenset(s)
        assert oracle(s) is B and all(oracle(s - {e}) is G for e in s)


def test_toggle_replay_and_batches():
    fam = [{3, 900}, {512}]
    oracle = family_oracle(fam)
    s1 = ToggleSearch(1024)
    cache = {}
    steps = 0
    while not s1.done and steps < 12:  # interrupt after 12 queries
        for q in s1.next_queries():
            cache[q] = oracle(q)
            s1.record(q, cache[q])
            steps += 1
    # resume: preload the persisted cache, then continue
    s2 = ToggleSearch(1024)
    for q, v in cache.items():
        s2.record(q, v)
    fresh = Counter(oracle)
    r2 = drive(s2, fresh)
    assert not any(q in cache for q in fresh.calls)
    full = ToggleSearch(1024)
    r_full = drive(full, oracle)
    assert r2 == r_full and s2.asked == full.asked
    # batch oracle: several independent queries per round, same answer
    rounds = []
    r4 = find_minimal_sets(1024, batch_test=lambda qs: (rounds.append(len(qs)),
                                                       [oracle(q) for q in qs])[1], jobs=4)
    assert set(r4.sets) == set(r_full.sets)
    assert max(rounds) > 1 and len(rounds) < r_full.runs


def test_toggle_disable_mode_helpers():
    n = 20
    # the setup breaks when toggles 4 and 9 are both removed
    real = lambda enabled: B if not ({4, 9} & enabled) else G  # noqa: E731
    r = find_minimal_sets(n, disable_mode_oracle(n, real))
    assert r.sets == ((4, 9),)
    assert complement(5, {1, 2}) == frozenset({0, 3, 4})


def test_toggle_ddmin_strategy_and_dense_sets():
    dense = set(range(0, 64, 2))
    r = find_minimal_sets(64, family_oracle([dense]), strategy="ddmin")
    assert set(r.sets[0]) == dense
    r = find_minimal_sets(64, family_oracle([dense]))
    assert set(r.sets[0]) == dense and r.runs < 383  # picire measured 383


def test_minimal_hitting_sets():
    hs = minimal_hitting_sets([frozenset({1}), frozenset({2, 3})])
    assert hs == [frozenset({1, 2}), frozenset({1, 3})]
    hs = minimal_hitting_sets([frozenset({1, 2}), frozenset({1, 3})])
    assert hs == [frozenset({1}), frozenset({2, 3})]
    with pytest.raises(OverflowError):
        minimal_hitting_sets([frozenset({i, i + 100}) for i in range(20)], limit=100)


# ---------------------------------------------------------------------------
# Section 3: counting
# ---------------------------------------------------------------------------


@settings(max_examples=50, deadline=None)
@given(max_count=st.integers(1, 5000), data=st.data())
def test_find_nth(max_count, data):
    nth = data.draw(st.integers(1, max_count))
    oracle = Counter(lambda k: B if k >= nth else G)
    r = find_nth(max_count, oracle)
    assert r.status == "found" and r.nth == nth
    assert r.runs == len(oracle.calls) <= math.ceil(math.log2(max_count)) + 2


def test_find_nth_skips_and_jobs():
    r = find_nth(1000, lambda k: S if 400 <= k <= 420 else (B if k >= 410 else G))
    assert r.status == "inconclusive" and r.low == 399 and r.high == 421
    r = find_nth(1000, lambda k: S if k == 500 else (B if k >= 700 else G))
    assert r.nth == 700
    rounds = []
    s = CountSearch(1000, jobs=3)
    while not s.done:
        qs = s.next_queries()
        rounds.append(qs)
        for q in qs:
            s.record(q, B if q >= 123 else G)
    assert s.result.nth == 123 and len(rounds) <= 1 + 5
    assert find_nth(10, lambda k: B).status == "bad_endpoints"
    r = find_nth(10**6, lambda k: S if 400_000 <= k <= 600_000 else (B if k >= 5 else G))
    assert r.nth == 5
    r = find_nth(10**6, lambda k: S if 400_000 <= k <= 600_000 else (B if k >= 500_000 else G))
    assert r.status == "inconclusive" and (r.low, r.high) == (399_999, 600_001)
    r = find_nth(10**6, lambda k: B if k >= 5 else G, max_runs=5)
    assert r.status == "budget_exhausted" and r.runs <= 5
