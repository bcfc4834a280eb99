"""mkdocs hooks (mkdocs.yml `hooks:`): the generated reference pages and the topic pages' nav entries.

The reference pages come from docs/gen.py at every build, so no generated table is committed or
written by hand. Topic pages other contributors add (docs/tried.md, ...) enter the nav when they exist:
a nav entry for a missing page would fail `mkdocs build --strict`.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from mkdocs.structure.files import File

DOCS = Path(__file__).resolve().parent
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
    spec = importlib.util.spec_from_file_location("dbglog_docs_gen", DOCS / "gen.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def on_config(config, **kwargs):
    topics = [{title: page} for title, page in TOPICS if (DOCS / page).exists()]
    if topics:
        for entry in config["nav"]:
            if isinstance(entry, dict) and "Topics" in entry:
                entry["Topics"] = topics
                break
        else:
            config["nav"].insert(-3, {"Topics": topics})
    return config


def on_files(files, config, **kwargs):
    for rel, text in _gen().pages().items():
        old = files.get_file_from_path(rel)
        if old is not None:  # the hand-written part of a page the generator completes
            files.remove(old)
        files.append(File.generated(config, rel, content=text))
    return files
