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


def _attempt_rows(text: str, path) -> list[tuple[dict, dict]]:
    """The reader's attempts of one doc, each with the union of its units' cues, its outcome, author and length."""
    cues = [(u.first, u.last, f) for u, f in _units(text)]
    parsed, _ = read_document(text, str(path))
    out = []
    for a in (a for p in parsed for a in p.inv.attempts):
        lo, hi = a.source_lines or (0, 0)
        f: dict[str, float] = {}
        for first, last, ff in cues:
            if first + 1 <= hi and last + 1 >= lo:
                for k, v in ff.items():
                    f[k] = max(f.get(k, 0.0), v)
        f.update({"outcome=" + a.outcome: 1.0, "who": float(bool(a.who)), "lines>3": float(hi - lo >= 3),
                  "short title": float(len((a.title or "").split()) <= 2)})
        out.append(({"lines": (lo, hi), "outcome": a.outcome, "title": a.title, "who": a.who}, f))
    return out


def _threshold(p: np.ndarray, y: np.ndarray) -> float:
    """The cut that keeps the most F1 on the training folds."""
    best = (0.0, 0.5)
    for t in np.arange(0.05, 0.8, 0.05):
        keep = p >= t
        tp, fp, fn = (keep & (y == 1)).sum(), (keep & (y == 0)).sum(), ((~keep) & (y == 1)).sum()
        best = max(best, ((2 * tp / (2 * tp + fp + fn)) if tp else 0.0, t))
    return best[1]


def gate_attempts(docs) -> str:
    """A gate over the extracted attempts (is this row one a person marked?), fitted with one source group left
    out at a time, its threshold chosen on the training folds; printed beside the reader without it."""
    from reader_eval import _overlap_any, score, totals

    data, vocab = [], {"bias": 0}
    for _did, group, path, labels in docs:
        rows = _attempt_rows(path.read_text(encoding="utf-8"), path)
        for _a, f in rows:
            for k in f:
                vocab.setdefault(k, len(vocab))
        want = labels.get("attempts", [])
        data.append((group, labels, rows, [int(any(_overlap_any(w, a["lines"]) > 0 for w in want)) for a, _ in rows]))

    def vec(f: dict) -> np.ndarray:
        v = np.zeros(len(vocab))
        v[0] = 1.0
        for k, val in f.items():
            v[vocab[k]] = val
        return v

    hand, gated = [], []
    for g in sorted({d[0] for d in data}):
        train = [(vec(f), y) for gg, _lab, rows, ys in data if gg != g for (_a, f), y in zip(rows, ys)]
        if not train:
            continue
        x, y = np.array([a for a, _ in train]), np.array([b for _, b in train], dtype=float)
        w = _fit(x, y)
        t = _threshold(1.0 / (1.0 + np.exp(-(x @ w))), y)
        for gg, labels, rows, _ys in data:
            if gg == g:
                hand.append(score(labels, [a for a, _ in rows], []))
                gated.append(score(labels, [a for a, f in rows if 1.0 / (1.0 + np.exp(-(vec(f) @ w))) >= t], []))
    th, tg = totals(hand), totals(gated)
    return "\n".join(["gate over extracted attempts (one source group left out at a time)",
                      f"  reader:          found {th['found']}/{th['expected']}  junk {th['junk']}/{th['made']}  F1 {th['f1']:.3f}",
                      f"  + learned gate:  found {tg['found']}/{tg['expected']}  junk {tg['junk']}/{tg['made']}  F1 {tg['f1']:.3f}"])

