"""logs/ as a hostile filesystem (issue 30): symbolic link loops, dangling links and links out of the
workspace are reported per file by `doctor` and skipped by every other command with one warning line;
no command is locked out. And the listing manifest (issue 26, "Scale") never hides a change."""

from __future__ import annotations

import json
import os
import time

import pytest

from conftest import run_cli_inproc
from tree_guard import tree_guard  # noqa: F401 - kills what a probe started, pass or fail

LINKS = {
    "loop": lambda logs, outside: (logs / "loop.md").symlink_to("loop.md"),
    "dangling": lambda logs, outside: (logs / "dangling.md").symlink_to("/nonexistent/nothing.md"),
    "out of the workspace": lambda logs, outside: (logs / "out.md").symlink_to(outside),
}


@pytest.fixture
def one_bug(workdir):
    p = run_cli_inproc(workdir, "new", "nccl hang on rank 3", "--no-env", "--json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)["id"]


@pytest.mark.parametrize("kind", list(LINKS))
def test_a_bad_link_in_logs_leaves_every_command_working_with_one_warning(workdir, tmp_path_factory, one_bug, kind):
    outside = tmp_path_factory.mktemp("elsewhere") / "secret.md"
    outside.write_text("---\nid: 20260101-stolen\n---\n# stolen\n")
    LINKS[kind](workdir / "logs", outside)
    for args in (["list"], ["show"], ["attempt", "add", "try NCCL_P2P_DISABLE=1", "--result", "still hangs"],
                 ["tried", "NCCL_P2P_DISABLE"], ["search", "hang"], ["next", "add", "look at ib"],
                 ["sync"], ["export"], ["runs", "list"]):
        p = run_cli_inproc(workdir, *args)
        assert p.returncode in (0, 1) and "internal error" not in p.stderr, (args, p.returncode, p.stderr)
        warned = [ln for ln in p.stderr.splitlines() if "symbolic link" in ln]
        assert len(warned) == 1 and "skipped" in warned[0], (args, p.stderr)
    listed = json.loads(run_cli_inproc(workdir, "list", "--json").stdout)
    assert [i["id"] for i in listed] == [one_bug]  # nothing read through the link


def test_doctor_says_what_each_link_is(workdir, tmp_path_factory, one_bug):
    outside = tmp_path_factory.mktemp("elsewhere") / "x.md"
    outside.write_text("x")
    for make in LINKS.values():
        make(workdir / "logs", outside)
    p = run_cli_inproc(workdir, "doctor", "--json")
    assert p.returncode == 1
    found = {x["path"]: x["message"] for x in json.loads(p.stdout)["problems"] if x["kind"] == "symlink"}
    assert "loop" in found["logs/loop.md"]
    assert "dangling" in found["logs/dangling.md"]
    assert "out of the workspace" in found["logs/out.md"]


def test_a_link_in_place_of_a_mirror_file_is_skipped_and_export_puts_the_file_back(workdir, tmp_path_factory,
                                                                                  one_bug):
    f = workdir / "logs" / f"{one_bug}.md"
    moved = tmp_path_factory.mktemp("elsewhere") / f.name
    os.replace(f, moved)
    f.symlink_to(moved)
    p = run_cli_inproc(workdir, "list")
    assert p.returncode == 0 and "symbolic link" in p.stderr and "directory" not in p.stderr
    doctor = json.loads(run_cli_inproc(workdir, "doctor", "--json").stdout)["problems"]
    assert [x["kind"] for x in doctor if x["path"] == f"logs/{one_bug}.md"] == ["symlink"]
    f.unlink()
    assert run_cli_inproc(workdir, "export").returncode == 0
    assert f.is_file() and not f.is_symlink()


def _age(path, seconds: float = 10.0) -> None:
    """Make a directory's stamp old, as it is between two commands typed by a person (not racy)."""
    past = time.time() - seconds
    os.utime(path, (past, past))


def test_an_in_place_edit_is_taken_in_while_the_listing_is_remembered(workdir, one_bug):
    logs = workdir / "logs"
    _age(logs)
    assert run_cli_inproc(workdir, "list").returncode == 0  # remembers the listing
    assert (workdir / ".dbglog" / "cache" / "logs-listing").exists()
    f = logs / f"{one_bug}.md"
    with open(f, "r+", encoding="utf-8") as fh:  # in place: the directory's stamp does not move
        text = fh.read().replace("nccl hang on rank 3", "nccl hang on rank 5")
        fh.seek(0)
        fh.write(text)
        fh.truncate()
    stamp = os.stat(logs).st_mtime_ns
    listed = json.loads(run_cli_inproc(workdir, "list", "--json").stdout)
    assert os.stat(logs).st_mtime_ns == stamp
    assert listed[0]["title"] == "nccl hang on rank 5"


def test_a_file_added_while_the_listing_is_remembered_is_taken_in(workdir, one_bug):
    logs = workdir / "logs"
    _age(logs)
    assert run_cli_inproc(workdir, "list").returncode == 0
    src = (logs / f"{one_bug}.md").read_text(encoding="utf-8")
    (logs / "copy.md").write_text(src.replace(one_bug, "20261202-another-one-abcd").replace("rank 3", "rank 9"),
                                  encoding="utf-8")
    listed = json.loads(run_cli_inproc(workdir, "list", "--json").stdout)
    assert sorted(i["title"] for i in listed) == ["nccl hang on rank 3", "nccl hang on rank 9"]


def test_a_write_after_an_outside_edit_of_its_own_file_takes_the_edit_in_first(workdir, one_bug):
    """The write's own file is checked inside the transaction, even when the listing is trusted."""
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace

    _age(workdir / "logs")
    recs = Records(Workspace(workdir / ".dbglog"))
    recs.sync()
    f = workdir / "logs" / f"{one_bug}.md"
    f.write_text(f.read_text(encoding="utf-8").replace("rank 3", "rank 4"), encoding="utf-8")  # after the check
    with recs.change(one_bug):
        pass
    recs.close()
    assert "rank 4" in f.read_text(encoding="utf-8")  # the edit survived the write
