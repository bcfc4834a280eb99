"""kill -9 of an --in-place toggle bisection at random moments: the next dbglog command restores
every source file byte for byte (journal in the database), and the session can still be resumed."""

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys

from conftest import cli_env, run_cli, run_cli_inproc

PY = sys.executable

STEP = """\
import os, sys
# the repro may kill its supervisor (the bisection driver) on its N-th run: a kill mid-trial
counter, kill_at = os.environ.get("KILL_COUNTER"), int(os.environ.get("KILL_AT", "0"))
if counter and kill_at:
    n = int(open(counter).read() or 0) + 1 if os.path.exists(counter) else 1
    open(counter, "w").write(str(n))
    if n == kill_at:
        os.kill(os.getppid(), 9)
from helpers import ops
out = []
out.append(ops.a())  # dbglog: suspect a
out.append(ops.b())  # dbglog: suspect b
# dbglog: begin c
out.append(ops.c())
out.append(ops.c())
# dbglog: end c
out.append(ops.d())  # dbglog: suspect d
out.append(ops.e())  # dbglog: suspect e
if "b" in out and "e" in out:
    raise RuntimeError("CUDA error: an illegal memory access was encountered")
"""
OPS = """\
def a(): return "a"
def b(): return "b"
def c(): return "c"
# dbglog: begin f
def unused(): return "u"
# dbglog: end f
def d(): return "d"
TRACE = False  # dbglog: suspect g
def e(): return "e"
"""


def snapshot(d):
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_kill_minus_9_in_place_always_restored(ws, tmp_path):
    src = ws / "src"
    (src / "helpers").mkdir(parents=True)
    (src / "step.py").write_text(STEP)
    (src / "helpers" / "ops.py").write_bytes(OPS.encode() + b"# trailing bytes \xc3\xa9\r\n")
    (src / "helpers" / "__init__.py").write_text("")
    os.chmod(src / "step.py", 0o750)
    original = snapshot(src)
    modes = {p: os.stat(src / p).st_mode for p in original}
    rng = random.Random(7)
    restored_any = 0
    for i in range(22):
        env = cli_env()
        by_repro = i % 2 == 1
        if by_repro:
            env |= {"KILL_COUNTER": str(tmp_path / f"counter{i}"), "KILL_AT": str(rng.randint(1, 14))}
        # a distinct command per iteration so no trial is answered from the cache of an earlier one
        cmd = [PY, "-m", "dbglog", "bisect", "toggles", "--in-place", "--suspects", "src", "--timeout", "20",
               "--", PY, "src/step.py", str(i)]
        proc = subprocess.Popen(cmd, cwd=ws, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, text=True)
        if not by_repro:
            n = rng.randint(0, 16)
            for _ in range(n):
                if not proc.stderr.readline():
                    break
            proc.send_signal(signal.SIGKILL)
        proc.stderr.read()
        proc.wait(timeout=60)
        changed = snapshot(src) != original
        restored_any += changed
        p = run_cli_inproc(ws, "list")  # any command restores what a dead driver left edited (in-process: faster)
        assert p.returncode == 0, p.stderr
        assert snapshot(src) == original, f"iteration {i}: not restored"
        assert {p: os.stat(src / p).st_mode for p in original} == modes
        with sqlite3.connect(ws / ".dbglog" / "dbglog.db") as db:
            assert db.execute("SELECT count(*) FROM toggle_journal").fetchone()[0] == 0
    assert restored_any >= 5  # the kills really landed while files were edited
    # SIGTERM and Ctrl-C (SIGINT): the driver itself restores before it exits
    for sig, n in ((signal.SIGTERM, 3), (signal.SIGINT, 5)):
        proc = subprocess.Popen([PY, "-m", "dbglog", "bisect", "toggles", "--in-place", "--suspects", "src", "--",
                                 PY, "src/step.py", str(sig)], cwd=ws, env=cli_env(), stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
        for _ in range(n):
            proc.stderr.readline()
        proc.send_signal(sig)
        proc.stderr.read()
        code = proc.wait(timeout=60)
        assert code in (0, 130)
        assert snapshot(src) == original
        with sqlite3.connect(ws / ".dbglog" / "dbglog.db") as db:
            assert db.execute("SELECT count(*) FROM toggle_journal").fetchone()[0] == 0
        st = json.loads(run_cli_inproc(ws, "bisect", "status", "--json").stdout)
        # never left "running" (a signal that lands after the result was stored leaves it done)
        assert st["status"] in (("done",) if code == 0 else ("done", "interrupted"))
    from dbglog.bisect.session import _status

    with sqlite3.connect(ws / ".dbglog" / "dbglog.db") as db:  # the kill -9 ones: nothing reads as running
        db.row_factory = sqlite3.Row
        rows = db.execute("SELECT * FROM bisect_sessions").fetchall()
    assert {_status(r) for r in rows} <= {"done", "failed", "interrupted"}
    # the last killed session resumes (finished trials replayed, not re-run) and gets the answer
    p = run_cli("bisect", "resume", "--json", cwd=ws)
    out = json.loads(p.stdout)
    assert p.returncode == 0, p.stderr
    assert out["sets"] == [["b", "e"]]
    assert snapshot(src) == original
    assert json.loads(run_cli_inproc(ws, "bisect", "status", out["session"], "--json").stdout)["status"] == "done"


def _dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_a_file_edited_again_after_the_driver_died_is_not_written_over(recs, tmp_path):
    """An adversarial probe: a killed --in-place bisection, then the user edits the file, then any dbglog command
    put the original back over that edit. Now only a file holding what the bisection wrote is put back; one edited
    since is left as it is, and its original is saved where the warning says."""
    from dbglog.bisect.journal import Journal, restore_orphans

    conf, app = tmp_path / "conf.json", tmp_path / "app.py"
    conf.write_bytes(b'{"fused": false}\n')
    app.write_bytes(b"print('app')\n")
    j = Journal(recs.store, "sid1")
    j.write(conf, b'{"fused": true}\n')
    j.write(app, b"print('app')  # toggled\n")
    j.write(app, b"print('app')  # toggled again\n")
    with recs.store.write():  # the driver dies (kill -9): its pid is gone
        recs.store.q("UPDATE toggle_journal SET pid = ?, pid_started = NULL", _dead_pid())
    conf.write_bytes(b'{"fused": true, "users_new_key": 42}\n')  # the user's edit, after the kill
    done = dict(restore_orphans(recs.store))
    assert conf.read_bytes() == b'{"fused": true, "users_new_key": 42}\n'  # left as the user made it
    saved = done[str(conf)]
    assert saved is not None and open(saved, "rb").read() == b'{"fused": false}\n'  # the original, kept aside
    assert done[str(app)] is None and app.read_bytes() == b"print('app')\n"  # what the bisection wrote: put back
    assert recs.store.q("SELECT count(*) FROM toggle_journal").fetchone()[0] == 0


def test_a_file_the_user_edits_during_an_in_place_bisection_is_kept_and_the_bisection_stops(ws, tmp_path):
    """An adversarial probe: a line appended to a suspect file while `--in-place` ran was written over by the
    next trial's edit. Now the next write finds bytes neither original nor its own: it stops in one line,
    leaves the file as the user made it and saves the original aside."""
    src = ws / "src"
    src.mkdir()
    original = b"import sys\nx = [1]\nx.append(2)  # dbglog: suspect s2\nx.append(3)  # dbglog: suspect s3\n" \
               b"if 2 in x:\n    sys.exit('AssertionError: boom')\n"
    (src / "step.py").write_bytes(original)
    counter = tmp_path / "runs"
    # the user's edit lands during the second run (the all-off end), the way an editor saves mid-trial
    edit = f'n=$(cat {counter} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {counter}; ' \
           f'[ $n = 2 ] && echo "# my edit" >> src/step.py; exec {PY} src/step.py'
    p = run_cli("bisect", "toggles", "--in-place", "--suspects", "src", "--", "sh", "-c", edit, cwd=ws)
    assert p.returncode == 2, (p.stdout, p.stderr)
    line = [ln for ln in p.stderr.splitlines() if "edited during the bisection" in ln]
    assert len(line) == 1 and "Traceback" not in p.stderr, p.stderr
    assert (src / "step.py").read_bytes().endswith(b"# my edit\n")  # left as the user made it
    saved = line[0].split("original is in ")[1].split(" ")[0]
    assert open(saved, "rb").read() == original
    assert int(counter.read_text()) == 2  # no trial ran on the user's edit
