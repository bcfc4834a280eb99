"""A file system that refuses is one line and changes nothing: missing permissions (as a user the
permission bits apply to), a read-only `logs/`, a full disk while a repro prints or while a record is
written. A run that cannot be recorded is refused before the repro runs, or leaves no run folder behind;
the output thread drains a full disk instead of dying with a traceback; the umask is honoured."""

import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import run_cli
from probe_kit import dbg, one_line_error, snapshot


def _bug(ws) -> Path:
    return next(p for p in (ws / "logs").iterdir() if p.suffix == ".md")


def _derived(p: Path) -> bool:
    """The database's files (SQLite's -wal and -shm come and go with any open). Everything else, the
    freshness check's cache in .dbglog/cache included, is what a refused command must leave as it was."""
    return ".dbglog/dbglog.db" in p.as_posix()


@pytest.mark.parametrize("damage", ["log file is a directory", "logs is a file", "database is a directory",
                                    "config is not toml", ".dbglog is a file", "config is a directory"])
def test_a_refusing_file_system_is_one_line_and_changes_nothing(tmp_path, damage):
    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("new", "fs", "--no-env", cwd=ws).returncode == 0
    aside = tmp_path / "aside"
    if damage == "log file is a directory":
        target = _bug(ws)
        target.rename(aside)
        target.mkdir()
    elif damage == "logs is a file":
        (ws / "logs").rename(aside)
        (ws / "logs").write_text("not a directory\n")
    elif damage == "database is a directory":
        (ws / ".dbglog" / "dbglog.db").rename(aside)
        (ws / ".dbglog" / "dbglog.db").mkdir()
    elif damage == ".dbglog is a file":
        (ws / ".dbglog").rename(aside)
        (ws / ".dbglog").write_text("not a directory\n")
    elif damage == "config is a directory":
        (ws / ".dbglog" / "config.toml").mkdir()
    else:
        (ws / ".dbglog" / "config.toml").write_text("[[signature\nname = \n")
    for args in (["attempt", "add", "x", "-r", "y"], ["next", "add", "z"], ["signature", "list"],
                 ["run", "-q", "--", sys.executable, "-c", "pass"]):
        shutil.rmtree(ws / ".dbglog" / "cache", ignore_errors=True)  # (as in a fresh clone: none yet)
        if (ws / "logs").is_dir():  # still for a while, as between two commands a person types: a check
            past = time.time() - 10  # that finds it in order remembers that (not a refused command)
            os.utime(ws / "logs", (past, past))
        listing = sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*") if not _derived(p))
        r = (run_cli if args[0] == "run" else dbg)(*args, cwd=ws)
        if r.returncode == 0:
            continue  # (what this damage does not touch)
        one_line_error(r, (damage, args))
        now = sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*") if not _derived(p))
        assert now == listing, (damage, args)


RO_SCRIPT = textwrap.dedent("""
    set -u
    cd "$1"
    mount --bind logs logs && mount -o remount,ro,bind logs || exit 77
    for a in "attempt add x -r y" "next add z" "status resolved" "diff add K 1 2"; do
        $2 -m dbglog $a; echo "rc=$?"
    done
""")


def test_read_only_logs(tmp_path):
    if shutil.which("unshare") is None:
        pytest.skip("no unshare on this machine")
    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("new", "ro", "--no-env", cwd=ws).returncode == 0
    before = snapshot(ws)
    script = tmp_path / "ro.sh"
    script.write_text(RO_SCRIPT)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]), DBGLOG_NO_EDITOR="1")
    env.pop("DBGLOG_DIR", None)
    args = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-r", "-m"]
    p = subprocess.run([*args, "sh", str(script), str(ws), sys.executable], capture_output=True, text=True,
                       env=env, timeout=300)
    if p.returncode == 77 or "unshare failed" in p.stderr or "Operation not permitted" in p.stderr:
        pytest.skip(f"cannot make logs/ read-only here: {p.stderr.strip()[:200]}")
    assert p.stdout.split() == ["rc=2"] * 4, p.stdout + p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 4 and all(ln.startswith("dbglog: read-only file system") for ln in lines), p.stderr
    assert snapshot(ws) == before


PERM_SCRIPT = textwrap.dedent("""
    cd "$1"
    case "$3" in
      logs) chmod 555 logs;; db) chmod 000 .dbglog/dbglog.db;;
    esac
    $2 -m dbglog run -q --attempt a -- sh -c 'echo ran > ran.txt'; echo "rc=$?"
    $2 -m dbglog attempt add x -r y; echo "rc=$?"
    chmod -R u+rwX .
""")


@pytest.mark.parametrize("damage", ["logs", "db"])
def test_missing_permissions_are_one_line_and_nothing_runs(tmp_path, damage):
    if shutil.which("unshare") is None:
        pytest.skip("no unshare on this machine")
    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("new", "perm", "--no-env", cwd=ws).returncode == 0
    before = snapshot(ws)
    script = tmp_path / "perm.sh"
    script.write_text(PERM_SCRIPT)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]), DBGLOG_NO_EDITOR="1")
    env.pop("DBGLOG_DIR", None)
    # an unprivileged user in a user namespace: the permission bits apply even when we are root
    p = subprocess.run(["unshare", "--user", "--map-user=1000", "--map-group=1000", "sh", str(script), str(ws),
                        sys.executable, damage], capture_output=True, text=True, env=env, timeout=120)
    if "unshare failed" in p.stderr or "Operation not permitted" in p.stderr or "invalid option" in p.stderr:
        pytest.skip(f"no user namespaces here: {p.stderr.strip()[:200]}")
    codes = [ln for ln in p.stdout.split() if ln.startswith("rc=")]
    assert codes == ["rc=2", "rc=2"], p.stdout + p.stderr
    assert snapshot(ws) == before
    lines = p.stderr.strip().splitlines()
    assert lines and all(ln.startswith("dbglog: ") and "internal error" not in ln for ln in lines), p.stderr
    assert not (ws / "ran.txt").exists(), "the repro ran although its attempt could not be recorded"


def test_the_umask_is_honoured(tmp_path):  # guard
    ws = tmp_path / "w"
    ws.mkdir()
    for mask, mode in (("077", 0o600), ("002", 0o664)):
        p = subprocess.run(["sh", "-c", f'umask {mask}; exec "$0" -m dbglog new "umask {mask}" --no-env',
                            sys.executable], cwd=ws, capture_output=True, text=True,
                           env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2])))
        assert p.returncode == 0, p.stderr
        f = max((ws / "logs").glob("*.md"), key=lambda q: q.stat().st_mtime_ns)
        assert f.stat().st_mode & 0o777 == mode, (mask, oct(f.stat().st_mode))


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full (writes to it fail with ENOSPC)")
@pytest.mark.parametrize("cap", [None, 1 << 10])
def test_output_that_meets_a_full_disk_is_drained_not_a_thread_traceback(cap):
    from dbglog.run import runner

    f = runner._CappedFile(Path("/dev/full"), cap)
    for _ in range(200):  # past the write buffer: before, the pump thread died here with a traceback
        f.write(b"x" * 8192)
    f.flush()
    f.close()
    assert f.error is not None and f.total == 200 * 8192


def test_a_run_that_cannot_be_recorded_leaves_no_run_folder(tmp_path, monkeypatch):
    from dbglog import ops
    from dbglog.kb.records import Records
    from dbglog.util.errors import DbglogError

    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("new", "x", "--no-env", cwd=ws).returncode == 0

    def full(*a, **k):
        raise DbglogError("no space left on device: free some space and retry; nothing was changed")
    monkeypatch.setattr(Records, "record_runs", full)
    monkeypatch.chdir(ws)
    monkeypatch.delenv("DBGLOG_DIR", raising=False)
    recs = ops.open_records()
    try:
        with pytest.raises(DbglogError):
            ops.run_repro(recs, [sys.executable, "-c", "print('x' * 1000)"], ops.RunOptions(timeout=60),
                          attempt_title="t")
    finally:
        recs.close()
    assert not any((ws / ".dbglog" / "runs").glob("*"))  # before: the folder stayed, the line said nothing changed


FULL_SCRIPT = """
set -u
mount -t tmpfs -o size=4m tmpfs "$1" || exit 77
cd "$1" && git init -q . && $2 -m dbglog new "disk" --no-env >/dev/null || exit 78
avail=$(df -B1 --output=avail . | tail -1)
head -c $((avail - 61440)) /dev/zero > filler  # ~60 KB left: the run starts, its output does not fit
for a in "run -q -- $2 -c print('x'*400000)" "run -q --attempt r -- $2 -c print('y'*400000)"; do
    $2 -m dbglog $a; echo "rc=$?"
done
rm filler
echo "runs=$(ls .dbglog/runs | wc -l) tmp=$(ls -a .dbglog logs | grep -c tmp)"
$2 -m dbglog doctor >/dev/null; echo "doctor=$?"
"""


def test_a_full_disk_end_to_end(tmp_path):
    """On a real full file system (a 4 MB tmpfs in a mount namespace) a run whose output does not fit:
    no thread traceback; recorded (rc 0, its note says the output is incomplete) or refused in one line
    with no run folder left; no temporary file; the workspace healthy after. Skipped where a tmpfs
    cannot be mounted."""
    if shutil.which("unshare") is None:
        pytest.skip("no unshare on this machine")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    script = tmp_path / "full.sh"
    script.write_text(FULL_SCRIPT)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]), DBGLOG_NO_EDITOR="1")
    env.pop("DBGLOG_DIR", None)
    args = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-r", "-m"]
    p = subprocess.run([*args, "sh", str(script), str(mnt), sys.executable], capture_output=True, text=True,
                       env=env, timeout=300)
    if p.returncode in (77, 78) or "unshare failed" in p.stderr or "Operation not permitted" in p.stderr:
        pytest.skip(f"cannot mount a tmpfs here: {p.stderr.strip()[:200]}")
    codes = re.findall(r"rc=(\d+)", p.stdout)
    assert len(codes) == 2 and set(codes) <= {"0", "2"}, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and all(ln.startswith("dbglog: ") for ln in p.stderr.strip().splitlines()), \
        p.stderr
    assert codes.count("2") == len(p.stderr.strip().splitlines())  # one line per refusal
    assert f"runs={codes.count('0')} tmp=0" in p.stdout and "doctor=0" in p.stdout, p.stdout + p.stderr


def test_signature_add_on_a_full_disk_leaves_no_temporary_file(tmp_path, monkeypatch):
    import errno

    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("signature", "add", "first", "foo", cwd=ws).returncode == 0
    cfg = ws / ".dbglog" / "config.toml"
    before = cfg.read_bytes()

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(os, "fsync", full)
    r = dbg("signature", "add", "second", "bar.*baz", cwd=ws)
    monkeypatch.undo()
    one_line_error(r, "signature add on a full disk")
    assert "no space left on device" in r.stderr, r.stderr
    assert cfg.read_bytes() == before
    assert sorted(p.name for p in cfg.parent.iterdir() if "tmp" in p.name) == []  # before: config.toml.tmp
