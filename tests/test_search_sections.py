"""Search over free text and in the field's language (issue 11).

* synonym / abbreviation / env-var / identifier expansion of queries (unit and end to end);
* free sections of investigations: hits with heading path, file and line, in text and JSON;
* the section index across merge and migration;
* watched living docs: found without an import, and fresh after an edit, a delete, a new file;
* ``tried`` over free text: outcome from the text, ideas are not attempts.
"""

import json
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dbglog.core import synonyms
from dbglog.kb import mirror, search, sections
from dbglog.kb.merge import merge
from dbglog.core.model import Section
from conftest import run_cli_inproc
from dbglog.kb.records import Records
from dbglog.util.workspace import Workspace


@pytest.fixture
def cli():
    # In-process through dbglog.entry (nothing here is about the process boundary)
    return run_cli_inproc


def terms(q):
    return [(t.raw, t.alts) for t in search.parse_query(q).terms]


# --- the field's language ------------------------------------------------------------------------


def test_identifier_split():
    assert synonyms.split_identifier("cudaMallocAsync") == ["cuda", "malloc", "async"]
    assert synonyms.split_identifier("NCCL_P2P_DISABLE") == ["nccl", "p2p", "disable"]
    assert synonyms.split_identifier("FlashAttention2") == ["flash", "attention", "2"]
    assert synonyms.split_identifier("flash-attn.v2") == ["flash", "attn", "v2"]
    assert synonyms.split_identifier("HTTPServer") == ["http", "server"]
    assert synonyms.split_identifier("fa2") == ["fa2"]
    assert synonyms.env_name("PYTORCH_NO_CUDA_MEMORY_CACHING=1") == "PYTORCH_NO_CUDA_MEMORY_CACHING"
    assert synonyms.env_name("expandable_segments") is None


def test_identifier_words_are_indexed():
    assert synonyms.identifier_words("our ShardedEvalSampler and cudaMallocAsync; NCCL_P2P_DISABLE=1 H100") == \
        "sharded eval sampler\ncuda malloc async"
    assert synonyms.identifier_words("plain words, snake_case, UPPER") == ""
    import time

    t = time.process_time()  # linear time: a 200 KB field (a pasted log) must not backtrack (CPU time: load adds none)
    assert synonyms.identifier_words("y" * 200_000, "aB" * 100_000, "x " * 100_000) == ""
    assert time.process_time() - t < 2.0


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", "B", "cd", "EF", "_", "1", " ", "-", ".", "é", "Ä", "\n"]), max_size=40))
def test_identifier_words_are_those_of_every_word_that_changes_case(parts):
    # found in one pass over the text: the same words, in the same order, as looking at each word alone
    import re

    text = "".join(parts)
    want = dict.fromkeys(" ".join(synonyms.split_identifier(w)) for w in re.findall(r"[^\W_]+", text)
                         if len(w) <= 100 and re.search(r"[a-z][A-Z]|[A-Z]{2}[a-z]", w))
    assert synonyms.identifier_words(text) == "\n".join(want)


def test_query_expansion():
    (raw, alts), = terms("IMA")
    assert raw == "IMA" and "illegal memory access" in alts
    (raw, alts), = terms("illegal memory access")  # a phrase becomes one term matching its abbreviation
    assert raw == "illegal memory access" and "ima" in alts
    (raw, alts), = terms("out of memory")
    assert "oom" in alts
    assert "tensor parallel" in dict(terms("TP hang"))["TP"]
    assert [r for r, _a in terms("TP=8 hang")] == ["TP", "8", "hang"]  # KEY=VALUE of a known word splits
    assert "nsight compute" in dict(terms("ncu"))["ncu"]
    assert "cuda graphs" in dict(terms("cudagraphs"))["cudagraphs"]
    t = search.parse_query("PYTORCH_NO_CUDA_MEMORY_CACHING=1").terms
    assert len(t) == 1 and t[0].base == "PYTORCH_NO_CUDA_MEMORY_CACHING" and "caching allocator off" in t[0].alts
    (raw, alts), = terms("caching allocator off")
    assert alts == ["PYTORCH_NO_CUDA_MEMORY_CACHING"]
    # a non-trivial value is matched on its own; the variable matches whatever value it had
    t = search.parse_query("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True").terms
    assert [x.raw for x in t] == ["PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "expandable_segments"]
    assert dict(terms("cudaMallocAsync"))["cudaMallocAsync"] == ["cuda malloc async"]
    (r1, a1), (r2, a2) = terms("the rank hangs")
    assert (r1, a1) == ("rank", []) and r2 == "hangs" and "stuck" in a2
    assert search.parse_query("tensor-parallel").terms[0].alts  # '-' splits like a space


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    # module-scoped: the tests using it only search (read-only), 24 of them
    recs = Records(Workspace(tmp_path_factory.mktemp("kb") / ".dbglog"), create=True)
    docs = {
        "ima": ("Paged attention crashes", "an illegal memory access was encountered in the decode kernel",
                [("Run under compute-sanitizer", "compute-sanitizer --tool memcheck python serve.py",
                  "reports an out-of-bounds read in paged_attention_v2", "failed")]),
        "oom": ("Jetson load fails", "CUDA out of memory while loading weights",
                [("Cap the KV cache", "--gpu-memory-utilization 0.5", "still runs out of memory", "failed"),
                 ("Allocator off", "PYTORCH_NO_CUDA_MEMORY_CACHING=1 python serve.py", "loads fine", "worked")]),
        "tp": ("TP=8 startup hang on H200", "tensor parallel workers stall at init",
               [("NCCL logs", "NCCL_DEBUG=INFO", "rank 5 never joins", "inconclusive")]),
        "nan": ("Loss becomes not a number", "loss is not a number after step 1200 in bf16",
                [("fp32 softmax", "upcast the softmax to fp32", "finite for 5000 steps", "worked")]),
        "ncu": ("Nsight Compute hangs", "nsight compute stops at the first replay pass",
                [("Application replay", "ncu --replay-mode application", "completes", "worked")]),
        "graph": ("Capture invalidated", "cuda graphs capture fails with operation not permitted",
                  [("Use eager", "--enforce-eager", "no crash for 2000 requests", "worked")]),
        "bn": ("Slow BatchNorm", "the BatchNorm kernel is slow on MI300X",
               [("sync_batch_norm off", "SyncBatchNorm replaced", "2x faster", "worked")]),
        "malloc": ("Async allocator", "cuda_malloc_async backend leaks",
                   [("Switch backend", "cudaMallocAsync via PYTORCH_CUDA_ALLOC_CONF=backend:native", "same", "failed")]),
        "sampler": ("Eval desync", "one rank runs one more eval batch",
                    [("Custom sampler", "our ShardedEvalSampler does not pad", "rank 12 hangs", "failed")]),
    }
    ids = {}
    for key, (title, symptom, atts) in docs.items():
        i = recs.new(title, symptom=symptom).id
        ids[key] = i
        for t, did, result, outcome in atts:
            recs.add_attempt(i, title=t, did=did, result=result, outcome=outcome)
    yield recs, ids
    recs.close()


@pytest.mark.parametrize("query,key", [
    ("IMA", "ima"), ("illegal address paged attention", "ima"),
    ("OOM loading weights", "oom"), ("disable the caching allocator", "oom"), ("caching allocator off", "oom"),
    ("no cuda memory caching", "oom"),
    ("tensor parallel hang", "tp"), ("TP startup", "tp"),
    ("NaN loss bf16", "nan"),
    ("ncu hang", "ncu"), ("nsight compute replay", "ncu"),
    ("cudagraphs capture", "graph"), ("CUDA graph capture invalidated", "graph"),
    ("batch norm slow", "bn"), ("sync batch norm", "bn"),
    ("cudaMallocAsync leak", "malloc"), ("CudaMallocAsync", "malloc"),
    ("ilegal memroy acess", "ima"),  # typos still work
    ("sharded eval sampler", "sampler"), ("eval sampler", "sampler"),  # identifier words, index side
])
def test_field_language_finds_the_other_spelling(kb, query, key):
    recs, ids = kb
    hits = search.search(recs.store.conn, query, limit=3).hits
    assert hits and hits[0].investigation == ids[key], [(h.investigation, h.title) for h in hits]


# --- free sections -------------------------------------------------------------------------------

NOTES = """We first suspected the allocator.

### NCCL environment
Set NCCL_P2P_DISABLE=1 on all 8 ranks: still hangs at the first all_reduce.

```
# not a heading: a comment in a fence
nvidia-smi topo -m
```

### Driver
Upgraded the driver to 550.54: the hang disappears, 300 steps clean."""


def test_chunks_follow_sub_headings():
    chunks = sections.investigation_chunks([Section("## Investigation notes", NOTES)])
    assert [c.heading for c in chunks] == ["Investigation notes", "Investigation notes > NCCL environment",
                                           "Investigation notes > Driver"]
    assert chunks[1].line == 3 and chunks[1].body.startswith("### NCCL environment")
    assert "# not a heading" in chunks[1].body  # a '#' line in a fence is text
    doc = sections.chunk("# Title\nintro\n## A\n" + "\n\n".join(f"para {i}" for i in range(60)) + "\n## B\nend")
    assert [c.heading for c in doc][:2] == ["Title", "Title > A"] and doc[-1].heading == "Title > B"
    assert sum(c.heading == "Title > A" for c in doc) >= 2  # a long section is cut between blocks
    assert doc[-1].body == "## B\nend" and doc[-1].line == 3 + 60 * 2 - 1 + 1


@pytest.fixture
def notes_ws(ws, cli):
    cli(ws, "new", "NCCL allreduce hangs on 8 GPUs", "--no-env", check=0)
    cli(ws, "attempt", "add", "Raise the timeout", "--did", "timeout=2h", "-r", "still hangs", "-o", "failed", check=0)
    recs = Records(Workspace(ws / ".dbglog"))
    inv = recs.store.get_meta("current")
    recs.set_section(inv, "## Investigation notes", NOTES)
    recs.close()
    return ws, inv


def test_free_section_hit_text_and_json(notes_ws, cli):
    ws, inv = notes_ws
    p = cli(ws, "search", "disable p2p", "--json", check=0)
    data = json.loads(p.stdout)
    h = data["hits"][0]
    assert h["kind"] == "section" and h["source"] == "investigation" and h["investigation"] == inv
    assert h["heading"] == "Investigation notes > NCCL environment"
    assert h["text"].startswith("Set NCCL_P2P_DISABLE=1") and "**NCCL_P2P_DISABLE**" in h["snippet"]
    lines = (ws / h["path"]).read_text().split("\n")
    assert lines[h["line"] - 1].startswith("Set NCCL_P2P_DISABLE=1")
    p = cli(ws, "search", "nvidia-smi topo", check=0)
    assert "Section: Investigation notes > NCCL environment" in p.stdout
    assert f"{h['path']}:{h['line'] + 4}: nvidia-smi topo -m" in p.stdout
    p = cli(ws, "search", "topo", "--kind", "attempt", check=0)
    assert "No matches" in p.stdout


def test_tried_reads_free_sections(notes_ws, cli):
    ws, inv = notes_ws
    p = cli(ws, "tried", "NCCL_P2P_DISABLE=1", check=0)
    first = p.stdout.split("\n")[1]
    assert "Investigation notes > NCCL environment" in first and "[" in first
    p = cli(ws, "tried", "--json", "upgrade the driver", check=0)
    data = json.loads(p.stdout)
    assert data["tried"] and data["close"][0]["kind"] == "section" and data["close"][0]["text"].startswith("Upgraded")
    p = cli(ws, "tried", "rewrite the tokenizer in rust", check=1)
    assert "Not tried" in p.stdout


def test_section_index_after_merge(tmp_path):
    """A two-branch merge of free sections, written to the file and synced, is what search sees."""
    recs = Records(Workspace(tmp_path / ".dbglog"), create=True)
    inv = recs.new("Merged notes").id
    recs.set_section(inv, "## Notes", "base text kwbase")
    base = recs.store.load(inv)
    ours, theirs = recs.store.load(inv), recs.store.load(inv)
    ours.sections[0].body = "ours rewrote it: kwours"
    theirs.sections.append(Section("## Bisection report", "first bad commit kwtheirs"))
    result = merge(base, ours, theirs)
    assert not result.conflicts
    (tmp_path / recs.path_for(inv)).write_text(mirror.render(result.inv, recs.ws.templates_dir))
    recs.sync(force=True)
    conn = recs.store.conn
    for w in ("kwours", "kwtheirs"):
        assert search.search(conn, w, kinds=("section",)).hits[0].investigation == inv
    assert not search.search(conn, "kwbase", kinds=("section",)).hits
    assert search.check_index(conn) == []
    recs.close()


def test_migration_chunks_existing_sections(tmp_path):
    """A database from before 0008_sections: its investigations' sections are indexed on open, and
    its attempts' identifier words (0009)."""
    import sqlite_utils
    from sqlite_utils.migrations import Migrations

    from dbglog.kb import store

    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)
    old = Migrations("dbglog")
    for name, fn in store.MIGRATIONS[:store.MIGRATIONS.index(("0008_sections", store._sections))]:
        old(name=name)(fn)
    old.apply(sqlite_utils.Database(conn))
    conn.execute("INSERT INTO investigations (id, title, sections) VALUES ('20260101-x-abcd', 'old', ?)",
                 (json.dumps([{"heading": "## Notes", "body": "the cuobjdump output\n### Later\nmore"}]),))
    conn.execute("INSERT INTO attempts (investigation_id, number, did) VALUES ('20260101-x-abcd', 1, "
                 "'switched to cudaMallocAsync')")
    conn.execute(f"PRAGMA user_version = {store.MIGRATIONS.index(('0008_sections', store._sections))}")
    conn.commit()
    conn.close()
    s = store.Store(db)
    hits = search.search(s.conn, "cuobjdump").hits
    assert hits and hits[0].kind == "section" and hits[0].fields["heading"] == "Notes"
    hits = search.search(s.conn, "malloc async", kinds=("attempt",)).hits  # 0009 filled old rows' words
    assert hits and hits[0].number == 1
    assert search.check_index(s.conn) == []
    s.conn.execute("DELETE FROM sections")  # a damaged index is reported, and rebuilt
    assert search.check_index(s.conn)
    search.rebuild_index(s.conn)
    assert search.check_index(s.conn) == []
    s.close()


# --- watched docs --------------------------------------------------------------------------------


def test_watched_docs_fresh_without_import(ws, cli):
    (ws / ".dbglog" / "config.toml").write_text('[search]\nwatch = ["DEBUG.md", "docs/debug/**/*.md"]\n')
    (ws / "DEBUG.md").write_text("# Debug log\n\n## NCCL hang\n\n### Attempt 1\nTried NCCL_IB_DISABLE=1: "
                                 "still hangs.\n\n## Ideas\n- [ ] try NCCL_ALGO=Tree\n")
    p = cli(ws, "search", "disable infiniband", "--json", check=0)
    h = json.loads(p.stdout)["hits"][0]
    assert (h["kind"], h["source"], h["path"], h["line"]) == ("section", "watched", "DEBUG.md", 6)
    assert h["heading"] == "Debug log > NCCL hang > Attempt 1" and h["investigation"] is None
    p = cli(ws, "search", "NCCL_IB_DISABLE", check=0)
    assert "Watched doc: Debug log > NCCL hang > Attempt 1" in p.stdout and "DEBUG.md:6:" in p.stdout
    # tried: the attempt in the doc is close (with the outcome its text states); the idea is not
    p = cli(ws, "tried", "--json", "NCCL_IB_DISABLE", check=0)
    assert json.loads(p.stdout)["close"][0]["path"] == "DEBUG.md"
    p = cli(ws, "tried", "--json", "NCCL_ALGO=Tree", check=1)
    data = json.loads(p.stdout)
    assert not data["tried"] and data["mentioned"][0]["heading"] == "Debug log > Ideas"
    # edit: the new text is found, the old is gone
    (ws / "DEBUG.md").write_text("# Debug log\n\n## NCCL hang\nSwitched to NCCL_PROTO=Simple, fixed.\n")
    assert json.loads(cli(ws, "search", "NCCL_PROTO", "--json", check=0).stdout)["hits"][0]["line"] == 4
    assert not json.loads(cli(ws, "search", "NCCL_IB_DISABLE", "--json", check=0).stdout)["hits"]
    # a new file under a glob is found; a deleted one is forgotten
    (ws / "docs" / "debug" / "gpu").mkdir(parents=True)
    (ws / "docs" / "debug" / "gpu" / "xid.md").write_text("# Xid 79\nThe GPU has fallen off the bus.\n")
    h = json.loads(cli(ws, "search", "fallen off the bus", "--json", check=0).stdout)["hits"][0]
    assert h["path"] == "docs/debug/gpu/xid.md" and h["line"] == 2
    (ws / "DEBUG.md").unlink()
    assert not json.loads(cli(ws, "search", "NCCL_PROTO", "--json", check=0).stdout)["hits"]
    # nothing becomes an investigation
    assert json.loads(cli(ws, "list", "--json", check=0).stdout) == []


def test_a_watched_docs_text_before_any_heading_is_named_by_its_file(ws, cli_fast):
    (ws / ".dbglog" / "config.toml").write_text('[search]\nwatch = ["notes/*.md"]\n')
    (ws / "notes").mkdir()
    (ws / "notes" / "bf16.md").write_text("We swapped SGD for AdamW: the divergence vanishes.\n")
    out = cli_fast(ws, "tried", "swap SGD for AdamW", check=0).stdout
    assert "[WORKED?] bf16.md\n" in out  # (it read "[WORKED] " and nothing: the chunk has no heading; "?": a guess)


def test_watch_refresh_is_cheap_when_nothing_changed(tmp_path):
    recs = Records(Workspace(tmp_path / ".dbglog"), create=True)
    (tmp_path / ".dbglog" / "config.toml").write_text('[search]\nwatch = ["notes/*.md"]\n')
    (tmp_path / "notes").mkdir()
    for i in range(3):
        (tmp_path / "notes" / f"n{i}.md").write_text(f"# Note {i}\nword{i}\n")
    r = sections.refresh(recs.store, tmp_path, recs.ws.config_path)
    assert sorted(r.indexed) == ["notes/n0.md", "notes/n1.md", "notes/n2.md"]
    assert not sections.refresh(recs.store, tmp_path, recs.ws.config_path).changed
    p = tmp_path / "notes" / "n1.md"
    st = p.stat()
    p.write_text(p.read_text())  # same bytes, new mtime: hashed, not re-chunked
    import os

    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000))
    assert not sections.refresh(recs.store, tmp_path, recs.ws.config_path).indexed
    (tmp_path / ".dbglog" / "config.toml").write_text("")  # unwatched: its chunks go
    assert len(sections.refresh(recs.store, tmp_path, recs.ws.config_path).removed) == 3
    assert recs.store.conn.execute("SELECT count(*) FROM sections").fetchone()[0] == 0
    (tmp_path / ".dbglog" / "config.toml").write_text("[search]\nwatch = 3\n")
    with pytest.raises(Exception, match="watch must be a list"):
        sections.refresh(recs.store, tmp_path, recs.ws.config_path)
    recs.close()


def test_tried_weighs_words_and_requires_named_identifiers(kb):
    """Closeness: telling words count more than common ones; a named flag/env var must be there."""
    recs, ids = kb
    conn = recs.store.conn
    r = search.tried(conn, "cap the KV cache with --gpu-memory-utilization")
    assert r.close and r.close[0].investigation == ids["oom"] and r.close[0].outcome == "failed"
    # the same idea with a flag nobody used: not tried, however many other words match
    assert not search.tried(conn, "cap the KV cache with --max-model-len").close
    assert not search.tried(conn, "set NCCL_ALGO=Tree on the TP=8 startup hang").close
    # common words alone (cuda, memory) do not make an idea about something else close
    assert not search.tried(conn, "record a cuda memory snapshot").close
    weights = {t.raw: t.weight for t in search.tried(conn, "memory snapshot").result.query.terms}
    assert weights["snapshot"] > weights["memory"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a b", "# h", "  ## x", "===", "---", "- item", "> q", "```", "    code", "",
                                  " text #1", "a\\r# b", "1. one", "x\\ty", "--", "= not"]), max_size=45),
       st.booleans())
def test_chunk_without_a_parse_is_what_the_parse_gives(parts, base):
    # The fast path (no heading-like line, short) must give exactly the parse's chunks.
    text = "\n".join(p.replace("\\r", "\r") for p in parts)
    b = ("Notes",) if base else ()
    assert sections.chunk(text, b, first_line=3) == (
        sections._parsed_chunks(text, text.split("\n"), b, 3) if text.strip() else [])


def test_an_outcome_read_from_free_text_is_marked_as_a_guess_in_every_list(ws, cli_fast):
    # (the close list says "outcome read from its text, a guess" in a line of its own, and its "[WORKED?]" too; the lists of one line per
    # record -- closest, another way, related -- showed "[WORKED]" as if someone had recorded it)
    (ws / ".dbglog" / "config.toml").write_text('[search]\nwatch = ["notes/*.md"]\n')
    (ws / "notes").mkdir()
    (ws / "notes" / "n.md").write_text("# NCCL\n\nSwitched to NCCL_PROTO=Simple on the A100 nodes, fixed the hang.\n")
    out = cli_fast(ws, "tried", "NCCL_PROTO=LL128", check=1).stdout
    assert "  - [WORKED?] Switched to NCCL_PROTO=Simple" in out
    out = cli_fast(ws, "tried", "raise the NCCL timeout on the A100 nodes", check=1).stdout
    assert "Closest: [WORKED?] Switched to NCCL_PROTO=Simple" in out
