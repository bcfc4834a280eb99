"""The record-level 3-way merge behind dbglog's git merge driver."""

from hypothesis import given, settings
from hypothesis import strategies as st

from dbglog.core import markdown
from dbglog.kb.merge import merge, merge_texts
from dbglog.core.model import Attempt, Difference, Investigation, NextStep

words = st.text("abcdefgh ", min_size=1, max_size=12).map(str.strip).filter(bool)


def base_inv(n_attempts: int) -> Investigation:
    return Investigation(
        id="20261121-race-abcd", title="race", created="2026-11-21T09:00:00Z", updated="2026-11-21T09:00:00Z",
        attempts=[Attempt(i, f"a{i}", did=f"did {i}", result="Hangs", outcome="failed",
                          created="2026-11-21T09:00:00Z") for i in range(1, n_attempts + 1)],
        differences=[Difference(1, "GPUs", "4", "8")], next_steps=[NextStep(1, "try tree")])


@st.composite
def branch(draw, base: Investigation, side: str):
    import copy

    inv = copy.deepcopy(base)
    for k in range(draw(st.integers(0, 3))):  # appended attempts
        n = max([a.number for a in inv.attempts] or [0]) + 1
        inv.attempts.append(Attempt(n, f"{side}{k} {draw(words)}", did=draw(words), created="2026-11-21T09:01:00Z"))
    if base.attempts and draw(st.booleans()):  # edits a field only this side touches
        field = "result" if side == "ours" else "conclusion"
        setattr(inv.attempts[0], field, f"{side}: {draw(words)}")
    if draw(st.booleans()):
        inv.next_steps.append(NextStep(len(inv.next_steps) + 1, f"{side} step {draw(words)}"))
    if draw(st.booleans()):
        inv.tags.append(f"{side}-tag")
    return inv


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_independent_work_on_two_branches_merges_without_loss(data):
    base = base_inv(data.draw(st.integers(0, 3)))
    ours = data.draw(branch(base, "ours"))
    theirs = data.draw(branch(base, "theirs"))
    r = merge(base, ours, theirs)
    assert r.conflicts == []
    got = {(a.title, a.did) for a in r.inv.attempts}
    assert {(a.title, a.did) for a in ours.attempts + theirs.attempts} == got  # nothing lost
    numbers = [a.number for a in r.inv.attempts]
    assert numbers == sorted(set(numbers))  # unique, ordered
    assert [a.number for a in r.inv.attempts if (a.title, a.did) in {(x.title, x.did) for x in ours.attempts}] \
        == [a.number for a in ours.attempts]  # ours keeps its numbers
    if base.attempts:
        first = r.inv.attempts[0]
        assert first.result == ours.attempts[0].result and first.conclusion == theirs.attempts[0].conclusion
    assert {s.text for s in r.inv.next_steps} == {s.text for s in ours.next_steps + theirs.next_steps}
    assert set(r.inv.tags) == set(ours.tags) | set(theirs.tags)
    # The merged investigation is storable: it round-trips through the canonical file.
    assert markdown.parse(markdown.render(r.inv)) == r.inv


def test_same_value_changed_differently_is_a_conflict():
    base = base_inv(1)
    ours, theirs = base_inv(1), base_inv(1)
    ours.attempts[0].result = "Hangs at step 448812"
    theirs.attempts[0].result = "Hangs only on node 3"
    assert merge(base, ours, theirs).conflicts == ["attempt 1: result"]


def test_renumbered_attempts_carry_their_step_links():
    base = base_inv(1)
    ours, theirs = base_inv(1), base_inv(1)
    ours.attempts.append(Attempt(2, "ours 2", did="x", created="2026-11-21T09:02:00Z"))
    theirs.attempts += [Attempt(2, "theirs 2", did="y"), Attempt(3, "theirs 3", did="z")]
    theirs.next_steps.append(NextStep(2, "from theirs", status="done", attempt=3))
    r = merge_texts(markdown.render(base), markdown.render(ours), markdown.render(theirs))
    assert [(a.number, a.title) for a in r.inv.attempts] == [(1, "a1"), (2, "ours 2"), (3, "theirs 2"),
                                                             (4, "theirs 3")]
    assert r.renumbered == {2: 3, 3: 4}
    assert next(s for s in r.inv.next_steps if s.text == "from theirs").attempt == 4


def test_a_run_follows_its_attempt_when_a_merge_renumbers_it(tmp_path):
    """An adversarial probe: the merge driver renumbered an attempt that held a run (1 -> 2, the other clone's
    attempt taking 1); the file said `#2` but the database kept the run on attempt 1, so `runs show` and
    `failures show` tied it to the other person's attempt. The file's **Runs:** field now moves it."""
    import json
    import re
    import sys

    from conftest import run_cli_inproc

    ws = tmp_path / "w"
    ws.mkdir()
    assert run_cli_inproc(ws, "new", "shared bug", "--no-env").returncode == 0
    r = run_cli_inproc(ws, "run", "-q", "--attempt", "C run attempt", "--", sys.executable, "-c", "raise SystemExit(1)")
    assert r.returncode in (0, 1), r.stderr
    run_id = json.loads(run_cli_inproc(ws, "runs", "list", "--json").stdout)[0]["id"]
    log = next((ws / "logs").glob("*.md"))
    text = log.read_text()
    text = re.sub(r"^### Attempt 1: C run attempt", "### Attempt 1: D plain\n**Outcome:** untested\n\n"
                  "### Attempt 2: C run attempt", text, flags=re.M)  # what the driver wrote: the other's first
    log.write_text(text)
    assert run_cli_inproc(ws, "list").returncode == 0  # (the edit is taken in)
    shown = json.loads(run_cli_inproc(ws, "runs", "show", run_id, "--json").stdout)
    assert shown["attempt"] == 2
    listed = run_cli_inproc(ws, "attempt", "list").stdout
    assert "1. [untested] D plain" in listed and "C run attempt" in listed


def test_an_attempt_deleted_on_one_branch_is_not_the_new_attempt_that_took_its_number():
    """Theirs deleted attempt 2 and recorded a new one, numbered 2 again; ours edited the old attempt 2. Before, the
    edit was merged into the new attempt without a word."""
    base = base_inv(2)
    theirs = base_inv(1)
    theirs.attempts.append(Attempt(2, "new", did="other", outcome="worked", created="2026-11-21T10:00:00Z"))
    ours = base_inv(2)
    ours.attempts[1].conclusion = "about the old attempt 2"
    r = merge_texts(markdown.render(base), markdown.render(ours), markdown.render(theirs))
    assert r.conflicts == ["attempt 2 edited here, deleted there"]
    # with the old attempt left as it was, the deletion and the new attempt merge cleanly
    r = merge(base, base_inv(2), theirs)
    assert r.conflicts == [] and [(a.number, a.title) for a in r.inv.attempts] == [(1, "a1"), (2, "new")]


def test_a_file_added_on_both_sides_holds_one_attempt_where_number_and_stamp_agree():
    """Unrelated histories that both added the same investigation: its attempt 1, edited differently on each side,
    is one attempt with a conflict, not two attempts with one stamp."""
    ours, theirs = base_inv(1), base_inv(1)
    ours.attempts[0].conclusion = "ours"
    theirs.attempts[0].conclusion = "theirs"
    r = merge_texts("", markdown.render(ours), markdown.render(theirs))
    assert r.conflicts == ["attempt 1: conclusion"]
    theirs.attempts[0].conclusion = "ours"
    r = merge_texts("", markdown.render(ours), markdown.render(theirs))
    assert r.conflicts == [] and len(r.inv.attempts) == 1
