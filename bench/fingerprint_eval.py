"""Benchmark: is "same failure" (dbglog/diagnose/fingerprint.py) right on labelled pairs of real logs,
and what does a fingerprint cost beside the signature scan? (issue 27)

Run: python bench/fingerprint_eval.py --pairs DIR [--pairs DIR2 ...]   (not part of the test suite)

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
"""

from __future__ import annotations

import argparse
import json
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
    args = ap.parse_args()
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


if __name__ == "__main__":
    main()
