"""Free sections (what an import could not read as structure) are part of the canonical format:
they survive hand edits, sync, reindex --force and a two-clone merge, and `show` prints them."""

import json
import subprocess

import pytest

from conftest import run_cli_inproc
from test_sync_team import _git_env, git


@pytest.fixture
def cli():
    # In-process through dbglog.entry (nothing here is about the process boundary)
    return run_cli_inproc


DOC = """# vLLM hang at startup with TP=8

**Status:** Open

Seen first on the new H200 nodes; the old H100 pool is fine.

## Timeline of the outage

- 09:10 first page from the health checker
- 09:40 rolled the deployment back

## What we tried

### Attempt 1: NCCL_P2P_DISABLE=1

**Result:** still hangs at the same barrier.

## Raw logs

```
[rank3] NCCL WARN Timeout waiting for connection
```
"""


def _import(cli, cwd, tmp_path):
    src = tmp_path / "hang.md"
    src.write_text(DOC)
    out = json.loads(cli(cwd, "import", src, "--json", check=0).stdout)["investigations"][0]
    return out["id"], cwd / out["path"]


def _sections(cli, cwd, inv_id):
    inv = json.loads(cli(cwd, "show", inv_id, "--json", check=0).stdout)
    return {s["heading"]: s["body"] for s in inv["sections"]}


def test_free_sections_round_trip_hand_edit_sync_and_reindex(ws, cli, tmp_path):
    inv_id, path = _import(cli, ws, tmp_path)
    secs = _sections(cli, ws, inv_id)
    assert "## Timeline of the outage" in secs and "09:40 rolled" in secs["## Timeline of the outage"]
    assert "NCCL WARN Timeout" in secs["## Raw logs"]
    shown = cli(ws, "show", inv_id, check=0).stdout
    assert "Timeline of the outage" in shown and "09:10 first page" in shown
    # A hand edit of a free section is read by the next command.
    path.write_text(path.read_text().replace("- 09:40 rolled the deployment back",
                                             "- 09:40 rolled the deployment back\n- 10:05 paged the NCCL owners"))
    assert "10:05 paged" in _sections(cli, ws, inv_id)["## Timeline of the outage"]
    # reindex --force rebuilds the database from logs/ alone: the sections come back as they are.
    before = path.read_bytes()
    cli(ws, "reindex", "--force", check=0)
    assert _sections(cli, ws, inv_id)["## Timeline of the outage"].endswith("10:05 paged the NCCL owners")
    cli(ws, "export", check=0)
    assert path.read_bytes() == before
    # A structured write re-renders the file and keeps the free sections.
    cli(ws, "attempt", "add", "disable IB", "-i", inv_id, "--did", "NCCL_IB_DISABLE=1", "--result", "Works", check=0)
    text = path.read_text()
    assert "## Timeline of the outage" in text and "10:05 paged the NCCL owners" in text and "## Raw logs" in text


def test_free_sections_merge_across_two_clones(tmp_path, cli):
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    a, b = tmp_path / "a", tmp_path / "b"
    git(tmp_path, "clone", "-q", str(remote), str(a))
    inv_id, path_a = _import(cli, a, tmp_path)
    git(a, "add", "-A")
    git(a, "commit", "-qm", "import")
    git(a, "push", "-q", "origin", "HEAD:main")
    git(tmp_path, "clone", "-q", "-b", "main", str(remote), str(b))
    cli(b, "init", check=0)
    path_b = b / path_a.relative_to(a)
    # A edits a free section by hand; B adds an attempt through dbglog.
    path_a.write_text(path_a.read_text().replace("[rank3] NCCL WARN Timeout waiting for connection",
                                                 "[rank3] NCCL WARN Timeout waiting for connection\n[rank5] same"))
    cli(a, "sync", check=0)
    cli(b, "attempt", "add", "pin NCCL 2.21", "-i", inv_id, "--did", "pip install nvidia-nccl-cu12==2.21.5",
        "--result", "Still hangs", check=0)
    for clone, msg in ((a, "a"), (b, "b")):
        git(clone, "add", "-A")
        git(clone, "commit", "-qm", msg)
    git(a, "push", "-q", "origin", "HEAD:main")
    pull = subprocess.run(["git", "pull", "--no-rebase", "--no-edit", "origin", "main"], cwd=b,
                          capture_output=True, text=True, env=_git_env())
    assert pull.returncode == 0, pull.stdout + pull.stderr
    cli(b, "sync", check=0)
    inv = json.loads(cli(b, "show", inv_id, "--json", check=0).stdout)
    assert "[rank5] same" in {s["heading"]: s["body"] for s in inv["sections"]}["## Raw logs"]
    assert [x["title"] for x in inv["attempts"]][-1] == "pin NCCL 2.21"
    assert "<<<<<<<" not in path_b.read_text()


def test_free_sections_of_one_heading_repeated_are_numbered_not_suffixed_again_and_again():
    from dbglog.docreader.read import read_document

    doc = "# A long running investigation\n\n" + "".join(f"## Summary\n\nday {i}: nothing new.\n\n" for i in range(5))
    (p,), _ = read_document(doc, "notes.md")
    assert [s.heading for s in p.inv.sections][:5] == ["## Summary", "## Summary (more)", "## Summary (more 3)",
                                                      "## Summary (more 4)", "## Summary (more 5)"]
