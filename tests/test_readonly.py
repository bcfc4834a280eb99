"""A workspace this process cannot write (a colleague's checkout, a CI artifact, a read-only mount):
read commands read it as it stands, without creating a file (no -wal, no -shm, no migration, no
mirror refresh); write commands refuse with one line, exit 2, nothing changed.

The in-process tests make ``store.writable`` say no (root writes through any mode bits); the
end-to-end ones take the permission away for real: chmod, and for root a child without
CAP_DAC_OVERRIDE (``setpriv``), so the kernel refuses as it would refuse anyone else."""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import cli_env, run_cli_inproc

WRITES = [["attempt", "add", "x", "-r", "still hangs", "-o", "failed"], ["status", "resolved"], ["use", "nccl"],
          ["export"], ["sync"], ["next", "add", "try tree"], ["diff", "add", "GPUs", "4", "8"],
          ["run", "--", sys.executable, "-c", "open('ran', 'w')"], ["new", "another"], ["init"], ["reindex"],
          ["import", "doc.md"]]


def _make(tmp_path: Path) -> Path:
    ws = tmp_path / "w"
    ws.mkdir()
    for args in (["init"], ["new", "NCCL hang", "--no-env"],
                 ["attempt", "add", "Disable P2P", "-d", "NCCL_P2P_DISABLE=1", "-r", "still hangs", "-o", "failed"]):
        run_cli_inproc(ws, *args, check=0)
    from dbglog.kb import store

    store.close_all()  # as a process's exit does: the last close checkpoints and removes the WAL
    assert not (ws / ".dbglog" / "dbglog.db-wal").exists()
    return ws


def _files(ws: Path) -> dict:
    return {p.relative_to(ws).as_posix(): p.read_bytes() if p.is_file() else None
            for p in sorted(ws.rglob("*")) if ".git" not in p.parts}


def _rows(db: Path) -> list:
    con = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)  # (creates no -wal/-shm)
    try:
        return [list(map(repr, con.execute(f"SELECT * FROM {t}"))) for t in ("investigations", "attempts", "meta")]
    finally:
        con.close()


def _refused(r) -> None:
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert len(lines) == 1 and lines[0].startswith("dbglog: this workspace is read-only"), r.stderr
    assert "Traceback" not in r.stderr


# --- in process: the logic, with writable() saying no -------------------------------------------


@pytest.fixture
def ro(tmp_path, monkeypatch):
    ws = _make(tmp_path)
    from dbglog.kb import store

    monkeypatch.setattr(store, "writable", lambda path: False)
    return ws


def test_read_commands_read_a_workspace_they_cannot_write_and_create_no_file(ro):
    before = _files(ro)
    r = run_cli_inproc(ro, "list", "--json", check=0)
    assert [i["title"] for i in json.loads(r.stdout)] == ["NCCL hang"]
    assert "Disable P2P" in run_cli_inproc(ro, "show", check=0).stdout
    assert run_cli_inproc(ro, "tried", "disable p2p", check=0).stdout.startswith("Tried:")
    assert "Disable P2P" in run_cli_inproc(ro, "search", "P2P", check=0).stdout
    for args in (["attempt", "list"], ["runs", "list"], ["doctor"], ["next", "list"], ["diff", "list"]):
        run_cli_inproc(ro, *args, check=0)
    assert _files(ro) == before  # no -wal, no -shm, no journal, the mirror untouched


DOC = "# GPU hang\n\n## Attempts\n\n### 1. Disable P2P\nResult: still hangs\n"


@pytest.mark.parametrize("args", WRITES, ids=lambda a: " ".join(a[:2]))
def test_write_commands_refuse_a_read_only_workspace_in_one_line(ro, args):
    (ro / "doc.md").write_text(DOC)
    before, rows = _files(ro), _rows(ro / ".dbglog" / "dbglog.db")
    _refused(run_cli_inproc(ro, *args))
    assert _files(ro) == before and _rows(ro / ".dbglog" / "dbglog.db") == rows
    assert not (ro / "ran").exists()  # `run` refused before the command ran: it could not be recorded


def test_an_import_dry_run_reads_a_read_only_workspace(ro):
    (ro / "doc.md").write_text(DOC)
    before = _files(ro)
    r = run_cli_inproc(ro, "import", "doc.md", "--dry-run", "--json", check=0)
    assert [i["action"] for i in json.loads(r.stdout)["investigations"]] == ["create"]
    assert _files(ro) == before


def test_json_error_of_a_refused_write(ro):
    r = run_cli_inproc(ro, "status", "resolved", "--json")
    assert r.returncode == 2 and "read-only" in json.loads(r.stdout)["error"]


def test_a_hand_edit_the_read_only_database_cannot_take_in_is_said_not_hidden(ro):
    md = next((ro / "logs").glob("*.md"))
    md.write_text(md.read_text().replace("still hangs", "hangs at step 3"))
    r = run_cli_inproc(ro, "show", check=0)
    assert "differs from the database" in r.stderr and md.name in r.stderr
    # the same bytes with a new mtime (a copy, a checkout) are no difference
    md.write_text(md.read_text().replace("hangs at step 3", "still hangs"))
    os.utime(md, (1, 1))
    assert "differs" not in run_cli_inproc(ro, "show", check=0).stderr


def test_an_old_schema_is_not_migrated_read_only(tmp_path, monkeypatch):
    ws = _make(tmp_path)
    db = ws / ".dbglog" / "dbglog.db"
    con = sqlite3.connect(db)
    con.execute("PRAGMA user_version = 3")
    con.close()
    from dbglog.kb import store

    monkeypatch.setattr(store, "writable", lambda path: False)
    r = run_cli_inproc(ws, "list")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "older dbglog" in r.stderr and "cannot be upgraded" in r.stderr, r.stderr
    assert sqlite3.connect(db).execute("PRAGMA user_version").fetchone()[0] == 3


# --- end to end: the kernel refuses the writes ------------------------------------------------------


def _reader_prefix() -> list[str]:
    if os.geteuid() != 0:
        return []
    drop = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]
    if shutil.which("setpriv") is None or subprocess.run([*drop, "true"], capture_output=True).returncode != 0:
        pytest.skip("running as root without setpriv: cannot take write permission away")
    return drop


def _reader(ws: Path, *args):
    return subprocess.run([*_reader_prefix(), sys.executable, "-m", "dbglog", *args], cwd=ws, capture_output=True,
                          text=True, env=cli_env(), stdin=subprocess.DEVNULL, timeout=120)


def _lock(ws: Path, what: str) -> None:
    paths = [ws / ".dbglog"] if what == "dir" else list((ws / ".dbglog").glob("dbglog.db*"))
    if what == "all":
        paths = [p for p in ws.rglob("*") if ".git" not in p.parts] + [ws]
    for p in paths:
        p.chmod(p.stat().st_mode & ~0o222)


def _unlock(ws: Path) -> None:
    for p in [ws, *ws.rglob("*")]:
        p.chmod(p.stat().st_mode | 0o200)


@pytest.mark.parametrize("what", ["dir", "db-file"])
def test_a_read_only_workspace_end_to_end(tmp_path, what):
    ws = _make(tmp_path)
    _lock(ws, what)
    try:
        before = _files(ws)
        r = _reader(ws, "tried", "--json", "disable p2p")
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["tried"] is True
        _refused(_reader(ws, "attempt", "add", "x", "-r", "y", "-o", "failed"))
        assert _files(ws) == before
    finally:
        _unlock(ws)


def _crashed_writer(ws: Path) -> None:
    """Record an attempt and die before the last connection closes: its commit stays in the WAL."""
    code = ("import os, sys; sys.argv = ['dbglog', 'attempt', 'add', 'NCCL_ALGO=Tree', '-r', 'still hangs', "
            "'-o', 'failed']\nfrom dbglog.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
            "os._exit(0)")
    subprocess.run([sys.executable, "-c", code], cwd=ws, env=cli_env(), check=True, capture_output=True,
                   stdin=subprocess.DEVNULL)
    assert (ws / ".dbglog" / "dbglog.db-wal").stat().st_size > 0


@pytest.mark.parametrize("shm", ["kept", "lost"])
def test_the_wal_of_a_crashed_writer_is_read_not_ignored(tmp_path, shm):
    ws = _make(tmp_path)
    _crashed_writer(ws)
    if shm == "lost":  # no -shm and no right to make one: read through a private copy
        (ws / ".dbglog" / "dbglog.db-shm").unlink()
    _lock(ws, "all")
    try:
        before = _files(ws)
        r = _reader(ws, "attempt", "list", "--json")
        assert r.returncode == 0, r.stderr
        assert [a["title"] for a in json.loads(r.stdout)] == ["Disable P2P", "NCCL_ALGO=Tree"]
        assert _files(ws) == before
    finally:
        _unlock(ws)


def test_a_long_lived_reader_sees_that_a_writer_changed_the_file(tmp_path, monkeypatch):
    """The MCP server keeps its store open: read ``immutable``, a file changed under it is opened again."""
    ws = _make(tmp_path)
    from dbglog.kb import store

    monkeypatch.setattr(store, "writable", lambda path: False)
    ro = store.Store(ws / ".dbglog" / "dbglog.db")
    assert ro.readonly and not ro.outdated()
    monkeypatch.undo()
    run_cli_inproc(ws, "attempt", "add", "NCCL_ALGO=Tree", "-r", "still hangs", "-o", "failed", check=0)
    assert ro.outdated()  # (a WAL now, or the file itself changed)
    ro.close()
    store.close_all()
    assert store.Store(ws / ".dbglog" / "dbglog.db", readonly=True).q("SELECT count(*) FROM attempts").fetchone()[0] == 2


def test_a_read_only_clone_without_dbglog_is_read_from_its_logs(tmp_path):
    """A CI artifact or a mount holding only logs/: read through a private temporary database."""
    ws = _make(tmp_path)
    shutil.rmtree(ws / ".dbglog")
    _lock(ws, "all")
    try:
        before = _files(ws)
        r = _reader(ws, "tried", "--json", "disable p2p")
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["tried"] is True
        _refused(_reader(ws, "new", "another"))
        assert _files(ws) == before  # no .dbglog/ appeared, logs/ untouched
    finally:
        _unlock(ws)
