"""`dbglog import` end to end: idempotence, dry run, provenance, and bad input (exit 2, nothing written)."""

import json
import sqlite3
from pathlib import Path

import pytest

from conftest import run_cli_inproc

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture
def cli():
    # `dbglog import` through the real entry point, in-process (faster; nothing here is about the process)
    return run_cli_inproc


def n_investigations(ws):
    con = sqlite3.connect(ws / ".dbglog" / "dbglog.db")
    try:
        return con.execute("SELECT count(*) FROM investigations").fetchone()[0]
    finally:
        con.close()


def test_import_twice_does_not_duplicate(ws, cli):
    docs = sorted(GOLDEN.glob("*.md"))
    first = json.loads(cli(ws, "import", *docs, "--json", check=0).stdout)
    n = len(first["investigations"])
    assert n >= len(docs) and [r["action"] for r in first["investigations"]] == ["create"] * n
    assert len(list((ws / "logs").glob("*.md"))) == n
    second = json.loads(cli(ws, "import", *docs, "--json", check=0).stdout)
    assert [r["action"] for r in second["investigations"]] == ["unchanged"] * n
    assert [r["id"] for r in second["investigations"]] == [r["id"] for r in first["investigations"]]
    assert n_investigations(ws) == n
    cli(ws, "doctor", check=0)


def test_reimport_updates_and_keeps_attempts_added_in_dbglog(ws, cli, tmp_path):
    doc = tmp_path / "DEBUG.md"
    src = (GOLDEN / "04_nccl_timeout_container.md").read_text()
    doc.write_text(src)
    inv_id = json.loads(cli(ws, "import", doc, "--json", check=0).stdout)["investigations"][0]["id"]
    cli(ws, "attempt", "add", "Swap HCA", "-i", inv_id, "--did", "replaced mlx5_2", "--result", "Works", check=0)
    doc.write_text(src.replace("Ran 9 h without timeout.", "Ran 12 h without timeout."))
    out = json.loads(cli(ws, "import", doc, "--json", check=0).stdout)["investigations"][0]
    assert out["action"] == "update" and out["id"] == inv_id
    inv = json.loads(cli(ws, "show", inv_id, "--json", check=0).stdout)
    assert [a["number"] for a in inv["attempts"]] == [1, 2, 3, 4]
    assert inv["attempts"][1]["result"] == "Ran 12 h without timeout."
    assert inv["attempts"][3]["did"] == "replaced mlx5_2"


def test_dry_run_writes_nothing(ws, cli):
    out = json.loads(cli(ws, "import", GOLDEN / "01_debug_md_multi.md", "--dry-run", "--json", check=0).stdout)
    assert out["dry_run"] and len(out["investigations"]) == 2
    assert out["skipped"][0]["reason"].startswith("template")
    assert list((ws / "logs").glob("*.md")) == []
    assert n_investigations(ws) == 0
    human = cli(ws, "import", GOLDEN / "01_debug_md_multi.md", "--dry-run", check=0).stdout
    assert "would new" in human and "template" in human and "kept as free text" in human


def test_provenance_is_recorded(ws, cli):
    out = json.loads(cli(ws, "import", GOLDEN / "01_debug_md_multi.md", "--json", check=0).stdout)
    inv = out["investigations"][1]
    assert inv["source"].endswith("01_debug_md_multi.md:59")
    con = sqlite3.connect(ws / ".dbglog" / "dbglog.db")
    rows = con.execute("SELECT kind, ref, line FROM import_items WHERE investigation_id = ? ORDER BY line",
                       (inv["id"],)).fetchall()
    assert rows[:3] == [("investigation", "", 59), ("attempt", "1", 65), ("attempt", "2", 72)]


BAD = {
    "binary.md": (b"\x89PNG\r\n\x1a\n\x00\x00\x00IHDR", "binary file"),
    "empty.md": (b"\n\n  \n", "empty file"),
    "latin1.md": ("# Bug\n\n**Status:** Open\n**Symptom:** caf\u00e9\n".encode("latin-1"), "invalid UTF-8"),
    "markers.md": (b"# Bug\n**Status:** Open\n<<<<<<< HEAD\n### Attempt 1: a\n=======\n### Attempt 1: b\n"
                   b">>>>>>> origin/main\n", "conflict markers"),
}
LINES = {"markers.md": ":3:", "latin1.md": ":4:"}

# Markdown is never refused for lack of structure (issue 11): what cannot be read as structure is
# kept as text. Each of these was an error once.
UNSTRUCTURED = {
    "fence.md": b"# Bug\n\n**Status:** Open\n\n### Attempt 1\n**What you did:**\n```bash\nncu ...\n",
    "ragged.md": b"# Bug\n**Status:** Open\n\n## Key differences\n\n| Factor | Works | Hangs |\n|---|---|---|\n"
                 b"| a | b | c |\n| d | e |\n",
    "ragged_fixed.md": b"# Bug\n**Status:** Open\n\n## Differences\n\n```\nFactor   Works    Hangs\n"
                       b"-------  -------  -------\nstream   one      two\nlaunchcontext x\n```\n",
    "prose.md": b"# How we work\n\nWe write things down.\n",
    "comment.md": b"# Bug\n\n<!-- never closed\n\n## Attempts\n\n### Attempt 1: x\n",
}


@pytest.mark.parametrize("name", sorted(UNSTRUCTURED))
def test_unstructured_markdown_is_imported_without_loss(ws, cli, tmp_path, name):
    doc = tmp_path / name
    doc.write_bytes(UNSTRUCTURED[name])
    p = cli(ws, "import", doc, "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)["investigations"]
    assert len(out) == 1
    text = (ws / out[0]["path"]).read_text()
    for line in UNSTRUCTURED[name].decode().splitlines():
        if len(line.strip("`#*- ")) >= 4:
            assert line.strip().strip("#").strip() in text, line
    again = cli(ws, "import", doc, "--json")
    assert [i["action"] for i in json.loads(again.stdout)["investigations"]] == ["unchanged"]


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_is_one_clear_line_and_nothing_imported(ws, cli, tmp_path, name):
    good = GOLDEN / "03_illegal_address_variants.md"
    bad = tmp_path / name
    data, needle = BAD[name]
    bad.write_bytes(data)
    p = cli(ws, "import", good, bad)
    assert p.returncode == 2, p.stderr
    err = p.stderr.strip()
    assert err.count("\n") == 0 and err.startswith("dbglog: ") and needle in err, err
    assert name in err and "Traceback" not in err
    if name in LINES:
        assert LINES[name] in err, err
    assert list((ws / "logs").glob("*.md")) == []  # the good file was not half-imported either
    assert n_investigations(ws) == 0


def test_fifty_megabyte_file(ws, cli, tmp_path):
    big = tmp_path / "huge.md"
    with open(big, "wb") as f:
        f.write(b"# Bug\n**Status:** Open\n")
        f.write((b"x" * 1023 + b"\n") * 50 * 1024)
    p = cli(ws, "import", big, "--json")
    assert p.returncode == 2
    assert "too large" in json.loads(p.stdout)["error"]
    assert n_investigations(ws) == 0


def test_missing_file_and_mirror_file(ws, cli, tmp_path):
    p = cli(ws, "import", tmp_path / "nope.md")
    assert p.returncode == 2 and "no such file" in p.stderr
    cli(ws, "new", "Some hang", "--no-env", check=0)
    mirror_file = next((ws / "logs").glob("*.md"))
    p = cli(ws, "import", mirror_file)
    assert p.returncode == 2 and "already in the mirror" in p.stderr


def test_import_leaves_the_current_investigation_unless_asked_to_use_it(ws, cli, tmp_path):
    mine = json.loads(cli(ws, "new", "My own bug", "--json").stdout)["id"]
    doc = tmp_path / "hang.md"
    doc.write_text("# NCCL hang at step 7k\n\n## What we tried\n\n- Tried NCCL_P2P_DISABLE=1 → still hangs\n")
    data = json.loads(cli(ws, "import", doc, "--json").stdout)
    assert data["current"] == mine and data["investigations"][0]["current"] is False
    assert "current investigation: " + mine in cli(ws, "import", doc).stdout
    used = json.loads(cli(ws, "import", doc, "--use", "--json").stdout)
    assert used["investigations"][0]["current"] is True and used["current"] == used["investigations"][0]["id"]
    shown = json.loads(cli(ws, "show", "--json").stdout)
    assert shown["id"] == used["current"] and shown["attempts"][0]["outcome"] == "failed"


def test_a_directory_imports_the_markdown_files_under_it(ws, cli, tmp_path):
    notes = tmp_path / "debug"
    (notes / "gpu").mkdir(parents=True)
    (notes / "a.md").write_text("# Hang in all-reduce\n\n- Tried NCCL_P2P_DISABLE=1 → still hangs\n")
    (notes / "gpu" / "b.md").write_text("# IMA in paged attention\n\n### Attempt 1: enforce eager\n\n**Result:** works\n")
    (notes / "gpu" / "c.txt").write_text("not markdown")
    (notes / ".hidden").mkdir()
    (notes / ".hidden" / "d.md").write_text("# hidden\n")
    out = json.loads(cli(ws, "import", notes, "--json").stdout)["investigations"]
    assert sorted(i["title"] for i in out) == ["Hang in all-reduce", "IMA in paged attention"]
    empty = tmp_path / "empty"
    empty.mkdir()
    p = cli(ws, "import", empty)
    assert p.returncode == 2 and "no markdown (.md) files" in p.stderr


def test_reimport_of_a_doc_with_a_redacted_value_changes_nothing(ws, cli, tmp_path):
    # The stored copy has the value redacted; the second import compares like with like.
    doc = tmp_path / "keys.md"
    doc.write_text("# Reader never matches\n\n## Attempt 1: swap the constants\n\n"
                   "```python\nAPI_KEY = 'sk-live-abcdefghijklmnop1234'\n```\n\n**Result:** still no match.\n")
    first = json.loads(cli(ws, "import", str(doc), "--json").stdout)["investigations"]
    assert [i["action"] for i in first] == ["create"]
    again = json.loads(cli(ws, "import", str(doc), "--json").stdout)["investigations"]
    assert [i["action"] for i in again] == ["unchanged"]
    assert "abcdefghijklmnop1234" not in "".join(p.read_text() for p in (ws / "logs").glob("*.md"))


def test_two_investigations_of_one_title_in_one_document_stay_two(ws, cli_fast):
    # "## Session notes" per day, or one bug met twice: the idempotence key was the title alone, so the second
    # investigation was imported as an update of the first, and the first one's record was lost.
    one = ("## NCCL hang at step 2\n\n**Status:** open\n\n**Symptom:** rank {r} stops at step 2\n\n"
           "#### Attempt 1: {what}\n\n**Did:** `{what}`\n\n**Saw:** still hangs\n\n")
    (ws / "log.md").write_text("# DEBUGLOG.md\n\n" + one.format(r=3, what="NCCL_P2P_DISABLE=1")
                               + one.format(r=5, what="NCCL_IB_DISABLE=1"))
    first = json.loads(cli_fast(ws, "import", "log.md", "--json", check=0).stdout)["investigations"]
    assert [i["action"] for i in first] == ["create", "create"] and len({i["id"] for i in first}) == 2
    shown = [json.loads(cli_fast(ws, "show", i["id"], "--json", check=0).stdout) for i in first]
    assert [s["attempts"][0]["title"] for s in shown] == ["NCCL_P2P_DISABLE=1", "NCCL_IB_DISABLE=1"]
    again = json.loads(cli_fast(ws, "import", "log.md", "--json", check=0).stdout)["investigations"]
    assert [(i["action"], i["id"]) for i in again] == [("unchanged", i["id"]) for i in first]


def test_a_long_documents_free_sections_are_counted_not_listed_and_json_keeps_them_all(ws, cli, tmp_path):
    doc = tmp_path / "notes.md"
    doc.write_text("# Long notes\n\n" + "".join(f"## Part {k}\n\nSome context about part {k}.\n\n" for k in range(40)))
    human = cli(ws, "import", doc, "--dry-run", check=0).stdout
    line = next(x for x in human.splitlines() if "kept as free text" in x)
    assert "Part 0" in line and "Part 39" not in line and "more (`--json` lists them all)" in line
    assert len(line) < 300
    out = json.loads(cli(ws, "import", doc, "--dry-run", "--json", check=0).stdout)
    assert "Part 39" in out["investigations"][0]["recognized"]["free_sections"]


def _snapshot(ws):
    con = sqlite3.connect(ws / ".dbglog" / "dbglog.db")
    try:
        db = "\n".join(con.iterdump())
    finally:
        con.close()
    return db, {p.name: p.read_bytes() for p in (ws / "logs").glob("*.md")}


def test_an_older_copy_of_a_dbglog_file_is_refused_and_deletes_nothing(ws, cli, tmp_path):
    """An adversarial probe: importing a backup (or a teammate's earlier copy) of a mirror file replaced the
    investigation whole, and the attempts recorded since were gone; a file carrying another investigation's id
    took it over (title, status and attempts). Both are refused in one line, with nothing changed; a copy that
    holds everything recorded here is taken (and unchanged when it is the same)."""
    cli(ws, "new", "GPU hang", "--no-env", check=0)
    cli(ws, "attempt", "add", "first try", "-d", "set A=1", "-o", "failed", check=0)
    mirror = next((ws / "logs").glob("*.md"))
    old = tmp_path / "old-copy.md"
    old.write_bytes(mirror.read_bytes())
    cli(ws, "attempt", "add", "second try", "-d", "set B=1", "-o", "worked", check=0)
    other = tmp_path / "other.md"
    import re

    other.write_text(re.sub(r"(?m)^created: .*$", "created: 2020-01-01T00:00:00Z", mirror.read_text()).replace(
        "# GPU hang", "# Something else"))
    before = _snapshot(ws)
    for doc, words in ((old, "lacks attempt(s) 2"), (other, "another investigation here has")):
        p = cli(ws, "import", str(doc))
        assert p.returncode == 2 and p.stderr.count("\n") == 1 and words in p.stderr, p.stderr
        assert _snapshot(ws) == before
    current = tmp_path / "current-copy.md"
    current.write_bytes(mirror.read_bytes())
    out = json.loads(cli(ws, "import", str(current), "--json", check=0).stdout)
    assert [r["action"] for r in out["investigations"]] == ["unchanged"]


def test_a_doc_whose_title_was_edited_is_updated_not_imported_twice(ws, cli, tmp_path):
    """An adversarial probe: a document's `#` title edited between two imports made a second investigation with
    the attempts again (the import was remembered by its title). A document that holds one investigation updates
    the one it made; one that holds two keeps them apart by title, as before."""
    doc = tmp_path / "r.md"
    doc.write_text("# Hang in NCCL\n\n- I set X=1; still hangs.\n")
    first = json.loads(cli(ws, "import", str(doc), "--json", check=0).stdout)["investigations"][0]
    doc.write_text("# Hang in NCCL allreduce\n\n- I set X=1; still hangs.\n")
    again = json.loads(cli(ws, "import", str(doc), "--json", check=0).stdout)["investigations"][0]
    assert (again["action"], again["id"], again["title"]) == ("update", first["id"], "Hang in NCCL allreduce")
    assert n_investigations(ws) == 1


def test_importing_the_mirror_directory_says_it_is_the_mirror(ws, cli):
    cli(ws, "new", "x", "--no-env", check=0)
    p = cli(ws, "import", "logs")
    assert p.returncode == 2 and "is the mirror" in p.stderr and "dbglog sync" in p.stderr, p.stderr  # was: "no .md"


def test_a_dry_run_with_use_says_what_would_become_current(ws, cli, tmp_path):
    doc = tmp_path / "a.md"
    doc.write_text("# A\n\n- I set X=1; still hangs.\n")
    p = cli(ws, "import", "--use", "--dry-run", str(doc))
    assert p.returncode == 0 and "would become the one imported" in p.stdout and "unchanged" not in p.stdout, p.stdout


REDIS = "# Redis timeouts\n\n- Tried raising `timeout` to 30 s; still times out.\n" \
        "- Tried pinning redis-py 4.5; the timeouts went away.\n"


def test_an_attempt_recorded_under_a_deleted_imported_attempts_number_is_not_overwritten(ws, cli, tmp_path):
    """An adversarial probe: after an imported attempt was deleted and one recorded through dbglog took its number,
    a re-import wrote the document's attempt over it (the number was still remembered as the import's)."""
    doc = tmp_path / "notes.md"
    doc.write_text(REDIS)
    inv = json.loads(cli(ws, "import", "--use", str(doc), "--json", check=0).stdout)["investigations"][0]["id"]
    cli(ws, "attempt", "delete", "2", check=0)
    cli(ws, "attempt", "add", "My own: restarted sentinel", "-d", "restarted sentinel by hand", "-r",
        "still times out", "-o", "failed", check=0)
    cli(ws, "import", str(doc), check=0)
    shown = json.loads(cli(ws, "show", inv, "--json", check=0).stdout)["attempts"]
    assert [(a["title"], a["did"]) for a in shown][1] == ("My own: restarted sentinel", "restarted sentinel by hand")
    assert any("redis-py 4.5" in a["title"] for a in shown)


def test_a_conclusion_added_in_dbglog_to_an_imported_attempt_survives_an_unchanged_re_import(ws, cli, tmp_path):
    """An adversarial probe: the re-read attempt's blank conclusion was copied over the one written in dbglog, and
    the unchanged document was reported "updated"."""
    doc = tmp_path / "notes.md"
    doc.write_text(REDIS)
    inv = json.loads(cli(ws, "import", "--use", str(doc), "--json", check=0).stdout)["investigations"][0]["id"]
    cli(ws, "attempt", "edit", "1", "-c", "not the server timeout; confirmed with tcpdump", check=0)
    out = json.loads(cli(ws, "import", str(doc), "--json", check=0).stdout)["investigations"][0]
    assert out["action"] == "unchanged"
    shown = json.loads(cli(ws, "show", inv, "--json", check=0).stdout)["attempts"]
    assert shown[0]["conclusion"] == "not the server timeout; confirmed with tcpdump"


ESCAPED_PIPES = ("# Build differs\n\nThe build fails on CI only.\n\n## Key differences\n\n"
                 "| Factor | Working | Broken |\n|---|---|---|\n| Flags | a \\| b | c |\n\n"
                 "## What we tried\n\n| Approach | Result |\n|---|---|\n| set x \\| y in config | still fails |\n")


def test_an_escaped_pipe_in_a_table_cell_is_read_as_a_pipe():
    from dbglog.kb.importer import parse_document

    [p], _ = parse_document(ESCAPED_PIPES, "notes.md")
    assert [(d.factor, d.working, d.broken) for d in p.inv.differences] == [("Flags", "a | b", "c")]
    assert [a.title for a in p.inv.attempts] == ["set x | y in config"]


def test_an_imported_difference_with_a_pipe_is_stored_as_diff_add_stores_it(ws, cli, tmp_path):
    doc = tmp_path / "notes.md"
    doc.write_text(ESCAPED_PIPES)
    inv_id = json.loads(cli(ws, "import", doc, "--json", check=0).stdout)["investigations"][0]["id"]
    cli(ws, "diff", "add", "Typed", "a | b", "c", "-i", inv_id, check=0)
    rows = json.loads(cli(ws, "diff", "list", "-i", inv_id, "--json", check=0).stdout)["rows"]
    assert rows[0]["working"] == rows[1]["working"] == "a | b"
    assert json.loads(cli(ws, "import", doc, "--json", check=0).stdout)["investigations"][0]["action"] == "unchanged"


def _reimport_edited(ws, cli, tmp_path, text: str, old: str, new: str, *added, k: int = 0) -> dict:
    """Import TEXT, record ADDED through dbglog (argv after `dbglog`, `-i ID` appended), edit OLD into NEW in the
    document and import it again: its K-th investigation as `show --json` gives it."""
    doc = tmp_path / "notes.md"
    doc.write_text(text)
    inv_id = json.loads(cli(ws, "import", doc, "--json", check=0).stdout)["investigations"][k]["id"]
    for argv in added:
        cli(ws, *argv, "-i", inv_id, check=0)
    doc.write_text(text.replace(old, new))
    assert json.loads(cli(ws, "import", doc, "--json", check=0).stdout)["investigations"][k]["action"] == "update"
    assert json.loads(cli(ws, "import", doc, "--json", check=0).stdout)["investigations"][k]["action"] == "unchanged"
    return json.loads(cli(ws, "show", inv_id, "--json", check=0).stdout)


def test_a_renamed_section_heading_replaces_the_section_and_a_recorded_section_stays(ws, cli, tmp_path):
    doc = "# Printer offline\n\nI restarted cupsd and it still fails.\n\n## Context\n\nThe printer is on VLAN 20.\n"
    inv = _reimport_edited(ws, cli, tmp_path, doc, "## Context", "## Background")
    assert [s["heading"] for s in inv["sections"] if "VLAN 20" in s["body"]] == ["## Background"]
    [mirror] = (ws / "logs").glob("*.md")
    mirror.write_text(mirror.read_text() + "\n## My notes\nCall Dave about the switch.\n")  # (taken in by sync)
    (tmp_path / "notes.md").write_text(doc.replace("## Context", "## Setup"))
    cli(ws, "import", tmp_path / "notes.md", check=0)
    heads = [s["heading"] for s in json.loads(cli(ws, "show", inv["id"], "--json", check=0).stdout)["sections"]]
    assert "## Setup" in heads and "## Background" not in heads and "## My notes" in heads


def test_a_reworded_next_step_replaces_the_one_read_from_its_lines(ws, cli, tmp_path):
    doc = ("# Printer offline\n\nI restarted cupsd and it still fails.\n\n## Next steps\n\n"
           "- [ ] Check the VLAN tag on port 7\n- [ ] Swap the cable\n")
    inv = _reimport_edited(ws, cli, tmp_path, doc, "port 7", "port 9", ("next", "add", "Call the vendor"))
    assert [s["text"] for s in inv["next_steps"]] == [
        "Check the VLAN tag on port 9", "Swap the cable", "Call the vendor"]
    assert [s["position"] for s in inv["next_steps"]] == [1, 2, 3]


def test_a_renamed_difference_factor_replaces_its_row_and_a_row_added_in_dbglog_stays(ws, cli, tmp_path):
    doc = ("# Build differs\n\nThe build fails on CI only.\n\n## Key differences\n\n| Factor | Working | Broken |\n"
           "|---|---|---|\n| Compiler | gcc 12 | gcc 13 |\n| Flags | -O2 | -O3 |\n")
    inv = _reimport_edited(ws, cli, tmp_path, doc, "| Compiler |", "| Toolchain |", ("diff", "add", "Kernel", "6.1", "6.8"))
    assert [(d["position"], d["factor"]) for d in inv["differences"]] == [(1, "Toolchain"), (2, "Flags"), (3, "Kernel")]


def test_renaming_one_of_two_investigations_in_a_document_updates_it(ws, cli, tmp_path):
    doc = ("# Printer offline\n\n**Status:** open\n**Symptom:** jobs stay queued\n\nI restarted cupsd; still queued.\n\n"
           "# Scanner slow\n\n**Status:** open\n**Symptom:** scans take minutes\n\nI lowered the DPI; still slow.\n")
    inv = _reimport_edited(ws, cli, tmp_path, doc, "# Scanner slow", "# Scanner very slow", k=1)
    assert inv["title"] == "Scanner very slow" and n_investigations(ws) == 2
