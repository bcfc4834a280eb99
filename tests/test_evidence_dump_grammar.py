"""Dump shapes read by their grammar -- a cuda-gdb session that stops more than once,
a gdb backtrace pasted without its thread header, NCCL_DEBUG=INFO start-up lines without a
communicator line, channel lines that only name ranks and hosts."""
from hypothesis import given, settings
from hypothesis import strategies as st

from dbglog.diagnose import evidence as E

# cuda-gdb run twice, the second time with `set cuda memcheck on` (format of a public report)
TWO_STOPS = """CUDA Exception: Warp Out-of-range Address

Program received signal CUDA_EXCEPTION_5, Warp Out-of-range Address.
[Switching focus to CUDA kernel 0, grid 16, block (0,0,0), thread (0,1,0), device 0, sm 12, warp 1, lane 0]
0x0000000000a2de10 in void gridtools::_impl_strcuda::do_it_on_gpu<...

which becomes

Illegal access to address (@global)0x7fffffffc320 detected.

Program received signal CUDA_EXCEPTION_1, Lane Illegal Address.
[Switching focus to CUDA kernel 1, grid 16, block (0,0,0), thread (0,0,0), device 0, sm 12, warp 0, lane 0]
0x0000000000b29c98 in void gridtools::_impl_strcuda::do_it_on_gpu<...
"""


def test_every_stop_of_a_cuda_gdb_session_with_the_memcheck_address():
    e = E.parse_cuda_gdb(TWO_STOPS)
    assert e["exception"] == "Warp Out-of-range Address"
    assert e["kernel"].startswith("gridtools::_impl_strcuda::do_it_on_gpu")
    assert e["pc"] == "0x0000000000a2de10"
    stops = e["stops"]
    assert [s["exception"] for s in stops] == ["Warp Out-of-range Address", "Lane Illegal Address"]
    assert stops[1]["address"] == "(@global)0x7fffffffc320" and stops[1]["pc"] == "0x0000000000b29c98"
    assert stops[0]["sm"] == 12 and stops[0]["thread"] == "(0,1,0)"
    assert "2 stops" in e["summary"] and "(@global)0x7fffffffc320" in e["summary"]


def test_a_single_stop_keeps_its_record_as_before():
    one = TWO_STOPS.split("which becomes")[0]
    e = E.parse_cuda_gdb(one)
    assert "stops" not in e and e["exception"] == "Warp Out-of-range Address"


# gdb `bt` of the one hung rank, pasted without "Thread N (...)" (frames as a public report shows them)
BARE_BT = """All ranks wait in cudaDeviceSynchronize except one; its stack from gdb:
#0  0x000014cd955ebdbc in ?? () from /lib64/libcuda.so.1
#1  0x000014cd953608b6 in ?? () from /lib64/libcuda.so.1
#2  0x000014cd956bb12f in ?? () from /lib64/libcuda.so.1
#3  0x000014cdd8a4d4f9 in ?? () from /opt/cuda/11.3.0/lib64/libcudart.so.11.0
#4  0x000014cdd8a6cf36 in cudaMemcpyAsync () from /opt/cuda/11.3.0/lib64/libcudart.so.11.0
#5  0x000014cdb53ae194 in at::native::_local_scalar_dense_cuda(at::Tensor const&)::{lambda()#1}::operator()() const ()
"""


def test_a_backtrace_without_a_thread_header_is_the_current_thread():
    e = E.parse_thread_stacks(BARE_BT)
    assert e["kind"] == "thread-stacks" and e["count"] == 1
    assert e["main"]["stuck_in"].startswith("cudaMemcpyAsync")
    assert e["main"]["wait"] == "gpu-sync"
    t = e["threads"][0]
    assert t["frames"][0] == {"function": "??", "file": "libcuda.so.1", "repeat": 3}  # the run folded
    assert "backtrace's thread" in e["summary"]
    assert E.may_hold_dump(BARE_BT)


def test_c10_frames_and_lone_hash_lines_are_no_backtrace():
    c10 = ("Exception raised from c10_cuda_check_implementation at CUDAException.cpp:43 (most recent call first):\n"
           "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f in libc10.so)\n"
           "frame #1: c10::detail::torchCheckFail(char const*) + 0x64 (0x7f in libc10.so)\n")
    assert E.parse_thread_stacks(c10) is None
    assert E.parse_thread_stacks("#0 a markdown heading\nsome text\n") is None


# NCCL_DEBUG=INFO start-up only (no communicator, ring or channel line yet)
INIT_ONLY = """ai:480850:480850 [0] NCCL INFO Bootstrap : Using eth0:10.30.2.40<0>
ai:480850:480850 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation

ai:480850:480850 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]
ai:480850:480850 [0] NCCL INFO NET/Socket : Using [0]eth0:10.30.2.40<0>
ai:480850:480850 [0] NCCL INFO Using network Socket
NCCL version 2.10.3+cuda11.3
```ai:480852:480852 [2] NCCL INFO Bootstrap : Using eth0:10.30.2.40<0>
ai:480852:480852 [2] NCCL INFO Using network Socket
ai:480851:480851 [1] NCCL INFO Using network Socket
ai:480853:480853 [3] NCCL INFO Using network Socket
"""


def test_nccl_start_up_without_a_communicator_line():
    e = E.parse_nccl_topology(INIT_ONLY)
    assert e["version"] == "2.10.3+cuda11.3" and e["network"] == "Socket"
    assert e["processes"] == 4 and e["nodes"] == 1  # a markdown fence glued to a line is no host of its own
    assert "libibverbs" in " ".join(e["findings"])


def test_start_up_lines_that_say_nothing_are_no_record():
    assert E.parse_nccl_topology("n2:41:52 [1] NCCL INFO NET/Plugin: no plugin found\n") is None


EDGES = """machine-1:16194:18587 [7] NCCL INFO Channel 03 : 15[b2000] -> 6[b1000] [send] via NET/IB/0/GDRDMA
machine-1:16194:18581 [1] NCCL INFO Channel 03 : 9[1b000] -> 8[1a000] via P2P/direct pointer
machine-2:41626:45221 [3] NCCL INFO Channel 04 : 3[3e000] -> 2[3d000] via P2P/direct pointer
"""


def test_channel_lines_alone_give_the_ranks_they_name_the_hosts_and_gpudirect():
    e = E.parse_nccl_topology(EDGES)
    assert e["ranks"] is None and e["ranks_seen"] == 16
    assert "at least 16 rank(s)" in e["summary"] and "machine-1, machine-2" in e["summary"]
    assert "GDRDMA" in e["summary"]


def test_the_bare_version_line_joins_a_ring_record():
    text = ("NCCL version 2.10.3+cuda10.2\nl206:23224:23224 [0] NCCL INFO Using network IB\n"
            "l206:23224:23224 [0] NCCL INFO Channel 00/06 :    0   1\n")
    e = E.parse_nccl_topology(text)
    assert e["version"] == "2.10.3+cuda10.2" and e["ranks"] == 2 and e["network"] == "IB"


LINES = st.sampled_from([
    "#0  0x00007f in ?? () from /lib/libcuda.so.1", "#1  0x00007f in poll () from /lib/libc.so.6",
    "Program received signal CUDA_EXCEPTION_14, Warp Illegal Address.",
    "[Switching focus to CUDA kernel 0, grid 1, block (0,0,0), thread (0,0,0), device 0, sm 0, warp 0, lane 0]",
    "0x0000 in k<<<(1,1,1),(1,1,1)>>> ()", "Illegal access to address (@global)0x10 detected.",
    "h:1:2 [0] NCCL INFO Using network Socket", "NCCL version 2.18.1", "h:1:2 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via P2P/IPC",
    "", "noise", "#", "#0", "Thread 1 (Thread 0x7f (LWP 5)):",
])


@settings(max_examples=60, deadline=None)
@given(st.lists(LINES, max_size=20))
def test_the_new_shapes_never_raise(lines):
    text = "\n".join(lines)
    for fn in (E.parse_cuda_gdb, E.parse_thread_stacks, E.parse_nccl_topology):
        fn(text)
    E.extract(text, run_tools=False)


API_ERROR = """========= Program hit cudaErrorIllegalAddress (error 700) due to "an illegal memory access was encountered" on CUDA API call to cudaLaunchKernel.
=========     Saved host backtrace up to driver entry point at error
=========         Host Frame: ggml_cpy_q4_0_f32_cuda(char const*, char*, int, CUstream_st*, char**, int&) [clone .constprop.0] in cpy.cu:456 [0x593df4d] in libggml.so
=========         Host Frame: ggml_cuda_cpy(ggml_backend_cuda_context&, ggml_tensor const*, ggml_tensor*) in cpy.cu:612 [0x59421a8] in libggml.so
=========         Host Frame: ggml_backend_cuda_graph_compute(ggml_backend*, ggml_cgraph*) in ggml-cuda.cu:2783 [0x58dac5e] in libggml.so
"""


def test_a_failing_api_call_names_the_programs_callers():
    e = E.parse_compute_sanitizer(API_ERROR)
    assert ("the failing call came from ggml_cpy_q4_0_f32_cuda (cpy.cu:456) <- ggml_cuda_cpy (cpy.cu:612) <- "
            "ggml_backend_cuda_graph_compute (ggml-cuda.cu:2783)") in e["findings"]
