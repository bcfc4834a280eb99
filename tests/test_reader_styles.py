"""The reader on the own-words labelled corpus (tests/corpus/styles: 52 docs in the styles of real write-ups,
labelled by hand with line ranges; README there): per style, attempts found, junk and outcomes, measured the way
bench/reader_eval.py measures the real pool (an attempt is found when its source lines overlap a labelled one).

The floors are the figures the reader reaches, so a change cannot lose a style silently; the figures that count
are on real docs it never saw (the pool's held-out split, README). Every doc is also checked for the guarantees
that hold on any input: no line lost, every attempt citing lines inside the document, a second read the same.
"""

import importlib.util
from collections import defaultdict
from pathlib import Path

import pytest

from dbglog.docreader import counts, kept_text, norm, read_document
from dbglog.core.markdown import render_default
from dbglog.docreader.yardstick import _probe

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("reader_eval", ROOT / "bench" / "reader_eval.py")
reader_eval = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reader_eval)

DOCS = reader_eval.style_docs()
ROWS = reader_eval.evaluate(DOCS, reader_eval.extract_new)

# style -> (least share of labelled attempts found, most share of made rows that are junk). These docs are among
# the learned recall pass's training docs, so its effect here is in sample: it raised threads from 23 to 28 of 32
# and made one more junk row in the German docs (floor 0.15 -> 0.17) and two more in the threads (0.12 -> 0.16); its
# out-of-sample figures are in the README. The refit of 2026-12-05 (toward the shipped weights, 407 docs; on 319
# docs the old models never saw, F1 0.569 -> 0.577) found 236 of these 265 tries against 235, one fewer in the
# threads (27 -> 26 of 32: floor 0.84 -> 0.81). The learned pass's threshold and drop re-tuned by grouped CV the
# same day (0.6/0.1 -> 0.5/0.2: 400 docs, F1 0.605 -> 0.617) found 238 here, one more in the tables with one more
# junk row there (6 of 31: floor 0.18 -> 0.20), and the threads back to 27. Boosted trees over the cues mixed into
# the attempt model, with its threshold and drop re-tuned (0.5/0.2 -> 0.45/0.25: 431 docs, F1 0.613 -> 0.618,
# 127 junk rows fewer for 28 tries) found 237 here against 240, with two more junk rows in the threads (6 of 33:
# floor 0.16 -> 0.19) and one more in the tables (7 of 32: floor 0.20 -> 0.22). The document's kind and the unit's
# place given to the trees (431 docs: F1 0.618 -> 0.634, 179 junk rows fewer) found 240 here with junk 45 of 285: two
# more junk rows in the Chinese docs (5 of 23: floor 0.15 -> 0.22) and two in the postmortems (3 of 21: 0.14 -> 0.15).
# The Polish note came with the Polish cue table (2026-12-05), after the models were fitted: 4 of its 6 tries (the
# two diagnostic rows of its step table are not read), no junk row. The trees regrown on 646 docs (2026-12-06; on the
# held-out sets 130 and 131, read once with each: 77 -> 80 of 132 found, junk 42 -> 44 rows, F1 0.65/0.57 ->
# 0.67/0.58) make one more junk row here in the threads (7 of 35: floor 0.19 -> 0.20) and in the lab notebooks (0.30
# -> 0.32).
FLOORS = {
    "thread": (0.81, 0.20), "command-notes": (0.75, 0.13), "case-results": (0.93, 0.13), "lab-notebook": (0.81, 0.32),
    "checklist-plan": (0.87, 0.17), "postmortem": (0.86, 0.15), "table": (0.85, 0.22), "zh": (0.75, 0.22),
    "de": (0.72, 0.17), "pl": (0.66, 0.0), "blog": (0.67, 0.25), "protocol": (0.97, 0.03),
}


def test_the_labelled_corpus_covers_every_style():
    assert len(DOCS) >= 40
    assert {r["style"] for r in ROWS} >= set(FLOORS)


@pytest.mark.parametrize("style", sorted(FLOORS))
def test_each_style_is_read_above_its_floor(style, capsys):
    t = reader_eval.totals([r for r in ROWS if r["style"] == style])
    recall, junk = FLOORS[style]
    with capsys.disabled():
        print(f"\n{style}: found {t['found']}/{t['expected']}, junk {t['junk']}/{t['made']}, "
              f"outcomes {t['outcomes_right']}/{t['found']}")
    assert t["recall"] >= recall
    assert t["junk_share"] <= junk


def test_outcomes_of_found_attempts_are_mostly_right():
    t = reader_eval.totals(ROWS)
    assert t["outcome_share"] >= 0.65


@pytest.mark.parametrize("doc", [d[2] for d in DOCS], ids=[d[0] for d in DOCS])
def test_every_line_is_kept_and_every_attempt_cites_its_lines(doc):
    text = doc.read_text(encoding="utf-8")
    lines = text.split("\n")
    parsed, _ = read_document(text, doc.name)
    kept = " \n ".join(kept_text(render_default(_probe(p.inv))) for p in parsed)
    lost = [x for x in lines if counts(x) and norm(x) not in kept]
    assert lost == []
    for p in parsed:
        for a in p.inv.attempts:
            assert len(a.source_lines) == 2 and 1 <= a.source_lines[0] <= a.source_lines[1] <= len(lines)
    again, _ = read_document(text, doc.name)
    assert [p.inv for p in again] == [p.inv for p in parsed]


def test_a_suggestion_answered_by_the_asker_is_the_askers_attempt():
    by_style = defaultdict(list)
    for r in ROWS:
        by_style[r["style"]].append(r)
    text = (ROOT / "tests" / "corpus" / "styles" / "49-thread-many-reports-vllm-v1-hang.md").read_text()
    parsed, _ = read_document(text, "49.md")
    who = {a.who for a in parsed[0].inv.attempts}
    assert {"orla-b", "devraj-k"} <= who


def test_a_source_gathered_before_is_told_in_any_form_its_sources_list_wrote_it(tmp_path):
    # (a third of one session's new held-out docs had been labelled sessions before: the search tools return the same
    # documents, and the list the helpers checked had been rebuilt from some of the label sets only)
    spec = importlib.util.spec_from_file_location("recover_docs", ROOT / "bench" / "recover_docs.py")
    rd = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rd)
    mine = tmp_path / "SOURCES.txt"
    mine.write_text("9001-x | https://github.com/acme/notes/blob/" + "a" * 40 + "/docs/HANG.md\n"
                    "9002-y | code-index id 123456789 (repo/path not shown)\n9003-z | index:987654321\n"
                    "9004-w | https://github.com/acme/engine/issues/77\n", encoding="utf-8")
    said = dict(rd.seen([
        "https://github.com/acme/notes/blob/" + "b" * 40 + "/docs/HANG.md",  # (another commit of the same file)
        "code-search index file id 123456789", "code-search index file id 987654321",
        "https://github.com/acme/engine/issues/77", "https://github.com/acme/engine/issues/78",
        "https://github.com/acme/notes/blob/" + "b" * 40 + "/docs/OOM.md", "a title"], [mine]))
    assert [v.split(":")[0] for v in said.values()] == ["gathered before"] * 4 + ["new", "new", "not understood"]
