"""`dbglog rerun` runs a record again as it was made: every option that shaped the run (an idle
timeout, the grace, the hang captures, ...), and never a secret's placeholder in the secret's place."""

import json
import sqlite3

from conftest import run_cli_inproc

TOKEN = "hf_abcdefghijklmnopqrstuvwxyz12"


def _last_run(ws) -> str:
    con = sqlite3.connect(ws / ".dbglog" / "dbglog.db")
    (rid,) = con.execute("SELECT id FROM runs ORDER BY started DESC LIMIT 1").fetchone()
    con.close()
    return rid


def _run_count(ws) -> int:
    con = sqlite3.connect(ws / ".dbglog" / "dbglog.db")
    (n,) = con.execute("SELECT COUNT(*) FROM runs").fetchone()
    con.close()
    return n


def test_rerun_keeps_the_idle_timeout_grace_and_hang_commands_of_the_run(ws):
    # silent for good: only the idle timeout ends it (before: the rerun waited the whole sleep and passed)
    r = run_cli_inproc(ws, "run", "-q", "--json", "--idle-timeout", "1", "--grace", "1", "--on-hang",
                       "echo captured {pid}", "--", "sleep", "20")
    assert r.returncode == 124 and json.loads(r.stdout)["idle"], r.stderr
    again = run_cli_inproc(ws, "rerun", _last_run(ws), "--json")
    assert again.returncode == 124, again.stderr
    d = json.loads(again.stdout)  # (one run: its record at the top)
    assert d["outcome"] == "hang" and d["idle"]["after_s"] == 1
    assert d["options"]["grace"] == 1 and d["options"]["on_hang"] == ["echo captured {pid}"]


def test_rerun_of_a_run_recorded_without_its_options_keeps_the_idle_timeout_it_shows(ws):
    assert run_cli_inproc(ws, "run", "-q", "--idle-timeout", "1", "--", "sleep", "20").returncode == 124
    rid = _last_run(ws)
    con = sqlite3.connect(ws / ".dbglog" / "dbglog.db")  # as an older dbglog recorded it
    (result,) = con.execute("SELECT result FROM runs WHERE id = ?", (rid,)).fetchone()
    con.execute("UPDATE runs SET result = ? WHERE id = ?",
                (json.dumps({k: v for k, v in json.loads(result).items() if k != "options"}), rid))
    con.commit()
    con.close()
    again = run_cli_inproc(ws, "rerun", rid, "--json")
    assert again.returncode == 124 and json.loads(again.stdout)["outcome"] == "hang", again.stderr


def test_rerun_takes_a_redacted_variable_from_the_environment_or_refuses_in_one_line(ws, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    check = ["--", "sh", "-c", f'test "$HF_TOKEN" = {TOKEN[:3]}"{TOKEN[3:]}"']  # (the command itself shows no secret)
    assert run_cli_inproc(ws, "run", "-q", "--env", f"HF_TOKEN={TOKEN}", *check).returncode == 0
    rid, before = _last_run(ws), _run_count(ws)
    refused = run_cli_inproc(ws, "rerun", rid)
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert "HF_TOKEN" in refused.stderr and "export HF_TOKEN" in refused.stderr
    assert _run_count(ws) == before  # nothing ran (before: ran with HF_TOKEN=<redacted> and compared the rate)
    again = run_cli_inproc(ws, "rerun", rid, env={"HF_TOKEN": TOKEN})
    assert again.returncode == 0, again.stderr  # the real value reached the repro


def test_rerun_refuses_a_command_that_held_a_redacted_secret(ws):
    assert run_cli_inproc(ws, "run", "-q", "--env", f"HF_TOKEN={TOKEN}", "--", "sh", "-c",
                          f'test "$HF_TOKEN" = {TOKEN}').returncode == 0
    rid, before = _last_run(ws), _run_count(ws)
    refused = run_cli_inproc(ws, "rerun", rid, env={"HF_TOKEN": TOKEN})
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert "command" in refused.stderr and "<redacted>" in refused.stderr and "Traceback" not in refused.stderr
    assert _run_count(ws) == before


def test_rerun_of_a_slurm_run_launches_it_through_slurm_once():
    from dbglog import ops
    from dbglog.run.options import RunOptions

    recorded = RunOptions(slurm="-N 1 --gres=gpu:1", timeout=60).record()
    run = {"cmd": ["srun", "-N", "1", "--gres=gpu:1", "./repro.sh"], "cwd": "/", "env_overrides": {},
           "options": recorded}  # the command as it ran: srun's words in front
    cmd, opts, _env, _cwd = ops.rerun_options(run, 1)
    assert cmd == ["./repro.sh"] and opts.slurm == "-N 1 --gres=gpu:1" and opts.timeout == 60
