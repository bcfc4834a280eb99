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

The endpoint phase of every kind is :func:`verify_ends`: a target hands it an :class:`EndsPlan`
(what it knows before the first run: which end is told to fail, or that the direction is to be
learnt) and gets back the ends' steps, the target failure and the step timeout, or a
:class:`Refusal` it puts in its own words.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Collection, NamedTuple, Protocol

from dbglog.bisect.algorithms import Verdict
from dbglog.bisect.session import (Execution, Executor, Progress, SessionDB, Step, Target, calibrate, live_recall,
                                   reap_leftovers, verdict_of)


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
        self.progress.recall = self.progress.recall or live_recall(recs, sid, self.signatures)  # (issue 27)
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


# --- the endpoint phase: one for every kind ----------------------------------------------------

#: the ends' time limit when the user gave none (the failing end's time then sets the step timeout)
END_TIMEOUT = 600.0
#: what an end is judged against before the failing end has defined the target: any failure
PROBE = Target(any_failure=True)


@dataclass
class EndsPlan:
    """What a target knows about its ends before the first run.

    ``failing`` is the end told to fail (history: ``--bad``); None means learn it (toggles' ``--mode``:
    the one end of ``may_fail`` that fails while the others pass). ``strict``: every repeat of the
    failing end must fail the same way (history); otherwise any failing run makes it the failing end,
    flaky included (toggles, whose flaky-safe search calibrates on its runs)."""

    ends: list[str]  # every end, in the order they run
    ask: Callable[[str, Execution, Target, str], Ask]  # (key, execution, target, cache key) -> the target's Ask
    execution: Execution  # how an end runs before calibration (timeout None: END_TIMEOUT)
    ckey: Callable[[str, Execution, Target], str]  # an end's verdict-cache key once the target is known
    save: Callable[[Target, "float | None", str], None]  # store the calibration (target, timeout, failing end)
    failing: str | None = None
    may_fail: Collection[str] = ()
    strict: bool = True
    match: str | None = None
    any_failure: bool = False
    user_timeout: float | None = None
    #: the told failing end's cache key before a target exists (it is looked up and stored there); None: none
    provisional: str | None = None
    #: (target, timeout) stored by an earlier run of this session: the failing end is not run again
    calibrated: "tuple[Target, float | None] | None" = None
    roles: tuple[str, str] = ("", "")  # progress words of the failing and passing ends ("bad end", "good end")


@dataclass
class Refusal:
    """Why the ends do not check out; the target words it. ``why``: ``failing`` (the told end does not
    fail as it must), ``passing`` (an end that must pass does not), ``direction`` (learning: not
    exactly one allowed end fails while the others pass), ``target`` (the failing end's runs do not
    match the target they set)."""

    why: str
    key: str | None = None
    step: Step | None = None


@dataclass
class Ends:
    steps: dict[str, Step]  # every end judged (or, for a refusal, as it ran)
    failing: str | None = None
    target: Target | None = None
    execution: Execution | None = None  # the steps' execution: the calibrated timeout
    refused: Refusal | None = None


def _labelled(ask: Ask, role: str) -> Ask:
    return replace(ask, label=f"{ask.label} ({role})" if role else ask.label)


def _repro_runs(records: list, ex: Execution) -> list:
    """The repro's runs of a trial (a --build run comes first); empty when the build failed."""
    if ex.build:
        return records[1:] if records and records[0]["outcome"] == "pass" else []
    return records


def _judged(step: Step, runs: list, target: Target) -> Step:
    """``step`` judged against ``target`` from its runs (a failed build: the step as it ran)."""
    if not runs:
        return step
    judged = [target.judge(r) for r in runs]
    verdict, reason = verdict_of(judged)
    kinds = [k for k, _ in judged]
    return Step(step.key, verdict, reason, step.outcome, step.signature, step.duration_s, step.runs,
                counts=[kinds.count("bad"), kinds.count("good"), kinds.count("skip")])


def _probe(step: Step, runs: list, strict: bool) -> Step:
    """Does this end fail, before a target exists? Strict: an untestable run makes it untestable and
    repeats that disagree make it flaky, in those words; else the verdict it ran with (any failure)."""
    if not strict or not runs:
        return step
    last = runs[-1]
    mk = lambda v, why: Step(step.key, v, why, last["outcome"], last.get("signature"),  # noqa: E731
                             step.duration_s, step.runs)
    untestable = [why for k, why in map(PROBE.judge, runs) if k == "skip"]
    if untestable:
        return mk(Verdict.SKIP, untestable[0])
    failing = [r for r in runs if r["outcome"] != "pass"]
    if not failing:
        return mk(Verdict.GOOD, "passed" + (f" ({len(runs)}×)" if len(runs) > 1 else ""))
    if len(failing) < len(runs):
        return mk(Verdict.FLAKY, f"repeats disagree: {len(failing)} of {len(runs)} failed")
    return mk(Verdict.BAD, "")


def _fails(step: Step, strict: bool) -> bool:
    return step.verdict is Verdict.BAD or (step.verdict is Verdict.FLAKY and not strict)


def _failing_end(plan: EndsPlan, step: Step, runs: list) -> "tuple[Step, tuple | None]":
    """The failing end judged, and (target, timeout) when it is one: the target is its first
    failing run's failure (session.calibrate), the step timeout from its failing runs' times."""
    probe = _probe(step, runs, plan.strict)
    if not runs or not _fails(probe, plan.strict):
        return probe, None
    cal = calibrate([r for r in runs if PROBE.judge(r)[0] == "bad"], match=plan.match,
                    any_failure=bool(plan.any_failure), user_timeout=plan.user_timeout)
    judged = _judged(step, runs, cal[0])
    if plan.strict and judged.verdict is not Verdict.BAD:  # every repeat must fail the target's way
        why = next(w for k, w in map(cal[0].judge, runs) if k != "bad")
        if not plan.match:
            why = "repeats failed differently: " + ", ".join(sorted({
                r["outcome"] + (f" [{r['signature']}]" if r.get("signature") else "") for r in runs}))
        return replace(judged, verdict=Verdict.SKIP, reason=why, counts=None), None
    if not judged.counts[0]:  # lenient: not one run is the failure the failing end set
        return judged, None
    return judged, cal


def _summary_calibration(plan: EndsPlan, step: Step, ex: Execution) -> tuple:
    """A failing end known without its runs (the verdict cache, an earlier run): its summary."""
    return calibrate([{"outcome": step.outcome, "signature": step.signature, "timeout": ex.timeout,
                       "duration_s": (step.duration_s or 0) / max(1, ex.repeat)}],
                     match=plan.match, any_failure=bool(plan.any_failure), user_timeout=plan.user_timeout)


class _EndsPhase:
    """The state of one :func:`verify_ends`: the ends' steps so far and the runs made before a target
    existed. Its steps: :meth:`recalled` / :meth:`told` / :meth:`learnt` find the failing end and
    its calibration (or a refusal), then :meth:`judge_others` answers every other end against it."""

    def __init__(self, oracle: Oracle, plan: EndsPlan):
        self.oracle, self.plan = oracle, plan
        ex = plan.execution
        self.ex0 = ex if ex.timeout is not None else replace(ex, timeout=END_TIMEOUT)
        self.fail_role, self.pass_role = plan.roles
        self.steps: dict[str, Step] = {}
        self.ran: dict[str, tuple[Step, list]] = {}  # ends that ran before the target existed

    def private(self, key: str) -> str:
        return "endpoint:" + self.oracle.sid + key  # a key no other session asks

    def run_first(self, keys: list[str]) -> dict[str, tuple[Step, list]]:
        asks = [self.plan.ask(k, self.ex0, PROBE, "") for k in keys]
        self.oracle.progress.running(", ".join(a.label for a in asks) + " (endpoints)")
        return dict(zip(keys, self.oracle.collect(asks)))

    def store(self, step: Step, records: list, ckey: str, role: str) -> None:
        label = _labelled(self.plan.ask(step.key, self.ex0, PROBE, ckey), role).label
        self.oracle.persist(step, records, ckey, label)

    # -- the failing end: (failing, target, timeout), or the refusal ------------------------------

    def recalled(self) -> tuple:
        """Calibrated by an earlier run of this session: the failing end is not run again."""
        failing = self.plan.failing
        target, timeout = self.plan.calibrated
        self.steps[failing] = self.oracle.known.get(failing) or Step(failing, Verdict.BAD,
                                                                       self.fail_role or "failing end")
        return failing, target, timeout

    def told(self) -> "tuple | Ends":
        """The told failing end, from the session, the verdict cache under the provisional key, or a
        run (beside up to ``jobs - 1`` other ends, judged later); it must fail as the plan says."""
        oracle, plan, failing = self.oracle, self.plan, self.plan.failing
        fstep, cal = oracle.known.get(failing), None
        if fstep is None and plan.provisional:
            fstep = oracle.lookup(failing, plan.provisional)
            if fstep is not None:
                self.store(fstep, [], plan.provisional, self.fail_role)
        if fstep is None:
            others = [k for k in plan.ends if k != failing and k not in oracle.known][: oracle.jobs - 1]
            self.ran = self.run_first([failing, *others])
            st, rs = self.ran.pop(failing)
            fstep, cal = _failing_end(plan, st, _repro_runs(rs, self.ex0))
            self.store(fstep, rs, plan.provisional or self.private(failing), self.fail_role)
        elif _fails(fstep, plan.strict):
            cal = _summary_calibration(plan, fstep, self.ex0)
        self.steps[failing] = fstep
        if cal is None:
            return Ends(self.steps, failing, refused=Refusal("failing", failing, fstep))
        return failing, *cal

    def learnt(self) -> "tuple | Ends":
        """Every end runs (uncached: there is no target yet); exactly one allowed end must fail while
        the others pass. A refusal stores every end as it ran, its evidence."""
        plan = self.plan
        self.ran = self.run_first(list(plan.ends))
        probes = {k: _probe(st, _repro_runs(rs, self.ex0), plan.strict) for k, (st, rs) in self.ran.items()}
        fails = [k for k in plan.ends if _fails(probes[k], plan.strict)]
        ok = len(fails) == 1 and fails[0] in plan.may_fail and \
            all(probes[k].verdict is Verdict.GOOD for k in plan.ends if k != fails[0])
        failing, fstep, cal = None, None, None
        if ok:
            failing = fails[0]
            st, rs = self.ran[failing]
            fstep, cal = _failing_end(plan, st, _repro_runs(rs, self.ex0))
        if cal is None:
            for k in plan.ends:
                self.store(probes[k], self.ran[k][1], self.private(k), "")
            return Ends(probes, failing, refused=Refusal("target" if ok else "direction", failing,
                                                         fstep if ok else None))
        self.ran[failing] = (fstep, self.ran[failing][1])
        return failing, *cal

    # -- the other ends, against the target ----------------------------------------------------

    def _answered(self, key: str, failing: str, target: Target, ex: Execution) -> Step | None:
        """``key``'s step without a new run: from the session (told ends only), its run beside the
        failing end (judged now), or the verdict cache; stored as it is found. None: it must run."""
        plan = self.plan
        st = None if plan.failing is None else self.oracle.known.get(key)
        role = self.fail_role if key == failing else self.pass_role
        if st is None and key in self.ran:
            st, rs = self.ran[key]
            if key != failing:
                st = _judged(st, _repro_runs(rs, self.ex0), target)
            calibrated_run = self.ex0.timeout == ex.timeout
            self.store(st, rs, plan.ckey(key, ex, target) if calibrated_run else self.private(key), role)
        if st is None:
            ck = plan.ckey(key, ex, target)
            st = self.oracle.lookup(key, ck)
            if st is not None:
                self.store(st, [], ck, role)
        return st

    def judge_others(self, failing: str, target: Target, ex: Execution) -> Ends:
        """Every end not yet judged, answered or run with the calibrated execution; each but the
        failing end must pass."""
        plan, steps, pass_role = self.plan, self.steps, self.pass_role
        to_run = []
        for k in plan.ends:
            if k in steps:
                continue
            st = self._answered(k, failing, target, ex)
            if st is None:
                to_run.append(k)
            else:
                steps[k] = st
        if to_run:
            asks = [_labelled(plan.ask(k, ex, target, plan.ckey(k, ex, target)), pass_role) for k in to_run]
            self.oracle.progress.running(", ".join(plan.ask(k, ex, target, "").label for k in to_run) +
                                         (f" ({pass_role})" if pass_role else ""))
            self.oracle.run(asks, lambda a, st, rs: steps.setdefault(a.key, st))  # stored by the oracle
        for k in plan.ends:
            if k != failing and steps[k].verdict is not Verdict.GOOD:
                return Ends(steps, failing, target, ex, Refusal("passing", k, steps[k]))
        return Ends(steps, failing, target, ex)


def verify_ends(oracle: Oracle, plan: EndsPlan) -> Ends:
    """The endpoint phase of every kind of bisection (module docstring; ``EndsPlan``).

    Told which end fails: it is answered from the session, then the verdict cache under the plan's
    provisional key, else run first (beside up to ``jobs - 1`` other ends, judged later), and a
    refusal comes before any other end costs a run. Learning it: every end runs (uncached: there is
    no target yet). The failing end's failure is the target and its time the step timeout
    (``plan.save`` stores both before another end runs); then each other end is answered from the
    session, its run beside the failing end (judged now), the verdict cache, or a run, and must pass.

    An end is stored once it is judged (the progress line with it): the told failing end under the
    provisional key, the others under their cache key when they ran with the calibrated execution,
    else under a key of this session only; a refusal while learning stores every end as it ran."""
    phase = _EndsPhase(oracle, plan)
    if plan.calibrated is not None:
        got = phase.recalled()
    elif plan.failing is not None:
        got = phase.told()
    else:
        got = phase.learnt()
    if isinstance(got, Ends):
        return got
    failing, target, timeout = got
    if plan.calibrated is None:
        plan.save(target, timeout, failing)
    return phase.judge_others(failing, target, replace(phase.ex0, timeout=timeout))
