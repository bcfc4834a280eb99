"""The Slurm launcher mode (dbglog/run/slurm.py) against a real single-node slurmctld + slurmd.

The cluster (tests/slurm_cluster.py) is started once for the module; every test that needs it
skips with the reason when it cannot be had (not root, slurm-wlm/munge not installed, daemons that
will not start). The first tests need no cluster: argument checks and the record logic.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sqlite3
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psutil
import pytest
from conftest import cli_env, run_cli
from hypothesis import given, settings, strategies as st

from dbglog.run import slurm
from dbglog.util.errors import DbglogError
from slurm_cluster import SlurmCluster, Unavailable


# --- without a cluster ---------------------------------------------------------------------------

@pytest.mark.parametrize("args", ["-J x", "--job-name=x", "--job-name x", "-Jx", "--jobid=4", "--overlap", "--pty"])
def test_args_that_defeat_the_mode_are_refused(args):
    with pytest.raises(DbglogError, match="not allowed"):
        slurm.launcher(args)
    with pytest.raises(DbglogError, match="not allowed"):
        slurm.check_launcher("srun " + args)


def test_launcher_strings():
    assert slurm.launcher("") == "srun"
    assert slurm.launcher("srun -N1 --gres=gpu:1") == "srun -N1 --gres=gpu:1"
    assert slurm.is_srun("/usr/bin/srun -n1") and slurm.is_srun("srun")
    assert not slurm.is_srun("ncu --target-processes all") and not slurm.is_srun(None)
    slurm.check_launcher("ncu -J x")  # not srun: not ours to judge
    with pytest.raises(DbglogError, match="cannot parse"):
        slurm.launcher("-p 'unterminated")


_WORD = st.text(st.characters(codec="utf-8", exclude_characters="\x00", exclude_categories=("Cs",)), min_size=1,
                max_size=12)


@settings(max_examples=60, deadline=None)
@given(st.lists(_WORD, max_size=5))
def test_launcher_keeps_every_word(words):
    words = [w for w in words if w.split("=", 1)[0] not in slurm.REFUSED and not w.startswith("-J")]
    assert shlex.split(slurm.launcher(shlex.join(words))) == ["srun", *words]


def test_on_hang_command_runs_with_the_nodes_pid():
    script = slurm._command_script("42", "gpu7", "py-spy dump --pid {pid} --native -o {run_dir}/x.{node}.{jobid}",
                                   Path("/r d"))
    assert script.startswith("P=$(scontrol listpids 42")
    assert "'\"$P\"'" in script and "'/r d/x.gpu7.42'" in script


class _Result:  # the fields of runner.RunResult that Step.settle reads and writes
    def __init__(self, tmp_path, stderr: str, outcome="fail"):
        (tmp_path / "stderr").write_text(stderr)
        self.paths = {"stderr": str(tmp_path / "stderr")}
        self.outcome, self.error, self.notes, self.timeout = outcome, None, [], 5.0
        self.slurm, self.infra_tainted = None, False


def test_a_step_that_never_started_is_an_error_not_evidence(tmp_path, monkeypatch):
    monkeypatch.setattr(slurm, "jobs", lambda *a, **k: [])  # the controller knows no such job
    step = slurm.Step()
    step.argv(["srun", "true"], "r1")
    r = _Result(tmp_path, "srun: error: Unable to allocate resources: Invalid partition name specified\n")
    step.settle(r)
    assert r.outcome == "error" and "Invalid partition name" in r.error
    assert r.slurm["job_name"] == "dbglog-r1" and r.slurm["node"] is None
    # a task's own failure line is the repro failing, not srun
    r = _Result(tmp_path, "srun: error: vm: task 0: Exited with exit code 3\n")
    step.settle(r)
    assert r.outcome == "fail" and r.error is None


def test_a_node_that_cannot_enter_the_directory_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setattr(slurm, "jobs", lambda *a, **k: [{"job_id": "7", "state": "COMPLETED", "nodelist": "n1",
                                                          "start": "N/A", "end": "N/A", "reason": "None",
                                                          "comment": ""}] if k.get("all_states") else [])
    step = slurm.Step()
    step.argv(["srun", "true"], "r2")
    r = _Result(tmp_path, "slurmstepd-n1: error: couldn't chdir to `/home/me/wt0': No such file or directory: "
                          "going to /tmp instead\n", outcome="pass")
    step.settle(r)
    assert r.outcome == "error" and "/home/me/wt0" in r.error and "--scratch" in r.error
    assert r.slurm["node"] == "n1" and r.slurm["job_id"] == "7"


class _FakeLaunch:
    """Stands in for slurm.Step: records what the runner asks of it."""

    def __init__(self):
        self.calls = []

    def argv(self, cmd, run_id):
        self.calls.append("argv")
        return [cmd[0], "-c", "sleep 30"] if cmd[-1] == "hang" else list(cmd)

    def on_hang(self, run_dir, presets, commands, limit):
        self.calls.append(("on_hang", tuple(presets)))
        return [{"name": "py-spy@n1", "status": "ok", "path": None, "note": None}]

    def cancel(self, result=None):
        self.calls.append("cancel")

    def settle(self, result):
        self.calls.append("settle")
        result.slurm = {"job_id": "1", "node": "n1"}


def test_the_runner_hands_a_launched_run_to_its_launcher(tmp_path):
    """Without a cluster: the hook the Slurm mode needs is still there (argv, on_hang, settle)."""
    from dbglog.run import runner

    fake = _FakeLaunch()
    r = runner.run(["sh", "-c", "exit 3"], run_dir=tmp_path / "a", echo=False, git_info=False, launch=fake)
    assert (r.outcome, r.exit_code) == ("fail", 3) and fake.calls == ["argv", "settle"]
    assert r.to_dict()["slurm"] == {"job_id": "1", "node": "n1"}
    fake = _FakeLaunch()
    r = runner.run(["sh", "hang"], run_dir=tmp_path / "b", echo=False, git_info=False, timeout=0.5, grace=0.5,
                   captures=["py-spy"], launch=fake)
    assert r.outcome == "hang" and fake.calls == ["argv", ("on_hang", ("py-spy",)), "settle"]
    assert [c["name"] for c in r.captures] == ["py-spy@n1"]  # the node's captures, not the local tree's


def test_cli_refuses_bad_slurm_options_in_one_line(tmp_path):
    p = run_cli("run", "--slurm", "-J mine", "--", "true", cwd=tmp_path)
    assert p.returncode == 2 and p.stderr.strip().count("\n") == 0 and "-J is not allowed" in p.stderr
    assert not (tmp_path / ".dbglog").exists()
    p = run_cli("bisect", "git", "--good", "HEAD~1", "--bad", "HEAD", "--slurm", "", "--launcher", "srun",
                "--", "true", cwd=tmp_path)
    assert p.returncode == 2 and "use one" in p.stderr and "Traceback" not in p.stderr


# --- against a real slurmctld + slurmd --------------------------------------------------------------

@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = SlurmCluster(tmp_path_factory.mktemp("slurm"))
    try:
        c.start()
    except Unavailable as e:
        pytest.skip(f"no real Slurm here: {e}")
    old = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = c.env["SLURM_CONF"]  # the CLI subprocesses and the client tools find it
    yield c
    if old is None:
        os.environ.pop("SLURM_CONF", None)
    else:
        os.environ["SLURM_CONF"] = old
    c.stop()


def _procs_with(token: str) -> list[str]:
    out = []
    for p in psutil.process_iter(["cmdline", "status"]):
        try:
            if p.info["status"] != psutil.STATUS_ZOMBIE and token in " ".join(p.info["cmdline"] or []):
                out.append(f"{p.pid} {' '.join(p.info['cmdline'])}")
        except psutil.Error:
            pass
    return out


def _run(cwd, *args):
    p = run_cli("run", "--json", "-q", *args, cwd=cwd, timeout=180)
    assert p.stdout, p.stderr
    return p, json.loads(p.stdout)


def test_exit_code_and_signal_come_back_through_srun(cluster, tmp_path):
    p, d = _run(tmp_path, "--slurm", "", "--", "sh", "-c", "exit 3")
    assert (d["outcome"], d["exit_code"]) == ("fail", 3)
    assert d["cmd"] == ["srun", "sh", "-c", "exit 3"]  # as it ran, minus the per-run job name
    assert d["slurm"]["node"] == cluster.node and d["slurm"]["state"] == "FAILED" and d["slurm"]["job_id"]
    p, d = _run(tmp_path, "--slurm", "-n1", "--", "sh", "-c", "kill -SEGV $$")
    assert (d["outcome"], d["signal"]) == ("crash", 11)
    assert cluster.active_jobs() == []


def test_timeout_cancels_the_job_step_and_captures_on_its_node(cluster, tmp_path):
    token = f"dbglog-slurm-hang-{uuid.uuid4().hex[:8]}"
    p, d = _run(tmp_path, "--slurm", "", "--timeout", "3", "--grace", "1", "--capture", "py-spy",
                "--on-hang", "echo job={jobid} node={node} pid={pid}", "--",
                "python3", "-c", "import sys, time; time.sleep(600)", token)
    assert d["outcome"] == "hang"
    s = d["slurm"]
    assert s["cancelled"] and s["left"] == [] and s["gone_after_s"] is not None and s["node"] == cluster.node
    assert s["state"] == "CANCELLED"
    assert cluster.active_jobs() == [] and _procs_with(token) == []
    cap = next(c for c in d["captures"] if c["name"] == f"py-spy@{cluster.node}")
    text = Path(cap["path"]).read_text()
    assert f"on {cluster.node}" in text and "py-spy dump --pid" in text  # it ran there, on the job's python
    if cap["status"] == "ok":
        assert "sleep" in text or "<module>" in text
    mine = next(c for c in d["captures"] if c["name"] == f"on_hang:1@{cluster.node}")
    line = Path(mine["path"]).read_text().strip()  # {pid}: the job's process on that node
    assert re.fullmatch(rf"job={s['job_id']} node={re.escape(cluster.node)} pid=\d+", line), line


def test_sigterm_to_dbglog_cancels_the_job(cluster, tmp_path):
    token = f"dbglog-slurm-term-{uuid.uuid4().hex[:8]}"
    p = subprocess.Popen([sys.executable, "-m", "dbglog", "run", "--slurm", "", "--json", "-q", "--",
                          "python3", "-c", "import time; time.sleep(600)", token], cwd=tmp_path, env=cli_env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any("RUNNING" in j for j in cluster.active_jobs()):
            time.sleep(0.1)
        assert any("RUNNING" in j for j in cluster.active_jobs()), "the step never started"
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 128 + signal.SIGTERM, err
    run = json.loads(out)["runs"][0]
    assert run["outcome"] == "error" and "interrupted by SIGTERM" in run["error"]
    assert run["slurm"]["cancelled"] and run["slurm"]["node"] == cluster.node and run["slurm"]["left"] == []
    assert cluster.active_jobs() == [] and _procs_with(token) == []


@pytest.mark.parametrize("mode", [("--slurm", ""), ("--launcher", "srun -n1")])  # an srun launcher is the mode
def test_bisect_toggles_env_reaches_the_step_on_the_node(cluster, tmp_path, mode):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    p = run_cli("bisect", "toggles", "--env", "A=1", "--env", "B=1", "--env", "C=1", *mode, "--jobs", "2",
                "--json", "--", "sh", "-c", 'test -z "$B" || { echo "RuntimeError: B" >&2; exit 1; }',
                cwd=tmp_path, timeout=300)
    res = json.loads(p.stdout)
    assert p.returncode == 0 and res["sets"] == [["B"]], p.stderr
    db = sqlite3.connect(tmp_path / ".dbglog" / "dbglog.db")
    runs = [json.loads(r[0]) for r in db.execute("SELECT result FROM runs")]
    db.close()
    assert runs and all(r["slurm"]["node"] == cluster.node and r["cmd"][0] == "srun" for r in runs)
    assert cluster.active_jobs() == []


def test_still_pending_at_the_timeout_is_not_a_hang(cluster, tmp_path):
    p, d = _run(tmp_path, "--slurm", "--begin=now+600", "--timeout", "2", "--", "true")
    assert d["outcome"] == "error" and "PENDING" in d["error"] and "never ran" in d["error"]
    assert cluster.active_jobs() == []


def test_an_allocation_slurm_refuses_is_an_error(cluster, tmp_path):
    p, d = _run(tmp_path, "--slurm", "--partition=nosuchpartition", "--", "true")
    assert d["outcome"] == "error" and "srun could not start the step" in d["error"]


# --- bisect git --jobs 2 on the cluster ------------------------------------------------------------

def _history(repo: Path, n: int, culprit: int) -> None:
    def git(*a):
        subprocess.run(["git", *a], cwd=repo, check=True, capture_output=True)

    repo.mkdir()
    git("init", "-q", "-b", "main")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    for i in range(n):
        (repo / "version.txt").write_text(f"{i}\n")
        if i == culprit:
            (repo / "bug").write_text("the bug\n")
        git("add", "-A")
        git("commit", "-q", "-m", f"commit {i}")
    git("tag", "good", f"HEAD~{n - 1}")


@pytest.fixture(scope="module")
def bisected(cluster, tmp_path_factory):
    base = tmp_path_factory.mktemp("slurm-bisect")
    repo, scratch = base / "repo", base / "scratch"
    _history(repo, 8, culprit=5)
    token = f"dbglog-slurm-bisect-{uuid.uuid4().hex[:8]}"
    # 2 s per run, so two allocations that run at once overlap in Slurm's own (1 s) start/end times
    script = f"sleep 2; test ! -f bug || {{ echo 'AssertionError: the bug' >&2; exit 1; }} # {token}"
    p = run_cli("bisect", "git", "--good", "good", "--bad", "HEAD", "--jobs", "2", "--slurm", "-n1", "--scratch",
                scratch, "--timeout", "60", "--json", "--", "sh", "-c", script, cwd=repo, timeout=300)
    db = sqlite3.connect(repo / ".dbglog" / "dbglog.db")
    records = [json.loads(r[0]) for r in db.execute("SELECT result FROM runs")]
    db.close()
    return {"proc": p, "result": json.loads(p.stdout) if p.stdout else None, "runs": records, "token": token,
            "repo": repo, "scratch": scratch, "jobs_after": cluster.active_jobs(), "procs_after": _procs_with(token)}


def test_bisect_git_jobs2_on_slurm_finds_the_culprit_and_leaves_nothing(bisected):
    res, p = bisected["result"], bisected["proc"]
    assert res is not None, p.stderr
    assert p.returncode == 0, p.stderr
    culprit = subprocess.run(["git", "rev-parse", "HEAD~2"], cwd=bisected["repo"], capture_output=True,
                             text=True).stdout.strip()
    assert res["first_bad"]["commit"] == culprit
    assert bisected["jobs_after"] == [] and bisected["procs_after"] == []
    runs = bisected["runs"]
    assert runs and all(r.get("slurm") and r["slurm"]["node"] for r in runs)
    assert all(r["cwd"].startswith(str(bisected["scratch"])) for r in runs)  # worktrees on the scratch path
    assert not any(bisected["scratch"].iterdir())  # and removed at the end


def test_jobs2_runs_two_allocations_at_once(bisected):
    spans = sorted((r["slurm"]["start"], r["slurm"]["end"], r["slurm"]["job_id"]) for r in bisected["runs"])
    assert len({j for _, _, j in spans}) == len(spans)  # every run its own allocation
    overlapping = [(a, b) for i, a in enumerate(spans) for b in spans[i + 1:] if b[0] < a[1] and a[0] < b[1]]
    assert overlapping, spans
