"""Finding and creating a workspace: the `.dbglog/` directory and its `logs/` mirror.

Discovery walks up from the current directory like git does; ``DBGLOG_DIR`` names the
`.dbglog` directory explicitly. A workspace is created on first write at the git root
(or the current directory outside git).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from dbglog.util.errors import DbglogError

# Written by dbglog into .dbglog/. It ignores itself too, so `git status` stays clean after
# `dbglog init` (an untracked .dbglog/.gitignore invited committing it); in git the same is also
# said by .git/info/exclude (merge.configure_git), which does not depend on any file in the tree.
GITIGNORE = """\
# Written by dbglog: the database and run outputs are local caches, never committed.
# The markdown mirror in logs/ is the shared, reviewable record. (This file ignores itself.)
*
!config.toml
!templates/
!templates/**
"""
# What older versions wrote (it let itself through, so it showed as untracked): replaced on sight
# unless it was committed.
OLD_GITIGNORE = """\
# Written by dbglog: the database and run outputs are local caches, never committed.
# The markdown mirror in logs/ is the shared, reviewable record.
*
!.gitignore
!config.toml
!templates/
!templates/**
"""


@dataclass(frozen=True)
class Workspace:
    dir: Path  # the .dbglog directory

    @property
    def root(self) -> Path:
        return self.dir.parent

    @property
    def db_path(self) -> Path:
        return self.dir / "dbglog.db"

    @property
    def logs_dir(self) -> Path:
        return self.root / "logs"

    @property
    def runs_dir(self) -> Path:
        return self.dir / "runs"

    @property
    def config_path(self) -> Path:
        return self.dir / "config.toml"

    @property
    def templates_dir(self) -> Path:
        return self.dir / "templates"

    @property
    def exists(self) -> bool:
        return self.dir.is_dir()

    def create(self) -> "Workspace":
        for d in (self.dir, self.logs_dir, self.runs_dir):
            if d.exists() and not d.is_dir():  # mkdir would fail with "File exists", read as a bug
                raise DbglogError(f"{d} is a file, not a directory: dbglog keeps its {d.name} there; "
                                  "move the file away; nothing was changed")
        if not self.dir.exists():
            _CREATED.append((self, not self.logs_dir.exists()))
        self.dir.mkdir(parents=True, exist_ok=True)
        self.logs_dir.mkdir(exist_ok=True)
        self.runs_dir.mkdir(exist_ok=True)
        gi = self.dir / ".gitignore"
        if not gi.exists():
            gi.write_text(GITIGNORE)
        # (git's merge driver and excludes: Records registers them on the first command in a clone)
        return self

    def upgrade_gitignore(self) -> None:
        """Replace the .gitignore an older dbglog wrote (which showed as untracked) unless it is
        committed."""
        import subprocess

        gi = self.dir / ".gitignore"
        try:
            if gi.read_text() != OLD_GITIGNORE:
                return
            tracked = subprocess.run(["git", "ls-files", "--error-unmatch", ".gitignore"], cwd=self.dir,
                                     capture_output=True, stdin=subprocess.DEVNULL).returncode == 0
            if not tracked:
                gi.write_text(GITIGNORE)
        except (OSError, UnicodeDecodeError):
            pass


#: workspaces this process created, each with whether it created their logs/ too (``drop_created``)
_CREATED: list[tuple[Workspace, bool]] = []


def drop_created() -> None:
    """A command that reports an error has changed nothing: the workspace it set up on its way (``import``,
    ``new``, ``run`` in a directory that had none) is removed again, when it holds no investigation and no
    run. (The local git registration of the merge driver, outside the working tree, stays.)"""
    import shutil
    import sqlite3

    while _CREATED:
        ws, logs_too = _CREATED.pop()
        try:
            if ws.runs_dir.is_dir() and any(ws.runs_dir.iterdir()):
                continue  # a run's output is the user's evidence, whatever failed after it
            if ws.db_path.exists():
                con = sqlite3.connect(f"file:{ws.db_path}?mode=ro", uri=True)
                try:
                    held = con.execute("SELECT count(*) FROM investigations").fetchone()[0]
                except sqlite3.Error:
                    held = 0  # (no schema yet)
                finally:
                    con.close()
                if held:
                    continue
            shutil.rmtree(ws.dir)
            if logs_too and ws.logs_dir.is_dir() and not any(ws.logs_dir.iterdir()):
                ws.logs_dir.rmdir()
        except OSError:
            pass  # (never a reason to hide the error being reported)


def keep_created() -> None:
    """The command succeeded: what it set up stays (a server's later failing call must not remove it)."""
    _CREATED.clear()


def _git_root(start: Path) -> Path | None:
    for p in (start, *start.parents):
        if (p / ".git").exists():
            return p
    return None


def find(cwd: Path | None = None) -> Workspace:
    """The workspace that applies here; it may not exist yet (see ``Workspace.exists``)."""
    return _text_path(_find(cwd))


def _text_path(ws: Workspace) -> Workspace:
    """Refuse a workspace whose path is not valid UTF-8 (before anything is made or run): the
    database, logs/ and every run record hold paths as text, and such a path failed half-way."""
    check_text_path(ws.dir, "the workspace's path", "rename the directory, or set DBGLOG_DIR to a "
                    ".dbglog directory whose path is")
    return ws


def check_text_path(path: Path, what: str, fix: str) -> None:
    """One line (``DbglogError``) when ``path`` does not decode as UTF-8; ``fix``: what to do, ending in
    "... whose path is" (valid UTF-8 follows)."""
    raw = os.fsencode(path)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        shown = raw.decode("utf-8", "backslashreplace")
        raise DbglogError(f"{what} {shown} is not valid UTF-8, which dbglog records paths in: {fix} "
                          "valid UTF-8") from None


def _find(cwd: Path | None) -> Workspace:
    env = os.environ.get("DBGLOG_DIR")
    if env:
        p = Path(env).expanduser()
        if p.exists() and not p.is_dir():
            raise DbglogError(f"DBGLOG_DIR={env} is not a directory")
        if (p / ".dbglog").is_dir() or (p / ".git").exists():
            # a project's root, not its .dbglog: the database would land among the sources and logs/
            # in the directory above the project
            raise DbglogError(f"DBGLOG_DIR={env} is a project's root; it names the .dbglog directory itself: "
                              f"DBGLOG_DIR={p / '.dbglog'}")
        return Workspace(p.resolve())
    cwd = (cwd or Path.cwd()).resolve()
    for p in (cwd, *cwd.parents):
        if (p / ".dbglog").is_dir():
            return Workspace(p / ".dbglog")
    root = _git_root(cwd) or cwd
    return Workspace(root / ".dbglog")
