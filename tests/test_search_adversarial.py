"""Hostile queries give results or one clear line (exit 2), never a traceback."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from dbglog.kb import search
from dbglog.util.errors import DbglogError

WT = str(Path(__file__).resolve().parents[1])

NASTY = ['"', '""', "'", "*", "-", "--", "NOT", "AND OR NOT", "a OR", "NEAR(a b)", "title:replay", "^replay",
         "replay*", "(", ")", "((", '"unbalanced', "don't", "POL-358", "cuda:0", "a.b", "--replay-mode",
         "x" * 10000, " ".join(["replay"] * 5000), "\x00", "🙂 replay", "ümlaut", "{col1 col2}: x", "+", "$",
         "a" * 3, "日本語", "\\", "%", "_", "replay -mode", "-replay", "NOT replay", "%s%s", "'; DROP TABLE x;--"]


@pytest.mark.parametrize("q", NASTY)
def test_library_never_crashes(corpus_recs, q):
    recs, _ = corpus_recs
    try:
        res = search.search(recs.store.conn, q)
    except DbglogError as e:
        assert "\n" not in str(e)
        return
    res.to_dict()


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=60))
def test_fuzz_queries(corpus_recs, q):
    recs, _ = corpus_recs
    try:
        search.search(recs.store.conn, q, limit=3)
        search.tried(recs.store.conn, q)
    except DbglogError as e:
        assert "\n" not in str(e)


def test_operators_are_text(corpus_recs):
    recs, ids = corpus_recs
    hits = search.search(recs.store.conn, "NOT replay").hits  # 'not' is a stopword, replay still found
    assert hits and any(h.investigation == ids["ncu"] for h in hits)
    hits = search.search(recs.store.conn, "--replay-mode").hits
    assert hits and hits[0].investigation == ids["ncu"]


def test_long_query_is_fast(corpus_recs):
    import time

    recs, _ = corpus_recs
    t = time.process_time()  # CPU time (sqlite runs in this process): a loaded machine adds none
    res = search.search(recs.store.conn, "replay kernel " * 2000)
    assert time.process_time() - t < 1.0
    assert res.hits


def _cli(args, cwd, raw=None):
    env = dict(os.environ, PYTHONPATH=WT, DBGLOG_NO_EDITOR="1")
    argv = [sys.executable, "-m", "dbglog", *args] if raw is None else raw
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True)


@pytest.mark.parametrize("q", ['"', "*", "", "NEAR(", "x" * 10000, "-", "'"])
def test_cli_one_line(corpus_recs, q):
    recs, _ = corpus_recs
    p = _cli(["search", q], recs.ws.root)
    assert p.returncode in (0, 2), p.stderr
    assert b"Traceback" not in p.stderr
    if p.returncode == 2:
        assert p.stderr.decode().count("\n") == 1


def test_cli_non_utf8(corpus_recs):
    recs, _ = corpus_recs
    p = _cli(None, recs.ws.root, raw=[sys.executable, "-m", "dbglog", "search", b"caf\xe9 replay"])
    assert p.returncode == 2 and b"UTF-8" in p.stderr and b"Traceback" not in p.stderr
    p = _cli(None, recs.ws.root, raw=[sys.executable, "-m", "dbglog", "tried", b"\xff\xfe"])
    assert p.returncode == 2 and b"Traceback" not in p.stderr
