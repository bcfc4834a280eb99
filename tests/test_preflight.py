"""Pre-flight and hygiene (dbglog/run/preflight.py), the extended environment snapshot (envinfo) and
the nccl-fr flight-recorder capture (dbglog/run/flightrec.py). GPU tools are the fakes in
tests/fixtures/fake_tools (documented output formats); no GPU is needed."""

from __future__ import annotations

import json
import os
import resource
import stat
import sys
from pathlib import Path

import pytest

from conftest import run_cli
from dbglog.run import envinfo, flightrec, preflight, runner

PY = sys.executable
FAKES = Path(__file__).resolve().parent / "fixtures" / "fake_tools"


@pytest.fixture
def fake_gpu(tmp_path, monkeypatch):
    """Fake nvidia-smi and rocm-smi on PATH; the returned file lists 'pid name MiB' GPU processes."""
    procs = tmp_path / "gpu_procs"
    procs.write_text("")
    monkeypatch.setenv("PATH", f"{FAKES}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_GPU_PROCS", str(procs))
    return procs


def test_stale_gpu_processes_are_infra_tainted_evidence(workdir, fake_gpu):
    fake_gpu.write_text("4242 python3 20480\n")
    r = run_cli("run", "--json", "--", PY, "-c", "pass", cwd=workdir,
                env={"PATH": os.environ["PATH"], "FAKE_GPU_PROCS": str(fake_gpu)})
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["preflight"]["gpu_tools"] == ["nvidia-smi", "rocm-smi"]
    ev = [e for e in d["evidence"] if e["kind"] == "infra_tainted"]
    assert len(ev) == 1 and "4242 python3 (20480 MiB)" in ev[0]["summary"]
    assert {p["tool"] for p in ev[0]["processes"]} == {"nvidia-smi", "rocm-smi"}
    assert d["outcome"] == "pass"  # reported, not a verdict


def test_no_gpu_tool_no_gpu_report(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    assert preflight.check() == {"gpu_tools": [], "gpu_processes": []}
    assert preflight.wait_gpu_released({1}, timeout=5)["checked"] is False


def test_wait_gpu_released_polls_until_our_pids_are_gone(fake_gpu):
    fake_gpu.write_text("999999 python3 100\n")
    held = preflight.wait_gpu_released({999999}, timeout=0.6, interval=0.1)
    assert held["released"] is False and held["still"][0]["pid"] == 999999 and held["waited_s"] >= 0.6
    fake_gpu.write_text("")
    assert preflight.wait_gpu_released({999999}, timeout=5)["released"] is True


def test_parsers_read_the_documented_formats():
    nv = preflight.parse_nvidia_apps("12345, /usr/bin/python3, 20480 MiB\n67, vllm, [N/A]\n")
    assert [(p["pid"], p["memory"]) for p in nv] == [(12345, "20480 MiB"), (67, "[N/A]")]
    rocm = ("KFD process information:\nPID\tPROCESS NAME\tGPU(s)\tVRAM USED\tSDMA USED\tCU OCCUPANCY\n"
            "12345\tpython3\t1\t2147483648\t0\t0\n")
    assert preflight.parse_rocm_pids(rocm)[0]["pid"] == 12345
    assert preflight.parse_rocm_pids("No KFD PIDs currently running") == []


def test_core_limit_is_0_for_the_repro_unless_core_dumps(tmp_path):
    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    want = 1 << 20 if hard == resource.RLIM_INFINITY else hard
    if want == 0:
        pytest.skip("the hard core limit is 0 here")
    code = "import resource; print('core=%d' % resource.getrlimit(resource.RLIMIT_CORE)[0])"
    resource.setrlimit(resource.RLIMIT_CORE, (want, hard))
    try:
        off = runner.run([PY, "-c", code], run_dir=tmp_path / "a", echo=False, git_info=False)
        on = runner.run([PY, "-c", code], run_dir=tmp_path / "b", echo=False, git_info=False, core_dumps=True)
        assert resource.getrlimit(resource.RLIMIT_CORE)[0] == want  # ours is restored
    finally:
        resource.setrlimit(resource.RLIMIT_CORE, (soft, hard))
    assert "core=0" in open(off.paths["output"]).read() and off.preflight["core_limit"] == 0
    assert f"core={want}" in open(on.paths["output"]).read() and on.preflight["core_limit"] is None


def test_environment_snapshot_has_the_evidence_facts(tmp_path, monkeypatch):
    ncu = tmp_path / "ncu"
    ncu.write_text("#!/bin/sh\necho 'NVIDIA (R) Nsight Compute Command Line Profiler'\n"
                   "echo 'Copyright (c) 2018-2024 NVIDIA Corporation'\necho 'Version 2024.1.0.0 (build 33681293)'\n")
    ncu.chmod(ncu.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    environ = {"NVCC_PREPEND_FLAGS": "-lineinfo -O3", "CCACHE_DIR": "/cache", "ATOM_USE_TRITON": "1",
               "ATOM_API_KEY": "abc123", "SGLANG_KERNEL_API_LOGLEVEL": "3", "TORCH_NCCL_DUMP_ON_TIMEOUT": "1",
               "VLLM_LOGGING_LEVEL": "DEBUG", "HSA_TOOLS_LIB": "/opt/rocm/lib/librocm-debug-agent.so.2",
               "HOME": "/root"}
    env = envinfo.relevant_env(environ)
    assert env["NVCC_PREPEND_FLAGS"] == "-lineinfo -O3" and env["CCACHE_DIR"] == "/cache"
    assert env["ATOM_USE_TRITON"] == "1" and env["ATOM_API_KEY"] == "<redacted>" and "HOME" not in env
    assert {"SGLANG_KERNEL_API_LOGLEVEL", "TORCH_NCCL_DUMP_ON_TIMEOUT", "VLLM_LOGGING_LEVEL", "HSA_TOOLS_LIB"} <= set(env)
    snap = envinfo._debug_tools(5, environ)
    assert snap["debug_tools"]["ncu"] == "Version 2024.1.0.0 (build 33681293)"
    facts = snap["debug_facts"]
    assert facts["nvcc_lineinfo"] is True and facts["ccache"] is True and "ccache" in facts["warning"]
    assert facts["ulimit_c"] is not None and facts["hsa_tools_lib"].endswith("debug-agent.so.2")
    lines = "\n".join(envinfo.markdown_lines({**snap, "python": "3.11"}))
    assert "-lineinfo yes" in lines and "ncu (Version 2024.1.0.0" in lines and "Warning: ccache" in lines


# --- nccl-fr -------------------------------------------------------------------------------------

LOGGER_REPORT = """Not all ranks joining collective 5 at entry 4
group info: 0:default_pg
collective: nccl:all_reduce
missing ranks: {1, 3}
input sizes: [[3, 4]]
collective state: scheduled
"""
PRINT_REPORT = ("Not all ranks joining collective for group 0:default_pg collective nccl:broadcast  "
                "Missing ranks are {2}  [[3, 4]] [[3, 4]] 4 scheduled\n")


def test_fr_trace_verdicts_in_both_report_styles():
    v = flightrec.parse_verdict(LOGGER_REPORT)
    assert v["collective"] == "nccl:all_reduce" and v["missing_ranks"] == [1, 3] and v["group"] == "0:default_pg"
    v2 = flightrec.parse_verdict(PRINT_REPORT)
    assert v2["collective"] == "nccl:broadcast" and v2["missing_ranks"] == [2]
    assert flightrec.parse_verdict("all collectives matched") is None
    assert "rank(s) 1, 3" in flightrec.evidence(v)["summary"]


def test_nccl_fr_arms_the_run_and_collects_the_rank_dumps(tmp_path):
    """The repro stands in for two ranks whose watchdog fired: it checks the variables and writes
    <prefix><rank>; torch is not installed here, so the analyzer step says how to run it."""
    code = ("import os\nassert os.environ['TORCH_NCCL_DUMP_ON_TIMEOUT'] == '1'\n"
            "assert int(os.environ['TORCH_NCCL_TRACE_BUFFER_SIZE']) > 0\n"
            "p = os.environ['TORCH_NCCL_DEBUG_INFO_TEMP_FILE']\n"
            "for r in (0, 1):\n    open(p + str(r), 'wb').write(b'pickle')\nraise SystemExit(1)\n")
    r = runner.run([PY, "-c", code], run_dir=tmp_path / "run", captures=["nccl-fr"], echo=False, git_info=False)
    assert r.outcome == "fail", open(r.paths["output"]).read()
    fr = [c for c in r.captures if c["name"] == "nccl-fr"]
    assert fr and fr[0]["status"] == "ok" and len(fr[0]["dumps"]) == 2
    if not flightrec.torch_importable():
        assert any(c["name"] == "nccl-fr:fr_trace" and c["status"] == "missing" for c in r.captures)


def test_the_analyzer_verdict_goes_on_the_run(tmp_path):
    (tmp_path / f"{flightrec.DUMP_PREFIX}0").write_bytes(b"x")
    fake_python = tmp_path / "python"
    fake_python.write_text("#!/bin/sh\ncat <<'EOF'\n" + LOGGER_REPORT + "EOF\n")
    fake_python.chmod(0o755)
    caps, verdict = flightrec.collect(tmp_path, python=str(fake_python))
    assert verdict["missing_ranks"] == [1, 3]
    assert [c["status"] for c in caps] == ["ok", "ok"] and caps[1]["path"].endswith("fr_trace.txt")
