"""The docs site's generated reference pages, read from the registries (never written by hand).

Each table comes from the one place the code registers the thing it lists, so a command, MCP tool,
failure signature, capture preset or toggle kind added there appears here at the next build:

    reference/commands.md      dbglog.cli.COMMANDS and each command's click help
    reference/mcp-tools.md     dbglog.mcp_server.TOOLS (signatures, docstrings, result models)
    reference/signatures.md    dbglog.run.signatures.BUILTIN
    reference/captures.md      dbglog.run.captures.REGISTRY
    reference/toggle-kinds.md  dbglog.bisect.kinds.REGISTRY
    architecture.md            ARCHITECTURE.md, after the hand-written docs/architecture.md
    index.md                   README.md (one text for the code host and the site)

``docs/hooks.py`` hands these pages to mkdocs at build time (nothing generated is committed);
``python docs/gen.py OUTDIR`` writes them to a folder (what tests/test_docs_site.py checks).
"""

from __future__ import annotations

import inspect
import sys
import typing
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# which hand-written page documents each command module of dbglog/cli/
GROUP_PAGES = {
    "records": "commands/records.md", "run": "commands/run.md", "search": "commands/search.md",
    "bisect": "commands/bisect-git.md", "agents": "agents.md", "io": "commands/import-sync.md",
    "demo": "index.md", "report": "commands/report.md", "failures": "seen-before.md",
}
# a subcommand documented on a page of its own (longest prefix wins over its module's page)
COMMAND_PAGES = {"bisect toggles": "commands/bisect-toggles.md"}


def _cell(text: object) -> str:
    return " ".join(str(text if text is not None else "").split()).replace("|", "\\|")


def _first_paragraph(doc: str | None) -> str:
    return _cell(inspect.cleandoc(doc or "").split("\n\n")[0])


def _help_text(cmd, path: list[str]) -> str:
    import click

    ctx = click.Context(cmd, info_name=" ".join(path), terminal_width=100, max_content_width=100)
    return cmd.get_help(ctx)


def _walk(cmd, path: list[str]):
    import click

    yield path, cmd
    if isinstance(cmd, click.Group):
        for name in cmd.list_commands(None):
            yield from _walk(cmd.get_command(None, name), [*path, name])


def commands_page() -> str:
    from dbglog.cli import COMMANDS, cli

    rows, blocks = [], []
    for name, target in COMMANDS.items():
        module = target.partition(":")[0]
        for path, cmd in _walk(cli.commands[name], ["dbglog", name]):
            title = " ".join(path)
            anchor = "-".join(path[1:])
            page = next((p for pre, p in COMMAND_PAGES.items() if f"{title} ".startswith(f"dbglog {pre} ")),
                        GROUP_PAGES.get(module))
            if page and not (ROOT / "docs" / page).exists() and page != "index.md":
                page = None  # (a topic page not written yet: no link that would break the build)
            where = f"[{page.rsplit('/', 1)[-1][:-3]}](../{page})" if page else module
            rows.append(f"| [`{title}`](#{anchor}) | {_cell(cmd.get_short_help_str(limit=120))} | {where} |")
            blocks.append(f"## {title} {{#{anchor}}}\n\n```text\n{_help_text(cmd, path).rstrip()}\n```\n")
    head = ("# Command reference\n\nGenerated from `COMMANDS` in `dbglog/cli/__init__.py` and each command's "
            "`--help`. Every command takes `--json`; `-i/--investigation ID` picks the investigation "
            "(default: the current one).\n\n| command | does | documented in |\n|---|---|---|\n")
    return head + "\n".join(rows) + "\n\n" + "\n".join(blocks)


def _type_text(t) -> str:
    text = t if isinstance(t, str) else getattr(t, "__name__", None) or str(t)
    return text.replace("typing.", "").replace("NoneType", "None")


def mcp_page() -> str:
    from dbglog import mcp_server

    hints_of = typing.get_type_hints
    rows = []
    for fn in mcp_server.TOOLS:
        sig = inspect.signature(fn)
        args = ", ".join(p.name + ("?" if p.default is not inspect.Parameter.empty else "")
                         for p in sig.parameters.values())
        ret = hints_of(fn, vars(mcp_server)).get("return")
        fields = ", ".join(f"`{f}`" for f in getattr(ret, "model_fields", {})) or _type_text(ret)
        ro = "read-only" if fn.__name__ in mcp_server.READ_ONLY else "writes"
        rows.append(f"| `{fn.__name__}({args})` | {_first_paragraph(fn.__doc__)} | {ro} | {fields} |")
    return ("# MCP tools\n\nGenerated from `TOOLS` in `dbglog/mcp_server.py` (`?`: optional). Each tool calls "
            "the same function as its command; every result also carries `warnings[]`. See "
            "[Coding agents](../agents.md) for setting up `dbglog mcp`.\n\n"
            "| tool | does | | returns |\n|---|---|---|---|\n" + "\n".join(rows) + "\n")


def signatures_page() -> str:
    from dbglog.run.signatures import BUILTIN

    rows = []
    for s in sorted(BUILTIN, key=lambda s: (-s.rank, s.name)):
        needles = sorted({n for group in s.needles for n in (group or ())})[:3]
        role = "wrapper (never the cause)" if s.wrapper else (s.outcome or "")
        rows.append(f"| `{s.name}` | {s.rank} | {_cell(role)} | {_cell(', '.join(f'`{n}`' for n in needles))} |")
    return ("# Failure signatures\n\nGenerated from `BUILTIN` in `dbglog/run/signatures.py`: "
            f"{len(BUILTIN)} entries, highest rank (most causal) first. A run reports the highest-ranked "
            "signature its output matches; a line is tried against a pattern only when it holds one of "
            "the pattern's literal needles. Your own go in `.dbglog/config.toml` "
            "([Supervised runs](../commands/run.md)); `dbglog signature list` prints this list with yours.\n\n"
            "| signature | rank | outcome or role | needles (first three) |\n|---|---|---|---|\n"
            + "\n".join(rows) + "\n")


def captures_page() -> str:
    from dbglog.run.captures import REGISTRY

    rows = []
    for p in sorted(REGISTRY.values(), key=lambda p: (p.order, p.name)):
        acts = [w for w, f in (("sets env", p.env), ("checks", p.check), ("starts the repro", p.wrap),
                               ("on hang", p.on_hang), ("after the run", p.after)) if f]
        limit = f"{p.time_limit:g} s" if p.time_limit else ""
        rows.append(f"| `{p.name}` | {_cell(p.help)} | {p.targets} | {p.order} | {limit} | {', '.join(acts)} |")
    return ("# Capture presets\n\nGenerated from `REGISTRY` in `dbglog/run/captures.py` (`--capture NAME` on "
            "`run` and the bisections; the MCP `run_repro` tool's `captures`), in the order they act: "
            "passive first. Adding one: [Contributing](../contributing.md).\n\n"
            "| preset | does | targets | order | time limit | acts |\n|---|---|---|---|---|---|\n"
            + "\n".join(rows) + "\n")


def kinds_page() -> str:
    from dbglog.bisect.kinds import REGISTRY

    rows = []
    for k in REGISTRY.values():
        opts = "<br>".join(f"`{o.flag} {o.metavar}`: {_cell(o.help)}" for o in k.options)
        forms = " / ".join(f"`{f}`" for f in (k.apply_forms or ()))
        rows.append(f"| `{k.name}` | {opts} | {forms} |")
    return ("# Toggle kinds\n\nGenerated from `REGISTRY` in `dbglog/bisect/kinds.py`: the options each kind "
            "adds to `dbglog bisect toggles` and the apply specs a key-differences row may carry "
            "(`diff add/set --apply`). See [Bisecting toggles](../commands/bisect-toggles.md).\n\n"
            "| kind | options | apply spec (from the row / explicit) |\n|---|---|---|\n" + "\n".join(rows) + "\n")


def architecture_page() -> str:
    hand = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    arch = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    body = arch.split("\n", 1)[1]  # its own `# dbglog architecture` title gives way to the page's
    return hand.rstrip() + "\n\n## The map (ARCHITECTURE.md)\n" + body.replace("\n## ", "\n### ")


def index_page() -> str:
    """The home page is README.md, its links into docs/ made relative to the site."""
    return (ROOT / "README.md").read_text(encoding="utf-8").replace("](docs/", "](")


def pages() -> dict[str, str]:
    """Path under docs/ -> markdown."""
    return {
        "index.md": index_page(),
        "reference/commands.md": commands_page(),
        "reference/mcp-tools.md": mcp_page(),
        "reference/signatures.md": signatures_page(),
        "reference/captures.md": captures_page(),
        "reference/toggle-kinds.md": kinds_page(),
        "architecture.md": architecture_page(),
    }


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python docs/gen.py OUTDIR", file=sys.stderr)
        return 2
    out = Path(argv[0])
    for rel, text in pages().items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text, encoding="utf-8")
        print(out / rel)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
