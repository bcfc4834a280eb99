"""Issue 17: a misspelled option before `--` is a typo, not the repro command.

`dbglog run --timout 5 -- python repro.py` used to run `--timout` as the command ("command not
found: --timout") and record an ERROR run. It must say "no such option: --timout (did you mean
--timeout?)", exit 2, and record nothing (not even create a workspace)."""

import json
import sqlite3

import pytest

from conftest import run_cli, run_cli_inproc

CASES = [
    (["run", "--timout", "5", "--", "python", "repro.py"], "--timout", "--timeout"),
    (["run", "--timeout", "5", "--qiuet", "--", "python", "repro.py"], "--qiuet", "--quiet"),
    (["run", "--repaet=3", "python", "repro.py"], "--repaet", "--repeat"),
    (["bisect", "git", "--good", "HEAD~1", "--bad", "HEAD", "--jbos", "2", "--", "true"], "--jbos", "--jobs"),
    (["bisect", "toggles", "--env", "X=1", "--timout", "5", "--", "true"], "--timout", "--timeout"),
    (["bisect", "toggles", "--ennv", "X=1", "--", "true"], "--ennv", "--env"),
]


@pytest.mark.parametrize("args, typo, meant", CASES)
def test_typo_before_the_command_is_refused_and_nothing_recorded(workdir, args, typo, meant):
    r = run_cli_inproc(workdir, *args)  # (refused before anything runs: in-process is enough)
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"dbglog: no such option: {typo} (did you mean {meant}?)"), lines
    assert not (workdir / ".dbglog").exists()  # nothing recorded, no workspace created


def test_typo_in_an_existing_workspace_records_no_run(workdir):
    assert run_cli_inproc(workdir, "init").returncode == 0
    r = run_cli_inproc(workdir, "run", "--json", "--timout", "5", "--", "python", "repro.py")
    assert r.returncode == 2 and json.loads(r.stdout)["error"].startswith("no such option: --timout")
    con = sqlite3.connect(workdir / ".dbglog" / "dbglog.db")
    assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM bisect_sessions").fetchone()[0] == 0
    con.close()
    assert not list((workdir / ".dbglog" / "runs").iterdir())


def test_options_of_the_repro_after_the_double_dash_are_the_repro_s(workdir):
    r = run_cli("run", "--json", "--", "python", "-c", "import sys; sys.exit(0)", "--timout", cwd=workdir)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["cmd"] == ["python", "-c", "import sys; sys.exit(0)", "--timout"]
