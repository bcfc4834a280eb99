"""The learned passes: a unit the rules left alone becomes an attempt (or a next step) when a model trained
on hand-labelled real docs is confident that a person would have marked it as one; a next step the rules
guessed from a sentence is dropped when that model is confident nobody would have.

Why it exists: general cues and the linker find about half of the attempts in real write-ups nobody
here had read. A logistic regression over the same cues plus the unit's own words, its heading's words
and its neighbours' cues, fitted on every labelled doc (`bench/reader_learn.py --train`), raised grouped
cross-validated recall (a source never on both sides) by seven to eight points at a small cost in junk;
docs/import.md gives the figures. It drops an attempt the linker made only when the model scores every unit
of it under ``drop`` (in cross-validation that removed junk and no labelled try); certain structure (the
canonical format, protocol fields, tables read as structure) is never read by it; and every attempt it makes
cites its lines and is shown with its probability by ``import --explain``.

The next-step model is the same kind over the same features, trained on the docs whose next steps were
marked with their lines; it adds the plans the rules missed and drops the rules' sentence-level guesses it
scores near zero (a step from a next-steps list, certain structure, is never dropped).

The models are data (``cues/learned.json``: per model a bias, thresholds, and one weight per named feature),
read with the standard library: the default install needs no numpy or scikit-learn.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Mapping

from dbglog.docreader.units import Unit
from dbglog.util.logit import Model
from dbglog.util import datacache, recache

KINDS = ("sentence", "command", "row")  # the units a person marks as attempts (the scorer's units)
_WORD = recache.compile(r"[a-z]+|\d+|[^\x00-\x7f]")
MODEL = Path(__file__).with_name("cues") / "learned.json"


OUTCOMES = ("worked", "failed", "partial", "unknown")  # the outcome model's classes, as a person labels them


@dataclass(frozen=True)
class Models:
    """One model per thing a person marks: attempts, next steps, and how an attempt went (one model per outcome,
    one against the rest; any may be absent)."""

    attempts: Model | None = None
    steps: Model | None = None
    outcomes: tuple[Model, ...] | None = None  # in the order of OUTCOMES

    def __bool__(self) -> bool:
        return self.attempts is not None or self.steps is not None or self.outcomes is not None


@lru_cache(maxsize=None)
def load(path: str | None = None) -> Models:
    p = Path(path) if path else MODEL
    if not p.exists():
        return Models()
    raw = datacache.load(p, "json")
    outs = raw.get("outcomes")
    return Models(*(Model.of(raw[k]) if raw.get(k) else None for k in ("attempts", "steps")),
                  tuple(Model.of(outs[k]) for k in OUTCOMES) if outs else None)


def outcome_features(title: str, did: str, result: str, conclusion: str, outcome: str) -> dict[str, float]:
    """What the outcome model reads of a read attempt: the words and word pairs of its result and of its action,
    apart, and the outcome the rules gave it."""
    f = {"g:" + ("unknown" if outcome in ("inconclusive", "untested") else outcome): 1.0}
    res = f"{result} {conclusion}".strip()
    f["has result"] = 1.0 if res else 0.0
    for tag, text in (("r:", res), ("t:", f"{title} {did}")):
        w = _tokens(text, 60)
        for t in w:
            f[tag + t] = 1.0
        for a, b in zip(w, w[1:]):
            f[tag + a + "_" + b] = 1.0
    return f


def outcome_probabilities(models: tuple[Model, ...], f: dict[str, float]) -> dict[str, float]:
    """Each outcome's probability: the one-against-the-rest models' scores, normalised to sum to one."""
    ps = [m.probability(f) for m in models]
    total = sum(ps) or 1.0
    return {k: p / total for k, p in zip(OUTCOMES, ps)}


def decide(models: tuple[Model, ...], f: dict[str, float], outcome: str) -> str | None:
    """The outcome the model is confident of (at or above its threshold) for a try with features ``f`` the rules
    read as ``outcome``, when it is not the rules'; else None. A proposal stored as untested keeps its outcome."""
    if outcome == "untested":
        return None
    probs = outcome_probabilities(models, f)
    best = max(probs, key=probs.get)
    said = "unknown" if outcome == "inconclusive" else outcome
    if probs[best] < models[0].threshold or best == said:
        return None
    return "inconclusive" if best == "unknown" else best


def relabel(models: tuple[Model, ...], title: str, did: str, result: str, conclusion: str, outcome: str) -> str | None:
    """``decide`` for a read attempt's fields."""
    return decide(models, outcome_features(title, did, result, conclusion, outcome), outcome)


def models(given) -> Models:
    """What ``read_document(model=...)`` was given: True the shipped models, False/None none, a Model the
    attempts model alone, Models as they are."""
    if given is True:
        return load()
    if isinstance(given, Model):
        return Models(attempts=given)
    return given or Models()


def _tokens(s: str, most: int = 40) -> list[str]:
    # numbers are one token: a version or a size says nothing about whether this is an attempt
    return [t if not t.isdigit() else "<n>" for t in _WORD.findall(s.lower()[:2000])][:most]


def doc_features(units: list[Unit]) -> dict[str, float]:
    """What kind of document the scorer units make (a thread, a table of runs, a command log, a list, its size):
    one author's "Ran it again" is a try in a lab log and context in a README, and the trees weigh a unit's cues
    by the document they are in."""
    n = max(1, len(units))
    return {"d:thread": float(any(u.post >= 0 for u in units)),
            "d:rows": sum(u.kind == "row" for u in units) / n,
            "d:cmds": sum(u.kind == "command" for u in units) / n,
            "d:items": sum(u.item >= 0 for u in units) / n,
            "d:size": min(len(units), 2000) / 2000}


def unit_features(units: list[Unit], cues: Mapping[int, dict[str, float]] | list[dict[str, float]], heads: dict[int, Unit], i: int,
                  doc: dict[str, float] | None = None) -> dict[str, float]:
    """The features of ``units[i]`` (the document's scorer units, in order, with their cues): its cues,
    kind, words and word pairs, its heading's words, its neighbours' cues, its place, and the document's kind
    (``doc``: ``doc_features(units)``, computed once per document by the caller)."""
    u = units[i]
    f = {"c:" + k: v for k, v in cues[i].items()}
    f["kind:" + u.kind] = 1.0
    w = _tokens(u.text)
    for t in w:
        f["w:" + t] = 1.0
    for a, b in zip(w, w[1:]):
        f["b:" + a + "_" + b] = 1.0
    h = heads.get(u.path[-1]) if u.path else None
    if h is not None:
        for t in _tokens(h.text)[:8]:
            f["h:" + t] = 1.0
    for off, tag in ((-1, "p:"), (1, "n:")):
        j = i + off
        if 0 <= j < len(units):
            for k in cues[j]:
                f[tag + k] = 1.0
    if u.post >= 0:
        f["post"] = 1.0
    if u.checkbox:
        f["cb:" + u.checkbox] = 1.0
    if u.head:
        f["head"] = 1.0
    _place(u, units[-1].last + 1, f)
    f.update(doc if doc is not None else doc_features(units))
    return f


def _place(u: Unit, lines: int, f: dict[str, float]) -> None:
    """Where the unit stands, as numbers the trees split (how far into the document, which post, how deep in
    its list, which item or row, how long): the first post's story is told differently from the fifth's."""
    f["x:words"] = min(len(u.text.split()), 80) / 80
    f["x:place"] = u.first / max(1, lines)
    f["x:post"] = min(u.post, 20) / 20 if u.post >= 0 else -0.05
    f["x:depth"] = min(u.depth, 4) / 4
    f["x:index"] = min(u.index, 20) / 20 if u.index >= 0 else -0.05


@dataclass
class Guess:
    first: int  # 0-based, inclusive
    last: int
    units: list[Unit]
    probability: float  # the highest of its units'


class _Spans:
    """Line ranges merged and sorted, so "does a range touch any of them?" costs a bisection, not a scan (a
    document of ten thousand attempts asks it ten thousand times)."""

    def __init__(self, spans: list[tuple[int, int]]):
        merged: list[list[int]] = []
        for lo, hi in sorted(spans):
            if merged and lo <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], hi)
            else:
                merged.append([lo, hi])
        self.starts = [lo for lo, _ in merged]
        self.ends = [hi for _, hi in merged]

    def touches(self, first: int, last: int) -> bool:
        k = bisect.bisect_right(self.starts, last) - 1
        return k >= 0 and self.ends[k] >= first


def guesses(units: list[Unit], probs: dict[int, float], threshold: float, covered: list[tuple[int, int]],
            free: set[int]) -> list[Guess]:
    """Units at or above the threshold that no attempt covers or touches, merged with the one just before
    when they share a paragraph or item or follow it line by line (not when each is an item of its own).
    ``free``: the lines the pass may read."""
    out: list[Guess] = []
    near = _Spans([(lo - 1, hi + 1) for lo, hi in covered])
    for u in units:
        p = probs.get(u.id, 0.0)
        if p < threshold or u.first not in free:
            continue
        if near.touches(u.first, u.last):
            continue  # part of (or beside) an attempt the rules made: its result, its context
        prev = out[-1].units[-1] if out else None
        # (an item of a list, a row of a table, is an entry of its own: the next one is never its result)
        if prev is not None and (prev.block == u.block or out[-1].last >= u.first - 1) and not (
                u.item >= 0 and prev.item >= 0 and u.item != prev.item):
            g = out[-1]
            g.last, g.probability = max(g.last, u.last), max(g.probability, p)
            g.units.append(u)
            continue
        out.append(Guess(u.first, u.last, [u], p))
    return out


class Recall:
    """The model's probability for each scorer unit of one document, computed on demand (a unit inside
    certain structure is never asked about, so a DEBUG.md of thousands of protocol attempts costs nothing)."""

    def __init__(self, units: list[Unit], cue_of, models: Models):
        self.units = [u for u in units if u.kind in KINDS]
        self.at = {u.id: i for i, u in enumerate(self.units)}
        self.heads = {u.id: u for u in units if u.kind == "heading"}
        self.cue_of, self.models = cue_of, models
        self.feats: dict[int, dict[str, float]] = {}
        self.doc = doc_features(self.units)
        self.done: dict[tuple[int, int], float] = {}

    def probability(self, u: Unit, model: Model) -> float:
        p = self.done.get((id(model), u.id))
        if p is None:
            f = self.feats.get(u.id)
            if f is None:
                i = self.at[u.id]
                near = range(max(0, i - 1), min(len(self.units), i + 2))
                cues = {j: self.cue_of(self.units[j]) for j in near}
                f = self.feats[u.id] = unit_features(self.units, cues, self.heads, i, self.doc)
            p = self.done[(id(model), u.id)] = model.probability(f)
        return p

