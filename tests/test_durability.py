"""Concurrency and crash safety with real processes and real SIGKILL."""

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from conftest import cli_env, run_cli
from dbglog.core import markdown

ADDER = textwrap.dedent("""
    import sys
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace
    ws, inv, n, tag = Workspace(__import__('pathlib').Path(sys.argv[1])), sys.argv[2], int(sys.argv[3]), sys.argv[4]
    recs = Records(ws)
    for k in range(n):
        recs.add_attempt(inv, title=f"{tag}-{k}", did="y" * int(sys.argv[5]) if len(sys.argv) > 5 else "x")
        print(k, flush=True)
""")


def make_inv(workdir):
    r = run_cli("new", "race target", "--no-env", "--json", cwd=workdir)
    assert r.returncode == 0, r.stderr
    import json

    return json.loads(r.stdout)


def test_eight_writers_fifty_attempts_each(workdir, spawn):
    inv = make_inv(workdir)
    procs = [spawn([sys.executable, "-c", ADDER, str(workdir / ".dbglog"), inv["id"], "50", f"p{i}"],
                              env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for i in range(8)]
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err.decode()
    con = sqlite3.connect(workdir / ".dbglog" / "dbglog.db")
    numbers = [r[0] for r in con.execute("SELECT number FROM attempts ORDER BY number")]
    titles = {r[0] for r in con.execute("SELECT title FROM attempts")}
    con.close()
    assert numbers == list(range(1, 401))
    assert titles == {f"p{i}-{k}" for i in range(8) for k in range(50)}
    parsed = markdown.parse((workdir / inv["path"]).read_text())
    assert [a.number for a in parsed.attempts] == list(range(1, 401))
    assert {a.title for a in parsed.attempts} == titles


def _state(workdir, inv):
    """(attempt numbers in the db, attempt numbers in the file) after a dbglog command synced them."""
    r = run_cli("list", "--json", cwd=workdir)
    assert r.returncode == 0, r.stderr
    con = sqlite3.connect(workdir / ".dbglog" / "dbglog.db")
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db = [row[0] for row in con.execute("SELECT number FROM attempts ORDER BY number")]
    con.close()
    text = (workdir / inv["path"]).read_text()
    return db, [a.number for a in markdown.parse(text).attempts]


def test_sigkill_mid_write_never_tears(workdir):
    inv = make_inv(workdir)
    big = "200000"  # bytes per attempt: each render+write takes a while, so kills land inside writes
    for round_ in range(8):
        p = subprocess.Popen([sys.executable, "-c", ADDER, str(workdir / ".dbglog"), inv["id"], "1000",
                              f"r{round_}", big], env=cli_env(), stdout=subprocess.PIPE)
        # Kill right after the child reports a finished write: the next one is in flight.
        for _ in range(1 + round_ % 3):
            assert p.stdout.readline()
        p.send_signal(signal.SIGKILL)
        p.wait()
        p.stdout.close()
        db, file_ = _state(workdir, inv)
        assert db == file_ == list(range(1, len(db) + 1))
    assert not [n for n in os.listdir(workdir / "logs") if n.endswith(".tmp")]


KILL_AT = textwrap.dedent("""
    import os, signal, sys
    import dbglog.kb.records as records
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace
    real = os.replace
    def replace(src, dst):
        if sys.argv[3] == "after":
            real(src, dst)
        os.kill(os.getpid(), signal.SIGKILL)
    records.os.replace = replace
    Records(Workspace(__import__('pathlib').Path(sys.argv[1]))).add_attempt(sys.argv[2], title="doomed")
""")


@pytest.mark.parametrize("when", ["before", "after"])
def test_sigkill_around_the_rename(workdir, when):
    """Before the rename: old file, db rolled back. After: new file, db behind -> sync imports it."""
    inv = make_inv(workdir)
    run_cli("attempt", "add", "kept", "--did", "x", cwd=workdir)
    p = subprocess.run([sys.executable, "-c", KILL_AT, str(workdir / ".dbglog"), inv["id"], when], env=cli_env())
    assert p.returncode == -signal.SIGKILL
    db, file_ = _state(workdir, inv)
    expected = [1] if when == "before" else [1, 2]
    assert db == file_ == expected


def test_startup_never_deletes_a_live_writers_temp_file(workdir):
    """Regression (seen in CI): a process starting up deleted another writer's in-flight temp file,
    whose rename then failed. Leftover temp files may only be removed under the write lock."""
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace

    make_inv(workdir)
    tmp = workdir / "logs" / ".20261121-x-abcd.md.live.tmp"
    tmp.write_text("a writer is filling this in")
    recs = Records(Workspace(workdir / ".dbglog"))
    assert tmp.exists()
    # Another process holds the write lock (it is mid-write): a reader must not touch the file.
    other = sqlite3.connect(workdir / ".dbglog" / "dbglog.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    recs.store.conn.execute("PRAGMA busy_timeout = 50")
    with pytest.raises(sqlite3.OperationalError):
        recs.sync()
    assert tmp.exists()
    other.execute("ROLLBACK")
    other.close()
    recs.store.conn.execute("PRAGMA busy_timeout = 60000")
    recs.sync()  # the lock is free: nobody can be writing it, so it is a leftover
    assert not tmp.exists()
    recs.close()


def test_a_database_with_damaged_pages_is_named_by_doctor_refused_in_one_line_and_rebuilt_by_reindex(tmp_path):
    """An adversarial probe: pages overwritten inside the database (its header intact) made `doctor` say healthy,
    every other command an internal error (exit 1), and `reindex --force`, the fix the docs give, crash too."""
    import sqlite3

    from conftest import run_cli_inproc

    ws = tmp_path / "w"
    ws.mkdir()
    assert run_cli_inproc(ws, "new", "crash", "--no-env").returncode == 0
    assert run_cli_inproc(ws, "attempt", "add", "first", "--did", "x", "-r", "still fails", "-o", "failed").returncode == 0
    db = ws / ".dbglog" / "dbglog.db"
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = con.execute("PRAGMA page_size").fetchone()[0]
    root = con.execute("SELECT rootpage FROM sqlite_master WHERE name = 'attempts'").fetchone()[0]
    con.close()
    with open(db, "r+b") as f:
        f.seek((root - 1) * size)
        f.write(b"\x77" * 64)
    r = run_cli_inproc(ws, "doctor")
    assert r.returncode == 1 and "damaged-database" in r.stdout and "reindex --force" in r.stdout
    for args in (["show"], ["attempt", "list"], ["tried", "first"]):
        r = run_cli_inproc(ws, *args)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and "damaged" in r.stderr, (args, r.stderr)
        assert "internal error" not in r.stderr
    r = run_cli_inproc(ws, "reindex", "--force")
    assert r.returncode == 0, r.stderr
    assert any(p.name.startswith("dbglog.db.broken") for p in db.parent.iterdir())  # set aside, not deleted
    assert "first" in run_cli_inproc(ws, "attempt", "list", "-i", "crash").stdout
    assert "Healthy" in run_cli_inproc(ws, "doctor").stdout


def test_reindex_after_the_database_is_lost_indexes_the_kept_runs_again(tmp_path):
    """Runs stay local (.dbglog/runs/ID/result.json): a database deleted or set aside lost every run from
    `runs list`, their fingerprints with them, though each run's record was on disk."""
    import json

    from conftest import run_cli_inproc

    ws = tmp_path / "w"
    ws.mkdir()
    (ws / "crash.py").write_text("raise SystemExit('boom')\n")
    assert run_cli_inproc(ws, "new", "crash", "--no-env").returncode == 0
    r = run_cli_inproc(ws, "run", "--attempt", "as it is", "--", sys.executable, "crash.py")
    assert r.returncode == 1, r.stderr
    r = run_cli_inproc(ws, "run", "--repeat", "2", "--", sys.executable, "crash.py")
    assert r.returncode == 1, r.stderr
    (ws / ".dbglog" / "runs" / "junk").mkdir()
    (ws / ".dbglog" / "runs" / "junk" / "result.json").write_text('{"id": 3}')
    before = {r["id"]: r for r in json.loads(run_cli_inproc(ws, "runs", "list", "--json").stdout)}
    assert len(before) == 3
    (ws / ".dbglog" / "dbglog.db").unlink()
    r = run_cli_inproc(ws, "reindex", "--force", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["runs_restored"] == 3
    after = {r["id"]: r for r in json.loads(run_cli_inproc(ws, "runs", "list", "--json").stdout)}
    assert after.keys() == before.keys()
    assert [(r["attempt"], r["outcome"]) for r in after.values() if r["attempt"]] == [(1, "fail")]
    assert json.loads(run_cli_inproc(ws, "reindex", "--json").stdout)["runs_restored"] == 0


def test_threads_of_one_process_queue_for_writes_instead_of_failing_on_the_lock(tmp_path):
    """An adversarial probe: 5,000 add_attempt calls piped into one `dbglog mcp` (its tool calls run on threads,
    each with its own connection) lost 29 to 'database is locked', some threads starving past the busy timeout.
    Writers of one process queue for the lock; here with a busy timeout of 0, so any wait in SQLite would fail."""
    import threading

    from dbglog.kb.store import Store

    db = tmp_path / "d.db"
    Store(db).conn.close()
    errors: list[BaseException] = []

    def writer(k: int) -> None:
        store = Store(db)
        store.conn.execute("PRAGMA busy_timeout = 0")
        try:
            for i in range(40):
                with store.write():
                    store.set_meta(f"w{k}-{i}", "x" * 100)
        except BaseException as e:  # (collected: the assertion below names it)
            errors.append(e)
        finally:
            store.conn.close()

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[:1]
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM meta WHERE key LIKE 'w%'").fetchone()[0] == 240
    con.close()


def test_a_locked_database_in_an_mcp_call_is_one_line_not_an_internal_error():
    from dbglog import mcp_server

    def locked():
        raise sqlite3.OperationalError("database is locked")

    out = mcp_server._call(locked)
    text = str(out)
    assert "locked by another process" in text and "internal error" not in text, text


def test_failing_runs_finishing_at_once_add_their_advice_once(tmp_path):
    """An adversarial probe: failing runs recorded at once (six here) each read the next steps before any had added the
    playbook's advice, and left up to four copies of it. The read and the add are one write transaction."""
    import json

    from conftest import run_cli_inproc

    ws = tmp_path / "w"
    ws.mkdir()
    (ws / "fail.py").write_text("import sys\nprint('RuntimeError: CUDA error: an illegal memory access was "
                                "encountered', file=sys.stderr)\nsys.exit(1)\n")
    assert run_cli_inproc(ws, "new", "ima", "--no-env").returncode == 0
    procs = [subprocess.Popen([sys.executable, "-m", "dbglog", "run", "--timeout", "60", "--attempt", f"try {k}", "--",
                               sys.executable, "fail.py"], cwd=ws, env=cli_env(), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) for k in range(6)]
    for p in procs:
        assert p.wait(300) == 1
    steps = json.loads(run_cli_inproc(ws, "next", "list", "--json").stdout)
    advice = [s for s in steps if "[advice:" in (s["detail"] or "")]
    assert len(advice) == len({s["detail"] for s in advice}) >= 1, [s["text"][:60] for s in steps]


def test_an_attempt_citing_one_run_twice_records_it_once(recs):
    """An adversarial probe: MCP add_attempt with runs [id, id] kept the id twice."""
    inv = recs.new("x")
    a = recs.add_attempt(inv.id, title="t", runs=["20261207-000000-aaaa", "20261207-000000-aaaa"])
    assert a.runs == ["20261207-000000-aaaa"]
    assert recs.store.get_attempt(inv.id, a.number).runs == ["20261207-000000-aaaa"]
