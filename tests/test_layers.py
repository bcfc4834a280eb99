"""The package imports downward only and has no import cycles (ARCHITECTURE.md).

Read with ``ast`` over the source, function-local imports included: a cycle hidden inside a
function body is still a cycle (it only moves the failure to run time).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "dbglog"

# Higher imports lower, never the reverse. A module not listed here (a new one) is checked for
# cycles and for importing the command layer, and should be added to its layer.
LAYERS = {
    4: {"dbglog.cli", "dbglog.cli.common", "dbglog.cli.records", "dbglog.cli.run", "dbglog.cli.search",
        "dbglog.cli.bisect", "dbglog.cli.agents", "dbglog.cli.io", "dbglog.cli.demo",
        "dbglog.demo", "dbglog.mcp_server", "dbglog.hooks", "dbglog.entry", "dbglog.__main__",
        "dbglog.fastpath"},
    3: {"dbglog.ops", "dbglog.kb.records", "dbglog.kb.llmjudge", "dbglog.kb.importer", "dbglog.run.runner", "dbglog.bisect",
        "dbglog.bisect.history", "dbglog.bisect.toggles", "dbglog.bisect.kinds", "dbglog.bisect.session", "dbglog.bisect.journal",
        "dbglog.bisect.lifecycle", "dbglog.bisect.oracle", "dbglog.bisect.flaky", "dbglog.bisect.spec",
        "dbglog.bisect.suspects", "dbglog.bisect.configedit", "dbglog.run.captures", "dbglog.run.serve"},
    2: {"dbglog.kb.mirror", "dbglog.docreader", "dbglog.docreader.reader", "dbglog.docreader.outline",
        "dbglog.docreader.vocab", "dbglog.docreader.text", "dbglog.docreader.yardstick", "dbglog.docreader.narrative", "dbglog.kb.store",
        "dbglog.kb.sync", "dbglog.kb.merge", "dbglog.kb.sections", "dbglog.kb.search", "dbglog.kb.present"},
    1: {"dbglog.kb.model", "dbglog.kb.outcome", "dbglog.kb.synonyms", "dbglog.kb.experiment", "dbglog.run.signatures", "dbglog.run.evidence",
        "dbglog.run.advice", "dbglog.run.envinfo", "dbglog.kb.story", "dbglog.util.redact", "dbglog.util.fserrors", "dbglog.util.errors", "dbglog.util.fsutil",
        "dbglog.util.config", "dbglog.util.lazyre",
        "dbglog.util.workspace", "dbglog.coop", "dbglog.bisect.algorithms", "dbglog.run.proctree", "dbglog", "dbglog.run.escalate",
        "dbglog.run.preflight", "dbglog.run.flightrec", "dbglog.kb", "dbglog.run", "dbglog.util"},
}
RANK = {m: r for r, mods in LAYERS.items() for m in mods}
COMMANDS = LAYERS[4]
# The console entry point dispatches to the commands; the demo drives the bisect commands' demos.
ALLOWED_UP = {("dbglog.entry", "dbglog.cli"), ("dbglog.entry", "dbglog.hooks"), ("dbglog.__main__", "dbglog.entry"),
              ("dbglog.__main__", "dbglog.cli")}


def _modules() -> dict[str, Path]:
    out = {}
    for p in PKG.rglob("*.py"):
        parts = list(p.relative_to(PKG.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


@functools.cache  # parsing the package costs ~1 s; three tests read the same graph
def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, p in mods.items():
        pkg = m if p.name == "__init__.py" else m.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                    base = ".".join(up + ([node.module] if node.module else []))
                # `from dbglog import x` imports the submodule x (or a name of the package itself)
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            else:
                continue
            graph[m] |= {n for n in names if n in mods and n != m}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles():
    assert _cycles(import_graph()) == []


def test_imports_go_downward_only():
    bad = []
    for m, targets in import_graph().items():
        for t in targets:
            if (m, t) in ALLOWED_UP:
                continue
            if t in COMMANDS and m not in COMMANDS:
                bad.append(f"{m} -> {t} (a command)")
            elif m in RANK and t in RANK and RANK[t] > RANK[m]:
                bad.append(f"{m} (layer {RANK[m]}) -> {t} (layer {RANK[t]})")
    assert bad == []


def test_the_checker_sees_cycles_and_upward_imports():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]
    graph = import_graph()
    assert "dbglog.kb.records" in graph["dbglog.cli.records"] or "dbglog.ops" in graph["dbglog.cli.records"]
    assert "dbglog.util.fsutil" in graph["dbglog.kb.records"]  # a module-level import
    assert "dbglog.run.runner" in graph["dbglog.ops"]  # a function-local import is seen too


# The folders (ARCHITECTURE.md, each package's docstring): which other folders a module in one may import.
# `dbglog.kb.records` -> `dbglog.bisect.journal` is the one sideways call (restore a killed in-place
# bisection's edits whenever a workspace opens), named so that no other slips in.
FOLDERS = {
    "util": set(),
    "run": {"util"},
    "kb": {"util", "docreader"},
    "docreader": {"kb", "util"},
    "bisect": {"run", "util", "coop"},
}
FOLDER_EXCEPTIONS = {("dbglog.kb.records", "dbglog.bisect.journal")}


def _folder(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_folders_import_only_the_folders_their_docstring_allows():
    bad = []
    for m, deps in import_graph().items():
        own = _folder(m)
        if own not in FOLDERS:
            continue
        for d in deps:
            other = _folder(d)
            if other != own and other not in FOLDERS[own] and (m, d) not in FOLDER_EXCEPTIONS:
                bad.append(f"{m} -> {d}")
    assert sorted(bad) == []


def test_every_folder_says_what_lives_there():
    for folder in FOLDERS:
        doc = ast.get_docstring(ast.parse((PKG / folder / "__init__.py").read_text(encoding="utf-8")))
        assert doc and len(doc) > 80, folder
