"""`dbglog hook`: what an agent's hook points send, against recorded attempts (real subprocesses, except
for the command table and the prompts, which test the matching in-process through the same entry point).

A table of proposed commands (the same command with flags reordered, extra env vars, another path
to the same file, wrappers and pipes, a genuinely different command) with the notice or silence
each must give; supervised runs as attempts; the circuit breaker (fires on the third identical
failure, not on three different ones, not after a pass); prompts; and input that must never make
the hook fail the agent.
"""

import json
import sqlite3
import subprocess
import sys

import pytest

from conftest import cli_env, run_cli, run_cli_inproc

CMD = "NCCL_P2P_DISABLE=1 torchrun --nproc_per_node 8 train.py --steps 10 --lr 0.1"


def hook(cwd, event, stdin, *args, env=None, fast=False):
    if fast:  # dbglog.entry.main in this process, stdin from a file: what is tested is the notice
        p = run_cli_inproc(cwd, "hook", event, *args, input=stdin, env=env)
        assert p.returncode == 0, p.stderr
        return p
    p = subprocess.run([sys.executable, "-m", "dbglog", "hook", event, *args], cwd=cwd, input=stdin,
                       capture_output=True, text=True, env=cli_env(env), timeout=60)
    assert p.returncode == 0, p.stderr
    return p


def claude_pre(command, cwd):
    """A Claude Code PreToolUse hook input for the Bash tool (see dbglog/hooks.py for the format)."""
    return json.dumps({"session_id": "abc123", "transcript_path": "/tmp/t.jsonl", "cwd": str(cwd),
                       "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                       "tool_input": {"command": command, "description": "run it", "timeout": 120000},
                       "tool_use_id": "toolu_01"})


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    """A workspace with a failed, an inconclusive and a worked attempt (commands in their 'did')."""
    root = tmp_path_factory.mktemp("kb")
    (root / ".git").mkdir()
    (root / "train.py").write_text("print('train')\n")
    (root / "other").mkdir()
    (root / "other" / "train.py").write_text("print('other')\n")
    (root / "sub").mkdir()
    run_cli_inproc(root, "new", "NCCL all_reduce hangs on 8 GPUs", "--no-env", check=0)
    run_cli_inproc(root, "attempt", "add", "Disable P2P", "--did", CMD, "--result", "Still hangs at step 3",
                   "--conclusion", "Not the P2P path", "--outcome", "failed", check=0)
    run_cli_inproc(root, "attempt", "add", "Tree algorithm", "--did", "Ran `NCCL_ALGO=Tree python -m "
                   "torch.distributed.run --nproc_per_node 8 train.py` twice", "--result", "hung once, passed once",
                   "--outcome", "inconclusive", check=0)
    run_cli_inproc(root, "attempt", "add", "Smaller world", "--did",
                   "```\n$ torchrun --nproc_per_node 4 train.py --steps 10\n```", "--result", "works", "--outcome",
                   "worked", check=0)
    return root


# (proposed command, run from, the attempt the notice must name or None for silence)
TABLE = [
    (CMD, ".", 1),
    ("NCCL_P2P_DISABLE=1 torchrun --nproc_per_node 8 train.py --lr 0.1 --steps 10", ".", 1),  # flags reordered
    ("NCCL_P2P_DISABLE=1 torchrun --nproc_per_node=8 train.py --steps=10 --lr=0.1", ".", 1),  # --flag=value
    ("NCCL_DEBUG=INFO TORCH_CPP_LOG_LEVEL=INFO " + CMD, ".", 1),  # extra env vars that only log
    ("export NCCL_P2P_DISABLE=1; torchrun --nproc_per_node 8 ./train.py --steps 10 --lr 0.1", ".", 1),
    ("env NCCL_P2P_DISABLE=1 timeout 900 /usr/local/bin/torchrun --nproc_per_node 8 train.py --steps 10 --lr 0.1",
     ".", 1),  # wrappers, the program's directory
    ("NCCL_P2P_DISABLE=1 torchrun --nproc_per_node 8 ../train.py --steps 10 --lr 0.1 2>&1 | tee run.log", "sub", 1),
    ("cd sub && NCCL_P2P_DISABLE=1 torchrun --nproc_per_node 8 ../train.py --steps 10 --lr 0.1", ".", 1),
    ("NCCL_P2P_DISABLE=1 torchrun --nproc_per_node 8 {root}/train.py --steps 10 --lr 0.1", "sub", 1),  # abs path
    ("NCCL_ALGO=Tree python3 -m torch.distributed.run --nproc_per_node 8 train.py", ".", 2),  # from a code span
    # silence
    ("NCCL_P2P_DISABLE=1 NCCL_ALGO=Ring " + CMD.split(" ", 1)[1], ".", None),  # an extra variable that matters
    ("NCCL_P2P_DISABLE=0 torchrun --nproc_per_node 8 train.py --steps 10 --lr 0.1", ".", None),  # another value
    ("NCCL_P2P_DISABLE=1 torchrun --nproc_per_node 8 other/train.py --steps 10 --lr 0.1", ".", None),  # other file
    ("NCCL_P2P_DISABLE=1 torchrun --nproc_per_node 8 train.py --steps 20 --lr 0.1", ".", None),  # another flag value
    ("torchrun --nproc_per_node 4 train.py --steps 10", ".", None),  # that one worked
    ("python eval.py --ckpt last.pt", ".", None),  # a different command
    ("cat train.py | grep lr", ".", None),  # only looks
]


@pytest.mark.parametrize("command, where, expected", TABLE)
def test_pre_command_table(kb, command, where, expected):
    command = command.replace("{root}", str(kb))
    cwd = kb / where
    plain = hook(cwd, "pre-command", command, fast=True)
    claude = hook(kb, "pre-command", claude_pre(command, cwd), fast=True)
    if expected is None:
        assert plain.stdout == "" and claude.stdout == "", (plain.stdout, claude.stdout)
        return
    assert f"attempt {expected} " in plain.stdout, plain.stdout
    assert plain.stdout.startswith("dbglog: this was tried before") and len(plain.stdout.splitlines()) <= 8
    out = json.loads(claude.stdout)
    ctx = out["hookSpecificOutput"]
    assert ctx["hookEventName"] == "PreToolUse" and set(ctx) == {"hookEventName", "additionalContext"}
    assert ctx["additionalContext"] == plain.stdout.rstrip("\n")  # the same notice, for the model to read
    if expected == 1:
        assert "[FAILED]" in plain.stdout and "conclusion: Not the P2P path" in plain.stdout
        assert "result: Still hangs at step 3" in plain.stdout
    else:
        assert "[INCONCLUSIVE]" in plain.stdout


FAIL = """import os, sys
n = len(os.listdir(sys.argv[1])) if len(sys.argv) > 1 else 0
open(os.path.join(sys.argv[1], str(n)), "w").close() if len(sys.argv) > 1 else None
msgs = {MSGS}
print(msgs[n % len(msgs)], file=sys.stderr)
sys.exit(0 if msgs[n % len(msgs)] == "ok" else 1)
"""


def make_repro(root, name, msgs):
    (root / name).write_text(FAIL.replace("{MSGS}", repr(msgs)))
    (root / f"{name}.d").mkdir()


def test_supervised_run_attempt_and_circuit_breaker(workdir):
    (workdir / ".git").mkdir()
    run_cli("new", "illegal address in decode", "--no-env", cwd=workdir)
    make_repro(workdir, "same.py", ["RuntimeError: CUDA error: an illegal memory access was encountered"])
    cmd = [sys.executable, "same.py", "same.py.d"]
    r = run_cli("run", "--attempt", "baseline", "--env", "CUDA_LAUNCH_BLOCKING=1", "--", *cmd, cwd=workdir)
    assert r.returncode == 1, r.stderr
    shell = f"CUDA_LAUNCH_BLOCKING=1 {sys.executable} same.py same.py.d"
    # a plain re-run of the repro is not a repeat of a fix: no notice (until the circuit breaker)
    assert hook(workdir, "pre-command", shell).stdout == ""
    assert hook(workdir, "pre-command", f"{sys.executable} same.py same.py.d").stdout == ""  # without the env var

    run_cli("run", "--env", "CUDA_LAUNCH_BLOCKING=1", "--", *cmd, cwd=workdir)
    assert "circuit breaker" not in hook(workdir, "pre-command", shell).stdout  # two
    assert "circuit breaker" in hook(workdir, "pre-command", shell, "--threshold", "2").stdout
    run_cli("run", "--env", "CUDA_LAUNCH_BLOCKING=1", "--", *cmd, cwd=workdir)
    third = hook(workdir, "pre-command", f"cd {workdir} && CUDA_LAUNCH_BLOCKING=1 {sys.executable} ./same.py "
                 "same.py.d 2>&1 | tail -30").stdout
    assert "circuit breaker" in third and "failed 3 times in a row, the same way: fail [gpu.illegal_address]" in third
    assert "dbglog bisect git --good REV --bad HEAD -- env CUDA_LAUNCH_BLOCKING=1" in third
    (workdir / ".dbglog" / "config.toml").write_text("[hook]\nbreaker_threshold = 4\n")
    assert "circuit breaker" not in hook(workdir, "pre-command", shell).stdout
    (workdir / ".dbglog" / "config.toml").write_text("")
    # untested key differences with apply specs: the ready toggle bisection
    run_cli("diff", "add", "Launch blocking", "0", "1", "--apply", "env:CUDA_LAUNCH_BLOCKING=1", cwd=workdir)
    assert "untested key differences: Launch blocking -> `dbglog bisect toggles --from-diffs --" in \
        hook(workdir, "pre-command", shell).stdout


def test_a_failed_fix_is_a_repeat_by_its_settings_and_the_repro_is_not(workdir):
    (workdir / ".git").mkdir()
    run_cli("new", "server deadlocks under 64 clients", "--no-env", cwd=workdir)
    make_repro(workdir, "serve.py", ["RuntimeError: deadlock in accept"])
    repro = f"{sys.executable} serve.py serve.py.d"
    assert run_cli("run", "--", sys.executable, "serve.py", "serve.py.d", cwd=workdir).returncode == 1
    run_cli("attempt", "add", "Bigger queue", "--did", "set REQUEST_QUEUE_SIZE=128 in the env and reran the server",
            "--result", "same deadlock", "--conclusion", "The backlog is not the bottleneck", "--outcome", "failed",
            cwd=workdir)
    run_cli("attempt", "add", "Baseline again", "--did", repro, "--result", "deadlock", "--outcome", "failed",
            cwd=workdir)
    assert hook(workdir, "pre-command", repro).stdout == ""  # re-running the repro repeats no fix
    out = hook(workdir, "pre-command", f"REQUEST_QUEUE_SIZE=128 {repro} 2>&1 | tail -5").stdout
    assert out.startswith("dbglog: this repeats a failed fix") and 'attempt 1 "Bigger queue"' in out
    assert "the same settings: REQUEST_QUEUE_SIZE=128" in out and "The backlog is not the bottleneck" in out
    assert hook(workdir, "pre-command", f"REQUEST_QUEUE_SIZE=256 {repro}").stdout == ""  # another value: new


def test_settings_proven_bad_are_named_before_the_command(workdir):
    (workdir / ".git").mkdir()
    run_cli_inproc(workdir, "new", "RCCL init crashes on 8 GPUs", "--no-env", check=0)
    run_cli_inproc(workdir, "attempt", "add", "Toggle bisection: NCCL_P2P_DISABLE + NCCL_SHM_DISABLE", "--did",
                   "dbglog bisect toggles --env NCCL_P2P_DISABLE=1 --env NCCL_SHM_DISABLE=1 --env NCCL_IB_DISABLE=1 "
                   "-- python train.py", "--result", "complete after 7 trials",
                   "--conclusion", "`NCCL_P2P_DISABLE` and `NCCL_SHM_DISABLE` fail only together: an interaction "
                   "between them.", "--outcome", "worked", check=0)
    run_cli_inproc(workdir, "diff", "add", "SDMA", "1", "0", "--apply", "env:HSA_ENABLE_SDMA=0", "--status", "culprit",
                   check=0)
    both = hook(workdir, "pre-command", "NCCL_SHM_DISABLE=1 NCCL_P2P_DISABLE=1 torchrun train.py", fast=True).stdout
    assert "sets NCCL_P2P_DISABLE=1 + NCCL_SHM_DISABLE=1, proven to cause the failure (toggle bisection" in both
    assert hook(workdir, "pre-command", "NCCL_P2P_DISABLE=1 torchrun train.py", fast=True).stdout == ""  # one alone
    sdma = hook(workdir, "pre-command", "HSA_ENABLE_SDMA=0 python bench.py", fast=True).stdout
    assert "sets HSA_ENABLE_SDMA=0, proven to cause the failure (key difference 'SDMA'" in sdma
    assert hook(workdir, "pre-command", "HSA_ENABLE_SDMA=1 python bench.py", fast=True).stdout == ""


def test_breaker_not_on_different_failures_nor_after_a_pass(workdir):
    (workdir / ".git").mkdir()
    make_repro(workdir, "varied.py", ["RuntimeError: CUDA error: out of memory",
                                      "RuntimeError: CUDA error: an illegal memory access was encountered",
                                      "Segmentation fault (core dumped)"])
    for _ in range(3):
        run_cli("run", "--", sys.executable, "varied.py", "varied.py.d", cwd=workdir)
    assert hook(workdir, "pre-command", f"{sys.executable} varied.py varied.py.d").stdout == ""

    make_repro(workdir, "fixed.py", ["RuntimeError: boom", "RuntimeError: boom", "RuntimeError: boom", "ok"])
    for _ in range(3):
        run_cli("run", "--", sys.executable, "fixed.py", "fixed.py.d", cwd=workdir)
    assert "circuit breaker" in hook(workdir, "pre-command", f"{sys.executable} fixed.py fixed.py.d").stdout
    run_cli("run", "--", sys.executable, "fixed.py", "fixed.py.d", cwd=workdir)  # now it passes
    assert hook(workdir, "pre-command", f"{sys.executable} fixed.py fixed.py.d").stdout == ""


def test_prompt_lists_relevant_prior_attempts(kb):
    prompt = "The 8-GPU NCCL all_reduce job hangs again at step 3. Can you debug the hang?"
    plain = hook(kb, "prompt", prompt, fast=True).stdout
    lines = plain.splitlines()
    assert lines[0].startswith("dbglog: prior attempts that look relevant")
    numbered = [ln for ln in lines if ln[:2] in ("1.", "2.", "3.", "4.")]
    assert 1 <= len(numbered) <= 3 and "Disable P2P" in plain
    claude = json.loads(hook(kb, "prompt", json.dumps({
        "session_id": "abc123", "transcript_path": "/tmp/t.jsonl", "cwd": str(kb), "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit", "prompt": prompt}), fast=True).stdout)
    assert claude["hookSpecificOutput"] == {"hookEventName": "UserPromptSubmit", "additionalContext": plain.rstrip()}
    # not a debugging task, or nothing relevant: silence
    assert hook(kb, "prompt", "Add a section about installation to the README", fast=True).stdout == ""
    assert hook(kb, "prompt", "Fix the typo in the docs and bump the version", fast=True).stdout == ""
    assert hook(kb, "prompt", "The React date picker crashes on an empty value, debug it", fast=True).stdout == ""


@pytest.mark.parametrize("stdin", [
    "", "   \n", "{not json", '{"tool_name": "Read", "tool_input": {"file_path": "/etc/passwd"}}',
    '{"tool_name": "Bash", "tool_input": "not a dict"}', '{"tool_name": "Bash", "tool_input": {"command": 42}}',
    "[1, 2, 3]", "\x00\x01\x02 binary", "'unclosed quote torchrun train.py",
    '{"tool_input": ' + "[" * 50_000,  # nested deeper than the JSON decoder recurses
])
def test_bad_input_is_silent(kb, stdin):
    for event in ("pre-command", "prompt"):
        p = hook(kb, event, stdin)
        assert p.stdout == "" and len(p.stderr.splitlines()) <= 1


def test_never_fails_the_agent(tmp_path, kb):
    # no workspace here
    p = hook(tmp_path, "pre-command", CMD)
    assert p.stdout == "" and p.stderr == ""
    # bad arguments: one line on stderr, exit 0 (exit 2 would block the tool call)
    p = hook(kb, "pre-commnd", CMD)
    assert p.stdout == "" and p.stderr.startswith("dbglog hook: unknown hook") and len(p.stderr.splitlines()) == 1
    p = hook(kb, "pre-command", CMD, "--threshold", "zero")
    assert p.stdout == "" and len(p.stderr.splitlines()) == 1
    # a database that cannot be read
    ws = tmp_path / "broken"
    ws.mkdir()
    run_cli("new", "x", "--no-env", cwd=ws)
    db = ws / ".dbglog" / "dbglog.db"
    for extra in ("-wal", "-shm"):
        (ws / ".dbglog" / f"dbglog.db{extra}").unlink(missing_ok=True)
    db.write_bytes(b"this is not sqlite" * 100)
    p = hook(ws, "pre-command", CMD)
    assert p.stdout == "" and len(p.stderr.splitlines()) == 1 and p.stderr.startswith("dbglog hook: ")
    # through the CLI module too (`from dbglog.cli import main`, as the benches call it)
    p = subprocess.run([sys.executable, "-c", "from dbglog.cli import main; main()", "hook", "bogus"], cwd=kb,
                       input="", capture_output=True, text=True, env=cli_env(), timeout=60)
    assert p.returncode == 0 and p.stdout == "" and len(p.stderr.splitlines()) == 1


def test_the_command_hook_stays_light(kb):
    """Before every shell command: no click, jinja2, rich, sqlite-utils or rapidfuzz imported."""
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "dbglog", "hook", "pre-command"], cwd=kb,
                       input=CMD, capture_output=True, text=True, env=cli_env(), timeout=60)
    assert p.returncode == 0 and "attempt 1" in p.stdout
    imported = {ln.split("|")[-1].strip() for ln in p.stderr.splitlines() if ln.startswith("import time:")}
    heavy = {m for m in imported if m.split(".")[0] in ("click", "jinja2", "rich", "sqlite_utils", "rapidfuzz",
                                                        "markdown_it", "yaml", "psutil", "tomlkit")}
    assert not heavy, heavy
    assert "dbglog.hooks" in imported and "dbglog.cli" not in imported


def test_database_unchanged_by_hooks(kb):
    db = kb / ".dbglog" / "dbglog.db"
    before = sqlite3.connect(db).execute("SELECT count(*), max(id) FROM attempts").fetchone()
    hook(kb, "pre-command", CMD)
    hook(kb, "prompt", "NCCL hangs, debug it")
    assert sqlite3.connect(db).execute("SELECT count(*), max(id) FROM attempts").fetchone() == before


# --- session start: a digest of the open investigations under a token budget ---------------------


def _big_investigation(root, n_attempts=500):
    """One open investigation with ``n_attempts`` long attempts, 12 untested differences and 6 steps,
    two more open ones and a resolved one (written in one transaction: the hook reads the database)."""
    from dbglog.core.model import Attempt
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace

    (root / ".git").mkdir()
    recs = Records(Workspace(root / ".dbglog"), create=True)
    big = recs.new("Decode kernel faults under load", symptom="illegal memory access in paged attention " * 8)
    for k in range(3):
        recs.new(f"Other bug {k}", symptom=f"symptom {k}")
    recs.set_status(recs.new("Old resolved bug").id, "resolved")
    with recs.change(big.id):
        for n in range(1, n_attempts + 1):
            recs.store.upsert_attempt(big.id, Attempt(
                number=n, title=f"Attempt number {n} " + "with a long title " * 10, did="python repro.py " * 30,
                result="Still faults at the same address " * 20, conclusion=f"conclusion {n} " * 40,
                outcome="failed", created=f"2026-11-01T00:{n // 60:02d}:{n % 60:02d}Z"))
    for k in range(12):
        recs.diff_add(big.id, f"factor {k}", "off", "on", apply="env:F%d=1" % k if k < 2 else "")
    for k in range(6):
        recs.next_add(big.id, f"step {k} " + "to try " * 40)
    recs.use(big.id)
    recs.close()
    return big.id


def test_session_start_digest_under_budget(tmp_path):
    from dbglog import hooks

    inv = _big_investigation(tmp_path)
    db = hooks.Recorded(str(tmp_path / ".dbglog"))
    try:
        text = hooks.session_digest(db)
        small = hooks.session_digest(db, budget=150)
    finally:
        db.close()
    assert hooks.estimate_tokens(text) <= 1500 and len(text) <= 1500 * 4
    assert hooks.estimate_tokens(small) <= 150
    lines = text.splitlines()
    assert lines[0].startswith("dbglog: 4 open investigation(s)") and "Old resolved bug" not in text
    assert lines[1].startswith("## Decode kernel faults under load") and inv in lines[1] and "500 attempt(s)" in lines[1]
    # the current one first: symptom, its last three attempts (newest first), untested rows, top steps
    assert [ln.split(".")[0] for ln in lines if ln.startswith(("- 49", "- 50"))] == ["- 500", "- 499", "- 498"]
    assert "- 497." not in text and "[FAILED]" in text and "symptom: illegal memory access" in text
    assert "- factor 0: off vs on [bisectable]" in text and "7 more (`dbglog diff list" in text
    assert "bisect toggles --from-diffs" in text
    assert "- 1. step 0" in text and "- 3. step 2" in text and "- 4. step 3" not in text
    assert all(f"Other bug {k}" in text for k in range(3))
    # a tight budget keeps the head and says what it left out
    assert small.startswith("dbglog: 4 open") and "more open: `dbglog list --status open`" in small
    # a budget under the head's own size (an adversarial probe: 20 tokens got 86) gets a line that fits, or nothing
    db = hooks.Recorded(str(tmp_path / ".dbglog"))
    try:
        for budget in (1, 5, 20, 40):
            tiny = hooks.session_digest(db, budget=budget)
            assert hooks.estimate_tokens(tiny) <= budget, (budget, tiny)
        assert hooks.session_digest(db, budget=20).startswith("dbglog: 4 open investigation(s)")
    finally:
        db.close()


def test_session_start_hook_wiring(tmp_path, kb):
    payload = json.dumps({"session_id": "abc123", "transcript_path": "/tmp/t.jsonl", "cwd": str(kb),
                          "hook_event_name": "SessionStart", "source": "compact"})
    out = json.loads(hook(tmp_path, "session-start", payload).stdout)  # cwd from the JSON
    ctx = out["hookSpecificOutput"]
    assert ctx["hookEventName"] == "SessionStart" and "NCCL all_reduce hangs on 8 GPUs" in ctx["additionalContext"]
    assert "3. [WORKED] Smaller world" in ctx["additionalContext"]
    plain = hook(kb, "session-start", "").stdout
    assert plain.rstrip() == ctx["additionalContext"]
    assert hook(tmp_path, "session-start", "").stdout == ""  # no workspace: nothing
    p = hook(kb, "session-start", "", "--budget", "0")
    assert p.stdout == "" and p.stderr.startswith("dbglog hook: ")


# --- other agents' hooks: Gemini CLI and Cursor (their documented input and answer shapes) ------------


def test_gemini_and_cursor_command_hooks_get_the_notice_in_their_own_answer_shape(kb):
    plain = hook(kb, "pre-command", CMD, fast=True).stdout.rstrip("\n")
    assert plain.startswith("dbglog: this was tried before")
    cursor_shell = {"hook_event_name": "beforeShellExecution", "conversation_id": "c1", "generation_id": "g1",
                    "workspace_roots": [str(kb)], "command": CMD, "cwd": str(kb)}
    assert json.loads(hook(kb, "pre-command", json.dumps(cursor_shell), fast=True).stdout) == \
        {"permission": "allow", "agent_message": plain}  # never a denial
    cursor_tool = {"hook_event_name": "preToolUse", "conversation_id": "c1", "workspace_roots": [str(kb)],
                   "tool_name": "Shell", "tool_input": {"command": CMD}}
    assert json.loads(hook(kb, "pre-command", json.dumps(cursor_tool), fast=True).stdout) == \
        {"permission": "allow", "agent_message": plain}
    gemini = {"session_id": "s1", "transcript_path": "/tmp/t.json", "cwd": str(kb), "hook_event_name": "BeforeTool",
              "timestamp": "2026-11-24T10:00:00Z", "tool_name": "run_shell_command", "tool_input": {"command": CMD}}
    assert json.loads(hook(kb, "pre-command", json.dumps(gemini), fast=True).stdout) == {"systemMessage": plain}
    # another tool of theirs, or a command nobody tried: silence
    assert hook(kb, "pre-command", json.dumps(gemini | {"tool_name": "read_file",
                                                         "tool_input": {"file_path": "train.py"}}), fast=True).stdout == ""
    assert hook(kb, "pre-command", json.dumps(cursor_shell | {"command": "python eval.py"}), fast=True).stdout == ""
    # forced: a plain command answered in Cursor's shape
    assert json.loads(hook(kb, "pre-command", CMD, "--format", "cursor", fast=True).stdout) == \
        {"permission": "allow", "agent_message": plain}


def test_gemini_and_cursor_prompt_and_session_hooks(tmp_path, kb):
    prompt = "The 8-GPU NCCL all_reduce job hangs again at step 3. Can you debug the hang?"
    plain = hook(kb, "prompt", prompt, fast=True).stdout.rstrip("\n")
    assert "Disable P2P" in plain
    before_agent = {"session_id": "s1", "transcript_path": "/tmp/t.json", "cwd": str(kb),
                    "hook_event_name": "BeforeAgent", "timestamp": "2026-11-24T10:00:00Z", "prompt": prompt}
    assert json.loads(hook(kb, "prompt", json.dumps(before_agent), fast=True).stdout) == \
        {"hookSpecificOutput": {"hookEventName": "BeforeAgent", "additionalContext": plain}}
    # Cursor's prompt hook takes no context: nothing is printed (and nothing searched)
    cursor_prompt = {"hook_event_name": "beforeSubmitPrompt", "conversation_id": "c1", "workspace_roots": [str(kb)],
                     "prompt": prompt, "attachments": []}
    assert hook(kb, "prompt", json.dumps(cursor_prompt), fast=True).stdout == ""
    # Cursor's sessionStart names the workspace roots, not a cwd
    digest = hook(kb, "session-start", "").stdout.rstrip("\n")
    assert "NCCL all_reduce hangs on 8 GPUs" in digest
    start = {"hook_event_name": "sessionStart", "conversation_id": "c1", "workspace_roots": [str(kb)]}
    assert json.loads(hook(tmp_path, "session-start", json.dumps(start)).stdout) == {"additional_context": digest}
    gemini_start = {"session_id": "s1", "transcript_path": "/tmp/t.json", "cwd": str(kb),
                    "hook_event_name": "SessionStart", "timestamp": "2026-11-24T10:00:00Z", "source": "startup"}
    assert json.loads(hook(tmp_path, "session-start", json.dumps(gemini_start)).stdout) == \
        {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": digest}}


def test_the_command_hook_answers_in_bounded_time_whatever_the_command(recs, monkeypatch):
    """An adversarial probe: a 1 MB command took 20 s in the lexer, and a chain of commands read every attempt
    that ran the same program once per command (10 commands at 10,000 attempts: 6 s, past an agent's hook
    timeout with more). The notice reads the first 64 KB and 16 commands, and each attempt's keys once."""
    import time

    from dbglog import hooks

    inv = recs.new("hang")
    for i in range(40):
        recs.add_attempt(inv.id, title=f"try {i}", did=f"python repro.py --bs {i}", result="still hangs",
                         outcome="failed")
    t = time.thread_time()
    assert hooks.pre_command_notice(recs, "a" * 1_000_000, str(recs.ws.root)) == ""
    assert hooks.pre_command_notice(recs, "x && " * 200_000, str(recs.ws.root)) == ""
    assert time.thread_time() - t < 5  # ~40 s before; a fraction of a second now
    read = []
    real = hooks._read_attempt_keys
    monkeypatch.setattr(hooks, "_read_attempt_keys",
                        lambda recs, r, root: read.append(r["number"]) or real(recs, r, root))
    chain = " && ".join(f"python repro.py --bs {i}" for i in range(30))
    notice = hooks.pre_command_notice(recs, chain, str(recs.ws.root))
    assert "tried before" in notice
    assert len(read) == len(set(read)) <= 40  # each attempt read once, not once per command of the chain


def test_the_command_hook_reads_only_attempts_that_hold_the_commands_flag_values(recs, monkeypatch):
    """At 10,000 attempts running one program with other values (`--seed N`), every one was parsed to compare
    its command: 0.6 s per hook call. An attempt whose text lacks the command's flag values is not read, and one
    that holds them behind quotes or escapes still matches."""
    from dbglog import hooks

    inv = recs.new("diverges")
    for i in range(30):
        recs.add_attempt(inv.id, title=f"seed {i}", did=f"python train.py --seed {1000 + i} --lr 3e-4",
                         result="still diverges", outcome="failed")
    recs.add_attempt(inv.id, title="quoted", did="python train.py --seed \"77\"'77' --lr 3e\\-4",
                     result="still diverges", outcome="failed")
    read = []
    real = hooks._read_attempt_keys
    monkeypatch.setattr(hooks, "_read_attempt_keys",
                        lambda recs, r, root: read.append(r["number"]) or real(recs, r, root))
    root = str(recs.ws.root)
    assert "attempt 6 " in hooks.pre_command_notice(recs, "python train.py --seed 1005 --lr 3e-4", root)
    assert read == [6]
    read.clear()
    assert "attempt 31 " in hooks.pre_command_notice(recs, "python train.py --lr 3e-4 --seed 7777", root)
    assert read == [31]
    read.clear()
    assert hooks.pre_command_notice(recs, "python train.py --seed 4242 --lr 3e-4", root) == ""
    assert read == []


@pytest.mark.parametrize("stdin", ["", "ls -la", "{not json"])
def test_a_hook_asked_for_json_prints_json_when_it_has_nothing_to_say(kb, stdin):
    """An adversarial probe: `hook pre-command --json` printed nothing when it had nothing to say, which is not
    JSON, though every command's --json is. It prints {} (nothing to say, in every agent's answer shape)."""
    for event in ("pre-command", "prompt"):
        p = hook(kb, event, stdin, "--json", fast=True)
        assert json.loads(p.stdout) == {}, p.stdout
