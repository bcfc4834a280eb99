"""The seed protocol doc (the DEBUG.md shape dbglog is modelled on, verbatim in tests/golden/) imports exactly:
one open investigation, its five attempts, the key-differences table whole, the five next steps, and nothing
from the protocol's rules or its template."""

from pathlib import Path

import pytest

from dbglog.kb.importer import check_roundtrip, decode, parse_document

DOC = Path(__file__).parent / "golden" / "07_seed_debug_protocol.md"


@pytest.fixture(scope="module")
def read():
    text = decode(DOC.read_bytes(), DOC.name)
    parsed, skipped = parse_document(text, DOC.name)
    for p in parsed:
        check_roundtrip(p, DOC.name)
    return parsed, skipped


def test_one_open_investigation_named_after_the_bug(read):
    parsed, _ = read
    assert len(parsed) == 1
    inv = parsed[0].inv
    assert inv.title == "NCU Profiling Hangs on TMA + mbarrier Kernels (v22 pos_emb_interp)"
    assert inv.status == "open"
    assert inv.symptom.startswith("`ncu --set full` hangs")


def test_the_five_attempts_in_order_with_their_outcomes(read):
    inv = read[0][0].inv
    got = [(a.number, a.title, a.outcome) for a in inv.attempts]
    assert got == [
        (1, "Default kernel replay (`ncu --set full`)", "failed"),
        (2, "`--replay-mode range`", "failed"),  # "Not a viable workaround": no partial success
        (3, "Standalone TMA repro (`ncu_tma_repro/repro.cu`)", "failed"),  # the repro did not reproduce
        (4, "Collect fewer metrics (`--section SpeedOfLight` only)", "partial"),
        (5, "Remove `__launch_bounds__` from v22", "failed"),
    ]
    assert all(a.hypothesis and a.did and a.result and a.conclusion for a in inv.attempts)
    assert all(len(a.source_lines) == 2 and a.source_lines[0] < a.source_lines[1] for a in inv.attempts)


def test_the_key_differences_table_is_whole(read):
    inv = read[0][0].inv
    assert inv.labels == ("Repro (works)", "Actual v22 (hangs)")
    assert [d.factor for d in inv.differences] == [
        "Launch context", "Grid shape", "Register pressure", "Coordinate math", "Memory inputs",
        "__launch_bounds__", "SMEM layout", "TMA pattern"]
    memory = inv.differences[4]
    assert memory.working == "Single float* weight"
    assert memory.broken == "int64 grid_thws, int32 patch_offsets (via at::from_blob → .to(device))"


def test_the_five_next_steps(read):
    inv = read[0][0].inv
    assert [s.text for s in inv.next_steps] == [
        "`--replay-mode application`", "Launch through PyTorch in repro",
        "Profile with `--launch-count 1 --launch-skip 0` on single-image workload",
        "Incrementally add complexity to repro", "File NVIDIA bug report"]
    assert all(s.status == "todo" for s in inv.next_steps)


def test_nothing_from_the_protocol_rules_or_template_becomes_structure(read):
    parsed, skipped = read
    inv = parsed[0].inv
    words = " ".join(a.title + a.did for a in inv.attempts) + " ".join(s.text + s.detail for s in inv.next_steps)
    assert "<short description>" not in words and "Document as you go" not in words
    assert "After each attempt" not in words
    assert [s.title for s in skipped] == ["Template: New Debug Log Entry"]
    kept = "\n".join(s.body for s in inv.sections)
    assert "After each attempt, update the" in kept  # the rules stay, as free text
    assert "Copy this template when starting a new investigation" in kept
