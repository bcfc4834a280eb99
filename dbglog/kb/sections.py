"""Free text in the search index: investigations' free sections and watched living docs.

Both end up as rows of one ``sections`` table, one row per *chunk*: a piece of markdown under one
heading path (``Investigation notes > NCCL env``), split at sub-headings (markdown-it tokens, so a
``#`` line inside a code fence is not a heading) and, when long, at block boundaries. The FTS5
tables ``sections_fts`` and ``sections_trigram`` follow that table through triggers, like the
attempt tables do (see ``search.py``), so a chunk is searched with everything else.

* Rows of an investigation (``investigation_id`` set) are rewritten by the store whenever the
  investigation's ``sections`` change (insert, replace, ``update_fields``) and disappear with it
  (``ON DELETE CASCADE``): every write path keeps them true without knowing about them.
* Rows of a watched doc (``path`` set) come from markdown files named in ``.dbglog/config.toml``::

      [search]
      watch = ["DEBUG.md", "ideas.md", "docs/debug/**/*.md"]

  They are refreshed before ``search`` / ``tried`` by the mirror's cheap staleness check: a stat
  pass against ``watched_files`` (size, mtime), then a hash of only the files that moved, and a
  re-chunk of only the files whose bytes changed. The files are never written.

``line`` is the 1-based line where a chunk starts: in its file for a watched doc; in its section
for an investigation (line 0 is the section's own ``##`` heading, line 1 the first body line).
"""

from __future__ import annotations

import glob
import json
import os
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from pathlib import Path

from dbglog.util.errors import DbglogError
from dbglog.util.fsutil import sha256_hex
from dbglog.util.redact import clean
from dbglog.core.synonyms import identifier_words

SEP = " > "  # between the headings of a heading path
MAX_CHUNK_LINES = 40  # a longer piece under one heading is split at block boundaries
MAX_FILE_BYTES = 4_000_000  # a watched file larger than this is skipped (a log, not notes)


@dataclass
class Chunk:
    heading: str  # the heading path, SEP-joined, without '#'
    line: int  # 1-based first line (see the module docstring)
    body: str  # the verbatim lines, the chunk's own heading line included


# A line that could be (or underline) a heading: an ATX '#', or a setext '===' / '---' under a paragraph.
_MAYBE_HEADING = re.compile(r"^[ \t]*(#|=+[ \t]*$|-+[ \t]*$)", re.M)


def _md():
    # The mirror's parser (block structure only: heading and block maps, no inline pass): the blocks its parse of a
    # mirror remembers for a section body (core/markdown.known_blocks) are this parser's.
    from dbglog.core.markdown import _md as mirror_md

    return mirror_md()


def heading_text(line: str) -> str:
    s = line.strip()
    if s.startswith("#"):
        s = s.lstrip("#").strip()
        s = s.rstrip("#").rstrip() if s.endswith(" #") or s == "#" else s
    return s


def chunk(text: str, base: tuple[str, ...] = (), first_line: int = 1) -> list[Chunk]:
    """Split markdown into chunks at its headings (any level) and, past MAX_CHUNK_LINES, at blocks.

    ``base``: the heading path the text sits under (an investigation's section heading);
    ``first_line``: the line number of the text's first line."""
    if not text.strip():
        return []
    lines = text.split("\n")
    if len(lines) <= MAX_CHUNK_LINES and "\r" not in text and not _MAYBE_HEADING.search(text):
        # No heading and too short to cut: the one chunk the parse would give, without its ~20 ms
        # markdown-it import (a bisection's report section is such a text).
        return [Chunk(SEP.join(base), first_line, text.rstrip())]
    return _parsed_chunks(text, lines, base, first_line)


def _parsed_chunks(text: str, lines: list[str], base: tuple[str, ...], first_line: int) -> list[Chunk]:
    from dbglog.core.markdown import known_blocks

    known = known_blocks(text)  # (an imported section's body: its blocks were read when its mirror was verified)
    if known is not None:
        heads = [(ln, lv, heading_text(content)) for ln, lv, content in known if lv]
        blocks = {ln for ln, _lv, _content in known}
    else:
        heads, blocks = _blocks(text, lines)
    out: list[Chunk] = []
    order = sorted(blocks)  # (each heading's blocks by bisection: a scan of all of them per heading was quadratic)
    stack: list[tuple[int, str]] = []  # (level, text) of the open headings
    bounds = [(0, None)] + [(ln, (lv, tx)) for ln, lv, tx in heads]
    for k, (start, head) in enumerate(bounds):
        end = bounds[k + 1][0] if k + 1 < len(bounds) else len(lines)
        if head is not None:
            lv, tx = head
            while stack and stack[-1][0] >= lv:
                stack.pop()
            stack.append((lv, tx))
        if start >= end:
            continue
        path = SEP.join([*base, *(tx for _lv, tx in stack if tx)])

        def emit(a, b, path=path):  # (called within this iteration)
            body = "\n".join(lines[a:b]).rstrip()
            if body.strip():
                out.append(Chunk(path, first_line + a, body))

        piece_start = start
        for b in order[bisect_right(order, start):bisect_left(order, end)]:
            if b - piece_start >= MAX_CHUNK_LINES:  # cut only between blocks, never inside one
                emit(piece_start, b)
                piece_start = b
        emit(piece_start, end)
    return out


def _blocks(text: str, lines: list[str]) -> tuple[list[tuple[int, int, str]], set[int]]:
    """The headings ((line, level, text)) and the lines where a top-level block starts, of ``text`` parsed."""
    tokens = _md().parse(text)
    heads: list[tuple[int, int, str]] = []  # (line, level, text)
    blocks: set[int] = set()  # lines where a top-level block starts
    for i, t in enumerate(tokens):
        if t.level != 0 or not t.map or t.nesting == -1:
            continue
        if t.type == "front_matter":  # other tools' YAML front matter: part of the preamble
            continue
        blocks.add(t.map[0])
        if t.type == "heading_open":
            content = tokens[i + 1].content if i + 1 < len(tokens) else lines[t.map[0]]
            heads.append((t.map[0], int(t.tag[1]), heading_text(content)))
    return heads, blocks


def investigation_chunks(sections) -> list[Chunk]:
    """Chunks of an investigation's free sections (model.Section or dicts), in order. Bookkeeping sections
    (import's ``## Source headings``) are not the author's words: never found by search or tried."""
    from dbglog.core.model import BOOKKEEPING_SECTIONS

    out = []
    for s in sections:
        heading, body = (s["heading"], s["body"]) if isinstance(s, dict) else (s.heading, s.body)
        if heading in BOOKKEEPING_SECTIONS:
            continue
        title = heading_text(heading)
        pieces = chunk(body, (title,), first_line=1)
        if not pieces:  # a heading with no body is still findable by its words
            pieces = [Chunk(title, 0, heading)]
        out += pieces
    return out


def stored(chunks: list[Chunk]) -> list[Chunk]:
    """Chunks as they may be stored: no control bytes, no secrets (a watched doc is the user's own
    file, never cleaned by the record layer; cleaned per chunk so line numbers stay the file's)."""
    for c in chunks:
        c.heading, c.body = clean(c.heading), clean(c.body)
    return chunks


# --- the index rows ------------------------------------------------------------------------------


def set_investigation(conn, inv_id: str, sections) -> None:
    """Make the chunk rows of one investigation match its sections (triggers update the FTS)."""
    conn.execute("DELETE FROM sections WHERE investigation_id = ?", (inv_id,))
    if not sections:
        return
    conn.executemany(
        "INSERT INTO sections (investigation_id, position, heading, line, body, words) VALUES (?, ?, ?, ?, ?, ?)",
        [(inv_id, n, c.heading, c.line, c.body, identifier_words(c.heading, c.body))
         for n, c in enumerate(stored(investigation_chunks(sections)), 1)])


def rebuild(conn) -> None:
    """Re-chunk every investigation's sections from ``investigations.sections`` (the truth)."""
    conn.execute("DELETE FROM sections WHERE investigation_id IS NOT NULL")
    for inv_id, raw in conn.execute("SELECT id, sections FROM investigations WHERE sections != '[]'").fetchall():
        set_investigation(conn, inv_id, json.loads(raw))


def check(conn) -> list[str]:
    """Investigations whose chunk rows differ from their sections (empty = in sync)."""
    have: dict[str, list] = {}
    for inv_id, heading, line, body in conn.execute(
            "SELECT investigation_id, heading, line, body FROM sections WHERE investigation_id IS NOT NULL "
            "ORDER BY investigation_id, position"):
        have.setdefault(inv_id, []).append((heading, line, body))
    problems = []
    for inv_id, raw in conn.execute("SELECT id, sections FROM investigations"):
        want = [(c.heading, c.line, c.body) for c in investigation_chunks(json.loads(raw))]
        if have.pop(inv_id, []) != want:
            problems.append(f"sections: chunks of {inv_id} are out of date")
    problems += [f"sections: chunks of unknown investigation {i}" for i in have]
    return problems


# --- watched docs --------------------------------------------------------------------------------


@dataclass
class WatchReport:
    indexed: list[str] = field(default_factory=list)  # (re)chunked because their bytes changed
    removed: list[str] = field(default_factory=list)  # deleted or no longer watched
    skipped: list[str] = field(default_factory=list)  # unreadable or too large

    @property
    def changed(self) -> bool:
        return bool(self.indexed or self.removed)


def watch_patterns(config_path: Path) -> list[str]:
    """``[search] watch`` of config.toml: a list of paths / glob patterns (``**`` recurses)."""
    from dbglog.util import config

    pats = config.table(config_path, "search", needle=b"watch").get("watch", [])  # (no parse without it)
    if isinstance(pats, str):
        pats = [pats]
    if not isinstance(pats, list) or not all(isinstance(p, str) and "\x00" not in p for p in pats):
        raise DbglogError(f"{config_path}: [search] watch must be a list of paths, e.g. [\"DEBUG.md\", "
                          "\"docs/debug/**/*.md\"]")
    return [p for p in pats if p.strip()]


def watched_files(root: Path, patterns: list[str]) -> dict[str, os.stat_result]:
    """Path as shown (relative to the workspace root when inside it) -> stat, for every match."""
    out: dict[str, os.stat_result] = {}
    root_s = str(root)
    for pat in patterns:
        pat = os.path.expanduser(pat.strip())
        full = pat if os.path.isabs(pat) else os.path.join(root_s, pat)
        if "**" in pat:
            names = _walk_matches(root_s, pat, full)
        else:
            names = glob.glob(full) if glob.has_magic(pat) else [full]
        for name in names:
            try:
                st = os.stat(name)
            except (OSError, ValueError):
                continue
            if not os.path.isfile(name):
                continue
            rel = os.path.relpath(name, root_s)
            shown = Path(rel).as_posix() if not rel.startswith("..") else os.path.abspath(name)
            first = shown.split("/", 1)[0]
            if first in (".dbglog", "logs") and shown.endswith(".md"):
                continue  # the mirror and dbglog's own files are indexed already
            out[shown] = st
    return out


def _walk_matches(root_s: str, pat: str, full: str) -> list[str]:
    """The files a ``**`` pattern matches, by a walk that never follows a link to a directory: glob's own walk
    followed them, so two links to "." made every search and tried loop for ever, and a link to "/" walked the
    disk. A linked file counts only when it lies inside the workspace. The walk starts at the pattern's plain
    directory part, which must be inside the workspace."""
    head = full.split("**", 1)[0]
    raw = head.rstrip(os.sep) if head.endswith(os.sep) else os.path.dirname(head)
    while glob.has_magic(raw):
        raw = os.path.dirname(raw)
    top, rest = os.path.normpath(raw or os.sep), full[len(raw):].lstrip(os.sep)
    if os.path.relpath(top, root_s).startswith("..") or ".." in rest.split("/"):
        # ("/**/*.md", "../**", "**/../../**": a walk of the whole disk before every search and tried)
        raise DbglogError(f"[search] watch {pat!r}: a '**' pattern must stay inside the workspace "
                          f"({root_s}); name the files outside it one by one")
    match = _glob_regex(rest).fullmatch
    real_root = os.path.realpath(root_s)
    out = []
    for d, dirs, files in os.walk(top):  # (followlinks=False: a linked directory is listed, never entered)
        dirs[:] = sorted(x for x in dirs if not x.startswith("."))
        rel_d = os.path.relpath(d, top)
        for f in sorted(files):
            rel = f if rel_d == "." else f"{rel_d}/{f}"
            if f.startswith(".") or not match(rel):
                continue
            path = os.path.join(d, f)
            if os.path.islink(path) and not os.path.realpath(path).startswith(real_root + os.sep):
                continue
            out.append(path)
    return out


def _glob_regex(pattern: str):
    """A glob pattern (relative, '/'-separated) as a regex: ``**/`` any directories (none too), ``*`` and ``?``
    within one name, ``[...]`` a class."""
    import re

    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[" and (j := pattern.find("]", i + 2)) > 0:
            body = pattern[i + 1:j]
            body = body.replace("\\", "\\\\")
            out.append("[" + ("^" + body[1:] if body[0] in "!^" else body) + "]")
            i = j + 1
            continue
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out), re.DOTALL)


def refresh(store, root: Path, config_path: Path) -> WatchReport:
    """Bring the watched docs' chunks up to date (a stat pass; a write only when something moved)."""
    report = WatchReport()
    patterns = watch_patterns(config_path)
    conn = store.conn
    if not patterns and conn.execute("SELECT 1 FROM watched_files LIMIT 1").fetchone() is None:
        return report
    files = watched_files(root, patterns) if patterns else {}
    base = {r[0]: r for r in conn.execute("SELECT path, size, mtime_ns, sha256 FROM watched_files")}
    moved = [p for p, st in files.items() if base.get(p, (None, None, None))[1:3] != (st.st_size, st.st_mtime_ns)]
    gone = [p for p in base if p not in files]
    if not moved and not gone:
        return report
    with store.write():
        for p in sorted(moved):
            st = files[p]
            full = Path(p) if os.path.isabs(p) else root / p
            if st.st_size > MAX_FILE_BYTES:
                report.skipped.append(p)
                continue
            try:
                data = full.read_bytes()
            except OSError:
                report.skipped.append(p)
                continue
            digest = sha256_hex(data)
            old = base.get(p)
            if old is None or old[3] != digest:
                if b"\x00" in data[:8192]:
                    report.skipped.append(p)
                    continue
                text = data.decode("utf-8", "replace").replace("\r\n", "\n")
                conn.execute("DELETE FROM sections WHERE path = ?", (p,))
                conn.executemany(
                    "INSERT INTO sections (path, position, heading, line, body, words) VALUES (?, ?, ?, ?, ?, ?)",
                    [(p, n, c.heading, c.line, c.body, identifier_words(c.heading, c.body))
                     for n, c in enumerate(stored(chunk(text)), 1)])
                report.indexed.append(p)
            conn.execute(
                "INSERT INTO watched_files (path, size, mtime_ns, sha256) VALUES (?, ?, ?, ?) ON CONFLICT(path) "
                "DO UPDATE SET size=excluded.size, mtime_ns=excluded.mtime_ns, sha256=excluded.sha256",
                (p, st.st_size, st.st_mtime_ns, digest))
        for p in gone:
            conn.execute("DELETE FROM sections WHERE path = ?", (p,))
            conn.execute("DELETE FROM watched_files WHERE path = ?", (p,))
            report.removed.append(p)
    return report


# --- schema (migration 0008_sections) ------------------------------------------------------------


def create_tables(db) -> None:
    """The chunk table, the watched files' baseline, and their search tables. ``db``: sqlite_utils."""
    db.executescript(
        """
        CREATE TABLE IF NOT EXISTS sections (
          id INTEGER PRIMARY KEY,
          investigation_id TEXT REFERENCES investigations(id) ON DELETE CASCADE,  -- NULL: a watched doc
          path TEXT,                       -- the watched doc (relative to the workspace root)
          position INTEGER NOT NULL,       -- order within the investigation or doc
          heading TEXT NOT NULL,           -- heading path, ' > ' between headings
          line INTEGER NOT NULL DEFAULT 0, -- first line (see dbglog/kb/sections.py)
          body TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS sections_inv ON sections(investigation_id) WHERE investigation_id IS NOT NULL;
        CREATE INDEX IF NOT EXISTS sections_path ON sections(path) WHERE path IS NOT NULL;
        CREATE TABLE IF NOT EXISTS watched_files (
          path TEXT PRIMARY KEY,
          size INTEGER NOT NULL,
          mtime_ns INTEGER NOT NULL,
          sha256 TEXT NOT NULL
        );
        """
    )  # the search tables over them: search.create_section_index, called next by the migration
