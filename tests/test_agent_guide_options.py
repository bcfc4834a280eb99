"""The agent guide covers intermittent failures and server-shaped repros, and every option it
names is a real option of some dbglog command (the guide cannot drift from the CLI unnoticed)."""

import re
from pathlib import Path

import click

import dbglog
from dbglog.cli import cli

GUIDE = (Path(dbglog.__file__).parent / "agent_guide.md").read_text()


def _options(cmd: click.Command) -> set[str]:
    out = {o for p in cmd.params for o in getattr(p, "opts", []) if o.startswith("--")}
    for sub in getattr(cmd, "commands", {}).values():
        out |= _options(sub)
    return out


def test_the_guide_names_flaky_server_and_ready():
    named = set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", GUIDE))
    assert {"--flaky", "--server", "--ready", "--repeat", "--git-bisect-exit"} <= named
    assert "Intermittent failures" in GUIDE and "Server-shaped repros" in GUIDE


def test_every_option_the_guide_names_exists():
    named = set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", GUIDE))
    missing = named - _options(cli)
    assert not missing, f"the guide names options no command has: {sorted(missing)}"


def test_the_reference_is_generated_so_every_command_and_tool_has_an_entry(tmp_path):
    # the guide from a subprocess: listing the MCP tools imports the MCP SDK, which must not happen
    # inside this test process (its stdio client binds sys.stderr at import)
    from conftest import run_cli
    from dbglog.cli import COMMANDS
    from dbglog.cli.agents import command_rows

    p = run_cli("agent-guide", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    text = p.stdout
    rows = command_rows(cli)
    for name, what, _opts in rows:
        assert what, f"`dbglog {name}` has no help text: its reference entry would be empty"
        assert f"| `dbglog {name}` | {what.replace('|', '/')}" in text
    assert {r[0].split()[0] for r in rows} == set(COMMANDS)  # every registered command, none invented
    if "| MCP tool |" in text:  # the MCP extra is installed
        row = next(line for line in text.splitlines() if line.startswith("| `run_repro` |"))
        for param in ("server", "ready", "ready_timeout", "idle_timeout", "escalate"):
            assert f"`{param}`" in row
