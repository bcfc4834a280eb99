"""``dbglog report``: one investigation as data (``--json``) and as one self-contained HTML page
(``--html FILE``): its attempts with outcomes, the key-differences table, each bisection as inline
SVG charts (``bisect/chart.py``: verdicts per commit or toggle set, the posterior over candidates
for a probabilistic one), and its runs with their signatures and durations.

Self-contained means the page loads nothing: no script, no stylesheet, font or image from anywhere
(the charts are inline ``<svg>``), so it opens from a mail attachment or an air-gapped cluster.

Layer 3 (a service beside ``ops``): reads through ``Records`` and ``SessionDB``; writes only the
file it is asked for, atomically.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from dbglog import ops
from dbglog.bisect import chart
from dbglog.bisect.session import SessionDB
from dbglog.util.errors import DbglogError
from dbglog.util.fsutil import atomic_write

OUTCOME_COLOURS = {"worked": "#1a9641", "failed": "#b2182b", "partial": "#e08214", "inconclusive": "#999999",
                   "untested": "#cccccc"}


def _runs_of(recs, inv: dict, sessions: list[dict], steps: dict[str, list]) -> list[dict]:
    """The investigation's runs: linked to it or to one of its attempts, or behind a step of one of
    its bisections; newest first, each once."""
    wanted = {r for a in inv["attempts"] for r in a.get("runs") or []}
    for s in sessions:
        wanted |= {r for st in steps[s["id"]] for r in st.runs}
    rows = recs.store.q("SELECT id FROM runs WHERE investigation_id = ?", inv["id"]).fetchall()
    wanted |= {r["id"] for r in rows}
    out = []
    for rid in wanted:
        try:
            r = recs.store.get_run(rid)
        except DbglogError:  # a run pruned since: the attempt still names it, the report skips it
            continue
        out.append({k: r.get(k) for k in ("id", "started", "outcome", "signature", "exit_code", "duration_s",
                                         "attempt")} | {"cmd": " ".join(r.get("cmd") or [])})
    return sorted(out, key=lambda r: (r["started"] or "", r["id"]), reverse=True)


def gather(recs, ref: str | None) -> dict:
    """The report's data: what ``--json`` prints and the page shows (charts as SVG markup)."""
    inv = ops.investigation(recs, ref).to_dict()
    db = SessionDB(recs.store)
    ids = [r["id"] for r in recs.store.q("SELECT id FROM bisect_sessions WHERE investigation_id = ? "
                                         "ORDER BY created, id", inv["id"]).fetchall()]
    sessions = [db.get(i) for i in ids]
    steps = {s["id"]: db.trials(s["id"]) for s in sessions}
    bisections = []
    for s in sessions:
        res = s.get("result") or {}
        svg = chart.charts(s, steps[s["id"]])
        bisections.append({"session": s["id"], "kind": s["kind"], "status": s["status"],
                           "message": res.get("message", ""), "steps": [st.to_dict() for st in steps[s["id"]]],
                           "posterior": res.get("posterior"), "chart": svg["verdicts"],
                           "posterior_chart": svg["posterior"]})
    return {"investigation": {k: inv[k] for k in ("id", "title", "status", "symptom", "root_cause", "tags",
                                                  "created", "updated", "labels")},
            "attempts": inv["attempts"], "differences": inv["differences"], "next_steps": inv["next_steps"],
            "bisections": bisections, "runs": _runs_of(recs, inv, sessions, steps),
            "path": recs.path_for(inv["id"])}


# --- the page -------------------------------------------------------------------------------------

_CSS = """
body{font-family:DejaVu Sans,Arial,Helvetica,sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;width:100%;font-size:.9em}th,td{border:1px solid #ddd;padding:.3em .5em;
text-align:left;vertical-align:top}th{background:#f4f4f4}.outcome{font-weight:bold;padding:0 .4em;border-radius:3px;
color:#fff}.meta{color:#666}pre{white-space:pre-wrap;margin:0}.chart{overflow-x:auto;margin:.5em 0}
"""


def _e(x) -> str:
    return escape(str(x if x is not None else ""))


def _table(head: list[str], rows: list[list[str]], cls: str) -> str:
    if not rows:
        return '<p class="meta">none</p>'
    return (f'<table class="{cls}"><thead><tr>' + "".join(f"<th>{h}</th>" for h in head) + "</tr></thead><tbody>"
            + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows) + "</tbody></table>")


def _outcome(o: str) -> str:
    return f'<span class="outcome" style="background:{OUTCOME_COLOURS.get(o, "#999999")}">{_e(o)}</span>'


def _attempts(data: dict) -> str:
    rows = [[_e(a["number"]), _e(a["title"]), _outcome(a["outcome"]), f"<pre>{_e(a['hypothesis'])}</pre>",
             f"<pre>{_e(a['did'])}</pre>", f"<pre>{_e(a['result'])}</pre>", f"<pre>{_e(a['conclusion'])}</pre>"]
            for a in data["attempts"]]
    return _table(["#", "attempt", "outcome", "hypothesis", "did", "result", "conclusion"], rows, "attempts")


def _differences(data: dict) -> str:
    labels = data["investigation"].get("labels") or {}
    rows = [[_e(d["factor"]), _e(d["working"]), _e(d["broken"]), _e(d["status"]), _e(d.get("apply", ""))]
            for d in data["differences"]]
    return _table(["factor", _e(labels.get("working") or "working"), _e(labels.get("broken") or "broken"),
                   "status", "apply"], rows, "differences")


def _bisections(data: dict) -> str:
    if not data["bisections"]:
        return '<p class="meta">none</p>'
    out = []
    for b in data["bisections"]:
        out.append(f'<section class="bisection" id="{_e(b["session"])}"><h3>{_e(b["kind"])} bisection '
                   f'<code>{_e(b["session"])}</code> ({_e(b["status"])})</h3><p>{_e(b["message"])}</p>'
                   f'<div class="chart">{b["chart"]}</div>')
        if b["posterior_chart"]:
            out.append(f'<div class="chart posterior">{b["posterior_chart"]}</div>')
        out.append("</section>")
    return "".join(out)


def _runs(data: dict) -> str:
    rows = [[f"<code>{_e(r['id'])}</code>", _e(r["started"]), _e(r["outcome"]), _e(r["signature"] or ""),
             _e(r["exit_code"]), f"{r['duration_s'] or 0:.2f} s", _e(r["attempt"] or ""), f"<code>{_e(r['cmd'])}</code>"]
            for r in data["runs"]]
    return _table(["run", "started", "outcome", "signature", "exit", "duration", "attempt", "command"], rows, "runs")


def render_html(data: dict) -> str:
    inv = data["investigation"]
    meta = f"{_e(inv['id'])} · {_e(inv['status'])} · created {_e(inv['created'])} · updated {_e(inv['updated'])}"
    if inv.get("tags"):
        meta += " · tags: " + ", ".join(_e(t) for t in inv["tags"])
    parts = [f"<h1>{_e(inv['title'])}</h1>", f'<p class="meta">{meta}</p>']
    if inv.get("symptom"):
        parts.append(f"<p><b>Symptom:</b> {_e(inv['symptom'])}</p>")
    if inv.get("root_cause"):
        parts.append(f"<p><b>Root cause:</b> {_e(inv['root_cause'])}</p>")
    parts += ["<h2>Attempts</h2>", _attempts(data), "<h2>Key differences</h2>", _differences(data),
              "<h2>Bisections</h2>", _bisections(data), "<h2>Runs</h2>", _runs(data),
              f'<p class="meta">Written by dbglog report from {_e(data["path"])}.</p>']
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{_e(inv['title'])} — dbglog report</title><style>{_CSS}</style></head>\n<body>\n"
            + "\n".join(parts) + "\n</body></html>\n")


def write_html(data: dict, path: Path) -> Path:
    atomic_write(path, render_html(data).encode("utf-8"))
    return path
