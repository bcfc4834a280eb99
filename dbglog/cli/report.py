"""report: one investigation as one self-contained HTML page, or as JSON (dbglog/report.py builds both).

Imports ``common`` and dbglog/report.py."""

from __future__ import annotations

import os
from pathlib import Path

import click

from dbglog.cli.common import emit, json_option, open_records
from dbglog.util.errors import DbglogError


def _target(html: str) -> Path:
    path = Path(html).expanduser().resolve()
    if path.is_dir():
        raise DbglogError(f"--html {html}: is a directory; give a file name such as {Path(html) / 'report.html'}")
    if not path.parent.is_dir():
        raise DbglogError(f"--html {html}: the folder {path.parent} does not exist; create it or choose another")
    given = Path(html).expanduser()  # (as given: /dev/stdout resolves to a pipe's name that is no path)
    if os.path.lexists(given) and not given.is_file():
        # (the page replaces the path by rename: a device, a pipe or /dev/stdout would become a regular file)
        raise DbglogError(f"--html {html}: is not a regular file (a device, a pipe, a socket); give a file name")
    return path


def _outside_workspace(path: Path, ws, html: str) -> None:
    """The page never replaces what dbglog keeps: its database, run folders and settings, or a file in logs/."""
    for kept, what in ((ws.db_path.parent.resolve(), ws.db_path.parent.name + "/"), (ws.logs_dir.resolve(), "logs/")):
        if path == kept or kept in path.parents:
            raise DbglogError(f"--html {html}: is inside {what}, which dbglog keeps; write the page elsewhere "
                              "(report.html in the project's root, say)")


@click.command("report")
@click.argument("ref", required=False, metavar="[ID]")
@click.option("--html", "html", metavar="FILE", help="Write the report as one self-contained HTML page to FILE.")
@json_option
def report_cmd(ref, html, as_json):
    """One investigation's report: attempts, key differences, bisection charts, runs.

    With --html FILE, one self-contained page (inline SVG charts, nothing loaded from the network);
    with --json, the same data (charts as SVG markup)."""
    from dbglog import report

    path = _target(html) if html else None  # refused before anything is read or written
    recs = open_records()
    if path is not None:
        _outside_workspace(path, recs.ws, html)
    data = report.gather(recs, ref)
    if path is not None:
        report.write_html(data, path)
        data["html"] = str(path)

    def human():
        inv = data["investigation"]
        click.echo(f"{inv['title']}  {inv['id']}  ({inv['status']})")
        click.echo(f"  {len(data['attempts'])} attempt(s), {len(data['differences'])} key difference(s), "
                   f"{len(data['bisections'])} bisection(s), {len(data['runs'])} run(s)")
        for b in data["bisections"]:
            click.echo(f"  {b['kind']} bisection {b['session']} ({b['status']}): {b['message'].split('. ')[0].rstrip('.')}")
        click.echo(f"wrote {path}" if path else "(--html FILE writes the page)")

    emit(as_json, data, human)
