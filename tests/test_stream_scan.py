"""A log read in one pass, in blocks, with bounded memory: the cause named as when read whole."""

import io
import json
import random
import subprocess
import sys
import tracemalloc
from pathlib import Path

from conftest import cli_env

from dbglog.diagnose import signatures as S
from dbglog.diagnose import stream
from dbglog.diagnose.kernel_api import parse_kernel_api_log

CORPUS = Path(__file__).parent / "corpus" / "logs"

WATCHDOG = (
    "[rank3]:[E1121 09:41:07.201934 1394 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=88412, OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, Timeout(ms)=600000) ran "
    "for 600028 milliseconds before timing out.\n"
    "terminate called after throwing an instance of 'c10::DistBackendError'\n").encode()


def noise_lines(n: int, seed: int = 1, quiet: bool = False) -> bytes:
    """Training-log noise; ``quiet``: without the eval line that says "error rate"."""
    rnd = random.Random(seed)
    tmpl = ["INFO 11-21 09:12:{s:02d} [trainer.py:700] step {i} loss={l:.4f} lr=1e-4",
            "node1:1394:{q} [{r}] NCCL INFO Channel {c:02d}/04 :    0   1   2   3",
            "2026-11-21 10:00:{s:02d},123 - trainer - INFO - epoch {i} eval accuracy {l:.3f} error rate {t:.2f}",
            "Processed prompts:  {p}%|#####     | {i}/1000 [00:{s:02d}<00:10, 12.34it/s]"]
    if quiet:
        del tmpl[2]
    return "".join(rnd.choice(tmpl).format(i=i, s=i % 60, l=rnd.random(), t=rnd.random() * 100, q=rnd.randrange(9999),
                                           r=i % 8, c=i % 32, p=i % 100) + "\n" for i in range(n)).encode()


def streamed(data: bytes, block: int):
    return stream.scan(io.BytesIO(data), block=block, whole_below=0)


def test_corpus_logs_inside_noise_are_named_in_blocks_as_when_read_whole():
    before, after = noise_lines(400), noise_lines(100, seed=2)
    index = json.loads((CORPUS / "index.json").read_text(encoding="utf-8"))
    compared = 0
    for e in index[::4]:
        data = before + (CORPUS / e["file"]).read_bytes() + after
        whole = S.classify_text(data)
        if whole is not None and any("joined back" in w for w in whole.warnings):
            continue  # (the joins of wrapped pastes are made on a log read whole)
        got = streamed(data, 16 << 10).match
        assert (got and (got.name, got.line_no, got.line)) == (whole and (whole.name, whole.line_no, whole.line)), e["file"]
        compared += 1
    assert compared > 55


def test_a_traceback_split_by_a_block_end_is_named_with_its_exception():
    frames = "".join(f'  File "/srv/app/mod{i}.py", line {i}, in f{i}\n    g{i}()\n' for i in range(300))
    tb = ("Traceback (most recent call last):\n" + frames + "ValueError: expected 4 channels, got 3\n").encode()
    data = noise_lines(3000) + tb + noise_lines(500)
    got = streamed(data, 8 << 10).match  # (the header and its exception ~30 KB apart: blocks apart)
    assert got is not None and got.name == "py.traceback:ValueError" and got.line_no == 3000 + 602


def test_memory_of_a_streamed_scan_does_not_grow_with_the_log():
    def peak(n_lines: int) -> tuple[int, int, S.Match | None]:
        data = noise_lines(n_lines, quiet=True) + WATCHDOG + noise_lines(2000, seed=3, quiet=True)
        src = io.BytesIO(data)
        tracemalloc.start()
        try:
            got = stream.scan(src, block=64 << 10, whole_below=0).match
            return tracemalloc.get_traced_memory()[1], len(data), got
        finally:
            tracemalloc.stop()

    small, _, _ = peak(10_000)
    big, size, got = peak(80_000)  # ~5.5 MB
    assert got is not None and got.name == "nccl.watchdog_timeout" and got.line_no == 80_001
    assert big < size / 4  # (BytesIO holds the log itself outside the scan's allocations)
    assert big < 1.5 * small  # four times the log, not four times the memory


def test_the_kernel_api_boundary_read_in_blocks_is_the_one_read_whole():
    calls = "".join(f"[2026-01-01 10:00:{i % 60:02d}] SGLang Kernel API Call: op_{i}\n  arg[0]=Tensor(shape=(4, {i}), "
                    f"dtype=torch.float16)\nOutput:\n" for i in range(400))
    data = noise_lines(2000) + calls.encode() + b"[2026-01-01 10:01:00] SGLang Kernel API Call: last_op\n" + noise_lines(50)
    whole = parse_kernel_api_log(data)
    got = streamed(data, 8 << 10).kernel_api
    assert got is not None and whole is not None
    assert (got.name, got.line_no, got.status, got.calls) == (whole.name, whole.line_no, whole.status, whole.calls)
    assert got.name == "last_op" and got.status == "in_flight"


def test_signature_test_names_the_cause_of_a_log_bigger_than_it_reads_whole(tmp_path):
    log = tmp_path / "big.log"
    body = noise_lines(20_000)
    with open(log, "wb") as f:
        while f.tell() < stream.WHOLE_BELOW + (1 << 20):
            f.write(body)
        lines = body.count(b"\n") * (f.tell() // len(body))
        f.write(WATCHDOG)
        f.write(noise_lines(100))
    out = subprocess.run([sys.executable, "-m", "dbglog", "signature", "test", str(log), "--json"], cwd=tmp_path,
                         capture_output=True, text=True, env=cli_env(), timeout=120)
    sig = json.loads(out.stdout)["signature"]
    assert sig["name"] == "nccl.watchdog_timeout" and sig["line_no"] == lines + 1, out.stderr
    assert json.loads(out.stdout)["fingerprint"] is not None  # (read from the lines kept around the failure)


def test_a_runs_big_output_is_classified_in_blocks_with_the_lines_around_its_failure(tmp_path, monkeypatch):
    from dbglog.run import runner

    monkeypatch.setattr(stream, "WHOLE_BELOW", 64 << 10)  # (a small log stands for a big one)
    monkeypatch.setattr(stream, "BLOCK", 16 << 10)
    log = tmp_path / "out.log"
    log.write_bytes(noise_lines(4000) + WATCHDOG + noise_lines(300, seed=4))
    r = runner.run(["cat", str(log)], run_dir=tmp_path / runner.new_run_id(), echo=False, git_info=False)
    assert r.signature == "nccl.watchdog_timeout" and r.key_lines[0]["line"] == 4001
    (wd,) = [e for e in r.evidence if e["kind"] == "nccl-watchdog"]  # read from the lines kept around it
    assert wd["summary"]


def test_a_streamed_log_whose_failure_was_cut_into_prefixed_chunks_is_read_again_joined():
    msg = WATCHDOG.decode().splitlines()[0].removeprefix("[rank3]:")
    chunks = [msg[i:i + 80] for i in range(0, len(msg), 80)]
    data = (noise_lines(3000, quiet=True) + "".join(f"[rank3]:{c}\n" for c in chunks).encode()
            + noise_lines(200, seed=5, quiet=True))
    got = streamed(data, 16 << 10).match
    assert got is not None and got.name == "nccl.watchdog_timeout" and got.line_no == 3001
    assert any("split under a log prefix" in w for w in got.warnings)
