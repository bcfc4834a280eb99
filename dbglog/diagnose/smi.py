"""nvidia-smi -q and rocm-smi: per GPU its identity, state and counters (retired pages, remapped rows,
temperatures, use, VRAM).
"""

from __future__ import annotations

import re

from dbglog.diagnose.nccl import _lines_with


# --- node health: nvidia-smi -q, kernel log (dmesg) ------------------------------------------

_SMI_GPU = re.compile(r"^GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$")
_SMI_KV = re.compile(r"^(\s+)([^:\s](?:[^:]*[^:\s])?)\s*:\s*(.*?)\s*$")  # the key starts and ends with a non-space
_SMI_HEAD = re.compile(r"^(\s+)(\S[^:]*?)\s*$")


def _smi_field(cur: dict, where: str, key: str, val: str) -> None:
    """One ``key : value`` of a GPU's section (``where``: the headings above it) into its record."""
    if key == "Product Name":
        cur["product"] = val
    elif key == "Compute Mode":
        cur["compute_mode"] = val
    elif key == "GPU Current Temp":
        cur["temperature"] = val
    elif "ECC Errors" in where and re.search(r"Uncorrectable|Double Bit", where + " " + key) \
            and (key.startswith(("DRAM", "SRAM", "Total")) or key in ("Uncorrectable", "Device Memory")) \
            and val.isdigit():
        # newer drivers: "DRAM Uncorrectable : 2"; older: "Double Bit / Device Memory : 2", "Total : 2"
        if "Total" in key and ("DRAM" in where or "SRAM" in where):
            return
        bucket = "uncorrectable_volatile" if "Volatile" in where else "uncorrectable_aggregate"
        if key == "Total" and cur[bucket]:
            return  # the old layout's Total repeats the parts already counted
        cur[bucket] += int(val)
    elif "Retired Pages" in where and key in ("Single Bit ECC", "Double Bit ECC") and val.isdigit():
        # nvidia-smi -q -d PAGE_RETIREMENT: pages the driver retired after ECC errors
        cur.setdefault("retired_pages", {})["single_bit" if key.startswith("Single") else "double_bit"] = int(val)
    elif "Remapped Rows" in where and key in ("Correctable Error", "Uncorrectable Error") and val.isdigit():
        cur.setdefault("remapped_rows", {})["correctable" if key.startswith("Correctable") else "uncorrectable"] = \
            int(val)
    elif (key in ("Pending Page Blacklist", "Pending Page Retirement")
          or ("Retired Pages" in where and key == "Pending")) and val.lower() == "yes":
        cur["problems"].append("retired pages pending (reset the GPU)")
    elif "Remapped Rows" in where and key == "Pending" and val.lower() == "yes":
        cur["problems"].append("row remapping pending (reset the GPU)")
    elif "Remapped Rows" in where and key == "Remapping Failure Occurred" and val.lower() == "yes":
        cur["problems"].append("row remapping failed (replace the GPU)")
    elif re.search(r"Clocks? (?:Throttle|Event) Reasons", where) and val == "Active" \
            and key not in ("Idle", "Applications Clocks Setting", "SW Power Cap", "Sync Boost",
                            "Display Clock Setting", "GPU Idle"):
        cur["problems"].append(f"{key} active")


def _smi_problems(g: dict) -> None:
    """A GPU's counters as problems, the ECC errors first."""
    if g["uncorrectable_volatile"]:
        g["problems"].insert(0, f"{g['uncorrectable_volatile']} uncorrectable ECC error(s) since the driver loaded")
    elif g["uncorrectable_aggregate"]:
        g["problems"].insert(0, f"{g['uncorrectable_aggregate']} uncorrectable ECC error(s) in its lifetime")
    dbe = (g.get("retired_pages") or {}).get("double_bit")
    if dbe:
        g["problems"].append(f"{dbe} page(s) retired after double-bit ECC errors")
    rows = (g.get("remapped_rows") or {}).get("uncorrectable")
    if rows:
        g["problems"].append(f"{rows} row(s) remapped after uncorrectable errors")
    if (g.get("compute_mode") or "").startswith("Exclusive"):
        g["problems"].append(f"compute mode {g['compute_mode']} (a second process cannot use it)")


def parse_nvidia_smi_q(text: str | bytes) -> dict | None:
    """``nvidia-smi -q``: per GPU what says "the node, not the code" — uncorrectable ECC errors
    (volatile since the driver loaded, aggregate lifetime), pages pending retirement, rows pending
    remapping or a remapping failure, clock slowdowns that are active (HW slowdown, thermal, power
    brake), and the compute mode."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    if "NVSMI LOG" not in text and not re.search(r"\nGPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:", "\n" + text[:1 << 20]):
        return None
    gpus: list[dict] = []
    cur: dict | None = None
    path: list[tuple[int, str]] = []
    driver = None
    for line in text.splitlines():
        m = _SMI_GPU.match(line)
        if m:
            cur = {"bus_id": m.group(1), "uncorrectable_volatile": 0, "uncorrectable_aggregate": 0, "problems": []}
            gpus.append(cur)
            path = []
            continue
        if line.startswith("Driver Version"):
            driver = line.split(":", 1)[-1].strip()
        if cur is None or not line.strip():
            continue
        kv = _SMI_KV.match(line)
        head = None if kv else _SMI_HEAD.match(line)
        indent = len((kv or head).group(1)) if (kv or head) else 0
        while path and path[-1][0] >= indent:
            path.pop()
        if head:
            path.append((indent, head.group(2)))
            continue
        if not kv:
            continue
        _smi_field(cur, " / ".join(p for _, p in path), kv.group(2), kv.group(3))
    if not gpus:
        return None
    for g in gpus:
        _smi_problems(g)
    bad = [g for g in gpus if g["problems"]]
    findings = [f"GPU {g['bus_id']}" + (f" ({g['product']})" if g.get("product") else "") + ": "
                + "; ".join(g["problems"]) for g in bad]
    summary = (f"nvidia-smi -q: {len(bad)} of {len(gpus)} GPU(s) unhealthy — {findings[0]}" if bad
               else f"nvidia-smi -q: {len(gpus)} GPU(s), no uncorrectable ECC, pending retirement/remapping or "
                    "active slowdown")
    return {"kind": "nvidia-smi", "gpus": gpus, "driver": driver, "summary": summary, "findings": findings}



_RSMI_KV = re.compile(r"^GPU\[(\d+)\]\s*:\s*([^:]+?)\s*:\s*(.*?)\s*$")
_RSMI_DRIVER = re.compile(r"^Driver version:\s*(\S+)", re.M)


def parse_rocm_smi(text: str | bytes) -> dict | None:
    """``rocm-smi`` / ``rocm-smi --showall`` (``-a``): per GPU its "GPU[N] : key: value" lines (ID,
    VBIOS, temperatures, clocks, power, VRAM and GPU use, RAS error counts) and the driver version.
    Findings: a GPU at 90 °C or more, uncorrectable error counts above zero."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    if "ROCm System Management Interface" not in text:
        return None
    gpus: dict[int, dict] = {}
    for line in _lines_with(text, "GPU[", limit=5000):
        m = _RSMI_KV.match(line.strip())
        if m:
            g = gpus.setdefault(int(m.group(1)), {})
            if len(g) < 80:
                g.setdefault(m.group(2), m.group(3))
    if not gpus:
        return None
    d = _RSMI_DRIVER.search(text)
    findings = []
    for n, g in sorted(gpus.items()):
        for k, v in g.items():
            num = re.match(r"-?\d+(?:\.\d+)?", v)
            if k.startswith("Temperature") and num and float(num.group(0)) >= 90:
                findings.append(f"GPU[{n}] {k}: {v} (hot; guess: the clocks are throttled)")
            elif re.search(r"[Uu]ncorrectable", k) and num and float(num.group(0)) > 0:
                findings.append(f"GPU[{n}] {k}: {v} (uncorrectable errors: the hardware, not the code)")

    def brief(n: int, g: dict) -> str:
        temp = next((v for k, v in g.items() if k.startswith("Temperature")), None)
        use, vram = g.get("GPU use (%)"), g.get("VRAM Total Used Memory (B)")
        return f"GPU[{n}]" + (f" {g['GPU ID']}" if g.get("GPU ID") else "") + (f" {temp} °C" if temp else "") \
            + (f" {use}% use" if use else "") + (f" VRAM used {int(vram) >> 20} MiB" if vram and vram.isdigit() else "")

    s = f"rocm-smi: {len(gpus)} GPU(s)" + (f", driver {d.group(1)}" if d else "") + ": " \
        + ", ".join(brief(n, g) for n, g in sorted(gpus.items())[:8])
    return {"kind": "rocm-smi", "driver": d.group(1) if d else None,
            "gpus": [{"gpu": n, **g} for n, g in sorted(gpus.items())][:16], "summary": s, "findings": [s] + findings}
