"""What a supervised run's attempt says was done (issue 18, "the full story in every attempt").

``dbglog run --attempt`` used to record only the bare command, so four different attempts (other
``--env`` values, another uncommitted change under test) all read ``python3 serve.py``. The
attempt's "what was done" now holds:

* the command as it ran, with its ``--env`` overrides and ``--unset`` names in shell form
  (``env -u CUDA_VISIBLE_DEVICES NCCL_P2P_DISABLE=1 python3 serve.py``), secrets redacted;
* the working tree it ran on: the commit (and branch), a short stat of the uncommitted changes
  against it with the files named, a digest of that diff (two different diffs of the same size
  still read differently), and the untracked file count; the full diff (redacted, capped at
  ``DIFF_CAP`` bytes) is kept in the run folder as ``worktree.diff``.

Outside a git work tree only the command is recorded. Git gets ``GIT_TIMEOUT`` seconds per call.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

from dbglog.util import redact
from dbglog.util.fsutil import sha256_hex

DIFF_CAP = 1 << 20  # bytes of the uncommitted diff kept in the run folder
GIT_TIMEOUT = 10.0


def command_text(cmd: list[str], env: dict | None = None) -> str:
    """``cmd`` with its environment changes in front, as one shell line (secrets redacted).
    ``env``: NAME -> value, or None for a variable the run unset."""
    env = env or {}
    unset = sorted(k for k, v in env.items() if v is None)
    sets = [f"{k}={shlex.quote(str(v))}" for k, v in env.items() if v is not None]
    for k, v in env.items():  # the value of HF_TOKEN=... is redacted wherever it shows up
        if v is not None and redact.is_secret_name(k):
            redact.remember(str(v))
    words = (["env"] + [f"-u {shlex.quote(k)}" for k in unset] if unset else []) + sets \
        + [shlex.quote(c) for c in redact.clean_argv(list(cmd))]
    return redact.clean(" ".join(words))


def rerun_text(cmd: list[str], env: dict | None, server: dict) -> str:
    """A server-shaped run as the ``dbglog run`` line that runs it again (secrets redacted)."""
    words = ["dbglog", "run", "--server", server["server"], "--ready", server.get("ready") or ""]
    if server.get("ready_timeout") not in (None, 120.0):  # (120 s: the default)
        words += ["--ready-timeout", f"{server['ready_timeout']:g}"]
    for k, v in (env or {}).items():
        if v is not None and redact.is_secret_name(k):
            redact.remember(str(v))
        words += ["--unset", k] if v is None else ["--env", f"{k}={v}"]
    return redact.clean(" ".join([*(shlex.quote(w) for w in words), "--",
                                  *(shlex.quote(c) for c in redact.clean_argv(list(cmd)))]))


def _git(cwd, *args, limit: int | None = None) -> tuple[int, bytes]:
    """(exit status, stdout) of a git command; reading stops past ``limit`` bytes."""
    try:
        p = subprocess.Popen(["git", "-C", str(cwd), *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             stdin=subprocess.DEVNULL, env=dict(os.environ, GIT_OPTIONAL_LOCKS="0", LC_ALL="C"))
    except OSError:
        return 127, b""
    try:
        if limit is None:
            out, _ = p.communicate(timeout=GIT_TIMEOUT)
            return p.returncode, out
        out = p.stdout.read(limit + 1)
        p.kill()  # the rest is not kept (a diff of build products can be huge)
        p.communicate(timeout=GIT_TIMEOUT)
        return 0, out
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        return 124, b""


def worktree_state(cwd, run_dir: Path | None = None, root: Path | None = None) -> dict | None:
    """The git state a run ran on (None outside a work tree): commit, branch, ``shortstat``,
    ``files`` (changed, tracked), ``untracked`` count, ``diff_sha`` and ``diff_path`` (saved in
    ``run_dir`` when there is a diff). dbglog's own ``logs/`` and ``.dbglog/`` under the workspace
    ``root`` are left out: recording the attempt changes them, not the code under test."""
    rc, top = _git(cwd, "rev-parse", "--show-toplevel")
    if rc != 0:
        return None
    spec = ["--", "."]
    if root is not None:
        rel = os.path.relpath(root, top.decode().strip())
        if not rel.startswith(".."):
            pre = "" if rel == "." else rel.rstrip("/") + "/"
            spec = ["--", ":(top)", f":(top,exclude){pre}logs", f":(top,exclude){pre}.dbglog"]
    rc, head = _git(cwd, "rev-parse", "--verify", "-q", "HEAD")
    commit = head.decode().strip() if rc == 0 else None
    rc, br = _git(cwd, "symbolic-ref", "-q", "--short", "HEAD")
    state = {"commit": commit, "branch": br.decode().strip() or None if rc == 0 else None,
             "shortstat": "", "files": [], "untracked": 0, "diff_sha": None, "diff_path": None}
    base = "HEAD" if commit else "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # the empty tree: no commit yet
    rc, stat = _git(cwd, "diff", base, "--shortstat", *spec)
    state["shortstat"] = stat.decode("utf-8", "replace").strip() if rc == 0 else ""
    rc, names = _git(cwd, "diff", base, "--name-only", "-z", *spec)
    if rc == 0:
        state["files"] = [redact.clean(n) for n in names.decode("utf-8", "replace").split("\0") if n]
    rc, st = _git(cwd, "status", "--porcelain", "-z", "--untracked-files=normal", *spec)
    if rc == 0:
        state["untracked"] = sum(1 for e in st.decode("utf-8", "replace").split("\0") if e.startswith("?? "))
    if state["shortstat"]:
        _, diff = _git(cwd, "diff", base, "--no-color", "--no-ext-diff", *spec, limit=DIFF_CAP)
        state["diff_sha"] = sha256_hex(diff[:DIFF_CAP])[:12]
        if run_dir is not None:
            text = redact.clean(diff[:DIFF_CAP].decode("utf-8", "replace"))
            if len(diff) > DIFF_CAP:
                text += f"\n[dbglog: the diff was cut at {DIFF_CAP} bytes]\n"
            try:
                run_dir.mkdir(parents=True, exist_ok=True)
                path = run_dir / "worktree.diff"
                path.write_text(text, encoding="utf-8")
                state["diff_path"] = str(path)
            except OSError:
                pass  # the story still names the diff by its digest
    return state


def worktree_text(state: dict | None, root: Path | None = None) -> str:
    """One line for the attempt: ``working tree: <commit> (<branch>), clean`` or with the changes."""
    if state is None:
        return ""
    where = (state["commit"] or "no commit yet")[:12] + (f" ({state['branch']})" if state.get("branch") else "")
    if not state["shortstat"]:
        changes = "no uncommitted changes"
    else:
        files = state["files"]
        named = ", ".join(files[:6]) + (f" and {len(files) - 6} more" if len(files) > 6 else "")
        changes = f"uncommitted: {state['shortstat']} ({named}; diff {state['diff_sha']}"
        if state.get("diff_path"):
            p = Path(state["diff_path"])
            if root is not None:
                try:
                    p = p.relative_to(root)
                except ValueError:
                    pass
            changes += f", saved in {p}"
        changes += ")"
    if state.get("untracked"):
        changes += f"; {state['untracked']} untracked file(s)"
    return redact.clean(f"working tree: {where}, {changes}")


def did_text(cmd: list[str], env: dict | None, cwd, run_dir: Path | None = None, root: Path | None = None,
             server: dict | None = None) -> str:
    """The attempt's "what was done" for a supervised run (see the module docstring). ``server``:
    a server-shaped repro's ``server``, ``ready`` (and ``ready_timeout``): the line is then the whole
    ``dbglog run`` command, since the client alone would run against no server."""
    lines = [rerun_text(cmd, env, server) if server and server.get("server") else command_text(cmd, env)]
    tree = worktree_text(worktree_state(cwd or os.getcwd(), run_dir, root), root)
    if tree:
        lines.append(tree)
    return "\n".join(lines)
