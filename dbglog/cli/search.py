"""Search and "was this tried?": search, tried.

Imports ``common`` and ops (search lives in dbglog/kb/search.py); the plain ``tried`` line is answered
without click by dbglog/fastpath.py, whose printer this module shares."""

from __future__ import annotations

import os
import sys

import click

from dbglog import ops
from dbglog.util.errors import DbglogError
from dbglog.cli.common import emit, json_option, open_records, scope_options, text_arg, warn
from dbglog.kb.present import print_hit as _print_hit


class _IdeaCommand(click.Command):
    """An idea often is a flag (``dbglog tried --enforce-eager``): a word that is no option of ours
    is part of the query, unless it looks like one of ours misspelt (``--jsno``); after ``--``
    every word is the query's."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("context_settings", {})["ignore_unknown_options"] = True
        super().__init__(*args, **kwargs)

    def parse_args(self, ctx, args):
        import difflib

        ours = [o for p in self.get_params(ctx) for o in (*p.opts, *p.secondary_opts) if o.startswith("--")]
        for w in args[:args.index("--")] if "--" in args else args:
            if w.startswith("--") and w not in ours:
                close = difflib.get_close_matches(w.split("=", 1)[0], ours + ["--help"], n=1, cutoff=0.75)
                if close and close[0] != w.split("=", 1)[0]:
                    raise DbglogError(f"no such option: {w} (did you mean {close[0]}?); to look for it as words, "
                                      f"put them after --: {ctx.command_path} -- {w}")
        return super().parse_args(ctx, args)


def _query_arg(words) -> str:
    query = " ".join(words)
    text_arg(query, "query")
    return query


_query_notes = ops.query_notes


@click.command("search", cls=_IdeaCommand)
@click.argument("query", nargs=-1, required=True)
@click.option("--status", help="Only investigations with this status (open | resolved | wontfix).")
@click.option("--outcome", "outcomes", multiple=True, help="Only attempts with this outcome (repeatable).")
@scope_options
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


@click.command(cls=_IdeaCommand)
@click.argument("idea", nargs=-1, required=True)
@click.option("--status", help="Only investigations with this status.")
@scope_options
@click.option("--limit", "-n", type=click.IntRange(1, 100), default=ops.TRIED_CANDIDATES, show_default=True)
@click.option("--llm", metavar="URL", help="Also ask this OpenAI-compatible endpoint to judge the candidates "
              "(opt-in; its answer is validated, the built-in judge stands when it is not usable).")
@click.option("--model", metavar="NAME", help="The model name to ask at --llm (default: 'default').")
@json_option
def tried(idea, status, tags, inv_ref, limit, llm, model, as_json):
    """Was IDEA already tried, and what happened? Run it before trying a fix.

    Looks in attempts (bisections and baseline runs labelled as such), key differences that were
    tested, next steps done, free sections and watched docs, and compares experiments: the knobs
    (env vars, flags, config keys, versions, or the field's words for them), which way they were
    turned, and on what. The answer is a tier: tried (the same experiment), tried another way (the
    same knob turned another way or to another value: how it differs is said), related (named, proposed
    or the same topic), not tried; each record with its outcome and conclusion first. Exit status:
    0 = tried, 1 = anything else, 2 = bad input. See docs/tried.md.
    """
    text = _query_arg(idea)
    if model is not None and llm is None:
        raise DbglogError("--model names the model to ask at --llm URL; give --llm too")
    recs = open_records()
    res = ops.tried(recs, text, status=status, tags=tags, inv_ref=inv_ref, limit=limit, warn=warn, llm=llm,
                    model=model)

    def human():
        from dbglog.fastpath import print_tried  # (the printer `dbglog tried` uses without click too)

        print_tried(res, text, _query_notes(res.result.query), echo=click.echo, style=click.style)

    try:
        emit(as_json, res.to_dict(), human)
        sys.stdout.flush()
    except BrokenPipeError:  # (`tried ... | head`: the answer is the exit status, not click's 1 for EPIPE)
        os._exit(0 if res.close else 1)
    if not res.close:
        sys.exit(1)
