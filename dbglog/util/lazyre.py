"""``Lazy``: a regex compiled on first use.

Importing a module of patterns then compiles nothing: the outcome cues (~30 ms), tried's rarer rules
and the redaction patterns only a cheap test calls for were each a start-up cost of commands that
never reach them. One class for all of them (three copies had grown, one per module).
"""

from __future__ import annotations


class Lazy:
    """Stands in for ``re.compile(*args)``: the first attribute asked for (``search``, ``sub``,
    ``pattern``, ...) compiles it, and every later one is the compiled pattern's."""

    __slots__ = ("_args", "_rx")

    def __init__(self, *args):
        self._args, self._rx = args, None

    def __getattr__(self, name):
        if self._rx is None:
            from dbglog.util import recache  # (the compiled form kept between processes)

            self._rx = recache.compile(*self._args)
        return getattr(self._rx, name)
