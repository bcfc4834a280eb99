"""Sync between logs/ and the database: outside edits, conflicts, moves, prune, reindex, doctor, git."""

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli_inproc


@pytest.fixture
def cli():
    # In-process: nothing here is about the process boundary (git still runs the merge driver as
    # its own process), and this file makes ~100 dbglog calls.
    return run_cli_inproc


def new(cli, cwd, title):
    return json.loads(cli(cwd, "new", title, "--no-env", "--json", check=0).stdout)["id"]


def mirror_path(ws, inv_id):
    return ws / "logs" / f"{inv_id}.md"


def test_hand_edit_is_imported_by_the_next_command(ws, cli):
    i = new(cli, ws, "NCCL timeout on rank 17")
    f = mirror_path(ws, i)
    f.write_text(f.read_text().replace("**Status:** Open", "**Status:** Open\n**Symptom:** watchdog fired"))
    inv = json.loads(cli(ws, "show", i, "--json", check=0).stdout)
    assert inv["symptom"] == "watchdog fired"


def test_conflict_stops_keeps_both_and_resolve_clears(ws, cli):
    import sqlite3

    i = new(cli, ws, "Illegal address in MoE scatter")
    f = mirror_path(ws, i)
    con = sqlite3.connect(ws / ".dbglog" / "dbglog.db")
    con.execute("UPDATE investigations SET rev = rev + 1, symptom = 'db side' WHERE id = ?", (i,))
    con.commit()
    con.close()
    f.write_text(f.read_text().replace("**Status:** Open", "**Status:** Open\n**Symptom:** file side"))
    p = cli(ws, "list")
    assert p.returncode == 2 and f"logs/{i}.md" in p.stderr and "conflict" in p.stderr
    copy = ws / "logs" / f"{i}.dbglog-conflict.md"
    assert "db side" in copy.read_text() and "file side" in f.read_text()
    d = cli(ws, "doctor", "--json")
    assert d.returncode == 1
    assert "conflict-copy" in {p["kind"] for p in json.loads(d.stdout)["problems"]}
    out = json.loads(cli(ws, "sync", "--resolve", f"logs/{i}.md", "--json", check=0).stdout)
    assert out["resolved"] and not copy.exists() and (ws / out["resolved"][0]).exists()
    assert json.loads(cli(ws, "show", i, "--json", check=0).stdout)["symptom"] == "file side"
    cli(ws, "doctor", check=0)


def test_move_detection_and_missing_and_prune(ws, cli):
    a = new(cli, ws, "Profiler deadlock with CUPTI")
    b = new(cli, ws, "Triton autotune hang")
    os.rename(mirror_path(ws, a), ws / "logs" / "cupti-deadlock.md")
    out = json.loads(cli(ws, "sync", "--json", check=0).stdout)
    assert out["moved"] == [[f"logs/{a}.md", "logs/cupti-deadlock.md"]] and not out["missing"]
    cli(ws, "attempt", "add", "x", "-i", a, "--did", "y", check=0)  # written at the new path
    assert "### Attempt 1: x" in (ws / "logs" / "cupti-deadlock.md").read_text()
    mirror_path(ws, b).unlink()
    p = cli(ws, "list", "--json", check=0)
    assert "was deleted" in p.stderr and b in p.stdout  # reported, not silently deleted
    assert json.loads(cli(ws, "sync", "--json", check=0).stdout)["missing"] == [f"logs/{b}.md"]
    assert cli(ws, "doctor").returncode == 1
    out = json.loads(cli(ws, "sync", "--prune", "--json", check=0).stdout)
    assert out["pruned"] == [f"logs/{b}.md"]
    assert b not in cli(ws, "list", "--json", check=0).stdout
    cli(ws, "doctor", check=0)


def test_reindex_renders_byte_identical(ws, cli, tmp_path):
    golden = Path(__file__).parent / "golden"
    imported = json.loads(cli(ws, "import", *sorted(golden.glob("*.md")), "--json", check=0).stdout)
    n = len(imported["investigations"]) + 1
    i = new(cli, ws, "Hang in cudaStreamSynchronize")
    cli(ws, "attempt", "add", "CUDA_LAUNCH_BLOCKING", "-i", i, "--did", "CUDA_LAUNCH_BLOCKING=1", "--result",
        "Still hangs", check=0)
    cli(ws, "diff", "add", "Stream", "default", "side", "-i", i, check=0)
    before = {p.name: p.read_bytes() for p in (ws / "logs").glob("*.md")}
    p = cli(ws, "reindex", "--json", check=0)
    assert json.loads(p.stdout)["investigations"] == n
    (ws / ".dbglog" / "dbglog.db").write_bytes(b"garbage" * 100)
    for s in ("-wal", "-shm"):
        Path(str(ws / ".dbglog" / "dbglog.db") + s).unlink(missing_ok=True)
    assert cli(ws, "list").returncode == 2
    cli(ws, "reindex", "--force", check=0)
    cli(ws, "export", check=0)
    after = {p.name: p.read_bytes() for p in (ws / "logs").glob("*.md")}
    assert after == before
    assert len(json.loads(cli(ws, "list", "--json", check=0).stdout)) == n


def test_reindex_refuses_to_drop_db_only_data(ws, cli):
    i = new(cli, ws, "Kernel hang")
    mirror_path(ws, i).unlink()
    p = cli(ws, "reindex")
    assert p.returncode == 2 and "--force" in p.stderr
    cli(ws, "reindex", "--force", check=0)
    assert json.loads(cli(ws, "list", "--json", check=0).stdout) == []


def git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env=dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x", GIT_COMMITTER_NAME="t",
                            GIT_COMMITTER_EMAIL="t@x"))


def test_git_head_move_rehashes_same_size_same_mtime_edit(tmp_path, cli):
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    i = new(cli, repo, "ncu hang")
    git(repo, "add", "logs")
    git(repo, "commit", "-qm", "x")
    cli(repo, "list", check=0)  # remembers the new HEAD
    f = mirror_path(repo, i)
    st = f.stat()
    text = f.read_text().replace("# ncu hang", "# ncu HANG")  # same size
    f.write_text(text)
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert f.stat().st_size == st.st_size
    assert json.loads(cli(repo, "show", i, "--json", check=0).stdout)["title"] == "ncu hang"  # stat: same
    git(repo, "commit", "-qam", "y")  # HEAD moved: every file is hashed
    assert json.loads(cli(repo, "show", i, "--json", check=0).stdout)["title"] == "ncu HANG"


def test_two_clones_merge_to_the_union(tmp_path, cli):
    a, b, shared = _two_clones_with_shared(tmp_path, cli, first="sync")  # sync alone works in a fresh clone
    assert json.loads(cli(b, "show", shared, "--json", check=0).stdout)["attempts"][0]["result"] == "Hangs"
    # Divergent work: A adds an attempt to the shared bug and a new bug; B adds two new bugs.
    cli(a, "attempt", "add", "exclude node 3", "-i", shared, "--did", "7 nodes", "--result", "Works", check=0)
    a_new = new(cli, a, "Illegal memory access in MoE")
    cli(a, "attempt", "add", "sanitizer", "-i", a_new, "--did", "compute-sanitizer", check=0)
    b_new1 = new(cli, b, "ncu hangs on TMA kernels")
    cli(b, "attempt", "add", "app replay", "-i", b_new1, "--did", "--replay-mode application", check=0)
    cli(b, "attempt", "add", "fewer sections", "-i", b_new1, "--did", "--section SOL", check=0)
    b_new2 = new(cli, b, "ncu hangs on TMA kernels")  # same title: ids still differ
    for clone, msg in ((a, "a"), (b, "b")):
        git(clone, "add", "-A")
        git(clone, "commit", "-qm", msg)
    git(a, "push", "-q", "origin", "HEAD:main")
    git(b, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    git(b, "push", "-q", "origin", "HEAD:main")
    git(a, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    expected = {shared: 2, a_new: 1, b_new1: 2, b_new2: 0}
    assert len(set(expected)) == 4
    for clone in (a, b):
        cli(clone, "sync", check=0)
        rows = json.loads(cli(clone, "list", "--json", check=0).stdout)
        assert {r["id"]: r["attempts"] for r in rows} == expected
        cli(clone, "doctor", check=0)
    assert not (a / ".dbglog" / "dbglog.db").exists() or "dbglog.db" not in subprocess.run(
        ["git", "ls-files"], cwd=a, capture_output=True, text=True).stdout


def _git_env():
    from conftest import REPO

    return dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x", GIT_COMMITTER_NAME="t",
                GIT_COMMITTER_EMAIL="t@x", PYTHONPATH=str(REPO))


def _two_clones_with_shared(tmp_path, cli, first="init"):
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    a, b = tmp_path / "a", tmp_path / "b"
    git(tmp_path, "clone", "-q", str(remote), str(a))
    shared = new(cli, a, "NCCL watchdog timeout in FSDP")
    cli(a, "attempt", "add", "NCCL_DEBUG=INFO", "--did", "NCCL_DEBUG=INFO", "--result", "Hangs", check=0)
    git(a, "add", "-A")
    git(a, "commit", "-qm", "shared")
    git(a, "push", "-q", "origin", "HEAD:main")
    git(tmp_path, "clone", "-q", "-b", "main", str(remote), str(b))
    # A fresh clone: init sets up this clone's merge driver and takes in logs/ (sync does the latter).
    cli(b, first, check=0)
    return a, b, shared


def test_two_clones_adding_attempts_to_the_same_investigation_merge_cleanly(tmp_path, cli):
    a, b, shared = _two_clones_with_shared(tmp_path, cli)
    cli(a, "attempt", "add", "exclude node 3", "-i", shared, "--did", "7 nodes", "--result", "Works", check=0)
    cli(a, "next", "add", "Replace the n3 cable", "-i", shared, check=0)
    cli(b, "attempt", "add", "IB timeout 23", "-i", shared, "--did", "NCCL_IB_TIMEOUT=23", "--result", "Hangs",
        check=0)
    cli(b, "attempt", "add", "ring algo", "-i", shared, "--did", "NCCL_ALGO=Ring", "--result", "Hangs", check=0)
    cli(b, "next", "add", "Try NCCL_ALGO=Tree", "-i", shared, check=0)
    cli(b, "next", "done", "Tree", "-i", shared, "--attempt", "3", check=0)
    cli(b, "diff", "add", "Nodes", "7", "8", "-i", shared, check=0)
    for clone, msg in ((a, "a"), (b, "b")):
        git(clone, "add", "-A")
        git(clone, "commit", "-qm", msg)
    git(a, "push", "-q", "origin", "HEAD:main")
    pull = subprocess.run(["git", "pull", "--no-rebase", "--no-edit", "origin", "main"], cwd=b,
                          capture_output=True, text=True, env=_git_env())
    assert pull.returncode == 0, pull.stdout + pull.stderr  # no conflict markers to resolve by hand
    git(b, "push", "-q", "origin", "HEAD:main")
    git(a, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    for clone in (a, b):
        cli(clone, "sync", check=0)
        inv = json.loads(cli(clone, "show", shared, "--json", check=0).stdout)
        titles = {x["number"]: x["title"] for x in inv["attempts"]}
        # B merged A's branch in: B's own attempts keep 2 and 3, A's new attempt 2 becomes 4.
        assert titles == {1: "NCCL_DEBUG=INFO", 2: "IB timeout 23", 3: "ring algo", 4: "exclude node 3"}
        steps = {s["text"]: s for s in inv["next_steps"]}
        assert set(steps) == {"Replace the n3 cable", "Try NCCL_ALGO=Tree"}
        assert steps["Try NCCL_ALGO=Tree"]["attempt"] == 3 and steps["Try NCCL_ALGO=Tree"]["status"] == "done"
        assert [d["factor"] for d in inv["differences"]] == ["Nodes"]
        text = (clone / inv["path"]).read_text()
        assert "<<<<<<<" not in text


def test_same_field_changed_on_both_sides_is_a_real_conflict(tmp_path, cli):
    a, b, shared = _two_clones_with_shared(tmp_path, cli)
    cli(a, "attempt", "edit", "1", "-i", shared, "--result", "Hangs at step 448812", check=0)
    cli(b, "attempt", "edit", "1", "-i", shared, "--result", "Hangs only on node 3", check=0)
    for clone, msg in ((a, "a"), (b, "b")):
        git(clone, "commit", "-qam", msg)
    git(a, "push", "-q", "origin", "HEAD:main")
    pull = subprocess.run(["git", "pull", "--no-rebase", "--no-edit", "origin", "main"], cwd=b,
                          capture_output=True, text=True, env=_git_env())
    assert pull.returncode != 0  # git stops: both sides changed the same result
    r = cli(b, "list")
    assert r.returncode == 2 and "conflict markers" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_foreign_markdown_in_logs_is_left_alone(tmp_path, cli):
    ws = tmp_path / "w"
    (ws / "logs").mkdir(parents=True)
    readme = ws / "logs" / "README.md"
    readme.write_text("# Logs\n\nTraining logs go here.\n")
    before = readme.read_bytes()
    cli(ws, "init", check=0)
    i = new(cli, ws, "real investigation")
    assert [r["id"] for r in json.loads(cli(ws, "list", "--json", check=0).stdout)] == [i]
    r = cli(ws, "sync", "--json", check=0)
    assert json.loads(r.stdout)["ignored"] == ["logs/README.md"]
    assert cli(ws, "doctor", check=0).returncode == 0
    cli(ws, "reindex", "--force", check=0)
    assert [r["id"] for r in json.loads(cli(ws, "list", "--json", check=0).stdout)] == [i]
    assert readme.read_bytes() == before
    # A dbglog file whose front matter a hand edit broke is still an error, not ignored.
    mine = next(p for p in (ws / "logs").glob("2*.md"))
    mine.write_text(mine.read_text().replace("---\nid:", "--\nid:", 1))
    r = cli(ws, "list")
    assert r.returncode == 2 and mine.name in r.stderr


def test_reimport_in_a_fresh_clone_updates_instead_of_duplicating(tmp_path, cli):
    golden = sorted((Path(__file__).parent / "golden").glob("01_*.md"))[0]
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    a, b = tmp_path / "a", tmp_path / "b"
    git(tmp_path, "clone", "-q", str(remote), str(a))
    (a / "DEBUG.md").write_text(golden.read_text())
    first = json.loads(cli(a, "import", "DEBUG.md", "--json", check=0).stdout)["investigations"]
    assert first and {r["action"] for r in first} == {"create"}
    git(a, "add", "-A")
    git(a, "commit", "-qm", "imported")
    git(a, "push", "-q", "origin", "HEAD:main")
    git(tmp_path, "clone", "-q", "-b", "main", str(remote), str(b))
    cli(b, "init", check=0)
    again = json.loads(cli(b, "import", "DEBUG.md", "--json", check=0).stdout)["investigations"]
    assert {r["action"] for r in again} == {"unchanged"}
    assert sorted(r["id"] for r in again) == sorted(r["id"] for r in first)
    assert len(json.loads(cli(b, "list", "--json", check=0).stdout)) == len(first)


def test_a_same_size_hand_edit_with_its_mtime_put_back_is_not_lost_by_the_next_write(ws, cli):
    """An adversarial probe: an edit of the same size whose mtime was put back passed every stat pass, and the next
    write replaced the file, the edit gone (doctor said healthy). The file a write replaces is read first."""
    i = new(cli, ws, "mtime")
    cli(ws, "attempt", "add", "one", "--result", "hangs at step 2", "-o", "failed", check=0)
    f = mirror_path(ws, i)
    st = f.stat()
    f.write_text(f.read_text().replace("step 2", "step 7"))
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert f.stat().st_size == st.st_size and f.stat().st_mtime_ns == st.st_mtime_ns
    cli(ws, "attempt", "add", "two", "-o", "failed", check=0)
    assert "hangs at step 7" in f.read_text() and "hangs at step 2" not in f.read_text()
    shown = json.loads(cli(ws, "show", i, "--json", check=0).stdout)
    assert [a["result"] for a in shown["attempts"]][0] == "hangs at step 7"


def test_an_older_copy_of_a_mirror_file_checked_out_over_it_is_refused_not_taken_in(tmp_path, cli):
    """An adversarial probe: `git checkout OLD -- logs/` (no HEAD move) put back a file without the attempts
    recorded since, and the next command took it in as a hand edit: the uncommitted attempt was gone for good, with
    'Up to date' and doctor 'Healthy'. It is refused in one line; `dbglog export` writes the database's version
    back; a checkout that moves HEAD (another branch) is still the branch's file."""
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    i = new(cli, repo, "nccl hang")
    cli(repo, "attempt", "add", "A1 first", "-d", "x", "-r", "y", "-o", "failed", check=0)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "c1")
    f = mirror_path(repo, i)
    old = f.read_text().replace("updated: 2", "updated: 1", 1)  # (dated before: an older copy, as git would give)
    cli(repo, "attempt", "add", "A2 second", "-d", "x", "-r", "y", "-o", "worked", check=0)
    f.write_text(old)
    p = cli(repo, "attempt", "list")
    assert p.returncode == 2 and "older copy" in p.stderr and "dbglog export" in p.stderr, p.stderr
    cli(repo, "export", check=0)
    titles = [a["title"] for a in json.loads(cli(repo, "show", i, "--json", check=0).stdout)["attempts"]]
    assert titles == ["A1 first", "A2 second"] and "A2 second" in f.read_text()
