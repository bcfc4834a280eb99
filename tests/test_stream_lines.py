"""Clean streams: with stdout and stderr on one pipe (``2>&1``, as an agent's tool reads them),
a stderr note never lands in the middle of a stdout line."""

import subprocess
import sys

from conftest import cli_env


def merged(cwd, *args) -> str:
    return subprocess.run([sys.executable, "-m", "dbglog", *args], cwd=cwd, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True, env=cli_env(),
                          timeout=120).stdout


def test_notes_and_results_each_keep_their_own_lines(workdir):
    merged(workdir, "new", "hangs at step 3", "--no-env")
    out = merged(workdir, "run", "--repeat", "2", "--attempt", "raise the timeout", "--", "sh", "-c",
                 "echo step; exit 1")
    out += merged(workdir, "tried", "raise the qqzz timeout")
    assert "Attempt 1 recorded" in out and "note: 'qqzz' is in no record" in out
    for line in out.splitlines():
        for marker in ("note:", "dbglog:", "Attempt 1 recorded"):
            assert marker not in line or line.lstrip().startswith(marker), line


def test_a_query_as_long_as_a_pasted_log_is_quoted_with_its_middle_cut(workdir):
    merged(workdir, "new", "hangs at step 3", "--no-env")
    word = "qqzz" + "x" * 3000 + "yyzz"
    out = merged(workdir, "tried", f"raise the {word} timeout")
    note = next(ln for ln in out.splitlines() if ln.startswith("note: 'qqzz"))
    answer = next(ln for ln in out.splitlines() if ln.startswith("Not tried:"))
    assert len(note) < 200 and "…" in note and note.endswith("' is in no record (a match without it scores lower)")
    assert len(answer) < 300 and "…" in answer
