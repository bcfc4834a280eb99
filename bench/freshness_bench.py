"""Issue 26 "Scale": the logs/ freshness check and what `tried` and `attempt add` cost at 100,000
attempts (N investigations of 100,000/N attempts each, one mirror file per investigation), in CPU time
beside `python -c pass` measured in the same run.

    PYTHONPATH=. python bench/freshness_bench.py [investigations=10000] [attempts=100000]

Prints, per command, the median CPU time (user + sys of the child) over 9 runs, and the bare
interpreter's; the target is command <= python -c pass + 150 ms. Also the freshness check alone
(``Records.sync`` with nothing changed) in process, at the size given and at a tenth of it.
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


def cpu_ms(cmd, cwd, n=9) -> float:
    out = []
    for _ in range(n):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       stdin=subprocess.DEVNULL)  # (tried exits 1 for "not tried")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        out.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    return statistics.median(out)


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


def main(n_inv: int = 10000, n_att: int = 100000) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as d:
        small = Path(d) / "small"
        big = Path(d) / "big"
        small.mkdir()
        big.mkdir()
        build(small, max(1, n_inv // 10), max(1, n_att // 10))
        build(big, n_inv, n_att)
        cpu_ms(DBGLOG + ["list"], big, n=2)  # .pyc files written
        rows.append((f"freshness check, nothing changed ({n_inv // 10} files)", check_ms(small)))
        rows.append((f"freshness check, nothing changed ({n_inv} files)", check_ms(big)))
        peer = cpu_ms([sys.executable, "-c", "pass"], big)
        rows.append(("python -c pass (peer)", peer))
        rows.append((f"tried @ {n_att} attempts", cpu_ms(DBGLOG + ["tried", "NCCL_LEVEL=2 on the allreduce"], big)))
        rows.append((f"attempt add @ {n_att} attempts", cpu_ms(
            DBGLOG + ["attempt", "add", "bench add", "--did", "x", "--result", "still hangs"], big)))
    print(f"{'CPU time (median of 9)':<52} {'ms':>8} {'- peer':>8}")
    for name, ms in rows:
        rel = f"{ms - peer:>8.1f}" if "peer" not in name and "freshness" not in name else ""
        print(f"{name:<52} {ms:>8.1f} {rel}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
