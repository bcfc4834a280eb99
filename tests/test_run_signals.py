"""SIGTERM or SIGHUP to `dbglog run` stops the whole process tree (no repro left running under PID 1)
and records the run as interrupted, as Ctrl-C does. (SIGHUP skips where it is inherited as ignored.)"""

import json
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import REPROS, STOP_SIGNALS, assert_none_alive, cli_env, recorded_pids, run_cli


@pytest.mark.parametrize("sig", STOP_SIGNALS)
def test_a_stop_signal_stops_the_tree_and_records_the_run(workdir, pid_dir, spawn, sig):
    assert run_cli("new", "signals", "--no-env", cwd=workdir).returncode == 0
    p = spawn([sys.executable, "-m", "dbglog", "run", "--grace", "1", "--attempt", "hang repro", "--",
                          sys.executable, str(REPROS / "hang_grandchild.py")], cwd=workdir, env=cli_env(),
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(recorded_pids(pid_dir)) < 2 and time.monotonic() < deadline:  # parent and child started
        time.sleep(0.05)
    assert len(recorded_pids(pid_dir)) == 2
    p.send_signal(sig)
    out, err = p.communicate(timeout=60)
    assert_none_alive(pid_dir)  # the child ignores SIGTERM: the tree kill had to SIGKILL it
    assert p.returncode == 128 + sig, (p.returncode, err)
    assert "Traceback" not in err and f"interrupted by {signal.Signals(sig).name}" in err, err
    con = sqlite3.connect(workdir / ".dbglog" / "dbglog.db")
    rows = con.execute("SELECT outcome, attempt_number, result FROM runs").fetchall()
    attempt = con.execute("SELECT outcome, result FROM attempts").fetchall()
    con.close()
    assert len(rows) == 1 and rows[0][0] == "error" and rows[0][1] == 1
    assert json.loads(rows[0][2])["error"].startswith(f"interrupted by {signal.Signals(sig).name}")
    assert attempt[0][0] == "inconclusive"  # an interrupted run is no evidence either way


def test_repeats_before_the_interruption_are_recorded_too(workdir, pid_dir, tmp_path, spawn):
    flag = tmp_path / "second"
    script = tmp_path / "r.py"
    script.write_text(
        "import os, sys, time\n"
        f"p = {str(flag)!r}\n"
        "if os.path.exists(p):\n"
        "    sys.path.insert(0, " + repr(str(REPROS)) + "); import _pids; _pids.record(); time.sleep(600)\n"
        "open(p, 'w').close()\n")
    p = spawn([sys.executable, "-m", "dbglog", "run", "--repeat", "3", "--", sys.executable, str(script)],
                         cwd=workdir, env=cli_env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not recorded_pids(pid_dir) and time.monotonic() < deadline:
        time.sleep(0.05)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert_none_alive(pid_dir)
    assert p.returncode == 143, err
    con = sqlite3.connect(workdir / ".dbglog" / "dbglog.db")
    outcomes = [r[0] for r in con.execute("SELECT outcome FROM runs ORDER BY started, id")]
    con.close()
    assert sorted(outcomes) == ["error", "pass"]
