"""Failures seen in this workspace, by fingerprint (issue 27): where each was seen, and what the
knowledge base knows about one when it happens again.

One row of ``failures`` per place a fingerprint was seen: a run (``source = run``, ``ref`` its id;
its investigation and attempt are the run's, read through ``runs`` when looked up, so a later
``link_run`` is seen), the ``failure fp-... [...]`` line a recorded run left in its attempt
(``mirror``: what a teammate's clone, which has no runs, matches on), an investigation's own text
(``record``: its symptom, attempts, sections), an imported note (``note``: an investigation with a
source document), an error block import found in a document (``import``: ``ref`` DOC:LINE, kept by
``rebuild``: the document is not in the mirror) and a watched doc's section (``doc``). ``failure_sources``
says which run, investigation revision and watched-doc digest the rows were derived from, so
``refresh`` only reads what changed; ``rebuild`` (``reindex``) derives them all again.

The fingerprint itself is ``dbglog.diagnose.fingerprint`` (pure); this module stores and looks up.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field

from dbglog.diagnose.fingerprint import Fingerprint, Likeness, fingerprint_blocks, fingerprint_run, from_mirror_line
from dbglog.diagnose.fingerprint import MIN_PREFIX, NEAR, message, similarity
from dbglog.util.errors import DbglogError

OUTPUT_TAIL = 256 << 10  # the part of a run's output read for frames and kernel (a traceback is at the end)
CANDIDATES = 5000  # near-match candidates read per lookup (the most recent, same signature)
LEVELS = {"exact": 0, "near": 1, "similar": 2}


def create_tables(db) -> None:
    """The migration's tables (``store.MIGRATIONS``: 0011_failures)."""
    db.executescript(
        """
        CREATE TABLE IF NOT EXISTS failures (
          id INTEGER PRIMARY KEY,
          fp TEXT NOT NULL,                   -- the exact key, fp-<10 hex>
          signature TEXT NOT NULL,
          line TEXT NOT NULL,                 -- the normalised key line
          frames TEXT NOT NULL DEFAULT '[]',  -- JSON: file.py:function, innermost first
          kernel TEXT,
          op TEXT,
          ranks TEXT NOT NULL DEFAULT '[]',   -- JSON: the missing ranks of a collective
          source TEXT NOT NULL,               -- run | mirror | record | note | import | doc
          ref TEXT NOT NULL,                  -- run id | INV | INV#N | path > heading
          investigation_id TEXT,              -- record and note rows (a run's is read from runs)
          attempt_number INTEGER,
          seen TEXT NOT NULL,
          UNIQUE (source, ref, fp)
        );
        CREATE INDEX IF NOT EXISTS failures_fp ON failures(fp, source, ref);
        -- (covering: a lookup reads the distinct forms of one signature from the index alone)
        CREATE INDEX IF NOT EXISTS failures_form ON failures(signature, fp, frames, line, kernel, op);
        CREATE INDEX IF NOT EXISTS failures_inv ON failures(investigation_id) WHERE investigation_id IS NOT NULL;
        CREATE TABLE IF NOT EXISTS failure_sources (what TEXT PRIMARY KEY, rev TEXT NOT NULL);
        """
    )


# --- writing: runs, records, watched docs -------------------------------------------------------

def _insert(store, fp: Fingerprint, source: str, ref: str, seen: str, inv: str | None = None,
            attempt: int | None = None, key: str | None = None) -> None:
    store.q("""INSERT OR IGNORE INTO failures (fp, signature, line, frames, kernel, op, ranks, source, ref,
                 investigation_id, attempt_number, seen) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            key or fp.key, fp.signature, fp.line, json.dumps(list(fp.frames)), fp.kernel, fp.op,
            json.dumps(list(fp.missing_ranks)), source, ref, inv, attempt, seen)


def read_output(run: dict) -> str:
    """The tail of a run's output file ('' when pruned or unreadable)."""
    path = (run.get("paths") or {}).get("output")
    if not path:
        return ""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            f.seek(max(0, size - OUTPUT_TAIL))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def index_run(store, run: dict, output: str | None = None) -> Fingerprint | None:
    """Fingerprint one stored run and keep it (inside ``store.write()``); None for a pass."""
    fp = fingerprint_run(run, read_output(run) if output is None else output)
    if fp is not None:
        _insert(store, fp, "run", run["id"], run.get("started") or "")
    return fp


def _record_texts(inv) -> list[tuple[str, int | None, str]]:
    """(ref, attempt number, text) of an investigation's texts that may quote a failure."""
    out = [(inv.id, None, inv.symptom)]
    for a in inv.attempts:
        out.append((f"{inv.id}#{a.number}", a.number, "\n".join((a.result, a.conclusion))))
    for s in inv.sections:
        out.append((f"{inv.id}§{s.heading}", None, getattr(s, "body", "") or ""))
    return [t for t in out if t[2] and t[2].strip()]


def index_investigation(store, inv_id: str, signatures=None, memo: dict | None = None) -> int:
    """Derive an investigation's rows again from its text (inside ``store.write()``); how many. ``memo``:
    blocks already fingerprinted (``fingerprint_blocks``)."""
    store.q("DELETE FROM failures WHERE investigation_id = ? AND source IN ('record', 'note', 'mirror')", inv_id)
    row = store.q("SELECT rev, updated FROM investigations WHERE id = ?", inv_id).fetchone()
    if row is None:
        store.q("DELETE FROM failure_sources WHERE what = ?", "inv:" + inv_id)
        return 0
    inv = store.load(inv_id)
    source = "note" if inv.source else "record"
    n = 0
    for ref, number, text in _record_texts(inv):
        for line in text.splitlines():
            quoted = from_mirror_line(line)
            if quoted is not None:  # a recorded run's fingerprint, as the mirror carries it
                _insert(store, quoted[1], "mirror", ref, inv.updated, inv_id, number, key=quoted[0])
                n += 1
        if "failure fp-" in text:
            continue  # (the recorded run's own text: its line above says it)
        for fp in fingerprint_blocks(text, signatures, memo):
            _insert(store, fp, source, ref, inv.updated, inv_id, number)
            n += 1
    store.q("INSERT OR REPLACE INTO failure_sources (what, rev) VALUES (?, ?)", "inv:" + inv_id,
            f"{row['rev']}:{row['updated']}")
    return n


def index_doc(store, path: str, digest: str, signatures=None) -> int:
    """Derive a watched doc's rows again from its stored sections (inside ``store.write()``)."""
    store.q("DELETE FROM failures WHERE source = 'doc' AND (ref = ? OR ref LIKE ? ESCAPE '\\')", path,
            path.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + " > %")
    n = 0
    for r in store.q("SELECT heading, body FROM sections WHERE path = ? ORDER BY position", path).fetchall():
        for fp in fingerprint_blocks(r["body"], signatures):
            _insert(store, fp, "doc", f"{path} > {r['heading']}" if r["heading"] else path, "")
            n += 1
    store.q("INSERT OR REPLACE INTO failure_sources (what, rev) VALUES (?, ?)", "doc:" + path, digest)
    return n


def _import_span(plan, plans) -> tuple[int, int]:
    """The 0-based lines of an imported document that belong to ``plan``'s investigation: from its
    heading (the document's start for the first) to the next investigation's heading."""
    starts = sorted(q.parsed.line for q in plans if q.source == plan.source)
    later = [ln for ln in starts if ln > plan.parsed.line]
    first = plan.parsed.line == starts[0]
    return (0 if first else plan.parsed.line - 1), (later[0] - 1 if later else 1 << 30)


@dataclass
class ImportMemo:
    """What one import has read already, shared by the investigations of its documents: each error block's
    fingerprint (by text) and each document's lines."""

    blocks: dict = field(default_factory=dict)
    lines: dict = field(default_factory=dict)  # source -> (its text, that text's lines)

    def lines_of(self, source: str, text: str) -> list[str]:
        had = self.lines.get(source)
        if had is None or had[0] is not text:
            had = self.lines[source] = (text, text.splitlines())
        return had[1]


def index_import(store, plan, plans=(), signatures=None, memo: ImportMemo | None = None) -> int:
    """At import (inside its write transaction): fingerprint each error block of the document's part
    that ``plan`` imported (``source = import``, ``ref`` the document and the block's line, the
    investigation the import wrote), whether or not the reader kept the block in the record, and the
    record itself (``index_investigation``), so the next recall finds the note without a lazy pass.
    ``plans``: every plan of the import (a document may hold several investigations). ``memo``: one for the
    whole import, so a document of many investigations is split into lines once and each of its blocks read
    once. How many rows."""
    memo = memo or ImportMemo()
    inv_id, text = plan.investigation_id, getattr(plan, "text", "") or ""
    store.q("DELETE FROM failures WHERE source = 'import' AND investigation_id = ? AND "
            "substr(ref, 1, length(?)) = ?", inv_id, plan.source + ":", plan.source + ":")
    start, end = _import_span(plan, list(plans) or [plan])
    lines = memo.lines_of(plan.source, text)[start:end]
    n, seen = 0, _now()
    for at, block in _numbered_blocks(lines):
        for fp in fingerprint_blocks(block, signatures, memo.blocks):
            _insert(store, fp, "import", f"{plan.source}:{start + at + 1}", seen, inv_id)
            n += 1
    if store.exists(inv_id):
        n += index_investigation(store, inv_id, signatures, memo.blocks)
    return n


_FENCE_LINE = re.compile(r"^ {0,3}(```|~~~)")


def _numbered_blocks(lines: list[str]) -> list[tuple[int, str]]:
    """(0-based first line, text) of each fenced block of ``lines``, and of the prose between them as
    one more block (line of its first line)."""
    out, prose, block, fence, at = [], [], [], None, 0
    for i, line in enumerate(lines):
        m = _FENCE_LINE.match(line)
        if fence is None and m is not None:
            fence, at, block = m.group(1), i + 1, []
        elif fence is not None and line.lstrip().startswith(fence) and not line.strip().strip(fence[0]):
            out.append((at, "\n".join(block)))
            fence = None
        elif fence is not None:
            block.append(line)
        else:
            prose.append((i, line))
    if fence is not None:  # an unclosed fence: its lines are still a block
        out.append((at, "\n".join(block)))
    if any(t.strip() for _, t in prose):
        out.append((prose[0][0], "\n".join(t for _, t in prose)))
    return out


def _now() -> str:
    from dbglog.core.model import now_iso

    return now_iso()


RUN_MARK = "runs:rowid"  # failure_sources: the last runs row (rowid) fingerprinted; runs are only appended


def stale(store, load: bool = True) -> tuple[list[dict], int, list[str], list[tuple[str, str]]]:
    """What ``refresh`` has to read: failed runs added since the mark (and the new mark; -1: none),
    investigations changed or gone since, watched docs changed since. ``load``: read the runs' records
    (else only whether there are any)."""
    row = store.q("SELECT rev FROM failure_sources WHERE what = ?", RUN_MARK).fetchone()
    after = int(row[0]) if row else 0
    last = store.q("SELECT max(rowid) FROM runs").fetchone()[0] or 0
    runs = [store._run(r) for r in store.q("SELECT * FROM runs WHERE rowid > ? AND outcome != 'pass' ORDER BY rowid",
                                           after).fetchall()] if last > after and load else []
    invs = [r[0] for r in store.q(
        """SELECT i.id FROM investigations i LEFT JOIN failure_sources s ON s.what = 'inv:' || i.id
           WHERE s.rev IS NOT i.rev || ':' || i.updated""")]
    gone = [r[0][4:] for r in store.q(
        "SELECT what FROM failure_sources WHERE what LIKE 'inv:%' AND substr(what, 5) NOT IN "
        "(SELECT id FROM investigations)")]
    docs = [(r[0], r[1]) for r in store.q(
        """SELECT w.path, w.sha256 FROM watched_files w LEFT JOIN failure_sources s ON s.what = 'doc:' || w.path
           WHERE s.rev IS NOT w.sha256""")]
    return runs, (last if last > after else -1), invs + gone, docs


def _apply(store, runs: list[dict], mark: int, invs: list[str], docs: list, signatures) -> dict:
    for r in runs:
        index_run(store, r)
    if mark >= 0:
        store.q("INSERT OR REPLACE INTO failure_sources (what, rev) VALUES (?, ?)", RUN_MARK, str(mark))
    for i in invs:
        index_investigation(store, i, signatures)
    for path, digest in docs:
        index_doc(store, path, digest, signatures)
    store.q("DELETE FROM failures WHERE source = 'doc' AND ref NOT IN (SELECT path FROM watched_files) "
            "AND substr(ref, 1, instr(ref || ' > ', ' > ') - 1) NOT IN (SELECT path FROM watched_files)")
    return {"runs": len(runs), "investigations": len(invs), "docs": len(docs)}


def refresh(store, signatures=None) -> dict:
    """Bring the rows up to date with runs, records and watched docs (one write transaction, what is
    stale read again inside it; nothing when nothing changed; nothing on a read-only store, whose rows
    are read as they are)."""
    _, mark, invs, docs = stale(store, load=False)
    if store.readonly or not (mark >= 0 or invs or docs):
        return {"runs": 0, "investigations": 0, "docs": 0}
    with store.write():
        return _apply(store, *stale(store), signatures)


def rebuild(store, signatures=None) -> dict:
    """Derive every row again (``reindex``: inside its write transaction)."""
    # (what import found in a document is kept: the document is not in the mirror; a re-import derives it again)
    store.q("DELETE FROM failures WHERE source != 'import' OR investigation_id NOT IN (SELECT id FROM investigations)")
    store.q("DELETE FROM failure_sources")
    return _apply(store, *stale(store), signatures)


# --- looking up -------------------------------------------------------------------------------

@dataclass
class Hit:
    """One place a fingerprint like the one looked up was seen."""
    source: str
    ref: str
    investigation: str | None
    attempt: int | None
    seen: str
    likeness: Likeness
    key: str


_ROWS = """SELECT f.*, coalesce(f.investigation_id, r.investigation_id) AS inv,
                  coalesce(f.attempt_number, r.attempt_number) AS att
           FROM failures f LEFT JOIN runs r ON f.source = 'run' AND r.id = f.ref"""


# A mirror line whose run is here: the run's own row (with its frames) speaks for it.
_SHADOWED = """(f.source = 'mirror' AND EXISTS (SELECT 1 FROM failures g JOIN runs rr ON g.source = 'run' AND
                rr.id = g.ref WHERE g.fp = f.fp AND rr.investigation_id = f.investigation_id
                AND rr.attempt_number = f.attempt_number))"""
SIMILAR_FORMS = 10  # forms that are only similar (mentions) read, the most alike; of their rows the most recent
SIMILAR_ROWS = 30


def _row_fp(r) -> Fingerprint:
    frames = () if r["frames"] == "[]" else tuple(json.loads(r["frames"]))
    return Fingerprint(r["signature"], r["line"], frames, r["kernel"], r["op"])


def _alike(store, fp: Fingerprint) -> dict[tuple, Likeness]:
    """(key, frames JSON) -> likeness of every distinct form seen with ``fp``'s signature that is like it.
    The distinct key lines are compared in C first (rapidfuzz ``process.extract``, cut below ``NEAR``:
    ``similarity`` reads the messages without their headings), with the lines that hold the other whole;
    only the forms with a close line are judged whole (kernel, operation, frames)."""
    from rapidfuzz import fuzz, process

    forms = store.q("""SELECT DISTINCT fp, signature, line, frames, kernel, op FROM failures WHERE signature = ? AND fp != ?
                       LIMIT ?""", fp.signature, fp.key, CANDIDATES).fetchall()
    by_line: dict[str, list] = {}
    for f in forms:
        by_line.setdefault(f["line"], []).append(f)
    lines = list(by_line)
    close = {j: score for _, score, j in process.extract(fp.line, lines, scorer=fuzz.ratio, score_cutoff=NEAR - 5,
                                                         limit=None)}
    # (and a line that holds the other whole, found in C too: a title cut short, a message quoted in a
    # wrapper's sentence; ``similarity`` decides)
    if len(fp.line) >= MIN_PREFIX:
        for query in {fp.line, message(fp.line)}:
            for _, _, j in process.extract(query, lines, scorer=fuzz.partial_ratio, score_cutoff=100, limit=None):
                close.setdefault(j, None)
    out = {}
    for j, score in close.items():
        for f in by_line[lines[j]]:
            # (the C ratio of whole lines stands for the messages' when it already says near)
            like = similarity(fp, _row_fp(f), score=score if score is not None and score >= NEAR else None)
            if like.level != "none":
                out[(f["fp"], f["frames"])] = like
    return out


def lookup(store, fp: Fingerprint, exclude_runs=()) -> list[Hit]:
    """Every row that is the same failure as ``fp`` or like it (exact, near, similar), best first."""
    alike = _alike(store, fp)
    strong = [fp.key] + sorted({k for (k, _), like in alike.items() if like.level == "near"})
    similar = sorted(((like.score, k) for (k, _), like in alike.items() if like.level == "similar"), reverse=True)
    weak = list(dict.fromkeys(k for _, k in similar if k not in strong))[:SIMILAR_FORMS]
    where = f" AND NOT {_SHADOWED}"
    rows = store.q(_ROWS + f" WHERE f.fp IN ({', '.join('?' * len(strong))}){where}", *strong).fetchall()
    if weak:
        rows += store.q(_ROWS + f" WHERE f.fp IN ({', '.join('?' * len(weak))}){where} ORDER BY f.seen DESC LIMIT ?",
                        *weak, SIMILAR_ROWS).fetchall()
    exact = similarity(fp, fp)  # (exact, or only similar for a message that names no site)
    hits = []
    skip = set(exclude_runs)
    for r in rows:
        if r["source"] == "run" and r["ref"] in skip:
            continue
        like = exact if r["fp"] == fp.key else alike.get((r["fp"], r["frames"]))
        if like is not None:
            hits.append(Hit(r["source"], r["ref"], r["inv"], r["att"], r["seen"], like, r["fp"]))
    hits.sort(key=lambda h: h.seen, reverse=True)  # most recent first among equals (a stable sort next)
    hits.sort(key=lambda h: (LEVELS[h.likeness.level], -h.likeness.score))
    return hits


def occurrences(store, key: str) -> dict:
    """How often and when a fingerprint (exact key) was seen: runs and records (a run's mirror line
    counts only where the run itself is not here: a teammate's clone)."""
    r = store.q(
        f"""SELECT count(*) AS n, min(nullif(seen, '')) AS first, max(seen) AS last FROM failures f
            WHERE fp = ? AND NOT {_SHADOWED}""", key).fetchone()
    return {"count": r["n"], "first_seen": r["first"], "last_seen": r["last"]}


# --- recall: what the knowledge base knows about a failure, at the moment it happens ---------------

MAX_INVESTIGATIONS = 3  # one screen at most: 3 investigations, 4 attempts, 3 mentions, the regression
MAX_ATTEMPTS = 4
MAX_MENTIONS = 3
_OUTCOME_ORDER = {"worked": 0, "partial": 1, "failed": 2, "inconclusive": 3}
# A commit a record names as the fix ("fixed in 3f2a9c1", "fix: commit 3f2a9c1"): the good end of a bisection.
_FIX_COMMIT = re.compile(r"\b(?:fix(?:ed)?(?: (?:in|by|at))?|commit|landed in)\s*:?\s*`?([0-9a-f]{7,40})\b", re.I)


def _one_line(a) -> str:
    """An attempt in one line: its conclusion, else its result's first line that is not a quote."""
    for text in (a.conclusion, a.result):
        for line in (text or "").splitlines():
            s = line.strip().lstrip("-* ").strip()
            if s and not s.startswith(("evidence:", "failure fp-")):
                return s[:140]
    return ""


def _investigation(store, inv_id: str, hit: Hit) -> tuple[dict, list[dict]]:
    inv = store.load(inv_id)
    row = {"id": inv.id, "title": inv.title, "status": inv.status, "root_cause": inv.root_cause,
           "updated": inv.updated, "imported": bool(inv.source), "match": hit.likeness.level,
           "score": hit.likeness.score, "guess": hit.likeness.guess, "evidence": hit.likeness.evidence(),
           "via": hit.ref, "doc": hit.ref if hit.source == "import" else None}
    attempts = [{"investigation": inv.id, "number": a.number, "title": a.title, "line": _one_line(a),
                 "outcome": a.outcome, "runs": list(a.runs)}
                for a in inv.attempts if a.outcome in _OUTCOME_ORDER]
    attempts.sort(key=lambda a: (_OUTCOME_ORDER[a["outcome"]], -a["number"]))
    return row, attempts


def _fix_commit(store, inv: dict, attempts: list[dict]) -> str | None:
    """The commit a record names as the fix ("fixed in 3f2a9c1" in the root cause or the attempt that
    worked), else the commit of a passing run of the attempt that worked on a clean tree."""
    worked = [a for a in attempts if a["outcome"] == "worked"]
    for t in [inv["root_cause"]] + [f"{a['title']} {a['line']}" for a in worked]:
        m = _FIX_COMMIT.search(t or "")
        if m is not None:
            return m.group(1)
    for a in worked:
        for rid in a["runs"]:
            r = store.q("SELECT git_commit FROM runs WHERE id = ? AND outcome = 'pass' AND git_dirty = 0", rid).fetchone()
            if r is not None and r["git_commit"]:
                return r["git_commit"][:12]
    return None


def _regression(store, inv: dict, attempts: list[dict], fp: Fingerprint, cmd: str | None) -> dict | None:
    """A resolved investigation's failure seen again: "regressed?", and the commands that act on it."""
    if inv["status"] != "resolved" or inv["match"] not in ("exact", "near", "similar"):
        return None  # ("similar" rows are here only when a run of the same command saw it: recall)
    import shlex

    worked = next((a for a in attempts if a["outcome"] == "worked"), None)
    by = f'attempt {worked["number"]} "{worked["title"]}"' if worked else (inv["root_cause"][:80] or "its record")
    day = (inv["updated"] or "")[:10]
    symptom = f"Seen again after {inv['id']} was resolved on {day}: [{fp.signature}] {fp.line}"[:300]
    commands = [f"dbglog status {inv['id']} open",
                f"dbglog new {shlex.quote(inv['title'] + ' (regressed?)')} --symptom {shlex.quote(symptom)} "
                f"--tag regression"]
    commit = _fix_commit(store, inv, attempts)
    bisect = (f"dbglog bisect git --good {commit} --bad HEAD -- {cmd}" if commit and cmd else None)
    return {"investigation": inv["id"], "resolved_on": day, "by": by, "fix_commit": commit,
            "commands": commands, "bisect": bisect, "guess": inv["guess"],
            "why": {"near": "a near match", "similar": "the same message from the same command"}.get(inv["match"])}


def _same_repro(store, hit: Hit, cmd: str | None) -> bool:
    """Was ``hit`` a run of ``cmd`` (the command that failed now, shell-joined), word for word?"""
    if hit.source != "run" or not cmd:
        return False
    import shlex

    row = store.q("SELECT cmd FROM runs WHERE id = ?", hit.ref).fetchone()
    try:
        return row is not None and shlex.join(json.loads(row["cmd"])) == cmd
    except (TypeError, ValueError):
        return False


def recall(store, fp: Fingerprint, *, exclude_runs=(), current_inv: str | None = None,
           cmd: str | None = None) -> dict:
    """What the knowledge base knows about ``fp``, best first: the investigations that saw it (status,
    root cause), the attempts against it (worked first), watched docs and imported notes that mention
    it, and a possible regression. ``cmd``: the repro, for the regression's ``bisect git`` line."""
    hits = lookup(store, fp, exclude_runs)
    invs: dict[str, Hit] = {}
    quoted: dict[str, Hit] = {}
    docs: list[dict] = []
    for h in hits:
        if h.source == "doc":
            if len(docs) < MAX_MENTIONS:
                docs.append({"kind": "doc", "ref": h.ref, "match": h.likeness.level, "guess": h.likeness.guess,
                             "evidence": h.likeness.evidence()})
        elif h.investigation and h.investigation != current_inv:
            if h.likeness.level == "similar" and _same_repro(store, h, cmd):
                # A message that names no site ("CUDA error: an illegal memory access was encountered"), from a
                # run of the very command that failed now: that investigation is the best guess there is.
                h = Hit(h.source, h.ref, h.investigation, h.attempt, h.seen,
                        Likeness("similar", h.likeness.score, f"{h.likeness.why}; the same command"), h.key)
                invs.setdefault(h.investigation, h)
            elif h.likeness.level == "similar":  # a record that quotes the line: a mention, not the same failure
                quoted.setdefault(h.investigation, h)
            else:
                invs.setdefault(h.investigation, h)
    rows, attempts = [], []
    for inv_id, h in [(i, h) for i, h in invs.items() if store.exists(i)][:MAX_INVESTIGATIONS]:
        row, atts = _investigation(store, inv_id, h)
        rows.append(row)
        attempts.extend(atts)
    rows.sort(key=lambda r: (LEVELS[r["match"]], r["status"] != "resolved", not r["root_cause"]))
    attempts.sort(key=lambda a: _OUTCOME_ORDER[a["outcome"]])  # (stable: the best investigation's first)
    regression = next((g for r in rows if (g := _regression(
        store, r, [a for a in attempts if a["investigation"] == r["id"]], fp, cmd))), None)
    notes = [{"kind": "note" if h.source in ("note", "import") else "record", "ref": h.ref, "match": "similar",
              "guess": True, "evidence": h.likeness.evidence(), "investigation": i}
             for i, h in quoted.items() if i not in invs]  # (an imported note that saw it is listed above, marked)
    return {"fingerprint": fp.to_dict(), **occurrences(store, fp.key), "investigations": rows,
            "attempts": attempts[:MAX_ATTEMPTS], "mentions": (docs + notes)[:MAX_MENTIONS],
            "regression": regression, "more": max(0, len(invs) - MAX_INVESTIGATIONS)}


def _label(match: dict) -> str:
    """``[exact]``, or a guess with its evidence: ``[near match, a guess: key lines 93% alike; same frame
    moe.py:fused_experts]`` (a block stored before guesses were labelled has no evidence: its level alone)."""
    if not match.get("guess") or not match.get("evidence"):
        return f"[{match['match']}]"
    what = "near match" if match["match"] == "near" else match["match"]
    return f"[{what}, a guess: {match['evidence'][:120]}]"


def render(block: dict) -> list[str]:
    """The seen-before block as text lines (one screen at most), under a verdict."""
    fp = block["fingerprint"]
    if not (block["investigations"] or block["mentions"]):
        n = block["count"]
        return [f"seen before: no ({fp['key']}" + (f"; {n} run(s) here, none in another investigation)"
                                                   if n > 1 else ", first time)")]
    if not block["count"]:  # (never this exact failure: "seen before (fp-..., 0 time(s)):" over guesses contradicted itself)
        out = [f"seen before: not exactly ({fp['key']}, first time); alike:"]
    else:
        out = [f"seen before ({fp['key']}, {block['count']} time(s)"
               + (f" since {block['first_seen'][:10]}" if block.get("first_seen") else "") + "):"]
    for r in block["investigations"]:
        cause = f"; root cause: {r['root_cause'][:100]}" if r["root_cause"] else ""
        note = f" (imported from {r['doc']})" if r.get("doc") else " (imported note)" if r["imported"] else ""
        out.append(f"  {r['id']} \"{r['title'][:60]}\"{note} — {r['status']}{cause} {_label(r)}")
        for a in block["attempts"]:
            if a["investigation"] == r["id"]:
                out.append(f"    {a['outcome']}: #{a['number']} {a['title'][:50]}"
                           + (f" — {a['line'][:90]}" if a["line"] else ""))
    for m in block["mentions"]:
        # (a record's ref is a run id or a field of it: the investigation it is in says where to look)
        where = f" in {m['investigation']}" if m.get("investigation") and m["investigation"] not in m["ref"] else ""
        out.append(f"  {m['kind']}: {m['ref'][:100]}{where} {_label(m)}")
    if block.get("more"):
        out.append(f"  and {block['more']} more investigation(s): dbglog failures show {fp['key']}")
    g = block.get("regression")
    if g:
        out.append(f"  REGRESSED? {g['investigation']} was resolved on {g['resolved_on']} by {g['by']}"
                   + (f" (a guess: {g.get('why') or 'a near match'})" if g.get("guess") else ""))
        out.append(f"    reopen it:     {g['commands'][0]}")
        out.append(f"    or a new one:  {g['commands'][1]}")
        if g["bisect"]:
            out.append(f"    find the commit that undid the fix: {g['bisect']}")
    return out



def _run_ids(raw) -> list[str]:
    """A bisection step's run ids as ``bisect_trials.runs`` holds them ({"ids": [...], ...}, or a list)."""
    v = json.loads(raw or "[]")
    return list(v.get("ids") or []) if isinstance(v, dict) else list(v)


def _session_cmd(store, sid: str) -> str | None:
    """A bisection's repro command, shell-joined, from its stored spec (toggles keep it in the execution)."""
    import shlex

    row = store.q("SELECT spec FROM bisect_sessions WHERE id = ?", sid).fetchone()
    try:
        spec = json.loads(row["spec"]) if row else {}
        cmd = spec.get("cmd") or (spec.get("execution") or {}).get("cmd")
        return shlex.join(cmd) if isinstance(cmd, list) else cmd
    except (TypeError, ValueError, AttributeError):
        return None


def bisection_recall(store, sid: str, signatures=None, *, step_runs=None, current_inv: str | None = None,
                     cmd: str | None = None) -> dict | None:
    """The seen-before block (with its ``lines``) of a bisection's first bad verdict: the runs of
    ``step_runs`` (the step being judged bad now, live) or of the first step stored bad, fingerprinted
    from the first failing run that is stored; the session's own runs are left out of what it is
    matched against. None when no such run fails (or none is stored yet). ``signatures``: the catalog,
    or a callable that loads it only once a failure is fingerprinted (a silent repro's bisection never
    loads it)."""
    rows = store.q("SELECT verdict, runs FROM bisect_trials WHERE session_id = ? ORDER BY seq", sid).fetchall()
    if current_inv is None:  # (the investigation the bisection is recorded in: not a "seen before")
        row = store.q("SELECT investigation_id FROM bisect_sessions WHERE id = ?", sid).fetchone()
        current_inv = row["investigation_id"] if row else None
    if cmd is None:
        cmd = _session_cmd(store, sid)
    mine = [r for row in rows for r in _run_ids(row["runs"])]
    bad = list(step_runs) if step_runs is not None else \
        next((_run_ids(row["runs"]) for row in rows if row["verdict"] == "bad"), [])
    for rid in bad:
        try:
            run = store.get_run(rid)
        except DbglogError:  # (not stored: a probe kept out of the session, a pruned run)
            continue
        fp = fingerprint_run(run, read_output(run))
        if fp is not None:
            refresh(store, signatures() if callable(signatures) else signatures)
            block = recall(store, fp, exclude_runs=[*mine, *bad], current_inv=current_inv, cmd=cmd)
            return block | {"lines": render(block)}
    return None

# --- group and count: `dbglog failures` ---------------------------------------------------------

def _statuses(store, ids: list[str]) -> list[dict]:
    out = []
    for i in ids:
        r = store.q("SELECT status, title FROM investigations WHERE id = ?", i).fetchone()
        if r is not None:
            out.append({"id": i, "status": r["status"], "title": r["title"]})
    return out


def _status_of(invs: list[dict]) -> str:
    """A fingerprint's status: open while any investigation of it is; resolved when all are; else
    unrecorded (runs only)."""
    st = {i["status"] for i in invs}
    return "open" if "open" in st else "resolved" if "resolved" in st else (st.pop() if st else "unrecorded")


def listing(store, limit: int = 50) -> list[dict]:
    """The fingerprints seen in this workspace, most recently seen first: first and last seen, count,
    investigations, status."""
    rows = store.q(
        _ROWS.replace("SELECT f.*", "SELECT f.fp, f.signature, f.line, f.kernel, f.seen, f.source") +
        f" WHERE NOT {_SHADOWED} ORDER BY f.fp").fetchall()
    groups: dict[str, dict] = {}
    for r in rows:
        g = groups.setdefault(r["fp"], {"key": r["fp"], "signature": r["signature"], "line": r["line"],
                                        "kernel": r["kernel"], "first_seen": None, "last_seen": None, "count": 0,
                                        "runs": 0, "_invs": []})
        g["count"] += 1
        g["runs"] += r["source"] == "run"
        if r["seen"]:
            g["first_seen"] = min(g["first_seen"] or r["seen"], r["seen"])
            g["last_seen"] = max(g["last_seen"] or r["seen"], r["seen"])
        if r["inv"] and r["inv"] not in g["_invs"]:
            g["_invs"].append(r["inv"])
    out = sorted(groups.values(), key=lambda g: g["last_seen"] or "", reverse=True)[:limit]
    for g in out:
        g["investigations"] = _statuses(store, g.pop("_invs"))
        g["status"] = _status_of(g["investigations"])
    return out


def resolve_key(store, ref: str) -> str:
    """A fingerprint's exact key from its key or a prefix of it (``fp-3f2a``, ``3f2a``)."""
    want = ref.strip().lower()
    want = want if want.startswith("fp-") else "fp-" + want
    if not re.fullmatch(r"fp-[0-9a-f]{1,10}", want):
        raise DbglogError(f"{ref!r} is not a fingerprint: give one as `dbglog failures` lists it (fp-3f2a91c0e1)")
    keys = [r[0] for r in store.q("SELECT DISTINCT fp FROM failures WHERE fp LIKE ? LIMIT 6", want + "%")]
    if len(keys) == 1:
        return keys[0]
    if not keys:
        raise DbglogError(f"no failure {ref!r} in this workspace (see `dbglog failures`)")
    raise DbglogError(f"{ref!r} matches several fingerprints ({', '.join(keys[:5])}); give more of it")


def show(store, ref: str) -> dict:
    """One fingerprint: what it is, and every run and record that saw it (most recent first)."""
    key = resolve_key(store, ref)
    rows = store.q(_ROWS + " WHERE f.fp = ? ORDER BY f.seen DESC, f.id DESC", key).fetchall()
    first = rows[0]
    places = []
    for r in rows:
        p = {"source": r["source"], "ref": r["ref"], "investigation": r["inv"], "attempt": r["att"],
             "seen": r["seen"] or None}
        if r["source"] == "run":
            run = store.q("SELECT outcome, cmd FROM runs WHERE id = ?", r["ref"]).fetchone()
            if run is not None:
                p |= {"outcome": run["outcome"], "cmd": json.loads(run["cmd"])}
        places.append(p)
    invs = _statuses(store, list(dict.fromkeys(p["investigation"] for p in places if p["investigation"])))
    best = next((r for r in rows if r["source"] == "run"), first)  # (a run's row has the frames)
    return {"fingerprint": _row_fp(best).to_dict() | {"key": key, "missing_ranks": json.loads(best["ranks"])},
            **occurrences(store, key), "status": _status_of(invs), "investigations": invs, "seen": places}
