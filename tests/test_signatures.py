"""The failure catalog: one realistic sample per category (text from the reference's sources),
precedence between wrappers and causes, user signatures, kernel-API logs."""
import sys

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dbglog.diagnose import signatures as S
from dbglog.util.errors import DbglogError
from conftest import REPROS

# category -> (sample lines, expected reported name)
SAMPLES = {
    "gpu.illegal_address": (["RuntimeError: CUDA error: an illegal memory access was encountered"], "gpu.illegal_address"),
    "gpu.device_assert": (["RuntimeError: CUDA error: device-side assert triggered"], "gpu.device_assert"),
    "gpu.device_assert.site": ([
        "/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [0,0,0], thread: [3,0,0] "
        "Assertion `-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"` failed.",
        "RuntimeError: CUDA error: device-side assert triggered"], "gpu.device_assert.site"),
    "gpu.misaligned": (["RuntimeError: CUDA error: misaligned address"], "gpu.misaligned"),
    "gpu.launch_failure": (["RuntimeError: HIP error: unspecified launch failure"], "gpu.launch_failure"),
    "gpu.illegal_instruction": (["RuntimeError: CUDA error: an illegal instruction was encountered"], "gpu.illegal_instruction"),
    "gpu.launch_timeout": (["RuntimeError: CUDA error: the launch timed out and was terminated"], "gpu.launch_timeout"),
    "build.no_kernel_image": (["RuntimeError: CUDA error: no kernel image is available for execution on the device"],
                              "build.no_kernel_image"),
    # (the cause torch warns of outranks the error it leads to)
    "build.no_arch_in_wheel": (["RuntimeError: CUDA error: no kernel image is available for execution on the device",
                                "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current "
                                "PyTorch installation."], "build.no_arch_in_wheel"),
    "runtime.cuda_in_forked_child": (["ERROR 03-02 11:20:41 worker.py:120] Exception in worker Proc while processing "
                                      "method init_device: Cannot re-initialize CUDA in forked subprocess. To use CUDA "
                                      "with multiprocessing, you must use the 'spawn' start method"],
                                     "runtime.cuda_in_forked_child"),
    "build.xformers_without_cuda": (["NotImplementedError: No operator found for `memory_efficient_attention_forward` "
                                     "with inputs:", "`cutlassF` is not supported because:",
                                     "    xFormers wasn't build with CUDA support"], "build.xformers_without_cuda"),
    "gpu.xformers_bf16_unsupported": (["NotImplementedError: No operator found for `memory_efficient_attention_forward` "
                                       "with inputs:", "`cutlassF-pt` is not supported because:",
                                       "    bf16 is only supported on A100+ GPUs"], "gpu.xformers_bf16_unsupported"),
    "build.bitsandbytes_windows": (["CUDA SETUP: Loading binary C:\\py\\Lib\\site-packages\\bitsandbytes\\libbitsandbytes_cuda118.so...",
                                    "argument of type 'WindowsPath' is not iterable"], "build.bitsandbytes_windows"),
    "gpu.xformers_gpu_too_new": (["NotImplementedError: No operator found for `memory_efficient_attention_forward` "
                                  "with inputs:", "`cutlassF-pt` is not supported because:",
                                  "    requires device with capability < (5, 0) but your GPU has capability (12, 0) (too new)"],
                                 "gpu.xformers_gpu_too_new"),
    "build.xformers_device_unsupported": (["NotImplementedError: No operator found for `memory_efficient_attention_forward` "
                                           "with inputs:", "`cutlassF` is not supported because:",
                                           "    device=mps (supported: {'cuda'})"], "build.xformers_device_unsupported"),
    "build.cuda_headers_missing": (["cc1plus: fatal error: cuda_runtime.h: No such file or directory",
                                    "compilation terminated.", "error: command 'nvcc' failed with exit status 1"],
                                   "build.cuda_headers_missing"),
    "build.cuda_version_mismatch": (["RuntimeError:", "The detected CUDA version (12.1) mismatches the version that was "
                                     "used to compile PyTorch (11.3). Please make sure to use the same CUDA versions."],
                                    "build.cuda_version_mismatch"),
    # (the warning names the cause of the "no kernel image" after it)
    "jax.library_too_old": (["CUDA backend failed to initialize: Found cuDNN version 8600, but JAX was built against "
                             "version 8906, which is newer. The copy of cuDNN that is installed must be at least as new "
                             "as the version against which JAX was built. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more "
                             "info.)"], "jax.library_too_old"),
    "jax.backend_init": (["CUDA backend failed to initialize: Unable to load cuPTI. Is it installed? (Set "
                          "TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)"],
                         "jax.backend_init"),
    "build.gpu_too_old": (["    Found GPU0 GeForce 820M which is of cuda capability 2.1.",
                           "    PyTorch no longer supports this GPU because it is too old.",
                           "RuntimeError: CUDA error: no kernel image is available for execution on the device"],
                          "build.gpu_too_old"),
    "build.xformers_torch_mismatch": (["WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:",
                                       "    PyTorch 2.3.0+cu121 with CUDA 1201 (you have 2.0.1+cu118)",
                                       "    Python  3.10.13 (you have 3.10.10)"], "build.xformers_torch_mismatch"),
    "build.extension_torch_mismatch": (["ImportError: /opt/venv/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-"
                                        "x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi"],
                                       "build.extension_torch_mismatch"),
    "build.bitsandbytes_binary": (["===================================BUG REPORT===================================",
                                   "bin /opt/venv/lib/python3.10/site-packages/bitsandbytes/libbitsandbytes_cpu.so",
                                   "CUDA SETUP: Loading binary /opt/venv/lib/python3.10/site-packages/bitsandbytes/"
                                   "libbitsandbytes_cpu.so..."], "build.bitsandbytes_binary"),
    "build.hip_no_binary": (["hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"],
                            "build.hip_no_binary"),
    "gpu.graph_capture": (["RuntimeError: CUDA error: operation not permitted when stream is capturing"], "gpu.graph_capture"),
    "gpu.error_name": ([
        "torch.AcceleratorError: CUDA error: an illegal memory access was encountered",
        "Search for `cudaErrorIllegalAddress' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html "
        "for more information."], "gpu.illegal_address"),
    "gpu.async_hint": (["CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace "
                        "below might be incorrect."], "gpu.async_hint"),
    "oom.torch_cuda": (["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB. GPU 0 has a total "
                        "capacity of 79.11 GiB of which 1.20 GiB is free."], "oom.torch_cuda"),
    "oom.mps": (["RuntimeError: MPS backend out of memory (MPS allocated: 17.10 GB, other allocations: 1.02 GB, max allowed: "
                 "18.13 GB). Tried to allocate 512.00 MB on private pool."], "oom.mps"),
    "oom.shm": (["ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
                 "RuntimeError: DataLoader worker (pid 4711) is killed by signal: Bus error. It is possible that "
                 "dataloader's workers are out of shared memory. Please try to raise your shared memory limit."], "oom.shm"),
    "build.torch_without_gpu": (["    raise AssertionError(\"Torch not compiled with CUDA enabled\")",
                                 "AssertionError: Torch not compiled with CUDA enabled"], "build.torch_without_gpu"),
    "gpu.nvlink_error": (["RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution"],
                         "gpu.nvlink_error"),
    "build.compile_error": (["/tmp/ext/csrc/attn.cu(212): error: identifier \"__hmax2\" is undefined",
                             "1 error detected in the compilation of \"/tmp/ext/csrc/attn.cu\".",
                             "ninja: build stopped: subcommand failed."], "build.compile_error"),
    "py.traceback_headerless": (["NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:",
                                 "     query       : shape=(1, 577, 16, 64) (torch.bfloat16)"],
                                "py.traceback:NotImplementedError"),
    "cpp.assert": (["GGML_ASSERT: ggml/src/ggml-cuda.cu:1257: to_fp32_cuda != nullptr"], "cpp.assert"),
    # (ggml's check that the build has code for this GPU outranks the launch failure it leads to)
    "build.no_device_code": (["/src/ggml/src/ggml-cuda/mmq.cuh:3001: ERROR: CUDA kernel mul_mat_q has no device code "
                              "compatible with CUDA arch 610. ggml-cuda.cu was compiled for: 750,800",
                              "CUDA error: unspecified launch failure"], "build.no_device_code"),
    "build.jax_cuda_library": (["RuntimeError: Unable to load cuDNN. Is it installed?"], "build.jax_cuda_library"),
    "oom.torch_hip": (["torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
                       "capacity of 191.98 GiB ... set PYTORCH_HIP_ALLOC_CONF=expandable_segments:True"], "oom.torch_hip"),
    "oom.exception_type": (["torch.cuda.OutOfMemoryError: Allocation on device 0 would exceed allowed memory."],
                           "oom.exception_type"),
    "oom.runtime": (["RuntimeError: CUDA error: out of memory"], "oom.runtime"),
    "oom.vllm_kv": (["ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
                     "when initializing the engine."], "oom.vllm_kv"),
    "oom.host_killer": (["[12345.678901] Out of memory: Killed process 4242 (python) total-vm:123456kB, "
                         "anon-rss:1234kB"], "oom.host_killer"),
    "rocm.memory_fault": (["Memory access fault by GPU node-2 (Agent handle: 0x5581e8e8a9c0) on address 0x7f1234560000. "
                           "Reason: Page not present or supervisor privilege."], "rocm.memory_fault"),
    "rocm.hw_exception": (["HW Exception by GPU node-1 (Agent handle: 0x55d3c0c0e000) reason :GPU Hang"], "rocm.hw_exception"),
    "rocm.queue_abort": ([":0:rocdevice.cpp            :2881: 4213051226 us: [pid:1234  tid:0x7f2a] Callback: Queue "
                          "0x7f2a4c000000 aborting with error : HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent "
                          "attempted to access memory beyond the largest legal address. code: 0x29"], "rocm.queue_abort"),
    "nccl.watchdog_timeout": (["[E ProcessGroupNCCL.cpp:474] [Rank 2] Watchdog caught collective operation timeout: "
                               "WorkNCCL(SeqNum=15173, OpType=ALLREDUCE, NumelIn=2048, NumelOut=2048, Timeout(ms)=1800000)"
                               " ran for 1800011 milliseconds before timing out."], "nccl.watchdog_timeout"),
    "nccl.watchdog_stuck": (["[rank0]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 0] ProcessGroupNCCL's watchdog got stuck "
                             "for 480 seconds without making progress in monitoring enqueued collectives."],
                            "nccl.watchdog_stuck"),
    "nccl.teardown": (["[rank1]:[E ProcessGroupNCCL.cpp:1834] Some NCCL operations have failed or timed out. Due to the "
                       "asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted data."],
                      "nccl.teardown"),
    "nccl.error": (["torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
                    "ProcessGroupNCCL.cpp:1970, unhandled cuda error (run with NCCL_DEBUG=INFO for details), "
                    "NCCL version 2.20.5"], "nccl.error"),
    "nccl.result_text": (["ncclSystemError: System call (e.g. socket, malloc) or external library call failed or "
                          "device error. Last error: unhandled system error"], "nccl.result_text"),
    "nccl.shm_create": (["ncclSystemError: System call (e.g. socket, malloc) or external library call failed or "
                         "device error.", "Last error:", "Error while creating shared memory segment /dev/shm/nccl-Xy12Ab "
                         "(size 9637888)"], "nccl.shm_create"),
    "build.trt_library_mismatch": (["[E] [TRT] 1: [raiiMyelinGraph.h::RAIIMyelinGraph::24] Error Code 1: Myelin "
                                    "(Compiled against cuBLASLt 11.5.2.0 but running against cuBLASLt 11.5.1.0.)"],
                                   "build.trt_library_mismatch"),
    "nccl.warn": (["node1:1234:5678 [0] transport/net_socket.cc:540 NCCL WARN NET/Socket : peer 10.0.0.2<44567> "
                   "message truncated"], "nccl.warn"),
    "nccl.network_error": (["torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
                            "NCCLUtils.hpp:317, remote process exited or there was a network error, NCCL version 2.21.5",
                            "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting "
                            "prematurely."], "nccl.network_error"),
    "triton.out_of_resources": (["triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 262144, "
                                 "Hardware limit: 232448. Reducing block sizes or `num_stages` may help."],
                                "triton.out_of_resources"),
    "triton.driver_error": (["RuntimeError: Triton Error [CUDA]: device kernel image is invalid"],
                            "triton.driver_error"),
    "kernel.xid": (["[ 1234.5678] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus."], "kernel.xid:79"),
    "kernel.hung_task": (["[ 3600.123] INFO: task python:4242 blocked for more than 120 seconds."], "kernel.hung_task"),
    "kernel.segfault": (["[ 99.1] python[4242]: segfault at 0 ip 00007f0000001234 sp 00007ffd00001234 error 4 in "
                         "libfoo.so[7f0000000000+1000]"], "kernel.segfault"),
    "kernel.amdgpu_ring_timeout": (["amdgpu 0000:03:00.0: [drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx timeout, "
                                    "signaled seq=123, emitted seq=125"], "kernel.amdgpu_ring_timeout"),
    "kernel.amdgpu_page_fault": (["amdgpu 0000:03:00.0: amdgpu: [gfxhub0] retry page fault (src_id:0 ring:0 vmid:8 "
                                  "pasid:32769, for process python pid 4242 thread python pid 4242)"],
                                 "kernel.amdgpu_page_fault"),
    "py.traceback": (["Traceback (most recent call last):", '  File "repro.py", line 3, in <module>',
                      '    raise ValueError("bad shape")', "ValueError: bad shape"], "py.traceback:ValueError"),
    "py.fatal": (["Fatal Python error: Segmentation fault", "", "Current thread 0x00007f1c2b3c4740 (most recent call first):",
                  '  File "repro.py", line 2 in <module>'], "py.fatal"),
    "py.faulthandler_timeout": (["Timeout (0:00:01)!", "Thread 0x00007f1c2b3c4740 (most recent call first):",
                                 '  File "repro.py", line 5 in <module>'], "py.faulthandler_timeout"),
    "cpp.terminate": (["terminate called after throwing an instance of 'c10::Error'", "  what():  invalid argument"],
                      "cpp.terminate"),
    "shell.signal": (["bash: line 1:  4242 Segmentation fault      (core dumped) python repro.py"], "shell.signal"),
    "gpu.coredump_written": (["[01:02:04.000] coredump: Writing ELF file to /tmp/cuda_coredump_h.42.0",
                              "[01:02:04.100] coredump: Writing done"], "gpu.coredump_written"),
    "cuda.exception": (["[01:02:03.456] coredump: Detected an exception of type CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS "
                        "(14)", "[01:02:04.000] coredump: Writing ELF file to /tmp/cuda_coredump_h.42.0"],
                       "gpu.illegal_address"),
    "gpu.ecc_error": (["RuntimeError: CUDA error: uncorrectable ECC error encountered"], "gpu.ecc_error"),
    "gpu.launch_out_of_resources": (["RuntimeError: CUDA error: too many resources requested for launch"],
                                    "gpu.launch_out_of_resources"),
    "build.rocblas_no_arch": (["rocBLAS error: Cannot read /opt/rocm/lib/rocblas/library/TensileLibrary.dat: Illegal "
                               "seek for GPU arch : gfx1030"], "build.rocblas_no_arch"),
    "build.invalid_device_function": (["RuntimeError: HIP error: invalid device function"],
                                      "build.invalid_device_function"),
    "gpu.error_code": (["numba.cuda.cudadrv.driver.CudaAPIError: [719] Call to cuCtxSynchronize results in "
                        "UNKNOWN_CUDA_ERROR"], "gpu.launch_failure"),
    "gpu.cuda_failure": (["node1:1234:5678 [0] NCCL INFO init.cc:1501 -> 1", "[rank7]: Last error:",
                          "[rank7]: Cuda failure 1 'invalid argument'"], "gpu.cuda_failure"),
    "rocm.wave_stop": (["wave_1: pc=0x7fd4f100d0e8 (stopped, reason: ASSERT_TRAP)", "Aborted (core dumped)"],
                       "rocm.assert_trap"),
    "blas.status": (["RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx( handle, "
                     "opa, opb, m, n, k, &falpha, a, CUDA_R_16F, lda, b, CUDA_R_16F, ldb, &fbeta, c, CUDA_R_16F, ldc, "
                     "CUDA_R_32F, CUBLAS_GEMM_DFALT_TENSOR_OP)`"], "cublas:CUBLAS_STATUS_EXECUTION_FAILED"),
    "cudnn.status": (["RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED"], "cudnn:CUDNN_STATUS_EXECUTION_FAILED"),
    "miopen.error": (["MIOpen Error: /MIOpen/src/ocl/convolutionocl.cpp:831: Forward Convolution cannot be executed "
                      "due to incorrect params"], "miopen.error"),
    "miopen.status": (["RuntimeError: miopenStatusUnknownError"], "miopen:miopenStatusUnknownError"),
    "nccl.aborted": (["RuntimeError: NCCL communicator was aborted on rank 3."], "nccl.aborted"),
    "triton.compilation_error": (["backend='inductor' raised:", "CompilationError: at 8:11:",
                                  "def triton_poi_fused__to_copy_1(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):"],
                                 "triton.compilation_error"),
    "kernel.amdgpu_mes": (["[127037.563935] amdgpu 0000:c5:00.0: amdgpu: MES failed to respond to msg=REMOVE_QUEUE"],
                          "kernel.amdgpu_mes"),
    "elastic.rank_killed": (["  exitcode  : -9 (pid: 14750)", "  error_file: <N/A>",
                             "  traceback : Signal 9 (SIGKILL) received by PID 14750"], "elastic.rank_killed:SIGKILL"),
    "elastic.child_failed": (["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
                              "train.py FAILED"], "elastic.child_failed"),
    "cpp.check_failed": (["F0525 12:35:32.850440 182776 syncedmem.cpp:71] Check failed: error == cudaSuccess (2 vs. 0)"],
                         "cpp.check_failed"),
    "ucx.signal": (["[node-07:3039 :0:3095] Caught signal 7 (Bus error: nonexistent physical address)",
                    "==== backtrace (tid:   3095) ====", " 0 0x0000000000043090 killpg()  ???:0"], "ucx.signal:SIGBUS"),
    "gdb.signal": (['Thread 1 "python3" received signal SIGSEGV, Segmentation fault.', "0x00007fb8000055ae in ?? ()"],
                   "gdb.signal:SIGSEGV"),
    "sglang.child_failed": (["[2025-02-21 22:59:28] Received sigquit from a child process. It usually means the child "
                             "failed."], "sglang.child_failed"),
    "vllm.engine_init": (["RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}"],
                         "vllm.engine_init"),
    "vllm.engine_dead": (["vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace "
                          "(above) for the root cause."], "vllm.engine_dead"),
    "ray.worker_died": (["(raylet) A worker died or was killed while executing a task by an unexpected system error. "
                         "Worker PID: 5120 Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly "
                         "exits with a connection error code 2. End of file."], "ray.worker_died"),
    "test.pytest_failed": (["FAILED tests/test_model.py::test_forward - assert 1 == 2",
                            "========================= 1 failed, 3 passed in 0.12s ========================="],
                           "test.pytest_failed"),
    "test.pytest_timeout": (["+++++++++++++++++++++++++++++++++++ Timeout +++++++++++++++++++++++++++++++++++",
                             "FAILED tests/test_x.py::test_hang - Failed: Timeout (>1.0s) from pytest-timeout."],
                            "test.pytest_timeout"),
    "sanitizer.memcheck": (["========= COMPUTE-SANITIZER", "========= Invalid __global__ write of size 4 bytes",
                            "=========     at 0x70 in kernel(int*)",
                            "=========     Address 0x7f0000000400 is out of bounds", "========= ERROR SUMMARY: 1 error"],
                           "sanitizer.memcheck"),
    "sanitizer.racecheck": (["========= Error: Race reported between Write access at 0x1a0 in kernel(float*) and Read "
                             "access at 0x1d0 in kernel(float*) [4 hazards]",
                             "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)"], "sanitizer.racecheck"),
    "sanitizer.initcheck": (["========= Uninitialized __global__ memory read of size 4 bytes"], "sanitizer.initcheck"),
    "sanitizer.summary": (["========= ERROR SUMMARY: 3 errors"], "sanitizer.summary"),
    "sanitizer.asan": (["==4242==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000014 at pc 0x55",
                        "SUMMARY: AddressSanitizer: heap-buffer-overflow repro.c:5 in main"], "sanitizer.asan"),
    "sanitizer.tsan": (["WARNING: ThreadSanitizer: data race (pid=4242)"], "sanitizer.tsan"),
    "sanitizer.ubsan": (["repro.c:5:12: runtime error: signed integer overflow: 2147483647 + 1 cannot be represented "
                         "in type 'int'"], "sanitizer.ubsan"),
    "numeric.nan_anomaly": (["RuntimeError: Function 'MulBackward0' returned nan values in its 0th output."],
                            "numeric.nan_anomaly"),
    "numeric.nan_stats": (["      min=-1.5 max=nan mean=nan nan_count=12 inf_count=0"], "numeric.nan_stats"),
    "numeric.loss_nan": (["Epoch 3: 100%|####| 320/320 [00:21<00:00, 14.77it/s, loss=nan, v_num=0]"], "numeric.loss_nan"),
    "numeric.loss_scale_min": (["[2025-03-02 10:11:12] [INFO] [loss_scaler.py:183:update_scale] Grad overflow on iteration 40",
                                "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run."],
                               "numeric.loss_scale_min"),
    "driver.insufficient": (["RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version"],
                            "driver.insufficient"),
    "driver.no_driver": (["RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU"],
                         "driver.no_driver"),
    "driver.no_device": (["RuntimeError: No CUDA GPUs are available"], "driver.no_device"),
    "driver.init_failed": (["RuntimeError: CUDA error: initialization error"], "driver.init_failed"),
    "driver.container_toolkit": (["nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: "
                                  "cannot open shared object file: no such file or directory: unknown"],
                                 "driver.container_toolkit"),
    "env.library_missing": (["Could not load library cudnn_ops_infer64_8.dll. Error code 126",
                             "Please make sure cudnn_ops_infer64_8.dll is in your library path!"], "env.library_missing"),
    "tensorrt.error": (["[E] [TRT] 2: [myelinBuilderUtils.cpp::operator()::387] Error Code 2: Internal Error "
                        "(Assertion x failed. )", "[E] Engine could not be created from network"], "tensorrt.error"),
    "mps.failed_assertion": (["/AppleInternal/Library/BuildRoots/x/MPSCore/Types/MPSNDArray.mm:850: failed assertion "
                              "`[MPSNDArray initWithDevice:descriptor:] Error: total bytes of NDArray > 2**32'"],
                             "mps.failed_assertion"),
    "gpu.device_lost": (["Unable to determine the device handle for GPU0000:03:00.0: Unknown Error"], "gpu.device_lost"),
    "mps.unsupported_op": (["NotImplementedError: The operator 'aten::_linalg_eigh.eigenvalues' is not currently "
                            "implemented for the MPS device. As a temporary fix, you can set the environment variable "
                            "`PYTORCH_ENABLE_MPS_FALLBACK=1`"], "mps.unsupported_op"),
    "trtllm.error": (["[TensorRT-LLM][ERROR] Assertion failed: mNextBlocks.empty() "
                      "(/src/tensorrt_llm/cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp:160)"], "trtllm.error"),
    "nvml.no_permission": (["pynvml.NVMLError_NoPermission: Insufficient Permissions"], "nvml.no_permission"),
    "cpp.heap_corruption": (["free(): double free detected in tcache 2", "Aborted (core dumped)"], "cpp.heap_corruption"),
    "numeric.nonfinite_loss": (['  File "train_loop.py", line 254, in _detect_anomaly', "    raise FloatingPointError(",
                                "FloatingPointError: Loss became infinite or NaN at iteration=1029!"],
                               "numeric.nonfinite_loss"),
    "numeric.floating_point": (["FloatingPointError: invalid value encountered in divide"], "numeric.floating_point"),
    "compile.register_allocation": (["RuntimeError: Internal Triton PTX codegen error: ",
                                     "ptxas fatal   : (C7600) Register allocation failed with register count of '64'. "
                                     "Compile the program with a higher register target",
                                     "ptxas fatal   : Ptx assembly aborted due to errors"], "compile.register_allocation"),
    "compile.ptxas": (["ptxas error   : Entry function '_Z6kernelPf' uses too much shared data (0xc400 bytes, 0xc000 max)",
                       "make[3]: *** [CMakeFiles/k.dir/build.make:314: k.cu.o] Error 255"], "compile.ptxas"),
    "triton.ptx_codegen": (["triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error"],
                           "triton.ptx_codegen"),
    "nccl.collective_hang": (['Thread 4242 (idle): "MainThread"', "    all_reduce (torch/distributed/distributed_c10d.py:2050)",
                              "    train_step (train.py:88)"], "nccl.collective_hang"),
}


def test_every_catalog_entry_has_a_sample_and_there_are_at_least_49():
    assert set(SAMPLES) == set(S.CATEGORY_NAMES)
    assert len(S.CATEGORY_NAMES) >= 49
    assert len(set(S.CATEGORY_NAMES)) == len(S.CATEGORY_NAMES)


@pytest.mark.parametrize("category", sorted(SAMPLES))
def test_sample_classifies(category):
    lines, expected = SAMPLES[category]
    text = "some startup noise\nloading model...\n" + "\n".join(lines) + "\nexiting\n"
    m = S.classify_text(text)
    assert m is not None and m.name == expected
    assert m.line_no >= 3  # points at the error line, not the noise
    assert m.key_lines[0] == (m.line_no, m.line)


def test_unknown_error_token_keeps_the_token():
    m = S.classify_text("Search for `cudaErrorCooperativeLaunchTooLarge' in https://docs.nvidia.com for more.")
    assert m.name == "gpu.error:cudaErrorCooperativeLaunchTooLarge"


def test_app_xid_ranks_below_the_cuda_error_but_hardware_xid_above():
    app = "NVRM: Xid (PCI:0000:3b:00): 13, pid=1, Graphics SM Warp Exception\nRuntimeError: CUDA error: an illegal memory access was encountered\n"
    assert S.classify_text(app).name == "gpu.illegal_address"
    hw = app.replace(": 13,", ": 79,")
    assert S.classify_text(hw).name == "kernel.xid:79"


NCCL_WRAPPING = """\
[rank0]:[E ProcessGroupNCCL.cpp:1537] [PG 0 Rank 0] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1
Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:43 (most recent call first):
terminate called after throwing an instance of 'c10::DistBackendError'
  what():  [PG 0 Rank 0] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered
[rank1]:[E ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=15, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600083 milliseconds before timing out.
[rank1]:[E ProcessGroupNCCL.cpp:1834] Some NCCL operations have failed or timed out.
Aborted (core dumped)
"""

VLLM_ROOT_CAUSE = """\
(EngineCore_DP0 pid=2345) ERROR 11-21 09:12:03 [core.py:700] EngineCore failed to start.
(EngineCore_DP0 pid=2345) Traceback (most recent call last):
(EngineCore_DP0 pid=2345)   File "/opt/vllm/v1/engine/core.py", line 691, in run_engine_core
(EngineCore_DP0 pid=2345)     raise ValueError(msg)
(EngineCore_DP0 pid=2345) ValueError: The model's max seq len (131072) is larger than the maximum number of tokens that can be stored in KV cache (40000).
Traceback (most recent call last):
  File "/opt/vllm/entrypoints/llm.py", line 12, in <module>
    llm = LLM(model)
RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}
"""


def test_nccl_watchdog_wrapping_illegal_address_reports_illegal_address():
    m = S.classify_text(NCCL_WRAPPING)
    assert m.name == "gpu.illegal_address"
    assert m.line_no == 1
    assert "nccl.watchdog_timeout" in m.others and "cpp.terminate" in m.others


def test_vllm_see_root_cause_above_reports_the_root_cause():
    m = S.classify_text(VLLM_ROOT_CAUSE)
    # the root cause is the ValueError: a KV cache too small for max_model_len, which has its own name
    assert m.name == "oom.vllm_kv" and m.outcome == "oom"
    assert "max seq len" in m.line
    assert "vllm.engine_init" in m.others and "py.traceback:ValueError" in m.others


def test_pytest_summary_ranks_below_the_exception():
    text = "E       ValueError: shapes differ\n\nFAILED tests/test_a.py::test_b - ValueError: shapes differ\n"
    assert S.classify_text(text).name == "py.traceback:ValueError"


def test_chained_traceback_reports_the_first_cause():
    text = ("Traceback (most recent call last):\nKeyError: 'w'\n\nDuring handling of the above exception, another "
            "exception occurred:\n\nTraceback (most recent call last):\nTypeError: bad\n")
    assert S.classify_text(text).name == "py.traceback:KeyError"


def test_exception_line_without_traceback_header_is_not_a_traceback():
    assert S.classify_text("ValueError: just a log line mentioning an error\n") is None


def test_no_match_and_bytes_input():
    assert S.classify_text("all good\n") is None
    assert S.classify_text(b"\xff\xfe RuntimeError: CUDA error: misaligned address\n").name == "gpu.misaligned"


def test_catastrophic_inputs_are_fast():
    import time

    t = time.process_time()  # CPU time of this process: the other processes of a loaded machine add none
    S.classify_text("x" * 2_000_000 + "[" + "a" * 100_000 + "\n" * 10)
    S.classify_text(("FAILED " + "a" * 5000 + "\n") * 200)
    assert time.process_time() - t < 5


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_classify_never_raises_on_text(text):
    m = S.classify_text(text)
    assert m is None or (m.name and m.line_no >= 1)


@settings(max_examples=200, deadline=None)
@given(st.binary())
def test_classify_never_raises_on_bytes(data):
    S.classify_text(data)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([l for v in SAMPLES.values() for l in v[0]] + ["noise", "", "Traceback (most recent call last):"]), max_size=12))
def test_classify_mixed_catalog_lines_never_raises(lines):
    m = S.classify_text("\n".join(lines))
    if m is not None:
        assert 1 <= m.line_no <= len(lines)


# --- user signatures -------------------------------------------------------------------------

def test_user_signatures_roundtrip_and_preserve_existing_content(tmp_path):
    cfg = tmp_path / ".dbglog" / "config.toml"
    cfg.parent.mkdir()
    original = "# my settings\n[run]\ntimeout = 30  # seconds\n"
    cfg.write_text(original)
    S.add_user_signature(cfg, "myapp.bad_kv", r"KV cache corrupted at block (\d+)", rank=88)
    S.add_user_signature(cfg, "myapp.quote", r"it's \d+ o'clock")
    text = cfg.read_text()
    assert text.startswith(original)
    sigs = S.load_user_signatures(cfg)
    assert [(s.name, s.rank) for s in sigs] == [("myapp.bad_kv", 88), ("myapp.quote", S.DEFAULT_USER_RANK)]
    m = S.classify_text("RuntimeError: CUDA error: out of memory\nKV cache corrupted at block 7\n", S.all_signatures(cfg))
    assert m.name == "myapp.bad_kv"
    assert S.classify_text("it's 5 o'clock", S.all_signatures(cfg)).name == "myapp.quote"


def test_user_signature_errors_are_clear(tmp_path):
    cfg = tmp_path / "config.toml"
    with pytest.raises(DbglogError, match="invalid regex"):
        S.add_user_signature(cfg, "x", "(unclosed")
    with pytest.raises(DbglogError, match="rank"):
        S.add_user_signature(cfg, "x", "ok", rank=500)
    S.add_user_signature(cfg, "x", "ok")
    with pytest.raises(DbglogError, match="already exists"):
        S.add_user_signature(cfg, "x", "other")
    cfg.write_text("[[signature]]\nname = 'y'\n")
    with pytest.raises(DbglogError, match="pattern"):
        S.load_user_signatures(cfg)
    cfg.write_text("this is = = not toml")
    with pytest.raises(DbglogError, match="cannot read"):
        S.load_user_signatures(cfg)
    assert S.load_user_signatures(tmp_path / "missing.toml") == []


# --- kernel-API logs -------------------------------------------------------------------------

SGLANG_LOG = """\
================================================================================
[2026-03-19 00:47:06] SGLang Kernel API Call: RMSNorm.forward
Positional input arguments:
  arg[0]=Tensor(
      shape=(1, 1024)
      dtype=torch.bfloat16 / device=cuda:0 / requires_grad=False / is_contiguous=True
    )
Output:
  return=Tensor(...)
================================================================================
[2026-03-19 00:47:06] SGLang Kernel API Call: sglang.quant_method.UnquantizedLinearMethod.apply
Positional input arguments:
  arg[0]=Tensor(
      shape=(1, 1024)
    )
"""

FLASHINFER_LOG = """\
[2026-03-19 00:47:05] FlashInfer API Logging - System Information
================================================================================
[2026-03-19 00:47:06] FlashInfer API Call: BatchDecodeWithPagedKVCacheWrapper.run
--------------------------------------------------------------------------------
Positional input arguments:
  arg[0]:
    Tensor(
      shape=(4, 32, 128) min=0 max=1 mean=0.5 nan_count=0 inf_count=0
    )
Output value:
  Tensor(...)
================================================================================
"""


def test_sglang_in_flight_boundary():
    b = S.parse_kernel_api_log(SGLANG_LOG)
    assert (b.framework, b.name, b.status, b.calls, b.line_no) == (
        "SGLang Kernel", "sglang.quant_method.UnquantizedLinearMethod.apply", "in_flight", 2, 11)


def test_flashinfer_completed_and_sglang_exception_and_level1():
    b = S.parse_kernel_api_log(FLASHINFER_LOG)
    assert (b.framework, b.name, b.status) == ("FlashInfer", "BatchDecodeWithPagedKVCacheWrapper.run", "completed")
    exc = SGLANG_LOG + "[2026-03-19 00:47:07] SGLang Kernel API Exception: sglang.quant_method.UnquantizedLinearMethod.apply (RuntimeError: CUDA error: misaligned address)\n"
    b = S.parse_kernel_api_log(exc)
    assert b.status == "exception" and b.exception == "RuntimeError: CUDA error: misaligned address"
    level1 = "[2026-03-19 00:47:06] FlashInfer API Call: a\n[2026-03-19 00:47:06] FlashInfer API Call: b\n"
    b = S.parse_kernel_api_log(level1)
    assert (b.name, b.status) == ("b", "started")
    assert S.parse_kernel_api_log("nothing here") is None


# --- every category through a real subprocess -------------------------------------------------

@pytest.mark.parametrize("category", sorted(SAMPLES))
def test_sample_through_real_subprocess(category, tmp_path, pid_dir):
    from dbglog.run import runner
    from conftest import assert_none_alive

    lines, expected = SAMPLES[category]
    f = tmp_path / "lines.txt"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = runner.run([sys.executable, str(REPROS / "emit.py"), str(f), "1"], run_dir=tmp_path / "run",
                   timeout=20, grace=1, echo=False, git_info=False)
    assert r.signature == expected
    assert r.outcome == ("oom" if category.startswith("oom.") else "fail")
    assert r.exit_code == 1
    assert_none_alive(pid_dir)


# --- field wordings, precedence, speed and safety (issue 12) ------------------------------------

def test_older_and_newer_wordings_of_the_same_fault():
    for line in ("Memory access fault by GPU node-2 on address (nil). Reason: unknown.",
                 "Memory access fault by GPU node-9 (Agent handle: 0x32463c0) on address 0x1544",
                 "Memory access fault by GPU node-2 (Agent handle: 0x3596e2c0) on address 0x7f9de440f000"
                 "(may not be exact address). Reason: Write access to a read-only page.",
                 "OFFLOAD ERROR: memory access fault by GPU 4 (agent 0x55555896f810) at virtual address "
                 "0x7ffb61f02000. Reasons: Write access to a read-only page"):
        assert S.classify_text(line + "\nAborted (core dumped)\n").name == "rocm.memory_fault", line
    ecc = "Memory access fault by GPU node-4 (Agent handle: 0x5) on address 0x7f12. Reason: DRAM ECC failure.\n"
    assert S.classify_text(ecc).rank == 94
    for line in (":0:rocdevice.cpp :2672: 0696142325 us: 5999 : [tid:0x7f67] Device::callbackQueue aborting with error : "
                 "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the largest "
                 "legal address. code: 0x29",
                 "rocdevice.cpp Callback: Queue 0x7fc220400000 aborting with error : HSA_STATUS_ERROR_EXCEPTION: An "
                 "HSAIL operation resulted in a hardware exception. code: 0x1016"):
        assert S.classify_text(line).name == "rocm.queue_abort"
    assert S.classify_text("hip_code_object.cpp:92: guarantee(false && \"hipErrorNoBinaryForGpu: Coudn't find binary "
                           "for current devices!\")").name == "build.hip_no_binary"
    old_watchdog = ("[E ProcessGroupNCCL.cpp:566] [Rank 1] Watchdog caught collective operation timeout: "
                    "WorkNCCL(OpType=BROADCAST, Timeout(ms)=1800000) ran for 1803304 milliseconds before timing out.")
    assert S.classify_text(old_watchdog).name == "nccl.watchdog_timeout"


def test_nccl_numeric_cuda_failure_and_cuda_gdb_name_the_fault():
    text = ("node1:1:2 [0] enqueue.cc:1556 NCCL WARN Cuda failure 700 'an illegal memory access was encountered'\n"
            "Aborted (core dumped)\n")
    assert S.classify_text(text).name == "gpu.illegal_address"
    text = ("CUDA Exception: Warp Illegal Address\nThe exception was triggered at PC 0x7ff533bb91d0\n"
            "Thread 1 \"python\" received signal CUDA_EXCEPTION_14, Warp Illegal Address.\n")
    m = S.classify_text(text)
    assert (m.name, m.line_no) == ("gpu.illegal_address", 1)
    assert "gdb.signal" not in " ".join(m.others)


def test_torchrun_sigkill_beats_child_failed_wrapper_and_oom_killer_beats_both():
    child = ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
             "  exitcode  : -9 (pid: 14750)\n  traceback : Signal 9 (SIGKILL) received by PID 14750\n")
    text = "Traceback (most recent call last):\n  File \"/bin/torchrun\", line 8, in <module>\n" + child
    m = S.classify_text(text)
    assert m.name == "elastic.rank_killed:SIGKILL" and "elastic.child_failed" in m.others
    m = S.classify_text(text + "[1.0] Out of memory: Killed process 14750 (python) total-vm:1kB\n")
    assert m.name == "oom.host_killer"


def test_aborted_and_fatal_aborted_are_consequences():
    text = "Fatal Python error: Aborted\n\nTraceback (most recent call last):\n  File \"x.py\", line 1\nValueError: x\n"
    assert S.classify_text(text).name == "py.traceback:ValueError"
    assert S.classify_text("Fatal Python error: Segmentation fault\n").rank > 60


def test_vllm_and_k8s_prefixes_in_front_of_exceptions():
    pre = "(VllmWorker rank=1 pid=12231) ERROR 03-25 21:13:53 [multiproc_executor.py:374] "
    text = pre + "Traceback (most recent call last):\n" + pre + '  File "a.py", line 1, in f\n' + pre + "KeyError: 'w'\n"
    assert S.classify_text(text).name == "py.traceback:KeyError"
    k8s = "2025-07-25T07:53:08.21748708+08:00 stdout F "
    text = k8s + "Traceback (most recent call last):\n" + k8s + "  File \"a.py\"\n" + k8s + "TypeError: bad\n"
    assert S.classify_text(text).name == "py.traceback:TypeError"


def test_giant_line_is_looked_at_through_a_window():
    text = "x" * 3_000_000 + " RuntimeError: CUDA error: misaligned address " + "y" * 3_000_000 + "\n"
    m = S.classify_text(text)
    assert m.name == "gpu.misaligned" and m.line_no == 1 and len(m.line) <= 4200


def test_repetitive_big_log_is_grouped_and_finds_late_distinct_lines():
    noise = "".join(f"INFO step {i} loss 0.{i % 97:02d} addr 0x{i:08x}\n" for i in range(60_000))
    xids = "".join(f"NVRM: Xid (PCI:0000:3b:00): 13, pid={i}, Graphics SM Warp Exception\n" for i in range(300))
    text = noise + xids + "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n" + noise
    m = S.classify_text(text)
    assert m.name == "kernel.xid:79" and m.line_no == 60_000 + 300 + 1
    assert "kernel.xid:13" in m.others


def test_twenty_megabytes_classify_quickly():
    import time

    block = ("INFO 11-21 09:12:03 [core.py:700] step 1 loss=0.1 lr=1e-4 throughput 123.4 tokens/s\n"
             "node1:1234:5678 [0] NCCL INFO Channel 00/04 :    0   1   2   3\n")
    text = (block * (20_000_000 // len(block))).encode() + b"RuntimeError: CUDA error: an illegal memory access was encountered\n"
    t = time.process_time()  # CPU time of this process: the other processes of a loaded machine add none
    m = S.classify_text(text)
    assert m.name == "gpu.illegal_address"
    assert time.process_time() - t < 3.0


def test_hub_lookup_finds_what_the_direct_lookup_finds(monkeypatch):
    """Big texts look needles up among the lines holding their hub: force that path on every sample."""
    assert all(h in n for n, h in S._HUB_OF.items())
    monkeypatch.setattr(S, "_HUB_MIN_TEXT", 0)
    for category, (lines, expected) in SAMPLES.items():
        text = "some startup noise\n" + "\n".join(lines) + "\nexiting\n"
        m = S.classify_text(text)
        assert m is not None and m.name == expected, category


def test_hub_cover_has_no_chains_and_the_fork_split_keeps_hub_groups_together(monkeypatch):
    # A needle used as a hub is its own hub (its one pass is shared), never another hub's member.
    hubs = set(S._HUB_OF.values())
    assert all(S._HUB_OF.get(h, h) == h for h in hubs)
    assert S._HUB_OF.get("NCCL WARN ") == " WARN " and S._HUB_OF.get(" WARN ") == " WARN "
    monkeypatch.setattr(S, "_HUB_MIN_TEXT", 0)
    t = S._Text(b"x\n" * 10)
    todo = list(dict.fromkeys(n for sig in S.BUILTIN for ns in sig.needles for n in ns))
    a, b = t._split(todo)
    assert sorted(a + b) == sorted(todo)
    for h in hubs:
        sides = {0 if n in a else 1 for n in todo if S._HUB_OF.get(n) == h}
        assert len(sides) <= 1, h
    assert abs(len(a) - len(b)) < len(todo) // 2


CATASTROPHIC = r"(a+)+$"


def test_user_pattern_that_backtracks_is_skipped_and_named_main_thread(tmp_path):
    import time

    cfg = tmp_path / "config.toml"
    S.add_user_signature(cfg, "my.slow", CATASTROPHIC, rank=90)
    text = "a" * 40 + "b\nRuntimeError: CUDA error: misaligned address\n"
    warnings = []
    t = time.process_time()  # CPU time: the budget stopped the backtracking, whatever the load
    m = S.classify_text(text, S.all_signatures(cfg), warnings=warnings, budget=0.3)
    assert time.process_time() - t < 5
    assert m.name == "gpu.misaligned"
    assert warnings and "my.slow" in warnings[0] and CATASTROPHIC in warnings[0]
    assert m.warnings == warnings


def test_user_pattern_budget_off_the_main_thread(tmp_path):
    import threading
    import time

    cfg = tmp_path / "config.toml"
    S.add_user_signature(cfg, "my.slow", CATASTROPHIC, rank=90)
    S.add_user_signature(cfg, "my.ok", r"KV cache corrupted at block (\d+)", rank=88)
    text = "a" * 40 + "b\nKV cache corrupted at block 7\n"
    out = {}

    def work():
        w = []
        t = time.perf_counter()
        out["m"] = S.classify_text(text, S.all_signatures(cfg), warnings=w, budget=0.5)
        out["w"], out["t"] = w, time.perf_counter() - t

    th = threading.Thread(target=work)
    th.start()
    th.join(120)
    assert out["m"].name == "my.ok" and out["m"].line_no == 2
    assert len(out["w"]) == 1 and "my.slow" in out["w"][0]
    # stopped, not run out (2**40 steps): the child's CPU budget, within the wall bound of a starved machine
    assert out["t"] < 60


def test_user_pattern_with_sigalrm_taken_uses_a_child(tmp_path):
    import signal

    cfg = tmp_path / "config.toml"
    S.add_user_signature(cfg, "my.slow", CATASTROPHIC, rank=90)
    old = signal.signal(signal.SIGALRM, lambda *a: None)
    try:
        w = []
        m = S.classify_text("a" * 40 + "b\n", S.all_signatures(cfg), warnings=w, budget=0.3)
    finally:
        signal.signal(signal.SIGALRM, old)
    assert m is None and w and "my.slow" in w[0]


SGLANG_MULTILINE_EXC = SGLANG_LOG + """\
[2026-03-19 00:47:07] SGLang Kernel API Exception: sglang.quant_method.UnquantizedLinearMethod.apply (AcceleratorError: CUDA error: an illegal memory access was encountered
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1
Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.
)
"""


def test_sglang_multiline_exception_is_not_in_flight():
    b = S.parse_kernel_api_log(SGLANG_MULTILINE_EXC)
    assert (b.name, b.status) == ("sglang.quant_method.UnquantizedLinearMethod.apply", "exception")
    assert b.exception.startswith("AcceleratorError: CUDA error: an illegal memory access was encountered")
    assert b.inputs == [{"arg": "arg[0]", "shape": "(1,1024)", "dtype": None, "device": None}]
    abridged = SGLANG_LOG + "[2026-03-19 00:47:07] SGLang Kernel API Exception: sglang.x\n"
    assert S.parse_kernel_api_log(abridged).status == "exception"


def test_kernel_api_inputs_and_dump_dir():
    log = ("[2026-03-19 00:47:06] FlashInfer API Call: BatchDecodeWithPagedKVCacheWrapper.run\n"
           "Positional input arguments:\n  arg[0]:\n    Tensor(\n      shape=(4, 32, 128) dtype=torch.bfloat16 "
           "device=cuda:0\n    )\n  arg[1]=Tensor(shape=(2,), dtype=torch.int64, device=cuda:0)\n"
           "Inputs dumped to: /tmp/fi_dumps/20260319_004706_123_pid42_run_call0007\n")
    b = S.parse_kernel_api_log(log)
    assert b.status == "in_flight" or b.status == "started"
    assert [(i["arg"], i["shape"], i["dtype"]) for i in b.inputs] == [
        ("arg[0]", "(4,32,128)", "torch.bfloat16"), ("arg[1]", "(2,)", "torch.int64")]
    assert b.dump_dir == "/tmp/fi_dumps/20260319_004706_123_pid42_run_call0007"


def test_driver_and_nan_signatures_carry_playbook_advice():
    from dbglog.run import advice as A

    def ids(sig):
        run = {"id": "r1", "cmd": ["python", "train.py"], "outcome": "fail", "signature": sig, "evidence": [],
               "env_overrides": {}, "duration_s": 1.0, "key_lines": []}
        return [a["id"] for a in A.advise(A.Context(run), A.load(None))]

    for sig in ("driver.insufficient", "driver.no_driver", "driver.no_device", "driver.init_failed"):
        assert "driver-setup" in ids(sig) and "loss-nan-first-step" not in ids(sig)
        assert S.describe(sig) is not None
    assert ids("numeric.loss_nan") == ["loss-nan-first-step"]
    assert "driver-setup" not in ids("gpu.illegal_address")


_COLOURS = st.sampled_from(["\x1b[0m", "\x1b[31m", "\x1b[1;36m", "\x1b[0;0m", "\x1b[38;5;208m", "\x1b[K"])


@settings(max_examples=40, deadline=None)
@given(category=st.sampled_from(sorted(SAMPLES)), pre=_COLOURS, post=_COLOURS, crlf=st.booleans())
def test_colour_codes_and_crlf_around_lines_do_not_change_the_verdict(category, pre, post, crlf):
    """Loggers colour whole lines and Windows consoles end them with CRLF: the verdict is the same."""
    lines, expected = SAMPLES[category]
    nl = "\r\n" if crlf else "\n"
    text = "some startup noise" + nl + nl.join(pre + ln + post for ln in lines) + nl + "exiting" + nl
    m = S.classify_text(text)
    assert m is not None and m.name == expected, (category, text)
    assert "\x1b" not in m.line and not m.line.endswith("\r")


def test_traceback_without_its_header_still_names_the_exception():
    # a pasted log that starts mid-traceback: the last frame, its code line, then the exception
    text = ('  File "/srv/app/worker.py", line 88, in run\n'
            "    torch.cuda.set_device(rank)\n"
            "KeyError: 'rank'\n")
    m = S.classify_text(text)
    assert m is not None and m.name == "py.traceback:KeyError"
    # frames with no exception line after them (truncated) and exception words in prose name nothing
    assert S.classify_text('  File "a.py", line 3, in f\n    g()\n') is None
    assert S.classify_text("the docs say a KeyError: 'x' is raised when the key is missing\n") is None


def test_unlisted_cuda_error_text_is_a_cuda_failure_and_resolved_names_keep_their_outcome():
    m = S.classify_text("RuntimeError: CUDA error: invalid device ordinal\n")
    assert m.name == "gpu.cuda_failure" and "invalid device ordinal" in m.line
    m = S.classify_text("node1:77:90 [0] include/alloc.h:48 NCCL WARN Cuda failure 'out of memory'\n")
    assert m.name == "oom.runtime" and m.outcome == "oom"


# Round 6: TensorRT's logger levels. Info/warning/verbose lines never decide, whatever they say; an
# error or fatal line naming an assertion or an "Error in" does, in either order of the two tags.
_TRT_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs")), max_size=60)


@settings(max_examples=60, deadline=None)
@given(level=st.sampled_from(["I", "W", "V"]), python_order=st.booleans(), text=_TRT_TEXT)
def test_tensorrt_info_and_warning_lines_are_no_failure(level, python_order, text):
    tags = f"[TRT] [{level}]" if python_order else f"[{level}] [TRT]"
    m = S.classify_text(f"[03/14/2025-09:02:11] {tags} Assertion failed: {text}\n".encode())
    assert m is None or m.name != "tensorrt.error"


@settings(max_examples=60, deadline=None)
@given(level=st.sampled_from(["E", "F"]), python_order=st.booleans(), text=_TRT_TEXT)
def test_tensorrt_error_lines_beat_the_apps_assert(level, python_order, text):
    tags = f"[TRT] [{level}]" if python_order else f"[{level}] [TRT]"
    assume(S.classify_text(text) is None)  # a text naming a failure of its own ("ncclSystemError") is that failure
    log = (f"[03/14/2025-09:03:47] {tags} Assertion failed: {text}\n"
           "app: app.cpp:42: int main(): Assertion `engine != nullptr' failed.\nAborted (core dumped)\n")
    m = S.classify_text(log.encode())
    assert m is not None and m.name == "tensorrt.error"


def test_an_extension_missing_a_torch_symbol_of_the_other_cxx_abi_is_an_abi_mismatch_not_a_missing_library():
    line = ("ImportError: /opt/lib/python3.12/site-packages/flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so: undefined "
            "symbol: _ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE\n")
    assert S.classify_text(line).name == "build.extension_cxx11_abi"
    # a symbol outside torch's namespaces is some other library's (bitsandbytes' CPU build): a missing library
    other = "ImportError: /x/libbitsandbytes_cpu.so: undefined symbol: cadam32bit_grad_fp32\n"
    assert S.classify_text(other).name == "env.library_missing"


def test_xformers_built_for_a_cpu_only_torch_names_the_cpu_only_torch_and_the_same_torch_is_no_mismatch():
    head = "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
    cpu = S.classify_text(head + "    PyTorch 2.1.2+cu121 with CUDA 1201 (you have 2.1.2+cpu)\n")
    assert cpu.name == "build.torch_without_gpu"
    same = S.classify_text(head + "    PyTorch 2.3.0+cu121 with CUDA 1201 (you have 2.3.0+cu121)\n")
    assert same is None or same.name != "build.xformers_torch_mismatch"


def test_advice_that_names_an_error_it_did_not_hit_is_no_signature():
    hint = ("UserWarning: Found duplicate ['libcudart.so', 'libcudart.so.11.0'] files\n"
            "If you get `CUDA error: invalid device function` errors, the above might be the cause and the solution is "
            "to make sure only one ['libcudart.so'] in the paths that we search based on your env.\n")
    assert S.classify_text(hint) is None
    said = "RuntimeError: CUDA error: invalid device function\n"
    assert S.classify_text(hint + said).name == "build.invalid_device_function"


def test_ggmls_abort_is_an_assertion_and_a_compilers_fatal_error_is_not():
    m = S.classify_text("[1234] /src/llama.cpp/ggml/src/ggml-cuda/fattn.cu:312: fatal error\n")
    assert m is not None and m.name == "cpp.assert"
    m = S.classify_text("csrc/attn.cu:12:10: fatal error: cutlass/gemm.h: No such file or directory\n")
    assert m is None or m.name != "cpp.assert"


def test_a_ggml_build_without_any_arch_this_old_is_read_at_start_up():
    m = S.classify_text("common.cuh:98: ggml was not compiled with any CUDA arch <= 610\n")
    assert m is not None and m.name == "build.no_device_code"
