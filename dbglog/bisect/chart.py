"""A bisection session as SVG charts: the verdict per commit or toggle set, and, for a probabilistic
bisection, the posterior over the candidates. One engine for both places a chart appears: the HTML
report (``dbglog report --html``) and the file written beside the markdown mirror when a bisection
is recorded (``logs/<investigation>.<session>.svg``, linked from its ``## Bisection`` section).

Reads the session row and its trials (``SessionDB``); commits are put in history order with one
``git log`` over the range (the trial order when the repository is gone).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from dbglog.util import svgchart
from dbglog.util.fsutil import atomic_write

MAX_ROWS = 80  # a chart taller than this helps nobody; the rest is said in a last row


def _git_order(spec: dict) -> dict[str, tuple[int, str]]:
    """sha -> (position in history, subject) over good..bad; {} when git cannot say."""
    repo, bad, goods = spec.get("repo"), spec.get("bad"), spec.get("goods") or []
    if not repo or not bad:
        return {}
    argv = ["git", "-C", str(repo), "log", "--reverse", "--topo-order", "--format=%H%x1f%s"]
    argv += ["--first-parent"] if spec.get("first_parent") else []
    try:
        out = subprocess.run([*argv, bad, *[f"^{g}" for g in goods], "--"], capture_output=True, text=True,
                             timeout=20, check=True, errors="replace").stdout
        heads = subprocess.run(["git", "-C", str(repo), "log", "--no-walk", "--format=%H%x1f%s", *goods, "--"],
                               capture_output=True, text=True, timeout=20, check=True, errors="replace").stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    order = {}
    for n, line in enumerate(heads.splitlines() + out.splitlines()):
        sha, _, subject = line.partition("\x1f")
        order.setdefault(sha, (n, subject))
    return order


def _detail(step) -> str:
    parts = []
    if step.counts:
        bad, good, skip = (list(step.counts) + [0, 0, 0])[:3]
        n = bad + good + skip
        if n > 1:
            parts.append(f"failed {bad} of {n}" if bad else f"passed {good} of {n}")
        else:
            parts.append("failed" if bad else "passed" if good else "skipped")
    what = "" if step.outcome == "pass" else step.outcome or ""
    if step.signature and step.outcome != "pass":
        what += f" [{step.signature}]"
    if what:
        parts.append(what)
    parts.append(f"{step.duration_s:.2f} s")
    if step.source != "run":
        parts.append(f"from {step.source}")
    return " · ".join(parts)


def _set_label(key: str, names: list[str]) -> str:
    try:
        k = json.loads(key)
    except ValueError:
        return key
    if isinstance(k, dict):
        return f"first {k.get('limit')} call(s)"
    if not k:
        return "all off"
    if names and set(k) >= set(names):
        return "all on"
    return "{" + ", ".join(k) + "}"


def history_rows(session: dict, steps: list) -> list[svgchart.Row]:
    """A row per commit in history order: every commit of the range when it fits in the chart (the
    untested ones blank), else the tested ones; the trial order when git cannot say."""
    spec, res = session["spec"], session.get("result") or {}
    order = _git_order(spec)
    first_bad = ((res.get("first_bad") or {}).get("commit")) or ""
    goods, bad = set(spec.get("goods") or []), spec.get("bad")
    tested = {st.key: st for st in steps}
    keys = sorted(order, key=lambda k: order[k][0]) if order and len(order) <= MAX_ROWS else \
        sorted(tested, key=lambda k: order.get(k, (len(order) + list(tested).index(k), ""))[0])
    rows = []
    for key in keys:
        st = tested.get(key)
        mark = ("first bad" if key == first_bad else "good end" if key in goods else "bad end" if key == bad else "")
        label = f"{key[:10]} {order.get(key, (0, ''))[1]}".strip()
        rows.append(svgchart.Row(label, st.verdict.value, _detail(st), mark) if st else
                    svgchart.Row(label, "untested", "not run", mark))
    return rows


def toggle_rows(session: dict, steps: list) -> list[svgchart.Row]:
    names = [t.get("name", "") for t in session["spec"].get("toggles") or []]
    found = {json.dumps(sorted(s)) for s in (session.get("result") or {}).get("sets") or []}
    rows = []
    for st in steps:
        try:
            culprit = json.dumps(sorted(json.loads(st.key))) in found
        except (ValueError, TypeError):
            culprit = False
        rows.append(svgchart.Row(_set_label(st.key, names), st.verdict.value, _detail(st),
                                 "culprit" if culprit else ""))
    return rows


def posterior_bars(session: dict, steps: list) -> list[tuple[str, float]]:
    """The posterior over candidates: the finished result's, else the latest step's snapshot."""
    post = (session.get("result") or {}).get("posterior")
    if post:
        return [(f"{p['short']} {p.get('subject', '')}".strip() if "short" in p
                 else "{" + ", ".join(p.get("set") or []) + "}", float(p["probability"])) for p in post[:20]]
    snap = next((s.posterior for s in reversed(steps) if s.posterior), None) or []
    names = [t.get("name", "") for t in session["spec"].get("toggles") or []]
    return [(k[:10] if session["kind"] == "git" else _set_label(json.dumps(k) if isinstance(k, list) else k, names),
             float(p)) for k, p in snap[:20]]


def charts(session: dict, steps: list) -> dict:
    """{"verdicts": svg, "posterior": svg or None} for a session dict (``SessionDB.get``) and its trials."""
    rows = (history_rows if session["kind"] == "git" else toggle_rows)(session, steps)
    if len(rows) > MAX_ROWS:
        rows = rows[:MAX_ROWS] + [svgchart.Row(f"... {len(rows) - MAX_ROWS} more", "untested")]
    what = "commit" if session["kind"] == "git" else "toggle set"
    title = f"Bisection {session['id']}: verdict per {what}"
    bars = posterior_bars(session, steps)
    ptitle = f"Bisection {session['id']}: probability of being the culprit (top candidates)"
    return {"verdicts": svgchart.verdict_chart(title, rows),
            "posterior": svgchart.posterior_chart(ptitle, bars) if bars else None}


def chart_name(inv_id: str, sid: str) -> str:
    return f"{inv_id}.{sid}.svg"


def write_beside_mirror(recs, inv_id: str, sid: str, result: dict) -> str:
    """Write the session's chart next to ``logs/<inv>.md`` and return the markdown that links it
    (appended to the bisection's section, so a code host shows the picture with the text)."""
    from dbglog.bisect.session import SessionDB

    db = SessionDB(recs.store)
    session = db.get(sid) | {"result": result}
    svg = charts(session, db.trials(sid))
    mirror = recs.ws.root / recs.path_for(inv_id)
    parts = [svg["verdicts"]] + ([svg["posterior"]] if svg["posterior"] else [])
    try:  # one file: the posterior drawn below the verdicts, so the section carries one link
        atomic_write(Path(mirror).parent / chart_name(inv_id, sid), _stack(parts).encode("utf-8"))
    except OSError:  # the picture is a convenience: the section's text is the record
        return ""
    return f"\n\n![Bisection chart]({chart_name(inv_id, sid)})"


def _stack(svgs: list[str]) -> str:
    """Several charts one above the other as one SVG document (nested <svg> elements)."""
    if len(svgs) == 1:
        return svgs[0]
    heights = [int(s.split('height="', 1)[1].split('"', 1)[0]) for s in svgs]
    inner, y = [], 0
    for s, h in zip(svgs, heights):
        inner.append(s.replace("<svg ", f'<svg y="{y}" ', 1))
        y += h
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{svgchart.WIDTH}" height="{y}" '
            f'viewBox="0 0 {svgchart.WIDTH} {y}">\n' + "".join(inner) + "</svg>\n")
