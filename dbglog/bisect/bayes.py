"""Probabilistic bisection: a posterior over the candidates, not a verdict per step.

Pure (no I/O, no clocks, no randomness), like ``algorithms.py``; the drivers in ``history.py``
and ``toggles.py`` feed it the runs they made and ask where to run next.

Why
===
Plain bisection turns every step into a verdict and trusts it forever.  A race that shows
30 % of the time makes a bad commit pass 70 % of the time, and one such pass sends the search
into the wrong half for good: with single runs git bisect names the right commit in about a
third of the draws at that rate (``bench/flaky_bisect_bench.py``).  Repeating every step N
times only moves the problem (N must be guessed, and is paid on every step).  The fix, as in
Google's flake-aware culprit finding (Henderson et al., ICST 2023) and ``git_bayesect``: keep a
probability for every candidate, let every run move it a little, and stop when one candidate is
probable enough.

The model
=========
One hypothesis per candidate answer ``h`` (history: "commit ``h`` is the first bad one";
toggles: "set ``h`` -- one toggle, or a pair -- is what fails").  A run of a probe ``q`` is
*bad under h* when ``q`` contains the culprit (history: ``q`` is ``h`` or a descendant of it;
toggles: ``h`` is a subset of the enabled toggles).  A run fails with probability ``a =
P(fail | bad)`` where the culprit is present and ``b = P(fail | good)`` where it is not: ``a < 1``
is a repro that does not always reproduce (a false negative), ``b > 0`` a good build that
sometimes fails the same way (a false positive, e.g. a background flake).  Both rates are
unknown.  They get Beta priors and are integrated out exactly (Beta-Bernoulli conjugacy): given
``h``, the runs split into the bad side (``F_b`` failures, ``P_b`` passes) and the good side
(``F_g``, ``P_g``), and ::

    P(runs | h) = B(a0 + F_b, a1 + P_b) / B(a0, a1)  *  B(g0 + F_g, g1 + P_g) / B(g0, g1)

so the posterior over ``h`` is a product of four log-gamma terms per hypothesis: ``O(N)`` per
update.  The rates are *calibrated* by the same formula: the bad end is bad under every
hypothesis and the good end good under every one, so their runs inform only ``a`` and ``b``
(the endpoint runs are the calibration), and every later run refines them too -- the rates'
posterior means (:meth:`Posterior.rates`) are reported with the answer.  The prior of ``b``
is a mixture (the likelihood then is the same mixture of the Beta terms): half of it near 0
(good builds usually pass), half around a background flake of some 10-40 %, which keeps a good
build that fails now and then from being taken for a bad one; ``--rate`` (failure-rate bisection: "when did
this become flaky?") uses flat priors on both, since there the good end fails too and only the
two frequencies differ.

Skips, builds that fail and infrastructure errors are not runs of the repro: the driver never
feeds them here (they say nothing about ``h``).

Where to run next: expected information gain
============================================
A run of probe ``q`` fails with probability ``m a + (1 - m) b``, where ``m`` is the posterior
mass of the hypotheses under which ``q`` is bad.  The information one run gives about ``h`` is
the mutual information between the run's outcome and ``h``, which only depends on ``m``::

    I(q) = H(m a + (1 - m) b) - m H(a) - (1 - m) H(b)          (H: binary entropy, bits)

(with ``a``, ``b`` at their posterior means).  The probe with the largest ``I`` is run.  For a
deterministic repro (``a = 1``, ``b = 0``) it is the commit that halves the mass -- plain
bisection falls out as a special case; for a rare failure (``a = 0.1``) the best ``m`` is about
0.37, not 0.5, because a failure says much more than a pass.  Choosing again after every run
decides the *number of runs* per probe as well: a probe stays the best one, and is re-run, until
its runs have moved the posterior enough that another probe says more.  With ``--jobs J`` the J
runs of a round go to the J best probes of a spread of the posterior (:meth:`LinePosterior.next`)
and, once one candidate holds half the mass, to that candidate and its parent.

Verification and stopping
=========================
When a candidate holds half the mass the search narrows to verification: only the candidate
and its parent (history), or the set and the set minus each member (toggles), are run, each
chosen by the same information gain, until the candidate reaches ``confidence`` (default 0.95)
or the ``budget`` of runs is spent.  The answer is always given with its probability; when the
budget runs out first the top candidates are reported with theirs.  The confidence is a
posterior probability under the model: when the model holds (a failure rate that does not drift
during the bisection), over many bisections at most about 1 - confidence of the answers given
at that confidence are wrong; the benchmark measures it per noise model.  That promise holds on
average over the rate's prior, not for every rate: at a low one the rate fitted to the runs
after the answer looks high, so a history answer must also keep its confidence with the rate at
a low quantile (``FlakyHistory.verified``).

State
=====
A posterior is a function of the multiset of runs (probe, failed) only: the order does not
matter, so a session rebuilt from its recorded runs after kill -9 has exactly the posterior it
had before (no state of its own to lose).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

#: the candidate holding this much mass is verified (only it and its parent are run)
VERIFY_AT = 0.5
#: the answer's verification takes P(fail | bad) from the runs at and after the commit where the
#: posterior's cdf reaches this (``FlakyHistory._tail_rate``)
RATE_TAIL = 0.01


@dataclass(frozen=True)
class RatePrior:
    """Beta(alpha, beta) priors of P(fail | bad) and P(fail | good)."""

    bad: tuple[float, float] = (1.0, 1.0)
    #: P(fail | good) as a mixture of Betas, (weight, alpha, beta) each: half "good builds pass"
    #: (mean 0.08, most mass near 0), half "a background flake" (mean 0.25) -- so a good build that
    #: fails now and then is not taken for a bad one, yet one that never fails is believed quickly
    good: tuple = ((0.5, 0.5, 6.0), (0.5, 1.0, 3.0))

    def good_components(self) -> tuple:
        return self.good

    @classmethod
    def line(cls) -> "RatePrior":
        """``bisect git --flaky``: the target is one signature, which a good build rarely shows,
        so P(fail | good) is near 0 with 95 % of the prior mass (a background flake keeps 5 %):
        a failure then moves the search as decisively as it does for a person with a script.
        The good end's own runs and every failure on the good side still move it."""
        return cls((1.0, 1.0), ((0.95, 0.2, 40.0), (0.05, 1.0, 3.0)))

    @classmethod
    def flat(cls) -> "RatePrior":
        """``--rate``: both ends fail at some rate; nothing assumed about either."""
        return cls((1.0, 1.0), ((1.0, 1.0, 1.0),))


def _lbeta(x: float, y: float) -> float:
    return math.lgamma(x) + math.lgamma(y) - math.lgamma(x + y)


def entropy(p: float) -> float:
    """Binary entropy in bits."""
    if p <= 0.0 or p >= 1.0:
        return 0.0
    return -(p * math.log2(p) + (1 - p) * math.log2(1 - p))


def info_gain(m: float, a: float, b: float) -> float:
    """Bits one run tells about the culprit, for a probe that is bad with probability ``m``
    (rates known)."""
    return entropy(m * a + (1 - m) * b) - m * entropy(a) - (1 - m) * entropy(b)


def _gain(s1: float, s2: float, t1: float, t2: float) -> float:
    return max(0.0, entropy(s1 + t1) - s2 - t2)


class Posterior:
    """A posterior over ``n`` hypotheses from runs; each run names the hypotheses it is bad under.

    ``observe(bad_hyps, fails, passes)`` adds runs of one probe; ``probabilities()`` is the
    normalised posterior, ``rates()`` the posterior means of P(fail | bad), P(fail | good)."""

    def __init__(self, n: int, prior: Sequence[float] | None = None, rates: RatePrior = RatePrior()):
        if n < 1:
            raise ValueError("no hypotheses")
        self.n = n
        self.rate_prior = rates
        if prior is None:
            self.log_prior = [0.0] * n
        else:
            if len(prior) != n or any(p < 0 for p in prior) or not any(prior):
                raise ValueError("prior: one non-negative weight per hypothesis")
            self.log_prior = [math.log(p) if p > 0 else -math.inf for p in prior]
        self.fails = 0
        self.passes = 0
        self._cache: list[float] | None = None
        self._pred: tuple[list[float], list[float]] | None = None

    # -- evidence --------------------------------------------------------------------

    def _bad_side(self) -> tuple[Sequence[int], Sequence[int]]:
        raise NotImplementedError

    def probabilities(self) -> list[float]:
        if self._cache is None:
            (a0, a1) = self.rate_prior.bad
            fb, pb = self._bad_side()
            F, P = self.fails, self.passes
            ll = [lp + _lbeta(a0 + f, a1 + p) + self._good_ll(F - f, P - p) if lp > -math.inf else -math.inf
                  for lp, f, p in zip(self.log_prior, fb, pb)]
            top = max(ll)
            w = [math.exp(x - top) if x > -math.inf else 0.0 for x in ll]
            s = sum(w)
            self._cache = [x / s for x in w]
        return self._cache

    def predictive(self) -> tuple[list[float], list[float]]:
        """Per hypothesis, the probability that the next run fails where the culprit is present
        (``A_h``) and where it is not (``B_h``): the rates' posterior means given ``h``."""
        if self._pred is None:
            self._pred = self._predictive()
        return self._pred

    def _good_ll(self, f: int, p: int) -> float:
        """log P(f failures, p passes on the good side), P(fail | good) integrated out."""
        terms = [math.log(w) + _lbeta(g0 + f, g1 + p) - _lbeta(g0, g1)
                 for w, g0, g1 in self.rate_prior.good_components()]
        top = max(terms)
        return top + math.log(sum(math.exp(t - top) for t in terms))

    def _good_mean(self, f: int, p: int) -> float:
        comps = self.rate_prior.good_components()
        if len(comps) == 1:
            _, g0, g1 = comps[0]
            return (g0 + f) / (g0 + g1 + f + p)
        terms = [math.log(w) + _lbeta(g0 + f, g1 + p) - _lbeta(g0, g1) for w, g0, g1 in comps]
        top = max(terms)
        ws = [math.exp(t - top) for t in terms]
        return sum(x * (g0 + f) / (g0 + g1 + f + p) for x, (_, g0, g1) in zip(ws, comps)) / sum(ws)

    def _predictive(self) -> tuple[list[float], list[float]]:
        (a0, a1) = self.rate_prior.bad
        fb, pb = self._bad_side()
        F, P = self.fails, self.passes
        A = [(a0 + f) / (a0 + a1 + f + p) for f, p in zip(fb, pb)]
        B = [self._good_mean(F - f, P - p) for f, p in zip(fb, pb)]
        return A, B

    def rates(self) -> tuple[float, float]:
        """Posterior means of (P(fail | bad), P(fail | good))."""
        A, B = self.predictive()
        w = self.probabilities()
        return sum(x * y for x, y in zip(w, A)), sum(x * y for x, y in zip(w, B))

    def _terms(self) -> tuple[list[float], list[float], list[float], list[float]]:
        """Per hypothesis: w*A, w*H(A), w*B, w*H(B) -- the information gain of any probe is
        ``H(sum over bad-side h of w*A + good-side of w*B) - (same sums of w*H(.))``."""
        A, B = self.predictive()
        w = self.probabilities()
        return ([x * y for x, y in zip(w, A)], [x * entropy(y) for x, y in zip(w, A)],
                [x * y for x, y in zip(w, B)], [x * entropy(y) for x, y in zip(w, B)])

    def top(self, k: int = 5) -> list[tuple[int, float]]:
        """The ``k`` most probable hypotheses, best first (ties: lower index first)."""
        p = self.probabilities()
        if k == 1:
            i = max(range(self.n), key=lambda x: (p[x], -x))
            return [(i, p[i])]
        order = sorted(range(self.n), key=lambda i: (-p[i], i))
        return [(i, p[i]) for i in order[:k]]


class LinePosterior(Posterior):
    """History on a line of ``n`` candidates, oldest first, the bad end last (position ``n - 1``,
    bad under every hypothesis): hypothesis ``h`` = "candidate ``h`` is the first bad commit", and
    a run at position ``i`` is bad under ``h`` iff ``i >= h``.  Position ``-1`` is the good end
    (good under every ``h``)."""

    def __init__(self, n: int, prior: Sequence[float] | None = None, rates: RatePrior = RatePrior()):
        super().__init__(n, prior, rates)
        self.cf = [0] * n  # failures / passes seen at positions 0..n-1
        self.cp = [0] * n

    def observe(self, pos: int, fails: int, passes: int) -> None:
        if not -1 <= pos < self.n:
            raise ValueError(f"position {pos} outside -1..{self.n - 1}")
        if fails < 0 or passes < 0:
            raise ValueError("negative counts")
        if pos >= 0:
            self.cf[pos] += fails
            self.cp[pos] += passes
        self.fails += fails
        self.passes += passes
        self._cache = self._pred = None

    def counts(self, pos: int) -> tuple[int, int]:
        """(failures, runs) seen at a position (the good end's are not kept apart)."""
        return (self.cf[pos], self.cf[pos] + self.cp[pos]) if 0 <= pos < self.n else (0, 0)

    def _bad_side(self):
        fb, pb = [0] * self.n, [0] * self.n
        f = p = 0
        for h in range(self.n - 1, -1, -1):
            f += self.cf[h]
            p += self.cp[h]
            fb[h], pb[h] = f, p
        return fb, pb

    def mass_at(self, a: float, lo: int, hi: int) -> float:
        """The posterior mass of ``lo..hi`` with P(fail | bad) fixed at ``a`` instead of integrated
        out (P(fail | good) still integrated): how much of the answer's mass rests on the rate
        being as high as the runs at and after it make it look."""
        fb, pb = self._bad_side()
        F, P = self.fails, self.passes
        la, l1a = math.log(a), math.log1p(-a)
        ll = [lp + f * la + p * l1a + self._good_ll(F - f, P - p) if lp > -math.inf else -math.inf
              for lp, f, p in zip(self.log_prior, fb, pb)]
        top = max(ll)
        w = [math.exp(x - top) if x > -math.inf else 0.0 for x in ll]
        return sum(w[lo:hi + 1]) / sum(w)

    def cdf(self) -> list[float]:
        out, s = [], 0.0
        for x in self.probabilities():
            s += x
            out.append(s)
        return out

    def gains(self) -> dict[int, float]:
        """The information gain of one run at every position (-1: the good end)."""
        wa, wha, wb, whb = self._terms()
        s1 = s2 = 0.0
        t1, t2 = sum(wb), sum(whb)
        out = {-1: _gain(0.0, 0.0, t1, t2)}
        for i in range(self.n):
            s1, s2, t1, t2 = s1 + wa[i], s2 + wha[i], t1 - wb[i], t2 - whb[i]
            out[i] = _gain(s1, s2, t1, t2)
        return out

    def block(self, h: int, exclude: Iterable[int] = ()) -> tuple[int, int, float]:
        """The answer ``h`` stands for, with the untestable commits no run can tell from it:
        ``(lo, hi, mass)`` -- ``hi`` the first testable position at or after ``h``, ``lo`` the
        oldest of the untestable ones directly before it (git's "could be any of").  Their
        hypotheses have the same likelihood (no run was made between them), so only their summed
        mass can ever reach a confidence."""
        ex = set(exclude)
        hi = h
        while hi in ex and hi < self.n - 1:
            hi += 1
        lo = hi
        while lo - 1 >= 0 and lo - 1 in ex:
            lo -= 1
        return lo, hi, sum(self.probabilities()[lo:hi + 1])

    def best_block(self, exclude: Iterable[int] = ()) -> tuple[int, int, float]:
        """The most probable answer counting blocks (``block``), not single commits: a commit
        after an untestable one shares its mass, and the pair may outweigh any single commit."""
        ex = set(exclude)
        if not ex:
            h, ph = self.top(1)[0]
            return h, h, ph
        p = self.probabilities()
        best, lo, acc = (0, 0, -1.0), 0, 0.0
        for i in range(self.n):
            acc += p[i]
            if i in ex and i < self.n - 1:
                continue
            if acc > best[2] + 1e-12:
                best = (lo, i, acc)
            lo, acc = i + 1, 0.0
        return best

    def next(self, j: int = 1, exclude: Iterable[int] = ()) -> list[int]:
        """The positions of the next ``j`` runs (a position may repeat; the ends, -1 and n - 1,
        tell about the rates).  ``exclude``: positions that cannot be tested (skips)."""
        gains = self.gains()
        ex = set(exclude)
        lo, hi, ph = self.best_block(ex)
        if ph >= VERIFY_AT:  # verification: the candidate, its parent, the ends
            options = [x for x in dict.fromkeys([hi, lo - 1, self.n - 1, -1]) if x not in ex]
        else:
            options = [x for x in gains if x not in ex]
        if not options:
            options = [self.n - 1]
        cdf = self.cdf()
        ranked = sorted(options, key=lambda i: (-gains[i], abs(cdf[i] - 0.5) if 0 <= i < self.n else 1.0, i))
        if j <= 1 or ph >= VERIFY_AT:
            return [ranked[k % min(len(ranked), 2 if j > 1 else 1)] for k in range(max(1, j))]
        # a spread over the posterior around the best probe: k/(j+1) quantiles, the best first
        picks = [ranked[0]]
        for k in range(1, j + 1):
            t = k / (j + 1)
            i = next((x for x in range(self.n) if cdf[x] >= t), self.n - 1)
            if i not in picks and i not in ex:
                picks.append(i)
        return picks[:j] + [picks[0]] * max(0, j - len(picks))


class SetPosterior(Posterior):
    """Toggles: hypotheses are small sets of toggle indices (every single one and, with
    ``pairs``, every pair); a run with enabled set ``q`` is bad under ``h`` iff ``h <= q``."""

    def __init__(self, n_toggles: int, pairs: bool = True, rates: RatePrior = RatePrior()):
        hyps: list[frozenset] = [frozenset([i]) for i in range(n_toggles)]
        if pairs:
            hyps += [frozenset([i, k]) for i in range(n_toggles) for k in range(i + 1, n_toggles)]
        # a single culprit is the likelier kind of answer: half the prior mass on the singles
        n1, n2 = n_toggles, len(hyps) - n_toggles
        prior = [0.5 / n1] * n1 + [0.5 / n2] * n2 if n2 else None
        super().__init__(len(hyps), prior, rates)
        self.n_toggles = n_toggles
        self.hyps = hyps
        self.fb = [0] * len(hyps)
        self.pb = [0] * len(hyps)
        self.seen: dict[frozenset, tuple[int, int]] = {}

    def observe(self, enabled: Iterable[int], fails: int, passes: int) -> None:
        q = frozenset(enabled)
        if any(not 0 <= i < self.n_toggles for i in q):
            raise ValueError("toggle index out of range")
        for k, h in enumerate(self.hyps):
            if h <= q:
                self.fb[k] += fails
                self.pb[k] += passes
        f0, n0 = self.seen.get(q, (0, 0))
        self.seen[q] = (f0 + fails, n0 + fails + passes)
        self.fails += fails
        self.passes += passes
        self._cache = self._pred = None

    def _bad_side(self):
        return self.fb, self.pb

    def gain(self, q: frozenset) -> float:
        """Information about the culprit set from one run with enabled set ``q`` (rates integrated)."""
        wa, wha, wb, whb = self._terms()
        s1 = s2 = t1 = t2 = 0.0
        for k, hh in enumerate(self.hyps):
            if hh <= q:
                s1, s2 = s1 + wa[k], s2 + wha[k]
            else:
                t1, t2 = t1 + wb[k], t2 + whb[k]
        return _gain(s1, s2, t1, t2)

    def mass(self, q: frozenset) -> float:
        p = self.probabilities()
        return sum(w for h, w in zip(self.hyps, p) if h <= q)

    def next(self, j: int = 1) -> list[frozenset]:
        """The enabled sets of the next ``j`` runs."""
        a, b = self.rates()
        h, ph = self.top(1)[0]
        universe = frozenset(range(self.n_toggles))
        if ph >= VERIFY_AT:  # verification: the set, the set minus each member, everything but the set
            H = self.hyps[h]
            options = list(dict.fromkeys([H, *(H - {m} for m in H if len(H) > 1), universe - H, frozenset()]))
        else:
            options = [self._greedy(a, b, set())]
            # alternatives for a batch: the greedy set grown from each of the most probable toggles
            for k, _ in self.top(j + 2):
                options.append(self._greedy(a, b, set(self.hyps[k])))
            options = list(dict.fromkeys(options + [frozenset(), universe]))  # the ends tell about the rates
        gains = {q: self.gain(q) for q in options}
        ranked = sorted(options, key=lambda q: (-gains[q], sorted(q)))
        return [ranked[k % len(ranked)] for k in range(max(1, j))]

    def _greedy(self, a: float, b: float, start: set) -> frozenset:
        """Grow an enabled set one toggle at a time while the information gain grows."""
        p = self.probabilities()
        single = {next(iter(h)): w for h, w in zip(self.hyps, p) if len(h) == 1}
        pair: dict[tuple[int, int], float] = {}
        for hh, w in zip(self.hyps, p):
            if len(hh) == 2:
                x, y = sorted(hh)
                pair[(x, y)] = w
        q = set(start)
        m = sum(w for hh, w in zip(self.hyps, p) if hh <= q)
        gain = info_gain(m, a, b)
        while True:
            best, best_m, best_g = None, m, gain
            for t in range(self.n_toggles):
                if t in q:
                    continue
                m2 = m + single.get(t, 0.0) + sum(pair.get((min(t, u), max(t, u)), 0.0) for u in q)
                g = info_gain(m2, a, b)
                if g > best_g + 1e-12:
                    best, best_m, best_g = t, m2, g
            if best is None:
                return frozenset(q)
            q.add(best)
            m, gain = best_m, best_g


@dataclass(frozen=True)
class Verdict:
    """Where a probabilistic bisection stands."""

    status: str  # "confident" | "running" | "budget"
    top: tuple[tuple[int, float], ...]  # the most probable hypotheses, best first
    rates: tuple[float, float]  # posterior means of P(fail | bad), P(fail | good)
    runs: int


def verdict(post: Posterior, *, confidence: float = 0.95, runs: int = 0, budget: int | None = None,
            k: int = 5) -> Verdict:
    top = tuple(post.top(k))
    if top[0][1] >= confidence:
        status = "confident"
    elif budget is not None and runs >= budget:
        status = "budget"
    else:
        status = "running"
    return Verdict(status, top, post.rates(), runs)


def rate_gap(fails_bad: int, runs_bad: int, fails_good: int, runs_good: int, samples: int = 400) -> float:
    """P(rate at the bad end > rate at the good end) under flat Beta priors, by a fixed
    midpoint quadrature (deterministic): how sure the endpoint runs make a failure-rate
    bisection that the two ends really differ."""
    a = (1 + fails_bad, 1 + runs_bad - fails_bad)
    g = (1 + fails_good, 1 + runs_good - fails_good)
    la, lg = _lbeta(*a), _lbeta(*g)
    # P(A > G) = sum over x of pdf_G(x) * P(A > x); both on a grid of midpoints
    xs = [(i + 0.5) / samples for i in range(samples)]
    pdf_a = [math.exp((a[0] - 1) * math.log(x) + (a[1] - 1) * math.log(1 - x) - la) / samples for x in xs]
    pdf_g = [math.exp((g[0] - 1) * math.log(x) + (g[1] - 1) * math.log(1 - x) - lg) / samples for x in xs]
    tail, out = sum(pdf_a), 0.0
    for pa, pg in zip(pdf_a, pdf_g):
        tail -= pa
        out += pg * (tail + pa / 2)
    return max(0.0, min(1.0, out))


def beta_quantile(x: float, y: float, q: float, samples: int = 2000) -> float:
    """The ``q`` quantile of Beta(x, y), by a fixed midpoint quadrature (deterministic)."""
    lb = _lbeta(x, y)
    acc = 0.0
    for i in range(samples):
        t = (i + 0.5) / samples
        acc += math.exp((x - 1) * math.log(t) + (y - 1) * math.log(1 - t) - lb) / samples
        if acc >= q:
            return t
    return 1.0


class FlakyHistory:
    """The whole probabilistic history bisection as a query/record loop over positions.

    Positions: ``0..n-1`` the candidates oldest first (``n - 1`` is the bad end), ``-1`` the good end.
    ``next_runs()`` says where to run next (the endpoint calibration first: ``bad_end_runs``
    runs of the bad end, ``good_end_runs`` of the good end), ``record(pos, fails, passes)``
    takes the runs back, ``done`` / ``result()`` say where it stands.  ``rate=True``: failure-
    rate bisection, both ends fail at some rate; they are run until ``rate_gap`` shows the bad
    end fails more often (``refused`` when ``max_end_runs`` each do not show it)."""

    def __init__(self, n: int, *, confidence: float = 0.95, budget: int | None = None, jobs: int = 1,
                 rate: bool = False, bad_end_runs: int = 1, good_end_runs: int = 0, max_end_runs: int = 60,
                 prior: Sequence[float] | None = None, rates: RatePrior | None = None):
        if not 0.5 < confidence < 1:
            raise ValueError("confidence must be between 0.5 and 1")
        self.post = LinePosterior(n, prior, rates or (RatePrior.flat() if rate else RatePrior.line()))
        self.n = n
        self.confidence = confidence
        self.budget = budget
        self.jobs = max(1, jobs)
        self.rate = rate
        self.bad_end_runs = max(1, bad_end_runs if not rate else max(bad_end_runs, 10))
        self.good_end_runs = max(0, good_end_runs) if not rate else max(good_end_runs, 10)
        self.max_end_runs = max(max_end_runs, self.bad_end_runs, self.good_end_runs)
        self.good_end = [0, 0]  # failures, runs
        self.runs = 0
        self.untestable: set[int] = set()  # positions whose runs were all skips

    def record(self, pos: int, fails: int, passes: int) -> None:
        self.post.observe(pos, fails, passes)
        if pos == -1:
            self.good_end[0] += fails
            self.good_end[1] += fails + passes
        self.runs += fails + passes

    def earlier(self, fails: int, passes: int) -> None:
        """Runs of the bad end made before this bisection (the investigation's runs of the same
        command at that commit): evidence about P(fail | bad) like the calibration, but no cost of
        this search (not in ``runs``).  With a failure among them the bad end is not run first."""
        self.post.observe(self.n - 1, fails, passes)

    def skipped(self, pos: int) -> None:
        """Runs at ``pos`` were untestable (not evidence): do not ask for it again."""
        if pos != self.n - 1 and self.post.counts(pos)[1] == 0:
            self.untestable.add(pos)

    def _ends(self) -> tuple[tuple[int, int], tuple[int, int]]:
        return self.post.counts(self.n - 1), (self.good_end[0], self.good_end[1])

    @property
    def refused(self) -> str | None:
        """Why the endpoint runs forbid a bisection (None: they do not)."""
        (fb, nb), (fg, ng) = self._ends()
        if not self.rate:
            if nb >= self.max_end_runs and fb == 0:
                return f"the bad end never failed in {nb} runs"
            return None
        if nb >= self.max_end_runs and ng >= self.max_end_runs and rate_gap(fb, nb, fg, ng) < self.confidence:
            return (f"the bad end failed {fb} of {nb} runs and the good end {fg} of {ng}: no clear difference "
                    "in failure rate")
        return None

    def _calibrating(self) -> list[int]:
        (fb, nb), (fg, ng) = self._ends()
        out = []
        if self.rate:
            if rate_gap(fb, nb, fg, ng) < self.confidence or nb < self.bad_end_runs or ng < self.good_end_runs:
                if nb < self.max_end_runs:
                    out.append(self.n - 1)
                if ng < self.max_end_runs and (ng < nb or nb >= self.max_end_runs):
                    out.append(-1)
            return out if (nb < self.max_end_runs or ng < self.max_end_runs) else []
        if nb < self.bad_end_runs or (fb == 0 and nb < self.max_end_runs):
            out.append(self.n - 1)
        if ng < self.good_end_runs:
            out.append(-1)
        return out

    @property
    def done(self) -> bool:
        return self.status != "running"

    @property
    def status(self) -> str:
        if self.refused:
            return "refused"
        if self._calibrating():
            return "running"
        if self.answer()[2] >= self.confidence and self.verified():
            return "confident"
        return "budget" if self.budget is not None and self.runs >= self.budget else "running"

    def next_runs(self) -> list[int]:
        if self.done:
            return []
        cal = self._calibrating()
        if cal:
            return (cal * self.jobs)[: max(len(cal), self.jobs)]
        lo, _, mass = self.answer()
        if mass >= self.confidence and not self.verified():
            if not self._parent_rules_out():
                return [lo - 1] * self.jobs  # the parent, until its passes rule it out
            return self.post.next(self.jobs, self.untestable)  # the answer, its parent, the ends
        j = self.jobs if self.budget is None else max(1, min(self.jobs, self.budget - self.runs))
        return self.post.next(j, self.untestable)

    def _low_rate(self, start: int | None = None) -> float | None:
        """The 5 % quantile (1 - confidence) of P(fail | bad) from the runs at and after ``start``
        (default: the answer), None before one of them failed."""
        if start is None:
            start = self.answer()[1]
        fails, passes = sum(self.post.cf[start:]), sum(self.post.cp[start:])
        if fails == 0:
            return None
        a0, a1 = self.post.rate_prior.bad
        return beta_quantile(a0 + fails, a1 + passes, 1 - self.confidence)

    def _tail_rate(self) -> float | None:
        """``_low_rate`` from the posterior's left tail on (the first position holding ``RATE_TAIL``
        of the mass), not from the answer on: under the hypotheses there, the passes just before
        the answer are runs of bad commits, which the answer's own fit of the rate leaves out."""
        cdf = self.post.cdf()
        _, hi, _ = self.answer()
        start = next((i for i, x in enumerate(cdf) if x >= RATE_TAIL), hi)
        return self._low_rate(min(start, hi))

    def _parent_rules_out(self) -> bool:
        """Whether the answer's parent has passed often enough to be good even at the low rate."""
        low = self._low_rate()
        lo, _, _ = self.answer()
        f, n = self.post.counts(lo - 1) if lo > 0 else tuple(self.good_end)
        if low is None or not n:
            return False
        b = min(self.post.rates()[1], low * 0.999)
        # the parent's runs as odds of "bad at the low rate" against "good at P(fail | good)"
        ratio = (low / b) ** f * ((1 - low) / (1 - b)) ** (n - f) if f else ((1 - low) / (1 - b)) ** n
        return ratio <= 1 - self.confidence

    def verified(self) -> bool:
        """Whether a re-check would not overturn the answer.  Both checks take P(fail | bad) at a
        low quantile, not at the posterior mean: the answer is where the search stopped *because*
        runs there failed, and a probe stops at its first failure, so the mean looks high.

        * The parent has passed often enough to be good at the 5 % quantile of the rate fitted to
          the runs at and after the answer (``_parent_rules_out``).
        * The whole posterior, with the rate fixed at the 5 % quantile from the posterior's left
          tail on (``_tail_rate``), still gives the answer the confidence
          (``LinePosterior.mass_at``).  At P(fail | bad) = 0.3 the wrong answers given at 0.95
          sat after a streak of bad commits that had passed once each: at the rate fitted to the
          runs after the streak (0.6-0.8) every pass looked decisive, and the parent alone did not
          show it (docs/intermittent.md, "Ideas measured against the gap")."""
        if self.rate:
            return True
        if not self._parent_rules_out():
            return False
        lo, hi, _ = self.answer()
        return self.post.mass_at(self._tail_rate(), lo, hi) >= self.confidence

    def answer(self) -> tuple[int, int, float]:
        """The most probable answer as ``(lo, hi, mass)``: commit ``hi``, or any of ``lo..hi``
        when the commits before it could not be tested (``LinePosterior.block``)."""
        return self.post.best_block(self.untestable)

    def result(self, k: int = 5) -> Verdict:
        return verdict(self.post, confidence=self.confidence, runs=self.runs, budget=self.budget, k=k)
