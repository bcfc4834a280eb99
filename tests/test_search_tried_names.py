"""`tried` knows a knob by its name however the idea spells it: in words with a shortened word written whole and a
middle word left out, with hyphens for the record's underscores, in an API's spelling of the server's config key, and
with a value in other separators or as a percentage. A nearby knob or another value is still not the same."""

import pytest

from conftest import attempts_workspace, first_tried


@pytest.fixture(scope="module")
def conn(tmp_path_factory):
    with attempts_workspace(tmp_path_factory, "tried_names", "inference server OOMs after a few minutes of load", [
            dict(title="kv_cache_free_gpu_mem_fraction 0.9 -> 0.75",
                 did='model config: kv_cache_free_gpu_mem_fraction: "0.75"', result="OOM later, not gone",
                 outcome="partial"),
            dict(title="Scheduler policy to guaranteed_no_evict", did="batch_scheduler_policy: guaranteed_no_evict",
                 result="no OOM in a 1h soak", outcome="worked")]) as conn:
        yield conn


@pytest.mark.parametrize("idea", [
    "lower the KV cache free memory fraction to 0.75",  # ("memory" for mem, "gpu" left out)
    "shrink kv-cache-free-gpu-mem-fraction to 75%",  # (hyphens for underscores; a share as a percentage)
    "try KvCacheConfig free_gpu_memory_fraction=.75",  # (the Python API's name of the server's key)
])
def test_a_knob_named_another_way_finds_the_attempt(conn, idea):
    assert first_tried(conn, idea) == "kv_cache_free_gpu_mem_fraction 0.9 -> 0.75"


def test_a_value_in_other_separators_is_the_same_value(conn):
    assert first_tried(conn, "set batch_scheduler_policy to guaranteed-no-evict") == \
        "Scheduler policy to guaranteed_no_evict"


@pytest.mark.parametrize("idea", ["lower the KV cache free memory fraction to 0.6",
                                  "set free_gpu_memory_fraction=0.5", "raise the KV cache block size to 64"])
def test_another_value_or_another_knob_is_not_the_same(conn, idea):
    assert first_tried(conn, idea) is None
