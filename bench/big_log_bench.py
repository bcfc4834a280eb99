"""Issue 28: `dbglog signature test` on a big log, beside `grep -E` over the same file in the same run.

Generates a log of realistic noise (training steps, NCCL INFO chatter, progress bars, warnings, eval
lines saying "error rate") with a real failure near the end -- an NCCL watchdog timeout, the
c10::DistBackendError it throws and the abort -- followed by more noise, as when other ranks go on
printing. Then runs, each as its own process, measured with wait4's rusage:
  dbglog   `dbglog signature test FILE --json` (must name the cause)
  grep -E  `grep -cE PATTERN FILE` with a pattern of the common failure lines
and prints peak RSS and CPU (user+sys) of each, and dbglog's CPU as a multiple of grep's.
Targets (issue 28): peak RSS <= 80 MB, CPU <= 4x grep's.

usage: python bench/big_log_bench.py [--mb 200] [--repeat 3] [--keep PATH]
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

GREP_PATTERN = ("Error|error:|Traceback|Exception|NCCL WARN|terminate called|Aborted|Segmentation fault|"
                "out of memory|illegal memory access|Killed|watchdog|FAILED|core dumped|Timeout")
# Real-format lines (PyTorch ProcessGroupNCCL's watchdog, as printed by torchrun with --tee/log prefix).
FAILURE = (
    "[rank3]:[E1121 09:41:07.201934 1394 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective "
    "operation timeout: WorkNCCL(SeqNum=88412, OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, "
    "Timeout(ms)=600000) ran for 600028 milliseconds before timing out.\n"
    "[rank3]:[E1121 09:41:07.202211 1394 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 3] "
    "Exception (either an error or timeout) detected by watchdog at work: 88412, last enqueued NCCL work: "
    "88412, last completed NCCL work: 88411.\n"
    "[rank3]:[E1121 09:41:07.202390 1394 ProcessGroupNCCL.cpp:630] [Rank 3] Some NCCL operations have failed "
    "or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on "
    "corrupted/incomplete data.\n"
    "terminate called after throwing an instance of 'c10::DistBackendError'\n"
    "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread terminated with "
    "exception: [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=88412, "
    "OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, Timeout(ms)=600000) ran for 600028 milliseconds "
    "before timing out.\n"
)
EXPECT = "nccl.watchdog_timeout"

TEMPLATES = [
    "[rank{r}]:INFO 11-21 09:12:{s:02d} [trainer.py:700] step {i} loss={l:.4f} lr=1e-4 throughput {t:.1f} tokens/s",
    "node1:{p}:{q} [{r}] NCCL INFO Channel {c:02d}/04 :    0   1   2   3",
    "Processed prompts:  {pc}%|#####     | {i}/100000 [00:{s:02d}<00:10, 12.34it/s]",
    "/usr/lib/python3.10/site-packages/torch/utils/checkpoint.py:91: UserWarning: None of the inputs have "
    "requires_grad=True. Gradients will be None",
    "2026-11-21 10:00:{s:02d},123 - trainer - INFO - epoch {i} eval accuracy {l:.3f} error rate {t:.2f}",
    "[rank{r}]:[W1121 09:12:{s:02d}.{u:06d} {p} ProcessGroupNCCL.cpp:4561] [PG ID 0 PG GUID 0 Rank {r}] "
    "using GPU {r} to perform barrier as devices used by this process are currently unknown.",
]


def noise(rnd: random.Random, i: int) -> str:
    return rnd.choice(TEMPLATES).format(i=i, s=i % 60, l=rnd.random(), t=rnd.random() * 1000, pc=i % 100,
                                        r=rnd.randrange(8), p=1394 + rnd.randrange(8), q=rnd.randrange(99999),
                                        c=i % 32, u=rnd.randrange(10 ** 6))


def make(path: Path, size: int) -> int:
    """Write the log; return the 1-based line of the failure's first line."""
    rnd = random.Random(28)
    at = int(size * 0.97)
    written, i, fail_line = 0, 0, 0
    with open(path, "w") as f:
        while written < size:
            if not fail_line and written >= at:
                fail_line = i + 1
                f.write(FAILURE)
                i += FAILURE.count("\n")
                written += len(FAILURE)
                continue
            line = noise(rnd, i) + "\n"
            f.write(line)
            written += len(line)
            i += 1
    return fail_line


def measure(argv: list[str]) -> tuple[float, float, str]:
    """CPU seconds (user+sys), peak RSS in MB, stdout of one run."""
    with tempfile.TemporaryFile() as out:
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL)
        _, _, ru = os.wait4(p.pid, 0)
        p.returncode = 0
        out.seek(0)
        text = out.read().decode()
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, text


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", help="write the log here and keep it")
    a = ap.parse_args()
    grep = shutil.which("grep")
    dbglog = shutil.which("dbglog") or sys.exit("dbglog is not on PATH (activate the venv)")
    tmp = tempfile.mkdtemp()
    path = Path(a.keep) if a.keep else Path(tmp) / "big.log"
    try:
        fail_line = make(path, a.mb << 20)
        print(f"log: {path.stat().st_size / 2**20:.0f} MB, failure at line {fail_line} of "
              f"{sum(1 for _ in open(path, 'rb'))}")
        rows = []
        for _ in range(a.repeat):  # interleaved, so both see the same machine load
            d_cpu, d_rss, out = measure([dbglog, "signature", "test", str(path), "--json"])
            g_cpu, g_rss, _ = measure([grep, "-cE", GREP_PATTERN, str(path)])
            sig = json.loads(out)["signature"] or {}
            named = sig.get("name") == EXPECT and sig.get("line_no") == fail_line
            rows.append((d_cpu, d_rss, g_cpu, g_rss, named))
            print(f"dbglog: CPU {d_cpu:.2f} s, peak RSS {d_rss:.1f} MB, named {sig.get('name')} at line "
                  f"{sig.get('line_no')} ({'right' if named else 'WRONG'}) | grep -E: CPU {g_cpu:.2f} s, peak RSS "
                  f"{g_rss:.1f} MB | CPU ratio {d_cpu / g_cpu:.2f}x")
        rows.sort(key=lambda r: r[0] / r[2])
        med = rows[len(rows) // 2]
        print(f"median: dbglog {med[0]:.2f} s / {med[1]:.1f} MB, grep -E {med[2]:.2f} s / {med[3]:.1f} MB, "
              f"ratio {med[0] / med[2]:.2f}x; cause named in {sum(r[4] for r in rows)}/{len(rows)} runs "
              f"(targets: <= 80 MB, <= 4x)")
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
