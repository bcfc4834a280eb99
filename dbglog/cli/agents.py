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
    root = click.get_current_context().find_root().command  # the registry, without importing dbglog.cli
    text = path.read_text(encoding="utf-8").rstrip("\n") + "\n\n" + reference(root) + "\n"
    emit(as_json, {"guide": text, "path": str(path)}, lambda: click.echo(text, nl=False))


def _first_line(text: str | None) -> str:
    return " ".join((text or "").strip().split("\n\n")[0].split())


def command_rows(cli: click.Group) -> list[tuple[str, str, list[str]]]:
    """(command, what it does, its options) for every command of the CLI registry ``cli``,
    sub-commands included: generated, so the reference cannot miss one."""
    rows = []

    def walk(prefix: str, cmd) -> None:
        subs = getattr(cmd, "commands", None)
        if subs:
            for name in sorted(subs):
                walk(f"{prefix} {name}".strip(), subs[name])
            return
        opts = sorted({o for p in cmd.params for o in getattr(p, "opts", []) if o.startswith("--")})
        rows.append((prefix, _first_line(cmd.help), opts))

    for name in cli.commands:
        walk(name, cli.commands[name])
    return rows


def tool_rows() -> list[tuple[str, str, list[str]]]:
    """(tool, what it does, its parameters) for every MCP tool (``mcp_server.TOOLS``), read from the
    module's source: importing it would import the MCP SDK (an extra), which the guide does not need."""
    import ast
    from pathlib import Path

    tree = ast.parse((Path(__file__).parent.parent / "mcp_server.py").read_text(encoding="utf-8"))
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    names: list[str] = []
    for n in tree.body:
        if isinstance(n, ast.Assign) and any(getattr(t, "id", None) == "TOOLS" for t in n.targets):
            names = [e.id for e in getattr(n.value, "elts", []) if isinstance(e, ast.Name)]
    return [(name, _first_line(ast.get_docstring(funcs[name])), [a.arg for a in funcs[name].args.args])
            for name in names if name in funcs]


def reference(cli: click.Group) -> str:
    """The generated part of the guide: every command with its options, every MCP tool with its
    parameters (from the registries, so a new command or parameter shows up by itself)."""
    lines = ["## Reference (generated from the command and tool registries)", "",
             "| command | what it does | options |", "|---|---|---|"]
    for name, what, opts in command_rows(cli):
        lines.append(f"| `dbglog {name}` | {what.replace('|', '/')} | {' '.join(f'`{o}`' for o in opts)} |")
    tools = tool_rows()
    if tools:
        lines += ["", "| MCP tool | what it does | parameters |", "|---|---|---|"]
        for name, what, params in tools:
            lines.append(f"| `{name}` | {what.replace('|', '/')} | {' '.join(f'`{p}`' for p in params)} |")
    return "\n".join(lines)


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
