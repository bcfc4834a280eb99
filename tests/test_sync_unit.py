"""In-process unit tests of dbglog/kb/sync.py: the stat check, imports of hand edits, moves, missing files,
prune, conflicts, foreign markdown, unreadable files, git HEAD reading, reindex and doctor.

The end-to-end behaviour through the CLI (and across git clones) is in test_sync_team.py; these call
``sync``'s functions on a Records workspace directly, so each case costs milliseconds."""

import os

import pytest

from dbglog.kb import sync
from dbglog.util.errors import ConflictError, DbglogError


def _sync(recs, **kw):
    with recs.store.write():
        return sync.sync(recs.store, recs.ws, **kw)


def _edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def _bump_mtime(path):
    # a rewrite within the mtime granularity must still look changed to the stat pass
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


@pytest.fixture
def inv(recs):
    i = recs.new("NCCL timeout on rank 17", symptom="rank 17 stalls")
    return i.id


def mirror(recs, inv_id):
    return recs.ws.root / "logs" / f"{inv_id}.md"


def test_fresh_mirror_is_not_stale_and_sync_is_a_no_op(recs, inv):
    assert not sync.is_stale(recs.store, recs.ws)
    rep = _sync(recs)
    assert not rep.changed and rep.to_dict() == {"imported": [], "added": [], "moved": [], "missing": [],
                                                 "pruned": [], "resolved": [], "ignored": [], "links": [],
                                                 "misplaced": []}


def test_hand_edit_is_stale_and_imported(recs, inv):
    _edit(mirror(recs, inv), "rank 17 stalls", "watchdog fired")
    _bump_mtime(mirror(recs, inv))
    assert sync.is_stale(recs.store, recs.ws)
    rep = _sync(recs)
    assert rep.imported == [f"logs/{inv}.md"] and rep.changed
    assert recs.store.load(inv).symptom == "watchdog fired"
    assert not sync.is_stale(recs.store, recs.ws)  # the new baseline


def test_touch_without_change_only_updates_the_baseline(recs, inv):
    rev = recs.store.rev(inv)
    _bump_mtime(mirror(recs, inv))
    assert sync.is_stale(recs.store, recs.ws)
    rep = _sync(recs)
    assert not rep.changed and recs.store.rev(inv) == rev
    assert not sync.is_stale(recs.store, recs.ws)


def test_same_size_same_mtime_edit_needs_rehash(recs, inv):
    f = mirror(recs, inv)
    st = os.stat(f)
    _edit(f, "rank 17 stalls", "rank 71 stalls")  # same size
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert not sync.is_stale(recs.store, recs.ws)
    assert not _sync(recs).changed
    assert _sync(recs, rehash=True).imported == [f"logs/{inv}.md"]
    assert recs.store.load(inv).symptom == "rank 71 stalls"


def test_rename_is_a_move_and_delete_is_missing_until_prune(recs, inv):
    other = recs.new("Triton autotune hang").id
    os.rename(mirror(recs, inv), recs.ws.logs_dir / "nccl.md")
    rep = _sync(recs)
    assert rep.moved == [(f"logs/{inv}.md", "logs/nccl.md")] and not rep.missing
    assert recs.path_for(inv) == "logs/nccl.md"
    mirror(recs, other).unlink()
    assert sync.is_stale(recs.store, recs.ws)
    rep = _sync(recs)
    assert rep.missing == [f"logs/{other}.md"] and recs.store.exists(other)  # never deleted silently
    rep = _sync(recs, prune=True)
    assert rep.pruned == [f"logs/{other}.md"] and not recs.store.exists(other)
    assert recs.store.exists(inv)


def test_prune_refuses_when_the_database_changed_since_the_file(recs, inv):
    f = mirror(recs, inv)
    f.unlink()
    with recs.store.write():
        recs.store.q("UPDATE investigations SET rev = rev + 1 WHERE id = ?", inv)
    with pytest.raises(DbglogError, match="changed in the database"):
        _sync(recs, prune=True)
    assert recs.store.exists(inv)


def test_both_sides_changed_is_a_conflict_with_both_kept_then_resolved(recs, inv):
    f = mirror(recs, inv)
    with recs.store.write():
        recs.store.q("UPDATE investigations SET rev = rev + 1, symptom = 'db side' WHERE id = ?", inv)
    _edit(f, "rank 17 stalls", "file side")
    _bump_mtime(f)
    with pytest.raises(ConflictError, match=rf"logs/{inv}\.md was edited outside dbglog"):
        _sync(recs)
    copy = recs.ws.logs_dir / f"{inv}{sync.CONFLICT_SUFFIX}"
    assert "db side" in copy.read_text() and "file side" in f.read_text()
    assert recs.store.load(inv).symptom == "db side"  # the failed transaction changed nothing
    assert copy.name not in {os.path.basename(p) for p in sync.mirror_files(recs.ws)}
    kinds = {p["kind"] for p in sync.doctor(recs.store, recs.ws)}
    assert {"conflict-copy", "unsynced"} <= kinds
    rep = _sync(recs, resolve={f"logs/{inv}.md"})
    assert rep.imported == [f"logs/{inv}.md"] and len(rep.resolved) == 1
    assert not copy.exists() and (recs.ws.root / rep.resolved[0]).exists()
    assert recs.store.load(inv).symptom == "file side"
    assert sync.doctor(recs.store, recs.ws) == []


def test_new_file_with_our_front_matter_is_added(recs, inv, tmp_path):
    text = mirror(recs, inv).read_text()
    with recs.store.write():
        recs.store.delete_investigation(inv)
        recs.store.drop_mirror(f"logs/{inv}.md")
    mirror(recs, inv).unlink()
    (recs.ws.logs_dir / "imported.md").write_text(text)
    rep = _sync(recs)
    assert rep.added == ["logs/imported.md"] and recs.store.load(inv).symptom == "rank 17 stalls"


def test_two_files_with_one_id_are_refused(recs, inv):
    (recs.ws.logs_dir / "copy.md").write_text(mirror(recs, inv).read_text().replace("rank 17", "rank 18"))
    with pytest.raises(DbglogError, match="both hold investigation"):
        _sync(recs)
    assert "duplicate-id" in {p["kind"] for p in sync.doctor(recs.store, recs.ws)}


def test_foreign_markdown_is_ignored_and_remembered(recs, inv):
    readme = recs.ws.logs_dir / "README.md"
    readme.write_text("# Notes\n\nnot an investigation\n")
    assert not sync.looks_like_ours(readme.read_bytes())
    assert sync.looks_like_ours(mirror(recs, inv).read_bytes())
    assert sync.is_stale(recs.store, recs.ws)
    rep = _sync(recs)
    assert rep.ignored == ["logs/README.md"] and not rep.changed
    assert sync.ignored_files(recs.store) == {"logs/README.md": [readme.stat().st_size, readme.stat().st_mtime_ns]}
    assert not sync.is_stale(recs.store, recs.ws)  # the stat pass skips it from now on
    assert sync.doctor(recs.store, recs.ws) == []
    readme.unlink()
    assert _sync(recs).ignored == [] and sync.ignored_files(recs.store) == {}


def test_conflict_copies_dotfiles_and_directories_are_not_mirror_files(recs, inv):
    (recs.ws.logs_dir / f"x{sync.CONFLICT_SUFFIX}").write_text("x")
    (recs.ws.logs_dir / ".tmp.md").write_text("x")
    (recs.ws.logs_dir / "dir.md").mkdir()
    (recs.ws.logs_dir / "notes.txt").write_text("x")
    assert list(sync.mirror_files(recs.ws)) == [f"logs/{inv}.md"]


def test_directory_in_place_of_a_mirror_file_is_one_clear_error(recs, inv):
    f = mirror(recs, inv)
    f.unlink()
    f.mkdir()
    with pytest.raises(DbglogError, match="not a regular file"):
        _sync(recs)
    assert "not-a-file" in {p["kind"] for p in sync.doctor(recs.store, recs.ws)}


@pytest.mark.parametrize("data, msg", [
    (b"---\nid: x\n---\n\xff\xfe broken", "invalid UTF-8 at byte"),
    (b"\x00\x01\x02 binary junk", "binary file"),
])
def test_unreadable_files_are_one_line(recs, inv, data, msg):
    (recs.ws.logs_dir / "bad.md").write_bytes(data)
    with pytest.raises(DbglogError, match=msg):
        sync.read_text(recs.ws.logs_dir / "bad.md", "logs/bad.md")


def test_nul_in_our_file_is_read_and_cleaned_back(recs, inv):
    f = mirror(recs, inv)
    _edit(f, "rank 17 stalls", "rank 17\x00 stalls \x1b[31mred")
    _bump_mtime(f)
    rep = _sync(recs)
    assert rep.imported == [f"logs/{inv}.md"]
    stored = recs.store.load(inv).symptom
    assert "\x00" not in stored and "\x1b" not in stored and "rank 17" in stored
    data = f.read_bytes()
    assert b"\x00" not in data and b"\x1b" not in data  # written back without them
    assert not sync.is_stale(recs.store, recs.ws)


def test_conflict_markers_are_refused_with_the_line(recs, inv):
    f = mirror(recs, inv)
    text = f.read_text()
    f.write_text(text + "<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n")
    n = len(text.split("\n"))
    with pytest.raises(DbglogError, match=rf"logs/{inv}\.md:{n}: git conflict markers"):
        _sync(recs)
    sync.check_markers("a line\n=======\nno opening marker", "x.md")  # a lone ==== is markdown


def test_reindex_refuses_db_only_then_force_rebuilds_from_files(recs, inv):
    db_only = recs.new("only in the database").id
    mirror(recs, db_only).unlink()
    with recs.store.write(), pytest.raises(DbglogError, match="exist only in the database"):
        sync.reindex(recs.store, recs.ws)
    assert recs.store.exists(db_only)
    with recs.store.write():
        out = sync.reindex(recs.store, recs.ws, force=True)
    assert out == {"investigations": 1, "files": [f"logs/{inv}.md"], "runs_restored": 0}
    assert not recs.store.exists(db_only) and recs.store.load(inv).symptom == "rank 17 stalls"


def test_doctor_reports_missing_and_no_file(recs, inv):
    other = recs.new("second").id
    mirror(recs, other).unlink()
    problems = {(p["kind"], p["path"]) for p in sync.doctor(recs.store, recs.ws)}
    assert problems == {("missing", f"logs/{other}.md")}
    with recs.store.write():
        recs.store.drop_mirror(f"logs/{other}.md")
    problems = {(p["kind"], p["path"]) for p in sync.doctor(recs.store, recs.ws)}
    assert problems == {("no-file", f"logs/{other}.md")}


# --- git HEAD without a subprocess ---------------------------------------------------


def _gitdir(root, head, refs=None, packed=None):
    g = root / ".git"
    (g / "refs" / "heads").mkdir(parents=True)
    (g / "HEAD").write_text(head)
    for name, sha in (refs or {}).items():
        (g / name).write_text(sha + "\n")
    if packed:
        (g / "packed-refs").write_text(packed)
    return g


def test_git_head_reads_refs_packed_refs_detached_unborn_and_worktrees(tmp_path):
    a = tmp_path / "a"
    _gitdir(a, "ref: refs/heads/main\n", {"refs/heads/main": "1" * 40})
    (a / "sub").mkdir()
    assert sync.git_head(a / "sub") == f"refs/heads/main {'1' * 40}"  # found from a subdirectory
    b = tmp_path / "b"
    _gitdir(b, "ref: refs/heads/dev\n", packed=f"# pack-refs\n{'2' * 40} refs/heads/dev\n")
    assert sync.git_head(b) == f"refs/heads/dev {'2' * 40}"
    c = tmp_path / "c"
    _gitdir(c, "3" * 40 + "\n")
    assert sync.git_head(c) == "3" * 40
    d = tmp_path / "d"
    _gitdir(d, "ref: refs/heads/new\n")
    assert sync.git_head(d) == "refs/heads/new (unborn)"
    # a linked worktree: .git is a file naming its gitdir; the branch lives in the common dir
    wt_git = a / ".git" / "worktrees" / "w"
    wt_git.mkdir(parents=True)
    (wt_git / "HEAD").write_text("ref: refs/heads/main\n")
    (wt_git / "commondir").write_text("../..\n")
    w = tmp_path / "w"
    w.mkdir()
    (w / ".git").write_text(f"gitdir: {wt_git}\n")
    assert sync.git_head(w) == f"refs/heads/main {'1' * 40}"


def test_head_moved_compares_with_the_stored_head(recs, inv, monkeypatch):
    monkeypatch.setattr(sync, "git_head", lambda root: "refs/heads/main abc")
    assert sync.head_moved(recs.store, recs.ws) == (True, "refs/heads/main abc")
    with recs.store.write():
        recs.store.set_meta(sync.HEAD_KEY, "refs/heads/main abc")
    assert sync.head_moved(recs.store, recs.ws) == (False, "refs/heads/main abc")
    monkeypatch.setattr(sync, "git_head", lambda root: None)
    assert sync.head_moved(recs.store, recs.ws) == (False, None)  # outside git nothing moves


def test_an_attempt_written_below_the_last_section_is_kept_as_its_text_and_said_so(recs, inv):
    # appended at the end of the file it landed in the last free section (for an imported doc, "## Source headings",
    # which `show` hides) and no command said a word
    recs.add_attempt(inv, title="Raised the NCCL timeout", outcome="failed")
    path = mirror(recs, inv)
    path.write_text(path.read_text() + "\n## Notes by hand\n\n### Attempt 2: pinned NCCL 2.18\n**Outcome:** failed\n"
                    "\n```\n### Attempt 9: a heading inside a fence is text\n```\n")
    _bump_mtime(path)
    rep = _sync(recs)
    assert [m.split(": ", 1)[1] for m in rep.misplaced] == [
        "'### Attempt 2: pinned NCCL 2.18' is under '## Notes by hand', not '## Attempts', so it was kept as that "
        "section's text; move it under '## Attempts' to record it as an attempt"]
    assert rep.misplaced[0].startswith(f"logs/{inv}.md:")
    assert [a.title for a in recs.store.load(inv).attempts] == ["Raised the NCCL timeout"]
