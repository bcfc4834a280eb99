"""Hostile patterns and huge inputs cannot hang dbglog. A user's own regex (a signature, an advice rule)
runs under a time budget and says so when it runs out; the catalog's patterns cost time linear in the
length of one long line; a debug doc holding a long log imports in seconds. Costs are measured in CPU
time of this thread and compared as ratios, never against a wall clock a loaded machine stretches."""

import sys
import time
from pathlib import Path

import pytest
from conftest import run_cli
from probe_kit import dbg, one_line_error

from dbglog.run import evidence, signatures


@pytest.mark.parametrize("pattern", [r"(a+)+$", r"(a|aa)*c", r"(\w+\s?)*$", r"(.*a){12}"])
def test_a_catastrophic_user_signature_cannot_hang_classification(tmp_path, pattern):
    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("signature", "add", "evil", pattern, cwd=ws).returncode == 0
    log = tmp_path / "log.txt"
    log.write_text("a" * 40000 + "!\n" + "word " * 5000 + "!\n")
    fast = {"DBGLOG_PATTERN_BUDGET": "0.2"}  # the budget, not its length, is under test: keep the probe quick
    r = run_cli("signature", "test", str(log), cwd=ws, timeout=60, env=fast)
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr
    r = run_cli("run", "-q", "--json", "--", sys.executable, "-c", "print('a' * 40000 + '!')", cwd=ws, timeout=60,
                env=fast)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr


def _advice_config(tmp_path: Path, when: str) -> Path:
    cfg = tmp_path / "config.toml"
    cfg.write_text(f"[[advice]]\nid = 'evil'\nstep = 'do a thing'\nwhen = {when}\n")
    return cfg


@pytest.mark.parametrize("when", ["{ text = '(a+)+$' }", "{ evidence = 'kernel-log', finding = '(x+x+)+y' }"])
def test_a_user_advice_regex_that_backtracks_cannot_hang_a_run(tmp_path, monkeypatch, when):
    from dbglog.run import advice

    monkeypatch.setenv("DBGLOG_PATTERN_BUDGET", "0.2")  # the budget, not its length, is under test
    rules = [r for r in advice.load(_advice_config(tmp_path, when)) if r.id == "evil"]
    run = {"outcome": "fail", "evidence": [{"kind": "kernel-log", "summary": "x" * 40, "findings": []}]}
    ctx = advice.Context(run=run, text="a" * 40 + "!")
    assert advice.advise(ctx, rules) == []  # before: hours of backtracking after the attempt was recorded
    # ... and said, once: a rule that silently never fires looks like one that did not apply
    assert len(ctx.warnings) == 1 and "advice rule 'evil'" in ctx.warnings[0] and "ran out of time" in ctx.warnings[0]
    good = [r for r in advice.load(_advice_config(tmp_path, "{ text = 'a{4}!' }")) if r.id == "evil"]
    assert [a["id"] for a in advice.advise(ctx, good)] == ["evil"]  # (a user's regex still matches)


def test_run_attempt_warns_when_a_user_advice_regex_ran_out_of_time(tmp_path, monkeypatch):
    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("new", "x", "--no-env", cwd=ws).returncode == 0
    (ws / ".dbglog" / "config.toml").write_text(_advice_config(tmp_path, "{ text = '(a+)+$' }").read_text())
    env = {"DBGLOG_PATTERN_BUDGET": "0.2"}
    r = run_cli("run", "-q", "--attempt", "a" * 40 + "!", "--", sys.executable, "-c", "raise SystemExit(3)",
                cwd=ws, env=env)
    assert r.returncode == 1, r.stderr  # the run's verdict; the rule's time-out is a warning, not an error
    assert "dbglog: warning: advice rule 'evil'" in r.stderr and "ran out of time" in r.stderr


def test_a_user_advice_regex_past_cs_int_is_one_line(tmp_path):
    ws = tmp_path / "w"
    ws.mkdir()
    assert dbg("new", "x", "--no-env", cwd=ws).returncode == 0
    (ws / ".dbglog" / "config.toml").write_text(_advice_config(tmp_path, "{ text = 'a{4294967296}' }").read_text())
    r = run_cli("run", "-q", "--attempt", "t", "--", sys.executable, "-c", "raise SystemExit(3)", cwd=ws)
    one_line_error(r, "advice a{4294967296}")
    assert "bad regex in when.text" in r.stderr, r.stderr
    assert not any((ws / ".dbglog" / "runs").glob("*")), "refused before the repro ran"


def _took(f, text: str) -> float:
    """CPU seconds of this thread spent in ``f(text)``: other processes on a loaded machine add none."""
    t = time.thread_time()
    f(text)
    return time.thread_time() - t


def _linear(f, make, n: int = 4000, k: int = 16) -> None:
    """``f(make(k*n))`` costs about k times ``f(make(n))``, not k**2 (with a floor for timer noise)."""
    f(make(n))  # compiles the regexes
    small = min(_took(f, make(n)) for _ in range(3))
    big = min(_took(f, make(k * n)) for _ in range(2))
    assert big < 3 * k * max(small, 0.002) + 0.1, (small, big)


C = signatures.classify_text


LONG_LINES = {
    # the 'undefined symbol' pattern is tried on every line holding the hub literal "rror"
    "a long word on an error line": lambda n: "Error " + "x" * n + "\n",
    "a long word before the loader's words": lambda n: "x" * n + ": cannot open shared object file\n",
    "a long word before an assert() tail": lambda n: "y" * n + ":25   Assertion `x' failed\n",
    "an NCCL WARN of one long word": lambda n: "NCCL WARN " + "1:" * (n // 2) + "\n",
    "blanks after 'error code'": lambda n: "cudaMalloc error code" + " " * n + "x\n",
    "blanks after 'CUresult error'": lambda n: "CUresult error" + " " * n + "x\n",
    "a long word before a GGML_ASSERT tail": lambda n: "x" * n + ") failed\n",
    "a long word before an Apple failed assertion": lambda n: "a." * (n // 2) + "failed assertion `x'\n",
}


@pytest.mark.parametrize("name", LONG_LINES)
def test_signatures_are_linear_on_one_long_line(name):
    _linear(C, LONG_LINES[name])


def test_the_anchored_patterns_still_name_what_they_named():
    # (?<!\S) only keeps a match from starting inside a word, where it could not have started first
    m = C("ImportError: /site/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi\n")
    assert m is not None and m.name == "build.extension_torch_mismatch"  # (a torch symbol: built against another torch)
    m = C("OSError: libcudnn_cnn_infer.so.8: cannot open shared object file: No such file or directory\n")
    assert m is not None and m.name == "env.library_missing"
    m = C("[h:1:0:7]   eager_snd.c:25   Assertion `x == 0' failed\n")
    assert m is not None and m.signature == "cpp.assert"
    m = C("cuLaunchKernel failed with error code   :   719\n")
    assert m is not None and m.name == "gpu.launch_failure"
    m = C("CUresult error  result = 700\n")
    assert m is not None and m.name == "gpu.illegal_address"


def test_a_cuda_gdb_stop_frame_with_a_run_of_blanks_is_linear():
    def make(n):
        return ("Program received signal CUDA_EXCEPTION_14, Warp Illegal Address.\n"
                "0x00007fffd3a1b2c0 in k" + " " * n + "x\n")
    _linear(evidence.parse_cuda_gdb, make)
    out = evidence.parse_cuda_gdb(make(10))
    assert out is not None and out.get("pc") == "0x00007fffd3a1b2c0"


def test_a_kernel_name_of_many_parentheses_is_linear():
    _linear(evidence.short_kernel, lambda n: "k" + "(" * n)
    assert evidence.short_kernel("void k<float>(float*, int)") == "k<…>"
    assert evidence.short_kernel("Functor::operator()(int)") == "Functor::operator()"


def test_a_compute_sanitizer_host_frame_of_many_parentheses_is_linear():
    _linear(evidence._cs_host_short, lambda n: "f" + "(" * n)
    assert evidence._cs_host_short("ggml_cuda_cpy(ggml_backend_cuda_context&, int) in cpy.cu:612 [0x59421a8] in libggml.so") \
        == "ggml_cuda_cpy (cpy.cu:612)"
    assert evidence._cs_host_short("main [0x1a] in a.out") == "main"


def test_nccl_info_lines_of_one_long_word_are_linear():
    _linear(evidence.parse_nccl_topology, lambda n: "a:" * (n // 2) + " NCCL INFO x\n")
    _linear(evidence.parse_nccl_topology, lambda n: "h:1:2 [0] NCCL INFO Using network Socket" + " " * n + "x\n")
    out = evidence.parse_nccl_topology("h:1:2 [0] NCCL INFO Using network Socket   \nh:1:2 [0] NCCL INFO NCCL version 2.18.1+cuda12.1\n")
    assert out is not None and out["network"] == "Socket" and out["version"] == "2.18.1+cuda12.1"


def test_a_doc_holding_a_long_log_reads_in_seconds():
    """Each kept line is looked up in a set before the whole rendered text is searched: looking for
    every line in the whole text is quadratic (a 25,000-line log inside a debug doc: ~40 s of CPU)."""
    from dbglog.docreader import read_document

    lines = ["# Big log", "", "## Attempts", "", "### Attempt 1: x", "- Result: still fails", "", "## Log", "",
             "```"] + [f"log line {i} " + "x" * 80 for i in range(25000)] + ["```"]
    t = time.thread_time()
    parsed, _skipped = read_document("\n".join(lines), "big.md")
    took = time.thread_time() - t  # CPU time of this thread: a loaded machine does not stretch it
    assert len(parsed) == 1 and len(parsed[0].inv.attempts) == 1
    assert "log line 24999" in "\n".join(s.body for s in parsed[0].inv.sections)
    assert took < 15, took  # ~40 s quadratic; ~1 s with the set


def test_tried_over_a_result_of_one_long_word_is_linear(recs):
    """A result holding a pasted blob (base64, a hex dump) with no blank in it: the "A -> B" pattern
    was tried from every place inside the word, so `tried` and the prompt hook took 35 s for 40 KB."""
    from dbglog.kb import search

    old_side = search._OLD_SIDE
    _linear(lambda t: list(old_side.finditer(t)), lambda n: "payload: " + "A" * n + " fp16 -> fp32")
    assert [m.group(2) for m in old_side.finditer("moved fp16->fp32 and (a → b)")] == ["fp16", "a"]
    inv = recs.new("slow tried")
    recs.add_attempt(inv.id, title="raise the timeout", result="payload: " + "A" * 40000, outcome="failed")
    t = time.thread_time()
    res = search.tried(recs.store.conn, "raise the timeout")
    assert time.thread_time() - t < 10  # ~35 s before; well under a second now
    assert res.close and res.close[0].title == "raise the timeout"
