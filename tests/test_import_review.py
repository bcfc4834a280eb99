"""`dbglog import --explain` and `--review` / `--apply-review`: how a document was read, shown without
changing anything, and the corrected checklist taken back -- exactly the ticked attempts, with the outcomes
and titles as corrected, and still every line of the document kept."""

import pytest

from conftest import run_cli_inproc
from import_thread_doc import THREAD_DOC, as_json, investigations, lost_lines, mirror_files, write_doc

LABELS = {"action", "result", "action_result", "proposal", "request", "plan", "boilerplate", "context"}


@pytest.fixture
def cli():
    return run_cli_inproc


def test_explain_lists_each_unit_with_its_label_confidence_and_cues_and_writes_nothing(ws, cli, tmp_path):
    doc = write_doc(tmp_path)
    out = cli(ws, "import", "--explain", doc, check=0).stdout
    rows = [ln for ln in out.splitlines() if not ln.strip().startswith("because:")]
    tried = next(ln for ln in rows if "enforce_eager=True" in ln)
    assert tried.split()[:2] == ["9-9", "action_result"]
    float(tried.split()[2])  # the confidence, a number
    why = out.splitlines()[out.splitlines().index(tried) + 1]
    assert why.strip().startswith("because:") and "tried heading" in why
    assert investigations(ws) == 0 and mirror_files(ws) == []
    assert not (tmp_path / "notes.md.review.md").exists()


def test_explain_json_gives_every_unit_its_lines_kind_label_confidence_and_features(ws, cli, tmp_path):
    doc = write_doc(tmp_path)
    data = as_json(cli(ws, "import", "--explain", doc, "--json"))
    assert data["source"] == str(doc)
    units = data["units"]
    assert units and all(set(u) == {"lines", "kind", "label", "confidence", "features", "author", "text"}
                         for u in units)
    for u in units:
        assert u["label"] in LABELS and 0.0 <= u["confidence"] <= 1.0
        assert len(u["lines"]) == 2 and 1 <= u["lines"][0] <= u["lines"][1] <= THREAD_DOC.count("\n")
        assert all(set(f) == {"cue", "weight"} and isinstance(f["weight"], float) for f in u["features"])
    by_line = {u["lines"][0]: u for u in units}
    assert by_line[10]["label"] == "action_result" and "torch 2.3.1" in by_line[10]["text"]
    assert by_line[17]["label"] == "request"  # "Have you tried ...?" is asked, not done
    assert investigations(ws) == 0


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
    doc = write_doc(tmp_path)
    data = as_json(cli(ws, "import", "--review", doc, "--json"))
    review = tmp_path / "notes.md.review.md"
    assert data == {"review": str(review), "source": str(doc)}
    text = review.read_text()
    assert text.splitlines()[0].startswith(f"<!-- dbglog review: {doc} sha:")
    rows = review_rows(text)
    assert rows["9-9"].startswith("- [x] lines 9-9 · worked · ")
    assert rows["10-10"].startswith("- [x] lines 10-10 · failed · ")
    assert rows["17-21"].startswith("- [x] lines 17-21 · worked · ") and " · by bob · " in rows["17-21"]
    assert "## Not sure (not imported unless ticked)" in text
    unsure = text.split("## Not sure")[1]
    assert all(ln.startswith("- [ ] ") for ln in unsure.splitlines() if ln.startswith("- ["))
    assert investigations(ws) == 0 and mirror_files(ws) == []
    assert doc.read_text() == THREAD_DOC


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
    doc = write_doc(tmp_path)
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
    assert lost_lines(THREAD_DOC, mirror.read_text()) == []
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
    doc = write_doc(tmp_path)
    review, _ = corrected_review(ws, cli, doc)
    doc.write_text(THREAD_DOC.replace("torch 2.3.1", "torch 2.3.0"))
    p = cli(ws, "import", "--apply-review", review, check=2)
    assert p.stderr.count("\n") == 1 and "changed since" in p.stderr and "--review" in p.stderr
    assert p.stdout == "" and investigations(ws) == 0 and mirror_files(ws) == []


@pytest.mark.parametrize("bad, says", [
    ("- [x] lines 9 · worked · 0.70 · one line only", "cannot read this row"),
    ("- [x] lines 9-9 · fixed · 0.70 · not an outcome dbglog knows", "outcome 'fixed'"),
    ("- [x] lines 12-9 · worked · 0.70 · backwards", "run backwards"),
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
