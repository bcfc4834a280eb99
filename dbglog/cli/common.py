"""What every command module shares: output (emit, warn, safe_text), the workspace opener, the
common options (--json, -i, the bisection step options), parameter types, and the checks made
before anything runs (a misspelled option before --, a misspelled failure name, sizes, NAME=VALUE).

Imports click and the services' light entry points (ops, errors); never a command module."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import threading
import time

import click

from dbglog import ops
from dbglog.util.errors import DbglogError


class _LazyHelpOption(click.Option):
    """An option whose help text is built only when help is shown: the capture registry
    (dbglog/run/captures.py) is then not imported by every start-up."""

    def __init__(self, *args, help_fn=None, **kwargs):
        super().__init__(*args, **kwargs)
        self._help_fn = help_fn

    def get_help_record(self, ctx):
        if self._help_fn is not None:  # built each time: a registry may have grown (tests register kinds)
            self.help = self._help_fn()
        return super().get_help_record(ctx)


def _capture_help(prefix: str | None = None):
    def build() -> str:
        from dbglog.run import captures

        if prefix is None:
            return captures.help_text()
        return prefix + ", ".join(captures.names()) + " (repeatable)."
    return build


def json_option(f):
    return click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")(f)


class _Seconds(click.ParamType):
    """A finite, non-negative number of seconds (``nan``, ``inf``, ``-1`` are refused, not run)."""

    name = "seconds"

    def __init__(self, allow_zero: bool = False):
        self.allow_zero = allow_zero

    def convert(self, value, param, ctx):
        if isinstance(value, float):
            v = value
        else:
            try:
                v = float(value)
            except (TypeError, ValueError):
                self.fail(f"{value!r} is not a number", param, ctx)
        if v != v or v in (float("inf"), float("-inf")) or v < 0 or (v == 0 and not self.allow_zero):
            self.fail(f"{value!r} must be a finite number {'>= 0' if self.allow_zero else '> 0'}", param, ctx)
        return v


class _Refused(click.BadParameter):
    """A value refused in dbglog's own words, which name the option themselves (the texts the checks
    had before they became types; no "Invalid value for" in front)."""

    def format_message(self) -> str:
        return self.message


def _opt(param) -> str:
    if isinstance(param, click.Option):
        return param.opts[0]
    return param.human_readable_name if param is not None else "the value"  # an argument: NUMBER


class _Count(click.ParamType):
    """A whole number >= 1 that SQLite and every loop can hold: --repeat, --jobs, budgets, attempt
    numbers. (One check instead of a `< 1` test in every command that repeats or runs in parallel.)"""

    name = "integer"
    MAX = 2**31 - 1

    def convert(self, value, param, ctx):
        if isinstance(value, bool):  # (True is an int to Python, not a count)
            self.fail(f"{value!r} is not a valid integer.", param, ctx)
        try:
            v = value if isinstance(value, int) else int(str(value).strip())
        except ValueError:
            self.fail(f"{value!r} is not a valid integer.", param, ctx)
        if v < 1:
            raise _Refused(f"{_opt(param)} must be at least 1, got {v}", ctx=ctx, param=param)
        if v > self.MAX:
            raise _Refused(f"{_opt(param)} must be at most {self.MAX}, got {v}", ctx=ctx, param=param)
        return v


class _Size(click.ParamType):
    """A byte size: ``64M``, ``512K``, ``2G``, bytes; ``0``/``none``/``unlimited`` = no cap (None).
    Negative, inf, nan, words and an empty value are refused."""

    name = "size"

    def __init__(self, no_cap=None):
        self.no_cap = no_cap  # what "no cap" converts to (0 where None means "not given")

    def convert(self, value, param, ctx):
        if value is None or isinstance(value, int):
            return value  # (already converted: a default given in bytes, or no cap)
        from dbglog.kb.records import parse_size as size_of

        try:
            if not str(value).strip():  # `--output-cap ""` is a slip, not "no cap" (say 0 or none for that)
                raise DbglogError("empty size: give e.g. 64M, 512K, or 0 / none for no cap")
            n = size_of(value)
            return self.no_cap if n is None else n
        except DbglogError as e:
            raise _Refused(f"{_opt(param)}: {e}", ctx=ctx, param=param) from None


class _EnvPair(click.ParamType):
    """``NAME=VALUE`` for a run's environment (``NAME=`` sets it empty) -> (name, value); the name is
    checked by the run's own rule (ops.check_env)."""

    name = "name=value"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        name, eq, val = str(value).partition("=")
        if not eq or not name:
            raise _Refused(f"bad {_opt(param)} {value!r}: use NAME=VALUE (NAME= sets empty; use --unset to remove)",
                           ctx=ctx, param=param)
        try:
            ops.check_env({name: val})
        except DbglogError as e:
            raise _Refused(str(e), ctx=ctx, param=param) from None
        return name, val


class _VarName(click.ParamType):
    """A variable name to remove from a run's environment (``--unset A=B`` is refused, not a no-op)."""

    name = "name"

    def convert(self, value, param, ctx):
        try:
            ops.check_env({value: None})
        except DbglogError as e:
            raise _Refused(str(e), ctx=ctx, param=param) from None
        return value


class _LineRange(click.ParamType):
    """``A-B``: lines A to B of a document, 1-based, both included (``A`` alone: that line; ``A-``: to the end)."""

    name = "A-B"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        m = re.fullmatch(r"\s*(\d{1,9})\s*(?:(-)\s*(\d{1,9})?)?\s*", str(value))
        if not m:
            raise _Refused(f"{_opt(param)} takes lines as A-B (1-based, e.g. 120-480), got {value!r}", ctx=ctx,
                           param=param)
        a = int(m.group(1))
        b = int(m.group(3)) if m.group(3) else (None if m.group(2) else a)
        if a < 1 or b is not None and b < a:
            raise _Refused(f"{_opt(param)} takes lines A-B with 1 <= A <= B, got {value!r}", ctx=ctx, param=param)
        return (a, b)


SECONDS = _Seconds()  # --timeout, --idle-timeout, --ready-timeout
GRACE = _Seconds(allow_zero=True)  # --grace, --older-than
INT = click.IntRange(-(2**31), 2**31 - 1)  # what SQLite and every loop can hold
POSITION = click.IntRange(1, 2**31 - 1)  # a place in a numbered list: 1 is the first
COUNT = _Count()  # --repeat, --jobs, --limit, budgets, attempt numbers
SIZE = _Size()  # --output-cap (None: no cap)
LIMIT_SIZE = _Size(no_cap=0)  # runs prune --max-size (0: no cap, None: not given)
ENV_PAIR = _EnvPair()  # run --env
VAR_NAME = _VarName()  # run --unset
LINES = _LineRange()  # import --units --lines


def option_group(*options):
    """Several options as one decorator, in the order given (the order --help lists them): an option
    group shared by commands, the sqlite-utils way."""
    def decorate(f):
        for opt in reversed(options):
            f = opt(f)
        return f
    return decorate


def timeout_options(timeout_help: str):
    """--timeout (a hang after S seconds) and --grace (SIGTERM to SIGKILL): every supervised run."""
    return option_group(
        click.option("--timeout", type=SECONDS, help=timeout_help),
        click.option("--grace", type=GRACE, default=5.0, show_default=True,
                     help="Seconds between SIGTERM and SIGKILL."))


def server_options(server_help: str, ready_help: str):
    """A server-shaped repro (dbglog/run/serve.py): `run` and every bisection step."""
    return option_group(
        click.option("--server", metavar="CMD", help=server_help),
        click.option("--ready", metavar="URL|CMD", help=ready_help),
        click.option("--ready-timeout", "ready_timeout", type=SECONDS, default=120.0, show_default=True,
                     help="With --server: seconds to wait for readiness (then server_not_ready)."))


def slurm_option(who: str):
    """``--slurm ARGS``: WHO ("The run", "Each step") gets its own allocation (dbglog/run/slurm.py)."""
    return click.option("--slurm", "slurm_args", metavar="ARGS", help=f"{who} its own Slurm allocation: srun ARGS "
                        "CMD (timeouts scancel it; captures run on its node). ARGS may be ''.")


def cluster_options(unit: str, launcher_metavar: str, launcher_help: str):
    """Where a bisection's steps run: a launcher prefix, a Slurm allocation each, a scratch directory
    the nodes see (`bisect git` says step, `bisect toggles` trial)."""
    return option_group(
        click.option("--launcher", metavar=launcher_metavar, help=launcher_help),
        slurm_option(f"Each {unit}"),
        click.option("--scratch", metavar="DIR", help="Worktrees/copies under DIR, a path the cluster nodes see "
                     "(default: [slurm] scratch in config.toml with an srun launcher, else .dbglog/bisect)."))


# How each bisection step runs, shared by `bisect git` and `bisect toggles`: hang captures, server-shaped
# steps, the idle hang, the Triton cache, escalation.
step_options = option_group(
    click.option("--capture", "captures", multiple=True, metavar="PRESET", cls=_LazyHelpOption,
                 help_fn=_capture_help("Hang capture preset, on every step: ")),
    click.option("--on-hang", "on_hang", multiple=True, metavar="CMD", help="Run on hang before the kill (repeatable)."),
    server_options("Each step: start this server (in the step's worktree or copy), wait for --ready, then run the "
                   "command after -- as its client.", "With --server: ready when the URL answers 2xx or CMD exits 0."),
    click.option("--idle-timeout", "idle_timeout", type=SECONDS, help="Alive but silent for S seconds = hang."),
    click.option("--shared-cache", "shared_cache", is_flag=True, help="Keep the Triton cache across steps "
                 "(default: a fresh TRITON_CACHE_DIR per step)."),
    click.option("--escalate", is_flag=True, help="With --repeat: raise the kernel-API log level (1, 3, 10) "
                 "across a step's failing repeats."))

def inv_option(f):
    return click.option("-i", "--investigation", "inv_ref", metavar="ID",
                        help="Investigation (id, id prefix, title words or the id's tail); default: the current one.")(f)


# The scope of a search: `search` and `tried`.
scope_options = option_group(
    click.option("--tag", "tags", multiple=True, help="Only investigations with this tag (repeatable)."), inv_option)


_CTRL = None


def safe_text(s: str) -> str:
    """Text for the terminal: control characters and escape sequences from documents shown inert."""
    global _CTRL
    if _CTRL is None:
        import re

        _CTRL = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|[\x00-\x08\x0b-\x1f\x7f-\x9f]")
    return _CTRL.sub(lambda m: repr(m.group(0))[1:-1], s or "")


def emit(as_json: bool, data, human=None) -> None:
    if as_json:
        from dbglog.util.redact import json_text

        click.echo(json_text(json.dumps(data, indent=2, ensure_ascii=False)))
    elif human is not None:
        human()


def warn(message: str) -> None:
    click.echo(f"dbglog: warning: {message}", err=True)


def open_records(create: bool = False, sync: bool = True):
    return ops.open_records(create=create, sync=sync, warn=warn)


text_arg = ops.check_text  # reject text that is not valid Unicode (undecodable bytes from the shell)


def stdin_is_tty() -> bool:
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


def reject_unknown_option(cmd) -> None:
    """The commands that take a repro after ``--`` let unknown options through (they belong to the
    repro), so a misspelled one of ours (``dbglog run --timout 5 -- python repro.py``) would become
    the command. A command cannot start with an option: refuse it, naming the closest one of ours."""
    if not cmd or cmd[0] == "--" or not cmd[0].startswith("-") or cmd[0] == "-":
        return
    import difflib

    word = cmd[0].split("=", 1)[0]
    ctx = click.get_current_context()
    names = [o for p in ctx.command.get_params(ctx) for o in (*p.opts, *p.secondary_opts) if o.startswith("-")]
    names += ["--help"]
    close = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    raise DbglogError(f"no such option: {word}" + (f" (did you mean {close[0]}?)" if close else "")
                      + f"; the command goes after --, e.g. {ctx.command_path} [OPTIONS] -- CMD ARGS")


def check_failure_name(value, option: str, regex: bool = False) -> None:
    """A misspelled --expect/--match (``segfualt``) would quietly make every bad run "a different
    failure" (a skip): refuse it, with a did-you-mean, before anything runs or is recorded."""
    if value is None:
        return
    from dbglog.diagnose import signatures
    from dbglog.run import runner

    signatures.check_target(value, signatures.all_signatures(_config_path()), runner.OUTCOMES, option=option,
                            regex=regex)


def _config_path():
    from dbglog.util import workspace

    ws = workspace.find()
    return ws.config_path if ws.exists else None


# --- progress of the work after a repro ends ---------------------------------------------------
# A progress line for the work after a repro ends (issue 30): reading, redacting and classifying its
# output, recording it. Nothing is shown for the first second (most runs finish their post-processing
# well within it); after that, a rich status line on a terminal (stderr), or with --json one JSON event
# per phase on stderr: ``{"event": "progress", "phase": "...", "elapsed_s": 1.2}`` (stdout stays the
# one JSON result). ``DBGLOG_PROGRESS_AFTER`` (seconds) changes the one-second wait.



class PostProgress:
    def __init__(self, as_json: bool, after: float | None = None):
        self.as_json = as_json
        try:
            self.after = float(os.environ.get("DBGLOG_PROGRESS_AFTER", "")) if after is None else after
        except ValueError:
            self.after = 1.0
        self.lock = threading.Lock()
        self.phase: str | None = None
        self.t0: float | None = None
        self.shown = False
        self.status = None
        self.timer: threading.Timer | None = None
        self.tty = not as_json and _isatty(sys.stderr)

    def __call__(self, words: str | None) -> None:
        with self.lock:
            if words is None:
                self._end()
                return
            if self.t0 is None:
                self.t0 = time.monotonic()
                self.timer = threading.Timer(self.after, self._due)
                self.timer.daemon = True
                self.timer.start()
            self.phase = words
            if self.shown:
                self._show()

    def _due(self) -> None:
        with self.lock:
            if self.phase is not None and not self.shown:
                self.shown = True
                self._show()

    def _show(self) -> None:
        elapsed = round(time.monotonic() - (self.t0 or time.monotonic()), 1)
        try:
            if self.as_json:
                sys.stderr.write(json.dumps({"event": "progress", "phase": self.phase, "elapsed_s": elapsed}) + "\n")
                sys.stderr.flush()
            elif self.tty:
                if self.status is None:
                    from rich.console import Console

                    self.status = Console(stderr=True).status(f"dbglog: {self.phase}")
                    self.status.start()
                else:
                    self.status.update(f"dbglog: {self.phase}")
        except (OSError, ValueError):  # (stderr gone: the result still counts)
            self.tty = self.as_json = False

    def _end(self) -> None:
        self.phase = None
        if self.timer is not None:
            self.timer.cancel()
        if self.status is not None:
            with contextlib.suppress(Exception):
                self.status.stop()
            self.status = None


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


@contextlib.contextmanager
def post_progress(as_json: bool):
    """Show the post-processing's progress for the command inside (see the module docstring)."""
    from dbglog.run import runner

    reporter = PostProgress(as_json)
    token = runner.POST_PROGRESS.set(reporter)
    try:
        yield reporter
    finally:
        reporter(None)
        runner.POST_PROGRESS.reset(token)
