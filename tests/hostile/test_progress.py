"""Progress on long work (issue 30): the post-processing after a repro ends (reading, redacting and
classifying its output, recording it) says where it is once it takes over a second -- a rich status
line on a terminal, a JSON progress event on stderr with --json -- and says nothing before."""

from __future__ import annotations

import json
import sys

from conftest import run_cli
from tree_guard import tree_guard  # noqa: F401 - kills what a probe started, pass or fail


def test_json_progress_events_go_to_stderr_and_the_result_stays_one_json(workdir):
    p = run_cli("run", "--json", "--", sys.executable, "-c", "print('x' * 1000)", cwd=workdir,
                env={"DBGLOG_PROGRESS_AFTER": "0"})
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["outcome"] == "pass"
    events = [json.loads(ln) for ln in p.stderr.splitlines() if ln.startswith("{")]
    assert events and all(e["event"] == "progress" and isinstance(e["elapsed_s"], float) for e in events)
    assert {"recording the run"} <= {e["phase"] for e in events}


def test_a_quick_post_processing_says_nothing(workdir):
    p = run_cli("run", "--json", "--", sys.executable, "-c", "pass", cwd=workdir)
    assert p.returncode == 0 and "progress" not in p.stderr


def test_on_a_terminal_the_line_is_a_rich_status(monkeypatch):
    from dbglog.cli import common

    shown: list = []

    class FakeStatus:
        def __init__(self, text):
            shown.append(text)

        def start(self):
            shown.append("start")

        def update(self, text):
            shown.append(text)

        def stop(self):
            shown.append("stop")

    class FakeConsole:
        def __init__(self, stderr):
            assert stderr

        def status(self, text):
            return FakeStatus(text)

    import rich.console

    monkeypatch.setattr(rich.console, "Console", FakeConsole)
    reporter = common.PostProgress(as_json=False, after=0.0)
    reporter.tty = True
    reporter("reading the run's output")
    reporter._due()  # (what the timer calls once the wait is over)
    reporter("recording the run")
    reporter(None)
    assert shown == ["dbglog: reading the run's output", "start", "dbglog: recording the run", "stop"]
