"""Failures of the machine, not of dbglog: a full disk, a read-only file system, a permission, a
directory where a file should be. Each becomes one line that names the real cause (never
"unreadable database", never an internal error), raised as ``FilesystemError`` (exit 2; the
command changed nothing: see ``records.JournaledStore``).
"""

from __future__ import annotations

import errno
import os

from dbglog.util.errors import DbglogError


class FilesystemError(DbglogError):
    """The file system refused (full, read-only, permissions): fixable outside dbglog."""


_OS = {
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EISDIR: "is a directory (a file was expected)",
    errno.ENOTDIR: "not a directory (a directory was expected)",
    errno.ENAMETOOLONG: "file name too long",
    errno.EIO: "input/output error",
}
_ADVICE = {
    errno.ENOSPC: "free some space and retry",
    errno.EDQUOT: "free some space and retry",
    errno.EROFS: "dbglog needs to write logs/ and .dbglog/",
    errno.EACCES: "check the permissions of logs/ and .dbglog/",
    errno.EPERM: "check the permissions of logs/ and .dbglog/",
}


def _existing(path) -> str:
    """``path``, or its nearest existing parent (what statvfs can be asked about)."""
    p = os.fspath(path) if path is not None else "."
    while p and not os.path.exists(p):
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    return p or "."


def no_space_left(path) -> bool:
    """Is the file system that holds ``path`` (or its nearest existing parent) out of space?"""
    try:
        st = os.statvfs(_existing(path))
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < 64 * 1024 or (st.f_files and st.f_favail == 0)


def read_only(path) -> bool:
    """Is ``path`` (or its nearest existing parent) on a read-only file system?"""
    try:
        return bool(os.statvfs(_existing(path)).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _where(path) -> str:
    if not path:
        return ""
    try:
        rel = os.path.relpath(os.fspath(path))
        path = rel if not rel.startswith("..") else os.fspath(path)
    except ValueError:
        path = os.fspath(path)
    return f" ({path})"


def describe(exc: BaseException, path=None) -> str | None:
    """One line for a machine failure behind ``exc`` (an OSError or a sqlite3 error); None when
    ``exc`` is something else (a bug, which stays an internal error)."""
    import sqlite3

    if isinstance(exc, OSError) and exc.errno in _OS:
        where = _where(exc.filename or path)
        advice = _ADVICE.get(exc.errno)
        return f"{_OS[exc.errno]}{where}" + (f": {advice}; nothing was changed" if advice else "; nothing was changed")
    if isinstance(exc, sqlite3.Error):
        code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
        text = str(exc)
        where = _where(path)
        if code == 13 or "database or disk is full" in text or (code == 10 or "disk I/O error" in text) \
                and no_space_left(path):
            return f"no space left on device{where}: free some space and retry; nothing was changed"
        if code in (8, 14) and path is not None and read_only(path):
            return (f"read-only file system{where}: dbglog needs to write logs/ and .dbglog/; "
                    "nothing was changed")
        if code == 8 or "readonly database" in text:
            return (f"the database is read-only{where}: check the permissions of .dbglog/ "
                    "(and that its file system is writable); nothing was changed")
        if code == 14 or "unable to open database" in text:
            return f"cannot open the database{where}: check that .dbglog/ exists and is writable"
        if code in (5, 6) or "database is locked" in text:
            return f"the database is locked by another process{where}: retry when it is done"
        if code == 10 or "disk I/O error" in text:
            return f"input/output error on the database{where}: check the disk; nothing was changed"
    return None


def damaged_database(exc: BaseException) -> str | None:
    """One line for a database whose pages are damaged (SQLITE_CORRUPT: overwritten, its header intact), else None.
    Not a machine failure (``describe``): ``reindex --force`` may set such a database aside."""
    import sqlite3

    if isinstance(exc, sqlite3.DatabaseError) and (
            (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF == 11 or "malformed" in str(exc)):
        return (f"the database is damaged ({exc}): `dbglog reindex --force` sets it aside and rebuilds it from "
                "logs/; nothing was changed")
    return None


def check(exc: BaseException, path=None) -> None:
    """Raise ``FilesystemError`` for a machine failure (chained to ``exc``); return otherwise."""
    msg = describe(exc, path)
    if msg is not None:
        raise FilesystemError(msg) from exc


def check_writable(*dirs) -> None:
    """Refuse up front when a directory dbglog must write is not writable (read-only mount, or
    permissions), so a long repro is not run only to fail at recording it."""
    for d in dirs:
        if d is None or not os.path.isdir(d) or os.access(d, os.W_OK | os.X_OK):
            continue
        code = errno.EROFS if read_only(d) else errno.EACCES
        raise FilesystemError(describe(OSError(code, os.strerror(code), os.fspath(d))))


def check_regular_file(path, shown=None) -> None:
    """A file the user names for dbglog to read must be a regular file (or a directory, which the
    caller handles): a FIFO blocks until a writer comes, a device such as /dev/zero never ends."""
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # the caller's own read says why
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return
    p = os.fspath(path)
    if stat.S_ISFIFO(mode) and (p.startswith(("/dev/fd/", "/proc/")) or p in ("/dev/stdin", "-")):
        return  # `<(kubectl logs pod)`, stdin: a pipe somebody writes
    kind = ("a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device")
    raise DbglogError(f"{shown or os.fspath(path)} is {kind}, not a regular file (reading it might never "
                      "end); save its contents to a file first")
