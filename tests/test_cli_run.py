"""`dbglog run`, `runs`, `env`, `signature` through the real entry point, on real processes (the commands that
run nothing -- new, runs, env, signature, refusals -- through the same entry point in-process)."""

import json
import subprocess
import sys
import textwrap

from conftest import REPROS, assert_none_alive, recorded_pids, run_cli, run_cli_inproc

CRASH = textwrap.dedent("""
    import os, signal, sys
    print("[rank0]: RuntimeError: CUDA error: an illegal memory access was encountered", file=sys.stderr)
    print("[rank0]: Watchdog caught collective operation timeout: WorkNCCL(SeqNum=3, OpType=ALLREDUCE)",
          file=sys.stderr, flush=True)
    os.kill(os.getpid(), signal.SIGABRT)
""")


def test_crash_recorded_as_attempt_with_run_link(workdir):
    (workdir / "crash.py").write_text(CRASH)
    assert run_cli_inproc(workdir, "new", "illegal address", "--no-env").returncode == 0
    r = run_cli("run", "--json", "--attempt", "baseline repro", "--", sys.executable, "crash.py", cwd=workdir)
    assert r.returncode == 1, r.stderr
    d = json.loads(r.stdout)
    assert d["outcome"] == "crash" and d["signal_name"] == "SIGABRT"
    assert d["signature"] == "gpu.illegal_address"  # the cause, not the NCCL wrapper below it
    assert d["attempt"]["number"] == 1 and d["attempt"]["runs"] == [d["id"]]
    assert "gpu.illegal_address" in d["attempt"]["result"] and d["attempt"]["outcome"] == "failed"
    shown = json.loads(run_cli_inproc(workdir, "runs", "show", d["id"][:-1], "--json").stdout)
    assert shown["id"] == d["id"] and shown["attempt"] == 1
    listed = json.loads(run_cli_inproc(workdir, "runs", "list", "--json").stdout)
    assert [x["id"] for x in listed] == [d["id"]]
    md = next((workdir / "logs").glob("*.md")).read_text()
    assert f"**Runs:** {d['id']}" in md


def test_hang_kills_tree_and_exits_124(workdir, pid_dir):
    r = run_cli("run", "--json", "--timeout", "1", "--grace", "1", "--", sys.executable,
                str(REPROS / "hang_grandchild.py"), cwd=workdir)
    assert r.returncode == 124, r.stderr
    d = json.loads(r.stdout)
    assert d["outcome"] == "hang" and d["survivors"] == []
    assert len(recorded_pids(pid_dir)) >= 2  # the script and its grandchild reported their pids
    assert_none_alive(pid_dir)


def test_a_hang_with_no_stacks_names_the_run_that_shows_where_it_waits(workdir):
    # Without --attempt nothing is recorded, so the advice an attempt would get as its next step is a hint here.
    (workdir / "stuck.py").write_text("import threading\nthreading.Event().wait()\n")
    r = run_cli("run", "--timeout", "1", "--grace", "1", "--", sys.executable, "stuck.py", cwd=workdir)
    assert r.returncode == 124, r.stderr
    assert f"next: see where it is stuck: dbglog run --timeout 1 --capture faulthandler -- {sys.executable} stuck.py" \
        in r.stdout


def test_git_bisect_exit_mapping(workdir):
    (workdir / "crash.py").write_text(CRASH)
    base = ["run", "--quiet", "--git-bisect-exit"]
    assert run_cli(*base, "--expect", "gpu.illegal_address", "--", sys.executable, "crash.py", cwd=workdir).returncode == 1
    assert run_cli(*base, "--expect", "rocm.memory_fault", "--", sys.executable, "crash.py", cwd=workdir).returncode == 125
    assert run_cli(*base, "--", sys.executable, "-c", "pass", cwd=workdir).returncode == 0
    assert run_cli(*base, "--", "no-such-command-xyz", cwd=workdir).returncode == 125


def test_missing_command_is_a_clear_error(workdir):
    r = run_cli("run", "--", "no-such-command-xyz", cwd=workdir)
    assert r.returncode == 2  # refused up front, said once, nothing recorded (issue 30)
    assert r.stderr.count("command not found: no-such-command-xyz") == 1 and "Traceback" not in r.stderr


def test_repeat_histogram(workdir):
    r = run_cli("run", "--json", "--repeat", "3", "--", sys.executable, "-c", "pass", cwd=workdir)
    d = json.loads(r.stdout)
    assert r.returncode == 0 and len(d["runs"]) == 3
    assert d["histogram"] == [{"outcome": "pass", "signature": None, "count": 3}] and d["flaky"] is False
    r = run_cli("run", "--json", "--repeat", "5", "--until-fail", "--", sys.executable, "-c", "raise SystemExit(3)",
                cwd=workdir)
    assert len(json.loads(r.stdout)["runs"]) == 1


def test_git_bisect_run_finds_commit_even_when_bad_commits_hang(workdir):
    def git(*a):
        subprocess.run(["git", *a], cwd=workdir, check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@t")
    git("config", "user.name", "t")
    (workdir / ".gitignore").write_text(".dbglog/\nlogs/\n")
    for i in range(12):
        body = "import time\ntime.sleep(600)\n" if i >= 7 else "print('ok')\n"
        (workdir / "repro.py").write_text(body)
        (workdir / "n.txt").write_text(str(i))
        git("add", "-A")
        git("commit", "-qm", f"c{i}")
    revs = subprocess.run(["git", "rev-list", "--reverse", "HEAD"], cwd=workdir, capture_output=True,
                          text=True).stdout.split()
    git("bisect", "start", revs[-1], revs[0])
    r = subprocess.run(["git", "bisect", "run", sys.executable, "-m", "dbglog", "run", "--quiet", "--timeout", "1",
                        "--grace", "0.5", "--git-bisect-exit", "--", sys.executable, "repro.py"],
                       cwd=workdir, capture_output=True, text=True, env=__import__("conftest").cli_env())
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{revs[7]} is the first bad commit" in r.stdout
    git("bisect", "reset")


def test_env_and_signatures(workdir):
    r = run_cli_inproc(workdir, "env", "--json", "--timeout", "3")
    assert r.returncode == 0
    snap = json.loads(r.stdout)
    assert snap["python"] and "os" in snap
    r = run_cli_inproc(workdir, "signature", "list", "--json")
    names = {s["name"] for s in json.loads(r.stdout)}
    assert {"gpu.illegal_address", "rocm.memory_fault", "nccl.watchdog_timeout"} <= names
    assert run_cli_inproc(workdir, "signature", "add", "bad", "([").returncode == 2
    assert run_cli_inproc(workdir, "signature", "add", "my.fault", r"MYFAULT: \w+", "--rank", "90").returncode == 0
    log = workdir / "x.log"
    log.write_text("noise\nMYFAULT: boom\nTraceback (most recent call last):\nValueError: x\n")
    r = run_cli_inproc(workdir, "signature", "test", str(log), "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["signature"]["name"] == "my.fault"
    log.write_text("all good\n")
    assert run_cli_inproc(workdir, "signature", "test", str(log)).returncode == 1


def test_run_bad_input(workdir):
    for args, needle in ((["run"], "no command"), (["run", "--"], "no command"),
                         (["run", "--env", "NOVALUE", "--", "true"], "bad --env"),
                         (["run", "--repeat", "0", "--", "true"], "--repeat"),
                         (["run", "--capture", "nope", "--", "true"], "unknown capture preset")):
        r = run_cli_inproc(workdir, *args)
        assert r.returncode == 2, (args, r.stderr)
        assert needle in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_arguments_reach_the_repro_verbatim_never_through_a_shell(workdir):
    nasty = ["$(touch pwned)", "`touch pwned2`", "a; touch pwned3", "|", "&&", "*", "'\"", "~", "$HOME"]
    r = run_cli("run", "--json", "--", sys.executable, "-c", "import json, sys; print(json.dumps(sys.argv[1:]))",
                *nasty, cwd=workdir)
    assert r.returncode == 0, r.stderr
    out = open(json.loads(r.stdout)["paths"]["stdout"]).read()
    assert json.loads(out) == nasty
    assert not any((workdir / f).exists() for f in ("pwned", "pwned2", "pwned3"))
