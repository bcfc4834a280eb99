"""SQLite storage: schema, migrations, transactions, and row <-> model conversion.

The hot path uses the stdlib ``sqlite3`` connection directly (importing sqlite-utils costs
~125 ms, more than a whole ``attempt add`` should). sqlite-utils owns the schema: its
``Migrations`` run only when ``PRAGMA user_version`` says the file is behind, so a normal
command never imports it.

Writers take ``BEGIN IMMEDIATE`` so numbering (``max(number)+1``) and the mirror write that
follows are serialised across processes; WAL keeps readers unblocked.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import weakref
from contextlib import contextmanager
from pathlib import Path

from dbglog.util.errors import DbglogError
from dbglog.core.model import Attempt, Difference, Investigation, NextStep, Section

def _core(db) -> None:
    db.executescript(
        """
        CREATE TABLE IF NOT EXISTS investigations (
          id TEXT PRIMARY KEY,
          title TEXT NOT NULL,
          status TEXT NOT NULL DEFAULT 'open',
          symptom TEXT NOT NULL DEFAULT '',
          environment TEXT NOT NULL DEFAULT '',
          related_files TEXT NOT NULL DEFAULT '[]',
          tags TEXT NOT NULL DEFAULT '[]',
          root_cause TEXT NOT NULL DEFAULT '',
          created TEXT NOT NULL DEFAULT '',
          updated TEXT NOT NULL DEFAULT '',
          label_working TEXT NOT NULL DEFAULT 'Working',
          label_broken TEXT NOT NULL DEFAULT 'Broken',
          sections TEXT NOT NULL DEFAULT '[]',
          rev INTEGER NOT NULL DEFAULT 1
        );
        CREATE TABLE IF NOT EXISTS attempts (
          id INTEGER PRIMARY KEY,
          investigation_id TEXT NOT NULL REFERENCES investigations(id) ON DELETE CASCADE,
          number INTEGER NOT NULL,
          title TEXT NOT NULL DEFAULT '',
          hypothesis TEXT NOT NULL DEFAULT '',
          did TEXT NOT NULL DEFAULT '',
          result TEXT NOT NULL DEFAULT '',
          conclusion TEXT NOT NULL DEFAULT '',
          outcome TEXT NOT NULL DEFAULT 'untested',
          created TEXT NOT NULL DEFAULT '',
          runs TEXT NOT NULL DEFAULT '[]',
          UNIQUE (investigation_id, number)
        );
        CREATE TABLE IF NOT EXISTS differences (
          id INTEGER PRIMARY KEY,
          investigation_id TEXT NOT NULL REFERENCES investigations(id) ON DELETE CASCADE,
          position INTEGER NOT NULL,
          factor TEXT NOT NULL,
          working TEXT NOT NULL DEFAULT '',
          broken TEXT NOT NULL DEFAULT '',
          status TEXT NOT NULL DEFAULT 'untested',
          apply TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX IF NOT EXISTS differences_inv ON differences(investigation_id, position);
        CREATE TABLE IF NOT EXISTS next_steps (
          id INTEGER PRIMARY KEY,
          investigation_id TEXT NOT NULL REFERENCES investigations(id) ON DELETE CASCADE,
          position INTEGER NOT NULL,
          text TEXT NOT NULL,
          detail TEXT NOT NULL DEFAULT '',
          status TEXT NOT NULL DEFAULT 'todo',
          attempt INTEGER
        );
        CREATE INDEX IF NOT EXISTS next_steps_inv ON next_steps(investigation_id, position);
        -- What dbglog last wrote (or imported) for each mirror file: the sync baseline.
        CREATE TABLE IF NOT EXISTS mirror_files (
          path TEXT PRIMARY KEY,
          investigation_id TEXT NOT NULL,
          size INTEGER NOT NULL,
          mtime_ns INTEGER NOT NULL,
          sha256 TEXT NOT NULL,
          rev INTEGER NOT NULL
        );
        CREATE INDEX IF NOT EXISTS mirror_files_inv ON mirror_files(investigation_id);
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
        """
    )


def _runs(db) -> None:
    db.executescript(
        """
        CREATE TABLE IF NOT EXISTS runs (
          id TEXT PRIMARY KEY,
          investigation_id TEXT,
          attempt_number INTEGER,
          started TEXT NOT NULL,
          duration_s REAL,
          cmd TEXT NOT NULL,          -- JSON argument list
          cwd TEXT,
          outcome TEXT NOT NULL,
          signature TEXT,
          exit_code INTEGER,
          signal INTEGER,
          git_commit TEXT,
          git_dirty INTEGER,
          run_dir TEXT,
          result TEXT NOT NULL        -- the runner's full JSON record
        );
        CREATE INDEX IF NOT EXISTS runs_started ON runs(started);
        """
    )


def _bisect(db) -> None:
    db.executescript(
        """
        CREATE TABLE IF NOT EXISTS bisect_sessions (
          id TEXT PRIMARY KEY,
          kind TEXT NOT NULL,               -- git | toggles
          investigation_id TEXT,
          status TEXT NOT NULL,             -- running | done | failed | aborted
          spec TEXT NOT NULL,               -- JSON: everything needed to rebuild the search
          result TEXT,                      -- JSON, when finished
          created TEXT NOT NULL,
          updated TEXT NOT NULL,
          pid INTEGER                       -- the process driving it (to detect a dead driver)
        );
        CREATE TABLE IF NOT EXISTS bisect_trials (
          id INTEGER PRIMARY KEY,
          session_id TEXT NOT NULL REFERENCES bisect_sessions(id) ON DELETE CASCADE,
          seq INTEGER NOT NULL,             -- order in which verdicts were obtained
          key TEXT NOT NULL,                -- commit sha, or JSON list of enabled toggle names
          cache_key TEXT NOT NULL,
          verdict TEXT NOT NULL,            -- good | bad | skip | flaky
          reason TEXT NOT NULL DEFAULT '',
          outcome TEXT,
          signature TEXT,
          duration_s REAL,
          runs TEXT NOT NULL DEFAULT '[]',  -- JSON list of run ids
          source TEXT NOT NULL DEFAULT 'run',  -- run | cache | manual
          created TEXT NOT NULL,
          UNIQUE (session_id, key)
        );
        CREATE INDEX IF NOT EXISTS bisect_trials_cache ON bisect_trials(cache_key);
        """
    )


def _import(db) -> None:
    """Provenance of imported debug docs (issue 3): which source document made which investigation.

    ``imports`` keys an investigation by (source path, normalised title) so importing the same file
    again updates it instead of duplicating it; ``import_items`` remembers the line each imported
    item (investigation, attempt, difference row, next step) came from.
    """
    db.executescript(
        """
        CREATE TABLE IF NOT EXISTS imports (
          source TEXT NOT NULL,
          key TEXT NOT NULL,
          investigation_id TEXT NOT NULL,
          line INTEGER NOT NULL,
          sha256 TEXT NOT NULL DEFAULT '',
          imported TEXT NOT NULL DEFAULT '',
          PRIMARY KEY (source, key)
        );
        CREATE INDEX IF NOT EXISTS imports_inv ON imports(investigation_id);
        CREATE TABLE IF NOT EXISTS import_items (
          investigation_id TEXT NOT NULL,
          kind TEXT NOT NULL,
          ref TEXT NOT NULL,
          source TEXT NOT NULL,
          line INTEGER NOT NULL,
          PRIMARY KEY (investigation_id, kind, ref)
        );
        """
    )


def _search(db) -> None:
    from dbglog.kb.search import create_index  # FTS5 tables + triggers, the sqlite-utils way

    create_index(db)


def _toggle_journal(db) -> None:
    """In-place source edits of a toggle bisection (issue 7): the original bytes of every file a
    bisection edits, written and committed BEFORE the file is touched, so any later dbglog
    command can put the file back after the driver died (even by kill -9)."""
    db.executescript(
        """
        CREATE TABLE IF NOT EXISTS toggle_journal (
          path TEXT PRIMARY KEY,            -- resolved absolute path of the edited file
          session_id TEXT NOT NULL,
          original BLOB,                    -- NULL: the file did not exist
          sha256 TEXT NOT NULL,
          mode INTEGER,                     -- st_mode bits to restore
          pid INTEGER NOT NULL,             -- the driver that owns the edit
          pid_started REAL,                 -- its start time (pid reuse)
          created TEXT NOT NULL
        );
        """
    )


def _toggle_journal_written(db) -> None:
    """The sha256 of every content a bisection wrote to a journaled file (space-separated): a file that holds none of
    them, nor its original, was edited by someone after the bisection died, and is not put back over their edit."""
    if "written" not in {c[1] for c in db.execute("PRAGMA table_info(toggle_journal)").fetchall()}:
        db.execute("ALTER TABLE toggle_journal ADD COLUMN written TEXT")


def _inv_source(db) -> None:
    db.execute("ALTER TABLE investigations ADD COLUMN source TEXT NOT NULL DEFAULT ''")
    db.execute("CREATE INDEX IF NOT EXISTS investigations_source ON investigations(source) WHERE source != ''")


def _identifier_words(db) -> None:
    """Compound identifiers' words (cudaMallocAsync -> cuda malloc async) indexed beside attempts
    and free text, so `malloc async` finds `cudaMallocAsync`."""
    from dbglog.kb.search import add_identifier_words

    add_identifier_words(db)


def _refreshed_identifier_words(db) -> None:
    """The index's identifier words now hold the Latin words glued to CJK text ("使用packing的方式" -> packing) (0014),
    and then the English words of other languages' ("降级" -> downgrade, core/gloss.py) (0015): recomputed for the
    stored attempts and sections (the triggers update the index)."""
    from dbglog.kb.search import refresh_identifier_words

    refresh_identifier_words(db.conn)


def _sections(db) -> None:
    """Free sections and watched docs in the search index (issue 11): one row per chunk, FTS5 +
    trigram tables over them; existing investigations' sections are chunked now."""
    from dbglog.kb.search import create_section_index
    from dbglog.kb.sections import create_tables

    create_tables(db)
    create_section_index(db)  # existing investigations are chunked by the next migration (0009)


def _bisect_driver(db) -> None:
    """The create time of a bisection's driver beside its pid ("PID:CREATE_TIME"): whether the pid
    still names that driver is then proctree's pid-reuse rule, not a guess from its command line."""
    db.execute("ALTER TABLE bisect_sessions ADD COLUMN driver TEXT")


def _failures(db) -> None:
    """Failure fingerprints (issue 27): where each was seen; filled from runs, records and watched docs
    by ``failures.refresh`` (the next command that recalls), rebuilt by ``reindex``."""
    from dbglog.kb.failures import create_tables

    create_tables(db)


def _provenance(db) -> None:
    """Imported attempts and next steps cite their source lines; an attempt says who did it (issue 25)."""
    db.execute("ALTER TABLE attempts ADD COLUMN source_lines TEXT NOT NULL DEFAULT '[]'")
    db.execute("ALTER TABLE attempts ADD COLUMN who TEXT NOT NULL DEFAULT ''")
    db.execute("ALTER TABLE next_steps ADD COLUMN source_lines TEXT NOT NULL DEFAULT '[]'")


def _bookkeeping_unindexed(db) -> None:
    """Bookkeeping sections (``## Source headings``) leave the search index: free sections are re-chunked."""
    from dbglog.kb import sections

    sections.rebuild(db.conn)


# Append-only: (name, function(sqlite_utils.Database)). PRAGMA user_version counts the applied ones,
# so a command only imports sqlite-utils when this list grew.
MIGRATIONS = [
    ("0001_core", _core),
    ("0003_import", _import),
    ("0004_runs", _runs),
    ("0002_search", _search),
    ("0005_bisect", _bisect),
    ("0006_toggle_journal", _toggle_journal),
    ("0007_inv_source", _inv_source),
    ("0008_sections", _sections),
    ("0009_identifier_words", _identifier_words),
    ("0010_bisect_driver", _bisect_driver),
    ("0011_failures", _failures),
    ("0012_provenance", _provenance),
    ("0013_bookkeeping_unindexed", _bookkeeping_unindexed),
    ("0014_glued_latin_words", _refreshed_identifier_words),
    ("0015_gloss_words", _refreshed_identifier_words),  # (the same refresh: the words gained glosses)
    ("0016_gloss_polish_portuguese", _refreshed_identifier_words),  # (gloss tables for two more languages)
    ("0017_toggle_journal_written", _toggle_journal_written),
]
SCHEMA_VERSION = len(MIGRATIONS)


def _migrations():
    from sqlite_utils.migrations import Migrations

    m = Migrations("dbglog")
    for name, fn in MIGRATIONS:
        m(name=name)(fn)
    return m


# Every open Store, for close_all (a quick exit closes them: see dbglog/entry.py)
_OPEN: "weakref.WeakSet[Store]" = weakref.WeakSet()


def close_all() -> None:
    """Close every open connection: the last one to close checkpoints the WAL, which syncs the
    writes made without an fsync (a bisection's steps) to the database file."""
    for store in list(_OPEN):
        try:
            store.close()
        except Exception:  # noqa: BLE001 - closing at exit: nothing left to tell
            pass


def writable(db_path: Path) -> bool:
    """Can this process write the database: its directory (WAL makes -wal and -shm files beside it),
    the file, and the WAL files a writer left? ``os.access`` also says no on a read-only mount."""
    if not os.access(db_path.parent, os.W_OK | os.X_OK):
        return False
    for suffix in ("", "-wal", "-shm"):
        p = f"{db_path}{suffix}"
        if os.path.exists(p) and not os.access(p, os.W_OK):
            return False
    return True


def _uri(path: Path) -> str:
    # ('%', '?' and '#' in a directory name must be escaped, or SQLite opens another file)
    p = os.path.abspath(path)
    return "file:" + p.replace("%", "%25").replace("?", "%3f").replace("#", "%23") + "?mode=ro"


def read_only_refusal(path: Path) -> DbglogError:
    """The one line a write in a read-only workspace gets (before anything is written)."""
    from dbglog.util.fserrors import FilesystemError, read_only

    why = "on a read-only file system" if read_only(path) else "not writable by this user"
    d = path.parent if path.parent.exists() else path.parent.parent  # (a clone without .dbglog/: its root)
    rel = os.path.relpath(d)
    where = d if rel == "." or rel.startswith("..") else rel
    return FilesystemError(f"this workspace is read-only ({where} is {why}): this command writes to it; read "
                           "commands (list, show, search, tried, runs, doctor) work; nothing was changed")


# One writer at a time per process (an MCP server's tool calls run on threads, each with its own connection: 5,000
# piped writes lost 29 to 'database is locked' after 60 s in SQLite's busy loop). Reentrant: a nested write joins.
_WRITERS = threading.RLock()


class Store:
    def __init__(self, db_path: Path, readonly: bool | None = None):
        """``readonly``: None decides by what this process may write (``writable``). A read-only
        store never creates, migrates, or writes anything: ``write()`` refuses with one line."""
        self.path = db_path
        self.readonly = (db_path.exists() and not writable(db_path)) if readonly is None else readonly
        self._copy: str | None = None  # a private copy's directory (see _open_readonly)
        self._immutable: tuple | None = None  # read immutable: the file's (size, mtime) then
        self.refusal_path: Path | None = None  # the database a refusal names (a private copy's original)
        if self.readonly:
            self._open_readonly()
            return
        try:
            self.conn = sqlite3.connect(str(db_path), timeout=60, isolation_level=None)
            _OPEN.add(self)
            self.conn.row_factory = sqlite3.Row
            self.conn.execute("PRAGMA busy_timeout = 60000")
            version = self.conn.execute("PRAGMA user_version").fetchone()[0]
            if self.conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA foreign_keys = ON")
            self.conn.execute("PRAGMA recursive_triggers = ON")  # FTS delete triggers on upsert
            if version < SCHEMA_VERSION:
                self._migrate()
            elif version > SCHEMA_VERSION:
                raise DbglogError(
                    f"{db_path} was written by a newer dbglog (schema {version}); upgrade dbglog"
                )
        except sqlite3.DatabaseError as e:
            from dbglog.util.fserrors import check

            check(e, db_path)  # a full disk or a read-only file system is not a broken database
            raise DbglogError(
                f"the database {db_path} is unreadable ({e}); move it aside and run "
                "`dbglog reindex --force` to rebuild it from logs/"
            ) from None

    def _open_readonly(self) -> None:
        """Open without writing a byte. Without a WAL (no writer has the file open: a WAL-mode
        writer always has one) the file alone is the database, read ``immutable`` (SQLite would
        otherwise want to create the -shm file in a directory it cannot write). With the WAL of a
        writer that did not finish, ``mode=ro`` reads it through its -shm file; when that cannot
        be done either (no -shm, nowhere to make one), a private copy of the file and its WAL
        is read instead, so committed records in the WAL are never silently left out."""
        wal = f"{self.path}-wal"
        try:
            has_wal = os.path.getsize(wal) > 0
        except OSError:
            has_wal = False
        uri = _uri(self.path)
        if not has_wal:
            st = os.stat(self.path)
            self._immutable = (st.st_size, st.st_mtime_ns)
        try:
            self.conn = sqlite3.connect(uri if has_wal else uri + "&immutable=1", uri=True, timeout=60,
                                        isolation_level=None)
            _OPEN.add(self)
            try:
                version = self.conn.execute("PRAGMA user_version").fetchone()[0]
                self.conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            except sqlite3.OperationalError:
                if not has_wal:
                    raise
                self.conn.close()
                self.conn = self._private_copy(wal)
                version = self.conn.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as e:
            if not os.access(self.path, os.R_OK):
                from dbglog.util.fserrors import FilesystemError

                raise FilesystemError(f"permission denied reading the database {self.path}: check its "
                                      "permissions; nothing was changed") from None
            raise DbglogError(f"the database {self.path} is unreadable ({e}) and read-only here: run `dbglog "
                              "reindex --force` where .dbglog/ is writable to rebuild it from logs/") from None
        self.conn.row_factory = sqlite3.Row
        if version < SCHEMA_VERSION:
            raise DbglogError(f"the database {self.path} was written by an older dbglog (schema {version} of "
                              f"{SCHEMA_VERSION}) and this workspace is read-only, so it cannot be upgraded: run "
                              "a dbglog command once where .dbglog/ is writable (or on a copy); nothing was changed")
        if version > SCHEMA_VERSION:
            raise DbglogError(f"{self.path} was written by a newer dbglog (schema {version}); upgrade dbglog")

    def outdated(self) -> bool:
        """Read ``immutable``, has the file changed since (someone who may write it did, or began to:
        a WAL now)? A long-lived reader (the MCP server) opens it again then."""
        if self._immutable is None:
            return False
        try:
            st = os.stat(self.path)
        except OSError:
            return True
        return (st.st_size, st.st_mtime_ns) != self._immutable or os.path.exists(f"{self.path}-wal")

    def _private_copy(self, wal: str) -> sqlite3.Connection:
        import shutil
        import tempfile

        self._copy = tempfile.mkdtemp(prefix="dbglog-ro-")
        target = os.path.join(self._copy, "dbglog.db")
        shutil.copyfile(self.path, target)
        shutil.copyfile(wal, target + "-wal")
        return sqlite3.connect(_uri(Path(target)), uri=True, timeout=60, isolation_level=None)

    def _migrate(self) -> None:
        import sqlite_utils

        self.conn.execute("BEGIN IMMEDIATE")  # one migrator at a time
        try:
            version = self.conn.execute("PRAGMA user_version").fetchone()[0]
            if version < SCHEMA_VERSION:
                self.conn.execute("COMMIT")
                db = sqlite_utils.Database(self.conn)
                _migrations().apply(db)
                self.conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            else:
                self.conn.execute("COMMIT")
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self.conn.close()
        if self._copy is not None:
            import shutil

            shutil.rmtree(self._copy, ignore_errors=True)
            self._copy = None

    # --- transactions ---------------------------------------------------------------

    @contextmanager
    def write(self):
        """One serialised write transaction (nested calls join the outer one)."""
        if self.conn.in_transaction:
            yield self.conn
            return
        self.refuse_if_readonly()
        with _WRITERS:  # (threads of one process queue here, not in SQLite's busy loop, where some starved)
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            else:
                self.conn.execute("COMMIT")

    def refuse_if_readonly(self) -> None:
        """For a command that does work before its first write (a run): refuse before it starts."""
        if self.readonly:
            raise read_only_refusal(self.refusal_path or self.path)

    def q(self, sql: str, *args):
        return self.conn.execute(sql, args)

    # --- meta -----------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self.q("SELECT value FROM meta WHERE key = ?", key).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str | None) -> None:
        if value is None:
            self.q("DELETE FROM meta WHERE key = ?", key)
        else:
            self.q("INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                   key, value)

    # --- investigations -------------------------------------------------------------

    def exists(self, inv_id: str) -> bool:
        return self.q("SELECT 1 FROM investigations WHERE id = ?", inv_id).fetchone() is not None

    def ids(self) -> list[str]:
        return [r[0] for r in self.q("SELECT id FROM investigations ORDER BY id")]

    def summaries(self, status: str | None = None) -> list[dict]:
        sql = """SELECT i.id, i.title, i.status, i.tags, i.created, i.updated,
                        (SELECT count(*) FROM attempts a WHERE a.investigation_id = i.id) AS attempts
                 FROM investigations i"""
        args: tuple = ()
        if status:
            sql += " WHERE i.status = ?"
            args = (status,)
        sql += " ORDER BY i.updated DESC, i.id"
        out = []
        for r in self.q(sql, *args):
            d = dict(r)
            d["tags"] = json.loads(d["tags"])
            out.append(d)
        return out

    def title_rows(self) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self.q("SELECT id, title FROM investigations")]

    def rev(self, inv_id: str) -> int:
        row = self.q("SELECT rev FROM investigations WHERE id = ?", inv_id).fetchone()
        return row[0] if row else 0

    def load(self, inv_id: str) -> Investigation:
        r = self.q("SELECT * FROM investigations WHERE id = ?", inv_id).fetchone()
        if r is None:
            raise DbglogError(f"unknown investigation {inv_id!r} (see `dbglog list`)")
        inv = Investigation(
            id=r["id"], title=r["title"], status=r["status"], symptom=r["symptom"],
            environment=r["environment"], related_files=json.loads(r["related_files"]),
            tags=json.loads(r["tags"]), root_cause=r["root_cause"], created=r["created"],
            updated=r["updated"], labels=(r["label_working"], r["label_broken"]),
            sections=[Section(**s) for s in json.loads(r["sections"])], source=r["source"],
        )
        inv.attempts = [self._attempt(a) for a in self.q(
            "SELECT * FROM attempts WHERE investigation_id = ? ORDER BY number", inv_id)]
        inv.differences = [Difference(position=d["position"], factor=d["factor"], working=d["working"],
                                      broken=d["broken"], status=d["status"], apply=d["apply"])
                           for d in self.q("SELECT * FROM differences WHERE investigation_id = ? ORDER BY position",
                                           inv_id)]
        inv.next_steps = [NextStep(position=s["position"], text=s["text"], detail=s["detail"],
                                   status=s["status"], attempt=s["attempt"],
                                   source_lines=json.loads(s["source_lines"]) if s["source_lines"] != "[]" else [])
                          for s in self.q("SELECT * FROM next_steps WHERE investigation_id = ? ORDER BY position",
                                          inv_id)]
        return inv

    @staticmethod
    def _attempt(a) -> Attempt:
        return Attempt(number=a["number"], title=a["title"], hypothesis=a["hypothesis"], did=a["did"],
                       result=a["result"], conclusion=a["conclusion"], outcome=a["outcome"],
                       created=a["created"], runs=json.loads(a["runs"]) if a["runs"] != "[]" else [],
                       source_lines=json.loads(a["source_lines"]) if a["source_lines"] != "[]" else [], who=a["who"])

    def insert_investigation(self, inv: Investigation) -> None:
        self.q(
            """INSERT INTO investigations (id, title, status, symptom, environment, related_files, tags,
                 root_cause, created, updated, label_working, label_broken, sections, source, rev)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)""",
            inv.id, inv.title, inv.status, inv.symptom, inv.environment,
            json.dumps(inv.related_files), json.dumps(inv.tags), inv.root_cause, inv.created,
            inv.updated, inv.labels[0], inv.labels[1], json.dumps([s.to_dict() for s in inv.sections]),
            inv.source,
        )
        if inv.sections:
            self._index_sections(inv.id, inv.sections)
        self._replace_children(inv)

    def _index_sections(self, inv_id: str, sections) -> None:
        # The chunk rows follow investigations.sections on every write (dbglog/kb/sections.py);
        # deleting the investigation removes them (ON DELETE CASCADE).
        from dbglog.kb.sections import set_investigation

        set_investigation(self.conn, inv_id, sections)

    def replace_investigation(self, inv: Investigation) -> None:
        """Make the stored investigation equal to ``inv`` (used when importing an edited file).

        Rows are updated in place by their natural key rather than deleted and re-inserted,
        so row ids (and the search index built on them) stay stable.
        """
        old = self.q("SELECT sections FROM investigations WHERE id = ?", inv.id).fetchone()
        if old is None:
            self.insert_investigation(inv)
            return
        sections = json.dumps([s.to_dict() for s in inv.sections])
        self.q(
            """UPDATE investigations SET title=?, status=?, symptom=?, environment=?, related_files=?,
                 tags=?, root_cause=?, created=?, updated=?, label_working=?, label_broken=?, sections=?,
                 source=?, rev = rev + 1 WHERE id = ?""",
            inv.title, inv.status, inv.symptom, inv.environment, json.dumps(inv.related_files),
            json.dumps(inv.tags), inv.root_cause, inv.created, inv.updated, inv.labels[0],
            inv.labels[1], sections, inv.source, inv.id,
        )
        if old[0] != sections:  # re-chunk only when the free text changed (a sync re-reads many files)
            self._index_sections(inv.id, inv.sections)
        self._replace_children(inv)

    def _replace_children(self, inv: Investigation) -> None:
        numbers = [a.number for a in inv.attempts]
        if len(set(numbers)) != len(numbers):
            dup = sorted({n for n in numbers if numbers.count(n) > 1})
            raise DbglogError(f"investigation {inv.id} has two attempts numbered {dup[0]}; renumber one")
        for a in inv.attempts:
            self.upsert_attempt(inv.id, a)
            if a.runs:  # a run follows its attempt when a merge or a hand edit renumbered it
                self.q(f"UPDATE runs SET attempt_number = ? WHERE investigation_id = ? AND id IN "
                       f"({','.join('?' * len(a.runs))}) AND attempt_number IS NOT ?", a.number, inv.id, *a.runs,
                       a.number)
        marks = ",".join("?" * len(numbers))
        self.q(f"DELETE FROM attempts WHERE investigation_id = ? AND number NOT IN ({marks})", inv.id, *numbers)
        self.set_differences(inv.id, inv.differences)
        self.set_next_steps(inv.id, inv.next_steps)

    def upsert_attempt(self, inv_id: str, a: Attempt) -> None:
        from dbglog.core.synonyms import identifier_words  # words of compound identifiers, for search

        self.q(
            """INSERT INTO attempts (investigation_id, number, title, hypothesis, did, result, conclusion,
                 outcome, created, runs, words, source_lines, who) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
               ON CONFLICT(investigation_id, number) DO UPDATE SET title=excluded.title,
                 hypothesis=excluded.hypothesis, did=excluded.did, result=excluded.result,
                 conclusion=excluded.conclusion, outcome=excluded.outcome, created=excluded.created,
                 runs=excluded.runs, words=excluded.words, source_lines=excluded.source_lines, who=excluded.who""",
            inv_id, a.number, a.title, a.hypothesis, a.did, a.result, a.conclusion, a.outcome,
            a.created, json.dumps(a.runs), identifier_words(a.title, a.hypothesis, a.did, a.result, a.conclusion),
            json.dumps(a.source_lines), a.who,
        )

    def next_attempt_number(self, inv_id: str) -> int:
        return self.q("SELECT coalesce(max(number), 0) + 1 FROM attempts WHERE investigation_id = ?",
                      inv_id).fetchone()[0]

    def get_attempt(self, inv_id: str, number: int) -> Attempt:
        r = self.q("SELECT * FROM attempts WHERE investigation_id = ? AND number = ?", inv_id, number).fetchone()
        if r is None:
            raise DbglogError(f"investigation {inv_id} has no attempt {number}")
        return self._attempt(r)

    def set_differences(self, inv_id: str, rows: list[Difference]) -> None:
        existing = [r[0] for r in self.q(
            "SELECT id FROM differences WHERE investigation_id = ? ORDER BY position", inv_id)]
        for i, d in enumerate(rows):
            args = (i + 1, d.factor, d.working, d.broken, d.status, d.apply)
            if i < len(existing):
                self.q("UPDATE differences SET position=?, factor=?, working=?, broken=?, status=?, apply=? "
                       "WHERE id = ?", *args, existing[i])
            else:
                self.q("INSERT INTO differences (position, factor, working, broken, status, apply, "
                       "investigation_id) VALUES (?, ?, ?, ?, ?, ?, ?)", *args, inv_id)
        for rid in existing[len(rows):]:
            self.q("DELETE FROM differences WHERE id = ?", rid)

    def set_next_steps(self, inv_id: str, steps: list[NextStep]) -> None:
        existing = [r[0] for r in self.q(
            "SELECT id FROM next_steps WHERE investigation_id = ? ORDER BY position", inv_id)]
        for i, s in enumerate(steps):
            args = (i + 1, s.text, s.detail, s.status, s.attempt, json.dumps(s.source_lines))
            if i < len(existing):
                self.q("UPDATE next_steps SET position=?, text=?, detail=?, status=?, attempt=?, source_lines=? "
                       "WHERE id = ?", *args, existing[i])
            else:
                self.q("INSERT INTO next_steps (position, text, detail, status, attempt, source_lines, "
                       "investigation_id) VALUES (?, ?, ?, ?, ?, ?, ?)", *args, inv_id)
        for rid in existing[len(steps):]:
            self.q("DELETE FROM next_steps WHERE id = ?", rid)

    def touch(self, inv_id: str, when: str) -> None:
        """Mark a change: the mirror must be re-rendered for the new revision."""
        self.q("UPDATE investigations SET updated = ?, rev = rev + 1 WHERE id = ?", when, inv_id)

    def update_fields(self, inv_id: str, **fields) -> None:
        cols = ", ".join(f"{k} = ?" for k in fields)
        vals = [json.dumps(v) if isinstance(v, list) else v for v in fields.values()]
        self.q(f"UPDATE investigations SET {cols} WHERE id = ?", *vals, inv_id)
        if "sections" in fields:
            raw = fields["sections"]
            self._index_sections(inv_id, json.loads(raw) if isinstance(raw, str) else raw)

    def delete_investigation(self, inv_id: str) -> None:
        self.q("DELETE FROM sections WHERE investigation_id = ?", inv_id)  # also cascades; explicit is cheap
        self.q("DELETE FROM investigations WHERE id = ?", inv_id)
        self.q("DELETE FROM mirror_files WHERE investigation_id = ?", inv_id)

    # --- runs -------------------------------------------------------------------------

    def insert_run(self, result: dict, run_dir: str, investigation_id: str | None = None,
                   attempt_number: int | None = None) -> None:
        self.q(
            """INSERT INTO runs (id, investigation_id, attempt_number, started, duration_s, cmd, cwd, outcome,
                 signature, exit_code, signal, git_commit, git_dirty, run_dir, result)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            result["id"], investigation_id, attempt_number, result["started"], result["duration_s"],
            json.dumps(result["cmd"]), result["cwd"], result["outcome"], result["signature"],
            result["exit_code"], result["signal"], result["git_commit"],
            None if result["git_dirty"] is None else int(result["git_dirty"]), run_dir, json.dumps(result),
        )

    def link_run(self, run_id: str, investigation_id: str, attempt_number: int) -> None:
        self.q("UPDATE runs SET investigation_id = ?, attempt_number = ? WHERE id = ?",
               investigation_id, attempt_number, run_id)

    def runs(self, limit: int = 50) -> list[dict]:
        rows = self.q("SELECT * FROM runs ORDER BY started DESC, id DESC LIMIT ?", limit)
        return [self._run(r) for r in rows]

    def get_run(self, ref: str) -> dict:
        if not ref.strip():  # (an empty prefix matches every run: the first one was shown)
            raise DbglogError("give a run's id, or the start of one (see `dbglog runs list`)")
        rows = self.q("SELECT * FROM runs WHERE id = ? OR id LIKE ? ESCAPE '\\' ORDER BY id LIMIT 6",
                      ref, ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%").fetchall()
        exact = [r for r in rows if r["id"] == ref]
        if exact or len(rows) == 1:
            return self._run((exact or rows)[0])
        if not rows:
            raise DbglogError(f"unknown run {ref!r} (see `dbglog runs list`)")
        raise DbglogError(f"{ref!r} matches several runs ({', '.join(r['id'] for r in rows[:5])}); give more of the id")

    @staticmethod
    def _run(r) -> dict:
        d = json.loads(r["result"])
        d.update(investigation=r["investigation_id"], attempt=r["attempt_number"], run_dir=r["run_dir"])
        return d

    # --- mirror baseline ------------------------------------------------------------

    def mirror_rows(self) -> dict[str, sqlite3.Row]:
        return {r["path"]: r for r in self.q("SELECT * FROM mirror_files")}

    def mirror_for(self, inv_id: str):
        return self.q("SELECT * FROM mirror_files WHERE investigation_id = ?", inv_id).fetchone()

    def set_mirror(self, path: str, inv_id: str, size: int, mtime_ns: int, sha: str, rev: int) -> None:
        self.q("DELETE FROM mirror_files WHERE investigation_id = ? AND path != ?", inv_id, path)
        self.q(
            """INSERT INTO mirror_files (path, investigation_id, size, mtime_ns, sha256, rev)
               VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET
               investigation_id=excluded.investigation_id, size=excluded.size,
               mtime_ns=excluded.mtime_ns, sha256=excluded.sha256, rev=excluded.rev""",
            path, inv_id, size, mtime_ns, sha, rev,
        )

    def drop_mirror(self, path: str) -> None:
        self.q("DELETE FROM mirror_files WHERE path = ?", path)
