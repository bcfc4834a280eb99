"""Start-up an agent can afford (issue 16): the commands an agent runs all the time import only
what they need. Checked in a subprocess with ``python -X importtime`` (every module imported, in
order), so a new top-level import of a heavy library on a hot path fails here, not in a benchmark.
Timings are in bench/agent_bench.py (not asserted: the machine is shared)."""

import subprocess
import sys

import pytest

from conftest import cli_env

HEAVY = ("click", "jinja2", "rich", "markdown_it", "mdit_py_plugins", "pygments", "yaml", "psutil", "tomlkit",
         "sqlite_utils")


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    from dbglog.records import Records
    from dbglog.workspace import Workspace

    root = tmp_path_factory.mktemp("startup")
    (root / ".git").mkdir()
    recs = Records(Workspace(root / ".dbglog"), create=True)
    inv = recs.new("NCCL all_reduce hangs", symptom="rank 3 stalls")
    recs.add_attempt(inv.id, title="Disable P2P", did="NCCL_P2P_DISABLE=1 torchrun train.py", result="still hangs",
                     outcome="failed")
    recs.diff_add(inv.id, "GPUs", "4", "8")
    recs.set_section(inv.id, "Notes", "Some **markdown** with `code`.")
    recs.close()
    return root


def imported(ws, *args, entry=("-m", "dbglog")):
    p = subprocess.run([sys.executable, "-X", "importtime", *entry, *args], cwd=ws, capture_output=True, text=True,
                       env=cli_env({"DBGLOG_NO_EDITOR": "1"}), stdin=subprocess.DEVNULL, timeout=60)
    mods = {ln.split("|")[-1].strip() for ln in p.stderr.splitlines() if ln.startswith("import time:")}
    return p, mods


def heavy(mods, allowed=()):
    return {m for m in mods if m.split(".")[0] in HEAVY and m.split(".")[0] not in allowed}


def test_tried_imports_no_click_nor_the_mirror(ws):
    p, mods = imported(ws, "tried", "disable p2p")
    assert p.returncode == 0 and "Disable P2P" in p.stdout
    assert not heavy(mods) and "dbglog.cli" not in mods and "dbglog.mirror" not in mods, heavy(mods)
    assert "dbglog.fastpath" in mods


def test_tried_fast_path_prints_what_the_cli_prints(ws):
    cli = [sys.executable, "-c", "from dbglog.cli import main; main()"]
    for args in (["tried", "disable p2p"], ["tried", "upgrade the driver"], ["tried", "--json", "-n", "2", "p2p"],
                 ["tried", "--status", "bogus", "p2p"], ["tried", "-n", "0", "p2p"], ["tried", "--tag=x", "p2p"]):
        fast = subprocess.run([sys.executable, "-m", "dbglog", *args], cwd=ws, capture_output=True, text=True,
                              env=cli_env(), timeout=60)
        slow = subprocess.run(cli + args, cwd=ws, capture_output=True, text=True, env=cli_env(), timeout=60)
        assert (fast.returncode, fast.stderr) == (slow.returncode, slow.stderr), args
        if "--json" in args:  # (elapsed_ms differs between two runs)
            import json

            a, b = json.loads(fast.stdout), json.loads(slow.stdout)
            a.pop("elapsed_ms"), b.pop("elapsed_ms")
            assert a == b
        else:
            assert fast.stdout == slow.stdout, args


def test_show_to_a_pipe_imports_no_rich(ws):
    p, mods = imported(ws, "show")
    assert p.returncode == 0 and "Disable P2P" in p.stdout and "| 1 | GPUs | 4 | 8 | untested |" in p.stdout
    assert "Some **markdown** with `code`." in p.stdout
    assert not heavy(mods, allowed=("click",)), heavy(mods, allowed=("click",))


def test_attempt_add_imports_only_the_renderer(ws):
    p, mods = imported(ws, "attempt", "add", "again", "--did", "x", "--result", "still hangs")
    assert p.returncode == 0, p.stderr
    assert not heavy(mods, allowed=("click", "jinja2")), heavy(mods, allowed=("click", "jinja2"))


def test_session_start_hook_is_stdlib_only(ws):
    p, mods = imported(ws, "hook", "session-start")
    assert p.returncode == 0 and "NCCL all_reduce hangs" in p.stdout
    assert not heavy(mods) and "dbglog.records" not in mods and "dbglog.search" not in mods
