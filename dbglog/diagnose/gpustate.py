"""GPU state at failure time: use and VRAM per GPU (``nvidia-smi --query-gpu`` CSV; rocm-smi's
``GPU[N] : key: value`` lines are read by ``evidence.parse_rocm_smi``), and the kernel log's GPU
lines (amdgpu, xnack, NVRM Xid) since the run started."""

from __future__ import annotations

import datetime as _dt
import re

# `nvidia-smi --query-gpu=index,name,utilization.gpu,memory.used,memory.total --format=csv`
QUERY_FIELDS = "index,name,utilization.gpu,memory.used,memory.total"
_HEADER = re.compile(r"^index, name, utilization\.gpu \[%\], memory\.used \[MiB\], memory\.total \[MiB\]\s*$", re.M)
_ROW = re.compile(r"^(\d+), ([^,]+), (\d+|\[N/A\]) ?%?, (\d+|\[N/A\]) ?(?:MiB)?, (\d+|\[N/A\]) ?(?:MiB)?\s*$")
# A kernel log line about the GPUs (dmesg / journalctl -k)
GPU_LINE = re.compile(r"amdgpu|xnack|XNACK|NVRM: Xid|NVRM:.*(?:fallen off|GPU has fallen)|kfd|KFD")
# dmesg --time-format iso: "2026-12-02T01:17:38,123456+00:00 ..."; journalctl -o short-iso: "2026-12-02T01:17:38+0000 ..."
_ISO = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:[,.]\d+)?([+-]\d\d:?\d\d)?\s")


def _num(v: str) -> int | None:
    return None if v.startswith("[") else int(v)


def parse_gpu_query(text: str | bytes) -> dict | None:
    """Per GPU its use (%) and VRAM used / total (MiB); a finding for a GPU busy at 100 % (a kernel
    spinning) or with its memory nearly full."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    if not _HEADER.search(text):
        return None
    gpus = []
    for line in text.splitlines():
        m = _ROW.match(line)
        if m:
            gpus.append({"gpu": int(m.group(1)), "name": m.group(2).strip(), "use_pct": _num(m.group(3)),
                         "vram_used_mib": _num(m.group(4)), "vram_total_mib": _num(m.group(5))})
    if not gpus:
        return None
    findings = []
    for g in gpus:
        if g["use_pct"] is not None and g["use_pct"] >= 95:
            findings.append(f"GPU {g['gpu']} at {g['use_pct']}% use: a kernel still running (a spin or a hang on "
                            "the device, not on the host)")
        if g["vram_used_mib"] and g["vram_total_mib"] and g["vram_used_mib"] >= 0.95 * g["vram_total_mib"]:
            findings.append(f"GPU {g['gpu']} VRAM nearly full ({g['vram_used_mib']}/{g['vram_total_mib']} MiB)")
    s = "nvidia-smi: " + ", ".join(f"GPU {g['gpu']} {g['use_pct']}% use, {g['vram_used_mib']}/{g['vram_total_mib']} MiB"
                                   for g in gpus[:8])
    return {"kind": "gpu-state", "tool": "nvidia-smi", "gpus": gpus, "summary": s, "findings": [s] + findings}


def _stamp(line: str) -> float | None:
    m = _ISO.match(line)
    if not m:
        return None
    tz = (m.group(2) or "").replace(":", "")
    try:
        t = _dt.datetime.strptime(m.group(1) + (tz or "+0000"), "%Y-%m-%dT%H:%M:%S%z")
    except ValueError:
        return None
    return t.timestamp()


def kernel_lines_since(text: str, since: float | None, limit: int = 200) -> tuple[list[str], int]:
    """The kernel log's GPU lines (amdgpu, xnack, NVRM Xid, KFD) stamped at or after ``since`` (epoch
    seconds; lines without an ISO stamp are kept), the last ``limit`` of them; and how many lines
    had a stamp before ``since`` (left out)."""
    kept: list[str] = []
    older = 0
    for line in text.splitlines():
        if not GPU_LINE.search(line):
            continue
        t = _stamp(line)
        if since is not None and t is not None and t < since - 1:
            older += 1
            continue
        kept.append(line)
    return kept[-limit:], older
