"""Rules read from the grammar of tool output rather than from message wordings --
TensorRT's logger severities, a CUDA error given by its number, the dynamic loader's errors, an NCCL
WARN the run recovered from, MLIR's legalization diagnostic on a Triton op, a compiler error inside a
library's run-time compile."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dbglog.diagnose import signatures as S


def name(text):
    m = S.classify_text(text)
    return m.name if m else None


# --- TensorRT: any line at error/fatal severity, in each logger's form; never a warning -----------

@pytest.mark.parametrize("line", [
    "[09/07/2021-15:54:19] [E] [TRT] Network has dynamic or shape inputs, but no optimization profile has been defined.",
    "[12/01/2023-10:00:00] [TRT] [E] 3: [executionContext.cpp::setInputShape::2257] Error Code 3: API Usage Error",
    "[TRT] [F] Something fatal happened",
    "[TensorRT] ERROR: INVALID_ARGUMENT: Can not find binding of given name",
    "[2020-08-20 11:03:50   ERROR] Network validation failed.",
    "[2020-08-20 11:03:50 INTERNAL_ERROR] Assertion failed: d.nbDims >= 1",
    "2020-07-14 11:29:28.4 [W:onnxruntime:Default, tensorrt_execution_provider.h:36 log] [2020-07-14 10:29:28   ERROR] "
    "Network has dynamic or shape inputs, but no optimization profile has been defined.",
])
def test_tensorrt_logger_error_severity_in_every_logger_form(line):
    assert name("loading engine\n" + line + "\nbye\n") == "tensorrt.error"


@pytest.mark.parametrize("line", [
    "[09/07/2021-15:54:19] [W] [TRT] Tensor DataType is determined at build time for tensors not marked as input or output.",
    "[TRT] [I] [MemUsageChange] Init CUDA: CPU +186, GPU +0, now: CPU 209, GPU 7830 (MiB)",
    "[TensorRT] WARNING: Explicit batch network detected and batch size specified, use execute without batch size instead.",
    "[2020-08-20 11:03:50 WARNING] Half2 support requested on hardware without native FP16 support",
    "[2021-01-01 10:00:00 ERROR] a log line of some other program with an unpadded severity",
])
def test_tensorrt_warnings_info_and_other_loggers_are_no_match(line):
    assert name(line + "\n") is None


def test_the_first_tensorrt_error_is_the_cause_not_the_failure_it_leads_to():
    m = S.classify_text("[2020-08-20 11:03:50   ERROR] Network has dynamic or shape inputs, but no optimization profile.\n"
                        "[2020-08-20 11:03:50   ERROR] Network validation failed.\n"
                        "terminate called after throwing an instance of 'std::runtime_error'\n  what():  Failed\n"
                        "Aborted (core dumped)\n")
    assert m.name == "tensorrt.error" and "optimization profile" in m.line


# --- a CUDA error by its number -----------------------------------------------------------------

@pytest.mark.parametrize("line,expected", [
    ("numba.cuda.cudadrv.driver.CudaAPIError: [700] Call to cuCtxSynchronize results in UNKNOWN_CUDA_ERROR",
     "gpu.illegal_address"),
    ("[719] Call to cuMemAlloc results in CUDA_ERROR_LAUNCH_FAILED", "gpu.launch_failure"),
    ("[torch_memory_saver.cpp] CUresult error  result=2 file=csrc/torch_memory_saver.cpp func=cu_mem_create", "oom.runtime"),
    ("CUDA error [716] in kernel launch", "gpu.misaligned"),
    ("cudaLaunchKernel failed with error code 209", "build.no_kernel_image"),
    ("cuInit returned error code: 804", "driver.init_failed"),
    ("hipMemcpy returned error code 700", "gpu.illegal_address"),
    ("main: CUDA error 719", "gpu.launch_failure"),
    ("Cuda failure 2", "oom.runtime"),
])
def test_cuda_error_numbers_are_named_like_their_texts(line, expected):
    assert name("step 1\n" + line + "\n") == expected


@pytest.mark.parametrize("line", [
    "CUDA error [1] somewhere",  # "invalid value" in both enumerations: says nothing certain
    "[999] Call to cuInit results in CUDA_ERROR_UNKNOWN_X",
    "the installer exited with error code 700",  # not about CUDA
    "cudaMalloc failed with error code 2.5",
])
def test_numbers_that_say_nothing_certain_are_no_match(line):
    m = S.classify_text(line + "\n")
    assert m is None or m.name not in {n for n, _ in S._CUDA_CODES.values()}


def test_the_text_of_the_same_error_is_not_outranked_by_its_number():
    m = S.classify_text("CUDA error: an illegal memory access was encountered\ncuda error code 700\n")
    assert m.name == "gpu.illegal_address" and m.line_no == 1


@settings(max_examples=60, deadline=None)
@given(code=st.integers(0, 1200), before=st.text(max_size=40), after=st.text(max_size=40))
def test_a_number_never_raises_and_a_known_one_always_gets_its_name(code, before, after):
    line = f"{before}\n[{code}] Call to cuCtxSynchronize results in X_ERROR\n{after}"
    m = S.classify_text(line)
    known = S._CUDA_CODES.get(code)
    if known and m is not None and m.signature == "gpu.error_code":
        assert m.name == known[0]
    if known and "\n" not in before and "\n" not in after and m is not None:
        assert m.rank >= known[1] or m.signature != "gpu.error_code"


# --- the dynamic loader ------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory",
    "OSError: /opt/bnb/libbitsandbytes_cpu.so: cannot open shared object file: No such file or directory",
    "ImportError: /x/libbitsandbytes_cpu.so: undefined symbol: cadam32bit_grad_fp32",
])
def test_the_loaders_errors_are_a_library_that_does_not_load(text):
    assert name(text + "\n") == "env.library_missing"


@pytest.mark.parametrize("text", [
    "ImportError: /venv/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi",
    "OSError: /venv/lib/python3.10/site-packages/torchaudio/lib/libtorchaudio.so: undefined symbol: _ZN2at4_ops5zeros4callE",
])
def test_an_extension_missing_a_symbol_of_torch_itself_was_built_against_another_torch(text):
    assert name(text + "\n") == "build.extension_torch_mismatch"


def test_a_loader_line_at_warning_severity_is_no_failure():
    tf = ("2021-03-01 12:00:00.1: W tensorflow/stream_executor/platform/default/dso_loader.cc:60] Could not load "
          "dynamic library 'libnvinfer.so.7'; dlerror: libnvinfer.so.7: cannot open shared object file: No such file\n")
    assert name(tf) is None
    assert name(tf + "ValueError: bad shape\n") is None or name(tf + "ValueError: bad shape\n") != "env.library_missing"
    glog = "W0311 10:00:00.000000 140 loader.cc:12] libfoo.so: cannot open shared object file: No such file\n"
    assert name(glog) is None


def test_the_container_hook_still_outranks_the_loader_words_it_carries():
    line = ("nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared "
            "object file: no such file or directory: unknown\n")
    assert name(line) == "driver.container_toolkit"


# --- NCCL: a WARN the same thread went on from is no failure -----------------------------------

WARN = "ai:480850:480850 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"


def test_a_warn_followed_by_the_same_threads_progress_is_an_advisory():
    assert name(WARN + "ai:480850:480850 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n") is None


def test_a_warn_followed_by_return_codes_is_the_failure():
    # (a shared-memory segment NCCL could not create has a signature of its own, nccl.shm_create: another WARN here)
    text = ("n1:97:183 [0] misc/utils.cc:72 NCCL WARN Error : ring 0 does not loop back to start (4 != 0)\n"
            "n1:97:183 [0] NCCL INFO transport/shm.cc:101 -> 2\nn1:97:183 [0] NCCL INFO init.cc:766 -> 2\n")
    assert name(text) == "nccl.warn"


def test_a_warn_alone_or_followed_only_by_other_threads_is_kept():
    assert name(WARN) == "nccl.warn"
    assert name(WARN + "ai:480852:480852 [2] NCCL INFO Using network Socket\n") == "nccl.warn"
    assert name("NCCL WARN Bootstrap : no socket interface found\nNCCL INFO something else\n") == "nccl.warn"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([WARN, "ai:480850:480850 [0] NCCL INFO Using network Socket\n",
                                 "ai:480850:480850 [0] NCCL INFO init.cc:1 -> 2\n", "noise\n", "\n"]), max_size=12))
def test_nccl_context_rule_never_raises(lines):
    S.classify_text("".join(lines))


# --- compilers: Triton's MLIR legalization, a library's run-time compile -----------------------

def test_mlir_legalization_failure_on_a_triton_op():
    text = ("error: failed to legalize operation 'tt.load' that was explicitly marked illegal\n"
            "Pass execution failedLLVM ERROR: Failed to translate TritonGPU to LLVM IR.\n")
    assert name(text) == "triton.compilation_error"
    assert name("error: failed to legalize operation 'func.call' that was explicitly marked illegal\n") is None


def test_a_compile_error_in_the_code_object_managers_temp_dir_is_the_librarys_runtime_build():
    comgr = r"C:\Temp\comgr-9004-512-cc9f7f\include\miopen_type_traits.hpp:151:10: fatal error: 'type_traits' file not found"
    text = ("MIOpen: Error [Compile] 'hiprtcCompileProgram(prog.get())' MIOpenBatchNorm.cpp: HIPRTC_ERROR_COMPILATION (6)\n"
            + comgr + "\nMIOpen Error: hipoc_program.cpp:204: Code object build failed. Source: MIOpenBatchNorm.cpp\n")
    m = S.classify_text(text)
    assert m.name == "miopen.error" and m.line_no == 1
    # a user's own extension build keeps the compiler's error as the cause
    assert name("csrc/ext.cu:12:3: error: 'x' was not declared in this scope\n") == "build.compile_error"


def test_a_librarys_assert_macro_in_the_assert_grammar_without_a_function():
    text = ("[nid03508:16050:0:16050]   eager_snd.c:25   Assertion `req->send.state.dt.offset == 0' failed\n"
            "==== backtrace ====\n    0  /opt/ucx/lib/libucs.so.0(ucs_fatal_error_message+0x68) [0x2aaace1dbd38]\n")
    m = S.classify_text(text)
    assert m.name == "cpp.assert" and m.line_no == 1
    assert name("the doc says: Assertion `x' failed is what you see\n") is None


def test_onnxruntime_call_macro_names_the_library_and_the_call():
    m = S.classify_text("[ONNXRuntimeError] : 1 : FAIL : Non-zero status code returned while running Conv node. "
                        "Status Message: CUDNN error executing cudnnConvolutionForward(s_.handle, &alpha)\n")
    assert m.signature == "cudnn.status" and m.name == "cudnn:cudnnConvolutionForward"
    assert S.classify_text("CUBLAS error executing cublasGemmEx(handle)\n").signature == "blas.status"


def test_old_torchs_cublas_message_is_read_as_the_cublas_status_it_stands_for():
    # (THC printed the status's description, not its name: one failure, worded by the torch version)
    old = S.classify_text("RuntimeError: cublas runtime error : the GPU program failed to execute at "
                          "/pytorch/aten/src/THC/THCBlas.cu:258\n")
    new = S.classify_text("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle)`\n")
    assert old.name == new.name == "cublas:CUBLAS_STATUS_EXECUTION_FAILED", (old.name, new.name)
    assert S.classify_text("RuntimeError: cublas runtime error : library not initialized at THCGeneral.cpp:250\n"
                           ).name == "cublas:CUBLAS_STATUS_NOT_INITIALIZED"


@pytest.mark.parametrize("line, expected", [
    ("CUDA Error at sort.cu:72 - operation failed due to a previous error during capture", "gpu.graph_capture"),
    ("CUDA error at raft/util/cudart_utils.hpp:148 - an illegal memory access was encountered", "gpu.illegal_address"),
    ("CUDA Error at main.cu:31 - invalid configuration argument", "gpu.cuda_failure"),
])
def test_the_cuda_check_macros_file_line_dash_text_form_is_named_by_its_text(line, expected):
    assert name("launching\n" + line + "\n") == expected


def test_xlas_stale_driver_linker_message_is_a_driver_older_than_the_ptx():
    line = ("2022-08-01 17:28:07.861579: E external/org_tensorflow/tensorflow/stream_executor/cuda/cuda_asm_compiler.cc:57]"
            " cuLinkAddData fails. This is usually caused by stale driver version.")
    assert name("Started run.\n" + line + "\n") == "driver.insufficient"


@pytest.mark.parametrize("log,expected", [
    # a program's own check macro: the code, then the runtime's text unquoted
    ("Cuda failure: 222 the provided PTX was compiled with an unsupported toolchain.\n/home/u/src/runtime.cu:1332\n"
     "Aborting...\n", "driver.insufficient"),
    # nccl-tests before "Test " was added to its check: "Cuda failure <file>:<line> '<text>'"
    ("nThread 1 nGpus 2 minBytes 33554432\nCuda failure common.cu:891 'invalid device ordinal'\n", "gpu.cuda_failure"),
])
def test_a_programs_own_cuda_check_lines_are_read_as_the_runtime_text_they_carry(log, expected):
    assert name(log) == expected
