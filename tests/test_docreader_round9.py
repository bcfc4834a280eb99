"""Round 9 (blind set /tmp/realdocs8: agent-written reports, issue threads, blog stories): shapes
that were missed at first sight, text my own."""

from dbglog.docreader import narrative, read_document
from dbglog.kb import outcome


def _stories(*paras):
    units = []
    for k, p in enumerate(paras):
        if isinstance(p, tuple):  # ("code", text): a code block between paragraphs
            units.append(narrative.Unit(None, [k], code=p[1]))
        else:
            units.append(narrative.Unit(p, [k]))
    return narrative.read(units)


def _read(doc):
    parsed, _ = read_document(doc, "doc.md")
    assert len(parsed) == 1
    return parsed[0].inv


def test_numbered_attempt_log_heading_is_a_table_of_attempts_not_one():
    inv = _read("# Loss spikes at step 4k\n\n## 1. Context\n\nA100 x8, bf16.\n\n"
                "## 2. Attempt Log (after the first refutation)\n\n"
                "| # | Attempt | Result | Verdict |\n|---|---|---|---|\n"
                "| 1 | warmup 500 → 2000 | Same spike at 4k | FAILED |\n"
                "| 2 | clip grad norm 0.5 | Spike later, at 6k | FAILED |\n"
                "| 3 | **bisect the data loader** | Bad shard found | SUCCESS |\n")
    assert [(a.title.split()[0], a.outcome) for a in inv.attempts] == [
        ("warmup", "failed"), ("clip", "failed"), ("bisect", "worked")]


def test_next_steps_as_sub_headings_and_bold_priority_lines_are_steps():
    inv = _read("# Trainer hangs at init\n\n## Attempts that did not work\n\n"
                "| # | Attempt | Result |\n|---|---|---|\n| 1 | Clean /tmp/ray | Same hang |\n\n"
                "## Recommended fixes (cheapest first)\n\n### 1. Build the manager in a thread\n\n"
                "It avoids the nested event loop.\n\n```python\npool.submit(build)\n```\n\n"
                "### 2. Pin Ray to 2.44\n\nThe reference example uses it.\n\n"
                "## Next Steps\n\n### Verification Plan\n\n**Priority 1: Check the attenuation constant**\n"
                "```cpp\n// compare with the spec\n```\n\n**Priority 2: Re-read the step limiter**\n")
    steps = [s.text for s in inv.next_steps]
    assert steps[:2] == ["Build the manager in a thread", "Pin Ray to 2.44"]
    assert any("Check the attenuation constant" in s for s in steps)
    assert any("Re-read the step limiter" in s for s in steps)
    assert [a.outcome for a in inv.attempts] == ["failed"]  # the priorities are no attempts


def test_future_prevention_and_verification_steps_lists_are_next_steps():
    inv = _read("# Build breaks on macOS\n\n## Attempts\n\n### Attempt 1: pin the compiler\n**Result:** ❌ same error\n\n"
                "## Future Prevention\n\n1. Add zsh to the CI matrix\n2. Test the background-job path\n\n"
                "## Verification Steps\n\n1. Check the job exits 0\n2. Watch the gloss count\n")
    assert [s.text for s in inv.next_steps] == ["Add zsh to the CI matrix", "Test the background-job path",
                                                "Check the job exits 0", "Watch the gloss count"]


def test_thread_sentences_workaround_inline_enumeration_and_after_gerund():
    got = _stories("Setting NCCL_P2P_DISABLE=1 did workaround but the bandwidth dropped to a crawl.")
    assert [s.verdict for s in got] == ["partial"]
    got = _stories("I 1) turned off VT-d 2) moved the cards to other slots, which did the trick.")
    assert [s.verdict for s in got] == ["worked"] and "VT-d" in got[0].did
    got = _stories("After downgrading the fabric stack to 2.14, I re-ran the bandwidth test and it worked well.")
    assert [s.verdict for s in got] == ["worked"] and "downgrading" in got[0].did
    assert _stories("After reading the docs, I think it should work.") == []


def test_remedy_labels_and_the_solution_was_easy():
    got = _stories("Workaround:", ("code", "NCCL_P2P_DISABLE=1 python train.py"),
                   "Actual fix: Update the driver to 570. The hang is gone there.")
    assert [(s.verdict, s.kind) for s in got] == [("partial", "workaround"), ("worked", "fix")]
    assert "NCCL_P2P_DISABLE" in got[0].did and "Update the driver" in got[1].title and got[0].result == ""
    got = _stories("Hence, the solution was easy: make the kernel flag permanent.")
    assert [s.verdict for s in got] == ["worked"]
    got = _stories("I went back to the old config. But booting with the flag fixed the resume problem.")
    assert [s.verdict for s in got] == ["worked"] and got[0].title.startswith("But booting")


def test_feelings_are_no_actions():
    assert _stories("I appreciated how quickly I found it, but the polish didn't reassure me.") == []


def test_final_solution_section_with_its_code_after_attempts_is_the_fix_that_worked():
    inv = _read("# Glosses missing under zsh\n\n### Iteration 1: swap find flags\n**Result:** ❌ Still failing\n\n"
                "### Solution (Final)\nTurn on word splitting around the loop:\n\n```sh\nsetopt SH_WORD_SPLIT\n```\n")
    assert [(a.title, a.outcome) for a in inv.attempts][-1] == ("Solution (Final)", "worked")
    assert "SH_WORD_SPLIT" in inv.attempts[-1].did
    plan = _read("# Glosses missing\n\n### Iteration 1: swap find flags\n**Result:** ❌ Still failing\n\n"
                 "### Solution\nWe could turn on word splitting:\n\n```sh\nsetopt SH_WORD_SPLIT\n```\n")
    assert len(plan.attempts) == 1  # a conditional is no fix made


def test_solution_that_worked_takes_its_first_change_and_why_it_works_is_no_attempt():
    inv = _read("# OOM in backprop\n\n## What We Tried (and Failed)\n\n### 1. FP16\n**Result**: Still OOM\n\n"
                "## The Solution That Worked ✅\n\n### Per-block checkpointing\n\nCheckpoint every trunk block.\n\n"
                "```python\nfor b in blocks: b.forward = ckpt(b.forward)\n```\n\n### Why This Works\n\n"
                "Checkpointing the whole trunk at once doesn't help because its inputs are huge.\n")
    assert [(a.title, a.outcome) for a in inv.attempts] == [("FP16", "failed"), ("Per-block checkpointing", "worked")]


def test_outcome_words_of_this_round():
    assert outcome.classify("No recovery") == "failed"
    assert outcome.classify("Hook scripts read the file, but the worker ignores it.") == "failed"
    assert outcome.verdict_word("❌ Revert commit (pas encore testé, à faire maintenant)") == "untested"
    assert outcome.verdict_word("🔄 Solution 8: install driver 550 (NEXT STEP)") == "untested"
    assert outcome.verdict_word("✅ Done (not yet merged)") == "worked"


def test_fixes_applied_with_their_change_lists_take_the_verdict_of_the_results_section_after():
    inv = _read("# Dose peaks at the surface\n\n## 7. Fix Results\n\n### Fixes Applied\n\n"
                "**H1: Energy Binning** - `k2.cu:135`\n```cpp\nfloat E = mid(bin);\n```\n\n"
                "**H2: Step Size Limits** - `step.hpp:55`\n- Removed the cell limit\n- Raised the coarse step to 5mm\n\n"
                "### Progress Assessment\n\n**Improvements:**\n- Energy deposited nearly doubled\n\n"
                "**Remaining Issues:**\n- Only 22% of the expected energy\n")
    got = [(a.title, a.outcome) for a in inv.attempts]
    assert got == [("H1: Energy Binning", "partial"), ("H2: Step Size Limits", "partial")]
    assert "Removed the cell limit" in inv.attempts[1].did and "float E" in inv.attempts[0].did


def test_decided_to_and_followed_by_gerund_are_actions_judged_by_what_follows():
    got = _stories("One day I decided to install the open kernel driver. The result was that the video was "
                   "completely absent at boot.")
    assert [s.verdict for s in got] == ["failed"] and "open kernel driver" in got[0].title
    got = _stories("I followed the guide by installing driver 515 and I basically got back the broken resume.")
    assert [s.verdict for s in got] == ["failed"] and "installing driver 515" in got[0].title
    assert _stories("I decided to look into the logs first.") == []


def test_implementation_chunks_table_rows_are_steps_by_their_words():
    inv = _read("# Speech cannot be interrupted\n\n## What We Tried\n\n| Attempt | Result |\n|---|---|\n"
                "| Clear the queue | ❌ new packets arrive |\n\n## Implementation Chunks\n\n"
                "| Chunk | Description | Risk |\n|---|---|---|\n| 3.1 | Add ALSA includes and the PCM handle | Low |\n"
                "| 3.2 | Drop the buffer on interrupt | Medium |\n")
    assert [s.text for s in inv.next_steps] == ["Add ALSA includes and the PCM handle", "Drop the buffer on interrupt"]
    assert [a.outcome for a in inv.attempts] == ["failed"]


def test_a_screen_no_longer_black_is_no_failure():
    assert outcome.classify("The screen is no longer black after resume.") != "failed"
    assert outcome.classify("The screen stayed black after the driver install.") == "failed"


def test_a_status_section_keeps_the_sections_under_it():
    doc = ("## Quantization\n\n### Current Status\n❌ **FAILED**: the community 8-bit model does not load\n\n"
           "#### Attempts Made\n\n1. **Test 1**: explicit quant config\n   - Result: ❌ Same error at 11.9GB\n\n"
           "2. **Test 2**: auto-detected quantization\n   - Result: ❌ Same error at 11.9GB\n")
    parsed, _ = read_document(doc, "doc.md")
    inv = parsed[0].inv
    assert [a.outcome for a in inv.attempts] == ["failed", "failed"]
    from dbglog import docreader
    from dbglog.kb import mirror
    kept = docreader.kept_text(mirror.render(docreader._probe(inv)))
    assert all(docreader.norm(ln) in kept for ln in doc.splitlines() if docreader.counts(ln))


def test_attempts_that_did_not_work_holds_over_a_step_that_worked_once_and_cleanup_is_no_attempt():
    inv = _read("# LED off after login\n\n## Attempts that did NOT work\n\n### Attempt 1 — boot-time service\n"
                "Created a unit that writes the LED at boot.\n- Worked — lit at the greeter.\n"
                "- **Turned off again once the desktop loaded.**\n\n### Attempt 2 — sudoers one-liner\n"
                "- Worked once, right after setup.\n- **Failed again after reboot.**\n\n"
                "## Fix that worked\nPointed sudoers at a script file.\n\n```\nuser ALL=(root) NOPASSWD: /usr/local/bin/led.sh\n```\n\n"
                "## Cleanup performed\n- Removed the boot-time unit (wrong trigger point)\n- Removed the udev rule\n")
    assert [a.outcome for a in inv.attempts] == ["failed", "failed", "worked"]


def test_fix_attempts_inside_an_issue_section_and_a_ticked_checklist_group():
    inv = _read("# GAN run OOMs\n\n## Troubleshooting Log\n\n### Issue 2: OOM at batch size 2\n"
                "**Error**: `RESOURCE_EXHAUSTED: OOM when allocating tensor`\n\n**Root Cause**: \n- 512 LSTM units\n"
                "- Recognizer already loaded\n\n**Fix Attempt 1**: Reduced batch_size from 2 to 1\n**Result**: Still OOM\n\n"
                "**Fix Attempt 2**: Reduced lstm_units from 512 to 256\n**Result**: ✅ SUCCESS\n")
    assert [(a.title, a.outcome) for a in inv.attempts] == [("Fix Attempt 1", "failed"), ("Fix Attempt 2", "worked")]
    inv = _read("# 7B OOM\n\n## All Optimizations Attempted\n\n### 1. ✅ Memory Optimizations\n"
                "- [x] Gradient checkpointing enabled\n- [x] CPU offload enabled\n\n### 2. ✅ Code Fixes\n"
                "- [x] Removed quantization\n- [x] Used the adamw_torch optimizer\n")
    assert [(a.title, a.outcome) for a in inv.attempts] == [
        ("Gradient checkpointing enabled", "inconclusive"), ("CPU offload enabled", "inconclusive"),
        ("Removed quantization", "inconclusive"), ("Used the adamw_torch optimizer", "inconclusive")]


def test_challenges_overcome_worked_options_under_next_steps_are_steps_and_a_separate_bug():
    inv = _read("# Omni model will not load\n\n### Attempts Made\n\n1. **Test 1**: explicit quant config\n"
                "   - Result: ❌ Same error\n\n## Technical Challenges Overcome\n\n### 1. Model Class Discovery\n"
                "**Error**: `ValueError: Unrecognized configuration class`\n**Solution**: Use the MoE class\n\n"
                "## Next Steps\n\n### Immediate Options\n\n**Option 1: Wait for an official quantized release**\n"
                "- Monitor the model hub\n\n**Option 2: Try a smaller variant**\n")
    assert [a.outcome for a in inv.attempts] == ["failed", "worked"]
    steps = [s.text for s in inv.next_steps]
    assert any("Wait for an official quantized release" in s for s in steps)
    assert any("Try a smaller variant" in s for s in steps)
    assert outcome.verdict_word("FIXED — separate bug") == "failed"


def test_a_reboot_done_is_no_failure_and_a_system_back_to_working_is_a_win():
    assert outcome.classify("It still reboots randomly.") == "failed"
    assert outcome.classify("No reboots since the fix.") == "worked"
    assert outcome.classify("The system is not fully functional yet.") != "worked"


def test_checked_optimizations_under_a_status_that_says_the_problem_persists_did_not_fix_it():
    inv = _read("# 7B OOM\n\n**Status**: Persistent OOM despite all optimizations\n\n## All Optimizations Attempted\n\n"
                "### 1. ✅ Memory Optimizations\n- [x] Gradient checkpointing enabled\n- [x] CPU offload enabled\n"
                "- [x] FP16 training\n")
    assert [a.outcome for a in inv.attempts] == ["failed", "failed", "failed"]


def test_why_it_failed_over_a_list_is_the_attempts_conclusion_and_its_verdict():
    inv = _read("# Black sprite backgrounds\n\n## Attempted Solutions\n\n### Attempt 2: Platform-specific blocks\n"
                "**Result:** ✅ Compiles on both SDL versions, but ❌ still shows black\n\n**Why it failed:**\n"
                "- Filling with transparent black becomes solid black in RGB565\n\n### Attempt 3: Keep RGBA8888\n"
                "**Result:** ✅ Works on all platforms\n")
    assert [(a.title, a.outcome) for a in inv.attempts] == [("Platform-specific blocks", "failed"),
                                                            ("Keep RGBA8888", "worked")]
    assert "solid black" in inv.attempts[0].conclusion


def test_ticked_optimizations_above_a_result_share_it():
    inv = _read("# Phi-1.5 OOM\n\n## Memory Constraint Encountered\n\n**GPU**: 16GB laptop\n**Optimizations applied**:\n"
                "- ✅ Gradient checkpointing enabled\n- ✅ Mixed precision (fp16) training\n- ✅ Reduced batch size\n\n"
                "**Result**: Still OOM after 3 batches\n")
    assert [a.outcome for a in inv.attempts] == ["failed", "failed", "failed"]
