"""Hostile probes, third round (session 5, after the layout move): what broke, each failing on the code
before its fix.

* hand edits of `logs/`: an id that climbs out of `logs/` (`export` wrote `../../x.md` outside the
  workspace), an attempt number past SQLite's integers (an internal error on every command);
* an unlucky machine: a full disk while a repro prints (a traceback from the output thread, the run
  folder left behind while the line said "nothing was changed");
* hostile settings: a user `[[advice]]` regex that backtracks for ever or does not compile;
* what an agent can send that a shell cannot: NUL bytes, a NaN timeout, lone surrogates (MCP);
* a 100 KB command line given to the command hook.
"""

import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import cli_env, run_cli, run_cli_inproc
from dbglog.util import redact
from test_probes import dbg, one_line_error, snapshot


def _ws(tmp_path: Path) -> Path:
    ws = tmp_path / "outer" / "w"
    ws.mkdir(parents=True)
    for args in (["new", "NCCL hang", "--no-env"], ["attempt", "add", "p2p", "-r", "still hangs", "-o", "failed"]):
        assert dbg(*args, cwd=ws).returncode == 0, args
    return ws


def _log(ws: Path) -> Path:
    return next((ws / "logs").glob("*.md"))


def _every_file(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if ".git/" not in p.as_posix())


# --- hand edits of logs/ -----------------------------------------------------------------------


@pytest.mark.parametrize("bad_id", ["../../escaped", "/tmp/abs", "a/b", ".hidden", "x\x1b[2Jy", "x" * 300])
def test_an_id_that_is_not_a_file_name_is_refused_and_nothing_is_written_outside(tmp_path, bad_id):
    ws = _ws(tmp_path)
    md = _log(ws)
    text = md.read_text()
    md.write_text(re.sub(r"^id: .*$", lambda m: "id: " + json.dumps(bad_id), text, count=1, flags=re.M))
    outside = _every_file(tmp_path)
    for args in (["export"], ["list"], ["attempt", "add", "x", "-r", "y"]):
        r = dbg(*args, cwd=ws)
        one_line_error(r, args)
        assert "front matter id" in r.stderr and "names the file in logs/" in r.stderr, r.stderr
    assert _every_file(tmp_path) == outside  # before the fix: outer/escaped.md was written by export


def test_an_attempt_number_past_sqlite_integers_is_one_line(tmp_path):
    ws = _ws(tmp_path)
    md = _log(ws)
    md.write_text(md.read_text().replace("### Attempt 1:", "### Attempt 99999999999999999999999:"))
    for args in (["list"], ["sync"], ["attempt", "add", "x", "-r", "y"]):
        r = dbg(*args, cwd=ws)
        one_line_error(r, args)
        assert "attempt number 9999" in r.stderr and "too large" in r.stderr, r.stderr


# --- hostile settings ---------------------------------------------------------------------------


def _advice_config(tmp_path: Path, when: str) -> Path:
    cfg = tmp_path / "config.toml"
    cfg.write_text(f"[[advice]]\nid = 'evil'\nstep = 'do a thing'\nwhen = {when}\n")
    return cfg


@pytest.mark.parametrize("when", ["{ text = '(a+)+$' }", "{ evidence = 'kernel-log', finding = '(x+x+)+y' }"])
def test_a_user_advice_regex_that_backtracks_cannot_hang_a_run(tmp_path, monkeypatch, when):
    from dbglog.run import advice

    monkeypatch.setenv("DBGLOG_PATTERN_BUDGET", "0.2")  # the budget, not its length, is under test
    rules = [r for r in advice.load(_advice_config(tmp_path, when)) if r.id == "evil"]
    run = {"outcome": "fail", "evidence": [{"kind": "kernel-log", "summary": "x" * 40, "findings": []}]}
    ctx = advice.Context(run=run, text="a" * 40 + "!")
    assert advice.advise(ctx, rules) == []  # before: hours of backtracking after the attempt was recorded
    # ... and said, once: a rule that silently never fires looks like one that did not apply
    assert len(ctx.warnings) == 1 and "advice rule 'evil'" in ctx.warnings[0] and "ran out of time" in ctx.warnings[0]
    good = [r for r in advice.load(_advice_config(tmp_path, "{ text = 'a{4}!' }")) if r.id == "evil"]
    assert [a["id"] for a in advice.advise(ctx, good)] == ["evil"]  # (a user's regex still matches)


def test_run_attempt_warns_when_a_user_advice_regex_ran_out_of_time(tmp_path, monkeypatch):
    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("new", "x", "--no-env", cwd=ws).returncode == 0
    (ws / ".dbglog" / "config.toml").write_text(_advice_config(tmp_path, "{ text = '(a+)+$' }").read_text())
    env = {"DBGLOG_PATTERN_BUDGET": "0.2"}
    r = run_cli("run", "-q", "--attempt", "a" * 40 + "!", "--", sys.executable, "-c", "raise SystemExit(3)",
                cwd=ws, env=env)
    assert r.returncode == 1, r.stderr  # the run's verdict; the rule's time-out is a warning, not an error
    assert "dbglog: warning: advice rule 'evil'" in r.stderr and "ran out of time" in r.stderr


def test_a_user_advice_regex_past_cs_int_is_one_line(tmp_path):
    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("new", "x", "--no-env", cwd=ws).returncode == 0
    (ws / ".dbglog" / "config.toml").write_text(_advice_config(tmp_path, "{ text = 'a{4294967296}' }").read_text())
    r = run_cli("run", "-q", "--attempt", "t", "--", sys.executable, "-c", "raise SystemExit(3)", cwd=ws)
    one_line_error(r, "advice a{4294967296}")
    assert "bad regex in when.text" in r.stderr, r.stderr
    assert not any((ws / ".dbglog" / "runs").glob("*")), "refused before the repro ran"


# --- what an agent can send that a shell cannot ---------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec=None, min_codepoint=0, max_codepoint=0xE000)))
def test_what_sanitize_keeps_can_always_be_written(text):
    out = redact.sanitize(text)
    out.encode("utf-8")  # a lone surrogate stored could never be written again (mirror, --json, MCP)
    assert redact.sanitize(out) == out
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", out)


def _mcp(tmp_path, calls):
    """Call the tools through the real server object (its argument handling included), in this process."""
    pytest.importorskip("mcp")
    import asyncio

    from dbglog import mcp_server

    server = mcp_server.build_server()

    async def main():
        return [await server.call_tool(name, args) for name, args in calls]
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        return asyncio.run(main())
    finally:
        os.chdir(cwd)


def test_mcp_arguments_no_process_could_take_are_tool_errors_and_change_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("DBGLOG_DIR", raising=False)
    assert dbg("new", "NCCL hang", "--no-env", cwd=tmp_path).returncode == 0
    before = snapshot(tmp_path)
    calls = [("show", {"investigation": "x\udcff"}), ("tried", {"idea": "p2p", "tags": ["a\udcff"]}),
             ("new_investigation", {"title": "t", "tags": ["x\udcff"]}),
             ("add_attempt", {"title": "t", "runs": ["r\udcff"]}),
             ("run_repro", {"cmd": ["true\x00"], "timeout": 5}),
             ("run_repro", {"cmd": ["true"], "timeout": 5, "env": {"A": "b\x00"}}),
             ("run_repro", {"cmd": ["true"], "timeout": math.nan}),
             ("tried", {"idea": "p2p", "limit": -1}), ("search", {"query": "p2p", "limit": 0}),
             ("run_repro", {"cmd": ["true"], "timeout": 5, "idle_timeout": math.inf}),
             ("run_repro", {"cmd": ["true"], "timeout": 5, "ready_timeout": math.nan, "server": "true",
                            "ready": "true"}),
             ("show", {})]
    out = _mcp(tmp_path, calls)
    for (name, args), res in zip(calls[:-1], out[:-1]):
        assert res.is_error, (name, args, res)
        text = res.content[0].text
        assert "\n" not in text and "internal error" not in text, (name, text)
        assert res.structured_content == {"error": text}
    assert not out[-1].is_error  # still serving
    assert snapshot(tmp_path) == before


# --- an unlucky machine: a full disk while a repro prints -------------------------------------------


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full (writes to it fail with ENOSPC)")
@pytest.mark.parametrize("cap", [None, 1 << 10])
def test_output_that_meets_a_full_disk_is_drained_not_a_thread_traceback(cap):
    from dbglog.run import runner

    f = runner._CappedFile(Path("/dev/full"), cap)
    for _ in range(200):  # past the write buffer: before, the pump thread died here with a traceback
        f.write(b"x" * 8192)
    f.flush()
    f.close()
    assert f.error is not None and f.total == 200 * 8192


def test_a_run_that_cannot_be_recorded_leaves_no_run_folder(tmp_path, monkeypatch):
    from dbglog import ops
    from dbglog.kb.records import Records
    from dbglog.util.errors import DbglogError

    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("new", "x", "--no-env", cwd=ws).returncode == 0

    def full(*a, **k):
        raise DbglogError("no space left on device: free some space and retry; nothing was changed")
    monkeypatch.setattr(Records, "record_runs", full)
    monkeypatch.chdir(ws)
    monkeypatch.delenv("DBGLOG_DIR", raising=False)
    recs = ops.open_records()
    try:
        with pytest.raises(DbglogError):
            ops.run_repro(recs, [sys.executable, "-c", "print('x' * 1000)"], ops.RunOptions(timeout=60),
                          attempt_title="t")
    finally:
        recs.close()
    assert not any((ws / ".dbglog" / "runs").glob("*"))  # before: the folder stayed, the line said nothing changed


FULL_SCRIPT = """
set -u
mount -t tmpfs -o size=4m tmpfs "$1" || exit 77
cd "$1" && git init -q . && $2 -m dbglog new "disk" --no-env >/dev/null || exit 78
avail=$(df -B1 --output=avail . | tail -1)
head -c $((avail - 61440)) /dev/zero > filler  # ~60 KB left: the run starts, its output does not fit
for a in "run -q -- $2 -c print('x'*400000)" "run -q --attempt r -- $2 -c print('y'*400000)"; do
    $2 -m dbglog $a; echo "rc=$?"
done
rm filler
echo "runs=$(ls .dbglog/runs | wc -l) tmp=$(ls -a .dbglog logs | grep -c tmp)"
$2 -m dbglog doctor >/dev/null; echo "doctor=$?"
"""


def test_a_full_disk_end_to_end(tmp_path):
    """On a real full file system (a 4 MB tmpfs in a mount namespace) a run whose output does not fit:
    no thread traceback; recorded (rc 0, its note says the output is incomplete) or refused in one line
    with no run folder left; no temporary file; the workspace healthy after. Skipped where a tmpfs
    cannot be mounted."""
    if shutil.which("unshare") is None:
        pytest.skip("no unshare on this machine")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    script = tmp_path / "full.sh"
    script.write_text(FULL_SCRIPT)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]), DBGLOG_NO_EDITOR="1")
    env.pop("DBGLOG_DIR", None)
    args = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-r", "-m"]
    p = subprocess.run([*args, "sh", str(script), str(mnt), sys.executable], capture_output=True, text=True,
                       env=env, timeout=300)
    if p.returncode in (77, 78) or "unshare failed" in p.stderr or "Operation not permitted" in p.stderr:
        pytest.skip(f"cannot mount a tmpfs here: {p.stderr.strip()[:200]}")
    codes = re.findall(r"rc=(\d+)", p.stdout)
    assert len(codes) == 2 and set(codes) <= {"0", "2"}, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and all(ln.startswith("dbglog: ") for ln in p.stderr.strip().splitlines()), \
        p.stderr
    assert codes.count("2") == len(p.stderr.strip().splitlines())  # one line per refusal
    assert f"runs={codes.count('0')} tmp=0" in p.stdout and "doctor=0" in p.stdout, p.stdout + p.stderr


def test_a_huge_command_still_gets_the_hooks_notice(tmp_path):
    ws = tmp_path / "w"
    ws.mkdir()
    cmd = "python3 " + "a" * 60000 + ".py --fast"
    for args in (["new", "x", "--no-env"], ["attempt", "add", "long one", "-d", cmd, "-r", "still hangs", "-o", "failed"]):
        assert dbg(*args, cwd=ws).returncode == 0, args
    r = run_cli_inproc(ws, "hook", "pre-command", "--format", "text", input=cmd)
    assert r.returncode == 0 and r.stderr == "", r.stderr  # before: "LIKE or GLOB pattern too complex", no notice
    assert "long one" in r.stdout, r.stdout


def test_signature_add_on_a_full_disk_leaves_no_temporary_file(tmp_path, monkeypatch):
    import errno

    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("signature", "add", "first", "foo", cwd=ws).returncode == 0
    cfg = ws / ".dbglog" / "config.toml"
    before = cfg.read_bytes()

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(os, "fsync", full)
    r = dbg("signature", "add", "second", "bar.*baz", cwd=ws)
    monkeypatch.undo()
    one_line_error(r, "signature add on a full disk")
    assert "no space left on device" in r.stderr, r.stderr
    assert cfg.read_bytes() == before
    assert sorted(p.name for p in cfg.parent.iterdir() if "tmp" in p.name) == []  # before: config.toml.tmp


# --- secrets in a repro's output, env, argv and attempt text -------------------------------------

SECRET_REPRO = """
import os, sys
print("token", os.environ["HF_TOKEN"], "key", os.environ["OPENAI_API_KEY"])
print("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abcdefghijklmnop")
print("argv", sys.argv[1:], "url https://user:hunter2url@example.com/r.git", file=sys.stderr)
print("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
sys.stdout.buffer.write(b"raw \\xff\\x1b[31m bytes stay\\n")
sys.exit(1)
"""
SECRETS = ("hf_abcdefghijklmnopqrstuvwxyzABCDEF", "sk-abcdefghijklmnopqrstuvwxyz0123456789", "eyJhbGciOi",
           "hunter2", "wJalrXUtnFEMI", "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB")


def test_secrets_never_reach_logs_or_the_run_folder(tmp_path):
    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("new", "leaky", "--no-env", cwd=ws).returncode == 0
    (ws / "repro.py").write_text(SECRET_REPRO)
    r = run_cli("run", "-q", "--attempt", "with ghp_abcdefghijklmnopqrstuvwxyz0123456789AB",
                "--env", "OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwxyz0123456789", "--",
                sys.executable, "repro.py", "--password=hunter2pw", "--token", "hf_abcdefghijklmnopqrstuvwxyzABCDEF",
                cwd=ws, env={"HF_TOKEN": "hf_abcdefghijklmnopqrstuvwxyzABCDEF"})
    assert r.returncode == 1, r.stderr
    r = run_cli("run", "-q", "--timeout", "1", "--on-hang", "sh -c 'echo tok $HF_TOKEN'", "--", sys.executable, "-c",
                "import time; time.sleep(60)", cwd=ws, env={"HF_TOKEN": "hf_abcdefghijklmnopqrstuvwxyzABCDEF"})
    assert "on_hang:1: ok" in r.stdout, r.stdout + r.stderr  # (a capture's output is in the run folder too)
    r = dbg("attempt", "add", "by hand", "-r", "password: hunter2again; Bearer sk-abcdefghijklmnopqrstuvwxyz0123456789",
            cwd=ws)
    assert r.returncode == 0, r.stderr
    files = [p for p in [*(ws / "logs").rglob("*"), *(ws / ".dbglog" / "runs").rglob("*")] if p.is_file()]
    assert any(p.name == "output" for p in files) and any(p.name.startswith("on_hang") for p in files)
    for p in files:
        data = p.read_bytes()
        for s in SECRETS:
            assert s.encode() not in data, (p, s)  # before: stdout, stderr and output held them all
    out = b"".join(p.read_bytes() for p in files if p.name == "stdout")
    assert b"token <redacted> key <redacted>" in out and b"raw \xff\x1b[31m bytes stay" in out  # only secrets go


@pytest.mark.parametrize("target", ["nope.md", "logs/nope.md", "logs", "README.md"])
def test_sync_resolve_of_no_investigation_file_is_refused(tmp_path, target):
    ws = _ws(tmp_path)
    (ws / "README.md").write_text("# not ours\n")
    before = snapshot(ws)
    r = dbg("sync", "--resolve", target, cwd=ws)
    one_line_error(r, target)  # before: exit 0, nothing resolved, nothing said
    assert "no such investigation file" in r.stderr
    assert snapshot(ws) == before


def test_import_of_a_symlink_loop_is_one_line(tmp_path):
    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("init", cwd=ws).returncode == 0
    (ws / "loop.md").symlink_to("loop.md")
    before = snapshot(ws)
    r = dbg("import", "loop.md", cwd=ws)
    one_line_error(r, "import loop.md")  # before: internal error, RuntimeError from Path.resolve()
    assert "symbolic links" in r.stderr
    assert snapshot(ws) == before


@pytest.mark.parametrize("marker", [".dbglog", ".git"])
def test_dbglog_dir_naming_a_projects_root_is_refused(tmp_path, marker):
    proj = tmp_path / "proj"
    proj.mkdir()
    assert dbg("init", cwd=proj).returncode == 0
    if marker == ".git":
        subprocess.run(["git", "init", "-q"], cwd=proj, check=True)
        shutil.rmtree(proj / ".dbglog")
        shutil.rmtree(proj / "logs")
    listing = _every_file(tmp_path)
    r = dbg("new", "x", "--no-env", cwd=proj, env={"DBGLOG_DIR": str(proj)})
    one_line_error(r, "DBGLOG_DIR=root")  # before: dbglog.db among the sources, logs/ beside the project
    assert f"DBGLOG_DIR={proj / '.dbglog'}" in r.stderr
    assert _every_file(tmp_path) == listing


def test_abort_of_a_finished_bisection_keeps_its_result(tmp_path):
    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("new", "x", "--no-env", cwd=ws).returncode == 0
    r = dbg("bisect", "toggles", "--env", "X=1", "--", sys.executable, "-c",
            "import os, sys; sys.exit(1 if os.environ.get('X') == '1' else 0)", cwd=ws)
    assert r.returncode == 0, r.stdout + r.stderr
    before = snapshot(ws)
    r = dbg("bisect", "abort", cwd=ws)
    one_line_error(r, "bisect abort of a done session")  # before: 'Aborted', the status and result became aborted
    assert "has finished (done)" in r.stderr
    assert snapshot(ws) == before
    assert json.loads(dbg("bisect", "status", "--json", cwd=ws).stdout)["status"] == "done"


def test_hook_options_in_dbglogs_words(tmp_path):
    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("new", "x", "--no-env", cwd=ws).returncode == 0
    r = run_cli_inproc(ws, "hook", "pre-command", "--threshold", "abc", input="ls")
    assert r.returncode == 0 and r.stderr.strip() == \
        "dbglog hook: --threshold takes a number >= 1, got 'abc' (see `dbglog hook --help`)"  # before: int()'s words
    r = run_cli_inproc(ws, "hook", "session-start", "--json", input="")
    assert r.returncode == 0 and r.stderr == "", r.stderr  # before: "unknown argument '--json'"
    assert json.loads(r.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"


def test_hooks_read_a_workspace_whose_path_holds_uri_characters(tmp_path):
    ws = tmp_path / "we?ird#dir%20x"
    ws.mkdir()
    assert dbg("new", "NCCL hang", "--no-env", cwd=ws).returncode == 0
    r = run_cli_inproc(ws, "hook", "session-start", "--format", "text", input="")
    assert r.returncode == 0 and r.stderr == "", r.stderr  # before: "OperationalError: no such table: meta"
    assert "NCCL hang" in r.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == [ws.name]  # before: SQLite created tmp_path/"we"


RO_HOOK = """
cd "$1"
mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" || exit 77
cd "$1" && $2 -m dbglog hook session-start --format text </dev/null
"""


def test_the_session_hook_reads_a_read_only_workspace(tmp_path):
    if shutil.which("unshare") is None:
        pytest.skip("no unshare on this machine")
    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("new", "NCCL hang", "--no-env", cwd=ws).returncode == 0
    script = tmp_path / "ro.sh"
    script.write_text(RO_HOOK)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    env.pop("DBGLOG_DIR", None)
    args = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-r", "-m"]
    p = subprocess.run([*args, "sh", str(script), str(ws), sys.executable], capture_output=True, text=True,
                       env=env, timeout=120)
    if p.returncode == 77 or "unshare failed" in p.stderr or "Operation not permitted" in p.stderr:
        pytest.skip(f"cannot make the workspace read-only here: {p.stderr.strip()[:200]}")
    assert p.stderr == "" and "NCCL hang" in p.stdout, p.stdout + p.stderr  # before: OperationalError, no digest


def test_a_bad_runs_cap_setting_is_said_not_silently_dropped(tmp_path):
    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("init", cwd=ws).returncode == 0
    (ws / ".dbglog" / "config.toml").write_text('[runs]\nmax_size = "lots"\n')
    r = dbg("run", "-q", "--", sys.executable, "-c", "pass", cwd=ws)
    assert r.returncode == 0, r.stderr
    assert "warning:" in r.stderr and "[runs] max_size: bad size 'lots'" in r.stderr, r.stderr  # before: nothing


@pytest.mark.parametrize("pattern", ["/**/*.md", "../**/*.md", "~/**/*.md"])
def test_a_watch_pattern_that_walks_outside_the_workspace_is_refused(tmp_path, pattern):
    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("new", "x", "--no-env", cwd=ws).returncode == 0
    (ws / ".dbglog" / "config.toml").write_text(f"[search]\nwatch = [{json.dumps(pattern)}, \"**/*.md\"]\n")
    before = snapshot(ws)
    r = dbg("tried", "disable p2p", cwd=ws)
    one_line_error(r, pattern)  # before: every search walked the whole disk (over 30 s here) first
    assert "must stay inside the workspace" in r.stderr
    assert snapshot(ws) == before


@pytest.mark.parametrize("args", [["new", "t" * 501], ["attempt", "add", "t" * 501, "-r", "x"],
                                  ["attempt", "edit", "1", "--title", "t" * 501],
                                  ["run", "--attempt", "t" * 501, "--", "true"]])
def test_a_title_that_is_a_pasted_text_is_refused(tmp_path, args):
    ws = _ws(tmp_path)
    before = snapshot(ws)
    r = dbg(*args, cwd=ws)
    one_line_error(r, args[:2])  # before: a 100 KB heading in every list (1 MB through MCP)
    assert "501 characters" in r.stderr and "at most 500" in r.stderr
    assert snapshot(ws) == before
    assert dbg(*[("t" * 500 if a == "t" * 501 else a) for a in args], cwd=ws).returncode == 0  # (500 is fine)


@pytest.mark.parametrize("extra", [[], ["-n5"]], ids=["fast path", "click"])
def test_tried_into_a_closed_pipe_still_answers_with_its_exit_status(tmp_path, extra):
    ws = _ws(tmp_path)
    for idea, code in (("zzzqqq never seen", 1), ("p2p", 0)):
        p = subprocess.Popen([sys.executable, "-m", "dbglog", "tried", idea, *extra], cwd=ws, env=cli_env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        p.stdout.close()  # `dbglog tried ... | head -0`
        assert p.wait(timeout=120) == code, (idea, extra, p.stderr.read())  # before: 0 (fast path), 1 (click)
        p.stderr.close()


def test_run_into_a_closed_pipe_still_exits_with_the_runs_verdict(tmp_path):
    ws = _ws(tmp_path)
    for code, want in ((0, 0), (3, 1)):
        p = subprocess.Popen([sys.executable, "-m", "dbglog", "run", "--", sys.executable, "-c",
                              f"print('x\\n' * 100000); raise SystemExit({code})"], cwd=ws, env=cli_env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        p.stdout.close()  # `dbglog run -- CMD | head -1`
        assert p.wait(timeout=120) == want, p.stderr.read()  # before: 1 (click's EPIPE exit) for a pass too
        p.stderr.close()
