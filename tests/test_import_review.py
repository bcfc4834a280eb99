"""`dbglog import --explain` and `--review` / `--apply-review`: how a document was read, shown without
changing anything, and the corrected checklist taken back -- exactly the ticked attempts, with the outcomes
and titles as corrected, and still every line of the document kept."""

import json

import pytest

from conftest import run_cli_inproc
from import_thread_doc import THREAD_DOC, as_json, investigations, lost_lines, mirror_files, write_doc

# The thread doc with a paragraph whose middle sentence is a guess at best: the one unit the review asks about.
REVIEW_DOC = THREAD_DOC + """
## Notes from the week

The driver got an update on Tuesday. Maybe the cable swap helped somewhat, hard to say. The logs looked cleaner.
"""
UNSURE_LINE = THREAD_DOC.count("\n") + 4

# A protocol-style doc: header fields, a labelled attempt, a next-steps list, and one uncertain sentence.
PROTOCOL_DOC = """\
# Kernel replay crashes the profiler

**Status:** Investigating
**Symptom:** ncu exits with an illegal address when replaying the GEMM kernel.

## Attempts

### Attempt 1: Profile with range replay
**Hypothesis:** Kernel replay restores memory wrongly.
**What we did:** Ran ncu with `--replay-mode range`.
**Result:** Same crash, maybe a little later.
**Conclusion:** Replay mode is not it.

## Notes

Perhaps the newer driver helped a bit, not sure.

## What to try next

1. Collect fewer metrics.
2. Remove `__launch_bounds__` from the kernel.
"""

LABELS = {"action", "result", "action_result", "proposal", "request", "plan", "boilerplate", "context"}


@pytest.fixture
def cli():
    return run_cli_inproc


def test_explain_lists_each_unit_with_its_label_confidence_and_cues_and_writes_nothing(ws, cli, tmp_path):
    doc = write_doc(tmp_path)
    out = cli(ws, "import", "--explain", doc, check=0).stdout
    rows = [ln for ln in out.splitlines() if not ln.strip().startswith(("because:", "read as:"))]
    tried = next(ln for ln in rows if "enforce_eager=True" in ln)
    assert tried.split()[:2] == ["9-9", "action_result"]
    float(tried.split()[2])  # the confidence, a number
    why = out.splitlines()[out.splitlines().index(tried) + 1]
    assert why.strip().startswith("because:") and ("tried heading" in why or "a list of what was done" in why)
    made = out.splitlines()[out.splitlines().index(tried) + 2]
    assert made.strip().startswith("read as: attempt ")  # what the whole reading made of it, after the scorer's guess
    assert investigations(ws) == 0 and mirror_files(ws) == []
    assert not (tmp_path / "notes.md.review.md").exists()


def test_explain_json_gives_every_unit_its_lines_kind_label_confidence_and_features(ws, cli, tmp_path):
    doc = write_doc(tmp_path)
    data = as_json(cli(ws, "import", "--explain", doc, "--json"))
    assert data["source"] == str(doc)
    units = data["units"]
    assert units and all(set(u) == {"lines", "kind", "label", "confidence", "features", "learned",
                                         "learned_step", "author", "text", "read_as"}
                         for u in units)
    # the learned passes' probabilities, for every unit they were asked about (the ones no rule took)
    assert all(u[k] is None or 0.0 <= u[k] <= 1.0 for u in units for k in ("learned", "learned_step"))
    assert any(u["learned"] is not None for u in units)
    for u in units:
        assert u["label"] in (LABELS if u["kind"] != "code" else {"code"}) and 0.0 <= u["confidence"] <= 1.0
        assert len(u["lines"]) == 2 and 1 <= u["lines"][0] <= u["lines"][1] <= THREAD_DOC.count("\n")
        assert all(set(f) == {"cue", "weight"} and isinstance(f["weight"], float) for f in u["features"])
    by_line = {u["lines"][0]: u for u in units}
    assert by_line[10]["label"] == "action_result" and "torch 2.3.1" in by_line[10]["text"]
    assert by_line[17]["label"] == "request"  # "Have you tried ...?" is asked, not done
    assert all(u["read_as"]["kind"] in ("attempt", "next_step", "text") for u in units)
    assert by_line[10]["read_as"]["kind"] == "attempt"
    assert investigations(ws) == 0


def test_explain_shows_a_code_block_as_one_entry_so_a_doc_of_code_is_not_explained_by_silence(ws, cli, tmp_path):
    # a note that is one fenced Dockerfile printed nothing at all: no unit in it is scored
    doc = tmp_path / "Dockerfile.md"
    doc.write_text("```dockerfile\n# built on the nightly index, not the stable one\nFROM rocm/dev-ubuntu-24.04\n"
                   "RUN pip install torch\n```\n")
    out = cli(ws, "import", "--explain", str(doc), check=0).stdout
    assert out.splitlines()[0].split()[:2] == ["1-5", "code"]
    assert "read as: code, kept as text" in out
    units = as_json(cli(ws, "import", "--explain", str(doc), "--json"))["units"]
    assert [(u["kind"], u["lines"], u["read_as"]["kind"]) for u in units] == [("code", [1, 5], "text")]


def test_explain_outside_a_workspace_creates_none(cli, tmp_path):
    doc = write_doc(tmp_path)
    here = tmp_path / "elsewhere"
    here.mkdir()
    cli(here, "import", "--explain", doc, check=0)
    assert list(here.iterdir()) == []


def test_explain_and_review_read_exactly_one_file(ws, cli, tmp_path):
    doc = write_doc(tmp_path)
    for flag in ("--explain", "--review"):
        p = cli(ws, "import", flag, doc, doc, check=2)
        assert p.stderr.count("\n") == 1 and "exactly one" in p.stderr and "Traceback" not in p.stderr
        p = cli(ws, "import", flag, tmp_path, check=2)
    assert not (tmp_path / "notes.md.review.md").exists()


def review_rows(text: str) -> dict[str, str]:
    """The checklist's rows by their `lines A-B`."""
    return {ln.split(" · ")[0].split("lines ")[1]: ln for ln in text.splitlines() if ln.startswith("- [")}


def test_review_writes_a_checklist_beside_the_document_and_changes_nothing(ws, cli, tmp_path):
    doc = write_doc(tmp_path, REVIEW_DOC)
    data = as_json(cli(ws, "import", "--review", doc, "--json"))
    review = tmp_path / "notes.md.review.md"
    assert data == {"review": str(review), "source": str(doc), "kept": False}  # (no review applied before)
    text = review.read_text()
    assert text.splitlines()[0].startswith(f"<!-- dbglog review: {doc} sha:")
    rows = review_rows(text)
    assert rows["9-9"].startswith("- [x] lines 9-9 · worked · ")
    assert rows["10-10"].startswith("- [x] lines 10-10 · failed · ")
    assert rows["17-21"].startswith("- [x] lines 17-21 · worked · ") and " · by bob · " in rows["17-21"]
    unsure = review_rows(text.split("## Not sure (not imported unless ticked)")[1])
    assert list(unsure) == [f"{UNSURE_LINE}-{UNSURE_LINE}"] and "cable swap" in unsure[f"{UNSURE_LINE}-{UNSURE_LINE}"]
    assert all(ln.startswith("- [ ] ") for ln in unsure.values())
    assert investigations(ws) == 0 and mirror_files(ws) == []
    assert doc.read_text() == REVIEW_DOC


def test_not_sure_lists_only_uncertain_units_that_no_structure_attempt_or_step_took(ws, cli, tmp_path):
    doc = write_doc(tmp_path, PROTOCOL_DOC)
    cli(ws, "import", "--review", doc, check=0)
    read, unsure = (tmp_path / "notes.md.review.md").read_text().split("## Not sure (not imported unless ticked)")
    assert list(review_rows(read)) == ["8-13"]  # the protocol attempt, its fields inside it
    # Not the status field (line 3), not a next-steps item (20, 21): only the sentence nothing took.
    assert list(review_rows(unsure)) == ["16-16"] and "newer driver" in unsure


def test_several_unsure_sentences_of_one_line_are_one_row(ws, cli, tmp_path):
    doc = write_doc(tmp_path, """# Link flaps on the new rack

The job hangs at the first all_reduce on rack R7.

Maybe the cable swap helped somewhat. Perhaps the firmware helped a bit too, hard to say.
""")
    cli(ws, "import", "--review", doc, check=0)
    text = (tmp_path / "notes.md.review.md").read_text()
    rows = [ln for ln in text.split("## Not sure (not imported unless ticked)")[1].splitlines() if ln.startswith("- [")]
    assert len(rows) == 1 and rows[0].startswith("- [ ] lines 5-5 · ")  # one row for the line, both sentences
    assert "cable swap" in rows[0] and "firmware" in rows[0]


def test_a_status_field_that_says_more_than_the_status_is_not_offered_as_unsure(ws, cli, tmp_path):
    doc = write_doc(tmp_path, REVIEW_DOC.replace("**Status:** Open\n", "**Status:** Open, cause not found yet.\n"))
    cli(ws, "import", "--review", doc, check=0)
    unsure = (tmp_path / "notes.md.review.md").read_text().split("## Not sure (not imported unless ticked)")[1]
    assert list(review_rows(unsure)) == [f"{UNSURE_LINE}-{UNSURE_LINE}"]  # not line 3


def test_a_review_of_a_doc_read_with_certainty_has_no_not_sure_list(ws, cli, tmp_path):
    doc = write_doc(tmp_path)
    cli(ws, "import", "--review", doc, check=0)
    assert "## Not sure" not in (tmp_path / "notes.md.review.md").read_text()


def parse_row(row: str) -> tuple:
    """(ticked, [first, last], outcome, title, who) of a checklist row."""
    parts = row.split(" · ")
    first, last = parts[0].split("lines ")[1].split("-")
    who = next((x[3:] for x in parts[3:-1] if x.startswith("by ")), "")
    return row.startswith("- [x]"), [int(first), int(last)], parts[1].lower(), parts[-1], who


def corrected_review(ws, cli, doc) -> tuple:
    """A review as a person corrects it: the first attempt read is not one, the second went otherwise, the
    third gets a title of their own, and the first unsure row was in fact tried and failed. Returns the
    review and the attempts it now says, as (source_lines, outcome, title, who)."""
    cli(ws, "import", "--review", doc, check=0)
    review = doc.with_name(doc.name + ".review.md")
    text = review.read_text()
    read, unsure = text.split("## Not sure (not imported unless ticked)")
    ticked = [ln for ln in read.splitlines() if ln.startswith("- [x] ")]
    unticked = [ln for ln in unsure.splitlines() if ln.startswith("- [ ] ")]
    assert len(ticked) >= 3 and unticked, text
    other = "partial" if parse_row(ticked[1])[2] != "partial" else "failed"
    edits = {ticked[0]: ticked[0].replace("- [x]", "- [ ]", 1),
             ticked[1]: ticked[1].replace(f" · {parse_row(ticked[1])[2]} · ", f" · {other.title()} · ", 1),
             ticked[2]: ticked[2].rsplit(" · ", 1)[0] + " · My own title for it",
             unticked[0]: unticked[0].replace("- [ ]", "- [x]", 1).replace(" · inconclusive · ", " · failed · ", 1)}
    for old, new in edits.items():
        text = text.replace(old, new)
    review.write_text(text)
    rows = [parse_row(ln) for ln in text.splitlines() if ln.startswith("- [x] ")]
    return review, sorted((lines, outcome, title, who) for _, lines, outcome, title, who in rows)


def test_apply_review_imports_exactly_the_ticked_attempts_as_corrected_and_loses_no_line(ws, cli, tmp_path):
    doc = write_doc(tmp_path, REVIEW_DOC)
    review, want = corrected_review(ws, cli, doc)
    assert ([17, 21], "worked", "`VLLM_ATTENTION_BACKEND=XFORMERS`", "bob") in want
    assert any(title == "My own title for it" for _, _, title, _ in want)
    assert any(outcome == "partial" for _, outcome, _, _ in want)
    data = as_json(cli(ws, "import", "--apply-review", review, "--json"))
    [inv] = data["investigations"]
    assert inv["action"] == "create"
    got = sorted((a["source_lines"], a["outcome"], a["title"], a["who"]) for a in inv["attempt_list"])
    assert got == want
    [mirror] = mirror_files(ws)
    assert lost_lines(REVIEW_DOC, mirror.read_text()) == []
    shown = as_json(cli(ws, "show", inv["id"], "--json"))
    assert sorted((a["source_lines"], a["outcome"], a["title"], a["who"]) for a in shown["attempts"]) == want
    # The same review again changes nothing.
    again = as_json(cli(ws, "import", "--apply-review", review, "--json"))["investigations"][0]
    assert (again["action"], again["id"]) == ("unchanged", inv["id"])


def test_apply_review_finds_its_document_from_another_directory(ws, cli, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    doc = write_doc(docs)
    cli(docs, "import", "--review", "notes.md", check=0)  # the review names the document as it was given
    data = as_json(cli(ws, "import", "--apply-review", docs / "notes.md.review.md", "--json"))
    assert len(data["investigations"]) == 1 and data["investigations"][0]["source"].startswith(str(doc))


def test_a_review_whose_document_changed_since_is_refused_and_nothing_written(ws, cli, tmp_path):
    doc = write_doc(tmp_path, REVIEW_DOC)
    review, _ = corrected_review(ws, cli, doc)
    doc.write_text(REVIEW_DOC.replace("torch 2.3.1", "torch 2.3.0"))
    p = cli(ws, "import", "--apply-review", review, check=2)
    assert p.stderr.count("\n") == 1 and "changed since" in p.stderr and "--review" in p.stderr
    assert p.stdout == "" and investigations(ws) == 0 and mirror_files(ws) == []


@pytest.mark.parametrize("bad, says", [
    ("- [x] lines 9 · worked · 0.70 · one line only", "cannot read this row"),
    ("- [x] lines 9-9 · fixed · 0.70 · not an outcome dbglog knows", "outcome 'fixed'"),
    ("- [x] lines 12-9 · worked · 0.70 · backwards", "run backwards"),
    ("- [x] lines 0-10 · worked · 0.70 · before the first line", "before the first line"),  # (was dropped silently)
    ("- [x] lines 0-0 · worked · 0.70 · no line at all", "before the first line"),
])
def test_a_malformed_row_is_refused_with_its_file_and_line(ws, cli, tmp_path, bad, says):
    doc = write_doc(tmp_path)
    cli(ws, "import", "--review", doc, check=0)
    review = tmp_path / "notes.md.review.md"
    lines = review.read_text().split("\n")
    at = next(i for i, ln in enumerate(lines) if ln.startswith("- [x] lines 10-10"))
    lines[at] = bad
    review.write_text("\n".join(lines))
    p = cli(ws, "import", "--apply-review", review, check=2)
    assert p.stderr.startswith(f"dbglog: {review}:{at + 1}: ") and says in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1 and investigations(ws) == 0 and mirror_files(ws) == []


@pytest.mark.parametrize("extra, says", [
    ("- [x] lines 90-95 · worked · 0.70 · past the end", "runs past the end of"),
])
def test_a_ticked_row_that_cannot_be_meant_is_refused(ws, cli, tmp_path, extra, says):
    doc = write_doc(tmp_path)
    cli(ws, "import", "--review", doc, check=0)
    review = tmp_path / "notes.md.review.md"
    review.write_text(review.read_text() + extra + "\n")
    p = cli(ws, "import", "--apply-review", review, check=2)
    assert says in p.stderr and p.stderr.count("\n") == 1 and investigations(ws) == 0 and mirror_files(ws) == []


def test_a_file_that_is_not_a_review_is_refused(ws, cli, tmp_path):
    doc = write_doc(tmp_path)
    p = cli(ws, "import", "--apply-review", doc, check=2)
    assert "not a review file" in p.stderr and p.stderr.count("\n") == 1 and investigations(ws) == 0


def test_apply_review_is_about_one_document(ws, cli, tmp_path):
    doc = write_doc(tmp_path)
    other = write_doc(tmp_path, name="other.md")
    cli(ws, "import", "--review", doc, check=0)
    p = cli(ws, "import", "--apply-review", tmp_path / "notes.md.review.md", doc, other, check=2)
    assert "at most that file" in p.stderr and investigations(ws) == 0


@pytest.mark.parametrize("args, says", [
    (["--explain", "--review"], "--explain and --review are different ways"),
    (["--review", "--llm", "http://127.0.0.1:9"], "--review and --llm are different ways"),
    (["--model", "qwen"], "--model names the model to ask with --llm"),
    (["--explain", "--use"], "--explain changes nothing"),
])
def test_ways_of_reading_that_cannot_go_together_are_refused(ws, cli, tmp_path, args, says):
    doc = write_doc(tmp_path)
    p = cli(ws, "import", doc, *args, check=2)
    assert says in p.stderr and p.stderr.count("\n") == 1
    assert investigations(ws) == 0 and not (tmp_path / "notes.md.review.md").exists()


def test_a_review_file_is_never_imported_as_a_debug_doc(ws, cli, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    doc = write_doc(notes)
    cli(ws, "import", "--review", doc, check=0)
    review = notes / "notes.md.review.md"
    p = cli(ws, "import", review, check=2)
    assert "is a review" in p.stderr and f"--apply-review {review}" in p.stderr and investigations(ws) == 0
    data = as_json(cli(ws, "import", notes, "--json"))  # a directory: the review beside the doc is not read
    assert [i["title"] for i in data["investigations"]] == ["vLLM crashes with illegal memory access on A100"]


# --- a review, kept: a later plain import of the same document applies it again ---------------------------


def attempts_of(data: dict) -> list[tuple]:
    return sorted((a["source_lines"], a["outcome"], a["title"], a["who"])
                  for i in data["investigations"] for a in i["attempt_list"])


def test_a_plain_reimport_after_apply_review_keeps_the_corrections(ws, cli, tmp_path):
    doc = write_doc(tmp_path, REVIEW_DOC)
    review, want = corrected_review(ws, cli, doc)
    applied = as_json(cli(ws, "import", "--apply-review", review, "--json"))
    assert applied["reviews"] == [{"source": str(doc), "file": str(doc), "review": "applied", "by": "review", "attempts": len(want),
                                   "changed_since_review": False, "dropped": [], "unreadable": []}]
    again = as_json(cli(ws, "import", doc, "--json"))
    assert [i["action"] for i in again["investigations"]] == ["unchanged"]
    assert attempts_of(again) == want
    assert again["reviews"] == [{"source": str(doc), "file": str(doc), "review": "kept", "by": "review", "attempts": len(want),
                                 "changed_since_review": False, "dropped": [], "unreadable": []}]
    out = cli(ws, "import", doc, check=0).stdout
    assert f"reviewed  {doc}: {len(want)} attempt(s) as its applied review set them" in out
    assert not [ln for ln in out.splitlines() if ln.startswith(("dropped ", "changed "))]
    shown = as_json(cli(ws, "show", applied["investigations"][0]["id"], "--json"))
    assert "## Import review" not in [s["heading"] for s in shown["sections"]]  # bookkeeping: not shown


def test_a_plain_import_of_a_document_never_reviewed_says_nothing_of_reviews(ws, cli, tmp_path):
    data = as_json(cli(ws, "import", write_doc(tmp_path), "--json"))
    assert data["reviews"] == [] and len(data["investigations"][0]["attempt_list"]) == 4
    assert "## Import review" not in mirror_files(ws)[0].read_text()


def test_a_kept_review_lives_in_the_mirror_so_a_database_rebuilt_from_logs_still_applies_it(ws, cli, tmp_path):
    doc = write_doc(tmp_path, REVIEW_DOC)
    review, want = corrected_review(ws, cli, doc)
    cli(ws, "import", "--apply-review", review, check=0)
    [mirror] = mirror_files(ws)
    assert "\n## Import review\n" in mirror.read_text()
    cli(ws, "reindex", "--force", check=0)  # the database from logs/ alone, as a teammate's clone has it
    again = as_json(cli(ws, "import", doc, "--json"))
    assert [i["action"] for i in again["investigations"]] == ["unchanged"] and attempts_of(again) == want


def test_a_correction_whose_lines_no_longer_hold_its_text_is_dropped_with_one_line_and_the_others_follow_their_text(
        ws, cli, tmp_path):
    doc = write_doc(tmp_path, REVIEW_DOC)
    review, want = corrected_review(ws, cli, doc)
    cli(ws, "import", "--apply-review", review, check=0)
    [changed] = [w for w in want if w[0] == [10, 10]]  # the attempt whose outcome the person corrected
    doc.write_text(REVIEW_DOC.replace("**Status:** Open\n", "**Status:** Open\n\nSeen on two hosts.\n")  # 2 lines in
                   .replace("torch 2.3.1; still", "torch 2.3.0; still"))
    out = cli(ws, "import", doc, check=0).stdout
    dropped = [ln for ln in out.splitlines() if ln.startswith("dropped ")]
    assert len(dropped) == 1 and f"{doc} lines 10-10" in dropped[0] and "--review" in dropped[0]
    assert any(ln.startswith(f"changed   {doc} since its review") for ln in out.splitlines())
    data = as_json(cli(ws, "import", doc, "--json"))
    [r] = data["reviews"]
    assert r["dropped"] == [{"source_lines": [10, 10], "title": changed[2], "outcome": changed[1], "who": ""}]
    assert r["changed_since_review"] is True
    moved = sorted(([a + 2, b + 2], o, t, w) for (a, b), o, t, w in want if [a, b] != [10, 10])
    assert attempts_of(data) == moved  # the rest kept, where their text now stands
    assert "lines 10-10 · " in mirror_files(ws)[0].read_text().split("## Import review")[1]  # kept until reviewed
    assert lost_lines(doc.read_text(), mirror_files(ws)[0].read_text()) == []


def test_a_new_review_applied_replaces_the_kept_one(ws, cli, tmp_path):
    doc = write_doc(tmp_path, REVIEW_DOC)
    review, _ = corrected_review(ws, cli, doc)
    cli(ws, "import", "--apply-review", review, check=0)
    cli(ws, "import", "--review", doc, check=0)
    text = review.read_text()
    review.write_text("\n".join(ln.replace("- [x]", "- [ ]", 1) if "lines 17-21" not in ln else ln
                                for ln in text.split("\n")))
    data = as_json(cli(ws, "import", "--apply-review", review, "--json"))
    assert data["reviews"][0]["review"] == "applied"
    again = as_json(cli(ws, "import", doc, "--json"))
    assert [a[0] for a in attempts_of(again)] == [[17, 21]] and again["reviews"][0]["attempts"] == 1


def test_a_review_of_another_document_is_refused_and_nothing_written(ws, cli, tmp_path):
    doc = write_doc(tmp_path)
    other = write_doc(tmp_path, THREAD_DOC.replace("A100", "H100"), name="other.md")
    cli(ws, "import", "--review", doc, check=0)
    review = tmp_path / "notes.md.review.md"
    p = cli(ws, "import", "--apply-review", review, other, check=2)
    assert p.stderr.count("\n") == 1 and f"is a review of {doc}, not of {other}" in p.stderr
    assert p.stdout == "" and investigations(ws) == 0 and mirror_files(ws) == []


def test_a_missing_review_or_a_review_whose_document_is_gone_is_one_line(ws, cli, tmp_path):
    p = cli(ws, "import", "--apply-review", tmp_path / "nowhere.review.md", check=2)
    assert p.stderr.count("\n") == 1 and "nowhere.review.md" in p.stderr and "Traceback" not in p.stderr
    doc = write_doc(tmp_path)
    cli(ws, "import", "--review", doc, check=0)
    doc.unlink()
    p = cli(ws, "import", "--apply-review", tmp_path / "notes.md.review.md", "--json", check=2)
    assert p.stderr.count("\n") == 1 and "notes.md: no such file" in p.stderr and investigations(ws) == 0
    assert json.loads(p.stdout) == {"error": p.stderr[len("dbglog: "):].strip()}  # --json: the error as JSON too


def test_apply_review_after_a_plain_import_removes_the_attempts_it_unticked_unless_edited_since(ws, cli, tmp_path):
    doc = write_doc(tmp_path)
    inv = as_json(cli(ws, "import", doc, "--json"))["investigations"][0]
    by_lines = {tuple(a["source_lines"]): a["number"] for a in inv["attempt_list"]}
    edited = by_lines[(11, 11)]
    cli(ws, "attempt", "edit", str(edited), "-i", inv["id"], "--result", "again with a newer compiler, same", check=0)
    cli(ws, "import", "--review", doc, check=0)
    review = tmp_path / "notes.md.review.md"
    review.write_text(review.read_text().replace("- [x] lines 9-9 ", "- [ ] lines 9-9 ")
                      .replace("- [x] lines 11-11 ", "- [ ] lines 11-11 "))
    data = as_json(cli(ws, "import", "--apply-review", review, "--json"))
    [r] = data["investigations"]
    assert (r["action"], r["id"]) == ("update", inv["id"])
    assert sorted((u["number"], u["removed"]) for u in r["unticked"]) == sorted([(by_lines[(9, 9)], True),
                                                                                 (edited, False)])
    shown = as_json(cli(ws, "show", inv["id"], "--json"))
    assert sorted(tuple(a["source_lines"]) for a in shown["attempts"]) == [(10, 10), (11, 11), (17, 21)]
    assert lost_lines(THREAD_DOC, mirror_files(ws)[0].read_text()) == []  # the removed one's line is text now
    out = cli(ws, "import", "--apply-review", review, check=0).stdout
    assert f"attempt {edited} (lines 11-11)" in out and f"dbglog attempt delete {edited} -i {inv['id']}" in out


def test_a_second_review_starts_from_the_review_applied_before(ws, cli, tmp_path):
    doc = write_doc(tmp_path, REVIEW_DOC)
    review, want = corrected_review(ws, cli, doc)
    cli(ws, "import", "--apply-review", review, check=0)
    doc.write_text(REVIEW_DOC.replace("torch 2.3.1; still", "torch 2.3.0; still"))
    assert as_json(cli(ws, "import", "--review", doc, "--json"))["kept"] is True
    text = review.read_text()
    read, rest = text.split("## Read by the reader, not set by the review before (not imported unless ticked)")
    ticked = sorted(parse_row(ln)[1:] for ln in read.splitlines() if ln.startswith("- [x] "))
    assert ticked == sorted((lines, outcome, title, who) for lines, outcome, title, who in want if lines != [10, 10])
    offered = review_rows(rest.split("## Not sure")[0])
    assert set(offered) == {"9-9", "10-10"}  # unticked in the first review; changed since
    assert all(ln.startswith("- [ ] ") for ln in offered.values())
    review.write_text(text.replace("- [ ] lines 10-10 ", "- [x] lines 10-10 "))
    data = as_json(cli(ws, "import", "--apply-review", review, "--json"))
    assert [a[0] for a in attempts_of(data)] == sorted([w[0] for w in want if w[0] != [10, 10]] + [[10, 10]])


def test_a_teammates_clone_with_the_mirror_applies_the_kept_review(ws, cli, tmp_path):
    docs = ws / "docs"
    docs.mkdir()
    doc = write_doc(docs, REVIEW_DOC)
    review, want = corrected_review(ws, cli, doc)
    cli(ws, "import", "--apply-review", review, check=0)
    clone = tmp_path / "clone"  # what git gives a teammate: the document and logs/, no .dbglog/
    (clone / "docs").mkdir(parents=True)
    (clone / "docs" / "notes.md").write_text(REVIEW_DOC)
    cli(clone, "init", check=0)
    for f in mirror_files(ws):
        (clone / "logs" / f.name).write_text(f.read_text())
    again = as_json(cli(clone, "import", "docs/notes.md", "--json"))
    assert [i["action"] for i in again["investigations"]] == ["unchanged"] and attempts_of(again) == want
    assert again["reviews"][0]["review"] == "kept"


def _kept_review_row(ws, cli, tmp_path):
    """A corrected review applied: the document, its mirror file, the file's text and the kept row of lines 17-21."""
    doc = write_doc(tmp_path, REVIEW_DOC)
    review, _ = corrected_review(ws, cli, doc)
    cli(ws, "import", "--apply-review", review, check=0)
    [mirror] = mirror_files(ws)
    text = mirror.read_text()
    row = next(ln for ln in text.split("## Import review")[1].splitlines() if ln.startswith("- lines 17-21 "))
    return doc, mirror, text, row


def test_a_kept_row_edited_out_of_its_form_in_the_mirror_is_named_not_silently_skipped(ws, cli, tmp_path):
    doc, mirror, text, row = _kept_review_row(ws, cli, tmp_path)
    mirror.write_text(text.replace(row, row.replace(" · text:", " · txt:")))  # a hand edit, taken in by sync
    data = as_json(cli(ws, "import", doc, "--json"))
    assert data["reviews"][0]["unreadable"] == [row.replace(" · text:", " · txt:")]
    assert [17, 21] not in [a[0] for a in attempts_of(data)]
    out = cli(ws, "import", doc, check=0).stdout
    assert any(ln.startswith("unread    ") and "17-21" in ln for ln in out.splitlines())


TWO_TRIES_DOC = """\
# Allreduce hangs on the new cluster

## What I tried

- I tried NCCL_P2P_DISABLE=1 and NCCL_IB_DISABLE=1, neither helped.
- Then I set NCCL_ALGO=Tree and NCCL_PROTO=Simple; still hangs.
"""


def shown_attempts(ws, cli, inv_id: str) -> list[tuple]:
    return [(a["source_lines"], a["title"], a["did"], a["outcome"])
            for a in as_json(cli(ws, "show", inv_id, "--json"))["attempts"]]


def test_tries_that_share_a_sentence_keep_their_own_rows_through_a_review_and_a_reimport(ws, cli, tmp_path):
    doc = write_doc(tmp_path, TWO_TRIES_DOC)
    cli(ws, "import", "--review", doc, check=0)
    review = tmp_path / "notes.md.review.md"
    rows = [ln for ln in review.read_text().splitlines() if ln.startswith("- [x] ")]
    assert [parse_row(r)[1] for r in rows] == [[5, 5], [5, 5], [6, 6], [6, 6]]  # one sentence, two tries
    plain = as_json(cli(ws, "import", doc, "--dry-run", "--json"))["investigations"][0]["attempt_list"]
    # Untick the second try of line 5: the first keeps its own title and words, not the second's.
    review.write_text(review.read_text().replace(rows[1], rows[1].replace("- [x]", "- [ ]", 1)))
    inv = as_json(cli(ws, "import", "--apply-review", review, "--json"))["investigations"][0]
    got = shown_attempts(ws, cli, inv["id"])
    assert [t for _, t, _, _ in got] == [plain[0]["title"], plain[2]["title"], plain[3]["title"]]
    assert "P2P_DISABLE" in got[0][2] and "IB_DISABLE" not in got[0][1]
    assert got[1][2] != got[2][2]  # both tries of line 6 kept, each with its own words
    again = as_json(cli(ws, "import", doc, "--json"))["investigations"][0]
    assert again["action"] == "unchanged" and shown_attempts(ws, cli, inv["id"]) == got


def test_a_kept_review_survives_a_document_that_ends_inside_an_open_code_fence(ws, cli, tmp_path):
    cut_short = ("# Segfault in the custom allreduce kernel\n\n## What I tried\n\n"
                 "- I rebuilt with `-G` and the segfault went away.\n- I pinned the driver to 535; still segfaults.\n\n"
                 "## Build notes\n\nMaybe the cache cleanup helped a little, hard to say.\n\n```bash\nmake -j8 install\n")
    doc = write_doc(tmp_path, cut_short)
    cli(ws, "import", "--review", doc, check=0)
    review = tmp_path / "notes.md.review.md"
    review.write_text(review.read_text().replace("- [x] lines 6-6 · failed", "- [x] lines 6-6 · partial"))
    want = attempts_of(as_json(cli(ws, "import", "--apply-review", review, "--json")))
    outcomes = {tuple(lines): outcome for lines, outcome, _, _ in want}
    assert outcomes[(5, 5)] == "worked" and outcomes[(6, 6)] == "partial"
    assert cli(ws, "doctor", check=0).returncode == 0  # the mirror parses back to what is stored
    again = as_json(cli(ws, "import", doc, "--json"))
    assert [i["action"] for i in again["investigations"]] == ["unchanged"] and attempts_of(again) == want
    assert lost_lines(cut_short, mirror_files(ws)[0].read_text()) == []


def test_a_long_title_goes_through_the_review_whole():
    from dbglog.core.model import Attempt, Investigation
    from dbglog.docreader import Parsed
    from dbglog.docreader.review import parse_review, review_markdown

    title = "bazel build " + " ".join(f"--copt=-DOPTION_{k}=1" for k in range(12))  # ~270 characters
    attempt = Attempt(number=1, title=title, did=title, outcome="failed")
    attempt.source_lines = [3, 3]
    doc = "# Build\n\n" + title + "\n"
    text = review_markdown("notes.md", doc, [Parsed(Investigation(id="", title="Build", attempts=[attempt]), 1, "build")])
    [back] = parse_review(text, "notes.md.review.md").attempts
    assert len(title) > 200 and back.title == title


def test_a_kept_row_edited_in_the_mirror_is_what_the_next_import_applies(ws, cli, tmp_path):
    doc, mirror, text, row = _kept_review_row(ws, cli, tmp_path)
    mirror.write_text(text.replace(row, row.replace(" · worked · ", " · partial · ", 1)))  # taken in by sync
    data = as_json(cli(ws, "import", doc, "--json"))
    assert [a[1] for a in attempts_of(data) if a[0] == [17, 21]] == ["partial"]


def test_kept_rows_follow_their_text_when_lines_are_inserted_above_even_where_a_passage_is_written_twice():
    from dbglog.docreader.review import Correction, kept_corrections, kept_section, sha

    doc = "# Two racks\n\n## R12\n\n- Set NCCL_IB_DISABLE=1; still hangs.\n\n## R15\n\n- Set NCCL_IB_DISABLE=1; still hangs.\n"
    lines = doc.split("\n")
    rows = [Correction(5, 5, "IB off on R12", "failed"), Correction(5, 5, "second try, same line", "partial"),
            Correction(9, 9, "IB off on R15", "failed")]

    class Tried:  # (an attempt as kept_section reads it)
        def __init__(self, c):
            self.source_lines, self.title, self.outcome, self.who = [c.first, c.last], c.title, c.outcome, c.who

    body = kept_section([Tried(c) for c in rows], [], lines, sha(doc)).body
    moved = kept_corrections([body], "Seen on two racks.\n\n" + doc)  # two lines in above everything
    assert [(c.first, c.title) for c in moved.attempts] == [(7, "IB off on R12"), (7, "second try, same line"),
                                                           (11, "IB off on R15")]
    assert moved.dropped == [] and moved.changed
    edited = kept_corrections([body], doc.replace("## R15\n\n- Set NCCL_IB_DISABLE=1; still hangs.",
                                                  "## R15\n\n- Set NCCL_IB_DISABLE=1; it works."))
    assert [c.title for c in edited.dropped] == ["IB off on R15"]  # not moved onto R12's passage, taken


def test_a_refused_review_leaves_the_kept_one_and_the_mirror_as_they_were(ws, cli, tmp_path):
    doc = write_doc(tmp_path, REVIEW_DOC)
    review, want = corrected_review(ws, cli, doc)
    cli(ws, "import", "--apply-review", review, check=0)
    [mirror] = mirror_files(ws)
    before = mirror.read_bytes()
    cli(ws, "import", "--review", doc, check=0)
    review.write_text(review.read_text().replace("- [x] lines 10-10 · ", "- [x] lines 10-10 · fixed · ", 1))
    p = cli(ws, "import", "--apply-review", review, check=2)
    assert "outcome 'fixed'" in p.stderr and p.stderr.count("\n") == 1
    assert mirror_files(ws) == [mirror] and mirror.read_bytes() == before
    assert attempts_of(as_json(cli(ws, "import", doc, "--json"))) == want


# --- an agent's reading from the command line: --units, then --extraction ------------------------------------


def test_units_then_extraction_imports_exactly_the_attempts_an_agent_cited(ws, cli, tmp_path):
    doc = write_doc(tmp_path)
    data = as_json(cli(ws, "import", "--units", doc, "--json"))
    assert data["source"] == str(doc) and "suggestion answered by the person who tried it" in data["guide"]
    assert investigations(ws) == 0  # --units wrote nothing
    eager = next(u for u in data["units"] if "enforce_eager=True" in u["text"])
    ext = tmp_path / "reading.json"
    ext.write_text(json.dumps({"digest": data["digest"], "attempts": [
        {"units": [eager["id"]], "title": "enforce_eager=True", "outcome": "worked", "who": "bob"}]}), encoding="utf-8")
    done = as_json(cli(ws, "import", doc, "--extraction", ext, "--json"))
    (inv,) = done["investigations"]
    assert [(a["title"], a["outcome"], a["who"], a["source_lines"]) for a in inv["attempt_list"]] == [
        ("enforce_eager=True", "worked", "bob", eager["lines"])]
    assert lost_lines(THREAD_DOC, mirror_files(ws)[0].read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("body, said", [
    ('{"digest": D, "attempts": [{"units": [99999], "title": "x"}]}', "reading.json: attempt 1 cites unit 99999, "
                                                                       "which this document does not have"),
    ("not json", "reading.json: not JSON"),
    ('{"digest": D, "attempts": [{"units": [0], "outcome": "fixed"}]}', "reading.json: attempt 1: outcome 'fixed' is "
                                                                         "not one of"),
    ('{"attempts": [{"units": [0]}]}', "reading.json: `digest` is missing"),
    ('{"digest": D, "attempts": [{"units": [0], "title": ["t", "u"]}]}', "reading.json: attempt 1: `title` must be "
                                                                          "text, not ['t', 'u']"),
    ('{"digest": D, "attempts": [{"units": [0], "who": ["x"]}]}', "reading.json: attempt 1: `who` must be text"),
    ('{"digest": D, "attempts": [], "next_steps": [{"units": [0], "text": {"a": [1]}}]}', "reading.json: next step 1: "
                                                                                         "`text` must be text"),
    ('{"digest": D, "attempts": [], "next_steps": [{"units": [0], "text": 5}]}', "reading.json: next step 1: `text` "
                                                                                 "must be text, not 5"),
    ('{"digest": "0123456789abcdef", "attempts": [{"units": [0]}]}', "reading.json: the document, or dbglog's reading "
                                                                     "of it, changed since its units were read"),
])
def test_a_wrong_extraction_is_one_line_exit_2_and_nothing_written(ws, cli, tmp_path, body, said):
    doc = write_doc(tmp_path)
    digest = as_json(cli(ws, "import", "--units", doc, "--json"))["digest"]
    (tmp_path / "reading.json").write_text(body.replace("D", json.dumps(digest)), encoding="utf-8")
    p = cli(ws, "import", doc, "--extraction", tmp_path / "reading.json", check=2)
    assert said in p.stderr and len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr
    assert investigations(ws) == 0 and mirror_files(ws) == []


def test_units_and_extraction_are_ways_of_reading_given_one_at_a_time(ws, cli, tmp_path):
    doc = write_doc(tmp_path)
    p = cli(ws, "import", "--units", doc, "--extraction", tmp_path / "x.json", check=2)
    assert "--units and --extraction are different ways of reading a document; give one" in p.stderr


TWO_BUGS = """# Bug: NCCL hang on 2 nodes

## Attempts

### Attempt 1: NCCL_P2P_DISABLE=1
**Result:** still hangs.

# Bug: loss spikes after resume

## Attempts

### Attempt 1: reload the optimizer state
**Result:** spikes are gone.
"""


def test_units_say_which_investigation_they_are_read_in_and_an_attempt_across_two_is_warned_of(ws, cli, tmp_path):
    doc = write_doc(tmp_path, TWO_BUGS, "two.md")
    data = as_json(cli(ws, "import", "--units", doc, "--json"))
    assert [(i["index"], i["title"]) for i in data["investigations"]] == [
        (0, "Bug: NCCL hang on 2 nodes"), (1, "Bug: loss spikes after resume")]
    unit = {u["text"]: u for u in data["units"]}
    hangs, gone = unit["**Result:** still hangs."], unit["**Result:** spikes are gone."]
    assert (hangs["investigation"], gone["investigation"]) == (0, 1)
    ext = tmp_path / "reading.json"
    ext.write_text(json.dumps({"digest": data["digest"], "attempts": [
        {"units": [hangs["id"], gone["id"]], "title": "mixed up", "outcome": "failed"}]}), encoding="utf-8")
    p = cli(ws, "import", doc, "--extraction", ext, check=0)
    assert "cites units of more than one investigation of" in p.stderr and "it is filed under the first" in p.stderr


PREAMBLE_THEN_BUG = """Notes kept while the job would not start.

Rebuilt the container image from the 24.09 tag: the job still hangs at start.

# Slurm job hangs at start

## Attempts

### Attempt 1: turn accounting off
**Result:** the job starts.
"""


def test_an_attempt_citing_the_preamble_above_the_one_investigation_is_not_warned_of(ws, cli, tmp_path):
    # (the preamble is the first investigation's: only a later investigation's start divides two)
    doc = write_doc(tmp_path, PREAMBLE_THEN_BUG, "pre.md")
    data = as_json(cli(ws, "import", "--units", doc, "--json"))
    assert len(data["investigations"]) == 1 and data["investigations"][0]["line"] > 3
    unit = {u["text"]: u for u in data["units"]}
    rebuilt = unit["Rebuilt the container image from the 24.09 tag: the job still hangs at start."]
    starts = unit["**Result:** the job starts."]
    ext = tmp_path / "reading.json"
    ext.write_text(json.dumps({"digest": data["digest"], "attempts": [
        {"units": [rebuilt["id"], starts["id"]], "title": "rebuild, then accounting off", "outcome": "worked"}]}),
        encoding="utf-8")
    p = cli(ws, "import", doc, "--extraction", ext, check=0)
    assert "more than one investigation" not in p.stderr and "1 attempt(s)" in p.stdout


def test_an_extraction_files_an_attempt_under_the_investigation_it_names(ws, cli, tmp_path):
    # (an agent saw a try told under one bug's heading that belonged to the next bug, and could move it only by
    # citing a unit of the other first)
    doc = write_doc(tmp_path, TWO_BUGS, "two.md")
    data = as_json(cli(ws, "import", "--units", doc, "--json"))
    unit = {u["text"]: u for u in data["units"]}
    hangs, gone = unit["**Result:** still hangs."], unit["**Result:** spikes are gone."]
    ext = tmp_path / "reading.json"
    ext.write_text(json.dumps({"digest": data["digest"], "attempts": [
        {"units": [hangs["id"]], "title": "reload the optimizer state", "outcome": "failed", "investigation": 1},
        {"units": [gone["id"]], "title": "spikes gone", "outcome": "worked"}]}), encoding="utf-8")
    out = as_json(cli(ws, "import", doc, "--extraction", ext, "--json"))
    got = {r["title"]: [a["title"] for a in r["attempt_list"]] for r in out["investigations"]}
    assert got == {"Bug: NCCL hang on 2 nodes": [],
                   "Bug: loss spikes after resume": ["reload the optimizer state", "spikes gone"]}
    assert not any("more than one investigation" in w for w in out.get("warnings", []))
    for bad, said in ((2, "filed under investigation 2, but the document is read as 2 (0 to 1)"),
                      ("1", "`investigation` is '1'")):
        ext.write_text(json.dumps({"digest": data["digest"], "attempts": [
            {"units": [hangs["id"]], "title": "x", "outcome": "failed", "investigation": bad}]}), encoding="utf-8")
        p = cli(ws, "import", doc, "--extraction", ext, check=2)
        assert said in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_a_second_extraction_removes_the_attempts_it_leaves_out_unless_edited_since(ws, cli, tmp_path):
    doc = write_doc(tmp_path)
    data = as_json(cli(ws, "import", "--units", doc, "--json"))
    ids = {w: next(u["id"] for u in data["units"] if w in u["text"] and u["kind"] == "sentence")
           for w in ("enforce_eager=True", "torch 2.3.1")}

    def reading(*words):
        f = tmp_path / f"reading{len(words)}.json"
        f.write_text(json.dumps({"digest": data["digest"], "attempts": [
            {"units": [ids[w]], "title": w, "outcome": "failed"} for w in words]}), encoding="utf-8")
        return f

    both, one = reading("enforce_eager=True", "torch 2.3.1"), reading("enforce_eager=True")
    inv = as_json(cli(ws, "import", doc, "--extraction", both, "--json"))["investigations"][0]["id"]
    again = as_json(cli(ws, "import", doc, "--extraction", one, "--json"))["investigations"][0]
    assert [a["title"] for a in again["attempt_list"]] == ["enforce_eager=True"]
    assert [(u["title"], u["removed"]) for u in again["unticked"]] == [("torch 2.3.1", True)]
    cli(ws, "import", doc, "--extraction", both, "--json")
    cli(ws, "attempt", "edit", "2", "-i", inv, "-r", "also crashed with two GPUs")  # (a person's words since)
    kept = as_json(cli(ws, "import", doc, "--extraction", one, "--json"))["investigations"][0]
    assert [(u["title"], u["removed"]) for u in kept["unticked"]] == [("torch 2.3.1", False)]


def test_units_of_a_line_range_keep_the_whole_documents_ids_and_digest(ws, cli, tmp_path):
    doc = write_doc(tmp_path)
    whole = as_json(cli(ws, "import", "--units", doc, "--json"))
    part = as_json(cli(ws, "import", "--units", doc, "--lines", "9-12", "--json"))
    assert part["digest"] == whole["digest"] and part["units"]
    assert part["units"] == [u for u in whole["units"] if u["lines"][1] >= 9 and u["lines"][0] <= 12]
    tail = as_json(cli(ws, "import", "--units", doc, "--lines", "12-", "--json"))["units"]
    assert tail == [u for u in whole["units"] if u["lines"][1] >= 12]


@pytest.mark.parametrize("args, said", [
    (["--units", "--lines", "9-3"], "--lines takes lines A-B with 1 <= A <= B, got '9-3'"),
    (["--units", "--lines", "nine"], "--lines takes lines as A-B (1-based, e.g. 120-480), got 'nine'"),
    (["--lines", "3"], "--lines picks the units --units shows; give --units too"),
])
def test_a_wrong_line_range_is_one_line_and_exit_2(ws, cli, tmp_path, args, said):
    doc = write_doc(tmp_path)
    p = cli(ws, "import", doc, *args, check=2)
    assert said in p.stderr and "Traceback" not in p.stderr


def test_a_second_review_does_not_overwrite_corrections_not_applied_yet(ws, cli, tmp_path):
    """An adversarial probe: `import --review` run again wrote over the review file, and the corrections made in it
    but not applied yet were gone. It is refused in one line, the file as it was; once applied, or deleted, a
    fresh review is written."""
    doc = write_doc(tmp_path, REVIEW_DOC)
    review, _ = corrected_review(ws, cli, doc)
    edited = review.read_bytes()
    p = cli(ws, "import", "--review", doc)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "not applied yet" in p.stderr, p.stderr
    assert review.read_bytes() == edited
    cli(ws, "import", "--apply-review", review, check=0)
    assert cli(ws, "import", "--review", doc).returncode == 0  # (applied: its rows are the kept review's)
    review.write_text("my own notes, not a review\n")
    assert cli(ws, "import", "--review", doc).returncode == 2
    review.unlink()
    assert cli(ws, "import", "--review", doc).returncode == 0 and review.exists()


def test_an_extraction_that_lists_the_next_steps_removes_those_an_earlier_import_read(ws, cli, tmp_path):
    """An adversarial probe: a plain import read two next steps; an extraction listing one of them kept both (in a
    fresh workspace it gives one), so the result depended on the order of imports. Steps recorded through dbglog
    stay."""
    doc = tmp_path / "e.md"
    doc.write_text("# Bug S\n\n## What we tried\n\n- I cleared the cache; still crashes.\n\n## Next\n\n- try fp32\n"
                   "- try bigger batch\n")
    inv = as_json(cli(ws, "import", doc, "--json"))["investigations"][0]["id"]
    cli(ws, "next", "add", "my own step", "-i", inv, check=0)
    data = as_json(cli(ws, "import", "--units", doc, "--json"))
    fp32 = next(u["id"] for u in data["units"] if u["text"] == "try fp32")
    f = tmp_path / "reading.json"
    f.write_text(json.dumps({"digest": data["digest"], "attempts": [],
                             "next_steps": [{"units": [fp32], "text": "try fp32", "status": "todo"}]}))
    cli(ws, "import", doc, "--extraction", f, check=0)
    steps = json.loads(cli(ws, "next", "list", "-i", inv, "--json", check=0).stdout)
    assert [s["text"] for s in steps] == ["try fp32", "my own step"]


WIFI_DOC = ("# Wifi drops\n\nThe laptop wifi drops every hour.\n\n## What I tried\n\n"
            "- Tried disabling power saving; still drops.\n- Tried the older firmware; still drops.\n"
            "- Tried a new router; works now.\n\n## Next steps\n\n- [ ] Report to the vendor\n\nMaybe swap the card too.\n")


def test_a_plain_reimport_after_an_extraction_keeps_its_attempts_and_steps(ws, cli, tmp_path):
    doc = write_doc(tmp_path, WIFI_DOC)
    data = as_json(cli(ws, "import", "--units", doc, "--json"))
    unit = {u["text"]: u["id"] for u in data["units"]}
    ext = tmp_path / "reading.json"
    ext.write_text(json.dumps({"digest": data["digest"], "attempts": [
        {"units": [unit["Tried disabling power saving; still drops."]], "title": "Power saving off", "outcome": "failed"},
        {"units": [unit["Tried a new router; works now."]], "title": "New router", "outcome": "worked", "who": "sam"}],
        "next_steps": [{"units": [unit["Maybe swap the card too."]], "text": "Swap the wifi card", "status": "todo"}]}))
    applied = as_json(cli(ws, "import", doc, "--extraction", ext, "--json"))
    want = attempts_of(applied)
    assert [t for _, _, t, _ in want] == ["Power saving off", "New router"]
    again = as_json(cli(ws, "import", doc, "--json"))
    assert [i["action"] for i in again["investigations"]] == ["unchanged"] and attempts_of(again) == want
    assert again["reviews"][0]["review"] == "kept" and again["reviews"][0]["by"] == "extraction"
    assert "as its applied extraction set them" in cli(ws, "import", doc, check=0).stdout
    doc.write_text(WIFI_DOC.replace("every hour.\n", "every hour.\n\nIt started after the update.\n"))
    moved = as_json(cli(ws, "import", doc, "--json"))  # (lines inserted above: the agent's reading follows them)
    assert attempts_of(moved) == [([a + 2, b + 2], o, t, w) for (a, b), o, t, w in want]
    inv = as_json(cli(ws, "show", moved["investigations"][0]["id"], "--json"))
    assert [(s["text"], s["source_lines"]) for s in inv["next_steps"]] == [("Swap the wifi card", [17, 17])]
