"""`dbglog import`: turn hand-written debug-log markdown into investigations.

Teams keep debug logs in many shapes: a DEBUG.md with an "Active Debug Logs" section holding
several bugs, a notes file per bug, a template at the end. This module reads them with a
line scanner (fence- and comment-aware, so a ``#`` inside a code block is never a heading) and
a small set of rules:

* an **investigation** is a heading whose own lines carry ``Status:``/``Symptom:`` fields, or
  the nearest ancestor heading of ``Attempt N`` headings; headings that contain "Template", and
  headings whose title or status is placeholder text (``<short description>``,
  ``Open / Resolved / Won't Fix``), are skipped with everything under them;
* an **attempt** is a heading ``Attempt N`` at any level (``: title``, `` — title``, or none);
  its fields are ``**Label:**``, ``**Label**:`` or ``Label:`` lines, or sub-headings named like
  a field; a value runs to the next field and may hold paragraphs, lists and code fences;
* the **outcome** comes from an ``Outcome:``/``Verdict:`` field or is inferred from the result
  (``model.infer_outcome``);
* a **key-differences** table is a GFM pipe table or a fixed-width table in a code fence under
  a "differences"/"vs" heading; the column labels come from its header;
* a **what to try next** list is any numbered/bulleted list (checkboxes, bold lead-ins, nested
  explanation lines) under a "next"/"to try"/"ideas" heading;
* other headings inside an investigation are kept verbatim as extra sections, other prose in
  the header as a "Notes" section: nothing the author wrote is dropped silently.

A canonical file (dbglog's own format, front matter with ``id:``) is read with the canonical
parser instead, so importing what dbglog rendered gives back exactly the same content.

Errors are ``ParseError`` with ``path:line``: the whole command stops before anything is written.
"""

from __future__ import annotations

import copy
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from dbglog import model
from dbglog.errors import DbglogError
from dbglog.mirror import ParseError, split_row
from dbglog.model import Attempt, Difference, Investigation, NextStep, Section

MAX_BYTES = 8 * 1024 * 1024  # a debug doc is kilobytes; anything this big is a mistake (a log dump)


# --- reading ------------------------------------------------------------------------


def read_source(path: Path, shown: str) -> str:
    """The text of a document to import, or a one-line error saying why it cannot be read."""
    try:
        st = path.stat()
    except FileNotFoundError:
        raise DbglogError(f"{shown}: no such file") from None
    except OSError as e:
        raise DbglogError(f"{shown}: cannot read ({e.strerror})") from None
    if path.is_dir():
        raise DbglogError(f"{shown} is a directory; pass the markdown files in it")
    if st.st_size > MAX_BYTES:
        raise DbglogError(
            f"{shown}: {st.st_size / 1e6:.1f} MB is too large for a debug doc (limit {MAX_BYTES // 2**20} MB); "
            "split it, or move logs and traces out of it")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise DbglogError(f"{shown}: cannot read ({e.strerror})") from None
    return decode(data, shown)


def decode(data: bytes, shown: str) -> str:
    if b"\x00" in data[:65536]:
        raise DbglogError(f"{shown} is a binary file, not markdown; nothing imported")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise ParseError(f"invalid UTF-8 (byte {e.start}); re-save the file as UTF-8", shown, line) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


# --- line scanning ------------------------------------------------------------------

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_MARKERS = re.compile(r"^(<{7}|>{7})( |$)")


@dataclass
class Heading:
    idx: int  # 0-based line index
    level: int
    text: str
    role: str = "other"  # attempt | container | other


def scan(lines: list[str], path: str) -> tuple[list[bool], list[Heading]]:
    """Which lines are code (fences, HTML comments), and the real headings."""
    code = [False] * len(lines)
    heads: list[Heading] = []
    fence: tuple[str, int, int] | None = None
    comment = False
    for i, line in enumerate(lines):
        if fence is not None:
            code[i] = True
            fm = _FENCE.match(line)
            if fm and fm.group(2)[0] == fence[0] and len(fm.group(2)) >= fence[1] and not fm.group(3).strip():
                fence = None
            continue
        if comment:
            code[i] = True
            if "-->" in line:
                comment = False
            continue
        if _MARKERS.match(line):
            raise ParseError("git conflict markers; resolve the merge in this file, then retry", path, i + 1)
        fm = _FENCE.match(line)
        if fm and not (fm.group(2)[0] == "`" and "`" in fm.group(3)):
            fence = (fm.group(2)[0], len(fm.group(2)), i)
            code[i] = True
            continue
        if line.lstrip().startswith("<!--"):
            code[i] = True
            comment = "-->" not in line.split("<!--", 1)[1]
            continue
        hm = _HEADING.match(line)
        if hm:
            heads.append(Heading(i, len(hm.group(1)), clean_inline(hm.group(2) or "")))
    if fence is not None:
        raise ParseError(f"code fence {lines[fence[2]].strip()!r} opened here is never closed", path, fence[2] + 1)
    return code, heads


def clean_inline(s: str) -> str:
    """Heading text without surrounding emphasis."""
    s = s.strip()
    for mark in ("**", "__", "*", "_"):
        if len(s) > 2 * len(mark) and s.startswith(mark) and s.endswith(mark):
            s = s[len(mark):-len(mark)].strip()
    return s


# --- labels -------------------------------------------------------------------------

_LABEL = re.compile(
    r"^ {0,3}(?:[-*+] +)?(?:"
    r"(?P<b>\*\*|__)(?P<l1>[^*_:\n]{1,40}?) *(?::(?P=b)|(?P=b) *:)"
    r"|(?P<l2>[A-Za-z][A-Za-z '’/()-]{0,40}?):"
    r")(?:[ \t]+(?P<rest>.*))?$"
)

INV_LABELS = {
    "status": "status", "state": "status",
    "symptom": "symptom", "symptoms": "symptom", "problem": "symptom", "issue": "symptom",
    "environment": "environment", "env": "environment", "setup": "environment",
    "related files": "related_files", "files": "related_files", "relevant files": "related_files",
    "related code": "related_files", "key files": "related_files",
    "root cause": "root_cause", "root-cause": "root_cause", "cause": "root_cause",
    "resolution": "root_cause",
    "tags": "tags", "labels": "tags",
}
ATTEMPT_LABELS = {
    "title": "title",
    "hypothesis": "hypothesis", "hypotheses": "hypothesis", "theory": "hypothesis", "idea": "hypothesis",
    "assumption": "hypothesis", "why": "hypothesis",
    "what you did": "did", "what we did": "did", "what i did": "did", "what was done": "did",
    "what we tried": "did", "what i tried": "did", "what you tried": "did", "action": "did",
    "actions": "did", "change": "did", "changes": "did", "did": "did", "tried": "did", "steps": "did",
    "command": "did", "commands": "did", "approach": "did", "method": "did", "experiment": "did",
    "result": "result", "results": "result", "what happened": "result", "observed": "result",
    "observation": "result", "observations": "result", "output": "result", "effect": "result",
    "conclusion": "conclusion", "conclusions": "conclusion", "takeaway": "conclusion",
    "takeaways": "conclusion", "learned": "conclusion", "lesson": "conclusion", "analysis": "conclusion",
    "interpretation": "conclusion", "what it means": "conclusion", "what this tells us": "conclusion",
    "outcome": "outcome", "verdict": "outcome", "status": "outcome",
}


def label_of(line: str, labels: dict[str, str]) -> tuple[str, str] | None:
    m = _LABEL.match(line)
    if not m:
        return None
    name = (m.group("l1") or m.group("l2") or "").strip().lower().replace("’", "'")
    key = labels.get(name)
    if key is None:
        return None
    return key, (m.group("rest") or "").strip()


def scan_labels(lines: list[str], code: list[bool], start: int, end: int,
                labels: dict[str, str]) -> tuple[dict[str, tuple[int, list[str]]], list[int]]:
    """Fields in lines[start:end]: key -> (line index, value lines); plus the indices of stray lines."""
    out: dict[str, tuple[int, list[str]]] = {}
    stray: list[int] = []
    key = None
    for i in range(start, end):
        hit = None if code[i] else label_of(lines[i], labels)
        if hit is not None:
            key = hit[0]
            if key in out:  # a repeated field continues the first one
                out[key][1].extend(["", hit[1]] if hit[1] else [""])
            else:
                out[key] = (i, [hit[1]] if hit[1] else [])
            continue
        if key is None:
            stray.append(i)
        else:
            out[key][1].append(lines[i])
    return out, stray


def value(buf: list[str]) -> str:
    """Field text: the lines joined, common indentation removed, outer blank lines dropped."""
    lines = list(buf)
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    if len(lines) > 1:
        body = [ln for ln in lines[1:] if ln.strip()]
        indent = min((len(ln) - len(ln.lstrip(" ")) for ln in body), default=0)
        if indent:
            lines = [lines[0]] + [ln[indent:] if ln[:indent].strip() == "" else ln.lstrip(" ") for ln in lines[1:]]
    return "\n".join(ln.rstrip() for ln in lines).strip()


# --- classification -----------------------------------------------------------------

_ATTEMPT = re.compile(r"^(?:attempt|try|experiment)\s*#?\s*(\d{1,6})\b\s*(?:[:.)—–-]+\s*)?(.*)$", re.I)
_CONTAINER = re.compile(
    r"^(?:attempts?(?: log| so far| made)?|what (?:we|i|you)(?:'ve)? tried|things tried|tried so far|"
    r"investigation log|debug log|log|history|experiments)\s*:?$", re.I)
_DIFFS = re.compile(r"(?:differences|diff table|\bvs\.?\b|versus|comparison|works? vs)", re.I)
_NEXT = re.compile(r"(?:(?:try|do|test) next|next steps?|to try|to do next|ideas|todo|open questions|follow[- ]ups?)",
                   re.I)
_TEMPLATE = re.compile(r"\btemplates?\b", re.I)
_PLACEHOLDER = re.compile(r"<[A-Za-z][^<>]{0,60}>|\{\{[^}]*\}\}|\bYYYY-MM-DD\b|\bX+\.X+\b")
_FIELD_HEADINGS = {"symptom": "symptom", "symptoms": "symptom", "environment": "environment",
                   "env": "environment", "setup": "environment", "related files": "related_files",
                   "files": "related_files", "root cause": "root_cause", "resolution": "root_cause",
                   "status": "status"}
_NOTES = "## Notes"


def is_placeholder(text: str) -> bool:
    t = text.strip()
    if not t:
        return False
    if _PLACEHOLDER.search(t) and not t.startswith("`"):
        return True
    low = t.lower()
    return low.count("/") >= 1 and sum(w in low for w in ("open", "resolved", "won't fix", "wontfix")) >= 2


def heading_key(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s'/.-]", "", text).split()).rstrip(":").strip().lower()


# --- the parsed result --------------------------------------------------------------


@dataclass
class Parsed:
    inv: Investigation
    line: int  # 1-based line of the investigation heading
    key: str  # idempotence key within its source file
    items: list[tuple[str, str, int]] = field(default_factory=list)  # (kind, ref, line)
    canonical: bool = False


@dataclass
class Skipped:
    line: int
    title: str
    reason: str


def parse_document(text: str, path: str = "<text>") -> tuple[list[Parsed], list[Skipped]]:
    """All investigations in one document (and what was skipped, with why)."""
    if not text.strip():
        raise ParseError("empty file: nothing to import", path, 1)
    if text.startswith("---\n") and re.search(r"^id:", text[:2000], re.M):
        canon = _try_canonical(text, path)
        if canon is not None:
            return [canon], []
    return _Doc(text, path).parse()


def _try_canonical(text: str, path: str) -> Parsed | None:
    from dbglog import mirror, sync

    try:
        sync.check_markers(text, path)
        inv = mirror.parse(text, path)
    except ParseError:
        return None
    if not model.ID_RE.match(inv.id):
        return None
    items = [("investigation", "", 1)] + [("attempt", str(a.number), 1) for a in inv.attempts]
    return Parsed(inv=inv, line=1, key=f"id:{inv.id}", items=items, canonical=True)


class _Doc:
    def __init__(self, text: str, path: str):
        self.path = path
        self.lines = text.split("\n")
        self.code, self.heads = scan(self.lines, path)
        self.body_start = 0
        if self.lines[0].strip() == "---":  # YAML front matter of a non-canonical doc: not content
            for j in range(1, min(len(self.lines), 200)):
                if self.lines[j].strip() in ("---", "..."):
                    self.body_start = j + 1
                    for h in list(self.heads):
                        if h.idx <= j:
                            self.heads.remove(h)
                    for k in range(j + 1):
                        self.code[k] = True
                    break
        for h in self.heads:
            if _ATTEMPT.match(h.text):
                h.role = "attempt"
            elif _CONTAINER.match(h.text):
                h.role = "container"

    def err(self, msg: str, idx: int):
        return ParseError(msg, self.path, idx + 1)

    def end_of(self, k: int) -> int:
        """Line index where heading k's subtree ends."""
        h = self.heads[k]
        for h2 in self.heads[k + 1:]:
            if h2.level <= h.level:
                return h2.idx
        return len(self.lines)

    def own_end(self, k: int) -> int:
        return self.heads[k + 1].idx if k + 1 < len(self.heads) else len(self.lines)

    def parse(self) -> tuple[list[Parsed], list[Skipped]]:
        heads = self.heads
        skipped: list[Skipped] = []
        excluded = [False] * len(heads)
        for k, h in enumerate(heads):
            if excluded[k]:
                continue
            if _TEMPLATE.search(h.text) or (h.role == "other" and is_placeholder(h.text)):
                end = self.end_of(k)
                for j in range(k, len(heads)):
                    if heads[j].idx < end:
                        excluded[j] = True
                skipped.append(Skipped(h.idx + 1, h.text, "template" if _TEMPLATE.search(h.text) else "placeholder"))
        # Candidates: headings with investigation fields of their own ...
        cand: set[int] = set()
        for k, h in enumerate(heads):
            if excluded[k] or h.role != "other":
                continue
            fields, _ = scan_labels(self.lines, self.code, h.idx + 1, self.own_end(k), INV_LABELS)
            if "status" in fields or "symptom" in fields:
                cand.add(k)
        # ... and the nearest plain ancestor of every attempt heading.
        orphan_attempts = []
        for k, h in enumerate(heads):
            if excluded[k] or h.role != "attempt":
                continue
            lvl, anc = h.level, None
            for j in range(k - 1, -1, -1):
                hj = heads[j]
                if hj.level >= lvl:
                    continue
                if excluded[j]:
                    break
                if hj.role == "other":
                    anc = j
                    break
                lvl = hj.level  # an "Attempts" container: keep climbing
            if anc is None:
                orphan_attempts.append(k)
            elif not self._is_subsection(anc, cand):
                cand.add(anc)
        # A candidate nested in a candidate wins its lines; a field-section heading is never one.
        cand = {k for k in cand if not self._is_subsection(k, cand)}
        out: list[Parsed] = []
        order = sorted(cand)
        if orphan_attempts and (not order or heads[orphan_attempts[0]].idx < heads[order[0]].idx):
            out.append(self._investigation(None, order, excluded))
        for k in order:
            p = self._investigation(k, order, excluded)
            if p is not None:
                out.append(p)
        out = [p for p in out if p is not None]
        if not out:
            if skipped:
                raise self.err("only template sections found: nothing to import", skipped[0].line - 1)
            raise self.err(
                "no debug investigation found: expected a heading followed by '**Status:**' or "
                "'**Symptom:**' fields, or '### Attempt N' headings", self.body_start)
        seen: dict[str, int] = {}
        for p in out:
            n = seen.get(p.key, 0) + 1
            seen[p.key] = n
            if n > 1:
                p.key = f"{p.key}#{n}"
        return out, skipped

    def _is_subsection(self, k: int, cand: set[int]) -> bool:
        """A "Key differences"/"Environment"/... heading that belongs to an enclosing candidate."""
        h = self.heads[k]
        name = heading_key(h.text)
        if not (_DIFFS.search(h.text) or _NEXT.search(h.text) or name in _FIELD_HEADINGS):
            return False
        for j in range(k - 1, -1, -1):
            if self.heads[j].level < h.level and j in cand and j != k:
                return True
        return False

    # --- one investigation ------------------------------------------------------------

    def _investigation(self, k: int | None, order: list[int], excluded: list[bool]) -> Parsed | None:
        lines, heads = self.lines, self.heads
        if k is None:
            start_idx, title = self.body_start, Path(self.path).stem.replace("_", " ").replace("-", " ")
            end = heads[order[0]].idx if order else len(lines)
            first_sub = next((j for j, h in enumerate(heads) if h.idx >= start_idx), len(heads))
            header_end = heads[first_sub].idx if first_sub < len(heads) else end
            header_start = start_idx
        else:
            h = heads[k]
            start_idx, title = h.idx, h.text
            end = self.end_of(k)
            for j in order:
                if j > k and heads[j].idx < end:
                    end = heads[j].idx
                    break
            first_sub = k + 1
            header_start, header_end = h.idx + 1, self.own_end(k)
        status = None
        title, status = _status_from_title(title)
        if not title.strip():
            raise self.err("investigation heading has no title", start_idx)
        inv = Investigation(id="", title=title)
        items: list[tuple[str, str, int]] = [("investigation", "", start_idx + 1)]
        header_end = min(header_end, end)
        fields, stray = scan_labels(lines, self.code, header_start, header_end, INV_LABELS)
        sections: list[Section] = []
        self._header_fields(inv, fields)
        if status and "status" not in fields:
            inv.status = status
        if "status" in fields and is_placeholder(value(fields["status"][1])):
            return None
        notes = [i for i in stray if lines[i].strip() and lines[i].strip() not in ("---", "***", "___")]
        if notes:
            sections.append(Section(_NOTES, _demote(value(lines[notes[0]:notes[-1] + 1]))))
        # Sub-headings.
        j = first_sub
        attempts: dict[int, Attempt] = {}
        while j < len(heads) and heads[j].idx < end:
            sh = heads[j]
            if excluded[j]:
                j += 1
                continue
            sub_end = min(self.end_of(j), end)
            name = heading_key(sh.text)
            if sh.role == "attempt":
                stop = min(self.end_of(j), end)
                a = self._attempt(j, stop)
                if a.number in attempts:
                    raise self.err(f"a second 'Attempt {a.number}' in {inv.title!r}; renumber one of them", sh.idx)
                attempts[a.number] = a
                items.append(("attempt", str(a.number), sh.idx + 1))
                j = self._skip_to(stop, j)
                continue
            if sh.role == "container":
                j += 1  # its children are attempts (or notes, handled as they come)
                continue
            if _DIFFS.search(sh.text) and self._diffs(inv, sh, sub_end, items):
                j = self._skip_to(sub_end, j)
                continue
            if _NEXT.search(sh.text):
                inv.next_steps = self._steps(sh.idx + 1, sub_end, items)
                j = self._skip_to(sub_end, j)
                continue
            if name in _FIELD_HEADINGS:
                own = self.own_end(j)
                text = value(lines[sh.idx + 1:own])
                key = _FIELD_HEADINGS[name]
                if key == "status":
                    inv.status = _status(text) or inv.status
                elif key == "related_files":
                    inv.related_files = _files(lines[sh.idx + 1:own])
                else:
                    setattr(inv, key, text)
                j += 1
                continue
            # Anything else: kept verbatim (with its plain sub-headings) as an extra section.
            own = self.own_end(j)
            body = lines[sh.idx + 1:own]
            j += 1
            while j < len(heads) and heads[j].idx < sub_end and heads[j].role == "other" \
                    and not _DIFFS.search(heads[j].text) and not _NEXT.search(heads[j].text) \
                    and heads[j].level > 2:
                body += lines[heads[j].idx:self.own_end(j)]
                j += 1
            body_text = value(body)
            sections.append(Section(_section_heading(sh.text), _demote(body_text)))
        inv.attempts = [attempts[n] for n in sorted(attempts)]
        inv.sections = [s for s in sections if s.body or s.heading != _NOTES]
        try:
            model.check_title(inv.title)
        except DbglogError as e:
            raise self.err(str(e), start_idx) from None
        return Parsed(inv=inv, line=start_idx + 1, key=heading_key(inv.title) or f"line:{start_idx + 1}",
                      items=items)

    def _skip_to(self, stop: int, j: int) -> int:
        j += 1
        while j < len(self.heads) and self.heads[j].idx < stop:
            j += 1
        return j

    def _header_fields(self, inv: Investigation, fields) -> None:
        for key, (_i, buf) in fields.items():
            if key == "related_files":
                inv.related_files = _files(buf)
            elif key == "status":
                inv.status = _status(value(buf)) or "open"
            elif key == "tags":
                inv.tags = [t.strip().lstrip("#").strip("`") for t in re.split(r"[,\s]+", value(buf))
                            if t.strip().lstrip("#").strip("`")]
            else:
                setattr(inv, key, value(buf))

    def _attempt(self, j: int, stop: int) -> Attempt:
        lines, h = self.lines, self.heads[j]
        m = _ATTEMPT.match(h.text)
        number, title = int(m.group(1)), m.group(2).strip()
        # Field sub-headings (#### Result) act like labels.
        code = list(self.code)
        patched = list(lines[: stop])
        for h2 in self.heads[j + 1:]:
            if h2.idx >= stop:
                break
            if heading_key(h2.text) in ATTEMPT_LABELS:
                patched[h2.idx] = f"**{heading_key(h2.text)}:**"
        fields, stray = scan_labels(patched, code, h.idx + 1, stop, ATTEMPT_LABELS)
        vals = {k: value(buf) for k, (_i, buf) in fields.items()}
        if "title" in vals and not title:
            title = " ".join(vals["title"].split())
        extra = value([lines[i] for i in stray]) if stray else ""
        did = vals.get("did", "")
        if extra:
            did = f"{extra}\n\n{did}" if did else extra
        explicit = vals.get("outcome", "")
        outcome = model.infer_outcome(vals.get("result", ""), explicit)
        conclusion = vals.get("conclusion", "")
        if explicit and len(explicit.split()) > 3 and explicit.strip().lower() not in model.OUTCOMES:
            conclusion = f"{conclusion}\n\nOutcome: {explicit}" if conclusion else f"Outcome: {explicit}"
        return Attempt(number=number, title=" ".join(title.split()), hypothesis=vals.get("hypothesis", ""),
                       did=did, result=vals.get("result", ""), conclusion=conclusion, outcome=outcome)

    # --- key differences --------------------------------------------------------------

    def _diffs(self, inv: Investigation, sh: Heading, end: int, items) -> bool:
        lines, code = self.lines, self.code
        i = sh.idx + 1
        while i < end:
            if not code[i] and "|" in lines[i] and i + 1 < end and _DELIM.match(lines[i + 1]):
                rows = [i]
                k = i + 2
                while k < end and not code[k] and "|" in lines[k] and lines[k].strip():
                    rows.append(k)
                    k += 1
                self._gfm(inv, rows, items)
                return True
            fm = _FENCE.match(lines[i]) if code[i] else None
            if fm:
                k = i + 1
                while k < end and not (_FENCE.match(lines[k]) and lines[k].strip().startswith(fm.group(2)[:3])
                                       and not _FENCE.match(lines[k]).group(3).strip()):
                    k += 1
                if self._fixed(inv, i + 1, k, items):
                    return True
                i = k + 1
                continue
            i += 1
        return False

    def _gfm(self, inv: Investigation, rows: list[int], items) -> None:
        lines = self.lines
        head = split_row(lines[rows[0]])
        if len(head) < 3:
            raise self.err(f"a differences table needs at least 3 columns (factor, working, broken); "
                           f"this header has {len(head)}", rows[0])
        body = []
        for r in rows[1:]:
            cells = split_row(lines[r])
            if len(cells) != len(head):
                raise self.err(f"table row has {len(cells)} cells but the header has {len(head)}", r)
            body.append((r, cells))
        self._table(inv, head, body, items)

    def _fixed(self, inv: Investigation, start: int, stop: int, items) -> bool:
        lines = self.lines
        content = [i for i in range(start, stop) if lines[i].strip()]
        if len(content) < 2 or not _RULE.match(lines[content[1]]) or "-" not in lines[content[1]] \
                and "=" not in lines[content[1]]:
            return False
        rule = lines[content[1]]
        if "|" in lines[content[0]] and "|" in rule:  # a pipe table pasted into a fence
            self._gfm(inv, [content[0]] + content[2:], items)
            return True
        spans = [(m.start(), m.end()) for m in re.finditer(r"[-=:]+", rule.replace("+", " ").replace("|", " "))]
        if len(spans) < 3:
            raise self.err(f"a differences table needs at least 3 columns; the dashed rule marks {len(spans)}",
                           content[1])
        starts = [s for s, _ in spans]

        def cells(i: int) -> list[str]:
            ln = lines[i].rstrip()
            for s in starts[1:]:
                if 0 < s < len(ln) and ln[s - 1] != " " and ln[s] != " ":
                    raise self.err(f"table row is not aligned with the columns of the dashed rule "
                                   f"(text crosses column {starts.index(s) + 1} at position {s + 1})", i)
            out = [ln[a:b].strip() for a, b in zip(starts, starts[1:] + [max(len(ln), starts[-1])])]
            out[-1] = ln[starts[-1]:].strip()
            return out

        head = cells(content[0])
        body = []
        for i in content[2:]:
            if _RULE.match(lines[i]):
                continue
            c = cells(i)
            if len(lines[i].rstrip()) <= starts[2]:
                raise self.err(f"table row has {sum(bool(x) for x in c)} cells but the header has {len(head)}", i)
            body.append((i, c))
        self._table(inv, head, body, items)
        return True

    def _table(self, inv: Investigation, head: list[str], body, items) -> None:
        status_col = next((c for c in range(3, len(head))
                           if re.search(r"status|verdict|tested|ruled|eliminat|result", head[c], re.I)), None)
        inv.labels = (head[1] or "Working", head[2] or "Broken")
        rows = []
        for n, (i, c) in enumerate(body, 1):
            if not any(c):
                continue
            factor = c[0] or f"(row {n})"
            status = _diff_status(c[status_col]) if status_col is not None else "untested"
            rows.append(Difference(position=len(rows) + 1, factor=factor, working=c[1], broken=c[2], status=status))
            items.append(("difference", factor.casefold(), i + 1))
        inv.differences = rows

    # --- what to try next -------------------------------------------------------------

    def _steps(self, start: int, end: int, items) -> list[NextStep]:
        lines, code = self.lines, self.code
        groups: list[tuple[int, str, list[str]]] = []
        base = None
        for i in range(start, end):
            ln = lines[i]
            if code[i]:
                if groups:
                    groups[-1][2].append(ln.strip())
                continue
            m = _ITEM.match(ln)
            indent = len(ln) - len(ln.lstrip())
            if m and (base is None or indent <= base):
                base = indent if base is None else base
                groups.append((i, m.group(2), []))
            elif groups and ln.strip() and not set(ln.strip()) <= set("-*_= "):
                if base is not None and indent <= base and not m and not lines[i - 1].strip():
                    groups[-1][2].append(ln.strip())  # a paragraph after the list: still its detail
                else:
                    groups[-1][2].append(_ITEM.sub(r"\2", ln).strip() if m else ln.strip())
        steps = []
        for i, text, extra in groups:
            s = _step(text, extra, len(steps) + 1)
            if s is not None:
                steps.append(s)
                items.append(("step", str(s.position), i + 1))
        return steps


_DELIM = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)+\|?\s*$")
_RULE = re.compile(r"^[\s\-=+|:]+$")
_ITEM = re.compile(r"^(\s*)(?:\d{1,4}[.)]|[-*+])\s+(.*)$")
_CHECK = re.compile(r"^\[([ xX~-])\]\s*")
_ATT_REF = re.compile(r"\s*\(?(?:[—–-]+\s*)?(?:done|tried|see|covered)?\s*(?:in|by)?\s*(?:→|->)?\s*"
                      r"attempt\s*#?(\d+)\)?\.?\s*$", re.I)


def _step(text: str, extra: list[str], position: int) -> NextStep | None:
    status = "todo"
    cm = _CHECK.match(text)
    if cm:
        status = {" ": "todo", "x": "done", "X": "done", "~": "dropped", "-": "dropped"}[cm.group(1)]
        text = text[cm.end():]
    text = text.strip()
    if text.startswith("~~") and "~~" in text[2:]:
        end = text.index("~~", 2)
        status = "dropped"
        text = (text[2:end] + text[end + 2:]).strip()
    attempt = None
    am = _ATT_REF.search(text)
    if am:
        attempt = int(am.group(1))
        text = text[:am.start()].rstrip(" .,;—–-")
        if status == "todo" and re.search(r"done|tried|covered", am.group(0), re.I):
            status = "done"
    detail = ""
    bm = re.match(r"^\*\*(.+?)\*\*\s*(?:[—–:-]+\s*|\.\s+)?(.*)$", text)
    if bm:
        text, detail = bm.group(1).strip().rstrip(":"), bm.group(2).strip()
    else:
        sm = re.match(r"^(.{1,120}?)\s+[—–]\s+(.*)$", text)
        if sm:
            text, detail = sm.group(1), sm.group(2)
    detail = " ".join([detail] + extra).strip()
    text = " ".join(text.split())
    detail = " ".join(detail.split())
    if not text:
        if not detail:
            return None
        text, detail = detail, ""
    return NextStep(position=position, text=text, detail=detail, status=status, attempt=attempt)


def _diff_status(cell: str) -> str:
    c = cell.strip().lower()
    if not c or c in ("?", "-", "—", "todo", "pending", "untested", "not tested", "n/a"):
        return "untested"
    if re.search(r"culprit|root cause|🎯|\bthe cause\b|\bcause\b|confirmed|✔️? culprit|this is it", c):
        return "culprit"
    if re.search(r"ruled[ -]?out|eliminated|excluded|not it|not the cause|no effect|no change|same|✅|"
                 r"irrelevant|tested", c):
        return "ruled-out"
    return "untested"


def _status(text: str) -> str | None:
    t = re.sub(r"[^a-z' ]", " ", text.lower().replace("’", "'")).split()
    s = " ".join(t)
    for prefix, st in (("won't fix", "wontfix"), ("wont fix", "wontfix"), ("wontfix", "wontfix"),
                       ("not a bug", "wontfix"), ("abandoned", "wontfix"), ("by design", "wontfix"),
                       ("resolved", "resolved"), ("fixed", "resolved"), ("closed", "resolved"),
                       ("solved", "resolved"), ("done", "resolved"), ("open", "open"), ("active", "open"),
                       ("in progress", "open"), ("investigating", "open"), ("ongoing", "open"),
                       ("blocked", "open"), ("wip", "open"), ("reopened", "open")):
        if s.startswith(prefix):
            return st
    return None


def _status_from_title(title: str) -> tuple[str, str | None]:
    m = re.match(r"^[\[(]([A-Za-z' ]{2,20})[\])]\s*[:—–-]?\s*(.+)$", title)
    if m and _status(m.group(1)):
        return m.group(2).strip(), _status(m.group(1))
    m = re.match(r"^(?:✅|✔️?)\s*(.+)$", title)
    if m:
        return m.group(1).strip(), "resolved"
    return title, None


def _files(buf: list[str]) -> list[str]:
    out = []
    for line in buf:
        s = line.strip()
        if not s:
            continue
        if s[:2] in ("- ", "* ", "+ "):
            s = s[2:].strip()
        parts = [p.strip() for p in s.split(",")] if not s.startswith("`") or s.count("`") > 2 else [s]
        for p in parts:
            note = ""
            if p.startswith("`") and "`" in p[1:]:
                end = p.index("`", 1)
                p, note = p[1:end], p[end + 1:].strip()
            p = " ".join(p.split())
            if note:
                p = f"{p} {note}"
            if p:
                out.append(p)
    return out


def _section_heading(text: str) -> str:
    """A kept section's heading, never one the canonical parser would read as its own section."""
    text = " ".join(text.split()) or "Notes"
    low = text.lower()
    if low == "attempts" or low.startswith("key differences") or low == "what to try next":
        text = f"Notes: {text}"
    return "## " + text


def _demote(body: str) -> str:
    """Lines of a kept section that would read as a level-1/2 heading are demoted to level 3."""
    out, fence = [], None
    for ln in body.split("\n"):
        fm = _FENCE.match(ln)
        if fence is None and fm:
            fence = fm.group(2)
        elif fence is not None and fm and fm.group(2)[0] == fence[0] and len(fm.group(2)) >= len(fence) \
                and not fm.group(3).strip():
            fence = None
        elif fence is None and re.match(r"^ {0,3}#{1,2}(\s|$)", ln):
            ln = "###" + ln.lstrip().lstrip("#")
        elif fence is None and re.match(r"^ {0,3}(=+|-+)[ \t]*$", ln) and out and out[-1].strip() \
                and not re.match(r"^ {0,3}([-*+]\s|\d+[.)]\s|>|#)", out[-1]):
            # A setext underline makes the line above a level-1/2 heading: write it as level 3.
            out[-1] = "### " + out[-1].strip()
            continue
        out.append(ln)
    return "\n".join(out)


# --- importing into a workspace -----------------------------------------------------


def content_sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def source_name(path: Path, root: Path) -> str:
    p = path.resolve()
    try:
        return p.relative_to(root.resolve()).as_posix()
    except ValueError:
        return p.as_posix()


def check_roundtrip(p: Parsed, source: str) -> None:
    """What we store must render to markdown that parses back to the same thing."""
    from dbglog import mirror

    inv = copy.deepcopy(p.inv)
    inv.id = inv.id or "20000101-import-check-0000"
    inv.created = inv.created or "2000-01-01T00:00:00Z"
    inv.updated = inv.updated or inv.created
    back = mirror.parse(mirror.render(inv), source)
    if back != inv:
        raise ParseError("this investigation cannot be stored faithfully (please report this as a dbglog bug)",
                         source, p.line)


def merge(old: Investigation, new: Investigation) -> Investigation:
    """Re-import: the document's values update the stored investigation; nothing stored is dropped."""
    out = copy.deepcopy(old)
    for name in ("title", "status", "symptom", "environment", "root_cause"):
        v = getattr(new, name)
        if v:
            setattr(out, name, v)
    if new.related_files:
        out.related_files = list(new.related_files)
    out.tags = out.tags + [t for t in new.tags if t not in out.tags]
    by_num = {a.number: a for a in out.attempts}
    for a in new.attempts:
        if a.number in by_num:
            cur = by_num[a.number]
            for name in ("title", "hypothesis", "did", "result", "conclusion", "outcome"):
                setattr(cur, name, getattr(a, name))
        else:
            out.attempts.append(copy.deepcopy(a))
    out.attempts.sort(key=lambda a: a.number)
    if new.differences:
        out.labels = new.labels
        by_factor = {d.factor.casefold(): d for d in out.differences}
        for d in new.differences:
            cur = by_factor.get(d.factor.casefold())
            if cur:
                cur.working, cur.broken, cur.status = d.working, d.broken, d.status
            else:
                out.differences.append(Difference(len(out.differences) + 1, d.factor, d.working, d.broken,
                                                  d.status, d.apply))
    by_text = {s.text.casefold(): s for s in out.next_steps}
    for s in new.next_steps:
        cur = by_text.get(s.text.casefold())
        if cur:
            cur.detail, cur.status, cur.attempt = s.detail or cur.detail, s.status, s.attempt or cur.attempt
        else:
            out.next_steps.append(NextStep(len(out.next_steps) + 1, s.text, s.detail, s.status, s.attempt))
    by_head = {s.heading: s for s in out.sections}
    for s in new.sections:
        if s.heading in by_head:
            by_head[s.heading].body = s.body
        else:
            out.sections.append(copy.deepcopy(s))
    return out


@dataclass
class Plan:
    source: str
    parsed: Parsed
    sha: str
    action: str = "create"  # create | update | unchanged
    investigation_id: str = ""


def plan_files(recs, paths: list[str]) -> tuple[list[Plan], list[dict]]:
    """Read and parse every file first: one bad file stops the command before anything is written."""
    plans: list[Plan] = []
    skipped: list[dict] = []
    logs = recs.ws.logs_dir.resolve()
    for raw in paths:
        path = Path(raw)
        shown = raw
        if path.resolve().parent == logs and path.suffix == ".md":
            raise DbglogError(f"{shown} is already in the mirror (logs/); `dbglog sync` reads edits to it")
        text = read_source(path, shown)
        parsed, skips = parse_document(text, shown)
        source = source_name(path, recs.ws.root)
        sha = content_sha(text)
        for p in parsed:
            check_roundtrip(p, shown)
            plans.append(Plan(source=source, parsed=p, sha=sha))
        skipped += [{"source": source, "line": s.line, "title": s.title, "reason": s.reason} for s in skips]
    return plans, skipped


def _decide(recs, plan: Plan) -> Investigation:
    """Set plan.action/investigation_id; return the investigation to store."""
    store = recs.store
    row = store.q("SELECT investigation_id FROM imports WHERE source = ? AND key = ?",
                  plan.source, plan.parsed.key).fetchone()
    inv = plan.parsed.inv
    key = f"{plan.source}#{plan.parsed.key}"
    existing = None
    if row and store.exists(row[0]):
        existing = row[0]
    elif plan.parsed.canonical and store.exists(inv.id):
        existing = inv.id
    elif not plan.parsed.canonical:
        # Imported before in another clone: its file (pulled through git) carries the key.
        hit = store.q("SELECT id FROM investigations WHERE source = ?", key).fetchone()
        existing = hit[0] if hit else None
    if existing is None:
        plan.action = "create"
        new = copy.deepcopy(inv)
        if not plan.parsed.canonical:
            new.source = key
            new.id = model.new_id(new.title)
            while store.exists(new.id):
                new.id = model.new_id(new.title)
            new.created = new.updated = model.now_iso()
        plan.investigation_id = new.id
        return new
    old = store.load(existing)
    merged = merge(old, inv) if not plan.parsed.canonical else _canonical_update(old, inv)
    plan.investigation_id = existing
    plan.action = "unchanged" if merged == old else "update"
    if plan.action == "update":
        merged.updated = model.now_iso()
    return merged


def _canonical_update(old: Investigation, new: Investigation) -> Investigation:
    out = copy.deepcopy(new)
    out.id = old.id
    return out


def import_files(recs, paths: list[str], dry_run: bool = False) -> dict:
    from dbglog import sync

    plans, skipped = plan_files(recs, paths)
    written: list[Path] = []
    results = []
    store = recs.store
    try:
        with store.write():
            sync.sync(store, recs.ws)
            for plan in plans:
                inv = _decide(recs, plan)
                if not dry_run and plan.action != "unchanged":
                    if plan.action == "create":
                        store.insert_investigation(inv)
                        target = recs.ws.root / recs.path_for(inv.id)
                        if not target.exists():
                            written.append(target)
                    else:
                        store.replace_investigation(inv)
                    recs.publish(inv.id)
                if not dry_run:
                    _remember(store, plan)
                p = plan.parsed
                results.append({
                    "action": plan.action, "id": plan.investigation_id, "title": inv.title,
                    "status": inv.status, "source": f"{plan.source}:{p.line}",
                    "attempts": len(p.inv.attempts), "differences": len(p.inv.differences),
                    "next_steps": len(p.inv.next_steps), "sections": len(p.inv.sections),
                    "path": recs.path_for(inv.id) if plan.action != "unchanged" or not dry_run else "",
                    "items": [{"kind": k, "ref": r, "line": ln} for k, r, ln in p.items],
                })
            if dry_run:
                raise _DryRun
    except _DryRun:
        pass
    except BaseException:
        for path in written:  # the transaction rolled back: do not leave files it never recorded
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        raise
    return {"dry_run": dry_run, "investigations": results, "skipped": skipped}


class _DryRun(Exception):
    """Raised inside the transaction to roll a dry run back."""


def _remember(store, plan: Plan) -> None:
    p = plan.parsed
    store.q("""INSERT INTO imports (source, key, investigation_id, line, sha256, imported)
               VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(source, key) DO UPDATE SET
               investigation_id=excluded.investigation_id, line=excluded.line, sha256=excluded.sha256,
               imported=excluded.imported""",
            plan.source, p.key, plan.investigation_id, p.line, plan.sha, model.now_iso())
    for kind, ref, line in p.items:
        store.q("""INSERT INTO import_items (investigation_id, kind, ref, source, line) VALUES (?, ?, ?, ?, ?)
                   ON CONFLICT(investigation_id, kind, ref) DO UPDATE SET source=excluded.source,
                   line=excluded.line""", plan.investigation_id, kind, ref, plan.source, line)


def provenance(store, inv_id: str) -> list[dict]:
    return [dict(r) for r in store.q(
        "SELECT kind, ref, source, line FROM import_items WHERE investigation_id = ? ORDER BY line", inv_id)]
