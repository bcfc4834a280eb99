"""Issue 30: redaction of a run's output files, 200 MB by default: CPU time and peak memory of the
streaming redaction (``redact.redact_file``) beside its peer in the same run -- copying the file in
the same blocks (the least any rewrite costs) -- and the old whole-file ``redact.redact`` on a tenth
of the size (it held the file twice in memory and cost ~100x more; 200 MB of it would take minutes).

    PYTHONPATH=. python bench/redact_bench.py [MB=200]

The output is an ML-serving log: step lines, one in 50 with a tokens/s figure, a few NCCL lines, one
line in the first MB holding an HF token (so the file is rewritten), and an illegal-address line at
the end. Each measurement runs in its own process (CPU = user + sys, memory = peak RSS).
"""

from __future__ import annotations

import os
import random
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

WORKERS = {
    "copy": "import shutil,sys; shutil.copyfile(sys.argv[1], sys.argv[1] + '.copy')",
    "stream": "import sys; from dbglog.util import redact; redact.redact_file(sys.argv[1])",
    "whole": ("import sys; from dbglog.util import redact; p=sys.argv[1]; t=open(p,'rb').read()"
              ".decode('utf-8','surrogateescape'); c=redact.redact(t); open(p,'wb').write(c.encode('utf-8',"
              "'surrogateescape'))"),
}


def make(path: Path, mb: int) -> None:
    rnd = random.Random(7)
    target = mb << 20
    with open(path, "w") as f:
        f.write("INFO starting server with HF_TOKEN=hf_" + "aB3dE5gH7jK9mN1pQ3sT5vW7" + "\n")
        n = 0
        written = 0
        while written < target:
            n += 1
            if n % 50 == 0:
                line = f"INFO [metrics] step {n}: avg generation throughput {rnd.random() * 900:.1f} tokens/s\n"
            elif n % 997 == 0:
                line = f"node{n % 8}:1234:1234 [0] NCCL INFO Channel {n % 32:02d}/0 : 0[0] -> 1[1] via P2P/IPC\n"
            else:
                line = (f"[rank{n % 8}] step {n} loss={rnd.random():.5f} lr=3.0e-4 grad_norm={rnd.random() * 4:.3f} "
                        f"mem=61.2GiB t={n * 0.137:.2f}s\n")
            f.write(line)
            written += len(line)
        f.write("RuntimeError: CUDA error: an illegal memory access was encountered\n")


def measure(kind: str, path: Path) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([sys.executable, "-c", "import resource,sys\n" + WORKERS[kind] + "\n"
                        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)", str(path)],
                       env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return cpu, int(p.stdout.strip()) / 1024


def main(mb: int = 200) -> None:
    with tempfile.TemporaryDirectory() as d:
        big, small = Path(d) / "output", Path(d) / "small"
        make(big, mb)
        make(small, max(1, mb // 10))
        base_cpu, base_rss = measure("copy", Path(d) / "small")  # interpreter + a small copy
        rows = [(f"peer: copy the file ({mb} MB)", *measure("copy", big)),
                (f"streaming redaction ({mb} MB)", *measure("stream", big)),
                (f"old whole-file redaction ({max(1, mb // 10)} MB)", *measure("whole", small))]
        redacted = b"hf_aB3dE5" not in big.read_bytes()[:200]
    print(f"{'':<44} {'CPU s':>7} {'peak RSS MB':>12}")
    for name, cpu, rss in rows:
        print(f"{name:<44} {cpu:>7.2f} {rss:>12.1f}")
    print(f"{'(interpreter + tiny copy, for reference)':<44} {base_cpu:>7.2f} {base_rss:>12.1f}")
    print(f"secret redacted in the streamed file: {redacted}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:2]))
