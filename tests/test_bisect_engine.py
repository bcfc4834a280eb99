"""In-process unit tests of the bisection engine's shared parts (issue 13): the oracle
(dbglog/bisect/oracle.py: known -> verdict cache -> run, slots, persistence order, counts) and the
session lifecycle (dbglog/bisect/lifecycle.py: interrupt, error, clean-up, conclude), with a fake
place and a fake run -- no subprocess. The drivers end to end are in tests/test_bisect_*.py."""

import os
import signal
import threading
from pathlib import Path

import pytest

from dbglog.bisect import history, lifecycle, toggles
from dbglog.bisect import session as S
from dbglog.bisect.algorithms import Verdict
from dbglog.bisect.oracle import Ask, Oracle, Placement, PlaceFailed

EX = S.Execution(cmd=["./repro"])
TARGET = S.Target(outcome="fail", signature="gpu.illegal_address")


class FakePlace:
    """Slot k of key K: cwd 'slot-k', KEY=K in the environment; keys in ``broken`` cannot be placed."""

    def __init__(self, broken=()):
        self.broken = set(broken)
        self.slots: list[tuple[str, int]] = []
        self.lock = threading.Lock()

    def place(self, ask, slot):
        if ask.key in self.broken:
            raise PlaceFailed(f"infrastructure: cannot place {ask.key}")
        with self.lock:
            self.slots.append((ask.key, slot))
        return Placement(f"slot-{slot}", {"KEY": ask.key})

    def placed(self, ask, records):
        for r in records:
            r["placed"] = ask.key


@pytest.fixture
def fake_runs(monkeypatch):
    """Executor._run stand-in: a key in ``fails`` fails with the target's signature, others pass;
    ``gate[key]`` (an Event) holds that key's run until it is set; ``then[key]`` is set once it ran."""
    state = {"fails": set(), "gate": {}, "then": {}, "calls": []}

    def run(self, argv, cwd, env, timeout, launched=False, escalation=None):
        key = env["KEY"]
        state["calls"].append({"key": key, "cwd": cwd, "env": dict(env)})
        if key in state["gate"]:
            assert state["gate"][key].wait(30)
        if key in state["then"]:
            state["then"][key].set()
        bad = key in state["fails"]
        n = len(state["calls"])
        return {"id": f"r{n}-{key}", "outcome": "fail" if bad else "pass", "exit_code": 1 if bad else 0,
                "signature": "gpu.illegal_address" if bad else None, "duration_s": 0.1}

    monkeypatch.setattr(S.Executor, "_run", run)
    monkeypatch.setattr(S.SessionDB, "record", _record_without_runs(S.SessionDB.record))
    return state


def _record_without_runs(real):
    # the fake run records are not real runs: keep them out of the runs table
    def record(self, sid, step, ckey, runs=()):
        return real(self, sid, step, ckey, ())
    return record


def ask(key, ckey=None):
    return Ask(key, f"label {key}", EX, TARGET, ckey or f"ck-{key}")


# --- the oracle ---------------------------------------------------------------------------


def test_known_then_cache_then_run(recs, fake_runs):
    db = S.SessionDB(recs.store)
    old = db.create("git", {}, None)
    db.record(old, S.Step("a", Verdict.BAD, "fail"), "ck-a")  # the same trial, another session
    sid = db.create("git", {}, None)
    fake_runs["fails"] = {"b"}
    o = Oracle(recs, sid, FakePlace(), signatures=[])
    seen = []
    o.answer([ask("a"), ask("b"), ask("c")], lambda a, st, rs: seen.append((a.key, st.verdict)) or st,
             before_run=lambda todo: seen.append([a.key for a in todo]))
    assert seen == [["b", "c"], ("b", Verdict.BAD), ("c", Verdict.GOOD)]  # "a" came from the cache
    assert [c["key"] for c in fake_runs["calls"]] == ["b", "c"]
    assert (o.executed, o.cached_steps) == (2, 1)
    steps = {t.key: t for t in db.trials(sid)}
    assert steps["a"].source == "cache" and steps["a"].verdict is Verdict.BAD
    assert steps["b"].verdict is Verdict.BAD and steps["b"].runs == ["r1-b"]
    # asked again: every key is known, nothing runs, nothing is stored twice
    o.answer([ask("a"), ask("b"), ask("c")])
    assert len(fake_runs["calls"]) == 2 and len(db.trials(sid)) == 3
    # a fresh oracle of the session knows them too (it reads the persisted steps)
    assert set(Oracle(recs, sid, FakePlace(), signatures=[]).known) == {"a", "b", "c"}


def test_confirmed_only_cache_and_skips_are_not_reused(recs, fake_runs):
    db = S.SessionDB(recs.store)
    old = db.create("toggles", {}, None)
    db.record(old, S.Step("a", Verdict.BAD, "fail"), "ck-a")
    db.record(old, S.Step("s", Verdict.SKIP, "infra"), "ck-s")
    sid = db.create("toggles", {}, None)
    o = Oracle(recs, sid, FakePlace(), signatures=[])
    assert o.lookup("a", "ck-a", confirmed_only=True) is None  # that session never finished with exit 0
    assert o.lookup("s", "ck-s") is None
    assert o.lookup("a2", "ck-a").key == "a2"


@pytest.mark.parametrize("ordered, expect", [(False, ["fast", "slow"]), (True, ["slow", "fast"])])
def test_steps_are_stored_as_they_finish(recs, fake_runs, ordered, expect):
    db = S.SessionDB(recs.store)
    sid = db.create("git", {}, None)
    gate = fake_runs["gate"]["slow"] = threading.Event()
    place = FakePlace()
    o = Oracle(recs, sid, place, jobs=2, signatures=[])
    stored_before = {}

    if ordered:
        fake_runs["then"]["fast"] = gate  # "slow" finishes after "fast" ran, is handed over first

    def done(a, st, rs):
        stored_before[a.key] = [t.key for t in db.trials(sid)]  # what a kill -9 right now would keep
        if a.key == "fast":
            gate.set()  # "slow" finishes only after "fast" was handed over
        return st

    # "slow" is asked first but finishes last
    o.run([ask("slow"), ask("fast")], done, ordered=ordered)
    assert [t.key for t in db.trials(sid)] == expect
    if not ordered:
        assert stored_before == {"fast": [], "slow": ["fast"]}  # fast was durable before slow ended
    assert sorted(k for _, k in place.slots) == [0, 1]  # two trials at once: two slots
    assert {c["cwd"] for c in fake_runs["calls"]} == {"slot-0", "slot-1"}


def test_on_done_decides_what_is_stored_and_place_failures_are_skips(recs, fake_runs):
    db = S.SessionDB(recs.store)
    sid = db.create("git", {}, None)
    o = Oracle(recs, sid, FakePlace(broken={"x"}), signatures=[])
    kept = {}
    o.run([ask("x"), ask("y")], lambda a, st, rs: kept.setdefault(a.key, (st, rs)) and None)
    assert db.trials(sid) == [] and o.executed == 2  # nothing stored: the driver keeps them
    st, rs = kept["x"]
    assert st.verdict is Verdict.SKIP and st.reason == "infrastructure: cannot place x" and rs == []
    st, rs = kept["y"]
    assert st.verdict is Verdict.GOOD and rs[0]["placed"] == "y"  # the place annotated the record
    env = fake_runs["calls"][0]["env"]
    assert env["KEY"] == "y" and env[S.SESSION_VAR] == sid


# --- the lifecycle -------------------------------------------------------------------------


def _session(recs):
    db = S.SessionDB(recs.store)
    return db, db.create("toggles", {}, None)


def test_interrupt_leaves_the_session_resumable_with_the_one_message(recs):
    db, sid = _session(recs)
    log = []

    def drive():
        db.record(sid, S.Step("k1", Verdict.BAD, "fail"), "ck1")
        raise KeyboardInterrupt

    res = lifecycle.run(recs, sid, "toggles", drive, prepare=lambda: log.append("prepare"),
                        cleanup=(lambda: log.append("cleanup"),), conclude=lambda r: log.append("conclude"))
    assert res == {"session": sid, "kind": "toggles", "status": "interrupted", "exit_code": 130,
                   "message": f"interrupted after 1 step(s); `dbglog bisect resume {sid}` continues "
                              "(finished steps are kept)"}
    assert log == ["prepare", "cleanup"]  # nothing concluded
    s = db.get(sid)
    assert s["status"] == "interrupted" and s["pid"] is None


def test_sigterm_is_an_interrupt_and_the_handlers_come_back(recs):
    db, sid = _session(recs)
    before = signal.getsignal(signal.SIGTERM)

    def drive():
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):  # the handler runs between bytecodes
            threading.Event().wait(0.01)
        raise AssertionError("SIGTERM did not interrupt the driver")

    res = lifecycle.run(recs, sid, "git", drive)
    assert res["status"] == "interrupted" and res["exit_code"] == 130
    assert signal.getsignal(signal.SIGTERM) is before
    assert db.get(sid)["status"] == "interrupted"


def test_an_error_releases_the_session_and_is_raised(recs):
    db, sid = _session(recs)
    log = []

    def drive():
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        lifecycle.run(recs, sid, "git", drive, cleanup=(lambda: log.append("cleanup"),),
                      conclude=lambda r: log.append("conclude"))
    assert log == ["cleanup"]
    s = db.get(sid)
    assert s["status"] == "interrupted" and s["pid"] is None  # resumable, no dead pid


def test_conclude_runs_after_the_clean_up(recs):
    db, sid = _session(recs)
    log = []
    res = lifecycle.run(recs, sid, "git", lambda: {"status": "found", "exit_code": 0},
                        cleanup=(lambda: log.append("cleanup"),),
                        conclude=lambda r: log.append(("conclude", r["status"])) or r | {"recorded": True})
    assert log == ["cleanup", ("conclude", "found")] and res["recorded"] is True
    assert db.get(sid)["status"] == "running"  # finishing is the kind's conclude, not the lifecycle's


def test_a_failing_clean_up_step_does_not_stop_the_others(recs):
    db, sid = _session(recs)
    log = []

    def bad():
        raise OSError("gone")

    with pytest.raises(OSError):
        lifecycle.run(recs, sid, "git", lambda: {"status": "x"}, cleanup=(bad, lambda: log.append("second")))
    assert log == ["second"]


# --- per-step scratch under the session's work dir (kill -9 leaves nothing in /tmp) ------------


def test_triton_cache_lives_in_the_session_work_dir_and_goes_with_its_clean_up(recs, fake_runs, tmp_path):
    db = S.SessionDB(recs.store)
    for kind, mod in (("toggles", toggles), ("git", history)):
        sid = db.create(kind, {}, None)
        o = Oracle(recs, sid, FakePlace(), signatures=[])
        o.run([ask("k")])
        cache = fake_runs["calls"][-1]["env"]["TRITON_CACHE_DIR"]
        work = S.workdir_root(recs) / sid
        assert Path(cache).parent == work and Path(cache).name.startswith("dbglog-triton-")
        assert not Path(cache).exists()  # removed after the step
        # a driver killed with -9 mid-step leaves its cache dir: the session's clean-up takes it
        (work / "dbglog-triton-leftover").mkdir(parents=True)
        mod.cleanup(recs, {"id": sid, "spec": {"repo": str(tmp_path / "no-repo")}})
        assert not work.exists()


def test_calibration_is_the_failing_ends_failure_and_time():
    failing = [{"outcome": "fail", "signature": "gpu.illegal_address", "duration_s": 3.0},
               {"outcome": "fail", "signature": "oom.cuda", "duration_s": 4.0}]
    t, timeout = S.calibrate(failing, match=None, any_failure=False, user_timeout=None)
    assert (t.outcome, t.signature, timeout) == ("fail", "gpu.illegal_address", 20.0)  # 5x the slowest
    t, timeout = S.calibrate(failing, match="gpu.*", any_failure=False, user_timeout=7.5)
    assert t.match == "gpu.*" and timeout == 7.5
    hang = [{"outcome": "hang", "signature": None, "duration_s": 60.0, "timeout": 60.0}]
    assert S.calibrate(hang, match=None, any_failure=True, user_timeout=None)[1] == 60.0


# --- one liveness rule for a session's driver ------------------------------------------------


def test_driver_liveness_is_proctrees_create_time_rule(recs):
    import subprocess
    import sys

    db = S.SessionDB(recs.store)
    sid = db.create("git", {}, None)

    def drive_by(pid, driver):
        with recs.store.write():
            recs.store.q("UPDATE bisect_sessions SET pid = ?, driver = ? WHERE id = ?", pid, driver, sid)

    plain = subprocess.Popen(["sleep", "60"])  # a driver whose command line does not say dbglog
    named = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "dbglog"])
    try:
        drive_by(plain.pid, S._stamp(plain.pid))
        assert db.get(sid)["status"] == "running" and db.live_driver(sid).pid == plain.pid
        # the pid now names another process (reused): its create time differs, whatever its name
        drive_by(named.pid, f"{named.pid}:1000000000.0")  # (2001: a wall-clock create time, never a start since boot)
        assert db.get(sid)["status"] == "interrupted" and db.live_driver(sid) is None
        drive_by(named.pid, None)  # an older dbglog's row (no create time): the command line decides
        assert db.get(sid)["status"] == "running"
    finally:
        for p in (plain, named):
            p.kill()
            p.wait()
    drive_by(plain.pid, S._stamp(plain.pid) or f"{plain.pid}:1.0")
    assert db.get(sid)["status"] == "interrupted"  # gone
    db.claim(sid)
    row = recs.store.q("SELECT pid, driver FROM bisect_sessions WHERE id = ?", sid).fetchone()
    assert row["pid"] == os.getpid() and row["driver"].startswith(f"{os.getpid()}:")
    db.release(sid)
    assert recs.store.q("SELECT driver FROM bisect_sessions WHERE id = ?", sid).fetchone()[0] is None


def test_a_drivers_stamp_is_read_by_its_start_since_boot_when_the_wall_clock_moved():
    import subprocess

    from dbglog.run import proctree

    child = subprocess.Popen(["sleep", "60"])
    try:
        boot = proctree.since_boot(child.pid)
        if boot is None:
            pytest.skip("no /proc here: the create time alone decides")
        wall = proctree.create_time(child.pid)
        # the wall-clock create time stamped in another process before a 30 s step: the start ticks still agree
        assert S._alive(child.pid, f"{child.pid}:{wall - 30.0!r}:{boot!r}")
        # the same wall time but another start since boot: a reused pid
        assert not S._alive(child.pid, f"{child.pid}:{wall!r}:{boot - 2.0!r}")
        assert S._stamp(child.pid).count(":") == 2
    finally:
        child.kill()
        child.wait()


# --- the typed spec: validation beside the fields ------------------------------------------------


def test_specs_refuse_bad_input_in_one_line():
    from dbglog.bisect.kinds import Toggle
    from dbglog.bisect.spec import HistorySpec, ToggleSpec
    from dbglog.util.errors import DbglogError

    ok = HistorySpec(cmd=["./repro"], good_refs=["v1"], bad_ref="HEAD")
    ok.validate()
    for change, words in (({"cmd": []}, "no command"), ({"good_refs": []}, "at least one --good"),
                          ({"repeat": 0}, "--repeat must be at least 1"), ({"timeout": 0}, "--timeout must be"),
                          ({"confidence": 1.0}, "--confidence must be between"),
                          ({"match": "x", "any_failure": True}, "contradict"),
                          ({"launcher": "srun '"}, "cannot parse --launcher")):
        bad = HistorySpec(**{**vars(ok), **change})
        with pytest.raises(DbglogError, match=words):
            bad.validate()
    t = ToggleSpec(cmd=["./repro"])
    t.validate()
    with pytest.raises(DbglogError, match="bad --mode 'sideways'"):
        ToggleSpec(cmd=["x"], mode="sideways").validate()
    with pytest.raises(DbglogError, match="--max-runs must be at least 1"):
        ToggleSpec(cmd=["x"], max_runs=0).validate()
    with pytest.raises(DbglogError, match="--in-place edits the real files"):
        ToggleSpec(cmd=["x"], in_place=True, jobs=2).validate_with([])
    with pytest.raises(DbglogError, match="count mode bisects the calls of one toggle"):
        ToggleSpec(cmd=["x"], count="c").validate_with([Toggle("c", "coop")])


def test_a_session_stored_by_an_older_dbglog_reads_with_defaults(recs, tmp_path):
    """Stored specs keep their keys; keys a newer dbglog added are read with their defaults."""
    repo = tmp_path / "repo"
    shas = history.make_repo(repo, 4, lambda i: {"v.txt": f"{i}\n"})
    db = S.SessionDB(recs.store)
    old = {"repo": str(repo), "bad": shas[-1], "bad_ref": "HEAD", "goods": [shas[0]], "cmd": ["./repro"],
           "calibrated": None}  # no cwd_rel, jobs, captures, server, escalate, scratch, flaky ...
    s = db.get(db.create("git", old, None))
    d = history._Driver(recs, s, progress=False)
    ex = d.execution(12.0)
    assert (ex.repeat, ex.grace, ex.server, ex.escalate, ex.captures, d.jobs) == (1, 5.0, None, False, (), 1)
    assert history.describe(recs, s)["candidates_left"] == 3
    t = {"toggles": [{"name": "A", "kind": "env", "var": "A", "value": "1"}], "root": str(tmp_path),
         "cwd": str(tmp_path), "files": {}, "mode": "auto", "search": {}, "argv": "x",
         "execution": {"cmd": ["./repro"], "timeout": None}}  # before server, escalate, shared_cache ...
    from dbglog.bisect.spec import ToggleSpec

    ex = toggles._execution(ToggleSpec.from_stored(t))
    assert (ex.cmd, ex.repeat, ex.shared_cache, ex.idle_timeout) == (["./repro"], 1, False, None)
    trials = toggles.Trials(recs, {"id": "old", "spec": t})
    assert trials.env_for({"A"}) == {"A": "1"} and trials.jobs == 1 and not trials.in_place


def test_collect_hands_back_every_end_in_the_order_asked_and_stores_nothing(recs, fake_runs):
    """The endpoint phases run their ends through ``Oracle.collect``: judged (and stored) by the
    target once the failing end has defined what "bad" means."""
    db = S.SessionDB(recs.store)
    sid = db.create("toggles", {}, None)
    fake_runs["fails"] = {"on"}
    fake_runs["gate"]["on"] = threading.Event()
    fake_runs["then"]["off"] = fake_runs["gate"]["on"]  # "on" (asked first) finishes last
    o = Oracle(recs, sid, FakePlace(), jobs=2, signatures=[])
    got = o.collect([ask("on"), ask("off")])
    assert [(st.key, st.verdict) for st, _ in got] == [("on", Verdict.BAD), ("off", Verdict.GOOD)]
    assert [[r["placed"] for r in rs] for _, rs in got] == [["on"], ["off"]]
    assert db.trials(sid) == [] and o.known == {} and o.executed == 2


# --- the stored spec, typed: from_stored / to_stored ----------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from dbglog.bisect.spec import HistorySpec, ToggleSpec  # noqa: E402

_word = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_opt_word = st.none() | _word
_secs = st.none() | st.floats(0.1, 1e4, allow_nan=False)
_step = dict(cmd=st.lists(_word, min_size=1, max_size=4), build=_opt_word, timeout=_secs,
             grace=st.floats(0, 60, allow_nan=False), repeat=st.integers(1, 9), jobs=st.integers(1, 8),
             launcher=_opt_word, match=_opt_word, any_failure=st.booleans(),
             captures=st.lists(_word, max_size=3).map(tuple), on_hang=st.lists(_word, max_size=2).map(tuple),
             scratch=_opt_word, server=_opt_word, ready=_opt_word, ready_timeout=st.floats(1, 600, allow_nan=False),
             idle_timeout=_secs, shared_cache=st.booleans(), escalate=st.booleans())
_sha = st.text("0123456789abcdef", min_size=40, max_size=40)
_target = st.none() | st.fixed_dictionaries({"outcome": st.sampled_from(["fail", "hang"]), "signature": _opt_word,
                                              "match": _opt_word, "any_failure": st.booleans()})
_extra = st.dictionaries(st.sampled_from(["added_later", "secrets_lost"]), st.integers() | _word, max_size=2)

HISTORY_SPECS = st.builds(
    HistorySpec, **_step, bad_ref=_word, first_parent=st.booleans(), max_steps=st.none() | st.integers(1, 99),
    flaky=st.sampled_from([False, True, "auto"]), rate=st.booleans(), confidence=st.floats(0.51, 0.99),
    repo=_word, cwd_rel=_word, bad=_sha, goods=st.lists(_sha, min_size=1, max_size=3),
    good_labels=st.lists(_word, max_size=3), size_hint=st.none() | st.integers(1, 40),
    candidates=st.none() | st.integers(0, 10**6), notes=st.lists(_word, max_size=2),
    calibrated=st.none() | st.fixed_dictionaries({"target": _target.filter(bool), "timeout": _secs}),
    recorded=_opt_word, earlier=st.none() | st.lists(_opt_word.filter(bool), max_size=3), extra=_extra)
TOGGLE_SPECS = st.builds(
    ToggleSpec, **_step, count=_opt_word, from_diffs=st.sampled_from([None, ""]),
    mode=st.sampled_from(["auto", "enable", "disable"]), max_sets=st.none() | st.integers(1, 9),
    max_set_size=st.none() | st.integers(1, 9), max_runs=st.none() | st.integers(1, 999),
    strategy=st.sampled_from(["auto", "ddmin"]), exhaustive=st.booleans(), in_place=st.booleans(),
    bad_if_any=st.booleans(), flaky=st.booleans(), confidence=st.floats(0.51, 0.99),
    budget=st.none() | st.integers(1, 999), argv_text=_word,
    toggles=st.lists(st.fixed_dictionaries({"name": _word, "kind": st.just("env"), "var": _word, "value": _word}),
                     max_size=3),
    root=_word, cwd=_word, files=st.dictionaries(_word, _sha, max_size=2), step_timeout=_secs, target=_target,
    count_max=st.none() | st.integers(1, 99), attempt=st.none() | st.integers(1, 99), extra=_extra)

#: the keys start() has always written (sessions in the field have them; resume reads them)
HISTORY_KEYS = {"repo", "cwd_rel", "bad", "bad_ref", "goods", "good_labels", "cmd", "build", "timeout", "grace",
                "repeat", "jobs", "launcher", "match", "any_failure", "first_parent", "captures", "on_hang",
                "size_hint", "candidates", "notes", "calibrated", "recorded", "max_steps", "scratch", "server",
                "ready", "ready_timeout", "idle_timeout", "shared_cache", "flaky", "rate", "confidence", "escalate",
                "earlier"}
TOGGLE_KEYS = {"toggles", "root", "cwd", "files", "in_place", "jobs", "mode", "count", "from_diffs", "search",
               "execution", "user_timeout", "match", "any_failure", "bad_if_any", "scratch", "flaky", "confidence",
               "budget", "argv"}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(HISTORY_SPECS)
def test_history_spec_round_trips_through_its_stored_form(s):
    import json

    stored = json.loads(json.dumps(s.to_stored()))  # as the session row holds it
    assert HistorySpec.from_stored(stored) == s
    assert set(stored) == HISTORY_KEYS | set(s.extra)
    assert stored["flaky"] in (None, True, "auto") and isinstance(stored["captures"], list)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TOGGLE_SPECS)
def test_toggle_spec_round_trips_through_its_stored_form(s):
    import json

    stored = json.loads(json.dumps(s.to_stored()))
    assert ToggleSpec.from_stored(stored) == s
    learned = {k for k in ("target", "count_max", "attempt") if getattr(s, k) is not None}
    assert set(stored) == TOGGLE_KEYS | learned | set(s.extra)
    ex = stored["execution"]
    assert set(ex) == set(vars(S.Execution(cmd=["x"]))) and ex["timeout"] == s.step_timeout
    assert (stored["user_timeout"], stored["argv"], stored["from_diffs"]) == (s.timeout, s.argv_text,
                                                                             s.from_diffs is not None)
    assert set(stored["search"]) == {"max_sets", "max_set_size", "max_runs", "strategy", "exhaustive"}


def test_a_stored_none_reads_as_the_default_and_unknown_keys_are_written_back():
    h = HistorySpec.from_stored({"bad": "b", "goods": ["g"], "cmd": ["x"], "jobs": None, "flaky": None,
                                 "captures": None, "ready_timeout": None, "from_a_newer_dbglog": [1]})
    assert (h.jobs, h.flaky, h.captures, h.ready_timeout, h.timeout) == (1, False, (), 120.0, None)
    assert h.to_stored()["from_a_newer_dbglog"] == [1] and h.to_stored()["flaky"] is None
    t = ToggleSpec.from_stored({"toggles": [], "execution": {"cmd": ["x"], "timeout": 7.0, "quiet": True},
                                "user_timeout": None, "from_diffs": True, "search": {"max_runs": 5}})
    assert (t.step_timeout, t.timeout, t.from_diffs, t.max_runs, t.strategy) == (7.0, None, "", 5, "auto")
    assert "target" not in t.to_stored()  # learned keys appear once learned, as ever


def test_a_stop_signal_while_concluding_does_not_lose_the_answer(recs):
    # The search is over: a SIGTERM (or Ctrl-C) while the answer is recorded is noted, not acted
    # on, so the result is recorded in full and the command ends with it (it used to be the default
    # action: the process died with -15, the answer half-recorded).
    db, sid = _session(recs)
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    log = []

    def conclude(r):
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            os.kill(os.getpid(), sig)
        log.append("recorded")
        return r | {"recorded": True}

    res = lifecycle.run(recs, sid, "toggles", lambda: {"status": "found", "exit_code": 0}, conclude=conclude)
    assert res == {"status": "found", "exit_code": 0, "recorded": True} and log == ["recorded"]
    assert {s: signal.getsignal(s) for s in before} == before


# --- the one endpoint phase (oracle.verify_ends) --------------------------------------------------

from dbglog.bisect.oracle import END_TIMEOUT, EndsPlan, verify_ends  # noqa: E402


@pytest.fixture
def scripted(monkeypatch):
    """Executor._run stand-in: ``script[key]`` lists the outcomes of that key's runs in turn ("fail":
    the failure, "other": a different failure, "pass"; the last one repeats); every run takes 3 s."""
    state = {"script": {}, "calls": []}

    def run(self, argv, cwd, env, timeout, launched=False, escalation=None):
        key = env["KEY"]
        outs = state["script"].get(key, ["pass"])
        what = outs[min(sum(c["key"] == key for c in state["calls"]), len(outs) - 1)]
        state["calls"].append({"key": key, "timeout": timeout})
        return {"id": f"r{len(state['calls'])}-{key}", "outcome": "pass" if what == "pass" else "fail",
                "exit_code": 0 if what == "pass" else 1, "duration_s": 3.0, "timeout": timeout,
                "signature": {"fail": "gpu.illegal_address", "other": "oom.cuda"}.get(what)}

    monkeypatch.setattr(S.Executor, "_run", run)
    monkeypatch.setattr(S.SessionDB, "record", _record_without_runs(S.SessionDB.record))
    return state


def _ends(recs, script, state, ends, *, jobs=1, repeat=1, timeout=None, db=None, **kw):
    """Run the phase over a fresh session with ``script``; (Ends, what was saved, the session's steps by key
    with their cache keys, the keys run in order)."""
    state["script"].update(script)
    db = db or S.SessionDB(recs.store)
    sid = db.create("git", {}, None)
    saved = []
    o = Oracle(recs, sid, FakePlace(), jobs=jobs, signatures=[])
    plan = EndsPlan(list(ends), lambda k, ex, t, ck: Ask(k, f"label {k}", ex, t, ck),
                    S.Execution(cmd=["./repro"], repeat=repeat, timeout=timeout),
                    lambda k, ex, t: f"final:{k}:{ex.timeout}",
                    lambda t, secs, failing: saved.append((t.describe(), secs, failing)), user_timeout=timeout, **kw)
    got = verify_ends(o, plan)
    rows = {r["key"]: (r["cache_key"], r["verdict"]) for r in
            recs.store.q("SELECT key, cache_key, verdict FROM bisect_trials WHERE session_id = ?", sid)}
    return got, saved, rows, [c["key"] for c in state["calls"]]


def test_told_bad_end_first_then_the_good_ends_judged_by_the_target_it_set(recs, scripted):
    got, saved, rows, ran = _ends(recs, {"bad": ["fail"]}, scripted, ["bad", "g1", "g2"], failing="bad",
                                  provisional="prov:bad", roles=("bad end", "good end"))
    assert got.refused is None and ran == ["bad", "g1", "g2"]
    assert saved == [("fail [gpu.illegal_address]", 15.0, "bad")]  # 5x the failing run's 3 s
    assert [c["timeout"] for c in scripted["calls"]] == [END_TIMEOUT, 15.0, 15.0]  # the cap, then calibrated
    assert got.execution.timeout == 15.0 and got.failing == "bad"
    assert rows == {"bad": ("prov:bad", "bad"), "g1": ("final:g1:15.0", "good"), "g2": ("final:g2:15.0", "good")}


def test_a_bad_end_that_passes_is_refused_before_any_good_end_runs(recs, scripted):
    got, saved, rows, ran = _ends(recs, {"bad": ["pass"]}, scripted, ["bad", "good"], failing="bad",
                                  provisional="prov:bad")
    assert got.refused.why == "failing" and got.refused.step.verdict is Verdict.GOOD
    assert ran == ["bad"] and saved == []  # one run: the good end cost nothing
    assert rows == {"bad": ("prov:bad", "good")}  # the refused end is on the record


def test_with_jobs_a_good_end_runs_beside_the_bad_end_and_is_not_kept_when_it_is_refused(recs, scripted):
    got, _, rows, ran = _ends(recs, {"bad": ["other", "pass"]}, scripted, ["bad", "good"], failing="bad",
                              provisional="prov:bad", repeat=2, jobs=2)
    assert sorted(ran) == ["bad", "bad", "good", "good"]
    assert got.refused.why == "failing" and got.refused.step.verdict is Verdict.FLAKY
    assert got.refused.step.reason == "repeats disagree: 1 of 2 failed"  # strict: a flaky bad end is refused
    assert list(rows) == ["bad"]


def test_a_good_end_beside_the_bad_end_is_judged_later_and_cached_only_with_the_final_timeout(recs, scripted):
    got, _, rows, ran = _ends(recs, {"bad": ["fail"]}, scripted, ["bad", "good"], failing="bad", jobs=2)
    assert got.refused is None and sorted(ran) == ["bad", "good"]  # no second run of the good end
    sid = recs.store.q("SELECT id FROM bisect_sessions ORDER BY rowid DESC LIMIT 1").fetchone()[0]
    # it ran with the 600 s cap, not the calibrated 15 s: no other session may take it as the answer
    assert rows["good"] == ("endpoint:" + sid + "good", "good") and rows["bad"][0] == "endpoint:" + sid + "bad"


@pytest.mark.parametrize("good, why", [("fail", "fails the same way"), ("other", "fails differently")])
def test_a_failing_good_end_is_refused(recs, scripted, good, why):
    got, _, rows, ran = _ends(recs, {"bad": ["fail"], "good": [good]}, scripted, ["bad", "good"], failing="bad")
    r = got.refused
    assert r.why == "passing" and r.key == "good" and ran == ["bad", "good"]
    assert r.step.verdict is (Verdict.BAD if good == "fail" else Verdict.SKIP)
    assert ("different failure" in r.step.reason) is (good == "other")
    assert rows["good"][1] == r.step.verdict.value


def test_a_cached_bad_end_costs_no_run_and_calibrates_from_its_summary(recs, scripted):
    db = S.SessionDB(recs.store)
    old = db.create("git", {}, None)
    db.record(old, S.Step("bad", Verdict.BAD, "fail", "fail", "gpu.illegal_address", 4.0), "prov:bad")
    got, saved, rows, ran = _ends(recs, {}, scripted, ["bad", "good"], failing="bad", provisional="prov:bad",
                                  db=db)
    assert ran == ["good"] and got.steps["bad"].source == "cache"
    assert saved == [("fail [gpu.illegal_address]", 20.0, "bad")]
    assert rows == {"bad": ("prov:bad", "bad"), "good": ("final:good:20.0", "good")}


def test_learning_the_direction_runs_both_ends_and_takes_the_failing_one(recs, scripted):
    got, saved, rows, ran = _ends(recs, {"off": ["fail"]}, scripted, ["on", "off"], may_fail=("on", "off"),
                                  strict=False, timeout=15.0)
    assert got.refused is None and got.failing == "off" and ran == ["on", "off"]
    assert saved == [("fail [gpu.illegal_address]", 15.0, "off")]
    # they ran with the user's timeout, the final one: both go to the verdict cache
    assert rows == {"on": ("final:on:15.0", "good"), "off": ("final:off:15.0", "bad")}
    assert got.steps["off"].counts == [1, 0, 0]


@pytest.mark.parametrize("script, may_fail", [({"on": ["fail"], "off": ["fail"]}, ("on", "off")),  # both fail
                                              ({}, ("on", "off")),  # neither does
                                              ({"off": ["fail"]}, ("on",))])  # the way --mode forbids
def test_learning_refuses_unless_one_allowed_end_fails_and_records_the_ends(recs, scripted, script, may_fail):
    got, saved, rows, ran = _ends(recs, script, scripted, ["on", "off"], may_fail=may_fail, strict=False)
    assert got.refused.why == "direction" and saved == [] and ran == ["on", "off"]
    sid = recs.store.q("SELECT id FROM bisect_sessions ORDER BY rowid DESC LIMIT 1").fetchone()[0]
    assert {k: ck for k, (ck, _) in rows.items()} == {"on": f"endpoint:{sid}on", "off": f"endpoint:{sid}off"}
    assert {k: st.verdict.value for k, st in got.steps.items()} == {k: v for k, (_, v) in rows.items()}


def test_a_flaky_failing_end_is_the_failing_end_when_learning(recs, scripted):
    got, saved, rows, _ = _ends(recs, {"on": ["pass", "fail"]}, scripted, ["on", "off"], may_fail=("on", "off"),
                                strict=False, repeat=2)
    assert got.refused is None and got.failing == "on" and saved[0][2] == "on"
    assert got.steps["on"].verdict is Verdict.FLAKY and got.steps["on"].counts == [1, 1, 0]


def test_learning_refuses_a_failing_end_that_never_matches_the_target(recs, scripted):
    got, saved, _, _ = _ends(recs, {"on": ["other"]}, scripted, ["on", "off"], may_fail=("on", "off"),
                             strict=False, match="gpu.*")
    assert got.refused.why == "target" and got.refused.key == "on" and saved == []
    assert "does not match 'gpu.*'" in got.refused.step.reason


def test_a_stored_calibration_is_not_run_again_on_resume(recs, scripted):
    got, saved, rows, ran = _ends(recs, {}, scripted, ["bad", "good"], failing="bad", roles=("bad end", "good end"),
                                  calibrated=(TARGET, 42.0))
    assert ran == ["good"] and saved == [] and scripted["calls"][0]["timeout"] == 42.0
    assert got.steps["bad"].reason == "bad end" and list(rows) == ["good"]  # nothing stored for the bad end
