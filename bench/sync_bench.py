"""Mirror upkeep at scale: no-op staleness check and reindex over N canonical files (default 10,000).

    PYTHONPATH=. python bench/sync_bench.py [N]
"""

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dbglog.kb import mirror, sync
from dbglog.core.model import Attempt, Difference, Investigation, NextStep
from dbglog.kb.records import Records
from dbglog.kb.store import Store
from dbglog.util.workspace import Workspace


def make(i: int) -> Investigation:
    return Investigation(
        id=f"20261121-hang-in-kernel-{i}-{i % 1296:04d}"[:60].replace("_", "-"),
        title=f"Hang in reduce kernel {i} under ncu", status="open",
        symptom=f"`ncu --set full python bench.py --cfg {i}` hangs at 0%.",
        environment="- GPU: H100\n- CUDA 12.4", created="2026-11-21T09:00:00Z", updated="2026-11-21T09:00:00Z",
        labels=("Repro (works)", "Actual (hangs)"),
        attempts=[Attempt(n, f"try {n}", "replay interacts with mbarriers", f"ncu --replay-mode {n}",
                          "Still hangs at 0%", "kernel replay is involved", "failed") for n in (1, 2, 3)],
        differences=[Difference(1, "Replay mode", "application", "kernel", "culprit")],
        next_steps=[NextStep(1, "cuda-gdb attach", "see which warp waits")])


def timeit(fn, repeat=7):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(n: int = 10000) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        ws = Workspace(root / ".dbglog").create()
        t0 = time.perf_counter()
        for i in range(n):
            (ws.logs_dir / f"bug-{i:05d}.md").write_text(mirror.render(make(i)))
        t_gen = time.perf_counter() - t0
        recs = Records(ws)
        t0 = time.perf_counter()
        with recs.store.write():
            sync.reindex(recs.store, ws, force=True)
        t_reindex = time.perf_counter() - t0
        recs.sync(force=True)  # remember HEAD, baseline everything
        store = recs.store
        t_stale = timeit(lambda: sync.is_stale(store, ws))
        t_head = timeit(lambda: sync.head_moved(store, ws))
        t_noop = timeit(lambda: recs.sync())
        t_rehash = timeit(lambda: recs.sync(force=True), repeat=3)
        # One edited file among n: stat pass finds it, only it is read, hashed and parsed.
        f = ws.logs_dir / "bug-00007.md"
        f.write_text(f.read_text().replace("Still hangs at 0%", "Still hangs at 1%", 1))
        t0 = time.perf_counter()
        rep = recs.sync()
        t_one = time.perf_counter() - t0
        assert rep.imported == ["logs/bug-00007.md"], rep
        recs.close()
        t_open = timeit(lambda: Store(ws.db_path).close())
        print(f"{'mirror files':<44}{n:>10}")
        print(f"{'generate (render + write)':<44}{t_gen:>10.2f} s")
        print(f"{'reindex --force (parse all, rebuild DB)':<44}{t_reindex:>10.2f} s  ({n / t_reindex:.0f} files/s)")
        print(f"{'no-op staleness check: stat pass':<44}{t_stale * 1000:>10.1f} ms")
        print(f"{'no-op staleness check: git HEAD read':<44}{t_head * 1000:>10.2f} ms")
        print(f"{'no-op Records.sync() (HEAD + stat pass)':<44}{t_noop * 1000:>10.1f} ms")
        print(f"{'forced sync (hash every file, parse none)':<44}{t_rehash * 1000:>10.1f} ms")
        print(f"{'sync after editing 1 of N files':<44}{t_one * 1000:>10.1f} ms")
        print(f"{'open store (connect + pragmas)':<44}{t_open * 1000:>10.2f} ms")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10000)
