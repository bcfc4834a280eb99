"""For coding agents: mcp (dbglog/mcp_server.py), agent-guide, hook (dbglog/hooks.py).

Imports ``common`` and the agent-facing modules beside it. The `dbglog` executable sends `hook`
straight to dbglog/hooks.py (dbglog/entry.py); the command here is for callers of ``dbglog.cli.main``."""

from __future__ import annotations

import os
import sys

import click

from dbglog.cli.common import emit, json_option
from dbglog.util.errors import DbglogError


@click.command("mcp")
@click.option("--dir", "directory", type=click.Path(file_okay=False, exists=True),
              help="Serve the workspace found from this directory (default: the current one).")
def mcp_cmd(directory):
    """Serve the protocol to a coding agent as MCP tools over stdio (needs `pip install 'dbglog[mcp]'`).

    Tools: tried, search, new_investigation, add_attempt, add_difference, set_difference, next_steps,
    run_repro, bisect_status, show. Register it with your agent's client, e.g.
    `claude mcp add dbglog -- dbglog mcp` (see README, "For coding agents").
    """
    try:
        from dbglog import mcp_server
    except ImportError as e:
        msg = str(e) if "MCP Python SDK" in str(e) else f"dbglog mcp needs the MCP Python SDK ({e})"
        raise DbglogError(f"{msg}; install it with: pip install 'dbglog[mcp]'") from None
    if directory:
        os.chdir(directory)
    mcp_server.serve()


@click.command("agent-guide")
@json_option
def agent_guide(as_json):
    """Print the agent skill file: the protocol as a coding agent should follow it with dbglog
    (check, record, run, bisect, close). Save it where your agent reads skills or instructions,
    e.g. `dbglog agent-guide > .claude/skills/dbglog/SKILL.md`."""
    from pathlib import Path

    path = Path(__file__).parent.parent / "agent_guide.md"  # (package data of dbglog/)
    text = path.read_text(encoding="utf-8")
    emit(as_json, {"guide": text, "path": str(path)}, lambda: click.echo(text, nl=False))


@click.command("hook", context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                                      "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def hook_cmd(args):
    """Agent hook points: `dbglog hook pre-command|prompt|session-start` reads a shell command or a
    prompt (plain or Claude Code hook JSON) on stdin and prints a notice: prior failed attempts that
    did it, a circuit breaker after 3 identical failures, relevant prior attempts for a debugging
    prompt, a digest of the open investigations at session start. Always exits 0.
    """
    from dbglog.hooks import main as hook_main  # (the `dbglog` executable goes there without the CLI)

    sys.exit(hook_main(list(args)))
