"""Moved to ``dbglog/core/model.py`` (the record dataclasses and their validation): a value shared by
``kb`` and ``docreader``, which now sit above one bottom layer instead of importing each other.

A thin shim for this session only: other helpers' branches still import ``dbglog.kb.model``; the lead
removes it once every import says ``dbglog.core.model``. It is the very same module object (not a copy
of its names), so a monkeypatch or a private name reads the same through either path. Edit
``dbglog/core/model.py``, never this file.
"""

import sys

from dbglog.core import model as _moved

sys.modules[__name__] = _moved
