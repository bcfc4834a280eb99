"""The process layer's cheap reads (issue 13, per-step overhead): a run's ppid table holds only the
processes born since its root when pids provably did not wrap, and the run path stays free of the
heavy imports it does not need."""

import os
import signal
import subprocess
import sys
import time

import pytest

from dbglog.run import proctree

linux = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")


@linux
def test_a_runs_table_holds_its_descendants_and_not_older_processes(monkeypatch):
    # (long sleeps, killed below: a loaded machine must not let them end before the table is read)
    p = subprocess.Popen(["sh", "-c", "sleep 300 & sleep 300"], start_new_session=True)
    try:
        tree = proctree.Tree(p.pid, "t", time.time())
        deadline = time.monotonic() + 60
        while not any(ppid == p.pid for ppid in proctree.ppid_table().values()) and time.monotonic() < deadline:
            time.sleep(0.01)
        table = tree.table()
        assert p.pid in table
        if proctree.no_wrap_since(p.pid, tree.forks_then):  # (not when pids just wrapped around, rarely)
            # older processes may hold larger pids (from before an earlier wrap): read, harmlessly
            assert min(table) >= p.pid and 1 not in table
        tree.snapshot(table)
        kids = {pid for pid, ppid in proctree.ppid_table().items() if ppid == p.pid}
        assert kids and kids <= set(tree.procs)
        # pids may have wrapped (or nothing is known): every process is read
        monkeypatch.setattr(proctree, "no_wrap_since", lambda pid, forks: False)
        assert 1 in tree.table() and os.getpid() in tree.table()
    finally:
        proctree.terminate_tree(proctree.Tree(p.pid, "t", time.time()), 2.0)
        p.wait()


@linux
def test_no_wrap_since_reads_the_cursor_and_the_fork_counter(monkeypatch):
    assert proctree.no_wrap_since(os.getpid(), None) is False
    forks = proctree.fork_count()
    assert isinstance(forks, int) and forks > 0
    p = subprocess.Popen(["true"])
    p.wait()
    assert proctree.no_wrap_since(p.pid, proctree.fork_count()) is True
    # the last pid below ours: wrapped
    assert proctree.no_wrap_since(10**9, forks) is False
    # a whole cycle of creations since: wrapped, whatever the cursor says
    monkeypatch.setattr(proctree, "fork_count", lambda: forks + proctree._pid_max())
    assert proctree.no_wrap_since(p.pid, forks) is False


def test_the_run_path_does_not_import_what_a_silent_run_does_not_need():
    code = ("import sys, dbglog.cli.bisect, dbglog.bisect.history, dbglog.run.runner, dbglog.kb.records; "
            "print(sorted(m for m in ('dbglog.diagnose.evidence', 'concurrent.futures', 'dbglog.bisect.flaky', "
            "'dbglog.run.envinfo') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def _group(script: str):
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, start_new_session=True)
    assert p.stdout.readline() == b"ready\n"  # handlers installed before we signal
    return p


def test_kill_group_with_grace_lets_a_sigterm_handler_finish():
    # srun's case: SIGTERM is passed on and handled; the group must not be SIGKILLed meanwhile.
    p = _group("import signal, sys\n"
               "signal.signal(signal.SIGTERM, lambda *a: sys.exit(7))\n"
               "print('ready', flush=True)\nsignal.pause()\n")
    proctree.kill_group(p, grace=30.0)
    assert p.wait(timeout=30) == 7


def test_kill_group_sigkills_what_ignores_sigterm_after_the_grace():
    p = _group("import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
               "print('ready', flush=True)\nsignal.pause()\n")
    proctree.kill_group(p, grace=0.2)
    assert p.wait(timeout=30) == -signal.SIGKILL


def test_kill_group_without_grace_is_one_sigkill():
    p = _group("import signal\nsignal.signal(signal.SIGTERM, lambda *a: None)\n"
               "print('ready', flush=True)\nsignal.pause()\n")
    proctree.kill_group(p)
    assert p.wait(timeout=30) == -signal.SIGKILL


def test_a_stamp_taken_before_the_wall_clock_was_stepped_still_names_its_process(monkeypatch):
    # A create time is ticks since boot plus the boot time; a VM resumed or an NTP step moves the boot time /proc
    # reports, and psutil reads it afresh while proctree keeps the one it read first: a live driver stamped before
    # the step must not read as a reused pid (a bisection would look interrupted while its driver still runs).
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        proctree._boot_time()
        monkeypatch.setattr(proctree, "_BOOT", [proctree._BOOT[0] - 5.0])  # the boot time read before a 5 s step
        started = proctree.create_time(child.pid)
        assert proctree.alive(child.pid, started)
        assert not proctree.alive(child.pid, started - 30.0)  # another create time is still another process
    finally:
        child.kill()
        child.wait()


def test_what_is_stored_to_know_a_process_again_is_its_start_since_boot_where_proc_tells(monkeypatch):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        stored = proctree.started(child.pid)
        if proctree.since_boot(child.pid) is None:
            pytest.skip("no /proc: the create time is stored")
        assert stored < 1e9  # seconds since boot, not since 1970
        proctree._boot_time()
        monkeypatch.setattr(proctree, "_BOOT", [proctree._BOOT[0] + 3600.0])  # the wall clock stepped an hour
        assert proctree.alive(child.pid, stored)
        assert not proctree.alive(child.pid, stored - 1.0)
        assert not proctree.alive(os.getpid(), stored)  # another process's start
    finally:
        child.kill()
        child.wait()
    assert not proctree.alive(child.pid, stored)  # gone
