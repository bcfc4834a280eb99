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
