"""In-process unit tests of the bisection session lifecycle (dbglog/bisect/session.py): verdict rules,
the executor's repeats with a fake run, persisted state and the verdict cache, sealed secrets,
release/claim/finish (resume), a dead or reused driver pid, leftovers of a killed driver, progress.

The drivers end to end (git history, toggles, signals, kill -9) are in tests/test_bisect_*.py."""

import json
import os
import subprocess
import sys
import time

import psutil
import pytest

from dbglog.bisect import drivers
from dbglog.bisect import session as S
from dbglog.bisect.algorithms import Verdict
from dbglog.util.errors import DbglogError

BAD = {"outcome": "fail", "signature": "gpu.illegal_address", "exit_code": 1}


def run(outcome="fail", signature=None, exit_code=1, **kw):
    return {"outcome": outcome, "signature": signature, "exit_code": exit_code, **kw}


# --- verdict rules -------------------------------------------------------------------


def test_target_judges_the_same_failure_bad_and_anything_else_skip():
    t = S.target_for([BAD], match=None, any_failure=False)
    assert t.describe() == "fail [gpu.illegal_address]"
    assert t.judge(run(signature="gpu.illegal_address"))[0] == "bad"
    assert t.judge(run("pass", exit_code=0)) == ("good", "passed")
    kind, why = t.judge(run(signature="oom.cuda"))
    assert kind == "skip" and "different failure" in why and "gpu.illegal_address" in why
    assert t.judge(run("hang", signature="gpu.illegal_address"))[0] == "skip"  # outcome counts too
    assert t.judge(run(exit_code=125, signature="gpu.illegal_address"))[0] == "skip"  # git bisect's "untestable"
    assert t.judge(run("error", error="no such file"))[1] == "could not start: no such file"
    assert t.judge(run(signature="gpu.illegal_address", infra_tainted=True))[0] == "skip"
    assert S.Target(outcome="fail").describe() == "fail (no signature)"


def test_target_any_failure_and_match(tmp_path):
    assert S.Target(any_failure=True).judge(run(signature="oom.cuda"))[0] == "bad"
    assert S.Target(any_failure=True).judge(run("pass", exit_code=0))[0] == "good"
    glob = S.Target(match="gpu.*")
    assert glob.judge(run(signature="gpu.illegal_address"))[0] == "bad"
    assert glob.judge(run(signature="oom.cuda"))[0] == "skip"
    assert S.Target(match="hang").judge(run("hang"))[0] == "bad"  # an outcome name
    out = tmp_path / "output"
    out.write_text("step 12\nRuntimeError: NaN in loss at step 12\n")
    rx = S.Target(match=r"NaN in loss")
    assert rx.judge(run(paths={"output": str(out)}))[0] == "bad"  # a regex over the output
    assert rx.judge(run(paths={"output": str(tmp_path / "gone")}))[0] == "skip"
    assert S.Target(match="(").judge(run(paths={"output": str(out)}))[0] == "skip"  # bad regex: no match


@pytest.mark.parametrize("kinds, verdict", [
    (["bad"], Verdict.BAD),
    (["bad", "bad"], Verdict.BAD),
    (["good", "good"], Verdict.GOOD),
    (["good", "bad"], Verdict.FLAKY),
    (["skip", "bad", "good"], Verdict.FLAKY),
    (["skip"], Verdict.SKIP),
    (["skip", "bad"], Verdict.SKIP),  # partly untestable: still uncertain
])
def test_verdict_of_combines_repeats(kinds, verdict):
    v, reason = S.verdict_of([(k, f"{k} reason") for k in kinds])
    assert v == verdict
    if verdict == Verdict.FLAKY:
        assert reason.startswith("repeats disagree")
    if kinds == ["good", "good"]:
        assert reason == "passed (2×)"


# --- executor with a fake run ----------------------------------------------------------


class FakeRuns:
    """Stands in for Executor._run: hands out the given outcomes in order and records the calls."""

    def __init__(self, outcomes, build=None):
        self.outcomes = list(outcomes)
        self.build = build
        self.calls = []

    def __call__(self, argv, cwd, env, timeout, launched=False, escalation=None):
        self.calls.append({"argv": argv, "env": dict(env), "launched": launched})
        if not launched:
            outcome = self.build
        else:
            outcome = self.outcomes.pop(0)
        n = len(self.calls)
        sig = "gpu.illegal_address" if outcome == "fail" else None
        return {"id": f"r{n}", "outcome": outcome, "signature": sig, "exit_code": 0 if outcome == "pass" else 1,
                "duration_s": 0.5}


def executor(monkeypatch, recs, outcomes, build=None, **ex):
    e = S.Executor(recs, "sid-1", S.Execution(cmd=["./repro"], build="make" if build else None, **ex))
    fake = FakeRuns(outcomes, build)
    monkeypatch.setattr(e, "_run", fake)
    return e, fake


TARGET = S.Target(outcome="fail", signature="gpu.illegal_address")


def test_trial_repeats_and_reports_counts(monkeypatch, recs):
    e, fake = executor(monkeypatch, recs, ["fail", "pass", "fail"], repeat=3)
    step, records = e.run_trial("k1", TARGET, cwd=".", env={"A": "1"})
    assert step.verdict == Verdict.FLAKY and step.counts == [2, 1, 0]
    assert step.runs == ["r1", "r2", "r3"] and step.duration_s == 1.5 and len(records) == 3
    env = fake.calls[0]["env"]
    assert env[S.SESSION_VAR] == "sid-1" and env["A"] == "1"  # leftovers can be found by the session
    cache = env["TRITON_CACHE_DIR"]
    assert cache.startswith(os.path.join(os.path.dirname(cache), "dbglog-triton-"))
    assert not os.path.exists(cache)  # a fresh cache per step, removed afterwards
    assert fake.calls[0]["argv"] == ["./repro"]


def test_trial_stops_early(monkeypatch, recs):
    e, fake = executor(monkeypatch, recs, ["pass", "fail", "fail", "fail"], repeat=4)
    step, _ = e.run_trial("k", TARGET, cwd=".", stop="bad")
    assert len(fake.calls) == 2 and step.counts == [1, 1, 0] and step.verdict == Verdict.FLAKY
    e, fake = executor(monkeypatch, recs, ["fail", "fail", "pass", "fail"], repeat=4)
    step, _ = e.run_trial("k", TARGET, cwd=".", stop="mixed")
    assert len(fake.calls) == 3 and step.verdict == Verdict.FLAKY
    e, fake = executor(monkeypatch, recs, ["pass"] * 3, repeat=3)
    step, _ = e.run_trial("k", TARGET, cwd=".", stop="bad")
    assert len(fake.calls) == 3 and step.verdict == Verdict.GOOD


def test_failed_build_skips_the_step_without_running_it(monkeypatch, recs):
    e, fake = executor(monkeypatch, recs, ["fail"], build="fail", repeat=2)
    step, records = e.run_trial("k", TARGET, cwd=".")
    assert step.verdict == Verdict.SKIP and step.reason.startswith("build failed: fail")
    assert step.counts == [0, 0, 2] and [c["launched"] for c in fake.calls] == [False]
    assert fake.calls[0]["argv"] == ["sh", "-c", "make"]
    e, fake = executor(monkeypatch, recs, ["fail"], build="pass")
    step, records = e.run_trial("k", TARGET, cwd=".")
    assert step.verdict == Verdict.BAD and step.runs == ["r1", "r2"] and len(records) == 2


def test_shared_cache_and_launcher_prefix(monkeypatch, recs):
    e, fake = executor(monkeypatch, recs, ["pass"], shared_cache=True, launcher="env FOO=1")
    e.run_trial("k", TARGET, cwd=".", cmd=["./other"])
    assert "TRITON_CACHE_DIR" not in fake.calls[0]["env"]
    assert fake.calls[0]["argv"] == ["env", "FOO=1", "./other"]


def test_a_real_trial_through_the_runner_is_recorded(recs, tmp_path):
    e = S.Executor(recs, "sid-real", S.Execution(cmd=[sys.executable, "-c", "import sys; sys.exit(3)"]))
    step, records = e.run_trial("HEAD", S.Target(any_failure=True), cwd=str(tmp_path))
    assert step.verdict == Verdict.BAD and records[0]["exit_code"] == 3
    db = S.SessionDB(recs.store)
    sid = db.create("git", {"cmd": ["x"]}, None)
    db.record(sid, step, "ck", records)
    assert recs.store.get_run(records[0]["id"])["outcome"] == "fail"


def test_unknown_capture_preset_fails_before_any_step():
    with pytest.raises(DbglogError):
        S.Execution(cmd=["x"], captures=("no-such-preset",))


def test_run_parallel_keeps_order():
    assert S.run_parallel(lambda x: x * 2, [3, 1, 2], jobs=3) == [6, 2, 4]
    assert S.run_parallel(lambda x: x, [], jobs=4) == []


# --- persisted state and the cache ------------------------------------------------------


def test_cache_key_covers_what_changes_the_verdict():
    ex = S.Execution(cmd=["./repro"])
    k = S.cache_key("git", "abc", ex, TARGET)
    assert k == S.cache_key("git", "abc", S.Execution(cmd=["./repro"]), TARGET)
    assert k != S.cache_key("git", "abd", ex, TARGET)
    assert k != S.cache_key("toggles", "abc", ex, TARGET)
    assert k != S.cache_key("git", "abc", S.Execution(cmd=["./repro", "-v"]), TARGET)
    assert k != S.cache_key("git", "abc", S.Execution(cmd=["./repro"], repeat=3), TARGET)
    assert k != S.cache_key("git", "abc", ex, S.Target(any_failure=True))
    assert k != S.cache_key("git", "abc", ex, TARGET, extra={"env": {"X": "1"}})
    assert k != S.cache_key("git", "abc", S.Execution(cmd=["./repro"], server="srv"), TARGET)


def test_create_get_list_record_and_replay(recs):
    db = S.SessionDB(recs.store)
    sid = db.create("git", {"cmd": ["./repro"], "good": "v1"}, None)
    s = db.get(sid)
    assert s["status"] == "running" and s["pid"] == os.getpid() and s["spec"]["good"] == "v1"
    assert db.get(sid[:12])["id"] == sid and db.get()["id"] == sid
    assert [x["id"] for x in db.list()] == [sid]
    db.record(sid, S.Step("a", Verdict.BAD, "fail", counts=[1, 0, 0], posterior=[["a", 0.9]]), "ck-a")
    db.record(sid, S.Step("b", Verdict.SKIP, "build failed"), "ck-b")
    db.record(sid, S.Step("a", Verdict.GOOD, "passed", runs=["r9"]), "ck-a2")  # a later verdict replaces it
    steps = db.trials(sid)
    assert [(t.key, t.verdict) for t in steps] == [("b", Verdict.SKIP), ("a", Verdict.GOOD)]
    assert steps[1].runs == ["r9"] and steps[1].counts is None
    db.record(sid, S.Step("c", Verdict.BAD, counts=[2, 0, 0], posterior=[["c", 0.5]]), "ck-c")
    assert db.trials(sid)[-1].counts == [2, 0, 0] and db.trials(sid)[-1].posterior == [["c", 0.5]]
    db.update_spec(sid, {"cmd": ["./repro"], "timeout": 12.5})
    assert db.get(sid)["spec"] == {"cmd": ["./repro"], "timeout": 12.5}


def test_ambiguous_and_unknown_refs_are_one_line(recs):
    db = S.SessionDB(recs.store)
    with pytest.raises(DbglogError, match="no bisection found"):
        db.get()
    db.create("git", {}, None)
    db.create("git", {}, None)
    with pytest.raises(DbglogError, match="matches several bisections"):
        db.get("2")
    with pytest.raises(DbglogError, match="no bisection found matching 'zz'"):
        db.get("zz")


def test_cache_reuses_only_trustworthy_verdicts(recs):
    db = S.SessionDB(recs.store)
    one = db.create("git", {}, None)
    db.record(one, S.Step("a", Verdict.BAD, "x"), "ck-bad")
    db.record(one, S.Step("b", Verdict.SKIP, "infra"), "ck-skip")
    db.record(one, S.Step("c", Verdict.GOOD, "marked by hand", source="manual"), "ck-manual")
    hit = db.cached("ck-bad")
    assert hit.verdict == Verdict.BAD and hit.source == "cache"
    assert db.cached("ck-skip") is None and db.cached("ck-manual") is None and db.cached("nope") is None
    assert db.cached("ck-bad", confirmed_only=True) is None  # the session has not finished
    db.finish(one, "done", {"exit_code": 1})
    assert db.cached("ck-bad", confirmed_only=True) is None  # nothing conclusive
    db.finish(one, "done", {"exit_code": 0})
    assert db.cached("ck-bad", confirmed_only=True).verdict == Verdict.BAD


def test_release_claim_finish_lifecycle(recs):
    db = S.SessionDB(recs.store)
    sid = db.create("toggles", {"cmd": ["x"]}, None)
    assert db.live_driver(sid) is None  # this very process is not "another driver"
    db.release(sid)
    s = db.get(sid)
    assert s["status"] == "interrupted" and s["pid"] is None
    db.claim(sid)  # resume
    s = db.get(sid)
    assert s["status"] == "running" and s["pid"] == os.getpid()
    db.finish(sid, "done", {"status": "found", "exit_code": 0})
    s = db.get(sid)
    assert s["status"] == "done" and s["pid"] is None and s["result"]["status"] == "found"
    db.release(sid)  # a finished session is not made resumable again
    assert db.get(sid)["status"] == "done"


def _set_pid(recs, sid, pid):
    with recs.store.write():
        recs.store.q("UPDATE bisect_sessions SET pid = ? WHERE id = ?", pid, sid)


def _child(*args):
    p = subprocess.Popen([sys.executable, "-c", "import sys, time; time.sleep(60)", *args])
    # Until the child has exec'd, /proc shows the parent's command line (a loaded machine widens
    # that window): wait for its own, so "looks like a dbglog driver" is about the child.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if list(args) == psutil.Process(p.pid).cmdline()[-len(args):]:
                break
        except psutil.Error:
            pass
        time.sleep(0.01)
    return p


def test_a_dead_or_reused_driver_pid_reads_as_interrupted(recs):
    db = S.SessionDB(recs.store)
    sid = db.create("git", {}, None)
    p = subprocess.Popen(["sleep", "60"])  # alive, but not a dbglog process: the pid was reused
    try:
        _set_pid(recs, sid, p.pid)
        assert db.get(sid)["status"] == "interrupted" and db.list()[0]["status"] == "interrupted"
        assert db.live_driver(sid) is None
        db.claim(sid)
        assert db.get(sid)["pid"] == os.getpid()
    finally:
        p.kill()
        p.wait()
    _set_pid(recs, sid, p.pid)  # dead (reaped) now
    assert db.get(sid)["status"] == "interrupted"


def test_a_live_driver_is_not_claimed_twice(recs):
    db = S.SessionDB(recs.store)
    sid = db.create("git", {}, None)
    p = _child("dbglog", "bisect", "resume")  # looks like a dbglog driver
    try:
        _set_pid(recs, sid, p.pid)
        assert db.get(sid)["status"] == "running" and db.get()["id"] == sid
        assert db.live_driver(sid).pid == p.pid
        with pytest.raises(DbglogError, match=f"still being driven by process {p.pid}"):
            db.claim(sid)
    finally:
        p.kill()
        p.wait()
    assert db.live_driver(sid) is None
    db.claim(sid)


def test_leftovers_of_a_killed_driver_are_reaped(recs):
    sid = S.SessionDB(recs.store).create("git", {}, None)
    env = dict(os.environ, **{S.SESSION_VAR: sid})
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env=env)
    other = subprocess.Popen(["sleep", "60"])  # not marked: must survive
    try:
        # (the marker is read from /proc/PID/environ, which holds it once the child has exec'd: on a busy machine
        # the fork may not have got that far yet)
        deadline = time.monotonic() + 30
        while psutil.Process(p.pid).environ().get(S.SESSION_VAR) != sid and time.monotonic() < deadline:
            time.sleep(0.01)
        S.reap_leftovers(sid)
        assert p.wait(timeout=30) is not None
        assert other.poll() is None
    finally:
        for q in (p, other):
            q.kill()
            q.wait()


# --- secrets in a spec ------------------------------------------------------------------


def test_secrets_are_sealed_out_of_the_database_and_back_on_resume(recs):
    db = S.SessionDB(recs.store)
    token = "hf_" + "a1B2c3D4e5F6g7H8i9J0kLmNoPqRsTuVw"
    spec = {"cmd": ["./repro"], "env": [f"HF_TOKEN={token}"]}
    sid = db.create("toggles", spec, None)
    raw = recs.store.q("SELECT spec FROM bisect_sessions WHERE id = ?", sid).fetchone()[0]
    assert token not in raw and json.loads(raw)["sealed"] is True
    path = S.secrets_path(recs.store, sid)
    assert path.stat().st_mode & 0o777 == 0o600
    assert db.get(sid)["spec"] == spec  # resume runs with the real value
    db.update_spec(sid, {"cmd": ["./repro"]})  # nothing secret any more: the file goes
    assert not path.exists() and db.get(sid)["spec"] == {"cmd": ["./repro"]}
    db.update_spec(sid, spec)
    path.unlink()
    db.release(sid)
    assert db.get(sid)["spec"].get("secrets_lost") is True
    with pytest.raises(DbglogError, match="cannot resume: the secret values"):
        db.claim(sid)


# --- progress and helpers -----------------------------------------------------------------


def test_progress_lines_when_not_a_terminal_and_silence_when_disabled(capsys):
    p = S.Progress(5)
    assert not p.tty  # pytest's stderr is not a terminal
    p.running("abc123", left=8, est=3)
    p.stepped(S.Step("abc123", Verdict.BAD, "fail [x]", duration_s=1.25), "abc123")
    p.stepped(S.Step("def456", Verdict.GOOD, source="cache"), "def456")
    p.close()
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("dbglog bisect: testing abc123 · 8 candidates left · ~3 steps to go (")
    assert err[1:] == ["  abc123: bad — fail [x] [1.2s]", "  def456: good [cache]"] and p.done == 2
    q = S.Progress(5, enabled=False)
    q.running("x")
    q.stepped(S.Step("x", Verdict.BAD), "x")
    q.close()
    assert capsys.readouterr().err == "" and q.done == 0


def test_default_timeout_md_cell_and_invalid_mark(recs):
    assert S.default_timeout([{"outcome": "fail", "duration_s": 0.4}]) == 10.0  # the floor
    assert S.default_timeout([{"outcome": "fail", "duration_s": 7.0}]) == 35.0
    assert S.default_timeout([{"outcome": "hang", "duration_s": 60, "timeout": 60}]) == 60
    assert S.md_cell("a|b\\c\nd") == "a\\|b\\\\c d" and S.md_cell(None) == ""
    sid = S.SessionDB(recs.store).create("git", {}, None)
    with pytest.raises(DbglogError, match="invalid verdict 'maybe'"):
        drivers.mark(recs, S.SessionDB(recs.store).get(sid), "HEAD", "maybe")
    with pytest.raises(DbglogError, match="unknown bisection kind"):
        drivers.driver("svn")
