"""Lossless import, as a property: for hypothesis-generated debug docs that mix the styles people
write in (attempt headings at any level and in many words, label spellings, bullets, tables,
fixed-width blocks, fences, nested lists, checkboxes, unicode, front matter), every non-blank
source line is in the rendered mirror, the result reads back the same, and reading the doc again
gives the same investigations (so a second import changes nothing)."""

import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbglog import docreader
from dbglog.kb import importer, mirror

words = st.sampled_from(["NCCL", "hang", "rank 3", "cudaMalloc", "--enforce-eager", "`TORCH_NCCL_BLOCKING_WAIT=1`",
                         "ROCm 6.2", "OOM", "mbarrier", "naïve", "日本語", "→", "✅", "❌", "⚠️", "|", "*", "_x_",
                         "**bold**", "50%", "step 7,100", "<tag>", "[link](http://x)", "#4139", "GPU 0", "(WRONG)"])
sentence = st.lists(words, min_size=1, max_size=8).map(" ".join)
kw = st.sampled_from(["Attempt", "Try", "Fix", "Approach", "Experiment", "Test", "Config", "Option", "Phase",
                      "Solution", "Theory", "Intento"])
label = st.sampled_from(["**Result:**", "**Result**:", "Result:", "- Result:", "**Hypothesis:**", "What we did:",
                         "**Outcome:**", "Conclusion:", "**Why it failed**:", "*Result:*", "Result -", "Finding:"])
container = st.sampled_from(["What we tried", "Things tried", "Solutions attempted", "Investigation", "Timeline",
                             "What didn't work", "Notes", "Background", "Logs"])
nexts = st.sampled_from(["Next steps", "TODO", "Action items", "Open questions", "Recommendations"])
fields = st.sampled_from(["Root cause", "Environment", "Hardware", "Symptom", "The fix", "Resolution"])


@st.composite
def block(draw):
    kind = draw(st.sampled_from(["para", "labels", "bullets", "table", "fence", "checks", "fixed", "nested"]))
    if kind == "para":
        return "\n".join(draw(st.lists(sentence, min_size=1, max_size=3)))
    if kind == "labels":
        return "\n".join(f"{draw(label)} {draw(sentence)}" for _ in range(draw(st.integers(1, 4))))
    if kind == "bullets":
        return "\n".join(f"- {draw(st.sampled_from(['Tried ', '', '❌ ', '✅ ']))}{draw(sentence)}"
                         f"{draw(st.sampled_from(['', ' → still hangs', ' → works', ' - did not help']))}"
                         for _ in range(draw(st.integers(1, 4))))
    if kind == "table":
        rows = draw(st.integers(1, 3))
        return "| Approach | Result | Status |\n|---|---|---|\n" + "\n".join(
            f"| {draw(sentence).replace('|', '/')} | {draw(sentence).replace('|', '/')} | "
            f"{draw(st.sampled_from(['✅', '❌', 'partial', '']))} |" for _ in range(rows))
    if kind == "fence":
        return "```\n" + "\n".join(draw(st.lists(sentence, min_size=1, max_size=3))) + "\n```"
    if kind == "checks":
        return "\n".join(f"- [{draw(st.sampled_from([' ', 'x']))}] {draw(sentence)}" for _ in range(draw(st.integers(1, 3))))
    if kind == "fixed":
        return ("```\nFactor      Working     Broken\n----------  ----------  ----------\n"
                "threads     1           8\n            (pinned)    (free)\nstreams     one         two\n```")
    return f"1. {draw(sentence)}\n   - {draw(sentence)}\n   - {draw(sentence)}\n2. {draw(sentence)}"


@st.composite
def docs(draw):
    out = []
    if draw(st.booleans()):
        out.append(f"---\ntitle: {draw(st.sampled_from(['Hang at step 7k', 'x']))}\ntags: [gpu]\n---")
    out.append(f"# {draw(sentence)}")
    if draw(st.booleans()):
        out.append(f"**Status:** {draw(st.sampled_from(['Open', 'Resolved', 'blocked on infra']))}")
    for _ in range(draw(st.integers(1, 6))):
        level = draw(st.integers(2, 4))
        what = draw(st.sampled_from(["attempt", "container", "next", "field", "plain"]))
        if what == "attempt":
            out.append(f"{'#' * level} {draw(kw)} {draw(st.integers(1, 9))}{draw(st.sampled_from([': ', ' — ', ' ']))}"
                       f"{draw(sentence)}")
        elif what == "container":
            out.append(f"{'#' * level} {draw(container)}")
        elif what == "next":
            out.append(f"{'#' * level} {draw(nexts)}")
        elif what == "field":
            out.append(f"{'#' * level} {draw(fields)}")
        else:
            out.append(f"{'#' * level} {draw(sentence)}")
        for _ in range(draw(st.integers(0, 3))):
            out.append(draw(block()))
    return "\n\n".join(out) + "\n"


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs())
def test_every_source_line_is_kept_and_reimport_changes_nothing(doc):
    parsed, _ = importer.parse_document(doc, "gen.md")
    out = ""
    for p in parsed:
        importer.check_roundtrip(p, "gen.md")  # what is stored reads back the same
        out += mirror.render(docreader._probe(p.inv)) + "\n"
    kept = docreader.kept_text(out)
    lost = [ln for ln in doc.split("\n") if docreader.counts(ln) and docreader.norm(ln) not in kept]
    assert lost == []
    again, _ = importer.parse_document(doc, "gen.md")
    assert [p.inv for p in again] == [p.inv for p in parsed]
    for p in parsed:  # re-import merges into what the first import stored: no change
        stored = copy.deepcopy(p.inv)
        assert importer.merge(stored, p.inv) == stored


def test_fixed_width_cell_that_wraps_stays_in_its_row():
    doc = """# NCU hang on TMA kernels

**Status:** Open

## Key Differences

```
Factor            Repro (works)               Actual (hangs)              Status
----------------  --------------------------  --------------------------  ---------
Launch context    raw CUDA driver API         PyTorch custom op           ruled out
Memory inputs     random tensors, one         weights loaded from the     untested
                  allocation                  checkpoint, 40 allocations
Replay mode       application                 kernel                      culprit
```
"""
    (p,), _ = importer.parse_document(doc, "seed.md")
    rows = {d.factor: d for d in p.inv.differences}
    assert list(rows) == ["Launch context", "Memory inputs", "Replay mode"]
    assert rows["Memory inputs"].working == "random tensors, one allocation"
    assert rows["Memory inputs"].broken == "weights loaded from the checkpoint, 40 allocations"
    assert [d.status for d in p.inv.differences] == ["ruled-out", "untested", "culprit"]
    kept = docreader.kept_text(mirror.render(docreader._probe(p.inv)))
    assert all(docreader.norm(ln) in kept for ln in doc.split("\n") if docreader.counts(ln))


def test_a_table_kept_as_written_stays_a_table_in_the_mirror_not_a_code_block():
    # Its kept lines ended in a blank one, which the mirror never reads back: the round trip then fenced the
    # whole section as code (and paid a second parse of the investigation to find that out).
    from pathlib import Path

    doc = Path(__file__).parent / "corpus" / "styles" / "45-protocol-rccl-allgather-slowdown.md"
    parsed, _ = docreader.read_document(doc.read_text(encoding="utf-8"), doc.name)
    kept = next(s for s in parsed[0].inv.sections if s.heading.endswith("(as written)"))
    assert kept.body.startswith("| Factor | 6.0.2 | 6.1.3 | Matters? |") and kept.body.endswith("| no |")
    assert parsed[0].verified


def test_an_attempt_heading_numbered_otherwise_than_stored_keeps_the_authors_heading_in_the_mirror():
    doc = ("# Black screen after boot\n\nThe laptop shows a black screen after the kernel update.\n\n"
           "### Attempt 3: disable nouveau\n\nBlacklisted nouveau; still black.\n\n"
           "### Attempt 1: older kernel\n\nBooted 6.1; still black.\n\n"
           "### Attempt 3: nomodeset\n\nAdded nomodeset; still black.\n\n"
           "### Attempt 10: acpi=off\n\nBooted with acpi=off; the screen came back.\n")
    [p], _ = importer.parse_document(doc, "notes.md")
    assert [(a.number, a.title) for a in p.inv.attempts] == [
        (1, "disable nouveau"), (2, "older kernel"), (3, "nomodeset"), (4, "acpi=off")]
    rendered = mirror.render(p.inv)
    for heading in ("### Attempt 3: disable nouveau", "### Attempt 1: older kernel", "### Attempt 10: acpi=off"):
        assert heading in rendered.split("## Source headings")[1]
    assert "Attempt 3: nomodeset" not in rendered.split("## Source headings")[1]  # stored under its own number

    in_order = "# Hang\n\n### Attempt 1: pin the driver\n\nStill hangs.\n\n### Attempt 2: older kernel\n\nWorks.\n"
    [p], _ = importer.parse_document(in_order, "notes.md")
    assert len(p.inv.attempts) == 2 and "Source headings" not in mirror.render(p.inv)  # nothing to keep there
