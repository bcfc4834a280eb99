"""Round 12 (threads and agent reports from other people): one test per general rule, texts my own."""

from dbglog.docreader import narrative, read_document
from dbglog.kb import outcome


def _read(doc, name="doc.md"):
    parsed, _ = read_document(doc, name)
    assert len(parsed) == 1
    return parsed[0].inv


def _atts(inv):
    return [(a.title, a.outcome) for a in inv.attempts]


def test_an_issue_exported_one_post_a_line_is_read_post_by_post():
    doc = ("# Allreduce hangs on 4 GPUs\n\nacme/net · issue #12 · open\n\n"
           "kim · description · 2024-03-01\n\nThe all_reduce test hangs on 4 GPUs, 2 GPUs are fine.\n\n"
           "lee · comment · 2024-03-02\n\nHmm, it could be the PCIe switch. Try to run with `NCCL_P2P_LEVEL=PHB`.\n\n"
           "kim · comment · 2024-03-03\n\nStill hangs the same way, sadly.\n\n"
           "kim · comment · 2024-03-04\n\nBut after restarting the machine, `all_reduce_perf -g 4` seems to be working properly.\n\n"
           "ann · comment · 2024-03-05\n\nYou can try to update the driver to 550.\n")
    inv = _read(doc)
    got = _atts(inv)
    # the advice in mid-paragraph and its answer by the asker are one attempt
    assert ("run with `NCCL_P2P_LEVEL=PHB`.", "failed") in got
    # a change named as the condition of an effect
    assert any(t.startswith("But after restarting the machine") and o == "worked" for t, o in got)
    # the last word is advice nobody has come back on: what to try next
    assert [s.text for s in inv.next_steps] == ["update the driver to 550."]
    # the symptom ("hangs on 4 GPUs, 2 GPUs are fine") is no attempt
    assert len(got) == 2


def test_forum_posts_are_stories_of_their_own_authors():
    doc = ("# Updater stuck\n\n### Post by ann on 2010-01-02\nUpdates stop at file 20.\n\n"
           "Rebooting the computer doesn't change a thing.\n\n---\n\n"
           "### Post by bo on 2010-01-02\nThe mirror may be down.\n")
    got = _atts(_read(doc))
    assert got == [("Rebooting the computer doesn't change a thing.", "failed")]


def test_a_change_as_the_condition_of_an_effect_is_a_try_an_operation_is_not():
    for sent, verdict in (("NaN did not occur when the amp was turned off in the encoder.", "worked"),
                          ("I am getting NaN with learned embeddings, when turning them off, the loss is fine.", "worked"),
                          ("I may have set the lr too high, but in any event this worked with `amp=False`.", "worked"),
                          ("If NCCL is disabled, the trainer hangs at context_gpu.cu:325.", "failed"),
                          ("i try to make max_seq_length smaller but it can't not work.", "failed")):
        got = _atts(_read(f"# NaN\n\nSome context here.\n\n{sent}\n"))
        assert [o for _t, o in got] == [verdict], sent
    # the symptom's condition, and a guess under a condition: no attempt
    for sent in ("Training hangs when running on 8 GPUs.", "If NCCL is disabled, the trainer would probably hang."):
        assert _atts(_read(f"# Hang\n\nSome context here.\n\n{sent}\n")) == [], sent


def test_advice_backed_by_the_writers_own_result_is_an_attempt():
    got = _atts(_read("# Segfault on RX 580\n\nSome context.\n\n"
                      "Try setting the HSA override to a lower version, this fixed the core dump on my RX 470.\n"))
    assert [o for _t, o in got] == ["worked"]


def test_potential_solutions_not_yet_tested_inside_what_we_tried_are_next_steps():
    doc = ("# Numba access violation\n\n## Attempted Solutions\n\n### Failed Attempts\n"
           "1. **CuPy removal**: dropped CuPy → No change\n2. **Numba reinstall**: reinstalled → No change\n\n"
           "### Potential Solutions (Not Yet Tested)\n\n#### Option 1: Downgrade CUDA Toolkit\nUse 12.0.\n\n"
           "#### Option 2: Use TCC Driver Mode\nNot on laptops.\n\n"
           "## Workaround: CPU Mode\n\nThe CPU implementation works and produces correct results, but is ~10x slower.\n")
    inv = _read(doc)
    got = _atts(inv)
    assert ("CuPy removal", "failed") in got and ("Numba reinstall", "failed") in got
    assert ("Workaround: CPU Mode", "partial") in got  # a remedy in use, and how it went
    assert len(got) == 3
    assert [s.text for s in inv.next_steps] == ["Downgrade CUDA Toolkit", "Use TCC Driver Mode"]


def test_a_plan_step_that_reports_nothing_is_a_next_step_a_step_with_a_result_an_attempt():
    doc = ("# Symbols not exported\n\n## Investigation Steps\n\n### Step 1: Check if Library Exists\n"
           "**Expected**: `libk.so` is there\n\n### Step 2: Verify Symbol Export\n"
           "**Expected**: `T k_size`\n**Actual**: Likely shows no symbols.\n\n"
           "### Step 3: Rebuild with cdylib\n**Result**: symbols exported, the call works.\n")
    inv = _read(doc)
    assert [t for t, _o in _atts(inv)] == ["Step 3: Rebuild with cdylib"]
    assert [s.text for s in inv.next_steps] == ["Check if Library Exists", "Verify Symbol Export"]


def test_findings_and_known_issues_are_facts_and_a_log_analysis_is_no_log_of_tries():
    doc = ("# Access violation\n\n## Diagnostic Information\n\n### Debug Log Analysis\n```\ncuInit - success\n```\n\n"
           "The failure occurs after successful context creation, when reading the device id.\n\n"
           "## Preliminary Findings\n\n### Finding 1: Helper Not Implemented\n**Issue**: returns an empty array.\n"
           "**Impact**: every call fails.\n\n### 2. Known Issues from Documentation\n"
           "- **Status**: Still fails with `dc 0.78.1`\n")
    inv = _read(doc)
    assert _atts(inv) == []


def test_replies_nested_in_quotes_under_quoted_headings_are_read():
    doc = ("# OOM fine-tuning\n\nI get CUDA OOM on a T4.\n\n# Comments from other users\n\n"
           "> ## Ivan\n> \n> Enable gradient checkpointing.\n> \n> > ## Asker\n> > \n"
           "> > Thank you. Enabling gradient checkpointing works. Training has started.\n\n---\n\n"
           "> ## Kim\n> \n> Try reducing the LoRA rank.\n> \n> > ## Asker\n> > \n"
           "> > I tried with rank 4; still getting the same error.\n")
    got = _atts(_read(doc))
    assert ("Enabling gradient checkpointing works.", "worked") in got
    assert any(t.startswith("I tried with rank 4") and o == "failed" for t, o in got)
    # an ordinary quote (another person's words) is still not read as the writer's try
    plain = _atts(_read("# OOM\n\nSome context.\n\n> I tried rank 4; still getting the same error.\n\nAny ideas?\n"))
    assert plain == []


def test_a_try_after_a_semicolon_and_a_fault_that_goes_away():
    got = _atts(_read("# NaN\n\nNaN at a random epoch. We are clipping gradients; clipping it to tiny values does not"
                      "  help.\n"))
    assert got == [("clipping it to tiny values does not help.", "failed")]
    assert outcome.classify("Disabling the infill causes the NaN to go away.") == "worked"
    assert outcome.classify("Runs successfully but loses ~60% of insertions.") == "partial"
    for s in ("the error did not go away", "the hang never went away", "the crash did not disappear"):
        assert outcome.classify(s) == "failed", s


def test_a_change_as_the_subject_of_its_result_is_a_try_an_operation_is_the_symptom():
    got = _atts(_read("# ROCm segfault\n\nSome context.\n\nTrying the gfx803 build on a fresh install fails with "
                      "`OSError: libmpi_cxx.so.40`.\n"))
    assert [o for _t, o in got] == ["failed"]
    assert _atts(_read("# Hang\n\nSome context.\n\nRunning the server on 8 GPUs fails with a timeout.\n")) == []


def test_solutions_under_recommended_code_changes_are_steps():
    inv = _read("# Gather fails on 8 GPUs\n\n## Tried\n\n- Ran on 4 GPUs: works\n\n## Recommended Code Changes\n\n"
                "### Solution 1: Clone tensors before gathering\nCheap.\n\n### Solution 2: Move to CPU first\nSlower.\n")
    assert [t for t, _o in _atts(inv)] == ["Ran on 4 GPUs: works"]
    assert [s.text for s in inv.next_steps] == ["Clone tensors before gathering", "Move to CPU first"]


def test_already_before_the_verb_is_still_a_first_person_change():
    got = _atts(_read("# OOM\n\nSome context.\n\nI already cut the batch size to 2 and it did not help.\n"))
    assert [o for _t, o in got] == ["failed"]


def test_the_same_failure_under_a_named_version_and_another_version_checked_clean():
    got = _atts(_read("# Hang\n\nSome context.\n\nI still get the same bug with NCCL 2.19.4.\n\n"
                      "I've verified that pytorch 2.0.1 didn't show the bug.\n"))
    assert [o for _t, o in got] == ["failed", "worked"]
    # the symptom told once, with its versions, is no try
    assert _atts(_read("# Hang\n\nI get this bug with NCCL 2.19.4 on 8 GPUs.\n")) == []


def test_a_path_of_marked_items_with_arrows_is_a_list_of_tries_the_mark_is_the_verdict():
    inv = _read("# Workers die in the first wave\n\n### Investigation Path\n"
                "1. ❌ HIP kernel cache corruption → Fixed but failures continued\n"
                "2. ❌ Parallel init race → Warmup barrier didn't help\n"
                "3. ✅ **OOM killer** → `journalctl -k` showed the kernel killing workers\n\n"
                "### Environment\n- ✅ CUDA available: True\n- ✅ Driver: 550\n")
    assert _atts(inv) == [("HIP kernel cache corruption", "failed"), ("Parallel init race", "failed"),
                          ("OOM killer", "worked")]


def test_a_fix_named_on_the_cause_line_and_a_problem_avoided_by_a_means_are_fixes():
    inv = _read("# Ranks collide\n\nRoot cause: inconsistent device ordering across nodes. Fix: export "
                "CUDA_DEVICE_ORDER=PCI_BUS_ID\n\nSome context.\n\nI avoided Docker port publishing entirely by running "
                "the containers with --network host.\n")
    got = _atts(inv)
    assert [o for _t, o in got] == ["worked", "worked"]
    assert "CUDA_DEVICE_ORDER=PCI_BUS_ID" in got[0][0] and "--network host" in got[1][0]
    assert "inconsistent device ordering" in inv.root_cause
    # a "fix:" key line of its own (a Resolution block) retells the fix; no new attempt
    assert _atts(_read("# Hang\n\n## Resolution\n\nroot_cause: the early return skips a barrier.\n"
                       "fix: do the barrier unconditionally.\n")) == []


def test_variants_under_testing_results_are_runs_and_a_caption_over_reasons_is_one_step():
    inv = _read("# Hash table hangs\n\n## Testing Results\n\n### Without Retry Loop\n```cpp\nbuckets[b] = i;\n```\n"
                "**Result**: the insert loses 60% of keys, a failure.\n\n### With Retry Loop\n**Result**: hangs indefinitely.\n\n"
                "### Why Linear Probing Works\n- **Result**: 0.1% errors, no hangs\n\n## Recommendations\n\n"
                "**Use linear probing** with a documented 0.1% error rate:\n- Acceptable for benchmarks\n- No hangs\n")
    assert [t for t, _o in _atts(inv)] == ["Without Retry Loop", "With Retry Loop"]
    assert _atts(inv)[1][1] == "failed"
    assert [s.text for s in inv.next_steps] == ["Use linear probing"]
    assert "documented 0.1% error rate" in inv.next_steps[0].detail and "No hangs" in inv.next_steps[0].detail


def test_an_upgrade_that_brought_the_failure_on_is_the_onset_and_a_labelled_recap_adds_nothing():
    assert _atts(_read("# No boot\n\nSome context.\n\nI am having a similar problem right after upgrading the kernel "
                       "to 2.6.31.\n")) == []
    got = _atts(_read("# No boot\n\nSome context.\n\nI rebooted twice, but after upgrading the kernel to 2.6.32 it "
                      "still hangs.\n"))
    assert [o for _t, o in got] == ["failed"]
    inv = _read("# Faults\n\nSome context.\n\nWith chunked prefill at 16384 the run faults. Setting "
                "`--max-num-batched-tokens 8192` makes it go away.\n\n## Impact\n\n- Workaround: "
                "`--max-num-batched-tokens 8192`.\n")
    assert len(inv.attempts) == 1 and inv.attempts[0].outcome == "worked"


def test_marked_checks_under_verification_results_are_runs_elsewhere_a_status_list():
    inv = _read("# FFI symbols\n\nSome context.\n\n### Verification Results\n\n1. **Symbols Exported**: ✅ all 9 visible\n"
                "2. **Julia Can Call**: ✅ direct ccall works\n3. **Batch call**: ❌ segfaults\n")
    assert _atts(inv) == [("Symbols Exported", "worked"), ("Julia Can Call", "worked"), ("Batch call", "failed")]
    assert _atts(_read("# FFI symbols\n\nSome context.\n\n### Environment\n\n1. **CUDA**: ✅ available\n"
                       "2. **Driver**: ✅ 550\n")) == []


def test_managed_to_run_it_using_a_setting_is_a_fix():
    got = _atts(_read("# ROCm fault\n\nSome context.\n\nBefore this I managed to run it on Ubuntu 20.04 and ROCm 5.2.0 "
                      "using `export HSA_OVERRIDE_GFX_VERSION=10.3.0`.\n"))
    assert [o for _t, o in got] == ["worked"]


def test_a_named_thing_that_works_a_fix_in_a_commit_and_i_did_x_and_found_y():
    doc = ("# IMA in RWKV7\n\nkyv · comment · 2025-02-17\n\n`rwkv-fla` works. It seems faster too.\n\n"
           "maint · comment · 2025-03-01\n\nFixed in https://github.com/o/r/commit/e1e920da14da979d740cf02e\n\n"
           "z5 · comment · 2025-03-02\n\nI updated my environment as follows and found that this problem doesn't occur anymore.\n")
    got = _atts(_read(doc))
    assert [o for _t, o in got] == ["worked", "worked", "worked"]
    assert got[0][0] == "`rwkv-fla` works."
    # a plan is no fix: "should be fixed by #12" has a modal
    assert _atts(_read("# IMA\n\nSome context.\n\nThis should be fixed by #1234 once it lands.\n")) == []


def test_forum_words_tried_with_no_success_and_a_problem_solved_by_an_upgrade():
    got = _atts(_read("# Printer\n\nSome context.\n\nI have since tried using HPLIP with no success.\n"))
    assert [o for _t, o in got] == ["failed"]
    assert outcome.classify("Just for anyone searching, this problem was solved with the Hardy upgrade.") == "worked"
    assert outcome.classify("I finally broke down and did yet another install, and this time it works.") == "worked"
    assert outcome.classify("the problem was not solved") == "failed"


def test_a_step_whose_text_says_it_was_taken_stays_an_attempt():
    inv = _read("# Driver\n\n## Investigation Steps\n\n### Step 1: Check the driver\nRan `nvidia-smi`; driver 550 is "
                "loaded and the GPU shows up.\n\n### Step 2: Look at dmesg\n1. Go to the node\n2. Look for lines with "
                "`Xid` errors\n")
    assert [t for t, _o in _atts(inv)] == ["Step 1: Check the driver"]
    assert [s.text for s in inv.next_steps] == ["Look at dmesg"]


def test_a_named_test_run_section_takes_the_verdict_its_output_ends_on():
    inv = _read("# FFI\n\nSome context.\n\n### Cross-Validation Test Results\n\n```\n[1/7] orbit_size: 14/14 passed\n"
                "Total tests: 113\nFailed: 0\n\n✅ CROSS-VALIDATION PASSED\n```\n\n### HSA Aperture Test Results\n```python\n"
                "x = torch.randn(32, 129).cuda()  # FAILS\n# Error: HSA_STATUS_ERROR\n```\n")
    assert _atts(inv) == [("Cross-Validation Test Results", "worked")]  # the second block is code, not output


def test_a_setting_used_then_the_output_shown_under_it_and_too_little_to_help():
    u = [narrative.Unit("However when I use the same `export HSA_OVERRIDE_GFX_VERSION=10.3.0` now I get this message:", [1]),
         narrative.Unit(None, [2, 3], code="Memory access fault by GPU node-1. Reason: Page not present.\nAborted (core dumped)")]
    assert [st.verdict for st in narrative.read(u)] == ["failed"]
    got = _atts(_read("# OOM\n\nSome context.\n\nAdding `torch.cuda.empty_cache()` to the code gives back about 10 MB, "
                      "which is too little to be an applicable solution.\n"))
    assert [o for _t, o in got] == ["failed"]


def test_the_askers_next_word_judges_the_advice_and_a_bare_try_names_nothing():
    doc = ("# Triton compile fails\n\norg/r · issue #1 · open\n\npb · comment · 2026-04-22\n\nCan you try deleting the "
           "triton cache and trying again? It might be corrupted.\n\njr · comment · 2026-04-22\n\nThanks, I will have a try.\n\n"
           "jr · comment · 2026-04-23\n\n@pb I tried but it didn't work. But downgraded triton to 3.3.0 solved this problem.\n")
    assert _atts(_read(doc)) == [("deleting the triton cache and trying again", "failed"),
                                 ("But downgraded triton to 3.3.0 solved this problem.", "worked")]


def test_it_went_away_after_i_removed_a_patch_and_maybe_you_can_is_advice():
    got = _atts(_read("# Build\n\nSome context.\n\nI had similar problems 2 days ago but it went away after I removed "
                      "one patch that was not yet ready.\n"))
    assert [o for _t, o in got] == ["worked"]
    assert _atts(_read("# Build\n\nSome context.\n\nThe problems started when I upgraded the kernel yesterday.\n")) == []
    inv = _read("# Load fails\n\norg/r · issue #2 · open\n\nep · comment · 2023-09-20\n\nIt fails at the compile stage.\n\n"
                "sx · comment · 2023-09-21\n\nMaybe you can print some information from this function.\n")
    assert [s.text for s in inv.next_steps] == ["print some information from this function."]
    assert outcome.classify("Commenting all wandb related code solved my segmentation fault error...") == "worked"


def test_a_blogs_what_i_tried_with_one_sub_heading_per_try():
    inv = _read("# Phantom 400s\n\n## What I tried\n\nHere is what I tried, roughly in order:\n\n### Adding logging to the API\n"
                "The body really was empty.\n\n### Sending the request with curl\nIt got a 200.\n\n"
                "### Sending it from NodeJS\nIt got a 400, like the Lambda.\n")
    assert [t for t, _o in _atts(inv)] == ["Adding logging to the API", "Sending the request with curl",
                                           "Sending it from NodeJS"]


def test_what_works_is_a_status_list_and_numbered_next_step_headings_with_lists_are_steps():
    inv = _read("# Priorities ignored\n\n## What Works\n\n1. **Scenario definitions** ✅\n   - all 5 packages\n"
                "2. **Priority floor code** ✅\n   - added to core\n\n## What Actually Worked\n\n- Pinned the seed: fixed\n\n"
                "## Next Steps (Prioritized)\n\n### 1. Confirm the action count at month 0 (5 min)\n```ts\nlog(total)\n```\n\n"
                "### 2. Re-run validation (5 min)\n- research spending > $0B\n- Gini < 0.40\n")
    assert [t for t, _o in _atts(inv)] == ["Pinned the seed: fixed"]
    assert [s.text for s in inv.next_steps] == ["Confirm the action count at month 0 (5 min)", "Re-run validation (5 min)"]


def test_a_plain_caption_saying_what_was_tried_over_a_list_makes_its_items_tries():
    inv = _read("# NCCL hang\n\nbob · comment · 2021-12-08\n\nThanks, I did following tests:\n\n"
                "- NCCL_PROTO=LL|LL128|SIMPLE - all three protocols were tested, hanging on all of them.\n"
                "- NCCL 2.11.4 is used, it still hangs.\n\nAny ideas?\n")
    assert [o for _t, o in _atts(inv)] == ["failed", "failed"]
    # an ordinary list under an ordinary sentence stays text
    assert _atts(_read("# NCCL hang\n\nMy setup is as follows:\n\n- 2x A6000\n- driver 550\n")) == []


def test_even_after_a_change_the_failure_stayed_and_a_setting_phrase_before_the_change():
    got = _atts(_read("# NaN\n\nSome context.\n\nHi, I got the nan issue, even reducing the learning rate to `1e-5`, "
                      "after ~6000 iters.\n\nI've tried `float32` and there is no nan issue.\n\nOn my setup, setting "
                      "`pin_memory = False` and `num_workers = 4` the example hangs almost immediately.\n"))
    assert [o for _t, o in got] == ["failed", "worked", "failed"]


def test_hypotheses_with_evidence_only_are_kept_as_written_not_attempts():
    """A root-cause report's '### Hypothesis N' with its cause and evidence, nothing run to test it:
    what was thought, not a try (independent labels of real postmortems read them so); one whose
    section says what was run and what came of it is still an attempt."""
    from dbglog.kb.importer import parse_document

    head = "# RCA: cicc segfaults on the fused MoE kernel\n\n## Root Cause Hypotheses\n\n"
    considered = ("### Hypothesis 1 (High Confidence)\n\n**Cause**: `BLOCK_K=256` makes cicc run out of stack.\n\n"
                  "**Evidence**:\n- only the unit with every tile size crashes\n\n"
                  "### Hypothesis 2 (Low Confidence)\n\n**Cause**: GCC 13 headers.\n\n"
                  "**Evidence**:\n- CUDA 12.4 supports GCC 13.2, which argues against it\n")
    (p,), _ = parse_document(head + considered)
    assert p.inv.attempts == []
    kept = "\n".join(f"{s.heading}\n{s.body}" for s in p.inv.sections)
    assert "Hypothesis 1 (High Confidence)" in kept and "GCC 13 headers" in kept
    tested = considered + ("\n### Hypothesis 3\n\n**Cause**: stack size.\n\n**Test**: rebuilt with `ulimit -s "
                           "unlimited`\n\n**Result**: cicc still segfaults\n")
    (p,), _ = parse_document(head + tested)
    assert [(a.title, a.outcome) for a in p.inv.attempts] == [("Hypothesis 3", "failed")]
