"""An apply spec `bisect toggles --from-diffs` could not use is refused when the row is written
(one line, exit 2, nothing stored), through the CLI and the MCP tools' shared path."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli_inproc


@pytest.fixture
def inv(workdir):
    assert run_cli_inproc(workdir, "new", "race in the decode kernel", "--no-env").returncode == 0
    return workdir


def _rows(cwd):
    return json.loads(run_cli_inproc(cwd, "diff", "list", "--json").stdout)


@pytest.mark.parametrize("spec", ["env:", "env:1BAD", "bogus:x", "config:onlyfile", "env:X on=1 sideways=2"])
def test_an_unusable_apply_spec_is_refused_and_nothing_is_stored(inv, spec):
    before = _rows(inv)
    p = run_cli_inproc(inv, "diff", "add", "HIP_LAUNCH_BLOCKING", "1", "unset", "--apply", spec)
    assert p.returncode == 2 and p.stderr.startswith("dbglog: bad --apply") and p.stderr.count("\n") == 1, p.stderr
    assert _rows(inv) == before


def test_usable_specs_are_stored_and_say_which_side_each_state_is(inv):
    p = run_cli_inproc(inv, "diff", "add", "HIP_LAUNCH_BLOCKING", "1", "unset", "--apply", "env:HIP_LAUNCH_BLOCKING")
    assert p.returncode == 0, p.stderr
    assert "off = HIP_LAUNCH_BLOCKING=1 (working case)" in p.stdout
    # a config file that is not here (it may be relative to where the repro runs) is not refused
    assert run_cli_inproc(inv, "diff", "add", "TP", "1", "2", "--apply", "config:serve.yaml:tp").returncode == 0
    p = run_cli_inproc(inv, "diff", "set", "TP", "--apply", "env:")
    assert p.returncode == 2 and "bad --apply" in p.stderr
    rows = _rows(inv)
    assert [r["apply"] for r in rows["rows"]] == [
        "env:HIP_LAUNCH_BLOCKING", "config:serve.yaml:tp"]


def test_the_same_state_on_both_sides_is_nothing_to_switch(inv):
    p = run_cli_inproc(inv, "diff", "add", "NCCL_ALGO", "Ring", "Ring", "--apply", "env:NCCL_ALGO")
    assert p.returncode == 2 and "nothing to switch" in p.stderr
