"""Probabilistic history bisection: ``bisect git --flaky`` / ``--rate``, and the automatic switch.

The driver around :class:`~dbglog.bisect.bayes.FlakyHistory` for ``history._Driver`` (it reuses
its worktrees, executor, persistence and recording helpers). Three ways in:

* ``--flaky``: from the start (the bad end is run until it fails, which defines the target; the
  investigation's earlier runs of the same command at the bad end count as evidence of
  P(fail | bad) at no cost, and a failing one spares that run -- ``earlier_runs``);
* ``--rate``: failure-rate bisection -- both ends fail, at different rates; they are run until
  their rates are told apart (``bayes.rate_gap``), then the same search on those frequencies;
* automatically, when the deterministic search met repeats that disagree (a flaky bad end, or
  flaky commits keeping the culprit from being isolated): every run already made is evidence.

Evidence is the *runs* recorded in the session, judged against the session's target each time
the driver starts: the posterior is a pure function of them (``bayes`` module docstring), so
``resume`` after a kill -9 starts from exactly the posterior the killed driver had after its
last recorded step. Each step row also stores the top of the posterior as it stood once that
step was in (``Step.posterior``), which ``bisect log`` shows and a test compares after kill -9.

``bisect toggles --flaky`` has its own small driver (``toggles._drive_flaky``) over
``bayes.SetPosterior``; it borrows the budget and endpoint constants from here.

Merges: the probabilistic model needs a line, so it follows first parents from the bad end
(the answer is then the merge that brought the bug in, as with ``--first-parent``; said in the
notes when the range has merges).
"""

from __future__ import annotations

import json
import math
from dataclasses import replace

from dbglog.bisect import session as S
from dbglog.bisect.algorithms import Verdict
from dbglog.bisect.bayes import FlakyHistory
from dbglog.bisect.oracle import Ask

#: runs the bad end gets: until its first failure, which defines the target (the rate is learnt
#: from every run of the search; more runs here cost more than they tell -- bench/flaky_bisect_bench.py)
BAD_END_RUNS = 1
#: runs the good end gets up front: none (the user vouches for it, as git bisect trusts it); it is
#: run when the answer is its child, to verify the answer against it
GOOD_END_RUNS = 0
#: the bad end is given up on after this many runs without showing the failure
MAX_END_RUNS = 60


def default_budget(n: int) -> int:
    """Runs a probabilistic bisection may spend when no --budget is given."""
    return max(200, 50 * math.ceil(math.log2(n + 1)))


def chain_of(parents: dict, bad: str) -> list[str]:
    """The first-parent line from the range's oldest candidate to the bad end (oldest first)."""
    out, c = [], bad
    while c in parents and c not in out:
        out.append(c)
        ps = parents[c]
        if not ps:
            break
        c = ps[0]
    return out[::-1]


def _evidence_words(b: int, g: int, s: int) -> str:
    n = b + g
    words = f"failed {b} of {n} run(s)" if n else "no testable run"
    return words + (f", {s} untestable" if s else "")


def calibrating_label(runs: list[dict]) -> str:
    """What the bad end's runs before the target is set showed ("bad end calibrating: hang 1 of
    1"): they are the calibration, not an untestable end."""
    if not runs:
        return "bad end calibrating: no run yet"
    kinds: dict[str, int] = {}
    for r in runs:
        o = r.get("outcome") or "?"
        kinds[o] = kinds.get(o, 0) + 1
    return "bad end calibrating: " + ", ".join(f"{o} {k} of {len(runs)}" for o, k in kinds.items())


class FlakyDriver:
    def __init__(self, d):
        self.d = d
        sp = self.sp = d.spec
        parents, _, subjects = d.graph()
        d.subjects.update(subjects)
        self.chain = chain_of(parents, sp.bad)
        self.pos = {c: i for i, c in enumerate(self.chain)}
        for g in sp.goods:
            self.pos[g] = -1
        self.n = len(self.chain)
        if any(len(ps) > 1 for c, ps in parents.items() if c in self.pos):
            note = "the range has merges: the probabilistic search follows first parents (the answer is a " \
                   "commit on the first-parent line, possibly the merge that brought the bug in)"
            if note not in sp.notes:
                sp.notes.append(note)
        self.budget = sp.max_steps or default_budget(self.n)
        self.rate = bool(sp.rate)
        self.fh = FlakyHistory(self.n, confidence=float(sp.confidence or 0.95), budget=self.budget,
                               jobs=d.jobs, rate=self.rate, bad_end_runs=BAD_END_RUNS,
                               good_end_runs=GOOD_END_RUNS, max_end_runs=MAX_END_RUNS)
        self.steps = {t.key: t for t in d.db.trials(d.sid)}
        self.run_cache: dict[str, dict] = {}
        self.attempts: dict[int, int] = {}  # runs tried per position, skips included

    # -- evidence -------------------------------------------------------------------

    def _records(self, step: S.Step) -> list[dict]:
        return self._fetch(step.runs)

    def _fetch(self, ids: list[str]) -> list[dict]:
        out = []
        for rid in ids:
            if rid not in self.run_cache:
                try:
                    self.run_cache[rid] = self.d.recs.store.get_run(rid)
                except Exception:  # a pruned run: its counts in the step still stand below
                    self.run_cache[rid] = {}
            out.append(self.run_cache[rid])
        return out

    def _repro_runs(self, records: list[dict]) -> list[dict]:
        build = self.sp.build
        return [r for r in records if r and not (build and r.get("cmd") == ["sh", "-c", build])]

    def counts(self, step: S.Step, target: S.Target) -> tuple[int, int, int]:
        """(bad, good, untestable) runs of a step, judged against ``target`` from the run records
        (the step's own counts when the records are gone, or for a verdict marked by hand)."""
        if step.source == "manual":
            return {Verdict.BAD: (1, 0, 0), Verdict.GOOD: (0, 1, 0)}.get(step.verdict, (0, 0, 1))
        records = self._records(step)
        if records and all(records):  # every run record at hand: judge them now
            runs = self._repro_runs(records)
            if not runs:  # only failed builds
                return 0, 0, 1
            kinds = [target.judge(r)[0] for r in runs]
            return kinds.count("bad"), kinds.count("good"), kinds.count("skip")
        if step.counts:
            b, g, s = (list(step.counts) + [0, 0, 0])[:3]
            return int(b), int(g), int(s)
        return {Verdict.BAD: (1, 0, 0), Verdict.GOOD: (0, 1, 0), Verdict.FLAKY: (1, 1, 0)}.get(step.verdict, (0, 0, 1))

    def earlier_runs(self) -> list[dict]:
        """The investigation's runs of this very command at the bad end, on a clean checkout of it,
        made before this bisection began: evidence of how often the bad end fails, at no cost (the
        runs a person looked at before writing "up to 6 tries"). Their ids are fixed in the spec the
        first time, so a resumed session replays the same ones."""
        d, sp = self.d, self.sp
        if sp.earlier is None:
            rows = d.recs.store.q("SELECT id, cmd FROM runs WHERE investigation_id = ? AND git_commit = ? AND "
                                  "git_dirty = 0 AND outcome != 'error' AND started < ? ORDER BY started", d.inv,
                                  sp.bad, d.session.get("created") or "~").fetchall() if d.inv and not self.rate else []
            mine = {r for st in self.steps.values() for r in st.runs}
            sp.earlier = [r["id"] for r in rows if json.loads(r["cmd"] or "[]") == list(sp.cmd) and r["id"] not in mine]
            if sp.earlier:
                sp.notes.append(f"{len(sp.earlier)} earlier run(s) of this command at the bad end, from the "
                                "investigation, count as evidence of its failure rate (not re-run)")
            d.db.update_spec(d.sid, sp.to_stored())
        return [r for r in self._fetch(sp.earlier) if r and not r.get("infra_tainted")]

    def replay(self, target: S.Target) -> None:
        runs = self.earlier_runs()
        if runs:
            kinds = [target.judge(r)[0] for r in runs]
            self.fh.earlier(kinds.count("bad"), kinds.count("good"))
        for key, st in self.steps.items():
            p = self.pos.get(key)
            if p is None:
                continue
            b, g, s = self.counts(st, target)
            self.attempts[p] = self.attempts.get(p, 0) + b + g + s
            if b or g:
                self.fh.record(p, b, g)
            elif s:
                self.fh.skipped(p)

    def snapshot(self) -> list:
        key = {i: c for i, c in enumerate(self.chain)}
        return [[key[i], round(p, 6)] for i, p in self.fh.post.top(5)]

    def merge(self, sha: str, new: S.Step, target: S.Target) -> S.Step:
        old = self.steps.get(sha)
        runs = (list(old.runs) if old else []) + list(new.runs)
        st = S.Step(sha, Verdict.SKIP, "", new.outcome or (old.outcome if old else None),
                    new.signature or (old.signature if old else None),
                    round((old.duration_s if old else 0) + (new.duration_s or 0), 3), runs, "run")
        b, g, s = self.counts(st, target) if target else (0, 0, 0)
        st.counts = [b, g, s]
        st.verdict = Verdict.FLAKY if b and g else Verdict.BAD if b else Verdict.GOOD if g else Verdict.SKIP
        st.reason = _evidence_words(b, g, s) if (b or g) else (new.reason or "untestable")
        return st

    # -- phases ---------------------------------------------------------------------

    def ckey(self, sha: str) -> str:
        # never shared with other sessions: a step's verdict here is a tally, not a verdict
        return f"flaky:{self.d.sid}:{sha}"

    def calibrate(self) -> str | None:
        """Run the bad end until it shows a failure that defines the target. The refusal, if any."""
        d, sp = self.d, self.sp
        bad = sp.bad
        prov = S.Target(match=sp.match, any_failure=sp.any_failure)
        ex0 = replace(d.execution(sp.timeout or 600.0), repeat=1)
        earlier = self.earlier_runs()
        while True:
            st = self.steps.get(bad)
            recs = self._repro_runs(self._records(st)) if st else []
            failing = [r for r in earlier + recs if r.get("outcome") not in ("pass", "error") and not r.get("infra_tainted")
                       and r.get("exit_code") != 125 and (not prov.match or prov._matches(r))]
            if failing:
                break
            if len(recs) >= MAX_END_RUNS:
                return (f"the bad end {sp.bad_ref} ({bad[:10]}) never showed the failure in {len(recs)} runs: "
                        "nothing to bisect (check the command and --bad)")
            d.progress.running(d.label(bad) + " (bad end, until it fails)")
            ((s, rs),) = d.oracle.collect([Ask(bad, "", ex0, S.Target(any_failure=True))])
            for r in rs:
                self.run_cache[r["id"]] = r
            merged = self.merge(bad, s, None)
            merged.counts = None
            runs = self._repro_runs([self.run_cache.get(r, {}) for r in merged.runs])
            merged.reason = calibrating_label(runs)
            d.persist(merged, rs, self.ckey(bad), role="bad end")
            self.steps[bad] = merged
        first = failing[0]
        target, timeout = S.calibrate([{"outcome": first["outcome"], "signature": first.get("signature"),
                                        "duration_s": first.get("duration_s") or 0, "timeout": ex0.timeout}],
                                      match=sp.match, any_failure=sp.any_failure,
                                      user_timeout=sp.timeout)
        sp.calibrated = {"target": {k: getattr(target, k) for k in ("outcome", "signature", "match",
                                                                          "any_failure")}, "timeout": timeout}
        d.db.update_spec(d.sid, sp.to_stored())
        return None

    def drive(self) -> dict:
        d, sp = self.d, self.sp
        sp.flaky = sp.flaky or "auto"
        d.db.update_spec(d.sid, sp.to_stored())
        if sp.calibrated is None:
            why = self.calibrate()
            if why:
                return d.finish_refused(why)
        d.target = S.Target(**sp.calibrated["target"])
        d.ex = replace(d.execution(sp.calibrated["timeout"]), repeat=1)
        self.replay(d.target)
        labels = {-1: sp.goods[0]}
        while not self.fh.done:
            picks = self.fh.next_runs()
            if not picks:
                break
            want: dict[str, int] = {}
            for p in picks:
                sha = labels.get(p) or self.chain[p]
                want[sha] = want.get(sha, 0) + 1
            h, ph = self.fh.post.top(1)[0]
            d.progress.running(", ".join(d.label(c) + (f" ×{k}" if k > 1 else "") for c, k in want.items())
                               + f" · most probable {self.chain[h][:10]} ({ph:.2f}) · {self.fh.runs} runs")
            for k in sorted(set(want.values())):
                shas = [c for c, v in want.items() if v == k]
                d.oracle.run([Ask(c, "", replace(d.ex, repeat=k), d.target) for c in shas],
                             lambda a, st, rs: self._done(a.key, st, rs))  # _done stores the merged tally
        return self.finish()

    def _done(self, sha: str, step: S.Step, records: list) -> None:
        d = self.d
        for r in records:
            self.run_cache[r["id"]] = r
        merged = self.merge(sha, step, d.target)
        old = self.steps.get(sha)
        ob, og, os_ = self.counts(old, d.target) if old else (0, 0, 0)
        b, g, s = merged.counts
        p = self.pos[sha]
        self.attempts[p] = self.attempts.get(p, 0) + (b - ob) + (g - og) + (s - os_)
        if b - ob or g - og:
            self.fh.record(p, b - ob, g - og)
        elif s - os_:
            self.fh.skipped(p)
        if self.attempts.get(p, 0) >= MAX_END_RUNS and not (b or g):
            self.fh.skipped(p)
        merged.posterior = self.snapshot()
        top_key, top_p = merged.posterior[0]
        merged.reason += f"; then P(first bad = {top_key[:10]}) = {top_p:.3f}"
        role = "bad end" if sha == self.sp.bad else "good end" if p == -1 else ""
        d.persist(merged, records, self.ckey(sha), role=role)
        self.steps[sha] = merged

    # -- result ---------------------------------------------------------------------

    def finish(self) -> dict:
        d, sp = self.d, self.sp
        if self.fh.refused:
            return d.finish_refused(self.fh.refused)
        v = self.fh.result(k=5)
        a, b = v.rates
        steps = d._steps()
        post = [{"commit": self.chain[i], "short": self.chain[i][:10], "subject": d.subjects.get(self.chain[i], ""),
                 "probability": round(p, 4)} for i, p in v.top]
        h, ph = v.top[0]
        culprit = self.chain[h]
        parent = self.chain[h - 1] if h > 0 else sp.goods[0]
        cf, cn = self.fh.post.counts(h)
        pf, pn = self.fh.post.counts(h - 1) if h > 0 else tuple(self.fh.good_end)
        verification = {"culprit": {"commit": culprit, "failed": cf, "runs": cn},
                        "runs_ids": list(self.steps[culprit].runs) if culprit in self.steps else [],
                        "parent": {"commit": parent, "failed": pf, "runs": pn, "good_end": h == 0}}
        mode = "rate" if self.rate else "flaky"
        conf = float(sp.confidence or 0.95)
        rates = (f"P(fail | bad) ≈ {a:.2f}, P(fail | good) ≈ {b:.2f}")
        if v.status == "confident":
            info = d.commit_info(culprit)
            msg = (f"first bad commit (probability {ph:.3f}, {mode} model): {info['short']} {info['subject']}; "
                   f"it failed {cf} of {cn} runs, its parent {pf} of {pn}; {rates}")
            res = d._base("found", 0, msg)
            res["first_bad"] = info
        else:
            msg = (f"--budget of {self.budget} runs spent before any commit reached probability {conf:g}: most "
                   f"probable first bad commit {culprit[:10]} ({ph:.3f}), then "
                   + ", ".join(f"{x['short']} ({x['probability']:.3f})" for x in post[1:4])
                   + f"; {rates}; `dbglog bisect resume {d.sid} --budget N` continues")
            res = d._base("budget_exhausted", 1, msg)
            res["first_bad"] = None
        res.update(mode=mode, probability=round(ph, 4), confidence=conf, posterior=post,
                   rates={"fail_if_bad": round(a, 4), "fail_if_good": round(b, 4)}, verification=verification,
                   budget=self.budget, repro_runs=self.fh.runs,
                   candidates=[{"commit": x["commit"], "short": x["short"], "subject": x["subject"],
                                "verdict": None, "reason": f"probability {x['probability']:.3f}"} for x in post],
                   skipped=[self.chain[p] for p in sorted(self.fh.untestable)], flaky=[], untested=[],
                   steps=steps, notes=sp.notes)
        res["runs"] = d.executed
        res["report"] = d._report(res)
        return res


def drive(d) -> dict:
    return FlakyDriver(d).drive()


def posterior_of(d) -> dict | None:
    """The posterior a probabilistic session stands at, recomputed from its recorded runs
    (what ``bisect status`` shows; equal to what its driver had after its last recorded step)."""
    sp = d.spec
    if not sp.calibrated:
        return None
    f = FlakyDriver(d)
    f.replay(S.Target(**sp.calibrated["target"]))
    a, b = f.fh.post.rates()
    return {"top": [[f.chain[i], round(p, 6)] for i, p in f.fh.post.top(5)], "runs": f.fh.runs,
            "rates": {"fail_if_bad": round(a, 4), "fail_if_good": round(b, 4)}}
