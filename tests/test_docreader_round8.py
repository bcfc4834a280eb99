"""Round 8 (blind set /tmp/realdocs7 and the misses left from /tmp/realdocs6/heldout): shapes of
forum posts and blog stories, text my own."""

from dbglog.docreader import narrative, read_document


def _stories(*paras):
    units = []
    for k, p in enumerate(paras):
        if isinstance(p, tuple):  # ("code", text): a code block between paragraphs
            units.append(narrative.Unit(None, [k], code=p[1]))
        else:
            units.append(narrative.Unit(p, [k]))
    return narrative.read(units)


def test_got_it_working_by_is_a_fix_that_worked_and_a_later_clause_is_no_attempt():
    got = _stories("The worst part was the NIC. Thanks to a colleague I finally got it working by adding "
                   "`iommu=pt` as a boot argument, not sure if the other nodes need it but I have added it to the wiki.",
                   "Since the build is recursive, cross compilation currently doesn't work.")
    assert [(s.verdict, "iommu=pt" in s.title) for s in got] == [("worked", True)]
    got = _stories("Finally got it working by removing the [old driver](https://example.org/x) and installing 550.")
    assert [s.verdict for s in got] == ["worked"] and "[" not in got[0].title and "old driver" in got[0].title


def test_got_it_working_only_as_a_wish_is_no_attempt():
    assert _stories("Has anyone got it working by pinning the driver?") == []
    assert _stories("Maybe I could have got it working by rebuilding, if the image were smaller.") == []


def test_own_sentence_wondering_before_its_turn_still_gives_the_verdict():
    got = _stories("I have tried to clear the kernel cache to see if a stale kernel is to blame but that didn't "
                   "help either.")
    assert [s.verdict for s in got] == ["failed"]


def test_tried_both_takes_the_sentence_before_as_what_was_tried():
    got = _stories("The launcher offers two modes: \"eager\" and \"graph\". I tried both, and they made no "
                   "difference. I then did a full reinstall of the toolkit. Again, no joy.")
    assert [s.verdict for s in got] == ["failed", "failed"]
    assert "eager" in got[0].title and "tried both" in got[0].title


def test_when_i_removed_x_main_clause_is_the_verdict():
    got = _stories("Sure enough, when I removed the `~/.nv/ComputeCache` directory, both jobs started without "
                   "problem!", "Those caches hold a lot of entries, and I wanted to find out what was causing the problem.")
    assert [s.verdict for s in got] == ["worked"]
    # a mixed result in the opening is the setting, not a fix tried
    assert _stories("When we turned on `torch.compile` in March, latency dropped, but memory grew.") == []
    # a hypothetical is no action
    assert _stories("If I removed the cache, everything would work.") == []


def test_i_fixed_my_problem_takes_its_paragraph_and_code_and_a_bare_summary_is_none():
    got = _stories("I fixed my problem.  It seems the missing search line was the important factor.",
                   ("code", "search --no-floppy --fs-uuid --set abcd"))
    assert [s.verdict for s in got] == ["worked"]
    assert "search line" in got[0].did and "--fs-uuid" in got[0].did
    assert _stories("I have no idea why those values were bad. I'm just glad I solved the problem.") == []


def test_html_wrapped_fix_sentence_and_relative_past_perfect():
    got = _stories("After I compared the settings of the instance I had installed on another server, I found the "
                   "issue:", "<strong><span style=\"x\">So to fix the issue, I simply gave the SYSTEM account the "
                   "sysadmin role:</span></strong>")
    assert [(s.kind, s.verdict) for s in got] == [("fix", "worked")]


def test_forum_thread_end_to_end():
    doc = ("### Post by a on 2014-01-27\nMy POP3 server returns +OK 0 0 on STAT.\n\n"
           "I tried setting the mailbox path in the config, but that didn't help.\n\n"
           "### Post by a on 2014-01-28\nFinally got it working by removing the server and doing the install "
           "again.\n")
    parsed, _ = read_document(doc, "thread.md")
    got = [(a.outcome, a.title.split()[2]) for p in parsed for a in p.inv.attempts]
    assert ("failed", "setting") in got and any(o == "worked" for o, _ in got)


def test_what_i_did_was_is_an_action_and_waiting_is_none():
    got = _stories("What I did was do a `pkill -f trainer` because I thought the old workers were still holding "
                   "the GPU. I gave it a few minutes (around 10) and, when I started it again, it was doing great!")
    assert [s.verdict for s in got] == ["worked"] and "pkill" in got[0].title
    assert _stories("I've returned home and so want to install it on my desktop. It installed fine.") == []


def test_plan_line_in_a_doc_without_headings_is_next_steps_not_the_title():
    doc = ("---\ntitle: 'Weekly report 3'\n---\nThe NIC did not come up. I finally got it working by adding "
           "`iommu=pt` as a boot argument.\n\n Plan\n\n \n * Finalize the image.\n * Build the kernel on the board.\n")
    parsed, _ = read_document(doc, "report.md")
    inv = parsed[0].inv
    assert inv.title == "Weekly report 3"
    assert [s.text for s in inv.next_steps] == ["Finalize the image.", "Build the kernel on the board."]
    assert [a.outcome for a in inv.attempts] == ["worked"]


def test_long_story_sentence_ending_in_colon_is_no_attempt_container():
    doc = ("The app would not start. Before touching the registry, I exported the keys to disk. To narrow it "
           "down, I re-imported them and tried each half in turn, and eventually I managed to identify the values:\n\n"
           "- Word\n  - Value: `AppWindowPos`\n- PowerPoint\n  - Value: `Left`\n")
    parsed, _ = read_document(doc, "story.md")
    titles = [a.title for p in parsed for a in p.inv.attempts]
    assert "Word" not in titles and "PowerPoint" not in titles


def test_sentence_broken_around_a_config_line_is_one_action():
    got = _stories("I rebuilt the module, but it does exactly the same thing. I added",
                   "options nvidia NVreg_EnableGpuFirmware=0",
                   "to modprobe.conf, but that didn't help either.")
    assert [s.verdict for s in got] == ["failed", "failed"]
    assert "NVreg_EnableGpuFirmware=0 to modprobe.conf" in got[1].title
    # list items that merely lack a full stop are not joined
    assert len(_stories("- reinstalled the driver", "- rebooted", "- same error.")) <= 2


def test_worked_for_me_and_a_plan_tried_later():
    got = _stories("Okay so far so good the cache wipe worked for me. No crashes in 45 minutes.")
    assert [s.verdict for s in got] == ["worked"]
    got = _stories("Perhaps this will work:", ("code", "torch.backends.cuda.matmul.allow_tf32 = False"),
                   "Then, for the loader:", ("code", "pin_memory=False"),
                   "This did not work either. I kept getting the same NaN at step 40.")
    assert [s.verdict for s in got] == ["failed"] and "allow_tf32" in got[0].did and "pin_memory" in got[0].did
    # a plan nobody reports on is no attempt
    assert _stories("Perhaps this will work:", ("code", "pin_memory=False"), "I will try it tomorrow.") == []
