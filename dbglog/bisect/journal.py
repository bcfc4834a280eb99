"""Journaled in-place file edits (``dbglog bisect toggles --in-place``).

Protocol, per file:

1. ``claim``: insert (path, original bytes, sha256, mode, owner pid) into ``toggle_journal`` and
   COMMIT, before the file is touched.
2. ``write``: atomic write (temp file in the same directory + fsync + rename, mode preserved).
   Before each write, the sha256 of the bytes about to be written joins the row's ``written`` list
   (committed first: a kill between the two leaves a list that holds one sha too many, never too few).
   A file that holds neither its original nor bytes written here was edited by someone during the
   run: it is not written over; its original is saved aside and the bisection stops (``_edited``).
3. ``release``: atomic write of the original bytes (skipped when already identical), then delete
   the row. A file that holds neither its original nor any bytes the bisection wrote was edited by
   someone after the driver died: it is left as it is, and the original is saved to
   ``.dbglog/bisect-originals/<session>/`` instead of written over their edit.

The driver releases on every exit path it can see (success, failure, Ctrl-C, SIGTERM turned into
an exception). For kill -9, every dbglog command calls :func:`restore_orphans` when it opens the
workspace (``Records.__init__``; the check is one SELECT on the journal's primary key): rows whose
owner process is gone are restored and deleted. A temp file left by a write killed half-way is
removed too.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from dbglog.util.errors import DbglogError
from dbglog.util.fsutil import atomic_write, drop_bytecode


def _sha(data: bytes | None) -> str:
    return hashlib.sha256(data).hexdigest() if data is not None else "-"


def _started(pid: int) -> float | None:
    from dbglog.run import proctree

    return proctree.started(pid)


def _alive(pid: int, started: float | None) -> bool:
    """Not a zombie and, by its start, not a reused pid: the one rule in dbglog/run/proctree.py."""
    from dbglog.run import proctree

    return proctree.alive(pid, started)


def write_file(path: Path, data: bytes | None, mode: int | None = None) -> None:
    """Atomic write keeping permission bits; ``data=None`` removes the file."""
    if data is None:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    else:
        atomic_write(path, data, mode=mode)
    drop_bytecode(Path(path))


def _remove_temps(path: Path) -> None:
    try:
        for e in os.scandir(path.parent):
            if e.name.startswith(f".{path.name}.") and e.name.endswith(".tmp"):
                os.unlink(e.path)
    except OSError:
        pass


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


class Journal:
    """The in-place edits of one bisection session, owned by this process."""

    def __init__(self, store, session_id: str):
        self.store = store
        self.sid = session_id
        self.pid = os.getpid()
        self.started = _started(self.pid)
        self.claimed: dict[Path, tuple[bytes | None, int | None]] = {}
        self.written: dict[Path, set[str]] = {}

    def claim(self, path: Path) -> bytes | None:
        """Record the original before any edit; returns the original bytes."""
        path = Path(path)
        if path in self.claimed:
            return self.claimed[path][0]
        data = _read(path)
        mode = stat.S_IMODE(path.stat().st_mode) if data is not None else None
        with self.store.write():
            row = self.store.q("SELECT session_id, pid, written FROM toggle_journal WHERE path = ?",
                               str(path)).fetchone()
            if row is not None and row["session_id"] != self.sid:
                raise DbglogError(f"{path} is being edited in place by bisection {row['session_id']} "
                                  f"(process {row['pid']}); wait for it or `dbglog bisect abort`")
            if row is None:
                self.store.q("INSERT INTO toggle_journal (path, session_id, original, sha256, mode, pid, pid_started,"
                             " created) VALUES (?, ?, ?, ?, ?, ?, ?, datetime('now'))", str(path), self.sid, data,
                             _sha(data), mode, self.pid, self.started)
            else:
                self.store.q("UPDATE toggle_journal SET pid = ?, pid_started = ? WHERE path = ?", self.pid,
                             self.started, str(path))
                self.written[path] = set((row["written"] or "").split())  # (this session's earlier driver's)
        self.claimed[path] = (data, mode)
        return data

    def write(self, path: Path, data: bytes) -> None:
        path = Path(path)
        if path not in self.claimed:
            self.claim(path)
        now = _read(path)
        if now != self.claimed[path][0] and _sha(now) not in self.written.get(path, ()):
            self._edited(path)
        if now != data:
            sha, seen = _sha(data), self.written.setdefault(path, set())
            if sha not in seen:
                with self.store.write():
                    self.store.q("UPDATE toggle_journal SET written = coalesce(written, '') || ' ' || ? WHERE path = ?",
                                 sha, str(path))
                seen.add(sha)
            write_file(path, data, self.claimed[path][1])

    def _edited(self, path: Path) -> None:
        """Someone edited ``path`` while the bisection ran: their edit is kept, not written over, the
        original saved aside, and the bisection stops (its runs would test their code, not ours)."""
        with self.store.write():
            row = self.store.q("SELECT * FROM toggle_journal WHERE path = ? AND session_id = ?", str(path),
                               self.sid).fetchone()
            saved = _save_original(self.store, row)
            self.store.q("DELETE FROM toggle_journal WHERE path = ? AND session_id = ?", str(path), self.sid)
        del self.claimed[path]
        raise DbglogError(f"stopped: {path} was edited during the bisection; it is left as you made it and its "
                          f"original is in {saved} (the other edited files are put back)")

    def release_all(self) -> list[tuple[str, str | None]]:
        """Put every claimed file back and forget it (also rows of an earlier driver of this session).

        Called from ``finally`` after an interruption: a signal that landed between BEGIN and
        COMMIT of some write can leave a dangling transaction, which would swallow the deletes."""
        if self.store.conn.in_transaction:
            self.store.conn.execute("ROLLBACK")
        return restore_session(self.store, self.sid)


def _restore_rows(store, rows) -> list[tuple[str, str | None]]:
    """(path, None) for each file put back; (path, where the original was saved) for each left as someone edited it."""
    restored: list[tuple[str, str | None]] = []
    for r in rows:
        path = Path(r["path"])
        original = r["original"]
        now = _sha(_read(path))
        written = r["written"]  # (None: a row from before written shas were kept: put back, as then)
        if now != r["sha256"] and written is not None and now not in written.split():
            restored.append((str(path), _save_original(store, r)))
        elif now != r["sha256"]:
            write_file(path, original, r["mode"])
            restored.append((str(path), None))
        _remove_temps(path)
        with store.write():
            store.q("DELETE FROM toggle_journal WHERE path = ? AND session_id = ?", str(path), r["session_id"])
    return restored


def _save_original(store, r) -> str:
    """The original bytes of a journaled file kept beside the workspace's database, not written over a later edit."""
    folder = Path(store.path).parent / "bisect-originals" / r["session_id"]
    folder.mkdir(parents=True, exist_ok=True)
    dest = folder / r["path"].strip("/").replace("/", "__")
    if r["original"] is not None:
        atomic_write(dest, r["original"])
    return str(dest)


def restore_session(store, session_id: str) -> list[tuple[str, str | None]]:
    rows = store.q("SELECT * FROM toggle_journal WHERE session_id = ?", session_id).fetchall()
    return _restore_rows(store, rows)


def restore_orphans(store) -> list[tuple[str, str | None]]:
    """Restore files edited in place by bisection drivers that are gone. Returns the restored paths."""
    rows = store.q("SELECT * FROM toggle_journal").fetchall()
    orphans = [r for r in rows if not _alive(r["pid"], r["pid_started"])]
    if not orphans:
        return []
    try:  # the dead driver's repro may still be running on the edited files: stop it first
        from dbglog.bisect.session import reap_leftovers

        for sid in sorted({r["session_id"] for r in orphans}):
            reap_leftovers(sid)
    except Exception:  # noqa: BLE001 - restoring the bytes matters more
        pass
    return _restore_rows(store, orphans)


def pending(store) -> bool:
    """Cheap check used at start-up by every command."""
    try:
        return store.q("SELECT 1 FROM toggle_journal LIMIT 1").fetchone() is not None
    except Exception:  # noqa: BLE001 - a store from before the migration
        return False
