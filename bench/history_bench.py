"""`dbglog bisect git` versus `git bisect run`: repro runs, wall time, per-step overhead.

Same machine, same run, same generated repos (git fast-import, one version.txt change per
commit), same repro (a tiny shell script that reads version.txt: exit 1 from the culprit on).

1. Linear 1,024 and 10,000-commit repos, fast repro: runs and wall time of each tool. dbglog's
   runs include its two endpoint checks (git checks nothing). Per-step overhead =
   (wall - runs x the repro's own time) / runs; dbglog's wall also contains its Python start-up
   (printed separately).
2. 1,024 commits, a repro that sleeps 1 s: `--jobs 4` versus `--jobs 1` wall time (target <= 0.6x).

Every dbglog run uses a fresh copy of the repo with a new, empty workspace (`dbglog init` before
the clock starts), so nothing comes from the verdict cache.

Per-step overhead is noisy on a shared machine: ``--rounds N`` runs both tools N times, interleaved
(git then dbglog, dbglog then git, ...), each round with its own measure of the repro's time and of
dbglog's start-up, and prints the medians of the rounds' figures with the load average before and after.
``--quick``: 1,024 commits only; ``--no-jobs``: skip part 2.

Run:  PYTHONPATH=. python bench/history_bench.py [--quick] [--rounds N] [--no-jobs]
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dbglog.bisect.history import make_repo  # noqa: E402

CHECK = """#!/bin/sh
v=$(cat version.txt)
echo "$v" >> "$LOG"
[ "$SLEEP" = "0" ] || sleep "$SLEEP"
[ "$v" -lt "$CULPRIT" ]
"""


def env(log: Path, culprit: int, sleep: float = 0) -> dict:
    e = dict(os.environ)
    e.update(LOG=str(log), CULPRIT=str(culprit), SLEEP=str(sleep), PYTHONPATH=str(ROOT))
    e.pop("DBGLOG_DIR", None)
    return e


CPU: dict[str, float] = {}  # the last measured call's CPU seconds (user + system, its whole process tree)


def _cpu() -> float:
    """CPU seconds of every waited-for child so far: a wall clock on a loaded machine mostly measures
    the other tenants, the CPU a tool burns per step much less so."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def count(log: Path) -> int:
    return len(log.read_text().split()) if log.exists() else 0


def repro_time(tmp: Path, repo: Path, script: Path, n: int = 30) -> float:
    e = env(tmp / "rt.log", 10**9)
    t, c = time.perf_counter(), _cpu()
    for _ in range(n):
        subprocess.run(["sh", str(script)], cwd=repo, env=e, check=True)
    CPU["repro"] = (_cpu() - c) / n
    return (time.perf_counter() - t) / n


def git_bisect(tmp: Path, repo: Path, good: str, script: Path, culprit: int, sleep: float = 0) -> tuple[int, float]:
    clone = tmp / f"clone-{time.monotonic_ns()}"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    log = tmp / f"git-{time.monotonic_ns()}.log"
    e = env(log, culprit, sleep)
    t, c = time.perf_counter(), _cpu()
    subprocess.run(["git", "-C", str(clone), "bisect", "start", "HEAD", good], check=True, capture_output=True)
    p = subprocess.run(["git", "-C", str(clone), "bisect", "run", "sh", str(script)], env=e, capture_output=True,
                       text=True)
    subprocess.run(["git", "-C", str(clone), "bisect", "reset"], check=True, capture_output=True)
    wall = time.perf_counter() - t
    CPU["git"] = _cpu() - c
    assert "is the first bad commit" in p.stdout, p.stdout[-500:]
    shutil.rmtree(clone, ignore_errors=True)
    return count(log), wall


def dbglog_bisect(tmp: Path, repo: Path, good: str, script: Path, culprit: int, sleep: float = 0,
                  jobs: int = 1) -> tuple[int, float, dict]:
    work = tmp / f"copy-{time.monotonic_ns()}"
    subprocess.run(["git", "clone", "-q", str(repo), str(work)], check=True)
    log = tmp / f"dbg-{time.monotonic_ns()}.log"
    e = env(log, culprit, sleep)
    # A user bisects in a workspace that exists: its one-time creation (schema migrations, which
    # import sqlite-utils and through it numpy, ~0.2 s) is not a per-step cost. The verdict cache
    # is empty either way.
    subprocess.run([sys.executable, "-m", "dbglog", "init"], cwd=work, env=e, check=True, capture_output=True)
    t, c = time.perf_counter(), _cpu()
    p = subprocess.run([sys.executable, "-m", "dbglog", "bisect", "git", "--good", good, "--bad", "HEAD",
                        "--jobs", str(jobs), "--json", "--", "sh", str(script)], cwd=work, env=e,
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    CPU["dbglog"] = _cpu() - c
    assert p.returncode == 0, (p.stdout[-800:], p.stderr[-800:])
    res = json.loads(p.stdout)
    shutil.rmtree(work, ignore_errors=True)
    return count(log), wall, res


def startup(n: int = 9) -> float:
    e = env(Path("/dev/null"), 0)
    walls, cpus = [], []
    for _ in range(n):  # the median: one slow start on a busy machine would shift every per-step figure
        t, c = time.perf_counter(), _cpu()
        subprocess.run([sys.executable, "-m", "dbglog", "--version"], env=e, capture_output=True, check=True)
        walls.append(time.perf_counter() - t)
        cpus.append(_cpu() - c)
    CPU["startup"] = statistics.median(cpus)
    return statistics.median(walls)


def _rounds() -> int:
    if "--rounds" in sys.argv:
        i = sys.argv.index("--rounds")
        try:
            return max(1, int(sys.argv[i + 1]))
        except (IndexError, ValueError):
            sys.exit("history_bench: --rounds needs a number")
    return 1


def _load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def main() -> None:
    quick = "--quick" in sys.argv
    rounds = _rounds()
    # An installed dbglog has its bytecode (pip compiles it). A checkout under PYTHONDONTWRITEBYTECODE=1
    # would compile every module each process imports, on every run: ~0.1 s of CPU, more than the
    # whole difference being measured here.
    import compileall

    compileall.compile_dir(str(ROOT / "dbglog"), quiet=2)
    tmp = Path(tempfile.mkdtemp(prefix="dbglog-history-bench-"))
    try:
        script = tmp / "check.sh"
        script.write_text(CHECK)
        st = startup()
        print(f"dbglog start-up (python -m dbglog --version): {st * 1000:.0f} ms")
        print()
        if rounds > 1:
            print(f"medians of {rounds} interleaved rounds; load average before: {_load()}")
        print("| commits | tool | repro runs | wall s | repro alone ms | overhead ms/step | CPU overhead ms/step |")
        print("|---|---|---|---|---|---|---|")
        sizes = (1024,) if quick else (1024, 10000)
        for n in sizes:
            t = time.perf_counter()
            repo = tmp / f"repo{n}"
            shas = make_repo(repo, n, lambda i: {"version.txt": f"{i}\n"})
            build = time.perf_counter() - t
            culprit = (n * 7) // 10 + 3
            rt = repro_time(tmp, repo, script)
            # Every figure a round's per-step overhead subtracts -- the repro's own time, dbglog's
            # start-up -- is measured in that round, beside the two bisections (in alternating
            # order): on a shared machine the load drifts within seconds, and a start-up or repro
            # time taken once, before the rounds, shifts every per-step figure by its error / runs.
            # The median of the rounds' figures is reported.
            res_all = {"git": [], "dbglog": []}  # (runs, wall, per-step overhead, CPU per-step overhead)
            rts = []
            for i in range(rounds if rounds > 1 else 1):
                rt_i, rt_cpu = (repro_time(tmp, repo, script, 10), CPU["repro"]) if rounds > 1 else (rt, CPU["repro"])
                st_i, st_cpu = (startup(3), CPU["startup"]) if rounds > 1 else (st, CPU["startup"])
                rts.append(rt_i)
                for tool in (("git", "dbglog") if i % 2 == 0 else ("dbglog", "git")):
                    if tool == "git":
                        runs, wall = git_bisect(tmp, repo, shas[0], script, culprit)
                        extra, cextra = 0.0, 0.0
                    else:
                        runs, wall, res = dbglog_bisect(tmp, repo, shas[0], script, culprit)
                        assert res["first_bad"]["commit"] == shas[culprit]
                        extra, cextra = st_i, st_cpu
                    res_all[tool].append((runs, wall, (wall - extra - runs * rt_i) / runs * 1000,
                                          (CPU[tool] - cextra - runs * rt_cpu) / runs * 1000))
            for tool, label in (("git", "git bisect run"), ("dbglog", "dbglog bisect git")):
                results = res_all[tool]
                runs = results[0][0]
                assert all(r[0] == runs for r in results), results  # the run count is deterministic
                wall = statistics.median(r[1] for r in results)
                ovh = statistics.median(r[2] for r in results)
                spread = ""
                if rounds > 1:
                    o = sorted(r[2] for r in results)
                    spread = f" (range {o[0]:.1f}-{o[-1]:.1f})"
                cpu = statistics.median(r[3] for r in results)
                print(f"| {n:,} | {label} | {runs} | {wall:.2f} | {statistics.median(rts) * 1000:.1f} | {ovh:.1f}{spread}"
                      + (" (start-up excluded)" if tool == "dbglog" else "") + f" | {cpu:.1f} |")
            print(f"|  | (repo built with fast-import in {build:.2f} s) | | | | | |")
        if rounds > 1:
            print(f"load average after: {_load()}")
        if "--no-jobs" in sys.argv:
            return
        print()
        n = 1024
        repo = tmp / "repo1024"
        if not repo.exists():
            make_repo(repo, n, lambda i: {"version.txt": f"{i}\n"})
        shas = subprocess.run(["git", "-C", str(repo), "rev-list", "--reverse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.split()
        culprit = 703
        print("| repro | jobs | repro runs | wall s | ratio vs jobs 1 |")
        print("|---|---|---|---|---|")
        r1, w1, _ = dbglog_bisect(tmp, repo, shas[0], script, culprit, sleep=1, jobs=1)
        print(f"| sleep 1 s, {n:,} commits | 1 | {r1} | {w1:.2f} | 1.00 |")
        r4, w4, _ = dbglog_bisect(tmp, repo, shas[0], script, culprit, sleep=1, jobs=4)
        print(f"| sleep 1 s, {n:,} commits | 4 | {r4} | {w4:.2f} | {w4 / w1:.2f} |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
