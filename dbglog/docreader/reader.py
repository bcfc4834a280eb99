"""The reader: a document's outline, section by section, into investigations (see the package docstring)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from dbglog.kb import outcome as outcomes
from dbglog.kb.mirror import ParseError, split_row
from dbglog.kb.model import Attempt, Difference, Investigation, NextStep, Section
from dbglog.docreader.vocab import (
    POST_HEADER,
    ATTEMPT_LABELS, INV_LABELS, NEXT_LABELS, ACTION_LEAD, ATTEMPT_HEAD, BOLD_LEAD, CHECKBOX, COMMENT,
    DATE_HEAD, DIFF_HEAD, DOC_TITLE, FAILED_CONTAINER, INLINE_RESULT, ITEM_START, LABEL, NEXT_HEAD,
    LESSONS_HEAD, LIMITS_HEAD, NUMBERED_HEAD, PLAN_HEAD, PLAN_WORDS, PROSE_CONTAINER, PROSE_LEAD, RAN_WORDS, REFERENCE_HEAD, RESULT_CONTAINER,
    SENTENCES, STRONG_CONTAINER, STRONG_KW, STRONG_RE, TEMPLATE, TEMPLATE_CHECK, TRIED_ITEM, WEAK_CONTAINER,
    WORKED_CONTAINER, bare_words, bold_attempt, has_text, attempt_title, field_of, heading_key,
    heading_outcome, is_placeholder, label_of, status_word,
)
from dbglog.docreader.text import (
    RULE_LINE, close_fences, demote_headings, diff_status, parse_files, item_title, lead_tag, one_line,
    section_heading, span_lines, status_from_title, make_step, unquote, field_value, verbatim_value,
)
from dbglog.docreader import narrative
from dbglog.docreader.outline import Block, Node, outline, plain_text_structure
from dbglog.docreader.yardstick import _probe, counts, kept_text, norm


@dataclass
class Parsed:
    inv: Investigation
    line: int  # 1-based line of the investigation heading
    key: str  # idempotence key within its source file
    items: list[tuple[str, str, int]] = field(default_factory=list)  # (kind, ref, line)
    canonical: bool = False
    recognized: dict = field(default_factory=dict)  # what became structure, what stayed free text
    verified: bool = False  # render -> parse gives back the same (checked by the reader)


@dataclass
class Skipped:
    line: int
    title: str
    reason: str


@dataclass
class _Attempt:
    line: int
    number: int | None
    title: str
    fields: dict[str, list[str]]
    lead: list[str]
    explicit: str = ""
    tag: str | None = None  # outcome from the heading / emoji
    context: str | None = None  # outcome implied by the container
    lines: list[int] = field(default_factory=list)
    unit: str = ""  # heading text of the unit, for an "(as written)" copy
    proposal: bool = False  # "Option B", "Step 3": may be a plan; its prose is not read as a result
    summary: bool = False  # a table row or a sentence: may restate an attempt written out elsewhere
    table: bool = False  # a table row
    recap: bool = False  # "- ~~**Framework structure**~~ - changed": struck through, a recap of one done above
    done: bool = False  # under "Workarounds implemented": done, whatever it says of the result


@dataclass
class _Unit:
    """A piece of source turned into structure: its lines, and a heading to keep it under if needed."""

    heading: str
    lines: list[int]
    role: str


class _Reader:
    def __init__(self, text: str, path: str):
        self.path = path
        self.text = text
        self.lines = text.split("\n")
        self._check_markers()
        # A .txt note is read for its drawn structure (rules, upper-case labels), not as markdown.
        plain = Path(path).suffix.lower() in (".txt", ".text")
        self.front, self.root = outline(plain_text_structure(self.lines) if plain else self.lines)
        for node in self.root.walk():
            node.blocks = [b for blk in node.blocks for b in self._one_try_a_line(blk)]
        self.meta = self._front_matter()
        # An exported issue thread: its attempts are sentences in comments.
        self.thread = bool(COMMENT.search(text))
        # Posts one after another ("bob · comment · 2023-03-20", "### Post by bob on ..."): each post is
        # its author's story, and a reply may judge the suggestion of the post before it.
        self.posts = self.thread or bool(POST_HEADER.search(text))
        # Replies nested in quotes, each opened by a quoted heading ("> ## bob", "> > ## alice"): there the
        # quote marks are the thread's shape, not words quoted from elsewhere.
        self.nested = len(_QUOTED_HEAD.findall(text)) >= 2

    def _one_try_a_line(self, blk: Block) -> list[Block]:
        """A plain-text paragraph whose soft-broken lines are each a try ("Tried X -- no change." /
        "Tried Y -- same." / "Then downgraded Z: works again.") is one paragraph per line: each line
        is its own attempt with its own verdict, as if blank lines stood between them."""
        if blk.kind != "paragraph" or blk.end - blk.start < 2:
            return [blk]
        lines = [self.lines[i].strip() for i in range(blk.start, blk.end)]
        if sum(bool(_TRY_LINE.match(ln)) for ln in lines) < 2:
            return [blk]
        # Every break is a sentence's end before a capital: a wrapped sentence stays one paragraph.
        if not all(re.search(r"[.!?)]$", a) and re.match(r"[A-Z`]", b) for a, b in zip(lines, lines[1:])):
            return [blk]
        return [Block("paragraph", i, i + 1) for i in range(blk.start, blk.end)]

    def _check_markers(self) -> None:
        fence = None
        for i, line in enumerate(self.lines):
            m = re.match(r"^ {0,3}(`{3,}|~{3,})", line)
            if m:
                fence = None if fence and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) else (
                    fence or m.group(1))
                continue
            if fence is None and re.match(r"^(<{7}|>{7})( |$)", line):
                raise ParseError("git conflict markers; resolve the merge in this file, then retry", self.path, i + 1)

    def _front_matter(self) -> dict:
        if not self.front:
            return {}
        import yaml

        a, b = self.front
        try:
            meta = yaml.safe_load("\n".join(self.lines[a + 1:b - 1]))
        except yaml.YAMLError:
            return {}
        return meta if isinstance(meta, dict) else {}

    # --- which sections are bugs ----------------------------------------------------------

    def _template(self, n: Node) -> bool:
        return bool(n.start >= 0 and (TEMPLATE.search(n.text) or is_placeholder(n.text)))

    def _own_fields(self, n: Node) -> set[str]:
        """Which bug-header fields a section states for itself: a ``Status:`` whose value is a bug's
        status (open, resolved, ...), not a verdict ("❌ NOT POSSIBLE"), and a ``Symptom:``."""
        keys = set()
        for b in n.blocks:
            if b.kind not in ("paragraph", "list", "raw", "quote"):
                continue
            for i in range(b.start, b.end):
                hit = label_of(self.lines[i], INV_LABELS)
                if not hit or not hit[1] or is_placeholder(hit[1]):
                    continue
                name = LABEL.match(self.lines[i])
                raw = (name.group("l1") or name.group("l3") or name.group("l2") or "").strip().lower()
                if hit[0] == "status" and status_word(hit[1]):
                    keys.add("status")
                elif hit[0] == "symptom" and raw in ("symptom", "symptoms"):
                    keys.add("symptom")
        if any(bare_words(c.text) in ("symptom", "symptoms") for c in n.children):
            keys.add("symptom")  # "## Crash at startup" with "### Symptoms" under it: a bug's own header
        return keys

    def bugs(self) -> list[Node]:
        skip: set[int] = set()
        cands: list[Node] = []
        for n in self.root.walk():
            if n.start < 0 or id(n) in skip:
                continue
            if self._template(n) or ATTEMPT_HEAD.match(n.text) or STRONG_CONTAINER.search(bare_words(n.text)):
                # An option or attempt with its own "Status: ❌" is a verdict, not a separate bug.
                skip.update(id(x) for x in n.walk())
                continue
            f = self._own_fields(n)
            if "status" in f or "symptom" in f:
                cands.append(n)
                skip.update(id(x) for x in n.walk())  # an inner section with a status is part of this bug
        h1 = [c for c in self.root.children if c.level == 1]

        def one_bug(groups: list[Node]) -> bool:
            # Sections under one H1 that names a bug (not "DEBUG.md", "Notes", "Issues") are parts of it.
            return len(h1) == 1 and not DOC_TITLE.search(h1[0].text) and all(self._inside(c, h1[0]) for c in groups)

        if len(cands) >= 2:
            return [] if one_bug(cands) else cands
        # Sibling sections whose attempt numbering starts over are separate bugs ("## Bug A" with
        # "### Attempt 1..3", "## Bug B" with "### Attempt 1..2").
        for parent in self.root.walk():
            groups = []
            for c in parent.children:
                if self._template(c) or self._is_attempt_heading(c) or STRONG_CONTAINER.search(c.text):
                    continue
                found = [(m.group("kw").lower(), int(m.group("n"))) for d in c.walk() if d is not c
                         and (m := ATTEMPT_HEAD.match(d.text)) and m.group("n").isdigit()]
                if any(n == 1 for _k, n in found):
                    groups.append((c, {k for k, n in found if n == 1}))
            # The same word numbered from 1 again ("Attempt 1..3", then "Attempt 1..2") in each.
            if len(groups) >= 2 and set.intersection(*[k for _c, k in groups]) and not one_bug([c for c, _ in groups]):
                return [c for c, _ in groups]
        return cands

    @staticmethod
    def _inside(n: Node, anc: Node) -> bool:
        while n is not None:
            if n is anc:
                return True
            n = n.parent
        return False

    def _is_attempt_heading(self, n: Node) -> bool:
        m = ATTEMPT_HEAD.match(n.text)
        if not m:
            # "## P-006 — third attempt: exclude SCRIPT from the wrap", "### Second try — pin the driver"
            return bool(_ORDINAL_ATTEMPT.match(n.text)) and not _ABOUT_ATTEMPT.match(n.text)
        if _ABOUT_ATTEMPT.match(n.text):
            return False  # "### Attempt 2 diagnosis — ...": about attempt 2 (the table row), not another one
        lists = [b for b in n.blocks if b.kind == "list"]
        if lists and all(b.kind in ("list", "hr") for b in n.blocks) and not n.children and all(
                CHECKBOX.match(self.lines[a]) for b in lists for a, _e in b.items):
            return False  # "## Phase 1 — 16.3.x on Vercel" holding only "- [x]"/"- [ ]" items: a group of to-dos
        if STRONG_RE.match(m.group("kw")):
            # "Fix" / "Solution" alone as a field heading is handled by field_of; "Try 2" is an attempt.
            return True
        if n.parent is not None:
            # "Test 1", "Test 2", ... / "Config A", "Config B": a numbered series is a series of attempts.
            kw = m.group("kw").lower()
            same = [c for c in n.parent.children if (cm := ATTEMPT_HEAD.match(c.text)) and cm.group("kw").lower() == kw]
            if len(same) >= 2:
                return True
        return self._has_attempt_evidence(n)

    def _has_attempt_evidence(self, n: Node) -> bool:
        if heading_outcome(n.text):
            return True
        for d in n.walk():
            if d is not n and heading_key(d.text) in ATTEMPT_LABELS:
                return True
            for b in d.blocks:
                for i in range(b.start, min(b.end, b.start + 60)):
                    hit = label_of(self.lines[i], ATTEMPT_LABELS)
                    if hit and hit[0] in ("result", "outcome", "conclusion", "hypothesis"):
                        return True
        return False

    # --- documents -> investigations --------------------------------------------------------

    def read(self) -> tuple[list[Parsed], list[Skipped]]:
        if not self.text.strip():
            raise ParseError("empty file: nothing to import", self.path, 1)
        bugs = self.bugs()
        skipped = [Skipped(n.start + 1, n.text, "template: kept as text, not read as an investigation")
                   for n in self.root.walk() if self._template(n)]
        if len(bugs) <= 1:
            scope = bugs[0] if bugs else None
            h1 = [c for c in self.root.children if c.level == 1]
            if scope is not None and scope.level > 1 and len(h1) == 1 and not DOC_TITLE.search(h1[0].text) \
                    and (self._own_fields(scope) != {"status", "symptom"} or self._own_fields(h1[0])):
                scope = None  # "## Problem Summary" with the Symptom: the H1 above it names the bug
            return [self._investigation(self.root, title_node=scope, extra=None)], skipped
        out = []
        inside = {id(x) for b in bugs for x in b.walk()}
        for k, b in enumerate(bugs):
            extra = None
            if k == 0:
                # Everything outside every bug (preamble, protocol, template) goes with the first.
                extra = [n for n in self.root.walk() if id(n) not in inside]
            out.append(self._investigation(b, title_node=b, extra=extra))
        seen: dict[str, int] = {}
        for p in out:
            n = seen.get(p.key, 0) + 1
            seen[p.key] = n
            if n > 1:
                p.key = f"{p.key}#{n}"
        return out, skipped

    def _title(self, scope: Node, title_node: Node | None) -> tuple[str, Node | None]:
        if title_node is not None and title_node.start >= 0 and (title_node is not scope or scope.level > 0):
            return title_node.text, title_node
        meta_title = self.meta.get("title")
        h1 = [c for c in scope.children if c.level == 1]
        if h1:
            first = h1[0]
            return first.text, first
        heads = [n for n in scope.walk() if n.start >= 0]
        if isinstance(meta_title, str) and meta_title.strip():
            return " ".join(meta_title.split()), None
        if heads and len(heads[0].text) <= 160 and not self._template(heads[0]):
            return heads[0].text, heads[0]
        first = self._first_line_title()
        if first:
            return first, None
        stem = Path(self.path).stem.replace("_", " ").replace("-", " ").strip()
        return stem or "Imported notes", None

    def _first_line_title(self) -> str | None:
        """Plain notes with no heading: a short first line standing alone ("NCCL timeout on 8xH100
        node" + a blank line) is the title, not the file's name. A sentence (it ends in a stop or a
        colon) or a list item is not."""
        start = self.front[1] if self.front else 0
        idx = [i for i in range(start, len(self.lines)) if self.lines[i].strip()]
        if not idx:
            return None
        i = idx[0]
        line = self.lines[i].strip()
        if i + 1 < len(self.lines) and self.lines[i + 1].strip():
            return None
        if len(line) > 100 or re.search(r"[.:;,!?]$", line) or re.match(r"(?:[-*+>|#`]|\d+[.)]\s|<)", line):
            return None
        if len(re.sub(r"[\W_]", "", line)) < 4:
            return None
        return line

    def _investigation(self, scope: Node, title_node: Node | None, extra: list[Node] | None) -> Parsed:
        title, tnode = self._title(scope, title_node)
        # "====\nNOTEBOOK HANG INVESTIGATION\n====": a rule drawn above a plain-text title is not its words.
        title = re.sub(r"^\s*(?:[=\-━─_*~#+]{3,}\s*)+|(?:\s*[=\-━─_*~#+]{3,})+\s*$", "", title) or title
        title, tstatus = status_from_title(title)
        # "🐛 [#500](https://…/issues/500) - Bug: …": the link's words, not its address.
        title = one_line(re.sub(r"\[([^\]]{1,200})\]\((?:[^()\s]|\([^()\s]*\))+\)", r"\1", title)) or "Imported notes"
        inv = Investigation(id="", title=title)
        b = _Builder(self, inv, tnode)
        if tstatus:
            inv.status = tstatus
        if scope is self.root:
            b.front_matter(self.front, self.meta)
        # The scope's own text (and the title section's) is the header: fields, then notes.
        if tnode is not None and tnode is not scope:
            b.header(scope)  # text before the title heading
            b.header(tnode)
        else:
            b.header(scope)
        kids = [c for c in scope.children]
        for c in kids:
            if c is tnode:
                b.title_children(c)
            else:
                b.section(c, context=None)
        if extra:
            in_template = {id(d) for n in extra if self._template(n) for d in n.walk() if d is not n}
            for n in extra:
                if id(n) in in_template:
                    continue
                if self._template(n):
                    b.free(n, whole=True)
                    continue
                if n is self.root or n.start < 0:
                    b.header(n, notes_heading="## Notes (document)")
                else:
                    b.free_own(n)
        line = (tnode.start + 1) if tnode is not None else 1
        return b.finish(line)


class _Own(Node):
    """A node seen with only some of its blocks (those before a thematic break)."""

    def __init__(self, n: Node, blocks: list[Block]):
        super().__init__(n.level, n.text, n.start, n.head_end, blocks=list(blocks), children=[], parent=n.parent)


class _Builder:
    """Collects one investigation: structure, free sections, and which lines went where."""

    def __init__(self, reader: _Reader, inv: Investigation, tnode: Node | None):
        self.r = reader
        self.lines = reader.lines
        self.inv = inv
        self.attempts: list[_Attempt] = []
        self.steps: list[tuple[int, NextStep]] = []
        self.sections: list[tuple[int, str, list[str]]] = []  # (first line, heading, body lines)
        self.units: list[_Unit] = []
        self.renamed: list[tuple[int, str, str]] = []  # (line, heading text, where it went)
        self.owned: list[int] = []  # every source line this investigation answers for
        self.diff_rows: list[tuple[int, Difference]] = []
        self.fields_seen: dict[str, int] = {}
        self.tnode = tnode
        self.status_stated = False  # a Status: field or heading said it; else a resolution may
        self.status_text = ""  # the Status field's words ("Persistent OOM despite all optimizations")
        if tnode is not None:
            self.owned.extend(range(tnode.start, tnode.head_end))

    # --- header ---------------------------------------------------------------------------

    def front_matter(self, span, meta: dict) -> None:
        if not span:
            return
        a, b = span
        st = meta.get("status")
        if isinstance(st, str) and status_word(st):
            self.inv.status = status_word(st)
        tags = meta.get("tags")
        if isinstance(tags, list):
            self.inv.tags = [str(t).strip() for t in tags if str(t).strip() and "\n" not in str(t)][:20]
        elif isinstance(tags, str):
            self.inv.tags = [t.strip().lstrip("#") for t in re.split(r"[,\s]+", tags) if t.strip().lstrip("#")]
        body = ["```yaml"] + self.lines[a + 1:b - 1] + ["```"]
        self._add_section(a, "## Front matter", body, list(range(a, b)))

    def header(self, n: Node, notes_heading: str = "## Notes") -> None:
        """A section's own blocks read as investigation fields; the rest kept as notes."""
        if n.start >= 0:
            self.owned.extend(range(n.start, n.head_end))
        notes: list[int] = []
        key, buf, buf_lines = None, [], []

        def flush():
            nonlocal key, buf, buf_lines
            if key is not None:
                self._set_field(key, buf, buf_lines)
            key, buf, buf_lines = None, [], []

        entries = self._entries(n.blocks)
        in_entry = {b.start for g in entries.values() for b in g}
        knobs_before = len(self.attempts)
        captioned = {k: v for k, v in self._caption_lists(n.blocks).items()
                     if any(b.end <= k and _PLAIN_TRIED_CAPTION.search(self.lines[b.start]) for b in n.blocks)}
        for blk in n.blocks:
            self.owned.extend(range(blk.start, blk.end))
            if blk.start in captioned and key is None:
                # "I did following tests:" + "- NCCL_PROTO=LL|LL128|SIMPLE - all hang" in a post: each item a try
                first = len(self.attempts)
                self.attempts_from_list(n, blk, captioned[blk.start])
                self._shared_result(n.blocks, blk, self.attempts[first:])
                continue
            if blk.start in in_entry:
                if blk.start in entries:
                    flush()
                    self._entry(n, entries[blk.start])
                continue
            # A label with nothing after it ("**Environment:**") takes the list, fence or table
            # right below it; a label with text takes the rest of its own paragraph or item.
            if key is not None and not has_text(buf) and blk.kind in ("fence", "code", "table") \
                    and blk.start - buf_lines[-1] <= 2:
                buf.extend(self.lines[blk.start:blk.end])
                buf_lines.extend(range(blk.start, blk.end))
                continue
            open_field = key is not None and not has_text(buf) and blk.start - buf_lines[-1] <= 2
            if not open_field:
                flush()
            taken = self._todo_lines(blk) if not open_field and blk.kind in ("paragraph", "list", "raw") else set()
            if blk.kind == "list" and not open_field and self._tried_items(n, blk, None, keep_rest=notes,
                                                                          skip=taken, actions=self.r.thread):
                continue
            if blk.kind in ("paragraph", "list", "raw", "quote"):
                for i in range(blk.start, blk.end):
                    if i in taken:
                        continue
                    line = self.lines[i]
                    hit = label_of(line, INV_LABELS)
                    if hit is not None:
                        flush()
                        key, buf, buf_lines = hit[0], ([hit[1]] if hit[1] else []), [i]
                        open_field = not hit[1]
                        continue
                    contiguous = key is not None and buf_lines[-1] >= i - 2 and line.strip() != ""
                    # "**Environment:**" then its "- GPU: ..." items; "**Symptom:** text" then the
                    # lines that wrap it (not a new item).
                    if contiguous and (open_field or (buf_lines[-1] == i - 1 and not ITEM_START.match(line))):
                        buf.append(unquote(line))
                        buf_lines.append(i)
                        continue
                    flush()
                    open_field = False
                    if self._inline_attempt(blk, i):
                        continue
                    if i == blk.start:
                        self._knob_attempt(n, blk)
                    notes.append(i)
            else:
                notes.extend(range(blk.start, blk.end))
        flush()
        notes = [i for i in notes if i not in self._inline_lines]
        self._story_attempts(n, n.blocks, set(notes), knobs_before)
        if notes:
            body = span_lines(self.lines, notes)
            self._add_section(notes[0], notes_heading, body, notes)

    _inline_lines: set = set()

    def _set_field(self, key: str, buf: list[str], lines: list[int]) -> None:
        text = field_value(buf)
        unit = _Unit(key.replace("_", " ").capitalize(), lines, "field")
        self.units.append(unit)
        if key == "status":
            self.status_text = f"{self.status_text} {text}"
            self.status_stated = self.status_stated or status_word(text) is not None
            self.inv.status = status_word(text) or self.inv.status
            if status_word(text) is None or len(text.split()) > 3:
                # "Status: blocked on the driver team" keeps its words as notes.
                self._add_section(lines[0], "## Status notes", [self.lines[i] for i in lines], lines)
            return
        if key == "tags":
            self.inv.tags += [t.strip().lstrip("#").strip("`") for t in re.split(r"[,\s]+", text)
                              if t.strip().lstrip("#").strip("`") and t.strip().lstrip("#").strip("`") not in self.inv.tags]
            return
        if key == "related_files":
            self.inv.related_files += [f for f in parse_files(buf) if f not in self.inv.related_files]
            return
        cur = getattr(self.inv, key)
        setattr(self.inv, key, f"{cur}\n\n{text}" if cur and text else (cur or text))
        fm = _CAUSE_FIX.search(text) if key == "root_cause" else None
        if fm and fm.group("fix").strip():
            # "Root cause: inconsistent device order across nodes. Fix: export CUDA_DEVICE_ORDER=PCI_BUS_ID. That
            # forced consistent enumeration": the fix named with the cause was applied; how it went follows it
            fix = fm.group("fix").strip()
            said = outcomes.classify(fix)
            self.attempts.append(_Attempt(line=lines[0], number=None, title=item_title(fix), fields={"did": [fix]},
                                          lead=[], context="worked" if said == "inconclusive" else said,
                                          summary=True, lines=list(lines), unit="Root cause"))

    # --- sections ---------------------------------------------------------------------------

    def title_children(self, t: Node) -> None:
        """The sections under the title. A document that is one attempt ("# Attempt 20" with
        "## Hypothesis", "## Command", "## Result") is read as that attempt; its "what next"
        sections stay next steps."""
        r = self.r
        labels = [ATTEMPT_LABELS.get(heading_key(c.text)) for c in t.children]
        if r._is_attempt_heading(t) and STRONG_RE.match(ATTEMPT_HEAD.match(t.text).group("kw")) \
                and not any(r._is_attempt_heading(d) or STRONG_CONTAINER.search(bare_words(d.text))
                            for d in t.walk() if d is not t) \
                and any(x in ("result", "outcome") for x in labels) and len([x for x in labels if x]) >= 2:
            later = [c for c in t.children if self._special(c) and not ATTEMPT_LABELS.get(heading_key(c.text))]
            body = [c for c in t.children if c not in later]
            first = body[0].start
            self.attempt_from_node(Node(t.level, t.text, first, first, blocks=[], children=body, parent=t.parent),
                                   container=None)
            for c in later:
                self.section(c, context=None)
            return
        for c in t.children:
            self.section(c, context=None)

    def section(self, n: Node, context: str | None) -> None:
        r = self.r
        if n is self.tnode:
            for c in n.children:  # its own text is the header, read already
                self.section(c, context=None)
            return
        if r._template(n):
            self.free(n, whole=True)
            return
        text = n.text
        bare = bare_words(text)
        if PLAN_HEAD.match(bare) and not n.children and any(b.kind in ("list", "table") for b in n.blocks):
            self.next_steps(n)  # "## Verification path": 1. parity 2. PTX 3. bench -- checks still to run
            return
        if LESSONS_HEAD.match(bare) or PLAN_HEAD.match(bare) or LIMITS_HEAD.search(bare) or _AFTERMATH_HEAD.match(bare) or (
                _WHY_HEAD.match(bare) and not n.children):  # "### Why This Works": the reason, not more tries
            self.free(n, whole=True)  # lessons looked back on, a plan for checking: not work done
            return
        if _RESULTS_OF_RUNS.match(bare) and sum(self.r._has_attempt_evidence(c) and not bare_words(c.text).startswith("why ")
                                                 for c in n.children) >= 2:
            # "## Testing Results" > "### Without Retry Loop" (code, "**Result**: loses 60%") / "### With Retry Loop"
            # ("**Result**: hangs"): each variant run is an attempt; "### Why X works" stays the explanation
            self.owned.extend(range(n.start, n.head_end))
            own = [i for b in n.blocks for i in range(b.start, b.end)]
            self.owned.extend(own)
            self._keep_or_rename(n, own, "attempts")
            for c in n.children:
                if self.r._has_attempt_evidence(c) and not bare_words(c.text).startswith("why ") and not c.children:
                    self.attempt_from_node(c, container=None)
                else:
                    self.section(c, context=None)
            return
        ran = self._run_summary(n) if _NAMED_RESULTS.match(bare) and not n.children else None
        if ran:
            # "### Cross-Validation Test Results" over the run's output ("Failed: 0 ... ✅ PASSED"): one run; the
            # output's closing summary says how it went
            self.attempt_from_node(n, container=None)
            self.attempts[-1].tag = self.attempts[-1].tag or ran
            return
        if _FINDING_HEAD.match(text) and not heading_outcome(text):
            # "### Finding 1: Helper Functions Not Implemented", "### 2. Known Issues from Documentation": what was
            # found or known -- facts, not tries; kept as written
            self.free(n, whole=True)
            return
        if r._is_attempt_heading(n) and not n.children and _MANY_TRIES.search(n.text) and any(
                b.kind == "table" and len(b.items) >= 3 and re.search(r"(?i)\b(?:result|outcome|verdict|status)\b",
                                                                    self.lines[b.start]) for b in n.blocks):
            # "### Phase 1: Optimization Attempts" over "| Iteration | Config | Result |": its rows are the attempts;
            # the rest (its goal, its summary) stays as text, and so does the table
            self.owned.extend(range(n.start, n.head_end))
            keep: list[int] = []
            for b in n.blocks:
                self.owned.extend(range(b.start, b.end))
                if b.kind == "table":
                    self.attempts_from_table(n, b, None)
                keep.extend(range(b.start, b.end))
            self._add_section(n.start, "## " + n.text, span_lines(self.lines, keep), [n.start] + keep)
            return
        if r._is_attempt_heading(n) or (context == "container" and not self._special(n)) or (
                NUMBERED_HEAD.match(text) and r._has_attempt_evidence(n) and not self._special(n)
                and not self._bug_like(n) and not STRONG_CONTAINER.search(bare)):  # "## 8. Attempt Log": rows
            self.attempt_from_node(n, container=context)
            return
        if context == "weak" and self._no_problem_entry(n):
            # "### Documentation Framework Implementation" / "- **Issues**: None - clean implementation":
            # a journal's entry of work that met no problem is no attempt at one
            self.free(n, whole=True)
            return
        if context == "weak" and n.children and DATE_HEAD.match(n.text):
            self.container(n, strong=False)  # "### 2025-09-28" > "#### Dataloader crash fix": a day of entries
            return
        if context == "weak" and not self._special(n) and (r._has_attempt_evidence(n) or (
                (nm := NUMBERED_HEAD.match(text)) and ACTION_LEAD.match(nm.group("rest")) and not n.children)):
            # "## Investigation log" > "### 2. Checked the production backend log": a step that was taken
            self.attempt_from_node(n, container=None)
            return
        fkey = field_of(text)
        plain = outcomes.plain_text(text).lower()
        # ("future work" is a plan, not a verdict that it works)
        reported = re.search(r"\((?:tested|verified|measured|confirmed)\)|\b(?:root cause found|not sufficient|"
                             r"does not (?:help|work)|(?<!future )(?<!further )works?|worked|fixed)\b", plain, re.I) \
            and not re.search(r"\b(?:would|could|might|should|untried|not yet tried)\b", plain)
        # "What would make this better (future work)": the words in parentheses name the section too.
        if ((NEXT_HEAD.search(bare) or NEXT_HEAD.search(plain))
                and not STRONG_CONTAINER.search(bare.replace("untried", "")) and fkey is None and not reported) \
                or (_PROPOSED_HEAD.search(bare) and not reported):
            # "PROPOSED SOLUTIONS (Ranked by Recommendation)" > "SOLUTION 1: ...": fixes put forward, none run
            self.next_steps(n)
            return
        if DIFF_HEAD.search(bare) and self.differences(n):
            return
        if _WORKAROUND_HEAD.match(text) and not n.children and not self._bug_like(n) and outcomes.classify(
                " ".join(self.lines[i] for b in n.blocks if b.kind == "paragraph" for i in range(b.start, b.end))) \
                in ("worked", "partial"):
            # "## Workaround: CPU Mode" + "The CPU path works, but is ~10x slower": a remedy in use, and how it went
            self.attempt_from_node(n, container=None)
            return
        if fkey == "root_cause" and self._applied_solution(n):
            self.attempt_from_node(n, container="worked")  # "### Solution (Final)" + the change made: the fix
            return
        if fkey is not None:
            self.field_section(n, fkey)
            return
        if RESULT_CONTAINER.search(n.text) or RESULT_CONTAINER.search(outcomes.plain_text(n.text)):
            self.container(n, strong=False, result=True)
            return
        if STRONG_CONTAINER.search(bare) and not NEXT_HEAD.search(bare):
            self.container(n, strong=True)
            return
        if REFERENCE_HEAD.match(bare):
            # "Artifacts", "References", "Appendix": pointers, not work done -- unless an appendix
            # holds a section of its own kind ("Appendix C" with "Things we ruled out").
            self.free(n, whole=not any(self._structured(c) for c in n.children))
            return
        if self.r._own_fields(n):
            # "**Status:** / **Symptom:**" under a heading of its own: the bug's header, read as fields.
            self.header(n, notes_heading="## " + n.text)
            for c in n.children:
                self.section(c, context=None)
            return
        if DATE_HEAD.match(n.text) and self._one_run_entry(n):
            # "### 2026-04-27 — iter3 wider model (DISCARDED)" with "- **Change:** / - **Result:** /
            # - **Verdict:**": an experiment journal's entry is one run.
            self.attempt_from_node(n, container=None)
            return
        if WEAK_CONTAINER.search(bare) or DATE_HEAD.match(n.text):
            self.container(n, strong=False)  # a dated entry is a log entry
            return
        self.free(n, whole=False)

    def _no_problem_entry(self, n: Node) -> bool:
        """An entry whose "Issues:"/"Problems:" field says "None" and whose other words name no failure."""
        if n.children or heading_outcome(n.text) or _PROBLEM_WORDS.search(n.text):
            return False
        lines = [self.lines[i] for b in n.blocks for i in range(b.start, b.end)]
        none = any(re.match(r"^\W*(?:issues?|problems?|blockers?|errors?)\W*\s*[:—–-]\s*\W*none\b", ln, re.I)
                   for ln in lines)
        return none and not any(_TROUBLE_WORDS.search(re.sub(r"(?i)^\W*(?:issues?|problems?|blockers?|errors?)\W*\s*"
                                                                r"[:—–-]\s*\W*none\b.*", "", ln)) for ln in lines)

    def _applied_solution(self, n: Node) -> bool:
        """A "Solution" section after attempts, showing the change it made (code) and saying nothing of
        plans, is the attempt that worked; a bare "## Resolution" of facts stays the root cause."""
        if not self.attempts or n.children or not _SOLVED_HEAD.match(bare_words(n.text)) \
                or re.search(r"\b(?:proposed|planned|untested|options?|todo|candidates?|temporary|recommended)\b", n.text, re.I):
            return False
        blocks = [b for b in n.blocks if b.kind != "hr"]
        if any(label_of(self.lines[i], INV_LABELS) for b in blocks for i in range(b.start, b.end)):
            return False  # "## Resolution" with "root_cause:" / "fix:" keys: the investigation's header
        first = next((b for b in blocks if b.kind == "paragraph"), None)
        lead = " ".join(self.lines[first.start:first.end]) if first is not None else ""
        return bool(first is not None and blocks.index(first) == 0 and any(b.kind in ("fence", "code") for b in blocks)
                    and not re.search(r"\b(?:would|could|might|should|will|if)\b", lead, re.I))

    def _one_run_entry(self, n: Node) -> bool:
        """A dated entry that is one run: no sub-sections, each of its labels once, a result and what changed."""
        if n.children:
            return False
        keys = [h[0] for b in n.blocks for i in range(b.start, b.end)
                if (h := label_of(self.lines[i], ATTEMPT_LABELS))]
        return len(keys) == len(set(keys)) and "result" in keys and ("did" in keys or "hypothesis" in keys) \
            and ("outcome" in keys or "conclusion" in keys)

    def _own_role(self, n: Node) -> bool:
        """Does this heading name something other than a group of steps?"""
        bare = bare_words(n.text)
        return bool(self.r._is_attempt_heading(n) or field_of(n.text) or STRONG_CONTAINER.search(bare)
                    or RESULT_CONTAINER.search(n.text) or (DIFF_HEAD.search(bare) and self._has_table(n))
                    or re.search(r"\b(?:analysis|observations?|findings?|lessons?|rationale|evidence|artifacts|"
                                 r"background|context|summary|options?|details?)\b", bare))

    def _bug_like(self, n: Node) -> bool:
        """ "## 1. Shadow acne" with "### Symptom" and "### Root cause" under it: a bug, not an attempt."""
        return bool({"status", "symptom"} & self.r._own_fields(n)) or sum(
            field_of(c.text) in ("symptom", "root_cause", "environment") for c in n.children) >= 1 and any(
            STRONG_CONTAINER.search(bare_words(d.text)) or field_of(d.text) == "symptom" for d in n.walk() if d is not n)

    def _special(self, n: Node) -> bool:
        bare = bare_words(n.text)
        return bool((NEXT_HEAD.search(bare) and not STRONG_CONTAINER.search(bare))
                    or (DIFF_HEAD.search(bare) and self._has_table(n)) or field_of(n.text))

    def _has_table(self, n: Node) -> bool:
        return any(b.kind in ("table", "fence", "code") for b in n.blocks)

    def container(self, n: Node, strong: bool, result: bool = False) -> None:
        """A section that holds attempts: "What we tried" (strong: its sub-sections, items and rows
        are attempts), "What didn't work" (result: entries that did something, with the heading's
        verdict) or "Investigation"/"Timeline"/a dated entry (weak: attempts where they show)."""
        self.owned.extend(range(n.start, n.head_end))
        if result:
            self._result_container(n)
        elif strong:
            self._strong_container(n)
        else:
            # A timeline, log or thread: attempts are its items and sentences; the text stays.
            prose = bool(PROSE_CONTAINER.search(bare_words(n.text)) or DATE_HEAD.match(n.text)) or self.r.thread
            self._keep_or_rename(n, self._scan_blocks(n, n.blocks, None, prose=prose), "attempts")
            for c in n.children:
                self.section(c, context="weak")

    def _keep_or_rename(self, n: Node, keep: list[int], where: str) -> None:
        if keep:
            self._add_section(n.start, "## " + n.text, span_lines(self.lines, keep), [n.start] + keep)
        else:
            self.renamed.append((n.start, n.text, where))

    def _numbered_paras(self, blocks: list[Block]) -> set[int]:
        """Paragraphs led by "**1. I told the operator ...**", "**2. ...**" (two or more): numbered entries."""
        got = {b.start for b in blocks if b.kind == "paragraph" and _NUMBERED_BOLD.match(self.lines[b.start])}
        return got if len(got) >= 2 else set()

    def _bold_entry(self, n: Node, blocks: list[Block], k: int, ctx: str | None) -> int:
        """ "❌ **Reloading the module:** `rmmod ...`" with its detail list right below: one attempt.
        ``blocks[k - 1]`` is the paragraph; returns the index of the next block to read."""
        blk = blocks[k - 1]
        idxs = list(range(blk.start, blk.end))
        numbered = self._numbered_paras(blocks)
        if blk.start in numbered:
            # "**1. ...**" then its paragraphs, code and lists up to "**2. ...**": one entry.
            while k < len(blocks) and blocks[k].start not in numbered and blocks[k].kind != "hr":
                idxs += list(range(blocks[k].start, blocks[k].end))
                self.owned.extend(range(blocks[k].start, blocks[k].end))
                k += 1
            self._attempt_from_item(self.lines[blk.start].strip(), idxs, ctx, n.text)
            a = self.attempts[-1]
            nm = re.match(r"^\s*(\d{1,2})[.)]\s+(.+)$", a.title)
            if nm:
                a.number, a.title = int(nm.group(1)), nm.group(2)
            return k
        if k < len(blocks) and blocks[k].kind == "list" and blocks[k].start - blk.end <= 1:
            idxs += list(range(blocks[k].start, blocks[k].end))
            self.owned.extend(range(blocks[k].start, blocks[k].end))
            k += 1
        self._attempt_from_item(self.lines[blk.start].strip(), idxs, ctx, n.text)
        return k

    def _result_container(self, n: Node) -> None:
        heading = outcomes.plain_text(n.text)  # "Flags que **NO** funcionan"
        ctx = "failed" if FAILED_CONTAINER.search(heading) else "worked"
        if self._one_prose_attempt(n, ctx):
            return
        # "Failed Approaches" / "Rejected fixes" / "Flags that don't work": every item is something tried.
        named = re.search(r"\b(?:failed|rejected|abandoned|unsuccessful) (?:attempts|approaches|fixes|solutions)\b",
                          heading, re.I) or (ctx == "failed" and re.search(
                              r"\b(?:flags?|options?|settings?|workarounds?|mitigations?|env(?:ironment)? vars?|"
                              r"variables|fixes|approaches)\b", heading, re.I))
        keep: list[int] = []
        blocks, k = list(n.blocks), 0
        numbered = self._numbered_paras(blocks)
        entries = self._entries(blocks)
        before = len(self.attempts)
        while k < len(blocks):
            blk = blocks[k]
            k += 1
            self.owned.extend(range(blk.start, blk.end))
            if blk.start in entries:
                self._entry(n, entries[blk.start])
                k += len(entries[blk.start]) - 1  # its labeled items
                continue
            if blk.start in numbered or blk.kind == "paragraph" and BOLD_LEAD.match(self.lines[blk.start]) \
                    and not _caption(self.lines, blk) and not _section_label(self.lines[blk.start]):
                k = self._bold_entry(n, blocks, k, ctx)
            elif blk.kind == "list" and (named or any(BOLD_LEAD.match(ITEM_START.sub("", self.lines[a], count=1))
                                                      for a, _b in blk.items)):
                self.attempts_from_list(n, blk, ctx)  # "1. **LD_PRELOAD intercept** - causes init errors"
            elif blk.kind == "list" and self._tried_items(n, blk, ctx, keep_rest=keep, actions=True):
                pass
            elif blk.kind == "table" and self.attempts_from_table(n, blk, ctx):
                pass  # "Failed Attempts Summary" as a table: its rows are attempts
            elif blk.kind != "hr":
                keep.extend(range(blk.start, blk.end))
        paras = [b for b in blocks if b.kind == "paragraph"]
        if ctx == "worked" and len(self.attempts) == before and not n.children and paras \
                and any(b.kind in ("fence", "code") for b in blocks):
            # "## What works (v4 — shipped)": a paragraph, the code that changed and why it works: one attempt.
            self.attempt_from_node(Node(n.level, n.text, n.start, n.head_end, blocks=list(n.blocks), children=[],
                                        parent=n.parent), container="worked")
            self.attempts[-1].title = one_line(item_title(" ".join(
                self.lines[i].strip() for i in range(paras[0].start, paras[0].end))).rstrip(":"))
            return
        self._keep_or_rename(n, keep, "attempts")
        fix = None
        if ctx == "worked" and len(self.attempts) == before and not any(
                self.r._is_attempt_heading(c) or NUMBERED_HEAD.match(c.text) for c in n.children):
            # "## ✅ The Fix That Worked" > "### Root Cause" + "### The Fix": the fix section is the attempt.
            fix = next((c for c in n.children if re.match(r"^(?:the )?(?:fix|solution|change|patch)\b",
                                                          bare_words(c.text))), None)
            named = fix is not None
            if fix is None:
                # "## The Solution That Worked ✅" > "### Aggressive Per-Block Gradient Checkpointing" (text and
                # the code) > "### Why This Works": the first sub-section showing a change is the fix, by its name.
                fix = next((c for c in n.children if not c.children and not self._special(c)
                            and not re.match(r"^(?:why|how|what)\b", bare_words(c.text))
                            and any(b.kind in ("fence", "code") for b in c.blocks)
                            and any(b.kind == "paragraph" for b in c.blocks)), None)
        for c in n.children:
            if c is fix:
                self.attempt_from_node(c, container=ctx)
                if named:
                    self.attempts[-1].title = one_line(re.sub(r"^\W+", "", outcomes.plain_text(n.text)))
            elif self.r._is_attempt_heading(c) or NUMBERED_HEAD.match(c.text) or self.r._has_attempt_evidence(c):
                self.attempt_from_node(c, container=ctx)
            else:
                self.section(c, context=None)

    _GROUP_NOUN = re.compile(r"\b(?:approaches|ideas|knobs|options|changes|fixes|tweaks|settings|flags|variants|optimi[sz]ations|"
                             r"experiments|attempts|issues|things|tries|candidates|alternatives|workarounds|patches|"
                             r"configs|configurations)$", re.I)

    def _item_group(self, c: Node) -> bool:
        """Under "Things we tried": "### Rejected or deprioritized" / "### Weak or unhelpful knobs" holding
        only a list: a group of attempts, one per item, not one attempt."""
        own = [b for b in c.blocks if b.kind != "hr"]
        lists = [b for b in own if b.kind == "list"]
        # "### 1. ✅ Memory Optimizations" over "- [x] batch_size reduced: 2 → 1", ...: the tick says the group was
        # done, its items are the attempts.
        ticked = heading_outcome(c.text) == "worked" and lists and all(
            CHECKBOX.match(self.lines[a]) for b in lists for a, _e in b.items)
        if c.children or self.r._is_attempt_heading(c) or (not ticked and (
                heading_outcome(c.text) or self.r._has_attempt_evidence(c))):
            return False
        if not lists or sum(len(b.items) for b in lists) < 2 or len(own) - len(lists) > 1 \
                or any(b.kind not in ("list", "paragraph") for b in own):
            return False
        bare = bare_words(c.text)
        return bool(FAILED_CONTAINER.search(bare) or WORKED_CONTAINER.match(bare) or self._GROUP_NOUN.search(bare))

    def _strong_container(self, n: Node, inherit: str | None = None) -> None:
        ctx = inherit
        if FAILED_CONTAINER.search(n.text):
            ctx = "failed"
        elif WORKED_CONTAINER.match(bare_words(n.text)):
            ctx = "worked"
        elif re.search(r"not yet (?:proven|tested|tried|run)|unproven|untested|to (?:test|verify)|proposed|planned",
                       n.text, re.I) and not re.search(r"\b(?:applied|done|tried|tested|deployed)\b", n.text, re.I):
            ctx = "untested"  # "Hypotheses (not yet proven)"
        if self._one_prose_attempt(n, ctx):
            return
        before = len(self.attempts)
        keep: list[int] = []
        blocks, k = list(n.blocks), 0
        numbered = self._numbered_paras(blocks)
        entries = self._entries(blocks)
        while k < len(blocks):
            blk = blocks[k]
            k += 1
            self.owned.extend(range(blk.start, blk.end))
            if blk.kind == "hr":
                continue  # a separator, not content
            if blk.start in entries:
                self._entry(n, entries[blk.start])
                k += len(entries[blk.start]) - 1  # its labeled items
                continue
            if blk.start in numbered or blk.kind == "paragraph" and BOLD_LEAD.match(self.lines[blk.start]) \
                    and not bold_attempt(self.lines[blk.start]) and not _caption(self.lines, blk) \
                    and not _section_label(self.lines[blk.start]):
                k = self._bold_entry(n, blocks, k, ctx)
            elif blk.kind == "list" and k >= 2 and blocks[k - 2].kind == "paragraph" \
                    and blocks[k - 2].end - blocks[k - 2].start == 1 and _section_label(self.lines[blocks[k - 2].start]) \
                    and not re.sub(r"^\W*[^:]*:\W*", "", self.lines[blocks[k - 2].start]).strip():
                keep.extend(range(blk.start, blk.end))  # "**Root Cause**:" then its reasons: the label's text
            elif blk.kind == "list":
                first = len(self.attempts)
                self.attempts_from_list(n, blk, ctx)
                self._done_ticks(n, self.attempts[first:])
                self._shared_result(blocks, blk, self.attempts[first:])
            elif blk.kind == "table" and self.attempts_from_table(n, blk, ctx):
                pass
            elif blk.kind in ("paragraph", "raw") and bold_attempt(self.lines[blk.start]) and k < len(blocks) \
                    and blocks[k].kind in ("list", "fence", "code") and blocks[k].start - blk.end <= 1:
                # "**H2: Step Size Limits** - `step.hpp`" with the changes listed (or the code) right under it:
                # one attempt, its list is what it changed.
                end = k
                while end < len(blocks) and blocks[end].kind in ("list", "fence", "code") \
                        and blocks[end].start - blocks[end - 1].end <= 1:
                    end += 1
                self.owned.extend(i for b in blocks[k:end] for i in range(b.start, b.end))
                self._inline_attempt(Block(blk.kind, blk.start, blocks[end - 1].end), blk.start, ctx)
                k = end
            elif blk.kind in ("paragraph", "raw") and self._inline_attempt(blk, blk.start, ctx):
                keep.extend(i for i in range(blk.start, blk.end) if i not in self._inline_lines)
            else:
                keep.extend(range(blk.start, blk.end))
        for c in n.children:
            if self._special(c) or STRONG_CONTAINER.search(bare_words(c.text)) and not self.r._is_attempt_heading(c) \
                    or _ABOUT_ATTEMPT.match(c.text):
                self.section(c, context=None)
            elif _PROPOSED_HEAD.search(bare_words(c.text)) and heading_outcome(c.text) in (None, "untested"):
                # "## Attempted Solutions" > "### Potential Solutions (Not Yet Tested)": put forward, not run
                self.section(c, context=None)
            elif self._item_group(c):
                self.owned.extend(range(c.start, c.head_end))
                self._strong_container(c, inherit=ctx)
            else:
                self.attempt_from_node(c, container=ctx or "container")
        made = len(self.attempts) - before
        if re.search(r"\b(?:implemented|applied|deployed|made|done|taken|in place)\b", n.text, re.I):
            for a in self.attempts[before:]:
                a.done = True  # "Workarounds Implemented": carried out, even where nothing says how it went
        self._keep_or_rename(n, keep, f"attempts ({made})" if made else "sections below")

    def _done_ticks(self, n: Node, atts: list[_Attempt]) -> None:
        """ "### What We Tried" with "- ✅ Granted ALL privileges", "- ✅ Regenerated the client", ... and
        no words saying what came of them: the ticks mark steps done, not fixes that worked. Under a
        heading that says the problem stands ("❌ Current Blocker"), they did not fix it."""
        ticked = [a for a in atts if (a.tag == "worked" or a.done) and not a.context]
        if len(ticked) < 3:
            return
        bare = [a for a in ticked if outcomes.classify(re.sub(r"[✅✔️☑]", " ", " ".join(a.lead + sum(a.fields.values(), []))))
                == "inconclusive"]
        if len(bare) * 3 < len(ticked) * 2:
            return
        # "**Status**: Persistent OOM despite all optimizations": the header says none of them fixed it
        p, stands = n, bool(re.search(r"\b(?:persist\w*|despite|unresolved|still (?:fail\w*|broken|oom\w*|hang\w*|crash\w*)|"
                                      r"not (?:yet )?(?:fixed|resolved))\b", self.status_text, re.I))
        while not stands and p is not None and p.start >= 0:
            if heading_outcome(p.text) == "failed" or re.search(
                    r"\b(?:blockers?|blocked|still (?:failing|broken|open|hangs?|crashes)|unresolved|not (?:yet )?(?:fixed|resolved))\b",
                    p.text, re.I):
                stands = True
                break
            p = p.parent
        for a in bare:
            a.tag = None
            a.context = "failed" if stands else None

    def _one_prose_attempt(self, n: Node, ctx: str | None) -> bool:
        """ "## What we tried that failed" / "## What Worked" written as prose (paragraphs and code,
        no list, table or numbered entries): the section tells one attempt. Its sub-sections that
        hold attempts of their own ("### Things we ruled out") are read as such."""
        own = [b for b in n.blocks if b.kind != "hr"]
        paras = [b for b in own if b.kind == "paragraph"]
        if not paras or any(b.kind in ("list", "table") for b in own) or self._numbered_paras(own) \
                or any(bold_attempt(self.lines[b.start]) for b in paras) \
                or sum(len(self.lines[i].split()) + len(re.findall(r"[\u3040-\u9fff]", self.lines[i])) // 2
                       for b in paras for i in range(b.start, b.end)) < 6:  # CJK has no spaces
            return False
        if len(n.children) >= 3 and all(not c.children for c in n.children) and len(paras) <= 2:
            # "## What I tried" + one line of intro + "### Adding logging to the API" / "### Sending it from my
            # machine with curl" / ...: a blog's tries, one sub-heading each -- not one try told in prose
            return False
        inner, rest = [], []
        for c in n.children:
            if self.r._is_attempt_heading(c) or NUMBERED_HEAD.match(c.text) or self._special(c):
                return False
            holds = STRONG_CONTAINER.search(bare_words(c.text)) or RESULT_CONTAINER.search(outcomes.plain_text(c.text))
            (rest if holds else inner).append(c)
        if not n.children and self._story_section(n, ctx):
            return True
        body = Node(n.level, n.text, n.start, n.head_end, blocks=list(n.blocks), children=inner, parent=n.parent)
        self.attempt_from_node(body, container=ctx)
        a = self.attempts[-1]
        title = ""
        for b in paras:
            line = self.lines[b.start].strip()
            lab = LABEL.match(line)
            bold = re.match(r"^(?:\*\*|__)([^*_]{3,80}?):?(?:\*\*|__):?\s*$", line)
            if bold:
                title = bold.group(1)  # "**Direct Database Update:**" above its command
                break
            if lab and (lab.group("rest") or "").strip():
                continue  # "**Commit**: ff46e875": a detail, not the name
            title = item_title(" ".join(self.lines[i].strip() for i in range(b.start, b.end)))
            break
        if title:
            a.title = one_line(title)
        for c in rest:
            self.section(c, context=None)
        return True

    def free(self, n: Node, whole: bool, outside: bool = False) -> None:
        """Keep a section as text. ``whole``: its sub-sections too, verbatim, in one piece.

        Otherwise attempts written inside plain text (a "Tried ..." list, a paragraph that starts
        "**Attempt 3:**") are read out of it, and sub-sections with structure go their own way.
        """
        if whole:
            lines = n.lines()
            self.owned.extend(lines)
            body = span_lines(self.lines, [i for i in lines if i >= n.head_end])
            if n.start < 0:
                if body:
                    self._add_section(lines[0], "## Notes", body, lines)
                return
            self._add_section(n.start, "## " + n.text, body, lines)
            return
        self.owned.extend(range(n.start, n.head_end))
        keep = self._scan_blocks(n, n.blocks, None, prose=self.r.thread, story=True)
        split = any(self._structured(c) for c in n.children)
        if not split:
            for c in n.children:
                sub = c.lines()
                self.owned.extend(sub)
                keep.extend(sub)
                if not c.children and c.start >= 0:
                    # "## MAJOR ACHIEVEMENT" > "### What Was Accomplished": the sub-section's own attempts
                    # ("**Attempts**: Tried X (failed)"; "Tried ..." items) are read; its text stays here
                    self._scan_blocks(c, c.blocks, None, prose=self.r.thread, story=True)
        if keep or not split:
            self._add_section(n.start, "## " + n.text, span_lines(self.lines, keep), [n.start] + keep)
        else:
            self.renamed.append((n.start, n.text, "sections below"))
        if split:
            made: list[_Attempt] = []
            for c in n.children:
                before = len(self.attempts)
                if made and _RESULTS_HEAD.match(bare_words(c.text)):
                    self._later_verdict(c, made)
                self.section(c, context=None)
                if STRONG_CONTAINER.search(bare_words(c.text)):
                    made = self.attempts[before:]

    def _later_verdict(self, c: Node, made: list[_Attempt]) -> None:
        """ "### Fixes Applied" (no word on how each went) then "### Results Summary" / "### Progress
        Assessment": the results section is their verdict -- both improvements and what remains is partial."""
        text = "\n".join(self.lines[i] for i in c.lines() if i >= c.head_end)
        gained = re.search(r"\b(?:improvements?|improved|better|progress)\b", text, re.I)
        left = re.search(r"\b(?:remaining (?:issues|problems)|still (?:fails?|broken|wrong|open)|not (?:yet )?(?:fixed|resolved))\b",
                         text, re.I)
        verdict = "partial" if gained and left else outcomes.classify(re.sub(r"^\s*\|.*$", " ", text, flags=re.M))
        if verdict == "inconclusive":
            return
        for a in made:
            said = " ".join(a.fields.get("result", []))
            if not a.tag and not a.context and not a.explicit and (not said or outcomes.classify(said) == "inconclusive"):
                a.context = verdict  # "- Switched the accumulator to fp32": what it changed, no word on how it went

    def free_own(self, n: Node) -> None:
        """A section outside every bug (preamble, protocol, template): its heading and own text."""
        own = [i for blk in n.blocks for i in range(blk.start, blk.end)]
        self.owned.extend(range(n.start, n.head_end))
        self.owned.extend(own)
        self._add_section(n.start, "## " + n.text, span_lines(self.lines, own), [n.start] + own)

    def _scan_blocks(self, n: Node, blocks: list[Block], ctx: str | None, prose: bool = False,
                     story: bool = False) -> list[int]:
        """Read attempts out of plain blocks; return the lines that stay text.

        ``prose``: also a paragraph or list item that says it did something and what happened
        ("Also tried `--cuda-graph-max-bs 32`: still crashes") -- used for logs, timelines and
        issue-thread comments, where attempts are written as sentences.
        """
        keep: list[int] = []
        knobs_before = len(self.attempts)
        captioned = self._caption_lists(blocks)
        paired = self._labeled_pairs(blocks)
        entries = self._entries(blocks)
        taken_by_pair: set[int] = set()
        for blk in blocks:
            self.owned.extend(range(blk.start, blk.end))
            if blk.start in taken_by_pair:
                continue
            if blk.start in entries:
                taken_by_pair.update(b.start for b in entries[blk.start])
                self._entry(n, entries[blk.start])
                continue
            if blk.start in paired:
                group = paired[blk.start]
                taken_by_pair.update(b.start for b in group)
                idxs = [i for b in group for i in range(b.start, b.end)]
                self.owned.extend(idxs)
                self._attempt_from_item(self.lines[idxs[0]].strip(), idxs, ctx, n.text or "Notes")
                continue
            if blk.kind == "hr":
                continue  # a separator, not content
            if blk.start in captioned:
                first = len(self.attempts)
                self.attempts_from_list(n, blk, captioned[blk.start])
                self._shared_result(blocks, blk, self.attempts[first:])
                continue
            if blk.kind in ("paragraph", "raw") and self._inline_attempt(blk, blk.start, ctx):
                continue
            wm = _WHAT_WORKED_PARA.match(self.lines[blk.start]) if blk.kind == "paragraph" else None
            if wm and wm.group("rest").strip():
                # "**What did work**: pointing the encoder at a separate process fixed it": one attempt, the
                # label's verdict
                verdict = "failed" if re.search(r"n[o']t|never", wm.group("what"), re.I) else "worked"
                self._attempt_from_item(wm.group("rest").strip(), list(range(blk.start, blk.end)), verdict,
                                        n.text or "Notes")
                continue
            if blk.kind in ("paragraph", "raw", "list"):
                taken = self._todo_lines(blk)
                if taken:
                    rest = [i for i in range(blk.start, blk.end) if i not in taken]
                    if blk.kind == "list" and self._tried_items(n, blk, ctx, keep_rest=keep, actions=prose,
                                                               skip=taken):
                        continue
                    keep.extend(rest)
                    continue
            if blk.kind == "list" and self._tried_items(n, blk, ctx, keep_rest=keep, actions=prose):
                continue
            if prose and blk.kind == "paragraph" and self._prose_attempt(n, blk, ctx):
                continue
            if not prose:
                self._knob_attempt(n, blk)
            if blk.kind == "table" and self._attempt_table(n, blk, ctx):
                keep.extend(range(blk.start, blk.end))  # the table stays as written; rows became attempts
                continue
            keep.extend(range(blk.start, blk.end))
        if story and (not prose or self.r.thread):
            # a thread's comments are stories too ("I tried X, still hangs"), told post by post
            self._story_attempts(n, blocks, set(keep), knobs_before)
        return keep

    def _story_attempts(self, n: Node, blocks: list[Block], kept: set[int], since: int) -> None:
        """Attempts told as sentences in the paragraphs and list items that stayed text ("I first tried
        X. This made no difference. I then ..."); see ``narrative``. The text stays as written. A
        knob sentence read just before ("Forcing X=1 did not help") gives way to the story's reading."""
        units: list[narrative.Unit] = []
        entry = narrative.LOG_ENTRY.match(n.text or "") if n.start >= 0 else None
        if entry and sum(bool(narrative.LOG_ENTRY.match(c.text)) for c in (n.parent.children if n.parent else [])) >= 2:
            # "## UPDATE 22:06: BLACKLISTED node -0 (...)": in a log of timed entries the heading says what was done
            lead = "fix" if re.search(r"(?i)\bfix\b", entry.group("kind")) else "entry"
            units.append(narrative.Unit(entry.group("rest"), [n.start], lead=lead))
        posts: list[list[narrative.Unit]] = []  # a thread's posts: one author's story ends where the next post starts
        for blk in blocks:
            if _author(self.lines[blk.start]) is not None:
                posts.append(units)
                units = []
                continue
            if not all(i in kept for i in range(blk.start, blk.end)):
                units.append(narrative.Unit(None, []))
            elif blk.kind == "quote" and self.r.nested:
                buf: list[int] = []
                for i in list(range(blk.start, blk.end)) + [-1]:
                    t = re.sub(r"^\s*(?:>\s?)+", "", self.lines[i]).strip() if i >= 0 else ""
                    if (not t or re.match(r"#{1,6}\s+\S", t)) and buf:
                        units.append(narrative.Unit(" ".join(re.sub(r"^\s*(?:>\s?)+", "", self.lines[j]).strip()
                                                             for j in buf), buf))
                        buf = []
                    if re.match(r"#{1,6}\s+\S", t):
                        posts.append(units)  # "> > ## alice": a reply starts
                        units = []
                    elif t:
                        buf.append(i)
            elif blk.kind in ("paragraph", "raw") and not self.lines[blk.start].lstrip().startswith(">"):
                units.append(narrative.Unit(" ".join(self.lines[i].strip() for i in range(blk.start, blk.end)),
                                            list(range(blk.start, blk.end))))
            elif blk.kind == "list":
                for item in blk.items:
                    first, idxs = self._item_text(blk, item)
                    if idxs:
                        text = " ".join([first.strip()] + [self.lines[i].strip() for i in idxs[1:]])
                        units.append(narrative.Unit(text, idxs))
            elif blk.kind in ("fence", "code"):
                units.append(narrative.Unit(None, list(range(blk.start, blk.end)),
                                            code="\n".join(self.lines[blk.start:blk.end])))
            else:
                units.append(narrative.Unit(None, []))  # a table, a quote: between, not the story
        stories = [st for us in posts + [units] for st in narrative.read(us)]
        if not stories:
            return
        told = {i for st in stories for i in st.lines}
        self.attempts[since:] = [a for a in self.attempts[since:] if not (a.summary and a.line in told
                                                                          and a.fields.get("did") == a.fields.get("result"))]
        for st in stories:
            if st.kind == "noun" and narrative.NOT_FOR_ME.match(st.title):
                self._quoted_try(st, blocks)
            if st.lines[0] == n.start and st.verdict in ("worked", "inconclusive"):
                later = "\n".join(self.lines[max(st.lines) + 1:])
                if narrative.refuted(st.did, later):
                    st.verdict = "failed"  # a later entry rules it out: "NOT dirty-handoff"
            fields = {"did": [st.did]}
            if st.result:
                fields["result"] = [st.result]
            self.attempts.append(_Attempt(line=st.lines[0], number=None, title=item_title(st.title), fields=fields,
                                          lead=[], context=None if st.verdict == "inconclusive" else st.verdict,
                                          summary=True, lines=st.lines,
                                          unit=n.text or "Notes"))
            self.units.append(_Unit(n.text or "Notes", st.lines, "prose"))

    def _quoted_try(self, st: narrative.Story, blocks: list[Block]) -> None:
        """ "> ... when I downgraded pytorch to 2.0.1, the error disappeared." then "It doesn't work for me.":
        the reply judges the change quoted right above it; that change names the attempt."""
        before = [b for b in blocks if b.end <= st.lines[0]]
        if not before or not (before[-1].kind == "quote" or self.lines[before[-1].start].lstrip().startswith(">")) \
                or any(self.lines[i].strip() for i in range(before[-1].end, st.lines[0])):
            return
        quote = " ".join(re.sub(r"^\s*(?:>\s?)+", "", self.lines[i]).strip() for i in range(before[-1].start, before[-1].end))
        what = next((x for x in narrative.sentences(quote) if narrative.CHANGE_VERB.search(x)), None)
        if what:
            m = narrative.CHANGE_VERB.search(what)
            subj = list(re.finditer(r"\b(?:I|[Ww]e)\b", what[max(0, m.start() - 20):m.start()]))
            a = max(0, m.start() - 20) + subj[-1].start() if subj else m.start()
            end = re.search(r"[,.;:]\s|[,.;:]?$", what[m.end():])
            st.did = f"> {what}\n\n{st.did}"
            st.title = f"{what[a:m.end() + end.start()].strip()} (quoted) - {st.title}"

    _ENTRY_LABELS = ("problem", "issue", "symptom", "solution", "fix", "status", "reason", "cause", "root cause",
                     "result", "workaround", "error")

    def _entries(self, blocks: list[Block]) -> dict[int, list[Block]]:
        """ "1. Can't see cuda ✅" then "- **Problem:** ... / - **Solution:** ... / - **Status:** solved": one
        entry of an issue log (a numbered title, then its labeled items). Returns {title start: [title, list]}."""
        out: dict[int, list[Block]] = {}
        for k in range(len(blocks) - 1):
            t, lst = blocks[k], blocks[k + 1]
            if t.kind != "list" or len(t.items) != 1 or lst.kind != "list" or lst.start - t.end > 1:
                continue
            # "- **Problem:**" / a fence with the error / "- **Solution:** ...": the labeled items may be
            # split by a code block; they run on to the next numbered title.
            group = [t, lst]
            j = k + 2
            while j < len(blocks) and blocks[j].kind in ("fence", "code", "list") and not (
                    blocks[j].kind == "list" and re.match(r"^\s*\d{1,3}[.)]\s", self.lines[blocks[j].start])):
                group.append(blocks[j])
                j += 1
            a, b = t.items[0]
            body = [i for i in range(a, min(b, t.end)) if self.lines[i].strip()]
            head = self.lines[a]
            if len(body) != 1 or not re.match(r"^\s*\d{1,3}[.)]\s+\S", head) or label_of(head, ATTEMPT_LABELS) \
                    or label_of(head, INV_LABELS) or len(head.split()) > 16:
                continue
            named = [_label_name(self.lines[x]) for b in group if b.kind == "list" for x, _y in b.items]
            if sum(nm in self._ENTRY_LABELS for nm in named) >= 2 and any(nm in ("solution", "fix", "workaround", "result",
                                                                                 "status") for nm in named):
                out[t.start] = group
        return out

    def _entry(self, n: Node, group: list[Block]) -> None:
        """One issue-log entry: the solution is what was done, the status says how it went; a solution that
        is still a plan ("Need to investigate ...") is a next step."""
        idxs = [i for b in group for i in range(b.start, b.end) if self.lines[i].strip()]
        self.owned.extend(i for b in group for i in range(b.start, b.end))
        first = re.sub(r"^\s*\d{1,3}[.)]\s+", "", self.lines[idxs[0]])
        self._attempt_from_item(first, idxs, None, n.text or "Notes")
        a = self.attempts[-1]
        a.title = item_title(first)  # the entry's own name, not its solution
        did = field_value(a.fields.get("did", []))
        if did and re.match(r"^\W*(?:need(?:s)? to|todo|to do|should|will|plan to|to investigate|tbd)\b", did, re.I):
            self.attempts.pop()
            st = make_step(did, [], 0)
            if st:
                self.steps.append((idxs[0], st))
            self.sections.append((idxs[0], "## " + (n.text or "Notes"), span_lines(self.lines, idxs)))

    _DID_NAMES = ("experiment", "test", "tried", "change", "changes", "fix", "attempted fix", "action",
                  "what we did", "what i did", "what we tried", "what i tried", "approach", "patch")

    def _labeled_pairs(self, blocks: list[Block]) -> dict[int, list[Block]]:
        """ "**Experiment:** patched X ..." then "**Result:** ..." (with its list) in plain text: one
        attempt made of those blocks. Returns {first block start: the blocks}."""
        out: dict[int, list[Block]] = {}
        k = 0
        while k < len(blocks):
            b = blocks[k]
            first = self.lines[b.start] if b.kind == "paragraph" else ""
            if (_label_name(first) in self._DID_NAMES and label_of(first, ATTEMPT_LABELS)) \
                    or (first and (TRIED_ITEM.match(first) or re.match(r"^\s*(?:ran|re-?ran|tried|tested|measured)\b", first, re.I))):
                for j in range(k + 1, min(k + 4, len(blocks))):
                    c = blocks[j]
                    if c.kind == "hr" or (c.kind == "paragraph" and _label_name(self.lines[c.start]) in self._DID_NAMES):
                        break
                    hit = label_of(self.lines[c.start], ATTEMPT_LABELS) if c.kind in ("paragraph", "list") else None
                    if not hit and c.kind == "paragraph" and re.match(r"^\W{0,3}(?:\*\*|__)\s*(?:result|outcome)s?\s*:",
                                                                     self.lines[c.start], re.I):
                        hit = ("result", "")  # "**Result: 3000 frames received, zero drops.**" -- all in bold
                    if hit and hit[0] in ("result", "outcome"):
                        end = j + 1 if not (j + 1 < len(blocks) and blocks[j + 1].kind == "list"
                                            and blocks[j + 1].start - c.end <= 1) else j + 2
                        out[b.start] = blocks[k:end]
                        k = end - 1
                        break
            k += 1
        return out

    def _done_with_result(self, m, idxs: list[int], strict: bool = False) -> bool:
        """A checked to-do that says what came of it ("[x] Step 3: run X - ✅ Complete", "[x] Tried Y —
        restarts returned", "[x] CAUSE FOUND ..."): an attempt; other checked items are done steps.
        ``strict`` (in a next-steps list): only "Tried ..." or a shouted verdict; "[x] **Application
        replay** — done in Attempt 2" stays a done step."""
        body = m.group(2)
        if m.group(1) not in "xX":
            return False
        whole = " ".join(self.lines[i].strip() for i in idxs)
        return bool((not strict and (lead_tag(body) or re.search(r"\s[—–-]\s|→", body))) or (
            (TRIED_ITEM.match(body) or re.match(r"^\W*[A-Z]{3,}(?: [A-Z]{2,}){0,3}\b", body))
            and outcomes.classify(whole) != "inconclusive"))

    def _shared_result(self, blocks: list[Block], lst: Block, atts: list[_Attempt]) -> None:
        """ "**Optimizations applied**:" / "- ✅ Gradient checkpointing" / ... then "**Result**: Still OOM":
        the result under the list is every item's (the ticks say applied, not worked)."""
        i = lst.end
        while i < len(self.lines) and i <= lst.end + 1 and not self.lines[i].strip():
            i += 1
        if i >= len(self.lines):
            return
        hit = label_of(self.lines[i], ATTEMPT_LABELS)
        after_all = _AFTER_ALL.match(self.lines[i])
        if after_all:
            # "After all of these, I'm still encountering these crashes": the verdict on every item above
            para = []
            while i < len(self.lines) and self.lines[i].strip():
                para.append(self.lines[i].strip())
                i += 1
            said = " ".join(para)[after_all.end():]
            hit = ("result", re.split(r"[.;!?]|\s(?:so|but|and|which)\s", said, maxsplit=1)[0])  # its first clause
        if not hit or hit[0] not in ("result", "outcome") or not hit[1].strip():
            return
        verdict = outcomes.classify(hit[1])
        if verdict == "inconclusive":
            return
        for a in atts:
            words = re.sub(r"[✅✔️☑]", " ", " ".join(a.lead + sum(a.fields.values(), [])))
            if a.tag in (None, "worked") and not a.explicit and outcomes.classify(words) == "inconclusive":
                a.tag, a.context = None, verdict

    def _caption_lists(self, blocks: list[Block]) -> dict[int, str | None]:
        """ "**Attempted fixes**:" / "**Investigation Steps**:" right above a list: the items are
        attempts. Returns {list start line: the caption's verdict context}."""
        out: dict[int, str | None] = {}
        for k in range(1, len(blocks)):
            cap, lst = blocks[k - 1], blocks[k]
            if lst.kind != "list" or cap.kind != "paragraph" or cap.end - cap.start != 1 or lst.start - cap.end > 1:
                continue
            m = re.match(r"^\W{0,3}\s*(?:\*\*|__)([^*_]{3,60})(?:\*\*|__)\s*:?\s*$", self.lines[cap.start]) or \
                re.match(r"^\W{0,3}\s*(?:\*\*|__)([^*_]{3,60}?):?(?:\*\*|__)\s*:?\s*$", self.lines[cap.start])
            if not m and _PLAIN_TRIED_CAPTION.search(self.lines[cap.start]):
                # "Thank you, I did following tests:" / "Things I've tried so far:" over a list: each item a try
                out[lst.start] = "failed" if FAILED_CONTAINER.search(self.lines[cap.start]) else None
                continue
            if not m:
                continue
            words = bare_words(m.group(1))
            if re.search(r"\b(?:learn\w*|lessons?|takeaways?|insights?)\b", words):
                continue  # "**Key Learnings from the Debugging Process**": looking back, not steps
            if ATTEMPT_LABELS.get(words) in ("conclusion", "result", "outcome", "hypothesis"):
                continue  # "**Why it failed:**" over its reasons: the attempt's conclusion, not more attempts
            if (STRONG_CONTAINER.search(words) or RESULT_CONTAINER.search(m.group(1))) and not NEXT_HEAD.search(words):
                out[lst.start] = "failed" if FAILED_CONTAINER.search(m.group(1)) else None
        return out

    def _todo_lines(self, blk: Block) -> set[int]:
        """Lines of plain text that are to-dos: "- [ ] check the cable", "**Next:** a → b", "Still to do: x".

        They become next steps (the words are kept there); returns the lines taken."""
        taken: set[int] = set()
        if blk.kind == "list":
            boxes = [CHECKBOX.match(self.lines[a]) for a, _b in blk.items]
            # "- [x] Root cause identified" / "- [x] GPU stopped" / ...: a closing checklist, every box ticked, is
            # a record of what was done, not steps to take (a to-do list has boxes still open)
            closed = len(boxes) >= 2 and all(b and b.group(1) in "xX" for b in boxes)
            for item in blk.items:
                first, idxs = self._item_text(blk, item)
                m = CHECKBOX.match(self.lines[item[0]]) if idxs else None
                if m and not TEMPLATE_CHECK.match(m.group(2)):
                    body = m.group(2)
                    if self._done_with_result(m, idxs):
                        # "[x] Step 3: run with X - ✅ Complete (fault now in nll_loss)": done, with a result.
                        self._attempt_from_item(body, idxs, None, "")
                    elif closed:
                        continue
                    else:
                        self._step_from_item(idxs)
                    taken.update(idxs)
                elif idxs and len(idxs) > 1 and _TODO_CAPTION.match(first.strip()) \
                        and all(re.match(r"^\s+(?:[-*+]|\d{1,3}[.)])\s+\S", self.lines[i]) or not self.lines[i].strip()
                                for i in idxs[1:]):
                    # "- Something to try" / "    - Parallelize the data loading" / "- FIXME" + its sub-items: each
                    # sub-item is a step still to take
                    for i in idxs[1:]:
                        st = make_step(re.sub(r"^\s+(?:[-*+]|\d{1,3}[.)])\s+", "", self.lines[i]), [], 0) \
                            if self.lines[i].strip() else None
                        if st:
                            self.steps.append((i, st))
                    taken.update(idxs)
                elif idxs and (hit := label_of(first, NEXT_LABELS)) and hit[1] and hit[0] == "next" \
                        and _label_name(first) in ("todo", "to do", "to-do", "next", "next step", "next steps", "follow-up"):
                    # "- **TODO:** set a hard budget cap": a to-do written as an item of a note
                    st = make_step(hit[1], [self.lines[i].strip() for i in idxs[1:]], 0)
                    if st:
                        self.steps.append((idxs[0], st))
                        taken.update(idxs)
            return taken
        for i in range(blk.start, blk.end):
            hit = label_of(self.lines[i], NEXT_LABELS)
            if hit and hit[1]:
                parts = [p.strip() for p in re.split(r"\s+(?:→|->)\s+", hit[1]) if p.strip()]
                for p in parts if len(parts) > 1 else [hit[1]]:
                    st = make_step(p, [], 0)
                    if st:
                        self.steps.append((i, st))
                taken.add(i)
        return taken

    def _attempt_table(self, n: Node, blk: Block, ctx: str | None) -> bool:
        """A table whose columns say what was done and what happened: its rows are attempts."""
        if len(blk.items) < 2:
            return False
        head = " | ".join(bare_words(h) for h in split_row(self.lines[blk.items[0][0]]))
        if re.search(r"\b(?:working|broken|works|fails|good|bad|expected|actual|owner|assignee|due)\b", head):
            return False
        if not re.search(r"\b(?:result|outcome|effect|observ\w*|status|verdict|worked|helped|fixed|pass(?:es|ed)?)\b", head):
            return False  # "Layer | refusal | ... | passes (Δ ≥ 0.30)": a pass/fail column is a verdict column too
        if not re.search(r"\b(?:change|approach|attempt|fix|tried|experiment|config\w*|action|idea|hypothes\w*|"
                         r"test|try|setting|variant|what|suspect|mode|flag|option)\b", head) \
                and not self._verdict_rows(blk, head):
            return False
        before = len(self.units)
        self.attempts_from_table(n, blk, ctx)
        del self.units[before:]
        return True

    def _verdict_rows(self, blk: Block, head: str) -> bool:
        """"load mode | other | result" with "crash ~2/3 runs" / "pass 3/3" in the result column: a
        table of runs, whatever its first columns are called. Most result cells must state a verdict
        (a benchmark table's numbers do not)."""
        cols = head.split(" | ")
        k = next((i for i, h in enumerate(cols) if re.search(r"\b(?:result|outcome|verdict|pass(?:es|ed)?\b)", h)), None)
        if k is None or k == 0:
            return False
        cells = [split_row(self.lines[a]) for a, _b in blk.items[1:]]
        said = [outcomes.classify(c[k]) != "inconclusive" for c in cells if len(c) > k and c[k].strip()]
        return len(said) >= 2 and sum(said) * 3 >= len(said) * 2

    def _prose_attempt(self, n: Node, blk: Block, ctx: str | None) -> bool:
        text = " ".join(self.lines[i].strip() for i in range(blk.start, blk.end))
        lead = next((x for x in SENTENCES.split(text) if ACTION_LEAD.match(x) or PROSE_LEAD.match(x)), None)
        # "Updated the CUDA driver to the latest in hope of avoiding the kernel panics": a change made for a
        # hoped-for effect that the note never reports -- an attempt, not yet tested.
        hoped = lead is not None and bool(_HOPED.search(lead)) and outcomes.classify(text) == "inconclusive"
        if lead is None or (outcomes.classify(text) == "inconclusive" and not hoped) or text.rstrip().endswith("?"):
            return False
        idxs = list(range(blk.start, blk.end))
        a = _Attempt(line=blk.start, number=None, title=item_title(lead), fields={}, summary=True,
                     lead=[self.lines[i] for i in idxs],
                     context="untested" if hoped else ctx, lines=idxs, unit=n.text or "Notes")
        self.attempts.append(a)
        self.units.append(_Unit(n.text or "Notes", idxs, "prose"))
        return False  # the paragraph also stays where it was written: it is the thread's record

    def _knob_attempt(self, n: Node, blk: Block) -> None:
        """ "Forcing NCCL_P2P_DISABLE=1 did not help to resolve the issue." in an issue's text: a setting
        named and what it did is an attempt, wherever it is written. The paragraph stays as written."""
        if blk.kind not in ("paragraph", "heading") or self.r.thread:
            return
        text = " ".join(self.lines[i].strip() for i in range(blk.start, blk.end))
        for sent in SENTENCES.split(text):
            if (narrative.KNOB.search(sent) or _ACTION_SUBJECT.match(sent)) and _HELP_VERDICT.search(sent) \
                    and not sent.rstrip().endswith("?"):
                idxs = list(range(blk.start, blk.end))
                self.attempts.append(_Attempt(line=blk.start, number=None, title=item_title(sent), fields={
                    "did": [sent], "result": [sent]}, lead=[], summary=True, lines=idxs, unit=n.text or "Notes"))
                self.units.append(_Unit(n.text or "Notes", idxs, "prose"))

    def _structured(self, n: Node) -> bool:
        r = self.r
        for d in n.walk():
            if r._template(d):
                continue
            bare = bare_words(d.text)
            if r._is_attempt_heading(d) or field_of(d.text) or NEXT_HEAD.search(bare) \
                    or (NUMBERED_HEAD.match(d.text) and r._has_attempt_evidence(d)) \
                    or STRONG_CONTAINER.search(bare) or (DIFF_HEAD.search(bare) and self._has_table(d)) \
                    or (RESULT_CONTAINER.search(outcomes.plain_text(d.text))
                        and FAILED_CONTAINER.search(outcomes.plain_text(d.text))) \
                    or (PLAN_HEAD.match(bare) and not d.children and any(b.kind == "list" for b in d.blocks)) \
                    or (DATE_HEAD.match(d.text) and self._one_run_entry(d)):
                # "Flags que NO funcionan" inside a Q&A section; a "What worked" list in a takeaways
                # section stays a summary.
                return True
            for b in d.blocks:
                if b.kind == "list" and any(TRIED_ITEM.match(self._item_text(b, it)[0]) for it in b.items):
                    return True
                if b.kind == "paragraph" and bold_attempt(self.lines[b.start]):
                    return True
            if self._labeled_pairs(d.blocks) or self._entries(d.blocks):
                return True  # a comment with "**Experiment:** ..." / "**Result:** ..."; "**Solution**: / **Result**:"
        return False

    def field_section(self, n: Node, key: str) -> None:
        self.owned.extend(range(n.start, n.head_end))
        # A field's text ends at a thematic break: what follows (the comments of an exported
        # issue, a new topic) is not the environment or the root cause.
        cut = next((k for k, b in enumerate(n.blocks) if b.kind == "hr"), len(n.blocks))
        after = n.blocks[cut:]
        if after:
            keep = self._scan_blocks(n, after, None, prose=True)
            if keep:
                first = next((i for i in keep if self.lines[i].strip() and not re.fullmatch(r"[-*_ ]+", self.lines[i])),
                             keep[0])
                name = "Comments" if COMMENT.match(self.lines[first]) else f"{n.text} (continued)"
                self._add_section(after[0].start, "## " + name, span_lines(self.lines, keep), keep)
        own = [i for b in n.blocks[:cut] for i in range(b.start, b.end)]
        self.owned.extend(own)
        if any(label_of(self.lines[i], INV_LABELS) for i in own):
            # "## Problem Summary" holding "**Symptom:** ..." and "**GPU:** ...": read it as a header.
            self.header(_Own(n, n.blocks[:cut]), notes_heading="## " + n.text)
            self.renamed.append((n.start, n.text, "the fields above"))
            for c in n.children:
                self.section(c, context=None)
            return
        if own:
            if key == "status":
                txt = field_value(span_lines(self.lines, own))
                st = status_word(txt)
                if st:
                    self.inv.status = st
                    self.status_stated = True
                if st is None or len(txt.split()) > 3:
                    self._add_section(n.start, "## " + n.text, span_lines(self.lines, own), [n.start] + own)
                    for c in n.children:  # "### Current Status" > "#### Attempts Made": read, not dropped
                        self.section(c, context=None)
                    return
            else:
                buf = span_lines(self.lines, own)
                self._set_field(key, buf, own)
                if key == "symptom":
                    for b in n.blocks[:cut]:
                        self._knob_attempt(n, b)  # "Restarting didn't help. A fresh image didn't help either."
                if key == "root_cause" and not self.status_stated and re.match(
                        r"^\W*(?:resolved|fixed|solved|closed)\b", field_value(buf), re.I):
                    self.inv.status = "resolved"  # "## Resolution — **Resolved**. The issue was fixed by ..."
        self.renamed.append((n.start, n.text, key.replace("_", " ")))
        # "## Solution" > "### Fix 1 — Dynamic version number": the fixes that solved it.
        solved = key == "root_cause" and re.match(r"^(?:the )?(?:final |actual )?(?:solutions?|fix(?:es)?|resolution|"
                                                  r"what fixed it|fix applied)$", bare_words(n.text)) \
            and not re.search(r"\b(?:proposed|planned|untested|options?|todo|candidates?)\b", n.text, re.I)
        for c in n.children:
            if solved and self.r._is_attempt_heading(c):
                self.attempt_from_node(c, container="worked")
            else:
                self.section(c, context=None)

    # --- attempts ---------------------------------------------------------------------------

    def _run_summary(self, n: Node) -> str | None:
        """The verdict a run's printed output ends on: its last line that says one ("✅ ALL PASSED", "3 failed")."""
        for b in reversed([b for b in n.blocks if b.kind in ("fence", "code")]):
            for i in reversed(range(b.start, b.end)):
                line = self.lines[i].strip()
                if line.startswith(("```", "~~~", "#", "//")) or not line or " = " in line:
                    continue  # a fence line, or the code run rather than what it printed
                said = outcomes.classify(line)
                if said in ("worked", "failed"):
                    return said
        return None

    def _plan_step(self, n: Node) -> bool:
        """ "### Step 2: Verify Symbol Export" whose text says what to expect ("**Expected**: ...", "**Actual**:
        Likely shows no symbols") and reports nothing -- no result label, no verdict tag or mark: a step of a
        plan written before it was run. ("### Step 2: Checked the symbols" + "Result: ..." is a step taken.)"""
        m = ATTEMPT_HEAD.match(n.text)
        if not m or m.group("kw").lower() != "step" or n.children or heading_outcome(n.text):
            return False
        rest = m.group("rest") or ""
        if not rest.strip() or re.match(r"\W*\w+(?:ed|ing)\b", rest, re.I):
            return False
        for b in n.blocks:
            if b.kind in ("fence", "code"):
                continue
            for i in range(b.start, b.end):
                line = self.lines[i]
                hit = label_of(line, ATTEMPT_LABELS)
                if (hit and hit[0] in ("result", "outcome", "conclusion")) or re.search(r"[✅❌✔✗]", line):
                    return False
                if (hit and hit[0] == "expected") or _HEDGED.search(line):
                    continue  # what should happen, or a guess at it
                if _DONE_REPORT.search(re.sub(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+", "", line)):
                    return False  # "Ran nvidia-smi; driver 550 is loaded": the step was taken
        return True

    def _considered_only(self, n: Node, container: str | None) -> bool:
        """"### Hypothesis 2 (Low Confidence)" with its **Cause** and **Evidence** and nothing run to
        test it: what was thought, not a try (the independent labels of real postmortems agree; the
        hypothesis stays in the log as written, where `tried` finds it as mentioned)."""
        m = ATTEMPT_HEAD.match(n.text)
        if not (m and re.match(r"(?i)hypothes|theory|h$", m.group("kw"))) or container in ("failed", "worked") \
                or heading_outcome(n.text) or n.children:
            return False
        body = [i for i in n.lines() if i >= n.head_end]
        a = self._attempt_body(body, {})
        if "result" not in a.fields or set(a.fields) - {"result", "hypothesis"}:
            return False  # (what was done, a conclusion, an outcome: an attempt)
        said = {_label_name(self.lines[i]) for i in body}
        return not said & {"result", "results", "test", "tested", "outcome", "observed", "observation", "finding",
                           "findings", "what happened", "verdict", "status", "experiment", "action", "check"}

    def attempt_from_node(self, n: Node, container: str | None) -> None:
        if self._considered_only(n, container):
            self.free(n, whole=True)
            return
        if self._plan_step(n):
            self.owned.extend(range(n.start, n.head_end))
            st = make_step(ATTEMPT_HEAD.match(n.text).group("rest"), [], 0)
            if st:
                self.steps.append((n.start, st))
            body = [i for b in n.blocks for i in range(b.start, b.end)]
            self.owned.extend(body)
            self._add_section(n.start, "### " + n.text, span_lines(self.lines, body), [n.start] + body)
            return
        subs = [c for c in n.children if NUMBERED_HEAD.match(c.text) or ATTEMPT_HEAD.match(c.text)]
        inline = [b for b in n.blocks if b.kind in ("paragraph", "raw") and bold_attempt(self.lines[b.start])
                  and STRONG_RE.match(bold_attempt(self.lines[b.start])[2].group("kw"))]
        if len(inline) >= 2 and not n.children:
            # "### Issue 2: OOM" with "**Fix Attempt 1**: ... **Result**: Still OOM" and "**Fix Attempt 2**: ...
            # **Result**: ✅ SUCCESS": the labelled attempts are the attempts, the heading names the problem.
            self.container(n, strong=True)
            return
        if len(subs) >= 2:
            # "Phase 3: try fixes" with "3a. ..." / "3b. ...": the sub-headings are the attempts.
            self.container(n, strong=True)
            return
        fielded = any(ATTEMPT_LABELS.get(heading_key(c.text)) in ("result", "outcome", "conclusion", "hypothesis")
                      for c in n.children)  # "#### What I did" next to "#### Result": the attempt's own fields
        if not fielded and any((STRONG_CONTAINER.search(bare_words(c.text)) or RESULT_CONTAINER.search(c.text))
                               and not (c.parent is not n and heading_key(c.text) in ATTEMPT_LABELS)
                               and not (label_of(c.text, ATTEMPT_LABELS) or ("", ""))[1]  # "**What we tried:** X" above its list
                               for c in n.walk() if c is not n) \
                or any(self._caption_lists(d.blocks) for d in n.walk()):
            # "Phase 1: Interrupt Bypass" with "### What We Tried" under it, or "**Attempted fixes**:"
            # above a list: the attempts are in there; the phase is the frame.
            self.container(n, strong=False)
            return
        lines = n.lines()
        # "**Next Steps**:" with its list at the end of an attempt (a section of its own in the outline):
        # what is still to do, not what was done.
        for d in [d for d in n.walk() if d is not n and not d.children and NEXT_HEAD.search(bare_words(d.text))
                  and not STRONG_CONTAINER.search(bare_words(d.text)) and any(b.kind == "list" for b in d.blocks)]:
            self.next_steps(d)
            gone = set(d.lines())
            lines = [i for i in lines if i not in gone]
        for b in [b for d in n.walk() for b in d.blocks if b.kind == "paragraph"]:
            wm = _WHAT_WORKED_PARA.match(self.lines[b.start])
            if wm and wm.group("rest").strip() and b.start > n.start:
                # "**What did work**: ..." after the last attempt's result, under its heading: the fix, not part of it
                verdict = "failed" if re.search(r"n[o']t|never", wm.group("what"), re.I) else "worked"
                self._attempt_from_item(wm.group("rest").strip(), list(range(b.start, b.end)), verdict, n.text)
                lines = [i for i in lines if not b.start <= i < b.end]
        self.owned.extend(lines)
        number, title = None, n.text
        m = ATTEMPT_HEAD.match(n.text)
        proposal = bool(m and re.match(r"(?i)option|step|phase|idea|solution|candidate|variant|priority", m.group("kw")))
        if m:
            if m.group("n").isdigit():
                number = int(m.group("n"))
            title = attempt_title(n.text, m)
        else:
            nm = NUMBERED_HEAD.match(n.text)
            if nm:
                number, title = int(nm.group("n")), nm.group("rest")
                # "### 1. **Aggressive Logit Clamping**": the bold wraps the whole name
                title = re.sub(r"^(\W{0,3}\s*)(?:\*\*|__)([^*_]+)(?:\*\*|__)\s*$", r"\1\2", title)
        body_lines = [i for i in lines if i >= n.head_end]
        # Field sub-headings ("#### Result", "### The Hypothesis") act like labels.
        sub_labels = {}
        for d in n.walk():
            if d is not n and heading_key(d.text) in ATTEMPT_LABELS:
                sub_labels[d.start] = ATTEMPT_LABELS[heading_key(d.text)]
        a = self._attempt_body(body_lines, sub_labels)
        reasons_only = False
        if m and re.match(r"(?i)hypothes|theory|h$", m.group("kw")) and "result" in a.fields \
                and container not in ("failed", "worked") and not heading_outcome(n.text):
            said = {_label_name(self.lines[i]) for i in body_lines} | {heading_key(d.text) for d in n.walk()}
            if not said & {"result", "results", "test", "tested", "outcome", "observed", "observation", "finding",
                           "findings", "what happened", "verdict", "status", "experiment", "action", "check"}:
                # "**Evidence**: line 243 does not check the result": why it is believed, not a run.
                a.fields["hypothesis"] = a.fields.get("hypothesis", []) + a.fields.pop("result")
                reasons_only = True
        if m and re.fullmatch(rf"\W*(?:{STRONG_KW}|run|test)\s*#?\s*\w{{1,4}}\s*[\[(][^\])]*[\])]\W*", title, re.I):
            # "### Attempt 2 (successful)": the heading names no change; its first line says what it was.
            first = next((x for x in (a.lead + a.fields.get("did", [])) if x.strip() and not x.lstrip().startswith(("```", "|"))), "")
            if first:
                title = f"{title} — {item_title(ITEM_START.sub('', first, count=1)).rstrip('.')}"
        a.line, a.number, a.title = n.start, number, one_line(title)
        a.tag = heading_outcome(n.text)
        a.proposal = proposal
        if m and re.match(r"(?i)attempt|try|trial|experiment|run|versuch|intento|essai", m.group("kw")) \
                and any(b.kind == "table" for d in n.walk() for b in d.blocks):
            a.done = True  # "### Attempt 2" with a table of what it measured: it was run
        a.context = container if container in ("failed", "worked", "untested") else None
        if reasons_only:
            a.context = "untested"  # a hypothesis with its reasons, nothing run to test it
        a.lines = lines
        a.unit = n.text
        self.attempts.append(a)

    def _attempt_body(self, idxs: list[int], sub_labels: dict[int, str] | None = None) -> _Attempt:
        fields: dict[str, list[str]] = {}
        lead: list[str] = []
        key = None
        fence = None
        # "- Observation: it hangs in init / - Action: ... / - Result: works": an observation written
        # before the action is why it was tried, not what came of it.
        names = [_label_name(self.lines[i]) for i in idxs]
        seen_result = False
        for i in idxs:
            line = self.lines[i]
            fm = re.match(r"^\s*(`{3,}|~{3,})", line)
            if fence is None and sub_labels and i in sub_labels:
                key = sub_labels[i]
                fields.setdefault(key, [])
                if fields[key]:
                    fields[key].append("")
                continue
            hit = label_of(line, ATTEMPT_LABELS) if fence is None else None
            if hit is not None and hit[0] == "result":
                nm = _label_name(line)
                if nm in ("observation", "observations", "observed") and not seen_result and "did" not in fields \
                        and any(x in ("result", "results") for x in names[idxs.index(i) + 1:]):
                    hit = ("hypothesis", hit[1])
                else:
                    seen_result = True
            if fm:
                fence = None if fence and fm.group(1)[0] == fence[0] and len(fm.group(1)) >= len(fence) else (
                    fence or fm.group(1))
            if hit is not None:
                key = hit[0]
                if key in fields:
                    fields[key].append("")
                    fields[key].append(hit[1])
                else:
                    fields[key] = [hit[1]] if hit[1] else []
                continue
            if key is None:
                lead.append(line)
            else:
                fields[key].append(line)
        return _Attempt(line=idxs[0] if idxs else 0, number=None, title="", fields=fields, lead=lead)

    def _item_text(self, blk: Block, item: tuple[int, int]) -> tuple[str, list[int]]:
        a, b = item
        idxs = [i for i in range(a, min(b, blk.end)) if self.lines[i].strip()]
        first = re.sub(r"^\s*(?:[-*+]|\d{1,4}[.)])\s+", "", self.lines[a]) if idxs else ""
        return first, idxs

    def attempts_from_list(self, n: Node, blk: Block, ctx: str | None) -> None:
        for item in blk.items:
            first, idxs = self._item_text(blk, item)
            if not idxs:
                continue
            lead = re.match(r"^\s*(?:\*\*|__)([^*_]{2,80})(?:\*\*|__)", first)
            if lead and _STATUS_ITEM.match(lead.group(1)):
                # "4. **Current state** (IN PROGRESS): ..." between the steps: where things stand.
                self._add_section(idxs[0], "## " + (n.text or "Notes"), span_lines(self.lines, idxs), idxs)
                continue
            self._attempt_from_item(first, idxs, ctx, n.text)

    def _attempt_from_item(self, first: str, idxs: list[int], ctx: str | None, unit: str) -> None:
        # The item's lines, list marker and indentation removed, read like an attempt body.
        sub = {}
        dedented = []
        base = len(self.lines[idxs[0]]) - len(self.lines[idxs[0]].lstrip())
        for k, i in enumerate(idxs):
            line = self.lines[i]
            if k == 0:
                line = first
            else:
                line = line[base + 2:] if line[:base + 2].strip() == "" else line.strip()
            dedented.append(line)
            sub[i] = line
        saved = self.lines
        try:
            self.lines = {**dict(enumerate(saved)), **sub}
            a = self._attempt_body(idxs)
        finally:
            self.lines = saved
        if not a.fields and len(a.lead) > 1 and ITEM_START.match(a.lead[1]):
            # "- Tried X" with "  - bucket 4 captures ✅ ..." under it: the nested items are the result.
            a.fields = {"result": a.lead[1:]}
            a.lead = a.lead[:1]
        lead_first = re.sub(r"^\[[ xX]\]\s*", "", first).strip()
        lab = label_of(lead_first, ATTEMPT_LABELS)
        named = next((field_value(a.fields[k]) for k in ("did", "hypothesis") if field_value(a.fields.get(k, []))), "")
        if lab and lab[1]:
            a.title = item_title(lab[1])
        elif named and re.match(r"^[\w -]{1,20}:\s", lead_first):
            a.title = item_title(named)  # "- timestamp: ...\n  checked: py-spy dump of rank 0"
        else:
            a.title = item_title(lead_first)
        a.tag = lead_tag(lead_first)
        a.context = ctx
        if re.match(r"^\[[xX]\]", first.strip()):
            a.done = True  # "- [x] Gradient checkpointing enabled" in a list of attempts: done, however it went
        if re.match(r"^\W{0,3}\s*~~", lead_first):
            a.summary = a.recap = True
        a.lines = idxs
        a.unit = unit
        a.line = idxs[0]
        a.number = None
        m = re.match(r"^\*\*(.+?)\*\*", lead_first)
        km = ATTEMPT_HEAD.match(m.group(1)) if m else None
        if km and km.group("n").isdigit():
            a.number = int(km.group("n"))
        # "- **Problem**: ... / - **Attempts**: Tried X (failed - module mismatch) / - **Solution**: Y": the
        # tried line is an attempt of its own, with its own verdict, before the solution that worked.
        tried = [(i, m.group("what")) for i in idxs[1:] if (m := _TRIED_LABEL.match(self.lines[i]))
                 and outcomes.classify(m.group("what")) in ("failed", "partial")]
        if tried and any(label_of(self.lines[i], ATTEMPT_LABELS) for i in idxs[1:] if i not in dict(tried)):
            for i, what in tried:
                self._attempt_from_item(what, [i], "failed" if outcomes.classify(what) == "failed" else None, unit)
        self.attempts.append(a)

    def attempts_from_table(self, n: Node, blk: Block, ctx: str | None) -> bool:
        rows = blk.items
        if len(rows) < 2:
            return False
        head = [c.strip() for c in split_row(self.lines[rows[0][0]])]
        if len(head) < 2:
            return False
        low = [bare_words(h) for h in head]

        def col(*words):
            for k, h in enumerate(low):
                if any(re.search(rf"\b{w}", h) for w in words):
                    return k
            return None

        c_title = col("suspect", "attempt", "approach", "fix", "change", "what", "tried", "experiment", "config",
                      "option", "idea", "hypothes", "theory", "action", "try", "test", "setting", "variant", "solution")
        c_title = 0 if c_title is None else c_title
        c_num = None
        body = [split_row(self.lines[a]) for a, _b in rows[1:]]
        if body and all(re.fullmatch(r"\s*#?\d{1,3}(?:\s*[-–]\s*\d{1,3})?\s*", (r + [""] * len(head))[c_title])
                        for r in body):
            # "| Attempt | Issue | Files | Result |" with 1, 2, 8-9 in the first column: the number
            # is the attempt's number; the next column with words says what it was.
            c_num = c_title
            c_title = next((k for k in range(len(head)) if k != c_num and not re.search(
                r"\b(?:result|outcome|status|verdict|files?|score|delta|date|time|duration|owner)\b", low[k])), c_title)
        # "Expected Result | Actual Result": what happened is the actual one.
        c_res = col("actual", "observed") if col("expected") is not None else None
        c_res = c_res if c_res is not None else col("result", "effect", "observ", "finding", "what happened", "output",
                                                    "outcome")
        if c_res is not None and re.search(r"\bexpect", low[c_res]):
            c_res = None
        c_stat = col("status", "verdict", "work", "fixed", "helped", "pass", "ok")
        if c_stat == c_title:
            c_stat = None
        c_note = col("note", "conclusion", "why", "comment", "reason", "learn")
        c_hyp = col("hypothes", "theory", "rationale") if c_title != col("hypothes", "theory") else None
        named = {c_res, c_stat, c_note, c_hyp, c_num}
        # Columns that say what was done besides the title ("load mode | other | result": the second
        # column tells two `--load-mode none` rows apart; "Suspect | Test | Verdict": the test).
        c_more = [k for k in range(len(head)) if k != c_title and k not in named
                  and not re.search(r"\b(?:files?|score|delta|date|time|duration|owner|notes?|why|comment|link|"
                                    r"commit|pr|evidence|source)\b", low[k])]
        titles = [(split_row(self.lines[a]) + [""] * len(head))[c_title].strip() for a, _b in rows[1:]]
        for (a, _b) in rows[1:]:
            cells = split_row(self.lines[a])
            if not any(c.strip() for c in cells):
                continue
            cells += [""] * (len(head) - len(cells))
            t = cells[c_title].strip()
            if not t or re.match(r"^\W*(?:total|sum|overall|average|mean)\b", t, re.I):
                continue  # "| **Total** | **2.5 hours** |": the table's sum, not a run
            more = [cells[k].strip() for k in c_more if cells[k].strip() and cells[k].strip() not in ("—", "-", "n/a")]
            did = " — ".join([t] + more)
            if more and titles.count(t) > 1:
                t = f"{t}, {more[0]}"  # the first column repeats: the next one is what changed
            fields: dict[str, list[str]] = {"did": [did]}
            if c_res is not None and c_res != c_title and cells[c_res].strip():
                fields["result"] = [cells[c_res].strip()]
            if c_note is not None and cells[c_note].strip():
                fields["conclusion"] = [cells[c_note].strip()]
            if c_hyp is not None and cells[c_hyp].strip():
                fields["hypothesis"] = [cells[c_hyp].strip()]
            explicit = cells[c_stat].strip() if c_stat is not None and c_stat != c_res else ""
            # A cell is a name as written ("ROCm 7.0 → 6.2.0 downgrade"): no cut at an arrow or a dash.
            cell = one_line(re.sub(r"\*\*|__", "", t))
            at = _Attempt(line=a, number=None, title=cell if len(cell) <= 90 else item_title(t), fields=fields, lead=[], explicit=explicit, summary=True, table=True,
                          tag=lead_tag(cells[c_res]) if c_res is not None else None, context=ctx,
                          lines=[a], unit=n.text)
            num = cells[c_num].strip() if c_num is not None else t
            if c_num is not None:
                fields["did"] = [f"{head[c_num]} {num}: {did}"]
            m = re.match(r"^\s*#?(\d{1,3})\b", num) or re.match(rf"^(?:{STRONG_KW})\s*#?(\d{{1,3}})\b", t, re.I)
            if m:
                at.number = int(m.group(1))
            self.attempts.append(at)
        # The table itself stays too (verification decides): rows split into fields change lines.
        self.units.append(_Unit(n.text, list(range(blk.start, blk.end)), "table"))
        return True

    def _tried_items(self, n: Node, blk: Block, ctx: str | None, keep_rest: list[int] | None = None,
                     actions: bool = False, skip: set[int] | None = None) -> bool:
        """A list anywhere whose items say "Tried ..." holds attempts; other items stay text.

        ``actions``: in a timeline or log, an item that did something ("**10:30** compared the
        checksums ...", "re-added the barrier") is an attempt too."""
        hits = []
        merged: set[int] = set()
        items = [self._item_text(blk, item) for item in blk.items]
        # "1. ❌ HIP cache corruption → fixed, but failures continued" / "4. ✅ **OOM killer** → journalctl showed
        # it": two or more items each a verdict mark, a thing and an arrow to what came of it -- a path of tries
        path = sum(bool(_MARK_ARROW.match(re.sub(r"^\[[ xX]\]\s*", "", f))) for f, i in items if i) >= 2
        marked: list[tuple[str, list[int]]] = []
        done_checks: list[list[int]] = []
        # "### Verification Results" + "1. **Symbols Exported**: ✅ all 9 visible": checks run, each with its mark
        checks = _RESULTS_OF_RUNS.match(bare_words(n.text or "")) and sum(
            bool(_CHECK_MARKED.match(f)) for f, i in items if i) >= 2
        for k, (first, idxs) in enumerate(items):
            if not idxs or (skip and idxs[0] in skip) or idxs[0] in merged:
                continue
            whole = " ".join(self.lines[i].strip() for i in idxs)
            if path and _MARK_ARROW.match(re.sub(r"^\[[ xX]\]\s*", "", first)):
                marked.append((first, idxs))
                continue
            if checks and (cm := _CHECK_MARKED.match(first)):
                self._attempt_from_item(first, idxs, ctx, n.text)
                self.attempts[-1].tag = "worked" if cm.group("mark") in ("✅", "✔", "✔️") else "failed"
                done_checks.append(idxs)
                continue
            keys = {h[0] for i in idxs if (h := label_of(self.lines[i], ATTEMPT_LABELS))}
            if keys & {"did", "hypothesis"} and keys & {"result", "conclusion", "outcome"}:
                hits.append((first, idxs))  # "- checked: X / found: Y": a recorded attempt
                continue
            bare_first = re.sub(r"^\[[ xX]\]\s*", "", first)
            tm = re.match(r"^\s*(?:\*\*|__)([^*_]{2,80})(?:\*\*|__)\s*\(([^()]{2,40})\)\s*:?", bare_first)
            if tm and ((outcomes.verdict_word(tm.group(2)) or outcomes.classify(tm.group(2))) in ("worked", "failed", "partial")
                       or re.search(r"(?i)\b(?:attempt\w*|tried|fix)\b", tm.group(2))) \
                    and not _STATUS_ITEM.match(tm.group(1)):
                hits.append((first, idxs))  # "3. **Bypass test** (SUCCESS): ..." / "**X** (ATTEMPTED FIX):"
                continue
            if actions and _ITEM_ACTION.match(bare_first) and outcomes.classify(whole) == "inconclusive":
                # A lab note's "- Disable batch norm layers." then "- Bypass the errors before." / "- A new error in
                # the loss": the change, then what it did, one item each
                after = []
                for f2, i2 in items[k + 1:k + 3]:
                    if not i2 or _ITEM_ACTION.match(f2) or outcomes.classify(f2) == "inconclusive" or re.match(
                            r"(?i)^\W*(?:analysis|guesses|notes?|details|observations?|context|background|reasons?|why)\b"
                            r"[^:]{0,40}:\s*$", f2):
                        break  # another change, or a caption ("- Analysis on this problem:"): its own
                    after.extend(i2)
                if after:
                    merged.update(after)
                    hits.append((first, idxs + after))
                    continue
            if TRIED_ITEM.match(first) or (actions and ctx == "failed" and _GERUND.match(bare_first)) \
                    or (actions and (ACTION_LEAD.match(bare_first) or (
                    PROSE_LEAD.match(bare_first) and outcomes.classify(whole) != "inconclusive"
                    and not _POINTER.match(bare_first)))
                                           and not whole.rstrip().endswith("?")):
                hits.append((first, idxs))
        if not hits and not marked and not done_checks:
            return False
        for first, idxs in hits:
            self._attempt_from_item(first, idxs, ctx, n.text)
        kept_marked = []
        for first, idxs in marked:
            # the mark is the verdict ("❌ X → fixed, but failures continued": X was not the cause) --
            # unless what follows the arrow says it was not tried (a plan, not an attempt), or a tick
            # only said "done" and the words say it failed ("✅ Reinstalled the driver → no change")
            mark = re.match(r"^\s*(?:\[[ xX]\]\s*)?(❌|✅|✔️?|✗|✘|⚠️?)\s*", first)
            said = re.split(r"\s(?:→|->|=>)\s", first, maxsplit=1)
            after = said[1] if len(said) == 2 else ""
            if after and re.match(r"(?i)\W*(?:not (?:yet )?(?:tried|tested|run|done|attempted)|untested|to do|todo|"
                                  r"pending|planned)\b", after):
                continue
            kept_marked.append((first, idxs))
            self._attempt_from_item(first[mark.end():], idxs, ctx, n.text)
            tag = {"✅": "worked", "✔": "worked", "✔️": "worked", "⚠": "partial", "⚠️": "partial"}.get(mark.group(1),
                                                                                                     "failed")
            if tag == "worked" and after and outcomes.classify(after) == "failed":
                tag = "failed"
            self.attempts[-1].tag = tag
        marked = kept_marked
        hits = hits + marked + [("", i) for i in done_checks]
        taken = set()  # every line some hit holds (one set: thousands of items stay linear)
        for _f, idxs in hits:
            taken.update(idxs)
        rest = [i for item in blk.items for i in self._item_text(blk, item)[1]
                if i not in taken and not (skip and i in skip) and i not in merged]
        if rest and keep_rest is not None:
            keep_rest.extend(rest)
        elif rest:
            self._add_section(rest[0], "## " + (n.text or "Notes"), span_lines(self.lines, rest), rest)
        return True

    def _inline_attempt(self, blk: Block, i: int, ctx: str | None = None) -> bool:
        """A paragraph that starts "**Attempt 3 (FAILED):** ..." is an attempt (the whole paragraph)."""
        if i != blk.start or blk.kind not in ("paragraph", "raw"):
            return False
        got = bold_attempt(self.lines[i])
        if not got:
            return False
        m, lead, km = got
        idxs = list(range(blk.start, blk.end))
        a = self._attempt_body(idxs)
        a.title = one_line(attempt_title(lead, km))
        a.tag = heading_outcome(lead)
        a.proposal = bool(re.match(r"(?i)option|step|phase|idea|solution|candidate|variant|priority", km.group("kw")))
        a.number = int(km.group("n")) if km.group("n").isdigit() else None
        a.context, a.lines, a.unit, a.line = ctx, idxs, lead, blk.start
        # The paragraph's first line carries the label; the body is everything after it.
        first_rest = m.group(2)
        a.lead = ([first_rest] if first_rest else []) + a.lead[1:] if a.lead else a.lead
        self.attempts.append(a)
        self._inline_lines = self._inline_lines | set(idxs)
        return True

    # --- next steps and differences -----------------------------------------------------------

    def next_steps(self, n: Node) -> None:
        self.owned.extend(range(n.start, n.head_end))
        free: list[int] = []
        # Its own lists, and those of sub-headings that only group steps ("Immediate", "Long term");
        # a sub-section with a role of its own (analysis, options, findings) is read as that.
        parts = [n] + [c for c in n.children if not c.children and (
            not self._own_role(c) or re.fullmatch(r"(?:\w+ )?options?", bare_words(c.text)))]  # "### Immediate Options"
        # "PROPOSED SOLUTIONS" > "SOLUTION 1: Remove 500 from the retry list": each proposal is one step,
        # whatever it holds (benefits, trade-offs, the diff to make); none of it was run.
        # Under a heading that puts choices forward ("Recommendations for Future Work", "Options Forward"),
        # "Option A" and "Option 2" alike are choices not yet made. (Under a plain "Next Steps" the corpus
        # reads them as untested attempts: tests/corpus/STYLES.md.)
        # (Under "Possible solutions" the lettered ones stay untested attempts: tests/test_import_styles.py.)
        forward = re.search(r"\b(?:recommendations?|recommended|future work|alternative approaches|(?:options|ways|paths) forward)\b",
                            bare_words(n.text))  # "## Recommended Code Changes" > "### Solution 1: ...": put forward
        proposals = [c for c in n.children if not c.children and c not in parts and c.start >= 0
                     and (forward or _PROPOSED_HEAD.search(bare_words(n.text))) and _PROPOSAL_CHILD.match(c.text)
                     and (forward or not re.match(r"(?i)\W*\w+\s*[A-H]\b", c.text)) and not heading_outcome(c.text)]
        for c in proposals:
            self.owned.extend(range(c.start, c.head_end))
            s = make_step(_PROPOSAL_CHILD.sub("", c.text) or c.text, [], 0)
            if s:
                self.steps.append((c.start, s))
            body = [i for b in c.blocks for i in range(b.start, b.end)]
            self.owned.extend(body)
            if body:
                self._add_section(c.start, "### " + c.text, span_lines(self.lines, body), [c.start] + body)
        for c in n.children:
            if c not in parts and c not in proposals:
                self.section(c, context=None)
        heads = [d for d in parts if d is not n]
        numbered = len(heads) >= 2 and all(NUMBERED_HEAD.match(d.text) for d in heads)
        if len(heads) >= 2 and (numbered or not any(b.kind == "list" for d in heads for b in d.blocks)):
            # ("### 1. Confirm the action count (5 min)" over its code and expected values: numbered, one step each)
            # "## Recommended fixes" > "### 1. Use the thread-executor path" / "### 2. Downgrade Ray": each
            # sub-heading is one step; what it says under it (reasons, code) stays as notes.
            for d in heads:
                self.owned.extend(range(d.start, d.head_end))
                nm = NUMBERED_HEAD.match(d.text)
                s = make_step(nm.group("rest") if nm else d.text, [], 0)
                if s:
                    self.steps.append((d.start, s))
                free.extend(i for b in d.blocks for i in range(b.start, b.end))
            parts = [n]
        # "## Fix for Next Attempt" with one paragraph and no list: that paragraph is the step.
        prose_step = not any(b.kind in ("list", "table") for d in parts for b in d.blocks)
        for d in parts:
            if d is not n:
                self.owned.extend(range(d.start, d.head_end))
                if d.start >= 0:
                    self.renamed.append((d.start, d.text, "what to try next"))
            under_bold = None
            for blk in d.blocks:
                self.owned.extend(range(blk.start, blk.end))
                if under_bold is not None and blk.kind == "list":
                    # "**A. Validate Infrastructure** (1 hour)" + "- Run the fuzzer ...": the list details that step
                    text, at = under_bold
                    s = make_step(text, [self.lines[i].strip() for i in range(blk.start, blk.end) if self.lines[i].strip()], 0)
                    if s:
                        self.steps[at] = (self.steps[at][0], s)
                    self.units.append(_Unit(d.text, list(range(blk.start, blk.end)), "steps"))
                    under_bold = None
                    continue
                under_bold = None
                bm = _BOLD_OPTION.match(self.lines[blk.start]) if blk.kind == "paragraph" and blk.end - blk.start == 1 else None
                nxt = next((b for b in d.blocks if b.start >= blk.end), None)
                cm = _BOLD_CAPTION.match(self.lines[blk.start]) if blk.kind == "paragraph" and blk.end - blk.start == 1 \
                    and nxt is not None and nxt.kind == "list" and nxt.start - blk.end <= 1 else None
                if cm and not TRIED_ITEM.match(cm.group(1)):
                    # "**Use linear probing** with a documented 0.1% error rate:" + "- Acceptable for ...": the
                    # caption is the step, its list the reasons
                    s = make_step(cm.group(1), [], 0)
                    if s:
                        self.steps.append((blk.start, s))
                        under_bold = (cm.group(1), len(self.steps) - 1)
                    continue
                if bm and not TRIED_ITEM.match(bm.group(1)):
                    s = make_step(bm.group(1), [bm.group(3)] if bm.group(3) else [], 0)
                    if s:
                        self.steps.append((blk.start, s))
                        under_bold = (bm.group(1), len(self.steps) - 1)
                    continue
                if blk.kind == "paragraph" and _WHOLE_BOLD.match(self.lines[blk.start]) \
                        and not TRIED_ITEM.match(self.lines[blk.start]):
                    # "**Priority 1: Check Nuclear Attenuation**" over its notes: a step, not an attempt
                    s = make_step(self.lines[blk.start].strip(), [], 0)
                    if s:
                        self.steps.append((blk.start, s))
                    free.extend(range(blk.start + 1, blk.end))
                    continue
                if prose_step and blk.kind == "paragraph" and not BOLD_LEAD.match(self.lines[blk.start]) \
                        and not _question(self.lines, blk) and not TRIED_ITEM.match(self.lines[blk.start]) \
                        and not ACTION_LEAD.match(self.lines[blk.start]):
                    prose_step = False
                    self._step_from_item(list(range(blk.start, blk.end)))
                    self.units.append(_Unit(d.text, list(range(blk.start, blk.end)), "steps"))
                    continue
                if blk.kind == "list":
                    for item in blk.items:
                        _first, idxs = self._item_text(blk, item)
                        cm = CHECKBOX.match(self.lines[item[0]]) if idxs else None
                        if cm and self._done_with_result(cm, idxs, strict=True):
                            self._attempt_from_item(cm.group(2), idxs, None, "")  # "[x] Tried X — it came back"
                        elif idxs:
                            self._step_from_item(idxs)
                    self.units.append(_Unit(d.text, list(range(blk.start, blk.end)), "steps"))
                elif blk.kind == "table" and len(blk.items) >= 2:
                    for (a, _b) in blk.items[1:]:
                        cells = [c for c in split_row(self.lines[a])]
                        # "| 3.1 | Add ALSA includes | `hal.c` | Low |": the step is the first cell in words
                        text = next((c for c in cells if len(re.findall(r"[A-Za-z]{2,}", c)) >= 2),
                                    next((c for c in cells if c.strip()), ""))
                        rest = " · ".join(c for c in cells if c.strip() and c is not text)
                        if text.strip():
                            s = make_step(text, [rest] if rest else [], 0)
                            if s:
                                self.steps.append((a, s))
                    self.units.append(_Unit(d.text, list(range(blk.start, blk.end)), "steps"))
                elif blk.kind == "paragraph" and (self._inline_attempt(blk, blk.start) or (
                        TRIED_ITEM.match(self.lines[blk.start]) and self._prose_attempt(d, blk, None))):
                    free.extend(i for i in range(blk.start, blk.end) if i not in self._inline_lines)
                elif blk.kind == "paragraph" and (rm := _RECOMMEND_LEAD.match(self.lines[blk.start])):
                    # "**Recommendation:** Monitor with `check-health.sh` for one week.": the one thing advised
                    s = make_step(" ".join([rm.group(1)] + [self.lines[i].strip() for i in range(blk.start + 1, blk.end)]), [], 0)
                    if s:
                        self.steps.append((blk.start, s))
                    self.units.append(_Unit(d.text, list(range(blk.start, blk.end)), "steps"))
                elif blk.kind in ("paragraph", "raw") and _question(self.lines, blk):
                    for i in range(blk.start, blk.end):
                        s = make_step(self.lines[i].strip(), [], 0)
                        if s:
                            self.steps.append((i, s))
                else:
                    free.extend(range(blk.start, blk.end))
        if free:
            self._add_section(n.start, "## " + n.text, span_lines(self.lines, free), [n.start] + free)
        else:
            self.renamed.append((n.start, n.text, "what to try next"))

    def _step_from_item(self, idxs: list[int]) -> None:
        lines = [self.lines[i] for i in idxs]
        m = re.match(r"^(\s*)(?:\d{1,4}[.)]|[-*+])\s+(.*)$", lines[0])
        text = m.group(2) if m else lines[0].strip()
        extra = []
        for ln in lines[1:]:
            em = re.match(r"^\s*(?:\d{1,4}[.)]|[-*+])\s+(.*)$", ln)
            extra.append((em.group(1) if em else ln).strip())
        s = make_step(text, extra, 0)
        if s is not None:
            self.steps.append((idxs[0], s))

    def differences(self, n: Node) -> bool:
        for blk in n.blocks:
            rows = None
            if blk.kind == "table" and len(blk.items) >= 2:
                head = split_row(self.lines[blk.items[0][0]])
                if len(head) >= 3:
                    rows = [(a, split_row(self.lines[a])) for a, _ in blk.items[1:]]
            elif blk.kind in ("fence", "code"):
                got = _fixed_width(self.lines, blk)
                if got:
                    head, rows = got
            if rows is None:
                continue
            self.owned.extend(range(n.start, n.head_end))
            self._diff_table(head, rows)
            self.units.append(_Unit(n.text, list(range(blk.start, blk.end)), "differences"))
            others = [i for b in n.blocks if b is not blk for i in range(b.start, b.end)]
            self.owned.extend(range(blk.start, blk.end))
            self.owned.extend(others)
            if others:
                self._add_section(n.start, "## " + n.text, span_lines(self.lines, others), [n.start] + others)
            else:
                self.renamed.append((n.start, n.text, "key differences"))
            for c in n.children:
                self.section(c, context=None)
            return True
        return False

    def _diff_table(self, head: list[str], rows: list[tuple[int, list[str]]]) -> None:
        head = [h.strip() for h in head]
        status_col = next((c for c in range(3, len(head))
                           if re.search(r"status|verdict|tested|ruled|eliminat|result|culprit", head[c], re.I)), None)
        if not self.inv.differences:
            self.inv.labels = (one_line(head[1]) or "Working", one_line(head[2]) or "Broken")
        for i, cells in rows:
            cells = [c.strip() for c in cells] + [""] * (len(head) - len(cells))
            if not any(cells):
                continue
            status = diff_status(cells[status_col]) if status_col is not None else "untested"
            extra = [c for k, c in enumerate(cells) if k >= 3 and k != status_col and c]
            broken = cells[2] + (" · " + " · ".join(extra) if extra else "")
            self.diff_rows.append((i, Difference(0, one_line(cells[0]) or f"(row {len(self.diff_rows) + 1})",
                                                 one_line(cells[1]), one_line(broken), status)))

    # --- free sections ----------------------------------------------------------------------

    def _add_section(self, line: int, heading: str, body: list[str], lines: list[int],
                     attempts_ok: bool = False) -> None:
        if attempts_ok:
            # Items that say "Tried ..." inside plain text are attempts; the text stays as written.
            pass
        self.owned.extend(lines)
        self.sections.append((line, heading, body))

    # --- finish -----------------------------------------------------------------------------

    def _thread_suggestions(self) -> None:
        """In an exported issue thread, "Try `-DGGML_SCHED_MAX_COPIES=1`" in one comment and "It works
        fine now" in the next (by someone else) are one attempt: the suggestion, and its result.
        The comments stay where they are, as text."""
        if not self.r.posts:
            return
        owned = set(self.owned)
        marks = [i for i in sorted(owned) if _author(self.lines[i]) is not None]
        bounds = marks + [max(owned, default=0) + 1]
        comments = []
        for a, b in zip(bounds, bounds[1:]):
            body = [i for i in range(a + 1, b) if i in owned and self.lines[i].strip()
                    and not re.fullmatch(r"\s*(?:[-*_]\s*){3,}", self.lines[i])]
            comments.append(((_author(self.lines[a]) or "").lower(), body))
        taken = {i for a in self.attempts for i in a.lines}
        stepped = {ln for ln, _s in self.steps}
        opener = comments[0][0] if comments else ""
        for k, (who, body) in enumerate(comments):
            # the suggestion may open its line or follow a sentence ("Hmm, it's probably X. Try to Y:")
            sugg, said = next(((i, x) for i in body for x in (re.sub(r"^(?:@[\w-]+[\s,:]*)+", "", y)  # "@bob you can try"
                                                              for y in narrative.sentences(self.lines[i].strip()))
                               if _SUGGESTION.match(x) or _ADVICE.search(x)), (None, ""))
            if sugg is None or sugg in taken:
                continue
            who2, reply = comments[k + 1] if k + 1 < len(comments) else ("", [])

            def judged(rep: list[int], by: str, who: str = who) -> tuple[list[int], str]:
                answer = rep[:4]
                said_back = " ".join(self.lines[i] for i in answer)
                # a reply that only puts more advice ("Increasing the adam_epsilon may help") says nothing of the first
                # (nor does one that asks back: "How do I change my server?")
                first = next(iter(narrative.sentences(re.sub(r"^\W*(?:@[\w-]+[\s,:]*)+", "", said_back))), "")
                # the first sentence answers the advice ("I tried but it didn't work. But X solved it.")
                said_first = outcomes.classify(first)
                return answer, ((said_first if said_first != "inconclusive" else outcomes.classify(said_back))
                                if answer and by != who and not any(
                    _ADVICE.search(x) or _SUGGESTION.match(x) or x.rstrip().endswith("?")
                    for x in narrative.sentences(said_back)[:2]) else "inconclusive")

            answer, verdict = judged(reply, who2)
            if verdict == "inconclusive" and who2 and who2 != who:
                # "Thanks, I will have a try." then, a post later, "I tried but it didn't work": the same person's
                # next word on it (before anyone else speaks) is the verdict
                for who3, rep3 in comments[k + 2:k + 4]:
                    if who3 != who2:
                        break
                    answer, verdict = judged(rep3, who3)
                    if verdict != "inconclusive":
                        break
            bare = [a for a in self.attempts if set(a.lines) & set(answer) and _BARE_TRY.match(a.title)]
            if bare and verdict != "inconclusive":
                # "I tried but it didn't work." read on its own names nothing; the advice it answers does
                self.attempts = [a for a in self.attempts if a not in bare]
                taken = {i for a in self.attempts for i in a.lines}
            head = next(iter(narrative.sentences(re.sub(r"^\W*(?:@[\w-]+[\s,:]*)+", "",
                                                        " ".join(self.lines[i].strip() for i in answer)))), "")
            if any(set(a.lines) & set(answer) and a.title[:24] in head for a in self.attempts):
                continue  # the reply was read as an attempt of its own ("With --disable-cuda-graph: no IMA")
            if verdict == "inconclusive":
                if (not reply or who2 != opener) and sugg not in stepped and not _HYPOTHETICAL_ADVICE.search(said) \
                        and (outcomes.classify(said) == "inconclusive" or _ADVICE.search(said)):  # "Trying X ... fails with": a report
                    # advice the asker has not come back on (the thread ends, or someone else speaks next):
                    # what to try next
                    st = make_step(_step_words(said), [], 0)
                    if st:
                        self.steps.append((sugg, st))
                continue
            a = _Attempt(line=sugg, number=None, title=item_title(_step_words(said)),
                         fields={"did": [self.lines[sugg].strip()], "result": [self.lines[i] for i in answer]},
                         lead=[], lines=[sugg] + answer, unit="Comments", summary=True, tag=verdict)
            self.attempts.append(a)

    def finish(self, line: int) -> Parsed:
        inv = self.inv
        self._thread_suggestions()
        owned = set(self.owned)
        for n in self.r.root.walk():
            if n.start >= 0 and n.start in owned and len(n.text.split()) > 25:
                # An issue body flattened onto one "### Describe the bug Hello, ... did not help ..." line.
                self._knob_attempt(n, Block("heading", n.start, n.start + 1, []))
        items: list[tuple[str, str, int]] = [("investigation", "", line)]
        # Attempts: the author's numbers when every attempt has a distinct one; else document order.
        atts = sorted(self._without_restatements(), key=lambda a: a.line)
        # The author's numbers are kept when most attempts carry one and none repeats ("see Attempt 3"
        # in the text stays true); the others are numbered after them, in document order.
        nums = [a.number for a in atts if a.number is not None]
        keep = len(set(nums)) == len(nums) and len(nums) * 2 > len(atts)
        nxt = max(nums, default=0)
        for k, a in enumerate(atts, 1):
            if keep:
                if a.number is None:
                    nxt += 1
                number = a.number if a.number is not None else nxt
            else:
                number = k
            inv.attempts.append(self._make_attempt(a, number))
            items.append(("attempt", str(number), a.line + 1))
        if keep:
            inv.attempts.sort(key=lambda x: x.number)
        seen_steps = set()
        for i, s in sorted(self.steps, key=lambda x: x[0]):
            if s.text.casefold() in seen_steps:
                continue
            seen_steps.add(s.text.casefold())
            s.position = len(inv.next_steps) + 1
            inv.next_steps.append(s)
            items.append(("step", str(s.position), i + 1))
        seen_f = set()
        for i, d in sorted(self.diff_rows, key=lambda x: x[0]):
            key = d.factor.casefold()
            if key in seen_f:
                d.factor = f"{d.factor} ({i + 1})"
                key = d.factor.casefold()
            seen_f.add(key)
            d.position = len(inv.differences) + 1
            inv.differences.append(d)
            items.append(("difference", key, i + 1))
        self._place_sections()
        self._verify()
        verified = self._ensure_roundtrip()
        key = heading_key(inv.title) or f"line:{line}"
        return Parsed(inv=inv, line=line, key=key, items=items, recognized=self._recognized(), verified=verified)

    def _without_restatements(self) -> list[_Attempt]:
        """Attempts, less the summary-table rows and sentences that restate one written out under
        its own heading or item (a "What we tried" table above the per-attempt sections). The
        restating lines stay where they are, as text."""
        def said_before(a: _Attempt, k: int) -> bool:
            """ "- Workaround: `--max-num-batched-tokens 8192`." under "## Impact": a label and the code of an
            attempt told above it -- the recap names nothing new."""
            code = re.findall(r"`([^`]+)`", a.title)
            if not code or not re.fullmatch(r"\W*[A-Za-z][\w ]{0,25}:\s*(?:`[^`]+`[\s,;.]*)+", a.title):
                return False
            return any(all(c in " ".join([b.title, *b.lead, *b.fields.get("did", []), *b.fields.get("result", [])])
                           for c in code) for b in self.attempts[:k])

        told = [a for k, a in enumerate(self.attempts) if not (a.summary and said_before(a, k))]
        full = [a for a in told if not a.summary]
        if not full:
            return told
        from rapidfuzz import fuzz

        def key(a: _Attempt) -> str:
            t = re.sub(r"^(?:\w+\s*#?\d+[a-z]?\s*[:.)—–-]\s*)", "", a.title.lower())
            return re.sub(r"[^\w\s]", " ", t)

        names = [key(a) for a in full]
        # A struck-through recap names the attempt in other words: its words all in one attempt's
        # title and what was done ("Framework structure" / "Changed to versioned framework structure").
        bodies = [set(re.sub(r"[^\w\s]", " ", f"{key(a)} {' '.join(a.lead)} {' '.join(a.fields.get('did', []))}".lower()).split())
                  for a in full]

        def recap_of(a: _Attempt) -> bool:
            words = {w for w in key(a).split() if len(w) > 2}
            return any(len(words & b) >= min(2, len(words)) and len(words & b) * 3 >= len(words) * 2 for b in bodies)

        numbers = {a.number for a in full if a.number is not None}
        out = []
        for a in told:
            if a.summary and any(fuzz.token_set_ratio(key(a), n) >= 90 for n in names if n):
                continue
            if a.recap and key(a).split() and recap_of(a):
                continue
            m = re.match(rf"^(?:(?:{STRONG_KW}|option|solution|test|config)\s*)?#?(\d{{1,3}})\b", a.title.strip(), re.I)
            if a.summary and a.table and len(numbers) >= 2 and (
                    (m and int(m.group(1)) in numbers) or re.match(r"(?i)^(?:none|baseline|no (?:fix|change))\b", a.title)):
                continue  # "| 1 calibrated per-tensor | 79.4 | ⚠️ |" under "### Solution 1 ...": a recap row
            out.append(a)
        return out

    @property
    def _pending(self) -> bool:
        return bool(_PENDING_CHECK.search(self.r.text))

    def _make_attempt(self, a: _Attempt, number: int) -> Attempt:
        f = {k: field_value(v) for k, v in a.fields.items()}
        # "**Expected Outcome:** ..." / "**Priority:** try this first": what a plan hopes for, kept
        # with the reasons; with no result next to it, nothing was run.
        expected = f.pop("expected", "")
        if expected:
            f["hypothesis"] = f"{f['hypothesis']}\n\n{expected}" if f.get("hypothesis") else expected
        lead = field_value(a.lead)
        did = f.get("did", "")
        if lead:
            if not did:
                did = lead
            elif "hypothesis" not in f:
                f["hypothesis"] = lead
            else:
                did = f"{lead}\n\n{did}"
        explicit = f.pop("outcome", "") or a.explicit
        result, conclusion = f.get("result", ""), f.get("conclusion", "")
        out = None
        if explicit:
            # "**Status**: ✅ Implemented in `x.py`" over the change's description: the label's own line speaks
            head = explicit.strip().split("\n", 1)[0]
            out = outcomes.verdict_word(head) if head != explicit.strip() and _BUILT_HEAD.match(head) else None
            out = out or outcomes.verdict_word(explicit)
            if out is None and len(explicit) < 200:
                out = outcomes.classify(explicit)
                out = None if out == "inconclusive" else out
            if out is None and len(explicit.split()) > 3:
                out = outcomes.classify(explicit)  # "Outcome: training runs, step time +28%"
                out = None if out == "inconclusive" else out
            if len(explicit.split()) > 2 or out is None:
                # "Outcome: worked around it, not a real fix" keeps its words.
                conclusion = f"{conclusion}\n\nOutcome: {explicit}" if conclusion else f"Outcome: {explicit}"
        if out is None and a.tag:
            # A tag in the heading ("✅", "(IN PROGRESS)") is the author's summary; a Result that
            # says otherwise in so many words ("FAILED ❌", "incompatible") was written later.
            said = outcomes.verdict_word(result) if result else None
            if said is None and result:
                first = re.split(r"(?<=[.!?])\s|\n", outcomes.plain_text(result).strip(), maxsplit=1)[0]
                said = outcomes.verdict_word(first)
            out = said if said in ("worked", "failed") and a.tag in ("worked", "failed", "untested") \
                and said != a.tag else a.tag
        if out is None and a.context is not None:
            # Under "Eliminated", "Attempted fixes (all failed)", "Hypotheses (not yet proven)": the
            # heading's verdict holds whatever the prose says ("dd write succeeds in 21 s").
            out = a.context
            if out == "worked" and self._pending:
                out = "untested"  # "**Status**: Ready for re-testing": the fix is made, nobody has seen it work yet
        if out is None and expected and not result:
            out = "untested"  # a plan with the result it hopes for, and none it got
        if out is None and result and outcomes.verdict_word(result) == "untested":
            out = "untested"  # "not run yet — needs llm-compressor support"
        if out is None and not result:
            # "... **Resultado:** sigue saliendo basura." / "x → PASS": a verdict written inside the text.
            im = INLINE_RESULT.search(did or "")
            if im:
                g = outcomes.classify(did[im.end():])
                out = None if g == "inconclusive" else g
            elif " → " in (did or "") and not a.fields:
                # "`rocm/pytorch:...` → PASS, 212 kernel records": what follows the arrow is the result.
                g = outcomes.classify(did.split(" → ", 1)[1])
                out = None if g == "inconclusive" else g
        if out is None and not result and not conclusion and a.lines and not a.summary:
            out = self._story_verdict(a.lines)  # "## Rejection 2" told as a story: "... Resubmitted. Same rejection."
        if out is None and a.proposal and not result and not conclusion \
                and (PLAN_WORDS.search(did or "") or PLAN_WORDS.search(a.title or "") or any(re.match(
                    r"^\s*(?:install|configure|set|add|use|switch|move|replace|upgrade|downgrade|enable|disable|"
                    r"build|rebuild|try|pin|drop|remove|run|wait|track|force)\b", x, re.I) for x in (did or "", re.sub(
                        r"^\W*(?:option|solution|idea|step|phase|candidate|variant)\s*#?\w{0,3}\s*[:.)—–-]*\s*", "",
                        a.title or "", flags=re.I)))) \
                and not RAN_WORDS.search(did or ""):
            out = "untested"  # "Option D: rebuild MIOpen ... Not feasible without ROCm 6": a plan, not a run
        if out is None and (_FIXED_LEAD.match(did or "") or _FIXED_LEAD.match(lead or "")) \
                and outcomes.classify(result or "") not in ("failed", "partial"):
            out = "worked"  # "- **What**: Fixed startup.sh ..." / "Resolved the import errors by ...": the entry says so
        if out is None and not result and _DIAG_WON.match(a.title or ""):
            # "4. Isolated the code defect" / "Reproduced the hang": a diagnostic step whose name says it got
            # there; the failure its text describes is the bug's, not the step's
            out = "worked"
        if out is None:
            r_text = result or ("" if a.fields and set(a.fields) - {"did", "hypothesis"} else did)
            if r_text and not result:
                # A metrics table inside the prose ("| step 0 | 0.05 |") is numbers; the verdict is in the sentences.
                prose = re.sub(r"(?m)^\s*\|.*\|\s*$", " ", r_text)
                r_text = prose if prose.strip() else r_text
            r_out = outcomes.classify(r_text) if r_text else "inconclusive"
            c_out = outcomes.classify(conclusion) if conclusion else "inconclusive"
            out = outcomes.combine(r_out, c_out)
        if (out is None or (out == "partial" and not a.tag)) and a.lines:
            # "**Why it worked:** stale dev servers don't hot-reload": the label is the author's verdict,
            # whatever the explanation under it sounds like ("✅ Compiles, but ❌ still black" + "Why it failed").
            said = {_label_name(self.lines[i]) for i in a.lines if 0 <= i < len(self.lines)}
            if said & _WHY_WON and not said & _WHY_LOST:
                out = "worked"
            elif said & _WHY_LOST and not said & _WHY_WON:
                out = "failed"
        if out is None:
            # Nothing says what happened: not run yet when nothing says it was done either.
            done = result or conclusion or ACTION_LEAD.match(did or "") or TRIED_ITEM.match(did or "") or re.search(
                r"\((?:applied|done|deployed|rolled out|in place|running)\b|\bunder observation\b", did or "", re.I) \
                or _DONE_WORDS.search(re.sub(r"(?ms)^\s*(```|~~~).*?^\s*\1", " ", did or "")) \
                or (a.title and ACTION_LEAD.match(re.sub(r"^\W*\d{1,3}[.)]\s*", "", a.title)) and not a.proposal) \
                or (a.done and not re.match(r"^\W*(?:pending|planned|proposed|todo|to do|next)\b", did or "", re.I))
            out = "inconclusive" if done else "untested"
        if a.context == "failed" and out in ("worked", "untested") and not a.tag:
            # Under "## Attempts that did NOT work": "Worked once, immediately after setup" is a step on the
            # way, not the verdict; the heading's verdict holds.
            out = "failed"
        title = a.title or item_title(did or result or f"Attempt {number}")
        return Attempt(number=number, title=one_line(title), hypothesis=f.get("hypothesis", ""), did=did,
                       result=result, conclusion=conclusion, outcome=out if out in outcomes.OUTCOMES else "inconclusive")

    def _story_section(self, n: Node, ctx: str | None) -> bool:
        """A "What we tried" section written as a story of two or more actions ("The first thing I tried
        was X ... Next I marked ... Then I switched it to ..."): one attempt per action, the text kept."""
        before, units_before = len(self.attempts), len(self.units)
        self._story_attempts(n, n.blocks, {i for b in n.blocks for i in range(b.start, b.end)}, before)
        if len(self.attempts) - before < 2:
            del self.attempts[before:]
            del self.units[units_before:]
            return False
        for a in self.attempts[before:]:
            a.summary = False
            if ctx and a.context == "inconclusive":
                a.context = ctx
        lines = n.lines()
        self.owned.extend(lines)
        self._add_section(n.start, "## " + n.text, span_lines(self.lines, [i for i in lines if i >= n.head_end]), lines)
        return True

    def _story_verdict(self, idxs: list[int]) -> str | None:
        """The verdict of the first action an attempt's prose tells, if it tells any (see ``narrative``)."""
        units: list[narrative.Unit] = []
        para: list[int] = []
        fence = False
        for i in sorted(idxs):
            line = self.lines[i] if 0 <= i < len(self.lines) else ""
            if re.match(r"^\s*(```|~~~)", line):
                fence = not fence
                if para:
                    units.append(narrative.Unit(" ".join(self.lines[j].strip() for j in para), para))
                    para = []
                continue
            if fence or line.lstrip().startswith((">", "|", "#")):
                continue
            if not line.strip():
                if para:
                    units.append(narrative.Unit(" ".join(self.lines[j].strip() for j in para), para))
                para = []
                continue
            para.append(i)
        if para:
            units.append(narrative.Unit(" ".join(self.lines[j].strip() for j in para), para))
        # The first action told is the attempt's own; "The fix is to ..." inside it is a diagnosis.
        told = [st for st in narrative.read(units) if st.verdict != "inconclusive" and st.kind != "fix"]
        return told[0].verdict if told else None

    def _place_sections(self) -> None:
        used: dict[str, int] = {}
        out = []
        for _line, heading, body in sorted(self.sections, key=lambda s: s[0]):
            h = section_heading(heading)
            n = used.get(h.casefold(), 0) + 1
            used[h.casefold()] = n
            if n > 1:
                h = f"{h} ({n})"
                used[h.casefold()] = 1
            text = verbatim_value(body)
            if not text.strip(" \n-*_=") and text.strip():
                continue  # nothing but a thematic break
            out.append(Section(h, demote_headings(close_fences(text))))
        self.inv.sections = [s for s in out if s.body or not s.heading.startswith("## Notes")]

    def _verify(self) -> None:
        """Render, then keep again whatever the structure did not keep word for word."""
        from dbglog.kb import mirror

        owned = sorted(set(i for i in self.owned if 0 <= i < len(self.lines)))
        probe = _probe(self.inv)
        kept = kept_text(mirror.render(probe))
        whole = set(kept.split(" \n "))
        lost = [i for i in owned if counts(self.lines[i]) and not _in_kept(norm(self.lines[i]), kept, whole)]
        if not lost:
            return
        heads = {n.start: n for n in self.r.root.walk() if n.start >= 0}
        renamed = {ln: (t, w) for ln, t, w in self.renamed}
        # 1. Headings and bare labels ("**Results:**" above a list) whose words were only renamed:
        #    one line each in "Source headings", saying where their content went.
        outline_lines, seen = [], set()
        for i in lost:
            bare_label = label_of(self.lines[i], {**ATTEMPT_LABELS, **INV_LABELS})
            if i in heads or (bare_label is not None and not bare_label[1]):
                key = norm(self.lines[i])
                if key not in seen:
                    seen.add(key)
                    if i in heads:
                        t, where = renamed.get(i, (heads[i].text, "the fields and lists above"))
                        text = self.lines[i].strip().lstrip("#").strip()
                    else:
                        text, where = self.lines[i].strip(), f"the {bare_label[0].replace('_', ' ')} fields above"
                    outline_lines.append(f"- {where} ← {text}")
        lost_set = {i for i in lost if i not in heads and norm(self.lines[i]) not in seen}
        # 2. Units (tables, fixed-width blocks, attempts, lists) that lost a content line: keep as written.
        redo: list[tuple[int, str, list[int]]] = []
        for a in self.attempts:
            if any(i in lost_set for i in a.lines):
                redo.append((a.lines[0], f"{a.unit or a.title} (as written)", a.lines))
        for u in self.units:
            if any(i in lost_set for i in u.lines):
                redo.append((u.lines[0], f"{u.heading or u.role} (as written)", u.lines))
        covered: set[int] = set()
        for first, heading, idxs in sorted(redo):
            if set(idxs) <= covered:
                continue
            covered.update(idxs)
            body = span_lines(self.lines, [i for i in idxs if i not in heads or i != first])
            self.sections.append((first, "## " + heading, body))
        if outline_lines:
            self.sections.append((10**9, "## Source headings",
                                  ["Where the content under these headings and labels of the imported document is now:",
                                   ""] + outline_lines))
        # 3. Anything still missing (should be rare): kept verbatim, in order, at the end.
        self._place_sections()
        kept = kept_text(mirror.render(_probe(self.inv)))
        whole = set(kept.split(" \n "))
        rest = [i for i in owned if counts(self.lines[i]) and not _in_kept(norm(self.lines[i]), kept, whole)]
        if rest:
            self.sections.append((10**9 + 1, "## Imported text (as written)", span_lines(self.lines, rest)))
            self._place_sections()

    def _ensure_roundtrip(self) -> bool:
        """Free text that would not read back the same (an HTML comment never closed, a stray
        table line that joins the next section) is stored inside a fence: same lines, inert."""
        from dbglog.kb import mirror

        def same() -> bool:
            probe = _probe(self.inv)
            try:
                return mirror.parse(mirror.render(probe)) == probe
            except ParseError:
                return False

        if same():
            return True
        for s in self.inv.sections:
            longest = max((len(m) for m in re.findall(r"`+", s.body)), default=0)
            fence = "`" * max(3, longest + 1)
            s.body = f"{fence}markdown\n{s.body}\n{fence}"
            if same():
                return True
        return False

    def _recognized(self) -> dict:
        inv = self.inv
        return {"attempts": len(inv.attempts), "next_steps": len(inv.next_steps),
                "differences": len(inv.differences),
                "fields": [k for k in ("symptom", "environment", "root_cause") if getattr(inv, k)]
                + (["related_files"] if inv.related_files else []),
                "free_sections": [s.heading[3:] if s.heading.startswith("## ") else s.heading
                                  for s in inv.sections]}


_AUTHOR = re.compile(r"^\s*(?:👤\s*)?(?:\*\*@?([\w.-]+)\*\*|@([\w-]+))\s+(?:commented|wrote|replied|answered)\b", re.I)


def _author(line: str) -> str | None:
    """Who wrote the post this line opens ("**bob** commented", "bob · comment · 2023-03-20",
    "### Post by bob on 2011-04-13"), else None."""
    m = _AUTHOR.match(line)
    if m:
        return m.group(1) or m.group(2) or ""
    m = POST_HEADER.match(line)
    return (m.group("who") or m.group("who2")) if m else None


# "I tried but it didn't work.", "Tried it, no luck": a try that names nothing of its own.
_BARE_TRY = re.compile(r"^\W*(?:@[\w-]+[\s,:]*)?(?:(?:I|we)\s+(?:\w+ly\s+|have\s+|'ve\s+)?)?tried(?:\s+(?:it|that|this|"
                       r"your (?:suggestion|fix|solution)|the (?:suggestion|fix)))?\s*(?:,|but|and|;|:|-)", re.I)
# Advice put another way: "You should check your data", "Increasing the adam_epsilon may help".
_ADVICE = re.compile(r"^\W*(?:(?:maybe|perhaps) you (?:can|could|should)|you (?:should|need to|have to|must|could)|"
                     r"i(?:'d| would) (?:suggest|recommend))\b|"
                     r"\b(?:may|might|could|should|would) help\b", re.I)


def _step_words(said: str) -> str:
    """ "Try to checkpoint the MaskNet only:" -> "checkpoint the MaskNet only": the thing to do."""
    t = _SUGGESTION.sub("", said).strip() or said
    t = re.sub(r"^(?:(?:maybe|perhaps)\s+)?(?:you (?:should|need to|have to|must|can|could)|to)\s+", "", t, flags=re.I)
    return t.rstrip(" :?") or said


# "Try it only if ...": advice with a condition attached is no plain next step.
_HYPOTHETICAL_ADVICE = re.compile(r"\b(?:if|unless|whether)\b|\?\s*$", re.I)
_SUGGESTION = re.compile(r"^\s*>?\s*(?:(?:can|could) you (?:please )?try|please (?:try|test)|have you tried|try(?:ing)?|"
                         r"you (?:can|could|may|might|should) (?:also )?try|"
                         r"maybe try|what about|does it (?:still )?(?:happen|work|reproduce|crash) (?:with|without))\b[:,]?\s*",
                         re.I)


_RESULTS_HEAD = re.compile(r"^(?:results?(?: summary)?|outcomes?|progress assessment|assessment|verification results?|"
                           r"effect|impact|what changed after)$")
# "## Cleanup performed" (removing what the dead ends left behind), "## Files Modified": no attempts in it.
_AFTERMATH_HEAD = re.compile(r"^(?:clean-?up|clean up|housekeeping)(?: performed| done| steps)?$|"
                             r"^files (?:modified|changed|created|touched)$|"
                             # a recap of work told above, by its cost or as ticked boxes: no new tries in it
                             r"^(?:session |project |investigation )?(?:economics|costs?(?: breakdown| summary)?|budget|"
                             r"(?:closure|completion|wrap-?up) checklist|deliverables(?: created)?(?: this session)?)$")
_WHY_HEAD = re.compile(r"^why (?:this|it|that|the fix|the \w+) (?:works?|worked|helps|helped|fails|failed)$")
_SOLVED_HEAD = re.compile(r"^(?:the )?(?:final |actual |real |true )?(?:solution|fix|resolution|what fixed it|fix applied)$")
_WHOLE_BOLD = re.compile(r"^\s*(?:\*\*|__)[^*_]{3,120}(?:\*\*|__)\s*$")
_ABOUT_ATTEMPT = re.compile(r"^\W*(?:attempt|try|run|experiment)\s*#?\d{1,3}\s+(?:diagnosis|analysis|details|notes|"
                            r"post-?mortem|explained|breakdown)\b", re.I)


_WHAT_WORKED_PARA = re.compile(r"^\s*(?:\*\*|__)(?P<what>what (?:actually |finally |did |does |eventually )?"
                               r"(?:worked|works?|fixed it|helped|did(?:n'?t| not) (?:work|help)|never worked))"
                               r"\s*(?::\s*(?:\*\*|__)|(?:\*\*|__)\s*:)(?P<rest>.*)$", re.I)
_ORDINAL_ATTEMPT = re.compile(r"^(?:[^\n]{0,40}?\s[—–:-]\s*)?\W{0,3}(?:first|second|third|fourth|fifth|sixth|seventh|"
                              r"eighth|ninth|tenth|\d{1,2}(?:st|nd|rd|th)|final|last|next) (?:(?:fix|debug) )?"
                              r"(?:attempt|try|approach|experiment)\b(?!s)", re.I)
_WHY_WON = {"why it worked", "why that worked", "why this worked", "what made it work"}
_WHY_LOST = {"why it failed", "why it didn't work", "why that failed", "why this failed", "why it did not work",
             "why it didn't help", "why it did not help"}


def _label_name(line: str) -> str:
    m = LABEL.match(line)
    if not m:
        return ""
    name = (m.group("l1") or m.group("l3") or m.group("l2") or "").strip().lower()
    return re.sub(r"^[^\w]+\s*", "", name).strip()


_STATUS_ITEM = re.compile(r"^\W*(?:current (?:state|status|issue|results?)|status|summary|key (?:pattern|finding)s?|"
                          r"note|tests passing|where (?:we|things) stand|time (?:spent|investment|taken)|effort|duration)\b",
                          re.I)


# "- Making the converter reject `{}`. ...", "- Relying on `set -e`": under "What didn't work", a thing done.
_GERUND = re.compile(r"^\W{0,3}(?:\*\*|__)?[A-Z][a-z]{2,}ing\b(?! (?:is|was|are|were)\b)")


# "`scripts/experiments_reverted/` contains the failed experiments above": a pointer to them, not one.
_POINTER = re.compile(r"^\W*`[^`]+`\s+(?:contains|has|holds|lists|documents|describes|keeps|is where|are where)\b", re.I)


def _section_label(line: str) -> bool:
    """ "**Diagnosis**: the hang is before training", "**Result:** all failed": a label of the section
    (its diagnosis, its result), not the name of something tried."""
    name = _label_name(line)
    return bool(name) and (name in ATTEMPT_LABELS or name in INV_LABELS or bool(_STATUS_ITEM.match(name))
                           or name in ("diagnosis", "analysis", "bottom line", "tl;dr", "tldr", "verdict"))


_DIAG_WON = re.compile(r"^\W*(?:\d{1,3}[.)]\s*)?(?:reproduced|isolated|identified|pinpointed|located|traced|found|"
                       r"narrowed (?:it )?down)\b", re.I)


# Told in the past tense: it was done ("Tried once as a walkthrough", "I then verified independently"),
# even when nothing says how it came out. "should be tried", "not tested" are not.
_DONE_WORDS = re.compile(r"(?<!-)(?<!\bbe )(?<!\bbeen )(?<!\bnot )(?<!\bnever )\b(?:tried|tested|ran|re-?ran|measured|verified|"
                         r"observed|found|saw|installed|rebuilt|reverted|benchmarked|profiled|stopped it|we stopped|"
                         r"(?:the first|this|that|the) run (?:used|showed|took|reached|stopped|ended))\b", re.I)


# "Restarting didn't help.", "A fresh image didn't help either.": an action as the sentence's subject.
_ACTION_SUBJECT = re.compile(r"^\W{0,3}(?:also |even |then |and )?(?:(?!(?:no|some|every|any)?thing\b|during\b|being\b)"
                             r"[A-Za-z][a-z]+ing\b|an? (?:fresh|new|clean|full|second|bigger|smaller) [\w-]+)", re.I)
# ... and what it did, said outright.
_HELP_VERDICT = re.compile(r"\b(?:did(?: not|n'?t)|does(?: not|n'?t)|do(?: not|n'?t)) (?:help|fix|change|work|resolve|solve|"
                           r"make (?:a|any) difference)\b|\b(?:had|has|made|makes) no (?:effect|difference|impact)\b|"
                           r"\bno (?:effect|improvement|change|difference)\b|\b(?:fixed|fixes|resolved|resolves|solved|solves) "
                           r"(?:it|the (?:issue|problem|crash|hang|error|oom|leak))\b|\bmakes? (?:it|the \w+) go away\b|"
                           r"\bstill (?:crashes|hangs|fails|happens|reproduces|ooms)\b", re.I)


# "Option A:", "Solution 2 —", "Idea #3": one of several choices put forward (a letter only up to H, so a
# heading such as "Fix Utilities Creation" is not read as "Fix U")
_PROPOSAL_CHILD = re.compile(r"(?i)^\W*(?:solution|option|fix|approach|alternative|idea)\s*(?:#?\d{1,2}|[A-H])\b\s*[:.)—–-]*\s*")
_RECOMMEND_LEAD = re.compile(r"^\s*(?:\*\*|__)(?:our |my )?recommend(?:ation|ed(?: (?:action|next step|fix))?)s?\s*:?\s*(?:\*\*|__)\s*:?\s*(\S.*)$", re.I)
_PROPOSED_HEAD = re.compile(r"^(?:\W*\d{1,2}[.)]\s*)?(?:proposed|possible|suggested|potential|candidate|recommended) "
                            r"(?:solutions?|fix(?:es)?|workarounds?|remedies|remediations?)\b", re.I)
_NAMED_RESULTS = re.compile(r"^(?:[\w/-]+ ){1,3}(?:test|tests|testing|validation|verification|benchmark) results?$", re.I)
_HEDGED = re.compile(r"\b(?:likely|probably|possibly|may|might|should|would|could|expect(?:ed)?)\b", re.I)
_DONE_REPORT = re.compile(r"\b(?:I|[Ww]e)\s+(?:\w+ly\s+)?[a-z]{3,}ed\b|^\W*(?:ran|re-?ran|checked|tested|found|confirmed|verified|"
                          r"saw|got|tried)\b", re.I)
_RESULTS_OF_RUNS = re.compile(r"^(?:test(?:ing)?|experiment(?:al)?|benchmark(?:ing)?|trial|validation|verification|run) results?$",
                              re.I)
_CHECK_MARKED = re.compile(r"^\s*(?:\*\*|__)[^*_]{2,60}(?:\*\*|__)\s*:?\s*(?P<mark>✅|❌|✔️?|✗|✘)")
_FINDING_HEAD = re.compile(r"^\W*(?:\d{1,2}[.)]\s*)?(?:(?:(?:key|preliminary|critical|new|major) )?(?:finding|observation)\s*#?\d{1,2}\b|"
                           r"known (?:issues?|problems?|limitations?)\b)", re.I)
# (on the cause's own line: a "fix:" key line of its own, as in a GSD Resolution block, retells the fix)
_CAUSE_FIX = re.compile(r"[.;][ \t]+(?:the\s+)?fix(?:ed)?(?:\s+was)?\s*:\s*(?P<fix>\S.*)$", re.I | re.S)
_MARK_ARROW = re.compile(r"^\s*(?:❌|✅|✔️?|✗|✘|⚠️?)\s*\S[^→]{1,160}(?:→|->|=>)\s*\S")
_PLAIN_TRIED_CAPTION = re.compile(r"(?i)(?:\b(?:I|we)(?:'ve| have)?\s+(?:\w+ly\s+|also\s+|already\s+)?(?:did|ran|tried|tested|"
                                  r"performed)\s+(?:the\s+)?(?:following|these|some|a few|several)(?:\s+(?:tests?|things|"
                                  r"experiments?|checks?|steps|changes))?|\bthings (?:I|we)(?:'ve| have)? tried(?: so far)?)\s*:\s*$")
_QUOTED_HEAD = re.compile(r"^[ \t]*>(?:[ \t]?>)*[ \t]?#{1,6}[ \t]+\S", re.M)
_WORKAROUND_HEAD = re.compile(r"^\W*(?:the |our |a )?(?:temporary |current |quick |interim )?workaround\b(?!s)", re.I)
_HOPED = re.compile(r"\b(?:in (?:the )?hopes? (?:of|that)|hoping (?:to|that|it would))\b", re.I)
_BUILT_HEAD = re.compile(r"^\W*(?:implemented|added|applied|deployed|merged|committed|in place)\b", re.I)
_PENDING_CHECK = re.compile(r"(?im)^\W*(?:(?:current )?status|state)(?:\*\*|__)?\s*[:—–-]\s*\W*(?:ready for (?:re-?)?test\w*|"
                            r"awaiting (?:re-?)?(?:test\w*|verification|validation|confirmation)|needs? (?:re-?)?test\w*|"
                            r"pending (?:re-?)?(?:test\w*|verification|validation)|not yet (?:tested|verified|validated)|"
                            r"to be (?:tested|verified|validated)|untested)\b")
_PROBLEM_WORDS = re.compile(r"\b(?:fix(?:es|ed)?|bug|errors?|fail\w*|crash\w*|hang\w*|broken|conflicts?|missing|"
                            r"undefined|exceptions?|regress\w*|not (?:found|working)|cannot|can't|unable)\b", re.I)
_TROUBLE_WORDS = re.compile(_PROBLEM_WORDS.pattern.replace(r"fix(?:es|ed)?|", ""), re.I)  # "verified all fixes work"
_FIXED_LEAD = re.compile(r"^\W*(?:(?:what|change|action|fix)\W*\s*[:—–-]\s*\W*)?(?:fixed|resolved|solved|repaired|corrected)\b"
                         r"(?! (?:in|by) (?:a |the )?(?:later|next|upcoming))", re.I)
_AFTER_ALL = re.compile(r"^\W*(?:(?:even )?after (?:all|trying all|doing all)(?: of)? (?:these|this|that|those|the above)|"
                        r"despite (?:all|trying all)(?: of)? (?:these|this|that|those|the above)|"
                        r"none of (?:these|this|that|those|the above|them))\b", re.I)
_TODO_CAPTION = re.compile(r"^(?:[-*+]|\d{1,3}[.)])?\s*(?:\*\*|__)?(?:something to try|things to try|(?:still )?to try|"
                           r"to ?do|todo|fixme|ideas?(?: to try)?|next(?: steps?)?|follow[- ]?ups?)(?:\*\*|__)?\s*:?"
                           r"(?:\*\*|__)?$", re.I)
_TRIED_LABEL = re.compile(r"^\s*(?:[-*+]|\d{1,2}[.)])\s+(?:\*\*|__)?(?:attempts?|tried|first attempt|initial attempt)"
                          r"(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*(?P<what>\S.*)$", re.I)
_ITEM_ACTION = re.compile(r"^\W{0,3}(?:made|set|put|built|rebuilt|wrote|rewrote|(?:disabl|enabl|add|remov|chang|us|switch|"
                          r"replac|reduc|increas|lower|rais|mov|dropp|skipp|rewrit|patch|revert|upgrad|downgrad|"
                          r"install|reinstall|pinn|bump|clamp|cast|split|merg|renam|wrapp)(?:e|ed|es|s)?)\b(?! (?:to|that|when|if)\b)",
                          re.I)
# "**A. Validate Infrastructure** (1 hour, $0.68)": a lettered or numbered option put forward, its cost after it
_BOLD_OPTION = re.compile(r"^\s*(?:\*\*|__)\s*(?:[A-H]|\d{1,2})[.)]\s+([^*_]{3,100}?)(?:\*\*|__)\s*(\(([^()]{1,60})\))?\s*$")
_BOLD_CAPTION = re.compile(r"^\s*((?:\*\*|__)[^*_]{3,80}(?:\*\*|__)[^*_:]{0,120}?)\s*:\s*$")
_MANY_TRIES = re.compile(r"\b(?:attempts|tries|iterations|experiments|runs|trials|configurations|configs|sweeps?)\b", re.I)
_TRY_LINE = re.compile(r"^(?:then |also |next |finally |and then )?(?:tried|tested|attempted|retried|ran|re-?ran|"
                       r"downgraded|upgraded|switched|disabled|enabled|removed|reinstalled|rebuilt|reverted|"
                       r"rolled back|pinned|bumped|patched|replaced|set|unset|lowered|raised|reduced|increased)\b",
                       re.I)
_NUMBERED_BOLD = re.compile(r"^\s*(?:\*\*|__)\s*\d{1,2}[.)]\s+\S")


def _caption(lines, blk: Block) -> bool:
    """ "**All failures show identical error:**" above a log, or a bold sentence: not an attempt."""
    if _NUMBERED_BOLD.match(lines[blk.start]):
        return False  # "**1. First B-15 build failed immediately**: ...": a numbered entry
    text = " ".join(lines[i].strip() for i in range(blk.start, blk.end))
    m = re.match(r"^\W{0,3}\s*(?:\*\*|__)([^*_]+)(?:\*\*|__)\s*(:?)\s*(.*)$", text)
    if not m:
        return False
    lead = m.group(1).strip()
    colon = lead.endswith(":") or m.group(2)
    return bool((colon and not m.group(3).strip())  # "**H200 nodes tested:**" above its list: the items are the entries
                or len(lead.split()) > 7 or lead.endswith((".", "!"))  # a bold sentence
                or re.match(r"(?i)(?:all|this|these|those|the|it|we|our|note|summary|conclusion)\b", lead))


def _question(lines: list[str], blk: Block) -> bool:
    return all(lines[i].strip().endswith("?") for i in range(blk.start, blk.end) if lines[i].strip())


def _fixed_width(lines: list[str], blk: Block):
    """A fixed-width table in a code fence: (header cells, [(line, cells)]) or None.

    Columns come from the dashed rule under the header. A row whose first column is empty
    continues the row above (a cell that wrapped): its text is appended to that row's cells.
    """
    inner = list(range(blk.start + (1 if blk.kind == "fence" else 0), blk.end - (1 if blk.kind == "fence" else 0)))
    content = [i for i in inner if lines[i].strip()]
    if len(content) < 3 or not RULE_LINE.match(lines[content[1]]) or not re.search(r"[-=]{3}", lines[content[1]]):
        return None
    rule = lines[content[1]]
    if "|" in lines[content[0]] and "|" in rule:
        head = split_row(lines[content[0]])
        return head, [(i, split_row(lines[i])) for i in content[2:] if not RULE_LINE.match(lines[i])]
    spans = [(m.start(), m.end()) for m in re.finditer(r"[-=:]+", rule.replace("+", " ").replace("|", " "))]
    if len(spans) < 3:
        return None
    starts = [s for s, _ in spans]

    def cells(i: int) -> list[str]:
        ln = lines[i].rstrip()
        out = [ln[a:b].strip() for a, b in zip(starts, starts[1:] + [max(len(ln), starts[-1])])]
        out[-1] = ln[starts[-1]:].strip()
        return out

    head = cells(content[0])
    rows: list[tuple[int, list[str]]] = []
    for i in content[2:]:
        if RULE_LINE.match(lines[i]):
            continue
        c = cells(i)
        if rows and not c[0]:
            prev = rows[-1][1]
            for k, v in enumerate(c):
                if v:
                    prev[k] = f"{prev[k]} {v}".strip()
            continue
        rows.append((i, c))
    return head, rows


def _in_kept(line: str, kept: str, whole: set[str]) -> bool:
    """``line in kept`` (``kept``: normalized rendered lines joined by " \\n "; a normalized line
    holds no newline, so it can only be inside one of them): a set lookup of the whole lines first,
    the substring scan only for the rest. The scan alone made a 40,000-line log in a doc take
    minutes to import (every line scanned the whole rendered text)."""
    return line in whole or line in kept


def read_document(text: str, path: str = "<text>") -> tuple[list[Parsed], list[Skipped]]:
    return _Reader(text, path).read()
