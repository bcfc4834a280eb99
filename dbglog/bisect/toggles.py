"""Toggle bisection (``dbglog bisect toggles``): the minimal sets of suspects that cause a failure.

A *toggle* is a named suspect with an off and an on state; its kind (env, arg, config, suspect,
coop: what on and off mean for each is the table in :mod:`dbglog.bisect.kinds`) says how a trial
sets it.

``--from-diffs`` turns the rows of an investigation's key-differences table that carry an apply
spec (``env:..``, ``arg:..``, ``config:..``) into toggles named by the row's factor, and marks the
rows ``culprit`` / ``ruled-out`` at the end.

The search is :class:`~dbglog.bisect.algorithms.SafeToggleSearch` around ``ToggleSearch`` (every
minimal failing set, interactions included; each set confirmed; flaky-safe: runs that disagree switch
every verdict to "bad if any of N runs fails", N calibrated on the failing end). This module is the
driver: it turns the search's run requests into supervised runs and checks the two ends
first (all on / all off, through the endpoint phase every kind shares, ``oracle.verify_ends``, in
its learning form) to decide the direction (``--mode auto``: when all-on passes and all-off fails
it searches what must be *disabled* for the failure to appear) and to learn the target failure
(same outcome + signature as the failing end), then turns every query into a supervised trial
through :mod:`dbglog.bisect.oracle` (verdicts, repeats, cache, persistence).

Trial keys are the JSON sorted list of the enabled toggle names, so the result cache is keyed by
the exact toggle set. Counting mode (``--count NAME``) keys are ``{"count": NAME, "limit": K}``.

Source and config edits happen in copies of the workspace (``.dbglog/bisect/<session>/w<i>``, one
per parallel job; the command runs with its cwd and absolute paths mapped into the copy) unless
``--in-place``, which edits the real files behind the journal of :mod:`dbglog.bisect.journal`.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import asdict, replace
from pathlib import Path

from dbglog.bisect import kinds as toggle_kinds
from dbglog.bisect import lifecycle
from dbglog.bisect import session as S
from dbglog.bisect import suspects
from dbglog.bisect.algorithms import CountSearch, SafeToggleSearch, Verdict, complement
from dbglog.bisect.kinds import Toggle, build_toggles
from dbglog.bisect.oracle import END_TIMEOUT, Ask, EndsPlan, Oracle, Placement, verify_ends
from dbglog.bisect.spec import ToggleSpec
from dbglog.bisect.session import (Execution, Progress, SessionDB, Step, Target, cache_key, calibrate,
                                   md_cell, record_section, verdict_of, workdir_root)
from dbglog.coop import COUNT_FILE_VAR, limit_var
from dbglog.util.errors import DbglogError

KIND = "toggles"
PLACEHOLDER = "{toggles}"
ENDPOINT_TIMEOUT = END_TIMEOUT  # the ends run before a per-step timeout can be derived from the bad end


# --- toggles ---------------------------------------------------------------------------


def key_of(names) -> str:
    return json.dumps(sorted(names), ensure_ascii=False)


def count_key(name: str, k: int) -> str:
    return json.dumps({"count": name, "limit": int(k)}, sort_keys=True)


def _fmt_names(names, limit: int = 8) -> str:
    names = list(names)
    shown = ", ".join(names[:limit]) + (f", … (+{len(names) - limit})" if len(names) > limit else "")
    return "{" + shown + "}"


def describe_set(enabled: set[str], all_names: list[str]) -> str:
    if not enabled:
        return "all off"
    if len(enabled) == len(all_names):
        return "all on"
    ordered = [n for n in all_names if n in enabled]
    if len(enabled) > len(all_names) / 2:
        return "all on except " + _fmt_names([n for n in all_names if n not in enabled])
    return _fmt_names(ordered)


def _join(names) -> str:
    names = [f"`{n}`" for n in names]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def result_words(sets: list[list[str]], mode: str) -> str:
    parts = []
    for s in sets:
        if mode == "disable":
            if len(s) == 1:
                parts.append(f"switching {_join(s)} off alone brings the failure back")
            else:
                parts.append(f"the failure appears only when {_join(s)} are all off "
                             "(any one of them on prevents it)")
        elif len(s) == 1:
            parts.append(f"{_join(s)} alone causes the failure")
        else:
            parts.append(f"{_join(s)} fail only together: an interaction between them")
    if not parts:
        return "no failing set was found"
    if len(parts) == 1:
        return parts[0][0].upper() + parts[0][1:] + "."
    return f"{len(parts)} independent causes: " + "; ".join(parts) + "."


# --- running trials -------------------------------------------------------------------------


def _git_files(root: Path) -> list[str] | None:
    try:
        p = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if p.returncode != 0:
        return None
    return [x for x in p.stdout.decode("utf-8", "surrogateescape").split("\0") if x]


def copy_workspace(root: Path, dest: Path, also: list[Path]) -> None:
    """A copy of the workspace's files (git: tracked + untracked-not-ignored; else everything but
    .git/.dbglog), plus ``also`` (the files the toggles edit, even if ignored)."""
    rels = _git_files(root)
    if rels is None:
        rels = []
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in (".git", ".dbglog")]
            # (a link to a directory is listed among the directories, never entered: copied as the link it is, or
            # the copy lacked it -- a `lib -> real` the repro imports from made both ends fail)
            links = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
            rels += [os.path.relpath(os.path.join(dirpath, f), root) for f in [*filenames, *links]]
    rels = [r for r in rels if not r.startswith(".dbglog/") and r != ".dbglog"]
    rels += [os.path.relpath(p, root) for p in also]
    dest.mkdir(parents=True, exist_ok=True)
    for rel in dict.fromkeys(rels):
        src, dst = root / rel, dest / rel
        try:
            if src.is_symlink():
                dst.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(os.readlink(src), dst)
            elif src.is_file():
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dst)
        except FileExistsError:
            pass
        except OSError as e:
            raise DbglogError(f"cannot copy {src} into the bisection's worktree: {e.strerror}") from None


class Trials:
    """Turns a set of enabled toggle names into a supervised trial."""

    def __init__(self, recs, session: dict):
        self.recs = recs
        self.sid = session["id"]
        spec = session["spec"]  # the stored dict, typed once here (start() hands the typed one)
        spec = self.spec = spec if isinstance(spec, ToggleSpec) else ToggleSpec.from_stored(spec)
        self.toggles = [Toggle.from_dict(d) for d in spec.toggles]
        self.names = [t.name for t in self.toggles]
        self.index = {n: i for i, n in enumerate(self.names)}
        self.root = Path(spec.root)
        self.cwd = Path(spec.cwd)
        self.in_place = bool(spec.in_place)
        self.jobs = max(1, int(spec.jobs))
        self.workdir = workdir_root(recs, spec.scratch) / self.sid
        self.originals: dict[str, bytes] = {}
        self.world: str | None = None
        for path, sha in spec.files.items():
            data = Path(path).read_bytes() if Path(path).exists() else b""
            import hashlib

            if hashlib.sha256(data).hexdigest() != sha:
                raise DbglogError(f"{path} changed since bisection {self.sid} started; start a new bisection")
            self.originals[path] = data
        self.journal = None
        if self.originals and self.in_place:
            from dbglog.bisect.journal import Journal

            self.journal = Journal(recs.store, self.sid)
        self._made: set[int] = set()  # slots whose copy this process made
        self.oracle: Oracle | None = None  # set by resume(): the drivers ask it for verdicts
        self.world = S.world(spec.cmd, str(self.cwd), tree=True)  # (the files as found: before any edit of ours)

    # what a trial looks like
    def env_for(self, enabled: set[str]) -> dict:
        return toggle_kinds.env_for(self.toggles, enabled)

    def argv_for(self, enabled: set[str]) -> list[str]:
        words = toggle_kinds.words_for(self.toggles, enabled)
        cmd = list(self.spec.cmd)
        if PLACEHOLDER in cmd:
            i = cmd.index(PLACEHOLDER)
            return cmd[:i] + words + cmd[i + 1:]
        return cmd + words

    def files_for(self, enabled: set[str]) -> dict[str, bytes]:
        return {path: toggle_kinds.edit_file(path, original, self.toggles, enabled)
                for path, original in self.originals.items()}

    # where it runs: the oracle's place (a copy of the workspace per slot; none in place)
    def _slot(self, k: int) -> Path | None:
        if not self.originals or self.in_place:
            return None
        slot = self.workdir / f"w{k + 1}"
        if k not in self._made:  # a fresh copy the first time this process uses the slot
            if slot.exists():
                shutil.rmtree(slot)
            copy_workspace(self.root, slot, [Path(p) for p in self.originals])
            self._made.add(k)
        return slot

    def _map(self, slot: Path | None, p: str) -> str:
        if slot is None or not os.path.isabs(p):
            return p
        try:
            rel = Path(p).relative_to(self.root)
        except ValueError:
            return p
        return str(slot / rel)

    def place(self, ask: Ask, k: int) -> Placement:
        """Put the toggle set ``ask.payload`` (enabled names) into slot ``k``: files edited in the
        slot's copy (or in place, journaled), the environment and the command for that set."""
        enabled = ask.payload
        slot = self._slot(k)
        for path, data in self.files_for(enabled).items():
            if self.journal is not None:
                self.journal.write(Path(path), data)
            else:
                from dbglog.bisect.journal import write_file

                dst = Path(self._map(slot, path))
                if not dst.exists() or dst.read_bytes() != data:
                    write_file(dst, data)
        return Placement(self._map(slot, str(self.cwd)), self.env_for(enabled),
                         [self._map(slot, a) for a in self.argv_for(enabled)])

    def placed(self, ask: Ask, records: list[dict]) -> None:
        pass

    def ask(self, key: str, enabled: set[str], label: str, execution: Execution, target: Target, ckey: str = "",
            stop: str | None = None, env: dict | None = None) -> Ask:
        return Ask(key, label, execution, target, ckey, stop, dict(env or {}), set(enabled))

    def run(self, asks: list[Ask]) -> list[tuple[Step, list[dict]]]:
        """Run ``asks`` through the oracle (up to ``jobs`` at once); (step, records) in the order
        asked, nothing stored (the caller judges and stores)."""
        return self.oracle.collect(asks)

    def cache_extra(self) -> dict:
        if self.world is None:  # (the tree as the bisection found it, before any of its edits: see __init__)
            self.world = S.world(self.spec.cmd, str(self.cwd), tree=True)
        return {"toggles": [t.to_dict() for t in self.toggles], "files": self.spec.files,
                "cwd": str(self.cwd), "in_place": self.in_place, "world": self.world}

    def close(self) -> None:
        if self.journal is not None:
            for path, saved in self.journal.release_all():
                if saved is not None:  # edited by someone during the last trial: kept, said
                    print(f"dbglog: left {path} as it is: it was edited during the bisection; its original is in "
                          f"{saved}", file=sys.stderr)
        shutil.rmtree(self.workdir, ignore_errors=True)


# --- starting ----------------------------------------------------------------------------


def start(recs, spec: ToggleSpec, *, cwd: Path, inv_ref: str | None = None, progress: bool = True) -> dict:
    """Create a toggle bisection session (``spec``: what was asked, checked here) and run it to the end."""
    import hashlib

    spec.validate()
    cwd = Path(cwd).resolve()
    root = recs.ws.root.resolve()
    inv_id = None
    if spec.from_diffs is not None:
        inv_id = recs.resolve(spec.from_diffs or inv_ref)
    elif inv_ref:
        inv_id = recs.resolve(inv_ref)
    else:
        cur = recs.current()
        inv_id = cur if cur and recs.store.exists(cur) else None
    toggles = build_toggles(recs, cwd=cwd, envs=spec.envs, env_offs=spec.env_offs, args=spec.args,
                            args_from=spec.args_from, configs=spec.configs, suspect_paths=spec.suspect_paths,
                            coops=spec.coops, values=spec.toggle_options,
                            from_diffs_inv=inv_id if spec.from_diffs is not None else None)
    if not toggles and not spec.count:
        raise DbglogError(f"no toggles: give {', '.join(toggle_kinds.option_flags(toggles_only=True))}, --count "
                          "or --from-diffs")
    spec.validate_with(toggles)
    # the files the toggles edit: originals, checks
    files: dict[str, str] = {}
    edited_by: dict[str, set] = {}  # file -> the kinds whose toggles edit it
    for t in toggles:
        for p in toggle_kinds.kind_of(t.kind).files(t):
            rp = str(Path(p).resolve())
            edited_by.setdefault(rp, set()).add(t.kind)
            if not spec.in_place and not rp.startswith(str(root) + os.sep):
                raise DbglogError(f"{rp} is outside the workspace {root}: bisections edit a copy of the workspace; "
                                  "use --in-place to edit it where it is")
            files[rp] = hashlib.sha256(Path(rp).read_bytes()).hexdigest()
    if files and not spec.in_place and not (cwd == root or str(cwd).startswith(str(root) + os.sep)):
        raise DbglogError(f"the current directory {cwd} is outside the workspace {root}, so the command could not "
                          "run in the bisection's copy of it: run from inside the workspace or use --in-place")
    for p, ks in edited_by.items():
        if ks == {"config", "suspect"}:
            raise DbglogError(f"{p} has both suspect markers and --config keys; bisect them separately")
        if len(ks) > 1:  # two kinds' edits of one file would be made over each other
            raise DbglogError(f"{p} is edited by toggles of kinds {' and '.join(sorted(ks))}; bisect them separately")
    spec.check_server()  # server-shaped trials, refused before any run
    Execution(**spec.execution_args(), timeout=spec.timeout)  # refuses bad presets and launchers now
    stored = replace(spec, toggles=[t.to_dict() for t in toggles], root=str(root), cwd=str(cwd), files=files,
                     from_diffs="" if spec.from_diffs is not None else None, step_timeout=spec.timeout,
                     argv_text=spec.argv_text or shlex.join(["dbglog", "bisect", "toggles", "--", *spec.cmd]),
                     toggle_options={}, envs=(), env_offs=(), args=(), args_from=(), configs=(),
                     suspect_paths=(), coops=())  # the options became the toggles
    # validate the edits up front (bad keys, suspects that would break a Python file)
    session_like = {"id": "check", "spec": stored}
    probe = Trials(recs, session_like)
    all_on, all_off = set(probe.names), set()
    probe.files_for(all_on)
    for p, data in probe.files_for(all_off).items():
        try:
            compile(probe.originals[p], p, "exec") if suspects.language(p) == "python" else None
        except SyntaxError:
            continue  # the user's file does not compile as it is: not ours to judge
        suspects.check_python(p, data)
    sid = SessionDB(recs.store).create(KIND, stored.to_stored(), inv_id)
    return resume(recs, SessionDB(recs.store).get(sid), progress=progress)


# --- the driver (drivers.py's interface) ----------------------------------------------------


def _update_spec(recs, sid: str, spec: ToggleSpec) -> None:
    SessionDB(recs.store).update_spec(sid, spec.to_stored())  # secrets sealed out of the database there


def resume(recs, session: dict, *, progress: bool = True) -> dict:
    """Run (or continue) a toggle bisection to its end; returns the result dict."""
    trials = Trials(recs, session)
    prog = Progress(2 * math.ceil(math.log2(max(2, len(trials.names)))) + 6, enabled=progress)
    trials.oracle = Oracle(recs, session["id"], trials, jobs=1 if trials.in_place else trials.jobs, progress=prog,
                           workdir=trials.workdir)
    spec = trials.spec
    drive = _drive_count if spec.count else _drive_flaky if spec.flaky else _drive

    def conclude(result: dict) -> None:
        db = SessionDB(recs.store)
        # a refused bisection is finished, not failed: nothing was tested, nothing is blamed
        db.finish(session["id"], "done", result)
        _record(recs, session, trials.spec, result)

    # the restore of in-place edits is shielded: a second Ctrl-C must not cut it short
    return lifecycle.run(recs, session["id"], KIND, lambda: _full_shape(drive(recs, session, trials, prog), trials),
                         cleanup=(prog.close, trials.close), conclude=conclude)


# The keys docs/commands/bisect-toggles.md promises in every --json result (counting mode: _COUNT_KEYS too).
_KEYS = ("queries", "trials", "executed", "runs", "reverse_check", "target", "toggles", "flaky", "rule",
         "verdict_runs", "failing_end")
_COUNT_KEYS = ("nth", "calls", "low", "high")


def _full_shape(result: dict, trials: Trials) -> dict:
    """Every documented key, null where the bisection stopped before knowing it (a refusal), so a
    script reading --json never meets a missing key; what is known by then is filled in."""
    steps = SessionDB(trials.recs.store).trials(trials.sid)
    known = {"trials": len(steps), "runs": sum(sum(counts_of(st)) for st in steps), "toggles": len(trials.names),
             "executed": trials.oracle.executed,
             "target": _target(trials.spec).describe() if trials.spec.target else None}
    for k in _KEYS + (_COUNT_KEYS if trials.spec.count else ()):
        result.setdefault(k, known.get(k))
    result.setdefault("uncertain", [])
    return result


class _Loop:
    """Query -> verdict for the counting search: known keys, the verdict cache, then runs (the oracle)."""

    def __init__(self, recs, session, trials: Trials, prog: Progress, target: Target, execution: Execution):
        self.recs, self.session, self.t, self.prog = recs, session, trials, prog
        self.oracle = trials.oracle
        self.oracle.reload()  # the probe's step was stored beside the oracle
        self.known = self.oracle.known
        self.target, self.execution = target, execution

    def ckey(self, key: str) -> str:
        return cache_key(KIND, key, self.execution, self.target, self.t.cache_extra())

    def verdicts(self, items: list[tuple[str, set[str], str]], extra_env_of=None) -> dict[str, Verdict]:
        """items: (key, enabled names, label). Known and cached keys answer at once; the rest run."""
        asks = [self.t.ask(key, enabled, label, self.execution, self.target, self.ckey(key),
                           env=extra_env_of(key) if extra_env_of else None) for key, enabled, label in items]
        self.oracle.answer(asks, ordered=True, before_run=lambda todo: [self.prog.running(a.label) for a in todo])
        return {key: self.known[key].verdict for key, _, _ in items}


def _execution(spec: ToggleSpec) -> Execution:
    return Execution(**spec.execution_args(), timeout=spec.step_timeout)


def _endpoints(recs, session, trials: Trials, prog: Progress) -> dict | None:
    """The endpoint phase (``oracle.verify_ends``), learning the direction: both ends run (all on,
    all off), the one that fails is the failing end (``--mode`` says which may), any of its runs
    failing (a flaky failing end calibrates the flaky-safe search). None when done (or done before)."""
    spec = trials.spec
    if spec.target is not None:
        return None
    names = trials.names
    on, off = key_of(names), key_of([])
    enabled = {on: set(names), off: set()}
    wanted = spec.mode
    execution = _execution(spec)

    def save(target: Target, timeout, failing: str) -> None:
        spec.step_timeout, spec.mode, spec.target = timeout, "enable" if failing == on else "disable", asdict(target)
        _update_spec(recs, session["id"], spec)

    ends = verify_ends(trials.oracle, EndsPlan(
        [on, off], lambda k, ex, t, ck: trials.ask(k, enabled[k], describe_set(enabled[k], names), ex, t, ck),
        execution, lambda k, ex, t: cache_key(KIND, k, ex, t, trials.cache_extra()), save, failing=None,
        may_fail={"auto": (on, off), "enable": (on,), "disable": (off,)}[wanted], strict=False, match=spec.match,
        any_failure=bool(spec.any_failure), user_timeout=spec.timeout))
    r = ends.refused
    if r is None:
        return None
    if r.why == "target":
        msg = f"refused: the failing end does not match the target ({r.step.reason})"
        mode = "enable" if r.key == on else "disable"
    else:
        on_step, off_step = ends.steps[on], ends.steps[off]
        fails = (Verdict.BAD, Verdict.FLAKY)
        v_on, v_off = on_step.verdict, off_step.verdict
        hint, mode = "", wanted
        if v_on is Verdict.GOOD and v_off in fails:
            hint = " (the ends are the other way round: use --mode disable or auto)"
        elif v_on in fails and v_off is Verdict.GOOD:
            hint = " (use --mode enable or auto)"
        elif v_on in fails and v_off in fails:
            hint = ": it fails with every toggle off too, so the toggles are not what breaks it"
        elif v_on is Verdict.GOOD and v_off is Verdict.GOOD:
            hint = _passes_both_ways(recs, session, spec, execution.repeat)
        msg = f"refused: all toggles on: {_what(on_step)}; all off: {_what(off_step)}{hint}"
    return {"status": "refused", "exit_code": 2, "message": msg, "report": msg, "session": session["id"],
            "sets": [], "mode": mode}


def _what(step: Step) -> str:
    return step.verdict.value.replace("bad", "fails").replace("good", "passes") + \
        (f" ({step.outcome}" + (f" [{step.signature}]" if step.signature else "") + ")" if step.outcome else "") + \
        (f" — {step.reason}" if step.verdict in (Verdict.SKIP, Verdict.FLAKY) else "")


def _target(spec) -> Target:
    return Target(**spec.target)


def _search(spec: ToggleSpec, n: int) -> SafeToggleSearch:
    return SafeToggleSearch(n, repeat=int(spec.repeat or 1), bad_if_any=bool(spec.bad_if_any),
                            max_sets=spec.max_sets, max_set_size=spec.max_set_size, max_runs=spec.max_runs,
                            exhaustive=spec.exhaustive, jobs=max(1, int(spec.jobs)) if not spec.in_place else 1,
                            strategy=spec.strategy)


#: a verdict marked by hand counts like this many runs: more than any check asks for
MANUAL_RUNS = 10**6


def counts_of(step: Step) -> tuple[int, int, int]:
    """(bad, good, skip) runs behind a recorded step (older rows: from the verdict)."""
    if step.source == "manual":
        return {Verdict.BAD: (1, 0, 0), Verdict.GOOD: (0, MANUAL_RUNS, 0)}.get(step.verdict, (0, 0, MANUAL_RUNS))
    if step.counts is not None:
        b, g, sk = (list(step.counts) + [0, 0, 0])[:3]
        return int(b), int(g), int(sk)
    return {Verdict.BAD: (1, 0, 0), Verdict.GOOD: (0, 1, 0), Verdict.FLAKY: (1, 1, 0)}.get(step.verdict, (0, 0, 1))


def _query_of(key: str, index: dict, n: int, mode: str) -> frozenset | None:
    try:
        got = json.loads(key)
    except ValueError:
        return None
    if not isinstance(got, list) or any(x not in index for x in got):
        return None
    en = frozenset(index[x] for x in got)
    return en if mode == "enable" else complement(n, en)


def _replay(search: SafeToggleSearch, steps, names: list[str], mode: str) -> None:
    """Feed a session's recorded runs to the search (its state is a function of this evidence)."""
    index = {n: i for i, n in enumerate(names)}
    for st in steps:
        q = _query_of(st.key, index, len(names), mode)
        if q is not None:
            search.record(q, *counts_of(st), counted=st.source != "manual")


def _merge(old: Step | None, new: Step) -> Step:
    """The evidence of a key: its earlier runs and the new ones."""
    if old is None:
        return new
    ob, og, osk = counts_of(old) if old.source != "manual" else (0, 0, 0)
    nb, ng, nsk = counts_of(new)
    return Step(new.key, new.verdict, new.reason, new.outcome or old.outcome, new.signature or old.signature,
                round((old.duration_s or 0) + (new.duration_s or 0), 3), list(old.runs) + list(new.runs), new.source,
                [ob + nb, og + ng, osk + nsk])


def _evidence_words(b: int, g: int, sk: int) -> str:
    total = b + g + sk
    if b and g:
        return f"failed {b} of {total} runs"
    if b:
        return "failed" + (f" ({b}×)" if b > 1 else "")
    if g and not sk:
        return "passed" + (f" ({g}×)" if g > 1 else "")
    return f"{sk} of {total} runs untestable"


def _reverse_check(search, r, n: int, enabled_of, key_of) -> tuple[dict | None, list[dict]]:
    """The reverse verification -- the failing end with every found set reverted must pass (the
    search asked it as its completeness check, with the confirmation's runs; where a set had
    several members it asked the larger pools that hold it instead, and one of those passing
    implies it on the monotone target the search assumes) -- and the trials left uncertain."""
    reverse = None
    if r.sets:
        q = frozenset(range(n)) - frozenset(i for s in r.sets for i in s)
        v = search.verdict(q)
        reverse = {"key": key_of(enabled_of(q)), "verdict": v.value if v else "not run", "passed": v is Verdict.GOOD}
        if v is None:
            above = next((q2 for q2 in search.evidence if q < q2 and search.verdict(q2) is Verdict.GOOD), None)
            if above is not None:
                reverse |= {"verdict": Verdict.GOOD.value, "passed": True, "implied_by": key_of(enabled_of(above))}
    return reverse, [{"set": sorted(enabled_of(frozenset(q))), "verdict": v.value} for q, v in r.uncertain]


def _summary(r, words: str, uncertain: list, reverse: dict | None, off, repeat: int) -> tuple[str, bool, str]:
    """(status, whether it is a clean answer, the message) of a finished toggle search; ``off``:
    the all-off end's step."""
    complete = r.status == "complete"
    ok = complete and not uncertain and (reverse is None or reverse["passed"])
    status = r.status
    if r.status == "bad_endpoints":  # the ends no longer check out: a flaky passing end
        status, ok = "refused", False
        msg = ("refused: with every toggle off it failed too " + _evidence_words(*counts_of(off))
               + ", so the toggles are not (all) what breaks it")
    else:
        msg = words
        if r.status == "unsure":
            msg = f"Unsure: {r.message}; the sets so far: " + words
        elif not complete:
            msg += f" Incomplete: {r.status}" + (f" ({r.message})" if r.message else "") + "."
    msg += _runs_words(r, status, repeat)
    if r.sets and status == "complete":
        msg += f" The chance that a flaky member hid in the passes: {r.miss_chance:.1%}."
        if r.miss_chance > MISS_AT_MOST and (r.flaky or repeat > 1):  # (else: taken as deterministic, said)
            ok = False
            msg += " That is too high to call it: inconclusive; more runs settle it (--flaky, or --repeat N)."
    if uncertain:
        msg += f" {len(uncertain)} trial(s) were skipped or flaky, so the result may be incomplete."
    if reverse is not None and not reverse["passed"] and status == "complete":
        msg += " Reverse check failed: reverting the sets from the failing end does not pass."
    return status, ok, msg


#: once runs disagreed, or with --repeat, a toggle answer is given (exit 0) only when a flaky member
#: hiding in its passes is this improbable
MISS_AT_MOST = 0.05


def _passes_both_ways(recs, session: dict, spec, repeat: int) -> str:
    """Why both ends passing refuses, and what to run: the investigation's recorded runs of this
    very command, when they disagree, make the failure look intermittent (k of n): --flaky."""
    line = S.with_flaky(spec.argv_text or shlex.join(["dbglog", "bisect", "toggles", "--", *spec.cmd]))
    rate = S.recorded_rate(recs, session.get("investigation"), spec.cmd)
    if rate:
        return (f": it passed both ways this time, but the investigation's recorded runs of this very command "
                f"failed {rate[0]} of {rate[1]}: the failure looks intermittent; bisect it probabilistically: {line}")
    return ": it passes both ways, so the failure does not reproduce here" + (
        f" (each end was run once: if the failure is intermittent: {line})" if repeat == 1 else "")


def _runs_words(r, status: str, repeat: int) -> str:
    """How the verdicts were reached: the rule for an intermittent failure, or one run per check
    for a repro that never disagreed (said, with what to run if it is intermittent after all)."""
    fb, fm = r.failing_end
    if r.flaky:
        return (f" The failure is intermittent: the failing end failed {fb} of {fm} runs, so every verdict was "
                f"'bad if any of {r.n_search} runs fails', and each set was confirmed by removing each member "
                f"({r.n_confirm} passing runs each).")
    if status == "refused":
        return ""
    return (f" Every run agreed, so the repro was treated as deterministic: each end was run "
            f"{'once' if repeat == 1 else f'{repeat}×'}, a confirmation check that failed once, and one that "
            f"passed {'once' if r.n_confirm == 1 else f'{r.n_confirm}×'} (until a culprit passing that often was "
            "improbable); if the failure is intermittent, run again with --flaky (or --repeat N --bad-if-any).")


def _drive(recs, session: dict, trials: Trials, prog: Progress) -> dict:
    refused = _endpoints(recs, session, trials, prog)
    if refused:
        return refused
    db = SessionDB(recs.store)
    spec, sid = trials.spec, session["id"]  # as _endpoints calibrated it
    mode, names, n = spec.mode, trials.names, len(trials.names)
    target, execution = _target(spec), _execution(spec)
    oracle = trials.oracle
    oracle.reload()  # the ends were stored by _endpoints
    known = oracle.known
    search = _search(spec, n)
    _replay(search, known.values(), names, mode)
    extra = trials.cache_extra()
    executed = 0

    def enabled_of(q) -> set[str]:
        idx = q if mode == "enable" else complement(n, q)
        return {names[i] for i in idx}

    def verdict_step(q, st: Step) -> Step:
        v = search.verdict(q)
        b, g, sk = counts_of(st)
        if v is None:
            v = Verdict.FLAKY if b and g else (Verdict.BAD if b else (Verdict.GOOD if g else Verdict.SKIP))
        st.verdict, st.reason = v, (st.reason if v is Verdict.SKIP and not (b or g) else _evidence_words(b, g, sk))
        return st

    while not search.done:
        todo = []
        for req in search.next_runs():
            en = enabled_of(req.query)
            key = key_of(en)
            label = describe_set(en, names)
            ck = cache_key(KIND, key, execution, target, extra)
            if key not in known:
                c = oracle.lookup(key, ck, confirmed_only=True)
                if c is not None:  # runs of an earlier session whose result was confirmed
                    search.record(req.query, *counts_of(c))
                    oracle.persist(verdict_step(req.query, c), [], ck, label)
                    continue
            prog.running(label + (f" ×{req.runs}" if req.runs > 1 else ""))
            todo.append((req, trials.ask(key, en, label, replace(execution, repeat=req.runs), target, ck,
                                         stop=req.stop)))
        if not todo:
            continue
        req_of = {id(a): req for req, a in todo}

        def ran(a, step: Step, _records, req_of=req_of) -> Step:
            nonlocal executed
            req = req_of[id(a)]
            executed += sum(step.counts or [0])
            search.record(req.query, *counts_of(step))
            return verdict_step(req.query, _merge(known.get(a.key), step))  # stored by the oracle at once

        oracle.run([a for _, a in todo], ran, ordered=True)
    r = search.result
    sets = [[names[i] for i in s] for s in r.sets]
    reverse, uncertain = _reverse_check(search, r, n, enabled_of, key_of)
    off = known.get(key_of(enabled_of(frozenset())))
    status, ok, msg = _summary(r, result_words(sets, mode), uncertain, reverse, off, execution.repeat)
    fb, fm = r.failing_end
    steps = db.trials(sid)
    return {"status": status, "exit_code": 0 if ok else (2 if status == "refused" else 1), "message": msg,
            "report": msg, "session": sid, "mode": mode, "sets": sets, "queries": r.queries, "trials": len(steps),
            "executed": executed, "runs": r.runs, "uncertain": uncertain, "reverse_check": reverse,
            "target": target.describe(), "toggles": len(names), "flaky": r.flaky,
            "rule": "bad-if-any" if r.flaky else "once",
            "verdict_runs": {"search": r.n_search, "confirm": r.n_confirm},
            "miss_chance": round(r.miss_chance, 4),
            "failing_end": {"failed": fb, "runs": fm}}


def _drive_count(recs, session: dict, trials: Trials, prog: Progress) -> dict:
    spec = trials.spec
    name = spec.count
    names = trials.names
    db = SessionDB(recs.store)
    count_file = trials.workdir / "counts.json"
    if spec.target is None:
        trials.workdir.mkdir(parents=True, exist_ok=True)
        execution = _execution(spec)
        if execution.timeout is None:
            execution.timeout = ENDPOINT_TIMEOUT
        try:
            count_file.unlink()
        except FileNotFoundError:
            pass
        prog.running(f"counting the calls of {name}")
        ((step, records),) = trials.run([trials.ask("count-probe", set(names), f"all {name} calls on", execution,
                                                    Target(any_failure=True), env={COUNT_FILE_VAR: str(count_file)})])
        prog.stepped(step, f"all {name} calls on")
        try:
            counts = json.loads(count_file.read_text())
        except (OSError, ValueError):
            counts = {}
        total = int(counts.get(name, 0))
        runs = records[1:] if execution.build else records
        if step.verdict is not Verdict.BAD or total < 1:
            why = (f"dbglog.toggle({name!r}, count=True) was never called" if total < 1 else
                   f"with every call on it does not fail ({_what(step)})")
            msg = f"refused: {why}"
            return {"status": "refused", "exit_code": 2, "message": msg, "report": msg, "session": session["id"],
                    "mode": "count", "sets": []}
        target, spec.step_timeout = calibrate(runs, match=spec.match,
                                                         any_failure=bool(spec.any_failure),
                                                         user_timeout=spec.timeout)
        spec.target = asdict(target)
        spec.count_max = total
        _update_spec(recs, session["id"], spec)
        v, why = verdict_of([target.judge(r) for r in runs])
        k = count_key(name, total)
        db.record(session["id"], Step(k, v, why, step.outcome, step.signature, step.duration_s, step.runs),
                  "count-probe:" + session["id"], records)
    total = spec.count_max
    loop = _Loop(recs, session, trials, prog, _target(spec), _execution(spec))
    search = CountSearch(total, jobs=1 if spec.in_place else max(1, int(spec.jobs)),
                         max_runs=spec.max_runs)
    for st in loop.known.values():
        try:
            d = json.loads(st.key)
        except ValueError:
            continue
        if isinstance(d, dict) and d.get("count") == name:
            search.record(int(d["limit"]), st.verdict)
    while not search.done:
        qs = search.next_queries()
        items = [(count_key(name, q), set(names), f"first {q} call(s) of {name}") for q in qs]
        vs = loop.verdicts(items, extra_env_of=lambda key: {limit_var(name): str(json.loads(key)["limit"])})
        for q, (k, _, _) in zip(qs, items):
            search.record(q, vs[k])
    r = search.result
    if r.status == "found":
        msg = (f"Call {r.nth} of `{name}` is the one that matters: with calls 1..{r.nth - 1} on it passes, "
               f"enabling call {r.nth} fails ({total} calls in all).")
    else:
        msg = f"No single call found: {r.status}" + (f" ({r.message})" if r.message else "") + "."
    return {"status": "complete" if r.status == "found" else r.status, "exit_code": 0 if r.status == "found" else 1,
            "message": msg, "report": msg, "session": session["id"], "mode": "count", "nth": r.nth,
            "calls": total, "low": r.low, "high": r.high, "queries": r.runs, "sets": [[name]] if r.nth else [],
            "target": _target(spec).describe()}


def cleanup(recs, session: dict) -> None:
    from dbglog.bisect.journal import restore_session

    restore_session(recs.store, session["id"])
    shutil.rmtree(workdir_root(recs, ToggleSpec.from_stored(session["spec"]).scratch) / session["id"],
                  ignore_errors=True)


def mark_key(recs, session: dict, ref: str) -> str:
    spec = ToggleSpec.from_stored(session["spec"])
    if spec.count:
        try:
            return count_key(spec.count, int(ref))
        except ValueError:
            raise DbglogError(f"count mode: give a number of calls, not {ref!r}") from None
    names = [t["name"] for t in spec.toggles]
    if ref.strip().lower() in ("", "none", "off"):
        return key_of([])
    if ref.strip().lower() in ("all", "on"):
        return key_of(names)
    got = [x.strip() for x in ref.split(",") if x.strip()]
    unknown = [x for x in got if x not in names]
    if unknown:
        raise DbglogError(f"unknown toggle {unknown[0]!r}; toggles: {', '.join(names[:20])}")
    return key_of(got)


def describe(recs, session: dict) -> dict:
    spec = ToggleSpec.from_stored(session["spec"])
    names = [t["name"] for t in spec.toggles]
    steps = SessionDB(recs.store).trials(session["id"])
    info = {"toggles": len(names), "mode": spec.mode, "steps": len(steps),
            "target": Target(**spec.target).describe() if spec.target else None,
            "in_place": bool(spec.in_place)}
    if spec.count:
        info["count"] = spec.count
        info["calls"] = spec.count_max
        return info
    if spec.target and spec.mode in ("enable", "disable"):
        search = _search(spec, len(names))
        _replay(search, steps, names, spec.mode)
        info["sets_found"] = [[names[i] for i in sorted(s)] for s in search.inner.found]
        info["rule"] = "bad-if-any" if search.rule == "any" else "once"
        info["next"] = [describe_set({names[i] for i in (r.query if spec.mode == "enable" else
                                                           complement(len(names), r.query))}, names)
                        for r in search.next_runs()][:4]
    return info


# --- recording ----------------------------------------------------------------------------


def _record(recs, session: dict, spec: ToggleSpec, result: dict) -> None:
    inv_id = session["investigation"]
    if not inv_id or not recs.store.exists(inv_id):
        return
    toggles = [Toggle.from_dict(d) for d in spec.toggles]
    names = [t.name for t in toggles]
    steps = SessionDB(recs.store).trials(session["id"])
    lines = [f"Session `{session['id']}` ({result['status']}). Command: `{spec.argv_text}`", ""]
    if spec.count:
        lines.append(f"Counting mode over the calls of `dbglog.toggle({spec.count!r}, count=True)`"
                     + (f" ({spec.count_max} calls)." if spec.count_max else "."))
    else:
        lines += [f"Mode: {spec.mode}; target: {result.get('target') or '-'}.", "",
                  "| Toggle | Kind | On | Off |", "|---|---|---|---|"]
        for t in toggles:
            on, off = t.states()
            lines.append(f"| {md_cell(t.name)} | {t.kind} | {md_cell(on)} | {md_cell(off)} |")
    lines += ["", "| # | Enabled | Verdict | Outcome | Signature | Duration | Runs |", "|---|---|---|---|---|---|---|"]
    for i, st in enumerate(steps, 1):
        try:
            k = json.loads(st.key)
            what = describe_set(set(k), names) if isinstance(k, list) else f"first {k['limit']} call(s)"
        except (ValueError, KeyError, TypeError):
            what = st.key
        lines.append(f"| {i} | {md_cell(what)} | {st.verdict.value} | {md_cell(st.outcome or '')} | "
                     f"{md_cell(st.signature or '')} | {st.duration_s:.2f}s | "
                     f"{md_cell(', '.join(st.runs[-2:]) + (' (' + st.source + ')' if st.source != 'run' else ''))} |")
    lines += ["", f"**Result:** {result['message']}"]
    if result.get("reverse_check"):
        rc = result["reverse_check"]
        implied = f" (implied: {rc['implied_by']} passed, and holds it)" if rc.get("implied_by") else ""
        lines.append(f"**Reverse check** (the failing end with the sets reverted): {rc['verdict']}{implied}.")
    from dbglog.bisect.chart import write_beside_mirror  # (the chart beside logs/: dbglog report's engine)

    record_section(recs, inv_id, f"Bisection: toggles {session['id']}",
                   "\n".join(lines) + write_beside_mirror(recs, inv_id, session["id"], result))
    if result["status"] == "refused":
        # a diagnostic, not a failed attempt: `tried` reads failed attempts as evidence that an idea
        # does not work, and a refusal tested no idea (the repro never failed, or failed everywhere)
        return
    # one attempt per session (edited when the session is resumed)
    title = "Toggle bisection: " + (", ".join(" + ".join(s) for s in result.get("sets", [])) or result["status"])
    title = title[:120]
    fields = dict(title=title,
                  hypothesis=f"One of {len(names)} suspect toggles, or a combination of them, causes "
                             f"{result.get('target') or 'the failure'}.",
                  did=spec.argv_text, result=f"{result['status']} after {len(steps)} trials: {result['message']}",
                  conclusion=result["message"],
                  outcome="worked" if result["exit_code"] == 0 else "inconclusive")
    num = spec.attempt
    if num:
        try:
            recs.edit_attempt(inv_id, num, **fields)
        except DbglogError:
            num = None
    if not num:
        a = recs.add_attempt(inv_id, **fields)
        spec.attempt = a.number
        _update_spec(recs, session["id"], spec)
    if spec.from_diffs is not None and result["exit_code"] == 0:
        # rows are marked from confirmed evidence only: an unsure or incomplete result marks nothing
        culprits = {n for s in result.get("sets", []) for n in s}
        for t in toggles:
            if t.factor:
                recs.diff_set(inv_id, t.factor, status="culprit" if t.name in culprits else "ruled-out")


# --- probabilistic (--flaky) ------------------------------------------------------------
#
# ``bisect toggles --flaky``: a posterior over "toggle X alone causes it" and "X and Y fail only
# together" (every single toggle and, up to PAIRS_UP_TO toggles, every pair), the same rate model
# and information gain as history (bayes.SetPosterior). The failing end (all on; all off with
# --mode disable) is run until it shows the failure, which defines the target, then twice more;
# the passing end once. Verification: once a set holds half the mass, only the set alone, the
# set minus each member and everything but the set are run, until the set reaches --confidence.

#: pairs are hypotheses up to this many toggles (n(n-1)/2 of them); above, single culprits only
PAIRS_UP_TO = 64


class _FlakyToggles:
    """``bisect toggles --flaky`` in three steps, like history's FlakyDriver: :meth:`calibrate` (the
    failing end until it fails: the target), :meth:`search` (runs chosen by information gain until the
    posterior is confident or the budget spent) and :meth:`finish` (the result). Every run goes
    through :meth:`run`, which merges it into the key's tally, updates the posterior and stores it."""

    def __init__(self, recs, session: dict, trials: Trials, prog: Progress):
        from dbglog.bisect.bayes import SetPosterior
        from dbglog.bisect.flaky import default_budget

        self.recs, self.trials, self.prog = recs, trials, prog
        self.db = SessionDB(recs.store)
        self.sid, self.spec = session["id"], trials.spec
        self.names, self.n = trials.names, len(trials.names)
        self.mode = self.spec.mode if self.spec.mode in ("enable", "disable") else "enable"
        if self.spec.mode != self.mode:
            self.spec.mode = self.mode
            _update_spec(recs, self.sid, self.spec)
        self.execution = _execution(self.spec)
        self.conf = float(self.spec.confidence or 0.95)
        self.pairs = self.n <= PAIRS_UP_TO
        self.post = SetPosterior(self.n, pairs=self.pairs)
        self.budget = self.spec.budget or default_budget(len(self.post.hyps))
        self.known = {st.key: st for st in self.db.trials(self.sid)}
        self.universe = frozenset(range(self.n))
        # queries are in "culprit present" terms: the enabled set, or the disabled one
        self.fail_q, self.pass_q = self.universe, frozenset()
        self.runs = 0
        self._replay()

    # -- evidence ------------------------------------------------------------------

    def enabled_of(self, q: frozenset) -> set[str]:
        idx = q if self.mode == "enable" else self.universe - q
        return {self.names[i] for i in idx}

    def label(self, q: frozenset) -> str:
        return describe_set(self.enabled_of(q), self.names)

    def _observe(self, q: frozenset, step: Step) -> None:
        """Count ``step``'s runs, and feed them to the posterior once the target is known."""
        b, g, s = counts_of(step)
        self.runs += b + g + s
        if self.spec.target and (b or g):
            self.post.observe(q, b, g)

    def _replay(self) -> None:
        """The session's recorded runs (a resumed session) into the run count and the posterior."""
        index = self.trials.index
        for st in self.known.values():
            q = _query_of(st.key, index, self.n, self.mode)
            if q is not None:
                self._observe(q, st)

    def _store(self, merged: Step, records: list, q: frozenset) -> None:
        key = merged.key
        # never shared with other sessions: a step's verdict here is a tally, not a verdict
        self.db.record(self.sid, merged, f"flaky:{self.sid}:{key}", records)
        self.known[key] = merged
        self.prog.stepped(merged, self.label(q))

    def run(self, q: frozenset, k: int, target: Target) -> Step:
        """Run ``q`` ``k`` times; store its tally with the posterior after it."""
        key = key_of(self.enabled_of(q))
        ((step, records),) = self.trials.run([self.trials.ask(key, self.enabled_of(q), self.label(q),
                                                              replace(self.execution, repeat=k), target)])
        merged = _merge(self.known.get(key), step)
        self._observe(q, step)
        mb, mg, ms = counts_of(merged)
        merged.verdict = Verdict.FLAKY if mb and mg else Verdict.BAD if mb else Verdict.GOOD if mg else Verdict.SKIP
        merged.reason = _evidence_words(mb, mg, ms)
        if self.spec.target:
            merged.posterior = [[sorted(self.names[i] for i in self.post.hyps[h]), round(p, 6)]
                                for h, p in self.post.top(5)]
            merged.reason += f"; then P({' + '.join(merged.posterior[0][0])}) = {merged.posterior[0][1]:.3f}"
        self._store(merged, records, q)
        return merged

    # -- phases --------------------------------------------------------------------

    def calibrate(self) -> dict | None:
        """Run the failing end until it shows the failure (its first failing run defines the target);
        the refusal when it never does."""
        from dbglog.bisect.flaky import MAX_END_RUNS

        spec, q = self.spec, self.fail_q
        probe = Target(match=spec.match) if spec.match else Target(match=spec.match, any_failure=True)
        ex0 = replace(self.execution, timeout=self.execution.timeout or ENDPOINT_TIMEOUT, repeat=1)
        key = key_of(self.enabled_of(q))
        while True:
            st = self.known.get(key)
            b, g, s = counts_of(st) if st else (0, 0, 0)
            if b:
                return None
            if b + g + s >= MAX_END_RUNS:
                msg = (f"refused: {self.label(q)} never showed the failure in {b + g + s} runs; nothing to "
                       "bisect (check the command, or --mode disable if all off is the failing end)")
                return {"status": "refused", "exit_code": 2, "message": msg, "report": msg, "session": self.sid,
                        "sets": [], "mode": self.mode, "flaky": True}
            self.prog.running(self.label(q) + " (failing end, until it fails)")
            ((step, records),) = self.trials.run([self.trials.ask(key, self.enabled_of(q), self.label(q), ex0, probe,
                                                                  stop="bad")])
            self.runs += sum(step.counts or [0])
            merged = _merge(st, step)
            self._store(merged, records, q)
            if step.counts and step.counts[0]:
                self._set_target([r for r in records if probe.judge(r)[0] == "bad"], merged)

    def _set_target(self, failing: list, merged: Step) -> None:
        """The first failing runs define the target and the step timeout (stored in the spec)."""
        spec = self.spec
        target, spec.step_timeout = calibrate(failing, match=spec.match, any_failure=bool(spec.any_failure),
                                              user_timeout=spec.timeout)
        spec.target = {k: getattr(target, k) for k in ("outcome", "signature", "match", "any_failure")}
        _update_spec(self.recs, self.sid, spec)
        self.execution = _execution(spec)
        mb, mg, _ = counts_of(merged)
        self.post.observe(self.fail_q, mb, mg)

    def calibrate_ends(self, target: Target) -> None:
        """The failing end to BAD_END_RUNS runs that count, the passing end to one."""
        from dbglog.bisect.flaky import BAD_END_RUNS

        for q, want in ((self.fail_q, BAD_END_RUNS), (self.pass_q, 1)):
            st = self.known.get(key_of(self.enabled_of(q)))
            b, g, _ = counts_of(st) if st else (0, 0, 0)
            if b + g < want:
                self.prog.running(self.label(q) + " (calibration)")
                self.run(q, want - b - g, target)

    def search(self, target: Target):
        """Ask the posterior for the next runs (``jobs`` at a time) until its verdict is not "running"."""
        from dbglog.bisect.bayes import verdict

        jobs = 1 if self.spec.in_place else max(1, int(self.spec.jobs))
        post, names = self.post, self.names
        while True:
            v = verdict(post, confidence=self.conf, runs=self.runs, budget=self.budget)
            if v.status != "running":
                return v
            want: dict[frozenset, int] = {}
            for q in post.next(jobs):
                want[q] = want.get(q, 0) + 1
            for q, k in want.items():
                h, ph = post.top(1)[0]
                self.prog.running(self.label(q) + (f" ×{k}" if k > 1 else "") + f" · most probable "
                                  f"{' + '.join(sorted(names[i] for i in post.hyps[h]))} ({ph:.2f})")
                self.run(q, k, target)

    def finish(self, v, target: Target) -> dict:
        a, b = self.post.rates()
        names, conf, budget = self.names, self.conf, self.budget
        top = [{"set": sorted(names[i] for i in self.post.hyps[h]), "probability": round(p, 4)} for h, p in v.top]
        best = top[0]
        words = result_words([best["set"]], self.mode).rstrip(".")
        rates = f"P(fail | culprit on) ≈ {a:.2f}, P(fail | off) ≈ {b:.2f}"
        scope = "single toggles and pairs" if self.pairs else \
            "single toggles (more than 64 toggles: pairs not considered)"
        if v.status == "confident":
            msg = (f"{words} — probability {best['probability']:.3f}, not certainty ({rates}; hypotheses: {scope}).")
            status, code = "complete", 0
        else:
            msg = (f"Not established: the budget of {budget} runs was spent before any set reached probability "
                   f"{conf:g}. Most probable: " + "; ".join(f"{{{', '.join(t['set'])}}} {t['probability']:.3f}"
                                                           for t in top[:4]) + f" ({rates}; hypotheses: {scope}).")
            status, code = "budget_exhausted", 1
        steps = self.db.trials(self.sid)
        return {"status": status, "exit_code": code, "message": msg, "report": msg, "session": self.sid,
                "mode": self.mode, "sets": [best["set"]] if code == 0 else [], "probability": best["probability"],
                "posterior": top, "confidence": conf, "budget": budget,
                "rates": {"fail_if_bad": round(a, 4), "fail_if_good": round(b, 4)},
                "trials": len(steps), "runs": self.runs, "target": target.describe(), "toggles": self.n,
                "flaky": True, "rule": "posterior", "hypotheses": len(self.post.hyps)}


def _drive_flaky(recs, session: dict, trials: Trials, prog: Progress) -> dict:
    f = _FlakyToggles(recs, session, trials, prog)
    if not f.spec.target:
        refused = f.calibrate()
        if refused is not None:
            return refused
    target = _target(f.spec)
    f.calibrate_ends(target)
    return f.finish(f.search(target), target)


# --- demo ---------------------------------------------------------------------------------

DEMO_PROGRAM = '''\
"""A training step with six suspect calls; two of them race, but only together."""
import sys

state = {"cache": 0, "writes": 0, "flag": False}


def prefetch(): state["cache"] += 1
def swa_write(): state["writes"] += 1
def log_metrics(): pass
def update_states(): state["flag"] = True
def fused_norm(): pass
def all_reduce(): pass


prefetch()          # dbglog: suspect prefetch
swa_write()         # dbglog: suspect swa_write
log_metrics()       # dbglog: suspect log_metrics
update_states()     # dbglog: suspect update_states
fused_norm()        # dbglog: suspect fused_norm
all_reduce()        # dbglog: suspect all_reduce
if state["writes"] and state["flag"]:
    print("RuntimeError: CUDA error: an illegal memory access was encountered", file=sys.stderr)
    sys.exit(1)
print("step ok")
'''


def demo(recs, inv_id: str, quiet: bool) -> dict:
    """Bisect six marked suspects of a small program in the demo workspace (two fail only together)."""
    import sys

    import click

    prog = recs.ws.root / "train_step.py"
    prog.write_text(DEMO_PROGRAM)
    if not quiet:
        click.secho("\n== dbglog bisect toggles --suspects train_step.py -- python train_step.py", bold=True)
    result = start(recs, ToggleSpec(cmd=[sys.executable, "train_step.py"], suspect_paths=("train_step.py",),
                                    timeout=30.0, grace=1.0,
                                    argv_text="dbglog bisect toggles --suspects train_step.py -- python train_step.py"),
                   cwd=recs.ws.root, inv_ref=inv_id, progress=False)
    if not quiet:
        click.echo(f"-> {result['message']} ({result['trials']} trials; train_step.py untouched)")
    return result
