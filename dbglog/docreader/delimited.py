"""Tables written as delimited text: reStructuredText's ``csv-table`` directive, and CSV or TSV in a fence.

Why: a Sphinx page's test matrix (``.. csv-table::`` with ``:header: "GPU","Toolkit","Status"`` over
``"RTX 2080Ti","11.0.3","Working"`` rows) is a results table as much as a markdown one, but markdown-it
reads it as one paragraph of quoted words. Read here into a header and rows, the segmenter makes them the
same row units a markdown table gives, so the linker reads its Status column as it reads any other.

Only certain shapes are read: the directive above the rows, a fence whose language says csv or tsv, or
lines that are all fully quoted fields; every row must have the same number of fields (two or more).
Anything else is no table, and stays what it was.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass

from dbglog.util import recache


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: list[list[str]]
    header_first: bool  # the header is the first of the lines read (else the directive's :header: option)

_DIRECTIVE = recache.compile(r"^\s*\.\.\s+csv-table::")
_OPTION = recache.compile(r"^\s*:(?P<name>[\w-]{1,30}):\s*(?P<value>.*)$")
_QUOTED_ROW = recache.compile(r'^\s*"[^"\n]{0,500}"(?:\s*,\s*"[^"\n]{0,500}")+\s*,?\s*$')
_MAX_ROWS = 5000  # (a longer run of lines is read as it was: a table is read line by line, this bounds the cost)


def _fields(lines: list[str], delimiter: str = ",") -> list[list[str]] | None:
    try:
        rows = [[c.strip() for c in r] for r in csv.reader((ln.strip() for ln in lines), delimiter=delimiter,
                                                            skipinitialspace=True)]
    except csv.Error:  # a field past the csv module's limit, a NUL: no table
        return None
    if len(rows) != len(lines) or not rows or len(rows[0]) < 2 or any(len(r) != len(rows[0]) for r in rows):
        return None
    return rows


def _directive_options(lines: list[str], a: int) -> dict[str, str] | None:
    """The options of the ``csv-table`` directive right above line ``a`` (blank lines and option lines between),
    or None when no such directive is there."""
    opts: dict[str, str] = {}
    i = a - 1
    while i >= 0 and a - i <= 40:
        s = lines[i]
        m = _OPTION.match(s)
        if m:
            opts.setdefault(m.group("name").lower(), m.group("value"))
        elif _DIRECTIVE.match(s):
            return opts
        elif s.strip():
            return None
        i -= 1
    return None


def table_in_paragraph(lines: list[str], a: int, texts: list[str]) -> Table | None:
    """The table when the paragraph at line ``a`` (its lines ``texts``) is a delimited table's body: the
    rows under a ``csv-table`` directive, or three or more fully quoted rows. The header is the directive's
    ``:header:``, else the first row (which is then not in ``rows``: its line is the header's)."""
    if len(texts) < 2 or len(texts) > _MAX_ROWS:
        return None
    opts = _directive_options(lines, a)
    if opts is None and (len(texts) < 3 or not all(_QUOTED_ROW.match(t) for t in texts)):
        return None
    rows = _fields(texts)
    if rows is None:
        return None
    header = _fields([opts["header"]]) if opts and opts.get("header") else None
    if header and len(header[0]) == len(rows[0]):
        return Table(tuple(header[0]), rows, False)
    return Table(tuple(rows[0]), rows[1:], True)


def table_in_fence(lang: str, body: list[str]) -> Table | None:
    """The table of a fence whose language says csv or tsv: its first line is the header."""
    if lang not in ("csv", "tsv") or len(body) < 2 or len(body) > _MAX_ROWS:
        return None
    rows = _fields(body, "\t" if lang == "tsv" else ",")
    return Table(tuple(rows[0]), rows[1:], True) if rows else None
