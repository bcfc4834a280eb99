"""Keeping the database and the markdown mirror in `logs/` true to each other.

Baseline: ``mirror_files`` remembers, per file, the size/mtime/sha256 dbglog last wrote or
imported and the database revision it showed. Before every command:

1. a stat pass (no reads) compares ``logs/*.md`` with its baseline: a bounded sample of files
   while logs/'s own stamp says no entry was added, removed or renamed, else every file (see "the
   listing manifest" for what that guarantees);
2. only files whose size or mtime moved are read and hashed; a changed hash means the file
   was edited outside dbglog (or arrived by ``git pull``) and it is parsed and imported;
3. if the database also moved past the revision the file showed, that is a conflict: the
   database side is written next to the file as ``<name>.dbglog-conflict.md`` and the command
   stops, so neither side is lost.

Writes happen inside the caller's ``BEGIN IMMEDIATE`` transaction, so two dbglog processes
never import the same edit twice.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path

from dbglog.util import recache, redact
from dbglog.util.errors import ConflictError, DbglogError
from dbglog.util.fsutil import atomic_write, sha256_hex
from dbglog.kb.store import Store
from dbglog.util.workspace import Workspace
from dbglog.util import jsonsafe

CONFLICT_SUFFIX = ".dbglog-conflict.md"


@dataclass
class SyncReport:
    imported: list[str] = field(default_factory=list)  # paths re-read into the database
    added: list[str] = field(default_factory=list)  # new files -> new investigations
    moved: list[tuple[str, str]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # baseline files no longer on disk
    pruned: list[str] = field(default_factory=list)  # investigations removed by --prune
    resolved: list[str] = field(default_factory=list)  # conflict copies set aside by --resolve
    ignored: list[str] = field(default_factory=list)  # markdown in logs/ that is not a dbglog file
    links: list[str] = field(default_factory=list)  # symbolic links at a mirror file's path: skipped
    misplaced: list[str] = field(default_factory=list)  # "### Attempt N" headings written outside "## Attempts"

    @property
    def changed(self) -> bool:
        return bool(self.imported or self.added or self.moved or self.pruned)

    def to_dict(self) -> dict:
        return {"imported": self.imported, "added": self.added,
                "moved": [list(m) for m in self.moved], "missing": self.missing,
                "pruned": self.pruned, "resolved": self.resolved, "ignored": self.ignored, "links": self.links,
                "misplaced": self.misplaced}


def mirror_files(ws: Workspace, links: list[str] | None = None) -> dict[str, os.stat_result]:
    """Relative path -> stat for every mirror file (conflict copies and temp files excluded); the
    symbolic links among them, never followed, go to ``links``."""
    out = {}
    logs = ws.logs_dir
    try:
        entries = list(os.scandir(logs))
    except FileNotFoundError:
        return out
    for e in entries:
        name = e.name
        if not name.endswith(".md") or name.startswith(".") or name.endswith(CONFLICT_SUFFIX):
            continue
        # A symlink is not a mirror file: following one would read (and import) whatever it points
        # at, outside logs/, and writing the investigation would turn the link into a file.
        if e.is_file(follow_symlinks=False):
            out[f"logs/{name}"] = e.stat(follow_symlinks=False)
        elif links is not None and e.is_symlink():
            links.append(f"logs/{name}")
    return out


IGNORED_KEY = "ignored_files"
_OUR_FRONT = recache.compile(rb"\A---\r?\n(?:(?!---\r?\n).*\r?\n){0,40}?id:[ \t]*\S", re.M)


def looks_like_ours(data: bytes) -> bool:
    """A dbglog mirror file starts with front matter holding an ``id:``. Other markdown that
    happens to live in `logs/` (a README, notes) is left alone instead of blocking every command."""
    return _OUR_FRONT.match(data[:8192]) is not None


def ignored_files(store: Store) -> dict[str, list[int]]:
    """Foreign files in `logs/` seen before: path -> [size, mtime_ns] (so the stat pass skips them)."""
    raw = store.get_meta(IGNORED_KEY)
    return jsonsafe.loads(raw) if raw else {}


def is_stale(store: Store, ws: Workspace, info: dict | None = None) -> bool:
    """The cheap check: does a mirror file differ (by size/mtime) from its baseline, or was an entry
    added to, removed from or renamed in logs/?

    While logs/'s own stamp is the one a remembered manifest holds (see "the listing manifest" below),
    no listing is read: one lstat for each of a bounded set of files (``HOT`` + ``WINDOW``), whatever
    the number of investigations. Else a full listing: one lstat per file (~3 ms per 1,000), stopping
    at the first difference, which remembers a new manifest when it finds everything in order.
    Symbolic links are never followed (a loop, a dangling link or a link out of the workspace must
    not lock every command out): their names go to ``info["links"]``; ``info["listed"]``: the manifest
    was trusted (then no temp file of a writer was seen); ``info["temp"]``: a listing saw one.
    """
    info = {} if info is None else info
    info.setdefault("links", [])
    info["listed"] = info["temp"] = False
    import time

    t0 = time.time_ns()  # (before the stamp: see remember_listing)
    stamp = dir_stamp(ws)
    if stamp is None:
        return store.conn.execute("SELECT 1 FROM mirror_files LIMIT 1").fetchone() is not None
    n_base = store.conn.execute("SELECT count(*) FROM mirror_files").fetchone()[0]
    known = known_listing(ws, stamp, n_base, t0)
    if known is not None:  # no entry added, removed or renamed since a pass found everything in order
        info["links"].extend(known.links)
        info["listed"] = True
        rows, cursor = _sample(store, known)
        if _content_moved(ws, rows):
            return True
        if not getattr(store, "readonly", False):
            _PENDING[_listing_path(ws)] = replace(known, cursor=cursor)
        return False
    return _full_pass(store, ws, stamp, n_base, t0, info)


def _full_pass(store: Store, ws: Workspace, stamp: str, n_base: int, t0: int, info: dict) -> bool:
    """``is_stale`` by the listing of logs/: every entry, one lstat per file."""
    base = {p: (size, mtime) for p, size, mtime in store.conn.execute(
        "SELECT path, size, mtime_ns FROM mirror_files")}
    foreign = {p: tuple(v) for p, v in ignored_files(store).items()}
    seen = 0
    found: list[str] = []
    temp = False
    with os.scandir(ws.logs_dir) as entries:
        for e in entries:
            name = e.name
            if not name.endswith(".md") or name.startswith(".") or name.endswith(CONFLICT_SUFFIX):
                temp = temp or (name.startswith(".") and name.endswith(".tmp"))
                continue
            if e.is_symlink():
                found.append("logs/" + name)
                continue
            if not e.is_file(follow_symlinks=False):
                continue
            st = e.stat(follow_symlinks=False)
            b = base.get("logs/" + name)
            if b is None:
                if foreign.get("logs/" + name) == (st.st_size, st.st_mtime_ns):
                    continue
                return True
            if b[0] != st.st_size or b[1] != st.st_mtime_ns:
                return True
            seen += 1
    info["links"].extend(found)
    info["temp"] = temp
    if seen != len(base):
        return True
    if not temp and not getattr(store, "readonly", False):  # (a writer's temp file: look again next time;
        remember_listing(ws, stamp, n_base, found, t0)      # a read-only workspace: no file created)
    return False


# --- the listing manifest (issue 26, "Scale") ----------------------------------------------
# What the check costs must not grow with the number of investigations. The manifest
# (.dbglog/cache/logs-listing, a cache: losing it costs one listing) says: at directory stamp S, logs/
# held exactly the baseline's files, in order. What each kind of change does:
#
# * An entry added, removed or renamed in logs/ changes the directory's stamp (mtime, inode, size):
#   a new or deleted file, every dbglog write (temp file + rename), git checkout/pull/merge/stash
#   (git unlinks and creates), an editor that saves by rename (vim, emacs, sed -i, rsync). The next
#   command sees a stamp other than the manifest's and lists logs/: such changes are never missed.
#   "Racy" stamps are not remembered: a change within the clock tick of the stamp (the kernel stamps
#   with a coarse clock, 1-10 ms) would leave the same mtime, so logs/ must have been changed RACY_NS
#   before a listing is remembered. The one exception is dbglog's own write: after it, the manifest
#   moves to the stamp the write left (else every command after a write would list everything), so
#   an entry another program adds in the moment of a dbglog write (between its rename and the end of
#   its transaction, or within the clock tick before) is seen by the next full listing, which happens
#   at least every RELIST_NS.
# * A file edited in place (`>>`, nano, VS Code, `cp` over it) changes only that file's size/mtime.
#   Every command lstats the HOT files dbglog wrote or took in last and the current investigation's
#   file -- the ones being worked on -- and a WINDOW of the rest, rotating in path order: every file is
#   checked at least once every ceil(files / WINDOW) commands (every command up to WINDOW files).
#   A write never replaces an edit it did not see: the file a write replaces is checked first
#   (``unchanged_since``), and `dbglog sync` and `dbglog doctor` look at every file.

RACY_NS = 100_000_000
HOT = 32  # files dbglog wrote or took in last, checked by every command
WINDOW = 256  # other baseline files checked by every command, rotating (~1.5 ms at 10,000 files)
RELIST_NS = 600 * 1_000_000_000  # a full listing at least this often


@dataclass(frozen=True)
class Listing:
    stamp: str  # logs/'s dir_stamp when the listing was taken (or dbglog's own write left it)
    n_base: int  # baseline rows then: a database restored or rebuilt since is not trusted
    links: tuple[str, ...] = ()  # the symbolic links in logs/ then
    listed_ns: int = 0  # when the last full listing was taken
    cursor: str = ""  # the baseline path the next window starts after
    hot: tuple[str, ...] = ()

    def text(self) -> str:
        return json.dumps({"stamp": self.stamp, "n_base": self.n_base, "links": list(self.links),
                           "listed_ns": self.listed_ns, "cursor": self.cursor, "hot": list(self.hot)})


# Manifests to write once the command succeeds (``flush_listing``): a command that reports an error
# changes nothing, its cache included. Also what this process knows before it is written.
_PENDING: dict[Path, Listing] = {}
# The last manifest this process kept, and when it was last written: a long-lived process (the MCP
# server) rotates its window in memory and writes the file again only when more than the cursor moved,
# or REWRITE_S after the last write (each write was ~3 ms of an MCP call on a busy machine).
_KEPT: dict[Path, tuple[Listing, float]] = {}
REWRITE_S = 2.0
_HOT_NOW: list[str] = []  # files this process wrote or took in, newest last


def dir_stamp(ws: Workspace) -> str | None:
    try:
        st = os.stat(ws.logs_dir)
    except OSError:
        return None
    return f"{st.st_mtime_ns}:{st.st_ino}:{st.st_dev}:{st.st_size}"


def _listing_path(ws: Workspace) -> Path:
    # (a cache file, not the database: a read-only command must not wait on another writer's lock)
    return ws.dir / "cache" / "logs-listing"


def _read_listing(ws: Workspace) -> Listing | None:
    path = _listing_path(ws)
    if path in _PENDING:
        return _PENDING[path]
    kept = _KEPT.get(path)
    if kept is not None and kept[0].stamp == dir_stamp(ws):
        return kept[0]
    try:
        d = jsonsafe.loads(path.read_text())
        return Listing(str(d["stamp"]), int(d["n_base"]), tuple(map(str, d["links"])), int(d["listed_ns"]),
                       str(d["cursor"]), tuple(map(str, d["hot"])))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def known_listing(ws: Workspace, stamp: str, n_base: int, now_ns: int) -> Listing | None:
    """The manifest when logs/ is as it remembers (the same stamp, as many baseline files, a full
    listing not older than RELIST_NS), else None."""
    known = _read_listing(ws)
    if known is None or known.stamp != stamp or known.n_base != n_base or now_ns - known.listed_ns > RELIST_NS:
        return None
    return known


def remember_listing(ws: Workspace, stamp: str, n_base: int, links: list[str], taken_ns: int) -> None:
    """Remember that logs/ at ``stamp`` (read at ``taken_ns``) holds the baseline's files (and
    ``links``), unless the stamp is racy. Written when the command succeeds (``flush_listing``)."""
    if taken_ns - int(stamp.split(":", 1)[0]) < RACY_NS:
        return
    old = _read_listing(ws)
    _PENDING[_listing_path(ws)] = Listing(stamp, n_base, tuple(sorted(links)), taken_ns,
                                          old.cursor if old else "", _hot(old))


def note_written(rel: str) -> None:
    """``rel`` was written or taken in by this process: one of the files checked by every command."""
    if rel in _HOT_NOW:
        _HOT_NOW.remove(rel)
    _HOT_NOW.append(rel)
    del _HOT_NOW[:-HOT]


def _hot(old: Listing | None) -> tuple[str, ...]:
    out = list(reversed(_HOT_NOW))
    out += [p for p in (old.hot if old else ()) if p not in out]
    return tuple(out[:HOT])


def after_own_write(store: Store, ws: Workspace, before: str, after: str | None) -> None:
    """dbglog's own write moved logs/ from stamp ``before`` (checked in order) to ``after``: the
    manifest for ``before``, if any, now holds for ``after`` (see the manifest's notes above)."""
    old = _read_listing(ws)
    if old is None or old.stamp != before or after is None:
        return
    if before.rsplit(":", 1)[1] != after.rsplit(":", 1)[1]:
        # the directory's size moved: a write that replaces its own file leaves as many entries, so
        # this one made a new file or something else was added meanwhile (tmpfs, btrfs and xfs count
        # entries in a directory's size; ext4 counts blocks and mostly cannot tell): list it next time
        return
    n_base = store.conn.execute("SELECT count(*) FROM mirror_files").fetchone()[0]
    _PENDING[_listing_path(ws)] = replace(old, stamp=after, n_base=n_base, hot=_hot(old))


def flush_listing() -> None:
    """Write the manifests this process found (a command that succeeded). No fsync: a lost cache
    costs one listing."""
    import time

    while _PENDING:
        path, listing = _PENDING.popitem()
        now = time.monotonic()
        kept = _KEPT.get(path)
        if kept is not None and replace(kept[0], cursor=listing.cursor) == listing and now - kept[1] < REWRITE_S:
            _KEPT[path] = (listing, kept[1])
            continue
        _KEPT[path] = (listing, now)
        try:
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            path.parent.mkdir(exist_ok=True)
            tmp.write_text(listing.text())
            os.replace(tmp, path)
        except OSError:  # (a read-only workspace: only the shortcut is lost)
            pass


def drop_listing() -> None:
    """A command that reports an error writes no manifest (it changes nothing)."""
    _PENDING.clear()


def _sample(store: Store, known: Listing) -> tuple[list[tuple], str]:
    """The baseline rows checked this time: the hot files, the current investigation's file, and the
    WINDOW after ``known.cursor`` (wrapping around); with the cursor the next command starts after."""
    conn = store.conn
    hot = list(known.hot[:HOT])
    rows = conn.execute(
        f"SELECT path, size, mtime_ns FROM mirror_files WHERE path IN ({','.join('?' * len(hot))}) OR "
        "investigation_id = (SELECT value FROM meta WHERE key = 'current')", hot).fetchall()
    window = conn.execute("SELECT path, size, mtime_ns FROM mirror_files WHERE path > ? ORDER BY path LIMIT ?",
                          (known.cursor, WINDOW)).fetchall()
    if len(window) < WINDOW:  # the end of the baseline: on from its start
        window += conn.execute("SELECT path, size, mtime_ns FROM mirror_files WHERE path <= ? ORDER BY path "
                               "LIMIT ?", (known.cursor, WINDOW - len(window))).fetchall()
    cursor = window[-1][0] if window else ""
    return rows + window, cursor


def _content_moved(ws: Workspace, rows) -> bool:
    """Whether a baseline file's size or mtime moved (an in-place edit), or it is no longer a file."""
    root = str(ws.root) + os.sep
    lstat = os.lstat
    for rel, size, mtime in rows:
        try:
            st = lstat(root + rel)
        except OSError:
            return True
        if st.st_size != size or st.st_mtime_ns != mtime or not stat.S_ISREG(st.st_mode):
            return True
    return False


def unchanged_since(store: Store, ws: Workspace, stamp: str | None, rel: str) -> bool:
    """Inside a write: nothing was added, removed or renamed in logs/ since the check that found it
    in order (``stamp``), and ``rel`` (the file the write replaces) is as its baseline says -- so the
    write need not take anything in first. Anything else: False (the caller syncs)."""
    if stamp is None or dir_stamp(ws) != stamp:
        return False
    row = store.conn.execute("SELECT size, mtime_ns FROM mirror_files WHERE path = ?", (rel,)).fetchone()
    if row is None:
        return False
    try:
        st = os.lstat(ws.root / rel)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and (st.st_size, st.st_mtime_ns) == (row[0], row[1])


def spoil_if_edited(store: Store, ws: Workspace, rel: str) -> None:
    """Inside a write, before ``rel`` is replaced: when its bytes are not those of its baseline although its stat
    is (a same-size edit whose mtime was put back passed every stat pass, and the write lost it), the baseline is
    spoilt so that the sync the caller then runs takes the edit in. The write renders the file whole anyway."""
    row = store.conn.execute("SELECT size, mtime_ns, sha256 FROM mirror_files WHERE path = ?", (rel,)).fetchone()
    try:
        st = os.lstat(ws.root / rel)
        if row is None or not stat.S_ISREG(st.st_mode) or (st.st_size, st.st_mtime_ns) != (row[0], row[1]):
            return  # (no baseline, or a stat that differs: the sync sees it already)
        data = (ws.root / rel).read_bytes()
    except OSError:
        return
    if sha256(data) != row[2]:
        store.conn.execute("UPDATE mirror_files SET mtime_ns = -1 WHERE path = ?", (rel,))


# --- links in logs/ ------------------------------------------------------------------------


def link_problem(ws: Workspace, rel: str) -> str:
    """What a symbolic link in logs/ is, in words (``doctor``): a loop, dangling, or where it points."""
    path = ws.root / rel
    try:
        target = os.readlink(path)
    except OSError as e:
        return f"a symbolic link that cannot be read ({e.strerror or e})"
    try:
        real = path.resolve(strict=True)
    except RuntimeError:
        return f"a symbolic link loop (-> {target}); dbglog reads no links in logs/: remove it"
    except OSError as e:
        if e.errno == errno.ELOOP:
            return f"a symbolic link loop (-> {target}); dbglog reads no links in logs/: remove it"
        return f"a dangling symbolic link (-> {target}: nothing there); remove it"
    root = ws.root.resolve()
    where = "out of the workspace" if not real.is_relative_to(root) else "inside the workspace"
    return (f"a symbolic link {where} (-> {target}); dbglog reads no links in logs/ (one could import any "
            f"file): replace it with the file itself, or remove it")


def links_warning(links: list[str]) -> str | None:
    """The one warning line every command gives for the links it skipped."""
    if not links:
        return None
    more = f" and {len(links) - 1} more are symbolic links" if len(links) > 1 else " is a symbolic link"
    return f"{links[0]}{more}: skipped (dbglog reads no links in logs/; `dbglog doctor` says what each is)"


def _mirror():
    """The mirror module, imported when a file is written: the stat pass that runs before every
    command does not need it (nor its jinja2 and hashlib)."""
    from dbglog.kb import mirror

    return mirror


def misplaced_warnings(misplaced: list[tuple[int, str, str]], rel: str) -> list[str]:
    """One line per attempt heading a hand edit put outside ``## Attempts`` (kept as text, so say so)."""
    return [f"{rel}:{line}: '{head}' is under '{section}', not '## Attempts', so it was kept as that section's text; "
            f"move it under '## Attempts' to record it as an attempt" for line, head, section in misplaced]


def _older(store: Store, inv) -> tuple[list[int], str]:
    """(the attempts the database holds that ``inv`` lacks, the database's date) when ``inv`` is dated before the
    investigation the database holds; else ([], "")."""
    from dbglog.core.model import missing_attempts

    row = store.q("SELECT updated FROM investigations WHERE id = ?", inv.id).fetchone()
    if row is None or not (inv.updated and row[0] and inv.updated < row[0]):
        return [], ""
    held = [r[0] for r in store.q("SELECT number FROM attempts WHERE investigation_id = ? ORDER BY number", inv.id)]
    return missing_attempts(held, inv), row[0]


def _refuse_older_file(store: Store, rel: str, inv) -> None:
    """A file dated before the investigation the database holds that lacks attempts recorded since is an older
    copy (`git checkout OLD -- logs/`, a revert, a restored backup), not a hand edit: taking it in deleted those
    attempts without a word. A hand edit keeps the file's date. ``--resolve`` takes the file as it is."""
    lost, updated = _older(store, inv)
    if lost:
        raise ConflictError(f"{rel} is an older copy of investigation {inv.id} (updated {inv.updated}, the database's "
                            f"{updated}) without attempt(s) {', '.join(map(str, lost[:8]))} recorded since: "
                            f"`dbglog export` writes the database's version back; `dbglog sync --resolve {rel}` "
                            "takes the file as it is and drops them")


def _edited_status(store: Store, inv) -> bool:
    """A file whose front-matter status and **Status:** line disagree: the one a hand edit changed wins. The line is
    read; when it still says the stored status, the front matter was the edit (it was ignored, and undone by the next
    write). Both changed differently: the line, which is what a reader of the file sees. True: the file disagreed
    with itself (it is written back agreeing)."""
    from dbglog.core.markdown import FRONT_STATUS

    front = getattr(inv, FRONT_STATUS, None)
    if front is None:
        return False
    row = store.q("SELECT status FROM investigations WHERE id = ?", inv.id).fetchone()
    if row is not None and row[0] == inv.status:
        inv.status = front
    return True


def _parse(text: str, rel: str, misplaced: list | None = None):
    """A mirror file read as an investigation (the format's parser, imported when a file is read)."""
    from dbglog.core.markdown import parse

    return parse(text, rel, misplaced)


def sha256(data: bytes) -> str:
    return sha256_hex(data)


def read_text(path: Path, rel: str) -> str:
    data = path.read_bytes()
    if b"\x00" in data[:8192] and not looks_like_ours(data):
        # A dbglog file with a stray NUL (written by an older dbglog, or by hand) is still read:
        # the control bytes are dropped on import and the file is written back without them.
        raise DbglogError(f"{rel} is a binary file, not a dbglog markdown file; move it out of logs/")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DbglogError(f"{rel}: invalid UTF-8 at byte {e.start}; fix the encoding and retry") from None


def check_markers(text: str, rel: str) -> None:
    for n, line in enumerate(text.split("\n"), 1):
        if line.startswith(("<<<<<<< ", ">>>>>>> ")) or line == "=======" and "<<<<<<< " in text:
            raise DbglogError(f"{rel}:{n}: git conflict markers; resolve the merge in this file, then retry")


def sync(store: Store, ws: Workspace, *, resolve: set[str] | None = None, rehash: bool = False,
         prune: bool = False, keep_newer: bool = False) -> SyncReport:
    """Bring the database up to date with `logs/`. Must run inside ``store.write()``.

    ``rehash``: hash every file even when size and mtime match its baseline (after git moved
    HEAD: a checkout can restore a file with the same size within the mtime granularity).
    ``prune``: investigations whose mirror file was deleted are deleted from the database too.
    ``keep_newer``: an older copy of a file (``_refuse_older_file``) is not taken in, not refused (export).
    """
    pass_ = _Pass(store, ws, resolve or set(), rehash)
    pass_.keep_newer = keep_newer
    for rel, st in sorted(pass_.files.items()):
        pass_.take_in(rel, st)
    if pass_.foreign_now != pass_.foreign:
        store.set_meta(IGNORED_KEY, json.dumps(pass_.foreign_now) if pass_.foreign_now else None)
    pass_.gone_files(prune)
    pass_.set_aside_resolved()
    return pass_.report


class _Pass:
    """One ``sync``: the baseline, the files on disk, and what the pass found so far."""

    def __init__(self, store: Store, ws: Workspace, resolve: set[str], rehash: bool):
        self.store, self.ws, self.resolve, self.rehash = store, ws, resolve, rehash
        self.report = SyncReport()
        self.rows = store.mirror_rows()
        self.files = mirror_files(ws, self.report.links)
        self.gone = {r["sha256"]: p for p, r in self.rows.items() if p not in self.files}
        self.foreign = ignored_files(store)
        self.foreign_now: dict[str, list[int]] = {}
        self.keep_newer = False

    def _foreign(self, rel: str, st) -> bool:
        """A markdown file in logs/ that is not a dbglog file (seen before, or by its first bytes)."""
        if self.foreign.get(rel) == [st.st_size, st.st_mtime_ns]:
            self.foreign_now[rel] = self.foreign[rel]
        elif looks_like_ours((self.ws.root / rel).read_bytes()):
            return False
        else:
            self.foreign_now[rel] = [st.st_size, st.st_mtime_ns]
        self.report.ignored.append(rel)
        return True

    def take_in(self, rel: str, st) -> None:
        """One file: skipped when unchanged, moved when its bytes left another path, else parsed and
        imported (a conflict when the database changed too)."""
        store, row, forced = self.store, self.rows.get(rel), rel in self.resolve
        if row is None and not forced and self._foreign(rel, st):
            return
        if row is not None and row["size"] == st.st_size and row["mtime_ns"] == st.st_mtime_ns \
                and not forced and not self.rehash:
            return
        path = self.ws.root / rel
        digest = sha256(path.read_bytes())
        if row is not None and digest == row["sha256"] and not forced:
            if row["size"] != st.st_size or row["mtime_ns"] != st.st_mtime_ns:
                store.set_mirror(rel, row["investigation_id"], st.st_size, st.st_mtime_ns, digest, row["rev"])
                note_written(rel)
            return
        if row is None and digest in self.gone and not forced:
            old = self.rows[self.gone.pop(digest)]  # same bytes at a new path: a move, no parse needed
            if store.exists(old["investigation_id"]):
                store.set_mirror(rel, old["investigation_id"], st.st_size, st.st_mtime_ns, digest, old["rev"])
                self.report.moved.append((old["path"], rel))
                return
        text = read_text(path, rel)
        check_markers(text, rel)
        misplaced: list = []
        inv = _parse(text, rel, misplaced)  # (the parse itself finds them: no second reading of the file)
        self.report.misplaced += misplaced_warnings(misplaced, rel)
        dirty = redact.clean_record(inv)  # control characters or secrets put in by hand: not kept
        dirty = _edited_status(store, inv) or dirty
        if self.keep_newer and row is not None and not forced and store.exists(inv.id) and _older(store, inv)[0]:
            return  # (export writes the database's newer version over it)
        self._note(rel, row, inv, forced)
        store.replace_investigation(inv)
        store.set_mirror(rel, inv.id, st.st_size, st.st_mtime_ns, digest, store.rev(inv.id))
        note_written(rel)  # (edited by hand: likely to be again)
        if dirty:
            rewrite(store, self.ws, rel, inv.id)

    def _note(self, rel: str, row, inv, forced: bool) -> None:
        """Say what taking ``inv`` in from ``rel`` is (added, imported, moved), or stop on a conflict."""
        store, report = self.store, self.report
        if row is None:
            other = store.mirror_for(inv.id)
            if other is not None and other["path"] != rel:
                if other["path"] in self.files:
                    raise DbglogError(
                        f"{rel} and {other['path']} both hold investigation {inv.id}; remove one of them")
                report.moved.append((other["path"], rel))
            elif store.exists(inv.id):
                report.imported.append(rel)
            else:
                report.added.append(rel)
            return
        if row["investigation_id"] == inv.id and store.exists(inv.id) \
                and store.rev(inv.id) != row["rev"] and not forced:
            _write_conflict(store, self.ws, inv.id, rel)
        if not forced and not self.rehash and store.exists(inv.id):  # (git moved HEAD: a checkout's file is the branch's)
            _refuse_older_file(store, rel, inv)
        report.imported.append(rel)

    def gone_files(self, prune: bool) -> None:
        """Baseline files no longer on disk: missing, or (``prune``) their investigations deleted."""
        store, report, ws = self.store, self.report, self.ws
        moved_from = {m[0] for m in report.moved}
        for rel in sorted(set(self.rows) - set(self.files) - moved_from):
            row = self.rows[rel]
            if os.path.islink(ws.root / rel):  # a link took the file's place: skipped like any link (links_warning)
                continue
            if os.path.lexists(ws.root / rel):  # something else took the file's place (a directory)
                raise DbglogError(f"{rel} is not a regular file but a directory, where investigation "
                                  f"{row['investigation_id']}'s file belongs; move it away, then restore the file "
                                  f"(git checkout -- {rel}, or `dbglog export`)")
            if not prune:
                report.missing.append(rel)
                continue
            inv_id = row["investigation_id"]
            if store.exists(inv_id) and store.rev(inv_id) != row["rev"]:
                raise DbglogError(
                    f"{rel} was deleted, but {inv_id} changed in the database since it was written; "
                    f"run `dbglog export` to write it back, or delete it from the database with a fresh prune "
                    f"after checking `dbglog show {inv_id}`")
            store.delete_investigation(inv_id)
            store.drop_mirror(rel)
            report.pruned.append(rel)

    def set_aside_resolved(self) -> None:
        """``--resolve``: the conflict copies of the files taken as the truth go to .dbglog/conflicts/."""
        ws = self.ws
        for rel in sorted(self.resolve):
            conflict = ws.root / (rel[: -len(".md")] + CONFLICT_SUFFIX)
            if conflict.exists():
                kept = ws.dir / "conflicts" / f"{conflict.name[:-3]}.{int(conflict.stat().st_mtime)}.md"
                kept.parent.mkdir(exist_ok=True)
                os.replace(conflict, kept)
                self.report.resolved.append(str(kept.relative_to(ws.root)))


# --- git HEAD -----------------------------------------------------------------------


def git_head(root: Path) -> str | None:
    """The commit HEAD points at, read from .git files (no subprocess); None outside git."""
    for p in (root, *root.parents):
        dot = p / ".git"
        if dot.exists():
            break
    else:
        return None
    try:
        if dot.is_file():  # a linked worktree: "gitdir: /path/.git/worktrees/name"
            gitdir = Path(dot.read_text().split(":", 1)[1].strip())
            if not gitdir.is_absolute():
                gitdir = (dot.parent / gitdir).resolve()
        else:
            gitdir = dot
        head = (gitdir / "HEAD").read_text().strip()
        if not head.startswith("ref:"):
            return head
        ref = head[4:].strip()
        common = gitdir
        cd = gitdir / "commondir"
        if cd.exists():
            common = (gitdir / cd.read_text().strip()).resolve()
        for base in (gitdir, common):
            f = base / ref
            if f.exists():
                return f"{ref} {f.read_text().strip()}"
        packed = common / "packed-refs"
        if packed.exists():
            for line in packed.read_text().splitlines():
                if line.endswith(" " + ref):
                    return f"{ref} {line.split()[0]}"
        return f"{ref} (unborn)"
    except (OSError, IndexError, UnicodeDecodeError):
        return None


HEAD_KEY = "git_head"
UNMERGED_KEY = "git_unmerged"


def unmerged_logs(store: Store, ws: Workspace) -> list[str]:
    """Mirror files git holds as unmerged (`git ls-files -u`: a merge, rebase, cherry-pick or stash
    pop that stopped on them), as `logs/...` paths. Such a file may hold only our side without
    any conflict marker (a merge driver that could not run), so its content cannot be trusted.

    Cheap: ``git ls-files`` runs only when git's index changed since the last look (its size and
    mtime are remembered in the database)."""
    from dbglog.kb.merge import git_dirs

    dirs = git_dirs(ws.root)
    if dirs is None:
        return []
    top, gitdir, _ = dirs
    try:
        st = os.stat(gitdir / "index")
    except OSError:
        return []
    stamp = f"{st.st_size}:{st.st_mtime_ns}"
    cached = store.get_meta(UNMERGED_KEY)
    if cached:
        seen, _, paths = cached.partition(" ")
        if seen == stamp:
            return jsonsafe.loads(paths)
    import subprocess  # (only when git's index changed: it costs more than the rest of the check)

    try:
        rel = ws.logs_dir.resolve().relative_to(top).as_posix()
        p = subprocess.run(["git", "ls-files", "-u", "-z", "--full-name", "--", f":/{rel}"], cwd=top,
                           capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=30)
    except (ValueError, OSError, subprocess.SubprocessError):
        return []
    if p.returncode != 0:
        return []
    names = sorted({e.split("\t", 1)[1] for e in p.stdout.split("\0") if "\t" in e})
    out = [os.path.relpath(top / n, ws.root) for n in names if n.endswith(".md")]
    try:
        store.set_meta(UNMERGED_KEY, f"{stamp} {json.dumps(out)}")
    except Exception:  # a read-only database: look again next time
        pass
    return out


def refuse_unmerged(store: Store, ws: Workspace) -> None:
    """Stop every command while a mirror file is unmerged in git (see ``unmerged_logs``)."""
    paths = unmerged_logs(store, ws)
    if paths:
        try:  # markers (git's text merge) say more about where
            check_markers((ws.root / paths[0]).read_text(encoding="utf-8", errors="replace"), paths[0])
        except DbglogError as e:
            raise ConflictError(f"{e} (unmerged in git: `git add {paths[0]}` once resolved)") from None
        except OSError:
            pass
        more = f" (and {len(paths) - 1} more: `git ls-files -u logs/`)" if len(paths) > 1 else ""
        raise ConflictError(f"{paths[0]} is unmerged in git{more}: {unmerged_advice(ws, paths[0])}")


def unmerged_advice(ws: Workspace, rel: str) -> str:
    """What to do about an unmerged mirror file: redo its merge with the driver; but a file one side deleted and the
    other changed has no merge to redo (`git checkout -m` fails: "does not have all necessary versions")."""
    import subprocess

    try:
        p = subprocess.run(["git", "ls-files", "-u", "-z", "--", rel], cwd=ws.root, capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, timeout=30)
        stages = {e.split("\t", 1)[0].split()[-1] for e in p.stdout.split("\0") if "\t" in e}
    except (OSError, subprocess.SubprocessError, IndexError):
        stages = set()
    if stages and not {"2", "3"} <= stages:
        return (f"one side deleted it and the other changed it: keep it with `git add {rel}`, or drop it with "
                f"`git rm {rel}`, then retry")
    return (f"redo its merge with `git checkout -m -- {rel}` (the dbglog merge driver keeps both sides' attempts) "
            f"or merge it by hand, then `git add {rel}` and retry")


def head_moved(store: Store, ws: Workspace) -> tuple[bool, str | None]:
    head = git_head(ws.root)
    return (head is not None and head != store.get_meta(HEAD_KEY)), head


# --- reindex and doctor -------------------------------------------------------------


def reindex(store: Store, ws: Workspace, force: bool = False, rewrite_dirty: bool = True) -> dict:
    """Rebuild every investigation from `logs/` alone. Must run inside ``store.write()``.
    ``rewrite_dirty``: write back clean a file that held a secret or a control character (not when
    `logs/` is only read, as by a read-only clone's private database).

    Without ``force`` it refuses to drop anything only the database holds (an investigation with
    no file, or changes not yet written to its file).
    """
    files = mirror_files(ws)
    parsed = {}
    parsed_dirty: set[str] = set()
    by_id: dict[str, str] = {}
    for rel, st in sorted(files.items()):
        data = (ws.root / rel).read_bytes()
        if not looks_like_ours(data):
            continue  # someone else's markdown in logs/
        text = read_text(ws.root / rel, rel)
        check_markers(text, rel)
        inv = _parse(text, rel)
        if redact.clean_record(inv):
            parsed_dirty = parsed_dirty | {rel}
        if inv.id in by_id:
            raise DbglogError(f"{rel} and {by_id[inv.id]} both hold investigation {inv.id}; remove one of them")
        by_id[inv.id] = rel
        parsed[rel] = (inv, st, sha256(data))
    if not force:
        base = {r["investigation_id"]: r for r in store.mirror_rows().values()}
        db_only = [i for i in store.ids() if i not in by_id]
        unsynced = [i for i in store.ids() if i in base and store.rev(i) != base[i]["rev"]]
        if db_only or unsynced:
            ids = db_only or unsynced
            raise DbglogError(
                f"{len(ids)} investigation(s) exist only in the database or have changes not in logs/ "
                f"(e.g. {ids[0]}); run `dbglog export` first, or `dbglog reindex --force` to drop them")
    store.q("DELETE FROM investigations")
    store.q("DELETE FROM mirror_files")
    for rel, (inv, st, digest) in parsed.items():
        store.insert_investigation(inv)
        store.set_mirror(rel, inv.id, st.st_size, st.st_mtime_ns, digest, store.rev(inv.id))
        if rel in parsed_dirty and rewrite_dirty:
            rewrite(store, ws, rel, inv.id)
    for table in ("imports", "import_items"):
        store.q(f"DELETE FROM {table} WHERE investigation_id NOT IN (SELECT id FROM investigations)")
    head = git_head(ws.root)
    if head:
        store.set_meta(HEAD_KEY, head)
    return {"investigations": len(parsed), "files": sorted(parsed), "runs_restored": restore_runs(store, ws)}


def restore_runs(store: Store, ws: Workspace) -> int:
    """Index again the runs whose folder holds their ``result.json`` but the database does not (it was
    deleted, or set aside by ``reindex --force``): runs stay local, so logs/ cannot bring them back. A run
    an attempt lists is that attempt's again; a plain run's investigation is not in logs/, so it comes back
    in none. A file that is not a readable run record is left as it is. How many came back."""
    if not ws.runs_dir.is_dir():
        return 0
    have = {r[0] for r in store.q("SELECT id FROM runs")}
    owner = {}
    for r in store.q("SELECT investigation_id, number, runs FROM attempts WHERE runs != '[]'"):
        for rid in json.loads(r["runs"]):
            owner[rid] = (r["investigation_id"], r["number"])
    n = 0
    # (a run's own folder, or a repeated run's numbered folder inside it: runs/ID/001/result.json)
    for path in sorted([*ws.runs_dir.glob("*/result.json"), *ws.runs_dir.glob("*/*/result.json")]):
        result = _run_record(path)
        if result is not None and result["id"] not in have:
            store.insert_run(redact.clean_run(result), str(path.parent), *owner.get(result["id"], (None, None)))
            have.add(result["id"])
            n += 1
    return n


_RUN_FIELDS = ("started", "duration_s", "cmd", "cwd", "outcome", "signature", "exit_code", "signal",
               "git_commit", "git_dirty")


def _run_record(path: Path) -> dict | None:
    """The run record in ``path`` when it is one (a dict with an id and every field the index keeps), else None."""
    try:
        result = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(result, dict) or not isinstance(result.get("id"), str) or not result["id"] or \
            not all(k in result for k in _RUN_FIELDS) or not isinstance(result["cmd"], list) or \
            not isinstance(result["started"], str) or not isinstance(result["outcome"], str):
        return None
    return result


def set_aside_database(ws: Workspace) -> Path:
    """Move an unreadable database (and its WAL files) aside so a rebuild can start fresh."""
    import time

    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = ws.db_path.with_name(f"dbglog.db.broken-{stamp}")
    for suffix in ("", "-wal", "-shm"):
        src = Path(str(ws.db_path) + suffix)
        if src.exists():
            os.replace(src, Path(str(target) + suffix))
    return target


def doctor(store: Store, ws: Workspace) -> list[dict]:
    """Every problem between `logs/` and the database, one dict per problem (empty: healthy)."""
    problems: list[dict] = []

    def add(kind, path, message):
        problems.append({"kind": kind, "path": path, "message": message})

    for rel in unmerged_logs(store, ws):
        add("unmerged", rel, f"unmerged in git (an unfinished merge): {unmerged_advice(ws, rel)}")
    _doctor_names(ws, add)
    rows = store.mirror_rows()
    files = mirror_files(ws)
    ids = set(store.ids())
    seen: dict[str, str] = {}
    for rel in sorted(files):
        _doctor_file(ws, rel, rows.get(rel), ids, seen, add)
    _doctor_baseline(ws, rows, files, ids, add)
    return problems


def _doctor_names(ws: Workspace, add) -> None:
    """What the names in logs/ say alone: conflict copies, symbolic links (what each is)."""
    try:
        names = sorted(os.listdir(ws.logs_dir))
    except FileNotFoundError:
        names = []
    for name in names:
        if name.endswith(CONFLICT_SUFFIX):
            add("conflict-copy", f"logs/{name}",
                "database side of a conflict; merge it into the file, delete it, run `dbglog sync --resolve FILE`")
        elif os.path.islink(ws.logs_dir / name):
            add("symlink", f"logs/{name}", link_problem(ws, f"logs/{name}"))


def _doctor_file(ws: Workspace, rel: str, row, ids: set, seen: dict, add) -> None:
    """One mirror file: unreadable, conflict markers, unparsable, a duplicate id, or not taken in."""
    path = ws.root / rel
    try:
        data = path.read_bytes()
        if row is not None and sha256(data) == row["sha256"]:
            seen[row["investigation_id"]] = rel
            return
        if row is None and not looks_like_ours(data):
            return  # not a dbglog file (see `dbglog sync`: reported as ignored)
        text = read_text(path, rel)
    except (OSError, DbglogError) as e:
        add("unreadable", rel, str(e))
        return
    for kind, check in (("conflict-markers", check_markers), ("parse-error", _parse)):
        try:
            inv = check(text, rel)
        except DbglogError as e:
            from dbglog.core.markdown import ParseError  # (lazy, as the parse itself: sync's start-up stays light)

            # (a parse error names its file, which the row already says: "line 2: ...")
            add(kind, rel, f"line {e.line}: {e.reason}" if isinstance(e, ParseError) and e.line else str(e))
            return
    if inv.id in seen:
        add("duplicate-id", rel, f"holds {inv.id}, like {seen[inv.id]}")
    seen[inv.id] = rel
    if row is not None:
        add("unsynced", rel, "edited outside dbglog and not imported yet; run `dbglog sync`")
    elif inv.id not in ids:
        add("unsynced", rel, "new file not imported yet; run `dbglog sync`")


def _doctor_baseline(ws: Workspace, rows: dict, files: dict, ids: set, add) -> None:
    """What the baseline says is gone: files missing or replaced, rows of unknown investigations,
    investigations with no file."""
    for rel, row in sorted(rows.items()):
        if rel not in files and os.path.islink(ws.root / rel):
            pass  # (reported with the names, with what it is)
        elif rel not in files and os.path.lexists(ws.root / rel):
            add("not-a-file", rel, f"not a regular file (a directory?) where {row['investigation_id']} is kept; "
                "move it away and restore the file")
        elif rel not in files:
            add("missing", rel, f"file of {row['investigation_id']} was deleted; restore it, or "
                "`dbglog sync --prune` to delete it from the database")
        if row["investigation_id"] not in ids:
            add("orphan-baseline", rel, f"baseline row for unknown investigation {row['investigation_id']}")
    with_file = {r["investigation_id"] for r in rows.values()}
    for inv_id in sorted(ids - with_file):
        add("no-file", f"logs/{inv_id}.md", f"{inv_id} has no mirror file; `dbglog export` writes it")


def rewrite(store: Store, ws: Workspace, rel: str, inv_id: str) -> None:
    """Write ``rel`` from the database (after an import had to clean what the file held) and take
    it as the new baseline. Inside the caller's transaction: a journaled store takes it back if the
    transaction fails."""
    path = ws.root / rel
    data = _mirror().render(store.load(inv_id), ws.templates_dir, ws.dir / "cache").encode("utf-8")
    if hasattr(store, "journal"):
        store.journal(path)
    st = atomic_write(path, data)
    store.set_mirror(rel, inv_id, st.st_size, st.st_mtime_ns, sha256(data), store.rev(inv_id))


def _write_conflict(store: Store, ws: Workspace, inv_id: str, rel: str) -> None:
    conflict = ws.root / (rel[: -len(".md")] + CONFLICT_SUFFIX)
    atomic_write(conflict, _mirror().render(store.load(inv_id), ws.templates_dir).encode())
    raise ConflictError(
        f"{rel} was edited outside dbglog while the database also changed; the database version is in "
        f"{conflict.relative_to(ws.root)}. Merge it into {rel}, delete the conflict file, then run "
        f"`dbglog sync --resolve {rel}`"
    )
