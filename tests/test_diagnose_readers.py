"""The dump readers of dbglog.diagnose say what they found and what they could not read (issue 28):
a hang core dump answers with its kernel and line, kernel names keep their case, a table in a layout
not read is reported as such, a kernel-API call line in another accepted form is read (and said to
be), per-process evidence carries its pid, the debug-agent path carries the race-victim caution."""

import json
import os
import shutil
import sys
from pathlib import Path

from dbglog.diagnose import evidence as E
from dbglog.diagnose import signatures as S

HERE = Path(__file__).parent
FAKE = HERE / "fixtures" / "fake_tools"
CORPUS = HERE / "corpus" / "logs"
MANGLED = "_ZN2at6native24index_elementwise_kernelILi128ELi4EEEvlT1_"


def _tools(tmp_path, *names):
    d = tmp_path / "bin"
    d.mkdir(exist_ok=True)
    for n in names:
        shutil.copy(FAKE / n, d / n)
    return str(d) + os.pathsep + os.path.dirname(sys.executable) + os.pathsep + "/usr/bin:/bin"


def test_a_hang_core_dump_answers_with_the_kernel_and_its_line(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    core = tmp_path / "cuda_coredump_host.42.1764250282"
    core.write_text(json.dumps({"kernel": MANGLED, "source": "/src/hang.cu:12"}))  # user-triggered: no exception
    e = E.cuda_core_chain(core, path=_tools(tmp_path, "cuda-gdb"), timeout=30)
    assert e["status"] == "stopped" and "no faulting PC" not in e["summary"]
    assert "is stuck at /src/hang.cu:12" in e["summary"]
    assert e["kernel"] == MANGLED or e["kernel"].startswith("void at::native::index_elementwise_kernel")


def test_core_dump_progress_lines_keep_the_kernel_name_exactly():
    text = ("[06:43:15.209195] coredump: Detected an exception of type CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS (14)\n"
            "[06:43:15.209210] coredump:   - PC 0x7462C3BAC310\n"
            f"[06:43:15.209220] coredump: #0 0x7462c3bac310 {MANGLED}\n")
    e = E.parse_cuda_coredump_progress(text)
    assert e["frames"][0]["function"] == MANGLED  # exact case: c++filt and cuobjdump -elf can use it
    assert MANGLED in e["kernel"] or "index_elementwise_kernel" in e["kernel"]


_QUEUES_NO_SIZE = """### info queues
  Id   Target Id                Type         Read   Write  Address
  1    AMDGPU Queue 1:1 (QID 0) HSA          118    118    0x00007ffff626e000
* 2    AMDGPU Queue 1:2 (QID 1) HSA          40     42     0x00007fffe5800000
"""


def test_an_info_queues_table_without_a_size_column_is_read_and_said():
    e = E.parse_rocgdb(_QUEUES_NO_SIZE)
    assert [q["pending"] for q in e["queues"]] == [0, 2] and e["queues"][1]["size"] is None
    assert "info queues: table without a Size column, read without sizes" in e["findings"]
    assert any("2 packet(s) pending" in f for f in e["findings"])


def test_a_row_in_an_unknown_layout_is_reported_not_dropped():
    e = E.parse_rocgdb("  1    AMDGPU Queue 1:1 (QID 0) some-new-layout\n")
    assert e is not None and e["queues"] == []
    assert any(f.startswith("info queues: a row in a layout not recognised") for f in e["unread"])


def test_info_line_gives_each_wave_group_its_source_line():
    state = (FAKE / "data" / "rocgdb_state.txt").read_text()
    lines = "".join(f'\nThread {n} (AMDGPU Wave 1:2:41:{n - 6} (0,0,0)/0 "python3"):\n'
                    f'Line 88 of "/src/gemm_clean.cpp" starts at address 0x7fffe0a13c40 <gemm_a8w8_splitk_clean+64> '
                    f'and ends at 0x7fffe0a13c48 <gemm_a8w8_splitk_clean+72>.\n' for n in (7, 8, 9, 10))
    e = E.parse_rocgdb(state + lines)
    g = next(g for g in e["wave_groups"] if "clean" in g["kernel"])
    assert g["line"] == "/src/gemm_clean.cpp:88"


def test_kernel_api_call_lines_with_a_prefix_are_read_and_said_to_be():
    log = ("[rank0]: [2026-03-19 00:47:06] SGLang Kernel API Call: RMSNorm.forward\n"
           "[rank0]: Output:\n"
           "[rank0]: [2026-03-19 00:47:07] SGLang Kernel API Call: sglang.custom_op.fused_moe\n")
    b = S.parse_kernel_api_log(log)
    assert (b.name, b.status) == ("sglang.custom_op.fused_moe", "in_flight")
    assert "with a prefix" in b.note
    assert "with a prefix" in E.kernel_api_evidence(b.to_dict())["summary"]


def test_kernel_api_lines_in_no_known_form_say_there_is_no_boundary():
    b = S.parse_kernel_api_log("worker 3: TorchKernel API Call: matmul\n")
    assert b.status == "unread" and "no last boundary" in b.note
    assert E.kernel_api_evidence(b.to_dict())["summary"].startswith("kernel-API log: 1 line(s) mention")


def test_evidence_from_a_process_capture_carries_its_pid_once(tmp_path):
    dump = tmp_path / "py-spy.4242.txt"
    dump.write_text('Process 4242: python x.py\n\nThread 4242 (idle): "MainThread"\n    main (x.py:3)\n')
    (ev,) = E.extract("", files=[dump], run_tools=False)
    assert ev["pid"] == 4242 and ev["summary"].startswith("pid 4242: py-spy: 1 thread(s)")


def test_the_debug_agent_fault_carries_the_race_victim_caution():
    text = ("wave_1: pc=0x7fd4f100d0e8 (stopped, reason: MEMORY_VIOLATION)\n\n"
            "Disassembly for function index_kernel(int*, long*):\n"
            "    code object: file:///tmp/a.out#offset=14309&size=31336\n"
            "    loaded at: [0x7fd4f100c000-0x7fd4f100e070]\n"
            "    =>  0x7fd4f100d0e8 <+232>:    global_load_dword v2, v[0:1], off\n")
    e = E.parse_debug_agent(text)
    assert "victim of a race" in e["caution"] and any(f.startswith("caution:") for f in e["findings"])
    trap = E.parse_debug_agent((CORPUS / "debug_agent_assert_trap_docs.log").read_text())
    assert "caution" not in trap  # an assert trap is the wave's own check failing


def test_terminal_wrapped_lines_are_joined_back_before_matching():
    m = S.classify_text((CORPUS / "i28_watchdog_wrapped_terminal.log").read_bytes())
    assert m.name == "nccl.watchdog_timeout" and any("wrapped at 120 columns" in w for w in m.warnings)
    assert S.unwrap("short line\nanother\n") is None


def test_a_container_logs_partial_lines_are_joined_before_matching():
    msg = ("[rank3]:[E1120 09:12:33.123456 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught collective operation "
           "timeout: WorkNCCL(SeqNum=4021, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, Timeout(ms)=600000) "
           "ran for 600017 milliseconds before timing out.")
    parts = [msg[:70], msg[70:160], msg[160:]]
    log = "\n".join([f"2026-11-20T09:12:33.{i:06d}Z stderr {'F' if i == 2 else 'P'} {p}" for i, p in enumerate(parts)]
                    + ["2026-11-20T09:12:34.000000Z stderr F Aborted (core dumped)"])
    m = S.classify_text(log)
    assert m.name == "nccl.watchdog_timeout" and any("2 partial line(s)" in w for w in m.warnings)
    assert S.join_partial_lines("2026-11-20T09:12:34Z stdout F done\n") is None


def _lanes(values) -> str:
    return " ".join(f"[{i}] {v:08x}" for i, v in enumerate(values))


def test_the_wave_dumps_faulting_lanes_show_the_address_registers_of_the_instruction():
    text = ("wave_1: pc=0x7fd4f100d0e8 (stopped, reason: MEMORY_VIOLATION)\n\nsystem registers:\n"
            "              m0: 00001008          status: 00012461         trapsts: 30000100\n"
            "            exec: 0000000000000006             vcc: 0000000000000000\n\nvector registers:\n"
            f"              v0: {_lanes([0x1000 + 4 * i for i in range(64)])}\n"
            f"              v1: {_lanes([0x7fff] * 64)}\n"
            f"              v2: {_lanes(range(64))}\n\n"
            "Disassembly for function index_kernel(int*, long*):\n"
            "    code object: file:///tmp/a.out#offset=14309&size=31336\n"
            "    loaded at: [0x7fd4f100c000-0x7fd4f100e070]\n"
            "    =>  0x7fd4f100d0e8 <+232>:    global_load_dword v3, v[0:1], off\n")
    e = E.parse_debug_agent(text)
    # exec 0b110: lanes 1 and 2 are the active ones; v[0:1] is the 64-bit address (low half first)
    assert e["lanes"] == [{"lane": 1, "v[0:1]": "0x00007fff00001004"}, {"lane": 2, "v[0:1]": "0x00007fff00001008"}]
    assert any(f.startswith("faulting lanes (registers of `global_load_dword v3, v[0:1], off`)")
               for f in e["findings"])


def test_the_saved_code_object_gives_the_amd_pcs_source_line(tmp_path):
    """The seeds' AMD step: llvm-objdump of the code object --save-code-objects wrote, the PC located
    by its offset from the load address, the line and the s_trap 2 before it found."""
    text = (CORPUS / "debug_agent_assert_trap_index_copy.log").read_text()
    saved = tmp_path / "7_memory___2188702_offset_0x546c3060_size_4026672"
    line = "/data/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:93"
    saved.write_text(json.dumps({"function": "_ZN2at6native24index_elementwise_kernelILi128ELi4E", "base": 0x52900,
                                 "instructions": [[0x534BC, "s_waitcnt lgkmcnt(0)", line], [0x534C0, "s_trap 2", line],
                                                  [0x534C4, "s_endpgm", line]]}))
    ev = E.extract(text, save_dirs=[tmp_path], path=_tools(tmp_path, "llvm-objdump"), tool_timeout=30)
    pcl = next(e for e in ev if e["kind"] == "amd-pc-line")
    assert pcl["status"] == "ok" and pcl["offset"] == "0x534c4" and pcl["line"] == line
    assert pcl["trap"] and pcl["endpgm"] and "s_trap 2" in pcl["summary"] and line in pcl["summary"]
    assert pcl["function"] == "_ZN2at6native24index_elementwise_kernelILi128ELi4E"  # exact case


def test_without_llvm_objdump_the_command_to_run_is_given(tmp_path, monkeypatch):
    from dbglog.diagnose import amdpc

    monkeypatch.setattr(amdpc, "ROCM_LLVM", str(tmp_path / "no-rocm"))  # (nor ROCm's own copy)
    text = (CORPUS / "debug_agent_assert_trap_index_copy.log").read_text()
    (tmp_path / "7_memory___2188702_offset_0x546c3060_size_4026672").write_text("{}")
    ev = E.extract(text, save_dirs=[tmp_path], path=str(tmp_path / "nothing"), tool_timeout=30)
    pcl = next(e for e in ev if e["kind"] == "amd-pc-line")
    assert pcl["status"] == "missing-tool" and "llvm-objdump -d -l --start-address=0x533c4" in pcl["summary"]
