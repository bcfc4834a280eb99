"""Issue 17 point 3: a command that reports an error has changed nothing.

A write renders `logs/<id>.md` before its transaction commits. When the commit then fails (a full
disk), the file must come back as it was (or go, if it was new), and the error must name the real
cause ("no space left on device"), never an unreadable database."""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from contextlib import contextmanager
from pathlib import Path

import pytest

from dbglog.kb.store import Store

FULL = "database or disk is full"


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted((root / "logs").iterdir())}


def db_rows(recs) -> list:
    return [tuple(r) for r in recs.store.q("SELECT investigation_id, number, title FROM attempts ORDER BY 1, 2")]


@pytest.fixture
def failing_commit(monkeypatch):
    """Make the next write transaction's COMMIT fail the way SQLite does on a full disk (the
    transaction stays open, the exception is an OperationalError)."""
    real = Store.write
    state = {"armed": False}

    @contextmanager
    def write(self):
        if not state["armed"] or self.conn.in_transaction:
            with real(self) as c:
                yield c
            return
        self.conn.execute("BEGIN IMMEDIATE")
        yield self.conn
        state["armed"] = False
        raise sqlite3.OperationalError(FULL)

    monkeypatch.setattr(Store, "write", write)
    return state


def test_attempt_add_with_a_failing_commit_leaves_logs_as_they_were(recs, tmp_path, failing_commit):
    i = recs.new("disk full").id
    recs.add_attempt(i, title="one", result="fails", outcome="failed")
    before, rows = snapshot(tmp_path), db_rows(recs)
    failing_commit["armed"] = True
    with pytest.raises(sqlite3.OperationalError):
        recs.add_attempt(i, title="two", result="fails too", outcome="failed")
    assert snapshot(tmp_path) == before  # the renamed file was put back; no temp or undo files left
    assert db_rows(recs) == rows
    assert not recs.store.conn.in_transaction
    # a retry (what an agent does) records it once
    recs.add_attempt(i, title="two", result="fails too", outcome="failed")
    assert [r[2] for r in db_rows(recs)] == ["one", "two"]


def test_new_investigation_with_a_failing_commit_leaves_no_file(recs, tmp_path, failing_commit):
    recs.new("first")
    before = snapshot(tmp_path)
    failing_commit["armed"] = True
    with pytest.raises(sqlite3.OperationalError):
        recs.new("second")
    assert snapshot(tmp_path) == before
    assert len(recs.store.ids()) == 1


def test_cli_says_no_space_left_and_nothing_changed(dbg, workdir, failing_commit):
    assert dbg("new", "disk full", "--no-env")[0] == 0
    before = snapshot(workdir)
    failing_commit["armed"] = True
    code, out, err = dbg("attempt", "add", "two", "-r", "fails", "-o", "failed")
    assert code == 2, err
    assert err.strip().splitlines() == [
        "dbglog: no space left on device: free some space and retry; nothing was changed"]
    assert "unreadable" not in err and "internal error" not in err
    assert snapshot(workdir) == before
    code, out, err = dbg("attempt", "list", "--json")
    assert code == 0 and out.strip() == "[]"


def test_enospc_writing_the_mirror_file_is_one_line(dbg, workdir, monkeypatch):
    import errno

    from dbglog.kb import records

    assert dbg("new", "disk full", "--no-env")[0] == 0
    before = snapshot(workdir)

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device", str(workdir / "logs" / ".x.tmp"))

    monkeypatch.setattr(records, "atomic_write", full)
    code, out, err = dbg("attempt", "add", "two", "-r", "fails", "-o", "failed")
    assert code == 2
    assert err.startswith("dbglog: no space left on device (") and len(err.strip().splitlines()) == 1, err
    assert snapshot(workdir) == before


def test_files_keep_the_umask(recs, tmp_path):
    old = os.umask(0o027)
    try:
        records_mode = None
        from dbglog.util import fsutil

        fsutil._UMASK = None  # read again
        i = recs.new("modes").id
        records_mode = (tmp_path / recs.path_for(i)).stat().st_mode & 0o777
    finally:
        os.umask(old)
        from dbglog.util import fsutil

        fsutil._UMASK = None
    assert records_mode == 0o640  # not mkstemp's 0600


# --- a real full file system (a small tmpfs in a private mount namespace) ------------------------

SCRIPT = textwrap.dedent("""
    set -u
    M=$1; PY=$2
    mount -t tmpfs -o size=2m tmpfs "$M" || exit 77
    cd "$M"
    export DBGLOG_NO_EDITOR=1 PYTHONPATH=$3
    $PY -m dbglog init >/dev/null && $PY -m dbglog new "disk full" --no-env >/dev/null || exit 3
    $PY -m dbglog attempt add one -r fails -o failed >/dev/null || exit 3
    cat logs/*.md > "$M.before"
    dd if=/dev/zero of=filler bs=4k 2>/dev/null
    $PY -m dbglog attempt add two -r "still fails after $(head -c 2000 /dev/zero | tr '\\0' x)" -o failed 2> "$M.err"
    echo "rc=$?"
    cmp -s logs/*.md "$M.before" && echo "logs unchanged"
    ls -a logs | grep -c '\\.tmp$' | sed 's/^/tmp files: /'
    $PY -m dbglog reindex --force 2>> "$M.err"; echo "reindex rc=$?"
    ls .dbglog | grep -c broken | sed 's/^/set aside: /'
    rm filler
    $PY -m dbglog attempt add two -r fails -o failed >/dev/null; echo "retry rc=$?"
    $PY -m dbglog attempt list
""")


def test_a_real_full_disk(tmp_path):
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        pytest.skip("no unshare/mount on this machine")
    mnt = tmp_path / "small"
    mnt.mkdir()
    script = tmp_path / "full.sh"
    script.write_text(SCRIPT)
    repo = str(Path(__file__).resolve().parent.parent)
    # -r: map to root in a new user namespace when we are not root; -m: the mount stays private
    args = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-r", "-m"]
    p = subprocess.run([*args, "sh", str(script), str(mnt), sys.executable, repo], capture_output=True, text=True,
                       timeout=300)
    if p.returncode == 77 or "Operation not permitted" in p.stderr or "unshare failed" in p.stderr:
        pytest.skip(f"cannot mount a small tmpfs here: {p.stderr.strip()[:200]}")
    assert p.returncode == 0, p.stdout + p.stderr
    out = p.stdout
    err = Path(f"{mnt}.err").read_text()
    assert "rc=2" in out and "logs unchanged" in out and "tmp files: 0" in out, out + err
    assert "no space left on device" in err and "unreadable" not in err and "internal error" not in err, err
    assert "set aside: 0" in out, out  # reindex --force does not throw a healthy database away
    assert "retry rc=0" in out and out.count("[failed]") == 2, out  # one and two, once each


def test_a_refused_command_in_a_directory_without_a_workspace_leaves_none_behind(tmp_path, cli_fast):
    # `import`, `new` and `run` set a workspace up where there is none; refused, they must not leave it there
    (tmp_path / "empty.md").write_text("")
    for args in (("import", "missing.md"), ("import", "/dev/null"), ("new", ""), ("run", "--timeout", "abc", "--", "true")):
        p = cli_fast(tmp_path, *args)
        assert p.returncode == 2, (args, p.stderr)
        assert sorted(x.name for x in tmp_path.iterdir()) == ["empty.md"], args
    # one that worked keeps it, and a later refusal leaves it as it was
    (tmp_path / "t.md").write_text("# Loader OOM\n\n## Attempt 1: halve the batch\n\n**Result:** still OOM\n")
    assert cli_fast(tmp_path, "import", "t.md").returncode == 0
    assert cli_fast(tmp_path, "import", "missing.md").returncode == 2
    assert (tmp_path / ".dbglog" / "dbglog.db").exists() and len(list((tmp_path / "logs").iterdir())) == 1


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_a_full_disk_after_the_run_was_recorded_says_it_was_recorded(dbg, workdir, monkeypatch, as_json):
    from dbglog.kb.records import Records

    def full(*a, **k):  # the attempt is committed; quoting its evidence into it then finds the disk full
        raise sqlite3.OperationalError(FULL)

    assert dbg("new", "disk full", "--no-env")[0] == 0
    monkeypatch.setattr(Records, "edit_attempt", full)
    code, out, err = dbg("run", "-q", *(["--json"] if as_json else []), "--attempt", "as is", "--", "sh", "-c",
                         "echo 'RuntimeError: CUDA error: an illegal memory access was encountered'; exit 1")
    assert code == 1, err
    assert "nothing was changed" not in err and "internal error" not in err, err  # before: exit 2, "nothing changed"
    assert err.strip().splitlines()[-1].startswith("dbglog: no space left on device: the run was recorded as attempt 1")
    if as_json:
        assert "was recorded" in json.loads(out)["error"] and json.loads(out)["attempt"]["number"] == 1
    else:
        assert "FAIL [gpu.illegal_address]" in out and "Attempt 1 recorded" in out  # the summary is printed
    code, out, _ = dbg("attempt", "list", "--json")
    assert code == 0 and len(json.loads(out)) == 1
