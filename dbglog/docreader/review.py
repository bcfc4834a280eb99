"""What the reader made of a document, shown to a person or a model, and their corrections taken back.

* ``explain``: every unit with its label, confidence and the cues that decided it (``import --explain``).
* ``review_markdown`` / ``parse_review``: a short checklist of the attempts read (outcome, confidence,
  lines) and of the units the reader was not sure of; the corrected list comes back as ``Corrections``
  (``import --review`` / ``--apply-review``). Low-confidence units are listed, not guessed.
* ``kept_section`` / ``kept_corrections``: what an applied review (or extraction) said, kept with the investigation
  as the bookkeeping section ``## Import review`` (so in the mirror, for every clone), and taken again by a later
  plain import of the same document -- each row only while its cited lines hold the text it was made on.
* ``from_extraction``: an extraction that cites unit ids (an agent over MCP, a model behind ``--llm``),
  validated -- every cited unit exists, every outcome is one dbglog knows -- into the same ``Corrections``.

Corrections never drop a line: the reader keeps every line it did not structure as free text, and the
result is verified by rendering whatever the corrections say.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from types import SimpleNamespace

from dbglog.docreader.cues import language, outcome_of
from dbglog.docreader.learned import KINDS, load
from dbglog.docreader.units import FENCE_LINE, Doc, quoted_authors
from dbglog.docreader.vocab import ATTEMPT_LABELS, INV_LABELS, label_of
from dbglog.core.model import NEXT_STATUSES, OUTCOMES, REVIEW_SECTION, Section
from dbglog.util.errors import DbglogError
from dbglog.util import recache



@dataclass(frozen=True)
class Correction:
    """One attempt (or next step) as a person or a model says it is: its source lines (1-based), title, outcome, who."""

    first: int
    last: int
    title: str = ""
    outcome: str = ""
    who: str = ""
    text: str = ""  # a kept correction: the checksum of its lines' text when the review was applied
    status: str = ""  # a next step's, as an extraction gave it (todo | done | dropped; "": not said)
    home: int | None = None  # the investigation (its index) an extraction files it under; None: where its lines are


@dataclass
class Corrections:
    """The attempts a document holds, as corrected: exactly these are imported (the rest stays text)."""

    attempts: list[Correction] = field(default_factory=list)
    steps: list[Correction] | None = None  # the next steps, when said (an extraction's; ``title`` their words)
    whole: bool = False  # every attempt of its document (an extraction): one an earlier import read and it leaves out goes
    source: str = ""  # the document they are about (a review file names it)
    kept: bool = False  # a person's review: kept with the investigation and applied again on re-import
    dropped: list[Correction] = field(default_factory=list)  # kept ones whose lines no longer hold their text
    changed: bool = False  # kept ones, and the document changed since the review was applied
    reviewed: str = ""  # the checksum (``sha``) of the document as it was reviewed
    unreadable: list[str] = field(default_factory=list)  # kept rows edited by hand out of their form
    one: bool = False  # the document is one investigation, however the reader would have split it (an extraction's)
    shown: str = "extraction"  # how an error names where they came from (the extraction's file)
    by: str = "review"  # what set them: a person's review, or an agent's extraction (kept alike)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def explain(parsed: list, doc_lines: int) -> list[dict]:
    """Each unit: lines, kind, label, confidence, strongest features, the start of its text, and what the
    reading made of it in the end (``read_as``)."""
    out, made = [], ReadAs(parsed)
    for p in parsed:
        code: list = []  # the lines of one code block, shown as one entry (a doc that is all code showed nothing)
        for j in p.judged:
            u = j.unit
            if u.kind == "code" and (not code or code[-1].block == u.block):
                code.append(u)
                continue
            _code_entry(out, code, made)
            code = [u] if u.kind == "code" else []
            if u.kind not in ("sentence", "command", "row", "heading"):
                continue
            out.append({"lines": [u.first + 1, u.last + 1], "kind": u.kind, "label": j.label,
                        "confidence": round(j.confidence, 2),
                        "features": [{"cue": k, "weight": round(v, 2)} for k, v in j.why],
                        **_learned(j), "author": u.author, "text": u.text[:160], "read_as": made.of(u)})
        _code_entry(out, code, made)
    return out


def _code_entry(out: list[dict], code: list, made: ReadAs) -> None:
    """A code block's lines as one entry: read as code (never scored), unless a command or a marked line in it was."""
    if not code or all(FENCE_LINE.match(u.text) for u in code):
        return  # (a fence's own lines around commands that are listed: nothing to say)
    span = SimpleNamespace(first=code[0].first, last=code[-1].last)
    out.append({"lines": [span.first + 1, span.last + 1], "kind": "code", "label": "code", "confidence": 1.0,
                "features": [], "learned": None, "learned_step": None, "author": code[0].author,
                "text": code[0].text.split("\n", 1)[0][:160], "read_as": made.of(span)})


class ReadAs:
    """What the reading made of a unit in the end: part of attempt N (its outcome), next step N, or text.

    The scorer's label is its guess for the unit alone; the linker then joins units (a suggestion and the
    reply that tried it, a ✅ list into one look) and the learned passes add and drop. ``--explain`` shows both,
    so a unit labelled "result" that became part of attempt 3 is not read as lost."""

    def __init__(self, parsed: list):
        spans: list[tuple[int, int, dict]] = []
        for p in parsed:
            for a in p.inv.attempts:
                if len(getattr(a, "source_lines", None) or []) == 2:
                    spans.append((*a.source_lines, {"kind": "attempt", "number": a.number, "outcome": a.outcome}))
            for s in p.inv.next_steps:
                if len(getattr(s, "source_lines", None) or []) == 2:
                    spans.append((*s.source_lines, {"kind": "next_step", "number": s.position, "outcome": None}))
        # each line, the narrowest record read from it (a reply inside a long suggestion-to-answer try): set once
        # per line, narrowest first, so a document of thousands of attempts costs its lines, not their product
        self.at: dict[int, tuple[int, dict]] = {}
        for a, b, d in sorted(spans, key=lambda x: (x[1] - x[0], x[0])):
            for line in range(a, b + 1):
                self.at.setdefault(line, (b - a, d))

    def of(self, u) -> dict:
        hits = [self.at[k] for k in range(u.first + 1, u.last + 2) if k in self.at]
        return dict(min(hits, key=lambda x: x[0])[1]) if hits else {"kind": "text", "number": None, "outcome": None}


def read_as_text(r: dict) -> str:
    """``read_as`` in words: "attempt 3 (failed)", "next step 2", "text"."""
    if r["kind"] == "attempt":
        return f"attempt {r['number']} ({r['outcome']})"
    return f"next step {r['number']}" if r["kind"] == "next_step" else "text"


def _learned(j) -> dict:
    """The learned passes' probabilities for a unit (None where a pass did not ask about it)."""
    return {k: None if getattr(j, k, None) is None else round(getattr(j, k), 2) for k in ("learned", "learned_step")}


_ROW = recache.compile(r"^- \[(?P<tick>[ xX])\] lines (?P<a>\d{1,7})-(?P<b>\d{1,7}) · (?P<outcome>[A-Za-z]+)"
                  r"(?: · (?P<conf>[\d.]+))?(?: · by (?P<who>[^·]+?))? · (?P<title>.*)$")


def review_markdown(path: str, text: str, parsed: list, threshold: float = 0.6, guessed: list | None = None) -> str:
    """The checklist ``import --review`` writes: ticked rows are imported as attempts, with the outcome and
    title as written on the row; unticked rows are not. ``guessed``: the built-in reading, when ``parsed`` was
    read with the review applied before -- its attempts on lines that review did not set are offered unticked
    (read since, or unticked then), so a second review starts from the first."""
    lines = [f"<!-- dbglog review: {path} sha:{sha(text)} -->", f"# Review of {path}", "",
             "Tick a row to import it as an attempt, untick one that is not an attempt; fix the outcome "
             f"({', '.join(OUTCOMES)}) and the title in place. Then run `dbglog import --apply-review` "
             "on this file. Every line of the document is kept either way."]
    if guessed is not None:
        lines += ["", "The review applied before is kept: its attempts are ticked as it set them."]
    lines += ["", "## Attempts read", ""]
    spans = []
    for p in parsed:
        for a in p.inv.attempts:
            if len(a.source_lines) == 2:
                spans.append(a.source_lines)
                lines.append(_row("x", p, a))
    since = [_row(" ", p, a) for p in guessed or [] for a in p.inv.attempts if len(a.source_lines) == 2
             and not any(a.source_lines[0] <= y and x <= a.source_lines[1] for x, y in spans)]
    if since:
        lines += ["", "## Read by the reader, not set by the review before (not imported unless ticked)", ""] + since
    unsure = [row for p in parsed for row in _unsure(p, threshold)]
    if unsure:
        lines += ["", "## Not sure (not imported unless ticked)", ""] + unsure
    return "\n".join(lines) + "\n"


def _row(tick: str, p, a) -> str:
    who = f" · by {' '.join(a.who.replace('·', ' ').split())}" if a.who else ""
    return (f"- [{tick}] lines {a.source_lines[0]}-{a.source_lines[1]} · {a.outcome} · "
            f"{_confidence(p, a.source_lines):.2f}{who} · {_one(a.title, 0)}")  # (whole: applied as written)


_FIELDS = {**ATTEMPT_LABELS, **INV_LABELS}


def _unsure(p, threshold: float) -> list[str]:
    """Rows for the units read as something done or seen with low confidence that nothing took: not certain
    structure (a header field, a protocol field, a next-steps item), not an attempt, not a next step."""
    spans = [a.source_lines for a in p.inv.attempts if len(a.source_lines) == 2]
    spans += [s.source_lines for s in p.inv.next_steps if len(s.source_lines) == 2]
    rows: dict[tuple[int, int], tuple[float, list[str]]] = {}  # several unsure sentences of one line: one row
    for j in p.judged:
        u = j.unit
        lines = range(u.first, u.last + 1)
        near = _near_miss(j)
        if (not near and (u.kind != "sentence" or j.label not in ("action", "action_result", "result")
                          or j.confidence >= threshold)
                or any(i in p.taken for i in lines) or any(a <= u.first + 1 <= b for a, b in spans)
                or label_of(u.text, _FIELDS)):  # (a labelled field kept as written too: "**Status:** Open -- ...")
            continue
        c = j.learned if near else j.confidence
        conf, texts = rows.setdefault((u.first + 1, u.last + 1), (c, []))
        rows[(u.first + 1, u.last + 1)] = (min(conf, c), texts + [u.text])
    return [f"- [ ] lines {a}-{b} · {_said(' '.join(t))} · {c:.2f} · {_one(' '.join(t))}" for (a, b), (c, t) in rows.items()]


def _said(text: str) -> str:
    """The outcome its words give (the reader's outcome cue), for a row offered unticked."""
    return outcome_of(text, language(text)) or "inconclusive"


NEAR_MISS = 0.3  # a unit the learned attempt pass scored from this to its threshold is offered, not imported


def _near_miss(j) -> bool:
    """The learned attempt pass almost took it: in grouped cross-validation about 40 % of the tries it missed
    scored from 0.3 up (bench/reader_learn.py), so a review offers them for one tick each."""
    m = load().attempts
    # (the problem's own paragraph tells the failure, not a try of it: the rules never read a try there unless it
    # names what was tried, and then its cue is gone)
    return m is not None and j.learned is not None and j.unit.kind in KINDS and NEAR_MISS <= j.learned < m.threshold \
        and "the opening paragraph (the problem)" not in j.features


def _confidence(p, span: list[int]) -> float:
    c = [j.confidence for j in p.judged if j.unit.first + 1 >= span[0] and j.unit.last + 1 <= span[1]
         and j.label in ("action", "action_result", "result")]
    return max(c) if c else 1.0


def _one(s: str, limit: int = 140) -> str:
    """On one line; cut to LIMIT characters (0: whole)."""
    one = " ".join((s or "").split())
    return one[:limit] if limit else one


def parse_review(text: str, shown: str) -> Corrections:
    """The corrected checklist back: the document it is about and the ticked rows."""
    m = re.match(r"^<!-- dbglog review: (?P<path>.+?) sha:(?P<sha>[0-9a-f]{16}) -->", text)
    if not m:
        raise DbglogError(f"{shown}: not a review file (its first line must be the `<!-- dbglog review: ... -->` "
                          "that `dbglog import --review` wrote)")
    out = Corrections(source=m.group("path"), kept=True, reviewed=m.group("sha"))
    for n, line in enumerate(text.split("\n"), 1):
        if not line.startswith("- ["):
            continue
        r = _ROW.match(line.rstrip())
        if r is None:
            raise DbglogError(f"{shown}:{n}: cannot read this row; keep the form "
                              "`- [x] lines A-B · OUTCOME · CONFIDENCE · TITLE`")
        if r.group("tick") == " ":
            continue
        outcome = r.group("outcome").lower()
        if outcome not in OUTCOMES:
            raise DbglogError(f"{shown}:{n}: outcome {outcome!r} is not one of {', '.join(OUTCOMES)}")
        a, b = int(r.group("a")), int(r.group("b"))
        if b < a:
            raise DbglogError(f"{shown}:{n}: lines {a}-{b} run backwards")
        if a < 1:
            raise DbglogError(f"{shown}:{n}: lines {a}-{b} start before the first line (1); fix its lines or untick it")
        out.attempts.append(Correction(a, b, r.group("title").strip(), outcome, (r.group("who") or "").strip()))
    return out


def check_rows(corr: Corrections, text: str, shown: str, doc: str) -> None:
    """Ticked rows that cannot be what the person meant: past the document's end."""
    n = len(text.split("\n"))
    for c in corr.attempts:
        if c.last > n:
            raise DbglogError(f"{shown}: the row for lines {c.first}-{c.last} runs past the end of {doc} ({n} lines); "
                              "fix its lines or untick it")


# What an attempt is, told to whoever reads a document's units for dbglog: a model behind `import --llm` and an
# agent over MCP (`doc_units` carries it). One text, so the two readings follow the same rules as the hand labels
# the built-in reader is measured against (bench/data/LABELLING.md).
READING_GUIDE = (
    "List every attempt: something someone reports having actually run or changed to test or fix the problem (a "
    "command, setting, code change, version swap, repro run, or a check such as reading a log or a version), with "
    "how it went. Cite the units that say what was done and the units that say how it went, wherever they are (the "
    "same item, a later result list, a table row, a reply). A suggestion answered by the person who tried it is that "
    "person's attempt (`who`): cite the suggestion and the answer. Each run, check or change reported with a "
    "result of its own is one attempt: a table row or a list item with its own result is one, and one sentence "
    "telling two things tried (\"tried X, then Y, both failed\") gives two; changes applied together and judged by "
    "one run are one attempt. A sweep (one run or test repeated over values of one setting: sizes, lengths, batch "
    "sizes, concurrencies, reported together) is one attempt: cite all its units, and name the setting, its values "
    "and the best or the breaking one in the title; a value tried on its own as a fix, with a verdict of its own, is "
    "its own attempt. Each commit a bisection tests is an attempt (worked when it was good, failed when "
    "bad). Not attempts: proposals nobody reports running, plans and next steps, questions and requests, the "
    "failing run that opens the problem report, templates and checklist boxes of an issue form, setup instructions "
    "and lessons. Outcome: worked (the symptom was gone), failed (the same or a new failure, no change, or the "
    "setting was ignored), partial (better, not fixed), inconclusive (no result given, or a step that only looked "
    "-- a log, a version or a topology read, a measurement or benchmark of the unchanged case -- or only prepared "
    "the next one -- a probe or a tool built, logging switched on -- however that step itself went), untested "
    "(applied, not yet run). A run of the failing case with something changed, even only to find where the fault "
    "is (one part alone, a smaller case, another backend), and a test run checking a fix, are judged by how they "
    "went: worked when it ran right (passed, no error), failed when the failure showed; so is each run of a sweep or "
    "benchmark that changes a setting from run to run with no failure in question (worked when it ran to its end, "
    "failed when it errored or gave less than it was asked for). For a slowness or a memory problem, a change made to fix it is judged by the number: "
    "worked when it reached what was wanted, partial when it moved the right way, failed when it did not move or "
    "got worse. Unit ids skip the units that carry no words (a fence's own line, a rule): cite the units you are "
    "shown; every line of the document is kept whatever you cite.")


# What an agent may send besides the attempts (the model behind --llm is asked for attempts only).
STEPS_GUIDE = (
    "Optionally, `next_steps`: [{\"units\": [ids], \"text\": \"...\", \"status\": \"todo|done|dropped\"}], the "
    "plans the author states (a to-do list, \"next I will ...\", a \"Next step:\" field); a plan the document later "
    "says was carried out is still a step, with `\"status\": \"done\"` (its run is an attempt too); not proposals from "
    "others. When given, they "
    "replace the built-in reader's next steps; when left out, those stay. Send `\"next_steps\": []` when the "
    "author states no plan: the built-in reader's next steps are then dropped. When the document tells one story that "
    "dbglog split into several `investigations` (its steps or phases read as separate bugs), send "
    "`\"one_investigation\": true`: it is then imported as one. An attempt or a step is filed under the investigation "
    "its first cited unit is read in; give `\"investigation\": index` (from `investigations`) to file it under another.")


def units_for_agents(doc: Doc, parsed: list) -> list[dict]:
    """A document's units with stable ids (their index) and the built-in labels: what an agent or a model
    reads before it sends an extraction back."""
    label = {j.unit.id: j for p in parsed for j in p.judged}
    home = {j.unit.id: k for k, p in enumerate(parsed) for j in p.judged}  # (which investigation a unit is read in)
    made = ReadAs(parsed)
    shared: dict[int, int] = {}  # line -> the sentences on it (a sentence alone on its lines may be shown as written)
    for u in doc.units:
        if u.kind == "sentence":
            for i in range(u.first, u.last + 1):
                shared[i] = shared.get(i, 0) + 1
    quoting = quoted_authors(doc.units)
    out = []
    for u in doc.units:
        if u.kind not in ("sentence", "command", "row", "heading", "code"):
            continue
        if u.kind == "code" and FENCE_LINE.match(u.text) and u.first == u.last or \
                not _WORDY.search(f"{u.lead} {u.text}"):
            continue  # (a fence's own line, or a unit of punctuation alone, says nothing to cite)
        j = label.get(u.id)
        alone = all(shared.get(i, 0) <= 1 for i in range(u.first, u.last + 1))
        out.append({"id": u.id, "kind": u.kind, "lines": [u.first + 1, u.last + 1], "text": _shown(doc, u, alone),
                    "author": u.author, "heading": u.level if u.kind == "heading" else None,
                    "label": j.label if j else "context", "confidence": round(j.confidence, 2) if j else 0.0,
                    **_learned(j), "read_as": made.of(u), "investigation": home.get(u.id),
                    **({"quoted": True, "quotes": quoting.get(u.id, "")} if u.quoted else {})})
    return out


AGENT_TEXT = 2000  # the characters of a unit an agent or a model is shown (a long table row keeps its result column)
# Of a longer unit, its start and its end are shown: a long log or session ends with how it went
AGENT_TAIL = 600


# A placeholder a writer puts in angle brackets ("--python <venv>/bin/python", "ssh <head_ip>"): the built-in reader
# reads a sentence without it (as an HTML tag), an agent is shown it
_PLACEHOLDER = recache.compile(r"<(?!(?:a|b|br|code|del|details|div|em|hr|i|img|kbd|li|mark|ol|p|pre|s|small|span|"
                               r"strong|sub|summary|sup|table|td|th|tr|u|ul)>)[A-Za-z_][\w.-]{0,40}"
                               r"(?: [\w.-]{1,30}){0,6}>", re.I)  # (of a few words too: "<mpirun args>")


_WORDY = recache.compile(r"\w")


def _shown(doc: Doc, u, alone: bool = True) -> str:
    """A unit as an agent reads it: a sentence with the run-in heading its paragraph opens with, and its lines as
    written when they hold a placeholder the sentence's text lost and no other sentence shares them; a command or a
    code block as its lines are written (the command and what it printed, not the command alone)."""
    lines = doc.lines[u.first:u.last + 1]
    lost = u.kind not in ("command", "code") and any(m.group(0) not in u.text for ln in lines
                                                     for m in _PLACEHOLDER.finditer(ln))
    if u.kind in ("command", "code"):
        text = "\n".join(lines).strip("\n")
    elif lost and alone:
        text = " ".join(" ".join(lines).split())
    else:
        text = f"{u.lead} {u.text}" if u.lead else u.text
        if lost:  # (a sentence sharing its line: its own words as written, "/tmp/<user>/.cache/uv" with its placeholder)
            text = _as_written(text, " ".join(" ".join(lines).split()))
    return clipped(text)


def _as_written(text: str, written: str) -> str:
    """A sentence's text with the placeholders its lines hold put back where the reading took them for tags: the
    stretch of ``written`` that is the sentence's words with at most a placeholder between two of them."""
    words = text.split(" ")
    if len(words) > 200:
        return text
    gap = r"(?:\s+|\s*<[A-Za-z_][\w.-]{0,40}>\s*)"
    m = re.search(gap.join(map(re.escape, words)), written)
    return m.group(0) if m else text


def clipped(text: str) -> str:
    """A unit's text as shown, at most about AGENT_TEXT characters: a longer one keeps its start and its end (cut at
    line breaks where it has them), and says how much between them is left out and where to read it."""
    if len(text) <= AGENT_TEXT:
        return text
    head, tail = text[:AGENT_TEXT - AGENT_TAIL - 80], text[-AGENT_TAIL:]
    if "\n" in head[len(head) // 2:]:
        head = head[:head.rindex("\n")]
    if "\n" in tail[:len(tail) // 2]:
        tail = tail[tail.index("\n") + 1:]
    return f"{head}\n[... {len(text) - len(head) - len(tail):,} characters not shown: read the unit's lines in the " \
           f"document ...]\n{tail}"


def reading_digest(doc: Doc) -> str:
    """What a unit id means, as a checksum: the document's text and how it was cut into units. An extraction made
    from one reading and sent back after the document (or dbglog's cutting of it) changed would cite other lines."""
    cuts = ";".join(f"{u.first},{u.last},{u.kind}" for u in doc.units)
    return sha("\n".join(doc.lines) + "\0" + cuts)


def from_extraction(doc: Doc, extraction: dict, shown: str = "extraction", digest: bool = False) -> Corrections:
    """An extraction that cites unit ids, validated into corrections (one clear error, nothing changed).
    ``digest``: the extraction must carry the ``digest`` its units were read with (an agent's, which comes back
    later; a model's answer comes back within one read)."""
    if not isinstance(extraction, dict) or not isinstance(extraction.get("attempts"), list):
        raise DbglogError(f"{shown}: expected an object with an `attempts` list")
    if digest and extraction.get("digest") != reading_digest(doc):
        raise DbglogError(f"{shown}: " + (
            "`digest` is missing: give the digest that came with the units it cites (MCP doc_units, "
            "`dbglog import --units`)" if "digest" not in extraction else
            "the document, or dbglog's reading of it, changed since its units were read (another `digest`): read "
            "its units again and cite those"))
    ids = {u.id: u for u in doc.units}
    out = Corrections(whole=True)
    for k, a in enumerate(extraction["attempts"], 1):
        if not isinstance(a, dict):
            raise DbglogError(f"{shown}: attempt {k} is not an object")
        first, last = _cited_lines(a.get("units"), ids, f"{shown}: attempt {k}")
        outcome = str(a.get("outcome", "inconclusive")).strip().lower()
        if outcome not in OUTCOMES:
            raise DbglogError(f"{shown}: attempt {k}: outcome {outcome!r} is not one of {', '.join(OUTCOMES)}")
        title = _text(a, "title", f"{shown}: attempt {k}", 200)
        who = _text(a, "who", f"{shown}: attempt {k}", 80)
        out.attempts.append(Correction(first, last, title, outcome, who, home=_home(a, f"{shown}: attempt {k}")))
    if "next_steps" in extraction:
        out.steps = _extracted_steps(extraction["next_steps"], ids, shown)
    one = extraction.get("one_investigation", False)
    if type(one) is not bool:
        raise DbglogError(f"{shown}: `one_investigation` is {one!r}; give true (the document is one investigation) "
                          "or false")
    out.one, out.shown = one, shown
    return out


def _cited_lines(cited, ids: dict, what: str) -> tuple[int, int]:
    """The 1-based lines from the first to the last unit an extraction's entry cites, or one clear error."""
    # (type, not isinstance: JSON's true is no unit id)
    if not isinstance(cited, list) or not cited or not all(type(x) is int for x in cited):
        raise DbglogError(f"{what} cites no unit ids (`units`: a list of ids)")
    missing = [x for x in cited if x not in ids]
    if missing:
        raise DbglogError(f"{what} cites unit {missing[0]}, which this document does not have")
    return min(ids[x].first for x in cited) + 1, max(ids[x].last for x in cited) + 1


def _extracted_steps(given, ids: dict, shown: str) -> list[Correction]:
    """An extraction's ``next_steps`` (``[{"units": [ids], "text": "...", "status": "todo|done|dropped"}]``): each
    cites the units it was read from; its ``title`` is the agent's words, if it gave any; its ``status`` the one it
    gave (a plan the document later says was done is still the author's step, done)."""
    if not isinstance(given, list):
        raise DbglogError(f"{shown}: `next_steps` is not a list")
    out = []
    for k, st in enumerate(given, 1):
        first, last = _cited_lines(st.get("units") if isinstance(st, dict) else None, ids, f"{shown}: next step {k}")
        text = _text(st, "text", f"{shown}: next step {k}", 400)  # ("": the step is told by its units' words)
        status = st.get("status") or ""
        if status and status not in NEXT_STATUSES:
            raise DbglogError(f"{shown}: next step {k} has status {status!r}; use one of {', '.join(NEXT_STATUSES)}")
        out.append(Correction(first, last, text, status=status, home=_home(st, f"{shown}: next step {k}")))
    return out


def _text(entry: dict, key: str, what: str, most: int) -> str:
    """An extraction entry's text field on one line ("" when not given), or one clear error."""
    v = entry.get(key)
    if v is None:
        return ""
    if not isinstance(v, str):  # (a list or an object would be stored as Python's repr of it)
        raise DbglogError(f"{what}: `{key}` must be text, not {v!r:.60}; give a string")
    return " ".join(v.split())[:most]


def _home(entry: dict, what: str) -> int | None:
    """An extraction entry's ``investigation``: the index (from ``doc_units``' ``investigations``) it is filed under,
    or None (the investigation its first cited line is read in)."""
    k = entry.get("investigation")
    if k is not None and (type(k) is not int or k < 0):
        raise DbglogError(f"{what}: `investigation` is {k!r}; give the index of one of the document's investigations "
                          "(0, 1, ... as doc_units lists them)")
    return k


# --- a review, kept -------------------------------------------------------------------------------

_KEPT = recache.compile(r"^- lines (?P<a>\d{1,7})-(?P<b>\d{1,7}) · (?P<outcome>[a-z]+)(?: · by (?P<who>[^·]+?))?"
                   r" · text:(?P<text>[0-9a-f]{12}) · (?P<title>.*)$")
# an extraction's next step, kept: its status ("-": as the document says) and its words
_KEPT_STEP = recache.compile(r"^- step lines (?P<a>\d{1,7})-(?P<b>\d{1,7}) · (?P<status>[a-z]+|-) · "
                        r"text:(?P<text>[0-9a-f]{12}) · (?P<title>.*)$")
_KEPT_SHA = recache.compile(r"\(document sha:(?P<sha>[0-9a-f]{16})\)")


def lines_sha(lines: list[str], first: int, last: int) -> str:
    """The checksum of lines FIRST..LAST (1-based) as written, blanks at the ends of lines aside."""
    return sha("\n".join(ln.strip() for ln in lines[first - 1:last]))[:12]


_BY_EXTRACTION = "`dbglog import --extraction` (an agent's reading)"
_ONE = "It reads the document as one investigation."


def kept_section(attempts: list, dropped: list[Correction], lines: list[str], doc_sha: str,
                 unreadable: list[str] = (), by: str = "review", one: bool = False,
                 steps: list[Correction] = ()) -> Section:
    """The bookkeeping section an applied review (or extraction) leaves with an investigation: one row per attempt
    it set, as the document reads now, and the rows it could no longer place, as they were (kept until reviewed
    again: the text they were made on may come back)."""
    rows = []
    for a in attempts:
        if len(a.source_lines) == 2:
            first, last = a.source_lines
            rows.append(_kept_line(first, last, a.outcome, a.who, lines_sha(lines, first, last), a.title))
    rows += [_kept_line(c.first, c.last, c.outcome, c.who, c.text, c.title) for c in dropped]
    rows += list(unreadable)  # (a hand edit is kept as written, to be fixed, never dropped)
    rows += [f"- step lines {c.first}-{c.last} · {c.status or '-'} · text:{lines_sha(lines, c.first, c.last)} · "
             f"{_one(c.title, 0)}" for c in steps]
    return Section(REVIEW_SECTION, "\n".join(
        [f"The attempts {_BY_EXTRACTION if by == 'extraction' else '`dbglog import --apply-review`'} set here "
         f"(document sha:{doc_sha}). A re-import of the "
         "document keeps them while their lines hold the same text; edit a row to change it."
         + (f" {_ONE}" if one else ""), ""]
        + (rows or ["(no attempts ticked)"])))


def _kept_line(first: int, last: int, outcome: str, who: str, text: str, title: str) -> str:
    by = f" · by {' '.join(who.replace('·', ' ').split())}" if who else ""
    return f"- lines {first}-{last} · {outcome}{by} · text:{text} · {_one(title, 0)}"


def kept_corrections(bodies: list[str], text: str) -> Corrections | None:
    """The corrections kept sections hold, for the document as it is now (None: no review was applied). A row
    whose lines no longer hold its text is looked for where the same text now stands (lines inserted above
    it); found once, it moves there, else it is dropped (``Corrections.dropped``) and its lines stay text."""
    if not bodies:
        return None
    lines = text.split("\n")
    out = Corrections(kept=True)
    shas = sorted({m.group("sha") for b in bodies if (m := _KEPT_SHA.search(b))})
    out.reviewed = shas[0] if shas else ""
    out.changed = any(x != sha(text) for x in shas)
    out.by = "extraction" if any(_BY_EXTRACTION in b for b in bodies) else "review"
    out.one = any(_ONE in b.split("\n", 1)[0] for b in bodies)
    windows: dict[int, dict[str, list[int]]] = {}  # passage length -> checksum -> where such passages begin
    rows: dict[Correction, None] = {}  # (in order; several tries in one sentence are rows of the same lines)
    steps: list[Correction] = []
    for line in (ln for b in bodies for ln in b.split("\n") if ln.startswith("- ")):
        c = _kept_row(line)
        if (r := _KEPT_STEP.match(line.rstrip())) and int(r["b"]) >= int(r["a"]):
            steps.append(Correction(int(r["a"]), int(r["b"]), r["title"].strip(), text=r["text"],
                                    status="" if r["status"] == "-" else r["status"]))
        elif c is None:
            out.unreadable.append(line.strip())
        else:
            rows[c] = None
    shift = 0  # how far the last row placed moved
    placed: dict[tuple[int, int], tuple[int, int]] = {}  # where rows stand now -> where they stood (tries of one)
    for c in sorted(rows, key=lambda c: (c.first, c.last)):
        got = c if lines_sha(lines, c.first, c.last) == c.text else _moved(c, lines, windows, shift, placed)
        if got is not None:
            shift = got.first - c.first
            placed[(got.first, got.last)] = (c.first, c.last)
        (out.attempts if got else out.dropped).append(got or c)
    if steps:  # (a step whose lines no longer hold its text is no step: its lines are text)
        out.steps = [c if lines_sha(lines, c.first, c.last) == c.text else _moved(c, lines, windows, 0, {})
                     for c in steps]
        out.steps = [c for c in out.steps if c is not None]
    return out


def _kept_row(line: str) -> Correction | None:
    r = _KEPT.match(line.rstrip())
    if r is None or r.group("outcome") not in OUTCOMES or int(r.group("b")) < int(r.group("a")):
        return None
    return Correction(int(r.group("a")), int(r.group("b")), r.group("title").strip(), r.group("outcome"),
                      (r.group("who") or "").strip(), r.group("text"))


def _moved(c: Correction, lines: list[str], windows: dict[int, dict[str, list[int]]], shift: int,
           placed: dict[tuple[int, int], tuple[int, int]]) -> Correction | None:
    """The correction where its passage stands now: the one place it stands, or, written in several, the one
    nearest to where it was moved as far as the row before it (lines inserted above both); a place a row from
    other lines took is not one, and two as near are no answer."""
    n = c.last - c.first
    if n not in windows:
        windows[n] = {}
        for i in range(1, len(lines) - n + 1):
            windows[n].setdefault(lines_sha(lines, i, i + n), []).append(i)
    at = [i for i in windows[n].get(c.text, []) if placed.get((i, i + n), (c.first, c.last)) == (c.first, c.last)]
    near = sorted(at, key=lambda i: abs(i - c.first - shift))
    if not near or len(near) > 1 and abs(near[0] - c.first - shift) == abs(near[1] - c.first - shift):
        return None
    return replace(c, first=near[0], last=near[0] + n)
