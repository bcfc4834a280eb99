"""rocm-debug-agent wave dumps (ROCm 2 to 7.2 forms): the stopped waves, their stop reasons and
what they mean, the faulting instruction, the code object and the file --save-code-objects wrote for
it, the framework op a kernel implements, the faulting lanes' registers and the race-victim caution.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, Sequence

from dbglog.diagnose.kernels import short_kernel


# --- rocm-debug-agent -------------------------------------------------------------------------

# What each wave stop reason means (rocm-dbgapi stop reasons, rocr_debug_agent stop_reason_util.cpp,
# and the ROCm debug-agent playbook).
STOP_REASONS = {
    "ASSERT_TRAP": "the wave executed s_trap 2: a device-side assert (CUDA_KERNEL_ASSERT / __builtin_trap) failed; "
                   "in PyTorch indexing kernels that is the bound check 0 <= idx < size(dim)",
    "MEMORY_VIOLATION": "a load or store touched memory it may not access (out of bounds, freed, or unmapped); "
                        "the instruction at the PC (or just before it) is the access",
    "ADDRESS_ERROR": "a memory instruction used an invalid address (aperture or alignment)",
    "ILLEGAL_INSTRUCTION": "the wave met an instruction the GPU cannot execute: a corrupted code object "
                           "(an allocator stomping on the kernel binary) or code built for another gfx target",
    "INVALID_OPCODE": "corrupted code object: usually an allocator stomp on the kernel binary (rare)",
    "ECC_ERROR": "an uncorrectable ECC error: hardware, not the code",
    "FATAL_HALT": "the wave was halted by a fatal error",
    "FP_DIVIDE_BY_0": "floating-point division by zero (trapping enabled)",
    "FP_OVERFLOW": "floating-point overflow (trapping enabled)",
    "FP_UNDERFLOW": "floating-point underflow (trapping enabled)",
    "FP_INEXACT": "inexact floating-point result (trapping enabled)",
    "FP_INVALID_OPERATION": "invalid floating-point operation (trapping enabled)",
    "FP_INPUT_DENORMAL": "denormal floating-point input (trapping enabled)",
    "INT_DIVIDE_BY_0": "integer division by zero",
    "DEBUG_TRAP": "a debug trap (s_trap 3): not an error unless the agent was told to report it",
    "TRAP": "a trap instruction",
    "BREAKPOINT": "a debugger breakpoint",
    "WATCHPOINT": "a debugger watchpoint",
    "SINGLE_STEP": "single-stepping",
    "NONE": "stopped for the dump (e.g. SIGQUIT), not because of an error",
}

# Kernel-name fragment -> the framework op that launches it (ROCm debug-agent playbook, PyTorch
# ATen kernel names). Most specific first; extend with [[kernel_op]] fragment/op in config.toml.
KERNEL_OPS: tuple[tuple[str, str], ...] = (
    ("index_copy_kernel_impl", "Tensor.index_copy_(dim, index, source)"),
    ("index_put_kernel_impl", "Tensor.index_put_ / tensor[idx] = value"),
    ("index_fill_kernel", "Tensor.index_fill_(dim, index, value)"),
    ("index_add_kernel", "Tensor.index_add_(dim, index, source)"),
    ("indexSelectSmallIndex", "torch.index_select / embedding lookup"),
    ("indexSelectLargeIndex", "torch.index_select / embedding lookup"),
    ("index_select", "torch.index_select"),
    ("embedding_backward", "nn.Embedding backward"),
    ("scatter_gather_elementwise_kernel", "Tensor.scatter_ / Tensor.gather"),
    ("scatter_kernel", "Tensor.scatter_(dim, index, src)"),
    ("gather_kernel", "Tensor.gather(dim, index)"),
    ("index_kernel_impl", "advanced-indexing read tensor[idx]"),
    ("nll_loss", "F.nll_loss / F.cross_entropy (a target out of [0, classes))"),
    ("ClassNLLCriterion", "F.nll_loss / F.cross_entropy (a target out of [0, classes))"),
    ("cunn_SoftMaxForward", "softmax"),
    ("reduce_kernel", "a reduction (sum/mean/max)"),
    ("vectorized_elementwise_kernel", "an elementwise op"),
    ("unrolled_elementwise_kernel", "an elementwise op"),
)

_OPAQUE_DTYPES = {"1": "uint8/int8/bool", "2": "float16/bfloat16/int16", "4": "int32/float32", "8": "int64/float64",
                  "16": "complex128"}

_WAVE = re.compile(r"^\s*wave_(\d+): pc=(0x[0-9a-fA-F]+)")
_WAVE_STATE = re.compile(r"\((stopped|running)(?:, reason: ([A-Z_0-9|]+))?\)\s*$")
_ENTRY = re.compile(r"kernel_code_entry=(0x[0-9a-fA-F]+)(?: <)?")
_DISASM = re.compile(r"^\s*Disassembly(?: for function (.+?))?:\s*$")
_CODE_OBJECT = re.compile(r"^\s*code object: (\S+)\s*$")
_LOADED = re.compile(r"^\s*loaded at: \[(0x[0-9a-fA-F]+)[-,] ?(0x[0-9a-fA-F]+)\]")
_ARROW = re.compile(r"^\s*=>\s+(0x[0-9a-fA-F]+)(?: <([+-]\d+)>)?:\s+(.*?)\s*$")
_SOURCE_LINE = re.compile(r"^(\d+)\s{2,}(.*)$")
_QUEUE_ERROR = re.compile(r"Queue error \((HSA_STATUS_\w+): ([^)]*)\)")
_SYSTEM_EVENT = re.compile(r"System event \((HSA_AMD_GPU_\w+): ([^)]*)\)")
_FAULTING_PAGE = re.compile(r"Faulting page: (0x[0-9a-fA-F]+)")
_OLD_NODE_FAULT = re.compile(r"Memory access fault at GPU Node: (\d+)")
_OLD_XNACK = re.compile(r"(\d+) wavefront\(s\) found in XNACK error state @PC: (0x[0-9a-fA-F]+)")
_OLD_FAULT = re.compile(r"Memory access fault by GPU agent: (.+)|Address: (0x[0-9a-fA-Fx]+) \(([^)]*)\)")
_FAULT_LINE = re.compile(r"(?:Memory access fault by GPU node-(\d+)(?: \(Agent handle: \S+\))? on address (\S+?)"
                         r"(?:\(may not be exact address\))?\.? Reason: ([^\n]*?)\.?\s*$"
                         r"|(?i:memory access fault by GPU) (\d+) \(agent \S+\) at virtual address (\S+?)\.? "
                         r"Reasons?: ([^\n]*))")


def saved_code_object_name(uri: str) -> str:
    """The file name rocm-debug-agent --save-code-objects gives a code object URI: the URI with
    each of ':/#?&=' replaced by '_' (rocr_debug_agent code_object.cpp)."""
    return re.sub(r"[:/#?&=]", "_", uri)


def find_saved_code_object(uri: str, dirs: Iterable[str | Path]) -> str | None:
    """The saved file for ``uri`` in ``dirs`` (exact name, or with the 'N_' load-order prefix some
    versions add, e.g. 7_memory___2188702_offset_0x546c3060_size_4026672)."""
    name = saved_code_object_name(uri)
    for d in dirs:
        d = Path(d)
        if not d.is_dir():
            continue
        exact = d / name
        if exact.is_file():
            return str(exact)
        try:
            for f in sorted(d.iterdir()):
                if f.is_file() and f.name.endswith("_" + name) and re.fullmatch(r"\d+_", f.name[: -len(name)]):
                    return str(f)
        except OSError:
            continue
    return None


def kernel_op(kernel: str | None, table: Sequence[tuple[str, str]] = ()) -> dict | None:
    """The framework op a kernel implements, from its (demangled) name; user entries first."""
    if not kernel:
        return None
    for frag, op in tuple(table) + KERNEL_OPS:
        if frag and frag in kernel:
            out = {"fragment": frag, "op": op}
            m = re.search(r"OpaqueType<(\d+)\s*>", kernel)
            if m:
                out["dtype_bytes"] = int(m.group(1))
                out["dtype"] = f"a {m.group(1)}-byte dtype ({_OPAQUE_DTYPES.get(m.group(1), '?')})"
            return out
    return None






def _wave_kernel(lines: list[str], i: int) -> tuple[str | None, str | None, str | None, int]:
    """The wave header may span lines (a long demangled name wrapped by whoever pasted it): join
    until "(stopped" / "(running"; return (kernel, state, reason, last line index)."""
    text = lines[i]
    j = i
    while not _WAVE_STATE.search(text) and j + 1 < len(lines) and j - i < 60:
        nxt = lines[j + 1]
        if _WAVE.match(nxt) or not nxt.strip():
            break
        j += 1
        text += " " + nxt.strip()
    st = _WAVE_STATE.search(text)
    kernel = None
    m = _ENTRY.search(text)
    if m:
        rest = text[m.end():]
        # name runs to the ">" that closes "<": balance the template brackets
        depth, end = 1, None
        for k, ch in enumerate(rest):
            if ch == "<":
                depth += 1
            elif ch == ">":
                depth -= 1
                if depth == 0:
                    end = k
                    break
        if end is not None:
            kernel = re.sub(r"\s+", " ", rest[:end]).strip()
            if j > i:  # re-joined from several lines: drop the wrapping's spaces inside brackets
                kernel = re.sub(r"(?<=[<(]) | (?=[>)])", "", kernel)
    return kernel, (st.group(1) if st else None), (st.group(2) if st else None), j


def _read_disasm(lines: list[str], i: int, function: str) -> tuple[dict, int]:
    """A "Disassembly for function F:" block: code object, load range, the PC's instruction and
    the source lines printed above it; returns the record and the index after the block."""
    d = {"function": function, "code_object": None, "loaded_at": None, "pc": None, "instruction": None,
         "source": []}
    k = i + 1
    last_file = None
    while k < len(lines) and k - i < 400:
        s = lines[k]
        if s.strip().startswith("End of disassembly") or _WAVE.match(s) or _DISASM.match(s):
            break
        if (mm := _CODE_OBJECT.match(s)) is not None:
            d["code_object"] = mm.group(1)
        if (mm := _LOADED.match(s)) is not None:
            d["loaded_at"] = [mm.group(1).lower(), mm.group(2).lower()]
        if (mm := _ARROW.match(s)) is not None:
            d["pc"], d["instruction"] = mm.group(1).lower(), mm.group(3)
            if mm.group(2):
                d["offset"] = int(mm.group(2))
            if d["source"]:
                d["source_at_pc"] = d["source"][-1]
        if s.rstrip().endswith(":") and "/" in s and not s.startswith(" "):
            last_file = s.rstrip()[:-1]
        if (mm := _SOURCE_LINE.match(s)) is not None and last_file:
            d["source"].append(f"{last_file}:{mm.group(1)}: {mm.group(2).strip()}")
        k += 1
    return d, k


def _faulting_groups(waves: list[dict], disasms: list[dict], save_dirs, ops) -> list[dict]:
    """Waves stopped for an error name the faulting kernel(s): grouped by (kernel, reason, PC), each
    with its disassembly's code object, instruction and source line, and what its reason means."""
    groups: dict[tuple, dict] = {}
    for w in waves:
        key = (w["kernel"], w["reason"], w["pc"])
        g = groups.setdefault(key, {"kernel": w["kernel"], "reason": w["reason"], "pc": w["pc"], "waves": 0})
        g["waves"] += w.get("count", 1)
        g.setdefault("_wave", w)  # the first wave's registers stand for the group's
    faulting = sorted(groups.values(), key=lambda g: (-_severity(g["reason"]), -g["waves"]))
    for g in faulting:
        d = _disasm_for(g["pc"], disasms)
        if d:
            g["kernel"] = g["kernel"] or _strip_signature_type(d["function"])
            g["code_object"], g["loaded_at"] = d["code_object"], d.get("loaded_at")
            if d.get("instruction") and d.get("pc") == g["pc"]:
                g["instruction"] = d["instruction"]
            if d.get("source_at_pc"):
                g["source"] = d["source_at_pc"]
            if d["code_object"]:
                g["code_object_file"] = find_saved_code_object(d["code_object"], save_dirs)
        lanes = faulting_lanes(g.pop("_wave"), g.get("instruction"))
        if lanes:
            g["lanes"] = lanes
        reasons = [r for r in (g["reason"] or "").split("|") if r]
        g["meaning"] = "; ".join(STOP_REASONS.get(r, "see the rocm-dbgapi stop reasons") for r in reasons) or None
        g["op"] = kernel_op(g["kernel"], ops)
    return faulting


def _fault_facts(lines: list[str], i: int, event: dict | None, fault: dict | None,
                 waves: list[dict]) -> tuple[dict | None, dict | None]:
    """The queue error / system event, the faulting page and node of one line (and the old XNACK
    summary, which stands for waves)."""
    line = lines[i]
    for rx, key in ((_QUEUE_ERROR, "queue_error"), (_SYSTEM_EVENT, "system_event")):
        mm = rx.search(line)
        if mm and event is None:
            event = {"kind": key, "status": mm.group(1), "text": mm.group(2).strip()}
    if (mm := _FAULTING_PAGE.search(line)) is not None:
        fault = dict(fault or {}, address=mm.group(1).lower())
    if (mm := _FAULT_LINE.search(line)) is not None:
        g = mm.groups()
        fault = dict(fault or {}, node=g[0] or g[3], address=(g[1] or g[4] or "").lower() or None,
                     reason=(g[2] or g[5] or "").strip() or None)
    if (mm := _OLD_NODE_FAULT.search(line)) is not None:
        # ROCm <= 2.x agent: "Memory access fault at GPU Node: 2" then "Address: 0x... (reasons;)"
        fault = dict(fault or {}, node=mm.group(1))
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        a = re.search(r"Address: (0x[0-9a-fA-Fx]+) \(([^)]*)\)", nxt)
        if a:
            fault.update(address=a.group(1).lower(),
                         reason="; ".join(r.strip() for r in a.group(2).split(";") if r.strip()) or None)
    if (mm := _OLD_XNACK.search(line)) is not None:
        waves.append({"wave": None, "pc": mm.group(2).lower(), "kernel": None, "state": "stopped",
                      "reason": "MEMORY_VIOLATION", "count": int(mm.group(1))})
    return event, fault


# The agent prints a vector register on one line, lane by lane: "v0: [0] 00001000 [1] 00001004 ..."
# and the exec mask among the system registers ("exec: 0000000000000001": lane 0 active).
_VREG = re.compile(r"^\s*(v\d+): (\[0\] [0-9a-f]+(?: \[\d+\] [0-9a-f]+)*)\s*$")
_LANE = re.compile(r"\[(\d+)\] ([0-9a-f]+)")
_EXEC = re.compile(r"(?<![\w])exec: ([0-9a-f]+)")
_OPERAND_REGS = re.compile(r"\bv\[(\d+):(\d+)\]|\bv(\d+)\b")


def _wave_register(line: str, wave: dict) -> bool:
    """A register line of the wave just read (its vector registers and exec mask); False if not one."""
    if (m := _VREG.match(line)) is not None:
        wave.setdefault("vregs", {})[m.group(1)] = [v for _, v in _LANE.findall(m.group(2))]
        return True
    if (m := _EXEC.search(line)) is not None and "exec" not in wave:
        wave["exec"] = int(m.group(1), 16)
    return False


def faulting_lanes(wave: dict, instruction: str | None, limit: int = 4) -> list[dict]:
    """The active lanes' values of the registers the faulting instruction names (``v[0:1]`` is a
    64-bit address: low then high half), the first ``limit`` active lanes."""
    vregs, exec_mask = wave.get("vregs") or {}, wave.get("exec")
    if not vregs or not instruction:
        return []
    regs: list[tuple[str, ...]] = []
    for lo, hi, one in _OPERAND_REGS.findall(instruction.split(";")[0]):
        regs.append(tuple(f"v{n}" for n in range(int(lo), int(hi) + 1)) if lo else (f"v{one}",))
    lanes = [n for n in range(len(next(iter(vregs.values())))) if exec_mask is None or exec_mask >> n & 1]
    out = []
    for n in lanes[:limit]:
        lane: dict = {"lane": n}
        for group in regs:
            vals = [vregs[r][n] for r in group if r in vregs and n < len(vregs[r])]
            if len(vals) != len(group):
                continue
            name = group[0] if len(group) == 1 else f"v[{group[0][1:]}:{group[-1][1:]}]"
            lane[name] = "0x" + "".join(reversed(vals)) if len(group) == 2 else "0x" + vals[0]
        if len(lane) > 1:
            out.append(lane)
    return out


_RACE_VICTIM_REASONS = {"MEMORY_VIOLATION", "ADDRESS_ERROR", "APERTURE_VIOLATION", "ILLEGAL_INSTRUCTION"}


def parse_debug_agent(text: str | bytes, *, save_dirs: Iterable[str | Path] = (),
                      ops: Sequence[tuple[str, str]] = ()) -> dict | None:
    """Facts from a rocm-debug-agent wave dump; None if the text has none."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    if "(stopped, reason: " not in text and "XNACK error state" not in text and "wave_" not in text \
            and "Memory access fault at GPU Node" not in text:
        return None
    lines = text.splitlines()
    waves: list[dict] = []
    disasms: list[dict] = []
    event = fault = None
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _WAVE.match(line)
        if m:
            kernel, state, reason, j = _wave_kernel(lines, i)
            waves.append({"wave": int(m.group(1)), "pc": m.group(2).lower(), "kernel": kernel, "state": state,
                          "reason": reason})
            i = j + 1
            continue
        m = _DISASM.match(line)
        if m:
            d, i = _read_disasm(lines, i, m.group(1))
            disasms.append(d)
            continue
        if waves and _wave_register(line, waves[-1]):
            i += 1
            continue
        event, fault = _fault_facts(lines, i, event, fault, waves)
        i += 1
    if not waves and not disasms:
        if not fault or "node" not in fault:
            return None
        out = {"kind": "rocm-debug-agent", "event": event, "fault": fault, "waves": 0, "faulting": [], "kernel": None,
               "reason": None, "pc": None, "op": None, "truncated": False}
        out["summary"] = (f"rocm-debug-agent: memory access fault on GPU node {fault['node']}"
                          + (f" at {fault['address']}" if fault.get("address") else "")
                          + (f" ({fault['reason']})" if fault.get("reason") else "")
                          + "; no wave state printed (the agent of this ROCm release names no kernel)")
        return out
    stopped = [w for w in waves if w.get("reason")]
    faulting = _faulting_groups(stopped or waves, disasms, save_dirs, ops)
    top = faulting[0] if faulting else {}
    if not top.get("kernel") and disasms:
        top["kernel"] = _strip_signature_type(disasms[0]["function"])
    out = {"kind": "rocm-debug-agent", "event": event, "fault": fault, "waves": sum(g["waves"] for g in faulting),
           "faulting": faulting[:8], "kernel": top.get("kernel"), "reason": top.get("reason"),
           "meaning": top.get("meaning"), "pc": top.get("pc"), "code_object": top.get("code_object"),
           "code_object_file": top.get("code_object_file"), "op": top.get("op"), "loaded_at": top.get("loaded_at"),
           "truncated": not any(d.get("pc") for d in disasms) and bool(disasms)}
    out["summary"] = _agent_summary(out)
    if top.get("lanes"):  # the address and index values the faulting instruction used, per active lane
        out["lanes"] = top["lanes"]
        out.setdefault("findings", []).append("faulting lanes (registers of `" + (top.get("instruction") or "?")
                                              + "`): " + "; ".join(", ".join(f"{k} {v}" for k, v in lane.items())
                                                                   for lane in top["lanes"]))
    _race_caution(out, waves)
    return out


def _race_caution(out: dict, waves: list[dict]) -> None:
    """The seeds' caution on the debug-agent path: the wave that faulted may have read an address or
    index another wave or kernel corrupted."""
    if any(set((w.get("reason") or "").split("|")) & _RACE_VICTIM_REASONS for w in waves):
        out["caution"] = ("the faulting PC may belong to the victim of a race, not its cause: another wave or "
                          "kernel may have written the address or index this one used; check with racecheck-style "
                          "tools or serialise kernels (AMD_SERIALIZE_KERNEL=3) before trusting the line")
        out.setdefault("findings", []).append("caution: " + out["caution"])


def _severity(reason: str | None) -> int:
    order = ["NONE", "SINGLE_STEP", "BREAKPOINT", "WATCHPOINT", "TRAP", "DEBUG_TRAP"]
    rs = [r for r in (reason or "").split("|") if r]
    return max((0 if r in order else 10 if r.startswith(("FP_", "INT_")) else 20 for r in rs), default=-1)


def _strip_signature_type(fn: str | None) -> str | None:
    return fn.strip() if fn else fn


def _disasm_for(pc: str | None, disasms: list[dict]) -> dict | None:
    if not disasms:
        return None
    if pc:
        p = int(pc, 16)
        for d in disasms:
            if d.get("pc") == pc:
                return d
        for d in disasms:
            if d.get("loaded_at"):
                lo, hi = (int(x, 16) for x in d["loaded_at"])
                if lo <= p < hi:
                    return d
    return disasms[0] if len(disasms) == 1 else None


def _agent_summary(e: dict) -> str:
    parts = [f"rocm-debug-agent: {e.get('reason') or 'wave dump'}"]
    if e.get("kernel"):
        parts.append(f"in {short_kernel(e['kernel'])}")
    if e.get("pc"):
        parts.append(f"at pc {e['pc']}")
    if e.get("op"):
        op = e["op"]["op"] + (f" on {e['op']['dtype']}" if e["op"].get("dtype") else "")
        parts.append(f"(= {op})")
    s = " ".join(parts)
    if e.get("waves"):
        s += f"; {e['waves']} wave(s)"
    if e.get("code_object_file"):
        s += f"; code object saved as {e['code_object_file']}"
    elif e.get("code_object"):
        s += f"; code object {e['code_object']}"
    return s
