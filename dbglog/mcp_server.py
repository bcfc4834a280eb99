"""`dbglog mcp`: the debug-log protocol as Model Context Protocol tools, served over stdio.

One long-lived process per agent session (started by the agent's client), built on the official
``mcp`` Python SDK (``pip install 'dbglog[mcp]'``). Every tool calls the same functions the CLI
calls (``dbglog/ops.py`` and ``Records``), so a tool's data and its one-line error messages are the
command's: a ``DbglogError`` becomes a tool error (``isError: true``) whose text is the message
the CLI prints after ``dbglog:``; anything else is reported as ``internal error: ...`` and the
server keeps serving.

Threads: the SDK runs synchronous tools on worker threads. Each of our worker threads keeps its
own open workspace (``Records``, one SQLite connection) for the life of the process, re-opened
when the workspace or its database file changes; every call first takes in outside edits of
``logs/`` (the stat pass every CLI command does). SQLite's own locking (WAL, ``BEGIN IMMEDIATE``)
serialises writers across threads exactly as it does across processes, so a long ``run_repro``
does not block a ``tried``.

The workspace is found from the server's working directory (or ``DBGLOG_DIR``), as for the CLI.
stdout is the protocol channel: nothing here prints, runs are never echoed, and the SDK points
fd 1 at stderr while serving.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from collections import Counter
from dataclasses import replace
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from dbglog.run import captures as _captures
from dbglog import ops
from dbglog.util.errors import DbglogError

CapturePreset = Literal[tuple(_captures.names())]  # the schema's enum, from the registry

try:  # mcp >= 2
    from mcp.server.mcpserver import MCPServer
except ImportError as e:  # pragma: no cover - depends on the installed SDK
    raise ImportError(f"dbglog mcp needs the MCP Python SDK 2.x ({e})") from e

INSTRUCTIONS = """\
dbglog is the debug log of this workspace: investigations (one per bug) with numbered attempts
(hypothesis, what was done, result, conclusion, outcome), a key-differences table between a working
and a broken case, and a what-to-try-next list, mirrored to markdown in logs/.
Protocol: call `tried` before trying a fix (tried=true: read the outcome and conclusion of close[0]
and do not repeat a failed attempt); `run_repro` to run the repro under supervision, with `attempt`
set to record the result; `add_attempt` for anything else you tried; `add_difference` when a
working and a broken case differ; `next_steps` to keep the list of what to try; `bisect_status`
for a running or finished bisection; `show` for the whole investigation."""

Outcome = Literal["worked", "failed", "partial", "inconclusive", "untested"]
Kind = Literal["attempt", "investigation", "difference", "next", "section"]


class _Open(BaseModel):
    """Records carry every key the CLI's --json has; the ones named here are typed."""
    model_config = ConfigDict(extra="allow")


class Attempt(_Open):
    investigation: str
    number: int
    title: str
    hypothesis: str
    did: str
    result: str
    conclusion: str
    outcome: str
    created: str
    runs: list[str] = []


class Similar(_Open):
    investigation: str
    attempt: int
    title: str
    outcome: str
    conclusion: str


class RecordedAttempt(Attempt):
    outcome_inferred: bool = Field(description="The outcome was read from the result (a guess), not given.")
    similar: list[Similar] = Field(description="Earlier failed or inconclusive attempts that read alike.")
    circuit_breaker: Optional[dict[str, Any]] = Field(
        None, description="Set when this is the Nth failed attempt ending the same way (same signature or "
                          "near-identical result): message, untested_differences[], a ready `bisect` command line.")
    next: list[str] = Field([], description="The natural next commands.")
    warnings: list[str] = []


class Difference(_Open):
    position: int
    factor: str
    working: str
    broken: str
    status: str
    apply: str = ""


class DifferenceResult(Difference):
    investigation: str
    labels: dict[str, str]
    warnings: list[str] = []


class NextStep(_Open):
    position: int
    text: str
    detail: str = ""
    status: str
    attempt: Optional[int] = None


class NextSteps(BaseModel):
    investigation: str
    changed: Optional[NextStep] = Field(None, description="The step added, checked off or dropped.")
    steps: list[NextStep]
    warnings: list[str] = []


class Section(_Open):
    heading: str
    body: str


class Investigation(_Open):
    id: str
    title: str
    status: str
    symptom: str
    environment: str
    related_files: list[str]
    tags: list[str]
    root_cause: str
    created: str
    updated: str
    labels: dict[str, str]
    attempts: list[dict[str, Any]]
    differences: list[Difference]
    next_steps: list[NextStep]
    sections: list[Section]
    path: str = Field(description="The markdown mirror file, relative to the workspace root.")
    warnings: list[str] = []


class Hit(_Open):
    kind: str = Field(description="attempt | investigation | difference | next | section")
    investigation: Optional[str] = None
    investigation_title: Optional[str] = None
    title: Optional[str] = None
    outcome: Optional[str] = Field(None, description="An attempt's outcome, or what a free-text hit's text states.")
    attempt: Optional[int] = None
    conclusion: Optional[str] = None
    result: Optional[str] = None
    did: Optional[str] = None
    path: Optional[str] = None
    line: Optional[int] = None
    text: Optional[str] = None
    snippet: str = ""
    score: float = 0.0
    verdict: Optional[dict] = Field(None, description="tried: {close, rule, why}: the closeness rule that refused "
                                                      "it, or why it is only mentioned (rule '' = close).")
    tier: Optional[str] = Field(None, description="tried: same | other (the same knob, another way or value) | "
                                                  "related | unrelated.")
    differs: Optional[str] = Field(None, description="tried: which knob matched and how the idea differs.")
    experiment: Optional[dict] = Field(None, description="tried: the record's experiment {knobs: [{knob, name, kind, "
                                                         "state, value}], applied_to, summary}.")
    full_text: Optional[str] = Field(None, description="tried: all of the record's text, to judge close calls.")
    judged_by: Optional[str] = Field(None, description="tried: built-in (the rules and knobs), learned (the learned "
                                                       "judge overruled the words: a guess) or model (--llm).")
    same_probability: Optional[float] = Field(None, description="tried: the learned judge's probability that this "
                                                                "attempt is the idea's experiment.")


class TriedResult(BaseModel):
    query: str
    tried: bool = Field(description="A close prior attempt exists (the CLI's exit status 0).")
    close: list[Hit] = Field(description="Close prior attempts, best first: read outcome and conclusion.")
    answer: str = Field("", description="tried | tried another way | related | not tried.")
    vague: bool = Field(False, description="The idea is one plain word and names no experiment: say what was done "
                                           "or the setting, then ask again.")
    idea_experiment: Optional[dict] = Field(None, description="The idea's experiment, read like each record's.")
    another_way: list[Hit] = Field([], description="The same knob turned another way or to another value.")
    mentioned: list[Hit] = Field(description="Close, but only proposed (a to-do, an idea), not tried.")
    others: list[Hit] = Field(description="Related, not close.")
    notes: list[str] = Field(description="What the query parser did (typo corrections, unknown words).")
    warnings: list[str] = []


class SearchResult(BaseModel):
    query: str
    hits: list[Hit]
    notes: list[str]
    warnings: list[str] = []


class KeyLine(_Open):
    line: Optional[int] = None
    text: str = ""


class RunSummary(_Open):
    id: str
    outcome: str = Field(description="pass | fail | crash | hang | oom | error")
    signature: Optional[str] = None
    exit_code: Optional[int] = None
    signal_name: Optional[str] = None
    duration_s: float
    key_lines: list[KeyLine] = []
    notes: list[str] = []
    output: str = Field("", description="Path of the merged stdout+stderr of the run.")
    expect_matched: Optional[bool] = None


class ReproResult(BaseModel):
    verdict: Literal["pass", "fail", "flaky", "error"] = Field(
        description="pass: every run passed; fail: they failed alike; flaky: the runs disagree; error: could not "
                    "start")
    run_id: str = Field(description="The run (the first that did not pass, when repeated): `dbglog runs show ID`.")
    outcome: str = Field(description="That run's outcome: pass | fail | crash | hang | oom | error | server_died | "
                                     "server_not_ready")
    signature: Optional[str] = Field(None, description="Its most causal failure signature (e.g. gpu.illegal_address).")
    key_lines: list[KeyLine] = Field([], description="The output lines that carry the failure.")
    exit_code: int = Field(description="What `dbglog run` would exit with: 0 pass, 1 failure, 124 hang.")
    stuck: Optional[dict[str, Any]] = Field(
        None, description="On a hang: the process the captures guess is stuck (pid, cmdline, top frames, reason).")
    runs: list[RunSummary]
    histogram: list[dict[str, Any]] = []
    attempt: Optional[Attempt] = Field(None, description="The attempt the run was recorded as (with `attempt`).")
    investigation: Optional[str] = Field(
        None, description="The investigation the runs were recorded in: the current open one, or `investigation`; "
                          "none while the current one is resolved.")
    advice: list[NextStep] = Field([], description="Next steps the playbooks added for this failure.")
    circuit_breaker: Optional[dict[str, Any]] = Field(
        None, description="With `attempt`: set when it is the Nth failed attempt ending the same way; read its "
                          "message and run its `bisect` line instead of another patch.")
    seen_before: Optional[dict[str, Any]] = Field(
        None, description="On a failure: what the knowledge base knows about it (its fingerprint; investigations "
                          "that saw it with status and root cause; attempts that worked or failed against it; "
                          "docs and notes; `regression` with the commands to reopen or bisect). A match with `guess`: true "
                          "(near or similar) is a judgement by similarity, its `evidence` says why: check it "
                          "before acting on it. `lines`: as text.")
    warnings: list[str] = []


class BisectStatus(_Open):
    id: str
    kind: str = Field(description="git | toggles")
    status: str
    investigation: Optional[str] = None
    created: str
    updated: str
    result: Optional[dict[str, Any]] = None
    warnings: list[str] = []


# --- workspace per worker thread ----------------------------------------------------------


_local = threading.local()


def _records(create: bool = False):
    """This thread's open workspace, re-opened when the workspace (cwd, DBGLOG_DIR) or its
    database file changed; outside edits of logs/ taken in, as before every CLI command."""
    from dbglog.util import workspace
    from dbglog.kb.records import Records

    warnings: list[str] = []
    ws = workspace.find()
    recs = getattr(_local, "recs", None)
    if recs is not None:
        try:
            same = recs.ws == ws and os.stat(ws.db_path).st_ino == _local.ino and not recs.store.outdated()
        except OSError:
            same = False
        if not same:
            recs.close()
            recs = _local.recs = None
    if recs is None:
        recs = Records(ws, create=create)
        _local.recs, _local.ino = recs, os.stat(ws.db_path).st_ino
    ops.sync_records(recs, warnings.append)
    return recs, warnings


def _error(message: str):
    """A tool error: ``isError: true``, the message as its text and as ``{"error": ...}`` (the CLI's
    ``--json`` error shape)."""
    from mcp.types import CallToolResult, TextContent

    from dbglog.util.redact import clean

    message = clean(message)  # (it may quote an argument: `command not found: HF_TOKEN=hf_...`)
    return CallToolResult(content=[TextContent(type="text", text=message)], structured_content={"error": message},
                          is_error=True)


_busy = [0]  # tool calls in progress (a stopping server waits for them to record their runs)
_busy_lock = threading.Lock()


def _call(fn):
    """Run a tool body; a DbglogError becomes the tool error the CLI would print (one line, without
    the ``dbglog:`` prefix, as in ``{"error": ...}``)."""
    with _busy_lock:
        _busy[0] += 1
    from dbglog.kb import sync

    from dbglog.util import workspace

    try:
        out = fn()
        sync.flush_listing()  # (the freshness check's manifest: kept only by a call that succeeded)
        workspace.keep_created()
        return out
    except DbglogError as e:
        sync.drop_listing()
        with _busy_lock:  # (a workspace set up by this call is removed again, unless another call is using it)
            if _busy[0] == 1:
                workspace.drop_created()
        return _error(str(e))
    except Exception as e:  # a bug of ours: one line, and the server keeps serving
        sync.drop_listing()
        from dbglog.util.fserrors import damaged_database, describe

        said = describe(e) or damaged_database(e)  # (a machine's failure, said as the CLI says it: a locked database
        if said:  # was "internal error: OperationalError: database is locked")
            return _error(said)
        if os.environ.get("DBGLOG_DEBUG"):
            import traceback

            traceback.print_exc()
        return _error(f"internal error: {type(e).__name__}: {e} (set DBGLOG_DEBUG=1 for the traceback on the "
                      "server's stderr)")
    finally:
        with _busy_lock:
            _busy[0] -= 1


def _not_utf8(value) -> bool:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_not_utf8(k) or _not_utf8(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_not_utf8(v) for v in value)
    return False


def _checked(fn):
    """``fn`` refusing an argument that is not valid Unicode, the MCP side of the CLI's argv check: JSON
    may carry a lone surrogate (``"\\udcff"``), which would fail deep in a lookup or a write."""
    import functools

    @functools.wraps(fn)  # (the SDK reads the wrapped function's signature, types and docstring)
    def tool(*args, **kwargs):
        for name, value in kwargs.items():
            if _not_utf8(value):
                return _error(f"the {name} is not valid UTF-8; pass text in UTF-8")
        return fn(*args, **kwargs)
    return tool


def _hits(hits) -> list[Hit]:
    return [Hit.model_validate(h.to_dict()) for h in hits]


def _judged(hits) -> list[Hit]:
    """tried's hits with how each was judged (``verdict``, ``outcome_is_guess``: see search.judged_dict)."""
    from dbglog.kb.search import judged_dict

    return [Hit.model_validate(judged_dict(h)) for h in hits]


def _run_summary(d: dict) -> RunSummary:
    return RunSummary.model_validate(d | {"output": str((d.get("paths") or {}).get("output", ""))})


# --- the tools ---------------------------------------------------------------------------------


def tried(idea: str, investigation: Optional[str] = None, status: Optional[str] = None,
          tags: Optional[list[str]] = None, limit: int = ops.TRIED_CANDIDATES) -> TriedResult:
    """Was IDEA already tried, and what happened? Call it before trying a fix.

    Looks in attempts, free sections and watched docs; `tried` is true when a close prior attempt
    exists (`close`, best first, each with its outcome and conclusion); `another_way` holds records
    that turned the same knob another way or to another value; ideas only proposed come under
    `mentioned`, related records under `others`. Every candidate carries its `tier`, `differs`, its
    `experiment` (knobs, their state, what it was applied to) and its `full_text`. `tried` is a word-rule
    verdict that misses many rewordings: read every candidate and judge yourself whether one is the same
    experiment (the same change, to the same value or in the same direction, on the same thing). `limit`: the
    candidates returned (8 by default)."""
    def body():
        recs, warnings = _records()
        res = ops.tried(recs, idea, status=status, tags=tags or (), inv_ref=investigation, limit=limit,
                        warn=warnings.append)
        shown = res.close + res.another + res.mentioned
        return TriedResult(query=idea, tried=bool(res.close), answer=res.answer, vague=res.vague,
                           close=_judged(res.close),
                           idea_experiment=res.idea.to_dict() if res.idea is not None else None,
                           another_way=_judged(res.another), mentioned=_judged(res.mentioned),
                           others=_judged(h for h in res.result.hits if h not in shown),
                           notes=ops.query_notes(res.result.query), warnings=warnings)
    return _call(body)


def search(query: str, kinds: Optional[list[Kind]] = None, investigation: Optional[str] = None,
           status: Optional[str] = None, outcomes: Optional[list[Outcome]] = None, tags: Optional[list[str]] = None,
           since: Optional[str] = None, limit: int = 10) -> SearchResult:
    """Ranked, typo-tolerant search over attempts, investigations, key differences, next steps, free
    sections and watched docs (`since`: a date like 2026-11-01 or an age like 3d, 2w)."""
    def body():
        recs, warnings = _records()
        res = ops.search(recs, query, status=status, outcomes=outcomes or (), tags=tags or (), inv_ref=investigation,
                         kinds=kinds, since=since, limit=limit, warn=warnings.append)
        return SearchResult(query=query, hits=_hits(res.hits), notes=ops.query_notes(res.query), warnings=warnings)
    return _call(body)


def _investigation(recs, inv_id: str, warnings: list[str]) -> Investigation:
    inv = ops.shown(ops.investigation(recs, inv_id))
    return Investigation.model_validate(inv.to_dict() | {"path": recs.path_for(inv_id), "warnings": warnings})


def new_investigation(title: str, symptom: str = "", tags: Optional[list[str]] = None,
                      files: Optional[list[str]] = None, environment: bool = True) -> Investigation:
    """Start an investigation (one per bug) and make it the current one; with `environment` an
    environment snapshot (OS, GPUs, driver, CUDA/ROCm, ML packages) is stored with it."""
    def body():
        recs, warnings = _records(create=True)
        inv = ops.new_investigation(recs, title, symptom=symptom, files=files or (), tags=tags or (),
                                    environment=environment)
        return _investigation(recs, inv.id, warnings)
    return _call(body)


def add_attempt(title: Optional[str] = None, hypothesis: Optional[str] = None, did: Optional[str] = None,
                result: Optional[str] = None, conclusion: Optional[str] = None, outcome: Optional[Outcome] = None,
                runs: Optional[list[str]] = None, investigation: Optional[str] = None) -> RecordedAttempt:
    """Record an attempt (numbered 1..n in the investigation; default: the current one). Without
    `outcome` it is read from `result` (`outcome_inferred`). `similar` names earlier failed or
    inconclusive attempts that look the same."""
    def body():
        recs, warnings = _records()
        rec = ops.add_attempt(recs, investigation, title=title, hypothesis=hypothesis, did=did, result=result,
                              conclusion=conclusion, outcome=outcome, runs=runs or ())
        return RecordedAttempt.model_validate(rec.to_dict() | {"warnings": warnings})
    return _call(body)


def _difference(recs, inv_id: str, d, warnings) -> DifferenceResult:
    inv = ops.investigation(recs, inv_id)
    return DifferenceResult.model_validate((d.to_dict() if d else {"position": 0, "factor": "", "working": "",
                                                                  "broken": "", "status": ""})
                                           | {"investigation": inv_id, "warnings": warnings,
                                              "labels": {"working": inv.labels[0], "broken": inv.labels[1]}}
                                           | ops.difference_notes(recs, inv_id, d))


def add_difference(factor: str, working: str, broken: str, status: Literal["untested", "ruled-out", "culprit"]
                   = "untested", apply: str = "", working_label: Optional[str] = None,
                   broken_label: Optional[str] = None, investigation: Optional[str] = None) -> DifferenceResult:
    """Add a key-differences row: FACTOR, its value in the working case and in the broken case.
    `apply` (env:NAME=VALUE, arg:TEXT, config:FILE:KEY=VALUE) lets `dbglog bisect toggles --from-diffs`
    switch it."""
    def body():
        recs, warnings = _records()
        inv_id, d = ops.add_difference(recs, investigation, factor, working, broken, status=status, apply=apply,
                                       working_label=working_label, broken_label=broken_label)
        return _difference(recs, inv_id, d, warnings)
    return _call(body)


def set_difference(factor: str, working: Optional[str] = None, broken: Optional[str] = None,
                   status: Optional[Literal["untested", "ruled-out", "culprit"]] = None, apply: Optional[str] = None,
                   working_label: Optional[str] = None, broken_label: Optional[str] = None,
                   investigation: Optional[str] = None) -> DifferenceResult:
    """Change a key-differences row (by factor name, a unique prefix, or its number): values, status
    (ruled-out / culprit once tested) or apply spec; or the column labels."""
    def body():
        recs, warnings = _records()
        inv_id, d = ops.set_difference(recs, investigation, factor, working=working, broken=broken, status=status,
                                       apply=apply, working_label=working_label, broken_label=broken_label)
        return _difference(recs, inv_id, d, warnings)
    return _call(body)


def next_steps(action: Literal["list", "add", "done", "drop"] = "list", text: Optional[str] = None,
               detail: str = "", at: Optional[int] = None, attempt: Optional[int] = None,
               investigation: Optional[str] = None) -> NextSteps:
    """The prioritised what-to-try-next list. `add` puts `text` at the end (or at position `at`);
    `done` / `drop` check off or drop the step `text` names (its number or words), `done` with the
    `attempt` that did it. Always returns the whole list."""
    def body():
        recs, warnings = _records()
        inv_id, step, steps = ops.next_steps(recs, investigation, action, text, detail=detail, position=at,
                                             attempt=attempt)
        return NextSteps(investigation=inv_id, changed=NextStep.model_validate(step.to_dict()) if step else None,
                         steps=[NextStep.model_validate(s.to_dict()) for s in steps], warnings=warnings)
    return _call(body)


def run_repro(cmd: list[str], timeout: Optional[float] = None, repeat: int = 1, until_fail: bool = False,
              expect: Optional[str] = None, env: Optional[dict[str, str]] = None, unset: Optional[list[str]] = None,
              captures: Optional[list[CapturePreset]] = None,
              attempt: Optional[str] = None, hypothesis: str = "", investigation: Optional[str] = None,
              cwd: Optional[str] = None, server: Optional[str] = None, ready: Optional[str] = None,
              ready_timeout: float = 120.0, idle_timeout: Optional[float] = None,
              escalate: bool = False, container: Optional[str] = None) -> ReproResult:
    """Run the repro CMD (an argument list, never through a shell: pass ["bash", "-c", "..."] for a
    shell line) under supervision, as `dbglog run` does: classify the end (pass / fail / crash / hang
    / oom / error), name the failure signature and the key lines, kill the whole process tree on
    `timeout` (seconds; set it: a hang otherwise waits forever) after the hang `captures`. The run is
    recorded in the current open investigation (or `investigation`); with `attempt` (a title) also as an
    attempt of it, with the evidence quoted and the playbooks' advice added to the next steps. Server-shaped repros: `server`
    (a command line, started first and supervised) and `ready` (a URL answering 2xx, or a command
    exiting 0) make CMD the client; outcomes `server_died` / `server_not_ready` blame the server.
    `idle_timeout`: alive but silent this many seconds is a hang. `escalate`: with `repeat`, raise
    the kernel-API log level after each failure (1, 3, 10). `container`: the docker container the
    repro runs in, inspected after the run (a docker run/exec CMD is recognised without it)."""
    def body():
        from dbglog.run.runner import Interrupted

        opts = replace(ops.REPRO_OPTIONS, timeout=timeout, repeat=repeat, until_fail=until_fail,
                       captures=tuple(captures or ()), server=server, ready=ready, ready_timeout=ready_timeout,
                       idle_timeout=idle_timeout, escalate=escalate, container=container)
        cmdl = ops.check_run(cmd, opts)
        recs, warnings = _records(create=True)
        overrides: dict[str, Optional[str]] = {k: v for k, v in (env or {}).items()}
        for k in unset or ():
            overrides[k] = None
        try:
            out = ops.run_repro(recs, cmdl, opts, cwd=cwd, env=overrides, expect=expect, attempt_title=attempt,
                                hypothesis=hypothesis, inv_ref=investigation, warn=warnings.append)
        except Interrupted as e:  # the server is stopping (signal, client gone): the tree is down; record it
            dicts, _a = ops.record_interrupted(recs, e, cmdl, attempt_title=attempt, hypothesis=hypothesis,
                                               inv_ref=investigation)
            last = dicts[-1]["id"] if dicts else "none"
            return _error(f"{dicts[-1]['error'] if dicts else 'interrupted'}; recorded as run {last}")
        first = next((d for d in out.runs if d["outcome"] != "pass"), out.runs[0])
        return ReproResult(verdict=out.verdict, run_id=first["id"], outcome=first["outcome"],
                           signature=first["signature"], key_lines=[KeyLine.model_validate(k) for k in first["key_lines"]],
                           exit_code=out.exit_code(False, expect), stuck=first.get("stuck"),
                           runs=[_run_summary(d) for d in out.runs],
                           histogram=out.repeat.histogram_rows(),
                           attempt=Attempt.model_validate(out.attempt.to_dict() | {"investigation": out.investigation})
                           if out.attempt is not None else None, investigation=out.recorded_in,
                           advice=[NextStep.model_validate(s.to_dict()) for s in out.advice],
                           circuit_breaker=out.breaker, seen_before=out.seen_before,
                           warnings=warnings + ([out.failed_after] if out.failed_after else []))
    return _call(body)


def bisect_status(session: Optional[str] = None) -> BisectStatus:
    """Where a bisection stands (default: the latest): status, range or toggles, steps done, the
    result (first bad commit, or the minimal failing sets) once finished."""
    def body():
        recs, warnings = _records()
        return BisectStatus.model_validate(ops.bisect_status(recs, session) | {"warnings": warnings})
    return _call(body)


def show(investigation: Optional[str] = None) -> Investigation:
    """A whole investigation (default: the current one): symptom, environment, every attempt, the
    key-differences table, the next steps and free sections."""
    def body():
        recs, warnings = _records()
        return _investigation(recs, recs.resolve(investigation), warnings)
    return _call(body)


# --- documents: import, and reading with the agent's help (issue 25) --------------------------------


class DocUnit(_Open):
    id: int = Field(description="Cite this id in an extraction.")
    kind: str = Field(description="sentence | command | row | heading | code")
    lines: list[int] = Field(description="[first, last] source lines, 1-based.")
    text: str
    author: str = Field("", description="A thread comment's author.")
    quoted: bool = Field(False, description="The unit is quoted (a blockquote): the words are not `author`'s own.")
    quotes: str = Field("", description="For a quoted unit: the author of the earlier post in the thread that said "
                                         "it, or \"\" when no earlier post did.")
    label: str = Field(description="The built-in reader's label: action, result, action_result, proposal, request, "
                                   "plan, boilerplate or context.")
    confidence: float
    learned: Optional[float] = Field(None, description="The learned attempt pass's probability that a person would "
                                                       "mark this unit as an attempt (null where it did not ask).")
    learned_step: Optional[float] = Field(None, description="The learned next-step pass's, likewise.")
    read_as: dict[str, Any] = Field(default_factory=dict, description="What the built-in reading made of the unit "
                                    "in the end: {kind: attempt | next_step | text, number, outcome}.")
    investigation: Optional[int] = Field(None, description="The index (in `investigations`) of the investigation "
                                         "the unit is read in; null: in none (a template, a preamble).")


class DocUnits(BaseModel):
    source: str
    guide: str = Field(description="What counts as an attempt and how to cite it: the rules `import --llm` gives a "
                                   "model and the hand labels follow.")
    digest: str = Field(description="Send it back in the extraction: it shows the ids still mean these units.")
    investigations: list[dict[str, Any]] = Field(default_factory=list, description="The investigations the document "
                                                 "holds ({index, title, line}): an attempt is filed under the one "
                                                 "of its first cited unit.")
    units: list[DocUnit]
    warnings: list[str] = []


class ImportResult(_Open):
    investigations: list[dict[str, Any]] = Field(description="Per investigation: action (create | update | "
                                                             "unchanged), id, title, attempt_list (with source_lines, "
                                                             "who), current.")
    skipped: list[dict[str, Any]] = []
    current: Optional[str] = Field(None, description="The current investigation after the import.")
    dry_run: bool = False
    warnings: list[str] = []


def doc_units(path: str, first_line: Optional[int] = None, last_line: Optional[int] = None) -> DocUnits:
    """A markdown debug doc (PATH, from the server's directory) cut into units, each with its id, kind, source
    lines, text and the built-in reader's label and confidence, and `guide`: what counts as an attempt. Read-only.
    To correct the reading, send the attempts back to `import_extraction`, citing these ids. `first_line` /
    `last_line` (1-based): only the units on those lines, a long doc read a part at a time (ids and digest are the
    whole doc's)."""
    def body():
        from dbglog.kb import importer

        if first_line is not None and first_line < 1 or last_line is not None and last_line < (first_line or 1):
            raise DbglogError("first_line and last_line are 1-based lines with first_line <= last_line")
        got = importer.agent_units(path, None if first_line is None and last_line is None else (first_line or 1,
                                                                                               last_line))
        return DocUnits(source=path, guide=got["guide"], digest=got["digest"], investigations=got["investigations"],
                        units=[DocUnit.model_validate(u) for u in got["units"]])
    return _call(body)


def import_extraction(path: str, extraction: dict[str, Any], use: bool = False) -> ImportResult:
    """Import the doc PATH with exactly the attempts EXTRACTION names: {"digest": as `doc_units` gave it,
    "attempts": [{"units": [ids from `doc_units`], "title", "outcome" (worked | failed | partial | inconclusive |
    untested), "who"}], optionally "next_steps": [{"units": [ids], "text", "status" (todo | done | dropped)}] (they
    replace the built-in reader's) and "one_investigation": true (one story that `doc_units` split into several
    investigations: imported as one); an attempt or step may give "investigation": index (from `doc_units`'
    investigations) to be filed there instead of where its first unit is read}.
    Every cited unit must exist, every outcome be known and the digest match (the doc unchanged since), or nothing
    is imported. Every line of the doc is kept (what is
    not an attempt stays as text). `use`: make the investigation the current one (default: the current one
    stays)."""
    def body():
        from dbglog.kb import importer

        corr = importer.read_extraction(path, extraction)  # (validated before the workspace is opened)
        recs, warnings = _records(create=True)
        data, more = importer.import_extracted(recs, path, corr, use=use)
        return ImportResult.model_validate(data | {"warnings": warnings + more})
    return _call(body)


def import_docs(paths: list[str], dry_run: bool = False, use: bool = False) -> ImportResult:
    """`dbglog import`: hand-written debug docs (DEBUG.md, notes, issue threads; a directory stands for its .md
    files) as investigations, every line kept; a second import updates instead of duplicating. `use`: make the
    one investigation imported the current one (default: the current one stays). The built-in reader finds about
    6 in 10 attempts of a write-up it has not seen; reading it yourself (`doc_units`, then `import_extraction`)
    finds more."""
    def body():
        from dbglog.kb import importer

        if not paths:
            raise DbglogError("give the markdown files to import")
        recs, warnings = _records(create=not dry_run)
        data = importer.import_files(recs, list(paths), dry_run=dry_run, use=use)
        return ImportResult.model_validate(data | {"warnings": warnings})
    return _call(body)


TOOLS = (tried, search, new_investigation, add_attempt, add_difference, set_difference, next_steps, run_repro,
         bisect_status, show, doc_units, import_extraction, import_docs)
READ_ONLY = {"tried", "search", "bisect_status", "show", "doc_units"}


def _argument_error(name: str, exc) -> str:
    """A pydantic validation error as the CLI's one line: which argument, what is wrong with it."""
    errs = exc.errors() if hasattr(exc, "errors") else []
    if not errs:
        return f"bad arguments for {name}: {str(exc).splitlines()[0]}"
    e = errs[0]
    where = ".".join(str(p) for p in e.get("loc", ()) if p != "arguments") or "arguments"
    got = e.get("input")
    shown = "" if got is None or isinstance(got, dict) else f" (got {str(got)[:60]!r})"
    more = f"; and {len(errs) - 1} more" if len(errs) > 1 else ""
    return f"bad {where} for {name}: {e.get('msg', 'invalid')}{shown}{more}"


class _Server(MCPServer):
    """The SDK's server, with argument errors as the one line the CLI would print, in
    ``structuredContent.error`` like every other tool error (not the SDK's multi-line dump)."""

    async def call_tool(self, name, arguments, context=None):
        from pydantic import ValidationError

        from mcp.server.mcpserver.exceptions import ToolError

        from dbglog.run import proctree

        # (the runs this call starts know it: a notifications/cancelled of its request stops them, _StopRunsAtEOF)
        token = proctree.CALLER.set(_id_key(context.request_id) if context is not None else None)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as e:
            if isinstance(e.__cause__, ValidationError):
                return _error(_argument_error(name, e.__cause__))
            msg = str(e).removeprefix(f"Error executing tool {name}: ")
            return _error(msg.splitlines()[0] if msg else f"unknown tool {name!r}")
        finally:
            proctree.CALLER.reset(token)

    async def run_stdio_async(self) -> None:
        """Serve over stdio; when the client goes away (stdin closed) every run in progress is
        stopped, so the worker threads finish and the server exits."""
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read_stream, write_stream):
            _WIRE["writer"] = write_stream
            await self._lowlevel_server.run(_StopRunsAtEOF(read_stream), _CountAnswers(write_stream),
                                            self._lowlevel_server.create_initialization_options())


# the ids of the requests read and not yet answered (or cancelled by the client, which gets no answer then), so
# that a server stopping on a signal or at EOF exits only once every call in progress has been answered (its
# answer says the run was stopped and recorded)
_WIRE: dict = {"pending": Counter(), "writer": None}


def _kind(item) -> str:
    return type(getattr(item, "message", None)).__name__


class _CountAnswers:
    """The stream of messages to the client, counting the answers (responses and errors) handed over."""

    def __init__(self, inner):
        self._inner = inner

    async def send(self, item) -> None:
        await self._inner.send(item)
        if _kind(item) in ("JSONRPCResponse", "JSONRPCError"):
            _settle(item.message.id)

    async def __aenter__(self):
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc):
        return await self._inner.__aexit__(*exc)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def _id_key(rid) -> str:
    return json.dumps(rid)  # (1 and "1" are two requests)


def _settle(rid) -> None:
    """A request answered, or cancelled by the client."""
    key = _id_key(rid)
    if _WIRE["pending"][key] > 0:
        _WIRE["pending"][key] -= 1


def _all_answered() -> bool:
    """Every request read has its answer written out: handed over, and the writer back to waiting
    for the next message (it writes and flushes one at a time)."""
    if +_WIRE["pending"]:
        return False
    inner = getattr(_WIRE["writer"], "_inner", None)
    try:
        stats = inner.statistics()
    except AttributeError:
        return True  # (another SDK: the answer was handed over at least)
    return stats.tasks_waiting_receive > 0 and stats.current_buffer_used == 0


class _StopRunsAtEOF:
    """The client's message stream; at its end the runs in progress are stopped (as by a SIGHUP:
    the other end hung up) -- otherwise the SDK waits for their worker threads, up to a repro's
    timeout or forever."""

    def __init__(self, inner):
        self._inner = inner

    async def __aenter__(self):
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc):
        return await self._inner.__aexit__(*exc)

    def __aiter__(self):
        return self

    async def __anext__(self):
        import anyio

        try:
            item = await self._inner.__anext__()
        except (StopAsyncIteration, anyio.EndOfStream, anyio.ClosedResourceError):
            _stop_runs(signal.SIGHUP)
            await _answers_written()
            raise
        if _kind(item) == "JSONRPCRequest":
            _WIRE["pending"][_id_key(item.message.id)] += 1
        elif _kind(item) == "JSONRPCNotification" and item.message.method == "notifications/cancelled":
            rid = (item.message.params or {}).get("requestId")
            _settle(rid)
            from dbglog.run import proctree

            proctree.stop_caller(_id_key(str(rid)), signal.SIGTERM)  # (its runs, as a stop signal would)
        elif isinstance(item, Exception):  # a line the SDK could not read: it drops it, and a client would wait
            await _answer_unreadable(item)
        return item

    def __getattr__(self, name):
        return getattr(self._inner, name)


async def _answer_unreadable(exc: Exception) -> None:
    """The JSON-RPC error for a line that is not a message: -32700 for text that is not JSON, -32600 with the
    request's id for a request of the wrong shape (`"params": "x"`). A notification gets none, as JSON-RPC says."""
    from mcp.shared.message import SessionMessage
    from mcp.types import ErrorData, JSONRPCError

    errors = exc.errors() if hasattr(exc, "errors") else []
    whole = next((e["input"] for e in errors if isinstance(e.get("input"), dict)), None)
    if any(e.get("type") == "json_invalid" for e in errors):
        rid, code, what = None, -32700, "Parse error: the line is not JSON"
    elif whole is not None and "method" in whole and "id" not in whole:
        return
    else:
        rid = whole.get("id") if whole is not None and isinstance(whole.get("id"), (str, int)) else None
        field = next((".".join(map(str, e["loc"][1:])) for e in errors if len(e.get("loc", ())) > 1), "")
        code, what = -32600, f"Invalid request: {field or 'the message'} is not of the JSON-RPC shape"
    writer = _WIRE["writer"]
    if writer is not None:
        await writer.send(SessionMessage(JSONRPCError(jsonrpc="2.0", id=rid, error=ErrorData(code=code, message=what))))


async def _answers_written(limit: float = 30.0) -> None:
    """At the client's EOF, wait (at most ``limit`` seconds) until every request read has its answer written:
    the SDK ends its loop, and cancels the calls still in progress, as soon as the read side ends, so lines
    piped in with stdin closed behind them (``dbglog mcp < requests``) lost most of their answers."""
    import time

    import anyio

    deadline = time.monotonic() + limit
    while (_busy[0] > 0 or not _all_answered()) and time.monotonic() < deadline:
        await anyio.sleep(0.005)


def _stop_runs(signum: int) -> None:
    from dbglog.run import proctree

    proctree.stop_all(signum, for_good=True)


def _exit_after_runs(signum: int, limit: float = 30.0) -> None:
    """A stop signal: every run is asked to stop; once the tool calls have recorded them (at most
    ``limit`` seconds) the server exits 128 + signum."""
    import sys
    import time

    deadline = time.monotonic() + limit
    while (_busy[0] > 0 or not _all_answered()) and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        sys.stderr.flush()
    finally:
        os._exit(128 + signum)


def _trap_stop_signals() -> None:
    """SIGTERM, SIGHUP and SIGINT stop the runs in progress (they supervise on worker threads, out of
    reach of a signal), then the server (see ``_exit_after_runs``). A second signal changes nothing."""
    got: list[int] = []

    def stop(signum, frame):
        if got:
            return
        got.append(signum)
        _stop_runs(signum)
        threading.Thread(target=_exit_after_runs, args=(signum,), name="dbglog-mcp-exit", daemon=True).start()

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        try:
            if signal.getsignal(sig) is not signal.SIG_IGN:  # (nohup: a SIGHUP ignored stays ignored)
                signal.signal(sig, stop)
        except (ValueError, OSError):
            pass


def build_server() -> MCPServer:
    from importlib.metadata import PackageNotFoundError, version

    from mcp.types import ToolAnnotations

    try:
        v = version("dbglog")
    except PackageNotFoundError:  # pragma: no cover
        v = ""
    server = _Server("dbglog", instructions=INSTRUCTIONS, version=v, log_level="WARNING")
    for fn in TOOLS:
        ro = fn.__name__ in READ_ONLY
        server.add_tool(_checked(fn), annotations=ToolAnnotations(read_only_hint=ro, destructive_hint=False,
                                                        idempotent_hint=ro, open_world_hint=fn is run_repro))
    return server


def serve() -> None:
    """Serve over stdio until the client closes stdin or a stop signal comes; either way the runs
    in progress are stopped and recorded first (issue 30)."""
    server = build_server()
    _trap_stop_signals()
    server.run("stdio")
