"""How one supervised run goes, typed once: :class:`RunOptions`.

``dbglog run``, the MCP tool ``run_repro``, ``ops.run_repro``, ``runner.run`` / ``run_repeated``,
``serve.run_server_client`` and a bisection's steps (``bisect/spec.StepOptions`` → ``session.Execution``
→ :meth:`RunOptions`) all hand over one frozen value instead of ~20 keyword arguments each. What
changes from run to run (the folder, the run id, the environment, the working directory, the catalog
of signatures, a companion or a launcher hook, one repeat's escalation level) stays a keyword of the
call: it is not an option a user picks once.

:meth:`RunOptions.validate` holds every check of a user's values (one line, ``DbglogError``: exit 2,
before anything runs); the front doors call it where the values come in. The server-mode argument
checks live here too (``serve`` uses them), so this module imports only ``util`` and the pure run
helpers ``escalate`` and ``slurm``, lazily.
"""

from __future__ import annotations

import math
import os
import shlex
from dataclasses import dataclass, fields, replace

from dbglog.util.errors import DbglogError

DEFAULT_OUTPUT_CAP = 32 * 1024 * 1024  # per file (stdout, stderr, merged output) of a library run
REPRO_OUTPUT_CAP = 64 << 20  # `dbglog run --output-cap 64M`, the MCP tool's and the demo's


@dataclass(frozen=True)
class RunOptions:
    """The options of a supervised run (defaults: ``runner.run``'s, as ever)."""

    # how long: a hang at ``timeout``; ``grace`` between SIGTERM and SIGKILL; silent for ``idle_timeout``
    timeout: float | None = None
    grace: float = 5.0
    idle_timeout: float | None = None
    kill_wait: float = 3.0
    # what is captured on a hang: presets (run/captures.py) and ``on_hang`` commands, each for ``capture_timeout``
    captures: tuple[str, ...] = ()
    on_hang: tuple[str, ...] = ()
    capture_timeout: float = 30.0
    core_dumps: bool = False  # keep the core size limit (else 0 for the repro)
    # the output: bytes kept per stream, echoed live or not
    output_cap_bytes: int | None = DEFAULT_OUTPUT_CAP
    echo: bool = True
    # the record: the git state of the working directory, the pre-flight checks
    git_info: bool = True
    preflight_check: bool = True
    # a server-shaped repro (run/serve.py): the server started first, its readiness check and wait
    server: str | None = None
    ready: str | None = None
    ready_timeout: float = 120.0
    gpu_release_timeout: float = 60.0
    # repeats: how many, stop at the first non-pass, raise the kernel-API log level after each failure
    repeat: int = 1
    until_fail: bool = False
    escalate: bool = False
    escalate_levels: str | None = None
    dump_include: tuple[str, ...] = ()
    dump_exclude: tuple[str, ...] = ()
    slurm: str | None = None  # srun's arguments: each run its own allocation (run/slurm.py)
    container: str | None = None  # the container the repro runs in (the docker preset inspects it after the run)

    def __post_init__(self) -> None:
        # lists from click or JSON become tuples: the value is hashable and cannot change under a run
        for name in ("captures", "on_hang", "dump_include", "dump_exclude"):
            v = getattr(self, name)
            if not isinstance(v, tuple):
                object.__setattr__(self, name, tuple(v or ()))

    @classmethod
    def of(cls, base: RunOptions | None = None, **changes) -> RunOptions:
        """``base`` (default: all defaults) with ``changes``: a library caller's keywords become the
        one value here (an unknown name is a ``TypeError``, as a call's would be)."""
        if base is None:
            return cls(**changes)
        return replace(base, **changes) if changes else base

    @classmethod
    def split(cls, kwargs: dict) -> tuple[dict, dict]:
        """(the keywords that are fields of RunOptions, the rest)."""
        names = _FIELDS
        return ({k: v for k, v in kwargs.items() if k in names}, {k: v for k, v in kwargs.items() if k not in names})

    # --- the checks of a user's values (one line each, before anything runs) ----------------------

    def validate(self) -> RunOptions:
        """Refuse bad values (``DbglogError``, one line) in the order the commands always checked them."""
        if self.repeat < 1:
            raise DbglogError(f"--repeat must be at least 1, got {self.repeat}")
        if self.timeout is not None and not 0 < self.timeout < math.inf:  # (nan too: an agent's JSON may carry one)
            raise DbglogError("--timeout must be a positive number of seconds")
        for name, v in (("--ready-timeout", self.ready_timeout), ("--idle-timeout", self.idle_timeout)):
            if v is not None and not 0 < v < math.inf:  # (nan, inf: only an agent's JSON can send them)
                raise DbglogError(f"{name} must be a positive number of seconds")
        self.check_server()
        if (self.escalate_levels or self.dump_include or self.dump_exclude) and not self.escalate:
            raise DbglogError("--escalate-levels, --dump-include and --dump-exclude need --escalate")
        self.ladder()  # a bad --escalate-levels
        if self.slurm is not None:
            if self.server is not None:
                raise DbglogError("--slurm does not combine with --server: run the server inside the repro's own "
                                  "script")
            self.slurm_launcher()
        return self

    def check_server(self) -> None:
        """The server-mode and idle options (``dbglog run`` and every bisection's steps)."""
        check_server_args(self.server, self.ready, self.ready_timeout, self.idle_timeout)

    # --- what the options make -------------------------------------------------------------------

    def ladder(self):
        """A fresh ``escalate.Ladder`` for a series of repeats, or None without ``escalate``."""
        if not self.escalate:
            return None
        from dbglog.run import escalate as esc

        return esc.Ladder(esc.parse_ladder(self.escalate_levels), list(self.dump_include), list(self.dump_exclude))

    def record(self) -> dict:
        """The options that shape one run, as its record keeps them (``options`` of a run): what
        ``dbglog rerun`` runs it again with. Not the series (repeat, until-fail) nor what only changes
        the display (echo)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in
                ((k, getattr(self, k)) for k in _RECORDED)}

    @classmethod
    def recorded(cls, options: dict) -> dict:
        """The fields of a run record's ``options`` this dbglog knows, as RunOptions keywords."""
        return {k: options[k] for k in _RECORDED if k in options}

    def slurm_launcher(self) -> str | None:
        """``srun ARGS`` for ``slurm``, or None (refuses srun options that would defeat the Slurm mode)."""
        if self.slurm is None:
            return None
        from dbglog.run import slurm as slurm_mode

        return slurm_mode.launcher(self.slurm)


_FIELDS = frozenset(f.name for f in fields(RunOptions))
_RECORDED = ("timeout", "grace", "idle_timeout", "captures", "on_hang", "capture_timeout", "core_dumps",
             "output_cap_bytes", "server", "ready", "ready_timeout", "gpu_release_timeout", "escalate",
             "escalate_levels", "dump_include", "dump_exclude", "slurm", "container")


# --- the server-mode arguments (run/serve.py runs them; they are checked here, before anything runs) ---

def parse_server_cmd(server) -> list[str]:
    if isinstance(server, str):
        try:
            argv = shlex.split(server)
        except ValueError as e:
            raise DbglogError(f"cannot parse --server {server!r}: {e}") from None
    else:
        argv = [os.fspath(a) for a in server or ()]
    if not argv:
        raise DbglogError("--server needs a command, e.g. --server 'python -m vllm.entrypoints.openai.api_server'")
    return argv


def is_url(ready: str) -> bool:
    return ready.startswith(("http://", "https://"))


def check_ready_arg(ready: str | None) -> str:
    if not ready or not ready.strip():
        raise DbglogError("--server needs --ready URL|CMD (an HTTP URL answering 2xx, or a command exiting 0)")
    if not is_url(ready):
        try:
            if not shlex.split(ready):
                raise ValueError("empty command")
        except ValueError as e:
            raise DbglogError(f"cannot parse --ready {ready!r}: {e}") from None
    return ready


def check_server_args(server, ready, ready_timeout, idle_timeout) -> None:
    """The server-mode and idle options, refused before anything runs."""
    if (server is None) != (ready is None):
        raise DbglogError("--server and --ready go together: --server CMD --ready URL|CMD -- CLIENT...")
    if server is not None:
        parse_server_cmd(server)
        check_ready_arg(ready)
    if ready_timeout is not None and ready_timeout <= 0:
        raise DbglogError("--ready-timeout must be a positive number of seconds")
    if idle_timeout is not None and idle_timeout <= 0:
        raise DbglogError("--idle-timeout must be a positive number of seconds")
