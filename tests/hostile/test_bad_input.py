"""A user's mistake is one line and changes nothing: a bad value, a file that never ends, a broken
template, a hand edit no file name can hold, a setting out of range, a path outside the workspace, a
pasted text as a title. Every case exits 2 with one line `dbglog: ...` (no traceback, no "internal
error") and leaves the workspace byte-identical: `logs/`, the config and every record in the database.

`pytest tests/hostile` runs the hostile probes (this file and its neighbours) end to end."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from conftest import run_cli
from probe_kit import _every_file, _log, _ws, dbg, one_line_error, snapshot


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    subprocess.run(["git", "init", "-q"], cwd=d, check=True)
    for args in (["init"], ["new", "NCCL hang", "--no-env", "--tag", "nccl"],
                 ["attempt", "add", "disable p2p", "-d", "NCCL_P2P_DISABLE=1", "-r", "Still hangs", "-o", "failed"],
                 ["diff", "add", "GPUs", "4", "8"], ["next", "add", "Try NCCL_ALGO=Tree"],
                 ["run", "-q", "--", sys.executable, "-c", "pass"]):
        r = (run_cli if args[0] == "run" else dbg)(*args, cwd=d)
        assert r.returncode == 0, (args, r.stderr)
    (d / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (d / "args.txt").write_text("--a\n")
    return d


BAD_VALUES = [
    # supervised runs
    ["run", "--timeout", "nan", "--", "true"], ["run", "--timeout", "inf", "--", "true"],
    ["run", "--timeout", "0", "--", "true"], ["run", "--timeout", "-1", "--", "true"],
    ["run", "--timeout", "soon", "--", "true"], ["run", "--grace", "-1", "--", "true"],
    ["run", "--repeat", "0", "--", "true"], ["run", "--repeat", "99999999999999999999", "--", "true"],
    ["run", "--output-cap", "-5", "--", "true"], ["run", "--output-cap", "1e400", "--", "true"],
    ["run", "--output-cap", "lots", "--", "true"], ["run", "--capture", "bogus", "--", "true"],
    ["run", "--on-hang", "'unterminated", "--timeout", "1", "--", "true"], ["run", "--env", "NOEQUALS", "--", "true"],
    ["run", "--env", "=x", "--", "true"], ["run"], ["run", "--"], ["run", "--timout", "5", "--", "true"],
    ["run", "--attempt", "x", "-i", "no-such-bug", "--", "true"],
    # records
    ["new", ""], ["new", "../../etc/passwd"], ["new", "two\nlines"], ["new", "x", "--tag", "a\nb"],
    ["attempt", "add", "x", "-o", "bogus"], ["attempt", "add", "a\nb"], ["attempt", "add", "-r", "no title"],
    ["attempt", "edit", "0", "-r", "x"], ["attempt", "edit", "99999999999999999999", "-r", "x"],
    ["attempt", "edit", "abc", "-r", "x"], ["attempt", "edit", "1"], ["attempt", "edit", "77", "-r", "x"],
    ["attempt", "delete", "99"], ["attempt", "list", "-i", "no-such-bug"],
    ["diff", "add", "", "a", "b"], ["diff", "add", "GPUs", "1", "2"], ["diff", "add", "x", "a\nb", "c"],
    ["diff", "set", "99", "--status", "culprit"], ["diff", "set", "GPUs", "--status", "bogus"], ["diff", "set"],
    ["diff", "add", "y", "1", "2", "--status", "maybe"],
    ["next", "add", ""], ["next", "done", "99"], ["next", "done", "zzz-no-such-step"], ["next", "move", "1", "abc"],
    ["next", "done", "1", "--attempt", "0"], ["next", "done", "1", "--attempt", "42"],
    ["status", "bogus"], ["status", "a", "b", "c"], ["use", "no-such-bug"], ["show", "no-such-bug"],
    # search
    ["search", "!!!"], ["search", "x", "--limit", "0"], ["search", "x", "--since", "garbage"],
    ["search", "x", "--outcome", "bogus"], ["search", "x", "--kind", "bogus"], ["search", "x", "--status", "bogus"],
    ["tried", "???"],
    # runs, env, signatures
    ["runs", "show", "no-such-run"], ["runs", "list", "--limit", "-1"], ["runs", "prune"],
    ["runs", "prune", "--keep", "-1"], ["runs", "prune", "--older-than", "nan"], ["runs", "prune", "--max-size", "x"],
    ["env", "--timeout", "-1"], ["signature", "add", "n", "["], ["signature", "add", "bad name", "x"],
    ["signature", "add", "n", "x", "--rank", "500"], ["signature", "add", "a\"]\n[[x]]", "x"],
    ["signature", "test", "/no/such/file"],
    # bisection
    ["bisect", "status", "no-such-session"], ["bisect", "mark", "x", "bogus"], ["bisect", "git", "--", "true"],
    ["bisect", "git", "--good", "no-such-rev", "--bad", "HEAD", "--", "true"],
    ["bisect", "toggles", "--", "true"], ["bisect", "toggles", "--env", "NOEQ", "--", "true"],
    ["bisect", "toggles", "--env", "X=1", "--jobs", "0", "--", "true"],
    ["bisect", "toggles", "--env", "X=1", "--max-sets", "-1", "--", "true"],
    ["bisect", "toggles", "--config", "no-such.yaml:a=1", "--", "true"],
    ["bisect", "toggles", "--env", "X=1", "--jbos", "2", "--", "true"],
    ["bisect", "toggles", "--env", "X=1"],
    # import, sync
    ["import", "/no/such/file.md"], ["import", "binary.md"], ["sync", "--resolve", "/etc/passwd"],
    ["no-such-command"], ["attempt", "--no-such-flag"],
]


@pytest.mark.parametrize("args", BAD_VALUES, ids=lambda a: " ".join(a)[:60])
def test_a_bad_value_is_one_line_exit_2_and_changes_nothing(ws, args):
    before = snapshot(ws)
    r = dbg(*args, cwd=ws)
    one_line_error(r, args)
    assert snapshot(ws) == before, args
    rj = dbg(*args, "--json", cwd=ws) if args and args[0] not in ("no-such-command",) else None
    if rj is not None and rj.returncode == 2 and rj.stdout.strip():
        assert "error" in json.loads(rj.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def shared_ws(tmp_path_factory):
    """A git repo with two commits and a workspace holding one of everything."""
    d = tmp_path_factory.mktemp("hostile-more")
    g = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q"], cwd=d, check=True)
    for n in (1, 2):
        subprocess.run([*g, "commit", "-q", "--allow-empty", "-m", f"c{n}"], cwd=d, check=True)
    for args in (["new", "NCCL hang", "--no-env"], ["attempt", "add", "p2p", "-r", "Still hangs", "-o", "failed"],
                 ["next", "add", "Try NCCL_ALGO=Tree"], ["run", "-q", "--", sys.executable, "-c", "pass"]):
        assert (run_cli if args[0] == "run" else dbg)(*args, cwd=d).returncode == 0, args
    return d


MORE_BAD_VALUES = [
    ["run", "--", ""], ["run", "--", " "], ["run", "--env", "BAD NAME=1", "--", "true"],
    ["run", "--env", "A\nB=1", "--", "true"], ["run", "--unset", "", "--", "true"],
    ["run", "--unset", "A=B", "--", "true"], ["run", "--output-cap", "", "--", "true"],
    ["run", "--attempt", "two\nlines", "--", "true"], ["run", "--expect", "segfualt", "--", "true"],
    ["run", "--expect", "hnag", "--", "true"], ["run", "--repeat", "2", "--timout", "5", "--", "true"],
    ["attempt", "add", "x", "--run", "no-such-run"], ["search", "x", "--since", "99999999999d"],
    ["runs", "prune", "--max-size", ""],
    ["bisect", "git", "--god", "HEAD~1", "--bad", "HEAD", "--", "true"],
    ["bisect", "git", "--good", "HEAD~1", "--bda", "HEAD", "--", "true"],
    ["bisect", "git", "--good", "HEAD~1", "--bad", "HEAD", "--match", "segfualt", "--", "true"],
    ["bisect", "toggles", "--env", "X=1", "--match", "gpu.illegal_adress", "--", "true"],
    ["bisect", "toggles", "--env", "X=1", "-j2", "--mach", "x", "--", "true"],
    # not UTF-8 (a shell's raw bytes arrive as surrogates): an internal error deep in a write before
    ["show", "\udcff"], ["attempt", "add", "x", "-i", "\udcff"], ["search", "x", "--tag", "\udcff"],
    ["new", "x", "--file", "\udcff"], ["bisect", "log", "\udcff"],
    # a repetition count past C's int: OverflowError, not re.error
    ["signature", "add", "n", "a{4294967296}"],
    ["bisect", "toggles", "--env", "X=1", "--match", "a{4294967296}", "--", "true"],
    # guards: these already held
    ["run", "--timeout=5x", "--", "true"], ["run", "---timeout", "5", "--", "true"], ["run", "-Q", "--", "true"],
    ["next", "move", "1", "99999999999999999999"], ["runs", "prune", "--max-size", "1e400"],
    # a place before the first step was taken as the first (found by an adversarial probe)
    ["next", "add", "x", "--at", "0"], ["next", "add", "x", "--at", "-5"], ["next", "move", "1", "0"],
    ["bisect", "toggles", "--config", ":=1", "--", "true"], ["bisect", "toggles", "--args-from", "/nonexistent",
                                                             "--", "true"],
    ["use", "\x1b]0;owned\x07\x1b[2J"], ["runs", "show", "\x1b[2J"], ["signature", "add", "n", ""],
]


@pytest.mark.parametrize("args", MORE_BAD_VALUES, ids=lambda a: " ".join(a)[:60])
def test_more_bad_values_are_one_line_and_change_nothing(shared_ws, args):
    before = snapshot(shared_ws)
    # non-UTF-8 arguments go through a real process (the interpreter decodes argv)
    r = (run_cli if any("\udc80" <= c <= "\udcff" for a in args for c in a) else dbg)(*args, cwd=shared_ws)
    one_line_error(r, args)
    assert snapshot(shared_ws) == before, args


@pytest.mark.parametrize("args", [["import", "@"], ["signature", "test", "@"],
                                  ["bisect", "toggles", "--args-from", "@", "--", "true"]])
@pytest.mark.parametrize("what", ["fifo", "/dev/zero"])
def test_a_file_that_never_ends_is_refused(shared_ws, tmp_path, args, what):
    """A named pipe with no writer blocked forever; /dev/zero was read until memory ran out."""
    path = "/dev/zero"
    if what == "fifo":
        path = str(tmp_path / "pipe.md")
        os.mkfifo(path)
    before = snapshot(shared_ws)
    r = run_cli(*[path if a == "@" else a for a in args], cwd=shared_ws, timeout=60)
    one_line_error(r, args)
    assert "not a regular file" in r.stderr
    assert snapshot(shared_ws) == before


@pytest.mark.parametrize("template", ["{{ foo(", "custom {{ inv.title }}\n"])
def test_a_broken_user_template_changes_nothing(tmp_path, template):
    """A template that does not parse was an internal error; one that drops the fields (or an empty
    one) wrote an empty logs/ file, to be committed and read by a teammate as the investigation."""
    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("new", "tpl", "--no-env", cwd=ws).returncode == 0
    (ws / ".dbglog" / "templates").mkdir()
    (ws / ".dbglog" / "templates" / "investigation.md.j2").write_text(template)
    before = snapshot(ws)
    r = dbg("attempt", "add", "x", "-r", "y", cwd=ws)
    one_line_error(r, template)
    assert "template" in r.stderr and snapshot(ws) == before


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


def test_a_bad_runs_cap_setting_is_said_not_silently_dropped(tmp_path):
    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("init", cwd=ws).returncode == 0
    (ws / ".dbglog" / "config.toml").write_text('[runs]\nmax_size = "lots"\n')
    r = dbg("run", "-q", "--", sys.executable, "-c", "pass", cwd=ws)
    assert r.returncode == 0, r.stderr
    assert "warning:" in r.stderr and "[runs] max_size: bad size 'lots'" in r.stderr, r.stderr  # before: nothing


@pytest.mark.parametrize("pattern", ["/**/*.md", "../**/*.md", "~/**/*.md", "**/../../**", "notes/**/../../../*.md"])
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


def test_a_watched_folder_with_links_to_itself_and_outside_is_walked_once_inside_the_workspace(tmp_path):
    """An adversarial probe: two links to "." inside a watched folder made every search and tried loop for ever
    (glob follows linked directories), one made 41 copies of each doc, and a link to another tree watched its
    files; a NUL in a pattern was an internal error. Linked directories are not entered, a linked file counts
    only inside the workspace, and the NUL is refused in one line."""
    ws = tmp_path / "w"
    (ws / "notes" / "sub").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "far.md").write_text("# Far\n\nNCCL far away\n")
    (ws / "notes" / "a.md").write_text("# A\n\nNCCL_P2P_DISABLE=1 fixed it\n")
    (ws / "notes" / "sub" / "b.md").write_text("# B\n\nNCCL deep\n")
    for name, target in (("l1", "."), ("l2", "."), ("ext", str(outside)), ("far.md", str(outside / "far.md")),
                         ("near.md", "a.md")):
        os.symlink(target, ws / "notes" / name)
    assert dbg("new", "x", "--no-env", cwd=ws).returncode == 0
    (ws / ".dbglog" / "config.toml").write_text('[search]\nwatch = ["notes/**/*.md"]\n')
    r = run_cli("search", "NCCL", "--json", cwd=ws, timeout=120)  # (a process: the loop never ended)
    assert r.returncode == 0, r.stderr
    hits = json.loads(r.stdout)["hits"]
    assert sorted({h["path"] for h in hits}) == ["notes/a.md", "notes/near.md", "notes/sub/b.md"]
    (ws / ".dbglog" / "config.toml").write_text('[search]\nwatch = ["a.md\\u0000x"]\n')
    one_line_error(dbg("search", "NCCL", cwd=ws), "watch")


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


def test_an_empty_run_id_is_refused_not_read_as_every_run(tmp_path):
    """An empty id is the prefix of every run: `runs show ''` showed the first one (an adversarial probe)."""
    ws = tmp_path / "w"
    ws.mkdir()
    r = dbg("run", "-q", "--", sys.executable, "-c", "pass", cwd=ws)
    assert r.returncode == 0, r.stderr
    for args in (["runs", "show", ""], ["runs", "show", "  "]):
        r = dbg(*args, cwd=ws)
        one_line_error(r, args)
        assert "run's id" in r.stderr


def test_a_hook_with_no_point_named_says_which_points_there_are(tmp_path):
    r = run_cli("hook", cwd=tmp_path, input="")
    assert r.returncode == 0 and "None" not in r.stderr  # (a hook never blocks an agent: exit 0, as every hook)
    assert "pre-command, prompt or session-start" in r.stderr


def test_utf8_arguments_under_an_ascii_locale_are_read_as_utf8(tmp_path):
    """An adversarial probe: under LC_ALL=C with Python's UTF-8 mode off, Python decodes argv as ASCII with
    surrogates, and valid UTF-8 ("ünï ✓") was refused as "not valid UTF-8". Bytes that are not UTF-8 still are."""
    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("new", "x", "--no-env", cwd=ws).returncode == 0
    env = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": "utf-8"}
    r = run_cli("attempt", "add", "ünï ✓", "-o", "failed", cwd=ws, env=env)
    assert r.returncode == 0, r.stderr
    assert "ünï ✓" in dbg("attempt", "list", cwd=ws).stdout
    bad = subprocess.run([sys.executable, "-m", "dbglog", "attempt", "add", b"\xff\xfe", "-o", "failed"], cwd=ws,
                         capture_output=True, env={**os.environ, **env}, timeout=120)
    assert bad.returncode == 2 and b"not valid UTF-8" in bad.stderr


def test_a_script_whose_interpreter_is_missing_and_a_cwd_that_is_a_file_are_said_as_they_are(tmp_path):
    """An adversarial probe: a script whose #! names a missing interpreter was "command not found" though it is
    there; a working directory that is a file "does not exist"."""
    from dbglog.run import runner

    script = tmp_path / "badinterp.sh"
    script.write_text("#!/nonexistent/interp\necho hi\n")
    script.chmod(0o755)
    r = runner.run(["./badinterp.sh"], run_dir=tmp_path / "r1", echo=False, timeout=30, cwd=tmp_path)
    assert "interpreter line names '/nonexistent/interp'" in r.error, r.error
    r = runner.run([sys.executable, "-c", "pass"], run_dir=tmp_path / "r2", echo=False, timeout=30, cwd=script)
    assert r.error.endswith("is not a directory"), r.error
