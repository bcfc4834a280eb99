"""`dbglog import`'s ways of reading: plain, explained, reviewed, or with a model's help.

Imports ``common`` and the format services (importer, docreader's review and llm)."""

from __future__ import annotations

from pathlib import Path

import click

from dbglog.cli.common import emit, open_records, safe_text
from dbglog.util.errors import DbglogError


def check_ways(explain: bool, review: bool, apply_review, llm_url, llm_model: str, use: bool) -> None:
    """One way of reading at a time: a second one would be silently ignored."""
    ways = [n for n, on in (("--explain", explain), ("--review", review), ("--apply-review", apply_review),
                            ("--llm", llm_url)) if on]
    if len(ways) > 1:
        raise DbglogError(f"{' and '.join(ways)} are different ways of reading a document; give one")
    if llm_model and not llm_url:
        raise DbglogError("--model names the model to ask with --llm URL; give --llm too")
    if use and (explain or review):
        raise DbglogError(f"{ways[0]} changes nothing, so there is nothing to --use; import the file to use it")


def run(files, dry_run: bool, use: bool, corrections, as_json: bool) -> None:
    from dbglog.kb import importer

    recs = open_records(create=not dry_run)
    data = importer.import_files(recs, list(files), dry_run=dry_run, use=use, corrections=corrections)

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
                    lines = "-".join(str(x) for x in a.get("source_lines") or [])
                    click.echo(f"          attempt {a['number']:<3} {a['outcome']:<12} {lines:>9}  "
                               f"{safe_text(a['title'])[:64]}")
            if rec.get("free_sections"):
                click.echo(f"          kept as free text: {'; '.join(safe_text(h) for h in rec['free_sections'])}")
        for sk in data["skipped"]:
            click.echo(f"template  {sk['source']}:{sk['line']} {safe_text(sk['title'])!r} ({sk['reason']})")
        cur = data.get("current")
        click.echo(f"current investigation: {cur or '(none)'}"
                   + ("" if use and not dry_run else " (unchanged; `--use` or `dbglog use ID` to switch)"))

    emit(as_json, data, human)


def _one_file(files) -> Path:
    if len(files) != 1 or Path(files[0]).is_dir():
        raise DbglogError("--explain and --review read one markdown file; give exactly one")
    return Path(files[0])


def look(files, explain: bool, review: bool, as_json: bool) -> None:
    """--explain / --review: read one file, change nothing in the workspace."""
    from dbglog.docreader import review as rv
    from dbglog.kb import importer

    path = _one_file(files)
    text = importer.read_source(path, str(path))
    parsed, _ = importer.parse_document(text, str(path), explain=True)
    if review:
        out = path.with_name(path.name + ".review.md")
        from dbglog.util.fsutil import atomic_write

        atomic_write(out, rv.review_markdown(str(path), text, parsed).encode())
        data = {"review": str(out), "source": str(path)}
        emit(as_json, data, lambda: click.echo(
            f"wrote {out}: tick and correct it, then `dbglog import --apply-review {out}`"))
        return
    units = rv.explain(parsed, len(text.split("\n")))

    def human():
        for u in units:
            why = ", ".join(f"{f['cue']} ({f['weight']:+.1f})" for f in u["features"][:3])
            lines = f"{u['lines'][0]}-{u['lines'][1]}"
            click.echo(f"{lines:>9}  {u['label']:<13} {u['confidence']:.2f}  {safe_text(u['text'])[:70]}")
            if why:
                click.echo(f"{'':>9}  {'':<13}       because: {safe_text(why)}")

    emit(as_json, {"source": str(path), "units": units}, human)


def reviewed(files, review_path: str):
    """--apply-review: the document the review names (or the one given), with the ticked attempts."""
    from dbglog.docreader import review as rv
    from dbglog.kb import importer

    rp = Path(review_path)
    text = importer.read_source(rp, review_path)
    corr = rv.parse_review(text, review_path)
    doc = Path(files[0]) if files else _reviewed_doc(rp, corr.source)
    if len(files) > 1:
        raise DbglogError("--apply-review imports the one document its review is about; give at most that file")
    source = importer.read_source(doc, str(doc))
    if f"sha:{rv.sha(source)}" not in text.split("\n", 1)[0]:
        raise DbglogError(f"{doc} changed since {review_path} was written; run `dbglog import --review {doc}` again")
    return [str(doc)], {str(doc.resolve()): corr}


def _reviewed_doc(review: Path, source: str) -> Path:
    """The document a review is about: --review writes the review beside it, so look there first (the review
    names it as it was given, relative to where --review ran)."""
    beside = review.parent / Path(source).name
    if not Path(source).is_absolute() and beside.is_file():
        return beside
    return Path(source)


def asked(files, url: str, model: str):
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
            click.echo(f"dbglog: {f}: the model's answer was not used ({e}); read by the built-in reader", err=True)
    return out
