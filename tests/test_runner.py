"""Supervised runs with real subprocesses: classification, tree kill, capped output, captures,
exit-status normalisation and `git bisect run`."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import REPROS, ROOT, assert_none_alive, recorded_pids
from dbglog.run import captures, runner
from dbglog.util.errors import DbglogError

PY = sys.executable
# Scheduling slack on a loaded 2-core box (bench/suite_under_load.sh: 8 CPU hogs beside the suite stretch
# a run's own work several times over). The repros never end on their own: any bound far below forever shows
# the tree was killed at the time-out, not waited for.
SLACK = 15.0


def run(cmd, tmp_path, **kw):
    kw.setdefault("echo", False)
    kw.setdefault("git_info", False)
    kw.setdefault("grace", 1.0)
    return runner.run(cmd, run_dir=tmp_path / "run", **kw)


def repro(name, *args):
    return [PY, str(REPROS / name), *map(str, args)]


def test_pass_and_result_fields(tmp_path, pid_dir):
    r = run([PY, "-c", "import os; print('hello', os.environ['PYTHONUNBUFFERED'], os.environ['X'])"], tmp_path,
            env_overrides={"X": "1"})
    assert r.outcome == "pass" and r.exit_code == 0 and r.signal is None and r.signature is None
    assert Path(r.paths["stdout"]).read_text() == "hello 1 1\n"
    assert Path(r.paths["output"]).read_text() == "hello 1 1\n"
    d = r.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert list(d)[:6] == ["id", "cmd", "cwd", "env_overrides", "started", "duration_s"]
    assert json.loads(Path(r.paths["result"]).read_text())["outcome"] == "pass"


def test_fail_with_traceback(tmp_path):
    r = run([PY, "-c", "raise ValueError('bad shape')"], tmp_path)
    assert (r.outcome, r.exit_code, r.signature) == ("fail", 1, "py.traceback:ValueError")
    assert any("ValueError: bad shape" in k["text"] for k in r.key_lines)
    assert "ValueError" in Path(r.paths["stderr"]).read_text()


def test_segfault_is_a_crash(tmp_path, pid_dir):
    r = run(repro("segfault.py"), tmp_path, timeout=20)
    assert (r.outcome, r.signal, r.signal_name, r.exit_code) == ("crash", 11, "SIGSEGV", None)
    assert_none_alive(pid_dir)


def test_segfault_with_faulthandler_gets_signature(tmp_path):
    r = run(repro("segfault.py"), tmp_path, timeout=20, env_overrides={"PYTHONFAULTHANDLER": "1"})
    assert (r.outcome, r.signal, r.signature) == ("crash", 11, "py.fatal")


def test_abort_is_a_crash_with_terminate_signature(tmp_path, pid_dir):
    r = run(repro("abort.py"), tmp_path, timeout=20)
    assert (r.outcome, r.signal, r.signature) == ("crash", 6, "cpp.terminate")
    assert_none_alive(pid_dir)


def test_exit_137_is_read_as_sigkill(tmp_path):
    r = run(["sh", "-c", "exit 137"], tmp_path)
    assert (r.outcome, r.exit_code, r.signal) in {("crash", 137, 9), ("oom", 137, 9)}
    assert any("128+N" in n for n in r.notes)


def test_oom_text_makes_outcome_oom(tmp_path):
    r = run([PY, "-c", "import sys; print('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.', "
                       "file=sys.stderr); sys.exit(1)"], tmp_path)
    assert (r.outcome, r.signature) == ("oom", "oom.torch_cuda")


def test_command_not_found_is_error(tmp_path):
    r = run(["definitely-not-a-command-dbglog"], tmp_path)
    assert r.outcome == "error" and "command not found: definitely-not-a-command-dbglog" in r.error
    assert runner.git_bisect_exit(r) == 125
    assert runner.exit_code_plain(r) == 1


def test_bad_cwd_is_error_and_bad_input_raises(tmp_path):
    r = run(["true"], tmp_path, cwd=tmp_path / "nope")
    assert r.outcome == "error" and "does not exist" in r.error
    with pytest.raises(DbglogError):
        run([], tmp_path)
    with pytest.raises(DbglogError):
        run("echo hi", tmp_path)
    with pytest.raises(DbglogError, match="unknown capture preset"):
        run(["true"], tmp_path, captures=["strace"])


def test_hang_is_killed_within_timeout_plus_grace(tmp_path, pid_dir):
    r = run(repro("hang.py"), tmp_path, timeout=1.0, grace=1.0)
    assert r.outcome == "hang" and r.survivors == [] and not r.infra_tainted
    assert r.duration_s < 1.0 + 1.0 + SLACK
    assert runner.exit_code_plain(r) == 124
    assert "started, now waiting forever" in Path(r.paths["output"]).read_text()
    assert json.loads((tmp_path / "run" / "hang" / "snapshot.json").read_text())
    assert_none_alive(pid_dir)


def test_hang_in_grandchild_that_ignores_sigterm(tmp_path, pid_dir):
    r = run(repro("hang_grandchild.py"), tmp_path, timeout=1.5, grace=1.0)
    assert r.outcome == "hang" and r.survivors == []
    assert len(recorded_pids(pid_dir)) == 2
    assert r.duration_s < 1.5 + 1.0 + SLACK
    assert_none_alive(pid_dir)


def test_detached_setsid_grandchild_is_killed_on_hang(tmp_path, pid_dir):
    r = run(repro("detached_grandchild.py", "hang"), tmp_path, timeout=2.0, grace=1.0)
    # Tracked from its parent's link, or (on a busy machine, when the poll missed that link before setsid) adopted
    # as an orphan: either way it is killed, and an adopted one is reported as escaped.
    assert r.outcome == "hang" and all(s.get("escaped") and s["status"] == "killed" for s in r.survivors)
    assert len(recorded_pids(pid_dir)) == 3
    assert_none_alive(pid_dir)


def test_detached_grandchild_left_behind_by_a_passing_command_is_killed(tmp_path, pid_dir):
    r = run(repro("detached_grandchild.py", "exit"), tmp_path, timeout=20, grace=1.0)
    assert r.outcome == "pass"
    assert any("still running after the command exited" in n for n in r.notes)
    assert_none_alive(pid_dir)


def test_200mb_output_is_truncated_in_the_middle_without_deadlock(tmp_path, pid_dir):
    cap = 8 * 1024 * 1024
    r = run(repro("big_output.py", 200), tmp_path, timeout=60, output_cap_bytes=cap)
    assert r.outcome == "fail" and r.signature == "py.traceback:ValueError"
    assert r.truncated and r.omitted_bytes["stdout"] > 190 * 1024 * 1024
    out = Path(r.paths["stdout"])
    assert out.stat().st_size < cap + 1024
    with open(out, "rb") as f:
        head = f.read(64)
        f.seek(-64, os.SEEK_END)
        tail = f.read()
        f.seek(cap // 2 - 10)
        middle = f.read(200)
    assert head.startswith(b"HEAD-MARKER") and tail.endswith(b"TAIL-MARKER\n")
    assert b"[dbglog: " in middle and b"bytes omitted here" in middle
    assert not r.omitted_bytes["stderr"]
    assert r.duration_s < 30
    assert_none_alive(pid_dir)


def test_invalid_utf8_output(tmp_path):
    r = run(repro("invalid_utf8.py"), tmp_path)
    assert (r.outcome, r.signature) == ("fail", "gpu.misaligned")
    assert b"\xff\xfe\x80" in Path(r.paths["stdout"]).read_bytes()  # stored byte-exact
    json.dumps(r.to_dict())


def test_echo_passes_output_through(tmp_path, capfd):
    run([PY, "-c", "import sys; print('to-out'); print('to-err', file=sys.stderr)"], tmp_path, echo=True)
    out, err = capfd.readouterr()
    assert "to-out" in out and "to-err" in err


def test_on_hang_command_with_placeholders_and_missing_tool(tmp_path, pid_dir):
    r = run(repro("hang.py"), tmp_path, timeout=1.0,
            on_hang=["sh -c 'echo pid={pid} pgid={pgid} dir={run_dir}'", "no-such-tool-xyz {pid}"])
    assert r.outcome == "hang"
    caps = {c["name"]: c for c in r.captures}
    text = Path(caps["on_hang:1"]["path"]).read_text()
    main_pid = recorded_pids(pid_dir)[0]
    assert f"pid={main_pid} pgid={main_pid} dir={tmp_path / 'run'}" in text
    assert caps["on_hang:2"]["status"] == "missing"
    assert_none_alive(pid_dir)


def test_on_hang_command_time_limit(tmp_path, pid_dir):
    r = run(repro("hang.py"), tmp_path, timeout=1.0, on_hang=["sleep 30"], capture_timeout=0.5)
    assert r.captures[-1]["status"] == "timeout"
    assert r.outcome == "hang"
    assert_none_alive(pid_dir)


def test_faulthandler_preset_dumps_stacks_without_killing(tmp_path, pid_dir):
    r = run(repro("hang.py"), tmp_path, timeout=1.5, captures=["faulthandler"])
    assert r.outcome == "hang"
    fh = [c for c in r.captures if c["name"].startswith("faulthandler:")]
    assert fh and fh[0]["status"] == "ok"
    dump = Path(fh[0]["path"]).read_text()
    assert "most recent call first" in dump and "hang.py" in dump
    assert_none_alive(pid_dir)


@pytest.mark.skipif(not runner._which("py-spy"), reason="py-spy not installed")
def test_py_spy_preset(tmp_path, pid_dir):
    r = run(repro("hang.py"), tmp_path, timeout=1.5, captures=["py-spy"], capture_timeout=20)
    assert r.outcome == "hang"
    spy = [c for c in r.captures if c["name"].startswith("py-spy")]
    assert spy
    if spy[0]["status"] == "ok":  # ptrace may be forbidden in some containers
        assert "hang.py" in Path(spy[0]["path"]).read_text()
    assert_none_alive(pid_dir)


def test_missing_tool_preset_is_a_note(tmp_path, pid_dir, monkeypatch):
    monkeypatch.setattr(captures.shutil, "which", lambda name, *a, **k: None)
    r = run(repro("hang.py"), tmp_path, timeout=1.0, captures=["py-spy", "gdb"])
    assert r.outcome == "hang"
    assert {c["name"]: c["status"] for c in r.captures}.get("py-spy") == "missing"
    assert {c["name"]: c["status"] for c in r.captures}.get("gdb") == "missing"


def test_cuda_coredump_preset_records_hang_before_the_abort(tmp_path, pid_dir):
    r = run(repro("fake_cuda_coredump.py"), tmp_path, timeout=1.5, captures=["cuda-coredump"], capture_timeout=10)
    assert r.outcome == "hang"  # not crash, although the dump aborted the process (SIGABRT)
    cap = [c for c in r.captures if c["name"] == "cuda-coredump"][0]
    assert cap["status"] == "ok" and cap["dumps"]
    assert "coredump: All done" in Path(r.paths["output"]).read_text()
    assert_none_alive(pid_dir)


def test_kernel_api_log_boundary_is_reported(tmp_path):
    code = ("import os\n"
            "p = os.environ['SGLANG_KERNEL_API_LOGDEST'].replace('%i', str(os.getpid()))\n"
            "open(p, 'w').write('[2026-03-19 00:47:06] SGLang Kernel API Call: RMSNorm.forward\\nOutput:\\n'\n"
            "  '[2026-03-19 00:47:06] SGLang Kernel API Call: fused_moe\\nPositional input arguments:\\n')\n"
            "os.abort()\n")
    r = run([PY, "-c", code], tmp_path)
    assert r.outcome == "crash"
    assert [(k["name"], k["status"]) for k in r.kernel_api] == [("fused_moe", "in_flight")]


def test_git_state_recorded(tmp_path):
    repo = _make_repo(tmp_path / "repo", ["print('ok')"])
    r = runner.run([PY, "repro.py"], run_dir=tmp_path / "run", cwd=repo, echo=False)
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert (r.git_commit, r.git_dirty) == (head, False)
    (repo / "repro.py").write_text("print('changed')\n")
    r = runner.run([PY, "repro.py"], run_dir=tmp_path / "run2", cwd=repo, echo=False)
    assert r.git_dirty is True


def test_run_repeated_histogram(tmp_path):
    code = ("import os, sys\n"
            "p = os.path.join(sys.argv[1], 'n'); n = int(open(p).read()) if os.path.exists(p) else 0\n"
            "open(p, 'w').write(str(n + 1))\n"
            "sys.exit(0 if n % 2 == 0 else 3)\n")
    rep = runner.run_repeated([PY, "-c", code, str(tmp_path)], run_dir=tmp_path / "runs", repeat=4, echo=False,
                              git_info=False)
    results, hist = rep
    assert [r.outcome for r in results] == ["pass", "fail", "pass", "fail"]
    assert hist == {("pass", None): 2, ("fail", None): 2} and rep.flaky
    assert json.loads(json.dumps(rep.to_dict()))["flaky"] is True
    (tmp_path / "n").unlink()
    rep = runner.run_repeated([PY, "-c", code, str(tmp_path)], run_dir=tmp_path / "runs2", repeat=4,
                              until_fail=True, echo=False, git_info=False)
    assert [r.outcome for r in rep.results] == ["pass", "fail"]


# --- exit-status normalisation and exit-code mappings -----------------------------------------

def _result(outcome, exit_code=None, sig=None, signature=None, tainted=False):
    return runner.RunResult(id="x", cmd=["x"], cwd="/", env_overrides={}, started="", duration_s=0,
                            exit_code=exit_code, signal=sig, outcome=outcome, signature=signature,
                            infra_tainted=tainted)


def test_normalize_exit_examples():
    assert runner.normalize_exit(0) == (0, None)
    assert runner.normalize_exit(1) == (1, None)
    assert runner.normalize_exit(-11) == (None, 11)
    assert runner.normalize_exit(139) == (139, 11)
    assert runner.normalize_exit(134) == (134, 6)
    assert runner.normalize_exit(137) == (137, 9)
    assert runner.normalize_exit(128) == (128, None)
    assert runner.normalize_exit(255) == (255, None)
    assert runner.normalize_exit(None) == (None, None)


@given(st.integers(min_value=-64, max_value=255))
def test_normalize_exit_properties(rc):
    code, sig = runner.normalize_exit(rc)
    if rc < 0:
        assert (code, sig) == (None, -rc)
    else:
        assert code == rc
        assert sig is None or (1 <= sig <= 31 and rc == 128 + sig)
    # a process killed by N and a shell reporting it as 128+N normalise to the same signal
    if 1 <= rc <= 31:
        assert runner.normalize_exit(-rc)[1] == runner.normalize_exit(128 + rc)[1] == rc


@given(st.sampled_from(runner.OUTCOMES), st.one_of(st.none(), st.integers(-64, 255)),
       st.one_of(st.none(), st.sampled_from(["gpu.illegal_address", "py.traceback:ValueError", "oom.runtime"])),
       st.one_of(st.none(), st.sampled_from(["gpu.illegal_address", "py.traceback:*", "hang", "crash"])),
       st.booleans())
def test_git_bisect_exit_never_aborts_bisect(outcome, rc, signature, expect, tainted):
    code, sig = runner.normalize_exit(rc)
    r = _result(outcome, code, sig, signature, tainted)
    ec = runner.git_bisect_exit(r, expect)
    assert ec in (0, 1, 125)
    if outcome == "pass" and not tainted:
        assert ec == 0
    if outcome == "error":
        assert ec == 125
    assert runner.exit_code_plain(r) in (0, 1, 124)


def test_git_bisect_exit_expect():
    r = _result("fail", 1, None, "py.traceback:ValueError")
    assert runner.git_bisect_exit(r) == 1
    assert runner.git_bisect_exit(r, "py.traceback:ValueError") == 1
    assert runner.git_bisect_exit(r, "py.traceback:*") == 1
    assert runner.git_bisect_exit(r, "gpu.illegal_address") == 125
    assert runner.git_bisect_exit(_result("hang"), "hang") == 1
    assert runner.git_bisect_exit(_result("fail", 125)) == 125


# --- git bisect run on a real repo ----------------------------------------------------------

def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                          env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}).stdout


def _make_repo(repo: Path, versions: list[str]) -> Path:
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    for i, body in enumerate(versions):
        (repo / "repro.py").write_text(f"{body}\n# version {i}\n")
        _git(repo, "add", "repro.py")
        _git(repo, "commit", "-q", "-m", f"v{i}")
    return repo


GOOD = "print('ok')"
BAD_VALUE = "raise ValueError('regressed')"
BAD_HANG = "import threading; print('stuck', flush=True); threading.Event().wait()"
OTHER = "raise ImportError('build broken')"


@pytest.mark.parametrize("bad,expect_args,other_at", [
    (BAD_VALUE, [], None),
    (BAD_HANG, [], None),
    (BAD_VALUE, ["--expect", "py.traceback:ValueError"], 2),
])
def test_git_bisect_run_finds_first_bad_commit(tmp_path, bad, expect_args, other_at):
    versions = [GOOD] * 4 + [bad] * 4  # first bad commit: index 4
    if other_at is not None:
        versions[other_at] = OTHER  # a different failure on a good-side commit must be skipped
    repo = _make_repo(tmp_path / "repo", versions)
    revs = _git(repo, "rev-list", "--reverse", "HEAD").split()
    _git(repo, "bisect", "start", revs[-1], revs[0])
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DBGLOG_DIR": str(tmp_path / "ws")}  # runs outside the repo
    p = subprocess.run(["git", "-C", str(repo), "bisect", "run", PY, "-m", "dbglog", "run",
                        "--timeout", "1", "--grace", "1", "--quiet",
                        "--git-bisect-exit", *expect_args, "--", PY, "repro.py"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"{revs[4]} is the first bad commit" in p.stdout
    runs = list((tmp_path / "ws" / "runs").glob("*/result.json"))
    outcomes = {json.loads(f.read_text())["outcome"] for f in runs}
    assert len(runs) >= 3 and "pass" in outcomes and outcomes <= {"pass", "fail", "hang"}  # every step recorded
