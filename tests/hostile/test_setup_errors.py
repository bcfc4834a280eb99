"""Setup errors are refused up front (issue 30): one line, said once, exit 2, nothing recorded -- no
srun for --slurm, a missing binary, an unrunnable readiness command, an empty id for `use`; and the
MCP server answers the same line in structuredContent.error, argument errors included."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys

import pytest

from conftest import cli_env, run_cli, run_cli_inproc
from tree_guard import tree_guard  # noqa: F401 - kills what a probe started, pass or fail

REFUSED = {
    "--slurm without srun": (["run", "--slurm", "-N1", "--", sys.executable, "-c", "pass"], "srun"),
    "a missing binary": (["run", "--", "/nonexistent/binary"], "command not found: /nonexistent/binary"),
    "a program not on PATH": (["run", "--", "no-such-program-xyz"], "command not found: no-such-program-xyz"),
    "an unrunnable readiness command": (["run", "--server", f"{sys.executable} -c pass", "--ready", "no-such-probe",
                                         "--ready-timeout", "120", "--", sys.executable, "-c", "pass"],
                                        "readiness command not found: no-such-probe"),
    "a directory as the program": (["run", "--", "./"], "is a directory"),
}


def _one_line(p, needle: str) -> None:
    assert p.returncode == 2, (p.returncode, p.stderr)
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("dbglog: ") and needle in lines[0], p.stderr
    assert p.stderr.count(needle) == 1


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_setup_error_is_refused_at_once_in_one_line_and_records_nothing(workdir, case, monkeypatch):
    # A PATH with no srun on it, whatever this machine has (CI installs Slurm into /usr/bin): the test's Python and
    # a directory of links to the few tools a run may call, srun left out.
    tools = workdir.parent / f"{workdir.name}-bin"
    tools.mkdir(exist_ok=True)
    for name in ("git", "sh", "env"):
        found = shutil.which(name)
        if found and not (tools / name).exists():
            (tools / name).symlink_to(found)
    monkeypatch.setenv("PATH", f"{os.path.dirname(sys.executable)}:{tools}")
    args, needle = REFUSED[case]
    assert run_cli_inproc(workdir, "init").returncode == 0
    _one_line(run_cli(*args, cwd=workdir, timeout=60), needle)
    runs = json.loads(run_cli_inproc(workdir, "runs", "list", "--json").stdout)
    assert runs == []
    assert not any((workdir / ".dbglog" / "runs").glob("*")) if (workdir / ".dbglog" / "runs").exists() else True


def test_use_with_an_empty_id_is_refused(workdir):
    assert run_cli_inproc(workdir, "new", "first", "--no-env").returncode == 0
    assert run_cli_inproc(workdir, "new", "second", "--no-env").returncode == 0
    before = json.loads(run_cli_inproc(workdir, "list", "--json").stdout)
    p = run_cli_inproc(workdir, "use", "")
    assert p.returncode == 2 and "needs an investigation" in p.stderr and p.stderr.count("\n") == 1
    assert json.loads(run_cli_inproc(workdir, "list", "--json").stdout) == before


def test_git_bisect_run_still_skips_a_commit_whose_program_is_missing(workdir):
    p = run_cli("run", "--quiet", "--git-bisect-exit", "--", "no-such-build-output", cwd=workdir)
    assert p.returncode == 125  # exit 2 would read as "bad" to git bisect


def test_mcp_errors_carry_the_clis_one_line(workdir):
    mcp = pytest.importorskip("mcp")
    from mcp import ClientSession, StdioServerParameters, stdio_client

    assert run_cli_inproc(workdir, "init").returncode == 0

    async def main():
        params = StdioServerParameters(command=sys.executable, args=["-m", "dbglog", "mcp"], cwd=str(workdir),
                                       env=cli_env())
        async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
            await session.initialize()
            out = []
            for args in ({"cmd": ["/nonexistent/binary"]}, {"cmd": ["true"], "timeout": "soon"},
                         {"cmd": "not a list", "timeout": "later"}):
                res = await session.call_tool("run_repro", args)
                out.append((res.is_error, res.structured_content, res.content[0].text))
            return out

    assert mcp is not None
    answers = asyncio.run(asyncio.wait_for(main(), 120))
    for is_error, structured, text in answers:
        assert is_error and set(structured) == {"error"} and structured["error"] == text
        assert "\n" not in text and "pydantic" not in text and "http" not in text, text
    assert answers[0][1]["error"].startswith("command not found: /nonexistent/binary")
    assert "timeout" in answers[1][1]["error"]
    assert "cmd" in answers[2][1]["error"] and "more" in answers[2][1]["error"]
    runs = json.loads(run_cli_inproc(workdir, "runs", "list", "--json").stdout)
    assert runs == []


@pytest.mark.parametrize("args", [["init"], ["new", "a title", "--no-env"],
                                  ["run", "--", "sh", "-c", "touch ran"]], ids=["init", "new", "run"])
def test_a_workspace_path_that_is_not_utf8_is_refused_before_anything_is_made_or_run(tmp_path, args):
    d = os.fsencode(tmp_path) + b"/ws\xffZ"  # (a directory name in Latin-1, say)
    os.mkdir(d)
    os.mkdir(d + b"/.git")
    import subprocess

    p = subprocess.run([sys.executable, "-m", "dbglog", *args], cwd=d, env=cli_env(), capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=120)
    _one_line(p, "is not valid UTF-8")  # before: an internal UnicodeDecodeError, or the run lost after it ran
    assert sorted(os.listdir(d)) == [b".git"]  # no .dbglog/, no logs/, and the repro did not run
