"""--escalate: the kernel-API log level rises 1 -> 3 -> 10 across failing repeats (dbglog/run/escalate.py)."""

from __future__ import annotations

import json
import os
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import run_cli, run_cli_inproc
from dbglog.run import escalate, runner
from dbglog.util.errors import DbglogError

PY = sys.executable
# Says which level it got; at level 10 writes a tensor dump where FlashInfer would; always fails.
REPRO = r"""
import os, sys
lv = os.environ.get("FLASHINFER_LOGLEVEL")
print("level", lv, os.environ.get("SGLANG_KERNEL_API_LOGLEVEL"), os.environ.get("FLASHINFER_DUMP_INCLUDE"))
dest = os.environ["FLASHINFER_LOGDEST"].replace("%i", str(os.getpid()))
with open(dest, "w") as f:
    f.write("[2026-03-19 00:47:06] FlashInfer API Call: BatchDecodeWithPagedKVCacheWrapper.run\n")
if lv == "10":
    d = os.path.join(os.environ["FLASHINFER_DUMP_DIR"], "20260319_004706_000_pid%d_decode_call0001" % os.getpid())
    os.makedirs(d)
    open(os.path.join(d, "inputs.pt"), "wb").write(b"x")
sys.exit(1)
"""


def test_three_failures_record_levels_1_3_10_and_list_the_dump_directory(workdir):
    (workdir / "repro.py").write_text(REPRO)
    r = run_cli("run", "--json", "--repeat", "3", "--escalate", "--dump-include", "BatchDecode*",
                "--dump-exclude", "*norm*", "--", PY, "repro.py", cwd=workdir)
    assert r.returncode == 1, r.stderr
    runs = json.loads(r.stdout)["runs"]
    assert [x["kernel_api_level"]["level"] for x in runs] == [1, 3, 10]
    outputs = [open(x["paths"]["output"]).read() for x in runs]
    assert outputs[0].startswith("level 1 1 None") and outputs[2].startswith("level 10 10 BatchDecode*")
    top = runs[2]["kernel_api_level"]
    assert top["include"] == ["BatchDecode*"] and top["exclude"] == ["*norm*"]
    assert top["dump_dir"].startswith(os.path.dirname(runs[2]["paths"]["output"]))
    assert top["dump_count"] == 1 and top["dumps"][0].endswith("inputs.pt")
    assert "dump_dir" not in runs[0]["kernel_api_level"]
    assert runs[0]["kernel_api_level"]["log_dest"][0].endswith("flashinfer_%i.log")  # one file per process


def test_a_pass_keeps_the_level_and_a_custom_ladder_goes_through_5():
    lad = escalate.Ladder(escalate.parse_ladder("1,3,5,10"))
    seen = []
    for outcome in ("fail", "pass", "crash", "hang", "fail", "fail"):
        seen.append(lad.level)
        lad.after(outcome)
    assert seen == [1, 3, 3, 5, 10, 10]


@pytest.mark.parametrize("text", ["1,2", "3,1", "1,1", "x", "11", ","])
def test_bad_ladders_are_refused(text):
    with pytest.raises(DbglogError, match="escalate-levels"):
        escalate.parse_ladder(text)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(escalate.LEVELS), min_size=1, max_size=5))
def test_parse_ladder_accepts_exactly_the_rising_known_levels(levels):
    text = ",".join(map(str, levels))
    if levels == sorted(set(levels)):
        assert escalate.parse_ladder(text) == tuple(levels)
    else:
        with pytest.raises(DbglogError):
            escalate.parse_ladder(text)


def test_cli_refuses_dump_filters_without_escalate(workdir):
    r = run_cli_inproc(workdir, "run", "--dump-include", "x*", "--", PY, "-c", "pass")
    assert r.returncode == 2 and "need --escalate" in r.stderr and "Traceback" not in r.stderr


def test_level_1_by_default_only_when_the_hooks_are_there(tmp_path, monkeypatch):
    monkeypatch.setattr(escalate, "_packages_present", lambda: False)
    for k in list(os.environ):
        if k.startswith(("FLASHINFER_", "SGLANG_")):
            monkeypatch.delenv(k)
    code = "import os; print('L=%s' % os.environ.get('FLASHINFER_LOGLEVEL'))"
    plain = runner.run([PY, "-c", code], run_dir=tmp_path / "a", echo=False, git_info=False)
    assert "L=None" in open(plain.paths["output"]).read()
    hooked = runner.run([PY, "-c", code], run_dir=tmp_path / "b", echo=False, git_info=False,
                        env_overrides={"FLASHINFER_WORKSPACE_BASE": str(tmp_path)})
    assert "L=1" in open(hooked.paths["output"]).read()
    assert any("level 1" in n for n in hooked.notes)
    mine = runner.run([PY, "-c", code], run_dir=tmp_path / "c", echo=False, git_info=False,
                      env_overrides={"FLASHINFER_LOGLEVEL": "5"})
    assert "L=5" in open(mine.paths["output"]).read()  # the user's own level is never lowered


def test_a_bisection_step_escalates_across_its_failing_repeats(recs, tmp_path):
    """`bisect git --escalate --repeat 3`: the Executor raises the level run by run within a step,
    and each step gets a fresh TRITON_CACHE_DIR that is removed afterwards."""
    from dbglog.bisect import session as S

    code = "import os; print('TRITON', os.environ['TRITON_CACHE_DIR'])\n" + REPRO
    (tmp_path / "repro.py").write_text(code)
    ex = S.Execution(cmd=[PY, "repro.py"], repeat=3, escalate=True)
    step, records = S.Executor(recs, "sess", ex).run_trial("k", S.Target(outcome="fail"), cwd=str(tmp_path))
    assert [r["kernel_api_level"]["level"] for r in records] == [1, 3, 10]
    caches = {open(r["paths"]["output"]).read().split()[1] for r in records}
    assert len(caches) == 1 and not os.path.exists(caches.pop())  # one per step, cleaned up


def test_bisect_toggles_escalates_its_failing_trials(workdir):
    """`bisect toggles --escalate --repeat 3` (the step options shared with `bisect git`): the trials
    with the culprit on fail at levels 1, 3 and 10, each run recording its level."""
    (workdir / "repro.py").write_text("import os, sys\nif os.environ.get('BREAK'):\n" +
                                      "".join("    " + ln + "\n" for ln in REPRO.strip().splitlines()))
    r = run_cli("bisect", "toggles", "--json", "--escalate", "--repeat", "3", "--env", "BREAK=1", "--env", "NOISE=1",
                "--", PY, "repro.py", cwd=workdir)
    assert r.returncode == 0, r.stdout + r.stderr
    assert [sorted(s) for s in json.loads(r.stdout)["sets"]] == [["BREAK"]]
    levels = []
    for f in sorted((workdir / ".dbglog" / "runs").glob("*/result.json"), key=lambda p: p.stat().st_mtime_ns):
        d = json.loads(f.read_text())
        if d["outcome"] == "fail":
            levels.append(d["kernel_api_level"]["level"])
    assert levels[:3] == [1, 3, 10] and set(levels) == {1, 3, 10}, levels


def test_hook_packages_absent_without_importing_metadata(tmp_path, monkeypatch):
    """The hook lookup reads sys.path's directories for the distributions importlib.metadata would
    find, without importing it (its import is most of a bisection step's one-time cost); a name
    that matches, or a path entry it cannot judge, is left to importlib.metadata."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.setattr(sys, "path", [str(site), str(tmp_path / "missing")])
    assert escalate._surely_absent(("flashinfer-python", "sgl-kernel"))
    (site / "sgl_kernel-0.1.0.dist-info").mkdir()
    assert not escalate._surely_absent(("flashinfer-python", "sgl-kernel"))
    (site / "sgl_kernel-0.1.0.dist-info").rmdir()
    (site / "Flashinfer_Python-0.2.egg-info").mkdir()
    assert not escalate._surely_absent(("flashinfer-python",))
    zipped = tmp_path / "lib.zip"
    zipped.write_bytes(b"PK")
    monkeypatch.setattr(sys, "path", [str(zipped)])
    assert not escalate._surely_absent(("sglang",))
