"""`tried` on versions: a bare version in a record of the idea's topic is the idea's, a version written after another
name is not, and another version is another experiment."""

import pytest

from conftest import first_tried, module_records


@pytest.fixture(scope="module")
def conn(tmp_path_factory):
    recs = module_records(tmp_path_factory, "tried_versions")
    # a thread whose title never names the tool, though its posts do, again and again
    inv = recs.new("Out of memory on a model that loaded fine before the update to 0.1.13")
    recs.add_attempt(inv.id, title="I had to revert back to 0.1.11.", result="loads again", outcome="worked")
    recs.add_attempt(inv.id, title="I've tried the new 0.1.22 version", result="the OOM is also fixed",
                     outcome="worked")
    recs.set_section(inv.id, "Report", "Ollama 0.1.13 runs out of memory where Ollama 0.1.11 did not.")
    recs.set_section(inv.id, "Reply", "Ollama 0.1.15 is released, worth a try.")
    recs.set_section(inv.id, "Build", "I built Ollama from source to test the patch.")
    other = recs.new("Kernel build fails")
    recs.add_attempt(other.id, title="Newer toolchain", did="built with CUDA 3.2", outcome="failed")
    yield recs.store.conn
    recs.close()


def test_a_bare_version_in_a_thread_about_the_tool_is_the_tools_version(conn):
    assert first_tried(conn, "revert to Ollama 0.1.11") == "I had to revert back to 0.1.11."
    assert first_tried(conn, "Ollama 0.1.22") == "I've tried the new 0.1.22 version"


def test_a_version_written_after_another_name_is_not_the_ideas(conn):
    assert first_tried(conn, "build with triton 3.2") is None


def test_another_version_is_not_the_same_experiment(conn):
    assert first_tried(conn, "Ollama 0.1.16") is None
    assert first_tried(conn, "revert to Ollama 0.1.9") is None


def test_the_version_a_change_starts_from_need_not_be_in_the_record(recs):
    inv = recs.new("Black screen after the driver upgrade")
    recs.add_attempt(inv.id, title="Rolled the nvidia driver back to 418", result="desktop back", outcome="worked")
    c = recs.store.conn
    for idea in ("roll the nvidia driver back from 430 to 418", "roll the nvidia driver back from version 430 to 418"):
        assert first_tried(c, idea) == "Rolled the nvidia driver back to 418", idea
    assert first_tried(c, "roll the nvidia driver back from version 430 to 410") is None  # (another version it goes to)
