"""One supervision for every entry point (issue 30): a stop signal reaches a run supervised on any
thread; a kill -9 of dbglog does not leave the repro running -- the kernel stops its root at once
(parent-death signal) and the next command stops the rest and records the run as interrupted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from conftest import REPROS, cli_env, recorded_pids, run_cli
from tree_guard import tree_guard  # noqa: F401 - kills what a probe started, pass or fail


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return False


def _wait(cond, what: str, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_a_stop_asked_from_the_main_thread_stops_a_run_on_a_worker_thread(tmp_path, pid_dir):
    from dbglog.run import proctree, runner

    box: dict = {}

    def work():
        try:
            runner.run([sys.executable, str(REPROS / "long_tree.py")], run_dir=tmp_path / "run", echo=False,
                       timeout=600, grace=1.0)
        except runner.Interrupted as e:
            box["stopped"] = e

    t = threading.Thread(target=work)
    t.start()
    _wait(lambda: (pid_dir / "started").exists(), "the repro to start")
    assert proctree.stop_all(signal.SIGTERM) == 1
    t.join(60)
    assert not t.is_alive() and box["stopped"].signum == signal.SIGTERM
    assert "interrupted by SIGTERM" in box["stopped"].result.error
    assert not [p for p in recorded_pids(pid_dir) if _alive(p)]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_kill_9_of_dbglog_run_leaves_no_repro_and_the_next_command_records_it(workdir, pid_dir):
    assert run_cli("init", cwd=workdir).returncode == 0
    p = subprocess.Popen([sys.executable, "-m", "dbglog", "run", "--quiet", "--", sys.executable,
                          str(REPROS / "long_tree.py")], cwd=workdir, env=cli_env(), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        _wait(lambda: (pid_dir / "started").exists(), "the repro to start")
        root = int((pid_dir / "supervisor").read_text())
        assert root == p.pid
        os.kill(p.pid, signal.SIGKILL)
        p.wait(30)
    finally:
        if p.poll() is None:
            p.kill()
    pids = recorded_pids(pid_dir)
    repro_root = min(pids)  # (the root started first)
    _wait(lambda: not _alive(repro_root), "the kernel to stop the repro's root (parent-death signal)", 10)
    q = run_cli("runs", "list", "--json", cwd=workdir)
    assert q.returncode == 0
    assert not [x for x in pids if _alive(x)]  # the rest stopped by the next command
    runs = json.loads(q.stdout)
    assert len(runs) == 1 and runs[0]["outcome"] == "error"
    shown = json.loads(run_cli("runs", "show", runs[0]["id"], "--json", cwd=workdir).stdout)
    assert "was killed" in (shown.get("error") or "")
    assert q.stderr.count("supervised by a dbglog that was killed") == 1


def test_an_orphaned_run_is_recorded_once_by_concurrent_commands(workdir, pid_dir):
    """Two commands that find the same orphan: one claims it (a rename), the other leaves it."""
    assert run_cli("init", cwd=workdir).returncode == 0
    p = subprocess.Popen([sys.executable, "-m", "dbglog", "run", "--quiet", "--", sys.executable,
                          str(REPROS / "long_tree.py")], cwd=workdir, env=cli_env(), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    _wait(lambda: (pid_dir / "started").exists(), "the repro to start")
    os.kill(p.pid, signal.SIGKILL)
    p.wait(30)
    both = [subprocess.Popen([sys.executable, "-m", "dbglog", "runs", "list", "--json"], cwd=workdir, env=cli_env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [b.communicate(timeout=60) for b in both]
    assert sum(err.count("supervised by a dbglog that was killed") for _out, err in outs) == 1
    runs = json.loads(run_cli("runs", "list", "--json", cwd=workdir).stdout)
    assert len(runs) == 1


def test_a_run_and_a_server_shaped_runs_server_are_registered_before_they_start(tmp_path, monkeypatch):
    """Under load the repro (and its children) ran before its run was registered in .dbglog/live/: a kill -9 of
    dbglog in that window left the grandchild running with nothing to name it, and a kill -9 while a server got
    ready left the server's workers so. The entry is written before the spawn."""
    from probe_kit import server_run
    from dbglog.run import proctree, runner

    live = tmp_path / "live"
    seen = []
    real = proctree.start
    monkeypatch.setattr(proctree, "start", lambda spawn: seen.append(sorted(p.name for p in live.glob("*.json")))
                        or real(spawn))
    result = runner.run([sys.executable, "-c", "pass"], run_dir=tmp_path / "run", echo=False, timeout=60,
                        live_dir=live, run_id="r1")
    assert result.outcome == "pass" and seen == [["r1.json"]]
    monkeypatch.setattr(proctree, "start", real)

    run = server_run(tmp_path, "import os, sys\nrid = os.environ['DBGLOG_RUN_ID'].removesuffix('-server')\n"
                               "seen = os.path.exists(os.path.join('.dbglog', 'live', rid + '.json'))\n"
                               "print('REGISTERED' if seen else 'NOT REGISTERED', file=sys.stderr, flush=True)\n")
    out = (tmp_path / ".dbglog" / "runs" / run["id"] / "server" / "output").read_text()
    assert "REGISTERED" in out and "NOT REGISTERED" not in out
    assert not list((tmp_path / ".dbglog" / "live").glob("*.json"))  # each entry left once recorded
