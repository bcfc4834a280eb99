"""The live progress display on a real terminal (a pty from `script`), not just plain lines."""

import shlex
import shutil
import subprocess
import sys

import pytest

from conftest import cli_env, run_cli
from dbglog.bisect.history import make_repo

CHECK = "import sys; v = int(open('version.txt').read()); sys.exit(1 if v >= 40 else 0)"


@pytest.mark.skipif(shutil.which("script") is None, reason="util-linux `script` not installed")
def test_bisect_git_progress_on_a_terminal(tmp_path):
    repo = tmp_path / "repo"
    shas = make_repo(repo, 64, lambda i: {"version.txt": f"{i}\n"})
    assert run_cli("init", cwd=repo).returncode == 0
    cmd = shlex.join([sys.executable, "-m", "dbglog", "bisect", "git", "--good", shas[0], "--bad", "HEAD",
                      "--", sys.executable, "-c", CHECK])
    env = cli_env({"TERM": "xterm-256color", "COLUMNS": "120"})
    p = subprocess.run(["script", "-qec", cmd, "/dev/null"], cwd=repo, env=env, capture_output=True, text=True,
                       timeout=300, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stdout[-2000:]
    out = p.stdout
    assert "\x1b[" in out  # rich drew on the terminal (escape sequences), not plain lines
    assert "candidates left" in out and "steps" in out
    assert "First bad commit: " + shas[40] in out
