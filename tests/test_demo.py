"""The demo's supervised runs go through ``ops.run_repro``, the use case `dbglog run --attempt` and
the MCP tool share (issue 13): recorded the same way, with the evidence and the playbooks' next steps.
(The whole `dbglog demo` runs end to end in test_bisect_history.py and test_packaging.py.)"""

import shlex
import sys

from dbglog import demo, ops


def test_the_demo_runs_record_attempts_like_run_attempt(recs, monkeypatch):
    calls = []
    real = ops.run_repro
    monkeypatch.setattr(ops, "run_repro", lambda *a, **k: calls.append(k["attempt_title"]) or real(*a, **k))
    inv = recs.new("demo", symptom="s").id
    runs = demo.supervised_runs(recs, inv, quiet=True)
    assert calls == ["Run the training step under dbglog run", "Profile with a 1.5 s timeout"]
    assert [(r["outcome"], r["signature"]) for r in runs] == [("crash", "gpu.illegal_address"), ("hang", None)]
    assert runs[1]["survivors"] == []  # the worker that ignores SIGTERM went with the tree
    got = recs.store.load(inv)
    crash, hang = got.attempts
    assert (crash.outcome, hang.outcome) == ("failed", "failed")
    assert crash.did == f"{shlex.quote(sys.executable)} crash_repro.py" and runs[0]["id"] in crash.result
    assert "illegal memory access" in crash.result  # the evidence lines quoted, as `run --attempt` does
    # the playbook's advice for the crash, added as a next step by run_repro
    assert any("CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1" in n.text for n in got.next_steps)
