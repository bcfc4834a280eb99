"""Evidence from the tool dumps seen in real issue threads (round 5): compute-sanitizer and
cuda-memcheck reports in their several wordings, cuda-gdb stops in device functions, and a hang
inspected warp by warp. The texts are written here in those tools' formats."""
from dbglog.run import advice as A
from dbglog.diagnose import evidence as E

SANITIZER_NEW = """\
  ========= COMPUTE-SANITIZER
  ========= Invalid __global__ write of size 8 bytes
  =========     at scatter_add_kernel(float *, const long *, const float *, int)+0x1f0 in /src/ops/scatter.cu:44
  =========     by thread (33,0,0) in block (7,0,0)
  =========     Access at 0x7f00aa001008 is out of bounds
  =========     and is 8 bytes after the nearest allocation at 0x7f00aa000000 of size 4096 bytes
  =========     Saved host backtrace up to driver entry point at kernel launch time
  =========         Host Frame: run_scatter(Tensor&) [0x1a2b] in libops.so
  ========= 
  ========= Invalid __global__ write of size 8 bytes
  =========     at scatter_add_kernel(float *, const long *, const float *, int)+0x1f0 in /src/ops/scatter.cu:44
  =========     by thread (34,0,0) in block (7,0,0)
  =========     Access at 0x7f00aa001010 is out of bounds
  ========= ERROR SUMMARY: 2 errors
"""

MEMCHECK_OLD = """\
========= CUDA-MEMCHECK
========= Invalid __shared__ read of size 4
=========     at 0x00000150 in tile_transpose(float*, float const *, int)
=========     by thread (31,3,0) in block (0,2,0)
=========     Address 0x00001040 is out of bounds
========= ERROR SUMMARY: 1 error
"""

INITCHECK = """\
========= COMPUTE-SANITIZER
========= Uninitialized __global__ memory read of size 4 bytes
=========     at reduce_sum(const float *, float *, int)+0x90
=========     by thread (0,0,0) in block (3,0,0)
=========     Address 0x7f11c0000300
"""


def test_compute_sanitizer_new_wording_first_report_named():
    e = E.parse_compute_sanitizer(SANITIZER_NEW)
    assert e["kind"] == "compute-sanitizer" and e["tool"] == "memcheck"
    assert e["kernel"].startswith("scatter_add_kernel(") and e["pc"] == "0x1f0" and e["source"] == "/src/ops/scatter.cu:44"
    assert (e["thread"], e["block"], e["address"], e["problem"]) == ("(33,0,0)", "(7,0,0)", "0x7f00aa001008", "out of bounds")
    assert "8 bytes after the nearest allocation" in e["allocation"] and e["host_frame"].startswith("run_scatter")
    assert e["count"] == 2 and e["total"] == 2
    assert "scatter_add_kernel+0x1f0" in e["summary"] and "(+1 more report)" in e["summary"]
    assert "2 report(s) in scatter_add_kernel" in e["findings"]


def test_cuda_memcheck_old_wording_and_initcheck():
    e = E.parse_compute_sanitizer(MEMCHECK_OLD)
    assert e["kernel"].startswith("tile_transpose(") and e["pc"] == "0x00000150" and e["block"] == "(0,2,0)"
    assert "Invalid __shared__ read of size 4 at 0x00001040 (out of bounds)" in e["summary"]
    i = E.parse_compute_sanitizer(INITCHECK)
    assert i["tool"] == "initcheck" and i["address"] == "0x7f11c0000300" and "problem" not in i


def test_sanitizer_without_reports_and_unrelated_rules_are_not_evidence():
    assert E.parse_compute_sanitizer("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n") is None
    assert E.parse_compute_sanitizer("=========\nresults\n=========\n") is None
    assert E.may_hold_dump(SANITIZER_NEW) and [x["kind"] for x in E.extract(SANITIZER_NEW, run_tools=False)] == \
        ["compute-sanitizer"]


CUDA_GDB_DEVICE_FN = """\
CUDA Exception: Warp Illegal Address
The exception was triggered at PC 0x7f3c2a40b9d0 (stencil.cuh:77)

Thread 1 "solver" received signal CUDA_EXCEPTION_14, Warp Illegal Address.
[Switching focus to CUDA kernel 1, grid 9, block (4,2,0), thread (64,1,0), device 0, sm 30, warp 9, lane 0]
0x00007f3c2a40b9e0 in Stencil::operator() (this=0x7ffd10000040, i=4097, j=3)
    at /src/solver/stencil.cuh:77
77	    out[i] = c0 * in[i] + c1 * (in[i - 1] + in[i + 1]);
(cuda-gdb) bt
#0  0x00007f3c2a40b9e0 in Stencil::operator() (this=0x7ffd10000040, i=4097, j=3) at /src/solver/stencil.cuh:77
#1  apply_stencil<Stencil><<<(64,64,1),(128,2,1)>>> (op=..., nx=4096, ny=4096) at /src/solver/apply.cu:21
"""

CUDA_GDB_WARPS = """\
(cuda-gdb) cuda kernel 0 block 0 thread 0
[Switching focus to CUDA kernel 0, grid 3, block (0,0,0), thread (0,0,0), device 0, sm 0, warp 0, lane 0]
0x00007f5e3c1209a0      210             __syncthreads();
(cuda-gdb) cuda device 0 sm 0 warp 1 lane 0
[Switching focus to CUDA kernel 0, grid 3, block (0,0,0), thread (32,0,0), device 0, sm 0, warp 1, lane 0]
0x00007f5e3c1209a0      210             __syncthreads();
(cuda-gdb) cuda device 0 sm 0 warp 2 lane 0
Request cannot be satisfied. CUDA focus unchanged.
"""


def test_cuda_gdb_stop_in_a_device_function_names_kernel_function_and_line():
    e = E.parse_cuda_gdb(CUDA_GDB_DEVICE_FN)
    assert e["kernel"] == "apply_stencil<Stencil>" and (e["grid_dim"], e["block_dim"]) == ("(64,64,1)", "(128,2,1)")
    assert e["function"] == "Stencil::operator()" and e["source"] == "/src/solver/stencil.cuh:77"
    assert e["errorpc"] == "0x7f3c2a40b9d0" and e["focus"]["block"] == "(4,2,0)" and e["focus"]["lane"] == 0
    assert "apply_stencil<…> (Stencil::operator())" in e["summary"] and "lane 0" in e["summary"]


def test_cuda_gdb_warp_by_warp_hang_names_the_missing_warps():
    e = E.parse_cuda_gdb(CUDA_GDB_WARPS)
    assert e["kind"] == "cuda-gdb" and [w["warp"] for w in e["warps"]] == [0, 1] and e["missing_warps"] == [2]
    assert "line 210: __syncthreads(); (warp 0, 1)" in e["summary"] and "warps 2 no longer exist" in e["summary"]
    assert E.short_kernel("Functor::operator()") == "Functor::operator()"


def test_sanitizer_advice_names_the_access():
    ev = E.parse_compute_sanitizer(SANITIZER_NEW)
    ctx = A.Context(run={"outcome": "fail", "signature": "sanitizer.memcheck", "cmd": ["./t"], "evidence": [ev]})
    steps = [s for s in A.advise(ctx, A.load()) if s["id"] == "sanitizer-first-error"]
    assert steps and "scatter_add_kernel: Invalid __global__ write of size 8 bytes at 0x7f00aa001008" in steps[0]["step"]


def test_cuda_gdb_empty_args_kernel_frame_keeps_its_launch_configuration():
    e = E.parse_cuda_gdb("CUDA Exception: Warp Out-of-range Address\n"
                         "[Switching focus to CUDA kernel 3, grid 7, block (1,0,0), thread (0,2,0), device 0, sm 4, "
                         "warp 1, lane 0]\n0x0000000000a1b2c0 in void init_tiles<double>(State&)<<<(40,32,1),(16,16,1)>>> ()\n")
    assert e["kernel"] == "void init_tiles<double>(State&)" and (e["grid_dim"], e["block_dim"]) == ("(40,32,1)", "(16,16,1)")


PYSPY_DUMP = """\
Process 48211: /usr/bin/python3 -u train.py --config cfg/7b.yaml
Python v3.10.12 (/usr/bin/python3.10)

Thread 48390 (idle): "Thread-3 (_pin_memory_loop)"
    select (selectors.py:416)
    _pin_memory_loop (torch/utils/data/_utils/pin_memory.py:53)
Thread 48211 (idle): "MainThread"
    wait (torch/distributed/distributed_c10d.py:3011)
    barrier (torch/distributed/distributed_c10d.py:4137)
    save_checkpoint (trainer/ckpt.py:88)
    train (train.py:212)
Thread 48402 (active): "Thread-5"
    _local_scalar_dense (torch/_tensor.py:1050)
    log_metrics (trainer/metrics.py:31)
"""

GDB_ALL_BT = """\
(gdb) thread apply all bt

Thread 2 (Thread 0x7f1c2d3fe640 (LWP 9102) "python3"):
#0  0x00007f1c4a2d3e96 in futex_wait (private=0, expected=2, futex_word=0x55d0c4) at ../sysdeps/nptl/futex-internal.h:146
#1  0x00007f1c3e112a01 in ncclProxyProgress (proxyState_=0x55d0c4e0) at proxy.cc:900
#2  0x00007f1c4a2d6ac3 in start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:442

Thread 1 (Thread 0x7f1c4a5f1740 (LWP 9100) "python3"):
#0  0x00007f1c4a3a4d3f in __GI___poll (fds=0x7ffd1c, nfds=1, timeout=100) at ../sysdeps/unix/sysv/linux/poll.c:29
#1  0x00007f1c3b61c2e5 in cuStreamSynchronize () from /lib/x86_64-linux-gnu/libcuda.so.1
#2  0x00007f1c3f9d1c4a in cudaStreamSynchronize () from /opt/venv/lib/python3.11/site-packages/torch/lib/libcudart.so.12
#3  0x00007f1c40c1f2a0 in at::native::_local_scalar_dense_cuda(at::Tensor const&) () from /opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so
"""

FAULTHANDLER = """\
Timeout (0:10:00)!
Thread 0x00007f88a1bff640 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 324 in wait
  File "/usr/lib/python3.11/queue.py", line 180 in get

Current thread 0x00007f88b3e4e740 (most recent call first):
  File "/opt/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 2501 in all_reduce
  File "/work/train.py", line 97 in step
"""


def test_thread_stacks_py_spy_names_the_main_threads_collective():
    e = E.parse_thread_stacks(PYSPY_DUMP)
    assert e["kind"] == "thread-stacks" and e["tool"] == "py-spy" and e["count"] == 3
    assert e["main"]["name"] == "MainThread" and e["main"]["wait"] == "collective"
    assert e["main"]["stuck_in"] == "barrier (distributed_c10d.py:4137)"
    assert "waiting for the GPU" in " ".join(e["findings"]) and "helper thread" in e["findings"][-1]
    assert [t["name"] for t in e["threads"]][0] == "MainThread"


def test_thread_stacks_gdb_and_faulthandler():
    g = E.parse_thread_stacks(GDB_ALL_BT)
    assert g["tool"] == "gdb" and g["main"]["thread"] == "1" and g["main"]["wait"] == "gpu-sync"
    assert g["main"]["stuck_in"].startswith("cuStreamSynchronize")
    assert {t["thread"]: t["wait"] for t in g["threads"]}["2"] == "background"
    f = E.parse_thread_stacks(FAULTHANDLER)
    assert f["tool"] == "faulthandler" and f["main"]["wait"] == "collective" and "all_reduce" in f["main"]["stuck_in"]
    assert E.parse_thread_stacks("Thread pool started with 4 workers\n") is None
    assert [x["kind"] for x in E.extract(PYSPY_DUMP, run_tools=False)] == ["thread-stacks"]


def test_fr_trace_report_in_the_output_is_evidence_once():
    report = ("Not all ranks joining collective 5 at entry 4\ngroup info: 0:default_pg\n"
              "collective: nccl:all_reduce\nmissing ranks: {1, 3}\n")
    ev = E.extract(report, run_tools=False)
    assert [x["kind"] for x in ev] == ["nccl-flight-recorder"] and "rank(s) 1, 3" in ev[0]["summary"]
    assert ev[0]["facts"]["collective"] == "nccl:all_reduce"


SMI_Q = """\
==============NVSMI LOG==============

Driver Version                            : 550.90.07
Attached GPUs                             : 2
GPU 00000000:18:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    Compute Mode                          : Default
    Clocks Event Reasons
        Idle                              : Not Active
        SW Power Cap                      : Active
        HW Slowdown                       : Active
            HW Thermal Slowdown           : Active
    ECC Errors
        Volatile
            SRAM Correctable              : 0
            SRAM Uncorrectable Parity     : 0
            DRAM Correctable              : 5
            DRAM Uncorrectable            : 1
        Aggregate
            DRAM Uncorrectable            : 4
    Remapped Rows
        Correctable Error                 : 0
        Uncorrectable Error               : 1
        Pending                           : Yes
        Remapping Failure Occurred        : No
GPU 00000000:3B:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    Compute Mode                          : Exclusive_Process
    ECC Errors
        Volatile
            DRAM Uncorrectable            : 0
"""

OLD_SMI_Q = """\
GPU 0000:04:00.0
    Product Name                    : Tesla K80
    Ecc Mode
        Current                     : Enabled
    ECC Errors
        Volatile
            Single Bit
                Device Memory       : 0
                Total               : 0
            Double Bit
                Device Memory       : 3
                Register File       : 0
                Total               : 3
    Retired Pages
        Single Bit ECC              : 0
        Double Bit ECC              : 2
        Pending                     : Yes
"""


def test_nvidia_smi_q_names_the_unhealthy_gpu():
    e = E.parse_nvidia_smi_q(SMI_Q)
    assert e["kind"] == "nvidia-smi" and e["driver"] == "550.90.07" and len(e["gpus"]) == 2
    g = e["gpus"][0]
    assert (g["uncorrectable_volatile"], g["uncorrectable_aggregate"]) == (1, 4)
    assert "row remapping pending (reset the GPU)" in g["problems"] and "HW Thermal Slowdown active" in g["problems"]
    assert "SW Power Cap active" not in g["problems"]
    assert e["summary"].startswith("nvidia-smi -q: 2 of 2 GPU(s) unhealthy — GPU 00000000:18:00.0 (NVIDIA H100")
    assert "compute mode Exclusive_Process" in e["findings"][1]
    old = E.parse_nvidia_smi_q(OLD_SMI_Q)
    assert old["gpus"][0]["uncorrectable_volatile"] == 3  # Device Memory, not again as Total
    assert "retired pages pending (reset the GPU)" in old["gpus"][0]["problems"]
    healthy = E.parse_nvidia_smi_q("GPU 00000000:18:00.0\n    Product Name   : NVIDIA L4\n")
    assert "no uncorrectable ECC" in healthy["summary"]


def test_kernel_log_xids_and_amdgpu_faults():
    k = E.parse_kernel_log("[ 81.2] NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python3, GPU has fallen off the bus.\n"
                           "[ 81.3] NVRM: Xid (PCI:0000:3b:00): 45, pid='<unknown>', name=<unknown>, Ch 00000008\n")
    assert k["xids"] == [45, 79] and k["events"][0]["process"] == "python3" and k["events"][1]["pid"] is None
    assert k["summary"] == "kernel log: Xid 79 on 0000:3b:00 by python3 (pid 4242); Xids seen: 45, 79"
    a = E.parse_kernel_log("amdgpu 0000:c3:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:8 pasid:32770)\n"
                           "amdgpu 0000:c3:00.0: amdgpu:  Process information: process python3 pid 2931 thread python3 pid 2931\n"
                           "amdgpu 0000:c3:00.0: amdgpu:   in page starting at address 0x00007f12a0000000 from client 10\n")
    assert a["events"][0]["pid"] == "2931" and "at 0x00007f12a0000000 by python3 (pid 2931)" in a["summary"]
    assert E.parse_kernel_log("no gpu lines here") is None


def test_new_signatures_get_their_own_advice_not_the_arch_one():
    rules = A.load()
    for sig, want in (("build.compile_error", "compile-first-error"), ("build.torch_without_gpu", "torch-cpu-only"),
                      ("oom.shm", "dataloader-shm"), ("cpp.assert", "host-assert"), ("gpu.nvlink_error", "nvlink-node"),
                      ("build.no_kernel_image", "arch-mismatch"), ("ray.worker_died", "ray-dead-worker-log")):
        ids = [s["id"] for s in A.advise(A.Context(run={"outcome": "fail", "signature": sig, "cmd": ["t"]}), rules)]
        assert want in ids and (sig == "build.no_kernel_image" or "arch-mismatch" not in ids), (sig, ids)


def test_kernel_log_amdgpu_ring_timeout_names_ring_and_process():
    k = E.parse_kernel_log("[ 81.0] amdgpu 0000:c1:00.0: amdgpu: ring comp_1.2.0 timeout, signaled seq=410, emitted seq=412\n"
                           "[ 81.0] amdgpu 0000:c1:00.0: amdgpu:  Process python3 pid 7001 thread python3 pid 7001\n"
                           "[ 81.1] amdgpu 0000:c1:00.0: amdgpu: GPU reset begin!\n")
    assert k["events"][0]["amdgpu_ring_timeout"] == "comp_1.2.0" and k["events"][0]["pid"] == "7001"
    assert k["summary"] == ("kernel log: amdgpu ring comp_1.2.0 timeout (signaled 410, emitted 412) on 0000:c1:00.0 "
                            "by python3 (pid 7001)")


AMD_LOG = """\
:3:hip_module.cpp           :662 : 2317434120 us: [pid:4410  tid:0x7f5fe9669740]  hipModuleLaunchKernel ( 0x55d0a1, 64, 1, 1, 256, 1, 1, 0, stream:0x55d0b2 )
:4:rocvirtual.cpp           :3089: 2317434131 us: [pid:4410  tid:0x7f5fe9669740] ShaderName : gather_rows_kernel
:3:hip_module.cpp           :685 : 2317434140 us: [pid:4410  tid:0x7f5fe9669740] hipModuleLaunchKernel: Returned hipSuccess : 
:3:hip_memory.cpp           :1395: 2317434150 us: [pid:4410  tid:0x7f5fe9669740]  hipMemcpyWithStream ( 0x7ffd1c, 0x7f12a0000000, 4, hipMemcpyDeviceToHost, stream:0x55d0b2 )
:3:hip_memory.cpp           :1401: 2317434190 us: [pid:4410  tid:0x7f5fe9669800]  hipMalloc ( 0x7ffd20, 1073741824 )
:3:hip_memory.cpp           :1403: 2317434199 us: [pid:4410  tid:0x7f5fe9669800] hipMalloc: Returned hipErrorOutOfMemory : 
"""


def test_amd_log_level_trace_names_the_call_in_flight_and_the_last_kernel():
    e = E.parse_amd_log(AMD_LOG)
    assert e["kind"] == "amd-log" and e["lines"] == 6 and e["last_kernel"] == "gather_rows_kernel"
    assert [c["api"] for c in e["in_flight"]] == ["hipMemcpyWithStream"]
    assert e["first_error"] == {"api": "hipMalloc", "error": "hipErrorOutOfMemory", "tid": "0x7f5fe9669800"}
    assert e["summary"] == ("AMD_LOG_LEVEL trace: hipMalloc returned hipErrorOutOfMemory; in flight: "
                            "hipMemcpyWithStream (tid 0x7f5fe9669740); last kernel dispatched gather_rows_kernel")
    assert E.parse_amd_log("took 12 us: fine\n") is None


ROCGDB_ASSERT = """\
Thread 5 "sampler" received signal SIGABRT, Aborted.
__assert_fail (assertion=0x7fffe1a0 <str> "idx < n_vocab", file=0x7fffe1b0 <str> "topk.hip", line=118, function=<__PRETTY_FUNCTION__.topk_kernel>) at hip_assert.h:85
(gdb) info threads
  Id   Target Id                                     Frame
  1    Thread 0x7ffff7e8f880 (LWP 9001) "sampler"    0x00007ffff6b1c2d4 in ioctl () from /lib/x86_64-linux-gnu/libc.so.6
* 5    AMDGPU Wave 1:1:1:2 (3,0,0)/0 "sampler"      __assert_fail (assertion=..., file=..., line=118) at hip_assert.h:85
  6    AMDGPU Wave 1:1:1:7/0 (4,0,0)[64,0,0] "sampler" topk_kernel (logits=..., n=...) at topk.hip:110
"""


def test_rocgdb_device_assert_and_lane_form_wave_rows():
    e = E.parse_rocgdb(ROCGDB_ASSERT)
    assert e["assert"] == {"condition": "idx < n_vocab", "file": "topk.hip", "line": 118} and e["waves"] == 2
    assert e["summary"] == "rocgdb: device-side assert `idx < n_vocab` failed at topk.hip:118 (2 wave(s) listed)"
    assert {g["kernel"] for g in e["wave_groups"]} == {"__assert_fail", "topk_kernel"}
    from dbglog.diagnose import signatures as S
    m = S.classify_text(ROCGDB_ASSERT)
    assert m.name == "gpu.device_assert" and "idx < n_vocab" in m.line
    host = '#4  0x7f in __assert_fail (assertion=0x55 "n > 0", file=0x55 "main.c", line=12, function=0x55) at assert.c:101\n'
    assert S.classify_text(host).name == "cpp.assert"
