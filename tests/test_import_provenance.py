"""Provenance of imported records: every attempt cites its source lines and says who did it, every next step
cites its lines, in `import --json` and `show --json`, and that survives a second import, a sync of a hand
edit, a reindex and git's merge driver. And import leaves the current investigation as it was unless --use,
and says which one is current."""

import json
import shutil

import pytest

from conftest import run_cli_inproc
from import_thread_doc import THREAD_DOC, as_json, built_in_reading, investigations, mirror_files, write_doc

GOLDEN_MULTI = "01_debug_md_multi.md"  # tests/golden: two investigations in one DEBUG.md


@pytest.fixture
def cli():
    return run_cli_inproc


def provenance(attempts) -> list:
    return [(a["source_lines"], a["who"]) for a in attempts]


def expected(ws, doc) -> list:
    """The built-in reading of THREAD_DOC, which must hold the attempts a person sees in it."""
    got = built_in_reading(ws, doc)
    assert all(item in got for item in [([9, 9], ""), ([10, 10], ""), ([11, 11], ""), ([17, 21], "bob")]), got
    return got


def test_source_lines_and_who_in_import_json_and_show_json(ws, cli, tmp_path):
    doc = write_doc(tmp_path)
    EXPECTED = expected(ws, doc)
    [inv] = as_json(cli(ws, "import", doc, "--json"))["investigations"]
    assert provenance(inv["attempt_list"]) == EXPECTED
    shown = as_json(cli(ws, "show", inv["id"], "--json"))
    assert provenance(shown["attempts"]) == EXPECTED
    assert [s["source_lines"] for s in shown["next_steps"]] == [[25, 25], [26, 26]]
    text = THREAD_DOC.split("\n")
    for a in shown["attempts"]:  # each cites lines that hold what it says
        first, last = a["source_lines"]
        assert a["title"].split()[0].strip("`") in "\n".join(text[first - 1:last])
    mirror = mirror_files(ws)[0].read_text()
    assert "**By:** bob\n**Source lines:** 17-21\n" in mirror


def test_provenance_survives_reimport_sync_and_reindex(ws, cli, tmp_path):
    doc = write_doc(tmp_path)
    EXPECTED = expected(ws, doc)
    inv_id = as_json(cli(ws, "import", doc, "--json"))["investigations"][0]["id"]
    again = as_json(cli(ws, "import", doc, "--json"))["investigations"][0]
    assert (again["action"], again["id"]) == ("unchanged", inv_id)
    assert provenance(again["attempt_list"]) == EXPECTED
    # A hand edit of the mirror, taken in by sync, keeps the provenance of every attempt.
    [mirror] = mirror_files(ws)
    mirror.write_text(mirror.read_text().replace("**Outcome:** failed\n**Source lines:** 11-11",
                                                 "**Conclusion:** not the build.\n**Outcome:** failed\n"
                                                 "**Source lines:** 11-11"))
    assert as_json(cli(ws, "sync", "--json"))["imported"]
    shown = as_json(cli(ws, "show", inv_id, "--json"))
    assert next(a for a in shown["attempts"] if a["source_lines"] == [11, 11])["conclusion"] == "not the build."
    assert provenance(shown["attempts"]) == EXPECTED
    cli(ws, "reindex", "--force", check=0)
    shown = as_json(cli(ws, "show", inv_id, "--json"))
    assert provenance(shown["attempts"]) == EXPECTED
    assert [s["source_lines"] for s in shown["next_steps"]] == [[25, 25], [26, 26]]
    cli(ws, "doctor", check=0)


def test_reimport_of_a_moved_passage_moves_its_source_lines(ws, cli, tmp_path):
    doc = write_doc(tmp_path)
    before = expected(ws, doc)
    inv_id = as_json(cli(ws, "import", doc, "--json"))["investigations"][0]["id"]
    doc.write_text(THREAD_DOC.replace("**Status:** Open\n", "**Status:** Open\n\nSeen on two nodes.\n"))
    out = as_json(cli(ws, "import", doc, "--json"))["investigations"][0]
    assert (out["action"], out["id"]) == ("update", inv_id)
    shown = as_json(cli(ws, "show", inv_id, "--json"))
    assert [a["source_lines"] for a in shown["attempts"]] == [[x + 2, y + 2] for (x, y), _ in before]
    assert [s["source_lines"] for s in shown["next_steps"]] == [[27, 27], [28, 28]]


def test_merge_driver_keeps_the_provenance_of_both_sides(ws, cli, tmp_path):
    doc = write_doc(tmp_path)
    EXPECTED = expected(ws, doc)
    inv_id = as_json(cli(ws, "import", doc, "--json"))["investigations"][0]["id"]
    [mirror] = mirror_files(ws)
    base = mirror.read_text()
    ours = tmp_path / "ours.md"
    theirs = tmp_path / "theirs.md"
    (tmp_path / "base.md").write_text(base)
    shutil.copy(mirror, ours)
    # ours: an attempt recorded through dbglog; theirs: a conclusion added to an imported attempt by hand.
    cli(ws, "attempt", "add", "Pin the NCCL version", "-i", inv_id, "--result", "still crashes", check=0)
    shutil.copy(mirror, ours)
    theirs.write_text(base.replace("**Outcome:** worked\n**By:** bob", "**Conclusion:** the backend.\n"
                                   "**Outcome:** worked\n**By:** bob"))
    cli(ws, "merge-driver", tmp_path / "base.md", ours, theirs, "logs/x.md", check=0)
    merged = ours.read_text()
    assert "**By:** bob\n**Source lines:** 17-21" in merged and "**Conclusion:** the backend." in merged
    assert "Pin the NCCL version" in merged
    mirror.write_text(merged)
    cli(ws, "sync", check=0)
    shown = as_json(cli(ws, "show", inv_id, "--json"))
    assert provenance(shown["attempts"]) == EXPECTED + [([], "")]
    assert next(a for a in shown["attempts"] if a["who"] == "bob")["conclusion"] == "the backend."


def test_import_leaves_the_current_investigation_and_says_which_is_current(ws, cli, tmp_path):
    doc = write_doc(tmp_path)
    mine = as_json(cli(ws, "new", "My own hang", "--no-env", "--json"))["id"]
    p = cli(ws, "import", doc, check=0)
    assert f"current investigation: {mine} (unchanged" in p.stdout
    data = as_json(cli(ws, "import", doc, "--json"))
    assert data["current"] == mine and data["investigations"][0]["current"] is False
    assert as_json(cli(ws, "show", "--json"))["id"] == mine
    # A later `attempt add` goes where the user was, not into the imported investigation.
    cli(ws, "attempt", "add", "Lower the batch size", "--result", "still hangs", check=0)
    assert [a["title"] for a in as_json(cli(ws, "show", mine, "--json"))["attempts"]] == ["Lower the batch size"]


def test_import_with_use_makes_it_current(ws, cli, tmp_path):
    doc = write_doc(tmp_path)
    cli(ws, "new", "My own hang", "--no-env", check=0)
    data = as_json(cli(ws, "import", doc, "--use", "--json"))
    [inv] = data["investigations"]
    assert data["current"] == inv["id"] and inv["current"] is True
    assert as_json(cli(ws, "show", "--json"))["id"] == inv["id"]
    p = cli(ws, "import", doc, "--use", check=0)  # again: unchanged, still current, said without the hint
    assert f"current investigation: {inv['id']}\n" in p.stdout


def test_use_with_two_investigations_is_refused_and_nothing_written(ws, cli, tmp_path):
    from pathlib import Path

    golden = Path(__file__).parent / "golden" / GOLDEN_MULTI
    p = cli(ws, "import", golden, "--use", check=2)
    assert "--use needs exactly one investigation" in p.stderr and "2" in p.stderr
    assert p.stderr.count("\n") == 1 and investigations(ws) == 0 and mirror_files(ws) == []
    p = cli(ws, "import", golden, write_doc(tmp_path), "--use", "--json", check=2)
    assert json.loads(p.stdout)["error"].startswith("--use needs exactly one") and investigations(ws) == 0


def test_a_passage_added_to_the_document_never_overwrites_an_attempt_recorded_in_dbglog(ws, cli, tmp_path):
    tried = ["- Set `NCCL_ALGO=Tree`: no change.", "- Switched to bf16; still spikes.",
             "- Lowered the LR to 1e-4 and the spikes are gone."]
    doc = write_doc(tmp_path, "# Loss spikes at step 400\n\n## What we tried\n\n" + "\n".join(tried) + "\n")
    inv_id = as_json(cli(ws, "import", doc, "--use", "--json"))["investigations"][0]["id"]
    cli(ws, "attempt", "add", "Pin the data order", "--did", "fixed seed 7", "--result", "still spikes", check=0)
    cli(ws, "next", "add", "Try the old data loader", check=0)
    # An attempt told between the first two: a narrative doc's attempts are numbered by position.
    tried.insert(1, "- Disabled fused Adam; no change.")
    doc.write_text("# Loss spikes at step 400\n\n## What we tried\n\n" + "\n".join(tried) + "\n")
    out = as_json(cli(ws, "import", doc, "--json"))["investigations"][0]
    assert out["action"] == "update"
    assert [(a["number"], a["source_lines"]) for a in out["attempt_list"]] == [(1, [5, 5]), (5, [6, 6]), (2, [7, 7]),
                                                                              (3, [8, 8])]
    shown = as_json(cli(ws, "show", inv_id, "--json"))
    assert [(a["number"], a["title"].split(";")[0].split(":")[0]) for a in shown["attempts"]] == [
        (1, "Set `NCCL_ALGO=Tree`"), (2, "Switched to bf16"), (3, "Lowered the LR to 1e-4 and the spikes are gone."),
        (4, "Pin the data order"), (5, "Disabled fused Adam")]
    assert shown["attempts"][3]["did"] == "fixed seed 7" and shown["attempts"][3]["source_lines"] == []
    assert as_json(cli(ws, "import", doc, "--json"))["investigations"][0]["action"] == "unchanged"
    cli(ws, "doctor", check=0)


def test_an_attempt_whose_lines_left_the_document_cites_them_no_more(ws, cli, tmp_path):
    """An adversarial probe: after two attempts' lines were deleted from a document and it was imported again, the
    kept attempts still cited lines 5-5 (now another attempt's) and 6-6 (past the end). They are kept (nothing
    stored is dropped) and cite no lines; the attempt still there cites where it is now."""
    doc = tmp_path / "d.md"
    doc.write_text("# Hang\n\n## What we tried\n\n- I set A=1; still hangs.\n- I set B=1; still hangs.\n"
                   "- I set C=1; it works now.\n")
    inv = json.loads(cli(ws, "import", doc, "--json", check=0).stdout)["investigations"][0]["id"]
    doc.write_text("# Hang\n\n## What we tried\n\n- I set C=1; it works now.\n")
    cli(ws, "import", doc, check=0)
    shown = json.loads(cli(ws, "show", inv, "--json", check=0).stdout)["attempts"]
    assert [(a["title"], a["source_lines"]) for a in shown] == [
        ("I set A=1; still hangs.", []), ("I set B=1; still hangs.", []), ("I set C=1; it works now.", [5, 5])]
