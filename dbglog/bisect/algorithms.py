"""Pure bisection algorithms for dbglog: no I/O, no clocks, no randomness.

Everything here is driven by *queries* and *verdicts*.  An algorithm object asks
for verdicts on queries (a commit, a set of toggle indices, a call count), the
driver (``history.py`` / ``toggles.py`` / ``session.py``) runs the repro and
records the verdicts back.  The algorithms never run anything themselves, so
they are tested with fake oracles (``tests/test_bisect_algo*.py``).

Shared contract (all three searches)
====================================

* **Verdicts** (:class:`Verdict`): ``GOOD`` (passes), ``BAD`` (reproduces *the*
  failure), ``SKIP`` (untestable: build failure, other crash, infra), ``FLAKY``
  (repeats disagree).  ``FLAKY`` is treated like ``SKIP`` by the search (no
  guessing) but is reported separately so the driver can ask for more repeats.
  :meth:`Verdict.from_counts` turns ``bad_runs/total_runs`` into a verdict;
  history searches also keep those counts per commit (:attr:`HistoryBisect.evidence`),
  which is the hook where a probabilistic (Bayesian, git_bayesect-style) step
  selector can plug in later: it only has to replace ``_choose`` with a rule
  reading ``evidence`` instead of the hard verdicts.

* **Determinism / resume by replay**: the sequence of queries depends only on the
  constructor arguments and on the verdicts given to earlier queries.  Ties are
  broken by a fixed order, never by hashing or randomness.  A driver resumes a
  session by rebuilding the object with the same arguments and feeding it its
  persisted verdict cache: ``record()`` accepts verdicts for queries that were
  not asked yet (they are kept as a cache and consumed when the algorithm asks),
  so a finished step is never re-run.

* **Batches**: ``next_queries()`` / ``next_steps(j)`` may return several queries
  at once; they are independent and can run in parallel.  The algorithm moves
  on when all of them have verdicts (order of ``record`` calls does not matter).

* **Run counting**: ``runs`` counts the distinct queries the algorithm asked for,
  whether the driver had to execute them or answered from its cache, so a
  replayed session reports the same counts and hits ``max_runs`` at the same
  point as the original one.

Section 1: history bisection over a commit DAG  (:class:`HistoryBisect`)
========================================================================

Like ``git bisect``: candidates are the commits that are ancestors (inclusive)
of *every* bad commit and not ancestors (inclusive) of any good commit.  This
candidate set is exactly the set of commits that can still be the first bad
commit under the usual model "a commit is bad iff it contains the culprit".
With ``first_parent`` only first-parent edges are followed from the bad end (the
result is the merge that brought the culprit in); goods still exclude their full
ancestry.

Step selection is ``git rev-list --bisect``: the *weight* of a candidate ``c`` is
the number of candidates reachable from it (its ancestors among candidates,
inclusive).  Testing ``c`` leaves ``weight(c)`` candidates if it is bad and
``N - weight(c)`` if it is good, so we pick the commit maximising
``min(weight, N - weight)``.  Weights are computed with one bitset per
candidate (Python ints), or by a chain walk when no candidate merges two
candidate parents (linear ranges, ``--first-parent``).

Untestable commits (``SKIP``: a broken build, another crash) are evidence about
themselves only: a commit is never assumed untestable because its neighbours are,
and the search ends only when every commit left between the nearest good and bad
verdicts has been tried (or the ``max_runs`` budget is spent).  Where to step
next is a matter of cost, not of truth: broken builds come in ranges, so a
commit next to an untestable one is probably untestable too.  The selector
scores each untried candidate by its *expected* split,
``(1 - P(untestable)) * H(weight / N)`` (``H`` the binary entropy: one bit for an
even split), where ``P(untestable)`` comes from a two-state chain along the
candidates (:func:`skip_posterior`, forward-backward over "a broken range starts
after a testable commit with probability ``SKIP_START`` and goes on with
probability ``SKIP_CONTINUE``").  So a skipped midpoint sends the next step a
few commits away (where a working build is likely and the split still nearly
even) rather than a quarter of the range away, and the inside of a skipped
cluster is probed last but is probed -- the commits next to the nearest good and
bad verdicts first (a testable neighbour lowers ``P(untestable)`` more than a
skipped one), since one of them may be the culprit itself.  Without skips, in a
line of fewer than 2,048 commits, the steps are exactly git's (same weights, same
tie-breaks; git settles for "about half" in longer ones).
When nothing is left to
try the search ends with the exact candidate set (``status == "inconclusive"``):
the commits tried and found untestable plus the first bad one after them, or
``status == "flaky"`` naming the flaky commits if more repeats could settle it.
Measured against a faithful simulation of ``git bisect run`` with a skip script
(``tests/git_bisect_sim.py``, checked step for step against git 2.39.5) on
histories with several broken ranges on both sides of the culprit
(``bench/history_algo_bench.py``): the culprit whenever it is identifiable, in
fewer runs on average; and on 21 untestable commits around the culprit in
1,024, the same 22 candidates in about as many runs as git (both must try all 21).

k-ary search (``next_steps(j)``): ``j`` commits whose weights are closest to
``i*N/(j+1)`` for ``i = 1..j`` (weighted by ``1 - P(untestable)``), splitting the
candidates into ``j+1`` near-equal parts; about ``log_{j+1}(N)`` rounds.

Section 2: toggle bisection -- every minimal failure-inducing set (:class:`ToggleSearch`)
========================================================================================

Toggles are indices ``0..n-1``; a query is the frozenset of *enabled* toggles;
``BAD`` means the failure reproduces.  The search is Go's bisect-reduce idea
(grow a forced "Add" set while halving the rest) in its prefix form:

1. Endpoints: ask ``all`` (must be BAD) and ``{}`` (must be GOOD).
2. Find one minimal set inside a failing *pool* (ordered list).  Keep a forced
   set ``F`` (initially empty) and a prefix bound ``hi`` with
   ``pool[:hi] + F`` known to fail.  Binary-search the smallest ``i`` with
   ``pool[:i] + F`` failing: then ``pool[i-1]`` is necessary given ``F``; add
   it to ``F`` and continue inside ``pool[:i-1]``.  Before each further search
   ask ``F`` alone (the set may already be complete; this is also the
   confirmation run).  Each element costs about ``log2(n)`` runs, one culprit
   costs exactly ``ceil(log2 n)``.  Interacting AND-sets fall out naturally: the
   later element is found with the earlier one forced on.
   When the set turns out dense (estimated gap between members small) the next
   element is found by *galloping* down from the top (``hi-1, hi-2, hi-4, ...``)
   which costs ``O(log gap)`` instead of ``O(log n)``: this is the "large set"
   path where ddmin-like linear scans are cheaper than halving.
3. Confirm: ``M`` alone fails and ``M - {m}`` passes for every member (batched).
   If some ``M - {m}`` still fails (a non-monotone or flaky target) the member is
   dropped and the set re-confirmed.  When exhaustive, a member's removal is first
   asked *wide*, as the completeness pool ``all - H`` of step 4 whose ``H`` holds
   that member and no other (``H`` grown from the pool ``M`` was found in): it holds
   ``M - {m}``, so on a monotone target its passing answers both checks in one run
   and that pool is not asked again.  Only a wide check that fails is followed by
   ``M - {m}`` itself.  So the reported set is 1-minimal on a monotone target (the
   assumption completeness rests on too); non-exhaustive mode asks ``M - {m}``
   directly and is 1-minimal on any target.
4. More sets: first ask ``all - union(found)`` (Go's Skip; finds disjoint
   independent sets cheaply).  When that passes and ``exhaustive`` is on, ask
   ``all - H`` for every minimal hitting set ``H`` of the found sets.  Any
   failing set not containing a found set avoids some such ``H``, so when all
   of these pass, *every* minimal failing set has been found (for a monotone
   target).  When there are several such ``H`` (a found set has two or more
   members), ``all - union`` is skipped: every ``all - H`` holds it, so their
   passing implies it, and if it fails they fail too (one run saved).
   This finds overlapping alternatives such as
   ``c OR (a AND b)`` and ``(a AND b) OR (a AND c)``.  A pool that is a subset of
   a set already seen passing is not asked (monotonicity).
5. Budgets: ``max_sets`` (stop after that many sets), ``max_set_size`` (give up a
   set once ``F`` reaches that size without failing alone), ``max_runs`` (never
   ask more distinct queries).  Stopping early gives a status saying so and the
   sets found so far.

``SKIP``/``FLAKY`` answers are treated as "does not fail" (like ddmin's
unresolved outcome: we never accuse on an uncertain run) and listed in
``result.uncertain`` so the report can say the result may be incomplete.

``strategy="ddmin"`` replaces step 2 with classic ddmin (Zeller & Hildebrandt
2002) for comparison / for targets where prefix monotonicity is doubtful.

Disable mode ("what must be *removed* from a setup to break it") is the same
search on complements: see :func:`disable_mode_oracle` and :func:`complement`.

Section 2b: flaky targets (:class:`SafeToggleSearch`)
=====================================================

With single runs, a failure that shows only some of the time turns into wrong
GOOD verdicts, and the prefix search then returns supersets with spurious
members (or misses a set) -- confidently.  :class:`SafeToggleSearch` drives
:class:`ToggleSearch` with *runs* instead of verdicts: the driver reports how
many runs of a query showed the failure, passed, or could not be judged, and
the verdict is computed from that evidence under one of two rules:

* ``once`` (the default while every run agrees): a search step is one run
  (``repeat``); each confirmation check (``M`` alone, ``M - {m}``) gets
  ``confirm_runs`` runs (default 1: a repro that never disagreed is treated as
  deterministic, and the report says so), each completeness check (a pool) as many.
* ``any`` -- "bad if any of N runs fails": a run that shows the failure settles
  BAD (the driver stops there), GOOD needs N passing runs.  It cannot produce a
  superset with a spurious member from a lucky pass unless N runs all pass.

The switch from ``once`` to ``any`` is automatic as soon as the evidence shows
flakiness: two runs of one query disagree (a repeat, or a confirmation
re-run), a confirmation finds a member whose removal still fails, or one found
set holds another.  Then the failing end (all on) is run to ``calibration_runs``
(twice that when it failed fewer than 5 times) and N comes from its failure
rate ``p``: ``N = runs_for_rate(lower bound of p, 0.05)`` for search steps and
``runs_for_rate(lower bound, 0.001)`` for the checks the result rests on (every
``M - {m}``, every pool including the reverse check ``all - union``, and "all
off"), the lower bound being Wilson's at z = 1.64; a query that several checks
rest on needs that many times the runs.  ``bad_if_any=True`` starts in ``any``
(with ``repeat`` > 1 as the search's N).  The evidence gathered before the
switch is kept (a failing run is a failing run; a pass counts towards N), and a
verdict the evidence later contradicts (a pass, then a failing run) restarts the
inner search from the evidence -- no run is repeated, and no reported set rests
on a verdict the runs contradict.  The state is a function of the evidence, so
a resumed session replays it.  Measured with a seeded fake oracle on five
layouts (tests/test_bisect_flaky.py): at failure rates 1.0, 0.65 and 0.3 the
reported sets are the planted ones or the result is not a confident one; the
residual risk of the default (flakiness never seen by the re-runs) was 2 in
5,000 bisections of the hardest layout at 0.65, 0 in 2,000 with ``--repeat 5``
or ``bad_if_any``.  Known limit: N is calibrated on the failing end; a set that
fails much more rarely than all-on does needs a larger ``repeat``.

Section 3: counting bisection (:func:`find_nth`, :class:`CountSearch`)
======================================================================

PyTorch CompilerBisector / LLVM ``-opt-bisect-limit`` style: a query ``k``
means "enable only the first ``k`` applications"; find the smallest ``k`` that
fails (the ``k``-th application is the one that matters).  Endpoints ``0``
(must pass) and ``max_count`` (must fail), then (k-ary) binary search, stepping
around skipped counts the same way as history bisection (edges of a skipped
range are binary-searched; its inside is not walked unless asked).

Driver loop (toggles and counts; history uses ``next_steps``/``record``)::

    s = ToggleSearch(n, max_runs=..., jobs=J)
    for q, v in persisted_cache.items():      # resume: replay, nothing re-run
        s.record(q, v)
    while not s.done:
        batch = s.next_queries()              # independent: run in parallel
        for q in batch:
            s.record(q, run(q))               # persist (q, v) as well
    s.result
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Callable, Hashable, Iterable, Iterator, Mapping, Sequence

__all__ = [
    "Verdict",
    "HistoryBisect",
    "HistoryResult",
    "bisect_history",
    "ToggleSearch",
    "ToggleResult",
    "find_minimal_sets",
    "CountSearch",
    "CountResult",
    "find_nth",
    "drive",
    "complement",
    "disable_mode_oracle",
    "minimal_hitting_sets",
    "SafeToggleSearch",
    "SafeToggleResult",
    "RunRequest",
    "runs_for_rate",
    "wilson_lower",
    "skip_posterior",
]


class Verdict(str, Enum):
    """Outcome of one bisection step (possibly several repeats)."""

    GOOD = "good"
    BAD = "bad"
    SKIP = "skip"
    FLAKY = "flaky"

    @classmethod
    def from_counts(cls, bad_runs: int, total_runs: int) -> "Verdict":
        """All repeats bad -> BAD, none bad -> GOOD, mixed -> FLAKY, none run -> SKIP."""
        if total_runs <= 0:
            return cls.SKIP
        if bad_runs <= 0:
            return cls.GOOD
        if bad_runs >= total_runs:
            return cls.BAD
        return cls.FLAKY

    @property
    def uncertain(self) -> bool:
        return self in (Verdict.SKIP, Verdict.FLAKY)


def _verdict(v: "Verdict | str") -> Verdict:
    return v if isinstance(v, Verdict) else Verdict(str(v).lower())


# ---------------------------------------------------------------------------
# Section 1: history bisection
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class HistoryResult:
    """State/result of a history bisection.

    status: ``running`` | ``found`` | ``inconclusive`` (every commit left between
    the nearest good and bad verdicts was tried and is untestable; ``candidates``
    is the exact set that may hold the first bad commit: those commits and the
    first bad one after them) | ``flaky`` (like inconclusive, but some candidates
    got FLAKY verdicts: repeat them, listed in ``flaky``) | ``budget_exhausted``
    (``max_runs`` reached first: ``untested`` lists the candidates never tried) |
    ``inconsistent`` (verdicts contradict: no candidate left).
    """

    status: str
    first_bad: str | None
    candidates: tuple[str, ...]
    skipped: tuple[str, ...]
    flaky: tuple[str, ...]
    runs: int
    reason: str = ""
    #: candidates never tried: only when the budget (``max_runs``) stopped the search
    untested: tuple[str, ...] = ()


def skip_posterior(observed: Sequence[bool | None], start: float, cont: float) -> list[float]:
    """P(untestable) at each position of a line of commits (forward-backward, two states).

    The broken-range model: walking from old to new, a testable commit's child is
    untestable with probability ``start`` (a broken range begins) and an
    untestable commit's child stays untestable with probability ``cont``.
    ``observed[i]`` is True (tried: untestable), False (tried: testable) or None
    (not tried).  Observed positions get 1.0 / 0.0.
    """
    n = len(observed)
    if not n:
        return []

    def emit(o: bool | None, untestable: bool) -> float:
        return 1.0 if o is None or o is untestable else 0.0

    tt, ts, st_, ss = 1.0 - start, start, 1.0 - cont, cont
    fwd: list[tuple[float, float]] = []
    a_t, a_s = (1.0 - start) * emit(observed[0], False), start * emit(observed[0], True)
    for i in range(n):
        if i:
            a_t, a_s = ((a_t * tt + a_s * st_) * emit(observed[i], False),
                        (a_t * ts + a_s * ss) * emit(observed[i], True))
        z = a_t + a_s
        a_t, a_s = (a_t / z, a_s / z) if z > 0 else (0.5, 0.5)
        fwd.append((a_t, a_s))
    post = [0.0] * n
    b_t = b_s = 1.0
    for i in range(n - 1, -1, -1):
        p_t, p_s = fwd[i][0] * b_t, fwd[i][1] * b_s
        post[i] = p_s / (p_t + p_s) if p_t + p_s > 0 else 0.5
        e_t, e_s = emit(observed[i], False) * b_t, emit(observed[i], True) * b_s
        b_t, b_s = tt * e_t + ts * e_s, st_ * e_t + ss * e_s
        z = b_t + b_s
        b_t, b_s = (b_t / z, b_s / z) if z > 0 else (1.0, 1.0)
    return post


def _entropy(p: float) -> float:
    if p <= 0.0 or p >= 1.0:
        return 0.0
    return -(p * math.log2(p) + (1.0 - p) * math.log2(1.0 - p))


class HistoryBisect:
    """Driver-agnostic ``git bisect``-like state over a commit DAG.

    ``parents`` maps each commit to its parents (first parent first); commits
    missing from the map are roots.  ``bad`` is a known bad commit, ``goods``
    known good ones (both are taken as recorded verdicts, not as runs).

    Use: ``while not s.done: for c in s.next_steps(j): s.record(c, run(c))``.
    ``record`` may be called in any order and for commits not asked (replay).
    The state is a function of the *set* of recorded verdicts, so replaying a
    persisted verdict log (in order, or all at once) restores it exactly.
    A later GOOD/BAD replaces an earlier verdict for the same commit (e.g. after
    more repeats); a SKIP/FLAKY never downgrades a GOOD/BAD.
    The graph must contain ``bad`` and should contain the goods (give the
    driver's ``git rev-list --parents bad`` plus the goods' ancestry down to the
    merge base); goods outside the graph exclude nothing.

    ``max_runs`` bounds the commits tried (asked, or recorded by a replay; the
    given ends do not count): when it is reached the status is
    ``budget_exhausted`` and ``result.untested`` lists the candidates never tried.
    """

    #: the broken-range model of the step selector (module docstring, section 1):
    #: P(a testable commit's child is untestable), P(an untestable commit's child is too)
    SKIP_START = 0.1
    SKIP_CONTINUE = 0.7

    def __init__(
        self,
        parents: Mapping[str, Sequence[str]],
        bad: str,
        goods: Iterable[str],
        first_parent: bool = False,
        max_runs: int | None = None,
    ) -> None:
        self.parents: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in parents.items()}
        if bad not in self.parents:
            raise ValueError(f"bad commit {bad!r} is not in the graph")
        self.first_parent = first_parent
        self.max_runs = max_runs
        self.initial_bad = bad
        self.initial_goods = tuple(goods)
        self.verdicts: dict[str, Verdict] = {}
        #: per-commit (bad_runs, total_runs) -- hook for probabilistic bisection
        self.evidence: dict[str, tuple[int, int]] = {}
        self.asked: list[str] = []  # distinct commits handed out by next_steps, in order
        self._asked_set: set[str] = set()
        self._ends = {bad, *self.initial_goods}
        self._tried: set[str] = set()  # commits asked or recorded, the given ends excepted
        self._bads: list[str] = [bad]
        self._goods: list[str] = list(self.initial_goods)
        self._order = self._topo_order(bad)
        self._pos = {c: i for i, c in enumerate(self._order)}
        # Bumped by every change of state (record, next_steps): what is derived from the state
        # alone -- the result, the next pick -- is kept for as long as it holds (a driver asks
        # ``done`` and ``peek`` between two verdicts; each is a walk over every candidate).
        self._version = 0
        self._memo: dict[str, tuple[int, object]] = {}
        self._recompute()

    # -- graph helpers -------------------------------------------------------

    def _edges(self, c: str) -> tuple[str, ...]:
        ps = self.parents.get(c, ())
        return ps[:1] if self.first_parent else ps

    def _topo_order(self, start: str) -> list[str]:
        """Ancestors-first order of all commits reachable from ``start`` (full parents)."""
        order: list[str] = []
        seen = {start}
        stack: list[tuple[str, int]] = [(start, 0)]
        while stack:
            c, i = stack.pop()
            ps = self.parents.get(c, ())
            if i < len(ps):
                stack.append((c, i + 1))
                p = ps[i]
                if p not in seen:
                    seen.add(p)
                    stack.append((p, 0))
            else:
                order.append(c)
        return order

    def _closure(self, starts: Iterable[str], edges: Callable[[str], Sequence[str]],
                 within: set[str] | None = None) -> set[str]:
        out: set[str] = set()
        stack = [s for s in starts if within is None or s in within]
        while stack:
            c = stack.pop()
            if c in out:
                continue
            out.add(c)
            for p in edges(c):
                if p not in out and (within is None or p in within):
                    stack.append(p)
        return out

    def _recompute(self) -> None:
        good_anc = self._closure(self._goods, lambda c: self.parents.get(c, ()))
        allowed = set(self._pos) - good_anc
        cands: set[str] | None = None
        for b in self._bads:
            if cands is not None and b in cands:
                cands = self._closure([b], self._edges, within=cands)
            else:
                reach = self._closure([b], self._edges, within=allowed)
                cands = reach if cands is None else (cands & reach)
        self._good_anc = good_anc
        self._set_cands(cands or set())

    def _extend(self, commit: str, v: Verdict) -> bool:
        """``_recompute`` after one more GOOD/BAD verdict, from the state before it: a walk over what
        the verdict removes instead of over the whole graph (~1 ms a step on 1,024 commits). The
        same sets: a good commit's new ancestors leave the candidates (whatever was reachable from
        a bad only through one of them is an ancestor of it too), a bad candidate keeps what it
        reaches among them (as ``_recompute`` does for a later bad). False when the verdict is not
        that plain case (a bad outside the candidates, a good above a bad): then ``_recompute``."""
        if v is Verdict.BAD:
            if commit not in self._cand_set:
                return False
            kept = self._closure([commit], self._edges, within=self._cand_set)
            self._set_cands(kept, [c for c in self._cands if c in kept])
            return True
        seen, gone, stack = self._good_anc, [], [commit]
        while stack:
            c = stack.pop()
            if c in seen:
                continue
            seen.add(c)
            gone.append(c)
            stack.extend(p for p in self.parents.get(c, ()) if p not in seen)
        if any(b in seen for b in self._bads):
            return False  # (the full rule empties the candidates: _recompute says so)
        kept = self._cand_set.difference(gone)
        self._set_cands(kept, [c for c in self._cands if c in kept])
        return True

    def _set_cands(self, cands: set[str], order: list[str] | None = None) -> None:
        """``order``: ``cands`` in ancestors-first order when the caller has it (a subset of the
        candidates, filtered from their order), else sorted here."""
        if order is None:
            order = sorted(cands, key=lambda c: self._pos.get(c, -1))
        self._version += 1
        self._cands = order
        self._cand_set = cands
        # weights
        cparents = {c: [p for p in self._edges(c) if p in cands] for c in order}
        self._linear = all(len(ps) <= 1 for ps in cparents.values())
        self._weight: dict[str, int] = {}
        if self._linear:
            for c in order:
                ps = cparents[c]
                self._weight[c] = 1 + (self._weight[ps[0]] if ps else 0)
        else:
            mask: dict[str, int] = {}
            bit = {c: 1 << i for i, c in enumerate(order)}
            for c in order:
                m = bit[c]
                for p in cparents[c]:
                    m |= mask[p]
                mask[c] = m
                self._weight[c] = m.bit_count()

    # -- public API ----------------------------------------------------------

    @property
    def candidates(self) -> tuple[str, ...]:
        """Commits that may still be the first bad one (ancestors-first order)."""
        return tuple(self._cands)

    def _uncertain_in_cands(self, kind: Verdict | None = None) -> list[str]:
        some = {c for c, v in self.verdicts.items() if v.uncertain and (kind is None or v is kind)}
        if not some:  # (the verdicts are a few; the candidates may be thousands)
            return []
        return [c for c in self._cands if c in some]

    def _testable(self, exclude: Iterable[str] = ()) -> list[str]:
        """Candidates without a verdict (the bad ones excepted): what the search may still try."""
        ex = set(exclude)
        bads = set(self._bads)
        return [c for c in self._cands
                if c not in bads and c not in self.verdicts and c not in ex]

    def record(self, commit: str, verdict: "Verdict | str",
               bad_runs: int | None = None, total_runs: int | None = None) -> None:
        """Record a verdict (optionally with repeat counts, accumulated in ``evidence``)."""
        v = _verdict(verdict)
        self._version += 1
        if bad_runs is not None and total_runs is not None:
            b0, t0 = self.evidence.get(commit, (0, 0))
            self.evidence[commit] = (b0 + bad_runs, t0 + total_runs)
        if commit not in self._ends and commit in self._pos:
            self._tried.add(commit)
        old = self.verdicts.get(commit)
        if old is not None and not old.uncertain and v.uncertain:
            return  # a definitive verdict is not downgraded
        self.verdicts[commit] = v
        if v in (Verdict.BAD, Verdict.GOOD):
            # a corrected verdict (e.g. after more repeats) replaces the old one
            known = commit in self._bads or commit in self._goods
            if commit in self._bads and commit != self.initial_bad:
                self._bads.remove(commit)
            if commit in self._goods and commit not in self.initial_goods:
                self._goods.remove(commit)
            (self._bads if v is Verdict.BAD else self._goods).append(commit)
            if known or not self._extend(commit, v):
                self._recompute()

    def next_steps(self, j: int = 1, exclude: Iterable[str] = ()) -> list[str]:
        """Up to ``j`` commits to test now (empty when done).

        ``exclude``: commits already running (speculative prefetch); they are not
        proposed again.  Returned commits are counted in ``runs``.
        """
        if self.done:
            return []
        if self.max_runs is not None:
            j = min(j, self.max_runs - self.runs)
            if j <= 0:
                return []
        seen = self._memo.get("peek")
        if j == 1 and not exclude and seen is not None and seen[0] == self._version:
            picks = [seen[1]] if seen[1] is not None else []
        else:
            picks = self._choose(max(1, j), self._testable(exclude), self.skip_probability())
        self._version += 1
        for c in picks:
            if c not in self._asked_set:
                self._asked_set.add(c)
                self.asked.append(c)
                if c not in self._ends:
                    self._tried.add(c)
        return picks

    def peek(self) -> str | None:
        """The commit ``next_steps(1)`` would propose now, without asking it (nothing counted): a
        driver readies its checkout while it stores the step just finished."""
        if self.done or (self.max_runs is not None and self.runs >= self.max_runs):
            return None
        seen = self._memo.get("peek")
        if seen is None or seen[0] != self._version:
            picks = self._choose(1, self._testable(), self.skip_probability())
            seen = self._memo["peek"] = (self._version, picks[0] if picks else None)
        return seen[1]

    def skip_probability(self) -> dict[str, float]:
        """P(untestable) of every candidate under the broken-range model (empty when no
        candidate was found untestable yet: then every untried commit counts as testable).

        The chain runs along the candidates in ancestors-first order, after a
        testable start (the good side) and ending at the bad one: exact for a
        line of commits, an approximation across merges (it only steers the
        order of the steps, never what is concluded)."""
        cands = self._cands
        skips = {c for c, v in self.verdicts.items() if v is Verdict.SKIP}
        if not skips or skips.isdisjoint(self._cand_set):
            return {}
        bads = set(self._bads)
        observed: list[bool | None] = [False]
        for c in cands:
            v = self.verdicts.get(c)
            if v is Verdict.SKIP:
                observed.append(True)
            elif c in bads or v in (Verdict.GOOD, Verdict.BAD):
                observed.append(False)
            else:
                observed.append(None)  # untried, or FLAKY (says nothing about the build)
        post = skip_posterior(observed, self.SKIP_START, self.SKIP_CONTINUE)
        return dict(zip(cands, post[1:]))

    def _choose(self, j: int, testable: list[str], p_skip: Mapping[str, float]) -> list[str]:
        """The ``j`` commits with the best expected split (see the module docstring)."""
        if not testable:
            return []
        n = len(self._cands)
        if j == 1 and not p_skip:
            # Every value is _entropy(min(w, n - w) / n), which falls as |2w - n| grows: the key
            # below without it orders the commits the same (and skips a log per candidate).
            weight, pos = self._weight, self._pos
            best, best_key = None, None
            for c in testable:
                w = weight[c]
                key = (-abs(2 * w - n), w == 2 if n == 3 else -pos.get(c, 0))
                if best_key is None or key > best_key:
                    best, best_key = c, key
            return [best] if best is not None else []
        if j == 1:
            best, best_key = None, None
            for c in testable:
                w = self._weight[c]
                value = (1.0 - p_skip.get(c, 0.0)) * _entropy(min(w, n - w) / n)
                # ties like git's rev-list --bisect: the older of two equal halves, but
                # the newer of the two commits before a bad one
                key = (value, -abs(2 * w - n), w == 2 if n == 3 else -self._pos.get(c, 0))
                if best_key is None or key > best_key:
                    best, best_key = c, key
            return [best] if best is not None else []
        spacing = n / (j + 1)
        picks: list[str] = []
        taken: set[str] = set()
        for i in range(1, j + 1):
            target = i * spacing
            best = None
            best_key = None
            for c in testable:
                if c in taken:
                    continue
                w = self._weight[c]
                value = (1.0 - p_skip.get(c, 0.0)) * max(0.0, spacing - abs(w - target))
                key = (value, -abs(w - target), -self._pos.get(c, 0))
                if best_key is None or key > best_key:
                    best, best_key = c, key
            if best is None:
                break
            picks.append(best)
            taken.add(best)
        # stable order: ancestors first
        return sorted(picks, key=lambda c: self._pos.get(c, 0))

    @property
    def done(self) -> bool:
        return self.result.status != "running"

    @property
    def runs(self) -> int:
        """Commits tried: asked by ``next_steps`` or recorded (a replay), the given ends not counted."""
        return len(self._tried)

    def estimated_steps_left(self, j: int = 1) -> int:
        n = len(self._testable()) + 1
        if n <= 1 or self.done:
            return 0
        est = math.ceil(math.log(n) / math.log(j + 1) - 1e-9)
        if self.max_runs is not None:
            est = min(est, max(0, self.max_runs - self.runs))
        return est

    @property
    def result(self) -> HistoryResult:
        seen = self._memo.get("result")
        if seen is None or seen[0] != self._version:
            seen = self._memo["result"] = (self._version, self._result())
        return seen[1]

    def _result(self) -> HistoryResult:
        cands = tuple(self._cands)
        skipped = tuple(self._uncertain_in_cands(Verdict.SKIP))
        flaky = tuple(self._uncertain_in_cands(Verdict.FLAKY))
        if not cands:
            return HistoryResult("inconsistent", None, (), skipped, flaky, self.runs,
                                 "no commit can be the first bad one: a bad commit is an "
                                 "ancestor of a good one, or the good/bad ends are swapped")
        if len(cands) == 1:
            c = cands[0]
            why = "tested bad, all its parents good" if self.verdicts.get(c) is Verdict.BAD \
                or c in self._bads else "only remaining candidate"
            return HistoryResult("found", c, cands, skipped, flaky, self.runs, why)
        open_ = self._testable()
        if open_:
            waiting = any(c not in self.verdicts for c in self.asked)
            if self.max_runs is None or self.runs < self.max_runs or waiting:
                return HistoryResult("running", None, cands, skipped, flaky, self.runs)
            return HistoryResult("budget_exhausted", None, cands, skipped, flaky, self.runs,
                                 f"max_runs={self.max_runs} reached with {len(open_)} candidate(s) "
                                 "never tried", tuple(open_))
        if flaky:
            return HistoryResult("flaky", None, cands, skipped, flaky, self.runs,
                                 "flaky commits remain among the candidates: repeat them")
        return HistoryResult("inconclusive", None, cands, skipped, flaky, self.runs,
                             "every commit left between the nearest good and bad verdicts was "
                             "tried and is untestable; the first bad commit is one of the candidates")


def bisect_history(
    parents: Mapping[str, Sequence[str]],
    bad: str,
    goods: Iterable[str],
    oracle: Callable[[str], "Verdict | str"],
    *,
    first_parent: bool = False,
    jobs: int = 1,
    max_runs: int | None = None,
) -> tuple[HistoryResult, int]:
    """Run a history bisection to the end with ``oracle(commit) -> Verdict``.

    Returns ``(result, rounds)``; ``result.runs`` is the number of oracle calls.
    """
    s = HistoryBisect(parents, bad, goods, first_parent=first_parent, max_runs=max_runs)
    rounds = 0
    while not s.done:
        steps = s.next_steps(jobs)
        if not steps:
            break
        rounds += 1
        for c in steps:
            s.record(c, oracle(c))
    return s.result, rounds


# ---------------------------------------------------------------------------
# Coroutine machinery shared by the toggle and counting searches
# ---------------------------------------------------------------------------


class _BudgetExhausted(Exception):
    pass


class _QuerySearch:
    """Runs a generator-based algorithm as a resumable, batchable state machine.

    Subclasses implement ``_algorithm()`` (a generator) and use
    ``vs = yield from self._ask([q1, q2])`` to get verdicts.
    """

    max_runs: int | None = None
    #: ``recheck(q) -> bool``: forget q's verdict when it is asked again (for a stronger purpose)
    recheck: Callable[[Hashable], bool] | None = None

    def __init__(self) -> None:
        self.verdicts: dict[Hashable, Verdict] = {}
        self.asked: list[Hashable] = []  # distinct queries the algorithm asked, in order
        self._asked_set: set[Hashable] = set()
        self.uncertain: list[tuple[Hashable, Verdict]] = []
        self._uncertain_seen: set[Hashable] = set()
        self.purpose: dict[Hashable, str] = {}
        #: how many confirmation / completeness checks rest on each query
        self.checks: dict[Hashable, int] = {}
        self._pending: list[Hashable] = []
        self._final = None
        self._gen = self._algorithm()
        self._advance()

    # subclass API
    def _algorithm(self) -> Iterator[list[Hashable]]:  # pragma: no cover
        raise NotImplementedError

    def _normalize(self, q: Hashable) -> Hashable:
        return q

    #: why a query was asked, strongest reason kept: the run-level layer (:class:`SafeToggleSearch`)
    #: runs confirmation and completeness checks harder than search steps
    PURPOSES = ("search", "endpoint", "pool", "confirm")

    def _ask(self, queries: Sequence[Hashable], purpose: str = "search"):
        queries = list(dict.fromkeys(queries))
        for q in queries:
            old = self.purpose.get(q)
            if old is None or self.PURPOSES.index(purpose) > self.PURPOSES.index(old):
                self.purpose[q] = purpose
            if purpose in ("pool", "confirm"):
                self.checks[q] = self.checks.get(q, 0) + 1
        if self.recheck is not None:  # a stricter purpose may need more evidence than the verdict had
            for q in queries:
                if q in self.verdicts and self.recheck(q):
                    del self.verdicts[q]
        new = [q for q in queries if q not in self._asked_set]
        if self.max_runs is not None and len(self.asked) + len(new) > self.max_runs:
            raise _BudgetExhausted()
        for q in new:
            self._asked_set.add(q)
            self.asked.append(q)
        if any(q not in self.verdicts for q in queries):
            yield queries
        out = [self.verdicts[q] for q in queries]
        for q, v in zip(queries, out):
            if v.uncertain and q not in self._uncertain_seen:
                self._uncertain_seen.add(q)
                self.uncertain.append((q, v))
        return out

    def _advance(self) -> None:
        while self._final is None and all(q in self.verdicts for q in self._pending):
            try:
                self._pending = next(self._gen)
            except StopIteration as stop:
                self._final = stop.value
                self._pending = []

    # public API
    def next_queries(self) -> list:
        """Queries to run now (independent: run them in parallel). Empty when done."""
        return [q for q in self._pending if q not in self.verdicts]

    def record(self, query: Hashable, verdict: "Verdict | str") -> None:
        """Give a verdict for a query (asked or not: unasked ones act as a cache)."""
        q = self._normalize(query)
        if q not in self.verdicts:
            self.verdicts[q] = _verdict(verdict)
        self._advance()

    @property
    def done(self) -> bool:
        return self._final is not None

    @property
    def runs(self) -> int:
        return len(self.asked)


def drive(search: "_QuerySearch", oracle: Callable | None = None,
          batch_oracle: Callable[[list], Sequence] | None = None):
    """Run ``search`` to the end with ``oracle(q)`` or ``batch_oracle([q...])``."""
    while not search.done:
        qs = search.next_queries()
        if batch_oracle is not None:
            vs = list(batch_oracle(qs))
        else:
            vs = [oracle(q) for q in qs]
        for q, v in zip(qs, vs):
            search.record(q, v)
    return search.result


# ---------------------------------------------------------------------------
# Section 2: toggle bisection
# ---------------------------------------------------------------------------


def minimal_hitting_sets(sets: Sequence[frozenset], limit: int = 4096) -> list[frozenset]:
    """All minimal hitting sets (transversals) of ``sets``, deterministic order.

    Raises OverflowError when more than ``limit`` partial sets are explored.
    """
    sets = sorted({frozenset(s) for s in sets}, key=lambda s: (len(s), sorted(s)))
    if not sets:
        return [frozenset()]
    found: set[frozenset] = set()
    budget = [limit]

    def rec(h: frozenset) -> None:
        budget[0] -= 1
        if budget[0] < 0:
            raise OverflowError("too many hitting sets")
        for s in sets:
            if not (s & h):
                for e in sorted(s):
                    rec(h | {e})
                return
        found.add(h)

    rec(frozenset())
    minimal = [h for h in found if not any(o < h for o in found)]
    return sorted(minimal, key=lambda h: (len(h), sorted(h)))


def complement(n: int, s: Iterable[int]) -> frozenset[int]:
    """``{0..n-1} - s``: maps an enabled set to a disabled set and back."""
    return frozenset(range(n)) - frozenset(s)


def disable_mode_oracle(n: int, test: Callable[[frozenset], "Verdict | str"]):
    """Disable mode: search over *disabled* sets.

    ``test(enabled)`` is the real oracle.  The returned oracle takes the set of
    disabled toggles, so :class:`ToggleSearch` finds minimal sets whose removal
    makes the failure appear (all-disabled fails, nothing disabled passes).
    """
    universe = frozenset(range(n))
    return lambda disabled: test(universe - frozenset(disabled))


@dataclass(frozen=True)
class ToggleResult:
    """Result of a toggle search.

    status: ``running`` | ``complete`` (every minimal set found; with
    ``exhaustive=False`` every *disjoint* one) | ``max_sets`` | ``max_set_size`` |
    ``budget_exhausted`` (max_runs) | ``too_many_alternatives`` |
    ``bad_endpoints`` | ``inconsistent`` (a found set failed its confirmation).
    ``sets`` are the confirmed minimal sets (sorted tuples), in discovery order.
    ``uncertain`` lists (query, verdict) for SKIP/FLAKY answers that were treated
    as "does not fail": when non-empty the result may be incomplete or too large.
    """

    status: str
    sets: tuple[tuple[int, ...], ...]
    runs: int
    uncertain: tuple[tuple[tuple[int, ...], Verdict], ...] = ()
    message: str = ""

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    @property
    def certain(self) -> bool:
        return not self.uncertain


class ToggleSearch(_QuerySearch):
    """Find every minimal failing set of toggles (see module docstring, section 2).

    Queries are ``frozenset[int]`` of enabled toggles.  ``jobs > 1`` asks up to
    ``jobs`` queries per batch (k-ary prefix search, batched confirmations and
    pool checks).
    """

    def __init__(
        self,
        n: int,
        *,
        max_sets: int | None = None,
        max_set_size: int | None = None,
        max_runs: int | None = None,
        exhaustive: bool = True,
        jobs: int = 1,
        strategy: str = "auto",
        max_alternatives: int = 4096,
    ) -> None:
        if strategy not in ("auto", "bisect", "ddmin"):
            raise ValueError(f"unknown strategy {strategy!r}")
        self.n = n
        self.universe = frozenset(range(n))
        self.max_sets = max_sets
        self.max_set_size = max_set_size
        self.max_runs = max_runs
        self.exhaustive = exhaustive
        self.jobs = max(1, jobs)
        self.strategy = strategy
        self.max_alternatives = max_alternatives
        self.found: list[frozenset[int]] = []
        #: (set, member) pairs the confirmation dropped: removing the member still failed, which a
        #: monotone, deterministic target never does (flakiness, or a non-monotone target)
        self.dropped: list[tuple[frozenset[int], int]] = []
        super().__init__()

    def _normalize(self, q: Hashable) -> Hashable:
        return frozenset(q)

    def _fails(self, v: Verdict) -> bool:
        return v is Verdict.BAD

    # -- result ---------------------------------------------------------------

    @property
    def result(self) -> ToggleResult:
        status, msg = self._final if self._final is not None else ("running", "")
        unc = tuple((tuple(sorted(q)), v) for q, v in self.uncertain)
        return ToggleResult(status, tuple(tuple(sorted(s)) for s in self.found),
                            self.runs, unc, msg)

    # -- algorithm ------------------------------------------------------------

    def _algorithm(self):
        try:
            return (yield from self._main())
        except _BudgetExhausted:
            return ("budget_exhausted", f"max_runs={self.max_runs} reached")

    def _main(self):
        U, empty = self.universe, frozenset()
        v_all, v_none = yield from self._ask([U, empty], "endpoint")
        if not self._fails(v_all) or v_none is not Verdict.GOOD:
            return ("bad_endpoints",
                    f"all toggles on: {v_all.value} (need bad); none: {v_none.value} (need good)")
        pool: frozenset[int] | None = U
        while pool is not None:
            m = yield from self._find_one(sorted(pool))
            if m is None:
                return ("max_set_size",
                        f"a failing pool needs more than max_set_size={self.max_set_size} toggles")
            m = yield from self._confirm(m, self.universe - pool)
            if m is None:
                return ("inconsistent", "a set found failing did not fail when run alone")
            self.found.append(m)
            if self.max_sets is not None and len(self.found) >= self.max_sets:
                return ("max_sets", f"stopped after max_sets={self.max_sets}")
            pool = yield from self._next_pool()
            if isinstance(pool, tuple):  # status
                return pool
        return ("complete", "")

    def _known_not_failing(self, q: frozenset) -> bool:
        return any(v is Verdict.GOOD and q <= k and k in self._asked_set for k, v in self.verdicts.items())

    def _next_pool(self):
        """A failing pool that avoids every found set, or None when none is left."""
        U = self.universe
        union = frozenset().union(*self.found)
        hs, overflow = None, False
        if self.exhaustive:
            try:
                hs = minimal_hitting_sets(self.found, self.max_alternatives)
            except OverflowError:
                overflow = True
        if hs is None or len(hs) == 1:
            # with one hitting set its pool is ``all - union``; with several, each pool holds
            # ``all - union``, so it is not asked on its own (their passing implies it); a pool the
            # confirmation already saw pass (:meth:`_wide_removal`) is not asked again
            if not self._known_not_failing(U - union):
                (v,) = yield from self._ask([U - union], "pool")
                if self._fails(v):
                    return U - union
            if overflow:
                return ("too_many_alternatives", "too many combinations of found sets to check")
            if hs is None:
                return None
        pools = [U - h for h in hs]
        pools = [p for p in pools if not self._known_not_failing(p)]
        for i in range(0, len(pools), self.jobs):
            batch = [p for p in pools[i:i + self.jobs] if not self._known_not_failing(p)]
            if not batch:
                continue
            vs = yield from self._ask(batch, "pool")
            for p, v in zip(batch, vs):
                if self._fails(v):
                    return p
        return None

    def _wide_removal(self, h0: frozenset, e: int, m: frozenset) -> frozenset:
        """The completeness pool that removes ``e``: ``all - h`` for a minimal hitting set ``h`` of
        the found sets and ``m`` grown from ``h0 + {e}`` (``m`` avoids ``h0``, so ``m & h == {e}``).
        It holds ``m - {e}``, so its passing settles both that member's necessity and that pool."""
        sets = [*self.found, m]
        h = set(h0) | {e}
        for x in sorted(h0):
            if all(s & (h - {x}) for s in sets):
                h.discard(x)
        return self.universe - frozenset(h)

    def _confirm(self, m: frozenset, h0: frozenset = frozenset()):
        """Confirm ``m`` fails and is 1-minimal; drop members whose removal still fails.

        ``m`` was found in the pool ``all - h0``.  A member's removal is first asked as the wide
        query of :meth:`_wide_removal` (when exhaustive): one query answers two checks when it passes
        (the monotone target then passes ``m - {e}``), and the pool is not asked again later.  Only
        a wide query that fails (another failing set, or ``e`` not needed) is followed by the narrow
        ``m - {e}``; after one such failure the rest are asked narrow, since another set is likely."""
        while True:
            members = sorted(m)
            (v,) = yield from self._ask([m], "confirm")
            if not self._fails(v):
                return None
            wide_ok = self.exhaustive
            dropped = None
            for i in range(0, len(members), self.jobs):
                batch = members[i:i + self.jobs]
                qs = [self._wide_removal(h0, e, m) if wide_ok else m - {e} for e in batch]
                vs = yield from self._ask(qs, "confirm")
                narrow = [e for e, q, v in zip(batch, qs, vs) if self._fails(v) and q != m - {e}]
                if narrow:
                    wide_ok = False
                    vs = yield from self._ask([m - {e} for e in narrow], "confirm")
                    batch = narrow
                dropped = next((e for e, v in zip(batch, vs) if self._fails(v)), None)
                if dropped is not None:
                    break
            if dropped is None:
                return m
            self.dropped.append((m, dropped))
            m = m - {dropped}

    def _find_one(self, pool: list[int]):
        if self.strategy == "ddmin":
            res = yield from self._ddmin(pool)
            if self.max_set_size is not None and len(res) > self.max_set_size:
                return None
            return res
        return (yield from self._prefix_search(pool))

    def _prefix_search(self, pool: list[int]):
        """One minimal failing subset of ``pool`` (which fails); see docstring step 2."""
        F: set[int] = set()
        top = len(pool)
        hi = top  # pool[:hi] | F fails (known)
        q = lambda i: frozenset(pool[:i]) | F  # noqa: E731
        while True:
            if hi == 0:
                break  # F alone is pool[:0] | F, known to fail
            gap = (top - hi) / len(F) if F else None
            # Dense sets: after a few members found close together, expect more
            # and gallop down (no "F alone?" check); otherwise check and halve.
            gallop = (self.strategy == "auto" and len(F) >= 4 and gap is not None
                      and gap <= 4 and 2 * math.log2(gap + 1) + 1 < math.log2(hi + 1))
            if self.max_set_size is not None and len(F) >= self.max_set_size:
                (v,) = yield from self._ask([q(0)])
                if self._fails(v):
                    break
                return None
            if gallop:
                i = yield from self._gallop(q, hi)
            else:
                if F:
                    (v,) = yield from self._ask([q(0)])  # is F already complete?
                    if self._fails(v):
                        break
                i = yield from self._search_min(q, 0, hi)
            if i == 0:
                break
            F.add(pool[i - 1])
            hi = i - 1
        return frozenset(F)

    def _search_min(self, q, lo: int, hi: int):
        """Smallest i in (lo, hi] with q(i) failing; q(lo) not failing, q(hi) failing."""
        J = self.jobs
        while hi - lo > 1:
            pts = sorted({lo + ((hi - lo) * t) // (J + 1) for t in range(1, J + 1)} - {lo, hi})
            if not pts:
                pts = [(lo + hi) // 2]
            vs = yield from self._ask([q(p) for p in pts])
            fails = [p for p, v in zip(pts, vs) if self._fails(v)]
            if fails:
                hi = min(fails)
            lo = max([lo] + [p for p, v in zip(pts, vs) if not self._fails(v) and p < hi])
        return hi

    def _gallop(self, q, hi: int):
        """Smallest i in [0, hi] with q(i) failing, probing hi-1, hi-2, hi-4, ... first."""
        J = self.jobs
        step = 1
        lo = -1
        while True:
            pts = []
            s = step
            for _ in range(J):
                p = max(hi - s, 0)
                if p not in pts:
                    pts.append(p)
                if p == 0:
                    break
                s *= 2
            step = s
            vs = yield from self._ask([q(p) for p in pts])
            passed = [p for p, v in zip(pts, vs) if not self._fails(v)]
            failed = [p for p, v in zip(pts, vs) if self._fails(v)]
            if passed:
                lo = max(passed)
                failed_above = [p for p in failed if p > lo]
                hi = min(failed_above) if failed_above else hi
                break
            hi = min(failed)
            if hi == 0:
                return 0
        return (yield from self._search_min(q, lo, hi))

    def _ddmin(self, pool: list[int]):
        """Classic ddmin (subsets, then complements; granularity doubling)."""
        config = list(pool)
        n = 2
        while len(config) >= 2:
            size = len(config)
            chunks = [config[(size * i) // n:(size * (i + 1)) // n] for i in range(n)]
            chunks = [c for c in chunks if c]
            reduced = False
            for c in chunks:
                (v,) = yield from self._ask([frozenset(c)])
                if self._fails(v):
                    config, n, reduced = c, 2, True
                    break
            if not reduced and len(chunks) > 2:
                for i in range(len(chunks)):
                    comp = [x for j, c in enumerate(chunks) if j != i for x in c]
                    (v,) = yield from self._ask([frozenset(comp)])
                    if self._fails(v):
                        config, n, reduced = comp, max(n - 1, 2), True
                        break
            if not reduced:
                if n >= len(config):
                    break
                n = min(2 * n, len(config))
        return frozenset(config)


def find_minimal_sets(
    n: int,
    test: Callable[[frozenset], "Verdict | str"] | None = None,
    *,
    batch_test: Callable[[list], Sequence] | None = None,
    **options,
) -> ToggleResult:
    """Convenience loop: run :class:`ToggleSearch` to the end with an oracle."""
    s = ToggleSearch(n, **options)
    return drive(s, test, batch_test)


# ---------------------------------------------------------------------------
# Section 2b: flaky-safe toggle bisection (runs, not verdicts)
# ---------------------------------------------------------------------------


def wilson_lower(k: int, n: int, z: float = 1.28) -> float:
    """Lower bound of a rate seen ``k`` times in ``n`` (Wilson score; z=1.28: 90 % one-sided)."""
    if n <= 0:
        return 0.0
    p = k / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, (centre - half) / (1 + z * z / n))


def runs_for_rate(rate: float, alpha: float, cap: int = 200) -> int:
    """The N for "bad if any of N runs fails": a target failing with probability ``rate`` passes
    all N runs with probability at most ``alpha``, ``(1 - rate) ** N <= alpha``."""
    if rate >= 1.0:
        return 1
    if rate <= 0.0:
        return cap
    return max(1, min(cap, math.ceil(math.log(alpha) / math.log(1.0 - rate) - 1e-9)))


@dataclass(frozen=True)
class RunRequest:
    """Run ``query`` up to ``runs`` more times.  ``stop``: ``"bad"`` = stop at the first run that
    shows the failure, ``"mixed"`` = stop as soon as two runs disagree, None = run them all (the
    failing end's rate is being measured)."""

    query: frozenset
    runs: int
    stop: str | None


@dataclass(frozen=True)
class SafeToggleResult:
    """Result of :class:`SafeToggleSearch`.

    status: ``running`` | ``complete`` | ``unsure`` (a set found failing did not fail again) |
    ``bad_endpoints`` | the inner search's budget statuses (``budget_exhausted``, ``max_sets``,
    ``max_set_size``, ``too_many_alternatives``).  ``rule``: ``"once"`` (every run agreed: one
    run per search step, ``confirm_runs`` per confirmation check) or ``"any"`` ("bad if any of
    ``n_search`` runs fails"; each member's removal confirmed with ``n_confirm`` passing runs).
    ``failing_end``: (runs that failed, runs) of the failing end (all toggles on).
    """

    status: str
    sets: tuple[tuple[int, ...], ...]
    queries: int
    runs: int
    rule: str
    failing_end: tuple[int, int]
    n_search: int
    n_confirm: int
    uncertain: tuple = ()
    message: str = ""
    #: the chance that a culprit passed every run of a passing confirmation check (a flaky member
    #: hidden in the passes): from the failures seen while every run agreed, else the failing end's rate
    miss_chance: float = 0.0

    @property
    def flaky(self) -> bool:
        return self.rule == "any"


class SafeToggleSearch:
    """:class:`ToggleSearch` driven by *runs*: safe on flaky targets (module docstring, section 2b).

    Queries are frozensets of enabled toggle indices.  Loop::

        s = SafeToggleSearch(n)
        while not s.done:
            for req in s.next_runs():                # independent: may run in parallel
                bad, good, skip = run(req)           # up to req.runs runs, stopping per req.stop
                s.record(req.query, bad, good, skip)
        s.result

    ``record`` may also be called for queries not asked (a resumed session's evidence): the state
    is a function of the evidence, so replaying it restores the same search.
    """

    def __init__(self, n: int, *, repeat: int = 1, bad_if_any: bool = False, confirm_runs: int = 1,
                 calibration_runs: int = 10, alpha: float = 0.05, alpha_confirm: float = 0.001,
                 **search_options) -> None:
        self.n = n
        self.universe = frozenset(range(n))
        self.repeat = max(1, repeat)
        self.bad_if_any = bad_if_any
        self.confirm_runs = max(1, confirm_runs)
        self.calibration_runs = max(2, calibration_runs, self.repeat)
        self.alpha = alpha
        self.alpha_confirm = alpha_confirm
        self.options = search_options
        self.evidence: dict[frozenset, tuple[int, int, int]] = {}
        self.runs = 0
        self.rule = "any" if bad_if_any else "once"
        self.calibration: tuple[int, int] | None = None  # (n_search, n_confirm) once the rate is known
        self.inner = self._new_inner()
        self._advance()

    def _new_inner(self) -> ToggleSearch:
        self._fed: dict[frozenset, Verdict] = {}  # the verdicts this search was given
        inner = ToggleSearch(self.n, **self.options)
        inner.recheck = lambda q: self.verdict(q) is None
        return inner

    # -- evidence ----------------------------------------------------------------

    def record(self, query: Iterable[int], bad: int, good: int, skip: int = 0, counted: bool = True) -> None:
        """Add runs judged bad / good / untestable for ``query`` (``counted=False``: not repro runs,
        e.g. a verdict marked by hand)."""
        q = frozenset(query)
        b, g, s = self.evidence.get(q, (0, 0, 0))
        self.evidence[q] = (b + bad, g + good, s + skip)
        if counted:
            self.runs += bad + good + skip
        self._advance()

    def _flakiness_seen(self) -> bool:
        """A repeat or re-run disagreed, or the confirmation or the found sets contradict a
        deterministic, monotone target (a member whose removal still fails; a set that holds
        another one, so it was not minimal)."""
        found = self.inner.found
        return (bool(self.inner.dropped) or any(b and g for b, g, _ in self.evidence.values())
                or any(a < b for a in found for b in found))

    def _need(self, q: frozenset) -> tuple[int, str | None]:
        """Runs the verdict of ``q`` needs, and when its runs may stop early.  Every check a
        reported set rests on gets its own runs: a query used by k checks needs k times as many."""
        purpose = self.inner.purpose.get(q, "search")
        checks = max(1, self.inner.checks.get(q, 0))
        if self.rule == "once":
            if purpose == "pool":  # a completeness check: one run (more found sets are re-confirmed)
                return max(self.repeat, self.confirm_runs) * checks, "bad"
            if purpose != "confirm":
                return self.repeat, "mixed"
            # a repro that never disagreed: a check that fails is settled by that failure; one that
            # passes (a member's removal: where a flaky member would hide) is repeated only until a
            # miss that long is improbable (``_pass_runs``)
            return max(self.repeat, self._pass_runs()) * checks, "bad"
        n_search, n_confirm = self.calibration or (self.repeat, self.repeat)
        strict = purpose in ("confirm", "pool") or (purpose == "endpoint" and not q)
        return (n_confirm * checks if strict else n_search), "bad"

    def _miss_chance(self, k: int) -> float:
        """P(a culprit's run passes ``k`` times in a row): with P(fail | bad) ~ Beta(1 + f, 1) from the
        ``f`` agreeing failures (rule "once"), or at the failing end's 90 % lower rate (rule "any")."""
        if self.rule == "once":
            f = sum(b for b, _, _ in self.evidence.values())
            return math.exp(math.lgamma(k + 1) + math.lgamma(f + 2) - math.lgamma(f + k + 2))
        b, g, _ = self.evidence.get(self.universe, (0, 0, 0))
        return (1 - wilson_lower(b, b + g)) ** k

    def _pass_runs(self) -> int:
        """Runs a passing confirmation check gets while every run agreed: the fewest ``k`` that make
        "a culprit's run passed ``k`` times in a row" improbable (<= ``alpha``) given the failures
        seen so far, each a run where the failure showed (P(fail | bad) ~ Beta(1 + f, 1): the chance
        is ``k! (f + 1)! / (f + k + 1)!``). Many agreeing failures: one run; few: up to the old 3."""
        for k in range(self.confirm_runs, 3):
            if self._miss_chance(k) <= self.alpha:
                return k
        return 3

    def verdict(self, q: frozenset) -> Verdict | None:
        """The verdict the evidence gives ``q`` under the current rule (None: more runs needed)."""
        b, g, s = self.evidence.get(q, (0, 0, 0))
        need, stop = self._need(q)
        if self.rule == "once":
            if b and g:
                return Verdict.FLAKY
            if b and stop == "bad":  # a confirmation check that failed: settled at once
                return Verdict.BAD
            if b + g + s < need:
                return None
            if s:
                return Verdict.SKIP
            return Verdict.BAD if b else Verdict.GOOD
        if b:
            return Verdict.BAD  # a run that shows the failure is the failure
        if g >= need:
            return Verdict.GOOD
        if g + s >= need:
            return Verdict.SKIP
        return None

    # -- the state machine -------------------------------------------------------

    def _calibrate(self) -> bool:
        b, g, _ = self.evidence.get(self.universe, (0, 0, 0))
        want = self.calibration_runs * (2 if b < 5 else 1)
        if b + g < want:
            return False
        low = wilson_lower(b, b + g, 1.64)
        n_search = self.repeat if self.bad_if_any and self.repeat > 1 else runs_for_rate(low, self.alpha)
        self.calibration = (n_search, max(n_search, runs_for_rate(low, self.alpha_confirm)))
        return True

    def _advance(self) -> None:
        while True:
            if self.rule == "once" and self._flakiness_seen():
                # a repeat or a re-run disagreed: single runs cannot be trusted, start again with
                # "bad if any of N runs fails" (the evidence so far is kept: it is still evidence)
                self.rule = "any"
                self.inner = self._new_inner()
                continue
            if self.rule == "any" and self.calibration is None and not self._calibrate():
                return
            for q in self.inner.next_queries():
                v = self.verdict(q)
                if v is None:
                    continue
                if v is Verdict.BAD and self._fed.get(q, Verdict.BAD) is not Verdict.BAD:
                    # a run has since shown the failure where a verdict said it passed: no verdict
                    # is kept against the evidence, the search replays from it (no run repeated)
                    self.inner = self._new_inner()
                    break
                self._fed[q] = v
                self.inner.record(q, v)
                break
            else:
                return

    def next_runs(self) -> list[RunRequest]:
        """What to run now (empty when done)."""
        if self.done:
            return []
        if self.rule == "any" and self.calibration is None:
            b, g, _ = self.evidence.get(self.universe, (0, 0, 0))
            want = self.calibration_runs * (2 if b < 5 else 1)
            return [RunRequest(self.universe, max(1, want - b - g), None)]
        out = []
        for q in self.inner.next_queries():
            if self.verdict(q) is None:
                need, stop = self._need(q)
                b, g, s = self.evidence.get(q, (0, 0, 0))
                out.append(RunRequest(q, max(1, need - (b + g + s)), stop))
        return out

    @property
    def done(self) -> bool:
        return self.inner.done

    @property
    def result(self) -> SafeToggleResult:
        r = self.inner.result
        status, msg = r.status, r.message
        if status == "inconsistent":
            status, msg = "unsure", "a set found failing did not fail again when run alone"
        b, g, _ = self.evidence.get(self.universe, (0, 0, 0))
        n_search, n_confirm = self.calibration or (self.repeat, max(self.repeat, self._pass_runs()))
        return SafeToggleResult(status, r.sets, r.runs, self.runs, self.rule, (b, b + g), n_search, n_confirm,
                                r.uncertain, msg, self._miss_chance(n_confirm) if r.sets else 0.0)


# ---------------------------------------------------------------------------
# Section 3: counting bisection
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CountResult:
    """status: running | found | inconclusive (skips) | bad_endpoints | budget_exhausted.

    ``nth``: the smallest failing count (the application that matters) when found;
    ``low``/``high``: the final bracket (``low`` passes, ``high`` fails).
    """

    status: str
    nth: int | None
    low: int
    high: int
    runs: int
    uncertain: tuple = ()
    message: str = ""


class CountSearch(_QuerySearch):
    """Binary (or k-ary) search of the first failing count in ``0..max_count``.

    Queries are ints ``k``: "enable only the first k applications".
    """

    def __init__(self, max_count: int, *, jobs: int = 1, max_runs: int | None = None,
                 probe_skip_ranges: bool = False) -> None:
        self.max_count = max_count
        self.probe_skip_ranges = probe_skip_ranges
        self.jobs = max(1, jobs)
        self.max_runs = max_runs
        self._bracket = (0, max_count)
        super().__init__()

    def _normalize(self, q: Hashable) -> Hashable:
        return int(q)  # type: ignore[arg-type]

    @property
    def result(self) -> CountResult:
        status, nth, msg = self._final if self._final is not None else ("running", None, "")
        lo, hi = self._bracket
        return CountResult(status, nth, lo, hi, self.runs, tuple(self.uncertain), msg)

    def _algorithm(self):
        try:
            return (yield from self._main())
        except _BudgetExhausted:
            return ("budget_exhausted", None, f"max_runs={self.max_runs} reached")

    def _main(self):
        v0, vm = yield from self._ask([0, self.max_count])
        if v0 is not Verdict.GOOD or vm is not Verdict.BAD:
            return ("bad_endpoints", None,
                    f"count 0: {v0.value} (need good); count {self.max_count}: {vm.value} (need bad)")
        lo, hi = 0, self.max_count
        unknown: set[int] = set()
        while True:
            self._bracket = (lo, hi)
            inside = sorted(k for k in unknown if lo < k < hi)
            if not inside:
                pts = sorted({int(round(lo + (hi - lo) * t / (self.jobs + 1)))
                              for t in range(1, self.jobs + 1)} - {lo, hi})
                if not pts and hi - lo > 1:
                    pts = [(lo + hi) // 2]
            else:
                # Skipped counts form a range: do not walk through it; binary-search
                # its edges (the gaps between the bracket and the skipped range).
                gaps = [(lo, inside[0]), (inside[-1], hi)]
                if self.probe_skip_ranges:
                    gaps += [(a, b) for a, b in zip(inside, inside[1:])]
                pts = []
                for _ in range(self.jobs):
                    gaps.sort(key=lambda g: (g[1] - g[0], -g[0]))
                    a, b = gaps[-1]
                    if b - a <= 1:
                        break
                    m = (a + b) // 2
                    pts.append(m)
                    gaps[-1:] = [(a, m), (m, b)]
            if not pts:
                break
            pts.sort()
            vs = yield from self._ask(pts)
            for p, v in zip(pts, vs):
                if v.uncertain:
                    unknown.add(p)
            fails = [p for p, v in zip(pts, vs) if v is Verdict.BAD]
            if fails:
                hi = min(fails)
            goods = [p for p, v in zip(pts, vs) if v is Verdict.GOOD and p < hi]
            if goods:
                lo = max([lo] + goods)
        self._bracket = (lo, hi)
        if hi - lo == 1:
            return ("found", hi, "")
        return ("inconclusive", None,
                f"counts {lo + 1}..{hi} could be the first failing one (skipped, or inside a "
                "skipped range and not tried)")


def find_nth(max_count: int, oracle: Callable[[int], "Verdict | str"], *, jobs: int = 1,
             max_runs: int | None = None, probe_skip_ranges: bool = False) -> CountResult:
    """Find the smallest ``k`` in ``1..max_count`` such that enabling calls ``<= k`` fails.

    ``oracle(k)``: verdict with only the first ``k`` applications enabled.
    Skipped counts are stepped around; counts between two skipped ones are
    assumed untestable unless ``probe_skip_ranges`` (then status
    ``inconclusive`` gives the bracket ``low < nth <= high``).
    """
    return drive(CountSearch(max_count, jobs=jobs, max_runs=max_runs,
                             probe_skip_ranges=probe_skip_ranges), oracle)
