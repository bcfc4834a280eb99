"""Functions over a length limit, and ruff's C901 findings, in the package: the "no dark rooms" figures.

    python bench/function_sizes.py [--limit 80] [--complexity 15] [--json] [PATH ...]

A function's length is its lines from ``def`` (decorators excluded) to its last statement, as ``ast``
gives them (``end_lineno - lineno + 1``), nested functions counted inside their parent and on their
own. Complexity is ruff's mccabe (``C901``) at ``--complexity``, run here with the rule selected
whatever pyproject.toml ignores, so the figure is the code's, not the configuration's.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def long_functions(paths: list[Path], limit: int) -> list[dict]:
    """Every function (or method) longer than ``limit`` lines: path, line, qualified name, lines."""
    out = []
    for path in paths:
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            tree = ast.parse(file.read_text(encoding="utf-8"))
            out += _walk(tree, file, "", limit)
    return sorted(out, key=lambda d: -d["lines"])


def _walk(node: ast.AST, file: Path, prefix: str, limit: int) -> list[dict]:
    found = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = f"{prefix}{child.name}"
            if not isinstance(child, ast.ClassDef):
                n = child.end_lineno - child.lineno + 1
                if n > limit:
                    found.append({"path": str(file.relative_to(ROOT)), "line": child.lineno, "name": name,
                                  "lines": n})
            found += _walk(child, file, name + ".", limit)
        else:
            found += _walk(child, file, prefix, limit)
    return found


def complex_functions(paths: list[Path], limit: int) -> list[dict]:
    """ruff's C901 findings at ``limit`` (path, line, message), whatever the project's config ignores."""
    cmd = [sys.executable, "-m", "ruff", "check", "--isolated", "--select", "C901",
           "--config", f"lint.mccabe.max-complexity={limit}", "--output-format", "json", *map(str, paths)]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if r.returncode not in (0, 1):
        raise SystemExit(f"ruff failed: {r.stderr.strip()}")
    return [{"path": str(Path(d["filename"]).resolve().relative_to(ROOT)), "line": d["location"]["row"],
             "message": d["message"]} for d in json.loads(r.stdout or "[]")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", type=Path, default=[ROOT / "dbglog"])
    ap.add_argument("--limit", type=int, default=80, help="longest function allowed, in lines")
    ap.add_argument("--complexity", type=int, default=15, help="mccabe complexity allowed")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    paths = [p.resolve() for p in a.paths]
    long_, complex_ = long_functions(paths, a.limit), complex_functions(paths, a.complexity)
    if a.json:
        print(json.dumps({"long": long_, "complex": complex_}, indent=1))
        return 0
    print(f"functions over {a.limit} lines: {len(long_)}")
    for d in long_:
        print(f"  {d['lines']:4d}  {d['path']}:{d['line']}  {d['name']}")
    print(f"C901 findings at max-complexity {a.complexity}: {len(complex_)}")
    for d in complex_:
        print(f"  {d['path']}:{d['line']}  {d['message']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
