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

import contextlib
import copy
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from dbglog import docreader
from dbglog.core import model
from dbglog.util import redact
from dbglog.util.fsutil import sha256_hex
from dbglog.util.errors import DbglogError
from dbglog.core.markdown import ParseError
from dbglog.core.model import Difference, Investigation, NextStep

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
    from dbglog.util.fserrors import check_regular_file

    check_regular_file(path, shown)  # a FIFO or /dev/zero: refused, not read forever
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


# --- parsing --------------------------------------------------------------------------
# Foreign documents are read by dbglog.docreader (markdown-it tokens, lossless by verification);
# dbglog's own canonical files by core.markdown's parse.

Parsed, Skipped = docreader.Parsed, docreader.Skipped


def parse_document(text: str, path: str = "<text>", corrections=None, explain: bool = False,
                   model=True) -> tuple[list[Parsed], list[Skipped]]:
    """All investigations in one document (and the template sections kept only as text); ``corrections``
    (docreader.review.Corrections) say which attempts it holds; ``model=False`` reads by the rules alone
    (no learned passes)."""
    if not text.strip():
        raise ParseError("empty file: nothing to import", path, 1)
    if text.startswith("---\n") and re.search(r"^id:", text[:2000], re.M):
        canon = _try_canonical(text, path)
        if canon is not None:
            return [canon], []
    # (a terminal escape pasted with a command's output, "\x1b[31mreinstalled\x1b[0m", is read without it: a title
    # trimmed of its leading punctuation kept "[31m" once the escape byte alone had gone)
    return docreader.read_document(redact.sanitize_lines(text), path, corrections, explain, model)


def _try_canonical(text: str, path: str) -> Parsed | None:
    from dbglog.core.markdown import parse
    from dbglog.kb import sync

    try:
        sync.check_markers(text, path)
        inv = parse(text, path)
    except ParseError:
        return None
    if not model.ID_RE.match(inv.id):
        return None
    items = [("investigation", "", 1)] + [("attempt", str(a.number), 1) for a in inv.attempts]
    return Parsed(inv=inv, line=1, key=f"id:{inv.id}", items=items, canonical=True)


# --- importing into a workspace -----------------------------------------------------


def content_sha(text: str) -> str:
    return sha256_hex(text.encode())


def source_name(path: Path, root: Path) -> str:
    p = path.resolve()
    try:
        return p.relative_to(root.resolve()).as_posix()
    except ValueError:
        return p.as_posix()


def check_roundtrip(p: Parsed, source: str) -> None:
    """What we store must render to markdown that parses back to the same thing."""
    from dbglog.core import markdown

    if p.verified:
        return  # the reader rendered and parsed it back already

    inv = copy.deepcopy(p.inv)
    inv.id = inv.id or "20000101-import-check-0000"
    inv.created = inv.created or "2000-01-01T00:00:00Z"
    inv.updated = inv.updated or inv.created
    back = markdown.parse(markdown.render(inv), source)
    if back != inv:
        raise ParseError("this investigation cannot be stored faithfully (please report this as a dbglog bug)",
                         source, p.line)


_ATTEMPT_VALUES = ("title", "hypothesis", "did", "result", "conclusion", "outcome", "source_lines", "who")


def _attempt_keys():
    """How a re-read attempt is known again, strongest first: its words, its lines, its number."""
    return (lambda a: " ".join((a.did or a.title).split()).casefold(), lambda a: tuple(a.source_lines),
            lambda a: a.number)


def match_attempts(old: list, new: list, imported: set[int] | frozenset = frozenset()) -> dict[int, int]:
    """Which stored attempt each attempt of the re-read document updates (new number -> stored number; absent:
    a new attempt). Only attempts that came from the document are candidates -- never one recorded through
    dbglog -- so a passage added to the document cannot overwrite them: a narrative doc's attempts are
    numbered by position, and an insertion shifts every number after it."""
    free = {a.number: a for a in old if a.source_lines or a.number in imported}
    out: dict[int, int] = {}
    for key in _attempt_keys():
        for a in new:
            k = key(a)
            if a.number in out or not k:
                continue
            hit = next((n for n, o in free.items() if key(o) == k), None)
            if hit is not None:
                out[a.number] = hit
                del free[hit]
    return out


def _merge_attempts(out: Investigation, new: Investigation, imported, lines: int | None = None) -> dict[int, int]:
    """The re-read attempts into ``out``: each updates the stored attempt it is, or comes after the last.
    ``lines``: the document's length now."""
    by_num = {a.number: a for a in out.attempts}
    mapping = match_attempts(out.attempts, new.attempts, imported)
    _unmoored(out, set(mapping.values()), new, lines)
    top = max(by_num, default=0)
    for a in new.attempts:
        if a.number in mapping:
            cur = by_num[mapping[a.number]]
            for name in _ATTEMPT_VALUES:  # (a field the document leaves blank keeps what was written in dbglog: a
                if getattr(a, name) or name == "source_lines":  # conclusion added to it was erased by a re-import)
                    setattr(cur, name, getattr(a, name))
        else:
            top += 1
            mapping[a.number] = top
            added = copy.deepcopy(a)
            added.number = top
            out.attempts.append(added)
    out.attempts.sort(key=lambda a: a.number)
    return mapping


def _unmoored(out: Investigation, found: set[int], new: Investigation, lines: int | None) -> None:
    """A stored attempt read from the document before and not read from it now is kept, but cites its lines no more
    when they run past the document's end or are another attempt's now (an edit deleted its passage)."""
    taken = [a.source_lines for a in new.attempts if len(a.source_lines) == 2]
    for a in out.attempts:
        if len(a.source_lines) != 2 or a.number in found:
            continue
        first, last = a.source_lines
        if (lines is not None and last > lines) or any(f <= last and first <= t for f, t in taken):
            a.source_lines = []


def merge(old: Investigation, new: Investigation, imported: set[int] | frozenset = frozenset(),
          renumbered: dict[int, int] | None = None, lines: int | None = None, text: str | None = None,
          doc_factors: set[str] | frozenset = frozenset()) -> Investigation:
    """Re-import: the document's values update the stored investigation; nothing recorded through dbglog is dropped.
    ``imported``: numbers of stored attempts an earlier import made (before attempts cited their lines);
    ``renumbered`` is filled with new number -> stored number for every attempt of ``new``; ``text``: the document
    now; ``doc_factors``: the key-difference factors (casefolded) an earlier import read from it."""
    out = copy.deepcopy(old)
    for name in ("title", "status", "symptom", "environment", "root_cause"):
        v = getattr(new, name)
        if v:
            setattr(out, name, v)
    if new.related_files:
        out.related_files = list(new.related_files)
    out.tags = out.tags + [t for t in new.tags if t not in out.tags]
    mapping = _merge_attempts(out, new, imported, lines)
    if renumbered is not None:
        renumbered.update(mapping)
    _merge_differences(out, new, doc_factors)
    _merge_steps(out, new, mapping)
    _merge_sections(out, new, text)
    return out


def _merge_differences(out: Investigation, new: Investigation, doc_factors) -> None:
    """The document's rows update the stored ones of their factor. A row an earlier import read from the document
    that it no longer has is the document's to change: a renamed factor takes its place (paired in order when as
    many rows went as came), and one deleted goes; a row added through dbglog stays."""
    if new.differences:
        out.labels = new.labels
    now = {d.factor.casefold() for d in new.differences}
    gone = [d for d in out.differences if d.factor.casefold() in doc_factors and d.factor.casefold() not in now]
    by_factor = {d.factor.casefold(): d for d in out.differences}
    came = [d for d in new.differences if d.factor.casefold() not in by_factor]
    renamed = dict(zip(map(id, came), gone)) if len(came) == len(gone) else {}
    for d in new.differences:
        cur = by_factor.get(d.factor.casefold()) or renamed.get(id(d))
        if cur:
            cur.factor, cur.working, cur.broken, cur.status = d.factor, d.working, d.broken, d.status
        else:
            out.differences.append(Difference(len(out.differences) + 1, d.factor, d.working, d.broken,
                                              d.status, d.apply))
    taken = set(map(id, renamed.values()))
    out.differences = [d for d in out.differences if d not in gone or id(d) in taken]
    for k, d in enumerate(out.differences, 1):
        d.position = k


def _merge_steps(out: Investigation, new: Investigation, mapping: dict[int, int]) -> None:
    """The document's steps update the stored ones of their words, else the one an earlier import read from the
    same lines (a reworded step); a step read from the document before that it no longer has goes. A step
    recorded through dbglog (no source lines) stays."""
    by_text = {s.text.casefold(): s for s in out.next_steps}
    listed = {s.text.casefold() for s in new.next_steps}
    by_lines = {tuple(s.source_lines): s for s in out.next_steps if s.source_lines and s.text.casefold() not in listed}
    for s in new.next_steps:
        if s.attempt is not None:  # (a link to an attempt follows it to its stored number)
            s = copy.copy(s)
            s.attempt = mapping.get(s.attempt, s.attempt)
        cur = by_text.get(s.text.casefold()) or by_lines.pop(tuple(s.source_lines), None)
        if cur:
            cur.text = s.text
            cur.detail, cur.status, cur.attempt = s.detail or cur.detail, s.status, s.attempt or cur.attempt
            cur.source_lines = list(s.source_lines) or cur.source_lines  # (the passage may have moved)
            listed.add(cur.text.casefold())
        else:
            out.next_steps.append(NextStep(len(out.next_steps) + 1, s.text, s.detail, s.status, s.attempt,
                                           list(s.source_lines)))
    out.next_steps = [s for s in out.next_steps if not s.source_lines or s.text.casefold() in listed]
    for k, s in enumerate(out.next_steps, 1):
        s.position = k


def _merge_sections(out: Investigation, new: Investigation, text: str | None) -> None:
    """The document's sections replace the stored ones of their heading. A stored section the document no longer
    has goes when it was the document's: import's list of source headings, or one that holds only the document's
    words (a renamed heading); a section recorded through dbglog (a bisection's report) holds words of its own."""
    from dbglog.docreader import counts, norm

    heads = {s.heading for s in new.sections}
    if text is not None:
        doc = " ".join(norm(ln) for ln in redact.clean(text).split("\n"))
        out.sections = [s for s in out.sections if s.heading in heads or s.heading == model.REVIEW_SECTION
                        or not (s.heading in model.BOOKKEEPING_SECTIONS
                                or all(norm(ln) in doc for ln in s.body.split("\n") if counts(ln)))]
    by_head = {s.heading: s for s in out.sections}
    for s in new.sections:
        if s.heading in by_head:
            by_head[s.heading].body = s.body
        else:
            out.sections.append(copy.deepcopy(s))


@dataclass
class Plan:
    source: str
    parsed: Parsed
    sha: str
    action: str = "create"  # create | update | unchanged
    investigation_id: str = ""
    text: str = ""  # the document (kb/failures.index_import fingerprints its error blocks)
    reviewed: bool = False  # read with a review or an extraction applied now: its attempts are all there are
    unticked: list = field(default_factory=list)  # stored attempts the review says are none: (attempt, removed)


def _expand(paths: list[str], logs: Path, state: Path) -> list[str]:
    """A directory stands for the markdown files under it (``docs/debug/``), in name order; the
    mirror, dbglog's own directory and the reviews `import --review` wrote (``*.review.md``) are not read."""
    out: list[str] = []
    for raw in paths:
        p = Path(raw)
        if not p.is_dir():
            out.append(raw)
            continue
        found = sorted(str(f) for f in p.rglob("*.md") if f.is_file() and not f.name.endswith(".review.md")
                       and logs not in f.resolve().parents and state not in f.resolve().parents
                       and not any(part.startswith(".") for part in f.relative_to(p).parts))
        if not found and (p.resolve() == logs or logs in p.resolve().parents):
            raise DbglogError(f"{raw} is the mirror (logs/), whose files dbglog wrote; `dbglog sync` reads edits to them")
        if not found:
            raise DbglogError(f"{raw}: no markdown (.md) files in this directory")
        out.extend(found)
    return out


def plan_files(recs, paths: list[str], corrections: dict | None = None,
               reviews: list[dict] | None = None) -> tuple[list[Plan], list[dict]]:
    """Read and parse every file first: one bad file stops the command before anything is written.
    ``corrections`` maps a file (as resolved) to the attempts a review or an extraction says it holds; a file
    given none is read with the review applied to it before, if any (kept with its investigations).
    ``reviews`` is filled with what each applied or kept review did (``import --json``'s ``reviews``)."""
    plans: list[Plan] = []
    skipped: list[dict] = []
    logs = recs.ws.logs_dir.resolve()
    for raw in _expand(paths, logs, recs.ws.dir.resolve()):
        path = Path(raw)
        shown = raw
        text = read_source(path, shown)  # first: a symlink loop is its one line, not resolve()'s RuntimeError
        if path.resolve().parent == logs and path.suffix == ".md":
            raise DbglogError(f"{shown} is already in the mirror (logs/); `dbglog sync` reads edits to it")
        if text.startswith("<!-- dbglog review: "):
            raise DbglogError(f"{shown} is a review that `dbglog import --review` wrote, not a debug doc; take it back "
                              f"with `dbglog import --apply-review {shown}`")
        source = source_name(path, recs.ws.root)
        fix = (corrections or {}).get(str(path.resolve()))
        applied = fix is not None
        if fix is None:
            fix = kept_review(recs.store, source, text)
        parsed, skips = parse_document(text, shown, fix)
        if fix is not None and fix.kept:
            _keep_review(parsed, text, fix)
            if reviews is not None:
                reviews.append(_review_report(fix, source, shown, applied))
        sha = content_sha(text)
        for p in parsed:
            check_roundtrip(p, shown)
            plans.append(Plan(source=source, parsed=p, sha=sha, text=text,
                              reviewed=applied and (fix.kept or fix.whole)))
        skipped += [{"source": source, "line": s.line, "title": s.title, "reason": s.reason} for s in skips]
    return plans, skipped


# --- a review, kept: what --apply-review set holds for later imports of the same document ---------------


def kept_review(store, source: str, text: str):
    """The review applied to this document before, as the document reads now (None: never reviewed). It is kept
    in each of the document's investigations (the bookkeeping section ``## Import review``, in the mirror too,
    so a clone that pulled logs/ has it): found through ``imports``, or the investigations' ``source`` key."""
    import json

    from dbglog.docreader import review as rv

    ids = {r[0] for r in store.q("SELECT investigation_id FROM imports WHERE source = ?", source)}
    ids |= {r[0] for r in store.q("SELECT id FROM investigations WHERE source >= ? AND source < ?",  # "path#key"
                                  source + "#", source + "$")}
    bodies = []
    for inv_id in sorted(ids):
        row = store.q("SELECT sections FROM investigations WHERE id = ?", inv_id).fetchone()
        bodies += [s["body"] for s in json.loads(row[0] if row else "[]") if s.get("heading") == model.REVIEW_SECTION]
    return rv.kept_corrections(bodies, text)


def _keep_review(parsed: list[Parsed], text: str, fix) -> None:
    """Each investigation read with a person's review (or an agent's extraction) keeps what it set, for the next
    import of the document: the attempts as corrected, the rows that no longer hold their text under the
    investigation they were in, and an extraction's next steps."""
    from dbglog.docreader import review as rv

    lines = text.split("\n")
    own = [p for p in parsed if not p.canonical]
    for k, p in enumerate(own):
        until = own[k + 1].line if k + 1 < len(own) else float("inf")
        dropped, steps = ([c for c in cs if (k == 0 or c.first >= p.line) and c.first < until]
                          for cs in (fix.dropped, fix.steps or []))
        kept = rv.kept_section(p.inv.attempts, dropped, lines, fix.reviewed or rv.sha(text),
                               fix.unreadable if k == 0 else (), fix.by, fix.one, steps)
        p.inv.sections = [kept] + [s for s in p.inv.sections if s.heading != model.REVIEW_SECTION]
        p.verified = False  # (a section added after the reader checked its rendering: check it again)


def _review_first(inv: Investigation) -> None:
    """The kept review is the first free section: after the author's text, a fence they left open (a thread cut
    short in a code block) would take it into their section."""
    inv.sections.sort(key=lambda s: s.heading != model.REVIEW_SECTION)


def _review_report(fix, source: str, shown: str, applied: bool) -> dict:
    return {"source": source, "file": shown, "review": "applied" if applied else "kept", "by": fix.by,
            "attempts": len(fix.attempts), "changed_since_review": fix.changed,
            "dropped": [{"source_lines": [c.first, c.last], "title": c.title, "outcome": c.outcome, "who": c.who}
                        for c in fix.dropped], "unreadable": list(fix.unreadable)}


def _known(store, plan: Plan) -> str | None:
    """The investigation an earlier import of this plan's document made of it, by its key (its title)."""
    row = store.q("SELECT investigation_id FROM imports WHERE source = ? AND key = ?",
                  plan.source, plan.parsed.key).fetchone()
    return row[0] if row and store.exists(row[0]) else None


def _retitled(store, plans: list[Plan]) -> dict[int, str]:
    """id(plan) -> the investigation it is, for the plans whose title was edited since their document's last import:
    the key is the title, so each would be a new investigation beside the old one. The document's investigations
    no plan is known by are theirs, paired in document order when as many went as came."""
    out: dict[int, str] = {}
    for source in dict.fromkeys(p.source for p in plans):
        mine = [p for p in plans if p.source == source and not p.parsed.canonical]
        came = [p for p in mine if _known(store, p) is None]
        claimed = {_known(store, p) for p in mine}
        rows = store.q("SELECT investigation_id, min(line) FROM imports WHERE source = ? GROUP BY investigation_id "
                       "ORDER BY min(line)", source)
        gone = [r[0] for r in rows if r[0] not in claimed and store.exists(r[0])]
        if came and len(came) == len(gone):
            out.update(zip(map(id, sorted(came, key=lambda p: p.parsed.line)), gone))
    return out


def _decide(recs, plan: Plan, renamed: str | None = None) -> Investigation:
    """Set plan.action/investigation_id; return the investigation to store. ``renamed``: the investigation this plan
    is when its title was edited since (``_retitled``)."""
    store = recs.store
    row = store.q("SELECT investigation_id FROM imports WHERE source = ? AND key = ?",
                  plan.source, plan.parsed.key).fetchone()
    if (row is None or not store.exists(row[0])) and renamed:
        row = (renamed,)
    # What is stored was cleaned (secrets, control bytes): compare the document's values cleaned the same
    # way, or a second import of a doc with a redacted value would always "update".
    inv = model.clone(plan.parsed.inv)
    redact.clean_record(inv)
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
        new = inv  # already this plan's own copy (cleaned above)
        if not plan.parsed.canonical:
            new.source = key
            new.id = model.new_id(new.title)
            while store.exists(new.id):
                new.id = model.new_id(new.title)
            new.created = new.updated = model.now_iso()
        plan.investigation_id = new.id
        return new
    old = store.load(existing)
    if plan.parsed.canonical:
        _refuse_older_copy(old, inv, plan)
        merged = _canonical_update(old, inv)
    else:
        imported = {int(r[0]) for r in store.q("SELECT ref FROM import_items WHERE investigation_id = ? AND "
                                               "kind = 'attempt'", existing) if str(r[0]).isdigit()}
        renumbered: dict[int, int] = {}
        factors = {r[0] for r in store.q("SELECT ref FROM import_items WHERE investigation_id = ? AND "
                                         "kind = 'difference'", existing)}
        merged = merge(old, inv, imported, renumbered, lines=len(plan.text.splitlines()) if plan.text else None,
                       text=plan.text or None, doc_factors=factors)
        _renumber(plan.parsed, renumbered)
        if plan.reviewed:
            plan.unticked = _drop_unticked(merged, set(renumbered.values()), imported, plan.text)
        _review_first(merged)
    plan.investigation_id = existing
    plan.action = "unchanged" if merged == old else "update"
    if plan.action == "update":
        merged.updated = model.now_iso()
    return merged


def _drop_unticked(inv: Investigation, kept: set[int], imported: set[int], text: str) -> list[tuple]:
    """An applied review lists every attempt of its document: an attempt an earlier import read from it that the
    review left unticked is removed -- when all it holds is the document's words (its lines stay in the free
    text). One edited in dbglog since holds words of its own: it stays, and is reported. (attempt, removed)."""
    from dbglog.docreader import norm

    # (the document as stored: an attempt holding a redacted token is the document's words, not an edit)
    doc = " ".join(norm(ln) for ln in redact.clean(text).split("\n"))
    out = []
    for a in list(inv.attempts):
        if a.number in kept or not (a.source_lines or a.number in imported):
            continue  # (read from the document now, or recorded through dbglog: not the review's to remove)
        words = [norm(ln) for v in (a.hypothesis, a.did, a.result, a.conclusion) for ln in v.split("\n")]
        removed = all(w in doc for w in words)
        if removed:
            inv.attempts.remove(a)
            for s in inv.next_steps:
                s.attempt = None if s.attempt == a.number else s.attempt
        out.append((a, removed))
    return out


def _renumber(p: Parsed, renumbered: dict[int, int]) -> None:
    """The document's attempts (as reported and remembered) under the numbers they are stored as."""
    for a in p.inv.attempts:
        a.number = renumbered.get(a.number, a.number)
    p.items = [(k, str(renumbered.get(int(r), r)) if k == "attempt" and r.isdigit() else r, ln)
               for k, r, ln in p.items]


def _refuse_older_copy(old: Investigation, new: Investigation, plan: Plan) -> None:
    """A dbglog file of an investigation this workspace holds replaces it whole: refused when it is an older or
    diverged copy (a backup, a teammate's earlier file) that would drop attempts or next steps recorded here, or
    that is dated before the investigation here and differs from it: its import deleted those attempts."""
    if new.created != old.created:  # (a copy keeps its investigation's creation time: another one took its id)
        raise DbglogError(f"{plan.source}: holds id {old.id}, which another investigation here has (created "
                          f"{old.created or '?'}, this one {new.created or '?'}); nothing imported. Give it its own "
                          "id in its front matter, or remove the id line so that import gives it one")
    lost = model.missing_attempts([a.number for a in old.attempts], new)
    steps = len(new.next_steps) < len(old.next_steps)
    older = bool(new.updated and old.updated and new.updated < old.updated)
    if not (lost or steps or older):
        return
    what = (f"it lacks attempt(s) {', '.join(map(str, lost[:8]))} recorded here" if lost else
            "it lacks next steps recorded here" if steps else f"it was updated {new.updated}, the one here {old.updated}")
    if not lost and not steps and older and _canonical_update(old, new) == old:
        return  # (the same content under an older date: nothing would change)
    raise DbglogError(f"{plan.source}: an older copy of investigation {old.id} ({what}); nothing imported. To take its "
                      f"changes, merge it into logs/{old.id}.md (git merge, or by hand) and run `dbglog sync`")


def _canonical_update(old: Investigation, new: Investigation) -> Investigation:
    out = copy.deepcopy(new)
    out.id = old.id
    return out


def agent_units(path: str, lines: tuple[int, int | None] | None = None) -> dict:
    """A document as an agent or a model reads it to send an extraction back: ``{source, guide, digest,
    investigations, units}``, each unit with the id an extraction cites (MCP ``doc_units``, ``import --units``).
    ``lines`` (first, last or None: to the end; 1-based): only the units that touch them, a long document read a
    part at a time (the ids and the digest are the whole document's)."""
    from dbglog.docreader.review import READING_GUIDE, STEPS_GUIDE, reading_digest, units_for_agents
    from dbglog.docreader.units import segment

    text = read_source(Path(path), path)
    parsed, _ = parse_document(text, path, explain=True)  # (every unit judged: the labels shown)
    doc = segment(text)
    return {"source": path, "guide": f"{READING_GUIDE} {STEPS_GUIDE}", "digest": reading_digest(doc),
            "investigations": [{"index": k, "title": p.inv.title, "line": p.line} for k, p in enumerate(parsed)],
            "units": [u for u in units_for_agents(doc, parsed) if lines is None or (
                u["lines"][1] >= lines[0] and (lines[1] is None or u["lines"][0] <= lines[1]))]}


def read_extraction(path: str, extraction, shown: str = "extraction"):
    """An extraction that cites PATH's units by id, validated into corrections: a wrong one is one clear error,
    raised before anything is opened or written."""
    from dbglog.docreader.review import from_extraction
    from dbglog.docreader.units import segment

    out = from_extraction(segment(read_source(Path(path), path)), extraction, shown, digest=True)
    # Kept like a review: a plain re-import reads the document as the agent did, not with the reader's guesses. (Not
    # one that files an entry under another investigation than its lines': a kept row has no place to say so.)
    out.kept = not any(c.home is not None for c in out.attempts + (out.steps or []))
    out.by = "extraction"
    return out


def import_extracted(recs, path: str, corr, dry_run: bool = False, use: bool = False) -> tuple[dict, list[str]]:
    """Import the document PATH with exactly the attempts of a validated extraction (``read_extraction``; MCP
    ``import_extraction``, ``import --extraction``). Returns import_files' answer and the warnings (cited attempts
    that lie outside every investigation of the document, or across two of them)."""
    data = import_files(recs, [path], dry_run=dry_run, use=use, corrections={str(Path(path).resolve()): corr})
    made = sum(len(r["attempt_list"]) for r in data["investigations"])
    warnings = [f"{len(corr.attempts) - made} cited attempt(s) lie outside every investigation of {path} (a "
                "template or a preamble); their lines are kept as text"] if made != len(corr.attempts) else []
    # (the first investigation keeps the lines above its start, a preamble: only a later one's start divides two;
    # an extraction that files its entries by investigation chose where each goes)
    starts = [] if any(c.home is not None for c in corr.attempts) else \
        sorted(int(r["source"].rsplit(":", 1)[1]) for r in data["investigations"])[1:]
    for r in data["investigations"]:
        for a in r["attempt_list"]:
            lo, hi = a.get("source_lines") or (0, 0)
            if any(lo < s <= hi for s in starts):
                warnings.append(f"attempt {a['number']} of {r['id']} ({a['title'][:40]!r}) cites units of more than "
                                f"one investigation of {path} (lines {lo}-{hi}); it is filed under the first")
    return data, warnings


def import_files(recs, paths: list[str], dry_run: bool = False, use: bool = False,
                 corrections: dict | None = None) -> dict:
    """Import documents. The current investigation stays as it was unless ``use``: then the one investigation
    imported becomes current (more than one is refused before anything is written)."""
    from dbglog.kb import failures, sync
    from dbglog.kb.records import CURRENT

    reviews: list[dict] = []
    plans, skipped = plan_files(recs, paths, corrections, reviews)
    if use and len(plans) != 1:
        raise DbglogError(f"--use needs exactly one investigation; these files hold {len(plans)}: "
                          "import them, then `dbglog use ID`")
    written: list[Path] = []
    results = []
    memo = failures.ImportMemo()  # (what the failure index read, shared by the documents' investigations)
    store = recs.store
    look_only = dry_run and getattr(store, "readonly", False)  # (a read-only workspace: a dry run reads it as it is)
    try:
        with contextlib.nullcontext() if look_only else store.write():
            if not look_only:
                sync.sync(store, recs.ws)
            # (every decision before any file is written: a refusal of the last document leaves no file changed)
            renamed = _retitled(store, plans)
            for plan, inv in [(plan, _decide(recs, plan, renamed.get(id(plan)))) for plan in plans]:
                if not dry_run and plan.action != "unchanged":
                    if plan.action == "create":
                        store.insert_investigation(inv)
                        target = recs.ws.root / recs.path_for(inv.id)
                        if not target.exists():
                            written.append(target)
                    else:
                        store.replace_investigation(inv)
                    # A new record is _decide's cleaned copy: scanning it could only clean it again, a no-op that
                    # cost a redaction pass over the whole rendered file. An update keeps stored parts: scanned.
                    recs.publish(inv.id, scan=plan.action != "create")
                if not dry_run:
                    _remember(store, plan)
                    failures.index_import(store, plan, plans, memo=memo)  # (issue 27: its error blocks)
                p = plan.parsed
                results.append({
                    "action": plan.action, "id": plan.investigation_id, "title": inv.title,
                    "status": inv.status, "source": f"{plan.source}:{p.line}",
                    "attempts": len(p.inv.attempts), "differences": len(p.inv.differences),
                    "next_steps": len(p.inv.next_steps), "sections": len(p.inv.sections),
                    "recognized": p.recognized,
                    "attempt_list": [{"number": a.number, "title": a.title, "outcome": a.outcome,
                                      "source_lines": a.source_lines, "who": a.who} for a in p.inv.attempts],
                    "path": recs.path_for(inv.id) if plan.action != "unchanged" or not dry_run else "",
                    "items": [{"kind": k, "ref": r, "line": ln} for k, r, ln in p.items],
                    "unticked": [{"number": a.number, "title": a.title, "source_lines": a.source_lines,
                                  "removed": removed} for a, removed in plan.unticked],
                })
            if dry_run:
                raise _DryRun
            if use and not look_only:
                store.set_meta(CURRENT, results[0]["id"])
    except _DryRun:
        pass
    except BaseException:
        for path in written:  # the transaction rolled back: do not leave files it never recorded
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        raise
    current = store.get_meta(CURRENT) if hasattr(store, "get_meta") else None
    for r in results:
        r["current"] = bool(current) and r["id"] == current
    return {"dry_run": dry_run, "investigations": results, "skipped": skipped, "current": current or None,
            "reviews": reviews}


class _DryRun(Exception):
    """Raised inside the transaction to roll a dry run back."""


def _remember(store, plan: Plan) -> None:
    p = plan.parsed
    store.q("""INSERT INTO imports (source, key, investigation_id, line, sha256, imported)
               VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(source, key) DO UPDATE SET
               investigation_id=excluded.investigation_id, line=excluded.line, sha256=excluded.sha256,
               imported=excluded.imported""",
            plan.source, p.key, plan.investigation_id, p.line, plan.sha, model.now_iso())
    # (a row the document no longer has is no longer its: `diff add` of that factor later is dbglog's own)
    store.q("DELETE FROM import_items WHERE investigation_id = ? AND kind = 'difference'", plan.investigation_id)
    for kind, ref, line in p.items:
        store.q("""INSERT INTO import_items (investigation_id, kind, ref, source, line) VALUES (?, ?, ?, ?, ?)
                   ON CONFLICT(investigation_id, kind, ref) DO UPDATE SET source=excluded.source,
                   line=excluded.line""", plan.investigation_id, kind, ref, plan.source, line)


def provenance(store, inv_id: str) -> list[dict]:
    return [dict(r) for r in store.q(
        "SELECT kind, ref, source, line FROM import_items WHERE investigation_id = ? ORDER BY line", inv_id)]
