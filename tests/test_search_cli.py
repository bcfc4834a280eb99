"""CLI: search / tried / attempt add warning / attempt delete, run as subprocesses."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

WT = str(Path(__file__).resolve().parents[1])


def run(cwd, *args):
    env = dict(os.environ, PYTHONPATH=WT, DBGLOG_NO_EDITOR="1")
    env.pop("DBGLOG_DIR", None)
    return subprocess.run([sys.executable, "-m", "dbglog", *args], cwd=cwd, env=env, capture_output=True, text=True)


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    assert run(d, "new", "NCCL watchdog timeout in allreduce", "--no-env", "--tag", "nccl").returncode == 0
    p = run(d, "attempt", "add", "Raise the NCCL timeout", "--did", "init_process_group(timeout=timedelta(hours=2))",
            "-H", "the allreduce is slow", "-r", "still hangs", "-c", "one rank never joins", "-o", "failed")
    assert p.returncode == 0, p.stderr
    p = run(d, "attempt", "add", "Flight recorder", "--did", "TORCH_NCCL_DUMP_ON_TIMEOUT=1", "-o", "worked",
            "-c", "empty batch skips a collective")
    assert p.returncode == 0
    return d


def test_search_json(ws):
    p = run(ws, "search", "nccl timeout", "--json")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["hits"][0]["kind"] in ("attempt", "investigation")
    att = [h for h in data["hits"] if h["kind"] == "attempt"]
    first = next(h for h in att if h["attempt"] == 1)
    assert first["outcome"] == "failed" and first["why"]["fields"] and "**" in first["snippet"]


def test_search_human_and_flags(ws):
    p = run(ws, "search", "--", "--dump_on")  # a flag-like substring after --
    assert p.returncode == 0, p.stderr
    p = run(ws, "search", "DUMP_ON_TIM", "--kind", "attempt", "--outcome", "worked")
    assert "Attempt 2: Flight recorder" in p.stdout and "worked" in p.stdout and "why:" in p.stdout
    p = run(ws, "search", "timout", "--tag", "nccl")
    assert "Attempt 1" in p.stdout and "typo" in p.stderr
    p = run(ws, "search", "timeout", "--status", "bogus")
    assert p.returncode == 2 and p.stderr.count("\n") == 1


def test_tried_exit_status(ws):
    p = run(ws, "tried", "increase", "the", "nccl", "timeout")
    assert p.returncode == 0, p.stderr
    assert "FAILED" in p.stdout and "one rank never joins" in p.stdout
    p = run(ws, "tried", "rewrite the tokenizer in rust")
    assert p.returncode == 1 and "Not tried" in p.stdout
    p = run(ws, "tried", "--json", "nccl timeout")
    data = json.loads(p.stdout)
    assert p.returncode == 0 and data["tried"]
    assert "one rank never joins" in [h["conclusion"] for h in data["close"]]
    p = run(ws, "tried", "***")
    assert p.returncode == 2


def test_attempt_add_warns_and_delete(ws):
    p = run(ws, "attempt", "add", "Raise NCCL timeout again", "--did", "init_process_group(timeout=timedelta(hours=3))",
            "-H", "the allreduce is slow", "--json")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["similar"] and data["similar"][0]["attempt"] == 1 and data["similar"][0]["outcome"] == "failed"
    p = run(ws, "attempt", "add", "Again", "--did", "init_process_group(timeout=timedelta(hours=4))")
    assert "warning: this looks like attempt 1" in p.stderr
    p = run(ws, "attempt", "add", "Something new", "--did", "pad empty batches on every rank", "--json")
    assert json.loads(p.stdout)["similar"] == []
    n = json.loads(p.stdout)["number"]
    assert run(ws, "attempt", "delete", str(n)).returncode == 0
    p = run(ws, "search", "pad empty batches", "--json", "--kind", "attempt")
    assert all(h["attempt"] != n for h in json.loads(p.stdout)["hits"])


def test_an_idea_that_is_a_flag_is_the_query_and_a_misspelt_option_is_refused(ws):
    p = run(ws, "attempt", "add", "Eager mode", "--did", "vllm serve --enforce-eager", "-r", "still crashes",
            "-o", "failed")
    assert p.returncode == 0, p.stderr
    for args in (["tried", "--enforce-eager"], ["tried", "--enforce-eager", "--json"],
                 ["search", "--enforce-eager", "--json"], ["tried", "--json", "--", "--enforce-eager"]):
        p = run(ws, *args)
        assert p.returncode == 0, (args, p.stdout, p.stderr)
        if "--json" in args:
            assert json.loads(p.stdout)["query"]["text"] == "--enforce-eager"
    p = run(ws, "tried", "--jsno", "--enforce-eager")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "did you mean --json?" in p.stderr
    assert "dbglog tried -- --jsno" in p.stderr
    p = run(ws, "search", "--limt", "3", "nccl")
    assert p.returncode == 2 and "did you mean --limit?" in p.stderr


def test_tried_prints_a_prior_attempts_long_result_on_one_line(tmp_path):
    # an imported attempt's field can hold a page of markdown: the list stays one entry of a few lines
    assert run(tmp_path, "new", "Loader OOM on shard 2", "--no-env").returncode == 0
    result = "still OOM at shard 2\n\n**Fix applied:**\n- halved the prefetch\n\n" + "more detail " * 40
    p = run(tmp_path, "attempt", "add", "Halve the prefetch factor", "--did", "prefetch_factor=1",
            "-r", result, "-o", "failed")
    assert p.returncode == 0, p.stderr
    out = run(tmp_path, "tried", "halve the prefetch factor").stdout
    line = next(x for x in out.splitlines() if x.startswith("   result: "))
    assert "still OOM at shard 2 **Fix applied:** - halved the prefetch" in line and line.endswith("…")
    assert len(line) < 220 and "\n- halved" not in out


def test_show_sets_a_fields_later_lines_under_its_first(tmp_path):
    assert run(tmp_path, "new", "Loader OOM on shard 3", "--no-env").returncode == 0
    p = run(tmp_path, "attempt", "add", "Smaller batches", "--did", "- batch 8\n- batch 4", "-o", "failed")
    assert p.returncode == 0, p.stderr
    out = run(tmp_path, "show").stdout.splitlines()
    k = out.index("  Did: - batch 8")
    assert out[k + 1] == "    - batch 4"
