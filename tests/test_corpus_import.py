"""The importer on the own-words corpus (tests/corpus/docs: 75 docs written in the styles found in public
debug write-ups; see tests/corpus/STYLES.md and SOURCES.md).

These docs were written while the old phrase-rule reader was built, and their expectations name attempts by
phrases of that reader's titles; the unit/cue reader is measured on them by the passage an attempt cites too.
The bars are the figures the reader reaches (printed), kept so a change cannot lose them silently; the
figures that count are measured on text the reader never saw (bench/reader_eval.py, README).
"""

from pathlib import Path

import pytest
import yaml

import corpus_measure as cm
from conftest import run_cli_inproc
from dbglog.core import outcome


@pytest.fixture
def cli():
    # `dbglog import` through the real entry point, in-process (faster; nothing here is about the process)
    return run_cli_inproc


RESULTS = [cm.measure(d) for d in cm.corpus()]
TOTAL = cm.totals(RESULTS)


def test_corpus_is_big_enough():
    assert TOTAL["docs"] >= 30
    assert TOTAL["attempts_expected"] >= 150


def test_corpus_figures(capsys):
    with capsys.disabled():
        print("\n" + cm.report(RESULTS))
    assert TOTAL["attempts_found"] >= 0.66 * TOTAL["attempts_expected"]
    assert TOTAL["outcomes_right"] >= 0.68 * TOTAL["attempts_found"]
    assert TOTAL["steps_found"] >= 0.68 * TOTAL["steps_expected"]
    assert TOTAL["investigations_right"] >= TOTAL["docs"] - 1
    # Junk taken for attempts (captions, lessons, plans, recap rows) stays a minority. (The learned passes, which
    # never saw these docs, found 14 more of them and made 22 more extra rows: 0.68 -> 0.65.)
    assert TOTAL["attempts_found"] >= 0.65 * (TOTAL["attempts_found"] + TOTAL["extra"])


@pytest.mark.parametrize("result", RESULTS, ids=[r["doc"] for r in RESULTS])
def test_no_content_line_is_lost(result):
    assert result["lost"] == []


def test_import_is_idempotent_end_to_end(ws, cli):
    docs = cm.corpus()
    first = cli(ws, "import", *docs, "--json")
    assert first.returncode == 0, first.stderr
    import json

    created = json.loads(first.stdout)["investigations"]
    assert all(i["action"] == "create" for i in created)
    again = json.loads(cli(ws, "import", *docs, "--json").stdout)["investigations"]
    assert {i["action"] for i in again} == {"unchanged"}
    assert len(list((ws / "logs").glob("*.md"))) == len(created)


OUTCOMES = yaml.safe_load((Path(__file__).parent / "corpus" / "outcomes.yaml").read_text())


def test_outcome_sentences(capsys):
    rows = OUTCOMES if isinstance(OUTCOMES, list) else next(iter(OUTCOMES.values()))
    assert len(rows) >= 60
    wrong = [(r["text"], r["outcome"], outcome.classify(r["text"])) for r in rows
             if outcome.classify(r["text"]) != r["outcome"]]
    with capsys.disabled():
        print(f"\noutcome sentences: {len(rows) - len(wrong)}/{len(rows)} right")
        for t, e, g in wrong:
            print(f"  expected {e:12} got {g:12} {t}")
    assert len(rows) - len(wrong) >= 0.9 * len(rows)
    # The guarantee of issue 17: a negated failure is never recorded as failed.
    for text in ("No OOM anymore after 5000 steps", "No segfault after 1000 iterations", "No deadlock in 50 runs",
                 "Hang disappears", "Error rate dropped from 30% to 0", "no NaN through 2000 steps"):
        assert outcome.classify(text) == "worked", text
    # And text that says nothing is inconclusive, not failed.
    for text in ("Collected a trace with nsys", "Ran it with NCCL_DEBUG=INFO", "See the log below"):
        assert outcome.classify(text) == "inconclusive", text
