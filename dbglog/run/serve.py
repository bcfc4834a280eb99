"""Server-shaped repros: start a server supervised, wait until it is ready, run a client, stop it.

Most inference bugs reproduce as "start the server, wait until /v1/models answers, run a client,
stop the server and wait until VRAM is released". ``run_server_client`` does that loop as one
supervised run (the usual ``RunResult``, so ``dbglog run``, ``bisect git`` and ``bisect toggles``
steps treat it like any other run):

* The server runs in its own session with its own output files (``<run>/server/``), found at
  teardown by its own marker value, so the client's clean-up never mistakes it for a leftover.
* Readiness is an HTTP GET answering 2xx (a URL) or a command exiting 0, polled until
  ``ready_timeout``. A server that exits first is ``server_died``; one that never answers is
  ``server_not_ready`` (its stacks are captured: a server stuck at start is a hang of its own).
  Neither is the client's failure, and the client does not run.
* While the client runs, the server is its companion (``runner.run(companion=...)``): if it dies the
  run ends as ``server_died``; its output counts for ``--idle-timeout``; on a hang its workers'
  stacks are captured before the client's.
* Afterwards the server's whole tree is stopped (SIGTERM, grace, SIGKILL), the GPU tools are polled
  until none of our processes holds memory, and the run is classified from both outputs, the
  server's first (that is where the fault is).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
from dataclasses import replace
from pathlib import Path
from typing import Sequence

from dbglog.run import options, proctree, runner
from dbglog.run.options import RunOptions
from dbglog.util.errors import DbglogError

READY_POLL = (0.05, 0.5)  # first and longest pause between readiness checks: fast servers cost little


# The argument checks live with RunOptions (run/options.py), checked where the values come in.
parse_server_cmd, is_url, check_ready_arg = options.parse_server_cmd, options.is_url, options.check_ready_arg
check_args = options.check_server_args


def probe_ready(ready: str, cwd: str, env: dict, limit: float) -> tuple[bool, str]:
    """One readiness check: (ready, what it said)."""
    limit = max(0.2, limit)
    if is_url(ready):
        import urllib.error  # lazy: http.client and ssl cost ~15 ms of every `bisect git` start
        import urllib.request

        try:
            with urllib.request.urlopen(_with_credentials(ready), timeout=limit) as resp:  # noqa: S310 (user's own URL)
                return 200 <= resp.status < 300, f"HTTP {resp.status}"
        except urllib.error.HTTPError as e:
            return False, f"HTTP {e.code}"
        except (urllib.error.URLError, OSError, ValueError) as e:
            return False, str(getattr(e, "reason", e))[:200]
    try:
        p = subprocess.Popen(shlex.split(ready), cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError as e:
        return False, f"cannot run the readiness command: {e.strerror or e}"
    try:
        rc = p.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        proctree.kill_group(p)
        p.wait()
        return False, f"readiness command did not finish within {limit:g}s"
    return rc == 0, f"readiness command exited {rc}"


def _with_credentials(url: str):
    """``url``, or a request with its ``user:password@`` sent as basic authentication: urllib took the userinfo for
    part of the host ("Name or service not known"), so a server behind basic auth never became ready."""
    import base64
    import urllib.parse
    import urllib.request

    parts = urllib.parse.urlsplit(url)
    if parts.username is None:
        return url
    host = parts.hostname or ""
    netloc = (f"[{host}]" if ":" in host else host) + (f":{parts.port}" if parts.port else "")
    auth = base64.b64encode(f"{urllib.parse.unquote(parts.username)}:"
                            f"{urllib.parse.unquote(parts.password or '')}".encode()).decode()
    return urllib.request.Request(urllib.parse.urlunsplit(parts._replace(netloc=netloc)),
                                  headers={"Authorization": f"Basic {auth}"})


class Server:
    """The server side of a run: spawned, watched and stopped like a repro (runner's pieces)."""

    def __init__(self, cmd: list[str], run_dir: Path, cwd: Path, env: dict, output_cap: int | None, echo: bool,
                 marker: str):
        self.cmd = cmd
        self.dir = run_dir / "server"
        (self.dir / "api").mkdir(parents=True, exist_ok=True)  # its kernel-API logs (FLASHINFER_LOGDEST, ...)
        self.cwd = cwd
        self.env = dict(env)
        self.env[runner.RUN_ID_VAR] = marker  # its own value: the client's teardown leaves it alone
        self.marker = marker
        self.output_cap = output_cap
        self.echo = echo
        self.proc = None
        self.pump = None
        self.tree = None
        self.sinks: dict = {}
        self.rc = None
        self.died_at: float | None = None
        self.pids: set[int] = set()
        self.paths = {"server_stdout": str(self.dir / "stdout"), "server_stderr": str(self.dir / "stderr"),
                      "server_output": str(self.dir / "output")}

    def start(self, core_dumps: bool) -> str | None:
        """Spawn; returns an error line when the command cannot start."""
        from dbglog.run import preflight

        self.sinks = {"stdout": runner._CappedFile(self.dir / "stdout", self.output_cap),
                      "stderr": runner._CappedFile(self.dir / "stderr", self.output_cap),
                      "output": runner._CappedFile(self.dir / "output", self.output_cap)}
        try:
            with preflight.core_limit(core_dumps):
                self.proc = proctree.start(lambda: subprocess.Popen(
                    self.cmd, cwd=str(self.cwd), env=self.env, stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                    preexec_fn=proctree.die_with_parent()))
        except OSError as e:
            for s in self.sinks.values():
                s.close()
            self.sinks = {}
            if isinstance(e, FileNotFoundError):
                return f"server command not found: {self.cmd[0]}"
            return f"cannot start the server {self.cmd[0]}: {e.strerror or e}"
        self.pump = runner._Pump({"stdout": self.proc.stdout.fileno(), "stderr": self.proc.stderr.fileno()},
                                 {"stdout": self.sinks["stdout"], "stderr": self.sinks["stderr"]},
                                 self.sinks["output"], self.echo, self.output_cap)
        self.pump.start()
        self.tree = runner._Tree(self.proc.pid, self.marker, time.time())
        return None

    # -- the companion protocol of runner.run ---------------------------------------------------

    def alive(self) -> bool:
        if self.proc is None:
            return False
        if self.rc is None:
            self.rc = self.proc.poll()
            if self.rc is not None:
                self.died_at = time.monotonic()
        return self.rc is None

    def check(self):
        """Called by the client's run loop: the server exiting under the client ends the run."""
        if self.tree is not None:
            self.tree.snapshot()
        if self.alive():
            return None
        return "server_died", f"the server exited while the client ran ({self.exit_text()})"

    def last_output(self) -> float:
        return self.pump.last_output if self.pump is not None else 0.0

    def quiet_streams(self) -> list:
        return [("server", self.tree, self.pump)] if self.tree is not None else []

    def hang_captures(self, presets: Sequence[str], commands: Sequence[str], limit: float) -> list[dict]:
        if self.tree is None or not self.alive():
            return []
        caps = runner.hang_captures(self.tree, self.pump, self.dir, presets, commands, limit, env=self.env)
        return [c | {"name": f"server:{c['name']}"} for c in caps]

    # -- teardown -------------------------------------------------------------------------------

    def exit_text(self) -> str:
        code, sig = runner.normalize_exit(self.rc)
        if sig is not None:
            return f"killed by {runner.signal_name(sig)}"
        return f"exit status {code}"

    def stop(self, grace: float, kill_wait: float) -> list[dict]:
        if self.proc is None:
            return []
        self.tree.snapshot()
        self.tree.scan_marker()
        self.pids = set(self.tree.procs)
        was_alive = self.alive()
        survivors = runner.terminate_tree(self.tree, grace, kill_wait)
        try:
            self.proc.wait(timeout=kill_wait)
        except subprocess.TimeoutExpired:
            pass
        if was_alive:
            self.rc = self.proc.poll()
        self.pump.join(timeout=5.0)
        if self.pump.is_alive():
            self.pump.abandon.set()
            self.pump.join(timeout=1.0)
        for f in (self.proc.stdout, self.proc.stderr):
            try:
                f.close()
            except OSError:
                pass
        for s in self.sinks.values():
            s.close()
        return survivors


def run_server_client(client_cmd: Sequence[str], opts: RunOptions | None = None, *, run_dir: Path | str,
                      cwd: Path | str | None = None, env_overrides: dict | None = None, run_id: str | None = None,
                      signatures=None, escalation: dict | None = None, live_dir: Path | None = None,
                      **changes) -> runner.RunResult:
    """One server-shaped run (see the module docstring). ``opts.server`` is an argument list or a string
    split like a shell would (not run by one); ``opts.ready`` a URL or a command. Other arguments as
    ``runner.run``; ``timeout`` bounds the client, ``ready_timeout`` the wait for readiness."""
    opts = RunOptions.of(opts, **changes)
    if isinstance(client_cmd, (str, bytes)) or not client_cmd:
        raise DbglogError("the client command must be a non-empty argument list; put it after --")
    server_cmd = parse_server_cmd(opts.server)
    check_ready_arg(opts.ready)
    if opts.ready_timeout is None or opts.ready_timeout <= 0:
        raise DbglogError("--ready-timeout must be a positive number of seconds")
    sc = _ServerClient([os.fspath(c) for c in client_cmd], server_cmd, opts, run_dir=run_dir, cwd=cwd,
                       env_overrides=env_overrides, run_id=run_id, signatures=signatures, escalation=escalation)
    sc.live_dir = live_dir  # (the client's run is registered: a killed dbglog's leftovers are found by it)
    trapped = runner._trap_stop_signals()
    try:
        sc.drive()  # the server, its readiness, then the client beside it
    except runner.Interrupted as e:
        sc.interrupted(e)
        runner._untrap(trapped)
        raise
    except BaseException:
        sc.srv.stop(min(opts.grace, 1.0), opts.kill_wait)
        runner._untrap(trapped)
        raise
    runner._untrap(trapped)
    sc.blame()  # the server died under the client, or both went silent
    sc.stop_server()  # the tree kill, then the wait for the GPU's release
    return sc.finish()


class _ServerClient:
    """One server-shaped run, as the steps ``run_server_client`` takes in order; the state they share."""

    def __init__(self, client_cmd: list[str], server_cmd: list[str], opts: RunOptions, *, run_dir, cwd,
                 env_overrides, run_id, signatures, escalation):
        from dbglog.run import captures as capmod
        from dbglog.run import preflight

        self.client_cmd, self.opts, self.signatures, self.escalation = client_cmd, opts, signatures, escalation
        self.run_dir = Path(run_dir).resolve()
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.cwd = Path(cwd).resolve() if cwd is not None else Path.cwd()
        self.env_overrides = dict(env_overrides or {})
        self.run_id = run_id or runner.new_run_id()
        self.presets, self.commands = capmod.split(opts.captures, opts.on_hang)
        # Pre-flight once, before the server: afterwards our own server holds the GPU.
        self.pre = {"core_limit": None if opts.core_dumps else 0, **preflight.check()}
        self.srv = Server(server_cmd, self.run_dir, self.cwd,
                          runner.build_env(self.run_dir / "server", self.env_overrides, self.presets, escalation),
                          opts.output_cap_bytes, opts.echo, f"{self.run_id}-server")
        self.t0 = time.monotonic()
        self.info: dict = {"cmd": server_cmd, "ready": opts.ready, "ready_timeout": opts.ready_timeout,
                           "ready_s": None, "state": "not started", "exit": None, "pids": []}
        self.result: runner.RunResult | None = None
        self.live_dir: Path | None = None

    def _server_only(self, outcome: str, note: str) -> runner.RunResult:
        r = _server_only(self.client_cmd, self.run_dir, self.cwd, self.env_overrides, self.run_id,
                         self.opts.timeout, self.srv, outcome, note)
        r.options = self.opts.record()
        return r

    def drive(self) -> None:
        """Start the server, wait until it is ready, run the client with the server as its companion."""
        srv, opts = self.srv, self.opts
        if self.live_dir is not None:  # registered before the server starts: a kill -9 while it gets ready would
            # leave its workers running with nothing naming them (the client's run registers under the same id)
            proctree.live_enter(self.live_dir, self.run_id, None, self.run_dir, self.client_cmd, runner.RUN_ID_VAR)
        err = srv.start(opts.core_dumps) if self.cwd.is_dir() else f"working directory {self.cwd} does not exist"
        if err:
            self.result = self._server_only("error", err)
            self.result.error = err
            return
        state, note = _wait_ready(srv, opts.ready, opts.ready_timeout, str(self.cwd))
        self.info["ready_note"] = note
        if state == "ready":
            self.info["state"], self.info["ready_s"] = "ready", round(time.monotonic() - self.t0, 3)
            self.result = runner.run(self.client_cmd, replace(opts, preflight_check=False), run_dir=self.run_dir,
                                     cwd=self.cwd, env_overrides=self.env_overrides, signatures=self.signatures,
                                     run_id=self.run_id, companion=srv, escalation=self.escalation,
                                     live_dir=self.live_dir)
        else:
            self.result = self._server_only(state, note)
            if state == "server_not_ready" and srv.alive():  # stuck at start: its stacks say where
                self.result.captures = srv.hang_captures(self.presets, self.commands, opts.capture_timeout)

    def interrupted(self, e: runner.Interrupted) -> None:
        """Ctrl-C, SIGTERM, SIGHUP: the server stopped too, the record says so (``e`` is re-raised)."""
        survivors = self.srv.stop(min(self.opts.grace, 1.0), self.opts.kill_wait)
        r = e.result or self._server_only("error", f"interrupted by {runner.signal_name(e.signum)}")
        r.outcome = "error"
        r.error = r.error or f"interrupted by {runner.signal_name(e.signum)}: the run and its processes were stopped"
        r.survivors = [*r.survivors, *survivors]
        r.paths.update(self.srv.paths)
        e.result, e.results = r, [r]

    def blame(self) -> None:
        """A client's failure is the server's when the server died under it; both silent reads as a
        server hang (a guess, labelled so)."""
        info, result, srv = self.info, self.result, self.srv
        if info["state"] == "ready" and result.outcome in ("fail", "crash") and srv.proc is not None:
            try:  # a client that failed may have seen the server's crash a moment before it exited
                srv.proc.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                pass
        if info["state"] == "ready" and result.outcome not in ("server_died", "error") and not srv.alive():
            # It died under the client: the client's failure (a reset connection) is the consequence.
            result.notes.append(f"the server exited while the client ran ({srv.exit_text()}); the client ended "
                                f"{result.outcome}")
            result.outcome = "server_died"
        if result.outcome == "hang" and result.idle is not None and srv.alive():
            # Both silent, the server alive: read as a server hang. A guess, labelled so: a client stuck
            # on its own while a healthy server idles looks the same from outside.
            info["verdict"] = "server_hang"
            result.notes.append("server hang (guess): the server was alive but silent while the client waited on it")

    def stop_server(self) -> None:
        """The server's tree kill, its state on the record, then the wait until its GPU memory is released."""
        from dbglog.run import preflight

        info, result, srv, opts = self.info, self.result, self.srv, self.opts
        survivors = srv.stop(opts.grace, opts.kill_wait)
        info["pids"] = sorted(srv.pids)
        if srv.rc is not None and info["state"] != "not started":
            info["exit"] = srv.exit_text()
        if info["state"] == "ready":
            info["state"] = "died" if result.outcome == "server_died" else "stopped"
        elif srv.proc is not None:
            info["state"] = "died" if result.outcome == "server_died" else "not ready"
        if survivors:
            result.survivors = [*result.survivors, *[s | {"role": "server"} for s in survivors]]
            result.infra_tainted = True
            result.notes.append(f"{len(survivors)} server process(es) survived SIGKILL")
        info["gpu_release"] = preflight.wait_gpu_released(srv.pids, opts.gpu_release_timeout)
        if not info["gpu_release"]["released"]:
            result.infra_tainted = True
            result.notes.append(f"GPU memory still held by our process(es) {opts.gpu_release_timeout:g}s after the "
                                "stop: " + ", ".join(str(p["pid"]) for p in info["gpu_release"]["still"][:6]))

    def finish(self) -> runner.RunResult:
        """The server's part of the record (its dumps, evidence, signature), then result.json."""
        from dbglog.run import captures as capmod
        from dbglog.run import preflight

        info, result, srv, pre = self.info, self.result, self.srv, self.pre
        if self.escalation and srv.proc is not None:
            from dbglog.run import escalate

            info["kernel_api_level"] = escalate.describe(self.escalation, srv.dir, srv.env)  # the server's dumps
        result.server = info
        result.preflight = pre
        if pre.get("gpu_processes"):
            ev = preflight.taint_evidence(pre["gpu_processes"])
            result.evidence.insert(0, ev)
            result.notes.append(ev["summary"])
        result.paths.update(srv.paths)
        if srv.proc is not None:  # the presets' after-the-run steps on the server's folder (nccl-fr dumps)
            caps, found = capmod.after(self.presets, srv.dir, self.opts.capture_timeout, srv.env)
            result.captures.extend(c | {"name": f"server:{c['name']}"} for c in caps)
            result.evidence.extend(found)
        # (the server's own files: a server that prints its HF_TOKEN kept it in clear, where the client's were cleaned)
        runner.redact_files(result, [(f"server {k[7:]}", Path(srv.paths[k])) for k in
                                     ("server_stdout", "server_stderr", "server_output") if srv.paths.get(k)])
        _classify_server(result, srv, self.run_dir, self.signatures)
        result.duration_s = time.monotonic() - self.t0
        runner.write_record(result)
        return result


def _wait_ready(srv: Server, ready: str, ready_timeout: float, cwd: str) -> tuple[str, str]:
    deadline = time.monotonic() + ready_timeout
    note = "not checked"
    pause = READY_POLL[0]
    while True:
        _stop_if_asked()
        srv.tree.snapshot()
        if not srv.alive():
            return "server_died", f"the server exited before it was ready ({srv.exit_text()})"
        ok, note = probe_ready(ready, cwd, srv.env, min(5.0, max(0.2, deadline - time.monotonic())))
        if ok:
            return "ready", note
        if not srv.alive():
            return "server_died", f"the server exited before it was ready ({srv.exit_text()})"
        if time.monotonic() >= deadline:
            return "server_not_ready", f"not ready after {ready_timeout:g}s (last check: {note})"
        time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
        pause = min(pause * 1.5, READY_POLL[1])


def _stop_if_asked() -> None:
    """While the server gets ready no run is supervised yet: a server stopping (its client gone) or a cancelled
    request is seen here, as the client's watch loop sees it, instead of after the whole readiness wait (an MCP
    server whose client left stayed up for it, then recorded the server as 'not ready', a failure)."""
    asked = proctree.stop_asked(proctree.CALLER.get())
    if asked:
        raise runner.Interrupted(asked)


def _server_only(client_cmd, run_dir: Path, cwd: Path, env_overrides: dict, run_id: str, timeout, srv: Server,
                 outcome: str, note: str) -> runner.RunResult:
    """The record of a run whose client never started: the server's output is the run's output."""
    import datetime as _dt

    paths = {"stdout": srv.paths["server_stdout"], "stderr": srv.paths["server_stderr"],
             "output": srv.paths["server_output"], "result": str(run_dir / "result.json")}
    r = runner.RunResult(id=run_id, cmd=list(client_cmd), cwd=str(cwd), env_overrides=env_overrides,
                         started=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")
                         .replace("+00:00", "Z"), duration_s=0.0, exit_code=None, signal=None, outcome=outcome,
                         timeout=timeout, paths=paths)
    r.notes.append(note + "; the client did not run")
    return r


def _classify_server(result: runner.RunResult, srv: Server, run_dir: Path, signatures) -> None:
    """The server's log is where the fault is: its signature wins over the client's, its kernel-API
    logs and debugger dumps join the run's evidence."""
    from dbglog.diagnose import evidence as evmod
    from dbglog.diagnose import kernel_api

    scan = runner._scan_output(Path(srv.paths["server_output"]), signatures)  # (one pass, bounded memory)
    data = scan.data if scan is not None else b""  # the log, or the lines around its failure (a big one)
    if scan is not None:
        match = scan.match
        result.notes.extend(scan.warnings)
        if match is not None:
            if result.signature and result.signature != match.name:
                result.notes.append(f"client signature {result.signature} (the server's comes first)")
            result.signature = match.name
            result.key_lines = [{"line": n, "text": t[:500], "source": "server"} for n, t in match.key_lines]
            if match.outcome == "oom" and result.outcome in ("fail", "crash", "server_died"):
                result.notes.append("the server ran out of memory")
    api = srv.dir / "api"
    for f in sorted(api.glob("*.log")) if api.is_dir() else ():
        try:
            b = kernel_api.parse_kernel_api_file(f)
        except OSError:
            continue
        if b is not None:
            result.kernel_api.append(b.to_dict())
            result.evidence.append(evmod.kernel_api_evidence(b.to_dict()))
    try:
        files = [c["path"] for c in result.captures
                 if c.get("name", "").startswith("server:") and c.get("path") and os.path.isfile(c["path"])]
        if data or files:
            found = evmod.extract(data, files=files, cwd=str(run_dir),
                                  run_tools=os.environ.get("DBGLOG_EVIDENCE_TOOLS", "1") != "0")
            seen = {json.dumps(e, sort_keys=True, default=str) for e in result.evidence}
            result.evidence.extend(e for e in found if json.dumps(e, sort_keys=True, default=str) not in seen)
    except Exception as e:  # evidence must never cost the run its record
        result.notes.append(f"server evidence extraction failed: {e!r}")
    if result.evidence:
        try:
            (run_dir / "evidence.json").write_text(json.dumps(result.evidence, indent=1, default=str) + "\n")
            result.paths["evidence"] = str(run_dir / "evidence.json")
        except OSError:
            pass
