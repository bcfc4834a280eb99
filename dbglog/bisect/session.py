"""What history and toggle bisection share: verdicts, trials, cache, persisted state, recording.

The pure searches in ``algorithms.py`` ask for verdicts on *keys* (a commit sha, a set of
enabled toggles). This module turns a key into a verdict by running the repro under the
supervised runner, and makes every verdict durable evidence:

* **Target** decides what "bad" means: the *same* outcome and failure signature as the known
  bad end (``--match`` to name it, ``--any-failure`` to opt out). Anything else that fails --
  another crash, a build failure, exit 125, a run that could not start, a process that
  survived SIGKILL -- is ``skip``, with the reason kept per step.
* **Executor** runs one trial: optional ``--build`` step, then ``repeat`` runs through an
  optional ``--launcher`` prefix. Repeats that disagree make the step ``flaky``.
* **SessionDB** persists the session spec and every trial in SQLite (one small transaction
  per trial). A session resumes by rebuilding its search object from the spec and replaying
  the recorded verdicts (the algorithms are deterministic), so no finished step re-runs.
  The same table is the result cache: a trial with the same cache key (kind, key, command,
  build, target, environment) in any session answers instantly.
* Trials carry ``DBGLOG_BISECT_SESSION`` in their environment, so the leftovers of a
  bisection killed with -9 are found and killed by the next ``resume``.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import sys
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Sequence

from dbglog.bisect.algorithms import Verdict
from dbglog.run.options import RunOptions
from dbglog.util.errors import DbglogError
from dbglog.util.fsutil import sha256_hex

SESSION_VAR = "DBGLOG_BISECT_SESSION"

def now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- verdict rules -------------------------------------------------------------------


@dataclass
class Target:
    """What counts as *the* failure. Built from the bad end's run unless the user names it."""

    outcome: str | None = None
    signature: str | None = None
    match: str | None = None  # --match: a signature name / glob, or a regex over the output
    any_failure: bool = False

    def describe(self) -> str:
        if self.any_failure:
            return "any failure"
        if self.match:
            return f"matching {self.match!r}"
        return self.outcome + (f" [{self.signature}]" if self.signature else " (no signature)")

    def judge(self, run: dict) -> tuple[str, str]:
        """('good'|'bad'|'skip', reason) for one run's record (runner.RunResult.to_dict())."""
        outcome, sig = run["outcome"], run.get("signature")
        if run.get("infra_tainted"):
            return "skip", "a process survived SIGKILL: machine state is suspect"
        if outcome == "error":
            return "skip", f"could not start: {run.get('error') or 'error'}"
        if outcome == "pass":
            return "good", "passed"
        if outcome == "fail" and run.get("exit_code") == 125:
            return "skip", "the repro exited 125 (untestable)"
        what = outcome + (f" [{sig}]" if sig else "")
        if self.any_failure:
            return "bad", what
        if self.match:
            if self._matches(run):
                return "bad", f"{what} matches {self.match!r}"
            return "skip", f"different failure: {what} does not match {self.match!r}"
        if outcome == self.outcome and sig == self.signature:
            return "bad", what
        return "skip", f"different failure: {what}, the bad end was {self.describe()}"

    def _matches(self, run: dict) -> bool:
        sig = run.get("signature") or ""
        if sig and (fnmatch.fnmatchcase(sig, self.match) or sig == self.match):
            return True
        if run["outcome"] == self.match:
            return True
        try:
            rx = re.compile(self.match)
        except re.error:
            return False
        path = (run.get("paths") or {}).get("output")
        if path and os.path.exists(path):
            with open(path, "rb") as f:
                return rx.search(f.read().decode("utf-8", "replace")) is not None
        return False


def target_for(bad_runs: list[dict], match: str | None, any_failure: bool) -> Target:
    r = bad_runs[0]
    return Target(outcome=r["outcome"], signature=r.get("signature"), match=match, any_failure=any_failure)


@dataclass
class Step:
    """One trial's evidence: the verdict for a key and the runs behind it."""

    key: str
    verdict: Verdict
    reason: str = ""
    outcome: str | None = None
    signature: str | None = None
    duration_s: float = 0.0
    runs: list[str] = field(default_factory=list)
    source: str = "run"
    #: [bad, good, skip]: how the repro runs behind the verdict were judged (None: not counted)
    counts: list[int] | None = None
    #: probabilistic bisection: the posterior's top candidates [[key, p], ...] once this step was in
    posterior: list | None = None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["verdict"] = self.verdict.value
        return d


def verdict_of(judged: list[tuple[str, str]]) -> tuple[Verdict, str]:
    """Combine repeats: all bad -> bad, all good -> good, good+bad -> flaky, else skip."""
    kinds = [k for k, _ in judged]
    reasons = [r for k, r in judged if k == "skip"]
    bad, good = kinds.count("bad"), kinds.count("good")
    if bad and good:
        return Verdict.FLAKY, f"repeats disagree: {bad} bad, {good} good of {len(kinds)}"
    if reasons and not (bad or good):
        return Verdict.SKIP, reasons[0]
    if reasons:  # some runs skipped, the rest agree: the step is still uncertain
        return Verdict.SKIP, f"{len(reasons)} of {len(kinds)} runs untestable: {reasons[0]}"
    if bad:
        return Verdict.BAD, judged[0][1]
    return Verdict.GOOD, "passed" + (f" ({good}×)" if good > 1 else "")


# --- running trials --------------------------------------------------------------------


@dataclass
class Execution:
    """How to run one trial of a bisection (everything but the key-specific part)."""

    cmd: list[str]
    timeout: float | None = None
    grace: float = 5.0
    repeat: int = 1
    build: str | None = None
    launcher: str | None = None
    captures: Sequence[str] = ()
    on_hang: Sequence[str] = ()
    quiet: bool = True
    # Server-shaped repros (dbglog/run/serve.py): the server command, its readiness check and wait.
    server: str | None = None
    ready: str | None = None
    ready_timeout: float = 120.0
    idle_timeout: float | None = None
    shared_cache: bool = False  # else a fresh TRITON_CACHE_DIR per step: a stale cache can make a good step bad
    escalate: bool = False  # raise the kernel-API log level across a step's failing repeats (dbglog/run/escalate.py)

    def __post_init__(self) -> None:
        # Fail before the first step, not in the middle of a bisection: unknown presets, and presets
        # the environment rules out (rocgdb beside the ROCm debug agent). (None given: nothing to check.)
        if self.captures or self.on_hang:
            from dbglog.run import captures

            presets, _ = captures.split(self.captures, self.on_hang)
            captures.check(presets, dict(os.environ))
        from dbglog.run import slurm

        slurm.check_launcher(self.launcher)

    def argv(self, cmd: list[str] | None = None) -> list[str]:
        prefix = shlex.split(self.launcher) if self.launcher else []
        return prefix + list(cmd if cmd is not None else self.cmd)

    def run_options(self, timeout: float | None, *, launched: bool = True) -> RunOptions:
        """The ``RunOptions`` of one run of a trial: the repro's (``launched``) or the build's (no
        server: the build is not a client). A step's record is the session's, not the tree's: no git
        state per run."""
        server = dict(server=self.server, ready=self.ready, ready_timeout=self.ready_timeout) \
            if self.server and launched else {}
        return RunOptions(timeout=timeout, grace=self.grace, captures=tuple(self.captures),
                          on_hang=tuple(self.on_hang), echo=not self.quiet, git_info=False,
                          idle_timeout=self.idle_timeout, **server)


class Catalog:
    """The failure signatures a session's runs are classified with (``signatures.all_signatures``),
    built on first iteration: the runner iterates it only for a run that printed something, so a
    bisection whose repro is silent never imports the catalog (~6 ms of a ~12-step bisection).
    A config.toml (the user's signatures) is read at once, so a malformed one is still refused
    before the first step. Safe to share between the threads of ``--jobs``."""

    def __init__(self, config_path=None):
        import threading

        self._path = config_path
        self._lock = threading.Lock()
        self._sigs: list | None = None
        if config_path is not None and Path(config_path).exists():
            self.load()

    def load(self) -> list:
        with self._lock:
            if self._sigs is None:
                from dbglog.run import signatures

                self._sigs = signatures.all_signatures(self._path)
            return self._sigs

    def __iter__(self):
        return iter(self._sigs if self._sigs is not None else self.load())

    def __len__(self) -> int:
        return len(self.load())


class Executor:
    def __init__(self, recs, session_id: str, execution: Execution, signatures=None, workdir: Path | None = None):
        self.recs = recs
        self.session_id = session_id
        self.ex = execution
        self.signatures = signatures
        # the session's work dir (worktrees / copies): per-step scratch lives there, so the clean-up
        # of an aborted or resumed session removes what a driver killed with -9 left behind
        self.workdir = Path(workdir) if workdir is not None else workdir_root(recs) / session_id

    def run_trial(self, key: str, target: Target, *, cwd: str, env: dict | None = None,
                  cmd: list[str] | None = None, stop: str | None = None) -> tuple[Step, list[dict]]:
        """Build (if asked), then run ``repeat`` times; return the step and the run records.

        ``stop``: ``"bad"`` ends the repeats at the first run that shows the failure, ``"mixed"``
        as soon as two runs disagree (bad and good). ``Step.counts`` says how the runs were judged;
        a failed build counts every run asked for as untestable."""

        env = dict(env or {})
        env[SESSION_VAR] = self.session_id
        cache_dir = None
        if not self.ex.shared_cache and "TRITON_CACHE_DIR" not in env:
            # A fresh cache per step, named but not made: Triton makes its cache dir (os.makedirs) when
            # a run first compiles a kernel, and most steps' runs never do.
            cache_dir = os.path.join(self.workdir, f"dbglog-triton-{os.urandom(6).hex()}")
            env["TRITON_CACHE_DIR"] = cache_dir
        try:
            return self._trial(key, target, cwd, env, cmd, stop)
        finally:
            if cache_dir and os.path.lexists(cache_dir):
                import shutil

                shutil.rmtree(cache_dir, ignore_errors=True)

    def _trial(self, key, target, cwd, env, cmd, stop) -> tuple[Step, list[dict]]:
        records: list[dict] = []
        if self.ex.build:
            b = self._run(["sh", "-c", self.ex.build], cwd, env, timeout=None)
            records.append(b)
            if b["outcome"] != "pass":
                what = b["outcome"] + (f" [{b['signature']}]" if b.get("signature") else "")
                return Step(key, Verdict.SKIP, f"build failed: {what}", b["outcome"], b.get("signature"),
                            b["duration_s"], [b["id"]], counts=[0, 0, max(1, self.ex.repeat)]), records
        judged = []
        runs = []
        ladder = None
        if self.ex.escalate:
            from dbglog.run import escalate

            ladder = escalate.Ladder()
        for _ in range(max(1, self.ex.repeat)):
            r = self._run(self.ex.argv(cmd), cwd, env, timeout=self.ex.timeout, launched=True,
                          escalation=ladder.spec() if ladder else None)
            if ladder:
                ladder.after(r["outcome"])
            records.append(r)
            runs.append(r)
            judged.append(target.judge(r))
            kinds = {k for k, _ in judged}
            if (stop == "bad" and "bad" in kinds) or (stop == "mixed" and {"bad", "good"} <= kinds):
                break
        verdict, reason = verdict_of(judged)
        last = runs[-1]
        kinds = [k for k, _ in judged]
        return Step(key, verdict, reason, last["outcome"], last.get("signature"),
                    round(sum(r["duration_s"] for r in runs), 3), [r["id"] for r in records],
                    counts=[kinds.count("bad"), kinds.count("good"), kinds.count("skip")]), records

    def _run(self, argv: list[str], cwd: str, env: dict, timeout: float | None, launched: bool = False,
             escalation: dict | None = None) -> dict:
        from dbglog.run import runner, slurm

        # An srun launcher: each run is its own allocation, cancelled on the cluster (dbglog/run/slurm.py).
        launch = slurm.Step(tag=self.session_id) if launched and slurm.is_srun(self.ex.launcher) else None
        run_id = runner.new_run_id()
        run_dir = self.recs.ws.runs_dir / run_id
        opts = self.ex.run_options(timeout, launched=launched)
        kw = dict(run_dir=run_dir, run_id=run_id, cwd=cwd, env_overrides=env, signatures=self.signatures,
                  escalation=escalation)
        if opts.server:  # the repro, not the build: server first, this is its client
            from dbglog.run import serve

            r = serve.run_server_client(argv, opts, **kw).to_dict()
        else:
            r = runner.run(argv, opts, launch=launch, **kw).to_dict()
        r["run_dir"] = str(run_dir)
        return r


def run_parallel(fn: Callable, items: list, jobs: int) -> list:
    """``[fn(x) for x in items]`` with up to ``jobs`` at once (trials are I/O-bound subprocesses)."""
    if jobs <= 1 or len(items) <= 1:
        return [fn(x) for x in items]
    from concurrent.futures import ThreadPoolExecutor  # (for jobs only: it imports logging and traceback)

    with ThreadPoolExecutor(max_workers=min(jobs, len(items))) as pool:
        return list(pool.map(fn, items))


# --- persistence -----------------------------------------------------------------------


def cache_key(kind: str, key: str, execution: Execution, target: Target, extra: dict | None = None) -> str:
    """Results are reusable across sessions only for the same command, build, target and setup."""
    blob = json.dumps({"kind": kind, "key": key, "cmd": execution.cmd, "build": execution.build,
                       "launcher": execution.launcher, "repeat": execution.repeat, "timeout": execution.timeout,
                       "target": asdict(target), "extra": extra or {},
                       # only when set, so the keys of existing sessions stay valid
                       **({"server": [execution.server, execution.ready, execution.ready_timeout]}
                          if execution.server else {})}, sort_keys=True)
    return sha256_hex(blob.encode())


# What only a shell or a terminal sets, or dbglog and its test runner: left out of a verdict's world (``world``)
_PASSING_ENV = re.compile(r"(?:PWD|OLDPWD|SHLVL|_|TERM|TERM_\w*|COLORTERM|COLUMNS|LINES|SSH_\w*|DISPLAY|XDG_\w*|TMUX\w*|"
                          r"STY|WINDOW|PS[1-4]|PROMPT_COMMAND|LS_COLORS|HIST\w*|MAIL|DBGLOG_\w*|PYTEST_\w*|"
                          r"COV_\w*)")
_OUTPUT_SUFFIXES = (".log", ".out", ".err", ".txt", ".jsonl", ".csv")
_WORLD_READ = 4 << 20  # the bytes of a named file read for its digest (past them: its size and mtime)


def world(cmd: Sequence[str], cwd: str, tree: bool = False) -> str:
    """What a verdict depends on besides its key, for the cache shared by sessions: the environment (bar what only a
    shell or terminal sets), the bytes of each file the command names, and with ``tree`` the state of the working
    tree it runs in (HEAD, and the digest of its changes and untracked files; outside git a value of its own, so no
    verdict is shared). An edited repro, TRIGGER=1 unset, or a commit since gave the old answer with exit 0."""
    import hashlib

    h = hashlib.sha256()
    for k in sorted(os.environ):
        if not _PASSING_ENV.fullmatch(k):
            h.update(f"{k}={os.environ[k]}\0".encode("utf-8", "surrogateescape"))
    for w in cmd:
        p = os.path.join(cwd, w)
        if w.lower().endswith(_OUTPUT_SUFFIXES):
            continue  # (a file the repro writes, named so it knows where: its growing log is no input)
        try:
            if os.path.isfile(p):
                st = os.stat(p)
                with open(p, "rb") as f:
                    h.update(p.encode("utf-8", "surrogateescape") + f.read(_WORLD_READ) + f"{st.st_size}".encode())
                if st.st_size > _WORLD_READ:
                    h.update(f"{st.st_mtime_ns}".encode())
        except (OSError, ValueError):
            continue
    if tree:
        h.update(_tree_state(cwd))
    return h.hexdigest()[:32]


def _tree_state(cwd: str) -> bytes:
    import subprocess

    try:
        out = [subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
               for args in (["rev-parse", "HEAD"], ["diff", "HEAD", "--binary"],
                            ["ls-files", "--others", "--exclude-standard", "-z"])]
    except (OSError, subprocess.SubprocessError):
        out = []
    if not out or any(p.returncode != 0 for p in out):
        return os.urandom(16)  # (not a git checkout: nothing says two sessions ran the same code)
    return b"\0".join(p.stdout for p in out)


def _stamp(pid: int) -> str | None:
    """What is stored beside a driver's pid: "PID:CREATE_TIME", and ":SECONDS_SINCE_BOOT" where /proc tells
    (None when it cannot be read). The second survives a step of the wall clock between the stamp and a check
    made by another process; the first is kept for the rows and platforms that lack it."""
    from dbglog.run import proctree

    started = proctree.create_time(pid)
    if started is None:
        return None
    boot = proctree.since_boot(pid)
    return f"{pid}:{started!r}" + (f":{boot!r}" if boot is not None else "")


def _alive(pid, driver: str | None = None) -> bool:
    """Whether the driver ``pid`` still runs. When its create time was stored with it (``driver``,
    "PID:CREATE_TIME"), proctree's rule decides: not a zombie and the same create time (a reused
    pid is another process). A pid stored without one (a session written by an older dbglog) is
    taken for its driver only while it is a live dbglog process by command line."""
    if not pid:
        return False
    if pid == os.getpid():
        return True
    from dbglog.run import proctree

    spid, _, started = (driver or "").partition(":")
    if spid == str(pid) and started:
        wall, _, boot = started.partition(":")
        return proctree.alive(pid, float(boot or wall))  # (the start since boot when stored: no clock step moves it)
    ps = proctree.psutil_module()
    try:
        p = ps.Process(pid)
        return p.status() != ps.STATUS_ZOMBIE and "dbglog" in " ".join(p.cmdline())
    except ps.Error:
        return False


def _driver_of(r) -> str | None:
    return r["driver"] if "driver" in r.keys() else None  # noqa: SIM118 - sqlite3.Row: `in` tests values


def _status(r) -> str:
    """A session's status as it stands: ``running`` only while its driver lives; a driver that was
    killed (kill -9, a crash) leaves it ``interrupted`` (resumable), never ``running``."""
    if r["status"] == "running" and not _alive(r["pid"], _driver_of(r)):
        return "interrupted"
    return r["status"]


def secrets_path(store, sid: str) -> Path:
    """Where a session keeps the spec values it must rerun with but may not store: beside the
    database (``.dbglog/``, never committed), readable by the owner only."""
    return Path(store.path).parent / "bisect-secrets" / f"{sid}.json"


def seal_spec(store, sid: str, spec: dict) -> str:
    """The spec as stored in the database: secrets redacted (``--env HF_TOKEN=…``, a token in the
    command). When that changed anything, the real spec goes to ``secrets_path`` (0600) so that
    ``resume`` can still run with the real values."""
    from dbglog.util import redact

    clean = redact.clean_obj(spec)
    path = secrets_path(store, sid)
    if clean == spec:
        if path.exists():
            path.unlink()
        return json.dumps(spec)
    row = store.q("SELECT status FROM bisect_sessions WHERE id = ?", sid).fetchone()
    if row is not None and row["status"] not in RESUMABLE:  # (the record written after the end: no rerun)
        path.unlink(missing_ok=True)
        return json.dumps(clean | {"sealed": True})
    path.parent.mkdir(mode=0o700, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(spec, f)
    os.replace(tmp, path)
    return json.dumps(clean | {"sealed": True})


def _remember_secrets(real, clean) -> None:
    """Teach redact the real values a sealed spec hides, so this process redacts them wherever
    a repro prints them (the values given on the command line are only known to that process)."""
    from dbglog.util import redact

    if isinstance(real, str) and isinstance(clean, str):
        if real != clean:
            for value in hidden_values(real, clean):
                redact.remember(value)
    elif isinstance(real, dict) and isinstance(clean, dict):
        for k in real:
            _remember_secrets(real[k], clean.get(k))
    elif isinstance(real, list) and isinstance(clean, list):
        for x, y in zip(real, clean):
            _remember_secrets(x, y)


RESUMABLE = ("running", "interrupted")


def secret_files(store) -> list[dict]:
    """The sealed-secret files left in ``bisect-secrets/``: session id, its status ('unknown' when no
    session has that id), path, and whether something still needs it (a running or resumable session)."""
    d = secrets_path(store, "x").parent
    try:
        names = sorted(n for n in os.listdir(d) if n.endswith(".json"))
    except OSError:
        return []
    out = []
    for name in names:
        sid = name[:-len(".json")]
        row = store.q("SELECT * FROM bisect_sessions WHERE id = ?", sid).fetchone()
        status = _status(row) if row is not None else "unknown"
        out.append({"session": sid, "status": status, "path": str(d / name), "needed": status in RESUMABLE})
    return out


def prune_secrets(store, dry_run: bool = False) -> list[str]:
    """Remove the secret files no session needs any more (`runs prune`); returns the session ids."""
    gone = []
    for f in secret_files(store):
        if not f["needed"]:
            if not dry_run:
                Path(f["path"]).unlink(missing_ok=True)
            gone.append(f["session"])
    return gone


def hidden_values(real: str, clean: str) -> list[str]:
    """The values redaction replaced in ``real`` to give ``clean``: exactly the text each
    ``<redacted>`` stands for, nothing around it. (Remembering all of ``real`` after its first '='
    made every later toggle and the repro itself a "secret": a toggle bisection's record lost them.)"""
    import re

    from dbglog.util.redact import REDACTED

    parts = clean.split(REDACTED)
    if len(parts) < 2:
        return []
    rx = "(.+?)".join(re.escape(p) for p in parts)
    m = re.fullmatch(rx, real, re.S)
    if m is None:  # (cleaning changed more than the secrets, e.g. a control byte): the differing words
        said = set(clean.split())
        return [w.split("=", 1)[-1] for w in real.split() if w not in said]
    return [v for v in m.groups() if v]


def unseal_spec(store, sid: str, stored: dict) -> dict:
    if not stored.pop("sealed", False):
        return stored
    try:
        real = json.loads(secrets_path(store, sid).read_text())
    except (OSError, ValueError):
        return stored | {"secrets_lost": True}
    _remember_secrets(real, stored)
    return real


class SessionDB:
    def __init__(self, store):
        self.store = store
        self._wal: bool | None = None

    def create(self, kind: str, spec: dict, investigation_id: str | None) -> str:
        sid = f"{datetime.now(timezone.utc):%Y%m%d-%H%M%S}-{kind}-{os.urandom(2).hex()}"
        with self._step_write():  # no fsync (see _step_write): a power cut before any step loses nothing run
            self.store.q("INSERT INTO bisect_sessions (id, kind, investigation_id, status, spec, created, updated, pid,"
                         " driver) VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?)", sid, kind, investigation_id,
                         seal_spec(self.store, sid, spec), now_iso(), now_iso(), os.getpid(), _stamp(os.getpid()))
        return sid

    def get(self, ref: str | None = None, *, kind: str | None = None) -> dict:
        """A session by id/prefix, or the one a live driver runs, else the most recent one."""
        if ref:
            rows = self.store.q("SELECT * FROM bisect_sessions WHERE id = ? OR id LIKE ? ORDER BY id",
                                ref, ref.replace("%", "").replace("_", "\\_") + "%").fetchall()
            exact = [r for r in rows if r["id"] == ref]
            if not exact and len(rows) > 1:
                raise DbglogError(f"{ref!r} matches several bisections ({', '.join(r['id'] for r in rows[:4])})")
            rows = exact or rows
        else:  # the one a live driver is running, else the latest
            sql = "SELECT * FROM bisect_sessions" + (" WHERE kind = ?" if kind else "") + \
                  " ORDER BY created DESC, id DESC"
            rows = self.store.q(sql, *([kind] if kind else [])).fetchall()
            live = [r for r in rows if r["status"] == "running" and _alive(r["pid"], _driver_of(r))]
            rows = live[:1] or rows[:1]
        if not rows:
            raise DbglogError("no bisection found" + (f" matching {ref!r}" if ref else "") +
                              " (start one with `dbglog bisect git` or `dbglog bisect toggles`)")
        r = rows[0]
        return {"id": r["id"], "kind": r["kind"], "investigation": r["investigation_id"], "status": _status(r),
                "spec": unseal_spec(self.store, r["id"], json.loads(r["spec"])), "result": json.loads(r["result"]) if r["result"] else None,
                "created": r["created"], "updated": r["updated"], "pid": r["pid"]}

    def list(self) -> list[dict]:
        return [{"id": r["id"], "kind": r["kind"], "status": _status(r), "created": r["created"],
                 "investigation": r["investigation_id"]}
                for r in self.store.q("SELECT * FROM bisect_sessions ORDER BY created DESC, id DESC")]

    @staticmethod
    def _step(r, source: str | None = None) -> Step:
        runs = json.loads(r["runs"])
        counts = post = None
        if isinstance(runs, dict):  # {"ids": [...], "counts": [bad, good, skip], "posterior": [[key, p]...]}
            runs, counts, post = runs.get("ids", []), runs.get("counts"), runs.get("posterior")
        return Step(r["key"], Verdict(r["verdict"]), r["reason"], r["outcome"], r["signature"], r["duration_s"] or 0,
                    runs, source or r["source"], counts, post)

    def trials(self, sid: str) -> list[Step]:
        return [self._step(r)
                for r in self.store.q("SELECT * FROM bisect_trials WHERE session_id = ? ORDER BY seq", sid)]

    @contextmanager
    def _step_write(self):
        """The write transaction of one step (or of the session's creation and its calibrated
        spec), without an fsync. In WAL mode, ``synchronous = NORMAL`` makes a COMMIT durable
        against the driver's death (kill -9: the WAL is in the OS when COMMIT returns) but not
        against a power cut, which may lose the last steps -- the database stays consistent and
        ``resume`` re-runs them. The fsync was ~4 ms of a step. ``finish`` too: the command closes
        the database right after, and that checkpoint of the WAL syncs every commit of the session
        (in a long-lived process, its next checkpoint does); ``release`` keeps its own fsync."""
        conn = self.store.conn
        if self._wal is None:  # (asked once: the store opened the database in WAL mode or could not)
            self._wal = conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        relax = not conn.in_transaction and self._wal
        if relax:
            old = int(conn.execute("PRAGMA synchronous").fetchone()[0])
            conn.execute("PRAGMA synchronous = NORMAL")
        try:
            with self.store.write():
                yield
        finally:
            if relax:
                conn.execute(f"PRAGMA synchronous = {old}")

    def record(self, sid: str, step: Step, ckey: str, runs: Sequence[dict] = ()) -> None:
        """Persist one verdict (and its runs) in one transaction; a later verdict for a key replaces it."""
        with self._step_write():
            for r in runs:
                self.store.insert_run(r, r.get("run_dir", ""))
            seq = self.store.q("SELECT coalesce(max(seq), 0) + 1 FROM bisect_trials WHERE session_id = ?",
                               sid).fetchone()[0]
            self.store.q(
                """INSERT INTO bisect_trials (session_id, seq, key, cache_key, verdict, reason, outcome, signature,
                     duration_s, runs, source, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                   ON CONFLICT(session_id, key) DO UPDATE SET seq=excluded.seq, cache_key=excluded.cache_key,
                     verdict=excluded.verdict, reason=excluded.reason, outcome=excluded.outcome,
                     signature=excluded.signature, duration_s=excluded.duration_s, runs=excluded.runs,
                     source=excluded.source, created=excluded.created""",
                sid, seq, step.key, ckey, step.verdict.value, step.reason, step.outcome, step.signature,
                step.duration_s, json.dumps(({"ids": step.runs, "counts": step.counts}
                                             | ({"posterior": step.posterior} if step.posterior else {}))
                                            if step.counts is not None else step.runs), step.source, now_iso())
            self.store.q("UPDATE bisect_sessions SET updated = ? WHERE id = ?", now_iso(), sid)

    def cached(self, ckey: str, confirmed_only: bool = False) -> Step | None:
        """A finished, trustworthy verdict for the same trial from any session (skips are not reused:
        infrastructure trouble may be gone). ``confirmed_only``: only from sessions that finished
        with exit 0 -- a session whose confirmation failed, or that saw the target flaky, is never
        replayed."""
        sql = ("SELECT t.* FROM bisect_trials t JOIN bisect_sessions s ON s.id = t.session_id "
               "WHERE t.cache_key = ? AND t.verdict IN ('good', 'bad') AND t.source != 'manual'")
        if confirmed_only:
            sql += " AND s.status = 'done' AND json_extract(s.result, '$.exit_code') = 0"
        r = self.store.q(sql + " ORDER BY t.id DESC LIMIT 1", ckey).fetchone()
        if r is None:
            return None
        return self._step(r, "cache")

    def update_spec(self, sid: str, spec: dict) -> None:
        """Persist what a driver learned about its session (e.g. the calibrated target and timeout)."""
        with self._step_write():
            self.store.q("UPDATE bisect_sessions SET spec = ?, updated = ? WHERE id = ?",
                         seal_spec(self.store, sid, spec), now_iso(), sid)

    def release(self, sid: str) -> None:
        """The driver stops without finishing (Ctrl-C, SIGTERM): the session is ``interrupted`` and
        stays resumable."""
        with self.store.write():
            self.store.q("UPDATE bisect_sessions SET pid = NULL, driver = NULL, status = 'interrupted', updated = ? "
                         "WHERE id = ? AND status = 'running'", now_iso(), sid)

    def finish(self, sid: str, status: str, result: dict) -> None:
        with self._step_write():  # (closing the database checkpoints the WAL, with an fsync: not twice)
            self.store.q("UPDATE bisect_sessions SET status = ?, result = ?, updated = ?, pid = NULL, driver = NULL "
                         "WHERE id = ?",
                         status, json.dumps(result), now_iso(), sid)
        # ended (found, inconclusive, aborted...): nothing will rerun it, so its real secrets go (issue 30)
        secrets_path(self.store, sid).unlink(missing_ok=True)

    def live_driver(self, sid: str):
        """The psutil.Process still driving ``sid`` (a dbglog process), or None."""
        import psutil

        r = self.store.q("SELECT * FROM bisect_sessions WHERE id = ?", self.get(sid)["id"]).fetchone()
        pid = r["pid"]
        if not pid or pid == os.getpid() or r["status"] != "running" or not _alive(pid, _driver_of(r)):
            return None  # none, this process, or gone (a zombie, a reused pid)
        try:
            return psutil.Process(pid)
        except psutil.Error:
            return None

    def claim(self, sid: str) -> None:
        """Take over a session (resume): refuse if its driver is still alive."""
        p = self.live_driver(sid)
        if p is not None:
            raise DbglogError(f"bisection {sid} is still being driven by process {p.pid}; "
                              "wait for it or `dbglog bisect abort`")
        if self.get(sid)["spec"].get("secrets_lost"):
            raise DbglogError(f"bisection {sid} cannot resume: the secret values it ran with "
                              f"({secrets_path(self.store, sid)}) are gone; start a new one")
        with self.store.write():
            self.store.q("UPDATE bisect_sessions SET pid = ?, driver = ?, status = 'running', updated = ? WHERE id = ?",
                         os.getpid(), _stamp(os.getpid()), now_iso(), sid)


def reap_leftovers(sid: str) -> list[dict]:
    """Kill what a killed driver left running (trials carry SESSION_VAR=sid)."""
    from dbglog.run import proctree

    return proctree.kill_marked(SESSION_VAR, sid)


# --- progress ------------------------------------------------------------------------


#: bisection ids whose first bad verdict this process showed the seen-before block under (issue 27)
RECALLED_LIVE: set[str] = set()


class Progress:
    """A rich live line on a terminal, plain lines otherwise (and nothing with --json). ``recall``
    (set by the oracle): the seen-before lines of a step judged bad, printed under the first one."""

    def __init__(self, total_hint: int, enabled: bool = True):
        self.enabled = enabled
        self.recall: Callable[[Step], list[str] | None] | None = None
        self.recalled = False
        self.tty = enabled and sys.stderr.isatty()
        self.start = time.monotonic()
        self.done = 0
        self._progress = None
        if self.tty:
            from rich.progress import BarColumn, Progress as RichProgress, TextColumn, TimeElapsedColumn

            self._progress = RichProgress(TextColumn("[bold]bisect[/bold] {task.description}"), BarColumn(),
                                          TextColumn("{task.completed}/{task.total} steps"), TimeElapsedColumn(),
                                          transient=True)
            self._task = self._progress.add_task("starting", total=max(1, total_hint))
            self._progress.start()

    def running(self, what: str, left: int | None = None, est: int | None = None) -> None:
        if not self.enabled:
            return
        desc = f"testing {what}" + (f" · {left} candidates left" if left is not None else "") + \
               (f" · ~{est} steps to go" if est is not None else "")
        if self._progress is not None:
            self._progress.update(self._task, description=desc, total=max(self.done + (est or 1), 1))
        else:
            print(f"dbglog bisect: {desc} ({time.monotonic() - self.start:.0f}s elapsed)", file=sys.stderr,
                  flush=True)

    def stepped(self, step: Step, label: str) -> None:
        if not self.enabled:
            return
        self.done += 1
        said = step.reason if step.reason.startswith("bad end calibrating") else \
            step.verdict.value + (f" — {step.reason}" if step.reason else "")
        line = f"  {label}: {said}" + \
               (f" [{step.duration_s:.1f}s]" if step.source == "run" else f" [{step.source}]")
        self._say(line)
        if step.verdict is Verdict.BAD and self.recall is not None and not self.recalled:
            for said in self._seen_before(step):
                self._say("    " + said, advance=False)

    def _seen_before(self, step: Step) -> list[str]:
        try:
            lines = self.recall(step) if self.recall is not None else None
        except Exception:  # noqa: BLE001 - the bisection goes on whatever the lookup does
            return []
        self.recalled = lines is not None  # (None: no stored failing run yet; the next bad step tries)
        return lines or []

    def _say(self, line: str, advance: bool = True) -> None:
        if self._progress is not None:
            if advance:
                self._progress.update(self._task, completed=self.done)
            self._progress.console.print(line, highlight=False, markup=False)
        else:
            print(line, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()


def live_recall(recs, sid: str, signatures: Callable[[], object]) -> Callable[[Step], "list[str] | None"]:
    """``Progress.recall`` of a session: what the knowledge base knows about a step's failure
    (``Records.bisection_recall``, the session's own runs left out), as the lines printed under the
    verdict; None while none of the step's failing runs is stored."""
    def lines(step: Step) -> list[str] | None:
        s = SessionDB(recs.store).get(sid)
        # (the command is read from the session's spec by the recall itself, wherever the kind keeps it)
        block = recs.bisection_recall(sid, signatures, step_runs=step.runs, current_inv=s["investigation"])
        if block is None:
            return None
        RECALLED_LIVE.add(sid)
        return block["lines"]

    return lines


# --- recording in the investigation ----------------------------------------------------


def record_section(recs, inv_id: str, heading: str, body: str) -> None:
    """Put a bisection report into the investigation as its own `## ...` section (replacing
    an earlier version of the same report, matched by heading)."""
    recs.set_section(inv_id, heading, body)


def md_cell(s) -> str:
    return str(s if s is not None else "").replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def runs_link(recs, run_ids: Sequence[str]) -> str:
    """Relative links to the runs' output (under .dbglog/runs, which is local to this clone)."""
    return ", ".join(f"[{r}](../.dbglog/runs/{r}/output)" for r in run_ids[-3:])


def default_timeout(bad_runs: list[dict], factor: float = 5.0, floor: float = 10.0) -> float | None:
    """A step that takes 5× the bad end's time is a hang (Shrink Ray / OpenROAD practice)."""
    if any(r["outcome"] == "hang" for r in bad_runs):
        return max(r.get("timeout") or 0 for r in bad_runs) or None
    d = max(r["duration_s"] for r in bad_runs)
    return max(floor, round(d * factor, 1))


def calibrate(failing: list[dict], *, match: str | None, any_failure: bool,
              user_timeout: float | None) -> tuple[Target, float | None]:
    """The endpoint calibration every kind shares: the target failure is the failing end's (its
    first failing run's outcome and signature, unless --match / --any-failure say otherwise), the
    step timeout the user's or ``default_timeout`` of the failing end's runs."""
    target = target_for(failing, match, bool(any_failure))
    return target, (user_timeout if user_timeout is not None else default_timeout(failing))


def workdir_root(recs, scratch: str | None = None) -> Path:
    """Where a session's worktrees/copies live: ``--scratch DIR`` (a path cluster nodes see), else
    .dbglog/bisect."""
    return Path(scratch) if scratch else recs.ws.dir / "bisect"


def recorded_rate(recs, inv_id: str | None, cmd) -> tuple[int, int] | None:
    """(failed, runs) among an investigation's recorded runs of ``cmd``, when they disagree: the
    evidence that the failure is intermittent, which a refusal cites (with the ``--flaky`` line)."""
    import json

    if not inv_id:
        return None
    rows = recs.store.q("SELECT cmd, outcome FROM runs WHERE investigation_id = ?", inv_id).fetchall()
    outs = [r[1] for r in rows if json.loads(r[0] or "[]") == list(cmd) and r[1] != "error"]
    k = sum(o != "pass" for o in outs)
    return (k, len(outs)) if 0 < k < len(outs) else None


def with_flaky(argv_text: str) -> str:
    """A bisect command line with ``--flaky`` (before its ``--``)."""
    if " --flaky" in argv_text:
        return argv_text
    return argv_text.replace(" -- ", " --flaky -- ", 1) if " -- " in argv_text else argv_text + " --flaky"
