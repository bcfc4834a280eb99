"""One typed ``RunOptions`` carries a supervised run's options from every front door (``dbglog run``,
MCP ``run_repro``, a bisection step) to ``runner.run``; bad values are refused where they come in, in
one line, before anything runs or is created."""

import dataclasses
import math
import sys

import pytest
from conftest import run_cli_inproc

from dbglog import ops
from dbglog.run import runner
from dbglog.run.options import RunOptions
from dbglog.util.errors import DbglogError


def test_the_options_are_one_frozen_value_with_runners_defaults():
    o = RunOptions(captures=["py-spy"], on_hang=["echo {pid}"])
    assert o.captures == ("py-spy",) and o.on_hang == ("echo {pid}",)  # lists become tuples
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.timeout = 3  # type: ignore[misc]
    assert RunOptions().output_cap_bytes == runner.DEFAULT_OUTPUT_CAP
    assert RunOptions.of(o, timeout=2.0).timeout == 2.0 and RunOptions.of(o) is o
    with pytest.raises(TypeError):
        RunOptions.of(None, tiemout=2.0)  # a misspelt keyword is an error, as a call's would be
    assert RunOptions.split({"timeout": 1, "cwd": "x"}) == ({"timeout": 1}, {"cwd": "x"})


@pytest.mark.parametrize("changes, words", [
    ({"repeat": 0}, "--repeat must be at least 1"),
    ({"timeout": -1.0}, "--timeout must be a positive"),
    ({"timeout": math.nan}, "--timeout must be a positive"),
    ({"idle_timeout": math.inf}, "--idle-timeout must be a positive"),
    ({"server": "srv", "ready": None}, "--server and --ready go together"),
    ({"server": "'unclosed", "ready": "true"}, "cannot parse --server"),
    ({"escalate_levels": "1,3"}, "need --escalate"),
    ({"escalate": True, "escalate_levels": "3,1"}, "bad --escalate-levels"),
    ({"slurm": "-N1", "server": "srv", "ready": "true"}, "--slurm does not combine with --server"),
    ({"slurm": "--job-name=x"}, "--slurm: --job-name is not allowed"),
])
def test_validate_refuses_bad_values_in_one_line(changes, words):
    with pytest.raises(DbglogError) as e:
        RunOptions(**changes).validate()
    assert words in str(e.value) and "\n" not in str(e.value)


def test_validate_passes_good_values_and_makes_the_ladder():
    o = RunOptions(timeout=5, repeat=3, escalate=True, escalate_levels="1,3,10", dump_include=["gemm*"]).validate()
    ladder = o.ladder()
    assert ladder.levels == (1, 3, 10) and ladder.include == ["gemm*"]
    assert RunOptions().ladder() is None


def test_dbglog_run_hands_one_options_value_to_the_service(workdir, monkeypatch):
    seen = []

    def fake(recs, cmd, opts, **kw):
        seen.append(opts)
        raise DbglogError("stopped here")
    monkeypatch.setattr(ops, "run_repro", fake)
    r = run_cli_inproc(workdir, "run", "--timeout", "7", "--repeat", "2", "--capture", "py-spy", "--quiet",
                       "--", sys.executable, "-c", "")
    assert r.returncode == 2 and "stopped here" in r.stderr
    (o,) = seen
    assert isinstance(o, RunOptions) and (o.timeout, o.repeat, o.captures, o.echo) == (7.0, 2, ("py-spy",), False)
    assert o.output_cap_bytes == 64 << 20


def test_dbglog_run_refuses_a_bad_value_before_the_workspace_exists(tmp_path):
    r = run_cli_inproc(tmp_path, "run", "--escalate-levels", "1,3", "--", "true")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "need --escalate" in r.stderr
    assert not (tmp_path / ".dbglog").exists()


def test_a_bisection_step_runs_with_the_same_options_type():
    from dbglog.bisect import session

    ex = session.Execution(cmd=["true"], grace=2.0, captures=(), server="srv", ready="true", idle_timeout=4.0)
    step, build = ex.run_options(9.0), ex.run_options(None, launched=False)
    assert isinstance(step, RunOptions) and (step.timeout, step.grace, step.server, step.git_info) == (9.0, 2.0, "srv",
                                                                                                          False)
    assert build.server is None and build.idle_timeout == 4.0  # the build is not the server's client
