"""Hang captures reach every bisection step (issue 6: steps use the runner's captures too)."""

import json
import sqlite3
import sys

from conftest import run_cli

HANGS_WITH_BOTH = """
import os, time
if os.environ.get("A") == "1" and os.environ.get("B") == "1":
    time.sleep(600)
"""


def test_toggle_bisection_steps_run_hang_captures(workdir):
    (workdir / "repro.py").write_text(HANGS_WITH_BOTH)
    r = run_cli("bisect", "toggles", "--env", "A=1", "--env", "B=1", "--env", "C=1", "--timeout", "1",
                "--grace", "0.5", "--capture", "faulthandler", "--json", "--", sys.executable, "repro.py",
                cwd=workdir, timeout=300)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["status"] == "complete"
    con = sqlite3.connect(workdir / ".dbglog" / "dbglog.db")
    hangs = [json.loads(x[0]) for x in con.execute("SELECT result FROM runs WHERE outcome = 'hang'")]
    con.close()
    assert hangs, "the failing end and the confirmations hang"
    for h in hangs:
        dumps = [c for c in h["captures"] if c["name"].startswith("faulthandler:") and c["status"] == "ok"]
        assert dumps, h["captures"]
        assert "repro.py" in open(dumps[0]["path"]).read()  # the Python stack of the hung step
