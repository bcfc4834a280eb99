"""Probes that start dbglog kill what they started, pass or fail (issue 30: a failing test once left a
`dbglog run` tree running 17 minutes after pytest exited).

``tree_guard`` (autouse in every module that imports it) gives the test a random marker variable that every process it starts
inherits -- dbglog, its repros and their children, unless one clears its environment -- and at the
end kills every process still carrying it, whatever the outcome of the test."""

from __future__ import annotations

import os
import signal
import uuid

import pytest

GUARD_VAR = "DBGLOG_TEST_TREE"


def _marked(value: str) -> list[int]:
    needle = f"{GUARD_VAR}={value}".encode()
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    out.append(int(name))
        except OSError:
            continue
    return out


def kill_marked(value: str) -> list[int]:
    """SIGKILL every process carrying the guard's marker; returns their pids."""
    pids = _marked(value)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return pids


@pytest.fixture(autouse=True)
def tree_guard(monkeypatch):
    if not os.path.isdir("/proc/self"):
        yield None
        return
    value = uuid.uuid4().hex
    monkeypatch.setenv(GUARD_VAR, value)
    yield value
    kill_marked(value)
