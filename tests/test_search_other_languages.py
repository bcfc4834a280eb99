"""`tried` asked in English about notes written in other languages: the gloss table (core/gloss.toml) gives the
index English words for a record's Chinese, Japanese, Korean or German ones, and the rules read a way ("降级",
downgrade) in them. The records are my own sentences in the way such notes are written."""

import time

import pytest

from conftest import old_database_with_attempt, opened_by_dbglog
from dbglog.core.gloss import gloss
from dbglog.kb import search


def _records(root):
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace

    (root / ".git").mkdir()
    return Records(Workspace(root / ".dbglog"), create=True)


def _first(conn, idea):
    res = search.tried(conn, idea)
    return [(h.kind, h.title) for h in res.close][:1]


def test_an_english_question_finds_a_chinese_try_by_its_words(tmp_path):
    recs = _records(tmp_path)
    inv = recs.new("多卡训练时报错")
    recs.add_attempt(inv.id, title="把显卡驱动降级到 470 以后重启", result="还是报同样的错", outcome="failed")
    recs.add_attempt(inv.id, title="换成单卡训练", result="正常", outcome="worked")
    try:
        assert _first(recs.store.conn, "downgrade the driver to 470") == [("attempt", "把显卡驱动降级到 470 以后重启")]
        assert _first(recs.store.conn, "train on a single gpu") == [("attempt", "换成单卡训练")]
    finally:
        recs.close()


def test_an_english_question_finds_japanese_korean_and_german_tries(tmp_path):
    recs = _records(tmp_path)
    inv = recs.new("推論が遅い / 추론 오류 / Absturz")
    recs.add_attempt(inv.id, title="torch を再インストールした", outcome="failed")
    recs.add_attempt(inv.id, title="드라이버 다운그레이드 후 재부팅", outcome="worked")
    recs.add_attempt(inv.id, title="Umgebungsvariable gesetzt, Treiber neu installiert, Absturz unverändert", outcome="failed")
    try:
        conn = recs.store.conn
        assert _first(conn, "reinstall torch") == [("attempt", "torch を再インストールした")]
        assert _first(conn, "downgrade driver and reboot") == [("attempt", "드라이버 다운그레이드 후 재부팅")]
        assert _first(conn, "reinstall the driver") == [
            ("attempt", "Umgebungsvariable gesetzt, Treiber neu installiert, Absturz unverändert")]
    finally:
        recs.close()


def test_an_english_question_finds_a_polish_try_by_its_words(tmp_path):
    recs = _records(tmp_path)
    inv = recs.new("Trening wisi na drugiej karcie")
    recs.add_attempt(inv.id, title="Zaktualizowałem sterownik do 560 i zrestartowałem maszynę", result="Nadal wisi",
                     outcome="failed")
    recs.add_attempt(inv.id, title="Wyłączyłem IOMMU w BIOS-ie", result="Działa", outcome="worked")
    try:
        conn = recs.store.conn
        assert _first(conn, "update the driver to 560") == [
            ("attempt", "Zaktualizowałem sterownik do 560 i zrestartowałem maszynę")]
        assert _first(conn, "disable IOMMU in the BIOS") == [("attempt", "Wyłączyłem IOMMU w BIOS-ie")]
    finally:
        recs.close()


@pytest.mark.parametrize("title", [
    "Reduzi o clock da memória para 1200",  # its words, glossed
    "Reduzi o MCLK de 1300 para 1200: o corte de energia continua",  # an abbreviation the synonyms know
])
def test_an_english_question_finds_a_portuguese_try_by_its_words(tmp_path, title):
    recs = _records(tmp_path)
    inv = recs.new("Travamentos da MI50 sob carga")
    recs.add_attempt(inv.id, title=title, outcome="failed")
    recs.add_attempt(inv.id, title="Desativei o daemon de rampa", result="O jogo congelou", outcome="failed")
    try:
        assert _first(recs.store.conn, "reduce the memory clock to 1200") == [("attempt", title)]
    finally:
        recs.close()


def test_the_longest_entry_at_a_place_wins():
    assert gloss("重新安装了 torch") == ["reinstall"]
    assert gloss("비활성화") == ["disable"]


def test_no_latin_script_entry_glosses_an_english_word():
    # Latin-script entries are looked for in English text beyond ASCII too (a dash, a µs): none may start an English
    # word of another meaning. Plain ASCII is English and not looked at.
    english = ("Enabled activation checkpointing — compiled the extension, eliminated the copy, borrowed a node, "
               "the plant lent us two GPUs; plantuml; installed and reinstalled; a causal mask; 40 µs, no error")
    assert gloss(english) in ([], ["install"], ["install", "reinstall"])
    assert gloss("Treiber neu installiert") == []  # (ASCII: taken as English, free)


def test_a_database_from_before_glosses_indexes_them_on_open(tmp_path):
    db = tmp_path / "old.db"
    conn = old_database_with_attempt(db, "0015", "把驱动降级到 470")
    with opened_by_dbglog(conn, db) as s:
        assert [(h.kind, h.number) for h in search.tried(s.conn, "downgrade the driver to 470").close] == [
            ("attempt", 1)]
        assert search.check_index(s.conn) == []


def test_glossing_a_huge_text_is_linear():
    text = ("安装" * 20_000 + "x" * 50_000 + "Treiber " * 5_000)
    start = time.process_time()
    assert gloss(text) == ["install", "driver"]
    assert time.process_time() - start < 2.0


def test_a_try_told_in_chinese_with_everyday_verbs_is_found_by_their_english(tmp_path):
    recs = _records(tmp_path)
    inv = recs.new("服务进程无声退出")
    recs.add_attempt(inv.id, title="改用 HTTPServer（单线程）", outcome="failed")
    recs.add_attempt(inv.id, title="逐步加回 `_get_romance_state`", outcome="failed")
    recs.add_attempt(inv.id, title="重启机器", outcome="failed")
    try:
        conn = recs.store.conn
        assert _first(conn, "switch to a single-threaded HTTPServer") == [("attempt", "改用 HTTPServer（单线程）")]
        assert _first(conn, "add `_get_romance_state` back step by step") == [("attempt", "逐步加回 `_get_romance_state`")]
    finally:
        recs.close()
