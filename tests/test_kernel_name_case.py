"""A kernel named by a CUDA core dump's progress lines keeps its exact case everywhere it goes:
the evidence, the run's files, the record read back, `signature test`, the fingerprint (a
lower-cased mangled name can be neither demangled nor found in `cuobjdump -elf`)."""

import json

from conftest import run_cli

MANGLED = "_ZN2at6native24index_elementwise_kernelILi128ELi4EZNS0_22gpu_index_kernelIZNS0_17index_kernel_implINS0_10OpaqueTypeILi4EEEEEvRNS_18TensorIteratorBaseEN3c108ArrayRefIlEESB_EUlPcPKclE_EEvSA_SB_SB_RKT_bEUliE_EEvlT1_"
# CUDA_COREDUMP_SHOW_PROGRESS=1, as cuda-gdb's documentation shows the progress lines
PROGRESS = (
    "[06:43:15.209195] coredump: Detected an exception of type CUDBG_EXCEPTION_WARP_ILLEGAL_ADDRESS (14)\n"
    "[06:43:15.209210] coredump:   - Device: 0\n"
    "[06:43:15.209213] coredump:   - SM: 3\n"
    "[06:43:15.209215] coredump:   - Warp: exception was detected\n"
    "[06:43:15.209218] coredump:   - PC 0x7462C3BAC310\n"
    f"[06:43:15.209220] coredump: #0 0x7462c3bac310 {MANGLED}\n"
    "[06:43:15.219195] coredump: SM 1/132 has finished state collection\n"
    "[06:43:15.309195] coredump: Writing ELF file to ./cuda_coredump_host.42.1764250282\n"
)


def test_a_core_dumps_kernel_name_keeps_its_case_from_the_output_to_the_record(workdir):
    (workdir / "progress.log").write_text(PROGRESS)
    assert run_cli("new", "illegal address in the index kernel", "--no-env", cwd=workdir).returncode == 0
    r = run_cli("run", "--json", "--", "sh", "-c", "cat progress.log; exit 1", cwd=workdir)
    run = json.loads(r.stdout)
    (core,) = [e for e in run["evidence"] if e["kind"] == "cuda-coredump"]
    assert core["frames"][0]["function"] == MANGLED and MANGLED in json.dumps(core["kernel"]) \
        or core["kernel"].startswith("void at::native::index_elementwise_kernel")  # (c++filt, where installed)
    lower = MANGLED.lower()[:40]
    files = [p for p in workdir.rglob("*") if p.is_file() and p.suffix not in (".db", ".db-wal", ".db-shm")]
    assert files and not [str(p) for p in files if lower in p.read_text(errors="replace")]
    shown = run_cli("runs", "show", run["id"], "--json", cwd=workdir).stdout  # the record, read back
    assert f'"function": "{MANGLED}"' in shown and lower not in shown
    sig = json.loads(run_cli("signature", "test", "progress.log", "--json", cwd=workdir).stdout)
    assert lower not in json.dumps(sig)
    kernel = sig["fingerprint"]["kernel"]  # (cut to the fingerprint's length)
    assert len(kernel) > 40 and (MANGLED.startswith(kernel) or core["kernel"].startswith(kernel))
