"""Thread dumps of a hung process, and the hang verdict read from the threads' states.

One splitter (``split_threads``) for every reader of py-spy dumps, gdb ``thread apply all bt`` /
``py-bt`` output and faulthandler dumps: ``parse_thread_stacks`` below and the stuck-process guess
in ``run/captures.py``.

The verdict classifies every thread -- blocked in the user's code (on a lock, a condition, a queue,
a join, a collective, a device sync), idle in an event loop or selector, a known helper pool
(recognised by its frames, never by merely not being the main thread), running -- reads the
user's source line a blocked thread sits on (``with b:`` waits for ``b``; an enclosing ``with a:``
holds ``a``) and finds the waits that form a cycle. Suspects are the threads blocked in user code,
cycle members first; an idle event loop is never the stuck spot while such threads exist. A thread
seen in several samples of one dump file is counted once and said to be unchanged or moving.
What is read from source lines is a guess and labelled one.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field


_TS_SPY = re.compile(r'^Thread (0x[0-9A-Fa-f]+|\d+) \((idle|active[^)]*)\)(?:: "([^"]*)")?\s*$')
# A Python frame (its file may hold spaces), or a native one (--native: a library, no line).
_TS_SPY_FRAME = re.compile(r"^\s+(\S.*?) \((?:(.+?):(\d+)|(\S+?))\)\s*$")
_TS_PROCESS = re.compile(r"^Process (\d+): (.*?)\s*$")
_TS_GDB = re.compile(r'^Thread (\d+) \(Thread (0x[0-9a-fA-F]+) \(LWP (\d+)\)(?: "([^"]*)")?\):?\s*$')
# Any other gdb thread header: a core without libthread_db ("Thread 2 (LWP 812):"), "(process N)".
_TS_GDB_OTHER = re.compile(r"^Thread (\d+) \((?:.*?\(LWP (\d+)\))?")
# frame #0 of a backtrace printed without a thread header: "#0  0x000014cd955ebdbc in ?? () from /lib64/libcuda.so.1"
_TS_BT_START = re.compile(r"^#0\s+(?:0x[0-9a-fA-F]+ in )?\S")
_TS_GDB_FRAME = re.compile(r"^#(\d+)\s+(?:0x[0-9a-fA-F]+ in )?(\S.*?)(?: \(.*?\))?(?: (?:at|from) (\S+?))?\s*$")
_TS_FH = re.compile(r"^(Current thread|Thread) (0x[0-9a-fA-F]+) \(most recent call first\):")
# faulthandler ("line N in f") and gdb's py-bt, CPython's traceback form ("line N, in f").
_TS_PY_FRAME = re.compile(r'^\s+File "([^"]+)", line (\d+),? in (.+?)\s*$')
MAX_FRAMES = 40


@dataclass
class Frame:
    """One frame as the dump printed it: ``file`` is the full path (or library), ``line`` None where
    the dump gives none; ``native`` for gdb's ``#N`` frames."""

    function: str
    file: str | None = None
    line: str | None = None
    native: bool = False


@dataclass
class Thread:
    """One thread of a dump: ``tool`` (py-spy, gdb, faulthandler), the id it printed, its name,
    py-spy's state (idle, active, active+gil), gdb's LWP, py-spy's process, faulthandler's current
    thread, the header line as printed and the frames innermost first."""

    tool: str
    id: str
    header: str
    name: str | None = None
    state: str | None = None
    lwp: int | None = None
    process: int | None = None
    current: bool = False
    frames: list[Frame] = field(default_factory=list)


def split_threads(text: str, max_frames: int | None = MAX_FRAMES) -> list[Thread]:
    """The threads of a py-spy dump, gdb ``thread apply all bt`` / ``py-bt`` output or faulthandler
    dump, in the order printed (gdb's py-bt and bt sections each give a thread once; threads without
    frames kept); lines outside a thread are skipped. At most ``max_frames`` frames per thread."""
    threads: list[Thread] = []
    cur: Thread | None = None
    process = None
    for line in text.splitlines():
        if (m := _TS_PROCESS.match(line)) is not None:
            process = int(m.group(1))
            continue
        if (m := _TS_SPY.match(line)) is not None:
            cur = Thread("py-spy", m.group(1), line.strip(), name=m.group(3), state=m.group(2), process=process)
        elif (m := _TS_GDB.match(line)) is not None:
            cur = Thread("gdb", m.group(1), line.strip(), name=m.group(4), lwp=int(m.group(3)))
        elif (m := _TS_FH.match(line)) is not None:
            cur = Thread("faulthandler", m.group(2), line.strip(), current=m.group(1) == "Current thread")
        elif (m := _TS_GDB_OTHER.match(line)) is not None:
            cur = Thread("gdb", m.group(1), line.strip(), lwp=int(m.group(2)) if m.group(2) else None)
        elif cur is None and _TS_BT_START.match(line):
            # a plain ``bt`` (or a paste of one) has no thread header: its frames are gdb's current thread
            cur = Thread("gdb", "bt", "bt", name="current")
            cur.frames.append(_ts_frame(line, "gdb"))
        else:
            if cur is not None and (max_frames is None or len(cur.frames) < max_frames):
                f = _ts_frame(line, cur.tool)
                if f is not None:
                    cur.frames.append(f)
            continue
        threads.append(cur)
    return threads


def _ts_frame(line: str, tool: str) -> Frame | None:
    if (f := _TS_PY_FRAME.match(line)) is not None:
        return Frame(f.group(3), f.group(1), f.group(2))
    if line.lstrip().startswith("#"):
        if (f := _TS_GDB_FRAME.match(line.strip())) is not None:
            return Frame(f.group(2).strip(), f.group(3), None, native=True)
        return None
    # py-spy's frame form is loose enough to match other text: only under a py-spy thread.
    if tool == "py-spy" and (f := _TS_SPY_FRAME.match(line)) is not None:
        return Frame(f.group(1), f.group(2) or f.group(4), f.group(3))
    return None


# What a blocked thread waits for, by the frames it sits in (innermost match wins).
_TS_WAITS = (
    ("collective", re.compile(r"nccl|rccl|ProcessGroupNCCL|c10d::|all_reduce|all_gather|reduce_scatter|all_to_all|"
                              r"broadcast|barrier|allreduce|allgather|_coalescing|\bwait \(distributed")),
    ("gpu-sync", re.compile(r"(?:cuda|hip|cu)(?:Stream|Device|Event|Ctx)Synchroni[sz]e|cudaMemcpy\b|hipMemcpy\b|"
                            r"cuMemcpyDtoH|_local_scalar_dense|^item$|^synchronize$|^tolist$|^cpu$")),
    ("gil", re.compile(r"take_gil|PyEval_RestoreThread|PyGILState_Ensure|PyEval_AcquireThread")),
    ("lock", re.compile(r"^acquire$|pthread_mutex_lock|__lll_lock_wait|_wait_for_tstate_lock|^join$")),
    ("queue", re.compile(r"^get$|_recv_bytes|^recv_bytes$|_poll$|^poll$|^select$|^accept$|^recv$")),
    ("sleep", re.compile(r"^sleep$|nanosleep|clock_nanosleep")),
)
# Helper threads every NCCL / torch process has; their waiting is normal, never the hang's cause.
# (By frames only: `_bootstrap_inner` is every Python thread's bottom frame, the user's own included.)
_TS_BACKGROUND = re.compile(r"ncclProxy|ncclIbAsyncThread|ibv_get_async_event|ncclCommWatchdog|heartbeatMonitor|"
                            r"watchdogHandler|ncclAsyncJob|_pin_memory_loop|_handle_results|_handle_workers|"
                            r"_handle_tasks|event_file_writer|_monitor_thread|TMonitor\.run|_python_exit")
# ... and by the name the CUDA driver or torch gives the thread (gdb and py-spy print it)
_TS_BACKGROUND_NAME = re.compile(r"cuda(?:\d{8,}|-EvtHandlr)|pt_nccl_(?:watchdg|heartbt)|pt_autograd_\d|pt_elastic")
_TS_IDLE = re.compile(r"futex|pthread_cond_\w*wait|__GI___poll|epoll_wait|__select|sem_wait|nanosleep|^read$|"
                      r"__libc_read|^wait$|syscall$|^clone\d*$|start_thread")


_TS_ANY_SPY = re.compile(r'\nThread (?:0x[0-9A-Fa-f]+|\d+) \((?:idle|active)')
_TS_ANY_GDB = re.compile(r"\nThread \d+ \(Thread 0x[0-9a-fA-F]+ \(LWP \d+\)")
# a header-less backtrace: frame #0 and frame #1 in gdb's form on consecutive lines
_TS_ANY_BT = re.compile(r"\n#0\s+(?:0x[0-9a-fA-F]+ in )?\S[^\n]*\n#1\s+(?:0x[0-9a-fA-F]+ in )?\S")
_TS_ANY_FH = re.compile(r"\n(?:Current thread|Thread) 0x[0-9a-fA-F]+ \(most recent call first\):")


def _ts_wait(frames: list[dict]) -> tuple[str | None, str | None]:
    """(what the thread waits for, the frame that says so): the most specific kind any frame names
    (a collective over a GPU sync over the GIL ...; a poll under cuStreamSynchronize is the sync)."""
    for kind, rx in _TS_WAITS:
        for f in frames:
            if rx.search(f["function"]) or (kind == "collective" and rx.search(f.get("file") or "")):
                return kind, f["function"]
    return None, None


def _ts_where(frames: list[dict]) -> str | None:
    """The innermost frame that is the program's own code, not a libc/runtime wait primitive."""
    for f in frames:
        # "??" (gdb without symbols) names no code: the first named frame above it says more
        if f["function"] != "??" and not _TS_IDLE.search(f["function"]):
            return f["function"] + (f" ({f['file']}{':' + f['line'] if f.get('line') else ''})" if f.get("file") else "")
    return None


def _ts_thread(t: Thread) -> dict:
    """A thread as the evidence record stores it (the keys each tool's dump gives)."""
    if t.tool == "py-spy":
        out = {"thread": t.id, "name": t.name, "state": t.state, "frames": [], "process": t.process}
    elif t.tool == "gdb":
        out = {"thread": t.id, "lwp": t.lwp, "name": t.name, "frames": []}
    else:
        out = {"thread": t.id, "name": "current" if t.current else None, "frames": []}
    for f in t.frames:
        file = os.path.basename(f.file or "")
        prev = out["frames"][-1] if out["frames"] else None
        if f.function == "??" and prev and prev["function"] == "??" and prev["file"] == (file or None):
            # a run of symbol-less frames in one library (libcuda) is one frame, counted: the named frames
            # above it (cudaStreamSynchronize <- ncclCommAbort) are what the 12 kept frames should show
            prev["repeat"] = prev.get("repeat", 1) + 1
            continue
        out["frames"].append({"function": f.function, "file": file or None} if f.native
                             else {"function": f.function, "file": file, "line": f.line})
    return out


# --- samples: one file may hold several dumps of the same process ----------------------------------

# A thread's header in a faulthandler dump (all_threads=True; "Stack" without it).
_FH_HEAD = re.compile(r"^(?:(?:Current thread|Thread) 0x[0-9a-fA-F]+ |Stack )\(most recent call first\):$", re.M)


def fh_dumps(text: str) -> list[str]:
    """The dumps in a faulthandler file, split by their shape: inside one dump a blank line comes
    before each further thread's header; a new dump's header follows the last frame line directly."""
    starts = [m.start() for m in _FH_HEAD.finditer(text) if m.start() == 0 or text[m.start() - 2:m.start()] != "\n\n"]
    return [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]


def samples(threads: list[Thread]) -> list[list[Thread]]:
    """The threads grouped by sample: a thread id seen again in the same process starts a new
    sample (faulthandler's second SIGUSR1 dump, a second py-spy dump), except gdb, whose ``py-bt``
    and ``bt`` sections are two views of one sample (merged by ``_merge``)."""
    out: list[list[Thread]] = [[]]
    seen: set[tuple] = set()
    for t in threads:
        key = (t.process, t.id)
        if key in seen and t.tool != "gdb":
            out.append([])
            seen = set()
        seen.add(key)
        out[-1].append(t)
    return [s for s in out if s]


def _merge_gdb(sample: list[Thread]) -> list[Thread]:
    """gdb prints a thread once per ``thread apply all`` command: one thread, Python frames first."""
    by: dict[tuple, Thread] = {}
    for t in sample:
        key = (t.process, t.id)
        if key not in by:
            by[key] = t
        elif t.frames:
            have = by[key]
            if not have.frames:
                by[key] = t
            elif have.frames[0].native and not t.frames[0].native:
                by[key] = Thread(t.tool, t.id, t.header, t.name or have.name, t.state, t.lwp or have.lwp,
                                 t.process, t.current, t.frames + have.frames)
            elif not have.frames[-1].native or not t.frames[0].native or have.frames == t.frames:
                continue
            else:
                have.frames = have.frames + t.frames
    return list(by.values())


# --- the user's code, and what a frame waits on ---------------------------------------------------

_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) | {"threading", "queue", "selectors", "socketserver",
                                                                "asyncio", "concurrent", "multiprocessing"}
# Frameworks a Python dump names by their package (py-spy shortens paths to it): never "the user's code".
_LIBS = frozenset("torch vllm sglang transformers accelerate deepspeed megatron triton numpy ray zmq uvicorn uvloop "
                  "tornado tqdm gunicorn fastapi starlette anyio grpc urllib3 requests aiohttp jax flax tensorflow "
                  "lightning pytorch_lightning xformers flash_attn apex datasets huggingface_hub safetensors "
                  "_pytest pytest pluggy click".split())
_LIB_PATH = re.compile(r"[/\\](?:site|dist)-packages[/\\]|[/\\]lib(?:64)?[/\\](?:pypy|python)\d[\d.]*[/\\]|^<")


def is_user_frame(f: Frame) -> bool:
    """A Python frame of the program's own code: not native, not the standard library, not an
    installed package (by path; py-spy's short names by their top package)."""
    if f.native or not f.file or f.line is None or _LIB_PATH.search(f.file):
        return False
    if os.path.isabs(f.file):
        return True
    top = f.file.replace("\\", "/").split("/")[0]
    return top.removesuffix(".py") not in _STDLIB | _LIBS


# (kind, function (py-spy's "Class.method" or a bare name), file) of a library frame a thread waits in.
_PY_WAITS = (
    ("event-loop", re.compile(r"(?:^|\.)(?:select|poll|serve_forever|run_forever|_run_once|accept|epoll)$"),
     re.compile(r"(?:^|[/\\])(?:selectors|socketserver|socket|base_events|asyncio[/\\]\w+|ioloop|server|uvloop\S*)"
                r"\.py$")),
    ("lock", re.compile(r"(?:^|\.)(?:acquire|_acquire_restore)$"), None),
    ("condition", re.compile(r"(?:^|\.)(?:wait|wait_for)$"), re.compile(r"threading\.py$|synchronize\.py$")),
    ("queue", re.compile(r"(?:^|\.)(?:get|_recv_bytes|recv_bytes|_recv|recv|poll|_poll)$"),
     re.compile(r"queue[s]?\.py$|connection\.py$")),
    ("join", re.compile(r"(?:^|\.)(?:join|_wait_for_tstate_lock|wait|_try_wait|communicate)$"),
     re.compile(r"threading\.py$|process\.py$|popen_\w+\.py$|subprocess\.py$")),
    ("sleep", re.compile(r"^(?:time\.)?sleep$"), None),
)


def _library_wait(f: Frame) -> str | None:
    for kind, fn, file in _PY_WAITS:
        if fn.search(f.function) and (file is None or file.search(f.file or "")):
            return kind
    return None


# What the user's line waits on. (The lock's name is the expression's text: a guess, labelled one.)
_SRC_WITH = re.compile(r"^\s*(?:async\s+)?with\s+([\w.\[\]'\"]+)\s*(?:as\s+\w+\s*)?:")
_SRC_CALL = re.compile(r"([A-Za-z_][\w.\[\]'\"]*)\.(acquire|wait|wait_for|get|join)\(")
_SRC_KIND = {"acquire": "lock", "wait": "condition", "wait_for": "condition", "get": "queue", "join": "join"}
_SRC_OTHER = (("collective", _TS_WAITS[0][1]), ("gpu-sync", re.compile(r"synchroni[sz]e\(|\.item\(\)|\.tolist\(\)|"
                                                                        r"\.cpu\(\)")),
              ("sleep", re.compile(r"\bsleep\(")))


def source_line(path: str | None, line: str | int | None, roots: tuple[str, ...] = ()) -> tuple[str, list[str]]:
    """(the line, the lines above it) of a frame's file, read where the path (absolute, or under
    one of ``roots``) leads; ("", []) when it cannot be read."""
    if not path or line is None:
        return "", []
    for p in [path] if os.path.isabs(path) else [os.path.join(r, path) for r in roots]:
        try:
            with open(p, encoding="utf-8", errors="replace") as fh:
                lines = fh.read().splitlines()
        except OSError:
            continue
        n = int(line)
        if 0 < n <= len(lines):
            return lines[n - 1], lines[:n - 1]
    return "", []


def _indent(s: str) -> int:
    return len(s) - len(s.lstrip())


def held_locks(above: list[str], at: str) -> list[str]:
    """The ``with X:`` blocks (and unreleased ``X.acquire()`` calls) enclosing a line, in its
    function: read upward until the ``def`` that holds it."""
    held: list[str] = []
    level = _indent(at)
    released: set[str] = set()
    for s in reversed(above):
        if not s.strip() or s.lstrip().startswith("#"):
            continue
        ind = _indent(s)
        if ind < level:
            level = ind
            if (m := _SRC_WITH.match(s)) is not None:
                held.append(m.group(1))
            elif s.lstrip().startswith(("def ", "async def ")):
                break
        elif ind == level:
            if ".release(" in s:
                released.add(s.split(".release(")[0].strip())
            elif (m := _SRC_CALL.search(s)) is not None and m.group(2) == "acquire" and m.group(1) not in released:
                held.append(m.group(1))
    return held


def line_wait(text: str) -> tuple[str | None, str | None]:
    """(kind, the object) a source line waits on: ``with b:`` / ``b.acquire()`` a lock, ``c.wait()``
    a condition, ``q.get()`` a queue, ``t.join()`` a thread; a collective, a GPU sync, a sleep."""
    if (m := _SRC_WITH.match(text)) is not None and "(" not in m.group(1):
        return "lock", m.group(1)
    if (m := _SRC_CALL.search(text)) is not None:
        return _SRC_KIND[m.group(2)], m.group(1)
    for kind, rx in _SRC_OTHER:
        if rx.search(text):
            return kind, None
    return None, None


# --- one thread's verdict ------------------------------------------------------------------------

@dataclass
class Verdict:
    """What one thread is doing: ``role`` (blocked | idle-loop | helper | running | waiting |
    no-frames), what it waits for and the frame or source line that says so, the user frame it
    sits in, the object its line names (a lock's expression), the locks its code holds there, and
    whether its stack stayed the same between samples (None: one sample)."""

    role: str
    wait: str | None = None
    wait_frame: str | None = None
    where: Frame | None = None
    on: str | None = None
    holds: list[str] = field(default_factory=list)
    source: str = ""
    unchanged: bool | None = None


def _helper(t: Thread) -> bool:
    return any(_TS_BACKGROUND.search(f.function) for f in t.frames) or bool(_TS_BACKGROUND_NAME.match(t.name or ""))


def _native_verdict(t: Thread, unchanged: bool | None) -> Verdict:
    """A thread with C frames only (gdb ``bt``): the wait its frames name."""
    wait, frame = _ts_wait([{"function": f.function, "file": f.file} for f in t.frames])
    role = "blocked" if wait in ("collective", "gpu-sync", "lock") else "waiting" if wait else "running"
    return Verdict(role, wait, frame, unchanged=unchanged)


def classify(t: Thread, roots: tuple[str, ...] = (), unchanged: bool | None = None) -> Verdict:
    """One thread's role, from its frames (and its source line where the file can be read)."""
    if not t.frames:
        return Verdict("no-frames", unchanged=unchanged)
    if _helper(t):
        return Verdict("helper", "background", unchanged=unchanged)
    user = next((i for i, f in enumerate(t.frames) if is_user_frame(f)), None)
    if user is None and all(f.native for f in t.frames):
        return _native_verdict(t, unchanged)
    inner = t.frames if user is None else t.frames[:user]
    # the outermost library wait names what the code asked for (Queue.get over its Condition.wait)
    lib = next(((k, f.function) for f in reversed(inner) if (k := _library_wait(f))), (None, None))
    special, special_frame = _ts_wait([{"function": f.function, "file": f.file} for f in t.frames])
    if special not in ("collective", "gpu-sync"):
        special, special_frame = None, None
    if lib[0] == "event-loop" and special is None:  # named by its outermost loop frame (serve_forever)
        loop = [f.function for f in inner if _library_wait(f) == "event-loop"][-1]
        return Verdict("idle-loop", "event-loop", loop, t.frames[user] if user is not None else None,
                       unchanged=unchanged)
    if user is None:  # library code only: a pool's worker waiting for work, or a library busy
        role = "helper" if lib[0] in ("queue", "condition") else "waiting" if lib[0] or special else "running"
        return Verdict(role, special or lib[0], special_frame or lib[1], unchanged=unchanged)
    where = t.frames[user]
    text, above = source_line(where.file, where.line, roots)
    kind, on = line_wait(text)
    wait = special or lib[0] or kind
    holds = held_locks(above, text) if text else []
    busy = (t.state or "").startswith("active") and not wait
    role = "running" if busy or (not wait and t.state is None and not unchanged) else "blocked"
    return Verdict(role, wait, special_frame or lib[1] or (text.strip() if kind else None), where,
                   on if (lib[0] or kind) == kind else None, holds, text.strip(), unchanged)


def lock_cycles(verdicts: dict[tuple, Verdict]) -> list[list[tuple]]:
    """Threads each waiting for a lock another holds, around a cycle (by the locks' expressions)."""
    holders: dict[str, list[tuple]] = {}
    for k, v in verdicts.items():
        for name in v.holds:
            holders.setdefault(name, []).append(k)
    edges = {k: [h for h in holders.get(v.on or "", []) if h != k]
             for k, v in verdicts.items() if v.role == "blocked" and v.wait == "lock" and v.on}
    cycles: list[list[tuple]] = []
    seen: set[frozenset] = set()
    for start in edges:
        path, node = [start], start
        while edges.get(node):
            node = edges[node][0]
            if node in path:
                cyc = path[path.index(node):]
                if frozenset(cyc) not in seen:
                    seen.add(frozenset(cyc))
                    cycles.append(cyc)
                break
            path.append(node)
    return cycles


# --- a dump's verdict -------------------------------------------------------------------------------

_WAIT_WORDS = {"background": "work (a NCCL/torch helper thread, normal while idle)",
               "collective": "a collective (NCCL/RCCL)", "gpu-sync": "the GPU (a synchronize or device-to-host copy)",
               "gil": "the GIL", "lock": "a lock", "condition": "a condition or event", "queue": "a queue or socket",
               "join": "another thread or process to end", "sleep": "a sleep",
               "event-loop": "requests (an idle event loop or selector)"}
# Which blocked thread is named first: a lock wait (it may be a cycle), then waits on another party.
_SUSPECT_ORDER = {"lock": 0, "collective": 1, "queue": 1, "gpu-sync": 1, "condition": 2, "join": 3, None: 3,
                  "gil": 3, "sleep": 4}


def _looks_like_dump(text: str) -> bool:
    # Literal-led searches (the regex engine skips to the literal; a "^" under re.M would not).
    t = "\n" + text
    return bool(("(idle)" in text or "(active" in text) and _TS_ANY_SPY.search(t)
                or " (LWP " in text and _TS_ANY_GDB.search(t)
                or "(most recent call first):" in text and _TS_ANY_FH.search(t)
                or "\n#0 " in t and _TS_ANY_BT.search(t))


def unique_threads(text: str) -> tuple[list[Thread], dict[tuple, bool], int]:
    """Every thread once (its latest sample), whether each stack stayed the same across the
    samples it was seen in, and the number of samples."""
    ss = [_merge_gdb(s) if s[0].tool == "gdb" else s for s in samples(split_threads(text))]
    latest: dict[tuple, Thread] = {}
    stacks: dict[tuple, list[list[tuple]]] = {}
    for s in ss:
        for t in s:
            key = (t.process, t.id)
            latest[key] = t
            stacks.setdefault(key, []).append([(f.function, f.file) for f in t.frames])
    unchanged = {k: all(st == v[0] for st in v[1:]) for k, v in stacks.items() if len(v) > 1}
    return list(latest.values()), unchanged, len(ss)


def _who(t: dict) -> str:
    return ("the backtrace's thread" if t["thread"] == "bt" else f"thread {t['thread']}") \
        + (f" \"{t['name']}\"" if t.get("name") not in (None, "current") else "")


def _at(f: Frame | None) -> str:
    return f"{f.function} ({os.path.basename(f.file or '')}:{f.line})" if f else "?"


def _suspect_line(rec: dict, v: Verdict) -> str:
    s = f"{_who(rec)} blocked in {_at(v.where)}" if v.where else f"{_who(rec)} blocked"
    if v.wait:
        s += f" waiting for {_WAIT_WORDS.get(v.wait, v.wait)}" + (f" `{v.on}`" if v.on else "")
    if v.holds:
        s += " while holding " + ", ".join(f"`{h}`" for h in v.holds)
    if v.unchanged:
        s += "; stack unchanged between samples"
    return s


def _verdict_findings(recs: list[dict], verdicts: list[Verdict], cycles: list[list[int]]) -> tuple[list[str], list[int]]:
    """(finding lines, suspect indexes): suspects (blocked in the user's code) first, cycles said,
    idle loops named as idle, threads unchanged between samples."""
    blocked = [i for i, v in enumerate(verdicts) if v.role == "blocked" and v.where is not None]
    in_cycle = [i for c in cycles for i in c]
    blocked.sort(key=lambda i: (i not in in_cycle, _SUSPECT_ORDER.get(verdicts[i].wait, 3)))
    out = [f"suspect: {_suspect_line(recs[i], verdicts[i])}" for i in blocked]
    for c in cycles:
        names = [recs[i].get("name") or recs[i]["thread"] for i in c]
        locks = [f"`{verdicts[i].on}`" for i in c]
        out.append("lock-order cycle (deadlock, read from the source lines: a guess): "
                   + " -> ".join(f"{n} waits for {lk}" for n, lk in zip(names, locks)) + f" -> {names[0]}")
    for i, v in enumerate(verdicts):
        if v.role == "idle-loop":
            out.append(f"idle: {_who(recs[i])} in {v.wait_frame} (an event loop"
                       + (", not the stuck spot)" if blocked else ")"))
    return out, blocked


def _main_summary(tool: str | None, threads: list[dict]) -> tuple[dict, str]:
    """The main thread (first after sorting) and the summary line the dump gave before suspects."""
    main = threads[0]
    who = _who(main) + (f" ({main['state']})" if main.get("state") else "")
    where = main["stuck_in"] or (main["frames"][0]["function"] if main["frames"] else None)
    summary = f"{tool or 'py-spy'}: {len(threads)} thread(s); {who} " + (f"is in {where}" if where else "shows no frame")
    if main.get("wait"):
        summary += f", waiting for {_WAIT_WORDS.get(main['wait'], main['wait'])}" \
            + (f" ({main['wait_frame']})" if main.get("wait_frame") else "")
    if not _is_main(tool, main) and main.get("wait") == "background":
        summary += "; no main thread in the dump"
    return main, summary


def _suspects_summary(tool: str | None, n_samples: int, recs: list[dict], verdicts: list[Verdict],
                      suspects: list[int], cycles: list) -> str:
    head = f"{tool}: {len(recs)} thread(s)" + (f" in {n_samples} samples" if n_samples > 1 else "")
    if cycles:  # (short: the run summary shows one line; the findings name the threads in full)
        c = [k[0] for k in cycles[0]]
        body = "lock-order deadlock: " + "; ".join(
            f"{_name(recs[i])}{_at(verdicts[i].where)} holds "
            + ", ".join(f"`{h}`" for h in verdicts[i].holds) + f", waits for `{verdicts[i].on}`" for i in c)
        rest = [i for i in suspects if i not in c]
    else:
        body, rest = "suspect: " + _suspect_line(recs[suspects[0]], verdicts[suspects[0]]), suspects[1:]
    if rest:
        body += f" (+{len(rest)} more blocked)"
    idle = [i for i, v in enumerate(verdicts) if v.role == "idle-loop"]
    if idle:
        body += "; idle " + ", ".join(f"{_name(recs[i])}in {verdicts[i].wait_frame}" for i in idle) \
            + " (an event loop, not the stuck spot)"
    return f"{head}; {body}"


def _name(t: dict) -> str:
    return f"\"{t['name']}\" " if t.get("name") not in (None, "current") else ""


def _is_main(tool: str | None, t: dict) -> bool:
    return t.get("name") in ("MainThread", "current") or (tool == "gdb" and t["thread"] == "1")


def parse_thread_stacks(text: str | bytes, roots: tuple[str, ...] = ()) -> dict | None:
    """Thread stacks of a process that hangs -- ``py-spy dump``, gdb ``thread apply all bt`` / ``py-bt``,
    faulthandler (several samples in one file) -- as the hang's verdict: every thread once, its role
    and what it waits for; the suspects (threads blocked in the user's code, lock cycles first) and
    the idle loops; the main thread. ``roots``: where relative source paths are looked for."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    if not _looks_like_dump(text):
        return None
    split, unchanged, n_samples = unique_threads(text)
    if not split:
        return None
    tool = split[0].tool
    verdicts = [classify(t, roots, unchanged.get((t.process, t.id))) for t in split]
    threads = []
    for t, v in zip(split, verdicts):
        rec = _ts_thread(t)
        rec.update(wait=v.wait, wait_frame=v.wait_frame, role=v.role, stuck_in=_ts_where(rec["frames"]),
                   unchanged=v.unchanged, on=v.on, holds=v.holds, line_text=v.source or None)
        rec["at"] = _at(v.where) if v.where is not None else None  # the user's frame it sits in
        rec["frames"] = rec["frames"][:12]
        threads.append(rec)
    cycles = lock_cycles({(i,): v for i, v in enumerate(verdicts)})
    findings, suspects = _verdict_findings(threads, verdicts, [[k[0] for k in c] for c in cycles])
    order = sorted(threads, key=lambda t: (not _is_main(tool, t), t["wait"] == "background", not t["frames"]))
    main, summary = _main_summary(tool, order)
    if suspects:  # the suspects are the answer; the main thread's spot only when nothing is blocked
        summary = _suspects_summary(tool, n_samples, threads, verdicts, suspects, cycles)
    groups: dict[str, list[str]] = {}
    for t in order:
        if t.get("wait"):
            groups.setdefault(t["wait"], []).append(str(t["thread"]))
    groups = dict(sorted(groups.items(), key=lambda kv: kv[0] == "background"))
    findings = [summary] + findings + [
        f"{len(ids)} thread(s) waiting for {_WAIT_WORDS.get(k, k)}: {', '.join(ids[:8])}" for k, ids in groups.items()]
    return {"kind": "thread-stacks", "tool": tool, "threads": order[:64], "count": len(threads), "samples": n_samples,
            "main": {k: main.get(k) for k in ("thread", "name", "state", "stuck_in", "wait", "wait_frame")},
            "suspects": [{k: threads[i].get(k) for k in ("thread", "name", "process", "at", "wait", "on",
                                                         "holds", "unchanged", "line_text")} for i in suspects],
            "cycles": [[threads[k[0]]["thread"] for k in c] for c in cycles], "idle_loops":
            [t["thread"] for t in threads if t["role"] == "idle-loop"], "summary": summary, "findings": findings}


def first_suspect(text: str, roots: tuple[str, ...] = ()) -> tuple[Thread, str] | None:
    """The thread the hang is most likely in (a lock cycle's first member, else the first thread
    blocked in the user's code) and why, for the stuck-process guess; None when none is blocked."""
    if not _looks_like_dump("\n" + text):
        return None
    split, unchanged, _ = unique_threads(text)
    verdicts = [classify(t, roots, unchanged.get((t.process, t.id))) for t in split]
    cycles = lock_cycles({(i,): v for i, v in enumerate(verdicts)})
    blocked = [i for i, v in enumerate(verdicts) if v.role == "blocked" and v.where is not None]
    if not blocked:
        return None
    if cycles:
        i = cycles[0][0][0]
        return split[i], f"{len(cycles[0])} threads in a lock-order cycle (read from the source lines)"
    blocked.sort(key=lambda i: _SUSPECT_ORDER.get(verdicts[i].wait, 3))
    v = verdicts[blocked[0]]
    return split[blocked[0]], f"{len(blocked)} thread(s) blocked in the program's code" + (
        f", this one waiting for {_WAIT_WORDS.get(v.wait, v.wait)}" if v.wait else "")
