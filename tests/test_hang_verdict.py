"""The hang verdict from thread states (issue 28), on real Python hangs dumped by faulthandler and
py-spy: a lock-order deadlock behind an idle socketserver loop, a queue consumer starved by a dead
producer, rank threads stuck in a (stand-in) collective. Each repro prints "ready" once its threads
are in place; a dump is retaken until the blocked threads sit on their blocking line (an event the
test waits for under a deadline, never a sleep that times it)."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dbglog.diagnose import threads as T

HANGS = Path(__file__).parent / "fixtures" / "hangs"
PY_SPY = shutil.which("py-spy") or (str(Path(sys.executable).parent / "py-spy")
                                    if (Path(sys.executable).parent / "py-spy").exists() else None)


def _start(script: str, tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    dump = tmp_path / "faulthandler.txt"
    p = subprocess.Popen([sys.executable, str(HANGS / script)], cwd=HANGS, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         env={**os.environ, "HANG_DUMP": str(dump)})
    assert p.stdout.readline() == b"ready\n"
    return p, dump


def _faulthandler(p: subprocess.Popen, dump: Path) -> str:
    """Two SIGUSR1 samples, as the faulthandler preset takes them: the two dumps this call added
    (the file is the process's own and only grows), read once they are complete."""
    before = len(T.fh_dumps(dump.read_text()))
    for n in (1, 2):
        p.send_signal(signal.SIGUSR1)
        deadline = time.monotonic() + 10
        while len(T.fh_dumps(dump.read_text())) < before + n and time.monotonic() < deadline:
            time.sleep(0.01)
    last, text = None, dump.read_text()
    while text != last:  # the second dump is complete once the file stops growing
        time.sleep(0.02)
        last, text = text, dump.read_text()
    return "".join(T.fh_dumps(text)[before:])


def _py_spy(p: subprocess.Popen, dump: Path) -> str:
    if not PY_SPY:
        pytest.skip("py-spy is not installed")
    r = subprocess.run([PY_SPY, "dump", "--full-filenames", "--pid", str(p.pid)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"py-spy cannot attach here: {r.stderr.strip()[:200]}")
    return r.stdout


def _verdict(script, tool, tmp_path, settled):
    """The dump's verdict once ``settled(verdict)`` holds (the threads reached their blocking line)."""
    p, dump = _start(script, tmp_path)
    try:
        deadline = time.monotonic() + 20
        while True:
            v = T.parse_thread_stacks((_faulthandler if tool == "faulthandler" else _py_spy)(p, dump))
            if settled(v) or time.monotonic() > deadline:
                return v
    finally:
        p.kill()
        p.wait()


@pytest.mark.parametrize("tool", ["faulthandler", "py-spy"])
def test_a_lock_order_deadlock_behind_an_idle_server_loop_names_both_threads(tool, tmp_path):
    def settled(v):  # both threads on their second lock (in both samples, for faulthandler)
        return v and v["cycles"] and (tool != "faulthandler" or all(x["unchanged"] for x in v["suspects"]))

    v = _verdict("lock_order_server.py", tool, tmp_path, settled)
    assert v["count"] == 3  # each thread once, across the two faulthandler samples too
    assert v["samples"] == (2 if tool == "faulthandler" else 1)
    s = v["summary"]
    assert "lock-order deadlock" in s and "transfer_ab (lock_order_server.py:15)" in s \
        and "transfer_ba (lock_order_server.py:22)" in s, s
    assert "holds `a`, waits for `b`" in s and "holds `b`, waits for `a`" in s
    assert "serve_forever (an event loop, not the stuck spot)" in s
    assert {x["at"].split(" ")[0] for x in v["suspects"]} == {"transfer_ab", "transfer_ba"}
    assert all(x["wait"] == "lock" for x in v["suspects"])  # the idle loop is no suspect
    assert v["idle_loops"] and v["idle_loops"][0] not in {x["thread"] for x in v["suspects"]}
    if tool == "faulthandler":
        assert all(x["unchanged"] for x in v["suspects"])
        assert any("stack unchanged between samples" in f for f in v["findings"])


@pytest.mark.parametrize("tool", ["faulthandler", "py-spy"])
def test_a_consumer_starved_by_a_dead_producer_is_the_suspect_on_its_queue(tool, tmp_path):
    v = _verdict("starved_queue.py", tool, tmp_path, lambda v: v and v["suspects"] and v["suspects"][0]["wait"])
    first = v["suspects"][0]
    assert first["at"].startswith("consume (starved_queue.py:") and first["wait"] == "queue" and first["on"] == "jobs"
    assert "consume (starved_queue.py:" in v["summary"] and "a queue" in v["summary"]
    assert not v["cycles"]


@pytest.mark.parametrize("tool", ["faulthandler", "py-spy"])
def test_rank_threads_stuck_in_a_collective_are_the_suspects(tool, tmp_path):
    def settled(v):
        return v and sum(x["wait"] == "collective" for x in v["suspects"]) == 2

    v = _verdict("stuck_collective.py", tool, tmp_path, settled)
    ranks = [x for x in v["suspects"] if x["wait"] == "collective"]
    assert len(ranks) == 2 and all(x["at"].startswith("all_reduce (stuck_collective.py:") for x in ranks)
    assert v["suspects"][0]["wait"] == "collective" and "a collective" in v["summary"]


def test_library_frames_and_user_frames_are_told_apart():
    assert T.is_user_frame(T.Frame("step", "/home/me/train.py", "3"))
    assert T.is_user_frame(T.Frame("step", "train.py", "3"))
    assert not T.is_user_frame(T.Frame("get", "/usr/lib/python3.11/queue.py", "171"))
    assert not T.is_user_frame(T.Frame("barrier", "torch/distributed/distributed_c10d.py", "4137"))
    assert not T.is_user_frame(T.Frame("select", "selectors.py", "415"))
    assert not T.is_user_frame(T.Frame("cudaStreamSynchronize", "libcudart.so", None, native=True))


def test_source_lines_say_which_lock_is_held_and_which_is_awaited():
    above = ["def move(self):", "    with self.src_lock:", "        x = 1", "        self.dst_lock.acquire()",
             "        y = 2"]
    assert T.held_locks(above, "        with self.other:") == ["self.dst_lock", "self.src_lock"]
    assert T.line_wait("        with self.other:") == ("lock", "self.other")
    assert T.line_wait("    item = jobs.get(timeout=None)") == ("queue", "jobs")
    assert T.line_wait("    done.wait()") == ("condition", "done")
    assert T.line_wait("    with open(path) as f:") == (None, None)  # a call: nothing to wait for
    assert T.line_wait("    [p.join() for p in procs]") == ("join", "p")


def test_a_helper_pool_is_known_by_its_frames_not_by_being_a_thread():
    dump = ('Thread 0x7F01 (idle): "MainThread"\n    main (app.py:10)\n'
            'Thread 0x7F02 (idle): "ThreadPoolExecutor-0_0"\n    _worker (concurrent/futures/thread.py:81)\n'
            '    run (threading.py:982)\n    _bootstrap_inner (threading.py:1045)\n'
            'Thread 0x7F03 (idle): "mine"\n    work (app.py:20)\n    run (threading.py:982)\n'
            '    _bootstrap_inner (threading.py:1045)\n')
    v = T.parse_thread_stacks(dump)
    roles = {t["name"]: t["role"] for t in v["threads"]}
    assert roles["mine"] == "blocked" and roles["MainThread"] == "blocked"
    assert roles["ThreadPoolExecutor-0_0"] != "blocked"


@pytest.mark.parametrize("capture", ["faulthandler", "py-spy"])
def test_the_run_summary_names_the_deadlocked_threads_not_the_idle_server_loop(capture, workdir):
    """End to end: `dbglog run --capture ...` on the deadlock behind serve_forever; what an agent reads."""
    from conftest import run_cli

    if capture == "py-spy" and not PY_SPY:
        pytest.skip("py-spy is not installed")
    assert run_cli("init", cwd=workdir).returncode == 0
    p = run_cli("run", "--timeout", "2", "--capture", capture, "--", sys.executable,
                str(HANGS / "lock_order_server.py"), cwd=workdir)
    out = p.stdout
    if capture == "py-spy" and "py-spy" in out and "lock-order" not in out and "Permission" in out:
        pytest.skip("py-spy cannot attach here")
    assert "HANG" in out, out
    evidence = next(line for line in out.splitlines() if "lock-order deadlock" in line)
    assert "transfer_ab (lock_order_server.py:15)" in evidence and "transfer_ba (lock_order_server.py:22)" in evidence
    assert "serve_forever (an event loop, not the stuck spot)" in evidence
    stuck = out.split("stuck process (guess)", 1)[1].splitlines()
    assert "lock-order cycle" in stuck[0] and stuck[1].strip().startswith(("at transfer_ab", "at transfer_ba"))
