"""logs/ and the outside world: import, sync, reindex, doctor, export, and git's merge driver.

Imports ``common`` and the format and storage services (importer, sync, merge, records)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import click

from dbglog import ops
from dbglog.cli.common import LINES, emit, json_option, open_records, safe_text, warn
from dbglog.util.errors import DbglogError
from dbglog.util.redact import clean, clean_obj


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
@click.option("--units", "units", is_flag=True, help="Show FILE cut into units with the ids an extraction cites, "
              "and the guide to what an attempt is; change nothing (an agent's reading, as MCP doc_units).")
@click.option("--lines", "lines", type=LINES, metavar="A-B", help="With --units: only the units on lines A-B "
              "(1-based; a long document read a part at a time).")
@click.option("--extraction", "extraction", type=click.Path(dir_okay=False), metavar="EXTRACTION.json",
              help="Import FILE with exactly the attempts EXTRACTION.json cites by unit id (see --units); a wrong "
              "one is refused, nothing written.")
@click.option("--llm", "llm_url", metavar="URL", help="Ask an OpenAI-compatible endpoint (vLLM, SGLang, llama.cpp, "
              "Ollama) which units are attempts; its answer is validated, the built-in reader is the fallback.")
@click.option("--model", "llm_model", default="", metavar="NAME", help="The model name to ask for with --llm.")
@json_option
def import_cmd(files, dry_run, use, explain, review, apply_review, units, lines, extraction, llm_url, llm_model,
               as_json):
    """Import hand-written debug docs (DEBUG.md, per-bug notes, issue threads) as investigations.

    Every line of the document is kept: what reads as structure becomes fields, attempts (with
    outcomes, the source lines they were read from and who did them), key differences and next steps;
    the rest stays verbatim, in order, under its own headings, as free sections. Markdown is never
    refused for lack of structure. Re-importing a file updates what it imported before instead of
    duplicating it. A file that cannot be read (not UTF-8, binary, git conflict markers) stops the whole
    import, nothing written, with the file and line. The current investigation stays as it was unless
    --use. --explain shows how each unit was read; --review writes a checklist to correct and take back
    with --apply-review; an agent reads --units and sends its reading back with --extraction. A directory
    stands for the .md files under it.
    """
    _check_ways(explain, review, apply_review, llm_url, llm_model, use, units, extraction)
    if explain or review:
        return _look(files, explain, review, as_json)
    if lines is not None and not units:
        raise DbglogError("--lines picks the units --units shows; give --units too")
    if units:
        return _units(files, lines, as_json)
    if extraction:
        return _extracted(files, extraction, dry_run, use, as_json)
    if apply_review:
        files, corrections = _reviewed(files, apply_review)
    elif llm_url:
        corrections = _asked(files, llm_url, llm_model)
    else:
        corrections = None
    if not files:
        raise click.UsageError("give the markdown files to import (or --apply-review REVIEW.md)")
    _import(files, dry_run, use, corrections, as_json)


# --- import's ways of reading: plain, explained, reviewed, or with a model's help ---


def _check_ways(explain: bool, review: bool, apply_review, llm_url, llm_model: str, use: bool, units: bool = False,
                extraction=None) -> None:
    """One way of reading at a time: a second one would be silently ignored."""
    ways = [n for n, on in (("--explain", explain), ("--review", review), ("--apply-review", apply_review),
                            ("--units", units), ("--extraction", extraction), ("--llm", llm_url)) if on]
    if len(ways) > 1:
        raise DbglogError(f"{' and '.join(ways)} are different ways of reading a document; give one")
    if llm_model and not llm_url:
        raise DbglogError("--model names the model to ask with --llm URL; give --llm too")
    if use and (explain or review or units):
        raise DbglogError(f"{ways[0]} changes nothing, so there is nothing to --use; import the file to use it")


def _import(files, dry_run: bool, use: bool, corrections, as_json: bool) -> None:
    from dbglog.kb import importer

    recs = open_records(create=not dry_run)
    data = importer.import_files(recs, list(files), dry_run=dry_run, use=use, corrections=corrections)
    _report(data, dry_run, use, as_json)


def _report(data: dict, dry_run: bool, use: bool, as_json: bool) -> None:
    """What an import did (or would do): one line per investigation, its attempts with --dry-run."""
    def human():
        verb = {"create": "new", "update": "updated", "unchanged": "unchanged"}
        width = max((len(r["id"]) for r in data["investigations"]), default=0)
        for r in data["investigations"]:
            click.echo(f"{'would ' if dry_run else ''}{verb[r['action']]:<9} {r['id']:<{width}} {r['title']}")
            click.echo(f"          from {r['source']}: {r['attempts']} attempt(s), {r['differences']} "
                       f"difference(s), {r['next_steps']} next step(s)")
            rec = r.get("recognized") or {}
            if rec.get("fields"):
                click.echo(f"          fields: {', '.join(f.replace('_', ' ') for f in rec['fields'])}")
            if dry_run:
                for a in r.get("attempt_list", []):
                    lines = "-".join(str(x) for x in a.get("source_lines") or [])
                    click.echo(f"          attempt {a['number']:<3} {a['outcome']:<12} {lines:>9}  "
                               f"{safe_text(a['title'])[:64]}")
            if rec.get("free_sections"):
                click.echo(f"          kept as free text: {_some(rec['free_sections'])}")
            for u in r.get("unticked", []):
                lines = "-".join(str(x) for x in u["source_lines"]) or "?"
                said = (f"{'would be ' if dry_run else ''}removed: this reading (a review or an extraction) left it "
                        "out (its lines stay as text)"
                        if u["removed"] else "kept: this reading (a review or an extraction) left it out, but it holds "
                        "words that are not in "
                        f"the document (edited since); `dbglog attempt delete {u['number']} -i {r['id']}` removes it")
                click.echo(f"          attempt {u['number']} (lines {lines}) {safe_text(u['title'])[:50]!r} {said}")
        for sk in data["skipped"]:
            click.echo(f"template  {sk['source']}:{sk['line']} {safe_text(sk['title'])!r} ({sk['reason']})")
        for r in data["reviews"]:
            _say_review(r, dry_run)
        cur = data.get("current")
        if use and dry_run and data["investigations"]:  # (it said "unchanged; `--use` ... to switch" to a --use)
            would = data["investigations"][0]
            click.echo(f"current investigation: {cur or '(none)'} (would become "
                       f"{would['id'] if would['action'] != 'create' else 'the one imported'})")
        else:
            click.echo(f"current investigation: {cur or '(none)'}"
                       + ("" if use and not dry_run else " (unchanged; `--use` or `dbglog use ID` to switch)"))

    data = clean_obj(data)  # (what a dry run shows is what is stored: a title holding a token was shown in clear)
    emit(as_json, data, human)


#: the section names an import line lists; a long document's hundreds of "(more N)" names are counted, not listed
#: (``--json`` carries them all)
FREE_LISTED = 12


def _some(names: list[str]) -> str:
    shown = "; ".join(safe_text(h) for h in names[:FREE_LISTED])
    more = len(names) - FREE_LISTED
    return shown + (f"; and {more} more (`--json` lists them all)" if more > 0 else "")


def _say_review(r: dict, dry_run: bool) -> None:
    """What a review applied before did to this import: one line, and one more per correction it had to drop."""
    by = r.get("by", "review")
    if r["review"] == "kept":
        click.echo(f"reviewed  {safe_text(r['source'])}: {r['attempts']} attempt(s) as its applied {by} set them")
    again = f"`dbglog import --review {safe_text(r['file'])}` to review it again" if by == "review" else \
        f"`dbglog import --units {safe_text(r['file'])}` and a new `--extraction` to read it again"
    for d in r["dropped"]:
        a, b = d["source_lines"]
        click.echo(f"dropped   {safe_text(r['source'])} lines {a}-{b} {safe_text(d['title'])[:60]!r} ({d['outcome']}): "
                   f"these lines no longer hold the text reviewed, so they {'would be' if dry_run else 'are'} kept "
                   f"as text; {again}")
    for row in r["unreadable"]:
        click.echo(f"unread    {safe_text(r['source'])}: a row of its kept review (## Import review) is not in the form "
                   f"`- lines A-B · OUTCOME · [by WHO ·] text:CHECKSUM · TITLE`: {safe_text(row)[:80]!r}")
    if r["review"] == "kept" and r["changed_since_review"]:
        click.echo(f"changed   {safe_text(r['source'])} since its {by}: attempts written since are not read "
                   f"(only the {'reviewed' if by == 'review' else 'extracted'} ones); {again}")


def _one_file(files, ways: str = "--explain and --review read") -> Path:
    if len(files) != 1 or Path(files[0]).is_dir():
        raise DbglogError(f"{ways} one markdown file; give exactly one")
    return Path(files[0])


def _units(files, lines, as_json: bool) -> None:
    """--units: the document as an agent reads it before it sends an --extraction back; nothing written."""
    from dbglog.kb import importer

    path = _one_file(files, "--units reads")
    data = clean_obj(importer.agent_units(str(path), lines))  # (what an agent reads holds no secret of the doc's)

    def human():
        for line in textwrap.wrap(safe_text(data["guide"]), 100):
            click.echo(f"# {line}")
        click.echo(f"# digest: {data['digest']} (send it back with the extraction)")
        for u in data["units"]:
            lines = f"{u['lines'][0]}-{u['lines'][1]}"
            text = " ".join(safe_text(u["text"]).split())
            click.echo(f"{u['id']:>5}  {lines:>9}  {u['kind']:<8} {u['label']:<13} {text[:100]}")

    emit(as_json, data, human)


def _extracted(files, extraction: str, dry_run: bool, use: bool, as_json: bool) -> None:
    """--extraction: FILE with exactly the attempts an agent cited by unit id (validated before anything opens)."""
    from dbglog.kb import importer
    from dbglog.util import jsonsafe

    path = _one_file(files, "--extraction imports")
    raw = importer.read_source(Path(extraction), extraction)
    try:
        given = jsonsafe.loads(raw)
    except ValueError as e:
        raise DbglogError(f"{extraction}: not JSON ({str(e)[:80]}); give the extraction as "
                          '{"attempts": [{"units": [ids], "title": ..., "outcome": ...}]}') from None
    corr = importer.read_extraction(str(path), given, extraction)
    recs = open_records(create=not dry_run)
    data, warnings = importer.import_extracted(recs, str(path), corr, dry_run=dry_run, use=use)
    for w in warnings:
        warn(w)
    _report(data, dry_run, use, as_json)


def _look(files, explain: bool, review: bool, as_json: bool) -> None:
    """--explain / --review: read one file, change nothing in the workspace."""
    from dbglog.docreader import review as rv
    from dbglog.kb import importer

    path = _one_file(files)
    text = importer.read_source(path, str(path))
    kept = _kept_review_here(path, text) if review else None
    parsed, _ = importer.parse_document(text, str(path), kept, explain=True)
    if review:
        out = path.with_name(path.name + ".review.md")
        from dbglog.util.fsutil import atomic_write

        guessed = importer.parse_document(text, str(path), explain=True)[0] if kept is not None else None
        fresh = clean(rv.review_markdown(str(path), text, parsed, guessed=guessed)).encode()
        _keep_edited_review(out, fresh, kept)
        atomic_write(out, fresh)
        data = {"review": str(out), "source": str(path), "kept": kept is not None}
        emit(as_json, data, lambda: click.echo(
            f"wrote {out}{' (from the review applied before)' if kept is not None else ''}: tick and correct it, "
            f"then `dbglog import --apply-review {out}`"))
        return
    units = clean_obj(rv.explain(parsed, len(text.split("\n"))))  # (shown as stored: no secret of the doc's)

    def human():
        for u in units:
            why = ", ".join(f"{f['cue']} ({f['weight']:+.1f})" for f in u["features"][:3])
            lines = f"{u['lines'][0]}-{u['lines'][1]}"
            click.echo(f"{lines:>9}  {u['label']:<13} {u['confidence']:.2f}  {safe_text(u['text'])[:70]}")
            for key, name in (("learned", "learned attempt"), ("learned_step", "learned next step")):
                if u.get(key) is not None:
                    why = (why + ", " if why else "") + f"{name} p={u[key]:.2f}"
            if why:
                click.echo(f"{'':>9}  {'':<13}       because: {safe_text(why)}")
            said = rv.read_as_text(u["read_as"])
            if u["kind"] == "code" and said == "text":
                said = "code, kept as text (what a code block says is not read)"
            click.echo(f"{'':>9}  {'':<13}       read as: {said}")

    emit(as_json, {"source": str(path), "units": units}, human)


def _keep_edited_review(out: Path, fresh: bytes, kept) -> None:
    """A review file whose ticked rows are neither this reading's nor those of the review applied before holds
    corrections not applied yet: refused rather than overwritten (a second --review lost them)."""
    from dbglog.docreader import review as rv

    try:
        old = out.read_bytes().decode("utf-8", "replace")
    except FileNotFoundError:
        return
    except OSError as e:
        raise DbglogError(f"cannot read {out}: {e.strerror}") from None

    def rows(corr) -> list:  # (a kept review's rows as applied: those whose lines changed since too)
        return sorted((c.first, c.last, c.title, c.outcome, c.who) for c in [*corr.attempts, *corr.dropped])

    try:
        mine = rows(rv.parse_review(old, str(out)))
    except DbglogError:
        mine = None  # (not a review file, or one edited out of its form: not ours to overwrite either)
    if mine is not None and mine in (rows(rv.parse_review(fresh.decode(), str(out))), rows(kept) if kept else None):
        return
    raise DbglogError(f"{out} holds corrections not applied yet (or is not a review file): apply it with "
                      f"`dbglog import --apply-review {out}`, or delete it to write a fresh one")


def _kept_review_here(path: Path, text: str):
    """The review applied to this document before, in the workspace here (None outside one, or never reviewed):
    a second --review starts from it."""
    from dbglog.kb import importer
    from dbglog.util import workspace

    if not workspace.find().exists:
        return None  # (--review outside a workspace creates none)
    recs = open_records()
    return importer.kept_review(recs.store, importer.source_name(path, recs.ws.root), text)


def _reviewed(files, review_path: str):
    """--apply-review: the document the review names (or the one given), with the ticked attempts."""
    from dbglog.docreader import review as rv
    from dbglog.kb import importer

    rp = Path(review_path)
    text = importer.read_source(rp, review_path)
    corr = rv.parse_review(text, review_path)
    if len(files) > 1:
        raise DbglogError("--apply-review imports the one document its review is about; give at most that file")
    named = _reviewed_doc(rp, corr.source)
    doc = Path(files[0]) if files else named
    source = importer.read_source(doc, str(doc))
    if corr.reviewed != rv.sha(source):
        if files and not _same_file(doc, named):
            raise DbglogError(f"{review_path} is a review of {corr.source}, not of {doc}; give that file, or "
                              f"`dbglog import --review {doc}` to review this one")
        raise DbglogError(f"{doc} changed since {review_path} was written; run `dbglog import --review {doc}` again")
    rv.check_rows(corr, source, review_path, str(doc))
    return [str(doc)], {str(doc.resolve()): corr}


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):
        return False


def _reviewed_doc(review: Path, source: str) -> Path:
    """The document a review is about: --review writes the review beside it, so look there first (the review
    names it as it was given, relative to where --review ran)."""
    beside = review.parent / Path(source).name
    if not Path(source).is_absolute() and beside.is_file():
        return beside
    return Path(source)


def _asked(files, url: str, model: str):
    """--llm: each file's attempts as a model reads them, validated; a file whose answer fails is read by the
    built-in reader (said on stderr)."""
    from dbglog.docreader import llm
    from dbglog.kb import importer

    out = {}
    for f in files:
        p = Path(f)
        if p.is_dir():
            click.echo(f"dbglog: {f}: a directory's files are read by the built-in reader; name the files to "
                       "send them to the model", err=True)
            continue
        text = importer.read_source(p, f)
        try:
            out[str(p.resolve())] = llm.extract(url, model, text, f)
        except llm.ModelError as e:
            click.echo(f"dbglog: {f}: the model's answer was not used ({' '.join(safe_text(str(e)).split())}); read "
                       "by the built-in reader", err=True)  # (the server's reason phrase may hold terminal escapes)
    return out


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
    for line in report.misplaced:
        warn(line)

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
    recs = open_records(sync=False)
    ops.sync_records(recs, warn, keep_newer=True)  # (an older copy of a file is written over, not refused)
    paths = ops.export_all(recs)
    emit(as_json, {"written": paths}, lambda: click.echo(f"Rendered {len(paths)} file(s) in logs/"))
