"""What is stored and what is shown holds no control byte, no terminal escape and no secret: text from
every field, file names, git commit subjects, watched-doc names, the environment, a repro's output, its
argv and the attempt text. What redaction keeps can always be written back."""

import re
import subprocess
import sys

import pytest
from conftest import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st
from probe_kit import BAD, dbg

from dbglog.util import redact

ESC = "\x1b[2J\x1b]0;owned\x07\x1b[31m"
HOSTILE_TEXT = f"red{ESC}text\x08\x7f\x9b1m\rcr\x0bvt"


def test_control_bytes_in_every_field_are_stored_and_shown_clean(tmp_path):
    ws = tmp_path / "w"
    ws.mkdir()
    steps = [["new", f"title {ESC}x", "--no-env", "--symptom", HOSTILE_TEXT, "--tag", f"t{ESC}"],
             ["attempt", "add", f"a {ESC}", "-H", HOSTILE_TEXT, "-d", HOSTILE_TEXT, "-r", HOSTILE_TEXT,
              "-c", HOSTILE_TEXT, "-o", "failed"],
             ["attempt", "edit", "1", "-r", f"{HOSTILE_TEXT} again"],
             ["diff", "add", f"F{ESC}", f"w{ESC}", f"b{ESC}", "--working-label", f"L{ESC}"],
             ["next", "add", f"n{ESC}", "--detail", f"d{ESC}"],
             ["status", "resolved", "--root-cause", HOSTILE_TEXT]]
    for args in steps:
        r = dbg(*args, cwd=ws)
        assert r.returncode == 0, (args, r.stderr)
    repro = ws / "r.py"
    repro.write_text("import sys\nsys.stderr.buffer.write(b'Error: \\x1b[31mboom\\x00\\x07\\x9b2J\\r\\n'); sys.exit(3)\n")
    assert run_cli("run", "-q", "--attempt", "esc run", "--", sys.executable, str(repro), cwd=ws).returncode == 1
    for p in (ws / "logs").iterdir():
        data = p.read_bytes().decode()
        for b in BAD:
            assert b not in data, (p, b)
    for args in (["show"], ["show", "--markdown"], ["list"], ["attempt", "list"], ["next", "list"], ["diff", "list"],
                 ["search", "red text"], ["tried", "red text"], ["runs", "list"], ["doctor"]):
        r = dbg(*args, cwd=ws)
        assert r.returncode in (0, 1), (args, r.stderr)
        for b in BAD:
            assert b not in r.stdout and b not in r.stderr, (args, b, r.stdout)


def test_a_file_name_with_escapes_is_listed_inert(tmp_path):
    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("init", cwd=ws).returncode == 0
    (ws / "logs" / "evil\x1b]0;owned\x07\x1b[2Jx.md").write_text("not ours\n")
    for args in (["sync"], ["doctor"], ["list"]):
        r = dbg(*args, cwd=ws)
        assert r.returncode in (0, 1), (args, r.stderr)
        for b in BAD:
            assert b not in r.stdout and b not in r.stderr, (args, r.stdout)


TITLE_ESC = "\x1b]0;owned\x07\x1b[2J"


def test_escapes_from_git_subjects_doc_names_and_the_environment_stay_inert(tmp_path):
    ws = tmp_path / "w"
    ws.mkdir()
    g = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    subprocess.run([*g, "commit", "-q", "--allow-empty", "-m", "good"], cwd=ws, check=True)
    (ws / "bad").write_text("")
    subprocess.run(["git", "add", "bad"], cwd=ws, check=True)
    subprocess.run([*g, "commit", "-q", "-m", f"break it {TITLE_ESC} now"], cwd=ws, check=True)
    assert dbg("new", "escapes", "--no-env", cwd=ws).returncode == 0
    (ws / "notes").mkdir()
    (ws / "notes" / f"n{TITLE_ESC}.md").write_text(f"# Notes {TITLE_ESC}\nhang seen {TITLE_ESC} here\n")
    (ws / ".dbglog" / "config.toml").write_text('[search]\nwatch = ["notes/*.md"]\n')
    outs = [run_cli("bisect", "git", "--good", "HEAD~1", "--bad", "HEAD", "--", "sh", "-c", "! test -f bad",
                    cwd=ws)]
    assert outs[0].returncode == 0, outs[0].stderr
    outs += [dbg(*a, cwd=ws) for a in (["search", "hang"], ["tried", "hang"], ["bisect", "status"])]
    for json_flag in ([], ["--json"]):  # (JSON escapes C0 itself; DEL and C1 such as U+009B, a CSI, too now)
        outs.append(dbg("env", *json_flag, cwd=ws, env={"CUDA_PROBE_VAR": TITLE_ESC + "\x9b2J\x7f"}))
    for r in outs:
        for b in BAD:
            assert b not in r.stdout and b not in r.stderr, (r.args, b, r.stdout, r.stderr)
    assert "break it" in outs[3].stdout and "hang seen" in outs[1].stdout


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec=None, min_codepoint=0, max_codepoint=0xE000)))
def test_what_sanitize_keeps_can_always_be_written(text):
    out = redact.sanitize(text)
    out.encode("utf-8")  # a lone surrogate stored could never be written again (mirror, --json, MCP)
    assert redact.sanitize(out) == out
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", out)


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


# "password: WORD <grammar word> ..." may be prose ("the password: prompt never appeared"), but a password
# that is a plain word is common ("tiger", "changeme", "letmein"): a rule that keeps such sentences must
# still redact the word after the colon.
@pytest.mark.parametrize("text,secret", [
    ("password:tiger and more", "tiger"),  # no blank after the colon: a key:value, not a sentence
    ("db password: tiger and user scott", "tiger"),
    ("the password: changeme is the default for the admin user", "changeme"),
])
def test_a_plain_word_password_in_a_sentence_is_still_redacted(text, secret):
    from dbglog.util import redact

    assert secret not in redact.redact(text)


# The database clients' own secret variables (PostgreSQL's PGPASSWORD, MySQL's MYSQL_PWD) are secret
# names: `PGPASSWORD=... psql` never reaches logs/ in clear.
@pytest.mark.parametrize("text", ["PGPASSWORD=Tiger123xyz psql -h db", "MYSQL_PWD=Tiger123xyz mysql -u root"])
def test_database_clients_password_variables_are_redacted(text):
    from dbglog.util import redact

    assert "Tiger123xyz" not in redact.redact(text)
