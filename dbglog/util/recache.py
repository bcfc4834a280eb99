"""``compile``: ``re.compile`` whose compiled form is kept between processes, as Python keeps a module's
bytecode in ``__pycache__``.

Compiling a pattern runs the regex parser and compiler, which are Python code: the outcome cues, the
search and experiment rules and the redaction patterns cost 40-70 ms of every ``dbglog tried`` and
``attempt add`` (issue 26, measured with ``-X importtime`` and cProfile), more than the rest of their work.
The compiled form (flags, the engine's code, the group names) is stored with
``marshal`` in ``__pycache__/re.<python tag>.marshal`` next to this module, keyed by the pattern and
its flags, and turned back into a pattern by the engine's own constructor (``_sre.compile``, which
validates the code). It is kept only when the pattern built that way is equal to ``re.compile``'s --
the same pattern, flags and code -- so a Python whose internals differ simply compiles as always;
any error reading the file does too. Like bytecode, nothing is written when
``sys.dont_write_bytecode`` is set or the directory is not writable.
"""

from __future__ import annotations

import marshal
import os
import re
import sys
from array import array

try:
    import _sre
except ImportError:  # pragma: no cover - every CPython has it
    _sre = None

# The engine's code as bytes (a memcpy to load; only the patterns used become lists of ints)
_CODE_FITS = _sre is not None and array("I").itemsize == _sre.CODESIZE
_MAX_ENTRIES = 4000  # past it the file starts over (patterns of older versions pile up otherwise)
_table: dict | None = None  # (pattern, flags) -> the compiled form; loaded on first use
_new: dict = {}  # forms compiled by this process, not yet in the file
_made: dict = {}  # (pattern, flags) -> the pattern this process already built (a caller may ask per call)


def _path() -> str:
    tag = f"{sys.implementation.cache_tag}-{getattr(_sre, 'MAGIC', 0)}-{getattr(_sre, 'CODESIZE', 0)}"
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__", f"re.{tag}.marshal")


def _load() -> dict:
    global _table
    if _table is None:
        try:
            with open(_path(), "rb") as fh:
                table = marshal.loads(fh.read())  # (marshal.load reads a file object piece by piece: 50x slower)
            _table = table if isinstance(table, dict) else {}
        except Exception:  # noqa: BLE001 - missing, unreadable, of another version: compile as always
            _table = {}
    return _table


def compile(pattern: str, flags: int = 0) -> re.Pattern:  # noqa: A001 - stands in for re.compile
    """``re.compile(pattern, flags)``, from the kept compiled form when there is one."""
    flags = int(flags)
    key = (pattern, flags)
    rx = _made.get(key)
    if rx is None:
        rx = _made[key] = _build(pattern, flags, key)
    return rx


def _build(pattern: str, flags: int, key: tuple) -> re.Pattern:
    form = _load().get(key)
    if form is not None and _sre is not None:
        try:
            return _sre.compile(pattern, form[0], _code(form[1]), *form[2:])
        except Exception:  # noqa: BLE001 - a form this engine refuses: compile it
            pass
    rx = re.compile(pattern, flags)
    # (the form is a second run of the regex parser, worth it only when it will be written)
    form = None if sys.dont_write_bytecode else _form(pattern, flags, rx)
    if form is not None:
        _keep(key, form)
    return rx


def _keep(key: tuple, value) -> None:
    """Hold ``value`` for the file, which is written at exit (registered with the first one kept)."""
    if not _new:
        import atexit

        atexit.register(save)
    _new[key] = value


def derived(tag: str, pattern: str, compute):
    """``compute(pattern)``, kept in the same file as the compiled forms (under ``(pattern, tag)``): what a
    module reads out of a pattern with the regex parser (the outcome cues' literal openers: 50 ms of every
    command's start when parsed anew). The value must be one ``marshal`` holds."""
    key = (pattern, tag)
    got = _made.get(key)
    if got is None:
        got = _load().get(key)
        if not (isinstance(got, tuple) and len(got) == 1):
            got = (compute(pattern),)
            if not sys.dont_write_bytecode:
                _keep(key, got)
        _made[key] = got
    return got[0]


def _code(data: bytes) -> list[int]:
    return array("I", data).tolist()


def _form(pattern: str, flags: int, rx: re.Pattern):
    """The compiled form of ``pattern`` as the engine's constructor takes it, or None when this Python's
    internals do not give back exactly ``rx``."""
    if _sre is None or not isinstance(pattern, str):
        return None
    try:
        if sys.version_info >= (3, 11):
            from re import _compiler, _parser
        else:  # pragma: no cover - 3.10
            import sre_compile as _compiler
            import sre_parse as _parser
        p = _parser.parse(pattern, flags)
        code = [int(c) for c in _compiler._code(p, flags)]  # (named int constants: plain ints)
        groupindex = {str(k): int(v) for k, v in p.state.groupdict.items()}
        indexgroup = [None] * p.state.groups
        for name, i in groupindex.items():
            indexgroup[i] = name
        form = (int(flags | p.state.flags), array("I", code).tobytes(), int(p.state.groups - 1), groupindex,
                tuple(indexgroup))
        return form if _CODE_FITS and _sre.compile(pattern, form[0], _code(form[1]), *form[2:]) == rx else None
    except Exception:  # noqa: BLE001 - internals of another shape: no form kept
        return None


def save() -> None:
    """Write the forms this process compiled (beside those read) to the file: atomically, and never a
    reason for a command to fail."""
    global _table
    if not _new or sys.dont_write_bytecode:
        return
    table = dict(_load())
    if len(table) + len(_new) > _MAX_ENTRIES:
        table = {}
    table.update(_new)
    _new.clear()
    _table = table
    path = _path()
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as fh:
            marshal.dump(table, fh)
        os.replace(tmp, path)
    except Exception:  # noqa: BLE001 - a read-only install: compiled each time, as before
        try:
            os.unlink(tmp)
        except OSError:
            pass
