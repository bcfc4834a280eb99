"""Issue 17 points 5 and 6: a clean `git status` after init, a merge driver in every clone that
survives a rebuilt venv, and no silently dropped attempts when git could not merge a log."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, run_cli_inproc
from dbglog.kb import merge
from dbglog.util.workspace import OLD_GITIGNORE

MINIMAL_PATH = "/usr/local/bin:/usr/bin:/bin"


def git_env(**extra):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@x", PYTHONPATH=str(REPO))
    env.update(extra)
    return env


def git(cwd, *args, check=True, **env):
    p = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=git_env(**env))
    if check:
        assert p.returncode == 0, p.stdout + p.stderr
    return p


def cli(cwd, *args, code=0):
    # In-process: the process boundaries under test here are git's (it runs the merge driver itself).
    p = run_cli_inproc(cwd, *args)
    if code is not None:
        assert p.returncode == code, (args, p.returncode, p.stdout, p.stderr)
    return p


def new(cwd, title):
    return json.loads(cli(cwd, "new", title, "--no-env", "--json").stdout)["id"]


def driver_of(clone) -> str:
    return git(clone, "config", "merge.dbglog.driver", check=False).stdout.strip()


def test_init_leaves_git_status_clean(tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    cli(repo, "init")
    assert git(repo, "status", "--porcelain", "--untracked-files=all").stdout == ""
    new(repo, "first bug")
    cli(repo, "signature", "add", "my.sig", "boom")
    status = git(repo, "status", "--porcelain", "--untracked-files=all").stdout.split("\n")
    # the log and the team's config are offered for commit; the database, runs and caches are not
    assert sorted(s for s in status if s) == sorted(["?? .dbglog/config.toml",
                                                     f"?? logs/{os.listdir(repo / 'logs')[0]}"])


def _remote_with_old_style_repo(tmp_path):
    """A shared repo made with an older dbglog: `.dbglog/.gitignore` committed, one investigation."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    a = tmp_path / "a"
    git(tmp_path, "clone", "-q", str(remote), str(a))
    shared = new(a, "NCCL watchdog timeout")
    cli(a, "attempt", "add", "debug", "--did", "NCCL_DEBUG=INFO", "--result", "Hangs", "-o", "failed")
    (a / ".dbglog" / ".gitignore").write_text(OLD_GITIGNORE)
    git(a, "add", "-f", ".dbglog/.gitignore")
    git(a, "add", "logs")
    git(a, "commit", "-qm", "shared")
    git(a, "push", "-q", "origin", "HEAD:main")
    return remote, a, shared


def test_first_write_in_a_fresh_clone_registers_the_driver_whatever_files_it_has(tmp_path):
    remote, a, shared = _remote_with_old_style_repo(tmp_path)
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", "-b", "main", str(remote), str(b))
    assert (b / ".dbglog" / ".gitignore").exists() and driver_of(b) == ""
    cli(b, "attempt", "add", "ring", "-i", shared, "--did", "NCCL_ALGO=Ring", "-r", "Hangs", "-o", "failed")
    assert merge.DRIVER_MARK in driver_of(b)
    assert "/logs/*.md merge=dbglog" in (b / ".git" / "info" / "attributes").read_text()
    assert (b / ".dbglog" / ".gitignore").read_text() == OLD_GITIGNORE  # committed: left alone
    assert git(b, "status", "--porcelain").stdout.split() == ["M", f"logs/{shared}.md"]


def _diverge(tmp_path, *, register):
    """Two clones that both add an attempt to the same investigation; B's merge driver registered
    by ``register(b)``; A pushed. Returns (a, b, shared)."""
    remote, a, shared = _remote_with_old_style_repo(tmp_path)
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", "-b", "main", str(remote), str(b))
    cli(b, "sync")
    cli(a, "attempt", "add", "exclude node 3", "-i", shared, "--did", "7 nodes", "-r", "Works", "-o", "worked")
    cli(b, "attempt", "add", "ring algo", "-i", shared, "--did", "NCCL_ALGO=Ring", "-r", "Hangs", "-o", "failed")
    git(a, "commit", "-qam", "a")
    git(a, "push", "-q", "origin", "HEAD:main")
    git(b, "commit", "-qam", "b")
    register(b)  # after B's last dbglog command (which would register this dbglog's driver)
    return a, b, shared


def titles(clone, shared):
    return [x["title"] for x in json.loads(cli(clone, "show", shared, "--json").stdout)["attempts"]]


def test_driver_survives_a_rebuilt_venv_through_path(tmp_path):
    """The interpreter that registered the driver is gone; `dbglog` on PATH merges instead."""
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "dbglog").write_text(f"#!/bin/sh\nexec {sys.executable} -m dbglog \"$@\"\n")
    (shim / "dbglog").chmod(0o755)
    a, b, shared = _diverge(tmp_path, register=lambda b: merge.configure_git(
        b, b / "logs", b / ".dbglog", python=str(tmp_path / "gone-venv" / "bin" / "python")))
    pull = git(b, "pull", "--no-rebase", "--no-edit", "origin", "main", check=False,
               PATH=f"{shim}:{MINIMAL_PATH}")
    assert pull.returncode == 0, pull.stdout + pull.stderr
    assert titles(b, shared) == ["debug", "ring algo", "exclude node 3"]


def test_driver_that_cannot_run_leaves_markers_and_dbglog_refuses(tmp_path):
    """No interpreter and no dbglog on PATH: git's text merge, WITH markers, never ours alone."""
    a, b, shared = _diverge(tmp_path, register=lambda b: merge.configure_git(
        b, b / "logs", b / ".dbglog", python=str(tmp_path / "gone-venv" / "bin" / "python")))
    pull = git(b, "pull", "--no-rebase", "--no-edit", "origin", "main", check=False, PATH=MINIMAL_PATH)
    assert pull.returncode != 0
    assert "merge driver cannot run" in pull.stderr + pull.stdout
    path = b / "logs" / f"{shared}.md"
    assert "<<<<<<< " in path.read_text()
    r = cli(b, "list", code=2)
    assert len(r.stderr.strip().splitlines()) == 1 and "conflict markers" in r.stderr and "git add" in r.stderr
    d = cli(b, "doctor", "--json", code=1)
    assert {p["kind"] for p in json.loads(d.stdout)["problems"]} >= {"unmerged"}
    # The way out the message gives: redo the merge with the (now re-registered) driver.
    cli(b, "init", code=2)  # registers this dbglog, still refuses while unmerged
    assert str(sys.executable) in driver_of(b)
    git(b, "checkout", "-m", "--", f"logs/{shared}.md")
    assert "<<<<<<< " not in path.read_text()
    git(b, "add", f"logs/{shared}.md")
    assert titles(b, shared) == ["debug", "ring algo", "exclude node 3"]
    cli(b, "doctor")


def test_unmerged_log_without_markers_is_refused(tmp_path):
    """An old-style registration (an absolute interpreter path that no longer exists): git reports
    a conflict but leaves only our side, no markers. dbglog must not take that as the truth."""
    def old_style(b):
        git(b, "config", "merge.dbglog.driver", f"{tmp_path}/gone/bin/python -m dbglog merge-driver %O %A %B %P")
        git(b, "config", "merge.dbglog.name", "dbglog")
        (b / ".git" / "info" / "attributes").write_text("/logs/*.md merge=dbglog\n")

    a, b, shared = _diverge(tmp_path, register=old_style)
    pull = git(b, "pull", "--no-rebase", "--no-edit", "origin", "main", check=False, PATH=MINIMAL_PATH)
    assert pull.returncode != 0
    path = b / "logs" / f"{shared}.md"
    assert "<<<<<<< " not in path.read_text()  # only ours: the trap
    before = path.read_bytes()
    r = cli(b, "attempt", "add", "more", "-i", shared, "-r", "x", code=2)
    assert r.stderr.strip() == (
        f"dbglog: logs/{shared}.md is unmerged in git: redo its merge with `git checkout -m -- logs/{shared}.md` "
        f"(the dbglog merge driver keeps both sides' attempts) or merge it by hand, then `git add logs/{shared}.md` "
        "and retry")
    assert path.read_bytes() == before
    d = cli(b, "doctor", code=1)
    assert "unmerged" in d.stdout
    # the driver was re-registered by that first command; redoing the merge keeps both sides
    assert merge.DRIVER_MARK in driver_of(b)
    git(b, "checkout", "-m", "--", f"logs/{shared}.md")
    git(b, "add", f"logs/{shared}.md")
    assert titles(b, shared) == ["debug", "ring algo", "exclude node 3"]


@pytest.mark.parametrize("state", [True, False])
def test_is_configured_is_read_from_files(tmp_path, state):
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "logs").mkdir()
    assert merge.is_configured(repo, repo / "logs", repo / ".dbglog") is False
    if state:
        assert merge.configure_git(repo, repo / "logs", repo / ".dbglog")
    assert merge.is_configured(repo, repo / "logs", repo / ".dbglog") is state
    assert merge.is_configured(tmp_path / "elsewhere", Path("/x/logs")) is None


def test_a_fresh_clone_without_dbglog_dir_works_from_the_first_command(tmp_path):
    """`.dbglog/` is never committed now: a clone has only logs/, and any command sets it up."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    a = tmp_path / "a"
    git(tmp_path, "clone", "-q", str(remote), str(a))
    shared = new(a, "NCCL watchdog timeout")
    git(a, "add", "-A")
    assert git(a, "status", "--porcelain").stdout.split() == ["A", f"logs/{shared}.md"]
    git(a, "commit", "-qm", "shared")
    git(a, "push", "-q", "origin", "HEAD:main")
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", "-b", "main", str(remote), str(b))
    assert not (b / ".dbglog").exists()
    rows = json.loads(cli(b, "list", "--json").stdout)
    assert [r["id"] for r in rows] == [shared]
    assert merge.DRIVER_MARK in driver_of(b)
    assert git(b, "status", "--porcelain", "--untracked-files=all").stdout == ""
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "run `dbglog init`" in cli(empty, "list", code=2).stderr  # nothing to take in: still refused


def test_a_file_deleted_on_one_side_and_changed_on_the_other_gets_advice_that_works(tmp_path):
    """An adversarial probe: for a modify/delete conflict every command advised `git checkout -m`, which fails
    there ("does not have all necessary versions"). The advice is to keep it (`git add`) or drop it (`git rm`),
    and `git add` does resolve it."""
    remote, a, shared = _remote_with_old_style_repo(tmp_path)
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", "-b", "main", str(remote), str(b))
    cli(b, "sync")
    git(a, "rm", "-q", f"logs/{shared}.md")
    git(a, "commit", "-qm", "drop it")
    git(a, "push", "-q", "origin", "HEAD:main")
    cli(b, "attempt", "add", "ring algo", "-i", shared, "--did", "NCCL_ALGO=Ring", "-r", "Hangs", "-o", "failed")
    git(b, "commit", "-qam", "b")
    assert git(b, "pull", "--no-rebase", "--no-edit", "origin", "main", check=False).returncode != 0
    r = cli(b, "list", code=2)
    assert f"`git add logs/{shared}.md`" in r.stderr and f"`git rm logs/{shared}.md`" in r.stderr, r.stderr
    assert "checkout -m" not in r.stderr
    assert "git rm" in cli(b, "doctor", code=1).stdout
    git(b, "add", f"logs/{shared}.md")
    assert "ring algo" in titles(b, shared)
