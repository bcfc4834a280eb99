"""English words for a note written in another language: ``gloss("把驱动降级到 470")`` -> ["driver", "downgrade"].

The search index tokenizes by spaces and punctuation, so an English question ("downgraded the driver") shares no
word with a Chinese record, and ``tried`` answered nothing for most such tries (bench/tried_e2e.py: 18 % first on
the pool's notes in other languages). The words of ``gloss.toml`` (a table per language, data) are held by the index
beside a record's text, as the words of its compound identifiers are (``synonyms.identifier_words``).

One pass per script over the text: the entries of Chinese, Japanese and Korean as one alternation anywhere in a run
(longest first, so "重新安装" wins over "安装"), only in text that holds those scripts; the others at a word's start,
in any text beyond ASCII (English beside a German word with an umlaut is read too), so none of them may start an
English word of another meaning. German written in plain ASCII ("Treiber neu installiert") is not glossed: plain
ASCII is taken as English, which costs nothing.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache

from dbglog.util import recache

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7a3]")
_NOT_ASCII = re.compile(r"[^\x00-\x7f]")


@lru_cache(maxsize=1)
def _tables() -> tuple[dict[str, str], re.Pattern | None, re.Pattern | None]:
    """entry (lower case) -> its English words; the pattern finding the CJK entries; the one finding the others."""
    from dbglog.util.config import parse

    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "gloss.toml"), encoding="utf-8") as f:
        raw = parse(f.read())
    words: dict[str, str] = {}
    for table in raw.values():
        for entry, english in table.items():
            words.setdefault(entry.lower(), english)
    cjk = sorted((e for e in words if _CJK.search(e)), key=len, reverse=True)
    other = sorted((e for e in words if not _CJK.search(e)), key=len, reverse=True)

    def alternation(entries: list[str], lead: str) -> re.Pattern | None:
        return recache.compile(lead + "(?:" + "|".join(map(re.escape, entries)) + ")", re.I) if entries else None

    # (a word's start: no letter before; an entry is a stem, "installier" finds "installiert")
    return words, alternation(cjk, ""), alternation(other, r"(?<![^\W\d_])")


def gloss(text: str) -> list[str]:
    """The English words of the entries ``text`` holds, each once, in the order first met. Plain ASCII text is taken
    as English and not looked at (an ``attempt add`` in English pays nothing: the table is read on first use)."""
    if not text or not _NOT_ASCII.search(text):
        return []
    words, cjk, other = _tables()
    seen: dict[str, None] = {}
    for pattern in (cjk if _CJK.search(text) else None, other):
        for m in pattern.finditer(text) if pattern else ():
            for w in words[m.group(0).lower()].split():
                seen.setdefault(w, None)
    return list(seen)
