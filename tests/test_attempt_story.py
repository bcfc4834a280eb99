"""Issue 18, "the full story in every attempt": `run --attempt` records the command with its --env
overrides and --unsets (secrets redacted) and the working tree it ran on (commit, a short stat of
the uncommitted diff with the files named and a digest; the full diff, redacted and capped, in the
run folder). Four attempts with the same command read differently."""

import subprocess
import sys

from dbglog.kb import story
from dbglog.kb.records import Records
from dbglog.util.workspace import Workspace

TOKEN = "hf_" + "Zq9" * 10


def git(cwd, *args):
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=cwd, check=True,
                   capture_output=True)


def attempts(workdir):
    recs = Records(Workspace(workdir / ".dbglog"))
    try:
        inv = recs.store.load(recs.resolve(None))
        return inv.attempts
    finally:
        recs.close()


def test_four_attempts_of_one_command_read_differently(dbg, workdir):
    git(workdir, "init", "-q")
    (workdir / "serve.py").write_text("import os, sys\nsys.exit(os.environ.get('X') == '1')\n")
    git(workdir, "add", "serve.py")
    git(workdir, "commit", "-qm", "init")
    assert dbg("new", "serve fails", "--no-env")[0] == 0
    git(workdir, "add", "logs")
    git(workdir, "commit", "-qm", "logs")  # committed logs/ change with every attempt: not the code under test
    cmd = ["--", sys.executable, "serve.py"]
    assert dbg("run", "-q", "--attempt", "as is", *cmd)[0] == 0
    assert dbg("run", "-q", "--attempt", "env", "--env", "X=1", "--env", f"HF_TOKEN={TOKEN}",
               "--unset", "CUDA_VISIBLE_DEVICES", *cmd)[0] == 1
    with open(workdir / "serve.py", "a") as f:
        f.write(f"# HF_TOKEN={TOKEN}\n")
    assert dbg("run", "-q", "--attempt", "diff 1", *cmd)[0] == 0
    with open(workdir / "serve.py", "a") as f:
        f.write("# another line\n")  # the same file again: the stat and the digest change
    assert dbg("run", "-q", "--attempt", "diff 2", *cmd)[0] == 0

    a = attempts(workdir)
    dids = [x.did for x in a]
    assert len(set(dids)) == 4, dids
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=workdir, capture_output=True, text=True).stdout[:12]
    assert all(f"working tree: {head}" in d for d in dids)
    assert "no uncommitted changes" in dids[0] and "logs" not in dids[0].split("\n", 1)[1]
    assert dids[1].startswith("env -u CUDA_VISIBLE_DEVICES X=1 HF_TOKEN=<redacted> ")
    assert "1 file changed, 1 insertion(+) (serve.py; diff " in dids[2]
    assert "1 file changed, 2 insertions(+) (serve.py; diff " in dids[3]
    for d in dids:
        assert TOKEN not in d
    # the full diff is in the run folder, redacted
    saved = workdir / dids[3].split("saved in ")[1].split(")")[0]
    text = saved.read_text()
    assert "+# another line" in text and TOKEN not in text and "<redacted>" in text
    mirror = next((workdir / "logs").glob("*.md")).read_text()
    assert TOKEN not in mirror and "env -u CUDA_VISIBLE_DEVICES X=1" in mirror


def test_the_diff_kept_is_capped(tmp_path, monkeypatch):
    git(tmp_path, "init", "-q")
    (tmp_path / "big.txt").write_text("x\n")
    git(tmp_path, "add", "big.txt")
    git(tmp_path, "commit", "-qm", "init")
    (tmp_path / "big.txt").write_text("y" * 50 + "\n" + "\n".join(f"line {i}" for i in range(5000)))
    monkeypatch.setattr(story, "DIFF_CAP", 4096)
    st = story.worktree_state(tmp_path, tmp_path / "run")
    text = (tmp_path / "run" / "worktree.diff").read_text()
    assert len(text) < 4096 + 200 and text.endswith("[dbglog: the diff was cut at 4096 bytes]\n")
    assert st["files"] == ["big.txt"] and st["diff_sha"]


def test_outside_git_only_the_command(tmp_path):
    assert story.did_text(["python3", "x.py", "--hf-token", "abc123secret"], {"A": "b c", "B": None},
                          tmp_path) == "env -u B A='b c' python3 x.py --hf-token '<redacted>'"


def test_a_repository_without_commits_is_said_in_whole_words():
    state = {"commit": None, "branch": "master", "shortstat": ""}
    assert story.worktree_text(state).startswith("working tree: no commit yet (master), no uncommitted changes")
    sha = {"commit": "0123456789abcdef0123", "branch": "", "shortstat": ""}
    assert story.worktree_text(sha).startswith("working tree: 0123456789ab, no uncommitted changes")
