"""The CLI package (dbglog/cli/): one table of commands, each group's module imported on use."""

import subprocess
import sys

import click

from conftest import cli_env
from test_layers import LAYERS, _modules


def test_every_command_in_the_table_is_a_command_of_a_layer_4_module():
    from dbglog.cli import COMMANDS, cli

    mods = _modules()
    for name, spec in COMMANDS.items():
        module = "dbglog.cli." + spec.split(":")[0]
        assert module in mods and module in LAYERS[4], (name, module)
        cmd = cli.commands[name]
        assert isinstance(cmd, click.Command) and cmd.name == name, (name, cmd)
    assert list(cli.list_commands(click.Context(cli))) == list(COMMANDS)  # --help's order is the table's
    # every module of the package is in the table (or is the shared plumbing)
    in_table = {"dbglog.cli." + s.split(":")[0] for s in COMMANDS.values()}
    assert {m for m in mods if m.startswith("dbglog.cli.")} == in_table | {"dbglog.cli.common"}


def test_a_command_imports_only_its_own_group():
    code = ("import sys; from dbglog.cli import cli; cli.commands['show']; "
            "print(' '.join(sorted(m for m in sys.modules if m.startswith('dbglog.cli.'))))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env(), timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["dbglog.cli.common", "dbglog.cli.records"]


def test_unknown_command_is_one_line_with_a_suggestion(dbg):
    code, out, err = dbg("serch", "p2p")
    assert code == 2 and out == ""
    assert err == "dbglog: No such command 'serch'. Did you mean 'search'? (see `dbglog --help`)\n"


def test_a_group_named_alone_shows_its_help_not_a_squashed_error(dbg):
    code, out, err = dbg("attempt")
    assert code == 0 and out.startswith("Usage: dbglog attempt") and "\n  add " in out
    assert "dbglog:" not in err


def test_shared_option_groups_read_the_same_in_every_command():
    """run, bisect git and bisect toggles take their supervision options from one definition each
    (cli/common.py); what differs on purpose is the help's subject (run / step / trial)."""
    from dbglog.cli import cli

    bis = cli.commands["bisect"]
    cmds = {"run": cli.commands["run"], "git": bis.commands["git"], "toggles": bis.commands["toggles"]}

    def spec(cmd, name):
        (p,) = [p for p in cmd.params if p.name == name]
        return tuple(p.opts), type(p.type).__name__, p.default, p.multiple

    for name in ("timeout", "grace", "ready_timeout", "server", "ready", "slurm_args", "idle_timeout", "captures",
                 "on_hang", "escalate", "repeat"):
        assert len({spec(c, name) for c in cmds.values()}) == 1, name
    for name in ("launcher", "scratch", "shared_cache", "jobs"):
        assert spec(cmds["git"], name)[::2] == spec(cmds["toggles"], name)[::2], name
    for name in ("tags", "inv_ref"):
        assert spec(cli.commands["search"], name) == spec(cli.commands["tried"], name)
