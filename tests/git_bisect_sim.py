"""A faithful simulation of ``git bisect run`` with a skip script (exit 125) on a line of commits.

It follows git's ``bisect.c`` (2.39): ``find_bisection`` weights; without any skipped commit the
first commit (oldest first, the range's root excepted) whose weight is about half of the range,
else ``best_bisection``; with skipped commits every candidate sorted by ``min(weight, N - weight)``
descending, ties by object id, and when the best one is skipped ``skip_away``: the pseudo-random,
square-root-biased pick (``get_prn``, ``sqrti`` in single precision) among the others.  It ends
like git: the first bad commit, or "only 'skip'ped commits left" with the skipped ones and the bad
one.  ``tests/test_bisect_history_skips.py`` checks it step for step against the real git.
"""

from __future__ import annotations

import struct
from typing import Callable, Sequence

PRN_MODULO = 32768


def _f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def sqrti(val: int) -> int:
    """git's integer square root (Newton's method in C floats)."""
    if not val:
        return 0
    x = _f32(float(val))
    while True:
        y = _f32(_f32(x + _f32(_f32(float(val)) / x)) / 2)
        d = _f32(y - x) if y > x else _f32(x - y)
        x = y
        if not d >= 0.5:
            return int(x)


def get_prn(count: int) -> int:
    count = (count * 1103515245 + 12345) & 0xFFFFFFFF
    return (count // 65536) % PRN_MODULO


def git_bisect_run(names: Sequence[str], oracle: Callable[[int], str]) -> tuple[list[int], str, list[int]]:
    """``git bisect start names[-1] names[0]; git bisect run script`` on the line ``names`` (oldest
    first, object ids as hex).  ``oracle(i)`` is ``'good'``, ``'bad'`` or ``'skip'`` for commit i.
    Returns (the commits the script ran on, in order; ``'found'`` or ``'inconclusive'``; the first
    bad commit, or the commits git says it "could be any of")."""
    good, bad = 0, len(names) - 1
    skipped: set[int] = set()
    tested: list[int] = []
    while True:
        cands = list(range(good + 1, bad + 1))  # `bad --not good`, oldest first; weight = i - good
        nr = len(cands)
        if skipped:  # FIND_BISECTION_ALL + managed_skipped
            order = sorted(cands, key=lambda i: (-min(i - good, nr - (i - good)), names[i]))
            if order[0] in skipped:
                rest = [i for i in order if i not in skipped]
                count = len(rest)
                prn = get_prn(count)
                index = (count * prn // PRN_MODULO) * sqrti(prn) // sqrti(PRN_MODULO)
                pick = rest[0]
                for k, i in enumerate(rest):
                    if k == index:
                        pick = i if i != bad else (rest[k - 1] if k else rest[0])
                        break
            else:
                pick = order[0]
        else:
            pick = None
            for i in cands[1:]:  # the root gets its weight without the halfway check
                diff = 2 * (i - good) - nr
                if diff in (-1, 0, 1) or abs(diff) < nr // 1024:
                    pick = i
                    break
            if pick is None:  # best_bisection: the first with the largest distance
                best_d = -1
                for i in cands:
                    d = min(i - good, nr - (i - good))
                    if d > best_d:
                        pick, best_d = i, d
        if pick == bad:
            left = sorted(i for i in skipped if good < i < bad)
            return tested, ("inconclusive" if left else "found"), left + [bad]
        tested.append(pick)
        v = oracle(pick)
        if v == "skip":
            skipped.add(pick)
        elif v == "bad":
            bad = pick
        else:
            good = pick
