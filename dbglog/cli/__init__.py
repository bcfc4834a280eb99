"""Command line: parse arguments, call the library, print. Nothing else lives here.

Every command takes ``--json`` (stable shapes, documented in README.md). Errors the user can
fix print one line ``dbglog: ...`` to stderr and exit 2, with ``{"error": ...}`` on stdout
under ``--json``. Heavy modules (rich, jinja2, markdown-it) are imported only by the commands
that need them, so ``dbglog --help`` stays fast.

This package (layer 4, commands) holds the click group, ``main`` and the table of commands;
each command group lives in its own module and is imported only when it is run (or listed by
``--help``)::

    common.py   the shared plumbing: emit, --json/-i options, option groups, ParamTypes, checks
    records.py  init, new, list, show, use, status, attempt, diff, next
    run.py      run, rerun, runs, env, signature
    failures.py failures (fingerprints seen here)
    search.py   search, tried
    bisect.py   the bisect group
    agents.py   mcp, agent-guide, hook
    io.py       import, sync, reindex, doctor, export, merge-driver
    report.py   report
    demo.py     demo

A command module imports ``common`` and the services below (ops, records, runner, bisect/...),
never another command module. Adding a command: define it in its group's module and add one
row to ``COMMANDS`` below (the order is the order of ``dbglog --help``).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import MutableMapping

import click

from dbglog.cli.common import safe_text
from dbglog.util.errors import DbglogError

# name -> "module:attribute" under dbglog/cli/, in the protocol's order (the order of --help)
COMMANDS = {
    "init": "records:init", "new": "records:new", "list": "records:list_", "show": "records:show",
    "use": "records:use", "status": "records:status", "attempt": "records:attempt", "diff": "records:diff",
    "next": "records:next_",
    "run": "run:run", "rerun": "run:rerun", "runs": "run:runs", "failures": "failures:failures", "env": "run:env_cmd",
    "signature": "run:signature",
    "bisect": "bisect:bisect_group",
    "search": "search:search_cmd", "tried": "search:tried",
    "mcp": "agents:mcp_cmd", "agent-guide": "agents:agent_guide", "hook": "agents:hook_cmd",
    "merge-driver": "io:merge_driver",
    "import": "io:import_cmd", "sync": "io:sync_cmd", "reindex": "io:reindex", "doctor": "io:doctor",
    "export": "io:export",
    "report": "report:report_cmd",
    "demo": "demo:demo",
}


class _LazyCommands(MutableMapping):
    """The group's commands, every name known up front, each module imported on first use: `dbglog
    show` does not pay for building the options of `bisect toggles`."""

    def __init__(self, table: dict[str, str]):
        self._table = dict(table)
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._loaded:
            module, _, attr = self._table[name].partition(":")  # KeyError: no such command
            try:  # (__import__, not importlib.import_module: `python -X importtime` then lists the module)
                __import__(f"dbglog.cli.{module}")
                self._loaded[name] = getattr(sys.modules[f"dbglog.cli.{module}"], attr)
            except KeyError as e:  # a bug in the module, not "no such command" (Mapping.get would say that)
                raise RuntimeError(f"dbglog.cli.{module}: {e!r}") from e
        return self._loaded[name]

    def __setitem__(self, name: str, cmd: click.Command) -> None:
        self._table.setdefault(name, "")
        self._loaded[name] = cmd

    def __delitem__(self, name: str) -> None:
        del self._table[name]
        self._loaded.pop(name, None)

    def __iter__(self):
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)


class Group(click.Group):
    def list_commands(self, ctx):
        return list(self.commands)  # table order: the protocol's order


@click.group(cls=Group, commands=_LazyCommands(COMMANDS), context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="dbglog")
def cli():
    """dbglog: a debug-log knowledge base and bisection assistant.

    Search what was tried, record attempts, keep the key-differences table and the
    what-to-try-next list, mirrored to reviewable markdown in logs/.
    """


def _check_argv(args) -> list[str]:
    """Arguments that are not UTF-8 (bytes from a shell, decoded with surrogates) would fail deep in
    a write as an internal error: refuse them first. UTF-8 bytes that an ASCII locale decoded with
    surrogates (LC_ALL=C with PYTHONUTF8=0) are read as the UTF-8 they are. (The merge driver takes git's
    paths as given.)"""
    if args and args[0] == "merge-driver":
        return list(args)
    out = []
    for n, a in enumerate(args, 1):
        try:
            a.encode("utf-8")
        except UnicodeEncodeError:
            try:
                a = os.fsencode(a).decode("utf-8")
            except (UnicodeError, ValueError):
                shown = a.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
                raise DbglogError(f"argument {n} ({shown!r}) is not valid UTF-8; pass text in UTF-8") from None
        out.append(a)
    return out


# click >= 8.2 raises this for a group run with no command (older click printed the help and exited 0 itself)
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


def main(argv=None) -> None:
    _keep_workspace()  # (what an earlier command of this process set up is not this one's to remove)
    try:
        args = _check_argv(sys.argv[1:] if argv is None else list(argv))
        cli.main(args=args, prog_name="dbglog", standalone_mode=False)
        _keep_workspace()
    except DbglogError as e:
        _fail(str(e), e.exit_code, argv)
    except click.exceptions.Abort:
        _drop_listing()
        _drop_workspace()
        click.echo("dbglog: aborted", err=True)
        sys.exit(130)
    except _NO_ARGS_IS_HELP as e:  # `dbglog attempt`: a group named alone shows its help, as `--help` would
        click.echo(e.ctx.get_help() if getattr(e, "ctx", None) is not None else e.format_message())
        sys.exit(0)
    except click.ClickException as e:
        ctx = getattr(e, "ctx", None)
        hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
        _fail(e.format_message().replace("\n", " ") + hint, 2, argv)
    except KeyboardInterrupt:
        _drop_listing()
        _drop_workspace()
        click.echo("dbglog: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    except Exception as e:  # a bug of ours: say so in one line, traceback on request
        from dbglog.util.fserrors import damaged_database, describe

        machine = describe(e) or damaged_database(e)  # a full disk, a read-only file system, damage: not a bug
        if machine is not None and not os.environ.get("DBGLOG_DEBUG"):
            _fail(machine, 2, argv)
        if os.environ.get("DBGLOG_DEBUG"):
            raise
        _fail(f"internal error: {type(e).__name__}: {e} (set DBGLOG_DEBUG=1 for the traceback)", 1, argv)
    sys.exit(0)


def _keep_workspace() -> None:
    ws = sys.modules.get("dbglog.util.workspace")
    if ws is not None:
        ws.keep_created()


def _drop_workspace() -> None:
    ws = sys.modules.get("dbglog.util.workspace")
    if ws is not None:
        ws.drop_created()  # (one this command set up on its way, if it holds nothing)


def _drop_listing() -> None:
    sync = sys.modules.get("dbglog.kb.sync")
    if sync is not None:
        sync.drop_listing()


GIT_BISECT_STOP = 128  # (git bisect run aborts on an exit code above 127)


def _fail(message: str, code: int, argv) -> None:
    _drop_listing()  # a command that reports an error changes nothing, the freshness cache included
    _drop_workspace()
    from dbglog.util.redact import redact

    message = redact(safe_text(message))  # it may quote what the user typed or a file held (a token among them)
    args = sys.argv[1:] if argv is None else argv
    if "--json" in args:
        click.echo(json.dumps({"error": message}))
    if code != 0 and "--git-bisect-exit" in args[:args.index("--") if "--" in args else len(args)]:
        # `git bisect run` reads 1-127 but 125 as "bad": a typo in dbglog's own options would blame a commit
        message, code = f"{message} (exit {GIT_BISECT_STOP}: git bisect run stops on dbglog's own error)", GIT_BISECT_STOP
    click.echo(f"dbglog: {message}", err=True)
    sys.exit(code)

