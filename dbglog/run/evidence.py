"""Moved to ``dbglog.diagnose.evidence``; this module is a shim for the session that moves it.

Importing ``dbglog.run.evidence`` gives the very module ``dbglog.diagnose.evidence`` (not a copy of its
names), so a monkeypatch or a private name still reaches the code that runs. New code imports
``dbglog.diagnose.evidence``; the shim goes once no caller uses the old path.
"""

import sys

from dbglog.diagnose import evidence as _moved

sys.modules[__name__] = _moved
