"""The freshness check before every command (kb/sync.py, "the listing manifest"): while logs/'s own
stamp holds, it lists no directory and looks at a bounded number of files, whatever the number of
investigations -- the files dbglog wrote or took in last, the current investigation's, and a window
that rotates over the rest -- so an in-place edit of any file is seen within ceil(files / WINDOW)
commands, and one of a file being worked on by the next."""

import math
import os
import time

import pytest

from dbglog.kb import sync

N = 30


@pytest.fixture
def many(recs, monkeypatch):
    """A workspace of N investigations, logs/ still for a while and its listing remembered."""
    monkeypatch.setattr(sync, "WINDOW", 5)
    monkeypatch.setattr(sync, "HOT", 2)
    ids = [recs.new(f"bug {i:02d} in the allreduce", symptom=f"rank {i} stalls").id for i in range(N)]
    monkeypatch.setattr(sync, "_HOT_NOW", [])  # (what this process wrote: none of them, from here)
    sync._PENDING.pop(sync._listing_path(recs.ws), None)
    _age(recs.ws.logs_dir)
    assert not sync.is_stale(recs.store, recs.ws)  # the full listing, remembered
    return ids


def _age(path, seconds: float = 10.0) -> None:
    """A directory's stamp as it is between two commands a person types (not racy)."""
    past = time.time() - seconds
    os.utime(path, (past, past))


def _edit_in_place(path) -> None:
    """What `>>`, nano or VS Code do: the file's bytes change, the directory's stamp does not."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("\nan afterthought\n")


def _count(monkeypatch, name):
    calls = []
    real = getattr(os, name)

    def counting(*a, **kw):
        calls.append(a[0] if a else None)
        return real(*a, **kw)

    monkeypatch.setattr(os, name, counting)
    return calls


def test_while_the_stamp_holds_no_listing_is_read_and_a_bounded_number_of_files_is_looked_at(recs, many,
                                                                                            monkeypatch):
    lstats = _count(monkeypatch, "lstat")
    scans = _count(monkeypatch, "scandir")
    assert not sync.is_stale(recs.store, recs.ws)
    assert scans == []
    assert 0 < len(lstats) <= sync.WINDOW + sync.HOT + 1  # (+1: the current investigation's file)


def test_an_in_place_edit_of_any_file_is_seen_within_files_over_window_checks(recs, many):
    stamp = os.stat(recs.ws.logs_dir).st_mtime_ns
    _edit_in_place(recs.ws.logs_dir / f"{many[7]}.md")
    assert os.stat(recs.ws.logs_dir).st_mtime_ns == stamp
    checks = [sync.is_stale(recs.store, recs.ws) for _ in range(math.ceil(N / sync.WINDOW))]
    assert True in checks


def test_an_in_place_edit_of_a_file_dbglog_just_wrote_is_seen_by_the_next_check(recs, many):
    recs.sync()
    with recs.change(many[3]):  # (a write: the file joins the ones every check looks at)
        pass
    for _ in range(3):  # the window moves on
        assert not sync.is_stale(recs.store, recs.ws)
    _edit_in_place(recs.ws.logs_dir / f"{many[3]}.md")
    assert sync.is_stale(recs.store, recs.ws)


def test_an_in_place_edit_of_the_current_investigation_is_seen_by_the_next_check(recs, many):
    recs.store.set_meta("current", many[11])
    _edit_in_place(recs.ws.logs_dir / f"{many[11]}.md")
    assert sync.is_stale(recs.store, recs.ws)


def test_after_dbglogs_own_write_the_next_check_reads_no_listing(recs, many, monkeypatch):
    recs.sync()
    with recs.change(many[0]):
        pass
    scans = _count(monkeypatch, "scandir")
    assert not sync.is_stale(recs.store, recs.ws)
    assert scans == []


def test_a_file_added_beside_them_is_seen_by_the_next_check(recs, many):
    src = (recs.ws.logs_dir / f"{many[0]}.md").read_text(encoding="utf-8")
    (recs.ws.logs_dir / "another.md").write_text(src.replace(many[0], "20261202-another-abcd"), encoding="utf-8")
    assert sync.is_stale(recs.store, recs.ws)


def test_a_remembered_listing_older_than_the_relist_period_is_not_trusted(recs, many, monkeypatch):
    monkeypatch.setattr(sync, "RELIST_NS", 0)
    scans = _count(monkeypatch, "scandir")
    assert not sync.is_stale(recs.store, recs.ws)
    assert scans != []


def test_the_remembered_listing_is_written_only_when_the_command_succeeds(recs, many):
    path = sync._listing_path(recs.ws)
    path.unlink(missing_ok=True)
    sync.drop_listing()  # a command that reported an error
    assert not path.exists()
    sync._PENDING.pop(path, None)
    _age(recs.ws.logs_dir, 20)
    assert not sync.is_stale(recs.store, recs.ws)
    assert not path.exists()  # (pending)
    sync.flush_listing()  # the command succeeded
    assert path.exists()


def test_a_long_lived_process_rotates_its_window_in_memory_and_rewrites_the_file_only_when_more_moved(
        recs, many, monkeypatch):
    monkeypatch.setattr(sync, "REWRITE_S", 3600)
    sync.flush_listing()  # (the MCP server after its first call)
    replaces = _count(monkeypatch, "replace")
    _edit_in_place(recs.ws.logs_dir / f"{many[7]}.md")
    seen = []
    for _ in range(math.ceil(N / sync.WINDOW)):
        seen.append(sync.is_stale(recs.store, recs.ws))
        sync.flush_listing()
    assert True in seen
    assert replaces == []  # only the window's cursor moved: nothing written


def _size_counts_entries(path) -> bool:
    before = os.stat(path).st_size
    (path / "probe").write_text("x")
    counts = os.stat(path).st_size != before
    (path / "probe").unlink()
    return counts


def test_a_file_added_in_the_moment_of_a_dbglog_write_is_seen_where_the_directory_size_tells(recs, many,
                                                                                            monkeypatch, tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    if not _size_counts_entries(scratch):
        pytest.skip("this filesystem's directory size does not count entries (ext4): the next full listing sees it")
    recs.sync()
    publish = recs.publish
    src = (recs.ws.logs_dir / f"{many[0]}.md").read_text(encoding="utf-8")

    def publish_while_another_program_adds_a_file(inv_id, scan=True):
        out = publish(inv_id, scan=scan)
        (recs.ws.logs_dir / "pulled.md").write_text(src.replace(many[0], "20261202-pulled-abcd"), encoding="utf-8")
        return out

    monkeypatch.setattr(recs, "publish", publish_while_another_program_adds_a_file)
    with recs.change(many[1]):
        pass
    assert sync.is_stale(recs.store, recs.ws)
