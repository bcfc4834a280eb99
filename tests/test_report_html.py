"""`dbglog report --html`: one self-contained page per investigation (attempts with outcomes, the
key-differences table, bisections as inline SVG charts, runs), the same chart written beside the
markdown mirror and linked from it, and `--json`. Read back with the stdlib's HTML and XML parsers."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

from conftest import run_cli_at, run_cli_inproc

from dbglog.bisect import chart
from dbglog.bisect.session import Step, Verdict

SVG = "{http://www.w3.org/2000/svg}"


class Page(HTMLParser):
    """Tags, the external references a browser would load, the tables' cells and the inline <svg>s."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.external, self.tables, self.svg_starts, self.scripts = [], {}, 0, 0
        self._table, self._cell = None, None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("src", "href"):
            if a.get(key) and not a[key].startswith("#"):
                self.external.append(a[key])
        if tag == "link" or (tag == "script"):
            self.scripts += 1
        if tag == "svg":
            self.svg_starts += 1
        if tag == "table":
            self._table = self.tables.setdefault(a.get("class", ""), [])
        elif tag == "tr" and self._table is not None:
            self._table.append([])
        elif tag == "td" and self._table is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            self._table[-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _svgs(html: str) -> list[ET.Element]:
    out, rest = [], html
    while "<svg " in rest:
        start = rest.index("<svg ")
        end = rest.index("</svg>", start) + len("</svg>")
        out.append(ET.fromstring(rest[start:end]))  # well-formed XML, or this raises
        rest = rest[end:]
    return out


def _workspace_with_toggle_bisection(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    run_cli_inproc(ws, "init", check=0)
    run_cli_inproc(ws, "new", "Decode crashes <fused> & graphs", "--symptom", "step 2", "--no-env", check=0)
    run_cli_inproc(ws, "attempt", "add", "Disable CUDA graphs", "--did", "--enforce-eager",
                   "--result", "No crash in 200 steps", "-o", "worked", check=0)
    run_cli_inproc(ws, "attempt", "add", "Raise the timeout", "--did", "NCCL_TIMEOUT=3600",
                   "--result", "Still crashes", "-o", "failed", check=0)
    run_cli_inproc(ws, "diff", "add", "CUDA graphs", "off", "on", check=0)
    # the failure needs FUSED on; OTHER is innocent
    run_cli_at(ws, "bisect", "toggles", "--env", "FUSED=1", "--env", "OTHER=1", "--",
               "sh", "-c", 'test "$FUSED" != 1 || { echo "CUDA error: an illegal memory access was encountered"; exit 1; }',
               check=0)
    return ws


def test_the_html_report_is_one_page_with_attempts_differences_charts_and_runs(tmp_path):
    ws = _workspace_with_toggle_bisection(tmp_path)
    out = tmp_path / "report.html"
    p = run_cli_inproc(ws, "report", "--html", str(out), "--json", check=0)
    data = json.loads(p.stdout)
    html = out.read_text(encoding="utf-8")
    page = Page(html)
    assert page.external == [] and page.scripts == 0  # nothing is loaded from anywhere
    assert "Decode crashes &lt;fused&gt; &amp; graphs" in html  # text is escaped, not markup
    attempts = [r for r in page.tables["attempts"] if r]
    assert [(r[1], r[2]) for r in attempts[:2]] == [("Disable CUDA graphs", "worked"), ("Raise the timeout", "failed")]
    assert [r[:3] for r in page.tables["differences"] if r] == [["CUDA graphs", "off", "on"]]
    runs = [r for r in page.tables["runs"] if r]
    assert len(runs) == len(data["runs"]) >= 5
    assert {r[2] for r in runs} == {"pass", "fail"} and "gpu.illegal_address" in {r[3] for r in runs}
    assert all(r[5].endswith(" s") for r in runs)  # durations
    (b,) = data["bisections"]
    charts = _svgs(html)
    assert page.svg_starts == len(charts) == 1  # a deterministic bisection has no posterior chart
    rows = charts[0].findall(f".//{SVG}g[@class='row']")
    assert [r.get("data-verdict") for r in rows] == [s["verdict"] for s in b["steps"]]
    labels = [" ".join(t.text or "" for t in r.iter(f"{SVG}text")) for r in rows]
    assert any(lbl.startswith("{FUSED} (culprit)") for lbl in labels), labels


def test_the_bisection_chart_is_written_beside_the_mirror_and_linked_from_it(tmp_path):
    ws = _workspace_with_toggle_bisection(tmp_path)
    (md,) = (ws / "logs").glob("*.md")
    (svg,) = (ws / "logs").glob("*.svg")
    assert svg.name.startswith(md.stem + ".") and "-toggles-" in svg.name
    assert f"![Bisection chart]({svg.name})" in md.read_text(encoding="utf-8")
    root = ET.parse(svg).getroot()
    assert root.tag == f"{SVG}svg"
    assert {g.get("data-verdict") for g in root.iter(f"{SVG}g") if g.get("class") == "row"} == {"good", "bad"}
    # the link is part of the section's text: the mirror round-trips and the next sync changes nothing
    assert json.loads(run_cli_inproc(ws, "sync", "--json", check=0).stdout)["imported"] == []


def test_a_flaky_bisection_draws_its_posterior_over_commits():
    session = {"id": "s1", "kind": "git", "spec": {"goods": ["a" * 40], "bad": "c" * 40},
               "result": {"posterior": [{"commit": "b" * 40, "short": "bbbbbbbbbb", "subject": "fuse kernels",
                                         "probability": 0.91},
                                        {"commit": "c" * 40, "short": "cccccccccc", "subject": "tidy",
                                         "probability": 0.09}],
                          "first_bad": {"commit": "b" * 40}}}
    steps = [Step("c" * 40, Verdict.BAD, counts=[3, 0, 0]), Step("a" * 40, Verdict.GOOD, counts=[0, 5, 0]),
             Step("b" * 40, Verdict.FLAKY, counts=[4, 5, 0])]
    out = chart.charts(session, steps)
    verdicts, posterior = ET.fromstring(out["verdicts"]), ET.fromstring(out["posterior"])
    rows = [g for g in verdicts.iter(f"{SVG}g") if g.get("class") == "row"]
    assert [g.get("data-verdict") for g in rows] == ["bad", "good", "flaky"]  # no repository: trial order
    texts = [" ".join(t.text or "" for t in g.iter(f"{SVG}text")) for g in rows]
    assert "failed 4 of 9" in texts[2] and "(first bad)" in texts[2] and "(good end)" in texts[1]
    bars = [g for g in posterior.iter(f"{SVG}g") if g.get("class") == "bar"]
    assert [float(g.get("data-probability")) for g in bars] == [0.91, 0.09]
    widths = [float(g.find(f"{SVG}rect").get("width")) for g in bars]
    assert widths[0] > 9 * widths[1]


def test_report_refuses_a_missing_folder_and_writes_nothing(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    run_cli_inproc(ws, "init", check=0)
    run_cli_inproc(ws, "new", "x", "--no-env", check=0)
    p = run_cli_inproc(ws, "report", "--html", str(tmp_path / "nope" / "r.html"))
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "does not exist" in p.stderr
    assert not (tmp_path / "nope").exists()


def test_a_history_bisection_chart_has_every_commit_in_history_order(tmp_path):
    import subprocess

    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.email=t@e", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    for i in range(1, 9):
        (repo / "v.txt").write_text(f"{i}\n")
        subprocess.run([*git, "add", "v.txt"], check=True)
        subprocess.run([*git, "commit", "-qm", f"change {i}"], check=True)
    repro = tmp_path / "repro.sh"  # outside the repository: each step runs in a worktree
    repro.write_text('#!/bin/sh\n[ "$(cat v.txt)" -lt 6 ] || { echo "CUDA error: an illegal memory access '
                     'was encountered"; exit 1; }\n')
    repro.chmod(0o755)
    run_cli_inproc(repo, "init", check=0)
    run_cli_inproc(repo, "new", "regression", "--no-env", check=0)
    run_cli_at(repo, "bisect", "git", "--good", "HEAD~7", "--bad", "HEAD", "--", str(repro), check=0)
    (svg,) = (repo / "logs").glob("*.svg")
    rows = [g for g in ET.parse(svg).getroot().iter(f"{SVG}g") if g.get("class") == "row"]
    labels = [g.find(f"{SVG}text").text for g in rows]  # "<sha10> <subject>[ (mark)]"
    assert [lbl[11:].split(" (")[0] for lbl in labels] == [f"change {i}" for i in range(1, 9)]
    verdicts = [g.get("data-verdict") for g in rows]
    assert verdicts[0] == "good" and verdicts[-1] == "bad" and "untested" in verdicts
    assert all(v in ("good", "untested") for v in verdicts[:5]) and all(v in ("bad", "untested") for v in verdicts[5:])
    assert "(first bad)" in labels[5] and "(good end)" in labels[0] and "(bad end)" in labels[7]


def test_report_never_replaces_a_device_a_pipe_or_what_dbglog_keeps(tmp_path):
    """An adversarial probe: the page replaced its path by rename whatever it was, so `--html` turned a device
    node or a FIFO into a regular file (as root, /dev/null itself), and over .dbglog/dbglog.db or a file of logs/
    it destroyed the run records or made every later command fail. Each is refused in one line; nothing moves."""
    import os
    import sqlite3

    ws = tmp_path / "w"
    ws.mkdir()
    assert run_cli_inproc(ws, "new", "crash", "--no-env").returncode == 0
    os.mkfifo(ws / "fifo")
    log = next((ws / "logs").glob("*.md"))
    before = {p: p.read_bytes() for p in (log, ws / ".dbglog" / "config.toml") if p.exists()}
    with sqlite3.connect(ws / ".dbglog" / "dbglog.db") as db:
        rows = db.execute("SELECT count(*) FROM investigations").fetchone()
    for target, says in (("fifo", "not a regular file"), (".dbglog/dbglog.db", "inside .dbglog/"),
                         (str(log.relative_to(ws)), "inside logs/"), ("logs/page.html", "inside logs/")):
        r = run_cli_inproc(ws, "report", "--html", target)
        assert r.returncode == 2 and says in r.stderr and r.stderr.count("\n") == 1, (target, r.stderr)
    assert (ws / "fifo").is_fifo() and not (ws / "logs" / "page.html").exists()
    assert {p: p.read_bytes() for p in before} == before
    with sqlite3.connect(ws / ".dbglog" / "dbglog.db") as db:
        assert db.execute("SELECT count(*) FROM investigations").fetchone() == rows
    r = run_cli_inproc(ws, "report", "--html", "page.html")
    assert r.returncode == 0 and (ws / "page.html").read_text().startswith("<!DOCTYPE html>")
