"""Suspect source lines marked with comments, and switching them off without breaking the file.

Markers (``#`` and ``//`` comment languages)::

    swa_write(cache)            # dbglog: suspect swa_write
    # dbglog: begin update_states
    update_states(x)
    sync()
    # dbglog: end update_states

A name may mark several lines/blocks: they switch together. *Off* keeps the file valid and
keeps its line count (tracebacks still point at the same lines):

* Python: a single statement becomes ``pass`` at the same indentation (the original code kept in
  a comment); a block becomes ``if False:`` on the ``begin`` marker line with the block indented
  one level under it.
* Shell: each line becomes ``:`` (the no-op builtin) followed by the original as a comment.
* ``//`` languages (C, C++, CUDA, Go, Rust, JS/TS, Java, ...) and other ``#`` languages: each line
  is commented out.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from dbglog.util.errors import DbglogError

MARK = re.compile(r"(?P<tok>#|//)\s*dbglog:\s*(?P<what>suspect|begin|end)\s+(?P<name>[\w.:\-]+)\s*$")
PYTHON = {".py", ".pyw", ".pyi"}
SHELL = {".sh", ".bash", ".zsh", ".ksh"}
SLASH = {".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".cu", ".cuh", ".go", ".rs", ".js", ".mjs",
         ".ts", ".tsx", ".jsx", ".java", ".kt", ".scala", ".swift", ".cs", ".dart", ".zig", ".metal", ".hip"}
SKIP_DIRS = {".git", ".dbglog", "__pycache__", "node_modules", ".venv", "venv", ".tox", ".mypy_cache",
             ".pytest_cache", "build", "dist"}
MAX_SCAN_BYTES = 4 << 20


@dataclass(frozen=True)
class Region:
    """Lines ``start..end`` (0-based, inclusive) of ``path``; ``header`` is the begin-marker line of a block."""

    path: str
    start: int
    end: int
    header: int | None = None

    def to_list(self) -> list:
        return [self.path, self.start, self.end, self.header]

    @classmethod
    def from_list(cls, x) -> "Region":
        return cls(x[0], int(x[1]), int(x[2]), None if x[3] is None else int(x[3]))


def language(path: str, token: str = "#") -> str:
    ext = Path(path).suffix.lower()
    if ext in PYTHON:
        return "python"
    if ext in SHELL:
        return "shell"
    if ext in SLASH:
        return "slash"
    return "slash" if token == "//" else "hash"


def _files(paths) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_file():
            out.append(p.resolve())
        elif p.is_dir():
            for dirpath, dirnames, filenames in os.walk(p):
                dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
                for f in sorted(filenames):
                    fp = Path(dirpath) / f
                    try:
                        if fp.is_file() and fp.stat().st_size <= MAX_SCAN_BYTES:
                            out.append(fp.resolve())
                    except OSError:
                        pass
        else:
            raise DbglogError(f"--suspects {p}: no such file or directory")
    return list(dict.fromkeys(out))


def scan(paths) -> dict[str, list[Region]]:
    """Every marked suspect under ``paths`` (files or directories): name -> regions, in file order."""
    found: dict[str, list[Region]] = {}
    for f in _files(paths):
        try:
            data = f.read_bytes()
        except OSError as e:
            raise DbglogError(f"cannot read {f}: {e.strerror}") from None
        if b"dbglog:" not in data or b"\0" in data[:8192]:
            continue
        lines = data.decode("utf-8", "surrogateescape").splitlines()
        open_blocks: dict[str, int] = {}
        for i, line in enumerate(lines):
            m = MARK.search(line)
            if not m:
                continue
            what, name = m["what"], m["name"]
            if what == "suspect":
                if not line[:m.start()].strip():
                    raise DbglogError(f"{f}:{i + 1}: `dbglog: suspect {name}` must end a line of code "
                                      "(use `dbglog: begin`/`dbglog: end` around a block)")
                found.setdefault(name, []).append(Region(str(f), i, i))
            elif what == "begin":
                if name in open_blocks:
                    raise DbglogError(f"{f}:{i + 1}: `dbglog: begin {name}` inside another block {name!r}")
                open_blocks[name] = i
            else:
                if name not in open_blocks:
                    raise DbglogError(f"{f}:{i + 1}: `dbglog: end {name}` without a `dbglog: begin {name}`")
                b = open_blocks.pop(name)
                if i - b < 2:
                    raise DbglogError(f"{f}:{b + 1}: block {name!r} is empty")
                found.setdefault(name, []).append(Region(str(f), b + 1, i - 1, header=b))
        if open_blocks:
            name, b = next(iter(open_blocks.items()))
            raise DbglogError(f"{f}:{b + 1}: `dbglog: begin {name}` has no `dbglog: end {name}`")
    return found


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip(" \t"))]


def _strip_marker(line: str) -> str:
    m = MARK.search(line)
    return line[:m.start()].rstrip() if m else line.rstrip()


def _python_statement_alone(code: str) -> bool:
    """Does ``code`` (one line, no indentation) compile as complete statement(s) on its own?"""
    for wrapped in (code, "async def _f():\n while True:\n  " + code):
        try:
            compile(wrapped + "\n", "<suspect>", "exec")
            return True
        except SyntaxError:
            continue
    return False


def disable(lines: list[str], region: Region, lang: str) -> None:
    """Switch ``region`` off in ``lines`` (a file's lines without line ends), in place."""
    if lang == "python":
        if region.header is None:
            line = lines[region.start]
            code = _strip_marker(line).strip()
            if not _python_statement_alone(code):
                raise DbglogError(f"{region.path}:{region.start + 1}: the suspect line is not a complete "
                                  "statement on its own; mark the whole statement with dbglog: begin/end")
            lines[region.start] = f"{_indent(line)}pass  # dbglog off: {line.strip()}"
            return
        body = [i for i in range(region.start, region.end + 1) if lines[i].strip()]
        if not body:
            return
        ind = _indent(lines[body[0]])
        step = "\t" if ind.endswith("\t") else "    "
        lines[region.header] = f"{ind}if False:  # dbglog off: {lines[region.header].strip()}"
        for i in range(region.start, region.end + 1):
            if lines[i].strip():
                lines[i] = step + lines[i]
        return
    for i in range(region.start, region.end + 1):
        line = lines[i]
        if not line.strip():
            continue
        ind = _indent(line)
        if lang == "shell":
            lines[i] = f"{ind}: # dbglog off: {line.strip()}"
        elif lang == "slash":
            lines[i] = f"{ind}// dbglog off: {line.strip()}"
        else:
            lines[i] = f"{ind}# dbglog off: {line.strip()}"


def render(original: bytes, regions_off: list[Region]) -> bytes:
    """The file with every region in ``regions_off`` switched off (line ends preserved)."""
    if not regions_off:
        return original
    text = original.decode("utf-8", "surrogateescape")
    parts = text.splitlines(keepends=True)
    lines = [p.rstrip("\r\n") for p in parts]
    ends = [p[len(l):] for p, l in zip(parts, lines)]
    for r in regions_off:
        token = "//" if "//" in (MARK.search(parts[r.header if r.header is not None else r.start]) or [""])[0] else "#"
        disable(lines, r, language(r.path, token))
    return "".join(l + e for l, e in zip(lines, ends)).encode("utf-8", "surrogateescape")


def check_python(path: str, data: bytes) -> None:
    """Raise a clear error if switching suspects off made a Python file invalid."""
    if language(path) != "python":
        return
    try:
        compile(data, path, "exec")
    except SyntaxError as e:
        raise DbglogError(f"{path}: switching the suspects off would make the file invalid "
                          f"(line {e.lineno}: {e.msg}); mark whole statements or blocks") from None
