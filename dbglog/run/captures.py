"""Capture presets: what ``--capture NAME`` arms before a supervised run and takes when it hangs.

Each preset is one :class:`Preset` registered in :data:`REGISTRY` (in this module: the CLI's help and
validation, the MCP schema and the bisections all read the registry, so a preset defined here is
everywhere). A preset says:

* ``name``, ``help``: the ``--capture`` value and its one-line help;
* ``order``: when it runs on a hang — passive and non-destructive first, invasive (gdb stops every
  thread) after, terminal last (a CUDA user-triggered core dump aborts the process);
* ``targets``: which processes it acts on — ``"workers"`` (the processes holding a GPU device
  open, see :func:`gpu_holders`; the old rule when none do), ``"python"``, ``"tree"`` (all);
* ``time_limit``: seconds per tool invocation (None: the run's ``capture_timeout``);
* ``env(run_dir, base_env) -> dict``: variables set before launch (hang diagnostics must be armed
  then: reference §4);
* ``check(env) -> (refusal, warning)``: refuse a run env the preset cannot work in (one line, exit 2,
  nothing started) or warn about it (a note on the run);
* ``on_hang(ctx) -> [capture dicts]``: what it does on a hang (``ctx`` is a :class:`Context`);
  ``on_interrupt``: also on Ctrl-C / SIGTERM / SIGHUP to dbglog, before the tree is killed;
* ``after(ctx) -> ([capture dicts], [evidence dicts])``: after the run ended, whatever way (a crash
  wrote core dumps, ranks wrote flight-recorder buffers).

A capture dict is ``{"name", "status" (ok | missing | skipped | timeout | failed | triggered),
"path", "note"}`` plus anything else; files at ``path`` are read by the evidence parsers
(``dbglog/run/evidence.py``) and the stuck-process guess below. Adding a preset::

    def _strace(ctx):
        procs, note = ctx.targets("workers")
        return [ctx.tool("strace", p, ["strace", "-f", "-p", str(p.pid), "-o", "/dev/stdout"], note=note)
                for p in procs]

    register(Preset("strace", "syscalls of the GPU workers for a few seconds", order=35,
                    targets="workers", time_limit=5.0, on_hang=_strace))

plus one test that runs it against a fake ``strace`` in ``tests/fixtures/fake_tools``.

After the presets, :func:`take` names the **stuck process** (a guess, labelled as one): the one
whose stack did not move between two samples, that holds the GPU, burns CPU or sits in state D, and
that others wait on rather than waiting itself; its top frames go in the run summary, ``runs show``
and the recorded attempt.

Layering: imported by ``runner.py``; imports only ``proctree`` (process helpers), ``errors`` and,
lazily, the modules a preset drives (never the runner).
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import shutil
import signal as _signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from dbglog.run import proctree
from dbglog.util.errors import DbglogError

if TYPE_CHECKING:  # at run time imported where a hang's stacks are read (_stacks)
    from dbglog.diagnose import evidence

# Device files a GPU worker holds open: ROCm's KFD and render nodes, NVIDIA's device nodes.
DEVICE_PATTERNS = ("/dev/kfd", "/dev/dri/renderD*", "/dev/nvidia*")
DEVICES_VAR = "DBGLOG_GPU_DEVICES"  # os.pathsep-separated globs replacing DEVICE_PATTERNS (tests)
STACK_GAP_S = 0.3  # between the two faulthandler samples: long enough for a live stack to move
DUMP_SETTLE_S = 0.06  # a dump file that kept its size this long is written


@dataclass(frozen=True)
class Preset:
    name: str
    help: str
    order: int = 50
    targets: str = "tree"  # "workers" | "python" | "tree"
    time_limit: float | None = None
    env: Callable[[Path, dict], dict] | None = None
    check: Callable[[dict], tuple[str | None, str | None]] | None = None
    on_hang: Callable[["Context"], list[dict]] | None = None
    on_interrupt: bool = True
    after: Callable[["Context"], tuple[list[dict], list[dict]]] | None = None
    # the command the run starts instead of the repro's (a debugger that starts it): (argv, run_dir) -> argv
    wrap: Callable[[list[str], Path], list[str]] | None = None


REGISTRY: dict[str, Preset] = {}


def register(preset: Preset) -> Preset:
    if preset.name in REGISTRY:
        raise ValueError(f"capture preset {preset.name!r} is already registered")
    if preset.targets not in ("workers", "python", "tree"):
        raise ValueError(f"capture preset {preset.name!r}: unknown targets {preset.targets!r}")
    REGISTRY[preset.name] = preset
    return preset


def names() -> list[str]:
    return list(REGISTRY)


def help_text() -> str:
    """For ``--capture``: every preset and what it does."""
    return "Capture preset (repeatable): " + "; ".join(f"{p.name}: {p.help}" for p in REGISTRY.values()) + "."


def defaults(presets: Sequence[str], cmd: Sequence[str], container: str | None) -> list[str]:
    """The presets a run takes without being asked: ``docker`` for a repro in a container."""
    out = list(presets)
    if "docker" not in out and docker_target(cmd, container) is not None and which("docker"):
        out.append("docker")
    return sorted(out, key=lambda n: REGISTRY[n].order)


def split(captures: Sequence[str], on_hang: Sequence[str]) -> tuple[list[str], list[str]]:
    """Validate ``--capture`` values; a preset name given to ``--on-hang`` counts as a preset.
    Returns (presets in hang order, the other ``--on-hang`` commands)."""
    unknown = [c for c in captures if c not in REGISTRY]
    if unknown:
        raise DbglogError(f"unknown capture preset {unknown[0]!r}; choose from {', '.join(REGISTRY)}")
    commands = [c for c in on_hang if c not in REGISTRY]
    for c in commands:
        try:
            shlex.split(c)
        except ValueError as e:
            raise DbglogError(f"cannot parse --on-hang command {c!r}: {e}") from None
    chosen = list(dict.fromkeys(c for c in [*captures, *on_hang] if c in REGISTRY))
    return sorted(chosen, key=lambda n: REGISTRY[n].order), commands


def check(presets: Sequence[str], env: dict) -> list[str]:
    """Refuse (DbglogError) a run environment a preset cannot work in; return the warnings."""
    warnings = []
    for n in presets:
        p = REGISTRY[n]
        if p.check is None:
            continue
        refusal, warning = p.check(env)
        if refusal:
            raise DbglogError(refusal)
        if warning:
            warnings.append(warning)
    return warnings


def wrap(presets: Sequence[str], argv: list[str], run_dir: Path) -> list[str]:
    """The command line the run starts: the repro's, inside the presets that start it themselves."""
    for n in presets:
        p = REGISTRY[n]
        if p.wrap is not None:
            argv = p.wrap(list(argv), run_dir)
    return argv


def launch_env(presets: Sequence[str], run_dir: Path, base_env: dict) -> dict:
    env: dict[str, str] = {}
    for n in presets:
        p = REGISTRY[n]
        if p.env is not None:
            env.update(p.env(run_dir, {**base_env, **env}))
    return env


# --- which processes ----------------------------------------------------------------------------

def device_patterns(env: dict | None = None) -> tuple[str, ...]:
    raw = (env if env is not None else os.environ).get(DEVICES_VAR)
    return tuple(x for x in raw.split(os.pathsep) if x) if raw else DEVICE_PATTERNS


def open_devices(pid: int, patterns: Sequence[str] = DEVICE_PATTERNS) -> list[str]:
    """The device files (matching ``patterns``) process ``pid`` holds open, from /proc/PID/fd links
    (psutil's open_files leaves device nodes out)."""
    found = []
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return found
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target not in found and any(fnmatch.fnmatchcase(target, pat) for pat in patterns):
            found.append(target)
    return found


def gpu_holders(procs: Sequence, patterns: Sequence[str] = DEVICE_PATTERNS) -> list:
    """The workers: processes holding a GPU device open (the dispatcher that only forks them does
    not)."""
    return [p for p in procs if open_devices(p.pid, patterns)]


def is_python(p) -> bool:
    ps = proctree.psutil_module()
    try:
        name = p.name().lower()
        cmd = p.cmdline()
    except (ps.Error, OSError):
        return False
    first = os.path.basename(cmd[0]).lower() if cmd else ""
    return "python" in name or first.startswith("python")


def which(tool: str) -> str | None:
    """On PATH, or installed next to this interpreter (pip install py-spy into dbglog's venv)."""
    found = shutil.which(tool)
    if found:
        return found
    beside = Path(sys.executable).parent / tool
    return str(beside) if beside.is_file() and os.access(beside, os.X_OK) and shutil.which(str(beside)) else None


def subst(arg: str, pid: int, run_dir: Path) -> str:
    return arg.replace("{pid}", str(pid)).replace("{pgid}", str(pid)).replace("{run_dir}", str(run_dir))


def run_limited(argv: list[str], out_path: Path, limit: float) -> tuple[str, str | None]:
    """Run a capture tool with its output in a file and its own time limit; kill its group on
    timeout. Returns (status, note)."""
    try:
        with open(out_path, "wb") as out:
            p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 start_new_session=True)
    except OSError as e:
        return "failed", f"{argv[0]}: {e.strerror or e}"
    proctree.SPAWNED.add(p.pid)  # ours, not an orphan of the repro (proctree.adopt)
    try:
        rc = p.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        proctree.kill_group(p)
        p.wait()
        return "timeout", f"{argv[0]} did not finish within {limit:g}s; killed"
    return ("ok", None) if rc == 0 else ("failed", f"{argv[0]} exited {rc}")


@dataclass
class Context:
    """What a preset's ``on_hang`` / ``after`` gets: the tree, where to write, the time limit."""
    tree: object  # proctree.Tree of the supervised run
    run_dir: Path
    limit: float  # seconds per tool invocation
    env: dict = field(default_factory=dict)  # the run's environment
    reason: str = "hang"  # hang | interrupt | end
    tail: Callable[[], bytes] = lambda: b""  # the last output (progress lines of a core dump)
    procs: list = field(default_factory=list)  # live processes at capture time, tree order
    devices: tuple = DEVICE_PATTERNS
    cmd: tuple = ()  # the repro's command line
    container: str | None = None  # the container it runs in, when the user named it (--container)

    @property
    def hang_dir(self) -> Path:
        d = self.run_dir / "hang"
        d.mkdir(parents=True, exist_ok=True)
        return d

    def targets(self, kind: str, fallback_max: int | None = 4) -> tuple[list, str | None]:
        """(processes, note). ``workers``: the GPU holders; when none hold a device, the Python
        processes, else the processes in tree order, the first ``fallback_max`` of them (the rule
        before worker selection)."""
        procs = self.procs
        if kind == "tree":
            return list(procs), None
        if kind == "python":
            return [p for p in procs if is_python(p)], None
        held = gpu_holders(procs, self.devices)
        if held:
            return held, None
        py = [p for p in procs if is_python(p)]
        return (py or procs)[:fallback_max], "no process holds a GPU device open; attached to " + \
            ("the Python processes" if py else "the first processes of the tree")

    def tool(self, name: str, p, argv: list[str], limit: float | None = None, note: str | None = None) -> dict:
        """Run one capture tool on process ``p``: output in hang/NAME.PID.txt under a time limit."""
        path = self.hang_dir / f"{name}.{p.pid}.txt"
        status, err = run_limited(argv, path, limit or self.limit)
        return {"name": f"{name}:{p.pid}", "status": status, "path": str(path),
                "note": "; ".join(x for x in (err, note) if x) or None}


# --- the presets ----------------------------------------------------------------------------------

def _missing(name: str, how: str) -> list[dict]:
    return [{"name": name, "status": "missing", "path": None, "note": f"{name} is not installed{how}; skipped"}]


def _py_spy(ctx: Context) -> list[dict]:
    exe = which("py-spy")
    if not exe:
        return _missing("py-spy", " (pip install py-spy)")
    procs, note = ctx.targets("workers", fallback_max=None)  # non-destructive: every Python process
    pys = [p for p in procs if is_python(p)]
    if not pys:
        return [{"name": "py-spy", "status": "skipped", "path": None, "note": "no Python process in the tree"}]
    out = []
    for p in pys:  # full file names: the hang verdict reads the source line a blocked thread sits on
        c = ctx.tool("py-spy", p, [exe, "dump", "--full-filenames", "--pid", str(p.pid)], note=note)
        if c["status"] == "failed" and "full-filenames" in _head(c["path"]):  # a py-spy older than the flag
            c = ctx.tool("py-spy", p, [exe, "dump", "--pid", str(p.pid)], note=note)
        out.append(c)
    return out


def _head(path: str | None) -> str:
    try:
        with open(path or "", errors="replace") as f:
            return f.read(2000)
    except OSError:
        return ""


SITECUSTOMIZE = '''\
# Written by dbglog for the "faulthandler" hang capture: dump every thread's stack to a per-process
# file on SIGUSR1. The file's existence tells dbglog this process registered (an unregistered
# process would be killed by SIGUSR1). Then run the interpreter's own sitecustomize, if it has one.
import faulthandler, os, signal, sys
_dir = os.environ.get("DBGLOG_FAULTHANDLER_DIR")
_files = []
def _register():
    try:
        f = open(os.path.join(_dir, "faulthandler.%d.txt" % os.getpid()), "w")
        _files.append(f)
        faulthandler.register(signal.SIGUSR1, file=f, all_threads=True)
    except Exception:
        pass
if _dir:
    _register()
    try:
        os.register_at_fork(after_in_child=_register)
    except Exception:
        pass
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
# The import system pops sys.modules["sitecustomize"] when this module finishes: it must hold a
# module then (ours, or the chained one), or every interpreter prints KeyError: 'sitecustomize'.
_me = sys.modules.pop("sitecustomize", None)
try:
    import sitecustomize  # noqa: F401  (the interpreter's own, further down sys.path)
except ModuleNotFoundError as _e:
    if _e.name != "sitecustomize":
        raise
finally:
    if "sitecustomize" not in sys.modules and _me is not None:
        sys.modules["sitecustomize"] = _me
'''


def _faulthandler_env(run_dir: Path, base_env: dict) -> dict:
    site = run_dir / ".dbglog_site"
    site.mkdir(parents=True, exist_ok=True)
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    hang_dir = run_dir / "hang"
    hang_dir.mkdir(parents=True, exist_ok=True)
    old = base_env.get("PYTHONPATH")
    return {"PYTHONPATH": str(site) + (os.pathsep + old if old else ""),
            "PYTHONFAULTHANDLER": "1",  # also covers SEGV/FPE/ABRT/BUS/ILL
            "DBGLOG_FAULTHANDLER_DIR": str(hang_dir)}


def _wait_growth(targets: list, sizes: dict, limit: float) -> None:
    """Until every file grew and then kept its size for DUMP_SETTLE_S: a dump is many writes, and a
    process preempted between two of them (a loaded machine) would leave half a dump to read."""
    deadline = time.monotonic() + limit
    last: dict | None = None
    since = 0.0
    while time.monotonic() < deadline:
        now = {f: _size(f) for _, f in targets}
        if all(now[f] > sizes.get(f, 0) for _, f in targets):
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= DUMP_SETTLE_S:
                return
        time.sleep(0.02)


def _size(f: Path) -> int:
    try:
        return f.stat().st_size
    except OSError:
        return 0


REGISTER_WAIT_S = 3.0  # a Python that had not yet run its sitecustomize when the timeout came (a loaded machine)


def _registered(every: list, wait: float) -> list:
    """The processes whose handler is registered (their file exists); when none is yet but one is a Python, wait up
    to ``wait`` seconds for it: an interpreter still starting at the timeout registers a moment later, and was
    skipped (another program never registers: no wait)."""
    deadline = time.monotonic() + wait
    while True:
        targets = [(p, f) for p, f in every if f.exists()]
        if targets or time.monotonic() >= deadline or not any(_is_python(p) for p, _ in every):
            return targets
        time.sleep(0.05)


def _is_python(p) -> bool:
    try:
        return "python" in p.name().lower()
    except (proctree.psutil_module().Error, OSError):
        return False


def _faulthandler(ctx: Context) -> list[dict]:
    """Two SIGUSR1 dumps STACK_GAP_S apart (the stuck-process guess compares them); only processes
    that registered the handler (their file exists) get the signal — it would kill the others."""
    every = [(p, ctx.hang_dir / f"faulthandler.{p.pid}.txt") for p in ctx.procs]
    targets = _registered(every, min(ctx.limit, REGISTER_WAIT_S))
    if not targets:
        return [{"name": "faulthandler", "status": "skipped", "path": None,
                 "note": "no process registered the SIGUSR1 dump (not Python, or run with -I/-S)"}]
    limit = min(ctx.limit, 5.0)
    firsts: dict = {}
    for sample in (1, 2):
        sizes = {f: _size(f) for _, f in targets}
        for p, _ in targets:
            try:
                p.send_signal(_signal.SIGUSR1)
            except (proctree.psutil_module().Error, OSError):
                pass
        _wait_growth(targets, sizes, limit)
        if sample == 1:
            firsts = {f: _size(f) for _, f in targets}
            time.sleep(STACK_GAP_S)
    out = []
    for p, f in targets:
        ok = _size(f) > 0
        out.append({"name": f"faulthandler:{p.pid}", "status": "ok" if ok else "timeout", "path": str(f),
                    "note": None if ok else "no stack dump written in time", "pid": p.pid,
                    "first_sample_bytes": firsts.get(f, 0)})
    return out


def python_gdb_helpers(pid: int) -> str | None:
    """The interpreter's gdb helpers (``python3.X-gdb.py``: py-bt, py-list) for process ``pid``:
    beside the executable (pyenv, source builds) or in gdb's auto-load tree (Debian python3-dbg)."""
    try:
        exe = os.path.realpath(f"/proc/{pid}/exe")
    except OSError:
        return None
    base = os.path.basename(exe)
    m = re.match(r"python(\d+\.\d+)", base)
    cands = [exe + "-gdb.py", f"/usr/share/gdb/auto-load{exe}-gdb.py"]
    if m:
        cands += [os.path.join(os.path.dirname(exe), f"python{m.group(1)}-gdb.py"),
                  f"/usr/share/gdb/auto-load/usr/bin/python{m.group(1)}-gdb.py"]
    return next((c for c in cands if os.path.isfile(c)), None)


def _gdb(ctx: Context) -> list[dict]:
    """Every thread's C stack, plus Python frames (py-bt) where the interpreter's gdb helpers
    exist; always ends in detach. Invasive (stops all threads): after py-spy and faulthandler."""
    exe = which("gdb")
    if not exe:
        return _missing("gdb", "")
    procs, note = ctx.targets("workers")
    out = []
    for p in procs:
        script = ["set pagination off", "set confirm off"]
        py_note = None
        if is_python(p):
            helpers = python_gdb_helpers(p.pid)
            if helpers:
                script += [f"source {helpers}", "thread apply all py-bt"]
            else:
                py_note = ("no Python frames: the interpreter's gdb helpers (python3.X-gdb.py, e.g. Debian's "
                           "python3-dbg) were not found; C frames only")
        script += ["thread apply all bt", "detach"]
        argv = [exe, "-p", str(p.pid), "-batch", "-nx"] + [a for c in script for a in ("-ex", c)]
        out.append(ctx.tool("gdb", p, argv, note="; ".join(x for x in (note, py_note) if x) or None))
    return out


# `info line *$pc` in every thread: each wave's PC as file:line (the seeds' PC -> source step)
ROCGDB_SCRIPT = ("set pagination off", "info agents", "info dispatches", "info queues", "info threads", "bt",
                 "thread apply all info line *$pc", "detach")


def _rocgdb_check(env: dict) -> tuple[str | None, str | None]:
    lib = env.get("HSA_TOOLS_LIB") or ""
    if not lib:
        return None, None
    if "debug-agent" in lib or "debug_agent" in lib:
        return (f"--capture rocgdb cannot be combined with the ROCm debug agent (HSA_TOOLS_LIB={lib}) on one "
                "process: both need the debugger interface; drop one of them", None)
    return None, (f"HSA_TOOLS_LIB={lib} is set: if it loads the ROCm debug agent, rocgdb cannot attach "
                  "(one debugger per process)")


def _gdb_batch(ctx: Context, tool: str, where: str, script: Sequence[str]) -> list[dict]:
    """``script`` in batch mode on each GPU-holding worker, ending in detach (or the worker stays
    stopped), under the time limit."""
    exe = which(tool)
    if not exe:
        return _missing(tool, where)
    procs, note = ctx.targets("workers")
    return [ctx.tool(tool, p, [exe, "-p", str(p.pid), "-batch", "-nx"] + [a for c in script for a in ("-ex", c)],
                     note=note) for p in procs]


def _rocgdb(ctx: Context) -> list[dict]:
    return _gdb_batch(ctx, "rocgdb", " (ROCm's rocgdb)", ROCGDB_SCRIPT)


# rocgdb starting the repro and stopping at the first C++ throw (the seeds' `catch throw` step): the
# backtrace there, then the run ends with status 1; a repro that throws nothing exits with its own status.
ROCGDB_THROW_SCRIPT = """\
set pagination off
set confirm off
catch throw
run
if $_isvoid($_exitcode)
  echo dbglog: stopped at a C++ throw (catch throw)\\n
  bt
  info threads
  kill
  quit 1
else
  quit $_exitcode
end
"""


def _rocgdb_throw_check(env: dict) -> tuple[str | None, str | None]:
    if not shutil.which("rocgdb", path=env.get("PATH")):
        return ("--capture rocgdb-throw starts the repro under rocgdb, which is not installed (ROCm's rocgdb on "
                "PATH); drop it or install rocgdb", None)
    return _rocgdb_check(env)


def _rocgdb_throw_wrap(argv: list[str], run_dir: Path) -> list[str]:
    script = run_dir / "rocgdb-throw.gdb"
    script.write_text(ROCGDB_THROW_SCRIPT)
    return ["rocgdb", "-q", "-nx", "-batch", "-x", str(script), "--args", *argv]


CUDA_GDB_SCRIPT = ("set pagination off", "info cuda kernels", "info cuda blocks", "thread apply all bt", "detach")


def _cuda_gdb(ctx: Context) -> list[dict]:
    return _gdb_batch(ctx, "cuda-gdb", " (CUDA toolkit)", CUDA_GDB_SCRIPT)


def _cuda_coredump_env(run_dir: Path, base_env: dict) -> dict:
    return {
        "CUDA_ENABLE_USER_TRIGGERED_COREDUMP": "1",
        "CUDA_COREDUMP_PIPE": str(run_dir / "cuda_coredump_pipe_%h.%p.%t"),
        "CUDA_ENABLE_COREDUMP_ON_EXCEPTION": "1",
        "CUDA_COREDUMP_SHOW_PROGRESS": "1",
        "CUDA_COREDUMP_GENERATION_FLAGS": "skip_nonrelocated_elf_images,skip_global_memory,"
                                          "skip_shared_memory,skip_local_memory,skip_constbank_memory",
        "CUDA_COREDUMP_FILE": str(run_dir / "cuda_coredump_%h.%p.%t"),
    }


def _coredump_pipes(ctx: Context) -> tuple[set[str], set[int]]:
    """The core-dump pipes the processes hold open (and the files the run folder has), and the pids
    that hold one (the processes the dump will end)."""
    pipes: set[str] = set()
    holders: set[int] = set()
    for p in ctx.procs:
        try:
            fds = os.listdir(f"/proc/{p.pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{p.pid}/fd/{fd}")
            except OSError:
                continue
            if "cuda_coredump_pipe_" in target:
                pipes.add(target.split(" (deleted)")[0])
                holders.add(p.pid)
    pipes.update(str(f) for f in ctx.run_dir.glob("cuda_coredump_pipe_*"))
    return pipes, holders


def _trigger(pipe: str, deadline: float) -> dict:
    """Write 1 MiB into one core-dump pipe, like the documented `dd bs=1M count=1` (a short echo
    may not trigger it)."""
    try:
        fd = os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as e:
        return {"name": "cuda-coredump", "status": "failed", "path": pipe, "note": f"cannot open pipe: {e}"}
    chunk, sent = b"\0" * 65536, 0
    try:
        while sent < 1 << 20 and time.monotonic() < deadline:
            try:
                sent += os.write(fd, chunk)
            except BlockingIOError:
                time.sleep(0.01)
            except OSError:
                break  # reader went away: the dump started and the process is exiting
    finally:
        os.close(fd)
    return {"name": "cuda-coredump", "status": "triggered", "path": pipe, "note": None}


def _dump_done(ctx: Context, holders: set[int], sizes: dict) -> bool:
    """The dump is finished when the log says so, when every process that held a pipe has gone
    (the dump ends it), or when the dump files stopped growing (a launcher that stays alive must
    not hold the capture for its whole time limit)."""
    tail = ctx.tail()
    if b"coredump: All done" in tail or b"Writing done" in tail or not ctx.tree.alive():
        return True
    alive = {p.pid for p in ctx.tree.alive()}
    if holders and not holders & alive:
        return True
    now = {str(f): _size(f) for f in ctx.run_dir.glob("cuda_coredump_*") if "pipe" not in f.name}
    settled = bool(now) and now == sizes.get("last") and time.monotonic() - sizes.get("since", 0) >= 0.5
    if now != sizes.get("last"):
        sizes.update(last=now, since=time.monotonic())
    return settled


def _cuda_coredump(ctx: Context) -> list[dict]:
    """Write 1 MiB into each process's core-dump pipe (a terminal capture: the dump aborts the
    process, which is why the runner fixed the outcome before calling us), then wait until the
    dump is done -- bounded, and no longer than it takes."""
    pipes, holders = _coredump_pipes(ctx)
    if not pipes:
        return [{"name": "cuda-coredump", "status": "skipped", "path": None,
                 "note": "no CUDA core-dump pipe found (no process created a CUDA context?)"}]
    deadline = time.monotonic() + ctx.limit
    out = [_trigger(pipe, deadline) for pipe in sorted(pipes)]
    sizes: dict = {}
    while time.monotonic() < deadline and not _dump_done(ctx, holders, sizes):
        time.sleep(0.05)
    dumps = sorted(str(f) for f in ctx.run_dir.glob("cuda_coredump_*") if "pipe" not in f.name)
    for c in out:
        if c["status"] == "triggered":
            c["status"] = "ok" if dumps else "triggered"
            c["dumps"] = dumps
    return out


# GPU state at failure time: use and VRAM per GPU, and the kernel log's GPU lines since the run started.
def _run_started(run_dir: Path) -> float | None:
    """The run's start, from its folder's name (runner.new_run_id: local time, to the second)."""
    m = re.match(r"(\d{8}-\d{6})-", run_dir.name)
    try:
        return time.mktime(time.strptime(m.group(1), "%Y%m%d-%H%M%S")) if m else None
    except ValueError:
        return None


def _kernel_log(ctx: Context, out_dir: Path) -> dict:
    """dmesg (or journalctl -k) filtered to the GPU lines stamped since the run started."""
    from dbglog.diagnose import gpustate

    since = _run_started(ctx.run_dir)
    path = out_dir / "gpu-state.kernel-log.txt"
    for argv in (["dmesg", "--time-format", "iso"], ["journalctl", "-k", "-o", "short-iso", "--no-pager"]
                 + ([f"--since=@{int(since)}"] if since else [])):
        exe = which(argv[0])
        if not exe:
            continue
        status, note = run_limited([exe, *argv[1:]], path, min(ctx.limit, 10.0))
        text = path.read_text(errors="replace") if path.exists() else ""
        if status != "ok" or not text.strip():
            continue
        lines, older = gpustate.kernel_lines_since(text, since)
        path.write_text("\n".join(lines) + ("\n" if lines else ""))
        return {"name": "gpu-state:kernel-log", "status": "ok", "path": str(path),
                "note": (f"{len(lines)} amdgpu/xnack/Xid line(s) since the run started" if lines
                         else "no amdgpu/xnack/Xid line since the run started")
                + (f" ({older} older left out)" if older else "")}
    return {"name": "gpu-state:kernel-log", "status": "missing", "path": None,
            "note": "the kernel log could not be read (no dmesg/journalctl, or no permission)"}


def _gpu_state(ctx: Context) -> list[dict]:
    from dbglog.diagnose import gpustate

    out_dir = ctx.hang_dir if ctx.reason != "end" else ctx.run_dir
    limit = min(ctx.limit, 10.0)  # an smi tool can hang after an Xid: bounded
    out = []
    for tool, argv, name in (("nvidia-smi", [f"--query-gpu={gpustate.QUERY_FIELDS}", "--format=csv"], "nvidia-smi"),
                             ("rocm-smi", ["--showuse", "--showmeminfo", "vram"], "rocm-smi")):
        exe = which(tool)
        if exe:
            path = out_dir / f"gpu-state.{name}.txt"
            status, note = run_limited([exe, *argv], path, limit)
            out.append({"name": f"gpu-state:{name}", "status": status, "path": str(path), "note": note})
    if not out:
        out.append({"name": "gpu-state", "status": "missing", "path": None,
                    "note": "neither nvidia-smi nor rocm-smi is installed: no GPU use or VRAM recorded"})
    out.append(_kernel_log(ctx, out_dir))
    return out


def _gpu_state_after(ctx: Context) -> tuple[list[dict], list[dict]]:
    return _gpu_state(ctx), []


register(Preset("py-spy", "py-spy dump of the GPU workers' Python stacks (non-destructive)", order=10,
                targets="workers", on_hang=_py_spy))
register(Preset("faulthandler", "every Python process dumps its threads' stacks on SIGUSR1 (armed at launch)",
                order=20, targets="tree", env=_faulthandler_env, on_hang=_faulthandler))
register(Preset("gdb", "gdb batch: C stacks and Python frames (py-bt) of the GPU workers, then detach", order=40,
                targets="workers", on_hang=_gdb))
register(Preset("rocgdb", "rocgdb batch on each GPU worker: agents, dispatches, queues, threads, bt, detach",
                order=45, targets="workers", check=_rocgdb_check, on_hang=_rocgdb))
register(Preset("cuda-gdb", "cuda-gdb attach to each GPU worker: kernels, blocks, bt, detach", order=46,
                targets="workers", on_hang=_cuda_gdb))


# The NCCL flight recorder: armed at launch, the ranks asked for dumps on a hang, the analyzer run
# after the run (the steps themselves are in dbglog/run/flightrec.py).
def _nccl_fr_env(run_dir: Path, base_env: dict) -> dict:
    from dbglog.run import flightrec

    return flightrec.env(run_dir)


def _nccl_fr_hang(ctx: Context) -> list[dict]:
    from dbglog.run import flightrec

    asked = flightrec.request_dumps(ctx.run_dir, wait=min(ctx.limit, 5.0))
    return [{"name": "nccl-fr:request", "status": "ok" if asked else "skipped", "path": None,
             "note": f"asked {asked} rank(s) for a dump" if asked else "no rank opened its dump pipe"}]


def _nccl_fr_after(ctx: Context) -> tuple[list[dict], list[dict]]:
    from dbglog.run import flightrec

    caps, verdict = flightrec.collect(ctx.run_dir, limit=ctx.limit)
    return caps, [flightrec.evidence(verdict)] if verdict else []


register(Preset("nccl-fr", "PyTorch NCCL flight recorder: armed at launch, per-rank dumps and fr_trace's verdict "
                "after a hang", order=50, targets="tree", env=_nccl_fr_env, on_hang=_nccl_fr_hang,
                after=_nccl_fr_after))
def _cuda_coredump_after(ctx: Context) -> tuple[list[dict], list[dict]]:
    """Core dumps the run wrote by itself (an exception, CUDA_ENABLE_COREDUMP_ON_EXCEPTION): listed
    on the run, not left for someone to find in the folder."""
    dumps = sorted(str(f) for f in ctx.run_dir.glob("cuda_coredump_*") if "pipe" not in f.name)
    if not dumps:
        return [], []
    return [{"name": "cuda-coredump:files", "status": "ok", "path": None, "dumps": dumps,
             "note": f"{len(dumps)} CUDA core dump file(s) in the run folder"}], []


# --- docker: the container the repro runs in ---------------------------------------------------------

# `docker run` options that take no value (every other option takes one: --name X, -e K=V, -v a:b ...)
_DOCKER_FLAGS = {"-d", "--detach", "-i", "--interactive", "-t", "--tty", "--rm", "--privileged", "--init", "-P",
                 "--publish-all", "--read-only", "--no-healthcheck", "--oom-kill-disable", "-q", "--quiet",
                 "--sig-proxy", "--help"}
_DOCKER_SHORT_FLAGS = set("ditPq")


def _docker_args(argv: Sequence[str]) -> tuple[str | None, list[str]]:
    """(the docker subcommand, its arguments) of a command line starting docker (after sudo)."""
    args = list(argv)
    while args and os.path.basename(args[0]) in ("sudo", "env") or (args and "=" in args[0] and args[0][0] != "-"):
        args = args[1:]
    if not args or os.path.basename(args[0]) != "docker":
        return None, []
    rest = args[1:]
    if rest[:1] == ["container"]:  # docker container run|exec
        rest = rest[1:]
    return (rest[0], rest[1:]) if rest else (None, [])


def _options(args: list[str]) -> tuple[dict, str | None]:
    """docker run/exec options (name -> value) and the first argument after them."""
    opts: dict = {}
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            return opts, args[i + 1] if i + 1 < len(args) else None
        if not a.startswith("-") or a == "-":
            return opts, a
        if "=" in a and a.startswith("--"):
            k, v = a.split("=", 1)
            opts[k] = v
        elif a in _DOCKER_FLAGS or (a[1:2] != "-" and set(a[1:]) <= _DOCKER_SHORT_FLAGS):
            opts[a] = True
        else:
            opts[a] = args[i + 1] if i + 1 < len(args) else None
            i += 1
        i += 1
    return opts, None


def docker_target(cmd: Sequence[str], container: str | None = None) -> dict | None:
    """The container a run's command runs in: ``--container`` when given, else the one a ``docker
    exec`` names, the ``--name`` (or ``--cidfile``) of a ``docker run``, or -- a guess, said so --
    the latest container of a ``docker run``'s image. None when the command starts no container."""
    if container:
        return {"container": container, "how": "--container"}
    sub, args = _docker_args(cmd)
    if sub not in ("run", "exec"):
        return None
    opts, first = _options(args)
    if sub == "exec":
        return {"container": first, "how": "docker exec"} if first else None
    rm = {"removed": True} if opts.get("--rm") else {}
    if opts.get("--name"):
        return {"container": opts["--name"], "how": "docker run --name", **rm}
    if opts.get("--cidfile"):
        return {"cidfile": opts["--cidfile"], "how": "docker run --cidfile", **rm}
    return {"image": first, "how": "docker run", **rm} if first else None


def _docker_name(exe: str, target: dict, ctx: Context) -> tuple[str | None, str | None]:
    """(the container's name or id, a note when it is a guess or unknown)."""
    if target.get("container"):
        return target["container"], None
    if target.get("cidfile"):
        try:
            return Path(target["cidfile"]).read_text().strip() or None, None
        except OSError as e:
            return None, f"--cidfile {target['cidfile']}: {e.strerror or e}"
    try:
        got = subprocess.run([exe, "ps", "-a", "--latest", "--quiet", "--filter", f"ancestor={target['image']}"],
                             capture_output=True, text=True, timeout=min(ctx.limit, 20.0))
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"docker ps failed: {e}"
    cid = got.stdout.strip().splitlines()[0] if got.returncode == 0 and got.stdout.strip() else None
    if cid is None:
        return None, f"no container of image {target['image']} is left (docker run --rm removes it)"
    return cid, (f"a guess: the latest container of image {target['image']} (the docker run gave no --name; "
                 "pass --name or --container to be sure)")


def _docker_after(ctx: Context) -> tuple[list[dict], list[dict]]:
    """`docker inspect` and the last lines of `docker logs` of the repro's container, after the run."""
    target = docker_target(ctx.cmd, ctx.container)
    if target is None:
        return [{"name": "docker", "status": "skipped", "path": None,
                 "note": "the command runs no container (no docker run/exec) and no --container was given"}], []
    exe = which("docker")
    if not exe:
        return _missing("docker", ""), []
    name, note = _docker_name(exe, target, ctx)
    if name is None:
        return [{"name": "docker", "status": "skipped", "path": None, "note": note}], []
    out = []
    limit = min(ctx.limit, 30.0)
    for what, argv, file in (("inspect", [exe, "inspect", name], "docker-inspect.json"),
                             ("logs", [exe, "logs", "--timestamps", "--tail", str(DOCKER_LOG_LINES), name],
                              "docker-logs.txt")):
        path = ctx.run_dir / file
        status, err = run_limited(argv, path, limit)
        if status == "failed" and target.get("removed"):
            err = f"{err}: the container is gone (docker run --rm removes it when it exits)"
        out.append({"name": f"docker:{what}", "status": status, "path": str(path), "container": name,
                    "note": "; ".join(x for x in (err, note) if x) or None})
    return out, []


DOCKER_LOG_LINES = 5000  # the container's last lines (its log may be days long)
register(Preset("docker", "docker inspect and the last docker logs of the container the repro runs in (a docker "
                "run/exec command, or --container NAME), after the run; on by default for such a command",
                order=95, targets="tree", after=_docker_after))
register(Preset("rocgdb-throw", "starts the repro under rocgdb in batch: catch throw, then the backtrace at the "
                "first C++ throw (the run then ends with status 1)", order=44, targets="tree",
                check=_rocgdb_throw_check, wrap=_rocgdb_throw_wrap))
register(Preset("cuda-coredump", "CUDA core dump on exception, and a user-triggered one on hang (aborts it)",
                order=90, targets="tree", env=_cuda_coredump_env, on_hang=_cuda_coredump,
                after=_cuda_coredump_after))
# (registered last: the presets' listing keeps its order; order=5 runs it first on a hang, passive)
register(Preset("gpu-state", "GPU use and VRAM (nvidia-smi / rocm-smi) and the kernel log's amdgpu/xnack/Xid lines "
                "since the run started, at the hang and after the run", order=5, targets="tree",
                on_hang=_gpu_state, after=_gpu_state_after))


# --- taking them --------------------------------------------------------------------------------

def take(tree, run_dir: Path, presets: Sequence[str], commands: Sequence[str], limit: float, *,
         env: dict | None = None, reason: str = "hang", tail: Callable[[], bytes] = lambda: b"") -> list[dict]:
    """Every configured capture on a live tree, in the documented safe order (snapshot, then the
    presets by ``order`` with the user's ``--on-hang`` commands between the non-destructive and the
    invasive ones), then the stuck-process guess (a capture named ``stuck``, second in the list)."""
    env = dict(env if env is not None else os.environ)
    if reason == "hang" and "gpu-state" not in presets and (which("nvidia-smi") or which("rocm-smi")):
        presets = [*presets, "gpu-state"]  # the GPU state at failure time, by default where the tools exist
    tree.snapshot()
    tree.scan_marker()
    ctx = Context(tree=tree, run_dir=Path(run_dir), limit=limit, env=env, reason=reason, tail=tail,
                  procs=tree.alive(), devices=device_patterns(env))
    hang_dir = ctx.hang_dir
    out: list[dict] = []
    before = _cpu_sample(ctx.procs)
    # 0. Passive snapshot: state, wait channel and GPU devices of every process (D = a kernel wait).
    snap = hang_dir / "snapshot.json"
    rows = []
    for p in ctx.procs:
        row = proctree.proc_state(p)
        row["gpu_devices"] = open_devices(p.pid, ctx.devices)
        rows.append(row)
    snap.write_text(json.dumps(rows, indent=1))
    out.append({"name": "snapshot", "status": "ok", "path": str(snap), "note": None})
    steps: list[tuple[int, str]] = [(REGISTRY[n].order, n) for n in presets]
    steps.append((30, ""))  # the user's commands: after the non-destructive presets, before gdb
    for _, n in sorted(steps, key=lambda s: s[0]):
        if not n:
            out.extend(_user_commands(ctx, commands))
            continue
        p = REGISTRY[n]
        if p.on_hang is None or (reason == "interrupt" and not p.on_interrupt):
            continue
        try:
            out.extend(p.on_hang(ctx))
        except Exception as e:  # noqa: BLE001 - one broken capture must not cost the others or the kill
            out.append({"name": n, "status": "failed", "path": None, "note": f"capture failed: {e!r}"})
    # CPU time ticks in 10 ms steps: a window shorter than a quarter second would read noise as a spin.
    waited = time.monotonic() - min((t for t, _ in before.values()), default=time.monotonic())
    if len(ctx.procs) > 1 and waited < 0.25:
        time.sleep(0.25 - waited)
    stuck = name_stuck(ctx, rows, out, before, _cpu_sample(ctx.procs))
    if stuck:
        out.insert(1, stuck)  # right after the snapshot: the last entry stays the last tool run
    return out


def _user_commands(ctx: Context, commands: Sequence[str]) -> list[dict]:
    out = []
    for i, command in enumerate(commands, 1):
        argv = [subst(a, ctx.tree.root_pid, ctx.run_dir) for a in shlex.split(command)]
        if not argv:
            continue
        if not shutil.which(argv[0]) and not os.path.exists(argv[0]):
            out.append({"name": f"on_hang:{i}", "status": "missing", "path": None,
                        "note": f"{argv[0]}: command not found; skipped"})
            continue
        path = ctx.hang_dir / f"on_hang.{i}.txt"
        status, note = run_limited(argv, path, ctx.limit)
        out.append({"name": f"on_hang:{i}", "status": status, "path": str(path), "note": note, "cmd": argv})
    return out


def after(presets: Sequence[str], run_dir: Path, limit: float, env: dict | None = None, *, cmd: Sequence[str] = (),
          container: str | None = None) -> tuple[list, list]:
    """The presets' after-the-run steps: (captures, evidence)."""
    caps: list[dict] = []
    found: list[dict] = []
    ctx = Context(tree=None, run_dir=Path(run_dir), limit=limit, env=dict(env or {}), reason="end", cmd=tuple(cmd),
                  container=container)
    for n in presets:
        p = REGISTRY[n]
        if p.after is None:
            continue
        try:
            c, e = p.after(ctx)
        except Exception as exc:  # noqa: BLE001
            c, e = [{"name": n, "status": "failed", "path": None, "note": f"collection failed: {exc!r}"}], []
        caps.extend(c)
        found.extend(e)
    return caps, found


# --- the stuck process ----------------------------------------------------------------------------

def _frame(f: evidence.Frame) -> str:
    """A frame as the stuck-process guess shows it: ``function (file.py:line)``, or a native
    ``function (lib or file:line)`` without a C++ signature's argument types (the line stays short)."""
    if f.line is not None:
        return f"{f.function} ({os.path.basename(f.file or '')}:{f.line})"
    name = (f.function.split("(", 1)[0].strip() or f.function) if f.native else f.function
    return name + (f" ({os.path.basename(f.file)})" if f.file else "")


def _stacks(text: str) -> list[tuple[evidence.Thread, list[str]]]:
    """The dump's threads that have frames (read by evidence.split_threads), frames formatted."""
    # imported here, after a hang: every run imports this module, and evidence compiles ~85 patterns
    from dbglog.diagnose import evidence

    return [(t, [_frame(f) for f in t.frames]) for t in evidence.split_threads(text, max_frames=None) if t.frames]


def stack_threads(text: str) -> list[tuple[str, list[str]]]:
    """(thread header, frames innermost first) from a faulthandler, py-spy or gdb (py-bt, bt) dump."""
    return [(t.header, frames) for t, frames in _stacks(text)]


# Top frames of a thread that waits rather than works (Python functions, and C ones by substring).
_IDLE_PY = {"wait", "select", "poll", "sleep", "accept", "recv", "recv_into", "get", "acquire", "join", "read",
            "readline", "readinto", "serve_forever", "_wait_for_tstate_lock", "waitpid", "_try_wait", "communicate",
            "run_forever", "_run_once", "worker", "_worker", "wait_for", "_recv", "_recv_bytes", "recv_bytes"}
_IDLE_C = ("wait", "sleep", "poll", "select", "futex", "accept", "recv", "__read", "read_nocancel")


def _idle(frames: list[str]) -> bool:
    top = frames[0].split(" (", 1)[0]
    return top in _IDLE_PY or (".py:" not in frames[0] and any(w in top for w in _IDLE_C))


def main_frames(text: str) -> list[str]:
    """The frames of the thread that matters most: py-spy's active thread, else the first thread
    not waiting (its top frame is not a wait, select, sleep, lock ...), else faulthandler's current
    thread (the main thread takes the signal) or py-spy's MainThread; Python frames before gdb's C ones."""
    threads = _stacks(text)
    if not threads:
        return []
    py = [(t, fr) for t, fr in threads if any(".py:" in x for x in fr)] or threads
    active = [fr for t, fr in py if (t.state or "").startswith("active")]
    if active:
        return active[0]
    main = [fr for t, fr in py if t.current or t.name == "MainThread"]
    busy = [fr for t, fr in py if not _idle(fr)]
    if busy and (not main or _idle(main[0])):
        return busy[0]
    return main[0] if main else py[0][1]


def _cpu_sample(procs) -> dict[int, tuple[float, float]]:
    out = {}
    for p in procs:
        try:
            t = p.cpu_times()
            out[p.pid] = (time.monotonic(), t.user + t.system)
        except Exception:  # noqa: BLE001 - gone or unreadable
            continue
    return out


def _where(frame: str) -> str:
    return re.sub(r":\d+\)$", ")", frame)


def fh_dumps(text: str) -> list[str]:
    """The dumps in a faulthandler file (dbglog.diagnose.threads.fh_dumps)."""
    from dbglog.diagnose import threads

    return threads.fh_dumps(text)


def _fh_samples(path: str, first_bytes: int) -> tuple[list[str], list[str]]:
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return [], []
    dumps = fh_dumps(text)
    if len(dumps) >= 2:  # the last two: the byte count was taken while the first could still be written
        return main_frames(dumps[-2]), main_frames(dumps[-1])
    # Byte offset of the first dump's end: the text is ASCII in practice (paths may not be).
    raw = text.encode()
    return main_frames(raw[:first_bytes].decode(errors="replace")), main_frames(raw[first_bytes:].decode(errors="replace"))


def _same_stack(one: list[str], two: list[str]) -> bool:
    """By function and file (a loop's line may differ between samples), innermost first; one stack
    that is the other cut short (a dump read while its outer frames were still being written) is
    the same stack."""
    n = min(len(one), len(two))
    return [_where(f) for f in one[:n]] == [_where(f) for f in two[:n]]


def _serving(procs) -> dict[int, int]:
    """pid -> port, for processes holding an established TCP connection on a port they also listen
    on: a request was accepted and someone waits for the answer."""
    out: dict[int, int] = {}
    for p in procs:
        try:
            conns = p.net_connections(kind="tcp") if hasattr(p, "net_connections") else p.connections(kind="tcp")
        except Exception:  # noqa: BLE001 - gone, or not ours to read
            continue
        listening = {c.laddr.port for c in conns if c.status == "LISTEN" and c.laddr}
        for c in conns:
            if c.status == "ESTABLISHED" and c.laddr and c.laddr.port in listening:
                out[p.pid] = c.laddr.port
                break
    return out


def _capture_stacks(caps: list[dict]) -> tuple[dict, dict, dict]:
    """Per pid, from the stack captures: (source path, frames) of the thread that matters most (a
    suspect blocked in the program's code first), whether the stack moved between samples, and why
    a suspect is one."""
    stacks: dict[int, tuple[str, list[str]]] = {}  # pid -> (source path, frames)
    moved: dict[int, bool] = {}
    blocked: dict[int, str] = {}  # pid -> why its suspect thread is one
    for c in caps:
        path, name = c.get("path"), c.get("name", "")
        if not path or ":" not in name or c.get("status") != "ok":
            continue
        try:
            pid = int(name.rsplit(":", 1)[1])
        except ValueError:
            continue
        if name.startswith("faulthandler:"):
            one, two = _fh_samples(path, c.get("first_sample_bytes") or 0)
            if one and two:
                moved[pid] = not _same_stack(one, two)
            frames = two or one
        else:
            try:
                frames = main_frames(Path(path).read_text(errors="replace"))
            except OSError:
                frames = []
        suspect = _suspect(path, pid)
        if suspect:  # a thread blocked in the program's code is the stuck spot, not an idle main loop
            frames, blocked[pid] = suspect
        # Python frames say more than C frames of the interpreter: keep the first source with them.
        if frames and (pid not in stacks or (not any(".py" in f for f in stacks[pid][1])
                                            and any(".py" in f for f in frames))):
            stacks[pid] = (path, frames)
    return stacks, moved, blocked


def _score(r: dict, seen: dict) -> tuple[int, list[str]]:
    """One process's score for the stuck-process guess and the reasons (name_stuck's table)."""
    pid, why, score = r["pid"], [], 0
    moved, cpu = seen["moved"], seen["cpu"]
    if moved.get(pid) is False:
        score += 2
        why.append("stack unchanged between two samples")
    elif moved.get(pid):
        score -= 3
    if r.get("gpu_devices"):
        score += 2
        why.append("holds " + ", ".join(r["gpu_devices"][:2]))
    if r.get("status") == "disk-sleep":
        score += 3
        why.append(f"in uninterruptible wait (state D, {r.get('wchan') or '?'})")
    if cpu.get(pid, 0.0) >= 0.3:
        score += 3
        why.append(f"busy on CPU ({cpu[pid]:.0%})")
    elif pid == seen["busiest"]:
        score += 1
        why.append(f"busiest on CPU ({cpu[pid]:.0%})")
    if pid in seen["blocked"]:  # a thread blocked in the program's own code (the hang verdict)
        score += 2
        why.append(seen["blocked"][pid])
    if pid in seen["serving"]:
        score += 1
        why.append(f"a client waits on it (accepted connection on port {seen['serving'][pid]})")
    if (r.get("wchan") or "") in ("do_wait", "kernel_wait4"):
        score -= 2
    return score, why


def name_stuck(ctx: Context, rows: list[dict], caps: list[dict], before: dict, later: dict) -> dict | None:
    """Guess which process the hang is in, from what the captures saw. Scored, highest wins:
    stack unchanged between two samples +2 (moved -3), holds a GPU device +2, state D +3, busy on
    CPU (>= 30 %: a spin, a livelock, a GPU busy-wait) +3, else the busiest +1, holds a connection it
    accepted (a client waits on it) +1, waiting for its children (wchan do_wait) -2; at equal
    scores a leaf of the tree before a parent."""
    if not rows:
        return None
    stacks, moved, blocked = _capture_stacks(caps)
    pids = [r["pid"] for r in rows]
    ppids = {}
    for p in ctx.procs:
        try:
            ppids[p.pid] = p.ppid()
        except Exception:  # noqa: BLE001
            ppids[p.pid] = None
    parents = {pp for pp in ppids.values() if pp in pids}
    cpu = {}
    for pid in pids:
        if pid in before and pid in later:
            (t0, c0), (t1, c1) = before[pid], later[pid]
            if t1 - t0 >= 0.2:
                cpu[pid] = (c1 - c0) / (t1 - t0)
    busiest = max(cpu, key=cpu.get) if cpu and max(cpu.values()) >= 0.1 else None
    serving = _serving(ctx.procs)
    seen = {"moved": moved, "cpu": cpu, "busiest": busiest, "blocked": blocked, "serving": serving}
    scored = []
    for r in rows:
        score, why = _score(r, seen)
        scored.append((score, r["pid"] not in parents, r["pid"] in stacks, -r["pid"], r["pid"], why, r))
    scored.sort(reverse=True)
    score, _, _, _, pid, why, row = scored[0]
    path, frames = stacks.get(pid, (None, []))
    if not frames and (len(rows) == 1 or not why):
        return None  # no stack and nothing telling it apart: naming it would say nothing
    if not why:
        why.append("the only process" if len(rows) == 1 else "a leaf of the tree, nothing better known")
    # "source", not "path": the evidence parsers read every capture's path, and this file is
    # already another capture's.
    return {"name": "stuck", "status": "ok", "path": None, "source": path, "pid": pid, "cmdline": (row.get("cmdline") or "")[:300],
            "frames": frames[:8], "reason": "guess: " + "; ".join(why), "note": None}


def _suspect(path: str, pid: int) -> tuple[list[str], str] | None:
    """The frames of the dump's first suspect thread (dbglog.diagnose.threads) and why."""
    from dbglog.diagnose import threads

    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return None
    try:  # relative source paths (python ../x.py) are the process's own: read them from its cwd
        roots: tuple[str, ...] = (os.readlink(f"/proc/{pid}/cwd"),)
    except OSError:
        roots = ()
    found = threads.first_suspect(text, roots=roots)
    if not found:
        return None
    t, why = found
    return [_frame(f) for f in t.frames], why


def pick_stuck(caps: Sequence[dict]) -> dict | None:
    """The run's stuck-process guess among its captures: the first (a server companion's, named
    ``server:stuck``, comes before the client's: the fault is usually there)."""
    return next((c for c in caps if c.get("name", "").rsplit(":", 1)[-1] == "stuck"), None)


def stuck_summary(stuck: dict | None, frames: int = 3) -> str | None:
    """One line for the run summary and the attempt."""
    if not stuck:
        return None
    top = " <- ".join(stuck.get("frames", [])[:frames]) or "no stack captured"
    cmd = stuck.get("cmdline") or ""
    return f"stuck process {stuck['pid']} ({cmd[:60]}): {top} [{stuck.get('reason')}]"
