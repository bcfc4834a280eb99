"""Evidence: structured facts read out of what GPU debuggers and logs print.

A signature names the failure; evidence says where it happened. The parsers here are pure
functions from text to plain dicts (JSON-ready), tested against the formats the tools document:

* rocm-debug-agent wave dumps (``wave_N: pc=... (stopped, reason: ASSERT_TRAP)``, ROCm 6 and the
  7.2 ``kernel_code_entry=<name>, kernargs=`` form, the old XNACK dump): the demangled kernel name,
  the stop reason and what it means, the PC and faulting instruction, the code object URI and the
  file ``--save-code-objects`` wrote for it, and the framework op the kernel implements (a table of
  kernel-name fragments, extensible with ``[[kernel_op]]`` in .dbglog/config.toml).
* rocgdb batch output: in-flight dispatches (``info dispatches``), queues whose write pointer is
  ahead of the read pointer (``info queues``), waves grouped by kernel and PC (``info threads``),
  all waves of a kernel at one PC (a barrier/spin wait), and the shared-workspace deadlock tell-tale
  (two or more ``_clean`` dispatches on different queues with a full ``B|Aa|Ra`` fence).
* CUDA core dumps: the exception, SM/warp, PC and kernel from the core-dump progress lines and from
  cuda-gdb; then, when cuda-gdb and nvdisasm are installed, the chain ``target cudacore`` ->
  ``info symbol $errorpc`` -> the extracted cubin -> ``nvdisasm -ndf -c -gi`` (with ``cuobjdump
  -elf`` and ``-fun`` when the PC appears in several functions) -> the full "file:line inlined at
  file:line" chain of the faulting PC, or a plain statement that line info is missing and why.
* compute-sanitizer / cuda-memcheck reports (memcheck, initcheck, racecheck; indented or prefixed as CI
  logs paste them, "Address" and the newer "Access at/to" wordings): per report the error, kernel and
  offset, thread and block, address, what is wrong with it and the nearest allocation.
* cuda-gdb stops in a __device__ function (the function, its source line, and the kernel of the
  ``bt`` frame with <<<grid,block>>>), and a hang inspected warp by warp (where each warp stands,
  and the warps that no longer exist).
* thread stacks (py-spy, gdb ``thread apply all bt``/``py-bt``, faulthandler), ``nvidia-smi -q``,
  ``rocm-smi``, kernel logs (Xid, amdgpu faults, ring timeouts, MES hangs), ``AMD_LOG_LEVEL`` traces,
  ``torch.cuda.memory_summary()``, ``TORCH_DISTRIBUTED_DEBUG=DETAIL`` collective mismatches, the
  ProcessGroupNCCL watchdog's work counters, ``NCCL_DEBUG=INFO`` rings and transports, and
  ``fr_trace`` reports.
* kernel-API logs (SGLang ``@debug_kernel_api``, FlashInfer): see signatures.parse_kernel_api_log.

Every kind is registered once in ``PARSERS`` (kind, the literal markers may_hold_dump looks for, the
parser); extract() runs them in that order.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Callable, Iterable, Sequence

from dbglog.util import config
from dbglog.util.errors import DbglogError

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


def _cut_params(s: str) -> str:
    """``re.sub(r"\\(.*\\)$", "", s)`` without its quadratic time on a name of many '(': from the first
    '(' of the last line to a ')' that ends the text."""
    if s.endswith(")"):
        j = s.find("(", s.rfind("\n") + 1)
        if j >= 0:
            return s[:j]
    return s


def short_kernel(name: str | None, width: int = 90) -> str | None:
    """A kernel name without template arguments and parameters, for one-line summaries."""
    if not name:
        return name
    # "Functor::operator()" keeps its own "()"; only the parameter list after it goes
    s = _cut_params(name.strip().replace("operator()", "operator\0")).replace("operator\0", "operator()") or name
    depth, out = 0, []
    for ch in s:
        if ch == "<":
            depth += 1
            if depth == 1:
                out.append("<…>")
            continue
        if ch == ">":
            depth = max(0, depth - 1)
            continue
        if depth == 0:
            out.append(ch)
    s = "".join(out).replace("void ", "", 1).strip()
    return s if len(s) <= width else s[: width - 1] + "…"


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


def demangle(names: Iterable[str], timeout: float = 5.0) -> dict[str, str]:
    """Itanium-mangled names -> demangled, with c++filt when it is installed (else unchanged)."""
    names = [n for n in dict.fromkeys(names) if n and n.startswith("_Z")]
    exe = shutil.which("cu++filt") or shutil.which("c++filt")
    if not names or not exe:
        return {}
    try:
        p = subprocess.run([exe], input="\n".join(names) + "\n", capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return {}
    out = p.stdout.splitlines()
    return {n: d for n, d in zip(names, out) if d and d != n}


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
    if sym:
        out["symbol"] = {"function": sym.group(1), "offset": int(sym.group(2)), "section": sym.group(3),
                         "cubin": sym.group(4)}
        out.setdefault("kernel", sym.group(1))
    if not out.get("kernel"):
        # A stop in a __device__ function with arguments: "0x... in copyParticle::operator() (this=...,
        # ...)" then "    at File.H:66"; the kernel is the frame of ``bt`` with the launch <<<grid,block>>>.
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
    where = out.get("kernel") or out.get("function")
    focus = out.get("focus")
    out["summary"] = ("cuda-gdb: " + (out.get("exception") or "core dump opened")
                      + (f" in {short_kernel(where)}" if where else "")
                      + (f" ({out['function']})" if out.get("function") and out.get("kernel") else "")
                      + (f" at {out['source']}" if out.get("source") else "")
                      + (f", pc {out['errorpc']}" if out.get("errorpc") else "")
                      + (f"; block {focus['block']} thread {focus['thread']} lane {focus['lane']}" if focus else "")
                      + (f"; illegal access to {out['address']}" if out.get("address") else ""))
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


# --- thread stacks of a hung process: dbglog/diagnose/threads.py (the splitter and the hang verdict)

from dbglog.diagnose.amdpc import amd_pc_line  # noqa: E402
from dbglog.diagnose.gpustate import parse_gpu_query  # noqa: E402
from dbglog.diagnose.threads import MAX_FRAMES, Frame, Thread, parse_thread_stacks, split_threads  # noqa: E402,F401


# --- node health: nvidia-smi -q, kernel log (dmesg) ------------------------------------------

_SMI_GPU = re.compile(r"^GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$")
_SMI_KV = re.compile(r"^(\s+)([^:]+?)\s*:\s*(.*?)\s*$")
_SMI_HEAD = re.compile(r"^(\s+)(\S[^:]*?)\s*$")


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
        key, val = kv.group(2), kv.group(3)
        where = " / ".join(p for _, p in path)
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
                continue
            bucket = "uncorrectable_volatile" if "Volatile" in where else "uncorrectable_aggregate"
            if key == "Total" and cur[bucket]:
                continue  # the old layout's Total repeats the parts already counted
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
    if not gpus:
        return None
    for g in gpus:
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
    bad = [g for g in gpus if g["problems"]]
    findings = [f"GPU {g['bus_id']}" + (f" ({g['product']})" if g.get("product") else "") + ": "
                + "; ".join(g["problems"]) for g in bad]
    summary = (f"nvidia-smi -q: {len(bad)} of {len(gpus)} GPU(s) unhealthy — {findings[0]}" if bad
               else f"nvidia-smi -q: {len(gpus)} GPU(s), no uncorrectable ECC, pending retirement/remapping or "
                    "active slowdown")
    return {"kind": "nvidia-smi", "gpus": gpus, "driver": driver, "summary": summary, "findings": findings}


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
    mes_seen: set[str] = set()
    for i, line in enumerate(lines):
        r = _KL_AMD_MES.search(line)
        if r:
            if r.group(2) not in mes_seen:  # it repeats per queue: once per message
                mes_seen.add(r.group(2))
                events.append({"amdgpu_mes": r.group(2), "pci": r.group(1)})
            continue
        r = _KL_AMD_RESET.search(line)
        if r:
            events.append({"amdgpu_reset": True, "pci": r.group(1)})
            continue
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
            events.append(ev)
            continue
        m = _KL_AMD_FAULT.search(line)
        if not m:
            continue
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
        events.append(ev)
    if not events:
        return None
    first = events[0]
    if "amdgpu_mes" in first or "amdgpu_reset" in first:
        mes = [e["amdgpu_mes"] for e in events if "amdgpu_mes" in e]
        reset = any("amdgpu_reset" in e for e in events)
        what = (f"amdgpu MES (the firmware queue scheduler) stopped answering (msg={', '.join(mes[:3])})" if mes
                else "amdgpu GPU reset") + f" on {first['pci']}" + ("; the driver reset the GPU" if mes and reset else "")
    elif "amdgpu_ring_timeout" in first:
        what = f"amdgpu ring {first['amdgpu_ring_timeout']} timeout (signaled {first['signaled']}, " \
               f"emitted {first['emitted']})" + (f" on {first['pci']}" if first.get("pci") else "")
    elif "xid" in first:
        prev = re.search(r"caused by previous Xid (\d+)", first["text"])
        what = f"Xid {first['xid']}" + (f" (after Xid {prev.group(1)})" if prev else "") + f" on {first['pci']}"
    else:
        what = f"amdgpu {first['amdgpu_fault']} page fault on {first['pci']}" \
            + (f" at {first['address']}" if first.get("address") else "") \
            + (" (pasid 0: the driver itself)" if first["pasid"] == 0 else "")
    who = f" by {first['process']} (pid {first['pid']})" if first.get("process") else ""
    xids = sorted({e["xid"] for e in events if "xid" in e})
    gpus = sorted({e["pci"] for e in events if e.get("pci")})
    summary = f"kernel log: {what}{who}" + (f"; Xids seen: {', '.join(map(str, xids))}" if len(xids) > 1 else "") \
        + (f"; {len(gpus)} GPUs involved" if len(gpus) > 1 else "")
    return {"kind": "kernel-log", "events": events[:50], "count": len(events), "xids": xids, "gpus": gpus,
            "summary": summary, "findings": [summary]}


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
_CS_LINE = re.compile(r"^[^\n=]{0,60}=========(?: (.*?))?\s*$")
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
    reports: list[dict] = []
    cur: dict | None = None
    total = None
    errors_warnings = None
    for raw in text.splitlines():
        m = _CS_LINE.match(raw)
        if not m:
            continue
        body = (m.group(1) or "").strip()
        if not body:
            continue
        t = _CS_TOTAL.search(body)
        if t:
            total = int(t.group(1))
            if t.group(2):
                errors_warnings = (int(t.group(2)), int(t.group(3)))
            continue
        e = _CS_ERROR.match(body)
        if e:
            cur = {"error": body if len(body) <= 200 else body[:199] + "…"}
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
            reports.append(cur)
            continue
        if cur is None:
            continue
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
        elif (d := _CS_DEVFRAME.match(body)) and "device_frame" not in cur:
            fn = (d.group(2) or d.group(4) or d.group(7) or "").strip()
            src = d.group(1) or d.group(9)
            off = (d.group(3) or d.group(6) or d.group(8) or "").lower()
            if _cs_user_frame(fn) and _cs_user_frame(src or ""):
                cur["device_frame"] = {k: v for k, v in (("function", fn), ("source", src), ("pc", off)) if v}
        elif (h := _CS_HOST.match(body)) and not h.group(1).startswith("/lib") and _cs_user_frame(h.group(1)):
            cur.setdefault("host_frame", h.group(1))
            if len(chain := cur.setdefault("host_frames", [])) < 4:
                chain.append(_cs_host_short(h.group(1)))
    if not reports:
        return None
    for r in reports:
        if r.get("access") == "race" and r["accesses"]:
            a0 = r["accesses"][0]
            r.setdefault("kernel", a0.get("function"))
            for k in ("pc", "source", "thread"):
                if a0.get(k):
                    r.setdefault(k, a0[k])
            r["hazards"] = sum(a.get("hazards", 0) for a in r["accesses"]) or None
        if r.get("device_frame"):
            # the report's own "at" is a CUDA intrinsic (__cuda_sm70_warpsync): the program's frame says where
            if not r.get("kernel") or not _cs_user_frame(r["kernel"]):
                r["kernel"] = r["device_frame"]["function"]
                r["pc"] = r["device_frame"].get("pc")
            if r["device_frame"].get("source"):
                r.setdefault("source", r["device_frame"]["source"])
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
        where = ""
    elif first.get("access") == "host API":
        access = f"Host API memory access error: {first.get('api') or 'a host API call'}" \
                 + (f" ({first['api_side']})" if first.get("api_side") else "") \
                 + (f" reads {first.get('problem') or 'bad'} memory at {first['address']}" if first.get("address") else "") \
                 + f" ({first.get('size')} bytes at {first['host_address']})"
    else:
        access = first["error"]
        if first.get("address"):
            detail = ", ".join(x for x in (first.get("problem"), first.get("allocation")) if x)
            access += f" at {first['address']}" + (f" ({detail})" if detail else "")
    out["access"] = access
    by = f" by thread {first['thread']} in block {first['block']}" if first.get("thread") and first.get("block") else ""
    more = len(reports) - 1
    loc = f" in {where}" if where and where != "?" else (" (from the host)" if first.get("access") == "host API" else "")
    if first.get("access") not in ("race",) and first.get("source") and where == "?":
        loc = f" at {first['source']}"
    out["summary"] = (f"compute-sanitizer {out['tool']}: {out['access']}{loc}{by}"
                      + (f" (+{more} more report{'s' if more != 1 else ''})" if more else ""))
    kernels: dict[str, int] = {}
    for r in reports:
        if r.get("kernel"):
            k = _tail_name(r["kernel"], 60) or r["kernel"]
            kernels[k] = kernels.get(k, 0) + 1
    out["findings"] = [out["summary"]] + [f"{n} report(s) in {k}" for k, n in kernels.items()]
    if first.get("host_frame") and first.get("access") == "host API":
        out["findings"].append(f"the host call came from {first['host_frame']}")
    elif first.get("api_error") and len(first.get("host_frames") or ()) > 1:
        # a failing CUDA API call: the program's own callers, innermost first, say which code path launched it
        out["findings"].append("the failing call came from " + " <- ".join(first["host_frames"]))
    if first.get("device_frame"):
        df = first["device_frame"]
        out["findings"].append(f"first device frame of the program: {short_kernel(df['function'], 80)}"
                               + (f" at {df['source']}" if df.get("source") else ""))
    if errors_warnings:
        out["findings"].append(f"racecheck summary: {total} hazard(s) displayed ({errors_warnings[0]} error(s), "
                               f"{errors_warnings[1]} warning(s))")
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


def parse_memory_summary(text: str | bytes) -> dict | None:
    """``torch.cuda.memory_summary()`` tables: per device the OOM and cudaMalloc-retry counts and
    every metric row (current, peak, total allocated, total freed, as printed); the last table of a
    device is its latest state. Findings: OOMs, allocator retries (memory at capacity or
    fragmented) and memory reserved but not allocated."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    if "memory summary, device ID" not in text and "| Allocated memory " not in text:
        return None
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


# --- TORCH_DISTRIBUTED_DEBUG=DETAIL: collectives that differ across ranks -------------------------

_CM_HEAD = "Detected mismatch between collectives on ranks"
_CM_RANK = re.compile(r"Rank (\d+) is running (?:inconsistent )?collective:\s*")
_CM_FIELDS = (("seq", re.compile(r"SequenceNumber=(\d+)")), ("op", re.compile(r"OpType=(\w+)")),
              ("shape", re.compile(r"TensorShape=\[([^\]]*)\]")), ("dtype", re.compile(r"TensorDtypes=(\w+)")),
              ("device", re.compile(r"TensorDeviceTypes=TensorOptions\([^,]*, device=(\w+)")))
_CM_ASPECT = re.compile(r"^\s*([A-Za-z][A-Za-z ]*?):\s*(.*?)\s*vs\s*(.*?)\s*$")


def _balanced(s: str, i: int) -> int:
    """The index just past the parenthesis group that opens at s[i] (or len(s) if unclosed)."""
    depth = 0
    for k in range(i, min(len(s), i + 4000)):
        if s[k] == "(":
            depth += 1
        elif s[k] == ")":
            depth -= 1
            if depth == 0:
                return k + 1
    return len(s)


def parse_collective_mismatch(text: str | bytes) -> dict | None:
    """ProcessGroupWrapper's report under ``TORCH_DISTRIBUTED_DEBUG=DETAIL`` ("Detected mismatch
    between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(...), but Rank
    2 is running collective: ..."): per rank the sequence number, op, tensor shape, dtype and device,
    and what differs ("Collectives differ in the following aspects", or worked out here)."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    at = text.find(_CM_HEAD)
    if at < 0:
        return None
    raw = text[at:at + 8000]
    # a terminal- or issue-wrapped report has runs of spaces inside words ("collecti     ve")
    seg = re.sub(r" {3,}", "", raw.replace("\t", " "))
    tail = ""
    cut = seg.find("Collectives differ in the following aspects:")
    if cut >= 0:
        tail, seg = seg[cut:].split(":", 1)[1], seg[:cut]
    seg = seg.replace("\n", " ")
    ranks: list[dict] = []
    for m in _CM_RANK.finditer(seg):
        rest = seg[m.end():]
        if rest.startswith("CollectiveFingerPrint("):
            fp = rest[:_balanced(rest, len("CollectiveFingerPrint"))]
        else:  # older torch names only the other rank's op ("but Rank 1 is running collective: REDUCE.")
            fp = "OpType=" + (re.match(r"\w*", rest).group(0))
        r: dict = {"rank": int(m.group(1))}
        for key, rx in _CM_FIELDS:
            f = rx.search(fp)
            if f:
                r[key] = int(f.group(1)) if key == "seq" else f.group(1).replace(" ", "").replace(",", ", ")
        ranks.append(r)
        if len(ranks) == 2:
            break
    if not ranks:
        return None
    differ = []
    for piece in re.split(r"[\n\t]", tail)[:8] if tail else []:
        a = _CM_ASPECT.match(piece)
        if a and a.group(2):
            name = re.sub(r"^Tensor (?=Tensor)", "", a.group(1)).strip()
            differ.append({"aspect": name, "values": [a.group(2), a.group(3)]})
    if not differ and len(ranks) == 2:
        for key, label in (("seq", "Sequence number"), ("op", "Op type"), ("shape", "Tensor shapes"),
                           ("dtype", "Tensor dtypes"), ("device", "Tensor devices")):
            va, vb = ranks[0].get(key), ranks[1].get(key)
            if va is not None and vb is not None and va != vb:
                differ.append({"aspect": label, "values": [str(va), str(vb)]})

    def side(r: dict) -> str:
        s = f"rank {r['rank']} runs {r.get('op') or '?'}"
        if r.get("shape") is not None:
            s += f" [{r['shape']}]"
        if r.get("dtype"):
            s += f" {r['dtype']}"
        if r.get("seq") is not None:
            s += f" (seq {r['seq']})"
        return s

    summary = "collective mismatch: " + " but ".join(side(r) for r in ranks)
    if differ:
        summary += "; they differ in " + ", ".join(f"{d['aspect'].lower()} ({d['values'][0]} vs {d['values'][1]})"
                                                    for d in differ)
    findings = [summary]
    if any(d["aspect"].lower().startswith("sequence") for d in differ):
        findings.append("the ranks are at different points of the program; guess: one issued a collective the "
                        "other skipped (a collective under a rank-dependent branch, or an early exit)")
    if any("shape" in d["aspect"].lower() for d in differ):
        findings.append("same collective with different tensor shapes; guess: the ranks built different inputs "
                        "(uneven data split, padding, or parameters that differ across ranks)")
    return {"kind": "collective-mismatch", "ranks": ranks, "differ": differ, "summary": summary, "findings": findings}


# --- ProcessGroupNCCL watchdog: where each rank's work stopped -------------------------------------

_WD_RANK_PREFIX = re.compile(r"\[rank(\d+)\]:")
# "[PG ID 0 PG GUID 0(default_pg) Rank 5]", "[PG 0 (default_pg) Rank 3]", "[PG 1 Rank 0]", "[Rank 118]"
_WD_PG_RANK = re.compile(r"\[(?:PG (?:ID )?(\d+)(?: PG GUID (\d+))? ?(?:\(([^)\s]*)\))? )?Rank (\d+)\]")
# the words of a message may be wrapped onto the next line by whoever pasted the log: \s+ between them
_WD_FAILURE = re.compile(r"failure detected by watchdog at work sequence id:\s+(-?\d+)\s+PG\s+status:\s+last\s+"
                         r"enqueued\s+work:\s+(-?\d+),\s+last\s+completed\s+work:\s+(-?\d+)")
_WD_TIMEOUT_AT = re.compile(r"Timeout at NCCL work:\s+(-?\d+),\s+last\s+enqueued\s+NCCL\s+work:\s+(-?\d+),\s+last\s+"
                            r"completed\s+NCCL\s+work:\s+(-?\d+)")
_WD_CAUGHT = re.compile(r"Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(\d+), OpType=(\w+)"
                        r"(?:, NumelIn=(\d+), NumelOut=(\d+))?[^\n]*?Timeout\(ms\)=(\d+)\) ran for (\d+) milliseconds")


def parse_nccl_watchdog(text: str | bytes) -> dict | None:
    """ProcessGroupNCCL watchdog lines of every rank in the output: the work that timed out (seq,
    op, element count, timeout, how long it ran) and the process group's last enqueued and last
    completed work — the rank whose last completed work is lowest fell behind the others. The rank
    is the global one of torchrun's ``[rankN]:`` prefix where there is one (``pg_rank`` the rank
    inside a sub-group), else the one in the process group's bracket."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    if not ("failure detected by watchdog" in text or "Timeout at NCCL work" in text
            or "Watchdog caught collective operation timeout" in text):
        return None
    ranks: dict[int, dict] = {}
    hits = sorted([(m.start(), "counters", m) for rx in (_WD_FAILURE, _WD_TIMEOUT_AT) for m in rx.finditer(text)]
                  + [(m.start(), "caught", m) for m in _WD_CAUGHT.finditer(text)], key=lambda h: h[0])
    for at, what, m in hits[:2000]:
        head = text[text.rfind("\n", 0, at) + 1:at]
        pr = _WD_RANK_PREFIX.search(head)
        pgs = list(_WD_PG_RANK.finditer(head))
        pg = pgs[-1] if pgs else None
        rank = int(pr.group(1)) if pr else int(pg.group(4)) if pg else -1
        r = ranks.setdefault(rank, {"rank": rank if rank >= 0 else None})
        if pg and pg.group(1) is not None:
            r["pg"] = pg.group(1) + (f" ({pg.group(3)})" if pg.group(3) else "")
        if pg and pr and int(pg.group(4)) != rank:
            r["pg_rank"] = int(pg.group(4))
        if what == "counters":
            r["failed_seq"], r["last_enqueued"], r["last_completed"] = (int(m.group(i)) for i in (1, 2, 3))
        else:
            r.setdefault("failed_seq", int(m.group(1)))
            r.update(op=m.group(2), timeout_ms=int(m.group(5)), ran_ms=int(m.group(6)))
            if m.group(3) and int(m.group(3)) < 1 << 63:  # 2**64-1 is "unknown" (a coalesced group)
                r["numel"] = int(m.group(3))
    if not ranks:
        return None
    rows = sorted(ranks.values(), key=lambda r: (r["rank"] is None, r["rank"] or 0))
    findings = []
    done = [r for r in rows if r.get("last_completed") is not None]
    if len({r["last_completed"] for r in done}) > 1:
        low = min(r["last_completed"] for r in done)
        high = max(r["last_completed"] for r in done)
        behind = [str(r["rank"]) for r in done if r["last_completed"] == low]
        findings.append(f"rank(s) {', '.join(behind)} completed work only up to {low} while others reached {high}: "
                        "they fell behind (guess: stuck before the next collective, or never launched it)")
    if any(r["last_completed"] < 0 for r in done):
        findings.append("no work of the process group ever completed (last completed -1); guess: a rank never "
                        "joined the first collective, or a communicator never finished its init")
    if "FlightRecorder is disabled" in text:
        findings.append("the flight recorder was off, so no rank kept its collective history: re-run with "
                        "TORCH_NCCL_TRACE_BUFFER_SIZE set (dbglog run --capture nccl-fr)")
    elif "preparing to dump debug info" in text:
        findings.append("the ranks dumped their flight-recorder buffers (TORCH_NCCL_DUMP_ON_TIMEOUT): read them with "
                        "python -m torch.distributed.flight_recorder.fr_trace")
    first = next((r for r in rows if r.get("failed_seq") is not None), rows[0])
    who = f"rank {first['rank']}" if first.get("rank") is not None else "a rank"
    s = f"NCCL watchdog: {who} timed out on work {first.get('failed_seq')}"
    if first.get("op"):
        s += f" ({first['op']}" + (f", {first['numel']} elements" if first.get("numel") is not None else "") \
             + (f", ran {first['ran_ms']} ms of a {first['timeout_ms']} ms timeout" if first.get("ran_ms") else "") + ")"
    if first.get("last_completed") is not None:
        s += f"; last enqueued work {first['last_enqueued']}, last completed {first['last_completed']}"
    if len(rows) > 1:
        s += f"; {len(rows)} rank(s) reported"
    return {"kind": "nccl-watchdog", "ranks": rows[:64], "summary": s, "findings": [s] + findings}


# --- NCCL_DEBUG=INFO: rings, trees and transports ------------------------------------------------
def _lines_with(text: str, needle: str, limit: int = 10000) -> Iterable[str]:
    """The lines of ``text`` holding ``needle``, found by str.find (a big log is not split)."""
    pos = n = 0
    while n < limit and (i := text.find(needle, pos)) >= 0:
        start = text.rfind("\n", 0, i) + 1
        end = text.find("\n", i)
        end = len(text) if end < 0 else end
        yield text[start:end]
        pos, n = end + 1, n + 1



# (the host starts a word and the message is stripped after: both linear on a 64 KB line, which
# "(.*?)\s*$" and a host tried at every offset were not)
_NI_LINE = re.compile(r"(?<![^\s\[\]`])([^\s\[\]`]+):(\d+):(\d+) \[(\d+)\] NCCL INFO (.*)$")
_NI_RING = re.compile(r"^(?:Channel|Ring) (\d+)(?:/(\d+))? :((?:\s+\d+)+)$")
_NI_EDGE = re.compile(r"^(?:Channel|Ring) (\d+)(?:/\d+)? : (\d+)(?:\[[^\]]*\])? -> (\d+)(?:\[[^\]]*\])?"
                      r"(?: \[(send|receive)\])? via (\S.*)$")
_NI_COMM = re.compile(r"comm 0x[0-9a-fA-F]+ rank (\d+) n[Rr]anks (\d+)(?: nNodes (\d+))?")
_NI_VERSION = re.compile(r"NCCL version (\S+)")
_NI_NETWORK = re.compile(r"Using network (\w+)")
_NI_NET_IF = re.compile(r"NET/(IB|Socket) : Using (\[\d+\]\S+(?: \[\d+\]\S+)*)")


def _transport(via: str) -> str:
    """'P2P/IPC/read' -> 'P2P/IPC', 'NET/IB/0/GDRDMA' -> 'NET/IB', 'SHM/direct/direct' -> 'SHM'."""
    parts = via.split("/")
    if parts[0] in ("P2P", "NET") and len(parts) > 1:
        return f"{parts[0]}/{parts[1]}"
    return parts[0]


def _nccl_init_only(version: str | None, network: str | None, hosts: set[str], procs: set[tuple[str, str]],
                    no_ib: bool) -> dict | None:
    """NCCL_DEBUG=INFO start-up lines without a communicator, ring or channel line yet (a hang in
    init, a paste cut early): the version, the network NCCL chose and the processes and hosts seen."""
    if version is None and network is None:
        return None
    n, h = len(procs), len(hosts)
    out = {"kind": "nccl-topology", "version": version, "network": network, "processes": n or None,
           "nodes": h or None, "ranks": None, "rings": {}, "transports": {}, "edges": []}
    s = "NCCL start-up (no communicator line yet): " + ", ".join(x for x in (
        f"NCCL {version}" if version else None, f"network {network}" if network else None,
        f"{n} process(es) on {h} host(s)" if n else None) if x) \
        + (f" ({', '.join(sorted(hosts)[:4])}{', ...' if h > 4 else ''})" if n else "")
    findings = [s]
    if network == "Socket":
        findings.append("NCCL uses TCP sockets (NET/Socket), not InfiniBand/RoCE"
                        + (" — the verbs library (libibverbs) or an IB device was not found" if no_ib else "")
                        + ": fine on one node, slow between nodes; check the RDMA devices and libraries")
    out["summary"] = s
    out["findings"] = findings
    return out


def parse_nccl_topology(text: str | bytes) -> dict | None:
    """``NCCL_DEBUG=INFO`` init lines: the NCCL version, ranks and nodes, the ring order of each
    channel, and the transport between each pair of ranks (P2P, SHM, NET/Socket, NET/IB, ...).
    Findings: inter-node traffic over TCP sockets (no InfiniBand/RoCE), ranks joined through host
    shared memory instead of P2P."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    if " NCCL INFO " not in text:
        return None
    rings: dict[str, str] = {}
    channels = 0
    edges: dict[tuple, str] = {}
    hosts: set[str] = set()
    procs: set[tuple[str, str]] = set()
    nranks = nnodes = version = network = None
    no_ib = False
    for line in _lines_with(text, " NCCL INFO ", limit=20000):
        m = _NI_LINE.search(line)
        if not m:
            continue
        msg = m.group(5).rstrip()
        hosts.add(m.group(1))
        procs.add((m.group(1), m.group(2)))
        if network is None and (n := _NI_NETWORK.match(msg)) is not None:
            network = n.group(1)
        if (e := _NI_EDGE.match(msg)) is not None:
            edges.setdefault((int(e.group(2)), int(e.group(3))), e.group(5).strip())
            continue
        if (r := _NI_RING.match(msg)) is not None:
            rings.setdefault(r.group(1), " ".join(r.group(3).split()))
            if r.group(2):
                channels = max(channels, int(r.group(2)))
            continue
        if (c := _NI_COMM.search(msg)) is not None:
            nranks = int(c.group(2))
            if c.group(3):
                nnodes = int(c.group(3))
            continue
        if version is None and (v := _NI_VERSION.search(msg)) is not None:
            version = v.group(1)
        if "NET/IB : No device found" in msg:
            no_ib = True
    if version is None:
        # the version line is printed bare by rank 0 ("NCCL version 2.10.3+cuda11.3"), no INFO prefix
        version = next((v.group(1) for v in map(_NI_VERSION.search, _lines_with(text, "NCCL version ", limit=50)) if v), None)
    # the InfiniBand verbs library could not be loaded (misc/ibvwrap.cc): NCCL falls back to sockets
    no_verbs = any("ibvwrap" in ln for ln in _lines_with(text, "NCCL WARN ", limit=200))
    if not rings and not edges and nranks is None:
        return _nccl_init_only(version, network, hosts, procs, no_ib or no_verbs)
    transports: dict[str, int] = {}
    for via in edges.values():
        t = _transport(via)
        transports[t] = transports.get(t, 0) + 1
    ring0 = next(iter(rings.values()), None)
    net = any(_transport(v).startswith("NET") for v in edges.values())
    # an excerpt may hold a few ranks' lines only: the rank count comes from a comm line or a full ring
    seen = max((max(a, b) for a, b in edges), default=-1) + 1  # the highest rank an edge names
    out: dict = {"kind": "nccl-topology", "version": version,
                 "ranks": nranks or (len(ring0.split()) if ring0 else None),
                 "ranks_seen": None if nranks or ring0 else (seen or None),
                 "nodes": nnodes or (len(hosts) if len(hosts) > 1 or not net else None),
                 "channels": channels or len(rings) or None,
                 "rings": dict(list(rings.items())[:16]), "transports": transports,
                 "edges": [{"from": a, "to": b, "via": via} for (a, b), via in list(edges.items())[:64]]}
    findings = []
    if "NET/Socket" in transports:
        findings.append("inter-node traffic goes over TCP sockets (NET/Socket), not InfiniBand/RoCE"
                        + (" — NET/IB found no device" if no_ib else "") + ": expect low bandwidth; check NCCL_IB_* "
                        "settings and the RDMA devices in the container")
    shm = [f"{a}->{b}" for (a, b), via in edges.items() if _transport(via) == "SHM"]
    if shm and any(t.startswith("P2P") for t in transports):
        findings.append(f"rank pairs joined through host shared memory (SHM), not P2P: {', '.join(shm[:8])} — no "
                        "peer-to-peer path between those GPUs (different PCIe root/NUMA node, or P2P disabled)")
    if network:
        out["network"] = network
    s = "NCCL topology: " + (f"{out['ranks']} rank(s)" if out["ranks"] else
                             f"at least {seen} rank(s)" if seen else "ranks ?") \
        + (f" on {out['nodes']} node(s)" if out["nodes"] else "") \
        + (f" ({', '.join(sorted(hosts)[:4])}{', ...' if len(hosts) > 4 else ''})" if len(hosts) > 1 else "") \
        + (f", {out['channels']} channel(s)" if out["channels"] else "") + (f", ring {ring0}" if ring0 else "") \
        + ("; transports (rank pairs): " + ", ".join(f"{t} {n}" for t, n in transports.items()) if transports else "") \
        + ("; GPUDirect RDMA (GDRDMA) between nodes" if any("GDRDMA" in v for v in edges.values()) else "") \
        + (f"; network {network}" if network else "") + (f"; NCCL {version}" if version else "")
    out["summary"] = s
    out["findings"] = [s] + findings
    return out


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


# --- user tables in .dbglog/config.toml -------------------------------------------------------

def load_kernel_ops(config_path: str | Path | None) -> list[tuple[str, str]]:
    """``[[kernel_op]]`` tables (fragment, op) from config.toml; bad entries are skipped."""
    if not config_path:
        return []
    try:
        data = config.load(config_path, needle=b"kernel_op")
    except DbglogError:  # reading a dump never fails over a setting
        return []
    out = []
    for e in data.get("kernel_op", []) if isinstance(data.get("kernel_op"), list) else []:
        if isinstance(e, dict) and isinstance(e.get("fragment"), str) and isinstance(e.get("op"), str) and e["fragment"]:
            out.append((e["fragment"], e["op"]))
    return out


# --- everything a run left behind -------------------------------------------------------------

# Every kind of evidence, in the order extract() tries them (most specific first): the kind, the
# literal markers may_hold_dump() looks for, and its parser. A new kind is registered here, once.
PARSERS: tuple[tuple[str, tuple[str, ...], Callable[..., dict | None]], ...] = (
    ("rocm-debug-agent", ("wave_", "XNACK error state", "Memory access fault at GPU Node"), parse_debug_agent),
    ("rocgdb", ("AMDGPU ", "No dispatches"), parse_rocgdb),
    ("cuda-gdb", ("CUDA Exception", "CUDA_EXCEPTION_", "cudacore", " in section .text.",
                  "Switching focus to CUDA kernel"), parse_cuda_gdb),
    ("cuda-gdb-kernels", ("SMs Mask",), parse_cuda_gdb_kernels),
    ("cuda-coredump", ("coredump:",), parse_cuda_coredump_progress),
    ("compute-sanitizer", ("========= ",), parse_compute_sanitizer),
    # thread stacks: py-spy dump, gdb thread apply all bt, faulthandler
    ("thread-stacks", ('(idle): "', '(active): "', '(active+gil): "', " (LWP ", " (most recent call first):\n", "\n#0 "),
     parse_thread_stacks),
    ("nvidia-smi", ("NVSMI LOG",), parse_nvidia_smi_q),
    ("kernel-log", ("NVRM: Xid", "page fault (src_id", "timeout, signaled seq=", "MES failed to respond",
                    "GPU reset begin"), parse_kernel_log),
    ("amd-log", (" us: ",), parse_amd_log),
    ("collective-mismatch", (_CM_HEAD,), parse_collective_mismatch),
    ("nccl-watchdog", ("failure detected by watchdog", "Timeout at NCCL work",
                       "Watchdog caught collective operation timeout"), parse_nccl_watchdog),
    ("memory-summary", ("memory summary, device ID", "| Allocated memory "), parse_memory_summary),
    ("nccl-topology", (" NCCL INFO ",), parse_nccl_topology),
    ("rocm-smi", ("ROCm System Management Interface",), parse_rocm_smi),
    ("gpu-state", ("utilization.gpu [%]",), parse_gpu_query),
    # read in a run's output only: in a capture file it is the nccl-fr preset's, which records its verdict itself
    ("nccl-flight-recorder", ("Not all ranks joining collective", " at entry "), parse_fr_trace),
)
KINDS = tuple(k for k, _, _ in PARSERS)
_DUMP_MARKERS = tuple(dict.fromkeys(m for _, markers, _ in PARSERS for m in markers))


def may_hold_dump(data: str | bytes) -> bool:
    """Cheap test (a few substring scans, no decoding) for text any parser here could use."""
    if isinstance(data, (bytes, bytearray)):
        return any(m.encode() in data for m in _DUMP_MARKERS)
    return any(m in data for m in _DUMP_MARKERS)


# A hang capture's file names the process it was taken of: hang/py-spy.1234.txt, faulthandler.1234.txt
_CAPTURE_PID = re.compile(r"(?:^|[/\\])[\w-]+\.(\d+)\.txt$")


def _parse_one(kind: str, fn: Callable, text: str, src: str, save_dirs, ops, roots) -> dict | None:
    try:
        if kind == "rocm-debug-agent":
            return fn(text, save_dirs=save_dirs, ops=ops)
        return fn(text, roots=roots) if kind == "thread-stacks" else fn(text)
    except Exception as exc:  # a parser must never cost the run its record
        return {"kind": "error", "summary": f"evidence parser failed on {src}: {exc!r}"}


def extract(output: str | bytes, *, files: Iterable[str | Path] = (), save_dirs: Iterable[str | Path] = (),
            config_path: str | Path | None = None, run_tools: bool = True, tool_timeout: float = 120.0,
            path: str | None = None, cwd: str | None = None, roots: Sequence[str] = ()) -> list[dict]:
    """All evidence in a run's output and in the capture files it produced, most specific first.
    ``roots``: where relative source paths in thread dumps are read (the run's working directory).
    Evidence from one process's capture file carries its ``pid`` and says it first in its summary."""
    if not may_hold_dump(output):
        output = ""  # nothing to read: do not decode megabytes of ordinary output
    if isinstance(output, (bytes, bytearray)):
        output = bytes(output).decode("utf-8", "replace")
    ops = load_kernel_ops(config_path)
    texts = [("output", output)] if output else []
    for f in files:
        try:
            texts.append((str(f), Path(f).read_text(encoding="utf-8", errors="replace")))
        except OSError:
            continue
    found: list[dict] = []
    cores: list[str] = []
    for src, text in texts:
        pid = _CAPTURE_PID.search(src) if src != "output" else None
        for kind, _, fn in PARSERS:
            if kind == "nccl-flight-recorder" and src != "output":
                continue
            e = _parse_one(kind, fn, text, src, save_dirs, ops, tuple(roots))
            if e:
                # "source" is the parser's file:line where it has one (cuda-gdb, compute-sanitizer), else
                # the origin, as before; "origin" is always the output or capture file the text came from
                e["origin"] = src
                e.setdefault("source", src)
                if pid and "pid" not in e:
                    e["pid"] = int(pid.group(1))
                    if e.get("summary"):
                        e["summary"] = f"pid {e['pid']}: {e['summary']}"
                found.append(e)
                if e["kind"] == "cuda-coredump":
                    cores.extend(e.get("files") or [])
    if run_tools:  # the saved code object and the PC give the source line (llvm-objdump)
        found.extend(amd_pc_line(e["code_object_file"], e["pc"], e.get("loaded_at"), timeout=tool_timeout, path=path)
                     for e in list(found) if e["kind"] == "rocm-debug-agent" and e.get("code_object_file")
                     and e.get("pc"))
    for core in dict.fromkeys(cores):
        if not os.path.exists(core):
            found.append({"kind": "cuda-core-chain", "core": core, "status": "no-core",
                          "summary": f"core dump {core} was announced but is not on disk"})
        elif run_tools:
            found.append(cuda_core_chain(core, timeout=tool_timeout, path=path, cwd=cwd))
    return found


def summary_lines(evidence: Iterable[dict], limit: int = 6) -> list[str]:
    out = []
    for e in evidence:
        s = e.get("summary")
        if s and s not in out:
            out.append(s)
        for f in (e.get("findings") or [])[1:3]:
            out.append(f"  {f}")
    return out[:limit]


def kernel_api_evidence(boundary: dict) -> dict:
    """A kernel-API boundary (signatures.parse_kernel_api_log) as evidence with a one-line summary."""
    b = dict(boundary)
    if b.get("status") == "unread":
        b.update(kind="kernel-api", summary=f"kernel-API log: {b.get('note')}")
        return b
    status = {"in_flight": "in flight (started, never returned)", "completed": "completed",
              "exception": "raised", "started": "started (level 1 logs show no returns)"}.get(b.get("status"), b.get("status"))
    s = f"last {b.get('framework')} API call: {b.get('name')} {status}"
    if b.get("exception"):
        s += f": {b['exception'][:160]}"
    ins = [f"{i['arg']} {i.get('shape') or ''} {i.get('dtype') or ''}".strip() for i in b.get("inputs") or []]
    if ins:
        s += "; inputs " + ", ".join(ins[:4]) + (" …" if len(ins) > 4 else "")
    if b.get("dump_dir"):
        s += f"; inputs dumped to {b['dump_dir']}"
    if b.get("note"):
        s += f" ({b['note']})"
    b.update(kind="kernel-api", summary=s)
    return b


def config_near(path: str | Path) -> Path | None:
    """The .dbglog/config.toml of the workspace a run directory lives in (None outside one)."""
    p = Path(path).resolve()
    for d in (p, *p.parents):
        if d.name == ".dbglog":
            cfg = d / "config.toml"
            return cfg if cfg.exists() else None
    return None


def code_object_dirs(env: dict, cwd: str | Path) -> list[str]:
    """Where rocm-debug-agent --save-code-objects[=DIR] writes: DIR, else the process's cwd."""
    out = []
    opts = env.get("ROCM_DEBUG_AGENT_OPTIONS") or ""
    m = re.search(r"(?:--save-code-objects|(?<!\S)-s)(?:=|\s+)(?!-)(\S+)", opts)
    if m:
        d = Path(m.group(1))
        out.append(str(d if d.is_absolute() else Path(cwd) / d))
    out.append(str(cwd))
    return out
