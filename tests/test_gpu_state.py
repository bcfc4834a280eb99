"""GPU state at failure time (issue 28): the gpu-state preset records each GPU's use and VRAM
(nvidia-smi's --query-gpu CSV, rocm-smi's GPU[N] lines) and the kernel log's amdgpu / xnack / Xid
lines stamped since the run started, and the run's evidence reads them."""
import os
import shutil
import sys
import time
from pathlib import Path

from conftest import REPROS
from dbglog.diagnose import evidence as E
from dbglog.diagnose import gpustate
from dbglog.run import runner

FAKE = Path(__file__).parent / "fixtures" / "fake_tools"


def test_the_query_csv_gives_use_and_vram_per_gpu():
    text = ("index, name, utilization.gpu [%], memory.used [MiB], memory.total [MiB]\n"
            "0, NVIDIA H100 80GB HBM3, 100 %, 80213 MiB, 81559 MiB\n1, NVIDIA H100 80GB HBM3, 0 %, 3 MiB, 81559 MiB\n")
    e = gpustate.parse_gpu_query(text)
    assert [(g["gpu"], g["use_pct"], g["vram_used_mib"]) for g in e["gpus"]] == [(0, 100, 80213), (1, 0, 3)]
    assert any("GPU 0 at 100% use" in f for f in e["findings"]) and any("nearly full" in f for f in e["findings"])
    assert gpustate.parse_gpu_query("index, name\n0, x\n") is None


def test_kernel_log_lines_before_the_run_are_left_out():
    log = ("2026-12-02T01:00:00,000000+00:00 amdgpu 0000:c3:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:8)\n"
           "2026-12-02T02:00:01,000000+00:00 amdgpu: xnack enabled\n"
           "2026-12-02T02:00:02,000000+00:00 NVRM: Xid (PCI:0000:18:00): 79, pid=1234, GPU has fallen off the bus.\n"
           "2026-12-02T02:00:03,000000+00:00 usb 1-1: new device\n")
    since = gpustate._stamp("2026-12-02T02:00:00+00:00 x")
    lines, older = gpustate.kernel_lines_since(log, since)
    assert older == 1 and [x.split(" ", 1)[1][:10] for x in lines] == ["amdgpu: xn", "NVRM: Xid "]


def test_a_hang_records_gpu_use_vram_and_the_kernel_log_since_it_started(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shutil.copy(FAKE / "nvidia-smi", bin_dir / "nvidia-smi")
    now = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() + 1))
    (bin_dir / "dmesg").write_text("#!/bin/sh\n"
                                   "echo '2020-01-01T00:00:00,000000+00:00 NVRM: Xid (PCI:0000:18:00): 13, old'\n"
                                   f"echo '{now},000000+00:00 NVRM: Xid (PCI:0000:18:00): 43, pid=77, name=python, "
                                   "Ch 00000008'\n")
    (bin_dir / "dmesg").chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir) + os.pathsep + os.environ["PATH"])
    r = runner.run([sys.executable, str(REPROS / "hang.py")], run_dir=tmp_path / runner.new_run_id(), timeout=1.0,
                   captures=["gpu-state"], echo=False, git_info=False, grace=1.0)
    caps = {c["name"]: c for c in r.captures}
    assert caps["gpu-state:nvidia-smi"]["status"] == "ok"
    assert caps["gpu-state:kernel-log"]["note"].startswith("1 amdgpu/xnack/Xid line(s) since the run started")
    kinds = {e["kind"]: e for e in r.evidence}
    assert "GPU 0 100% use, 80213/81559 MiB" in kinds["gpu-state"]["summary"]
    assert [x["xid"] for x in kinds["kernel-log"]["events"]] == [43]


def test_rocm_smi_summary_names_use_and_vram():
    text = ("======================= ROCm System Management Interface =======================\n"
            "GPU[0]\t\t: GPU use (%): 100\nGPU[0]\t\t: VRAM Total Memory (B): 34342961152\n"
            "GPU[0]\t\t: VRAM Total Used Memory (B): 7028736\n")
    assert "GPU[0] 100% use VRAM used 6 MiB" in E.parse_rocm_smi(text)["summary"]


def test_a_hang_takes_the_gpu_state_by_default_where_an_smi_tool_exists(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shutil.copy(FAKE / "nvidia-smi", bin_dir / "nvidia-smi")
    monkeypatch.setenv("PATH", str(bin_dir) + os.pathsep + os.environ["PATH"])
    r = runner.run([sys.executable, str(REPROS / "hang.py")], run_dir=tmp_path / runner.new_run_id(), timeout=1.0,
                   echo=False, git_info=False, grace=1.0)
    assert {c["name"]: c["status"] for c in r.captures}.get("gpu-state:nvidia-smi") == "ok"
    assert any(e["kind"] == "gpu-state" for e in r.evidence)


def test_the_environment_snapshot_keeps_the_gpu_topology(tmp_path, monkeypatch):
    from dbglog.run import envinfo

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shutil.copy(FAKE / "nvidia-smi", bin_dir / "nvidia-smi")
    monkeypatch.setenv("PATH", str(bin_dir) + os.pathsep + os.environ["PATH"])
    topo = envinfo._topology(5.0)
    assert "GPU0\t X \tNV12" in topo["nvidia_topology"] and "amd_topology" not in topo


def test_nvidia_smi_q_with_a_long_blank_line_is_read_in_linear_time():
    """A line of thousands of blanks (a pager's padding, a truncated capture) once split three ways by the
    key-value pattern: cubic in its length."""
    import time

    from dbglog.diagnose.smi import parse_nvidia_smi_q

    text = "==============NVSMI LOG==============\n\nGPU 00000000:17:00.0\n" + " " * 3000 + "x\n" + \
        "    Product Name                          : NVIDIA H100 80GB HBM3\n"
    t = time.process_time()
    parse_nvidia_smi_q(text)
    assert time.process_time() - t < 5.0
