"""Server-shaped repros (dbglog/run/serve.py): a real stdlib HTTP server and client, no GPU.

The server (tests/fixtures/repros/fake_http_server.py) starts a worker, becomes ready after a
delay, then livelocks, crashes, exits or never gets ready, as the test asks.
"""

from __future__ import annotations

import json
import socket
import sys

import pytest

from conftest import REPROS, assert_none_alive, recorded_pids, run_cli, run_cli_inproc
from dbglog.run import runner, serve
from dbglog.bisect.history import make_repo

SERVER = REPROS / "fake_http_server.py"
CLIENT = REPROS / "fake_http_client.py"
PY = sys.executable


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(tmp_path, monkeypatch, mode, *, ready=None, ready_timeout=20.0, **kw) -> runner.RunResult:
    monkeypatch.setenv("FAKE_SERVER_MODE", mode)
    port = free_port()
    return serve.run_server_client([PY, str(CLIENT), str(port)], server=f"{PY} {SERVER} {port}",
                                   ready=ready or f"http://127.0.0.1:{port}/v1/models", ready_timeout=ready_timeout,
                                   run_dir=tmp_path / "run", cwd=tmp_path, echo=False, grace=1.0, git_info=False,
                                   **kw)


def test_livelocked_server_is_an_idle_hang_with_server_stacks_and_no_survivors(workdir, pid_dir):
    """The issue's end-to-end case, through the real entry point: ready after a delay, livelock
    on /generate, the client hangs; --idle-timeout catches it within S + 2 s."""
    port, idle = free_port(), 1.5
    r = run_cli("run", "--json", "--server", f"{PY} {SERVER} {port}", "--ready", f"http://127.0.0.1:{port}/v1/models",
                "--ready-timeout", "30", "--idle-timeout", str(idle), "--grace", "1", "--capture", "faulthandler",
                "--", PY, str(CLIENT), str(port), cwd=workdir, env={"FAKE_READY_DELAY": "0.5"})
    assert r.returncode == 124, r.stderr
    d = json.loads(r.stdout)
    assert d["outcome"] == "hang" and d["survivors"] == []
    assert d["server"]["state"] == "stopped" and d["server"]["verdict"] == "server_hang"
    assert d["server"]["ready_s"] >= 0.5
    quiet = {s["role"]: s for s in d["idle"]["streams"]}
    assert set(quiet) == {"client", "server"}
    assert all(idle <= s["silent_s"] < idle + 2 for s in quiet.values()), quiet
    assert len(quiet["server"]["processes"]) == 2  # the dispatcher and its worker, named in the run
    stacks = [c for c in d["captures"] if c["name"].startswith("server:faulthandler") and c["status"] == "ok"]
    assert stacks and any("spin" in open(c["path"]).read() for c in stacks)
    assert "server: ready" in open(d["paths"]["server_output"]).read()  # both logs in the run folder
    assert "client: GET /generate" in open(d["paths"]["output"]).read()
    assert len(recorded_pids(pid_dir)) == 3  # server, worker, client
    assert_none_alive(pid_dir)


def test_server_crash_under_the_client_is_server_died_classified_from_the_server_log(tmp_path, monkeypatch,
                                                                                     pid_dir):
    r = _run(tmp_path, monkeypatch, "crash")
    assert r.outcome == "server_died" and runner.exit_code_plain(r) == 1
    assert r.signature == "gpu.illegal_address"
    assert r.key_lines and r.key_lines[0]["source"] == "server"
    assert r.server["state"] == "died" and r.server["exit"] == "exit status 1"
    assert_none_alive(pid_dir)


def test_server_that_exits_before_ready_is_its_own_verdict_and_the_client_never_runs(tmp_path, monkeypatch,
                                                                                      pid_dir):
    r = _run(tmp_path, monkeypatch, "exit")
    assert r.outcome == "server_died"
    assert any("client did not run" in n for n in r.notes)
    assert r.paths["output"] == r.paths["server_output"]
    assert len(recorded_pids(pid_dir)) == 2  # server and worker: no client
    assert json.loads((tmp_path / "run" / "result.json").read_text())["outcome"] == "server_died"
    assert_none_alive(pid_dir)


def test_never_ready_is_server_not_ready_and_a_ready_command_works(tmp_path, monkeypatch, pid_dir):
    r = _run(tmp_path, monkeypatch, "never", ready_timeout=1.0)
    assert r.outcome == "server_not_ready" and "HTTP 503" in r.notes[0]
    assert any(c["name"] == "server:snapshot" for c in r.captures)  # stuck at start: its state is kept
    assert_none_alive(pid_dir)
    port = free_port()
    check = f"{PY} -c \"import urllib.request; urllib.request.urlopen('http://127.0.0.1:{port}/v1/models')\""
    monkeypatch.setenv("FAKE_SERVER_MODE", "ok")
    ok = serve.run_server_client([PY, str(CLIENT), str(port)], server=[PY, str(SERVER), str(port)], ready=check,
                                 ready_timeout=20, run_dir=tmp_path / "ok", cwd=tmp_path, echo=False, git_info=False)
    assert ok.outcome == "pass" and ok.server["state"] == "stopped", ok.notes
    assert_none_alive(pid_dir)


@pytest.mark.parametrize("args, needle", [
    (["--server", "python srv.py"], "--server and --ready go together"),
    (["--ready", "http://x"], "--server and --ready go together"),
    (["--server", "'unclosed", "--ready", "http://x"], "cannot parse --server"),
    (["--idle-timeout", "0"], "idle"),
])
def test_bad_server_options_are_one_line(workdir, args, needle):
    r = run_cli_inproc(workdir, "run", *args, "--", PY, "-c", "pass")  # (refused before anything runs)
    assert r.returncode == 2 and needle in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert not (workdir / ".dbglog").exists() or not list((workdir / ".dbglog").rglob("result.json"))


def test_bisect_git_with_a_server_whose_readiness_breaks(tmp_path, pid_dir):
    """Each step starts the server in its worktree; from commit 5 on it never gets ready."""
    repo = tmp_path / "repo"
    shas = make_repo(repo, 8, lambda i: {"mode": "never\n" if i >= 5 else "ok\n", "v.txt": f"{i}\n"})
    port = free_port()
    # a good step's server must be ready within --ready-timeout: its start-up (http.server and a worker
    # process) takes up to a second of wall clock at load 20 on 2 cores, hence 3 s
    r = run_cli("bisect", "git", "--json", "--good", shas[0], "--bad", shas[-1], "--server", f"{PY} {SERVER} {port}",
                "--ready", f"http://127.0.0.1:{port}/v1/models", "--ready-timeout", "3", "--grace", "1",
                "--", PY, str(CLIENT), str(port), cwd=repo, env={"FAKE_READY_DELAY": "0"})
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["first_bad"]["commit"] == shas[5]
    assert len(recorded_pids(pid_dir)) >= 6
    assert_none_alive(pid_dir)  # 0 orphans after the whole bisection


def test_bisect_toggles_with_a_server_finds_the_variable_that_crashes_it(tmp_path, pid_dir):
    """`bisect toggles` steps are server-shaped too: the toggled variable reaches the server, whose
    crash decides the trial; every server is stopped (0 orphans)."""
    port = free_port()
    r = run_cli("bisect", "toggles", "--json", "--env", "FAKE_SERVER_MODE=crash", "--env-off", "FAKE_SERVER_MODE=ok",
                "--env", "UNRELATED=1",
                "--env", "ALSO_UNRELATED=1", "--server", f"{PY} {SERVER} {port}",
                "--ready", f"http://127.0.0.1:{port}/v1/models", "--ready-timeout", "20", "--grace", "1",
                "--timeout", "30", "--", PY, str(CLIENT), str(port), cwd=tmp_path,
                env={"FAKE_READY_DELAY": "0", "FAKE_SERVER_MODE": "ok"})
    assert r.returncode == 0, r.stdout + r.stderr
    res = json.loads(r.stdout)
    assert [sorted(s) for s in res["sets"]] == [["FAKE_SERVER_MODE"]], res["sets"]
    assert len(recorded_pids(pid_dir)) >= 6  # a server (and its worker) per trial
    assert_none_alive(pid_dir)


def test_bisect_toggles_refuses_a_server_without_readiness(tmp_path):
    r = run_cli("bisect", "toggles", "--env", "X=1", "--server", f"{PY} {SERVER} 1", "--", PY, str(CLIENT), "1",
                cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--ready" in r.stderr, r.stderr


def test_a_ready_url_with_credentials_is_checked_with_them(tmp_path):
    """An adversarial probe: `--ready http://user:pw@127.0.0.1:PORT/` never became ready: urllib took the userinfo
    for part of the host. It is sent as basic authentication."""
    import base64
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    from dbglog.run import serve

    seen = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            seen.append(self.headers.get("Authorization"))
            self.send_response(200 if self.headers.get("Authorization") else 401)
            self.end_headers()

        def log_message(self, *a):
            pass

    srv = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        port = srv.server_address[1]
        ok, said = serve.probe_ready(f"http://us%40er:p%3Aw@127.0.0.1:{port}/health", str(tmp_path), {}, 10)
        assert ok and said == "HTTP 200", said
        assert seen == ["Basic " + base64.b64encode(b"us@er:p:w").decode()]
        assert serve.probe_ready(f"http://127.0.0.1:{port}/health", str(tmp_path), {}, 10) == (False, "HTTP 401")
    finally:
        srv.shutdown()
        srv.server_close()


def test_a_cancelled_call_stops_a_server_run_while_the_server_gets_ready(tmp_path):
    """An adversarial probe: a client that left while a server-shaped run waited for readiness kept the MCP server
    up for the whole wait, then the server was recorded 'not ready' (a failure). The wait sees the request
    cancelled, stops the server, and the run is an interruption."""
    import time

    import pytest

    from dbglog.run import proctree, runner, serve

    token = proctree.CALLER.set("call-7")
    proctree.CANCELLED.add("call-7")
    t = time.monotonic()
    try:
        with pytest.raises(runner.Interrupted) as got:
            serve.run_server_client([sys.executable, "-c", "pass"], run_dir=tmp_path / "run", cwd=tmp_path,
                                    server=f"{sys.executable} -c 'import time; time.sleep(600)'",
                                    ready="false", ready_timeout=300)
    finally:
        proctree.CANCELLED.discard("call-7")
        proctree.CALLER.reset(token)
    assert got.value.result.outcome == "error" and "interrupted" in got.value.result.error
    assert time.monotonic() - t < 200  # (the readiness wait was 300 s)
