"""``load``: a data file shipped with the package (a cue table, a learned model), parsed once per install
and kept with ``marshal`` as Python keeps a module's bytecode -- the parsed form of the file, not the file.

Why: every reading command parses the same files at its start. The learned models are 2.6 MB of JSON
(74 ms to parse, 21 ms to read back with ``marshal``); the cue tables are TOML, whose parser is Python
code; ``vocab`` and ``cues`` both read the tables. Measured with ``bench/reader_speed.py --import``.

Like bytecode: the kept form sits in ``__pycache__`` beside this module, one file per data file, and is
used only when the data file's size and modification time are the ones it was made from (``py_compile``'s
default check) and the parser is the same; anything else -- a missing, stale or unreadable form, a
value ``marshal`` cannot hold -- parses the file as always. Nothing is written when
``sys.dont_write_bytecode`` is set or the directory is not writable, and writing never fails a command.
The value is shared by every caller of one process: callers must not change it.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import sys
from pathlib import Path
from typing import Any, Callable

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

_PARSERS: dict[str, Callable[[bytes], Any]] = {
    "json": lambda b: json.loads(b.decode("utf-8")),
    "toml": lambda b: tomllib.loads(b.decode("utf-8")),
}
_loaded: dict[str, Any] = {}  # path -> value, for this process


def load(path: str | Path, kind: str | None = None) -> Any:
    """The parsed content of ``path`` (``kind``: "json" or "toml", by default from its suffix)."""
    key = os.path.abspath(path)
    if key in _loaded:
        return _loaded[key]
    kind = kind or Path(key).suffix.lstrip(".")
    parse = _PARSERS[kind]
    st = os.stat(key)
    stamp = (kind, st.st_size, st.st_mtime_ns, sys.implementation.cache_tag)
    kept = _kept_path(key)
    value = _read_kept(kept, stamp)
    if value is None:
        with open(key, "rb") as fh:
            value = parse(fh.read())
        _write_kept(kept, stamp, value)
    _loaded[key] = value
    return value


def _kept_path(path: str) -> str:
    name = f"{Path(path).name}.{hashlib.sha1(path.encode()).hexdigest()[:8]}.{marshal.version}.marshal"
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__", f"data.{name}")


def _read_kept(kept: str, stamp: tuple) -> Any:
    try:
        with open(kept, "rb") as fh:
            got = marshal.loads(fh.read())
        return got[1] if isinstance(got, tuple) and len(got) == 2 and got[0] == stamp else None
    except Exception:  # noqa: BLE001 - missing, unreadable, of another version: parse as always
        return None


def _write_kept(kept: str, stamp: tuple, value: Any) -> None:
    if sys.dont_write_bytecode:
        return
    tmp = f"{kept}.{os.getpid()}.tmp"
    try:
        data = marshal.dumps((stamp, value))
        os.makedirs(os.path.dirname(kept), exist_ok=True)
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, kept)
    except Exception:  # noqa: BLE001 - a read-only install or a value marshal cannot hold: parsed each time
        try:
            os.unlink(tmp)
        except OSError:
            pass
