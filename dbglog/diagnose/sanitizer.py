"""compute-sanitizer / cuda-memcheck reports (memcheck, initcheck, racecheck, synccheck): per report the
error, kernel and offset, thread and block, address and the nearest allocation.
"""

from __future__ import annotations

import re

from dbglog.diagnose.kernels import short_kernel


# --- compute-sanitizer / cuda-memcheck --------------------------------------------------------

# Every report line starts with "=========" (after whatever a CI log or launcher put in front).
# The wordings of compute-sanitizer 2019-2025 and of the older cuda-memcheck:
#   Invalid __global__ read of size 4 bytes         (cuda-memcheck: "of size 4")
#       at col_kernel(...)+0x490 [in file.cu:12]    (cuda-memcheck: "at 0x000002e8 in Kernel(...)")
#       by thread (1,0,0) in block (5,0,0)
#       Address 0x... is out of bounds | is misaligned   (newer: "Access at/to 0x... is out of bounds")
#       and is 1 bytes after the nearest allocation at 0x... of size 324 bytes
#   Uninitialized __global__ memory read of size 8 bytes          (initcheck)
#   Error: Race reported between Write access at ... and Read access at ...   (racecheck)
#   Program hit cudaErrorLaunchFailure (error 719) due to "..." on CUDA API call to ...
_CS_LINE = re.compile(r"^[^\n=]{0,60}=========(?: (.*))?$")  # (the body is stripped: a lazy one tried every space)
_CS_ERROR = re.compile(r"^(Invalid __(\w+)__ (read|write) of size (\d+)(?: bytes)?|"
                       r"Uninitialized __(\w+)__ memory read of size (\d+)(?: bytes)?|"
                       r"(Error|ERROR|WARN|Warning): Race reported between (\w+) access at (.*)|"
                       r"Program hit (\w+)(?: \(error \d+\))?(?: due to \"([^\"]*)\")?.*|"
                       r"Host API memory access error at host access to (0x[0-9a-fA-F]+) of size (\d+) bytes.*|"
                       r"(ERROR|WARN|INFO):(?:\(([^)]*)\))? ?Potential (\w+) hazard detected at __(\w+)__ "
                       r"(0x[0-9a-fA-F]+) in block \(([^)]*)\).*|"
                       r"Barrier error detected.*|[\w ]*[Ee]rror:? [^\n]*detected.*)$")
_CS_AT = re.compile(r"^at (?:(0x[0-9a-fA-F]+) in )?(.+?)(?:\+(0x[0-9a-fA-F]+))?(?: in (\S+:\d+))?$")
_CS_THREAD = re.compile(r"^by thread \(([^)]*)\) in block \(([^)]*)\)")
_CS_ADDR = re.compile(r"^(?:Address|Access at|Access to) (0x[0-9a-fA-F]+)(?: is ([\w ]+?))?\s*$")
_CS_ALLOC = re.compile(r"^and is (.+?nearest allocation at 0x[0-9a-fA-F]+ of size \d+ bytes)")
_CS_HOST = re.compile(r"^Host Frame:\s*(.+?)\s*$")
# initcheck on a host API call: "Uninitialized access at 0x... on access by cudaMemcpy source"
_CS_UNINIT = re.compile(r"^Uninitialized access at (0x[0-9a-fA-F]+) on access by (\w+)(?: (source|destination))?")
# racecheck's other side(s): "and Read access at <where> [16 hazards]"
_CS_AND = re.compile(r"^and (\w+) access at (.*)$")
# where a racecheck access is: "func(args)+0xd790 in file.cuh:324" or, built with -G, "0x1f20 in file.hpp:249:func"
_CS_RACE_AT = re.compile(r"^(?:(0x[0-9a-fA-F]+) in (\S+?:\d+):(.+?)|(.+?)\+(0x[0-9a-fA-F]+)(?: in (\S+:\d+))?)"
                         r"(?: \[(\d+) hazards?\])?\s*$")
# old racecheck's accesses: "Write Thread (24, 0, 0) at 0x00001ab0 in /path/warp_scan.cuh:146:_ZN..."
_CS_HAZ_ACCESS = re.compile(r"^(Read|Write) Thread \(([^)]*)\) at (0x[0-9a-fA-F]+) in (\S+?:\d+)(?::(.+?))?\s*$")
# "Device Frame:/path/file.hpp:689:func (func : 0xff0)", newer "Device Frame:func+0x1f0 in file.cu:12"
_CS_DEVFRAME = re.compile(r"^Device Frame:\s*(?:(\S+?:\d+):(.+?) \(.* : (0x[0-9a-fA-F]+)\)|(.+?) \((.+?) : (0x[0-9a-fA-F]+)\)"
                          r"|(.+?)\+(0x[0-9a-fA-F]+)(?: in (\S+:\d+))?)\s*$")
_CS_INTERNAL = re.compile(r"^__cuda|^_INTERNAL_\w*::__|/include/(?:sm_\d+_|crt/|cuda_)|^cuda(?:Launch|Memcpy|Memset)|"
                          r"^__cudart|^\[0x|^cu[A-Z]\w*")
_CS_TOOL = re.compile(r"--tool[ =](memcheck|racecheck|initcheck|synccheck)")
_CS_SEVERITY = {"ERROR": "Error", "Error": "Error", "WARN": "Warning", "Warning": "Warning", "INFO": "Info"}
_CS_ANY = re.compile(r"=========[ \t]+(?:Invalid __|Uninitialized __|(?:Error|ERROR|WARN|Warning): Race|Program hit|"
                     r"Host API memory access error|(?:ERROR|WARN|INFO):(?:\([^)]*\))? ?Potential \w+ hazard|"
                     r"Barrier error|[\w ]*[Ee]rror:? [^\n]*detected)")
_CS_TOTAL = re.compile(r"(?:ERROR|RACECHECK) SUMMARY: (\d+)(?: hazards? displayed \((\d+) errors?, (\d+) warnings?\))?")


def _cs_where(loc: str) -> dict:
    """A racecheck access location as {function, pc, source, hazards}."""
    m = _CS_RACE_AT.match(loc.strip())
    if not m:
        return {"function": loc.strip()[:300]}
    out = {"function": (m.group(3) or m.group(4) or "").strip(), "pc": (m.group(1) or m.group(5) or "").lower() or None,
           "source": m.group(2) or m.group(6)}
    if m.group(7):
        out["hazards"] = int(m.group(7))
    return {k: v for k, v in out.items() if v is not None}


def _tail_name(name: str | None, width: int = 60) -> str | None:
    """short_kernel without the width cut, then cut from the left: a long C++ name keeps its function."""
    s = short_kernel(name, 1 << 20)
    return s if not s or len(s) <= width else "…" + s[-(width - 1):]


# the end of a host frame: " in cpy.cu:612 [0x59421a8] in lib.so" (each part optional)
_CS_HOST_TAIL = re.compile(r"(?: in (\S+:\d+))?(?: \[0x[0-9a-fA-F]+\])?(?: in \S+)?$")


def _cs_host_short(frame: str) -> str:
    """'ggml_cuda_cpy(ggml_backend_cuda_context&, ...) in cpy.cu:612 [0x59421a8] in lib.so' -> 'ggml_cuda_cpy (cpy.cu:612)'."""
    # Cut from the end, not with one lazy regex over the whole frame: a frame of many '(' was quadratic.
    tail = _CS_HOST_TAIL.search(frame)  # (always matches: every part is optional)
    head, src = frame[:tail.start()], tail.group(1)
    head = re.sub(r" \[clone [^\]]*\]$", "", head)
    if head.endswith(")") and "(" in head:
        head = head[:head.index("(")]
    fn = head.strip()
    return (_tail_name(fn, 60) or fn) + (f" ({src})" if src else "")


def _cs_user_frame(name: str) -> bool:
    """A host/device frame of the program itself, not of the CUDA runtime/driver or a CUDA header."""
    return not _CS_INTERNAL.search(name.strip())


def _cs_report(body: str, e: re.Match) -> dict:
    """A new report from its error line (memcheck, initcheck, racecheck old and new, API errors)."""
    cur: dict = {"error": body if len(body) <= 200 else body[:199] + "…"}
    if e.group(2):
        cur.update(space=e.group(2), access=e.group(3), size=int(e.group(4)))
    elif e.group(5):
        cur.update(space=e.group(5), access="uninitialized read", size=int(e.group(6)))
    elif e.group(7):
        first = _cs_where(e.group(9))
        cur.update(access="race", severity=_CS_SEVERITY.get(e.group(7), e.group(7)),
                   accesses=[dict(first, access=e.group(8))])
        cur["error"] = f"{cur['severity']}: race between {e.group(8)} access"
    elif e.group(10):
        cur.update(api_error=e.group(10), api_text=e.group(11))
    elif e.group(12):
        cur.update(access="host API", host_address=e.group(12).lower(), size=int(e.group(13)))
    elif e.group(14):
        cur.update(access="race", severity=_CS_SEVERITY.get(e.group(14), e.group(14)),
                   hazard=e.group(16), space=e.group(17), address=e.group(18).lower(),
                   block=f"({e.group(19).replace(' ', '')})", accesses=[])
        if e.group(15):
            cur["category"] = e.group(15)
        cur["error"] = f"{cur['severity']}: potential {e.group(16)} hazard at __{e.group(17)}__ {e.group(18)}"
    elif body.startswith("Barrier error"):
        cur["access"] = "barrier"
    return cur


def _cs_frames(cur: dict, body: str) -> bool:
    """The report's device frame or host frames from one line; False if the line is neither."""
    if (d := _CS_DEVFRAME.match(body)) and "device_frame" not in cur:
        fn = (d.group(2) or d.group(4) or d.group(7) or "").strip()
        src = d.group(1) or d.group(9)
        off = (d.group(3) or d.group(6) or d.group(8) or "").lower()
        if _cs_user_frame(fn) and _cs_user_frame(src or ""):
            cur["device_frame"] = {k: v for k, v in (("function", fn), ("source", src), ("pc", off)) if v}
        return True
    if (h := _CS_HOST.match(body)) and not h.group(1).startswith("/lib") and _cs_user_frame(h.group(1)):
        cur.setdefault("host_frame", h.group(1))
        if len(chain := cur.setdefault("host_frames", [])) < 4:
            chain.append(_cs_host_short(h.group(1)))
        return True
    return False


def _cs_detail(cur: dict, body: str) -> None:
    """One line under a report's error line: the other race side, where, who, the address, the
    allocation, the frames."""
    if cur.get("access") == "race" and (a := _CS_AND.match(body)):
        cur["accesses"].append(dict(_cs_where(a.group(2)), access=a.group(1)))
    elif cur.get("access") == "race" and (h := _CS_HAZ_ACCESS.match(body)):
        cur["accesses"].append({"access": h.group(1), "thread": f"({h.group(2).replace(' ', '')})",
                                "pc": h.group(3).lower(), "source": h.group(4), "function": h.group(5)})
    elif "kernel" not in cur and cur.get("access") != "race" and (a := _CS_AT.match(body)):
        cur["kernel"] = a.group(2).strip()
        off = a.group(3) or a.group(1)
        if off:
            cur["pc"] = off.lower()
        if a.group(4):
            cur["source"] = a.group(4)
    elif th := _CS_THREAD.match(body):
        cur["thread"], cur["block"] = f"({th.group(1)})", f"({th.group(2)})"
    elif ad := _CS_ADDR.match(body):
        cur["address"] = ad.group(1).lower()
        if ad.group(2):
            cur["problem"] = ad.group(2)
    elif u := _CS_UNINIT.match(body):
        cur.update(address=u.group(1).lower(), problem="uninitialized", api=u.group(2))
        if u.group(3):
            cur["api_side"] = u.group(3)
    elif al := _CS_ALLOC.match(body):
        cur["allocation"] = al.group(1)
    else:
        _cs_frames(cur, body)


def _cs_reports(text: str) -> tuple[list[dict], int | None, tuple[int, int] | None]:
    """(reports, the summary's total, its (errors, warnings)) of every "=========" line."""
    reports: list[dict] = []
    cur: dict | None = None
    total = errors_warnings = None
    for raw in text.splitlines():
        m = _CS_LINE.match(raw)
        body = (m.group(1) or "").strip() if m else ""
        if not body:
            continue
        if (t := _CS_TOTAL.search(body)) is not None:
            total = int(t.group(1))
            if t.group(2):
                errors_warnings = (int(t.group(2)), int(t.group(3)))
        elif (e := _CS_ERROR.match(body)) is not None:
            cur = _cs_report(body, e)
            reports.append(cur)
        elif cur is not None:
            _cs_detail(cur, body)
    for r in reports:
        _cs_settle(r)
    return reports, total, errors_warnings


def _cs_settle(r: dict) -> None:
    """A race's first side names the report's kernel; the program's device frame stands for a CUDA
    intrinsic (__cuda_sm70_warpsync) in the report's own "at"."""
    if r.get("access") == "race" and r["accesses"]:
        a0 = r["accesses"][0]
        r.setdefault("kernel", a0.get("function"))
        for k in ("pc", "source", "thread"):
            if a0.get(k):
                r.setdefault(k, a0[k])
        r["hazards"] = sum(a.get("hazards", 0) for a in r["accesses"]) or None
    if r.get("device_frame"):
        if not r.get("kernel") or not _cs_user_frame(r["kernel"]):
            r["kernel"] = r["device_frame"]["function"]
            r["pc"] = r["device_frame"].get("pc")
        if r["device_frame"].get("source"):
            r.setdefault("source", r["device_frame"]["source"])


def _cs_access(first: dict) -> tuple[str, str]:
    """(what went wrong, in one phrase; where: kernel+offset, or "" for a race whose sides say it)."""
    where = f"{_tail_name(first['kernel'], 60)}" + (f"+{first['pc']}" if first.get("pc") else "") \
        if first.get("kernel") else "?"
    if first.get("access") == "race" and first.get("accesses"):
        sides = [f"{a['access']} at {_tail_name(a.get('function'), 50) or '?'}"
                 + (f" ({a['source']})" if a.get("source") else "") for a in first["accesses"][:3]]
        access = f"{first['severity']}: race between " + " and ".join(sides) \
            + (f", {first['hazards']} hazard{'s' if first['hazards'] != 1 else ''}" if first.get("hazards") else "")
        if first.get("hazard"):
            access = f"{first['severity']}: potential {first['hazard']} hazard on __{first['space']}__ " \
                     f"{first['address']} in block {first['block']}" + (" between " + " and ".join(sides) if sides else "")
        return access, ""
    if first.get("access") == "host API":
        return (f"Host API memory access error: {first.get('api') or 'a host API call'}"
                + (f" ({first['api_side']})" if first.get("api_side") else "")
                + (f" reads {first.get('problem') or 'bad'} memory at {first['address']}" if first.get("address") else "")
                + f" ({first.get('size')} bytes at {first['host_address']})"), where
    access = first["error"]
    if first.get("address"):
        detail = ", ".join(x for x in (first.get("problem"), first.get("allocation")) if x)
        access += f" at {first['address']}" + (f" ({detail})" if detail else "")
    return access, where


def _cs_findings(out: dict, reports: list[dict], total, errors_warnings) -> list[str]:
    first = reports[0]
    kernels: dict[str, int] = {}
    for r in reports:
        if r.get("kernel"):
            k = _tail_name(r["kernel"], 60) or r["kernel"]
            kernels[k] = kernels.get(k, 0) + 1
    findings = [out["summary"]] + [f"{n} report(s) in {k}" for k, n in kernels.items()]
    if first.get("host_frame") and first.get("access") == "host API":
        findings.append(f"the host call came from {first['host_frame']}")
    elif first.get("api_error") and len(first.get("host_frames") or ()) > 1:
        # a failing CUDA API call: the program's own callers, innermost first, say which code path launched it
        findings.append("the failing call came from " + " <- ".join(first["host_frames"]))
    if first.get("device_frame"):
        df = first["device_frame"]
        findings.append(f"first device frame of the program: {short_kernel(df['function'], 80)}"
                        + (f" at {df['source']}" if df.get("source") else ""))
    if errors_warnings:
        findings.append(f"racecheck summary: {total} hazard(s) displayed ({errors_warnings[0]} error(s), "
                        f"{errors_warnings[1]} warning(s))")
    return findings


def parse_compute_sanitizer(text: str | bytes) -> dict | None:
    """compute-sanitizer (memcheck, initcheck, racecheck, synccheck) and cuda-memcheck reports: for
    each report the error, the kernel and offset, the thread and block, the address and what is
    wrong with it (out of bounds, misaligned, N bytes after an allocation, uninitialized) and the
    first host frame of the program; racecheck reports give both sides of the race (access, function,
    source line, hazard count), synccheck reports the first device frame of the program. The first
    report is the one to fix; the others are counted and grouped by kernel."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    # a C-level look for a report line first: a big log with a "=========" banner is not walked line by line
    if "=========" not in text or not _CS_ANY.search(text):
        return None
    reports, total, errors_warnings = _cs_reports(text)
    if not reports:
        return None
    tool = _CS_TOOL.search(text)
    first = reports[0]
    kinds = {"uninitialized read": "initcheck", "host API": "initcheck", "race": "racecheck", "barrier": "synccheck"}
    out: dict = {"kind": "compute-sanitizer",
                 "tool": tool.group(1) if tool else kinds.get(first.get("access") or "", "memcheck"),
                 "reports": reports[:20], "count": len(reports), "total": total}
    if errors_warnings:
        out["errors"], out["warnings"] = errors_warnings
    for key in ("kernel", "pc", "source", "thread", "block", "address", "problem", "allocation", "host_frame", "api",
                "hazards", "hazard", "severity", "accesses", "device_frame"):
        if first.get(key):
            out[key] = first[key]
    out["access"], where = _cs_access(first)
    by = f" by thread {first['thread']} in block {first['block']}" if first.get("thread") and first.get("block") else ""
    more = len(reports) - 1
    loc = f" in {where}" if where and where != "?" else (" (from the host)" if first.get("access") == "host API" else "")
    if first.get("access") not in ("race",) and first.get("source") and where == "?":
        loc = f" at {first['source']}"
    out["summary"] = (f"compute-sanitizer {out['tool']}: {out['access']}{loc}{by}"
                      + (f" (+{more} more report{'s' if more != 1 else ''})" if more else ""))
    out["findings"] = _cs_findings(out, reports, total, errors_warnings)
    return out
