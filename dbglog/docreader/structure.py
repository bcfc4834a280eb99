"""Structure that is certain: what a document says by its shape, read by rule.

Only shapes whose meaning does not depend on wording are read here: the protocol's labelled fields
(``**Hypothesis:**``, ``**What we did:**``, ``**Result:**`` ... in any spelling), an attempt heading
(``Attempt 3: title``), the investigation's header fields (``Status:``, ``Symptom:``), a key-differences
table (markdown or fixed-width in a fence), a list under a next-steps heading, a template or protocol
section. Everything else is judged unit by unit (scorer) and linked (linker).
"""

from __future__ import annotations

import bisect
import itertools
import re
from dataclasses import dataclass, field

from dbglog.docreader.cues import (BARE_CAPTION, Context, _foreign_label, caption_names_tries, heading_role, language,
                                   outcome_of, plain)
from dbglog.docreader.units import _LIST_START, Doc, Unit
from dbglog.docreader.vocab import ATTEMPT_LABELS, INV_LABELS, attempt_head, attempt_noun, is_placeholder, label_of, placeholder_free, status_word
from dbglog.util import recache

# "Attempt 3: title", "Fix #2 - title", "Try 4", "Experiment 2.1", "Attempt 3 (CANCELED): title": the protocol's
# numbered attempt heading.
ATTEMPT_HEAD = attempt_head()
TEMPLATE_HEAD = recache.compile(r"\btemplates?\b|\bvorlage\b|模板", re.I)
DIFF_HEAD = recache.compile(r"\b(?:key differences|differences|comparison|vs\.?|versus)\b|对比|区别|unterschiede", re.I)
_FIELDS = {"hypothesis", "did", "result", "conclusion", "outcome", "expected"}


@dataclass
class Section:
    head: Unit
    first: int  # heading line
    last: int  # last line of the subtree
    own_last: int  # last line before the first child heading
    children: list[Section] = field(default_factory=list)
    parent: Section | None = None

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()

    def inside(self, other: Section) -> bool:
        p = self.parent
        while p is not None:
            if p is other:
                return True
            p = p.parent
        return False


def sections(doc: Doc) -> list[Section]:
    """The heading tree (top-level sections), each with its line span."""
    heads = [u for u in doc.units if u.kind == "heading"]
    n = len(doc.lines)
    # A post signed in a paragraph ("**bob** commented on ...") ends the form sections of the post before it.
    at = {h.first for h in heads}
    cuts = sorted(line for line, _ in doc.posts if line not in at)
    out: list[Section] = []
    stack: list[Section] = []
    for k, h in enumerate(heads):
        nxt = next((x.first for x in heads[k + 1:] if x.level <= h.level), n)
        if h.level >= 3 and cuts:
            c = bisect.bisect_right(cuts, h.first)
            nxt = min(nxt, cuts[c]) if c < len(cuts) else nxt
        child = heads[k + 1].first if k + 1 < len(heads) else n
        s = Section(h, h.first, nxt - 1, min(child, nxt) - 1)
        while stack and stack[-1].head.level >= h.level:
            stack.pop()
        if stack:
            s.parent = stack[-1]
            stack[-1].children.append(s)
        else:
            out.append(s)
        stack.append(s)
    return out


def all_sections(tops: list[Section]) -> list[Section]:
    return [s for t in tops for s in t.walk()]


def is_template(s: Section, doc: Doc) -> bool:
    """A template to copy from: its heading says so, or its title/status are placeholders."""
    if TEMPLATE_HEAD.search(s.head.text) or is_placeholder(s.head.text) and not _titled(s.head.text):
        return True
    own = [doc.lines[i] for i in range(s.first + 1, s.own_last + 1)]
    return any((lab := label_of(x, INV_LABELS)) and lab[0] == "status" and is_placeholder(lab[1]) for x in own)


_WORDS = recache.compile(r"[A-Za-z]{2,}|[\u4e00-\u9fff\u3040-\u30ff\uac00-\ud7a3]")


def _titled(heading: str) -> bool:
    """Whether a heading with a form's placeholder left in it names its story all the same ("[BUG/Help] <title>量化失败：
    RuntimeError: CUDA Error: no kernel image"): six words or CJK characters beside the placeholder, where a template's
    heading has a label and a slot ("Attempt N: <short description>")."""
    return len(_WORDS.findall(placeholder_free(heading))) >= 6


def quiet_sections(tops: list[Section], ctx: Context) -> list[Section]:
    """Sections whose text is never read for attempts: templates, protocol and setup text."""
    out = []
    for s in all_sections(tops):
        # The document's title names the whole story ("CUDA GPU Setup Fix Documentation"): only a template is quiet.
        role = ctx.roles.get(s.head.id) if s.head.level > 1 or s.parent is not None else None
        if is_template(s, ctx.doc) or role == "boilerplate" and s.head.level < 7 or _imperative_heading(s.head.text):
            out.append(s)
    return out


def quiet_lines(quiet: list[Section], ctx: Context) -> set[int]:
    """The lines of the quiet sections, less those of a record of tries inside one ("#### Docker setup (brief)" /
    "##### Troubleshooting log 1: the plugin will not install"): a heading that names its tries is read, wherever
    it sits (unless it is quiet itself, or holds a quiet section)."""
    quiet_ids = {id(q) for q in quiet}
    records = [sub for s in quiet if not is_template(s, ctx.doc) for sub in s.walk()
               if sub is not s and id(sub) not in quiet_ids and sub.head.level < 7
               and ctx.roles.get(sub.head.id) in ("tried", "worked", "failed")]
    out = {i for q in quiet for i in range(q.first, q.last + 1)}
    out -= {i for r in records for i in range(r.first, r.last + 1)}
    return out | {i for q in quiet if any(q.inside(r) for r in records) for i in range(q.first, q.last + 1)}


def _imperative_heading(text: str) -> bool:
    """ "3. Maintain the list", "Before you start: check ...": a rule of a protocol, by its mood."""
    s = plain(re.sub(r"^\W*\d+(?:\.\d+)*[.)]?\s*", "", text))
    words = s.split()
    if len(words) < 3 or words[0].isupper():
        return False  # "UPDATE 2024-11-05" is news, not a rule
    if words[1].lower().rstrip(":") in ("on", "from", "for", "about", "of", "to", "in", "after", "#1", "1", "2"):
        return False  # "Update on the 175B run", "Summary of week 3": the verb's noun, naming news
    return bool(re.match(r"^(?:before you start|maintain|document|summari[sz]e|keep|record|update|check existing|"
                         r"use this|copy this|follow)\b", s, re.I))


def investigations(tops: list[Section], doc: Doc) -> list[Section]:
    """Sections that are a bug each: their own lines carry investigation fields (Status:, Symptom:)."""
    found, keysets = [], []
    every = all_sections(tops)
    templates = [s for s in every if is_template(s, doc)]
    tries = {id(s) for s in every if ATTEMPT_HEAD.match(plain(s.head.text))}
    for s in every:
        if s in templates or any(s.inside(f) for f in found + templates) or id(s) in tries or _under(s, tries):
            # ("### Attempt 4" + "- Problem: OOM at weight sync", or "**Initial issue:**" + "- Error: ..." under it:
            # what that try ran into, not a new bug)
            continue
        if heading_role(s.head.text, language(s.head.text)) in ("lessons", "plan", "options", "boilerplate"):
            continue  # "## Executive Summary" / "**Status**: resolved", "## Conclusion": the story's parts, not bugs
        keys = _header_keys(s, doc) & {"status", "symptom"}
        if keys:
            found.append(s)
            keysets.append(keys)
    if len(found) >= 2 and not set.intersection(*keysets):
        found = []  # a "Problem:" in one section and a "Status:" footer in another: one document, not two bugs
    return found or _restarting(tops, doc)


def _under(s: Section, ids: set[int]) -> bool:
    p = s.parent
    while p is not None:
        if id(p) in ids:
            return True
        p = p.parent
    return False


_HEADER_LINES = 8  # investigation fields stand right under their heading, before the story starts


def _header_keys(s: Section, doc: Doc) -> set[str]:
    """The investigation fields among the first lines under a section's heading (before any code or table)."""
    text, keys, seen = doc.text_lines(), set(), 0
    for i in range(s.first + 1, s.own_last + 1):
        if not doc.lines[i].strip():
            continue
        if i not in text or seen >= _HEADER_LINES:
            break
        seen += 1
        lab = label_of(doc.lines[i], INV_LABELS)
        if lab and not (lab[0] == "status" and _RUN_VERDICT.search(plain(lab[1])[:40]) and not status_word(lab[1])):
            keys.add(lab[0])  # ("**Status:** FAILED" under a model's heading is how a run went, not a bug's state)
    return keys


_RUN_VERDICT = recache.compile(r"\b(?:failed|fail|success(?:ful)?|succeeded|passed|pass|ok|nok|error|crashed|oom|works?|"
                          r"worked|broken)\b", re.I)


def _restarting(tops: list[Section], doc: Doc) -> list[Section]:
    """Sibling sections whose attempt numbering starts over ("Attempt 1, 2" under one bug, "Attempt 1" again
    under the next): one investigation each, even without Status or Symptom fields."""
    level = tops if len(tops) > 1 else (tops[0].children if tops else [])
    starts = []
    for s in level:
        nums = [int(m.group("n")) for c in s.walk() if c is not s
                and (m := ATTEMPT_HEAD.match(plain(c.head.text))) and c.head.text]
        if nums and min(nums) == 1:
            starts.append(s)
    return starts if len(starts) >= 2 else []


def header_fields(s: Section | None, doc: Doc, lo: int, hi: int, tries: bool = False) -> tuple[dict[str, list[str]], set[int]]:
    """Labelled investigation fields among lines lo..hi (inclusive): values and the lines they took. A value
    runs on over the lines under its label until a blank line (a list or fence under it included), or, with
    ``tries``, until a try's field ("**Fix**:"), which ``header_try`` reads."""
    vals: dict[str, list[str]] = {}
    used: set[int] = set()
    cur = None
    depth = -1  # the indent of the list item whose label opened the current value (-1: not an item)
    fence = False
    for i in range(lo, hi + 1):
        line = doc.lines[i]
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
            if cur:
                vals[cur].append(line)
                used.add(i)
            continue
        lab = None if fence or i not in doc.text_lines() else label_of(line, INV_LABELS)
        if tries and lab is None and not fence and _try_field(line):
            cur = None  # "**Fix**: add -t" under "**Root Cause**: ...": the try starts, the bug's field ends
            continue
        if lab and lab[0] != "tags":
            cur = lab[0]
            vals.setdefault(cur, []).append(lab[1])
            used.add(i)
            item = _LABELLED_ITEM.match(line)
            depth = len(item.group(1)) if item else -1
        elif lab:
            cur = None
            vals["tags"] = [lab[1]]
            used.add(i)
        elif cur and depth >= 0 and (sib := _LABELLED_ITEM.match(line)) and len(sib.group(1)) <= depth:
            cur = None  # "- **Status:** running" / "- **NEXT:** monitor the job": a sibling item with its own label
        elif cur and (line.strip() or fence):
            vals[cur].append(line)
            used.add(i)
        elif not line.strip() and cur and not _list_follows(doc, i, hi):
            cur = None
    return vals, used


# A list item that opens with a bold label ("- **NEXT:** monitor the job"): its indent.
_LABELLED_ITEM = recache.compile(r"^(\s*)(?:[-*+]|\d{1,3}[.)])\s+(?:\*\*|__)[^*_\n]{1,60}?[:：]?(?:\*\*|__)")


_TRY_KEYS = ("did", "result", "conclusion", "outcome")  # the fields of a try (not its hypothesis)


def _try_field(line: str) -> bool:
    lab = label_of(line, ATTEMPT_LABELS)
    return lab is not None and lab[0] in _TRY_KEYS


def header_try(doc: Doc, lo: int, hi: int, used: set[int]) -> Fields | None:
    """A bug's own fix among its header fields ("**Error**: ... **Root Cause**: ... **Fix**: add `-t` ..."): the
    labelled try fields there (what was done, its result) as one attempt, each value running on like the bug's
    fields (a fence under it included) until a blank line, a bug field or another try field; with no result of
    its own, the bug's Status ("✅ Confirmed working by user") is how it went. None when no field says what was
    done. ``used``: the lines ``header_fields`` took."""
    if _tries_listed(doc, list(range(lo, hi + 1))):
        return None  # ("- **Mitigations Attempted**:" over its tries: read unit by unit, not as the bug's one fix)
    fields: dict[str, list[str]] = {}
    lines: list[int] = []
    cur = None
    fence = False
    for i in range(lo, hi + 1):
        if i in used:
            cur = None
            continue
        line = doc.lines[i]
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        lab = None if fence else label_of(line, ATTEMPT_LABELS)
        if lab is not None and lab[0] in _TRY_KEYS:
            if lab[0] in fields:
                return None  # a second "Fix:": several tries, read unit by unit
            cur = lab[0]
            fields[cur] = [lab[1]]
            lines.append(i)
        elif cur and (line.strip() or fence):
            fields[cur].append(line)
            lines.append(i)
        elif not line.strip():
            cur = None
    if "did" not in fields:
        return None
    status = [(i, lab[1]) for i in sorted(used) if (lab := label_of(doc.lines[i], INV_LABELS)) and lab[0] == "status"]
    if status and "result" not in fields and "outcome" not in fields:
        fields["result"] = [v for _, v in status]
        lines = sorted({*lines, *(i for i, _ in status)})
    return Fields(None, "", fields, [], lines)


def _list_follows(doc: Doc, i: int, hi: int) -> bool:
    """A blank line inside a field's list ("**Environment:**" + blank + "- GPU: ..."): the value goes on."""
    nxt = next((doc.lines[k] for k in range(i + 1, hi + 1) if doc.lines[k].strip()), "")
    return bool(re.match(r"^\s*(?:[-*+]|\d{1,3}[.)])\s", nxt)) and not label_of(nxt, INV_LABELS)


@dataclass
class Fields:
    """An attempt written with the protocol's labelled fields."""

    number: int | None
    title: str
    fields: dict[str, list[str]]
    lead: list[str]
    lines: list[int]
    tag: str | None = None


def attempt_section(s: Section, doc: Doc) -> Fields | None:
    """A heading that is an attempt: numbered like one, or holding two or more of its labelled fields
    (as ``**Label:**`` lines, or as sub-headings named like a field: ``#### What I did``)."""
    m = ATTEMPT_HEAD.match(plain(s.head.text))
    fields: dict[str, list[str]] = {}
    seen: dict[str, int] = {}
    lead: list[str] = []
    valued = {c.first: _field_heading_value(c.head.text) for c in s.children}
    # (a heading that gives its field a value, "### Result: OOM", names the field only under a numbered try)
    named = {k: field if m or not value else None for k, (field, value) in valued.items()}
    field_kids = [c for c in s.children if named[c.first] in _FIELDS]
    last = field_kids[-1].last if field_kids and len(field_kids) == len(s.children) else s.own_last
    if len({named[c.first] for c in field_kids} & {"did", "result", "conclusion", "outcome"}) >= 2 \
            and not any(ATTEMPT_HEAD.match(plain(c.head.text)) for c in s.walk() if c is not s):
        # "## 7. Final run" over "### 7.1 Done", "### 7.2 Findings", "### 7.3 Evidence files", "### 7.4 Verdict": the
        # protocol's fields as sub-headings, with a sub-section of its own among them; all of it is that try's
        last = s.last
    if m and s.children and all(c.head.level >= 7 and not ATTEMPT_HEAD.match(plain(c.head.text))
                                for c in s.walk() if c is not s):
        last = s.last  # "### Attempt 7" + "**Milestone Achievements:**" and its ticked list: that try's own account
        # (a sub-heading of its own, "### Changes from run 0" over a change table, is read on its own)
    elif m and any(named[c.first] in ("result", "outcome") for c in s.children) \
            and not any(ATTEMPT_HEAD.match(plain(c.head.text)) for c in s.walk() if c is not s):
        # "## Iter1: Lower vLLM memory" over "### Adjustments", "### Result: 5/5 steps completed", "### Logs": a numbered
        # try whose own sub-section says how it went; all of it is that try's account
        last = s.last
    lines = list(range(s.first, last + 1))
    kid_of = {c.first: named[c.first] for c in field_kids}
    cur = None
    fence = False
    for i in lines[1:]:
        line = doc.lines[i]
        if i in kid_of:
            cur = kid_of[i]
            seen[cur] = seen.get(cur, 0) + 1
            value = valued[i][1]
            fields.setdefault(cur, []).extend([value] if value else [])
            continue
        if re.match(r"^\s*(```|~~~)", line):
            fence = not fence
        lab = None if fence else label_of(line, ATTEMPT_LABELS)
        if lab and lab[0] in _FIELDS:
            cur = lab[0]
            seen[cur] = seen.get(cur, 0) + 1
            fields.setdefault(cur, []).append(lab[1])
        elif cur:
            fields[cur].append(line)
        else:
            lead.append(line)
    if not m and (len(set(fields) & {"did", "result", "conclusion", "outcome"}) < 2 or max(seen.values()) > 1):
        return None  # one attempt has each field once: repeated "Result:" lines are several attempts, read unit by unit
    if not m and sum(1 for x in lead if _LIST_START.match(x)) >= 2:
        # "**Attempted Solutions (All Failed)**:" over a list of tries, then "**Solution**: ..." / "**Result**: ...":
        # the list's items are tries of their own before the one the fields tell; read unit by unit
        return None
    if not m and _tries_listed(doc, lines):
        return None  # "- **Mitigations Attempted**:" over "  - batch 8 → Still OOM" items, among the fields: tries of their own
    if m and (seen.get("did", 0) > 1 or _variants(doc, lines) >= 2):
        return None  # "### Attempt 2" over three "Command:"/"Result:" pairs, or "- `cmd -s X` → error" items: its variants
    if not (set(fields) & {"did", "result", "conclusion", "outcome"}) and not any(x.strip() for x in lead) \
            and not (m and fields):  # "### Attempt 7: FP8 rollout" + "- Problem: <the error it hit>" is still a try
        return None
    # "Attempt 3: x" is attempt 3 titled x; "Test 3: x" keeps its own word (the mirror writes "Attempt N: Test 3: x").
    own_word = m and not attempt_noun().match(plain(s.head.text))
    title = plain(s.head.text) if own_word or not m else (m.group("rest") or "")
    from dbglog.docreader.vocab import heading_outcome

    return Fields(int(m.group("n")) if m else None, title.strip(), fields, lead, lines, heading_outcome(s.head.text))




def _tries_listed(doc: Doc, lines: list[int]) -> bool:
    """Does a caption among the lines name the tries listed under it, two items or more?"""
    for k, i in enumerate(lines):
        cap = BARE_CAPTION.match(doc.lines[i])
        if cap and caption_names_tries(cap.group("w").strip(), language(cap.group("w"))):
            items = itertools.takewhile(lambda j: doc.lines[j].strip(), lines[k + 1:])
            if sum(1 for j in items if _LIST_START.match(doc.lines[j])) >= 2:
                return True
    return False


def field_runs(s: Section, doc: Doc) -> list[Fields]:
    """ "### Trial 1" over "Command:" / "Error log:" / "Fix:" / "Output:" (sub-headings or ``**Label:**`` lines, each
    value the block below it): every "what was done" field opens a try, and the fields after it, up to the next one,
    are that try's; the lines before it (its setup: "#### Docker image: ...") lead it. Two or more such tries with
    a result among them, or nothing (one try with each field once is ``attempt_section``'s)."""
    if any(ATTEMPT_HEAD.match(plain(c.head.text)) for c in s.walk() if c is not s) or \
            _tries_listed(doc, list(range(s.first, s.last + 1))):
        return []
    heads = {c.first: c for c in s.walk() if c is not s}
    runs: list[Fields] = []
    lead: list[int] = []
    cur, key, fence = None, None, False
    for i in range(s.first + 1, s.last + 1):
        line = doc.lines[i]
        if i in heads:
            lab = (_field_heading(heads[i].head.text), "")
        else:
            lab = None if fence else label_of(line, ATTEMPT_LABELS)
            fence = fence ^ bool(_FENCE.match(line))
        if lab and lab[0] == "did":
            cur, key = Fields(None, "", {"did": [lab[1]]}, [doc.lines[k] for k in lead], [*lead, i]), "did"
            runs.append(cur)
            lead = []
        elif lab and lab[0] in _FIELDS and cur is not None:
            key = lab[0]
            cur.fields.setdefault(key, []).append(lab[1])
            cur.lines.append(i)
        elif i in heads:
            cur, key = None, None  # a heading of another kind ("#### Docker image: ...", "### Trial 2") leads the next
            lead.append(i)
        elif cur is not None:
            cur.fields[key].append(line)
            cur.lines.append(i)
        elif line.strip():
            lead.append(i)
    told = any(set(r.fields) & {"result", "outcome", "conclusion"} for r in runs)
    if len(runs) < 2 or not told or any(r.fields["did"][0].strip() for r in runs):
        return []  # ("1. **Action**: restricted NCCL to eth0"): a label with its value on its line is read unit by unit
    for r in runs:  # (titled by the first line it ran, not by the fence around it)
        r.title = next((x.strip() for x in r.fields["did"] if x.strip() and not _FENCE.match(x)), "")
    return [r for r in runs if r.title]  # (a "### Configurations" left empty is a form not filled in yet)


def fields_only(s: Section) -> bool:
    """Are a section's sub-headings all a try's fields ("### Configurations", "### Performance"), none a try of its
    own ("## 17. Break the fallback down" over its "### 17.2 Done")?"""
    return bool(s.children) and all(_field_heading(c.head.text) for c in s.children)


_FENCE = recache.compile(r"^\s{0,3}(?:```|~~~)")


def _field_heading(text: str) -> str | None:
    """The protocol field a sub-heading names, in any spelling or language ("#### What I did", "### 17.3 Results",
    "### 18.4 判定"): its section number off. (A heading that gives the field a value, "### Result: OOM", is one only
    under a numbered try: ``attempt_section``.)"""
    field, value = _field_heading_value(text)
    return None if value else field


def _field_heading_value(text: str) -> tuple[str | None, str]:
    """``_field_heading``'s field, and the value the heading gives it after a colon ("Result: OOM during backward")."""
    name = re.sub(r"^\d{1,3}(?:\.\d{1,3})*[.)]?\s+", "", plain(text)).strip()
    # ("Results (excerpt)"; the spaces before it go with rstrip: a pattern opening on \s* tried every space)
    name = re.sub(r"[（(][^（()）]{0,20}[)）]$", "", name).rstrip().rstrip(":： ")
    if name.lower() in ATTEMPT_LABELS:
        return ATTEMPT_LABELS[name.lower()], ""
    lab = _foreign_label(name + "：")
    if lab:
        return lab[0], ""
    head, colon, value = name.partition(": ")
    if colon and head.lower() in ATTEMPT_LABELS and value.strip():
        return ATTEMPT_LABELS[head.lower()], value.strip()
    return None, ""


_VARIANT = recache.compile(r"^\s*[-*+]\s+`[^`]+`.{0,40}?\s(?:→|->|=>)\s*\S")


def _variants(doc: Doc, lines: list[int]) -> int:
    """List items that each run a command and say how it went ("- `nvagetbios -s PROM` → invalid signature")."""
    return sum(1 for i in lines if _VARIANT.match(doc.lines[i]))


def is_diff_section(s: Section, ctx: Context) -> bool:
    return bool(DIFF_HEAD.search(s.head.text))


def is_plan_section(s: Section, ctx: Context) -> bool:
    """Next steps (and recommendations, options: proposals nobody ran) under their heading."""
    if s.head.level == 1 and s.parent is None and s.children:
        return False  # the title names the whole story ("GPU Recovery Guide"): its sections keep their own roles
    role = ctx.roles.get(s.head.id)
    return role in ("plan", "options") and not _imperative_heading(s.head.text) \
        and not (role == "options" and _items_tell_how_they_went(s, ctx))


def _items_tell_how_they_went(s: Section, ctx: Context) -> bool:
    """ "## Workarounds" over "- `-Minline=reshape`: restores the collapse", "- plain dummies: fixed part of the loss",
    "- inline body: recovered the full loss for us": options each told with how it went when tried are tries, not
    options nobody ran. The section's first list, two items or more, most of them with a verdict of their own."""
    items: dict[int, list[str]] = {}
    first_list = None  # (the list right under the heading: the options themselves, not a list of caveats further down)
    for u in ctx.doc.units:
        if s.first < u.first <= s.own_last and u.item >= 0 and u.depth <= 1:
            first_list = u.group if first_list is None else first_list
            if u.group == first_list:
                items.setdefault(u.item, []).append(u.text)
    told = sum(1 for texts in items.values() if outcome_of(" ".join(texts), ctx.lang) in ("worked", "failed", "partial"))
    return len(items) >= 2 and told * 2 > len(items)
