"""The records dbglog keeps, as plain dataclasses, with their validation rules.

Everything else (store, markdown mirror, CLI) converts to and from these. They are
deliberately dumb: no I/O, so the round-trip property tests can build them freely.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone

from dbglog.util import recache  # (compiled once per install: see util/recache.py)
from dbglog.util.errors import DbglogError

STATUSES = ("open", "resolved", "wontfix")
STATUS_LABELS = {"open": "Open", "resolved": "Resolved", "wontfix": "Won't Fix"}
OUTCOMES = ("worked", "failed", "partial", "inconclusive", "untested")
DIFF_STATUSES = ("untested", "ruled-out", "culprit")
NEXT_STATUSES = ("todo", "done", "dropped")
DEFAULT_LABELS = ("Working", "Broken")


def now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Attempt:
    number: int
    title: str = ""
    hypothesis: str = ""
    did: str = ""
    result: str = ""
    conclusion: str = ""
    outcome: str = "untested"
    created: str = ""
    runs: list[str] = field(default_factory=list)
    # Where an imported attempt was read: [first, last] source lines (1-based) of its document, and who did it
    # (a thread's answerer who tried the suggestion). Empty for attempts recorded through dbglog.
    source_lines: list[int] = field(default_factory=list)
    who: str = ""

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass
class Difference:
    position: int
    factor: str
    working: str = ""
    broken: str = ""
    status: str = "untested"
    apply: str = ""  # how to switch this factor, e.g. "env:NAME=VALUE" (toggle bisection)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass
class NextStep:
    position: int
    text: str
    detail: str = ""
    status: str = "todo"
    attempt: int | None = None  # the attempt that did it
    source_lines: list[int] = field(default_factory=list)  # imported: [first, last] lines of its document

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass
class Section:
    """A `## ...` section dbglog does not own (user notes, bisection reports): kept verbatim."""

    heading: str
    body: str

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


# Sections `import` adds for its own bookkeeping (which headings of the document became fields; what an applied
# review set, for re-imports): kept in the mirror, so every clone has them, but not shown by `show` nor searched.
REVIEW_SECTION = "## Import review"
BOOKKEEPING_SECTIONS = frozenset({"## Source headings", REVIEW_SECTION})


@dataclass
class Investigation:
    id: str
    title: str
    status: str = "open"
    symptom: str = ""
    environment: str = ""
    related_files: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    root_cause: str = ""
    created: str = ""
    updated: str = ""
    labels: tuple[str, str] = DEFAULT_LABELS
    attempts: list[Attempt] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)
    next_steps: list[NextStep] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    # Where `dbglog import` took it from ("DEBUG.md#key"): travels in the front matter, so
    # re-importing the same document in another clone updates instead of duplicating.
    source: str = ""

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["labels"] = {"working": self.labels[0], "broken": self.labels[1]}
        return d


def clone(record):
    """``copy.deepcopy`` of a record (an Investigation and what it holds), attribute by attribute: the generic
    deepcopy walked every string of an imported document's 10,000 attempts (a quarter second). Strings, numbers
    and tuples of them are shared, as they are immutable; a list is copied, its records cloned; anything else is
    deep-copied as before."""
    out = object.__new__(type(record))
    out.__dict__.update({k: v if _immutable(v) else _clone_list(v) if type(v) is list else copy.deepcopy(v)
                         for k, v in record.__dict__.items()})
    return out


def _clone_list(items: list) -> list:
    return [x if _immutable(x) else clone(x) if dataclasses.is_dataclass(x) else copy.deepcopy(x) for x in items]


def _immutable(v) -> bool:
    t = type(v)
    return v is None or t is str or t is int or t is float or t is bool or (t is tuple and all(map(_immutable, v)))


# --- validation -------------------------------------------------------------------

_PATHLIKE = recache.compile(r"(^|[\\/])\.\.([\\/]|$)|^[\\/~]")


def check_title(title: str, what: str = "title") -> str:
    title = (title or "").strip()
    if not any(c.isprintable() and not c.isspace() for c in title):  # (joiners alone show nothing either)
        raise DbglogError(f"empty {what}: give a short description of the bug")
    if "\n" in title or "\r" in title:
        raise DbglogError(f"the {what} must be one line")
    if _PATHLIKE.search(title):
        raise DbglogError(f"the {what} {title!r} looks like a file path; give a short description instead")
    return title


def missing_attempts(numbers, new: "Investigation") -> list[int]:
    """Of the attempt ``numbers`` an investigation holds, those another copy of it, ``new``, lacks (in order): what
    taking ``new`` in whole would delete (an import of an older dbglog file, an older mirror file synced)."""
    have = {a.number for a in new.attempts}
    return [n for n in numbers if n not in have]


def check_choice(value: str, choices: tuple[str, ...], what: str) -> str:
    v = (value or "").strip().lower().replace("_", "-")
    aliases = {"won't fix": "wontfix", "wont-fix": "wontfix", "won't-fix": "wontfix",
               "ruled out": "ruled-out", "ruledout": "ruled-out"}
    v = aliases.get(v, v)
    if v not in choices:
        raise DbglogError(f"invalid {what} {value!r}: use one of {', '.join(choices)}")
    return v


def check_cell(value: str, what: str) -> str:
    """Table cells and list items are one line: a newline would break the table for readers."""
    value = (value or "").strip()
    if "\n" in value or "\r" in value:
        raise DbglogError(f"the {what} must be one line")
    return value


# --- ids ----------------------------------------------------------------------------

_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def slugify(title: str, max_len: int = 40) -> str:
    import unicodedata

    text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode().lower()
    words = re.findall(r"[a-z0-9]+", text)
    slug = ""
    for w in words:
        cand = f"{slug}-{w}" if slug else w
        if len(cand) > max_len:
            break
        slug = cand
    return slug or "bug"


def new_id(title: str, when: datetime | None = None) -> str:
    """Date + slug + random suffix: unique across branches and teammates without coordination."""
    when = when or datetime.now(timezone.utc)
    import secrets

    suffix = "".join(secrets.choice(_ALPHABET) for _ in range(4))
    return f"{when:%Y%m%d}-{slugify(title)}-{suffix}"


ID_RE = recache.compile(r"^\d{8}-[a-z0-9-]+-[a-z0-9]{4}$")


# --- outcome inference --------------------------------------------------------------


def infer_outcome(result: str, explicit: str = "") -> str:
    """An attempt's outcome from its explicit label (if any) or its result text.

    The reading itself (negations such as "No OOM anymore" = worked, "did not help" = failed)
    lives in ``dbglog.core.outcome``; unclear text is ``inconclusive``, no text at all ``untested``.
    """
    from dbglog.core import outcome

    return outcome.infer(result, explicit)
