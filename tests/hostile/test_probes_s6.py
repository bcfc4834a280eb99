"""Hostile probes of session 6's new code (helper H7): what broke, each test failing on the code before
its fix (or marked xfail, strict, where the code belongs to another helper).

* regexes that were quadratic on one long line (a 64 KB minified JSON line holding "error", a word of
  60 000 characters before "cannot open shared object file", a run of blanks after "error code"):
  timed as a ratio -- a line 16 times longer may take at most ~50 times as long (quadratic: 256) --
  never against a wall-clock limit.
"""

import json
import time

import pytest

from dbglog.diagnose import evidence, signatures


def _took(f, text: str) -> float:
    t = time.perf_counter()
    f(text)
    return time.perf_counter() - t


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
    assert m is not None and m.name == "env.library_missing"
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


# --- agent hooks: odd JSON, forced dialects ------------------------------------------------------------

HOOK_CMD = "NCCL_P2P_DISABLE=1 torchrun --nproc_per_node 8 train.py"


@pytest.fixture(scope="module")
def hook_kb(tmp_path_factory):
    from conftest import run_cli_inproc

    root = tmp_path_factory.mktemp("hookkb")
    (root / ".git").mkdir()
    run_cli_inproc(root, "new", "NCCL all_reduce hangs on 8 GPUs", "--no-env", check=0)
    run_cli_inproc(root, "attempt", "add", "Disable P2P", "--did", HOOK_CMD, "--result", "still hangs",
                   "--outcome", "failed", check=0)
    return root


def _hook(cwd, event, stdin, *args):
    from conftest import run_cli_inproc

    p = run_cli_inproc(cwd, "hook", event, *args, input=stdin)
    assert p.returncode == 0
    return p


def test_a_forced_gemini_prompt_answer_names_geminis_event(hook_kb):
    p = _hook(hook_kb, "prompt", "The NCCL all_reduce on 8 GPUs hangs again, can you debug the hang?",
              "--format", "gemini")
    assert json.loads(p.stdout)["hookSpecificOutput"]["hookEventName"] == "BeforeAgent", p.stdout


@pytest.mark.parametrize("shape", ["claude", "cursor"])
def test_a_lone_surrogate_escaped_in_the_hook_json_is_no_error(hook_kb, shape):
    obj = ({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "\ud800"}}
           if shape == "claude" else {"hook_event_name": "beforeShellExecution", "command": "\ud800 " + HOOK_CMD})
    p = _hook(hook_kb, "pre-command", json.dumps(obj))  # json.dumps writes it as the escape "\ud800"
    assert p.stderr == "", p.stderr


@pytest.mark.parametrize("odd", [None, 1, [], {}, "x" * 20000, [1, 2], ["\x00"], "/dev/null", "rel/dir"])
@pytest.mark.parametrize("key", ["tool_input", "cwd", "workspace_roots", "command", "hook_event_name", "tool_name"])
def test_odd_values_in_a_cursor_or_gemini_hook_json_never_fail(hook_kb, key, odd):
    for base in ({"hook_event_name": "beforeShellExecution", "command": HOOK_CMD, "cwd": str(hook_kb),
                  "workspace_roots": [str(hook_kb)]},
                 {"hook_event_name": "BeforeTool", "tool_name": "run_shell_command", "cwd": str(hook_kb),
                  "tool_input": {"command": HOOK_CMD}}):
        p = _hook(hook_kb, "pre-command", json.dumps(base | {key: odd}))
        assert p.stderr == "", (key, odd, p.stderr)
        if p.stdout and (key != "hook_event_name" or isinstance(odd, str)):
            # an agent's hook (it names its event) is answered with one JSON object, never plain text
            json.loads(p.stdout)


# --- redaction (dbglog/util/redact.py is helper A6's: failing tests marked, the bugs reported) --------

# Session 6 keeps "password: WORD <grammar word> ..." as prose ("the password: prompt never appeared").
# A password that is a plain word is common ("tiger", "changeme", "letmein"), and the rule now writes it
# to logs/ in clear where the code before this session redacted it.
@pytest.mark.parametrize("text,secret", [
    ("password:tiger and more", "tiger"),  # no blank after the colon: a key:value, not a sentence
    ("db password: tiger and user scott", "tiger"),
    ("the password: changeme is the default for the admin user", "changeme"),
])
def test_a_plain_word_password_in_a_sentence_is_still_redacted(text, secret):
    from dbglog.util import redact

    assert secret not in redact.redact(text)


# Older than this session: the clients' own secret variables (PostgreSQL's PGPASSWORD, MySQL's
# MYSQL_PWD) are not secret names, so `PGPASSWORD=... psql` reaches logs/ in clear.
@pytest.mark.parametrize("text", ["PGPASSWORD=Tiger123xyz psql -h db", "MYSQL_PWD=Tiger123xyz mysql -u root"])
def test_database_clients_password_variables_are_redacted(text):
    from dbglog.util import redact

    assert "Tiger123xyz" not in redact.redact(text)


# --- wrong verdicts of the new rules ---------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "error: command '/usr/local/cuda/bin/nvcc' failed with error code 2",  # a compiler's exit status
    "hipcc exited with error code 3",
    "C:\\CUDA\\v11.8\\bin\\nvcc.exe failed with error code 2",
])
def test_an_exit_status_of_a_tool_on_a_cuda_path_is_no_cuda_error(text):
    # 'error code 2' on a line whose only CUDA is a path or a tool's name was CUDA's error 2 (out of memory)
    m = C(text + "\n")
    assert m is None or m.name not in ("oom.runtime", "driver.init_failed"), m.name


@pytest.mark.parametrize("text,name", [
    ("cudaLaunchKernel failed with error code 719", "gpu.launch_failure"),
    ("numba.cuda: error code = 700", "gpu.illegal_address"),
    ("HIP runtime: error code 700", "gpu.illegal_address"),
])
def test_a_cuda_error_code_on_a_line_about_cuda_is_still_named(text, name):
    m = C(text + "\n")
    assert m is not None and m.name == name


# --- doc import (dbglog/docreader/ is helper D6's: failing tests marked, the bugs reported) -----------

def test_a_checklist_mark_does_not_override_what_the_item_says_came_of_it():
    # ✅/❌ used as done / not done: the words after the arrow say how it went (or that it was not tried)
    from dbglog.kb.importer import parse_document

    doc = ("# NCCL hang on 8 GPUs\n\nThe all_reduce hangs at step 3 on 8 GPUs.\n\n## Investigation\n\n"
           "1. ✅ Reinstalled the driver → no change, still hangs\n"
           "2. ❌ Upgrade NCCL to 2.19 → not tried yet\n"
           "3. ✅ Pinned NCCL_ALGO=Tree → hang is gone\n")
    (p,), _ = parse_document(doc)
    got = {a.title: a.outcome for a in p.inv.attempts}
    assert got.get("Pinned NCCL_ALGO=Tree") == "worked"
    assert got.get("Reinstalled the driver") != "worked", got  # it says: no change, still hangs
    assert "Upgrade NCCL to 2.19" not in got, got  # not tried: a next step at most


# --- tried (dbglog/kb/search.py is helper S6's: failing tests marked, the bugs reported) ------------------

@pytest.fixture(scope="module")
def knob_kb(tmp_path_factory):
    from conftest import run_cli_inproc

    root = tmp_path_factory.mktemp("knobkb")
    (root / ".git").mkdir()
    run_cli_inproc(root, "new", "NCCL hang", "--no-env", check=0)
    run_cli_inproc(root, "attempt", "add", "keep p2p on", "--did", "NCCL_P2P_DISABLE=0 torchrun train.py",
                   "--result", "still hangs", "--outcome", "failed", check=0)
    run_cli_inproc(root, "attempt", "add", "tree", "--did", "NCCL_ALGO=Tree torchrun train.py",
                   "--result", "still hangs", "--outcome", "failed", check=0)
    return root


def _close_attempts(kb, idea: str) -> list:
    from conftest import run_cli_inproc

    p = run_cli_inproc(kb, "tried", idea, "--json")
    return [h.get("attempt") for h in json.loads(p.stdout)["close"]]


@pytest.mark.parametrize("idea,wrong", [
    ("disable p2p", 1),  # the record set NCCL_P2P_DISABLE=0: P2P stayed on
    ("run without NCCL_ALGO", 2),  # the record ran with NCCL_ALGO=Tree
])
def test_a_knob_the_record_set_the_other_way_is_not_the_idea(knob_kb, idea, wrong):
    assert wrong not in _close_attempts(knob_kb, idea)
