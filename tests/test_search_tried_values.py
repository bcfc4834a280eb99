"""`tried` reads a value by what it is, not by how it was spelled: 1e-4 is 0.0001, clipping at 1 is clipping at
1.0, and "3x smaller" says how much a setting moved, not what it names. Another value is still another
experiment."""

import pytest

from conftest import attempts_workspace, first_tried, one_attempt
from dbglog.kb import search
from dbglog.kb.search import number_forms


@pytest.fixture(scope="module")
def conn(tmp_path_factory):
    with attempts_workspace(tmp_path_factory, "tried_values", "fp16 fine-tune goes NaN after a few thousand steps", [
            dict(title="lr 3e-4 -> 1e-4", did="--lr 1e-4 (peak, cosine schedule unchanged)", result="NaN arrives later",
                 outcome="failed"),
            dict(title="Clip grads at 1.0 after unscale",
                 did="scaler.unscale_(opt); torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)",
                 result="still NaN", outcome="failed"),
            dict(title="AdamW eps 1e-8 -> 1e-6", did="optimizer config: eps: 1.0e-6", result="no change",
                 outcome="failed")]) as conn:
        yield conn


@pytest.mark.parametrize("idea, title", [
    ("try a 3x smaller peak LR (0.0001)", "lr 3e-4 -> 1e-4"),
    ("clip gradient norm at 1 after unscaling the grads", "Clip grads at 1.0 after unscale"),
    ("raise AdamW epsilon to 1e-6", "AdamW eps 1e-8 -> 1e-6"),
])
def test_a_value_written_another_way_finds_the_attempt(conn, idea, title):
    assert first_tried(conn, idea) == title


@pytest.mark.parametrize("idea", ["lower the peak learning rate to 0.00005", "lower the learning rate to 5e-5"])
def test_the_same_way_to_another_value_is_tried_another_way(conn, idea):
    res = search.tried(conn, idea)
    assert not res.close
    hit = next(h for h in res.result.hits if h.title == "lr 3e-4 -> 1e-4")
    assert hit.tier == "other"


@pytest.mark.parametrize("token, forms", [
    ("1e-4", ["1.0e-4", "0.0001"]),
    ("2.5e-5", ["0.000025"]),
    ("0.00025", ["2.5e-4"]),
    ("1", ["1.0"]),
    ("1.0", ["1"]),
    ("2.1", []),  # a version: 2.1 is not 2.10
    ("1000", []),
    ("8k", ["8192", "8000"]),
    ("0.95", [".95"]),
    (".95", ["0.95"]),
])
def test_a_number_is_also_written_as_its_other_spellings(token, forms):
    assert number_forms(token) == forms


# One workspace of one attempt each, asked in other words: (the problem, the attempt, the idea asked).
ONE_ATTEMPT_RESTATED = {
    "a size in thousands finds the value written out": (
        "fused MoE illegal memory access under load",
        dict(title="Smaller MoE chunk via env var", did="export VLLM_FUSED_MOE_CHUNK_SIZE=8192", result="same crash",
             outcome="failed"),
        "lower the fused moe chunk size to 8k tokens"),
    "a release series finds its full version": (
        "bitsandbytes cannot find its CUDA library",
        dict(title="bnb 0.42.0 -> 0.45.0", did="pip install -U bitsandbytes==0.45.0", result="loads", outcome="worked"),
        "upgrade bitsandbytes to 0.45"),
    "a duration in words finds the minutes a record gives": (
        "interleaved pipeline hangs at the first iteration",
        dict(title="Longer distributed timeout", did="--distributed-timeout-minutes 30 (was 10)",
             result="hangs 30 minutes, then the watchdog fires", outcome="failed"),
        "bump the distributed timeout to half an hour"),
}


@pytest.mark.parametrize("case", ONE_ATTEMPT_RESTATED, ids=lambda c: c.replace(" ", "_"))
def test_a_value_written_another_way_finds_the_only_attempt(tmp_path_factory, case):
    problem, attempt, idea = ONE_ATTEMPT_RESTATED[case]
    with one_attempt(tmp_path_factory, "tried_" + case.replace(" ", "_")[:40], problem, **attempt) as conn:
        res = search.tried(conn, idea)
    assert res.close and res.close[0].title == attempt["title"]


def test_a_flag_spelled_with_dashes_finds_the_one_written_with_underscores_and_instead_of_is_the_old_value(
        tmp_path_factory):
    with one_attempt(tmp_path_factory, "tried_flag_spelling", "trtllm-build runs out of memory on an L4",
                     title="--max_batch_size 64 -> 8",
                     did="trtllm-build --checkpoint_dir ckpt --gemm_plugin float16 --max_batch_size 8",
                     result="same OOM", outcome="failed") as conn:
        res = search.tried(conn, "build the engine with max-batch-size=8 instead of 64")
        assert res.close and res.close[0].title == "--max_batch_size 64 -> 8"
        assert not search.tried(conn, "build the engine with max-batch-size=16 instead of 64").close


def test_a_number_with_its_other_spellings_still_joins_its_unit(tmp_path_factory):
    with one_attempt(tmp_path_factory, "tried_number_unit", "BERT fine-tune runs out of memory in epoch 3",
                     title="Cache emptied every 100 batches", did="torch.cuda.empty_cache() every 100 batches",
                     result="fits in 4GB", outcome="worked") as conn:
        res = search.tried(conn, "empty the cuda cache every 100 batches on the 4 GB GPU")
    assert "4 GB" in [t.raw for t in res.result.query.terms]


@pytest.mark.parametrize("idea, term", [("bump the timeout to half an hour", "0.5h"), ("wait two minutes", "2min"),
                                        ("run it a second time", "second")])
def test_a_duration_in_words_is_read_as_one_and_an_ordinal_is_not(idea, term):
    assert term in [t.raw for t in search.parse_query(idea).terms]
