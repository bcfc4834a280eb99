"""Shared by the hostile probes (tests/hostile/): the entry point run in this process, the bytes a
user's text must never carry, the snapshot of everything an error must leave as it was, and a small
recorded workspace."""

import sqlite3
from pathlib import Path

from conftest import run_cli_inproc


def dbg(*args, cwd, env=None):
    """The same entry point in this process (a Python start-up saved per call); run_cli stays for runs of a
    repro, the SIGALRM pattern budget and shell scripts."""
    return run_cli_inproc(cwd, *args, env=env)


BAD = ("\x00", "\x1b", "\x07", "\x08", "\x9b", "\r")


TABLES = ("investigations", "attempts", "differences", "next_steps", "runs", "bisect_sessions", "bisect_trials",
          "mirror_files", "imports", "import_items", "toggle_journal")


def snapshot(ws: Path) -> dict:
    """Everything an error must leave as it was."""
    out = {}
    for p in sorted(ws.rglob("*")):
        rel = p.relative_to(ws).as_posix()
        if rel.startswith((".dbglog/dbglog.db", ".dbglog/cache", ".dbglog/search-vocab", ".git/")) or rel == ".git":
            continue
        out[rel] = p.read_bytes() if p.is_file() else "dir"
    con = sqlite3.connect(ws / ".dbglog" / "dbglog.db")
    for t in TABLES:
        out[f"db:{t}"] = sorted(map(repr, con.execute(f"SELECT * FROM {t}")))
    con.close()
    return out


def one_line_error(r, args):
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2, (args, r.returncode, r.stdout, r.stderr)
    assert len(lines) == 1 and lines[0].startswith("dbglog: "), (args, r.stderr)
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, (args, r.stderr)
    for b in BAD:
        assert b not in r.stderr, (args, r.stderr)


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


def server_run(ws: Path, says: str, server_args: str = "") -> dict:
    """`dbglog run --server` in ``ws`` with a server whose Python body ``says`` (lines, run first), that then
    marks itself ready (the file `up`) and serves until stopped; the client passes. The run's --json record."""
    import json
    import sys

    serve = ws / "serve.py"
    serve.write_text(says + "open('up', 'w').close()\nimport time\ntime.sleep(60)\n")
    assert run_cli_inproc(ws, "init").returncode == 0
    r = run_cli_inproc(ws, "run", "--json", "--server", f"{sys.executable} {serve} {server_args}".strip(), "--ready",
                       "test -e up", "--ready-timeout", "60", "--", sys.executable, "-c", "pass")
    run = json.loads(r.stdout)
    assert run["outcome"] == "pass", run
    return run
