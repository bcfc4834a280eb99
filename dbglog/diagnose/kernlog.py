"""Kernel log (dmesg / journalctl -k) lines about the GPUs: NVIDIA Xids, amdgpu page faults, ring
timeouts, MES hangs, GPU resets.
"""

from __future__ import annotations

import re



_KL_XID = re.compile(r"NVRM: Xid \((?:PCI:)?([0-9a-fA-F:.]+)\): (\d+), (?:pid=(\S+?), (?:name=(\S+?), )?)?(.*?)\s*$",
                     re.M)
_KL_AMD_FAULT = re.compile(r"amdgpu (\S+): amdgpu: \[(\w+)\] (?:(?:no-)?retry )?page fault \(src_id:\d+ ring:(\d+) "
                           r"vmid:(\d+) pasid:(\d+)(?:, for process (\S+) pid (\d+))?")
# the process on the next lines (newer kernels): "Process python3 pid 2931 thread ..." or
# "Process information: process python3 pid 2931 thread ..."
_KL_AMD_PROC = re.compile(r"(?:amdgpu: +|\*ERROR\* )Process (?:information: process )?(\S+) pid (\d+) thread")
_KL_AMD_RING = re.compile(r"ring (\S+) timeout, signaled seq=(\d+), emitted seq=(\d+)")
_KL_AMD_ADDR = re.compile(r"in page starting at address (0x[0-9a-fA-F]+)")
# the MES (the firmware that schedules compute queues on RDNA3+/MI300) stops answering the driver
_KL_AMD_MES = re.compile(r"amdgpu (\S+): amdgpu: MES failed to respond to msg=(\w+)")
_KL_AMD_RESET = re.compile(r"amdgpu (\S+): amdgpu: GPU reset begin")


def _amd_line(lines: list[str], i: int) -> dict | None:
    """A ring timeout or a page fault, with the process and address the next lines name."""
    line = lines[i]
    r = _KL_AMD_RING.search(line)
    if r:
        # a ring that stopped retiring work: the GPU hang the driver then resets
        pci = re.search(r"amdgpu ([0-9a-fA-F]{4}:[0-9a-fA-F:.]+):", line)
        ev = {"amdgpu_ring_timeout": r.group(1), "signaled": int(r.group(2)), "emitted": int(r.group(3)),
              "pci": pci.group(1) if pci else None}
        for nxt in lines[i + 1:i + 3]:
            p = _KL_AMD_PROC.search(nxt)
            if p:
                ev["process"], ev["pid"] = p.group(1), p.group(2)
                break
        return ev
    m = _KL_AMD_FAULT.search(line)
    if not m:
        return None
    ev = {"amdgpu_fault": m.group(2), "pci": m.group(1), "vmid": int(m.group(4)), "pasid": int(m.group(5))}
    if m.group(6):
        ev["process"], ev["pid"] = m.group(6), m.group(7)
    for nxt in lines[i + 1:i + 4]:
        p = _KL_AMD_PROC.search(nxt)
        if p:
            ev["process"], ev["pid"] = p.group(1), p.group(2)
        a = _KL_AMD_ADDR.search(nxt)
        if a:
            ev["address"] = a.group(1)
    return ev


def _amd_events(lines: list[str]) -> list[dict]:
    """amdgpu MES hangs (once per message), GPU resets, ring timeouts and page faults, in order."""
    out: list[dict] = []
    mes_seen: set[str] = set()
    for i, line in enumerate(lines):
        r = _KL_AMD_MES.search(line)
        if r:
            if r.group(2) not in mes_seen:  # it repeats per queue: once per message
                mes_seen.add(r.group(2))
                out.append({"amdgpu_mes": r.group(2), "pci": r.group(1)})
            continue
        r = _KL_AMD_RESET.search(line)
        if r:
            out.append({"amdgpu_reset": True, "pci": r.group(1)})
            continue
        ev = _amd_line(lines, i)
        if ev:
            out.append(ev)
    return out


def _kl_what(first: dict, events: list[dict]) -> str:
    """The first event in words."""
    if "amdgpu_mes" in first or "amdgpu_reset" in first:
        mes = [e["amdgpu_mes"] for e in events if "amdgpu_mes" in e]
        reset = any("amdgpu_reset" in e for e in events)
        return (f"amdgpu MES (the firmware queue scheduler) stopped answering (msg={', '.join(mes[:3])})" if mes
                else "amdgpu GPU reset") + f" on {first['pci']}" + ("; the driver reset the GPU" if mes and reset else "")
    if "amdgpu_ring_timeout" in first:
        return f"amdgpu ring {first['amdgpu_ring_timeout']} timeout (signaled {first['signaled']}, " \
               f"emitted {first['emitted']})" + (f" on {first['pci']}" if first.get("pci") else "")
    if "xid" in first:
        prev = re.search(r"caused by previous Xid (\d+)", first["text"])
        return f"Xid {first['xid']}" + (f" (after Xid {prev.group(1)})" if prev else "") + f" on {first['pci']}"
    return f"amdgpu {first['amdgpu_fault']} page fault on {first['pci']}" \
        + (f" at {first['address']}" if first.get("address") else "") \
        + (" (pasid 0: the driver itself)" if first["pasid"] == 0 else "")


def parse_kernel_log(text: str | bytes) -> dict | None:
    """dmesg / journalctl -k lines about the GPUs: NVIDIA Xids (which GPU, which process, the
    driver's text; an Xid 45 "caused by previous Xid N" points at N) and amdgpu page faults (which
    process, the faulting page)."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    amd_hang = "MES failed to respond" in text or "GPU reset begin" in text
    if "NVRM: Xid" not in text and "page fault (src_id" not in text and "timeout, signaled seq=" not in text \
            and not amd_hang:
        return None
    events: list[dict] = []
    for m in _KL_XID.finditer(text):
        pid = m.group(3).strip("'") if m.group(3) else None
        events.append({"xid": int(m.group(2)), "pci": m.group(1), "pid": None if pid in (None, "<unknown>") else pid,
                       "process": None if m.group(4) in (None, "<unknown>") else m.group(4), "text": m.group(5)})
    lines = text.splitlines() if "page fault (src_id" in text or "timeout, signaled seq=" in text or amd_hang else []
    events.extend(_amd_events(lines))
    if not events:
        return None
    first = events[0]
    what = _kl_what(first, events)
    who = f" by {first['process']} (pid {first['pid']})" if first.get("process") else ""
    xids = sorted({e["xid"] for e in events if "xid" in e})
    gpus = sorted({e["pci"] for e in events if e.get("pci")})
    summary = f"kernel log: {what}{who}" + (f"; Xids seen: {', '.join(map(str, xids))}" if len(xids) > 1 else "") \
        + (f"; {len(gpus)} GPUs involved" if len(gpus) > 1 else "")
    return {"kind": "kernel-log", "events": events[:50], "count": len(events), "xids": xids, "gpus": gpus,
            "summary": summary, "findings": [summary]}
