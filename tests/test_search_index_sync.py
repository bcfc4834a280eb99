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


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops)
def test_index_follows_every_write_path(seq):
    root = Path(tempfile.mkdtemp())
    recs = Records(Workspace(root / ".dbglog"), create=True)
    try:
        invs = [recs.new(f"Investigation {n}").id for n in range(2)]
        live: dict[str, tuple[str, int]] = {}  # word -> (investigation, attempt number)
        dead: set[str] = set()
        notes: dict[str, tuple[str, str]] = {}  # word -> (investigation, section heading) of free text
        dead_notes: set[str] = set()

        def kill_notes(pred):
            for w, loc in list(notes.items()):
                if pred(loc):
                    dead_notes.add(w)
                    del notes[w]

        def kill_words(pred):
            for w, loc in list(live.items()):
                if pred(loc):
                    dead.add(w)
                    del live[w]

        for op, k, seed in seq:
            if not invs:
                invs.append(recs.new(f"Investigation {seed}").id)
            inv = invs[k % len(invs)]
            atts = attempts_of(recs, inv)
            if op == "new":
                invs.append(recs.new(f"Investigation {seed}").id)
            elif op == "section":  # dbglog writes a free section (a bisection report does this)
                heading = f"## Notes {k % 2}"
                w = word(seed)
                kill_notes(lambda loc: loc == (inv, heading))
                recs.set_section(inv, heading, f"intro {w}\n\n### Sub {seed}\nran `{w}_flag` twice")
                notes[w] = (inv, heading)
            elif op == "section-file":  # a free section edited by hand in the mirror file, then sync
                model_inv = recs.store.load(inv)
                w = word(seed)
                if model_inv.sections and k % 2:
                    sec = model_inv.sections[k % len(model_inv.sections)]
                    kill_notes(lambda loc: loc == (inv, sec.heading))
                    sec.body = f"rewritten by hand: {w}"
                else:
                    sec = model.Section(f"## Hand notes {seed}", f"- tried {w}\n- [ ] maybe later")
                    kill_notes(lambda loc: loc == (inv, sec.heading))
                    model_inv.sections = [s for s in model_inv.sections if s.heading != sec.heading] + [sec]
                notes[w] = (inv, sec.heading)
                path = recs.ws.root / recs.path_for(inv)
                path.write_text(mirror.render(model_inv, recs.ws.templates_dir), encoding="utf-8")
                recs.sync(force=True)
            elif op == "reindex-all":  # `dbglog reindex --force`: every investigation rebuilt from logs/
                with recs.store.write():
                    sync.reindex(recs.store, recs.ws, force=True)
            elif op == "add" or not atts and op in ("edit", "delete", "import"):
                w = word(seed)
                a = recs.add_attempt(inv, title=f"try {seed}", did=f"ran {w} with flags", outcome="failed")
                live[w] = (inv, a.number)
            elif op == "edit":
                a = atts[k % len(atts)]
                w = word(seed)
                kill_words(lambda loc: loc == (inv, a.number))
                recs.edit_attempt(inv, a.number, did=f"changed to {w}")
                live[w] = (inv, a.number)
            elif op == "delete":
                a = atts[k % len(atts)]
                kill_words(lambda loc: loc == (inv, a.number))
                recs.delete_attempt(inv, a.number)
            elif op == "import":  # edit the markdown file outside dbglog, then sync imports it
                model_inv = recs.store.load(inv)
                a = model_inv.attempts[k % len(model_inv.attempts)]
                w = word(seed)
                kill_words(lambda loc: loc == (inv, a.number))
                a.did = f"edited in the file: {w}"
                live[w] = (inv, a.number)
                if k % 3 == 0 and len(model_inv.attempts) > 1:  # also remove another attempt in the file
                    other = next(x for x in model_inv.attempts if x is not a)
                    model_inv.attempts.remove(other)
                    kill_words(lambda loc: loc == (inv, other.number))
                path = recs.ws.root / recs.path_for(inv)
                path.write_text(mirror.render(model_inv, recs.ws.templates_dir), encoding="utf-8")
                recs.sync(force=True)
            elif op == "reindex":  # rebuild one investigation from scratch (new row ids)
                model_inv = recs.store.load(inv)
                with recs.store.write():
                    recs.store.delete_investigation(inv)
                    recs.store.insert_investigation(model_inv)
                    recs.publish(inv)
            elif op == "drop":
                with recs.store.write():
                    recs.store.delete_investigation(inv)
                (recs.ws.root / f"logs/{inv}.md").unlink(missing_ok=True)
                invs.remove(inv)
                kill_words(lambda loc: loc[0] == inv)
                kill_notes(lambda loc: loc[0] == inv)

        conn = recs.store.conn
        assert search.check_index(conn) == []
        for w, (inv, num) in live.items():
            hits = search.search(conn, w, kinds=("attempt",)).hits
            assert hits and (hits[0].investigation, hits[0].number) == (inv, num), (w, hits[:1])
            sub = search.search(conn, w[2:-1], kinds=("attempt",)).hits  # substring via trigram
            assert any((h.investigation, h.number) == (inv, num) for h in sub)
        for w in dead:
            for h in search.search(conn, w, kinds=("attempt",), limit=50).hits:
                assert w not in h.fields["did"], (w, h.fields)
        n_att = conn.execute("SELECT count(*) FROM attempts").fetchone()[0]
        for t in ("attempts_fts", "attempts_trigram"):
            assert conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] == n_att
        for w, (inv, heading) in notes.items():
            hits = search.search(conn, w, kinds=("section",)).hits
            assert hits and hits[0].investigation == inv, (w, hits[:1])
            assert hits[0].fields["heading"].startswith(heading.lstrip("# ")), hits[0].fields
            assert w in hits[0].line_text
            sub = search.search(conn, w[2:-1], kinds=("section",)).hits  # substring via the trigram table
            assert any(h.investigation == inv for h in sub)
        for w in dead_notes:
            for h in search.search(conn, w, kinds=("section",), limit=50).hits:
                assert w not in h.fields["body"], (w, h.fields)
        n_sec = conn.execute("SELECT count(*) FROM sections").fetchone()[0]
        for t in ("sections_fts", "sections_trigram"):
            assert conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] == n_sec
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
