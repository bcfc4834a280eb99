"""Keeping the database and the markdown mirror in `logs/` true to each other.

Baseline: ``mirror_files`` remembers, per file, the size/mtime/sha256 dbglog last wrote or
imported and the database revision it showed. Before every command:

1. a stat pass (no reads) compares every ``logs/*.md`` with its baseline;
2. only files whose size or mtime moved are read and hashed; a changed hash means the file
   was edited outside dbglog (or arrived by ``git pull``) and it is parsed and imported;
3. if the database also moved past the revision the file showed, that is a conflict: the
   database side is written next to the file as ``<name>.dbglog-conflict.md`` and the command
   stops, so neither side is lost.

Writes happen inside the caller's ``BEGIN IMMEDIATE`` transaction, so two dbglog processes
never import the same edit twice.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from dbglog import mirror
from dbglog.errors import ConflictError, DbglogError
from dbglog.store import Store
from dbglog.workspace import Workspace

CONFLICT_SUFFIX = ".dbglog-conflict.md"


@dataclass
class SyncReport:
    imported: list[str] = field(default_factory=list)  # paths re-read into the database
    added: list[str] = field(default_factory=list)  # new files -> new investigations
    moved: list[tuple[str, str]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # baseline files no longer on disk

    @property
    def changed(self) -> bool:
        return bool(self.imported or self.added or self.moved)

    def to_dict(self) -> dict:
        return {"imported": self.imported, "added": self.added,
                "moved": [list(m) for m in self.moved], "missing": self.missing}


def mirror_files(ws: Workspace) -> dict[str, os.stat_result]:
    """Relative path -> stat for every mirror file (conflict copies and temp files excluded)."""
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
        if e.is_file():
            out[f"logs/{name}"] = e.stat()
    return out


def is_stale(store: Store, ws: Workspace) -> bool:
    """The cheap check: does any mirror file differ (by size/mtime) from its baseline?"""
    rows = store.mirror_rows()
    files = mirror_files(ws)
    if set(rows) != set(files):
        return True
    for rel, st in files.items():
        r = rows[rel]
        if r["size"] != st.st_size or r["mtime_ns"] != st.st_mtime_ns:
            return True
    return False


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_text(path: Path, rel: str) -> str:
    data = path.read_bytes()
    if b"\x00" in data[:8192]:
        raise DbglogError(f"{rel} is a binary file, not a dbglog markdown file; move it out of logs/")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DbglogError(f"{rel}: invalid UTF-8 at byte {e.start}; fix the encoding and retry") from None


def check_markers(text: str, rel: str) -> None:
    for n, line in enumerate(text.split("\n"), 1):
        if line.startswith(("<<<<<<< ", ">>>>>>> ")) or line == "=======" and "<<<<<<< " in text:
            raise DbglogError(f"{rel}:{n}: git conflict markers; resolve the merge in this file, then retry")


def sync(store: Store, ws: Workspace, *, resolve: set[str] | None = None) -> SyncReport:
    """Bring the database up to date with `logs/`. Must run inside ``store.write()``."""
    report = SyncReport()
    rows = store.mirror_rows()
    files = mirror_files(ws)
    resolve = resolve or set()
    for rel, st in sorted(files.items()):
        row = rows.get(rel)
        if row is not None and row["size"] == st.st_size and row["mtime_ns"] == st.st_mtime_ns \
                and rel not in resolve:
            continue
        path = ws.root / rel
        data = path.read_bytes()
        digest = sha256(data)
        if row is not None and digest == row["sha256"] and rel not in resolve:
            store.set_mirror(rel, row["investigation_id"], st.st_size, st.st_mtime_ns, digest, row["rev"])
            continue
        text = read_text(path, rel)
        check_markers(text, rel)
        inv = mirror.parse(text, rel)
        if row is None:
            other = store.mirror_for(inv.id)
            if other is not None and other["path"] != rel:
                if other["path"] in files:
                    raise DbglogError(
                        f"{rel} and {other['path']} both hold investigation {inv.id}; remove one of them")
                report.moved.append((other["path"], rel))
            elif store.exists(inv.id):
                report.imported.append(rel)
            else:
                report.added.append(rel)
        else:
            if row["investigation_id"] == inv.id and store.exists(inv.id) \
                    and store.rev(inv.id) != row["rev"] and rel not in resolve:
                _write_conflict(store, ws, inv.id, rel)
            report.imported.append(rel)
        store.replace_investigation(inv)
        store.set_mirror(rel, inv.id, st.st_size, st.st_mtime_ns, digest, store.rev(inv.id))
    moved_from = {m[0] for m in report.moved}
    for rel in sorted(set(rows) - set(files) - moved_from):
        report.missing.append(rel)
    return report


def _write_conflict(store: Store, ws: Workspace, inv_id: str, rel: str) -> None:
    conflict = ws.root / (rel[: -len(".md")] + CONFLICT_SUFFIX)
    from dbglog.records import atomic_write

    atomic_write(conflict, mirror.render(store.load(inv_id), ws.templates_dir).encode())
    raise ConflictError(
        f"{rel} was edited outside dbglog while the database also changed; the database version is in "
        f"{conflict.relative_to(ws.root)}. Merge it into {rel}, delete the conflict file, then run "
        f"`dbglog sync --resolve {rel}`"
    )
