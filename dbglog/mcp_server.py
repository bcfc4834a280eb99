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

import os
import threading
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


class TriedResult(BaseModel):
    query: str
    tried: bool = Field(description="A close prior attempt exists (the CLI's exit status 0).")
    close: list[Hit] = Field(description="Close prior attempts, best first: read outcome and conclusion.")
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
    advice: list[NextStep] = Field([], description="Next steps the playbooks added for this failure.")
    circuit_breaker: Optional[dict[str, Any]] = Field(
        None, description="With `attempt`: set when it is the Nth failed attempt ending the same way; read its "
                          "message and run its `bisect` line instead of another patch.")
    seen_before: Optional[dict[str, Any]] = Field(
        None, description="On a failure: what the knowledge base knows about it (its fingerprint; investigations "
                          "that saw it with status and root cause; attempts that worked or failed against it; "
                          "docs and notes; `regression` with the commands to reopen or bisect). `lines`: as text.")
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

    return CallToolResult(content=[TextContent(type="text", text=message)], structured_content={"error": message},
                          is_error=True)


def _call(fn):
    """Run a tool body; a DbglogError becomes the tool error the CLI would print (one line, without
    the ``dbglog:`` prefix, as in ``{"error": ...}``)."""
    try:
        return fn()
    except DbglogError as e:
        return _error(str(e))
    except Exception as e:  # a bug of ours: one line, and the server keeps serving
        if os.environ.get("DBGLOG_DEBUG"):
            import traceback

            traceback.print_exc()
        return _error(f"internal error: {type(e).__name__}: {e} (set DBGLOG_DEBUG=1 for the traceback on the "
                      "server's stderr)")


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
          tags: Optional[list[str]] = None, limit: int = 5) -> TriedResult:
    """Was IDEA already tried, and what happened? Call it before trying a fix.

    Looks in attempts, free sections and watched docs; `tried` is true when a close prior attempt
    exists (`close`, best first, each with its outcome and conclusion). Ideas that were only
    proposed come under `mentioned`, related records under `others`."""
    def body():
        recs, warnings = _records()
        res = ops.tried(recs, idea, status=status, tags=tags or (), inv_ref=investigation, limit=limit,
                        warn=warnings.append)
        return TriedResult(query=idea, tried=bool(res.close), close=_judged(res.close), mentioned=_judged(res.mentioned),
                           others=_judged(h for h in res.result.hits if h not in res.close and h not in res.mentioned),
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
    inv = ops.investigation(recs, inv_id)
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
              escalate: bool = False) -> ReproResult:
    """Run the repro CMD (an argument list, never through a shell: pass ["bash", "-c", "..."] for a
    shell line) under supervision, as `dbglog run` does: classify the end (pass / fail / crash / hang
    / oom / error), name the failure signature and the key lines, kill the whole process tree on
    `timeout` (seconds; set it: a hang otherwise waits forever) after the hang `captures`. With
    `attempt` (a title) the run is also recorded as an attempt of the investigation, with the
    evidence quoted and the playbooks' advice added to the next steps. Server-shaped repros: `server`
    (a command line, started first and supervised) and `ready` (a URL answering 2xx, or a command
    exiting 0) make CMD the client; outcomes `server_died` / `server_not_ready` blame the server.
    `idle_timeout`: alive but silent this many seconds is a hang. `escalate`: with `repeat`, raise
    the kernel-API log level after each failure (1, 3, 10)."""
    def body():
        opts = replace(ops.REPRO_OPTIONS, timeout=timeout, repeat=repeat, until_fail=until_fail,
                       captures=tuple(captures or ()), server=server, ready=ready, ready_timeout=ready_timeout,
                       idle_timeout=idle_timeout, escalate=escalate)
        cmdl = ops.check_run(cmd, opts)
        recs, warnings = _records(create=True)
        overrides: dict[str, Optional[str]] = {k: v for k, v in (env or {}).items()}
        for k in unset or ():
            overrides[k] = None
        out = ops.run_repro(recs, cmdl, opts, cwd=cwd, env=overrides, expect=expect, attempt_title=attempt,
                            hypothesis=hypothesis, inv_ref=investigation, warn=warnings.append)
        first = next((d for d in out.runs if d["outcome"] != "pass"), out.runs[0])
        return ReproResult(verdict=out.verdict, run_id=first["id"], outcome=first["outcome"],
                           signature=first["signature"], key_lines=[KeyLine.model_validate(k) for k in first["key_lines"]],
                           exit_code=out.exit_code(False, expect), stuck=first.get("stuck"),
                           runs=[_run_summary(d) for d in out.runs],
                           histogram=out.repeat.histogram_rows(),
                           attempt=Attempt.model_validate(out.attempt.to_dict() | {"investigation": out.investigation})
                           if out.attempt is not None else None,
                           advice=[NextStep.model_validate(s.to_dict()) for s in out.advice],
                           circuit_breaker=out.breaker, seen_before=out.seen_before, warnings=warnings)
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


TOOLS = (tried, search, new_investigation, add_attempt, add_difference, set_difference, next_steps, run_repro,
         bisect_status, show)
READ_ONLY = {"tried", "search", "bisect_status", "show"}


def build_server() -> MCPServer:
    from importlib.metadata import PackageNotFoundError, version

    from mcp.types import ToolAnnotations

    try:
        v = version("dbglog")
    except PackageNotFoundError:  # pragma: no cover
        v = ""
    server = MCPServer("dbglog", instructions=INSTRUCTIONS, version=v, log_level="WARNING")
    for fn in TOOLS:
        ro = fn.__name__ in READ_ONLY
        server.add_tool(_checked(fn), annotations=ToolAnnotations(read_only_hint=ro, destructive_hint=False,
                                                        idempotent_hint=ro, open_world_hint=fn is run_repro))
    return server


def serve() -> None:
    """Serve over stdio until the client closes stdin."""
    build_server().run("stdio")
