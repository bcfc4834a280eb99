"""Hostile probes, third round (session 5, after the layout move): what broke, each failing on the code
before its fix.

* hand edits of `logs/`: an id that climbs out of `logs/` (`export` wrote `../../x.md` outside the
  workspace), an attempt number past SQLite's integers (an internal error on every command);
* an unlucky machine: a full disk while a repro prints (a traceback from the output thread, the run
  folder left behind while the line said "nothing was changed");
* hostile settings: a user `[[advice]]` regex that backtracks for ever or does not compile;
* what an agent can send that a shell cannot: NUL bytes, a NaN timeout, lone surrogates (MCP);
* a 100 KB command line given to the command hook.
"""

import json
import sys
import re
from pathlib import Path

import pytest

from conftest import run_cli
from test_probes import dbg, one_line_error


def _ws(tmp_path: Path) -> Path:
    ws = tmp_path / "outer" / "w"
    ws.mkdir(parents=True)
    for args in (["new", "NCCL hang", "--no-env"], ["attempt", "add", "p2p", "-r", "still hangs", "-o", "failed"]):
        assert dbg(*args, cwd=ws).returncode == 0, args
    return ws


def _log(ws: Path) -> Path:
    return next((ws / "logs").glob("*.md"))


def _every_file(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if ".git/" not in p.as_posix())


# --- hand edits of logs/ -----------------------------------------------------------------------


@pytest.mark.parametrize("bad_id", ["../../escaped", "/tmp/abs", "a/b", ".hidden", "x\x1b[2Jy", "x" * 300])
def test_an_id_that_is_not_a_file_name_is_refused_and_nothing_is_written_outside(tmp_path, bad_id):
    ws = _ws(tmp_path)
    md = _log(ws)
    text = md.read_text()
    md.write_text(re.sub(r"^id: .*$", lambda m: "id: " + json.dumps(bad_id), text, count=1, flags=re.M))
    outside = _every_file(tmp_path)
    for args in (["export"], ["list"], ["attempt", "add", "x", "-r", "y"]):
        r = dbg(*args, cwd=ws)
        one_line_error(r, args)
        assert "front matter id" in r.stderr and "names the file in logs/" in r.stderr, r.stderr
    assert _every_file(tmp_path) == outside  # before the fix: outer/escaped.md was written by export


def test_an_attempt_number_past_sqlite_integers_is_one_line(tmp_path):
    ws = _ws(tmp_path)
    md = _log(ws)
    md.write_text(md.read_text().replace("### Attempt 1:", "### Attempt 99999999999999999999999:"))
    for args in (["list"], ["sync"], ["attempt", "add", "x", "-r", "y"]):
        r = dbg(*args, cwd=ws)
        one_line_error(r, args)
        assert "attempt number 9999" in r.stderr and "too large" in r.stderr, r.stderr


# --- hostile settings ---------------------------------------------------------------------------


def _advice_config(tmp_path: Path, when: str) -> Path:
    cfg = tmp_path / "config.toml"
    cfg.write_text(f"[[advice]]\nid = 'evil'\nstep = 'do a thing'\nwhen = {when}\n")
    return cfg


@pytest.mark.parametrize("when", ["{ text = '(a+)+$' }", "{ evidence = 'kernel-log', finding = '(x+x+)+y' }"])
def test_a_user_advice_regex_that_backtracks_cannot_hang_a_run(tmp_path, monkeypatch, when):
    from dbglog.run import advice

    monkeypatch.setenv("DBGLOG_PATTERN_BUDGET", "0.2")  # the budget, not its length, is under test
    rules = [r for r in advice.load(_advice_config(tmp_path, when)) if r.id == "evil"]
    run = {"outcome": "fail", "evidence": [{"kind": "kernel-log", "summary": "x" * 40, "findings": []}]}
    ctx = advice.Context(run=run, text="a" * 40 + "!")
    assert advice.advise(ctx, rules) == []  # before: hours of backtracking after the attempt was recorded
    good = [r for r in advice.load(_advice_config(tmp_path, "{ text = 'a{4}!' }")) if r.id == "evil"]
    assert [a["id"] for a in advice.advise(ctx, good)] == ["evil"]  # (a user's regex still matches)


def test_a_user_advice_regex_past_cs_int_is_one_line(tmp_path):
    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("new", "x", "--no-env", cwd=ws).returncode == 0
    (ws / ".dbglog" / "config.toml").write_text(_advice_config(tmp_path, "{ text = 'a{4294967296}' }").read_text())
    r = run_cli("run", "-q", "--attempt", "t", "--", sys.executable, "-c", "raise SystemExit(3)", cwd=ws)
    one_line_error(r, "advice a{4294967296}")
    assert "bad regex in when.text" in r.stderr, r.stderr
    assert not any((ws / ".dbglog" / "runs").glob("*")), "refused before the repro ran"
