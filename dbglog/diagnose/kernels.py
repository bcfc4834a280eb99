"""Kernel names: short forms for one-line summaries and demangling with c++filt / cu++filt."""

from __future__ import annotations

import shutil
import subprocess
from typing import Iterable



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
