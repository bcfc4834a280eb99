"""Round 10 (blind set /tmp/realdocs9: plain-text notes, long agent reports, issue threads, dated
journals): shapes missed at first sight, text my own."""

from dbglog.docreader import read_document


def _read(doc, name="doc.md"):
    parsed, _ = read_document(doc, name)
    assert len(parsed) == 1
    return parsed[0].inv


def test_plain_note_first_line_is_the_title_and_each_soft_broken_try_is_an_attempt():
    inv = _read("Dataloader deadlock on 4 workers\n\n"
                "Tried num_workers=2 -- still hangs after epoch 1.\n"
                "Tried persistent_workers=False -- same.\n"
                "Then switched the start method to spawn: works now.\n", "notes.txt")
    assert inv.title == "Dataloader deadlock on 4 workers"
    assert [a.outcome for a in inv.attempts] == ["failed", "failed", "worked"]


def test_a_wrapped_sentence_stays_one_paragraph():
    inv = _read("Checkpoint load is slow\n\nTried mmap=True on the loader but it\n"
                "tried to map the whole file at once, no faster.\n", "notes.txt")
    assert len(inv.attempts) <= 1


def test_a_sentence_as_first_line_is_not_a_title():
    inv = _read("I tried three things today.\n\nTried X -- no change.\n", "my-notes.txt")
    assert inv.title == "my notes"


def test_plain_text_banner_title_and_proposed_solutions_are_steps_not_attempts():
    doc = ("=" * 40 + "\nKERNEL CACHE MISS INVESTIGATION\n" + "=" * 40 + "\n\n"
           "ROOT CAUSE:\n  The cache key ignores the arch.\n\n"
           + "=" * 40 + "\nPROPOSED SOLUTIONS (Ranked)\n" + "=" * 40 + "\n\n"
           "SOLUTION 1: Key the cache by arch\n" + "━" * 30 + "\nImpact: no stale kernels\n\n"
           "  # shell comment, not a heading\n  $ make test\n\n"
           "SOLUTION 2: Disable the shared cache\n" + "━" * 30 + "\nImpact: slower cold start\n")
    inv = _read(doc, "summary.txt")
    assert inv.title == "KERNEL CACHE MISS INVESTIGATION"
    assert inv.attempts == []
    assert [s.text for s in inv.next_steps] == ["Key the cache by arch", "Disable the shared cache"]


def test_a_change_made_in_hope_of_an_effect_is_an_untested_attempt():
    inv = _read("Driver notes\n============\n\nMarch 3, 2024\n-------------\n\n"
                "Updated the CUDA driver (`5.5.28` to `5.5.47`) in hope of avoiding the kernel panics.\n", "n.rst")
    assert [a.outcome for a in inv.attempts] == ["untested"]


def test_status_implemented_says_the_change_is_in_not_that_it_helped():
    inv = _read("# NaN on ROCm\n\n## Solutions Implemented\n\n### Solution 1: Clamp logits\n\n"
                "**Status**: ✅ Implemented in `model.py`\n\nNaN/Inf checks added before the softmax.\n\n"
                "### Solution 2: Lower the loss scale\n\n**Status**: ✅ Implemented in `train.py`\n\n"
                "The scaler starts at 2^10 to avoid overflow.\n")
    assert [a.outcome for a in inv.attempts] == ["untested", "untested"]


def test_a_fix_whose_report_is_ready_for_retesting_is_untested():
    inv = _read("# NCCL timeout\n\n## Solution\n\n### Code Fix\n\nChanged `.expand()` to `.repeat()`:\n\n"
                "```python\nw = w.repeat(4, 1)\n```\n\n**Why `.repeat()` works:** it copies.\n\n"
                "## Timeline\n\n- **Status**: Ready for re-testing\n")
    assert [a.outcome for a in inv.attempts][:1] == ["untested"]


def test_journal_entries_with_no_issue_are_not_attempts_and_fixed_says_worked():
    inv = _read("# Engineering Journal\n\n## 2025-07-20 04:34\n\n### Docs framework\n"
                "- **What**: Set up the docs generator\n- **Why**: Easier navigation\n"
                "- **Issues**: None - clean setup\n- **Result**: Docs build\n\n"
                "## 2025-07-21 05:20\n\n### Worker startup fix\n"
                "- **What**: Fixed the entrypoint that exited with 'python: not found'\n"
                "- **How**: Call `sys.executable` instead of `python`\n"
                "- **Result**: Modified `app.py` lines 15 and 18\n\n### Key Learning\n"
                "- Containers name their interpreter differently than laptops do\n")
    assert [(a.title, a.outcome) for a in inv.attempts] == [("Worker startup fix", "worked")]


def test_after_all_of_these_still_is_the_verdict_of_the_list_above():
    inv = _read("# Display dies in games\n\nSome other things I've tried:\n\n"
                "- remove my 2nd monitor\n- reinstalling the drivers\n- checking for disk issues\n\n"
                "After all of these, I'm still getting the black screens, so I think it's the card.\n")
    assert [a.outcome for a in inv.attempts] == ["failed", "failed", "failed"]


def test_a_summary_after_overcoming_challenges_is_not_an_attempt_and_todo_sub_items_are_steps():
    inv = _read("# Session\n\n**After overcoming multiple challenges, training is now RUNNING successfully!**\n\n"
                "### May 1 2019\n\n- The run stopped with OOM.\n- Something to try\n"
                "    - Parallelize the data set loading.\n    - Save checkpoints automatically.\n")
    assert inv.attempts == []
    assert [s.text for s in inv.next_steps] == ["Parallelize the data set loading.", "Save checkpoints automatically."]


def test_thread_when_i_set_x_it_works_and_a_reply_that_says_it_does_not_work_for_me():
    inv = _read("# NCCL error with DDP\n\nrepo/x · issue #1 · closed\n\nann · comment · 2020-12-23\n\n"
                "I found that when the counts differ, NCCL errors. When I set num_gpus=4, it works fine.\n\n"
                "bob · comment · 2021-02-05\n\nfixed it using `export NCCL_IB_DISABLE=1`\n\n"
                "cat · comment · 2021-03-01\n\nthis does not work for me see:\n\n```\nRuntimeError: NCCL error\n```\n")
    got = [(a.title, a.outcome) for a in inv.attempts]
    assert ("When I set num_gpus=4, it works fine.", "worked") in got
    assert [o for t, o in got if t.startswith("this does not work")] == ["failed"]


def test_the_own_clause_verdict_holds_over_a_later_sentence_about_another_setup():
    inv = _read("# Hang on 2 GPUs\n\nI have tried running it with `--workspace 9000`, the result was the same. "
                "On the VM I used the same setup. It worked fine there.\n\n"
                "Follow-up improvements:\n\n1. Rebuild with NCCL 2.21\n2. Try `--no-nccl`\n")
    assert [a.outcome for a in inv.attempts] == ["failed"]
    assert [s.text for s in inv.next_steps] == ["Rebuild with NCCL 2.21", "Try `--no-nccl`"]


def test_an_attempts_label_inside_a_solved_entry_is_its_own_failed_attempt():
    inv = _read("# Session summary\n\n## Highlights\n\nTraining runs.\n\n### What Was Accomplished:\n\n"
                "1. **GPU Driver Resolution** ✅\n   - **Problem**: The old instance had broken drivers\n"
                "   - **Attempts**: Tried installing the 550 driver by hand (failed - module mismatch)\n"
                "   - **Solution**: Started a new instance from the deep learning image\n"
                "   - **Result**: GPU working immediately!\n")
    got = sorted((a.title[:24], a.outcome) for a in inv.attempts)
    assert got == [("GPU Driver Resolution", "worked"), ("Tried installing the 550", "failed")]


def test_a_lab_note_change_then_what_it_did_one_item_each():
    inv = _read("# Notes\n\n### June 2 2019 14:09 CST\n\n- Made another loss function to fit the shapes.\n"
                "- Now the training can be run.\n- Analysis on this problem:\n    - the generator emits the batch size\n\n"
                "### May 1 2019 17:00 CST\n\n- The program stopped with OOM.\n- Something to try\n"
                "    - Parallelize the data loading.\n")
    assert [(a.title, a.outcome) for a in inv.attempts] == [
        ("Made another loss function to fit the shapes.", "worked")]
    assert [s.text for s in inv.next_steps] == ["Parallelize the data loading."]


def test_parameter_lines_iteration_tables_closed_checklists_and_bold_options():
    inv = _read("# Kernel tuning\n\n### Phase 1: Optimization Attempts\n\n**Goal**: raise occupancy\n\n"
                "| Iteration | Config | Result |\n|---|---|---|\n| 1 | BLOCK_M=128 | ❌ Misaligned address |\n"
                "| 2 | BLOCK_M=80 | ❌ Misaligned address |\n\n## ACPI workarounds\n\n"
                "**Parameter 1: `acpi_osi=Linux`** ❌ **NO IMPROVEMENT**\n- still 16 errors\n\n"
                "## Closure Checklist\n\n- [x] Root cause identified\n- [x] GPU stopped\n\n"
                "## Next Session Recommendations\n\n**A. Validate Infrastructure** (1 hour)\n- Run the fuzzer\n\n"
                "**B. Learn Triton** (4-6 hours)\n- Port the kernel\n")
    got = [(a.title, a.outcome) for a in inv.attempts]
    assert ("BLOCK_M=128", "failed") in got and ("BLOCK_M=80", "failed") in got
    assert ("Parameter 1: `acpi_osi=Linux`", "failed") in got
    assert [s.text for s in inv.next_steps] == ["Validate Infrastructure", "Learn Triton"]
