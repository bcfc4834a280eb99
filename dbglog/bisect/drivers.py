"""The bisection kinds and their drivers, registered in one table (``REGISTRY``): ``dbglog bisect
status|log|resume|abort|mark`` look a session's kind up here, for every kind alike.

Each kind of bisection is a module with the same four functions::

    resume(recs, session: dict, *, progress: bool) -> dict     # run to the end; the result dict
    cleanup(recs, session: dict) -> None                      # remove worktrees / restore files
    mark_key(recs, session: dict, ref: str) -> str            # user's REV / toggle list -> trial key
    describe(recs, session: dict) -> dict                     # status: candidates left, steps, ...

A result dict always has "status" (found | complete | inconclusive | flaky | refused | ...),
"exit_code" (0 found, 1 nothing conclusive, 2 refused) and "message" (one line for people).

A row of ``REGISTRY`` is a function that imports its driver with a plain ``from ... import`` (so
``tests/test_layers.py`` sees the edge: this module sits above the drivers, which sit above
``session``), run on first use (``bisect status`` of a git session does not import the toggle kinds).
Never a module name in a string: that hid a cycle (``session`` → ``history`` → ``session``) from the
layer test. Adding a kind: one ``register("kind", loader)`` below.
"""

from __future__ import annotations

from typing import Callable

from dbglog.bisect.algorithms import Verdict
from dbglog.bisect.session import SessionDB, Step, reap_leftovers, secrets_path
from dbglog.util.errors import DbglogError

REGISTRY: dict[str, Callable[[], object]] = {}


def register(kind: str, loader: Callable[[], object]) -> None:
    """``loader()`` returns the module (or object) with the four functions of a ``kind``'s driver."""
    if kind in REGISTRY:
        raise ValueError(f"bisection kind {kind!r} registered twice")
    REGISTRY[kind] = loader


def _history():
    from dbglog.bisect import history

    return history


def _toggles():
    from dbglog.bisect import toggles

    return toggles


register("git", _history)
register("toggles", _toggles)


def driver(kind: str):
    """The driver of a session's ``kind`` (one line for an unknown kind: a newer dbglog's session)."""
    if kind not in REGISTRY:
        raise DbglogError(f"unknown bisection kind {kind!r}")
    return REGISTRY[kind]()


def mark(recs, session: dict, ref: str, verdict: str) -> Step:
    """Correct a verdict by hand; the search replays from the log on the next resume/status."""
    v = Verdict(verdict) if verdict in ("good", "bad", "skip") else None
    if v is None:
        raise DbglogError(f"invalid verdict {verdict!r}: use good, bad or skip")
    key = driver(session["kind"]).mark_key(recs, session, ref)
    step = Step(key, v, "marked by hand", source="manual")
    SessionDB(recs.store).record(session["id"], step, ckey=f"manual:{session['id']}:{key}")
    return step


def abort(recs, session: dict) -> dict:
    import signal

    import psutil

    from dbglog.run import proctree

    def gone(p, timeout: float) -> bool:
        # Not our child: a dead driver stays a zombie until its own parent reaps it (zombie = gone).
        return proctree.wait_gone([p], timeout)

    drv = SessionDB(recs.store).live_driver(session["id"])
    if drv is not None:
        # Stop the driver first: it restores in-place edits and removes worktrees on SIGTERM.
        # Cleaning up under a live driver would let it edit the files again afterwards.
        try:
            drv.send_signal(signal.SIGTERM)
            if not gone(drv, 30):
                drv.kill()
                gone(drv, 10)
        except psutil.Error:
            pass
    survivors = reap_leftovers(session["id"])
    from dbglog.run import slurm
    from dbglog.bisect.spec import from_stored

    cancelled = []  # Slurm jobs a killed driver left on the cluster (tagged with the session)
    if slurm.is_srun(from_stored(session["kind"], session.get("spec") or {}).launcher):
        cancelled = slurm.cancel_tagged(session["id"])
    driver(session["kind"]).cleanup(recs, session)
    SessionDB(recs.store).finish(session["id"], "aborted", {"status": "aborted", "survivors": survivors})
    secrets_path(recs.store, session["id"]).unlink(missing_ok=True)
    return {"id": session["id"], "status": "aborted", "survivors": survivors,
            **({"slurm_cancelled": cancelled} if cancelled else {})}
