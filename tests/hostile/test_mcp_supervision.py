"""The MCP server's repros never outlive it (issue 30): through the official SDK client, a long
`run_repro` is started, then the client goes away -- stdin closed, SIGTERM to the server, SIGKILL of
the server. Afterwards no process of the repro is alive, and the run is recorded: by the server itself
(closed stdin, SIGTERM), or by the next command (SIGKILL)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from conftest import REPROS, cli_env, recorded_pids, run_cli

mcp = pytest.importorskip("mcp")
import mcp.client.stdio as sdk_stdio  # noqa: E402
from tree_guard import tree_guard  # noqa: E402,F401 - kills what the test started, pass or fail
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return False


async def _until(cond, what: str, limit: float = 60.0) -> None:
    """Wait for an event (a file, a process gone); the limit only turns a hang into a failure."""
    deadline = time.monotonic() + limit
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def _stop_client_and_server(workdir: Path, pids: Path, how: str) -> dict:
    async def main():
        params = StdioServerParameters(command=sys.executable, args=["-m", "dbglog", "mcp"], cwd=str(workdir),
                                       env=cli_env({"DBGLOG_TEST_PIDS": str(pids)}))
        answer: dict = {}
        async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
            await session.initialize()
            call = asyncio.ensure_future(session.call_tool(
                "run_repro", {"cmd": [sys.executable, str(REPROS / "long_tree.py")], "timeout": 600}))
            await _until(lambda: (pids / "started").exists() or call.done(), "the repro to start")
            assert not call.done(), call.result()
            server = int((pids / "supervisor").read_text())
            answer["server"] = server
            if how == "close":
                call.cancel()
            else:
                os.kill(server, signal.SIGTERM if how == "sigterm" else signal.SIGKILL)
                if how == "sigterm":
                    res = await call
                    answer["error"] = res.structured_content
                else:
                    call.cancel()
        # (leaving the client closed the server's stdin; it waits for the server, up to the patience above)
        await _until(lambda: not _alive(answer["server"]), "the server to exit")
        return answer

    return asyncio.run(asyncio.wait_for(main(), 120))


@pytest.fixture
def patient_client(monkeypatch):
    """The SDK kills the server's group 2 s after closing its stdin; the closed-stdin test must see the
    server leave on its own, so the client waits longer (it still waits for the exit, not a time)."""
    monkeypatch.setattr(sdk_stdio, "PROCESS_TERMINATION_TIMEOUT", 60.0)


def _runs(workdir: Path) -> list[dict]:
    p = run_cli("runs", "list", "--json", cwd=workdir)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout), p.stderr


@pytest.mark.parametrize("how", ["close", "sigterm", "sigkill"])
def test_mcp_repro_never_outlives_its_server(workdir, tmp_path, patient_client, how):
    pids = tmp_path / "pids"
    pids.mkdir()
    assert run_cli("init", cwd=workdir).returncode == 0
    answer = _stop_client_and_server(workdir, pids, how)
    repro = recorded_pids(pids)
    assert len(repro) == 2  # the root and its grandchild
    # the server stopped them (close, SIGTERM), or the kernel the root and the next command the rest
    if how != "sigkill":
        assert not [p for p in repro if _alive(p)]
    if how == "sigterm":
        assert "interrupted by SIGTERM" in answer["error"]["error"]
    runs, warned = _runs(workdir)
    assert not [p for p in repro if _alive(p)]
    assert len(runs) == 1 and runs[0]["outcome"] == "error"
    if how == "sigkill":
        assert "supervised by a dbglog that was killed" in warned
        assert warned.count("\n") == 1  # one line
    assert not list((workdir / ".dbglog" / "live").glob("*.json"))
    again, warned_again = _runs(workdir)  # said once, recorded once
    assert len(again) == 1 and warned_again == ""
