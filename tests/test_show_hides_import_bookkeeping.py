"""`show` leaves out the sections import keeps only for its own bookkeeping ("## Source headings": which
headings of the document became fields). The mirror file keeps them, so no line of the document is lost."""

import json

import pytest

from conftest import old_database, opened_by_dbglog, run_cli_inproc
from dbglog.docreader.read import SOURCE_HEADINGS
from dbglog.core.model import BOOKKEEPING_SECTIONS
from import_thread_doc import THREAD_DOC, as_json, lost_lines, mirror_files, write_doc


@pytest.fixture
def cli():
    return run_cli_inproc


def test_the_readers_bookkeeping_heading_is_the_one_show_hides():
    assert SOURCE_HEADINGS in BOOKKEEPING_SECTIONS


def test_show_text_and_json_leave_out_source_headings_and_the_mirror_keeps_them(ws, cli, tmp_path):
    inv_id = as_json(cli(ws, "import", write_doc(tmp_path), "--json"))["investigations"][0]["id"]
    [mirror] = mirror_files(ws)
    assert f"\n{SOURCE_HEADINGS}\n" in mirror.read_text() and lost_lines(THREAD_DOC, mirror.read_text()) == []
    text = cli(ws, "show", inv_id, check=0).stdout
    assert "Source headings" not in text and "What I tried" in text  # other free sections still shown
    data = as_json(cli(ws, "show", inv_id, "--json"))
    headings = [s["heading"] for s in data["sections"]]
    assert SOURCE_HEADINGS not in headings and "## What I tried" in headings
    assert SOURCE_HEADINGS in cli(ws, "show", inv_id, "--markdown", check=0).stdout  # the file, as it is
    cli(ws, "doctor", check=0)  # leaving it out of show changed nothing stored
    assert f"\n{SOURCE_HEADINGS}\n" in mirror.read_text()


def test_search_and_tried_do_not_find_a_word_only_in_the_bookkeeping_sections(ws, cli, tmp_path):
    doc = write_doc(tmp_path, THREAD_DOC.replace("## Next steps\n", "## Next steps on zanzibar\n"))
    cli(ws, "import", doc, check=0)
    [mirror] = mirror_files(ws)
    bookkeeping = mirror.read_text().split(f"\n{SOURCE_HEADINGS}\n")[1]
    assert "zanzibar" in bookkeeping and mirror.read_text().count("zanzibar") == 1  # only there
    assert as_json(cli(ws, "search", "zanzibar", "--json"))["hits"] == []
    tried = json.loads(cli(ws, "tried", "zanzibar", "--json", check=1).stdout)  # (exit 1: not tried)
    assert not tried["tried"] and tried["close"] == tried["another_way"] == tried["mentioned"] == tried["others"] == []
    assert as_json(cli(ws, "search", "flash-attn", "--json"))["hits"]  # the author's words still are
    assert cli(ws, "doctor", check=0).returncode == 0


def test_a_database_that_indexed_bookkeeping_sections_drops_them_on_open(tmp_path):
    from dbglog.kb import search

    db = tmp_path / "old.db"
    conn = old_database(db, "0013")
    conn.execute("INSERT INTO investigations (id, title, sections) VALUES ('20260101-x-abcd', 'old', ?)", (json.dumps(
        [{"heading": SOURCE_HEADINGS, "body": "- line 4: ## Next steps on zanzibar"},
         {"heading": "## Notes", "body": "the cuobjdump output"}]),))
    conn.execute("INSERT INTO sections (investigation_id, position, heading, line, body) VALUES "
                 "('20260101-x-abcd', 1, 'Source headings', 1, '- line 4: ## Next steps on zanzibar')")
    with opened_by_dbglog(conn, db) as s:
        assert search.search(s.conn, "zanzibar").hits == [] and search.search(s.conn, "cuobjdump").hits
        assert search.check_index(s.conn) == []


def test_imports_summary_does_not_list_its_own_bookkeeping_as_the_authors_free_text(ws, cli, tmp_path):
    doc = write_doc(tmp_path)
    out = cli(ws, "import", doc, check=0).stdout
    assert "kept as free text:" in out and "Source headings" not in out
    rec = as_json(cli(ws, "import", doc, "--json"))["investigations"][0]["recognized"]
    assert "What I tried" in rec["free_sections"] and "Source headings" not in rec["free_sections"]


AUTHORS_BOOKKEEPING_NAMES = ("# Flaky upload\n\nTried raising the retry count to 5; still flaky.\n\n"
                             "## Import review\n\nCarol signed off on the uploader design in March.\n\n"
                             "## Source headings\n\nBob kept the old retry policy.\n")


def test_a_documents_own_import_review_section_survives_a_reimport(ws, cli, tmp_path):
    doc = write_doc(tmp_path, AUTHORS_BOOKKEEPING_NAMES)
    first = as_json(cli(ws, "import", doc, "--json"))["investigations"][0]
    again = as_json(cli(ws, "import", doc, "--json"))["investigations"][0]
    assert again["action"] == "unchanged" and again["attempt_list"] == first["attempt_list"] != []
    [mirror] = mirror_files(ws)
    assert "Carol signed off" in mirror.read_text() and lost_lines(AUTHORS_BOOKKEEPING_NAMES, mirror.read_text()) == []


def test_show_and_search_find_a_documents_own_section_named_like_the_bookkeeping(ws, cli, tmp_path):
    inv_id = as_json(cli(ws, "import", write_doc(tmp_path, AUTHORS_BOOKKEEPING_NAMES), "--json"))["investigations"][0]["id"]
    shown = cli(ws, "show", inv_id, check=0).stdout
    assert "Carol signed off" in shown and "Bob kept the old retry policy" in shown
    assert as_json(cli(ws, "search", "Bob", "--json"))["hits"] and as_json(cli(ws, "search", "Carol", "--json"))["hits"]
