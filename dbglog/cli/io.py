"""logs/ and the outside world: import, sync, reindex, doctor, export, and git's merge driver.

Imports ``common`` and the format and storage services (importer, sync, merge, records)."""

from __future__ import annotations

import sys

import click

from dbglog import ops
from dbglog.cli.common import emit, json_option, open_records, safe_text


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
@click.argument("files", nargs=-1, type=click.Path(dir_okay=True))
@click.option("--dry-run", is_flag=True, help="Show what would be imported; change nothing.")
@click.option("--use", "use", is_flag=True, help="Make the imported investigation the current one.")
@click.option("--explain", is_flag=True, help="Show every unit of FILE with its label, confidence and cues; "
              "change nothing.")
@click.option("--review", is_flag=True, help="Write FILE.review.md: the attempts read, to tick and correct; "
              "change nothing.")
@click.option("--apply-review", "apply_review", type=click.Path(dir_okay=False), metavar="REVIEW.md",
              help="Import the document a corrected review file names, with exactly its ticked attempts.")
@click.option("--llm", "llm_url", metavar="URL", help="Ask an OpenAI-compatible endpoint (vLLM, SGLang, llama.cpp, "
              "Ollama) which units are attempts; its answer is validated, the built-in reader is the fallback.")
@click.option("--model", "llm_model", default="", metavar="NAME", help="The model name to ask for with --llm.")
@json_option
def import_cmd(files, dry_run, use, explain, review, apply_review, llm_url, llm_model, as_json):
    """Import hand-written debug docs (DEBUG.md, per-bug notes, issue threads) as investigations.

    Every line of the document is kept: what reads as structure becomes fields, attempts (with
    outcomes, the source lines they were read from and who did them), key differences and next steps;
    the rest stays verbatim, in order, under its own headings, as free sections. Markdown is never
    refused for lack of structure. Re-importing a file updates what it imported before instead of
    duplicating it. A file that cannot be read (not UTF-8, binary, git conflict markers) stops the whole
    import, nothing written, with the file and line. The current investigation stays as it was unless
    --use. --explain shows how each unit was read; --review writes a checklist to correct and take back
    with --apply-review. A directory stands for the .md files under it.
    """
    from dbglog.cli import importing

    importing.check_ways(explain, review, apply_review, llm_url, llm_model, use)
    if explain or review:
        return importing.look(files, explain, review, as_json)
    if apply_review:
        files, corrections = importing.reviewed(files, apply_review)
    elif llm_url:
        corrections = importing.asked(files, llm_url, llm_model)
    else:
        corrections = None
    if not files:
        raise click.UsageError("give the markdown files to import (or --apply-review REVIEW.md)")
    importing.run(files, dry_run, use, corrections, as_json)


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
