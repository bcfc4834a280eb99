"""One logistic model, read from JSON with the standard library: the learned passes of the doc reader
(docreader/learned.py) and `tried`'s "same experiment?" judge (kb/search.py) are both this, so the default
install needs no numpy or scikit-learn to run what bench/ trained."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Model:
    bias: float
    threshold: float  # at or above it, the thing is read as one
    weights: dict[str, float]
    about: dict  # what it was trained on and how it cross-validated (kept beside the weights)
    drop: float = 0.0  # the reader's gate: a guess of the rules whose units all score below it is dropped

    def probability(self, f: dict[str, float]) -> float:
        w = self.weights  # (the features without a weight add nothing: skipped, the sum's order kept)
        z = self.bias + sum(w[k] * v for k, v in f.items() if k in w)
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    @classmethod
    def of(cls, raw: dict) -> Model:
        return cls(float(raw["bias"]), float(raw["threshold"]), {k: float(v) for k, v in raw["weights"].items()},
                   raw.get("about", {}), float(raw.get("drop", 0.0)))

    def to_dict(self) -> dict:
        return {"bias": self.bias, "threshold": self.threshold, "drop": self.drop, "weights": self.weights,
                "about": self.about}
