"""logs/ and the outside world: import, sync, reindex, doctor, export, and git's merge driver.

Imports ``common`` and the format and storage services (importer, sync, merge, records)."""

from __future__ import annotations

import sys

import click

from dbglog import ops
from dbglog.cli.common import emit, json_option, open_records, safe_text, warn


@click.command("merge-driver", hidden=True)
@click.argument("base", type=click.Path(dir_okay=False))
@click.argument("ours", type=click.Path(dir_okay=False))
@click.argument("theirs", type=click.Path(dir_okay=False))
@click.argument("path", required=False, default="")
def merge_driver(base, ours, theirs, path):
    """Git merge driver for logs/*.md (set up by `dbglog init`): %O %A %B %P."""
    from dbglog.kb.merge import run_driver

    code, message = run_driver(base, ours, theirs, path)
    if message:
        click.echo(f"dbglog: {message}", err=True)
    sys.exit(code)


@click.command("import")
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
    from dbglog.kb import importer

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


@click.command("sync")
@click.option("--resolve", "resolve", multiple=True, metavar="PATH",
              help="After merging a conflict by hand: take this file as the truth.")
@click.option("--prune", is_flag=True, help="Delete investigations whose mirror file was deleted.")
@json_option
def sync_cmd(resolve, prune, as_json):
    """Import edits made to logs/ outside dbglog (runs before every command anyway)."""
    recs = open_records(sync=False)
    report = ops.sync_workspace(recs, resolve, prune=prune)
    data = report.to_dict()
    from dbglog.kb.sync import links_warning

    if links_warning(report.links):
        warn(links_warning(report.links))

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


@click.command()
@click.option("--force", is_flag=True,
              help="Also drop what only the database holds; set an unreadable database aside.")
@json_option
def reindex(force, as_json):
    """Rebuild the database from logs/ alone."""
    data = ops.reindex_workspace(force=force)
    emit(as_json, data, lambda: click.echo(f"Reindexed {data['investigations']} investigation(s) from logs/"))


@click.command()
@json_option
def doctor(as_json):
    """Check logs/ against the database. Exit 0 when healthy, 1 when problems are listed."""
    problems = ops.doctor(open_records(sync=False))

    def human():
        for p in problems:
            click.echo(safe_text(f"{p['kind']:<17} {p['path']}: {p['message']}"))
        if not problems:
            click.echo("Healthy: logs/ and the database agree.")

    emit(as_json, {"healthy": not problems, "problems": problems}, human)
    if problems:
        sys.exit(1)


@click.command()
@json_option
def export(as_json):
    """Re-render every investigation's markdown file."""
    paths = ops.export_all(open_records())
    emit(as_json, {"written": paths}, lambda: click.echo(f"Rendered {len(paths)} file(s) in logs/"))
