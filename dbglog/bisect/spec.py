"""What a user asks of a bisection, typed (issue 13): one dataclass per kind instead of ~35 keyword
arguments mirroring the CLI, with the checks that refuse bad input beside the fields they check
(one line, ``DbglogError``, before anything runs).

:class:`StepOptions` holds what both kinds share (how each step runs: command, build, timeout,
repeats, jobs, launcher, captures, server-shaped steps, what counts as the failure); its run fields
become ``session.Execution`` (``execution_args``), whose ``run_options`` is the one typed
``run.options.RunOptions`` every supervised run takes (``dbglog run`` and MCP ``run_repro`` too), and
its checks of them are that value's (``check_server``);
:class:`HistorySpec` adds ``bisect git``'s range and search options, :class:`ToggleSpec` the
toggle kinds' values and the set search's options. ``history.start`` / ``toggles.start`` take
one and write the session's stored spec.

The stored spec (the session row's JSON) is the same dataclass with what ``start`` resolved (the
commits, the toggles, the files) and what the driver learned (calibration, the recorded attempt):
``Spec.from_stored(dict)`` reads it once when a driver is built (keys a newer dbglog added are
missing from an older session's row: they take their defaults; keys this dbglog does not know
are kept in ``extra`` and written back), ``to_stored()`` writes the same JSON keys as ever. The
user's own words that are not stored (``good_refs``, the toggle options) are empty after a read.
"""

from __future__ import annotations

import shlex
from dataclasses import MISSING, dataclass, field, fields

from dbglog.run.options import RunOptions
from dbglog.util.errors import DbglogError


@dataclass
class StepOptions:
    cmd: list = field(default_factory=list)
    build: str | None = None
    timeout: float | None = None
    grace: float = 5.0
    repeat: int = 1
    jobs: int = 1
    launcher: str | None = None
    match: str | None = None
    any_failure: bool = False
    captures: tuple = ()
    on_hang: tuple = ()
    scratch: str | None = None  # worktrees / copies under this path (cluster nodes see it)
    server: str | None = None
    ready: str | None = None
    ready_timeout: float = 120.0
    idle_timeout: float | None = None
    shared_cache: bool = False
    escalate: bool = False

    def execution_args(self) -> dict:
        """``session.Execution``'s keywords but the timeout (a step's timeout is calibrated)."""
        return dict(cmd=list(self.cmd), grace=self.grace, repeat=self.repeat, build=self.build,
                    launcher=self.launcher, captures=tuple(self.captures), on_hang=tuple(self.on_hang),
                    server=self.server, ready=self.ready, ready_timeout=self.ready_timeout,
                    idle_timeout=self.idle_timeout, shared_cache=self.shared_cache, escalate=self.escalate)

    def check_server(self) -> None:
        """The one check of server-mode and idle options, ``dbglog run``'s (``RunOptions.check_server``)."""
        RunOptions(server=self.server, ready=self.ready, ready_timeout=self.ready_timeout,
                   idle_timeout=self.idle_timeout).check_server()

    def check_launcher(self) -> None:
        if self.launcher:
            try:
                shlex.split(self.launcher)
            except ValueError as e:
                raise DbglogError(f"cannot parse --launcher {self.launcher!r}: {e}") from None


def _check_confidence(confidence: float) -> None:
    if not 0.5 < confidence < 1:
        raise DbglogError(f"--confidence must be between 0.5 and 1 (exclusive), got {confidence:g}")


@dataclass
class HistorySpec(StepOptions):
    """``dbglog bisect git --good REV... --bad REV [options] -- CMD``."""

    good_refs: list = field(default_factory=list)
    bad_ref: str = ""
    first_parent: bool = False
    max_steps: int | None = None
    flaky: bool | str = False  # stored: True (asked), "auto" (repeats disagreed), None
    rate: bool = False
    confidence: float = 0.95
    # resolved by start()
    repo: str = ""
    cwd_rel: str = "."  # the command's directory inside the repository (and each worktree)
    bad: str = ""  # the bad end's sha (bad_ref: as the user named it)
    goods: list = field(default_factory=list)  # the good ends' shas (merge bases for a good end off the line)
    good_labels: list = field(default_factory=list)
    size_hint: int | None = None
    candidates: int | None = None
    notes: list = field(default_factory=list)
    # learned by the driver
    calibrated: dict | None = None  # {"target": Target's fields, "timeout": the step timeout}
    recorded: str | None = None  # "status:first bad commit" already recorded as an attempt
    earlier: list | None = None  # --flaky: ids of the investigation's runs at the bad end before it began
    extra: dict = field(default_factory=dict)  # stored keys this dbglog does not know, written back

    @classmethod
    def from_stored(cls, stored: dict) -> HistorySpec:
        return _read(cls, stored, _HISTORY_KEYS)

    def to_stored(self) -> dict:
        d = {k: getattr(self, k) for k in _HISTORY_KEYS}
        d.update(cmd=list(self.cmd), captures=list(self.captures), on_hang=list(self.on_hang),
                 goods=list(self.goods), flaky=self.flaky or None)
        return d | self.extra

    def validate(self) -> None:
        if not self.cmd:
            raise DbglogError("no command: put the repro after --, e.g. dbglog bisect git --good v1 --bad HEAD "
                              "-- python repro.py")
        if not self.good_refs:
            raise DbglogError("give at least one --good REV")
        if self.repeat < 1:
            raise DbglogError(f"--repeat must be at least 1, got {self.repeat}")
        if self.jobs < 1:
            raise DbglogError(f"--jobs must be at least 1, got {self.jobs}")
        if self.max_steps is not None and self.max_steps < 1:
            raise DbglogError(f"--max-steps must be at least 1, got {self.max_steps}")
        if self.timeout is not None and self.timeout <= 0:
            raise DbglogError("--timeout must be a positive number of seconds")
        _check_confidence(self.confidence)
        if self.match and self.any_failure:
            raise DbglogError("--match and --any-failure contradict each other; use one")
        self.check_server()  # server-shaped steps
        self.check_launcher()


@dataclass
class ToggleSpec(StepOptions):
    """``dbglog bisect toggles [kind options] [options] -- CMD``."""

    #: the registered kinds' option values by dest (``kinds.options()``)
    toggle_options: dict = field(default_factory=dict)
    # the built-in kinds' values as keywords (library callers, the demo), beside toggle_options
    envs: tuple = ()
    env_offs: tuple = ()
    args: tuple = ()
    args_from: tuple = ()
    configs: tuple = ()
    suspect_paths: tuple = ()
    coops: tuple = ()
    count: str | None = None
    from_diffs: str | None = None  # "" = the current investigation
    mode: str = "auto"
    max_sets: int | None = None
    max_set_size: int | None = None
    max_runs: int | None = None
    strategy: str = "auto"
    exhaustive: bool = True
    in_place: bool = False
    bad_if_any: bool = False
    flaky: bool = False
    confidence: float = 0.95
    budget: int | None = None
    argv_text: str = ""  # the command line as typed, for the record
    # resolved by start()
    toggles: list = field(default_factory=list)  # each Toggle.to_dict()
    root: str = ""
    cwd: str = ""
    files: dict = field(default_factory=dict)  # a file the toggles edit -> sha256 of its original
    # learned by the driver (timeout is the user's; step_timeout the calibrated one trials run with)
    step_timeout: float | None = None
    target: dict | None = None  # Target's fields
    count_max: int | None = None
    attempt: int | None = None  # the attempt that records this session
    extra: dict = field(default_factory=dict)  # stored keys this dbglog does not know, written back

    @classmethod
    def from_stored(cls, stored: dict) -> ToggleSpec:
        flat = {k: v for k, v in stored.items() if k not in ("search", "execution", "user_timeout", "argv",
                                                            "from_diffs")}
        flat.update({k: v for k, v in (stored.get("search") or {}).items() if k in _SEARCH_KEYS})
        ex = stored.get("execution") or {}
        flat.update({k: v for k, v in ex.items() if k in _EXECUTION_KEYS})
        flat["step_timeout"] = ex.get("timeout")
        if "user_timeout" in stored:
            flat["timeout"] = stored["user_timeout"]
        if "argv" in stored:
            flat["argv_text"] = stored["argv"]
        # stored as a flag: "" (the current investigation) is what resume needs to know
        flat["from_diffs"] = "" if stored.get("from_diffs") else None
        return _read(cls, flat, _TOGGLE_FIELDS)

    def execution_stored(self) -> dict:
        """The stored ``execution`` (``asdict(session.Execution)``: the keys as ever)."""
        a = self.execution_args()
        return {"cmd": a["cmd"], "timeout": self.step_timeout, "grace": self.grace, "repeat": self.repeat,
                "build": self.build, "launcher": self.launcher, "captures": list(self.captures),
                "on_hang": list(self.on_hang), "quiet": True, "server": self.server, "ready": self.ready,
                "ready_timeout": self.ready_timeout, "idle_timeout": self.idle_timeout,
                "shared_cache": self.shared_cache, "escalate": self.escalate}

    def to_stored(self) -> dict:
        d = {"toggles": self.toggles, "root": self.root, "cwd": self.cwd, "files": self.files,
             "in_place": self.in_place, "jobs": self.jobs, "mode": self.mode, "count": self.count,
             "from_diffs": self.from_diffs is not None, "search": {k: getattr(self, k) for k in _SEARCH_KEYS},
             "execution": self.execution_stored(), "user_timeout": self.timeout, "match": self.match,
             "any_failure": self.any_failure, "bad_if_any": self.bad_if_any, "scratch": self.scratch,
             "flaky": self.flaky, "confidence": self.confidence, "budget": self.budget, "argv": self.argv_text}
        # added by the driver as it learns them: absent until then, as ever
        d |= {k: getattr(self, k) for k in ("target", "count_max", "attempt") if getattr(self, k) is not None}
        return d | self.extra

    def validate(self) -> None:
        """The checks on the options alone (before the toggles are built)."""
        if not self.cmd:
            raise DbglogError("no command: put the repro after --, e.g. dbglog bisect toggles --env X=1 -- python "
                              "repro.py")
        if self.mode not in ("auto", "enable", "disable"):
            raise DbglogError(f"bad --mode {self.mode!r}: use enable, disable or auto")
        if self.repeat < 1 or self.jobs < 1:
            raise DbglogError("--repeat and --jobs must be at least 1")
        for name, v in (("--max-sets", self.max_sets), ("--max-set-size", self.max_set_size),
                        ("--max-runs", self.max_runs)):
            if v is not None and v < 1:
                raise DbglogError(f"{name} must be at least 1")
        if self.timeout is not None and self.timeout <= 0:
            raise DbglogError("--timeout must be a positive number of seconds")

    def validate_with(self, toggles: list) -> None:
        """The checks that need the toggles (built from the options)."""
        if self.bad_if_any and self.count:
            raise DbglogError("--bad-if-any applies to set searches, not to --count")
        if self.flaky and (self.count or self.bad_if_any):
            raise DbglogError("--flaky is its own search: drop --count / --bad-if-any")
        _check_confidence(self.confidence)
        if self.budget is not None and self.budget < 1:
            raise DbglogError("--budget must be at least 1")
        if self.count and any(t.kind == "coop" and t.name == self.count for t in toggles):
            raise DbglogError(f"--count {self.count} and --coop {self.count}: count mode bisects the calls of one "
                              "toggle")
        if self.in_place and self.jobs > 1:
            raise DbglogError("--in-place edits the real files, so trials run one at a time: drop --jobs or "
                              "--in-place")


# --- the stored form ---------------------------------------------------------------------------

#: HistorySpec's stored keys, in the order start() has always written them
_HISTORY_KEYS = ("repo", "cwd_rel", "bad", "bad_ref", "goods", "good_labels", "cmd", "build", "timeout", "grace",
                 "repeat", "jobs", "launcher", "match", "any_failure", "first_parent", "captures", "on_hang",
                 "size_hint", "candidates", "notes", "calibrated", "recorded", "max_steps", "scratch", "server",
                 "ready", "ready_timeout", "idle_timeout", "shared_cache", "flaky", "rate", "confidence",
                 "escalate", "earlier")
_SEARCH_KEYS = ("max_sets", "max_set_size", "max_runs", "strategy", "exhaustive")
_EXECUTION_KEYS = ("cmd", "grace", "repeat", "build", "launcher", "captures", "on_hang", "server", "ready",
                   "ready_timeout", "idle_timeout", "shared_cache", "escalate")
_TOGGLE_FIELDS = ("toggles", "root", "cwd", "files", "in_place", "jobs", "mode", "count", "from_diffs", "match",
                  "any_failure", "bad_if_any", "scratch", "flaky", "confidence", "budget", "argv_text", "target",
                  "count_max", "attempt", "timeout", "step_timeout", *_SEARCH_KEYS, *_EXECUTION_KEYS)
_TUPLES = ("captures", "on_hang")


def _default(f):
    if f.default is not MISSING:
        return f.default
    return f.default_factory() if f.default_factory is not MISSING else MISSING


def _read(cls, flat: dict, keys: tuple):
    """``cls`` from a stored dict: a missing key, or a None where the field has a value by default
    (an older dbglog's row), reads as the default; keys outside ``keys`` go to ``extra``."""
    by_name = {f.name: f for f in fields(cls)}
    kw = {}
    for k in keys:
        if k not in flat or (flat[k] is None and _default(by_name[k]) is not None):
            continue
        kw[k] = tuple(flat[k]) if k in _TUPLES else flat[k]
    return cls(**kw, extra={k: v for k, v in flat.items() if k not in keys})


def from_stored(kind: str, stored: dict) -> HistorySpec | ToggleSpec:
    """A session's stored spec, typed by its kind (``git``, ``toggles``)."""
    return (HistorySpec if kind == "git" else ToggleSpec).from_stored(stored)
