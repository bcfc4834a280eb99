"""The one lifecycle of a bisection driver, whatever its kind (issue 13).

``bisect git`` (``history.py``, and its probabilistic phase in ``flaky.py``) and ``bisect toggles``
(``toggles.py``) differ in what a key is and how it is placed; what happens around the search is
the same and lives here:

* SIGTERM and SIGHUP become ``KeyboardInterrupt`` while the driver runs (as Ctrl-C is), so every
  way of stopping a driver takes one path;
* on an interrupt the session's leftovers (repros marked with the session) are killed, the session
  is released (``interrupted``, no pid: resumable) and the one result says so:
  "interrupted after N step(s); `dbglog bisect resume SID` continues";
* on an error the session is released (resumable) and the error re-raised;
* the clean-up steps (worktrees removed, copies removed, in-place edits restored, the progress
  line closed) run on every exit, shielded from a second signal so a restore is never cut short;
* ``conclude`` (finish and record into the investigation) runs after the clean-up with the stop
  signals noted, not acted on: the search is over, so a late signal neither loses the answer
  half-recorded nor kills the process with the default action (it ends with the result).

Claiming a session (refusing a live driver) and reaping a killed driver's leftovers before a
resume are :func:`claim`.
"""

from __future__ import annotations

import signal
import threading
from typing import Callable, Iterable

from dbglog.bisect.session import SessionDB, reap_leftovers

#: the signals that stop a driver the way Ctrl-C does (SIGINT is already KeyboardInterrupt)
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def shielded(fn: Callable[[], object]) -> None:
    """Run ``fn`` with SIGINT/SIGTERM/SIGHUP held back (delivered after it returns)."""
    sigs = {signal.SIGINT, *STOP_SIGNALS}
    main = threading.current_thread() is threading.main_thread()
    if main:
        signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    try:
        fn()
    finally:
        if main:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, sigs)


def _clean_up(steps: Iterable[Callable[[], object]]) -> None:
    """Every step runs, shielded, even when an earlier one failed (its error is raised after)."""
    error = None
    for fn in steps:
        try:
            shielded(fn)
        except Exception as e:  # noqa: BLE001 - the next step (a restore) must still run
            error = error or e
    if error is not None:
        raise error


def interrupted_result(db: SessionDB, sid: str, kind: str) -> dict:
    n = len(db.trials(sid))
    return {"session": sid, "kind": kind, "status": "interrupted", "exit_code": 130,
            "message": f"interrupted after {n} step(s); `dbglog bisect resume {sid}` continues "
                       "(finished steps are kept)"}


def claim(recs, sid: str) -> None:
    """Take a session over for ``resume``: refused while its driver lives; a killed driver's
    leftovers are stopped first."""
    SessionDB(recs.store).claim(sid)
    reap_leftovers(sid)


def run(recs, sid: str, kind: str, drive: Callable[[], dict], *, prepare: Callable[[], object] | None = None,
        cleanup: Iterable[Callable[[], object]] = (), conclude: Callable[[dict], dict | None] | None = None) -> dict:
    """Drive a session to its end under the shared rules (module docstring); the result dict."""
    db = SessionDB(recs.store)
    old = None
    if threading.current_thread() is threading.main_thread():
        old = {s: signal.signal(s, _interrupt) for s in STOP_SIGNALS}
    try:
        try:
            if prepare is not None:
                prepare()
            result = drive()
        except KeyboardInterrupt:
            shielded(lambda: reap_leftovers(sid))
            shielded(lambda: db.release(sid))
            return interrupted_result(db, sid, kind)
        except BaseException:
            shielded(lambda: db.release(sid))  # never left "running" with a dead pid
            raise
        finally:
            _clean_up(cleanup)
    finally:
        if old:
            for s, h in old.items():
                signal.signal(s, h)
    if conclude is not None:
        result = _noted(lambda: conclude(result)) or result
    return result


def _noted(fn: Callable[[], object]):
    """Run ``fn`` (finishing and recording a search that is over) with Ctrl-C, SIGTERM and SIGHUP
    noted, not acted on: a stop that lands now must not lose the answer half-recorded, nor kill the
    process with the default action; the command then ends normally with the result."""
    if threading.current_thread() is not threading.main_thread():
        return fn()
    got: list[int] = []
    old = {s: signal.signal(s, lambda signum, frame: got.append(signum)) for s in (signal.SIGINT, *STOP_SIGNALS)}
    try:
        return fn()
    finally:
        for s, h in old.items():
            signal.signal(s, h)
