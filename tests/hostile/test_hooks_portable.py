"""Hooks and `tried` match commands relative to the repository root (issue 30): after the checkout is
moved (or in a teammate's clone, where the same runs were recorded elsewhere), `hook pre-command`
still warns before a command it warned about before."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from conftest import cli_env, run_cli
from tree_guard import tree_guard  # noqa: F401 - kills what a probe started, pass or fail


def _pre(cwd, command: str) -> str:
    stdin = json.dumps({"session_id": "s", "cwd": str(cwd), "hook_event_name": "PreToolUse", "tool_name": "Bash",
                        "tool_input": {"command": command}})
    p = subprocess.run([sys.executable, "-m", "dbglog", "hook", "pre-command"], cwd=cwd, input=stdin,
                       capture_output=True, text=True, env=cli_env(), timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_the_hook_still_warns_after_the_checkout_is_moved(tmp_path):
    repo = tmp_path / "first-place"
    (repo / "sub").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "sub" / "repro.py").write_text("import sys\nsys.exit(3)\n")
    assert run_cli("new", "crash", "--no-env", cwd=repo).returncode == 0
    for i in range(3):
        p = run_cli("run", "--quiet", "--attempt", f"try {i}", "--env", "NCCL_P2P_DISABLE=1", "--",
                    sys.executable, str(repo / "sub" / "repro.py"), "--fast", cwd=repo / "sub")
        assert p.returncode == 1, p.stderr
    command = "NCCL_P2P_DISABLE=1 python repro.py --fast"
    before = _pre(repo / "sub", command)
    assert "tried before" in before
    moved = tmp_path / "elsewhere" / "checkout"
    moved.parent.mkdir()
    shutil.move(str(repo), str(moved))
    after = _pre(moved / "sub", command)
    assert "tried before" in after and after.count("[FAILED]") == before.count("[FAILED]")
    assert "tried before" not in _pre(moved / "sub", "NCCL_P2P_DISABLE=0 python repro.py --fast")
