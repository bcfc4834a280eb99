"""Shapes of real debug docs, one each: what the reader must make of them (written for these tests)."""

from dbglog.kb import importer


def _attempts(doc):
    (p,), _ = importer.parse_document(doc, "doc.md")
    return [(a.title, a.outcome) for a in p.inv.attempts]


def test_a_suggestion_and_the_reply_in_an_issue_thread_are_one_attempt():
    doc = """# OOM when loading a 70B model on two GPUs

Loading fails with `cudaMalloc failed: out of memory` although 40 GB are free.

---

👤 **maintainer** commented on **2025-06-06**:

Try `-DGGML_SCHED_MAX_COPIES=1` when you build.

---

👤 **reporter** commented on **2025-06-06**:

Perfect, it works fine now and I don't get any more of those OOMs.
"""
    (title, outcome), = _attempts(doc)
    assert "GGML_SCHED_MAX_COPIES=1" in title and outcome == "worked"


def test_checked_found_items_are_attempts_titled_by_what_was_checked():
    doc = """# Checkpoint save hangs on rank 0

## Evidence

- timestamp: 2025-07-08T14:02:00Z
  checked: py-spy dump of rank 0 during the hang
  found: rank 0 waits in our own barrier
- timestamp: 2025-07-09T11:20:00Z
  checked: moved the early return after the barrier
  found: 40 checkpoints written, no hang
"""
    got = _attempts(doc)
    assert [t for t, _ in got] == ["py-spy dump of rank 0 during the hang", "moved the early return after the barrier"]
    assert got[1][1] == "worked"


def test_options_nobody_ran_are_next_steps_not_attempts():
    doc = """# MIOpen convolution error on gfx1030

## Attempted solutions

### 1. MIOpen find mode

`MIOPEN_FIND_MODE=1` - still fails with the same error.

## Possible solutions

### Option A: upgrade ROCm

Would need a new base image; not feasible before the release.

### Option B: precompile MIOpen kernels

This should avoid the runtime compile if the kernel database matches.
"""
    got = dict(_attempts(doc))
    assert got == {"MIOpen find mode": "failed"}
    (p,), _ = importer.parse_document(doc, "doc.md")
    assert [(s.text, s.status) for s in p.inv.next_steps] == [("upgrade ROCm", "todo"),
                                                              ("precompile MIOpen kernels", "todo")]


def test_two_bugs_whose_attempt_numbering_starts_over_are_two_investigations():
    doc = """# Team debug notes

## Hang in all-reduce on node 7

### Attempt 1: NCCL_P2P_DISABLE=1
Still hangs.

### Attempt 2: swap the IB cable
Works, 9 h without a hang.

## IMA in the fused MoE kernel

### Attempt 1: CUDA_LAUNCH_BLOCKING=1
Points at moe_align_block_size.

### Attempt 2: int64 offsets
Fixed.
"""
    parsed, _ = importer.parse_document(doc, "doc.md")
    assert [p.inv.title for p in parsed] == ["Hang in all-reduce on node 7", "IMA in the fused MoE kernel"]
    assert [[a.outcome for a in p.inv.attempts] for p in parsed] == [["failed", "worked"], ["inconclusive", "worked"]]


def test_a_fix_applied_but_not_yet_exercised_is_an_attempt_with_an_unknown_outcome():
    doc = """# Xid 79 on the training nodes

## Changes made

- Added Xid 79/48/63 to the kernel-log alert rules (applied, not exercised yet).
- Tried the 550.127 driver on two nodes: still Xid 79 within a day.
"""
    got = dict(_attempts(doc))
    assert list(got.values()) == ["inconclusive", "failed"]


def test_a_source_line_range_and_the_answerer_come_with_every_read_attempt():
    doc = """# OOM when loading a 70B model on two GPUs

Loading fails with `cudaMalloc failed: out of memory` although 40 GB are free.

**maintainer** commented on 2025-06-06:

Try `-DGGML_SCHED_MAX_COPIES=1` when you build.

**reporter** commented on 2025-06-06:

Yes, it works.
"""
    (p,), _ = importer.parse_document(doc, "doc.md")
    (a,) = p.inv.attempts
    assert a.outcome == "worked" and a.who == "reporter" and "GGML_SCHED_MAX_COPIES" in a.did
    assert a.source_lines == [7, 11]
