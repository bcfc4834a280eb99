"""Moved to ``dbglog/core/outcome.py`` (what a result sentence says (worked / failed / partial /
inconclusive)): a value shared by ``kb`` and ``docreader``, which now sit above one bottom layer instead
of importing each other.

A thin shim for this session only: other helpers' branches still import ``dbglog.kb.outcome``; the lead
removes it once every import says ``dbglog.core.outcome``. It is the very same module object (not a copy
of its names), so a monkeypatch or a private name reads the same through either path. Edit
``dbglog/core/outcome.py``, never this file.
"""

import sys

from dbglog.core import outcome as _moved

sys.modules[__name__] = _moved
