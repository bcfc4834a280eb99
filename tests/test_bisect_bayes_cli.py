"""Probabilistic bisection end to end (python -m dbglog), plus the issue-13/17 bisect fixes it
touches: SIGTERM of either kind, refused bisections, secrets in the session spec."""

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from conftest import cli_env, run_cli_inproc
from conftest import run_cli as run_cli_process
from dbglog.bisect.history import make_repo


def run_cli(*args, cwd):
    """Bisections run as real processes; the record commands around them in-process (faster)."""
    if args[0] == "bisect" and args[1] in ("git", "toggles", "resume"):
        return run_cli_process(*args, cwd=cwd)
    return run_cli_inproc(cwd, *args)


PY = sys.executable

# A flaky repro whose runs are a function of (commit, how many times that commit ran): reruns of
# a session give other runs, a test gives the same ones every time.
CHECK = r"""
import hashlib, json, os, sys, time
spec = json.load(open(sys.argv[2]))
v = int(open("version.txt").read())
with open(sys.argv[1], "a") as f:
    f.write("%d\n" % v)
k = sum(1 for line in open(sys.argv[1]) if line.strip() == str(v))
time.sleep(spec.get("sleep", 0))
if spec.get("token") and (len(sys.argv) < 4 or sys.argv[3] != spec["token"]):
    sys.exit(7)
r = int(hashlib.sha256(("%s:%d:%d" % (spec.get("seed", 0), v, k)).encode()).hexdigest()[:8], 16) / 2**32
rate = spec["rate"] if v >= spec["culprit"] else spec.get("good_rate", 0.0)
if r < rate:
    raise ValueError("the bug")
"""


def setup(tmp_path, n=32, **spec):
    repo = tmp_path / "repo"
    shas = make_repo(repo, n, lambda i: {"version.txt": f"{i}\n"})
    (tmp_path / "check.py").write_text(CHECK)
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    assert run_cli("init", cwd=repo).returncode == 0
    cmd = [PY, str(tmp_path / "check.py"), str(tmp_path / "count.log"), str(tmp_path / "spec.json")]
    return repo, shas, cmd


def bisect_git(repo, cmd, *args):
    p = run_cli("bisect", "git", "--grace", "0.5", "--json", *args, "--", *cmd, cwd=repo)
    return p, (json.loads(p.stdout) if p.stdout.strip().startswith("{") else None)


def db_rows(repo, sql, *params):
    with sqlite3.connect(repo / ".dbglog" / "dbglog.db") as con:
        con.row_factory = sqlite3.Row
        return con.execute(sql, params).fetchall()


def test_flaky_git_finds_the_culprit_with_its_probability_and_records_it(tmp_path):
    repo, shas, cmd = setup(tmp_path, rate=0.5, culprit=19, seed=1)
    run_cli("new", "Intermittent ValueError", "--no-env", cwd=repo)
    p, res = bisect_git(repo, cmd, "--good", shas[0], "--bad", "HEAD", "--flaky")
    assert p.returncode == 0, p.stderr
    assert res["status"] == "found" and res["first_bad"]["commit"] == shas[19]
    assert res["mode"] == "flaky" and 0.95 <= res["probability"] < 1
    assert res["posterior"][0]["commit"] == shas[19]
    v = res["verification"]
    assert v["culprit"]["failed"] >= 1 and v["parent"]["commit"] == shas[18] and v["parent"]["failed"] == 0
    assert "probability" in res["report"]
    md = run_cli("show", "--markdown", cwd=repo).stdout
    assert "with probability" in md and "not certainty" in md and "(P=0.9" in md


def test_kill_9_then_resume_starts_from_the_same_posterior(tmp_path):
    repo, shas, cmd = setup(tmp_path, 16, rate=0.6, culprit=11, seed=2, sleep=0.05)
    proc = subprocess.Popen([PY, "-m", "dbglog", "bisect", "git", "--grace", "0.5", "--flaky", "--good", shas[0],
                             "--bad", "HEAD", "--", *cmd], cwd=repo, env=cli_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while True:
        assert proc.poll() is None and time.monotonic() < deadline
        rows = db_rows(repo, "SELECT runs FROM bisect_trials WHERE runs LIKE '%posterior%'")
        if len(rows) >= 3:
            break
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    last = db_rows(repo, "SELECT runs FROM bisect_trials ORDER BY seq DESC LIMIT 1")[0]["runs"]
    st = json.loads(run_cli("bisect", "status", "--json", cwd=repo).stdout)
    assert st["status"] == "interrupted"
    before = json.loads(last)["posterior"]  # as the killed driver had it after its last recorded step
    assert st["posterior"]["top"] == before  # recomputed from the recorded runs alone
    p = run_cli("bisect", "resume", "--json", cwd=repo)
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)
    assert res["first_bad"]["commit"] == shas[11] and res["probability"] >= 0.95


def test_repeats_that_disagree_switch_to_the_probabilistic_search(tmp_path):
    repo, shas, cmd = setup(tmp_path, 8, rate=0.6, culprit=5, seed=3)
    p, res = bisect_git(repo, cmd, "--good", shas[0], "--bad", "HEAD", "--repeat", "3")
    assert p.returncode in (0, 1), p.stderr
    assert res["mode"] == "flaky"  # not refused, not a "flaky" dead end: every run weighed
    assert res["status"] == "found" and res["first_bad"]["commit"] == shas[5]


def test_rate_bisection_finds_where_the_failure_rate_went_up(tmp_path):
    repo, shas, cmd = setup(tmp_path, 8, rate=0.85, good_rate=0.1, culprit=3, seed=4)
    p, res = bisect_git(repo, cmd, "--good", shas[0], "--bad", "HEAD", "--rate")
    assert p.returncode == 0, p.stderr
    assert res["mode"] == "rate" and res["first_bad"]["commit"] == shas[3]
    assert 0.05 < res["rates"]["fail_if_good"] < 0.35 and res["rates"]["fail_if_bad"] > 0.6


TOGGLE_REPRO = r"""
import hashlib, os, sys, time
time.sleep(float(os.environ.get("SLEEP", "0")))
log = sys.argv[1]
key = ",".join(sorted(k for k in "ABCDEF" if os.environ.get(k)))
with open(log, "a") as f:
    f.write(key + "\n")
k = sum(1 for line in open(log) if line.strip() == key)
if os.environ.get("HF_TOKEN") not in (None, sys.argv[2]):
    sys.exit(7)
print("token in use:", os.environ.get("HF_TOKEN"))
r = int(hashlib.sha256(("%s:%d" % (key, k)).encode()).hexdigest()[:8], 16) / 2**32
if os.environ.get("A") and os.environ.get("C") and r < float(os.environ.get("RATE", "0.5")):
    raise RuntimeError("CUDA error: an illegal memory access was encountered")
"""

TOKEN = "hf_" + "Zq8" * 10


def toggles_setup(ws):
    (ws / "repro.py").write_text(TOGGLE_REPRO)
    return [PY, "repro.py", str(ws / "count.log"), TOKEN]


def test_flaky_toggles_find_the_pair_and_secrets_stay_out_of_the_database_and_logs(ws):
    cmd = toggles_setup(ws)
    run_cli("new", "Flaky pair", "--no-env", cwd=ws)
    p = run_cli("bisect", "toggles", "--flaky", "--json", "--env", f"HF_TOKEN={TOKEN}", *[
        x for t in "ABCDE" for x in ("--env", f"{t}=1")], "--", *cmd, cwd=ws)
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)
    assert res["sets"] == [["A", "C"]] and res["probability"] >= 0.95 and "not certainty" in res["message"]
    # the token ran (the repro checks it) but is nowhere in the database or logs/
    with sqlite3.connect(ws / ".dbglog" / "dbglog.db") as con:
        dump = "\n".join(con.iterdump())
    assert "Zq8Zq8" not in dump and "<redacted>" in dump
    for f in (ws / "logs").rglob("*"):
        if f.is_file():
            assert "Zq8Zq8" not in f.read_text(errors="replace"), f
    # the session ended: the real value it kept to rerun with is gone too (issue 30)
    assert not (ws / ".dbglog" / "bisect-secrets" / f"{res['session']}.json").exists()


def test_a_refused_toggle_bisection_is_a_diagnostic_not_a_failed_attempt(ws):
    cmd = toggles_setup(ws)
    run_cli("new", "Never fails", "--no-env", cwd=ws)
    p = run_cli("bisect", "toggles", "--json", "--env", "B=1", "--", *cmd, cwd=ws)
    assert p.returncode == 2 and json.loads(p.stdout)["status"] == "refused"
    attempts = json.loads(run_cli("attempt", "list", "--json", cwd=ws).stdout)
    assert not (attempts.get("attempts") if isinstance(attempts, dict) else attempts)
    assert "Bisection: toggles" in run_cli("show", "--markdown", cwd=ws).stdout  # the diagnosis is kept
    st = json.loads(run_cli("bisect", "status", "--json", cwd=ws).stdout)
    assert st["status"] == "done" and st["result"]["status"] == "refused"


def _sigterm(spawn, args, cwd, env=None):
    proc = spawn([PY, "-m", "dbglog", "bisect", *args], cwd=cwd, env=cli_env(env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    deadline = time.monotonic() + 60
    while len(db_rows(Path(cwd), "SELECT key FROM bisect_trials")) < 2:
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out + err


def test_sigterm_leaves_either_kind_interrupted_and_resumable_with_the_same_message(tmp_path, ws, spawn):
    repo, shas, cmd = setup(tmp_path, 32, rate=1.0, culprit=20, sleep=0.3)
    code_g, text_g = _sigterm(spawn, ["git", "--grace", "0.5", "--good", shas[0], "--bad", "HEAD", "--", *cmd], repo)
    tcmd = toggles_setup(ws)
    code_t, text_t = _sigterm(spawn, ["toggles", "--grace", "0.5", *[x for t in "ABCD" for x in ("--env", f"{t}=1")],
                               "--", *tcmd], ws, env={"SLEEP": "0.3", "RATE": "1"})
    for code, text, where in ((code_g, text_g, repo), (code_t, text_t, ws)):
        assert code == 130, text
        assert "interrupted after" in text and "dbglog bisect resume" in text and "aborted" not in text
        row = db_rows(where, "SELECT status, pid FROM bisect_sessions")[0]
        assert row["status"] == "interrupted" and row["pid"] is None  # no dead pid left behind
        st = json.loads(run_cli("bisect", "status", "--json", cwd=where).stdout)
        assert st["status"] == "interrupted"


def test_git_secret_in_the_command_runs_but_is_not_stored(tmp_path):
    repo, shas, cmd = setup(tmp_path, 16, rate=1.0, culprit=5, token=TOKEN)
    p, res = bisect_git(repo, cmd + [TOKEN], "--good", shas[0], "--bad", "HEAD")
    assert p.returncode == 0, p.stderr  # the repro exits 7 unless it got the real token
    assert res["first_bad"]["commit"] == shas[5]
    with sqlite3.connect(repo / ".dbglog" / "dbglog.db") as con:
        spec = con.execute("SELECT spec FROM bisect_sessions").fetchone()[0]
    assert "Zq8Zq8" not in spec and "<redacted>" in spec
    assert not (repo / ".dbglog" / "bisect-secrets" / f"{res['session']}.json").exists()  # ended: gone (issue 30)


FLAKY_X = r"""
import hashlib, os, sys
log = sys.argv[1]
key = ",".join(sorted(k for k in "XY" if os.environ.get(k)))
with open(log, "a") as f:
    f.write(key + "\n")
k = sum(1 for line in open(log) if line.strip() == key)
r = int(hashlib.sha256(("%s:%d" % (key, k)).encode()).hexdigest()[:8], 16) / 2**32
if os.environ.get("X") and r < 0.5:
    raise RuntimeError("CUDA error: an illegal memory access was encountered")
"""


def test_flaky_trials_headline_states_only_what_was_established(ws):
    # issue 17.8: X fails half the time, Y is irrelevant; "X and Y fail only together" was the
    # headline with --repeat 3
    (ws / "fx.py").write_text(FLAKY_X)
    p = run_cli("bisect", "toggles", "--repeat", "3", "--json", "--env", "X=1", "--env", "Y=1", "--",
                PY, "fx.py", str(ws / "fx.log"), cwd=ws)
    res = json.loads(p.stdout)
    assert "only together" not in res["message"]
    assert res["sets"] == [["X"]] or res["exit_code"] != 0


def test_flaky_git_counts_the_investigations_earlier_runs_at_the_bad_end_and_does_not_rerun_it(tmp_path):
    repo, shas, cmd = setup(tmp_path, rate=0.5, culprit=19, seed=1)
    run_cli("new", "Intermittent ValueError", "--no-env", cwd=repo)
    assert run_cli("run", "-q", "--repeat", "6", "--attempt", "baseline", "--", *cmd, cwd=repo).returncode == 1
    earlier = {r["id"] for r in db_rows(repo, "SELECT id FROM runs")}
    p, res = bisect_git(repo, cmd, "--good", shas[0], "--bad", "HEAD", "--flaky")
    assert p.returncode == 0, p.stderr
    assert res["status"] == "found" and res["first_bad"]["commit"] == shas[19]
    assert any("6 earlier run(s) of this command at the bad end" in n for n in res["notes"]), res["notes"]
    # the bad end's failure rate and the target come from those runs: the search never ran it first
    assert res["steps"][0]["commit"] != shas[-1], res["steps"][0]
    assert not earlier & {r for s in res["steps"] for r in s.get("runs", [])}
