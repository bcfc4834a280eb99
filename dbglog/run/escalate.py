"""Kernel-API log escalation, as the crash-debug playbook's supervisor does it.

SGLang (``SGLANG_KERNEL_API_*``) and FlashInfer (``FLASHINFER_*``) log every decorated kernel call
at a level chosen by the environment (reference §6): 1 names only, 3 adds inputs and outputs, 5 adds
statistics, 10 dumps the tensors. Level 1 costs next to nothing, so every run gets it when the
hooks are there; a failure that repeats gets the next level, and the third try dumps tensors
(level 10), filtered by ``--dump-include`` / ``--dump-exclude`` (fnmatch patterns on API names) so
that a big model does not write gigabytes. The log files are per process (``%i`` = pid, set by the
runner); the level-10 dump directory is listed in the run.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from pathlib import Path

from dbglog.util.errors import DbglogError

LEVELS = (0, 1, 3, 5, 10)  # what both libraries accept
DEFAULT_LADDER = (1, 3, 10)  # the playbook: 1 on every trial, 3 on a repeat, 10 on the third
LEVEL_VARS = ("FLASHINFER_LOGLEVEL", "SGLANG_KERNEL_API_LOGLEVEL")
HOOK_PACKAGES = ("flashinfer-python", "flashinfer", "sglang", "sgl-kernel")
DUMP_LEVEL = 10


def parse_ladder(text: str | None) -> tuple[int, ...]:
    """``1,3,5,10`` -> (1, 3, 5, 10); levels must be ones the libraries know, rising."""
    if not text:
        return DEFAULT_LADDER
    try:
        levels = tuple(int(x) for x in text.replace(" ", "").split(",") if x)
    except ValueError:
        raise DbglogError(f"bad --escalate-levels {text!r}: use rising levels from {LEVELS}, e.g. 1,3,5,10") from None
    if not levels or any(lv not in LEVELS for lv in levels) or list(levels) != sorted(set(levels)):
        raise DbglogError(f"bad --escalate-levels {text!r}: use rising levels from {LEVELS}, e.g. 1,3,5,10")
    return levels


@dataclass
class Ladder:
    """Where an escalating series of runs stands: the level of the next run, raised after a failure."""

    levels: tuple[int, ...] = DEFAULT_LADDER
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    index: int = 0

    @property
    def level(self) -> int:
        return self.levels[min(self.index, len(self.levels) - 1)]

    def after(self, outcome: str) -> None:
        if outcome != "pass":
            self.index += 1

    def spec(self) -> dict:
        return {"level": self.level, "include": list(self.include), "exclude": list(self.exclude)}


def _surely_absent(names) -> bool:
    """True when no ``sys.path`` directory holds a ``.dist-info``, ``.egg-info`` or ``.egg`` of
    ``names``: the entries importlib.metadata's path finder matches (name before the first '-',
    normalised its two ways), read without importing it -- that import (email, zipfile, csv) is
    10-40 ms of every run's process, most of a bisection step's one-time cost. Only for plain
    directories and the standard finder; anything else (a zip, an egg on the path, another
    finder of distributions, a name that matches) says False: ask importlib.metadata."""
    import importlib.machinery
    import re
    import sys

    if any(hasattr(f, "find_distributions") and f is not importlib.machinery.PathFinder for f in sys.meta_path):
        return False

    def forms(name: str) -> set[str]:
        return {re.sub(r"[-_.]+", "-", name).lower().replace("-", "_"), name.lower().replace("-", "_")}

    want = set().union(*(forms(n) for n in names))
    for entry in sys.path:
        root = entry or "."
        if not os.path.isdir(root):
            if os.path.exists(root):
                return False  # a zip archive on the path
            continue
        if root.lower().endswith(".egg"):
            return False
        try:
            children = os.listdir(root)
        except OSError:
            return False
        for child in children:
            low = child.lower()
            if low.endswith((".dist-info", ".egg-info", ".egg")) and \
                    forms(low.rpartition(".")[0].partition("-")[0]) & want:
                return False
    return True


@functools.lru_cache(maxsize=1)
def _packages_present() -> bool:
    if _surely_absent(HOOK_PACKAGES):
        return False
    from importlib import metadata

    for name in HOOK_PACKAGES:
        try:
            metadata.version(name)
            return True
        except Exception:
            continue
    return False


def has_hooks(env: dict) -> bool:
    """The run's environment has the SGLang/FlashInfer logging hooks: the packages are installed
    (in dbglog's interpreter, usually the repro's venv too) or the run already sets their variables."""
    if any(k.startswith(("FLASHINFER_", "SGLANG_KERNEL_API_")) and not k.endswith("LOGDEST") for k in env):
        return True
    return _packages_present()


def default_env(env: dict) -> dict:
    """Level 1 for a run whose environment has the hooks and sets no level itself."""
    if any(v in env for v in LEVEL_VARS) or not has_hooks(env):
        return {}
    return {v: "1" for v in LEVEL_VARS}


def level_env(spec: dict, run_dir: Path) -> dict:
    """The variables for one escalated run: the level, and at level 10 the dump directories and
    filters (comma-separated fnmatch patterns, the format both libraries read)."""
    level = int(spec["level"])
    env = {v: str(level) for v in LEVEL_VARS}
    if level >= DUMP_LEVEL:
        d = dump_dir(run_dir)
        env["FLASHINFER_DUMP_DIR"] = str(d / "flashinfer")
        env["SGLANG_KERNEL_API_DUMP_DIR"] = str(d / "sglang_%i")
        for lib in ("FLASHINFER_DUMP", "SGLANG_KERNEL_API_DUMP"):
            if spec.get("include"):
                env[f"{lib}_INCLUDE"] = ",".join(spec["include"])
            if spec.get("exclude"):
                env[f"{lib}_EXCLUDE"] = ",".join(spec["exclude"])
    return env


def dump_dir(run_dir: Path) -> Path:
    return Path(run_dir) / "kernel_dumps"


def describe(spec: dict, run_dir: Path, env: dict) -> dict:
    """What the run records about its escalation (after it ran: the dumps that were written)."""
    out = {"level": int(spec["level"]), "include": list(spec.get("include") or []),
           "exclude": list(spec.get("exclude") or []),
           "log_dest": [env[k] for k in ("FLASHINFER_LOGDEST", "SGLANG_KERNEL_API_LOGDEST") if k in env]}
    if out["level"] >= DUMP_LEVEL:
        d = dump_dir(run_dir)
        out["dump_dir"] = str(d)
        files = []
        if d.is_dir():
            for root, _, names in os.walk(d):
                files.extend(os.path.join(root, n) for n in names)
        out["dumps"] = sorted(files)[:200]
        out["dump_count"] = len(files)
    return out
