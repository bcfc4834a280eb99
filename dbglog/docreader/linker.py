"""The linker: judged units into attempts, each action joined to the result that tells how it went.

The result of an action may be in the same unit ("Tried X -- still hangs"), the next sentence of its
paragraph or item, a sub-item, the table row's result column, the comment above or after a command,
or a later post of a thread: a suggestion ("have you tried X?") answered "yes, it works" is the
answerer's attempt of the suggestion. Several things tried in one sentence are several attempts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dbglog.docreader.cues import _KNOB, column_roles, language, outcome_of, plain
from dbglog.docreader.scorer import Judged
from dbglog.docreader.units import Unit

ACTS = ("action_result", "action")


@dataclass
class Found:
    did: str
    result: str
    outcome: str  # worked / failed / partial / inconclusive / untested
    first: int  # 0-based source lines, inclusive
    last: int
    who: str = ""
    units: list[int] = field(default_factory=list)
    confidence: float = 0.0
    title: str = ""


def _outcome(text: str) -> str | None:
    return outcome_of(text, language(text)) if text else None


def _same_place(a: Unit, b: Unit) -> bool:
    """b continues a's story: same post, same heading, and the same paragraph/item or just below it."""
    if a.post != b.post or a.path != b.path:
        return False
    if a.block == b.block:
        return True
    if a.item >= 0 and b.item >= 0 and b.depth > a.depth:
        return True  # a sub-item under the action's item
    return b.first - a.last <= 2 and b.item < 0 and a.item < 0


def link(judged: list[Judged], skip: set[int]) -> list[Found]:
    """Attempts from the judged units of one investigation (units whose lines are in `skip` are not read)."""
    out: list[Found] = []
    used: set[int] = set()
    js = [j for j in judged if j.unit.first not in skip and j.unit.kind in ("sentence", "command", "row")]
    for k, j in enumerate(js):
        if j.unit.id in used:
            continue
        u = j.unit
        if u.kind == "command":
            f = _command(j)
        elif u.kind == "row":
            f = _row(j)
        elif j.label == "action_result":
            f = _found(j, u.text, u.text)
        elif j.label == "action":
            f = _with_result(j, js[k + 1:k + 6], used)
        elif j.label in ("proposal", "request") and u.post >= 0 and _KNOB.search(u.text):
            f = _answered(j, js[k + 1:k + 40], used)
        else:
            f = None
        if f is None:
            continue
        used.update(f.units)
        out.extend(_split_several(f))
    return out


def _found(j: Judged, did: str, result: str, outcome: str | None = None, last: int | None = None) -> Found:
    u = j.unit
    oc = outcome or _outcome(result) or "inconclusive"
    return Found(plain(did), plain(result) if result != did else "", oc, u.first, last if last is not None else u.last,
                 u.author, [u.id], j.confidence)


def _with_result(j: Judged, ahead: list[Judged], used: set[int]) -> Found:
    u = j.unit
    for n in ahead:
        if not _same_place(u, n.unit) or n.unit.id in used:
            break
        if n.label in ACTS or n.unit.kind != "sentence":
            break
        if n.label == "result":
            f = _found(j, u.text, n.unit.text, last=n.unit.last)
            f.units.append(n.unit.id)
            return f
    oc = _outcome(u.text)
    return _found(j, u.text, "", outcome="untested" if oc == "untested" else "inconclusive")


def _answered(j: Judged, ahead: list[Judged], used: set[int]) -> Found | None:
    """A suggestion in a thread, and a later post by someone else saying how it went when they tried it."""
    u = j.unit
    for n in ahead:
        v = n.unit
        if v.post == u.post or v.author == u.author or v.id in used or v.post < 0:
            continue
        if n.label in ("proposal", "request") and _KNOB.search(v.text):
            return None  # another suggestion came first: the answer may be to that one
        if n.label == "result" or (n.label == "action_result" and not _new_knob(u.text, v.text)):
            oc = _outcome(v.text)
            if oc in (None, "untested"):
                continue
            f = Found(plain(u.text), plain(v.text), oc, u.first, v.last, v.author, [u.id, v.id], n.confidence)
            return f
        if v.post > u.post + 3:
            return None
    return None


def _new_knob(suggested: str, reply: str) -> bool:
    a = {m.group(0).strip("`").lower() for m in _KNOB.finditer(suggested)}
    b = {m.group(0).strip("`").lower() for m in _KNOB.finditer(reply)}
    return bool(b) and not (a & b)


def _command(j: Judged) -> Found | None:
    u = j.unit
    oc = _outcome(u.comment)
    if not oc:
        return None
    what = re.sub(r"\s*[-—–:]*\s*\b(?:NOK|OK|PASS(?:ED)?|FAIL(?:ED)?)\b.*$", "", u.comment).strip() or u.text
    f = _found(j, f"{what}: `{u.text}`" if what != u.text else f"`{u.text}`", u.comment, outcome=oc)
    f.title = what if what != u.text else ""
    return f


def _row(j: Judged) -> Found | None:
    u = j.unit
    what, res = column_roles(u.header)
    if u.index < 0 or res < 0 or res >= len(u.cells):
        return None
    oc = _outcome(u.cells[res])
    if not oc:
        return None
    did = u.cells[what] if 0 <= what < len(u.cells) else u.cells[0]
    rest = " · ".join(c for k, c in enumerate(u.cells) if k not in (what,) and c)
    f = _found(j, did, rest, outcome=oc)
    f.title = plain(did)
    return f


_SEVERAL = re.compile(r"^(?P<lead>.*?\b(?:tried|tested|used|set|ran with|with)\s+)(?P<a>`?[-\w.=/]+`?)\s+"
                      r"(?:and|or|&)\s+(?P<b>`?[-\w.=/]+`?)(?P<tail>.*)$", re.I)


def _split_several(f: Found) -> list[Found]:
    """ "I tried -lowvram and -novram, still the same" is two attempts with one verdict."""
    m = _SEVERAL.match(f.did)
    if not m or not (_KNOB.search(m.group("a")) and _KNOB.search(m.group("b"))):
        return [f]
    out = []
    for knob in (m.group("a"), m.group("b")):
        g = Found(f"{m.group('lead')}{knob}{m.group('tail')}", f.result, f.outcome, f.first, f.last, f.who,
                  list(f.units), f.confidence)
        out.append(g)
    return out
