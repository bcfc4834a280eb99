"""Attempts told as sentences in a story (blog posts, forum threads, notes): docreader.narrative and
the reader's use of it. Shapes taken from real write-ups (round 7, /tmp/realdocs6), text my own."""

from hypothesis import given, settings
from hypothesis import strategies as st

from dbglog.docreader import narrative, read_document
from dbglog.kb import outcome


def _stories(*paras):
    return narrative.read([narrative.Unit(p, [k]) if p is not None else narrative.Unit(None, [])
                           for k, p in enumerate(paras)])


def _attempts(text):
    parsed, _ = read_document(text, "story.md")
    return [a for p in parsed for a in p.inv.attempts]


def test_sequence_of_actions_each_with_its_verdict():
    got = _stories("First, I tuned the NCCL buffer size. This made no difference. I then pinned the driver to "
                   "535.104 and the hang went away.")
    assert [(s.verdict, "NCCL" in s.title or "pinned" in s.title) for s in got] == [("failed", True), ("worked", True)]


def test_verdict_of_the_previous_action_is_cut_at_the_next_one():
    got = _stories("I reverted the allocator flag. That didn't help either, so I rebuilt the image with CUDA 12.4. "
                   "That kind of helped - the first epoch now finishes.")
    assert [s.verdict for s in got] == ["failed", "partial"]
    assert got[1].title.startswith("I rebuilt the image")


def test_verdict_in_the_paragraph_after_a_code_block_and_the_fix_was_to():
    got = _stories("I first tried setting the visible devices in the launcher:", None,
                   "Even after this, rank 3 was still hanging in the first all-reduce. The fix was to disable "
                   "the IOMMU in the BIOS.")
    assert [s.verdict for s in got] == ["failed", "worked"]
    assert "disable the IOMMU" in got[1].title


def test_bare_log_style_action_and_reverted_attempt():
    got = _stories("**Allocator — first attempt reverted.** I first tried setting `expandable_segments` in the "
                   "launcher; the run started but still fragmented. That attempt was reverted.",
                   "**Pin — landed.** Bumped torch to 2.4.1 in the lock file. The nightly job is green again.")
    assert [s.verdict for s in got] == ["failed", "worked"]


def test_result_label_beats_an_aside():
    got = _stories("removed `--eval-micro-batch-size` (falls back to the training one)",
                   "Result: 3 evals per hour for 20 h, no hang")
    assert [s.verdict for s in got] == ["worked"]


def test_gerund_subject_needs_an_effect_not_a_symptom():
    assert _stories("Serving the 14B model on two cards hangs in the first all-gather.") == []
    got = _stories("Clearing the compile cache didn't help. Running with --disable-custom-all-reduce fixed the hang.")
    assert [s.verdict for s in got] == ["failed", "worked"]


def test_precision_thoughts_plans_and_hypotheticals_are_no_attempts():
    assert _stories("I assumed it was the driver. I noticed the GPU clock dropping, which was odd.") == []
    assert _stories("If I set NCCL_P2P_DISABLE=1 it would probably work. I will try it tomorrow.") == []
    assert _stories("I went to bed. I opened lldb and did a register read.") == []


def test_reader_keeps_the_story_as_text_and_reads_its_attempts():
    text = ("# Trainer hangs after the driver update\n\n"
            "After the update every run hung at step 0. I reverted to the old driver. That didn't help either.\n\n"
            "> I reinstalled CUDA and it fixed it for me. (someone else's reply, quoted)\n\n"
            "Shockingly, the GPU clock was fine.\n")
    atts = _attempts(text)
    # the quoted reply is someone else's, never an attempt of the author's
    assert [(a.outcome, a.title) for a in atts] == [("failed", "I reverted to the old driver.")]


def test_outcome_words_of_stories():
    assert outcome.classify("That attempt was reverted.") == "failed"
    assert outcome.classify("they work even less well") == "failed"
    assert outcome.classify("the patched crate still works in practice.") == "worked"
    assert outcome.classify("I uninstalled the settings manager in case that was the problem - no dice.") == "failed"
    assert outcome.classify("There was ~10% improvement in requests per second.") == "partial"
    assert outcome.classify("Almost a 100% increase in throughput.") == "worked"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(alphabet=st.sampled_from(list("I we tried set it This made no "
                                                                           "difference. fixed then ,`-")),
                                             max_size=80)), max_size=6))
def test_read_never_fails_and_stays_in_its_units(paras):
    units = [narrative.Unit(p, [k]) if p is not None else narrative.Unit(None, []) for k, p in enumerate(paras)]
    for s in narrative.read(units):
        assert s.verdict in outcome.OUTCOMES
        assert set(s.lines) <= {i for u in units for i in u.lines}


def test_rejection_headings_take_the_verdict_their_story_tells():
    text = ("# Store review keeps failing\n\n## Rejection 1: blank screen on launch\n\n"
            "I assumed it was a stale bundle. I added a cache-busting header to the API. Resubmitted. Wrong.\n\n"
            "## Rejection 2: custom domain\n\nSo I bound a custom domain in front of the API. Resubmitted.\n\n"
            "Same rejection. Same screen.\n")
    atts = _attempts(text)
    assert [(a.title.split(":")[0], a.outcome) for a in atts] == [("Rejection 1", "failed"), ("Rejection 2", "failed")]


def test_what_we_tried_told_as_a_story_is_one_attempt_per_action():
    text = ("# Recompiles on every request\n\n## What we tried\n\n"
            "The first thing I tried was `dynamic=True` on the compile call. It did not help: p50 got worse.\n\n"
            "Next I pinned the batch to 8 with `--max-batch 8`. That fixed the recompiles for good.\n")
    atts = _attempts(text)
    assert [a.outcome for a in atts] == ["failed", "worked"]
    assert "dynamic=True" in atts[0].did and "--max-batch 8" in atts[1].did


def test_timed_log_entries_and_a_later_entry_that_rules_one_out():
    text = ("# Eval node resume state\n\n## Infra\nShared pool, frequent startup hangs.\n\n"
            "## CRITICAL FIX (18:52): watchdog `HANG_SECS` is 1500s, not 600s.\n"
            "The healthy startup has a silent 11-minute capture phase; 600s was killing it.\n\n"
            "## KEY FIX (21:22): DIRTY-HANDOFF settle-wait before launching.\n"
            "The racer now waits until the GPU is free before it starts the eval.\n\n"
            "## UPDATE 22:55: cluster-wide fabric trouble on new starts.\n"
            "The clean node froze at the same barrier. So NOT node-specific, NOT dirty-handoff.\n\n"
            "## UPDATE 23:54: --disable-custom-all-reduce did NOT fix the hang.\n"
            "Same barrier again.\n")
    got = [(a.title.split()[0], a.outcome) for a in _attempts(text)]
    assert got == [("watchdog", "worked"), ("DIRTY-HANDOFF", "failed")]
