"""Process control in one place (issue 13): a tree of processes we supervise, killing it whole, and
the one rule for "is this process still the one we mean" (not a zombie, not a reused pid).

Used by the runner (supervised runs), the capture presets (``dbglog/run/captures.py``: which processes
to attach to) and the bisection sessions (leftovers of a killed driver). Standard library plus a
lazily imported psutil; imports nothing of dbglog's, so every layer may use it.
"""

from __future__ import annotations

import collections
import contextvars
import os
import signal as _signal
import sys
import threading
import time
import weakref
from pathlib import Path

from dbglog.util import jsonsafe


def psutil_module():
    import psutil  # lazy: importing dbglog must stay cheap

    return psutil


def pids() -> list[int]:
    try:
        return [int(n) for n in os.listdir("/proc") if n.isdigit()]
    except OSError:
        return list(psutil_module().pids())


def _read_proc(path: str, size: int = 1024) -> bytes | None:
    """One read of a /proc file: raw os.open/os.read, half the cost of open() (a file object per
    read), which matters with one read per process on the machine."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(fd, size)
    except OSError:
        return None
    finally:
        os.close(fd)


def _stat_tail(pid: int) -> list[bytes] | None:
    """The fields of /proc/<pid>/stat after the command name (state, ppid, ... starttime at 19)."""
    stat = _read_proc(f"/proc/{pid}/stat")
    if not stat:
        return None
    rest = stat[stat.rfind(b")") + 2:].split()  # comm may hold spaces and parentheses
    return rest if len(rest) > 19 else None


_HAS_PROC = os.path.isdir("/proc/self")  # Linux: handles read /proc; elsewhere they are psutil's
_BOOT: list[float] = []


def _boot_time() -> float | None:
    if not _BOOT:
        data = _read_proc("/proc/stat", 1 << 20) or b""
        i = data.find(b"\nbtime ")
        try:
            _BOOT.append(float(data[i + 7:data.index(b"\n", i + 1)]) if i >= 0 else -1.0)
        except ValueError:
            _BOOT.append(-1.0)
    return _BOOT[0] if _BOOT[0] >= 0 else None


class Proc:
    """A handle on one process of a supervised tree, like ``psutil.Process`` for the two questions
    every run asks of each of them -- is it still the process we saw (the same start time in
    /proc/<pid>/stat: a reused pid is another process) and is it live (not a zombie) -- read from
    /proc without psutil. Anything else (a signal, its name, a hang's captures) goes to a psutil
    handle made on first use, refused when the pid no longer holds the same process; so psutil
    (~8 ms to import) is loaded only by runs that need more than those two answers."""

    __slots__ = ("pid", "_start", "_gone", "_ps")

    def __init__(self, pid: int, start: bytes):
        self.pid = pid
        self._start = start
        self._gone = False
        self._ps = None

    @classmethod
    def of(cls, pid: int) -> "Proc | None":
        """A handle on ``pid`` as it is now; None when there is no such process."""
        rest = _stat_tail(pid)
        return None if rest is None else cls(pid, rest[19])

    def _state(self) -> bytes | None:
        """The process's state letter while the pid holds the same process, else None (for good)."""
        if self._gone:
            return None
        rest = _stat_tail(self.pid)
        if rest is None or rest[19] != self._start:
            self._gone = True
            return None
        return rest[0]

    def is_running(self) -> bool:
        """psutil's meaning: the same process still exists (a zombie does)."""
        return self._state() is not None

    def live(self) -> bool:
        return self._state() not in (None, b"Z", b"X", b"x")

    def since_boot(self) -> float:
        """When it started, in seconds since boot (its start ticks): no step of the wall clock moves it."""
        return int(self._start) / os.sysconf("SC_CLK_TCK")

    def create_time(self) -> float:
        boot = _boot_time()
        if boot is None:
            return self._psutil().create_time()
        return self.since_boot() + boot

    def _psutil(self):
        if self._ps is None:
            ps = psutil_module()
            p = ps.Process(self.pid)  # NoSuchProcess when gone
            if not self.is_running():  # the pid was reused before the handle was made
                raise ps.NoSuchProcess(self.pid)
            self._ps = p
        return self._ps

    def __getattr__(self, name):
        if name.startswith("_"):  # (a slot not set yet, or psutil's internals: never delegated)
            raise AttributeError(name)
        return getattr(self._psutil(), name)

    def __eq__(self, other) -> bool:
        return isinstance(other, Proc) and (self.pid, self._start) == (other.pid, other._start)

    def __hash__(self) -> int:
        return hash((self.pid, self._start))

    def __repr__(self) -> str:
        return f"proctree.Proc(pid={self.pid})"


def ppid_table(min_pid: int = 0) -> dict[int, int]:
    """pid -> ppid straight from /proc/<pid>/stat (psutil.process_iter is ~10x slower and this
    runs every poll interval). /proc/<pid>/task/*/children would read only our descendants, but
    kernels built without CONFIG_PROC_CHILDREN (this VM's) lack it. ``min_pid``: leave out the
    processes with a smaller pid (see ``Tree.table``)."""
    table: dict[int, int] = {}
    if not os.path.isdir("/proc/self"):
        ps = psutil_module()
        for p in ps.process_iter(["ppid"]):
            table[p.pid] = p.info.get("ppid") or 0
        return table
    for pid in pids():
        if pid < min_pid:
            continue
        stat = _read_proc(f"/proc/{pid}/stat")
        if not stat:
            continue
        # "pid (comm) state ppid ..." and comm may contain spaces or parentheses.
        rest = stat[stat.rfind(b")") + 2:].split(b" ", 2)
        try:
            table[pid] = int(rest[1])
        except (IndexError, ValueError):
            continue
    return table


_PID_MAX: list[int] = []


def _pid_max() -> int:
    if not _PID_MAX:
        raw = _read_proc("/proc/sys/kernel/pid_max", 64)
        try:
            _PID_MAX.append(int(raw or b""))
        except ValueError:
            _PID_MAX.append(0)  # unknown: never assume pids did not wrap
    return _PID_MAX[0]


def fork_count() -> int | None:
    """Processes and threads created since boot (/proc/stat ``processes``); None when unknown."""
    data = _read_proc("/proc/stat", 1 << 20) or b""
    i = data.find(b"\nprocesses ")
    if i < 0:
        return None
    try:
        return int(data[i + 11:data.index(b"\n", i + 1)])
    except ValueError:
        return None


def no_wrap_since(pid: int, forks_then: int | None) -> bool:
    """Whether every process created since ``pid`` was (``forks_then``: ``fork_count()`` read just
    after) has a larger pid. Linux hands pids out counting up, skipping pids in use, and wraps at
    pid_max to 300. A wrap means the cursor (the last pid, /proc/loadavg) went below ``pid`` or
    moved by a whole cycle; it moves by at most one step per creation plus one per pid skipped,
    and no more pids are in use than tasks exist, so creations plus tasks (plus a margin for
    the creations before ``forks_then`` was read) under a cycle, with the cursor at or above
    ``pid``, mean no wrap. Unknown anything: False (the caller reads every process)."""
    if forks_then is None:
        return False
    fields = (_read_proc("/proc/loadavg", 256) or b"").split()
    now = fork_count()
    try:
        tasks, last = int(fields[3].split(b"/")[1]), int(fields[4])
    except (IndexError, ValueError):
        return False
    return now is not None and last >= pid and (now - forks_then) + tasks + 1000 < _pid_max() - 300


def is_live(p) -> bool:
    """The one liveness rule: a psutil handle (which remembers the create time, so a reused pid is
    not ours) whose process runs and is not a zombie (an exited child nobody reaped yet)."""
    if isinstance(p, Proc):
        return p.live()
    ps = psutil_module()
    try:
        return p.is_running() and p.status() != ps.STATUS_ZOMBIE
    except ps.Error:
        return False


def alive(pid: int | None, started: float | None = None) -> bool:
    """Whether ``pid`` runs (not a zombie) and, given what ``started`` (the function) stored for it,
    is still that process and not a reused pid. A start since boot must agree to a tick or so; a
    create time within a second. A create time is the start in ticks since boot plus the boot time,
    which moves when the wall clock is stepped (a VM resumed, NTP): it may have been taken with the
    boot time this process read first (``create_time``) or with the one psutil reads now, so either
    agreeing is the same process."""
    if not pid:
        return False
    ps = psutil_module()
    try:
        p = ps.Process(pid)
        if p.status() == ps.STATUS_ZOMBIE:
            return False
        if started is not None and started < _SINCE_BOOT_BELOW:  # a start since boot (``started``): exact
            boot = since_boot(pid)
            return boot is None or abs(boot - started) < 0.05
        if started is None or abs(p.create_time() - started) < 1.0:
            return True
        ours = create_time(pid)
        return ours is not None and abs(ours - started) < 1.0
    except ps.Error:
        return False


#: a stored start below this is seconds since boot (``started``), above it a create time (seconds since 1970)
_SINCE_BOOT_BELOW = 1e9


def started(pid: int) -> float | None:
    """What to store to know ``pid`` again later (``alive``): its start since boot where /proc tells (no step of
    the wall clock moves it), else its create time."""
    boot = since_boot(pid)
    return boot if boot is not None else create_time(pid)


def since_boot(pid: int) -> float | None:
    """When ``pid`` started, in seconds since boot (its /proc start ticks): unlike a create time, no step of the
    wall clock moves it. None without /proc or without the process."""
    p = Proc.of(pid) if _HAS_PROC else None
    return p.since_boot() if p is not None else None


def create_time(pid: int) -> float | None:
    """What ``psutil.Process(pid).create_time()`` says (the same arithmetic, from /proc when there
    is one); None when unknown."""
    p = Proc.of(pid) if _HAS_PROC else None
    try:
        return p.create_time() if p is not None else psutil_module().Process(pid).create_time()
    except Exception:  # noqa: BLE001 - psutil missing or the process gone: unknown
        return None


def wait_gone(procs, timeout: float) -> bool:
    """Wait until none of ``procs`` (psutil handles) is live — zombies count as gone, since whoever
    must reap them may be us later or nobody; exponential back-off up to 50 ms."""
    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        if not any(is_live(p) for p in procs):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


# A process that double-forks and setsid()s, and clears its environment (the marker variable with
# it), leaves every link to the run: re-parented to init, it escaped the tree kill unseen (issue 17).
# As the subreaper of our descendants (Linux prctl), such orphans are re-parented to dbglog instead,
# where ``Tree.adopt`` finds them.
_SUBREAPER: bool | None = None
TREES: "weakref.WeakSet" = weakref.WeakSet()  # every live Tree in this process
SPAWNED: set[int] = set()  # helpers dbglog starts itself during a run (capture tools): never adopted
# A run started in another thread (bisect --jobs N) is a child of ours in a new session from fork()
# until its Tree exists; ``adopt`` must not claim it in that window (it did, and SIGTERMed a sibling
# run). ``start`` forks and registers under this lock, and ``adopt`` scans under it.
SPAWN_LOCK = threading.Lock()
STARTING: set[int] = set()  # root pids whose Tree is not built yet


def start(popen):
    """``popen()`` (a subprocess.Popen call) under SPAWN_LOCK; its pid is a run root, not an orphan."""
    with SPAWN_LOCK:
        proc = popen()
        STARTING.add(proc.pid)
        return proc


def become_subreaper() -> bool:
    """Make this process the subreaper of its descendants (once; Linux only). Call before a run starts."""
    global _SUBREAPER
    if _SUBREAPER is None:
        _SUBREAPER = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                libc = ctypes.CDLL(None, use_errno=True)
                _SUBREAPER = libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
            except (OSError, AttributeError):
                pass
    return _SUBREAPER


def session_of(pid: int) -> tuple[int, int] | None:
    """(process group, session) of ``pid`` from /proc/<pid>/stat."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            rest = f.read().rsplit(b")", 1)[1].split()
        return int(rest[2]), int(rest[3])
    except (OSError, IndexError, ValueError):
        return None


def adopt(tree, table: dict[int, int] | None = None) -> None:
    """Claim for ``tree`` the orphans re-parented to dbglog (the subreaper) that came from its run:
    in the repro's process group or session; or, not being a session leader, in a session that is
    neither ours nor of anything we started (dbglog only starts session leaders or members of its
    own session, so such a child was re-parented to us). A session leader nobody tracks is claimed
    only when this is the only tree in progress and it was born after the run started (it cannot
    be told apart from a helper otherwise). ``table``: a ppid table just read (see ``sweep``)."""
    if not _SUBREAPER:
        return
    with SPAWN_LOCK:
        _adopt(tree, table)


def _adopt(tree, table: dict[int, int] | None = None) -> None:
    me = os.getpid()
    mine = session_of(me)
    others = [t for t in list(TREES) if t is not tree and t.procs and t.root_pid != me]
    taken = set(SPAWNED).union(STARTING, *(t.procs for t in others))
    for pid, ppid in (ppid_table() if table is None else table).items():
        if ppid != me or pid in tree.procs or pid in taken:
            continue
        ids = session_of(pid)
        if ids is None or mine is None or ids[1] == mine[1]:
            continue  # our own session: something dbglog itself started
        pgrp, sid = ids
        ours = tree.root_pid in (pgrp, sid) or sid in tree.procs
        if not ours and (create_time(pid) or 0.0) < tree.started - 1:
            continue  # older than this run: not from it (an orphan an earlier run left, say)
        if not ours and sid == pid and others:
            continue
        if not ours and (sid in STARTING or any(sid in t.procs for t in others)):
            continue
        try:
            p = tree.psutil.Process(pid)
            tree.procs[pid] = p
            marker = getattr(tree, "marker_var", "DBGLOG_RUN_ID")
            if not _has_env(pid, marker, tree.run_id):  # with the marker it was never lost: not an escapee
                tree.escaped[pid] = {"pid": pid, "name": p.name(), "cmdline": " ".join(p.cmdline())[:300]}
        except (tree.psutil.Error, OSError):
            pass


def _has_env(pid: int, var: str, value: str) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return b"\0" + f"{var}={value}".encode() + b"\0" in b"\0" + f.read() + b"\0"
    except OSError:
        return False


def descendants(table: dict[int, int], roots) -> list[int]:
    """Every pid below ``roots`` in a ppid table (the roots themselves not included)."""
    children: dict[int, list[int]] = collections.defaultdict(list)
    for pid, ppid in table.items():
        children[ppid].append(pid)
    out: dict[int, None] = {}  # (a dict: in the order found, which ``Tree.snapshot`` keeps)
    stack = list(roots)
    while stack:
        for c in children.get(stack.pop(), ()):
            if c not in out:
                out[c] = None
                stack.append(c)
    return list(out)


def no_children() -> bool:
    """Whether this process has no child at all, running or waiting to be reaped (one waitid
    call that reaps nothing)."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    except (OSError, AttributeError):  # (no waitid: assume there are)
        return False
    return False


def sweep(tree) -> None:
    """``snapshot``, ``scan_marker`` and ``adopt`` of ``tree`` over ONE read of the ppid table
    (each read is one /proc file per process on the machine: a few ms on a busy host, and a
    finished run used to pay three of them). None when dbglog is the subreaper and has no child
    left: every process the run left behind would be one of its children (re-parented to dbglog
    when its parent died) or below one, so there is nothing to find -- the commonest end of a run,
    a command that exited and took its processes with it."""
    if _SUBREAPER and no_children():
        return
    table = tree.table()
    tree.snapshot(table)
    tree.scan_marker(table)
    tree.adopt(table)


def report_escaped(tree, survivors: list[dict]) -> list[dict]:
    """``survivors`` plus the tree's adopted orphans (marked ``escaped``; the dead ones reaped)."""
    out = list(survivors)
    alive = {s.get("pid") for s in survivors}
    for pid, info in tree.escaped.items():
        if pid in alive:
            next(s for s in out if s.get("pid") == pid)["escaped"] = True
            continue
        try:
            os.waitpid(pid, os.WNOHANG)  # our child now: reap it
        except OSError:
            pass
        out.append(info | {"status": "killed", "escaped": True})
    return out


class Tree:
    """Every process the run ever spawned, as handles that guard against PID reuse (``Proc``, or
    psutil's where /proc is not there to read)."""

    def __init__(self, root_pid: int, run_id: str, started: float, marker_var: str = "DBGLOG_RUN_ID"):
        self.root_pid = root_pid
        self.run_id = run_id
        self.started = started
        self.marker_var = marker_var
        self.procs: dict[int, object] = {}
        self.escaped: dict[int, dict] = {}  # orphans claimed by adopt(): pid -> name, cmdline
        root = self.handle(root_pid)
        if root is not None:
            self.procs[root_pid] = root
        self.forks_then = fork_count() if root_pid != os.getpid() else None  # see table()
        TREES.add(self)
        STARTING.discard(root_pid)

    adopt = adopt
    report_escaped = report_escaped

    @property
    def psutil(self):
        return psutil_module()

    def handle(self, pid: int):
        """A handle on ``pid`` (None when it is gone): ``Proc`` from /proc, else psutil's."""
        if _HAS_PROC:
            return Proc.of(pid)
        try:
            return self.psutil.Process(pid)
        except self.psutil.Error:
            return None

    def alive(self) -> list:
        return [p for p in list(self.procs.values()) if is_live(p)]

    def table(self) -> dict[int, int]:
        """The ppid table for this tree's snapshot, marker scan and adopt: every process born
        since its root started is younger than the root, so unless pids wrapped since
        (``no_wrap_since``) only pids above the root's are read -- a handful, not every process on
        the machine. Older ones cannot be of this run: not its descendants, not in its session,
        never given its marker (an orphan adopt would claim must be younger than the run too)."""
        if no_wrap_since(self.root_pid, self.forks_then):
            return ppid_table(min_pid=self.root_pid)
        return ppid_table()

    def snapshot(self, table: dict[int, int] | None = None) -> None:
        """Add every descendant of every process we track (one pass over the ppid table, or over
        ``table`` when the caller just read one), so a setsid'd grandchild stays tracked after its
        parent dies and it is re-parented."""
        roots = [pid for pid, p in self.procs.items() if self._running(p)]
        for c in descendants(ppid_table() if table is None else table, roots):
            if c not in self.procs:
                h = self.handle(c)
                if h is not None:
                    self.procs[c] = h

    def _running(self, p) -> bool:
        try:
            return p.is_running()
        except self.psutil.Error:
            return False

    def scan_marker(self, table: dict[int, int] | None = None) -> None:
        """Find processes that inherited our marker variable even if every link to them was lost
        (e.g. a double fork that finished between two snapshots). The id is random, so a match
        is ours; /proc/<pid>/environ of other users' processes is unreadable and skipped.

        As the subreaper (``become_subreaper``) every process that came from a run stays below
        dbglog: an orphan is re-parented to us, never to init. Then only our descendants can
        carry the marker, and with a ppid table at hand (``sweep``) only they are read, not the
        environment of every process on the machine."""
        among = None
        if table is not None and _SUBREAPER:
            among = descendants(table, [os.getpid()])
        for pid in pids_with_env(self.marker_var, self.run_id, skip=set(self.procs), among=among):
            h = self.handle(pid)
            if h is not None:
                self.procs[pid] = h

    def signal_all(self, sig: int) -> None:
        try:
            os.killpg(self.root_pid, sig)  # the group the repro leads (start_new_session)
        except (ProcessLookupError, PermissionError):
            pass
        for p in self.alive():
            try:
                p.send_signal(sig)
            except (self.psutil.Error, OSError):
                pass

    def wait_gone(self, timeout: float) -> bool:
        return wait_gone(list(self.procs.values()), timeout)


def kill_group(p, grace: float = 0.0) -> None:
    """Stop the process group a helper leads (started with ``start_new_session``) when it ran out of
    time: the whole group, since a grandchild may hold its pipe or file. With ``grace``, SIGTERM first
    and SIGKILL only after that many seconds: ``srun`` forwards a SIGTERM to the job step's tasks on
    their node, where a SIGKILL of the local ``srun`` would leave them running. The caller reaps ``p``."""
    import subprocess

    if grace > 0:
        try:
            os.killpg(p.pid, _signal.SIGTERM)
        except OSError:
            return
        try:
            p.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(p.pid, _signal.SIGKILL)
    except OSError:
        pass


def proc_state(p) -> dict:
    ps = psutil_module()
    info: dict = {"pid": p.pid}
    for key, fn in (("name", p.name), ("status", p.status), ("cmdline", lambda: " ".join(p.cmdline()))):
        try:
            info[key] = fn()
        except (ps.Error, OSError):
            info[key] = None
    try:
        info["wchan"] = Path(f"/proc/{p.pid}/wchan").read_text().strip() or None
    except OSError:
        info["wchan"] = None
    return info


def terminate_tree(tree: Tree, grace: float, kill_wait: float = 3.0) -> list[dict]:
    """SIGTERM the group and every tracked descendant, wait ``grace``, SIGKILL what is left,
    wait ``kill_wait``. Returns the processes that survived SIGKILL (e.g. stuck in state D)."""
    sweep(tree)
    if not tree.alive():
        return []
    tree.signal_all(_signal.SIGTERM)
    if not tree.wait_gone(grace):
        tree.snapshot()  # a dying process may have spawned something
        tree.signal_all(_signal.SIGKILL)
        tree.wait_gone(kill_wait)
    return [proc_state(p) for p in tree.alive()]


def pids_with_env(var: str, value: str, skip: set | frozenset = frozenset(), among=None) -> list[int]:
    """Pids (other than ours and ``skip``; only ``among`` when given) whose environment holds
    ``var=value``; unreadable /proc/<pid>/environ (other users' processes) is skipped."""
    me = os.getpid()
    out = []
    for pid in pids() if among is None else sorted(among):
        if pid == me or pid in skip:
            continue
        if _has_env(pid, var, value):
            out.append(pid)
    return out


def kill_marked(var: str, value: str, grace: float = 2.0) -> list[dict]:
    """Terminate every process whose environment holds ``var=value`` and return the survivors.

    Used after a supervisor was killed with -9: its repro (own session, so not killed with it)
    and that repro's descendants still carry the marker variable the supervisor set.
    """
    ps = psutil_module()
    tree = Tree(os.getpid(), value, time.time(), marker_var=var)
    tree.procs.clear()
    for pid in pids_with_env(var, value):
        try:
            tree.procs[pid] = ps.Process(pid)
        except ps.Error:
            pass
    if not tree.procs:
        return []
    tree.snapshot()
    for p in tree.alive():
        try:
            p.send_signal(_signal.SIGTERM)
        except (ps.Error, OSError):
            pass
    if not tree.wait_gone(grace):
        for p in tree.alive():
            try:
                p.send_signal(_signal.SIGKILL)
            except (ps.Error, OSError):
                pass
        tree.wait_gone(3.0)
    return [proc_state(p) for p in tree.alive()]


# --- one supervision for every entry point (issue 30) -------------------------------------------
# A stop signal is delivered to the main thread only, while an MCP tool (or a bisection's --jobs
# step) supervises its run on a worker thread: each supervision registers here, and whoever holds
# the main thread's handler (the CLI's trap, the MCP server) asks every one of them to stop; their
# watch loops see it within one poll and kill their trees as for a Ctrl-C.

SUPERVISING: "weakref.WeakSet" = weakref.WeakSet()  # live supervisions: each has ``request_stop(signum)``


STOPPING: list[int] = []  # set for good by a server on its way out: a run starting now stops at once

# Who asked for the runs a thread supervises (an MCP request's id, set around its tool call: the worker thread the
# SDK runs the tool on inherits it), and the callers whose request was cancelled: their runs stop, now and later
# (a cancelled run_repro ran on until its timeout, or for ever).
CALLER: "contextvars.ContextVar[str | None]" = contextvars.ContextVar("dbglog_caller", default=None)
CANCELLED: set[str] = set()


def stop_asked(caller: "str | None") -> int | None:
    """The signal a supervision of ``caller``'s should stop as, when a stop was asked for good (a server on its way
    out) or ``caller``'s request was cancelled; else None. (The client's watch loop, and a server's readiness wait,
    which runs before any supervision exists, ask the same.)"""
    if STOPPING:
        return STOPPING[0]
    return _signal.SIGTERM if caller is not None and caller in CANCELLED else None


def stop_caller(caller: str, signum: int) -> int:
    """Stop the runs ``caller`` asked for, and any it starts later; how many were running."""
    CANCELLED.add(caller)
    runs = [s for s in list(SUPERVISING) if getattr(s, "caller", None) == caller]
    for s in runs:
        s.request_stop(signum)
    return len(runs)


def stop_all(signum: int, for_good: bool = False) -> int:
    """Ask every supervision in this process to stop its run as if ``signum`` had reached it;
    returns how many were asked. ``for_good``: runs that start later stop too (a server exiting)."""
    if for_good and not STOPPING:
        STOPPING.append(signum)
    runs = list(SUPERVISING)
    for s in runs:
        s.request_stop(signum)
    return len(runs)


_PRCTL: list = []


def _prctl():
    if not _PRCTL:
        fn = None
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                fn = ctypes.CDLL(None, use_errno=True).prctl
            except (OSError, AttributeError):
                fn = None
        _PRCTL.append(fn)
    return _PRCTL[0]


def die_with_parent():
    """A ``preexec_fn`` giving the child a parent-death signal (Linux ``PR_SET_PDEATHSIG``): if dbglog
    is killed with -9, the kernel SIGKILLs the repro's root at once; what the root started carries the
    run's marker variable and is stopped by the next command (``reap_orphans``). None elsewhere.
    The signal comes when the *thread* that forked ends, and every caller waits for its run on the
    thread that started it (the CLI, an MCP worker, a bisection slot)."""
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(1, int(_signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # dbglog died between the fork and the prctl: nobody supervises us
            os._exit(255)
    return preexec


# --- runs whose supervisor was killed: a registry per workspace ---------------------------------
# ``.dbglog/live/<run id>.json`` exists while a run is supervised (written after the spawn, removed
# when the run is reaped). A command that finds one whose supervisor is gone (kill -9, OOM killer)
# stops what is left of the run by its marker variable and has it recorded as interrupted. An empty
# directory costs one scandir per command.

def live_enter(live_dir: Path, run_id: str, pid: int | None, run_dir: Path, cmd, marker_var: str) -> Path | None:
    """Register a supervised run (before its repro starts: ``pid`` None); returns the entry to remove when it ends
    (None: could not write). What is left of it is found by its marker variable, never by a pid."""
    import json

    entry = Path(live_dir) / f"{run_id}.json"
    me = os.getpid()
    data = {"run_id": run_id, "pid": pid, "run_dir": str(run_dir), "cmd": list(cmd), "marker_var": marker_var,
            "supervisor": me, "supervisor_started": started(me), "started": time.time()}
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        tmp = entry.with_name(f".{entry.name}.tmp")
        tmp.write_text(json.dumps(data))
        os.replace(tmp, entry)
    except OSError:
        return None
    return entry


def live_leave(entry: Path | None) -> None:
    if entry is not None:
        try:
            os.unlink(entry)
        except OSError:
            pass


def orphaned_runs(live_dir: Path) -> list[dict]:
    """The registered runs whose supervisor is no longer alive, each claimed for this process (the
    entry renamed, so two commands never stop and record the same run twice)."""
    try:
        names = [e.name for e in os.scandir(live_dir) if e.name.endswith(".json") and not e.name.startswith(".")]
    except OSError:
        return []
    out = []
    for name in names:
        path = Path(live_dir) / name
        try:
            data = jsonsafe.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if alive(data.get("supervisor"), data.get("supervisor_started")):
            continue
        claimed = path.with_name(f".{name}.{os.getpid()}.claimed")
        try:
            os.rename(path, claimed)
        except OSError:
            continue  # another command took it
        data["_entry"] = str(claimed)
        out.append(data)
    return out


def stop_orphan(data: dict, grace: float = 2.0) -> list[dict]:
    """Stop what is left of an orphaned run: every process carrying its marker variable (the root
    itself died with its supervisor, ``die_with_parent``)."""
    # (not the root's process group by number: the root is dead, and its pid may be another's now)
    var, run_id = data.get("marker_var") or "DBGLOG_RUN_ID", str(data.get("run_id"))
    # (a server-shaped repro's server carries its own value: serve.Server)
    return kill_marked(var, run_id, grace=grace) + kill_marked(var, f"{run_id}-server", grace=grace)


def stopped_processes(data: dict) -> int:
    """How many processes of an orphaned run are alive right now (before ``stop_orphan``)."""
    var, run_id = data.get("marker_var") or "DBGLOG_RUN_ID", str(data.get("run_id"))
    return len(pids_with_env(var, run_id)) + len(pids_with_env(var, f"{run_id}-server"))
