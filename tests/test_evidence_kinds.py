"""Evidence kinds added in round D2 and the forms the older parsers missed, read from dumps in the
tools' own formats (tests/fixtures/dumps/, values made up): torch.cuda.memory_summary() tables,
TORCH_DISTRIBUTED_DEBUG=DETAIL collective mismatches, the ProcessGroupNCCL watchdog's work
counters, NCCL_DEBUG=INFO rings and transports, rocm-smi, fr_trace "errors" blocks, racecheck's
both sides, synccheck's device frames, initcheck on a host API call, cuda-gdb attached to a hung
NCCL kernel, amdgpu MES hangs and the ROCm 2.x debug agent's fault line."""
import json
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbglog.run import advice as A
from dbglog.diagnose import evidence as E

DUMPS = Path(__file__).parent / "fixtures" / "dumps"


def one(name: str) -> dict:
    ev = E.extract((DUMPS / name).read_text(), run_tools=False)
    assert len(ev) == 1, [e["kind"] for e in ev]
    return json.loads(json.dumps(ev[0]))  # JSON-ready, as runs store it


def test_memory_summary_latest_table_its_counters_and_fragmentation():
    e = one("memory_summary_two_devices.txt")
    assert e["kind"] == "memory-summary" and e["device"] == 1 and e["devices"] == [0, 1] and e["tables"] == 2
    assert (e["ooms"], e["retries"]) == (2, 7)
    assert (e["allocated"], e["allocated_peak"], e["reserved"]) == ("20.25 GiB", "38.50 GiB", "37.75 GiB")
    assert e["metrics"]["Allocated memory"]["from_large_pool"]["cur"] == "20.00 GiB"
    assert e["metrics"]["Allocations"]["peak"] == "6034" and e["non_releasable"] == "11.40 GiB"
    text = " ".join(e["findings"])
    assert "2 out-of-memory error(s)" in text and "retried cudaMalloc 7 time(s)" in text
    assert "17.50 GiB held by the caching allocator" in text
    assert E._ms_bytes("2048 KB") == 2 << 20 and E._ms_bytes("1.5 GiB") == 3 << 29 and E._ms_bytes("n/a") is None


def test_collective_mismatch_per_rank_fingerprints_and_what_differs():
    e = one("collective_mismatch_dtype.txt")
    assert e["kind"] == "collective-mismatch"
    assert [(r["rank"], r["seq"], r["op"], r["shape"], r["dtype"], r["device"]) for r in e["ranks"]] == [
        (3, 57, "_ALLGATHER_BASE", "4096, 128", "Half", "cuda"), (0, 57, "_ALLGATHER_BASE", "4096, 128", "Float", "cuda")]
    assert e["differ"] == [{"aspect": "Tensor dtypes", "values": ["Half", "Float"]}]
    assert "they differ in tensor dtypes (Half vs Float)" in e["summary"]


def test_collective_mismatch_wrapped_text_glued_fields_and_the_old_one_op_form():
    e = one("collective_mismatch_wrapped_old.txt")
    r2, r5 = e["ranks"]
    assert (r2["rank"], r2["seq"], r2["op"], r2["dtype"], r2["device"]) == (2, 9, "BROADCAST", "Long", "cpu")
    assert r5 == {"rank": 5, "op": "ALLREDUCE"}
    # no "differ in the following aspects" line: the difference is worked out from the fingerprints
    assert e["differ"] == [{"aspect": "Op type", "values": ["BROADCAST", "ALLREDUCE"]}]


def test_watchdog_counters_name_the_rank_that_fell_behind():
    e = one("watchdog_two_ranks.txt")
    r0, r1 = e["ranks"]
    assert (r0["rank"], r0["failed_seq"], r0["last_enqueued"], r0["last_completed"]) == (0, 4812, 4813, 4811)
    assert (r0["op"], r0["numel"], r0["timeout_ms"], r0["ran_ms"], r0["pg"]) == ("ALLREDUCE", 33554432, 600000, 600042,
                                                                                  "0 (default_pg)")
    assert (r1["rank"], r1["last_completed"]) == (1, 4808)
    assert "rank(s) 1 completed work only up to 4808 while others reached 4811" in e["findings"][1]
    assert "(guess: stuck before the next collective" in e["findings"][1]  # the cause is labelled a guess


def test_watchdog_wrapped_lines_subgroup_rank_and_nothing_completed():
    text = ("node7 [stderr] [rank12]:[E218 04:54:23.31 ProcessGroupNCCL.cpp:1844] [PG ID 3 PG GUID 21 Rank 1] "
            "Timeout at NCCL work: 40, last enqueued \nNCCL work: 41, last completed NCCL work: -1.\n"
            "[rank12]:[E218 04:54:23.32 ProcessGroupNCCL.cpp:1595] [PG ID 3 PG GUID 21 Rank 1] Watchdog caught "
            "collective operation timeout: WorkNCCL(SeqNum=40, OpType=COALESCED, NumelIn=18446744073709551615, "
            "NumelOut=18446744073709551615, Timeout(ms)=60000) ran for 60011 milliseconds before timing out.\n")
    e = E.parse_nccl_watchdog(text)
    (r,) = e["ranks"]
    assert (r["rank"], r["pg"], r["pg_rank"], r["failed_seq"], r["last_enqueued"], r["last_completed"]) == (
        12, "3", 1, 40, 41, -1)
    assert r["op"] == "COALESCED" and "numel" not in r  # 2**64-1 means "unknown", not a count
    assert "no work of the process group ever completed" in e["findings"][1]
    off = E.parse_nccl_watchdog(text + "[rank12]:[E218 ProcessGroupNCCL.cpp:670] Stack trace of the failed collective "
                                "not found, potentially because FlightRecorder is disabled.\n")
    assert "the flight recorder was off" in off["findings"][-1]


def test_memory_summary_rows_pasted_without_the_header():
    rows = ("| Allocated memory      |    2100 MB |    2900 MB |    9000 MB |    6900 MB |\n"
            "| GPU reserved memory   |    9800 MB |    9800 MB |    9800 MB |       0 B  |\n"
            "| Non-releasable memory |    3100 MB |    3300 MB |    7000 MB |    3900 MB |\n")
    e = E.parse_memory_summary("step 9\n" + rows)
    assert e["device"] is None and e["devices"] == [] and (e["allocated"], e["reserved"]) == ("2100 MB", "9800 MB")
    assert e["summary"].startswith("memory_summary: allocated 2100 MB")
    assert any("3100 MB non-releasable" in f for f in e["findings"])
    assert E.parse_memory_summary("| Allocations | 3 | 4 | 5 | 6 |\n") is None


def test_nccl_info_rings_transports_and_the_socket_and_shm_findings():
    e = one("nccl_info_two_nodes.txt")
    assert (e["version"], e["ranks"], e["nodes"], e["channels"]) == ("2.21.5+cuda12.4", 4, 2, 2)
    assert e["rings"] == {"00": "0 1 2 3", "01": "0 1 2 3"}
    assert e["transports"] == {"NET/Socket": 2, "P2P/CUMEM": 1, "SHM": 1}
    assert {"from": 2, "to": 3, "via": "SHM/direct/direct"} in e["edges"]
    f = " ".join(e["findings"])
    assert "TCP sockets (NET/Socket)" in f and "NET/IB found no device" in f and "2->3" in f


def test_nccl_info_with_only_the_comm_line_still_gives_ranks_and_nodes():
    e = E.parse_nccl_topology("n2:41:52 [1] NCCL INFO comm 0x5b0 rank 3 nRanks 16 nNodes 2 localRanks 8 localRank 3 MNNVL 0\n"
                              "n2:41:52 [1] NCCL INFO Ring 02 : 2 -> 3 -> 4\n")
    assert (e["ranks"], e["nodes"], e["rings"], e["transports"]) == (16, 2, {}, {})
    assert e["summary"] == "NCCL topology: 16 rank(s) on 2 node(s)"
    assert E.parse_nccl_topology("n2:41:52 [1] NCCL INFO NET/Plugin: no plugin found\n") is None


def test_nvidia_smi_page_retirement_and_remapped_row_counts():
    e = one("nvidia_smi_page_retirement.txt")
    g7, g15 = e["gpus"]
    assert g7["retired_pages"] == {"single_bit": 3, "double_bit": 2} and g15["retired_pages"]["double_bit"] == 0
    assert g15["remapped_rows"] == {"correctable": 1, "uncorrectable": 0} and g15["problems"] == []
    assert "2 page(s) retired after double-bit ECC errors" in g7["problems"]
    assert e["summary"].startswith("nvidia-smi -q: 1 of 2 GPU(s) unhealthy — GPU 00000000:07:00.0")


def test_rocm_smi_per_gpu_values_and_what_is_wrong():
    e = one("rocm_smi_hot.txt")
    assert e["driver"] == "6.8.5" and [g["gpu"] for g in e["gpus"]] == [0, 1]
    assert e["gpus"][1]["Temperature (Sensor junction) (C)"] == "97.0" and e["gpus"][0]["GPU ID"] == "0x74a1"
    assert len(e["findings"]) == 3 and "GPU[1] Uncorrectable ECC errors: 3" in e["findings"][2]


def test_fr_trace_errors_block_names_the_culprit_ranks():
    e = one("fr_trace_errors.txt")
    f = e["facts"]
    assert (f["collective"], f["seq"], f["entry"], f["group"], f["state"]) == (
        "nccl:reduce_scatter", "212", "211", "1:tp_group", "scheduled")
    assert f["culprits"] == [{"rank": 3, "error_type": "SIZE_OR_SYNTAX_MISMATCH",
                              "detail": "Expected input sizes: '[[8192, 1024]]' does not match found input sizes: "
                                        "'[[8192, 512]]'"}]
    assert f["missing_ranks"] == [] and "rank(s) 3 SIZE_OR_SYNTAX_MISMATCH" in e["summary"]
    # a capture file's report is the nccl-fr preset's (it records its own verdict): not read twice
    assert E.extract("", files=[DUMPS / "fr_trace_errors.txt"], run_tools=False) == []


def test_racecheck_both_sides_hazard_counts_and_summary_line():
    e = one("racecheck_two_sides.txt")
    assert e["tool"] == "racecheck" and e["severity"] == "Error" and e["hazards"] == 128
    assert [(a["access"], a["source"], a.get("hazards")) for a in e["accesses"]] == [
        ("Write", "/src/kernels/reduce.cu:57", None), ("Read", "/src/kernels/reduce.cu:61", 96),
        ("Read", "/src/kernels/reduce.cu:62", 32)]
    assert e["accesses"][0]["pc"] == "0x3c0" and (e["errors"], e["warnings"], e["total"]) == (1, 0, 1)
    assert "race between Write at tile_reduce<…> (/src/kernels/reduce.cu:57) and Read" in e["summary"]


def test_old_racecheck_hazard_with_its_thread_accesses():
    e = one("racecheck_old_waw.txt")
    assert (e["tool"], e["hazard"], e["address"], e["block"]) == ("racecheck", "WAW", "0x180", "(3,0,0)")
    assert [(a["thread"], a["source"]) for a in e["accesses"]] == [("(65,0,0)", "/src/hist/hist.cu:33"),
                                                                  ("(2,0,0)", "/src/hist/hist.cu:33")]
    assert e["accesses"][0]["function"] == "histogram_kernel(unsigned int const *, unsigned int*, int)"


def test_synccheck_names_the_programs_device_frame_not_the_intrinsic():
    e = one("synccheck_device_frames.txt")
    assert e["tool"] == "synccheck" and e["kernel"] == "BlockScan::inclusive(float*, int)" and e["pc"] == "0x3a0"
    assert e["source"] == "/src/scan/block_scan.cuh:212" and e["thread"] == "(3,0,0)"


def test_initcheck_on_a_host_api_call():
    e = one("initcheck_host_api.txt")
    assert (e["tool"], e["api"], e["address"], e["problem"]) == ("initcheck", "cudaMemcpyAsync", "0x7f3a40600800",
                                                                 "uninitialized")
    assert e["host_frame"].startswith("Solver::download_results") and e["reports"][0]["size"] == 4096


def test_cuda_gdb_attached_to_a_hung_nccl_kernel():
    e = one("cudagdb_nccl_hang.txt")
    assert e["kind"] == "cuda-gdb" and e["kernel"] == "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"
    assert e["source"] == "/opt/nccl/src/device/prims_ll.h:114" and e["focus"]["device"] == 2
    assert e["nccl"] == {"collective": "AllReduce", "op": "Sum", "dtype": "bf16", "algorithm": "RING", "protocol": "LL"}
    assert "waitSend" in e["inlined"]["function"] and e["inlined"]["from"] == "prims_ll.h:322"
    assert "spins waiting for a peer; guess: a rank did not launch the matching collective" in e["findings"][1]
    assert E.nccl_kernel_info("ncclFunction_AllGather_RING_SIMPLE_Sum_int8_t") == {
        "collective": "AllGather", "algorithm": "RING", "protocol": "SIMPLE", "op": "Sum", "dtype": "int8_t"}
    assert E.nccl_kernel_info("ncclDevKernel_AllGather_RING_LL") == {
        "collective": "AllGather", "op": None, "dtype": None, "algorithm": "RING", "protocol": "LL"}
    assert E.nccl_kernel_info("my_kernel") is None


def test_info_cuda_kernels_names_the_nccl_collective_resident_in_a_hang():
    e = one("cudagdb_info_kernels_nccl.txt")
    assert [k["name"] for k in e["kernels"]] == ["ncclDevKernel_AllGather_RING_LL", "vectorized_elementwise_kernel"]
    assert e["kernels"][0]["nccl"]["collective"] == "AllGather" and "nccl" not in e["kernels"][1]
    assert "AllGather RING/LL" in e["findings"][1] and "guess:" in e["findings"][1]


def test_amdgpu_mes_hang_and_old_debug_agent_fault():
    k = one("dmesg_amdgpu_mes.txt")
    assert [e.get("amdgpu_mes") or "reset" for e in k["events"]] == ["MISC", "REMOVE_QUEUE", "reset"]
    assert "stopped answering" in k["summary"] and "the driver reset the GPU" in k["summary"]
    a = one("debug_agent_rocm2.txt")
    assert a["fault"] == {"node": "3", "address": "0x7f11xxxx", "reason": "page not present"} and a["waves"] == 0


def test_every_kind_is_registered_once_with_markers_may_hold_dump_sees():
    assert len(set(E.KINDS)) == len(E.KINDS)
    for kind, markers, fn in E.PARSERS:
        assert markers and callable(fn) and all(E.may_hold_dump(m) for m in markers), kind
    assert not E.may_hold_dump("epoch 3 loss 0.12\n")


def test_new_kinds_have_playbook_advice():
    rules = A.load()
    for name, rid in (("collective_mismatch_dtype.txt", "collective-mismatch-align"),
                      ("watchdog_two_ranks.txt", "nccl-watchdog-behind"),
                      ("nccl_info_two_nodes.txt", "nccl-socket-transport"),
                      ("memory_summary_two_devices.txt", "allocator-fragmentation"),
                      ("racecheck_two_sides.txt", "racecheck-barrier"),
                      ("synccheck_device_frames.txt", "synccheck-divergent-barrier"),
                      ("fr_trace_errors.txt", "fr-size-mismatch"),
                      ("cudagdb_nccl_hang.txt", "nccl-kernel-peer-wait")):
        ev = E.extract((DUMPS / name).read_text(), run_tools=False)
        ctx = A.Context(run={"outcome": "fail", "signature": None, "cmd": ["python", "train.py"], "evidence": ev})
        assert rid in [s["id"] for s in A.advise(ctx, rules)], name


# Text built from the markers and fragments of every format, to reach deep into the parsers.
_FRAGS = [m for _, ms, _ in E.PARSERS for m in ms] + [
    "CollectiveFingerPrint(", "SequenceNumber=", "OpType=", "TensorShape=[", "Collectives differ in the following "
    "aspects:", "vs ", "Rank 1 is running collective: ", "| Allocated memory |", "|", " KiB ", "GPU[0] : ", ": ",
    "Channel 00/02 :", " -> ", " via ", "[send]", "comm 0x1 rank 0 nRanks 4 nNodes 2", "h:1:2 [0]", "Culprit rank 3; ",
    "Error type: X, ", "Collective 3 at entry 2 errors\n", "error msg: ", "Race reported between Write access at ",
    "and Read access at ", " [3 hazards]", "+0x10 in a.cu:3", "Device Frame:", "Host API memory access error at host "
    "access to 0x1 of size 4 bytes", "Uninitialized access at 0x2 on access by cudaMemcpy source", "\n", "=========     ",
    "[Switching focus to CUDA kernel 0, grid 1, block (0,0,0), thread (0,0,0), device 0, sm 0, warp 0, lane 0]\n",
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL () at p.h:1 in w inlined from p.h:2", "amdgpu 0000:01:00.0: amdgpu: ",
    "Address: 0x1 (x;)", "last enqueued work: 3, last completed work: 2", "(", ")", "[", "]", "0x1f", "12"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(_FRAGS), st.text(max_size=30)), max_size=40))
def test_parsers_never_raise_on_arbitrary_text_and_answer_in_bounded_time(parts):
    text = "".join(parts)
    for kind, _, fn in E.PARSERS:
        t0 = time.process_time()  # CPU time: the other processes of a shared machine add none
        e = fn(text)
        assert time.process_time() - t0 < 5, kind
        if e is not None:
            assert e["kind"] == kind and isinstance(e.get("summary"), str)
            json.dumps(e)


def test_a_big_log_with_markers_stays_fast():
    line = "host:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read\n" \
           "|  Allocated memory | 1 B | 1 B | 1 B | 0 B |\n========= \n"
    text = line * 20000 + "memory summary, device ID 0\n" + _CM_LONG
    t0 = time.process_time()  # CPU time (no tools run): the other processes of a shared machine add none
    E.extract(text, run_tools=False)
    assert time.process_time() - t0 < 20


_CM_LONG = "Detected mismatch between collectives on ranks. Rank 0 is running collective: " + "(" * 5000


def test_gdb_symbolless_runs_fold_and_cuda_driver_threads_are_helpers():
    e = one("gdb_nccl_abort_symbolless.txt")
    t2 = next(t for t in e["threads"] if t["thread"] == "2")
    # ten "??" frames in libcuda are one frame counted, so the 12 kept frames reach ncclCommAbort
    assert t2["frames"][0] == {"function": "??", "file": "libcuda.so.1", "repeat": 10}
    assert [f["function"] for f in t2["frames"]][-1] == "ncclCommAbort"
    assert t2["stuck_in"].startswith("cudaStreamSynchronize") and t2["wait"] == "collective"
    t3 = next(t for t in e["threads"] if t["thread"] == "3")
    assert t3["name"] == "cuda00001400006" and t3["wait"] == "background"
    assert e["main"]["thread"] == "1" and e["main"]["stuck_in"].startswith("pthread_join")


def test_a_run_whose_output_holds_a_collective_mismatch_records_it_and_its_advice(dbg, workdir):
    """End to end: `dbglog run --attempt` on a process printing the mismatch report (emit.py)."""
    from conftest import REPROS

    dump = workdir / "mismatch.txt"
    dump.write_text((DUMPS / "collective_mismatch_dtype.txt").read_text())
    dbg("new", "all_gather mismatch on 4 ranks", "--no-env")
    code, out, err = dbg("run", "--json", "--quiet", "--attempt", "baseline with DETAIL", "--", sys.executable,
                         str(REPROS / "emit.py"), str(dump), "1")
    assert code == 1, err
    d = json.loads(out)
    ev = next(e for e in d["evidence"] if e["kind"] == "collective-mismatch")
    assert [r["dtype"] for r in ev["ranks"]] == ["Half", "Float"] and ev["origin"] == "output"
    assert "evidence: collective mismatch: rank 3 runs _ALLGATHER_BASE" in d["attempt"]["result"]
    assert any(a["text"].startswith("Make every rank issue the same collectives") for a in d["advice"])
    code, out, _ = dbg("signature", "test", str(dump))
    assert code == 0 and "collective mismatch: rank 3" in out
