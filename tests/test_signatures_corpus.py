"""The field corpus: logs composed around the exact lines public failure reports show (CUDA, HIP/HSA,
ROCm 5-7, NCCL/RCCL, cuBLAS/cuDNN/MIOpen, Triton/Inductor, torchrun, vLLM/SGLang, kernel logs,
cuda-gdb, rocgdb, gdb, rocm-debug-agent), each with the root cause it must be classified as, plus
negative controls that must classify as nothing. The accuracy is printed; under 95 % fails."""
import json
from pathlib import Path

import pytest

from dbglog.diagnose import signatures as S

CORPUS = Path(__file__).resolve().parent / "corpus" / "logs"
INDEX = json.loads((CORPUS / "index.json").read_text(encoding="utf-8"))


def _classify(entry):
    m = S.classify_text((CORPUS / entry["file"]).read_bytes())
    if m and entry.get("line") and entry["line"] not in m.line:
        return f"{m.name} (decided by the wrong line: {m.line[:80]!r})"  # right family, noise line won
    return m.name if m else None


def test_corpus_is_big_and_varied():
    assert len(INDEX) >= 80
    assert sum(1 for e in INDEX if e["expect"] is None) >= 3  # negative controls
    assert len({e["file"] for e in INDEX}) == len(INDEX)
    for e in INDEX:
        assert (CORPUS / e["file"]).is_file() and e["source"]
    families = {(e["expect"] or "none").split(":")[0].split(".")[0] for e in INDEX}
    for fam in ("gpu", "rocm", "nccl", "cublas", "cudnn", "miopen", "triton", "elastic", "kernel", "build", "oom", "none"):
        assert fam in families, fam


def test_corpus_accuracy(capsys):
    wrong = []
    for e in INDEX:
        got = _classify(e)
        if got != e["expect"]:
            wrong.append(f"{e['file']}: expected {e['expect']}, got {got}")
    accuracy = 1 - len(wrong) / len(INDEX)
    with capsys.disabled():
        print(f"\nfield corpus: {len(INDEX) - len(wrong)}/{len(INDEX)} right ({accuracy:.1%})")
        for w in wrong:
            print("  WRONG", w)
    assert accuracy >= 0.95, "\n".join(wrong)


@pytest.mark.parametrize("entry", [e for e in INDEX if e["expect"] is None], ids=lambda e: e["file"])
def test_negative_controls_classify_as_nothing(entry):
    assert _classify(entry) is None


def test_debug_agent_assert_trap_is_the_trap_not_aborted():
    m = S.classify_text((CORPUS / "debug_agent_assert_trap_docs.log").read_bytes())
    assert m.name == "rocm.assert_trap" and "ASSERT_TRAP" in m.line
    assert "shell.signal" in m.others and "rocm.queue_abort" in m.others


def test_wrappers_and_consequences_never_beat_a_cause():
    for f, cause in (("torchrun_exitcode_minus9.log", "elastic.rank_killed:SIGKILL"),
                     ("vllm_kv_cache_no_memory.log", "oom.vllm_kv"),
                     ("nccl_watchdog_timeout_seqnum.log", "nccl.watchdog_timeout"),
                     ("llamacpp_illegal_address.log", "gpu.illegal_address")):
        m = S.classify_text((CORPUS / f).read_bytes())
        assert m.name == cause, f
        assert m.rank > 30


def test_root_beats_consequence_and_noise_on_real_log_styles():
    """Styles seen in real issue-tracker logs (tests/corpus/logs/real2_*): the first NCCL WARN over the
    result code it causes, RCCL start-up advisories never chosen, a NaN-loss hint below a crash, a
    driver-context page fault below the ring timeout before it, an Xid 45 naming its earlier Xid."""
    for f, cause, line in (("real2_rccl_advisories_then_ipc_failure.log", "nccl.warn", "hipIpcGetMemHandle"),
                           ("real2_nccl_warn_socket_interleaved.log", "nccl.network_error", "socketStartConnect"),
                           ("real2_loss_nan_then_oom.log", "oom.torch_cuda", "OutOfMemoryError"),
                           ("real2_amdgpu_ring_timeout_then_pasid0_fault.log", "kernel.amdgpu_ring_timeout", "timeout"),
                           ("real2_xid45_caused_by_79_only.log", "kernel.xid:79", "caused by previous Xid 79")):
        m = S.classify_text((CORPUS / f).read_bytes())
        assert m is not None and m.name == cause and line in m.line, (f, m and m.name, m and m.line)
    assert S.classify_text((CORPUS / "neg_rccl_advisories_only.log").read_bytes()) is None


def test_ansi_colours_and_crlf_do_not_hide_the_exception():
    m = S.classify_text((CORPUS / "real2_ansi_red_exception_name.log").read_bytes())
    assert m.name == "py.traceback:KeyError" and "\x1b" not in m.line  # shown without the escapes
    raw = (CORPUS / "real2_onnxruntime_cuda_failure_35_crlf.log").read_bytes()
    assert b"\r\n" in raw and S.classify_text(raw).name == "driver.insufficient"
    assert not S.classify_text(raw).line.endswith("\r")


def test_round5_real_styles_decide_on_the_root_line():
    """Round 5 (real issue logs): the replica's own exception under torch's ExceptionWrapper, the
    device-count probe before its consequence, the compiler's error before the build wrappers, the
    first NVLink error before the timeouts it causes, and exception lines under quoting/label/tee prefixes."""
    for f, cause, line in (("real5_dataparallel_replica_wrapper.log", "py.traceback:IndexError", "index out of range"),
                           ("real5_fabricmanager_system_not_initialized.log", "driver.init_failed", "Error 802"),
                           ("real5_flash_attn_build_nvcc_error.log", "build.compile_error", "compute_120"),
                           ("real5_nvlink_uncorrectable.log", "gpu.nvlink_error", "NVLink"),
                           ("real5_markdown_quoted_traceback.log", "py.traceback:KeyError", "attention_mask"),
                           ("real5_srun_label_traceback.log", "py.traceback:AssertionError", "2047"),
                           ("real5_torchrun_tee_prefix.log", "py.traceback:AttributeError", "gradient_checkpointing"),
                           ("real5_sanitizer_ci_indented.log", "sanitizer.memcheck", "Invalid __global__ read")):
        m = S.classify_text((CORPUS / f).read_bytes())
        assert m is not None and m.name == cause and line in m.line, (f, m and m.name, m and m.line)


def test_quote_and_label_prefixes_do_not_make_exceptions_out_of_prose():
    # a prefixed exception-looking line without a traceback or the exception's own output around it
    # is a mention, not the failure
    text = "> KeyError: 'x' is what the docs say you get\n3: ValueError: not from a traceback\n"
    assert S.classify_text(text) is None
    assert S.classify_text("I sometimes see a RuntimeError: CUDA setup failed here\n  and then it works\n") is None
