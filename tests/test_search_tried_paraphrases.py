"""`tried` answers an agent's paraphrase of its own attempt with that attempt: the knob named another way (a share of
memory for a fraction, a variable without its library's prefix, "an hour" for 60 minutes), and an attempt whose
hypothesis proposed the change in other words is still the attempt that made it."""

import pytest

from conftest import attempts_workspace, first_tried, module_records, one_attempt
from dbglog.kb import search


@pytest.fixture(scope="module")
def conn(tmp_path_factory):
    recs = module_records(tmp_path_factory, "tried_paraphrases")
    inv = recs.new("Two-node job hangs in the first all_reduce; server dies in graph capture")
    recs.add_attempt(inv.id, title="Pinned the socket interface", did="export NCCL_SOCKET_IFNAME=eth1",
                     result="same hang", outcome="failed")
    recs.add_attempt(inv.id, title="NCCL_P2P_DISABLE=1", did="export NCCL_P2P_DISABLE=1 on both nodes",
                     result="still hangs", outcome="failed")
    recs.add_attempt(inv.id, title="Longer process-group timeout",
                     did="dist.init_process_group('nccl', timeout=timedelta(minutes=60))",
                     result="hangs for the full hour, then aborts", outcome="failed")
    recs.add_attempt(inv.id, title="static memory fraction 0.9 -> 0.75",
                     hypothesis="The log hints at a smaller memory fraction; perhaps the KV pool crowds out the graph buffers.",
                     did="--mem-fraction-static 0.75", result="the same crash", outcome="failed")
    recs.add_attempt(inv.id, title="Skip graph capture", did="--disable-cuda-graph", result="serves", outcome="worked")
    other = recs.new("Loss goes to NaN after the optimizer step")
    recs.add_attempt(other.id, title="Half precision off", did="--bf16 True --fp16 False", result="no NaN",
                     outcome="worked")
    yield recs.store.conn
    recs.close()


@pytest.mark.parametrize("idea, title", [
    ("set P2P_DISABLE=1 for NCCL", "NCCL_P2P_DISABLE=1"),
    ("give the NCCL watchdog an hour before it aborts", "Longer process-group timeout"),
    ("give the KV pool 75% of memory instead of 90%", "static memory fraction 0.9 -> 0.75"),
    ("stop capturing cuda graphs", "Skip graph capture"),
])
def test_a_paraphrase_finds_the_attempt_it_restates(conn, idea, title):
    assert first_tried(conn, idea) == title


def test_another_share_of_memory_is_tried_another_way(conn):
    res = search.tried(conn, "give the KV pool 60% of the GPU memory")
    assert not res.close
    hit = next(h for h in res.result.hits if h.title == "static memory fraction 0.9 -> 0.75")
    assert hit.tier == "other" and "60%" in hit.differs


def test_the_same_knob_for_another_problem_is_not_the_attempt(conn):
    # bf16 worked for the NaN loss; asked for the graph-capture crash, it was not tried there
    assert search.tried(conn, "train in bfloat16").close
    res = search.tried(conn, "train in bfloat16 for the graph capture crash")
    assert not res.close


@pytest.mark.parametrize("idea", ["run vllm eagerly", "run the model eagerly instead of replaying graphs"])
def test_running_eagerly_is_the_attempt_that_turned_graphs_off(tmp_path_factory, idea):
    with one_attempt(tmp_path_factory, "tried_eagerly", "vLLM crashes with an illegal memory access in the fused MoE kernel",
                     title="Eager mode", did="--enforce-eager", result="serves 500 requests", outcome="worked") as conn:
        res = search.tried(conn, idea)
    assert res.close and res.close[0].title == "Eager mode"


@pytest.fixture(scope="module")
def build_conn(tmp_path_factory):
    with attempts_workspace(tmp_path_factory, "tried_words_of_the_deed",
                            "Serving image fails to find the CUDA libraries after the rebuild", [
            dict(title="Prepended the conda lib dir to the loader path",
                 did="export LD_LIBRARY_PATH=$CONDA_PREFIX/lib:$LD_LIBRARY_PATH", result="libcublas loads",
                 outcome="worked"),
            dict(title="Deleted the kernel cache", did="rm -rf ~/.triton/cache ~/.triton/autotune",
                 result="same error after the recompile", outcome="failed"),
            dict(title="Other attention backend", did="VLLM_ATTENTION_BACKEND=FLASHINFER vllm serve ./m",
                 result="serves", outcome="worked"),
            dict(title="NCCL 2.19.3 -> 2.21.5", did="pip install nvidia-nccl-cu12==2.21.5", result="no change",
                 outcome="failed"),
            dict(title="Rebuilt for gfx1031", did="cmake -B build -DAMDGPU_TARGETS=gfx1031 && cmake --build build",
                 result="loads", outcome="worked")]) as conn:
        yield conn


@pytest.mark.parametrize("idea, title", [
    # (why the idea wants it, said in words no record has, is not what was done)
    ("rebuild for gfx1031 so the rocblas kernels for the card get compiled", "Rebuilt for gfx1031"),
    # (an order's own verb that no record uses: the record says the deed its way)
    ("wipe ~/.triton/cache and the autotune folder", "Deleted the kernel cache"),
    # (a compound written with its hyphen, a release series with its wildcard)
    ("serve with the flash-infer attention backend", "Other attention backend"),
    ("upgrade NCCL to 2.21.x", "NCCL 2.19.3 -> 2.21.5"),
])
def test_a_paraphrase_in_the_ideas_own_words_finds_the_deed(build_conn, idea, title):
    res = search.tried(build_conn, idea)
    assert res.close and res.close[0].title == title, [(h.title, h.verdict) for h in res.result.hits]


@pytest.mark.parametrize("idea", ["upgrade NCCL to 2.22.x", "serve with the flash-attn backend pinned to 2.21.x",
                                  "wipe the pip cache"])
def test_another_series_or_another_thing_in_the_same_words_is_not_tried(build_conn, idea):
    assert not search.tried(build_conn, idea).close


@pytest.fixture(scope="module")
def shm_conn(tmp_path_factory):
    with attempts_workspace(tmp_path_factory, "tried_spelled",
                            "DDP in a container: NCCL 'unhandled system error' at the first all_reduce", [
            dict(title="NCCL_SHM_DISABLE=1", did="export NCCL_SHM_DISABLE=1", result="trains, slower", outcome="partial"),
            dict(title="Bigger shm for the container", did="docker run --gpus all --shm-size=8g ...",
                 result="trains at full speed", outcome="worked"),
            dict(title="Allocator split size", did="export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128",
                 result="no change", outcome="failed")]) as conn:
        yield conn


@pytest.mark.parametrize("idea, title", [
    ("increase docker shm size to 8 GB", "Bigger shm for the container"),
    ("docker run --shm-size 8192m", "Bigger shm for the container"),
    ("NCCL SHM disable = 1", "NCCL_SHM_DISABLE=1"),
    ("set max_split_size_mb to 128", "Allocator split size"),
])
def test_a_setting_said_in_words_units_or_inside_a_list_finds_the_attempt(shm_conn, idea, title):
    assert first_tried(shm_conn, idea) == title


@pytest.mark.parametrize("idea", ["increase docker shm size to 2 GB", "set max_split_size_mb to 512",
                                  "NCCL SHM disable = 0"])
def test_the_same_setting_to_another_value_is_not_the_attempt(shm_conn, idea):
    assert not search.tried(shm_conn, idea).close
