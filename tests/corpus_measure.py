"""Measure the importer on tests/corpus/docs: attempts found, outcomes right, next steps found,
content lines lost, and re-import idempotence. Used by tests/test_corpus_import.py and runnable by
hand (``python tests/corpus_measure.py [-v] [DOC...]``) to see per-doc figures.

Matching follows the corpus README (tests/corpus/docs/INDEX.md): an expected attempt is found
when its ``match`` phrase occurs (case-insensitively, markdown decoration aside) in one imported
attempt's title, or failing that in its other fields; each imported attempt answers for at most
one expected attempt; the title is read as the mirror shows it ("Attempt 3: <title>"). A next step is found when its phrase occurs in one step's text or detail.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).parent
DOCS = ROOT / "corpus" / "docs"
sys.path.insert(0, str(ROOT.parent))

from dbglog import docreader  # noqa: E402
from dbglog.kb import mirror  # noqa: E402
from dbglog.kb.importer import decode, parse_document  # noqa: E402


def _n(s: str) -> str:
    s = re.sub(r"[*`_~]", "", s or "").lower()
    s = re.sub(r"\s*(?:[:—–]|\s-\s)\s*", " ", s)  # "Attempt 1 — x" and "Attempt 1: x" are one heading
    s = re.sub(r"\b(attempt|try|fix) #(\d)", r"\1 \2", s)  # "Attempt #1" is "Attempt 1"
    return " ".join(s.replace("’", "'").split())


def measure(doc: Path, model=True) -> dict:
    text = decode(doc.read_bytes(), doc.name)
    parsed, _skipped = parse_document(text, doc.name, model=model)
    exp = yaml.safe_load(doc.with_suffix("").with_suffix(".expected.yaml").read_text()) \
        if doc.with_suffix(".expected.yaml").exists() else \
        yaml.safe_load((doc.parent / (doc.stem + ".expected.yaml")).read_text())
    invs = [p.inv for p in parsed]
    lines = text.split("\n")
    attempts = [a for inv in invs for a in inv.attempts]
    steps = [s for inv in invs for s in inv.next_steps]
    r = {"doc": doc.name, "investigations": len(invs), "expected_investigations": len(exp["investigations"]),
         "attempts_expected": 0, "attempts_found": 0, "outcomes_right": 0, "steps_expected": 0,
         "steps_found": 0, "missed": [], "wrong": [], "missed_steps": []}
    used: set[int] = set()
    for e in exp["investigations"]:
        for ea in e.get("attempts") or []:
            r["attempts_expected"] += 1
            phrase = _n(ea["match"])
            hit = None
            for pass_ in ("title", "all", "source"):
                for k, a in enumerate(attempts):
                    if k in used:
                        continue
                    # The title as the mirror shows it: "### Attempt 3: <title>"; then its fields; then the source
                    # lines the attempt cites (the passage the phrase was taken from).
                    if pass_ == "title":
                        hay = _n(f"attempt {a.number}: {a.title}")
                    elif pass_ == "all":
                        hay = _n(" ".join([a.title, a.hypothesis, a.did, a.result, a.conclusion]))
                    else:
                        lo, hi = (a.source_lines or [0, -1])[:2]
                        hay = _n(" ".join(lines[lo - 1:hi]))
                    if phrase in hay:
                        hit = k
                        break
                if hit is not None:
                    break
            if hit is None:
                r["missed"].append(ea["match"])
                continue
            used.add(hit)
            r["attempts_found"] += 1
            if attempts[hit].outcome == ea["outcome"]:
                r["outcomes_right"] += 1
            else:
                r["wrong"].append((ea["match"], ea["outcome"], attempts[hit].outcome))
        for es in e.get("next_steps") or []:
            r["steps_expected"] += 1
            phrase = _n(es)
            if any(phrase in _n(f"{s.text} {s.detail}") for s in steps):
                r["steps_found"] += 1
            else:
                r["missed_steps"].append(es)
    # Lossless: every content line of the source is in the rendered mirror.
    out = ""
    for p in parsed:
        inv = docreader._probe(p.inv)
        out += mirror.render(inv) + "\n"
    kept = docreader.kept_text(out)
    lines = text.split("\n")
    r["lines"] = sum(1 for ln in lines if docreader.counts(ln))
    r["lost"] = [ln for ln in lines if docreader.counts(ln) and docreader.norm(ln) not in kept]
    r["extra_attempts"] = len(attempts) - len(used)
    r["extra"] = [a.title for k, a in enumerate(attempts) if k not in used]
    return r


def corpus() -> list[Path]:
    return sorted(p for p in DOCS.glob("*.md") if p.name != "INDEX.md")


def totals(results: list[dict]) -> dict:
    t = {k: sum(r[k] for r in results) for k in ("attempts_expected", "attempts_found", "outcomes_right",
                                                  "steps_expected", "steps_found", "lines")}
    t["lost"] = sum(len(r["lost"]) for r in results)
    t["extra"] = sum(r["extra_attempts"] for r in results)
    t["docs"] = len(results)
    t["investigations_right"] = sum(r["investigations"] == r["expected_investigations"] for r in results)
    return t


def report(results: list[dict], verbose: bool = False) -> str:
    out = []
    for r in results:
        out.append(f"{r['doc'][:48]:48} inv {r['investigations']}/{r['expected_investigations']}  "
                   f"attempts {r['attempts_found']}/{r['attempts_expected']} (+{r['extra_attempts']} extra)  "
                   f"outcomes {r['outcomes_right']}/{r['attempts_found']}  "
                   f"steps {r['steps_found']}/{r['steps_expected']}  lost {len(r['lost'])}/{r['lines']}")
        if verbose:
            for m in r["missed"]:
                out.append(f"    missed attempt: {m}")
            for m, e, g in r["wrong"]:
                out.append(f"    outcome {m!r}: expected {e}, got {g}")
            for m in r["missed_steps"]:
                out.append(f"    missed step: {m}")
            for m in r.get("extra", []):
                out.append(f"    junk attempt: {m[:100]}")
            for ln in r["lost"][:6]:
                out.append(f"    lost: {ln[:120]}")
    t = totals(results)
    pct = lambda a, b: 100.0 * a / b if b else 100.0  # noqa: E731
    out.append(f"TOTAL {t['docs']} docs: investigations right {t['investigations_right']}/{t['docs']}; "
               f"attempts {t['attempts_found']}/{t['attempts_expected']} ({pct(t['attempts_found'], t['attempts_expected']):.1f} %); "
               f"extra {t['extra']} (precision {pct(t['attempts_found'], t['attempts_found'] + t['extra']):.1f} %); "
               f"outcomes {t['outcomes_right']}/{t['attempts_found']} ({pct(t['outcomes_right'], t['attempts_found']):.1f} %); "
               f"next steps {t['steps_found']}/{t['steps_expected']} ({pct(t['steps_found'], t['steps_expected']):.1f} %); "
               f"lines lost {t['lost']}/{t['lines']}")
    return "\n".join(out)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "-v"]
    docs = [Path(a) for a in args] or corpus()
    print(report([measure(d) for d in docs], verbose="-v" in sys.argv))
