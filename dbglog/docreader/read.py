"""The reader: units (segmenter) → certain structure (structure) → judged units (scorer) → attempts
(linker) → investigations, with every line kept (free sections, verified by rendering)."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from pathlib import Path

from dbglog.docreader import learned
from dbglog.docreader import linker as linking
from dbglog.docreader import structure as st
from dbglog.docreader.columns import ATTEMPT_COL
from dbglog.docreader.cues import (_KNOB, _PASTED, HEADER_TRIES, PLAN_LEAD, Context, column_roles, context, language, me_too,
                                   outcome_of, plain, row_roles)
from dbglog.docreader.scorer import Judged, judge
from dbglog.docreader.text import (demote_headings, field_value, item_title, make_step, one_line, parse_files,
                                   section_heading, span_lines, status_from_title, verdict_free)
from dbglog.docreader.units import CJK_CHAR, FENCE_LINE, Doc, Unit, echoed_quotes, segment
from dbglog.docreader.vocab import ATTEMPT_LABELS, FIX_FIELD, INV_LABELS, attempt_noun, heading_key, label_of, status_word
from dbglog.docreader.yardstick import _probe, counts, kept_text, norm
from dbglog.core import outcome as outcomes
from dbglog.core.markdown import ParseError, split_row, strip_blank
from dbglog.core.model import BOOKKEEPING_SECTIONS, Attempt, Difference, Investigation, NextStep, Section
from dbglog.util import recache
from dbglog.util.errors import DbglogError


@dataclass
class Parsed:
    inv: Investigation
    line: int  # 1-based line of the investigation heading
    key: str  # idempotence key within its source file
    items: list[tuple[str, str, int]] = field(default_factory=list)  # (kind, ref, line)
    canonical: bool = False
    recognized: dict = field(default_factory=dict)
    verified: bool = False
    judged: list[Judged] = field(default_factory=list)  # every unit with its label (import --explain)
    taken: frozenset[int] = frozenset()  # 0-based lines certain structure took (a review never asks about them)


def _a_story(doc: Doc, lines: set[int], least: int = 12) -> bool:
    """Do these lines tell more than a preamble: ``least`` sentences, rows or commands at least?"""
    return sum(1 for u in doc.units if u.kind in ("sentence", "row", "command") and u.first in lines) >= least


# A heading that is a try's noun and number ("Attempt 2 Log", "Versuch 3", "尝试2")
_NUMBERED_HEAD = recache.compile(attempt_noun().pattern + r"\s*#?\s*\d{1,4}(?!\d)", re.I)
_FRONT_TITLE = recache.compile(r"^title:\s*(?P<t>.+?)\s*$", re.M)


def _front_title(units) -> tuple[int, str] | None:
    """(line, title) of the document's YAML front matter ``title:``, when it has one."""
    front = next((u for u in units if u.kind == "front"), None)
    m = _FRONT_TITLE.search(front.text) if front is not None else None
    t = m.group("t").strip().strip("\"'").strip() if m else ""
    return (front.first, t) if t else None




def _told_result(u: Unit, measured: set[int] = frozenset()) -> bool:
    """A command whose comment is what it printed or how it went, not a caption of what it is; a results table's
    row of a run and what it measured (``linking.measured_rows``)."""
    return (u.kind == "command" and bool(u.comment) and u.comment != u.desc) or u.id in measured


_AGAIN = recache.compile(r"\b(?:again|repeat(?:ed)?|re-?ran|re-?run|rerun|retried|retry|second|twice|same)\b", re.I)


def _recap_key(title: str) -> frozenset:
    """The words a try is told in, for telling a restatement from a try (empty: too few to tell, or told as again)."""
    t = plain(title).casefold()
    if _AGAIN.search(t):
        return frozenset()
    words = frozenset(w for w in re.findall(r"[\w.+=/-]+", t) if len(w) > 1 and w not in _RECAP_STOP)
    return words if len(words) >= 3 else frozenset()


def _measured_apart(a: Attempt, b: Attempt) -> bool:
    """Did two runs of one setting measure different things ("MBS 1: 29 s, 47 TFLOPs" and, in the next table,
    "MBS 1: 23 s, 44 TFLOPs")? Then the second is another run, not a recap of the first."""
    na, nb = _NUMBERS.findall(a.result), _NUMBERS.findall(b.result)
    return bool(na and nb) and na != nb


_NUMBERS = recache.compile(r"\d+(?:\.\d+)?")
_RECAP_STOP = frozenset("the a an and or with to of in on for by at from it its this that was were is are be".split())


def _thin(text: str) -> bool:
    """Too little to be a try: under three words, no setting, flag, command or file named ("Run 1", "fp32",
    "Summary", "해결:"), and under four CJK characters."""
    t = plain(text)
    return len(re.findall(r"[^\W\d_]{2,}|\d+", t)) < 3 and not _KNOB.search(t) and len(CJK_CHAR.findall(t)) < 4


@dataclass
class Skipped:
    line: int
    title: str
    reason: str


@dataclass
class _Scope:
    bug: st.Section | None
    lines: set[int]  # every line this investigation keeps
    read: set[int]  # the lines whose units may become attempts


_REPRO = recache.compile(r"\b(?:repro(?:duce|duction|ducer)?|minimal|standalone|isolate)\b", re.I)
_FIX = recache.compile(r"\b(?:fix|workaround|avoid|resolve|solve)\b", re.I)


_CONFLICT = recache.compile(r"^(<{7}|>{7})( |$)")


def _check_markers(lines: list[str], path: str) -> None:
    """A file in the middle of a merge is refused where the first marker stands, not read half-merged."""
    fence = None
    for i, line in enumerate(lines):
        m = FENCE_LINE.match(line)
        if m:
            fence = None if fence and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) else (
                fence or m.group(1))
            continue
        if fence is None and _CONFLICT.match(line):
            raise ParseError("git conflict markers; resolve the merge in this file, then retry", path, i + 1)


def read_document(text: str, path: str = "<text>", corrections=None, explain: bool = False,
                  model: learned.Models | learned.Model | None | bool = True) -> tuple[list[Parsed], list[Skipped]]:
    """Investigations read out of one document. ``corrections`` (review.Corrections: a reviewed checklist, an
    agent's or a model's extraction) say which attempts it holds; the reader does the rest. ``model``: the
    learned passes' models (True: the shipped ones; None or False: the rules alone; learned.models())."""
    _check_markers(text.split("\n"), path)
    doc = segment(text)
    ctx = context(doc)
    tops = st.sections(doc)
    quiet = st.quiet_sections(tops, ctx)
    quiet_lines = st.quiet_lines(quiet, ctx)
    # (an extraction may say the document is one story, however its sections read: then it is one investigation)
    bugs = [] if getattr(corrections, "one", False) else st.investigations(tops, doc)
    judged = _Judgements(doc, ctx, learned.models(model), every=explain)
    n = len(doc.lines)
    if not bugs:
        scopes = [_Scope(None, set(range(n)), set(range(n)) - quiet_lines)]
    else:
        scopes = []
        inside = set()
        for b in bugs:
            span = set(range(b.first, b.last + 1))
            inside |= span
            scopes.append(_Scope(b, span, span - quiet_lines))
        rest = set(range(n)) - inside
        if len(bugs) > 1 and _a_story(doc, {i for i in rest - quiet_lines if i < bugs[0].first}):
            # A write-up whose own story (its tries, before "## Troubleshooting" / "### Error: X" entries with their
            # fields) is more than a preamble: that story is an investigation of its own, read as one.
            scopes.insert(0, _Scope(None, rest, rest - quiet_lines))
        else:
            scopes[0].lines |= rest
            if len(bugs) == 1:
                scopes[0].read |= rest - quiet_lines
    skipped = [Skipped(s.first + 1, s.head.text, "template: kept as text, not read as an investigation") for s in quiet if st.is_template(s, doc)
               and not any(s.inside(q) for q in quiet)]
    check_homes(corrections, len(scopes))
    views = _views(doc, tops, scopes)
    out = [_Build(doc, ctx, v, judged, sc, path, corrections, k).parsed() for k, (sc, v) in enumerate(zip(scopes, views))]
    _unique_keys(out)
    return out, skipped


def check_homes(corrections, n: int) -> None:
    """An extraction that files an attempt or a step under an investigation the document does not have is refused
    (one line, before anything is written)."""
    for what, cs in (("attempt", getattr(corrections, "attempts", None) or []),
                     ("next step", getattr(corrections, "steps", None) or [])):
        for k, c in enumerate(cs, 1):
            if c.home is not None and c.home >= n:
                raise DbglogError(f"{corrections.shown}: {what} {k} is filed under investigation {c.home}, but the document is "
                                  f"read as {n} (0 to {n - 1}); cite an index `investigations` lists")


def _unique_keys(parsed: list[Parsed]) -> None:
    """Two investigations of one title in one document ("## Session notes" per day) keep apart: the second
    is keyed "title #2", and so on, in document order, so a re-import finds each again. (The key is what an
    import is remembered by: a shared one made every later investigation an update of the first.)"""
    seen: dict[str, int] = {}
    for p in parsed:
        n = seen[p.key] = seen.get(p.key, 0) + 1
        if n > 1:
            p.key = f"{p.key} #{n}"


@dataclass
class _View:
    """One investigation's share of the document: its units and sections, and the heading each line is under."""

    units: list
    sections: list
    last_heading: list


def _views(doc: Doc, tops, scopes: list[_Scope]) -> list[_View]:
    owner = [-1] * len(doc.lines)
    for k, sc in enumerate(scopes):
        for i in sc.lines:
            owner[i] = k
    last: list = [None] * len(doc.lines)
    heads = {u.first: u for u in doc.units if u.kind == "heading"}
    cur = None
    for i in range(len(doc.lines)):
        cur = heads.get(i, cur)
        last[i] = cur
    views = [_View([], [], last) for _ in scopes]
    for u in doc.units:
        if 0 <= u.first < len(owner) and owner[u.first] >= 0:
            views[owner[u.first]].units.append(u)
    for s in st.all_sections(tops):
        if owner[s.first] >= 0:
            views[owner[s.first]].sections.append(s)
    return views


class _Judgements:
    """Units judged on demand: a unit inside structure that is certain is never scored (a DEBUG.md of
    thousands of protocol attempts costs no cue reading); ``every`` scores them all (import --explain)."""

    def __init__(self, doc: Doc, ctx: Context, models: learned.Models, every: bool = False):
        self.doc, self.ctx, self.done = doc, ctx, {}
        # the learned passes ask about a unit with the same cues the scorer read (each unit judged once)
        self.recall = learned.Recall(doc.units, lambda u: self.get(u).features, models) if models else None
        if every:
            for u in doc.units:
                self.get(u)

    def get(self, u) -> Judged:
        j = self.done.get(u.id)
        if j is None:
            j = self.done[u.id] = judge(u, self.ctx)
        return j

    def units(self, skip: set[int], units) -> list[Judged]:
        return [self.get(u) if u.kind in ("sentence", "command", "row") else self._plain(u)
                for u in units if u.first not in skip or u.kind == "code"]

    def _plain(self, u) -> Judged:
        return self.done.get(u.id) or Judged(u, "context", 1.0, {}, [])

    def within(self, units) -> list[Judged]:
        return [self.done[u.id] for u in units if u.id in self.done]


class _Build:
    def __init__(self, doc: Doc, ctx: Context, view: _View, judged: _Judgements, scope: _Scope, path: str,
                 corrections=None, index: int = 0):
        self.doc, self.ctx, self.judged, self.scope, self.path = doc, ctx, judged, scope, path
        self.index = index  # (its place among the document's investigations: an extraction may file entries by it)
        # This investigation's own units and sections: a document of hundreds of bugs is read in one pass each.
        self.units, self.sections, self.last_heading = view.units, view.sections, view.last_heading
        self.firsts = [u.first for u in self.units]  # (units are in source order: a section's are a slice)
        self.corrections = corrections
        self.took: dict[int, list[int]] = {}  # id(attempt) -> the lines a protocol attempt took
        self.lines = doc.lines
        self.owned: set[int] = set()
        self.spans: list[tuple[str, list[int]]] = []  # tables read as structure: kept whole if a line is lost
        self.inv = Investigation(id="", title="")
        self.items: list[tuple[str, str, int]] = []
        self.attempts: list[tuple[int, Attempt]] = []
        self.steps: list[tuple[int, NextStep]] = []
        self.step_took: dict[int, tuple[int, list[int]]] = {}  # a listed step: its list's heading line and its lines
        self.said_plans: set[int] = set()  # the units ``_planned`` read as plans (their lines may hold a try too)
        self.titled = -1  # the 0-based line of the heading that names the investigation, if one does

    def parsed(self) -> Parsed:
        first = self._title()
        self.items_line = first - 1
        self._header()
        self._sections()
        self._loose()
        if self.corrections is not None:
            self._correct()
            if self.corrections.steps is not None:
                self._correct_steps()
        self._finish(first)
        self._free()
        verified = self._verify()
        key = heading_key(self.inv.title) or f"line:{first}"
        return Parsed(self.inv, first, key, self.items, recognized=self._recognized(), verified=verified,
                      judged=self.judged.within(self.units), taken=frozenset(self.owned))

    # --- title and header ------------------------------------------------------------------

    def _title(self) -> int:
        b = self.scope.bug
        if b is not None and self._doc_title_over(b):
            b = None  # (the document's own title names it: read as a document with no bug section of its own)
        if b is not None:
            self.owned.add(b.first)
            self.titled = b.first
            title, status = status_from_title(plain(b.head.text))
            self.inv.title = one_line(title) or f"{Path(self.path).stem or 'Untitled'} (line {b.first + 1})"
            if status:
                self.inv.status = status
            return b.first + 1
        # ("# Attempt 2 Log", "## Attempt 3": a log's numbered tries are its sections, none of them its title)
        heads = [u for u in self.units if u.kind == "heading" and not _NUMBERED_HEAD.match(plain(u.text))]
        top = min(heads, key=lambda u: (u.level, u.first)) if heads else None
        named = _front_title(self.units)
        if named and (top is None or top.level > 1 or sum(1 for h in heads if h.level == top.level) > 1):
            # (a blog post's front matter names it, "title: ..."; its headings are its sections, "# Introduction"
            # among them)
            title, status = status_from_title(named[1])
            self.inv.title = one_line(title)[:120]
            if status:
                self.inv.status = status
            return named[0] + 1
        if top is not None and top.level <= 2:
            self.owned.add(top.first)
            self.titled = top.first
            title, status = status_from_title(plain(top.text))
            self.inv.title = one_line(title) or Path(self.path).stem
            if status:
                self.inv.status = status
            return top.first + 1
        first = next((u for u in self.units if u.kind == "sentence"), None)
        self.inv.title = (one_line(plain(first.text))[:100] if first else "") or Path(self.path).stem or "Untitled"
        return (first.first + 1) if first else 1

    def _doc_title_over(self, b) -> bool:
        """Is this one bug section a small part of a document that has its own title above it ("# moe_compute hang
        — investigation log", then "## The bug (what hangs)" with a Symptom: line among a session's twenty sections)?
        Then the document is the investigation and its title is the title."""
        h1 = next((u for u in self.units if u.kind == "heading" and u.level == 1), None)
        if h1 is None or h1.first >= b.first or len(self.scope.lines) < len(self.lines) or any(
                u.kind == "heading" and u.level == 1 and u.first != h1.first for u in self.units):
            return False
        scored = [u for u in self.units if u.kind in ("sentence", "row", "command")]
        inside = sum(1 for u in scored if b.first <= u.first <= b.last)
        return inside * 4 < len(scored)

    def _header(self) -> None:
        b = self.scope.bug
        if b is not None:
            lo, hi = b.first + 1, b.own_last
        else:
            heads = [u for u in self.units if u.kind == "heading"]
            title_line = min(self.owned) if self.owned else -1
            nxt = next((h.first for h in heads if h.first > title_line), len(self.lines))
            lo, hi = title_line + 1, nxt - 1
        # A legend of the fields the entries use ("- **Fix**: How we resolved it") describes the template: the header's
        # fields come after it, if any
        legend = [u.last for u in self.units if u.item >= 0 and u.group in self.ctx.legend and lo <= u.first <= hi]
        lo = max([lo] + [k + 1 for k in legend])
        # In one bug's header, which names each field once, a try's field ("**Fix**:") ends the bug's field before
        # it and is read as the bug's fix; "Problem:" after "Problem:" is a list of bugs, read item by item.
        vals, used = st.header_fields(b, self.doc, lo, hi, tries=b is not None)
        keys = [lab[0] for i in sorted(used) if (lab := label_of(self.lines[i], INV_LABELS))]
        single = bool(keys) and len(keys) == len(set(keys))
        if keys and not single:
            # "- **Problem:** ... / - **Status:** solved." entry after entry: a log of issues, each with its own fields,
            # not the investigation's (whose own fields, if any, come before the first of them)
            cut = min(i for i in used if (lab := label_of(self.lines[i], INV_LABELS)) and keys.count(lab[0]) > 1)
            vals, used = st.header_fields(b, self.doc, lo, cut - 1) if cut > lo else ({}, set())
        self._set_fields(vals)
        if b is None and "status" not in vals:
            used |= self._summary_status()
        fix = st.header_try(self.doc, lo, hi, used) if b is not None and single else None
        if fix is not None:
            self._protocol_attempt(fix)
        # A status line that says more than the status ("Open — not yet root-caused") stays as written too.
        self.owned |= {i for i in used if (label_of(self.lines[i], INV_LABELS) or ("", ""))[0] != "status"
                       or len(plain(self.lines[i]).split()) <= 3}
        for s in self.sections:
            key = _FIELD_SECTIONS.get(plain(s.head.text).lower().rstrip(": "))
            if key and s.first in self.scope.read and not s.children and not getattr(self.inv, key):
                body = list(range(s.first + 1, s.own_last + 1))
                self._set_fields({key: [self.lines[i] for i in body]})
                self.owned |= {s.first, *body}

    def _summary_status(self) -> set[int]:
        """A write-up with no status under its title gives it at the head of its summary ("## Executive Summary" /
        "**Status**: ✅ RESOLVED"): the status only, read from the first summary section's header."""
        for sec in self.sections:
            if self.ctx.roles.get(sec.head.id) != "lessons" or sec.first not in self.scope.read:
                continue
            vals, used = st.header_fields(None, self.doc, sec.first + 1, min(sec.own_last, sec.first + 8))
            if "status" in vals and status_word(" ".join(vals["status"])):
                self._set_fields({"status": vals["status"]})
                return {i for i in used if (label_of(self.lines[i], INV_LABELS) or ("", ""))[0] == "status"}
            return set()
        return set()

    def _set_fields(self, vals: dict[str, list[str]]) -> None:
        for key, buf in vals.items():
            if key == "status":
                w = status_word(" ".join(buf))
                if w:
                    self.inv.status = w
            elif key == "related_files":
                self.inv.related_files = parse_files(buf)
            elif key == "tags":
                self.inv.tags = [t.strip() for t in re.split(r"[,;]\s*|\s+(?=#)", " ".join(buf)) if t.strip()][:20]
            elif key in ("symptom", "environment", "root_cause"):
                setattr(self.inv, key, field_value(buf))

    # --- structure that is certain -------------------------------------------------------------

    def _sections(self) -> None:
        for s in self.sections:
            if s.first in self.owned and s.first == self.titled and s.first in self.scope.read and st.fields_only(s):
                # ("## 8*8 GPUs" over "### Configurations" / "### Performance" pairs: the heading that names the
                # investigation may head a run of fields too)
                self._runs(st.field_runs(s, self.doc))
                continue
            if s.first not in self.scope.read or s.first in self.owned:
                continue
            f = st.attempt_section(s, self.doc)
            if f is not None:
                self._protocol_attempt(f)
            elif runs := st.field_runs(s, self.doc):
                self._runs(runs)
            elif st.is_diff_section(s, self.ctx):
                self._differences(s)
            elif st.is_plan_section(s, self.ctx):
                self._steps(s)
            elif self._proposed(s):
                self._steps_of([(list(range(s.first, s.own_last + 1)), *self._entry_title(s))], s)

    def _runs(self, runs: list[st.Fields]) -> None:
        """A section's runs of fields, each an attempt; those that only said what they measured worked when others
        of them failed (``linking.ran_beside_failures``)."""
        before = len(self.attempts)
        for r in runs:
            self._protocol_attempt(r)
        made = [a for _, a in self.attempts[before:]]
        ran = linking.ran_beside_failures([a.outcome for a in made],
                                          [bool(linking.MEASUREMENT.search(a.result)) for a in made])
        for a, oc in zip(made, ran):
            a.outcome = oc

    def _proposed(self, s: st.Section) -> bool:
        """ "### Solution 4: per-head K scales" with nothing said of running it: a proposal, kept as a next step."""
        m = linking.ENTRY.match(plain(s.head.text))
        if not m or s.head.level == 1:
            return False
        own = " ".join(self.lines[i] for i in range(s.first + 1, s.own_last + 1))
        said = outcome_of(own, self.ctx.lang) if own.strip() else None
        if m.group("kw") and linking._PROPOSAL_KW.match(m.group("kw")):
            return said in (None, "untested")
        return said == "untested"  # "### 3c. upgrade to ROCm 6.3" + "Result: not done": listed, never run

    def _entry_title(self, s: st.Section) -> tuple[str, list[str]]:
        body = [self.lines[i].strip() for i in range(s.first + 1, s.own_last + 1) if self.lines[i].strip()]
        title = re.sub(r"^\W*(?:(?:option|step|idea|fix|solution|alternative)\s*#?(?:\d{1,2}|[A-Z])|\d{1,2})"
                       r"\s*[:.)—–-]+\s*", "", plain(s.head.text), flags=re.I) or plain(s.head.text)
        return title, body[:1]

    def _protocol_attempt(self, f: st.Fields) -> None:
        vals = {k: field_value(v) for k, v in f.fields.items()}
        lead = field_value(f.lead)
        did = vals.get("did") or lead
        hyp = vals.get("hypothesis", "")
        if lead and vals.get("did") and not hyp:
            hyp = lead
        result, conclusion = vals.get("result", ""), vals.get("conclusion", "")
        said = vals.get("outcome", "")
        fixed = self._fixed_problem(f)
        if fixed:
            # ("**What happened:** ... **Error:** ... **Fix:** ..."): the fields before the fix are the problem it fixed
            hyp, result = f"{hyp}\nProblem: {result}".strip(), ""
        if len(plain(said).split()) > 3:
            # ("### Verdict" / "- The assets are read for both dat and hsaco: confirmed."): what the verdict says is
            # the attempt's conclusion too, not text left behind it
            conclusion = f"{conclusion}\n{said}".strip()
        if vals.get("expected") and not hyp:
            hyp = f"Goal: {vals['expected']}"  # ("### 17.1 Goal" over what the run was to show: why it was run)
        # With no Result or Conclusion field, the text under the heading says how it went ("→ PASS for ...").
        told = result or (did if not vals.get("did") and not conclusion else "")
        out = _protocol_outcome(vals.get("outcome", ""), f.tag, told, conclusion, f.title, hyp)
        if out == "inconclusive" and not (result or conclusion) and _PASTED.match(plain(hyp).strip("` ")):
            out = "failed"  # "### Attempt 7: FP8 rollout" / "- Problem: RuntimeError: CUDA error ...": what it ran into
        if out == "inconclusive" and not (did or result or conclusion):
            out = "untested"
        if fixed and _protocol_outcome(said, f.tag, "", "", f.title, "") == "inconclusive":
            out = "worked"  # (by the label "Fix": a guess, over the labelled docs such fields worked 74 of 93 times)
        a = Attempt(number=f.number or 0, title=one_line(f.title or item_title(did or result)), hypothesis=hyp,
                    did=did, result=result, conclusion=conclusion, outcome=out)
        a.source_lines = [f.lines[0] + 1, f.lines[-1] + 1]
        self.attempts.append((f.lines[0], a))
        self.owned.update(f.lines)
        self.took[id(a)] = list(f.lines)

    def _fixed_problem(self, f: st.Fields) -> bool:
        """Do the fields open with the problem (what happened, the error) and then name the fix ("**Fix:**",
        "Solution:"), with no result after it? An issue write-up's entry: what it hit, then what fixed it."""
        order = list(f.fields)
        if "did" not in order or "result" not in order or order.index("result") > order.index("did") \
                or "outcome" in order:
            return False
        at = next((i for i in f.lines if (lab := label_of(self.lines[i], ATTEMPT_LABELS)) and lab[0] == "did"), None)
        return at is not None and bool(FIX_FIELD.match(self.lines[at]))

    def _within(self, s: st.Section) -> list:
        """The units under section ``s`` (below its heading, up to its own last line)."""
        return self.units[bisect.bisect_right(self.firsts, s.first):bisect.bisect_right(self.firsts, s.own_last)]

    def _differences(self, s: st.Section) -> None:
        for u in self._within(s):
            got = None
            if u.kind == "row" and u.index < 0 and len(u.cells) >= 3:
                if ATTEMPT_COL.search(plain(u.cells[0])) and column_roles(u.cells)[1] > 0:
                    return  # ("## Comparison" over "| Approach | GPU used | Status |": the tries, each with how it went)
                rows = [(v.first, list(v.cells)) for v in self.units if v.kind == "row" and v.group == u.group
                        and v.index >= 0]
                got = (list(u.cells), rows, range(u.first, rows[-1][0] + 2 if rows else u.first + 1))
            elif u.kind == "code":
                fw = _fixed_width(self.lines, u.first, u.last)
                if fw:
                    got = (fw[0], fw[1], range(u.first, u.last + 1))
            if got:
                head, rows, span = got
                self._diff_rows(head, rows)
                self.spans.append((s.head.text, [i for i in span if i < len(self.lines)]))
                self.owned.update(i for i in span if i < len(self.lines))
                self.owned.add(s.first)
                return

    def _diff_rows(self, head: list[str], rows: list[tuple[int, list[str]]]) -> None:
        head = [h.strip() for h in head]
        status_col = next((c for c in range(3, len(head))
                           if re.search(r"status|verdict|tested|ruled|eliminat|result|culprit", head[c], re.I)), None)
        if not self.inv.differences:
            self.inv.labels = (one_line(head[1]) or "Working", one_line(head[2]) or "Broken")
        seen: set[str] = set()
        for i, cells in rows:
            cells = [c.strip() for c in cells] + [""] * (len(head) - len(cells))
            if not any(cells):
                continue
            from dbglog.docreader.text import diff_status

            status = diff_status(cells[status_col]) if status_col is not None else "untested"
            extra = [c for k, c in enumerate(cells) if k >= 3 and k != status_col and c]
            broken = cells[2] + (" · " + " · ".join(extra) if extra else "")
            factor = one_line(cells[0]) or f"(row {len(self.inv.differences) + 1})"
            if factor.casefold() in seen:
                factor = f"{factor} ({i + 1})"
            seen.add(factor.casefold())
            self.inv.differences.append(Difference(len(self.inv.differences) + 1, factor, one_line(cells[1]),
                                                   one_line(broken), status))
            self.items.append(("difference", factor.casefold(), i + 1))

    def _steps(self, s: st.Section) -> None:
        """The entries under a next-steps heading: its list items, else its table's rows, else its sub-headings."""
        self._steps_of(self._step_items(s) or self._step_rows(s) or self._step_headings(s), s)

    def _steps_of(self, entries: list[tuple[list[int], str, list[str]]], s: st.Section) -> None:
        for span, first, extra in entries:
            step = make_step(first, extra, 0)
            if step is None:
                continue
            step.source_lines = [span[0] + 1, span[-1] + 1]
            self.steps.append((span[0], step))
            self.owned.update(span)
            self.step_took[id(step)] = (s.first, list(span))  # (given back as text if an extraction drops it)
        if entries:
            self.owned.add(s.first)

    def _step_items(self, s: st.Section) -> list[tuple[list[int], str, list[str]]]:
        items: dict[int, list] = {}
        for u in self._within(s):
            if u.item >= 0:
                items.setdefault(u.group, []).append(u)
        if not items:
            return []
        group = min(items, key=lambda g: items[g][0].first)
        top = [u for u in items[group] if u.depth == min(v.depth for v in items[group])]
        # ("- [X] 1. I have searched related issues ..." under an issue form's "Checklist": the form's words, no step)
        form = {u.item for u in top if self.judged.get(u).label == "boilerplate"} - {
            u.item for u in top if self.judged.get(u).label != "boilerplate"}
        starts = sorted({u.item for u in top})
        out = []
        for k, start in enumerate(starts):
            stop = (starts[k + 1] - 1) if k + 1 < len(starts) else max(
                v.last for us in items.values() for v in us if v.first >= start)
            span = [i for i in range(start, stop + 1) if not re.fullmatch(r"\s*(?:[-*_]\s*){3,}", self.lines[i])]
            while span and not self.lines[span[-1]].strip():
                span.pop()
            raw = [self.lines[i] for i in span if self.lines[i].strip()]
            if raw and start not in form:
                first = re.sub(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+", "", raw[0])
                extra = [re.sub(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+", "", x).strip() for x in raw[1:]]
                out.append((span, first, extra))
        return out

    def _step_rows(self, s: st.Section) -> list[tuple[list[int], str, list[str]]]:
        out = []
        for u in self._within(s):
            if u.kind == "row" and u.index >= 0:
                cells = [c for c in u.cells if c and not re.fullmatch(r"#?\d{1,3}\.?", c)]
                if cells:
                    out.append(([u.first], cells[0], cells[1:]))
        return out

    def _step_headings(self, s: st.Section) -> list[tuple[list[int], str, list[str]]]:
        """Each sub-heading is a step, unless it groups a list of them ("### Immediate actions" / "1. ..." /
        "2. ..."): then its items are."""
        out = []
        for c in s.children:
            if c.first in self.owned or self.ctx.roles.get(c.head.id) in ("lessons", "boilerplate", "tried", "worked",
                                                                          "failed"):
                continue  # ("### Lessons" under "## Final recommendations": no step, kept as text)
            # (an option's sub-heading groups its details, pros and cons: it stays one step)
            items = self._step_items(c) if "plan" in (self.ctx.roles.get(s.head.id), self.ctx.roles.get(c.head.id)) else []
            last = c.own_last
            while last > c.first and not self.lines[last].strip():
                last -= 1  # (the blank lines after a section are no part of its step)
            out += items if len(items) >= 2 else [(list(range(c.first, last + 1)), *self._entry_title(c))]
        return out

    # --- judged units ---------------------------------------------------------------------------

    def _loose(self) -> None:
        # (the scope's unread lines, not the whole document's: this investigation's units all start inside it, and
        # a document of 164 investigations built a set of all its lines for each of them)
        # (a reply's quote of an earlier post is that post's words: it was read there, and is no try of the reply's)
        skip = (self.scope.lines - self.scope.read) | self.owned | echoed_quotes(self.units)
        before = {id(a) for _, a in self.attempts}  # (certain structure's: their outcomes were said, not guessed)
        heads = {u.id: u for u in self.units if u.kind == "heading" and u.first not in self.owned}
        judged = self.judged.units(skip, self.units)
        taken: set[int] = set()  # the units the attempts were read from
        self.linked: list[tuple[Attempt, list[int]]] = []  # the linker's attempts and their units (the learned gate)
        said = {j.unit.id: j.features for j in judged}
        for f in linking.link(judged, skip, heads, self.ctx.roles, self.ctx.captions, self.ctx.lang):
            if not f.result and len(f.units) <= 1 and f.first == f.last and _thin(f.did) and not (
                    "opens with a past-tense verb" in said.get(f.units[0] if f.units else -1, ())
                    and not f.did.rstrip().endswith((":", "："))):
                continue  # "Run 1", "fp32", "Executive Summary": a name, not a try ("Removed quantization" is one)
            title = f.title or item_title(f.did)
            a = Attempt(number=0, title=one_line(title) or "Attempt", did=f.did, result=f.result, outcome=f.outcome)
            a.source_lines = [f.first + 1, f.last + 1]
            a.who = f.who
            self.attempts.append((f.first, a))
            self.linked.append((a, list(f.units)))
            taken.update(f.units)
        self._captioned_plans(skip, taken)
        guessed = len(self.steps)  # the steps before it came from certain structure (a next-steps list)
        self._planned(judged, skip, {us[0] for _, us in self.linked if us})  # (a plan told after a try's action stays one)
        self._stepped(skip, guessed)
        self._recalled(skip | self._captions_read(taken))
        self._opening_told()
        self._outcomes_learned([a for _, a in self.attempts if id(a) not in before])

    def _opening_told(self) -> None:
        """A document laid out in sections, one of them for what was tried ("## What we tried"), says what
        happened in its opening paragraphs (under the title, before the first section): the problem, a status
        line, a summary. No try is read there; its lines stay as text (over the labelled pools: 9 rows made
        there were junk, 2 were tries)."""
        heads = [u for u in self.units if u.kind == "heading" and u.first in self.scope.read]
        subs = [u for u in heads if u.level >= 2]
        if not subs or not any(self.ctx.roles.get(u.id) == "tried" for u in subs):
            return
        start = min((u.first for u in heads if u.level < subs[0].level), default=-1)
        end = subs[0].first
        if start < 0 or start > end:
            return
        # (certain structure's tries, which own their lines, are never there: a protocol's are under their headings)
        inside = {id(a) for _i, a in self.attempts if id(a) not in self.took and a.source_lines
                  and start < a.source_lines[0] - 1 and a.source_lines[1] - 1 < end}
        self.attempts = [(i, a) for i, a in self.attempts if id(a) not in inside]

    def _outcomes_learned(self, attempts: list[Attempt]) -> None:
        """The learned outcome pass (learned.py): a read attempt's outcome becomes the one the model is confident
        of, from the words of its action and result and the rules' outcome (grouped cross-validation:
        ``bench/reader_eval.py --outcome-cv``)."""
        rec = self.judged.recall
        models = rec.models.outcomes if rec is not None else None
        if not models:
            return
        for a in attempts:
            if linking.bisect_command(a.did or a.title):
                continue  # ("git bisect good <rev>": the command itself says how the test went)
            said = learned.relabel(models, a.title, a.did, a.result, a.conclusion, a.outcome)
            if said is not None:
                # (a look -- "$ pip show torch" and what it printed -- found something; the words of its finding do
                # not make it a fix that failed, whichever pass reads them: ``linker.looked_only``)
                a.outcome = linking.looked_only(said, a.did or a.title, a.result)

    def _captions_read(self, taken: set[int]) -> set[int]:
        """The lines of the captions whose listed tries were read ("We also tried these flags:"): the caption is
        told in its items, not a try of its own for the learned pass to add."""
        by_id = {u.id: u for u in self.units}
        groups = {by_id[k].group for k in taken if k in by_id and by_id[k].item >= 0}
        return {i for g, cap in self.ctx.captions.items() if g in groups and cap in by_id
                for i in range(by_id[cap].first, by_id[cap].last + 1)}

    def _stepped(self, skip: set[int], guessed: int) -> None:
        """The learned next-step pass (learned.py): the rules' sentence-level plans it scores near zero are
        dropped, and the plans it is confident of that nothing read yet become next steps."""
        rec = self.judged.recall
        m = rec.models.steps if rec is not None else None
        if m is None:
            return
        units = [u for u in self.units if u.kind in learned.KINDS]
        at: dict[int, list] = {}  # line -> the units on it (a step's units are found without a scan)
        for u in units:
            for k in range(u.first, u.last + 1):
                at.setdefault(k, []).append(u)
        kept = self.steps[:guessed]
        for i, s in self.steps[guessed:]:
            lo, hi = s.source_lines or (i + 1, i + 1)
            here = [u for k in range(lo - 1, hi) for u in at.get(k, ())]
            ps = [rec.probability(u, m) for u in here]
            # (a plan under its own label, "**Next steps**: run the diagnostics", is structure the model never drops)
            if not ps or max(ps) >= m.drop or any("labelled as a plan" in self.judged.get(u).features for u in here):
                kept.append((i, s))
        self.steps = kept
        covered = [(s.source_lines[0] - 1, s.source_lines[1] - 1) for _, s in self.steps if s.source_lines]
        free = self.scope.read - skip
        for u in units:
            if u.first not in free:
                continue
            p = self.judged.get(u).learned_step = rec.probability(u, m)
            if p < m.threshold or any(lo <= u.last and u.first <= hi for lo, hi in covered):
                continue
            text = PLAN_LEAD.sub("", plain(_row_task(u) if u.kind == "row" else u.text)).strip()
            if self._add_step(u.first, u.last, text):
                covered.append((u.first, u.last))

    def _recalled(self, skip: set[int]) -> None:
        """The learned pass (learned.py): an attempt the linker read from units the model all but rules out is
        dropped (certain structure's never are), and units the rules left alone that the model is confident a
        person would mark as an attempt become attempts, each citing its lines (--explain shows the probability)."""
        rec = self.judged.recall
        m = rec.models.attempts if rec is not None else None
        if m is None:
            return
        if m.drop > 0:
            by_id = {u.id: u for u in self.units if u.kind in learned.KINDS}
            # (a command with the comment that says how it went, "# NOK (page fault)", is structure the model never drops)
            measured = linking.measured_rows(self.units)
            # (nor a row of a table whose header says each row is a try and what came of it: "| Change | Latency |")
            # (nor a row of a table of problems met and how each was fixed: "| Problem | Solution |")
            low = {id(a) for a, us in self.linked if us and all(
                u in by_id and rec.probability(by_id[u], m) < m.drop and not _told_result(by_id[u], measured)
                and HEADER_TRIES not in self.judged.get(by_id[u]).features
                and min(linking.problem_fix_columns(by_id[u])) < 0 for u in us)}
            self.attempts = [(i, a) for i, a in self.attempts if id(a) not in low]
        # (a plan said in a sentence leaves the other sentences of its line free: "So I'll reinstall it. I reinstalled
        # it, to no avail." is a plan and a try)
        planned = self.said_plans
        by_unit = {u.id: u.first for u in self.units}
        free = self.scope.read - skip - ({i for i, _ in self.steps} - {by_unit[k] for k in planned if k in by_unit})
        # ("**Goal:** get CMake configure to succeed": a line labelled as what is wanted is no try, whatever its words)
        # (nor is a reply's "I have the same error, how to solve it?": it reports the bug, not a try)
        cands = [u for u in self.units if u.kind in learned.KINDS and u.first in free and u.id not in planned
                 and (label_of(self.lines[u.first], ATTEMPT_LABELS) or ("", ""))[0] != "expected"
                 and not (u.post > 0 and me_too(u.text))
                 and not (u.kind == "command" and linking.bisect_command(u.text))  # (the rules read a bisection)
                 and not _NOT_TRIES & self.judged.get(u).features.keys()]
        probs = {u.id: rec.probability(u, m) for u in cands}
        for u in cands:
            self.judged.get(u).learned = probs[u.id]
        covered = [(a.source_lines[0] - 1, a.source_lines[1] - 1) for _, a in self.attempts if a.source_lines]
        after = {u.first: u for u in self.units if u.kind == "sentence" and u.first in free}
        code = {u.first: u for u in self.units if u.kind == "code"}
        for g in learned.guesses(cands, probs, m.threshold, covered, free):
            if _thin(" ".join(u.text for u in g.units)):
                continue
            told = self._verdict_after(g, after, probs, m.threshold)
            # (or the error it printed, in a block right below it: "I rebuilt the driver." / "Error! Bad return ...")
            below = linking.error_below(g.units[-1], g.last, code) if told is None else None
            for did, outcome in _tries_of(g):
                if told is not None and outcome == "inconclusive":
                    outcome = told[1]
                elif below is not None and outcome == "inconclusive":
                    outcome = "failed"
                a = Attempt(number=0, title=one_line(item_title(did))[:120] or "Attempt", did=one_line(did),
                            outcome=linking.looked_only(outcome, did),
                            result=told[0].text if told else below[1] if below else "")
                a.source_lines = [g.first + 1, (told[0].last if told else below[0].last if below else g.last) + 1]
                a.who = g.units[0].author
                self.attempts.append((g.first, a))

    def _verdict_after(self, g: learned.Guess, after: dict[int, Unit], probs: dict[int, float],
                       threshold: float) -> tuple[Unit, str] | None:
        """The line right after a learned guess when it is only a verdict on it ("e）pip install flash-attn==1.0.9"
        over "f）成功。"), in its paragraph or item: how the guessed try went."""
        u = after.get(g.last + 1)
        last = g.units[-1]
        if u is None or probs.get(u.id, 0.0) >= threshold or not (
                u.block == last.block or u.item >= 0 and u.item == last.item):
            return None
        said = _verdict_line(u)
        return (u, said) if said else None

    def _planned(self, judged: list[Judged], skip: set[int], taken: set[int]) -> None:
        """Plans said in passing ("Next: run nccl-tests with 32 ranks", "Will try the nightly", "- [ ] repeat on
        rack R15"): next steps, with the lines they were read from, even inside an attempt's paragraph ("The tuned
        config avoids it. I'll open a PR with it."). The sentence stays in its place as text too."""
        done = self._step_starts()
        for j in judged:
            u = j.unit
            if u.first in skip or u.first in done or u.id in taken or u.kind not in ("sentence", "row") \
                    or j.label != "plan" or j.confidence < PLAN_CONFIDENCE:
                continue
            text = PLAN_LEAD.sub("", plain(_row_task(u) if u.kind == "row" else u.text)).strip()
            if (len(text.split()) >= 2 or len(CJK_CHAR.findall(text)) >= 4) and self._add_step(u.first, u.last, text):
                self.said_plans.add(u.id)
        self._labelled_plans(done)

    def _labelled_plans(self, done: set[int]) -> None:
        """A plan under its own label inside a try's section ("- Next step: upload the artifacts and test on a GPU
        runner" under "### Attempt 3"): the section keeps it as text, and it is a next step too."""
        for u in self.units:
            if u.first not in self.owned or u.first not in self.scope.read or u.first in done \
                    or u.kind != "sentence" or not (lead := PLAN_LEAD.match(plain(u.text))):
                continue
            self._add_step(u.first, u.last, plain(u.text)[lead.end():].strip(), least_words=2)

    def _captioned_plans(self, skip: set[int], taken: set[int]) -> None:
        """The items of a list captioned as a plan ("**Next steps:**" over it, "- Something to try" over its nested
        items): a step each, with the item's lines, as under a next-steps heading."""
        done = self._step_starts()
        ends: dict[int, int] = {}  # item -> its last line
        for u in self.units:
            if u.item >= 0:
                ends[u.item] = max(ends.get(u.item, u.last), u.last)
        for u in self.units:
            if u.id not in self.ctx.plans or u.first in skip or u.first in done or u.id in taken:
                continue
            last = ends.get(u.item, u.last)
            self._add_step(u.first, last, plain(" ".join(self.lines[u.first:last + 1]).strip()))

    def _step_starts(self) -> set[int]:
        """The lines (0-based) the steps read so far start on: a plan found again there is not a second step."""
        return {s.source_lines[0] - 1 for _, s in self.steps if s.source_lines}

    def _add_step(self, first: int, last: int, text: str, least_words: int = 0) -> NextStep | None:
        """A next step of ``text``, read from lines ``first``..``last`` (0-based), or None when it makes none (or one
        of fewer than ``least_words`` words)."""
        step = make_step(text, [], 0) if text else None
        if step is None or len(step.text.split()) < least_words:
            return None
        step.source_lines = [first + 1, last + 1]
        self.steps.append((first, step))
        return step

    def _correct(self) -> None:
        """The attempts are exactly the corrected ones: matched by their lines, else read from those lines."""
        by_span: dict[tuple, list] = {}  # (several tries in one sentence share its lines: matched by title, then order)
        for i, a in self.attempts:
            by_span.setdefault(tuple(a.source_lines), []).append((i, a))
        keep: list[tuple[int, Attempt]] = []
        for c in self.corrections.attempts:
            if not self._mine(c):
                continue
            same = by_span.get((c.first, c.last), [])
            got = next((x for x in same if x[1].title == one_line(c.title)), same[0] if same else None)
            if got is not None:
                same.remove(got)
            if got is None:
                text = self._said(c)
                a = Attempt(number=0, title=one_line(c.title or item_title(text)) or "Attempt", did=text,
                            outcome=c.outcome or "inconclusive")
                a.source_lines = [c.first, c.last]
                got = (c.first - 1, a)
            i, a = got
            a.title = one_line(c.title) or a.title
            a.outcome = c.outcome or a.outcome
            a.who = c.who or a.who
            keep.append((i, a))
        for _i, a in (x for same in by_span.values() for x in same):
            self.owned.difference_update(self.took.get(id(a), []))  # a dropped attempt's lines stay as text
        self.attempts = keep

    def _mine(self, c) -> bool:
        """Is the correction this investigation's: filed under it, else read from its lines?"""
        return c.home == self.index if c.home is not None else c.first - 1 in self.scope.lines

    def _said(self, c) -> str:
        """The words of a correction's lines (1-based, both included), markup off."""
        return " ".join(plain(self.lines[i]) for i in range(c.first - 1, min(c.last, len(self.lines))))

    def _correct_steps(self) -> None:
        """The next steps are exactly an extraction's: one read from the same lines keeps its status; the lines of
        a listed step it left out, and its list's heading when none of the list is left, are text again."""
        by_span = {tuple(s.source_lines): (i, s) for i, s in self.steps if s.source_lines}
        keep: list[tuple[int, NextStep]] = []
        for c in self.corrections.steps:
            if not self._mine(c):
                continue
            got = by_span.pop((c.first, c.last), None)
            if got is None or c.title and id(got[1]) not in self.step_took:
                # (its lines stay as text where they are; a listed step keeps the document's words, which are its
                # lines in the mirror)
                said = c.title or self._said(c)
                step = make_step(said, [], 0)
                if step is None:
                    continue
                step.source_lines = [c.first, c.last]
                got = (c.first - 1, step)
            if c.status:
                got[1].status = c.status  # (the extraction's: a plan the document says was carried out is done)
            keep.append(got)
        kept_heads = {self.step_took[id(s)][0] for _, s in keep if id(s) in self.step_took}
        for _, s in by_span.values():
            head, span = self.step_took.get(id(s), (-1, []))
            self.owned.difference_update(span)
            if head >= 0 and head not in kept_heads:
                self.owned.discard(head)
        self.steps = keep

    def _recaps(self) -> None:
        """A summary that tells tries again (a "Timeline of attempts" table, a "Key findings" list over the runs
        above) restates them: when two or more items of one list or table repeat earlier tries word for word, each
        such item is no try of its own (its lines stay as text), unless it says how the try went and the first
        telling did not, which then gives way to it. A try told as done again ("re-ran", "repeat") is one."""
        group_at = {u.first: u.group for u in self.units if u.group >= 0 and (u.item >= 0 or u.kind == "row")}
        seen: dict[frozenset, tuple[int, Attempt]] = {}
        repeats: dict[int, list[tuple[tuple[int, Attempt], tuple[int, Attempt]]]] = {}
        for i, a in sorted(self.attempts, key=lambda x: x[0]):
            words = _recap_key(a.title)
            if not words:
                continue
            if words in seen and a.source_lines and (g := group_at.get(a.source_lines[0] - 1)) is not None \
                    and not _measured_apart(seen[words][1], a):
                repeats.setdefault(g, []).append((seen[words], (i, a)))
            else:
                seen.setdefault(words, (i, a))
        drop: set[int] = set()
        for pairs in repeats.values():
            if len(pairs) < 2:
                continue  # (one repeat is a try told twice, or done twice: kept)
            for (_, old), (_, new) in pairs:
                told = old.outcome in ("inconclusive", "untested") and new.outcome not in ("inconclusive", "untested")
                drop.add(id(old) if told else id(new))
        drop -= {k for k in drop if k in self.took}  # (a protocol's numbered attempt is one as written)
        for _, a in self.attempts:
            if id(a) in drop:
                self.owned.difference_update(self.took.get(id(a), []))
        self.attempts = [(i, a) for i, a in self.attempts if id(a) not in drop]

    def _finish(self, line: int) -> None:
        self.items.insert(0, ("investigation", "", line))
        if self.corrections is None:
            self._recaps()  # (a reviewed checklist or a model's extraction says which attempts there are)
        atts = sorted(self.attempts, key=lambda x: x[0])
        nums = [a.number for _, a in atts if a.number]
        keep = len(set(nums)) == len(nums) == len(atts) and atts
        for k, (i, a) in enumerate(atts, 1):
            a.number = a.number if keep else k
            if self.corrections is None:
                a.title = verdict_free(a.title)
            self.inv.attempts.append(a)
            self.items.append(("attempt", str(a.number), i + 1))
        self.inv.attempts.sort(key=lambda a: a.number)
        seen: set[str] = set()
        for i, s in sorted(self.steps, key=lambda x: x[0]):
            if s.text.casefold() in seen:
                continue
            seen.add(s.text.casefold())
            s.position = len(self.inv.next_steps) + 1
            self.inv.next_steps.append(s)
            self.items.append(("step", str(s.position), i + 1))

    # --- free text, verification ------------------------------------------------------------------

    def _free(self) -> None:
        """Every line structure did not take, in order, under the heading it was written under; a heading
        inside a kept section stays a line of its body (demoted), so a template or a protocol is one section."""
        heads = {u.first: u for u in self.units if u.kind == "heading"}
        sections: list[tuple[str, list[int]]] = []
        open_for, inside = None, set()
        for i in sorted(self.scope.lines):
            h = heads.get(i)
            cur = self.last_heading[i]
            if i in self.owned:
                continue
            if h is not None:
                if h.path and h.path[-1] in inside:
                    inside.add(h.id)
                    open_for = h.first
                    sections[-1][1].extend(range(h.first, h.last + 1))
                    continue
                sections.append((h.text, []))
                open_for, inside = h.first, {h.id}
                continue
            if cur is not None and cur.first < i <= cur.last:
                continue  # a setext heading's underline
            key = cur.first if cur is not None else -1
            if open_for != key:
                named = cur is not None and (cur.first not in self.owned or cur.first != self.items_line)
                sections.append((cur.text if named else "Notes", []))
                open_for, inside = key, set()
            sections[-1][1].append(i)
        used: set[str] = set()
        heading_lines = {u.text for u in heads.values() if u.first not in self.owned}
        sections = [(h, x) for h, x in sections if h in heading_lines or any(counts(self.lines[i]) for i in x)]
        for heading, idxs in sections:
            body = span_lines(self.lines, idxs) if idxs else []
            text = _body(demote_headings("\n".join(body)).lstrip("\n").split("\n"))
            base = name = section_heading("## " + one_line(plain(heading) or heading))
            n = 1
            while name.casefold() in used:
                # "Summary (more)", then "Summary (more 3)": a document of seventy "## Summary" sections grew a
                # heading of seventy "(more)"s (the second keeps the name it always had)
                n += 1
                name = base + (" (more)" if n == 2 else f" (more {n})")
            used.add(name.casefold())
            self.inv.sections.append(Section(name, text))

    def _verify(self) -> bool:
        from dbglog.core import markdown as mirror

        rendered = mirror.render(_probe(self.inv))
        kept = kept_text(rendered)
        whole = set(kept.split(" \n "))
        lost = [i for i in sorted(self.scope.lines) if counts(self.lines[i])
                and not ((x := norm(self.lines[i])) in whole or x in kept)]
        whole = [(h, span) for h, span in self.spans if set(span) & set(lost)]
        for h, span in whole:
            # A table that lost a line to its structure (a ragged row, a cell that wrapped) is kept as written too.
            self.inv.sections.append(Section(section_heading(f"## {one_line(plain(h))} (as written)"),
                                             _body(span_lines(self.lines, span))))
        lost = [i for i in lost if not any(i in span for _, span in whole)]
        bare = [i for i in lost if _bare_label(self.lines[i]) or i in self.owned and self.lines[i].lstrip().startswith("#")]
        bare = sorted(set(bare) | self._renumbered())
        rest = [i for i in lost if i not in bare]
        if bare:
            # Labels and headings whose words were only renamed into structure ("**Result:**" over its list).
            self.inv.sections.append(Section(SOURCE_HEADINGS, "\n".join(
                ["Labels and headings of the imported document whose content is in the fields above:", ""]
                + [f"- line {i + 1}: {self.lines[i].strip()}" for i in bare])))
        if rest:
            self.inv.sections.append(Section("## Imported text (as written)", _body(span_lines(self.lines, rest))))
        return self._roundtrip(None if whole or bare or rest else rendered)

    def _renumbered(self) -> set[int]:
        """Lines of the attempts whose heading gave another number than the one stored ("Attempt 10: acpi=off" stored
        as attempt 4): the yardstick reads "Attempt 10:" as a label, but the author's number is the document's too."""
        out = set()
        for a in self.inv.attempts:
            i = a.source_lines[0] - 1 if a.source_lines else -1
            text = plain(self.lines[i].strip().lstrip("#")) if 0 <= i < len(self.lines) else ""
            m = st.ATTEMPT_HEAD.match(text) if attempt_noun().match(text) else None
            if m and int(m["n"]) != a.number:
                out.add(i)
        return out

    def _roundtrip(self, rendered: str | None = None) -> bool:
        """Does the investigation read back from its mirror as it is? Else fence the sections that stop it.
        ``rendered``: its mirror as already rendered, when nothing was added since."""
        from dbglog.core import markdown as mirror

        def same(text: str | None = None) -> bool:
            probe = _probe(self.inv)
            try:
                return mirror.parse(text if text is not None else mirror.render(probe)) == probe
            except ParseError:
                return False

        if same(rendered):
            return True
        # The sections whose lines look like structure (headings, tables, fences, labelled fields) are the ones the
        # canonical parser would misread: fence those at once, then the rest one by one if that was not enough.
        risky = [s for s in self.inv.sections if _STRUCTURE_LINE.search(s.body)]
        for s in risky:
            _fence(s)
        if risky and same():
            return True
        for s in self.inv.sections:
            if s not in risky:
                _fence(s)
                if same():
                    return True
        return False

    def _recognized(self) -> dict:
        inv = self.inv
        return {"attempts": len(inv.attempts), "next_steps": len(inv.next_steps),
                "differences": len(inv.differences),
                "fields": [k for k in ("symptom", "environment", "root_cause") if getattr(inv, k)]
                + (["related_files"] if inv.related_files else []),
                "free_sections": [s.heading[3:] if s.heading.startswith("## ") else s.heading for s in inv.sections
                                  if s.heading not in BOOKKEEPING_SECTIONS]}  # (import's own sections are no author's)


def _body(lines: list[str]) -> str:
    """A kept section's body as the mirror reads it back (``strip_blank``: a table kept "as written" ended in a blank
    line, never read back, and so was fenced as code, at the cost of a second round trip)."""
    return "\n".join(strip_blank(lines))


_STRUCTURE_LINE = recache.compile(r"^\s{0,3}(?:#{1,6}\s|\||`{3,}|~{3,}|[-*+]\s+\[[ xX]\]|(?:\*\*|__)[^*_\n]{1,40}:|[-=]{3,}\s*$)",
                             re.M)


def _verdict_line(u: Unit) -> str | None:
    """A short line that is only a verdict ("成功", "c）报错", "-> works"), and the verdict it gives."""
    text = plain(u.text)
    if len(text.split()) > 4 or len(CJK_CHAR.findall(text)) > 8:
        return None
    said = outcome_of(text, language(text))
    return said if said in ("worked", "failed", "partial") else None


def _tries_of(g: learned.Guess) -> list[tuple[str, str]]:
    """(what, outcome) of each try a learned guess holds: one, unless one of its sentences tells several ("we
    tried to reset the runtime and to switch accounts, but ..."), split as the linker splits its own."""
    text = " ".join(plain(u.text) if u.kind != "command" else " ".join(filter(None, (u.desc, u.text, u.comment)))
                    for u in g.units)
    said = outcome_of(" ".join(u.comment or u.text for u in g.units), language(text)) or "inconclusive"
    several = []
    for u in g.units:
        if u.kind != "command":
            own = outcome_of(u.text, language(u.text)) or said
            pieces = linking.split_several(one_line(plain(u.text)), own)
            several += pieces if len(pieces) > 1 else []
    return several or linking.split_several(one_line(text), said)


def _fence(s: Section) -> None:
    longest = max((len(m) for m in re.findall(r"`+", s.body)), default=0)
    fence = "`" * max(3, longest + 1)
    s.body = f"{fence}markdown\n{s.body}\n{fence}"


# The cues that a unit is a template's own text, whatever its words: never a try for the learned pass to add (a heading
# that names setup, "**Setup:**", is no such cue: the tries told under it are still tries).
_TEMPLATE_CUES = frozenset({"template placeholder", "a table of contents entry", "issue-form wording",
                            "a legend of the fields the entries use"})
# what the learned pass never guesses a try from: a template's text, and a program's output pasted as prose
_NOT_TRIES = _TEMPLATE_CUES | {"pasted error output"}
PLAN_CONFIDENCE = 0.45
SOURCE_HEADINGS = "## Source headings"  # bookkeeping: `show` leaves it out


def _bare_label(line: str) -> bool:
    lab = label_of(line, {**ATTEMPT_LABELS, **INV_LABELS})
    return lab is not None and not lab[1]


_FIELD_SECTIONS = {"symptom": "symptom", "symptoms": "symptom", "environment": "environment",
                   "root cause": "root_cause", "related files": "related_files"}


def _protocol_outcome(explicit: str, tag: str | None, result: str, conclusion: str, title: str, hyp: str) -> str:
    """An attempt's outcome from its labelled fields: the Outcome field, the heading's tag, then the
    result and conclusion read together; a reproduction that did not reproduce is a failed attempt."""
    if explicit:
        w = outcomes.verdict_word(explicit) or outcomes.classify(explicit)
        if w in (None, "inconclusive") and language(explicit) != "en":
            w = outcome_of(explicit, language(explicit))  # ("### 判定" / "依然として CPU fallback")
        if w in outcomes.OUTCOMES and w != "inconclusive":
            return w
    r = outcome_of(result, language(result)) if result else None
    c = outcome_of(conclusion, language(conclusion)) if conclusion else None
    if tag and not (r in ("worked", "failed") and r != tag) and not (tag == "untested" and r == "partial"):
        return tag  # (a heading still "IN PROGRESS" over a result that says it helped a little: the result's)
    # The result says what happened; the conclusion explains it and speaks only when the result does not.
    got = r if r in ("worked", "failed", "partial") else (c if c in ("worked", "failed", "partial") else "inconclusive")
    if got == "inconclusive" and "untested" in (r, c):
        return "untested"  # "→ not tried": listed with the attempts, never run
    if _REPRO.search(f"{title} {hyp}") and not _FIX.search(title) and got in ("worked", "partial"):
        got = "failed"  # a repro fixes nothing: one that ran clean did not reproduce, one that failed did
    return got


def _fixed_width(lines: list[str], a: int, b: int):
    """A fixed-width table in a code fence: (header cells, [(line, cells)]) or None. Columns come from the dashed
    rule under the header; a row whose first column is empty continues the row above (a wrapped cell)."""
    content = [i for i in range(a + 1, b) if lines[i].strip()]
    if len(content) < 3 or not re.fullmatch(r"[\s\-=+|:]+", lines[content[1]]) or not re.search(r"[-=]{3}",
                                                                                                 lines[content[1]]):
        return None
    rule = lines[content[1]]
    if "|" in lines[content[0]] and "|" in rule:
        return split_row(lines[content[0]]), [(i, split_row(lines[i])) for i in content[2:]]
    starts = [m.start() for m in re.finditer(r"[-=:]+", rule.replace("+", " ").replace("|", " "))]
    if len(starts) < 3:
        return None

    def cells(i: int) -> list[str]:
        ln = lines[i].rstrip()
        out = [ln[x:y].strip() for x, y in zip(starts, starts[1:] + [max(len(ln), starts[-1])])]
        out[-1] = ln[starts[-1]:].strip()
        return out

    head, rows = cells(content[0]), []
    for i in content[2:]:
        c = cells(i)
        if rows and not c[0]:
            prev = rows[-1][1]
            for k, v in enumerate(c):
                if v:
                    prev[k] = f"{prev[k]} {v}".strip()
            continue
        rows.append((i, c))
    return head, rows




def _row_task(u) -> str:
    """The task a row of a task table names: its what-column, else its longest cell that is not a checkbox."""
    what, _ = row_roles(u)
    cells = [c if c.strip().lower() not in ("[ ]", "[x]") else "" for c in u.cells]  # a "Done" column of boxes
    if 0 <= what < len(cells) and cells[what].strip():
        return cells[what]
    return max(cells, key=len, default="") or u.text
