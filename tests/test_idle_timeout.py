"""--idle-timeout: alive but silent for S seconds is a hang (runner.run), detected within S + 2 s."""

from __future__ import annotations

import sys
import time

from conftest import assert_none_alive, recorded_pids, run_cli_inproc
from dbglog.run import runner

PY = sys.executable
# Talks, starts a silent child, then both go quiet (a pid file each, for the survivor check).
QUIET = r"""
import os, subprocess, sys, time
d = os.environ["DBGLOG_TEST_PIDS"]
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
for p in (os.getpid(), child.pid):
    open(os.path.join(d, "%d.pid" % p), "w").close()
print("working", flush=True)
time.sleep(60)
"""
# Prints every 0.05 s for 2.5 s of its own: longer than the 1.5 s idle limit in all, never silent for
# a thirtieth of it, so only a reset clock lets it pass (the interpreter's start-up, before the first
# line, stays far under the limit on a loaded machine too).
CHATTY = ("import time\nt = time.monotonic()\nwhile time.monotonic() - t < 2.5:\n"
          "    print(1, flush=True)\n    time.sleep(0.05)\n")


def test_silent_tree_is_a_hang_within_s_plus_2_and_names_the_quiet_processes(tmp_path, pid_dir):
    idle = 1.0
    t0 = time.monotonic()
    r = runner.run([PY, "-c", QUIET], run_dir=tmp_path / "run", idle_timeout=idle, grace=1.0, echo=False,
                   git_info=False, captures=["faulthandler"])
    assert r.outcome == "hang" and r.survivors == []
    stream = r.idle["streams"][0]
    assert stream["role"] == "client" and idle <= stream["silent_s"] < idle + 2
    assert {p["pid"] for p in stream["processes"]} == set(recorded_pids(pid_dir))  # which ones went quiet
    assert "idle for 1s" in r.idle["summary"] and r.idle["summary"] in r.notes
    assert any(c["name"].startswith("faulthandler") and c["status"] == "ok" for c in r.captures)
    assert time.monotonic() - t0 < 30  # nowhere near the script's 60 s sleep
    assert_none_alive(pid_dir)


def test_output_resets_the_idle_clock(tmp_path):
    r = runner.run([PY, "-c", CHATTY], run_dir=tmp_path / "run", idle_timeout=1.5, echo=False, git_info=False)
    assert r.outcome == "pass" and r.idle is None


def test_cli_refuses_a_nonsense_idle_timeout(workdir):
    # (the CLI's exit 124 on an idle hang is covered end to end in test_server_mode.py)
    bad = run_cli_inproc(workdir, "run", "--idle-timeout", "-3", "--", PY, "-c", "pass")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
