"""Self-contained SVG charts of a bisection: no script, no external font or stylesheet, so the same
markup works inline in an HTML report and as a file beside the markdown mirror (a code host renders
an ``![..](x.svg)`` link to it).

Two charts, both plain rows so a long label never overlaps the next one:

* :func:`verdict_chart` -- one row per commit or toggle set: its label, a box coloured by verdict,
  and a detail (runs failed/passed, outcome, duration).
* :func:`posterior_chart` -- one row per candidate: a bar of its probability of being the culprit.

Pure: strings in, a string out (layer 1; imports nothing of dbglog's).
"""

from __future__ import annotations

from dataclasses import dataclass
from xml.sax.saxutils import escape

#: verdict -> fill colour (colour-blind safe pairs: blue/orange rather than green/red)
COLOURS = {"good": "#2b83ba", "bad": "#d7191c", "flaky": "#fdae61", "skip": "#bababa", "untested": "#ffffff"}
WIDTH = 760
ROW = 22
LABEL_W = 300
_FONT = "font-family:DejaVu Sans,Arial,Helvetica,sans-serif;font-size:12px"


@dataclass(frozen=True)
class Row:
    label: str  # a commit ("21d5087114 commit 8") or a toggle set ("{FUSED_ATTN, NCCL_ALGO}")
    verdict: str  # good | bad | flaky | skip | untested
    detail: str = ""  # "failed 3 of 3 · fail [gpu.illegal_address] · 0.03 s"
    mark: str = ""  # "first bad", "good end", "culprit"...


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _svg(height: int, title: str, body: list[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
            f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{escape(title, {chr(34): "&quot;"})}">\n'
            f"<title>{escape(title)}</title>\n"
            f'<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="#ffffff"/>\n'
            f'<text x="8" y="18" style="{_FONT};font-weight:bold">{escape(_clip(title, 110))}</text>\n'
            + "\n".join(body) + "\n</svg>\n")


def verdict_chart(title: str, rows: list[Row]) -> str:
    """One row per key in the order given (history order for commits, trial order for sets)."""
    top = 30
    body = []
    for i, r in enumerate(rows):
        y = top + i * ROW
        fill = COLOURS.get(r.verdict, COLOURS["untested"])
        label = r.label if not r.mark else f"{r.label} ({r.mark})"
        weight = ";font-weight:bold" if r.mark else ""
        body.append(f'<g class="row" data-verdict="{escape(r.verdict)}">'
                    f'<text x="8" y="{y + 15}" style="{_FONT}{weight}">{escape(_clip(label, 44))}</text>'
                    f'<rect x="{LABEL_W}" y="{y + 3}" width="70" height="{ROW - 6}" rx="3" fill="{fill}" '
                    f'stroke="#555555" stroke-width="0.5"/>'
                    f'<text x="{LABEL_W + 35}" y="{y + 15}" text-anchor="middle" style="{_FONT}">'
                    f"{escape(r.verdict)}</text>"
                    f'<text x="{LABEL_W + 80}" y="{y + 15}" style="{_FONT};fill:#333333">'
                    f"{escape(_clip(r.detail, 62))}</text></g>")
    legend_y = top + len(rows) * ROW + 14
    x = 8
    for name in ("good", "bad", "flaky", "skip", "untested"):
        body.append(f'<rect x="{x}" y="{legend_y - 10}" width="12" height="12" fill="{COLOURS[name]}" '
                    f'stroke="#555555" stroke-width="0.5"/><text x="{x + 16}" y="{legend_y}" style="{_FONT}">'
                    f"{name}</text>")
        x += 90
    return _svg(legend_y + 10, title, body)


def posterior_chart(title: str, bars: list[tuple[str, float]]) -> str:
    """One bar per candidate: its probability of being the culprit (0..1), largest first as given."""
    top = 30
    span = WIDTH - LABEL_W - 70
    body = []
    for i, (label, p) in enumerate(bars):
        y = top + i * ROW
        w = max(1.0, min(1.0, max(0.0, p)) * span)
        body.append(f'<g class="bar" data-probability="{p:.6f}">'
                    f'<text x="8" y="{y + 15}" style="{_FONT}">{escape(_clip(label, 44))}</text>'
                    f'<rect x="{LABEL_W}" y="{y + 3}" width="{w:.1f}" height="{ROW - 6}" fill="#d7191c"/>'
                    f'<text x="{LABEL_W + w + 6:.1f}" y="{y + 15}" style="{_FONT}">{p:.3f}</text></g>')
    return _svg(top + len(bars) * ROW + 8, title, body)
