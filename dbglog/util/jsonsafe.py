"""``json.loads`` that a hostile document cannot crash.

The decoder recurses once per nesting level, so a line of ten thousand ``[`` (a hook's payload, a
model's reply, a teammate's mirror) raises RecursionError, which no ``except ValueError`` catches.
Here it is the ``ValueError`` every caller already handles.
"""

from __future__ import annotations

import json
from typing import Any


def loads(text: str | bytes, **kw: Any) -> Any:
    try:
        return json.loads(text, **kw)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text if isinstance(text, str) else "", 0) from None
