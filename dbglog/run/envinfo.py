"""Environment snapshot for an investigation, in the spirit of PyTorch's/vLLM's collect_env.

Improvements over collect_env (reference §3, insight 9):
* Every external probe has a timeout and runs in its own session, killed as a group on timeout:
  nvidia-smi can hang in state D after an Xid, and ``subprocess.run(timeout=)`` would then block
  on a grandchild still holding the pipe. A missing tool, a failure or a timeout all degrade to
  ``None`` (rendered "not available"), never an exception.
* Probes run concurrently, so the whole snapshot takes about one timeout at worst.
* torch/triton/... versions come from package metadata; anything that needs ``import torch`` runs
  in a child process of the repro's interpreter, so dbglog never creates a GPU context itself and
  sees the repro's own venv.
* CUDA build (torch), CUDA toolkit (nvcc) and the driver's maximum CUDA version are kept apart.
* Relevant environment variables are kept and secrets redacted.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from dbglog.util import jsonsafe

NA = "not available"

ENV_PREFIXES = ("CUDA", "CUBLAS", "CUDNN", "NCCL", "TORCH", "PYTORCH", "NVIDIA", "OMP_", "HIP_", "HSA_",
                "AMD_", "ROCR_", "ROCM", "VLLM_", "SGLANG_", "FLASHINFER_", "TRITON_", "NVTE_", "MIOPEN_",
                # whether evidence is possible at all: -lineinfo in NVCC_PREPEND_FLAGS (and ccache, which
                # may serve objects built without it), ATOM's own switches
                "NVCC_", "CCACHE_", "ATOM_")
# Debuggers and profilers whose presence (and version) decides which captures can run.
DEBUG_TOOLS = ("ncu", "nsys", "cuda-gdb", "rocgdb", "py-spy")
_SECRET_KEY = re.compile(r"(?:^|_)(?:SECRET|TOKEN|PASSWORD|PASSWD|PASS|KEY|APIKEY|CREDENTIALS?|AUTH|COOKIE|"
                         r"PRIVATE|SIGNATURE)(?:_|$|S$)", re.IGNORECASE)
_SECRET_VALUE = re.compile(r"^(?:hf_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|"
                           r"xox[abpr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16})$")
_URL_CREDS = re.compile(r"(\w+://[^:/@\s]+:)[^@\s]+@")
PACKAGES = ("torch", "triton", "pytorch-triton-rocm", "vllm", "sglang", "sgl-kernel", "flashinfer-python",
            "flashinfer", "transformers", "numpy", "nvidia-nccl-cu12", "nvidia-cudnn-cu12", "jax", "deepspeed")


def probe(cmd: list[str], timeout: float = 5.0, env: dict | None = None) -> tuple[int | None, str, str]:
    """Run one probe. Returns (rc, stdout, stderr); rc None means not found or timed out."""
    exe = shutil.which(cmd[0], path=(env or os.environ).get("PATH")) if os.sep not in cmd[0] else cmd[0]
    if not exe:
        return None, "", f"{cmd[0]}: command not found"
    try:
        p = subprocess.Popen([exe, *cmd[1:]], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL, start_new_session=True, env=env)
    except OSError as e:  # SGLang's check_env misses this one (reference §3)
        return None, "", f"{cmd[0]}: {e.strerror or e}"
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        from dbglog.run import proctree

        proctree.kill_group(p)  # the whole group: a grandchild may hold the pipe
        try:
            p.communicate(timeout=2)
        except subprocess.TimeoutExpired:
            pass  # something in state D keeps the pipe; give up on it rather than hang
        return None, "", f"{cmd[0]}: timed out after {timeout:g}s"
    return p.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def _ok(rc, out):
    return out.strip() if rc == 0 and out.strip() else None


# --- probes (each returns a dict; keys with None mean "not available") ------------------------

def _os_info(timeout):
    pretty = None
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                pretty = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    libc = " ".join(x for x in platform.libc_ver() if x) or None
    return {"os": pretty or platform.platform(), "kernel": platform.release(), "arch": platform.machine(),
            "libc": libc}


def _cpu_info(timeout):
    model = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": model or platform.processor() or None, "cpu_count": os.cpu_count()}


def _git_info(timeout, cwd):
    def g(*a):
        return probe(["git", "-C", str(cwd), *a], timeout)
    rc, head, _ = g("rev-parse", "HEAD")
    if rc != 0:
        return {"git_commit": None, "git_branch": None, "git_dirty": None}
    rc2, br, _ = g("rev-parse", "--abbrev-ref", "HEAD")
    rc3, st, _ = g("status", "--porcelain", "--untracked-files=no")
    return {"git_commit": head.strip(), "git_branch": _ok(rc2, br),
            "git_dirty": bool(st.strip()) if rc3 == 0 else None}


def _nvidia(timeout):
    info = {"nvidia_gpus": None, "nvidia_driver": None, "cuda_driver_max": None, "nvidia_smi_error": None}
    rc, out, err = probe(["nvidia-smi", "--query-gpu=index,name,pci.bus_id,memory.total,compute_cap,driver_version",
                          "--format=csv,noheader"], timeout)
    if rc == 0:
        gpus = []
        for line in out.splitlines():
            parts = [p.strip() for p in line.split(",")]
            if len(parts) >= 6:
                gpus.append({"index": parts[0], "name": parts[1], "bus_id": parts[2], "memory": parts[3],
                             "compute_cap": parts[4], "driver": parts[5]})
        info["nvidia_gpus"] = gpus or None
        if gpus:
            info["nvidia_driver"] = gpus[0]["driver"]
    elif rc is None and "not found" not in err:
        info["nvidia_smi_error"] = err.strip()
    elif rc not in (None, 0):
        info["nvidia_smi_error"] = (err or out).strip()[:200] or f"nvidia-smi exited {rc}"
    if rc is not None:  # the header carries the driver's maximum CUDA version
        rc, out, _ = probe(["nvidia-smi"], timeout)
        m = re.search(r"CUDA Version: ([\d.]+)", out or "")
        info["cuda_driver_max"] = m.group(1) if m else None
        m = re.search(r"Driver Version: (\S+)", out or "")
        if m and not info["nvidia_driver"]:
            info["nvidia_driver"] = m.group(1)
    if not info["nvidia_driver"]:
        try:  # no NVML call, so it cannot hang on NVML
            m = re.search(r"Kernel Module\s+(?:for \S+\s+)?([\d.]+)", Path("/proc/driver/nvidia/version").read_text())
            info["nvidia_driver"] = m.group(1) if m else None
        except OSError:
            pass
    return info


def _nvcc(timeout):
    rc, out, _ = probe(["nvcc", "--version"], timeout)
    m = re.search(r"release .+ V(\S+)", out or "")
    return {"cuda_toolkit": m.group(1) if rc == 0 and m else None}


def _rocm(timeout):
    info = {"amd_gpus": None, "amd_driver": None, "gfx_arch": None, "rocm_version": None, "hip_version": None,
            "rocm_smi_error": None}
    rc, out, err = probe(["rocm-smi", "--showproductname", "--csv"], timeout)
    if rc == 0:
        gpus = []
        rows = [r for r in out.splitlines() if r.strip() and not r.startswith("=")]
        header = [h.strip() for h in rows[0].split(",")] if rows else []
        for row in rows[1:]:
            cells = dict(zip(header, [c.strip() for c in row.split(",")]))
            name = cells.get("Card Series") or cells.get("Card series") or cells.get("Card Model") or cells.get("Card model")
            if name or cells.get("GFX Version"):
                gpus.append({"device": cells.get("device"), "name": name, "gfx": cells.get("GFX Version")})
        info["amd_gpus"] = gpus or None
        gfx = sorted({g["gfx"] for g in gpus if g.get("gfx")})
        info["gfx_arch"] = ",".join(gfx) or None
    elif rc is None and "timed out" in err:
        info["rocm_smi_error"] = err.strip()
    if rc is not None:
        rc2, out2, _ = probe(["rocm-smi", "--showdriverversion", "--csv"], timeout)
        info["amd_driver"] = _csv_value(out2, "driver version") if rc2 == 0 else None
    if not info["amd_driver"]:
        try:
            info["amd_driver"] = Path("/sys/module/amdgpu/version").read_text().strip() or None
        except OSError:
            pass
    if not info["gfx_arch"]:
        rc, out, _ = probe(["rocminfo"], timeout)
        if rc == 0:
            gfx = sorted(set(re.findall(r"^\s*Name:\s+(gfx\w+)", out, re.MULTILINE)))
            info["gfx_arch"] = ",".join(gfx) or None
    rocm_path = os.environ.get("ROCM_PATH", "/opt/rocm")
    try:
        info["rocm_version"] = (Path(rocm_path) / ".info" / "version").read_text().strip() or None
    except OSError:
        pass
    rc, out, _ = probe(["hipcc", "--version"], timeout)
    m = re.search(r"HIP version: (\S+)", out or "")
    info["hip_version"] = m.group(1) if rc == 0 and m else None
    return info


def _topology(timeout):
    """How the GPUs are connected (NVLink / PCIe / NUMA affinity; XGMI hops on AMD), as the tools
    print it: the seeds' environment step (`nvidia-smi topo -m`, `rocm-smi --showtopo`). Raw text,
    cut at 6000 characters; absent when the tool is not installed or fails."""
    info = {}
    for key, cmd in (("nvidia_topology", ["nvidia-smi", "topo", "-m"]), ("amd_topology", ["rocm-smi", "--showtopo"])):
        rc, out, _ = probe(cmd, timeout)
        if rc == 0 and out.strip():
            info[key] = out.strip()[:6000]
    return info


def _version_line(text: str) -> str | None:
    """The first line of ``--version`` output that carries a dotted version number."""
    for line in (text or "").splitlines():
        if re.search(r"\d+\.\d+", line):
            return line.strip()[:120]
    return None


def _debug_tools(timeout, environ=None):
    """Versions of the debuggers and profilers, ``ulimit -c``, and the facts that decide whether
    a debugger will show source lines (``-lineinfo``) or attach at all (``HSA_TOOLS_LIB``)."""
    environ = os.environ if environ is None else environ
    tools = {}
    for t in DEBUG_TOOLS:
        exe = t
        beside = Path(sys.executable).parent / t  # pip install py-spy into dbglog's venv
        if not shutil.which(t) and beside.is_file():
            exe = str(beside)
        rc, out, err = probe([exe, "--version"], timeout)
        tools[t] = _version_line(out or err) if rc is not None else None
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_CORE)[0]
        core = "unlimited" if soft == resource.RLIM_INFINITY else str(soft)
    except (ImportError, ValueError, OSError):
        core = None
    nvcc_flags = " ".join(environ.get(k, "") for k in ("NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS"))
    ccache = any(k.startswith("CCACHE_") for k in environ) or "ccache" in environ.get("CMAKE_CUDA_COMPILER_LAUNCHER", "")
    facts = {"nvcc_lineinfo": "-lineinfo" in nvcc_flags.split(), "ccache": ccache,
             "hsa_tools_lib": redact_value("HSA_TOOLS_LIB", environ["HSA_TOOLS_LIB"]) if environ.get("HSA_TOOLS_LIB")
             else None, "ulimit_c": core}
    if facts["nvcc_lineinfo"] and ccache:
        facts["warning"] = ("ccache is configured: cached objects built before -lineinfo was added keep no line "
                            "table (clear the cache or set CCACHE_DISABLE=1 for the debug build)")
    return {"debug_tools": tools, "debug_facts": facts}


def _csv_value(text: str, column: str) -> str | None:
    """A value from rocm-smi CSV: either a header column (``device,Driver version`` then
    ``card0,6.8.5``) or a ``Driver version,6.8.5`` / ``Driver version: 6.8.5`` row."""
    rows = [r for r in (text or "").splitlines() if r.strip()]
    for r in rows:
        m = re.search(re.escape(column) + r'"?\s*[,:]\s*"?(\d[\w.\-]*)', r, re.IGNORECASE)
        if m:
            return m.group(1)
    if len(rows) >= 2:
        header = [h.strip().strip('"').lower() for h in rows[0].split(",")]
        if column in header:
            cells = [c.strip().strip('"') for c in rows[1].split(",")]
            i = header.index(column)
            if i < len(cells) and cells[i]:
                return cells[i]
    return None


def _packages_in_process():
    from importlib import metadata

    found = {}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
        except Exception:  # a broken dist-info must not break the snapshot
            continue
    return found


# Runs inside the repro's interpreter. It imports torch only if installed, and never calls into
# CUDA beyond version attributes unless asked (device names need a driver call, still a child).
_CHILD_PROBE = r'''
import json, sys, platform
from importlib import metadata
names = %(names)r
out = {"python": sys.version.split()[0], "python_executable": sys.executable, "packages": {}}
for n in names:
    try:
        out["packages"][n] = metadata.version(n)
    except Exception:
        pass
if %(torch)r and "torch" in out["packages"]:
    try:
        import torch
        out["torch_cuda_build"] = getattr(torch.version, "cuda", None)
        out["torch_hip_build"] = getattr(torch.version, "hip", None)
        out["torch_debug"] = getattr(torch.version, "debug", None)
        try:
            out["cudnn"] = torch.backends.cudnn.version()
        except Exception:
            pass
        if torch.cuda.is_available():
            n = torch.cuda.device_count()
            out["torch_devices"] = [torch.cuda.get_device_name(i) for i in range(n)]
            p = torch.cuda.get_device_properties(0)
            out["gcn_arch"] = getattr(p, "gcnArchName", None)
            out["capability"] = "%%d.%%d" %% torch.cuda.get_device_capability(0)
        else:
            out["torch_devices"] = []
    except Exception as e:
        out["torch_error"] = "%%s: %%s" %% (type(e).__name__, e)
print("DBGLOG_ENV_JSON" + json.dumps(out))
'''


def _python_child(python, timeout, torch_probe):
    code = _CHILD_PROBE % {"names": PACKAGES, "torch": bool(torch_probe)}
    rc, out, err = probe([python, "-c", code], timeout)
    for line in (out or "").splitlines():
        if line.startswith("DBGLOG_ENV_JSON"):
            try:
                return jsonsafe.loads(line[len("DBGLOG_ENV_JSON"):])
            except ValueError:
                break
    return {"python_probe_error": (err.strip().splitlines() or ["no output"])[-1][:200]}


def redact_value(key: str, value: str) -> str:
    if _SECRET_KEY.search(key) or _SECRET_VALUE.match(value or ""):
        return "<redacted>"
    return _URL_CREDS.sub(r"\1<redacted>@", value)


def relevant_env(environ: dict | None = None) -> dict:
    environ = os.environ if environ is None else environ
    return {k: redact_value(k, v) for k, v in sorted(environ.items()) if k.upper().startswith(ENV_PREFIXES)}


def collect(timeout: float = 5.0, python: str | None = None, *, cwd: str | Path | None = None,
            torch_probe: bool = True) -> dict:
    """Take the snapshot. ``python`` is the repro's interpreter: when given, package versions and
    torch build facts are probed in a child of it; otherwise versions come from this interpreter's
    package metadata only (no torch import). Never raises; missing facts are None."""
    cwd = Path(cwd) if cwd is not None else Path.cwd()
    snap: dict = {"python": sys.version.split()[0], "python_executable": sys.executable,
                  "dbglog_python": sys.executable}
    jobs = {
        "os": lambda: _os_info(timeout),
        "cpu": lambda: _cpu_info(timeout),
        "git": lambda: _git_info(timeout, cwd),
        "nvidia": lambda: _nvidia(timeout),
        "nvcc": lambda: _nvcc(timeout),
        "rocm": lambda: _rocm(timeout),
        "tools": lambda: _debug_tools(timeout),
        "topology": lambda: _topology(timeout),
    }
    if python:
        jobs["child"] = lambda: _python_child(python, timeout, torch_probe)
    errors = {}
    with ThreadPoolExecutor(max_workers=len(jobs)) as ex:
        futs = {k: ex.submit(f) for k, f in jobs.items()}
        for k, f in futs.items():
            try:
                # Each probe bounds itself; this outer bound covers probes that chain several calls.
                snap.update(f.result(timeout=timeout * 4 + 5))
            except Exception as e:  # a probe must never break the snapshot
                errors[k] = f"{type(e).__name__}: {e}"
    if python:
        pkgs = snap.pop("packages", None)
        snap["packages"] = pkgs if pkgs is not None else {}
        if "python_probe_error" not in snap:
            snap["python_probed"] = python
    else:
        snap["packages"] = _packages_in_process()
    snap["env"] = relevant_env()
    if errors:
        snap["probe_errors"] = errors
    return snap


# --- rendering --------------------------------------------------------------------------------

def _v(x):
    return NA if x in (None, "", [], {}) else x


def markdown_lines(snapshot: dict) -> list[str]:
    """Short ``- Key: value`` bullets for an investigation's Environment section."""
    s = snapshot
    lines = [_gpu_line(s)] + _driver_lines(s)
    pkgs = s.get("packages") or {}
    shown = [f"{k} {pkgs[k]}" for k in ("torch", "triton", "pytorch-triton-rocm", "vllm", "sglang", "sgl-kernel",
                                        "flashinfer-python", "flashinfer") if k in pkgs]
    if shown:
        lines.append("- Packages: " + ", ".join(shown))
    lines.append(f"- Python: {_v(s.get('python'))} ({_v(s.get('python_executable'))})")
    lines.append(f"- OS: {_v(s.get('os'))}, kernel {_v(s.get('kernel'))}, {_v(s.get('arch'))}")
    if s.get("cpu"):
        lines.append(f"- CPU: {s['cpu']} ({s.get('cpu_count')} cores)")
    if s.get("git_commit"):
        dirty = " (dirty)" if s.get("git_dirty") else ""
        lines.append(f"- Git: {s['git_commit'][:12]}{dirty} on {_v(s.get('git_branch'))}")
    lines += _debug_lines(s)
    env = s.get("env") or {}
    if env:
        items = [f"{k}={v}" for k, v in env.items()]
        more = f" (+{len(items) - 8} more)" if len(items) > 8 else ""
        lines.append("- Env: " + ", ".join(f"`{i}`" for i in items[:8]) + more)
    return lines


def _gpu_line(s: dict) -> str:
    """``- GPU: 8x NVIDIA H100 (sm_90)``: NVIDIA's, else AMD's, else torch's devices, else none."""
    gpus, amd = s.get("nvidia_gpus") or [], s.get("amd_gpus") or []
    if gpus or amd:
        names: dict[str, int] = {}
        for g in gpus or amd:
            if gpus:
                label = g["name"] + (f" (sm_{g['compute_cap'].replace('.', '')})" if g.get("compute_cap") else "")
            else:
                label = (g.get("name") or "AMD GPU") + (f" ({g['gfx']})" if g.get("gfx") else "")
            names[label] = names.get(label, 0) + 1
        return "- GPU: " + ", ".join(f"{n}x {k}" for k, n in names.items())
    if s.get("torch_devices"):
        return "- GPU: " + ", ".join(s["torch_devices"])
    return "- GPU: none detected"


def _driver_lines(s: dict) -> list[str]:
    lines = []
    if s.get("nvidia_driver") or s.get("cuda_driver_max"):
        lines.append(f"- NVIDIA driver: {_v(s.get('nvidia_driver'))} (supports CUDA {_v(s.get('cuda_driver_max'))})")
    if s.get("cuda_toolkit") or s.get("torch_cuda_build"):
        # Kept apart on purpose: the CUDA torch was built with, the toolkit on PATH, the driver's max.
        parts = []
        if s.get("torch_cuda_build"):
            parts.append(f"torch built with {s['torch_cuda_build']}")
        if s.get("cuda_toolkit"):
            parts.append(f"toolkit (nvcc) {s['cuda_toolkit']}")
        lines.append("- CUDA: " + "; ".join(parts))
    if any(s.get(k) for k in ("rocm_version", "hip_version", "torch_hip_build", "amd_driver", "gfx_arch", "gcn_arch")):
        lines.append(f"- ROCm: {_v(s.get('rocm_version'))}; HIP {_v(s.get('hip_version') or s.get('torch_hip_build'))}; "
                     f"amdgpu {_v(s.get('amd_driver'))}; arch {_v(s.get('gfx_arch') or s.get('gcn_arch'))}")
    for err_key in ("nvidia_smi_error", "rocm_smi_error"):
        if s.get(err_key):
            lines.append(f"- {err_key.split('_')[0]}-smi: {s[err_key]}")
    return lines


def _debug_lines(s: dict) -> list[str]:
    tools = {k: v for k, v in (s.get("debug_tools") or {}).items() if v}
    facts = s.get("debug_facts") or {}
    if not (tools or facts):
        return []
    parts = [f"-lineinfo {'yes' if facts.get('nvcc_lineinfo') else 'no'}", f"ulimit -c {_v(facts.get('ulimit_c'))}"]
    if facts.get("ccache"):
        parts.append("ccache configured")
    if facts.get("hsa_tools_lib"):
        parts.append(f"HSA_TOOLS_LIB={facts['hsa_tools_lib']}")
    if tools:
        parts.append("tools: " + ", ".join(f"{k} ({v})" for k, v in tools.items()))
    lines = ["- Debug: " + "; ".join(parts)]
    if facts.get("warning"):
        lines.append(f"- Warning: {facts['warning']}")
    return lines
