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
