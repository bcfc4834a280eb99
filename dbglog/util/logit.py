"""One logistic model, read from JSON with the standard library: the learned passes of the doc reader
(docreader/learned.py) and `tried`'s "same experiment?" judge (kb/search.py) are both this, so the default
install needs no numpy or scikit-learn to run what bench/ trained.

A model may also carry boosted trees over its dense features (the cues, not the words): their log-odds are
mixed with the linear part's (``Trees.mix``). The linear part weighs each cue alone; the trees weigh cues
together ("a past-tense verb" means one thing in the asker's post and another in a quoted reply), which is
where grouped cross-validation found the linear model short (docs/import.md)."""

from __future__ import annotations

import functools
import itertools
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Trees:
    """Boosted regression trees as scikit-learn's HistGradientBoostingClassifier grew them: each node is
    (feature, threshold, left, right, value, leaf); a missing feature is 0.0, and x <= threshold goes left."""

    baseline: float
    mix: float  # the share of the trees' log-odds in the model's (the linear part has the rest)
    features: tuple[str, ...]
    trees: tuple[tuple[tuple[int, float, int, int, float, int], ...], ...]

    def score(self, f: dict[str, float]) -> float:
        fast = self._compiled
        return fast(f) if fast is not None else self.walk(f)

    def walk(self, f: dict[str, float]) -> float:
        """The trees' log-odds, node by node (the definition ``score``'s compiled form is tested against)."""
        z = self.baseline
        names = self.features
        for nodes in self.trees:
            k = 0
            while True:
                feat, thr, left, right, value, leaf = nodes[k]
                if leaf:
                    z += value
                    break
                k = left if f.get(names[feat], 0.0) <= thr else right
        return z

    @functools.cached_property
    def _compiled(self) -> Callable[[dict[str, float]], float] | None:
        """The trees as one Python expression of nested comparisons, compiled once: reading a long document scores
        every sentence, and walking 50 trees node by node was a tenth of its time. The same comparisons and the
        same additions in the same order as ``walk``, so the same float. None (walk them) when a number has no
        literal (inf, nan) or a tree is too deep for the parser."""
        numbers = [v for t in self.trees for n in t for v in (n[1], n[4])] + [self.baseline]
        if not all(math.isfinite(v) for v in numbers) or any(_depth(t, 0) > _MAX_DEPTH for t in self.trees):
            return None
        used = sorted({n[0] for t in self.trees for n in t if not n[5]})
        body = [f"    x{i} = g({self.features[i]!r}, 0.0)" for i in used]
        terms = " + ".join([repr(self.baseline)] + [_expression(t, 0) for t in self.trees])
        source = "\n".join(["def score(f):", "    g = f.get", *body, f"    return {terms}"])
        space: dict = {}
        exec(compile(source, "<trees>", "exec"), space)  # noqa: S102 - numbers and quoted names of our own model
        return space["score"]

    @classmethod
    def of(cls, raw: dict) -> Trees:
        return cls(float(raw["baseline"]), float(raw["mix"]), tuple(raw["features"]),
                   tuple(tuple((int(a), float(b), int(c), int(d), float(e), int(g)) for a, b, c, d, e, g in t)
                         for t in raw["trees"]))

    def to_dict(self) -> dict:
        return {"baseline": self.baseline, "mix": self.mix, "features": list(self.features),
                "trees": [[list(n) for n in t] for t in self.trees]}


_ZEROS = itertools.repeat(0.0)  # (map stops at the shortest: an endless default for dict.get)
_MAX_DEPTH = 60  # (nested parentheses: Python's parser stops at 200)


def _depth(nodes: tuple, k: int) -> int:
    n = nodes[k]
    return 0 if n[5] else 1 + max(_depth(nodes, n[2]), _depth(nodes, n[3]))


def _expression(nodes: tuple, k: int) -> str:
    feat, thr, left, right, value, leaf = nodes[k]
    if leaf:
        return repr(value)
    return f"({_expression(nodes, left)} if x{feat} <= {thr!r} else {_expression(nodes, right)})"


@dataclass(frozen=True)
class Model:
    bias: float
    threshold: float  # at or above it, the thing is read as one
    weights: dict[str, float]
    about: dict  # what it was trained on and how it cross-validated (kept beside the weights)
    drop: float = 0.0  # the reader's gate: a guess of the rules whose units all score below it is dropped
    trees: Trees | None = None  # boosted trees over the cues, mixed in (see the module's note)

    def probability(self, f: dict[str, float]) -> float:
        # (a feature without a weight adds a zero, which leaves a sum as it was: for the finite values features take,
        # the same float as skipping it, in the features' order, summed in C)
        z = self.bias + sum(map(operator.mul, map(self.weights.get, f, _ZEROS), f.values()))
        if self.trees is not None:
            z = (1.0 - self.trees.mix) * z + self.trees.mix * self.trees.score(f)
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    @classmethod
    def of(cls, raw: dict) -> Model:
        return cls(float(raw["bias"]), float(raw["threshold"]), {k: float(v) for k, v in raw["weights"].items()},
                   raw.get("about", {}), float(raw.get("drop", 0.0)), Trees.of(raw["trees"]) if raw.get("trees") else None)

    def to_dict(self) -> dict:
        out = {"bias": self.bias, "threshold": self.threshold, "drop": self.drop, "weights": self.weights,
               "about": self.about}
        if self.trees is not None:
            out["trees"] = self.trees.to_dict()
        return out
