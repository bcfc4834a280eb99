import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_cli(cwd, *args, check=None, input=None):
    """Run the worktree's dbglog in a subprocess (cwd = a workspace); returns CompletedProcess."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), DBGLOG_NO_EDITOR="1")
    env.pop("DBGLOG_DIR", None)
    p = subprocess.run([sys.executable, "-m", "dbglog", *map(str, args)], cwd=cwd, env=env,
                       capture_output=True, text=True, input=input)
    if check is not None:
        assert p.returncode == check, (p.returncode, p.stdout, p.stderr)
    return p


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def ws(tmp_path):
    d = tmp_path / "ws"
    d.mkdir()
    run_cli(d, "init", check=0)
    return d
