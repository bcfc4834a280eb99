"""Properties of the importer: canonical files come back unchanged; mutated docs never crash it."""

import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbglog.core import model
from dbglog.core import markdown
from dbglog.util.errors import DbglogError
from dbglog.kb.importer import check_roundtrip, parse_document
from dbglog.core.model import Attempt, Difference, Investigation, NextStep

GOLDEN = Path(__file__).parent / "golden"

text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=60)
line = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), max_size=30).map(str.strip)
title = line.filter(lambda t: t and not model._PATHLIKE.search(t))


@st.composite
def investigations(draw):
    n_att = draw(st.integers(0, 3))
    attempts = [Attempt(number=i + 1, title=draw(line), hypothesis=draw(text).strip(), did=draw(text).strip(),
                        result=draw(text).strip(), conclusion=draw(text).strip(),
                        outcome=draw(st.sampled_from(model.OUTCOMES)))
                for i in range(n_att)]
    diffs = [Difference(position=i + 1, factor=draw(title), working=draw(line), broken=draw(line),
                        status=draw(st.sampled_from(model.DIFF_STATUSES)))
             for i in range(draw(st.integers(0, 3)))]
    steps = [NextStep(position=i + 1, text=draw(title), detail=draw(line),
                      status=draw(st.sampled_from(model.NEXT_STATUSES)))
             for i in range(draw(st.integers(0, 3)))]
    labels = (draw(title), draw(title)) if diffs else model.DEFAULT_LABELS
    return Investigation(
        id="20261121-some-bug-ab12", title=draw(title), status=draw(st.sampled_from(model.STATUSES)),
        symptom=draw(text).strip(), environment=draw(text).strip(),
        related_files=[f for f in draw(st.lists(line, max_size=2)) if f],
        tags=draw(st.lists(st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True), max_size=3, unique=True)),
        root_cause=draw(text).strip(), created="2026-11-21T09:00:00Z", updated="2026-11-21T10:00:00Z",
        labels=labels, attempts=attempts, differences=diffs, next_steps=steps)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(investigations())
def test_canonical_file_imports_back_to_the_same_content(inv):
    rendered = markdown.render(inv)
    assert markdown.parse(rendered) == inv
    parsed, skipped = parse_document(rendered, "x.md")
    assert len(parsed) == 1 and not skipped
    assert parsed[0].inv == inv
    assert parsed[0].canonical


TRICKY = ["```", "~~~", "```python", "| a | b |", "|---|---|---|", "| x | y | z | w |", "#### Attempt 2",
          "### Attempt 1: again", "**Result:** Hangs", "Hypothesis:", "**Status:** Open", "## Template",
          "### <short description>", "<!--", "-->", "- [ ] **idea** — why", "1. [x] done (Attempt 9)",
          "# Title", "## Key Differences", "## What to try next", "----  ----  ----", "", "    indented",
          "<<<<<<< HEAD", "=======", ">>>>>>> main", "**Outcome:** maybe", "---", "\t", "\u00a0", "🔥 Works"]
DOCS = [p.read_text() for p in sorted(GOLDEN.glob("*.md"))]


@st.composite
def mutated(draw):
    lines = draw(st.sampled_from(DOCS)).split("\n")
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["delete", "dup", "insert", "replace", "swap", "truncate"]))
        i = draw(st.integers(0, max(0, len(lines) - 1)))
        new = draw(st.one_of(st.sampled_from(TRICKY), line))
        if op == "delete" and len(lines) > 1:
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "insert":
            lines.insert(i, new)
        elif op == "replace":
            lines[i] = new
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "truncate":
            lines[i] = lines[i][: draw(st.integers(0, max(0, len(lines[i]))))]
    return "\n".join(lines)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutations_never_crash(doc):
    n = doc.count("\n") + 1
    try:
        parsed, _ = parse_document(doc, "doc.md")
        for p in parsed:
            model.check_title(p.inv.title)
            check_roundtrip(p, "doc.md")
    except DbglogError as e:
        m = re.match(r"^doc\.md:(\d+): \S", str(e))
        assert m, f"error without a line: {e}"
        assert 1 <= int(m.group(1)) <= n
        assert "dbglog bug" not in str(e)
