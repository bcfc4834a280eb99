"""CUDA core dumps and cuda-gdb: the core-dump progress lines, cuda-gdb's exception, focus, stops and
warps, `info cuda kernels`; the chain target cudacore -> info symbol $errorpc -> nvdisasm (cuobjdump on a
collision) -> the faulting PC's inline chain; a hang dump's kernel and line.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from dbglog.diagnose.kernels import demangle, short_kernel


# --- CUDA core dumps --------------------------------------------------------------------------

CUDA_EXCEPTION_MEANINGS = {
    "Warp Illegal Address": "a thread of the warp accessed an address outside any allocation (cudaErrorIllegalAddress)",
    "Lane Illegal Address": "a lane accessed an address outside any allocation",
    "Device Illegal Address": "the device saw an access to an illegal address (the warp is not known)",
    "Warp Out-of-range Address": "a thread accessed an address outside the valid range of local or shared memory",
    "Warp Misaligned Address": "a thread accessed an address not aligned for the access size",
    "Lane Misaligned Address": "a lane accessed an address not aligned for the access size",
    "Warp Invalid Address Space": "an instruction accessed memory through the wrong address space",
    "Warp Invalid PC": "the warp jumped to an invalid program counter",
    "Warp Illegal Instruction": "the warp executed an illegal instruction",
    "Warp Assert": "a device-side assert failed",
    "Lane User Stack Overflow": "a thread overflowed its call stack (deep recursion or big local arrays; raise "
                                "cudaLimitStackSize)",
    "Warp Hardware Stack Overflow": "the warp overflowed the hardware stack",
    "Device Hardware Stack Overflow": "the device overflowed the hardware stack",
    "Lane Syscall Error": "a device-side syscall (e.g. malloc/printf) failed",
}

_CG_EXC = re.compile(r"CUDA Exception: ([A-Z][\w -]*?[A-Za-z])\s*$", re.M)
_CG_SIGNAL = re.compile(r"received signal CUDA_EXCEPTION_(\d+), ([A-Z][\w -]*?[A-Za-z])\.", re.M)
_CG_PC = re.compile(r"The exception was triggered at PC (0x[0-9a-fA-F]+)")
_CG_FOCUS = re.compile(r"\[(?:Current focus set to|Switching focus to) CUDA kernel (\d+), grid (\d+), block \(([^)]*)\), "
                       r"thread \(([^)]*)\), device (\d+), sm (\d+), warp (\d+), lane (\d+)\]")
_CG_FRAME = re.compile(r"^#0\s+(?:(0x[0-9a-fA-F]+) in )?(.+?)(?:<<<([^>]*)>>>)?\s*\(\)"
                       r"(?: at \S+?:\d+(?: in \S+ inlined from \S+)?)?\s*$|"
                       r"^(?:(0x[0-9a-fA-F]+) in )(.+?)<<<([^>]*)>>>\s*\(\)", re.M)
_CG_AT = re.compile(r"^\s+at (\S+?):(\d+)(?: in (\S+) inlined from (\S+))?\s*$", re.M)
_CG_FN = re.compile(r"^(0x[0-9a-fA-F]+) in (.+?) \((?:\w+=|\)).*$", re.M)
_CG_LAUNCH = re.compile(r"^(?:#\d+\s+)?(?:0x[0-9a-fA-F]+ in )?(\S.*?)<<<\(([^)]*)\),\(([^)]*)\)>>>", re.M)
_CG_PC_SRC = re.compile(r"The exception was triggered at PC 0x[0-9a-fA-F]+ \(([^()\s]+:\d+)\)")
_CG_WHERE = re.compile(r"^(0x[0-9a-fA-F]+)\s+(?:in (\S.*?) \(.*|(\d+)\s+(.*))$")
_CG_WARP_CMD = re.compile(r"^\(cuda-gdb\) cuda (?:device \d+ )?(?:sm \d+ )?warp (\d+)")
_CG_SYMBOL = re.compile(r"^(.+?) \+ (\d+) in section (\.text\.\S+) of (\S+)\s*$", re.M)
_CG_PRINT_PC = re.compile(r"^\$\d+ = (?:\([^)]*\) )?(0x[0-9a-fA-F]+)", re.M)
_CD_EXC = re.compile(r"coredump: Detected an exception of type CUDBG_EXCEPTION_(\w+?) \((\d+)\)")
_CD_FIELD = re.compile(r"coredump:\s+- (Device|SM|Warp|PC):? (.*?)\s*$", re.M)
_CD_FRAME = re.compile(r"coredump:\s+#(\d+)\s+(0x[0-9a-fA-F]+)\s+(\S+)")
_CD_FILE = re.compile(r"coredump: Writing ELF file to (\S+)")


def _exc_name(token: str) -> str:
    return " ".join(w.capitalize() if w.lower() not in ("pc",) else "PC" for w in token.split("_")) \
        .replace("Out Of Range", "Out-of-range")




def parse_cuda_coredump_progress(text: str | bytes) -> dict | None:
    """CUDA_COREDUMP_SHOW_PROGRESS lines: the exception, device/SM/warp, PC, the kernel (from the
    stack trace) and the dump file written."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    if "coredump:" not in text:
        return None
    m = _CD_EXC.search(text)
    files = [f for f in _CD_FILE.findall(text)]
    if not m and not files:
        return None
    out: dict = {"kind": "cuda-coredump", "exception": _exc_name(m.group(1)) if m else None,
                 "exception_code": int(m.group(2)) if m else None, "files": files}
    if m:
        tail = text[m.end():m.end() + 4000]
        for key, val in _CD_FIELD.findall(tail):
            out.setdefault(key.lower(), val.strip())
        frames = [{"frame": int(n), "pc": pc.lower(), "function": fn} for n, pc, fn in _CD_FRAME.findall(tail)]
        if frames:
            names = demangle(f["function"] for f in frames)
            for f in frames:
                if f["function"] in names:
                    f["demangled"] = names[f["function"]]
            out["frames"] = frames
            out["kernel"] = frames[0].get("demangled") or frames[0]["function"]
    if out.get("pc"):
        out["pc"] = out["pc"].lower()
    out["meaning"] = CUDA_EXCEPTION_MEANINGS.get(out["exception"] or "")
    out["summary"] = ("CUDA core dump: " + (out["exception"] or "dump written")
                      + (f" in {short_kernel(out['kernel'])}" if out.get("kernel") else "")
                      + (f" at pc {out['pc']}" if out.get("pc") else "")
                      + (f"; dump {files[-1]}" if files else ""))
    return out


_CG_KERNELS_HEAD = re.compile(r"^\s*Kernel\s+Parent\s+Dev\s+Grid\s+Status\s+SMs Mask\s+GridDim\s+BlockDim\s+Name\s+Args",
                              re.M)
_CG_KERNEL_ROW = re.compile(r"^\s*(\*)?\s*(\d+)\s+(\S+)\s+(\d+)\s+(-?\d+)\s+(\w+)\s+(0x[0-9a-fA-F]+)\s+(\([^)]*\))\s+"
                            r"(\([^)]*\))\s+(\S+)(?:\s+(.*?))?\s*$")


def parse_cuda_gdb_kernels(text: str | bytes) -> dict | None:
    """``info cuda kernels`` from cuda-gdb attached to a hung process (the cuda-gdb capture preset):
    the kernels resident on the GPU, the focused one first — what a hang is spinning in."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    head = _CG_KERNELS_HEAD.search(text) if "SMs Mask" in text else None
    if not head:
        return None
    kernels = []
    for line in text[head.end():].splitlines()[1:]:
        m = _CG_KERNEL_ROW.match(line)
        if not m:
            if kernels:
                break
            continue
        kernels.append({"focus": bool(m.group(1)), "kernel": int(m.group(2)), "device": int(m.group(4)),
                        "grid": int(m.group(5)), "status": m.group(6), "sm_mask": m.group(7),
                        "grid_dim": m.group(8), "block_dim": m.group(9), "name": m.group(10), "args": m.group(11)})
    if not kernels:
        return {"kind": "cuda-gdb-kernels", "kernels": [], "summary": "cuda-gdb: no CUDA kernel resident"}
    kernels.sort(key=lambda k: not k["focus"])
    findings = []
    for k in kernels:
        info = nccl_kernel_info(k["name"])
        if info:
            k["nccl"] = info
    nccl = [k for k in kernels if k.get("nccl")]
    if nccl:
        findings.append("NCCL kernel(s) resident during the hang: " + ", ".join(
            f"{k['nccl']['collective']} {k['nccl']['algorithm']}/{k['nccl']['protocol']}"
            + (f" {k['nccl']['dtype']}" if k["nccl"]["dtype"] else "") + f" on device {k['device']}" for k in nccl[:4])
            + "; guess: a collective some rank never joined")
    names = ", ".join(f"{short_kernel(k['name'], 60)} {k['grid_dim']}x{k['block_dim']} on device {k['device']} "
                      f"({k['status']})" for k in kernels[:3])
    summary = f"cuda-gdb: {len(kernels)} kernel(s) resident during the hang: {names}"
    return {"kind": "cuda-gdb-kernels", "kernels": kernels, "summary": summary, "findings": [summary] + findings}


def _cg_device_function(text: str, out: dict) -> None:
    """A stop in a __device__ function with arguments: "0x... in copyParticle::operator() (this=...,
    ...)" then "    at File.H:66"; the kernel is the frame of ``bt`` with the launch <<<grid,block>>>."""
    f = _CG_FN.search(text)
    if f:
        out["function"] = f.group(2).strip()
        out.setdefault("pc", f.group(1).lower())
        a = _CG_AT.search(text[f.end():f.end() + 400])
        if a:
            out.setdefault("source", f"{a.group(1)}:{a.group(2)}")
    k = _CG_LAUNCH.search(text)
    if k:
        out["kernel"] = k.group(1).strip()
        out["grid_dim"], out["block_dim"] = f"({k.group(2)})", f"({k.group(3)})"
        if (out.get("function") or "").startswith(out["kernel"] + "<<<"):
            del out["function"]  # the stop is in the kernel itself, not in a __device__ function


def _cg_focus_frame(text: str, out: dict) -> None:
    """cuda-gdb's focus line and frame #0: kernel, launch dimensions, PC and source line."""
    m = _CG_FOCUS.search(text)
    if m:
        out["focus"] = {"kernel": int(m.group(1)), "grid": int(m.group(2)), "block": f"({m.group(3)})",
                        "thread": f"({m.group(4)})", "device": int(m.group(5)), "sm": int(m.group(6)),
                        "warp": int(m.group(7)), "lane": int(m.group(8))}
    m = _CG_FRAME.search(text)
    if m:
        fn = (m.group(2) or m.group(5) or "").strip()
        out["kernel"] = fn or None
        dims = re.match(r"\(([^)]*)\),\(([^)]*)\)$", (m.group(3) or m.group(6) or "").strip())
        if dims:  # the launch configuration cuda-gdb prints as <<<(grid),(block)>>>
            out["grid_dim"], out["block_dim"] = f"({dims.group(1)})", f"({dims.group(2)})"
        pc = m.group(1) or m.group(4)
        if pc:
            out["pc"] = pc.lower()
        tail = text[m.end():m.end() + 2000]
        a = _CG_AT.search(tail) or _CG_AT.search("\n " + m.group(0).split(" () ", 1)[-1]) \
            if " () at " in m.group(0) else _CG_AT.search(tail)
        if a:
            out["source"] = f"{a.group(1)}:{a.group(2)}" + (f" (inlined from {a.group(4)})" if a.group(4) else "")


def _cg_summary(out: dict) -> str:
    where = out.get("kernel") or out.get("function")
    focus = out.get("focus")
    return ("cuda-gdb: " + (out.get("exception") or "core dump opened")
            + (f" in {short_kernel(where)}" if where else "")
            + (f" ({out['function']})" if out.get("function") and out.get("kernel") else "")
            + (f" at {out['source']}" if out.get("source") else "")
            + (f", pc {out['errorpc']}" if out.get("errorpc") else "")
            + (f"; block {focus['block']} thread {focus['thread']} lane {focus['lane']}" if focus else "")
            + (f"; illegal access to {out['address']}" if out.get("address") else ""))


def parse_cuda_gdb(text: str | bytes) -> dict | None:
    """cuda-gdb output (live or ``target cudacore``): exception, PC, focus, frame, ``info symbol``."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    exc = _CG_EXC.search(text) or _CG_SIGNAL.search(text)
    # "^(.+?) + N in section" under re.M costs seconds on a big log: look for its literal first
    sym = _CG_SYMBOL.search(text) if " in section .text." in text else None
    if not exc and not sym and "cudacore" not in text:
        return _cuda_gdb_warps(text) or _cuda_gdb_stop(text)
    out: dict = {"kind": "cuda-gdb"}
    if exc:
        out["exception"] = exc.group(exc.lastindex or 1).strip()
    m = _CG_PC.search(text) or _CG_PRINT_PC.search(text)
    if m:
        out["errorpc"] = m.group(1).lower()
    _cg_focus_frame(text, out)
    if sym:
        out["symbol"] = {"function": sym.group(1), "offset": int(sym.group(2)), "section": sym.group(3),
                         "cubin": sym.group(4)}
        out.setdefault("kernel", sym.group(1))
    if not out.get("kernel"):
        _cg_device_function(text, out)
    m = _CG_PC_SRC.search(text)
    if m:
        out.setdefault("source", m.group(1))
    stops = _cuda_gdb_stops(text) if exc else []
    if stops:
        first = stops[0]
        if not out.get("kernel") and not out.get("function") and first.get("function"):
            out["kernel"] = first["function"]
        out.setdefault("pc", first.get("pc"))
        if first.get("address"):
            out["address"] = first["address"]
    if len(stops) > 1:
        out["stops"] = stops
    out["meaning"] = CUDA_EXCEPTION_MEANINGS.get(out.get("exception") or "")
    out["summary"] = _cg_summary(out)
    if len(stops) > 1:
        out["summary"] += f"; {len(stops)} stops: " + "; ".join(_cg_stop_text(st) for st in stops[:4])
    return out


_CG_STOP_SIGNAL = re.compile(r"received signal CUDA_EXCEPTION_(\d+), ([A-Z][\w -]*?[A-Za-z])\.")
_CG_MEMCHECK = re.compile(r"Illegal access to address \((@\w+)\)(0x[0-9a-fA-F]+) detected")
_CG_STOP_FRAME = re.compile(r"^(?:#0\s+)?(0x[0-9a-fA-F]+) in (?:void )?(.+?)(?: \(.*|<<<.*)?$")  # (on a stripped line)


def _cuda_gdb_stops(text: str) -> list[dict]:
    """Every exception stop of a cuda-gdb session ("Program received signal CUDA_EXCEPTION_N, X."): a
    rerun with other settings (``set cuda memcheck on``, a -g build) stops again, often more precisely:
    the exception, the memcheck address and error PC printed above it, the focus and the frame below."""
    lines = text.splitlines()
    stops: list[dict] = []
    for i, line in enumerate(lines):
        m = _CG_STOP_SIGNAL.search(line)
        if not m:
            continue
        st: dict = {"exception": m.group(2)}
        for above in lines[max(0, i - 4):i]:
            if (a := _CG_MEMCHECK.search(above)) is not None:
                st["address"] = f"({a.group(1)}){a.group(2)}"
            if (p := _CG_PC.search(above)) is not None:
                st["errorpc"] = p.group(1).lower()
        for below in lines[i + 1:i + 4]:
            if (f := _CG_FOCUS.search(below)) is not None:
                st["block"], st["thread"], st["sm"], st["warp"] = f"({f.group(3)})", f"({f.group(4)})", \
                    int(f.group(6)), int(f.group(7))
                continue
            if (fr := _CG_STOP_FRAME.match(below.strip())) is not None:
                st["pc"] = fr.group(1).lower()
                st["function"] = fr.group(2).strip()
                break
        stops.append(st)
        if len(stops) >= 16:
            break
    return stops


def _cg_stop_text(st: dict) -> str:
    return (st["exception"] + (f" in {short_kernel(st['function'], 60)}" if st.get("function") else "")
            + (f" at pc {st.get('errorpc') or st['pc']}" if st.get("errorpc") or st.get("pc") else "")
            + (f", address {st['address']}" if st.get("address") else ""))


# NCCL device kernels name what they run: ncclFunction_AllGather_RING_SIMPLE_Sum_int8_t (NCCL 2.x),
# ncclDevKernel_AllReduce_Sum_f32_RING_LL (2.19+), ncclKernel_AllReduce_RING_LL_Sum_float (older).
_NCCL_KERNEL = re.compile(r"nccl(?:Function|Kernel)_(\w+?)_(RING|TREE|COLLNET\w*|NVLS\w*|PAT)_(LL128|LL|SIMPLE)_(\w+?)_(\w+)"
                          r"|ncclDevKernel_(\w+?)(?:_(\w+?)_(\w+?))?_(RING|TREE|COLLNET\w*|NVLS\w*|PAT)_(LL128|LL|SIMPLE)")
_CG_STOP_AT = re.compile(r" at (\S+?):(\d+)(?: in (\S+) inlined from (\S+))?\s*$")


def nccl_kernel_info(name: str | None) -> dict | None:
    """The collective, algorithm, protocol, reduction op and dtype an NCCL kernel's name spells."""
    m = _NCCL_KERNEL.search(name or "")
    if not m:
        return None
    if m.group(1):
        return {"collective": m.group(1), "algorithm": m.group(2), "protocol": m.group(3), "op": m.group(4),
                "dtype": m.group(5)}
    return {"collective": m.group(6), "op": m.group(7), "dtype": m.group(8), "algorithm": m.group(9),
            "protocol": m.group(10)}


def _cuda_gdb_stop(text: str) -> dict | None:
    """cuda-gdb stopped (attached to a hang, or at a breakpoint) without an exception: the focus
    and the frame printed after it — the kernel, its source line and, for an inlined device
    function, the function and where it was inlined from. An NCCL kernel says which collective it
    runs; one spinning in a wait is waiting for a peer rank."""
    m = _CG_FOCUS.search(text) if "CUDA kernel" in text else None
    if not m:
        return None
    out: dict = {"kind": "cuda-gdb", "focus": {"kernel": int(m.group(1)), "grid": int(m.group(2)),
                                               "block": f"({m.group(3)})", "thread": f"({m.group(4)})",
                                               "device": int(m.group(5)), "sm": int(m.group(6)),
                                               "warp": int(m.group(7)), "lane": int(m.group(8))}}
    after = [ln for ln in text[m.end():m.end() + 3000].splitlines() if ln.strip()][:3]
    frame = after[0].strip() if after else ""
    f = re.match(r"^(?:#0\s+)?(?:(0x[0-9a-fA-F]+) in )?([^\s(<][^(<]*?)(?:<<<\(([^)]*)\),\(([^)]*)\)>>>)?\s*\(", frame)
    if f:
        out["kernel"] = f.group(2).strip()
        if f.group(1):
            out["pc"] = f.group(1).lower()
        if f.group(3):
            out["grid_dim"], out["block_dim"] = f"({f.group(3)})", f"({f.group(4)})"
    a = _CG_STOP_AT.search(frame) or (_CG_STOP_AT.search(" " + after[1].strip()) if len(after) > 1 else None)
    if a:
        out["source"] = f"{a.group(1)}:{a.group(2)}"
        if a.group(3):
            fn = a.group(3)
            out["inlined"] = {"function": demangle([fn]).get(fn, fn), "from": a.group(4)}
    line = next((ln.strip() for ln in after[1:] if re.match(r"^\d+\s", ln.strip())), None)
    if line:
        out["line"] = line
    findings = []
    info = nccl_kernel_info(out.get("kernel"))
    if info:
        out["nccl"] = info
        where = " ".join(x for x in ((out.get("inlined") or {}).get("function"), out.get("line")) if x)
        if re.search(r"wait|connStep|StepPerSlice", where):
            findings.append(f"the NCCL {info['collective']} kernel ({info['algorithm']}/{info['protocol']}"
                            + (f", {info['dtype']}" if info["dtype"] else "") + ") spins waiting for a peer; guess: a rank did not launch the matching "
                            "collective (or launched another one) — compare the ranks' last collectives")
    fo = out["focus"]
    out["summary"] = ("cuda-gdb: stopped in " + (short_kernel(out.get("kernel")) or "a kernel")
                      + (f" at {out['source']}" if out.get("source") else "")
                      + (f" (inlined {short_kernel(out['inlined']['function'], 60)})" if out.get("inlined") else "")
                      + f"; device {fo['device']} sm {fo['sm']} warp {fo['warp']}, block {fo['block']} thread {fo['thread']}")
    out["findings"] = [out["summary"]] + findings
    return out


def _cuda_gdb_warps(text: str) -> dict | None:
    """A hang inspected warp by warp (``cuda device 0 sm 0 warp N lane 0`` after ``cuda kernel``):
    where each warp stands, and the warps cuda-gdb could not focus on (exited; a __syncthreads()
    the others wait at that they will never reach)."""
    if "Switching focus to CUDA kernel" not in text:
        return None  # (a C-level look: big logs are not walked line by line)
    warps: list[dict] = []
    missing: list[int] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _CG_FOCUS.search(line)
        if m:
            nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
            w = _CG_WHERE.match(nxt)
            at = (w.group(2) or f"line {w.group(3)}: {w.group(4).strip()}") if w else None
            warps.append({"block": f"({m.group(3)})", "thread": f"({m.group(4)})", "warp": int(m.group(7)),
                          "lane": int(m.group(8)), "at": at})
            continue
        c = _CG_WARP_CMD.search(line)
        if c and i + 1 < len(lines) and "Request cannot be satisfied" in lines[i + 1]:
            missing.append(int(c.group(1)))
    if len(warps) < 2 and not missing:
        return None
    places: dict[str, list[int]] = {}
    for w in warps:
        places.setdefault(w["at"] or "?", []).append(w["warp"])
    text_places = "; ".join(f"{at} (warp {', '.join(map(str, ws))})" for at, ws in places.items())
    out = {"kind": "cuda-gdb", "warps": warps, "missing_warps": missing,
           "summary": f"cuda-gdb: {len(warps)} warps inspected, stopped at {len(places)} place(s): {text_places}"
                      + (f"; warps {', '.join(map(str, missing))} no longer exist (exited before a barrier?)"
                         if missing else "")}
    return out



_NVD_FILE = re.compile(r'^\s*//## File "([^"]+)", line (\d+)(?: inlined at "([^"]+)", line (\d+))?')
_NVD_FUNC = re.compile(r"^\s*\.text\.(\S+?):\s*$|^\s*\.section\s+\.text\.(\S+?),")


def parse_nvdisasm_chain(text: str, pc: str) -> dict:
    """The source chain of ``pc`` in ``nvdisasm -ndf -c -gi`` output: the ``//## File "...", line N
    inlined at "...", line M`` block nearest above the instruction ``/*<pc>*/``.

    Returns {"matches": n, "chains": [[{"file", "line", "inlined_at"?}, ...], ...], "functions": [...],
    "line_info": bool}. More than one match means the PC occurs in several functions of the cubin
    (pick one with ``cuobjdump -elf`` and ``nvdisasm -fun``)."""
    want = int(pc, 16)
    lines = text.splitlines()
    line_info = any("//## File" in s for s in lines[:100000])
    out = {"matches": 0, "chains": [], "functions": [], "line_info": line_info}
    func = None
    addr_rx = re.compile(r"/\*([0-9a-fA-F]{4,})\*/")
    for i, s in enumerate(lines):
        fm = _NVD_FUNC.match(s)
        if fm:
            func = fm.group(1) or fm.group(2)
            continue
        m = addr_rx.search(s)
        if not m or int(m.group(1), 16) != want:
            continue
        out["matches"] += 1
        out["functions"].append(func)
        chain: list[dict] = []
        k = i - 1
        while k >= 0 and k > i - 400:
            t = lines[k]
            fm2 = _NVD_FILE.match(t)
            if fm2:
                # the block of consecutive //## lines right above the nearest label/instructions
                block = []
                j = k
                while j >= 0 and _NVD_FILE.match(lines[j]):
                    block.append(lines[j])
                    j -= 1
                for b in reversed(block):
                    g = _NVD_FILE.match(b)
                    item = {"file": g.group(1), "line": int(g.group(2))}
                    if g.group(3):
                        item["inlined_at"] = f"{g.group(3)}:{g.group(4)}"
                    chain.append(item)
                break
            if _NVD_FUNC.match(t):
                break
            k -= 1
        out["chains"].append(chain)
    return out


def parse_cuobjdump_fun(text: str, section: str) -> str | None:
    """The function index ``nvdisasm -fun`` takes for ``section`` (e.g. .text._ZN2at6native...), from
    ``cuobjdump -elf``'s section table (the number right before the section name on its PROGBITS row)."""
    for line in text.splitlines():
        toks = line.split()
        if len(toks) >= 2 and toks[-1] == section and "PROGBITS" in toks:
            return toks[-2]
    return None


def format_chain(chain: list[dict]) -> str:
    """'IndexKernel.cu:203 inlined at IndexKernel.cu:118 <- ...' innermost first, as nvdisasm prints."""
    return " <- ".join(f"{c['file']}:{c['line']}" + (f" (inlined at {c['inlined_at']})" if c.get("inlined_at") else "")
                       for c in chain)


def _run_tool(argv: list[str], timeout: float, cwd: str | None = None) -> tuple[int | None, str]:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=timeout,
                           stdin=subprocess.DEVNULL, cwd=cwd)
    except subprocess.TimeoutExpired:
        return None, f"{Path(argv[0]).name} did not finish within {timeout:g}s"
    except OSError as e:
        return None, f"{argv[0]}: {e}"
    return p.returncode, p.stdout + p.stderr


def _core_without_errorpc(out: dict, g: dict, core: str, text: str) -> dict:
    """A core dump with no exception (a hang dump the user triggered): no $errorpc, but cuda-gdb's
    focus frame still names the kernel and, with line info, where it stands."""
    if g.get("kernel"):
        kernel = demangle([g["kernel"]]).get(g["kernel"], g["kernel"])  # exact case: c++filt reads it
        out["kernel"] = kernel
        out["status"] = "stopped"
        where = g.get("source")
        if where and g.get("inlined_from"):
            where += f" (inlined at {g['inlined_from']})"
        out["summary"] = (f"CUDA core dump {core} (no exception: a hang dump): kernel {short_kernel(kernel)} is stuck "
                          + (f"at {where}" if where else f"at pc {g.get('pc') or '?'} (no line info: rebuild with -lineinfo)")
                          + (f"; focus sm {g['focus'].get('sm')} warp {g['focus'].get('warp')}" if g.get("focus") else ""))
        return out
    out["status"] = "no-errorpc"
    out["summary"] = (f"CUDA core dump {core}: cuda-gdb gave no faulting PC/symbol "
                      f"({(text.strip().splitlines() or ['no output'])[-1][:160]})")
    return out


def cuda_core_chain(core: str | Path, *, timeout: float = 120.0, path: str | None = None,
                    cwd: str | None = None) -> dict:
    """Automate vLLM's core-dump post: target cudacore -> info symbol $errorpc -> nvdisasm -gi (and
    cuobjdump -elf / -fun on a PC collision) -> the inline chain of the faulting PC. Every step that
    cannot run says why (tool missing, no line info, PC not found)."""
    core = str(core)
    out: dict = {"kind": "cuda-core-chain", "core": core, "steps": []}
    gdb = shutil.which("cuda-gdb", path=path)
    if not gdb:
        out["status"] = "missing-tool"
        out["summary"] = (f"CUDA core dump {core}: cuda-gdb is not installed, so the faulting PC was not resolved; "
                          f"run: cuda-gdb -batch -ex 'target cudacore {core}' -ex 'info symbol $errorpc'")
        return out
    rc, text = _run_tool([gdb, "-batch", "-nx", "-ex", "set pagination off", "-ex", f"target cudacore {core}",
                          "-ex", "info symbol $errorpc", "-ex", "print $errorpc", "-ex", "bt 4"], timeout, cwd)
    out["steps"].append({"cmd": "cuda-gdb target cudacore / info symbol $errorpc", "rc": rc})
    g = parse_cuda_gdb(text) or {}
    out.update({k: g[k] for k in ("exception", "errorpc", "kernel", "focus", "source", "symbol", "meaning") if k in g})
    if not g.get("errorpc") or not g.get("symbol"):
        return _core_without_errorpc(out, g, core, text)
    pc, cubin = g["errorpc"], g["symbol"]["cubin"]
    nvd = shutil.which("nvdisasm", path=path)
    if not nvd:
        out["status"] = "missing-tool"
        out["summary"] = (f"{g.get('exception') or 'exception'} in {short_kernel(g['kernel'])} at pc {pc}; nvdisasm is "
                          f"not installed, so the source line was not resolved (nvdisasm -ndf -c -gi {cubin})")
        return out
    if not Path(cubin).exists():
        out["status"] = "no-cubin"
        out["summary"] = f"cuda-gdb named cubin {cubin}, which no longer exists (cuda-gdb removes it on exit)"
        return out
    rc, listing = _run_tool([nvd, "-ndf", "-c", "-gi", cubin], timeout, cwd)
    out["steps"].append({"cmd": f"nvdisasm -ndf -c -gi {cubin}", "rc": rc})
    res = parse_nvdisasm_chain(listing, pc)
    if res["matches"] > 1:
        obj = shutil.which("cuobjdump", path=path)
        fun = None
        if obj:
            rc, elf = _run_tool([obj, "-elf", cubin], timeout, cwd)
            out["steps"].append({"cmd": f"cuobjdump -elf {cubin}", "rc": rc})
            fun = parse_cuobjdump_fun(elf, g["symbol"]["section"])
        if fun:
            rc, listing = _run_tool([nvd, "-ndf", "-c", "-gi", "-fun", fun, cubin], timeout, cwd)
            out["steps"].append({"cmd": f"nvdisasm -ndf -c -gi -fun {fun} {cubin}", "rc": rc})
            res = parse_nvdisasm_chain(listing, pc)
            out["function_index"] = fun
        else:
            out["ambiguous"] = True
            out["note"] = (f"pc {pc} occurs in {res['matches']} functions of the cubin and "
                           + ("cuobjdump is not installed" if not obj else "cuobjdump did not list the section")
                           + "; the chains of all of them are listed")
    out["matches"] = res["matches"]
    out["line_info"] = res["line_info"]
    chains = [c for c in res["chains"] if c]
    if res["matches"] == 0:
        out["status"] = "pc-not-found"
        out["summary"] = f"pc {pc} is not in nvdisasm's listing of {cubin}"
    elif not res["line_info"] or not chains:
        out["status"] = "no-line-info"
        out["summary"] = (f"{g.get('exception') or 'exception'} in {short_kernel(g['kernel'])} at pc {pc}: the cubin has "
                          "no line info, so no source line can be given; rebuild with -lineinfo (export "
                          "NVCC_PREPEND_FLAGS='-lineinfo', and bypass ccache, which may ignore it)")
    else:
        out["status"] = "ok"
        out["chain"] = chains[0]
        if len(chains) > 1:
            out["other_chains"] = chains[1:]
        out["summary"] = (f"{g.get('exception') or 'exception'} in {short_kernel(g['kernel'])} at pc {pc}: "
                          f"{format_chain(chains[0])}")
    return out
