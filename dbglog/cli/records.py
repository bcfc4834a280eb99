"""The records commands: init, new, list, show, use, status, and the attempt, diff and next groups.

Imports ``common`` (``stdin_is_tty`` looked up on it at call time) and the record services (ops, records,
mirror); never the package above it, whose command table imports this module."""

from __future__ import annotations

import os

import click

from dbglog import ops
from dbglog.cli.common import COUNT, POSITION, _LazyHelpOption, emit, inv_option, json_option, open_records, text_arg
from dbglog.util.errors import DbglogError
from dbglog.kb.present import render_show


# --- workspace ----------------------------------------------------------------------


@click.command()
@json_option
def init(as_json):
    """Create a workspace (.dbglog/ and logs/) at the git root or here; one in a directory above is re-initialized."""
    data = ops.init_workspace()
    existed = not data["created"]
    emit(as_json, data, lambda: click.echo(
        f"{'Reinitialized' if existed else 'Initialized'} dbglog workspace in {data['workspace']}"
        + (f" ({len(data['imported'])} investigation(s) taken in from logs/)" if data["imported"] else "")))


def one_title(argument: str | None, option: str | None) -> str | None:
    """The title given as the argument or as --title (an agent writes either); both, and different, is refused."""
    if argument is not None and option is not None and argument != option:
        raise click.UsageError("two titles: give it as the argument or as --title, not both")
    return argument if argument is not None else option


@click.command()
@click.argument("title", required=False)
@click.option("--title", "-t", "title_opt", help="The title, as an option.")
@click.option("--symptom", default="", help="What goes wrong, as seen by the user.")
@click.option("--file", "files", multiple=True, help="A related file (repeatable).")
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@click.option("--no-env", is_flag=True, help="Do not capture an environment snapshot.")
@json_option
def new(title, title_opt, symptom, files, tags, no_env, as_json):
    """Start an investigation and make it current."""
    title = one_title(title, title_opt)
    text_arg(title, "title")
    text_arg(symptom, "symptom")
    recs = open_records(create=True)
    inv = ops.new_investigation(recs, title, symptom=symptom, files=files, tags=tags, environment=not no_env)
    data = inv.to_dict() | {"path": recs.path_for(inv.id)}
    emit(as_json, data, lambda: click.echo(f"{inv.id}  {inv.title}\n  -> {recs.path_for(inv.id)}"))


@click.command("list")
@click.option("--status", type=click.Choice(["open", "resolved", "wontfix"]), help="Only this status.")
@json_option
def list_(status, as_json):
    """List investigations, most recently updated first."""
    rows = ops.investigations(open_records(), status)

    def human():
        if not rows:
            click.echo("No investigations yet: `dbglog new TITLE` starts one.")
        width = max((len(r["id"]) for r in rows), default=0)  # (ids grow with their titles: one column for all)
        for r in rows:
            mark = "*" if r["current"] else " "
            click.echo(f"{mark} {r['id']:<{width}} {r['status']:<8} {r['attempts']:>3} att  {r['title']}")

    emit(as_json, rows, human)


@click.command()
@click.argument("ref", required=False)
@click.option("--markdown", is_flag=True, help="Print the markdown mirror file.")
@json_option
def show(ref, markdown, as_json):
    """Show an investigation (default: the current one)."""
    recs = open_records()
    inv = ops.shown(ops.investigation(recs, ref))
    inv_id = inv.id
    if markdown and not as_json:
        click.echo((recs.ws.root / recs.path_for(inv_id)).read_text(encoding="utf-8"), nl=False)
        return
    emit(as_json, inv.to_dict() | {"path": recs.path_for(inv_id)}, lambda: render_show(inv, recs.path_for(inv_id)))


@click.command()
@click.argument("ref")
@json_option
def use(ref, as_json):
    """Make an investigation the current one."""
    recs = open_records()
    inv_id = recs.use(ref)
    emit(as_json, {"current": inv_id}, lambda: click.echo(f"Now on {inv_id}"))


@click.command()
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


@click.group()
def attempt():
    """Record and browse numbered attempts."""


def edit_attempt_in_editor(initial: dict) -> dict:
    """Open $EDITOR on the attempt template; return the fields the user filled in."""
    from dbglog.core.markdown import scan_fields

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
    vals, _ = scan_fields(body, labels)
    return {k: v for k, v in vals.items() if v}


@attempt.command("add")
@click.argument("title", required=False)
@click.option("--title", "-t", "title_opt", help="The title, as an option (the way `attempt edit` takes it).")
@click.option("--hypothesis", "-H", help="What you think is going on.")
@click.option("--did", "-d", help="What you did (command, change).")
@click.option("--result", "-r", help="What happened.")
@click.option("--conclusion", "-c", help="What it tells you.")
@click.option("--outcome", "-o", help="worked | failed | partial | inconclusive | untested")
@click.option("--run", "runs", multiple=True, help="Link a run id (repeatable).")
@inv_option
@json_option
def attempt_add(title, title_opt, hypothesis, did, result, conclusion, outcome, runs, inv_ref, as_json):
    """Record an attempt. Opens $EDITOR for missing fields when run from a terminal."""
    title = one_title(title, title_opt)
    fields = {"title": title, "hypothesis": hypothesis, "did": did, "result": result,
              "conclusion": conclusion, "outcome": outcome}
    for k, v in fields.items():
        text_arg(v, k)
    recs = open_records()
    inv_id = recs.resolve(inv_ref)
    from dbglog.cli import common  # (looked up at call time: a test stands in a terminal by replacing it)

    if any(fields[k] is None for k in ("hypothesis", "did", "result", "conclusion")) and common.stdin_is_tty() \
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
    ops.check_title_length(title, "attempt title", "--hypothesis, --did or --result")
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
    inv = ops.investigation(recs, inv_ref)
    data = [a.to_dict() | {"investigation": inv.id} for a in inv.attempts]

    def human():
        if not inv.attempts:
            click.echo(f"No attempts in {inv.id} yet: `dbglog attempt add TITLE -d WHAT -r RESULT` records one.")
        for a in inv.attempts:
            click.echo(f"{a.number:>3}. [{a.outcome}] {a.title or a.did.splitlines()[0] if (a.title or a.did) else ''}")

    emit(as_json, data, human)


# --- key differences ----------------------------------------------------------------


@click.group()
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


def _apply_help(short: bool) -> str:
    """--apply's help, from the toggle kinds that take an apply spec (bisect/kinds.py)."""
    from dbglog.bisect import kinds

    forms = kinds.apply_forms()
    if short:
        return (f"How to switch it ({', '.join(f[0] for f in forms)}: off = working value, on = broken value; "
                "see `dbglog diff --help`).")
    cols = " or ".join(filter(None, [", ".join(f[0] for f in forms[:-1]), forms[-1][0]]))
    return (f"How to switch it for `bisect toggles --from-diffs`: {cols} (off = WORKING, on = BROKEN; unset/empty = "
            f"not set), or {', '.join(f[1] for f in forms)}.")


@diff.command("add")
@click.argument("factor")
@click.argument("working")
@click.argument("broken")
@click.option("--working-label", help="Column label of the working case, e.g. 'Repro (works)'.")
@click.option("--broken-label", help="Column label of the broken case, e.g. 'Actual (hangs)'.")
@click.option("--status", default="untested", help="untested | ruled-out | culprit")
@click.option("--apply", "apply_", default="", cls=_LazyHelpOption, help_fn=lambda: _apply_help(False))
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
        click.echo(f"  {'values' if notes.get('redacted') else 'apply spec'}: {notes['toggle_error']}")
    for n in notes.get("next") or []:
        click.echo(f"  next: {n}")


@diff.command("set")
@click.argument("factor", required=False, default="")
@click.option("--working", help="New value in the working case.")
@click.option("--broken", help="New value in the broken case.")
@click.option("--status", help="untested | ruled-out | culprit")
@click.option("--apply", "apply_", cls=_LazyHelpOption, help_fn=lambda: _apply_help(True))
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
    inv = ops.investigation(recs, inv_id)
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
    inv = ops.investigation(recs, inv_ref)
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


@click.group("next")
def next_():
    """The prioritised what-to-try-next list."""


@next_.command("add")
@click.argument("text")
@click.option("--detail", default="", help="Why, or how.")
@click.option("--at", "position", type=POSITION, help="Insert at this position, 1 for the first (default: the end).")
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
@click.argument("to", type=POSITION)
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
    inv = ops.investigation(recs, inv_ref)

    def human():
        if not inv.next_steps:
            click.echo(f"No next steps in {inv.id}: `dbglog next add TEXT` adds one.")
        for s in inv.next_steps:
            mark = {"todo": "[ ]", "done": "[x]", "dropped": "[-]"}[s.status]
            click.echo(f"{s.position}. {mark} {s.text}" + (f" — {s.detail}" if s.detail else ""))

    emit(as_json, [s.to_dict() for s in inv.next_steps], human)


@attempt.command("delete")
@click.argument("number", type=COUNT)
@inv_option
@json_option
def attempt_delete(number, inv_ref, as_json):
    """Delete attempt NUMBER (the other attempts keep their numbers)."""
    recs = open_records()
    inv_id = recs.resolve(inv_ref)
    a, unlinked = recs.delete_attempt(inv_id, number)
    said = "".join(f"\n  step {s.position} ({s.text}) no longer links it" for s in unlinked)
    emit(as_json, {"deleted": a.to_dict(), "investigation": inv_id, "unlinked_steps": [s.position for s in unlinked]},
         lambda: click.echo(f"Attempt {a.number} deleted from {inv_id}{said}"))
