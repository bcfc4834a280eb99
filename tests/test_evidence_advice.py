"""Advice rules as data: the built-in table parses, rules match signatures, evidence and history,
user rules come first and can replace a built-in, bad tables are refused with the file named."""
import pytest

from dbglog.run import advice as A
from dbglog.util.errors import DbglogError


def run(**kw):
    d = {"id": "r1", "cmd": ["python", "repro.py"], "outcome": "fail", "signature": None, "evidence": [],
         "env_overrides": {}, "duration_s": 3.0, "key_lines": []}
    d.update(kw)
    return d


def ids(ctx, rules=None):
    return [a["id"] for a in A.advise(ctx, rules or A.load(None))]


def test_builtin_rules_load_and_are_one_line():
    rules = A.load(None)
    assert len(rules) >= 10 and len({r.id for r in rules}) == len(rules)
    assert all("\n" not in r.step for r in rules)


def test_signature_and_evidence_rules():
    assert "cuda-coredump-to-name-the-kernel" in ids(A.Context(run(signature="gpu.illegal_address")))
    with_dump = run(signature="gpu.illegal_address", evidence=[{"kind": "cuda-coredump"}])
    assert "cuda-coredump-to-name-the-kernel" not in ids(A.Context(with_dump))
    trap = run(signature="rocm.assert_trap", evidence=[{"kind": "rocm-debug-agent", "reason": "ASSERT_TRAP",
                                                        "kernel": "my_fused_kernel(float*)", "pc": "0x10"}])
    got = ids(A.Context(trap))
    assert "assert-trap" in got and "assert-trap-index-bound" not in got
    idx = run(signature="rocm.assert_trap", evidence=[{"kind": "rocm-debug-agent", "reason": "ASSERT_TRAP",
                                                       "kernel": "at::native::index_put_kernel_impl<...>", "op": None}])
    got = ids(A.Context(idx))
    assert "assert-trap-index-bound" in got and "assert-trap" not in got  # the specific one replaces the general
    assert "arch-mismatch" in ids(A.Context(run(signature="build.hip_no_binary")))


def test_vanishes_with_needs_a_failing_run_without_the_switch():
    ok = run(outcome="pass", env_overrides={"HIP_LAUNCH_BLOCKING": "1"})
    assert "launch-blocking-vanishes" not in ids(A.Context(ok))
    assert "launch-blocking-vanishes" not in ids(A.Context(ok, history=[run(cmd=["other"])]))
    assert "launch-blocking-vanishes" in ids(A.Context(ok, history=[run()]))
    still = run(outcome="fail", env_overrides={"HIP_LAUNCH_BLOCKING": "1"})
    assert "launch-blocking-vanishes" not in ids(A.Context(still, history=[run()]))
    step = next(a for a in A.advise(A.Context(ok, history=[run()]), A.load(None)) if a["id"] == "launch-blocking-vanishes")
    assert "dbglog bisect toggles --suspects . --timeout 60 -- python repro.py" in step["step"]


def test_user_rules_first_and_replace_by_id(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[[advice]]\nid = "arch-mismatch"\nwhen = { signature = "build.*" }\nstep = "Use the ROCm 7 wheel"\n'
                   '[[advice]]\nid = "mine"\nwhen = { kernel = "fused_moe", evidence = "rocm-debug-agent" }\n'
                   'step = "Check the expert ids of {kernel}"\n')
    rules = A.load(cfg)
    assert rules[0].id == "arch-mismatch" and rules[0].source == str(cfg)
    assert [r.id for r in rules].count("arch-mismatch") == 1
    out = A.advise(A.Context(run(signature="build.no_kernel_image")), rules)
    assert out[0]["step"] == "Use the ROCm 7 wheel"
    ev = run(evidence=[{"kind": "rocm-debug-agent", "kernel": "void fused_moe_kernel<float>(int*)"}])
    assert any(a["step"] == "Check the expert ids of fused_moe_kernel<…>" for a in A.advise(A.Context(ev), rules))


@pytest.mark.parametrize("bad, msg", [
    ('[[advice]]\nid = "x y"\nstep = "s"\n', "id"),
    ('[[advice]]\nid = "x"\nstep = ""\n', "step"),
    ('[[advice]]\nid = "x"\nstep = "s"\nwhen = { nope = 1 }\n', "when"),
    ('[[advice]]\nid = "x"\nstep = "s"\nwhen = { kernel = "(" }\n', "regex"),
    ('advice = 3\n', "array"),
    ('not toml = =\n', "cannot read"),
])
def test_bad_user_rules_are_refused_with_the_file_named(tmp_path, bad, msg):
    cfg = tmp_path / "config.toml"
    cfg.write_text(bad)
    with pytest.raises(DbglogError, match=msg):
        A.load(cfg)


def test_a_hang_with_no_stack_captured_is_advised_to_capture_them_with_its_own_timeout():
    hung = run(signature=None, outcome="hang", timeout=3.0, duration_s=3.03, cmd=["python", "dead.py"])
    step = next(a["step"] for a in A.advise(A.Context(hung), A.load(None)) if a["id"] == "hang-capture-the-stacks")
    assert step.startswith("See where it is stuck: dbglog run --timeout 3 --capture faulthandler -- python dead.py")
    seen = run(signature=None, outcome="hang", timeout=3.0, evidence=[{"kind": "thread-stacks", "findings": []}])
    assert "hang-capture-the-stacks" not in ids(A.Context(seen))  # (the stacks are there: read them)
