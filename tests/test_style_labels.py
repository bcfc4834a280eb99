"""Schema and consistency checks for the own-words style corpus (tests/corpus/styles/).

Every `NN-<style>-<topic>.md` has a `.labels.json` beside it; the rules are in
tests/corpus/styles/README.md. These tests keep hand-written labels honest: a
line range that drifts after an edit of its document fails here, not in a benchmark.
"""
import json
from pathlib import Path

import pytest

STYLES_DIR = Path(__file__).parent / "corpus" / "styles"
STYLE_TAGS = {"thread", "command-notes", "case-results", "lab-notebook", "checklist-plan",
              "postmortem", "table", "zh", "de", "pl", "blog", "protocol"}
OUTCOMES = {"worked", "failed", "partial", "unknown"}
KINDS = {"action+result", "action"}
ATTEMPT_KEYS = {"what", "outcome", "who", "kind", "lines", "result_lines", "suggestion_lines",
                "diagnostic", "implied", "group", "quote", "result_quote"}
TOP_KEYS = {"style", "attempts", "proposals", "proposal_lines", "next_steps", "next_step_lines",
            "boilerplate", "notes"}

LABEL_FILES = sorted(STYLES_DIR.glob("*.labels.json"))


def _doc_lines(label_path):
    md = label_path.with_name(label_path.name.replace(".labels.json", ".md"))
    assert md.exists(), f"{label_path.name}: no document beside it"
    return md.read_text(encoding="utf-8").splitlines()


def _check_range(rng, n_lines, where):
    assert isinstance(rng, list) and len(rng) == 2, f"{where}: range must be [first, last]"
    first, last = rng
    assert isinstance(first, int) and isinstance(last, int), f"{where}: range must be integers"
    assert 1 <= first <= last <= n_lines, f"{where}: {rng} outside 1..{n_lines} or reversed"


def _overlaps(a, b):
    return a[0] <= b[1] and b[0] <= a[1]


def test_corpus_has_every_style_and_every_document_has_labels():
    docs = sorted(STYLES_DIR.glob("[0-9][0-9]-*.md"))
    assert len(docs) >= 40
    assert [d.name[:-3] for d in docs] == [p.name[:-len(".labels.json")] for p in LABEL_FILES]
    styles = {json.loads(p.read_text(encoding="utf-8"))["style"] for p in LABEL_FILES}
    assert styles == STYLE_TAGS


def test_index_lists_every_document_with_its_style():
    rows = [line.split(" | ") for line in (STYLES_DIR / "INDEX.txt").read_text(encoding="utf-8").splitlines()[2:]]
    assert {r[0]: r[1] for r in rows} == {
        p.name.replace(".labels.json", ".md"): json.loads(p.read_text(encoding="utf-8"))["style"] for p in LABEL_FILES}


@pytest.mark.parametrize("path", LABEL_FILES, ids=lambda p: p.name.split(".")[0])
def test_labels_follow_schema(path):
    data = json.loads(path.read_text(encoding="utf-8"))
    assert set(data) == TOP_KEYS, f"keys {sorted(set(data) ^ TOP_KEYS)} differ"
    assert data["style"] in STYLE_TAGS
    assert path.name[3:].startswith(data["style"] + "-"), "file name is NN-<style>-<topic>"
    assert isinstance(data["notes"], str)
    for key in ("proposals", "next_steps"):
        texts, ranges = data[key], data[key[:-1] + "_lines"]
        assert all(isinstance(t, str) and t.strip() for t in texts), f"{key}: empty text"
        assert len(texts) == len(ranges), f"{key}: one line range per entry"
    for att in data["attempts"]:
        assert set(att) <= ATTEMPT_KEYS, f"unknown keys {set(att) - ATTEMPT_KEYS}"
        assert att["what"].strip()
        assert att["outcome"] in OUTCOMES
        assert att["kind"] in KINDS
        if "result_lines" in att:
            assert att["kind"] == "action", "a result elsewhere means kind 'action'"
        if att.get("diagnostic"):
            assert att["outcome"] == "unknown", "diagnostic steps carry their finding in 'what'"
        for flag in ("diagnostic", "implied"):
            assert att.get(flag, True) is True, f"{flag} is only ever true"


@pytest.mark.parametrize("path", LABEL_FILES, ids=lambda p: p.name.split(".")[0])
def test_line_ranges_are_inside_the_document_and_non_blank(path):
    data = json.loads(path.read_text(encoding="utf-8"))
    lines = _doc_lines(path)
    n = len(lines)
    for i, att in enumerate(data["attempts"]):
        for key in ("lines", "result_lines", "suggestion_lines"):
            if key in att:
                _check_range(att[key], n, f"attempt {i} {key}")
        first, last = att["lines"]
        assert lines[first - 1].strip() and lines[last - 1].strip(), f"attempt {i}: range starts or ends blank"
        if "result_lines" in att:
            assert lines[att["result_lines"][0] - 1].strip(), f"attempt {i}: result starts blank"
        # a quote pins the attempt's first sentence on a line that holds several
        for quote_key, range_key in (("quote", "lines"), ("result_quote", "result_lines")):
            if quote_key in att:
                assert att[quote_key] and att[quote_key] in lines[att[range_key][0] - 1], (
                    f"attempt {i}: {quote_key} {att[quote_key]!r} not on line {att[range_key][0]}")
    for key in ("proposal_lines", "next_step_lines", "boilerplate"):
        for rng in data[key]:
            _check_range(rng, n, key)
            assert lines[rng[0] - 1].strip(), f"{key} {rng} starts on a blank line"


@pytest.mark.parametrize("path", LABEL_FILES, ids=lambda p: p.name.split(".")[0])
def test_attempt_ranges_do_not_overlap_beyond_a_shared_boundary_line(path):
    attempts = json.loads(path.read_text(encoding="utf-8"))["attempts"]
    for i, a in enumerate(attempts):
        for b in attempts[i + 1:]:
            if not _overlaps(a["lines"], b["lines"]):
                continue
            if a.get("group") is not None and a.get("group") == b.get("group"):
                assert a["lines"] == b["lines"], "a sentence group shares exactly the same lines"
                continue
            first, second = sorted((a["lines"], b["lines"]))
            # hard-wrapped prose: one sentence may end on the line where the next begins
            assert second[0] == first[1] and first != second, (
                f"{a['what']!r} and {b['what']!r} overlap by more than a shared boundary line")


@pytest.mark.parametrize("path", LABEL_FILES, ids=lambda p: p.name.split(".")[0])
def test_attempts_stay_out_of_boilerplate(path):
    data = json.loads(path.read_text(encoding="utf-8"))
    for att in data["attempts"]:
        for rng in data["boilerplate"]:
            assert not _overlaps(att["lines"], rng), f"{att['what']!r} lies in boilerplate {rng}"
