"""Golden files: hand-written debug docs in different styles and their expected parsed structure.

Regenerate the expected JSON (after checking the change by eye) with UPDATE_GOLDEN=1.
"""

import json
import os
from pathlib import Path

import pytest

from dbglog.kb.importer import check_roundtrip, decode, parse_document

GOLDEN = Path(__file__).parent / "golden"
DOCS = sorted(GOLDEN.glob("*.md"))


def structure(path: Path):
    text = decode(path.read_bytes(), path.name)
    parsed, skipped = parse_document(text, path.name)
    out = []
    for p in parsed:
        check_roundtrip(p, path.name)
        d = p.inv.to_dict()
        for k in ("id", "created", "updated"):
            d.pop(k)
        out.append({"line": p.line, "key": p.key, "investigation": d,
                    "items": [list(i) for i in p.items]})
    return {"investigations": out, "skipped": [vars(s) for s in skipped]}


def test_at_least_six_golden_docs():
    assert len(DOCS) >= 6


@pytest.mark.parametrize("doc", DOCS, ids=[d.stem for d in DOCS])
def test_golden(doc):
    got = structure(doc)
    expected_path = doc.with_suffix(".expected.json")
    if os.environ.get("UPDATE_GOLDEN") or not expected_path.exists():
        expected_path.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n")
    assert got == json.loads(expected_path.read_text())


def _invs(name):
    return [i["investigation"] for i in structure(GOLDEN / name)["investigations"]]


def test_key_facts_by_eye():
    multi = _invs("01_debug_md_multi.md")
    assert [i["title"] for i in multi] == ["NCU profiling hangs on TMA + mbarrier kernels",
                                          "Illegal memory access in fused MoE dispatch after CUDA 12.6 upgrade"]
    assert [a["outcome"] for a in multi[0]["attempts"]] == ["failed", "worked"]
    assert multi[0]["labels"] == {"working": "Repro (works)", "broken": "Actual (hangs)"}
    assert [d["status"] for d in multi[0]["differences"]] == ["ruled-out", "untested", "culprit"]
    # The author's words stay (lossless); the link to the attempt is read out of them.
    step = {k: v for k, v in multi[0]["next_steps"][2].items() if k != "source_lines"}
    assert step == {"position": 3, "text": "Application replay",
                                              "detail": "done in Attempt 2", "status": "done", "attempt": 2}
    assert multi[1]["status"] == "resolved" and multi[1]["root_cause"].startswith("`expert_offsets`")
    fixed = _invs("02_ncu_notes_fixed_width.md")[0]
    assert fixed["labels"] == {"working": "Working (eager)", "broken": "Broken (graphs)"}
    assert [a["outcome"] for a in fixed["attempts"]] == ["worked", "failed", "inconclusive"]
    assert "Second paragraph" in fixed["attempts"][1]["conclusion"]
    assert fixed["next_steps"][0]["detail"] == "(fits in memory, isolates NCCL)"
    variants = _invs("03_illegal_address_variants.md")[0]
    assert variants["tags"] == ["rocm", "flash-attn", "illegal-address"]
    assert "```\nMemory access fault" in variants["attempts"][0]["result"]
    assert variants["next_steps"][2]["status"] == "dropped"
    level2 = _invs("05_several_level2.md")
    assert [i["status"] for i in level2] == ["resolved", "wontfix"]
    assert level2[0]["attempts"][1]["conclusion"].startswith("Fork after CUPTI")
    templ = structure(GOLDEN / "06_template_and_comments.md")
    assert [i["investigation"]["title"] for i in templ["investigations"]] == [
        "Triton autotune hangs on first call with num_stages=5"]
    assert templ["skipped"][0]["reason"].startswith("template")
