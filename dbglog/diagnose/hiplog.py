"""AMD_LOG_LEVEL traces of the HIP runtime: the last API calls and what they returned, the last
kernel launched.
"""

from __future__ import annotations

import re

from dbglog.diagnose.kernels import demangle, short_kernel


# --- AMD_LOG_LEVEL (HIP runtime) traces --------------------------------------------------------

# ":3:hip_module.cpp  :679 : 0893897958 us: [pid:110   tid:0x7f5f...]  hipLaunchKernel ( ... )"
# (newer runtimes drop the pid/tid on some lines: ":3:rocdevice.cpp :2967: 46756832490 us:  Number of ...")
_AMD_LINE = re.compile(r"^:(\d):(\S+)\s*:\s*\d+\s*:\s*(\d+) us:(?: \[pid:(\d+)\s+tid:\s*(0x[0-9a-fA-F]+)\])?\s?(.*?)\s*$",
                       re.M)
_AMD_CALL = re.compile(r"^\s*(hip\w+)\s*\((.*)\)\s*$")
_AMD_RET = re.compile(r"^(hip\w+): Returned (hip\w+)")
_AMD_SHADER = re.compile(r"ShaderName\s*:\s*(\S+)")


def parse_amd_log(text: str | bytes) -> dict | None:
    """An ``AMD_LOG_LEVEL`` (3 or 4) trace of the HIP runtime: the last HIP call per thread and
    whether it returned (a call without its "Returned" line is where the thread was when the process
    stopped), the first call that returned an error, and the last kernel dispatched (``ShaderName``
    at level 4) — CUDA_LAUNCH_BLOCKING's role for HIP: which launch ran last before the fault."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    if " us: " not in text or not re.search(r"(?:^|\n):\d:\S+\s*:\s*\d+\s*:\s*\d+ us: ", text[:1 << 20]):
        return None
    last_call: dict[str, dict] = {}
    first_error = None
    shader = None
    n = 0
    for m in _AMD_LINE.finditer(text):
        n += 1
        msg, tid = m.group(6), m.group(5) or "?"
        s = _AMD_SHADER.search(msg)
        if s:
            shader = s.group(1)
            continue
        r = _AMD_RET.match(msg)
        if r:
            call = last_call.get(tid)
            if call and call["api"] == r.group(1):
                call["returned"] = r.group(2)
            if r.group(2) != "hipSuccess" and first_error is None and r.group(2) not in ("hipErrorNotReady",):
                first_error = {"api": r.group(1), "error": r.group(2), "tid": tid}
            continue
        c = _AMD_CALL.match(msg)
        if c:
            last_call[tid] = {"api": c.group(1), "args": c.group(2).strip()[:200], "tid": tid, "returned": None}
    if not n:
        return None
    pending = [c for c in last_call.values() if c["returned"] is None]
    if shader and shader.startswith("_Z"):
        shader = demangle([shader]).get(shader, shader)
    out: dict = {"kind": "amd-log", "lines": n, "last_calls": list(last_call.values())[:16], "in_flight": pending,
                 "first_error": first_error, "last_kernel": shader}
    parts = []
    if first_error:
        parts.append(f"{first_error['api']} returned {first_error['error']}")
    if pending:
        parts.append("in flight: " + ", ".join(f"{c['api']} (tid {c['tid']})" for c in pending[:3]))
    if shader:
        parts.append(f"last kernel dispatched {short_kernel(shader, 70)}")
    if not parts and last_call:
        last = list(last_call.values())[-1]
        parts.append(f"last call {last['api']} returned {last['returned']}")
    out["summary"] = "AMD_LOG_LEVEL trace: " + ("; ".join(parts) if parts else f"{n} runtime lines")
    out["findings"] = [out["summary"]]
    return out
