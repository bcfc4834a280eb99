"""The documentation site: its reference tables are generated from the registries (docs/gen.py), every
nav entry has its page, the README stays a front door whose test command is the one CI runs, and
(where mkdocs is installed, as in CI) the site builds with warnings as errors."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


def _gen():
    spec = importlib.util.spec_from_file_location("dbglog_docs_gen_under_test", ROOT / "docs" / "gen.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_reference_pages_list_everything_the_registries_hold():
    from dbglog import mcp_server
    from dbglog.bisect.kinds import REGISTRY as KINDS
    from dbglog.cli import COMMANDS
    from dbglog.run.captures import REGISTRY as PRESETS
    from dbglog.run.signatures import BUILTIN

    pages = _gen().pages()
    commands = pages["reference/commands.md"]
    assert all(f"[`dbglog {name}`]" in commands for name in COMMANDS)
    assert "[`dbglog bisect toggles`]" in commands and "[`dbglog report`]" in commands  # groups' subcommands
    assert all(f"`{fn.__name__}(" in pages["reference/mcp-tools.md"] for fn in mcp_server.TOOLS)
    assert all(f"| `{s.name}` |" in pages["reference/signatures.md"] for s in BUILTIN)
    assert all(f"| `{name}` |" in pages["reference/captures.md"] for name in PRESETS)
    assert all(f"| `{name}` |" in pages["reference/toggle-kinds.md"] for name in KINDS)
    assert "## The map (ARCHITECTURE.md)" in pages["architecture.md"]
    assert pages["index.md"].startswith("# dbglog") and "](docs/" not in pages["index.md"]


def test_a_newly_registered_toggle_kind_appears_in_the_generated_table():
    from dbglog.bisect import kinds

    class Flag(kinds.Kind):
        name = "flagfile-doc-test"
        options = (kinds.Option("--flagfile-doc-test", "flagfile_doc_test", "FILE", "Toggle: FILE holds 1."),)

    kinds.register(Flag())
    try:
        table = _gen().kinds_page()
    finally:
        kinds.unregister("flagfile-doc-test")
    assert "| `flagfile-doc-test` | `--flagfile-doc-test FILE`: Toggle: FILE holds 1. |" in table


def test_the_generator_writes_its_pages_to_a_folder(tmp_path):
    assert _gen().main([str(tmp_path)]) == 0
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.md"))
    assert written == sorted(_gen().pages())


def _nav_pages(nav) -> list[str]:
    out = []
    for entry in nav:
        values = entry.values() if isinstance(entry, dict) else [entry]
        for v in values:
            out += _nav_pages(v) if isinstance(v, list) else [v]
    return out


def test_every_nav_entry_is_a_page_that_exists_or_is_generated():
    conf = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    generated = set(_gen().pages())
    missing = [p for p in _nav_pages(conf["nav"]) if p not in generated and not (ROOT / "docs" / p).is_file()]
    assert missing == []


def test_the_readme_is_a_short_front_door_whose_test_command_ci_runs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    first_block = re.search(r"```bash\n(.*?)```", readme, re.S).group(1).splitlines()
    assert first_block[0] == "pip install . && dbglog demo"
    test_cmd = first_block[1].split("&&", 1)[1].strip()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert test_cmd in ci  # the same command, alone on its line
    assert re.search(r"^\$ dbglog \w+", readme, re.M)  # a real command with its output


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None,
                    reason="mkdocs is not installed (pip install '.[docs]'); .ci/run installs it")
def test_the_site_builds_with_warnings_as_errors(tmp_path):
    p = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                       cwd=ROOT, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert (tmp_path / "site" / "reference" / "toggle-kinds" / "index.html").is_file()


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None,
                    reason="mkdocs is not installed (pip install '.[docs]'); .ci/run installs it")
def test_a_topic_page_enters_the_nav_once_it_exists(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("dbglog_docs_hooks_under_test", ROOT / "docs" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    (tmp_path / "index.md").write_text("# Home\n")
    (tmp_path / "tried.md").write_text("# Tried\n")
    (tmp_path / "extra.md").write_text("# A page nobody listed\n")
    monkeypatch.setattr(hooks, "DOCS", tmp_path)
    nav = [{"Home": "index.md"}, {"Figures": "figures.md"}, {"Architecture": "architecture.md"},
           {"Contributing": "contributing.md"}]
    topics = hooks.on_config({"nav": nav})["nav"][1]["Topics"]
    assert topics == [{"Was it already tried?": "tried.md"}, {"A page nobody listed": "extra.md"}]


def test_every_repository_file_the_docs_name_exists():
    """A renamed test, module or bench script leaves no stale path in the docs or the README."""
    texts = [(p, p.read_text(encoding="utf-8")) for p in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]]
    pattern = re.compile(r"`((?:dbglog|tests|bench|templates|docs)/[\w./-]+\.(?:py|toml|md|sh|json|j2))(?:::\w+)?`")
    missing = sorted({f"{p.relative_to(ROOT)}: {m}" for p, text in texts for m in pattern.findall(text)
                      if not (ROOT / m).exists()})
    assert missing == []


def test_the_readme_tour_runs_the_commands_of_docs_tour_sh():
    """The tour's output is pasted from `bash docs/tour.sh`: the README shows those commands, in order."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```console\n(.*?)```", readme, re.S).group(1)
    shown = [line[2:] for line in block.splitlines() if line.startswith("$ ")]
    script = (ROOT / "docs" / "tour.sh").read_text(encoding="utf-8")
    run = re.search(r"<<'TOUR'\n(.*?)\nTOUR\n", script, re.S).group(1).splitlines()
    assert shown == run and len(run) >= 5
