"""Redaction removes values, never structure (issue 30): a toggle bisection with a secret among its
toggles records every toggle and the repro, the secret as <redacted>, and leaves no secret on disk
once the session has ended; `doctor` lists a secret file left behind and `runs prune` removes it."""

from __future__ import annotations

import json
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import run_cli, run_cli_inproc
from dbglog.bisect.session import hidden_values
from dbglog.util import redact
from probe_kit import dbg, one_line_error, server_run
from tree_guard import tree_guard  # noqa: F401 - kills what a probe started, pass or fail

PLAIN = st.sampled_from(["B", "NCCL_P2P_DISABLE", "CUDA_LAUNCH_BLOCKING", "MAX_TOKENS", "OMP_NUM_THREADS"])
SECRET = st.sampled_from(["HF_TOKEN", "WANDB_API_KEY", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY"])
WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8)
SECRET_VALUE = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", min_size=12,
                       max_size=40).filter(lambda v: any(c.isalpha() for c in v))  # (all digits: an id, by design)


@settings(max_examples=150, deadline=None)
@given(plain=st.lists(st.tuples(PLAIN, WORD), min_size=0, max_size=5), secret=st.tuples(SECRET, SECRET_VALUE),
       at=st.integers(min_value=0, max_value=5), repro=st.lists(WORD, min_size=1, max_size=4))
def test_a_secret_in_any_position_of_a_toggles_command_hides_only_its_value(plain, secret, at, repro):
    pairs = list(plain)
    pairs.insert(min(at, len(pairs)), secret)
    words = ["dbglog", "bisect", "toggles"] + [w for k, v in pairs for w in ("--env", f"{k}={v}")] + ["--", "python",
                                                                                                      *repro]
    real = " ".join(words)
    clean = redact.clean(real)
    assert hidden_values(real, clean) == [secret[1]]  # what a resumed session teaches the redactor
    saved = set(redact._remembered)
    try:
        for v in hidden_values(real, clean):
            redact.remember(v)
        again = redact.clean(real)
    finally:
        redact._remembered.clear()
        redact._remembered.update(saved)
        redact.reset_cache()
    expected = " ".join(w if not w.startswith(secret[0] + "=") else f"{secret[0]}=<redacted>" for w in words)
    assert again == expected  # every toggle and the repro kept, the secret's value alone replaced


def test_a_toggle_bisection_records_every_toggle_and_keeps_no_secret(workdir):
    (workdir / "leak.py").write_text("import os, sys\nsys.exit(1 if os.environ.get('B') == '1' else 0)\n")
    assert run_cli_inproc(workdir, "new", "leak", "--no-env").returncode == 0
    token = "hf_" + "Q7x9" * 8
    p = run_cli("bisect", "toggles", "--env", "C=2", "--env", f"HF_TOKEN={token}", "--env", "B=1", "--",
                sys.executable, "leak.py", cwd=workdir, timeout=300)
    assert p.returncode == 0, p.stderr
    text = next((workdir / "logs").glob("*.md")).read_text(encoding="utf-8")
    did = next(ln for ln in text.splitlines() if ln.startswith("**What you did:**"))
    assert "--env C=2 --env HF_TOKEN=<redacted> --env B=1 --" in did and "leak.py" in did
    for path in (workdir / ".dbglog").rglob("*"):
        if path.is_file() and not path.name.endswith(("-wal", "-shm")):
            assert token.encode() not in path.read_bytes(), path
    assert not list((workdir / ".dbglog" / "bisect-secrets").glob("*.json"))
    doctor = json.loads(run_cli_inproc(workdir, "doctor", "--json").stdout)["problems"]
    assert not [x for x in doctor if x["kind"] == "secrets-left"]


def test_doctor_lists_a_secret_file_left_behind_and_runs_prune_removes_it(workdir):
    assert run_cli_inproc(workdir, "init").returncode == 0
    left = workdir / ".dbglog" / "bisect-secrets" / "20250101-000000-toggles-dead.json"
    left.parent.mkdir()
    left.write_text('{"env": {"HF_TOKEN": "hf_x"}}')
    doctor = json.loads(run_cli_inproc(workdir, "doctor", "--json").stdout)["problems"]
    assert [x["path"] for x in doctor if x["kind"] == "secrets-left"] == [
        ".dbglog/bisect-secrets/20250101-000000-toggles-dead.json"]
    p = run_cli_inproc(workdir, "runs", "prune", "--keep", "10", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["secrets_removed"] == ["20250101-000000-toggles-dead"]
    assert not left.exists()


LINES = ["step 3 loss=0.1 tokens/s=123", "export HF_TOKEN=hf_abcdefghijklmnopqrstuvw",
         "Authorization: Bearer abcdefghijklmnopqrstuvwxyz012", "curl -u bob:hunter2secret http://x",
         "password: changeme", "the password: prompt never appeared", "mysql -pS3cretpass db",
         "https://user:pa55word@example.com/x", "AKIAABCDEFGHIJKLMNOP", "--api-key sk-abcdefghijklmnopqrstuvwxyz0123",
         "key=value", "İstanbul token = abcdefg12345", "Bearer", "  xyzabcdefghijklmnopq",
         "-----BEGIN RSA PRIVATE KEY-----", "MIIEabc", "-----END RSA PRIVATE KEY-----", "plain line",
         "\x1b[31mred\x1b[0m", "client_secret: 'abc123xyz'", "NCCL_DEBUG=INFO", "\udcff invalid byte"]


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(st.sampled_from(LINES), min_size=1, max_size=60), block=st.sampled_from([256, 1024, 1 << 16]))
def test_streamed_redaction_of_a_file_equals_redacting_it_whole(tmp_path_factory, lines, block):
    text = "\n".join(lines) + "\n"
    if "BEGIN RSA" in text and "END RSA" not in text.split("BEGIN RSA")[-1]:
        return  # (a key never closed: the whole-text rule takes the rest of the file; streamed, at most 4 blocks)
    path = tmp_path_factory.mktemp("r") / "output"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    changed = redact.redact_file(path, block=block)
    got = path.read_bytes().decode("utf-8", "surrogateescape")
    assert got == redact.redact(text)
    assert changed == (got != text)


def test_a_file_without_secrets_is_left_alone(tmp_path):
    path = tmp_path / "output"
    path.write_bytes(b"".join(b"[rank%d] step %d loss=0.%d tokens/s=%d\n" % (i % 8, i, i, i) for i in range(50000)))
    ino = path.stat().st_ino
    assert redact.redact_file(path, block=1 << 16) is False
    assert path.stat().st_ino == ino  # not rewritten


def test_a_key_difference_of_a_secret_is_stored_redacted_and_not_bisected_from_the_table(tmp_path):
    """`diff add HF_TOKEN old new` stored both tokens in logs/ and the database (an adversarial probe): the
    factor, or the variable its apply spec sets, names a secret, so its values are stored as `<redacted>`;
    `bisect toggles --from-diffs` then refuses that row in one line instead of setting the token to "<redacted>"."""
    import sqlite3

    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("new", "auth fails", "--no-env", cwd=ws).returncode == 0
    old, new = "oldTokenValue" + "1234", "newTokenValue" + "5678"
    r = dbg("diff", "add", "HF_TOKEN", old, new, "--apply", "env:HF_TOKEN", cwd=ws)
    assert r.returncode == 0 and old not in r.stdout and new not in r.stdout and "redacted" in r.stdout
    assert dbg("diff", "add", "PLAIN", "x", "y", cwd=ws).returncode == 0
    assert dbg("diff", "set", "PLAIN", "--working", old, "--apply", "env:API_KEY", cwd=ws).returncode == 0
    assert dbg("diff", "add", "BATCH", "8", "16", cwd=ws).returncode == 0  # (not a secret: kept)
    text = "".join(p.read_text() for p in (ws / "logs").glob("*.md"))
    con = sqlite3.connect(ws / ".dbglog" / "dbglog.db")
    dump = "\n".join(con.iterdump())
    con.close()
    for where in (text, dump):
        assert old not in where and new not in where and "| x |" not in where
    assert "| BATCH | 8 | 16 |" in text
    r = dbg("bisect", "toggles", "--from-diffs", "--", "true", cwd=ws)
    one_line_error(r, "from-diffs")
    assert "HF_TOKEN" in r.stderr and "--env" in r.stderr


def test_a_server_shaped_runs_server_output_and_record_keep_no_secret(tmp_path):
    """An adversarial probe: a server that printed its token (HF_TOKEN=..., a bearer header) kept it in clear in
    runs/ID/server/{stdout,stderr,output} and in result.json (its key line, its command), where the client's files
    were cleaned."""
    token, bearer = "hf_" + "Z3k8" * 8, "Q" * 8 + "bearer9x"
    run = server_run(tmp_path, f"import sys\nprint('HF_TOKEN={token}', flush=True)\n"
                               f"print('Authorization: Bearer {bearer}', file=sys.stderr, flush=True)\n",
                     server_args=f"--token {token}")
    folder = tmp_path / ".dbglog" / "runs" / run["id"]
    assert (folder / "server" / "output").read_text().count("<redacted>") >= 2
    for path in folder.rglob("*"):
        if path.is_file():
            assert token.encode() not in path.read_bytes() and bearer.encode() not in path.read_bytes(), path


def test_an_arg_toggle_holding_a_token_runs_with_it_and_shows_it_nowhere(workdir):
    """An adversarial probe: `bisect toggles --arg '--hf-token hf_...'` kept the token in the trials' rows, the
    chart in logs/, `bisect log` and the report: a toggle's name was its text. The name is cleaned; the words that
    run it keep the value (the repro fails only when it is given the real token)."""
    token = "hf_" + "W4p2" * 8
    (workdir / "needs.py").write_text(f"import sys\nsys.exit(1 if '{token}' in sys.argv else 0)\n")
    assert run_cli_inproc(workdir, "new", "leak", "--no-env").returncode == 0
    p = run_cli("bisect", "toggles", "--arg", "--fast", "--arg", f"--hf-token {token}", "--",
                sys.executable, "needs.py", cwd=workdir, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "--hf-token <redacted>" in p.stdout and token not in p.stdout + p.stderr
    log = run_cli_inproc(workdir, "bisect", "log")
    assert "<redacted>" in log.stdout and token not in log.stdout
    assert run_cli_inproc(workdir, "report", "--html", "r.html").returncode == 0
    for path in [*(workdir / ".dbglog").rglob("*"), *(workdir / "logs").rglob("*"), workdir / "r.html"]:
        if path.is_file() and not path.name.endswith(("-wal", "-shm")):
            assert token.encode() not in path.read_bytes(), path


def test_signature_test_shows_a_key_line_holding_a_token_redacted(tmp_path):
    """An adversarial probe: `signature test` printed the key line with its token and bearer value, text and
    --json alike, where `dbglog run` shows the same line redacted."""
    token = "hf_" + "K8m3" * 8
    log = tmp_path / "x.log"
    log.write_text("RuntimeError: CUDA error: an illegal memory access was encountered "
                   f"HF_TOKEN={token} Authorization: Bearer beArer0secret0value\n")
    for args in ((), ("--json",)):
        r = dbg("signature", "test", str(log), *args, cwd=tmp_path)
        assert r.returncode == 0 and "illegal" in r.stdout, r.stderr
        assert token not in r.stdout and "beArer0secret0value" not in r.stdout and "<redacted>" in r.stdout


def test_a_docs_token_is_shown_nowhere_by_import_and_does_not_block_a_review(tmp_path):
    """An adversarial probe: a token in an imported doc was stored redacted but shown in clear by `import
    --dry-run`, `--explain`, `--units` and the `--review` file; and an applied review could not remove the
    attempt holding it ('holds words that are not in the document (edited since)': `<redacted>` is not)."""
    token = "hf_" + "R5t7" * 8
    doc = tmp_path / "n.md"
    doc.write_text(f"# Hang at step 100\n\n## What we tried\n\n- I set HF_TOKEN={token} and re-ran; still hangs.\n"
                   "- I downgraded torch to 2.3.1; still hangs.\n")
    assert dbg("init", cwd=tmp_path).returncode == 0
    for args in (["--dry-run"], ["--dry-run", "--json"], ["--explain"], ["--explain", "--json"], ["--units"],
                 ["--units", "--json"]):
        r = dbg("import", *args, str(doc), cwd=tmp_path)
        assert r.returncode == 0 and token not in r.stdout, (args, r.stdout[-300:])
    assert dbg("import", str(doc), cwd=tmp_path).returncode == 0
    assert dbg("import", "--review", str(doc), cwd=tmp_path).returncode == 0
    review = tmp_path / "n.md.review.md"
    assert token not in review.read_text()
    review.write_text(review.read_text().replace("- [x]", "- [ ]"))
    r = dbg("import", "--apply-review", str(review), "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert [u["removed"] for u in json.loads(r.stdout)["investigations"][0]["unticked"]] == [True, True]


def test_a_token_where_a_too_long_line_is_cut_is_still_redacted(tmp_path):
    """An adversarial probe: a line longer than four blocks (a progress bar redrawn with \\r for 16 MB) is cut to
    bound memory, and a token that straddled the cut was kept in clear. The cut falls after a \\r or a blank."""
    block = 1024
    token = b"hf_" + b"T6v1" * 8
    prefix = b"progress 1%\r" * ((4 * block - 15) // 12)
    data = prefix + b"." * (4 * block - 15 - len(prefix) - 1) + b" " + token + b"\rdone\n"
    path = tmp_path / "out"
    path.write_bytes(data)
    assert redact.redact_file(path, block=block)
    assert token not in path.read_bytes() and path.read_bytes().replace(b"<redacted>", token) == data


def test_tried_with_a_token_in_the_idea_finds_the_attempt_recorded_with_it_redacted(tmp_path):
    """An adversarial probe: asking `tried 'export HF_TOKEN=hf_... then rerun'` of an attempt that did exactly that
    answered "tried another way" (the record holds HF_TOKEN=<redacted>), and echoed the token in its note."""
    token = "hf_" + "P2c4" * 8
    assert dbg("new", "401 from the hub", "--no-env", cwd=tmp_path).returncode == 0
    assert dbg("attempt", "add", "set the token", "--did", f"export HF_TOKEN={token} then rerun", "-r", "still 401",
               "-o", "failed", cwd=tmp_path).returncode == 0
    r = dbg("tried", f"export HF_TOKEN={token} then rerun", "--json", cwd=tmp_path)
    out = json.loads(r.stdout)
    assert out["tried"] is True and [h["attempt"] for h in out["close"]] == [1], out
    assert token not in r.stdout + r.stderr


def test_a_token_in_an_argument_is_echoed_nowhere_in_errors_and_search(tmp_path):
    """An adversarial probe: an agent writing env-prefix argv got `command not found: HF_TOKEN=hf_...` back, and
    `search` echoed the token in its query and notes, where the stored records hold it redacted."""
    token = "hf_" + "E9r2" * 8
    assert dbg("new", "x", "--no-env", cwd=tmp_path).returncode == 0
    r = run_cli("run", "--timeout", "5", "--json", "--", f"HF_TOKEN={token}", "python", "x.py", cwd=tmp_path)
    assert token not in r.stdout + r.stderr, (r.stdout, r.stderr)
    r = dbg("show", f"Bearer {token}", cwd=tmp_path)
    assert r.returncode == 2 and token not in r.stderr
    r = dbg("search", f"HF_TOKEN={token}", "--json", cwd=tmp_path)
    assert token not in r.stdout + r.stderr
    r = dbg("tried", f"HF_TOKEN={token} for the sampler", cwd=tmp_path)  # ("'...' itself was not tried")
    assert token not in r.stdout + r.stderr and "<redacted>" in r.stdout, r.stdout
    assert "<redacted" not in r.stderr, r.stderr  # (no "'<redacted' is in no record" note about the cleaned word)
