"""report: one investigation as one self-contained HTML page, or as JSON (dbglog/report.py builds both).

Imports ``common`` and dbglog/report.py."""

from __future__ import annotations

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
    return path


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
