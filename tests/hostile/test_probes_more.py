"""More hostile probes (issue 17, second round): inputs of our own in the same categories. Each
failed on the code before its fix unless marked as a guard.

* command-line values: an empty command word, a variable name no process can have, an empty size,
  a multi-line attempt title for `run`, a mistyped run id, an age before the year 1, a typo of a
  required option (`bisect git --god`);
* a refusing file system: missing permissions (as a user without CAP_DAC_OVERRIDE), `run --attempt`
  with a read-only `logs/` refused before the repro runs;
* the umask (guard) and escapes reaching the terminal from git commit subjects, watched-doc file
  names and the environment;
* huge inputs: a debug doc holding a long log imports in seconds, not minutes; a FIFO or /dev/zero
  named as a file is refused instead of read forever.
"""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import run_cli
from test_probes import BAD, dbg, one_line_error, snapshot


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
    ["run", "--expect", "hnag", "--git-bisect-exit", "--", "true"], ["run", "--repeat", "2", "--timout", "5", "--", "true"],
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


# --- permissions, as a user the permission bits apply to ----------------------------------------

PERM_SCRIPT = textwrap.dedent("""
    cd "$1"
    case "$3" in
      logs) chmod 555 logs;; db) chmod 000 .dbglog/dbglog.db;;
    esac
    $2 -m dbglog run -q --attempt a -- sh -c 'echo ran > ran.txt'; echo "rc=$?"
    $2 -m dbglog attempt add x -r y; echo "rc=$?"
    chmod -R u+rwX .
""")


@pytest.mark.parametrize("damage", ["logs", "db"])
def test_missing_permissions_are_one_line_and_nothing_runs(tmp_path, damage):
    if shutil.which("unshare") is None:
        pytest.skip("no unshare on this machine")
    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("new", "perm", "--no-env", cwd=ws).returncode == 0
    before = snapshot(ws)
    script = tmp_path / "perm.sh"
    script.write_text(PERM_SCRIPT)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]), DBGLOG_NO_EDITOR="1")
    env.pop("DBGLOG_DIR", None)
    # an unprivileged user in a user namespace: the permission bits apply even when we are root
    p = subprocess.run(["unshare", "--user", "--map-user=1000", "--map-group=1000", "sh", str(script), str(ws),
                        sys.executable, damage], capture_output=True, text=True, env=env, timeout=120)
    if "unshare failed" in p.stderr or "Operation not permitted" in p.stderr or "invalid option" in p.stderr:
        pytest.skip(f"no user namespaces here: {p.stderr.strip()[:200]}")
    codes = [ln for ln in p.stdout.split() if ln.startswith("rc=")]
    assert codes == ["rc=2", "rc=2"], p.stdout + p.stderr
    assert snapshot(ws) == before
    lines = p.stderr.strip().splitlines()
    assert lines and all(ln.startswith("dbglog: ") and "internal error" not in ln for ln in lines), p.stderr
    assert not (ws / "ran.txt").exists(), "the repro ran although its attempt could not be recorded"


def test_the_umask_is_honoured(tmp_path):  # guard
    ws = tmp_path / "w"
    ws.mkdir()
    for mask, mode in (("077", 0o600), ("002", 0o664)):
        p = subprocess.run(["sh", "-c", f'umask {mask}; exec "$0" -m dbglog new "umask {mask}" --no-env',
                            sys.executable], cwd=ws, capture_output=True, text=True,
                           env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2])))
        assert p.returncode == 0, p.stderr
        f = max((ws / "logs").glob("*.md"), key=lambda q: q.stat().st_mtime_ns)
        assert f.stat().st_mode & 0o777 == mode, (mask, oct(f.stat().st_mode))


# --- escapes that reached the terminal ------------------------------------------------------------

ESC = "\x1b]0;owned\x07\x1b[2J"


def test_escapes_from_git_subjects_doc_names_and_the_environment_stay_inert(tmp_path):
    ws = tmp_path / "w"
    ws.mkdir()
    g = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    subprocess.run([*g, "commit", "-q", "--allow-empty", "-m", "good"], cwd=ws, check=True)
    (ws / "bad").write_text("")
    subprocess.run(["git", "add", "bad"], cwd=ws, check=True)
    subprocess.run([*g, "commit", "-q", "-m", f"break it {ESC} now"], cwd=ws, check=True)
    assert dbg("new", "escapes", "--no-env", cwd=ws).returncode == 0
    (ws / "notes").mkdir()
    (ws / "notes" / f"n{ESC}.md").write_text(f"# Notes {ESC}\nhang seen {ESC} here\n")
    (ws / ".dbglog" / "config.toml").write_text('[search]\nwatch = ["notes/*.md"]\n')
    outs = [run_cli("bisect", "git", "--good", "HEAD~1", "--bad", "HEAD", "--", "sh", "-c", "! test -f bad",
                    cwd=ws)]
    assert outs[0].returncode == 0, outs[0].stderr
    outs += [dbg(*a, cwd=ws) for a in (["search", "hang"], ["tried", "hang"], ["bisect", "status"])]
    for json_flag in ([], ["--json"]):  # (JSON escapes C0 itself; DEL and C1 such as U+009B, a CSI, too now)
        outs.append(dbg("env", *json_flag, cwd=ws, env={"CUDA_PROBE_VAR": ESC + "\x9b2J\x7f"}))
    for r in outs:
        for b in BAD:
            assert b not in r.stdout and b not in r.stderr, (r.args, b, r.stdout, r.stderr)
    assert "break it" in outs[3].stdout and "hang seen" in outs[1].stdout


# --- huge inputs ----------------------------------------------------------------------------------


def test_a_doc_holding_a_long_log_reads_in_seconds():
    """Every kept line used to be looked for in the whole rendered text (quadratic): a 40,000-line
    log inside a debug doc took minutes to import, 25,000 lines ~40 s. Now a set lookup first."""
    import time

    from dbglog.docreader import reader

    lines = ["# Big log", "", "## Attempts", "", "### Attempt 1: x", "- Result: still fails", "", "## Log", "",
             "```"] + [f"log line {i} " + "x" * 80 for i in range(25000)] + ["```"]
    t = time.perf_counter()
    parsed, _skipped = reader.read_document("\n".join(lines), "big.md")
    took = time.perf_counter() - t
    assert len(parsed) == 1 and len(parsed[0].inv.attempts) == 1
    assert "log line 24999" in "\n".join(s.body for s in parsed[0].inv.sections)
    assert took < 30, took  # ~40 s before (quadratic); ~1 s now (a loaded machine gets a wide margin)
