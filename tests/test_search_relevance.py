"""Relevance: >= 40 realistic queries over a GPU/ML-infra corpus; top-3 accuracy must be >= 90%."""

from search_corpus import QUERIES

from dbglog.kb import search


def test_relevance(corpus_recs, capsys):
    recs, ids = corpus_recs
    inv = {v: k for k, v in ids.items()}
    top1 = top3 = 0
    misses = []
    for q, key, num, need in QUERIES:
        res = search.search(recs.store.conn, q, kinds=("attempt",), limit=10)
        got = [(inv[h.investigation], h.number) for h in res.hits]
        pos = got.index((key, num)) + 1 if (key, num) in got else None
        top1 += pos == 1
        top3 += pos is not None and pos <= 3
        ok = pos == 1 if need == "top1" else (pos is not None and pos <= 3)
        if not ok:
            misses.append(f"{q!r}: wanted {key}#{num} ({need}), got position {pos}: {got[:3]}")
    n = len(QUERIES)
    assert n >= 40
    with capsys.disabled():
        print(f"\nsearch relevance: {n} queries, top-1 {top1}/{n} = {top1 / n:.0%}, "
              f"top-3 {top3}/{n} = {top3 / n:.0%}")
        for m in misses:
            print("  miss:", m)
    assert top3 / n >= 0.9, misses


def test_default_search_mixes_kinds(corpus_recs):
    recs, ids = corpus_recs
    res = search.search(recs.store.conn, "cuda-gdb attach mbarrier", limit=5)
    assert res.hits[0].kind == "next" and res.hits[0].investigation == ids["ncu"]
    res = search.search(recs.store.conn, "GPU has fallen off the bus", kinds=("investigation",))
    assert res.hits[0].investigation == ids["xid"]
    res = search.search(recs.store.conn, "head_dim", kinds=("difference",))
    assert res.hits[0].fields["factor"] == "head_dim"


def test_filters(corpus_recs):
    recs, ids = corpus_recs
    c = recs.store.conn
    hits = search.search(c, "replay", filters=search.Filters(outcomes=("worked",)), limit=50).hits
    assert hits and all(h.outcome == "worked" for h in hits)
    hits = search.search(c, "timeout", filters=search.Filters(status="open"), limit=50).hits
    assert hits and all(h.status == "open" for h in hits)
    hits = search.search(c, "kernel", filters=search.Filters(tags=("profiler",)), limit=50).hits
    assert hits and all("profiler" in h.tags for h in hits)
    hits = search.search(c, "driver", filters=search.Filters(investigation=ids["illegal"]), limit=50).hits
    assert hits and all(h.investigation == ids["illegal"] for h in hits)
    assert not search.search(c, "driver", filters=search.Filters(since="2999-01-01T00:00:00Z")).hits


def test_hit_explains_itself(corpus_recs):
    recs, _ = corpus_recs
    h = search.search(recs.store.conn, "--replay-mode application", kinds=("attempt",)).hits[0]
    d = h.to_dict()
    assert d["outcome"] == "worked" and d["attempt"] == 2
    assert "**" in d["snippet"] and d["why"]["match"] == "all words"
    assert "did" in d["why"]["fields"]
    q = search.search(recs.store.conn, "mbarier").query
    assert q.terms[0].kind == "typo" and q.terms[0].corrected == "mbarrier"
    q = search.search(recs.store.conn, "eplay-mod").query
    assert q.terms[0].kind == "substring"


def test_tried(corpus_recs):
    recs, ids = corpus_recs
    c = recs.store.conn
    r = search.tried(c, "increase the NCCL timeout")
    assert r.close and r.close[0].investigation == ids["nccl"] and r.close[0].number == 1
    assert r.close[0].outcome == "failed"
    assert not search.tried(c, "rewrite the tokenizer in rust").close
    assert not search.tried(c, "quantum annealing scheduler").close


def test_similar_attempts_warns_on_failed(corpus_recs):
    recs, ids = corpus_recs
    c = recs.store.conn
    sim = search.similar_attempts(c, ids["nan"], 99, title="Gradient clipping at 0.5",
                                  did="clip_grad_norm_(params, 0.5)", hypothesis="Exploding gradients.")
    assert sim and sim[0]["investigation"] == ids["nan"] and sim[0]["attempt"] == 4
    # a worked attempt is not a warning
    assert not search.similar_attempts(c, ids["nan"], 99, did="upcast attention scores to float32 before softmax")
    assert not search.similar_attempts(c, ids["nan"], 99, did="totally new idea about tokenizers and caches")
