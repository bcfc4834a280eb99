"""Output an agent can act on (issue 16): the shipped agent guide, what recording commands say they
recorded and what to run next, and `tried` on paraphrases of what was tried."""

import json
import re

from conftest import InProcess  # noqa: F401  (the dbg fixture's helper)


def test_agent_guide_text_and_json(dbg):
    code, text, err = dbg("agent-guide")
    assert code == 0 and err == ""
    assert text.startswith("---\nname: dbglog\ndescription: ")  # a skill file's front matter
    for step in ("Check before you act", "Record every experiment", "Narrow down", "Close"):
        assert step in text
    code, out, _ = dbg("agent-guide", "--json")
    assert code == 0 and json.loads(out)["guide"] == text
    # every command the guide names exists (the guide cannot drift from the CLI unnoticed)
    from dbglog.cli import cli

    named = set(re.findall(r"`dbglog ([a-z-]+)", text))
    assert {"tried", "run", "attempt", "bisect", "status", "diff", "next"} <= named
    assert named <= set(cli.commands), named - set(cli.commands)


# --- the figure: a second agent asks `tried` about ideas phrased differently -------------

TRIED = ["make kernel launches synchronous",  # a HIP_LAUNCH_BLOCKING row found to be the culprit
         "find which two calls race",  # a finished toggle bisection
         "turn off peer to peer transfers",  # NCCL_P2P_DISABLE=1
         "disable cuda graphs",  # --enforce-eager
         "reserve a smaller fraction of GPU memory for vLLM"]  # --gpu-memory-utilization 0.8
UNTRIED = ["increase NCCL timeout",  # a bisection's command has --timeout: not this
           "quantize the KV cache to fp8", "upgrade the ROCm driver", "use a smaller batch size",
           "set NCCL_ALGO=Tree"]  # only an untested key-differences row: mentioned, not tried


def build_three(root):
    """Three investigations as an agent would have left them: attempts, a toggle and a git
    bisection recorded as attempts (as the bisect drivers record them), key differences, steps."""
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace

    (root / ".git").mkdir()
    recs = Records(Workspace(root / ".dbglog"), create=True)
    race = recs.new("dq gradients differ run to run in fused attention backward", tags=["race", "rocm"],
                    symptom="On MI300X dq differs between two identical runs by up to 1e-2 in 1 of 5 runs; "
                            "with HIP_LAUNCH_BLOCKING=1 every run matches.")
    recs.add_attempt(race.id, title="Baseline repro", did="python test_bwd.py --iters 200",
                     result="dq mismatch in 37 of 200 iterations", outcome="failed")
    recs.add_attempt(race.id, title="Barrier after the LDS store",
                     hypothesis="The dq tile is read before every wave finished writing it",
                     did="added __syncthreads() after the LDS store in bwd_kernel.hip",
                     result="still 35 of 200 iterations mismatch", conclusion="Not an intra-block race",
                     outcome="failed")
    recs.diff_add(race.id, "HIP_LAUNCH_BLOCKING", "1", "unset", status="culprit", apply="env:HIP_LAUNCH_BLOCKING")
    recs.add_attempt(race.id, title="Toggle bisection: dq_accumulate + dk_prefetch",
                     hypothesis="One of 5 suspect toggles, or a combination of them, causes the mismatch.",
                     did="dbglog bisect toggles --coop dq_accumulate --coop dk_prefetch --coop dv_store "
                         "--coop softmax_lse --coop dropout_mask --repeat 5 -- python test_bwd.py --iters 50",
                     result="complete after 14 trials: `dq_accumulate` and `dk_prefetch` fail only together: "
                            "an interaction between them.",
                     conclusion="`dq_accumulate` and `dk_prefetch` fail only together: an interaction between them.",
                     outcome="worked")
    recs.next_add(race.id, "Put dq accumulation on the same stream as the dk prefetch")
    hang = recs.new("NCCL all_reduce hangs at step 3 on 8 GPUs", tags=["nccl", "hang"],
                    symptom="rank 3 stalls in all_reduce; the watchdog fires after 600 s")
    recs.add_attempt(hang.id, title="Disable P2P", did="NCCL_P2P_DISABLE=1 torchrun --nproc_per_node 8 train.py",
                     result="still hangs at step 3", conclusion="Not the P2P path", outcome="failed")
    recs.add_attempt(hang.id, title="Bisect: first bad commit 3f2a1b9 Switch to bucketed all_reduce",
                     hypothesis="The hang was introduced between v1.2..HEAD.",
                     did="dbglog bisect git --good v1.2 --bad HEAD --timeout 900 -- torchrun --nproc_per_node 8 "
                         "train.py --steps 5",
                     result="6 steps: first bad commit 3f2a1b9 (Switch to bucketed all_reduce).",
                     conclusion="3f2a1b9 introduced the failure; its parent is good.", outcome="worked")
    recs.diff_add(hang.id, "NCCL_ALGO", "Ring", "Tree", status="untested", apply="env:NCCL_ALGO")
    recs.next_add(hang.id, "Capture py-spy dumps of every rank during the hang")
    oom = recs.new("vLLM OOM during CUDA graph capture", tags=["vllm", "oom"],
                   symptom="torch.OutOfMemoryError while capturing CUDA graphs with max_num_seqs 256")
    recs.add_attempt(oom.id, title="Lower gpu memory utilization",
                     did="vllm serve meta-llama/Llama-3-70B --gpu-memory-utilization 0.8",
                     result="still OOM during capture", outcome="failed")
    recs.add_attempt(oom.id, title="Enforce eager", did="vllm serve meta-llama/Llama-3-70B --enforce-eager",
                     result="serves fine but 30% slower", conclusion="Graph capture is what runs out of memory",
                     outcome="partial")
    recs.close()
    return race.id, hang.id, oom.id


def test_tried_on_paraphrases_cli(dbg, workdir):
    race, hang, oom = build_three(workdir)
    found, alarms, answers = 0, 0, {}
    for idea in TRIED + UNTRIED:
        code, out, err = dbg("tried", idea, "--json")
        assert code in (0, 1), err
        answers[idea] = data = json.loads(out)
        assert data["tried"] == (code == 0)
        if idea in TRIED:
            found += data["tried"]
        else:
            alarms += data["tried"]
    assert found >= 4 and alarms <= 1, {k: (v["tried"], [h["title"] for h in v["close"]]) for k, v in answers.items()}
    # what was found is the record that holds it, with what it is
    sync = answers["make kernel launches synchronous"]["close"][0]
    assert sync["kind"] == "difference" and sync["factor"] == "HIP_LAUNCH_BLOCKING" and \
        sync["difference_status"] == "culprit"
    bis = answers["find which two calls race"]["close"][0]
    assert bis["kind"] == "attempt" and bis["outcome"] == "diagnostic" and bis["diagnostic"] == "bisection"
    assert bis["stored_outcome"] == "worked" and bis["investigation"] == race
    # an untested row is mentioned, not tried; a query word no record has is said so
    algo = answers["set NCCL_ALGO=Tree"]
    assert [h["kind"] for h in algo["mentioned"]] == ["difference"]
    timeout = answers["increase NCCL timeout"]
    assert not timeout["close"] and all(h["why"]["similarity"] < 80 for h in timeout["others"])
    # the human output names what it found
    code, out, _ = dbg("tried", "make kernel launches synchronous")
    assert code == 0 and "[CULPRIT] Key difference 1: HIP_LAUNCH_BLOCKING (working: 1, broken: unset)" in out
    code, out, _ = dbg("tried", "find which two calls race")
    assert code == 0 and "[BISECTION]" in out and "-- Attempt 3: Toggle bisection" in out and "not a fix" in out
    code, out, err = dbg("tried", "upgrade the ROCm driver")
    assert code == 1 and "'driver' is in no record" in err


# Written after the fixes above, to check them on ideas they were not tuned on (7 + 7; at the time:
# 5/7 found — "serialize kernel launches" and "disable NVLink peer access" are missed — 0/7 flagged).
HELD_OUT_TRIED = ["serialize kernel launches", "add a barrier after writing to LDS", "run vllm in eager mode",
                  "bisect the regression between v1.2 and HEAD", "lower the vLLM gpu memory utilization",
                  "disable NVLink peer access for NCCL", "make the launches blocking"]
HELD_OUT_UNTRIED = ["switch NCCL to the Tree algorithm", "set NCCL_IB_DISABLE=1", "raise the watchdog timeout",
                    "turn on expandable segments", "reduce max_num_seqs to 128", "make the kernel deterministic",
                    "profile the kernel with rocprof"]


def test_tried_held_out_paraphrases(dbg, workdir):
    build_three(workdir)
    said = {i: dbg("tried", i, "--json")[0] == 0 for i in HELD_OUT_TRIED + HELD_OUT_UNTRIED}
    assert sum(said[i] for i in HELD_OUT_TRIED) >= 5 and sum(said[i] for i in HELD_OUT_UNTRIED) <= 1, said


def test_tried_on_paraphrases_mcp(workdir):
    import pytest

    pytest.importorskip("mcp")
    from test_mcp_server import serve

    build_three(workdir)

    async def scenario(call, session):
        out = {idea: await call("tried", idea=idea) for idea in TRIED + UNTRIED}
        # the circuit breaker and the next commands come back through the tools too
        out["adds"] = [await call("add_attempt", title=f"patch {k}", did=f"python serve.py --patch {k}",
                                  result=f"still OOM during capture at step {k}", outcome="failed")
                       for k in range(2)]
        out["row"] = await call("add_difference", factor="max_num_seqs", working="64", broken="256",
                                apply="arg:--max-num-seqs 256")
        return out

    out = serve(workdir, scenario)
    found = sum(out[i]["tried"] for i in TRIED)
    alarms = sum(out[i]["tried"] for i in UNTRIED)
    assert found >= 4 and alarms <= 1, {k: v.get("tried", v) for k, v in out.items() if k in TRIED + UNTRIED}
    first, second = out["adds"]
    assert first["circuit_breaker"] is None and first["next"]
    b = second["circuit_breaker"]  # the vLLM investigation's third "still OOM during capture"
    assert b and b["count"] == 3 and "stop patching" in b["message"] and b["bisect"].startswith("dbglog bisect")
    assert out["row"]["toggle"]["on"] == "--max-num-seqs 256" and out["row"]["next"]


# --- recording commands say what they recorded and what comes next --------------------------------


def test_recording_says_what_and_next(dbg, workdir):
    (workdir / ".git").mkdir()
    dbg("new", "hang", "--no-env")
    for what in (("attempt", "list"), ("next", "list"), ("diff", "list")):  # an empty list says so
        code, out, _ = dbg(*what)
        assert code == 0 and out.startswith("No "), (what, out)
    code, out, _ = dbg("attempt", "add", "x", "--did", "y", "--result", "works now", "--json")
    data = json.loads(out)
    assert data["number"] == 1 and data["investigation"] and data["next"][0].startswith("dbglog status ")
    code, out, _ = dbg("attempt", "add", "x2", "--did", "y", "--result", "still hangs")
    assert "Attempt 2 recorded in" in out and "next: dbglog tried" in out
    inv = data["investigation"]
    code, out, _ = dbg("next", "add", "Try NCCL_ALGO=Tree")
    assert out.startswith(f"Next step 1 added to {inv}: Try NCCL_ALGO=Tree") and "next done 1 --attempt N" in out
    code, out, _ = dbg("next", "done", "1", "--attempt", "2")
    assert out.strip() == f"Next step 1 of {inv}: Try NCCL_ALGO=Tree: done (attempt 2)"
    # a key-differences row says which side's value each state of its toggle applies, and what is next
    code, out, _ = dbg("diff", "add", "HIP_LAUNCH_BLOCKING", "1", "unset", "--apply", "env:HIP_LAUNCH_BLOCKING",
                       "--json")
    d = json.loads(out)
    assert d["toggle"]["off"] == "HIP_LAUNCH_BLOCKING=1" and d["toggle"]["on"] == "HIP_LAUNCH_BLOCKING unset"
    assert d["next"][0].startswith(f"dbglog bisect toggles --from-diffs {inv} -- CMD")
    code, out, _ = dbg("diff", "set", "HIP", "--status", "culprit")
    assert "as a toggle: off = HIP_LAUNCH_BLOCKING=1 (working case), on = HIP_LAUNCH_BLOCKING unset" in out
    code, out, _ = dbg("status", "resolved", "--root-cause", "a race between two streams")
    assert "resolved (root cause: a race between two streams)" in out and "next: commit logs/" in out
    # an empty list says it is empty
    code, out, _ = dbg("list", "--status", "wontfix")
    assert code == 0 and out.strip()
