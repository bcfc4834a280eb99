"""A real single-node Slurm for the tests: munged + slurmctld + slurmd, all under one temp dir.

``SlurmCluster(root).start()`` writes a munge key and a ``slurm.conf`` (this host as the only node,
``proctrack/linuxproc``, ``task/none``, ``select/cons_tres``, state and spool under ``root``, free
ports, its own munge socket), starts the three daemons and waits until ``sinfo`` shows the node
idle. ``stop()`` signals them by their own pid files -- never by name: another cluster, or the
machine's own, may be running. The daemons run in the foreground as children of this process, in
sessions of their own: nothing is re-parented anywhere, and they are reaped when stopped. Anything missing (not root, binaries not installed, a daemon that
will not come up) raises ``Unavailable`` with the reason, for ``pytest.skip``.

Install on Debian/Ubuntu: ``apt-get install -y --no-install-recommends slurm-wlm munge``.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

DAEMONS = ("munged", "mungekey", "slurmctld", "slurmd", "srun", "squeue", "sinfo", "scancel", "scontrol")


class Unavailable(Exception):
    """Why a real Slurm cannot be had here (the tests skip with this text)."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _which(name: str) -> str | None:
    return shutil.which(name) or next((p for p in (f"/usr/sbin/{name}", f"/sbin/{name}") if os.access(p, os.X_OK)),
                                      None)


class SlurmCluster:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.conf = self.root / "slurm.conf"
        self.node = socket.gethostname().split(".")[0]
        self.env = {"SLURM_CONF": str(self.conf)}
        self.pidfiles = {"slurmd": self.root / "slurmd.pid", "slurmctld": self.root / "slurmctld.pid",
                         "munged": self.root / "munge" / "munged.pid"}
        self.tools: dict[str, str] = {}
        self.procs: dict[str, subprocess.Popen] = {}

    # -- start -----------------------------------------------------------------------------

    def check(self) -> None:
        if os.geteuid() != 0:
            raise Unavailable("a real slurmd needs root (this runs as uid %d)" % os.geteuid())
        missing = [d for d in DAEMONS if not _which(d)]
        if missing:
            raise Unavailable(f"Slurm/munge not installed ({', '.join(missing)} missing): "
                              "apt-get install -y slurm-wlm munge")
        self.tools = {d: _which(d) for d in DAEMONS}

    def _cpus(self) -> int:
        out = subprocess.run([self.tools["slurmd"], "-C"], capture_output=True, text=True, timeout=30).stdout
        m = re.search(r"\bCPUs=(\d+)", out)
        return int(m.group(1)) if m else 1

    def write_conf(self) -> None:
        r = self.root
        for d in ("state", "spool", "munge", "log"):
            (r / d).mkdir(parents=True, exist_ok=True)
        os.chmod(r / "munge", 0o700)
        self.conf.write_text(f"""\
ClusterName=dbglogtest
SlurmctldHost={self.node}
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={r}/munge/munge.sock
CredType=cred/munge
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
SlurmctldPidFile={self.pidfiles['slurmctld']}
SlurmdPidFile={self.pidfiles['slurmd']}
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
KillWait=2
InactiveLimit=0
MinJobAge=300
NodeName={self.node} CPUs={self._cpus()} State=UNKNOWN
# FORCE: two 1-CPU allocations fit even on a 1-CPU machine (--jobs 2 must run two at once)
PartitionName=debug Nodes={self.node} Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
""")

    def start(self, timeout: float = 45.0) -> "SlurmCluster":
        self.check()
        self.write_conf()
        m = self.root / "munge"
        p = subprocess.run([self.tools["mungekey"], "-c", "-k", str(m / "munge.key")], capture_output=True,
                           text=True, timeout=60)
        if p.returncode != 0:
            raise Unavailable(f"mungekey failed (exit {p.returncode}): {p.stderr.strip()[-300:]}")
        self._daemon([self.tools["munged"], "-F", "--force", f"--socket={m}/munge.sock", f"--key-file={m}/munge.key",
                      f"--log-file={m}/munged.log", f"--pid-file={self.pidfiles['munged']}",
                      f"--seed-file={m}/munged.seed"], "munged")
        env = os.environ | self.env
        self._daemon([self.tools["slurmctld"], "-D", "-c", "-f", str(self.conf)], "slurmctld", env)
        self._daemon([self.tools["slurmd"], "-D", "-f", str(self.conf)], "slurmd", env)
        deadline = time.monotonic() + timeout
        state = ""
        while time.monotonic() < deadline:
            p = subprocess.run([self.tools["sinfo"], "-h", "-o", "%T"], capture_output=True, text=True, env=env,
                               timeout=30)
            state = p.stdout.strip() or p.stderr.strip()
            if state == "idle":
                return self
            time.sleep(0.3)
        logs = "; ".join(f"{n}: {self._tail(self.root / 'log' / f'{n}.log')}" for n in ("slurmctld", "slurmd"))
        self.stop()
        raise Unavailable(f"the node did not become idle within {timeout:g}s (sinfo: {state!r}); {logs}")

    def _daemon(self, argv: list[str], name: str, env: dict | None = None) -> None:
        """Start a daemon in the foreground and wait for its pid file."""
        out = self.root / "log" / f"{name}.out"
        with open(out, "wb") as f:
            p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                 start_new_session=True)
        self.procs[name] = p
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and p.poll() is None and not self.pidfiles[name].exists():
            time.sleep(0.05)
        if p.poll() is not None or not self.pidfiles[name].exists():
            self.stop()
            raise Unavailable(f"{name} did not start (exit {p.poll()}): {self._tail(out)}")

    @staticmethod
    def _tail(path: Path) -> str:
        try:
            return " | ".join(path.read_text(errors="replace").splitlines()[-3:])
        except OSError:
            return "(no log)"

    # -- use -------------------------------------------------------------------------------

    def ctl(self, *argv: str) -> str:
        return subprocess.run(list(argv), capture_output=True, text=True, env=os.environ | self.env,
                              timeout=30).stdout

    def active_jobs(self) -> list[str]:
        """squeue's lines for jobs that are pending, running or completing (not finished ones)."""
        return [ln for ln in self.ctl("squeue", "-h", "-o", "%i %j %T").splitlines() if ln.strip()]

    # -- stop ------------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop the daemons by their pid files (slurmd first: it holds the steps)."""
        for name in ("slurmd", "slurmctld", "munged"):
            pf = self.pidfiles[name]
            try:
                pid = int(pf.read_text().split()[0])
            except (OSError, ValueError, IndexError):
                continue
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and _alive(pid):
                time.sleep(0.1)
            if _alive(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        for p in self.procs.values():  # reap our children (a daemon that died early has no pid file)
            if p.poll() is None:
                p.kill()
            p.wait(timeout=10)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False
