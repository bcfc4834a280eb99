"""`dbglog failures`: the failures seen in this workspace, grouped by fingerprint (issue 27).

Imports ``common`` and the services (ops, kb/failures)."""

from __future__ import annotations

import click

from dbglog import ops
from dbglog.cli.common import COUNT, emit, json_option, open_records, safe_text


@click.group("failures", invoke_without_command=True)
@click.option("--limit", type=COUNT, default=50, show_default=True, help="At most N fingerprints.")
@json_option
@click.pass_context
def failures(ctx, limit, as_json):
    """The failures seen here by fingerprint: first and last seen, count, investigations, status."""
    if ctx.invoked_subcommand is not None:
        return
    rows = ops.failure_list(open_records(), limit)

    def human():
        if not rows:
            click.echo("No failures seen yet: `dbglog run -- CMD` fingerprints each failing run.")
        for r in rows:
            invs = ", ".join(i["id"] for i in r["investigations"][:2]) + \
                (f" +{len(r['investigations']) - 2}" if len(r["investigations"]) > 2 else "")
            click.echo(safe_text(f"{r['key']}  {r['status']:<10} {r['count']:>4}×  {(r['first_seen'] or '?')[:10]} .. "
                                 f"{(r['last_seen'] or '?')[:10]}  [{r['signature']}] {r['line'][:70]}"
                                 + (f"  ({invs})" if invs else "")))

    emit(as_json, rows, human)


@failures.command("show")
@click.argument("fp")
@json_option
def failures_show(fp, as_json):
    """The runs and records of one fingerprint FP (as `dbglog failures` lists it, or a prefix)."""
    data = ops.failure_show(open_records(), fp)

    def human():
        f = data["fingerprint"]
        click.echo(safe_text(f"{f['key']} [{f['signature']}] {data['status']}, {data['count']} time(s)"))
        click.echo(safe_text(f"  line: {f['line']}"))
        for what in ("kernel", "op"):
            if f.get(what):
                click.echo(safe_text(f"  {what}: {f[what]}"))
        if f["frames"]:
            click.echo(safe_text(f"  frames: {' < '.join(f['frames'])}"))
        if f.get("missing_ranks"):
            click.echo(f"  missing ranks: {', '.join(map(str, f['missing_ranks']))}")
        for i in data["investigations"]:
            click.echo(safe_text(f"  investigation {i['id']} ({i['status']}): {i['title']}"))
        for p in data["seen"]:
            where = f" in {p['investigation']}" + (f" #{p['attempt']}" if p["attempt"] else "") \
                if p["investigation"] else ""
            click.echo(safe_text(f"  {(p['seen'] or '')[:19]:<19} {p['source']:<6} {p['ref']}{where}"
                                 + (f" ({p['outcome']})" if p.get("outcome") else "")))

    emit(as_json, data, human)
