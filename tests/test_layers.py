"""The package imports downward only and has no import cycles (ARCHITECTURE.md).

Read with ``ast`` over the source, function-local imports included: a cycle hidden inside a
function body is still a cycle (it only moves the failure to run time). An import by name
(``importlib.import_module``, ``__import__``) hides its edge from this reading, so there is one: the
command table of ``cli/__init__.py`` (``BY_NAME``), whose rows are read here as edges too; any other
fails. Every module has a layer, and ARCHITECTURE.md's layer table says the same as ``LAYERS``.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "dbglog"

# Higher imports lower, never the reverse. Every module has a layer: listed here, or by its folder
# (FOLDER_LAYER: every module of core/, util/ and diagnose/ is a value, a reader or a utility).
LAYERS = {
    4: {"dbglog.cli", "dbglog.cli.common", "dbglog.cli.records", "dbglog.cli.run", "dbglog.cli.search",
        "dbglog.cli.bisect", "dbglog.cli.agents", "dbglog.cli.io", "dbglog.cli.demo", "dbglog.cli.failures",
        "dbglog.demo", "dbglog.mcp_server", "dbglog.hooks", "dbglog.entry", "dbglog.__main__",
        "dbglog.fastpath"},
    3: {"dbglog.ops", "dbglog.kb.records", "dbglog.kb.llmjudge", "dbglog.kb.importer", "dbglog.run.runner", "dbglog.bisect",
        "dbglog.bisect.history", "dbglog.bisect.toggles", "dbglog.bisect.kinds", "dbglog.bisect.session", "dbglog.bisect.journal",
        "dbglog.bisect.lifecycle", "dbglog.bisect.oracle", "dbglog.bisect.flaky", "dbglog.bisect.spec",
        "dbglog.bisect.suspects", "dbglog.bisect.configedit", "dbglog.run.captures", "dbglog.run.serve",
        "dbglog.bisect.drivers"},
    2: {"dbglog.kb.mirror", "dbglog.docreader", "dbglog.docreader.read", "dbglog.docreader.units",
        "dbglog.docreader.cues", "dbglog.docreader.scorer", "dbglog.docreader.linker", "dbglog.docreader.structure",
        "dbglog.docreader.review", "dbglog.docreader.llm", "dbglog.docreader.learned",
        "dbglog.docreader.vocab", "dbglog.docreader.columns", "dbglog.docreader.text", "dbglog.docreader.yardstick", "dbglog.docreader.delimited", "dbglog.kb.store",
        "dbglog.kb.sync", "dbglog.kb.merge", "dbglog.kb.sections", "dbglog.kb.search", "dbglog.kb.present",
        "dbglog.kb.failures"},
    1: {"dbglog.kb.rates", "dbglog.kb.experiment", "dbglog.run.signatures", "dbglog.run.evidence",
        "dbglog.run.advice", "dbglog.run.envinfo", "dbglog.kb.story", "dbglog.util.redact", "dbglog.util.fserrors", "dbglog.util.errors", "dbglog.util.fsutil",
        "dbglog.util.config", "dbglog.util.lazyre",
        "dbglog.util.workspace", "dbglog.coop", "dbglog.bisect.algorithms", "dbglog.run.proctree", "dbglog", "dbglog.run.escalate",
        "dbglog.run.preflight", "dbglog.run.flightrec", "dbglog.kb", "dbglog.run", "dbglog.util",
        "dbglog.run.options", "dbglog.run.slurm", "dbglog.bisect.bayes", "dbglog.core"},
}
# `dbglog report` (its command, the service, the bisection charts; util/svgchart is layer 1 by its folder)
LAYERS[4] |= {"dbglog.cli.report"}
LAYERS[3] |= {"dbglog.report", "dbglog.bisect.chart"}
FOLDER_LAYER = {"core": 1, "util": 1, "diagnose": 1}
# The one import by name: module -> the table whose rows it imports (``"module:attribute"`` under it).
BY_NAME = {"dbglog.cli": "COMMANDS"}
COMMANDS = LAYERS[4]


def _modules() -> dict[str, Path]:
    out = {}
    for p in PKG.rglob("*.py"):
        parts = list(p.relative_to(PKG.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def _folder(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _ranks() -> dict[str, int]:
    """Every module's layer: its row of LAYERS, else its folder's; unranked modules are left out."""
    ranks = {}
    for m in _modules():
        if m in {x for mods in LAYERS.values() for x in mods}:
            ranks[m] = next(r for r, mods in LAYERS.items() if m in mods)
        elif _folder(m) in FOLDER_LAYER:
            ranks[m] = FOLDER_LAYER[_folder(m)]
    return ranks


RANK = _ranks()
# The console entry point dispatches to the commands; the demo drives the bisect commands' demos.
ALLOWED_UP = {("dbglog.entry", "dbglog.cli"), ("dbglog.entry", "dbglog.hooks"), ("dbglog.__main__", "dbglog.entry"),
              ("dbglog.__main__", "dbglog.cli")}


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
    for m, table in BY_NAME.items():  # the registry's rows are imports too (imported on use, by name)
        graph[m] |= {f"{m}.{row.split(':')[0]}" for row in _table(mods[m], table).values()}
    return graph


def _table(path: Path, name: str) -> dict:
    """The literal dict assigned to ``name`` at the top of a module, read without importing it."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return ast.literal_eval(node.value)
    raise AssertionError(f"{path}: no table {name}")


def _imports_by_name(tree: ast.AST) -> list[int]:
    """Lines that import a module whose name is a value: ``importlib.import_module(x)``, ``import_module(x)``,
    ``__import__(x)`` (``importlib.util.find_spec`` only asks whether a module exists: not an import)."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name in ("import_module", "__import__"):
                lines.append(node.lineno)
    return lines


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
# `cli` (the commands) may import anything below it: it has no row.
FOLDERS = {
    "util": set(),
    "core": {"util"},
    "diagnose": {"util", "core"},
    "run": {"util", "core", "diagnose"},
    "kb": {"util", "core", "docreader", "diagnose"},  # diagnose: kb/failures stores what fingerprint reads
    "docreader": {"util", "core", "diagnose"},  # diagnose: a console command's printed failure (cues.printed_failure)
    "bisect": {"run", "util", "core", "coop"},
}
FOLDER_EXCEPTIONS = {("dbglog.kb.records", "dbglog.bisect.journal")}


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
    folders = sorted(p.parent.name for p in PKG.glob("*/__init__.py"))
    assert set(folders) - {"cli"} <= set(FOLDERS), "a new folder: give it a row of FOLDERS (what it may import)"
    for folder in folders:
        doc = ast.get_docstring(ast.parse((PKG / folder / "__init__.py").read_text(encoding="utf-8")))
        assert doc and len(doc) > 80, folder


def test_every_module_has_a_layer():
    unranked = sorted(m for m in _modules() if m not in RANK)
    assert unranked == [], "add each to its layer in LAYERS (and ARCHITECTURE.md's layer table)"


def test_the_only_import_by_name_is_the_command_table():
    found = {}
    for m, p in _modules().items():
        lines = _imports_by_name(ast.parse(p.read_text(encoding="utf-8")))
        if lines:
            found[m] = lines
    assert set(found) <= set(BY_NAME), {m: ln for m, ln in found.items() if m not in BY_NAME}
    graph = import_graph()
    assert {"dbglog.cli.records", "dbglog.cli.bisect", "dbglog.cli.demo"} <= graph["dbglog.cli"]  # rows are edges


def test_the_by_name_checker_sees_each_spelling():
    code = "import importlib\nimportlib.import_module('x')\n__import__('y')\nfrom importlib import import_module\n" \
           "import_module('z')\nimportlib.util.find_spec('torch')\n"
    assert _imports_by_name(ast.parse(code)) == [2, 3, 5]


# --- ARCHITECTURE.md's layer table says what LAYERS says --------------------------------------------

ARCH = PKG.parent / "ARCHITECTURE.md"


def _doc_table(heading: str) -> list[list[str]]:
    """The rows (cells) of the first markdown table after ``heading`` in ARCHITECTURE.md."""
    lines = ARCH.read_text(encoding="utf-8").splitlines()
    i = lines.index(heading)
    rows = []
    for line in lines[i + 1:]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not set("".join(cells)) <= set("-: "):
                rows.append(cells)
        elif rows:
            break
    return rows[1:]  # (the header row)


def _ticked(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def _module_of(token: str) -> list[str]:
    """``kb/records`` -> dbglog.kb.records; ``kb/`` -> the package dbglog.kb; ``util/*`` -> every module
    of the folder; ``__init__`` -> the package root."""
    if token == "__init__":
        return ["dbglog"]
    if token.endswith("/*"):
        folder = token[:-2]
        return [m for m in _modules() if _folder(m) == folder]
    return ["dbglog." + token.rstrip("/").replace("/", ".")]


def test_architecture_layer_table_is_the_layer_tests_list():
    doc: dict[str, int] = {}
    for cells in _doc_table("## Layers"):
        layer = int(cells[0].split()[0])
        for token in _ticked(cells[1]):
            for m in _module_of(token):
                doc[m] = layer
    modules = set(_modules())
    named_but_missing = sorted(m for m in doc if m not in modules)
    assert named_but_missing == [], "ARCHITECTURE.md names modules that do not exist"
    differ = sorted(f"{m}: ARCHITECTURE.md says {doc.get(m)}, tests/test_layers.py {RANK.get(m)}"
                    for m in modules if doc.get(m) != RANK.get(m))
    assert differ == []


def test_architecture_folder_table_is_the_folder_rule():
    doc = {}
    for cells in _doc_table("## Folders"):
        folder = _ticked(cells[0])[0].rstrip("/")
        doc[folder] = {t.rstrip("/") for t in _ticked(cells[2].split(";")[0])}
    assert doc == {f: allowed for f, allowed in FOLDERS.items()}


# --- one home per name: the markdown format is core/markdown.py ----------------------------------


def _mirror_names_used(tree: ast.AST) -> list[str]:
    """Names a module takes from ``dbglog.kb.mirror``: ``from dbglog.kb.mirror import X`` and
    ``mirror.X`` where ``mirror`` came from ``from dbglog.kb import mirror``."""
    used, aliases = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "dbglog.kb.mirror":
            used += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module == "dbglog.kb":
            aliases |= {a.asname or a.name for a in node.names if a.name == "mirror"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            used.append(node.attr)
    return used


def test_the_format_names_are_imported_from_core_not_through_the_template_module():
    mirror = ast.parse((PKG / "kb" / "mirror.py").read_text(encoding="utf-8"))
    own = {n.name for n in mirror.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    star = [n for n in ast.walk(mirror) if isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names)]
    assert star == [], "kb/mirror.py re-exports with a star import"
    wrong = []
    for root in ("dbglog", "tests", "bench"):
        for p in sorted((PKG.parent / root).rglob("*.py")):
            names = _mirror_names_used(ast.parse(p.read_text(encoding="utf-8")))
            wrong += [f"{p.relative_to(PKG.parent)}: mirror.{n}" for n in names if n not in own]
    assert wrong == [], "import these from dbglog.core.markdown"


def test_the_mirror_name_checker_sees_both_spellings():
    code = ("from dbglog.kb import mirror as m\nfrom dbglog.kb.mirror import parse\n"
            "m.render(x)\nm.split_row(y)\n")
    assert sorted(_mirror_names_used(ast.parse(code))) == ["parse", "render", "split_row"]
