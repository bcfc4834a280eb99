"""outcome.py compiles its cue catalogue on first use, not at import (start-up of commands that
never read a result), and reads the same either way."""

import subprocess
import sys

from dbglog.core import outcome


def test_import_compiles_no_cue():
    code = ("from dbglog.core import outcome as o; "
            "print(o._compiled.cache_info().currsize, o._COUNT_VS._rx is None, o._MD._rx is None)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["0", "True", "True"]


def test_first_use_compiles_and_reads():
    assert outcome.classify("No OOM anymore after 5000 steps") == "worked"
    assert outcome.classify("3/20 hangs (was 14/20)") == "partial"
    assert outcome._compiled.cache_info().currsize == 1
    assert outcome._COUNT_VS._rx is not None
    assert outcome.plain_text("**Still** `hangs`") == "Still hangs"


def test_a_cue_skipped_for_want_of_its_words_would_have_found_nothing():
    # The scan skips a cue none of whose literal texts is in the line: the counts must be those of running every cue.
    from pathlib import Path

    from hypothesis import given, settings
    from hypothesis import strategies as st

    lines = [x for p in sorted((Path(__file__).parent / "corpus").rglob("*.md"))
             for x in p.read_text(encoding="utf-8").split("\n") if x.strip()]
    assert len(lines) > 2000
    for x in lines:
        assert outcome._scan(x) == outcome._scan(x, gated=False), x
    assert sum(1 for _rx, _m, o in outcome._compiled() if o is None) <= 3  # (nearly every cue has its texts)

    words = st.sampled_from(["works", "didn't", "help", "still", "hangs", "no", "longer", "OOM", "fixed", "not",
                             "the", "cause", "partially", "crash", "→", "ſ", "K", "İ", "with", "when", "fails", "but",
                             "0/20", "runs", "was", "14/20", "seems", "to", "work", "solved", "it", "`x`", "ok"])

    @settings(max_examples=300, deadline=None)
    @given(st.lists(words, min_size=1, max_size=14).map(" ".join))
    def same(text):
        assert outcome._scan(text) == outcome._scan(text, gated=False)

    same()
