"""A stop signal between the child's start and the supervision loop is held, then raised where the
tree kill runs (it used to kill dbglog with the default action and leave the repro running)."""

import os
import signal

import pytest
from conftest import STOP_SIGNALS

from dbglog.run import runner


@pytest.mark.parametrize("sig", STOP_SIGNALS)
def test_a_signal_before_the_loop_is_held_then_raised_on_arm(sig):
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)}
    trap = runner._trap_stop_signals(defer=True)
    try:
        os.kill(os.getpid(), sig)  # delivered to this (main) thread before kill() returns
        with pytest.raises(runner.Interrupted) as e:
            trap.arm()
        assert e.value.signum == sig
        os.kill(os.getpid(), signal.SIGTERM)  # a second one does not cut the clean-up short
    finally:
        runner._untrap(trap)
    assert {s: signal.getsignal(s) for s in before} == before


def test_armed_at_once_without_defer_and_nothing_held():
    trap = runner._trap_stop_signals()
    try:
        trap.arm()  # nothing came: nothing raised
        with pytest.raises(runner.Interrupted):
            os.kill(os.getpid(), signal.SIGTERM)
    finally:
        runner._untrap(trap)
