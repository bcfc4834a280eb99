"""util/recache.py: a pattern's compiled form kept between processes gives back the very pattern
``re.compile`` gives (same flags, same engine code, same matches); a damaged or foreign file, or one
that cannot be written, only means compiling as always."""

import marshal
import re

import pytest

from dbglog.util import recache


@pytest.fixture
def kept(tmp_path, monkeypatch):
    """recache with its file in tmp_path and nothing loaded yet."""
    path = tmp_path / "__pycache__" / "re.test.marshal"
    monkeypatch.setattr(recache, "_path", lambda: str(path))
    monkeypatch.setattr(recache, "_table", None)
    monkeypatch.setattr(recache, "_new", {})
    monkeypatch.setattr(recache, "_made", {})
    monkeypatch.setattr(recache.sys, "dont_write_bytecode", False)
    return path


PATTERNS = [
    (r"\b(increas\w*|rais(?:e|ed|es|ing)|bigger)\b", re.I),
    (r"(?P<name>[A-Z_]+)=(?P<value>\S+)", 0),
    (r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]", 0),
    (r"^(?:#{2,4}) Attempt (\d+)(?::\s?(.*))?$", re.M),
    (r"(?<![\w-])(-{0,2}[A-Za-z][\w.-]*)=([\w.:+-]+)|→|->", re.I | re.S),
]
TEXT = "Raised NCCL_SHM_DISABLE=1 --max-num-seqs=64 bigger\n## Attempt 3: x -> y \x01 \ud800"


def _reload():
    recache._table = None
    recache._made.clear()  # (a new process: nothing built yet)


def test_a_pattern_asked_for_again_is_not_parsed_again(kept, monkeypatch):
    # Callers may ask per call (outcome.without_denied_wins does, once per cue per sentence): the regex parser,
    # Python code, ran twice per ask before, and was most of a cold import's time.
    forms = []
    real = recache._form
    monkeypatch.setattr(recache, "_form", lambda *a: forms.append(a[0]) or real(*a))
    first = recache.compile(r"\bno (?:luck|change)\b", re.I)
    assert all(recache.compile(r"\bno (?:luck|change)\b", re.I) is first for _ in range(3))
    assert forms == [r"\bno (?:luck|change)\b"]


def test_nothing_is_prepared_for_a_file_that_will_not_be_written(kept, monkeypatch):
    monkeypatch.setattr(recache.sys, "dont_write_bytecode", True)
    monkeypatch.setattr(recache, "_form", lambda *a: pytest.fail("the form was built"))
    assert recache.compile(r"x+y", 0).match("xxy")


def test_a_kept_pattern_is_the_pattern_re_compile_gives(kept):
    for pattern, flags in PATTERNS:
        recache.compile(pattern, flags)
    recache.save()
    assert kept.exists()
    _reload()
    for pattern, flags in PATTERNS:
        got, want = recache.compile(pattern, flags), re.compile(pattern, flags)
        assert (pattern, int(flags)) in recache._table
        assert got == want and got.groupindex == want.groupindex and got.groups == want.groups
        assert [m.span() for m in got.finditer(TEXT)] == [m.span() for m in want.finditer(TEXT)]
        assert [m.groups() for m in got.finditer(TEXT)] == [m.groups() for m in want.finditer(TEXT)]


@pytest.mark.parametrize("damage", [b"", b"not marshal at all", marshal.dumps([1, 2, 3]),
                                    marshal.dumps({(r"\d+", 0): (0, [999999, 1], 0, {}, ())})])
def test_a_damaged_or_foreign_file_means_compiling_as_always(kept, damage):
    kept.parent.mkdir()
    kept.write_bytes(damage)
    rx = recache.compile(r"\d+", 0)
    assert rx == re.compile(r"\d+") and rx.findall("a 12 b 3") == ["12", "3"]


def test_nothing_is_written_when_python_writes_no_bytecode(kept, monkeypatch):
    monkeypatch.setattr(recache.sys, "dont_write_bytecode", True)
    recache.compile(r"x+y", 0)
    recache.save()
    assert not kept.exists()


def test_a_place_that_cannot_be_written_is_no_error(kept):
    kept.parent.write_text("a file where the cache directory would be")  # (refuses root too)
    recache.compile(r"x+z", 0)
    recache.save()  # (silently not kept)
    assert kept.parent.is_file()
    assert recache.compile(r"x+z", 0).fullmatch("xxz")


def test_the_reader_s_cue_patterns_are_the_same_in_every_process():
    # Kept forms are found by pattern text: a table pattern built in set order changed with each process's hash
    # seed, so every command compiled ~150 of them anew and the file filled with copies.
    import os
    import subprocess
    import sys

    code = ("from dbglog.docreader import cues\n"
            "print(sorted(p.pattern for lang in ('en', 'zh', 'de') for p in cues.table(lang).rx.values()))")
    out = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")]
    assert out[0] == out[1] and len(out[0]) > 1000


def test_a_value_derived_from_a_pattern_is_computed_once_per_install(kept):
    calls = []

    def openers(p):
        calls.append(p)
        return frozenset({"no luck"})

    assert recache.derived("openers", r"\bno luck\b", openers) == frozenset({"no luck"})
    recache.save()
    _reload()  # a later process reads it from the file
    assert recache.derived("openers", r"\bno luck\b", openers) == frozenset({"no luck"})
    assert calls == [r"\bno luck\b"]


def test_a_derived_none_is_kept_as_an_answer_not_taken_for_a_missing_one(kept):
    calls = []
    assert recache.derived("openers", "x", lambda p: calls.append(p)) is None
    recache.save()
    _reload()
    assert recache.derived("openers", "x", lambda p: calls.append(p)) is None
    assert calls == ["x"]


def test_the_outcome_cues_read_the_same_openers_from_the_file_as_from_the_parser(kept):
    from dbglog.core import outcome

    fresh = [outcome._openers(p) for p, _ in outcome._CUES]
    for p, _ in outcome._CUES:
        recache.derived("openers", p, outcome._openers)
    recache.save()
    _reload()
    assert [recache.derived("openers", p, lambda _: pytest.fail("parsed again")) for p, _ in outcome._CUES] == fresh
