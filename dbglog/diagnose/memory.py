"""torch.cuda.memory_summary(): per device the allocator's counters (OOMs, malloc retries, allocated,
reserved, non-releasable memory).
"""

from __future__ import annotations

import re



# --- torch.cuda.memory_summary() ------------------------------------------------------------------

_MS_HEAD = re.compile(r"PyTorch (?:CUDA |HIP |XPU |MPS )?memory summary, device ID (\d+)")
_MS_COUNTS = re.compile(r"(?:CUDA |HIP )?OOMs: (\d+)\s*\|\s*(?:cuda|hip)Malloc retries: (\d+)")
# "| Allocated memory      |   1024 KiB |   1024 KiB |   1024 KiB |      0 B   |"
_MS_ROW = re.compile(r"^\|\s*([A-Za-z][A-Za-z() -]*?)\s*\|([^|]*)\|([^|]*)\|([^|]*)\|([^|]*)\|\s*$")
_MS_METRICS = ("Allocated memory", "Active memory", "Requested memory", "GPU reserved memory", "Non-releasable memory")
_MS_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*([KMGTP]?)i?B$")
_MS_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}


def _ms_bytes(s: str) -> int | None:
    """A memory_summary size ("1024 KiB", older "2048 KB": both binary) in bytes."""
    m = _MS_SIZE.match(s.strip())
    return int(float(m.group(1)) * _MS_UNITS[m.group(2)]) if m else None


def _ms_tables(text: str) -> list[dict]:
    """Every summary table: its device, OOM and retry counts, and metric rows."""
    tables: list[dict] = []
    cur: dict | None = None
    metric = None
    for line in text.splitlines():
        if (h := _MS_HEAD.search(line)) is not None:
            cur = {"device": int(h.group(1)), "ooms": None, "retries": None, "metrics": {}}
            tables.append(cur)
            metric = None
            continue
        if cur is not None and (c := _MS_COUNTS.search(line)) is not None:
            cur["ooms"], cur["retries"] = int(c.group(1)), int(c.group(2))
            continue
        r = _MS_ROW.match(line.strip()) if "|" in line else None
        if not r or r.group(1) == "Metric":
            continue
        if cur is None:
            if r.group(1) not in _MS_METRICS:
                continue
            # a table pasted without its header (the rows only): no device, no counters
            cur = {"device": None, "ooms": None, "retries": None, "metrics": {}}
            tables.append(cur)
        vals = {k: r.group(i).strip() for i, k in enumerate(("cur", "peak", "total_allocated", "total_freed"), 2)}
        name = r.group(1)
        if name.startswith("from ") and metric:
            cur["metrics"][metric][name.replace(" ", "_")] = vals
        else:
            metric = name
            cur["metrics"][name] = vals
    return tables


def parse_memory_summary(text: str | bytes) -> dict | None:
    """``torch.cuda.memory_summary()`` tables: per device the OOM and cudaMalloc-retry counts and
    every metric row (current, peak, total allocated, total freed, as printed); the last table of a
    device is its latest state. Findings: OOMs, allocator retries (memory at capacity or
    fragmented) and memory reserved but not allocated."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    if "memory summary, device ID" not in text and "| Allocated memory " not in text:
        return None
    tables = _ms_tables(text)
    tables = [t for t in tables if t["metrics"] or t["ooms"] is not None]
    if not tables:
        return None
    last = tables[-1]
    mets = last["metrics"]

    def val(name: str, key: str = "cur") -> str | None:
        return (mets.get(name) or {}).get(key)

    out: dict = {"kind": "memory-summary", "device": last["device"], "ooms": last["ooms"], "retries": last["retries"],
                 "allocated": val("Allocated memory"), "allocated_peak": val("Allocated memory", "peak"),
                 "reserved": val("GPU reserved memory"), "reserved_peak": val("GPU reserved memory", "peak"),
                 "non_releasable": val("Non-releasable memory"), "metrics": mets, "tables": len(tables),
                 "devices": sorted({t["device"] for t in tables if t["device"] is not None})}
    findings = []
    if last["ooms"]:
        findings.append(f"{last['ooms']} out-of-memory error(s) on device {last['device']} so far")
    if last["retries"]:
        findings.append(f"the allocator freed its cache and retried cudaMalloc {last['retries']} time(s): memory is at "
                        "capacity or fragmented (try PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)")
    alloc, reserved = _ms_bytes(val("Allocated memory") or ""), _ms_bytes(val("GPU reserved memory") or "")
    if alloc is not None and reserved and reserved - alloc >= (256 << 20) and reserved - alloc >= reserved // 4:
        findings.append(f"{val('GPU reserved memory')} reserved but only {val('Allocated memory')} allocated: "
                        f"{(reserved - alloc) / (1 << 30):.2f} GiB held by the caching allocator (fragmentation, or "
                        "freed tensors kept cached)")
    nonrel = _ms_bytes(val("Non-releasable memory") or "")
    if nonrel and reserved and nonrel >= (256 << 20) and nonrel >= reserved // 5:
        findings.append(f"{val('Non-releasable memory')} non-releasable: partly used blocks the allocator cannot "
                        "give back or reuse for big requests (fragmentation)")
    parts = [f"allocated {out['allocated']}" + (f" (peak {out['allocated_peak']})" if out["allocated_peak"] else "")
             if out["allocated"] else None,
             f"reserved {out['reserved']}" + (f" (peak {out['reserved_peak']})" if out["reserved_peak"] else "")
             if out["reserved"] else None,
             f"{last['ooms']} OOM(s), {last['retries']} cudaMalloc retries" if last["ooms"] is not None else None]
    dev = f" (device {last['device']})" if last["device"] is not None else ""
    out["summary"] = f"memory_summary{dev}: " + "; ".join(p for p in parts if p)
    out["findings"] = [out["summary"]] + findings
    return out
