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
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace

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
    assert not heavy(mods) and "dbglog.cli" not in mods and "dbglog.kb.mirror" not in mods, heavy(mods)
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


def test_attempt_add_imports_no_click_no_jinja2(ws):
    p, mods = imported(ws, "attempt", "add", "again", "--did", "x", "--result", "still hangs")
    assert p.returncode == 0, p.stderr
    assert not heavy(mods) and "dbglog.cli" not in mods, heavy(mods)  # (the mirror is rendered without jinja2)


def test_session_start_hook_is_stdlib_only(ws):
    p, mods = imported(ws, "hook", "session-start")
    assert p.returncode == 0 and "NCCL all_reduce hangs" in p.stdout
    assert not heavy(mods) and "dbglog.kb.records" not in mods and "dbglog.kb.search" not in mods


def test_attempt_add_fast_path_prints_and_records_what_the_cli_does(tmp_path):
    """The same attempt recorded through the fast path and through the click CLI: same output, same
    record; a refusal (before anything is written) goes to the CLI and is reported once."""
    import json

    from conftest import run_cli

    cli = [sys.executable, "-c", "from dbglog.cli import main; main()"]
    outs = []
    for name, runner in (("fast", [sys.executable, "-m", "dbglog"]), ("slow", cli)):
        ws = tmp_path / name
        ws.mkdir()
        (ws / ".git").mkdir()
        assert run_cli("new", "hang", "--no-env", cwd=ws).returncode == 0
        got = []
        for args in (["Disable P2P", "-d", "NCCL_P2P_DISABLE=1 torchrun t.py", "-r", "still hangs"],
                     ["--did=NCCL_P2P_DISABLE=1 torchrun t.py", "--result", "same hang", "-o", "failed", "--json"],
                     ["x", "-o", "bogus", "-d", "y"], ["-i", "nope", "x", "-d", "y"], ["a", "b"],
                     ["--title", "Longer timeout", "-d", "timeout=timedelta(hours=2)", "-r", "same hang"],
                     ["x", "--title", "y", "-d", "z"]):
            p = subprocess.run(runner + ["attempt", "add", *args], cwd=ws, capture_output=True, text=True,
                               env=cli_env({"DBGLOG_NO_EDITOR": "1"}), stdin=subprocess.DEVNULL, timeout=60)
            out = p.stdout
            if "--json" in args:
                d = json.loads(out)
                out = (d["number"], d["outcome"], d["similar"][0]["attempt"], d["circuit_breaker"], d["next"])
            got.append((p.returncode, out.replace(ws.name, "WS") if isinstance(out, str) else out,
                        p.stderr.replace(ws.name, "WS")))
        listed = json.loads(run_cli("attempt", "list", "--json", cwd=ws).stdout)
        outs.append((got, [(a["number"], a["title"], a["did"], a["outcome"]) for a in listed]))
    fast, slow = outs
    assert [g[0] for g in fast[0]] == [0, 0, 2, 2, 2, 0, 2]
    assert len(fast[1]) == 3 and fast[1][2][1] == "Longer timeout"  # the refused ones recorded nothing, the others once
    # (ids differ between the two workspaces: compare with them taken out)
    import re

    def norm(x):
        return re.sub(r"\d{8}-[a-z0-9-]+", "ID", json.dumps(x))

    assert norm(fast) == norm(slow)


def test_bisect_git_with_a_silent_repro_imports_only_what_a_step_needs(tmp_path):
    """Every import beyond start-up is per-step overhead in bench/history_bench.py: a repro that prints
    nothing needs no signature catalog, no evidence parsers, no report renderer, no thread pool."""
    from dbglog.bisect.history import make_repo

    from conftest import run_cli

    repo = tmp_path / "repo"
    shas = make_repo(repo, 8, lambda i: {"v.txt": f"{i}\n"})
    assert run_cli("init", cwd=repo).returncode == 0
    p, mods = imported(repo, "bisect", "git", "--good", shas[0], "--bad", "HEAD", "--json", "--",
                       "sh", "-c", "[ $(cat v.txt) -lt 5 ]")
    assert p.returncode == 0, p.stderr[-2000:]
    import json

    assert json.loads(p.stdout)["first_bad"]["commit"] == shas[5]
    unneeded = {"dbglog.diagnose.signatures", "dbglog.diagnose.evidence", "dbglog.kb.mirror", "dbglog.kb.search",
                "concurrent.futures", "urllib.request", "dbglog.bisect.flaky", "dbglog.bisect.bayes",
                "dbglog.run.captures", "dbglog.bisect.toggles", "secrets"}
    # (psutil too: the tree's handles read /proc until a run needs more -- a kill, a hang's captures)
    assert not heavy(mods, allowed=("click",)) and not mods & unneeded, (heavy(mods, ("click",)), mods & unneeded)


# --- the mirror without jinja2: render_default must be the packaged template, byte for byte -------

from hypothesis import HealthCheck, given, settings  # noqa: E402

from test_mirror_roundtrip import investigations  # noqa: E402


@given(investigations())
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_python_renderer_is_the_packaged_template(inv):
    from dbglog.core import markdown
    from dbglog.kb import mirror

    assert markdown.render_default(inv) == mirror.render_jinja(inv)


def test_python_renderer_on_recorded_investigations(tmp_path):
    from dbglog.core import markdown
    from dbglog.kb import mirror
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace
    from test_agent_output import build_three

    build_three(tmp_path)
    recs = Records(Workspace(tmp_path / ".dbglog"))
    recs.set_status(recs.store.ids()[0], "resolved", "a race between the dq and dk streams")
    for inv_id in recs.store.ids():
        inv = recs.store.load(inv_id)
        assert markdown.render_default(inv) == mirror.render_jinja(inv)
        assert mirror.render(inv, recs.ws.templates_dir) == mirror.render_jinja(inv)
    # a user template in .dbglog/templates/ is still rendered by jinja2
    recs.ws.templates_dir.mkdir(parents=True, exist_ok=True)
    (recs.ws.templates_dir / "investigation.md.j2").write_text("custom {{ inv.title }}\n")
    mirror._template.cache_clear()
    assert mirror.render(inv, recs.ws.templates_dir).startswith("custom ")
    recs.close()
