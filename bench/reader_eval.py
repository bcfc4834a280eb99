#!/usr/bin/env python3
"""How well `dbglog import` reads real write-ups: attempts found, junk, outcomes, next steps, per style.

    python bench/reader_eval.py [--set study|heldout|all] [--pool DIR ...] [--styles] [--learn] [--json]

Data: the shared pool of real docs labelled by hand with line ranges (../shared/realdocs-pool/, read
from there and never copied), split by source group in bench/data/realdocs_split.toml before the reader
was changed; `--styles` adds our own-words labelled docs (tests/corpus/styles/). An extracted attempt
counts as found when its source lines overlap a labelled attempt's lines (one to one, largest overlap
first); one left unmatched is junk: *stray* when it overlaps no labelled passage at all, else a second row
within a passage another row already matched (a try told as several rows, or two labelled ranges that
overlap). An outcome is right when it equals the label (`unknown` matches
`inconclusive` or `untested`; `implied` outcomes are not penalised).

A fresh held-out set labelled the same way lives outside the repository (its labels and sources in
bench/data/fresh_pool/): `--pool DIR --set all` measures it; print only the totals (no -v) so that it stays
unseen. Every run also counts the source lines no stored investigation keeps (`lines lost`).

Grouped cross-validation: the reader's weights are set by hand (docreader/cues/weights.toml), so each
doc's figure is already out of sample for every doc the weights were not tuned on (the held-out set).
`--learn` fits the weights instead (a multinomial logistic regression over the same cues, numpy) with
one source group left out at a time, and prints both, so the README can say which generalises.
`--recall-cv` cross-validates the reader's learned passes (docreader/learned.py) by source group against the
rules alone, and `--train OUT` refits them on the given docs (both need scikit-learn: the `learn` extra).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
SPLIT = ROOT / "bench" / "data" / "realdocs_split.toml"
STYLES_DIR = ROOT / "tests" / "corpus" / "styles"


def load_split() -> dict:
    with open(SPLIT, "rb") as f:
        return tomllib.load(f)


def pool_docs(pool: Path, which: str) -> list[tuple[str, str, Path, dict]]:
    """(doc id, group, path, labels) for the chosen side of the split."""
    split = load_split()
    group_of = {d: g for g, ds in split["groups"].items() for d in ds}
    held = set(split["split"]["heldout_groups"])
    excluded = set(split["split"].get("excluded", []))
    out = []
    for md in sorted(pool.glob("[0-9][0-9][0-9]*-*.md")):
        did = md.name.split("-", 1)[0]  # "074", or four digits once the three ran out
        if did in excluded:
            continue
        g = group_of.get(did, did)
        side = "heldout" if g in held else "study"
        if which != "all" and side != which:
            continue
        lab = md.with_name(md.name[:-3] + ".labels.json")
        out.append((did, g, md, json.loads(lab.read_text())))
    return out


def style_docs() -> list[tuple[str, str, Path, dict]]:
    out = []
    for md in sorted(STYLES_DIR.glob("*.md")):
        lab = md.with_name(md.name[:-3] + ".labels.json")
        if lab.exists():
            out.append((md.stem, "own:" + md.stem, md, json.loads(lab.read_text())))
    return out


def style_of(did: str, labels: dict) -> str:
    split = load_split()
    return split.get("styles", {}).get(did) or labels.get("style") or _style_in_notes(labels) or _style_from_name(did)


_STYLES = ("threads", "command notes", "checklists", "lab notebooks and dated logs", "postmortems and summaries",
           "tables", "other languages")


def _style_in_notes(labels: dict) -> str | None:
    """The style a labeller wrote in the notes ("style: command notes; ..."), mapped onto the INDEX's styles."""
    import re

    m = re.search(r"style:\s*([^;.]+)", labels.get("notes", ""), re.I)
    said = m.group(1).lower() if m else ""
    if re.search(r"chinese|japanese|korean|german|french|spanish|russian|other language", said):
        return "other languages"
    for key, style in (("thread", "threads"), ("command", "command notes"), ("checklist", "checklists"),
                       ("notebook", "lab notebooks and dated logs"), ("dated", "lab notebooks and dated logs"),
                       ("log", "lab notebooks and dated logs"), ("table", "tables"), ("case list", "tables"),
                       ("postmortem", "postmortems and summaries"), ("summar", "postmortems and summaries")):
        if key in said:
            return style
    return None


def _style_from_name(name: str) -> str:
    for key, style in (("thread", "threads"), ("command", "command notes"), ("checklist", "checklists"),
                       ("notebook", "lab notebooks and dated logs"), ("dated", "lab notebooks and dated logs"),
                       ("table", "tables"), ("zh", "other languages"), ("de", "other languages"),
                       ("postmortem", "postmortems and summaries"), ("summary", "postmortems and summaries"),
                       ("blog", "postmortems and summaries"), ("caselist", "tables")):
        if key in name:
            return style
    return "postmortems and summaries"


# --- reading a doc ------------------------------------------------------------------------------


def extract_new(text: str, path: str, model=True) -> tuple[list[dict], list[dict]]:
    """The attempts and next steps read, with their lines (``model``: read_document's learned passes)."""
    from dbglog.docreader.read import read_document

    parsed, _ = read_document(text, path, model=model)
    return _read(parsed)


def _read(parsed) -> tuple[list[dict], list[dict]]:
    atts, steps = [], []
    for p in parsed:
        for a in p.inv.attempts:
            lo, hi = getattr(a, "source_lines", None) or [0, 0]
            atts.append({"lines": (lo, hi), "outcome": a.outcome, "title": a.title, "who": getattr(a, "who", "")})
        for s in p.inv.next_steps:
            lo, hi = getattr(s, "source_lines", None) or [0, 0]
            steps.append({"lines": (lo, hi), "text": s.text})
    return atts, steps


def extract_agent(folder: Path):
    """The reading an agent sent back over MCP (``doc_units``, then ``import_extraction``): DOC's attempts are those
    in FOLDER/<doc stem>.extraction.json, read through the same validation and corrections as the MCP tool. A doc
    with no extraction reads as nothing, so a skipped doc counts against the agent."""
    from dbglog.docreader.review import from_extraction
    from dbglog.docreader.units import segment
    from dbglog.kb import importer

    def extract(text: str, path: str) -> tuple[list[dict], list[dict]]:
        f = folder / (Path(path).stem + ".extraction.json")
        if not f.exists():
            return [], []
        given = json.loads(f.read_text(encoding="utf-8"))
        # (an extraction with its digest is checked against this reading: scored by another cutting, its ids would
        # cite other lines)
        corr = from_extraction(segment(text), given, f.name, digest="digest" in given)
        parsed, _ = importer.parse_document(text, path, corr)
        return _read(parsed)
    return extract


def lines_lost(text: str) -> int:
    """Source lines that are in no stored investigation's mirror (the same check as tests/test_import_lossless.py)."""
    from dbglog import docreader
    from dbglog.kb import importer, mirror

    parsed, _ = importer.parse_document(text, "doc.md")
    kept = docreader.kept_text("\n".join(mirror.render(docreader._probe(p.inv)) for p in parsed))
    return sum(1 for ln in text.split("\n") if docreader.counts(ln) and docreader.norm(ln) not in kept)


# --- scoring ------------------------------------------------------------------------------------


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> int:
    return max(0, min(a[1], b[1]) - max(a[0], b[0]) + 1)


def _overlap_any(label: dict, got: tuple[int, int]) -> int:
    """Overlap with the labelled action lines, or with where its result or the suggestion it followed is
    (the own-words labels keep them apart; the pool's ranges already span both)."""
    spans = [label["lines"]] + [label[k] for k in ("result_lines", "suggestion_lines") if label.get(k)]
    # ([action line, result line] may point backwards: a log kept newest first tests a fix in the entry above it)
    return max(_overlap((min(sp), max(sp)), got) for sp in spans)


def _outcome_right(label: dict, got: str) -> bool:
    want = label["outcome"]
    if label.get("implied"):
        return True
    if want in ("unknown", "inconclusive"):
        return got in ("inconclusive", "untested")
    return want == got


def matches(want: list[dict], got_lines: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(label index, read attempt index) pairs, one to one, the largest overlaps first."""
    pairs = sorted(((_overlap_any(w, g), i, j) for i, w in enumerate(want) for j, g in enumerate(got_lines)),
                   reverse=True)
    mw, mg, matched = set(), set(), []
    for ov, i, j in pairs:
        if ov <= 0:
            break
        if i in mw or j in mg:
            continue
        mw.add(i)
        mg.add(j)
        matched.append((i, j))
    return matched


def score(labels: dict, atts: list[dict], steps: list[dict]) -> dict:
    want = labels.get("attempts", [])
    matched = matches(want, [g["lines"] for g in atts])
    mw, mg = {i for i, _ in matched}, {j for _, j in matched}
    right = sum(_outcome_right(want[i], atts[j]["outcome"]) for i, j in matched)
    want_steps = labels.get("next_steps", [])
    step_lines = labels.get("next_step_lines") or []
    if step_lines and len(step_lines) == len(want_steps):
        # Line-labelled steps: found when a step's lines overlap them (one to one).
        free = list(range(len(steps)))
        steps_found, steps_missed = 0, []
        for (lo, hi), text in zip(step_lines, want_steps):
            hit = next((k for k in free if _overlap((lo, hi), steps[k]["lines"]) > 0), None)
            if hit is not None:
                free.remove(hit)
                steps_found += 1
            else:
                steps_missed.append(str(text))
    else:
        steps_found = min(len(want_steps), len(steps))
        steps_missed = [] if len(steps) >= len(want_steps) else [f"{len(want_steps) - len(steps)} unlined step(s)"]
    stray = sum(1 for g in atts if not any(_overlap_any(w, g["lines"]) > 0 for w in want))
    return {"expected": len(want), "found": len(matched), "made": len(atts), "junk": len(atts) - len(matched),
            "stray": stray,
            "outcomes_right": right, "steps_expected": len(want_steps),
            "steps_found": steps_found, "steps_missed": steps_missed, "steps_made": len(steps),
            "missed": [want[i]["what"] for i in range(len(want)) if i not in mw],
            "junk_rows": [atts[j]["title"] for j in range(len(atts)) if j not in mg],
            "wrong_outcomes": [(want[i]["what"], want[i]["outcome"], atts[j]["outcome"]) for i, j in matched
                               if not _outcome_right(want[i], atts[j]["outcome"])]}


def totals(rows: list[dict]) -> dict:
    t = defaultdict(int, {k: 0 for k in ("expected", "found", "made", "junk", "stray", "outcomes_right")})
    for r in rows:
        for k in ("expected", "found", "made", "junk", "stray", "outcomes_right", "steps_expected", "steps_found",
                  "steps_made", "lost"):
            t[k] += r.get(k, 0)  # ("lost" is counted by evaluate(), not by score() alone)
    t["recall"] = t["found"] / t["expected"] if t["expected"] else 1.0
    t["precision"] = t["found"] / t["made"] if t["made"] else 1.0
    t["f1"] = 2 * t["recall"] * t["precision"] / (t["recall"] + t["precision"]) if t["found"] else 0.0
    t["junk_share"] = t["junk"] / t["made"] if t["made"] else 0.0
    t["outcome_share"] = t["outcomes_right"] / t["found"] if t["found"] else 1.0
    return dict(t)


def evaluate(docs, extract) -> list[dict]:
    rows = []
    for did, group, path, labels in docs:
        text = path.read_text(encoding="utf-8")
        atts, steps = extract(text, str(path))
        r = score(labels, atts, steps)
        r.update(doc=did, group=group, style=style_of(did, labels), lost=lines_lost(text))
        rows.append(r)
    return rows


def report(rows: list[dict], verbose: bool) -> str:
    out = []
    by_style = defaultdict(list)
    for r in rows:
        by_style[r["style"]].append(r)
        if verbose:
            out.append(f"{r['doc']:<40} {r['found']:>2}/{r['expected']:<2} junk {r['junk']:<2} "
                       f"outcomes {r['outcomes_right']}/{r['found']}")
            for m in r["missed"]:
                out.append(f"    missed: {m[:100]}")
            for m in r.get("steps_missed", []):
                out.append(f"    step missed: {m[:100]}")
            for j in r["junk_rows"]:
                out.append(f"    junk:   {j[:100]}")
            for w, e, g in r["wrong_outcomes"]:
                out.append(f"    outcome {g} (want {e}): {w[:80]}")
    out.append(f"{'style':<30} {'found':>9} {'recall':>7} {'junk':>9} {'outcomes':>9}")
    for style, rs in sorted(by_style.items()):
        t = totals(rs)
        out.append(f"{style:<30} {t['found']:>4}/{t['expected']:<4} {t['recall']:>6.0%} {t['junk']:>4}/{t['made']:<4} "
                   f"{t['outcome_share']:>8.0%}")
    t = totals(rows)
    out.append(f"{'TOTAL':<30} {t['found']:>4}/{t['expected']:<4} {t['recall']:>6.0%} {t['junk']:>4}/{t['made']:<4} "
               f"{t['outcome_share']:>8.0%}   F1 {t['f1']:.2f}  junk {t['junk_share']:.0%} ({t['stray']} stray, "
               f"{t['junk'] - t['stray']} within a labelled passage)  "
               f"next steps {t['steps_found']}/{t['steps_expected']} (made {t['steps_made']})  lines lost {t['lost']}")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", default="study", choices=("study", "heldout", "all", "none"))
    ap.add_argument("--pool", action="append", help="a directory of labelled docs (repeatable; default: the shared "
                    "pool)")
    ap.add_argument("--styles", action="store_true", help="add our own-words labelled docs (tests/corpus/styles)")
    ap.add_argument("--learn", action="store_true", help="also fit the weights with leave-one-group-out CV")
    ap.add_argument("--recall-cv", action="store_true", help="grouped CV of the learned recall pass (scikit-learn)")
    ap.add_argument("--train", metavar="OUT", help="fit the learned recall pass on these docs and write it to OUT "
                    "(dbglog/docreader/cues/learned.json)")
    ap.add_argument("--refit-cv", action="store_true", help="the shipped learned models against refits, on --pool docs "
                    "they never saw (scikit-learn, scipy)")
    ap.add_argument("--extra-pool", action="append", default=[], help="with --refit-cv: labelled docs only trained on")
    ap.add_argument("--toward", type=float, metavar="C", help="with --train: refit the models already at OUT on "
                    "these docs, the L2 penalty centred on their weights (C: its inverse strength; see --refit-cv)")
    ap.add_argument("--train-trees", metavar="OUT", help="grow the attempts model's boosted trees on these docs and "
                    "put them into OUT's attempts model, its linear part kept (dbglog/docreader/cues/learned.json)")
    ap.add_argument("--outcome-cv", action="store_true", help="grouped CV of the learned outcome pass (scikit-learn)")
    ap.add_argument("--train-outcomes", metavar="OUT", help="fit the learned outcome pass on these docs and write it "
                    "into OUT beside its other models (dbglog/docreader/cues/learned.json)")
    ap.add_argument("--extractions", metavar="DIR", help="score an agent's readings instead of the built-in reader's: "
                    "DIR/<doc stem>.extraction.json, as sent to the MCP tool import_extraction")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    pools = a.pool or [str(next((p / "shared" / "realdocs-pool" for p in ROOT.parents
                                 if (p / "shared" / "realdocs-pool").is_dir()), "realdocs-pool"))]
    docs = [] if a.set == "none" else [d for pool in pools for d in pool_docs(Path(pool), a.set)]
    if a.styles:
        docs += style_docs()
    if not docs:
        print(f"no labelled docs on side {a.set!r} of {SPLIT.name} in {', '.join(pools)}", file=sys.stderr)
        return 2
    if a.refit_cv:
        from reader_learn import refit_report  # scikit-learn and scipy only here

        extra = [d for pool in a.extra_pool for d in pool_docs(Path(pool), "all")]
        own = style_docs() if a.styles else []  # (--styles: our own-words docs are trained on, not measured)
        print(refit_report([d for d in docs if d not in own], extra + own))
        return 0
    if a.outcome_cv or a.train_outcomes:
        from reader_learn import outcome_report, train_outcomes  # scikit-learn only here

        print(train_outcomes(docs, a.train_outcomes) if a.train_outcomes else outcome_report(docs))
        return 0
    if a.train_trees:
        from reader_learn import train_trees  # scikit-learn only here

        print(train_trees(docs, a.train_trees))
        return 0
    if a.train or a.recall_cv:
        from reader_learn import recall_report, train  # scikit-learn only here

        print(train(docs, a.train, a.toward) if a.train else recall_report(docs))
        return 0
    extract = extract_agent(Path(a.extractions)) if a.extractions else extract_new
    rows = evaluate(docs, extract)
    if a.json:
        print(json.dumps({"docs": rows, "total": totals(rows)}, indent=1))
    else:
        print(f"set={a.set}{' +styles' if a.styles else ''} docs={len(docs)}")
        print(report(rows, a.verbose))
    if a.learn:
        from reader_learn import cross_validate, gate_attempts  # numpy only here

        print(cross_validate(docs))
        print(gate_attempts(docs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
