"""The protocol's steps as functions: check, record, run, look up. Shared by every front end.

``cli/`` (one process per command) and ``mcp_server.py`` (one long-lived process serving an
agent) both call these, so a tool and its command can never drift apart: same validation, same
one-line ``DbglogError`` messages, same data. Nothing here parses arguments, prints, or exits;
warnings go to the ``warn`` callback the caller passes (the CLI prints ``dbglog: warning: ...``,
the MCP server returns them in the tool's result).

Heavy modules are imported inside the functions that need them (see ``bench/agent_bench.py``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable

from dbglog.run.options import REPRO_OUTPUT_CAP, RunOptions
from dbglog.util.errors import DbglogError

Warn = Callable[[str], None]


def _ignore(_msg: str) -> None:
    pass


MAX_TITLE = 500  # characters: a title is one line to read in a list, a heading, a file name's slug


def check_title_length(title: str | None, what: str, details: str) -> None:
    """A title past MAX_TITLE is something else pasted into it (a log, a whole note): refused, with where
    the text belongs, instead of a 1 MB heading in every list."""
    if title is not None and len(title.strip()) > MAX_TITLE:
        raise DbglogError(f"the {what} is {len(title.strip()):,} characters; keep it to one short line (at most "
                          f"{MAX_TITLE}) and put the rest in {details}")


def check_text(value: str | None, what: str) -> str | None:
    """Reject text that is not valid Unicode (undecodable bytes from a shell, lone surrogates)."""
    if value is None:
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise DbglogError(f"the {what} is not valid UTF-8; pass text in UTF-8") from None
    return value


# --- workspace ------------------------------------------------------------------------


def open_records(create: bool = False, sync: bool = True, warn: Warn = _ignore):
    """The workspace that applies here, open, with outside edits of ``logs/`` taken in."""
    from dbglog.util import workspace
    from dbglog.kb.records import Records

    recs = Records(workspace.find(), create=create)
    if sync:
        sync_records(recs, warn)
    return recs


def sync_records(recs, warn: Warn = _ignore, keep_newer: bool = False):
    from dbglog.kb.sync import links_warning

    report = recs.sync(keep_newer=keep_newer) if keep_newer else recs.sync()
    if links_warning(report.links):  # (a loop, a dangling link: one line, never a lock-out)
        warn(links_warning(report.links))
    reap_orphaned_runs(recs, warn)
    for line in report.misplaced:
        warn(line)
    for rel in report.missing:
        warn(f"{rel} was deleted; restore it, or run `dbglog sync --prune` to delete it from the database")
    if getattr(recs, "unsynced", None):
        n = len(recs.unsynced)
        warn(f"{recs.unsynced[0]}" + (f" and {n - 1} more differ" if n > 1 else " differs") + " from the "
             "database, which is read-only here and could not take hand edits in: this is the database's version")
    return report


# --- search: "was this already tried?" ------------------------------------------------------


def search_filters(recs, status=None, outcomes=(), tags=(), inv_ref=None, since=None):
    from dbglog.core import model
    from dbglog.kb import search

    return search.Filters(
        status=model.check_choice(status, model.STATUSES, "status") if status else None,
        outcomes=tuple(model.check_choice(o, model.OUTCOMES, "outcome") for o in outcomes),
        tags=tuple(tags), investigation=recs.resolve(inv_ref) if inv_ref else None,
        since=search.parse_since(since))


def refresh_watched(recs, warn: Warn = _ignore) -> None:
    """Watched living docs (config.toml [search] watch) are re-indexed when they changed."""
    try:
        watching = b"watch" in recs.ws.config_path.read_bytes()
    except OSError:
        watching = False
    if not watching and recs.store.conn.execute("SELECT 1 FROM watched_files LIMIT 1").fetchone() is None:
        return  # the common case, without importing the sections module (see bench/agent_bench.py)
    if recs.store.readonly:
        return  # (the index as it was last refreshed: a read-only workspace is read as it stands)
    from dbglog.kb import sections

    report = sections.refresh(recs.store, recs.ws.root, recs.ws.config_path)
    for p in report.skipped:
        warn(f"watched doc {p} skipped (unreadable, binary or larger than "
             f"{sections.MAX_FILE_BYTES // 1_000_000} MB)")


def quoted(text: str, most: int = 80) -> str:
    """``text`` quoted for a message, its middle cut when it is long (a pasted log as a query is one line)."""
    return repr(text if len(text) <= most else text[:most // 2] + "…" + text[-(most // 2 - 1):])


REDACTED_WORD = "<redacted"  # (how a cleaned secret reads among a query's words)


def query_notes(q) -> list[str]:
    """What the query parser did with the words: typo corrections, substrings, unknown words."""
    notes = []
    for t in q.terms:
        if t.kind == "typo":
            notes.append(f"{quoted(t.raw)} -> {quoted(t.corrected)} (typo?)")
        elif t.kind == "substring":
            notes.append(f"{quoted(t.raw)} matched as a substring")
        elif t.kind == "unknown" and REDACTED_WORD not in t.raw:  # (a secret asked for is cleaned first: no news)
            notes.append(f"{quoted(t.raw)} is in no record (a match without it scores lower)")
    if q.truncated:
        notes.append("query truncated")
    return notes


# The candidates `tried` returns by default, for a person or an agent to judge: an agent judging from them found the
# right record whenever it was among them; on the studied trial rounds 5 missed it for 7 paraphrases in 289, 8 for none
TRIED_CANDIDATES = 8


def tried(recs, idea: str, *, status=None, tags=(), inv_ref=None, limit: int = TRIED_CANDIDATES, warn: Warn = _ignore,
          llm: str | None = None, model: str | None = None):
    """``search.TriedResult`` for IDEA: close prior attempts first (``.close``), then ideas and related.
    ``llm``: an OpenAI-compatible endpoint that re-judges the candidates (kb/llmjudge.py); when its
    answer is not usable the built-in judge's stands and ``warn`` says why."""
    from dbglog.kb import search

    check_text(idea, "query")
    _check_limit(limit, 100)
    if llm is not None and not llm.startswith(("http://", "https://")):
        raise DbglogError(f"--llm {llm!r}: give the endpoint's URL, e.g. http://localhost:8000/v1")
    refresh_watched(recs, warn)
    filters = search_filters(recs, status, (), tags, inv_ref, None)
    from dbglog.util.redact import clean

    # (asked as the records hold it: "HF_TOKEN=hf_..." against a record's "HF_TOKEN=<redacted>" read as another way)
    res = search.tried(recs.store.conn, clean(idea), filters=filters, limit=limit)
    if llm is not None:
        from dbglog.kb import llmjudge

        note = llmjudge.judge(res, llm, model or "default")
        if note:
            warn(note)
    return res


def _check_limit(limit, most: int) -> None:
    """The CLI's --limit range, for the MCP tools too (SQL takes LIMIT -1 as no limit at all)."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= most:
        raise DbglogError(f"--limit must be between 1 and {most}, got {limit!r}")


def search(recs, query: str, *, status=None, outcomes=(), tags=(), inv_ref=None, kinds=None, since=None,
           limit: int = 10, warn: Warn = _ignore):
    """``search.Result``: ranked hits over attempts, investigations, differences, steps, sections."""
    from dbglog.kb import search as _search

    check_text(query, "query")
    _check_limit(limit, 500)
    refresh_watched(recs, warn)
    filters = search_filters(recs, status, outcomes, tags, inv_ref, since)
    from dbglog.util.redact import clean

    # (asked as records hold it: a token searched for is echoed nowhere, and finds where it was stored redacted)
    return _search.search(recs.store.conn, clean(query), kinds=kinds or None, filters=filters, limit=limit)


# --- records -----------------------------------------------------------------------------


def environment_text() -> str:
    from dbglog.run import envinfo

    return "\n".join(envinfo.markdown_lines(envinfo.collect()))


def new_investigation(recs, title: str, *, symptom: str = "", files=(), tags=(), environment: bool = True):
    """Start an investigation (with an environment snapshot unless told not to) and make it current."""
    check_text(title, "title")
    check_text(symptom, "symptom")
    check_title_length(title, "title", "--symptom")
    env = environment_text() if environment else ""
    return recs.new(title or "", symptom=symptom, files=files, tags=tags, environment=env)


@dataclass
class RecordedAttempt:
    attempt: object  # model.Attempt
    investigation: str
    similar: list[dict]  # earlier failed/inconclusive attempts that read alike
    outcome_inferred: bool
    breaker: dict | None = None  # circuit_breaker(): the same failure N times

    def to_dict(self) -> dict:
        return self.attempt.to_dict() | {"investigation": self.investigation, "similar": self.similar,
                                         "outcome_inferred": self.outcome_inferred,
                                         "circuit_breaker": self.breaker,
                                         "next": next_commands_for_attempt(self.investigation, self.attempt,
                                                                           self.breaker)}


def similar_to_attempt(recs, inv_id: str, a) -> list[dict]:
    from dbglog.kb import search

    return search.similar_attempts(recs.store.conn, inv_id, a.number, title=a.title,
                                   hypothesis=a.hypothesis, did=a.did)


def add_attempt(recs, inv_ref=None, *, title=None, hypothesis=None, did=None, result=None, conclusion=None,
                outcome=None, runs=()) -> RecordedAttempt:
    """Record an attempt; the outcome is read from the result when not given (``outcome_inferred``)."""
    fields = {"title": title, "hypothesis": hypothesis, "did": did, "result": result, "conclusion": conclusion,
              "outcome": outcome}
    for k, v in fields.items():
        check_text(v, k)
    check_title_length(title, "attempt title", "--hypothesis, --did or --result")
    inv_id = recs.resolve(inv_ref)
    runs = [recs.store.get_run(r)["id"] for r in runs or ()]  # a mistyped run id: refused, not linked
    a = recs.add_attempt(inv_id, **{k: v or "" for k, v in fields.items() if k != "outcome"},
                         outcome=outcome or None, runs=runs)
    return RecordedAttempt(a, inv_id, similar_to_attempt(recs, inv_id, a), not outcome,
                           circuit_breaker(recs, inv_id, a))


# --- the circuit breaker: the same failure N times in one investigation -------------------------


_RUN_NOISE = None


def _result_key(text: str) -> str:
    """A result with what differs between two runs of the same failure taken out: run ids, times,
    numbers, addresses, quoting."""
    global _RUN_NOISE
    import re

    if _RUN_NOISE is None:
        _RUN_NOISE = (re.compile(r"\[run [^\]]*\]|\bafter [\d.]+ ?s\b|0x[0-9a-f]+|\d+(?:\.\d+)?"),
                      re.compile(r"[^\w]+"))
    noise, punct = _RUN_NOISE
    return " ".join(punct.sub(" ", noise.sub(" ", (text or "").lower())).split())


def _failure_of(recs, inv_id: str, a) -> tuple[str | None, str]:
    """(signature, result key) of a failed attempt: its runs' most causal signature when it has runs."""
    sig = None
    if a.runs:
        marks = ",".join("?" * len(a.runs))
        rows = recs.store.q(f"SELECT outcome, signature FROM runs WHERE id IN ({marks})", *a.runs).fetchall()
        sigs = [r["signature"] or r["outcome"] for r in rows if r["outcome"] != "pass"]
        sig = max(set(sigs), key=sigs.count) if sigs else None
    return sig, _result_key(a.result)


def _same_failure(x: tuple, y: tuple) -> bool:
    if x[0] and y[0]:
        return x[0] == y[0]
    if not x[1] or not y[1]:
        return False
    import difflib

    return x[1] == y[1] or difflib.SequenceMatcher(None, x[1], y[1]).ratio() >= 0.85


def _attempt_command(recs, a) -> str:
    """The command an attempt ran, as a shell line: its first run's argv and env, else the first
    code span / fenced line / line of what it did ("CMD" when it says none)."""
    import re
    import shlex

    if a.runs:
        row = recs.store.q("SELECT cmd, result FROM runs WHERE id = ?", a.runs[0]).fetchone()
        if row is not None:
            import json

            try:
                env = json.loads(row["result"] or "{}").get("env_overrides") or {}
            except (ValueError, AttributeError):
                env = {}
            pre = ["env", *(f"{k}={v}" for k, v in sorted(env.items()) if v is not None)] if env else []
            return shlex.join(pre + json.loads(row["cmd"]))
    did = a.did or ""
    span = re.search(r"`([^`\n]+)`", did)
    lines = [ln.strip().removeprefix("$ ") for ln in did.splitlines() if ln.strip() and not ln.strip().startswith("```")]
    return span.group(1) if span else (lines[0] if lines else "CMD")


def circuit_breaker(recs, inv_id: str, a, threshold: int | None = None) -> dict | None:
    """When attempt ``a`` is the N-th failed attempt of its investigation (since the last one that
    worked) to end with the same failure signature, or with a near-identical result: what to do
    instead of another patch — the untested key differences and a ready `dbglog bisect` line."""
    if a.outcome != "failed":
        return None
    from dbglog.util import config

    n = threshold or config.breaker_threshold(recs.ws.config_path)
    inv = recs.store.load(inv_id)
    mine = _failure_of(recs, inv_id, a)
    if not mine[0] and not mine[1]:
        return None
    same = []
    for b in sorted(inv.attempts, key=lambda x: x.number, reverse=True):
        if b.number > a.number:
            continue
        if b.outcome == "worked":
            break
        if b.outcome == "failed" and (b.number == a.number or _same_failure(mine, _failure_of(recs, inv_id, b))):
            same.append(b.number)
    if len(same) < n:
        return None
    untested = [d for d in inv.differences if d.status == "untested"]
    cmd = _attempt_command(recs, a)
    # (runs that disagree: the failure is intermittent, and a bisection of it needs --flaky, issue 29)
    flaky = " --flaky" if len({r["outcome"] == "pass" for r in _runs_of(recs, a)}) > 1 else ""
    if any(d.apply for d in untested):
        bisect = f"dbglog bisect toggles{flaky} --from-diffs -i {inv_id} -- {cmd}"
    elif untested:
        bisect = (f"dbglog diff set {shlex_quote(untested[0].factor)} --apply env:NAME  (an apply spec per row), "
                  f"then: dbglog bisect toggles{flaky} --from-diffs -i {inv_id} -- {cmd}")
    else:
        bisect = f"dbglog bisect git{flaky} --good REV --bad HEAD -i {inv_id} -- {cmd}"
    how = f"[{mine[0]}]" if mine[0] else "with the same result"
    return {"threshold": n, "count": len(same), "attempts": sorted(same), "signature": mine[0],
            "message": f"{len(same)} failed attempts ended the same way {how} (attempts "
                       f"{', '.join(map(str, sorted(same)))}): stop patching the symptom. Test the untested key "
                       "differences or bisect instead.",
            "untested_differences": [{"position": d.position, "factor": d.factor, "working": d.working,
                                      "broken": d.broken, "apply": d.apply} for d in untested],
            "bisect": bisect}


def _runs_of(recs, a) -> list[dict]:
    """The recorded runs of attempt ``a`` that are still here (a pruned run is skipped)."""
    out = []
    for rid in a.runs or []:
        try:
            out.append(recs.store.get_run(rid))
        except DbglogError:
            continue
    return out


def shlex_quote(s: str) -> str:
    import shlex

    return shlex.quote(s)


def next_commands_for_attempt(inv_id: str, a, breaker: dict | None) -> list[str]:
    """The natural next command after recording attempt ``a``."""
    if breaker:
        return [breaker["bisect"]]
    if a.outcome == "worked":
        return [f"dbglog status {inv_id} resolved --root-cause TEXT", "dbglog next add TEXT  (if it only hides the bug)"]
    return ["dbglog tried \"NEXT IDEA\"  (before the next fix)", f"dbglog next list -i {inv_id}"]


def add_difference(recs, inv_ref, factor: str, working: str, broken: str, *, status: str = "untested",
                   apply: str = "", working_label=None, broken_label=None):
    """Add a key-differences row; returns (investigation id, the row)."""
    for v, what in ((factor, "factor"), (working, "working value"), (broken, "broken value"),
                    (working_label, "column label"), (broken_label, "column label"), (apply, "apply spec")):
        check_text(v, what)
    inv_id = recs.resolve(inv_ref)
    check_apply_spec(recs, apply, factor, working, broken)
    return inv_id, recs.diff_add(inv_id, factor, working, broken, labels=(working_label, broken_label),
                                 status=status, apply=apply or "")


def check_apply_spec(recs, apply: str | None, factor: str, working: str | None, broken: str | None) -> None:
    """Refuse an apply spec `bisect toggles --from-diffs` could not use, before it is stored. A config
    file that is not there (yet, or relative to where the repro runs) is not an error here."""
    if not (apply or "").strip():
        return
    from pathlib import Path

    from dbglog.bisect.kinds import apply_spec_toggle

    try:
        apply_spec_toggle(factor or "row", apply.strip(), Path(recs.ws.root), factor=factor, working=working,
                          broken=broken)
    except DbglogError as e:
        if apply.strip().lower().startswith("config") and "no such file" in str(e):
            return
        raise DbglogError(f"bad --apply {apply.strip()!r}: {e}") from None


def set_difference(recs, inv_ref, factor: str = "", *, working=None, broken=None, status=None, apply=None,
                   working_label=None, broken_label=None):
    """Change a row (by factor name, prefix or number) or the column labels; returns (investigation, row or None)."""
    if not factor and working_label is None and broken_label is None:
        raise DbglogError("name a factor (or its number), or pass --working-label/--broken-label")
    for v, what in ((factor, "factor"), (working, "working value"), (broken, "broken value"),
                    (working_label, "column label"), (broken_label, "column label"), (apply, "apply spec")):
        check_text(v, what)
    inv_id = recs.resolve(inv_ref)
    if apply:  # the states may come from the row's columns: check against the row as it will be
        try:  # the row diff_set will change (name, case-insensitive prefix or number)
            row = recs.find_diff(recs.store.load(inv_id), factor) if factor else None
        except DbglogError:
            row = None  # no such row, or several: diff_set says so
        check_apply_spec(recs, apply, factor, working if working is not None else (row.working if row else "0"),
                         broken if broken is not None else (row.broken if row else "1"))
    return inv_id, recs.diff_set(inv_id, factor, working=working, broken=broken, status=status, apply=apply,
                                 labels=(working_label, broken_label))


def difference_notes(recs, inv_id: str, d) -> dict:
    """What a key-differences row means for `bisect toggles --from-diffs`: which side's value each
    state of the toggle applies (``toggle``: {off, on} in words, or ``toggle_error``), and the
    natural next command (``next``)."""
    out: dict = {"toggle": None, "next": []}
    if d is None:
        return out
    from dbglog.util import redact

    if redact.REDACTED in (d.working, d.broken):  # (a secret's row: its values were never stored)
        out["redacted"] = True
        out["toggle_error"] = ("its values are a secret's, stored redacted; to bisect over it, give them with "
                               "`bisect toggles --env NAME=VALUE` (kept out of logs/)")
        return out
    if d.apply.strip():
        from pathlib import Path

        from dbglog.bisect.kinds import apply_spec_toggle

        try:
            t = apply_spec_toggle(d.factor, d.apply.strip(), Path(recs.ws.root), factor=d.factor,
                                  working=d.working, broken=d.broken)
            on, off = t.states()
            out["toggle"] = {"off": off, "on": on, "off_is": "the working case's value (toggle off)",
                             "on_is": "the broken case's value (toggle on)"}
        except DbglogError as e:
            out["toggle_error"] = str(e)
    if d.status == "untested":
        out["next"] = ([f"dbglog bisect toggles --from-diffs {inv_id} -- CMD  (tests every row with an apply spec)"]
                       if d.apply.strip() else
                       [f"dbglog diff set {shlex_quote(d.factor)} --apply env:NAME  (then bisect toggles --from-diffs)",
                        f"dbglog diff set {shlex_quote(d.factor)} --status ruled-out|culprit  (once tested by hand)"])
    return out


NEXT_ACTIONS = ("list", "add", "done", "drop")


def next_steps(recs, inv_ref=None, action: str = "list", text: str | None = None, *, detail: str = "",
               position: int | None = None, attempt: int | None = None):
    """The what-to-try-next list, after adding a step (``text``) or checking one off / dropping it
    (``text``: its number or words). Returns (investigation id, the step changed or None, all steps)."""
    from dbglog.core import model

    action = model.check_choice(action, NEXT_ACTIONS, "action")
    check_text(text, "step")
    check_text(detail, "detail")
    inv_id = recs.resolve(inv_ref)
    step = None
    if action != "list" and not (text or "").strip():
        raise DbglogError(f"next steps {action}: say which step (" +
                          ("the text to add" if action == "add" else "its number or words") + ")")
    if action == "add":
        step = recs.next_add(inv_id, text, detail or "", position)
    elif action in ("done", "drop"):
        step = recs.next_mark(inv_id, text, "done" if action == "done" else "dropped",
                              attempt if action == "done" else None)
    return inv_id, step, recs.store.load(inv_id).next_steps


# --- supervised runs ------------------------------------------------------------------------


#: a repro's options unless told: the 64M cap of `dbglog run`, no live echo (a service prints nothing)
REPRO_OPTIONS = RunOptions(output_cap_bytes=REPRO_OUTPUT_CAP, echo=False)


@dataclass
class ReproRun:
    """The outcome of ``run_repro``: the run records (dicts, as ``runs show`` prints them) and, when
    recorded as an attempt, the attempt and the next steps the playbooks added."""
    runs: list[dict]
    repeat: object  # runner.RepeatResult
    repeated: bool = False  # asked for more than one run (--repeat N)
    attempt: object = None  # model.Attempt | None
    investigation: str | None = None
    advice: list = field(default_factory=list)  # model.NextStep
    breaker: dict | None = None  # circuit_breaker() of the attempt
    seen_before: dict | None = None  # what the knowledge base knows about this failure (kb/failures.recall)
    recorded_in: str | None = None  # the investigation the runs were recorded in (None: none)
    failed_after: str | None = None  # a step after the record was committed failed (a full disk): what to say

    def exit_code(self, git_bisect: bool = False, expect: str | None = None) -> int:
        if self.failed_after:  # (not the run's verdict: under git bisect, stop it rather than blame a commit)
            return 128 if git_bisect else 1
        return self.repeat.exit_code(git_bisect, expect)

    @property
    def verdict(self) -> str:
        """pass | fail | flaky | error: all runs passed, all failed alike, they disagree, none started."""
        outcomes = {r["outcome"] for r in self.runs}
        if self.repeat.flaky:
            return "flaky"
        if outcomes == {"pass"}:
            return "pass"
        if outcomes == {"error"}:
            return "error"
        return "fail"

    def to_dict(self) -> dict:
        """`dbglog run --json`: one run record, or {runs, histogram, flaky}; plus attempt and advice."""
        data = self.runs[0] if not self.repeated else \
            {"runs": self.runs, "histogram": self.repeat.histogram_rows(), "flaky": self.repeat.flaky}
        if self.attempt is not None:
            data = data | {"attempt": self.attempt.to_dict() | {"investigation": self.investigation},
                           "advice": [s.to_dict() for s in self.advice], "circuit_breaker": self.breaker}
        if self.seen_before is not None:
            data = data | {"seen_before": self.seen_before}
        if self.failed_after:
            data = data | {"error": self.failed_after}
        return data | {"investigation": self.recorded_in}


def check_attempt_under_git_bisect(cwd: str) -> None:
    """``run --git-bisect-exit --attempt`` while git bisects a repository that tracks ``logs/``: each step would write
    the attempt into the version of logs/ git checked out (the database taking that old version in first, and the
    next checkout refusing the changed file). Refused before anything is written."""
    from dbglog.bisect import history

    def git(*args: str) -> str:
        try:
            return history.git(cwd, *args, check=False).strip()
        except OSError:  # (no git at all: nothing is being bisected)
            return ""

    root = git("rev-parse", "--show-toplevel")
    start = git("rev-parse", "--git-path", "BISECT_START")
    if not root or not start or not os.path.exists(os.path.join(cwd, start)) or not git("ls-files", "--", f"{root}/logs"):
        return
    raise DbglogError("--attempt writes logs/, which git tracks here and git bisect checks out at each step (an old "
                      "version would be written over and the next checkout refused): drop --attempt (each run is "
                      "still recorded), or use `dbglog bisect git`, which works in a checkout of its own")


def check_run(cmd, opts: RunOptions) -> list[str]:
    """The command as an argument list (a leading ``--`` dropped), with ``opts`` checked
    (``RunOptions.validate``): bad input refused in one line before anything runs."""
    cmd = [str(c) for c in cmd or ()]
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise DbglogError("no command: put the repro after --, e.g. dbglog run --timeout 60 -- python repro.py")
    opts.validate()
    for c in cmd:
        check_text(c, "command")
        if "\x00" in c:  # (only an agent can send one: exec would fail with an internal error)
            raise DbglogError("the command holds a NUL byte, which no program argument can carry")
    if not cmd[0].strip():
        raise DbglogError("the command is empty: put the repro after --, e.g. dbglog run -- python repro.py")
    if opts.server is not None:
        check_text(opts.server, "server command")
        check_text(opts.ready, "readiness check")
    return cmd


def check_runnable(program: str, *, cwd=None, env: dict | None = None, what: str = "command") -> None:
    """Refuse, before anything runs or is recorded, a program that cannot be started: not on PATH
    (the run's own PATH when it sets one), no such file, a directory, not executable. One line."""
    import shutil

    cwd = str(cwd or os.getcwd())
    path = (env or {}).get("PATH") or os.environ.get("PATH", os.defpath)
    if os.sep in program:
        full = program if os.path.isabs(program) else os.path.join(cwd, program)
        if not os.path.exists(full):
            raise DbglogError(f"{what} not found: {program} (no such file)")
        if os.path.isdir(full):
            raise DbglogError(f"{what} {program} is a directory, not a program")
        if not os.access(full, os.X_OK):
            raise DbglogError(f"{what} {program} is not executable (chmod +x {program}, or run it through its "
                              "interpreter)")
        return
    if shutil.which(program, path=path) is None:
        raise DbglogError(f"{what} not found: {program} (not on PATH; give its path or install it)")


def check_env(env: dict | None) -> dict:
    """NAME -> value (None: unset) for a run; a name no process could have is refused (``A=B``, empty,
    whitespace or control characters), so ``--unset A=B`` is not silently a no-op."""
    for k, v in (env or {}).items():
        if not isinstance(k, str) or not k or "=" in k or any(c.isspace() or ord(c) < 32 or c == "\x7f" for c in k):
            what = "--unset" if v is None else "--env"
            raise DbglogError(f"bad {what} name {k!r}: a variable name has no '=', spaces or control characters")
        check_text(k, "variable name")
        if v is not None:
            check_text(str(v), f"value of {k}")
            if "\x00" in str(v):
                raise DbglogError(f"the value of {k} holds a NUL byte, which no environment variable can carry")
    return dict(env or {})


def run_repro(recs, cmd, opts: RunOptions = REPRO_OPTIONS, *, cwd=None, env=None, expect: str | None = None,
              attempt_title: str | None = None, hypothesis: str = "", inv_ref=None, refuse_missing: bool = True,
              warn: Warn = _ignore, baseline: int = 0) -> ReproRun:
    """Run CMD (an argument list) under supervision as ``opts`` says, store the run(s), and with
    ``attempt_title`` record them as an attempt with the evidence quoted and the playbooks' advice added
    as next steps.

    ``env``: NAME -> value for the run (None unsets NAME). ``opts.slurm``: srun's arguments; each run is
    then a Slurm allocation of its own (dbglog/run/slurm.py). ``refuse_missing``: a program that cannot
    start is refused up front (exit 2, nothing recorded); off for ``git bisect run``, where a commit
    that did not build is a skipped step (125), not an error that stops the bisection. ``baseline``: that
    many runs first, without ``env``'s changes, recorded as the investigation's runs; the attempt is judged
    against their failure rate (``kb/rates.py``)."""
    from dbglog.diagnose import signatures
    from dbglog.run import runner

    recs.store.refuse_if_readonly()  # (a read-only workspace could not record the run: nothing runs)
    cmd = check_run(cmd, opts)
    _check_attempt_words(attempt_title, hypothesis)
    env = check_env(env)
    launch = {}
    if cwd is not None and not os.path.isdir(cwd):
        raise DbglogError(f"working directory {cwd} does not exist")
    run_env = {k: v for k, v in env.items() if v is not None}
    if opts.slurm is None and refuse_missing:  # (with --slurm the program runs on the node: only srun must be here)
        check_runnable(cmd[0], cwd=cwd, env=run_env)
    if opts.server is not None:
        from dbglog.run import serve

        check_runnable(serve.parse_server_cmd(opts.server)[0], cwd=cwd, env=run_env, what="server command")
    if opts.ready is not None:
        from dbglog.run import serve

        if not serve.is_url(opts.ready):
            import shlex

            words = shlex.split(opts.ready)
            if words:
                check_runnable(words[0], cwd=cwd, env=run_env, what="readiness command")
    if opts.slurm is not None:
        import shlex

        from dbglog.run import slurm as slurm_mode

        import shutil

        if shutil.which("srun", path=run_env.get("PATH") or os.environ.get("PATH", os.defpath)) is None:
            raise DbglogError("--slurm needs srun, which is not on PATH here: run dbglog where Slurm's client "
                              "commands are (a login node), or drop --slurm")
        cmd = shlex.split(opts.slurm_launcher()) + cmd  # recorded as it ran, minus the per-run job name
        launch = {"launch": slurm_mode.Step()}
    sigs = signatures.all_signatures(recs.ws.config_path)
    signatures.check_target(expect, sigs, runner.OUTCOMES)  # a typo would make every failure "different"
    rules = _before_recording(recs, inv_ref, attempt_title is not None)
    base = _baseline_first(recs, cmd, opts, baseline, cwd, sigs, launch, inv_ref) if baseline else None
    run_id = runner.new_run_id()
    run_dir = recs.ws.runs_dir / run_id
    one = None
    if opts.server is not None:
        from dbglog.run import serve

        one = serve.run_server_client
    did = ""
    if attempt_title is not None:  # taken before the run: the tree under test, not what the run leaves behind
        from dbglog.kb import story

        did = story.did_text(cmd, env, cwd or os.getcwd(), run_dir, recs.ws.root,
                             server={"server": opts.server, "ready": opts.ready, "ready_timeout": opts.ready_timeout})
    try:
        rep = runner.run_repeated(cmd, opts, run_dir=run_dir, run_id=run_id if opts.repeat == 1 else None,
                                  cwd=cwd or os.getcwd(), env_overrides=dict(env or {}), signatures=sigs,
                                  ladder=opts.ladder(), runner=one, live_dir=live_dir(recs), **launch)
    except runner.Interrupted as e:
        e.did = did  # the interrupted attempt tells the same story (record_interrupted)
        raise
    except BaseException:
        _drop_unrecorded(run_dir)
        raise
    return _record_repro(recs, rep, run_dir, opts, expect, attempt_title, hypothesis, inv_ref, did, rules, warn,
                         base)


def _baseline_first(recs, cmd, opts: RunOptions, n: int, cwd, sigs, launch, inv_ref) -> list[dict]:
    """``run --baseline N``: N runs of the command as it is, without the attempt's --env/--unset,
    recorded in the investigation (no attempt) before the attempt runs."""
    from dataclasses import replace

    from dbglog.run import runner

    if n < 1:
        raise DbglogError(f"--baseline must be at least 1, got {n}")
    one = None
    if opts.server is not None:
        from dbglog.run import serve

        one = serve.run_server_client
    run_dir = recs.ws.runs_dir / runner.new_run_id()
    bopts = replace(opts, repeat=n, until_fail=False)
    rep = runner.run_repeated(cmd, bopts, run_dir=run_dir, cwd=cwd or os.getcwd(), env_overrides={},
                              signatures=sigs, ladder=None, runner=one, **launch)
    dicts = [r.to_dict() for r in rep.results]
    dirs = [str(run_dir)] if n == 1 else [str(run_dir / f"{i:03d}") for i in range(1, len(dicts) + 1)]
    recs.record_runs(dicts, dirs)
    inv_id = recs.resolve(inv_ref)
    with recs.store.write():
        for d in dicts:
            recs.store.q("UPDATE runs SET investigation_id = ? WHERE id = ?", inv_id, d["id"])
    return dicts


def _check_attempt_words(attempt_title: str | None, hypothesis: str) -> None:
    check_text(attempt_title, "attempt title")
    check_text(hypothesis, "hypothesis")
    if attempt_title is not None and "\n" in attempt_title.strip().replace("\r", "\n"):
        raise DbglogError("the attempt title must be one line")  # (as for attempt add: before the run)
    check_title_length(attempt_title, "attempt title", "--hypothesis")


def hang_hint(recs, d: dict) -> str | None:
    """For a run that hung with no thread stacks captured and was not recorded as an attempt: the run that shows
    where it waits, the advice an attempt would have recorded as its next step (the user's rules first); None
    otherwise, or when the advice cannot be read (a hint never fails the run)."""
    if d.get("outcome") != "hang":
        return None
    from dbglog.run import advice

    try:
        rules = advice.load(recs.ws.config_path)
    except DbglogError:
        return None
    step = next((s["step"] for s in advice.advise(advice.Context(d), rules) if s["id"] == "hang-capture-the-stacks"),
                None)
    return f"{step[0].lower()}{step[1:]}" if step else None


def _before_recording(recs, inv_ref, as_attempt: bool = True):
    """What recording the run as an attempt needs, checked before the run: the investigation, a writable
    logs/, a readable [[advice]] table (returned: the playbooks' rules). A plain run needs only the
    investigation it names, if it names one (None returned)."""
    from dbglog.run import advice
    from dbglog.util import fserrors

    if not as_attempt:
        if inv_ref is not None:
            recs.resolve(inv_ref)  # a plain run for a named investigation: a wrong name is said before the run
        return None
    recs.resolve(inv_ref)  # no investigation to record into: say so before the run, not after
    fserrors.check_writable(recs.ws.logs_dir, recs.ws.runs_dir.parent)  # (read-only logs/: nothing runs)
    return advice.load(recs.ws.config_path)  # a broken [[advice]] table stops us before the run


def _record_repro(recs, rep, run_dir, opts: RunOptions, expect, attempt_title, hypothesis, inv_ref, did, rules,
                  warn, baseline: list[dict] | None = None) -> ReproRun:
    """Store the runs of ``run_repro`` (and the attempt, its evidence and advice); none left on a failure."""
    from dbglog.run import runner

    runner.post_phase("recording the run")
    dicts = [r.to_dict() | {"expect_matched": runner.matches_expect(r, expect) if expect else None}
             for r in rep.results]
    repeat = opts.repeat
    dirs = [str(run_dir)] if repeat == 1 else [str(run_dir / f"{i:03d}") for i in range(1, len(dicts) + 1)]
    try:
        a = recs.record_runs(dicts, dirs, attempt_title=attempt_title, inv_ref=inv_ref, hypothesis=hypothesis,
                             did=did, baseline=baseline)
    except BaseException:
        _left_live(recs, dicts)
        _drop_unrecorded(run_dir)
        raise
    _left_live(recs, dicts)
    out = ReproRun(dicts, rep, repeated=repeat > 1)
    try:
        return _recorded(recs, out, a, inv_ref, f"{attempt_title}\n{hypothesis}\n{a.did}" if a else "", rules, warn)
    except Exception as e:  # noqa: BLE001 - a machine failure only; anything else is raised again
        return _failed_after_recording(recs, out, a, inv_ref, e)


def _failed_after_recording(recs, out: ReproRun, a, inv_ref, e: Exception) -> ReproRun:
    """The runs (and the attempt) were committed; a step after them (fingerprints, evidence, advice)
    hit a machine failure such as a full disk. Saying "nothing was changed" would be false, and a retry
    would record the run twice: the run is shown as recorded, with what failed after it."""
    from dbglog.util import fserrors

    line = fserrors.describe(e)
    if line is None:
        raise e
    if a is not None and out.attempt is None:
        out.attempt, out.investigation = a, recs.resolve(inv_ref)
    what = f"recorded as attempt {a.number} of {out.investigation}" if a is not None else "recorded"
    out.failed_after = (f"{line.split(': ')[0].removesuffix('; nothing was changed')}: the run was {what}, but "
                        "the steps after it (fingerprints, evidence, advice) were not saved; do not run it again to record "
                        "it")
    return out


def _recorded(recs, out: ReproRun, a, inv_ref, text: str, rules, warn: Warn) -> ReproRun:
    """After the runs are stored: their fingerprints; with an attempt (``a``) its evidence, advice and
    circuit breaker; then what the knowledge base knows about the failure (issue 27)."""
    import shlex

    fps = index_failures(recs, out.runs, warn)
    row = recs.store.q("SELECT investigation_id FROM runs WHERE id = ?", out.runs[0]["id"]).fetchone() \
        if out.runs else None
    out.recorded_in = row[0] if row else None
    if a is not None:
        out.investigation = recs.resolve(inv_ref)
        out.attempt, out.advice = evidence_and_advice(recs, out.investigation, a, out.runs, text, rules, warn,
                                                      failure_lines=[fp.mirror_line() for fp in dict.fromkeys(fps)])
        out.breaker = circuit_breaker(recs, out.investigation, out.attempt)
    if fps:
        # (a plain run is recorded in the current investigation: that one's own runs are no "seen before")
        out.seen_before = seen_before(recs, fps[0], exclude_runs=[d["id"] for d in out.runs],
                                      current_inv=out.investigation or out.recorded_in,
                                      cmd=shlex.join(out.runs[0]["cmd"]), warn=warn)
    return out


def live_dir(recs):
    """The workspace's registry of supervised runs (see ``proctree.live_enter``)."""
    return recs.ws.dir / "live"


def _left_live(recs, dicts) -> None:
    from dbglog.run import proctree

    for d in dicts:
        proctree.live_leave(live_dir(recs) / f"{d['id']}.json")


def reap_orphaned_runs(recs, warn: Warn = _ignore) -> list[str]:
    """Runs whose dbglog was killed (kill -9, the OOM killer) while it supervised them: what is left of
    each is stopped and the run recorded as interrupted, with one warning line each. One scandir of an
    empty directory when there are none. Returns the run ids."""
    if recs.store.readonly:
        return []
    try:  # (before importing proctree, its threading and signal: ~5 ms of every command that has no runs)
        with os.scandir(live_dir(recs)) as entries:
            if not any(e.name.endswith(".json") and not e.name.startswith(".") for e in entries):
                return []
    except OSError:
        return []
    from pathlib import Path

    from dbglog.run import proctree

    found = proctree.orphaned_runs(live_dir(recs))
    done = []
    for data in found:
        from dbglog.run import runner

        n = proctree.stopped_processes(data)
        left = proctree.stop_orphan(data)
        run = runner.recover_orphan(data)
        try:
            if recs.store.q("SELECT 1 FROM runs WHERE id = ?", run["id"]).fetchone() is None:
                recs.record_runs([run], [str(data.get("run_dir"))])
        except DbglogError as e:
            warn(f"could not record the orphaned run {run['id']}: {e}")
            continue
        finally:
            proctree.live_leave(Path(data["_entry"]))
        what = f"stopped {n} process(es) it left" if n else "nothing of it was still running"
        if left:
            what += f"; {len(left)} survived SIGKILL"
        warn(f"run {run['id']} was supervised by a dbglog that was killed (pid {data.get('supervisor')}): "
             f"{what}; recorded as interrupted (`dbglog runs show {run['id']}`)")
        done.append(run["id"])
    return done


def index_failures(recs, dicts: list[dict], warn: Warn = _ignore) -> list:
    """The fingerprints of the runs just recorded, in order, passes left out (kb/failures.py,
    dbglog/diagnose/fingerprint.py). Computed here, stored by the refresh of ``seen_before`` in its one
    transaction; a failure here is a warning, never the run's verdict."""
    from dbglog.diagnose.fingerprint import fingerprint_run
    from dbglog.kb.failures import read_output

    try:
        fps = [fingerprint_run(d, read_output(d)) for d in dicts]
    except Exception as e:  # noqa: BLE001 - the run's verdict stands whatever happens here
        warn(f"the failure could not be fingerprinted: {e}")
        return []
    return [fp for fp in fps if fp is not None]


def seen_before(recs, fp, *, exclude_runs=(), current_inv: str | None = None, cmd: str | None = None,
                warn: Warn = _ignore) -> dict | None:
    """What the knowledge base knows about the fingerprint ``fp`` (issue 27), with its text lines
    (``lines``: the block `dbglog run` prints under its verdict); None when it could not be looked up."""
    from dbglog.kb import failures

    try:
        failures.refresh(recs.store, _signature_catalog(recs))
        block = failures.recall(recs.store, fp, exclude_runs=exclude_runs, current_inv=current_inv, cmd=cmd)
    except Exception as e:  # noqa: BLE001 - the run's verdict stands whatever happens here
        warn(f"what the knowledge base knows about this failure could not be looked up: {e}")
        return None
    return block | {"lines": failures.render(block)}


def bisect_seen_before(recs, result: dict, warn: Warn = _ignore) -> dict | None:
    """The seen-before block of a bisection's first bad verdict (``failures.bisection_recall``: the
    same block the live progress printed under that verdict); None when no step was bad."""
    import shlex

    from dbglog.kb import failures

    sid = result.get("session")
    if not sid:
        return None
    cmd = result.get("command")
    try:
        return failures.bisection_recall(recs.store, sid, lambda: _signature_catalog(recs),
                                         current_inv=result.get("investigation"),
                                         cmd=shlex.join(cmd) if isinstance(cmd, list) else cmd)
    except Exception as e:  # noqa: BLE001 - the bisection's answer stands whatever happens here
        warn(f"what the knowledge base knows about this failure could not be looked up: {e}")
        return None


def _signature_catalog(recs):
    from dbglog.run import signatures

    try:
        return signatures.all_signatures(recs.ws.config_path)
    except DbglogError:  # a broken [[signatures]] table: the built-in catalog reads the records
        return None


def _drop_unrecorded(run_dir) -> None:
    """A run that could not be recorded (a full disk, most often) leaves no folder behind: the error says
    nothing was changed, and its partial output would only hold on to the space that ran out."""
    import shutil

    shutil.rmtree(run_dir, ignore_errors=True)


def record_interrupted(recs, e, cmd, *, attempt_title: str | None = None, hypothesis: str = "", inv_ref=None):
    """Record the runs of a supervised run stopped by Ctrl-C, SIGTERM or SIGHUP (``runner.Interrupted``
    from ``run_repro``; the last run "interrupted by SIGTERM"), with ``attempt_title`` as an attempt,
    or the runs alone when there is no investigation to record it in. Returns (run dicts, attempt)."""
    import shlex
    from pathlib import Path

    dicts = [r.to_dict() | {"interrupted": True} for r in e.results if r is not None]
    dirs = [str(Path(d["paths"].get("output", ".")).parent) for d in dicts]  # each run's own folder
    a = None
    if dicts:
        try:
            a = recs.record_runs(dicts, dirs, attempt_title=attempt_title, inv_ref=inv_ref, hypothesis=hypothesis,
                                 did=getattr(e, "did", "") or shlex.join(cmd))
        except DbglogError:  # no investigation to record the attempt in: the runs at least
            recs.record_runs(dicts, dirs)
    _left_live(recs, dicts)
    return dicts, a


def evidence_and_advice(recs, inv_id: str, a, dicts: list[dict], text: str, rules, warn: Warn = _ignore,
                        failure_lines=()):
    """Quote the runs' evidence in the attempt they were recorded as, and add the playbooks' advice
    for them to the investigation's next steps (once per advice: see dbglog/run/advice.py).
    ``failure_lines``: the runs' fingerprints as the mirror carries them (runs stay local: a
    teammate's clone matches its own failures against these lines)."""
    from dbglog.diagnose import evidence
    from dbglog.run import advice

    lines = evidence.summary_lines([e for d in dicts for e in d.get("evidence") or []])
    if lines or failure_lines:
        quoted = "\n".join([f"- evidence: {ln.strip()[:300]}" for ln in lines]
                           + [f"- {ln[:300]}" for ln in failure_lines])
        a = recs.edit_attempt(inv_id, a.number, result=f"{a.result}\n{quoted}")
    ids = {d["id"] for d in dicts}
    history = [r for r in recs.store.runs(500) if r.get("investigation") == inv_id and r["id"] not in ids]
    steps, seen = [], set()
    said: list[str] = []
    for d in dicts:
        ctx = advice.Context(run=d, text=text, history=history)
        for s in advice.advise(ctx, rules):
            if s["id"] not in seen:
                seen.add(s["id"])
                steps.append(s)
        for w in ctx.warnings:
            if w not in said:
                said.append(w)
                warn(w)
    if "synchronize-is-a-workaround" in seen and not a.conclusion:
        a = recs.edit_attempt(inv_id, a.number, conclusion="Workaround, not a fix: the added synchronize() hides "
                                                           "a race (see next steps).")
    return a, advice.apply_to_investigation(recs, inv_id, steps)


# --- bisection -------------------------------------------------------------------------------


# --- look up (the read-only commands: list, show, attempt/diff/next list, runs, doctor) -----------------


def investigations(recs, status: str | None = None) -> list[dict]:
    """Every investigation (or those with ``status``), most recently updated first; ``current`` marks
    the one commands act on by default."""
    rows = recs.store.summaries(status)
    cur = recs.current()
    for r in rows:
        r["current"] = r["id"] == cur
    return rows


def investigation(recs, ref: str | None = None):
    """One investigation (id, id prefix, title words; default: the current one), loaded whole."""
    return recs.store.load(recs.resolve(ref))


def shown(inv):
    """An investigation as `show` presents it: without the sections import keeps only for its bookkeeping."""
    import copy

    from dbglog.core.model import BOOKKEEPING_SECTIONS

    out = copy.copy(inv)
    out.sections = [s for s in inv.sections if s.heading not in BOOKKEEPING_SECTIONS]
    return out


def recent_runs(recs, limit: int = 20) -> list[dict]:
    return recs.store.runs(limit)


def run_record(recs, ref: str) -> dict:
    return recs.store.get_run(ref)


def failure_list(recs, limit: int = 50) -> list[dict]:
    """`dbglog failures`: the fingerprints seen here (brought up to date with runs and records first)."""
    from dbglog.kb import failures

    failures.refresh(recs.store, _signature_catalog(recs))
    return failures.listing(recs.store, limit)


def failure_show(recs, ref: str) -> dict:
    """`dbglog failures show FP`: one fingerprint's runs and records."""
    from dbglog.kb import failures

    failures.refresh(recs.store, _signature_catalog(recs))
    return failures.show(recs.store, ref)


def damaged(store) -> str:
    """What SQLite's own check finds wrong in the database's pages ("" when nothing)."""
    import sqlite3

    try:
        found = [r[0] for r in store.q("PRAGMA quick_check(3)").fetchall()]
    except sqlite3.DatabaseError as e:
        return str(e)
    return "" if found == ["ok"] else "; ".join(found)


def doctor(recs) -> list[dict]:
    """What disagrees between logs/ and the database (empty: healthy)."""
    from dbglog.bisect.session import secret_files
    from dbglog.kb.sync import doctor as check

    broken = damaged(recs.store)
    if broken:  # (nothing else can be trusted: every other check reads those pages)
        return [{"kind": "damaged-database", "path": os.path.relpath(recs.store.path, recs.ws.root),
                 "message": f"{broken[:200]}; `dbglog reindex --force` sets it aside and rebuilds it from logs/"}]
    problems = check(recs.store, recs.ws)
    for f in secret_files(recs.store):  # (issue 30: a token kept on disk after it was needed)
        rel = os.path.relpath(f["path"], recs.ws.root)
        if f["needed"]:
            why = (f"holds the real secrets bisection {f['session']} ({f['status']}) reruns with; "
                   f"`dbglog bisect abort {f['session']}` removes it when it is not to be resumed")
        else:
            why = (f"holds the real secrets of bisection {f['session']} ({f['status']}), which nothing needs any "
                   "more; `dbglog runs prune` removes it")
        problems.append({"kind": "secrets-left", "path": rel, "message": why})
    problems += _config_problems(recs)
    return problems


def _config_problems(recs) -> list[dict]:
    """.dbglog/config.toml that every run (and signature command) would refuse: it does not parse, or a user
    signature in it is no valid one. (doctor said healthy while `dbglog run` refused to start.)"""
    from dbglog.diagnose import signatures

    if not recs.ws.config_path.exists():
        return []
    try:
        signatures.all_signatures(recs.ws.config_path)
    except DbglogError as e:
        return [{"kind": "bad-config", "path": os.path.relpath(recs.ws.config_path, recs.ws.root),
                 "message": f"{str(e)[:300]}; every run refuses to start until it is fixed"}]
    return []


def bisect_session(recs, ref: str | None = None) -> dict:
    """A bisection's session row (default: the latest)."""
    from dbglog.bisect.session import SessionDB

    return SessionDB(recs.store).get(ref)


def bisect_log(recs, ref: str | None = None) -> dict:
    """Every step of a bisection: key, verdict, why, source (run or cache), runs."""
    from dbglog.bisect.session import SessionDB

    s = bisect_session(recs, ref)
    return {"id": s["id"], "kind": s["kind"], "status": s["status"],
            "steps": [t.to_dict() for t in SessionDB(recs.store).trials(s["id"])]}


def bisect_resume(recs, ref: str | None = None, *, max_steps: int | None = None, progress: bool = True) -> dict:
    """Continue an interrupted bisection (default: the latest); finished steps are not re-run.
    ``max_steps``: a new budget of commits tried, for git bisections."""
    from dbglog.bisect import lifecycle
    from dbglog.bisect.drivers import driver
    from dbglog.bisect.session import SessionDB
    from dbglog.bisect.spec import HistorySpec

    s = bisect_session(recs, ref)
    if s["status"] == "aborted":
        raise DbglogError(f"bisection {s['id']} was aborted; start a new one")
    if max_steps is not None:
        if s["kind"] != "git" or max_steps < 1:
            raise DbglogError("--max-steps takes a number >= 1 and applies to git bisections")
        spec = HistorySpec.from_stored(s["spec"])
        spec.max_steps = max_steps
        s["spec"] = spec.to_stored()
        SessionDB(recs.store).update_spec(s["id"], s["spec"])
    lifecycle.claim(recs, s["id"])  # refused while its driver lives; a killed driver's leftovers stopped
    return driver(s["kind"]).resume(recs, s, progress=progress)


def bisect_status(recs, ref: str | None = None) -> dict:
    """Where a bisection stands (default: the latest): the session and its driver's description."""
    from dbglog.bisect.drivers import driver
    from dbglog.bisect.session import SessionDB

    s = SessionDB(recs.store).get(ref)
    info = {"id": s["id"], "kind": s["kind"], "status": s["status"], "investigation": s["investigation"],
            "created": s["created"], "updated": s["updated"], "result": s["result"]}
    return info | driver(s["kind"]).describe(recs, s)


def classify_log(src, *, config_path=None, save_dir: str | None = None) -> dict:
    """What a log says (``src``: bytes, or a binary file read in one pass with bounded memory): the
    most causal failure signature (``signature``), the last kernel-API call (``kernel_api``), the
    facts of debugger dumps and kernel-API logs (``evidence``, files saved beside the log in
    ``save_dir``) and ``warnings`` (a user pattern out of time)."""
    import io

    from dbglog.diagnose import evidence, signatures, stream

    if isinstance(src, (bytes, bytearray)):
        src = io.BytesIO(bytes(src))
    sc = stream.scan(src, signatures.all_signatures(config_path))
    m, api, data = sc.match, sc.kernel_api, sc.data  # (data: the log, or the lines around its failure)
    # Evidence parsers on big text only when the signature points at a dump (keeps 100 MB fast).
    dump_entries = {"rocm.wave_stop", "cuda.exception", "gpu.coredump_written", "gdb.signal"}
    dumpy = m is not None and (m.signature in dump_entries or any(
        getattr(signatures.describe(o), "name", None) in dump_entries for o in m.others))
    ev = evidence.extract(data, config_path=config_path, run_tools=False,
                          save_dirs=[save_dir] if save_dir else ()) if len(data) <= (16 << 20) or dumpy else []
    fp = None
    if m is not None:  # (the match is at hand: the fingerprint reads the lines around it, no second scan)
        from dbglog.diagnose import fingerprint

        text = data.decode("utf-8", "replace")
        fp = fingerprint.build(m.name, [t for _, t in m.key_lines], text.splitlines(), m.line_no - 1 - sc.data_line, ev)
    return {"signature": m.to_dict() if m else None, "kernel_api": api.to_dict() if api else None,
            "evidence": ev, "warnings": sc.warnings, "fingerprint": fp.to_dict() if fp else None}


# --- workspace upkeep (init, sync, reindex, export) -----------------------------------------------


def init_workspace() -> dict:
    """Create (or re-initialize) the workspace that applies here (one in a directory above, else at the git
    root or here), take in the logs/ that came with a fresh clone, and (re)point git's merge driver at this
    dbglog."""
    from dbglog.util import workspace
    from dbglog.kb.merge import configure_git
    from dbglog.kb.records import Records

    ws = workspace.find()
    existed = ws.exists
    recs = Records(ws, create=True)
    recs.store.refuse_if_readonly()  # (it would point git's merge driver at this dbglog, and sync)
    report = recs.sync()  # a fresh clone: take in the logs/ that came with it
    recs.close()
    git = configure_git(ws.root, ws.logs_dir, ws.dir)  # (re)point git's merge driver at this dbglog
    ws.upgrade_gitignore()  # an older dbglog's .gitignore showed as untracked
    return {"workspace": str(ws.dir), "logs": str(ws.logs_dir), "created": not existed, "git_merge_driver": git,
            "imported": report.added + report.imported}


def sync_workspace(recs, resolve=(), prune: bool = False):
    """Take in hand edits of logs/ now; ``resolve``: files (paths as the user gave them) to take as
    the truth after a conflict merged by hand. Returns the sync report."""
    rels = set()
    for p in resolve:
        rel = os.path.relpath(os.path.abspath(p), recs.ws.root)
        if rel.startswith(".."):
            raise DbglogError(f"{p} is not inside the workspace {recs.ws.root}")
        logs = os.path.relpath(recs.ws.logs_dir, recs.ws.root)
        if os.path.dirname(rel) != logs or not rel.endswith(".md") or not os.path.isfile(p):
            # (a typo took nothing as the truth and said so with exit 0)
            raise DbglogError(f"--resolve {p}: no such investigation file; give the merged file, e.g. "
                              f"`dbglog sync --resolve {logs}/NAME.md`")
        rels.add(rel)
    return recs.sync(resolve=rels, force=True, prune=prune)


def reindex_workspace(force: bool = False) -> dict:
    """Rebuild the database from logs/ alone; with ``force`` an unreadable database is set aside first."""
    from dbglog.util import workspace
    from dbglog.util.fserrors import FilesystemError
    from dbglog.kb.records import Records
    from dbglog.kb.sync import reindex, set_aside_database

    ws = workspace.find()
    try:
        recs = Records(ws)
    except DbglogError as e:
        if isinstance(e, FilesystemError) or not (force and ws.exists and ws.db_path.exists()):
            raise  # a full disk is no reason to set a healthy database aside
        set_aside_database(ws)
        recs = Records(ws)
    if force and damaged(recs.store):  # (its header reads, its pages do not: set aside as an unreadable one is)
        recs.close()
        set_aside_database(ws)
        recs = Records(ws)
    from dbglog.kb import failures

    with recs.store.write():
        out = reindex(recs.store, recs.ws, force=force)
        failures.rebuild(recs.store, _signature_catalog(recs))  # fingerprints from runs and the mirror again
        return out


def export_all(recs) -> list[str]:
    """Re-render every investigation's markdown file; the paths written, relative to the workspace."""
    paths = []
    with recs.store.write():
        for inv_id in recs.store.ids():
            paths.append(str(recs.publish(inv_id).relative_to(recs.ws.root)))
    return paths


# --- rerun: a recorded attempt or run, again, compared with the original's rate ---------------


def rerun_source(recs, ref: str, inv_ref=None) -> tuple[str, list[dict]]:
    """(what it is, its run records) for ``ref``: an attempt number of the investigation
    (``3``), or a run id (or an unambiguous prefix)."""
    ref = ref.strip()
    if ref.isdigit():
        inv_id = recs.resolve(inv_ref)
        a = recs.store.get_attempt(inv_id, int(ref))
        if not a.runs:
            raise DbglogError(f"attempt {ref} of {inv_id} records no run (it was not made with `dbglog run`): "
                              "nothing to run again")
        return f"attempt {a.number} of {inv_id}", [recs.store.get_run(r) for r in a.runs]
    run = recs.store.get_run(ref)
    return f"run {run['id']}", [run]


def rerun_options(run: dict, repeat: int | None) -> tuple[list[str], RunOptions, dict, str]:
    """The recorded run as it was typed: (cmd, options, env, cwd). A run recorded with its options
    (``options``, ``RunOptions.record``) gets them all; an older record what it kept beside the outcome."""
    import shlex

    kept = RunOptions.recorded(run["options"]) if isinstance(run.get("options"), dict) else _older_options(run)
    cmd = list(run["cmd"])
    if kept.get("slurm") is not None:  # recorded with srun's words in front: run_repro puts them there again
        words = shlex.split(RunOptions(slurm=kept["slurm"]).slurm_launcher())
        if cmd[:len(words)] == words:
            cmd = cmd[len(words):]
        else:
            kept["slurm"] = None
    opts = RunOptions(**({"output_cap_bytes": REPRO_OUTPUT_CAP} | kept | {"repeat": repeat or 1, "echo": False}))
    return cmd, opts, dict(run.get("env_overrides") or {}), run.get("cwd") or os.getcwd()


def _older_options(run: dict) -> dict:
    """The options a run recorded before its ``options`` were kept can be read from: its timeout, idle
    timeout (when it fired), server and readiness, core dumps."""
    import shlex

    srv = run.get("server") or {}
    server = srv.get("cmd")
    return {"timeout": run.get("timeout"), "idle_timeout": (run.get("idle") or {}).get("after_s"),
            "server": shlex.join(server) if isinstance(server, list) else server, "ready": srv.get("ready"),
            "ready_timeout": srv.get("ready_timeout") or 120.0,
            "core_dumps": "core_limit" in (run.get("preflight") or {}) and run["preflight"]["core_limit"] is None}


def _unredacted(what: str, cmd: list[str], opts: RunOptions, env: dict, warn: Warn) -> dict:
    """The recorded environment with each value the record redacted taken from this environment. A
    redacted word anywhere else (the command, the server, a hang command) is refused: the placeholder
    would run in the secret's place, and the rate compared as if it had tested something."""
    from dbglog.util.redact import REDACTED

    for where, value in [("command", cmd)] + [(f"--{k.replace('_', '-')}", v) for k, v in opts.record().items()]:
        words = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        if any(REDACTED in str(w) for w in words):
            raise DbglogError(f"{what}'s {where} held a secret, recorded as {REDACTED}: it cannot run again as "
                              "recorded; run it with `dbglog run`, passing the secret in a variable (--env NAME=VALUE)")
    out = {}
    for k, v in env.items():
        if isinstance(v, str) and REDACTED in v:
            if k not in os.environ:
                raise DbglogError(f"{what} ran with {k} set to a secret, recorded as {REDACTED}: export {k} "
                                  "(rerun takes it from the environment) and run `dbglog rerun` again")
            warn(f"{k}: its value was redacted in the record; this run takes it from the environment")
            v = os.environ[k]
        out[k] = v
    return out


def rerun(recs, ref: str, *, repeat: int | None = None, attempt_title: str | None = None, inv_ref=None,
          warn: Warn = _ignore) -> dict:
    """`dbglog rerun REF`: run a recorded attempt (all its runs' count) or run again, exactly as
    recorded (command, directory, environment, the run's options), and compare the failure
    rates (``rates.again``: the new runs against the original's)."""
    from dbglog.kb import rates

    what, orig = rerun_source(recs, ref, inv_ref)
    cmd, opts, env, cwd = rerun_options(orig[0], repeat or len(orig))
    env = _unredacted(what, cmd, opts, env, warn)
    if not os.path.isdir(cwd):
        raise DbglogError(f"{what} ran in {cwd}, which is gone: nothing to run again")
    out = run_repro(recs, cmd, opts, cwd=cwd, env=env, attempt_title=attempt_title, inv_ref=inv_ref, warn=warn)
    tested = [r for r in orig if r.get("outcome") != "error"]
    new = [r for r in out.runs if r.get("outcome") != "error"]
    cmp = None
    if tested and new:
        cmp = rates.again(sum(r["outcome"] != "pass" for r in new), len(new),
                          sum(r["outcome"] != "pass" for r in tested), len(tested)).to_dict()
    return {"source": what, "out": out, "comparison": cmp,
            "original": {"failed": sum(r["outcome"] != "pass" for r in tested), "runs": len(tested)}}
