"""The NCCL flight recorder's fr_trace report: the verdict (ranks not joining a collective, errors,
culprit ranks) and its evidence record.
"""

from __future__ import annotations

import re



# --- NCCL flight recorder: the fr_trace report ------------------------------------------------

_FR_NOT_ALL = re.compile(r"Not all ranks joining collective(?: for group (\S+) collective (\S+)"
                         r"|,? (?:sequence number:? )?(\d+)(?: at entry (\d+))?)?")
_FR_COLLECTIVE = re.compile(r"^\s*collective: (\S+)", re.MULTILINE)
_FR_MISSING = re.compile(r"(?:missing ranks:|Missing ranks are) \{([\d, ]*)\}")
_FR_GROUP = re.compile(r"^\s*group info: (.+)$", re.MULTILINE)


_FR_ERRORS = re.compile(r"Collective (\d+) at entry (\d+) errors")
_FR_LINE = re.compile(r"^\s*(input sizes|output sizes|collective state|world size|error msg): (.*?)\s*$", re.MULTILINE)
_FR_CULPRIT = re.compile(r"Culprit rank (\d+); Error type: (\w+),? ?(.*?)(?=,? Culprit rank \d+;|$)")


def fr_trace_verdict(text: str | bytes) -> dict | None:
    """The first mismatch in a ``torch.distributed.flight_recorder.fr_trace`` report:
    {"collective", "missing_ranks", "group", "seq"}. Two report styles exist: the logger one (``Not
    all ranks joining collective 5 at entry 4`` then ``collective: nccl:all_reduce`` and ``missing
    ranks: {1}`` lines) and the older print one (``... for group G collective NAME Missing ranks are
    {1}`` on one line). A ``Collective 39 at entry 38 errors`` block (every rank joined, but some
    with other sizes or another op) adds "culprits" ([{rank, error_type, detail}]), "error_type",
    "input_sizes" and "state"."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    text = text or ""
    m = _FR_NOT_ALL.search(text)
    e = _FR_ERRORS.search(text) if " errors" in text else None
    if e and (not m or e.start() < m.start()):
        block = text[e.start():e.start() + 4000]
        nxt = _FR_ERRORS.search(block, 1)
        block = block[:nxt.start()] if nxt else block
        c = _FR_COLLECTIVE.search(block)
        g = _FR_GROUP.search(block)
        fields = {k.replace(" ", "_"): v for k, v in _FR_LINE.findall(block)}
        culprits = [{"rank": int(r), "error_type": t, "detail": d.strip(" ,")[:300]}
                    for r, t, d in _FR_CULPRIT.findall(fields.get("error_msg", ""))]
        miss = _FR_MISSING.search(block)
        return {"collective": c.group(1) if c else None,
                "missing_ranks": sorted(int(x) for x in re.findall(r"\d+", miss.group(1))) if miss else [],
                "group": g.group(1).strip() if g else None, "seq": e.group(1), "entry": e.group(2),
                "culprits": culprits, "error_type": culprits[0]["error_type"] if culprits else None,
                "input_sizes": fields.get("input_sizes"), "state": fields.get("collective_state"),
                "error": fields.get("error_msg", "")[:500] or None}
    if not m:
        return None
    block = text[m.start():m.start() + 2000]
    c = _FR_COLLECTIVE.search(block)
    coll = m.group(2) or (c.group(1) if c else None)
    miss = _FR_MISSING.search(block)
    g = _FR_GROUP.search(block)
    group = m.group(1) or (g.group(1).strip() if g else None)
    ranks = sorted(int(x) for x in re.findall(r"\d+", miss.group(1))) if miss else []
    return {"collective": coll, "missing_ranks": ranks, "group": group, "seq": m.group(3)}


def fr_trace_evidence(verdict: dict) -> dict:
    """A flight-recorder verdict as an evidence record."""
    group = f" (group {verdict['group']})" if verdict.get("group") else ""
    coll = verdict.get("collective") or "?"
    findings: list[str] = []
    if verdict.get("culprits"):
        by_type: dict[str, list[str]] = {}
        for c in verdict["culprits"]:
            by_type.setdefault(c["error_type"], []).append(str(c["rank"]))
        first = verdict["culprits"][0]
        summary = (f"NCCL flight recorder: collective {coll} #{verdict.get('seq')} errors{group}: "
                   + "; ".join(f"rank(s) {', '.join(rs)} {t}" for t, rs in by_type.items())
                   + (f" — {first['detail']}" if first.get("detail") else ""))
        if any(t.startswith("SIZE") for t in by_type):
            findings.append("every rank joined the collective, but some with other tensor sizes; guess: the culprit "
                            "ranks built different inputs (or issued another collective at this point)")
    else:
        ranks = ", ".join(str(r) for r in verdict["missing_ranks"]) or "unknown"
        summary = f"NCCL flight recorder: collective {coll} was not joined by rank(s) {ranks}{group}"
    return {"kind": "nccl-flight-recorder", "summary": summary, "findings": [summary] + findings if findings else [],
            "facts": dict(verdict)}


def parse_fr_trace(text: str | bytes) -> dict | None:
    v = fr_trace_verdict(text)
    return fr_trace_evidence(v) if v else None
