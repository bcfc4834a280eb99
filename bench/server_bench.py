"""Server mode (dbglog/run/serve.py) beside plain mode: per-step cost in `bisect git`, orphans, idle-hang
detection latency.

1. A generated 64-commit history where commit CULPRIT makes the server crash on /generate. The same
   bisection twice: plain mode (one script plays server and client in-process: reads the commit's
   mode file, fails from the culprit on) and server mode (tests/fixtures/repros/fake_http_server.py
   started per step, readiness polled on /v1/models, the client's GET /generate). Reported: culprit
   found, runs, wall, wall per run, server-mode overhead per step, processes left alive afterwards.
2. `--idle-timeout S` on a livelocked server: how long after S the hang was declared (target <= 2 s).

Run:  PYTHONPATH=. python bench/server_bench.py [--quick]
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dbglog.bisect.history import make_repo  # noqa: E402

REPROS = ROOT / "tests" / "fixtures" / "repros"
SERVER = REPROS / "fake_http_server.py"
CLIENT = REPROS / "fake_http_client.py"
PLAIN = """import os, sys
pids = os.environ.get("DBGLOG_TEST_PIDS")
if pids:
    open(os.path.join(pids, "%d.pid" % os.getpid()), "w").close()
if open("mode").read().strip() == "crash":
    print("RuntimeError: CUDA error: an illegal memory access was encountered", file=sys.stderr)
    sys.exit(1)
print("ok")
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def alive(pid_dir: Path) -> list[int]:
    import psutil

    out = []
    for f in pid_dir.glob("*.pid"):
        try:
            if psutil.Process(int(f.stem)).status() != psutil.STATUS_ZOMBIE:
                out.append(int(f.stem))
        except psutil.Error:
            pass
    return out


def bisect(tmp: Path, n: int, culprit: int, server: bool) -> dict:
    repo = tmp / ("srv" if server else "plain")
    shas = make_repo(repo, n, lambda i: {"mode": "crash\n" if i >= culprit else "ok\n", "v.txt": f"{i}\n"})
    pid_dir = tmp / (repo.name + "_pids")
    pid_dir.mkdir()
    env = dict(os.environ, PYTHONPATH=str(ROOT), DBGLOG_TEST_PIDS=str(pid_dir), FAKE_READY_DELAY="0")
    env.pop("DBGLOG_DIR", None)
    subprocess.run([sys.executable, "-m", "dbglog", "init"], cwd=repo, env=env, capture_output=True, check=True)
    if server:
        port = free_port()
        extra = ["--server", f"{sys.executable} {SERVER} {port}", "--ready", f"http://127.0.0.1:{port}/v1/models",
                 "--ready-timeout", "30", "--", sys.executable, str(CLIENT), str(port)]
    else:
        (tmp / "plain.py").write_text(PLAIN)
        extra = ["--", sys.executable, str(tmp / "plain.py")]
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "dbglog", "bisect", "git", "--json", "--good", shas[0], "--bad",
                        shas[-1], "--grace", "1", *extra], cwd=repo, env=env, capture_output=True, text=True)
    wall = time.monotonic() - t0
    time.sleep(0.5)  # let the kernel reap
    res = json.loads(p.stdout) if p.stdout.strip().startswith("{") else {"error": p.stderr[-500:]}
    runs = len(list((repo / ".dbglog" / "runs").iterdir()))
    return {"mode": "server" if server else "plain", "culprit_ok": (res.get("first_bad") or {}).get("commit")
            == shas[culprit], "runs": runs, "wall_s": round(wall, 2), "per_run_s": round(wall / max(1, runs), 3),
            "orphans": len(alive(pid_dir)), "exit": p.returncode}


def idle_latency(tmp: Path, idle: float) -> float:
    from dbglog.run import serve

    port = free_port()
    os.environ["FAKE_SERVER_MODE"] = "livelock"
    r = serve.run_server_client([sys.executable, str(CLIENT), str(port)], server=[sys.executable, str(SERVER),
                                str(port)], ready=f"http://127.0.0.1:{port}/v1/models", run_dir=tmp / f"idle{idle}",
                                cwd=tmp, idle_timeout=idle, grace=1.0, echo=False, git_info=False)
    assert r.outcome == "hang", r.notes
    return max(s["silent_s"] for s in r.idle["streams"]) - idle


def main() -> None:
    quick = "--quick" in sys.argv
    n, culprit = (32, 20) if quick else (64, 41)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        rows = [bisect(tmp, n, culprit, server=False), bisect(tmp, n, culprit, server=True)]
        print(f"bisect git over {n} commits (culprit {culprit}):")
        for r in rows:
            print(f"  {r['mode']:<6} culprit found: {r['culprit_ok']}  runs {r['runs']}  wall {r['wall_s']:.2f}s  "
                  f"per run {r['per_run_s']:.3f}s  orphans {r['orphans']}")
        print(f"  server-mode overhead per step: {rows[1]['per_run_s'] - rows[0]['per_run_s']:+.3f}s "
              "(server start, readiness polling, tree stop)")
        lat = [idle_latency(tmp, s) for s in ((1.0,) if quick else (1.0, 2.0, 3.0))]
        print("idle-hang detection after S: " + ", ".join(f"+{x:.2f}s" for x in lat) + " (target <= 2 s)")


if __name__ == "__main__":
    main()
