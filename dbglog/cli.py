"""Command line: parse arguments, call the library, print. Nothing else lives here.

Every command takes ``--json`` (stable shapes, documented in README.md). Errors the user can
fix print one line ``dbglog: ...`` to stderr and exit 2, with ``{"error": ...}`` on stdout
under ``--json``. Heavy modules (rich, jinja2, markdown-it) are imported only by the commands
that need them, so ``dbglog --help`` stays fast.
"""

from __future__ import annotations

import json
import os
import sys

import click

from dbglog import ops
from dbglog.errors import DbglogError
from dbglog.present import print_hit as _print_hit, render_show

# --- plumbing -----------------------------------------------------------------------


class _LazyHelpOption(click.Option):
    """An option whose help text is built only when help is shown: the capture registry
    (dbglog/captures.py) is then not imported by every start-up."""

    def __init__(self, *args, help_fn=None, **kwargs):
        super().__init__(*args, **kwargs)
        self._help_fn = help_fn

    def get_help_record(self, ctx):
        if self._help_fn is not None:
            self.help, self._help_fn = self._help_fn(), None
        return super().get_help_record(ctx)


def _capture_help(prefix: str | None = None):
    def build() -> str:
        from dbglog import captures

        if prefix is None:
            return captures.help_text()
        return prefix + ", ".join(captures.names()) + " (repeatable)."
    return build


def json_option(f):
    return click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")(f)


class _Seconds(click.ParamType):
    """A finite, non-negative number of seconds (``nan``, ``inf``, ``-1`` are refused, not run)."""

    name = "seconds"

    def __init__(self, allow_zero: bool = False):
        self.allow_zero = allow_zero

    def convert(self, value, param, ctx):
        if isinstance(value, float):
            v = value
        else:
            try:
                v = float(value)
            except (TypeError, ValueError):
                self.fail(f"{value!r} is not a number", param, ctx)
        if v != v or v in (float("inf"), float("-inf")) or v < 0 or (v == 0 and not self.allow_zero):
            self.fail(f"{value!r} must be a finite number {'>= 0' if self.allow_zero else '> 0'}", param, ctx)
        return v


SECONDS = _Seconds()  # --timeout
GRACE = _Seconds(allow_zero=True)  # --grace, --older-than
INT = click.IntRange(-(2**31), 2**31 - 1)  # what SQLite and every loop can hold
COUNT = click.IntRange(1, 2**31 - 1)  # --jobs, --limit, budgets, attempt numbers


def step_options(f):
    """How each bisection step runs, shared by `bisect git` and `bisect toggles` (an option group as a
    decorator, the sqlite-utils way): server-shaped steps, the idle hang, the Triton cache, escalation."""
    opts = [
        click.option("--server", metavar="CMD", help="Each step: start this server (in the step's worktree or copy), "
                     "wait for --ready, then run the command after -- as its client."),
        click.option("--ready", metavar="URL|CMD", help="With --server: ready when the URL answers 2xx or CMD exits 0."),
        click.option("--ready-timeout", "ready_timeout", type=SECONDS, default=120.0, show_default=True,
                     help="With --server: seconds to wait for readiness (then server_not_ready)."),
        click.option("--idle-timeout", "idle_timeout", type=SECONDS, help="Alive but silent for S seconds = hang."),
        click.option("--shared-cache", "shared_cache", is_flag=True, help="Keep the Triton cache across steps "
                     "(default: a fresh TRITON_CACHE_DIR per step)."),
        click.option("--escalate", is_flag=True, help="With --repeat: raise the kernel-API log level (1, 3, 10) "
                     "across a step's failing repeats."),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def inv_option(f):
    return click.option("-i", "--investigation", "inv_ref", metavar="ID",
                        help="Investigation (id, id prefix or title words); default: the current one.")(f)


_CTRL = None


def safe_text(s: str) -> str:
    """Text for the terminal: control characters and escape sequences from documents shown inert."""
    global _CTRL
    if _CTRL is None:
        import re

        _CTRL = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|[\x00-\x08\x0b-\x1f\x7f-\x9f]")
    return _CTRL.sub(lambda m: repr(m.group(0))[1:-1], s or "")


def emit(as_json: bool, data, human=None) -> None:
    if as_json:
        from dbglog.redact import json_text

        click.echo(json_text(json.dumps(data, indent=2, ensure_ascii=False)))
    elif human is not None:
        human()


def warn(message: str) -> None:
    click.echo(f"dbglog: warning: {message}", err=True)


def open_records(create: bool = False, sync: bool = True):
    return ops.open_records(create=create, sync=sync, warn=warn)


text_arg = ops.check_text  # reject text that is not valid Unicode (undecodable bytes from the shell)


def stdin_is_tty() -> bool:
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


class Group(click.Group):
    def list_commands(self, ctx):
        return list(self.commands)  # definition order: the protocol's order


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="dbglog")
def cli():
    """dbglog: a debug-log knowledge base and bisection assistant.

    Search what was tried, record attempts, keep the key-differences table and the
    what-to-try-next list, mirrored to reviewable markdown in logs/.
    """


# --- workspace ----------------------------------------------------------------------


@cli.command()
@json_option
def init(as_json):
    """Create a workspace (.dbglog/ and logs/) at the git root or here."""
    from dbglog import workspace
    from dbglog.merge import configure_git
    from dbglog.records import Records

    ws = workspace.find()
    existed = ws.exists
    recs = Records(ws, create=True)
    report = recs.sync()  # a fresh clone: take in the logs/ that came with it
    recs.close()
    git = configure_git(ws.root, ws.logs_dir, ws.dir)  # (re)point git's merge driver at this dbglog
    ws.upgrade_gitignore()  # an older dbglog's .gitignore showed as untracked
    data = {"workspace": str(ws.dir), "logs": str(ws.logs_dir), "created": not existed, "git_merge_driver": git,
            "imported": report.added + report.imported}
    emit(as_json, data, lambda: click.echo(
        f"{'Reinitialized' if existed else 'Initialized'} dbglog workspace in {ws.dir}"
        + (f" ({len(data['imported'])} investigation(s) taken in from logs/)" if data["imported"] else "")))


@cli.command()
@click.argument("title", required=False)
@click.option("--symptom", default="", help="What goes wrong, as seen by the user.")
@click.option("--file", "files", multiple=True, help="A related file (repeatable).")
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@click.option("--no-env", is_flag=True, help="Do not capture an environment snapshot.")
@json_option
def new(title, symptom, files, tags, no_env, as_json):
    """Start an investigation and make it current."""
    text_arg(title, "title")
    text_arg(symptom, "symptom")
    recs = open_records(create=True)
    inv = ops.new_investigation(recs, title, symptom=symptom, files=files, tags=tags, environment=not no_env)
    data = inv.to_dict() | {"path": recs.path_for(inv.id)}
    emit(as_json, data, lambda: click.echo(f"{inv.id}  {inv.title}\n  -> {recs.path_for(inv.id)}"))


@cli.command("list")
@click.option("--status", type=click.Choice(["open", "resolved", "wontfix"]), help="Only this status.")
@json_option
def list_(status, as_json):
    """List investigations, most recently updated first."""
    recs = open_records()
    rows = recs.store.summaries(status)
    cur = recs.current()
    for r in rows:
        r["current"] = r["id"] == cur

    def human():
        if not rows:
            click.echo("No investigations yet: `dbglog new TITLE` starts one.")
        for r in rows:
            mark = "*" if r["current"] else " "
            click.echo(f"{mark} {r['id']:<44} {r['status']:<8} {r['attempts']:>3} att  {r['title']}")

    emit(as_json, rows, human)


@cli.command()
@click.argument("ref", required=False)
@click.option("--markdown", is_flag=True, help="Print the markdown mirror file.")
@json_option
def show(ref, markdown, as_json):
    """Show an investigation (default: the current one)."""
    recs = open_records()
    inv_id = recs.resolve(ref)
    inv = recs.store.load(inv_id)
    if markdown and not as_json:
        click.echo((recs.ws.root / recs.path_for(inv_id)).read_text(encoding="utf-8"), nl=False)
        return
    emit(as_json, inv.to_dict() | {"path": recs.path_for(inv_id)}, lambda: render_show(inv, recs.path_for(inv_id)))


@cli.command()
@click.argument("ref")
@json_option
def use(ref, as_json):
    """Make an investigation the current one."""
    recs = open_records()
    inv_id = recs.use(ref)
    emit(as_json, {"current": inv_id}, lambda: click.echo(f"Now on {inv_id}"))


@cli.command()
@click.argument("args", nargs=-1, required=True, metavar="[ID] open|resolved|wontfix")
@click.option("--root-cause", help="What the bug turned out to be.")
@json_option
def status(args, root_cause, as_json):
    """Set an investigation's status (and root cause)."""
    if len(args) > 2:
        raise DbglogError("usage: dbglog status [ID] open|resolved|wontfix [--root-cause TEXT]")
    ref, st = (None, args[0]) if len(args) == 1 else args
    text_arg(root_cause, "root cause")
    recs = open_records()
    inv = recs.set_status(recs.resolve(ref), st, root_cause)
    emit(as_json, {"id": inv.id, "status": inv.status, "root_cause": inv.root_cause},
         lambda: click.echo(f"{inv.id}: {inv.status}" + (f" (root cause: {inv.root_cause})" if inv.root_cause else "")
                            + ("\n  next: commit logs/ with the fix" if inv.status == "resolved" else "")))


# --- attempts -----------------------------------------------------------------------


@cli.group()
def attempt():
    """Record and browse numbered attempts."""


def edit_attempt_in_editor(initial: dict) -> dict:
    """Open $EDITOR on the attempt template; return the fields the user filled in."""
    from dbglog import mirror

    lines = ["# Fill in the fields; lines starting with '#' are ignored. Save and quit to record.", ""]
    for key, label in (("title", "Title"), ("hypothesis", "Hypothesis"), ("did", "What you did"),
                       ("result", "Result"), ("conclusion", "Conclusion"), ("outcome", "Outcome")):
        lines += [f"**{label}:** {initial.get(key) or ''}".rstrip(), ""]
    edited = click.edit("\n".join(lines), extension=".md")
    if edited is None:
        raise DbglogError("editor closed without saving; nothing recorded")
    body = [ln for ln in edited.split("\n") if not ln.startswith("# ")]
    labels = {"Title": "title", "Hypothesis": "hypothesis", "What you did": "did", "Result": "result",
              "Conclusion": "conclusion", "Outcome": "outcome"}
    vals, _ = mirror.scan_fields(body, labels)
    return {k: v for k, v in vals.items() if v}


@attempt.command("add")
@click.argument("title", required=False)
@click.option("--hypothesis", "-H", help="What you think is going on.")
@click.option("--did", "-d", help="What you did (command, change).")
@click.option("--result", "-r", help="What happened.")
@click.option("--conclusion", "-c", help="What it tells you.")
@click.option("--outcome", "-o", help="worked | failed | partial | inconclusive | untested")
@click.option("--run", "runs", multiple=True, help="Link a run id (repeatable).")
@inv_option
@json_option
def attempt_add(title, hypothesis, did, result, conclusion, outcome, runs, inv_ref, as_json):
    """Record an attempt. Opens $EDITOR for missing fields when run from a terminal."""
    fields = {"title": title, "hypothesis": hypothesis, "did": did, "result": result,
              "conclusion": conclusion, "outcome": outcome}
    for k, v in fields.items():
        text_arg(v, k)
    recs = open_records()
    inv_id = recs.resolve(inv_ref)
    if any(fields[k] is None for k in ("hypothesis", "did", "result", "conclusion")) and stdin_is_tty() \
            and os.environ.get("DBGLOG_NO_EDITOR") != "1" and not as_json:
        fields.update(edit_attempt_in_editor(fields))
    rec = ops.add_attempt(recs, inv_id, **fields, runs=runs)
    from dbglog.fastpath import print_attempt  # (the printer `attempt add` uses without click too)

    emit(as_json, rec.to_dict(), lambda: print_attempt(rec, echo=click.echo))


@attempt.command("edit")
@click.argument("number", type=COUNT)
@click.option("--title")
@click.option("--hypothesis", "-H")
@click.option("--did", "-d")
@click.option("--result", "-r")
@click.option("--conclusion", "-c")
@click.option("--outcome", "-o")
@inv_option
@json_option
def attempt_edit(number, title, hypothesis, did, result, conclusion, outcome, inv_ref, as_json):
    """Change fields of attempt NUMBER."""
    fields = dict(title=title, hypothesis=hypothesis, did=did, result=result, conclusion=conclusion,
                  outcome=outcome)
    for k, v in fields.items():
        text_arg(v, k)
    if all(v is None for v in fields.values()):
        raise DbglogError("nothing to change: pass --title, --hypothesis, --did, --result, --conclusion or --outcome")
    recs = open_records()
    inv_id = recs.resolve(inv_ref)
    a = recs.edit_attempt(inv_id, number, **fields)
    emit(as_json, a.to_dict() | {"investigation": inv_id},
         lambda: click.echo(f"Attempt {a.number} updated in {inv_id}"))


@attempt.command("list")
@inv_option
@json_option
def attempt_list(inv_ref, as_json):
    """List the attempts of an investigation."""
    recs = open_records()
    inv = recs.store.load(recs.resolve(inv_ref))
    data = [a.to_dict() | {"investigation": inv.id} for a in inv.attempts]

    def human():
        if not inv.attempts:
            click.echo(f"No attempts in {inv.id} yet: `dbglog attempt add TITLE -d WHAT -r RESULT` records one.")
        for a in inv.attempts:
            click.echo(f"{a.number:>3}. [{a.outcome}] {a.title or a.did.splitlines()[0] if (a.title or a.did) else ''}")

    emit(as_json, data, human)


# --- key differences ----------------------------------------------------------------


@cli.group()
def diff():
    """The key-differences table: working case vs broken case.

    \b
    Each row: FACTOR, its value in the WORKING case (the one that passes) and in the BROKEN case
    (the one that fails). With an apply spec the row is a toggle for `bisect toggles --from-diffs`:
    its off state is the WORKING value, its on state the BROKEN value (`unset` or empty = not set),
    and the bisection finds which rows must take their broken value for the failure.
    \b
    --apply env:NAME | arg | config:FILE:KEY.PATH   both states from the row's columns
    --apply 'env:NAME on=unset off=1'               explicit states (any knob)
    --apply env:NAME=VALUE | arg:TEXT | config:FILE:KEY=VALUE   on = VALUE; off = unset / absent /
                                                                 the file's value
    """


@diff.command("add")
@click.argument("factor")
@click.argument("working")
@click.argument("broken")
@click.option("--working-label", help="Column label of the working case, e.g. 'Repro (works)'.")
@click.option("--broken-label", help="Column label of the broken case, e.g. 'Actual (hangs)'.")
@click.option("--status", default="untested", help="untested | ruled-out | culprit")
@click.option("--apply", "apply_", default="", help="How to switch it for `bisect toggles --from-diffs`: env:NAME, arg "
              "or config:FILE:KEY (off = WORKING, on = BROKEN; unset/empty = not set), or env:NAME=VALUE, arg:TEXT, "
              "config:FILE:KEY=VALUE.")
@inv_option
@json_option
def diff_add(factor, working, broken, working_label, broken_label, status, apply_, inv_ref, as_json):
    """Add a row: FACTOR, its value in the WORKING case (passes) and in the BROKEN case (fails)."""
    recs = open_records()
    inv_id, d = ops.add_difference(recs, inv_ref, factor, working, broken, status=status, apply=apply_,
                                   working_label=working_label, broken_label=broken_label)
    notes = ops.difference_notes(recs, inv_id, d)
    emit(as_json, d.to_dict() | {"investigation": inv_id} | notes,
         lambda: _print_difference(f"Difference {d.position} added to {inv_id}: {d.factor}", notes))


def _print_difference(head: str, notes: dict) -> None:
    click.echo(head)
    if notes.get("toggle"):
        click.echo(f"  as a toggle: off = {notes['toggle']['off']} (working case), "
                   f"on = {notes['toggle']['on']} (broken case)")
    if notes.get("toggle_error"):
        click.echo(f"  apply spec: {notes['toggle_error']}")
    for n in notes.get("next") or []:
        click.echo(f"  next: {n}")


@diff.command("set")
@click.argument("factor", required=False, default="")
@click.option("--working", help="New value in the working case.")
@click.option("--broken", help="New value in the broken case.")
@click.option("--status", help="untested | ruled-out | culprit")
@click.option("--apply", "apply_", help="How to switch it (env:NAME, arg, config:FILE:KEY: off = working value, "
              "on = broken value; see `dbglog diff --help`).")
@click.option("--working-label")
@click.option("--broken-label")
@inv_option
@json_option
def diff_set(factor, working, broken, status, apply_, working_label, broken_label, inv_ref, as_json):
    """Change a row (by factor name or number) or the column labels."""
    if not factor and working_label is None and broken_label is None:  # (before the workspace is opened)
        raise DbglogError("name a factor (or its number), or pass --working-label/--broken-label")
    recs = open_records()
    inv_id, d = ops.set_difference(recs, inv_ref, factor, working=working, broken=broken, status=status,
                                   apply=apply_, working_label=working_label, broken_label=broken_label)
    inv = recs.store.load(inv_id)
    notes = ops.difference_notes(recs, inv_id, d)
    data = (d.to_dict() if d else {}) | {"investigation": inv_id,
                                         "labels": {"working": inv.labels[0], "broken": inv.labels[1]}} | notes
    emit(as_json, data, lambda: _print_difference(f"Updated {d.factor} in {inv_id}" if d else "Labels updated",
                                                  notes))


@diff.command("list")
@inv_option
@json_option
def diff_list(inv_ref, as_json):
    """Show the key-differences table."""
    recs = open_records()
    inv = recs.store.load(recs.resolve(inv_ref))
    data = {"investigation": inv.id, "labels": {"working": inv.labels[0], "broken": inv.labels[1]},
            "rows": [d.to_dict() for d in inv.differences]}

    def human():
        if not inv.differences:
            click.echo(f"No key differences in {inv.id}: `dbglog diff add FACTOR WORKING BROKEN` adds one.")
            return
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table

        t = Table()
        for col in ("#", "Factor", inv.labels[0], inv.labels[1], "Status"):
            t.add_column(escape(col))
        for d in inv.differences:
            t.add_row(str(d.position), escape(d.factor), escape(d.working), escape(d.broken), d.status)
        Console().print(t)

    emit(as_json, data, human)


# --- what to try next ---------------------------------------------------------------


@cli.group("next")
def next_():
    """The prioritised what-to-try-next list."""


@next_.command("add")
@click.argument("text")
@click.option("--detail", default="", help="Why, or how.")
@click.option("--at", "position", type=INT, help="Insert at this position (default: the end).")
@inv_option
@json_option
def next_add(text, detail, position, inv_ref, as_json):
    """Add an idea to try."""
    text_arg(text, "step")
    text_arg(detail, "detail")
    recs = open_records()
    inv_id = recs.resolve(inv_ref)
    s = recs.next_add(inv_id, text, detail, position)
    emit(as_json, s.to_dict() | {"investigation": inv_id},
         lambda: click.echo(f"Next step {s.position} added to {inv_id}: {s.text}\n"
                            f"  next: when you try it, `dbglog run --attempt \"...\" -- CMD`, then "
                            f"`dbglog next done {s.position} --attempt N`"))


def _mark(ref, status, attempt_no, inv_ref, as_json):
    recs = open_records()
    inv_id = recs.resolve(inv_ref)
    s = recs.next_mark(inv_id, ref, status, attempt_no)
    emit(as_json, s.to_dict() | {"investigation": inv_id},
         lambda: click.echo(f"Next step {s.position} of {inv_id}: {s.text}: {s.status}"
                            + (f" (attempt {s.attempt})" if s.attempt else "")))


@next_.command("done")
@click.argument("ref")
@click.option("--attempt", "attempt_no", type=COUNT, help="The attempt that did it.")
@inv_option
@json_option
def next_done(ref, attempt_no, inv_ref, as_json):
    """Check off a step (by number or words)."""
    _mark(ref, "done", attempt_no, inv_ref, as_json)


@next_.command("drop")
@click.argument("ref")
@inv_option
@json_option
def next_drop(ref, inv_ref, as_json):
    """Drop a step that is no longer worth trying."""
    _mark(ref, "dropped", None, inv_ref, as_json)


@next_.command("move")
@click.argument("ref")
@click.argument("to", type=INT)
@inv_option
@json_option
def next_move(ref, to, inv_ref, as_json):
    """Move a step to position TO."""
    recs = open_records()
    inv_id = recs.resolve(inv_ref)
    s = recs.next_move(inv_id, ref, to)
    emit(as_json, s.to_dict() | {"investigation": inv_id}, lambda: click.echo(f"{s.position}. {s.text}"))


@next_.command("list")
@inv_option
@json_option
def next_list(inv_ref, as_json):
    """Show the what-to-try-next list."""
    recs = open_records()
    inv = recs.store.load(recs.resolve(inv_ref))

    def human():
        if not inv.next_steps:
            click.echo(f"No next steps in {inv.id}: `dbglog next add TEXT` adds one.")
        for s in inv.next_steps:
            mark = {"todo": "[ ]", "done": "[x]", "dropped": "[-]"}[s.status]
            click.echo(f"{s.position}. {mark} {s.text}" + (f" — {s.detail}" if s.detail else ""))

    emit(as_json, [s.to_dict() for s in inv.next_steps], human)

# --- supervised runs (runner.py, signatures.py, envinfo.py) ----------------------------


def reject_unknown_option(cmd) -> None:
    """The commands that take a repro after ``--`` let unknown options through (they belong to the
    repro), so a misspelled one of ours (``dbglog run --timout 5 -- python repro.py``) would become
    the command. A command cannot start with an option: refuse it, naming the closest one of ours."""
    if not cmd or cmd[0] == "--" or not cmd[0].startswith("-") or cmd[0] == "-":
        return
    import difflib

    word = cmd[0].split("=", 1)[0]
    ctx = click.get_current_context()
    names = [o for p in ctx.command.params for o in (*p.opts, *p.secondary_opts) if o.startswith("-")]
    names += ["--help"]
    close = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    raise DbglogError(f"no such option: {word}" + (f" (did you mean {close[0]}?)" if close else "")
                      + f"; the command goes after --, e.g. {ctx.command_path} [OPTIONS] -- CMD ARGS")


def check_failure_name(value, option: str, regex: bool = False) -> None:
    """A misspelled --expect/--match (``segfualt``) would quietly make every bad run "a different
    failure" (a skip): refuse it, with a did-you-mean, before anything runs or is recorded."""
    if value is None:
        return
    from dbglog import runner, signatures

    signatures.check_target(value, signatures.all_signatures(_config_path()), runner.OUTCOMES, option=option,
                            regex=regex)


def parse_size(text: str) -> int | None:
    """``64M``, ``512K``, bytes; 0/none/unlimited = no cap. Negative, inf, nan: refused (one line)."""
    from dbglog.records import parse_size as size_of

    if not str(text).strip():  # `--output-cap ""` is a slip, not "no cap" (say 0 or none for that)
        raise DbglogError("empty size: give e.g. 64M, 512K, or 0 / none for no cap")
    return size_of(text)


def parse_env_pairs(pairs) -> dict:
    out = {}
    for p in pairs:
        if "=" not in p or not p.split("=", 1)[0]:
            raise DbglogError(f"bad --env {p!r}: use NAME=VALUE (NAME= sets empty; use --unset to remove)")
        k, v = p.split("=", 1)
        out[k] = v
    return out


@cli.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--timeout", type=SECONDS, help="Seconds before the run is a hang (captures, then tree kill).")
@click.option("--grace", type=GRACE, default=5.0, show_default=True, help="Seconds between SIGTERM and SIGKILL.")
@click.option("--on-hang", "on_hang", multiple=True, metavar="CMD",
              help="Run on hang before the kill; {pid} {pgid} {run_dir} are filled in (repeatable).")
@click.option("--capture", "captures", multiple=True, metavar="PRESET", cls=_LazyHelpOption,
              help_fn=_capture_help())
@click.option("--idle-timeout", "idle_timeout", type=SECONDS,
              help="Alive but no output on any stream for S seconds = hang (captures, then tree kill).")
@click.option("--server", metavar="CMD", help="Start this server first (supervised); the command after -- is "
              "the client. Needs --ready.")
@click.option("--ready", metavar="URL|CMD", help="With --server: ready when this URL answers 2xx or this "
              "command exits 0.")
@click.option("--ready-timeout", "ready_timeout", type=SECONDS, default=120.0, show_default=True,
              help="With --server: seconds to wait for readiness (then server_not_ready).")
@click.option("--escalate", is_flag=True, help="With --repeat: raise the kernel-API log level after each failure "
              "(SGLang/FlashInfer: 1, 3, then 10 = tensor dumps).")
@click.option("--escalate-levels", "escalate_levels", metavar="L,L,...", help="The ladder for --escalate "
              "(default 1,3,10; e.g. 1,3,5,10).")
@click.option("--dump-include", "dump_include", multiple=True, metavar="PATTERN",
              help="Level-10 dumps: only API names matching (fnmatch, repeatable).")
@click.option("--dump-exclude", "dump_exclude", multiple=True, metavar="PATTERN",
              help="Level-10 dumps: skip API names matching (fnmatch, repeatable).")
@click.option("--core-dumps", "core_dumps", is_flag=True, help="Keep the core size limit (default: 0 for the repro).")
@click.option("--slurm", "slurm_args", metavar="ARGS", help="The run its own Slurm allocation: srun ARGS CMD "
              "(timeouts scancel it; captures run on its node). ARGS may be ''.")
@click.option("--repeat", type=INT, default=1, show_default=True, help="Run N times; report a histogram.")
@click.option("--until-fail", is_flag=True, help="With --repeat: stop at the first non-pass.")
@click.option("--expect", metavar="SIGNATURE", help="The failure being hunted (signature, glob or outcome).")
@click.option("--git-bisect-exit", is_flag=True, help="Exit 0 good, 1 bad, 125 skip (for `git bisect run`).")
@click.option("--env", "env_pairs", multiple=True, metavar="NAME=VALUE", help="Set a variable for the run.")
@click.option("--unset", "unset", multiple=True, metavar="NAME", help="Remove a variable for the run.")
@click.option("--output-cap", default="64M", show_default=True, help="Max bytes kept per stream (middle is cut).")
@click.option("--quiet", "-q", is_flag=True, help="Do not echo the output live.")
@click.option("--attempt", "attempt_title", metavar="TITLE", help="Also record the run as an attempt.")
@click.option("--hypothesis", "-H", default="", help="With --attempt: the hypothesis.")
@inv_option
@json_option
@click.argument("cmd", nargs=-1, type=click.UNPROCESSED)
def run(timeout, grace, on_hang, captures, idle_timeout, server, ready, ready_timeout, escalate, escalate_levels,
        dump_include, dump_exclude, core_dumps, slurm_args, repeat, until_fail, expect, git_bisect_exit, env_pairs,
        unset, output_cap, quiet, attempt_title, hypothesis, inv_ref, as_json, cmd):
    """Run a repro under supervision: classify, capture, record.  dbglog run [OPTIONS] -- CMD [ARGS...]

    Server-shaped repros: dbglog run --server 'python -m my.server' --ready http://127.0.0.1:8000/v1/models
    -- python client.py"""
    reject_unknown_option(cmd)  # `run --timout 5 -- CMD` is a typo, not the command
    check_failure_name(expect, "--expect")
    cmd = ops.check_run_args(cmd, repeat=repeat, timeout=timeout)  # before the workspace is created
    extra = ops.check_run_extras(server=server, ready=ready, ready_timeout=ready_timeout, idle_timeout=idle_timeout,
                                 escalate=escalate, escalate_levels=escalate_levels, dump_include=dump_include,
                                 dump_exclude=dump_exclude, core_dumps=core_dumps)
    if slurm_args is not None:
        from dbglog import slurm

        slurm.launcher(slurm_args)  # refused before anything is created
        extra["slurm"] = slurm_args
    env = ops.check_env(parse_env_pairs(env_pairs) | {k: None for k in unset})
    cap = parse_size(output_cap)
    recs = open_records(create=True)
    from dbglog.runner import Interrupted

    try:
        out = ops.run_repro(recs, cmd, cwd=os.getcwd(), env=env, timeout=timeout, grace=grace, captures=captures,
                            on_hang=on_hang, repeat=repeat, until_fail=until_fail, expect=expect,
                            output_cap_bytes=cap, echo=not (quiet or as_json), attempt_title=attempt_title,
                            hypothesis=hypothesis, inv_ref=inv_ref, **extra)
    except Interrupted as e:  # Ctrl-C, SIGTERM, SIGHUP: the tree is stopped; record what ran
        _record_interrupted(recs, e, cmd, attempt_title, hypothesis, inv_ref, as_json)
    dicts, rep, a, added = out.runs, out.repeat, out.attempt, out.advice
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
        if a is not None:
            click.echo(f"Attempt {a.number} recorded in {out.investigation} ({a.outcome})")
            for s in added:
                click.echo(f"Next step {s.position} added: {s.text}")
            print_breaker(out.breaker)
    sys.exit(out.exit_code(git_bisect_exit, expect))


def _record_interrupted(recs, e, cmd, attempt_title, hypothesis, inv_ref, as_json) -> None:
    """Record the runs of an interrupted `dbglog run` (the last one as "interrupted by SIGTERM"),
    as an inconclusive attempt with --attempt, then exit 128 + the signal like the shell would."""
    import shlex
    from pathlib import Path

    dicts = [r.to_dict() | {"interrupted": True} for r in e.results if r is not None]
    dirs = [str(Path(d["paths"].get("output", ".")).parent) for d in dicts]
    a = None
    if dicts:
        try:
            a = recs.record_runs(dicts, dirs, attempt_title=attempt_title, inv_ref=inv_ref, hypothesis=hypothesis,
                                 did=getattr(e, "did", "") or shlex.join(cmd))
        except DbglogError:  # no investigation to record the attempt in: the runs at least
            recs.record_runs(dicts, dirs)
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
    for c in d["captures"]:
        if c.get("name", "").rsplit(":", 1)[-1] == "stuck":
            continue  # shown below with its frames
        lines.append(f"  capture {c.get('name')}: {c.get('status')}" + (f" -> {c['path']}" if c.get("path") else "")
                     + (f" ({c['note']})" if c.get("note") else ""))
    st = d.get("stuck")
    if st:  # the hang captures' guess at the stuck process (dbglog/captures.py)
        lines.append(f"  stuck process (guess): pid {st.get('pid')} {(st.get('cmdline') or '')[:80]}"
                     f" — {(st.get('reason') or '').removeprefix('guess: ')}")
        lines.extend(f"    at {f[:160]}" for f in (st.get("frames") or [])[:5])
    for s in d["survivors"]:
        if s.get("escaped"):  # left the tree (setsid, marker cleared); found as the subreaper's orphan
            lines.append(f"  SURVIVOR pid {s.get('pid')} ({s.get('name')}) escaped the process tree; "
                         + ("killed" if s.get("status") == "killed" else f"still alive ({s.get('status')})"))
        else:
            lines.append(f"  SURVIVOR pid {s.get('pid')} ({s.get('name')}, {s.get('status')}) is still alive")
    srv = d.get("server")
    if srv:  # a server-shaped repro (dbglog/serve.py)
        lines.append(f"  server: {srv.get('state')}"
                     + (f", ready after {srv['ready_s']:.2f}s" if srv.get("ready_s") is not None else "")
                     + (f", {srv['exit']}" if srv.get("exit") else "")
                     + (f" ({srv['verdict']})" if srv.get("verdict") else ""))
    lv = d.get("kernel_api_level")
    if lv:
        lines.append(f"  kernel-API log level {lv.get('level')}"
                     + (f"; dumps in {lv['dump_dir']} ({lv.get('dump_count', 0)} file(s))" if lv.get("dump_dir") else ""))
    for n in d["notes"]:
        lines.append(f"  note: {n}")
    ev = d.get("evidence") or []
    for e in ev:
        if e.get("summary"):
            lines.append(f"  evidence: {e['summary'][:300]}")
        for f in (e.get("findings") or [])[:4]:
            lines.append(f"    - {f[:200]}")
    if not any(e.get("kind") == "kernel-api" for e in ev):
        for k in d.get("kernel_api") or []:
            lines.append(f"  last kernel API call: {k.get('name')} ({k.get('status')})")
    lines.append(f"  output: {d['paths'].get('output', d['paths'])}")
    return safe_text("\n".join(lines))


@cli.group()
def runs():
    """Browse recorded runs."""


@runs.command("list")
@click.option("--limit", type=COUNT, default=20, show_default=True)
@json_option
def runs_list(limit, as_json):
    """Most recent runs first."""
    recs = open_records()
    rows = recs.store.runs(limit)

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
    r = recs.store.get_run(ref)
    emit(as_json, r, lambda: click.echo(f"{' '.join(r['cmd'])}\n{_run_summary(r)}"))


@runs.command("prune")
@click.option("--older-than", "older_than", type=GRACE, metavar="DAYS",
              help="Remove the outputs of runs older than DAYS days.")
@click.option("--keep", type=click.IntRange(min=0), metavar="N", help="Keep the newest N runs' outputs, remove the rest.")
@click.option("--max-size", "max_size", metavar="SIZE", help="Remove the oldest until the rest fits (e.g. 2G, 500M).")
@click.option("--dry-run", is_flag=True, help="Only say what would be removed.")
@json_option
def runs_prune(older_than, keep, max_size, dry_run, as_json):
    """Remove old run outputs from .dbglog/runs/. A run an attempt or a bisection cites keeps its
    record (only its output files go); the others are deleted. `dbglog run` also keeps the
    directory under a size cap: [runs] max_size in .dbglog/config.toml (default 2G, 0 = none)."""
    if older_than is None and keep is None and max_size is None:
        raise DbglogError("say what to prune: --older-than DAYS, --keep N or --max-size SIZE")
    max_bytes = parse_size(max_size) if max_size is not None else None
    recs = open_records()
    out = recs.prune_runs(older_than_days=older_than, keep=keep, max_bytes=max_bytes, dry_run=dry_run)

    def human():
        verb = "Would remove" if dry_run else "Removed"
        click.echo(f"{verb} the outputs of {len(out['pruned'])} run(s), {out['freed_bytes'] / (1 << 20):.1f} MiB"
                   + (f"; {len(out['rows_kept'])} record(s) kept (cited by attempts or bisections)"
                      if out["rows_kept"] else ""))

    emit(as_json, out, human)


@cli.command("env")
@click.option("--python", "python", metavar="PATH", help="Probe torch/triton/... in this interpreter.")
@click.option("--timeout", type=SECONDS, default=5.0, show_default=True, help="Per-probe time limit.")
@json_option
def env_cmd(python, timeout, as_json):
    """Environment snapshot: OS, CPU, Python, git, GPUs, driver, CUDA/ROCm, ML packages, env vars."""
    from dbglog import envinfo

    snap = envinfo.collect(timeout=timeout, python=python)
    emit(as_json, snap, lambda: click.echo(safe_text("\n".join(envinfo.markdown_lines(snap)))))


@cli.group()
def signature():
    """Failure signatures: the built-in catalog plus yours in .dbglog/config.toml."""


def _config_path():
    from dbglog import workspace

    ws = workspace.find()
    return ws.config_path if ws.exists else None


@signature.command("list")
@json_option
def signature_list(as_json):
    """All signatures, most causal first."""
    from dbglog import signatures

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
    from dbglog import signatures

    if file != "-":
        from dbglog.fserrors import check_regular_file

        check_regular_file(file)  # a FIFO or /dev/zero: refused, not read forever
    try:
        data = sys.stdin.buffer.read() if file == "-" else open(file, "rb").read()
    except OSError as e:
        raise DbglogError(f"cannot read {file}: {e.strerror}") from None
    from dbglog import evidence

    warns: list[str] = []
    m = signatures.classify_text(data, signatures.all_signatures(_config_path()), warnings=warns)
    api = signatures.parse_kernel_api_log(data)
    # Evidence parsers on big logs only when the signature points at a dump (keeps 100 MB fast).
    dump_entries = {"rocm.wave_stop", "cuda.exception", "gpu.coredump_written", "gdb.signal"}
    dumpy = m is not None and (m.signature in dump_entries or any(
        getattr(signatures.describe(o), "name", None) in dump_entries for o in m.others))
    ev = evidence.extract(data, config_path=_config_path(), run_tools=False,
                          save_dirs=[os.path.dirname(os.path.abspath(file))] if file != "-" else ()) \
        if len(data) <= (16 << 20) or dumpy else []
    data_out = {"signature": m.to_dict() if m else None, "kernel_api": api.to_dict() if api else None,
                "evidence": ev, "warnings": warns}

    def human():
        for w in warns:
            click.echo(f"warning: {w}", err=True)
        if m is None:
            click.echo("No known failure signature.")
        else:
            click.echo(f"{m.name} (rank {m.rank}) at line {m.line_no}: {m.line.strip()[:200]}")
            for other in (m.others or [])[:5]:
                click.echo(f"  also: {other}")
        if api is not None:
            click.echo(evidence.kernel_api_evidence(api.to_dict())["summary"].replace("last ", "Last ", 1))
        for e in ev:
            click.echo(f"evidence: {e.get('summary')}")
            for f in (e.get("findings") or [])[:4]:
                click.echo(f"  - {f}")

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

    from dbglog import signatures

    try:
        re.compile(pattern)
    except (re.error, OverflowError, RecursionError) as e:  # a{4294967296} raises OverflowError
        raise DbglogError(f"bad pattern {pattern!r}: {e}") from None
    recs = open_records(create=True)
    signatures.add_user_signature(recs.ws.config_path, name, pattern, rank)
    emit(as_json, {"name": name, "pattern": pattern, "rank": rank, "config": str(recs.ws.config_path)},
         lambda: click.echo(f"Added signature {name} to {recs.ws.config_path}"))


# --- bisection (dbglog/bisect/) ----------------------------------------------------------


@cli.group("bisect")
def bisect_group():
    """Find the first bad commit (git) or the minimal sets of suspect toggles (toggles)."""


def _session(recs, ref):
    from dbglog.bisect.session import SessionDB

    return SessionDB(recs.store).get(ref)


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
    from dbglog.bisect.session import SessionDB

    recs = open_records()
    s = _session(recs, ref)
    steps = [t.to_dict() for t in SessionDB(recs.store).trials(s["id"])]

    def human():
        click.echo(f"# {s['id']} ({s['kind']}) {s['status']}")
        for n, t in enumerate(steps, 1):
            click.echo(f"{n:>3}. {t['verdict']:<5} {t['key'][:60]:<60} {t['reason']} [{t['source']}]")

    emit(as_json, {"id": s["id"], "kind": s["kind"], "steps": steps}, human)


@bisect_group.command("resume")
@click.argument("ref", required=False)
@click.option("--max-steps", "--budget", "max_steps", type=COUNT, metavar="N",
              help="git bisections: a new budget of commits tried (the steps already done count).")
@json_option
def bisect_resume(ref, max_steps, as_json):
    """Continue an interrupted bisection; finished steps are not re-run."""
    from dbglog.bisect.session import SessionDB, driver, reap_leftovers

    recs = open_records()
    s = _session(recs, ref)
    if s["status"] in ("aborted",):
        raise DbglogError(f"bisection {s['id']} was aborted; start a new one")
    if max_steps is not None:
        if s["kind"] != "git" or max_steps < 1:
            raise DbglogError("--max-steps takes a number >= 1 and applies to git bisections")
        s["spec"]["max_steps"] = max_steps
        SessionDB(recs.store).update_spec(s["id"], s["spec"])
    SessionDB(recs.store).claim(s["id"])
    reap_leftovers(s["id"])
    result = driver(s["kind"]).resume(recs, s, progress=not as_json)
    _bisect_finish(result, as_json)


def _bisect_finish(result: dict, as_json: bool) -> None:
    if result.get("exit_code", 0) == 0 and "next" not in result:  # found: what an agent does with it
        result["next"] = ["dbglog next add \"FIX: ...\"  (the fix it points at, to try)",
                          "dbglog status resolved --root-cause \"...\"  (once the fix is confirmed)"]
    emit(as_json, result, lambda: click.echo(result.get("report") or result.get("message", result["status"])))
    if not as_json and result.get("next"):
        click.echo("next: " + "; ".join(result["next"]))
    sys.exit(result.get("exit_code", 0))


@bisect_group.command("abort")
@click.argument("ref", required=False)
@json_option
def bisect_abort(ref, as_json):
    """Stop a bisection: kill its leftovers, remove its worktrees, restore edited files."""
    from dbglog.bisect.session import abort

    recs = open_records()
    out = abort(recs, _session(recs, ref))
    emit(as_json, out, lambda: click.echo(f"Aborted {out['id']}"))


@bisect_group.command("mark")
@click.argument("ref")
@click.argument("verdict", type=click.Choice(["good", "bad", "skip"]))
@click.option("--session", "session_ref", help="The bisection (default: the latest).")
@json_option
def bisect_mark(ref, verdict, session_ref, as_json):
    """Correct a verdict (REV for git, comma-separated toggle names for toggles); resume replays."""
    from dbglog.bisect.session import mark

    recs = open_records()
    s = _session(recs, session_ref)
    step = mark(recs, s, ref, verdict)
    emit(as_json, step.to_dict() | {"session": s["id"]},
         lambda: click.echo(f"Marked {step.key} {verdict} in {s['id']}; `dbglog bisect resume` replays the search"))


def _cluster_launcher(slurm_args, launcher):
    """``--slurm ARGS`` as the session's launcher (``srun ARGS``); a srun ``--launcher`` gets the same
    Slurm treatment and checks (dbglog/slurm.py)."""
    from dbglog import slurm

    if slurm_args is not None and launcher:
        raise DbglogError("--slurm and --launcher both set how steps are launched; use one")
    launcher = slurm.launcher(slurm_args) if slurm_args is not None else launcher
    slurm.check_launcher(launcher)
    return launcher


def _scratch(recs, scratch, launcher):
    from dbglog import slurm

    if scratch is None and slurm.is_srun(launcher):
        scratch = slurm.scratch_from_config(recs.ws.config_path)
    return slurm.scratch_dir(scratch)


# `dbglog bisect git` (issue 6; driver in dbglog/bisect/history.py)
@bisect_group.command("git", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--good", "goods", multiple=True, metavar="REV", help="A commit without the bug "
              "(repeatable).")
@click.option("--bad", metavar="REV", help="A commit with the bug (its failure defines 'bad').")
@click.option("--first-parent", is_flag=True, help="Follow first parents only: finds the merge that brought it in.")
@click.option("--match", metavar="SIGNATURE|REGEX", help="Bad = this signature (glob) or regex over the output.")
@click.option("--any-failure", is_flag=True, help="Bad = any failure (not just the bad end's).")
@click.option("--build", metavar="CMD", help="Shell command run before the repro each step; failure = skip.")
@click.option("--timeout", type=SECONDS, help="Seconds per run before it is a hang (default: 5x the bad end's time, "
              "at least 10 s).")
@click.option("--grace", type=GRACE, default=5.0, show_default=True, help="Seconds between SIGTERM and SIGKILL.")
@click.option("--repeat", type=INT, default=1, show_default=True, help="Runs per step; disagreement = flaky.")
@click.option("--jobs", "-j", type=COUNT, default=1, show_default=True, help="Commits tested at once (k-ary search, "
              "one worktree each).")
@click.option("--launcher", metavar="PREFIX", help="Run each step through a prefix, e.g. 'srun -N1 --gres=gpu:1'.")
@click.option("--slurm", "slurm_args", metavar="ARGS", help="Each step its own Slurm allocation: srun ARGS CMD "
              "(timeouts scancel it; captures run on its node). ARGS may be ''.")
@click.option("--scratch", metavar="DIR", help="Worktrees/copies under DIR, a path the cluster nodes see "
              "(default: [slurm] scratch in config.toml with an srun launcher, else .dbglog/bisect).")
@click.option("--max-steps", "--budget", "max_steps", type=COUNT, metavar="N",
              help="Try at most N commits (the endpoint checks not counted); the untried candidates are listed. "
                   "With --flaky/--rate: at most N repro runs in all.")
@click.option("--flaky", is_flag=True, help="The failure is intermittent: weigh every run (a posterior over the "
              "commits) instead of trusting one verdict per step; automatic when repeats disagree.")
@click.option("--rate", "rate", is_flag=True, help="Failure-rate bisection: both ends fail, the bad end more often; "
              "find the commit where the rate went up.")
@click.option("--confidence", type=click.FloatRange(0.5, 1.0, min_open=True, max_open=True), default=0.95,
              show_default=True, help="With --flaky/--rate: stop when one commit has this probability.")
@click.option("--capture", "captures", multiple=True, metavar="PRESET", cls=_LazyHelpOption,
              help_fn=_capture_help("Hang capture preset, on every step: "))
@click.option("--on-hang", "on_hang", multiple=True, metavar="CMD", help="Run on hang before the kill (repeatable).")
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

    reject_unknown_option(cmd)  # before "missing --good": `--god HEAD~5` is a typo of it
    for name, value in (("--good", goods), ("--bad", bad)):
        if not value:
            raise DbglogError(f"missing option {name}: dbglog bisect git --good REV --bad REV -- CMD ARGS")
    check_failure_name(match, "--match", regex=True)
    cmd = list(cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    launcher = _cluster_launcher(slurm_args, launcher)
    recs = open_records(create=True)
    scratch = _scratch(recs, scratch, launcher)
    result = history.start(recs, good_refs=list(goods), bad_ref=bad, cmd=cmd, build=build, timeout=timeout,
                           grace=grace, repeat=repeat, jobs=jobs, launcher=launcher, match=match,
                           any_failure=any_failure, first_parent=first_parent, captures=captures, on_hang=on_hang,
                           inv_ref=inv_ref, progress=not as_json, max_steps=max_steps, server=server, ready=ready,
                           ready_timeout=ready_timeout, idle_timeout=idle_timeout, shared_cache=shared_cache,
                           scratch=scratch, flaky=flaky, rate=rate, confidence=confidence, escalate=escalate)
    _bisect_finish(result, as_json)



# --- search (issue 4) ------------------------------------------------------------------
# search / tried / attempt delete, and the "same as a failed attempt" warning of attempt add.


def print_breaker(b: dict | None) -> None:
    """The circuit breaker (ops.circuit_breaker): the same failure N times; what to do instead."""
    from dbglog.fastpath import print_breaker as show

    show(b, echo=click.echo)


def _query_arg(words) -> str:
    query = " ".join(words)
    text_arg(query, "query")
    return query


_query_notes = ops.query_notes


@cli.command("search")
@click.argument("query", nargs=-1, required=True)
@click.option("--status", help="Only investigations with this status (open | resolved | wontfix).")
@click.option("--outcome", "outcomes", multiple=True, help="Only attempts with this outcome (repeatable).")
@click.option("--tag", "tags", multiple=True, help="Only investigations with this tag (repeatable).")
@inv_option
@click.option("--kind", "kinds", multiple=True,
              type=click.Choice(["attempt", "investigation", "difference", "next", "section"]),
              help="Only this kind of record (repeatable; default: all). section = free sections and watched docs.")
@click.option("--since", help="Only records since a date (2026-11-01) or an age (3d, 2w).")
@click.option("--limit", "-n", type=click.IntRange(1, 500), default=10, show_default=True)
@json_option
def search_cmd(query, status, outcomes, tags, inv_ref, kinds, since, limit, as_json):
    """Ranked, typo-tolerant search over attempts, investigations, differences, next steps, free
    sections and watched docs."""
    text = _query_arg(query)
    recs = open_records()
    res = ops.search(recs, text, status=status, outcomes=outcomes, tags=tags, inv_ref=inv_ref, kinds=kinds,
                     since=since, limit=limit, warn=warn)

    def human():
        for note in _query_notes(res.query):
            click.echo(click.style(f"note: {note}", dim=True), err=True)
        if not res.hits:
            click.echo(f"No matches for {text!r}.")
        for n, h in enumerate(res.hits, 1):
            _print_hit(h, n)

    emit(as_json, res.to_dict(), human)


@cli.command()
@click.argument("idea", nargs=-1, required=True)
@click.option("--status", help="Only investigations with this status.")
@click.option("--tag", "tags", multiple=True, help="Only investigations with this tag (repeatable).")
@inv_option
@click.option("--limit", "-n", type=click.IntRange(1, 100), default=5, show_default=True)
@json_option
def tried(idea, status, tags, inv_ref, limit, as_json):
    """Was IDEA already tried, and what happened? Run it before trying a fix.

    Looks in attempts (bisections and baseline runs labelled as such), key differences that were
    tested, next steps done, free sections and watched docs; untested rows, to-do steps and
    symptoms that name the idea are listed as mentioned. Exit status: 0 = a close prior attempt
    exists (printed first, with its outcome and conclusion), 1 = nothing close was found, 2 = bad
    input.
    """
    text = _query_arg(idea)
    recs = open_records()
    res = ops.tried(recs, text, status=status, tags=tags, inv_ref=inv_ref, limit=limit, warn=warn)

    def human():
        from dbglog.fastpath import print_tried  # (the printer `dbglog tried` uses without click too)

        print_tried(res, text, _query_notes(res.result.query), echo=click.echo, style=click.style)

    emit(as_json, res.to_dict(), human)
    if not res.close:
        sys.exit(1)


@attempt.command("delete")
@click.argument("number", type=COUNT)
@inv_option
@json_option
def attempt_delete(number, inv_ref, as_json):
    """Delete attempt NUMBER (the other attempts keep their numbers)."""
    recs = open_records()
    inv_id = recs.resolve(inv_ref)
    a = recs.delete_attempt(inv_id, number)
    emit(as_json, {"deleted": a.to_dict(), "investigation": inv_id},
         lambda: click.echo(f"Attempt {a.number} deleted from {inv_id}"))


@bisect_group.command("toggles", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--env", "envs", multiple=True, metavar="NAME=VALUE", help="Toggle: on sets it, off unsets it.")
@click.option("--env-off", "env_offs", multiple=True, metavar="NAME=VALUE",
              help="The off (working) value of an --env toggle instead of unset.")
@click.option("--arg", "args", multiple=True, metavar="TEXT",
              help="Toggle: these words at {toggles} in the command (or appended).")
@click.option("--args-from", "args_from", multiple=True, metavar="FILE", help="One --arg per line of FILE.")
@click.option("--config", "configs", multiple=True, metavar="FILE:KEY.PATH=VALUE",
              help="Toggle: a JSON/YAML/TOML key set to VALUE (off: the file's value).")
@click.option("--suspects", "suspect_paths", multiple=True, metavar="PATH",
              help="Files/dirs with `dbglog: suspect NAME` / `dbglog: begin|end NAME` markers.")
@click.option("--coop", "coops", multiple=True, metavar="NAME", help="Toggle: dbglog.toggle(NAME) in the code.")
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
@click.option("--timeout", type=SECONDS, help="Seconds per trial before it is a hang (default: 5x the failing end).")
@click.option("--grace", type=GRACE, default=5.0, show_default=True, help="Seconds between SIGTERM and SIGKILL.")
@click.option("--repeat", type=INT, default=1, show_default=True,
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
@click.option("--launcher", metavar="CMD", help="Prefix for every trial (e.g. 'srun -n1', 'ncu --target-processes all').")
@click.option("--slurm", "slurm_args", metavar="ARGS", help="Each trial its own Slurm allocation: srun ARGS CMD "
              "(timeouts scancel it; captures run on its node). ARGS may be ''.")
@click.option("--scratch", metavar="DIR", help="Worktrees/copies under DIR, a path the cluster nodes see "
              "(default: [slurm] scratch in config.toml with an srun launcher, else .dbglog/bisect).")
@click.option("--build", metavar="SHELL_CMD", help="Run before every trial; failure = skip.")
@click.option("--match", metavar="SIG|REGEX", help="The failure to hunt (signature, glob, outcome or regex).")
@click.option("--any-failure", is_flag=True, help="Any failure counts as bad.")
@click.option("--in-place", is_flag=True, help="Edit the real files (journaled, always restored) instead of a copy.")
@click.option("--capture", "captures", multiple=True, metavar="PRESET", cls=_LazyHelpOption,
              help_fn=_capture_help("Hang capture preset, on every step: "))
@click.option("--on-hang", "on_hang", multiple=True, metavar="CMD", help="Run on hang before the kill (repeatable).")
@step_options
@inv_option
@json_option
@click.argument("cmd", nargs=-1, type=click.UNPROCESSED)
def bisect_toggles(envs, env_offs, args, args_from, configs, suspect_paths, coops, count, from_diffs, mode, max_sets,
                   max_set_size, max_runs, strategy, first_only, timeout, grace, repeat, flaky, confidence, budget,
                   bad_if_any, jobs, launcher, slurm_args, scratch, build, match, any_failure, in_place, captures, on_hang,
                   server, ready, ready_timeout, idle_timeout, shared_cache, escalate, inv_ref, as_json, cmd):
    """Find every minimal set of toggles that causes the failure.  ... -- CMD [ARGS...]"""
    import shlex

    from dbglog.bisect import toggles

    reject_unknown_option(cmd)
    check_failure_name(match, "--match", regex=True)
    cmd = list(cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    from dbglog import redact

    redact.remember_env([*envs, *env_offs])  # --env HF_TOKEN=...: the value never reaches logs/ or the DB
    for c in configs:  # FILE:KEY.PATH=VALUE with a secret-named last key
        key, _, value = c.split(":", 1)[-1].partition("=")
        redact.remember_env({key.rsplit(".", 1)[-1]: value})
    launcher = _cluster_launcher(slurm_args, launcher)
    recs = open_records(create=True)
    scratch = _scratch(recs, scratch, launcher)
    argv = sys.argv[1:] if sys.argv and sys.argv[0].endswith(("dbglog", "__main__.py")) else []
    result = toggles.start(
        recs, cmd=cmd, cwd=os.getcwd(), envs=envs, env_offs=env_offs, args=args, args_from=args_from,
        configs=configs, suspect_paths=suspect_paths, coops=coops, count=count, from_diffs=from_diffs, mode=mode,
        max_sets=max_sets, max_set_size=max_set_size, max_runs=max_runs, strategy=strategy,
        exhaustive=not first_only, timeout=timeout, grace=grace, repeat=repeat, jobs=jobs, launcher=launcher,
        build=build, match=match, any_failure=any_failure, in_place=in_place, inv_ref=inv_ref,
        progress=not as_json, argv_text=shlex.join(["dbglog", *argv]) if argv else "", captures=captures,
        on_hang=on_hang, bad_if_any=bad_if_any, scratch=scratch, flaky=flaky, confidence=confidence, budget=budget,
        server=server, ready=ready, ready_timeout=ready_timeout, idle_timeout=idle_timeout, shared_cache=shared_cache,
        escalate=escalate)
    _bisect_finish(result, as_json)


# --- agents (issue 16): MCP server (dbglog/mcp_server.py) ---------------------------------


@cli.command("mcp")
@click.option("--dir", "directory", type=click.Path(file_okay=False, exists=True),
              help="Serve the workspace found from this directory (default: the current one).")
def mcp_cmd(directory):
    """Serve the protocol to a coding agent as MCP tools over stdio (needs `pip install 'dbglog[mcp]'`).

    Tools: tried, search, new_investigation, add_attempt, add_difference, set_difference, next_steps,
    run_repro, bisect_status, show. Register it with your agent's client, e.g.
    `claude mcp add dbglog -- dbglog mcp` (see README, "For coding agents").
    """
    try:
        from dbglog import mcp_server
    except ImportError as e:
        msg = str(e) if "MCP Python SDK" in str(e) else f"dbglog mcp needs the MCP Python SDK ({e})"
        raise DbglogError(f"{msg}; install it with: pip install 'dbglog[mcp]'") from None
    if directory:
        os.chdir(directory)
    mcp_server.serve()


@cli.command("agent-guide")
@json_option
def agent_guide(as_json):
    """Print the agent skill file: the protocol as a coding agent should follow it with dbglog
    (check, record, run, bisect, close). Save it where your agent reads skills or instructions,
    e.g. `dbglog agent-guide > .claude/skills/dbglog/SKILL.md`."""
    from pathlib import Path

    path = Path(__file__).with_name("agent_guide.md")
    text = path.read_text(encoding="utf-8")
    emit(as_json, {"guide": text, "path": str(path)}, lambda: click.echo(text, nl=False))


@cli.command("hook", context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                                      "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def hook_cmd(args):
    """Agent hook points: `dbglog hook pre-command|prompt|session-start` reads a shell command or a
    prompt (plain or Claude Code hook JSON) on stdin and prints a notice: prior failed attempts that
    did it, a circuit breaker after 3 identical failures, relevant prior attempts for a debugging
    prompt, a digest of the open investigations at session start. Always exits 0.
    """
    from dbglog.hooks import main as hook_main  # (the `dbglog` executable goes there without the CLI)

    sys.exit(hook_main(list(args)))


@cli.command("merge-driver", hidden=True)
@click.argument("base", type=click.Path(dir_okay=False))
@click.argument("ours", type=click.Path(dir_okay=False))
@click.argument("theirs", type=click.Path(dir_okay=False))
@click.argument("path", required=False, default="")
def merge_driver(base, ours, theirs, path):
    """Git merge driver for logs/*.md (set up by `dbglog init`): %O %A %B %P."""
    from dbglog.merge import run_driver

    code, message = run_driver(base, ours, theirs, path)
    if message:
        click.echo(f"dbglog: {message}", err=True)
    sys.exit(code)


# --- mirror -------------------------------------------------------------------------


# --- import and mirror upkeep (issue 3) ----------------------------------------------


@cli.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=True))
@click.option("--dry-run", is_flag=True, help="Show what would be imported; change nothing.")
@json_option
def import_cmd(files, dry_run, as_json):
    """Import hand-written debug docs (DEBUG.md, per-bug notes) as investigations.

    Every line of the document is kept: what reads as structure becomes fields, attempts (with
    outcomes), key differences and next steps; the rest stays verbatim, in order, under its own
    headings, as free sections. Markdown is never refused for lack of structure. Re-importing a
    file updates what it imported before instead of duplicating it. A file that cannot be read
    (not UTF-8, binary, git conflict markers) stops the whole import, nothing written, with the
    file and line. --dry-run says what was recognized and what was kept as free text. A directory
    stands for the .md files under it.
    """
    from dbglog import importer

    recs = open_records(create=not dry_run)
    data = importer.import_files(recs, list(files), dry_run=dry_run)

    def human():
        verb = {"create": "new", "update": "updated", "unchanged": "unchanged"}
        for r in data["investigations"]:
            click.echo(f"{'would ' if dry_run else ''}{verb[r['action']]:<9} {r['id']:<44} {r['title']}")
            click.echo(f"          from {r['source']}: {r['attempts']} attempt(s), {r['differences']} "
                       f"difference(s), {r['next_steps']} next step(s)")
            rec = r.get("recognized") or {}
            if rec.get("fields"):
                click.echo(f"          fields: {', '.join(f.replace('_', ' ') for f in rec['fields'])}")
            if dry_run:
                for a in r.get("attempt_list", []):
                    click.echo(f"          attempt {a['number']:<3} {a['outcome']:<12} {safe_text(a['title'])[:70]}")
            if rec.get("free_sections"):
                click.echo(f"          kept as free text: {'; '.join(safe_text(h) for h in rec['free_sections'])}")
        for sk in data["skipped"]:
            click.echo(f"template  {sk['source']}:{sk['line']} {safe_text(sk['title'])!r} ({sk['reason']})")

    emit(as_json, data, human)


@cli.command("sync")
@click.option("--resolve", "resolve", multiple=True, metavar="PATH",
              help="After merging a conflict by hand: take this file as the truth.")
@click.option("--prune", is_flag=True, help="Delete investigations whose mirror file was deleted.")
@json_option
def sync_cmd(resolve, prune, as_json):
    """Import edits made to logs/ outside dbglog (runs before every command anyway)."""
    recs = open_records(sync=False)
    rels = set()
    for p in resolve:
        path = os.path.abspath(p)
        rel = os.path.relpath(path, recs.ws.root)
        if rel.startswith(".."):
            raise DbglogError(f"{p} is not inside the workspace {recs.ws.root}")
        rels.add(rel)
    report = recs.sync(resolve=rels, force=True, prune=prune)
    data = report.to_dict()

    def human():
        for k in ("imported", "added", "pruned"):
            for p in data[k]:
                click.echo(safe_text(f"{k:<9} {p}"))
        for a, b in report.moved:
            click.echo(safe_text(f"moved     {a} -> {b}"))
        for p in data["missing"]:
            click.echo(safe_text(f"missing   {p} (deleted; `dbglog sync --prune` removes it from the database)"))
        for p in data["resolved"]:
            click.echo(safe_text(f"resolved  conflict copy kept as {p}"))
        for p in data["ignored"]:
            click.echo(safe_text(f"ignored   {p} (not a dbglog file: no front matter with an id)"))
        if not report.changed and not report.missing and not report.resolved:
            click.echo("Up to date.")

    emit(as_json, data, human)


@cli.command()
@click.option("--force", is_flag=True,
              help="Also drop what only the database holds; set an unreadable database aside.")
@json_option
def reindex(force, as_json):
    """Rebuild the database from logs/ alone."""
    from dbglog import workspace
    from dbglog.records import Records
    from dbglog.sync import reindex as do_reindex, set_aside_database

    from dbglog.fserrors import FilesystemError

    ws = workspace.find()
    try:
        recs = Records(ws)
    except DbglogError as e:
        if isinstance(e, FilesystemError) or not (force and ws.exists and ws.db_path.exists()):
            raise  # a full disk is no reason to set a healthy database aside
        set_aside_database(ws)
        recs = Records(ws)
    with recs.store.write():
        data = do_reindex(recs.store, recs.ws, force=force)
    emit(as_json, data, lambda: click.echo(f"Reindexed {data['investigations']} investigation(s) from logs/"))


@cli.command()
@json_option
def doctor(as_json):
    """Check logs/ against the database. Exit 0 when healthy, 1 when problems are listed."""
    from dbglog.sync import doctor as run_doctor

    recs = open_records(sync=False)
    problems = run_doctor(recs.store, recs.ws)

    def human():
        for p in problems:
            click.echo(safe_text(f"{p['kind']:<17} {p['path']}: {p['message']}"))
        if not problems:
            click.echo("Healthy: logs/ and the database agree.")

    emit(as_json, {"healthy": not problems, "problems": problems}, human)
    if problems:
        sys.exit(1)


@cli.command()
@json_option
def export(as_json):
    """Re-render every investigation's markdown file."""
    recs = open_records()
    paths = []
    with recs.store.write():
        for inv_id in recs.store.ids():
            paths.append(str(recs.publish(inv_id).relative_to(recs.ws.root)))
    emit(as_json, {"written": paths}, lambda: click.echo(f"Rendered {len(paths)} file(s) in logs/"))


@cli.command()
@click.option("--keep", is_flag=True, help="Keep the throwaway workspace and print its path.")
@json_option
def demo(keep, as_json):
    """Build a throwaway workspace with a realistic investigation and show it."""
    from dbglog.demo import run_demo

    result = run_demo(keep=keep, as_json=as_json)
    if as_json:
        emit(True, result)


def _check_argv(args) -> None:
    """Arguments that are not UTF-8 (bytes from a shell, decoded with surrogates) would fail deep in
    a write as an internal error: refuse them first. (The merge driver takes git's paths as given.)"""
    if args and args[0] == "merge-driver":
        return
    for n, a in enumerate(args, 1):
        try:
            a.encode("utf-8")
        except UnicodeEncodeError:
            shown = a.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            raise DbglogError(f"argument {n} ({shown!r}) is not valid UTF-8; pass text in UTF-8") from None


def main(argv=None) -> None:
    try:
        _check_argv(sys.argv[1:] if argv is None else list(argv))
        cli.main(args=argv, prog_name="dbglog", standalone_mode=False)
    except DbglogError as e:
        _fail(str(e), e.exit_code, argv)
    except click.exceptions.Abort:
        click.echo("dbglog: aborted", err=True)
        sys.exit(130)
    except click.ClickException as e:
        ctx = getattr(e, "ctx", None)
        hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
        _fail(e.format_message().replace("\n", " ") + hint, 2, argv)
    except KeyboardInterrupt:
        click.echo("dbglog: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    except Exception as e:  # a bug of ours: say so in one line, traceback on request
        from dbglog.fserrors import describe

        machine = describe(e)  # a full disk, a read-only file system, a permission: not a bug
        if machine is not None and not os.environ.get("DBGLOG_DEBUG"):
            _fail(machine, 2, argv)
        if os.environ.get("DBGLOG_DEBUG"):
            raise
        _fail(f"internal error: {type(e).__name__}: {e} (set DBGLOG_DEBUG=1 for the traceback)", 1, argv)
    sys.exit(0)


def _fail(message: str, code: int, argv) -> None:
    message = safe_text(message)  # it may quote what the user typed or a file held
    args = sys.argv[1:] if argv is None else argv
    if "--json" in args:
        click.echo(json.dumps({"error": message}))
    click.echo(f"dbglog: {message}", err=True)
    sys.exit(code)
