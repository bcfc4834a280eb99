"""What `bisect git` does not pay for any more (bench/history_bench.py measures the time): the
signature catalog built only when a run prints something, one git process for the culprit's
details, the session's set-up writes without an fsync, the "does the repo hold Python?" question
asked without waiting. Each test checks that the cheaper way gives the same answer."""

import json
import os
import sqlite3
import subprocess
import sys
import time

import psutil
import pytest

from dbglog.bisect import history
from dbglog.bisect import session as S
from dbglog.bisect.spec import HistorySpec
from dbglog.util.errors import DbglogError


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=history._git_env()).stdout.strip()


# --- the signature catalog ---------------------------------------------------------------


def test_catalog_is_built_on_first_use_and_a_config_is_read_at_once(tmp_path):
    from dbglog.diagnose import signatures

    lazy = S.Catalog(tmp_path / "config.toml")  # no config.toml: nothing read yet
    assert lazy._sigs is None
    assert [s.name for s in lazy] == [s.name for s in signatures.BUILTIN]
    assert len(lazy) == len(signatures.BUILTIN)

    cfg = tmp_path / "with" / "config.toml"
    cfg.parent.mkdir()
    cfg.write_text("[[signature]]\nname = 'mine.nan'\npattern = 'NaN in loss'\n")
    eager = S.Catalog(cfg)
    assert eager._sigs is not None and "mine.nan" in {s.name for s in eager}
    m = signatures.classify_text("step 3\nNaN in loss\n", eager)
    assert m is not None and m.name == "mine.nan"

    cfg.write_text("[[signature]]\nname = 'broken'\npattern = '('\n")
    with pytest.raises(DbglogError):  # refused before the first step, as before
        S.Catalog(cfg)


# --- the culprit's details ---------------------------------------------------------------


def _two_step_info(repo, sha):
    """commit_info as it was: `git show -s`, then `git diff --stat PARENT SHA` (root: show --stat)."""
    out = _git(repo, "show", "-s", "--format=%H%x1f%an <%ae>%x1f%aI%x1f%s%x1f%P", sha)
    parents = (out.split("\x1f") + [""] * 5)[4].split()  # (a root's empty %P: strip() took its separator)
    stat = (_git(repo, "diff", "--stat=100", "--no-color", parents[0], sha) if parents else
            _git(repo, "show", "--stat=100", "--no-color", "--format=", sha))
    return parents, stat.strip("\n")


def test_commit_info_in_one_git_show_is_the_two_step_answer(tmp_path):
    repo = tmp_path / "r"
    shas = history.make_repo(repo, 6, lambda i: {"version.txt": f"{i}\n", f"mod{i % 3}.py": f"x = {i}\n" * (i + 1)},
                             lambda i: f"step {i}: <b>|pipes|</b>")
    # a rename, and a merge of a side branch
    _git(repo, "mv", "mod0.py", "renamed.py")
    _git(repo, "-c", "user.name=A", "-c", "user.email=a@x", "commit", "-qm", "rename")
    _git(repo, "checkout", "-qb", "side", shas[3])
    (repo / "side.txt").write_text("side\n")
    _git(repo, "add", "side.txt")
    _git(repo, "-c", "user.name=B", "-c", "user.email=b@x", "commit", "-qm", "side work")
    _git(repo, "checkout", "-q", "main")
    _git(repo, "-c", "user.name=C", "-c", "user.email=c@x", "merge", "-q", "--no-ff", "-m", "merge side", "side")
    head = _git(repo, "rev-parse", "HEAD")
    renamed = _git(repo, "rev-parse", "HEAD^1")
    for sha in [shas[0], shas[2], shas[5], renamed, head]:
        parents, stat = _two_step_info(repo, sha)
        fast = history.commit_info(repo, sha, tuple(parents))  # what the driver passes (the graph's parents)
        slow = history.commit_info(repo, sha)
        assert fast == slow, sha
        assert fast["parents"] == parents and fast["merge"] == (len(parents) > 1)
        assert fast["diffstat"].strip() == stat and stat, sha
    assert "renamed.py" in history.commit_info(repo, renamed, (shas[5],))["diffstat"]
    # parents the caller got wrong (a merge passed as one parent): git's own answer wins
    assert history.commit_info(repo, head, (renamed,)) == history.commit_info(repo, head)


# --- the session's set-up writes -----------------------------------------------------------


def test_session_writes_without_fsync_are_committed_and_leave_the_setting_as_it_was(tmp_path):
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace

    (tmp_path / ".git").mkdir()
    recs = Records(Workspace(tmp_path / ".dbglog"), create=True)
    conn = recs.store.conn
    before = conn.execute("PRAGMA synchronous").fetchone()[0]
    db = S.SessionDB(recs.store)
    sid = db.create("git", {"cmd": ["true"]}, None)
    db.update_spec(sid, {"cmd": ["true"], "calibrated": {"timeout": 10}})
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == before
    assert not conn.in_transaction
    other = sqlite3.connect(str(recs.store.path))  # committed: another connection reads both writes
    row = other.execute("SELECT kind, status, spec FROM bisect_sessions WHERE id = ?", (sid,)).fetchone()
    assert row[:2] == ("git", "running") and json.loads(row[2])["calibrated"] == {"timeout": 10}
    other.close()
    with recs.store.write():  # inside an outer transaction they join it (no PRAGMA mid-transaction)
        sid2 = db.create("git", {"cmd": ["false"]}, None)
        assert conn.in_transaction
    assert db.get(sid2)["spec"] == {"cmd": ["false"]}
    recs.close()


# --- the Python question -----------------------------------------------------------------


def test_a_refused_bisection_leaves_no_git_probe_behind(tmp_path):
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace

    repo = tmp_path / "r"
    history.make_repo(repo, 4, lambda i: {"v.txt": f"{i}\n"})
    recs = Records(Workspace(repo / ".dbglog"), create=True)
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    res = history.start(recs, HistorySpec(good_refs=["HEAD~3"], bad_ref="HEAD", cmd=[sys.executable, "-c", ""],
                                          timeout=30.0), cwd=repo, progress=False)
    assert res["status"] == "refused" and "passes" in res["message"]  # the bad end passed: no step reused a worktree
    left = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
    assert not left, [(p.pid, p.cmdline()) for p in left]
    recs.close()


# --- forgetting the worktrees ------------------------------------------------------------


def _listed(repo):
    return [ln for ln in _git(repo, "worktree", "list", "--porcelain").splitlines() if ln.startswith("worktree ")]


@pytest.mark.parametrize("odd", [False, True])
def test_removed_worktrees_are_forgotten_by_the_repo_with_or_without_a_prune(tmp_path, odd):
    repo = tmp_path / "r"
    shas = history.make_repo(repo, 3, lambda i: {"v.txt": f"{i}\n"})
    root = tmp_path / "session"
    root.mkdir()
    for k in range(2):
        _git(repo, "worktree", "add", "--detach", "-q", str(root / f"wt{k}"), shas[k])
    (root / "dbglog-triton-x").mkdir()  # per-step scratch beside them: not a worktree
    assert history._admin_dir(root / "wt0") == (repo / ".git" / "worktrees" / "wt0").resolve()
    if odd:  # a .git file that does not name its admin folder: the prune forgets it instead
        (root / "wt1" / ".git").write_text("gitdir: /nowhere\n")
        assert history._admin_dir(root / "wt1") is None
    history.remove_worktrees(repo, root)
    assert not root.exists()
    assert _listed(repo) == [f"worktree {repo}"]
    assert not (repo / ".git" / "worktrees").exists() or not any((repo / ".git" / "worktrees").iterdir())


# --- the tree's handles without psutil -----------------------------------------------------


def test_proc_handles_answer_as_psutil_does_and_refuse_a_reused_pid():
    from dbglog.run import proctree

    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        h, ps = proctree.Proc.of(p.pid), psutil.Process(p.pid)
        assert h.is_running() and h.live() and proctree.is_live(h)
        assert abs(h.create_time() - ps.create_time()) < 0.02
        assert abs(proctree.create_time(p.pid) - ps.create_time()) < 0.02
        assert h.name() == ps.name() and h.ppid() == ps.ppid()  # anything else: psutil's answer
        assert h == proctree.Proc.of(p.pid) and len({h, proctree.Proc.of(p.pid)}) == 1
        other = proctree.Proc(p.pid, b"1")  # the same pid, another start time: a reused pid
        assert not other.is_running() and not other.live()
        with pytest.raises(psutil.NoSuchProcess):
            other.send_signal(9)  # never signals the process that now holds the pid
        assert p.poll() is None
        h.terminate()
        p.wait(10)
    finally:
        p.kill()
        p.wait()
    assert not h.is_running() and not h.live() and not proctree.is_live(h)
    with pytest.raises(psutil.NoSuchProcess):
        h.name()
    assert proctree.Proc.of(p.pid) is None or proctree.Proc.of(p.pid) != h


def test_a_zombie_is_running_but_not_live():
    from dbglog.run import proctree

    p = subprocess.Popen(["true"])
    for _ in range(200):
        h = proctree.Proc.of(p.pid)
        if h is not None and h._state() == b"Z":
            break
        time.sleep(0.01)
    assert h.is_running() and not h.live() and not proctree.is_live(h)
    assert proctree.wait_gone([h], 0.1)  # gone for every waiter, though nobody reaped it yet
    p.wait()
    assert not h.is_running()


def test_a_run_that_leaves_nothing_behind_never_imports_psutil_and_one_that_does_is_cleaned(tmp_path):
    code = f"""
import json, sys
from dbglog.run import runner
quiet = runner.run(["sh", "-c", "echo ok"], run_dir={str(tmp_path / 'a')!r}, echo=False, git_info=False)
had = "psutil" in sys.modules
left = runner.run(["sh", "-c", "sleep 30 & echo started"], run_dir={str(tmp_path / 'b')!r}, echo=False,
                  git_info=False, grace=1)
import re
from dbglog.run import proctree
pids = [int(x) for n in left.notes for m in re.findall(r"exited \\(([\\d, ]+)\\)", n) for x in m.split(", ")]
assert pids, left.notes
print(json.dumps([had, quiet.outcome, left.outcome, left.notes, [p for p in pids if proctree.alive(p)]]))
"""
    from conftest import cli_env

    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env(), timeout=60)
    assert p.returncode == 0, p.stderr
    had, quiet, left, notes, still = json.loads(p.stdout)
    assert (had, quiet, left) == (False, "pass", "pass")
    assert any("still running after the command exited" in n and "terminated" in n for n in notes), notes
    assert still == []  # the leftover named in the note is gone (killed through the /proc handles, or psutil's)


# --- the search's state after a verdict, without a walk over the whole graph -------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@st.composite
def dags_and_verdicts(draw):
    n = draw(st.integers(2, 28))
    parents = {}
    for i in range(1, n):
        k = draw(st.sampled_from([1, 1, 1, 2, 0]))
        ps = sorted(set(draw(st.lists(st.integers(0, i - 1), min_size=k, max_size=k))), reverse=True)
        parents[f"c{i}"] = tuple(f"c{p}" for p in ps)
    bad = f"c{n - 1}"
    goods = [f"c{g}" for g in draw(st.lists(st.integers(0, n - 2), min_size=1, max_size=2, unique=True))]
    steps = draw(st.lists(st.tuples(st.integers(0, n - 1), st.sampled_from(["good", "bad", "bad", "good", "skip"])),
                          max_size=14))
    return parents, bad, goods, [(f"c{i}", v) for i, v in steps], draw(st.booleans())


@given(dags_and_verdicts())
@settings(max_examples=150, deadline=None)
def test_one_more_verdict_gives_the_state_a_full_recompute_gives(case):
    from dbglog.bisect.algorithms import HistoryBisect

    parents, bad, goods, steps, first_parent = case
    hb = HistoryBisect(parents, bad, goods, first_parent=first_parent)
    for i, (commit, verdict) in enumerate(steps):
        hb.record(commit, verdict)
        got = (list(hb._cands), hb._cand_set, dict(hb._weight), hb._linear, hb.result.status)
        hb._recompute()
        assert got == (list(hb._cands), hb._cand_set, dict(hb._weight), hb._linear, hb.result.status), (commit, verdict)
        fresh = HistoryBisect(parents, bad, goods, first_parent=first_parent)
        for c, v in steps[:i + 1]:  # (a replay of the same verdicts, as resume does)
            fresh.record(c, v)
        assert fresh._cands == hb._cands


def test_result_json_cleans_every_value_and_no_field_name_needs_it(tmp_path):
    """runner._finish cleans the values of a run record, not its own field names: none of them may
    ever be secret-named (a value under such a key would then be kept whole by clean_obj's rule)."""
    import dataclasses

    from dbglog.run import runner
    from dbglog.util.redact import clean, clean_obj, is_secret_name

    names = [f.name for f in dataclasses.fields(runner.RunResult)] + ["signal_name"]
    assert not [n for n in names if is_secret_name(n) or clean(n) != n]
    token = "hf_" + "a1B2c3D4e5F6g7H8i9J0kLmNoPqRsTuV"
    r = runner.run(["sh", "-c", f"echo HF_TOKEN={token}; exit 3"], run_dir=tmp_path / "r", echo=False,
                   git_info=False, env_overrides={"HF_TOKEN": token, "X": f"--token={token}"})
    written = json.loads((tmp_path / "r" / "result.json").read_text())
    assert token not in json.dumps(written) and written == clean_obj(r.to_dict())
    assert written["outcome"] == "fail" and written["env_overrides"]["HF_TOKEN"] != token


def test_sweep_reads_proc_only_while_dbglog_has_a_child(monkeypatch):
    """As the subreaper, a dbglog with no child at all has nothing of a finished run left alive (each
    leftover would be one of its children or below one): the sweep then reads no /proc table."""
    from dbglog.run import proctree

    assert proctree.become_subreaper()
    p = subprocess.Popen(["true"], start_new_session=True)
    p.wait()
    tree = proctree.Tree(p.pid, "rid-sweep", time.time())
    reads = []
    real = proctree.ppid_table
    monkeypatch.setattr(proctree, "ppid_table", lambda *a, **k: reads.append(1) or real(*a, **k))
    if proctree.no_children():  # (another test's child of this worker may still be around)
        proctree.sweep(tree)
        assert reads == []
    child = subprocess.Popen(["sleep", "30"])
    try:
        assert not proctree.no_children()
        proctree.sweep(tree)
        assert reads  # a child: every process it might hide is looked for
    finally:
        child.kill()
        child.wait()


@pytest.mark.parametrize("files, version, expect", [
    ({"a.txt": "x", "docs/readme.md": "x"}, None, False),
    ({"a.txt": "x", "pkg/mod.py": "x = 1"}, None, True),
    ({"tool.pyw": "x"}, None, True),
    ({"notpy.pyc": "x", "x.py.txt": "x"}, None, False),
    ({"pkg/mod.py": "x = 1"}, 4, None),  # prefix-compressed paths: git is asked instead
])
def test_the_worktree_index_tells_whether_the_repo_holds_python(tmp_path, files, version, expect):
    repo = tmp_path / "r"
    history.make_repo(repo, 2, lambda i: dict(files, v=str(i)))
    if version:
        _git(repo, "config", "index.version", str(version))
    wt = tmp_path / "wt0"
    _git(repo, "worktree", "add", "--detach", "-q", str(wt), "HEAD")
    assert history._index_lists_python(wt) is expect
    if expect is not None:  # the same answer as the git question it saves
        names = _git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
        assert expect == any(n.endswith((".py", ".pyw")) for n in names)
    assert history._index_lists_python(tmp_path / "nowhere") is None


@settings(max_examples=50, deadline=None)
@given(st.binary(max_size=4096))
def test_the_builtin_sha256_is_hashlibs(data):
    # One sha256 for every file and key hash (fsutil.sha256_hex: CPython's built-in module, no OpenSSL
    # load); a stored baseline or cache key written by hashlib must still compare equal.
    import hashlib

    from dbglog.util.fsutil import sha256_hex

    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()


# --- the next checkout, readied while a step is stored -------------------------------------


@given(dags_and_verdicts())
@settings(max_examples=100, deadline=None)
def test_peek_names_what_next_steps_asks_and_changes_nothing(case):
    from dbglog.bisect.algorithms import HistoryBisect

    parents, bad, goods, steps, first_parent = case
    hb = HistoryBisect(parents, bad, goods, first_parent=first_parent, max_runs=len(steps) + 1)
    for commit, verdict in steps:
        hb.record(commit, verdict)
        before = (list(hb._cands), hb.runs, list(hb.asked), hb.result.status)
        seen = hb.peek()
        assert (list(hb._cands), hb.runs, list(hb.asked), hb.result.status) == before
        asked = hb.next_steps(1)
        assert asked == ([seen] if seen is not None else [])


def test_each_step_after_the_first_runs_in_the_worktree_readied_while_the_last_was_stored(tmp_path, monkeypatch):
    """With one job the next commit's checkout starts before the step just run is stored; the
    commit readied is the one the search asks next, so no step checks out twice; the answer is
    the same and no git is left running."""
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace

    repo = tmp_path / "r"
    shas = history.make_repo(repo, 40, lambda i: {"v.txt": f"{i}\n"})
    readied, placed, stored = [], [], []
    ready, checkout = history._Driver.ready_ahead, history._Driver.checkout

    def spy_ready(self, k, sha):
        readied.append((sha, len(placed), len(stored)))
        return ready(self, k, sha)

    def spy_checkout(self, k, sha):
        placed.append((sha, self._ahead.get(k, ("",))[0] == sha))
        return checkout(self, k, sha)

    monkeypatch.setattr(history._Driver, "ready_ahead", spy_ready)
    monkeypatch.setattr(history._Driver, "checkout", spy_checkout)
    from dbglog.bisect import oracle

    op = oracle.Oracle.persist
    monkeypatch.setattr(oracle.Oracle, "persist", lambda self, step, *a: (stored.append(step.key), op(self, step, *a)))
    recs = Records(Workspace(repo / ".dbglog"), create=True)
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    script = "import sys; sys.exit(int(open('v.txt').read()) >= 27)"
    res = history.start(recs, HistorySpec(good_refs=[shas[0]], bad_ref="HEAD", cmd=[sys.executable, "-c", script],
                                          timeout=60.0), cwd=repo, progress=False)
    assert res["status"] == "found" and res["first_bad"]["commit"] == shas[27]
    # the two ends, the first search step (asked once the ends are stored), then steps readied ahead
    assert len(placed) > 4, placed
    assert all(hit for _, hit in placed[3:]), placed  # every later step's commit was readied, none twice
    assert placed[0] == (shas[-1], True)  # the bad end's worktree was made while the endpoint phase set up
    assert readied[0][1:] == (0, 0)  # the bad end's, before anything ran
    for sha, n_placed, n_stored in readied[1:]:  # each later one while the step just run was not yet stored
        assert n_stored == n_placed - 1 and placed[n_placed - 1][0] not in stored[:n_stored], (sha, n_placed, stored)
    left = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
    assert not left, [(p.pid, p.cmdline()) for p in left]
    assert not (recs.ws.dir / "bisect").exists() or not any((recs.ws.dir / "bisect").rglob("wt0"))
    recs.close()


def _driver(tmp_path, at: int | None = None):
    """A git session's driver over a 6-commit repo (records, repo, shas, driver); ``at``: the
    worktree of slot 0 made at that commit first."""
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace

    repo = tmp_path / "r"
    shas = history.make_repo(repo, 6, lambda i: {"v.txt": f"{i}\n"})
    recs = Records(Workspace(repo / ".dbglog"), create=True)
    db = S.SessionDB(recs.store)
    spec = HistorySpec(good_refs=[shas[0]], bad_ref="HEAD", cmd=["true"], repo=str(repo), bad=shas[-1],
                       goods=[shas[0]], cwd_rel=".")
    d = history._Driver(recs, db.get(db.create("git", spec.to_stored(), None)), progress=False)
    if at is not None:
        d.checkout(0, shas[at])
    return recs, repo, shas, d


def _hook(repo, body: str) -> None:
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.write_text("#!/bin/sh\n" + body)
    hook.chmod(0o755)


def _readying_with_its_hook_running(d, sha):
    """Start readying slot 0 at ``sha`` and wait until its post-checkout hook's ``sleep`` runs: the git."""
    d.ready_ahead(0, sha)
    proc = d._ahead[0][2]
    deadline = time.monotonic() + 30
    while not any("sleep" in (c.name() or "") for c in psutil.Process(proc.pid).children(recursive=True)):
        assert time.monotonic() < deadline, "the hook never started"
        time.sleep(0.02)
    return proc


def test_a_commit_readied_but_not_asked_next_is_checked_out_over(tmp_path):
    """The readying is a hint: when the next commit asked is another (a cached verdict moved the
    search), the checkout waits for the readying git and checks out the commit asked."""
    recs, repo, shas, d = _driver(tmp_path)
    d.ready_ahead(0, shas[2])  # the worktree is made at shas[2] ...
    wt = d.checkout(0, shas[4])  # ... but shas[4] is asked
    assert _git(wt, "rev-parse", "HEAD") == shas[4] and (wt / "v.txt").read_text() == "4\n"
    d.ready_ahead(0, shas[1])
    d.ready_ahead(0, shas[3])  # (one readying per slot: the second hint is dropped)
    assert d.checkout(0, shas[1]) == wt and (wt / "v.txt").read_text() == "1\n"
    d.ready_ahead(0, "f" * 40)  # a commit git does not know: the readying fails, the checkout says why
    with pytest.raises(history.GitError):
        d.checkout(0, "f" * 40)
    d.settle_ahead()
    history.remove_worktrees(repo, d.wt_root)
    recs.close()


def test_a_step_the_verdict_cache_answers_is_not_readied(tmp_path, monkeypatch):
    """A commit whose verdict the cache holds needs no checkout: it is not readied, whether the whole
    search comes from the cache or only some of its steps do."""
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace

    repo = tmp_path / "r"
    shas = history.make_repo(repo, 40, lambda i: {"v.txt": f"{i}\n"})
    recs = Records(Workspace(repo / ".dbglog"), create=True)
    cmd = [sys.executable, "-c", "import sys; sys.exit(int(open('v.txt').read()) >= 13)"]
    first = history.start(recs, HistorySpec(good_refs=[shas[0]], bad_ref="HEAD", timeout=60.0, cmd=cmd), cwd=repo,
                          progress=False)
    readied, placed = [], []
    ready, checkout = history._Driver.ready_ahead, history._Driver.checkout
    monkeypatch.setattr(history._Driver, "ready_ahead", lambda self, k, sha: (readied.append(sha), ready(self, k, sha)))
    monkeypatch.setattr(history._Driver, "checkout", lambda self, k, sha: (placed.append(sha), checkout(self, k, sha))[1])
    again = history.start(recs, HistorySpec(good_refs=[shas[0]], bad_ref="HEAD", timeout=60.0, cmd=cmd), cwd=repo,
                          progress=False)  # every search step from the cache
    assert again["first_bad"]["commit"] == first["first_bad"]["commit"] == shas[13]
    assert readied == [shas[-1]]  # the bad end's worktree only
    readied.clear()
    placed.clear()
    # another range: its first two steps (7, 10) were not run above, the next two (12, 13) were
    part = history.start(recs, HistorySpec(good_refs=[shas[0]], bad_ref=shas[14], timeout=60.0, cmd=cmd), cwd=repo,
                         progress=False)
    assert part["first_bad"]["commit"] == shas[13]
    assert part["cached_steps"] >= 2 and {shas[7], shas[10]} <= set(placed)
    assert set(readied) <= set(placed), (readied, placed)  # nothing readied went unused
    recs.close()


def test_a_steps_triton_cache_is_named_not_made_and_what_a_run_made_there_is_removed(tmp_path):
    """Triton makes its cache dir itself; a step names a fresh one (not shared with any other step)
    and removes whatever a run put there."""
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace

    recs = Records(Workspace(tmp_path / ".dbglog"), create=True)
    code = ("import os, sys; d = os.environ['TRITON_CACHE_DIR']; print('CACHE', d, os.path.exists(d)); "
            "os.makedirs(os.path.join(d, 'abc'), exist_ok=True); open(os.path.join(d, 'abc', 'k.cubin'), 'w').write('x')")
    ex = S.Execution(cmd=[sys.executable, "-c", code], repeat=2)
    seen = []
    for _ in range(2):
        step, records = S.Executor(recs, "sess", ex, workdir=tmp_path / "work").run_trial(
            "k", S.Target(outcome="fail"), cwd=str(tmp_path))
        outs = [tuple(open(r["paths"]["output"]).read().split()[1:3]) for r in records]
        assert [o[0] for o in outs] == [outs[0][0]] * 2  # the repeats of one step share it
        d = outs[0][0]
        assert [o[1] for o in outs] == ["False", "True"]  # made by the first run, as Triton would
        assert os.path.dirname(d) == str(tmp_path / "work")
        assert not os.path.lexists(d)  # what the runs made is gone
        seen.append(d)
    assert seen[0] != seen[1]  # each step its own
    recs.close()


def test_a_readying_git_still_at_work_when_the_session_ends_is_stopped_with_its_hook(tmp_path):
    """The clean-up does not wait for a checkout nobody needs any more (a slow post-checkout hook
    here): git and the hook's children are stopped, and nothing is left running."""
    recs, repo, shas, d = _driver(tmp_path, at=1)
    _hook(repo, "sleep 60\n")
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    proc = _readying_with_its_hook_running(d, shas[3])
    t = time.monotonic()
    d.settle_ahead()
    assert time.monotonic() - t < 30  # (the hook would have slept 60 s)
    assert proc.poll() is not None and not d._ahead
    deadline = time.monotonic() + 30  # (the group got its SIGTERM with git; the hook ends a moment later)
    while True:
        left = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
        alive = [p for p in left if p.status() != psutil.STATUS_ZOMBIE]
        if not alive:
            break
        assert time.monotonic() < deadline, [(p.pid, p.cmdline()) for p in alive]
        time.sleep(0.02)
    for p in left:  # (this test process may be a subreaper: the orphaned hook came to it)
        try:
            os.waitpid(p.pid, os.WNOHANG)
        except ChildProcessError:
            pass
    history.remove_worktrees(repo, d.wt_root)
    recs.close()


@given(dags_and_verdicts())
@settings(max_examples=100, deadline=None)
def test_the_pick_without_logs_is_the_entropy_pick_and_the_memos_hold(case):
    """With no untestable commit the step is chosen by |2w - n| alone (no entropy per candidate):
    the same commit the entropy key picks (a p_skip that names no candidate takes that path). The
    result and the next pick are kept between changes of state: each equals a fresh computation."""
    from dbglog.bisect.algorithms import HistoryBisect

    parents, bad, goods, steps, first_parent = case
    hb = HistoryBisect(parents, bad, goods, first_parent=first_parent)
    for i, (commit, verdict) in enumerate(steps):
        hb.record(commit, verdict)
        t = hb._testable()
        assert hb._choose(1, t, {}) == hb._choose(1, t, {"(no such commit)": 0.0})
        assert hb.result == hb._result()
        fresh = HistoryBisect(parents, bad, goods, first_parent=first_parent)
        for c, v in steps[:i + 1]:
            fresh.record(c, v)
        assert hb.peek() == fresh.peek() and hb.result == fresh.result


def test_a_readying_git_left_by_a_killed_driver_is_stopped_by_the_resume(tmp_path):
    """It carries the session's marker, like the trials: what a resume reaps after a kill -9."""
    recs, repo, shas, d = _driver(tmp_path, at=1)
    _hook(repo, "sleep 60\n")
    proc = _readying_with_its_hook_running(d, shas[3])
    group = [proc.pid, *(c.pid for c in psutil.Process(proc.pid).children(recursive=True))]
    S.reap_leftovers(d.sid)  # (what `bisect resume` does first, when the driver was killed)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 30
    while any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in group):
        assert time.monotonic() < deadline, group
        time.sleep(0.02)
    d._ahead.clear()
    history.remove_worktrees(repo, d.wt_root)
    recs.close()


def test_a_checkout_the_readying_saw_fail_is_not_run_again(tmp_path):
    """A failing post-checkout hook: the readying's checkout failed, so the step makes the worktree
    anew at once instead of running the same checkout again first (the hook runs twice, not three times)."""
    recs, repo, shas, d = _driver(tmp_path, at=1)
    calls = tmp_path / "calls"
    _hook(repo, f"echo run >> {calls}\nexit 1\n")
    d.ready_ahead(0, shas[3])
    try:
        d.checkout(0, shas[3])
    except history.GitError:
        pass  # (the worktree cannot be made with that hook either: the step is untestable)
    assert calls.read_text().count("run") == 2
    d.settle_ahead()
    history.remove_worktrees(repo, d.wt_root)
    recs.close()
