"""A run's record is cleaned once, where it is stored (``redact.clean_run``), and no secret of its
argv, environment or output reaches the database row, the run folder or the mirror in `logs/`."""

import json
import sqlite3
import sys

from conftest import run_cli_inproc
from dbglog.util import redact

TOKEN = "hf_" + "Zq7" * 10
ENV_SECRET = "s3cr3t-env-value-" + "9" * 8
PASSWORD = "pw-" + "Q1w2E3" * 3

REPRO = """
import os, sys
print("token", os.environ.get("HF_TOKEN"), "argv", sys.argv[1:])
print("auth: Bearer", os.environ.get("MY_SERVICE_PASSWORD"), file=sys.stderr)
sys.exit(1)
"""


def _everything(ws) -> dict[str, bytes]:
    out = {str(p.relative_to(ws)): p.read_bytes() for p in [*(ws / "logs").rglob("*"), *(ws / ".dbglog" / "runs").rglob("*")]
           if p.is_file()}
    con = sqlite3.connect(ws / ".dbglog" / "dbglog.db")
    for table in ("runs", "attempts", "investigations"):
        for row in con.execute(f"SELECT * FROM {table}"):
            out[f"db:{table}"] = out.get(f"db:{table}", b"") + repr(row).encode()
    con.close()
    return out


def test_a_runs_secrets_reach_no_row_no_run_file_and_no_mirror(tmp_path):
    ws = tmp_path / "w"
    ws.mkdir()
    run_cli_inproc(ws, "new", "leaky repro", "--no-env", check=0)
    (ws / "repro.py").write_text(REPRO)
    r = run_cli_inproc(ws, "run", "-q", "--attempt", "leak check", "--env", f"HF_TOKEN={TOKEN}",
                       "--env", f"MY_SERVICE_PASSWORD={ENV_SECRET}", "--", sys.executable, "repro.py",
                       f"--password={PASSWORD}", "--token", TOKEN)
    assert r.returncode == 1, r.stderr
    found = _everything(ws)
    assert "db:runs" in found and any(k.endswith("stdout") for k in found) and any(k.endswith(".md") for k in found)
    for where, data in found.items():
        for s in (TOKEN, ENV_SECRET, PASSWORD):
            assert s.encode() not in data, (where, s)
    row = json.loads(sqlite3.connect(ws / ".dbglog" / "dbglog.db").execute("SELECT result FROM runs").fetchone()[0])
    assert row["env_overrides"]["HF_TOKEN"] == redact.REDACTED and redact.REDACTED in " ".join(row["cmd"])


def _raw_run(run_id: str) -> dict:
    return {"id": run_id, "cmd": ["python", "x.py", "--api-key", "abcdef123456"], "cwd": "/w",
            "env_overrides": {"HF_TOKEN": TOKEN}, "started": "2026-01-01T00:00:00Z", "duration_s": 0.1,
            "outcome": "fail", "signature": None, "exit_code": 1, "signal": None, "git_commit": None,
            "git_dirty": None, "notes": [f"printed {TOKEN}"], "key_lines": [{"line": 1, "text": f"tok {TOKEN}"}]}


def test_a_raw_record_is_cleaned_where_it_is_stored_and_a_cleaned_one_only_once(tmp_path, monkeypatch):
    """A bisection's step hands insert_run the runner's raw record: cleaned there. ``record_runs``
    (dbglog run) cleaned its records and insert_run cleaned them again (twice per run)."""
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace

    recs = Records(Workspace(tmp_path / ".dbglog"), create=True)
    calls = []
    real = redact.clean_obj
    monkeypatch.setattr(redact, "clean_obj", lambda v: (calls.append(v) if isinstance(v, dict) and "env_overrides" in v
                                                        else None, real(v))[1])
    with recs.store.write():
        recs.store.insert_run(_raw_run("r1"), "")  # the bisection path
    assert len(calls) == 1
    recs.record_runs([_raw_run("r2")], [""])  # the `dbglog run` path
    assert len(calls) == 2  # before: 3 (record_runs, then insert_run again)
    rows = [r[0] for r in recs.store.q("SELECT result || cmd FROM runs")]
    assert len(rows) == 2 and not any(TOKEN in r or "abcdef123456" in r for r in rows)
    recs.close()


def test_clean_run_marks_and_a_changed_record_is_cleaned_again():
    c = redact.clean_run(_raw_run("r3"))
    assert isinstance(c, redact.Cleaned) and redact.clean_run(c) is c and TOKEN not in json.dumps(c)
    changed = c | {"notes": [f"late {TOKEN}"]}
    assert not isinstance(changed, redact.Cleaned) and TOKEN not in json.dumps(redact.clean_run(changed))
