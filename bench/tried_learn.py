"""`tried`'s learned judge: grouped cross-validation against the word rules, and training.

    python bench/tried_learn.py DIR [DIR ...]                 cross-validate (5 folds, grouped by document)
    python bench/tried_learn.py DIR [DIR ...] --train OUT     also fit on every document and write OUT
                                                              (dbglog/kb/same.json)
    python bench/tried_learn.py DIR [DIR ...] --measure       `tried` as shipped against the rules alone, no fitting
                                                              (how a blind set is read once)

Data: labelled pools of real write-ups (NNN-slug.md beside NNN-slug.labels.json, as `bench/reader_eval.py`
reads them). Each document is imported into a fresh workspace and `tried` is asked about each labelled attempt
the import found, in the labeller's words (`bench/tried_e2e.py`'s question). Every attempt the structure left
open (`search.judge_same`) gives one example: its features, and whether it is the attempt read from the
labelled lines. A document is one group: its examples are never on both sides of a fold.

Each question is asked twice: where it was tried, and where it never was (its attempts deleted in a rolled-back
savepoint), so the judge also learns, and is measured on, ideas nobody tried yet.

Printed for the rules alone and for the judge at each threshold, each question asked through `search.tried` with a
model that never saw its document: the first "tried" answer is the labelled attempt, there is none, it is a
free-text line, or it is another attempt (a wrong "tried").
Needs scikit-learn (the `learn` extra); the shipped model is read with the standard library.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import reader_eval  # noqa: E402
from tried_e2e import found, imported, question  # noqa: E402

from dbglog.kb import search  # noqa: E402

THRESHOLDS = (0.4, 0.5, 0.6, 0.7)


def doc_questions(path: Path, labels: dict, group: str, keep: list) -> list[dict]:
    """One entry per labelled attempt the import found: the question, the records read from its lines, and the
    judge's examples (the workspace stays open in ``keep``: each fold asks again with its own model)."""
    recs, read = imported(path)
    keep.append(recs)
    conn = recs.store.conn
    out = []
    for a, mine in found(read, labels):
        q, seen = question(a["what"]), []
        res = search.tried(conn, q, judge=None, seen=seen)
        out.append({"group": group, "conn": conn, "q": q, "mine": mine, "rules": answer(res, mine),
                    "examples": [(f, int((h.investigation, h.number) in mine)) for h, f in seen]})
        with _without(conn, mine):  # the same question where it was never tried: any attempt answered is wrong
            seen = []
            res = search.tried(conn, q, judge=None, seen=seen)
            out.append({"group": group, "conn": conn, "q": q, "mine": mine, "untried": True, "rules": answer(res, set()),
                        "examples": [(f, 0) for _h, f in seen]})
    return out


@contextmanager
def _without(conn, mine: set):
    """The workspace as if the attempts ``mine`` had never been recorded (rolled back after)."""
    conn.execute("SAVEPOINT untried")
    try:
        conn.executemany("DELETE FROM attempts WHERE investigation_id = ? AND number = ?", sorted(mine))
        yield
    finally:
        conn.execute("ROLLBACK TO untried")
        conn.execute("RELEASE untried")


def answer(res, mine: set) -> str:
    """right (the first "tried" is the labelled attempt), none, text (a free-text line first), or wrong."""
    if not res.close:
        return "none"
    h = res.close[0]
    return "text" if h.kind != "attempt" else "right" if (h.investigation, h.number) in mine else "wrong"


def gather(pools: list[str], keep: list, trials: list[str] = ()) -> list[dict]:
    qs = []
    for pool in pools:
        for _did, group, path, labels in reader_eval.pool_docs(Path(pool), "all"):
            qs += doc_questions(path, labels, f"{pool}:{group}", keep)
    for t in trials:
        qs += trial_questions(Path(t), keep)
    return qs


def trial_questions(path: Path, keep: list) -> list[dict]:
    """The agent-style trials (``bench/tried_trials.py``'s files, the studied workspaces only): each query an
    example set, a restatement asked where it was tried and where it never was, a near miss where it never was.
    A workspace is one group."""
    import tempfile

    from tried_trials import build

    spec = json.loads(path.read_text(encoding="utf-8"))
    hidden = set(spec.get("held_out", ()))
    out = []
    for ws in (w for w in spec["workspaces"] if w["name"] not in hidden):
        recs = build(ws, Path(tempfile.mkdtemp()))
        keep.append(recs)
        conn = recs.store.conn
        inv = conn.execute("SELECT id FROM investigations").fetchone()[0]
        for q in ws["queries"]:
            mine = {(inv, q["expect"])} if q["expect"] else set()
            seen: list = []
            res = search.tried(conn, q["q"], judge=None, seen=seen)
            base = {"group": f"{path.name}:{ws['name']}", "conn": conn, "q": q["q"], "mine": mine, "trial": True}
            if mine:
                out.append(base | {"rules": answer(res, mine),
                                   "examples": [(f, int((h.investigation, h.number) in mine)) for h, f in seen]})
                with _without(conn, mine):
                    seen = []
                    res = search.tried(conn, q["q"], judge=None, seen=seen)
            out.append(base | {"untried": True, "rules": answer(res, set()), "examples": [(f, 0) for _h, f in seen]})
    return out


def fit(examples: list[tuple[dict, int]], c: float, threshold: float):
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    from dbglog.util.logit import Model

    vec = DictVectorizer()
    x = vec.fit_transform([f for f, _ in examples])
    m = LogisticRegression(C=c, max_iter=5000).fit(x, [y for _, y in examples])
    weights = {k: round(float(w), 4) for k, w in zip(vec.get_feature_names_out(), m.coef_[0]) if abs(w) > 1e-4}
    return Model(round(float(m.intercept_[0]), 4), threshold, dict(sorted(weights.items())), {})


def cross_validate(qs: list[dict], c: float, thresholds, folds: int = 5) -> dict:
    """The answers `tried` gives with the judge, each question asked with a model that never saw its document."""
    groups = sorted({q["group"] for q in qs})
    random.Random(5).shuffle(groups)
    fold = {g: i % folds for i, g in enumerate(groups)}
    got: dict = {t: [""] * len(qs) for t in thresholds}
    for k in range(folds):
        m = fit([e for q in qs if fold[q["group"]] != k for e in q["examples"]], c, 0.5)
        for t in thresholds:
            mt = replace(m, threshold=t)
            for i, q in enumerate(qs):
                if fold[q["group"]] == k:
                    got[t][i] = _ask(q, mt)
    return got


def _ask(q: dict, model) -> str:
    if q.get("untried"):
        with _without(q["conn"], q["mine"]):
            return answer(search.tried(q["conn"], q["q"], judge=model), set())
    return answer(search.tried(q["conn"], q["q"], judge=model), q["mine"])


def shares(answers: list[str]) -> dict[str, float]:
    n = max(1, len(answers))
    return {k: round(answers.count(k) / n, 3) for k in ("right", "none", "text", "wrong")}


def show(name: str, answers: list[str]) -> str:
    s = shares(answers)
    return (f"{name:24} first right {s['right']:6.1%}  no answer {s['none']:6.1%}  free text first {s['text']:6.1%}"
            f"  first wrong {s['wrong']:6.1%}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pools", nargs="+")
    ap.add_argument("--c", type=float, default=1.0, help="inverse L2 strength")
    ap.add_argument("--threshold", type=float, default=0.6, help="the shipped threshold (with --train)")
    ap.add_argument("--train", metavar="OUT")
    ap.add_argument("--trials", action="append", default=[], metavar="FILE",
                    help="also the studied workspaces of an agent-style trial file (bench/data/tried_trials/)")
    ap.add_argument("--measure", action="store_true", help="no cross-validation: `tried` as shipped against the rules "
                                                            "alone (a blind set's one reading)")
    a = ap.parse_args()
    keep: list = []
    try:
        qs = gather(a.pools, keep, a.trials)
        print(f"{len(qs)} questions, {len({q['group'] for q in qs})} documents, "
              f"{sum(len(q['examples']) for q in qs)} examples")
        asked = [i for i, q in enumerate(qs) if not q.get("untried") and not q.get("trial")]
        never = [i for i, q in enumerate(qs) if q.get("untried") and not q.get("trial")]
        t_asked = [i for i, q in enumerate(qs) if not q.get("untried") and q.get("trial")]
        t_never = [i for i, q in enumerate(qs) if q.get("untried") and q.get("trial")]
        if a.measure:
            for name, idx in (("asked where it was tried", asked), ("asked where it was never tried", never)):
                print(name)
                print(show("  rules alone", [qs[i]["rules"] for i in idx]))
                print(show("  as shipped", [_ask(qs[i], True) for i in idx]))
            return 0
        cv = cross_validate(qs, a.c, THRESHOLDS)
        for name, idx in (("asked where it was tried", asked), ("asked where it was never tried", never),
                          ("trials: restatements", t_asked), ("trials: near misses and untried", t_never)):
            if not idx:
                continue
            print(name)
            print(show("  rules alone", [qs[i]["rules"] for i in idx]))
            for t in THRESHOLDS:
                print(show(f"  judge at {t:.1f} (5-fold)", [cv[t][i] for i in idx]))
        if a.train:
            m = fit([e for q in qs for e in q["examples"]], a.c, a.threshold)
            about = {"trained_on": sorted({q["group"].split(":", 1)[0] for q in qs}), "questions": len(qs),
                     "documents": len({q["group"] for q in qs}), "c": a.c,
                     "cv_5fold_by_document": {str(t): {"tried": shares([cv[t][i] for i in asked]),
                                                       "never_tried": shares([cv[t][i] for i in never])}
                                              for t in THRESHOLDS},
                     "rules_alone": {"tried": shares([qs[i]["rules"] for i in asked]),
                                     "never_tried": shares([qs[i]["rules"] for i in never])}}
            out = replace(m, about=about).to_dict()
            Path(a.train).write_text(json.dumps(out, indent=1, sort_keys=True) + "\n", encoding="utf-8")
            print(f"wrote {a.train}")
    finally:
        for r in keep:
            r.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
