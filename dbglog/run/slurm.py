"""Slurm as a first-class launcher: every repro run is a job allocation of its own.

``--slurm 'ARGS'`` (``run``, ``bisect git``, ``bisect toggles``), or a ``--launcher`` whose first
word is ``srun``, runs each step as ``srun --job-name=dbglog-<run id> ARGS CMD``. Without a
surrounding allocation srun asks the controller for a new one, so ``--jobs N`` is N allocations
at once. Locally there is only srun: the repro's processes live on the node, out of reach of the
runner's process-tree kill, so a :class:`Step` (handed to ``runner.run(launch=...)``) does the
same work through the controller:

* **timeout or interrupt**: the hang captures run on the step's node (``srun --overlap
  --jobid``; py-spy and gdb on the job's processes as ``scontrol listpids`` lists them there,
  ``--on-hang`` commands with ``{jobid}`` ``{node}`` ``{pid}``), then ``scancel`` and a wait until
  squeue no longer lists the job (``scancel --signal=KILL`` if it lingers);
* **the record**: ``slurm`` on the run (job id, node, state, start and end as Slurm recorded them);
* **not evidence**: a step that never ran -- allocation refused, still pending when the timeout
  expired (the timeout counts queue time), a node that could not enter the working directory
  (slurmstepd then runs the command in /tmp!) -- ends as outcome ``error``, which bisection skips.

Only the Slurm client commands are used (srun, squeue, scancel, scontrol); nothing is imported.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence

from dbglog.run import proctree
from dbglog.util.errors import DbglogError

JOB_PREFIX = "dbglog-"  # + run id: unique, so squeue/scancel find exactly this step's job
TAG_PREFIX = "dbglog:"  # --comment: the bisection session, to cancel a killed driver's jobs
CTL_TIMEOUT = 15.0  # one squeue/scancel call; the controller may be slow, never stuck forever
CANCEL_WAIT = 90.0  # scancel -> job gone; Slurm's own KillWait defaults to 30 s
NODE_PRESETS = ("py-spy", "gdb")  # captures that can run on the node through srun --overlap
PENDING = {"PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD", "SUSPENDED"}
#: our own job name and a step inside someone else's allocation would defeat finding/cancelling the step
REFUSED = {"-J": "dbglog names each step's job itself (dbglog-<run id>) to find and cancel it",
           "--job-name": "dbglog names each step's job itself (dbglog-<run id>) to find and cancel it",
           "--jobid": "each step is an allocation of its own; run dbglog outside `salloc` instead",
           "--overlap": "each step is an allocation of its own; --overlap is for steps inside one",
           "--pty": "the output is captured, not a terminal; drop --pty"}
_CHDIR = re.compile(r"slurmstepd(?:-\S+)?: error: couldn't chdir to [`']([^']*)'")
_SRUN_ERROR = re.compile(r"^srun: error: (?!\S+: tasks? [\d,-]+: )(.+)$", re.M)


# --- the launcher string ---------------------------------------------------------------------

def is_srun(launcher: str | None) -> bool:
    """Whether a ``--launcher`` prefix is srun (then the step gets the Slurm treatment)."""
    if not launcher:
        return False
    try:
        words = shlex.split(launcher)
    except ValueError:
        return False
    return bool(words) and os.path.basename(words[0]) == "srun"


def check_args(words: Sequence[str], what: str = "--slurm") -> None:
    for w in words:
        name = w.split("=", 1)[0]
        if name.startswith("-J") and not name.startswith("--"):
            name = "-J"  # -Jname
        if name in REFUSED:
            raise DbglogError(f"{what}: {name} is not allowed: {REFUSED[name]}")


def launcher(args: str) -> str:
    """``--slurm 'ARGS'`` as the launcher prefix stored in a session: ``srun ARGS``."""
    try:
        words = shlex.split(args or "")
    except ValueError as e:
        raise DbglogError(f"cannot parse --slurm {args!r}: {e}") from None
    if words and os.path.basename(words[0]) == "srun":
        words = words[1:]  # --slurm 'srun -N1' means the same as --slurm '-N1'
    check_args(words)
    return shlex.join(["srun", *words])


def check_launcher(prefix: str | None) -> None:
    """Refuse, before anything runs, a srun launcher that would defeat the Slurm mode."""
    if is_srun(prefix):
        check_args(shlex.split(prefix)[1:], "--launcher")


def scratch_from_config(config_path: Path) -> str | None:
    """``[slurm] scratch`` in .dbglog/config.toml: where bisection worktrees/copies go."""
    from dbglog.util import config

    value = config.table(config_path, "slurm").get("scratch")
    if value is not None and not isinstance(value, str):
        raise DbglogError(f"{config_path}: [slurm] scratch must be a path (a string)")
    return value


def scratch_dir(value: str | None) -> str | None:
    """A usable absolute scratch directory (created), or a one-line refusal."""
    if not value:
        return None
    p = Path(os.path.expandvars(os.path.expanduser(value))).resolve()
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise DbglogError(f"cannot use scratch directory {p}: {e.strerror or e}") from None
    if not os.access(p, os.W_OK | os.X_OK):
        raise DbglogError(f"cannot use scratch directory {p}: not writable")
    return str(p)


# --- talking to the controller -----------------------------------------------------------------

def _ctl(argv: list[str], timeout: float = CTL_TIMEOUT) -> tuple[int, str, str]:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        return 127, "", f"{argv[0]}: command not found"
    except subprocess.TimeoutExpired:
        return 124, "", f"{argv[0]} did not answer within {timeout:g}s"
    return p.returncode, p.stdout, p.stderr


_FIELDS = ("job_id", "state", "nodelist", "start", "end", "reason", "comment")


def jobs(name: str | None = None, *, all_states: bool = False) -> list[dict] | None:
    """squeue's view of the jobs named ``name`` (all of the user's when None); None: no answer."""
    argv = ["squeue", "-h", "-o", "%i|%T|%N|%S|%e|%r|%k"]
    if name:
        argv.append(f"--name={name}")
    if all_states:
        argv.append("--states=all")
    rc, out, _ = _ctl(argv)
    if rc != 0:
        return None
    rows = []
    for line in out.splitlines():
        parts = line.split("|")
        if len(parts) == len(_FIELDS):
            rows.append(dict(zip(_FIELDS, (p.strip() for p in parts))))
    return rows


def hostnames(nodelist: str) -> list[str]:
    """``node[1-3],gpu7`` -> the node names (scontrol expands Slurm's hostlist syntax)."""
    if not nodelist or nodelist in ("(null)", "None"):
        return []
    if "[" not in nodelist and "," not in nodelist:
        return [nodelist]
    rc, out, _ = _ctl(["scontrol", "show", "hostnames", nodelist])
    return out.split() if rc == 0 and out.split() else [nodelist]


def cancel_tagged(tag: str) -> list[str]:
    """Cancel the jobs a bisection session started (their ``--comment``): what a driver killed
    with -9 left queued or running on the cluster. Returns the cancelled job ids."""
    if not shutil.which("squeue"):
        return []
    rows = jobs() or []
    ids = [r["job_id"] for r in rows if r["comment"] == TAG_PREFIX + tag]
    if ids:
        _ctl(["scancel", *ids])
    return ids


def _time(s: str | None) -> str | None:
    return s if s and s not in ("N/A", "NONE", "Unknown", "None") else None


# --- one step ----------------------------------------------------------------------------------

class Step:
    """The runner's hook for one srun-launched run (see ``runner.run(launch=...)``).

    The runner calls ``argv`` before starting, ``on_hang`` at a timeout (instead of the local hang
    captures, before it kills srun), ``cancel`` when dbglog itself is interrupted, and ``settle``
    once srun has exited, before the record is written. One object serves one run at a time."""

    def __init__(self, tag: str | None = None, cancel_wait: float = CANCEL_WAIT):
        self.tag = tag
        self.cancel_wait = cancel_wait
        self._reset(None)

    def _reset(self, name: str | None) -> None:
        self.name = name
        self.job: dict | None = None
        self.pending: dict | None = None  # the job was still queued when the timeout expired
        self.cancel_info: dict | None = None

    # -- before the run ---------------------------------------------------------------------

    def argv(self, cmd: Sequence[str], run_id: str) -> list[str]:
        """srun's argv with our job name (and session tag) right after ``srun``."""
        self._reset(JOB_PREFIX + run_id)
        extra = [f"--job-name={self.name}"] + ([f"--comment={TAG_PREFIX}{self.tag}"] if self.tag else [])
        return [cmd[0], *extra, *cmd[1:]]

    # -- at a timeout ---------------------------------------------------------------------------

    def _find(self, *, all_states: bool, wait: float) -> dict | None:
        deadline = time.monotonic() + wait
        while True:
            rows = jobs(self.name, all_states=all_states)
            if rows:
                self.job = rows[-1]
                return self.job
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.1)

    def on_hang(self, run_dir: Path, presets: Sequence[str], commands: Sequence[str], limit: float) -> list[dict]:
        """Capture on the node where the step runs, then cancel the job step there."""
        caps: list[dict] = []
        try:
            job = self._find(all_states=False, wait=3.0)
            if job is None:
                caps.append({"name": "slurm", "status": "skipped", "path": None,
                             "note": f"no Slurm job named {self.name} is listed: nothing to capture"})
            elif job["state"] in PENDING:
                self.pending = dict(job)
                caps.append({"name": "slurm", "status": "skipped", "path": None,
                             "note": f"job {job['job_id']} was still {job['state']} ({job['reason']}): "
                                     "nothing ran yet"})
            else:
                caps.extend(self._node_captures(job, Path(run_dir), presets, commands, limit))
        finally:
            self.cancel()
        return caps

    def _node_captures(self, job: dict, run_dir: Path, presets: Sequence[str], commands: Sequence[str],
                       limit: float) -> list[dict]:
        hang_dir = run_dir / "hang"
        hang_dir.mkdir(parents=True, exist_ok=True)
        jid = job["job_id"]
        nodes = hostnames(job["nodelist"])[:4]
        out: list[dict] = []
        for p in presets:
            if p not in NODE_PRESETS and p != "nccl-fr":  # nccl-fr: files the ranks write, no process poke
                out.append({"name": p, "status": "skipped", "path": None,
                            "note": f"{p} is not run under Slurm (only {', '.join(NODE_PRESETS)} and --on-hang "
                                    "commands run on the node)"})
        jobs_ = []
        for node in nodes:
            if "py-spy" in presets:
                jobs_.append((f"py-spy@{node}", node, _pyspy_script(jid)))
            if "gdb" in presets:
                jobs_.append((f"gdb@{node}", node, _gdb_script(jid)))
            for i, c in enumerate(commands, 1):
                jobs_.append((f"on_hang:{i}@{node}", node, _command_script(jid, node, c, run_dir)))
        for name, node, script in jobs_:
            path = hang_dir / f"slurm.{name.replace('@', '.').replace(':', '_')}.txt"
            argv = ["srun", "--overlap", f"--jobid={jid}", f"--nodelist={node}", "--nodes=1", "--ntasks=1",
                    "--quiet", "sh", "-c", script]
            status, note = _run_limited(argv, path, limit)
            out.append({"name": name, "status": status, "path": str(path), "note": note, "node": node,
                        "cmd": argv})
        return out

    def cancel(self, result=None) -> None:
        """scancel the step's job and wait until squeue no longer lists it (never raises). With the
        run's ``result`` (dbglog interrupted), the job and its node go on the record as well."""
        if not self.name:
            return
        self._cancel()
        if result is not None:
            try:
                self._describe(result)
            except Exception as e:  # never lose the run's record over the cluster's answer
                result.notes.append(f"slurm: could not read the job's state: {e!r}")

    def _cancel(self) -> None:
        if self.cancel_info is not None:
            return
        t0 = time.monotonic()
        info: dict = {"cancelled": True, "gone_after_s": None, "left": []}
        self.cancel_info = info
        try:
            _ctl(["scancel", f"--name={self.name}"])
            left = self._wait_gone(self.cancel_wait)
            if left:
                _ctl(["scancel", "--signal=KILL", f"--name={self.name}"])
                left = self._wait_gone(10.0)
            info["left"] = [r["job_id"] for r in left or []]
            info["gone_after_s"] = None if left else round(time.monotonic() - t0, 2)
        except Exception as e:  # a cancel must never cost the run its record
            info["error"] = repr(e)

    def _wait_gone(self, wait: float) -> list[dict] | None:
        deadline = time.monotonic() + wait
        while True:
            rows = jobs(self.name)
            if rows == []:
                return []
            if time.monotonic() >= deadline:
                return rows  # still listed, or the controller does not answer (None)
            time.sleep(0.2)

    # -- after srun exited ----------------------------------------------------------------------

    def settle(self, result) -> None:
        """Leave no job behind; put the job, its node and what Slurm said on the run record."""
        if not self.name:
            return
        try:
            self._settle(result)
        except Exception as e:  # never lose the run's record over the cluster's answer
            result.notes.append(f"slurm: could not read the job's state: {e!r}")

    def _settle(self, result) -> None:
        active = jobs(self.name)
        # srun is gone; the job should end on its own (COMPLETING) -- give it a moment, then cancel.
        if active and self.cancel_info is None and self._wait_gone(5.0):
            self.cancel()
        job = self._describe(result)
        tail = _tail(result.paths.get("stderr")) + "\n" + _tail(result.paths.get("stdout"))
        why = None
        if self.pending is not None:
            why = (f"Slurm job {self.pending['job_id']} was still {self.pending['state']} "
                   f"({self.pending['reason']}) when the {result.timeout:g}s timeout expired: the repro never ran "
                   "(the timeout counts queue time)")
        elif (m := _CHDIR.search(tail)):
            why = (f"the node could not enter the working directory {m.group(1)} (slurmstepd ran the command "
                   "elsewhere): put it on a path the node sees (--scratch DIR)")
        elif job is None and result.outcome in ("fail", "crash") and (m := _SRUN_ERROR.search(tail)):
            why = f"srun could not start the step: {m.group(1).strip()}"
        if why:
            result.outcome = "error"
            result.error = why
            result.notes.append(why)

    def _describe(self, result) -> dict | None:
        """``result.slurm`` (and a note) from squeue's record of the job; the job, or None."""
        job = self._find(all_states=True, wait=1.0) or self.job
        nodes = hostnames(job["nodelist"]) if job else []
        rec = {"job_name": self.name, "job_id": job["job_id"] if job else None,
               "node": nodes[0] if nodes else None, "nodes": nodes,
               "state": job["state"] if job else None,
               "start": _time(job["start"]) if job else None, "end": _time(job["end"]) if job else None}
        if self.cancel_info is not None:
            rec.update(self.cancel_info)
        result.slurm = rec
        if job:
            result.notes.append(f"Slurm job {rec['job_id']} on {', '.join(nodes) or 'no node'}: {rec['state']}")
        if rec.get("left"):
            result.infra_tainted = True
            result.notes.append(f"Slurm job(s) {', '.join(rec['left'])} still listed after scancel")
        return job


def _tail(path: str | None, n: int = 1 << 16) -> str:
    if not path:
        return ""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - n))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


# --- what runs on the node ---------------------------------------------------------------------

def _pids_sh(jid: str) -> str:
    # The job's processes on this node, minus this capture step's own.
    return (f"scontrol listpids {shlex.quote(jid)} 2>/dev/null | "
            "awk -v me=\"$SLURM_STEP_ID\" 'NR > 1 && $3 != me {print $1}'")


def _tool(name: str) -> str:
    """Prefer the node's own tool, else the path it has here (a shared software tree)."""
    here = shutil.which(name) or str(Path(sys.executable).parent / name)
    return f'"$(command -v {name} || echo {shlex.quote(here)})"'


def _pyspy_script(jid: str) -> str:
    return (f"tool={_tool('py-spy')}; n=0; for p in $({_pids_sh(jid)}); do "
            "exe=$(readlink /proc/$p/exe 2>/dev/null); case \"$exe\" in *python*) n=$((n+1)); "
            "echo \"=== py-spy dump --pid $p ($exe) on $(hostname)\"; \"$tool\" dump --pid \"$p\" 2>&1;; esac; done; "
            "[ \"$n\" -gt 0 ] || echo 'no Python process in the job on this node'")


def _gdb_script(jid: str) -> str:
    return (f"tool={_tool('gdb')}; for p in $({_pids_sh(jid)} | head -4); do "
            "echo \"=== gdb -p $p ($(readlink /proc/$p/exe 2>/dev/null)) on $(hostname)\"; "
            "\"$tool\" -p \"$p\" -batch -nx -ex 'set pagination off' -ex 'thread apply all bt' 2>&1; done")


def _command_script(jid: str, node: str, command: str, run_dir: Path) -> str:
    """An --on-hang command on the node: {pid}/{pgid} = the job's first process there."""
    marker = "\x00PID\x00"
    words = [w.replace("{jobid}", jid).replace("{node}", node).replace("{run_dir}", str(run_dir))
             .replace("{pid}", marker).replace("{pgid}", marker) for w in shlex.split(command)]
    line = " ".join(shlex.quote(w).replace(marker, "'\"$P\"'") for w in words)
    return f"P=$({_pids_sh(jid)} | head -1); {line}"


def _run_limited(argv: list[str], out_path: Path, limit: float) -> tuple[str, str | None]:
    """Run a capture with a time limit, output to a file; srun and its children die at the limit."""
    try:
        with open(out_path, "wb") as f:
            p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 start_new_session=True)
            try:
                rc = p.wait(timeout=limit)
            except subprocess.TimeoutExpired:
                proctree.kill_group(p, grace=5.0)  # SIGTERM first: srun passes it on to the node
                p.wait()
                return "timeout", f"no answer within {limit:g}s"
    except OSError as e:
        return "error", f"cannot run {argv[0]}: {e.strerror or e}"
    return ("ok", None) if rc == 0 else ("error", f"exit {rc}")
