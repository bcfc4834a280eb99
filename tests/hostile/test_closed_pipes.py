"""A reader that closes the pipe early (`dbglog tried ... | head -1`, `dbglog run ... | head`) does not
change the answer: the command still exits with its own status (the run's verdict, tried's found or
not), not a broken-pipe error."""

import subprocess
import sys

import pytest
from conftest import cli_env
from probe_kit import _ws


@pytest.mark.parametrize("extra", [[], ["-n5"]], ids=["fast path", "click"])
def test_tried_into_a_closed_pipe_still_answers_with_its_exit_status(tmp_path, extra):
    ws = _ws(tmp_path)
    for idea, code in (("zzzqqq never seen", 1), ("p2p", 0)):
        p = subprocess.Popen([sys.executable, "-m", "dbglog", "tried", idea, *extra], cwd=ws, env=cli_env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        p.stdout.close()  # `dbglog tried ... | head -0`
        assert p.wait(timeout=120) == code, (idea, extra, p.stderr.read())  # before: 0 (fast path), 1 (click)
        p.stderr.close()


def test_run_into_a_closed_pipe_still_exits_with_the_runs_verdict(tmp_path):
    ws = _ws(tmp_path)
    for code, want in ((0, 0), (3, 1)):
        p = subprocess.Popen([sys.executable, "-m", "dbglog", "run", "--", sys.executable, "-c",
                              f"print('x\\n' * 100000); raise SystemExit({code})"], cwd=ws, env=cli_env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        p.stdout.close()  # `dbglog run -- CMD | head -1`
        assert p.wait(timeout=120) == want, p.stderr.read()  # before: 1 (click's EPIPE exit) for a pass too
        p.stderr.close()


def _close_stdout():
    import os

    os.close(1)


@pytest.mark.parametrize("flags", [[], ["--json"], ["-q"]], ids=["text", "json", "quiet"])
def test_run_with_stdout_closed_records_the_run_and_exits_with_its_verdict(tmp_path, flags):
    ws = _ws(tmp_path)
    for code, want in ((0, 0), (3, 1)):
        p = subprocess.run([sys.executable, "-m", "dbglog", "run", *flags, "--", "sh", "-c", f"echo hi; exit {code}"],
                           cwd=ws, env=cli_env(), stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                           preexec_fn=_close_stdout, timeout=120, text=True)  # `dbglog run ... >&-`
        assert p.returncode == want, p.stderr  # before: 1, an internal error, for a pass too
        assert "Traceback" not in p.stderr and "internal error" not in p.stderr, p.stderr
    listed = subprocess.run([sys.executable, "-m", "dbglog", "runs", "list"], cwd=ws, env=cli_env(),
                            capture_output=True, text=True, timeout=120).stdout
    assert listed.count("echo hi") == 2, listed
