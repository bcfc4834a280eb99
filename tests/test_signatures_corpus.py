"""The field corpus: logs composed around the exact lines public failure reports show (CUDA, HIP/HSA,
ROCm 5-7, NCCL/RCCL, cuBLAS/cuDNN/MIOpen, Triton/Inductor, torchrun, vLLM/SGLang, kernel logs,
cuda-gdb, rocgdb, gdb, rocm-debug-agent), each with the root cause it must be classified as, plus
negative controls that must classify as nothing. The accuracy is printed; under 95 % fails."""
import json
from pathlib import Path

import pytest

from dbglog import signatures as S

CORPUS = Path(__file__).resolve().parent / "corpus" / "logs"
INDEX = json.loads((CORPUS / "index.json").read_text(encoding="utf-8"))


def _classify(entry):
    m = S.classify_text((CORPUS / entry["file"]).read_bytes())
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
