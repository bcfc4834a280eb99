"""The record-keeping commands, driven through the real entry point."""

import json
import sqlite3
from pathlib import Path

import pytest

from conftest import run_cli


def j(out):
    return json.loads(out)


def new(dbg, title="NCCL all_reduce hangs on 8 GPUs", *extra):
    code, out, err = dbg("new", title, "--no-env", "--json", *extra)
    assert code == 0, err
    return j(out)


def test_full_protocol_round(dbg, workdir):
    inv = new(dbg, "NCCL all_reduce hangs on 8 GPUs", "--symptom", "rank 3 stalls", "--tag", "nccl",
              "--file", "train.py")
    assert inv["id"].startswith("2") and inv["status"] == "open"
    assert (workdir / ".dbglog" / "dbglog.db").exists()
    assert (workdir / ".dbglog" / ".gitignore").exists()
    code, out, _ = dbg("attempt", "add", "Disable P2P", "--hypothesis", "P2P over NVLink is broken",
                       "--did", "NCCL_P2P_DISABLE=1 torchrun train.py", "--result", "Still hangs",
                       "--conclusion", "not P2P", "--outcome", "failed", "--json")
    assert code == 0
    a = j(out)
    assert a["number"] == 1 and a["outcome"] == "failed" and a["investigation"] == inv["id"]
    dbg("attempt", "add", "NCCL_DEBUG=INFO", "--did", "NCCL_DEBUG=INFO torchrun", "--json")
    code, out, _ = dbg("attempt", "edit", "2", "--result", "rank 3 waits in ring", "--outcome", "partial", "--json")
    assert j(out)["outcome"] == "partial"
    code, out, _ = dbg("diff", "add", "GPUs", "4", "8", "--working-label", "Repro (works)",
                       "--broken-label", "Actual (hangs)", "--json")
    assert code == 0 and j(out)["position"] == 1
    code, out, err = dbg("diff", "add", "GPUs", "1", "2")
    assert code == 2 and "already" in err
    dbg("diff", "add", "Driver", "535", "550")
    code, out, _ = dbg("diff", "set", "driver", "--status", "culprit", "--json")
    assert j(out)["status"] == "culprit"
    dbg("next", "add", "Try NCCL_ALGO=Tree", "--detail", "rules out ring")
    dbg("next", "add", "Bisect the driver", "--at", "1")
    code, out, _ = dbg("next", "done", "Tree", "--attempt", "2", "--json")
    assert j(out)["status"] == "done" and j(out)["attempt"] == 2
    code, out, _ = dbg("next", "move", "1", "2", "--json")
    assert j(out)["position"] == 2
    code, out, _ = dbg("status", "resolved", "--root-cause", "driver 550 regression", "--json")
    assert j(out)["status"] == "resolved"

    code, out, _ = dbg("show", "--json")
    shown = j(out)
    assert [a["number"] for a in shown["attempts"]] == [1, 2]
    assert shown["labels"] == {"working": "Repro (works)", "broken": "Actual (hangs)"}
    assert [(d["factor"], d["status"]) for d in shown["differences"]] == [("GPUs", "untested"), ("Driver", "culprit")]
    assert [(s["text"], s["status"]) for s in shown["next_steps"]] == [("Try NCCL_ALGO=Tree", "done"),
                                                                       ("Bisect the driver", "todo")]
    assert shown["root_cause"] == "driver 550 regression"

    md = (workdir / shown["path"]).read_text()
    assert "### Attempt 1: Disable P2P" in md
    assert "**What you did:** NCCL_P2P_DISABLE=1 torchrun train.py" in md
    assert "| Driver | 535 | 550 | culprit |" in md
    assert "1. [x] **Try NCCL_ALGO=Tree** — rules out ring (→ Attempt 2)" in md
    assert "**Status:** Resolved" in md
    code, out, _ = dbg("show", "--markdown")
    assert out == md
    code, out, _ = dbg("list", "--status", "resolved", "--json")
    assert [r["id"] for r in j(out)] == [inv["id"]]
    code, out, _ = dbg("list", "--status", "open", "--json")
    assert j(out) == []


def test_a_title_is_taken_as_the_argument_or_as_the_title_option(dbg):
    inv = j(dbg("new", "--title", "NCCL timeout on 4 nodes", "--no-env", "--json")[1])
    assert inv["title"] == "NCCL timeout on 4 nodes"
    code, out, _ = dbg("attempt", "add", "-t", "Longer timeout", "--did", "x", "--result", "same", "--json")
    assert code == 0 and j(out)["title"] == "Longer timeout"


def test_selection_by_prefix_words_and_use(dbg):
    a = new(dbg, "Illegal memory access in flash attention")
    b = new(dbg, "NCU hangs on TMA kernels")
    code, out, _ = dbg("use", "flash attention", "--json")
    assert j(out)["current"] == a["id"]
    code, out, _ = dbg("show", b["id"][:-2], "--json")
    assert j(out)["id"] == b["id"]
    code, _, err = dbg("show", "2026")  # both ids share the date prefix
    assert code == 2 and "matches 2 investigations" in err
    code, _, err = dbg("show", "nonexistent")
    assert code == 2 and "unknown investigation" in err
    code, out, _ = dbg("show", b["id"].rsplit("-", 1)[1], "--json")  # the id's own tail, as people copy it
    assert j(out)["id"] == b["id"]


@pytest.mark.parametrize("args,needle", [
    (["new", ""], "empty title"),
    (["new", "   "], "empty title"),
    (["new", "../../etc/passwd"], "looks like a file path"),
    (["status", "closed"], "invalid status"),
    (["attempt", "add", "x", "--outcome", "great"], "invalid outcome"),
    (["attempt", "edit", "7", "--result", "r"], "no attempt 7"),
    (["diff", "set", "nope", "--status", "culprit"], "no factor"),
    (["next", "done", "9"], "no step 9"),
    (["show", "zzz"], "unknown investigation"),
    (["attempt", "add"], "needs at least a title"),
    (["attempt", "add", "x", "--title", "y", "--did", "z"], "two titles"),
    (["new", "a", "--title", "b"], "two titles"),
    (["bogus-command"], "No such command"),
])
def test_bad_input_one_line_exit_2_nothing_changed(dbg, workdir, args, needle):
    new(dbg, "Baseline bug")
    logs = {p: p.read_bytes() for p in (workdir / "logs").iterdir()}
    db_before = _dump(workdir)
    code, out, err = dbg(*args)
    assert code == 2
    assert needle in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert {p: p.read_bytes() for p in (workdir / "logs").iterdir()} == logs
    assert _dump(workdir) == db_before


def _dump(workdir):
    con = sqlite3.connect(workdir / ".dbglog" / "dbglog.db")
    try:
        return list(con.iterdump())
    finally:
        con.close()


def test_no_workspace_and_corrupt_database(workdir):
    r = run_cli("list", cwd=workdir)
    assert r.returncode == 2 and "dbglog init" in r.stderr
    assert run_cli("init", cwd=workdir).returncode == 0
    db = workdir / ".dbglog" / "dbglog.db"
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    db.write_bytes(b"this is not a database" * 100)
    before = db.read_bytes()
    r = run_cli("new", "x", "--no-env", cwd=workdir)
    assert r.returncode == 2
    assert "unreadable" in r.stderr and "reindex" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert db.read_bytes() == before


def test_json_error_shape(dbg):
    code, out, err = dbg("show", "nothing-here", "--json")
    assert code == 2 and "error" in j(out)


def test_non_tty_never_prompts(workdir):
    run_cli("new", "x", "--no-env", cwd=workdir)
    env = {"EDITOR": "false", "DBGLOG_NO_EDITOR": "0"}
    r = run_cli("attempt", "add", "only a title", cwd=workdir, env=env)
    assert r.returncode == 0, r.stderr
    assert "Attempt 1 recorded" in r.stdout


def test_editor_used_on_terminal(dbg, workdir, monkeypatch):
    import click

    import dbglog.cli.common as cli_mod

    new(dbg, "editor case")
    monkeypatch.setenv("DBGLOG_NO_EDITOR", "0")
    monkeypatch.setattr(cli_mod, "stdin_is_tty", lambda: True)
    seen = {}

    def fake_edit(text, extension=None):
        seen["template"] = text
        return text.replace("**Hypothesis:**", "**Hypothesis:** stale TLB").replace(
            "**Result:**", "**Result:** Still hangs")

    monkeypatch.setattr(click, "edit", fake_edit)
    code, out, _ = dbg("attempt", "add", "from editor")
    assert code == 0
    a = j(dbg("show", "--json")[1])["attempts"][0]
    assert "**What you did:**" in seen["template"]
    assert a["hypothesis"] == "stale TLB" and a["result"] == "Still hangs"


def test_hand_edit_is_imported_before_next_write(dbg, workdir):
    inv = new(dbg, "hand edit case")
    dbg("attempt", "add", "first", "--did", "x", "--outcome", "failed")
    path = workdir / inv["path"]
    text = path.read_text()
    text = text.replace("**What you did:** x", "**What you did:** x, then y (edited by hand)")
    path.write_text(text)
    code, out, _ = dbg("attempt", "add", "second", "--did", "z", "--json")
    assert code == 0
    code, out, _ = dbg("show", "--json")
    shown = j(out)
    assert shown["attempts"][0]["did"] == "x, then y (edited by hand)"
    assert [a["number"] for a in shown["attempts"]] == [1, 2]
    assert "x, then y (edited by hand)" in path.read_text()


def test_conflict_keeps_both_sides(dbg, workdir):
    inv = new(dbg, "conflict case")
    dbg("attempt", "add", "first", "--did", "x")
    path = workdir / inv["path"]
    # The database moves on without the file being re-rendered (e.g. a crashed writer)...
    con = sqlite3.connect(workdir / ".dbglog" / "dbglog.db")
    con.execute("UPDATE attempts SET result = 'db side' WHERE number = 1")
    con.execute("UPDATE investigations SET rev = rev + 1")
    con.commit()
    con.close()
    # ...while somebody edits the file.
    path.write_text(path.read_text().replace("**What you did:** x", "**What you did:** file side"))
    code, out, err = dbg("attempt", "add", "second", "--did", "y")
    assert code == 2 and "dbglog-conflict.md" in err and inv["path"] in err
    conflict = path.with_name(path.name[:-3] + ".dbglog-conflict.md")
    assert "db side" in conflict.read_text()
    assert "file side" in path.read_text()
    # Resolve: the merged file wins.
    conflict.unlink()
    code, out, err = dbg("sync", "--resolve", str(path), "--json")
    assert code == 0, err
    code, out, _ = dbg("show", "--json")
    assert j(out)["attempts"][0]["did"] == "file side"
    code, out, _ = dbg("attempt", "add", "second", "--did", "y", "--json")
    assert code == 0 and j(out)["number"] == 2


def test_export_rewrites_files(dbg, workdir):
    inv = new(dbg, "export case")
    path = workdir / inv["path"]
    before = path.read_bytes()
    code, out, _ = dbg("export", "--json")
    assert code == 0 and j(out)["written"] == [inv["path"]]
    assert path.read_bytes() == before


def test_dbglog_dir_override(workdir, tmp_path_factory):
    other = tmp_path_factory.mktemp("elsewhere") / ".dbglog"
    r = run_cli("new", "env override", "--no-env", "--json", cwd=workdir, env={"DBGLOG_DIR": str(other)})
    assert r.returncode == 0, r.stderr
    assert (other / "dbglog.db").exists()
    assert not (workdir / ".dbglog").exists()


def test_workspace_found_walking_up_and_at_git_root(workdir):
    (workdir / ".git").mkdir()
    sub = workdir / "a" / "b"
    sub.mkdir(parents=True)
    r = run_cli("new", "from a subdir", "--no-env", cwd=sub)
    assert r.returncode == 0, r.stderr
    assert (workdir / ".dbglog").is_dir() and (workdir / "logs").is_dir()
    r = run_cli("list", "--json", cwd=sub)
    assert len(json.loads(r.stdout)) == 1


def test_outcome_inferred_from_result_when_not_given(dbg):
    new(dbg, "inference case")
    for result, expected in (("Still hangs at 0%", "failed"), ("Works: 38 passes complete", "worked"),
                             ("Metrics look odd", "inconclusive"), ("", "untested")):
        code, out, _ = dbg("attempt", "add", f"try {expected}", "--did", "x", "--result", result, "--json")
        assert code == 0 and j(out)["outcome"] == expected, result


def test_show_displays_free_sections(dbg, workdir):
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace

    inv = new(dbg, "sections in show")
    recs = Records(Workspace(workdir / ".dbglog"))
    recs.set_section(inv["id"], "Bisection: v1..v2 (s1)", "**Result:** first bad commit `abc1234`")
    recs.close()
    code, out, _ = dbg("show")
    assert code == 0 and "Bisection: v1..v2 (s1)" in out and "abc1234" in out


def test_inferred_outcome_reads_negations_and_says_it_is_a_guess(ws, cli_fast):
    cli = cli_fast  # the entry point (and its `attempt add` fast path) in-process
    cli(ws, "new", "OOM at step 4k", "--no-env", check=0)
    cases = {"No OOM anymore after 5000 steps": "worked", "No segfault after 1000 iterations": "worked",
             "No deadlock in 50 runs": "worked", "Hang disappears": "worked",
             "Error rate dropped from 30% to 0": "worked", "Still hangs at step 4k": "failed",
             "Collected an nsys trace": "inconclusive"}
    for result, expected in cases.items():
        out = json.loads(cli(ws, "attempt", "add", result[:20], "--did", "x", "--result", result, "--json",
                             check=0).stdout)
        assert (out["outcome"], out["outcome_inferred"]) == (expected, True), result
    human = cli(ws, "attempt", "add", "y", "--did", "x", "--result", "did not help", check=0).stdout
    assert "failed, a guess from the result" in human
    given = json.loads(cli(ws, "attempt", "add", "z", "--did", "x", "--result", "did not help", "-o", "partial",
                           "--json", check=0).stdout)
    assert (given["outcome"], given["outcome_inferred"]) == ("partial", False)


def test_list_keeps_its_columns_whatever_the_length_of_the_ids(ws, cli_fast):
    cli_fast(ws, "new", "dead", "--no-env", check=0)
    cli_fast(ws, "new", "NCCL test hangs between GPU2 and GPU3 all the time on the A6000 box", "--no-env", check=0)
    lines = cli_fast(ws, "list", check=0).stdout.splitlines()
    assert len(lines) == 2 and len({ln.index(" open ") for ln in lines}) == 1  # (one column, not a ragged one)


def test_deleting_an_attempt_unlinks_the_steps_it_did_so_they_never_point_at_the_next_attempt_of_that_number(dbg):
    new(dbg, "links")
    for args in (["attempt", "add", "a1", "-o", "failed"], ["attempt", "add", "a2", "-o", "failed"],
                 ["next", "add", "step one"], ["next", "add", "step two"],
                 ["next", "done", "1", "--attempt", "2"], ["next", "done", "2", "--attempt", "1"]):
        assert dbg(*args)[0] == 0, args
    code, out, _ = dbg("attempt", "delete", "2", "--json")
    assert code == 0 and j(out)["unlinked_steps"] == [1]
    assert dbg("attempt", "add", "a new second", "-o", "worked")[0] == 0  # numbered 2 again
    steps = j(dbg("next", "list", "--json")[1])
    assert [(s["text"], s["status"], s["attempt"]) for s in steps] == [("step one", "done", None),
                                                                      ("step two", "done", 1)]
