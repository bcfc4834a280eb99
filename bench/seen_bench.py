"""Benchmark: what "seen before" (issue 27) adds to each `dbglog run` in a workspace of 10,000 attempts.

Run: python bench/seen_bench.py [--attempts N]   (prints a table; not part of the test suite)

The workspace: N attempts in N/20 investigations, each attempt with one failed run (N runs), over 24
signatures and ~N/5 distinct fingerprints (a tenth of them illegal addresses, the crash's own
signature: the near-match candidates), every attempt's mirror line in its result. Then the same
`ops.run_repro` of a crashing repro, in this process, alternately with recall (fingerprint, store,
refresh, look up, render) and without it (``index_failures`` and ``seen_before`` stubbed out): the
difference of the medians is what recall adds to a run. The process start-up, the run itself and
the recording are the same on both sides. Also timed: the one-off indexing of a workspace that
predates the fingerprints (the first recall after the upgrade), and the parts of one recall.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

CRASH = """import sys
print("Traceback (most recent call last):", file=sys.stderr)
print('  File "/home/u/proj/serve.py", line 88, in <module>', file=sys.stderr)
print('  File "/home/u/proj/moe.py", line 41, in fused_experts', file=sys.stderr)
print("RuntimeError: CUDA error: an illegal memory access was encountered", file=sys.stderr)
sys.exit(1)
"""
CRASH_LINE = "RuntimeError: CUDA error: an illegal memory access was encountered"
SIGS = [("gpu.illegal_address", "RuntimeError: CUDA error: an illegal memory access was encountered{v}"),
        ("oom.torch", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {n}.00 MiB{v}")] + \
       [(f"sig.{i}", f"SomeError{i}: failure number {i} in stage{{v}}") for i in range(22)]


def _run_dict(rid: str, started: str, sig: str, line: str, cwd: str) -> dict:
    return {"id": rid, "cmd": ["python", "repro.py"], "cwd": cwd, "env_overrides": {}, "started": started,
            "duration_s": 1.0, "exit_code": 1, "signal": None, "signal_name": None, "outcome": "fail",
            "signature": sig, "key_lines": [{"line": 5, "text": line}], "captures": [], "notes": [], "survivors": [],
            "truncated": False, "omitted_bytes": {}, "paths": {}, "git_commit": None, "git_dirty": None,
            "timeout": None, "infra_tainted": False, "kernel_api": [], "evidence": [], "error": None}


def _word(k: int) -> str:
    out = ""
    while True:
        k, r = divmod(k, 26)
        out += "abcdefghijklmnopqrstuvwxyz"[r]
        if not k:
            return "stage_" + out


def _output(recs, k: int, line: str) -> str:
    """The output file of failure class ``k`` (shared by its runs): a traceback through the user's code."""
    path = recs.ws.dir / "bench-outputs" / f"{k}.txt"
    if k < 0:  # the crash the bench runs, as its earlier runs printed it
        path.parent.mkdir(exist_ok=True)
        path.write_text('Traceback (most recent call last):\n  File "/home/u/proj/serve.py", line 88, in <module>\n'
                        f'  File "/home/u/proj/moe.py", line 41, in fused_experts\n{line}\n')
    elif not path.exists():
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"Traceback (most recent call last):\n  File \"/home/u/proj/main.py\", line 3, in <module>\n"
                        f"  File \"/home/u/proj/{_word(k)}.py\", line {k}, in step_{k % 7}\n{line}\n")
    return str(path)


def fill(recs, n_attempts: int, seed: int = 7) -> None:
    """N attempts, each with a failed run (its output a traceback) and its mirror line, straight into the store."""
    from dbglog.diagnose.fingerprint import fingerprint_run
    from dbglog.kb.failures import read_output
    from dbglog.core.model import Attempt, Investigation, now_iso

    rnd = random.Random(seed)
    per = 20
    with recs.store.write():
        for i in range(n_attempts // per):
            inv = Investigation(id=f"20260101-bench-{i:05d}", title=f"bench investigation {i}", status=rnd.choice(
                ["open", "resolved", "resolved", "wontfix"]), symptom="it crashes", created=now_iso(), updated=now_iso())
            for n in range(1, per + 1):
                k = rnd.randrange(n_attempts // 5)  # ~N/5 distinct failures
                sig, tmpl = SIGS[0] if k % 10 == 0 else SIGS[1 + k % (len(SIGS) - 1)]
                line = tmpl.format(n=k, v=f" in {_word(k)}")  # (a word: numbers are normalised away)
                rid = f"20260101-000000-{i:05d}{n:03d}"
                run = _run_dict(rid, f"2026-01-01T00:{i % 60:02d}:{n:02d}", sig, line, str(recs.ws.root))
                run["paths"] = {"output": _output(recs, k, line)}
                if n == 1 and i % 10 == 0:  # a few earlier runs of the very crash the bench runs
                    run["key_lines"][0]["text"] = CRASH_LINE
                    run["paths"] = {"output": _output(recs, -1, CRASH_LINE)}
                fp = fingerprint_run(run, read_output(run))
                inv.attempts.append(Attempt(number=n, title=f"attempt {n}", did="python repro.py", outcome=rnd.choice(
                    ["failed", "failed", "worked", "partial"]), result=f"fail\n- {fp.mirror_line()}", runs=[rid],
                    created=now_iso()))
                recs.store.insert_run(run, "", inv.id, n)
            recs.store.insert_investigation(inv)


def _median_ms(f, n: int) -> tuple[float, float]:
    ms = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        ms.append((time.perf_counter() - t) * 1000)
    return statistics.median(ms), max(ms)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--attempts", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    from dbglog import ops
    from dbglog.kb import failures
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace

    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        (root / "crash.py").write_text(CRASH)
        os.chdir(root)
        recs = Records(Workspace(root / ".dbglog"), create=True)
        t = time.perf_counter()
        fill(recs, args.attempts)
        fill_s = time.perf_counter() - t
        t = time.perf_counter()
        counted = failures.refresh(recs.store)
        first_s = time.perf_counter() - t
        cmd = [sys.executable, "crash.py"]
        real = (ops.index_failures, ops.seen_before)

        def with_recall():
            out = ops.run_repro(recs, cmd)  # (REPRO_OPTIONS: no live echo)
            assert out.seen_before is not None

        def without_recall():
            ops.index_failures, ops.seen_before = (lambda *a, **k: []), (lambda *a, **k: None)
            try:
                ops.run_repro(recs, cmd)  # (REPRO_OPTIONS: no live echo)
            finally:
                ops.index_failures, ops.seen_before = real

        with_recall()  # warm-up: imports (rapidfuzz), page cache
        without_recall()
        on, off = [], []
        for _ in range(args.repeat):  # interleaved: a busy moment hits both sides alike
            on.append(_median_ms(with_recall, 1)[0])
            off.append(_median_ms(without_recall, 1)[0])
        from dbglog.diagnose.fingerprint import fingerprint_run

        run = recs.store.runs(1)[0]
        fp = fingerprint_run(run, failures.read_output(run))
        parts = [("fingerprint one run (its output read)", _median_ms(lambda: fingerprint_run(
                     run, failures.read_output(run)), 50)),
                 ("refresh with nothing changed", _median_ms(lambda: failures.refresh(recs.store), 50)),
                 ("look up + recall (exact and near)", _median_ms(lambda: failures.recall(recs.store, fp), 50))]
        n_fp = recs.store.q("SELECT count(DISTINCT fp) FROM failures").fetchone()[0]
        n_cand = recs.store.q("SELECT count(*) FROM failures WHERE signature = ?", fp.signature).fetchone()[0]
        block = failures.recall(recs.store, fp)
    print(f"workspace: {args.attempts} attempts, {args.attempts} failed runs, {n_fp} distinct fingerprints, "
          f"{n_cand} rows with the crash's signature (near-match candidates); filled in {fill_s:.1f} s")
    print(f"one-off indexing of a workspace that predates fingerprints: {first_s * 1000:.0f} ms ({json.dumps(counted)})")
    print(f"{'dbglog run (in-process run_repro of a crashing repro)':<58} {'median ms':>10} {'max ms':>8}")
    print(f"{'  without recall (peer)':<58} {statistics.median(off):>10.1f} {max(off):>8.1f}")
    print(f"{'  with recall':<58} {statistics.median(on):>10.1f} {max(on):>8.1f}")
    print(f"{'  added by recall (difference of medians)':<58} {statistics.median(on) - statistics.median(off):>10.1f}")
    for name, (med, mx) in parts:
        print(f"{'  part: ' + name:<58} {med:>10.2f} {mx:>8.2f}")
    print(f"recall found {len(block['investigations'])} investigation(s), {len(block['attempts'])} attempt(s)")


if __name__ == "__main__":
    main()
