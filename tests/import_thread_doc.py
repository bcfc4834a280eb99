"""A small debug write-up in own words, in the shapes the reader must tell apart (a tried list, an issue
thread where a suggestion is answered by the one who tried it, a next-steps list), shared by the tests of
--explain, --review / --apply-review, --llm and provenance."""

import json
import sqlite3
from pathlib import Path

from dbglog import docreader

THREAD_DOC = """\
# vLLM crashes with illegal memory access on A100

**Status:** Open

The server dies after a few requests with `CUDA error: an illegal memory access was encountered`.

## What I tried

- I set `enforce_eager=True` and the crash went away.
- I downgraded to torch 2.3.1; still crashes at the same step.
- Rebuilt flash-attn from source, no change.

## Thread

**alice** commented on Mar 3:

Have you tried `VLLM_ATTENTION_BACKEND=XFORMERS`?

**bob** commented on Mar 4:

@alice Yes, with XFORMERS it works fine now.

## Next steps

1. Report upstream with a minimal repro.
2. Check whether cuda graphs are the trigger.
"""


def write_doc(tmp_path: Path, text: str = THREAD_DOC, name: str = "notes.md") -> Path:
    doc = tmp_path / name
    doc.write_text(text, encoding="utf-8")
    return doc


def investigations(ws: Path) -> int:
    con = sqlite3.connect(ws / ".dbglog" / "dbglog.db")
    try:
        return con.execute("SELECT count(*) FROM investigations").fetchone()[0]
    finally:
        con.close()


def mirror_files(ws: Path) -> list[Path]:
    return sorted((ws / "logs").glob("*.md"))


def lost_lines(source: str, rendered: str) -> list[str]:
    """The source lines with content that the rendered mirror does not hold (the import yardstick)."""
    kept = docreader.kept_text(rendered)
    return [ln for ln in source.split("\n") if docreader.counts(ln) and docreader.norm(ln) not in kept]


def as_json(p) -> dict:
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
    return json.loads(p.stdout)


def built_in_reading(ws: Path, doc: Path) -> list[tuple[list[int], str]]:
    """(source_lines, who) of each attempt the built-in reader makes of DOC (a dry run: nothing written)."""
    from conftest import run_cli_inproc

    data = as_json(run_cli_inproc(ws, "import", doc, "--dry-run", "--json"))
    return [(a["source_lines"], a["who"]) for i in data["investigations"] for a in i["attempt_list"]]
