"""File-system utilities with no dbglog dependencies: the bottom layer.

``atomic_write`` is the one way dbglog replaces a file that someone may be reading (a mirror in
`logs/`, a journal, a toggled source file): temp file in the same directory, fsync, rename, fsync
of the directory. Readers see the old bytes or the new, never a torn file.
"""

from __future__ import annotations

import os
from pathlib import Path

_UMASK: int | None = None

# sha256 from CPython's built-in module: the same digest as hashlib's, whose import loads OpenSSL
# (~2 ms of a command that hashes one file or key); hashlib where the built-in one is not compiled in.
try:
    from _sha2 import sha256  # CPython 3.12+
except ImportError:
    try:
        from _sha256 import sha256  # CPython 3.11
    except ImportError:
        from hashlib import sha256


def sha256_hex(data: bytes) -> str:
    return sha256(data).hexdigest()


def default_mode() -> int:
    """0666 minus the process umask: what an ordinary file created here would get."""
    global _UMASK
    if _UMASK is None:
        try:
            with open("/proc/self/status") as f:
                _UMASK = next(int(ln.split()[1], 8) for ln in f if ln.startswith("Umask:"))
        except (OSError, StopIteration, ValueError, IndexError):
            _UMASK = os.umask(0o022)  # no /proc: read it the old way (and put it back)
            os.umask(_UMASK)
    return 0o666 & ~_UMASK


def atomic_write(path: Path, data: bytes, mode: int | None = None) -> os.stat_result:
    """Write via a temp file in the same directory, fsync, rename: readers see old or new, never torn.

    ``mode``: permission bits for the result; default: the replaced file's, else 0666 minus the
    umask (the temp file itself is created 0600)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            mode = default_mode()
        except OSError:
            mode = default_mode()
    import tempfile  # (here: the commands that only read should not pay for it)

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    dfd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)
    return path.stat()


def drop_bytecode(path: Path) -> None:
    """Remove the cached bytecode of a Python file we just rewrote (or checked out). Python trusts a ``.pyc`` whose
    recorded source mtime (whole seconds) and size match: two variants of the same size written
    within one second (two suspects of the same length switched off, a value 1 -> 2) would run the
    previous variant's code, a restored original the last trial's, a bisection step the previous
    commit's."""
    if path.suffix not in (".py", ".pyw"):
        return
    try:
        with os.scandir(path.parent / "__pycache__") as it:
            for e in it:
                if e.name.split(".", 1)[0] == path.stem and e.name.endswith((".pyc", ".pyo")):
                    os.unlink(e.path)
    except OSError:
        pass
