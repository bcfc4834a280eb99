"""Round 11 (review of every labelled set for causes that generalise): one test per general rule, text my own."""

from dbglog.docreader import read_document


def _read(doc, name="doc.md"):
    parsed, _ = read_document(doc, name)
    assert len(parsed) == 1
    return parsed[0].inv


def test_options_under_a_way_forward_heading_are_steps_lettered_or_numbered():
    doc = ("# Loader OOM\n\n## What we tried\n\n### Attempt 1: halve the batch\nStill OOM.\n\n"
           "## Options Forward\n\n### Option 1: Smaller model\nFits in memory.\n\n### Option 2: Bigger GPU\n- A100\n\n"
           "## Recommendations for Future Work\n\n### Option A: Offload to CPU\nSlower.\n\n"
           "### Option B — Shard the optimizer\nNeeds ZeRO.\n")
    inv = _read(doc)
    assert [a.title for a in inv.attempts] == ["halve the batch"]
    assert [s.text for s in inv.next_steps] == ["Smaller model", "Bigger GPU", "Offload to CPU", "Shard the optimizer"]


def test_options_under_a_plain_next_steps_heading_stay_untested_attempts():
    # the corpus convention (tests/corpus/STYLES.md): choices listed under "Next Steps" are untested attempts
    inv = _read("# Prisma error\n\n## Tried\n\n- Regenerated the client: same error\n\n## Next Steps to Fix\n\n"
                "### Option 1: Use raw SQL\nQuick.\n\n### Option 2: Pin Prisma 5.8\nSafe.\n")
    got = [(a.title, a.outcome) for a in inv.attempts]
    assert ("Option 1: Use raw SQL", "untested") in got and ("Option 2: Pin Prisma 5.8", "untested") in got


def test_future_work_is_a_plan_not_a_verdict_and_its_recommendation_line_is_a_step():
    inv = _read("# Heap growth\n\n## Tried\n\n### Attempt 1: raise the heap limit\nStill grows.\n\n"
                "## Future Work (Optional)\n\n1. **Listener cleanup** - old warnings\n\n"
                "**Recommendation:** Monitor with `check-health.sh` for one week.\n")
    assert [a.title for a in inv.attempts] == ["raise the heap limit"]
    steps = [s.text for s in inv.next_steps]
    assert any("Listener cleanup" in s for s in steps)
    assert any(s.startswith("Monitor with `check-health.sh`") for s in steps)


def test_a_cost_table_and_a_closure_checklist_recap_work_and_add_no_attempts():
    inv = _read("# Kernel fault\n\n## Tries\n\n### Attempt 1: BLOCK_M=80\n❌ misaligned address\n\n"
                "## Session Economics\n\n| Phase | Duration | Outcome |\n|---|---|---|\n"
                "| Iteration 1-4 | 2 hours | ❌ All failed |\n| Analysis & documentation | 30 min | ✅ 3 reports |\n\n"
                "## Session Closure Checklist\n\n- [x] Root cause identified\n- [x] Decision documented (retire kernel)\n")
    assert [(a.title, a.outcome) for a in inv.attempts] == [("BLOCK_M=80", "failed")]


def test_a_bold_label_at_the_margin_under_a_list_item_starts_its_own_list():
    # markdown reads "**Attempted Solutions**:" as the last item's lazy continuation: the writer meant a caption
    inv = _read("# Fine-tune postmortem\n\n## Issues\n\n### 1. Phase 2 OOM (UNSOLVED)\n\n"
                "**Cause**: too many trainable parameters for:\n\n- Gradient storage\n- Optimizer states\n"
                "**Attempted Solutions**:\n- Upgraded T4 to A10G\n- Increased system RAM to 64GB\n"
                "- Reduced batch size to 8\n**Result**: Still OOM at epoch 16\n")
    got = [(a.title, a.outcome) for a in inv.attempts]
    assert ("Upgraded T4 to A10G", "failed") in got
    assert ("Increased system RAM to 64GB", "failed") in got
    assert ("Reduced batch size to 8", "failed") in got
    assert not any("Gradient storage" in t for t, _o in got)


def test_a_spoken_lead_before_a_gerund_try_keeps_it_an_attempt():
    inv = _read("# Boot loops after the upgrade\n\nThe machine reboots at the splash screen.\n\n"
                "Well, reinstalling GRUB didn't fix it either. I think I'll have to reinstall the OS.\n")
    got = [(a.title, a.outcome) for a in inv.attempts]
    assert len(got) == 1 and got[0][0].startswith("reinstalling GRUB") and got[0][1] == "failed"


def test_a_reply_that_says_it_does_not_work_for_me_judges_the_change_quoted_above_it():
    inv = _read("# NCCL error on 2.18 with lightning\n\nalice · comment\n\nThe collective hangs after the first epoch.\n\n"
                "bob · comment\n\n> I think it is pytorch 2.1 because when I downgraded pytorch to 2.0.1, the error "
                "disappeared.\n\nIt doesn't work for me.\n")
    got = [(a.title, a.outcome) for a in inv.attempts]
    assert got == [("I downgraded pytorch to 2.0.1 (quoted)", "failed")]


def test_still_the_error_even_after_changes_is_a_failed_try_of_those_changes():
    inv = _read("# NCCL error with DDP\n\ncarol · comment\n\nI still get this error (Lightning 1.1, CUDA 10.1) even after "
                "making sure the gpu argument equals the number of visible devices and setting accelerator='ddp'.\n\n"
                "dave · comment\n\nfixed it using `export NCCL_IB_DISABLE=1`\n")
    got = [(a.title, a.outcome) for a in inv.attempts]
    assert got[0][0].startswith("making sure the gpu argument") and got[0][1] == "failed"
    assert got[1] == ("fixed it using `export NCCL_IB_DISABLE=1`", "worked")


def test_an_email_signature_line_does_not_turn_the_last_paragraph_into_a_heading():
    inv = _read("# aic7xxx: insmod fails\n\ninsmod: error inserting aic7xxx.ko: -1 No such device\n\n"
                "I downloaded the latest driver, but it does exactly the same thing. I added\n\n"
                "options aic7xxx debug:0xffff\n\nto modprobe.conf, but that didn't help either.\n-- \n    Larry\n")
    got = [(a.title, a.outcome) for a in inv.attempts]
    assert any("modprobe.conf" in t and o == "failed" for t, o in got)


def test_i_ended_up_doing_x_is_the_change_settled_on():
    inv = _read("# Browser locks up after the update\n\nThe update made it lock up whenever I typed in the address bar. "
                "I ended up removing it completely and installing the upstream build so I could get on with my work.\n\n"
                "We ended up waiting for the next release, which crashes too.\n")
    got = [(a.title, a.outcome) for a in inv.attempts]
    assert len(got) == 1 and got[0][0].startswith("I ended up removing it completely") and got[0][1] == "worked"


def test_the_real_fix_with_the_change_and_its_check_is_the_attempt_that_worked():
    inv = _read("# App review cannot log in\n\n## Rejection 1\n\nTried a new build. Same rejection.\n\n## The Real Fix\n\n"
                "Deleted the SG and US country challenge rules. A quick check:\n\n```\n$ curl -i https://api/login\nHTTP/2 200\n```\n")
    got = [(a.title, a.outcome) for a in inv.attempts]
    assert any(t.startswith("The Real Fix") and o == "worked" for t, o in got), got
