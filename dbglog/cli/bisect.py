"""The bisect group: status, log, resume, abort, mark, git, toggles.

Imports ``common`` and the bisection services (dbglog/bisect/, slurm, redact); the drivers are
imported by the command that runs them."""

from __future__ import annotations

import os
import sys

import click

from dbglog import ops
from dbglog.cli.common import (COUNT, check_failure_name, cluster_options, emit, inv_option, json_option,
                               open_records, reject_unknown_option, safe_text, step_options, timeout_options)
from dbglog.util.errors import DbglogError


@click.group("bisect")
def bisect_group():
    """Find the first bad commit (git) or the minimal sets of suspect toggles (toggles)."""


_session = ops.bisect_session


@bisect_group.command("status")
@click.argument("ref", required=False)
@json_option
def bisect_status(ref, as_json):
    """Where a bisection stands (default: the latest)."""
    recs = open_records()
    info = ops.bisect_status(recs, ref)

    def human():
        click.echo(f"{info['id']} ({info['kind']}): {info['status']}")
        for k, v in info.items():
            if k not in ("id", "kind", "status", "result") and v not in (None, [], {}, ""):
                click.echo(safe_text(f"  {k}: {v}"))
        if info["result"]:
            click.echo(safe_text(f"  result: {info['result'].get('message', info['result'].get('status'))}"))

    emit(as_json, info, human)


@bisect_group.command("log")
@click.argument("ref", required=False)
@json_option
def bisect_log(ref, as_json):
    """Every step of a bisection: key, verdict, why, outcome, runs."""
    log = ops.bisect_log(open_records(), ref)

    def human():
        click.echo(f"# {log['id']} ({log['kind']}) {log['status']}")
        for n, t in enumerate(log["steps"], 1):
            click.echo(f"{n:>3}. {t['verdict']:<5} {t['key'][:60]:<60} {t['reason']} [{t['source']}]")

    emit(as_json, {"id": log["id"], "kind": log["kind"], "steps": log["steps"]}, human)


@bisect_group.command("resume")
@click.argument("ref", required=False)
@click.option("--max-steps", "--budget", "max_steps", type=COUNT, metavar="N",
              help="git bisections: a new budget of commits tried (the steps already done count).")
@json_option
def bisect_resume(ref, max_steps, as_json):
    """Continue an interrupted bisection; finished steps are not re-run."""
    result = ops.bisect_resume(open_records(), ref, max_steps=max_steps, progress=not as_json)
    _bisect_finish(result, as_json)


def _bisect_finish(result: dict, as_json: bool) -> None:
    if result.get("exit_code", 0) == 0 and "next" not in result:  # found: what an agent does with it
        result["next"] = ["dbglog next add \"FIX: ...\"  (the fix it points at, to try)",
                          "dbglog status resolved --root-cause \"...\"  (once the fix is confirmed)"]
    seen = ops.bisect_seen_before(open_records(sync=False), result)  # (issue 27: under the first bad verdict)
    if seen is not None:
        result["seen_before"] = seen
    try:
        emit(as_json, result, lambda: click.echo(result.get("report") or result.get("message", result["status"])))
        if not as_json and seen is not None:
            click.echo(safe_text("\n".join(_seen_lines(seen, result.get("session")))))
        if not as_json and result.get("next"):
            click.echo("next: " + "; ".join(result["next"]))
        sys.stdout.flush()
    except BrokenPipeError:  # (`bisect ... | tail`: 0 found, 1 inconclusive, 2 refused; not click's 1 for EPIPE)
        os._exit(result.get("exit_code", 0))
    sys.exit(result.get("exit_code", 0))


def _seen_lines(seen: dict, sid: str | None) -> list[str]:
    """The seen-before block under the report; one line pointing up when the progress already showed it
    under the first bad verdict."""
    from dbglog.bisect.session import RECALLED_LIVE

    if sid in RECALLED_LIVE and len(seen["lines"]) > 1:
        return [f"seen before: {seen['fingerprint']['key']}, shown under the first bad verdict above"]
    return seen["lines"]


@bisect_group.command("abort")
@click.argument("ref", required=False)
@json_option
def bisect_abort(ref, as_json):
    """Stop a bisection: kill its leftovers, remove its worktrees, restore edited files."""
    from dbglog.bisect.drivers import abort

    recs = open_records()
    session = _session(recs, ref)
    if session["status"] in ("done", "refused"):  # its result would be overwritten with "aborted"
        raise DbglogError(f"bisection {session['id']} has finished ({session['status']}): nothing to abort, its "
                          f"result stays (`dbglog bisect status {session['id']}`)")
    out = abort(recs, session)
    emit(as_json, out, lambda: click.echo(f"Aborted {out['id']}"))


@bisect_group.command("mark")
@click.argument("ref")
@click.argument("verdict", type=click.Choice(["good", "bad", "skip"]))
@click.option("--session", "session_ref", help="The bisection (default: the latest).")
@json_option
def bisect_mark(ref, verdict, session_ref, as_json):
    """Correct a verdict (REV for git, comma-separated toggle names for toggles); resume replays."""
    from dbglog.bisect.drivers import mark

    recs = open_records()
    s = _session(recs, session_ref)
    step = mark(recs, s, ref, verdict)
    emit(as_json, step.to_dict() | {"session": s["id"]},
         lambda: click.echo(f"Marked {step.key} {verdict} in {s['id']}; `dbglog bisect resume` replays the search"))


def _cluster_launcher(slurm_args, launcher):
    """``--slurm ARGS`` as the session's launcher (``srun ARGS``); a srun ``--launcher`` gets the same
    Slurm treatment and checks (dbglog/run/slurm.py)."""
    from dbglog.run import slurm

    if slurm_args is not None and launcher:
        raise DbglogError("--slurm and --launcher both set how steps are launched; use one")
    launcher = slurm.launcher(slurm_args) if slurm_args is not None else launcher
    slurm.check_launcher(launcher)
    return launcher


def _scratch(recs, scratch, launcher):
    from dbglog.run import slurm

    if scratch is None and slurm.is_srun(launcher):
        scratch = slurm.scratch_from_config(recs.ws.config_path)
    return slurm.scratch_dir(scratch)


def _step_setup(cmd, slurm_args, launcher, scratch):
    """What `bisect git` and `bisect toggles` do alike once their own checks pass: the repro (a
    leading ``--`` dropped), the launcher, the workspace (created) and the scratch directory."""
    cmd = list(cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    launcher = _cluster_launcher(slurm_args, launcher)
    recs = open_records(create=True)
    return cmd, recs, launcher, _scratch(recs, scratch, launcher)


# `dbglog bisect git` (issue 6; driver in dbglog/bisect/history.py)
@bisect_group.command("git", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--good", "goods", multiple=True, metavar="REV", help="A commit without the bug "
              "(repeatable).")
@click.option("--bad", metavar="REV", help="A commit with the bug (its failure defines 'bad').")
@click.option("--first-parent", is_flag=True, help="Follow first parents only: finds the merge that brought it in.")
@click.option("--match", metavar="SIGNATURE|REGEX", help="Bad = this signature (glob) or regex over the output.")
@click.option("--any-failure", is_flag=True, help="Bad = any failure (not just the bad end's).")
@click.option("--build", metavar="CMD", help="Shell command run before the repro each step; failure = skip.")
@timeout_options("Seconds per run before it is a hang (default: 5x the bad end's time, at least 10 s).")
@click.option("--repeat", type=COUNT, default=1, show_default=True, help="Runs per step; disagreement = flaky.")
@click.option("--jobs", "-j", type=COUNT, default=1, show_default=True, help="Commits tested at once (k-ary search, "
              "one worktree each).")
@cluster_options("step", "PREFIX", "Run each step through a prefix, e.g. 'srun -N1 --gres=gpu:1'.")
@click.option("--max-steps", "--budget", "max_steps", type=COUNT, metavar="N",
              help="Try at most N commits (the endpoint checks not counted); the untried candidates are listed. "
                   "With --flaky/--rate: at most N repro runs in all.")
@click.option("--flaky", is_flag=True, help="The failure is intermittent: weigh every run (a posterior over the "
              "commits) instead of trusting one verdict per step; automatic when repeats disagree.")
@click.option("--rate", "rate", is_flag=True, help="Failure-rate bisection: both ends fail, the bad end more often; "
              "find the commit where the rate went up.")
@click.option("--confidence", type=click.FloatRange(0.5, 1.0, min_open=True, max_open=True), default=0.95,
              show_default=True, help="With --flaky/--rate: stop when one commit has this probability.")
@step_options
@inv_option
@json_option
@click.argument("cmd", nargs=-1, type=click.UNPROCESSED)
def bisect_git(goods, bad, first_parent, match, any_failure, build, timeout, grace, repeat, jobs, launcher,
               slurm_args, scratch, max_steps, flaky, rate, confidence, captures, on_hang, server, ready, ready_timeout, idle_timeout, shared_cache, escalate,
               inv_ref, as_json, cmd):
    """Find the first bad commit between --good and --bad: dbglog bisect git --good REV --bad REV -- CMD...

    Verifies both ends first, works in its own worktrees under .dbglog/ (your checkout is never
    touched), skips commits that fail differently, persists every step (resume/abort/mark), and
    records the bisection in the current investigation. Exit 0 found, 1 inconclusive/flaky,
    2 refused.
    """
    from dbglog.bisect import history
    from dbglog.bisect.spec import HistorySpec

    reject_unknown_option(cmd)  # before "missing --good": `--god HEAD~5` is a typo of it
    for name, value in (("--good", goods), ("--bad", bad)):
        if not value:
            raise DbglogError(f"missing option {name}: dbglog bisect git --good REV --bad REV -- CMD ARGS")
    check_failure_name(match, "--match", regex=True)
    cmd, recs, launcher, scratch = _step_setup(cmd, slurm_args, launcher, scratch)
    spec = HistorySpec(good_refs=list(goods), bad_ref=bad, cmd=cmd, build=build, timeout=timeout, grace=grace,
                       repeat=repeat, jobs=jobs, launcher=launcher, match=match, any_failure=any_failure,
                       first_parent=first_parent, captures=captures, on_hang=on_hang, max_steps=max_steps,
                       server=server, ready=ready, ready_timeout=ready_timeout, idle_timeout=idle_timeout,
                       shared_cache=shared_cache, scratch=scratch, flaky=flaky, rate=rate, confidence=confidence,
                       escalate=escalate)
    result = history.start(recs, spec, inv_ref=inv_ref, progress=not as_json)
    _bisect_finish(result, as_json)


class _ToggleKindsCommand(click.Command):
    """`bisect toggles`, whose first options are the registered toggle kinds' (bisect/kinds.py). They
    are read when the command parses or prints help (not at import: start-up, and a kind registered
    later is there too)."""

    _kind_params: tuple = ((), [])

    def get_params(self, ctx):
        from dbglog.bisect import kinds

        own = super().get_params(ctx)
        key = tuple(kinds.options())
        if self._kind_params[0] != key:  # the same Option objects on every call: click orders by identity
            taken = {p.name for p in own} | {o for p in own for o in p.opts}
            clash = [o.flag for o in key if o.flag in taken or o.dest in taken]
            if clash:  # a kind's option would silently shadow one of the command's own
                raise ValueError(f"toggle kind option {clash[0]} clashes with a `bisect toggles` option")
            self._kind_params = (key, [click.Option([o.flag, o.dest], multiple=o.multiple, metavar=o.metavar,
                                                    help=o.help) for o in key])
        return self._kind_params[1] + own


@bisect_group.command("toggles", cls=_ToggleKindsCommand,
                      context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--count", metavar="NAME", help="Counting mode: find the N-th call of dbglog.toggle(NAME, count=True) "
              "that matters.")
@click.option("--from-diffs", "from_diffs", is_flag=False, flag_value="", default=None, metavar="[INVESTIGATION]",
              help="Toggles from the key-differences rows that have an apply spec; marks them at the end.")
@click.option("--mode", type=click.Choice(["auto", "enable", "disable"]), default="auto", show_default=True,
              help="enable: all-on fails; disable: all-off fails (what must be removed); auto: detect.")
@click.option("--max-sets", type=COUNT, help="Stop after this many sets.")
@click.option("--max-set-size", type=COUNT, help="Give up on sets larger than this.")
@click.option("--max-runs", type=COUNT, help="At most this many distinct trials.")
@click.option("--strategy", type=click.Choice(["auto", "bisect", "ddmin"]), default="auto", show_default=True)
@click.option("--first-only", is_flag=True, help="Stop looking after disjoint sets (no overlap checks).")
@timeout_options("Seconds per trial before it is a hang (default: 5x the failing end).")
@click.option("--repeat", type=COUNT, default=1, show_default=True,
              help="Runs per trial; runs that disagree switch to flaky-safe verdicts (--bad-if-any).")
@click.option("--flaky", is_flag=True, help="Intermittent failure: a posterior over single toggles and pairs, "
              "runs chosen by expected information, stop at --confidence or --budget runs.")
@click.option("--confidence", type=click.FloatRange(0.5, 1.0, min_open=True, max_open=True), default=0.95,
              show_default=True, help="With --flaky: stop when one set has this probability.")
@click.option("--budget", type=COUNT, metavar="N", help="With --flaky: at most N repro runs in all.")
@click.option("--bad-if-any", "bad_if_any", is_flag=True,
              help="Flaky target: a trial is bad if any of its runs fails (N = --repeat, else calibrated "
                   "from the failing end's failure rate); automatic once runs disagree.")
@click.option("--jobs", "-j", type=COUNT, default=1, show_default=True, help="Trials in parallel.")
@cluster_options("trial", "CMD", "Prefix for every trial (e.g. 'srun -n1', 'ncu --target-processes all').")
@click.option("--build", metavar="SHELL_CMD", help="Run before every trial; failure = skip.")
@click.option("--match", metavar="SIG|REGEX", help="The failure to hunt (signature, glob, outcome or regex).")
@click.option("--any-failure", is_flag=True, help="Any failure counts as bad.")
@click.option("--in-place", is_flag=True, help="Edit the real files (journaled, always restored) instead of a copy.")
@step_options
@inv_option
@json_option
@click.argument("cmd", nargs=-1, type=click.UNPROCESSED)
def bisect_toggles(count, from_diffs, mode, max_sets, max_set_size, max_runs, strategy, first_only, timeout, grace,
                   repeat, flaky, confidence, budget, bad_if_any, jobs, launcher, slurm_args, scratch, build, match,
                   any_failure, in_place, captures, on_hang, server, ready, ready_timeout, idle_timeout, shared_cache,
                   escalate, inv_ref, as_json, cmd, **toggle_options):
    """Find every minimal set of toggles that causes the failure.  ... -- CMD [ARGS...]"""
    import shlex

    from dbglog.bisect import toggles
    from dbglog.bisect.spec import ToggleSpec

    reject_unknown_option(cmd)
    check_failure_name(match, "--match", regex=True)
    from dbglog.bisect import kinds

    kinds.remember_secrets(toggle_options)  # --env HF_TOKEN=...: the value never reaches logs/ or the DB
    cmd, recs, launcher, scratch = _step_setup(cmd, slurm_args, launcher, scratch)
    argv = sys.argv[1:] if sys.argv and sys.argv[0].endswith(("dbglog", "__main__.py")) else []
    spec = ToggleSpec(
        cmd=cmd, toggle_options=toggle_options, count=count, from_diffs=from_diffs, mode=mode, max_sets=max_sets,
        max_set_size=max_set_size, max_runs=max_runs, strategy=strategy, exhaustive=not first_only, timeout=timeout,
        grace=grace, repeat=repeat, jobs=jobs, launcher=launcher, build=build, match=match, any_failure=any_failure,
        in_place=in_place, argv_text=shlex.join(["dbglog", *argv]) if argv else "", captures=captures,
        on_hang=on_hang, bad_if_any=bad_if_any, scratch=scratch, flaky=flaky, confidence=confidence, budget=budget,
        server=server, ready=ready, ready_timeout=ready_timeout, idle_timeout=idle_timeout, shared_cache=shared_cache,
        escalate=escalate)
    result = toggles.start(recs, spec, cwd=os.getcwd(), inv_ref=inv_ref, progress=not as_json)
    _bisect_finish(result, as_json)
