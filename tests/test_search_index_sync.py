"""The search index stays true under every write path (property test).

Random sequences of add / edit / delete attempt / import (file edited outside dbglog, then sync) /
reindex (investigation dropped and re-inserted) / delete investigation / free sections set by
dbglog (``set_section``) or edited in the file (sync) / full reindex from logs/; afterwards every
stored attempt and every free-section word is found, and no removed word finds anything.
"""

import itertools
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from dbglog.core import model
from dbglog.kb import mirror, search, sync
from dbglog.kb.records import Records
from dbglog.util.workspace import Workspace

_counter = itertools.count()


def word(seed: str) -> str:
    return f"kw{seed}x{next(_counter)}"


ops = st.lists(
    st.tuples(st.sampled_from(["add", "add", "edit", "delete", "import", "reindex", "drop", "new",
                               "section", "section-file", "reindex-all"]),
              st.integers(0, 10), st.text("bcdfghjklmnpqrstvz", min_size=4, max_size=6)),
    min_size=3, max_size=14)


def attempts_of(recs, inv_id):
    return recs.store.load(inv_id).attempts


class Expected:
    """What the index must answer after the operations so far: each op makes its write through one
    path and notes which words now find what, and which words must find nothing any more."""

    def __init__(self, recs: Records):
        self.recs = recs
        self.invs = [recs.new(f"Investigation {n}").id for n in range(2)]
        self.live: dict[str, tuple[str, int]] = {}  # word -> (investigation, attempt number)
        self.dead: set[str] = set()
        self.notes: dict[str, tuple[str, str]] = {}  # word -> (investigation, section heading) of free text
        self.dead_notes: set[str] = set()

    def kill_notes(self, pred) -> None:
        for w, loc in list(self.notes.items()):
            if pred(loc):
                self.dead_notes.add(w)
                del self.notes[w]

    def kill_words(self, pred) -> None:
        for w, loc in list(self.live.items()):
            if pred(loc):
                self.dead.add(w)
                del self.live[w]

    def write_file(self, inv: str, model_inv) -> None:
        """The mirror file rewritten outside dbglog, then synced."""
        path = self.recs.ws.root / self.recs.path_for(inv)
        path.write_text(mirror.render(model_inv, self.recs.ws.templates_dir), encoding="utf-8")
        self.recs.sync(force=True)

    def apply(self, op: str, k: int, seed: str) -> None:
        if not self.invs:
            self.invs.append(self.recs.new(f"Investigation {seed}").id)
        inv = self.invs[k % len(self.invs)]
        atts = attempts_of(self.recs, inv)
        if op in ("edit", "delete", "import") and not atts:
            op = "add"
        getattr(self, "op_" + op.replace("-", "_"))(inv, atts, k, seed)

    def op_new(self, inv, atts, k, seed) -> None:
        self.invs.append(self.recs.new(f"Investigation {seed}").id)

    def op_section(self, inv, atts, k, seed) -> None:  # dbglog writes a free section (a bisection report does)
        heading = f"## Notes {k % 2}"
        w = word(seed)
        self.kill_notes(lambda loc: loc == (inv, heading))
        self.recs.set_section(inv, heading, f"intro {w}\n\n### Sub {seed}\nran `{w}_flag` twice")
        self.notes[w] = (inv, heading)

    def op_section_file(self, inv, atts, k, seed) -> None:  # a free section edited by hand in the file
        model_inv = self.recs.store.load(inv)
        w = word(seed)
        if model_inv.sections and k % 2:
            sec = model_inv.sections[k % len(model_inv.sections)]
            self.kill_notes(lambda loc: loc == (inv, sec.heading))
            sec.body = f"rewritten by hand: {w}"
        else:
            sec = model.Section(f"## Hand notes {seed}", f"- tried {w}\n- [ ] maybe later")
            self.kill_notes(lambda loc: loc == (inv, sec.heading))
            model_inv.sections = [s for s in model_inv.sections if s.heading != sec.heading] + [sec]
        self.notes[w] = (inv, sec.heading)
        self.write_file(inv, model_inv)

    def op_reindex_all(self, inv, atts, k, seed) -> None:  # `dbglog reindex --force`: all rebuilt from logs/
        with self.recs.store.write():
            sync.reindex(self.recs.store, self.recs.ws, force=True)

    def op_add(self, inv, atts, k, seed) -> None:
        w = word(seed)
        a = self.recs.add_attempt(inv, title=f"try {seed}", did=f"ran {w} with flags", outcome="failed")
        self.live[w] = (inv, a.number)

    def op_edit(self, inv, atts, k, seed) -> None:
        a = atts[k % len(atts)]
        w = word(seed)
        self.kill_words(lambda loc: loc == (inv, a.number))
        self.recs.edit_attempt(inv, a.number, did=f"changed to {w}")
        self.live[w] = (inv, a.number)

    def op_delete(self, inv, atts, k, seed) -> None:
        a = atts[k % len(atts)]
        self.kill_words(lambda loc: loc == (inv, a.number))
        self.recs.delete_attempt(inv, a.number)

    def op_import(self, inv, atts, k, seed) -> None:  # edit the markdown file outside dbglog, then sync
        model_inv = self.recs.store.load(inv)
        a = model_inv.attempts[k % len(model_inv.attempts)]
        w = word(seed)
        self.kill_words(lambda loc: loc == (inv, a.number))
        a.did = f"edited in the file: {w}"
        self.live[w] = (inv, a.number)
        if k % 3 == 0 and len(model_inv.attempts) > 1:  # also remove another attempt in the file
            other = next(x for x in model_inv.attempts if x is not a)
            model_inv.attempts.remove(other)
            self.kill_words(lambda loc: loc == (inv, other.number))
        self.write_file(inv, model_inv)

    def op_reindex(self, inv, atts, k, seed) -> None:  # rebuild one investigation from scratch (new row ids)
        model_inv = self.recs.store.load(inv)
        with self.recs.store.write():
            self.recs.store.delete_investigation(inv)
            self.recs.store.insert_investigation(model_inv)
            self.recs.publish(inv)

    def op_drop(self, inv, atts, k, seed) -> None:
        with self.recs.store.write():
            self.recs.store.delete_investigation(inv)
        (self.recs.ws.root / f"logs/{inv}.md").unlink(missing_ok=True)
        self.invs.remove(inv)
        self.kill_words(lambda loc: loc[0] == inv)
        self.kill_notes(lambda loc: loc[0] == inv)


def assert_attempts_indexed(conn, exp: Expected) -> None:
    for w, (inv, num) in exp.live.items():
        hits = search.search(conn, w, kinds=("attempt",)).hits
        assert hits and (hits[0].investigation, hits[0].number) == (inv, num), (w, hits[:1])
        sub = search.search(conn, w[2:-1], kinds=("attempt",)).hits  # substring via trigram
        assert any((h.investigation, h.number) == (inv, num) for h in sub)
    for w in exp.dead:
        for h in search.search(conn, w, kinds=("attempt",), limit=50).hits:
            assert w not in h.fields["did"], (w, h.fields)
    assert_index_complete(conn, "attempts")


def assert_sections_indexed(conn, exp: Expected) -> None:
    for w, (inv, heading) in exp.notes.items():
        hits = search.search(conn, w, kinds=("section",)).hits
        assert hits and hits[0].investigation == inv, (w, hits[:1])
        assert hits[0].fields["heading"].startswith(heading.lstrip("# ")), hits[0].fields
        assert w in hits[0].line_text
        sub = search.search(conn, w[2:-1], kinds=("section",)).hits  # substring via the trigram table
        assert any(h.investigation == inv for h in sub)
    for w in exp.dead_notes:
        for h in search.search(conn, w, kinds=("section",), limit=50).hits:
            assert w not in h.fields["body"], (w, h.fields)
    assert_index_complete(conn, "sections")


def assert_index_complete(conn, table: str) -> None:
    """Both search indexes of a table hold one row per row of it."""
    n = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    for t in (f"{table}_fts", f"{table}_trigram"):
        assert conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] == n


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops)
def test_index_follows_every_write_path(seq):
    root = Path(tempfile.mkdtemp())
    recs = Records(Workspace(root / ".dbglog"), create=True)
    try:
        exp = Expected(recs)
        for op, k, seed in seq:
            exp.apply(op, k, seed)
        conn = recs.store.conn
        assert search.check_index(conn) == []
        assert_attempts_indexed(conn, exp)
        assert_sections_indexed(conn, exp)
    finally:
        recs.close()
        shutil.rmtree(root, ignore_errors=True)


def test_migration_indexes_existing_rows(tmp_path):
    """A database created before 0002_search gets its existing rows indexed by the migration."""
    import sqlite3

    from dbglog.kb import store

    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)
    import sqlite_utils

    store._core(sqlite_utils.Database(conn))
    conn.execute("INSERT INTO investigations (id, title) VALUES ('20260101-x-abcd', 'old crash')")
    conn.execute("INSERT INTO attempts (investigation_id, number, did) VALUES ('20260101-x-abcd', 1, 'ran cuobjdump')")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    s = store.Store(db)
    hits = search.search(s.conn, "cuobjdump").hits
    assert hits and hits[0].number == 1
    fts = s.conn.execute("SELECT sql FROM sqlite_master WHERE name = 'attempts_fts'").fetchone()[0]
    assert 'content="attempts"' in fts
    sdb = sqlite_utils.Database(s.conn)  # Datasette uses the same detection
    assert sdb["attempts"].detect_fts() == "attempts_fts"
    assert sdb["investigations"].detect_fts() == "investigations_fts"
    assert sdb["differences"].detect_fts() == "differences_fts"
    assert sdb["next_steps"].detect_fts() == "next_steps_fts"
    names = {r[0] for r in s.conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert {"attempts_ai", "attempts_ad", "attempts_au", "investigations_ai", "next_steps_au"} <= names
    s.close()
