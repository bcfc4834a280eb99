"""An attempt on an intermittent failure is judged by its failure rate against the baseline's
(dbglog/kb/rates.py): a "fix" failing as often as the baseline is failed, not partial; one that
never fails in enough runs is worked; too few runs say how many more would settle it. A
server-shaped attempt records its server and readiness, so the line runs it again."""

import json
import socket
import sys

from conftest import REPROS, run_cli
from dbglog.kb import rates
from dbglog.kb.records import Records
from dbglog.util.workspace import Workspace


def test_an_unchanged_rate_is_failed_and_says_it_is_a_guess_with_its_counts():
    v = rates.compare(4, 8, 4, 8)
    assert (v.verdict, v.outcome) == ("unchanged", "failed")
    assert v.words.startswith("guess from failure rates: unchanged") and "4 of 8" in v.words


def test_no_failure_in_20_runs_against_half_failing_is_fixed():
    v = rates.compare(0, 20, 4, 8)
    assert (v.verdict, v.outcome) == ("fixed", "worked") and v.p_value < 0.05


def test_a_rerun_is_judged_against_the_original_not_as_a_fix_against_a_baseline():
    held = rates.again(0, 8, 0, 8)  # a fixed attempt run again: its result holds, it is not "unchanged"
    assert held.verdict == "same" and held.outcome == "" and "holds: no failure" in held.words
    assert "fails less" not in held.words and "baseline" not in held.words
    assert "a failure in every run" in rates.again(5, 5, 8, 8).words
    back = rates.again(6, 8, 0, 20)  # the fix no longer holds
    assert back.verdict == "more" and "fails more often than the original" in back.words and back.p_value <= 0.05
    assert rates.again(0, 20, 4, 8).verdict == "less"
    same = rates.again(4, 8, 3, 8)
    assert same.verdict == "same" and same.words.startswith("guess from failure rates: no sign of a different rate")
    assert same.to_dict()["outcome"] is None


def test_fewer_failures_is_better_and_more_is_worse():
    assert rates.compare(1, 20, 10, 20).outcome == "partial"
    assert rates.compare(8, 8, 2, 8).verdict == "worse"


def test_too_few_runs_is_inconclusive_and_says_how_many_more():
    v = rates.compare(0, 3, 4, 8)
    assert v.outcome == "inconclusive" and v.more_runs and f"about {v.more_runs} more run" in v.words
    # the runs it asks for do settle it
    assert rates.compare(0, 3 + v.more_runs, 4, 8).verdict == "fixed"


def _attempts(workdir):
    recs = Records(Workspace(workdir / ".dbglog"))
    try:
        return recs.store.load(recs.resolve(None)).attempts
    finally:
        recs.close()


# fails every other run (a counter file beside it), or never once FIXED exists
FLAKY = """import os, sys
n = int(open('count').read()) if os.path.exists('count') else 0
open('count', 'w').write(str(n + 1))
sys.exit(0 if os.path.exists('FIXED') or n % 2 else 3)
"""


def test_a_fix_failing_as_often_as_the_baseline_is_recorded_failed_then_a_real_fix_worked(dbg, workdir):
    (workdir / "race.py").write_text(FLAKY)
    assert dbg("new", "race fails half the time", "--no-env")[0] == 0
    cmd = ["--", sys.executable, "race.py"]
    assert dbg("run", "-q", "--repeat", "8", "--attempt", "baseline", *cmd)[0] == 1
    assert dbg("run", "-q", "--repeat", "8", "--attempt", "set NCCL_ALGO=Ring", *cmd)[0] == 1
    (workdir / "FIXED").write_text("")
    assert dbg("run", "-q", "--repeat", "20", "--attempt", "the real fix", *cmd)[0] == 0
    base, same, fixed = _attempts(workdir)
    assert base.outcome == "inconclusive" and "no baseline runs" in base.result
    assert same.outcome == "failed" and "unchanged" in same.result and "4 of 8" in same.result
    assert fixed.outcome == "worked" and "0 of 20" in fixed.result


def test_a_server_shaped_attempt_records_its_server_and_readiness(workdir):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = f"{sys.executable} {REPROS / 'fake_http_server.py'} {port}"
    ready = f"http://127.0.0.1:{port}/v1/models"
    assert run_cli("new", "server hangs", "--no-env", cwd=workdir).returncode == 0
    r = run_cli("run", "--json", "--attempt", "with the server", "--server", server, "--ready", ready, "--grace", "1",
                "--", sys.executable, str(REPROS / "fake_http_client.py"), str(port), cwd=workdir,
                env={"FAKE_SERVER_MODE": "ok"})
    assert json.loads(r.stdout)["server"]["cmd"] == server.split(), r.stderr
    did = _attempts(workdir)[0].did.splitlines()[0]
    assert did.startswith("dbglog run --server ") and f"--ready {ready}" in did
    assert str(port) in did.split(" -- ")[0] and "fake_http_client.py" in did.split(" -- ")[1]


def test_rerun_reproduces_a_server_shaped_attempt_and_compares_the_rates(workdir):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = f"{sys.executable} {REPROS / 'fake_http_server.py'} {port}"
    env = {"FAKE_SERVER_MODE": "ok"}
    assert run_cli("new", "server flakes", "--no-env", cwd=workdir).returncode == 0
    r = run_cli("run", "-q", "--repeat", "2", "--attempt", "as is", "--server", server, "--ready",
                f"http://127.0.0.1:{port}/v1/models", "--env", "MY_FLAG=1", "--", sys.executable,
                str(REPROS / "fake_http_client.py"), str(port), cwd=workdir, env=env)
    assert r.returncode == 0, r.stderr
    p = run_cli("rerun", "1", "--json", cwd=workdir, env=env)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["source"].startswith("attempt 1") and d["original"] == {"failed": 0, "runs": 2}
    assert len(d["runs"]) == 2 and all(x["outcome"] == "pass" for x in d["runs"])
    assert all(x["server"]["cmd"] == server.split() and x["server"]["state"] == "stopped" for x in d["runs"])
    assert all(x["env_overrides"] == {"MY_FLAG": "1"} for x in d["runs"])
    assert d["comparison"]["verdict"] == "same" and d["comparison"]["outcome"] is None  # 0 of 2 against 0 of 2
    assert d["comparison"]["words"].startswith("the original's result holds: no failure")
    bad = run_cli("rerun", "7", cwd=workdir)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr


def test_baseline_runs_taken_first_judge_an_env_fix(dbg, workdir):
    (workdir / "race.sh").write_text(
        "n=$(cat count 2>/dev/null || echo 0); echo $((n + 1)) > count\n"
        "[ \"$FIX\" = 1 ] && exit 0; [ $((n % 2)) = 1 ]\n")
    assert dbg("new", "race fails half the time", "--no-env")[0] == 0
    cmd = ["--", "sh", "race.sh"]
    assert dbg("run", "-q", "--baseline", "8", "--repeat", "8", "--attempt", "NOOP=1", "--env", "NOOP=1", *cmd)[0] == 1
    assert dbg("run", "-q", "--baseline", "8", "--repeat", "20", "--attempt", "FIX=1", "--env", "FIX=1", *cmd)[0] == 0
    noop, fix = _attempts(workdir)
    assert noop.outcome == "failed" and "against the baseline's 4 of 8" in noop.result
    assert fix.outcome == "worked" and "0 of 20" in fix.result
    code, _, err = dbg("run", "--baseline", "3", "--", "sh", "race.sh")
    assert code == 2 and "--baseline goes with --attempt" in err


def _half_failing_baseline(workdir) -> list[str]:
    """An investigation whose repro fails every other run, with its 8-run baseline recorded: the repro's argv."""
    (workdir / "race.sh").write_text(
        "n=$(cat count 2>/dev/null || echo 0); echo $((n + 1)) > count\n"
        "[ $((n % 2)) = 1 ] || { echo 'RuntimeError: NCCL watchdog timeout' >&2; exit 1; }\n")
    assert run_cli("new", "watchdog fires half the time", "--no-env", cwd=workdir).returncode == 0
    cmd = ["--", "sh", "race.sh"]
    assert run_cli("run", "-q", "--repeat", "8", "--attempt", "baseline", *cmd, cwd=workdir).returncode == 1
    return cmd


def test_three_fixes_that_change_nothing_trip_the_circuit_breaker(workdir):
    cmd = _half_failing_baseline(workdir)
    breakers = []
    for fix in ("NCCL_ALGO=Ring", "NCCL_PROTO=Simple", "NCCL_IB_DISABLE=1"):
        p = run_cli("run", "--json", "--repeat", "8", "--attempt", f"set {fix}", *cmd, cwd=workdir)
        d = json.loads(p.stdout)
        assert d["attempt"]["outcome"] == "failed", d["attempt"]
        breakers.append(d.get("circuit_breaker"))
    assert breakers[0] is None and breakers[-1], breakers  # the third unchanged fix trips it


def test_an_env_fix_is_judged_against_the_same_command_run_without_it(dbg, workdir):
    (workdir / "race.py").write_text(FLAKY)
    assert dbg("new", "race fails half the time", "--no-env")[0] == 0
    cmd = ["--", sys.executable, "race.py"]
    assert dbg("run", "-q", "--repeat", "8", "--attempt", "baseline", *cmd)[0] == 1
    assert dbg("run", "-q", "--repeat", "8", "--attempt", "NCCL_ALGO=Ring", "--env", "NCCL_ALGO=Ring", *cmd)[0] == 1
    assert _attempts(workdir)[1].outcome == "failed"
    # the command hook cites it before the agent runs that fix again
    hook = run_cli("hook", "pre-command", cwd=workdir, input=f"NCCL_ALGO=Ring {sys.executable} race.py")
    assert "[FAILED] attempt 2" in hook.stdout + hook.stderr and "unchanged" in hook.stdout + hook.stderr


def test_plain_runs_of_the_repro_since_the_investigation_began_are_the_baseline_of_a_later_fix(dbg, workdir):
    # "dbglog run --repeat 8 -- CMD" first (no --attempt: those runs belong to no investigation), then the fix: it is
    # judged against them, and says so, instead of "no baseline runs ... a guess either way"
    (workdir / "race.py").write_text(FLAKY)
    cmd = ["--", sys.executable, "race.py"]
    assert dbg("run", "-q", "--repeat", "4", *cmd)[0] == 1  # made yesterday, before the investigation: not its baseline
    recs = Records(Workspace(workdir / ".dbglog"))
    with recs.store.write():
        recs.store.q("UPDATE runs SET started = '2000-01-01T00:00:00.000Z'")
    recs.close()
    assert dbg("new", "race fails half the time", "--no-env")[0] == 0
    assert dbg("run", "-q", "--repeat", "8", *cmd)[0] == 1
    assert dbg("run", "-q", "--repeat", "8", "--attempt", "NCCL_ALGO=Ring", "--env", "NCCL_ALGO=Ring", *cmd)[0] == 1
    (fix,) = _attempts(workdir)
    assert fix.outcome == "failed" and "against the baseline's 4 of 8" in fix.result
    assert "the baseline: 8 run(s) of this command made without --attempt" in fix.result


def test_earlier_runs_of_the_same_env_fix_are_not_its_baseline(dbg, workdir):
    (workdir / "race.py").write_text(FLAKY)
    assert dbg("new", "race fails half the time", "--no-env")[0] == 0
    cmd = ["--", sys.executable, "race.py"]
    for _ in range(2):  # the same fix twice, and never the repro as it is: nothing to compare with
        assert dbg("run", "-q", "--repeat", "8", "--attempt", "NCCL_ALGO=Ring", "--env", "NCCL_ALGO=Ring", *cmd)[0] == 1
    first, again = _attempts(workdir)
    assert first.outcome == again.outcome == "inconclusive" and "no baseline runs" in again.result
    assert "dbglog run --repeat 8 -- CMD" in again.result  # (and how to get one)


def test_a_rate_guess_is_printed_and_the_breaker_of_an_intermittent_failure_offers_a_flaky_bisection(workdir):
    cmd = _half_failing_baseline(workdir)
    for fix in ("NCCL_ALGO=Ring", "NCCL_PROTO=Simple"):
        run_cli("run", "-q", "--repeat", "8", "--attempt", f"set {fix}", *cmd, cwd=workdir)
    p = run_cli("run", "--repeat", "8", "--attempt", "set NCCL_IB_DISABLE=1", *cmd, cwd=workdir)
    lines = p.stdout.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("Attempt 4 recorded") and ln.endswith("(failed)"))
    assert lines[at + 1].startswith("  guess from failure rates: unchanged — failed 4 of 8 runs")  # (not a verdict)
    assert "dbglog bisect git --flaky --good REV" in p.stdout  # (runs that disagree: a plain bisection would refuse)
