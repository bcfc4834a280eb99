"""Capture presets as a registry (issue 13), on the right processes (issue 14), with hang evidence
that lands (issue 18): worker selection, rocgdb/cuda-gdb/py-spy/gdb presets, the faulthandler
injection on several interpreters, the stuck-process guess, captures on Ctrl-C."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import REPROS, assert_none_alive, cli_env, run_cli, run_cli_inproc
from dbglog.run import captures, runner
from dbglog.util.errors import DbglogError

PY = sys.executable
FAKE = Path(__file__).resolve().parent / "fixtures" / "fake_tools"


def run(cmd, tmp_path, **kw):
    kw.setdefault("echo", False)
    kw.setdefault("git_info", False)
    kw.setdefault("grace", 1.0)
    kw.setdefault("preflight_check", False)
    return runner.run(cmd, run_dir=tmp_path / "run", **kw)


@pytest.fixture
def fakes_first(monkeypatch):
    monkeypatch.setenv("PATH", str(FAKE) + os.pathsep + os.environ["PATH"])
    monkeypatch.setenv("FAKE_ROCGDB_STATE", str(FAKE / "data" / "rocgdb_state.txt"))


# --- the registry ---------------------------------------------------------------------------------

def test_registry_drives_validation_help_and_order():
    assert {"py-spy", "faulthandler", "gdb", "rocgdb", "cuda-gdb", "cuda-coredump"} <= set(captures.names())
    assert runner.PRESETS is captures.REGISTRY  # the runner and the bisections read the same registry
    for n in captures.names():
        assert f"{n}: " in captures.help_text()
    presets, commands = captures.split(["cuda-coredump", "gdb"], ["py-spy", "echo {pid}"])
    assert presets == ["py-spy", "gdb", "cuda-coredump"] and commands == ["echo {pid}"]  # safe order
    with pytest.raises(DbglogError, match="unknown capture preset 'strace'; choose from py-spy"):
        captures.split(["strace"], [])
    with pytest.raises(ValueError, match="already registered"):
        captures.register(captures.Preset("gdb", "again"))


def test_adding_a_preset_is_one_definition(tmp_path, pid_dir):
    """The README's contributor example: env before launch, a step on hang, on the workers."""
    def on_hang(ctx):
        procs, note = ctx.targets("workers")
        return [ctx.tool("echo", p, ["sh", "-c", f"echo attached {p.pid} $MARK"], note=note) for p in procs]

    captures.register(captures.Preset("echo-test", "echo the targets", order=35, targets="workers",
                                      env=lambda run_dir, base: {"MARK": "armed"}, on_hang=on_hang))
    try:
        r = run([PY, "-c", "import os, time; print(os.environ['MARK'], flush=True); time.sleep(60)"], tmp_path,
                timeout=1.0, captures=["echo-test"], env_overrides={"DBGLOG_TEST_PIDS": None})
    finally:
        del captures.REGISTRY["echo-test"]
    assert r.outcome == "hang" and "armed" in Path(r.paths["output"]).read_text()
    cap = next(c for c in r.captures if c["name"].startswith("echo:"))
    assert cap["status"] == "ok" and "attached" in Path(cap["path"]).read_text()
    assert "no process holds a GPU device" in cap["note"]


# --- worker selection -----------------------------------------------------------------------------

def test_gpu_holders_reads_the_fd_links(tmp_path):
    import psutil

    dev = tmp_path / "renderD128"
    dev.write_bytes(b"")
    me = psutil.Process()
    assert captures.gpu_holders([me], [str(tmp_path / "renderD*")]) == []
    with open(dev, "rb"):
        assert captures.gpu_holders([me], [str(tmp_path / "renderD*")]) == [me]
        assert captures.open_devices(me.pid, [str(dev)]) == [str(dev)]
        assert captures.gpu_holders([me], ["/dev/kfd"]) == []
    assert captures.device_patterns({"DBGLOG_GPU_DEVICES": f"/a{os.pathsep}/b*"}) == ("/a", "/b*")
    assert captures.device_patterns({}) == captures.DEVICE_PATTERNS


def _workers(pid_dir):
    return sorted(int((pid_dir / f"worker.{i}").read_text()) for i in range(3))


def test_rocgdb_attaches_only_to_gpu_workers_and_the_spinner_is_named_stuck(tmp_path, pid_dir, fakes_first):
    dev = tmp_path / "fake-kfd"
    dev.write_bytes(b"")
    r = run([PY, str(REPROS / "gpu_workers.py"), str(dev), "3"], tmp_path, timeout=2.0,
            captures=["rocgdb", "faulthandler"], env_overrides={"DBGLOG_GPU_DEVICES": str(dev)}, capture_timeout=15)
    assert r.outcome == "hang"
    workers = _workers(pid_dir)
    attached = sorted(int(c["name"].split(":")[1]) for c in r.captures if c["name"].startswith("rocgdb:"))
    assert attached == workers  # not the dispatcher
    for c in r.captures:
        if c["name"].startswith("rocgdb:"):
            text = Path(c["path"]).read_text()
            assert "detached" in text and "hsa_signal_wait_scacquire" in text
    assert any(e["kind"] == "rocgdb" for e in r.evidence)  # the dumps reach the evidence parsers
    assert r.stuck["pid"] == workers[0]  # the spinning worker, not the idle ones or the dispatcher
    assert r.stuck["frames"][0].startswith("spin (gpu_workers.py:") and r.stuck["reason"].startswith("guess: ")
    snap = json.loads(next(Path(c["path"]) for c in r.captures if c["name"] == "snapshot").read_text())
    assert sorted(s["pid"] for s in snap if s["gpu_devices"]) == workers
    assert_none_alive(pid_dir)


def test_rocgdb_with_the_debug_agent_is_refused_before_anything_runs(tmp_path):
    flag = tmp_path / "ran"
    with pytest.raises(DbglogError, match="cannot be combined with the ROCm debug agent"):
        run([PY, "-c", f"open({str(flag)!r}, 'w')"], tmp_path, captures=["rocgdb"],
            env_overrides={"HSA_TOOLS_LIB": "/opt/rocm/lib/librocm-debug-agent.so.2"})
    assert not flag.exists()
    r = run(["true"], tmp_path, captures=["rocgdb"], env_overrides={"HSA_TOOLS_LIB": "/opt/rocm/lib/libmytool.so"})
    assert r.outcome == "pass" and any("HSA_TOOLS_LIB=/opt/rocm/lib/libmytool.so" in n for n in r.notes)


def test_rocgdb_refusal_is_one_line_and_exit_2(workdir):
    p = run_cli_inproc(workdir, "run", "--capture", "rocgdb", "--env", "HSA_TOOLS_LIB=librocm-debug-agent.so", "--",
                       "true")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.strip().splitlines() == [l for l in p.stderr.strip().splitlines() if l.startswith("dbglog: ")]
    assert "debug agent" in p.stderr


def test_cuda_gdb_and_py_spy_fakes_without_gpu_holders_fall_back_to_python(tmp_path, pid_dir, fakes_first,
                                                                           monkeypatch):
    monkeypatch.setenv("FAKE_PY_SPY_FRAMES", "wait threading.py:320;<module> hang.py:12")
    r = run([PY, str(REPROS / "hang.py")], tmp_path, timeout=1.0, captures=["cuda-gdb", "py-spy"])
    cg = [c for c in r.captures if c["name"].startswith("cuda-gdb:")]
    spy = [c for c in r.captures if c["name"].startswith("py-spy:")]
    assert len(cg) == 1 and cg[0]["status"] == "ok" and "no process holds a GPU device" in cg[0]["note"]
    assert "spin_wait_kernel" in Path(cg[0]["path"]).read_text()
    kern = next(e for e in r.evidence if e["kind"] == "cuda-gdb-kernels")  # the dump reached the parsers
    assert kern["kernels"][0]["name"] == "spin_wait_kernel" and "resident during the hang" in kern["summary"]
    assert len(spy) == 1 and r.stuck["frames"][:2] == ["wait (threading.py:320)", "<module> (hang.py:12)"]
    assert_none_alive(pid_dir)


# --- issue 18: faulthandler on several interpreters, gdb with Python frames -----------------------

def _interpreters():
    cands = [PY, "/usr/bin/python3", *sorted(str(p) for p in Path("/root/.pyenv/versions").glob("3.13*/bin/python3"))]
    seen, out = set(), []
    for c in cands:
        if os.path.exists(c) and os.path.realpath(c) not in seen:
            seen.add(os.path.realpath(c))
            out.append(c)
    return out


HANG_PRINTING_SITE = ("import sys, threading\n"
                      "m = sys.modules.get('sitecustomize')\n"
                      "print('site:', getattr(m, '__file__', None), getattr(m, 'USER_MARK', ''), flush=True)\n"
                      "def blocked():\n    threading.Event().wait()\n"
                      "blocked()\n")


@pytest.mark.parametrize("python", _interpreters())
def test_faulthandler_capture_on_each_interpreter_build(tmp_path, python):
    script = tmp_path / "stuck.py"
    script.write_text(HANG_PRINTING_SITE)
    r = run([python, str(script)], tmp_path, timeout=1.0, captures=["faulthandler"])
    out = Path(r.paths["output"]).read_text()
    assert "KeyError" not in out and "Error in sitecustomize" not in out and "Traceback" not in out, out
    fh = [c for c in r.captures if c["name"].startswith("faulthandler:")]
    assert fh and fh[0]["status"] == "ok"
    assert "in blocked" in Path(fh[0]["path"]).read_text()
    assert r.stuck and "blocked (stuck.py:5)" in r.stuck["frames"]
    own = Path("/usr/lib/python3.11/sitecustomize.py")
    if os.path.realpath(python).startswith("/usr/bin/") and own.exists():
        assert f"site: {own}" in out  # the interpreter's own sitecustomize still ran


def test_faulthandler_chains_to_a_users_sitecustomize(tmp_path, monkeypatch):
    user = tmp_path / "usersite"
    user.mkdir()
    (user / "sitecustomize.py").write_text("USER_MARK = 'user-site-ran'\n")
    monkeypatch.setenv("PYTHONPATH", str(user))
    script = tmp_path / "stuck.py"
    script.write_text(HANG_PRINTING_SITE)
    r = run([PY, str(script)], tmp_path, timeout=1.0, captures=["faulthandler"])
    out = Path(r.paths["output"]).read_text()
    assert "user-site-ran" in out and "KeyError" not in out
    assert any(c["name"].startswith("faulthandler:") and c["status"] == "ok" for c in r.captures)


@pytest.mark.skipif(not shutil.which("gdb"), reason="gdb not installed")
def test_gdb_prints_python_frames_or_says_why_not(tmp_path, pid_dir):
    r = run([PY, str(REPROS / "hang.py")], tmp_path, timeout=1.0, captures=["gdb"], capture_timeout=30)
    g = next(c for c in r.captures if c["name"].startswith("gdb:"))
    text = Path(g["path"]).read_text()
    exe = os.path.realpath(PY)
    if os.path.exists(exe + "-gdb.py"):  # pyenv and source builds install the helpers beside the binary
        assert "no Python frames" not in (g["note"] or "")
        if g["status"] == "ok" and "ptrace" not in text:  # ptrace may be forbidden in some containers
            assert "Traceback (most recent call first)" in text and "hang.py" in text
            assert "detached" in text
    else:
        assert "no Python frames" in (g["note"] or "")
    assert_none_alive(pid_dir)


def test_gdb_helpers_missing_is_said(tmp_path, pid_dir, monkeypatch):
    monkeypatch.setattr(captures, "python_gdb_helpers", lambda pid: None)
    monkeypatch.setattr(captures, "which", lambda tool: "/bin/true" if tool == "gdb" else None)
    r = run([PY, str(REPROS / "hang.py")], tmp_path, timeout=1.0, captures=["gdb"])
    g = next(c for c in r.captures if c["name"].startswith("gdb:"))
    assert "no Python frames: the interpreter's gdb helpers" in g["note"]


# --- the stuck process ------------------------------------------------------------------------------

FH = '''Thread 0x00007f1 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 320 in wait
  File "/w/loader.py", line 9 in fetch

Current thread 0x00007f0 (most recent call first):
  File "/w/train.py", line 42 in all_reduce
  File "/w/train.py", line 80 in <module>
'''
SPY = '''Process 77: python train.py
Python v3.11.7 (/usr/bin/python3.11)

Thread 77 (active): "MainThread"
    all_reduce (train.py:42)
    <module> (train.py:80)
Thread 78 (idle): "Thread-1"
    wait (threading.py:320)
'''
GDB = '''Thread 1 (Thread 0x7f (LWP 77) "python3.11"):
Traceback (most recent call first):
  File "/w/train.py", line 42, in all_reduce
  File "/w/train.py", line 80, in <module>

Thread 1 (Thread 0x7f (LWP 77) "python3.11"):
#0  0x00007f378ed15ada in pysleep (timeout=<optimized out>) at ./Modules/timemodule.c:2159
#1  time_sleep (self=<optimized out>) at ./Modules/timemodule.c:383
'''


@pytest.mark.parametrize("text", [FH, SPY, GDB])
def test_main_frames_of_each_dump_format(text):
    assert captures.main_frames(text)[:2] == ["all_reduce (train.py:42)", "<module> (train.py:80)"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.from_regex(r"[a-z_]{1,12}", fullmatch=True), st.integers(1, 9999)), min_size=1,
                max_size=6), st.text(max_size=200))
def test_main_frames_reads_back_any_faulthandler_dump(frames, noise):
    dump = "Current thread 0x0000 (most recent call first):\n" + "".join(
        f'  File "/x/{f}.py", line {n} in {f}\n' for f, n in frames)
    assert captures.main_frames(dump) == [f"{f} ({f}.py:{n})" for f, n in frames]
    captures.main_frames(noise + dump + noise)  # never raises on surrounding junk
    assert captures.stack_threads(noise) is not None


# --- Ctrl-C / SIGTERM: the captures are taken before the kill, and the stuck process lands ------------

def test_interrupt_takes_the_captures_and_the_stuck_frames_reach_runs_show_and_the_attempt(workdir, pid_dir, spawn):
    assert run_cli("new", "hang on ctrl-c", "--no-env", cwd=workdir).returncode == 0
    script = workdir / "stuck.py"
    blocked = workdir / "blocked"  # written by the repro where it blocks: the frames to find are in place
    script.write_text(f"import sys; sys.path.insert(0, {str(REPROS)!r}); import _pids; _pids.record()\n"
                      + HANG_PRINTING_SITE.replace("def blocked():\n", f"def blocked():\n    open({str(blocked)!r}, "
                                                                         "'w').close()\n"))
    p = spawn([PY, "-m", "dbglog", "run", "--capture", "faulthandler", "--grace", "1", "--attempt",
               "does it hang", "--json", "--", PY, str(script)], cwd=workdir, env=cli_env(),
              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120  # (a bound on a failure: it waits for the file, however loaded the machine)
    while not blocked.exists() and time.monotonic() < deadline:
        assert p.poll() is None, p.communicate()
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=90)
    assert p.returncode == 130, err
    assert_none_alive(pid_dir)
    d = json.loads(out)
    run_d = d["runs"][0]
    assert any(c["name"].startswith("faulthandler:") and c["status"] == "ok" for c in run_d["captures"])
    assert run_d["stuck"] and "blocked (stuck.py:" in " ".join(run_d["stuck"]["frames"])
    show = run_cli("runs", "show", run_d["id"], cwd=workdir)
    assert "stuck process (guess)" in show.stdout and "at blocked (stuck.py:" in show.stdout
    assert "stuck process (guess" in d["attempt"]["result"] and "blocked (stuck.py:" in d["attempt"]["result"]


class _P:
    def __init__(self, pid, ppid):
        self.pid, self._ppid = pid, ppid

    def ppid(self):
        return self._ppid


def _row(pid, status="sleeping", wchan="futex_wait_queue", devices=()):
    return {"pid": pid, "name": "python", "status": status, "cmdline": f"python w{pid}.py", "wchan": wchan,
            "gpu_devices": list(devices)}


def test_name_stuck_scoring(tmp_path):
    """Dispatcher 10 waits for its children; 11 and 12 hold the GPU; 12 sits in state D."""
    ctx = captures.Context(tree=None, run_dir=tmp_path, limit=1, procs=[_P(10, 1), _P(11, 10), _P(12, 10)])
    rows = [_row(10, wchan="do_wait"), _row(11, devices=["/dev/kfd"]),
            _row(12, status="disk-sleep", wchan="amdgpu_fence_wait", devices=["/dev/kfd"])]
    dump = tmp_path / "py-spy.12.txt"
    dump.write_text(SPY)
    caps = [{"name": "py-spy:12", "status": "ok", "path": str(dump)}]
    st = captures.name_stuck(ctx, rows, caps, {}, {})
    assert st["pid"] == 12 and "state D" in st["reason"] and st["frames"][0] == "all_reduce (train.py:42)"
    assert st["path"] is None and st["source"] == str(dump)
    # A stack that moved between two samples is making progress: the other worker is named instead.
    fh = tmp_path / "faulthandler.12.txt"
    one = 'Current thread 0x1 (most recent call first):\n  File "/w/a.py", line 1 in step_a\n'
    two = 'Current thread 0x1 (most recent call first):\n  File "/w/a.py", line 9 in step_b\n'
    fh.write_text(one + two)
    fh11 = tmp_path / "faulthandler.11.txt"
    fh11.write_text(one + one)
    caps = [{"name": "faulthandler:12", "status": "ok", "path": str(fh), "first_sample_bytes": len(one)},
            {"name": "faulthandler:11", "status": "ok", "path": str(fh11), "first_sample_bytes": len(one)}]
    rows[2]["status"] = "sleeping"
    st = captures.name_stuck(ctx, rows, caps, {}, {})
    assert st["pid"] == 11 and "stack unchanged" in st["reason"]
    # One process and no stack: nothing worth saying.
    assert captures.name_stuck(captures.Context(tree=None, run_dir=tmp_path, limit=1, procs=[_P(10, 1)]),
                               [_row(10)], [], {}, {}) is None


_SERVER_FRAMES = [("fake_http_server.py", 38, "spin"), ("fake_http_server.py", 56, "do_GET"),
                  ("server.py", 424, "handle_one_request"), ("server.py", 436, "handle"),
                  ("socketserver.py", 755, "__init__"), ("socketserver.py", 361, "finish_request"),
                  ("socketserver.py", 348, "process_request"), ("socketserver.py", 316, "_handle_request_noblock"),
                  ("socketserver.py", 238, "serve_forever"), ("fake_http_server.py", 80, "<module>")]


def _fh_dump(frames, thread="0x00007f0000000001") -> str:
    return (f"Current thread {thread} (most recent call first):\n"
            + "".join(f'  File "/srv/{f}", line {n} in {fn}\n' for f, n, fn in frames))


def test_a_dump_read_while_it_was_still_written_is_not_a_stack_that_moved(tmp_path, monkeypatch):
    """Under CPU load the byte count of the first faulthandler sample was taken in the middle of the
    dump (many writes, the process preempted between two): the rest of it was read as the second
    sample, the spinning dispatcher's stack "moved" (-3) and its idle worker was named stuck
    (test_a_livelocked_servers_spinning_worker_is_the_stuck_process, ~2 in 8 under two CPU hogs). The
    dumps are split by their shape now, whatever the byte count says."""
    second = [(f, n - 1 if fn == "spin" else n, fn) for f, n, fn in _SERVER_FRAMES]  # a loop's line moves
    text = _fh_dump(_SERVER_FRAMES) + _fh_dump(second)
    (tmp_path / "faulthandler.20.txt").write_text(text)
    worker = 'Current thread 0x00007f0000000002 (most recent call first):\n  File "<string>", line 2 in <module>\n'
    (tmp_path / "faulthandler.21.txt").write_text(worker + worker)
    monkeypatch.setattr(captures, "_serving", lambda procs: {20: 8000})  # the client's connection
    ctx = captures.Context(tree=None, run_dir=tmp_path, limit=1, procs=[_P(20, 1), _P(21, 20)])
    rows = [_row(20, wchan="do_select"), _row(21, wchan="hrtimer_nanosleep")]
    first = len(_fh_dump(_SERVER_FRAMES))
    for cut in (first, 60, first // 2, first - 30):  # whole, header only, mid-dump, mid-line
        caps = [{"name": "faulthandler:20", "status": "ok", "path": str(tmp_path / "faulthandler.20.txt"),
                 "first_sample_bytes": cut},
                {"name": "faulthandler:21", "status": "ok", "path": str(tmp_path / "faulthandler.21.txt"),
                 "first_sample_bytes": len(worker)}]
        st = captures.name_stuck(ctx, rows, caps, {}, {})
        assert st["pid"] == 20 and st["frames"][0].startswith("spin (fake_http_server.py:"), (cut, st)
        assert st["reason"].startswith("guess: stack unchanged")
    # a dump whose outer frames were not written yet when it was read is that stack, cut short
    (tmp_path / "faulthandler.20.txt").write_text(_fh_dump(_SERVER_FRAMES) + _fh_dump(second[:3]))
    assert captures.name_stuck(ctx, rows, caps, {}, {})["pid"] == 20
    # a stack that did move still counts as moving: the worker is named then
    moved = [("fake_http_server.py", 90, "tokenize")] + _SERVER_FRAMES[1:]
    (tmp_path / "faulthandler.20.txt").write_text(_fh_dump(_SERVER_FRAMES) + _fh_dump(moved))
    assert captures.name_stuck(ctx, rows, caps, {}, {})["pid"] == 21


def test_faulthandler_dumps_split_by_shape():
    two_threads = ("Thread 0x00007f4440da56c0 (most recent call first):\n  File \"t.py\", line 9 in run\n\n"
                   "Current thread 0x00007f4441809b80 (most recent call first):\n  File \"m.py\", line 5 in <module>\n")
    assert captures.fh_dumps(two_threads * 3) == [two_threads] * 3
    assert captures.fh_dumps("") == [] and captures.fh_dumps("garbage\n") == []


def test_bisection_refuses_rocgdb_beside_the_debug_agent_before_the_first_step(workdir):
    p = run_cli_inproc(workdir, "bisect", "toggles", "--env", "A=1", "--capture", "rocgdb", "--", "true",
                       env={"HSA_TOOLS_LIB": "/opt/rocm/lib/librocm-debug-agent.so.2"})
    assert p.returncode == 2 and "debug agent" in p.stderr and "Traceback" not in p.stderr, p.stderr


@pytest.mark.parametrize("helpers", [True, False])
def test_gdb_preset_with_the_fake_gdb(tmp_path, pid_dir, fakes_first, monkeypatch, helpers):
    """Where no real gdb (or no ptrace) exists: the fake prints gdb's formats for the same script."""
    monkeypatch.setenv("FAKE_GDB_PY_FRAMES", "blocked stuck.py:5;<module> stuck.py:7")
    monkeypatch.setattr(captures, "python_gdb_helpers", lambda pid: "/x/python3.11-gdb.py" if helpers else None)
    r = run([PY, str(REPROS / "hang.py")], tmp_path, timeout=1.0, captures=["gdb"])
    g = next(c for c in r.captures if c["name"].startswith("gdb:"))
    text = Path(g["path"]).read_text()
    assert text.rstrip().endswith("detached]")
    if helpers:
        assert "Traceback (most recent call first)" in text
        assert r.stuck["frames"][:2] == ["blocked (stuck.py:5)", "<module> (stuck.py:7)"]  # Python frames win
    else:
        assert "py-bt" not in text and "no Python frames" in g["note"]
        assert r.stuck["frames"][0].startswith("__futex_abstimed_wait_common64")
    assert_none_alive(pid_dir)


def test_a_livelocked_servers_spinning_worker_is_the_stuck_process(tmp_path, pid_dir, monkeypatch):
    """Server mode (dbglog/run/serve.py): the server's captures come first and name its stuck worker."""
    import socket

    from dbglog.run import serve

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("FAKE_READY_DELAY", "0.3")
    r = serve.run_server_client([PY, str(REPROS / "fake_http_client.py"), str(port)],
                                server=f"{PY} {REPROS / 'fake_http_server.py'} {port}",
                                ready=f"http://127.0.0.1:{port}/v1/models", ready_timeout=30, run_dir=tmp_path / "run",
                                cwd=tmp_path, echo=False, grace=1.0, git_info=False, idle_timeout=1.5,
                                captures=["faulthandler"])
    assert r.outcome == "hang" and r.stuck and r.stuck["name"] == "server:stuck"
    assert r.stuck["frames"][0].startswith("spin (fake_http_server.py:")
    assert_none_alive(pid_dir)


class _Proc:
    def __init__(self, name):
        self.pid, self._name = 4242, name

    def name(self):
        return self._name


def test_a_python_still_starting_at_the_timeout_is_waited_for_not_skipped(tmp_path, monkeypatch):
    # on a loaded machine the interpreter had not run its sitecustomize when the timeout came: the stack capture was
    # "skipped" (the suite's faulthandler test failed under load); it registers a moment later and is dumped
    from dbglog.run import captures

    f = tmp_path / "faulthandler.4242.txt"
    polls = []
    monkeypatch.setattr(captures.time, "sleep", lambda s: (polls.append(s), f.touch() if len(polls) == 3 else None))
    got = captures._registered([(_Proc("python3.11"), f)], wait=60.0)
    assert got and got[0][1] == f and len(polls) == 3
    # another program never registers: no wait at all
    polls.clear()
    assert captures._registered([(_Proc("llama-server"), tmp_path / "faulthandler.1.txt")], wait=60.0) == []
    assert polls == []
