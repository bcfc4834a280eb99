"""What a user asks of a bisection, typed (issue 13): one dataclass per kind instead of ~35 keyword
arguments mirroring the CLI, with the checks that refuse bad input beside the fields they check
(one line, ``DbglogError``, before anything runs).

:class:`StepOptions` holds what both kinds share (how each step runs: command, build, timeout,
repeats, jobs, launcher, captures, server-shaped steps, what counts as the failure);
:class:`HistorySpec` adds ``bisect git``'s range and search options, :class:`ToggleSpec` the
toggle kinds' values and the set search's options. ``history.start`` / ``toggles.start`` take
one and write the session's stored spec (JSON, the same keys as before, so sessions written by
an older dbglog resume: the drivers read missing keys with their defaults).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from dbglog.errors import DbglogError


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

    def check_server(self) -> None:
        from dbglog import serve

        serve.check_args(self.server, self.ready, self.ready_timeout, self.idle_timeout)

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
    flaky: bool = False
    rate: bool = False
    confidence: float = 0.95

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
