"""One splitter of thread dumps (issue 13): ``evidence.split_threads`` reads py-spy, gdb (bt and
py-bt) and faulthandler dumps for both ``evidence.parse_thread_stacks`` and the stuck-process guess
(``captures.main_frames``). ``fixtures/thread_dumps/before_split_threads.json`` holds what the two
parsers said before they shared it; they must say the same, except where one of them was blind
to a form the other read (listed in ``CHANGED`` with the new reading asserted)."""

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dbglog.run import captures
from dbglog.diagnose import evidence as E

DUMPS = Path(__file__).parent / "fixtures" / "thread_dumps"
BEFORE = json.loads((DUMPS / "before_split_threads.json").read_text())

# (dump, reader) -> why the shared splitter reads it differently from the old copy.
CHANGED = {
    ("gdb_capture_pybt_and_bt.txt", "stack_threads"): "gdb's `<signal handler called>` frame is kept",
    ("gdb_capture_pybt_and_bt.txt", "thread_stacks"): "evidence reads py-bt frames (`line N, in f`)",
    ("gdb_core_lwp_only.txt", "thread_stacks"): "evidence reads a `Thread 2 (LWP 812):` header",
    ("mixed_noise.txt", "stack_threads"): "captures reads an upper-case faulthandler thread id",
    ("pyspy_hex_native.txt", "main_frames"): "captures reads py-spy's hex thread ids",
    ("pyspy_hex_native.txt", "stack_threads"): "captures reads py-spy's hex thread ids",
    ("pyspy_hex_native.txt", "thread_stacks"): "evidence reads py-spy frames whose path has a space",
    ("faulthandler_deep.txt", "thread_stacks"): "a library-only thread in Condition.wait waits for a condition",
    ("mixed_noise.txt", "thread_stacks"): "the summary names the thread blocked in the user's code first",
}


def read(name: str, reader: str):
    text = (DUMPS / name).read_text()
    if reader == "main_frames":
        return captures.main_frames(text)
    if reader == "stack_threads":
        return [[label, frames] for label, frames in captures.stack_threads(text)]
    got = json.loads(json.dumps(E.parse_thread_stacks(text)))
    if got:  # the keys the reader gave before the hang verdict (issue 28) added roles and suspects
        got = {k: v for k, v in got.items() if k in ("kind", "tool", "count", "main", "summary", "findings", "threads")}
        got["threads"] = [{k: v for k, v in t.items() if k not in _VERDICT_KEYS} for t in got["threads"]]
        got["findings"] = [f for f in got["findings"] if not f.startswith(("suspect: ", "idle: ", "lock-order"))]
    return got


_VERDICT_KEYS = {"role", "unchanged", "on", "holds", "line_text", "at"}


@pytest.mark.parametrize("name,reader", [(n, r) for n in sorted(BEFORE) for r in BEFORE[n]])
def test_the_shared_splitter_reads_the_fixture_dumps_as_before(name, reader):
    if (name, reader) in CHANGED:
        assert read(name, reader) != BEFORE[name][reader], f"no longer changed: {CHANGED[name, reader]}"
    else:
        assert read(name, reader) == BEFORE[name][reader]


def test_the_forms_one_old_parser_missed():
    gdb = (DUMPS / "gdb_capture_pybt_and_bt.txt").read_text()
    assert "<signal handler called>" in captures.stack_threads(gdb)[2][1]
    ev = E.parse_thread_stacks(gdb)
    assert ev["main"]["stuck_in"] == "item (_tensor.py:1050)" and ev["main"]["wait"] == "gpu-sync"
    assert E.parse_thread_stacks((DUMPS / "gdb_core_lwp_only.txt").read_text())["count"] == 2
    noise = (DUMPS / "mixed_noise.txt").read_text()
    assert [fr for _, fr in captures.stack_threads(noise)][1] == ["f (x.py:3)"]
    spy = (DUMPS / "pyspy_hex_native.txt").read_text()
    assert captures.main_frames(spy)[2:] == ["step (train.py:42)", "<module> (train.py:80)"]
    main = E.parse_thread_stacks(spy)["threads"][0]
    assert main["frames"][2] == {"function": "step", "file": "train.py", "line": "42"}


def test_records_of_each_form():
    spy, idle, bare = E.split_threads((DUMPS / "pyspy_hex_native.txt").read_text())
    assert (spy.tool, spy.id, spy.name, spy.state, spy.process) == ("py-spy", "0x7F0C8C91E740", "MainThread",
                                                                    "active+gil", 31337)
    assert (idle.state, bare.name, bare.state) == ("idle", None, "idle")
    assert spy.frames[0] == E.Frame("cudaStreamSynchronize", "libcudart.so.11.0", None)
    assert spy.frames[2] == E.Frame("step", "/home/me/my project/train.py", "42")
    threads = E.split_threads((DUMPS / "gdb_capture_pybt_and_bt.txt").read_text())
    assert [(t.id, t.lwp, len(t.frames)) for t in threads] == [("2", 4250, 0), ("1", 4242, 3), ("2", 4250, 6),
                                                                ("1", 4242, 7)]
    assert threads[1].frames[0] == E.Frame("item", "/opt/venv/lib/python3.11/site-packages/torch/_tensor.py", "1050")
    assert threads[3].frames[3] == E.Frame("at::native::_local_scalar_dense_cuda(at::Tensor const&)",
                                           "/opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so",
                                           None, native=True)
    # the stuck-process guess shows it without the C++ signature
    assert captures.stack_threads((DUMPS / "gdb_capture_pybt_and_bt.txt").read_text())[2][1][3] == \
        "at::native::_local_scalar_dense_cuda (libtorch_cuda.so)"


def test_frames_are_capped_for_evidence_only():
    deep = (DUMPS / "faulthandler_deep.txt").read_text()
    assert [len(t.frames) for t in E.split_threads(deep)] == [2, 40]
    assert [len(t.frames) for t in E.split_threads(deep, max_frames=None)] == [2, 56]
    assert len(captures.main_frames(deep)) == 56
    assert E.split_threads(deep)[1].current and E.parse_thread_stacks(deep)["main"]["name"] == "current"


# --- property: whatever threads a tool prints, the splitter reads them back ---------------------

NAME = st.from_regex(r"[A-Za-z_<][A-Za-z0-9_>]{0,10}", fullmatch=True)
PATH = st.from_regex(r"/[a-z]{1,5}( [a-z]{1,4})?/[a-z_]{1,8}\.py", fullmatch=True)
PYFRAME = st.tuples(NAME, PATH, st.integers(1, 99999))
CFRAME = st.tuples(st.from_regex(r"[a-z_][a-z0-9_]{0,8}(::[a-z_]{1,6})?", fullmatch=True),
                   st.sampled_from(["at ./nptl/futex.c:57", "from /lib/libc.so.6", ""]), st.booleans())


def _render(tool: str, tid: int, name: str, frames: list) -> tuple[str, list]:
    """(the dump text of one thread as ``tool`` prints it, the frames the splitter must read)."""
    if tool == "faulthandler":
        head = f"Thread 0x{tid:016x} (most recent call first):"
        return "\n".join([head] + [f'  File "{p}", line {n} in {f}' for f, p, n in frames]), \
            [E.Frame(f, p, str(n)) for f, p, n in frames]
    if tool == "py-spy":
        head = f'Thread {tid} (idle): "{name}"'
        return "\n".join([head] + [f"    {f} ({p}:{n})" for f, p, n in frames]), \
            [E.Frame(f, p, str(n)) for f, p, n in frames]
    head = f'Thread {tid % 500 + 1} (Thread 0x{tid:x} (LWP {tid}) "{name}"):'
    if tool == "py-bt":  # CPython's gdb helpers: a traceback, the source line under each frame
        lines = [head, "Traceback (most recent call first):"]
        for f, p, n in frames:
            lines += [f'  File "{p}", line {n}, in {f}', f"    {f}(x) (y.py:{n})"]
        return "\n".join(lines), [E.Frame(f, p, str(n)) for f, p, n in frames]
    lines, want = [head], []
    for i, (f, where, addr) in enumerate(frames):
        lines.append(f"#{i:<2} " + (f"0x{i + 4096:016x} in " if addr else "") + f"{f} (a=1, b=<optimized out>)"
                     + (f" {where}" if where else ""))
        want.append(E.Frame(f, where.split(" ", 1)[1] if where else None, None, native=True))
    return "\n".join(lines), want


@settings(max_examples=60, deadline=None)
@given(st.data(), st.sampled_from(["faulthandler", "py-spy", "py-bt", "bt"]), st.integers(0, 3))
def test_split_threads_reads_back_what_each_tool_prints(data, tool, n):
    blocks, want = [], []
    for i in range(n):
        frames = data.draw(st.lists(CFRAME if tool == "bt" else PYFRAME, max_size=6))
        name = data.draw(NAME)
        text, fr = _render(tool, 1000 + i, name, frames)
        blocks.append(text)
        want.append(fr)
    got = E.split_threads("\n\n".join(blocks) + "\n")
    assert [t.frames for t in got] == want
    # the stuck-process guess sees the same threads, those with frames
    assert len(captures.stack_threads("\n\n".join(blocks))) == sum(1 for fr in want if fr)
