"""The cooperative toggle API: ``import dbglog; dbglog.toggle("name")``.

Code that can import dbglog marks its suspects with a call instead of a comment::

    if dbglog.toggle("swa_write"):
        swa_write(cache)

Outside a bisection every toggle is on (the call returns True: normal behaviour). Inside one,
the bisector sets

* ``DBGLOG_TOGGLES``: the enabled names (JSON list, or a comma-separated list);
* ``DBGLOG_TOGGLES_ALL``: every name the bisector manages (names it does not manage stay on);
* ``DBGLOG_TOGGLE_LIMIT_<NAME>``: counting mode, ``toggle(name, count=True)`` is on only for the
  first K calls (PyTorch CompilerBisector / LLVM ``-opt-bisect-limit`` style, to find the N-th
  application that matters); ``<NAME>`` is the name with every non-word character as ``_``;
* ``DBGLOG_TOGGLE_COUNT_FILE``: a file where the number of calls per counted name is written
  (after every counted call, so a crash still leaves the count).

Stdlib only and cheap: importing dbglog for this never pulls in the CLI.
"""

from __future__ import annotations

import json
import os
import re
import threading

from dbglog.util import jsonsafe

ENABLED_VAR = "DBGLOG_TOGGLES"
MANAGED_VAR = "DBGLOG_TOGGLES_ALL"
LIMIT_PREFIX = "DBGLOG_TOGGLE_LIMIT_"
COUNT_FILE_VAR = "DBGLOG_TOGGLE_COUNT_FILE"

_lock = threading.Lock()
_counts: dict[str, int] = {}
_parsed: dict[str | None, frozenset[str] | None] = {}


def limit_var(name: str) -> str:
    """The environment variable holding the call limit of a counted toggle."""
    return LIMIT_PREFIX + re.sub(r"\W", "_", name)


def parse_names(raw: str | None) -> frozenset[str] | None:
    """``'["a","b"]'`` or ``'a,b'`` -> {'a', 'b'}; None stays None (not set)."""
    if raw is None:
        return None
    if raw in _parsed:
        return _parsed[raw]
    text = raw.strip()
    names: frozenset[str]
    if text.startswith("["):
        try:
            names = frozenset(str(x) for x in jsonsafe.loads(text))
        except ValueError:
            names = frozenset()
    else:
        names = frozenset(p.strip() for p in text.split(",") if p.strip())
    _parsed[raw] = names
    return names


def is_enabled(name: str) -> bool:
    enabled = parse_names(os.environ.get(ENABLED_VAR))
    if enabled is None:
        return True
    managed = parse_names(os.environ.get(MANAGED_VAR))
    if managed is not None and name not in managed:
        return True
    return name in enabled


def toggle(name: str, count: bool = False) -> bool:
    """Is suspect ``name`` on in this run? (Always True outside a bisection.)

    ``count=True``: counting mode; each call is one *application* and only the first
    ``DBGLOG_TOGGLE_LIMIT_<NAME>`` applications are on.
    """
    on = is_enabled(name)
    if not count:
        return on
    with _lock:
        n = _counts[name] = _counts.get(name, 0) + 1
        path = os.environ.get(COUNT_FILE_VAR)
        if path:
            tmp = f"{path}.{os.getpid()}.tmp"
            try:
                with open(tmp, "w") as f:
                    json.dump(_counts, f)
                os.replace(tmp, path)
            except OSError:
                pass
    if not on:
        return False
    limit = os.environ.get(limit_var(name))
    if limit is None:
        return True
    try:
        return n <= int(limit)
    except ValueError:
        return True


def _reset_for_tests() -> None:
    _counts.clear()
    _parsed.clear()
