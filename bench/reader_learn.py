"""Does learning help the reader? Grouped cross-validation of a learned gate against the hand weights.

The hand-weighted scorer labels every unit; the linker makes attempts of the units labelled action / result.
Here a logistic regression (numpy, over the same cues) learns P(this unit is part of a labelled attempt)
from the labelled docs of every source group but one, and gates the left-out group's attempts with it (an
attempt whose units all score below 0.5 is dropped). One group out at a time: a source is never on both
sides. Printed beside the hand weights, on the same docs, so the README can say which generalises.

    python bench/reader_eval.py --set study --styles --learn      (needs numpy: pip install numpy)

Measured (study split + own-words styles, 72 groups): hand weights F1 0.711 (229/352 found, 63 junk), the learned
gate F1 0.652 (194/352, 49 junk): it trades more recall than junk away, so the reader keeps the hand weights.
"""

from __future__ import annotations

import numpy as np

from dbglog.docreader.cues import context, features
from dbglog.docreader.read import read_document
from dbglog.docreader.units import segment


def _units(text: str):
    doc = segment(text)
    ctx = context(doc)
    return [(u, features(u, ctx)) for u in doc.units if u.kind in ("sentence", "command", "row")]


def _target(u, labels: dict) -> int:
    for a in labels.get("attempts", []):
        lo, hi = a["lines"]
        if u.first + 1 <= hi and u.last + 1 >= lo:
            return 1
    return 0


def _fit(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 400, lr: float = 0.5) -> np.ndarray:
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        grad = x.T @ (p - y) / len(y) + l2 * w / len(y)
        w -= lr * grad
    return w


def cross_validate(docs) -> str:
    from reader_eval import score, totals

    data = []
    vocab: dict[str, int] = {"bias": 0}
    for did, group, path, labels in docs:
        text = path.read_text(encoding="utf-8")
        rows = _units(text)
        for _u, f in rows:
            for k in f:
                vocab.setdefault(k, len(vocab))
        data.append((did, group, path, labels, text, rows))

    def vec(f: dict) -> np.ndarray:
        v = np.zeros(len(vocab))
        v[0] = 1.0
        for k, val in f.items():
            v[vocab[k]] = val
        return v

    groups = sorted({d[1] for d in data})
    hand, learned = [], []
    for g in groups:
        train = [(vec(f), _target(u, lab)) for did, gg, p, lab, t, rows in data if gg != g for u, f in rows]
        if not train:
            continue
        x = np.array([a for a, _ in train])
        y = np.array([b for _, b in train], dtype=float)
        w = _fit(x, y)
        for _did, gg, path, labels, text, rows in data:
            if gg != g:
                continue
            prob = {u.first: 1.0 / (1.0 + np.exp(-(vec(f) @ w))) for u, f in rows}
            parsed, _ = read_document(text, str(path))
            atts = [{"lines": tuple(a.source_lines or (0, 0)), "outcome": a.outcome, "title": a.title, "who": a.who}
                    for p in parsed for a in p.inv.attempts]
            hand.append(score(labels, atts, []))
            kept = [a for a in atts if max((pr for ln, pr in prob.items() if a["lines"][0] - 1 <= ln <= a["lines"][1] - 1),
                                          default=1.0) >= 0.5]
            learned.append(score(labels, kept, []))
    th, tl = totals(hand), totals(learned)
    out = ["grouped cross-validation (one source group left out at a time, %d groups)" % len(groups),
           f"  hand weights:        found {th['found']}/{th['expected']}  junk {th['junk']}/{th['made']}  F1 {th['f1']:.3f}",
           f"  + learned gate (LR): found {tl['found']}/{tl['expected']}  junk {tl['junk']}/{tl['made']}  F1 {tl['f1']:.3f}"]
    return "\n".join(out)
