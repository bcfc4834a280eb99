"""rocgdb batch output: agents, in-flight dispatches, queues whose write pointer is ahead of the read
pointer, waves grouped by kernel and PC (with `info line *$pc`'s source line), the shared-workspace
deadlock tell-tale; rows in a layout not read are reported.
"""

from __future__ import annotations

import re

from dbglog.diagnose.kernels import short_kernel


# --- rocgdb -----------------------------------------------------------------------------------

_DISPATCH_ROW = re.compile(r"^\s*(\*)?\s*(\d+)\s+AMDGPU Dispatch (\d+):(\d+):(\d+) \(PKID (\d+)\)\s+"
                           r"(\[[\d,\s]+\])\s+(\[[\d,\s]+\])\s+(\S+)\s+(.*?)\s*$")
_QUEUE_ROW = re.compile(r"^\s*(\*)?\s*(\d+)\s+AMDGPU Queue (\d+):(\d+) \(QID (\d+)\)\s+(\S+(?: \([^)]*\))?)\s+"
                        r"(\d+)\s+(\d+)\s+(\d+)\s+(0x[0-9a-fA-F]+)")
_AGENT_ROW = re.compile(r"^\s*(\*)?\s*(\d+)\s+(\S+)\s+AMDGPU Agent \(GPUID (\d+)\)\s+(\S+)\s+(.*?)\s+(\d+)\s+(\d+)\s+(\S+)\s*$")
# "AMDGPU Wave 1:1:1:2 (5,0,0)/0" and the lane-focused form "AMDGPU Wave 1:1:1:29/0 (3,0,0)[128,0,0]"
_WAVE_ROW = re.compile(r"^\s*(\*)?\s*(\d+)\s+AMDGPU Wave (\d+):(\d+):(\d+):(\d+)(?:/\d+)? \((\d+),(\d+),(\d+)\)"
                       r"(?:/(\d+)|\[[\d,]+\])(?: \"[^\"]*\")?\s+(.*?)\s*$")
# A device-side assert in a HIP kernel stops the wave in __assert_fail (rocgdb shows SIGABRT)
_ROCGDB_ASSERT = re.compile(r'__assert_fail \(assertion=[^"\n]*"([^"\n]*)",\s*file=[^"\n]*"([^"\n]*)",\s*line=(\d+)')
_FRAME = re.compile(r"^(?:(0x[0-9a-fA-F]+) in )?([^\s(][^(]*?) \([^)]*\)(?: at (\S+))?")
_FULL_FENCE = "B|Aa|Ra"


# rocgdb's `info queues` rows without the Size column (a rocgdb that prints none): read without sizes.
_QUEUE_ROW_NO_SIZE = re.compile(r"^\s*(\*)?\s*(\d+)\s+AMDGPU Queue (\d+):(\d+) \(QID (\d+)\)\s+(\S+(?: \([^)]*\))?)\s+"
                                r"(\d+)\s+(\d+)\s+(0x[0-9a-fA-F]+)")
_ANY_ROW = re.compile(r"^\s*\*?\s*\d+\s+AMDGPU (Queue|Dispatch|Agent|Wave) ")
# `thread apply all info line *$pc`: each wave's PC as a source line
_THREAD_HEAD = re.compile(r"^Thread (\d+) \((AMDGPU Wave [^)]*\)[^)]*)\)")
_INFO_LINE = re.compile(r'^Line (\d+) of "([^"]+)" (?:starts at|is at) address (0x[0-9a-fA-F]+)')


def _rocgdb_row(line: str, rows: dict) -> bool:
    """One row of info agents / dispatches / queues / threads into ``rows``; False if not one."""
    if (m := _DISPATCH_ROW.match(line)) is not None:
        rows["dispatches"].append({"id": int(m.group(2)), "agent": int(m.group(3)), "queue": int(m.group(4)),
                                   "dispatch": int(m.group(5)), "pkid": int(m.group(6)),
                                   "grid": m.group(7).replace(" ", ""), "workgroup": m.group(8).replace(" ", ""),
                                   "fence": m.group(9), "kernel": m.group(10)})
    elif (m := _QUEUE_ROW.match(line) or _QUEUE_ROW_NO_SIZE.match(line)) is not None:
        sized = m.re is _QUEUE_ROW
        read, write = int(m.group(7)), int(m.group(8))
        rows["queues"].append({"id": int(m.group(2)), "agent": int(m.group(3)), "queue": int(m.group(4)),
                               "qid": int(m.group(5)), "type": m.group(6), "read": read, "write": write,
                               "pending": write - read, "size": int(m.group(9)) if sized else None,
                               "address": m.group(10) if sized else m.group(9)})
        if not sized:
            rows["unread"].add("info queues: table without a Size column, read without sizes")
    elif (m := _AGENT_ROW.match(line)) is not None:
        rows["agents"].append({"id": int(m.group(2)), "state": m.group(3), "gpuid": int(m.group(4)),
                               "arch": m.group(5), "name": m.group(6)})
    elif (m := _WAVE_ROW.match(line)) is not None:
        f = _FRAME.match(m.group(11))
        rows["waves"].append({"thread": int(m.group(2)), "agent": int(m.group(3)), "queue": int(m.group(4)),
                              "dispatch": int(m.group(5)), "wave": int(m.group(6)),
                              "workgroup": f"({m.group(7)},{m.group(8)},{m.group(9)})",
                              "kernel": f.group(2).strip() if f else m.group(11),
                              "pc": (f.group(1) or "").lower() or None, "at": f.group(3) if f else None})
    else:
        return False
    return True


def _rocgdb_rows(text: str) -> dict:
    """The rows rocgdb printed, the rows in a layout not read (said, never dropped silently) and
    each wave thread's source line from ``info line *$pc``."""
    rows: dict = {"agents": [], "dispatches": [], "queues": [], "waves": [], "unread": set(), "lines": {}}
    thread = None
    for line in text.splitlines():
        if _rocgdb_row(line, rows):
            continue
        if (m := _ANY_ROW.match(line)) is not None:
            what = {"Queue": "info queues", "Dispatch": "info dispatches", "Agent": "info agents",
                    "Wave": "info threads"}[m.group(1)]
            rows["unread"].add(f"{what}: a row in a layout not recognised, not read ({line.strip()[:80]})")
        elif (m := _THREAD_HEAD.match(line)) is not None:
            thread = int(m.group(1))
        elif thread is not None and (m := _INFO_LINE.match(line)) is not None:
            rows["lines"][thread] = f"{m.group(2)}:{m.group(1)}"
    for w in rows["waves"]:
        if w["thread"] in rows["lines"]:
            w["line"] = rows["lines"][w["thread"]]
    return rows


def parse_rocgdb(text: str | bytes) -> dict | None:
    """Facts from rocgdb batch output (info agents / dispatches / queues / threads, and the waves'
    source lines from ``thread apply all info line *$pc``)."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    if "AMDGPU " not in text and "No dispatches" not in text and "No queues" not in text:
        return None
    rows = _rocgdb_rows(text)
    agents, dispatches, queues, waves = rows["agents"], rows["dispatches"], rows["queues"], rows["waves"]
    assert_m = _ROCGDB_ASSERT.search(text)
    if not (agents or dispatches or queues or waves or rows["unread"] or (assert_m and "AMDGPU Wave" in text)):
        if "No dispatches are currently active" in text or "No queues are currently active" in text:
            return {"kind": "rocgdb", "agents": [], "dispatches": [], "queues": [], "waves": [], "findings": [
                "rocgdb saw no queues/dispatches: the process has no GPU work, or rocm-debug-agent (HSA_TOOLS_LIB) "
                "holds the debugger hook; attach to a worker, without the agent"], "summary": "rocgdb: no dispatches"}
        return None
    return _rocgdb_verdict(rows, assert_m)


def _wave_groups(waves: list[dict]) -> list[dict]:
    """Waves grouped by kernel and where they stand (PC, frame, source line)."""
    groups: dict[tuple, dict] = {}
    for w in waves:
        key = (w["kernel"], w["pc"] or w["at"])
        g = groups.setdefault(key, {"kernel": w["kernel"], "pc": w["pc"], "at": w["at"], "waves": 0,
                                    "dispatches": set()})
        if w.get("line"):
            g["line"] = w["line"]
        g["waves"] += 1
        g["dispatches"].add((w["agent"], w["queue"], w["dispatch"]))
    out = []
    for g in sorted(groups.values(), key=lambda g: -g["waves"]):
        g["dispatches"] = sorted(f"{a}:{q}:{d}" for a, q, d in g["dispatches"])
        out.append(g)
    return out


def _rocgdb_verdict(rows: dict, assert_m) -> dict:
    agents, dispatches, queues, waves = rows["agents"], rows["dispatches"], rows["queues"], rows["waves"]
    stalled = [q for q in queues if q["pending"] > 0]
    wave_groups = _wave_groups(waves)
    findings = sorted(rows["unread"])  # said first: a table not read is not an empty one
    per_kernel: dict[str, list[dict]] = {}
    for g in wave_groups:
        per_kernel.setdefault(g["kernel"], []).append(g)
    for k, gs in per_kernel.items():
        n = sum(g["waves"] for g in gs)
        if len(gs) == 1 and n >= 2:
            where = gs[0]["pc"] or gs[0]["at"]
            if gs[0].get("line"):
                where += f", {gs[0]['line']}"
            findings.append(f"all {n} waves of {short_kernel(k)} at one PC ({where}): a barrier or spin wait "
                            "(waiting for something that never arrives)")
    cleans = [d for d in dispatches if re.search(r"_clean\b|_clean[^A-Za-z]|_clean$", d["kernel"])]
    if len({d["queue"] for d in cleans if d["fence"] == _FULL_FENCE}) >= 2:
        findings.append(f"{len(cleans)} `_clean` dispatches on different queues with a full fence ({_FULL_FENCE}): "
                        "the shared-workspace deadlock (split-K reduction counters in one workspace, interleaved by "
                        "two streams); make the workspace per stream")
    if len({d["queue"] for d in dispatches}) >= 2:
        findings.append(f"{len(dispatches)} dispatches in flight on {len({d['queue'] for d in dispatches})} queues: "
                        "concurrent streams")
    for q in stalled:
        findings.append(f"queue {q['agent']}:{q['queue']} (QID {q['qid']}) has {q['pending']} packet(s) pending "
                        f"(write {q['write']} > read {q['read']})")
    out = {"kind": "rocgdb", "agents": agents, "dispatches": dispatches, "queues": queues, "stalled_queues": stalled,
           "wave_groups": wave_groups[:20], "waves": len(waves), "findings": findings,
           "unread": sorted(rows["unread"])}
    if assert_m:
        out["assert"] = {"condition": assert_m.group(1), "file": assert_m.group(2), "line": int(assert_m.group(3))}
        findings.insert(0, f"device-side assert `{assert_m.group(1)}` failed at {assert_m.group(2)}:{assert_m.group(3)}")
    names = ", ".join(dict.fromkeys(short_kernel(d["kernel"]) or "?" for d in dispatches))
    out["summary"] = (f"rocgdb: {findings[0]} ({len(waves)} wave(s) listed)" if assert_m else
                      f"rocgdb: {len(dispatches)} dispatch(es) in flight" + (f" ({names})" if names else "")
                      + (f", {len(stalled)} stalled queue(s)" if stalled else "")
                      + (f"; {findings[0]}" if findings else ""))
    return out


# --- catch throw ------------------------------------------------------------------------------

# gdb/rocgdb stopping at a C++ throw: 'Thread 1 "python3" hit Catchpoint 1 (exception thrown), 0x... in
# __cxa_throw () from /lib/x86_64-linux-gnu/libstdc++.so.6' (older: "Catchpoint 1 (exception thrown), ...")
_CATCH = re.compile(r"^(?:Thread \d+ (?:\"([^\"]*)\" )?hit )?Catchpoint \d+ \(exception thrown\)", re.M)
_BT_FRAME = re.compile(r"^#(\d+)\s+(?:(0x[0-9a-fA-F]+) in )?(.+?)(?: at (\S+:\d+)| from (\S+))?\s*$")
# the throw machinery and the helpers that format and throw an error on the caller's behalf
_THROWING = re.compile(r"^(?:__cxa_throw|__cxa_rethrow|_Unwind_|std::__throw_|std::rethrow_exception|"
                       r"c10::detail::torchCheckFail|c10::detail::torchInternalAssertFail|c10::Error::|"
                       r"c10::(?:\w+::)*\w+Error::)")


def _bt_frames(text: str, start: int) -> list[dict]:
    frames = []
    for line in text[start:].splitlines()[1:]:
        m = _BT_FRAME.match(line.strip())
        if m is None:
            if frames:
                break
            continue
        fn = m.group(3)
        fn = fn[:fn.index(" (")] if " (" in fn else fn  # (the arguments)
        frames.append({"n": int(m.group(1)), "function": fn, "at": m.group(4), "lib": m.group(5)})
    return frames


def parse_catch_throw(text: str | bytes) -> dict | None:
    """Where a C++ exception was thrown, from rocgdb/gdb run with `catch throw` then `bt`: the first
    frame below the throw machinery (and below c10's check helpers: the code whose check failed)."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    m = _CATCH.search(text)
    if m is None:
        return None
    frames = _bt_frames(text, m.start())
    thrower = next((f for f in frames if not _THROWING.match(f["function"])), None)
    if thrower is None:
        where = "no backtrace after the catchpoint" if not frames else "only the throw machinery in the backtrace"
        return {"kind": "cpp-throw", "thread": m.group(1), "frames": frames, "summary": f"C++ exception thrown; {where}",
                "findings": []}
    place = thrower["at"] or thrower["lib"] or "no source line (no debug info)"
    findings = [f"#{f['n']} {f['function']}" + (f" at {f['at']}" if f["at"] else f" from {f['lib']}" if f["lib"] else "")
                for f in frames[:8]]
    return {"kind": "cpp-throw", "thread": m.group(1), "function": thrower["function"], "at": thrower["at"],
            "frames": frames, "summary": f"C++ exception thrown in {thrower['function']} ({place})",
            "findings": findings}
