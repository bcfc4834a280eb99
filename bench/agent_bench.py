"""Benchmark: what dbglog costs a coding agent, beside a bare interpreter in the same run.

    python bench/agent_bench.py [--sizes small,10000] [--n 11]

End to end, as the installed `dbglog` executable runs (``dbglog.entry``), with bytecode compiled
first (as pip leaves an installed package): ``python -c pass``; ``dbglog --help``; ``dbglog tried``;
``dbglog attempt add``; ``dbglog show``; ``dbglog hook pre-command`` (a command that matches a failed
attempt, one that does not, and JSON from Claude Code); ``dbglog hook prompt`` (a debugging prompt,
and one that is not); ``dbglog hook session-start``. Medians of wall time; the machine's load is
printed with them (a shared machine doubles every figure at load ~5). And per call over one long-lived ``dbglog mcp`` server driven by the MCP SDK's
stdio client (``tried``, ``search``, ``show``, ``add_attempt``): an agent pays the start-up once.

Sizes: ``small`` (3 investigations, ~15 attempts, a few supervised runs) and N attempts generated as
``bench/search_bench.py`` does (10 per investigation, ~1 KB of free sections each, markdown mirror).
Not part of the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
ENV = dict(os.environ, PYTHONPATH=str(REPO), DBGLOG_NO_EDITOR="1")
ENV.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its .pyc files
ENV.pop("DBGLOG_DIR", None)
DBGLOG = [sys.executable, "-c", "import sys; sys.argv[0] = 'dbglog'; from dbglog.entry import run; run()"]

FAILED_CMD = "NCCL_P2P_DISABLE=1 torchrun --nproc_per_node 8 train.py --steps 10"
OTHER_CMD = "python eval.py --ckpt last.pt"
DEBUG_PROMPT = "The 8-GPU NCCL all_reduce hangs at step 3 again with a watchdog timeout; can you debug it?"
PLAIN_PROMPT = "Add a section about installation to the README"


def timed(cmd, cwd, n, stdin=None) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, env=ENV, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       text=True, check=False)
        out.append((time.perf_counter() - t) * 1000)
    return out


def run(cmd, cwd, **kw):
    return subprocess.run(DBGLOG + cmd, cwd=cwd, env=ENV, capture_output=True, text=True, **kw)


def git_init(root: Path) -> None:
    """A real repository, as a user has one (dbglog registers its merge driver there once)."""
    try:
        subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        (root / ".git").mkdir()


def build_small(root: Path) -> None:
    git_init(root)
    run(["new", "NCCL all_reduce hangs on 8 GPUs", "--symptom", "rank 3 stalls at step 3", "--no-env"], root)
    for _i, (title, did, result) in enumerate([
            ("Disable P2P", FAILED_CMD, "Still hangs"), ("Tree algorithm", "NCCL_ALGO=Tree torchrun train.py",
                                                         "hung once, passed once"),
            ("Raise timeout", "TORCH_NCCL_BLOCKING_WAIT=1 torchrun train.py --timeout 7200", "Still hangs"),
            ("IB off", "NCCL_IB_DISABLE=1 torchrun train.py", "Still hangs"),
            ("Smaller world", "torchrun --nproc_per_node 4 train.py", "works")]):
        run(["attempt", "add", title, "--did", did, "--result", result], root)
    run(["new", "Loss goes NaN with bf16 after 10k steps", "--no-env"], root)
    for title in ("Lower LR", "fp32 softmax", "Grad clipping", "Disable fused adam"):
        run(["attempt", "add", title, "--did", f"python train.py --{title.lower().replace(' ', '-')}",
             "--result", "NaN at 10k"], root)
    run(["new", "ncu hangs on TMA kernels", "--no-env"], root)
    for mode in ("kernel", "application", "range"):
        run(["attempt", "add", f"{mode} replay", "--did", f"ncu --replay-mode {mode} python bench.py",
             "--result", "hangs at 0%"], root)
    (root / "fail.py").write_text("import sys; print('RuntimeError: CUDA error: out of memory'); sys.exit(1)\n")
    for _ in range(3):
        run(["run", "-q", "--", sys.executable, "fail.py"], root)


def build_large(root: Path, n: int) -> None:
    from search_bench import Gen, build

    git_init(root)
    recs = build(root, n, Gen())
    inv = recs.store.ids()[0]
    recs.store.set_meta("current", inv)
    recs.add_attempt(inv, title="Disable P2P", did=FAILED_CMD, result="Still hangs", outcome="failed")
    recs.close()


async def mcp_calls(cwd: Path, n: int) -> dict[str, list[float]]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=DBGLOG[0], args=DBGLOG[1:] + ["mcp"], cwd=str(cwd), env=ENV)
    out: dict[str, list[float]] = {}
    async with stdio_client(params, errlog=open(os.devnull, "w")) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        calls = [("tried", {"idea": "disable NCCL P2P"}), ("search", {"query": "watchdog timeout allreduce"}),
                 ("show", {}), ("add_attempt", {"title": "bench", "did": "x", "result": "still hangs"})]
        for name, args in calls:
            await s.call_tool(name, args)  # warm-up (first import of search, jinja2, ...)
            ts = []
            for _ in range(n):
                t = time.perf_counter()
                res = await s.call_tool(name, args)
                ts.append((time.perf_counter() - t) * 1000)
                assert not res.is_error, res.content
            out[name] = ts
    return out


def measure(label: str, root: Path, n: int) -> list[tuple[str, float, float]]:
    rows = []

    def add(name, ms):
        rows.append((f"{name} [{label}]", statistics.median(ms), max(ms)))
        print(f"  {rows[-1][0]:<58} {rows[-1][1]:8.1f} {rows[-1][2]:8.1f}", flush=True)

    timed(DBGLOG + ["list"], root, 2)  # warm-up: page cache, .pyc files
    add("python -c pass (peer)", timed([sys.executable, "-c", "pass"], root, n))
    add("dbglog --help", timed(DBGLOG + ["--help"], root, n))
    add("dbglog tried 'disable NCCL P2P'", timed(DBGLOG + ["tried", "disable NCCL P2P"], root, n))
    add("dbglog show", timed(DBGLOG + ["show"], root, n))
    add("dbglog attempt add", timed(DBGLOG + ["attempt", "add", "bench", "--did", "y", "--result", "still hangs"],
                                    root, n))
    add("dbglog hook pre-command (matches an attempt)", timed(DBGLOG + ["hook", "pre-command"], root, n, FAILED_CMD))
    add("dbglog hook pre-command (no match)", timed(DBGLOG + ["hook", "pre-command"], root, n, OTHER_CMD))
    claude = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": str(root),
                         "tool_input": {"command": FAILED_CMD}})
    add("dbglog hook pre-command (Claude Code JSON)", timed(DBGLOG + ["hook", "pre-command"], root, n, claude))
    add("dbglog hook prompt (debugging task)", timed(DBGLOG + ["hook", "prompt"], root, n, DEBUG_PROMPT))
    add("dbglog hook prompt (not a debugging task)", timed(DBGLOG + ["hook", "prompt"], root, n, PLAIN_PROMPT))
    start = json.dumps({"hook_event_name": "SessionStart", "source": "startup", "cwd": str(root)})
    add("dbglog hook session-start (Claude Code JSON)", timed(DBGLOG + ["hook", "session-start"], root, n, start))
    try:
        per_call = asyncio.run(mcp_calls(root, n))
    except ImportError:
        print("  (mcp not installed: pip install 'dbglog[mcp]' to time the MCP server)")
        per_call = {}
    for name, ms in per_call.items():
        add(f"MCP call {name} (long-lived dbglog mcp)", ms)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="small,10000")
    ap.add_argument("--n", type=int, default=11, help="runs per measurement (median reported)")
    a = ap.parse_args()
    compileall.compile_dir(str(REPO / "dbglog"), quiet=1)
    print(f"{'operation':<60} {'median ms':>8} {'max ms':>8}")
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    for size in a.sizes.split(","):
        with tempfile.TemporaryDirectory(prefix="dbglog-agent-bench-") as d:
            root = Path(d)
            if size == "small":
                build_small(root)
                label = "small workspace"
            else:
                build_large(root, int(size))
                label = f"{int(size):,} attempts"
            measure(label, root, a.n)


if __name__ == "__main__":
    main()
