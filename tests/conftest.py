import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """An empty directory as cwd, with no inherited DBGLOG_DIR and no editor prompts."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DBGLOG_DIR", raising=False)
    monkeypatch.setenv("DBGLOG_NO_EDITOR", "1")
    return tmp_path


def cli_env(extra=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("DBGLOG_DIR", None)
    env.update(extra or {})
    return env


def run_cli(*args, cwd, input=None, env=None, timeout=120):
    """The real entry point in a subprocess (python -m dbglog), stdin not a terminal."""
    return subprocess.run(
        [sys.executable, "-m", "dbglog", *map(str, args)], cwd=cwd, input=input,
        capture_output=True, text=True, env=cli_env(env), timeout=timeout,
        stdin=None if input is not None else subprocess.DEVNULL,
    )


class InProcess:
    """Call dbglog.cli.main in-process (fast); returns (exit code, stdout, stderr)."""

    def __init__(self, capsys):
        self.capsys = capsys

    def __call__(self, *args):
        from dbglog.cli import main

        self.capsys.readouterr()
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        out = self.capsys.readouterr()
        return code, out.out, out.err


@pytest.fixture
def dbg(workdir, capsys):
    return InProcess(capsys)
