"""The circuit breaker of `attempt add` and `run --attempt` (dbglog/ops.py: circuit_breaker): the
third failed attempt of an investigation that ends the same way (same failure signature, or a
near-identical result) says so, with the untested key differences and a ready bisect line; three
different failures, or a success in between, do not trip it; the threshold is a config key."""

import json
import sys

from conftest import run_cli


def add(dbg, title, result, *extra):
    code, out, err = dbg("attempt", "add", title, "--did", f"`python train.py --{title.replace(' ', '-')}`",
                         "--result", result, "--outcome", "failed", "--json", *extra)
    assert code == 0, err
    return json.loads(out)


def test_fires_on_the_third_same_failure_not_on_different_ones(dbg, workdir):
    (workdir / ".git").mkdir()
    dbg("new", "decode faults", "--no-env")
    assert add(dbg, "lower lr", "RuntimeError: CUDA error: an illegal memory access at step 120")["circuit_breaker"] \
        is None
    assert add(dbg, "other kernel", "OOM at step 3")["circuit_breaker"] is None
    assert add(dbg, "fp32", "Segmentation fault in libnccl")["circuit_breaker"] is None  # three different: no
    second = add(dbg, "sync after launch", "RuntimeError: CUDA error: an illegal memory access at step 97")
    assert second["circuit_breaker"] is None and second["next"]
    third = add(dbg, "bigger workspace", "runtimeerror: CUDA error: an illegal memory access at step 3")
    b = third["circuit_breaker"]
    assert b is not None and b["count"] == 3 and b["attempts"] == [1, 4, 5] and b["threshold"] == 3
    assert "stop patching" in b["message"]
    assert b["bisect"].startswith("dbglog bisect git --good REV --bad HEAD") and "python train.py" in b["bisect"]
    assert third["next"] == [b["bisect"]]
    # key differences: listed, and the bisection becomes the toggle one once a row has an apply spec
    dbg("diff", "add", "CUDA graphs", "off", "on", "--apply", "env:USE_GRAPHS=1")
    b = add(dbg, "pin memory", "RuntimeError: CUDA error: an illegal memory access at step 1")["circuit_breaker"]
    assert b["count"] == 4 and b["untested_differences"][0]["factor"] == "CUDA graphs"
    assert "bisect toggles --from-diffs" in b["bisect"]
    code, out, err = dbg("attempt", "add", "once more", "--did", "x", "--result",
                         "RuntimeError: CUDA error: an illegal memory access at step 8", "--outcome", "failed")
    assert "Circuit breaker:" in out and "untested: 1. CUDA graphs: off vs on" in out and "next: dbglog bisect" in out


def test_a_success_resets_and_threshold_is_configurable(dbg, workdir):
    (workdir / ".git").mkdir()
    dbg("new", "hang", "--no-env")
    for t in ("a", "b"):
        add(dbg, t, "still hangs")
    code, out, _ = dbg("attempt", "add", "c", "--did", "x", "--result", "works now", "--outcome", "worked", "--json")
    assert json.loads(out)["circuit_breaker"] is None and "resolved" in json.loads(out)["next"][0]
    assert add(dbg, "d", "still hangs")["circuit_breaker"] is None  # counted since the success
    (workdir / ".dbglog" / "config.toml").write_text("[breaker]\nthreshold = 2\n")
    assert add(dbg, "e", "Still hangs.")["circuit_breaker"]["count"] == 2


FAIL = "import sys; print('RuntimeError: CUDA error: an illegal memory access was encountered " \
       "(step %s)' % sys.argv[1], file=sys.stderr); sys.exit(1)"


def test_run_attempt_same_signature(workdir):
    (workdir / ".git").mkdir()
    (workdir / "f.py").write_text(FAIL)
    run_cli("new", "illegal address", "--no-env", cwd=workdir)
    outs = []
    for k in range(3):  # different commands, different lines: the same signature
        r = run_cli("run", "--json", "--attempt", f"try {k}", "--", sys.executable, "f.py", str(k), cwd=workdir)
        assert r.returncode == 1, r.stderr
        outs.append(json.loads(r.stdout))
    assert outs[0]["circuit_breaker"] is None and outs[1]["circuit_breaker"] is None
    b = outs[2]["circuit_breaker"]
    assert b["signature"] == "gpu.illegal_address" and b["count"] == 3 and "f.py 2" in b["bisect"]
    r = run_cli("run", "--attempt", "try 4", "--", sys.executable, "f.py", "4", cwd=workdir)
    assert "Circuit breaker: 4 failed attempts ended the same way [gpu.illegal_address]" in r.stdout + r.stderr
