"""Evidence and advice end to end: `dbglog run` on real processes whose output carries debugger
dumps (and fake cuda-gdb / nvdisasm / cuobjdump / rocgdb on PATH), the run record (`runs show`,
`--json`, evidence.json), the attempt that quotes it, and the advice added to the investigation's
next steps exactly once."""
import json
import os
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import REPROS

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus" / "logs"
FAKE = HERE / "fixtures" / "fake_tools"
DATA = FAKE / "data"


def _emit(workdir, name, text, code="1"):
    f = workdir / f"{name}.txt"
    f.write_text(text)
    return [sys.executable, str(REPROS / "emit.py"), str(f), code]


def _next_steps(dbg):
    code, out, _ = dbg("next", "list", "--json")
    assert code == 0
    data = json.loads(out)
    return data if isinstance(data, list) else data.get("next_steps", data.get("steps", []))


def test_debug_agent_dump_becomes_evidence_attempt_quote_and_advice_once(dbg, workdir):
    dbg("new", "index_copy assert on MI300", "--no-env")
    cmd = _emit(workdir, "dump", (CORPUS / "debug_agent_assert_trap_index_copy.log").read_text())
    code, out, err = dbg("run", "--json", "--quiet", "--attempt", "baseline under rocm-debug-agent", "--", *cmd)
    assert code == 1, err
    d = json.loads(out)
    assert d["signature"] == "rocm.assert_trap"
    ev = next(e for e in d["evidence"] if e["kind"] == "rocm-debug-agent")
    assert ev["reason"] == "ASSERT_TRAP" and ev["op"]["op"] == "Tensor.index_copy_(dim, index, source)"
    assert ev["pc"] == "0x7f20f5e534c4" and "index_copy_kernel_impl" in ev["kernel"]
    run_dir = Path(d["paths"]["output"]).parent
    assert json.loads((run_dir / "evidence.json").read_text())[0]["kind"] == "rocm-debug-agent"
    # the attempt quotes it
    assert "evidence: rocm-debug-agent: ASSERT_TRAP in at::native::index_elementwise_kernel" in d["attempt"]["result"]
    assert "Tensor.index_copy_" in d["attempt"]["result"]
    # the advice is a next step, once
    assert [a["text"] for a in d["advice"]][0].startswith("Check the index bound 0 <= idx < size(dim) for "
                                                          "Tensor.index_copy_(dim, index, source) on a 4-byte dtype")
    steps = _next_steps(dbg)
    n = len(steps)
    assert any("[advice:assert-trap-index-bound]" in s["detail"] for s in steps)
    code, out, _ = dbg("run", "--json", "--quiet", "--attempt", "again", "--", *cmd)
    assert json.loads(out)["advice"] == [] and len(_next_steps(dbg)) == n
    # runs show: human and JSON
    code, out, _ = dbg("runs", "show", d["id"])
    assert "evidence: rocm-debug-agent: ASSERT_TRAP" in out
    code, out, _ = dbg("runs", "show", d["id"], "--json")
    assert json.loads(out)["evidence"][0]["reason"] == "ASSERT_TRAP"
    md = next((workdir / "logs").glob("*.md")).read_text()
    assert "evidence: rocm-debug-agent" in md and "Check the index bound" in md


def test_launch_blocking_makes_it_vanish_gives_a_racer_bisection(dbg, workdir):
    dbg("new", "illegal address that comes and goes", "--no-env")
    (workdir / "repro.py").write_text(textwrap.dedent("""
        import os, sys
        if os.environ.get("CUDA_LAUNCH_BLOCKING") != "1":
            print("RuntimeError: CUDA error: an illegal memory access was encountered", file=sys.stderr)
            sys.exit(1)
        print("ok")
    """))
    code, out, _ = dbg("run", "--json", "--quiet", "--attempt", "baseline", "--", sys.executable, "repro.py")
    assert code == 1
    assert not any(a["text"].startswith("The kernel at the fault may be the victim") for a in json.loads(out)["advice"])
    code, out, _ = dbg("run", "--json", "--quiet", "--attempt", "serialized", "--env", "CUDA_LAUNCH_BLOCKING=1", "--",
                       sys.executable, "repro.py")
    assert code == 0
    texts = [a["text"] for a in json.loads(out)["advice"]]
    racer = next(t for t in texts if "victim of a race" in t)
    assert f"dbglog bisect toggles --suspects . --timeout 60 -- {sys.executable} repro.py" in racer


def test_synchronize_fix_is_flagged_as_a_workaround(dbg, workdir):
    dbg("new", "race in decode", "--no-env")
    code, out, _ = dbg("run", "--json", "--quiet", "--attempt", "add torch.cuda.synchronize() before index_copy_",
                       "-H", "a race between the side stream and index_copy_", "--", sys.executable, "-c", "pass")
    d = json.loads(out)
    assert d["attempt"]["outcome"] == "worked"
    assert d["attempt"]["conclusion"].startswith("Workaround, not a fix")
    assert any("workaround, not a fix" in a["text"] for a in d["advice"])


@pytest.fixture
def fake_tools_on_path(tmp_path, monkeypatch):
    d = tmp_path / "bin"
    d.mkdir()
    for n in ("cuda-gdb", "nvdisasm", "cuobjdump", "rocgdb"):
        shutil.copy(FAKE / n, d / n)
    monkeypatch.setenv("PATH", str(d) + os.pathsep + os.environ["PATH"])
    (tmp_path / "t").mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "t"))
    return d


def test_cuda_core_dump_in_a_run_resolves_the_inline_chain(dbg, workdir, fake_tools_on_path, tmp_path):
    core = tmp_path / "cuda_coredump_host.42.1"
    core.write_text(json.dumps({
        "exception": "Warp Illegal Address", "errorpc": "0x7ff533bb91d0", "offset": 11472,
        "kernel": "void at::native::index_elementwise_kernel<128, 4>(long)",
        "mangled": "_ZN2at6native24index_elementwise_kernelILi128ELi4EZNS0_16gpu_index_kernelIZNS0_17index_kernel_implI"
                   "NS0_10OpaqueTypeILi1EEEEEvRNS_18TensorIteratorBaseEN3c108ArrayRefIlEESA_EUlPcPKclE_EEvS7_SA_SA_RKT_"
                   "bEUliE_EEvlT1_",
        "listing": str(DATA / "index_kernel.nvdisasm")}))
    out_text = ("[06:43:15.209195] coredump: Detected an exception of type CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS (14)\n"
                "[06:43:15.209210] coredump:   - PC 0x7ff533bb91d0\n"
                f"[06:43:15.406153] coredump: Writing ELF file to {core}\n")
    dbg("new", "IMA in index kernel", "--no-env")
    code, out, err = dbg("run", "--json", "--quiet", "--attempt", "with core dump", "--",
                         *_emit(workdir, "progress", out_text, "sig6"))
    d = json.loads(out)
    chain = next(e for e in d["evidence"] if e["kind"] == "cuda-core-chain")
    assert chain["status"] == "ok" and chain["function_index"] == "26a"
    assert chain["chain"][0]["line"] == 203 and chain["chain"][0]["inlined_at"].endswith("IndexKernel.cu:118")
    assert "IndexKernel.cu:203 (inlined at" in d["attempt"]["result"]
    assert d["signature"] == "gpu.illegal_address"
    assert not any("Name the faulting kernel with a CUDA core dump" in a["text"] for a in d["advice"])


def test_missing_cuda_gdb_is_said_plainly_in_the_run(dbg, workdir, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + "/usr/bin:/bin")
    core = tmp_path / "core.1"
    core.write_text("{}")
    text = ("coredump: Detected an exception of type CUDBG_EXCEPTION_LANE_USER_STACK_OVERFLOW (2)\n"
            f"coredump: Writing ELF file to {core}\n")
    dbg("new", "stack overflow", "--no-env")
    code, out, _ = dbg("run", "--json", "--quiet", "--attempt", "x", "--", *_emit(workdir, "p", text))
    d = json.loads(out)
    assert d["signature"] == "gpu.stack_overflow"
    chain = next(e for e in d["evidence"] if e["kind"] == "cuda-core-chain")
    assert chain["status"] == "missing-tool" and "cuda-gdb is not installed" in chain["summary"]
    assert any(a["text"].startswith("Resolve the core dump's faulting PC") for a in d["advice"])


def test_rocgdb_on_hang_capture_becomes_evidence_and_deadlock_advice(dbg, workdir, fake_tools_on_path, monkeypatch,
                                                                     pid_dir):
    monkeypatch.setenv("FAKE_ROCGDB_STATE", str(DATA / "rocgdb_state.txt"))
    dbg("new", "MoE hang at 100% GPU", "--no-env")
    code, out, err = dbg("run", "--json", "--quiet", "--timeout", "2", "--grace", "1", "--attempt", "hang capture",
                         "--on-hang", "rocgdb -p {pid} -batch -ex 'info agents' -ex 'info dispatches' "
                                      "-ex 'info queues' -ex 'info threads'",
                         "--", sys.executable, str(REPROS / "hang.py"))
    assert code == 124, err
    d = json.loads(out)
    ev = next(e for e in d["evidence"] if e["kind"] == "rocgdb")
    assert ev["source"].endswith("on_hang.1.txt")
    assert any("shared-workspace deadlock" in f for f in ev["findings"])
    texts = [a["text"] for a in d["advice"]]
    assert any(t.startswith("Make the split-K workspace per stream") for t in texts)
    assert any(t.startswith("Find what the spinning kernel waits for") for t in texts)


def test_user_advice_rule_from_config(dbg, workdir):
    dbg("new", "my app", "--no-env")
    cfg = workdir / ".dbglog" / "config.toml"
    cfg.write_text(cfg.read_text() if cfg.exists() else "")
    with open(cfg, "a") as f:
        f.write('\n[[advice]]\nid = "kv-check"\nwhen = { signature = "py.traceback:KeyError" }\n'
                'step = "Check the KV cache block table for {signature} in: {cmd}"\n')
    cmd = [sys.executable, "-c", "d = {}; d['w']"]
    code, out, _ = dbg("run", "--json", "--quiet", "--attempt", "x", "--", *cmd)
    adv = json.loads(out)["advice"]
    assert adv[0]["text"].startswith("Check the KV cache block table for py.traceback:KeyError in: ")
    with open(cfg, "a") as f:
        f.write('\n[[advice]]\nid = "bad id!"\nstep = "x"\n')
    code, out, err = dbg("run", "--quiet", "--attempt", "y", "--", *cmd)
    assert code != 0 and "advice" in err
    code, out, _ = dbg("runs", "list", "--json")
    assert len(json.loads(out)) == 1  # refused before running: the bad rule did not cost a run


def test_signature_test_shows_evidence_of_a_pasted_dump(dbg, workdir):
    log = workdir / "agent.log"
    log.write_text((CORPUS / "debug_agent_assert_trap_docs.log").read_text())
    code, out, _ = dbg("signature", "test", str(log), "--json")
    d = json.loads(out)
    assert d["signature"]["name"] == "rocm.assert_trap" and d["warnings"] == []
    assert d["evidence"][0]["kernel"] == "vector_add_assert_trap(int*, int*, int*)"
    code, out, _ = dbg("signature", "test", str(log))
    assert "evidence: rocm-debug-agent: ASSERT_TRAP in vector_add_assert_trap at pc 0x7fd4f100d0e8" in out
