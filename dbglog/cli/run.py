"""Supervised runs and what they are read with: run, runs, env, signature.

Imports ``common`` and the run services (ops, runner, signatures, envinfo, evidence, slurm)."""

from __future__ import annotations

import contextlib
import os
import sys

import click

from dbglog import ops
from dbglog.cli.common import (COUNT, GRACE, INT, SECONDS, _capture_help, _config_path, _LazyHelpOption,
                               check_failure_name, emit, inv_option, json_option, open_records, reject_unknown_option,
                               safe_text, server_options, slurm_option, timeout_options, warn, SIZE, LIMIT_SIZE, ENV_PAIR,
                               VAR_NAME)
from dbglog.run.options import RunOptions
from dbglog.util.errors import DbglogError


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@timeout_options("Seconds before the run is a hang (captures, then tree kill).")
@click.option("--on-hang", "on_hang", multiple=True, metavar="CMD",
              help="Run on hang before the kill; {pid} {pgid} {run_dir} are filled in (repeatable).")
@click.option("--capture", "captures", multiple=True, metavar="PRESET", cls=_LazyHelpOption,
              help_fn=_capture_help())
@click.option("--idle-timeout", "idle_timeout", type=SECONDS,
              help="Alive but no output on any stream for S seconds = hang (captures, then tree kill).")
@server_options("Start this server first (supervised); the command after -- is the client. Needs --ready.",
                "With --server: ready when this URL answers 2xx or this command exits 0.")
@click.option("--escalate", is_flag=True, help="With --repeat: raise the kernel-API log level after each failure "
              "(SGLang/FlashInfer: 1, 3, then 10 = tensor dumps).")
@click.option("--escalate-levels", "escalate_levels", metavar="L,L,...", help="The ladder for --escalate "
              "(default 1,3,10; e.g. 1,3,5,10).")
@click.option("--dump-include", "dump_include", multiple=True, metavar="PATTERN",
              help="Level-10 dumps: only API names matching (fnmatch, repeatable).")
@click.option("--dump-exclude", "dump_exclude", multiple=True, metavar="PATTERN",
              help="Level-10 dumps: skip API names matching (fnmatch, repeatable).")
@click.option("--core-dumps", "core_dumps", is_flag=True, help="Keep the core size limit (default: 0 for the repro).")
@click.option("--container", metavar="NAME", help="The docker container the repro runs in: inspected, and its last "
              "logs kept, after the run (a docker run/exec command is recognised without it).")
@slurm_option("The run")
@click.option("--repeat", type=COUNT, default=1, show_default=True, help="Run N times; report a histogram.")
@click.option("--until-fail", is_flag=True, help="With --repeat: stop at the first non-pass.")
@click.option("--expect", metavar="SIGNATURE", help="The failure being hunted (signature, glob or outcome).")
@click.option("--git-bisect-exit", is_flag=True, help="Exit 0 good, 1 bad, 125 skip (for `git bisect run`).")
@click.option("--env", "env_pairs", type=ENV_PAIR, multiple=True, metavar="NAME=VALUE",
              help="Set a variable for the run.")
@click.option("--unset", "unset", type=VAR_NAME, multiple=True, metavar="NAME", help="Remove a variable for the run.")
@click.option("--output-cap", type=SIZE, default="64M", show_default=True, help="Max bytes kept per stream (middle is cut).")
@click.option("--quiet", "-q", is_flag=True, help="Do not echo the output live.")
@click.option("--attempt", "attempt_title", metavar="TITLE", help="Also record the run as an attempt.")
@click.option("--hypothesis", "-H", default="", help="With --attempt: the hypothesis.")
@click.option("--baseline", type=COUNT, default=None, help="With --attempt: first run N times without this attempt's "
              "--env/--unset; the attempt is judged against that failure rate.")
@inv_option
@json_option
@click.argument("cmd", nargs=-1, type=click.UNPROCESSED)
def run(timeout, grace, on_hang, captures, idle_timeout, server, ready, ready_timeout, escalate, escalate_levels,
        dump_include, dump_exclude, core_dumps, container, slurm_args, repeat, until_fail, expect, git_bisect_exit, env_pairs,
        unset, output_cap, quiet, attempt_title, hypothesis, baseline, inv_ref, as_json, cmd):
    """Run a repro under supervision: classify, capture, record.  dbglog run [OPTIONS] -- CMD [ARGS...]

    Server-shaped repros: dbglog run --server 'python -m my.server' --ready http://127.0.0.1:8000/v1/models
    -- python client.py"""
    reject_unknown_option(cmd)  # `run --timout 5 -- CMD` is a typo, not the command
    check_failure_name(expect, "--expect")
    opts = RunOptions(timeout=timeout, grace=grace, captures=captures, on_hang=on_hang, idle_timeout=idle_timeout,
                      server=server, ready=ready, ready_timeout=ready_timeout, escalate=escalate,
                      escalate_levels=escalate_levels, dump_include=dump_include, dump_exclude=dump_exclude,
                      core_dumps=core_dumps, container=container, slurm=slurm_args, repeat=repeat,
                      until_fail=until_fail,
                      output_cap_bytes=output_cap, echo=not (quiet or as_json))
    cmd = ops.check_run(cmd, opts)  # before the workspace is created
    if git_bisect_exit and attempt_title is not None:
        ops.check_attempt_under_git_bisect(os.getcwd())
    env = dict(env_pairs) | {k: None for k in unset}
    recs = open_records(create=True)
    from dbglog.cli.common import post_progress
    from dbglog.run.runner import Interrupted

    try:
        if baseline and attempt_title is None:
            raise DbglogError("--baseline goes with --attempt: it is what the attempt is judged against")
        with post_progress(as_json):  # (a progress line once the output's reading takes over a second)
            out = ops.run_repro(recs, cmd, opts, cwd=os.getcwd(), env=env, expect=expect,
                                attempt_title=attempt_title, hypothesis=hypothesis, inv_ref=inv_ref, warn=warn,
                                refuse_missing=not git_bisect_exit,  # (git bisect: a missing build skips)
                                baseline=baseline or 0)
    except Interrupted as e:  # Ctrl-C, SIGTERM, SIGHUP: the tree is stopped; record what ran
        _record_interrupted(recs, e, cmd, attempt_title, hypothesis, inv_ref, as_json)
    dicts, rep, a, added = out.runs, out.repeat, out.attempt, out.advice
    try:
        if as_json:
            emit(True, out.to_dict())
        else:
            # The summary is the command's output (stdout); `dbglog:` on stderr is for errors.
            for d in dicts:
                click.echo(_run_summary(d))
                _run_error(d)
            if repeat > 1:
                for h in rep.histogram_rows():
                    click.echo(f"  {h['count']:>3}× {h['outcome']}" + (f" {h['signature']}" if h["signature"] else ""))
            print_seen_before(out.seen_before)
            hint = ops.hang_hint(recs, dicts[-1]) if a is None and dicts else None
            if hint:
                click.echo(f"next: {hint}")
            if a is not None:
                click.echo(f"Attempt {a.number} recorded in {out.investigation} ({a.outcome})")
                _echo_rate_guess(a)
                for s in added:
                    click.echo(f"Next step {s.position} added: {s.text}")
                print_breaker(out.breaker)
        sys.stdout.flush()
        if out.failed_after:  # (the run stands recorded: said after its summary, never "nothing was changed")
            click.echo(f"dbglog: {out.failed_after}", err=True)
    except BrokenPipeError:  # (`run ... | head`: the run's verdict is still the exit status, not click's 1)
        os._exit(out.exit_code(git_bisect_exit, expect))
    sys.exit(out.exit_code(git_bisect_exit, expect))


def _record_interrupted(recs, e, cmd, attempt_title, hypothesis, inv_ref, as_json) -> None:
    """Record what an interrupted `dbglog run` ran (ops.record_interrupted), print it, then exit
    128 + the signal like the shell would."""
    dicts, a = ops.record_interrupted(recs, e, cmd, attempt_title=attempt_title, hypothesis=hypothesis,
                                      inv_ref=inv_ref)
    if as_json:
        emit(True, {"runs": dicts, "interrupted": str(e),
                    "attempt": a.to_dict() if a is not None else None})
    else:
        for d in dicts:
            click.echo(_run_summary(d))
            _run_error(d)
        if a is not None:
            click.echo(f"Attempt {a.number} recorded ({a.outcome})")
    sys.exit(128 + e.signum)


def _run_error(d: dict) -> None:
    """A run that could not start or was interrupted is also an error: one `dbglog:` line on stderr."""
    if d.get("error"):
        click.echo(safe_text(f"dbglog: run {d['id']}: {d['error']}"), err=True)


def _run_summary(d: dict) -> str:
    lines = [f"run {d['id']}: {d['outcome'].upper()}"
             + (f" [{d['signature']}]" if d["signature"] else "")
             + (f" {d['signal_name']}" if d.get("signal_name") and d["outcome"] != "hang" else "")
             + (f" exit {d['exit_code']}" if d["exit_code"] not in (None, 0) else "")
             + f" in {d['duration_s']:.2f}s"]
    if d.get("error"):
        lines.append(f"  error: {d['error']}")
    for k in d["key_lines"][:5]:
        lines.append(f"  line {k.get('line')}: {k.get('text', '').strip()[:200]}")
    lines += _capture_lines(d)
    lines += _survivor_lines(d["survivors"])
    lines += _server_lines(d)
    for n in d["notes"]:
        lines.append(f"  note: {n}")
    lines += _evidence_lines(d)
    lines.append(f"  output: {d['paths'].get('output', d['paths'])}")
    return safe_text("\n".join(lines))


def _capture_lines(d: dict) -> list[str]:
    lines = []
    for c in d["captures"]:
        if c.get("name", "").rsplit(":", 1)[-1] == "stuck":
            continue  # shown below with its frames
        lines.append(f"  capture {c.get('name')}: {c.get('status')}" + (f" -> {c['path']}" if c.get("path") else "")
                     + (f" ({c['note']})" if c.get("note") else ""))
    st = d.get("stuck")
    if st:  # the hang captures' guess at the stuck process (dbglog/run/captures.py)
        lines.append(f"  stuck process (guess): pid {st.get('pid')} {(st.get('cmdline') or '')[:80]}"
                     f" — {(st.get('reason') or '').removeprefix('guess: ')}")
        lines.extend(f"    at {f[:160]}" for f in (st.get("frames") or [])[:5])
    return lines


def _survivor_lines(survivors: list[dict]) -> list[str]:
    lines = []
    for s in survivors:
        if s.get("escaped"):  # left the tree (setsid, marker cleared); found as the subreaper's orphan
            lines.append(f"  SURVIVOR pid {s.get('pid')} ({s.get('name')}) escaped the process tree; "
                         + ("killed" if s.get("status") == "killed" else f"still alive ({s.get('status')})"))
        else:
            lines.append(f"  SURVIVOR pid {s.get('pid')} ({s.get('name')}, {s.get('status')}) is still alive")
    return lines


def _server_lines(d: dict) -> list[str]:
    lines = []
    srv = d.get("server")
    if srv:  # a server-shaped repro (dbglog/run/serve.py)
        lines.append(f"  server: {srv.get('state')}"
                     + (f", ready after {srv['ready_s']:.2f}s" if srv.get("ready_s") is not None else "")
                     + (f", {srv['exit']}" if srv.get("exit") else "")
                     + (f" ({srv['verdict']})" if srv.get("verdict") else ""))
    lv = d.get("kernel_api_level")
    if lv:
        lines.append(f"  kernel-API log level {lv.get('level')}"
                     + (f"; dumps in {lv['dump_dir']} ({lv.get('dump_count', 0)} file(s))" if lv.get("dump_dir") else ""))
    return lines


def _evidence_lines(d: dict) -> list[str]:
    lines = []
    ev = d.get("evidence") or []
    for e in ev:
        if e.get("summary"):
            lines.append(f"  evidence: {e['summary'][:300]}")
        # (a parser's first finding is often its summary: printed once; "pid N: " is the summary's own)
        more = [f for f in e.get("findings") or [] if f != e.get("summary") and f"pid {e.get('pid')}: {f}" != e.get("summary")]
        for f in more[:4]:
            lines.append(f"    - {f[:200]}")
    if not any(e.get("kind") == "kernel-api" for e in ev):
        for k in d.get("kernel_api") or []:
            lines.append(f"  last kernel API call: {k.get('name')} ({k.get('status')})")
    return lines


@click.group()
def runs():
    """Browse recorded runs."""


@runs.command("list")
@click.option("--limit", type=COUNT, default=20, show_default=True)
@json_option
def runs_list(limit, as_json):
    """Most recent runs first."""
    recs = open_records()
    rows = ops.recent_runs(recs, limit)

    def human():
        if not rows:
            click.echo("No runs yet: `dbglog run -- CMD` records one.")
        for r in rows:
            sig = f" [{r['signature']}]" if r["signature"] else ""
            click.echo(f"{r['id']}  {r['outcome']:<5}{sig}  {r['duration_s']:.2f}s  {' '.join(r['cmd'])[:70]}")

    emit(as_json, rows, human)


@runs.command("show")
@click.argument("ref")
@json_option
def runs_show(ref, as_json):
    """One run: outcome, signature, key lines, captures, paths."""
    recs = open_records()
    r = ops.run_record(recs, ref)
    emit(as_json, r, lambda: click.echo(f"{' '.join(r['cmd'])}\n{_run_summary(r)}"))


@runs.command("prune")
@click.option("--older-than", "older_than", type=GRACE, metavar="DAYS",
              help="Remove the outputs of runs older than DAYS days.")
@click.option("--keep", type=click.IntRange(min=0), metavar="N", help="Keep the newest N runs' outputs, remove the rest.")
@click.option("--max-size", "max_size", type=LIMIT_SIZE, metavar="SIZE", help="Remove the oldest until the rest fits (e.g. 2G, 500M).")
@click.option("--dry-run", is_flag=True, help="Only say what would be removed.")
@json_option
def runs_prune(older_than, keep, max_size, dry_run, as_json):
    """Remove old run outputs from .dbglog/runs/. A run an attempt or a bisection cites keeps its
    record (only its output files go); the others are deleted. `dbglog run` also keeps the
    directory under a size cap: [runs] max_size in .dbglog/config.toml (default 2G, 0 = none)."""
    if older_than is None and keep is None and max_size is None:
        raise DbglogError("say what to prune: --older-than DAYS, --keep N or --max-size SIZE")
    recs = open_records()
    out = recs.prune_runs(older_than_days=older_than, keep=keep, max_bytes=max_size or None, dry_run=dry_run)
    from dbglog.bisect.session import prune_secrets

    out["secrets_removed"] = prune_secrets(recs.store, dry_run=dry_run)  # ended bisections' tokens (issue 30)

    def human():
        verb = "Would remove" if dry_run else "Removed"
        if out["secrets_removed"]:
            click.echo(f"{verb} the secret files of {len(out['secrets_removed'])} ended bisection(s)")
        click.echo(f"{verb} the outputs of {len(out['pruned'])} run(s), {out['freed_bytes'] / (1 << 20):.1f} MiB"
                   + (f"; {len(out['rows_kept'])} record(s) kept (cited by attempts or bisections)"
                      if out["rows_kept"] else ""))

    emit(as_json, out, human)


@click.command("env")
@click.option("--python", "python", metavar="PATH", help="Probe torch/triton/... in this interpreter.")
@click.option("--timeout", type=SECONDS, default=5.0, show_default=True, help="Per-probe time limit.")
@json_option
def env_cmd(python, timeout, as_json):
    """Environment snapshot: OS, CPU, Python, git, GPUs, driver, CUDA/ROCm, ML packages, env vars."""
    from dbglog.run import envinfo

    snap = envinfo.collect(timeout=timeout, python=python)
    emit(as_json, snap, lambda: click.echo(safe_text("\n".join(envinfo.markdown_lines(snap)))))


@click.group()
def signature():
    """Failure signatures: the built-in catalog plus yours in .dbglog/config.toml."""


@signature.command("list")
@json_option
def signature_list(as_json):
    """All signatures, most causal first."""
    from dbglog.diagnose import signatures

    sigs = sorted(signatures.all_signatures(_config_path()), key=lambda s: -s.rank)
    rows = [{"name": s.name, "rank": s.rank, "outcome": s.outcome, "wrapper": s.wrapper,
             "source": s.source, "description": s.description} for s in sigs]

    def human():
        for r in rows:
            click.echo(f"{r['rank']:>4}  {r['name']:<32} {r['source']:<8} {r['description']}")

    emit(as_json, rows, human)


@signature.command("test")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@json_option
def signature_test(file, as_json):
    """Classify a log FILE (or - for stdin): the most causal signature and its key lines."""
    if file != "-":
        from dbglog.util.fserrors import check_regular_file

        check_regular_file(file)  # a FIFO or /dev/zero: refused, not read forever
    try:  # read in one pass, in blocks: memory stays bounded whatever the log's size
        with (open(file, "rb") if file != "-" else contextlib.nullcontext(sys.stdin.buffer)) as src:
            data_out = ops.classify_log(src, config_path=_config_path(),
                                        save_dir=os.path.dirname(os.path.abspath(file)) if file != "-" else None)
    except OSError as e:
        raise DbglogError(f"cannot read {file}: {e.strerror}") from None
    if data_out["fingerprint"] is not None:
        data_out["seen_before"] = _seen_in_workspace(data_out["fingerprint"])
    from dbglog.util.redact import clean_obj

    data_out = clean_obj(data_out)  # (a key line holding a token was printed in clear; `run` shows it redacted)
    m, api = data_out["signature"], data_out["kernel_api"]

    def human():
        from dbglog.diagnose import evidence

        for w in data_out["warnings"]:
            click.echo(f"warning: {w}", err=True)
        if m is None:
            click.echo("No known failure signature.")
        else:
            click.echo(f"{m['name']} (rank {m['rank']}) at line {m['line_no']}: {m['line'].strip()[:200]}")
            for other in (m["others"] or [])[:5]:
                click.echo(f"  also: {other}")
        if api is not None:
            click.echo(evidence.kernel_api_evidence(api)["summary"].replace("last ", "Last ", 1))
        for e in data_out["evidence"]:
            click.echo(f"evidence: {e.get('summary')}")
            for f in (e.get("findings") or [])[:4]:
                click.echo(f"  - {f}")
        print_seen_before(data_out.get("seen_before"))

    emit(as_json, data_out, human)
    sys.exit(0 if m else 1)


@signature.command("add")
@click.argument("name")
@click.argument("pattern")
@click.option("--rank", type=INT, default=75, show_default=True, help="Higher = more causal.")
@json_option
def signature_add(name, pattern, rank, as_json):
    """Add a user signature NAME matching regex PATTERN to .dbglog/config.toml."""
    import re

    from dbglog.diagnose import signatures

    try:
        re.compile(pattern)
    except (re.error, OverflowError, RecursionError) as e:  # a{4294967296} raises OverflowError
        raise DbglogError(f"bad pattern {pattern!r}: {e}") from None
    recs = open_records(create=True)
    signatures.add_user_signature(recs.ws.config_path, name, pattern, rank)
    emit(as_json, {"name": name, "pattern": pattern, "rank": rank, "config": str(recs.ws.config_path)},
         lambda: click.echo(f"Added signature {name} to {recs.ws.config_path}"))


def _seen_in_workspace(fp: dict) -> dict | None:
    """The seen-before block of a classified log, when there is a workspace here to ask (else None)."""
    from dbglog.diagnose.fingerprint import Fingerprint
    from dbglog.util import workspace

    ws = workspace.find()
    if not ws.exists:
        return None
    return ops.seen_before(open_records(), Fingerprint.from_dict(fp), warn=warn)


def print_seen_before(block: dict | None) -> None:
    """What the knowledge base knows about this failure (kb/failures.py), under the verdict."""
    if block:
        click.echo(safe_text("\n".join(block["lines"])))


def print_breaker(b: dict | None) -> None:
    """The circuit breaker (ops.circuit_breaker): the same failure N times; what to do instead."""
    from dbglog.fastpath import print_breaker as show

    show(b, echo=click.echo)


@click.command("rerun")
@click.argument("ref")
@click.option("--repeat", type=COUNT, default=None, help="Runs to make (default: as many as the original).")
@click.option("--attempt", "attempt_title", metavar="TITLE", help="Also record the new runs as an attempt.")
@inv_option
@json_option
def rerun(ref, repeat, attempt_title, inv_ref, as_json):
    """Run a recorded attempt (its number) or run (its id) again, exactly as recorded -- command,
    directory, environment and the run's options (timeouts, captures, server...) -- and compare the
    failure rate with the original's."""
    recs = open_records()
    res = ops.rerun(recs, ref, repeat=repeat, attempt_title=attempt_title, inv_ref=inv_ref, warn=warn)
    out, cmp = res["out"], res["comparison"]
    if as_json:
        emit(True, {"source": res["source"], "original": res["original"], "comparison": cmp} | out.to_dict())
    else:
        for d in out.runs:
            click.echo(_run_summary(d))
        o = res["original"]
        click.echo(f"{res['source']} again: failed {sum(d['outcome'] != 'pass' for d in out.runs)} of "
                   f"{len(out.runs)} run(s); the original failed {o['failed']} of {o['runs']}")
        if cmp:
            click.echo(f"  {cmp['words']}")
        if out.attempt is not None:
            click.echo(f"Attempt {out.attempt.number} recorded in {out.investigation} ({out.attempt.outcome})")
            _echo_rate_guess(out.attempt)
    if out.failed_after:
        click.echo(f"dbglog: {out.failed_after}", err=True)
    sys.exit(out.exit_code())


def _echo_rate_guess(a) -> None:
    """The outcome an intermittent attempt was given from its failure rate is a guess: say so, with its counts,
    under the "recorded" line (it was only in the record, so "(failed)" read as a verdict)."""
    line = next((ln.strip().lstrip("- ") for ln in (a.result or "").splitlines()
                 if ln.strip().lstrip("- ").startswith("guess from failure rates:")), None)
    if line:
        click.echo(f"  {line}")
