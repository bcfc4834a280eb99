"""`dbglog bisect git` on real git repositories built by the tests (git fast-import).

The repro (CHECK, outside the repo) reads version.txt (or looks for bug.txt) in the worktree
it runs in, logs the version it saw to a count file (so tests count repro runs exactly), and
behaves as the JSON spec next to it says: culprit, skipped (exit 125) versions, a different
crash, hangs, flaky versions, sleeps.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import assert_none_alive, cli_env, run_cli_inproc
from conftest import run_cli as run_cli_process
from dbglog.bisect.history import make_repo

CHECK = r"""
import json, os, sys, time
d = os.environ.get("DBGLOG_TEST_PIDS")
if d:
    open(os.path.join(d, "%d.pid" % os.getpid()), "w").write(str(os.getpid()))
spec = json.load(open(sys.argv[2]))
v = int(open("version.txt").read()) if os.path.exists("version.txt") else -1
with open(sys.argv[1], "a") as f:
    f.write("%d\n" % v)
time.sleep(spec.get("sleep", 0))
if v in spec.get("skip", []):
    sys.exit(125)
if v in spec.get("other", []):
    raise KeyError("a different crash")
if v in spec.get("flaky", []):
    n = len([1 for line in open(sys.argv[1]) if line.strip() == str(v)])
    if n % 2:
        raise ValueError("the bug")
    sys.exit(0)
if spec.get("good_fails_differently") and v == 0:
    raise KeyError("unrelated breakage at the good end")
bad = spec.get("fail_all") or os.path.exists("bug.txt") or (spec.get("culprit") is not None and v >= spec["culprit"])
if bad and not spec.get("pass_all"):
    if spec.get("hang"):
        time.sleep(60)
    raise ValueError("the bug")
"""


class Repro:
    def __init__(self, tmp: Path, **spec):
        self.dir = tmp / "repro"
        self.dir.mkdir(exist_ok=True)
        (self.dir / "check.py").write_text(CHECK)
        self.log = self.dir / "count.log"
        self.spec_path = self.dir / "spec.json"
        self.set(**spec)

    def set(self, **spec):
        self.spec_path.write_text(json.dumps(spec))

    @property
    def cmd(self):
        return [sys.executable, str(self.dir / "check.py"), str(self.log), str(self.spec_path)]

    def versions(self) -> list[int]:
        return [int(x) for x in self.log.read_text().split()] if self.log.exists() else []


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                          env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"}).stdout


def snapshot(repo: Path) -> tuple:
    """Everything of the user's checkout that a bisection must not change."""
    idx = hashlib.sha256((repo / ".git" / "index").read_bytes()).hexdigest()
    files = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(repo.iterdir()) if p.is_file()}
    return (idx, git(repo, "status", "--porcelain", "--untracked-files=all"), git(repo, "rev-parse", "HEAD"),
            git(repo, "symbolic-ref", "-q", "HEAD"), git(repo, "stash", "list"), files)


def linear_repo(tmp: Path, n: int, name="repo") -> tuple[Path, list[str]]:
    repo = tmp / name
    shas = make_repo(repo, n, lambda i: {"version.txt": f"{i}\n"})
    init_ws(repo)
    return repo, shas


def run_cli(*args, cwd, env=None):
    """Bisections and the demo run as real processes; the record commands around them in-process (faster)."""
    if args[0] == "demo" or args[:2] in (("bisect", "git"), ("bisect", "resume")):
        return run_cli_process(*args, cwd=cwd, env=env)
    return run_cli_inproc(cwd, *args, env=env)


def init_ws(repo: Path) -> None:
    p = run_cli("init", cwd=repo)
    assert p.returncode == 0, p.stderr


def bisect(repo, repro, *args, env=None):
    p = run_cli("bisect", "git", "--grace", "0.5", "--json", *args, "--", *repro.cmd, cwd=repo, env=env)
    data = json.loads(p.stdout) if p.stdout.strip().startswith("{") else None
    return p, data


def no_worktrees_left(repo: Path) -> None:
    wts = [ln for ln in git(repo, "worktree", "list", "--porcelain").splitlines() if ln.startswith("worktree ")]
    assert wts == [f"worktree {repo}"], wts
    root = repo / ".dbglog" / "bisect"
    assert not root.exists() or not any(root.iterdir()), list(root.iterdir())


def dirty(repo: Path) -> None:
    """A user mid-work: a stash, a staged change, an unstaged change, an untracked file."""
    (repo / "version.txt").write_text("stashed\n")
    git(repo, "stash", "-q")
    (repo / "notes.txt").write_text("untracked\n")
    (repo / "version.txt").write_text("staged\n")
    git(repo, "add", "version.txt")
    (repo / "version.txt").write_text("unstaged edit\n")


# --- the tests -------------------------------------------------------------------------


def test_linear_1024_finds_culprit_within_log2_plus_2_runs_and_leaves_checkout_alone(tmp_path):
    repo, shas = linear_repo(tmp_path, 1024)
    dirty(repo)
    before = snapshot(repo)
    repro = Repro(tmp_path, culprit=700)
    p, res = bisect(repo, repro, "--good", shas[0], "--bad", "HEAD")
    assert p.returncode == 0, p.stderr
    assert res["status"] == "found"
    assert res["first_bad"]["commit"] == shas[700]
    assert res["first_bad"]["subject"] == "commit 700"
    assert "version.txt" in res["first_bad"]["diffstat"]
    assert len(repro.versions()) <= 10 + 2  # ceil(log2 1024) + both endpoint checks
    assert res["runs"] == len(repro.versions())
    assert repro.versions()[:2] == [1023, 0]  # bad end first (it defines "bad"), then the good end
    assert snapshot(repo) == before
    no_worktrees_left(repo)

    # Re-asking is instant: every verdict comes from the cache, nothing runs.
    n = len(repro.versions())
    p, res2 = bisect(repo, repro, "--good", shas[0], "--bad", "HEAD")
    assert p.returncode == 0, p.stderr
    assert res2["first_bad"]["commit"] == shas[700]
    assert len(repro.versions()) == n and res2["runs"] == 0
    assert snapshot(repo) == before


def merge_repo(tmp: Path) -> tuple[Path, dict]:
    """main: m0..m3, side branch from m3: s1..s5 (s3 adds bug.txt), merged at M (after m4..m6),
    then m7..m9. Every commit changes version.txt on its own line of history."""
    repo = tmp / "mrepo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    cmds = []
    t = [1700000000]

    def commit(ref, mark, msg, frm=None, merge=None, files=()):
        t[0] += 60
        s = (f"commit {ref}\nmark :{mark}\nauthor Dev <d@e.x> {t[0]} +0000\ncommitter Dev <d@e.x> {t[0]} +0000\n"
             f"data {len(msg)}\n{msg}\n")
        if frm:
            s += f"from :{frm}\n"
        if merge:
            s += f"merge :{merge}\n"
        for name, data in files:
            s += f"M 644 inline {name}\ndata {len(data)}\n{data}\n"
        cmds.append(s + "\n")

    marks = {}
    m = 0
    for i in range(4):
        m += 1
        marks[f"m{i}"] = m
        commit("refs/heads/main", m, f"main {i}", frm=m - 1 if i else None, files=[("version.txt", f"{i}\n")])
    prev = marks["m3"]
    for i in range(1, 6):
        m += 1
        marks[f"s{i}"] = m
        files = [("side.txt", f"{i}\n")] + ([("bug.txt", "x\n")] if i == 3 else [])
        commit("refs/heads/side", m, f"side {i}" + (" (introduces the bug)" if i == 3 else ""), frm=prev, files=files)
        prev = m
    prev = marks["m3"]
    for i in range(4, 7):
        m += 1
        marks[f"m{i}"] = m
        commit("refs/heads/main", m, f"main {i}", frm=prev, files=[("version.txt", f"{i}\n")])
        prev = m
    m += 1
    marks["M"] = m
    commit("refs/heads/main", m, "Merge branch 'side'", frm=prev, merge=marks["s5"],
           files=[("side.txt", "5\n"), ("bug.txt", "x\n")])
    prev = m
    for i in range(7, 10):
        m += 1
        marks[f"m{i}"] = m
        commit("refs/heads/main", m, f"main {i}", frm=prev, files=[("version.txt", f"{i}\n")])
        prev = m
    subprocess.run(["git", "-C", str(repo), "fast-import", "--quiet", f"--export-marks={tmp / 'marks'}"],
                   input="".join(cmds).encode(), check=True)
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-f", "main"], check=True)
    bymark = dict(line.split() for line in (tmp / "marks").read_text().splitlines())
    shas = {name: bymark[f":{mk}"] for name, mk in marks.items()}
    init_ws(repo)
    return repo, shas


def test_merges_side_branch_culprit_and_first_parent_finds_the_merge(tmp_path):
    repo, c = merge_repo(tmp_path)
    before = snapshot(repo)
    repro = Repro(tmp_path)
    p, res = bisect(repo, repro, "--good", c["m0"], "--bad", "main")
    assert p.returncode == 0, p.stderr
    assert res["first_bad"]["commit"] == c["s3"], res["report"]
    assert len(res["steps"]) <= 2 + 4  # 15 candidates: ceil(log2 15) = 4 steps
    p, res = bisect(repo, repro, "--good", c["m0"], "--bad", "main", "--first-parent")
    assert p.returncode == 0, p.stderr
    assert res["first_bad"]["commit"] == c["M"]
    assert res["first_bad"]["merge"] is True
    assert "bug.txt" in res["first_bad"]["diffstat"]  # diff against the first parent
    assert snapshot(repo) == before
    no_worktrees_left(repo)


@pytest.mark.parametrize("spec, why", [
    ({"fail_all": True}, "fails the same way"),
    ({"pass_all": True}, "passes"),
    ({"culprit": 9, "good_fails_differently": True}, "fails differently"),
])
def test_refuses_when_the_ends_do_not_check_out(tmp_path, spec, why):
    repo, shas = linear_repo(tmp_path, 16)
    before = snapshot(repo)
    repro = Repro(tmp_path, **spec)
    p, res = bisect(repo, repro, "--good", shas[0], "--bad", "HEAD")
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert res["status"] == "refused" and res["first_bad"] is None and res["candidates"] == []
    assert why in res["message"]
    assert len(repro.versions()) <= 2  # only the endpoint checks ran
    # still recorded in the session log
    log = json.loads(run_cli("bisect", "log", "--json", cwd=repo).stdout)
    assert [s["key"] for s in log["steps"]][0] == shas[15]
    st = json.loads(run_cli("bisect", "status", "--json", cwd=repo).stdout)
    assert st["status"] == "refused"
    assert snapshot(repo) == before
    no_worktrees_left(repo)


def test_a_repro_script_missing_from_the_commits_is_named_in_the_refusal(tmp_path):
    # `git bisect run ./repro.sh` runs in your checkout; dbglog's steps run in clean worktrees, where
    # an untracked script is missing and every commit "fails the same way": the refusal says why.
    repo, shas = linear_repo(tmp_path, 8)
    script = "#!/bin/sh\ntest \"$(cat version.txt)\" -lt 5\n"
    (repo / "repro.sh").write_text(script)
    p = run_cli("bisect", "git", "--json", "--good", shas[0], "--bad", "HEAD", "--", "sh", "repro.sh", cwd=repo)
    res = json.loads(p.stdout)
    assert p.returncode == 2 and res["status"] == "refused", p.stderr
    assert "repro.sh is in your checkout but not in the good end's tree" in res["message"]
    outside = tmp_path / "repro.sh"  # as the note says: outside the repository, by its absolute path
    outside.write_text(script)
    p = run_cli("bisect", "git", "--json", "--good", shas[0], "--bad", "HEAD", "--", "sh", str(outside), cwd=repo)
    assert p.returncode == 0 and json.loads(p.stdout)["first_bad"]["commit"] == shas[5], p.stdout


def test_bad_input_is_one_line_exit_2(tmp_path):
    repo, shas = linear_repo(tmp_path, 8)
    repro = Repro(tmp_path, culprit=4)
    p, _ = bisect(repo, repro, "--good", "no-such-rev", "--bad", "HEAD")
    assert p.returncode == 2 and "unknown revision 'no-such-rev'" in p.stderr
    p, _ = bisect(repo, repro, "--good", "HEAD", "--bad", shas[0])
    assert p.returncode == 2 and "swapped" in p.stderr
    p = run_cli("bisect", "mark", "nope", "good", cwd=repo)
    assert p.returncode == 2
    assert repro.versions() == []


def test_a_good_end_cut_off_by_a_shallow_clone_is_refused_naming_the_shallow_clone(tmp_path):
    origin, shas = linear_repo(tmp_path, 8, name="origin")
    git(origin, "tag", "v0", shas[0])
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "2", f"file://{origin}", str(clone)], check=True)
    git(clone, "fetch", "-q", "--depth", "1", "origin", "tag", "v0")  # there, but its history is not
    init_ws(clone)
    p, _ = bisect(clone, Repro(tmp_path, culprit=4), "--good", "v0", "--bad", "HEAD")
    assert p.returncode == 2 and "shallow clone" in p.stderr and "git fetch --unshallow" in p.stderr, p.stderr


def test_different_crash_in_the_middle_is_skipped_not_blamed(tmp_path):
    repo, shas = linear_repo(tmp_path, 64)
    repro = Repro(tmp_path, culprit=45, other=list(range(28, 36)))
    p, res = bisect(repo, repro, "--good", shas[0], "--bad", "HEAD")
    assert p.returncode == 0, p.stderr
    assert res["first_bad"]["commit"] == shas[45]
    skipped = [s for s in res["steps"] if s["verdict"] == "skip"]
    assert skipped, res["steps"]
    for s in skipped:
        assert shas.index(s["commit"]) in range(28, 36)
        assert "different failure" in s["reason"] and "KeyError" in s["reason"]


def test_hang_is_the_bug_when_the_bad_end_hangs(tmp_path, pid_dir):
    repo, shas = linear_repo(tmp_path, 32)
    repro = Repro(tmp_path, culprit=20, hang=True)
    # every passing step must end within --timeout: 1.5 s, three times a Python start-up at load 20
    p, res = bisect(repo, repro, "--good", shas[0], "--bad", "HEAD", "--timeout", "1.5")
    assert p.returncode == 0, p.stderr
    assert res["first_bad"]["commit"] == shas[20]
    assert res["target"].startswith("hang")
    assert any(s["outcome"] == "hang" and s["verdict"] == "bad" for s in res["steps"][2:])
    assert_none_alive(pid_dir)
    no_worktrees_left(repo)


def run_git_bisect(tmp: Path, repo: Path, good: str, repro: Repro) -> tuple[int, str]:
    clone = tmp / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    git(clone, "bisect", "start", "HEAD", good)
    start = len(repro.versions())
    p = subprocess.run(["git", "-C", str(clone), "bisect", "run", *repro.cmd], capture_output=True, text=True)
    return len(repro.versions()) - start, p.stdout


def test_21_untestable_commits_every_one_tried_exact_candidates_like_git(tmp_path):
    repo, shas = linear_repo(tmp_path, 1024)
    skip = list(range(490, 511))  # 21 commits around the culprit (500)
    repro = Repro(tmp_path, culprit=500, skip=skip)
    p, res = bisect(repo, repro, "--good", shas[0], "--bad", "HEAD")
    assert p.returncode == 1, p.stderr
    assert res["status"] == "inconclusive" and res["untested"] == []
    ours = len(repro.versions()) - 2  # the endpoint checks aside
    cands = {shas.index(c["commit"]) for c in res["candidates"]}
    assert cands == set(range(490, 512))  # the skipped ones and the first testable bad commit after them
    for c in res["candidates"]:  # nothing assumed: every candidate was tried
        i = shas.index(c["commit"])
        if i == 511:
            assert c["verdict"] == "bad"
        else:
            assert c["verdict"] == "skip" and "exited 125" in c["reason"]
    assert "21 commit(s) tried and untestable" in res["message"]
    theirs, out = run_git_bisect(tmp_path, repo, shas[0], repro)
    assert "only 'skip'ped commits left" in out
    assert ours <= theirs, (ours, theirs)


def _trials(repo: Path) -> list[str]:
    try:
        con = sqlite3.connect(f"file:{repo / '.dbglog' / 'dbglog.db'}?mode=ro", uri=True, timeout=5)
        try:
            return [r[0] for r in con.execute("SELECT key FROM bisect_trials ORDER BY seq")]
        finally:
            con.close()
    except sqlite3.Error:
        return []


def _start_bg(spawn, repo, repro, *args):
    return spawn([sys.executable, "-m", "dbglog", "bisect", "git", "--grace", "0.5", *args, "--",
                             *repro.cmd], cwd=repo, env=cli_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)


def _wait_trials(repo, n, proc, limit=120.0):  # (a bound on a failure, not a window: it waits for the rows)
    deadline = time.monotonic() + limit
    while len(_trials(repo)) < n:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_kill_9_mid_step_then_resume_same_answer_nothing_rerun_nothing_left(tmp_path, pid_dir, spawn):
    repo, shas = linear_repo(tmp_path, 64)
    before = snapshot(repo)
    repro = Repro(tmp_path, culprit=41, sleep=0.3)
    proc = _start_bg(spawn, repo, repro, "--good", shas[0], "--bad", "HEAD")
    _wait_trials(repo, 4, proc)
    time.sleep(0.1)  # mid-step
    proc.kill()
    proc.wait()
    finished = _trials(repo)
    assert (repo / ".dbglog" / "bisect").exists()  # the killed driver left its worktree behind
    st = json.loads(run_cli("bisect", "status", "--json", cwd=repo).stdout)
    assert st["status"] == "interrupted"  # its driver is gone: not "running"
    p = run_cli("bisect", "resume", "--json", cwd=repo)
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)
    assert res["first_bad"]["commit"] == shas[41]
    seen = repro.versions()
    for key in finished:
        assert seen.count(shas.index(key)) == 1, (shas.index(key), seen)
    assert len(set(seen)) == len(seen) or len(seen) - len(set(seen)) <= 1  # at most the interrupted step re-ran
    no_worktrees_left(repo)
    assert_none_alive(pid_dir)
    assert snapshot(repo) == before
    st = json.loads(run_cli("bisect", "status", "--json", cwd=repo).stdout)
    assert st["status"] == "done" and st["first_bad"] == shas[41]


def test_ctrl_c_stops_cleanly_and_resume_finishes(tmp_path, pid_dir, spawn):
    repo, shas = linear_repo(tmp_path, 32)
    repro = Repro(tmp_path, culprit=9, sleep=0.3)
    proc = _start_bg(spawn, repo, repro, "--good", shas[0], "--bad", "HEAD")
    _wait_trials(repo, 3, proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, (out, err)
    assert "bisect resume" in out
    no_worktrees_left(repo)
    assert_none_alive(pid_dir)
    assert json.loads(run_cli("bisect", "status", "--json", cwd=repo).stdout)["status"] == "interrupted"
    p = run_cli("bisect", "resume", "--json", cwd=repo)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["first_bad"]["commit"] == shas[9]
    assert json.loads(run_cli("bisect", "status", "--json", cwd=repo).stdout)["status"] == "done"


def test_recorded_in_investigation_and_mark_replays(tmp_path):
    repo, shas = linear_repo(tmp_path, 32)
    assert run_cli("new", "Loss NaN after refactor", "--no-env", cwd=repo).returncode == 0
    repro = Repro(tmp_path, culprit=17)
    p, res = bisect(repo, repro, "--good", shas[0], "--bad", "HEAD")
    assert p.returncode == 0, p.stderr
    rec = res["recorded"]
    md = (repo / rec["path"]).read_text()
    assert f"## Bisection: {shas[0][:10]}..HEAD ({res['session']})" in md
    assert "| # | Commit | Subject | Verdict |" in md
    assert f"**Result:** first bad commit `{shas[17]}` — commit 17" in md
    assert "(bad end)" in md and "(good end)" in md and "../.dbglog/runs/" in md
    assert f"### Attempt 1: Bisect: first bad commit {shas[17][:10]} commit 17" in md
    did = json.loads(run_cli("attempt", "list", "--json", cwd=repo).stdout)[0]["did"]
    assert did.startswith(f"dbglog bisect git --good {shas[0][:10]} --bad HEAD --timeout ")  # the calibrated one
    assert did.endswith(" -- " + " ".join(repro.cmd))
    # the mirror still round-trips (sync sees no outside edit / conflict)
    assert run_cli("sync", cwd=repo).returncode == 0
    n = len(repro.versions())
    # a wrong verdict corrected by hand: the search replays from the log
    p = run_cli("bisect", "mark", shas[17], "good", cwd=repo)
    assert p.returncode == 0, p.stderr
    p = run_cli("bisect", "resume", "--json", cwd=repo)
    assert p.returncode == 0, p.stderr
    res2 = json.loads(p.stdout)
    assert res2["first_bad"]["commit"] == shas[18]
    assert len(repro.versions()) - n <= 1  # only commit 18 needed a run
    md = (repo / rec["path"]).read_text()
    assert md.count("## Bisection:") == 1  # the section is regenerated in place
    assert "### Attempt 2: Bisect: first bad commit" in md
    log = json.loads(run_cli("bisect", "log", "--json", cwd=repo).stdout)
    assert any(s["source"] == "manual" for s in log["steps"])


def test_repeat_disagreement_is_weighed_not_a_guess(tmp_path):
    # repeats that disagree switch to the probabilistic search (issue 15): every run is evidence,
    # and the answer comes with its probability (here 6 and 7 fail half the time before the
    # culprit, so the first commit that fails at all is the most probable one)
    repo, shas = linear_repo(tmp_path, 16)
    repro = Repro(tmp_path, culprit=8, flaky=[6, 7, 8, 9])
    p, res = bisect(repo, repro, "--good", shas[0], "--bad", "HEAD", "--repeat", "2", "--max-steps", "80")
    assert p.returncode in (0, 1), p.stderr
    assert res["mode"] == "flaky" and res["posterior"] and 0 < res["probability"] <= 1
    assert shas.index(res["posterior"][0]["commit"]) in (6, 7, 8)
    assert "probability" in res["message"]


def test_jobs_and_launcher(tmp_path):
    repo, shas = linear_repo(tmp_path, 256)
    repro = Repro(tmp_path, culprit=77)
    p, res = bisect(repo, repro, "--good", shas[0], "--bad", "HEAD", "--jobs", "3", "--launcher", "env DBG_L=1")
    assert p.returncode == 0, p.stderr
    assert res["first_bad"]["commit"] == shas[77]
    assert all(s["runs"] for s in res["steps"])
    no_worktrees_left(repo)


def test_build_failure_is_skip(tmp_path):
    repo, shas = linear_repo(tmp_path, 32)
    repro = Repro(tmp_path, culprit=20)
    build = "test $(cat version.txt) -lt 14 -o $(cat version.txt) -gt 17"
    p, res = bisect(repo, repro, "--good", shas[0], "--bad", "HEAD", "--build", build)
    assert p.returncode == 0, p.stderr
    assert res["first_bad"]["commit"] == shas[20]
    for s in res["steps"]:
        if s["verdict"] == "skip":
            assert s["reason"].startswith("build failed")


def test_demo_includes_a_history_bisection(tmp_path):
    p = run_cli("demo", "--json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    inv = json.loads(p.stdout)["investigation"]
    heads = [s["heading"] for s in inv["sections"]]
    assert any(h.startswith("## Bisection: HEAD~23..HEAD") for h in heads), heads
    assert any(a["title"].startswith("Bisect: first bad commit") and a["outcome"] == "worked"
               for a in inv["attempts"])


BUILD = "echo $(cat version.txt) >> {log}; grep -qx ok build.txt"
#: the shape of issue 18: a 300-commit history where the bug arrives in commit 161 and several short
#: ranges of commits around it do not build, with buildable commits between them
BROKEN = [*range(120, 127), *range(141, 153), *range(155, 159), *range(163, 171), *range(185, 191)]


def test_interleaved_build_breaks_culprit_named_in_no_more_steps_than_git_bisect_run(tmp_path):
    repo = tmp_path / "repo"
    shas = make_repo(repo, 300, lambda i: {"version.txt": f"{i}\n",
                                           "build.txt": "broken\n" if i in BROKEN else "ok\n"})
    init_ws(repo)
    repro = Repro(tmp_path, culprit=161)
    log = tmp_path / "built.log"
    p, res = bisect(repo, repro, "--good", shas[0], "--bad", "HEAD", "--build", BUILD.format(log=log))
    assert p.returncode == 0, (p.stdout, p.stderr)
    assert res["status"] == "found" and res["first_bad"]["commit"] == shas[161]
    ours = len(log.read_text().split()) - 2  # commits tried, the two endpoint checks (git has none) aside
    assert len(res["steps"]) - 2 == ours
    skipped = [s for s in res["steps"] if s["verdict"] == "skip"]
    assert skipped and all(shas.index(s["commit"]) in BROKEN and s["reason"].startswith("build failed")
                           for s in skipped)

    # git bisect run with the script everyone writes: exit 125 when the build fails
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    git(clone, "bisect", "start", "HEAD", shas[0])
    glog = tmp_path / "git-built.log"
    script = f"{BUILD.format(log=glog)} || exit 125; exec {' '.join(repro.cmd)}"
    out = subprocess.run(["git", "-C", str(clone), "bisect", "run", "sh", "-c", script], capture_output=True,
                         text=True).stdout
    assert f"{shas[161]} is the first bad commit" in out
    theirs = len(glog.read_text().split())
    print(f"interleaved build breaks: dbglog {ours} commits tried (+2 endpoint checks), git bisect run {theirs}")
    assert ours <= theirs, (ours, theirs)

    # --max-steps bounds the effort: the candidates never tried are named as such
    p, res = bisect(repo, repro, "--good", shas[0], "--bad", "HEAD", "--build", BUILD.format(log=log),
                    "--max-steps", "3")
    assert p.returncode == 1 and res["status"] == "budget_exhausted", res["message"]
    assert "--max-steps 3 reached" in res["message"] and res["untested"]
    untried = [c for c in res["candidates"] if c["verdict"] is None]
    assert untried and all("not tried: the --max-steps budget (3) ran out" in c["reason"] for c in untried)


def test_merge_bases_answer_both_ancestry_questions(tmp_path):
    """start() asks one `git merge-base --all` instead of two --is-ancestor checks: [good] = an
    ancestor of bad, [bad] = swapped ends, other commits = a good end off the bad end's history."""
    from dbglog.bisect.history import git, merge_bases

    repo = tmp_path / "r"
    shas = make_repo(repo, 6, lambda i: {"version.txt": f"{i}\n"})
    git(repo, "checkout", "-q", "-b", "side", shas[2])
    (repo / "side.txt").write_text("x\n")
    git(repo, "add", "side.txt")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "side")
    side = git(repo, "rev-parse", "HEAD").strip()
    assert merge_bases(repo, shas[1], shas[5]) == [shas[1]]
    assert merge_bases(repo, shas[5], shas[1]) == [shas[1]]  # (good, bad) swapped: the bad end
    assert merge_bases(repo, side, shas[5]) == [shas[2]]  # off the history: its merge base is verified


def test_the_ends_resolve_in_one_git_process_or_one_by_one(tmp_path):
    from dbglog.bisect.history import _resolve_ends

    repo = tmp_path / "r"
    shas = make_repo(repo, 3, lambda i: {"version.txt": f"{i}\n"})
    (repo / "sub").mkdir()
    assert _resolve_ends(repo / "sub", ["HEAD", shas[0][:10]]) == (repo.resolve(), [shas[2], shas[0]])
    # anything amiss: None, and start() asks one question at a time for the precise refusal
    assert _resolve_ends(repo, ["HEAD", "nope"]) is None
    assert _resolve_ends(repo, ["--all"]) is None
    assert _resolve_ends(tmp_path, ["HEAD"]) is None


def test_a_module_changed_to_one_of_the_same_size_never_runs_stale_bytecode(tmp_path):
    # Every commit changes mod.py to a file of the same size (v = 10, 11, ...). A reused worktree keeps
    # the previous commit's __pycache__, and Python trusts a .pyc whose source mtime (whole seconds)
    # and size match: steps checked out within one second would run the previous commit's code.
    # Bytecode writing is on here, as it is for users.
    repo = tmp_path / "repo"
    shas = make_repo(repo, 48, lambda i: {"mod.py": f"v = {10 + i}\n"})
    init_ws(repo)
    (tmp_path / "check.py").write_text("import sys\nsys.path.insert(0, '.')\nimport mod\n"
                                       "sys.exit('AssertionError: v is %d' % mod.v if mod.v >= 40 else 0)\n")
    p, out = bisect(repo, type("R", (), {"cmd": [sys.executable, str(tmp_path / "check.py")]}),
                    "--good", shas[0], "--bad", shas[-1], env={"PYTHONDONTWRITEBYTECODE": ""})
    assert p.returncode == 0 and out["first_bad"]["commit"] == shas[30], (out or {}).get("message", p.stderr[-2000:])


def test_start_takes_good_ends_from_the_graph_or_their_merge_bases(recs, tmp_path, monkeypatch):
    """A good end on the range's boundary is an ancestor (no merge-base asked); one hidden behind
    another good end, or off the bad end's history, is asked, and the latter replaced by its merge
    base; swapped ends are refused."""
    from dbglog.bisect import history
    from dbglog.bisect.spec import HistorySpec
    from dbglog.util.errors import DbglogError

    repo = tmp_path / "r"
    shas = make_repo(repo, 8, lambda i: {"version.txt": f"{i}\n"})
    history.git(repo, "checkout", "-q", "-b", "side", shas[3])
    (repo / "side.txt").write_text("x\n")
    history.git(repo, "add", "side.txt")
    history.git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "side")
    side = history.git(repo, "rev-parse", "HEAD").strip()
    history.git(repo, "checkout", "-q", "-")
    monkeypatch.setattr(history, "resume", lambda recs, session, progress=True: session["spec"])
    asked = []
    real = history.merge_bases
    monkeypatch.setattr(history, "merge_bases", lambda r, a, b: asked.append(a) or real(r, a, b))

    def start(goods, bad=shas[7]):
        asked.clear()
        return history.start(recs, HistorySpec(good_refs=goods, bad_ref=bad, cmd=["true"]), cwd=repo)

    sp = start([shas[2]])
    assert sp["goods"] == [shas[2]] and asked == [] and not sp["notes"]
    sp = start([shas[5], shas[1]])  # shas[1] is behind shas[5]: not on the boundary, asked
    assert sp["goods"] == [shas[5], shas[1]] and asked == [shas[1]]
    sp = start([side])
    assert sp["goods"] == [shas[3]] and sp["good_labels"] == [f"merge-base({side})"] and asked == [side]
    with pytest.raises(DbglogError, match="swapped"):
        start([shas[7]], bad=shas[2])


def test_a_repro_that_deletes_its_worktree_leaves_no_worktree_registered(tmp_path):
    repo, shas = linear_repo(tmp_path, 6)
    p = run_cli("bisect", "git", "-j", "2", "--good", shas[0], "--bad", shas[-1], "--", "sh", "-c",
                'd=$(pwd); cd /; rm -rf "$d"', cwd=repo)
    assert "Traceback" not in p.stderr, p.stderr
    no_worktrees_left(repo)  # before: each deleted one stayed in `git worktree list`, "prunable"


def test_the_verdict_cache_is_not_reused_when_the_repro_or_the_environment_changed(tmp_path):
    """An adversarial probe: a second bisection with the repro's file edited, or with the environment the failure
    needs unset, answered the first one's culprit from the cache, 0 runs, exit 0. The cache shared by sessions is
    keyed on the environment and the bytes of the files the command names too."""
    repo, shas = linear_repo(tmp_path, 32)
    repro = Repro(tmp_path, culprit=20)
    p, res = bisect(repo, repro, "--good", shas[0], "--bad", "HEAD")
    assert p.returncode == 0 and res["first_bad"]["commit"] == shas[20], p.stderr
    repro.set(culprit=11)  # the repro's input changed: spec.json, a file the command names
    p, res = bisect(repo, repro, "--good", shas[0], "--bad", "HEAD")
    assert p.returncode == 0 and res["first_bad"]["commit"] == shas[11] and res["runs"] > 0, (p.stderr, res)
    p, res = bisect(repo, repro, "--good", shas[0], "--bad", "HEAD", env={"SOMETHING_THE_BUG_NEEDS": "1"})
    assert res["runs"] > 0  # another environment: run again, not answered from the cache
    p, res = bisect(repo, repro, "--good", shas[0], "--bad", "HEAD")
    assert res["runs"] == 0 and res["first_bad"]["commit"] == shas[11]  # the same world again: the cache answers


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_untracked_files_a_step_leaves_are_gone_at_the_next_step_ignored_ones_stay(tmp_path, jobs):
    # A reused worktree kept a step's untracked files: a repro that leaves a marker and passes when it
    # finds one answered the last commit. Ignored files (a build directory) are kept for incremental builds.
    repo = tmp_path / "repo"
    shas = make_repo(repo, 32, lambda i: {"version.txt": f"{i}\n", ".gitignore": "build/\n"})
    init_ws(repo)
    log = tmp_path / "reused.log"
    (tmp_path / "check.sh").write_text(
        '[ -f stale_marker ] && exit 0\ntouch stale_marker\n'
        f'[ -f build/cache ] && echo reused >> {log}\nmkdir -p build && touch build/cache\n'
        '[ "$(cat version.txt)" -lt 20 ] || { echo "AssertionError: bug" >&2; exit 1; }\n')
    p, out = bisect(repo, type("R", (), {"cmd": ["sh", str(tmp_path / "check.sh")]}),
                    "-j", jobs, "--good", shas[0], "--bad", shas[-1])
    assert p.returncode == 0 and out["first_bad"]["commit"] == shas[20], (out or {}).get("message", p.stderr[-2000:])
    assert log.exists()  # the ignored build directory was there for a later step


FILE_SUBMODULES = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "protocol.file.allow", "GIT_CONFIG_VALUE_0": "always"}


def test_submodules_are_checked_out_in_each_step_and_the_users_config_is_left_alone(tmp_path, monkeypatch):
    # Step worktrees had empty submodule folders: a repro reading sub/bug was refused as failing everywhere.
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")  # (file:// submodules, for the set-up's git commands)
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "protocol.file.allow")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "always")
    sub_shas = make_repo(tmp_path / "sub", 2, lambda i: {"bug": f"{i}\n"})
    repo = tmp_path / "super"
    make_repo(repo, 1, lambda i: {"counter": "0\n"})
    git(repo, "submodule", "add", "-q", f"file://{tmp_path / 'sub'}", "sub")
    git(repo, "-C", "sub", "checkout", "-q", sub_shas[0])
    for i in range(1, 12):
        (repo / "counter").write_text(f"{i}\n")
        if i == 7:
            git(repo, "-C", "sub", "checkout", "-q", sub_shas[1])
        git(repo, "add", "-A")
        git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", f"commit {i}")
    shas = git(repo, "rev-list", "--reverse", "HEAD").split()
    git(repo, "submodule", "deinit", "-q", "--all")  # like a clone without --recursive: not initialised
    init_ws(repo)
    config = (repo / ".git" / "config").read_bytes()
    (tmp_path / "check.sh").write_text('[ "$(cat sub/bug)" = 0 ] || { echo "AssertionError: bug" >&2; exit 1; }\n')
    p, out = bisect(repo, type("R", (), {"cmd": ["sh", str(tmp_path / "check.sh")]}), "--good", shas[1],
                    "--bad", shas[-1], env=FILE_SUBMODULES)
    assert p.returncode == 0 and out["first_bad"]["commit"] == shas[7], (out or {}).get("message", p.stderr[-2000:])
    assert (repo / ".git" / "config").read_bytes() == config  # `submodule update --init` wrote to it: put back
    no_worktrees_left(repo)


def test_a_repro_that_stashes_or_drops_a_stash_leaves_the_users_stash_byte_identical(tmp_path):
    # Worktrees share refs/stash: a repro running `git stash` pushed onto the user's list (their stash@{0}
    # became stash@{7}), and one that dropped an entry lost theirs.
    repo, shas = linear_repo(tmp_path, 32)
    dirty(repo)
    (repo / "version.txt").write_text("second stash\n")
    git(repo, "stash", "-q")
    before = snapshot(repo)
    stash_files = [repo / ".git" / "refs" / "stash", repo / ".git" / "logs" / "refs" / "stash"]
    kept = [f.read_bytes() for f in stash_files]
    runs = tmp_path / "runs"
    (tmp_path / "check.sh").write_text(
        f'n=$(cat {runs} 2>/dev/null || echo 0); echo $((n+1)) > {runs}\n'
        '[ "$n" = 0 ] && git stash drop -q "stash@{1}"\n'
        'echo junk >> version.txt; git stash -q\n'
        '[ "$(git show HEAD:version.txt)" -lt 20 ] || { echo "AssertionError: bug" >&2; exit 1; }\n')
    p, out = bisect(repo, type("R", (), {"cmd": ["sh", str(tmp_path / "check.sh")]}), "--good", shas[0],
                    "--bad", shas[-1])
    assert p.returncode == 0 and out["first_bad"]["commit"] == shas[20], (out or {}).get("message", p.stderr[-2000:])
    assert snapshot(repo) == before and [f.read_bytes() for f in stash_files] == kept
    assert "stash entries were taken off your stash list" in p.stderr
