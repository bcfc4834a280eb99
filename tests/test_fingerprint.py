"""A failure's fingerprint (dbglog/diagnose/fingerprint.py): each normalisation, the exact key, and
the near-match rules that tell the same failure from a different bug with the same signature."""

from __future__ import annotations

import pytest

from dbglog.diagnose import fingerprint as F

IMA = "RuntimeError: CUDA error: an illegal memory access was encountered"


@pytest.mark.parametrize("a, b", [
    # addresses and pointers
    ("NCCL WARN Cuda failure at ptr 0x7f3a2c000000", "NCCL WARN Cuda failure at ptr 0x7fb100200000"),
    # ranks, in every spelling
    ("[rank3]: " + IMA, "[rank0]: " + IMA),
    ("[Rank 3] Watchdog caught collective operation timeout", "[Rank 12] Watchdog caught collective operation timeout"),
    ("rank=3 failed", "rank=7 failed"),
    # pids
    ("(VllmWorkerProcess pid=4242) " + IMA, "(VllmWorkerProcess pid=77) " + IMA),
    ("Process 12345 has 78.1 GiB memory in use", "Process 998 has 70.0 GiB memory in use"),
    # timestamps and log prefixes
    ("ERROR 06-20 10:37:01 [worker.py:12] " + IMA, "ERROR 07-01 22:00:59 [worker.py:99] " + IMA),
    ("2024-05-01 12:34:56,789 - ERROR - boom at step", "2025-11-30T01:02:03.456Z ERROR boom at step"),
    ("E1203 12:00:00.123456 77 ProcessGroupNCCL.cpp:45] boom", "E0101 01:01:01.000001 9 ProcessGroupNCCL.cpp:46] boom"),
    ("node1:1234:5678 [3] NCCL WARN bad thing", "gpu-07:99:100 [0] NCCL WARN bad thing"),
    # sizes
    ("Tried to allocate 2.00 GiB", "Tried to allocate 512.00 MiB"),
    # temporary paths and home directories
    ("error in /tmp/torchinductor_alice/ab/cabc.py", "error in /tmp/torchinductor_bob/zz/cxyz.py"),
    ("File /home/alice/proj/run.py failed", "File /workspace/run.py failed"),
    # line numbers and other numbers
    ("assert at kernel.cu:123", "assert at kernel.cu:456"),
    # hashes, uuids
    ("request 3f2a9c1e4b5d6a7f failed", "request 0a1b2c3d4e5f6a7b failed"),
    # vLLM's workers, journald, c10d's dated prefix, prose before the exception
    ("(VllmWorker rank=5 pid=33503) ERROR 03-06 06:49:30 [multiproc_executor.py:375] " + IMA,
     "(VllmWorkerProcess pid=580056) ERROR 03-17 15:28:43 multiproc_worker_utils.py:242] " + IMA),
    ("Dec 09 13:35:40 host ocr[206214]: (EngineCore_DP0 pid=86) " + IMA, IMA),
    ("[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] boom", "[E ProcessGroupNCCL.cpp:458] [Rank 7] boom"),
    ("When running gemma2, an error is reported [rank0]: " + IMA, "RuntimeError: RuntimeError: CUDA error: an illegal "
     "memory access was encountered"),
])
def test_what_varies_between_occurrences_is_stripped_from_the_key_line(a, b):
    assert F.normalise_line(a) == F.normalise_line(b)


def test_what_names_the_failure_stays_in_the_key_line():
    assert F.normalise_line("[rank3]: " + IMA) == IMA
    assert F.normalise_line("sm80_xmma_gemm failed") == "sm80_xmma_gemm failed"  # digits inside a name stay
    assert F.normalise_line("cudaErrorIllegalAddress") == "cudaErrorIllegalAddress"
    assert F.normalise_line(IMA) != F.normalise_line("RuntimeError: CUDA error: misaligned address")
    # a collective's element count is the same on every rank and names which collective it was
    assert F.normalise_line("WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1)") == \
        "WorkNCCL(SeqNum=N, OpType=ALLREDUCE, NumelIn=1, NumelOut=1)"


def test_a_wrapped_key_line_has_the_fingerprint_of_the_whole_line():
    whole = f"Traceback (most recent call last):\n  File \"/app/m.py\", line 4, in f\n{IMA}\n"
    wrapped = ("Traceback (most recent call last):\n  File \"/app/m.py\", line 4, in f\n"
               "RuntimeError: CUDA error: an illegal memory access\nwas encountered\n")
    a, b = F.fingerprint_text(whole), F.fingerprint_text(wrapped)
    assert a is not None and b is not None
    assert a.line == b.line == IMA
    assert a.key == b.key


def _traceback(frames, last=IMA, prefix=""):
    lines = [prefix + "Traceback (most recent call last):"]
    for path, n, fn in frames:
        lines += [f'{prefix}  File "{path}", line {n}, in {fn}', f"{prefix}    x = y()"]
    return "\n".join(lines + [prefix + last, ""])


def test_frames_are_the_innermost_ones_in_the_users_code():
    text = _traceback([("/home/a/proj/train.py", 88, "<module>"), ("/home/a/proj/model.py", 41, "forward"),
                       ("/usr/lib/python3.10/site-packages/torch/nn/modules/module.py", 1751, "_call_impl"),
                       ("/usr/lib/python3.10/threading.py", 10, "run")])
    fp = F.fingerprint_text(text)
    assert fp.frames == ("model.py:forward", "train.py:<module>")


def test_the_faulting_kernel_is_named_exact_case():
    text = ("========= Invalid __global__ read of size 4 bytes\n"
            "=========     at 0x1f0 in fused_moe_Kernel_v2(float *, int)\n"
            "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    fp = F.fingerprint_text(text)
    assert fp.kernel == "fused_moe_Kernel_v2"
    assert F.kernel_name([], [{"kind": "cuda-gdb", "kernel": "topk_kernel<float, 4>"}]) == "topk_kernel<float,4>"


def _nccl_timeout(rank: int, pid: int, missing: int) -> str:
    return (f"[rank{rank}]:[E1203 10:00:0{rank}.123 {pid} ProcessGroupNCCL.cpp:616] [Rank {rank}] Watchdog caught "
            f"collective operation timeout: WorkNCCL(SeqNum=1{rank}45, OpType=ALLREDUCE, NumelIn=1048576, "
            f"NumelOut=1048576, Timeout(ms)=600000) ran for 60{rank}123 milliseconds before timing out.\n"
            f"[rank{rank}]: Ranks {missing} failed to pass monitoredBarrier in 600000 ms\n")


def test_two_ranks_reports_of_one_nccl_timeout_share_a_fingerprint():
    a, b = F.fingerprint_text(_nccl_timeout(0, 4242, 3)), F.fingerprint_text(_nccl_timeout(1, 977, 3))
    assert a is not None and a.signature.startswith(("nccl", "dist", "collective", "torch"))
    assert a.key == b.key
    assert a.op == "ALLREDUCE" and a.missing_ranks == (3,)
    assert F.same_failure(a, b)


def test_the_missing_ranks_are_kept_but_not_in_the_exact_key():
    a, b = F.fingerprint_text(_nccl_timeout(0, 1, 3)), F.fingerprint_text(_nccl_timeout(0, 1, 5))
    assert a.missing_ranks == (3,) and b.missing_ranks == (5,)
    assert a.key == b.key


def test_two_different_illegal_address_bugs_are_not_the_same_failure():
    moe = ("=========     at 0x1f0 in fused_moe_kernel(float *)\n"
           + _traceback([("/app/serve.py", 5, "<module>"), ("/app/moe.py", 41, "fused_experts")]))
    attn = ("=========     at 0x2a0 in paged_attention_v2(half *)\n"
            + _traceback([("/app/serve.py", 5, "<module>"), ("/app/attention.py", 90, "forward")]))
    a, b = F.fingerprint_text(moe), F.fingerprint_text(attn)
    assert a.signature == b.signature == "gpu.illegal_address"
    assert a.key != b.key
    assert not F.same_failure(a, b)
    assert "kernel" in F.similarity(a, b).why
    # without the kernels, the frames still tell them apart
    a2, b2 = F.fingerprint_text(_traceback([("/app/moe.py", 41, "fused_experts")])), \
        F.fingerprint_text(_traceback([("/app/attention.py", 90, "forward")]))
    assert F.similarity(a2, b2).level == "none"


def test_the_same_crash_on_another_machine_and_version_is_a_near_match():
    a = F.fingerprint_text(_traceback([("/home/alice/vllm/moe.py", 41, "fused_experts")], prefix="[rank0]: "))
    b = F.fingerprint_text(_traceback([("/opt/conda/lib/python3.11/site-packages/vllm/moe.py", 57, "fused_experts")],
                                      last=IMA + " (launch 3)", prefix="(Worker pid=88) "))
    assert a.key != b.key
    like = F.similarity(a, b)
    assert like.level == "near", like


def test_a_note_that_only_quotes_the_line_is_similar_not_the_same():
    run = F.fingerprint_text(_traceback([("/app/moe.py", 41, "fused_experts")]))
    note = F.fingerprint_text("We saw this again today:\n" + IMA + "\n")
    assert F.similarity(run, note).level == "similar"
    assert not F.same_failure(run, note)


def test_the_mirror_line_carries_the_key_and_reads_back():
    fp = F.fingerprint_text("=========     at 0x1f0 in fused_moe_kernel(float *)\n" + _traceback([("/app/m.py", 1, "f")]))
    key, back = F.from_mirror_line("- " + fp.mirror_line())
    assert key == fp.key
    assert (back.signature, back.line, back.kernel) == (fp.signature, fp.line, fp.kernel)


def test_text_without_a_failure_has_no_fingerprint():
    assert F.fingerprint_text("") is None
    assert F.fingerprint_text("all good\n42 tests passed\n") is None


def test_a_passing_run_has_no_fingerprint_and_a_pruned_one_keeps_its_key_lines():
    assert F.fingerprint_run({"outcome": "pass", "signature": None}) is None
    assert F.fingerprint_run({"outcome": "hang", "signature": None, "key_lines": []}) is None  # tells nothing apart
    run = {"outcome": "fail", "signature": "gpu.illegal_address", "key_lines": [{"line": 3, "text": "[rank2]: " + IMA}]}
    fp = F.fingerprint_run(run, "")
    assert fp.line == IMA and fp.frames == ()


def test_a_device_asserts_site_names_its_kernel():
    fp = F.fingerprint_text("../aten/src/ATen/native/cuda/Indexing.cu:1308: indexSelectLargeIndex: block: [58,0,0], "
                            "thread: [99,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n")
    assert fp.kernel == "indexSelectLargeIndex"


def test_a_message_that_names_no_site_is_only_similar_without_a_kernel_frames_or_collective():
    a = F.fingerprint_text("RuntimeError: CUDA out of memory. Tried to allocate 92.00 MiB (GPU 0; 1.96 GiB total)\n")
    b = F.fingerprint_text("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 5.80 GiB total)\n")
    assert a.key == b.key
    assert F.similarity(a, b).level == "similar" and not F.same_failure(a, b)


def test_a_word_replaced_is_another_failure_and_a_line_cut_short_is_the_same():
    sys_err = F.Fingerprint("nccl.watchdog", "NCCL error in: ProcessGroupNCCL.cpp:N, unhandled system error", op="X")
    cuda_err = F.Fingerprint("nccl.watchdog", "NCCL error in: ProcessGroupNCCL.cpp:N, unhandled cuda error", op="X")
    assert F.similarity(sys_err, cuda_err).level == "none"
    whole = F.Fingerprint("cublas:X", "RuntimeError: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx( handle, "
                                      "opa, opb, m, n, k, &falpha, a, CUDA_R_16BF, lda, b, CUDA_R_16BF, ldb)`", kernel="k")
    title = F.Fingerprint("cublas:X", "RuntimeError: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx( handle, "
                                      "opa, opb, m, n, k, &falpha, a, CUDA_R_16BF, ld", kernel="k")
    assert F.similarity(whole, title).level == "near"
    renamed = F.Fingerprint("cublas:X", whole.line.replace("RuntimeError", "torch.AcceleratorError"), kernel="k")
    assert F.similarity(whole, renamed).level == "near"  # the exception's own name may change between versions


def test_two_collectives_of_other_sizes_are_not_one_failure():
    a = F.fingerprint_text(_nccl_timeout(0, 1, 3))
    b = F.fingerprint_text(_nccl_timeout(0, 1, 3).replace("NumelIn=1048576", "NumelIn=9801523"))
    assert F.similarity(a, b).level == "none" and "collective" in F.similarity(a, b).why


KV = ("ValueError: The model's max seq len (4096) is larger than the maximum number of tokens that can be stored in KV "
      "cache (1216). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.")


def test_a_title_cut_short_mid_word_and_quotes_taken_out_are_still_the_same_message():
    body = F.fingerprint_text(KV + "\n")
    title = F.fingerprint_text(KV.split(" when ")[0].replace("ValueError: ", "") + " when initializin\n")
    unquoted = F.fingerprint_text(KV.replace("`", "") + "\n")
    assert F.same_failure(body, title) and F.same_failure(body, unquoted)
    cpu = F.fingerprint_text(KV.replace("gpu_memory_utilization", "VLLM_CPU_KVCACHE_SPACE") + "\n")
    assert not F.same_failure(body, cpu)  # another setting named: another fix


def test_a_message_that_says_where_it_failed_matches_its_traceback_without_one():
    bare = F.fingerprint_text(KV + "\n")
    traced = F.fingerprint_text(_traceback([("/srv/vllm/worker/worker.py", 544, "raise_if_cache_size_invalid")])
                                .replace(IMA, KV))
    assert traced.frames and F.similarity(bare, traced).level == "near"


def test_a_bare_cublas_failure_names_no_site():
    gemm = "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m)`\n"
    a, b = F.fingerprint_text(gemm), F.fingerprint_text(gemm.replace("RuntimeError: ", ""))
    assert F.similarity(a, b).level == "similar" and not F.same_failure(a, b)


def test_the_next_log_record_is_not_read_as_the_key_lines_wrapped_tail():
    text = ("hai-a100-3:3778851:3779883 [4] ibvwrap.c:130 NCCL WARN Call to ibv_create_qp failed\n"
            "hai-a100-3:3778851:3779883 [4] NCCL INFO ib_plugin.c:196 -> 2\n")
    assert F.fingerprint_text(text).line == "ibvwrap.c:N NCCL WARN Call to ibv_create_qp failed"


def test_the_logging_codes_own_file_moved_by_a_version_is_not_another_failure():
    old = F.fingerprint_text("node1:1:2 [0] ibvwrap.c:130 NCCL WARN Call to ibv_create_qp failed\n")
    new = F.fingerprint_text("node2:3:4 [1] misc/ibvwrap.cc:280 NCCL WARN Call to ibv_create_qp failed\n")
    cq = F.fingerprint_text("node2:3:4 [1] misc/ibvwrap.cc:268 NCCL WARN Call to ibv_create_cq failed\n")
    assert F.same_failure(old, new) and not F.same_failure(new, cq)


def test_llama_cpps_failed_op_is_its_site():
    log = ("ggml_cuda_compute_forward: MUL_MAT_ID failed\nCUDA error: invalid argument\n  current device: 1, in function "
           "ggml_cuda_compute_forward at llama.cpp-b9033/ggml/src/ggml-cuda/ggml-cuda.cu:2962\n")
    a = F.fingerprint_text(log)
    b = F.fingerprint_text(log.replace("b9033", "b9097").replace("2962", "3114"))
    other_op = F.fingerprint_text(log.replace("MUL_MAT_ID", "RMS_NORM"))
    assert a.kernel == "MUL_MAT_ID" and F.same_failure(a, b) and not F.same_failure(a, other_op)


@pytest.mark.parametrize("a, b", [
    # a runner's "host [stderr]" prefix before the rank's own
    ("nodes.cn-d004 [stderr] [rank8]:[E909 09:55:29.340541894 ProcessGroupNCCL.cpp:607] [Rank 8] Watchdog caught",
     "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught"),
    # c10d's process-group tag
    ("[PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread terminated",
     "[PG 1 Rank 0] Process group watchdog thread terminated"),
    # Ray's note that it folded repeated lines
    ("(Actor pid=5823, ip=10.1.2.3) boom at step [repeated 14x across cluster]", "(Actor pid=77) boom at step"),
    # the host mpirun --tag-output or pdsh writes before each line, or a container's id
    ("g0016: Test CUDA failure common.cu:89 'invalid device ordinal'",
     "a8d0e4f53b2c: Test CUDA failure common.cu:196 'invalid device ordinal'"),
    ("node-03: NCCL WARN Cuda failure 'out of memory'", "NCCL WARN Cuda failure 'out of memory'"),
    # an error report form's bold field label
    ("- **Exception Message:** CUDA error: operation not supported", "CUDA error: operation not supported"),
    # addresses the poster blanked out, the sentence's period eaten by the dots
    ("Memory access fault by GPU node-2 (Agent handle: 0x...) on address 0x... Reason: Page not present",
     "Memory access fault by GPU node-1 (Agent handle: 0x5c3b0a1d2e40) on address 0x7f2a0000. Reason: Page not present"),
])
def test_a_runners_prefixes_and_notes_are_stripped_from_the_key_line(a, b):
    assert F.normalise_line(a) == F.normalise_line(b)


def test_a_tools_own_name_before_its_message_is_no_host_prefix():
    assert F.normalise_line("collect2: error: ld returned 1 exit status").startswith("collect2: error")
    assert F.normalise_line("python3: can't open file 'x.py'").startswith("python3:")


def test_the_gpus_product_name_is_the_machine_and_its_architecture_stays():
    bf16 = "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your {} GPU has ..."
    assert F.normalise_line(bf16.format("Tesla T4")) == F.normalise_line(bf16.format("Tesla P40"))
    assert F.normalise_line("NVIDIA GeForce RTX 5090 with CUDA capability sm_120") == \
        F.normalise_line("NVIDIA A100-SXM4-80GB with CUDA capability sm_120")
    assert F.normalise_line("Radeon RX 7900 XTX x") == F.normalise_line("AMD Instinct MI250X x") == "<gpu> x"
    assert "sm_120" in F.normalise_line("RTX 5090 with CUDA capability sm_120")  # the cause can be the arch
    for word in ("h264", "P2P", "L2 cache", "a100"):  # codecs, links, caches and lower case are not GPUs
        assert word in F.normalise_line(f"x {word} y")


WATCHDOG = ("[rank2]:[E424 01:17:25.031978332 ProcessGroupNCCL.cpp:1895] [PG ID 0 PG GUID 0(default_pg) Rank 2] Process "
            "group watchdog thread terminated with exception: [Rank 2] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=4, OpType=BROADCAST, NumelIn=112, NumelOut=112, Timeout(ms)=1800000) ran for 1800010 "
            "milliseconds before timing out.")


@pytest.mark.parametrize("width", [70, 137])
def test_a_line_cut_at_a_fixed_width_is_joined_back_even_mid_word(width):
    cut = [WATCHDOG[k:k + width] for k in range(0, len(WATCHDOG), width)]
    text = "\n".join(cut + ["Exception raised from checkTimeout:"]) + "\n"
    assert any(c[-1].isalpha() and n[0].isalpha() for c, n in zip(cut, cut[1:]))  # (a word is cut in two)
    assert F.fingerprint_text(text).key == F.fingerprint_text(WATCHDOG + "\n").key


def test_a_burst_of_records_as_wide_as_each_other_is_not_joined():
    burst = "".join(f"../aten/src/ATen/native/cuda/Indexing.cu:1146: indexSelectLargeIndex: block: [189,0,0], thread: "
                    f"[{t},0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n" for t in range(84, 88))
    assert F.fingerprint_text(burst).line.endswith("Assertion `srcIndex < srcSelectDimSize` failed.")


def test_an_error_no_signature_reads_still_names_the_failure():
    tm = "RuntimeError: [TM][ERROR] CUDA runtime error: operation not supported /lmdeploy/src/turbomind/utils/allocator.h:197"
    a, b = F.fingerprint_text(tm + "\n"), F.fingerprint_text("  " + tm.replace("197", "201") + "\n")
    assert a.signature == "py.traceback:RuntimeError" and a.line.endswith("allocator.h:N") and F.same_failure(a, b)
    llvm = F.fingerprint_text("Unsupported conversion from f16 to f16\nLLVM ERROR: Unsupported rounding mode\n")
    assert (llvm.signature, llvm.line) == (F.FALLBACK, "LLVM ERROR: Unsupported rounding mode")
    other = F.fingerprint_text(tm.replace("operation not supported", "invalid resource handle") + "\n")
    assert not F.same_failure(a, other)
    assert F.fingerprint_text("the build finished, all good\n") is None


def test_the_prose_around_a_code_block_is_no_error_of_its_own():
    note = "I tried again and still saw `KeyError: model` somewhere.\n\n```\nValueError: shape mismatch in layer 3\n```\n"
    assert [fp.line for fp in F.fingerprint_blocks(note)] == ["ValueError: shape mismatch in layer N"]
    assert F.fingerprint_blocks("a whole log\nValueError: shape mismatch in layer 3\n")  # no code blocks: read whole


def test_a_check_about_the_machine_is_its_own_site_and_one_about_the_programs_values_is_not():
    machine = "RuntimeError: the fused optimizer was compiled without kernels for this GPU architecture\n"
    traced = _traceback([("/srv/app/model.py", 12, "forward")], last=machine.strip())
    assert F.similarity(F.fingerprint_text(machine), F.fingerprint_text(machine)).level == "exact"
    assert F.similarity(F.fingerprint_text(machine), F.fingerprint_text(traced)).level == "near"
    values = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!\n"
    short = "RuntimeError: PassManager::run failed\n"  # (Triton: any kernel, any pass)
    for bare in (values, short):
        assert F.similarity(F.fingerprint_text(bare), F.fingerprint_text(bare)).level == "similar"
        assert not F.same_failure(F.fingerprint_text(bare), F.fingerprint_text(bare))


def test_a_message_quoted_in_a_wrappers_sentence_or_under_another_heading_is_the_same_message():
    inner = F.fingerprint_text("[Rank 8] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, "
                               "OpType=BROADCAST, NumelIn=112, NumelOut=112, Timeout(ms)=600000) ran for 600067 "
                               "milliseconds before timing out.\n")
    assert F.same_failure(inner, F.fingerprint_text(WATCHDOG + "\n"))
    what = F.Fingerprint("py.traceback:RuntimeError", "what(): Out of workspace memory in AlignedAllocator (alloc.cu:N)")
    exc = F.Fingerprint("py.traceback:RuntimeError", "RuntimeError: Out of workspace memory in AlignedAllocator "
                                                     "(alloc.cu:N)")
    assert F.same_failure(what, exc)


def test_a_failed_run_no_signature_reads_is_named_by_its_error_line_as_an_import_would_name_it():
    out = "loading\nRuntimeError: [TM][ERROR] Assertion fail: D:\\a\\lmdeploy\\src/turbomind/models/llama/Barrier.h:20\n"
    run = {"outcome": "fail", "signature": None, "key_lines": [{"line": 2, "text": "exit code 1"}]}
    fp = F.fingerprint_run(run, out)
    assert fp is not None and fp.line.endswith("Barrier.h:N")
    assert F.same_failure(fp, F.fingerprint_blocks("```\n" + out.replace("20", "21") + "```\n")[0])
    assert F.fingerprint_run(run, "loading\nexit\n").signature == "fail"  # nothing better: as before


def test_a_line_a_viewer_wrapped_at_a_word_is_joined_back():
    whole = ("host-a [stderr] [rank8]:[E909 09:55:29.34 ProcessGroupNCCL.cpp:607] [Rank 8] Watchdog caught collective "
             "operation timeout: WorkNCCL(SeqNum=2070, OpType=REDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran "
             "for 600067 milliseconds before timing out.\n")
    for cut in ("timeout: ", "SeqNum=2070, "):
        wrapped = whole.replace(cut, cut + "\n", 1)
        assert F.fingerprint_text(wrapped) is not None
        assert F.fingerprint_text(wrapped).key == F.fingerprint_text(whole).key
    records = "ERROR: step 3 failed:\nERROR: step 4 failed:\n"  # (each its own record: not joined)
    assert F._join_soft_wraps(records) is None


def test_an_exception_right_after_a_sentence_in_another_script_is_read():
    fp = F.fingerprint_text("训练时报错ValueError: the tokenizer's pad token id is larger than the vocabulary size\n")
    assert fp is not None and fp.line.startswith("ValueError: the tokenizer")


def test_a_backtick_glued_to_a_word_reads_as_a_space():
    a = F.Fingerprint("py.traceback:ValueError", "ValueError: bf16 is not supported on this GPU; set the`dtype` flag to half")
    b = F.Fingerprint("py.traceback:ValueError", "ValueError: bf16 is not supported on this GPU; set the `dtype` flag to half")
    assert F.same_failure(a, b)


def test_a_signature_that_names_the_cause_is_one_failure_however_torch_words_it():
    thc = F.fingerprint_text("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=74 error=35 : CUDA driver "
                             "version is insufficient for CUDA runtime version\n")
    exc = F.fingerprint_text("RuntimeError: cuda runtime error (35) : CUDA driver version is insufficient for CUDA "
                             "runtime version at torch/csrc/cuda/Module.cpp:107\n")
    assert thc.signature == exc.signature == "driver.insufficient" and F.same_failure(thc, exc)
    echo = F.fingerprint_text('raise AssertionError("Torch not compiled with CUDA enabled")\n'
                              "AssertionError: Torch not compiled with CUDA enabled\n")
    assert F.same_failure(echo, F.fingerprint_text("AssertionError: Torch not compiled with CUDA enabled\n"))
    assert not F.same_failure(thc, echo)  # (another cause: another failure)


def test_an_errors_code_and_a_librarys_version_name_what_failed_and_stay():
    so = "ImportError: libcudart.so.{}: cannot open shared object file: No such file or directory\n"
    assert not F.same_failure(F.fingerprint_text(so.format("10.0")), F.fingerprint_text(so.format("11.0")))
    assert F.same_failure(F.fingerprint_text(so.format("11.0")), F.fingerprint_text(so.format("11.0")))
    dll = "Could not load library cudnn_cnn_infer64_8.dll. Error code {}\n"
    assert not F.same_failure(F.fingerprint_text(dll.format(126)), F.fingerprint_text(dll.format(127)))
    assert "error (35)" in F.normalise_line("THCudaCheck FAIL file=THCGeneral.cpp line=74 error=35 : x")
    assert "THCGeneral.cpp:N" in F.normalise_line("THCudaCheck FAIL file=THCGeneral.cpp line=74 error=35 : x")  # a line varies
    assert F.normalise_line("ERROR 06-20 10:37:01 [worker.py:12] boom at 12") == "boom at N"  # a level is no code


def test_a_near_match_is_a_guess_whose_evidence_names_the_likeness_and_what_matched():
    a = F.Fingerprint("gpu.illegal_address", IMA, ("moe.py:fused_experts", "serve.py:<module>"))
    b = F.Fingerprint("gpu.illegal_address", IMA.replace("RuntimeError", "torch.AcceleratorError"),
                      ("moe.py:fused_experts", "run.py:main"))
    near = F.similarity(a, b)
    assert near.level == "near" and near.guess
    assert near.evidence().startswith(f"key lines {near.score}% alike") and "same frame moe.py:fused_experts" in near.evidence()
    exact = F.similarity(a, a)
    assert exact.level == "exact" and not exact.guess


def test_a_near_match_by_a_cause_signature_names_the_signature_and_the_lines_real_likeness():
    a = F.Fingerprint("driver.insufficient", "RuntimeError: The NVIDIA driver on your system is too old")
    b = F.Fingerprint("driver.insufficient", "THCudaCheck FAIL file=THCGeneral.cpp line=N error=N : CUDA driver "
                                             "version is insufficient for CUDA runtime version")
    like = F.similarity(a, b)
    assert like.level == "near" and like.guess and "driver.insufficient" in like.evidence()
    assert like.score < 90  # (the lines' own likeness, not a made-up 100)


def test_a_block_read_once_is_not_read_again_with_the_same_memo(monkeypatch):
    # An import reads each error block in the document, then again where the record keeps it (with its fence's
    # last newline): one reading each, the same fingerprints.
    note = "Then:\n\n```\nValueError: shape mismatch in layer 3\n```\n\n```\nsomething else printed\n```\n"
    want = F.fingerprint_blocks(note)
    calls = []
    real = F.fingerprint_text
    monkeypatch.setattr(F, "fingerprint_text", lambda t, *a, **k: calls.append(t) or real(t, *a, **k))
    memo = {}
    assert F.fingerprint_blocks("ValueError: shape mismatch in layer 3", None, memo) == want
    assert F.fingerprint_blocks(note, None, memo) == want
    assert len(calls) == 3  # (the bare block, then the other fenced block and the prose; the first block once)


@pytest.mark.parametrize("text", [
    # a message with a progress bar's run of spaces in it: the headerless exception's message (lazy, then trailing
    # spaces) and the scrubbing patterns each tried every split of the run
    "RuntimeError: CUDA error:" + " " * 30_000 + "an illegal memory access was encountered\n",
    "RuntimeError:" + "\t" * 50_000 + "x\n",  # and of tabs, before a line break that might be a wrap
    "[rank0]:[E ProcessGroupNCCL.cpp:1]" + " " * 80_000 + "Watchdog caught collective operation timeout\n",
])
def test_a_line_of_thousands_of_spaces_is_fingerprinted_in_linear_time(text):
    import time

    t = time.process_time()
    F.fingerprint_text(text)
    assert time.process_time() - t < 1.0  # each took 1.5-5 s of CPU


def _fp(text):
    return F.fingerprint_text(text)


def test_tensorflows_log_prefix_comes_off_as_glogs_does():
    line = "Loaded runtime CuDNN library: 8.5.0 but source was compiled with: 8.6.0.  CuDNN library needs to have matching"
    tf = _fp(f"2023-05-29 05:39:19.492073: E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:427] {line}\n")
    glog = _fp(f"E1027 15:10:59.012564 3266428 cuda_dnn.cc:456] {line}\n")
    assert tf.line == glog.line and tf.line.startswith("Loaded runtime CuDNN")


def test_a_device_assert_is_its_kernel_and_its_check_wherever_the_kernel_lives():
    aten = _fp("../aten/src/ATen/native/cuda/Indexing.cu:1292: indexSelectLargeIndex: block: [223,0,0], thread: [96,0,0] "
               "Assertion `srcIndex < srcSelectDimSize` failed.\n")
    thc = _fp("/pytorch/aten/src/THC/THCTensorIndex.cu:361: void indexSelectLargeIndex(TensorInfo<T, IndexType>, "
              "TensorInfo<T, IndexType>, int, int, IndexType, long) [with T = float, IndexType = unsigned int, DstDim = 2]: "
              "block: [485,0,0], thread: [47,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n")
    assert F.similarity(aten, thc).level == "exact"
    other = _fp("../aten/src/ATen/native/cuda/Loss.cu:242: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], "
                "thread: [5,0,0] Assertion `t >= 0 && t < n_classes` failed.\n")
    assert F.similarity(aten, other).level == "none"


def test_the_wheels_missing_architecture_outranks_the_no_kernel_image_error_it_causes():
    warn = "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n"
    both = _fp("RuntimeError: CUDA error: no kernel image is available for execution on the device\n\n" + warn)
    alone = _fp("torch/cuda/__init__.py:235: UserWarning:\n" + warn)
    assert both.signature == alone.signature == "build.no_arch_in_wheel"
    assert F.similarity(both, alone).level == "exact"
    old = _fp("Tesla K80 with CUDA capability sm_37 is not compatible with the current PyTorch installation.\n")
    assert F.similarity(both, old).level == "none"  # another architecture needs another wheel


def test_cuda_touched_before_a_fork_is_one_failure_in_any_loggers_words():
    vllm = _fp("ERROR 01-19 03:55:24 multiproc_worker_utils.py:233] Exception in worker VllmWorkerProcess while "
               "processing method init_device: Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
               "multiprocessing, you must use the 'spawn' start method, Traceback (most recent call last):\n")
    torch = _fp("RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you "
                "must use the 'spawn' start method\n")
    assert vllm.signature == torch.signature == "runtime.cuda_in_forked_child"
    assert F.similarity(vllm, torch).level in ("exact", "near")


def test_a_paste_cut_at_a_fixed_width_inside_a_word_has_the_fingerprint_of_the_whole_line():
    whole = ("E tensorflow/stream_executor/cuda/cuda_dnn.cc:319] Loaded runtime CuDNN library: 7.4.1 but source was "
             "compiled with: 7.6.4.  CuDNN library major and minor version needs to match.\n")
    cut = whole[:60] + "\n" + whole[60:]
    assert cut.split("\n")[0][-1].isalpha() and cut.split("\n")[1][0].islower()  # (cut inside a word)
    a, b = F.fingerprint_text(whole), F.fingerprint_text(cut)
    assert a is not None and b is not None and a.signature == b.signature == "env.library_missing"


def test_xformers_built_without_cuda_is_one_failure_whatever_called_it_and_not_a_tensor_left_on_the_cpu():
    ops = ("`cutlassF` is not supported because:\n    xFormers wasn't build with CUDA support\n"
           "    operator wasn't built - see `python -m xformers.info` for more info\n")
    node = "Error occurred when executing ApplyPulid:\n\nNo operator found for `memory_efficient_attention_forward` with inputs:\n"
    raised = "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
    a, b = F.fingerprint_text(node + ops), F.fingerprint_text(raised + ops)
    assert a.signature == b.signature == "build.xformers_without_cuda" and F.same_failure(a, b)
    cpu = F.fingerprint_text(raised + "`cutlassF` is not supported because:\n    device=cpu (supported: {'cuda'})\n")
    assert cpu is not None and not F.same_failure(a, cpu)


def test_xformers_built_for_another_torch_is_one_failure_across_versions_and_not_a_cpu_only_torch():
    head = "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
    a = F.fingerprint_text(head + "    PyTorch 2.3.0+cu121 with CUDA None (you have 2.0.0+cu117)\n")
    b = F.fingerprint_text(head + "PyTorch 2.1.0+cu121 with CUDA 1201 (you have 2.0.1+cu118)\nPython  3.10.13 (you have 3.10.10)\n")
    cpu = F.fingerprint_text(head + "    PyTorch 2.2.0+cu121 with CUDA 1201 (you have 2.2.0+cpu)\n")
    assert a.signature == b.signature == "build.xformers_torch_mismatch" and F.same_failure(a, b)
    assert cpu.signature == "build.torch_without_gpu" and not F.same_failure(a, cpu)


def test_an_extension_built_against_another_torch_is_one_failure_per_library_and_apart_from_the_abi_mismatch():
    so = "ImportError: {}/flash_attn_2_cuda.cpython-{}-x86_64-linux-gnu.so: undefined symbol: {}\n"
    a = F.fingerprint_text(so.format("/tmp/.local/lib/python3.10/site-packages", "310",
                                     "_ZNK3c1017SymbolicShapeMeta18init_is_contiguousEv"))
    b = F.fingerprint_text(so.format("/opt/conda/lib/python3.11/site-packages", "311", "_ZN3c104cuda9SetDeviceEi"))
    assert a.signature == b.signature == "build.extension_torch_mismatch" and F.same_failure(a, b)
    abi = F.fingerprint_text(so.format("/opt/lib/python3.12/site-packages", "312",
                                       "_ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"))
    assert abi.signature == "build.extension_cxx11_abi" and not F.same_failure(a, abi)
    apex = F.fingerprint_text("ImportError: /opt/conda/lib/python3.11/site-packages/fused_layer_norm_cuda.cpython-311-x86_64-"
                              "linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi\n")
    assert apex.signature == a.signature and not F.same_failure(b, apex)


def test_a_gpu_too_old_for_torch_is_one_failure_whatever_error_followed_the_warning():
    warn = "    Found GPU0 {} which is of cuda capability {}.\n    PyTorch no longer supports this GPU because it is too old.\n"
    a = F.fingerprint_text(warn.format("GeForce 820M", "2.1") + "THCudaCheck FAIL file=/pytorch/x.cu line=40 error=48 : "
                           "no kernel image is available for execution on the device\n")
    b = F.fingerprint_text(warn.format("NVIDIA GeForce GTX 770", "3.0") + "RuntimeError: CUDA error: no kernel image is "
                           "available for execution on the device\n")
    assert a.signature == b.signature == "build.gpu_too_old" and F.same_failure(a, b)


def test_a_library_unpacked_in_a_temporary_directory_keeps_its_name():
    # (a pip build's overlay under /dev/shm and a conda env load the same torch library: one failure; a temporary
    # script's random name is still no part of the key)
    line = "ImportError: {}/libcusparse.so.12: undefined symbol: __nvJitLinkComplete_12_4, version libnvJitLink.so.12\n"
    overlay = F.fingerprint_text(line.format("/dev/shm/pip-build-env-v0dh/overlay/lib/python3.12/site-packages/nvidia/cusparse/lib"))
    conda = F.fingerprint_text(line.format("/home/dp/anaconda3/envs/x/lib/python3.11/site-packages/nvidia/cusparse/lib"))
    assert F.same_failure(overlay, conda)
    assert "<tmp>" in F.normalise_line("File /tmp/tmpk2j3h4/kernel_x.py failed to compile")


def test_an_extension_missing_a_torch_symbol_is_read_without_the_exception_name_before_it():
    # (a reply that pastes the loader's line alone, and a wrapper's RuntimeError on the line above it)
    bare = F.fingerprint_text("/home/u/.local/lib/python3.12/site-packages/flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so:"
                              " undefined symbol: _ZN3c104cuda9SetDeviceEi\n")
    wrapped = F.fingerprint_text("RuntimeError: Failed to import transformers.models.bloom.modeling_bloom because of the "
                                 "following error (look up to see its traceback):\n/opt/conda/lib/python3.11/site-packages/"
                                 "flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so: undefined symbol: _ZN2at4_ops5zeros4callEv\n")
    assert bare.signature == wrapped.signature == "build.extension_torch_mismatch"
    assert F.same_failure(bare, wrapped)


def _smem(required: int, limit: int) -> str:
    return (f"triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: {required}, Hardware "
            f"limit: {limit}. Reducing block sizes or `num_stages` may help.\n")


def test_a_triton_kernels_shared_memory_need_and_the_gpus_limit_name_the_failure():
    # (one kernel compiled a little differently needs about as much: the same failure; another kernel's need, or the
    # same need on a GPU of another class, is another failure)
    a, b = F.fingerprint_text(_smem(135200, 101376)), F.fingerprint_text(_smem(133136, 101376))
    assert a.signature == "triton.out_of_resources" and F.same_failure(a, b)
    assert not F.same_failure(a, F.fingerprint_text(_smem(663808, 101376)))
    assert not F.same_failure(F.fingerprint_text(_smem(98304, 65536)), F.fingerprint_text(_smem(98304, 49152)))
    assert "Required: ~130k, Hardware limit: ~99k" in a.line


def test_a_watchdog_timeout_rethrown_under_what_is_the_timeout_another_rank_printed_bare():
    op = ("Watchdog caught collective operation timeout: WorkNCCL(SeqNum={}, OpType=_ALLGATHER_BASE, NumelIn=2359296, "
          "NumelOut=18874368, Timeout(ms)=1800000) ran for {} milliseconds before timing out.")
    bare = F.fingerprint_text(f"[E ProcessGroupNCCL.cpp:467] [Rank 1] {op.format(211067, 1800001)}\n")
    rethrown = F.fingerprint_text("terminate called after throwing an instance of 'std::runtime_error'\n"
                                  f"  what():  [Rank 7] NCCL watchdog thread terminated with exception: [Rank 7] "
                                  f"{op.format(202558, 1800860)}\n")
    assert bare.line == rethrown.line and F.same_failure(bare, rethrown)
    other = F.fingerprint_text(f"[Rank 3] {op.format(9, 1800002).replace('2359296', '4096')}\n")
    assert not F.same_failure(bare, other)  # another tensor: another collective


_BNB_BANNER = ("===================================BUG REPORT===================================\n"
               "Welcome to bitsandbytes. For bug reports, please run\n\npython -m bitsandbytes\n\n"
               "================================================================================\n"
               "bin {}\n"
               "CUDA SETUP: CUDA runtime path found: /usr/local/cuda/lib64/libcudart.so.11.0\n")


def test_bitsandbytes_loading_one_binary_is_one_failure_and_another_binary_another():
    win = [F.fingerprint_text(_BNB_BANNER.format(p)) for p in (
        r"C:\Users\ana\proj\venv\lib\site-packages\bitsandbytes\libbitsandbytes_cpu.so",
        r"D:\ProgramData\Anaconda3\envs\py39\lib\site-packages\bitsandbytes\libbitsandbytes_cpu.so")]
    linux = [F.fingerprint_text(_BNB_BANNER.format(p)) for p in (
        "/home/li/.local/lib/python3.9/site-packages/bitsandbytes/libbitsandbytes_cuda114_nocublaslt.so",
        "/root/miniconda3/envs/x/lib/python3.10/site-packages/bitsandbytes/libbitsandbytes_cuda114_nocublaslt.so")]
    assert {fp.signature for fp in win + linux} == {"build.bitsandbytes_binary"}
    assert F.same_failure(*win) and F.same_failure(*linux) and not F.same_failure(win[0], linux[0])
    failed = F.fingerprint_text("RuntimeError:\n        CUDA Setup failed despite GPU being available. Inspect the CUDA "
                                "SETUP outputs above to fix your environment!\n")
    assert failed.signature == "build.bitsandbytes_binary" and not F.same_failure(win[0], failed)


def test_a_banners_rules_do_not_make_a_line_as_wide_as_them_read_as_cut():
    rule = "=" * 80
    lines = [rule, "Welcome to the tool.", rule, "x" * 75 + ".so /", "Next record: starts here"]
    assert F.wrap_width(lines) == 0
    assert F.wrap_width(["a" * 70, "b" * 70, "c" * 20]) == 70  # two lines cut at one width still are


_XF = ("NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
       "     query       : shape={shape} (torch.{dtype})\n"
       "     attn_bias   : <class 'NoneType'>\n"
       "`fa2F@v2.6.3` is not supported because:\n"
       "    requires device with capability > (8, 0) but your GPU has capability ({cc}) (too old)\n"
       "{why}"
       "`cutlassF-pt` is not supported because:\n"
       "{why}")


def test_xformers_turning_down_bf16_on_an_old_gpu_is_one_failure_in_any_app_and_a_build_without_cuda_another():
    bf16 = "    bf16 is only supported on A100+ GPUs\n"
    comfy = F.fingerprint_text(_XF.format(shape="(1, 577, 16, 64)", dtype="bfloat16", cc="7, 5", why=bf16))
    volta = F.fingerprint_text("  File \"/env/lib/python3.11/site-packages/xformers/ops/fmha/dispatch.py\", line 63, "
                               "in _run_priority_list\n    raise NotImplementedError(msg)\n"
                               + _XF.format(shape="(1, 32768, 32, 128)", dtype="bfloat16", cc="7, 0", why=bf16))
    unbuilt = F.fingerprint_text(_XF.format(shape="(2, 4096, 8, 40)", dtype="float16", cc="8, 6",
                                            why="    xFormers wasn't build with CUDA support\n"))
    assert comfy.signature == volta.signature == "gpu.xformers_bf16_unsupported"
    assert F.same_failure(comfy, volta) and not F.same_failure(comfy, unbuilt)


def test_a_missing_cuda_header_is_one_failure_however_the_compiler_words_it_and_another_header_another():
    conda = F.fingerprint_text("cc1plus: fatal error: cuda_runtime.h: No such file or directory\ncompilation terminated.\n")
    apex = F.fingerprint_text("cc1plus: fatal error: cuda_runtime.h:No file or directory\ncompilation terminated.\n"
                              "error: command '/opt/env/bin/nvcc' failed with exit status 1\n")
    cudnn = F.fingerprint_text("fatal error: cudnn.h: No such file or directory\ncompilation terminated.\n")
    assert conda.signature == apex.signature == cudnn.signature == "build.cuda_headers_missing"
    assert F.same_failure(conda, apex) and not F.same_failure(conda, cudnn)


def test_a_collective_in_the_traceback_of_an_nccl_error_is_that_errors_path_not_a_hang():
    errored = F.fingerprint_text(
        "Traceback (most recent call last):\n"
        "  File \"/env/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py\", line 3696, in barrier\n"
        "    work = default_pg.barrier(opts=opts)\n"
        "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1331, unhandled cuda error, "
        "NCCL version 2.18.5\nncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\n"
        "Cuda failure 'invalid argument'\n")
    interrupted = F.fingerprint_text(
        "Traceback (most recent call last):\n"
        "  File \"/env/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py\", line 3696, in barrier\n"
        "    work = default_pg.barrier(opts=opts)\nKeyboardInterrupt\n")
    assert errored.signature == "gpu.cuda_failure"
    assert interrupted.signature == "nccl.collective_hang"  # (Ctrl-C on the hung job: the hang's own evidence)


def test_an_xla_cudnn_version_check_is_one_failure_with_its_level_letter_or_without():
    line = ("external/xla/xla/stream_executor/cuda/cuda_dnn.cc:427] Loaded runtime CuDNN library: 8.5.0 but source "
            "was compiled with: 8.6.0.  CuDNN library needs to have matching major version and equal or higher minor "
            "version.\n")
    bare, levelled = F.fingerprint_text(line), F.fingerprint_text("E " + line)
    assert bare.line == levelled.line and bare.line.startswith("Loaded runtime CuDNN library")
    assert F.same_failure(bare, levelled)


def test_bitsandbytes_without_windows_support_is_one_failure_whichever_binary_it_loaded():
    head = ("CUDA_SETUP: WARNING! libcudart.so not found in any environmental path. Searching in backup paths...\n"
            "CUDA SETUP: Loading binary {path}\\site-packages\\bitsandbytes\\{lib}...\n"
            "argument of type 'WindowsPath' is not iterable\n")
    gpu = F.fingerprint_text(head.format(path="C:\\Users\\ana\\kohya\\venv\\lib", lib="libbitsandbytes_cuda118.so"))
    cpu = F.fingerprint_text(head.format(path="D:\\py310\\lib", lib="libbitsandbytes_cpu.so"))
    linux = F.fingerprint_text("CUDA SETUP: Loading binary /env/lib/bitsandbytes/libbitsandbytes_cpu.so...\n"
                               "TypeError: argument of type 'WindowsPath' is not iterable\n")
    assert gpu.signature == cpu.signature == "build.bitsandbytes_windows"
    assert F.same_failure(gpu, cpu)
    assert linux.signature != "build.bitsandbytes_windows"  # a .so on a Linux path is no Windows install


def test_an_extension_missing_torchs_symbol_is_one_failure_with_its_library_path_or_without():
    pathed = F.fingerprint_text("ImportError: /env/lib/python3.11/site-packages/flash_attn_2_cuda.cpython-311-x86_64-"
                                "linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi\n")
    bare = F.fingerprint_text("ImportError: undefined symbol: _ZN3c104cuda9SetDeviceEi\n")
    other = F.fingerprint_text("ImportError: undefined symbol: PyInit_missing_module\n")
    assert pathed.signature == bare.signature == "build.extension_torch_mismatch"
    assert F.same_failure(pathed, bare)
    assert other.signature != "build.extension_torch_mismatch"  # no torch C++ symbol: no torch mismatch


_XF_LOAD = ("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
            "    PyTorch {built} (you have {have})\n    Python  3.11.5 (you have 3.11.5)\n"
            "  Please reinstall xformers\n{tail}")


def test_xformers_built_for_another_torch_is_named_with_or_without_its_cuda_and_above_what_it_causes():
    bare = F.fingerprint_text(_XF_LOAD.format(built="2.0.1", have="2.1.0+cu121", tail=""))
    cuda = F.fingerprint_text(_XF_LOAD.format(
        built="2.6.0+cu124 with CUDA 1204", have="2.5.1+cu124",
        tail="NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
             "`fa3F@0.0.0` is not supported because:\n    xFormers wasn't build with CUDA support\n"))
    assert bare.signature == cuda.signature == "build.xformers_torch_mismatch"
    assert F.same_failure(bare, cuda)


def test_xformers_turning_down_a_gpu_too_new_is_one_failure_and_not_the_bf16_one():
    head = "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
    blackwell = F.fingerprint_text(head + "`cutlassF-pt` is not supported because:\n    requires device with capability "
                                   "< (5, 0) but your GPU has capability (12, 0) (too new)\n")
    traced = F.fingerprint_text('  File "/app/nodes.py", line 9, in attend\n    out = xops.memory_efficient_attention(q, k, v)\n'
                                + head + "`cutlassF-pt` is not supported because:\n    requires device with capability "
                                "<= (9, 0) but your GPU has capability (12, 0) (too new)\n")
    old = F.fingerprint_text(head + "`cutlassF-pt` is not supported because:\n    bf16 is only supported on A100+ GPUs\n")
    assert blackwell.signature == traced.signature == "gpu.xformers_gpu_too_new"
    assert F.same_failure(blackwell, traced) and not F.same_failure(blackwell, old)


def test_xformers_on_an_apple_gpu_is_one_failure_whatever_the_shapes_and_not_the_too_new_gpu_one():
    head = "No operator found for `memory_efficient_attention_forward` with inputs:\n     query       : shape=({}) (torch.float32)\n"
    mac = F.fingerprint_text("NotImplementedError: " + head.format("1, 4096, 1, 512") + "`cutlassF` is not supported "
                             "because:\n    device=mps (supported: {'cuda'})\n`smallkF` is not supported because:\n"
                             "    device=mps (supported: {'cuda', 'cpu'})\n")
    webui = F.fingerprint_text("2023-05-31 09:03:37,811 | sd | ERROR | call_queue | Exception: " + head.format("1, 3136, 1, 512")
                               + "`ck_decoderF` is not supported because:\n    max(query.shape[-1] != value.shape[-1]) > 256\n"
                               "    device=mps (supported: {'cuda'})\n")
    new_gpu = F.fingerprint_text("NotImplementedError: " + head.format("1, 11, 32, 128") + "`fa3F@0.0.0` is not supported "
                                 "because:\n    requires device with capability <= (9, 0) but your GPU has capability "
                                 "(12, 0) (too new)\n")
    assert mac.signature == webui.signature == "build.xformers_device_unsupported"
    assert F.same_failure(mac, webui) and not F.same_failure(mac, new_gpu)


def test_a_record_printed_after_a_progress_bar_on_its_line_keys_as_the_record():
    record = ("[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective operation timeout: "
              "WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800089 "
              "milliseconds before timing out.\n")
    after_bar = F.fingerprint_text("Running tokenizer on dataset:  47%|████▊     | 3169/6811 [29:55<38:27, 1.58 examples/s]"
                                   + record)
    alone = F.fingerprint_text(record)
    assert after_bar.line == alone.line and after_bar.key == alone.key


def test_a_cuda_binary_bitsandbytes_lacks_is_one_failure_loaded_or_missing_and_another_binary_another():
    loaded = F.fingerprint_text("bin /env/lib/python3.10/site-packages/bitsandbytes/libbitsandbytes_cuda122.so\n"
                                "CUDA SETUP: Detected CUDA version 122\n")
    missing = F.fingerprint_text("CUDA SETUP: Detected CUDA version 122\nCUDA SETUP: Required library version not "
                                 "found: libbitsandbytes_cuda122.so. Maybe you need to compile it from source?\n"
                                 "CUDA SETUP: Defaulting to libbitsandbytes_cpu.so...\n")
    volta = F.fingerprint_text("CUDA SETUP: Required library version not found: libbitsandbytes_cuda121_nocublaslt.so."
                               " Maybe you need to compile it from source?\n")
    cpu_a = F.fingerprint_text("bin /env/lib/site-packages/bitsandbytes/libbitsandbytes_cpu.so\n")
    cpu_b = F.fingerprint_text("CUDA SETUP: Required library version not found: libbitsandbytes_cpu.so. Maybe you need "
                               "to compile it from source?\n")
    assert loaded.signature == missing.signature == volta.signature == "build.bitsandbytes_binary"
    assert F.same_failure(loaded, missing) and not F.same_failure(missing, volta)
    assert not F.same_failure(cpu_a, cpu_b)  # the CPU binary is where several causes end: its name is no diagnosis


def test_triton_out_of_resources_worded_either_way_is_one_failure_and_another_need_another():
    new = F.fingerprint_text("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 147456, "
                             "Hardware limit: 101376. Reducing block sizes or `num_stages` may help.\n")
    terse = F.fingerprint_text("triton.runtime.errors.OutOfResources: shared memory, Required: 147456, Hardware limit: "
                               "101376\n")
    other = F.fingerprint_text("OutOfResources: out of resource: shared memory, Required: 114688, Hardware limit: "
                               "101376. Reducing block sizes or `num_stages` may help.\n")
    assert new.signature == terse.signature == other.signature == "triton.out_of_resources"
    assert new.key == terse.key and not F.same_failure(new, other)


def test_a_message_wrapped_after_its_comma_is_read_with_its_tail():
    # A Triton error cut at "shared memory," with its numbers on the next line is not any shared-memory shortfall:
    # it is this kernel's, and another kernel's need is another failure.
    wrapped = F.fingerprint_text("triton.runtime.errors.OutOfResources: out of resource: shared memory,\n"
                                 "Required: 98304, Hardware limit: 65536.\nReducing block sizes or `num_stages` may help.\n")
    moe = F.fingerprint_text("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 147456, "
                             "Hardware limit: 101376. Reducing block sizes or `num_stages` may help.\n")
    assert "Required: ~96k" in wrapped.line
    assert not F.same_failure(wrapped, moe)


def test_an_engine_run_against_other_cuda_libraries_is_one_failure_however_tensorrt_words_it():
    trt7 = F.fingerprint_text("[TensorRT] ERROR: myelin/myelinGraphContext.h (26) - Myelin Error in MyelinGraphContext: 1 "
                              "(myelinVersionMismatch : Compiled against cuBLAS 11.3.0.0 but running against cuBLAS "
                              "11.2.1.0.\n)\nAborted (core dumped)\n")
    trt8 = F.fingerprint_text("[E] [TRT] 1: [raiiMyelinGraph.h::RAIIMyelinGraph::24] Error Code 1: Myelin (Compiled "
                              "against cuBLASLt 11.5.2.0 but running against cuBLASLt 11.5.1.0.)\n")
    internal = F.fingerprint_text("[E] Error[1]: [codeGenerator.cpp::compileGraph::894] Error Code 1: Myelin (No Myelin "
                                  "Error exists)\n")
    assert trt7.signature == trt8.signature == "build.trt_library_mismatch"
    assert F.same_failure(trt7, trt8)
    assert internal.signature == "tensorrt.error" and not F.same_failure(trt8, internal)


def test_nccl_failing_to_create_its_shm_segment_is_named_under_torchs_system_error():
    torch_side = F.fingerprint_text(
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, unhandled "
        "system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\nncclSystemError: System call (e.g. "
        "socket, malloc) or external library call failed or device error.\nLast error:\nError while creating shared "
        "memory segment /dev/shm/nccl-Ab12Cd (size 9637888)\n")
    ray_worker = F.fingerprint_text("(Worker pid=4242) Error while creating shared memory segment /dev/shm/nccl-Zz9Yy8 "
                                    "(size 7340384)\n")
    attach = F.fingerprint_text("misc/shmutils.cc:129 NCCL WARN Error while attaching to shared memory segment "
                                "/dev/shm/nccl-Qq (size 0), error: No such file or directory (2)\n")
    assert torch_side.signature == ray_worker.signature == "nccl.shm_create"
    assert F.same_failure(torch_side, ray_worker) and not F.same_failure(torch_side, attach)


def test_an_op_without_an_mps_kernel_is_that_op_in_either_wording_or_in_bold():
    implemented = F.fingerprint_text("NotImplementedError: The operator 'aten::index.Tensor' is not current implemented "
                                     "for the MPS device.\n")
    dispatcher = F.fingerprint_text("NotImplementedError: Could not run 'aten::index.Tensor' with arguments from the "
                                    "'MPS' backend.\n")
    bold = F.fingerprint_text("NotImplementedError: The operator **'aten::_index_put_impl_'** is not current "
                              "implemented for the MPS device.\n")
    plain = F.fingerprint_text("NotImplementedError: The operator 'aten::_index_put_impl_' is not current implemented "
                               "for the MPS device.\n")
    assert {implemented.signature, dispatcher.signature, bold.signature} == {"mps.unsupported_op"}
    assert F.same_failure(implemented, dispatcher) and F.same_failure(bold, plain)
    assert not F.same_failure(implemented, plain)


def test_an_import_that_names_the_symbol_and_its_module_is_the_same_failure_in_any_program():
    compile_side = F.fingerprint_text(
        'Traceback (most recent call last):\n  File "/srv/app/run.py", line 9, in <module>\n    main()\n'
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
        "ImportError: cannot import name 'triton_key' from 'triton.compiler.compiler' "
        "(/opt/venv/lib/python3.11/site-packages/triton/compiler/compiler.py)\n")
    other_user = F.fingerprint_text(
        "ImportError: cannot import name 'triton_key' from 'triton.compiler.compiler' "
        "(C:\\tools\\py\\Lib\\site-packages\\triton\\compiler\\compiler.py)\n")
    other_symbol = F.fingerprint_text(
        "ImportError: cannot import name 'get_cuda_stream' from 'triton.runtime.jit' "
        "(/opt/venv/lib/python3.11/site-packages/triton/runtime/jit.py)\n")
    assert F.same_failure(compile_side, other_user)
    assert not F.same_failure(compile_side, other_symbol)


_GGML_POOL = ("CUDA error: out of memory\n  current device: 0, in function alloc at {path}ggml-cuda.cu:{n}\n"
              "  cuMemAddressReserve(&pool_addr, CUDA_POOL_VMM_MAX_SIZE, 0, 0, 0)\n{path}ggml-cuda.cu:97: CUDA error\n")


def test_a_c_checks_report_of_where_it_fired_is_its_frame_and_a_server_logs_prefix_comes_off():
    elided = F.fingerprint_text(_GGML_POOL.format(path="...", n=476))
    server = F.fingerprint_text("\n".join(f"[3121] 7.51.240.{900 + k} E {line}" for k, line in enumerate(
        _GGML_POOL.format(path="/home/u/llama.cpp/ggml/src/ggml-cuda/", n=532).splitlines())) + "\n")
    elsewhere = F.fingerprint_text("CUDA error: out of memory\n  current device: 0, in function ggml_cuda_op_mul_mat at "
                                   "/src/ggml-cuda.cu:1611\n  cudaMalloc(&ptr, size)\n")
    assert elided.frames == server.frames == ("ggml-cuda.cu:alloc",)
    assert server.line == "CUDA error: out of memory"
    assert F.same_failure(elided, server) and not F.same_failure(elided, elsewhere)


def test_a_fault_reported_at_the_next_synchronisation_takes_no_frame_from_where_it_surfaced():
    fault = F.fingerprint_text("CUDA error: an illegal memory access was encountered\n  current device: 1, in function "
                               "ggml_backend_cuda_synchronize at /src/ggml-cuda.cu:2390\n  cudaStreamSynchronize(stream)\n")
    assert fault.signature == "gpu.illegal_address" and fault.frames == ()


def test_a_librarys_folders_come_off_even_when_the_path_is_elided():
    elided = F.fingerprint_text('Microsoft.ML.OnnxRuntime.OnnxRuntimeException: [ErrorCode:RuntimeException] '
                                'LoadLibrary failed with error 126 "" when trying to load '
                                '"...\\bin\\Debug\\net8.0\\onnxruntime_providers_cuda.dll"\n')
    whole = F.fingerprint_text('Microsoft.ML.OnnxRuntime.OnnxRuntimeException: [ErrorCode:RuntimeException] '
                               'LoadLibrary failed with error 126 "" when trying to load '
                               '"D:\\work\\App\\bin\\Release\\runtimes\\win-x64\\native\\onnxruntime_providers_cuda.dll"\n')
    assert "bin" not in elided.line and elided.line == whole.line


def test_a_missing_attribute_of_a_named_class_is_specific_and_one_of_none_is_not():
    one = F.fingerprint_text("AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'\n")
    two = F.fingerprint_text('Exception ignored in: <function DeepSpeedCPUAdam.__del__ at 0x7f3a>\nTraceback (most recent '
                             'call last):\nAttributeError: \'DeepSpeedCPUAdam\' object has no attribute \'ds_opt_adam\'\n')
    none_a = F.fingerprint_text("AttributeError: 'NoneType' object has no attribute 'shape'\n")
    none_b = F.fingerprint_text("AttributeError: 'NoneType' object has no attribute 'shape'\n")
    assert F.same_failure(one, two)
    assert F.similarity(none_a, none_b).level == "similar"


def test_nccls_warning_that_names_its_own_source_file_says_where_it_failed():
    h800 = F.fingerprint_text("gpu-node-7:41:41 [3] transport/nvls.cc:158 NCCL WARN Cuda failure 1 'invalid argument'\n")
    h100 = F.fingerprint_text("worker-2:1177:1177 [0] transport/nvls.cc:157 NCCL WARN Cuda failure 1 'invalid argument'\n")
    elsewhere = F.fingerprint_text("host:9:9 [0] include/alloc.h:103 NCCL WARN Cuda failure 1 'invalid argument'\n")
    assert F.same_failure(h800, h100) and not F.same_failure(h800, elsewhere)


def test_a_line_of_richs_traceback_box_reads_as_its_source_line_and_is_never_joined_to_the_next():
    box = ("╭──────────────────── Traceback (most recent call last) ────────────────────╮\n"
           "│ /home/u/venv/lib/python3.10/site-packages/pkg/cextension.py:20 in <module>│\n"
           "│   19 │   if lib is None and torch.cuda.is_available():                   │\n"
           "│ ❱ 20 │   │   raise RuntimeError('''                                      │\n"
           "│   21 │   │   CUDA Setup failed despite GPU being available. Please run t │\n"
           "│   22 │   │                                                               │\n"
           "│   23 │   │   python -m bitsandbytes                                      │\n"
           "╰───────────────────────────────────────────────────────────────────────────╯\n")
    wide = box.replace("Please run t │", "Please run the following command │")
    a, b = F.fingerprint_text(box), F.fingerprint_text(wide)
    assert a.line == "CUDA Setup failed despite GPU being available. Please run t", a.line
    assert F.same_failure(a, b)  # (one box cut the message shorter than the other)


def test_a_librarys_own_exception_with_the_same_message_is_one_failure_wherever_it_was_raised_from():
    at_import = ("Traceback (most recent call last):\n"
                 '  File "/opt/venv/lib/python3.11/site-packages/deepspeed/ops/op_builder/builder.py", line 51, in '
                 "installed_cuda_version\n"
                 "    raise MissingCUDAException(\"CUDA_HOME does not exist, unable to compile CUDA op(s)\")\n"
                 "deepspeed.ops.op_builder.builder.MissingCUDAException: CUDA_HOME does not exist, unable to compile "
                 "CUDA op(s)\n")
    at_build = ("Traceback (most recent call last):\n"
                '  File "/tmp/pip-install-x1/deepspeed/setup.py", line 100, in <module>\n'
                "    cuda_major = installed_cuda_version()\n"
                '  File "/tmp/pip-install-x1/deepspeed/op_builder/builder.py", line 50, in installed_cuda_version\n'
                "    raise MissingCUDAException(\"CUDA_HOME does not exist, unable to compile CUDA op(s)\")\n"
                "op_builder.builder.MissingCUDAException: CUDA_HOME does not exist, unable to compile CUDA op(s)\n")
    assert F.same_failure(F.fingerprint_text(at_import), F.fingerprint_text(at_build))
    # (Python's own exception with one message says nothing of where: still a guess, not the same failure)
    plain_a = at_import.replace("deepspeed.ops.op_builder.builder.MissingCUDAException", "RuntimeError")
    plain_b = at_build.replace("op_builder.builder.MissingCUDAException", "RuntimeError")
    assert not F.same_failure(F.fingerprint_text(plain_a), F.fingerprint_text(plain_b))


def test_a_python_warnings_file_and_line_come_off_as_an_exceptions_prefix_does():
    a = F.normalise_line("site-packages/torch/autograd/graph.py:744: UserWarning: Plan failed with a cudnnException: "
                         "CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed")
    b = F.normalise_line("C:\\venv\\lib\\site-packages\\torch\\nn\\modules\\conv.py:456: UserWarning: Plan failed with "
                         "a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed")
    assert a == b and a.startswith("UserWarning: Plan failed"), (a, b)


def test_a_line_pasted_in_inline_code_reads_as_the_bare_line():
    bare = "E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:447] Loaded runtime CuDNN library: 8.7.0 but " \
           "source was compiled with: 8.9.4."
    assert F.normalise_line("`" + bare + "`").strip("`") == F.normalise_line(bare).strip("`")
    assert F.normalise_line(bare).startswith("Loaded runtime CuDNN library")


def test_jax_started_against_an_older_cuda_library_is_one_failure_per_library():
    msg = ("CUDA backend failed to initialize: Found {lib} version {have}, but JAX was built against version {want}, "
           "which is newer. The copy of {lib} that is installed must be at least as new as the version against which "
           "JAX was built. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n")
    colab = F.fingerprint_text(msg.format(lib="CUDA", have=12010, want=12020))
    later = F.fingerprint_text("running AlphaFold...\n" + msg.format(lib="CUDA", have=12030, want=12040))
    cudnn = F.fingerprint_text(msg.format(lib="cuDNN", have=8600, want=8906))
    assert colab.signature == "jax.library_too_old" and F.same_failure(colab, later)
    assert not F.same_failure(colab, cudnn)  # (another library, another fix)


def _ort(logger, host, file, expr, when=""):
    return (f"{when}[E:onnxruntime:{logger}, cuda_call.cc:129 CudaCall] CUDNN failure 3000: CUDNN_STATUS_NOT_SUPPORTED ; "
            f"GPU=0 ; hostname={host} ; file={file} ; line=240 ; expr={expr}(CudnnHandle(), pooling_desc, &alpha); \n")


def test_onnx_runtimes_cuda_call_report_is_one_failure_on_any_machine_and_logger_and_another_per_call():
    pool_a = F.fingerprint_text(_ort("Default", "gpu-box-7", "pool.cc", "cudnnPoolingForward"))
    pool_b = F.fingerprint_text(_ort("Model", "linux772", "pool.cc", "cudnnPoolingForward",
                                     when="> 2025-03-02 11:20:31.518 "))  # (quoted in a reply, with its time)
    conv = F.fingerprint_text(_ort("Default", "gpu-box-7", "conv.cc", "cudnnConvolutionForward"))
    assert "gpu-box-7" not in pool_a.line and pool_a.line.startswith("CUDNN failure 3000")
    assert F.same_failure(pool_a, pool_b)
    assert not F.same_failure(pool_a, conv)  # (another call, another limit)


def test_a_words_capitals_and_a_word_broken_by_a_terminals_wrap_are_not_another_word():
    assert F._changed_words("CuDNN error: not supported if you passed in a n on-contiguous input",
                            "cuDNN error: not supported if you passed in a non-contiguous input") == ""
    assert F._changed_words("cuDNN error: not supported for a contiguous input",
                            "cuDNN error: not supported for a strided input") != ""


def _link_log(lib, suffix=""):
    return ("FAILED: fused_adam.so\n"
            f"c++ fused_adam.o kernels.cuda.o -shared -l{lib} -L/opt/env/lib64 -lcudart -o fused_adam.so\n"
            f"/usr/bin/ld: cannot find -l{lib}{suffix}\n"
            "collect2: error: ld returned 1 exit status\n"
            "ninja: build stopped: subcommand failed.\n")


def test_a_link_step_that_cannot_find_a_library_is_one_failure_per_library_across_binutils_versions():
    old = F.fingerprint_text(_link_log("curand"))
    new = F.fingerprint_text(_link_log("curand", ": No such file or directory"))
    other = F.fingerprint_text(_link_log("cufft"))
    assert old.signature == "build.compile_error" and old.line.endswith("cannot find -lcurand"), old.line
    assert F.same_failure(old, new)
    assert not F.same_failure(old, other)


def test_a_source_file_built_in_pips_temporary_tree_keeps_its_name():
    # (torch built from source by pip and a conda build report one THCBlas.cu; a script with a random temporary name
    # still reads as a temporary path)
    pip = F.normalise_line("RuntimeError: cublas runtime error : the GPU program failed to execute at "
                           "/tmp/pip-req-build-jh50bw28/aten/src/THC/THCBlas.cu:259")
    conda = F.normalise_line("RuntimeError: cublas runtime error : the GPU program failed to execute at "
                             "/opt/conda/conda-bld/pytorch_1549628766161/work/aten/src/THC/THCBlas.cu:258")
    assert pip == conda and pip.endswith("THCBlas.cu:N"), (pip, conda)
    assert "<tmp>" in F.normalise_line("File /tmp/pip-req-build-jh50bw28 is missing")


def test_a_kernel_log_record_after_the_key_line_is_never_read_as_its_wrapped_tail():
    # (the fault's line happens to be as long as two journald lines below it, which looked like a terminal's wrap width)
    fault = ("Memory access fault by GPU node-1 (Agent handle: 0x55f8b54eec30) on address 0x7f2a53193000. "
             "Reason: Page not present or supervisor privilege.")
    rec = "Jan 09 18:55:45 alexpc kernel: amdgpu 0000:0b:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:8 p)"
    rec = rec[:len(fault)].ljust(len(fault), "x")
    fp = F.fingerprint_text("\n".join([fault, rec, rec.replace("18:55:45", "18:55:46")]) + "\n")
    assert fp.line.endswith("supervisor privilege."), fp.line
    assert F.normalise_line("Jan 09 18:55:45 alexpc kernel: boom at step") == "boom at step"


def test_ggml_build_without_the_gpus_arch_names_the_kernel_not_the_level_word():
    line = ("{}/ggml/src/ggml-cuda/mmv.cu:53: ERROR: CUDA kernel mul_mat_vec has no device code compatible with CUDA "
            "arch 610. ggml-cuda.cu was compiled for: 610\n")
    one = _fp(line.format("/tmp/tmpa81kx/llama_cpp_python-0.3.2/vendor/llama.cpp")
              + "CUDA error: unspecified launch failure\n")
    two = _fp(line.format("/home/ana/src/llama.cpp"))
    assert one.signature == two.signature == "build.no_device_code"
    assert one.kernel == two.kernel == "mul_mat_vec"
    assert F.similarity(one, two).level in ("exact", "near")
    other = _fp(line.replace("mmv.cu", "mmq.cuh").replace("mul_mat_vec", "mul_mat_q").format("/opt/ollama/llama"))
    assert other.kernel == "mul_mat_q"
    assert F.similarity(one, other).level == "none"  # another kernel the build lacks: another fix


def test_a_device_asserts_site_never_takes_a_log_level_for_its_kernel():
    fp = _fp("/src/ggml-cuda/fattn.cu:211: ERROR: something the kernel did not expect\n"
             "CUDA error: unspecified launch failure\n")
    assert fp.kernel != "ERROR"


def test_jax_words_a_missing_cuda_library_two_ways_and_both_are_one_failure():
    old = _fp("ERROR:2025-05-02 10:11:12,345:jax._src.xla_bridge:444: Jax plugin configuration error: Exception when "
              "calling jax_plugins.xla_cuda12.initialize()\nTraceback (most recent call last):\n"
              "RuntimeError: Unable to load cuSPARSE. Is it installed?\n")
    new = _fp("RuntimeError: jaxlib/cuda/versions_helpers.cc:81: operation cusparseGetProperty(MAJOR_VERSION, &major) "
              "failed: The cuSPARSE library was not found.\n")
    assert old.signature == new.signature == "build.jax_cuda_library"
    assert F.similarity(old, new).level == "near"
    dnn = _fp("RuntimeError: Unable to load cuDNN. Is it installed?\n")
    assert F.similarity(old, dnn).level == "none"  # another library, another fix


def test_the_next_command_typed_is_not_a_wrapped_tail_of_the_error_above_it():
    fp = _fp("common.cuh:98: ggml was not compiled with any CUDA arch <= 610\n"
             "root@box:~/llama.cpp/build/bin# ./llama-cli --version\n")
    assert fp.signature == "build.no_device_code"
    assert "root@box" not in fp.line and "llama-cli" not in fp.line


def test_a_compilers_fatal_error_with_a_column_is_not_ggmls_abort():
    fp = _fp("csrc/kernel.cu:12:10: fatal error: cutlass/gemm.h: No such file or directory\n")
    assert fp is None or fp.signature != "cpp.assert"


_CUDNN_CHECK = ("2024-02-03 09:12:44.118302: E {where}/stream_executor/cuda/cuda_dnn.cc:{n}] Loaded runtime CuDNN "
                "library: 8.0.5 but source was compiled with: {built}.  CuDNN library needs to have matching major "
                "version and equal or higher minor version. If using a binary install, upgrade your CuDNN library.  "
                "If building from sources, make sure the library loaded at runtime is compatible with the version "
                "specified during compile configuration.\n")


def test_a_version_check_keeps_the_versions_it_names():
    # the same check from two builds: TensorFlow made with cuDNN 8.1.0 and jaxlib made with 8.6.0, both loading an
    # old 8.0.5, are two failures with two fixes; the same build's check on two machines is one
    tf = [F.fingerprint_text(_CUDNN_CHECK.format(where="tensorflow", n=n, built="8.1.0")) for n in (359, 362)]
    jax = F.fingerprint_text(_CUDNN_CHECK.format(where="external/org_tensorflow/tensorflow/compiler/xla", n=417,
                                                 built="8.6.0"))
    assert tf[0].key == tf[1].key and "8.1.0" in tf[0].line and "8.0.5" in tf[0].line
    assert jax.key != tf[0].key and "8.6.0" in jax.line
    assert F.similarity(tf[0], jax).level != "same"


def test_lines_a_capture_padded_with_spaces_are_not_taken_for_a_cut():
    # a terminal capture pads every line to its width: those lines were not cut, and the key line is the watchdog's,
    # not the first line of the capture joined with everything after it
    pad = 120
    lines = ["INFO:trainer:Saving checkpoint. Gathering the full state dict...",
             "INFO:trainer:Gathering took 109.5 secs",
             *[WATCHDOG[k:k + pad] for k in range(0, len(WATCHDOG), pad)]]
    text = "\n".join(x.ljust(pad) for x in lines) + "\n"
    fp = F.fingerprint_text(text)
    assert fp.key == F.fingerprint_text(WATCHDOG + "\n").key and "Saving checkpoint" not in fp.line


def test_a_peer_address_and_port_are_stripped_and_a_version_of_four_numbers_is_not():
    a = F.normalise_line("net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer fe80::966d:ae03:8b:df78%ib0<53249> "
                         "with error 4")
    b = F.normalise_line("net_ib.cc:1701 NCCL WARN NET/IB : Got completion from peer fe80::966d:ae03:8b:df50%ib0<44413> "
                         "with error 4")
    assert a == b and "<addr>" in a
    assert "<addr>" in F.normalise_line("connect to 10.0.0.7:29500 failed")
    assert "8.9.7.29" in F.normalise_line("Loaded runtime CuDNN library: 8.9.7.29 but source was compiled with: 8.6.0")


def test_a_spinner_frame_and_a_relative_source_path_do_not_change_the_key_line():
    # a CLI's progress spinner before the error ("⠋ "), and a build tree's relative path to the same source file
    spun = F.normalise_line("\u280b mmq.cuh:2589: ERROR: CUDA kernel mul_mat_q has no device code compatible with CUDA "
                            "arch 860. ggml-cuda.cu was compiled for: 520")
    built = F.normalise_line("ggml/src/ggml-cuda/template-instances/../mmq.cuh:2589: ERROR: CUDA kernel mul_mat_q has no "
                             "device code compatible with CUDA arch 750. ggml-cuda.cu was compiled for: 520")
    assert spun == built and spun.startswith("mmq.cuh:N")
    assert F.normalise_line("- item one") == "- item one"  # (a line that opens with a dash keeps it)


def test_a_servers_column_tagged_record_is_not_read_as_the_key_lines_wrapped_tail():
    # (llama.cpp's server tags each record with a word in a column of its own: "srv    operator(): ...")
    log = ("/src/ggml/src/ggml-cuda/im2col.cu:84: GGML_ASSERT(dst->type == GGML_TYPE_F16) failed\n"
           "srv    operator(): http client error: Failed to read connection\n")
    assert F.fingerprint_text(log).line == "GGML_ASSERT(dst->type == GGML_TYPE_F16) failed"
    wrapped = "RuntimeError: expected all tensors to be on the same device, but found at least two\ndevices, cuda:0 and cpu!\n"
    assert F.fingerprint_text(wrapped).line.endswith("two devices, cuda:N and cpu!")


def test_one_assert_formatted_two_ways_by_two_versions_is_one_failure():
    linux = F.fingerprint_text("/home/u/llama.cpp/ggml/src/ggml-cuda/im2col.cu:84: "
                               "GGML_ASSERT(dst->type == GGML_TYPE_F16 || dst->type == GGML_TYPE_F32) failed\n")
    windows = F.fingerprint_text("D:\\a\\llama.cpp\\ggml\\src\\ggml-cuda\\im2col.cu:84: "
                                 "GGML_ASSERT(dst->type == GGML_TYPE_F16 ||dst->type == GGML_TYPE_F32) failed\n")
    other = F.fingerprint_text("/home/u/llama.cpp/ggml/src/ggml-cuda/im2col.cu:84: "
                               "GGML_ASSERT(src->type == GGML_TYPE_F16 || src->type == GGML_TYPE_F32) failed\n")
    assert F.same_failure(linux, windows)
    assert not F.same_failure(linux, other)


def test_a_ucx_caught_signal_is_one_failure_on_every_host_and_apart_from_another_signal():
    # (UCX prints "[host:pid :0:tid] Caught signal 7 (...)" before its backtrace: the host and ids differ per machine)
    a = F.fingerprint_text("[qgpu813-cv:1    :0:381] Caught signal 7 (Bus error: nonexistent physical address)\n"
                           "==== backtrace (tid:    381) ====\n 0 0x00000000000143c0 __funlockfile()  ???:0\n")
    b = F.fingerprint_text("[8d6bf97c3bf4:3039 :0:3095] Caught signal 7 (Bus error: nonexistent physical address)\n"
                           "==== backtrace (tid:   3095) ====\n 0 0x0000000000043090 killpg()  ???:0\n")
    c = F.fingerprint_text("[8d6bf97c3bf4:3039 :0:3095] Caught signal 11 (Segmentation fault: address not mapped)\n")
    assert a.signature == "ucx.signal:SIGBUS" and a.key == b.key
    assert c.signature == "ucx.signal:SIGSEGV" and c.key != a.key


def _miopen_jit(kernel: str, diagnostic: str, tmp: str) -> str:
    """A MIOpen kernel that hiprtc failed to build at run time, as MIOpen logs it (the formats are MIOpen's)."""
    return (f"MIOpen(HIP): Warning [BuildHip] /tmp/comgr-{tmp}/input/{kernel}:39:10: {diagnostic}\n"
            f"   39 | #include <limits>\n      |          ^~~~~~~~\n1 error generated when compiling for gfx1030.\n"
            f"MIOpen(HIP): Error [BuildHip] HIPRTC status = HIPRTC_ERROR_COMPILATION (6), source file: {kernel}\n"
            f"MIOpen(HIP): Error [Compile] 'hiprtcCompileProgram(prog.get(), c_options.size(), c_options.data())' "
            f"{kernel}: HIPRTC_ERROR_COMPILATION (6)\n"
            "RuntimeError: miopenStatusUnknownError\n")


def test_kernels_a_runtime_compiler_failed_to_build_for_one_reason_are_one_failure():
    # (one host header missing fails every kernel MIOpen compiles: two reports naming two kernels are one cause)
    a = F.fingerprint_text(_miopen_jit("naive_conv.cpp", "fatal error: 'limits' file not found", "e640"))
    b = F.fingerprint_text(_miopen_jit("gridwise_convolution_implicit_gemm.cpp",
                                       "fatal error: 'limits' file not found", "39ed"))
    assert a is not None and a.key == b.key and F.same_failure(a, b)
    assert "'limits' file not found" in a.line
    # another diagnostic is another failure, whatever kernel
    c = F.fingerprint_text(_miopen_jit("naive_conv.cpp", "error: not a valid operand.", "77aa"))
    assert c.key != a.key and not F.same_failure(a, c)


def test_torchs_thc_check_line_and_the_exception_it_raises_are_one_failure():
    # (a paste that stops at the check line read as nothing; the check line and the exception are one failure)
    check = ("THCudaCheck FAIL file=/opt/conda/work/aten/src/THC/THCGeneral.cpp line=50 error=802 : system not yet "
             "initialized\nTraceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\n")
    raised = ("Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n    torch.cuda.init()\n"
              "RuntimeError: cuda runtime error (802) : system not yet initialized at /pytorch/aten/src/THC/"
              "THCGeneral.cpp:47\n")
    a, b = F.fingerprint_text(check), F.fingerprint_text(raised)
    assert a is not None and a.signature == b.signature == "driver.init_failed"
    assert F.same_failure(a, b)


def test_cupys_own_frames_are_a_librarys_not_the_users():
    # (two NVRTC option errors of different causes shared CuPy's check_status / compileProgram frames, read as the
    # user's code, and were called one failure; CuPy's frames, as torch's and numpy's, are every such failure's)
    def nvrtc(user: str) -> str:
        return ("Traceback (most recent call last):\n"
                f'  File "{user}", line 12, in <module>\n    kernel = cp.RawModule(code=src, options=opts)\n'
                '  File "cupy/cuda/nvrtc.pyx", line 98, in cupy.cuda.nvrtc.compileProgram\n'
                '  File "cupy/cuda/nvrtc.pyx", line 53, in cupy.cuda.nvrtc.check_status\n'
                "cupy.cuda.nvrtc.NVRTCError: NVRTC_ERROR_INVALID_OPTION (5)\n")
    a, b = F.fingerprint_text(nvrtc("/home/ann/fft_filter.py")), F.fingerprint_text(nvrtc("/srv/bob/stencil.py"))
    assert all("nvrtc.pyx" not in f for f in a.frames) and a.frames == ("fft_filter.py:<module>",)
    assert not F.same_failure(a, b)
