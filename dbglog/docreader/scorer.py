"""The scorer: one transparent linear model from a unit's cues to its label.

Each label has a bias and a weight per cue (``cues/weights.toml``); a unit's label is the highest
sum and its confidence the softmax of the sums. Nothing here knows a wording: the cues do, and they
are general (cues.py). The strongest features of the winning label are kept for ``import --explain``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from dbglog.docreader.cues import Context, features
from dbglog.util import datacache
from dbglog.docreader.units import Unit

LABELS = ("action_result", "action", "result", "proposal", "request", "plan", "boilerplate", "context")


@dataclass
class Judged:
    unit: Unit
    label: str
    confidence: float
    features: dict[str, float]
    why: list[tuple[str, float]]  # the winning label's strongest contributions, largest first
    learned: float | None = None  # the learned attempt pass's probability, when it was asked (learned.py)
    learned_step: float | None = None  # the learned next-step pass's, likewise


@lru_cache(maxsize=None)
def weights(path: str | None = None) -> dict[str, dict[str, float]]:
    p = Path(path) if path else Path(__file__).with_name("cues") / "weights.toml"
    raw = datacache.load(p)
    return {lab: {k: float(v) for k, v in raw.get(lab, {}).items()} for lab in LABELS}


def score(f: dict[str, float], w: dict[str, dict[str, float]]) -> dict[str, float]:
    out = {}
    for lab in LABELS:  # (plain loops: every unit of a document is scored; the sums' order is the features')
        wl, s = w[lab], 0.0
        for k, v in f.items():
            s += wl.get(k, 0.0) * v
        out[lab] = wl.get("bias", 0.0) + s
    return out


def judge(u: Unit, ctx: Context, w: dict[str, dict[str, float]] | None = None) -> Judged:
    w = w or weights()
    f = features(u, ctx)
    s = score(f, w)
    label = max(LABELS, key=lambda lab: s[lab])
    top = max(s.values())
    z = sum(math.exp(v - top) for v in s.values())
    why = sorted(((k, w[label].get(k, 0.0) * v) for k, v in f.items() if w[label].get(k, 0.0)),
                 key=lambda kv: -abs(kv[1]))
    return Judged(u, label, 1.0 / z, f, why[:4])
