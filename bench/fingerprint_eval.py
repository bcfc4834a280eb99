"""Benchmark: is "same failure" (dbglog/diagnose/fingerprint.py) right on labelled pairs of real logs,
and what does a fingerprint cost beside the signature scan? (issue 27)

Run: python bench/fingerprint_eval.py --pairs DIR [--pairs DIR2 ...]   (not part of the test suite)
     python bench/fingerprint_eval.py --cv --pairs ROUND1 --pairs ROUND2 ...   (grouped cross-validation)

The labels of the pairs measured so far (no logs) are in bench/data/fingerprint_labels.json.

A pairs directory holds ``pairs.json`` and the logs it names (paths relative to the directory)::

    [{"a": "logs/x.log", "b": "logs/y.log", "same": true, "group": "vllm-29361",
      "why": "two ranks of one run"}, ...]

``same``: the same bug (reported by different people, on different machines, ranks or versions);
false: different bugs, usually with the same signature (the hard negatives). Real logs are third-party
text: keep them out of this repository (labels may live in it); the figures we check are measured on
private pairs. Printed: precision and recall of "same failure" (an exact or near match), the
different-bug-same-signature pairs called the same (should be none), each mistake with the two
fingerprints, the peers on the same pairs (grouping by signature alone; the exact key alone), and
the cost per log: the signature scan and the fingerprint beside it (median, max).

``--cv``: leave-one-group-out cross-validation of the "same failure" decision, one group per ``--pairs``
directory (a labelled round: rounds were split by source project, so no project is on both sides of a
fold). Every decision is made on the same fingerprints (the normalisation is shared, and was built on
all rounds: only the decision is cross-validated). Compared: (a) the rules (``similarity``: nothing is
fitted, so their figure is in-sample: they were written looking at every round), (b) learned
similarities with their thresholds fitted on the training folds only (``CV_METHODS``), (c) a
conservative variant that calls "same" only on an exact key or a very high similarity and reports the
rest as "similar (a guess)". Printed per left-out fold and pooled over the folds: precision, recall,
different bugs with the same signature called the same, and the guesses (same / different).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def _fingerprint(text: str, timings: dict):
    """The log's fingerprint (``fingerprint_text``, as import computes it), timed beside the signature
    scan alone: the fingerprint's cost is the difference (its own reading of the lines around the match)."""
    from dbglog.diagnose import fingerprint
    from dbglog.run import signatures

    t0 = time.perf_counter()
    signatures.classify_text(text, max_key_lines=4)
    t1 = time.perf_counter()
    fp = fingerprint.fingerprint_text(text)
    t2 = time.perf_counter()
    timings["scan"].append((t1 - t0) * 1000)
    timings["fingerprint"].append(max(0.0, (t2 - t1) - (t1 - t0)) * 1000)
    return fp


def load(dirs: list[str]) -> tuple[list[dict], dict[str, str]]:
    pairs, texts = [], {}
    for d in dirs:
        root = Path(d)
        for p in json.loads((root / "pairs.json").read_text(encoding="utf-8")):
            a, b = str(root / p["a"]), str(root / p["b"])
            for f in (a, b):
                texts.setdefault(f, Path(f).read_text(encoding="utf-8", errors="replace"))
            pairs.append(p | {"a": a, "b": b})
    return pairs, texts


PEERS = (  # (what, same failure?) of two fingerprints (None: no signature read the log)
    ("the same signature", lambda a, b: a is not None and b is not None and a.signature == b.signature),
    ("the exact key only", lambda a, b: a is not None and b is not None and a.key == b.key),
)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", action="append", required=True, metavar="DIR", help="a labelled pairs directory")
    ap.add_argument("--cv", action="store_true", help="leave-one-group-out cross-validation: a group per --pairs DIR, "
                    "those sharing a log or a source project merged")
    ap.add_argument("--by-dir", action="store_true", help="with --cv: one group per --pairs DIR, none merged")
    args = ap.parse_args()
    if args.cv:
        return main_cv(args.pairs, args.by_dir)
    from dbglog.diagnose.fingerprint import similarity

    pairs, texts = load(args.pairs)
    timings: dict[str, list[float]] = {"scan": [], "fingerprint": []}
    fps = {f: _fingerprint(t, timings) for f, t in texts.items()}
    for _ in range(4):  # timing only: the same logs again (the first pass paid the imports)
        for t in texts.values():
            _fingerprint(t, timings)
    tp = fp_ = fn = tn = 0
    hard, hard_wrong, mistakes = 0, 0, []
    for p in pairs:
        a, b = fps[p["a"]], fps[p["b"]]
        like = similarity(a, b) if a is not None and b is not None else None
        said = like is not None and like.level in ("exact", "near")
        if a is not None and b is not None and a.signature == b.signature and not p["same"]:
            hard += 1
            hard_wrong += said
        tp += said and p["same"]
        fp_ += said and not p["same"]
        fn += (not said) and p["same"]
        tn += (not said) and not p["same"]
        if said != p["same"]:
            mistakes.append((p, a, b, like))
    prec = tp / (tp + fp_) if tp + fp_ else float("nan")
    rec = tp / (tp + fn) if tp + fn else float("nan")
    print(f"{len(pairs)} pairs ({tp + fn} same, {fp_ + tn} different; {hard} different bugs with the same signature) "
          f"over {len(texts)} logs")
    print(f"same failure: precision {prec:.1%}  recall {rec:.1%}  (tp {tp}, fp {fp_}, fn {fn}, tn {tn})")
    print(f"different bugs with the same signature called the same: {hard_wrong} of {hard}")
    n = len(timings["scan"])
    def p95(xs: list[float]) -> float:
        return sorted(xs)[int(0.95 * (len(xs) - 1))]

    print(f"cost per log over {n} readings: signature scan median {statistics.median(timings['scan']):.2f} ms "
          f"(p95 {p95(timings['scan']):.2f}, max {max(timings['scan']):.2f}); fingerprint beside it median "
          f"{statistics.median(timings['fingerprint']):.3f} ms (p95 {p95(timings['fingerprint']):.2f}, "
          f"max {max(timings['fingerprint']):.2f})")
    for name, call in PEERS:  # the same pairs, judged by what a simpler grouping would say
        said = [(call(fps[p["a"]], fps[p["b"]]), p["same"]) for p in pairs]
        t = sum(x and y for x, y in said)
        f = sum(x and not y for x, y in said)
        n = sum(y and not x for x, y in said)
        print(f"peer, {name}: precision {t / (t + f) if t + f else float('nan'):.1%}  "
              f"recall {t / (t + n) if t + n else float('nan'):.1%}  (tp {t}, fp {f}, fn {n})")
    for p, a, b, like in mistakes:
        print(f"- wrong: {Path(p['a']).name} ~ {Path(p['b']).name} labelled {'same' if p['same'] else 'different'}"
              f" ({p.get('why', '')}); {like.level + ': ' + like.why if like else 'no fingerprint'}")
        for x in (a, b):
            print(f"    {x.key + ' ' + json.dumps(x.to_dict())[:230] if x else None}")


# --- grouped cross-validation of the "same failure" decision (--cv) --------------------------------

TARGET_PRECISION = 0.95  # a fit keeps the most recall at this training precision (precision first), else the most precision


class Case:
    """One labelled pair, read once: its fingerprints, the rules' likeness and what the learned decisions read."""

    def __init__(self, fold: str, pair: dict, a, b) -> None:
        from rapidfuzz import fuzz

        from dbglog.diagnose import fingerprint as F

        self.fold, self.same, self.a, self.b, self.pair = fold, bool(pair["same"]), a, b, pair
        both = a is not None and b is not None
        self.hard = both and a.signature == b.signature and not self.same
        self.rules = F.similarity(a, b) if both else None
        self.gate = both and not F.disagreement(a, b)  # the same signature, no field that disagrees
        self.site = both and not F.siteless(a, b)  # (the rules' notion: something says where it failed)
        self.fields = fuzz.token_set_ratio(F.fields_text(a), F.fields_text(b)) if both else 0.0
        self.tokens = (_tokens(a), _tokens(b)) if both else ((), ())
        self._at: dict[int, str] = {}

    def rules_at(self, near: int) -> str:
        """The rules' level with their key-line threshold at ``near`` (cached: the fits try each often)."""
        from dbglog.diagnose.fingerprint import similarity

        if near not in self._at:
            self._at[near] = similarity(self.a, self.b, near=near).level if self.rules else "none"
        return self._at[near]


def _tokens(fp) -> tuple[str, ...]:
    from dbglog.diagnose.fingerprint import fields_text

    return tuple(fields_text(fp).lower().split())


def _idf(cases: list[Case]) -> dict[str, float]:
    """Inverse document frequency of each token over the training folds' distinct fingerprints."""
    import math

    docs = {t for c in cases for t in c.tokens}
    n = len(docs)
    df: dict[str, int] = {}
    for d in docs:
        for tok in set(d):
            df[tok] = df.get(tok, 0) + 1
    return {tok: math.log((1 + n) / (1 + k)) + 1 for tok, k in df.items()} | {"": math.log(1 + n) + 1}


def _cosine(x: tuple[str, ...], y: tuple[str, ...], idf: dict[str, float]) -> float:
    import math

    def vec(ts):
        v: dict[str, float] = {}
        for t in ts:
            v[t] = v.get(t, 0.0) + idf.get(t, idf[""])
        return v

    vx, vy = vec(x), vec(y)
    dot = sum(w * vy.get(t, 0.0) for t, w in vx.items())
    norm = math.sqrt(sum(w * w for w in vx.values())) * math.sqrt(sum(w * w for w in vy.values()))
    return 100.0 * dot / norm if norm else 0.0


def _two_thresholds(score, c: Case, th: tuple) -> str:
    """Same when the fields agree and the score reaches the threshold of the pair's class: a site known
    (``th[0]``) or a message that names no site with nothing else on either side (``th[1]``)."""
    if not c.gate:
        return "no"
    return "same" if score >= (th[0] if c.site else th[1]) else "no"


_T2 = [(s, b) for s in range(60, 101, 2) for b in [*range(60, 101, 2), 101]]  # (101: never)
CV_METHODS = {  # name: (what, thresholds tried, prepare(train) -> model, decide(case, th, model) -> same|guess|no)
    "rules": ("(a) the rules as they are (similarity: exact or near; similar is a guess); nothing fitted",
              [()], lambda train: None,
              lambda c, th, m: {"exact": "same", "near": "same", "similar": "guess"}.get(c.rules.level, "no")
              if c.rules else "no"),
    "rules, NEAR fitted": ("(a') the rules with their key-line threshold (NEAR, by hand 88) fitted",
                           [(t,) for t in range(70, 101, 2)], lambda train: None,
                           lambda c, th, m: {"exact": "same", "near": "same", "similar": "guess"}.get(
                               c.rules_at(th[0]), "no")),
    "token set": ("(b1) rapidfuzz token_set_ratio over key line + frames + kernel + operation, the fields "
                  "agreeing; two thresholds fitted (a site known / none)",
                  _T2, lambda train: None, lambda c, th, m: _two_thresholds(c.fields, c, th)),
    "tf-idf cosine": ("(b2) TF-IDF cosine over the same tokens (IDF from the training folds), the fields "
                      "agreeing; two thresholds fitted",
                      _T2, _idf, lambda c, th, m: _two_thresholds(_cosine(*c.tokens, m), c, th)),
    "rules' signals, fitted": ("(b3) the rules' gates and cause signatures, an exact key that names a site, else the "
                               "messages' ratio (100 when one holds the other) >= a threshold; two thresholds fitted",
                               _T2, lambda train: None, lambda c, th, m: _signals(c, th)),
    "conservative": ("(c) same only on an exact key or a near match of the rules at least T alike (T fitted); "
                     "the rest of the rules' near and similar matches: similar (a guess)",
                     [(t,) for t in range(88, 102)], lambda train: None, lambda c, th, m: _conservative(c, th[0])),
}


def _signals(c: Case, th: tuple) -> str:
    """(b3): what the rules read (fields that disagree, a cause signature, a message that names no site),
    without their hand-set decision: one likeness of the messages against a fitted threshold."""
    from rapidfuzz import fuzz

    from dbglog.diagnose import fingerprint as F

    if not c.gate:
        return "no"
    if c.a.signature in F.CAUSE_SIGNATURES or (c.a.key == c.b.key and c.site):
        return "same"
    ma, mb = F.message(c.a.line), F.message(c.b.line)
    return _two_thresholds(100.0 if F.holds(ma, mb) else fuzz.ratio(ma, mb), c, th)


def _conservative(c: Case, t: int) -> str:
    if c.rules is None or c.rules.level == "none":
        return "no"
    if c.rules.level == "exact" or (c.rules.level == "near" and c.rules.score >= t):
        return "same"
    return "guess"


def _counts(said: list[str], cases: list[Case]) -> dict:
    n = {"tp": 0, "fp": 0, "fn": 0, "hard": 0, "hard_wrong": 0, "guess_same": 0, "guess_diff": 0}
    for s, c in zip(said, cases):
        n["tp"] += s == "same" and c.same
        n["fp"] += s == "same" and not c.same
        n["fn"] += s != "same" and c.same
        n["hard"] += c.hard
        n["hard_wrong"] += s == "same" and c.hard
        n["guess_same" if c.same else "guess_diff"] += s == "guess"
    return n


def _pr(n: dict) -> tuple[float, float]:
    nan = float("nan")
    return (n["tp"] / (n["tp"] + n["fp"]) if n["tp"] + n["fp"] else nan,
            n["tp"] / (n["tp"] + n["fn"]) if n["tp"] + n["fn"] else nan)


def fit(method: str, train: list[Case]) -> tuple[tuple, object]:
    """The thresholds of ``method`` that keep the most training recall at ``TARGET_PRECISION`` (else the
    most precision); ties go to the higher thresholds (the stricter call)."""
    _, grid, prepare, decide = CV_METHODS[method]
    model = prepare(train)
    best = None
    for th in grid:
        p, r = _pr(_counts([decide(c, th, model) for c in train], train))
        p = 0.0 if p != p else p
        ok = p >= TARGET_PRECISION
        key = (ok, r if ok else p, sum(th))
        if best is None or key > best[0]:
            best = (key, th)
    return best[1], model


def cross_validate(folds: dict[str, list[Case]], methods=CV_METHODS) -> dict[str, dict]:
    """Leave one fold out: fit on the others, decide on it. {method: {fold: (thresholds, counts), "pooled": counts}}."""
    out: dict[str, dict] = {}
    for method in methods:
        decide = CV_METHODS[method][3]
        pooled = _counts([], [])
        out[method] = {}
        for name, test in folds.items():
            th, model = fit(method, [c for f, cs in folds.items() if f != name for c in cs])
            n = _counts([decide(c, th, model) for c in test], test)
            out[method][name] = (th, n)
            pooled = {k: pooled[k] + n[k] for k in pooled}
        out[method]["pooled"] = pooled
    return out


def _fmt(n: dict) -> str:
    p, r = _pr(n)
    return (f"precision {p:6.1%}  recall {r:6.1%}  hard {n['hard_wrong']:2d}/{n['hard']:<2d}  "
            f"guesses {n['guess_same']} same / {n['guess_diff']} different  (tp {n['tp']} fp {n['fp']} fn {n['fn']})")


_PROJECT = re.compile(r"^[a-z_]*?[a-z]+(?=\d|_r\d|$)")  # a log's file name starts with its project: lcpp6433_kaits


def project(path: str) -> str:
    """The source project a log's file name names (``lcpp6433_kaits.log``: ``lcpp``)."""
    stem = Path(path).stem.lower()
    m = _PROJECT.match(stem)
    return m.group(0) if m else stem


def groups(dirs: list[str]) -> dict[str, list[str]]:
    """The folds: one per ``--pairs`` directory, those that share a log or a source project merged (a
    project is never on both sides of a fold)."""
    seen: dict[str, set[str]] = {}
    for d in dirs:
        pairs = json.loads((Path(d) / "pairs.json").read_text(encoding="utf-8"))
        names = {Path(p[k]).name for p in pairs for k in ("a", "b")}
        seen[d] = names | {"project:" + project(n) for n in names}
    merged: list[list[str]] = []
    for d in dirs:
        joined = [g for g in merged if any(seen[d] & seen[x] for x in g)]
        for g in joined:
            merged.remove(g)
        merged.append([x for g in joined for x in g] + [d])
    return {Path(g[0]).name + (f" +{len(g) - 1} more" if len(g) > 1 else ""): g for g in merged}


def main_cv(dirs: list[str], by_dir: bool = False) -> None:
    from dbglog.diagnose.fingerprint import fingerprint_text

    folds: dict[str, list[Case]] = {}
    for name, members in ({Path(d).name: [d] for d in dirs} if by_dir else groups(dirs)).items():
        pairs, texts = load(members)
        fps = {f: fingerprint_text(t) for f, t in texts.items()}
        folds[name] = [Case(name, p, fps[p["a"]], fps[p["b"]]) for p in pairs]
    n = sum(len(cs) for cs in folds.values())
    how = "one per --pairs directory" if by_dir else "the --pairs directories, those sharing a log or a project merged"
    print(f"leave-one-group-out over {len(folds)} groups ({how}), {n} pairs; "
          f"fits keep the most recall at training precision >= {TARGET_PRECISION:.0%}")
    results = cross_validate(folds)
    for method, res in results.items():
        print(f"\n{method}: {CV_METHODS[method][0]}")
        for name in folds:
            th, cnt = res[name]
            print(f"  left out {name[:28]:28s} thresholds {str(th):10s} {_fmt(cnt)}")
        print(f"  POOLED over the left-out folds                            {_fmt(res['pooled'])}")
        every = [c for cs in folds.values() for c in cs]  # (the same method fitted and judged on everything)
        th, model = fit(method, every)
        print(f"  in-sample (fitted on all)                   {str(th):13s} {_fmt(_counts([CV_METHODS[method][3](c, th, model) for c in every], every))}")
    _decision_cost([c for cs in folds.values() for c in cs])


def _decision_cost(cases: list[Case]) -> None:
    """What the rules' decision costs per pair of fingerprints (a lookup judges the close forms only)."""
    from dbglog.diagnose.fingerprint import message, similarity

    pairs = [(c.a, c.b) for c in cases if c.rules is not None]
    times = []
    for _ in range(5):
        message.cache_clear()
        t0 = time.perf_counter()
        for a, b in pairs:
            similarity(a, b)
        times.append((time.perf_counter() - t0) * 1000 / len(pairs))
    print(f"\nthe rules' decision: median {statistics.median(times):.3f} ms a pair over 5 passes of {len(pairs)} pairs")


if __name__ == "__main__":
    main()
