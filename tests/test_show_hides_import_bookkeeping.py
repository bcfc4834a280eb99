"""`show` leaves out the sections import keeps only for its own bookkeeping ("## Source headings": which
headings of the document became fields). The mirror file keeps them, so no line of the document is lost."""

import pytest

from conftest import run_cli_inproc
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
