"""A hang capture takes as long as its tools need, not its time limit (issue 28: a 5 s hang with
the CUDA core-dump capture took 35 s). The core-dump wait ends when the process that held the pipe
has gone, even though its launcher stays alive and the driver printed no "All done" line."""
import sys
import time
from pathlib import Path

from conftest import REPROS, assert_none_alive
from dbglog.run import runner


def test_the_core_dump_wait_ends_when_the_dumping_worker_is_gone(tmp_path, pid_dir, monkeypatch):
    monkeypatch.setenv("FAKE_COREDUMP_QUIET", "1")
    cmd = [sys.executable, str(REPROS / "launcher.py"), str(REPROS / "fake_cuda_coredump.py")]
    started = time.monotonic()
    r = runner.run(cmd, run_dir=tmp_path / "run", timeout=2.0, captures=["cuda-coredump"], capture_timeout=60,
                   echo=False)
    took = time.monotonic() - started
    cap = [c for c in r.captures if c["name"] == "cuda-coredump"][0]
    assert r.outcome == "hang" and cap["status"] == "ok" and cap["dumps"]
    assert "All done" not in Path(r.paths["output"]).read_text()
    assert took < 40, took  # the wait did not run out its 60 s limit (the worker's exit ended it)
    assert_none_alive(pid_dir)
