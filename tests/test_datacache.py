"""util/datacache.py: a shipped data file (a cue table, a learned model) is parsed once per install and read
back as it was parsed; a file changed since, a damaged kept form or a directory that cannot be written only
means parsing as always."""

import json
import os

import pytest

from dbglog.util import datacache


@pytest.fixture
def kept(tmp_path, monkeypatch):
    """datacache with its kept forms in tmp_path and nothing loaded yet."""
    store = tmp_path / "__pycache__"
    monkeypatch.setattr(datacache, "_kept_path", lambda p: str(store / (os.path.basename(p) + ".marshal")))
    monkeypatch.setattr(datacache, "_loaded", {})
    monkeypatch.setattr(datacache.sys, "dont_write_bytecode", False)
    return store


def _fresh_process():
    datacache._loaded.clear()


def _count_parses(monkeypatch, kind):
    calls = []
    real = datacache._PARSERS[kind]
    monkeypatch.setitem(datacache._PARSERS, kind, lambda b: calls.append(1) or real(b))
    return calls


def test_a_data_file_is_parsed_once_and_read_back_equal(kept, tmp_path, monkeypatch):
    f = tmp_path / "m.json"
    value = {"bias": -1.25, "weights": {"w:ran": 0.1 + 0.2, "中": 3}, "trees": [[0, 1.5, 1, 2, 0.0, 0]], "x": None}
    f.write_text(json.dumps(value), encoding="utf-8")
    parses = _count_parses(monkeypatch, "json")
    assert datacache.load(f) == value
    _fresh_process()
    assert datacache.load(f) == value
    assert parses == [1]


def test_a_toml_cue_table_reads_back_as_tomllib_gives_it(kept, tmp_path):
    f = tmp_path / "en.toml"
    f.write_text('[heading]\nattempt = ["attempt", "try"]\n[outcome]\nwin = ["works"]\n', encoding="utf-8")
    first = datacache.load(f)
    _fresh_process()
    assert datacache.load(f) == first == {"heading": {"attempt": ["attempt", "try"]}, "outcome": {"win": ["works"]}}


def test_a_file_changed_since_is_parsed_again(kept, tmp_path):
    f = tmp_path / "w.toml"
    f.write_text('a = 1\n', encoding="utf-8")
    assert datacache.load(f) == {"a": 1}
    f.write_text('a = 22\n', encoding="utf-8")  # (another size: stale even within one clock tick)
    _fresh_process()
    assert datacache.load(f) == {"a": 22}


@pytest.mark.parametrize("damage", [b"", b"\x00garbage", b"\xe3\x00\x00"])
def test_a_damaged_kept_form_means_parsing_as_always(kept, tmp_path, damage):
    f = tmp_path / "d.json"
    f.write_text('{"k": [1, 2]}', encoding="utf-8")
    datacache.load(f)
    (kept / "d.json.marshal").write_bytes(damage)
    _fresh_process()
    assert datacache.load(f) == {"k": [1, 2]}


def test_nothing_is_written_when_python_writes_no_bytecode(kept, tmp_path, monkeypatch):
    monkeypatch.setattr(datacache.sys, "dont_write_bytecode", True)
    f = tmp_path / "n.json"
    f.write_text("[1]", encoding="utf-8")
    assert datacache.load(f) == [1]
    assert not kept.exists()


def test_a_place_that_cannot_be_written_is_no_error(kept, tmp_path):
    kept.write_text("a file where the directory should be")
    f = tmp_path / "r.json"
    f.write_text('{"ok": true}', encoding="utf-8")
    assert datacache.load(f) == {"ok": True}


def test_the_shipped_model_and_cue_tables_read_the_same_through_the_cache(kept):
    import tomllib

    from dbglog.docreader import learned
    from dbglog.docreader.cues import _DIR

    for path in sorted(_DIR.glob("*.toml")):
        with open(path, "rb") as fh:
            want = tomllib.load(fh)
        datacache.load(path)
        _fresh_process()
        assert datacache.load(path) == want
    with open(learned.MODEL, encoding="utf-8") as fh:
        want = json.load(fh)
    datacache.load(learned.MODEL)
    _fresh_process()
    assert datacache.load(learned.MODEL) == want
