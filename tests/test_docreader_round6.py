"""Round-6 shapes of real debug docs (tests/corpus/STYLES.md S15), read in-process.

Each case is a small doc in a shape seen in public write-ups; the assertions are on the attempts and
outcomes a reader would write down, so a rule that stops firing fails here by name.
"""

from dbglog.kb.importer import parse_document
from dbglog.kb import outcome


def _attempts(text: str) -> list[tuple[str, str]]:
    parsed, _ = parse_document(text, "doc.md")
    return [(a.title, a.outcome) for p in parsed for a in p.inv.attempts]


JOURNAL = """# Tuning journal

## Entries

### 2026-03-01 — run1 fused optimizer (KEPT)
- **Hypothesis:** the optimizer step is 9% of the step.
- **Change:** `optim: adamw_torch_fused`.
- **Result:** 1,812 -> 1,874 tok/s/GPU.
- **Verdict:** KEEP — small but repeatable.

### 2026-03-02 — run2 bigger buckets
- **Hypothesis:** more overlap of the reduce-scatter.
- **Change:** `reduce_bucket_size: 5e8`.
- **Result:** +0.3%, inside the run-to-run spread.
- **Verdict:** NEUTRAL

### 2026-03-02 — run3 micro-batch 4
- **Change:** `micro_batch_size: 4`.
- **Result:** CUDA out of memory at step 0.
- **Verdict:** Discarded (`git revert 5e1c0d2`).
"""


def test_dated_journal_entries_are_runs_with_verdict_words():
    got = _attempts(JOURNAL)
    assert [o for _t, o in got] == ["worked", "failed", "failed"], got
    assert "run1 fused optimizer" in got[0][0]


FIX_SECTION = """# Blank glyphs in the release build

## What we tried

### Attempt 1 — reinstall the font package
**Result:** same blank glyphs.

## ✅ The Fix That Worked

### Root Cause
The font registry checks a lower-case name.

### The Fix
Register the font under its lower-case name before the first render.
"""


def test_fix_that_worked_section_is_one_worked_attempt():
    got = _attempts(FIX_SECTION)
    assert ("The Fix That Worked", "worked") in got, got
    assert got[0][1] == "failed"


WHY_LABELS = """# Screenshots of the admin pages

## What we tried

### Restart the dev server first
**Why it worked:** a server running for 15 hours does not reload middleware changes.

### Clear the session cookie
**Why it failed:** the middleware re-issues it from the server-side session.
"""


def test_why_it_worked_label_is_the_verdict():
    assert [o for _t, o in _attempts(WHY_LABELS)] == ["worked", "failed"]


def test_verdict_words_and_conditions():
    assert outcome.verdict_word("✅ **untested**") == "untested"
    assert outcome.classify("Works WITHOUT header. Fails WITH header.") == "failed"
    assert outcome.classify("works without find_unused_parameters; step time +7%") == "worked"
    assert outcome.classify("Fixed — not the OOM cause") == "failed"
    assert outcome.classify("❌ 0/5 improved") == "failed"
    assert outcome.classify("hangs at 0%") == "failed"


PASS_TABLE = """# Which layer gates the refusal

## Single-layer ablation

| Layer | refusal | Δ vs baseline | passes (Δ ≥ 0.30) |
|---|---:|---:|---|
| L3 | 1.00 | +0.00 | ❌ no effect |
| L7 | 0.62 | +0.38 | ✅ partial |
| L13 | 0.00 | +1.00 | ✅ full |
"""


def test_pass_column_makes_a_table_of_runs():
    assert [o for _t, o in _attempts(PASS_TABLE)] == ["failed", "partial", "worked"]


NEXT_IN_ATTEMPT = """# Share links keep their tracking blob

## Phase 6: strip the query string

**Test 1:** copy link — 568 chars before, 63 after. ✅ PASS

**Next Steps**:
1. Complete the test matrix (mail, chat apps)
2. Gate the debug logs behind the build type
"""


def test_next_steps_list_inside_an_attempt_is_next_steps():
    parsed, _ = parse_document(NEXT_IN_ATTEMPT, "doc.md")
    steps = [s.text for p in parsed for s in p.inv.next_steps]
    assert any("Complete the test matrix" in s for s in steps), steps
    assert any("Gate the debug logs" in s for s in steps), steps
