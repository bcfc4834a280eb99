"""How well `tried` judges: held-out accuracy per tier on the labelled pair set.

    PYTHONPATH=. python bench/tried_eval.py [--json] [--show-misses] [--dev-only]

The pairs (bench/data/tried_pairs.toml) are (idea, record, verdict) with verdict same / other /
related / unrelated, grouped by investigation (the source of the records). Every group's records
go into one workspace (the others are each idea's distractors, as in a real knowledge base), every
idea is asked through ``search.tried`` (retrieval and judge together), and the record's tier in the
answer is compared with the label (a record the answer does not list is "unrelated").

Printed, beside each other in one run:

* the hand-set judge (``search._tier``: the word rules, overruled by the experiment model where
  both sides name a knob): accuracy per label tier and the confusion table;
* a learned calibration: a multinomial logistic regression over the same pair's features (the
  word verdict's class, the knob comparison, coverage, similarity, retrieved), trained
  leave-one-group-out, so each group is judged by a model that never saw it;
* the answer figures the issue names: for an idea with a "same" record, that record answered
  "tried" first, and shown among the first three; false alarms (a record labelled other / related
  / unrelated judged the same experiment); a wrong record of the same investigation judged the
  same experiment (pairs implied by the labels: an idea's "same" record is the only one of its
  group, unless another is labelled "same" too).

The hand judge has no parameters fitted on these pairs: its figures are held out as they stand.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from dbglog.kb import search  # noqa: E402
from dbglog.kb.records import Records  # noqa: E402
from dbglog.util.config import parse  # noqa: E402
from dbglog.util.workspace import Workspace  # noqa: E402

PAIRS = ROOT / "bench" / "data" / "tried_pairs.toml"  # the development set: its misses were read while tuning
HELD_OUT = ROOT / "bench" / "data" / "tried_pairs_heldout.toml"  # never read while tuning
TIERS = ("same", "other", "related", "unrelated")


def load_pairs(path: Path = PAIRS, split: str = "dev") -> tuple[list[dict], list[dict]]:
    """(groups, pairs): each pair {group, record (1-based), idea, verdict, split}."""
    data = parse(path.read_text(encoding="utf-8"))
    groups, pairs = data["group"], []
    for g in groups:
        for num, ideas in g.get("ideas", {}).items():
            for verdict, texts in ideas.items():
                assert verdict in TIERS, verdict
                pairs += [{"group": g["name"], "record": int(num), "idea": t, "verdict": verdict, "split": split}
                          for t in texts]
    return groups, pairs


def build(groups: list[dict], root: Path) -> tuple[Records, dict[str, str]]:
    """One workspace holding every group's records; group name -> investigation id."""
    from search_corpus import CORPUS

    corpus = {c["key"]: c for c in CORPUS}
    recs = Records(Workspace(root / ".dbglog"), create=True)
    ids = {}
    for g in groups:
        if "corpus" in g:
            c = corpus[g["corpus"]]
            inv = recs.new(c["title"], symptom=c["symptom"], tags=c["tags"])
            for title, hyp, did, result, concl, outcome in c["attempts"]:
                recs.add_attempt(inv.id, title=title, hypothesis=hyp, did=did, result=result, conclusion=concl,
                                 outcome=outcome)
        else:
            inv = recs.new(g["title"], symptom=g.get("symptom", ""))
            for r in g["record"]:
                recs.add_attempt(inv.id, title=r["title"], did=r.get("did", ""), result=r.get("result", ""),
                                 conclusion=r.get("conclusion", ""), outcome=r["outcome"])
        ids[g["name"]] = inv.id
    return recs, ids


def features(h) -> list[float]:
    """A (idea, record) pair as the learned calibration reads it."""
    if h is None:
        return [0.0] * 9 + [1.0]
    wv = h.word_verdict
    return [1.0 if wv == "" else 0.0, 1.0 if wv in search.OTHER_WAY_RULES else 0.0,
            1.0 if wv in search.UNRELATED_RULES else 0.0, 1.0 if wv in search.MENTIONED | {"background"} else 0.0,
            1.0 if h.knob_tier == "same" else 0.0, 1.0 if h.knob_tier == "other" else 0.0,
            h.coverage, h.similarity / 100.0, 1.0 if h.exact else 0.0, 0.0]


def ask(recs, ids, pairs) -> dict[str, dict]:
    """Each idea asked once: {idea: {"res", "tiers": {(inv, num): tier}, "hits": {(inv, num): Hit}}}."""
    out = {}
    for idea in dict.fromkeys(p["idea"] for p in pairs):
        res = search.tried(recs.store.conn, idea)
        hits = {(h.investigation, h.number): h for h in res.result.hits if h.kind == "attempt"}
        shown = [(h.investigation, h.number) for h in res.close + res.another + res.mentioned]
        shown += [k for k in ((h.investigation, h.number) for h in res.result.hits) if k not in shown]
        out[idea] = {"res": res, "hits": hits, "shown": shown}
    return out


def implied_pairs(pairs: list[dict], groups: list[dict]) -> list[dict]:
    """For each idea's "same" record, every other record of its group that is not labelled "same" for it."""
    size = {g["name"]: len(g["record"]) if "record" in g else _corpus_size(g["corpus"]) for g in groups}
    same = defaultdict(set)
    for p in pairs:
        if p["verdict"] == "same":
            same[(p["group"], p["idea"])].add(p["record"])
    return [{"group": g, "record": n, "idea": idea, "verdict": "not-same"}
            for (g, idea), nums in same.items() for n in range(1, size[g] + 1) if n not in nums]


def _corpus_size(key: str) -> int:
    from search_corpus import CORPUS

    return next(len(c["attempts"]) for c in CORPUS if c["key"] == key)


# --- a learned calibration (multinomial logistic regression, plain Python) ----------------------


def train(xs: list[list[float]], ys: list[int], k: int = 4, epochs: int = 300, lr: float = 0.5,
          l2: float = 1e-3) -> list[list[float]]:
    d = len(xs[0]) + 1
    w = [[0.0] * d for _ in range(k)]
    n = len(xs)
    for _ in range(epochs):
        grad = [[0.0] * d for _ in range(k)]
        for x, y in zip(xs, ys):
            x1 = x + [1.0]
            p = _softmax([sum(wi * xi for wi, xi in zip(w[c], x1)) for c in range(k)])
            for c in range(k):
                g = p[c] - (1.0 if c == y else 0.0)
                for j in range(d):
                    grad[c][j] += g * x1[j]
        for c in range(k):
            for j in range(d):
                w[c][j] -= lr * (grad[c][j] / n + l2 * w[c][j])
    return w


def _softmax(z: list[float]) -> list[float]:
    m = max(z)
    e = [math.exp(v - m) for v in z]
    s = sum(e)
    return [v / s for v in e]


def predict(w, x) -> int:
    x1 = x + [1.0]
    z = [sum(wi * xi for wi, xi in zip(wc, x1)) for wc in w]
    return max(range(len(z)), key=z.__getitem__)


# --- the figures ---------------------------------------------------------------------------------


def evaluate(show_misses: bool = False) -> dict:
    groups, pairs = load_pairs()
    held_groups, held_pairs = load_pairs(HELD_OUT, "held out")
    groups, pairs = groups + held_groups, pairs + held_pairs
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        recs, ids = build(groups, Path(tmp))
        built = time.perf_counter() - t0
        t0 = time.perf_counter()
        answers = ask(recs, ids, pairs)
        asked = time.perf_counter() - t0
        rows = []
        for p in pairs:
            a = answers[p["idea"]]
            h = a["hits"].get((ids[p["group"]], p["record"]))
            rows.append(p | {"pred": h.tier if h is not None and h.tier else "unrelated", "x": features(h)})
        implied = []
        for p in implied_pairs(pairs, groups):
            h = answers[p["idea"]]["hits"].get((ids[p["group"]], p["record"]))
            implied.append(p | {"pred": h.tier if h is not None and h.tier else "unrelated", "x": features(h)})
        figures = {}
        for split in ("dev", "held out"):
            names = {p["group"] for p in pairs if p["split"] == split}
            f = figures[split] = _figures([r for r in rows if r["split"] == split],
                                          [r for r in implied if r["group"] in names], answers, ids,
                                          [p for p in pairs if p["split"] == split])
            f["learned"] = _learned(rows, split, implied)
        figures["timing"] = {"build_s": round(built, 2), "ideas": len(answers),
                             "ms_per_idea": round(1000 * asked / max(len(answers), 1), 1)}
        if show_misses:  # (the development set's only: the held-out misses are not for tuning)
            figures["misses"] = [f"{r['group']}/{r['record']} {r['verdict']}->{r['pred']}: {r['idea']}"
                                 for r in rows if r["pred"] != r["verdict"] and r["split"] == "dev"]
        recs.close()
    return figures


def _figures(rows, implied, answers, ids, pairs) -> dict:
    per = {t: [r for r in rows if r["verdict"] == t] for t in TIERS}
    conf = {t: dict(Counter(r["pred"] for r in per[t])) for t in TIERS}
    acc = {t: (sum(r["pred"] == t for r in per[t]), len(per[t])) for t in TIERS}
    same_ideas = {(p["idea"], p["group"], p["record"]) for p in pairs if p["verdict"] == "same"}
    first = top3 = 0
    for idea, g, num in same_ideas:
        a = answers[idea]
        key = (ids[g], num)
        close = [(h.investigation, h.number) for h in a["res"].close]
        first += bool(close) and close[0] == key
        top3 += key in a["shown"][:3]
    alarms = [r for r in rows if r["verdict"] != "same" and r["pred"] == "same"]
    wrong = [r for r in implied if r["pred"] == "same"]
    return {"pairs": len(rows), "groups": len({r["group"] for r in rows}),
            "accuracy": {t: f"{a}/{n}" for t, (a, n) in acc.items()},
            "overall": f"{sum(a for a, _n in acc.values())}/{len(rows)}",
            "confusion": conf,
            "same_record_answered_tried_first": f"{first}/{len(same_ideas)}",
            "same_record_in_first_three": f"{top3}/{len(same_ideas)}",
            "false_alarms": f"{len(alarms)}/{len(rows) - len(per['same'])}",
            "wrong_record_same_investigation": f"{len(wrong)}/{len(implied)}"}


def _learned(rows, split: str, implied=()) -> dict:
    """Leave-one-group-out: a logistic regression over ``features`` trained on every other group (of
    both sets), for each group of ``split``; its false alarms and wrong records counted as the hand
    judge's are."""
    labels = {t: i for i, t in enumerate(TIERS)}
    correct, total = Counter(), Counter()
    alarms = wrong = n_implied = 0
    for g in sorted({r["group"] for r in rows if r["split"] == split}):
        tr = [r for r in rows if r["group"] != g]
        te = [r for r in rows if r["group"] == g]
        w = train([r["x"] for r in tr], [labels[r["verdict"]] for r in tr])
        for r in te:
            pred = TIERS[predict(w, r["x"])]
            total[r["verdict"]] += 1
            correct[r["verdict"]] += pred == r["verdict"]
            alarms += r["verdict"] != "same" and pred == "same"
        for r in (r for r in implied if r["group"] == g):
            n_implied += 1
            wrong += TIERS[predict(w, r["x"])] == "same"
    return {"accuracy": {t: f"{correct[t]}/{total[t]}" for t in TIERS},
            "overall": f"{sum(correct.values())}/{sum(total.values())}",
            "false_alarms": f"{alarms}/{sum(total.values()) - total['same']}",
            "wrong_record_same_investigation": f"{wrong}/{n_implied}"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--show-misses", action="store_true")
    ap.add_argument("--dev-only", action="store_true",
                    help="print the development set's figures only (while working: the held-out set is looked "
                         "at once, at the end)")
    args = ap.parse_args(argv)
    figs = evaluate(args.show_misses)
    if args.dev_only:
        figs.pop("held out")
    if args.json:
        print(json.dumps(figs, indent=2))
        return 0
    for split in ("dev", "held out")[:1 if args.dev_only else 2]:
        _print(split, figs[split])
    print(f"timing: {figs['timing']}")
    for m in figs.get("misses", []):
        print("  miss:", m)
    return 0


def _print(split: str, f: dict) -> None:
    print(f"\n{split}: {f['pairs']} labelled pairs in {f['groups']} groups")
    print(f"{'tier':<10} {'hand judge':>12} {'learned (LOGO)':>16}")
    for t in TIERS:
        print(f"{t:<10} {f['accuracy'][t]:>12} {f['learned']['accuracy'][t]:>16}")
    print(f"{'overall':<10} {f['overall']:>12} {f['learned']['overall']:>16}")
    print("confusion (label -> judged):")
    for t in TIERS:
        print(f"  {t:<10} {f['confusion'][t]}")
    for k in ("same_record_answered_tried_first", "same_record_in_first_three", "false_alarms",
              "wrong_record_same_investigation"):
        print(f"{k.replace('_', ' ')}: {f[k]}" + (f"   (learned: {f['learned'][k]})" if k in f["learned"] else ""))


if __name__ == "__main__":
    sys.exit(main())
