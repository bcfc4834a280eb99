import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dbglog.records import Records  # noqa: E402
from dbglog.workspace import Workspace  # noqa: E402


def load_corpus(recs: Records, corpus) -> dict[str, str]:
    """Record the corpus through the normal write paths; return key -> investigation id."""
    ids = {}
    for inv in corpus:
        i = recs.new(inv["title"], symptom=inv["symptom"], tags=inv["tags"]).id
        ids[inv["key"]] = i
        for title, hyp, did, result, concl, outcome in inv["attempts"]:
            recs.add_attempt(i, title=title, hypothesis=hyp, did=did, result=result, conclusion=concl,
                             outcome=outcome)
        for factor, w, b in inv["differences"]:
            recs.diff_add(i, factor, w, b)
        for text, detail in inv["next"]:
            recs.next_add(i, text, detail)
        if inv["status"] != "open":
            recs.set_status(i, inv["status"], inv["root_cause"])
    return ids


@pytest.fixture
def recs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = Records(Workspace(tmp_path / ".dbglog"), create=True)
    yield r
    r.close()


@pytest.fixture(scope="session")
def corpus_recs(tmp_path_factory):
    from search_corpus import CORPUS

    root = tmp_path_factory.mktemp("corpus")
    r = Records(Workspace(root / ".dbglog"), create=True)
    ids = load_corpus(r, CORPUS)
    yield r, ids
    r.close()
