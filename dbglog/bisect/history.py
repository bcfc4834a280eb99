"""History bisection: ``dbglog bisect git --good REV --bad REV -- CMD...``.

The session driver for ``kind = "git"`` (its interface and registration: ``drivers.py``): git
plumbing, worktrees, endpoint verification, the step loop, the report.

How a bisection runs
--------------------
1. ``start`` resolves the revisions (``git rev-parse --verify REV^{commit}``), refuses bad input
   (same commit, swapped ends, no common history) and creates a session whose *spec* holds
   everything needed to rebuild the search. A good end that is not an ancestor of the bad end is
   replaced by its merge base(s) with it, which are then verified like any good end.
2. ``resume`` (also used by ``start``) is a replay: the trials already in the session are fed back
   into the pure :class:`~dbglog.bisect.algorithms.HistoryBisect`; only steps without a verdict run.
3. Endpoints first. The bad end runs first: its outcome and failure signature define the
   :class:`~dbglog.bisect.session.Target` ("bad" = the same failure), and its duration the default
   ``--timeout`` (``session.default_timeout``). With ``--jobs > 1`` the good end(s) run at the same
   time and are judged once the target is known. A bad end that passes, is flaky or cannot be
   tested, and a good end that fails (the same way or differently), stop the bisection with status
   ``refused`` (exit 2): nothing is blamed, and the outcomes seen are reported and recorded.
4. Steps. ``HistoryBisect.next_steps(jobs)`` picks the commits that halve (k-sect) the
   candidates, stepping away from skipped clusters. Each commit runs in its own git worktree under
   ``.dbglog/bisect/<session>/wt<k>`` (``git worktree add --detach`` once, then
   ``git checkout --detach --force`` and ``git clean -ffd`` per step, ignored files kept): the driver is the ``oracle.Place`` of
   ``bisect/oracle.py``, which runs each step through ``session.Executor`` (build step,
   ``--repeat``, ``--launcher``, the supervised runner) in a free worktree slot. Every verdict is
   persisted as soon as it is known (one transaction), so kill -9 loses at most the steps that were
   running. Signals, release, clean-up and the final record are ``bisect/lifecycle.py``'s.
5. Results are cached by (commit, command, build, target, repeat, timeout, launcher, cwd) across
   sessions (``session.cache_key``): re-asking the same question is instant. Skips are not cached.
6. The report: a ``## Bisection: <good>..<bad> (<session>)`` section in the investigation's
   markdown (range, command, every step with subject, verdict, signature, duration and run links,
   the result with author, date and diffstat), plus an attempt naming the first bad commit.

The user's working tree, index, HEAD and stash are never touched: every git command here either
reads objects or works inside our own worktrees, and runs with ``GIT_OPTIONAL_LOCKS=0`` so not even
an index refresh is written; a repro's own ``git stash`` (worktrees share refs/stash) is undone at the end
(``keep_stash``/``restore_stash``). ``.dbglog/`` ignores its own contents, so the worktrees never show up
in ``git status``.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Callable

from dbglog.bisect import lifecycle
from dbglog.bisect import session as S
from dbglog.bisect.algorithms import HistoryBisect, Verdict
from dbglog.bisect.oracle import END_TIMEOUT, Ask, EndsPlan, Oracle, Placement, PlaceFailed, verify_ends
from dbglog.bisect.spec import HistorySpec
from dbglog.util.errors import DbglogError
from dbglog.util.redact import sanitize

KIND = "git"
COMMIT_VAR = "DBGLOG_BISECT_COMMIT"


# --- git plumbing ------------------------------------------------------------------------


class GitError(DbglogError):
    pass


def _git_env() -> dict:
    env = dict(os.environ)
    for k in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR"):
        env.pop(k, None)
    # Never write the user's index (not even a stat refresh), never prompt.
    env.update(GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    return env


_GIT_EXE: dict[str, str] = {}


def _git_exe() -> str:
    """git's full path, looked up once per PATH: given as a bare "git", every spawn tries each PATH
    entry before git's own in turn (a failed exec per pyenv shim, /usr/local/..., and so on)."""
    path = os.environ.get("PATH", os.defpath)
    exe = _GIT_EXE.get(path)
    if exe is None:
        exe = _GIT_EXE[path] = shutil.which("git", path=path) or "git"
    return exe


def git(repo, *args: str, check: bool = True) -> str:
    p = subprocess.run([_git_exe(), "-c", "log.showSignature=false", "-c", "core.quotepath=false", "-C", str(repo),
                        *args], capture_output=True, text=True, encoding="utf-8", errors="replace",
                       env=_git_env(), stdin=subprocess.DEVNULL)
    if check and p.returncode != 0:
        msg = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
        raise GitError(f"git {' '.join(args[:2])} failed: {msg}")
    return p.stdout


def _git_ok(repo, *args: str) -> bool:
    # (only the exit status is read: no pipes to drain, a step's checkout costs one process and no more)
    return subprocess.run([_git_exe(), "-C", str(repo), *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          env=_git_env(), stdin=subprocess.DEVNULL).returncode == 0


def repo_root(cwd) -> Path:
    try:
        out = git(cwd, "rev-parse", "--show-toplevel")
    except GitError:
        raise DbglogError(f"{cwd} is not inside a git repository (dbglog bisect git needs one)") from None
    except FileNotFoundError:
        raise DbglogError("git is not installed (dbglog bisect git needs it)") from None
    return Path(out.strip()).resolve()


def rev(repo, ref: str) -> str:
    """A full commit sha for REV; DbglogError when it does not name a commit."""
    out = subprocess.run([_git_exe(), "-C", str(repo), "rev-parse", "--verify", "--quiet", "--end-of-options",
                          f"{ref}^{{commit}}"], capture_output=True, text=True, env=_git_env(),
                         stdin=subprocess.DEVNULL)
    if out.returncode != 0 or not out.stdout.strip():
        raise DbglogError(f"unknown revision {ref!r}: not a commit in {repo}")
    return out.stdout.strip()


def _resolve_ends(cwd, refs: list[str]) -> tuple[Path, list[str]] | None:
    """The repository root and the commit of every ref in ONE git process (``repo_root`` and
    ``rev`` each, one process per question); None when anything is amiss -- the caller then asks
    them one by one, which says precisely what."""
    if any(r.startswith("-") for r in refs):
        return None  # (rev-parse would read it as an option; --end-of-options is echoed without --verify)
    try:
        p = subprocess.run([_git_exe(), "-C", str(cwd), "rev-parse", "--show-toplevel",
                            *(f"{r}^{{commit}}" for r in refs)], capture_output=True, text=True, env=_git_env(),
                           stdin=subprocess.DEVNULL)
    except OSError:
        return None
    lines = p.stdout.split("\n")
    if p.returncode != 0 or len(lines) != len(refs) + 2 or lines[-1] != "":
        return None
    shas = lines[1:-1]
    if not all(len(x) in (40, 64) and all(c in "0123456789abcdef" for c in x) for x in shas):
        return None
    return Path(lines[0]).resolve(), shas


def is_ancestor(repo, a: str, b: str) -> bool:
    return _git_ok(repo, "merge-base", "--is-ancestor", a, b)


def merge_bases(repo, a: str, b: str) -> list[str]:
    """The best common ancestors of two different commits ([] without shared history). One git
    process answers both ancestry questions of ``start``: it is ``[a]`` exactly when a is an
    ancestor of b, ``[b]`` when b is one of a."""
    return git(repo, "merge-base", "--all", a, b, check=False).split()


_GRAPHS: dict = {}


def history_graph(repo, bad: str, goods: list[str]) -> tuple[dict, list[str], dict]:
    """(parents of every commit reachable from bad but not from a good, the boundary commits
    (ancestors of a good that are parents of those: known good), subject of each commit).
    Commits are immutable, so the answer is memoised per process (start() and the driver share it)."""
    key = (str(repo), bad, tuple(goods))
    if key not in _GRAPHS:
        _GRAPHS.clear()
        _GRAPHS[key] = _history_graph(repo, bad, goods)
    return _GRAPHS[key]


def _history_graph(repo, bad: str, goods: list[str]) -> tuple[dict, list[str], dict]:
    out = git(repo, "log", "-z", "--boundary", "--format=%m%x1f%H%x1f%P%x1f%s", bad, "--not", *goods, "--")
    parents: dict[str, tuple[str, ...]] = {}
    boundary: list[str] = []
    subjects: dict[str, str] = {}
    for rec in out.split("\0"):
        rec = rec.strip("\n")
        if not rec:
            continue
        mark, sha, ps, subject = (rec.split("\x1f", 3) + ["", "", ""])[:4]
        subjects[sha] = sanitize(subject)  # a commit subject may carry escapes: shown and stored inert
        if mark == "-":
            boundary.append(sha)
        else:
            parents[sha] = tuple(ps.split())
    return parents, boundary, subjects


def commit_info(repo, sha: str, parents: tuple | list | None = None) -> dict:
    """Author, date, subject, parents and diffstat (against the first parent) of ``sha``. Given
    ``parents`` (the range's graph knows them) and at most one of them: one ``git show --stat``,
    whose diffstat is then ``git diff --stat PARENT SHA``'s (a root's: against the empty tree);
    a merge's would be the combined diff's, so it is asked as before, in two processes."""
    fmt = "--format=%H%x1f%an <%ae>%x1f%aI%x1f%s%x1f%P"
    stat = None
    if parents is not None and len(parents) <= 1:
        out, _, stat = git(repo, "show", "--stat=100", "--no-color", fmt + "%x1e", sha, "--").partition("\x1e")
    else:
        out = git(repo, "show", "-s", fmt, sha)
    h, author, date, subject, ps = (out.rstrip("\n").split("\x1f") + [""] * 5)[:5]
    parents = ps.split()
    if stat is None or len(parents) > 1:
        stat = (git(repo, "diff", "--stat=100", "--no-color", parents[0], sha, check=False) if parents else
                git(repo, "show", "--stat=100", "--no-color", "--format=", sha, check=False))
    return {"commit": h, "short": h[:10], "subject": sanitize(subject), "author": sanitize(author), "date": date,
            "parents": parents, "merge": len(parents) > 1, "diffstat": sanitize(stat.strip("\n"))}


def subjects_of(repo, shas) -> dict:
    shas = list(dict.fromkeys(shas))
    if not shas:
        return {}
    out = git(repo, "log", "-z", "--no-walk=unsorted", "--format=%H%x1f%s", *shas, "--", check=False)
    res = {}
    for rec in out.split("\0"):
        rec = rec.strip("\n")
        if "\x1f" in rec:
            h, s = rec.split("\x1f", 1)
            res[h] = sanitize(s)
    return res


# --- worktrees ---------------------------------------------------------------------------

# How a slot's worktree is made to hold a commit, the same whether a step waits for it or it is readied ahead.
_CHECKOUT = ("checkout", "--detach", "--force", "-q")
_ADD = ("worktree", "add", "--detach", "--force", "-q")
# A reused worktree loses the untracked files the last step left (a marker, an output), so every step
# starts from its commit's tree; ignored ones (a build directory) stay for an incremental --build.
_CLEAN = ("clean", "-ffdq")
# checkout then clean as one spawn for a worktree readied ahead: $0 = git, $1 = the worktree, $2 = the commit
_CHECKOUT_CLEAN = ('"$0" -C "$1" ' + " ".join(_CHECKOUT) + ' "$2" && exec "$0" -C "$1" ' + " ".join(_CLEAN))


def _worktree_root(recs, sid: str, scratch: str | None = None) -> Path:
    return S.workdir_root(recs, scratch) / sid


def _admin_dir(wt: Path) -> Path | None:
    """The repository's administrative folder of our worktree ``wt`` (``worktrees/<name>`` in the
    git dir, named by the ``gitdir:`` line of ``wt/.git``) when it points back at ``wt``; None
    when that cannot be told for sure."""
    try:
        line = (wt / ".git").read_text().strip()
        if not line.startswith("gitdir: "):
            return None
        admin = (wt / line[len("gitdir: "):]).resolve()  # (an absolute path stays itself)
        back = (admin / (admin / "gitdir").read_text().strip()).resolve()
    except (OSError, ValueError):
        return None
    return admin if admin.parent.name == "worktrees" and back == (wt / ".git").resolve() else None


def _index_lists_python(wt: Path) -> bool | None:
    """Whether the git index of worktree ``wt`` lists a .py or .pyw file, read without a git process:
    in index versions 2 and 3 every entry's full path is followed by a NUL byte. None when that cannot
    be told for sure (no index yet, version 4's prefix-compressed paths, a split index whose entries
    live in another file, a sparse index's folded directories): then git is asked."""
    admin = _admin_dir(wt)
    try:
        data = (admin / "index").read_bytes() if admin is not None else b""
    except OSError:
        return None
    if data[:4] != b"DIRC" or int.from_bytes(data[4:8], "big") not in (2, 3) or b"link" in data or b"sdir" in data:
        return None  # (a path that merely contains "link" only costs the git question)
    return b".py\0" in data or b".pyw\0" in data


def _admins_of_gone(repo, root: Path) -> list[Path] | None:
    """The administrative folders (``worktrees/<name>`` in ``repo``'s git dir) of worktrees of ``root``
    whose folder no longer exists, read without a git process; None when the git dir is not a plain
    ``.git`` folder (a prune then decides)."""
    if repo is None:
        return []
    git_dir = Path(repo) / ".git"
    if not git_dir.is_dir():
        return None
    try:
        names = list((git_dir / "worktrees").iterdir())
    except FileNotFoundError:
        return []
    except OSError:
        return None
    here, out = {os.path.abspath(root), os.path.realpath(root)}, []
    for admin in names:
        try:
            dot_git = os.path.abspath((admin / "gitdir").read_text().strip())  # <worktree>/.git
        except OSError:
            continue
        wt = os.path.dirname(dot_git)
        if os.path.dirname(wt) in here and os.path.basename(wt).startswith("wt") and not os.path.exists(wt):
            out.append(admin)
    return out


def remove_worktrees(repo, root: Path) -> None:
    """Remove every worktree of a session (also after kill -9) and forget them in the repo."""
    # A worktree whose folder is gone (a repro that deleted its own directory) is still registered:
    # `git worktree list` showed it as prunable in the user's repository, so it is looked for too.
    gone = _admins_of_gone(repo, root)
    if not root.is_dir() and not gone:
        return  # nothing of ours
    # The folders first, then what `git worktree prune` would remove for them: each one's
    # administrative folder, when it surely is its own (no git process); any doubt (a worktree
    # killed while being added, an odd .git file): one prune forgets every worktree whose folder is gone.
    admins, unsure = list(gone or ()), gone is None
    for wt in root.glob("wt*"):
        a = _admin_dir(wt)
        if a is None:
            unsure = True
        else:
            admins.append(a)
    shutil.rmtree(root, ignore_errors=True)
    for a in admins:
        shutil.rmtree(a, ignore_errors=True)
    if unsure and repo is not None and Path(repo).is_dir():
        _git_ok(repo, "worktree", "prune")


# --- the user's stash ----------------------------------------------------------------------
# Worktrees share refs/stash: a repro that runs `git stash` pushes onto (or pops) the user's list. Its
# ref and reflog are kept aside before the first step (beside the session's folder: a resume after
# kill -9 keeps the first driver's copy) and put back at the end, the user's own new entries kept.


def _stash_files(repo: Path) -> tuple[Path, Path] | None:
    """(refs/stash, logs/refs/stash) of ``repo``; None when they are not plain files (a packed or
    reftable stash, a git dir elsewhere): then the stash is not watched."""
    git_dir = Path(repo) / ".git"
    if not git_dir.is_dir() or (git_dir / "reftable").exists():
        return None
    try:
        if "refs/stash" in (git_dir / "packed-refs").read_text(errors="replace"):
            return None
    except FileNotFoundError:
        pass
    return git_dir / "refs" / "stash", git_dir / "logs" / "refs" / "stash"


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="surrogateescape")
    except FileNotFoundError:
        return None


def keep_stash(repo: Path, saved: Path) -> None:
    files = _stash_files(repo)
    if files is not None and not saved.exists():
        from dbglog.util.fsutil import atomic_write

        saved.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(saved, json.dumps([_read_text(f) for f in files]).encode("utf-8", "surrogateescape"))


def restore_stash(repo, saved: Path) -> None:
    """Put the stash as kept by ``keep_stash`` back: its entries (a repro's pop or drop undone), then
    the entries made since on a branch (the user's); a step's (made on the detached HEAD of a worktree)
    leave the list, their commits named in one line."""
    files = _stash_files(repo) if repo is not None else None
    try:
        ref0, log0 = json.loads(saved.read_bytes())
    except (OSError, ValueError):
        return
    now = [_read_text(f) for f in files] if files is not None else [ref0, log0]
    if now != [ref0, log0]:
        old = (log0 or "").splitlines(keepends=True)
        seen = {ln.split(" ", 1)[-1] for ln in old}  # (a drop rewrites the old-sha field of the lines after it)
        new = [ln for ln in (now[1] or "").splitlines(keepends=True) if ln.split(" ", 1)[-1] not in seen]
        steps = [ln for ln in new if "\tWIP on (no branch): " in ln or "\tOn (no branch): " in ln]
        log = old + [ln for ln in new if ln not in steps]
        _write_stash(files, log, ref0, log0)
        if steps:
            print("dbglog: the repro's git stash entries were taken off your stash list, which is as it was (their commits: "
                  + " ".join(ln.split()[1][:12] for ln in steps) + ")", file=sys.stderr)
    saved.unlink(missing_ok=True)


def _write_stash(files: tuple[Path, Path], log: list[str], ref0: str | None, log0: str | None) -> None:
    from dbglog.util.fsutil import atomic_write

    ref = log[-1].split()[1] + "\n" if log else ref0  # (the newest entry is what refs/stash names)
    for path, data in zip(files, (ref, "".join(log) if log else log0)):
        if data is None:
            path.unlink(missing_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, data.encode("utf-8", "surrogateescape"))


# --- the driver --------------------------------------------------------------------------


def _what(outcome, signature) -> str:
    if not outcome:
        return ""
    return outcome + (f" [{signature}]" if signature else "")


class Refused(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class _Driver:
    def __init__(self, recs, session: dict, progress: bool):
        self.recs = recs
        self.session = session
        self.sid = session["id"]
        self.spec = HistorySpec.from_stored(session["spec"])  # typed once; written back with to_stored()
        self.inv = session["investigation"]
        self.db = S.SessionDB(recs.store)
        self.repo = Path(self.spec.repo)
        if not self.repo.is_dir():
            raise DbglogError(f"the repository {self.repo} of bisection {self.sid} is gone")
        self.jobs = max(1, int(self.spec.jobs))
        self.wt_root = _worktree_root(recs, self.sid, self.spec.scratch)
        self.sigs = S.Catalog(recs.ws.config_path)  # built when a run first prints something
        self.subjects: dict[str, str] = {}
        self.t0 = time.monotonic()
        self._wt_lock = threading.Lock()
        self._wt_at: dict[int, str] = {}  # slot -> the commit its worktree holds
        self._has_python: bool | None = None
        self._py_probe: subprocess.Popen | None = None  # `git ls-tree` under way (_start_python_probe)
        self._py_lock = threading.Lock()
        self._ahead: dict[int, tuple[str, str, subprocess.Popen]] = {}  # slot -> (commit, how, git) (ready_ahead)
        self._sub_lock = threading.Lock()
        self._config: Path | None = None  # the repository's config file, once a commit has submodules
        self.progress = S.Progress(max(1, self.spec.size_hint or 1), enabled=progress)
        self.oracle = Oracle(recs, self.sid, self, jobs=self.jobs, progress=self.progress, signatures=self.sigs,
                             db=self.db, workdir=self.wt_root)
        self.target: S.Target | None = None
        self.ex: S.Execution | None = None
        self._world: str | None = None

    # -- helpers --------------------------------------------------------------------

    def execution(self, timeout) -> S.Execution:
        return S.Execution(**self.spec.execution_args(), timeout=timeout)

    def ckey(self, sha: str, ex: S.Execution | None = None, target: S.Target | None = None,
             kind: str = KIND) -> str:
        if self._world is None:  # (once per session: the environment and the files the command names)
            self._world = S.world((ex or self.ex).cmd, os.getcwd())
        return S.cache_key(kind, sha, ex or self.ex, target or self.target,
                           {"cwd": self.spec.cwd_rel, "world": self._world})

    def label(self, sha: str) -> str:
        subj = self.subjects.get(sha)
        if subj is None:
            self.subjects.update(subjects_of(self.repo, [sha]))
            subj = self.subjects.get(sha, "")
        return f"{sha[:10]} {subj[:60]}".rstrip()

    def ready_ahead(self, k: int, sha: str) -> None:
        """Start making slot ``k``'s worktree hold ``sha`` without waiting for git: the checkout (or,
        the first time, the worktree's creation) runs while this thread stores the step just
        finished and picks the next one; ``checkout`` waits for it. Only a hint: a failure, or a
        different commit asked next, takes ``checkout``'s usual path."""
        if k in self._ahead or self._wt_at.get(k) == sha:
            return
        p = self.wt_root / f"wt{k}"
        if (p / ".git").exists():
            how, argv = "checkout", ["/bin/sh", "-c", _CHECKOUT_CLEAN, _git_exe(), str(p), sha]
        elif not p.exists():
            self.wt_root.mkdir(parents=True, exist_ok=True)
            how, argv = "add", [_git_exe(), "-C", str(self.repo), *_ADD, str(p), sha]
        else:
            return
        try:
            # its own group (stopped with its hook's children); the session's marker: a resume after
            # a kill -9 of this driver stops it with the trials it left (session.reap_leftovers)
            proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    stdin=subprocess.DEVNULL, env=_git_env() | {S.SESSION_VAR: self.sid},
                                    start_new_session=True)
        except OSError:
            return
        self._ahead[k] = (sha, how, proc)

    def settle_ahead(self) -> None:
        """End every git readying a slot: the clean-up's, before the worktrees are removed. Whatever
        it was readying is not needed any more, so it is stopped (SIGTERM: git removes its lock
        files), not waited for (a slow post-checkout hook would hold up an interrupt)."""
        for k in list(self._ahead):
            _, _, proc = self._ahead.pop(k)
            if proc.poll() is None:
                from dbglog.run import proctree

                proctree.kill_group(proc, grace=5)  # (its group: a hook's children too)
            proc.wait()

    def _settle(self, k: int) -> tuple[str, bool] | None:
        """(the commit slot ``k``'s readying git was readying, whether it succeeded) once it is done;
        None when there was none."""
        got = self._ahead.get(k)
        if got is None:
            return None
        sha, how, proc = got
        rc = proc.wait()  # (still listed meanwhile: an interrupt here leaves it to settle_ahead)
        del self._ahead[k]
        if rc != 0:
            return sha, False
        p = self.wt_root / f"wt{k}"
        if how == "add":
            self._start_python_probe(p, sha)
        else:
            self._drop_stale_bytecode(p, self._wt_at.get(k), sha)
        self._wt_at[k] = sha
        return sha, True

    def checkout(self, k: int, sha: str) -> Path:
        p = self.wt_root / f"wt{k}"
        readied = self._settle(k)
        if readied == (sha, True):
            return p
        if (p / ".git").exists():
            # (a checkout of this commit that just failed is not tried again: the worktree is made anew)
            if readied != (sha, False) and _git_ok(p, *_CHECKOUT, sha) and _git_ok(p, *_CLEAN):
                self._drop_stale_bytecode(p, self._wt_at.get(k), sha)
                self._wt_at[k] = sha
                return p
            _git_ok(self.repo, "worktree", "remove", "--force", "--force", str(p))
            shutil.rmtree(p, ignore_errors=True)
        with self._wt_lock:
            self.wt_root.mkdir(parents=True, exist_ok=True)
            if p.exists():
                shutil.rmtree(p, ignore_errors=True)
                _git_ok(self.repo, "worktree", "prune")
            git(self.repo, *_ADD, str(p), sha)
            self._start_python_probe(p, sha)
        self._wt_at[k] = sha
        return p

    def _start_python_probe(self, wt: Path, sha: str) -> None:
        """Whether the repo holds Python (for ``_drop_stale_bytecode``: the bad end's tree), from the
        index of the worktree just made at the bad end; else asked of git without waiting for the
        answer: it comes while the first step runs and is read when a worktree is first reused."""
        with self._py_lock:
            if self._py_probe is not None or self._has_python is not None:
                return
            if sha == self.spec.bad:
                self._has_python = _index_lists_python(wt)
                if self._has_python is not None:
                    return
            try:
                self._py_probe = subprocess.Popen(
                    [_git_exe(), "-C", str(self.repo), "ls-tree", "-r", "-z", "--name-only", self.spec.bad],
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=_git_env())
            except OSError:
                self._py_probe = None

    def _repo_has_python(self) -> bool:
        with self._py_lock:
            if self._has_python is None:
                names = None
                if self._py_probe is not None:
                    out, _ = self._py_probe.communicate()
                    if self._py_probe.returncode == 0:
                        names = out.decode("utf-8", "surrogateescape").split("\0")
                    self._py_probe = None
                if names is None:  # no probe, or it failed: ask again, and say why if git does
                    names = git(self.repo, "ls-tree", "-r", "--name-only", self.spec.bad).splitlines()
                self._has_python = any(n.endswith((".py", ".pyw")) for n in names)
            return self._has_python

    def end_python_probe(self) -> None:
        """Reap a probe nobody read (the bisection ended before a worktree was reused)."""
        with self._py_lock:
            if self._py_probe is not None:
                self._py_probe.kill()
                self._py_probe.communicate()
                self._py_probe = None

    def _drop_stale_bytecode(self, wt: Path, prev: str | None, sha: str) -> None:
        """A reused worktree keeps the __pycache__ of the commit it held. Python trusts a .pyc whose
        source mtime (whole seconds) and size match, so a module changed to one of the same size
        (``x = 1`` -> ``x = 2``) checked out within the same second would run the previous commit's
        code. Drop the bytecode of the .py files that differ (one git call, Python repos only)."""
        from dbglog.util.fsutil import drop_bytecode

        if prev is None or prev == sha:
            return
        if not self._repo_has_python():
            return
        for rel in git(wt, "diff", "--name-only", "--no-renames", prev, sha, "--", "*.py", "*.pyw",
                       check=False).splitlines():
            drop_bytecode(wt / rel)

    # -- the oracle's place: a worktree per slot ---------------------------------------

    def place(self, ask: Ask, slot: int) -> Placement:
        try:
            wt = self.checkout(slot, ask.key)
        except GitError as e:
            raise PlaceFailed(f"infrastructure: checkout failed: {e}") from None
        if (wt / ".gitmodules").exists():  # (one stat: repositories without submodules pay no git process)
            self._update_submodules(wt)
        return Placement(str(wt / self.spec.cwd_rel), {COMMIT_VAR: ask.key})

    def _update_submodules(self, wt: Path) -> None:
        """Check out the submodules of the commit in worktree ``wt``, as a recursive clone has them
        (``--force``: a step's edits inside one do not reach the next); PlaceFailed naming them if not.
        ``--init`` writes their urls into the config the worktrees share, the user's: its bytes are put back."""
        with self._sub_lock:  # (one at a time: each writes that config)
            if self._config is None:
                self._config = Path(git(self.repo, "rev-parse", "--path-format=absolute", "--git-common-dir").strip(),
                                    "config")
            before = self._config.read_bytes()
            p = subprocess.run([_git_exe(), "-C", str(wt), "submodule", "update", "--init", "--recursive", "--force",
                                "-q"], capture_output=True, text=True, errors="replace", env=_git_env(),
                               stdin=subprocess.DEVNULL)
            if self._config.read_bytes() != before:
                from dbglog.util.fsutil import atomic_write

                atomic_write(self._config, before)
        if p.returncode != 0:
            names = git(wt, "config", "-f", ".gitmodules", "--get-regexp", r"\.path$", check=False).split()[1::2]
            lines = p.stderr.strip().splitlines() or [f"exit {p.returncode}"]
            why = next((ln for ln in lines if ln.startswith("fatal:")), lines[-1])
            raise PlaceFailed(f"infrastructure: submodule(s) {', '.join(names) or '?'} could not be checked out: {why}")

    def placed(self, ask: Ask, records: list[dict]) -> None:
        for r in records:
            r["git_commit"], r["git_dirty"] = ask.key, False

    @property
    def executed(self) -> int:  # repro trials run by this invocation
        return self.oracle.executed

    @property
    def cached_steps(self) -> int:
        return self.oracle.cached_steps

    def persist(self, step: S.Step, records: list, ckey: str, hb: HistoryBisect | None = None,
                counts: tuple[int, int] | None = None, role: str = "") -> None:
        if hb is not None:
            if counts:
                hb.record(step.key, step.verdict, *counts)
            else:
                hb.record(step.key, step.verdict)
        self.oracle.persist(step, records, ckey, self.label(step.key) + (f" ({role})" if role else ""))

    # -- judging --------------------------------------------------------------------

    def _test_runs(self, records: list) -> list | None:
        """The repro runs of a trial, or None when its build step failed."""
        if self.spec.build:
            if not records or records[0]["outcome"] != "pass":
                return None
            return records[1:]
        return records

    def _counts(self, records: list, target: S.Target) -> tuple[int, int] | None:
        runs = self._test_runs(records)
        if not runs:
            return None
        kinds = [target.judge(r)[0] for r in runs]
        return kinds.count("bad"), kinds.count("bad") + kinds.count("good")

    # -- phases ---------------------------------------------------------------------

    def verify_ends(self) -> dict[str, S.Step]:
        """The endpoint phase (``oracle.verify_ends``): the bad end is told to fail, so it runs first
        (from the verdict cache under its own provisional key), refuses before the good ends cost a
        run, and every repeat must fail the same way."""
        sp = self.spec
        self.subjects.update(self.graph()[2])  # the range's subjects in one git log (memoised), not one per label
        cal = sp.calibrated
        ex0 = self.execution(sp.timeout or END_TIMEOUT)

        def save(target: S.Target, timeout, _failing: str) -> None:
            sp.calibrated = {"target": asdict(target), "timeout": timeout}
            self.db.update_spec(self.sid, sp.to_stored())

        ends = verify_ends(self.oracle, EndsPlan(
            [sp.bad, *sp.goods], lambda c, ex, t, ck: Ask(c, self.label(c), ex, t, ck), ex0,
            lambda c, ex, t: self.ckey(c, ex, t), save, failing=sp.bad, strict=True, match=sp.match,
            any_failure=sp.any_failure, user_timeout=sp.timeout, roles=("bad end", "good end"),
            provisional=self.ckey(sp.bad, ex0, S.Target(match=sp.match, any_failure=sp.any_failure),
                                  kind="git-bad-end"),
            calibrated=(S.Target(**cal["target"]), cal["timeout"]) if cal is not None else None))
        self.target, self.ex = ends.target, ends.execution
        r = ends.refused
        if r is not None:
            raise Refused(self._bad_end_refusal(r.step) if r.why == "failing" else
                          self._good_end_refusal(r.key, r.step, ends.steps[sp.bad]))
        return ends.steps

    def _bad_end_refusal(self, st: S.Step) -> str:
        ref = f"the bad end {self.spec.bad_ref} ({st.key[:10]})"
        rate = self._recorded_rate()
        if rate and st.verdict in (Verdict.GOOD, Verdict.FLAKY):
            k, n = rate
            return (f"{ref} passed this time, but the investigation's recorded runs of this very command failed "
                    f"{k} of {n}: the failure looks intermittent, and a one-run-per-step bisection would be misled; "
                    f"bisect it probabilistically: {self._flaky_line()}")
        if st.verdict is Verdict.GOOD:
            return f"{ref} passes: the repro does not reproduce there, nothing to bisect (check the command, " \
                   "its working directory and --bad; if the failure is intermittent: " \
                   f"{self._flaky_line()})"
        if st.verdict is Verdict.FLAKY:
            return f"{ref} is flaky ({st.reason}): a single run cannot be trusted; bisect it probabilistically: " \
                   f"{self._flaky_line()}"
        return f"{ref} cannot be used: {st.reason}"

    def _recorded_rate(self) -> tuple[int, int] | None:
        return S.recorded_rate(self.recs, self.inv, self.spec.cmd)

    def _flaky_line(self) -> str:
        """The command that bisects this range probabilistically (this one, with --flaky)."""
        return S.with_flaky(self._did_text({}))

    def _good_end_refusal(self, g: str, st: S.Step, bstep: S.Step) -> str:
        refs = dict(zip(self.spec.goods, self.spec.good_labels or self.spec.goods))
        ref = f"the good end {refs.get(g, g[:10])} ({g[:10]})"
        if st.verdict is Verdict.BAD:
            return f"{ref} fails the same way as the bad end ({_what(st.outcome, st.signature)}): the repro " \
                   "fails everywhere, or the good end is not good; nothing blamed" + self._missing_repro_hint(g)
        if st.verdict is Verdict.FLAKY:
            return f"{ref} is flaky ({st.reason}); nothing blamed"
        if st.reason.startswith("different failure"):
            return f"{ref} fails differently ({_what(st.outcome, st.signature)}; the bad end: " \
                   f"{_what(bstep.outcome, bstep.signature)}): it is not a passing baseline; nothing blamed"
        return f"{ref} cannot be tested: {st.reason}; nothing blamed"

    def _missing_repro_hint(self, good: str) -> str:
        """Why a repro fails everywhere, when it is the commonest reason: a file the command names is in
        your checkout but not in the good end's tree (an untracked script, or one committed after it),
        and each step runs in a clean worktree of its commit. Asked of git only on this refusal."""
        sp = self.spec
        here = Path(sp.repo) / sp.cwd_rel
        rels = []
        for word in sp.cmd:
            if os.path.isabs(word) or word.startswith("-") or not (here / word).is_file():
                continue
            rel = os.path.normpath(os.path.join(sp.cwd_rel, word))
            if not rel.startswith(".."):
                rels.append(rel)
        if not rels:
            return ""
        try:
            there = set(git(self.repo, "ls-tree", "-r", "--name-only", good, "--", *rels).splitlines())
        except GitError:
            return ""
        missing = [r for r in rels if r not in there]
        if not missing:
            return ""
        return (f" (note: {', '.join(missing)} is in your checkout but not in the good end's tree -- each step runs "
                "in a clean worktree of its commit: keep the repro outside the repository and name it by its "
                "absolute path)")

    def search(self) -> HistoryBisect:
        sp = self.spec
        bad, goods = sp.bad, list(sp.goods)
        parents, boundary, subjects = history_graph(self.repo, bad, goods)
        self.subjects.update(subjects)
        hb = HistoryBisect(parents, bad, goods + [b for b in boundary if b not in goods],
                           first_parent=sp.first_parent, max_runs=sp.max_steps)
        ends = {bad, *goods}
        trials = self.db.trials(self.sid)
        for t in trials:
            if t.key not in ends:
                hb.record(t.key, t.verdict)
        self.progress.done = len(trials)
        while not hb.done:
            picks = hb.next_steps(self.jobs)
            if not picks:
                break
            asks = [Ask(c, self.label(c), self.ex, self.target, self.ckey(c)) for c in picks]

            def cached(a, st, _rs):
                hb.record(a.key, st.verdict)
                return st

            def ran(a, st, rs):
                counts = self._counts(rs, self.target)
                hb.record(a.key, st.verdict, *counts) if counts else hb.record(a.key, st.verdict)
                if self.jobs == 1:  # the next commit's checkout runs while this step is stored
                    nxt = hb.peek()
                    if nxt is not None and nxt not in self.oracle.known and \
                            self.oracle.lookup(nxt, self.ckey(nxt)) is None:  # (a cached one needs no checkout)
                        self.ready_ahead(0, nxt)
                return st

            self.oracle.answer(asks, ran, on_cached=cached, before_run=lambda torun: self.progress.running(
                ", ".join(a.label for a in torun), left=len(hb.candidates), est=hb.estimated_steps_left(self.jobs)))
        return hb

    # -- results --------------------------------------------------------------------

    def drive(self) -> dict:
        if self.spec.flaky or self.spec.rate:
            return self._drive_flaky()
        self.ready_ahead(0, self.spec.bad)
        from dbglog.run import runner

        runner.warm()  # while git makes the first worktree
        try:
            ends = self.verify_ends()
        except Refused as r:
            if self._flaky_seen():  # an end whose repeats disagree: weigh the runs instead of refusing
                return self._drive_flaky()
            return self.finish_refused(r.message)
        hb = self.search()
        if hb.result.status == "flaky":  # flaky commits keep the culprit from being isolated
            return self._drive_flaky()
        return self.finish(hb, ends)

    def _drive_flaky(self) -> dict:
        # the probabilistic search: --flaky/--rate, or repeats that disagree (imported only then)
        from dbglog.bisect import flaky

        return flaky.drive(self)

    def graph(self) -> tuple[dict, list[str], dict]:
        return history_graph(self.repo, self.spec.bad, self.spec.goods)

    def commit_info(self, sha: str) -> dict:
        return commit_info(self.repo, sha, self.graph()[0].get(sha))

    def _flaky_seen(self) -> bool:
        ends = {self.spec.bad, *self.spec.goods}
        return any(t.verdict is Verdict.FLAKY for t in self.db.trials(self.sid) if t.key in ends)

    def _steps(self) -> list[dict]:
        sp = self.spec
        trials = self.db.trials(self.sid)
        self.subjects.update(subjects_of(self.repo, [t.key for t in trials if t.key not in self.subjects]))
        out = []
        for t in trials:
            role = "bad end" if t.key == sp.bad else ("good end" if t.key in sp.goods else "")
            out.append(t.to_dict() | {"commit": t.key, "short": t.key[:10], "subject": self.subjects.get(t.key, ""),
                                      "role": role})
        return out

    def _base(self, status: str, exit_code: int, message: str) -> dict:
        sp = self.spec
        return {"session": self.sid, "kind": KIND, "status": status, "exit_code": exit_code, "message": message,
                "range": {"good": sp.good_labels or sp.goods, "bad": sp.bad_ref,
                          "good_commits": sp.goods, "bad_commit": sp.bad},
                "command": sp.cmd, "first_parent": sp.first_parent,
                "target": self.target.describe() if self.target else None,
                "timeout": self.ex.timeout if self.ex else None,
                "runs": self.executed, "cached_steps": self.cached_steps,
                "elapsed_s": round(time.monotonic() - self.t0, 3), "investigation": self.inv}

    def conclude(self, res: dict) -> None:
        """After the clean-up (the lifecycle's last step): record into the investigation, finish."""
        self._record(res)
        self.db.finish(self.sid, "refused" if res["status"] == "refused" else "done", _slim(res))

    def finish_refused(self, message: str) -> dict:
        res = self._base("refused", 2, f"bisection refused: {message}")
        res["first_bad"] = None
        res["candidates"] = []
        res["steps"] = self._steps()
        res["report"] = self._report(res)
        return res

    def finish(self, hb: HistoryBisect, ends: dict) -> dict:
        r = hb.result
        steps = self._steps()
        by_key = {s["commit"]: s for s in steps}
        untested = set(r.untested)
        cands = []
        for c in r.candidates:
            s = by_key.get(c)
            if s is not None:
                why = s["reason"]
            elif c in untested:
                why = f"not tried: the --max-steps budget ({self.spec.max_steps}) ran out first"
            else:
                why = ""
            cands.append({"commit": c, "short": c[:10], "subject": self.subjects.get(c, ""),
                          "verdict": s["verdict"] if s else None, "reason": why})
        if r.status == "found":
            info = self.commit_info(r.first_bad)
            msg = f"first bad commit: {info['short']} {info['subject']}"
            res = self._base("found", 0, msg)
            res["first_bad"] = info
        else:
            code = 1
            if r.status == "flaky":
                msg = (f"no single first bad commit: flaky commit(s) {', '.join(c[:10] for c in r.flaky)} among "
                       f"{len(r.candidates)} candidates; more evidence needed: rerun with a higher --repeat, or "
                       "`dbglog bisect mark REV good|bad` and `dbglog bisect resume`")
            elif r.status == "inconsistent":
                msg = f"inconsistent verdicts: {r.reason}"
            elif r.status == "budget_exhausted":
                msg = (f"--max-steps {self.spec.max_steps} reached: the first bad commit is one of "
                       f"{len(r.candidates)} candidates, {len(r.untested)} of them not tried; "
                       f"`dbglog bisect resume {self.sid} --max-steps N` continues")
            else:
                n_skip = len(r.skipped)
                msg = (f"the first bad commit is one of {len(r.candidates)} candidates: {n_skip} commit(s) tried "
                       f"and untestable, and the first bad one after them")
            res = self._base(r.status, code, msg)
            res["first_bad"] = None
        res["candidates"] = cands
        res["skipped"] = list(r.skipped)
        res["flaky"] = list(r.flaky)
        res["untested"] = list(r.untested)
        res["steps"] = steps
        res["report"] = self._report(res)
        return res

    # -- report and recording -------------------------------------------------------

    def _range_text(self) -> str:
        sp = self.spec
        goods = sp.good_labels or [g[:10] for g in sp.goods]
        return f"{','.join(goods)}..{sp.bad_ref}"

    def _did_text(self, res: dict) -> str:
        """The bisection as a command, with every option that shapes a verdict (the timeout as
        calibrated), so two attempts with different options never read the same."""
        sp = self.spec
        words = ["dbglog", "bisect", "git"]
        for g in sp.good_labels or sp.goods:
            words += ["--good", g]
        words += ["--bad", sp.bad_ref]
        if sp.first_parent:
            words.append("--first-parent")
        if sp.match:
            words += ["--match", sp.match]
        if sp.any_failure:
            words.append("--any-failure")
        if sp.build:
            words += ["--build", sp.build]
        if res.get("timeout"):
            words += ["--timeout", f"{res['timeout']:g}"]
        if sp.repeat != 1:
            words += ["--repeat", str(sp.repeat)]
        if self.jobs != 1:
            words += ["--jobs", str(self.jobs)]
        if sp.launcher:
            words += ["--launcher", sp.launcher]
        if sp.max_steps:
            words += ["--max-steps", str(sp.max_steps)]
        if sp.rate:
            words.append("--rate")
        elif sp.flaky is True:
            words.append("--flaky")
        if (sp.flaky or sp.rate) and sp.confidence:
            words += ["--confidence", f"{sp.confidence:g}"]
        for c in sp.captures:
            words += ["--capture", c]
        words += server_words(sp)
        text = f"{shlex.join(words)} -- {self._cmd_text()}"
        cwd = sp.cwd_rel
        return text if cwd == "." else f"cd {shlex.quote(cwd)} && {text}"

    def _cmd_text(self) -> str:
        return " ".join(shlex.quote(c) for c in self.spec.cmd)

    def _report(self, res: dict) -> str:
        lines = []
        st = res["status"]
        if st == "found":
            fb = res["first_bad"]
            if res.get("probability") is not None:  # probabilistic: the verdict with its probability
                lines.append(f"First bad commit (probability {res['probability']:.3f} under the {res['mode']} model; "
                             f"it failed {res['verification']['culprit']['failed']} of "
                             f"{res['verification']['culprit']['runs']} runs, its parent "
                             f"{res['verification']['parent']['failed']} of {res['verification']['parent']['runs']})"
                             f": {fb['commit']}")
            else:
                lines.append(f"First bad commit: {fb['commit']}")
            lines.append(f"  {fb['subject']}")
            lines.append(f"  Author: {fb['author']}  Date: {fb['date']}" + ("  (merge)" if fb["merge"] else ""))
            if fb["diffstat"]:
                lines += ["  " + ln for ln in fb["diffstat"].splitlines()]
        elif st == "refused":
            lines.append(res["message"])
            for s in res["steps"]:
                if s["role"]:
                    what = _what(s["outcome"], s["signature"])
                    if s["outcome"] in ("pass", "fail") and not s["signature"] and (s["reason"] or "").startswith(
                            s["outcome"]):
                        what = ""  # ("pass" then "passed": one word says it)
                    said = " ".join(x for x in (what, s["reason"]) if x)
                    lines.append(f"  {s['role']} {s['short']}: {s['verdict']} — {said}".rstrip())
        else:
            lines.append(res["message"] + ":")
            for c in res["candidates"]:
                lines.append(f"  {c['short']} {c['subject'][:50]} — {c['verdict'] or 'not tried'}: {c['reason']}")
        n = len(res["steps"])
        lines.append(f"{n} step(s), {res['runs']} run(s) now, {res['cached_steps']} from cache, "
                     f"{res['elapsed_s']:.1f}s; session {self.sid} (`dbglog bisect log {self.sid}`)")
        rec = res.get("recorded")
        if rec:
            lines.append(f"Recorded in {rec['path']} (section \"{rec['section']}\")"
                         + (f", attempt {rec['attempt']}" if rec.get("attempt") else ""))
        elif st != "interrupted":
            lines.append("No current investigation: kept in the bisection session only (use -i ID to record it)")
        return "\n".join(lines)

    def section_body(self, res: dict) -> str:
        sp = self.spec
        out = []
        goods = ", ".join(f"`{lbl}` ({g[:10]})" for lbl, g in zip(sp.good_labels or sp.goods, sp.goods))
        out.append(f"**Range:** good {goods} .. bad `{sp.bad_ref}` ({sp.bad[:10]})"
                   + (" — first-parent" if sp.first_parent else ""))
        opts = []
        if sp.build:
            opts.append(f"build `{sp.build}`")
        if sp.launcher:
            opts.append(f"launcher `{sp.launcher}`")
        opts.append(f"repeat {sp.repeat}")
        if res.get("timeout"):
            opts.append(f"timeout {res['timeout']:g}s")
        opts.append(f"jobs {self.jobs}")
        out.append(f"**Command:** `{self._cmd_text()}` ({', '.join(opts)})")
        if res.get("target"):
            out.append(f"**Bad means:** {res['target']}")
        out.append(f"**Session:** `{self.sid}` (`dbglog bisect log {self.sid}`)")
        out.append("")
        out.append("| # | Commit | Subject | Verdict | Outcome | Why | Duration | Runs |")
        out.append("|---|---|---|---|---|---|---|---|")
        for i, s in enumerate(res["steps"], 1):
            commit = f"`{s['short']}`" + (f" ({s['role']})" if s["role"] else "")
            runs = S.runs_link(self.recs, s["runs"]) if s["runs"] else ""
            src = "" if s["source"] == "run" else f" ({s['source']})"
            out.append(f"| {i} | {commit} | {S.md_cell(s['subject'][:70])} | {s['verdict']}{src} | "
                       f"{S.md_cell(_what(s['outcome'], s['signature']))} | {S.md_cell(s['reason'])} | "
                       f"{(s['duration_s'] or 0):.2f}s | {runs} |")
        out.append("")
        st = res["status"]
        if res.get("probability") is not None:
            out.append(f"**Model:** {res['mode']} — P(fail | bad) ≈ {res['rates']['fail_if_bad']:.2f}, "
                       f"P(fail | good) ≈ {res['rates']['fail_if_good']:.2f}; {res['repro_runs']} runs weighed, "
                       f"stop at probability {res['confidence']:g} or {res['budget']} runs")
        if st == "found" and res.get("probability") is not None:
            fb, vf = res["first_bad"], res["verification"]
            out.append(f"**Result:** first bad commit `{fb['commit']}` — {fb['subject']} — with probability "
                       f"{res['probability']:.3f}, not certainty (it failed {vf['culprit']['failed']} of "
                       f"{vf['culprit']['runs']} runs, its parent {vf['parent']['failed']} of {vf['parent']['runs']})")
            out.append(f"- Author: {fb['author']}")
            out.append(f"- Date: {fb['date']}" + (" (a merge commit)" if fb["merge"] else ""))
        elif st == "found":
            fb = res["first_bad"]
            out.append(f"**Result:** first bad commit `{fb['commit']}` — {fb['subject']}")
            out.append(f"- Author: {fb['author']}")
            out.append(f"- Date: {fb['date']}" + (" (a merge commit)" if fb["merge"] else ""))
            if fb["diffstat"]:
                out += ["", "```", fb["diffstat"].replace("```", "'''"), "```"]
        elif st == "refused":
            out.append(f"**Result:** refused — {res['message'].removeprefix('bisection refused: ')}")
        else:
            out.append(f"**Result:** {st} — {res['message']}")
            out.append("")
            for c in res["candidates"]:
                out.append(f"- `{c['short']}` {S.md_cell(c['subject'][:70])} — {c['verdict'] or 'not tried'}: "
                           f"{S.md_cell(c['reason'])}")
        return "\n".join(out)

    def _record(self, res: dict) -> None:
        if not self.inv:
            return
        if not self.recs.store.exists(self.inv):
            return
        heading = f"## Bisection: {self._range_text()} ({self.sid})"
        from dbglog.bisect.chart import write_beside_mirror  # (the chart beside logs/: dbglog report's engine)

        S.record_section(self.recs, self.inv, heading,
                         self.section_body(res) + write_beside_mirror(self.recs, self.inv, self.sid, res))
        rec = {"investigation": self.inv, "section": heading.removeprefix("## "),
               "path": self.recs.path_for(self.inv)}
        key = f"{res['status']}:{(res.get('first_bad') or {}).get('commit', '')}"
        if res["status"] != "refused" and self.spec.recorded != key:
            did = self._did_text(res)
            nsteps = len(res["steps"])
            if res["status"] == "found" and res.get("probability") is not None:
                fb = res["first_bad"]
                a = self.recs.add_attempt(
                    self.inv, title=f"Bisect ({res['mode']}): first bad commit {fb['short']} {fb['subject']} "
                                    f"(P={res['probability']:.2f})"[:200],
                    hypothesis=f"The intermittent failure ({res['target']}) was introduced between "
                               f"{self._range_text()}.",
                    did=did, result=res["message"],
                    conclusion=f"Probably {fb['short']} \"{fb['subject']}\" (probability {res['probability']:.3f}, "
                               "not certain): " + ", ".join(f"{x['short']} {x['probability']:.3f}"
                                                             for x in res["posterior"][:4]),
                    outcome="worked", runs=res["verification"].get("runs_ids", [])[-3:])
            elif res["status"] == "found":
                fb = res["first_bad"]
                fb_step = next((s for s in res["steps"] if s["commit"] == fb["commit"]), None)
                a = self.recs.add_attempt(
                    self.inv, title=f"Bisect: first bad commit {fb['short']} {fb['subject']}"[:200],
                    hypothesis=f"The failure ({res['target']}) was introduced between {self._range_text()}.",
                    did=did,
                    result=f"{nsteps} steps: first bad commit {fb['commit']} ({fb['subject']}), by {fb['author']} "
                           f"on {fb['date']}.",
                    conclusion=f"{fb['short']} \"{fb['subject']}\" introduced the failure; its parent"
                               f"{'s are' if len(fb['parents']) > 1 else ' is'} good. Changed:\n{fb['diffstat']}",
                    outcome="worked", runs=(fb_step or {}).get("runs", [])[-3:])
            else:
                a = self.recs.add_attempt(
                    self.inv, title=f"Bisect {self._range_text()}: {res['status']}",
                    hypothesis=f"The failure ({res['target']}) was introduced between {self._range_text()}.",
                    did=did, result=res["message"],
                    conclusion="Candidates: " + ", ".join(f"{c['short']} ({c['verdict'] or 'not tried'})"
                                                           for c in res["candidates"]),
                    outcome="inconclusive")
            rec["attempt"] = a.number
            self.spec.recorded = key
            self.db.update_spec(self.sid, self.spec.to_stored())
        res["recorded"] = rec
        res["report"] = self._report(res)


def _slim(res: dict) -> dict:
    return {k: v for k, v in res.items() if k not in ("steps", "report")}


# --- entry points ------------------------------------------------------------------------


def start(recs, spec: HistorySpec, *, cwd=None, inv_ref: str | None = None, progress: bool = True) -> dict:
    """Create a git bisection session and run it to the end (see the module docstring)."""
    spec.validate()
    bad_ref = spec.bad_ref
    cwd = Path(cwd or os.getcwd()).resolve()
    quick = _resolve_ends(cwd, [bad_ref, *spec.good_refs])
    if quick is not None:
        repo, (bad, *good_shas) = quick
    else:  # one question at a time, for the precise refusal
        repo = repo_root(cwd)
        bad, good_shas = rev(repo, bad_ref), None
    rel = os.path.relpath(cwd, repo)
    cwd_rel = "." if rel.startswith("..") else rel
    goods: list[str] = []
    labels: list[str] = []
    notes: list[str] = []
    # With every end resolved, the range's graph (needed below anyway; memoised) answers the usual
    # case without a git merge-base: a good end on its boundary is a parent of a commit reachable
    # from bad, so an ancestor of it. Any other good end (hidden behind another, off the history,
    # swapped) is asked as before.
    boundary: set[str] = set()
    if good_shas:
        try:
            boundary = set(history_graph(repo, bad, list(dict.fromkeys(good_shas)))[1])
        except GitError:
            pass
    for i, ref in enumerate(spec.good_refs):
        g = good_shas[i] if good_shas is not None else rev(repo, ref)
        if g == bad:
            raise DbglogError(f"--good {ref} and --bad {bad_ref} are the same commit")
        mbs = [g] if g in boundary else merge_bases(repo, g, bad)
        if mbs == [bad]:
            raise DbglogError(f"the bad end {bad_ref} is an ancestor of the good end {ref}: are --good and --bad "
                              "swapped? (to find a fix, swap them and use a repro that fails when fixed)")
        if mbs == [g]:
            pairs = [(g, g[:10] if ref == g else ref)]
        else:
            if not mbs:
                if git(repo, "rev-parse", "--is-shallow-repository", check=False).strip() == "true":
                    # a shallow clone cuts the history between them: it is there, just not fetched
                    raise DbglogError(f"--good {ref} and --bad {bad_ref} share no history in this shallow clone: "
                                      "`git fetch --unshallow` fetches the rest")
                raise DbglogError(f"--good {ref} and --bad {bad_ref} share no history")
            pairs = [(m, f"merge-base({ref})") for m in mbs]
            notes.append(f"{ref} is not an ancestor of {bad_ref}: its merge base(s) with it are verified as good "
                         "ends instead")
        for g2, lbl in pairs:
            if g2 not in goods:
                goods.append(g2)
                labels.append(lbl)
    parents, _, _ = history_graph(repo, bad, goods)
    size = len(parents)
    if size == 0:
        raise DbglogError(f"no commits between {', '.join(spec.good_refs)} and {bad_ref}")
    inv_id = None
    if inv_ref:
        inv_id = recs.resolve(inv_ref)
    else:
        cur = recs.current()
        inv_id = cur if cur and recs.store.exists(cur) else None
    if bad_ref == bad:
        bad_ref = bad[:10]
    stored = replace(spec, repo=str(repo), cwd_rel=cwd_rel, bad=bad, bad_ref=bad_ref, goods=goods, good_labels=labels,
                     size_hint=math.ceil(math.log2(size + 1)) + 1 + len(goods), candidates=size, notes=notes,
                     calibrated=None, recorded=None, flaky=bool(spec.flaky))
    db = S.SessionDB(recs.store)
    sid = db.create(KIND, stored.to_stored(), inv_id)
    return resume(recs, db.get(sid), progress=progress)


def resume(recs, session: dict, *, progress: bool = True) -> dict:
    """Run (or continue) a session to the end; finished steps are replayed, not re-run."""
    d = _Driver(recs, session, progress)
    stale = lambda: remove_worktrees(d.repo, d.wt_root)  # noqa: E731 - a killed driver's, then ours
    stash = d.wt_root.with_name(d.sid + ".stash")
    return lifecycle.run(recs, d.sid, KIND, d.drive, prepare=lambda: (stale(), keep_stash(d.repo, stash)),
                         cleanup=(d.progress.close, d.settle_ahead, d.end_python_probe, stale,
                                  lambda: restore_stash(d.repo, stash)), conclude=d.conclude)


def cleanup(recs, session: dict) -> None:
    sp = HistorySpec.from_stored(session["spec"])
    root = _worktree_root(recs, session["id"], sp.scratch)
    remove_worktrees(sp.repo or None, root)
    restore_stash(sp.repo or None, root.with_name(session["id"] + ".stash"))


def mark_key(recs, session: dict, ref: str) -> str:
    repo = HistorySpec.from_stored(session["spec"]).repo
    if not Path(repo).is_dir():
        raise DbglogError(f"the repository {repo} of bisection {session['id']} is gone")
    return rev(repo, ref)


def server_words(sp) -> list[str]:
    """The server-shaped part of a command line (``--server``, ``--ready`` and their timeouts): a
    record without them would re-run the client against no server."""
    words: list[str] = []
    if getattr(sp, "server", None):
        words += ["--server", sp.server, "--ready", sp.ready or ""]
        if sp.ready_timeout and sp.ready_timeout != 120.0:
            words += ["--ready-timeout", f"{sp.ready_timeout:g}"]
    if getattr(sp, "idle_timeout", None):
        words += ["--idle-timeout", f"{sp.idle_timeout:g}"]
    return words


def describe(recs, session: dict) -> dict:
    sp = HistorySpec.from_stored(session["spec"])
    db = S.SessionDB(recs.store)
    trials = db.trials(session["id"])
    info = {"range": f"{','.join(sp.good_labels or sp.goods)}..{sp.bad_ref}",
            "repo": sp.repo, "command": shlex.join([*server_words(sp), "--", *sp.cmd]) if sp.server
            else " ".join(shlex.quote(c) for c in sp.cmd),
            "steps_done": len(trials), "calibrated": bool(sp.calibrated)}
    if sp.calibrated:
        info["bad_means"] = S.Target(**sp.calibrated["target"]).describe()
        info["timeout"] = sp.calibrated["timeout"]
    if not Path(sp.repo).is_dir():
        return info
    try:
        parents, boundary, _ = history_graph(sp.repo, sp.bad, sp.goods)
    except GitError:
        return info
    hb = HistoryBisect(parents, sp.bad, list(sp.goods) + boundary, first_parent=sp.first_parent,
                       max_runs=sp.max_steps)
    ends = {sp.bad, *sp.goods}
    for t in trials:
        if t.key not in ends:
            hb.record(t.key, t.verdict)
    r = hb.result
    info.update(candidates_left=len(r.candidates), estimated_steps_left=hb.estimated_steps_left(sp.jobs),
                search=r.status, skipped=[c[:10] for c in r.skipped])
    if r.first_bad:
        info["first_bad"] = r.first_bad
    if trials:
        last = trials[-1]
        info["last_step"] = f"{last.key[:10]} {last.verdict.value} {last.reason}".strip()
    if sp.flaky or sp.rate:
        from dbglog.bisect import flaky

        info["posterior"] = flaky.posterior_of(_Driver(recs, session, progress=False))
    return info


# --- demo --------------------------------------------------------------------------------

DEMO_CHECK = """\
import sys
level = int(open("tiling.txt").read())
if level >= 4:
    raise RuntimeError("CUDA error: an illegal memory access was encountered (tile %d)" % level)
print("attention_fwd ok, tile", level)
"""


def make_repo(path: Path, n: int, content: Callable[[int], dict], subjects: Callable[[int], str] | None = None,
              branch: str = "main") -> list[str]:
    """A linear repo of ``n`` commits built with ``git fast-import`` (fast); returns the shas, oldest first."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", branch, str(path)], check=True, env=_git_env())
    chunks = []
    for i in range(n):
        msg = (subjects(i) if subjects else f"commit {i}").encode()
        chunks.append(f"commit refs/heads/{branch}\nmark :{i + 1}\n"
                      f"author Dev <dev@example.com> {1700000000 + i * 60} +0000\n"
                      f"committer Dev <dev@example.com> {1700000000 + i * 60} +0000\n".encode())
        chunks.append(f"data {len(msg)}\n".encode() + msg + b"\n")
        if i:
            chunks.append(f"from :{i}\n".encode())
        for name, data in content(i).items():
            b = data.encode()
            chunks.append(f"M 644 inline {name}\ndata {len(b)}\n".encode() + b + b"\n")
        chunks.append(b"\n")
    subprocess.run(["git", "-C", str(path), "fast-import", "--quiet"], input=b"".join(chunks), check=True,
                   env=_git_env())
    subprocess.run(["git", "-C", str(path), "checkout", "-q", "-f", branch], check=True, env=_git_env())
    return git(path, "rev-list", "--reverse", branch).split()


def demo(recs, inv_id: str, quiet: bool) -> dict:
    """`dbglog demo`: bisect a generated 24-commit repo where commit 13 breaks a kernel."""
    import sys

    import click

    repo = recs.ws.root / "demo-repo"
    bad_at = 13
    make_repo(repo, 24, lambda i: {"tiling.txt": str(4 if i >= bad_at else 2) + "\n", "check.py": DEMO_CHECK,
                                   "version.txt": f"{i}\n"},
              lambda i: "Use 4-wide tiles in attention_fwd" if i == bad_at else f"Refactor step {i}")
    if not quiet:
        click.secho("\n== dbglog bisect git --good HEAD~23 --bad HEAD --timeout 20 -- python check.py", bold=True)
    res = start(recs, HistorySpec(good_refs=["HEAD~23"], bad_ref="HEAD", cmd=[sys.executable, "check.py"],
                                  timeout=20.0, grace=1.0), inv_ref=inv_id, cwd=repo, progress=not quiet)
    if not quiet:
        click.echo(res["report"])
    return res
