"""`dbglog bisect abort` from another terminal while an --in-place bisection is mid-trial."""

import json
import subprocess
import sys
import time

import psutil

from conftest import cli_env, run_cli

SLOW_STEP = """\
import pathlib, sys, time
pathlib.Path(sys.argv[1]).touch()          # tell the test a trial is running
x = 1  # dbglog: suspect a
y = 2  # dbglog: suspect b
time.sleep(600)                            # a slow trial: the abort lands in the middle of it
"""


def test_abort_stops_the_live_driver_and_restores_files(workdir):
    src = workdir / "step.py"
    src.write_text(SLOW_STEP)
    original = src.read_bytes()
    assert run_cli("init", cwd=workdir).returncode == 0
    started = workdir / "trial-running"
    driver = subprocess.Popen([sys.executable, "-m", "dbglog", "bisect", "toggles", "--in-place", "--suspects",
                               "step.py", "--timeout", "300", "--", sys.executable, "step.py", str(started)],
                              cwd=workdir, env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              stdin=subprocess.DEVNULL)
    try:
        # Wait for the first trial's repro to report in (bounded poll on its marker file).
        deadline = time.monotonic() + 120
        while not started.exists():
            assert driver.poll() is None, "the bisection ended before any trial"
            assert time.monotonic() < deadline, "no trial started"
            time.sleep(0.02)
        r = run_cli("bisect", "abort", "--json", cwd=workdir, timeout=120)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["status"] == "aborted"
        assert driver.wait(60) is not None  # the driver is gone...
        assert src.read_bytes() == original  # ...and the file is byte-identical
        leftovers = [p for p in psutil.process_iter(["cmdline"])
                     if str(started) in " ".join(p.info["cmdline"] or [])]
        assert leftovers == []
        st = json.loads(run_cli("bisect", "status", "--json", cwd=workdir).stdout)
        assert st["status"] == "aborted"
    finally:
        if driver.poll() is None:
            driver.kill()
