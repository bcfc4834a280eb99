"""Issue 17 points 2 and 7: control characters, terminal escapes and secrets never reach `logs/`,
the database's text fields or the terminal raw (dbglog/util/redact.py applied where text is stored)."""

import json
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from conftest import run_cli
from dbglog.util import redact

TOKEN = "hf_" + "Ab3" * 12
GH = "ghp_" + "x9Y" * 12
AWS = "AKIAIOSFODNN7EXAMPLE"
SECRET_ENV = "s3cr3t-from-the-environment-42"


def db_text(workdir) -> str:
    """Every text value of every table, one string."""
    con = sqlite3.connect(workdir / ".dbglog" / "dbglog.db")
    out = []
    for (table,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        if "fts" in table or "trigram" in table:
            continue
        for row in con.execute(f'SELECT * FROM "{table}"'):
            out += [v if isinstance(v, str) else v.decode("latin-1") if isinstance(v, bytes) else "" for v in row]
    con.close()
    return "\n".join(out)


def logs_bytes(workdir) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((workdir / "logs").glob("*.md")))


BAD_BYTES = [b"\x00", b"\x1b", b"\x07", b"\x08", b"\r", b"\x9b", "\u009b".encode()]


def assert_clean(workdir, *, secrets=(TOKEN,)):
    data = logs_bytes(workdir)
    for b in BAD_BYTES:
        assert b not in data, (b, data)
    text = db_text(workdir)
    for ch in ("\x00", "\x1b", "\x07", "\x08", "\r", "\x9b"):
        assert ch not in text, repr(ch)
    for s in secrets:
        assert s.encode() not in data
        assert s not in text


# --- the functions ----------------------------------------------------------------------------


@pytest.mark.parametrize("raw, want", [
    ("fail\x00ed", "failed"),
    ("\x1b[31mERROR\x1b[0m: x", "ERROR: x"),
    ("a\r\nb\rc", "a\nb\nc"),
    ("keep\ttabs\nand lines", "keep\ttabs\nand lines"),
    ("\x1b]0;pwned title\x07after", "after"),
    ("\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", "link"),
    ("clear\x1b[2J\x1b[Hscreen", "clearscreen"),
    ("bell\x07 bs\x08 del\x7f c1\x9b31m", "bell bs del c1"),
    ("cut off \x1b[", "cut off "),
    ("id \u202e4ox7-x-20261207\u202c shown", "id 4ox7-x-20261207 shown"),  # bidi override: shown reversed
    ("\u2066is\u2069\u2067ol\u2069\u202a\u202b\u202d", "isol"),
    # (the joiners U+200C/U+200D are part of Persian words and emoji sequences: kept)
    ("zero\u200bwidth\u2060\ufeff نمی\u200cخواهم 👨\u200d👩", "zerowidth نمی\u200cخواهم 👨\u200d👩"),
])
def test_sanitize(raw, want):
    assert redact.sanitize(raw) == want
    assert redact.sanitize(want) == want


@pytest.mark.parametrize("raw, gone, kept", [
    (f"HF_TOKEN={TOKEN} python train.py", TOKEN, "HF_TOKEN=<redacted>"),
    ("WANDB_API_KEY=0123456789abcdef", "0123456789abcdef", "WANDB_API_KEY=<redacted>"),
    ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI", "AWS_SECRET_ACCESS_KEY="),
    (f"key id {AWS} used", AWS, "key id <redacted> used"),
    (f"auth failed for {GH}", GH, "<redacted>"),
    ("openai.AuthenticationError: sk-proj-abc123DEF456ghi789JKL0 invalid", "abc123DEF456", "<redacted>"),
    ("python repro.py --hf-token abc123def456 --steps 5", "abc123def456", "--steps 5"),
    ("python repro.py --api-key=abc123def456", "abc123def456", "--api-key=<redacted>"),
    ("Authorization: Bearer abcdefghijklmnop1234", "abcdefghijklmnop1234", "Authorization: <redacted>"),
    ("curl -H 'Bearer abcdefghijklmnop1234'", "abcdefghijklmnop1234", "Bearer <redacted>"),
    ("git clone https://me:hunter2hunter2@github.com/x/y", "hunter2hunter2", "https://me:<redacted>@github.com"),
    ('{"api_key": "abcdef123456", "model": "llama"}', "abcdef123456", '"model": "llama"'),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", "MIIEpAIB", "<redacted>"),
])
def test_redact(raw, gone, kept):
    out = redact.clean(raw)
    assert gone not in out and kept in out, out
    assert redact.clean(out) == out


@pytest.mark.parametrize("text", [
    "MAX_TOKENS=4096 PAD_TOKEN_ID=0 TOKENIZERS_PARALLELISM=false NCCL_DEBUG=INFO",
    "python gen.py --max-tokens 512 --pad-token-id 0 --tokenizer gpt2",
    "Token: expired at step 5; token_budget: 300; Key differences",
    "CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc-per-node 8 train.py",
    "HF_TOKEN=$HF_TOKEN python x.py",
    "task-manager-process-name-with-many-parts-0123456789",
    "see https://github.com/pytorch/pytorch/issues/12345#issuecomment-1",
])
def test_redact_leaves_ordinary_debugging_text_alone(text):
    assert redact.clean(text) == text


def test_values_of_secret_variables_in_the_environment(monkeypatch):
    monkeypatch.setenv("MY_SERVICE_PASSWORD", SECRET_ENV)
    monkeypatch.setenv("PATH_LIKE_TOKEN", "/not/a/secret")
    redact.reset_cache()
    try:
        assert redact.clean(f"login with {SECRET_ENV} failed") == "login with <redacted> failed"
        assert redact.clean("/not/a/secret") == "/not/a/secret"
    finally:
        monkeypatch.delenv("MY_SERVICE_PASSWORD")
        redact.reset_cache()


def test_clean_obj_redacts_by_key_and_flag():
    got = redact.clean_obj({"cmd": ["python", "r.py", "--token", "abcdef123", "--n", "3"],
                            "env_overrides": {"HF_TOKEN": "x1", "NCCL_DEBUG": "INFO"},
                            "key_lines": [{"line": 3, "text": "\x1b[31mboom\x00\x1b[0m"}]})
    assert got["cmd"] == ["python", "r.py", "--token", "<redacted>", "--n", "3"]
    assert got["env_overrides"] == {"HF_TOKEN": "<redacted>", "NCCL_DEBUG": "INFO"}
    assert got["key_lines"] == [{"line": 3, "text": "boom"}]


# --- through the records ------------------------------------------------------------------------


def test_record_methods_store_clean_text(recs, tmp_path):
    i = recs.new("ctrl \x1b[2Jtitle", symptom=f"hangs\x07 with HF_TOKEN={TOKEN}", tags=["t\x1b[1m"]).id
    recs.add_attempt(i, title="esc\x1b]0;x\x07", hypothesis="h\x00", did=f"python r.py --hf-token {TOKEN}",
                     result="fails\r\nwith \x1b[31mred\x1b[0m", conclusion="c\x08")
    recs.edit_attempt(i, 1, conclusion=f"see {GH}")
    recs.diff_add(i, "GPUs\x1b[0m", "4\x00", "8", labels=("ok\x07", None))
    recs.next_add(i, "try\x1b[5m this", detail=f"with {AWS}")
    recs.set_status(i, "resolved", root_cause="driver\x00 bug")
    recs.set_section(i, "Bisection: toggles \x1b[1mX", f"HF_TOKEN={TOKEN}\n\x1b[31mline\x00")
    inv = recs.store.load(i)
    assert inv.title == "ctrl title" and inv.attempts[0].result == "fails\nwith red"
    assert inv.attempts[0].did == "python r.py --hf-token <redacted>"
    assert_clean(tmp_path, secrets=(TOKEN, GH, AWS))


def test_nul_from_a_repro_failure_line_never_reaches_logs(workdir):
    """The issue's case: a NUL (and escapes, and a token) in the failure line of a recorded run."""
    (workdir / "repro.py").write_text(textwrap.dedent(f"""
        import sys
        sys.stderr.buffer.write(b"RuntimeError: CUDA error: an illegal memory access was encountered \\x1b[31m(\\x00"
                                b" token={TOKEN})\\x1b[0m\\x07\\r\\n")
        sys.stderr.flush()
        sys.exit(1)
    """))
    assert run_cli("new", "nul line", "--no-env", cwd=workdir).returncode == 0
    r = run_cli("run", "--attempt", "repro", "--", sys.executable, "repro.py", cwd=workdir)
    assert r.returncode == 1, r.stderr
    ours = r.stdout[r.stdout.index("run "):]  # our summary (the repro's own output is echoed to stderr)
    assert "\x00" not in ours and "\x1b" not in ours and TOKEN not in ours
    assert_clean(workdir)
    md = logs_bytes(workdir).decode()
    assert "illegal memory access was encountered (" in md
    # git reads the file as text, and every later command still works on it
    subprocess.run(["git", "init", "-q"], cwd=workdir, check=True)
    diff = subprocess.run(["git", "diff", "--no-index", "--numstat", "/dev/null", next((workdir / "logs").glob("*.md"))],
                          cwd=workdir, capture_output=True, text=True)
    assert not diff.stdout.startswith("-\t-"), diff.stdout  # "-\t-" = binary
    assert run_cli("attempt", "add", "next", "-r", "ok", "-o", "worked", cwd=workdir).returncode == 0
    assert run_cli("reindex", "--force", cwd=workdir).returncode == 0


def test_a_file_that_already_holds_a_nul_is_read_and_written_back_clean(workdir):
    """A file an older dbglog (or a hand edit) left with a NUL does not lock everyone out."""
    assert run_cli("new", "old file", "--no-env", cwd=workdir).returncode == 0
    assert run_cli("attempt", "add", "a", "-r", "fails", "-o", "failed", cwd=workdir).returncode == 0
    path = next((workdir / "logs").glob("*.md"))
    path.write_bytes(path.read_bytes().replace(b"**Result:** fails", b"**Result:** fa\x00ils \x1b[31mred"))
    r = run_cli("attempt", "add", "b", "-r", "ok", "-o", "worked", cwd=workdir)
    assert r.returncode == 0, r.stderr
    assert_clean(workdir)
    shown = json.loads(run_cli("show", "--json", cwd=workdir).stdout)
    assert [a["result"] for a in shown["attempts"]] == ["fails red", "ok"]
    assert run_cli("doctor", cwd=workdir).returncode == 0


def test_hand_edit_with_a_secret_is_imported_redacted_and_the_file_rewritten(workdir):
    assert run_cli("new", "hand edit", "--no-env", cwd=workdir).returncode == 0
    path = next((workdir / "logs").glob("*.md"))
    path.write_text(path.read_text() + f"\n## Notes\n\nexport HF_TOKEN={TOKEN}\n")
    assert run_cli("sync", cwd=workdir).returncode == 0
    assert_clean(workdir)
    assert "HF_TOKEN=<redacted>" in path.read_text()
    assert run_cli("doctor", cwd=workdir).returncode == 0


def test_secrets_passed_to_a_run_never_stored(workdir, monkeypatch):
    """--env HF_TOKEN=..., a token as a repro argument, a token the repro prints, the value of a
    secret variable from the environment: none of them in logs/ or the database."""
    (workdir / "repro.py").write_text(textwrap.dedent("""
        import os, sys
        print("using", os.environ.get("HF_TOKEN"), "and", os.environ.get("MY_DB_PASSWORD"), sys.argv[1:])
        print("RuntimeError: 401 Unauthorized for", sys.argv[-1], file=sys.stderr)
        sys.exit(1)
    """))
    passed = "plainvalue-no-shape-1234"
    assert run_cli("new", "secrets", "--no-env", cwd=workdir).returncode == 0
    r = run_cli("run", "--json", "--attempt", "with secrets", "--env", f"HF_TOKEN={passed}", "--",
                sys.executable, "repro.py", "--api-key", "argsecret-5678", GH, cwd=workdir,
                env={"MY_DB_PASSWORD": SECRET_ENV})
    assert r.returncode == 1, r.stderr
    for s in (passed, "argsecret-5678", GH, SECRET_ENV):
        assert s not in r.stdout and s not in r.stderr
    assert_clean(workdir, secrets=(passed, "argsecret-5678", GH, SECRET_ENV))


def test_bisect_toggles_env_token_never_reaches_logs(workdir):
    """`bisect toggles --env HF_TOKEN=...` wrote the token three times into logs/*.md."""
    (workdir / "repro.py").write_text(textwrap.dedent("""
        import os, sys
        sys.exit(1 if os.environ.get("HF_TOKEN") else 0)
    """))
    assert run_cli("new", "bisect secret", "--no-env", cwd=workdir).returncode == 0
    r = run_cli("bisect", "toggles", "--env", f"HF_TOKEN={TOKEN}", "--env", "X=1", "--", sys.executable, "repro.py",
                cwd=workdir)
    assert r.returncode in (0, 1), r.stderr
    assert TOKEN not in r.stdout and TOKEN not in r.stderr
    data = logs_bytes(workdir).decode()
    assert "HF_TOKEN" in data and TOKEN not in data
    assert TOKEN not in db_text(workdir).replace(_spec_text(workdir), "")


def _spec_text(workdir) -> str:
    """The resume spec of bisect sessions (local, needed to rerun the trials) is the one place
    allowed to hold the value; everything else is checked."""
    con = sqlite3.connect(workdir / ".dbglog" / "dbglog.db")
    out = "\n".join(r[0] for r in con.execute("SELECT spec FROM bisect_sessions"))
    con.close()
    return out


def test_numbers_after_a_secret_looking_name_are_not_secrets():
    # llama.cpp prints its vocabulary ids this way; redacting them lost lines of imported logs.
    from dbglog.util import redact

    line = "llm_load_print_meta: BOS token = 151643 '<|endoftext|>'"
    assert redact.redact(line) == line
    assert redact.redact("HF_TOKEN=hf_abcdefghijklmnopqrstu") == "HF_TOKEN=<redacted>"
    # a C enum in a pasted header: a short hex constant is a flag value (lost 3 lines of a real doc)
    line = "ENTITY_KIND_USER_READER_WITH_KEY = 0x04,"
    assert redact.redact(line) == line
    assert redact.redact("API_KEY=0x3a8f9c2e7b1d4f6a0c5e8b2d9f7a1c3e") == "API_KEY=<redacted>"


def test_a_colour_escape_pasted_into_a_doc_leaves_nothing_of_itself_in_what_is_read(workdir):
    doc = workdir / "notes.md"
    doc.write_text("# Driver trouble\n\nThings tried:\n\n- \x1b[31mreinstalled\x1b[0m the driver, still fails\n"
                   "- \x1b]0;title\x07set `iommu=soft`, no change\n")
    r = run_cli("import", "notes.md", "--json", cwd=workdir)
    assert r.returncode == 0, r.stderr
    from dbglog.kb import importer
    parsed, _ = importer.parse_document(doc.read_text(), "notes.md")
    tries = [a for p in parsed for a in p.inv.attempts]
    assert [a.title for a in tries] == ["reinstalled the driver, still fails", "set `iommu=soft`, no change"]
    assert [a.source_lines for a in tries] == [[5, 5], [6, 6]]  # (every line keeps its number)
    assert "[31m" not in db_text(workdir) and "\x1b" not in db_text(workdir)


def test_sanitize_lines_never_joins_two_lines():
    text = "one \x1b]0;an OSC left open\nline two\n\x1b[1mthree\x1b[0m"
    assert redact.sanitize_lines(text).split("\n") == ["one ", "line two", "three"]


@pytest.mark.parametrize("title", ["\u202e", "\u200b\u200b", "\u200d", " \u2066 \u2069 "])
def test_a_title_of_invisible_characters_only_is_refused_as_empty(workdir, title):
    r = run_cli("new", title, "--no-env", cwd=workdir)
    assert r.returncode == 2 and "empty title" in r.stderr and not list(workdir.glob("logs/*.md")), r.stderr
