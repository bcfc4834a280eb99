"""A container's record, `docker inspect` JSON (the Engine API's ContainerInspect object in an
array): how the container ended (status, exit code, OOMKilled, the daemon's error) and the settings
GPU jobs trip over (the /dev/shm size, the GPUs passed in, a memory limit)."""

from __future__ import annotations

from dbglog.util import jsonsafe

_DEFAULT_SHM = 64 << 20  # docker's /dev/shm without --shm-size or --ipc=host
_AMD_DEVICES = ("/dev/kfd", "/dev/dri")


def _first_container(text: str) -> dict | None:
    try:
        doc = jsonsafe.loads(text)
    except ValueError:
        return None
    if isinstance(doc, list):
        doc = doc[0] if doc else None
    if not isinstance(doc, dict) or not isinstance(doc.get("State"), dict):
        return None  # an image's, a network's record: no State
    return doc


def _gpus(host: dict) -> list[str]:
    """The GPUs handed to the container: --gpus (DeviceRequests) and AMD's device nodes (Devices)."""
    out = []
    for r in host.get("DeviceRequests") or []:
        caps = [c for group in (r.get("Capabilities") or []) for c in (group or [])]
        if "gpu" in caps or r.get("Driver") == "nvidia":
            ids = r.get("DeviceIDs") or []
            count = r.get("Count")
            out.append("--gpus " + (",".join(ids) if ids else "all" if count == -1 else str(count)))
    amd = sorted({d.get("PathOnHost", "") for d in host.get("Devices") or []
                  if str(d.get("PathOnHost", "")).startswith(_AMD_DEVICES)})
    if amd:
        out.append("devices " + ", ".join(amd))
    return out


def _exit_findings(state: dict) -> list[str]:
    code, oom = state.get("ExitCode"), bool(state.get("OOMKilled"))
    out = []
    if oom:
        out.append("OOMKilled: a process in the container was killed by the OOM killer at the container's memory "
                   "limit (HostConfig.Memory) or the host's")
    elif code == 137:
        out.append("exit code 137 = SIGKILL from outside the process (docker stop's timeout, docker kill, the "
                   "host's OOM killer), not an OOMKilled container")
    elif code == 139:
        out.append("exit code 139 = SIGSEGV in the container's main process")
    if state.get("Error"):
        out.append(f"docker: {state['Error']}")
    return out


def _setting_findings(host: dict) -> list[str]:
    out = []
    shm, ipc = host.get("ShmSize"), str(host.get("IpcMode") or "")
    if ipc != "host" and isinstance(shm, int) and 0 < shm <= _DEFAULT_SHM:
        out.append(f"/dev/shm is {shm >> 20} MiB (docker's default is 64 MiB): NCCL's shared-memory transport and "
                   "DataLoader workers need more (--ipc=host or --shm-size)")
    gpus = _gpus(host)
    if gpus:
        out.append("GPUs passed in: " + "; ".join(gpus))
    else:
        out.append("no GPU passed in (no --gpus, no /dev/kfd or /dev/dri device): the repro inside sees no GPU "
                   "unless the runtime adds them")
    mem = host.get("Memory")
    if isinstance(mem, int) and mem > 0:
        out.append(f"memory limit {mem / (1 << 30):.1f} GiB")
    return out


def parse_docker_inspect(text: str | bytes) -> dict | None:
    """Evidence from `docker inspect CONTAINER` output; None when the text is no container's record."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    c = _first_container(text.strip())
    if c is None:
        return None
    state, host, cfg = c["State"], c.get("HostConfig") or {}, c.get("Config") or {}
    name = str(c.get("Name") or c.get("Id", "")[:12]).lstrip("/")
    image = cfg.get("Image") or c.get("Image")
    status, code, oom = state.get("Status"), state.get("ExitCode"), bool(state.get("OOMKilled"))
    summary = f"container {name} ({image}): {status}"
    if status not in ("running", "created"):
        summary += f", exit code {code}"
    if oom:
        summary += ", OOM-killed"
    findings = _exit_findings(state) + _setting_findings(host)
    if c.get("RestartCount"):
        findings.append(f"restarted {c['RestartCount']} time(s) by its restart policy")
    return {"kind": "docker", "container": name, "image": image, "status": status, "exit_code": code,
            "oom_killed": oom, "shm_bytes": host.get("ShmSize"), "ipc_mode": host.get("IpcMode"),
            "gpus": _gpus(host), "started": state.get("StartedAt"), "finished": state.get("FinishedAt"),
            "summary": summary, "findings": findings}
