"""Words that look like something they are not are not read as it: a tool's exit status on a CUDA path is
no CUDA error (while a CUDA error code on a line about CUDA is still named), a checklist mark does not
override what the item says came of it, and a knob a record set the other way is not the idea asked
about."""

import json

import pytest
from conftest import run_cli_inproc

from dbglog.run import signatures

C = signatures.classify_text


@pytest.mark.parametrize("text", [
    "error: command '/usr/local/cuda/bin/nvcc' failed with error code 2",  # a compiler's exit status
    "hipcc exited with error code 3",
    "C:\\CUDA\\v11.8\\bin\\nvcc.exe failed with error code 2",
])
def test_an_exit_status_of_a_tool_on_a_cuda_path_is_no_cuda_error(text):
    # 'error code 2' on a line whose only CUDA is a path or a tool's name was CUDA's error 2 (out of memory)
    m = C(text + "\n")
    assert m is None or m.name not in ("oom.runtime", "driver.init_failed"), m.name


@pytest.mark.parametrize("text,name", [
    ("cudaLaunchKernel failed with error code 719", "gpu.launch_failure"),
    ("numba.cuda: error code = 700", "gpu.illegal_address"),
    ("HIP runtime: error code 700", "gpu.illegal_address"),
])
def test_a_cuda_error_code_on_a_line_about_cuda_is_still_named(text, name):
    m = C(text + "\n")
    assert m is not None and m.name == name


def test_a_checklist_mark_does_not_override_what_the_item_says_came_of_it():
    # ✅/❌ used as done / not done: the words after the arrow say how it went (or that it was not tried)
    from dbglog.kb.importer import parse_document

    doc = ("# NCCL hang on 8 GPUs\n\nThe all_reduce hangs at step 3 on 8 GPUs.\n\n## Investigation\n\n"
           "1. ✅ Reinstalled the driver → no change, still hangs\n"
           "2. ❌ Upgrade NCCL to 2.19 → not tried yet\n"
           "3. ✅ Pinned NCCL_ALGO=Tree → hang is gone\n")
    (p,), _ = parse_document(doc)
    got = {a.title: a.outcome for a in p.inv.attempts}
    assert got.get("Pinned NCCL_ALGO=Tree") == "worked"
    assert got.get("Reinstalled the driver") != "worked", got  # it says: no change, still hangs
    assert "Upgrade NCCL to 2.19" not in got, got  # not tried: a next step at most


@pytest.fixture(scope="module")
def knob_kb(tmp_path_factory):

    root = tmp_path_factory.mktemp("knobkb")
    (root / ".git").mkdir()
    run_cli_inproc(root, "new", "NCCL hang", "--no-env", check=0)
    run_cli_inproc(root, "attempt", "add", "keep p2p on", "--did", "NCCL_P2P_DISABLE=0 torchrun train.py",
                   "--result", "still hangs", "--outcome", "failed", check=0)
    run_cli_inproc(root, "attempt", "add", "tree", "--did", "NCCL_ALGO=Tree torchrun train.py",
                   "--result", "still hangs", "--outcome", "failed", check=0)
    return root


def _close_attempts(kb, idea: str) -> list:

    p = run_cli_inproc(kb, "tried", idea, "--json")
    return [h.get("attempt") for h in json.loads(p.stdout)["close"]]


@pytest.mark.parametrize("idea,wrong", [
    ("disable p2p", 1),  # the record set NCCL_P2P_DISABLE=0: P2P stayed on
    ("run without NCCL_ALGO", 2),  # the record ran with NCCL_ALGO=Tree
])
def test_a_knob_the_record_set_the_other_way_is_not_the_idea(knob_kb, idea, wrong):
    assert wrong not in _close_attempts(knob_kb, idea)
