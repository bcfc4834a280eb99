"""What an agent can send that a shell cannot is a clean answer, never an internal error: MCP arguments no
process could take (NUL bytes, a NaN or infinite timeout, lone surrogates) are tool errors that change
nothing; the hooks answer odd or forced-dialect JSON, a 100 KB command line, a workspace path holding URI
characters and a read-only workspace."""

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli_inproc
from probe_kit import dbg, snapshot


def _mcp(tmp_path, calls):
    """Call the tools through the real server object (its argument handling included), in this process."""
    pytest.importorskip("mcp")
    import asyncio

    from dbglog import mcp_server

    server = mcp_server.build_server()

    async def main():
        return [await server.call_tool(name, args) for name, args in calls]
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        return asyncio.run(main())
    finally:
        os.chdir(cwd)


def test_mcp_arguments_no_process_could_take_are_tool_errors_and_change_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("DBGLOG_DIR", raising=False)
    assert dbg("new", "NCCL hang", "--no-env", cwd=tmp_path).returncode == 0
    before = snapshot(tmp_path)
    calls = [("show", {"investigation": "x\udcff"}), ("tried", {"idea": "p2p", "tags": ["a\udcff"]}),
             ("new_investigation", {"title": "t", "tags": ["x\udcff"]}),
             ("add_attempt", {"title": "t", "runs": ["r\udcff"]}),
             ("run_repro", {"cmd": ["true\x00"], "timeout": 5}),
             ("run_repro", {"cmd": ["true"], "timeout": 5, "env": {"A": "b\x00"}}),
             ("run_repro", {"cmd": ["true"], "timeout": math.nan}),
             ("tried", {"idea": "p2p", "limit": -1}), ("search", {"query": "p2p", "limit": 0}),
             ("run_repro", {"cmd": ["true"], "timeout": 5, "idle_timeout": math.inf}),
             ("run_repro", {"cmd": ["true"], "timeout": 5, "ready_timeout": math.nan, "server": "true",
                            "ready": "true"}),
             ("show", {})]
    out = _mcp(tmp_path, calls)
    for (name, args), res in zip(calls[:-1], out[:-1]):
        assert res.is_error, (name, args, res)
        text = res.content[0].text
        assert "\n" not in text and "internal error" not in text, (name, text)
        assert res.structured_content == {"error": text}
    assert not out[-1].is_error  # still serving
    assert snapshot(tmp_path) == before


def test_a_huge_command_still_gets_the_hooks_notice(tmp_path):
    ws = tmp_path / "w"
    ws.mkdir()
    cmd = "python3 " + "a" * 60000 + ".py --fast"
    for args in (["new", "x", "--no-env"], ["attempt", "add", "long one", "-d", cmd, "-r", "still hangs", "-o", "failed"]):
        assert dbg(*args, cwd=ws).returncode == 0, args
    r = run_cli_inproc(ws, "hook", "pre-command", "--format", "text", input=cmd)
    assert r.returncode == 0 and r.stderr == "", r.stderr  # before: "LIKE or GLOB pattern too complex", no notice
    assert "long one" in r.stdout, r.stdout


def test_hook_options_in_dbglogs_words(tmp_path):
    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("new", "x", "--no-env", cwd=ws).returncode == 0
    r = run_cli_inproc(ws, "hook", "pre-command", "--threshold", "abc", input="ls")
    assert r.returncode == 0 and r.stderr.strip() == \
        "dbglog hook: --threshold takes a number >= 1, got 'abc' (see `dbglog hook --help`)"  # before: int()'s words
    r = run_cli_inproc(ws, "hook", "session-start", "--json", input="")
    assert r.returncode == 0 and r.stderr == "", r.stderr  # before: "unknown argument '--json'"
    assert json.loads(r.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"


def test_hooks_read_a_workspace_whose_path_holds_uri_characters(tmp_path):
    ws = tmp_path / "we?ird#dir%20x"
    ws.mkdir()
    assert dbg("new", "NCCL hang", "--no-env", cwd=ws).returncode == 0
    r = run_cli_inproc(ws, "hook", "session-start", "--format", "text", input="")
    assert r.returncode == 0 and r.stderr == "", r.stderr  # before: "OperationalError: no such table: meta"
    assert "NCCL hang" in r.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == [ws.name]  # before: SQLite created tmp_path/"we"


RO_HOOK = """
cd "$1"
mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" || exit 77
cd "$1" && $2 -m dbglog hook session-start --format text </dev/null
"""


def test_the_session_hook_reads_a_read_only_workspace(tmp_path):
    if shutil.which("unshare") is None:
        pytest.skip("no unshare on this machine")
    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("new", "NCCL hang", "--no-env", cwd=ws).returncode == 0
    script = tmp_path / "ro.sh"
    script.write_text(RO_HOOK)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    env.pop("DBGLOG_DIR", None)
    args = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-r", "-m"]
    p = subprocess.run([*args, "sh", str(script), str(ws), sys.executable], capture_output=True, text=True,
                       env=env, timeout=120)
    if p.returncode == 77 or "unshare failed" in p.stderr or "Operation not permitted" in p.stderr:
        pytest.skip(f"cannot make the workspace read-only here: {p.stderr.strip()[:200]}")
    assert p.stderr == "" and "NCCL hang" in p.stdout, p.stdout + p.stderr  # before: OperationalError, no digest


HOOK_CMD = "NCCL_P2P_DISABLE=1 torchrun --nproc_per_node 8 train.py"


@pytest.fixture(scope="module")
def hook_kb(tmp_path_factory):
    from conftest import run_cli_inproc

    root = tmp_path_factory.mktemp("hookkb")
    (root / ".git").mkdir()
    run_cli_inproc(root, "new", "NCCL all_reduce hangs on 8 GPUs", "--no-env", check=0)
    run_cli_inproc(root, "attempt", "add", "Disable P2P", "--did", HOOK_CMD, "--result", "still hangs",
                   "--outcome", "failed", check=0)
    return root


def _hook(cwd, event, stdin, *args):
    from conftest import run_cli_inproc

    p = run_cli_inproc(cwd, "hook", event, *args, input=stdin)
    assert p.returncode == 0
    return p


def test_a_forced_gemini_prompt_answer_names_geminis_event(hook_kb):
    p = _hook(hook_kb, "prompt", "The NCCL all_reduce on 8 GPUs hangs again, can you debug the hang?",
              "--format", "gemini")
    assert json.loads(p.stdout)["hookSpecificOutput"]["hookEventName"] == "BeforeAgent", p.stdout


@pytest.mark.parametrize("shape", ["claude", "cursor"])
def test_a_lone_surrogate_escaped_in_the_hook_json_is_no_error(hook_kb, shape):
    obj = ({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "\ud800"}}
           if shape == "claude" else {"hook_event_name": "beforeShellExecution", "command": "\ud800 " + HOOK_CMD})
    p = _hook(hook_kb, "pre-command", json.dumps(obj))  # json.dumps writes it as the escape "\ud800"
    assert p.stderr == "", p.stderr


@pytest.mark.parametrize("odd", [None, 1, [], {}, "x" * 20000, [1, 2], ["\x00"], "/dev/null", "rel/dir"])
@pytest.mark.parametrize("key", ["tool_input", "cwd", "workspace_roots", "command", "hook_event_name", "tool_name"])
def test_odd_values_in_a_cursor_or_gemini_hook_json_never_fail(hook_kb, key, odd):
    for base in ({"hook_event_name": "beforeShellExecution", "command": HOOK_CMD, "cwd": str(hook_kb),
                  "workspace_roots": [str(hook_kb)]},
                 {"hook_event_name": "BeforeTool", "tool_name": "run_shell_command", "cwd": str(hook_kb),
                  "tool_input": {"command": HOOK_CMD}}):
        p = _hook(hook_kb, "pre-command", json.dumps(base | {key: odd}))
        assert p.stderr == "", (key, odd, p.stderr)
        if p.stdout and (key != "hook_event_name" or isinstance(odd, str)):
            # an agent's hook (it names its event) is answered with one JSON object, never plain text
            json.loads(p.stdout)
