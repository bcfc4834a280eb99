"""Signatures: speed of `dbglog signature test` on a big log, and accuracy on held-out real logs.

Speed (default): a 100 MB log end to end (process start, read, classify, print), in two shapes, the
failure at the very end of each:
  repetitive  training steps, NCCL INFO chatter, progress bars, warnings (what big logs look like)
  unique      every line different even without its digits (the worst case for the line grouping)

Accuracy (--accuracy): tests/corpus/logs/index.json split by *source project* (the repository or
site of the entry's `source`), a group held out when sha256("issue28:" + group) % 3 == 0. The split
was fixed and committed before the held-out logs were read; work on the catalog looks at the study
half only. Logs added after the split (their note says so) are a third line, never held-out figures. Printed beside the peer: the catalog at --peer REV (default: the commit before the
diagnose/ work), on the same logs in the same run.

usage: python bench/signature_bench.py [--mb 100] [--repeat 3]
       python bench/signature_bench.py --accuracy [--peer REV] [--show-misses study]
"""
import argparse
import hashlib
import importlib.util
import json
import re
import os
import random
import statistics
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TAIL = ("[rank3]:[E ProcessGroupNCCL.cpp:1537] [PG 0 Rank 3] Process group watchdog thread terminated with exception: "
        "CUDA error: an illegal memory access was encountered\n"
        "terminate called after throwing an instance of 'c10::DistBackendError'\nAborted (core dumped)\n")


def make(path: Path, shape: str, size: int) -> None:
    rnd = random.Random(1)
    tmpl = ["INFO 11-21 09:12:{s:02d} [core.py:700] step {i} loss={l:.4f} lr=1e-4 throughput {t:.1f} tokens/s",
            "node1:1234:5678 [0] NCCL INFO Channel {i:02d}/04 :    0   1   2   3",
            "Processed prompts:  {p}%|#####     | {i}/1000 [00:{s:02d}<00:10, 12.34it/s]",
            "/usr/lib/python3.10/site-packages/torch/utils/checkpoint.py:91: UserWarning: None of the inputs have "
            "requires_grad=True. Gradients will be None",
            "2026-01-01 10:00:{s:02d},123 - trainer - INFO - epoch {i} eval accuracy {l:.3f} error rate {t:.2f}"]
    words = ["alpha", "beta", "gamma", "delta", "loss", "step", "token", "rank", "queue", "kernel", "grid", "warp"]
    with open(path, "w") as f:
        written, i = 0, 0
        while written < size:
            if shape == "repetitive":
                line = rnd.choice(tmpl).format(i=i, s=i % 60, l=rnd.random(), t=rnd.random() * 1000, p=i % 100)
            else:
                line = " ".join(rnd.choice(words) + rnd.choice(string.ascii_letters[6:26]) * rnd.randint(1, 3)
                                for _ in range(12))
            f.write(line + "\n")
            written += len(line) + 1
            i += 1
        f.write(TAIL)


ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus" / "logs"
PEER_REV = "bee1e3c"  # main before issue 28's diagnose/ work


def source_group(source: str) -> str:
    """The project a log came from: owner/name of a GitHub address, else the site, else the text."""
    m = re.search(r"github\.com/([\w.-]+/[\w.-]+)", source)
    if m:
        return m.group(1).lower()
    m = re.match(r"https?://([^/\s]+)", source)
    return (m.group(1) if m else (source.split() or ["?"])[0]).lower()


def held_out(group: str) -> bool:
    return int(hashlib.sha256(("issue28:" + group).encode()).hexdigest(), 16) % 3 == 0


def split() -> dict[str, list[dict]]:
    index = json.loads((CORPUS / "index.json").read_text(encoding="utf-8"))
    out: dict[str, list[dict]] = {"study": [], "held-out": [], "added": []}
    for e in index:
        if e.get("note", "").startswith("added after the split"):
            out["added"].append(e)  # written while studying: never counted as held-out evidence
        else:
            out["held-out" if held_out(source_group(e["source"])) else "study"].append(e)
    return out


def _peer_classify(rev: str):
    """The catalog as it was at REV, loaded from git beside this one (same process, same logs)."""
    for path in ("dbglog/diagnose/signatures.py", "dbglog/run/signatures.py"):
        p = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"], capture_output=True, text=True)
        if p.returncode == 0:
            break
    else:
        raise SystemExit(f"--peer {rev}: no signatures module at that revision")
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(p.stdout)
    spec = importlib.util.spec_from_file_location("peer_signatures", f.name)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["peer_signatures"] = mod  # (dataclasses look their module up there)
    spec.loader.exec_module(mod)
    os.unlink(f.name)
    return mod.classify_text


def _score(classify, entries: list[dict]) -> tuple[int, list[str]]:
    misses = []
    for e in entries:
        m = classify((CORPUS / e["file"]).read_bytes())
        got = m.name if m else None
        if got != e["expect"] or (m and e.get("line") and e["line"] not in m.line):
            misses.append(f"{e['file']}: expected {e['expect']}, got {got}")
    return len(entries) - len(misses), misses


def accuracy(peer_rev: str, show: str | None) -> int:
    sys.path.insert(0, str(ROOT))
    from dbglog.diagnose.signatures import classify_text

    peer = _peer_classify(peer_rev)
    for half, entries in split().items():
        groups = {source_group(e["source"]) for e in entries}
        ours, misses = _score(classify_text, entries)
        theirs, _ = _score(peer, entries)
        print(f"{half:9} {len(entries):3} logs from {len(groups):3} projects: this catalog {ours}/{len(entries)} "
              f"({ours / len(entries):.1%}), peer {peer_rev} {theirs}/{len(entries)} ({theirs / len(entries):.1%})")
        if show == half:
            for m in misses:
                print("   MISS", m)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--accuracy", action="store_true", help="held-out accuracy beside the peer catalog")
    ap.add_argument("--peer", default=PEER_REV, help="git revision of the peer catalog")
    ap.add_argument("--show-misses", choices=("study", "held-out", "added"), help="list that half's misses")
    args = ap.parse_args()
    if args.accuracy:
        return accuracy(args.peer, args.show_misses)
    exe = [sys.executable, "-m", "dbglog"]
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    with tempfile.TemporaryDirectory() as d:
        for shape in ("repetitive", "unique"):
            log = Path(d) / f"{shape}.log"
            make(log, shape, args.mb << 20)
            times = []
            for _ in range(args.repeat):
                t = time.perf_counter()
                p = subprocess.run(exe + ["signature", "test", str(log)], capture_output=True, text=True, env=env, cwd=d)
                times.append(time.perf_counter() - t)
            first = p.stdout.splitlines()[0] if p.stdout else p.stderr.strip()
            print(f"{shape:10} {args.mb} MB: median {statistics.median(times):.2f}s "
                  f"(min {min(times):.2f}s, max {max(times):.2f}s)  -> {first[:60]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
