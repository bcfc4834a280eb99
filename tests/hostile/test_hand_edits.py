"""A hand edit of a file in logs/ is read, or refused in one line where it stands; never read so that the next
write drops it. Each case was found by an adversarial probe: before, the text below was silently lost on the
next write (a mistyped attempt heading merged that attempt into the one before it and replaced its result), or
a value YAML builds but cannot hold (a 13th month) made every command an internal error."""

import re

import pytest
from probe_kit import dbg, one_line_error, snapshot


def _workspace(tmp_path):
    ws = tmp_path / "w"
    ws.mkdir()
    for args in (["new", "notes", "--no-env", "--symptom", "hang at step 3"],
                 ["attempt", "add", "try A", "--did", "ran it", "-o", "failed"],
                 ["attempt", "add", "second try", "--result", "crash gone", "-o", "worked"],
                 ["diff", "add", "NCCL_ALGO", "Ring", "Tree"],
                 ["next", "add", "check dmesg"]):
        assert dbg(*args, cwd=ws).returncode == 0, args
    return ws


EDITS = {
    "a line under the one-word status": (r"^\*\*Symptom:\*\*", "NOTE only on node 7\n\\g<0>", "under **Status:**"),
    "a line between the title and the fields": (r"^\*\*Status:\*\*", "NOTE seen on node 7\n\\g<0>",
                                                "outside any field"),
    "a line under a one-line field of an attempt": (r"^\*\*Outcome:\*\* failed", "\\g<0>\n**By:** me\nNOTE later",
                                                    "under a one-line field"),
    "a line above an attempt's first field": (r"^\*\*What you did:\*\*", "NOTE saw it twice\n\\g<0>",
                                              "in attempt 1 outside any field"),
    "a field given twice": (r"^\*\*Outcome:\*\* worked", "**Result:** NOTE again\n\\g<0>", "a second time"),
    "a mistyped attempt heading": (r"^### Attempt 2: second try", "### attempt 2: second try",
                                   "no attempt heading"),
    "the first attempt's heading mistyped": (r"^### Attempt 1: try A", "### attempt 1: try A", "no attempt heading"),
    "an attempt heading without its number": (r"^### Attempt 2: second try", "### Attempt: second try",
                                              "no attempt heading"),
    "a line before the first attempt": (r"^## Attempts", "\\g<0>\n\nNOTE before any", "before any attempt"),
    "a cell past the header": (r"^\| NCCL_ALGO \| Ring \| Tree \| untested \|", "\\g<0> NOTE cell |",
                               "a cell would be lost"),
    "a line under the table": (r"^\| NCCL_ALGO .*$", "\\g<0>\nNOTE 2 nodes", "outside the table"),
    "a line under a step": (r"^1\. \[ \] \*\*check dmesg\*\*", "\\g<0>\n   NOTE look for Xid 79", "no step"),
    "a bullet among the steps": (r"^1\. \[ \] \*\*check dmesg\*\*", "\\g<0>\n- [ ] NOTE try P2P off", "no step"),
    "a step's link to an attempt number too large": (r"^1\. \[ \] \*\*check dmesg\*\*$",
                                                     "1. [x] **check dmesg** (→ Attempt 99999999999999999999)",
                                                     "a number too large"),
    "a step's link to an attempt number of 5000 digits": (r"^1\. \[ \] \*\*check dmesg\*\*$",
                                                          "1. [x] **check dmesg** (→ Attempt " + "9" * 5000 + ")",
                                                          "a number too large"),
    "an attempt numbered 0": (r"^### Attempt 1: try A", "### Attempt 0: try A", "attempts are numbered from 1"),
    "a step's link to attempt 0": (r"^1\. \[ \] \*\*check dmesg\*\*$", "1. [x] **check dmesg** (→ Attempt 00)",
                                   "attempts are numbered from 1"),
    "a status that is none of the statuses": (r"^\*\*Status:\*\* Open", "**Status:** In progress", "is not a status"),
    "a front-matter status that is none of the statuses": (r"^status: open", "status: bogus", "is not a status"),
    "a 13th month": (r"^updated: \d{4}-\d\d-", "updated: 2026-13-", "cannot be read"),
    "tags that are a mapping": (r"^tags: \[\]", "tags: {a: 1}", "tags must be a list"),
}


@pytest.mark.parametrize("edit", EDITS)
def test_a_hand_edit_with_no_place_in_the_structure_is_refused_and_changes_nothing(tmp_path, edit):
    ws = _workspace(tmp_path)
    log = next((ws / "logs").glob("*.md"))
    pattern, repl, said = EDITS[edit]
    text, n = re.subn(pattern, repl, log.read_text(), count=1, flags=re.M)
    assert n == 1, edit
    log.write_text(text)
    before = snapshot(ws)
    for args in (["attempt", "add", "try C"], ["list"], ["next", "add", "another"]):
        r = dbg(*args, cwd=ws)
        one_line_error(r, args)
        assert said in r.stderr and re.search(r"logs/\S+\.md:\d+: ", r.stderr), r.stderr
    assert snapshot(ws) == before  # the hand edit is still there, and nothing else moved
    r = dbg("doctor", cwd=ws)
    assert "parse-error" in r.stdout and said in r.stdout


@pytest.mark.parametrize("edit, want", [
    ((r"^status: open", "status: resolved"), "resolved"),  # the front matter alone
    ((r"^\*\*Status:\*\* Open", "**Status:** Won’t Fix"), "wontfix"),  # the line alone
    ((r"^\*\*Status:\*\* Open\n", ""), "open"),  # the line removed: the front matter's
])
def test_a_status_edited_in_either_place_takes_effect_and_the_file_is_written_agreeing(tmp_path, edit, want):
    """Before, an edit of the front matter's status alone was reported imported, ignored, and undone by the next
    write. The status is written twice; the one a hand edit changed wins (the sync knows the stored status), and the
    file is written back with both saying it."""
    ws = _workspace(tmp_path)
    log = next((ws / "logs").glob("*.md"))
    log.write_text(re.sub(edit[0], edit[1], log.read_text(), count=1, flags=re.M))
    assert dbg("list", cwd=ws).returncode == 0
    assert f'"status": "{want}"' in dbg("show", "--json", cwd=ws).stdout
    assert dbg("next", "add", "another", cwd=ws).returncode == 0  # a write: the file is rendered again
    label = {"open": "Open", "resolved": "Resolved", "wontfix": "Won't fix"}[want]
    text = log.read_text()
    assert f"status: {want}" in text and f"**Status:** {label}".lower() in text.lower(), text[:300]


def test_a_bare_tag_is_read_as_one_tag(tmp_path):
    ws = _workspace(tmp_path)
    log = next((ws / "logs").glob("*.md"))
    log.write_text(log.read_text().replace("tags: []", "tags: gpu"))
    r = dbg("list", "--json", cwd=ws)
    assert r.returncode == 0 and '"gpu"' in r.stdout, r.stderr


def test_what_dbglog_writes_reads_back_with_every_field_and_section(tmp_path):
    """The refusals above are only for lines dbglog never writes: its own file, with multi-line fields, a fence,
    a free section and a done step, reads back and takes another write."""
    ws = _workspace(tmp_path)
    for args in (["attempt", "add", "fenced", "--result", "line one\n\n```\n## not a heading\n| a | b |\n```\nafter"],
                 ["next", "done", "1"]):
        assert dbg(*args, cwd=ws).returncode == 0, args
    log = next((ws / "logs").glob("*.md"))
    log.write_text(log.read_text() + "\n## Notes\n\nfree text under its own heading\n")
    for args in (["list"], ["attempt", "add", "again"]):
        r = dbg(*args, cwd=ws)
        assert r.returncode == 0, (args, r.stderr)
    assert "Healthy" in dbg("doctor", cwd=ws).stdout
    text = log.read_text()
    assert "free text under its own heading" in text and "## not a heading" in text and "### Attempt 4: again" in text
