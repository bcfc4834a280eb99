"""Run a repro under supervision: capture its output, classify how it ended, never leak processes.

Rules from /work/shared/reference/gpu-debug-practice.md §2, §4 and §5:

* Argument lists only (no shell unless the user passes one), in a new session so the repro leads its
  own process group. ``subprocess.run(timeout=)`` kills only the direct child; torchrun ranks and
  vLLM engine cores would survive holding the GPU. We signal the group *and* every descendant we
  ever saw, because descendants that call ``setsid`` leave the group and, once their parent dies,
  the parent/child links too. Descendants are snapshotted repeatedly while the run is alive and
  are also found by an inherited marker variable (``DBGLOG_RUN_ID``) at teardown.
* Output goes through pipes drained by one pump thread into files (stdout, stderr, merged output),
  so a chatty child never blocks and we never deadlock; beyond the cap the middle is dropped with a
  visible marker. ``PYTHONUNBUFFERED=1`` so the last lines before an abort are not lost.
* On timeout the outcome is fixed as ``hang`` first, then diagnostics run in the documented safe
  order (snapshot, py-spy, faulthandler, user commands, gdb, one terminal CUDA core dump), then
  SIGTERM to the tree, a grace period, SIGKILL, and anything still alive is reported with its state.
* Exit statuses are normalised (-N and 128+N both mean signal N); ``git bisect run`` only ever gets
  0, 1 or 125 from us.
"""

from __future__ import annotations

import collections
import contextvars
import datetime as _dt
import fnmatch
import json
import os
import select
import selectors
import signal as _signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from dbglog.run import options as _options
from dbglog.run import proctree
from dbglog.run.options import RunOptions
from dbglog.util.errors import DbglogError

# server_died / server_not_ready: a server-shaped repro (dbglog/run/serve.py) whose server is the problem,
# not the client.
OUTCOMES = ("pass", "fail", "crash", "hang", "oom", "error", "server_died", "server_not_ready")
DEFAULT_OUTPUT_CAP = _options.DEFAULT_OUTPUT_CAP  # per file (stdout, stderr, merged output)
RUN_ID_VAR = "DBGLOG_RUN_ID"


# --- exit status ------------------------------------------------------------------------------

def normalize_exit(returncode: int | None) -> tuple[int | None, int | None]:
    """Return ``(exit_code, signal)`` for a Popen returncode.

    ``-N`` (Popen: killed by signal N) gives ``(None, N)``. A shell reports a child's death by
    signal N as exit status ``128+N`` (``sh -c "a; b"``, ``bash -c``), so 129..159 gives
    ``(128+N, N)``: the run counts as a crash by N while the raw status is kept.
    """
    if returncode is None:
        return None, None
    if returncode < 0:
        return None, -returncode
    if 128 < returncode <= 128 + 31:
        return returncode, returncode - 128
    return returncode, None


def signal_name(sig: int | None) -> str | None:
    if sig is None:
        return None
    try:
        return _signal.Signals(sig).name
    except ValueError:
        return f"SIG{sig}"


# --- result -----------------------------------------------------------------------------------

@dataclass
class RunResult:
    id: str
    cmd: list[str]
    cwd: str
    env_overrides: dict
    started: str  # ISO 8601 UTC
    duration_s: float
    exit_code: int | None  # raw status when the process exited; None when killed by a signal
    signal: int | None  # normalised: from -N or 128+N
    outcome: str  # one of OUTCOMES
    signature: str | None = None
    key_lines: list[dict] = field(default_factory=list)  # [{"line": n, "text": ...}]
    captures: list[dict] = field(default_factory=list)  # [{"name", "status", "path", "note"}]
    notes: list[str] = field(default_factory=list)
    survivors: list[dict] = field(default_factory=list)  # processes that outlived SIGKILL
    truncated: bool = False
    omitted_bytes: dict = field(default_factory=dict)  # stream -> bytes dropped from the middle
    paths: dict = field(default_factory=dict)
    git_commit: str | None = None
    git_dirty: bool | None = None
    timeout: float | None = None
    infra_tainted: bool = False  # a process survived: the next bisect step must not trust the GPU
    kernel_api: list[dict] = field(default_factory=list)  # last kernel-API call per log
    evidence: list[dict] = field(default_factory=list)  # facts from debugger dumps (dbglog/run/evidence.py)
    error: str | None = None  # why the command could not start (outcome "error")
    idle: dict | None = None  # --idle-timeout fired: which streams went quiet, for how long
    server: dict | None = None  # a server-shaped repro's server side (dbglog/run/serve.py)
    kernel_api_level: dict | None = None  # --escalate: level, dump dir and filters of this run
    preflight: dict = field(default_factory=dict)  # core limit, GPU processes found before the run
    stuck: dict | None = None  # the hang captures' guess at the stuck process (dbglog/run/captures.py)
    slurm: dict | None = None  # a Slurm-launched run: job id, node(s), state (dbglog/run/slurm.py)
    options: dict | None = None  # the run options that shaped it (RunOptions.record): `dbglog rerun` uses them

    @property
    def signal_name(self) -> str | None:
        return signal_name(self.signal)

    def to_dict(self) -> dict:
        """Plain JSON types, fixed key order (so JSON output is stable across runs)."""
        return {
            "id": self.id,
            "cmd": list(self.cmd),
            "cwd": self.cwd,
            "env_overrides": {k: self.env_overrides[k] for k in sorted(self.env_overrides)},
            "started": self.started,
            "duration_s": round(self.duration_s, 3),
            "exit_code": self.exit_code,
            "signal": self.signal,
            "signal_name": self.signal_name,
            "outcome": self.outcome,
            "signature": self.signature,
            "key_lines": [dict(k) for k in self.key_lines],
            "captures": [dict(c) for c in self.captures],
            "notes": list(self.notes),
            "survivors": [dict(s) for s in self.survivors],
            "truncated": self.truncated,
            "omitted_bytes": dict(self.omitted_bytes),
            "paths": dict(self.paths),
            "git_commit": self.git_commit,
            "git_dirty": self.git_dirty,
            "timeout": self.timeout,
            "infra_tainted": self.infra_tainted,
            "kernel_api": [dict(k) for k in self.kernel_api],
            "evidence": [dict(e) for e in self.evidence],
            "error": self.error,
            "idle": dict(self.idle) if self.idle else None,
            "server": dict(self.server) if self.server else None,
            "kernel_api_level": dict(self.kernel_api_level) if self.kernel_api_level else None,
            "preflight": dict(self.preflight),
            "stuck": dict(self.stuck) if self.stuck else None,
            "slurm": dict(self.slurm) if self.slurm else None,
            "options": dict(self.options) if self.options else None,
        }


# --- exit-code mappings for callers -----------------------------------------------------------

def exit_code_plain(result: RunResult) -> int:
    """`dbglog run` default: 0 pass, 124 hang (like timeout(1)), 1 anything else."""
    if result.outcome == "pass":
        return 0
    if result.outcome == "hang":
        return 124
    return 1


def matches_expect(result: RunResult, expect: str) -> bool:
    """``expect`` names a signature (glob allowed, e.g. ``py.traceback:*``) or an outcome."""
    if expect in OUTCOMES:
        return result.outcome == expect
    sig = result.signature or ""
    return sig == expect or fnmatch.fnmatchcase(sig, expect)


def git_bisect_exit(result: RunResult, expect: str | None = None) -> int:
    """Map a run to ``git bisect run``'s contract: 0 good, 1 bad, 125 skip. Never >= 128
    (that would abort the bisection).

    Without ``expect`` any failure is bad. With it, only a run matching ``expect`` is bad and any
    other failure is skipped (it is not the bug being hunted). Runs that could not start, runs the
    repro itself marked with 125, and runs that left an unkillable process (the machine state is
    suspect) are skipped.
    """
    if result.outcome == "error" or result.infra_tainted:
        return 125
    if result.outcome == "pass":
        return 0
    if result.outcome == "fail" and result.exit_code == 125:
        return 125
    if expect is not None:
        return 1 if matches_expect(result, expect) else 125
    never_ready = result.outcome in ("server_died", "server_not_ready") and (result.server or {}).get("ready_s") is None
    if never_ready or build_break(result):
        return 125  # the commit cannot be tested: git must not blame a build break
    return 1


#: signatures of a program that could not even load: a build break, not the bug being hunted
BUILD_BREAKS = ("py.traceback:SyntaxError", "py.traceback:IndentationError", "py.traceback:ImportError",
                "py.traceback:ModuleNotFoundError", "py.traceback:TabError")


def build_break(result: RunResult) -> bool:
    """A run (or its server, for a server-shaped repro) that died of a build break."""
    sigs = {result.signature or ""} | {(result.server or {}).get("signature") or ""}
    return any(s.split(" ")[0] in BUILD_BREAKS for s in sigs)


# --- output capture ---------------------------------------------------------------------------

class _CappedFile:
    """Writes a stream to a file: the first half of the cap goes straight to disk, the last half is
    kept in memory and appended at close after a visible marker saying how much was dropped."""

    def __init__(self, path: Path, cap: int | None):
        self.path = path
        self.f = open(path, "wb")
        self.cap = cap
        self.head_cap = None if cap is None else cap // 2
        self.tail_cap = None if cap is None else cap - cap // 2
        self.head_written = 0
        self.total = 0
        self.tail = bytearray()
        self.omitted = 0
        self.error: OSError | None = None  # a full disk: the pump goes on draining, the file stops growing

    def _put(self, data: bytes) -> None:
        if self.error is None:
            try:
                self.f.write(data)
            except OSError as e:
                self.error = e

    def write(self, data: bytes) -> None:
        self.total += len(data)
        if self.head_cap is None:
            self._put(data)
            return
        room = self.head_cap - self.head_written
        if room > 0:
            part = data[:room]
            self._put(part)
            self.head_written += len(part)
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > 2 * self.tail_cap:  # trim in batches: amortised O(1) per byte
                del self.tail[: len(self.tail) - self.tail_cap]

    def flush(self) -> None:
        try:
            self.f.flush()
        except OSError as e:
            self.error = self.error or e

    def close(self) -> int:
        if self.tail_cap is not None and len(self.tail) > self.tail_cap:
            del self.tail[: len(self.tail) - self.tail_cap]
        self.omitted = self.total - self.head_written - len(self.tail)
        if self.omitted > 0:
            self._put(
                f"\n\n[dbglog: {self.omitted} bytes omitted here; output cap is {self.cap} bytes, "
                f"the first and last {self.head_cap} bytes are kept]\n\n".encode())
        self._put(bytes(self.tail))
        try:
            self.f.close()
        except OSError as e:  # (the buffered bytes met the full disk)
            self.error = self.error or e
        return self.omitted


class _Pump(threading.Thread):
    """Drains the child's stdout and stderr pipes into the capped files (and the terminal)."""

    def __init__(self, streams: dict[str, int], sinks: dict[str, _CappedFile], merged: _CappedFile,
                 echo: bool, echo_cap: int | None):
        super().__init__(name="dbglog-pump", daemon=True)
        self.streams = streams
        self.sinks = sinks
        self.merged = merged
        self.echo = echo
        self.echo_cap = echo_cap
        self.echoed = 0
        self.abandon = threading.Event()
        self.lock = threading.Lock()
        self.open_fds = set(streams.values())
        self.last_output = time.monotonic()  # for --idle-timeout: alive but silent

    def _echo(self, name: str, data: bytes) -> None:
        if not self.echo:
            return
        if self.echo_cap is not None and self.echoed >= self.echo_cap:
            return
        if self.echo_cap is not None and self.echoed + len(data) >= self.echo_cap:
            data = data[: self.echo_cap - self.echoed] + b"\n[dbglog: echo stopped at the output cap; see the run's output file]\n"
        self.echoed += len(data)
        target = sys.stdout if name == "stdout" else sys.stderr
        try:
            text = self._inert(name, target, data)
            buf = getattr(target, "buffer", None)
            if buf is not None:
                buf.write(text.encode("utf-8", errors="replace"))
                buf.flush()
            else:
                target.write(text)
                target.flush()
        except (OSError, ValueError):
            self.echo = False  # our terminal went away; keep capturing to files

    def _inert(self, name: str, target, data: bytes) -> str:
        """The repro's bytes as text the terminal cannot be driven by (issue 17): escapes and control
        bytes dropped, a lone CR made a newline (a progress bar becomes lines, and cannot hide a line
        by overwriting it). Colours stay on a terminal (NO_COLOR unset): they are how the repro's own
        tools mark errors and cannot move the cursor or rewrite anything. Decoded incrementally per
        stream, so a UTF-8 character or CRLF cut between two reads stays whole."""
        from dbglog.util.redact import terminal_text

        if not hasattr(self, "_decoders"):
            import codecs

            self._decoders = {n: codecs.getincrementaldecoder("utf-8")(errors="replace") for n in self.streams}
            self._cr = dict.fromkeys(self.streams, False)
            self._colour = {}
        if name not in self._colour:
            try:
                self._colour[name] = target.isatty() and not os.environ.get("NO_COLOR")
            except (AttributeError, ValueError):
                self._colour[name] = False
        text = self._decoders[name].decode(data)
        if self._cr[name] and text.startswith("\n"):
            text = text[1:]  # the LF of a CRLF split between reads: the CR already made the newline
        self._cr[name] = text.endswith("\r")
        return terminal_text(text, self._colour[name])

    def run(self) -> None:
        sel = selectors.DefaultSelector()
        for name, fd in self.streams.items():
            sel.register(fd, selectors.EVENT_READ, name)
        try:
            while sel.get_map() and not self.abandon.is_set():
                for key, _ in sel.select(0.1):
                    try:
                        data = os.read(key.fd, 1 << 20)
                    except OSError:
                        data = b""
                    if not data:
                        sel.unregister(key.fd)
                        self.open_fds.discard(key.fd)
                        continue
                    self.last_output = time.monotonic()
                    with self.lock:
                        self.sinks[key.data].write(data)
                        self.merged.write(data)
                    self._echo(key.data, data)
        finally:
            sel.close()

    def tail_text(self, n: int = 1 << 16) -> bytes:
        """Recent merged output (for watching a core dump's progress lines)."""
        with self.lock:
            m = self.merged
            if m.tail:
                return bytes(m.tail[-n:])
            try:
                with open(m.path, "rb") as f:
                    m.f.flush()
                    f.seek(max(0, m.head_written - n))
                    return f.read(n)
            except OSError:
                return b""


# --- the process tree -------------------------------------------------------------------------

# Moved to dbglog/run/proctree.py (one process layer); the old names stay for callers and tests.
_psutil = proctree.psutil_module
_pids = proctree.pids
_ppid_table = proctree.ppid_table
_Tree = proctree.Tree
_proc_state = proctree.proc_state
terminate_tree = proctree.terminate_tree


# --- hang captures: the presets live in dbglog/run/captures.py -------------------------------------

def _caps():
    """dbglog/run/captures.py, imported when a run has presets, ``--on-hang`` commands or captures to
    read: a run with none of them (every step of a plain bisection) does not pay for its import."""
    from dbglog.run import captures

    return captures


# PRESETS: the capture presets, a live view of the registry; and the captures' helpers by their old names.
_FROM_CAPTURES = {"PRESETS": "REGISTRY", "_which": "which", "_is_python": "is_python", "_run_limited": "run_limited",
                  "_subst": "subst"}


def __getattr__(name: str):
    if name in _FROM_CAPTURES:
        return getattr(_caps(), _FROM_CAPTURES[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _preset_env(captures: Sequence[str], run_dir: Path, base_env: dict) -> dict:
    """Hang diagnostics must be enabled at launch (reference §4, insight 4)."""
    return _caps().launch_env(captures, run_dir, base_env) if captures else {}


def _hang_captures(tree: _Tree, pump: _Pump, run_dir: Path, presets: Sequence[str],
                   commands: Sequence[str], limit: float, env: dict | None = None,
                   reason: str = "hang") -> list[dict]:
    return _caps().take(tree, run_dir, presets, commands, limit, env=env, reason=reason,
                          tail=pump.tail_text if pump is not None else (lambda: b""))


# --- evidence for OOM kills we did not send ----------------------------------------------------

def _oom_kill_count() -> int | None:
    """The cgroup's oom_kill counter (v2 memory.events, v1 memory.oom_control), if readable."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        hid, ctrls, path = (line.split(":", 2) + ["", ""])[:3]
        if hid == "0":
            candidates = [Path("/sys/fs/cgroup") / path.lstrip("/") / "memory.events"]
        elif "memory" in ctrls.split(","):
            candidates = [Path("/sys/fs/cgroup/memory") / path.lstrip("/") / "memory.oom_control"]
        else:
            continue
        for c in candidates:
            try:
                for row in c.read_text().splitlines():
                    k, _, v = row.partition(" ")
                    if k == "oom_kill":
                        return int(v)
            except (OSError, ValueError):
                continue
    return None


def _dmesg_oom(pids: Iterable[int]) -> str | None:
    try:
        p = subprocess.run(["dmesg"], capture_output=True, timeout=2, text=True, errors="replace")
    except (OSError, subprocess.SubprocessError):
        return None
    pids = set(pids)
    from dbglog.diagnose.signatures import BUILTIN

    rx = next(s for s in BUILTIN if s.name == "oom.host_killer").compiled()[0]
    for m in rx.finditer(p.stdout or ""):
        if int(m.group(1)) in pids:
            return m.group(0)
    return None


# --- git --------------------------------------------------------------------------------------

def _git_state(cwd: Path) -> tuple[str | None, bool | None]:
    def git(*args):
        return subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, timeout=5,
                              stdin=subprocess.DEVNULL)
    try:
        head = git("rev-parse", "HEAD")
        if head.returncode != 0:
            return None, None
        st = git("status", "--porcelain", "--untracked-files=no")
        return head.stdout.strip(), (bool(st.stdout.strip()) if st.returncode == 0 else None)
    except (OSError, subprocess.SubprocessError):
        return None, None


# --- run --------------------------------------------------------------------------------------

# What a front end shows while the run's output is read after the repro ended (issue 30: 200 MB of
# output used to mean 19 silent seconds). A callable taking the phase's words, or None when the
# post-processing is over; set by the CLI around one command (cli/progress.py), unset elsewhere.
POST_PROGRESS: contextvars.ContextVar = contextvars.ContextVar("dbglog_post_progress", default=None)


def post_phase(words: str | None) -> None:
    report = POST_PROGRESS.get()
    if report is not None:
        report(words)


def warm() -> None:
    """Load now what the first supervised run would load as it starts (the modules of its
    environment and preflight, the subreaper flag): for a caller with a wait to fill (a bisection
    whose first worktree git is still making), so the first step costs what the others do."""
    from dbglog.run import escalate, preflight  # noqa: F401

    proctree.become_subreaper()


def new_run_id() -> str:
    # 32 random bits: a toggle bisection with --jobs starts dozens of runs in one second, and 16 bits
    # collided (two trials sharing a run folder, then "UNIQUE constraint failed: runs.id").
    # os.urandom is what secrets.token_hex reads, without secrets' imports (hmac, hashlib: ~2 ms)
    return _dt.datetime.now().strftime("%Y%m%d-%H%M%S-") + os.urandom(4).hex()


class Interrupted(KeyboardInterrupt):
    """dbglog was stopped (Ctrl-C, SIGTERM, SIGHUP) while it supervised a run: the whole tree was
    stopped first. ``result`` is the run so far (outcome "error", ``error`` "interrupted by ...");
    ``run_repeated`` adds the finished repeats before it in ``results``. Callers that record runs
    record these, then exit 128 + ``signum``; others see a KeyboardInterrupt as before."""

    def __init__(self, signum: int, result: "RunResult | None" = None):
        super().__init__(signal_name(signum) or str(signum))
        self.signum = signum
        self.result = result
        self.results: list = [result] if result is not None else []


class _Trap(dict):
    """The handlers replaced by ``_trap_stop_signals`` (to put back), and whether a signal came."""

    armed = True
    got: list

    def arm(self) -> None:
        """Raise a signal held since before the supervision loop, now that its clean-up is in reach."""
        self.armed = True
        if self.got:
            raise Interrupted(self.got[0])


def _trap_stop_signals(defer: bool = False) -> dict:
    """SIGTERM and SIGHUP, when nothing else handles them (a bisection does), stop dbglog like
    Ctrl-C: an exception, so the tree kill below runs instead of leaving the repro orphaned.
    Only the first one counts (a second one must not cut the clean-up short). ``defer``: trapped
    before the child starts, but held until ``arm()`` (inside the try that kills the tree): a
    signal between the start and the loop used to kill dbglog and orphan the repro."""
    trap = _Trap()
    trap.got = []
    trap.armed = not defer
    if threading.current_thread() is not threading.main_thread():
        return trap

    def stop(signum, frame):
        if not trap.got:
            trap.got.append(signum)
            if trap.armed:
                raise Interrupted(signum)

    for sig in (_signal.SIGTERM, _signal.SIGHUP):
        try:
            if _signal.getsignal(sig) is _signal.SIG_DFL:
                trap[sig] = _signal.signal(sig, stop)
        except (ValueError, OSError):
            pass
    if defer and _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
        trap[_signal.SIGINT] = _signal.signal(_signal.SIGINT, stop)  # Ctrl-C in the window: held the same way
    return trap


def _untrap(old: dict) -> None:
    for sig, h in old.items():
        try:
            _signal.signal(sig, h)
        except (ValueError, OSError):
            pass


def _wait_exit(proc: subprocess.Popen, pidfd: int | None, timeout: float) -> int | None:
    """Wait up to ``timeout`` for the child; a pidfd wakes us the moment it exits."""
    if pidfd is not None:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        poller.poll(max(0, int(timeout * 1000)))
        return proc.poll()
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return None


def build_env(run_dir: Path, env_overrides: dict, presets: Sequence[str], escalation: dict | None = None) -> dict:
    """The environment of a supervised process (a repro, or a server-shaped repro's server)."""
    from dbglog.run import escalate

    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    api_dir = run_dir / "api"
    # Kernel-API logs to one file per process: crash-safe boundary markers (reference §5.2, §6).
    for var, stem in (("FLASHINFER_LOGDEST", "flashinfer"), ("SGLANG_KERNEL_API_LOGDEST", "sglang")):
        if var not in env and var not in env_overrides:
            env[var] = str(api_dir / f"{stem}_%i.log")
    env.update(_preset_env(presets, run_dir, env))
    for k, v in env_overrides.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = str(v)
    # --escalate wins over the user's own level; the default level 1 never does.
    env.update(escalate.level_env(escalation, run_dir) if escalation else escalate.default_env(env))
    return env


def run(cmd: Sequence[str], opts: RunOptions | None = None, *, run_dir: Path | str, cwd: Path | str | None = None,
        env_overrides: dict | None = None, run_id: str | None = None, signatures=None, escalation: dict | None = None,
        companion=None, launch=None, live_dir: Path | None = None, **changes) -> RunResult:
    """Run ``cmd`` (an argument list) under supervision, as ``opts`` says (:class:`RunOptions`), and
    classify how it ended. ``changes``: RunOptions fields by name (a library caller's keywords), laid
    over ``opts``.

    ``opts.captures`` are hang-capture presets (see PRESETS); a preset name in ``on_hang`` counts too.
    Other ``on_hang`` entries are commands (split like a shell would, but not run by one) with
    ``{pid}``, ``{pgid}`` and ``{run_dir}`` filled in; each gets ``capture_timeout`` seconds.
    ``idle_timeout``: alive but silent (no output on any stream, the companion's included) for that
    many seconds is a hang. ``core_dumps``: keep the core size limit (default: 0 for the repro).

    What differs from run to run is a keyword: ``env_overrides`` (values of None unset a variable);
    ``signatures`` (default: the built-in catalog; pass ``signatures.all_signatures(config)`` to add the
    user's); ``escalation``: ``escalate.Ladder.spec()`` of this run; ``companion``: something supervised
    beside the run (a server, see dbglog/run/serve.py): its ``check()`` may end the run with
    ``(outcome, note)``, its ``last_output()`` counts as output, its ``hang_captures(...)`` run first on a
    hang; ``launch``: a cluster launcher's hook (``slurm.Step``): the repro runs on a node, so it adds its
    flags to the argv, captures and cancels there on a hang or an interrupt, and ``settle``s the record.
    ``live_dir``: the workspace's registry of supervised runs (``proctree.live_enter``), so that a
    command after a kill -9 of this process stops and records what this run left; the caller removes
    the entry once the run is recorded (``proctree.live_leave``).
    """
    opts = RunOptions.of(opts, **changes)
    if isinstance(cmd, (str, bytes)) or not cmd:
        raise DbglogError("the command must be a non-empty argument list; put the repro after --")
    s = _Supervision([os.fspath(c) for c in cmd], opts, run_dir=run_dir, cwd=cwd, env_overrides=env_overrides,
                     signatures=signatures, run_id=run_id, companion=companion, escalation=escalation, launch=launch)
    s.live_dir = live_dir
    s.prepare(opts.git_info, opts.preflight_check, opts.core_dumps)
    s.result.options = opts.record()
    if not s.start():  # no such directory or command: recorded as an error run
        return s.result
    try:
        s.watch()  # until it exits, times out, goes quiet, or the companion ends it
        s.end_tree()  # a hang: captures, then the tree kill; a finished run: its leftovers
    except BaseException as e:
        s.stop_on_interrupt(e)  # never leaves the repro running; re-raises what is not a stop
    finally:
        post_phase("reading the run's output")
        s.reap()  # wait, drain the pipes, close the files
    if s.interrupted is not None:
        s.raise_interrupted()
    s.classify()
    post_phase("redacting and classifying the output")
    return s.finish()


class _Supervision:
    """One supervised run, as the steps ``run`` takes in order; the state they share lives here."""

    def __init__(self, cmd: list[str], opts: RunOptions, *, run_dir, cwd, env_overrides, signatures, run_id,
                 companion, escalation, launch):
        self.cmd = cmd
        captures, on_hang = opts.captures, opts.on_hang
        self.presets, self.commands = _caps().split(captures, on_hang) if captures or on_hang else ([], [])
        self.container = opts.container
        if opts.container or (cmd and os.path.basename(cmd[0]) in ("docker", "sudo", "env")):
            self.presets = _caps().defaults(self.presets, cmd, opts.container)  # a repro in a container: docker
        self.env_overrides = dict(env_overrides or {})
        self.timeout, self.grace, self.kill_wait, self.idle_timeout = (
            opts.timeout, opts.grace, opts.kill_wait, opts.idle_timeout)
        self.output_cap_bytes, self.echo, self.signatures = opts.output_cap_bytes, opts.echo, signatures
        self.capture_timeout, self.companion, self.escalation, self.launch = (
            opts.capture_timeout, companion, escalation, launch)
        # Refused before anything starts (rocgdb with the debug agent); warnings become notes below.
        self.preset_warnings = _caps().check(self.presets, {
            **os.environ, **{k: str(v) for k, v in self.env_overrides.items() if v is not None}}) if self.presets else []
        self.run_dir = Path(run_dir).resolve()
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.cwd = Path(cwd).resolve() if cwd is not None else Path.cwd()
        self.run_id = run_id or new_run_id()
        self.timed_out = self.idled = False
        self.stopped = None  # (outcome, note) from the companion: e.g. the server died under the client
        self.rc: int | None = None
        self.interrupted: Interrupted | None = None
        self.pump: _Pump | None = None
        self.stop_signum: int | None = None  # a stop signal that reached another thread (proctree.stop_all)
        self.live_dir: Path | None = None
        self.live_entry: Path | None = None

    def request_stop(self, signum: int) -> None:
        """Stop this run as if ``signum`` had reached its thread (the watch loop raises it)."""
        if self.stop_signum is None:
            self.stop_signum = signum

    def prepare(self, git_info: bool, preflight_check: bool, core_dumps: bool) -> None:
        """The record, the environment, the pre-flight checks."""
        from dbglog.run import escalate, preflight

        started = _dt.datetime.now(_dt.timezone.utc)
        rd = self.run_dir
        paths = {"stdout": str(rd / "stdout"), "stderr": str(rd / "stderr"),
                 "output": str(rd / "output"), "result": str(rd / "result.json")}
        self.result = result = RunResult(
            id=self.run_id, cmd=self.cmd, cwd=str(self.cwd), env_overrides=self.env_overrides,
            started=started.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            duration_s=0.0, exit_code=None, signal=None, outcome="error", timeout=self.timeout, paths=paths)
        result.notes.extend(self.preset_warnings)
        if git_info:
            result.git_commit, result.git_dirty = _git_state(self.cwd)
        self.env = env = build_env(rd, self.env_overrides, self.presets, self.escalation)
        if self.escalation:
            result.kernel_api_level = escalate.describe(self.escalation, rd, env)
        elif env.get("FLASHINFER_LOGLEVEL") == "1" and "FLASHINFER_LOGLEVEL" not in os.environ \
                and "FLASHINFER_LOGLEVEL" not in self.env_overrides:
            result.notes.append("kernel-API logging at level 1 (SGLang/FlashInfer hooks present; costs next to nothing)")
        self.core_dumps = core_dumps
        result.preflight = {"core_limit": None if core_dumps else 0}
        if preflight_check:
            result.preflight.update(preflight.check())
            if result.preflight.get("gpu_processes"):
                ev = preflight.taint_evidence(result.preflight["gpu_processes"])
                result.evidence.append(ev)
                result.notes.append(ev["summary"])
        env[RUN_ID_VAR] = self.run_id  # inherited marker to find descendants that escaped the tree
        proctree.become_subreaper()  # before the start: an orphan of this run must come to us (proctree.adopt)
        if "FLASHINFER_LOGDEST" in env or "SGLANG_KERNEL_API_LOGDEST" in env:
            (rd / "api").mkdir(exist_ok=True)

    def start(self) -> bool:
        """Spawn the repro in its own session with its output piped to the pump; False (and the
        record finished as an error) when it cannot start."""
        from dbglog.run import preflight

        result, rd = self.result, self.run_dir
        if not self.cwd.is_dir():
            result.error = (f"working directory {self.cwd} is not a directory" if self.cwd.exists() else
                            f"working directory {self.cwd} does not exist")
            result.notes.append(result.error)
            _finish(result, rd, None, self.signatures)
            return False
        cap = self.output_cap_bytes
        self.sinks = {"stdout": _CappedFile(rd / "stdout", cap), "stderr": _CappedFile(rd / "stderr", cap)}
        self.merged = _CappedFile(rd / "output", cap)
        self.oom_before = _oom_kill_count()
        self.t0 = time.monotonic()
        started_epoch = time.time()
        self.trapped = _trap_stop_signals(defer=True)  # held until watch(): no window that orphans the child
        argv = self.launch.argv(self.cmd, self.run_id) if self.launch is not None else self.cmd
        if self.presets:
            argv = _caps().wrap(self.presets, argv, rd)  # (rocgdb-throw starts the repro itself)
        if self.live_dir is not None:  # before the spawn: a kill -9 right after it would orphan a registered-less tree
            self.live_entry = proctree.live_enter(self.live_dir, self.run_id, None, rd, self.cmd, RUN_ID_VAR)
        try:
            with preflight.core_limit(self.core_dumps):  # the child inherits the limit
                self.proc = proc = proctree.start(lambda: subprocess.Popen(
                    argv, cwd=str(self.cwd), env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE, start_new_session=True, preexec_fn=proctree.die_with_parent()))
        except OSError as e:
            _untrap(self.trapped)
            proctree.live_leave(self.live_entry)
            self.live_entry = None
            for s in (*self.sinks.values(), self.merged):
                s.close()
            if isinstance(e, FileNotFoundError):
                result.error = _not_found(self.cmd[0], self.cwd)
            elif isinstance(e, PermissionError):
                result.error = f"permission denied: {self.cmd[0]} (is it executable?)"
            else:
                result.error = f"cannot start {self.cmd[0]}: {e.strerror or e}"
            result.notes.append(result.error)
            result.duration_s = time.monotonic() - self.t0
            _finish(result, rd, None, self.signatures)
            return False
        for f in (proc.stdout, proc.stderr):
            try:
                import fcntl

                fcntl.fcntl(f.fileno(), fcntl.F_SETPIPE_SZ, 1 << 20)  # fewer wakeups on big output
            except (OSError, AttributeError, ImportError):
                pass
        self.pump = _Pump({"stdout": proc.stdout.fileno(), "stderr": proc.stderr.fileno()}, self.sinks,
                          self.merged, self.echo, cap)
        self.pump.start()
        self.tree = _Tree(proc.pid, self.run_id, started_epoch)
        self.caller = proctree.CALLER.get()
        proctree.SUPERVISING.add(self)
        try:
            self.pidfd = os.pidfd_open(proc.pid)
        except (AttributeError, OSError):
            self.pidfd = None
        return True

    def watch(self) -> None:
        """Poll until the child exits, the deadline or the idle limit passes, or the companion stops
        the run; the tree is snapshotted (and orphans adopted) on every round."""
        self.trapped.arm()  # a SIGTERM/SIGHUP that came since the start is raised here, inside the kill's reach
        proc, tree, companion = self.proc, self.tree, self.companion
        deadline = None if self.timeout is None else self.t0 + self.timeout
        interval = 0.02
        while True:
            asked = self.stop_signum or proctree.stop_asked(self.caller)
            if asked:
                raise Interrupted(asked)
            wait = interval if deadline is None else max(0.0, min(interval, deadline - time.monotonic()))
            self.rc = _wait_exit(proc, self.pidfd, wait)
            if self.rc is not None:
                return
            table = tree.table()  # one read for both
            tree.snapshot(table)
            tree.adopt(table)
            interval = min(interval * 1.5, 0.25)  # young runs spawn most; poll them more often
            if companion is not None:
                self.stopped = companion.check()
                if self.stopped:
                    return
            if self.idle_timeout is not None:
                last = max(self.pump.last_output, companion.last_output() if companion is not None else 0.0)
                if time.monotonic() - last >= self.idle_timeout:
                    self.idled = True
                    return
            if deadline is not None and time.monotonic() >= deadline:
                self.timed_out = True
                return

    def end_tree(self) -> None:
        """A hang: the outcome first (a core dump then aborts), the captures, then the tree kill. A
        companion's stop: the kill. A finished command: whatever it left running is terminated."""
        result, tree, companion = self.result, self.tree, self.companion
        if self.timed_out or self.idled:
            result.outcome = "hang"
            if self.idled:
                result.idle = _quiet_report(self.idle_timeout, [("client", tree, self.pump)]
                                            + (companion.quiet_streams() if companion is not None else []))
                result.notes.append(result.idle["summary"])
            else:
                result.notes.append(f"timed out after {self.timeout:g}s")
            if companion is not None:  # the server is where the fault is: its stacks first
                result.captures.extend(companion.hang_captures(self.presets, self.commands, self.capture_timeout))
            if self.launch is not None:  # the processes are on the node: capture there, cancel the job step
                result.captures.extend(self.launch.on_hang(self.run_dir, self.presets, self.commands,
                                                           self.capture_timeout))
            else:
                result.captures.extend(hang_captures(tree, self.pump, self.run_dir, self.presets, self.commands,
                                                     self.capture_timeout, env=self.env))
            result.survivors = terminate_tree(tree, self.grace, self.kill_wait)
        elif self.stopped:
            result.outcome = self.stopped[0]
            result.notes.append(self.stopped[1])
            result.survivors = terminate_tree(tree, self.grace, self.kill_wait)
        else:
            # The command is done; anything it left running is not part of a finished run.
            proctree.sweep(tree)
            leftovers = [p for p in tree.alive() if p.pid != self.proc.pid]
            if leftovers:
                result.notes.append(
                    f"{len(leftovers)} process(es) were still running after the command exited "
                    f"({', '.join(str(p.pid) for p in leftovers[:5])}); terminated")
                result.survivors = terminate_tree(tree, self.grace, self.kill_wait)

    def stop_on_interrupt(self, e: BaseException) -> None:
        """dbglog itself interrupted (Ctrl-C, SIGTERM, SIGHUP) or failing: never leave the repro running.
        A stop is kept for ``raise_interrupted``; anything else is re-raised after the kill."""
        result = self.result
        if isinstance(e, KeyboardInterrupt):  # the tree first, the second signal cannot stop that
            self.interrupted = e if isinstance(e, Interrupted) else Interrupted(_signal.SIGINT)
            if threading.current_thread() is threading.main_thread():  # a second Ctrl-C waits
                self.trapped.setdefault(_signal.SIGINT, _signal.signal(_signal.SIGINT, _signal.SIG_IGN))
        if self.interrupted is not None and (self.presets or self.commands) and self.launch is None:
            # Stopped by the user mid-hang is the commonest way a hang ends: take the configured
            # captures before the kill (bounded; a repeated signal is ignored meanwhile).
            try:
                result.captures.extend(hang_captures(self.tree, self.pump, self.run_dir, self.presets, self.commands,
                                                     min(self.capture_timeout, 10.0), env=self.env,
                                                     reason="interrupt"))
            except Exception as exc:  # noqa: BLE001 - the kill below must happen regardless
                result.notes.append(f"captures on interrupt failed: {exc!r}")
        if self.launch is not None:
            self.launch.cancel(result)  # the step's processes are on the node, out of the tree's reach
        result.survivors = terminate_tree(self.tree, min(self.grace, 1.0), self.kill_wait)
        if self.interrupted is None:
            _untrap(self.trapped)
            raise e

    def reap(self) -> None:
        result, proc, pump = self.result, self.proc, self.pump
        proctree.SUPERVISING.discard(self)
        if self.pidfd is not None:
            os.close(self.pidfd)
        try:
            self.rc = proc.wait(timeout=self.kill_wait)
        except subprocess.TimeoutExpired:
            self.rc = proc.poll()
        pump.join(timeout=5.0)
        if pump.is_alive():
            # Something outside the tree still holds the pipes; stop reading rather than hang.
            pump.abandon.set()
            pump.join(timeout=1.0)
            result.notes.append("output pipes were still held open by an untracked process; stopped reading")
        for f in (proc.stdout, proc.stderr):
            try:
                f.close()
            except OSError:
                pass
        for name, s in (*self.sinks.items(), ("output", self.merged)):
            result.omitted_bytes[name] = s.close()
        lost = next((s.error for s in (*self.sinks.values(), self.merged) if s.error is not None), None)
        if lost is not None:
            result.notes.append(f"the output files are incomplete: {lost.strerror or lost}")
        result.duration_s = time.monotonic() - self.t0

    def raise_interrupted(self) -> None:
        result, interrupted = self.result, self.interrupted
        _untrap(self.trapped)
        result.outcome = "error"
        result.error = f"interrupted by {signal_name(interrupted.signum)}: the run and its processes were stopped"
        result.notes.append(result.error)
        result.exit_code, result.signal = normalize_exit(self.rc)
        result.stuck = _caps().pick_stuck(result.captures) if result.captures else None
        interrupted.result = result
        interrupted.results = [result]
        raise interrupted

    def classify(self) -> None:
        """Exit status → outcome (a SIGKILL we did not send is checked for OOM evidence); notes on
        truncation, survivors and escaped processes; the presets' after-the-run captures."""
        from dbglog.run import escalate

        result, tree, rc = self.result, self.tree, self.rc
        _untrap(self.trapped)
        result.truncated = any(result.omitted_bytes.values())
        if result.truncated:
            result.notes.append("output exceeded the cap; the middle was dropped (marker in the files)")
        stuck = list(result.survivors)
        result.survivors = tree.report_escaped(result.survivors)
        if stuck:
            result.infra_tainted = True
            result.notes.append(f"{len(stuck)} process(es) survived SIGKILL "
                                f"(states: {', '.join(str(s.get('status')) for s in stuck)})")
        if tree.escaped:  # killed with the rest, but the repro hid them: say so, they may hold a GPU
            result.notes.append(f"{len(tree.escaped)} process(es) escaped the process tree (new session, "
                                "marker variable gone): " + ", ".join(f"{e['pid']} ({e['name']})"
                                                                      for e in list(tree.escaped.values())[:5]))
        code, sig = normalize_exit(rc)
        result.exit_code, result.signal = code, sig
        # The presets' after-the-run steps (e.g. nccl-fr: the ranks' dumps and the analyzer's verdict).
        caps, found = _caps().after(self.presets, self.run_dir, self.capture_timeout, self.env, cmd=self.cmd,
                                    container=self.container) if self.presets else ([], [])
        result.captures.extend(caps)
        result.evidence.extend(found)
        if self.escalation:
            result.kernel_api_level = escalate.describe(self.escalation, self.run_dir, self.env)  # now with the dumps
        if self.timed_out or self.idled or self.stopped:
            return
        if rc == 0:
            result.outcome = "pass"
        elif sig is not None:
            result.outcome = "crash"
            if rc is not None and rc > 0:
                result.notes.append(f"exit status {rc} read as signal {sig} ({signal_name(sig)}): "
                                    "a shell reports a child's signal as 128+N")
        else:
            result.outcome = "fail"
        if sig == _signal.SIGKILL:
            # We did not send it (no timeout): look for host/cgroup OOM evidence (reference §5.7).
            oom_after = _oom_kill_count()
            if self.oom_before is not None and oom_after is not None and oom_after > self.oom_before:
                result.outcome = "oom"
                result.notes.append(f"cgroup oom_kill counter rose {self.oom_before} -> {oom_after}")
            else:
                line = _dmesg_oom(tree.procs.keys())
                if line:
                    result.outcome = "oom"
                    result.notes.append(f"dmesg: {line}")

    def finish(self) -> RunResult:
        if self.launch is not None:
            self.launch.settle(self.result)  # no job left behind; which node, what Slurm said
        _finish(self.result, self.run_dir, self.pump, self.signatures)
        return self.result


def hang_captures(tree: _Tree, pump: _Pump, run_dir: Path, presets: Sequence[str], commands: Sequence[str],
                  limit: float, env: dict | None = None, reason: str = "hang") -> list[dict]:
    """The hang captures on one supervised tree (the one entry point the run loop and a server
    companion call, wherever the capture presets live)."""
    return _hang_captures(tree, pump, run_dir, presets, commands, limit, env=env, reason=reason)


def _quiet_report(after: float, streams: list) -> dict:
    """Which supervised trees went quiet (``streams``: (role, tree, pump)), for the run's record."""
    now = time.monotonic()
    quiet = []
    for role, tree, pump in streams:
        procs = tree.alive()
        quiet.append({"role": role, "pid": tree.root_pid, "silent_s": round(now - pump.last_output, 2),
                      "processes": [{"pid": p.pid, **{k: v for k, v in _proc_state(p).items() if k != "pid"}}
                                    for p in procs[:8]]})
    parts = [f"{q['role']} (pid {q['pid']}, {len(q['processes'])} process(es) alive) silent {q['silent_s']:g}s"
             for q in quiet]
    return {"after_s": after, "streams": quiet,
            "summary": f"idle for {after:g}s with no output while alive: " + "; ".join(parts)}


def _not_found(prog: str, cwd: Path) -> str:
    """Why the program could not start: not there, or there with an interpreter line naming one that is not (both
    are ENOENT; a script whose #! is missing was said "command not found" though it exists)."""
    path = cwd / prog if "/" in prog else None
    if path is not None and path.is_file():
        try:
            with open(path, "rb") as f:
                first = f.readline(300)
        except OSError:
            first = b""
        if first.startswith(b"#!"):
            shown = first[2:].decode("utf-8", "replace").strip()
            return f"cannot run {prog}: its interpreter line names {shown!r}, which is not there"
    return f"command not found: {prog}"


def _redact_outputs(result: RunResult) -> None:
    """Secrets out of the kept output files (a repro that prints its HF_TOKEN, a bearer header, a
    ``--password`` in its argv): the run folder keeps none in clear, like result.json and logs/.
    Only secrets: the files stay the repro's bytes otherwise (escapes, invalid UTF-8 and all)."""
    from dbglog.util import redact

    redact.remember_env({k: v for k, v in result.env_overrides.items() if v is not None})
    files = [(name, Path(result.paths[name])) for name in ("stdout", "stderr", "output")]
    run_dir = Path(result.paths["output"]).parent
    for c in result.captures:  # a stack dump or an on-hang command's output may show a token too
        path = Path(c["path"]) if isinstance(c.get("path"), str) else None
        try:  # (the run's own text files only: not a core dump, a pipe, or a file elsewhere)
            if path is not None and path.is_relative_to(run_dir) and path.is_file() and path.stat().st_size < 32 << 20:
                with open(path, "rb") as f:
                    if b"\0" not in f.read(8192):
                        files.append((str(c.get("name") or path.name), path))
        except OSError:
            continue
    redact_files(result, files)


def redact_files(result: RunResult, files) -> None:
    """Secrets out of each (name, path), in place; a file that could not be cleaned is said in the notes."""
    from dbglog.util import redact

    for name, path in files:
        try:  # streamed, a block at a time: bounded memory, and only lines near a hint are read closely
            redact.redact_file(path)
        except FileNotFoundError:
            continue
        except OSError as e:  # (a full disk: the file is still the repro's own; say so)
            result.notes.append(f"could not redact secrets from {name}: {e.strerror or e}")


def _scan_output(path: Path, signatures):
    """The kept output read once, in blocks (bounded memory whatever the repro printed); None
    when there is no output file."""
    try:
        if path.stat().st_size == 0:
            return None
        from dbglog.diagnose import stream

        return stream.scan_path(path, signatures)
    except OSError:
        return None


def _finish(result: RunResult, run_dir: Path, pump: _Pump | None, signatures) -> None:
    """Redact and classify the kept output, read kernel-API logs, write result.json."""
    result.stuck = _caps().pick_stuck(result.captures) if result.captures else None
    _redact_outputs(result)
    api_logs = sorted((run_dir / "api").glob("*.log")) if (run_dir / "api").is_dir() else []
    scan = _scan_output(Path(result.paths["output"]), signatures)
    match = scan.match if scan is not None else None
    data = scan.data if scan is not None else b""  # the output, or the lines around its failure (a big one)
    result.notes.extend(scan.warnings if scan is not None else ())  # e.g. a user signature out of time
    if match is not None:
        result.signature = match.name
        result.key_lines = [{"line": n, "text": t[:500]} for n, t in match.key_lines]
        if match.outcome == "oom" and result.outcome in ("fail", "crash"):
            result.outcome = "oom"
    boundaries = []
    if api_logs:
        from dbglog.diagnose.kernel_api import parse_kernel_api_file
    for f in api_logs:
        try:
            b = parse_kernel_api_file(f)
        except OSError:
            continue
        if b is not None:
            boundaries.append(b.to_dict())
    if not boundaries and scan is not None and scan.kernel_api is not None:
        boundaries.append(scan.kernel_api.to_dict())
    result.kernel_api = boundaries
    _evidence(result, run_dir, data)
    write_record(result)


def write_record(result: RunResult) -> None:
    """result.json, every value cleaned (--env HF_TOKEN=...: the run folder keeps no secret either); the record's
    own field names are not (RunResult's, never a secret: half the work)."""
    from dbglog.util.redact import clean_obj

    try:
        clean = {k: clean_obj(v) for k, v in result.to_dict().items()}
        Path(result.paths["result"]).write_text(json.dumps(clean, indent=1) + "\n")
    except OSError as e:
        result.notes.append(f"could not write result.json: {e}")


def _evidence(result: RunResult, run_dir: Path, data: bytes) -> None:
    """Structured facts from debugger dumps in the output and in the hang captures, kept in
    evidence.json beside result.json (and summarised on the run record)."""
    try:
        files = [c["path"] for c in result.captures if c.get("path") and os.path.isfile(c["path"])]
        if not files and not result.kernel_api and not data:
            found = []  # nothing to read: not even the import (its ~85 patterns compile at import)
        else:
            from dbglog.diagnose import evidence as evmod

            if not files and not evmod.may_hold_dump(data):
                # extract() would find nothing either (no capture file, no text any parser reads):
                # this skips its read of config.toml, most of a short run's finishing time
                found = []
            else:
                env = {**os.environ, **{k: v for k, v in result.env_overrides.items() if v is not None}}
                found = evmod.extract(data, files=files, save_dirs=evmod.code_object_dirs(env, result.cwd or "."),
                                      config_path=evmod.config_near(run_dir), cwd=str(run_dir), roots=(result.cwd or ".",),
                                      run_tools=os.environ.get("DBGLOG_EVIDENCE_TOOLS", "1") != "0")
            found.extend(evmod.kernel_api_evidence(b) for b in result.kernel_api)
    except Exception as e:  # evidence must never cost the run its record
        result.notes.append(f"evidence extraction failed: {e!r}")
        return
    result.evidence = [*result.evidence, *found]  # pre-flight and flight-recorder facts come first
    if result.evidence:
        try:
            (run_dir / "evidence.json").write_text(json.dumps(result.evidence, indent=1) + "\n")
            result.paths["evidence"] = str(run_dir / "evidence.json")
        except OSError as e:
            result.notes.append(f"could not write evidence.json: {e}")


# --- repeats ----------------------------------------------------------------------------------

@dataclass
class RepeatResult:
    results: list[RunResult]
    histogram: dict  # (outcome, signature) -> count

    def __iter__(self):  # allows `results, histogram = run_repeated(...)`
        return iter((self.results, self.histogram))

    @property
    def flaky(self) -> bool:
        return len(self.histogram) > 1

    def histogram_rows(self) -> list[dict]:
        return [{"outcome": o, "signature": s, "count": n}
                for (o, s), n in sorted(self.histogram.items(), key=lambda kv: (-kv[1], kv[0][0], kv[0][1] or ""))]

    def exit_code(self, git_bisect: bool = False, expect: str | None = None) -> int:
        """The common exit code of the repeats; repeats that disagree are 1 (125 for git bisect:
        a flaky commit is not evidence either way)."""
        codes = {git_bisect_exit(r, expect) if git_bisect else exit_code_plain(r) for r in self.results}
        if git_bisect and 1 in codes:
            return 1  # the hunted failure showed: bad, however many repeats passed before it
        return codes.pop() if len(codes) == 1 else (125 if git_bisect else 1)

    def to_dict(self) -> dict:
        return {"runs": [r.to_dict() for r in self.results], "histogram": self.histogram_rows(),
                "flaky": self.flaky}


def run_repeated(cmd: Sequence[str], opts: RunOptions | None = None, *, run_dir: Path | str, ladder=None,
                 runner=None, **kwargs) -> RepeatResult:
    """Run ``cmd`` up to ``opts.repeat`` times (each in ``run_dir/NNN``) and histogram (outcome,
    signature): disagreeing repeats mean a flaky repro. ``opts.until_fail`` stops at the first
    non-pass. ``ladder`` (``escalate.Ladder``): raise the kernel-API log level after each failure.
    ``runner``: the function that runs one repeat (default ``run``; ``serve.run_server_client``
    for a server-shaped repro). Other keywords: RunOptions fields laid over ``opts``, and what
    ``run`` takes beside them (cwd, env_overrides, run_id, signatures, launch)."""
    changes, per_run = RunOptions.split(kwargs)
    opts = RunOptions.of(opts, **changes)
    one = runner or run
    repeat = opts.repeat
    if repeat < 1:
        raise DbglogError(f"--repeat must be at least 1, got {repeat}")
    results: list[RunResult] = []
    hist: collections.Counter = collections.Counter()
    for i in range(1, repeat + 1):
        # One run keeps the plain layout runs/<id>/; repeats go to runs/<id>/001, 002, ...
        try:
            if ladder is not None:
                per_run["escalation"] = ladder.spec()
            r = one(cmd, opts, run_dir=Path(run_dir) / f"{i:03d}" if repeat > 1 else Path(run_dir), **per_run)
        except Interrupted as e:
            e.results = results + e.results  # the finished repeats are recorded too
            raise
        results.append(r)
        hist[(r.outcome, r.signature)] += 1
        if ladder is not None:
            ladder.after(r.outcome)
        if opts.until_fail and r.outcome != "pass":
            break
    return RepeatResult(results, dict(hist))


_pids_with_env = proctree.pids_with_env
kill_marked = proctree.kill_marked



def recover_orphan(data: dict) -> dict:
    """The record of a run whose supervisor was killed (``proctree.orphaned_runs``), after what was
    left of it was stopped: its result.json when the run had finished, else a run ended by the
    interruption, its kept output classified like any other run's. A run dict, marked ``interrupted``."""
    run_dir = Path(data.get("run_dir") or ".")
    note = (f"interrupted: dbglog (pid {data.get('supervisor')}) that supervised this run was killed; "
            "a later command stopped what was left and recorded it")
    try:
        done = json.loads((run_dir / "result.json").read_text())
    except (OSError, ValueError):
        done = None
    if isinstance(done, dict) and done.get("id") == data.get("run_id"):
        return done | {"notes": [*(done.get("notes") or []), note], "interrupted": True}
    started = float(data.get("started") or time.time())
    result = RunResult(
        id=str(data.get("run_id")), cmd=[str(c) for c in data.get("cmd") or []], cwd="", env_overrides={},
        started=_dt.datetime.fromtimestamp(started, _dt.timezone.utc).isoformat(timespec="milliseconds")
        .replace("+00:00", "Z"), duration_s=max(0.0, time.time() - started), exit_code=None, signal=None,
        outcome="error", error=note, notes=[note],
        paths={"stdout": str(run_dir / "stdout"), "stderr": str(run_dir / "stderr"),
               "output": str(run_dir / "output"), "result": str(run_dir / "result.json")})
    _finish(result, run_dir, None, None)
    return result.to_dict() | {"interrupted": True}
