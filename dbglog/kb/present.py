"""How records and search hits look on a terminal: shared by the CLI and the demo (both commands;
neither borrows the other's privates). Text only; no database or file access.
"""

from __future__ import annotations

import click

OUTCOME_STYLE = {"worked": "green", "failed": "red", "partial": "yellow", "inconclusive": "magenta",
                 "untested": "dim"}




def render_show(inv, path: str) -> None:
    import sys

    if not sys.stdout.isatty():  # an agent, a pipe: the same text without rich (~50 ms of imports)
        render_show_plain(inv, path)
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    con = Console(highlight=False)
    con.print(f"[bold]{escape(inv.title)}[/bold]  [dim]{inv.id}[/dim]")
    con.print(f"Status: [bold]{inv.status}[/bold]   Tags: {escape(', '.join(inv.tags)) or '-'}   File: {path}")
    for label, value in (("Symptom", inv.symptom), ("Environment", inv.environment),
                         ("Related files", "\n".join(inv.related_files)), ("Root cause", inv.root_cause)):
        if value:
            con.print(f"[bold]{label}:[/bold] {escape(value)}")
    for a in inv.attempts:
        style = OUTCOME_STYLE.get(a.outcome, "")
        con.print(f"\n[bold]Attempt {a.number}[/bold]: {escape(a.title)}  [{style}]{a.outcome}[/{style}]")
        for label, value in (("Hypothesis", a.hypothesis), ("Did", a.did), ("Result", a.result),
                             ("Conclusion", a.conclusion)):
            if value:
                con.print(f"  [dim]{label}:[/dim] {escape(_hang(value))}")
    if inv.differences:
        t = Table(title="Key differences", title_justify="left")
        for col in ("#", "Factor", inv.labels[0], inv.labels[1], "Status"):
            t.add_column(escape(col))
        for d in inv.differences:
            t.add_row(str(d.position), escape(d.factor), escape(d.working), escape(d.broken), d.status)
        con.print()
        con.print(t)
    if inv.next_steps:
        con.print("\n[bold]What to try next[/bold]")
        for s in inv.next_steps:
            mark = {"todo": "[ ]", "done": "[x]", "dropped": "[-]"}[s.status]
            extra = f" — {escape(s.detail)}" if s.detail else ""
            done = f" (Attempt {s.attempt})" if s.attempt else ""
            con.print(f"  {s.position}. {escape(mark)} {escape(s.text)}{extra}{done}")
    if inv.sections:  # bisection reports, notes: markdown the user or dbglog wrote
        from rich.markdown import Markdown

        for sec in inv.sections:
            con.print()
            con.print(Markdown(sec.heading + "\n\n" + sec.body))




def _hang(value: str) -> str:
    """A field of several lines (an imported list) with its later lines under its first, not at the margin
    where they read as the next attempt's."""
    return value.rstrip("\n").replace("\n", "\n    ")


def render_show_plain(inv, path: str) -> None:
    """``render_show`` as plain text: the key differences as a markdown table, sections as the
    markdown they are."""
    out = [f"{inv.title}  {inv.id}", f"Status: {inv.status}   Tags: {', '.join(inv.tags) or '-'}   File: {path}"]
    for label, value in (("Symptom", inv.symptom), ("Environment", inv.environment),
                         ("Related files", "\n".join(inv.related_files)), ("Root cause", inv.root_cause)):
        if value:
            out.append(f"{label}: {value}")
    for a in inv.attempts:
        out += ["", f"Attempt {a.number}: {a.title}  {a.outcome}"]
        for label, value in (("Hypothesis", a.hypothesis), ("Did", a.did), ("Result", a.result),
                             ("Conclusion", a.conclusion)):
            if value:
                out.append(f"  {label}: {_hang(value)}")
    if inv.differences:
        cell = lambda v: str(v).replace("|", "\\|").replace("\n", " ")  # noqa: E731
        out += ["", "Key differences", "", f"| # | Factor | {cell(inv.labels[0])} | {cell(inv.labels[1])} | Status |",
                "|---|---|---|---|---|"]
        out += [f"| {d.position} | {cell(d.factor)} | {cell(d.working)} | {cell(d.broken)} | {d.status} |"
                for d in inv.differences]
    if inv.next_steps:
        out += ["", "What to try next"]
        for s in inv.next_steps:
            mark = {"todo": "[ ]", "done": "[x]", "dropped": "[-]"}[s.status]
            out.append(f"  {s.position}. {mark} {s.text}" + (f" — {s.detail}" if s.detail else "")
                       + (f" (Attempt {s.attempt})" if s.attempt else ""))
    for sec in inv.sections:
        out += ["", sec.heading, "", sec.body.rstrip("\n")]
    click.echo("\n".join(out))


def styled_snippet(hit) -> str:
    return "".join(click.style(t, bold=True, fg="yellow") if m else t for t, m in hit.snippet_parts)


def hit_heading(h) -> str:
    color = OUTCOME_STYLE.get(h.outcome, "")
    fg = {"green": "green", "red": "red", "yellow": "yellow", "magenta": "magenta"}.get(color)
    outcome = click.style(h.outcome, fg=fg, bold=True) if h.outcome else ""
    if h.kind == "attempt":
        return f"Attempt {h.number}: {h.title}  [{outcome}]"
    if h.kind == "investigation":
        return f"Investigation: {h.title}  [{outcome}]"
    if h.kind == "difference":
        return f"Key difference {h.number}: {h.title} ({h.fields['working']} vs {h.fields['broken']})  [{outcome}]"
    if h.kind == "section":
        what = "Section" if h.investigation else "Watched doc"
        return f"{what}: {h.title}" + (f"  [{outcome}]" if outcome else "")
    return f"Next step {h.number}: {h.title}  [{outcome}]"


def where(h) -> str:
    """A section hit's file:line (the mirror file, or the watched doc; its name shown inert)."""
    from dbglog.util.redact import sanitize

    return sanitize(f"{h.path}:{h.line}" if h.line else (h.path or ""))


def print_hit(h, n: int) -> None:
    click.echo(f"{n}. {hit_heading(h)}")
    if h.investigation:
        click.echo(click.style(f"   {h.investigation}  {h.investigation_title}  ({h.status})", dim=True))
    if h.kind == "attempt" and h.fields.get("conclusion"):
        click.echo(f"   conclusion: {h.fields['conclusion']}")
    if h.kind == "section":
        click.echo(f"   {where(h)}: {styled_snippet(h)}")
    elif h.snippet_parts and not (h.kind == "attempt" and h.snippet_field == "conclusion"):
        click.echo(f"   {h.snippet_field}: {styled_snippet(h)}")  # (a conclusion is printed above)
    terms = ", ".join(h.matched_terms) or "its investigation"
    click.echo(click.style(f"   why: {h.match} ({terms}) in {', '.join(h.matched_fields) or 'context'}"
                           f"; similarity {h.similarity:.0f}", dim=True))
