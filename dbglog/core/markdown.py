"""The canonical markdown format of an investigation: render and parse, in one place.

The packaged layout is ``templates/investigation.md.j2``; ``render_default`` writes its output in plain
Python (``dbglog.kb.mirror`` renders a user's own template with jinja2 and checks it reads back). This
module owns the escaping that makes ``parse(render(inv)) == inv`` hold for *any* content (tested with
hypothesis). It is a bottom-layer value format (``dbglog.core``): ``kb`` stores and syncs with it, the
reader of people's markdown (``docreader``) verifies an import against it; neither imports the other.

How exactness is achieved while staying readable:

* markdown-it-py finds the document structure (front matter, top-level headings) so that a
  ``#`` inside a code fence or an HTML comment never splits a section;
* field values are read back from the raw source lines, never from markdown-it's inline
  rendering, so backticks, ``*``, pipes and trailing spaces survive;
* a field value is written plainly (``**Result:** text``) when no line of it could be
  mistaken for structure; otherwise it goes into a fenced block with the info string
  ``dbglog`` (fence longer than any backtick run inside), or ``dbglog-json`` when it holds a
  carriage return, which markdown would silently turn into a line break;
* table rows and list items are checked at render time by parsing them back; if a row does not
  survive, the exact data is added in an invisible ``<!-- dbglog-data ... -->`` comment, which
  the parser uses for each line still as it was rendered (so a hand edit of a row or step wins
  over the stale comment, and leaves the others as stored).
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from functools import lru_cache

from dbglog.util import recache  # (compiled once per install: see util/recache.py)
from dbglog.util.errors import DbglogError
from dbglog.util import jsonsafe
from dbglog.util.fsutil import sha256_hex
from dbglog.core.model import (
    DEFAULT_LABELS,
    DIFF_STATUSES,
    OUTCOMES,
    STATUS_LABELS,
    STATUSES,
    Attempt,
    Difference,
    Investigation,
    NextStep,
    Section,
)

ATTEMPT_FIELDS = (
    ("title", "Title"),
    ("hypothesis", "Hypothesis"),
    ("did", "What you did"),
    ("result", "Result"),
    ("conclusion", "Conclusion"),
)
HEADER_FIELDS = (
    ("symptom", "Symptom", "inline"),
    ("environment", "Environment", "block"),
    ("root_cause", "Root cause", "inline"),
)


# An investigation id as a file name stem of logs/ (new ids are model.ID_RE; hand-written ones may be freer).
SAFE_ID = recache.compile(r"\w[\w.-]{0,199}")  # (any script's letters and digits: \w)


def _shown(value: str) -> str:
    """A hand-written value quoted for an error line: control characters escaped, cut at 60."""
    return repr(value[:60] + ("..." if len(value) > 60 else ""))


def _refuse_stray(lines: list[str], at, offset: int, path, where: str, hint: str) -> None:
    """A hand-written line the structure has no place for (``lines[i]`` for ``i`` in ``at``; blank lines and HTML
    comments aside) is refused where it stands: read and written back, it would be lost."""
    for i in at:
        line = lines[i]
        if line.strip() and not line.lstrip().startswith("<!--"):
            raise ParseError(f"{_shown(line.strip())} stands {where}; {hint}", path, offset + i + 1)


class ParseError(DbglogError):
    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        where = f"{path or '<text>'}" + (f":{line}" if line else "")
        super().__init__(f"{where}: {message}")
        self.path, self.line, self.reason = path, line, message


# --- field encoding -----------------------------------------------------------------

_LABEL_LINE = recache.compile(r"^\*\*(?P<label>[^*\n]{1,40}?):\*\*(?: (?P<rest>.*))?$")
_LABELISH = recache.compile(r"^\s*\*\*[^*]*(:\*\*|\*\*\s*:)")
_BLOCK_START = recache.compile(r"^ {0,3}(#|```|~~~|<|\|)")
_RULE_CHARS = set("-=*_ \t")
_FENCE = recache.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")


def _line_unsafe(line: str) -> bool:
    s = line.strip()
    return bool(
        _LABELISH.match(line)
        or _BLOCK_START.match(line)
        or (s and set(s) <= _RULE_CHARS)
    )


def _raw_safe(value: str, inline: bool) -> bool:
    if "\r" in value or value != value.strip():
        return False
    lines = value.split("\n")
    return not any(_line_unsafe(line) for line in (lines[1:] if inline else lines))


def _fence_for(value: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", value)), default=0)
    return "`" * max(3, longest + 1)


def render_field(label: str, value: str, style: str = "inline") -> str:
    """The lines for one ``**Label:** value`` field, ending in a newline; '' for an empty value."""
    if not value:
        return ""
    if "\r" in value:
        return f"**{label}:**\n```dbglog-json\n{json.dumps(value)}\n```\n\n"
    if _raw_safe(value, inline=style == "inline"):
        if style == "inline":
            return f"**{label}:** {value}\n" + ("\n" if "\n" in value else "")
        return f"**{label}:**\n{value}\n\n"
    fence = _fence_for(value)
    return f"**{label}:**\n{fence}dbglog\n{value}\n{fence}\n\n"


def scan_fields(lines: list[str], labels: dict[str, str]) -> tuple[dict[str, str], list[int]]:
    """Split raw lines into ``{key: value}`` by their ``**Label:**`` lines (fence-aware).

    ``labels`` maps the printed label (case-insensitive) to the key. Lines before the first
    label are returned as their indices in the second element (the caller decides what they
    mean).
    """
    bufs, stray = scan_field_lines(lines, labels)
    return {k: _decode_value(v) for k, v in bufs.items()}, stray


def scan_field_lines(lines: list[str], labels: dict[str, str], repeated: list[int] | None = None,
                     continued: dict[str, list[int]] | None = None) -> tuple[dict[str, list[str]], list[int]]:
    """Like scan_fields, but each value is its raw lines: [rest of the label line, *following lines].
    ``repeated``, when given, collects the index of each label line whose field was already given (the later one
    would replace the earlier); ``continued``, per field, the indices of the lines after its label line."""
    lookup = {k.lower(): v for k, v in labels.items()}
    out: dict[str, list[str]] = {}
    stray: list[int] = []
    key: str | None = None
    buf: list[str] = []
    fence: tuple[str, int] | None = None

    def flush() -> None:
        if key is not None:
            out[key] = buf

    for i, line in enumerate(lines):
        if fence is None:
            m = _LABEL_LINE.match(line)
            if m and m.group("label").lower() in lookup:
                flush()
                key = lookup[m.group("label").lower()]
                if repeated is not None and key in out:
                    repeated.append(i)
                buf = [m.group("rest") or ""]
                continue
            fm = _FENCE.match(line)
            if fm:
                fence = (fm.group(2)[0], len(fm.group(2)))
        else:
            fm = _FENCE.match(line)
            if fm and fm.group(2)[0] == fence[0] and len(fm.group(2)) >= fence[1] and not fm.group(3).strip():
                fence = None
        if key is None:
            stray.append(i)
        else:
            buf.append(line)
            if continued is not None:
                continued.setdefault(key, []).append(i)
    flush()
    return out, stray


def _decode_value(buf: list[str]) -> str:
    rest, body = buf[0], buf[1:]
    if not rest and body:
        fm = _FENCE.match(body[0])
        if fm and not fm.group(1) and fm.group(3) in ("dbglog", "dbglog-json"):
            fence = fm.group(2)
            for j in range(1, len(body)):
                if body[j] == fence:
                    content = "\n".join(body[1:j])
                    if fm.group(3) == "dbglog-json":
                        try:
                            value = jsonsafe.loads(content)
                        except ValueError:
                            break
                        if isinstance(value, str):
                            return value
                        break
                    return content
    text = "\n".join([rest, *body]) if rest else "\n".join(body)
    return text.strip()


# --- table rows and list items ------------------------------------------------------


def _esc_cell(s: str) -> str:
    return s.replace("\\", "\\\\").replace("|", "\\|")


def split_row(line: str) -> list[str]:
    """Cells of a GFM table row, honouring ``\\|`` and ``\\\\`` escapes (our own writer's rules)."""
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    cells, cur, i = [], [], 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s) and s[i + 1] in "\\|":
            cur.append(s[i + 1])
            i += 2
            continue
        if c == "|":
            cells.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    tail = "".join(cur).strip()
    if tail:
        cells.append(tail)
    return cells


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(_esc_cell(c) for c in cells) + " |"


def _flat(s: str) -> str:
    return " ".join(s.split())


def render_diff_table(labels: tuple[str, str], rows: list[Difference]) -> list[str]:
    with_apply = any(r.apply for r in rows)
    head = ["Factor", labels[0], labels[1], "Status"] + (["Apply"] if with_apply else [])
    lines = [_row(head), "|" + "---|" * len(head)]
    for r in rows:
        cells = [r.factor, r.working, r.broken, r.status] + ([r.apply] if with_apply else [])
        lines.append(_row(cells))
    return lines


def parse_diff_table(lines: list[str]) -> tuple[tuple[str, str], list[Difference]]:
    if len(lines) < 2:
        raise ValueError("a table needs a header row and a dashed rule")
    head = split_row(lines[0])
    if len(head) < 4:
        raise ValueError("the differences table needs columns Factor | working | broken | Status")
    with_apply = len(head) >= 5 and head[4].lower() == "apply"
    rows = []
    for n, line in enumerate(lines[2:], 1):
        cells = split_row(line)
        if len(cells) > len(head):
            raise ValueError(f"row {n} has {len(cells)} cells and the header {len(head)}: a cell would be lost; "
                             "join it to another cell or add its column to the header")
        cells += [""] * (len(head) - len(cells))
        rows.append(Difference(position=n, factor=cells[0], working=cells[1], broken=cells[2],
                               status=cells[3] or "untested", apply=cells[4] if with_apply else ""))
    return (head[1], head[2]), rows


_MARK = {"todo": " ", "done": "x", "dropped": "-"}
_UNMARK = {" ": "todo", "x": "done", "X": "done", "-": "dropped", "~": "dropped"}
_STEP_RE = recache.compile(
    r"^(?P<pos>\d+)\. \[(?P<mark>[ xX~-])\] \*\*(?P<text>.+?)\*\*"
    r"(?: — (?P<detail>.*?))?(?: \(→ Attempt (?P<att>\d+)\))?$"
)


def render_step(s: NextStep) -> str:
    line = f"{s.position}. [{_MARK[s.status]}] **{s.text}**"
    if s.detail:
        line += f" — {s.detail}"
    if s.attempt is not None:
        line += f" (→ Attempt {s.attempt})"
    return line


def parse_step(line: str, position: int) -> NextStep | None:
    m = _STEP_RE.match(line)
    if not m:
        return None
    att = m.group("att")
    if att and len(att) > 9:  # (SQLite holds 64 bits: a link no attempt can have would break every command)
        raise ValueError(f"step {position} links attempt {_long_number(att)}, a number too large")
    if att and int(att) == 0:
        raise ValueError(f"step {position} links attempt 0: attempts are numbered from 1")
    return NextStep(position=position, text=m.group("text"), detail=m.group("detail") or "",
                    status=_UNMARK[m.group("mark")], attempt=int(att) if att else None)


def _long_number(digits: str) -> str:
    return digits[:20] + ("..." if len(digits) > 20 else "")


def _digest(lines: list[str]) -> str:
    return sha256_hex("\n".join(lines).encode())[:16]


def _data_comment(lines: list[str], payload) -> str:
    # '>' is escaped so the JSON can never close the HTML comment early.
    data = json.dumps({"sha": _digest(lines), "data": payload}, ensure_ascii=False)
    return "<!-- dbglog-data " + data.replace(">", "\\u003e") + " -->"


def _comment_data(line: str | None):
    """The data of a ``<!-- dbglog-data ... -->`` line (its ``sha`` of the lines shown is no longer needed: each line
    is matched against the rendering of what the data keeps); None when it is not one."""
    m = re.match(r"^<!-- dbglog-data (.*) -->$", line or "")
    if not m:
        return None
    try:
        obj = jsonsafe.loads(m.group(1))
    except ValueError:
        return None
    return obj.get("data") if isinstance(obj, dict) else None


def _one_line_each(lines: list[str]) -> bool:
    return not any("\n" in line or "\r" in line for line in lines)


def _shown_table(labels, rows: list[Difference]) -> list[str]:
    """The visible lines of a table kept exactly in the data comment."""
    return render_diff_table((_flat(labels[0]), _flat(labels[1])),
                             [Difference(r.position, _flat(r.factor), _flat(r.working), _flat(r.broken), r.status,
                                         _flat(r.apply)) for r in rows])


def diff_section_lines(inv: Investigation) -> list[str]:
    lines = render_diff_table(inv.labels, inv.differences)
    try:
        ok = _one_line_each(lines) and parse_diff_table(lines) == (tuple(inv.labels), inv.differences)
    except ValueError:
        ok = False
    if not ok:
        shown = _shown_table(inv.labels, inv.differences)
        payload = {"labels": list(inv.labels), "rows": [r.to_dict() for r in inv.differences]}
        return shown + ["", _data_comment(shown, payload)]
    return lines


def _shown_step(s: NextStep) -> str:
    """The visible line of a step kept exactly in the data comment."""
    return render_step(NextStep(s.position, _flat(s.text).replace("**", "") or "(untitled)", _flat(s.detail),
                                s.status, s.attempt))


def _reads_back(line: str, s: NextStep) -> bool:
    try:
        return parse_step(line, s.position) == s
    except ValueError:  # a detail ending in a link no attempt can have: the data comment keeps it
        return False


def steps_section_lines(steps: list[NextStep]) -> list[str]:
    lines = [render_step(s) for s in steps]
    if _one_line_each(lines) and all(_reads_back(line, s) for line, s in zip(lines, steps)):
        return lines
    shown = [_shown_step(s) for s in steps]
    return shown + ["", _data_comment(shown, [s.to_dict() for s in steps])]


def files_lines(files: list[str]) -> str:
    if not files:
        return ""
    body = [f"- `{f}`" for f in files]
    if _one_line_each(body) and _parse_files(body) == files:
        return "**Related files:**\n" + "\n".join(body) + "\n\n"
    return f"**Related files:**\n```dbglog-json\n{json.dumps(files)}\n```\n\n"


def _parse_files(lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        s = line.strip()
        if not s:
            continue
        if s.startswith(("- ", "* ", "+ ")):
            s = s[2:].strip()
        if len(s) >= 2 and s.startswith("`") and s.endswith("`") and "`" not in s[1:-1]:
            s = s[1:-1]
        out.append(s)
    return out


def _decode_files(buf: list[str]) -> list[str]:
    if not buf[0] and len(buf) >= 3 and buf[1] == "```dbglog-json" and buf[3:4] == ["```"]:
        try:
            data = jsonsafe.loads(buf[2])
        except ValueError:
            data = None
        if isinstance(data, list) and all(isinstance(x, str) for x in data):
            return data
    return _parse_files(buf)


# --- headings and front matter ------------------------------------------------------

_SIMPLE_TAG = recache.compile(r"^[A-Za-z_][A-Za-z0-9_.\-/+]*$")
_YAML_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "none", "~"}


def yaml_list(items: list[str]) -> str:
    if all(_SIMPLE_TAG.fullmatch(t) and t.lower() not in _YAML_WORDS for t in items):
        return "[" + ", ".join(items) + "]"
    import yaml

    # Double quotes: the only YAML style that escapes newlines and NEL instead of folding them.
    return yaml.safe_dump(items, default_flow_style=True, default_style='"', allow_unicode=True,
                          width=1 << 30).strip()


def yaml_str(s: str) -> str:
    import yaml

    return yaml.safe_dump(s, default_style='"', allow_unicode=True, width=1 << 30).strip()


_PLAIN_SCALAR = recache.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:+\-]*$")


def scalar(s: str) -> str:
    """A front-matter value: plain when YAML would read it back as the same string."""
    if _PLAIN_SCALAR.fullmatch(s) and s.lower() not in _YAML_WORDS and not re.fullmatch(r"[\d.:+\-]+", s):
        return s
    if re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", s):
        return s  # our timestamps: read back as datetime, turned back into this string by parse()
    return yaml_str(s)


def block(*parts: str) -> str:
    """Join rendered fields; exactly one newline at the end (the template adds the blank line)."""
    return "".join(parts).rstrip("\n")


def heading_safe(s: str) -> bool:
    return "\n" not in s and "\r" not in s


# --- render -------------------------------------------------------------------------


def render(inv: Investigation) -> str:
    """The canonical markdown of ``inv`` (the packaged template's output)."""
    return render_default(inv)


def render_default(inv: Investigation) -> str:
    """templates/investigation.md.j2, rendered as jinja2 renders it (trim_blocks, lstrip_blocks,
    keep_trailing_newline); change the two together."""
    out = ["---\n", f"id: {scalar(inv.id)}\n"]
    if not heading_safe(inv.title):
        out.append(f"title: {yaml_str(inv.title)}\n")
    out += [f"status: {scalar(inv.status)}\n", f"created: {scalar(inv.created)}\n",
            f"updated: {scalar(inv.updated)}\n", f"tags: {yaml_list(inv.tags)}\n"]
    if inv.source:
        out.append(f"source: {yaml_str(inv.source)}\n")
    out += ["---\n", f"# {inv.title if heading_safe(inv.title) else _flat(inv.title)}\n", "\n",
            block("**Status:** " + STATUS_LABELS.get(inv.status, inv.status) + "\n",
                  render_field("Symptom", inv.symptom), render_field("Environment", inv.environment, "block"),
                  files_lines(inv.related_files), render_field("Root cause", inv.root_cause)), "\n"]
    attempts = sorted(inv.attempts, key=lambda a: a.number)
    if attempts:
        out.append("\n## Attempts\n")
        for a in attempts:
            out.append(f"\n### Attempt {a.number}" + (f": {a.title if heading_safe(a.title) else _flat(a.title)}"
                                                      if a.title else "") + "\n")
            if a.created:
                out.append(f"<!-- created: {a.created} -->\n")
            out += [block((render_field("Title", a.title) if not heading_safe(a.title) else "")
                          + render_field("Hypothesis", a.hypothesis) + render_field("What you did", a.did)
                          + render_field("Result", a.result) + render_field("Conclusion", a.conclusion)
                          + "**Outcome:** " + str(a.outcome) + "\n"
                          + (("**Runs:** " + ", ".join(str(r) for r in a.runs) + "\n") if a.runs else "")
                          + provenance_lines(a)), "\n"]
    if inv.differences or inv.labels != DEFAULT_LABELS:
        out.append(f"\n## Key Differences: {_flat(inv.labels[0])} vs {_flat(inv.labels[1])}\n\n")
        out += [f"{line}\n" for line in diff_section_lines(inv)]
    if inv.next_steps:
        out.append("\n## What to Try Next\n\n")
        out += [f"{line}\n" for line in steps_section_lines(inv.next_steps)]
    for sec in inv.sections:
        out.append(f"\n{sec.heading}\n" + (f"{sec.body}\n" if sec.body else ""))
    return "".join(out)


# --- parse --------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _md():
    from markdown_it import MarkdownIt
    from mdit_py_plugins.front_matter import front_matter_plugin

    # Only block structure is used (token maps of front matter and headings): skipping the
    # inline pass halves the parse time of a file.
    return MarkdownIt("commonmark").use(front_matter_plugin).disable("inline")


def _structure(text: str) -> tuple[str | None, int, list[tuple[int, int, str]], list[tuple[int, int, int, str]]]:
    """(front matter, first body line, [(line, level, raw heading line)] for top-level headings, [(first line, end
    line, heading level or 0, heading text)] for every top-level block)."""
    tokens = _md().parse(text)
    front, body_start, heads, blocks = None, 0, [], []
    lines = text.split("\n")
    for i, t in enumerate(tokens):
        if t.type == "front_matter":
            front, body_start = t.content, t.map[1]
        elif t.level == 0 and t.map and t.nesting != -1:
            head = t.type == "heading_open"
            blocks.append((t.map[0], t.map[1], int(t.tag[1]) if head else 0, tokens[i + 1].content if head else ""))
            if head:
                heads.append((t.map[0], int(t.tag[1]), lines[t.map[0]]))
    return front, body_start, heads, blocks


# A free section's body -> its top-level blocks as a parse of the body alone gives them ([(line, heading level or 0,
# heading text)]), read off the parse of the whole file: the search index chunks each body at those blocks, and a
# second parse of a 10,000-line body cost 0.7 s of an import. Bounded; a body not here is parsed (kb/sections.py).
_KNOWN_BLOCKS: dict[str, list[tuple[int, int, str]]] = {}
_KNOWN_MAX, _KNOWN_CHARS = 512, 16_000_000  # (bodies, and their characters: a long-lived server keeps few)
_known_chars = 0


def known_blocks(body: str) -> list[tuple[int, int, str]] | None:
    """The top-level blocks of ``body`` parsed alone (``_md``), when a parse of a file holding it as a section read
    them already; else None."""
    return _KNOWN_BLOCKS.get(body)


def _remember_blocks(body: str, start: int, blocks: list[tuple[int, int, int, str]], firsts: list[int]) -> None:
    """Keep the blocks of the section body ``body`` whose ``##`` heading is line ``start`` of the parsed file.
    Inside the file the body's blocks start where a parse of it alone starts them: the parse begins afresh after an
    ATX heading (one line, it leaves nothing open), and none of its blocks ran on past it (the next section's
    heading is a top-level block). Front matter opens only a parse's first line: a body opening with "---" is left
    to its own parse."""
    k = bisect_left(firsts, start)
    if not body or body.startswith("---") or k == len(firsts) or blocks[k][:2] != (start, start + 1) or not blocks[k][2]:
        return
    n = body.count("\n") + 1
    end = bisect_left(firsts, start + 1 + n, k + 1)
    global _known_chars
    _known_chars -= len(body) if _KNOWN_BLOCKS.pop(body, None) is not None else 0
    while _KNOWN_BLOCKS and (len(_KNOWN_BLOCKS) >= _KNOWN_MAX or _known_chars + len(body) > _KNOWN_CHARS):
        _known_chars -= len(_KNOWN_BLOCKS.pop(next(iter(_KNOWN_BLOCKS))))  # (the oldest: insertion order)
    if len(body) <= _KNOWN_CHARS:
        _known_chars += len(body)
        _KNOWN_BLOCKS[body] = [(a - start - 1, level, content) for a, _b, level, content in blocks[k + 1:end]]


_ATTEMPT_HEAD = recache.compile(r"^#{2,4} Attempt (\d+)(?:(?::|\s+[—–-])\s?(.*))?$")


def strip_blank(lines: list[str]) -> list[str]:
    """``lines`` without the blank lines at their end: how a section's body is read back (the reader keeps its
    bodies so, docreader/read.py)."""
    end = len(lines)
    while end and not lines[end - 1].strip():
        end -= 1
    return lines[:end]


def parse(text: str, path: str | None = None, misplaced: list | None = None) -> Investigation:
    """Read an investigation back from its canonical markdown. ``misplaced``, when given, collects (line, heading,
    section) of each ``### Attempt N`` heading outside ``## Attempts``: kept as that section's text (appended at the
    end of a file by hand, it lands in the last section, which may be one ``show`` hides), so a caller can say so."""
    if "\r" in text:
        # Windows line endings from an editor: normalise, a lone CR cannot be ours.
        text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    front, body_start, heads, blocks = _structure(text)
    meta = _front_matter(front, path)
    titles = [h for h in heads if h[1] == 1]
    if not titles:
        raise ParseError("no '# Title' heading found", path, body_start + 1)
    title_line = titles[0][0]
    title = meta.get("title") if isinstance(meta.get("title"), str) else lines[title_line][2:]
    if meta.get("id") is not None and not isinstance(meta["id"], str):
        meta["id"] = str(meta["id"])
    if not meta.get("id"):
        raise ParseError("front matter has no 'id:'", path, 1)
    if not SAFE_ID.fullmatch(meta["id"]):
        # the id names the file in logs/ (`export`): '../x', '/etc/x' or a control byte must not reach a path
        raise ParseError(f"front matter id {_shown(meta['id'])} must be letters, digits, '.', '_' or '-' "
                         "(at most 200, it names the file in logs/); put the id back as it was", path, 1)

    front_status = _front_status(meta.get("status"), front, path)
    inv = Investigation(
        id=meta["id"],
        title=title,
        status=front_status or "open",
        created=_ts(meta.get("created")),
        updated=_ts(meta.get("updated")),
        tags=_tags(meta.get("tags"), path),
        source=meta["source"] if isinstance(meta.get("source"), str) else "",
    )
    # Sections: every top-level heading of level <= 2 after the title starts one.
    bounds = [h for h in heads if h[0] > title_line and h[1] <= 2]
    firsts = [b[0] for b in blocks]
    header = lines[title_line + 1 : bounds[0][0] if bounds else len(lines)]
    _parse_header(inv, header, title_line + 1, path, front_status)
    for idx, (start, _level, raw) in enumerate(bounds):
        end = bounds[idx + 1][0] if idx + 1 < len(bounds) else len(lines)
        body = lines[start + 1 : end]
        name = raw.lstrip("#").strip().lower()
        if raw.startswith("## ") and name == "attempts":
            inv.attempts = _parse_attempts(body, start + 1, heads, path)
        elif raw.startswith("## ") and name.startswith("key differences"):
            _parse_diffs(inv, body, start + 1, path)
        elif raw.startswith("## ") and name == "what to try next":
            inv.next_steps = _parse_steps(body, start + 1, path)
        else:
            inv.sections.append(Section(heading=raw, body="\n".join(strip_blank(body))))
            _remember_blocks(inv.sections[-1].body, start, blocks, firsts)
    if misplaced is not None:
        misplaced += _misplaced_attempts(heads, lines)
    return inv


def _misplaced_attempts(heads, lines: list[str]) -> list[tuple[int, str, str]]:
    out, section = [], None
    for line, level, raw in heads:
        if level <= 2:
            section = raw if level == 2 else None
        elif _ATTEMPT_HEAD.match(lines[line]) and section is not None and section[3:].strip().lower() != "attempts":
            out.append((line + 1, raw.strip(), section.strip()))
    return out


def _ts(v) -> str:
    import datetime as dt

    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return v.strftime("%Y-%m-%dT%H:%M:%SZ")
    return "" if v is None else str(v)


def _front_matter(front: str | None, path: str | None) -> dict:
    if front is None:
        raise ParseError("missing front matter ('---' block with id and status)", path, 1)
    import yaml

    try:
        meta = yaml.load(front, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}
    except yaml.YAMLError as e:
        line = getattr(getattr(e, "problem_mark", None), "line", 0) + 2
        raise ParseError(f"front matter is not valid YAML ({getattr(e, 'problem', e)})", path, line) from None
    except (ValueError, TypeError, OverflowError) as e:  # a value YAML parses but cannot build: "updated: 2026-13-01"
        raise ParseError(f"front matter holds a value that cannot be read ({e}); put it back as it was", path,
                         2) from None
    if not isinstance(meta, dict):
        raise ParseError("front matter must be a mapping", path, 2)
    return meta


def _tags(v, path: str | None) -> list[str]:
    """The front matter's tags: a list, or one tag written bare (``tags: gpu``)."""
    if v is None:
        return []
    if isinstance(v, (str, int, float, bool)):
        return [str(v)]
    if not isinstance(v, list) or not all(isinstance(t, (str, int, float, bool)) for t in v):
        raise ParseError("front matter tags must be a list of words ([gpu, nccl]); put them back as they were", path, 2)
    return [str(t) for t in v]


_HEADER_LABELS = {"Status": "status", "Symptom": "symptom", "Environment": "environment",
                  "Related files": "related_files", "Root cause": "root_cause"}


# The attribute a parsed investigation carries when its front matter's status and its **Status:** line disagree
FRONT_STATUS = "_front_status"


def _status_value(raw, where: str, path, line: int) -> str:
    """A hand-written status, as stored: one of STATUSES ('Won't Fix' is wontfix), else refused where it stands."""
    word = re.sub(r"[\s'’_-]", "", str(raw)).lower()
    if word in STATUSES:
        return word
    raise ParseError(f"{where} {_shown(str(raw))} is not a status: use open, resolved or wontfix", path, line)


def _front_status(raw, front: str, path) -> str | None:
    """The front matter's ``status:``, checked; None when it gives none."""
    if raw is None or raw == "":
        return None
    line = next((i for i, text in enumerate(front.split("\n")) if re.match(r"status\s*:", text)), 0)
    return _status_value(raw, "front matter status", path, line + 2)


def _parse_header(inv: Investigation, lines: list[str], offset: int, path, front_status: str | None = None) -> None:
    repeated: list[int] = []
    continued: dict[str, list[int]] = {}
    bufs, stray = scan_field_lines(lines, _HEADER_LABELS, repeated, continued)
    _refuse_stray(lines, stray, offset, path, "above the first section, outside any field",
                  "put it under a field (**Symptom:** ...) or in a section of its own (## Notes)")
    _refuse_stray(lines, repeated, offset, path, "a second time", "join the two into one field")
    _refuse_stray(lines, continued.get("status", []), offset, path, "under **Status:**, which is "
                  "one word", "put it under a field (**Symptom:** ...) or in a section of its own (## Notes)")
    vals = {k: _decode_value(v) for k, v in bufs.items()}
    if vals.get("status"):
        at = offset + next(i for i, line in enumerate(lines) if (lm := _LABEL_LINE.match(line))
                           and lm.group("label").lower() == "status")
        inv.status = _status_value(vals["status"], "**Status:**", path, at + 1)
        if front_status is not None and front_status != inv.status:
            # Two places say it: the **Status:** line is read, and the front matter's other value kept aside for the
            # sync, which knows the stored status and so which of the two a hand edit changed (FRONT_STATUS).
            setattr(inv, FRONT_STATUS, front_status)
    inv.symptom = vals.get("symptom", "")
    inv.environment = vals.get("environment", "")
    inv.root_cause = vals.get("root_cause", "")
    if "related_files" in vals:
        inv.related_files = _decode_files(bufs["related_files"])


def _parse_attempts(body: list[str], offset: int, heads, path) -> list[Attempt]:
    head_lines = {h[0] for h in heads}  # (a set: a log of thousands of attempts is read in linear time)
    starts = [i for i, line in enumerate(body) if _ATTEMPT_HEAD.match(line) and offset + i in head_lines]
    # (a mistyped heading first: before the first attempt it is that, not a stray line)
    started = set(starts)  # (a set: `not in` a list of 16,000 starts took a second)
    _refuse_stray(body, [i for i, line in enumerate(body) if offset + i in head_lines and line.startswith("### ")
                         and i not in started], offset, path, "in ## Attempts but is no attempt heading",
                  "write it '### Attempt N: title', or move it to a section of its own")
    _refuse_stray(body, range(starts[0] if starts else len(body)), offset, path, "in ## Attempts before any attempt",
                  "put it under an attempt's field or in a section of its own (## Notes)")
    attempts: list[Attempt] = []
    labels = {lab: key for key, lab in ATTEMPT_FIELDS}
    labels.update({"Outcome": "outcome", "Runs": "runs", "By": "who", "Source lines": "source_lines"})
    for k, s in enumerate(starts):
        m = _ATTEMPT_HEAD.match(body[s])
        chunk = body[s + 1 : starts[k + 1] if k + 1 < len(starts) else len(body)]
        created = ""
        if chunk and (cm := re.match(r"^<!-- created: (\S+) -->$", chunk[0])):
            created, chunk = cm.group(1), chunk[1:]
        at = offset + s + 2 + (1 if created else 0)  # the chunk's first line, numbered from 1
        repeated: list[int] = []
        continued: dict[str, list[int]] = {}
        bufs, stray = scan_field_lines(chunk, labels, repeated, continued)
        _refuse_stray(chunk, stray, at - 1, path, f"in attempt {m.group(1)} outside any field",
                      "put it under a field (**Result:** ...) or in a section of its own (## Notes)")
        _refuse_stray(chunk, repeated, at - 1, path, f"a second time in attempt {m.group(1)}",
                      "join the two into one field")
        _refuse_stray(chunk, sorted(i for k in ("runs", "who", "source_lines") for i in continued.get(k, [])), at - 1, path,
                      f"under a one-line field of attempt {m.group(1)}", "put it under **Result:** or **Conclusion:**")
        vals = {k: _decode_value(v) for k, v in bufs.items()}
        where = next((at + i for i, line in enumerate(chunk) if (lm := _LABEL_LINE.match(line))
                      and lm.group("label").lower() == "outcome"), at)
        runs = [r.strip() for r in vals.get("runs", "").split(",") if r.strip()]
        if len(m.group(1)) > 9:  # (SQLite holds 64 bits, a loop over numbers even less: 1e9 attempts is a typo)
            raise ParseError(f"attempt number {_long_number(m.group(1))} is too large; "
                             "renumber it", path, offset + s + 1)
        if int(m.group(1)) == 0:  # (no command can address it: edit and delete take 1 and up)
            raise ParseError("attempt number 0: attempts are numbered from 1; renumber it", path, offset + s + 1)
        attempts.append(Attempt(
            number=int(m.group(1)),
            title=vals["title"] if "title" in vals else (m.group(2) or ""),
            hypothesis=vals.get("hypothesis", ""),
            did=vals.get("did", ""),
            result=vals.get("result", ""),
            conclusion=vals.get("conclusion", ""),
            outcome=_outcome_value(vals.get("outcome", ""), m.group(1), path, where),
            created=created,
            runs=runs,
            who=vals.get("who", "").strip(),
            source_lines=_lines_value(vals.get("source_lines", "")),
        ))
    return attempts


def provenance_lines(a: Attempt) -> str:
    """Who did an imported attempt and which source lines it was read from (`import` fills them)."""
    out = f"**By:** {a.who}\n" if a.who and "\n" not in a.who else ""
    if len(a.source_lines) == 2:
        out += f"**Source lines:** {a.source_lines[0]}-{a.source_lines[1]}\n"
    return out


def _lines_value(raw: str) -> list[int]:
    m = re.fullmatch(r"\s*(\d{1,9})\s*[-–]\s*(\d{1,9})\s*", raw or "")
    return [int(m.group(1)), int(m.group(2))] if m else []


def _outcome_value(raw: str, number: str, path, line: int) -> str:
    """An attempt's ``**Outcome:**`` as stored: one of OUTCOMES; a hand edit's plain label for one
    ("Failed", "FIXED", "✅ works") read as the outcome it states. Anything else -- a second line
    under it, a word that names no outcome -- is refused where it stands rather than stored as an
    outcome no command knows (and printed across two lines by `tried`)."""
    v = raw.strip()
    if v.lower() in OUTCOMES or not v:
        return v.lower() or "untested"
    keep = "keep the **Outcome:** line to one word (" + ", ".join(OUTCOMES) + "); notes go under **Result:** or " \
        "**Conclusion:**"
    if "\n" in v:
        first, extra = v.split("\n", 1)
        raise ParseError(f"attempt {number}: the outcome has a line under it ({_shown(extra.strip())}): {keep}",
                         path, line + 1)
    words = re.sub(r"[^a-z]+", " ", v.lower()).split()
    if len(words) == 1 and words[0] in OUTCOMES:  # "FAILED ❌", "**worked**"
        return words[0]
    if len(v) <= 60:
        from dbglog.core import outcome as outcomes

        word = outcomes.verdict_word(v)  # "Fixed", "✅ works", "didn't help"
        if word is not None:
            return word
    raise ParseError(f"attempt {number}: outcome {_shown(v)} is not one of them: {keep}", path, line)


def _parse_diffs(inv: Investigation, body: list[str], offset: int, path) -> None:
    table = [line for line in body if line.strip().startswith("|")]
    _refuse_stray(body, [i for i, line in enumerate(body) if not line.strip().startswith("|")], offset, path,
                  "in the key differences outside the table", "make it a row, or move it to a section of its own")
    comment = next((line for line in body if line.startswith("<!-- dbglog-data ")), None)
    if not table:
        return
    try:
        inv.labels, inv.differences = parse_diff_table(table)
    except ValueError as e:
        first = next(i for i, line in enumerate(body) if line.strip().startswith("|"))
        raise ParseError(str(e), path, offset + first + 1) from None
    # The header and each row left as they were shown keep the data the comment stored for them: an edit of one
    # row must not re-read every other row from its lossy line.
    labels, rows = _stored_table(comment)
    if labels is None:
        return
    shown = _shown_table(labels, rows)
    if table[0].strip() == shown[0]:
        inv.labels = labels
    kept: dict[str, list[Difference]] = {}
    for line, r in zip(shown[2:], rows):
        kept.setdefault(line, []).append(r)
    for n, line in enumerate(table[2:], 1):
        if kept.get(line.strip()):
            inv.differences[n - 1] = kept[line.strip()].pop(0)
            inv.differences[n - 1].position = n


def _stored_table(comment: str | None) -> tuple[tuple[str, str] | None, list[Difference]]:
    """(labels, rows) a data comment keeps, checked; (None, []) when it holds no table of ours in shape."""
    data = _comment_data(comment)
    try:
        labels, rows = tuple(data["labels"]), [Difference(**r) for r in data["rows"]]
    except (KeyError, TypeError, ValueError):
        return None, []
    texts = [*labels, *(v for r in rows for v in (r.factor, r.working, r.broken, r.apply))]
    if len(labels) != 2 or not all(isinstance(t, str) for t in texts) or any(r.status not in DIFF_STATUSES for r in rows):
        return None, []
    return labels, rows


def _parse_steps(body: list[str], offset: int, path) -> list[NextStep]:
    items = [(i, line) for i, line in enumerate(body) if re.match(r"^\d+\. ", line)]
    _refuse_stray(body, sorted(set(range(len(body))) - {i for i, _ in items}), offset, path,
                  "in What to Try Next but is no step", "each step is one line, '1. [ ] **text** - detail': join it "
                  "to its step, or move it to a section of its own")
    comment = next((line for line in body if line.startswith("<!-- dbglog-data ")), None)
    # A step kept exactly in the data comment stays as stored while its visible line, past its number and box, is
    # as it was shown: ticking one box must not re-read every other step from its lossy line.
    kept: dict[str, list[NextStep]] = {}
    for s in _stored_steps(comment):
        kept.setdefault(_STEP_HEAD.sub("", _shown_step(s)), []).append(s)
    steps = []
    for n, (i, line) in enumerate(items, 1):
        same = kept.get(_STEP_HEAD.sub("", line)) if _STEP_HEAD.match(line) else None
        if same:
            steps.append(same.pop(0))
            steps[-1].position, steps[-1].status = n, _UNMARK[_STEP_HEAD.match(line).group(1)]
            continue
        try:
            step = parse_step(line, n)
        except ValueError as e:
            raise ParseError(f"{e}; link it to the attempt that did it, '(→ Attempt N)'", path, offset + i + 1) from None
        if step is None:
            m = re.match(r"^\d+\. (?:\[([ xX~-])\] )?(.*)$", line)
            step = NextStep(position=n, text=m.group(2).strip(), status=_UNMARK.get(m.group(1) or " ", "todo"))
        steps.append(step)
    return steps


_STEP_HEAD = recache.compile(r"^\d+\. \[([ xX~-])\] ")


def _stored_steps(comment: str | None) -> list[NextStep]:
    """The steps a data comment keeps, checked: none when it holds no list of steps of ours in shape."""
    data = _comment_data(comment)
    try:
        steps = [NextStep(**d) for d in data] if isinstance(data, list) else []
    except TypeError:
        return []  # not ours in shape: the visible list is read instead
    ok = all(isinstance(s.text, str) and isinstance(s.detail, str) and s.status in _MARK
             and (s.attempt is None or type(s.attempt) is int and 0 < s.attempt < 10**9)
             and isinstance(s.source_lines, list) and all(type(n) is int and 0 < n < 10**9 for n in s.source_lines)
             for s in steps)
    return steps if ok else []
