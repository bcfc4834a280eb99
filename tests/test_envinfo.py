"""Environment snapshot: degrades without GPU tools, parses real-format tool output, times out
on a hung tool without leaving it running, redacts secrets, never imports torch in-process."""
import json
import os
import stat
import sys
import time
from pathlib import Path

import pytest

from conftest import assert_none_alive
from dbglog.run import envinfo

NVIDIA_QUERY = """\
0, NVIDIA H100 80GB HBM3, 00000000:18:00.0, 81559 MiB, 9.0, 550.54.15
1, NVIDIA H100 80GB HBM3, 00000000:2A:00.0, 81559 MiB, 9.0, 550.54.15
"""
NVIDIA_PLAIN = """\
Sat Nov 21 08:30:00 2026
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
"""
ROCM_PRODUCT = """\
device,Card Series,Card Model,Card Vendor,Card SKU,Subsystem ID,Device Rev,Node ID,GUID,GFX Version
card0,AMD Instinct MI300X OAM,0x74a1,Advanced Micro Devices Inc. [AMD/ATI],M3000100,0x74a1,0x00,2,28851,gfx942
card1,AMD Instinct MI300X OAM,0x74a1,Advanced Micro Devices Inc. [AMD/ATI],M3000100,0x74a1,0x00,3,51499,gfx942
"""
ROCM_DRIVER = "device,Driver version\ncard0,6.8.5\n"
ROCMINFO = "*******\nAgent 2\n*******\n  Name:                    gfx942\n  Marketing Name:          AMD Instinct MI300X\n"


def _tool(d: Path, name: str, script: str) -> None:
    p = d / name
    p.write_text("#!/bin/sh\n" + script)
    p.chmod(p.stat().st_mode | stat.S_IEXEC)


def _dispatch(cases: dict[str, str]) -> str:
    """A shell tool that prints canned output depending on its first argument."""
    lines = ['case "$1" in']
    for arg, out in cases.items():
        lines.append(f"  {arg}) cat <<'EOT'\n{out}EOT\n  ;;")
    lines.append("esac\n")
    return "\n".join(lines)


@pytest.fixture
def bare_path(tmp_path, monkeypatch):
    """PATH with only the basics (sh, git) and a directory for fake tools."""
    fake = tmp_path / "bin"
    fake.mkdir()
    monkeypatch.setenv("PATH", f"{fake}:/usr/bin:/bin")
    monkeypatch.setenv("ROCM_PATH", str(tmp_path / "no-rocm"))
    return fake


def test_no_gpu_tools_degrades(bare_path):
    snap = envinfo.collect(timeout=30)  # (a bound on a broken tool: the load may stretch a working one)
    for k in ("nvidia_gpus", "nvidia_driver", "cuda_driver_max", "cuda_toolkit", "amd_gpus", "gfx_arch", "hip_version"):
        assert snap[k] is None, k
    assert snap["python"] == sys.version.split()[0] and snap["os"] and snap["cpu_count"]
    json.dumps(snap)
    lines = envinfo.markdown_lines(snap)
    assert lines[0] == "- GPU: none detected"
    assert all(line.startswith("- ") and ": " in line for line in lines)


def test_fake_nvidia_smi_real_format(bare_path):
    _tool(bare_path, "nvidia-smi", _dispatch({"--query-gpu=*": NVIDIA_QUERY, '""': NVIDIA_PLAIN}))
    _tool(bare_path, "nvcc", "echo 'nvcc: NVIDIA (R) Cuda compiler driver'\n"
                              "echo 'Cuda compilation tools, release 12.4, V12.4.131'\n")
    snap = envinfo.collect(timeout=30)
    assert [g["name"] for g in snap["nvidia_gpus"]] == ["NVIDIA H100 80GB HBM3"] * 2
    assert snap["nvidia_gpus"][0]["compute_cap"] == "9.0"
    assert snap["nvidia_driver"] == "550.54.15"
    assert snap["cuda_driver_max"] == "12.4"  # kept apart from the toolkit version
    assert snap["cuda_toolkit"] == "12.4.131"
    md = "\n".join(envinfo.markdown_lines(snap))
    assert "- GPU: 2x NVIDIA H100 80GB HBM3 (sm_90)" in md
    assert "- NVIDIA driver: 550.54.15 (supports CUDA 12.4)" in md
    assert "toolkit (nvcc) 12.4.131" in md


def test_fake_rocm_smi_real_format(bare_path):
    _tool(bare_path, "rocm-smi", _dispatch({"--showproductname": ROCM_PRODUCT, "--showdriverversion": ROCM_DRIVER}))
    _tool(bare_path, "rocminfo", f"cat <<'EOT'\n{ROCMINFO}EOT\n")
    _tool(bare_path, "hipcc", "echo 'HIP version: 6.2.41133-dd7f95766'\necho 'AMD clang version 18.0.0'\n")
    snap = envinfo.collect(timeout=30)
    assert [g["name"] for g in snap["amd_gpus"]] == ["AMD Instinct MI300X OAM"] * 2
    assert snap["gfx_arch"] == "gfx942" and snap["amd_driver"] == "6.8.5"
    assert snap["hip_version"] == "6.2.41133-dd7f95766"
    md = "\n".join(envinfo.markdown_lines(snap))
    assert "- GPU: 2x AMD Instinct MI300X OAM (gfx942)" in md and "arch gfx942" in md


def test_hung_nvidia_smi_times_out_and_is_killed(bare_path, pid_dir):
    # The tool's own child hangs holding the pipe: subprocess.run(timeout=) would block on it.
    _tool(bare_path, "nvidia-smi", f'sleep 60 & echo $! > "{pid_dir}/$!.pid"; echo $$ > "{pid_dir}/$$.pid"; wait\n')
    t = time.monotonic()
    snap = envinfo.collect(timeout=1)
    assert time.monotonic() - t < 30  # the tool was stopped, not waited for: nowhere near its 60 s, whatever the load
    assert snap["nvidia_gpus"] is None
    assert "timed out" in snap["nvidia_smi_error"]
    assert any("nvidia-smi: timed out" in line for line in envinfo.markdown_lines(snap))
    assert_none_alive(pid_dir)


def test_python_child_probe_and_missing_interpreter(bare_path, tmp_path):
    snap = envinfo.collect(timeout=10, python=sys.executable)
    assert snap["python_executable"] == sys.executable and snap.get("python_probed") == sys.executable
    assert isinstance(snap["packages"], dict)
    assert "torch" not in sys.modules  # never imported in-process
    snap = envinfo.collect(timeout=2, python=str(tmp_path / "no-python"))
    assert "python_probe_error" in snap and snap["packages"] == {}


def test_env_vars_filtered_and_redacted(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    monkeypatch.setenv("NCCL_DEBUG", "INFO")
    monkeypatch.setenv("VLLM_API_KEY", "abc123")
    monkeypatch.setenv("HF_TOKEN", "hf_abcdefghijklmnopqrstuvwxyz")
    monkeypatch.setenv("TORCH_HUB_TOKEN", "x")
    monkeypatch.setenv("NCCL_SOCKET_IFNAME", "eth0")
    monkeypatch.setenv("SGLANG_KERNEL_API_LOGLEVEL", "3")
    monkeypatch.setenv("VLLM_REMOTE_URL", "https://user:s3cret@host/x")
    monkeypatch.setenv("TORCH_WEIRD", "sk-abcdefghijklmnopqrstu")
    env = envinfo.relevant_env()
    assert env["CUDA_VISIBLE_DEVICES"] == "0,1" and env["NCCL_DEBUG"] == "INFO"
    assert env["SGLANG_KERNEL_API_LOGLEVEL"] == "3" and env["NCCL_SOCKET_IFNAME"] == "eth0"
    assert env["VLLM_API_KEY"] == "<redacted>" and env["TORCH_HUB_TOKEN"] == "<redacted>"
    assert env["TORCH_WEIRD"] == "<redacted>"
    assert env["VLLM_REMOTE_URL"] == "https://user:<redacted>@host/x"
    assert "HF_TOKEN" not in env  # not a relevant prefix at all


def test_git_fields(tmp_path):
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "f").write_text("x")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(["git", "-C", str(tmp_path), "add", "f"], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "commit", "-qm", "x"], check=True, env=env)
    snap = envinfo.collect(timeout=30, cwd=tmp_path)
    assert len(snap["git_commit"]) == 40 and snap["git_dirty"] is False
    (tmp_path / "f").write_text("y")
    assert envinfo.collect(timeout=30, cwd=tmp_path)["git_dirty"] is True
    assert envinfo.collect(timeout=30, cwd=tmp_path / ".git")["git_commit"] in (None, snap["git_commit"])


def test_markdown_lines_on_sparse_snapshot():
    assert envinfo.markdown_lines({})[0] == "- GPU: none detected"
    lines = envinfo.markdown_lines({"torch_cuda_build": "12.1", "packages": {"torch": "2.3.0", "triton": "2.3.0"}})
    assert "- CUDA: torch built with 12.1" in lines
    assert "- Packages: torch 2.3.0, triton 2.3.0" in lines
