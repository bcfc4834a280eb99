"""The yardstick of losslessness: is a source line's content in the rendered mirror? Compared as
`shared/tools/import-report` compares (markdown decoration, one leading `Label:`, case and spacing aside)."""

from __future__ import annotations

import copy
from functools import lru_cache

from dbglog.core.model import Investigation
from dbglog.util import recache


_NLABEL = recache.compile(r"^([A-Za-z][\w /()&'.+-]{0,40}?)\s*:\s+")


_N_HEAD = recache.compile(r"^\s*(#+|>+)\s*")


_N_ITEM = recache.compile(r"^\s*([-*+•]|\d+[.)])\s+")


_N_BOX = recache.compile(r"^\[[ xX]\]\s*")


_N_WS = recache.compile(r"\s+")


@lru_cache(maxsize=65536)
def norm(line: str) -> str:
    line = line.replace("**", "").replace("__", "").replace("`", "").replace("|", " ")
    line = _N_HEAD.sub("", line, count=1)
    line = _N_ITEM.sub("", line, count=1)
    line = _N_BOX.sub("", line, count=1)
    line = _NLABEL.sub("", line, count=1)
    return _N_WS.sub(" ", line).strip().lower()


# (compiled once: these run on every line of every document read)
_FENCE_OPEN = recache.compile(r"^\s*(```|~~~)")
_RULE_ONLY = recache.compile(r"[-:| ]+")
_NON_WORD = recache.compile(r"[\W_]")
_FENCE_ONLY = recache.compile(r"^\s*`{3,}\s*\w*\s*$")


def counts(line: str) -> bool:
    """Does this source line carry content the check must find (fences, rules, short bits do not)?"""
    if _FENCE_OPEN.match(line) or _RULE_ONLY.fullmatch(line.strip()):
        return False
    return len(_NON_WORD.sub("", norm(line))) >= 4


def kept_text(rendered: str) -> str:
    return " \n ".join(norm(x) for x in rendered.splitlines() if not _FENCE_ONLY.match(x))


def _probe(inv: Investigation) -> Investigation:
    p = copy.copy(inv)
    p.id = p.id or "20000101-import-check-0000"
    p.created = p.updated = "2000-01-01T00:00:00Z"
    return p
