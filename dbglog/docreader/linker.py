"""The linker: judged units into attempts, each action joined to the result that tells how it went.

The result of an action may be in the same unit ("Tried X -- still hangs"), the next sentence of its
paragraph or item, a sub-item, the table row's result column, the comment above or after a command,
or a later post of a thread: a suggestion ("have you tried X?") answered "yes, it works" is the
answerer's attempt of the suggestion. Several things tried in one sentence are several attempts.
"""

from __future__ import annotations

import bisect
import itertools
import re
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache

from dbglog.docreader.cues import (CARD_FIELD, me_too, outcome_in, HEADER_TRIES, WHAT_IT_TOOK, CJK_SPACE_GAP, _UNIT, listed_sides, opposite_clauses, _KNOB, _MEASURED, _PROPERTY, _TRY_MARK, _VERDICT_MARK, change_columns, colon_verdict, diagnostic,
                                   heading_role, language, names_change, outcome_of, plain, row_roles, table, _sentence_label, _PROBLEM_LINE)
from dbglog.docreader.scorer import Judged
from dbglog.docreader.units import _PROMPT, _TOOL, ERROR_LINE, VERDICT_FIRST, Unit, post_author
from dbglog.docreader.text import item_title
from dbglog.docreader.vocab import heading_outcome
from dbglog.docreader.columns import (BREAKDOWN_COL, CHECK_COL, FACT_COL, FIX_COL, GOAL_COL, MEASURE_COL, MEASURE_HEAD, NUMBER_COL,
                                      PROBLEM_COL, WHAT_COL)
from dbglog.util import recache

ACTS = ("action_result", "action")
MIN_CONFIDENCE = 0.4  # below it a unit is listed by --review, not made an attempt


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
    answer: bool = False  # a suggestion and the answerer's report of trying it


# The language of the document being linked (``link``'s ``lang``): a comment or cell of a word or two shows no
# language of its own ("# funktioniert", "| ça marche |"), and is read in the document's when English finds no verdict.
_DOC_LANG: ContextVar[str] = ContextVar("doc_lang", default="en")


def _outcome(text: str) -> str | None:
    return outcome_in(text, _DOC_LANG.get()) if text else None


def _same_place(a: Unit, b: Unit) -> bool:
    """b continues a's story: same post, same heading, and the same paragraph/item or just below it."""
    if a.post != b.post or a.path != b.path:
        return False
    if b.first - a.last <= 15 and a.item >= 0 and b.item >= 0 and a.depth == b.depth:
        return True  # "- Action: ..." then a fence, then "- Result: ..." (the fence ended the first list)
    if a.block == b.block:
        return True
    if a.item >= 0 and b.item >= 0 and (b.depth > a.depth or a.group == b.group):
        return True  # a sub-item under the action's item, or a later item of its list ("- Action:" / "- Result:")
    return b.first - a.last <= 2 and b.item < 0 and a.item < 0


def link(judged: list[Judged], skip: set[int], heads: dict[int, Unit] | None = None,
         roles: dict[int, str | None] | None = None, captions: dict[int, int] | None = None,
         lang: str = "en") -> list[Found]:
    """Attempts from the judged units of one investigation (units whose lines are in `skip` are not read).
    `roles` are the headings' roles read in the document's language (a short heading's own words rarely
    tell its language); `captions` the lists introduced as things done (``cues.done_captions``); `lang` the
    document's language, for the verdicts too short to show their own."""
    token = _DOC_LANG.set(lang)
    try:
        return _link(judged, skip, heads, roles, captions)
    finally:
        _DOC_LANG.reset(token)


def _link(judged: list[Judged], skip: set[int], heads: dict[int, Unit] | None,
          roles: dict[int, str | None] | None, captions: dict[int, int] | None) -> list[Found]:
    t = _Thread(judged, skip, heads)
    out: list[Found] = []
    out += _keyed(t.js, t.used, t.code)
    out += _lists(t.js, t.used, captions or {})
    if heads is not None:
        out += _headed(t.js, {k: h for k, h in heads.items() if h.first not in skip}, t.used, t.code, roles or {},
                       parents=heads)
    out += _captioned_blocks(t.js, t.used, t.code)
    for k, j in enumerate(t.js):
        if j.unit.id in t.used:
            continue
        if _goes_on(j, t.js[k - 1] if k else None, out):
            continue
        f = t.read(k, j, out)
        for g in (f if isinstance(f, list) else [f] if f is not None else []):
            if g.outcome == "untested" or _not_run(g):
                continue  # "❌ Upgrade NCCL → not tried yet": nothing was run (a plan, read as one)
            t.used.update(g.units)
            out.extend(_split_several(g))
    out = _absorbed(_captioned(out, t.js, captions or {}))
    _output_below(out, {j.unit.id: j.unit for j in t.js}, t.code)
    _done_marks(out, {j.unit.id: j.unit for j in t.js})
    _ran_beside_failures(out, {j.unit.id: j.unit for j in t.js})
    for g in out:
        g.outcome = looked_only(g.outcome, g.did, g.result)
    return out


def _not_run(g: Found) -> bool:
    """ "Command: Not submitted." over "Result: Pending.": the action's own few words say it was never run, and
    nothing after it says it went any way."""
    return len(plain(g.did).split()) <= 4 and _outcome(g.did) == "untested" \
        and _outcome(g.result) in (None, "untested", "inconclusive")


_FIRST_LINE = recache.compile(r"\S[^\n]*")


def _output_below(out: list[Found], units: dict[int, Unit], code: list[Unit]) -> None:
    """ "I rebuilt the driver with DKMS." over a block that opens "Error! Bad return status for module build": a try
    whose words say nothing of how it went, right above the error it printed, failed; the block is its result."""
    after = {c.first: c for c in code}
    for f in out:
        u = units.get(f.units[-1]) if f.units else None
        below = error_below(u, f.last, after) if f.outcome == "inconclusive" and not f.answer and u else None
        if below is not None:
            c, first = below
            f.outcome, f.result = "failed", f"{f.result} {first}".strip()
            f.last, f.units = c.last, [*f.units, c.id]


def error_below(u: Unit, last: int, code: dict[int, Unit]) -> tuple[Unit, str] | None:
    """The block of output right below line ``last`` (a try told in unit ``u``), in its place, when it opens with an
    error: the block and that line."""
    c = code.get(last + 1) or code.get(last + 2)
    line = _FIRST_LINE.search(c.text) if c is not None else None  # (not a split of a block of megabytes)
    first = line.group(0).strip() if line else ""
    if c is None or (c.post, c.path) != (u.post, u.path) or not ERROR_LINE.match(first):
        return None
    return c, first


def _ran_beside_failures(out: list[Found], units: dict[int, Unit]) -> None:
    """A results table whose failed rows say so ("| 2 | 4 | 16 | x | x | OOM |"): its rows that measured something
    instead ran, so they worked, by the table's own contrast (alone, a row of numbers says only what it measured)."""
    rows: dict[int, list[Found]] = {}
    for f in out:
        us = [units.get(k) for k in f.units]
        if len(us) == 1 and us[0] is not None and us[0].kind == "row":
            rows.setdefault(us[0].group, []).append(f)
    for group in rows.values():
        cells = [units[f.units[0]] for f in group]
        ran = ran_beside_failures([f.outcome for f in group], [_measured(u, row_roles(u)[0]) for u in cells])
        for f, oc in zip(group, ran):
            f.outcome = oc


def ran_beside_failures(outcomes: list[str], measured: list[bool]) -> list[str]:
    """Sibling runs (a table's rows, a section's "Configurations" / "Performance" pairs): when some of them say they
    failed, the ones that only said what they measured ran, and so worked."""
    if "failed" not in outcomes:
        return outcomes
    return ["worked" if oc == "inconclusive" and m else oc for oc, m in zip(outcomes, measured)]


# "SamplesPerSec=7.34", "29 tok/s", "Speed: 35 s/iter": a value a run measured
MEASUREMENT = recache.compile(r"\b[A-Za-z][\w/ -]{1,30}\s*[=:]\s*\d[\d.,]*|\d[\d.,]*\s*" + _UNIT + r"(?![\w/])")


def looked_only(outcome: str, did: str, result: str = "") -> str:
    """A try that only observed (``cues.diagnostic``) found something; it neither worked nor failed, whatever
    its finding says, so its outcome is inconclusive (the finding stays in its text) -- unless it says the
    problem went away."""
    if outcome in ("worked", "failed", "partial") and diagnostic(did) and not (
            outcome == "worked" and _FIXED.search(result or did)) and not (
            outcome == "failed" and _AS_FIX.search(result or did)):
        return "inconclusive"
    return outcome


# A verdict on a try as a fix ("`CUDA_LAUNCH_BLOCKING=1` - didn't help"): the author ran the look as a cure.
_AS_FIX = recache.compile(r"\b(?:help(?:s|ed)?|fix(?:es|ed)?|solved?|resolved?|workaround|no\s+(?:effect|difference)|"
                          r"made\s+no\s+difference|changed\s+nothing)\b", re.I)


class _Thread:
    """The units one investigation links, indexed once by post (a thread of thousands of posts reads in one pass)."""

    def __init__(self, judged: list[Judged], skip: set[int], heads: dict[int, Unit] | None):
        self.js = [j for j in judged if j.unit.first not in skip and j.unit.kind in ("sentence", "command", "row")]
        self.code = [j.unit for j in judged if j.unit.kind == "code" and j.unit.first not in skip]
        self.heads, self.used = heads, set()
        self.replied: set[int] = set()  # suggesting posts whose answers were read
        self._tables: dict[int, list[Judged]] = {}  # a table's rows, by its group (``_table``)
        self._sweeps: dict[int, bool] = {}  # whether a table is one sweep, by its group (``_is_sweep``)
        self._made: tuple[int, list[int]] = (0, [])  # (attempts seen, their first lines sorted): _firsts
        self.code_by_post: dict[int, list[Unit]] = {}
        for c in self.code:
            self.code_by_post.setdefault(c.post, []).append(c)
        self.by_post: dict[int, list[int]] = {}
        for i, x in enumerate(self.js):
            self.by_post.setdefault(x.unit.post, []).append(i)
        self.post_starts = sorted(self.js[ks[0]].unit.first for p, ks in self.by_post.items() if p >= 0)
        # Posts that suggest something: their other sentences are the suggester's reasons ("There is a fix for
        # ... in #15412"), not results of theirs, unless they say what they ran themselves.
        self.suggesting = {j.unit.post for j in self.js if j.label in ("proposal", "request") and j.unit.post > 0
                           and not j.unit.quoted}
        self.run_logs = _run_logs([j.unit for j in self.js if j.unit.kind == "command"])

    def read(self, k: int, j: Judged, out: list[Found]):
        u, js = j.unit, self.js
        if u.kind == "command":
            return _command(j, u.block in self.run_logs)
        if u.kind == "row":
            return self._read_row(k, j)
        shaped = self._runs_below(k, j)
        if shaped:
            return shaped
        checked = _checked_below(j, js[k + 1:k + 30], self.used) \
            if j.label in ("action", "action_result") and u.item < 0 else None
        if checked is not None:
            return checked  # "We upgraded to CUDA 12.8." over a list of ✅ states: how it went
        # (the runs of a console session shown under a caption are its own lines: the result is read past them)
        runs = sum(1 for _ in itertools.takewhile(lambda x: x.unit.kind == "command", js[k + 1:k + 30]))
        if j.label in ACTS and j.confidence < MIN_CONFIDENCE:
            # An unsure action is one when the next sentence says how it went ("At first we restarted the pods.
            # Nothing changed."): the pair is surer than either alone.
            # (and "在命令行里执行:" + the command in a fence + "即可解决问题": the fence stands between them)
            f = _with_result(j, js[k + 1:k + 2 + runs], self.used, self.code_by_post.get(u.post, self.code)) \
                if j.label == "action" else None
            return f if f is not None and f.result else _shared_verdict(j, js[k + 1:k + 5], self.used)
        if j.label == "action_result":
            if _DONE_MARK.match(u.text) and _housekeeping(_DONE_MARK.sub("", u.text, count=1)):
                return None  # "✅ README updated", "✅ Committed: a8376e2": a chore ticked off, not a try
            if _status_line(u.text):
                return self._status(k)
            shows = _with_result(j, js[k + 1:k + 6 + runs], self.used, self.code_by_post.get(u.post, self.code)) \
                if u.text.rstrip().endswith(":") else None
            if shows is not None and shows.result and _refers_back(shows.result):
                return shows  # ("Ran this:" over a fence, "It worked after that." under it: the verdict is below)
            return _shown_below(_found(j, u.text, u.text), u, self.code_by_post.get(u.post, self.code))
        if j.label == "action":
            f = _with_result(j, js[k + 1:k + 6 + runs], self.used, self.code_by_post.get(u.post, self.code))
            if not f.result:
                f = _shared_verdict(j, js[k + 1:k + 5], self.used) or f
            return None if u.checkbox == "x" and not f.result and _prepares(u.text) else f
        if j.label in ("proposal", "request") and u.post >= 0 and not u.quoted and u.post not in self.replied:
            return self._answers(j)
        if j.label == "result" and self.heads is not None:
            return _under_heading(j, self.heads, self._firsts(out)) or (
                None if u.post in self.suggesting and "first person" not in j.features else _named_result(j)) or (
                self._verdict_on_fix(j, out))
        return None

    def _read_row(self, k: int, j: Judged) -> list[Found] | Found | None:
        """A table row: one quality of a run (a metrics table), a class of one evaluation (nothing), a line of a
        sweep (the sweep, read from its first row), else a try of its own."""
        u = j.unit
        if u.header and MEASURE_COL.match(plain(u.header[0])):
            return self._measures(k)
        if u.header and BREAKDOWN_COL.match(plain(u.header[0])):
            return None
        rows = self._table(k)
        if self._is_sweep(rows):
            return self._swept(k, rows)
        return _transposed(j) or _changed(j, self.heads or {}) or _fixed_problem(j, self.heads or {}) or _row(j)

    def _table(self, k: int) -> list[Judged]:
        """The judged rows of the table row ``k`` belongs to, from its first (found once per table: a table of
        thousands of rows asks for each of them)."""
        g = self.js[k].unit.group
        rows = self._tables.get(g)
        if rows is None:
            lo = k
            while lo > 0 and self.js[lo - 1].unit.kind == "row" and self.js[lo - 1].unit.group == g:
                lo -= 1
            run = itertools.takewhile(lambda x: x.unit.kind == "row" and x.unit.group == g, self.js[lo:])
            rows = self._tables[g] = [x for x in run if x.unit.index >= 0]  # (the header row aside)
        return rows

    def _is_sweep(self, rows: list[Judged]) -> bool:
        g = rows[0].unit.group if rows else -1
        if g not in self._sweeps:
            self._sweeps[g] = _sweep(rows)
        return self._sweeps[g]

    def _swept(self, k: int, rows: list[Judged]) -> Found | None:
        """ "| Threshold | mAP@50 | Recall |" over "| 0.10 | ..." "| 0.15 | ...": one run that swept a value, told row by
        row; the table is one look, titled by its heading, read from its first row (the others are its lines)."""
        if self.js[k] is not rows[0] or not any(_row(x) for x in rows):
            return None  # (the first row stands for the table; a table no row of which reads as a run is facts)
        u = rows[0].unit
        head = (self.heads or {}).get(u.path[-1]) if u.path else None
        title = plain(head.text) if head is not None else f"{plain(u.header[0])} sweep"
        cells = "; ".join(" · ".join(c for c in x.unit.cells if c.strip()) for x in rows[:6])
        f = Found(title, cells[:400], "inconclusive", u.first, rows[-1].unit.last, u.author, [x.unit.id for x in rows],
                  rows[0].confidence)
        f.title = title
        return f

    def _runs_below(self, k: int, j: Judged) -> list[Found] | Found | None:
        """A line naming a setup over the runs of it told below: "1. Using fp16:" over "- idle GPU, output correct" /
        "- busy GPU, NaN" (a run per case); "torch.compile per block" over "Time for inference: 5.03 sec total" (one)."""
        u, ahead = j.unit, self.js[k + 1:k + 20]
        if u.item >= 0 and j.label != "result":
            return _cases(j, ahead, self.used) or _one_run(j, ahead, self.used)
        if j.label in ("context", "action") and u.item < 0 and len(plain(u.text).split()) <= 12 \
                and not _measurement(u.text):
            return _measured_below(j, ahead[:5], self.used)
        return None

    def _verdict_on_fix(self, j: Judged, out: list[Found]) -> Found | None:
        """ "并没有解决问题" (did not solve it), "Didn't fix it for me": another person's short verdict in a later post,
        naming nothing of its own, on the fix an earlier post reported as working, is their try of that fix (one per
        post)."""
        u = j.unit
        if u.post <= 0 or u.quoted or len(self.by_post.get(u.post, ())) > 3 or any(
                self.js[i].unit.id in self.used for i in self.by_post[u.post]):
            return None
        words = plain(u.text).split()
        if len(words) > 8 or sum(len(w) for w in words) > 40 or me_too(u.text):
            return None  # ("we see no hang on H100 SXM with the same driver": a setup of their own, told; "same error
            # here" reports the bug, not a verdict on the fix)
        oc = _outcome(u.text)
        # (the fix is a post or two above: a year and ten posts later, a short "fails" is about the bug)
        fix = next((f for f in reversed(out) if f.outcome == "worked" and f.who and f.who != u.author
                    and f.last < u.first and self._posts_between(f.last, u.first) <= 2), None)
        if oc not in ("worked", "failed", "partial") or fix is None or _KNOB.search(u.text):
            return None
        return Found(fix.title or fix.did, plain(u.text), oc, u.first, u.last, u.author, [u.id], j.confidence,
                     title=fix.title or plain(fix.did))

    def _measures(self, k: int) -> Found | None:
        """ "| Metric | Before | After |", "| Aspect | Notes |": the rows are qualities of one run, not tries; the table
        is one look, titled by its heading, read from its first row (the others are its lines)."""
        u = self.js[k].unit
        if u.index != 0:
            return None
        judged = list(itertools.takewhile(lambda x: x.unit.kind == "row" and x.unit.group == u.group, self.js[k:]))
        said = {f.outcome for x in judged if (f := _row(x)) is not None}
        if not said:
            return None  # (no row says how anything went: a table of facts)
        told = said - {"inconclusive", "untested"}
        oc = told.pop() if len(told) == 1 else "partial" if told else "inconclusive"  # (the rows' verdicts, as one)
        rows = [x.unit for x in judged]
        head = (self.heads or {}).get(u.path[-1]) if u.path else None
        title = plain(head.text) if head is not None else plain(u.cells[0])
        cells = "; ".join(" · ".join(c for c in x.cells if c.strip()) for x in rows)
        f = Found(title, cells[:400], oc, u.first, rows[-1].last, u.author, [x.id for x in rows], self.js[k].confidence)
        f.title = title
        return f

    def _posts_between(self, a: int, b: int) -> int:
        """How many posts start after line ``a`` and before line ``b`` (by bisection: a thread of a thousand posts
        asks this for each short verdict)."""
        return max(0, bisect.bisect_left(self.post_starts, b) - bisect.bisect_right(self.post_starts, a))

    def _status(self, k: int) -> Found:
        """ "✅ Device found at 0000:00:05.0", "✅ No errors in the logs": lines of one list that report states under
        the same mark are one look at the system (its finding, no verdict of a fix); "⚠️ Discovery still timing
        out" and the like, one seen failure. The first line of such a run stands for the run."""
        js, u = self.js, self.js[k].unit
        mark = _VERDICT_MARK.search(u.text).group(0)

        def same(x: Unit) -> bool:
            return x.item >= 0 and x.group == u.group and _status_line(x.text) and mark in x.text

        run = [js[k]]  # (the later lines of the run are marked used with it, so the linker never asks about them)
        while k + len(run) < len(js) and same(js[k + len(run)].unit):
            run.append(js[k + len(run)])
        said = "; ".join(plain(_VERDICT_MARK.sub("", j.unit.text)).strip(" -*+") for j in run)
        oc = "inconclusive" if _DONE_MARK.match(_unlead(u.text)) else _outcome(u.text) or "failed"
        f = Found(said, "", oc, u.first, run[-1].unit.last, u.author, [j.unit.id for j in run], js[k].confidence)
        f.title = plain(_VERDICT_MARK.sub("", u.text)).strip(" -*+")
        return f

    def _firsts(self, out: list[Found]) -> list[int]:
        """The attempts' first lines, sorted: the ones added since the last call are inserted (``out`` only grows)."""
        n, firsts = self._made
        for f in out[n:]:
            bisect.insort(firsts, f.first)
        self._made = (len(out), firsts)
        return firsts

    def _answers(self, j: Judged) -> list[Found] | None:
        """Every suggestion of one post at once ("Does it happen with backend X? And have you tried Y?"): each answer
        goes to the one it names."""
        post = j.unit.post
        parts = _post_suggestions(self.js, self.by_post[post], self.code_by_post.get(post, []))
        if not parts:
            return None
        self.replied.add(post)
        last = self.by_post[post][-1]
        return _answered(j, parts, self.js[last + 1:last + 40], self.used)


# Cues that a unit says what someone did; without any, a unit labelled action_result is a verdict only
# ("MSI-X is still broken after reload" under "What Doesn't Work"), carried there by its heading.
_DOING = frozenset({"opens with a past-tense verb", "a subject with a past-tense verb", "an action verb", "first person",
                    "names a setting, flag, version or file", "a command", "marked with a verdict (✅ ❌)",
                    "opens with a named setting or file, and how it went", "an action that says how it went (-ing ... worked)",
                    "its comment gives an outcome", "its result column gives an outcome", "says what fixed it",
                    HEADER_TRIES,
                    "labelled as what was done", "an arrow from what was done to how it went"})


def _goes_on(j: Judged, prev: Judged | None, out: list[Found]) -> bool:
    """A verdict with no doing of its own, right below an attempt in the same place, is that attempt's result:
    it joins it instead of becoming an attempt of its own."""
    if j.label not in ("action_result", "result") or prev is None or not out:
        return False
    f = out[-1]
    a, b = prev.unit, j.unit
    # ("Set X. I have not seen the OOM since.": in the try's own list item, "I" alone tells the result, not a doing)
    doing = _DOING - {"first person"} if a.item >= 0 and a.item == b.item else _DOING
    if doing & set(j.features):
        return False
    # A list that starts on the line right under a paragraph ("❌ **Module reload:** `rmmod ...`" / "   - still
    # broken") elaborates that paragraph.
    below = b.first - a.last == 1 and a.item < 0 and (a.post, a.path) == (b.post, b.path)
    sibling = a.item >= 0 and b.item >= 0 and a.item != b.item and b.depth <= a.depth  # the list's next entry
    if a.id not in f.units or sibling or not (below or _same_place(a, b)) or b.first - f.last > 2:
        return False
    said = _outcome(j.unit.text)
    if said is None:
        return False
    marked = "marked with a verdict (✅ ❌)" in prev.features
    # (nor a verdict the action's own sentence gives: "Fixed with `--entrypoint bash`." over "This is the collision that
    # wasted hours ...": the sentence after it tells the problem's story, not how the fix went)
    own = _outcome(a.text) if prev.label == "action_result" and len(f.units) == 1 else None
    if said != "untested" and own not in ("worked", "failed") and (
            f.outcome in ("inconclusive", "untested") or not (f.result or marked)):
        f.outcome = said  # the first result said outranks the action's own wording, but not its ❌ / ✅
    f.result = f"{f.result} {j.unit.text}".strip()
    f.last, f.units = max(f.last, j.unit.last), [*f.units, j.unit.id]
    return True


def _done_marks(out: list[Found], units: dict[int, Unit]) -> None:
    """ "✅ Upgraded the driver — still segfaults" beside "✅ Rebuilt jaxlib": when a list ticks every item and the words
    of some say they failed, its ✅ means done, not fixed; an item whose only verdict is the mark is of unknown outcome."""
    lists: dict[int, list[tuple[Found, Unit]]] = {}
    for f in out:
        u = units.get(f.units[0]) if f.units else None
        if u is not None and u.item >= 0:
            lists.setdefault(u.group, []).append((f, u))
    for items in lists.values():
        if len(items) < 2 or not all(_DONE_MARK.match(u.text) for _, u in items):
            continue
        words = [_outcome(_DONE_MARK.sub("", u.text, count=1)) for _, u in items]
        if any(w in ("failed", "partial") for w in words):
            for (f, _), w in zip(items, words):
                if w is None and f.outcome == "worked":
                    f.outcome = "inconclusive"


_DONE_MARK = recache.compile(r"^\W{0,3}(?:✅|✔️|✔|☑️)\s*")


# A state said of the system ("is being called", "still timing out", "No errors in the logs"), not of a change.
_STATE = recache.compile(r"^(?:no|none)\b|\b(?:is|are|was|were|being|been|still|exists?|present|found|remains?)\b", re.I)


def _unlead(text: str) -> str:
    """A line without its list marker or number ("- ✅ ...", "2. ❌ ..."): where a verdict mark would open it."""
    return text.lstrip("-*+ 0123456789.)")


def _status_line(text: str) -> bool:
    """A verdict-marked line that reports a state and names nothing done: no change in any tense, no one doing it,
    no setting or command it opens with ("✅ `--enforce-eager`: works" is a try; "✅ Device found" is not)."""
    m = _VERDICT_MARK.match(_unlead(text))
    if not m:
        return False
    rest = plain(_unlead(text)[m.end():]).strip()
    if not rest or not _STATE.search(rest) or names_change(rest) or re.search(r"\b(?:i|we|my|our)\b", rest, re.I):
        return False
    return not re.match(r"\W{0,2}(?:--?[a-zA-Z]|\w+=|[A-Z][A-Z0-9]*_[A-Z0-9_]+)", rest)


def _absorbed(out: list[Found]) -> list[Found]:
    """ "Thanks, that wasn't it. I added the user to `render` and restarted": the answer to a suggestion and the
    answerer's own account of doing it, on the lines that answer ends on, are one attempt."""
    keep: list[Found] = []
    answers: dict[str, list[Found]] = {}
    for f in out:
        if f.answer:
            answers.setdefault(f.who, []).append(f)
    for f in out:
        a = None if f.answer else next((a for a in answers.get(f.who, ()) if a.first < f.first <= a.last < f.last), None)
        if a is None:
            keep.append(f)
            continue
        a.last, a.result = f.last, f"{a.result} {f.did}".strip()
        a.units += f.units
    return keep


_FIXED = recache.compile(r"\b(?:fixe[sd]|gone|no longer|works now|resolved|disappear(?:s|ed)?|went away|stops?\b|stopped)",
                    re.I)


# "Does it fix it?", "Can you try that?", "Does this help?": a question about the thing named before it
_POINTS_AT_IT = recache.compile(r"^\W*(?:does|did|do|can|could|would|will|have|has)\s+(?:\w+\s+){0,3}?(?:it|that|this)\b"
                                r"[^?]{0,30}\?\s*$", re.I)


def _suggested(j: Judged, before: list[Judged], code: list[Unit]) -> str:
    """What a suggestion suggests: its own words when they name a setting, else the setting named just above it
    in the same post ("> HSA_OVERRIDE_GFX_VERSION=10.3.0 python x.py" / "Can you give that a go?")."""
    u = j.unit
    if _KNOB.search(u.text):
        return u.text
    # (the sentence just before it on its line counts when it points back at it: "There is PR #368. Does it fix it?")
    back = _POINTS_AT_IT.search(plain(u.text)) is not None
    near = [x.unit for x in before if x.unit.post == u.post and (x.unit.last < u.first or back and x.unit.id < u.id)] + [
        c for c in code if c.post == u.post and c.last < u.first]
    near = [x for x in near if _KNOB.search(x.text)]
    return max(near, key=lambda x: x.last).text if near else ""


_KEY = recache.compile(r"^\s*(?P<k>[A-Za-z]{1,12}\s?\d{1,3}|[#(]?\d{1,3}[.)]?|[A-Z]\d?|"
                  r"[\u4e00-\u9fff]{1,4}?[一二三四五六七八九十\d]{1,3})\s*[:：](?!\d)\s*(?P<rest>.+)$")  # "方案三：能跑"
# (a time or a ratio, "13:35–14:07 stress run", "1:1 split", is no key: two entries that start at 13:xx are not one case)
# "- **R1** default (`--tp 4`)": a key set off by emphasis needs no colon.
_EMPH_KEY = recache.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*|__|`)(?P<k>[A-Za-z]{1,12}\s?\d{1,3}|[A-Z]\d?)(?:\*\*|__|`)\s*[:：]?\s*"
                       r"(?P<rest>\S.*)$")
_CODE_KEY = recache.compile(r"^\s*(?P<k>[A-Za-z]{0,6}\d{1,3}|[A-Z])\s{2,}(?P<rest>\S.*)$")


def _entries(js: list[Judged], code: list[Unit]) -> list[tuple[str, str, int, int, Judged | None, str, int]]:
    """(key, rest, first, last, judged unit or None, author, block) for every keyed line: "case1: ...", "- B: ...",
    and the lines of an indented table ("c4  47 invalid global reads")."""
    out = []
    for j in js:
        m = _KEY.match(plain(j.unit.text)) or _EMPH_KEY.match(j.unit.text)
        if m:
            out.append((m.group("k").lower().replace(" ", ""), m.group("rest"), j.unit.first, j.unit.last, j,
                        j.unit.author, j.unit.block))
    for u in code:
        for k, line in enumerate(u.text.split("\n")):
            m = _CODE_KEY.match(line)
            if m:
                out.append((m.group("k").lower(), m.group("rest"), u.first + k + (1 if u.lang or u.last > u.first
                                                                                   and not line else 0), 0, None,
                            u.author, u.block))
    return sorted(out, key=lambda e: e[2])


# A caption's verdict set apart at its end: "...（编译失败）", "Built from the tarball (fails):", "pip install -e . — works"
# A caption that points at the block below it with words between ("Solved by setting the following in Makefile:",
# "解决方法如下："; ``_POINTS_BELOW`` reads a caption that ends on its pointing word, "Try this:")
_SETS_BELOW = recache.compile(r"(?:\b(?:the following|as follows|below|these (?:lines|settings|changes|commands))\b"
                                r"[^:：]{0,40}|如下|以下|下面[^:：]{0,10})\s*[:：]\s*$", re.I)
# (what the caption did with the block: set or changed it; not "the following test works", "error example below:")
_CHANGE_VERB = recache.compile(r"\b(?:set|setting|chang(?:e|ed|ing)|add(?:ed|ing)?|edit(?:ed|ing)?|replac(?:e|ed|ing)|"
                               r"modif(?:y|ied|ying)|patch(?:ed|ing)?|appl(?:y|ied|ying)|putting|put)\b|修改|设置|改成|改为|替换|添加",
                               re.I)
_CAPTION_VERDICT = recache.compile(r"(?:[(（]([^()（）]{1,40})[)）]|\s[—–-]{1,2}\s*([^—–-]{1,30}?))\s*[:：.]?\s*$")


def _captioned_blocks(js: list[Judged], used: set[int], code: list[Unit]) -> list[Found]:
    """ "安装官网标准教程（未成功）" over a fenced block, "Built from the tarball (fails):" over ```...```: a one-line
    paragraph that says how it went, right above a code block, and the block are one try; the block's commands are
    its detail, not tries of their own."""
    out = []
    for k, j in enumerate(js):
        u = j.unit
        if u.kind != "sentence" or u.item >= 0 or u.quoted or u.id in used or len(plain(u.text)) > 120 \
                or j.label in ("proposal", "request", "plan", "boilerplate") \
                or any(n.unit.block == u.block and n is not j for n in js[max(0, k - 3):k + 4]):
            continue  # (a caption is a paragraph of its own)
        aside = _CAPTION_VERDICT.search(plain(u.text))  # (the verdict set apart: "Okay now try this:" says none)
        said = re.split(r"[,，;；]", aside.group(1) or aside.group(2))[0].strip() if aside else ""
        # (a verdict of a few words, "编译失败", "fails", "未成功，可能仅针对9.0.0有效"; not an aside that explains or
        # sets a condition: "(主要是看是64位还是32位的)", "(if TRUE doesn't work)")
        oc = _outcome(said) if said and (len(said.split()) <= 4 if " " in said else len(said) <= 8) \
            and not re.match(r"(?i)(?:(?:if|when|unless)\b|如果|若|假如)", said) else None
        if oc is not None and _outcome(plain(u.text)[:aside.start()]) not in (None, oc):
            continue  # "I was able to build main (failed a couple weeks prior)": two tries, told apart
        if oc is None and _SETS_BELOW.search(plain(u.text)) and _CHANGE_VERB.search(plain(u.text)):
            oc = _outcome(plain(u.text))  # "Solved by setting the following in Makefile:": the block is what was set
        if oc not in ("worked", "failed", "partial"):
            continue
        fence = next((c for c in code if u.last < c.first <= u.last + 2), None)
        if fence is None:
            continue
        block = [c for c in code if c.block == fence.block] + [n.unit for n in js[k + 1:k + 200]
                                                              if n.unit.block == fence.block and n.unit.kind == "command"]
        ran = [b for b in block if b.kind == "command" or b.text.strip().strip("`").strip()]
        if not ran or any(b.id in used for b in block):
            continue
        shown = " ".join(" ".join(b.text.split()) for b in block)[:300]  # (what was set or run, on one line, for `tried`)
        f = Found(f"{plain(u.text)} {shown}".strip(), plain(u.text), oc, u.first, max(b.last for b in block), u.author,
                  [u.id] + [b.id for b in block], j.confidence, title=plain(u.text))
        used.update(f.units)
        out.append(f)
    return out


def _keyed(js: list[Judged], used: set[int], code: list[Unit] | None = None) -> list[Found]:
    """A case list and a separate result list ("case1: ZeRO-1 ..." ... "case1: OOM"): the later line with the same
    key that says how it went is the earlier line's result."""
    first: dict[str, tuple] = {}
    out = []
    for e in _entries(js, code or []):
        key, rest, lo, hi, j, who, block = e
        if key not in first:
            first[key] = e
            continue
        a = first[key]
        oc = _outcome(rest)
        # (the result is told in another list or block: "2 /15 Test #2 ..." under "2 /5 Test #2 ..." in one listing a
        # program printed is another row)
        if oc and block != a[6] and (a[4] is None or a[4].unit.id not in used) and lo > a[2]:
            units = [x.unit.id for x in (a[4], j) if x is not None]
            did = plain(a[4].unit.text) if a[4] is not None else plain(f"{a[0]}: {a[1]}")
            f = Found(did, plain(rest), oc, a[2], max(lo, hi), who, units, 0.5)
            out.append(f)
            used.update(f.units)
    if len(out) < 2:
        return _undo(out, used)
    return out


def _captioned(out: list[Found], js: list[Judged], captions: dict[int, int]) -> list[Found]:
    """The tries of one list, and the verdict that speaks for them all: each item read as an attempt with no result
    of its own takes the list's verdict -- the sentence right under the list when it speaks for every item ("None of
    these helped.", "All of them hang") or the list's own last item when it is labelled a result ("- **Result:**
    same error every time").  A list captioned as done ("I tried building it with:" / "- flag A" / "- flag B") is
    told in the caption's words, and the caption is not an attempt of its own beside its items."""
    at = {j.unit.id: k for k, j in enumerate(js)}
    groups: dict[int, list[Found]] = {}
    for f in out:
        u = js[at[f.units[0]]].unit if f.units and f.units[0] in at else None
        if u is not None and u.item >= 0:
            groups.setdefault(u.group, []).append(f)
    by_unit = {f.units[0]: f for f in out if f.units}
    members: dict[int, list[int]] = {}  # each list's items, in order (indexed once: a doc of many lists stays linear)
    for k, j in enumerate(js):
        if j.unit.item >= 0 and j.unit.group in groups:
            members.setdefault(j.unit.group, []).append(k)
    drop: set[int] = set()
    for group, items in groups.items():
        cap = captions.get(group)
        capj = js[at[cap]] if cap in at else None
        if cap is not None and (c := by_unit.get(cap)) is not None and len(c.units) <= 1:
            drop.add(id(c))
        lead = plain(capj.unit.text).rstrip(" :：") if capj is not None and capj.unit.kind != "heading" else ""
        verdict = _list_verdict(js, members.get(group, []))
        if verdict is None and capj is not None and _outcome(plain(capj.unit.text)) in ("worked", "failed", "partial"):
            verdict = capj  # "I have tried the following things without being able to fix the issue:" over the list
        for f in items:
            if lead and not capj.unit.text.rstrip().endswith((":", "：")):
                f.title = f.title or f.did
                f.did = f"{lead} {f.did}"  # "I tried building llama.cpp with" + "-DGGML_HIP_UMA=ON"
            item = js[at[f.units[0]]]
            # (an item with a verdict mark of its own, "q8_0 / q4_0  ❌ crashes", keeps it)
            if verdict is not None and not f.result and verdict.unit.id not in f.units and (
                    f.outcome == "inconclusive" or not (_TOLD & set(item.features) or _VERDICT_MARK.search(item.unit.text))):
                f.outcome, f.result = _outcome(verdict.unit.text), plain(verdict.unit.text)
                f.last = max(f.last, verdict.unit.last)
                f.units.append(verdict.unit.id)
    return [f for f in out if id(f) not in drop]


# An item that says how it went in a shape of its own ("V0 engine: same crash", "✅ ...") keeps its verdict; one
# whose only verdict is a word of doing ("Built from scratch") takes its list's.
_TOLD = frozenset({"an arrow from what was done to how it went", "marked with a verdict (✅ ❌)",
                   "a setting and what it measured", "an action that says how it went (-ing ... worked)", "says what fixed it"})


def _list_verdict(js: list[Judged], ks: list[int]) -> Judged | None:
    """The verdict that speaks for every item of a list (``ks``: its items' places in ``js``): the sentence right
    under it that says so ("None of these helped."), or its last item when that is a labelled result
    ("- **Result:** same error every time")."""
    if not ks:
        return None
    tail = js[ks[-1]]
    if "labelled as a result" in tail.features and not _DOING & set(tail.features) \
            and _outcome(tail.unit.text) in ("worked", "failed", "partial") and len(ks) >= 2:
        return tail
    if ks[-1] + 1 >= len(js):
        return None
    n, u = js[ks[-1] + 1], tail.unit
    if n.unit.item >= 0 or n.unit.path != u.path or n.unit.post != u.post or n.unit.first - u.last > 3:
        return None
    text = plain(n.unit.text)
    oc = _outcome(text)
    # (not a sentence naming tries of its own, "`A`, `B` and `C` change nothing": those are its subjects, not the list)
    return n if oc in ("worked", "failed", "partial") and table(language(text)).has("outcome.collective", text) \
        and not _compared(n.unit.text) else None


def _lists(js: list[Judged], used: set[int], captions: dict[int, int] | None = None) -> list[Found]:
    """Two lists under one heading, the second saying how each item of the first went, in the same order
    ("We ran six variants: 1. ... 6. ..." / "What happened, same numbering: 1. same hang ...").  A second list
    introduced as things done ("We also tried these flags:") is not the first one's results."""
    heads: dict[int, list[Judged]] = {}
    for j in js:
        if j.unit.item >= 0 and j.unit.head and j.unit.depth == 1:
            heads.setdefault(j.unit.group, []).append(j)
    groups = sorted(heads.values(), key=lambda g: g[0].unit.first)
    out: list[Found] = []
    for a, b in zip(groups, groups[1:]):
        if a[0].unit.path != b[0].unit.path or len(b) < 2 or len(b) > len(a) or b[0].unit.group in (captions or {}):
            continue
        said = [_outcome(j.unit.text) for j in b]
        if sum(x is not None for x in said) * 2 <= len(b) or sum(_outcome(j.unit.text) is not None for j in a) * 2 > len(a):
            continue
        for x, y, oc in zip(a, b, said):
            if x.unit.id in used or y.unit.id in used:
                continue
            f = Found(plain(x.unit.text), plain(y.unit.text), oc or "inconclusive", x.unit.first, y.unit.last,
                      y.unit.author, [x.unit.id, y.unit.id], 0.5)
            out.append(f)
            used.update(f.units)
    return out


def _undo(out: list[Found], used: set[int]) -> list[Found]:
    for f in out:
        used.difference_update(f.units)
    return []


def _under_heading(j: Judged, heads: dict[int, Unit], made: list[int]) -> Found | None:
    """A result under a heading that names the change ("### Disable P2P" / "Result: NCCL works"): the heading is the
    action, when nothing under it was taken for one (``made``: the first lines of the attempts so far, sorted)."""
    u = j.unit
    h = heads.get(u.path[-1]) if u.path else None
    if h is None or h.level == 1 or post_author(h.text) or not _KNOB.search(h.text) and len(h.text.split()) > 8:
        return None
    k = bisect.bisect_left(made, h.first)
    if k < len(made) and made[k] <= u.last:
        return None
    oc = _outcome(u.text)
    if not oc or oc == "untested" or not _names_a_change(h.text):
        return None
    return Found(plain(h.text), plain(u.text), oc, h.first, u.last, u.author, [u.id], j.confidence)


_CONTAINER = ("tried", "worked", "failed")
# An entry of a numbered series: "### Config A — baseline", "### 3b. allocate the cache", "Try 2 - restore_value",
# "### Intento 4: ...", "## Phase 1: Reproduce ✅", "排查过程1——检查源" (no space after a CJK word). Shape, not wording: a word and a number or letter, or a number.
# ("\s+(?:#\s*)?", not "\s+#?\s*": two runs of spaces side by side split a long run every way before failing)
ENTRY = recache.compile(r"^\W{0,4}(?:(?P<kw>[^\W\d_]{2,14})(?:(?:\s+(?:#\s*)?|\s*#\s*|\s*[-_]\s*|"
                   r"(?<=[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]))(?P<n>\d{1,3}[a-z]?)|\s+(?P<n3>[A-Z]))(?![\w.])|"
                   r"(?P<n2>\d{1,3}[a-z]?)(?:[.)]|\ufe0f?\u20e3))"
                   r"\s*(?:\([^)]{1,30}\))?\s*(?:[:.)—–-]+\s*)?(?P<rest>.*)$")
_PROPOSAL_KW = recache.compile(r"^(?:option|solution|idea|proposal|alternative|choice|candidate|h|hypothesis|theory|"
                          r"recommendation|opción|option|vorschlag|方案|hypothese|hypothèse|hipótesis|hipotesis|vermutung|"
                          r"гипотеза|версия|假设|假設|猜想|推测|仮説|推測|가설|추정)$", re.I)


def _has_body(h: Unit, js: list[Judged], code: list[Unit]) -> bool:
    return any(x.path and x.path[-1] == h.id for x in code) or any(j.unit.path and j.unit.path[-1] == h.id for j in js)


def _headed(js: list[Judged], heads: dict[int, Unit], used: set[int], code_units: list[Unit] = (),
            roles: dict[int, str | None] | None = None, parents: dict[int, Unit] | None = None) -> list[Found]:
    """Numbered or captioned steps under a heading of things tried ("## Solution implemented" / "### 1. Install
    the CUDA components" + a command): each sub-heading that names a change is one attempt, its text the
    detail, the first result under it (else the container's word: what worked, what didn't) its outcome."""
    out = []
    kids: dict[int, list[Judged]] = {}
    for j in js:
        if j.unit.path:
            kids.setdefault(j.unit.path[-1], []).append(j)
    for h in heads.values():
        if h.level == 1:
            continue  # the document's title
        parents = parents or heads  # a container heading may lie outside the lines read (another scope's)
        parent = next((parents.get(p) for p in reversed(h.path) if p in parents), None)
        if parent is not None and parent.level == 1:
            parent = None  # the document's title is no container
        roles = roles or {}
        role = (roles.get(parent.id) or heading_role(parent.text, language(parent.text))) if parent is not None else None
        entry = ENTRY.match(plain(h.text)) if (h.post < 0 or post_author(h.text) is None) and not _DATE_HEAD.match(
            plain(h.text)) else None  # "hello-11 — 2024-11-18" is a post, "Mon 14 Oct" a day: neither is try 14
        if entry and entry.group("kw") and _PROPOSAL_KW.match(entry.group("kw")):
            continue  # "Option 2 — ...": a proposal, read with the plan and options
        in_container = role in _CONTAINER and not (roles.get(h.id) or heading_role(h.text, language(h.text))) and (
            _names_a_change(h.text) or re.match(r"^\W*\d{1,2}[.)]\s", h.text))
        # "## xformers - Not Working", "## bitsandbytes - Works": a heading that says how its try went is one
        entered = in_container or (entry and role not in ("options", "plan", "boilerplate", "lessons"))
        # (a caption inside it, "**Impact:**" over a list, is a part of the section, not a section of its own)
        told = not entered and h.level > 1 and role not in ("options", "plan", "boilerplate", "lessons") \
            and heading_outcome(_VERDICT_MARK.sub("", h.text)) in ("worked", "failed", "partial") \
            and not heading_role(h.text, language(h.text)) \
            and not any(h.id in o.path and o.level < 7 for o in heads.values())  # a leaf section, not a container
        if not entered and not told:
            continue
        under = kids.get(h.id, []) + ([j for c in heads.values() if c.level == 7 and c.path and c.path[-1] == h.id
                                       for j in kids.get(c.id, [])] if told else [])
        card = _card(under)
        if sum(j.label in ACTS for j in under if j not in card) >= 2 or sum(
                1 for j in under if j.unit.kind == "row" and _row(j)) >= 2:
            continue  # the heading groups several tries (or a table of runs): they speak for themselves
        res = next((j for j in under if j.label in ("result", "action_result") or "labelled as a result" in j.features),
                   None)
        oc = heading_outcome(h.text) or (_card_outcome(card) if card else None) or (
            _outcome(res.unit.text) if res is not None else None)
        if oc == "untested" or any(_outcome(j.unit.text) == "untested" for j in under):
            continue  # "→ not tried", "not done — blocked": listed, never run
        if oc is None:
            oc = {"worked": "worked", "failed": "failed"}.get(role) or oc or "inconclusive"
        keyed = bool(entry and entry.group("kw"))  # "issue 4: ...", "Config B — ...": a named entry of a series
        if res is None and not heading_outcome(h.text) and not any(j.label in ACTS for j in under) \
                and role not in ("worked", "failed") and not (keyed and _has_body(h, js, code_units)) \
                and not (_told_done(h.text) and _has_body(h, js, code_units)):
            continue  # "### 3c. upgrade to ROCm 6.3": listed, but nothing says it was run
        last = max([j.unit.last for j in under] + [h.last])
        said = _card_text(card) if card else plain(res.unit.text) if res is not None else ""
        # ("### 3. Outdated gsplat" / "**Solution:** Upgraded gsplat": the heading names the try, its action says it)
        act = next((j for j in under if j.label in ACTS and j is not res and j not in card), None)
        did = f"{plain(h.text)}\n{plain(act.unit.text)}" if act is not None else plain(h.text)
        f = Found(did, said, oc, h.first, last, h.author, [j.unit.id for j in under], 0.5)
        f.title = (entry.group("rest") if entry and entry.group("rest") else
                   re.sub(r"^\W*\d{1,2}[.)]\s*", "", plain(h.text))).strip() or plain(h.text)
        fix = act or res
        if fix is not None and _PROBLEM_LINE.match(plain(h.text)):
            # ("## Problem 1: CUDA kernel X has no device code" / "Solution: rebuilt with its arch"): the entry names the
            # problem; the try is the fix said under it, and is titled so
            lab = _sentence_label(plain(fix.unit.text))
            f.title = item_title(lab[1] if lab and lab[1].strip() else plain(fix.unit.text)) or f.title
        if told:
            f.title = re.sub(r"\s[—–-]{1,2}\s[^—–-]+$", "", f.title).strip() or f.title  # "xformers - Not Working"
        used.update(f.units)
        out.append(f)
    return out


# "- **Build**: ✅ success (33 min)": a field of a record, its label in bold
_FIELD_ITEM = recache.compile(r"^\W{0,3}\*\*(?P<k>[^*\n]{1,30}?)[:：]?\*\*\s*[:：]?\s*\S")


def _card(under: list[Judged]) -> list[Judged]:
    """The list under a heading when it is one record's fields ("- **Image**: ...", "- **Build**: ✅ success",
    "- **Run**: ❌ failed (EngineCore crash)"): three or more items, every one a bold label and its value, one at least
    with a verdict, no label twice ("**Command:**" / "**Result:**" again: several variants, each a try). Its items
    tell the heading's try (its settings, how each stage went), not tries of their own."""
    listed = [j for j in under if j.unit.item >= 0]
    top = min((j.unit.depth for j in listed), default=0)
    items = [j for j in listed if j.unit.depth == top]
    if not items:  # the fields as lines of one paragraph ("**Build**: ✅ ok" / "**Run**: ❌ crashes")
        items = [j for j in under if j.unit.kind == "sentence" and j.unit.first == j.unit.last]
        if len({j.unit.block for j in items}) != 1 or len(items) != sum(j.unit.kind == "sentence" for j in under):
            return []
    keys = [m.group("k").strip().casefold() for j in items if (m := _FIELD_ITEM.match(j.unit.text))]
    if len(items) < 2 or len({j.unit.group for j in items}) != 1 or len(keys) != len(items) or len(set(keys)) != len(keys):
        return []
    if not any(_VERDICT_MARK.search(j.unit.text) or _outcome(j.unit.text) in ("worked", "failed") for j in items):
        return []
    return items + [j for j in listed if j.unit.depth > top]  # (a field's own sub-items: "`x.cu.o` ✅" under it)


def _card_text(card: list[Judged]) -> str:
    """The record's fields, as its result: "Build: ✅ ok (6 min); Run: ❌ garbage output" (every stage, not the first)."""
    top = min(j.unit.depth for j in card)
    return "; ".join(plain(j.unit.text) for j in card if j.unit.depth == top)


def _card_outcome(card: list[Judged]) -> str | None:
    """How the record's try went by its fields' verdicts: a stage that failed fails it ("Build: ✅", "Run: ❌")."""
    top = min(j.unit.depth for j in card)
    said = {_outcome(j.unit.text) for j in card if j.unit.depth == top} - {None, "untested", "inconclusive"}
    return "failed" if "failed" in said else "partial" if "partial" in said else "worked" if said else None


# A name from the code ("blas_test", "dslash_test", "all_reduce_perf"): "Double prec blas_test segfaults" ran it.
_SNAKE = recache.compile(r"\b[a-z][a-z0-9]*_[a-z0-9_]*[a-z0-9]\b")


def _named_result(j: Judged) -> Found | None:
    """ "No luck with `VLLM_USE_V1=0`, it hangs there too": a result that names the setting it ran with is a try
    of that setting by whoever says it (a thread's reply, a note's line)."""
    u = j.unit
    said = plain(u.text)
    if not (_KNOB.search(said) or _SNAKE.search(said)) or u.quoted or {"pasted error output", "the opening paragraph (the problem)",
                                                       "conditional", "modal (could, should, maybe)", "a question",
                                                       "labelled as reasoning", "under a lessons heading",
                                                       "under a boilerplate heading"} & set(j.features):
        return None
    oc = _outcome(u.text)
    if oc in (None, "untested"):
        return None
    return _found(j, u.text, u.text, outcome=oc)


def _told_done(heading: str) -> bool:
    """ "### 2. Checked which process holds VRAM", "### 3. ドライバを入れ直した": a step's heading in the past tense says it was
    run, whether or not a sentence under it says how it went."""
    from dbglog.docreader.cues import _is_past

    s = re.sub(r"^\W*\d{1,2}[.)]\s*", "", plain(heading)).strip()
    lang = language(s)
    if lang == "en":
        return bool(s) and _is_past(s.split()[0], table("en"))
    return table(lang).has("forms.action", s)  # (a verb's past form; a bare verb of the word lists may be a plan)


def _names_a_change(heading: str) -> bool:
    """ "Disable P2P", "Switched to gloo", "`NCCL_ALGO=Tree`": a heading that is itself an action."""
    t = table("en")
    s = plain(heading)
    from dbglog.docreader.cues import _is_past

    first = s.split()[0] if s.split() else ""
    return bool(_KNOB.search(s) or t.find("mood.imperative_lead", s) or _is_past(first, t))


def _heading_verdict(j: Judged) -> str | None:
    """ "failed" under a heading saying what failed ("## What didn't work"), "worked" under one saying what worked."""
    return next((o for o in ("failed", "worked") if f"under a heading saying what {o}" in j.features), None)


def cue_outcome(j: Judged) -> str | None:
    """The verdict the cues read in a unit, in the document's language (``outcome: failed``), or None."""
    return next((k.split(": ", 1)[1] for k in j.features if k.startswith("outcome: ")), None)


def _found(j: Judged, did: str, result: str, outcome: str | None = None, last: int | None = None) -> Found:
    u = j.unit
    # The unit's own verdict as the cues read it, in the document's language ("– gleicher Fehler" in a German note
    # whose code names make the sentence alone look English).
    # (with no result unit, the verdict the try's own words give is its outcome: "Tried `--enforce-eager`; haven't been
    # able to eliminate the error", "solution : update the cudnn to 5.1 the problem is solved")
    own = cue_outcome(j) if result == u.text or not result else None
    # (an item under "## What didn't work" that says nothing of its own went as its heading says)
    oc = outcome or _outcome(result) or own or _heading_verdict(j) or "inconclusive"
    f = Found(_unlabelled(did), _unlabelled(result) if result != did else "", oc, u.first,
              last if last is not None else u.last, u.author, [u.id], j.confidence)
    # (read after the field's label is off: "**Solution:** built on a compute node" is no "Solution: <verdict>")
    split = colon_verdict(plain(f.did), language(did))
    if split:
        f.title = split[0]  # "`--lowvram` alone: still OOM" is titled by what was tried
    return f


def _shown_below(f: Found, u: Unit, code: list[Unit]) -> Found:
    """ "I ran into this and solved it by doing this:" over a fenced command: the command is what was done (the try's
    title and lines take it in)."""
    shown = _fence_below(u, code)
    cmd = next((x.strip() for x in shown.text.split("\n") if x.strip() and not x.strip().startswith("```")), "") \
        if shown else ""
    cmd = _PROMPT.sub("", cmd)
    if cmd and len(cmd) <= 400 and (_TOOL.match(cmd) or re.match(r"[A-Z_][A-Z0-9_]*=\S", cmd)):  # (not output shown)
        f.did, f.last, f.title = f"{f.did} `{cmd}`", max(f.last, shown.last), cmd
    return f


def _unlabelled(text: str) -> str:
    """ "checked: moved the early return" is the action "moved the early return": the field's label off."""
    from dbglog.docreader.vocab import ATTEMPT_LABELS, label_of

    s = plain(text)
    lab = label_of(s, ATTEMPT_LABELS)
    return lab[1] if lab and lab[1] else s


def _shared_verdict(j: Judged, ahead: list[Judged], used: set[int]) -> Found | None:
    """ "I set the batch size to 1. I disabled multi-GPU training. Still crashes.": actions told one after another in
    one paragraph, then one verdict, are one try each with that verdict. The verdict stays free for the last action,
    which reads it as its own result."""
    u = j.unit
    for n in ahead:
        if n.unit.block != u.block or n.unit.kind != "sentence" or n.unit.id in used:
            return None
        if n.label == "action" and "labelled as a result" not in n.features:
            continue  # (another action of the run)
        said = _outcome(n.unit.text) if n.label == "result" and not (_DOING & set(n.features)) else None
        if said not in ("worked", "failed", "partial"):
            return None
        return _found(j, u.text, n.unit.text, outcome=said)
    return None


def _fence_below(u: Unit, code: list[Unit]) -> Unit | None:
    """The first unit of the fence a caption ending in a colon shows, a line or two under it (None: no such)."""
    if not u.text.rstrip().endswith(":"):
        return None
    return next((c for c in code if 0 < c.first - u.last <= 2), None)


def _shown_runs(u: Unit, ahead: list[Judged], used: set[int], code: list[Unit]) -> tuple[Unit | None, int, list[Judged]]:
    """ "Rebuilt it from source:" over a fence: (the fence's first unit, its last line, the runs it holds). A console
    session is split into a unit per prompt, so the fence's runs are what the caption did, not tries of their own."""
    shown = _fence_below(u, code)
    if not shown:
        return None, -1, []
    ran = [n for n in ahead if n.unit.kind == "command" and n.unit.block == shown.block and n.unit.id not in used]
    end = max([c.last for c in code if c.block == shown.block] + [n.unit.last for n in ran])
    return shown, end, ran


def _with_result(j: Judged, ahead: list[Judged], used: set[int], code: list[Unit] = ()) -> Found:
    u = j.unit
    # "Rebuilt it from source:" + the command in a fence + "This works": the fence is the action's own text.
    shown, end, ran = _shown_runs(u, ahead, used, code)
    for n in ahead:
        if any(n is r for r in ran):
            continue
        after_code = shown and 0 < n.unit.first - end <= 2 and (n.unit.post, n.unit.path) == (u.post, u.path)
        if not (_same_place(u, n.unit) or after_code) or n.unit.id in used:
            break
        labelled = "labelled as a result" in n.features
        # ("还是出现了同样的错误" / "それでも同じエラーが出ました" after the change: the failure persisting, told in a past
        # form that reads like an action, naming no setting of its own, is the change's result)
        persisted = n.label in ACTS and "'still' or 'no change'" in n.features and _outcome(n.unit.text) in (
            "failed", "partial") and not _KNOB.search(n.unit.text) and not _OWN_TRY_SAID.intersection(n.features)
        # ("..., the stopgap was a custom MoE config. That also held for the 3 days we ran it.": a sentence of the same
        # item or paragraph, or right under the fence the action showed, that refers back to it and says how it went,
        # naming no setting of its own)
        persisted = persisted or n.label in ACTS and (n.unit.block == u.block or after_code) \
            and _refers_back(n.unit.text) and _outcome(n.unit.text) in ("worked", "failed", "partial") \
            and not _KNOB.search(n.unit.text)
        if (n.label in ACTS and not labelled and not persisted) or n.unit.kind != "sentence":
            break
        if n.label == "result" or labelled or persisted:
            # (the result's verdict as the cues read it, in the document's language, when the sentence alone reads as
            # another: "→ **Erfolgreich!** (10GB Peak Memory)" in a German note looks English by its words)
            f = _found(j, u.text, n.unit.text, outcome=_outcome(n.unit.text) or cue_outcome(n), last=n.unit.last)
            f.units.append(n.unit.id)
            if after_code and _names_nothing(u.text):
                # "Run this:" names nothing: the try is the command it shows
                f.title = ran[0].unit.text if ran else next((x.strip() for x in shown.text.split("\n") if x.strip()),
                                                            f.title)
            return _with_runs(f, ran)
    oc = _outcome(u.text)
    f = _found(j, u.text, "", outcome="untested" if oc == "untested" else None)
    told = next((g for r in ran if (g := _command(r)) is not None), None)  # (how the run shown went, by what it printed)
    if told is not None and f.outcome in ("inconclusive", "untested"):
        f.outcome, f.result = told.outcome, told.result
    return _with_runs(f, ran)


# A caption that points at what it shows ("Run this:", "I ran the following:", "Here is what I did:") names no try.
_POINTS_BELOW = recache.compile(r"(?:\b(?:this|these|that|following|below|here|it|as follows)|^\W*\w+(?:\s+\w+){0,2})\W*$", re.I)


def _names_nothing(caption: str) -> bool:
    return bool(_POINTS_BELOW.search(plain(caption)[-200:]))


def _with_runs(f: Found, ran: list[Judged]) -> Found:
    """The try takes in the runs its caption showed: their lines, and the commands in what it did."""
    if ran:
        f.title = f.title or plain(f.did).rstrip(":： ")
        f.units += [r.unit.id for r in ran]
        f.last = max(f.last, ran[-1].unit.last)
        f.did = f"{f.did} " + " ".join(f"`{r.unit.text}`" for r in ran[:3])
    return f


def _measurement(text: str) -> bool:
    """ "Time for inference 2: 5.03 sec total, 39.74 tokens/sec", "Bandwidth achieved: 535.52 GB/s": what one run
    measured, a number (``cues._MEASURED`` also reads a verdict, "fp16: OOM", which is no measurement)."""
    m = _MEASURED.match(plain(text))
    return bool(m) and re.match(r"(?:~|≈|about\s+)?\d", m.group("val"), re.I) is not None


def _measured_below(j: Judged, ahead: list[Judged], used: set[int]) -> Found | None:
    """A short line naming a setup ("torch.compile on whole model", "Refactored to also compile sampling code") whose
    next lines, in its paragraph, are what one run of it measured: a run, seen (how it compares is the reader's)."""
    u, said = j.unit, []
    for n in ahead:
        if n.unit.block != u.block or n.unit.id in used or not _measurement(n.unit.text):
            break
        said.append(n)
    if not said or _outcome(u.text) or u.text.rstrip().endswith("?") or _PROPERTY.match(plain(u.text)):
        return None  # ("GPU: RTX 6000" over "Memory: 26786MiB": a setup's properties, not a setup and its run)
    f = _found(j, u.text, "; ".join(plain(n.unit.text) for n in said), outcome="inconclusive", last=said[-1].unit.last)
    f.units += [n.unit.id for n in said]
    f.title = plain(u.text).rstrip(":：").strip()
    return f


def _refers_back(text: str) -> bool:
    """Does the sentence open by pointing at what came before it ("That also held", "Das hat geholfen", "这样就好了")?"""
    s = plain(text).lstrip()
    rx = table(language(s)).rx.get("mood.refers_back")
    return bool(rx and rx.match(s))


# A sentence that tells a try of its own ("Attempted forcing Vulkan via env vars (no effect)"), not a verdict on the last.
_OWN_TRY_SAID = frozenset({"opens with a past-tense verb", "a subject with a past-tense verb", "first person"})


# What an item does when it names a try of its own; a checked state ("✅ CUDA Toolkit 12.8 installed") does none.
_OWN_TRY = frozenset({"opens with a past-tense verb", "first person", "a command", "labelled as what was done",
                      "opens with a named setting or file, and how it went", "an arrow from what was done to how it went",
                      "an action that says how it went (-ing ... worked)", "says what fixed it", "imperative"})


def _checked_below(j: Judged, ahead: list[Judged], used: set[int]) -> Found | None:
    """ "We upgraded to CUDA 12.8." / "**Build verified working**:" / "✅ Toolkit installed" "✅ headers present": a list
    right under an action (a caption may stand between) whose every item is a state marked with a verdict, none naming
    a try of its own, is how that action went: ✅ all worked, ❌ all failed, both partial."""
    u, items, cap, marks = j.unit, [], None, set()
    for n in ahead:
        v = n.unit
        # (a caption alone on its line is a heading of its own: the list sits one level below the action then)
        below = v.path[:-1] == u.path and v.first - u.last <= 4
        if v.id in used or v.post != u.post or not (v.path == u.path or below or items and v.path == items[0].unit.path):
            break
        if not items and cap is None and v.item < 0 and v.first - u.last <= 2 and plain(v.text).rstrip().endswith(":") \
                and len(plain(v.text).split()) <= 6:
            cap = v  # "Build verified working:", "Results:": names the list below
            continue
        if v.item < 0 or (items and v.group != items[0].unit.group) or (not items and v.first - (cap or u).last > 4):
            break
        mark = _TRY_MARK.match(_unlead(v.text))
        if not mark or _OWN_TRY & set(n.features):
            return None  # (a "⏳ pending" line is no verdict: the list is not how it went)
        items.append(n)
        marks.add(_outcome(mark.group(0)))
    if len(items) < 2 or any(x.unit.depth != items[0].unit.depth for x in items):
        return None
    oc = marks.pop() if len(marks) == 1 else "partial"
    said = "; ".join(plain(_VERDICT_MARK.sub("", x.unit.text)).strip(" -*+") for x in items)
    f = _found(j, u.text, said, last=items[-1].unit.last, outcome=oc)
    f.units += ([cap.id] if cap is not None else []) + [x.unit.id for x in items]
    return f


def _cases(j: Judged, ahead: list[Judged], used: set[int]) -> list[Found] | None:
    """ "1. Using float16 type:" over "- GPU usage 0%, inference works correctly" / "- GPU usage 100%, the encoder
    outputs NaN": an item that names a setting and ends in a colon, over sub-items that each say how one case of it
    went, is a case list: each sub-item is a run of its own (the setting and the case), not one result of one try."""
    u = j.unit
    said = plain(u.text).rstrip()
    if not said.endswith((":", "：")) or len(said.split()) > 8 or _outcome(said) or j.label in ("proposal", "request"):
        # (a caption with a verdict of its own, "Env vars ineffective:", heads the tries it sums up)
        return None
    subs = _sub_items(u, ahead, used)
    subs = [n for n in subs if n.unit.depth == u.depth + 1]
    if len(subs) < 2 or any(n.label not in ("result", "action_result") or _outcome(n.unit.text) not in (
            "worked", "failed", "partial") or (_OWN_TRY_SAID | {"a command"}) & set(n.features) for n in subs):
        return None  # (a sub-item that names a try of its own, or says nothing of how it went: not a case list)
    out = []
    for n in subs:
        f = _found(j, f"{said.rstrip(':：').strip()}: {plain(n.unit.text)}", n.unit.text, last=n.unit.last,
                   outcome=_outcome(n.unit.text))
        f.units.append(n.unit.id)
        f.title = f"{said.rstrip(':：').strip()}: {plain(n.unit.text).split(',')[0].strip()}"
        out.append(f)
    return out


def _sub_items(u: Unit, ahead: list[Judged], used: set[int]) -> list[Judged]:
    """The items nested under item ``u`` that follow it, in its post and place, not yet read."""
    return list(itertools.takewhile(lambda n: n.unit.item >= 0 and n.unit.depth > u.depth and n.unit.post == u.post
                                    and n.unit.path == u.path and n.unit.id not in used, ahead))


def _one_run(j: Judged, ahead: list[Judged], used: set[int]) -> Found | None:
    """ "1. `--max-tokens=8`:" over "- output: `...`" / "- peak: 6053MiB" / "- PASS (no kill)": an item that names a
    setting and ends in a colon, over sub-items that are what one run of it gave, one of them saying how it went."""
    u = j.unit
    said = plain(u.text).rstrip()
    if not said.endswith((":", "：")) or len(said.split()) > 8 or not _KNOB.search(said) or j.label in ("proposal",
                                                                                                     "request"):
        return None
    subs = _sub_items(u, ahead, used)
    told = [n for n in subs if _outcome(n.unit.text) in ("worked", "failed", "partial")
            and not (_OWN_TRY_SAID | {"a command"}) & set(n.features)]
    if not subs or len(told) != 1 or any(n.label in ACTS and n not in told for n in subs):
        return None  # (sub-items that are tries of their own, or several verdicts: a case list or a story)
    f = _found(j, said.rstrip(":：").strip(), "; ".join(plain(n.unit.text) for n in subs)[:400],
               outcome=_outcome(told[0].unit.text), last=subs[-1].unit.last)
    f.units += [n.unit.id for n in subs]
    return f


def _answered(j: Judged, parts: list[str], ahead: list[Judged], used: set[int]) -> list[Found]:
    """A suggestion in a thread, and the later posts of other people saying how it went when they tried it:
    each answerer's try is an attempt of theirs (the asker's "yes, it works", a third person's "worked for me").
    Several suggestions ("try X and, separately, the nightly wheel?") are answered part by part: an answer sentence
    goes to the part whose setting it names. "Can't tell yet" is replaced by the same person's later verdict."""
    u = j.unit
    got: dict[tuple[str, int], Found] = {}
    first_reply = next((n.unit.post for n in ahead if n.unit.post > u.post and n.unit.author != u.author), None)
    for i, n in enumerate(ahead):
        v = n.unit
        nxt = ahead[i + 1].unit if i + 1 < len(ahead) else None
        if v.post != u.post and not v.quoted and n.label in ("proposal", "request") and (
                _KNOB.search(v.text) or nxt is not None and nxt.post == v.post and _KNOB.search(nxt.text)):
            # another suggestion (the same helper's next one too; "try this" over its setting on the next line):
            # later answers may be to that one
            break
        if v.post == u.post or v.author == u.author or v.id in used or v.post < 0 or v.quoted or _ME_TOO_LEAD.match(plain(v.text)):
            continue  # a quote ("> try with X") is the suggestion; "Same symptom here" reports the bug, not a try
        if "by the asker" not in n.features and not _POINTS_BACK.search(plain(v.text)[:60]) and not any(
                _names_same(p, v.text) or _tokens(p) & _tokens(v.text) for p in parts):
            # A third person's "we see no hang on H100" is their own try, in their words, not an answer to this one.
            oc = _outcome(v.text) if n.label == "action_result" and "first person" in n.features else None
            if oc in ("worked", "failed", "partial") and (v.author, -1) not in got:
                got[(v.author, -1)] = Found(plain(v.text), "", oc, v.first, v.last, v.author, [v.id], n.confidence,
                                            title=plain(v.text))
            continue
        named = len(parts) > 1 and n.label == "context"  # "Can't tell yet for the backend switch": names its part
        # ("Removed it and it is much faster now": what it did is the suggestion, named by a pronoun)
        refers = n.label in ACTS and not _KNOB.search(v.text) and _refers_to_it(v.text)
        if n.label == "action_result" and _own_try(n) and not any(_names_same(p, v.text) for p in parts) and not refers:
            continue  # "Setting the flag to false avoids the hang for us": a try of their own, read as one
        # "Can you run with NCCL_DEBUG=INFO and attach the log?" answered "Log attached; ACS is on": the first reply ran
        # the look it was asked for (a diagnostic try); a question of fact ("which GPU?") names nothing to run.
        looked = v.post == first_reply and j.label == "request" and n.label in ("context", "result") and any(
            diagnostic(p) or _KNOB.search(p) for p in parts)
        if n.label == "result" or named or looked or refers or (
                n.label == "action_result" and not all(_new_knob(p, v.text) for p in parts)):
            oc = _outcome(v.text) or ("inconclusive" if looked or refers else None)  # "Log attached; ACS is on": what it showed
            # (a first reply that ran what was asked answers each request it names: "`rocminfo`:" + its output, then
            # "`ramalama --image=... serve`" + how that went, are two looks)
            for k in (_parts_answered(parts, v.text, oc) if not looked else [_which_part(parts, v.text) or 0]):
                had = got.get((v.author, k))
                if oc in (None, "untested") or (had is not None and had.outcome != "inconclusive"):
                    continue
                if had is not None:  # the earlier "can't tell yet" gets its verdict
                    had.outcome, had.result, had.last = oc, plain(v.text), v.last
                    had.units.append(v.id)
                    continue
                f = Found(parts[k], plain(v.text), oc, u.first, v.last, v.author, [u.id, v.id], n.confidence)
                f.title, f.answer = _suggestion_title(parts[k]), True
                got[(v.author, k)] = f
        if v.post > u.post + 6:
            break
    return list(got.values())


# "Removed it and it is much faster now": the thing done named by a pronoun, the suggestion's
_IT_DONE = recache.compile(r"^\W*(?:(?:i|we)\s+(?:just\s+)?)?\w+(?:ed|t)\s+(?:it|that|this|them|those)\b", re.I)


def _refers_to_it(text: str) -> bool:
    """Does a reply tell the thing it did only by a pronoun ("Removed it and it is faster now", "Tried that: works")?
    Then what it did is the suggestion above it."""
    return bool(_IT_DONE.match(plain(text)))


def _prepares(text: str) -> bool:
    """ "Installed ROCm 6.0 and the matching wheel", "Wrote a minimal repro script": a task that prepares, by its verb."""
    words = plain(text).lower().split()
    while words and words[0] in ("i", "we", "then", "also", "first"):
        words = words[1:]
    return bool(table("en").rx["setup.verbs"].match(" ".join(words[:2])))


_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_DATE_HEAD = recache.compile(rf"^\W*(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,?\s+)?(?:{_MONTH}\s+\d{{1,2}}\b|\d{{1,2}}\.?\s+{_MONTH}"
                        r"|\d{4}-\d{2}-\d{2}|\d{1,2}[./]\d{1,2}(?:[./]\d{2,4})?\b)|^\W*(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?\s+\d",
                        re.I)
def _housekeeping(text: str) -> bool:
    """ "README updated", "Created `POSTMORTEM_READY.md`", "Committed: 05609b7": a chore, by its verb, with no verdict."""
    chore = table("en").rx["setup.chores"]
    return bool(chore.search(" ".join(plain(text).split()[:4]))) and _outcome(chore.sub(" ", text)) is None


_PROGRESS = recache.compile(r"\d[\d.,]*\s*(?:s/it|it/s|ms/step|s/step|tok/s|tokens/s|t/s|samples/s|img/s)\b")
# A reply that points back at a suggestion: "that", "your fix", "the method you provided", "no effect here either"
_POINTS_BACK = recache.compile(r"\b(?:that|this|it|your|the (?:suggestion|fix|workaround|change|patch|flag|method|solution|"
                          r"params?|parameters?|settings?|options?|steps?)|you (?:provided|suggested|posted|mentioned|"
                          r"recommended|proposed)|either)\b", re.I)


def _names_same(suggested: str, reply: str) -> bool:
    """Does the reply name what was suggested ("disable ACS" / "Disabled ACS with setpci")? Acronyms, code and
    settings shared by both."""
    return bool(_names(suggested) & _names(reply))


@lru_cache(maxsize=4096)
def _names(text: str) -> frozenset:
    # (ASCII edges, not \b: "加入NCCL_P2P_DISABLE=1" names NCCL_P2P_DISABLE, glued to the Chinese before it)
    return frozenset({w.lower() for w in re.findall(r"(?<![A-Za-z0-9_])[A-Z][A-Z0-9_]{1,}(?![A-Za-z0-9_])", text)}
                     | {re.sub(r"[\s`]", "", m.group(0)).lower() for m in _KNOB.finditer(text)})


def _own_try(n: Judged) -> bool:
    """An answer that opens with a doing of its own ("Setting X ...", "Rebuilt with Y ...") and does not point back at
    the suggestion (that, it, this, your)."""
    opens = {"an action that says how it went (-ing ... worked)", "opens with a past-tense verb"} & set(n.features)
    return bool(opens) and not re.search(r"\b(?:that|this|it|your|the suggestion|the fix)\b", plain(n.unit.text)[:40],
                                         re.I)


# A reply that opens by saying it has the same bug ("I have the same bug, only 0.38.1 works") is not taken as the
# answer to the suggestion before it, even when it goes on to tell a try of its own (its try is read on its own)
_ME_TOO_LEAD = recache.compile(r"^(?:same (?:symptom|issue|problem|thing|error|here|for me|on)|me too|\+1|seeing the same|"
                     r"i(?:'m| am) (?:also )?seeing the same|also seeing|we hit the same|i have the same)\b", re.I)


def _post_suggestions(js: list[Judged], mine: list[int], code: list[Unit]) -> list[str]:
    """The things one post (its units' indices in `js`) suggests, each once: a suggestion's own setting, else the one
    named beside it."""
    out: list[str] = []
    # (a post that tells its author's own try and then asks "Anything I'm missing?" asks for help: the command above the
    # question is the author's try, not a suggestion that later posts answer)
    reports = any(js[m].label == "action_result" and "first person" in js[m].features for m in mine)
    for i in mine:
        x = js[i]
        if x.label not in ("proposal", "request") or x.unit.quoted or reports and not _KNOB.search(x.unit.text):
            continue
        listed = _listed_after(js, mine, i)
        # (a request naming nothing introduces the setting right under it, "Can you try this command?" / "`cmd`",
        # before it points back at one above)
        below = next((js[m].unit.text for m in mine if m == i + 1 and _KNOB.search(js[m].unit.text)
                      and js[m].unit.first - x.unit.last <= 2), "")
        if listed:
            said = ""
        elif below and not _KNOB.search(x.unit.text):
            said = below
        else:
            # (a quote of an earlier post is that person's words: read.py leaves it out, units.echoed_quotes)
            said = _suggested(x, [js[m] for m in mine if m < i], code)
        for p in listed or (_parts(said) if said else []):
            if p and p not in out and not any(_tokens(p) and _tokens(p) <= _tokens(q) for q in out):
                out.append(p)
    return out


def _listed_after(js: list[Judged], mine: list[int], i: int) -> list[str]:
    """ "可以试试下面两种情况" / "1. NCCL_P2P_DIRECT_DISABLE=1" / "2. NCCL_P2P_DISABLE=1", "Try one of these:" over a list
    of settings: the items of the list right under the suggestion, each a suggestion of its own ([] unless two or
    more items name a setting each)."""
    after = [js[m].unit for m in mine if m > i]
    if not after or after[0].item < 0:
        return []
    items = [u for u in after if u.group == after[0].group and u.head]
    return [plain(u.text) for u in items] if len(items) >= 2 and all(_KNOB.search(u.text) for u in items) else []


# "try `--max-num-batched-tokens 8192` and, separately, the nightly wheel?": one suggestion per named setting.
_PART_SPLIT = recache.compile(r",?\s*\b(?:and|or)\b,?\s*(?:(?:separately|also|alternatively|then|independently),?\s*)?"
                         r"|;\s*(?:and|or)\s+")


def _parts(said: str) -> list[str]:
    pieces = [p.strip(" ,;?.") for p in _PART_SPLIT.split(plain(said))]
    named = [p for p in pieces if _KNOB.search(p)]
    if len(named) < 2:
        return [plain(said)]
    return [_KNOB.search(p).group(0).strip("`") if len(p.split()) > 8 else p for p in named]


_REPORT_BACK = recache.compile(r"\s+and\s+(?:report(?:\s+back)?|let\s+(?:me|us)\s+know|post|share|tell)\b.*$", re.I)
# "Does it work if you use regular quants?": the condition a question asks about is the thing to try
_IF_YOU = recache.compile(r"\b(?:if|when)\s+you\s+((?:use|try|run|set|switch|build|install|disable|enable|remove|add)\b[^?,;]{3,80})",
                          re.I)
# "Could someone try X", "To split the problem, try with X; that forces sockets": the thing to try is X.
_ASK_LEAD = recache.compile(r"^.*?\b(?:try|tried|trying|use|used|using|set|setting|test|tested|testing|run|running|change|"
                       r"switch|upgrade|downgrade|pin|need|needs)\b\s+(?:with(?:out)?\s+|to\s+)?",
                       re.I)


def _suggestion_title(text: str) -> str:
    """What a suggestion asks to be tried, as a try's title: "Can you try with --no-mmap?" -> "--no-mmap"; "Does your
    card work if you use regular quants of R1?" -> "use regular quants of R1" (a question's condition names the try)."""
    s = re.split(r"\s*;\s*|\?\s", plain(text), maxsplit=1)[0].strip(" ?.")
    s = _REPORT_BACK.sub("", s).strip() or s  # ("... and report back", "... and let us know")
    lead = _ASK_LEAD.match(s)
    cut = s[lead.end():] if lead else s
    if cut != s and _KNOB.search(cut):
        return cut
    asked = _IF_YOU.search(s) if s.rstrip().endswith("?") or text.rstrip().endswith("?") or lead else None
    return asked.group(1).strip() if asked and len(asked.group(1).split()) >= 2 else s


def _tokens(text: str) -> set[str]:
    return {w for w in re.findall(r"[\w.+-]{2,}", text.lower()) if not w.isalpha() or len(w) > 3} - _COMMON


_COMMON = {"with", "from", "that", "this", "same", "have", "tried", "using", "wheel", "there", "then", "also", "flag"}


def _parts_answered(parts: list[str], answer: str, outcome: str | None) -> list[int]:
    """The parts a reply gives its verdict to: the one it speaks of (``_which_part``); or every part it names when
    it names several under one verdict and sets none against another ("加入 A 或 B 可以正常推理", "both A and B work")."""
    k = _which_part(parts, answer)
    if k is not None:
        return [k]
    named = [i for i, p in enumerate(parts) if _names_same(p, answer)]
    # (words that set one part against another, "X didn't help, but Y did", give no one verdict to both: English's
    # "but" / "while", each other language's contrast words from its cue table)
    against = _BUT.search(answer) or table(language(answer)).has("outcome.contrast", answer)
    if len(named) >= 2 and outcome in ("worked", "failed") and not against:
        return named
    return []


def _which_part(parts: list[str], answer: str) -> int | None:
    """The part an answer speaks of: the only one sharing a name with it; with one part, that one."""
    if len(parts) == 1:
        return 0
    words = _tokens(answer)
    low = answer.lower()
    parts = [re.split(r"\s*;\s*|\s+(?:since|because)\s+", p, maxsplit=1)[0] for p in parts]  # the thing, not why
    hits = [k for k, p in enumerate(parts) if _tokens(p) & words
            or any(w.strip("-") and w.strip("-") in low for w in _tokens(p) if len(w) > 3)
            or any(len(w) >= 5 and w in p.lower() for w in words)]  # "Eager: yes" answers `enforce_eager=True`
    return hits[0] if len(hits) == 1 else None


def _new_knob(suggested: str, reply: str) -> bool:
    """Does the reply name a setting the suggestion did not (`enforce_eager =True` is `enforce_eager=True`)?"""
    def knobs(text: str) -> set[str]:
        return {re.sub(r"[\s`]", "", m.group(0)).lower() for m in _KNOB.finditer(text)}

    a, b = knobs(suggested), knobs(reply)
    # `FLASH_ATTN` in the reply is the `VLLM_ATTENTION_BACKEND=FLASH_ATTN` that was suggested
    return bool(b) and not any(x in y or y in x for x in a for y in b)


# What may follow a caption's verdict word without naming a try: nothing, or where and when it went that way.
_PLACE_ONLY = recache.compile(r"^[\s:,;.!-]*(?:$|(?:on|with|for|in|at|under|after|when|here|there|locally|again|too|"
                              r"now|fine|ok)\b)", re.I)


def _run_logs(commands: list[Unit]) -> set[int]:
    """The blocks of commands that log runs: three or more of their commands' comments say how the run went ("#
    Fine.", "# OOM at bs 8"), a third of those that have one or more. There, a command under a remark ("# How is
    qlora's bs the same as ddp's?") was run too: the remark is what its run raised."""
    said: dict[int, list[bool]] = {}
    for u in commands:
        if u.desc and not u.prompted:
            said.setdefault(u.block, []).append(_outcome(u.desc) is not None)
    return {b for b, oks in said.items() if sum(oks) >= 3 and sum(oks) * 3 >= len(oks)}


# A command's comment that gives what it printed ("# Output: gcnArchName='gfx1030'", "# prints: 2.1.0")
_OUTPUT_SAID = recache.compile(r"^\W{0,3}(?:output|prints?|printed|returns?|returned|shows?|showed|got)\s*[:：]", re.I)


# A bisection's step: "git bisect good d894f35" says the commit was tested and passed ("old" in git's other terms),
# "git bisect bad" that it failed; "git bisect start", "reset", "log" are no test
_BISECT = recache.compile(r"^git\s+bisect\s+(?P<v>good|bad|old|new|skip|start|reset|log|replay|visualize|view|"
                          r"terms|run)\b")
_BISECT_SAID = {"good": ("worked", "marked good (passed at this commit)"), "old": ("worked", "marked old (passed)"),
                "bad": ("failed", "marked bad (failed at this commit)"), "new": ("failed", "marked new (failed)"),
                "skip": ("inconclusive", "skipped (could not be tested)")}


def bisect_command(text: str) -> bool:
    """Is this a ``git bisect`` command (a step the rules read by its verb, or bookkeeping that tests nothing)?"""
    return _BISECT.match(text.strip().strip("`")) is not None


def _command(j: Judged, run_log: bool = False) -> Found | None:
    u = j.unit
    step = _BISECT.match(u.text.strip())
    if step:
        said = _BISECT_SAID.get(step.group("v"))
        return _found(j, f"`{u.text}`", said[1], outcome=said[0]) if said else None
    # ("# first try, straight pip: fails": an adverb, then how it went; not an instruction)
    lead = re.sub(r"^(?:first|then|finally|next|also|just|simply)\b[\s,]*(?:try\b[\s,:]*)?", "", plain(u.comment), flags=re.I)
    if table("en").find("mood.imperative_lead", lead) and not re.search(
            r"\b(?:N?OK|NG|(?i:pass(?:ed)?|fail(?:ed)?)|works?|worked|hangs?|crash(?:es|ed)?)\b|->|→", u.comment) \
            and not VERDICT_FIRST.match(u.comment.strip()):
        return None  # "# Restart Docker to apply the changes" over a command: a how-to, not how a try went
    # (a caption's verdict, "# succeeds with --gpus all" over "$ docker run --gpus all ...", when what the command
    # printed says none)
    oc = _outcome(u.comment) or (_outcome(u.desc) if u.prompted and u.desc else None) \
        or ("failed" if "what it printed shows a failure" in j.features else None) \
        or ("inconclusive" if _PROGRESS.search(u.comment) else None) \
        or ("worked" if u.desc and WHAT_IT_TOOK.search(plain(u.desc)) else None)  # ("# I needed to set:" over it)
    if not oc and u.comment and (not u.desc and diagnostic(u.text) or _OUTPUT_SAID.match(u.comment)):
        # "$ nvcc -V" and the lines it printed: a look that was taken (what it showed is its finding); so is a command
        # under its caption with "# Output: gcnArchName='gfx1030'" below it
        return _found(j, f"`{u.text}`", u.comment, outcome="inconclusive")
    if not oc and run_log and not u.prompted and (len(u.desc.split()) >= 4 or u.desc.rstrip().endswith((".", "?", "!"))):
        # (a remark on the run, "# Extremely slow.", is what it raised: the command is the try; a name over it,
        # "# current sweep", is no more)
        return _found(j, f"`{u.text}`", u.desc, outcome="inconclusive")
    if not oc:
        return None  # (a run whose comment shows its progress, "# 28/67 [16:41, 32.18s/it", ran: how it went is open)
    # "# 1xGPU - OK" above a command names the try; a result under it ("# -> same error") does not: the command does.
    said = u.desc or (u.comment if not u.text.strip() else "")
    what = re.sub(r"\s*[-—–:]*\s*\b(?:NOK|OK|PASS(?:ED)?|FAIL(?:ED)?)\b.*$", "", said).strip() or u.text
    lead = VERDICT_FIRST.match(what)
    if lead and _PLACE_ONLY.match(what[lead.end():]) or len(what.split()) == 1 and _outcome(what):
        what = u.text  # "# worked on the A100 box", "# fails", "# Fine.": how and where it went, the commands are the try
    f = _found(j, f"{what}: `{u.text}`" if what != u.text else f"`{u.text}`", u.comment, outcome=oc)
    f.title = what if what != u.text and len(what.split()) > 1 else ""  # "# test" names no try: the command does
    return f


_HAPPENED = recache.compile(r"\b(?:encountered|faced|hit|ran into|run into|we had|met|fixed|solved|resolved|overcame|"
                            r"along the way)\b|遇到|碰到|踩坑|発生した|遭遇|겪은|발생한|aufgetreten|rencontrés?", re.I)


def problem_fix_columns(u: Unit) -> tuple[int, int]:
    """A row's (problem, fix) columns by its header's words ("| Problem | Solution |"), -1 where none."""
    cols = [plain(c) for c in u.header]
    return (next((k for k, c in enumerate(cols) if PROBLEM_COL.match(c)), -1),
            next((k for k, c in enumerate(cols) if FIX_COL.match(c)), -1))


def _fixed_problem(j: Judged, heads: dict[int, Unit]) -> Found | None:
    """A row of a table of problems met and how each was fixed (``PROBLEM_COL``, ``FIX_COL``), under a heading that
    says they happened (``_HAPPENED``): the fix is the try, the problem what it was for; a solution worked, a
    workaround partly."""
    u = j.unit
    prob, fix = problem_fix_columns(u)
    if u.index < 0 or prob < 0 or fix < 0 or fix >= len(u.cells) or not plain(u.cells[fix]).strip():
        return None
    if not any(_HAPPENED.search(heads[h].text) for h in u.path if h in heads):
        return None
    did = plain(u.cells[fix]).strip()
    problem = plain(u.cells[prob]).strip() if prob < len(u.cells) else ""
    f = _found(j, did, problem, outcome="partial" if FIX_COL.match(plain(u.header[fix])).group("w") else "worked")
    f.title = did
    return f


# A swept value: a number, with a unit or a multiplier at most ("0.10", "512", "4k", "2x", "16 GB")
# (or a window of them, "0–49", and a short note beside it, "0 (base)": a run's progress, step by step)
_ONE = r"\d[\d.,]*\s*(?:[kKmMgG]i?[bB]?|[xX×%]|ms|s)?\s*"
_SWEPT = recache.compile(r"\s*[~≈]?\s*" + _ONE + r"(?:[-–—]\s*" + _ONE + r")?(?:\([^()]{1,12}\)\s*)?")


# A column of a training run's progress ("steps", "epoch", "iteration"), not of a procedure's steps
_PROGRESS_COL = recache.compile(r"\W*(?:global\s+|train(?:ing)?\s+)?(?:steps?|epochs?|iter(?:ation)?s?)\W*", re.I)


def _sweep(rows: list[Judged]) -> bool:
    """Is this table one run sweeping a value: three rows or more, no column saying how each went (what each measured
    may), no verdict in any cell, and one column of numbers that moves one way row after row -- the first, under a
    header that names a quantity (not a try's number, "#", "Run"), or the only setting that changes while the others
    stay put ("| PP | TG | N_KV | S_PP t/s |": N_KV, a benchmark tool's own sweep)?"""
    if len(rows) < 3:
        return False
    u = rows[0].unit
    if not u.header or NUMBER_COL.fullmatch(plain(u.header[0])) or WHAT_COL.search(plain(u.header[0])) and not (
            _PROGRESS_COL.fullmatch(plain(u.header[0])) and not any(WHAT_COL.match(plain(h)) for h in u.header[1:])):
        return False  # (a first column of steps is a run's progress when no column names what was done)
    if any(not x.unit.cells or _says_how(x.unit) or any(_VERDICT_MARK.search(c) for c in x.unit.cells) for x in rows):
        return False
    # (a first column that stays put, "| NODES | TP | PP |" with 2 in every row, and more than one setting changing:
    # a grid of runs over the other settings)
    settings = [k for k, h in enumerate(u.header) if k > 0 and not MEASURE_HEAD.search(plain(h))]
    varied = [k for k in settings if len({plain(x.unit.cells[k]) if k < len(x.unit.cells) else "" for x in rows}) > 1]
    if _moves_one_way(rows, 0):
        return True
    return len(varied) == 1 and (_unmoved(rows, 0) and _moves_one_way(rows, varied[0]) or _nested(rows, varied[0]))


def _nested(rows: list[Judged], k: int) -> bool:
    """Does the table sweep column ``k`` once per value of its first column, rows in order of both ("| short_edge |
    steps | time |" over 768/50, 480/50, 480/30, 480/20): a grid laid out as a measurer lays it, not tries in turn?"""
    if not all(k < len(x.unit.cells) and _SWEPT.fullmatch(plain(x.unit.cells[k])) and
               _SWEPT.fullmatch(plain(x.unit.cells[0])) for x in rows):
        return False
    firsts = [_number(plain(x.unit.cells[0])) for x in rows]
    if len(set(firsts)) < 2 or not (firsts == sorted(firsts) or firsts == sorted(firsts, reverse=True)):
        return False
    inner = [(a, b) for (f0, a), (f1, b) in itertools.pairwise(
        (f, _number(plain(x.unit.cells[k]))) for f, x in zip(firsts, rows)) if f0 == f1]
    return bool(inner) and all(a != b for a, b in inner) and len({a > b for a, b in inner}) == 1


def _unmoved(rows: list[Judged], k: int) -> bool:
    return len({plain(x.unit.cells[k]) for x in rows}) == 1


def _moves_one_way(rows: list[Judged], k: int) -> bool:
    """Are column ``k``'s cells numbers that rise (or fall) row after row?"""
    if not all(k < len(x.unit.cells) and _SWEPT.fullmatch(plain(x.unit.cells[k])) for x in rows):
        return False
    values = [_number(plain(x.unit.cells[k])) for x in rows]
    return all(a < b for a, b in zip(values, values[1:])) or all(a > b for a, b in zip(values, values[1:]))


def _number(cell: str) -> float:
    """A swept cell's value: "16K" is 16,000 (a context length), "2x" is 2."""
    m = re.search(r"(\d[\d,]*(?:\.\d+)?)\s*([kKmMgG])?", cell)
    if m is None:
        return 0.0
    return float(m.group(1).replace(",", "")) * {"k": 1e3, "m": 1e6, "g": 1e9}.get((m.group(2) or "").lower(), 1.0)


def _says_how(u: Unit) -> bool:
    """Does the row's result column say how it went ("OOM", "works"), not only what it measured ("610 tok/s")?"""
    res = row_roles(u)[1]
    return 0 <= res < len(u.cells) and _outcome(u.cells[res]) in ("worked", "failed", "partial")


def _transposed(j: Judged) -> list[Found] | None:
    """ "|Kernel|>=6.15.8|6.14|6.13|" over "|works on ROCm 6.4|✅|🟥|🟥|": a table laid on its side, one try per
    column, its verdict the mark in the column."""
    u = j.unit
    marks = [_TRY_MARK.fullmatch(c.strip()) for c in u.cells[1:]]
    if u.index < 0 or len(marks) < 3 or not all(marks) or len(u.header) != len(u.cells):
        return None
    out = []
    for k, m in enumerate(marks, start=1):
        title = f"{plain(u.header[0])} {u.header[k].strip('`*_ ')}".strip()  # (">=6.15.8" keeps its ">")
        f = _found(j, title, plain(u.cells[0]), outcome=outcome_of(m.group(0), "en") or "inconclusive")
        f.title = title
        out.append(f)
    return out


def _changed(j: Judged, heads: dict[int, Unit]) -> Found | None:
    """A row of a change table ("| `GPU_MEM_UTIL` | 0.70 | **0.45** | smaller vLLM footprint |"): the knob turned
    from one value to the other, the other cells its reasons or effects; how it went is its heading's verdict, or
    its own words, else unknown. A row whose value did not change is no try."""
    u = j.unit
    cols = change_columns(u.header) if u.index >= 0 else None
    if cols is None or max(cols) >= len(u.cells):
        return None
    what, old, new = (plain(u.cells[k]).strip() for k in cols)
    if not what or not new or new == old:
        return None
    rest = " · ".join(plain(c) for k, c in enumerate(u.cells) if k not in cols and plain(c))
    said = next((o for h in reversed(u.path) if h in heads and (o := heading_outcome(heads[h].text))), None)
    if said is None:
        said = _heading_verdict(j)
    oc = said or _outcome(rest) or "inconclusive"
    did = f"{what}: {old} → {new}" if old else f"{what}: {new}"
    f = _found(j, did, rest, outcome=oc if oc != "untested" else "inconclusive")
    f.title = did
    return f


# A verdict cell's first clause after its mark and emphasis ("✅ use it", "❌ **remove** — blocks 128 MB+ allocations").
_ADVICE_CELL = recache.compile(r"^[\W_]{0,12}(\w[^—–;,.(]{0,40})")


def _advice(cell: str) -> bool:
    """Does a result cell advise what to do with the row's setting ("use it", "remove", "keep") instead of saying how a
    run went: an imperative, alone or nearly, after the verdict mark?"""
    m = _ADVICE_CELL.match(plain(cell))
    clause = m.group(1).strip() if m else ""
    return 0 < len(clause.split()) <= 3 and bool(table("en").rx["mood.imperative_lead"].match(clause)) \
        and not _POINTER.match(clause) and _outcome(clause) is None and not _ANSWER.fullmatch(clause)


# "| Stabilizes? |" / "❌ Never": an answer to the column's question, not "never do this"
_ANSWER = recache.compile(r"(?:never|always|not yet|yes|no)\W*", re.I)


_POINTER = recache.compile(r"^(?:see|refer|note|look)\b", re.I)  # "✅ See below": a pointer to the details, not advice


def _row(j: Judged) -> Found | None:
    """A table row whose result column says how it went; under a heading saying what failed (or worked), a row
    with no verdict of its own takes the heading's."""
    u = j.unit
    what, res = row_roles(u)
    if u.index < 0 or any(re.fullmatch(r"\[\s?\]", c.strip()) for c in u.cells):
        return None  # a header, or an unticked box: a step not yet taken
    if CARD_FIELD in j.features:
        return None  # a field of one record ("| **Outcome** | PASSED |"), not a run of its own
    if u.header and FACT_COL.match(plain(u.header[0])):
        return None
    has_res = 0 <= res < len(u.cells)
    if has_res and _advice(u.cells[res]):
        return None  # "| `max_split_size_mb:128` | ❌ **remove** |": a verdict on a setting to take, not a run's outcome
    oc = _outcome(u.cells[res]) if has_res else None
    if not oc and has_res:
        # "| v4 | spec3 + graph | 133 ✅ | 7.7K | interim production |": a verdict mark in another cell says how it went
        oc = next((o for k, c in enumerate(u.cells) if k not in (res, what) and _VERDICT_MARK.search(c)
                   and (o := _outcome(c)) in ("worked", "failed")), None)
    if not oc and has_res:
        oc = _heading_verdict(j)
    measured = not oc and _measured(u, what, strict=not has_res)
    if measured:
        oc = _outcome(" ".join(u.cells)) or "inconclusive"  # a setting and what it measured: a run, seen
    if has_res and u.cells[res].strip() and 0 <= what < len(u.header) and what != res \
            and CHECK_COL.search(plain(u.header[what])) and u.cells[what].strip() \
            and (not oc or diagnostic(u.cells[what]) or not _KNOB.search(u.cells[what])):
        # "| Check | Result |": a look at the system and what it showed, whatever it showed ("`docker ps` | 4 running");
        # a probe that names a setting changed is a try with its verdict ("`amdgpu.noretry=1` | still crashed")
        oc = "inconclusive"
    if not oc and HEADER_TRIES in j.features:
        oc = "inconclusive"  # "| Attempt | Result |": a try by its table's word, its result in words no verdict knows
    if not oc:
        return None
    did = u.cells[what] if 0 <= what < len(u.cells) else u.cells[0]
    rest = " · ".join((f"{plain(u.header[k])} {c}".strip() if measured and k < len(u.header) else c)
                      for k, c in enumerate(u.cells) if k not in (what,) and c)  # a measurement keeps its name
    f = _found(j, did, rest, outcome=oc)
    f.title = plain(did)
    if not (0 <= what < len(u.header) and WHAT_COL.search(plain(u.header[what]))):
        # No column says what was tried ("ROCm | torch wheel | extra | Outcome"): the row's settings are, each
        # with its column's name ("ROCm 6.0 · torch wheel 2.3.1+rocm6.0"), not a bare "6.0".
        # A row of runs is titled by its settings; what it measured is its result ("FP8 rowwise + compile", not
        # "... · Forward 1.84ms · Speedup 1.08x", which a question in words would not find).
        named = [_named_cell(plain(h), plain(c)) for k, (h, c) in enumerate(zip(u.header, u.cells))
                 if k != res and plain(c) not in ("", "-", "—", "–", "n/a")
                 and not _measured_cell(plain(h), plain(c), u, res, measured)]
        f.title = " · ".join(named) or f.title
        f.did = f.title  # ("| GPUS | PP | MBS | Notes |": the row's settings are what was run, not its first number)
    return f




# A cell that says nothing without its column's name: a number or version ("6.0", ">=2.3"), a switch's state ("on",
# "False", "enabled"), a word of three letters or fewer
_BARE_VALUE = recache.compile(r"\s*(?:[<>=~^+-]{0,2}\d.*|on|off|yes|no|true|false|enabled?|disabled?|\S{1,3})\s*", re.I)


def _named_cell(header: str, cell: str) -> str:
    """A setting as a row's title names it: "ROCm 6.0", "flash attn on"; a name needs no column ("allreduce", not
    "Benchmark name allreduce")."""
    return f"{header} {cell}".strip() if _BARE_VALUE.fullmatch(cell) else cell


# A number with no unit ("8", "6.0"): a size, count or version set, unless its column names a measure.
_BARE = recache.compile(r"\s*\d[\d.,]*\s*")


def _measured_cell(head: str, cell: str, u: Unit, res: int, measured: bool) -> bool:
    """Is a cell what the run measured rather than one of its settings: a number with a unit, or one under a column
    that names a measure; a bare number under another name is a setting, unless no column names a measure and the
    row is a measured run."""
    if not _MEASURE.match(cell):
        return False
    return bool(MEASURE_HEAD.search(head)) or not _BARE.fullmatch(cell) or (measured and not _names_measures(u, res))


def _names_measures(u: Unit, res: int) -> bool:
    """Does the header name what was measured ("Speed", "t/s")? Then a number under another name is a setting; in a
    header that names none, a measured row's numbers are its measurements."""
    return any(MEASURE_HEAD.search(plain(h)) for k, h in enumerate(u.header) if k != res)


_MEASURE = recache.compile(r"^\s*(?:~|≈|<|>)?\s*\d[\d.,]*\s*(?:%|[a-zA-Z/]{0,8}(?:/s)?)?\s*$")


def _measured(u: Unit, what: int, strict: bool = False) -> bool:
    """A row of runs: a setting, then two or more cells (one, under a column that names the setting), mostly
    measurements ("21.46", "9.68 s", "38 tok/s");
    ``strict`` (no column says how it went): two or more cells, every one a measurement. A column headed as a goal
    ("Target (µs)", "Expected") measured nothing, and a row whose other numbers are all bare integers is a list of
    sizes ("256 | 4096 | 7168"), not a run."""
    cols = [k for k, c in enumerate(u.cells) if k != max(what, 0) and plain(c)
            and not (k < len(u.header) and GOAL_COL.search(plain(u.header[k])))]
    rest = [plain(u.cells[k]) for k in cols]
    n = sum(bool(_MEASURE.match(c)) for c in rest)
    if n and all(_MEASURE.match(c) and c.strip().isdigit() for c in rest) and len(cols) < len(u.cells) - 1:
        return False
    # ("| Configuration | 128K prefill (tok/s) |": a column that names the setting tried needs one measurement only)
    least = 1 if 0 <= what < len(u.header) and WHAT_COL.search(plain(u.header[what])) else 2
    return n == len(rest) >= least if strict else len(rest) >= least and n * 2 > len(rest)  # ("Python | 3.10": a fact)




def measured_rows(units: list[Unit]) -> set[int]:
    """The rows of results tables that are runs told with what they measured, as a command with its outcome comment
    is: the header names what was measured ("| TP | PP | MBS | Speed | TFlops |"), the row's cells are mostly
    measurements, and the rows vary two settings or more (a table one tool printed sweeps one: "| PP | TG | N_KV |
    T_PP s |" is one run's output)."""
    tables: dict[int, list[Unit]] = {}
    for u in units:
        if u.kind == "row" and u.index >= 0:
            tables.setdefault(u.group, []).append(u)
    out: set[int] = set()
    for rows in tables.values():
        res = row_roles(rows[0])[1]
        if not _names_measures(rows[0], res):
            continue
        settings = [k for k, h in enumerate(rows[0].header) if k != res and not MEASURE_HEAD.search(plain(h))]
        varied = sum(len({plain(r.cells[k]) for r in rows if k < len(r.cells)}) > 1 for k in settings)
        if varied >= 2 or _named_setups(rows, settings):
            out.update(r.id for r in rows if _measured(r, row_roles(r)[0], strict=res < 0))
    return out


def _named_setups(rows: list[Unit], settings: list[int]) -> bool:
    """Is the one setting column a column of setups named in words under a header that says so ("| Configuration |
    TFLOPs | Memory |" over "BF16 + compile", "Full FP8 + compile"): runs compared, each its own, not a number a tool
    swept ("| N_KV | T_PP s |" over 512, 1024, 2048)?"""
    if settings != [0] or not WHAT_COL.search(plain(rows[0].header[0])):
        return False
    names = [plain(r.cells[0]) for r in rows if r.cells]
    return len(set(names)) == len(names) >= 2 and not any(_MEASURE.match(n) for n in names)


# (each separator's spaces are taken from the first one only, "(?<!\s)": a long run of spaces stays linear)
_TRIED = recache.compile(r"\b(?:tried|tested|used|ran|set|disabled|enabled|removed|added|attempted)\b(?: to)?\s+", re.I)
_OR = recache.compile(r"(?<!\s)\s*(?:,\s*(?:and|or)?|\band\b|\bor\b|/)\s+(?=(?:to\s+)?(?:\w+\s+){0,2}(?:`|-{1,2}\w|[A-Z][A-Z0-9]*_))")
# ... and after "tried" / "tested" (not "used": "I used docker 20.10, driver 440" is the machine), a piece may open on
# any name: a token with a digit (a version, a size, a file) or an acronym ("I've tried sd_xl_base_1.0 and
# sd_xl_turbo_1.0, using CPU and GPU"), quoted or not ('values of: 9.0.6, "9.0.6"'); never inside brackets ("4 seeds
# (None, 42, 0)" is one try's values)
_TRIED_ONLY = recache.compile(r"\b(?:tried|tested|attempted)\b", re.I)
_OR_NAMED = recache.compile(r"(?<!\s)\s*(?:,\s*(?:and|or)?|\band\b|\bor\b|/)\s+(?=(?:to\s+)?(?:\w+\s+){0,2}"
                       r"(?:(?-i:[A-Z]{2,})\b|[\"'`]?[\w.+-]{0,40}?\d))")
_BRACKETED = recache.compile(r"\([^()]*(?:[,/]|\bor\b)[^()]*\)")  # a list in brackets: one try's values, not tries
_NAMED_PIECE = recache.compile(r"(?-i:\b[A-Z]{2,}\b)|\d")  # (a digit is enough to say a token holds one)
_BUT = recache.compile(r"(?<!\s)\s*(?:,\s*)?\b(?:but|while|whereas)\b\s+", re.I)


def _split_several(f: Found) -> list[Found]:
    """ "I tried -lowvram and -novram, still the same" is two attempts with one verdict; "`a` crashes but `b`
    does not" two with opposite verdicts."""
    lang = language(f.did)
    if lang in ("zh", "ja"):
        tries = _cjk_tries(f, lang)
        return tries if len(tries) > 1 else _opposite(f, lang)
    compared = _compared(f.did)
    if compared:
        return [_copy(f, p, f.outcome) for p in compared]
    parts = _BUT.split(f.did, maxsplit=1)
    if len(parts) == 2 and _KNOB.match(parts[1].strip()) and (
            _KNOB.match(parts[0].strip()) or _KNOB.search(parts[0]) and _outcome(parts[0]) in ("worked", "failed")):
        first = _outcome(parts[0]) or f.outcome
        second = _outcome(parts[1])
        if second is None and first in ("worked", "failed"):
            # "`a` crashes but `b` does not", "`!export X` doesn't work, but `os.environ[X]` does": the contrast
            # gives the second setting the other verdict
            second = "worked" if first == "failed" else "failed"
        return [_copy(f, parts[0], first), _copy(f, parts[1], second or f.outcome)]
    if len(parts) == 2 and _KNOB.search(parts[0]) and _ELSEWHERE.search(parts[1]):
        first = _outcome(parts[0])
        if first in ("worked", "failed"):
            # "able to run X on 0.4.2 but could not after this version": one try per version, opposite verdicts
            return [_copy(f, parts[0], first), _copy(f, parts[1], "failed" if first == "worked" else "worked")]
    m = _TRIED.search(f.did)
    if not m:
        return _opposite(f, lang)
    head, rest = f.did[:m.end()], f.did[m.end():]
    bracketed = _BRACKETED.search(rest) is not None  # (one try's values: neither split reads inside brackets)
    pieces = [] if bracketed else _OR.split(rest)
    if not bracketed and (len(pieces) < 2 or not all(_KNOB.search(p) for p in pieces)) \
            and _TRIED_ONLY.fullmatch(m.group(0).split()[0]):
        pieces = _named_pieces(rest)
    if len(pieces) < 2 or not all(_KNOB.search(p) or _NAMED_PIECE.search(p) for p in pieces):
        pieces = _gerunds(rest)  # "I tried lowering the LR and disabling fused Adam; neither helped."
    if len(pieces) < 2:
        return [f]
    return [_copy(f, head + p, f.outcome) for p in pieces]


_ELSEWHERE = recache.compile(r"^\s*(?:it\s+|i\s+|we\s+)?(?:could(?:n't| not)|(?:does|did|do)(?:n't| not)|not|fails?|failed)\b"
                        r".{0,40}\b(?:after|before|on|with|since|in|under)\b", re.I)
_GERUND_AND = recache.compile(r"(?<!\s)\s*(?:,\s*(?:and|or)?|\band\b|\bor\b)\s+(?=\w+ing\b|to\s+\w+)")


# "NVLS enabled versus disabled: both wedged", "`a`, `b`, and `c` MoE: all wedged": each side a try, one verdict
_VERSUS = recache.compile(r"^(?P<a>[^:]{2,120}?)\s+(?:versus|vs\.?)\s+(?P<b>[^:]{1,120}?):\s*(?P<v>(?:both|all|neither|each)\b.*)$",
                     re.I | re.S)
_SPAN = r"`[^`\n]{1,80}`(?:\s+vs\.?\s+`[^`\n]{1,80}`)?"
_CODE_SUBJECTS = recache.compile(rf"^(?P<l>{_SPAN}(?:(?:\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+){_SPAN}){{1,7}})\s+"
                                 r"(?P<v>(?!`)[^`]{3,300})$", re.S)
_ALL_OF = recache.compile(r"^(?P<l>[^:]{2,200}?,[^:]{1,200}?\b(?:and|or)\s[^:]{1,120}?):\s*(?P<v>(?:all|each|none|neither)\b.*)$",
                     re.I | re.S)


def _opposite(f: Found, lang: str) -> list[Found]:
    """ "v100能运行不会报错，但是p100会报错", "it hangs with 4 cards, but 2 cards are fine": one try per run the sentence sets
    against the other, each with its own outcome (a clause with none goes with the clause after it)."""
    if f.did.lstrip().startswith("`"):
        return [f]  # a command and its comment ("# OK; first token ~3x slower"): one run, whatever the comment adds
    sides, cur = [], []
    for clause, said in opposite_clauses(f.did, lang):
        cur.append(clause)
        if said in ("worked", "failed"):
            sides.append(_copy(f, ", ".join(cur), said))
            cur = []
    return sides if len(sides) > 1 else [f]


def _compared(did: str) -> list[str]:
    """The sides of a comparison that share one verdict ("A versus B: both wedged", "A, B, and C: all wedged"),
    each with that verdict; [] when the passage is no such comparison."""
    m = _VERSUS.match(did.strip())
    if m:
        a, b = m.group("a").strip(), m.group("b").strip()
        name = re.match(r"^(.+?)\s+(?:enabled|disabled|on|off|true|false)$", a, re.I)
        if name and re.fullmatch(r"(?:enabled|disabled|on|off|true|false)", b, re.I):
            b = f"{name.group(1)} {b}"  # "NVLS enabled versus disabled": the second side is NVLS disabled
        return [f"{a}: {m.group('v')}", f"{b}: {m.group('v')}"]
    listed = listed_sides(did)
    if listed:
        return listed
    m = _CODE_SUBJECTS.match(did.strip())
    if m and _outcome(m.group("v")) in ("worked", "failed"):
        # "`NCCL_SHM_DISABLE`, `NCCL_P2P_DISABLE` and `zero1` vs `ddp` change nothing": settings named as the subject
        # of one verdict, each a try with it (a "vs" pair is one: the two ways of one switch)
        sides = [x.strip() for x in re.split(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", m.group("l")) if x.strip()]
        return [f"{x} {m.group('v')}" for x in sides]
    m = _ALL_OF.match(did.strip())
    if not m:
        return []
    sides = [x.strip() for x in re.split(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", m.group("l")) if x.strip()]
    return [f"{x}: {m.group('v')}" for x in sides] if 2 <= len(sides) <= 8 else []


def _named_pieces(rest: str) -> list[str]:
    """``_OR_NAMED``'s pieces, the verdict at the end kept with the last one ("batch size 8 and 16, still OOM")."""
    cut, tail = rest.rfind(","), ""
    if cut > 0 and _outcome(rest[cut + 1:]) is not None and not _KNOB.search(rest[cut + 1:]):
        rest, tail = rest[:cut], rest[cut:]
    pieces = _OR_NAMED.split(rest)
    pieces[-1] += tail
    return pieces if len(pieces) > 1 and all(_NAMED_PIECE.search(p) for p in pieces) else []


def _gerunds(rest: str) -> list[str]:
    """Two or more actions named by their -ing verbs ("lowering the LR and disabling fused Adam") or by their
    infinitives ("to reset the runtime and to switch accounts"), joined by "and"/"or"/commas, up to the verdict."""
    body = re.split(r"[;:.]|\s[—–-]\s|,\s*(?:but|and still|still)\b", rest, maxsplit=1)[0]
    pieces = [p.strip() for p in _GERUND_AND.split(body)]
    if len(pieces) >= 2 and (all(re.match(r"^\w+ing\b", p) for p in pieces)
                             or all(re.match(r"^to\s+\w+", p) for p in pieces[1:])):
        return pieces
    return []


def split_several(did: str, outcome: str) -> list[tuple[str, str]]:
    """(what, outcome) of each try one passage reports ("I tried -lowvram and -novram, still the same"): the
    linker's splitting, for the passages the learned pass takes."""
    return [(f.did, f.outcome) for f in _split_several(Found(did, "", outcome, 0, 0))]


# Where a try's clause may end: its punctuation (not a colon: "DKMS编译失败:新内核安装后..." is one), or a space after a
# Chinese or Japanese character (``cues.CJK_SPACE_GAP``).
_CJK_CLAUSE = recache.compile(r"[，,；;。、]|" + CJK_SPACE_GAP)


def _cjk_tries(f: Found, lang: str) -> list[Found]:
    """ "加了这个还是卡住，后来把 vllm 降级到 0.4.0 就好了": clause by clause, each change and the verdict after it
    is one try (Chinese and Japanese string tries together with commas, not with "and" / "but")."""
    t = table(lang)
    tries, cur, start = [], [], 0
    ends = [m.start() for m in _CJK_CLAUSE.finditer(f.did)] + [len(f.did)]
    for end in ends:
        clause, start = f.did[start:end], end  # (the clause keeps the mark or space that ends the one before it)
        if not clause.strip(" ，,；;。：:、"):
            continue
        cur.append(clause)
        said = _outcome(clause)
        if said in ("worked", "failed", "partial") and any(t.has("tense.action", c) for c in cur):
            tries.append(("".join(cur).strip(" ，,；;。：:、"), said))
            cur = []
    if len(tries) < 2:
        return [f]
    return [_copy(f, did, said) for did, said in tries]


def _copy(f: Found, did: str, outcome: str) -> Found:
    return Found(did.strip(), f.result, outcome, f.first, f.last, f.who, list(f.units), f.confidence)
