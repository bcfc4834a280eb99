"""PC -> source line on AMD: ``llvm-objdump -d -l`` of the code object the debug agent saved
(``--save-code-objects``), around the faulting PC. The PC's address in the code object is its
offset from the load address the dump gives (``loaded at: [start-end]``). Reports the source line
llvm-objdump's line comments give for the PC, the instruction there and the one before, and
whether the wave sits on ``s_trap 2`` (an assert / ``__builtin_trap``) or ``s_endpgm``."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

_FUNC = re.compile(r"^[0-9a-fA-F]+ <(.+)>:\s*$")
_LINE = re.compile(r"^; (\S+?):(\d+)(?::\d+)?\s*$")
_INLINED = re.compile(r"^; (\S.*)\(\):\s*$")
# "	s_trap 2                      // 0000000010E8: BF920002" (AMDGPU prints the address in the comment)
_INSN = re.compile(r"^\s+(\S.*?)\s*//\s*([0-9A-Fa-f]+):")
ROCM_LLVM = "/opt/rocm/llvm/bin"


def parse_llvm_objdump(text: str, addr: int) -> dict | None:
    """The instruction at ``addr`` in ``llvm-objdump -d -l`` output, its function, the source line
    and the inlined frames above it, and the instruction before it; None if ``addr`` is not listed."""
    func = line = None
    inlined: list[str] = []
    prev = None
    for raw in text.splitlines():
        if (m := _FUNC.match(raw)) is not None:
            func, line, inlined = m.group(1), None, []
        elif (m := _LINE.match(raw)) is not None:
            line = f"{m.group(1)}:{m.group(2)}"
        elif (m := _INLINED.match(raw)) is not None:
            inlined = [*inlined[-3:], m.group(1)]
        elif (m := _INSN.match(raw)) is not None:
            here = int(m.group(2), 16)
            if here == addr:
                insn = m.group(1)
                return {"function": func, "line": line, "inlined": inlined, "instruction": insn, "previous": prev,
                        "trap": "s_trap 2" in (insn, prev), "endpgm": insn.startswith("s_endpgm")}
            prev = m.group(1)
    return None


def _tool(path: str | None) -> str | None:
    return shutil.which("llvm-objdump", path=path) or shutil.which("llvm-objdump", path=ROCM_LLVM)


def amd_pc_line(code_object: str, pc: str, loaded_at: list[str] | None, *, timeout: float = 60.0,
                path: str | None = None) -> dict:
    """Run llvm-objdump on the saved code object around the PC; every step that cannot run says why."""
    out: dict = {"kind": "amd-pc-line", "code_object": code_object, "pc": pc}
    if not loaded_at:
        out.update(status="no-load-address", summary=f"pc {pc}: the dump gives no load address for {code_object}")
        return out
    addr = int(pc, 16) - int(loaded_at[0], 16)
    out["offset"] = hex(addr)
    exe = _tool(path)
    if not exe:
        out.update(status="missing-tool", summary=(
            f"pc {pc} is offset {addr:#x} in {code_object}; llvm-objdump is not installed, so no source line "
            f"(run: llvm-objdump -d -l --start-address={max(0, addr - 256):#x} --stop-address={addr + 16:#x} "
            f"{code_object})"))
        return out
    argv = [exe, "-d", "-l", f"--start-address={max(0, addr - 256):#x}", f"--stop-address={addr + 16:#x}", code_object]
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as e:
        out.update(status="failed", summary=f"llvm-objdump on {code_object} failed: {e}")
        return out
    found = parse_llvm_objdump(p.stdout, addr)
    if found is None:
        out.update(status="pc-not-found", summary=f"offset {addr:#x} (pc {pc}) is not in llvm-objdump's listing of "
                                                  f"{os.path.basename(code_object)}")
        return out
    out.update(found, status="ok" if found["line"] else "no-line-info")
    where = found["line"] or "no line info (build with -g)"
    if found["inlined"]:
        where += " (inlined in " + " <- ".join(found["inlined"]) + ")"
    out["summary"] = (f"pc {pc} = {found['function'] or '?'}+{addr:#x}: {where}; `{found['instruction']}`"
                      + ("; the wave sits on s_trap 2 (an assert or __builtin_trap)" if found["trap"] else "")
                      + ("; at s_endpgm" if found["endpgm"] else ""))
    return out
