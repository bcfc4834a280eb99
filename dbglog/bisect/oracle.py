"""The oracle of a bisection session: keys in, verdicts out (issue 13; picire's split).

The pure searches (``algorithms.py``, ``bayes.py``) ask questions; a driver turns each into an
:class:`Ask` (key, label, how to run it, what counts as bad, its verdict-cache key) and hands it
here. The oracle answers from, in order:

1. the verdict cache (``SessionDB.cached``: the same trial in any session), through :meth:`lookup`;
2. a run: up to ``jobs`` trials at once, each in a *slot* of the session's :class:`Place` (a git
   worktree for history, a copy of the workspace for toggles), through ``session.Executor``.

Every step is persisted (one transaction) as soon as it finishes, in the driver's thread, before
the next key is chosen: kill -9 loses at most the steps that were running. The driver's
``on_done`` sees each finished trial first and returns the step to store (the raw one, a re-judged
or merged one) or None to keep it out of the session for now (ends judged once the target is
known). The oracle counts trials run and steps answered from the cache, and prints the progress
line of each stored step.

The session's known trials are in :attr:`Oracle.known` (key -> step), loaded once and kept up to
date by every :meth:`persist`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, NamedTuple, Protocol

from dbglog.bisect.algorithms import Verdict
from dbglog.bisect.session import Execution, Executor, Progress, SessionDB, Step, Target, reap_leftovers


@dataclass
class Ask:
    """One question: the verdict for ``key`` run with ``execution`` and judged against ``target``."""

    key: str
    label: str
    execution: Execution
    target: Target
    ckey: str = ""  # where the step is stored / looked up in the verdict cache
    stop: str | None = None  # Executor.run_trial's early stop ("bad", "mixed")
    env: dict = field(default_factory=dict)  # extra environment of this trial
    payload: object = None  # what the place needs beyond the key (toggles: the enabled set)


class Placement(NamedTuple):
    cwd: str
    env: dict
    argv: list | None = None  # None: the execution's own command


class PlaceFailed(Exception):
    """The key could not be placed in its slot (a checkout failed): the step is untestable."""


class Place(Protocol):
    """What a kind of bisection says about where a trial runs (history: worktrees; toggles: copies)."""

    def place(self, ask: Ask, slot: int) -> Placement: ...

    def placed(self, ask: Ask, records: list[dict]) -> None: ...  # annotate the run records


OnDone = Callable[[Ask, Step, list], "Step | None"]


class Oracle:
    def __init__(self, recs, sid: str, place: Place, *, jobs: int = 1, progress: Progress | None = None,
                 signatures=None, db: SessionDB | None = None, workdir=None):
        self.recs = recs
        self.sid = sid
        self.place = place
        self.jobs = max(1, int(jobs))
        self.progress = progress or Progress(1, enabled=False)
        self.db = db or SessionDB(recs.store)
        self._signatures = signatures
        self.workdir = workdir  # the session's work dir (per-step scratch; Executor's default when None)
        self.known: dict[str, Step] = {t.key: t for t in self.db.trials(sid)}
        self.executed = 0  # trials run by this invocation
        self.cached_steps = 0  # steps answered from the verdict cache

    # -- answers ---------------------------------------------------------------------

    def signatures(self):
        """The failure signatures runs are classified with, loaded once per session."""
        if self._signatures is None:
            from dbglog.run import signatures

            self._signatures = signatures.all_signatures(self.recs.ws.config_path)
        return self._signatures

    def lookup(self, key: str, ckey: str, *, confirmed_only: bool = False) -> Step | None:
        """A trustworthy verdict for the same trial from the verdict cache, as a step for ``key``
        (``source == "cache"``); None when there is none."""
        st = self.db.cached(ckey, confirmed_only=confirmed_only)
        if st is None:
            return None
        st.key = key
        return st

    def persist(self, step: Step, records: list, ckey: str, label: str) -> None:
        self.db.record(self.sid, step, ckey, runs=records)
        self.known[step.key] = step
        if step.source == "cache":
            self.cached_steps += 1
        self.progress.stepped(step, label)

    def trial(self, ask: Ask, slot: int) -> tuple[Step, list[dict]]:
        """Run one trial in ``slot`` (any thread)."""
        try:
            where = self.place.place(ask, slot)
        except PlaceFailed as e:
            return Step(ask.key, Verdict.SKIP, str(e)), []
        ex = Executor(self.recs, self.sid, ask.execution, self.signatures(), workdir=self.workdir)
        step, records = ex.run_trial(ask.key, ask.target, cwd=where.cwd, env=where.env | ask.env,
                                         cmd=where.argv, stop=ask.stop)
        self.place.placed(ask, records)
        return step, records

    def run(self, asks: list[Ask], on_done: OnDone | None = None, *, ordered: bool = False) -> None:
        """Run ``asks``, up to ``jobs`` at once, each in a free slot; as each finishes (in this
        thread) ``on_done`` decides what is stored, and it is stored at once. ``ordered``: hand
        them to ``on_done`` in the order asked (a search whose state machine advances per
        result), each as soon as it and every earlier one finished."""

        def finished(ask: Ask, step: Step, records: list) -> None:
            self.executed += 1
            keep = on_done(ask, step, records) if on_done is not None else step
            if keep is not None:
                self.persist(keep, records, ask.ckey, ask.label)

        self.signatures()  # loaded once, here, not by racing worker threads
        if len(asks) <= 1 or self.jobs == 1:
            for ask in asks:
                step, records = self.trial(ask, 0)
                finished(ask, step, records)
            return
        # imported here: concurrent.futures brings logging and traceback (~5 ms), for --jobs only
        from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

        free = list(range(self.jobs))
        todo = list(enumerate(asks))
        pending: dict = {}
        held: dict[int, tuple] = {}  # ordered: finished, waiting for an earlier one
        nxt = 0
        pool = ThreadPoolExecutor(max_workers=min(self.jobs, len(asks)))
        try:
            while todo or pending:
                while free and todo:
                    (i, ask), k = todo.pop(0), free.pop(0)
                    pending[pool.submit(self.trial, ask, k)] = (i, ask, k)
                done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                for f in sorted(done, key=lambda f: pending[f][0]):
                    i, ask, k = pending.pop(f)
                    free.append(k)
                    held[i] = (ask, *f.result())
                for i in sorted(held) if not ordered else []:
                    finished(*held.pop(i))
                while ordered and nxt in held:
                    finished(*held.pop(nxt))
                    nxt += 1
        except BaseException:
            reap_leftovers(self.sid)  # the repros run in their own sessions: stop them so the threads return
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)

    def collect(self, asks: list[Ask]) -> list[tuple[Step, list]]:
        """Run ``asks`` (up to ``jobs`` at once) and hand back (step, run records) in the order
        asked, storing nothing: the endpoint phases judge their ends once the target is known."""
        got: dict[int, tuple] = {}
        index = {id(a): i for i, a in enumerate(asks)}
        self.run(asks, lambda a, st, rs: got.__setitem__(index[id(a)], (st, rs)))
        return [got[i] for i in range(len(asks))]

    def reload(self) -> None:
        """Re-read the session's steps (after a driver stored one beside the oracle)."""
        self.known.update({t.key: t for t in self.db.trials(self.sid)})

    def answer(self, asks: list[Ask], on_done: OnDone | None = None, *, confirmed_only: bool = False,
               on_cached: OnDone | None = None, before_run: Callable[[list[Ask]], None] | None = None,
               ordered: bool = False) -> None:
        """Known keys are skipped, cached ones stored (``on_cached`` may adjust them first), the
        rest run (``before_run`` sees them first: the progress line of what runs)."""
        torun = []
        for ask in asks:
            if ask.key in self.known:
                continue
            st = self.lookup(ask.key, ask.ckey, confirmed_only=confirmed_only)
            if st is None:
                torun.append(ask)
                continue
            keep = on_cached(ask, st, []) if on_cached is not None else st
            if keep is not None:
                self.persist(keep, [], ask.ckey, ask.label)
        if torun:
            if before_run is not None:
                before_run(torun)
            self.run(torun, on_done, ordered=ordered)
