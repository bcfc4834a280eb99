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
