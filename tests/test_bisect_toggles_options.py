"""`bisect toggles` with the shared execution options: --launcher, --build, --repeat (flaky)."""

import json
import sys

from conftest import run_cli

PAIR_VIA_LAUNCHER = """
import os, sys
if os.environ.get("VIA_LAUNCHER") != "1":
    sys.exit("not started through the launcher")
if os.environ.get("A") == "1" and os.environ.get("B") == "1":
    raise RuntimeError("CUDA error: an illegal memory access was encountered")
"""

FLAKY_WITH_A = """
import os, pathlib
counter = pathlib.Path(os.environ["COUNTER"])
n = int(counter.read_text()) if counter.exists() else 0
counter.write_text(str(n + 1))
if os.environ.get("A") == "1" and n % 2 == 0:
    raise RuntimeError("CUDA error: an illegal memory access was encountered")
"""


def test_launcher_and_build_run_for_every_trial(workdir):
    (workdir / "repro.py").write_text(PAIR_VIA_LAUNCHER)
    r = run_cli("bisect", "toggles", "--env", "A=1", "--env", "B=1", "--env", "C=1", "--env", "D=1",
                "--launcher", "env VIA_LAUNCHER=1", "--build", "echo built >> builds.log", "--json",
                "--", sys.executable, "repro.py", cwd=workdir, timeout=300)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["status"] == "complete"
    assert [sorted(s) for s in res["sets"]] == [["A", "B"]]
    builds = sum(1 for p in workdir.rglob("builds.log") for _ in p.read_text().splitlines())
    assert 4 <= res["trials"] <= builds <= res["runs"]  # one build before each trial's runs


def test_disagreeing_repeats_switch_to_bad_if_any(workdir):
    (workdir / "repro.py").write_text(FLAKY_WITH_A)
    r = run_cli("bisect", "toggles", "--env", "A=1", "--env", "B=1", "--repeat", "2", "--json",
                "--", sys.executable, "repro.py", cwd=workdir, env={"COUNTER": str(workdir / "n")}, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    res = json.loads(r.stdout)
    assert res["status"] == "complete" and res["sets"] == [["A"]]
    assert res["flaky"] and res["rule"] == "bad-if-any"
    assert res["failing_end"]["failed"] < res["failing_end"]["runs"]
    assert "intermittent" in res["message"] and "bad if any of" in res["message"]
