"""Seen before (issue 27): a failure is matched against what the knowledge base knows at the moment it
happens -- the investigations that saw it, the attempts that worked, a possible regression -- and the
fingerprints are kept, listed, carried by the mirror and rebuilt by reindex."""

from __future__ import annotations

import json
import shlex
import shutil
import sys

import pytest

CRASH = '''import sys
print("INFO 06-20 10:37:01 [__init__.py:243] loading model", flush=True)
print("Traceback (most recent call last):", file=sys.stderr)
print('  File "/home/u/proj/serve.py", line 88, in <module>', file=sys.stderr)
print('  File "/home/u/proj/moe.py", line 41, in fused_experts', file=sys.stderr)
print("RuntimeError: CUDA error: an illegal memory access was encountered", file=sys.stderr)
sys.exit(1)
'''
OTHER = CRASH.replace("moe.py", "attention.py").replace("fused_experts", "paged_attention")


@pytest.fixture
def repro(ws):
    (ws / "crash.py").write_text(CRASH)
    (ws / "other.py").write_text(OTHER)
    (ws / "ok.py").write_text("print('fine')\n")
    return ws


def _run(cli_fast, ws, *args):
    p = cli_fast(ws, "run", "--json", *args)
    assert p.returncode in (0, 1), p.stderr
    return json.loads(p.stdout)


def _first_investigation(cli_fast, ws) -> str:
    inv = json.loads(cli_fast(ws, "new", "IMA in fused MoE kernel", "--no-env", "--json", check=0).stdout)["id"]
    _run(cli_fast, ws, "--attempt", "Baseline", "--", sys.executable, "crash.py")
    cli_fast(ws, "attempt", "add", "Eager mode", "--did", "--enforce-eager", "--result", "no crash in 50 runs",
             "--outcome", "worked", check=0)
    return inv


def test_a_second_investigations_run_names_the_first_and_what_worked_then_flags_a_regression(cli_fast, repro):
    first = _first_investigation(cli_fast, repro)
    cli_fast(repro, "new", "Serving crash on the new cluster", "--no-env", check=0)
    out = _run(cli_fast, repro, "--attempt", "Baseline", "--", sys.executable, "crash.py")
    seen = out["seen_before"]
    assert [i["id"] for i in seen["investigations"]] == [first]
    assert seen["investigations"][0]["match"] == "exact"
    assert seen["attempts"][0] | {"line": ""} == {"investigation": first, "number": 2, "title": "Eager mode",
                                                  "line": "", "outcome": "worked", "runs": []}
    assert seen["regression"] is None  # still open: nothing to regress from
    text = cli_fast(repro, "run", "-q", "--", sys.executable, "crash.py").stdout
    assert text.index("FAIL [gpu.illegal_address]") < text.index("seen before")
    assert "worked: #2 Eager mode" in text

    cli_fast(repro, "status", first, "resolved", "--root-cause", "the MoE kernel read past the expert buffer; "
             "fixed in 3f2a9c1", check=0)
    again = _run(cli_fast, repro, "--", sys.executable, "crash.py")["seen_before"]
    assert again["investigations"][0]["root_cause"].startswith("the MoE kernel read past")
    g = again["regression"]
    assert g["investigation"] == first and g["fix_commit"] == "3f2a9c1"
    assert g["by"] == 'attempt 2 "Eager mode"'
    assert g["bisect"] == f"dbglog bisect git --good 3f2a9c1 --bad HEAD -- {shlex.join([sys.executable, 'crash.py'])}"
    assert any(line.startswith("  REGRESSED? ") and "resolved on" in line for line in again["lines"])
    # the offers are real commands
    assert cli_fast(repro, *shlex.split(g["commands"][1])[1:], check=0)
    cli_fast(repro, *shlex.split(g["commands"][0])[1:], check=0)
    assert json.loads(cli_fast(repro, "show", first, "--json", check=0).stdout)["status"] == "open"


def test_a_near_match_is_printed_as_a_guess_with_its_evidence_and_an_exact_one_is_not(cli_fast, repro):
    first = _first_investigation(cli_fast, repro)
    cli_fast(repro, "status", first, "resolved", "--root-cause", "the MoE kernel read past the expert buffer", check=0)
    (repro / "newer.py").write_text(CRASH.replace('print("RuntimeError', 'print("torch.AcceleratorError'))
    cli_fast(repro, "new", "Crash after the torch upgrade", "--no-env", check=0)
    seen = _run(cli_fast, repro, "--", sys.executable, "newer.py")["seen_before"]  # (torch renamed the exception)
    inv = seen["investigations"][0]
    assert (inv["id"], inv["match"], inv["guess"]) == (first, "near", True)
    assert "same frame moe.py:fused_experts" in inv["evidence"] and f"{inv['score']}% alike" in inv["evidence"]
    line = next(ln for ln in seen["lines"] if first in ln)
    assert line.endswith(f"[near match, a guess: {inv['evidence']}]")
    assert any(ln.startswith("  REGRESSED? ") and ln.endswith("(a guess: a near match)") for ln in seen["lines"])
    exact = _run(cli_fast, repro, "--", sys.executable, "crash.py")["seen_before"]
    assert exact["investigations"][0]["guess"] is False
    assert next(ln for ln in exact["lines"] if first in ln).endswith("[exact]")
    assert not any("a guess" in ln for ln in exact["lines"])


def test_a_different_bug_with_the_same_signature_is_not_recalled_as_seen(cli_fast, repro):
    _first_investigation(cli_fast, repro)
    out = _run(cli_fast, repro, "--", sys.executable, "other.py")
    assert out["signature"] == "gpu.illegal_address"
    assert out["seen_before"]["investigations"] == []
    assert out["seen_before"]["lines"][0].startswith("seen before: no (fp-")


def test_a_passing_run_carries_no_seen_before_block(cli_fast, repro):
    assert "seen_before" not in _run(cli_fast, repro, "--", sys.executable, "ok.py")


def test_the_mirror_carries_each_failures_key_and_normalised_line_only(cli_fast, repro):
    first = _first_investigation(cli_fast, repro)
    md = next((repro / "logs").glob("*.md")).read_text()
    lines = [ln for ln in md.splitlines() if "failure fp-" in ln]
    assert len(lines) == 1
    assert lines[0].endswith("[gpu.illegal_address]: RuntimeError: CUDA error: an illegal memory access was encountered")
    assert "moe.py" not in md and "/home/u" not in md  # frames and paths stay local
    assert first in md


def test_the_mirrors_failure_line_is_redacted(cli_fast, repro):
    secret = "hf_" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv"
    (repro / "leak.py").write_text(CRASH.replace("was encountered", f"was encountered (token {secret})"))
    cli_fast(repro, "new", "Leaky crash", "--no-env", check=0)
    _run(cli_fast, repro, "--attempt", "Baseline", "--", sys.executable, "leak.py")
    md = "\n".join(p.read_text() for p in (repro / "logs").glob("*.md"))
    line = next(ln for ln in md.splitlines() if "failure fp-" in ln)
    assert "illegal memory access" in line and secret not in md


def test_a_teammates_clone_without_the_runs_recognises_the_failure(cli_fast, repro, tmp_path):
    first = _first_investigation(cli_fast, repro)
    clone = tmp_path / "clone"
    clone.mkdir()
    shutil.copytree(repro / "logs", clone / "logs")
    shutil.copy(repro / "crash.py", clone / "crash.py")
    cli_fast(clone, "init", check=0)
    seen = _run(cli_fast, clone, "--", sys.executable, "crash.py")["seen_before"]
    assert [i["id"] for i in seen["investigations"]] == [first]
    assert seen["investigations"][0]["match"] == "exact"


def test_failures_lists_and_shows_fingerprints_and_reindex_rebuilds_them(cli_fast, repro):
    first = _first_investigation(cli_fast, repro)
    _run(cli_fast, repro, "--", sys.executable, "crash.py")
    rows = json.loads(cli_fast(repro, "failures", "--json", check=0).stdout)
    assert len(rows) == 1
    row = rows[0]
    assert row["count"] == 2 and row["runs"] == 2 and row["status"] == "open"
    assert [i["id"] for i in row["investigations"]] == [first]
    shown = json.loads(cli_fast(repro, "failures", "show", row["key"][:7], "--json", check=0).stdout)
    assert shown["fingerprint"]["frames"] == ["moe.py:fused_experts", "serve.py:<module>"]
    assert {p["source"] for p in shown["seen"]} == {"run", "mirror"}
    cli_fast(repro, "reindex", "--force", check=0)
    assert json.loads(cli_fast(repro, "failures", "--json", check=0).stdout)[0] | {"last_seen": None} == \
        row | {"last_seen": None}


def test_failures_show_refuses_what_is_not_a_fingerprint_in_one_line(cli_fast, repro):
    p = cli_fast(repro, "failures", "show", "not-a-key")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "not a fingerprint" in p.stderr
    p = cli_fast(repro, "failures", "show", "fp-0000")
    assert p.returncode == 2 and "no failure" in p.stderr


def test_a_watched_doc_that_quotes_the_error_is_mentioned(cli_fast, repro):
    (repro / "notes").mkdir()
    (repro / "notes" / "moe.md").write_text("# MoE crashes\n\n## Seen on H100\n\n```\n[rank0]: RuntimeError: CUDA "
                                            "error: an illegal memory access was encountered\n```\n")
    cfg = repro / ".dbglog" / "config.toml"
    cfg.write_text(cfg.read_text() + '\n[search]\nwatch = ["notes/*.md"]\n' if cfg.exists()
                   else '[search]\nwatch = ["notes/*.md"]\n')
    cli_fast(repro, "search", "illegal memory access", check=None)  # (a search refreshes the watched docs)
    seen = _run(cli_fast, repro, "--", sys.executable, "crash.py")["seen_before"]
    assert seen["mentions"] and seen["mentions"][0]["kind"] == "doc"
    assert seen["mentions"][0]["ref"].startswith("notes/moe.md")


def _git(cwd, *args):
    import subprocess

    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                   capture_output=True)


def test_a_bisections_first_bad_verdict_carries_what_the_knowledge_base_knows(cli_fast, tmp_path):
    repo = _bisect_repo(cli_fast, tmp_path)
    first = _first_investigation(cli_fast, repo)
    cli_fast(repo, "new", "Crash after the upgrade", "--no-env", check=0)  # (the bisection is recorded here)
    p = cli_fast(repo, "bisect", "git", "--good", "HEAD~1", "--bad", "HEAD", "--json", "--", sys.executable, "crash.py")
    assert p.returncode == 0, p.stderr
    seen = json.loads(p.stdout)["seen_before"]
    assert [i["id"] for i in seen["investigations"]] == [first]
    assert seen["attempts"][0]["title"] == "Eager mode"


def _bisect_repo(cli_fast, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "crash.py").write_text("print('fine')\n")
    _git(repo, "add", "crash.py")
    _git(repo, "commit", "-qm", "good")
    (repo / "crash.py").write_text(CRASH)
    _git(repo, "commit", "-qam", "bad")
    cli_fast(repo, "init", check=0)
    return repo


def test_a_bisection_prints_what_the_knowledge_base_knows_under_its_first_bad_verdict_as_it_happens(cli_fast, tmp_path):
    repo = _bisect_repo(cli_fast, tmp_path)
    first = _first_investigation(cli_fast, repo)
    cli_fast(repo, "new", "Crash after the upgrade", "--no-env", check=0)
    p = cli_fast(repo, "bisect", "git", "--good", "HEAD~1", "--bad", "HEAD", "--", sys.executable, "crash.py")
    assert p.returncode == 0, p.stderr
    progress = p.stderr.splitlines()
    bad = next(i for i, ln in enumerate(progress) if ": bad" in ln)  # the bad end, judged first
    assert progress[bad + 1].startswith("    seen before (fp-")
    assert any(ln.startswith(f"      {first} ") for ln in progress[bad + 2:bad + 5])
    assert "worked: #2 Eager mode" in "\n".join(progress[bad + 2:bad + 8])
    assert sum(ln.lstrip().startswith("seen before (") for ln in progress) == 1  # under the first bad verdict only
    key = progress[bad + 1].split("(")[1].split(",")[0]
    assert f"seen before: {key}, shown under the first bad verdict above" in p.stdout  # (not the block again)


@pytest.mark.parametrize("how", [[], ["--flaky"]])
def test_a_toggle_bisection_prints_it_under_its_first_bad_verdict_and_its_json_carries_the_same(cli_fast, repro, how):
    (repro / "toggled.py").write_text("import os\nif os.environ.get('B') == '1':\n    exec(open('crash.py').read())\n")
    first = _first_investigation(cli_fast, repro)
    cli_fast(repro, "new", "Crash with the new flags", "--no-env", check=0)  # (the bisection is recorded here)
    args = ["bisect", "toggles", "--env", "A=1", "--env", "B=1", *how]
    p = cli_fast(repro, *args, "--", sys.executable, "toggled.py")
    assert p.returncode == 0, p.stderr
    progress = p.stderr.splitlines()
    bad = next(i for i, ln in enumerate(progress) if ": bad" in ln)
    assert progress[bad + 1].startswith("    seen before (fp-") and first in progress[bad + 2]
    p = cli_fast(repro, *args, "--json", "--", sys.executable, "toggled.py")
    seen = json.loads(p.stdout)["seen_before"]
    assert [i["id"] for i in seen["investigations"]] == [first] and seen["lines"][1].startswith(f"  {first} ")


def test_the_session_digest_and_the_command_hook_cite_the_fingerprint(cli_fast, repro):
    first = _first_investigation(cli_fast, repro)
    cli_fast(repro, "status", first, "resolved", "--root-cause", "expert buffer overrun", check=0)
    cli_fast(repro, "new", "Serving crash", "--no-env", check=0)
    # (a fix that failed: a re-run of the repro itself gives no notice, issue 26)
    out = _run(cli_fast, repro, "--attempt", "Rebuilt with the patch", "--", sys.executable, "crash.py")
    key = out["seen_before"]["fingerprint"]["key"]
    digest = cli_fast(repro, "hook", "session-start", "--format", "text").stdout
    assert f"seen before: {key} [gpu.illegal_address] also in {first} (resolved; root cause: expert buffer " \
           "overrun; worked: #2 Eager mode)" in digest
    notice = cli_fast(repro, "hook", "pre-command", "--format", "text",
                      input=shlex.join([sys.executable, "crash.py"])).stdout
    assert f"failed against {key} [gpu.illegal_address]" in notice


def test_the_regressions_bisect_line_starts_from_the_commit_the_fix_passed_on(cli_fast, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "crash.py").write_text(CRASH)
    (repo / "fixed.py").write_text("print('fine')\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "fix")
    cli_fast(repo, "init", check=0)  # (.dbglog/ is ignored, logs/ empty: a clean tree, its run names the commit)
    head = __import__("subprocess").run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout
    first = json.loads(cli_fast(repo, "new", "IMA", "--no-env", "--json", check=0).stdout)["id"]
    _run(cli_fast, repo, "--attempt", "Baseline", "--", sys.executable, "crash.py")
    fixed = _run(cli_fast, repo, "--attempt", "Bounds check in the MoE kernel", "--", sys.executable, "fixed.py")
    assert fixed["attempt"]["outcome"] == "worked" and fixed["git_dirty"] is False
    cli_fast(repo, "status", first, "resolved", "--root-cause", "out-of-bounds expert index", check=0)
    g = _run(cli_fast, repo, "--", sys.executable, "crash.py")["seen_before"]["regression"]
    assert g["fix_commit"] == head.strip()[:12]
    assert g["bisect"].startswith(f"dbglog bisect git --good {head.strip()[:12]} --bad HEAD -- ")


def test_an_agent_sees_a_recurring_failure_on_its_first_run_with_the_earlier_fix_named(cli_fast, repro, monkeypatch):
    from dbglog import mcp_server

    first = _first_investigation(cli_fast, repro)
    cli_fast(repro, "status", first, "resolved", "--root-cause", "expert buffer overrun; fixed in 3f2a9c1", check=0)
    cli_fast(repro, "new", "Agent: serving crash", "--no-env", check=0)
    monkeypatch.chdir(repro)  # (the MCP tool in this process: its result model is what an agent reads)
    result = mcp_server.run_repro([sys.executable, "crash.py"], timeout=60, attempt="first repro")
    seen = result.model_dump()["seen_before"]
    assert seen["investigations"][0]["id"] == first
    assert seen["attempts"][0]["title"] == "Eager mode" and seen["attempts"][0]["outcome"] == "worked"
    assert seen["regression"]["fix_commit"] == "3f2a9c1"
    assert any("worked: #2 Eager mode" in line for line in seen["lines"])


def _recall_for(cli_fast, repro, log: str) -> dict:
    """Import the repo's note.md, then ask `signature test --json` about a log: what the knowledge base recalls."""
    cli_fast(repro, "import", "note.md", check=0)
    (repro / "log.txt").write_text(log)
    return json.loads(cli_fast(repro, "signature", "test", "log.txt", "--json").stdout)


def test_an_error_block_in_an_imported_note_is_recalled_with_its_fix(cli_fast, repro):
    (repro / "note.md").write_text(
        "# NCCL hang on 8xH100\n\n## Symptom\n\nTraining stalls, then:\n\n```\n[rank3]:[E321 02:07:08.408271257 "
        "ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, "
        "OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600060 milliseconds "
        "before timing out.\n```\n\n## Tried\n\n- Set NCCL_P2P_DISABLE=1: worked, no more hangs.\n\n"
        "## Root cause\n\nACS enabled on the PCIe switch.\n")
    out = _recall_for(cli_fast, repro, (
        "[rank0]:[E321 03:00:00.1 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=99, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for "
        "600999 milliseconds before timing out.\n"))
    inv = out["seen_before"]["investigations"][0]
    assert inv["imported"] and inv["match"] == "exact" and inv["root_cause"].startswith("ACS enabled")
    assert out["seen_before"]["attempts"][0]["outcome"] == "worked"
    assert "(imported from note.md:8)" in out["seen_before"]["lines"][1]  # (the error block's line in the note)


def test_importing_a_note_with_a_crash_traceback_lets_the_next_run_of_that_crash_name_the_note(cli_fast, repro):
    (repro / "debug.md").write_text(
        "# MoE server dies under load\n\nSeen on the staging box, rank 5:\n\n```\n[rank5]: Traceback (most "
        "recent call last):\n[rank5]:   File \"/srv/app/serve.py\", line 90, in <module>\n[rank5]:   File "
        "\"/srv/app/moe.py\", line 44, in fused_experts\n[rank5]: RuntimeError: CUDA error: an illegal memory "
        "access was encountered\n```\n\n## Fix\n\nBounds check on the expert index: worked.\n")
    imported = json.loads(cli_fast(repro, "import", "debug.md", "--json", check=0).stdout)["investigations"][0]["id"]
    cli_fast(repro, "new", "Crash in the nightly", "--no-env", check=0)
    out = _run(cli_fast, repro, "--", sys.executable, "crash.py")
    inv = out["seen_before"]["investigations"][0]
    assert (inv["id"], inv["doc"]) == (imported, "debug.md:6")  # (another rank, line numbers and folder)
    assert inv["match"] in ("exact", "near")
    assert any("(imported from debug.md:6)" in line for line in out["seen_before"]["lines"])
    other = _run(cli_fast, repro, "--", sys.executable, "other.py")["seen_before"]  # another kernel's crash
    assert imported not in [i["id"] for i in other["investigations"]]
    cli_fast(repro, "reindex", check=0)  # (the note is not in the mirror: what import found is kept)
    again = _run(cli_fast, repro, "--", sys.executable, "crash.py")["seen_before"]["investigations"][0]
    assert (again["id"], again["doc"]) == (imported, "debug.md:6")


def test_a_message_a_note_quotes_inside_a_wrappers_sentence_is_recalled_for_the_bare_message(cli_fast, repro):
    (repro / "note.md").write_text(
        "# Broadcast hang at GRPO start\n\n```\n[rank2]:[E424 01:17:25.031978332 ProcessGroupNCCL.cpp:1895] [PG ID 0 PG "
        "GUID 0(default_pg) Rank 2] Process group watchdog thread terminated with exception: [Rank 2] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=4, OpType=BROADCAST, NumelIn=112, NumelOut=112, "
        "Timeout(ms)=1800000) ran for 1800010 milliseconds before timing out.\n```\n\n## Tried\n\n"
        "- Start the generation server before the trainer: worked.\n")
    out = _recall_for(cli_fast, repro, (
        "[rank5]:[E424 09:00:00.1 ProcessGroupNCCL.cpp:607] [Rank 5] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=4, OpType=BROADCAST, NumelIn=112, NumelOut=112, Timeout(ms)=1800000) ran for 1800022 "
        "milliseconds before timing out.\n"))
    inv = out["seen_before"]["investigations"][0]
    assert inv["imported"] and inv["match"] in ("exact", "near")
    assert out["seen_before"]["attempts"][0]["outcome"] == "worked"


def test_an_import_reads_each_error_block_once_however_many_investigations_quote_it(cli_fast, repro, monkeypatch):
    # A document of many investigations used to be split into lines once per investigation, and each of its error
    # blocks read twice per investigation (in the document and where the record keeps it).
    from dbglog.diagnose import fingerprint as F

    block = "RuntimeError: CUDA error: an illegal memory access was encountered"
    doc = "# DEBUGLOG.md\n\n" + "".join(
        f"## Crash {k} in the decoder\n\n**Status:** open\n\n**Symptom:** it died with:\n\n```\n{block}\n```\n\n"
        f"#### Attempt 1: eager mode\n\n**Did:** `--enforce-eager`\n\n**Saw:** {block} again\n\n" for k in range(3))
    (repro / "three.md").write_text(doc)
    read = []
    real = F.fingerprint_text
    monkeypatch.setattr(F, "fingerprint_text", lambda t, *a, **k: read.append(t) or real(t, *a, **k))
    out = json.loads(cli_fast(repro, "import", "three.md", "--json", check=0).stdout)
    assert len(out["investigations"]) == 3
    assert sum(t.strip() == block for t in read) == 1
    seen = {f["line"]: f for f in json.loads(cli_fast(repro, "failures", "--json", check=0).stdout)}
    assert seen[block]["count"] == 6 and len(seen[block]["investigations"]) == 3  # (each place is still counted)


def test_a_message_that_names_no_site_from_the_same_command_names_the_investigation_as_a_guess(cli_fast, repro):
    # The issue's own scenario, printed without a traceback: the message alone names no site, so two bugs may
    # share it; a run of the very same command that saw it makes that investigation the best guess (labelled so).
    (repro / "bare.py").write_text("import sys\nprint('RuntimeError: CUDA error: an illegal memory access was "
                                   "encountered', file=sys.stderr)\nsys.exit(1)\n")
    (repro / "bare2.py").write_text((repro / "bare.py").read_text())
    first = json.loads(cli_fast(repro, "new", "IMA in decode", "--no-env", "--json", check=0).stdout)["id"]
    _run(cli_fast, repro, "--attempt", "Baseline", "--", sys.executable, "bare.py")
    cli_fast(repro, "attempt", "add", "CUDA graphs off", "--did", "--enforce-eager", "--result", "no crash",
             "--outcome", "worked", check=0)
    cli_fast(repro, "status", first, "resolved", "--root-cause", "a freed buffer read under CUDA graphs", check=0)
    cli_fast(repro, "new", "Crash again", "--no-env", check=0)
    seen = _run(cli_fast, repro, "--", sys.executable, "bare.py")["seen_before"]
    inv = seen["investigations"][0]
    assert (inv["id"], inv["match"], inv["guess"]) == (first, "similar", True) and "the same command" in inv["evidence"]
    assert seen["attempts"][0]["title"] == "CUDA graphs off" and seen["attempts"][0]["outcome"] == "worked"
    assert seen["regression"]["investigation"] == first
    assert any("(a guess: the same message from the same command)" in line for line in seen["lines"])
    other = _run(cli_fast, repro, "--", sys.executable, "bare2.py")["seen_before"]  # another command: a mention
    assert other["investigations"] == [] and other["regression"] is None
    assert other["mentions"][0]["investigation"] == first  # (a mention still says where it was seen)
    assert any(ln.startswith("  record: ") and f" in {first} [similar" in ln for ln in other["lines"])


def test_a_toggle_bisection_knows_its_command_so_a_bare_message_names_the_same_commands_investigation(cli_fast, repro):
    # The live block read the command from the session's top level, where no bisection keeps it: a bare message
    # was only ever a mention there, and a regression never offered its bisect line.
    (repro / "bare.py").write_text("import os, sys\nif os.environ.get('B') == '1':\n    print('RuntimeError: CUDA "
                                   "error: an illegal memory access was encountered', file=sys.stderr)\n    "
                                   "sys.exit(1)\n")
    first = json.loads(cli_fast(repro, "new", "IMA with B", "--no-env", "--json", check=0).stdout)["id"]
    _run(cli_fast, repro, "--env", "A=1", "--env", "B=1", "--attempt", "Baseline", "--", sys.executable, "bare.py")
    cli_fast(repro, "new", "Crash with the new flags", "--no-env", check=0)
    p = cli_fast(repro, "bisect", "toggles", "--env", "A=1", "--env", "B=1", "--", sys.executable, "bare.py")
    assert p.returncode == 0, p.stderr
    progress = p.stderr.splitlines()
    bad = next(i for i, ln in enumerate(progress) if ": bad" in ln)
    assert progress[bad + 1].startswith("    seen before (fp-")
    assert progress[bad + 2].startswith(f"      {first} ") and "the same command" in progress[bad + 2]
    p = cli_fast(repro, "bisect", "toggles", "--env", "A=1", "--env", "B=1", "--json", "--", sys.executable, "bare.py")
    assert [i["id"] for i in json.loads(p.stdout)["seen_before"]["investigations"]] == [first]  # (the report's too)


def test_a_failure_seen_only_in_this_investigation_is_said_to_be_in_no_other(cli_fast, repro):
    cli_fast(repro, "new", "Only here", "--no-env", check=0)
    _run(cli_fast, repro, "--", sys.executable, "crash.py")
    again = _run(cli_fast, repro, "--", sys.executable, "crash.py")["seen_before"]
    assert again["lines"] == [f"seen before: no ({again['fingerprint']['key']}; 2 run(s) here, none in another "
                              "investigation)"]  # (it read "none recorded in an investigation": they were, here)


def test_a_plain_run_belongs_to_the_open_investigation_so_a_later_one_is_told_what_fixed_it(cli_fast, repro):
    # The scenario as a user types it: no --attempt on the runs.
    first = json.loads(cli_fast(repro, "new", "IMA in fused MoE kernel", "--no-env", "--json", check=0).stdout)["id"]
    run = _run(cli_fast, repro, "--", sys.executable, "crash.py")
    assert run["investigation"] == first and run["seen_before"]["investigations"] == []
    cli_fast(repro, "attempt", "add", "Eager mode", "--did", "--enforce-eager", "--result", "no crash in 50 runs",
             "--outcome", "worked", check=0)
    cli_fast(repro, "status", first, "resolved", "--root-cause", "the MoE kernel read past the expert buffer", check=0)
    cli_fast(repro, "new", "Serving crash on the new cluster", "--no-env", check=0)
    seen = _run(cli_fast, repro, "--", sys.executable, "crash.py")["seen_before"]
    assert [i["id"] for i in seen["investigations"]] == [first]
    assert seen["attempts"][0]["title"] == "Eager mode" and seen["regression"]["investigation"] == first


def test_a_plain_run_after_the_investigation_was_resolved_is_a_regression_not_its_run(cli_fast, repro):
    first = json.loads(cli_fast(repro, "new", "IMA in fused MoE kernel", "--no-env", "--json", check=0).stdout)["id"]
    _run(cli_fast, repro, "--", sys.executable, "crash.py")
    cli_fast(repro, "status", first, "resolved", "--root-cause", "the MoE kernel read past the expert buffer", check=0)
    again = _run(cli_fast, repro, "--", sys.executable, "crash.py")  # (first is still current, and resolved)
    assert again["investigation"] is None and again["seen_before"]["regression"]["investigation"] == first


def test_a_plain_run_for_an_unknown_investigation_is_refused_before_it_runs(cli_fast, repro):
    p = cli_fast(repro, "run", "-i", "no-such-investigation", "--", sys.executable, "crash.py", check=2)
    assert "unknown investigation" in p.stderr and "Traceback" not in p.stderr
    runs = repro / ".dbglog" / "runs"
    assert not runs.exists() or not any(runs.iterdir())


def test_a_failure_never_seen_exactly_says_so_above_its_guesses():
    """An adversarial probe: "seen before (fp-..., 0 time(s)):" headed a list of guessed look-alikes."""
    from dbglog.kb import failures

    block = {"fingerprint": {"key": "fp-ba19d1ece9"}, "count": 0, "investigations": [], "attempts": [],
             "mentions": [{"kind": "record", "ref": "20261207-000000-aaaa", "investigation": "20261207-bug-a-ywnt",
                           "match": "similar", "guess": True, "evidence": "key lines 93% alike"}]}
    lines = failures.render(block)
    assert lines[0] == "seen before: not exactly (fp-ba19d1ece9, first time); alike:", lines
    assert "a guess" in lines[1]


def test_a_user_signature_may_not_take_a_built_in_name(tmp_path):
    """An adversarial probe: `signature add gpu.illegal_address foo` was accepted, and a line 'foo' was then
    classified as an illegal memory access (and fingerprinted so)."""
    from conftest import run_cli_inproc

    assert run_cli_inproc(tmp_path, "init").returncode == 0
    r = run_cli_inproc(tmp_path, "signature", "add", "gpu.illegal_address", "foo")
    assert r.returncode == 2 and "built-in" in r.stderr and r.stderr.count("\n") == 1
    assert not (tmp_path / ".dbglog" / "config.toml").exists() or "foo" not in (
        tmp_path / ".dbglog" / "config.toml").read_text()
    assert run_cli_inproc(tmp_path, "signature", "add", "local.illegal_address", "foo").returncode == 0


def test_doctor_names_a_config_every_run_would_refuse(tmp_path):
    """An adversarial probe: with a config.toml that does not parse (or holds an invalid user signature) every run
    refused to start, and doctor said healthy."""
    import json

    from conftest import run_cli_inproc

    assert run_cli_inproc(tmp_path, "init").returncode == 0
    cfg = tmp_path / ".dbglog" / "config.toml"
    for text in ("x = [\n", '[[signature]]\nname = "mine"\npattern = "(a"\nrank = 10\n'):
        cfg.write_text(text)
        r = run_cli_inproc(tmp_path, "doctor", "--json")
        assert r.returncode == 1 and [p["kind"] for p in json.loads(r.stdout)["problems"]] == ["bad-config"], r.stdout
    cfg.unlink()
    assert run_cli_inproc(tmp_path, "doctor").returncode == 0
