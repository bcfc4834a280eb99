"""An attempt's outcome from failure rates: its runs against the baseline's, by a test of two proportions.

An attempt on an intermittent bug cannot be judged by "some runs passed": a baseline that fails 4
of 8 runs also passes half the time, so an attempt failing 4 of 8 changed nothing and must be
recorded as ``failed`` (the circuit breaker and the command hook count those), not ``partial``.

The test is Fisher's exact test (one-sided each way, exact hypergeometric tails: right for the
small counts a debugging session has).  Verdicts, and the outcome each is stored as:

=========  ===========================================================  ============
fixed      no failure, and fewer failures than the baseline with p <= ``ALPHA``  worked
better     fewer failures with p <= ``ALPHA``, but some                  partial
worse      more failures with p <= ``ALPHA``                             failed
unchanged  no significant difference and the attempt fails at least      failed
           half as often as the baseline (it did not even look better)
too few    no significant difference yet the attempt looks better:       inconclusive
           said with how many more runs would settle it
=========  ===========================================================  ============

Every verdict is a guess from counts and is worded as one, with its evidence (k of n each side and
the p-value).  Pure functions, no I/O.

``again`` answers another question, the one ``dbglog rerun`` asks: do the new runs of a record behave as the
record's own runs did?  Its verdicts are ``same``, ``less`` and ``more`` (often than the original), never a
fix's verdict: a fixed attempt run again with no failure "holds", it is not "unchanged" from a baseline.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: significance of the one-sided test (the product's usual 95 %)
ALPHA = 0.05
#: the most extra runs "too few" ever asks for
MAX_MORE = 200

OUTCOME_OF = {"fixed": "worked", "better": "partial", "unchanged": "failed", "worse": "failed",
              "too_few": "inconclusive"}


@dataclass(frozen=True)
class RateVerdict:
    verdict: str  # fixed | better | unchanged | worse | too_few; or, from ``again``, same | less | more
    outcome: str  # what the attempt is stored as (OUTCOME_OF); "" from ``again`` (null in JSON)
    p_value: float  # of the one-sided test in the direction the counts lean
    more_runs: int | None  # "too few": runs (all passing, or at the attempt's rate) that would settle it
    words: str

    def to_dict(self) -> dict:
        return {"verdict": self.verdict, "outcome": self.outcome or None, "p_value": round(self.p_value, 4),
                "more_runs": self.more_runs, "words": self.words}


def _lchoose(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def fisher_less(f1: int, n1: int, f0: int, n0: int) -> float:
    """P(the attempt shows <= f1 failures | all f1 + f0 failures spread at random over the n1 + n0
    runs): the one-sided p-value of "the attempt fails less often than the baseline"."""
    k, n = f1 + f0, n1 + n0
    lo = max(0, k - n0)
    total = _lchoose(n, k)
    return min(1.0, sum(math.exp(_lchoose(n1, x) + _lchoose(n0, k - x) - total) for x in range(lo, f1 + 1)))


def fisher_greater(f1: int, n1: int, f0: int, n0: int) -> float:
    """The one-sided p-value of "the attempt fails more often than the baseline"."""
    return fisher_less(n1 - f1, n1, n0 - f0, n0)


def _more_runs(f1: int, n1: int, f0: int, n0: int) -> int | None:
    """Runs to add at the attempt's observed rate (all passes when it has no failure) before the
    "fewer failures" test would pass; None when even ``MAX_MORE`` would not do."""
    rate = f1 / n1 if n1 else 0.0
    for m in range(1, MAX_MORE + 1):
        n = n1 + m
        if fisher_less(round(rate * n), n, f0, n0) <= ALPHA:
            return m
    return None


def compare(f1: int, n1: int, f0: int, n0: int) -> RateVerdict:
    """The attempt failed ``f1`` of ``n1`` runs, the baseline ``f0`` of ``n0``."""
    if n1 < 1 or n0 < 1 or not (0 <= f1 <= n1 and 0 <= f0 <= n0):
        raise ValueError("counts: 0 <= failures <= runs, at least one run each side")
    less, more = fisher_less(f1, n1, f0, n0), fisher_greater(f1, n1, f0, n0)
    ev = f"failed {f1} of {n1} runs against the baseline's {f0} of {n0}"
    if less <= ALPHA:
        v = "fixed" if f1 == 0 else "better"
        words = (f"guess from failure rates: {'fixed' if f1 == 0 else 'better, not fixed'} — {ev} "
                 f"(Fisher's exact test, one-sided p = {less:.3f})")
        return RateVerdict(v, OUTCOME_OF[v], less, None, words)
    if more <= ALPHA:
        words = f"guess from failure rates: worse — {ev} (Fisher's exact test, one-sided p = {more:.3f})"
        return RateVerdict("worse", "failed", more, None, words)
    if f1 / n1 >= 0.5 * f0 / n0:
        words = (f"guess from failure rates: unchanged — {ev}; no sign that it fails less often "
                 f"(p = {less:.2f} that it does by chance)")
        return RateVerdict("unchanged", "failed", less, None, words)
    m = _more_runs(f1, n1, f0, n0)
    need = (f"about {m} more run(s){' without a failure' if f1 == 0 else ' at this rate'} would settle it"
            if m else f"even {MAX_MORE} more runs at this rate would not settle it")
    words = f"too few runs to tell — {ev} (p = {less:.2f}); {need}"
    return RateVerdict("too_few", "inconclusive", less, m, words)


def again(f1: int, n1: int, f0: int, n0: int) -> RateVerdict:
    """The new runs of a record failed ``f1`` of ``n1``, the record's own runs ``f0`` of ``n0``: the same rate, or
    less or more often (Fisher's exact test, one-sided each way).  ``outcome`` is empty: this judges no attempt."""
    if n1 < 1 or n0 < 1 or not (0 <= f1 <= n1 and 0 <= f0 <= n0):
        raise ValueError("counts: 0 <= failures <= runs, at least one run each side")
    less, more = fisher_less(f1, n1, f0, n0), fisher_greater(f1, n1, f0, n0)
    ev = f"failed {f1} of {n1} runs against the original's {f0} of {n0}"
    if less <= ALPHA or more <= ALPHA:
        v, p = ("less", less) if less <= ALPHA else ("more", more)
        words = f"guess from failure rates: fails {v} often than the original — {ev} (Fisher's exact test, " \
                f"one-sided p = {p:.3f})"
        return RateVerdict(v, "", p, None, words)
    if f1 == f0 == 0 or (f1 == n1 and f0 == n0):
        held = "no failure" if f1 == 0 else "a failure in every run"
        return RateVerdict("same", "", 1.0, None, f"the original's result holds: {held} — {ev}")
    words = f"guess from failure rates: no sign of a different rate from the original — {ev} (p = {min(less, more):.2f})"
    return RateVerdict("same", "", min(less, more), None, words)
