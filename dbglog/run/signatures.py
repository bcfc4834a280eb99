"""Moved to ``dbglog.diagnose.signatures``; this module is a shim for the session that moves it.

Importing ``dbglog.run.signatures`` gives the very module ``dbglog.diagnose.signatures`` (not a copy of its
names), so a monkeypatch or a private name still reaches the code that runs. New code imports
``dbglog.diagnose.signatures``; the shim goes once no caller uses the old path.
"""

import sys

from dbglog.diagnose import signatures as _moved

sys.modules[__name__] = _moved
