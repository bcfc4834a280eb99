"""Evidence parsers against the formats the tools document (rocm-debug-agent, rocgdb, cuda-gdb,
nvdisasm, cuobjdump, CUDA core-dump progress), and the core-dump chain with fake tools: found,
missing tools, truncated dumps, colliding PCs, no line info."""
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from dbglog.diagnose import evidence as E

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus" / "logs"
FAKE = HERE / "fixtures" / "fake_tools"
DATA = FAKE / "data"
PC = "0x7ff533bb91d0"
KERNEL = ("void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<at::native::index_kernel_impl"
          "<at::native::OpaqueType<1> >(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::"
          "{lambda(char*, char const*, long)#1}>(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>, "
          "at::native::index_kernel_impl<at::native::OpaqueType<1> >(at::TensorIteratorBase&, c10::ArrayRef<long>, "
          "c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1} const&, bool)::{lambda(int)#1}>(long)")
MANGLED = ("_ZN2at6native24index_elementwise_kernelILi128ELi4EZNS0_16gpu_index_kernelIZNS0_17index_kernel_implINS0_"
           "10OpaqueTypeILi1EEEEEvRNS_18TensorIteratorBaseEN3c108ArrayRefIlEESA_EUlPcPKclE_EEvS7_SA_SA_RKT_bEUliE_EEvlT1_")
FILE = "/data/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu"


# --- rocm-debug-agent -------------------------------------------------------------------------

def test_debug_agent_assert_trap_docs_sample(tmp_path):
    text = (CORPUS / "debug_agent_assert_trap_docs.log").read_text()
    uri = "file:////rocm-debug-agent/build/test/rocm-debug-agent-test#offset=14309&size=31336"
    saved = tmp_path / E.saved_code_object_name(uri)
    saved.write_bytes(b"\x7fELF")
    e = E.parse_debug_agent(text, save_dirs=[tmp_path / "nope", tmp_path])
    assert e["kind"] == "rocm-debug-agent"
    assert (e["kernel"], e["reason"], e["pc"]) == ("vector_add_assert_trap(int*, int*, int*)", "ASSERT_TRAP", "0x7fd4f100d0e8")
    assert "s_trap 2" in e["meaning"] and "0 <= idx < size" in e["meaning"]
    assert e["code_object"] == uri and e["code_object_file"] == str(saved)
    assert saved.name == "file_____rocm-debug-agent_build_test_rocm-debug-agent-test_offset_14309_size_31336"
    top = e["faulting"][0]
    assert top["instruction"] == "s_trap 2"
    assert top["source"].endswith("vector_add_assert_trap.cpp:53: __builtin_trap ();")
    assert e["event"] == {"kind": "queue_error", "status": "HSA_STATUS_ERROR_EXCEPTION",
                          "text": "An HSAIL operation resulted in a hardware exception."}
    assert "ASSERT_TRAP in vector_add_assert_trap at pc 0x7fd4f100d0e8" in e["summary"]


def test_debug_agent_index_copy_kernel_maps_to_framework_op_and_saved_file(tmp_path):
    text = (CORPUS / "debug_agent_assert_trap_index_copy.log").read_text()
    (tmp_path / "7_memory___2188702_offset_0x546c3060_size_4026672").write_bytes(b"x")
    (tmp_path / "x_memory___2188702_offset_0x546c3060_size_4026672").write_bytes(b"x")  # not an 'N_' prefix
    e = E.parse_debug_agent(text, save_dirs=[tmp_path])
    assert e["reason"] == "ASSERT_TRAP" and e["pc"] == "0x7f20f5e534c4"
    assert e["kernel"].startswith("void at::native::index_elementwise_kernel<128, 4, at::native::index_copy_kernel_impl")
    assert e["op"]["op"] == "Tensor.index_copy_(dim, index, source)"
    assert e["op"]["dtype_bytes"] == 4 and "int32/float32" in e["op"]["dtype"]
    assert e["code_object"] == "memory://2188702#offset=0x546c3060&size=4026672"
    assert e["code_object_file"] == str(tmp_path / "7_memory___2188702_offset_0x546c3060_size_4026672")
    assert "Tensor.index_copy_" in e["summary"] and "4-byte dtype" in e["summary"]


def test_user_kernel_op_table_comes_first(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[[kernel_op]]\nfragment = "index_copy_kernel_impl"\nop = "my_cache.write (index_copy_)"\n'
                   '[[kernel_op]]\nfragment = ""\nop = "ignored"\n')
    ops = E.load_kernel_ops(cfg)
    assert ops == [("index_copy_kernel_impl", "my_cache.write (index_copy_)")]
    e = E.parse_debug_agent((CORPUS / "debug_agent_assert_trap_index_copy.log").read_text(), ops=ops)
    assert e["op"]["op"] == "my_cache.write (index_copy_)"
    assert E.load_kernel_ops(tmp_path / "missing.toml") == []


def test_debug_agent_rocm72_and_rocm631_and_old_formats():
    e = E.parse_debug_agent((CORPUS / "debug_agent_rocm72_kernargs.log").read_text())
    assert e["kernel"] == "__omp_offloading_8116438_1c00689b__QMm_time_steppersPs_tvd_rk_l486"
    assert (e["reason"], e["pc"]) == ("MEMORY_VIOLATION", "0x7ff734dcbf3c")
    assert e["fault"] == {"node": "4", "address": "0x7ffb61f02000", "reason": "Write access to a read-only page"}
    assert e["faulting"][0]["instruction"] == "s_waitcnt vmcnt(0) lgkmcnt(0)"
    rocm631 = ("Memory access fault by GPU node-4 (Agent handle: 0x3b24f40) on address 0x7ffb6a0f6000. Reason: Write "
               "access to a read-only page.\nDisassembly for function s_tvd_rk$m_time_steppers_$ck_L486_6:\n"
               "    code object: file:///path/bin/simulation#offset=4657152&size=10843816\n"
               "    loaded at: [0x7ff77da00000-0x7ff77feca9f9]\n"
               " => 0x7ff77e253430 <+6192>:    s_waitcnt vmcnt(0) lgkmcnt(0)\nEnd of disassembly.\n"
               + "".join(f"wave_{i}: pc=0x7ff77e253408 (stopped, reason: MEMORY_VIOLATION)\n\nscalar registers:\n"
                         "            s0: d9800000            s1: 80007ffe\n" for i in range(3))
               + "wave_3: pc=0x7ff77e2533fc (stopped, reason: MEMORY_VIOLATION)\n")
    e = E.parse_debug_agent(rocm631)
    assert e["kernel"] == "s_tvd_rk$m_time_steppers_$ck_L486_6"  # from the disassembly, by load range
    assert e["pc"] == "0x7ff77e253408" and e["faulting"][0]["waves"] == 3 and e["waves"] == 4
    assert e["fault"]["address"] == "0x7ffb6a0f6000"
    old = E.parse_debug_agent((CORPUS / "debug_agent_old_xnack.log").read_text())
    assert old["reason"] == "MEMORY_VIOLATION" and old["waves"] == 64


def test_debug_agent_multiline_kernel_name_and_truncated_dump():
    text = ("wave_8: pc=0x731fd50599c8 (kernel_code_entry=0x731fd5058700\n"
            "  <void at::native::index_elementwise_kernel<128, 4,\n"
            "    at::native::gpu_index_kernel<\n"
            "      at::native::index_put_kernel_impl<at::native::OpaqueType<8>>(\n"
            "        at::TensorIterator&\n      )::{lambda(char*, char const*, long)#1}\n    >(...)\n"
            "  >>>>) (stopped, reason: ASSERT_TRAP)\n")
    e = E.parse_debug_agent(text)
    assert e["kernel"].startswith("void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<at::")
    assert e["op"]["op"].startswith("Tensor.index_put_") and e["op"]["dtype_bytes"] == 8
    full = (CORPUS / "debug_agent_assert_trap_docs.log").read_text()
    cut = full[: full.index("=>  0x7fd4f100d0e8")]  # the dump stopped mid-disassembly
    e = E.parse_debug_agent(cut)
    assert (e["reason"], e["kernel"]) == ("ASSERT_TRAP", "vector_add_assert_trap(int*, int*, int*)")
    assert e["truncated"] is True and "instruction" not in e["faulting"][0]
    header_only = "wave_3: pc=0x7f00"
    assert E.parse_debug_agent(header_only)["pc"] == "0x7f00"
    assert E.parse_debug_agent("all good\n") is None


def test_stop_reason_combinations_pick_the_error():
    e = E.parse_debug_agent("wave_0: pc=0x10 (stopped, reason: WATCHPOINT|MEMORY_VIOLATION)\n"
                            "wave_1: pc=0x20 (stopped, reason: NONE)\n")
    assert e["reason"] == "WATCHPOINT|MEMORY_VIOLATION" and "out of bounds" in e["meaning"]


# --- rocgdb -----------------------------------------------------------------------------------

def test_rocgdb_dispatches_queues_waves_and_deadlock_telltale():
    state = (DATA / "rocgdb_state.txt").read_text().replace("### ", "(gdb) ")
    e = E.parse_rocgdb(state)
    assert [d["kernel"] for d in e["dispatches"]] == ["gemm_a8w8_splitk_clean"] * 2
    assert e["dispatches"][0] == {"id": 1, "agent": 1, "queue": 2, "dispatch": 41, "pkid": 40, "grid": "[2048,1,1]",
                                  "workgroup": "[256,1,1]", "fence": "B|Aa|Ra", "kernel": "gemm_a8w8_splitk_clean"}
    assert [(q["queue"], q["pending"]) for q in e["stalled_queues"]] == [(2, 2), (3, 2)]
    assert len(e["agents"]) == 2 and e["agents"][0]["arch"] == "gfx942"
    assert e["waves"] == 4 and e["wave_groups"][0]["waves"] == 4 and e["wave_groups"][0]["pc"] == "0x00007fffe0a13c40"
    assert any("all 4 waves of gemm_a8w8_splitk_clean at one PC" in f for f in e["findings"])
    assert any("shared-workspace deadlock" in f for f in e["findings"])
    assert any("write 42 > read 40" in f for f in e["findings"])
    assert e["summary"].startswith("rocgdb: 2 dispatch(es) in flight (gemm_a8w8_splitk_clean), 2 stalled queue(s)")


def test_rocgdb_docs_sample_and_agent_in_the_way():
    docs = ("  Id   Target Id                Type         Read   Write  Size     Address\n"
            "  1    AMDGPU Queue 1:1 (QID 0) HSA          2      2      4096     0x00007ffff626e000\n"
            "* 2    AMDGPU Queue 1:2 (QID 1) HSA          0      2      1048576  0x00007fffe5800000\n"
            "   Id   Target Id                      Grid    Workgroup Fence   Kernel Function\n"
            "* 1    AMDGPU Dispatch 1:2:1 (PKID 0) [1,1,1] [1,1,1]   B|Aa|Ra kern()\n"
            '* 7    AMDGPU Wave 1:2:1:1 (0,0,0)/0 "saxpy"      kern () at /home/user/saxpy.cpp:7\n')
    e = E.parse_rocgdb(docs)
    assert e["dispatches"][0]["kernel"] == "kern()" and e["stalled_queues"][0]["qid"] == 1
    assert e["wave_groups"][0]["at"] == "/home/user/saxpy.cpp:7"
    assert not any("one PC" in f for f in e["findings"])  # a single wave is not a spin
    blocked = E.parse_rocgdb("(gdb) info dispatches\nNo dispatches are currently active.\n")
    assert "rocm-debug-agent" in blocked["findings"][0]
    assert E.parse_rocgdb("Thread 1 received signal SIGSEGV\n") is None


# --- CUDA: progress lines, cuda-gdb, nvdisasm, cuobjdump ----------------------------------------

def test_coredump_progress_lines():
    e = E.parse_cuda_coredump_progress((CORPUS / "cuda_coredump_two_kernels.log").read_text())
    assert (e["exception"], e["exception_code"], e["sm"], e["warp"], e["pc"]) == (
        "Warp Illegal Address", 14, "124", "0", "0x7462c3bac310")
    assert e["files"] == ["/tmp/cuda_coredump_host.1799919.1754898045"]
    assert e["frames"][0]["function"] == "_Z25illegalMemoryAccessKernelPii"
    if shutil.which("c++filt") or shutil.which("cu++filt"):
        assert e["kernel"] == "illegalMemoryAccessKernel(int*, int)"
    exited = "coredump: Detected an exception of type CUDBG_EXCEPTION_WARP_MISALIGNED (6)\ncoredump:   - Warp: " \
             "exception was detected after the warp has exited\n"
    e = E.parse_cuda_coredump_progress(exited)
    assert e["exception"] == "Warp Misaligned" and e["warp"].startswith("exception was detected")
    assert E.parse_cuda_coredump_progress("coredump: SM 1/132 has finished state collection\n") is None


def test_cuda_gdb_output():
    text = (CORPUS / "cudagdb_cudacore_warp_illegal_address.log").read_text()
    e = E.parse_cuda_gdb(text + f"(cuda-gdb) info symbol $errorpc\n{KERNEL} + 11472 in section .text.{MANGLED} of "
                                "/tmp/cuda-dbg/2123124/session1/elf.21407f80.24fe2940.o.4gyLzn\n")
    assert (e["exception"], e["errorpc"]) == ("Warp Illegal Address", PC)
    assert e["focus"]["sm"] == 124 and e["focus"]["warp"] == 3
    assert e["source"] == f"{FILE}:203"
    assert e["symbol"] == {"function": KERNEL, "offset": 11472, "section": f".text.{MANGLED}",
                           "cubin": "/tmp/cuda-dbg/2123124/session1/elf.21407f80.24fe2940.o.4gyLzn"}
    live = (CORPUS / "cudagdb_warp_out_of_range.log").read_text()
    e = E.parse_cuda_gdb(live)
    assert e["exception"] == "Warp Out-of-range Address" and "local or shared" in e["meaning"]
    assert e["kernel"] == "void gipuma_init_cu2<float>(GlobalState&)" and e["pc"] == "0x0000000000c8c6a0"


def test_nvdisasm_chain_collision_and_cuobjdump_index():
    listing = (DATA / "index_kernel.nvdisasm").read_text()
    res = E.parse_nvdisasm_chain(listing, PC)
    assert res["matches"] == 2 and res["line_info"]
    assert res["functions"][1] == MANGLED
    assert res["chains"][1] == [{"file": FILE, "line": 203, "inlined_at": f"{FILE}:118"},
                                {"file": FILE, "line": 118, "inlined_at": f"{FILE}:37"},
                                {"file": FILE, "line": 37}]
    assert res["chains"][0] == [{"file": "/data/pytorch/aten/src/ATen/native/cuda/Loops.cuh", "line": 62}]
    assert E.parse_cuobjdump_fun((DATA / "index_kernel.nvdisasm.elf").read_text(), f".text.{MANGLED}") == "26a"
    assert E.parse_cuobjdump_fun("nothing", ".text.x") is None
    assert E.format_chain(res["chains"][1]).startswith(f"{FILE}:203 (inlined at {FILE}:118) <- {FILE}:118")
    noline = E.parse_nvdisasm_chain((DATA / "noline.nvdisasm").read_text(), PC)
    assert noline["line_info"] is False and noline["chains"] == [[], []]
    assert E.parse_nvdisasm_chain(listing, "0xdead")["matches"] == 0


# --- the automated chain with fake tools ------------------------------------------------------

def _core(tmp_path, listing="index_kernel.nvdisasm", **kw):
    state = {"exception": "Warp Illegal Address", "errorpc": PC, "kernel": KERNEL, "mangled": MANGLED,
             "offset": 11472, "listing": str(DATA / listing), "source": f"{FILE}:203"}
    state.update(kw)
    core = tmp_path / "cuda_coredump_host.42.1764250282"
    core.write_text(json.dumps(state))
    return core


def _tools(tmp_path, *names):
    d = tmp_path / "bin"
    d.mkdir(exist_ok=True)
    for n in names:
        shutil.copy(FAKE / n, d / n)
    return str(d) + os.pathsep + os.path.dirname(sys.executable) + os.pathsep + "/usr/bin:/bin"


@pytest.fixture
def tmpdir_env(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path / "t"))
    (tmp_path / "t").mkdir()
    return tmp_path


def test_chain_with_all_tools_resolves_the_collision_with_cuobjdump(tmpdir_env):
    tmp = tmpdir_env
    e = E.cuda_core_chain(_core(tmp), path=_tools(tmp, "cuda-gdb", "nvdisasm", "cuobjdump"), timeout=30)
    assert e["status"] == "ok" and e["function_index"] == "26a" and e["matches"] == 1
    assert e["chain"][0] == {"file": FILE, "line": 203, "inlined_at": f"{FILE}:118"}
    assert len(e["chain"]) == 3
    assert e["summary"].startswith(f"Warp Illegal Address in at::native::index_elementwise_kernel<…> at pc {PC}: "
                                   f"{FILE}:203 (inlined at {FILE}:118)")
    assert [s["cmd"].split()[0] for s in e["steps"]] == ["cuda-gdb", "nvdisasm", "cuobjdump", "nvdisasm"]


def test_chain_without_cuobjdump_lists_every_colliding_chain(tmpdir_env):
    tmp = tmpdir_env
    e = E.cuda_core_chain(_core(tmp), path=_tools(tmp, "cuda-gdb", "nvdisasm"), timeout=30)
    assert e["ambiguous"] and "cuobjdump is not installed" in e["note"]
    assert e["status"] == "ok" and e["other_chains"]


def test_chain_says_plainly_when_line_info_is_missing(tmpdir_env):
    tmp = tmpdir_env
    e = E.cuda_core_chain(_core(tmp, listing="noline.nvdisasm"), path=_tools(tmp, "cuda-gdb", "nvdisasm", "cuobjdump"),
                          timeout=30)
    assert e["status"] == "no-line-info" and e["line_info"] is False
    assert "-lineinfo" in e["summary"] and "NVCC_PREPEND_FLAGS" in e["summary"]


def test_chain_with_missing_tools_and_bad_core(tmpdir_env):
    tmp = tmpdir_env
    e = E.cuda_core_chain(_core(tmp), path=_tools(tmp))
    assert e["status"] == "missing-tool" and "cuda-gdb is not installed" in e["summary"]
    assert "target cudacore" in e["summary"]
    e = E.cuda_core_chain(_core(tmp), path=_tools(tmp, "cuda-gdb"), timeout=30)
    assert e["status"] == "missing-tool" and "nvdisasm is not installed" in e["summary"]
    assert e["exception"] == "Warp Illegal Address" and e["errorpc"] == PC
    bad = tmp / "truncated_core"
    bad.write_text('{"exception": "Warp Ill')  # a core dump cut short
    e = E.cuda_core_chain(bad, path=_tools(tmp, "cuda-gdb", "nvdisasm"), timeout=30)
    assert e["status"] == "no-errorpc" and "Failed to open CUDA core dump" in e["summary"]
    e = E.cuda_core_chain(_core(tmp, errorpc="0x1234"), path=_tools(tmp, "cuda-gdb", "nvdisasm"), timeout=30)
    assert e["status"] == "pc-not-found"


def test_extract_from_output_and_capture_files(tmpdir_env, monkeypatch):
    tmp = tmpdir_env
    core = _core(tmp)
    out = ("[06:43:15.209195] coredump: Detected an exception of type CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS (14)\n"
           "[06:43:15.209210] coredump:   - PC 0x7462c3bac310\n"
           f"[06:43:15.406153] coredump: Writing ELF file to {core}\n"
           f"[06:43:15.406153] coredump: Writing ELF file to {tmp / 'gone'}\n")
    state = tmp / "rocgdb.txt"
    state.write_text((DATA / "rocgdb_state.txt").read_text())
    ev = E.extract(out, files=[state, tmp / "missing.txt"], path=_tools(tmp, "cuda-gdb", "nvdisasm", "cuobjdump"),
                   tool_timeout=30)
    kinds = [e["kind"] for e in ev]
    assert kinds == ["cuda-coredump", "rocgdb", "cuda-core-chain", "cuda-core-chain"]
    assert ev[2]["status"] == "ok" and ev[3]["status"] == "no-core"
    lines = E.summary_lines(ev)
    assert lines[0].startswith("CUDA core dump: Warp Illegal Address")
    assert any(line.startswith("rocgdb: 2 dispatch(es)") for line in lines)
    assert json.loads(json.dumps(ev)) == ev
    assert [e["kind"] for e in E.extract(out, run_tools=False)] == ["cuda-coredump", "cuda-core-chain"]
