"""mkdocs hooks (mkdocs.yml `hooks:`): the generated reference pages and the topic pages' nav entries.

The reference pages come from docs/gen.py at every build, so no generated table is committed or
written by hand. Topic pages other contributors add (docs/tried.md, ...) enter the nav when they exist:
a nav entry for a missing page would fail `mkdocs build --strict`.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from mkdocs.structure.files import File

HERE = Path(__file__).resolve().parent
DOCS = HERE  # the pages (a test points it elsewhere)
# (title, page) in nav order, each listed only if the file exists when the site is built
TOPICS = [
    ("Was it already tried?", "tried.md"),
    ("Seen before", "seen-before.md"),
    ("Diagnosing a failure", "diagnose.md"),
    ("Intermittent failures", "intermittent.md"),
    ("Reliability", "reliability.md"),
    ("Importing debug docs", "import.md"),
]


def _gen():
    spec = importlib.util.spec_from_file_location("dbglog_docs_gen", HERE / "gen.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _nav_pages(nav) -> set[str]:
    out = set()
    for entry in nav:
        for v in (entry.values() if isinstance(entry, dict) else [entry]):
            out |= _nav_pages(v) if isinstance(v, list) else {v}
    return out


def _title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem.replace("-", " ").capitalize()


def on_config(config, **kwargs):
    """Topic pages enter the nav when they exist: the known ones in their order, then any other page
    under docs/ that the nav does not list (a new page is never left out of the site's menu)."""
    listed = _nav_pages(config["nav"]) | set(_gen().pages())
    topics = [(title, page) for title, page in TOPICS if (DOCS / page).exists()]
    known = {page for _, page in TOPICS}
    for path in sorted(DOCS.rglob("*.md")):
        rel = path.relative_to(DOCS).as_posix()
        if rel not in listed and rel not in known:
            topics.append((_title(path), rel))
    if topics:
        config["nav"].insert(-3, {"Topics": [{title: page} for title, page in topics]})
    return config


def on_files(files, config, **kwargs):
    for rel, text in _gen().pages().items():
        old = files.get_file_from_path(rel)
        if old is not None:  # the hand-written part of a page the generator completes
            files.remove(old)
        files.append(File.generated(config, rel, content=text))
    return files
