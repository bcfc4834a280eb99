"""Issue 26 "Scale" and "Time": the logs/ freshness check, and what `tried` and `attempt add` cost at
10,000 and 100,000 attempts (N investigations of 10 attempts each, one mirror file per investigation),
beside `python -c pass` measured in the same run, interleaved (peer, tried, attempt add, peer, ...).

    PYTHONPATH=. python bench/freshness_bench.py [investigations=10000] [attempts=100000] [--keep DIR]
        [--against CHECKOUT]

Prints, per command and size, the median over 9 runs of CPU time (user + sys of the child) and of wall
time, each beside the bare interpreter's. Targets: at 100,000 attempts, `tried` and `attempt add` within
`python -c pass` + 150 ms of CPU; at 10,000 attempts, `tried` end to end within `python -c pass` + 100 ms
(wall); the MCP `tried` call (``mcp_server.tried`` in process, a warm server's per-call work) within
30 ms at load <= 1. The load average is printed with the figures: on a shared machine wall time is mostly
the run queue. Also the freshness check alone (``Records.sync`` with nothing changed) in process, at both
sizes. ``--against /work/main``: that checkout's `tried` and `attempt add` interleaved too (before / after
in one run), each on its own copy of the workspace. Bytecode and the kept regex forms (util/recache.py) are written first, as an installed package
has them.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
ENV = dict(os.environ, PYTHONPATH=str(REPO), DBGLOG_NO_EDITOR="1")
ENV.pop("PYTHONDONTWRITEBYTECODE", None)
DBGLOG = [sys.executable, "-c", "import sys; sys.argv[0] = 'dbglog'; from dbglog.entry import run; run()"]


def timed(cmd, cwd, env=None) -> tuple[float, float]:
    """(CPU ms user + sys, wall ms) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env or ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   stdin=subprocess.DEVNULL)  # (tried exits 1 for "not tried")
    wall = (time.perf_counter() - t) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000, wall


def cpu_ms(cmd, cwd, n=9) -> float:
    return statistics.median(timed(cmd, cwd)[0] for _ in range(n))


def build(root: Path, n_inv: int, n_att: int) -> str:
    """A workspace of ``n_inv`` investigations holding ``n_att`` attempts in all, files written once."""
    from dbglog.kb import mirror, sync
    from dbglog.core.model import Attempt, Investigation
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace

    subprocess.run(["git", "init", "-q", str(root)], check=True)
    ws = Workspace(root / ".dbglog").create()
    per = max(1, n_att // n_inv)
    words = ["nccl", "allreduce", "hang", "shm", "p2p", "ib", "timeout", "rank", "kernel", "replay", "ncu", "cache"]
    for i in range(n_inv):
        w = [words[(i * 7 + k) % len(words)] for k in range(3)]
        inv = Investigation(
            id=f"20261121-bug-{i:06d}", title=f"{w[0]} {w[1]} {w[2]} problem {i}", status="open",
            symptom=f"{w[0]} stalls under load {i}", environment="- GPU: H100", created="2026-11-21T09:00:00Z",
            updated="2026-11-21T09:00:00Z", labels=("works", "fails"),
            attempts=[Attempt(n, f"set {w[n % 3].upper()}_LEVEL={n} on {i}", f"{w[1]} path {n}",
                              f"{w[0].upper()}_X={n} python run.py --cfg {i}", "still hangs at step 3",
                              "not this knob", "failed") for n in range(1, per + 1)])
        (ws.logs_dir / f"{inv.id}.md").write_text(mirror.render(inv))
    recs = Records(ws)
    with recs.store.write():
        sync.reindex(recs.store, ws, force=True)
    recs.sync(force=True)
    recs.store.set_meta("current", "20261121-bug-000000")
    recs.close()
    return "20261121-bug-000000"


def check_ms(root: Path, n=9) -> float:
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace

    recs = Records(Workspace(root / ".dbglog"))
    out = []
    for _ in range(n):
        t = time.process_time()
        recs.sync()
        out.append((time.process_time() - t) * 1000)
    recs.close()
    return statistics.median(out)


IDEA = "NCCL_LEVEL=2 on the allreduce"
ADD = ["attempt", "add", "bench add", "--did", "x", "--result", "still hangs"]


def interleaved(root: Path, n: int = 9, against: str | None = None) -> dict[str, tuple[float, float]]:
    """Median (CPU, wall) of the peer, tried and attempt add, run in turn n times; with ``against``
    (another checkout), its tried and attempt add too, on a copy of the workspace."""
    runs: dict[str, list] = {"peer": [], "tried": [], "add": []}
    other = dict(ENV, PYTHONPATH=against) if against else None
    if against:
        copy = root.with_name(root.name + "-against")
        if not copy.exists():
            import shutil

            shutil.copytree(root, copy, symlinks=True)
        runs |= {"tried against": [], "add against": []}
        for cmd in (["list"], ["tried", IDEA], ADD):
            timed(DBGLOG + cmd, copy, other)  # (its bytecode and its own listing cache first)
    for _ in range(n):
        runs["peer"].append(timed([sys.executable, "-c", "pass"], root))
        runs["tried"].append(timed(DBGLOG + ["tried", IDEA], root))
        if against:
            runs["tried against"].append(timed(DBGLOG + ["tried", IDEA], copy, other))
        runs["add"].append(timed(DBGLOG + ADD, root))
        if against:
            runs["add against"].append(timed(DBGLOG + ADD, copy, other))
    return {k: (statistics.median(c for c, _ in v), statistics.median(w for _, w in v)) for k, v in runs.items()}


def mcp_ms(root: Path, n: int = 30) -> tuple[float, float, float]:
    """The MCP `tried` tool's per-call work in process (a warm server): median wall, p95 wall, median CPU."""
    from dbglog import mcp_server

    here = os.getcwd()
    os.chdir(root)
    try:
        for _ in range(3):
            mcp_server.tried(IDEA)  # warm: imports, the vocabulary, the workspace opened
        walls, cpus = [], []
        for _ in range(n):
            t, c = time.perf_counter(), time.process_time()
            mcp_server.tried(IDEA)
            walls.append((time.perf_counter() - t) * 1000)
            cpus.append((time.process_time() - c) * 1000)
    finally:
        os.chdir(here)
        local = getattr(mcp_server, "_local", None)
        if getattr(local, "recs", None) is not None:
            local.recs.close()
            local.recs = None
    walls.sort()
    return statistics.median(walls), walls[int(0.95 * (len(walls) - 1))], statistics.median(cpus)


def main(n_inv: int = 10000, n_att: int = 100000, keep: str | None = None, against: str | None = None) -> None:
    base = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="dbglog-fresh-"))
    sizes = [("small", max(1, n_inv // 10), max(1, n_att // 10)), ("big", n_inv, n_att)]
    rows = []
    try:
        for name, inv, att in sizes:
            root = base / name
            if not (root / ".dbglog").exists():
                root.mkdir(parents=True, exist_ok=True)
                build(root, inv, att)
            cpu_ms(DBGLOG + ["list"], root, n=2)  # .pyc files and the kept regex forms written
            cpu_ms(DBGLOG + ["tried", IDEA], root, n=1)
            cpu_ms(DBGLOG + ADD, root, n=1)
            check = check_ms(root)
            got = interleaved(root, against=against)
            rows.append((att, inv, check, got, mcp_ms(root)))
    finally:
        if not keep:
            import shutil

            shutil.rmtree(base, ignore_errors=True)
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} (1/5/15 min) at the end")
    print(f"{'':<44} {'CPU ms':>8} {'- peer':>8} {'wall ms':>9} {'- peer':>8}")
    for att, inv, check, got, (mcp_p50, mcp_p95, mcp_cpu) in rows:
        print(f"-- {att:,} attempts, {inv:,} investigations (mirror files)")
        print(f"{'freshness check, nothing changed (in process)':<44} {check:>8.1f}")
        pc, pw = got["peer"]
        for key, label in (("peer", "python -c pass (peer)"), ("tried", "dbglog tried"),
                           ("tried against", f"dbglog tried ({against})"), ("add", "dbglog attempt add"),
                           ("add against", f"dbglog attempt add ({against})")):
            if key not in got:
                continue
            c, w = got[key]
            rel = (f"{c - pc:>+8.1f}", f"{w - pw:>+8.1f}") if key != "peer" else ("", "")
            print(f"{label:<44} {c:>8.1f} {rel[0]:>8} {w:>9.1f} {rel[1]:>8}")
        print(f"{'MCP tried per call (in process) p50/p95 wall':<44} {mcp_cpu:>8.1f} {'':>8} "
              f"{mcp_p50:>9.1f} {'p95 ' + format(mcp_p95, '.1f'):>8}")


if __name__ == "__main__":
    args = sys.argv[1:]
    kept = args[args.index("--keep") + 1] if "--keep" in args else None
    against = args[args.index("--against") + 1] if "--against" in args else None
    nums = [int(a) for a in args if a.isdigit()]
    main(*nums[:2], keep=kept, against=against)
