"""`dbglog run --git-bisect-exit`: exit codes git can trust (docs/intermittent.md has the table).
Bad as soon as the hunted failure shows in any repeat; a build break, or a server that never got
ready, is 125 (skip) unless --expect names it."""

import sys

import pytest

from dbglog.run import runner


def _r(outcome, signature=None, exit_code=1, server=None):
    return runner.RunResult(id="x", cmd=["x"], cwd="/", env_overrides={}, started="", duration_s=0,
                            exit_code=exit_code, signal=None, outcome=outcome, signature=signature, server=server)


def test_a_pass_then_a_failure_under_repeat_is_bad_not_skip():
    rep = runner.RepeatResult([_r("pass", exit_code=0), _r("fail", "py.traceback:ValueError")], {})
    assert rep.exit_code(git_bisect=True) == 1
    assert rep.exit_code(git_bisect=True, expect="py.traceback:ValueError") == 1


def test_repeats_of_only_other_failures_and_passes_are_still_skip_with_expect():
    rep = runner.RepeatResult([_r("pass", exit_code=0), _r("fail", "py.traceback:KeyError")], {})
    assert rep.exit_code(git_bisect=True, expect="hang") == 125


def test_a_syntax_or_import_error_is_a_build_break_skip_without_expect():
    for sig in ("py.traceback:SyntaxError", "py.traceback:ModuleNotFoundError", "py.traceback:ImportError"):
        assert runner.git_bisect_exit(_r("fail", sig)) == 125
        assert runner.git_bisect_exit(_r("fail", sig), expect=sig) == 1  # unless --expect hunts it
    assert runner.git_bisect_exit(_r("fail", "py.traceback:ValueError")) == 1


def test_a_server_dying_of_a_syntax_error_before_ready_is_skip_not_bad():
    died = _r("server_died", "py.traceback:SyntaxError", server={"state": "died", "ready_s": None})
    assert runner.git_bisect_exit(died) == 125
    never = _r("server_not_ready", None, server={"state": "not ready", "ready_s": None})
    assert runner.git_bisect_exit(never) == 125
    crashed_later = _r("server_died", "gpu.illegal_address", server={"state": "died", "ready_s": 1.5})
    assert runner.git_bisect_exit(crashed_later) == 1  # it started, then showed the bug


@pytest.mark.parametrize("args", [["--timeout", "60s"], ["--expect", "gpu.nosuch"], ["-i", "nosuchinv"]])
def test_dbglogs_own_refusal_stops_git_bisect_instead_of_reading_as_bad(tmp_path, args):
    """Exit 2 is "bad" to `git bisect run`: a typo in dbglog's own options blamed a commit (an adversarial probe:
    git named the second of eight commits). Under --git-bisect-exit a refusal exits 128, which stops git."""
    from conftest import run_cli_inproc

    assert run_cli_inproc(tmp_path, "init").returncode == 0
    r = run_cli_inproc(tmp_path, "run", "--git-bisect-exit", *args, "--", sys.executable, "-c", "pass")
    assert r.returncode == 128, (r.returncode, r.stderr)
    assert r.stderr.count("\n") == 1 and "git bisect run stops" in r.stderr, r.stderr
    r = run_cli_inproc(tmp_path, "run", *args, "--", sys.executable, "-c", "pass")
    assert r.returncode == 2  # (without the flag, bad input is exit 2 as everywhere)
    r = run_cli_inproc(tmp_path, "run", "--timeout", "60s", "--", "echo", "--git-bisect-exit")
    assert r.returncode == 2  # (the repro's own words are not dbglog's flag)


def test_an_attempt_under_git_bisect_of_a_repo_tracking_logs_is_refused_before_anything_is_written(tmp_path):
    """Under `git bisect run`, each step's `--attempt` was written into the version of logs/ git had checked out
    (an adversarial probe: an attempt of a later commit left the database, and git refused the next checkout).
    It stops git bisect (128) and writes nothing; a plain run still works, and so does --attempt with no bisect."""
    import subprocess

    from conftest import run_cli_inproc

    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("config", "user.email", "a@b")
    git("config", "user.name", "t")
    assert run_cli_inproc(tmp_path, "new", "x", "--no-env").returncode == 0
    for i in range(4):
        (tmp_path / "v.txt").write_text(f"v={i}\n")
        git("add", "-A")
        git("commit", "-qm", f"c{i}")
    git("bisect", "start", "main", "main~3")
    r = run_cli_inproc(tmp_path, "run", "--git-bisect-exit", "--attempt", "T", "--", sys.executable, "-c", "pass")
    assert r.returncode == 128 and "drop --attempt" in r.stderr, r.stderr
    status = subprocess.run(["git", "status", "--porcelain"], cwd=tmp_path, capture_output=True, text=True).stdout
    assert status == ""  # logs/ untouched
    r = run_cli_inproc(tmp_path, "run", "--git-bisect-exit", "--", sys.executable, "-c", "pass")
    assert r.returncode == 0, r.stderr
    git("bisect", "reset")
    r = run_cli_inproc(tmp_path, "run", "--git-bisect-exit", "--attempt", "T", "--", sys.executable, "-c", "pass")
    assert r.returncode == 0, r.stderr
