"""Rules added after the seventh blind round of real failure logs: NCCL network/remote errors, the
CUDA graph capture errors, TensorRT-LLM, MPS ops without a kernel, NVML permissions, XLA's checks
and missing ptxas, the HSA runtime and the kernel driver failing to start, and two traceback shapes
(code shown under a frame is no output; a truncated traceback named by the logger line above it)."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dbglog.diagnose import signatures as S


def _name(text):
    m = S.classify_text(text)
    return m.name if m else None


# --- NCCL network / remote errors ------------------------------------------------------------

IB_WARN = ("node7:3468:3905 [4] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer "
           "10.0.3.7<54862> with status=12 opcode=0 len=0 vendor err 129 (Recv)")
SOCKET_WARN = ("node2:7712:7771 [3] misc/socket.cc:46 NCCL WARN socketProgressOpt: Call to recv from "
               "10.0.3.9<52905> failed : Connection reset by peer")
WATCHDOG = ("[rank3]:[E ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=812, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600123 "
            "milliseconds before timing out.")
REMOTE = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, "
          "remote process exited or there was a network error, NCCL version 2.21.5")


def test_ib_completion_error_is_a_network_error_above_the_timeout_it_causes():
    m = S.classify_text(IB_WARN + "\nnode7:3468:3905 [4] NCCL INFO transport/net.cc:1302 -> 6\n" + WATCHDOG + "\n")
    assert m.name == "nccl.network_error" and "Got completion" in m.line
    assert "nccl.watchdog_timeout" in m.others


def test_the_warn_naming_the_connection_decides_over_ncclremoteerror():
    text = REMOTE + "\nncclRemoteError: A call failed possibly due to a network error.\nLast error:\n" + SOCKET_WARN + "\n"
    m = S.classify_text(text)
    assert m.name == "nccl.network_error" and "Connection reset by peer" in m.line
    assert _name(REMOTE) == "nccl.network_error"  # the result text alone still names it


def test_a_crashed_peer_outranks_the_network_errors_it_causes():
    text = (SOCKET_WARN + "\n[2024-03-01 10:00:01] Fatal Python error: Segmentation fault\n")
    assert _name(text) == "py.fatal"


@pytest.mark.parametrize("msg", [
    "NET/Socket : peer 10.0.0.2<44567> message truncated : receiving 4096 bytes instead of 2048",
    "Cuda failure 'invalid argument'",
    "[Proxy Service 3] Failed to execute operation Connect from rank 3, retcode 3",
])
def test_other_warns_stay_nccl_warn_or_their_cuda_name(msg):
    assert _name(f"node1:1:2 [0] x.cc:1 NCCL WARN {msg}\n") in ("nccl.warn", "gpu.cuda_failure")


def test_a_dataloader_connection_reset_is_no_nccl_error():
    text = ("Traceback (most recent call last):\n  File \"/usr/lib/python3.10/multiprocessing/connection.py\", line 216,"
            " in recv_bytes\n    buf = self._recv_bytes(maxlength)\nConnectionResetError: [Errno 104] Connection reset by peer\n")
    assert _name(text) == "py.traceback:ConnectionResetError"


_NET_PHRASES = ["NET/IB : Got completion from peer 10.1.1.1<1> with error 12, opcode 0, len 0, vendor err 129",
                "Net : Connection closed by remote peer node3<4242>",
                "socketStartConnect: Connect to 10.0.0.2<45763> failed : Software caused connection abort",
                "Call to connect failed : Connection refused",
                "Net : Call to recv from 10.0.0.4<5> failed : Broken pipe"]


@settings(max_examples=40, deadline=None)
@given(host=st.from_regex(r"[a-z][a-z0-9-]{0,12}:\d{1,6}:\d{1,6}", fullmatch=True), dev=st.integers(0, 7),
       phrase=st.sampled_from(_NET_PHRASES), noise=st.lists(st.sampled_from(
           ["NCCL INFO Channel 00/02 :    0   1", "NCCL INFO proxy.cc:698 -> 6", "step 12 loss=2.31"]), max_size=5))
def test_any_network_warn_is_named_a_network_error(host, dev, phrase, noise):
    lines = [f"{host} [{dev}] {n}" for n in noise] + [f"{host} [{dev}] misc/socket.cc:49 NCCL WARN {phrase}"]
    m = S.classify_text("\n".join(lines) + "\n")
    assert m.name == "nccl.network_error" and phrase in m.line


# --- CUDA graph capture ----------------------------------------------------------------------

def test_nccl_cuda_failure_inside_a_capture_is_the_capture_error():
    text = ("worker-6:56890:56890 [0] enqueue.cc:267 NCCL WARN Cuda failure 'dependency created on uncaptured work "
            "in another stream'\nworker-6:56890:56890 [0] NCCL INFO enqueue.cc:1045 -> 1\n")
    assert _name(text) == "gpu.graph_capture"


def test_the_violation_decides_over_the_invalidated_capture_it_causes():
    text = ("ERROR: LoadError: CUDA error: operation failed due to a previous error during capture (code 901)\n"
            "Stacktrace:\n [1] throw_api_error\ncaused by: CUDA error: operation not permitted when stream is "
            "capturing (code 900, ERROR_STREAM_CAPTURE_UNSUPPORTED)\n")
    m = S.classify_text(text)
    assert m.name == "gpu.graph_capture" and "not permitted when stream is capturing" in m.line


def test_capture_tokens_map_to_graph_capture():
    for tok in ("cudaErrorStreamCaptureInvalidated", "cudaErrorStreamCaptureIsolation", "cudaErrorCapturedEvent"):
        assert _name(f"  what():  kernel.cu:12 failed ({tok}) - failed to record join\n") == "gpu.graph_capture", tok


# --- engines, frameworks, tools --------------------------------------------------------------

def test_trtllm_error_and_a_cuda_fault_it_carries():
    assert _name("[06/21/2025-01:30:42] [TRT-LLM] [RANK 0] [E] Failed to initialize executor on rank 0: "
                 "[TensorRT-LLM][ERROR] Assertion failed: Error occurred when running GEMM! (KernelRunner.cpp:180)\n"
                 ) == "trtllm.error"
    assert _name("[TensorRT-LLM][ERROR] CUDA runtime error in cudaMemcpyAsync(a, b, c): an illegal memory access "
                 "was encountered (/src/cpp/tensorrt_llm/runtime/bufferManager.cpp:30)\n") == "gpu.illegal_address"


def test_trtllm_assertion_carrying_an_nccl_result_is_the_nccl_error():
    m = S.classify_text("[TensorRT-LLM][ERROR] Assertion failed: Failed, NCCL error ../tensorrt_llm/runtime/"
                        "ncclCommunicator.cpp:90 'invalid usage (run with NCCL_DEBUG=WARN for details)'\n")
    assert m.name == "nccl.error" and "invalid usage" in m.line


@pytest.mark.parametrize("line", [
    "NotImplementedError: The operator 'aten::_fft_r2c' is not currently implemented for the MPS device.",
    "NotImplementedError: The operator 'aten::index.Tensor_out' is not current implemented for the MPS device.",
    "NotImplementedError: Could not run 'aten::empty.memory_format' with arguments from the 'SparseMPS' backend.",
])
def test_mps_ops_without_a_kernel(line):
    assert _name(line + "\n") == "mps.unsupported_op"


def test_not_implemented_elsewhere_is_not_mps():
    assert _name("NotImplementedError: Could not run 'torchvision::nms' with arguments from the 'CUDA' backend.\n") != \
        "mps.unsupported_op"


def test_nvml_permission():
    text = ("Traceback (most recent call last):\n  File \"pynvml.py\", line 979, in _nvmlCheckReturn\n"
            "    raise NVMLError(ret)\npynvml.NVMLError_NoPermission: Insufficient Permissions\n")
    assert _name(text) == "nvml.no_permission"
    assert _name("Failed to display compute instances: Insufficient Permissions\n") == "nvml.no_permission"


def test_xla_ret_check_is_a_host_assertion():
    m = S.classify_text("E0000 00:00:1786848983.723552 3853456 status_macros.cc:58] INTERNAL: RET_CHECK failure "
                        "(xla/service/layout_normalization.cc:120) s.layout() == operand_shape.layout()\n")
    assert m.name == "cpp.assert" and "layout_normalization.cc" in m.line


def test_missing_ptxas_is_an_install_problem():
    m = S.classify_text("No PTX compilation provider is available. Neither ptxas/nvlink nor nvjtlink is available.\n"
                        " - ptxas_path: Couldn't find a suitable version of ptxas. The following locations were "
                        "considered: /usr/local/cuda/bin/ptxas\n")
    assert m.name == "env.library_missing" and m.line_no == 1


@pytest.mark.parametrize("line", [
    "2019-05-13 15:22:42.290693: W tensorflow/core/framework/op_kernel.cc:1318] OP_REQUIRES failed at assign_op.h:112 "
    ": Resource exhausted: OOM when allocating tensor with shape[4096] and type float on "
    "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
    "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[64,256,56,56]",
    "Attempting to reserve 3.95G at the bottom of memory. That was not possible. There are 1.92G free, 0B reserved.",
])
def test_tensorflow_and_tpu_oom(line):
    assert _name(line + "\n") == "oom.runtime"


def test_runtime_that_cannot_start():
    assert _name("RuntimeError: HSA Error 4104: HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the "
                 "necessary resources. This error may also occur when the core runtime library needs to spawn threads\n"
                 ) == "driver.init_failed"
    # a queue aborting with the same status keeps its own, higher name
    assert _name(":0:rocdevice.cpp :2652: 4238358292712 us: 48946: [tid:0x7fffd023f700] Device::callbackQueue aborting "
                 "with error : HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary "
                 "resources. code: 0x1008\n") == "rocm.queue_abort"
    m = S.classify_text("[   21.09] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:894)\n"
                        "RuntimeError: No CUDA GPUs are available\n")
    assert m.name == "driver.init_failed" and "RmInitAdapter" in m.line


def test_pass_manager_failure_is_a_triton_compilation_error():
    text = ('  File "/root/triton/python/triton/backends/amd/compiler.py", line 244, in make_ttgir\n'
            "    pm.run(mod)\nRuntimeError: PassManager::run failed\n")
    assert _name(text) == "triton.compilation_error"


# --- traceback shapes ------------------------------------------------------------------------

def test_code_under_a_frame_is_no_output():
    text = ('File "/sgl/python/sglang/srt/distributed/device_communicators/pynccl_wrapper.py", line 350, in NCCL_CHECK\n'
            'raise RuntimeError(f"NCCL error: {error_str}")\n'
            "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)\n")
    m = S.classify_text(text)
    assert m.name == "nccl.error" and m.line.startswith("RuntimeError: NCCL error: unhandled")


def test_a_frame_without_source_is_followed_by_the_exception():
    text = ('Traceback (most recent call last):\n  File "<stdin>", line 1, in <module>\n'
            "[rank0]: RuntimeError: CUDA error: an illegal memory access was encountered\n")
    assert _name(text) == "gpu.illegal_address"


def test_truncated_traceback_named_by_the_logger_line_above_it():
    text = ("2023-10-04 21:33:46.745 worker:0  olmo.util:133  CRITICAL  Uncaught RuntimeError: Invalid function "
            "argument. Expected parameter `scatter_list` to be of type List[torch.Tensor].\n"
            "Traceback (most recent call last):\n  File \"/LLM/scripts/train.py\", line 249, in <module>\n"
            "    main(cfg)\n  File \"/usr/lib/python3/dist-packages/torch/distributed/_shard/api.py\", line 70, in f\n"
            "    st = sharding_spec.shard(tensor, src_rank=src_r\n")
    m = S.classify_text(text)
    assert m.name == "py.traceback:RuntimeError" and "scatter_list" in m.line
    # with its exception line present, the traceback's own line decides
    m = S.classify_text(text + "ValueError: bad shard\n")
    assert m.name == "py.traceback:ValueError"


def test_inductor_wrapper_pasted_without_its_traceback_names_the_inner_exception():
    m = S.classify_text("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
                        "AssertionError: Device mps not supported\n")
    assert m.name == "py.traceback:AssertionError" and "Device mps" in m.line


def test_new_signatures_carry_their_playbook_advice():
    from dbglog.run import advice as A

    rules = A.load(None)

    def ids(sig):
        run = {"id": "r1", "cmd": ["python", "train.py"], "outcome": "fail", "signature": sig, "evidence": [],
               "env_overrides": {}, "duration_s": 1.0, "key_lines": []}
        return [a["id"] for a in A.advise(A.Context(run), rules)]

    for sig, advice_id in (("nccl.network_error", "nccl-network-peer-or-fabric"),
                           ("gpu.graph_capture", "graph-capture-uncapturable-op"), ("trtllm.error", "trtllm-first-error"),
                           ("mps.unsupported_op", "mps-unsupported-op"), ("nvml.no_permission", "nvml-permission"),
                           ("cpp.heap_corruption", "heap-corruption-native")):
        assert S.describe(sig) is not None and S.describe(sig).description
        assert advice_id in ids(sig), sig
    assert "nccl-network-peer-or-fabric" not in ids("nccl.warn")


def test_a_line_another_process_printed_under_a_frame_is_output():
    text = ('Traceback (most recent call last):\n  File "/w/train.py", line 12, in step\n'
            "node1:123:456 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer node2<4>\n"
            "    loss.backward()\n")
    assert _name(text) == "nccl.network_error"
    indented = ('  File "/w/train.py", line 12, in step\n    raise RuntimeError("CUDA error: out of memory")\n'
                "ValueError: bad batch\n")
    assert _name(indented) != "oom.runtime"


def test_classification_leaves_the_cyclic_collector_as_it_found_it():
    import gc

    was = gc.isenabled()
    try:
        gc.enable()
        assert _name("RuntimeError: CUDA error: an illegal memory access was encountered\n") == "gpu.illegal_address"
        assert gc.isenabled()
        gc.disable()
        S.classify_text("nothing to see\n")
        assert not gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


@pytest.mark.parametrize("text", [
    "    92%|####| 1667/1811 [4:43:54<08:57,  3.73s/it]\n    free(): double free detected in tcache 2\n    Aborted (core dumped)\n",
    "*** Error in `python': double free or corruption (!prev): 0x000056383cda7e40 ***\n======= Backtrace: =========\n",
    "* Error in `python': free(): invalid pointer: 0x00007f51b9c8d780 *\n",
    "munmap_chunk(): invalid pointer\nFatal Python error: Aborted\n",
])
def test_glibc_heap_corruption_is_the_cause_of_the_abort(text):
    m = S.classify_text(text)
    assert m.name == "cpp.heap_corruption" and "Aborted" not in m.line


def test_heap_corruption_ranks_below_a_gpu_fault_it_follows():
    text = ("RuntimeError: CUDA error: an illegal memory access was encountered\n"
            "double free or corruption (out)\nAborted (core dumped)\n")
    assert _name(text) == "gpu.illegal_address"
