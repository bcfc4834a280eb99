"""End-to-end toggle bisection on real processes (subprocess CLI: python -m dbglog)."""

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import run_cli as run_cli_process
from conftest import run_cli_inproc

PY = sys.executable


def run_cli(*args, cwd):
    """The bisection drivers run as real processes; the record commands around them in-process (faster)."""
    if args[:2] in (("bisect", "toggles"), ("bisect", "resume")):
        return run_cli_process(*args, cwd=cwd)
    return run_cli_inproc(cwd, *args)


def cli_json(cwd, *args, code=None):
    p = run_cli(*args, "--json", cwd=cwd) if "--" not in args else run_cli(
        *args[:args.index("--")], "--json", *args[args.index("--"):], cwd=cwd)
    assert code is None or p.returncode == code, (p.returncode, p.stdout, p.stderr)
    return json.loads(p.stdout) if p.stdout.strip() else {}, p


def snapshot(d: Path) -> dict:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*"))
            if p.is_file() and ".dbglog" not in p.parts and "logs" not in p.parts}


RACE = """\
import sys
done = []
def call(name):
    done.append(name)
"""


@pytest.fixture
def race_ws(ws):
    lines = [RACE] + [f'call("k{i}")  # dbglog: suspect k{i}' for i in range(12)]
    lines.append('if "k3" in done and "k9" in done:\n'
                 '    print("RuntimeError: CUDA error: an illegal memory access was encountered", file=sys.stderr)\n'
                 '    sys.exit(1)\nprint("ok")\n')
    (ws / "train.py").write_text("\n".join(lines))
    run_cli("new", "Race in the train step", "--no-env", cwd=ws)
    return ws


def test_twelve_suspects_pair_races_only_together(race_ws):
    before = snapshot(race_ws)
    out, p = cli_json(race_ws, "bisect", "toggles", "--suspects", "train.py", "-j", "2", "--", PY, "train.py", code=0)
    assert out["status"] == "complete" and out["sets"] == [["k3", "k9"]]
    assert out["mode"] == "enable" and out["reverse_check"]["passed"]
    # the pair's pools without k3 and without k9 each passed, and each holds the failing end with
    # the pair reverted: that check is implied, not run again
    assert set(json.loads(out["reverse_check"]["implied_by"])) in (
        {f"k{i}" for i in range(12) if i != 3}, {f"k{i}" for i in range(12) if i != 9})
    assert "`k3` and `k9` fail only together: an interaction between them" in out["message"]
    assert out["target"].startswith("fail [gpu.illegal_address")
    assert snapshot(race_ws) == before  # edits happened in copies only
    assert not any((race_ws / ".dbglog" / "bisect").glob("*/w*"))  # copies removed
    md = run_cli("show", "--markdown", cwd=race_ws).stdout
    assert "## Bisection: toggles " + out["session"] in md
    assert "| k3 | suspect |" in md and "fail only together" in md and "Toggle bisection: k3 + k9" in md
    # status / log / mark + resume replay (a hand-corrected verdict changes the answer)
    st, _ = cli_json(race_ws, "bisect", "status", code=0)
    assert st["sets_found"] == [["k3", "k9"]] and st["mode"] == "enable"
    log, _ = cli_json(race_ws, "bisect", "log", code=0)
    assert len(log["steps"]) == out["trials"]
    again, _ = cli_json(race_ws, "bisect", "resume", code=0)
    assert again["sets"] == [["k3", "k9"]] and again["executed"] == 0  # nothing re-run
    attempts = run_cli("attempt", "list", "--json", cwd=race_ws).stdout
    assert json.loads(attempts)[-1]["number"] == 1  # one attempt per session, updated on resume


FAKE_NCU = """\
import sys, time
sections = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == "--section"]
print("==PROF== Connected to process", flush=True)
if "MemoryWorkloadAnalysis" in sections and "WarpStateStats" in sections:
    print('==PROF== Profiling "attention_fwd" - 0: 0%....', flush=True)
    time.sleep(60)
print("==PROF== Report: out.ncu-rep", flush=True)
"""
SECTIONS = ["SpeedOfLight", "MemoryWorkloadAnalysis", "ComputeWorkloadAnalysis", "Occupancy", "LaunchStats",
            "WarpStateStats", "SchedulerStats", "SourceCounters"]


def test_fake_profiler_hangs_only_with_two_sections(ws):
    (ws / "ncu.py").write_text(FAKE_NCU)
    (ws / "sections.txt").write_text("# one per line\n" + "\n".join(f"--section {s}" for s in SECTIONS[4:]) + "\n")
    args = [a for s in SECTIONS[:4] for a in ("--arg", f"--section {s}")]
    out, p = cli_json(ws, "bisect", "toggles", *args, "--args-from", "sections.txt", "--timeout", "1",
                      "--grace", "0.2", "-j", "2", "--", PY, "ncu.py", "{toggles}", "./app", code=0)
    assert out["sets"] == [["--section MemoryWorkloadAnalysis", "--section WarpStateStats"]]
    assert out["target"].startswith("hang")


CONFIGS = {
    "json": ('{\n  "model": {"fused": false, "heads": 8},\n  "train": {"lr": 0.01}\n}\n',
             "import json; cfg = json.load(open('cfg.json'))"),
    "yaml": ("# model settings\nmodel:\n  fused: false  # fast path\n  heads: 8\ntrain:\n  lr: 0.01\n",
             "import yaml; cfg = yaml.safe_load(open('cfg.yaml'))"),
    "toml": ("# model settings\n[model]\nfused = false  # fast path\nheads = 8\n\n[train]\nlr = 0.01\n",
             "import tomllib; cfg = tomllib.load(open('cfg.toml', 'rb'))"),
}


@pytest.mark.parametrize("fmt", sorted(CONFIGS))
def test_config_key_and_env_var_fail_together(ws, fmt):
    if fmt == "toml" and sys.version_info < (3, 11):
        pytest.skip("tomllib")
    text, load = CONFIGS[fmt]
    (ws / f"cfg.{fmt}").write_text(text)
    (ws / "app.py").write_text(load + "\nimport os, sys\n"
                               "if cfg['model']['fused'] and os.environ.get('NCCL_PROTO') == 'LL':\n"
                               "    raise RuntimeError('NCCL error: unhandled cuda error')\nprint('ok')\n")
    before = snapshot(ws)
    out, p = cli_json(ws, "bisect", "toggles", "--config", f"cfg.{fmt}:model.fused=true",
                      "--config", f"cfg.{fmt}:train.lr=0.1", "--config", f"cfg.{fmt}:model.heads=16",
                      "--env", "NCCL_PROTO=LL", "--env", "NCCL_ALGO=Ring", "--", PY, "app.py", code=0)
    assert out["sets"] == [["NCCL_PROTO", "model.fused"]] or out["sets"] == [["model.fused", "NCCL_PROTO"]]
    assert snapshot(ws) == before


def test_from_diffs_marks_rows(ws):
    (ws / "app.py").write_text("import os, sys\nif os.environ.get('TORCH_NCCL_ASYNC') == '1' and '--compile' in "
                               "sys.argv:\n    sys.exit('Watchdog caught collective operation timeout')\n")
    run_cli("new", "Allreduce hangs", "--no-env", cwd=ws)
    for factor, w, b, apply in (("Async error handling", "0", "1", "env:TORCH_NCCL_ASYNC=1"),
                                ("Compile", "eager", "torch.compile", "arg:--compile"),
                                ("Debug level", "OFF", "INFO", "env:NCCL_DEBUG=INFO"),
                                ("GPU", "A100", "H100", "")):
        run_cli("diff", "add", factor, w, b, *(["--apply", apply] if apply else []), cwd=ws)
    out, p = cli_json(ws, "bisect", "toggles", "--from-diffs", "--", PY, "app.py", code=0)
    assert out["sets"] == [["Async error handling", "Compile"]]
    rows = {d["factor"]: d["status"] for d in json.loads(run_cli("diff", "list", "--json", cwd=ws).stdout)["rows"]}
    assert rows == {"Async error handling": "culprit", "Compile": "culprit", "Debug level": "ruled-out",
                    "GPU": "untested"}


def test_disable_mode_autodetected_and_refusal(ws):
    (ws / "app.py").write_text("import os, sys\n"
                               "if not os.environ.get('CUDA_LAUNCH_BLOCKING') and not os.environ.get('SAFE_MODE'):\n"
                               "    sys.exit('CUDA error: an illegal memory access was encountered')\n")
    out, p = cli_json(ws, "bisect", "toggles", "--env", "CUDA_LAUNCH_BLOCKING=1", "--env", "SAFE_MODE=1",
                      "--env", "OTHER=1", "--", PY, "app.py", code=0)
    assert out["mode"] == "disable" and out["sets"] == [["CUDA_LAUNCH_BLOCKING", "SAFE_MODE"]]
    assert "only when `CUDA_LAUNCH_BLOCKING` and `SAFE_MODE` are all off" in out["message"]
    out, p = cli_json(ws, "bisect", "toggles", "--mode", "enable", "--env", "CUDA_LAUNCH_BLOCKING=1",
                      "--", PY, "app.py", code=2)
    assert out["status"] == "refused" and "other way round" in out["message"]
    out, p = cli_json(ws, "bisect", "toggles", "--env", "X=1", "--", PY, "-c", "pass", code=2)
    assert "passes both ways" in out["message"]
    p = run_cli("bisect", "toggles", "--", PY, "app.py", cwd=ws)
    assert p.returncode == 2 and "no toggles" in p.stderr


def test_coop_toggles_and_counting_mode(ws):
    (ws / "app.py").write_text(textwrap.dedent("""\
        import sys, dbglog
        if dbglog.toggle("fuse_attn") and dbglog.toggle("cudagraphs"):
            sys.exit("RuntimeError: CUDA error: misaligned address")
        """))
    out, p = cli_json(ws, "bisect", "toggles", "--coop", "fuse_attn", "--coop", "cudagraphs", "--coop", "tf32",
                      "--", PY, "app.py", code=0)
    assert out["sets"] == [["cudagraphs", "fuse_attn"]] or out["sets"] == [["fuse_attn", "cudagraphs"]]
    (ws / "passes.py").write_text(textwrap.dedent("""\
        import sys, dbglog
        applied = [i for i in range(1, 51) if dbglog.toggle("pass_x", count=True)]
        if 37 in applied:
            sys.exit("AssertionError: pass_x application 37 broke the graph")
        """))
    out, p = cli_json(ws, "bisect", "toggles", "--count", "pass_x", "--", PY, "passes.py", code=0)
    assert out["nth"] == 37 and out["calls"] == 50 and out["queries"] <= 9


def test_in_place_restores_and_bad_input(ws):
    (ws / "src").mkdir()
    f = ws / "src" / "kern.py"
    f.write_text("import sys\nx = []\nx.append(1)  # dbglog: suspect a\nx.append(2)  # dbglog: suspect b\n"
                 "if 2 not in x:\n    sys.exit('boom')\n")
    before = snapshot(ws)
    # fails when b is off and a on: a disable-mode set {b}
    out, p = cli_json(ws, "bisect", "toggles", "--in-place", "--suspects", "src", "--", PY, "src/kern.py", code=0)
    assert out["sets"] == [["b"]] and out["mode"] == "disable"
    assert snapshot(ws) == before
    p = run_cli("bisect", "toggles", "--in-place", "-j", "2", "--suspects", "src", "--", PY, "x", cwd=ws)
    assert p.returncode == 2 and "one at a time" in p.stderr
    p = run_cli("bisect", "toggles", "--config", "nope.json:a=1", "--", PY, "x", cwd=ws)
    assert p.returncode == 2 and "no such file" in p.stderr


def test_from_diffs_rows_carry_both_states_broken_unset_fails_together(ws):
    (ws / "cfg.json").write_text('{\n  "train": {"batch": 8}\n}\n')
    (ws / "app.py").write_text(
        "import json, os, sys\n"
        "cfg = json.load(open('cfg.json'))\n"
        "assert os.environ.get('NCCL_DEBUG') in ('INFO', 'WARN'), 'NCCL_DEBUG must be set either way'\n"
        "assert cfg['train']['batch'] in (8, 16)\n"
        "if os.environ.get('HIP_LAUNCH_BLOCKING') != '1' and '--graphs' in sys.argv:\n"
        "    sys.exit('HIP error: hipErrorLaunchFailure (unspecified launch failure)')\n"
        "print('ok')\n")
    run_cli("new", "Graph replay fails without launch blocking", "--no-env", cwd=ws)
    for factor, working, broken, apply in (("HIP_LAUNCH_BLOCKING", "1", "unset", "env:HIP_LAUNCH_BLOCKING"),
                                           ("CUDA graphs", "unset", "--graphs", "arg"),
                                           ("Batch", "8", "16", "config:cfg.json:train.batch"),
                                           ("NCCL debug", "INFO", "WARN", "env:NCCL_DEBUG"),
                                           ("GPU", "MI250X", "MI300X", "")):
        p = run_cli("diff", "add", *(["--apply", apply] if apply else []), "--", factor, working, broken, cwd=ws)
        assert p.returncode == 0, p.stderr
    before = snapshot(ws)
    out, p = cli_json(ws, "bisect", "toggles", "--from-diffs", "--", PY, "app.py", code=0)
    assert out["mode"] == "enable" and out["sets"] == [["HIP_LAUNCH_BLOCKING", "CUDA graphs"]]
    assert snapshot(ws) == before
    rows = {d["factor"]: d["status"] for d in json.loads(run_cli("diff", "list", "--json", cwd=ws).stdout)["rows"]}
    assert rows == {"HIP_LAUNCH_BLOCKING": "culprit", "CUDA graphs": "culprit", "Batch": "ruled-out",
                    "NCCL debug": "ruled-out", "GPU": "untested"}
    md = run_cli("show", "--markdown", cwd=ws).stdout
    assert "| HIP_LAUNCH_BLOCKING | env | HIP_LAUNCH_BLOCKING unset | HIP_LAUNCH_BLOCKING=1 |" in md
    assert "| CUDA graphs | arg | --graphs | absent |" in md and "cfg.json: train.batch = 8 |" in md
    # explicit states and bad specs
    p = run_cli("diff", "set", "NCCL debug", "--apply", "env:NCCL_DEBUG on=WARN off=unset", cwd=ws)
    assert p.returncode == 0
    out, p = cli_json(ws, "bisect", "toggles", "--from-diffs", "--", PY, "app.py", code=2)
    assert "fails with every toggle off" in out["message"]  # off = unset now breaks the app's assert
    p = run_cli("diff", "set", "NCCL debug", "--apply", "env:NCCL_DEBUG on=1 off=1", cwd=ws)
    assert p.returncode == 2 and "nothing to switch" in p.stderr  # refused when written, not at bisect time


def test_the_verdict_cache_is_not_reused_after_the_code_changed(ws):
    """An adversarial probe: after the code was changed (committed, or not), a second toggle bisection answered the
    first one's pair from the cache, every trial but the ends, exit 0, where one toggle alone now fails. The cache
    shared by sessions is keyed on the working tree's state (HEAD, changes, untracked files) too."""
    import subprocess

    def git(*args):
        subprocess.run(["git", *args], cwd=ws, check=True, capture_output=True,
                       env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x",
                            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x"})

    app = ws / "app.py"
    app.write_text("import os, sys\non = {k for k in 'ABC' if os.environ.get(k) == '1'}\n"
                   "sys.exit(1 if {'B', 'C'} <= on else 0)\n")
    git("init", "-q")
    git("add", "app.py")
    git("commit", "-qm", "i")
    args = ("bisect", "toggles", "--env", "A=1", "--env", "B=1", "--env", "C=1", "--", sys.executable, "app.py")
    first, _ = cli_json(ws, *args, code=0)
    assert sorted(first["sets"][0]) == ["B", "C"], first
    app.write_text(app.read_text().replace("{'B', 'C'} <= on", "'A' in on"))
    again, _ = cli_json(ws, *args, code=0)
    assert again["sets"] == [["A"]], again
    git("commit", "-qam", "only A now")
    third, _ = cli_json(ws, *args, code=0)
    assert third["sets"] == [["A"]] and third["runs"] > 2, third


def test_a_refused_bisection_json_has_every_documented_key(ws):
    # A refusal printed only status, message, session, sets and mode: a script reading `runs` or
    # `failing_end` of the documented shape met a KeyError. Unknown values are null.
    out, p = cli_json(ws, "bisect", "toggles", "--env", "X=1", "--env", "Y=1", "--", PY, "-c", "pass", code=2)
    documented = {"status", "exit_code", "message", "session", "mode", "sets", "queries", "trials", "executed",
                  "runs", "uncertain", "reverse_check", "target", "toggles", "flaky", "rule", "verdict_runs",
                  "failing_end"}
    assert documented <= set(out), documented - set(out)
    assert out["status"] == "refused" and out["runs"] == 2 and out["toggles"] == 2 and out["failing_end"] is None
    out, p = cli_json(ws, "bisect", "toggles", "--count", "pass_y", "--", PY, "-c", "pass", code=2)
    assert {"nth", "calls", "low", "high", "runs", "target"} <= set(out) and out["nth"] is None


def test_outside_git_a_linked_directory_is_copied_as_its_link(tmp_path):
    """An adversarial probe: outside git, the workspace copy a toggle bisection runs in left out `lib -> real` (a
    link to a directory is listed among os.walk's directories), and a repro importing from it failed at both ends."""
    from dbglog.bisect.toggles import copy_workspace

    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "helper.py").write_text("x = 1\n")
    os.symlink("real", tmp_path / "lib")
    (tmp_path / "app.py").write_text("pass\n")
    dest = tmp_path / ".dbglog" / "bisect" / "s" / "w1"
    copy_workspace(tmp_path, dest, [])
    assert os.path.islink(dest / "lib") and os.readlink(dest / "lib") == "real"
    assert (dest / "lib" / "helper.py").read_text() == "x = 1\n"
