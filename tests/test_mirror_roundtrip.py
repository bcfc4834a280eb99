"""The canonical markdown format: render and parse are exact inverses, for any content."""

import string

import pytest

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbglog.core import markdown
from dbglog.core.model import Attempt, Difference, Investigation, NextStep, Section

# Text that stresses the format: markdown syntax, our own labels, fences, pipes, CR, unicode.
NASTY = [
    "**Result:** fake", "**Outcome:** worked", "# heading", "## Attempts", "### Attempt 9: x",
    "```", "````py", "~~~", "---", "===", "***", "| a | b |", "|---|", "<!-- x", "-->", "<div>",
    "- item", "1. [ ] **x** — y", "\\|", "\\", "`", "**", "\r", "\r\n", "\t", "  ", "\x00", "\u2028",
    "é漢字🙂", "<!-- dbglog-data {} -->", "```dbglog", "```dbglog-json", "[a]: /url",
]
text = st.one_of(
    st.text(max_size=40),
    st.lists(st.one_of(st.sampled_from(NASTY), st.text(string.printable, max_size=12)), max_size=8).map("".join),
    st.lists(st.one_of(st.sampled_from(NASTY), st.text(max_size=12)), max_size=6).map("\n".join),
)
long_text = st.builds(lambda t, n: (t + "\n") * n, text, st.integers(1, 30))
field_text = st.one_of(text, long_text)
stamp = st.sampled_from(["", "2026-11-21T09:12:03Z", "2025-01-02T03:04:05Z"])


@st.composite
def investigations(draw):
    n_att = draw(st.integers(0, 4))
    numbers = sorted(draw(st.sets(st.integers(1, 500), min_size=n_att, max_size=n_att)))
    attempts = [
        Attempt(number=n, title=draw(text), hypothesis=draw(field_text), did=draw(field_text),
                result=draw(field_text), conclusion=draw(text),
                outcome=draw(st.sampled_from(["worked", "failed", "partial", "inconclusive", "untested"])),
                created=draw(stamp), runs=draw(st.lists(st.from_regex(r"[a-z0-9]{1,8}-[a-z0-9]{4}", fullmatch=True),
                                                        max_size=2)))
        for n in numbers
    ]
    diffs = [
        Difference(position=i + 1, factor=draw(text), working=draw(text), broken=draw(text),
                   status=draw(st.sampled_from(["untested", "ruled-out", "culprit"])), apply=draw(text))
        for i in range(draw(st.integers(0, 3)))
    ]
    steps = [
        NextStep(position=i + 1, text=draw(text), detail=draw(text),
                 status=draw(st.sampled_from(["todo", "done", "dropped"])),
                 attempt=draw(st.one_of(st.none(), st.integers(1, 99))))
        for i in range(draw(st.integers(0, 3)))
    ]
    labels = draw(st.one_of(st.just(("Working", "Broken")), st.tuples(text, text)))
    return Investigation(
        id=draw(st.from_regex(r"20\d{6}-[a-z0-9]{1,10}(-[a-z0-9]{1,6})?-[a-z0-9]{4}", fullmatch=True)),
        title=draw(text), status=draw(st.sampled_from(["open", "resolved", "wontfix"])),
        symptom=draw(field_text), environment=draw(field_text),
        related_files=draw(st.lists(text, max_size=3)), tags=draw(st.lists(text, max_size=3)),
        root_cause=draw(field_text), created=draw(stamp), updated=draw(stamp), labels=labels,
        attempts=attempts, differences=diffs, next_steps=steps,
        source=draw(st.one_of(st.just(""), text)),
    )


# 120 per run keeps the suite fast; the .hypothesis database replays any failure found in an earlier run
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(investigations())
def test_parse_inverts_render(inv):
    md = markdown.render(inv)
    back = markdown.parse(md)
    assert back == inv
    assert markdown.render(back) == md  # byte-identical re-render


def test_plain_fields_stay_plain():
    inv = Investigation(id="20261121-x-abcd", title="NCCL hang", symptom="all_reduce never returns",
                        attempts=[Attempt(1, "Set NCCL_P2P_DISABLE=1", hypothesis="P2P is broken",
                                          did="NCCL_P2P_DISABLE=1 torchrun ...", result="Still hangs",
                                          outcome="failed")],
                        differences=[Difference(1, "Driver", "535", "550")],
                        next_steps=[NextStep(1, "Try NCCL_DEBUG=INFO", "see which rank stalls")])
    md = markdown.render(inv)
    assert "**What you did:** NCCL_P2P_DISABLE=1 torchrun ..." in md
    assert "| Driver | 535 | 550 | untested |" in md
    assert "1. [ ] **Try NCCL_DEBUG=INFO** — see which rank stalls" in md
    assert "dbglog-data" not in md and "```dbglog" not in md


def test_structure_in_field_is_fenced_not_parsed():
    inv = Investigation(id="20261121-x-abcd", title="t",
                        attempts=[Attempt(1, "a", hypothesis="## Attempts\n**Result:** no", outcome="failed"),
                                  Attempt(2, "b", outcome="worked")])
    md = markdown.render(inv)
    assert "```dbglog\n## Attempts\n**Result:** no\n```" in md
    back = markdown.parse(md)
    assert [a.number for a in back.attempts] == [1, 2]
    assert back.attempts[0].result == ""


def test_hand_edited_table_beats_stale_data_comment():
    inv = Investigation(id="20261121-x-abcd", title="t",
                        differences=[Difference(1, "f", " padded", "b")])
    md = markdown.render(inv)
    assert "dbglog-data" in md
    edited = md.replace("| f | padded | b | untested |", "| f | padded | b | culprit |")
    assert edited != md
    back = markdown.parse(edited)
    assert back.differences[0].status == "culprit"


def test_unknown_sections_are_kept_verbatim():
    inv = Investigation(id="20261121-x-abcd", title="t", attempts=[Attempt(1, "a", outcome="failed")],
                        sections=[Section("## Notes", "free text\n\n### sub\n- list"), Section("## More", "")])
    md = markdown.render(inv)
    back = markdown.parse(md)
    assert back == inv


def test_front_matter_values_that_yaml_would_retype_or_fold():
    for t in ("a\n", "a\x85", "a\u2028", "yes", "1.0", "1:30", "a: b", "- x", "[x]", "null", "é"):
        inv = Investigation(id="20261121-x-abcd", title="T", tags=["a" + t, t], created=t)
        assert markdown.parse(markdown.render(inv)) == inv, t


def _with_outcome_line(text: str, replacement: str) -> str:
    assert "**Outcome:** failed" in text
    return text.replace("**Outcome:** failed", replacement, 1)


def test_a_hand_edited_outcome_is_one_of_the_outcomes_or_refused_where_it_stands():
    """A hand edit's outcome label that states one ('FAILED ❌', '**worked**', 'Fixed') is read as it;
    a second line under it, or a word that names no outcome, is refused at its line -- before, it
    was stored as the outcome 'failed\\nhand edit' and printed across two lines by `tried`."""
    import pytest

    inv = Investigation(id="20260101-x-abcd", title="X", attempts=[Attempt(1, "Disable P2P", outcome="failed",
                                                                        result="still hangs")])
    text = markdown.render(inv)
    line = text.splitlines().index("**Outcome:** failed") + 1
    for label, expect in [("FAILED ❌", "failed"), ("**worked**", "worked"), ("Fixed", "worked"),
                          ("Partial", "partial"), ("", "untested")]:
        got = markdown.parse(_with_outcome_line(text, f"**Outcome:** {label}".rstrip()), "f.md")
        assert got.attempts[0].outcome == expect, label
    with pytest.raises(markdown.ParseError) as e:
        markdown.parse(_with_outcome_line(text, "**Outcome:** failed\nhand edit"), "f.md")
    assert str(e.value).startswith(f"f.md:{line + 1}: attempt 1: the outcome has a line under it ('hand edit')")
    for bad in ("bogus", "maybe it helped a bit, not sure", "\x1b[31mfailed\x1b[0m!!"):
        with pytest.raises(markdown.ParseError) as e:
            markdown.parse(_with_outcome_line(text, f"**Outcome:** {bad}"), "f.md")
        assert str(e.value).startswith(f"f.md:{line}: attempt 1: outcome ") and "\x1b" not in str(e.value)


@pytest.mark.parametrize("comment", [
    "[1]", "null", '"text"', "[" * 50_000,  # not an object, or nested deeper than the JSON decoder recurses
    '{"sha": "%s", "data": {"labels": 5}}', '{"sha": "%s", "data": [{"no such field": 1}]}',  # ours by digest, not in shape
])
def test_a_data_comment_that_is_not_ours_in_shape_gives_way_to_the_visible_lines(comment):
    import re

    inv = Investigation(id="20260101-x", title="t", differences=[Difference("a", "1", "2")], labels=("ok", "bad"),
                        next_steps=[NextStep(text="s", position=1)])
    text = markdown.render(inv)
    for digest in re.findall(r'"sha": "(\w+)"', text):
        hand = text.replace(re.search(rf'<!-- dbglog-data \{{"sha": "{digest}".* -->', text).group(0),
                            "<!-- dbglog-data " + (comment % digest if "%s" in comment else comment) + " -->")
        got = markdown.parse(hand, "x.md")
        assert got.labels == ("ok", "bad") and len(got.differences) == 1 and [s.text for s in got.next_steps] == ["s"]


def test_ticking_one_box_of_a_list_kept_in_the_data_comment_leaves_the_other_steps_as_stored():
    """A list shown lossily (bold in a step's text, a link-like detail) is kept exactly in the data comment; a hand
    edit of one step's line changes that step alone, the others keep their stored text, detail and link."""
    steps = [NextStep(1, "Rebuild with **-O0**"), NextStep(2, "Try NCCL_ALGO=Tree"),
             NextStep(3, "Check dmesg", "as in (→ Attempt 1)"), NextStep(4, "Bisect", status="done", attempt=1)]
    inv = Investigation(id="20260101-x", title="t", attempts=[Attempt(1, "a1", outcome="failed")], next_steps=steps)
    text = markdown.render(inv)
    assert "dbglog-data" in text
    got = markdown.parse(text.replace("2. [ ] **Try", "2. [x] **Try").replace("1. [ ] **Rebuild", "1. [x] **Rebuild")
                         .replace("4. [x] **Bisect**", "4. [x] **Bisect again**"), "x.md")
    assert [(s.position, s.text, s.detail, s.status, s.attempt) for s in got.next_steps] == [
        (1, "Rebuild with **-O0**", "", "done", None), (2, "Try NCCL_ALGO=Tree", "", "done", None),
        (3, "Check dmesg", "as in (→ Attempt 1)", "todo", None), (4, "Bisect again", "", "done", 1)]
    # a step removed by hand: the others keep their stored text under their new numbers
    got = markdown.parse(text.replace("1. [ ] **Rebuild with -O0**\n", ""), "x.md")
    assert [(s.position, s.text, s.detail) for s in got.next_steps] == [
        (1, "Try NCCL_ALGO=Tree", ""), (2, "Check dmesg", "as in (→ Attempt 1)"), (3, "Bisect", "")]


def test_editing_one_row_of_a_table_kept_in_the_data_comment_leaves_the_other_rows_as_stored():
    rows = [Difference(1, "Flags", "-O2  -g", "**-O3**"), Difference(2, "Driver", "535", "550"),
            Difference(3, "Pipe", "a|b", " padded")]
    inv = Investigation(id="20260101-x", title="t", labels=("good  run", "bad"), differences=rows)
    text = markdown.render(inv)
    assert "dbglog-data" in text
    got = markdown.parse(text.replace("| Driver | 535 | 550 | untested |", "| Driver | 535 | 550 | culprit |"), "x.md")
    assert got.labels == ("good  run", "bad")
    assert [(d.position, d.factor, d.working, d.broken, d.status) for d in got.differences] == [
        (1, "Flags", "-O2  -g", "**-O3**", "untested"), (2, "Driver", "535", "550", "culprit"),
        (3, "Pipe", "a|b", " padded", "untested")]


def test_a_detail_that_ends_like_a_link_to_a_huge_attempt_number_reads_back():
    inv = Investigation(id="20260101-x", title="t", next_steps=[NextStep(1, "s", "see (→ Attempt 99999999999)")])
    text = markdown.render(inv)
    assert markdown.parse(text) == inv
    assert markdown.parse(text.replace("1. [ ] **s**", "1. [x] **s**")).next_steps[0].status == "done"
