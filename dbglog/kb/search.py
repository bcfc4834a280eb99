"""Search: "was this already tried, and what happened?"

A pure library over the store's sqlite3 connection (cli.py only parses and prints).

Index (migration ``0002_search``, built the way sqlite-utils' ``enable_fts(...,
create_triggers=True)`` does it, so Datasette detects it and offers search):

* ``attempts_fts``, ``investigations_fts``, ``differences_fts``, ``next_steps_fts``: FTS5
  external-content tables (``content=<table>``) kept in sync by AFTER INSERT/UPDATE/DELETE
  triggers ``<table>_ai/_ad/_au``; tokenizer ``porter unicode61 remove_diacritics 2``. No extra
  tokenchars on purpose: ``--replay-mode``, ``__launch_bounds__``, ``cuda:0`` are split into their
  words, and because every query token is quoted, the same token in a query becomes an FTS5
  *phrase* of those words, so it matches exactly that identifier (and ``replay mode`` still finds
  it); substrings are the trigram table's job.
* ``attempts_trigram``: FTS5 ``trigram`` table over the identifier-heavy attempt fields (title,
  what was done, result) for substring hits (``eplay-mod``); triggers ``attempts_trigram_ai/...``.

Ranking (kb-anchors §4): every query token is resolved once against the index: a *word* (the FTS
index has it), a *substring* (only the trigram index has it), or a *typo* (corrected with
rapidfuzz against the FTS vocabulary, read through an ``fts5vocab`` table). Then AND over the
resolved tokens, OR fallback when AND finds too little; the top candidates are reranked by a
fusion of coverage (how many query tokens the hit contains), bm25 with per-column weights, and a
rapidfuzz similarity on the short fields, plus a small boost when the hit's investigation matches
too. A query never yields "0 results" because of its syntax: operators and quotes are just text.

rapidfuzz is imported lazily (only for reranking, typo correction and similarity checks).
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from functools import lru_cache

from dbglog.core.gloss import gloss
from dbglog.core.purpose import PURPOSE_OPENER
from dbglog.util.errors import DbglogError
from dbglog.util import recache  # (patterns compiled once per install, not per command)
from dbglog.util.lazyre import Lazy  # tried's rarer rules: nothing to a command that never reaches them
from dbglog.util import jsonsafe

TOKENIZE = "porter unicode61 remove_diacritics 2"
MAX_QUERY_CHARS = 1000
MAX_TERMS = 24
DOC_WEIGHT = 0.3  # see _rank: the share of the query the hit's whole investigation or doc covers
OR_FALLBACK_BELOW = 3  # AND hits below this: widen to OR (more is enough to answer)
CANDIDATES = {"attempt": 100, "investigation": 30, "difference": 20, "next": 20, "section": 60}
BROAD = 1000  # matches of one table ranked by bm25 at most (the newest); see _floor
BROAD_OR = 300  # the same in OR mode once the selective words' rows are ranked on their own

# kind -> (base table, FTS columns in order, bm25 weights)
KINDS = {
    # words: the words of compound identifiers (cudaMallocAsync -> cuda malloc async), see
    # synonyms.identifier_words (migration 0009)
    "attempt": ("attempts", ("title", "did", "hypothesis", "result", "conclusion", "outcome", "words"),
                (10.0, 10.0, 4.0, 3.0, 3.0, 1.0, 3.0)),
    "investigation": ("investigations", ("title", "symptom", "root_cause", "environment", "tags"),
                      (10.0, 5.0, 5.0, 1.0, 3.0)),
    "difference": ("differences", ("factor", "working", "broken"), (6.0, 3.0, 3.0)),
    "next": ("next_steps", ("text", "detail"), (6.0, 2.0)),
    # free sections of investigations and chunks of watched docs (dbglog/kb/sections.py)
    "section": ("sections", ("heading", "body", "words"), (4.0, 1.0, 1.0)),
}
# The columns each migration indexed (a migration replays as it was first written).
_COLUMNS_0002 = {"attempt": ("title", "did", "hypothesis", "result", "conclusion", "outcome")}
_COLUMNS_0008 = ("heading", "body")
BASE_KINDS = ("attempt", "investigation", "difference", "next")  # indexed by migration 0002
TRIGRAM_COLS = ("title", "did", "result")
# kind -> its trigram table (substring matches: identifiers, flags, paths)
TRIGRAMS = {"attempt": "attempts_trigram", "section": "sections_trigram"}
KIND_NAMES = tuple(KINDS)
# Non-attempt rows are context; at equal relevance an attempt (with its verdict) comes first.
OUTCOME_FACTOR = {"worked": 1.12, "partial": 1.05}
KIND_FACTOR = {"attempt": 1.0, "investigation": 0.8, "difference": 0.85, "next": 0.85, "section": 0.85}

STOPWORDS = frozenset(
    "a an and are as at be been but by can could did do does doing for from had has have how i if in "
    "into is it its me my no not of on or our so that the then there these this those to try tried "
    "trying was we were what when where which while who why will with would you anyone someone "
    "already again use using used "
    # (prepositions of how or where a thing ran: "run under compute-sanitizer", "via the launcher")
    "under via through inside within onto".split()
)


# --- schema ---------------------------------------------------------------------------


def create_index(db) -> None:
    """Migration ``0002_search``: FTS tables + triggers. ``db`` is a ``sqlite_utils.Database``."""
    for kind in BASE_KINDS:
        table, cols, _w = KINDS[kind]
        cols = _COLUMNS_0002.get(kind, cols)
        db[table].enable_fts(list(cols), tokenize=TOKENIZE, create_triggers=True, replace=True)
    cols = ", ".join(TRIGRAM_COLS)
    new = ", ".join(f"new.{c}" for c in TRIGRAM_COLS)
    old = ", ".join(f"old.{c}" for c in TRIGRAM_COLS)
    db.executescript(
        f"""
        CREATE VIRTUAL TABLE IF NOT EXISTS attempts_trigram USING FTS5 (
            {cols}, tokenize='trigram', content=attempts
        );
        INSERT INTO attempts_trigram(attempts_trigram) VALUES('rebuild');
        CREATE TRIGGER IF NOT EXISTS attempts_trigram_ai AFTER INSERT ON attempts BEGIN
          INSERT INTO attempts_trigram (rowid, {cols}) VALUES (new.rowid, {new});
        END;
        CREATE TRIGGER IF NOT EXISTS attempts_trigram_ad AFTER DELETE ON attempts BEGIN
          INSERT INTO attempts_trigram (attempts_trigram, rowid, {cols}) VALUES('delete', old.rowid, {old});
        END;
        CREATE TRIGGER IF NOT EXISTS attempts_trigram_au AFTER UPDATE ON attempts BEGIN
          INSERT INTO attempts_trigram (attempts_trigram, rowid, {cols}) VALUES('delete', old.rowid, {old});
          INSERT INTO attempts_trigram (rowid, {cols}) VALUES (new.rowid, {new});
        END;
        """
    )


def create_section_index(db) -> None:
    """Migration ``0008_sections``: the FTS and trigram tables over ``sections`` (same scheme)."""
    db["sections"].enable_fts(list(_COLUMNS_0008), tokenize=TOKENIZE, create_triggers=True, replace=True)
    db.executescript(
        """
        CREATE VIRTUAL TABLE IF NOT EXISTS sections_trigram USING FTS5 (
            body, tokenize='trigram', content=sections
        );
        INSERT INTO sections_trigram(sections_trigram) VALUES('rebuild');
        CREATE TRIGGER IF NOT EXISTS sections_trigram_ai AFTER INSERT ON sections BEGIN
          INSERT INTO sections_trigram (rowid, body) VALUES (new.rowid, new.body);
        END;
        CREATE TRIGGER IF NOT EXISTS sections_trigram_ad AFTER DELETE ON sections BEGIN
          INSERT INTO sections_trigram (sections_trigram, rowid, body) VALUES('delete', old.rowid, old.body);
        END;
        CREATE TRIGGER IF NOT EXISTS sections_trigram_au AFTER UPDATE ON sections BEGIN
          INSERT INTO sections_trigram (sections_trigram, rowid, body) VALUES('delete', old.rowid, old.body);
          INSERT INTO sections_trigram (rowid, body) VALUES (new.rowid, new.body);
        END;
        """
    )


def add_identifier_words(db) -> None:
    """Migration ``0009_identifier_words``: a ``words`` column on attempts and sections holding the
    words of their compound identifiers, filled for existing rows and indexed with the rest."""
    from dbglog.core.synonyms import identifier_words

    conn = db.conn
    for table in ("attempts", "sections"):
        conn.execute(f"ALTER TABLE {table} ADD COLUMN words TEXT NOT NULL DEFAULT ''")
    for kind in ("attempt", "section"):
        table, cols, _w = KINDS[kind]
        db[table].enable_fts(list(cols), tokenize=TOKENIZE, create_triggers=True, replace=True)
    conn.executemany("UPDATE attempts SET words = ? WHERE id = ?", [
        (w, r[0]) for r in conn.execute("SELECT id, title, hypothesis, did, result, conclusion FROM attempts")
        if (w := identifier_words(*r[1:]))])
    from dbglog.kb import sections

    sections.rebuild(conn)  # investigations' free sections, chunked with their words
    conn.executemany("UPDATE sections SET words = ? WHERE id = ?", [
        (w, r[0]) for r in conn.execute("SELECT id, heading, body FROM sections WHERE path IS NOT NULL")
        if (w := identifier_words(*r[1:]))])


def refresh_identifier_words(conn) -> None:
    """Recompute ``words`` (synonyms.identifier_words) for every attempt and section whose words change."""
    from dbglog.core.synonyms import identifier_words

    for table, cols in (("attempts", "title, hypothesis, did, result, conclusion"), ("sections", "heading, body")):
        conn.executemany(f"UPDATE {table} SET words = ? WHERE id = ?", [
            (w, r[0]) for r in conn.execute(f"SELECT id, words, {cols} FROM {table}")
            if (w := identifier_words(*r[2:])) != r[1]])


def index_tables() -> list[str]:
    return [f"{t}_fts" for t, _c, _w in KINDS.values()] + list(TRIGRAMS.values())


def rebuild_index(conn: sqlite3.Connection) -> None:
    """Rebuild every search table from its content table (for `reindex --force` / `doctor --fix`).

    Needed after a VACUUM: ``investigations`` has an implicit rowid, which VACUUM may renumber.
    Free-section chunks are first re-cut from ``investigations.sections``.
    """
    from dbglog.kb import sections

    sections.rebuild(conn)
    for t in index_tables():
        conn.execute(f"INSERT INTO {t}({t}) VALUES('rebuild')")


def check_index(conn: sqlite3.Connection) -> list[str]:
    """Problems found by FTS5's integrity-check against the content tables, and chunks that do not
    match their investigation's sections (empty = healthy)."""
    from dbglog.kb import sections

    problems = []
    for t in index_tables():
        try:
            conn.execute(f"INSERT INTO {t}({t}, rank) VALUES('integrity-check', 1)")
        except sqlite3.DatabaseError as e:
            problems.append(f"{t}: {e}")
    return problems + sections.check(conn)

_CTRL = recache.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_WORD = recache.compile(r"\w+")
_CASE = recache.compile(r"[a-z][A-Z]|[A-Za-z]\d[A-Za-z]")  # an identifier made of several words
_UNIT = recache.compile(r"^(\d+(?:\.\d+)?)([A-Za-z]{1,4})$")
_TRIVIAL_VALUES = frozenset("0 1 true false yes no on off none".split())
_ON_VALUES = frozenset(("true", "yes", "on"))


def _fts_quote(s: str) -> str:
    return '"' + s.replace('"', '""') + '"'


def _stem(w: str) -> str:
    """A crude English stem for highlighting and coverage (the index itself uses porter)."""
    for suf in ("ations", "ation", "ings", "ing", "ions", "ion", "ers", "er", "edly", "ed", "ies", "es", "s", "ly"):
        if len(w) - len(suf) >= 3 and w.endswith(suf):
            return w[: -len(suf)]
    if len(w) >= 5 and w.endswith("e") and w[-2] not in "aeiou":
        return w[:-1]  # update -> updat (updating), enable -> enabl (enabled)
    return w


def _word_pattern(words: list[str]) -> str:
    pats = []
    for w in words:
        s = _stem(w)
        # the endings of the word itself at least ("implementations" is "implement" + 6)
        pats.append(re.escape(s) + (r"\w{0,%d}" % max(5, len(w) - len(s)) if len(s) >= 3 else ""))
    # a number is not the decimal part of another ("3" in "48.3"), and an integer is not the whole
    # part of one ("3" in "3.5"; but version 3.0 is in 3.0.0)
    head = r"(?<!\d\.)" if words and words[0].isdigit() else ""
    tail = r"(?!\.\d)" if len(words) == 1 and words[0].isdigit() else ""
    return r"(?<![^\W_])" + head + r"[\W_]{0,3}".join(pats) + r"(?![^\W_])" + tail


_SCIENTIFIC = recache.compile(r"(\d+(?:\.\d+)?)[eE]([-+]?)0*(\d+)")


def _form_pattern(form: str, exact_numbers: bool = True) -> str:
    """The pattern of one way of writing a term: a number in scientific notation by its value's
    spelling (1e-4 is 1e-04, not 1e4), anything else by its words."""
    sci = _SCIENTIFIC.fullmatch(form) if exact_numbers else None
    if sci:
        return (r"(?<![\w.])" + re.escape(sci[1]) + "[eE]" + ("-" if sci[2] == "-" else r"\+?")
                + "0*" + sci[3] + r"(?!\d)")
    if _FRACTION.fullmatch(form):  # .95 = 0.95 = 0.950 (never the tail of 10.95)
        return r"(?<![\w.])0?\." + form.split(".")[1].rstrip("0") + r"0*(?!\w)"  # (0.45 is the series of 0.45.0)
    words = [w.lower() for w in _WORD.findall(form)]
    return _word_pattern(words) if words else ""


_FRACTION = recache.compile(r"0?\.\d*[1-9]\d*")


def number_forms(tok: str) -> list[str]:
    """Other spellings of the value a number gives, the ways people write one setting: 1e-4 = 0.0001 =
    1.0e-4, 0.001 = 1e-3, .95 = 0.95, clip at 1 = 1.0. Not a version's: 2.1 is not 2.10, nor 12.4 12.40 (a fraction
    of one is written with trailing zeros elsewhere, ``_token_term``); a whole number only gains and
    loses its ".0", and "8k" is 8192 or 8000."""
    sci = _SCIENTIFIC.fullmatch(tok)
    if sci:
        mant, exp = sci[1], int(sci[3]) * (-1 if sci[2] == "-" else 1)
        tail = tok[len(mant):]
        out = [mant[:-2] + tail] if mant.endswith(".0") else [mant + ".0" + tail] if "." not in mant else []
        if -9 <= exp < 0:
            out.append(_plain(mant, exp))
        return out
    if _TINY.fullmatch(tok):  # 0.0001 -> 1e-4, 0.00025 -> 2.5e-4
        digits = tok[2:]
        lead = len(digits) - len(digits.lstrip("0"))
        rest = digits[lead:].rstrip("0") or "0"
        mant = rest[0] + ("." + rest[1:] if len(rest) > 1 else "")
        return [f"{mant}e-{lead + 1}"]
    if re.fullmatch(r"0?\.\d+", tok):  # 0.95 = .95
        return [tok[1:] if tok.startswith("0") else "0" + tok]
    if re.fullmatch(r"[1-9]\d{0,2}", tok):
        return [tok + ".0"]
    if re.fullmatch(r"[1-9]\d{0,2}[kK]", tok):  # 8k tokens: 8192 as often as 8000
        return [str(int(tok[:-1]) * 1024), str(int(tok[:-1]) * 1000)]
    if re.fullmatch(r"[1-9]\d{0,2}\.0", tok):
        return [tok[:-2]]
    return []


def _plain(mant: str, exp: int) -> str:
    """A mantissa and a negative exponent as a plain decimal (2.5, -4: 0.00025)."""
    whole, _, frac = mant.partition(".")
    digits = (whole + frac).lstrip("0") or "0"
    shift = -exp - len(whole.lstrip("0") or "0")
    return "0." + "0" * max(0, shift) + digits.rstrip("0") if digits.rstrip("0") else "0"


_TINY = recache.compile(r"0\.00\d*[1-9]\d*")  # a fraction under 0.01: written in scientific notation too


@dataclass
class Term:
    raw: str  # the user's token(s), as typed
    parts: list[str]  # its lower-cased words
    kind: str = "word"  # word | substring | typo | unknown
    corrected: str = ""  # for typos: the vocabulary word used instead
    stop: bool = False
    alts: list[str] = field(default_factory=list)  # equivalent phrases (synonyms, identifier words)
    base: str = ""  # what is searched for the token itself when not ``raw`` (an env var without its value)
    group: bool = False  # ``alts`` come from the synonym table (not from splitting an identifier)
    weight: float = 1.0  # how telling the term is (inverse document frequency, see _weigh)

    @property
    def forms(self) -> list[str]:
        first = self.corrected if self.kind == "typo" else (self.base or self.raw)
        return [first] + [a for a in self.alts if a.lower() != first.lower()]

    @property
    def fts(self) -> str:
        forms = self.forms
        if len(forms) == 1:
            return _fts_quote(forms[0])
        return "(" + " OR ".join(_fts_quote(f) for f in forms) + ")"

    def pattern(self) -> str:
        key = (self.kind, self.corrected, tuple(self.alts))
        cached = self.__dict__.get("_pattern")
        if cached and cached[0] == key:
            return cached[1]  # (the ranking and is_close ask for it once per hit)
        if self.kind == "substring":
            # a number starts where a number starts: "1GB" is not the tail of "41GB"
            pat = (r"(?<![\d.])" if self.raw[:1].isdigit() else "") + re.escape(self.raw)
        else:
            pat = "|".join(p for f in self.forms if (p := _form_pattern(f, self.kind != "typo")))
        self.__dict__["_pattern"] = (key, pat)
        return pat


@dataclass
class Query:
    text: str
    terms: list[Term]
    truncated: bool = False

    @property
    def active(self) -> list[Term]:
        return [t for t in self.terms if t.kind != "unknown"]

    def to_dict(self) -> dict:
        return {"text": self.text, "truncated": self.truncated,
                "terms": [{"token": t.raw, "as": t.kind, **({"corrected": t.corrected} if t.corrected else {}),
                           **({"also": t.alts} if t.alts else {})}
                          for t in self.terms]}


def clean_query(text) -> tuple[str, bool]:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    text = text.encode("utf-8", "replace").decode("utf-8") if _has_surrogates(text) else text
    text = _CTRL.sub(" ", text or "").strip()
    truncated = len(text) > MAX_QUERY_CHARS
    return text[:MAX_QUERY_CHARS], truncated


def _has_surrogates(s: str) -> bool:
    try:
        s.encode("utf-8")
        return False
    except UnicodeEncodeError:
        return True


def _env_terms(tok: str, name: str) -> list[Term]:
    """``NAME=VALUE``: the variable (with the words for what it does) and a value worth matching."""
    from dbglog.core import synonyms

    t = Term(raw=tok, parts=[p.lower() for p in _WORD.findall(name)], base=name,
             alts=[p for p in synonyms.ENV_VARS.get(name, ())])
    out = [t]
    value = tok[len(name) + 1:] if len(tok) > len(name) else ""
    for v in re.split(r"[:=,;]", value):
        if _WORD.search(v) and v.lower() not in _TRIVIAL_VALUES and not v.isdigit():
            out.append(Term(raw=v, parts=[p.lower() for p in _WORD.findall(v)]))
    return out


_SETTING = recache.compile(r"^-{0,2}[A-Za-z][\w.-]*$")  # the name in ``name=value`` (retain_graph, --tp)
_ALTERNATIVES = recache.compile(r"[A-Za-z0-9.+-]{1,6}(?:/[A-Za-z0-9.+-]{1,6}){1,3}"
                                # (names of any length with no dot, colon or path root: "torch/torchvision/torchaudio",
                                # "forward/backward", "q5_1/q5_0"; "nvidia.com/gpu" and "Qwen/Qwen3-0.6B" stay one name)
                                r"|[A-Za-z][\w+-]{0,23}(?:/[A-Za-z0-9][\w+-]{0,23}){1,4}")
_ABBR_NUM = recache.compile(r"^([A-Za-z]{2,4})(\d{1,3})$")  # TP8, PP2: a known abbreviation and its size
_POSSESSIVE = recache.compile(r"(?<=[A-Za-z0-9])['\u2019]s$")


# "7200 seconds", "2 hours": a duration written apart is read as one ("7200s"), so it finds its other units too
_SPACED_DURATION = recache.compile(r"\b(\d+(?:\.\d+)?)\s+(?:(s)ec(?:ond)?s?|(min)(?:ute)?s?|(h)(?:ou)?rs?)\b", re.I)


_CALL = recache.compile(r"([A-Za-z_][\w.]*)\(([^()]*)")  # a call cut by the split at its first space
_KEYWORD_VALUE = recache.compile(r"[A-Za-z_]\w*=[\w.+-]*\d[\w.+-]*,?")  # f(max_norm=1.0: the value it was given
# "half an hour", "an hour", "two minutes": a duration in words is the number of its unit (0.5 hours = 30 min)
_COUNT_WORDS = {"half": "0.5", "an": "1", "a": "1", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
                "six": "6", "ten": "10", "twelve": "12", "fifteen": "15", "twenty": "20", "thirty": "30"}
# (not "a second": "run it a second time" is no duration)
_WORDED_DURATION = recache.compile(r"\b(?:(half\s+an?|an|a|one)\s+(hour|minute)|"
                                   r"(two|three|four|five|six|ten|twelve|fifteen|twenty|thirty)\s+(hours|minutes|seconds))\b",
                                   re.I)


def _tokens(text: str) -> list[tuple[str, list[str]]]:
    from dbglog.core import synonyms

    out = []
    text = _WORDED_DURATION.sub(lambda m: _COUNT_WORDS[(m.group(1) or m.group(3)).lower().split()[0]] + " "
                                + (m.group(2) or m.group(4)), text)
    text = _SPACED_DURATION.sub(lambda m: m.group(1) + next(g for g in m.groups()[1:] if g).lower(), text)
    for tok in text.split():
        glob = tok.rstrip("\"'`()[]{}<>,;!?^+").endswith("*")
        tok = tok.strip("\"'`()[]{}<>,;!?*^+")  # wrapping punctuation, FTS operators
        tok = _POSSESSIVE.sub("", tok)  # "vllm's executor" is the vllm executor
        if glob:
            tok = tok.rstrip("_-.") or tok  # NCCL_* / VLLM_*: the family, by its prefix
        key, eq, value = tok.partition("=")
        m = _ABBR_NUM.match(tok)
        call = _CALL.fullmatch(tok)
        if call:  # "clip_grad_norm_(params," is the function; what it was given counts only as a value set by name
            pieces = [call[1]] + ([call[2]] if _KEYWORD_VALUE.fullmatch(call[2]) else [])
        elif _ALTERNATIVES.fullmatch(tok):
            pieces = tok.split("/")  # 3090/4090, fp16/bf16, TP/PP: each on its own
        elif eq and key and value and not synonyms.env_name(tok) and _SETTING.match(key) and _WORD.search(value):
            # TP=8, bs=32, retain_graph=False: the setting, then its value (records write
            # ``RETAIN_GRAPH: bool = False`` or ``--tp 8`` as often as ``name=value``); a setting
            # turned on (gradient_checkpointing=True) is the setting: records say "enabled X"
            pieces = [key] if value.lower() in _ON_VALUES else [key, value]
        elif m and not synonyms.expansions(synonyms.words(tok)) and synonyms.expansions(synonyms.words(m[1])):
            pieces = [m[1], m[2]]  # TP8 = TP=8 (but fa2, sm80, h100 are names of their own)
        else:
            pieces = [tok]
        for piece in pieces:
            parts = [p.lower() for p in _WORD.findall(piece)]
            if parts:
                out.append((piece, parts))
    return out


_SECONDS = {"s": 1, "sec": 1, "secs": 1, "min": 60, "mins": 60, "h": 3600, "hr": 3600, "hrs": 3600}


def _durations(number: str, unit: str) -> list[str]:
    """A duration in the other units people write it in: 1h = 60 min = 3600 s (a timeout set in
    seconds, ``NCCL_TIMEOUT=3600``, or said "1-hour"); [] for any other unit."""
    per = _SECONDS.get(unit.lower())
    if per is None:
        return []
    secs = float(number) * per
    out = []
    for size, names in ((3600, ("h", "hour", "hours")), (60, ("min", "minutes")), (1, ("s", "seconds"))):
        n = secs / size
        if n >= 1 and n == int(n):
            out += [f"{int(n)} {name}" for name in names]
            out.append(f"{names[-1]} {int(n)}")  # (Python's keyword: ``timedelta(hours=2)``, ``timeout=timedelta(seconds=7200)``)
    if secs == int(secs):
        out.append(str(int(secs)))  # seconds with no unit: TIMEOUT=3600
    return [a for a in dict.fromkeys(out) if a.replace(" ", "") != f"{number}{unit}".lower()]


def parse_query(text) -> Query:
    """Split into tokens; keep every token that has a letter or digit. Never raises on content.

    The field's language (``dbglog/core/synonyms.py``): a run of tokens that is a known phrase or
    abbreviation (``IMA``, ``out of memory``, ``tensor parallel``) becomes one term that matches any
    of its equivalents; an env var assignment matches the variable whatever its value, and the
    words for what it does; an identifier with case changes (``cudaMallocAsync``) also matches its
    words written apart."""
    from dbglog.core import synonyms

    text, truncated = clean_query(text)
    toks = _tokens(text)
    norm = [synonyms.words(tok) for tok, _p in toks]
    bags = _bag_phrases(toks, norm)
    terms: list[Term] = []
    seen = set()
    i = 0
    while i < len(toks) and len(terms) < MAX_TERMS:
        tok, parts = toks[i]
        new: list[Term] = []
        if i in bags:
            if bags[i] is not None:
                new = [bags[i]]
            i += 1
            for t in new:
                seen.add(t.raw.lower())
                terms.append(t)
            continue
        # the longest run of whole tokens that the synonym table knows (up to the next token an
        # out-of-order phrase took: "turn off the caching allocator" is "turn" + that phrase)
        end = min([len(toks), i + synonyms.max_phrase()] + [k for k in bags if k > i])
        for j in range(end, i, -1):
            key = tuple(w for n in norm[i:j] for w in n)
            alts = synonyms.expansions(key) if len(key) <= synonyms.max_phrase() else ()
            if alts:
                raw = " ".join(t for t, _p in toks[i:j])
                name = synonyms.env_name(raw)
                if j == i + 1 and name and name != raw:
                    new = _env_terms(raw, name)
                else:
                    new = [Term(raw=raw, parts=[p for _t, ps in toks[i:j] for p in ps],
                                alts=[a for a in alts if a.lower() != raw.lower()], group=True)]
                i = j
                break
        else:
            name = synonyms.env_name(tok)
            if name:
                new = _env_terms(tok, name)
            elif not _factor(toks, i):
                new = [_token_term(tok, parts)]
            i += 1
        for t in new:
            key = t.raw.lower()
            if key in seen:
                continue
            seen.add(key)
            t.stop = len(t.parts) == 1 and t.parts[0] in STOPWORDS and not t.alts
            terms.append(t)
    truncated = truncated or i < len(toks)
    if any(not t.stop for t in terms):
        terms = [t for t in terms if not t.stop]
    return Query(text=text, terms=terms[:MAX_TERMS], truncated=truncated)


def _factor(toks, i: int) -> bool:
    """Is token ``i`` a factor of change ("3x smaller", "by 2x", "10x lower")? It says how much, not what:
    a record gives the value it went to ("lr 3e-4 -> 1e-4"), never the factor."""
    if not _FACTOR.fullmatch(toks[i][0]):
        return False
    after = toks[i + 1][0].lower() if i + 1 < len(toks) else ""
    return after in _COMPARATIVES or (i > 0 and toks[i - 1][0].lower() == "by")


_FACTOR = recache.compile(r"\d+(?:\.\d+)?[x×]", re.IGNORECASE)
_COMPARATIVES = frozenset("smaller larger bigger lower higher fewer more less faster slower shorter longer".split())


def _bag_phrases(toks, norm) -> dict[int, Term | None]:
    """Known phrases written in another order ("kernel launches synchronous" for "synchronous kernel
    launches"): token index -> the phrase's term at its first token, None at its other tokens.
    Only phrases of two or more words whose tokens all sit within a window of the phrase's length
    plus two, none of them used twice; the longest first. A phrase in its own order is left to the
    ordinary (contiguous) match."""
    from dbglog.core import synonyms

    words: dict[str, list[int]] = {}
    for k, n in enumerate(norm):
        if len(n) == 1:
            words.setdefault(n[0], []).append(k)
    if len(words) < 2:
        return {}
    out: dict[int, Term | None] = {}
    for key in synonyms.bags(frozenset(words)):
        pos = sorted(words[w][0] for w in key)
        if any(p in out for p in pos) or pos[-1] - pos[0] > len(key) + 1:
            continue
        if tuple(norm[p][0] for p in pos) in synonyms.table():
            continue  # in order: the contiguous match takes it
        alts: list[str] = []
        for k2 in synonyms.bag_keys(key):
            alts += [a for a in synonyms.table()[k2] if a not in alts]
        raw = " ".join(toks[p][0] for p in pos)
        out[pos[0]] = Term(raw=raw, parts=[w for p in pos for w in toks[p][1]], alts=alts, group=True)
        out.update({p: None for p in pos[1:]})
    return out


# --- term resolution: word / substring / typo -------------------------------------------


def _has(conn, table: str, match: str) -> bool:
    try:
        return conn.execute(f"SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT 1", (match,)).fetchone() is not None
    except sqlite3.OperationalError:
        return False


VOCAB_TABLES = ("attempts_fts", "investigations_fts", "sections_fts")  # the words typos are corrected to


class Vocabulary:
    """Index terms (porter stems) with document counts, read through ``fts5vocab``.

    Reading the vocabulary scans the whole FTS index (~50 ms at 10k attempts), so it is cached
    in memory and in ``search-vocab.json`` beside the database, keyed by a cheap content stamp
    (investigation count and revisions, attempt count and max id). A stale cache is rebuilt; above
    ``STALE_OK_ATTEMPTS`` attempts a stale cache younger than ``STALE_OK_SECONDS`` is used as is
    (typo correction may then miss words added in the last minutes; exact and substring search
    never depend on it)."""

    STALE_OK_ATTEMPTS = 20000
    STALE_OK_SECONDS = 600
    _cache: dict = {}

    @staticmethod
    def _stamp(conn) -> list:
        """O(1): the FTS5 averages and structure records of both indexes (any write to an index
        changes them) and the largest attempt id (a size hint for ``STALE_OK_ATTEMPTS``)."""
        import hashlib

        h = hashlib.blake2b(digest_size=12)
        for table in VOCAB_TABLES:
            for (block,) in conn.execute(f"SELECT block FROM {table}_data WHERE id IN (1, 10) ORDER BY id"):
                h.update(bytes(block or b""))
                h.update(b"|")
        n = conn.execute("SELECT max(id) FROM attempts").fetchone()[0] or 0
        return [h.hexdigest(), 0, n, n]

    @staticmethod
    def _file(conn):
        from pathlib import Path

        for _seq, name, path in conn.execute("PRAGMA database_list"):
            if name == "main" and path:
                return Path(path).with_name("search-vocab.json")
        return None

    @classmethod
    def terms(cls, conn) -> dict[str, int]:
        stamp = cls._stamp(conn)
        hit = cls._cache.get(id(conn))
        if hit and hit[0] == stamp:
            return hit[1]
        path = cls._file(conn)
        if path is not None:
            try:
                data = jsonsafe.loads(path.read_text(encoding="utf-8"))
                fresh = data["stamp"] == stamp
                if fresh or (stamp[2] > cls.STALE_OK_ATTEMPTS and time.time() - data["time"] < cls.STALE_OK_SECONDS):
                    cls._cache = {id(conn): (stamp, data["terms"])}
                    return data["terms"]
            except (OSError, ValueError, KeyError, TypeError):
                pass
        vocab: dict[str, int] = {}
        for table in VOCAB_TABLES:
            conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{table}_vocab USING fts5vocab(main, {table}, row)")
            for term, doc in conn.execute(f"SELECT term, doc FROM temp.{table}_vocab"):
                if len(term) >= 3 and not term.isdigit():
                    vocab[term] = vocab.get(term, 0) + doc
        cls._cache = {id(conn): (stamp, vocab)}
        if path is not None:
            try:  # best effort: a cache, written atomically
                tmp = path.with_name(f".{path.name}.{id(vocab)}.tmp")
                tmp.write_text(json.dumps({"stamp": stamp, "time": time.time(), "terms": vocab}), encoding="utf-8")
                tmp.replace(path)
            except OSError:
                pass
        return vocab

    @classmethod
    def by_length(cls, conn, n: int, vocab: dict | None = None) -> list[str]:
        """Vocabulary terms of length n-2..n+2 (cached per vocabulary and length)."""
        vocab = cls.terms(conn) if vocab is None else vocab
        key = ("len", id(vocab))
        buckets = cls._cache.get(key)
        if buckets is None:
            buckets = {}
            for t in vocab:
                buckets.setdefault(len(t), []).append(t)
            cls._cache[key] = buckets
        near = buckets.get(("near", n))
        if near is None:
            near = buckets[("near", n)] = [t for d in range(-2, 3) for t in buckets.get(n + d, ())]
        return near


_DIGITS = recache.compile(r"\D+")  # (what is left of a word is its digits)


def correct_word(conn, word: str) -> str | None:
    """The closest vocabulary term to a word the index does not know (None if nothing close)."""
    from rapidfuzz import fuzz, process

    if len(word) < 4 or word.isdigit():
        return None
    vocab = Vocabulary.terms(conn)
    cutoff = 80 if len(word) <= 5 else 74
    found: dict[str, float] = {}
    for w in {word, _stem(word)}:  # the vocabulary holds porter stems: try the word and its stem
        n = len(w)
        if n < 3:
            continue
        choices = Vocabulary.by_length(conn, n, vocab)
        for term, score, _ in process.extract(w, choices, scorer=fuzz.ratio, limit=5, score_cutoff=cutoff):
            if len(word) < 8 and (term[0] != word[0] or abs(len(term) - n) > 1):
                continue  # typos keep the first letter and the length of a short word (wafer is not
                # "after", opencl is not "open")
            if _DIGITS.sub("", term) != _DIGITS.sub("", word):
                continue  # another number is another thing, not a typo (gfx1100 / gfx1030, 2xlarge / 8xlarge)
            found[term] = max(found.get(term, 0), score)
    if not found:
        return None
    # prefer the most similar, then the most common
    return max(found, key=lambda t: (round(found[t]), vocab[t]))


def _token_term(tok: str, parts: list[str]) -> Term:
    """One token of the idea, with the other ways a record may write it."""
    from dbglog.core import synonyms

    t = Term(raw=tok, parts=parts)
    if _CASE.search(tok):  # cudaMallocAsync -> also "cuda malloc async"
        t.alts = [" ".join(synonyms.split_identifier(tok))]
    elif _UNIT.match(tok):  # 350W, 80GB -> also "350 W", "80 GB"; 1h -> also "60 min", "3600 s"
        t.alts = [" ".join(_UNIT.match(tok).groups())] + _durations(*_UNIT.match(tok).groups())
    elif re.fullmatch(r"0\.\d+", tok):  # 0.5 = 0.50 (a fraction; 2.1 is not 2.10, a version)
        t.alts = [tok.rstrip("0").rstrip(".") if tok.endswith("0") else tok + "0"]
    t.alts += [f for f in number_forms(tok) if f not in t.alts]
    member = _MEMBER.fullmatch(tok)
    if member:  # DQNAgent.select_action -> also "select_action" ("select_action() in DQNAgent")
        t.alts += [member.group("m")]
    return t


# A qualified name whose last part is an identifier of the code ("DQNAgent.select_action", "Trainer::step_fn"): the
# member alone names it too. (Not a file name: "train.py", "config.yaml" end in no identifier of that shape.)
_MEMBER = Lazy(r"[A-Za-z_]\w*(?:(?:\.|::)[A-Za-z_]\w*)*(?:\.|::)(?P<m>[a-z]\w*_\w+|[a-z]+[A-Z]\w*)")


def resolve_terms(conn, q: Query, kinds) -> None:
    from dbglog.core import synonyms

    ftables = [f"{KINDS[k][0]}_fts" for k in kinds]
    tri = [TRIGRAMS[k] for k in kinds if k in TRIGRAMS]
    _join_split_words(conn, q, ftables)
    for t in q.terms:
        if any(_has(conn, ft, t.fts) for ft in ftables):
            t.kind = "word"
            continue
        if len(t.raw) >= 3 and any(_has(conn, tt, _fts_quote(t.raw)) for tt in tri):
            t.kind = "substring"
            continue
        fixed = None
        if t.raw.isupper() and len(t.raw) <= 5:
            pass  # an acronym means what it says: HCCL is not a typo of NCCL
        elif t.group and len(t.parts) > 1:
            pass  # a known phrase no record has ("NCCL timeout") is not a typo of one of its words
        elif all(w in synonyms.known_words() for w in synonyms.words(t.raw)):
            pass  # a word of the field ("deepspeed") is not a typo of a word the records have ("deeper")
        elif len(t.parts) == 1:
            fixed = correct_word(conn, t.parts[0])
        else:  # multi-word token with a typo in it (launch_bouds): correct its longest word the
            # index lacks (cloud.gpu.2x: "2x", which, a number, is no typo)
            lacking = [w for w in t.parts if not any(_has(conn, ft, _fts_quote(w)) for ft in ftables)]
            w = max(lacking or t.parts, key=len)
            fixed = correct_word(conn, w)
        if fixed and _other_number(fixed, t.raw):
            fixed = None  # "2-wide" is not a typo of "4-wide", nor "sm_89" of "sm_80": another value
        if fixed and any(_has(conn, ft, _fts_quote(fixed)) for ft in ftables):
            t.kind, t.corrected = "typo", fixed
        elif not _another_spelling(conn, t, ftables):
            t.kind = "unknown"


_HYPHENATED = Lazy(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+")


def _another_spelling(conn, t: Term, ftables: list[str]) -> bool:
    """A token no record holds as written, but as it is also written: a compound with its hyphen left out
    ("flash-infer" for FLASHINFER, "top-k" for --speculative-eagle-topk), a series with its wildcard ("2.21.x" for
    2.21.5, ``experiment.wildcard_series``). The term is then that word."""
    from dbglog.kb.experiment import wildcard_series

    series = wildcard_series(t.raw)
    form = series or (t.raw.replace("-", "") if _HYPHENATED.fullmatch(t.raw) else None)
    if form is None or not any(_has(conn, ft, _fts_quote(form)) for ft in ftables):
        return False
    t.kind = "word"
    if series:
        t.base = form
    else:
        t.alts = [form] + [a for a in t.alts if a.lower() != form.lower()]
    return True


def _other_number(fixed: str, raw: str) -> bool:
    """Would the correction put another number in place of the token's (its letters aside)?"""
    new = re.findall(r"\d+", fixed)
    return bool(new) and new != re.findall(r"\d+", raw)


DF_CAP = 2000  # document frequencies are counted up to this (a common word is common enough)
FILLER_WEIGHT = 0.2  # the share of its weight an everyday word a record lacks counts against it
# How an idea is phrased rather than what it is about: verbs of doing, sizes, counts, vague nouns.
FILLER = frozenset("""
make makes making made turn turns turning put puts get gets getting got set sets setting go going let lets
keep keeping give gives take takes see check checks checking find finds finding look looking figure change
changes changing switch switching add adding remove removing increase increasing decrease decreasing raise
raising lower lowering reduce reducing bump bumping grow shrink double halve instead whether maybe perhaps
move moves moved moving rather than
bigger smaller larger higher lower more less fewer much many big small large long short fast faster quick
quickly slowly one two three four both each every all some any other another same different new old first
last whole entire only just also even really actually again still thing things stuff way ways kind sort
call calls calling called happen happens exactly proper properly right correct correctly pick picks picked
choose choosing chose select selecting run runs running rerun reproduce reproducing repro retry
""".split())


def _filler(t: Term) -> bool:
    """Everyday wording, unless the synonym table gives it a meaning ("smaller" = "lower"); an adverb of manner
    ("manually", "explicitly", "completely") says how a thing was done, not what."""
    return not t.group and all(p in FILLER or p in STOPWORDS or _ADVERB.fullmatch(p) for p in t.parts)


_ADVERB = recache.compile(r"[a-z]{4,}(?<!p)ly")  # (not "apply", "multiply": verbs)


def weigh(conn, q: Query, kinds=None) -> None:
    """Each term's weight: log(1 + N / (1 + df)) over the searched tables (df counted up to DF_CAP),
    so "cuda" or "memory" tell less than "snapshot"; a word no record has weighs the most. Only
    ``is_close`` needs weights: ``tried`` computes them, plain ``search`` does not pay for them."""
    import math

    kinds = tuple(kinds or KIND_NAMES)
    tables = [f"{KINDS[k][0]}_fts" for k in kinds]
    n = sum(min(DF_CAP, conn.execute(f"SELECT coalesce(max(rowid), 0) FROM {KINDS[k][0]}").fetchone()[0])
            for k in kinds)
    for t in q.terms:
        if t.kind == "unknown":
            t.weight = math.log(1 + n)  # a word no record has is the most telling (see is_close for fillers)
            continue
        match = _fts_quote(t.raw) if t.kind == "substring" else t.fts
        df = 0
        for ft in tables if t.kind != "substring" else [TRIGRAMS[k] for k in kinds if k in TRIGRAMS]:
            try:
                df += conn.execute(f"SELECT count(*) FROM (SELECT 1 FROM {ft} WHERE {ft} MATCH ? LIMIT {DF_CAP})",
                                   (match,)).fetchone()[0]
            except sqlite3.OperationalError:
                pass
        t.weight = math.log(1 + n / (1 + df))


def _join_split_words(conn, q: Query, ftables: list[str]) -> None:
    """Two plain query words that the index holds written together (``flash attention`` for
    ``FlashAttention``, ``data loader`` for ``dataloader``) become one term matching either."""
    i = 0
    while i + 1 < len(q.terms):
        a, b = q.terms[i], q.terms[i + 1]
        x, y = a.parts[-1], b.parts[0]
        words = x.isalpha() and y.isalpha() and len(x) >= 2 and len(y) >= 2
        unit = x.isdigit() and y.isalpha() and len(y) <= 3  # "350 W" for 350W
        # (a number's own other spellings, "4" as "4.0", do not keep it from its unit: "4 GB" is 4GB)
        plain = not a.alts or a.alts == number_forms(a.raw)
        if plain and not b.alts and len(a.parts) == 1 and len(b.parts) == 1 and (words or unit):
            joined = a.parts[0] + b.parts[0]
            if any(_has(conn, ft, _fts_quote(joined)) for ft in ftables):
                q.terms[i:i + 2] = [Term(raw=f"{a.raw} {b.raw}", parts=[*a.parts, *b.parts], alts=[joined])]
        i += 1


# --- filters ----------------------------------------------------------------------------


def parse_since(value: str | None) -> str | None:
    """``2026-11-01``, an ISO timestamp, or a relative age: ``3d``, ``2w``, ``6h``, ``1m``(months)."""
    if not value:
        return None
    v = value.strip()
    m = re.fullmatch(r"(\d+)\s*([hdwmy])", v.lower())
    if m:
        n, unit = int(m.group(1)), m.group(2)
        days = {"h": n / 24, "d": n, "w": 7 * n, "m": 30 * n, "y": 365 * n}[unit]
        try:
            return (datetime.now(timezone.utc) - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")
        except (OverflowError, ValueError):  # 99999999999d: before the year 1
            raise DbglogError(f"invalid --since {value!r}: that age reaches back before the year 1") from None
    try:
        dt = datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        raise DbglogError(f"invalid --since {value!r}: use a date (2026-11-01) or an age (3d, 2w, 6h)") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Filters:
    status: str | None = None
    outcomes: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    investigation: str | None = None
    since: str | None = None  # ISO UTC
    exclude: tuple[str, int] | None = None  # (investigation, attempt number) to leave out

    def sql(self, kind: str) -> tuple[str, list]:
        where, args = [], []
        if self.status:
            where.append("i.status = ?")
            args.append(self.status)
        for tag in self.tags:
            where.append("EXISTS (SELECT 1 FROM json_each(i.tags) WHERE lower(value) = lower(?))")
            args.append(tag)
        if self.investigation:
            where.append("i.id = ?")
            args.append(self.investigation)
        if kind == "attempt":
            if self.outcomes:
                where.append(f"r.outcome IN ({','.join('?' * len(self.outcomes))})")
                args += list(self.outcomes)
            if self.since:
                where.append("r.created >= ?")
                args.append(self.since)
            if self.exclude:
                where.append("NOT (r.investigation_id = ? AND r.number = ?)")
                args += list(self.exclude)
        elif self.since:
            where.append("i.updated >= ?")
            args.append(self.since)
        return (" AND ".join(where), args)

    @property
    def any(self) -> bool:
        return bool(self.status or self.outcomes or self.tags or self.investigation or self.since or self.exclude)


# --- hits ---------------------------------------------------------------------------------


@dataclass
class Hit:
    kind: str
    investigation: str
    investigation_title: str
    status: str  # the investigation's status
    tags: list[str]
    fields: dict  # the row's own text fields
    number: int | None = None  # attempt number / difference or step position
    outcome: str = ""  # attempt outcome, difference status, step status
    score: float = 0.0
    match: str = ""  # all words | some words
    matched_fields: list[str] = field(default_factory=list)
    matched_terms: list[str] = field(default_factory=list)
    coverage: float = 0.0
    similarity: float = 0.0
    snippet_field: str = ""
    snippet_parts: list[tuple[str, bool]] = field(default_factory=list)
    path: str = ""  # a section: the file it is in (the mirror file, or the watched doc)
    line: int = 0  # a section: the line of ``line_text`` in that file (0: unknown)
    line_text: str = ""  # a section: the line that matches best
    _bm25: float = 0.0
    _rowid: int = 0
    _window: str = ""  # a section: the best line with its neighbours and heading (closeness, outcome)
    verdict: str = ""  # tried: the rule that refused it or why it is only mentioned ("" = close)
    tier: str = ""  # tried: same | other | related | unrelated (see _tier)
    differs: str = ""  # tried: which knob matched and how the idea differs, in plain words
    experiment: object = None  # tried: the record's experiment (experiment.Experiment)
    exact: bool = False  # tried: the same knobs turned the same way (not only the same words)
    word_verdict: str = ""  # tried: the word rules' verdict before the experiments were compared
    knob_tier: str = ""  # tried: experiment.compare's tier (same / other / "")
    judged_by: str = "built-in"  # tried: "built-in", "learned" (judge_same overruled the words), or "model" (--llm)
    same_p: float | None = None  # tried: the learned judge's probability that this attempt is the idea's experiment
    verbatim: bool = False  # tried: the record's title says the idea in the idea's own words (``_content_words``)
    _matched: set = field(default_factory=set)  # indexes of the query terms this hit (or its context) has
    _context: set = field(default_factory=set)  # ... that only its investigation's title/symptom/tags have
    _ctx_text: str = ""  # its investigation's title, symptom and tags (a watched doc: heading, file name)

    @property
    def title(self) -> str:
        f = self.fields
        if self.kind == "attempt":
            return f.get("title") or _first_line(f.get("did") or f.get("hypothesis") or "")
        if self.kind == "investigation":
            return f.get("title", "")
        if self.kind == "difference":
            return f.get("factor", "")
        if self.kind == "section":
            # (a doc's text before its first heading has none: its file names it, not an empty title)
            return f.get("heading", "") or (self.path or "").rsplit("/", 1)[-1]
        return f.get("text", "")

    @property
    def source(self) -> str:
        """Where a hit lives: an investigation (structured or free section), or a watched doc."""
        return "watched" if self.kind == "section" and not self.investigation else "investigation"

    @property
    def snippet(self) -> str:
        return "".join(f"**{t}**" if m else t for t, m in self.snippet_parts)

    def to_dict(self) -> dict:
        d = {"kind": self.kind, "investigation": self.investigation,
             "investigation_title": self.investigation_title, "investigation_status": self.status,
             "tags": self.tags}
        if self.kind == "attempt":
            d |= {"attempt": self.number, "title": self.title, "outcome": self.outcome,
                  "hypothesis": self.fields["hypothesis"], "did": self.fields["did"],
                  "result": self.fields["result"], "conclusion": self.fields["conclusion"],
                  "created": self.fields.get("created", "")}
            if self.fields.get("diagnostic"):  # (tried: a bisection or a baseline run, not a fix)
                d |= {"diagnostic": self.fields["diagnostic"], "stored_outcome": self.fields["stored_outcome"]}
        elif self.kind == "investigation":
            d |= {"title": self.title, "symptom": self.fields["symptom"], "root_cause": self.fields["root_cause"]}
        elif self.kind == "difference":
            d |= {"position": self.number, "factor": self.fields["factor"], "working": self.fields["working"],
                  "broken": self.fields["broken"], "difference_status": self.outcome}
        elif self.kind == "section":
            if not self.investigation:
                d |= {"investigation": None, "investigation_title": None, "investigation_status": None}
            d |= {"source": self.source, "heading": self.fields["heading"], "path": self.path,
                  "line": self.line or None, "text": self.line_text, "outcome": self.outcome or None}
        else:
            d |= {"position": self.number, "text": self.fields["text"], "detail": self.fields["detail"],
                  "step_status": self.outcome, "done_in_attempt": self.fields.get("attempt")}
        d |= {"snippet": self.snippet, "snippet_field": self.snippet_field, "score": round(self.score, 4),
              "why": {"match": self.match, "fields": self.matched_fields, "terms": self.matched_terms,
                      "coverage": round(self.coverage, 3), "similarity": round(self.similarity, 1)}}
        return d


def _first_line(s: str) -> str:
    return s.strip().split("\n", 1)[0][:120]


_SELECT = {
    "attempt": ("r.id AS rowid, r.investigation_id AS inv_id, r.number AS num, r.outcome AS outcome, "
                "r.title, r.hypothesis, r.did, r.result, r.conclusion, r.created, r.words, "
                "i.title AS inv_title, i.status AS inv_status, i.tags AS inv_tags",
                "attempts r", "JOIN investigations i ON i.id = r.investigation_id"),
    "investigation": ("r.rowid AS rowid, r.id AS inv_id, NULL AS num, r.status AS outcome, r.title, r.symptom, "
                      "r.root_cause, r.environment, r.tags, r.title AS inv_title, r.status AS inv_status, "
                      "r.tags AS inv_tags",
                      "investigations r", "JOIN investigations i ON i.id = r.id"),
    "difference": ("r.id AS rowid, r.investigation_id AS inv_id, r.position AS num, r.status AS outcome, r.factor, "
                   "r.working, r.broken, i.title AS inv_title, i.status AS inv_status, i.tags AS inv_tags",
                   "differences r", "JOIN investigations i ON i.id = r.investigation_id"),
    "next": ("r.id AS rowid, r.investigation_id AS inv_id, r.position AS num, r.status AS outcome, r.text, "
             "r.detail, r.attempt, i.title AS inv_title, i.status AS inv_status, i.tags AS inv_tags",
             "next_steps r", "JOIN investigations i ON i.id = r.investigation_id"),
    # watched docs have no investigation: LEFT JOIN (any investigation filter then leaves them out)
    "section": ("r.id AS rowid, r.investigation_id AS inv_id, r.position AS num, '' AS outcome, r.heading, "
                "r.body, r.words, r.path, r.line, i.title AS inv_title, i.status AS inv_status, i.tags AS inv_tags",
                "sections r", "LEFT JOIN investigations i ON i.id = r.investigation_id"),
}
_FIELDS = {
    "attempt": ("title", "did", "hypothesis", "result", "conclusion", "words"),
    "investigation": ("title", "symptom", "root_cause", "environment", "tags"),
    "difference": ("factor", "working", "broken"),
    "next": ("text", "detail"),
    "section": ("heading", "body", "words"),
}
_NOT_SNIPPETS = ("words",)  # matched, but not shown: the identifier itself is in a shown field


def _floor(conn, sql_from: str, fid: str, args: list, broad: int = BROAD) -> int | None:
    """The rowid at or below which matches are not ranked (None: at most ``BROAD`` matches).

    bm25 costs ~2 µs per matching row, so a broad match (``python``, ``cuda``) over 100k attempts
    would cost 100-200 ms to rank in full; it is ranked within its ``BROAD`` newest matches
    instead. Finding that boundary walks the doclist in rowid order without scoring (~0.1-1 ms)."""
    try:
        row = conn.execute(f"SELECT {fid} AS fid {sql_from} ORDER BY fid DESC LIMIT 1 OFFSET {broad}", args).fetchone()
    except sqlite3.OperationalError:
        return None
    return row[0] if row else None


def _candidates(conn, kind: str, terms: list[Term], mode: str, filters: Filters, limit: int) -> list[sqlite3.Row]:
    """Top rows of one kind for the resolved terms; mode 'and' or 'or'.

    Matches are ranked by bm25 inside SQL (``ORDER BY bm LIMIT``); a match with more than
    ``BROAD`` rows is ranked within its newest ``BROAD`` rows (see ``_floor``); in OR mode the
    rows of the selective terms are then ranked on their own, so a rare word's few hits are
    never cut off by a common word's many."""
    table, cols, weights = KINDS[kind]
    fts = f"{table}_fts"
    words = [t for t in terms if t.kind in ("word", "typo")]
    trigram = TRIGRAMS.get(kind)
    subs = [t for t in terms if t.kind == "substring"] if trigram else []
    if mode == "and" and not words and not subs:
        return []
    fsql, fargs = filters.sql(kind)
    select, base, join = _SELECT[kind]
    bm = f"bm25({fts}, {', '.join(str(w) for w in weights)})"
    out: dict[int, sqlite3.Row] = {}

    def run(sql, args):
        try:
            for r in conn.execute(sql, args):
                if r["rowid"] not in out:
                    out[r["rowid"]] = r
        except sqlite3.OperationalError:
            pass  # an FTS parse problem cannot happen with quoted terms; be safe anyway

    def ranked(ftab, bmexpr, match, extra="", eargs=(), n=limit, joined=False, broad=BROAD):
        """Rows of ``ftab MATCH match`` (+ conditions on r/i), best ``bmexpr`` first."""
        if joined:  # conditions on the content row: join first, rank the filtered matches
            frm = (f"FROM {ftab} JOIN {base} ON r.rowid = {ftab}.rowid {join} WHERE {ftab} MATCH ?{extra}"
                   f"{' AND ' + fsql if fsql else ''}")
            args = [match, *eargs, *fargs]
            lo = _floor(conn, frm, f"{ftab}.rowid", args, broad)
            cap = f" AND {ftab}.rowid > ?" if lo is not None else ""
            run(f"SELECT {select}, {bmexpr} AS bm {frm}{cap} ORDER BY bm LIMIT ?",
                [*args, *([lo] if lo is not None else []), n])
            return lo
        # rank inside the FTS table first, join only the top rows (broad queries)
        lo = _floor(conn, f"FROM {ftab} WHERE {ftab} MATCH ?", "rowid", [match], broad)
        cap = " AND rowid > ?" if lo is not None else ""
        run(f"WITH top AS (SELECT rowid AS fid, {bmexpr} AS bm FROM {ftab} WHERE {ftab} MATCH ?{cap} "
            f"ORDER BY bm LIMIT ?) SELECT {select}, top.bm AS bm FROM top JOIN {base} ON r.rowid = top.fid {join} "
            f"ORDER BY top.bm", [match, *([lo] if lo is not None else []), n])
        return lo

    tbm = f"bm25({trigram})"
    if mode == "and":
        if words:
            match = " AND ".join(t.fts for t in words)
            extra = "".join(f" AND r.rowid IN (SELECT rowid FROM {trigram} WHERE {trigram} MATCH ?)"
                            for _ in subs)
            sargs = [_fts_quote(t.raw) for t in subs]
            ranked(fts, bm, match, extra, sargs, joined=bool(filters.any or subs))
        else:
            ranked(trigram, tbm, " AND ".join(_fts_quote(t.raw) for t in subs), joined=filters.any)
        return list(out.values())
    # OR: the union of word matches (bm25 over any word) and substring matches
    if words:
        match = " OR ".join(t.fts for t in words)
        broad = BROAD
        if len(words) > 1 and _floor(conn, f"FROM {fts} WHERE {fts} MATCH ?", "rowid", [match]) is not None:
            # broad: rank the selective words' rows on their own, then the newest rows of the rest
            rare = [t for t in words if _floor(conn, f"FROM {fts} WHERE {fts} MATCH ?", "rowid", [t.fts]) is None]
            if rare:
                ranked(fts, bm, " OR ".join(t.fts for t in rare), joined=filters.any)
                broad = BROAD_OR
        ranked(fts, bm, match, joined=filters.any, broad=broad)
    for t in subs:
        ranked(trigram, tbm, _fts_quote(t.raw), n=limit // 2, joined=filters.any)
    return list(out.values())


@lru_cache(maxsize=512)
def _tags(text: str) -> tuple:
    """An investigation's tags (JSON), parsed once: its attempts and chunks all carry them."""
    try:
        value = jsonsafe.loads(text)
    except ValueError:
        return ()
    return tuple(value) if isinstance(value, list) else ()


def _make_hit(kind: str, r: sqlite3.Row) -> Hit:
    keys = r.keys()
    fields = {k: (r[k] or "") for k in _FIELDS[kind] if k in keys}
    if kind == "attempt":
        fields["created"] = r["created"]
    if kind == "next":
        fields["attempt"] = r["attempt"]
    tags = list(_tags(r["inv_tags"] or "[]"))
    h = Hit(kind=kind, investigation=r["inv_id"] or "", investigation_title=r["inv_title"] or "",
            status=r["inv_status"] or "", tags=tags, fields=fields, number=r["num"], outcome=r["outcome"] or "",
            _bm25=r["bm"], _rowid=r["rowid"])
    if kind == "section":
        h.path = r["path"] or ""
        h.investigation_title = h.investigation_title or h.path
        h.line = r["line"]  # the chunk's first line until _locate finds the matching one
    return h


# --- scoring, snippets ------------------------------------------------------------------------


@lru_cache(maxsize=256)
def _in_context(pattern: str, context: str) -> bool:
    """Does an investigation's context hold the term? Asked per hit, and a query's hits mostly share one context
    (a long one, for an investigation of thousands of attempts): answered once per context and term."""
    return re.search(pattern, context, re.I) is not None


def _term_regexes(terms: list[Term]) -> list[re.Pattern]:
    return [re.compile(t.pattern(), re.IGNORECASE) for t in terms]


def _context_terms(found: dict[str, set[int]], inv: str, regs: list[re.Pattern], context: str) -> set[int]:
    """The terms (indexes of ``regs``) investigation ``inv``'s context holds, read once into ``found``: a query's
    hits mostly share one investigation, whose context is long when it holds thousands of attempts."""
    if inv not in found:
        found[inv] = {i for i, rg in enumerate(regs) if context and rg.search(context)}
    return found[inv]


def _annotate(hit: Hit, terms: list[Term], regs: list[re.Pattern], context: str,
              in_context: set[int] | None = None) -> None:
    """Which terms matched where; the coverage of the query by this hit; the best snippet. ``in_context``: the
    terms ``context`` holds, when the caller has them (hits of one investigation share its context)."""
    matched = set()
    field_hits: dict[str, int] = {}
    for name, text in hit.fields.items():
        if not isinstance(text, str) or not text or name == "created":
            continue
        n = 0
        for i, rg in enumerate(regs):
            if rg.search(text):
                matched.add(i)
                n += 1
        if n:
            field_hits[name] = n
    if in_context is None:
        in_context = {i for i, rg in enumerate(regs) if i not in matched and context and rg.search(context)}
    ctx_matched = in_context - matched
    hit._ctx_text = context  # (is_close reads the rest of the topic from it: few hits get that far)
    total = len(regs) or 1
    hit.coverage = (len(matched) + 0.5 * len(ctx_matched)) / total
    hit._matched = matched | ctx_matched
    hit._context = ctx_matched
    hit.matched_terms = [terms[i].corrected or terms[i].raw for i in sorted(matched)]
    hit.matched_fields = sorted(field_hits, key=lambda f: -field_hits[f])
    hit.match = "all words" if len(matched) == len(regs) and regs else (
        "some words" if matched else "context")
    shown = [f for f in hit.matched_fields if f not in _NOT_SNIPPETS]
    best = shown[0] if shown else next(iter(_FIELDS[hit.kind]))
    hit.snippet_field = best


def make_snippet(text: str, regs: list[re.Pattern], width: int = 160) -> list[tuple[str, bool]]:
    text = " ".join(text.split())
    spans = []
    for rg in regs:
        for m in rg.finditer(text):
            if m.end() > m.start():
                spans.append((m.start(), m.end()))
    spans.sort()
    merged: list[list[int]] = []
    for s, e in spans:
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    start = 0
    if merged and len(text) > width:
        start = max(0, merged[0][0] - width // 4)
        if start:
            sp = text.find(" ", start)
            start = sp + 1 if 0 <= sp < merged[0][0] else start
    end = min(len(text), start + width)
    if end < len(text):
        sp = text.rfind(" ", start, end)
        end = sp if sp > start + width // 2 else end
    parts: list[tuple[str, bool]] = []
    if start > 0:
        parts.append(("…", False))
    pos = start
    for s, e in merged:
        if e <= start or s >= end:
            continue
        s, e = max(s, start), min(e, end)
        if s > pos:
            parts.append((text[pos:s], False))
        parts.append((text[s:e], True))
        pos = e
    if pos < end:
        parts.append((text[pos:end], False))
    if end < len(text):
        parts.append(("…", False))
    return parts


def _similarity(query_text: str, hit: Hit, fuzz, proc) -> float:
    q = proc(query_text)
    best = 0.0
    for name in ("title", "did", "text", "factor", "hypothesis", "heading"):
        v = hit.fields.get(name)
        if name == "heading" and v:
            v = v.rsplit(" > ", 1)[-1]
        if isinstance(v, str) and v:
            s = proc(v[:300])
            best = max(best, fuzz.token_set_ratio(q, s) * (1.0 if name != "hypothesis" else 0.9))
    return best


# --- search -------------------------------------------------------------------------------------


@dataclass
class Result:
    query: Query
    hits: list[Hit]
    mode: str  # and | or | none
    elapsed_ms: float = 0.0

    def to_dict(self) -> dict:
        return {"query": self.query.to_dict(), "mode": self.mode, "count": len(self.hits),
                "elapsed_ms": round(self.elapsed_ms, 2), "hits": [h.to_dict() for h in self.hits]}


def _search_kinds(kinds, filters: Filters) -> tuple[str, ...]:
    """The kinds asked for, checked; outcome filters leave only attempts (nothing else has one)."""
    kinds = tuple(kinds or KIND_NAMES)
    for k in kinds:
        if k not in KINDS:
            raise DbglogError(f"invalid kind {k!r}: use one of {', '.join(KIND_NAMES)}")
    if filters.outcomes or filters.exclude:
        kinds = tuple(k for k in kinds if k == "attempt") or ("attempt",)
    return kinds


def _gather(conn, kinds, terms, filters: Filters, per_kind: dict, limit: int,
            widen: frozenset = frozenset()) -> tuple[list[Hit], str]:
    """The candidate hits: every term (AND) first, any term (OR) when that finds too few; for the kinds in
    ``widen``, any term as well whatever AND found."""
    rows: dict[tuple[str, int], Hit] = {}
    mode = "and"
    for k in kinds:
        for r in _candidates(conn, k, terms, "and", filters, per_kind[k]):
            rows[(k, r["rowid"])] = _make_hit(k, r)
    if len(rows) < min(limit, OR_FALLBACK_BELOW) and len(terms) > 1:
        mode = "or"
        for k in kinds:
            for r in _candidates(conn, k, terms, "or", filters, per_kind[k]):
                rows.setdefault((k, r["rowid"]), _make_hit(k, r))
    elif len(terms) == 1 and not rows:
        mode = "or"
    elif len(terms) > 1:
        for k in (k for k in kinds if k in widen):
            for r in _candidates(conn, k, terms, "or", filters, per_kind[k]):
                rows.setdefault((k, r["rowid"]), _make_hit(k, r))
    return list(rows.values()), mode


def search(conn: sqlite3.Connection, text, *, kinds=None, filters: Filters | None = None, limit: int = 10,
           rerank: bool = True, candidates: dict | None = None, widen: frozenset = frozenset()) -> Result:
    t0 = time.perf_counter()
    q = parse_query(text)
    if not q.terms:
        raise DbglogError("nothing to search for: the query has no letters or digits")
    filters = filters or Filters()
    kinds = _search_kinds(kinds, filters)
    limit = max(1, min(int(limit), 500))
    resolve_terms(conn, q, kinds)
    terms = q.active
    if not terms:
        return Result(q, [], "none", (time.perf_counter() - t0) * 1000)
    pool = CANDIDATES | (candidates or {})
    per_kind = {k: max(pool[k] if rerank else limit, limit) for k in kinds}
    hits, mode = _gather(conn, kinds, terms, filters, per_kind, limit, widen)
    if not hits:
        return Result(q, [], mode, (time.perf_counter() - t0) * 1000)
    _rank(conn, q, terms, hits, rerank, limit)
    hits.sort(key=lambda h: -h.score)
    hits = _spread(hits)[:limit]
    regs = _term_regexes(terms)
    for h in hits:
        if h.kind == "section":
            _best_line(h, regs)
            h.snippet_parts = make_snippet(h.line_text, regs)
        else:
            h.snippet_parts = make_snippet(str(h.fields.get(h.snippet_field) or ""), regs)
    _locate(conn, [h for h in hits if h.kind == "section"])
    return Result(q, hits, mode, (time.perf_counter() - t0) * 1000)


WHOLE_CHUNK_LINES = 12  # a chunk this short is judged whole by `tried`, a longer one around its best line
SECTIONS_PER_SOURCE = 2  # chunks of one investigation or doc among the first hits, before the others'


def _spread(hits: list[Hit]) -> list[Hit]:
    """Many chunks of one long doc would crowd out every other source: past the first two of a
    source, its chunks move after the rest (still in score order)."""
    seen: dict[str, int] = {}
    first, later = [], []
    for h in hits:
        if h.kind == "section":
            key = h.investigation or h.path
            seen[key] = seen.get(key, 0) + 1
            if seen[key] > SECTIONS_PER_SOURCE:
                later.append(h)
                continue
        first.append(h)
    return first + later


def _best_line(h: Hit, regs: list[re.Pattern]) -> None:
    """The chunk line that matches the most query terms (the first of equals), and its window:
    the line, its neighbours and the chunk's own heading, which ``tried`` judges closeness on."""
    lines = h.fields.get("body", "").split("\n")
    best, best_n = 0, (-1, 0, 0, 0)
    fence = None
    thread = _in_thread(h)
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fence = None if fence and stripped.startswith(fence) else (fence or stripped[:3])
            continue
        if not stripped:
            continue
        found = [m for m in (rg.search(line) for rg in regs) if m]
        # terms, then prose before code (a log line or stack frame is evidence, not a report of
        # what was tried), then how much of the terms; in a thread, a reply's advice ("Enable X and
        # use Y") counts one term less than a report of it ("Enabling X works")
        advice = thread and bool(_IMPERATIVE.search(line))
        n = (len(found) - advice, not advice, fence is None, sum(m.end() - m.start() for m in found))
        if n > best_n:
            best, best_n = i, n
    h.line_text = lines[best].strip() if lines else ""
    h.line = (h.line or 0) + best
    own = h.fields.get("heading", "").rsplit(" > ", 1)[-1]
    if sum(1 for ln in lines if ln.strip()) <= WHOLE_CHUNK_LINES:
        h._window = "\n".join([own, *lines])  # a short chunk is one attempt or note: judge it whole
    else:
        h._window = "\n".join([own, *lines[max(0, best - 2): best + 3]])


def _locate(conn, hits: list[Hit]) -> None:
    """Section hits of investigations: the mirror file and the line the matching text is on."""
    if not hits:
        return
    root = _root(conn)
    cache: dict[str, list[str] | None] = {}
    for h in hits:
        if not h.investigation:
            continue  # a watched doc's line is already its file's line
        rel_in_section = h.line
        h.line = 0
        row = conn.execute("SELECT path FROM mirror_files WHERE investigation_id = ?", (h.investigation,)).fetchone()
        h.path = row[0] if row else f"logs/{h.investigation}.md"
        if root is None:
            continue
        if h.path not in cache:
            try:
                cache[h.path] = (root / h.path).read_text(encoding="utf-8").split("\n")
            except (OSError, UnicodeDecodeError):
                cache[h.path] = None
        lines = cache[h.path]
        if not lines:
            continue
        from dbglog.kb.sections import heading_text

        top = h.fields["heading"].split(" > ", 1)[0]
        start = next((i for i, ln in enumerate(lines) if ln.startswith("#") and heading_text(ln) == top), None)
        if start is None:
            continue
        want = h.line_text
        guess = start + rel_in_section
        if 0 <= guess < len(lines) and lines[guess].strip() == want:
            h.line = guess + 1
        else:
            h.line = next((i + 1 for i in range(start, len(lines)) if lines[i].strip() == want), 0)


def _root(conn):
    from pathlib import Path

    for _seq, name, path in conn.execute("PRAGMA database_list"):
        if name == "main" and path:
            return Path(path).parent.parent  # .dbglog/dbglog.db -> the workspace root
    return None


def _inv_context(conn, ids: set[str]) -> dict[str, str]:
    if not ids:
        return {}
    ids = list(ids)
    out = {}
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        for r in conn.execute(f"SELECT id, title, symptom, tags, environment FROM investigations WHERE id IN "
                              f"({','.join('?' * len(chunk))})", chunk):
            out[r[0]] = f"{r[1]}\n{r[2]}\n{r[3]}\n{r[4]}"
        # (and the headings its text sits under: "Microbenchmark: d26 MLP" names what its rows ran; not a heading
        # that is a try's own title, kept with its text: "1. Vulkan backend" names that try, not the topic)
        marks = ",".join("?" * len(chunk))
        tried: dict[str, set[str]] = {}
        for r in conn.execute(f"SELECT investigation_id, title FROM attempts WHERE investigation_id IN ({marks})", chunk):
            tried.setdefault(r[0], set()).add(_bare_heading(r[1] or ""))
        for inv, heading in conn.execute(f"SELECT investigation_id, heading FROM sections WHERE investigation_id IN "
                                         f"({marks})", chunk):
            kept = [p for p in (heading or "").split(" > ") if _bare_heading(p) not in tried.get(inv, ())]
            out[inv] = f"{out.get(inv, '')}\n{' > '.join(kept)}"
    return out


def _bare_heading(text: str) -> str:
    """A heading or title without its number and case ("1. Vulkan backend" -> "vulkan backend")."""
    return re.sub(r"^\W*\d{1,3}[a-z]?[.):]?\s+", "", text.strip()).casefold()


#: passages of an investigation's own text that name a word before it is that investigation's topic
TOPIC_LINES = 3


def _topic_words(hits: list[Hit], terms: list[Term]) -> None:
    """A name of the idea that several passages of an investigation's own text repeat is what that
    investigation is about ("Ollama 0.1.16" in a thread about Ollama whose title never says it): its
    records hold it as context, as they hold their title's words. Counted over the free-text passages
    already retrieved (no extra query); everyday words and numbers never count."""
    lines: dict[tuple[str, int], set[int]] = {}
    for h in hits:
        if h.kind == "section" and h.investigation:
            for i in h._matched - h._context:
                lines.setdefault((h.investigation, i), set()).add(h._rowid)
    topic: dict[str, set[int]] = {}
    for (inv, i), seen in lines.items():
        t = terms[i]
        if len(seen) >= TOPIC_LINES and not (t.stop or _filler(t) or _NUMBER.fullmatch(t.raw)):
            topic.setdefault(inv, set()).add(i)
    total = len(terms) or 1
    for h in hits:
        mine = topic.get(h.investigation, set())
        new = mine - h._matched if h.kind != "section" else set()
        # only beside a telling word of the idea the record holds itself: a record that holds nothing of the idea
        # but the investigation's topic is another try on that topic ("nvagetbios -s PRAMIN" is not "Direct BAR0
        # access" in a thread where every post names both)
        own = {i for i in h._matched - h._context - mine if not (terms[i].stop or _filler(terms[i]))}
        if new and own:
            h._context = h._context | new
            h._matched = h._matched | new
            h.coverage += 0.5 * len(new) / total


def _rank(conn, q: Query, terms: list[Term], hits: list[Hit], rerank: bool, limit: int | None = None) -> None:
    regs = _term_regexes(terms)
    ctx = _inv_context(conn, {h.investigation for h in hits if h.kind != "investigation"})
    # bm25 normalised per kind (scores of different FTS tables are not comparable)
    best: dict[str, float] = {}
    for h in hits:
        best[h.kind] = min(best.get(h.kind, 0.0), h._bm25)
    found: dict[str, set[int]] = {}
    for h in hits:
        if h.kind == "investigation":
            context = ""
        elif h.investigation:
            context = ctx.get(h.investigation, "")
            _annotate(h, terms, regs, context, _context_terms(found, h.investigation, regs, context))
            continue
        else:  # a watched doc: its title (first heading) and file name are its context
            context = f"{h.fields['heading'].split(' > ', 1)[0]}\n{h.path.rsplit('/', 1)[-1]}"
        _annotate(h, terms, regs, context)
    _topic_words(hits, terms)
    # How much of the query the hit's whole document covers, over all its matching records: a doc
    # that has every word somewhere beats one that has a few of them in one place (what ranking
    # grep's files by the number of query words matched gets right).
    union: dict[str, set] = {}
    for h in hits:
        union.setdefault(h.investigation or h.path, set()).update(h._matched)
    total = len(regs) or 1
    for h in hits:
        bm = (h._bm25 / best[h.kind]) if best.get(h.kind) else 0.0
        h.similarity = 0.0
        doc = len(union[h.investigation or h.path]) / total
        h.score = (0.5 * h.coverage + 0.3 * bm + DOC_WEIGHT * doc) * KIND_FACTOR[h.kind]
        if h.kind == "attempt":
            # Between attempts that match alike, the one that fixed it answers a symptom-shaped query
            # ("deepspeed save_checkpoint hangs rank 0") better than the dead ends before it.
            h.score *= OUTCOME_FACTOR.get(h.outcome, 1.0)
    if not rerank:
        return
    from rapidfuzz import fuzz, utils

    proc = utils.default_process
    # the whole query, words no record has included: a record that holds two of three words must
    # not read as identical (token_set_ratio scores a subset 100)
    qtext = " ".join((t.corrected or t.raw) for t in q.terms if not t.stop) or \
        " ".join((t.corrected or t.raw) for t in terms)
    # The similarity adds at most 0.2 * KIND_FACTOR: once ``limit`` hits are scored in full, a hit
    # whose score cannot reach the limit-th best even with a perfect similarity is left as it is
    # (it cannot enter the top ``limit``, so the result is the same as scoring everything).
    import heapq

    top: list[float] = []
    for h in sorted(hits, key=lambda h: -(h.score + 0.2 * KIND_FACTOR[h.kind])):
        if limit and len(top) >= limit and h.score + 0.2 * KIND_FACTOR[h.kind] < top[0]:
            break
        sim = _similarity(qtext, h, fuzz, proc) / 100.0
        h.similarity = sim * 100
        h.score += 0.2 * sim * KIND_FACTOR[h.kind]
        if limit:
            (heapq.heappush if len(top) < limit else heapq.heappushpop)(top, h.score)


# --- "was this already tried?" ------------------------------------------------------------------

CLOSE_COVERAGE = 0.52  # share of the idea's words a close prior attempt (with its context) holds
CLOSE_DIRECT = 0.3  # share of the idea's words the record itself must hold (the rest: its context)
CLOSE_SIMILARITY = 80.0
CLOSE_FIX = 0.5  # share of the idea beyond its investigation's topic the record itself must hold
CLOSE_RELATIVE = 0.8  # a close hit scoring under this share of the best close hit is listed as related


def is_close(h: Hit, q: Query) -> bool:
    """A prior attempt counts as close when it holds most of the idea, weighted by how telling each
    word is (``Term.weight``: "snapshot" counts more than "cuda"), or reads alike, and none of the
    rules of ``CLOSE_RULES`` refuses it (``judge`` names the one that does)."""
    return not judge(h, q)


def judge(h: Hit, q: Query) -> str:
    """"" when ``h`` is a close prior attempt of the idea ``q``, else the name of the first rule of
    ``CLOSE_RULES`` that refuses it."""
    if not q.terms or not q.active:
        return "no-terms"
    p = _Pair(h, q)
    for rule in CLOSE_RULES:
        if rule.refuses(p):
            return rule.name
    return ""


class _Pair:
    """One (record, idea) pair as the closeness rules read it, worked out once.

    A free-text hit is judged on its best line with its neighbours and heading (``Hit._window``),
    not on the whole chunk: a long note mentions most words somewhere. ``direct``: the indexes (in
    ``q.active``) of the terms the record itself holds; ``found``: those and the terms only its
    investigation's title, symptom and tags hold (the idea names the GPU, the record the fix)."""

    __slots__ = ("h", "q", "active", "direct", "found", "have", "why", "total", "_did", "_own", "_fix")

    def __init__(self, h: Hit, q: Query):
        self.h, self.q = h, q
        self.active = active = q.active
        self._did = self._own = self._fix = None
        if h.kind == "section":
            self.direct = {i for i, t in enumerate(active) if re.search(t.pattern(), h._window, re.IGNORECASE)}
        else:
            self.direct = h._matched - h._context
        # a direction the record goes ("shorter" for "seq 8192 -> 4096, halving the sequence") is held
        if any(_way(t) for t in active):
            did = self.did
            self.direct = self.direct | {i for i, t in enumerate(active) if _way(t) and _way_in(t, did)}
        self.found = self.direct | h._context
        # An everyday word of the idea ("make", "two", "calls") that the record itself lacks still
        # counts against it, but less than a telling one: "make kernel launches synchronous" is
        # about the launches.
        self.have = {id(active[i]) for i in self.direct}
        self.why = _purpose_terms(q) | _leading_verb(q)
        self.total = sum(self.weight(t) for t in q.terms) or 1.0

    def weight(self, t: Term) -> float:
        lacked = id(t) not in self.have
        return t.weight * (FILLER_WEIGHT if lacked and (_filler(t) or id(t) in self.why) else 1.0)

    def share(self, idx) -> float:
        """The weighted share of the idea the terms ``idx`` make (a typo's correction counts 3/4)."""
        active = self.active
        return sum(self.weight(active[i]) * (0.75 if active[i].kind == "typo" else 1.0) for i in idx) / self.total

    @property
    def did(self) -> str:
        """What the record says was done (``_did_text``): where a direction is read."""
        if self._did is None:
            self._did = _did_text(self.h)
        return self._did

    @property
    def fix(self) -> list[int]:
        """The indexes (in ``active``) of the terms that are the fix: what the idea says beyond its
        investigation's topic, everyday words aside, and of those the ones named before a qualifier
        ("enable activation recomputation *for the encoder*": the encoder says where, not what)
        when they include more than a direction."""
        if self._fix is None:
            h, active = self.h, self.active
            topic = h._context | {i for i in self.direct if h._ctx_text and _in_context(active[i].pattern(), h._ctx_text)}
            fix = [i for i in range(len(active)) if i not in topic and not _filler(active[i])]
            where = _qualifier_terms(self.q)
            knob = [i for i in fix if id(active[i]) not in where]
            # (the idea's leading verb is not its knob: "reproduce on one node without the network"
            # is about the node and the network)
            lead = _opening_word(self.q)
            lead = id(lead) if lead is not None else None
            self._fix = knob if any(not _way(active[i]) and id(active[i]) != lead for i in knob) else fix
        return self._fix

    def fix_held(self, text: str | None = None) -> float:
        """The weighted share of the fix the record holds (in ``text`` when given: a part of it). A
        word that says which way ("without", "enable") is held when the record goes that way
        ("--moe_plugin disable" for "without the plugin")."""
        active = self.active
        total = sum(self.weight(active[i]) for i in self.fix)
        if not total:
            return 1.0
        where = self.did if text is None else text
        held = [i for i in self.fix if (_way_in(active[i], where) if _way(active[i]) else
                                        i in self.direct if text is None else
                                        re.search(active[i].pattern(), text, re.I))]
        return sum(self.weight(active[i]) for i in held) / total

    @property
    def own(self) -> str:
        """All of the record's own text (a free-text hit: its window) but its sentences that
        propose (``_reported``) and its numbering ("Experiment 3", "Try #2", a list's "3."):
        where a value the idea gives is looked for."""
        if self._own is None:
            head, body = _head_body(self.h)
            self._own = _LABEL_NUMBER.sub(" ", head + "\n" + _reported(body, _in_thread(self.h)))
        return self._own


class CloseRule:
    """One reason a record is not a close prior attempt of an idea: ``refuses(pair)`` is true when
    the rule applies. Its docstring says what it refuses and why (most were found on real docs).
    (A plain class: a dataclass would cost every command that imports search its set-up.)"""

    __slots__ = ("name", "refuses")

    def __init__(self, name: str, refuses: Callable[[_Pair], bool]):
        self.name, self.refuses = name, refuses

    def __repr__(self) -> str:
        return f"CloseRule({self.name!r})"

    @property
    def why(self) -> str:
        return " ".join((self.refuses.__doc__ or "").split())


def _names_no_record_has(p: _Pair) -> bool:
    """The idea names a flag, env var, identifier or number with a unit that no record holds
    (``NCCL_ALGO=Tree``, ``HugePages``): an idea about something no record has was not tried (the
    version a change starts from aside: records name where it went)."""
    froms, why = _from_side(p.q), _purpose_terms(p.q)  # (nor a name in what the idea is for: "... so rocBLAS loads")
    return any(_specific(t) and t.raw.lower() not in froms and not _COMPOUND.fullmatch(t.raw) and id(t) not in why
               for t in p.q.terms if t.kind == "unknown")


# A compound of letters ("cpu-only", "graph-safe", "model-level"): as often an English word as a package's name. Held
# by no record, it is missing words of the idea (the coverage rules weigh them), not a name nobody tried.
_COMPOUND = Lazy(r"[A-Za-z]+(?:-[A-Za-z]+)+")


def _names_this_record_lacks(p: _Pair) -> bool:
    """The record (with its investigation) lacks a flag, env var, identifier or number with a unit
    the idea names: the name says exactly what was done. (Not the "from" side of a change: "roll the
    driver back from 430 to 418" was done by a record that names 418 alone.)"""
    froms = _from_side(p.q)
    return not all(i in p.found for i, t in enumerate(p.active) if _specific(t) and t.raw.lower() not in froms)


def _from_side(q: Query) -> set[str]:
    """The numbers an idea changes from ("from 430 to 418", "8 instead of 64": 430, 64), lower case."""
    low = q.text.lower()
    out = {a or b for a, b in _FROM_NUMBER.findall(q.text)} if "from" in low else set()
    if "instead of" in low or "rather than" in low:
        out |= set(_INSTEAD_NUMBER.findall(q.text))
    return out


def _value_missing(p: _Pair) -> bool:
    """A value the idea gives is not in the record: a number ("micro batch size 3", "label
    smoothing 0.2", "world size 8 to 16"; not the "from" side of a change) or the value of a
    setting that is not an env var (``pm=ondemand``, ``LR=5e-6``). Another value is another
    experiment; the record's own numbering ("Experiment 3", "Try #2") and a sentence that proposes
    the value ("continue at LR=5e-6") do not give it."""
    h = p.h
    at = {id(t): i for i, t in enumerate(p.active)}
    for t in _value_terms(p.q):
        i = at.get(id(t))
        if i is None or i not in p.found:
            return True  # (a value no record has, or not this one)
        if i not in h._context and not re.search(t.pattern(), p.own, re.I):
            return True  # only the record's numbering has it, or a sentence that proposes it
    return False


def _another_value(p: _Pair) -> bool:
    """The idea sets a knob to a value the record does not give it (``NCCL_IB_DISABLE=1`` against
    ``=0``; ``trainer=cpu`` against a record that never sets ``trainer``): another experiment.
    Read in what was done (title, action) when that gives the knob a value (a note that proposes
    the next value, "continue at LR=5e-6", is not what was done), else in all of an attempt's
    fields: an import may leave the commands in its conclusion."""
    if _set_off(p):
        return True
    if p.h.kind == "attempt":
        did = p.did
        if any(_given_values(name, did) for name, _v in _ASSIGN.findall(p.q.text)):
            return _other_value(p.q.text, did)
    return _other_value(p.q.text, _did_text(p.h, whole=True))


_OFF_WORD = Lazy(r"(?<![\w.])(?:0|zero|false|off|no|none)(?![\w.])", re.I)


def _set_off(p: _Pair) -> bool:
    """A setting the idea puts in ("use bf16 instead of fp16") that the record only sets off
    (``fp16=False, bf16=False``)."""
    if _WAYS[2][1].search(p.q.text.replace("_", " ")) or _OFF_WORD.search(p.q.text):
        return False  # (the idea turns something off itself, "flex-shrink 0": _opposite's and _other_value's)
    old = _replaced_terms(p.q)
    record = None
    for i in p.fix:
        t = p.active[i]
        if i not in p.direct or id(t) in old or len(t.raw) < 3 or not _SETTING.match(t.raw):
            continue
        if record is None:
            record = _did_text(p.h, whole=True)
        given = _given_values(t.raw, record)
        if given and given <= {"<1>"}:
            return True
    return False


def _other_way(p: _Pair) -> bool:
    """The idea turns its knob one way and the record only the other way ("increase the timeout"
    against "reduced the timeout"; enable / disable, upgrade / downgrade), or an upgrade or a
    switch the record names without stating it (a version listed, a switch in an error line), or
    (free text) more or less of something in a passage that states no change at all: "a smaller
    7B model" is not a setup line that lists a 7B model."""
    if _opposite(p.q.text, p.did):
        return True
    if p.h.kind != "section":
        return False
    up, down = _WAYS[0]
    idea = _ASSIGN.sub(" ", p.q.text).replace("_", " ")
    if bool(up.search(idea)) == bool(down.search(idea)):
        return False
    record = p.did.replace("_", " ")
    return not (up.search(record) or down.search(record) or _CHANGE.search(record))


# A variable that switches something: its name says so (NCCL_P2P_DISABLE, PYTORCH_NO_CUDA_MEMORY_CACHING,
# CUDA_LAUNCH_BLOCKING); set to one of these, it is left as it was.
_SWITCH_VAR = Lazy(r"(?:^|_)(?:DISABLE|DISABLED|ENABLE|ENABLED|NO|USE|BLOCKING)(?:_|$)")
_UNSET_VALUE = Lazy(r"(?i)^(?:0|false|off|no|n)$")
_NEGATED_BEFORE = Lazy(r"(?i)\b(?:not|don'?t|do not|never|without|no longer|stop|undo|revert)\W+(?:\w+\W+){0,2}$")


def _switch_var_other_way(p: _Pair) -> bool:
    """The idea says in words what setting a switch variable does ("disable p2p" is
    ``NCCL_P2P_DISABLE=1`` by the synonym table) and what was done sets that variable the other
    way (``NCCL_P2P_DISABLE=0``: P2P stayed on), and never the idea's way."""
    from dbglog.core import synonyms

    idea = " ".join(p.q.text.lower().split())
    for var, phrases in synonyms.ENV_VARS.items():
        if not _SWITCH_VAR.search(var):
            continue
        said = next((m for ph in phrases if (m := re.search(rf"(?<!\w){re.escape(ph)}(?!\w)", idea))), None)
        if said is None or _NEGATED_BEFORE.search(idea[:said.start()]):
            continue
        values = re.findall(rf"(?<![\w-]){var}[ \t]*=[ \t]*[\"']?([\w.-]*)", p.did)
        if values and all(_UNSET_VALUE.match(v) for v in values):
            return True
    return False


def _way_on_another_knob(p: _Pair) -> bool:
    """The idea turns a switch ("run without -mla", "disable P2P") and the record holds the switch
    word and the knob, but never together: "`-mla 2` without fmoe is also crashing" did not run
    without -mla; "but without the `-ngl 99` argument and using `-mla 3`" neither. Together: the
    word up to a few words before the knob ("without the `-mla` flag", "disabled peer to peer"),
    or a state right after it ("NCCL_P2P_DISABLE=1", "FA off"). A flag the record names with no
    word that turns it off at all was on ("llama-server -fa -fmoe ...": not "without -fmoe")."""
    idea = p.q.text.lower()
    record = None
    for rg, after in ((_WAYS[2][0], _ON_AFTER), (_WAYS[2][1], _OFF_AFTER)):
        m = rg.search(idea)
        if not m:
            continue
        if any(len(t.parts) > 1 and m.group(0).split()[0] in t.parts for t in p.active):
            continue  # the word is part of a phrase the synonym table knows ("disable cuda graphs")
        at = {id(t): idea.find(t.parts[0], m.end()) if t.parts else -1 for t in p.active}
        where = _qualifier_terms(p.q)
        knobs = [t for t in p.active if 0 <= at[id(t)] - m.end() <= _KNOB_REACH // 2
                 and not (_filler(t) or _way(t) or t.stop or id(t) in where)]
        if not knobs:
            continue
        knob = min(knobs, key=lambda t: at[id(t)])
        if record is None:
            record = p.did.replace("_", " ")  # (same length: a knob's spots are read on p.did)
        spots = [k for k in re.finditer(knob.pattern(), p.did, re.I)]
        if not spots:
            continue  # (the record lacks the knob: the other rules judge that)
        if not rg.search(record):
            # a flag named with no word that turns it: a command line that ran with it ("-fa
            # -fmoe -ctk q4_0"); for "enable --x" that is on. So is a variable given a value that
            # is no "off" ("run without NCCL_ALGO" against "NCCL_ALGO=Tree torchrun ...")
            if rg is _WAYS[2][1] and (_specific(knob) or any(
                    _SET_ON.match(p.did, k.end()) for k in spots)):
                return True
            continue
        if not any(rg.search(record[max(0, k.start() - _KNOB_REACH):k.start()]) or after.match(record, k.end())
                   or after.match(p.did, k.end()) for k in spots) and not _way_in_gloss_only(rg, p.h, p.did):
            return True
    return False


def _way_in_gloss_only(rg: re.Pattern, h: Hit, did: str) -> bool:
    """Is the switch word only in the English glossed onto a record told in another language ("Wyłączyłem IOMMU" +
    "disable")? The gloss says the record turned something that way, not where: its place near the knob is not read.
    (``did`` is ``_did_text(h)``: the record's own words, then its gloss.)"""
    own = _own_text(h)
    return len(did) > len(own) and bool(rg.search(did[len(own):])) and not rg.search(own)


_KNOB_REACH = 40  # characters between a switch word and the knob it turns ("without the `-mla` flag")
_SET_ON = Lazy(r"=[\"']?(?!(?:0|false|off|no|none)\b)[\w.-]", re.I)  # VAR=value, the value no "off" (VAR= is unset)
# (the rest of an identifier may come first: "param_offload` — False — **True**" for "param")
_OFF_AFTER = Lazy(r"[\w.]*[\W_]{0,6}(?:disabl\w*|off\b|remov\w*|=\s*[\"']?(?:0|false|off)\b|"
                  r"true\b\W{0,6}(?:\u2192|->|\u2014|\bto\b)\W{0,6}false\b)", re.I)
_ON_AFTER = Lazy(r"[\w.]*[\W_]{0,6}(?:enabl\w*|on\b|=\s*[\"']?(?:1|true|on)\b|"
                 r"false\b\W{0,6}(?:\u2192|->|\u2014|\bto\b)\W{0,6}true\b)", re.I)


# A change of amount stated without a direction word: "8192 → 4096", "(from 0.88)", "set to 30",
# "doubled", "halved" (not a setting listed as "H=4096", nor "8x A100": a setup states no change).
_CHANGE = Lazy(r"→|->|=>|\bfrom\s+~?\d|\bto\s+~?\d|"
                     r"\b(?:doubl|halv|tripl|quadrupl)\w*|\bset (?:to|at)\b|\b(?:changed?|tuned?|adjust\w*)\b", re.I)


def _version_of_another_name(p: _Pair) -> bool:
    """A version in the idea belongs to the name before it: "triton 3.2" is not a record's CUDA
    3.2 when the record lacks triton. A record whose every mention of the version stands bare
    ("I had to revert back to 0.1.11", "tried the new 0.1.22 version") names no other owner: in an
    investigation of the idea's name it is that name's version."""
    at = {id(t): i for i, t in enumerate(p.active)}
    terms = p.q.terms
    for prev, t in zip(terms, terms[1:]):
        if _VERSION.fullmatch(t.raw) and at.get(id(t)) in p.found and prev.raw.isalpha() \
                and not (_filler(prev) or _way(prev) or prev.stop) and at.get(id(prev)) not in p.found \
                and _owned_version(t.raw, p.own):
            return True
    return False


# the word just before a version that names no owner: "back to 0.1.11", "the new 0.1.22", "version 2.3"
_BARE_BEFORE = frozenset("to from the new old a an back on at with and or of in into version versions release v "
                         "ver build tag branch tried try using use ran run upgraded downgraded reverted installed "
                         "updated".split())


def _owned_version(version: str, record: str) -> bool:
    """The record writes ``version`` after a name of its own ("CUDA 3.2", "torch==2.1.0"), or
    nowhere at all (the record holds it only through its context)."""
    spots = [m.start() for m in re.finditer(rf"(?<![\w.]){re.escape(version)}(?![\w]|\.\d)", record, re.I)]
    if not spots:
        return True
    for s in spots:
        lead = record[max(0, s - 40):s]
        words = re.findall(r"[A-Za-z][\w+-]*", lead)
        if re.search(r"[A-Za-z][\w+-]*(?:==|=|@|-v?|\s?v)$", lead) or (
                words and words[-1].lower() not in _BARE_BEFORE and lead[-1:].isspace()):
            return True  # "torch==2.1.0", "cuda-12.1", "CUDA 3.2": the version is that name's
    return False


def _only_its_negation(p: _Pair) -> bool:
    """A name of the idea appears in the record only with a "non-"/"not-" prefix: "power-of-2
    channels" is not "Non-Power-of-2 channels"."""
    return any(i in p.direct and _negated(t, p.did) for i, t in enumerate(p.active) if _specific(t) or len(t.parts) > 1)


def _only_what_is_replaced(p: _Pair) -> bool:
    """In "use A instead of B" the record must hold A: a record with B only is what the idea
    replaces ("use bf16 instead of fp16" against a record of fp16)."""
    new = _replacement(p.q.text, p.active)
    if not new and _replacement(p.q.text, [t for t in p.q.terms if t.kind == "unknown" and not t.stop]):
        return True  # ("use nsys instead of ncu": what it puts in is in no record at all, so not in this one)
    return bool(new) and not any(i in p.found for i in new)


def _only_the_old_side(p: _Pair) -> bool:
    """The record holds a word of the fix only as what a change replaced ("Switched the epilogue
    accumulator from fp16 to fp32", "fp16 → fp32", "fp32 instead of fp16"): the idea "fp16
    accumulator in the epilogue" is what the record moved away from. (A word the idea itself puts
    on the old side, "world size 8 -> 4", is not judged.)"""
    h, active = p.h, p.active
    did = h._window if h.kind == "section" else _did_text(h, whole=True)
    spans = [m.span(g) for m in _OLD_SIDE.finditer(did) for g in range(1, 5) if m.group(g)]
    if not spans:
        return False
    mine = {w.lower() for m in _OLD_SIDE.finditer(p.q.text) for g in m.groups() if g for w in _WORD.findall(g)}
    for i in p.fix:
        t = active[i]
        if i not in p.direct or _way(t) or _filler(t) or set(t.parts) & mine:
            continue
        occ = [m.span() for m in re.finditer(t.pattern(), did, re.I)]
        if occ and all(any(a <= s0 and e0 <= b for a, b in spans) for s0, e0 in occ):
            return True
    return False


def _another_target(p: _Pair) -> bool:
    """The idea moves something to X ("switch to the nccl backend") and the record moved it to
    something else ("switched to gloo"), never to X: another experiment."""
    if " to " not in f" {p.q.text.lower()} ":
        return False
    mine = {w.lower() for w in _MOVED_TO.findall(p.q.text)}
    if not mine:
        return False
    h = p.h
    theirs = {w.lower() for w in _MOVED_TO.findall(h._window if h.kind == "section" else _did_text(h, whole=True))}
    return bool(theirs) and not (mine & theirs)


# A change and where it went: "switched to gloo", "moved the pool to the 550 driver", "set it to 0".
_MOVED_TO = Lazy(r"\b(?:switch\w*|mov(?:e|ed|es|ing)|migrat\w*|chang\w*|went|go|going|set|port\w*)\s+"
                  r"(?:(?:it|them|the\s+\w+|\w+)\s+)?to\s+(?:the\s+|a\s+|an\s+)?([\w.+-]+)", re.I)


# What a change replaced: "from A to B", "A → B", "instead of A", "replaced A with B".
# (the arrow's left side starts where a word does: tried from every place inside a long unbroken word, it took
# time in the square of the word's length, 35 s for 40 KB of base64 in a result)
_OLD_SIDE = Lazy(r"\bfrom\s+([^\s,;()]+(?:\s+[^\s,;()]+)?)\s+to\b|(?<![^\s,;()])([^\s,;()]+)\s*(?:→|->)|"
                       r"\b(?:instead of|rather than)\s+([^\s,;.()]+)|\breplac\w*\s+([^\s,;()]+)\s+(?:with|by)\b", re.I)


def _acronym_missing(p: _Pair) -> bool:
    """An acronym names the thing: "replace DDP with FSDP" is not done by a record without FSDP.
    (Not one that only says where, after the fix: "pause the UI task while testing the LCD".)"""
    missing = [t for i, t in enumerate(p.active) if i not in p.found and _acronym(t)]
    if not missing:
        return False
    where = _qualifier_terms(p.q)
    if not any(id(p.active[i]) not in where for i in p.fix):
        where = set()  # (the fix is all qualifier: nothing says only where)
    return any(id(t) not in where for t in missing)


def _too_little_in_the_record(p: _Pair) -> bool:
    """The record itself (not its investigation's title and symptom) holds under ``CLOSE_DIRECT``
    of the idea, or shares only everyday words or a direction ("enabled") with it."""
    return p.share(p.direct) < CLOSE_DIRECT or all(_filler(p.active[i]) or _way(p.active[i]) for i in p.direct)


def _too_little_in_the_text(p: _Pair) -> bool:
    """Free text (a doc's section, a watched doc) holds under two of the idea's telling words itself, when the idea
    has two: "file a bug with NVIDIA" against a protocol's "Whenever you're investigating a bug, ...", with "NVIDIA"
    only in the investigation's environment. An attempt's title and fields say what was done; free text around one
    word of the idea says nothing of doing the rest."""
    if p.h.kind != "section" or any(_specific(p.active[i]) for i in p.direct):
        return False  # (a file, flag or variable of the idea in the text itself is telling enough)
    telling = [i for i, t in enumerate(p.active) if not _filler(t)]
    return len([i for i in telling if i in p.direct]) < min(2, len(telling))


def _way_only_around(p: _Pair) -> bool:
    """The idea says which way ("without", "disable", "downgrade") and only the record's investigation does, not the
    record: "run without the profiler" against a profiler run, in an investigation whose symptom says "runs fine
    without NCU". The way is what was done; the context's is the setting of the bug."""
    return any(_way(t) and i not in p.direct for i, t in enumerate(p.active))


def _another_fix_same_topic(p: _Pair) -> bool:
    """What the idea says beyond its investigation's topic is the fix (``_Pair.fix``: before a
    qualifier such as "for the encoder", "on the jetson", when it names one), and the record holds
    under ``CLOSE_FIX`` of it: "split the big matmul on gfx1010" in "rocBLAS GEMM hang on
    gfx1010" is about splitting, and a record of that investigation that does something else is
    the same topic, not the same idea; "enable activation recomputation for the encoder" is not an
    attempt that reordered the encoder. (Not for an investigation hit: its title is its topic.)"""
    if p.h.kind == "investigation":
        return False
    where = _qualifier_terms(p.q)
    if where and not any(id(p.active[i]) not in where for i in p.fix) and any(
            t.kind == "unknown" and not (_filler(t) or t.stop or _way(t)) and id(t) not in where for t in p.q.terms):
        return True  # what comes before "across the nodes" is in no record: the record holds only the where
    return p.fix_held() < CLOSE_FIX


def _names_no_experiment(p: _Pair) -> bool:
    """The idea is one plain word at most ("kernel", "hang", "fix", "it works"): no setting, flag, version or
    second word says what was done, so every record that holds the word would be "the same experiment". (A knob the
    idea turns is still compared as a knob: "eager" against ``--enforce-eager``.)"""
    return names_no_experiment(p.q)


def names_no_experiment(q: Query) -> bool:
    """Is the idea one plain word at most (see ``_names_no_experiment``)? A verb with its thing ("use adafactor") is
    two; a name with an underscore, a digit or a flag's dashes (``NCCL_IB_DISABLE``, ``fp16``) is a setting."""
    words = [w for w in re.findall(r"\w+", q.text.lower()) if w not in _FUNCTION_WORDS]
    return len(words) <= 1 and not any(_specific(t) or _IDENT.search(t.raw) for t in q.active)


# Words that say nothing of what was done ("it works", "the kernel"); a verb of doing ("use", "try") is not one.
_FUNCTION_WORDS = frozenset("a an the it its this that these those is are was were be been to of and or i we you "
                            "my our".split())


def _too_little_overall(p: _Pair) -> bool:
    """The record with its investigation's context holds under ``CLOSE_COVERAGE`` of the idea,
    and is not an attempt or row that reads alike (rapidfuzz token-set similarity >=
    ``CLOSE_SIMILARITY`` over the whole idea) holding at least half of it."""
    covered = p.share(p.found)
    return not (covered >= CLOSE_COVERAGE or (p.h.kind != "section" and p.h.similarity >= CLOSE_SIMILARITY
                                              and covered >= 0.5))


def _only_proposed(p: _Pair) -> bool:
    """The record holds the fix only in sentences that propose it ("Continue at LR=5e-6; if it
    plateaus, switch to an ensemble of recent checkpoints", "you can remove the .compiz folder",
    "Need alternative: a smaller model", "If it never serves, last-resort options: ..."): it names
    the idea as a plan or advice, it does not report trying it. Listed as mentioned, not refused.
    (An attempt's title and a chunk's heading are what they are: "Try 2: ..." reports a try; a
    next step is a proposal whose status says whether it was done.)"""
    h = p.h
    if h.kind not in ("attempt", "section"):
        return False
    head, body = _head_body(h)
    reported = _reported(body, _in_thread(h))
    if reported == body:
        return False
    return p.fix_held(head + "\n" + reported) < CLOSE_FIX


# The rules in the order ``judge`` applies them, cheapest first: the names the idea gives, then how
# much of the idea the record holds, then the near-miss rules that read the record's text (found on
# real debug docs: another value, the other way, a version of another name, a negation, "instead
# of", the old side of a change), last the one that lists a proposal as mentioned. The refusing
# rules are vetoes, so their order decides only what is computed and which name ``judge`` reports.
CLOSE_RULES: tuple[CloseRule, ...] = tuple(CloseRule(n, f) for n, f in (
    ("names-no-experiment", _names_no_experiment),
    ("name-no-record-has", _names_no_record_has),
    ("name-missing", _names_this_record_lacks),
    ("too-little-in-record", _too_little_in_the_record),
    ("too-little-overall", _too_little_overall),
    ("too-little-in-text", _too_little_in_the_text),
    ("acronym-missing", _acronym_missing),
    ("another-fix-same-topic", _another_fix_same_topic),
    ("version-of-another-name", _version_of_another_name),
    ("value-missing", _value_missing),
    ("another-value", _another_value),
    ("other-way", _other_way),
    ("switch-variable-other-way", _switch_var_other_way),
    ("switch-on-another-knob", _way_on_another_knob),
    ("way-only-around", _way_only_around),
    ("negated-name", _only_its_negation),
    ("replaced-thing", _only_what_is_replaced),
    ("only-the-old-side", _only_the_old_side),
    ("another-target", _another_target),
    ("only-proposed", _only_proposed),
))
# Rules after which a record is listed as *mentioned* (it names the idea without trying it), not refused.
MENTION_RULES = frozenset({"only-proposed"})

# Words after which an idea says where or when, not what: "... for the encoder", "... on the jetson".
_QUALIFIER = Lazy(r"\b(?:for|on|in|under|during|when|while|inside|within|across|because|after)\b", re.I)


def _qualifier_terms(q: Query) -> set[int]:
    """ids of the idea's terms that follow its first qualifier word (the word too: "across" says where), once a
    term that is neither everyday wording nor a direction came before it."""
    return _terms_after(q, _QUALIFIER, "_where", with_marker=True)


# Words after which an idea says why, not what: "... so libcudart resolves", "... to avoid the docker0 bridge".
_PURPOSE = Lazy(r"\b(?:" + PURPOSE_OPENER + r")\b", re.I)


def _purpose_terms(q: Query) -> set[int]:
    """ids of the idea's terms in its purpose clause ("rebuild with -DAMDGPU_TARGETS=gfx1031 *so the kernels load*"):
    a record that lacks those words may still have done the thing (records say what was done; the why is in the
    idea's head)."""
    return _terms_after(q, _PURPOSE, "_why", with_marker=False)


def _terms_after(q: Query, marker, key: str, with_marker: bool) -> set[int]:
    """ids of the idea's terms after the first ``marker`` that follows a term neither everyday wording nor a
    direction (with the marker's own word when ``with_marker``); kept on the query under ``key``."""
    cached = q.__dict__.get(key)
    if cached is not None:
        return cached
    text = q.text.lower()
    pos = {id(t): text.find(t.parts[0]) if t.parts else -1 for t in q.terms}
    first = min((pos[id(t)] for t in q.terms if pos[id(t)] >= 0 and not _filler(t) and not _way(t)), default=-1)
    m = marker.search(text, first + 1) if first >= 0 else None
    at = (m.start() if with_marker else m.end()) if m else 0
    out = {id(t) for t in q.terms if m and pos[id(t)] >= at}
    q.__dict__[key] = out
    return out


def _opening_word(q: Query) -> Term | None:
    """The idea's first term when the idea opens with it as one word ("reproduce on one node ...", "wipe the cache")."""
    lead = q.terms[0] if q.terms else None
    return lead if lead is not None and len(lead.parts) == 1 and q.text.lower().startswith(lead.raw.lower()) else None


def _leading_verb(q: Query) -> set[int]:
    """The id of the idea's opening word when it is a plain word no record holds ("wipe ~/.triton/cache", "restrict
    NCCL's bootstrap to ens5f0", "uninstall the docker snap"): an idea is written as an order, and a record says the
    same deed with its own verb ("rm -rf", "export NCCL_SOCKET_IFNAME", "snap remove"). An opening word some record
    holds may be the knob itself ("offload activations", "amax history 256"); a direction ("disable", "downgrade")
    is read by the rules on ways."""
    lead = _opening_word(q)
    if lead is None or lead.kind != "unknown" or _specific(lead) or _way(lead) or lead.group \
            or not (lead.raw.isalpha() and lead.raw.islower()):
        return set()
    return {id(lead)}


# A sentence that proposes rather than reports (a plan, advice, a condition): "If it plateaus,
# switch to ...", "Try using envy", "you can remove ...", "Need alternative: ...", "Continue at ...",
# an instruction to the reader ("Now load the 96.xx driver", "Do not reboot", "Look through your
# apache config").
_PROPOSING = Lazy(
    r"^\W*(?:\d+[.)]\s*)?\W*(?:if|unless|try(?!\s*#?\d)|maybe|perhaps|consider|next|later|todo|alternatively|"
    r"continue|needs?|plan(?:ned)?|should|could|might|do not|don't|never|now(?=\s+[a-z]))\b|"
    r"\b(?:you|we)\s+(?:can|could|should|might|may|need to|would)\b(?!\s+not)|\byour\b|"
    r"\b(?:could|should|might)\s+(?:try|help|be worth)\b|\blast[- ]resort\b|\bworth (?:a )?try",
    re.I)
# sentence ends, blank lines, list items: a wrapped line stays in its sentence
_SENTENCE = Lazy(r"(?<=[.!?;])(?<!\be\.g\.)(?<!\bi\.e\.)\s+|(?<=[。！？；])|\n[\s>]*\n|\n(?=\s*(?:[-*+]|\d+[.)])\s)")  # (a ">" line is a blank one in a quote)


def _head_body(h: Hit) -> tuple[str, str]:
    """A record's name (an attempt's title, a chunk's heading: "Try 2: ..." reports a try, whatever
    its words) and the rest of its text, which may propose as well as report."""
    if h.kind == "section":
        head, _, body = h._window.partition("\n")
        return head, body
    if h.kind == "attempt":
        return h.fields.get("title") or "", "\n".join(
            v for k, v in h.fields.items() if isinstance(v, str) and k not in ("title", "created"))
    return "\n".join(v for k, v in h.fields.items() if isinstance(v, str) and k != "created"), ""


def _reported(text: str, thread: bool = False) -> str:
    """``text`` without its sentences that propose (``_PROPOSING``) or ask ("How do I set it back
    to PATA?") and the paragraphs a proposing label opens ("**Recommendation:** QK-norm on for d24.
    Re-run d20 with it."); in a thread (``_in_thread``), also the sentences a bare imperative opens
    ("Enable gradient_checkpointing and use paged_adamw_8bit", "Build the project without CUDA"):
    there people report in the first person or the past and advise in the imperative."""
    kept, dropped = [], False
    for para in _PARAGRAPH.split(text):
        if _PROPOSING_LABEL.match(para):
            dropped = True
            continue
        parts = _SENTENCE.split(para)
        keep = [s for s in parts if not (_PROPOSING.search(s) or s.rstrip(" *_)").endswith(("?", "？"))
                                         or thread and _IMPERATIVE.search(s) or _proposes_in_own_words(s))]
        dropped = dropped or len(keep) < len(parts)
        kept.append("\n".join(keep))
    return "\n".join(kept) if dropped else text


# Words that only other languages written in ASCII have ("bitte", "und", "pas", "mal"): worth asking the reader's tables.
_NOT_ENGLISH = Lazy(r"\b(?:bitte|und|oder|nicht|mal|der|die|das|ist|pas|avec|essaie[zs]?|veuillez|por favor|prueba|intenta)\b",
                    re.I)


def _proposes_in_own_words(sentence: str) -> bool:
    """A sentence in another language that opens by advising ("试试用 packing", "Versuch mal --lowvram",
    "お試しください"): the reader's cue table of that language says so (``docreader.cues``); English has the rules above."""
    if sentence.isascii() and not _NOT_ENGLISH.search(sentence):
        return False  # (most text is English: the cue tables are not loaded for it)
    from dbglog.docreader.cues import _SUBSTRING_LANGS, language, table

    lang = language(sentence)
    if lang == "en":
        return False
    body = sentence.strip().lstrip("-*+>#0123456789.) ")
    lead = body[:6] if lang in _SUBSTRING_LANGS else " ".join(body.split()[:2])
    t = table(lang)
    return t.has("mood.imperative", lead) and not t.has("tense.future", lead) or t.has("mood.imperative", body[-8:])


_PARAGRAPH = Lazy(r"\n[\s>]*\n|\n(?=\s*(?:[-*+]|\d+[.)])\s)")
# A sentence opened by a verb in its bare form (not one whose past is the same word: "Set X: still
# hangs" reports, "Also set X" advises). Read as advice only in a thread, where reports are
# "I rebuilt ..." / "Rebuilt ...".
_IMPERATIVE = Lazy(
    r"^\W*(?:(?:also|then|just|please|first|now|maybe)\s+(?:set|put|run)\b|build|rebuild|use|try|enable|disable|add|remove|install|reinstall|uninstall|reduce|increase|"
    r"lower|raise|switch|change|update|upgrade|downgrade|apply|pass|turn|drop|replace|make|move|delete|"
    r"export|pin|compile|recompile|test|limit|keep|avoid|give|start|stop|restart|reboot|disconnect|"
    r"unplug|edit|comment|uncomment|decrease|go|check ?out|pull|clone|download)\b(?!\s*(?:[:=]|is\b|was\b))",
    re.I)
# The heading of a thread's replies: an issue export's "Conversation", a forum's "Comments".
_THREAD_HEADING = Lazy(r"\b(?:conversation|comments?|repl(?:y|ies)|discussion|answers?|thread)\b", re.I)


def _in_thread(h: Hit) -> bool:
    """A free-text hit under a thread's replies heading."""
    return h.kind == "section" and bool(_THREAD_HEADING.search(h.fields.get("heading", "").rsplit(" > ", 1)[-1]))
# A paragraph that opens with a proposing label proposes throughout.
_PROPOSING_LABEL = Lazy(r"^\W*(?:recommend\w*|suggest\w*|propos\w*|ideas?|to ?do|next(?: steps?)?|plan|"
                              r"follow[- ]?ups?|options?)\W*:|"
                              # a bold label that says so anywhere: "**How to do it RIGHT (untested plan):**"
                              r"^\W*\*\*[^*\n]{0,80}\b(?:untested|untried|plan|proposal|proposed)\b[^*\n]{0,40}\*\*", re.I)


_VERSION = recache.compile(r"v?\d+(?:\.\d+)+|\d{3}")  # 3.2, 6.4.1, driver 565


def _negated(t: Term, record: str) -> bool:
    """Every mention of ``t`` in the record carries a "non-"/"not-" prefix."""
    found = [m.start() for m in re.finditer(t.pattern(), record, re.I)]
    return bool(found) and all(re.search(r"\bno[nt]-?\s?$", record[max(0, p - 5):p], re.I) for p in found)


_INSTEAD = recache.compile(r"\b(?:instead of|rather than|in place of)\b", re.I)


def _replacement(text: str, active: list[Term]) -> list[int]:
    """The telling terms of what an "A instead of B" idea puts in (``bf16`` of "use bf16 instead of
    fp16"; "plain AdamW instead of ..." needs ``AdamW`` or ``plain``): empty if no such phrase."""
    m = _INSTEAD.search(text)
    if not m:
        return []
    head, tail = text[:m.start()], text[m.end():]
    return [i for i, t in enumerate(active) if not _filler(t) and not _way(t) and (pat := t.pattern())
            and re.search(pat, head, re.I) and not re.search(pat, tail, re.I)]


def _replaced_terms(q: Query) -> set[int]:
    """ids of the terms only the "instead of B" part of the idea names (B): what the try replaces."""
    cached = q.__dict__.get("_replaced")
    if cached is not None:
        return cached
    out: set[int] = set()
    m = _INSTEAD.search(q.text)
    if m:
        head, tail = q.text[:m.start()], q.text[m.end():]
        out = {id(t) for t in q.active if (pat := t.pattern()) and re.search(pat, tail, re.I)
               and not re.search(pat, head, re.I)}
    q.__dict__["_replaced"] = out
    return out


def _acronym(t: Term) -> bool:
    """A name in capitals (``FSDP``, ``NIC``, ``LDS``) other than a typo's correction."""
    return t.kind != "typo" and len(t.raw) >= 2 and t.raw.isalpha() and t.raw.isupper()


def _did_text(h: Hit, whole: bool = False) -> str:
    """What a record says was done (where a direction or a value is read): an attempt's title and
    action (``whole``: all its fields, for the values it sets: an import may leave the commands in
    its conclusion), a free-text hit's window, a row's or a step's own text; with the English words of what it says
    in another language ("降级" -> downgrade: ``gloss``), where a way is read."""
    text = _own_text(h, whole)
    english = gloss(text)
    return text + "\n" + " ".join(english) if english else text


def _own_text(h: Hit, whole: bool = False) -> str:
    """``_did_text`` in the record's own words, before the gloss is added."""
    f = h.fields
    if h.kind == "section":
        return h._window
    if h.kind == "attempt":
        names = ("title", "did", "hypothesis", "result", "conclusion") if whole else ("title", "did")
        return "\n".join(f.get(k) or "" for k in names)
    return "\n".join(str(f.get(k) or "") for k in ("factor", "working", "broken", "text", "detail", "title"))


# Which way an idea turns its knob. An idea that goes one way ("increase the dataloader timeout",
# "enable flash attention", "downgrade pytorch") is not a record that only went the other way
# ("reduced the timeout from 600 s to 120 s", "Completed upgrades"). ``_`` counts as a space:
# NCCL_P2P_DISABLE says "disable".
_WAYS = (
    (recache.compile(r"\b(increas\w*|rais(?:e|ed|es|ing)|bigger|larger|higher|grow\w*|enlarg\w*|"
                r"bump\w*|extend\w*|longer|boost\w*)\b", re.I),
     recache.compile(r"\b(decreas\w*|reduc\w*|lower\w*|smaller|fewer|shrink\w*|halv\w*|shorter|cut)\b", re.I)),
    (recache.compile(r"\b(upgrad\w*|newer|updat\w*)\b", re.I),
     recache.compile(r"\b(downgrad\w*|older|roll(?:ed|ing)? ?back|revert\w*(?: back)? to|(?:went|go|going) back to)\b",
                     re.I)),
    # (a change written old -> new, as a before/after table row: "False — **True**")
    (recache.compile(r"\b(enabl\w*|(?:turn|switch)\w* on|activat\w*|on(?=\s*$|\s*[(,;:\u2014-]))|"
                r"[=:]\s*[\"']?(?:true|on)\b|"  # ("-DGGML_HIP_UMA=ON" turns it on, as "=OFF" turns it off)
                r"\bfalse\b\W{0,6}(?:\u2192|->|\u2014|\bto\b)\W{0,6}true\b", re.I | re.M),
     recache.compile(r"\b(disabl\w*|(?:turn|switch)\w* off|deactivat\w*|without|not using|no longer using|"
                r"off(?=\s*$|\s*[(,;:\u2014-]))|"
                r"[=:]\s*[\"']?(?:0|false|off)\b|\btrue\b\W{0,6}(?:\u2192|->|\u2014|\bto\b)\W{0,6}false\b", re.I | re.M)),
)


def _way(t: Term) -> bool:
    """A word that only says which way ("without", "disable", "raise"): _opposite judges it."""
    return any(rg.fullmatch(t.raw) for pair in _WAYS for rg in pair)


def _way_in(t: Term, record: str) -> bool:
    """The record goes the way the word ``t`` says."""
    record = record.replace("_", " ")
    return any(rg.fullmatch(t.raw) and rg.search(record) for pair in _WAYS for rg in pair)


def _opposite(idea: str, record: str) -> bool:
    """The idea goes one way on an axis (more/less, upgrade/downgrade, on/off) and the record only
    the other way, or (versions, switches) no way at all."""
    idea = _ASSIGN.sub(" ", idea).replace("_", " ")  # (a value the idea sets is _other_value's to judge)
    record = record.replace("_", " ")
    for up, down in _WAYS:
        i_up, i_down = bool(up.search(idea)), bool(down.search(idea))
        if i_up == i_down:
            continue  # no way, or both ("turn off mmap, turn on mlock")
        same, other = (up, down) if i_up else (down, up)
        if other.search(record) and not same.search(record):
            return True
        if up is _WAYS[1][0] and not same.search(record) and not _VERSION_ACT.search(record):
            return True  # an upgrade or a downgrade is an act the record states, not a version it names
        if up is _WAYS[2][0] and not same.search(record) and same.search(re.sub(r"(?i)\bwithout\b", "", idea)):
            # a record that names a switch without turning it (an error line, a config listing) did
            # not turn it ("without the network" is not a switch)
            return True
    return False


# A version change written without a direction: "pinned deepspeed 0.14.0", "ROCm 6.3 → 6.1".
_VERSION_ACT = recache.compile(r"\bpinn?\w*|→|->|\bswitch\w* to\b|\bmoved? to\b", re.I)


_ASSIGN = recache.compile(r"(?<![\w-])(-{0,2}[A-Za-z][\w.-]*)=([\w.:+-]+)")
_CODE_ASSIGN = recache.compile(r"""\[["'](\w+)["']\]\s*=\s*|["'](\w+)["']\s*,\s*""")
_SAME_VALUE = ({"1", "true", "yes", "on"}, {"0", "false", "no", "off", "none"})


def _norm_value(v: str) -> str:
    v = v.strip("\"'`,;").rstrip(":.").lower()  # ("=1: same fault", "=0." end a sentence)
    for i, group in enumerate(_SAME_VALUE):
        if v in group:
            return f"<{i}>"
    return v


def _given_values(name: str, record: str) -> set[str]:
    """The values (normalised) the record gives the setting ``name`` (``--tp``, ``NCCL_IB_DISABLE``):
    ``name=v``, ``name: v``, ``name: type = v``, a flag's ``--name v``, and code's
    ``os.environ["NAME"] = "v"`` / ``setdefault("NAME", "v")``."""
    record = _CODE_ASSIGN.sub(lambda m: f" {m[1] or m[2]}=", record)
    key = name.lstrip("-")
    words = "[_-]".join(map(re.escape, re.split(r"[_-]", key)))
    # (and a flag the record writes with its dashes, whatever the idea wrote: max-batch-size=8 is --max_batch_size 8)
    pat = re.compile(r"(?<![\w])-{0,2}" + words + r"(?:\s*:\s*[A-Za-z]\w*\s*=|\s*[=:]" + (r"|\s+(?=[\w\"'.-]))" if name.startswith("-") else ")")
                     + r"\s*[\"']?([\w.:+-]+)|(?<![\w-])--?" + words + r"\s+(?!-[A-Za-z-])[\"']?([\w.:+-]+)", re.I)
    return {_norm_value(a or b) for a, b in pat.findall(record)}


def _other_value(idea: str, record: str) -> bool:
    """The idea sets a knob to a value (``NCCL_IB_DISABLE=1``, ``retain_graph=False``) and the
    record gives that knob only other values (``NCCL_IB_DISABLE=0``, ``GGML_CUDA_FORCE_MMQ: no``),
    or, for a lower-case setting (not an env var, which is often named without its ``=1``), none."""
    for name, value in _ASSIGN.findall(idea):
        key = name.lstrip("-")
        if len(key) < 3:
            continue  # tp=8: "tp" is everywhere, its value is checked as a word
        given = _given_values(name, record)
        if given and _norm_value(value) not in given:
            return True
        if not given and not key.isupper() and _WORD.search(value):
            if value.lower() in _ON_VALUES and _WAYS[2][0].search(record.replace("_", " ")):
                continue  # gradient_checkpointing=True: "Enabling gradient checkpointing works"
            return True  # a setting the record does not set ("trainer" vs trainer=cpu)
    return False


_NUMBER = recache.compile(r"\d+(?:\.\d+)?")
_DOTTED = recache.compile(r"v?\d+(?:\.\d+){2,}")  # a version: 0.1.16, v2.3.1
# The record's own numbering, which is not a value it gives: "Experiment 3", "Try #2", "T24",
# "S155", "#4", a list item's "3." at the start of a line.
_LABEL_NUMBER = Lazy(
    r"\b(?:experiment|exp|attempt|try|fix|approach|option|config|phase|test|step|solution|iter(?:ation)?|round|"
    r"trial|hypothes[ie]s|theory|entry|update|intento|session|rejection|issue|item|[hst])\s*#?\s*\d+\b|#\d+\b|"
    r"^\s*(?:[-*+]\s+)?\d+[.)](?=\s)", re.I | re.M)
# the "from" side of a change the idea names ("go from TP4 to TP8"): not a value it sets
_NUMBER_WORDS = frozenset("zero one two three four five six seven eight nine ten half".split())  # "to zero" = "=0"
_TO_TARGET = Lazy(r"\bto\s+(?:the\s+|a\s+|an\s+)?([\w.+-]+)", re.I)
_SWITCHED_TO = Lazy(r"\b(?:switch|migrate|port|move)\s+(?:[\w.-]+\s+){0,4}to\s+(?:the\s+|a\s+|an\s+)?([A-Za-z][\w.+-]*)",
                    re.I)
# ("from 430", "from bs=8"; with a longer name, only as a change's start: "from driver 430 to 418")
_FROM_NUMBER = Lazy(r"\bfrom\s+(?:[A-Za-z]{1,4}\s?=?\s?)?(\d+(?:\.\d+)?)\b|"
                    r"\bfrom\s+[A-Za-z][\w-]{4,15}\s?=?\s?(\d+(?:\.\d+)?)\s+to\b", re.I)
# ("8 instead of 64", "rather than bs=4": the value it replaces)
_INSTEAD_NUMBER = Lazy(r"\b(?:instead\s+of|rather\s+than)\s+(?:[A-Za-z]{1,4}\s?=?\s?)?(\d+(?:\.\d+)?)\b", re.I)


def _value_terms(q: Query) -> list[Term]:
    """The terms of the idea that are values it gives: its numbers (not the "from" side of a
    change) and the values of its lower-case settings (``pm=ondemand``; an env var's value is
    ``_other_value``'s to judge: records often name the variable without it)."""
    cached = q.__dict__.get("_values")
    if cached is not None:
        return cached
    froms = _from_side(q)
    from dbglog.core.synonyms import env_name, known_words

    settings = {v.lower() for k, v in _ASSIGN.findall(q.text)
                if not env_name(f"{k}={v}") and v.lower() not in _TRIVIAL_VALUES and not v.isdigit()}
    # where a change goes: "offload activations to NVMe", "switch to the nccl backend" (a name, not
    # a purpose: "to free memory")
    settings |= {w.lower() for w in (_TO_TARGET.findall(q.text) if " to " in f" {q.text.lower()} " else ())
                 if w.lower() not in _NUMBER_WORDS
                 and (re.search(r"\d|[A-Z]", w) or w.lower() in known_words())}
    # after a verb of switching, the word it goes to is the change whatever its case ("switch the
    # process group backend to gloo")
    settings |= {w.lower() for w in _SWITCHED_TO.findall(q.text) if w.lower() not in _NUMBER_WORDS}
    out = [t for t in q.terms if ((_NUMBER.fullmatch(t.raw) or _DOTTED.fullmatch(t.raw)) and t.raw.lower() not in froms)
           or (t.raw.lower() in settings and not (_filler(t) or _way(t) or t.stop))]
    # a name with its version ("revert to Ollama 0.1.11"): the version is the value, the name its owner
    # (``_version_of_another_name`` judges that)
    owner_of = {id(a): b for a, b in zip(q.terms, q.terms[1:]) if _VERSION.fullmatch(b.raw) and a in out}
    values: list[Term] = []
    for t in out:
        v = owner_of.get(id(t), t)
        if v not in values:
            values.append(v)
    q.__dict__["_values"] = values
    return values


# (a word joined by hyphens names a package or a flag's value, "flash-attn", "llama-cpp-python"; not an English
# compound that opens with a prefix or a plain word, "re-ran", "multi-node", "out-of-memory", "fine-tuned")
_IDENT = recache.compile(r"[_=]|^--?\w|\w\.\w|[a-z][A-Z]|\d[A-Za-z]|[A-Za-z]\d|^\d{3,}$|"
                         r"^(?!(?i:re|pre|non|multi|single|cross|self|co|sub|un|post|mid|out|up|over|under|semi|half|full|"
                         r"fine|well|long|short|double|built|follow|warm|cold|hard|soft|end|one|two|first|second|third|"
                         r"per|all|in|on|off|mixed|high|low)-)[A-Za-z]+(?:-[A-Za-z0-9]+)+$")


def _specific(t: Term) -> bool:
    """An identifier, flag, env var or number with a unit: the part of an idea that names exactly
    what was done (``NCCL_ALGO=Tree``, ``--enforce-eager``, ``350W``); a close prior attempt has it."""
    return bool(t.base) or bool(_IDENT.search(t.raw)) and (not t.group or "." in t.raw)


# Free text that proposes rather than reports: a close match there is an idea, not a prior attempt.
_IDEA_HEADING = recache.compile(
    r"\b(next steps?|what to try|to ?do|todos|ideas?|open questions?|questions|plans?|future|to try|"
    r"things to try|recommend(?:ations?|ed)|action items?|backlog|untried|not (yet )?tried|follow[- ]ups?|"
    r"(?:not|\w+n't) (?:yet )?(?:been )?(?:\w+ly )?(?:tried|tested|investigated|explored)|"
    r"next actions?|files to change|changes to make|what is left|remaining (?:work|steps|levers|ideas)|last[- ]resorts?|"
    r"hypothes[ie]s|theories|suspects?|wishlist|alternatives?|fallbacks?|expected (?:results?|outcomes?)|"
    r"(?:potential|possible|proposed|suggested|candidate) (?:fix(?:es)?|solutions?|workarounds?|steps?))\b",
    re.IGNORECASE)
_IDEA_LINE = recache.compile(
    r"^\s*(?:[-*+]|\d+[.)])\s+\[ \]|^\W*option [a-z0-9]\b|\b(todo|could try|should try|might try|may try|worth (a )?try(ing)?|"
    r"try next|to be tried|not (yet )?tried|haven'?t tried|have not tried|idea:|maybe try|consider)\b",
    re.IGNORECASE)


# Free text that sets the scene (what was checked before starting, links): a close match there is
# neither a prior attempt nor an idea. (Not "Environment": issue threads report tries there.)
# Nor is a log, a trace or a report of versions that merely shows a setting (an issue template's
# "Relevant log output" prints `GGML_CUDA_FORCE_MMQ: no`; "Diagnostic information" the ROCm version).
_BACKGROUND_HEADING = recache.compile(
    r"\b(pre-?flight|checklist|references?|links|glossary|log output|stack ?traces?|tracebacks?|"
    r"system info\w*|diagnostic info\w*|version info\w*|versions|source headings|(?:training|console|"
    r"program|sample|example|log|command|script) output)\b", re.IGNORECASE)


def is_background(h: Hit) -> bool:
    return h.kind == "section" and bool(_BACKGROUND_HEADING.search(h.fields.get("heading", "").rsplit(" > ", 1)[-1]))


# A runbook's conditional advice: "Troubleshooting > If data loading is slow:".
_ADVICE_HEADING = recache.compile(r"(?:^|> )if\b", re.IGNORECASE)


def is_idea(h: Hit) -> bool:
    """A section hit that only proposes the idea (a TODO list, an ideas file, "could try X")."""
    if h.kind != "section":
        return False
    name = h.path.rsplit("/", 1)[-1].rsplit(".", 1)[0] if not h.investigation else ""
    heading = h.fields.get("heading", "")
    m = _IDEA_HEADING.search(heading)
    if m and _TESTED_IDEA.fullmatch(m.group(0)) and h.outcome in ("worked", "failed", "partial"):
        m = None  # a hypothesis whose text states what the test showed was tested
    return bool(m or _ADVICE_HEADING.search(heading) or _IDEA_HEADING.search(name.replace("_", " "))
                or _IDEA_LINE.search(h.line_text))


# Ideas that a doc tests under the same heading: "A hypothesis that measurement killed".
_TESTED_IDEA = Lazy(r"hypothes[ie]s|theories|suspects?", re.I)


def section_outcome(h: Hit) -> str:
    """What a free-text report says happened: its best line's verdict ("| --x | same hang | ❌ |"),
    else its window's (the importer's outcome reading, which handles "no OOM anymore" = worked)."""
    try:
        from dbglog.core.outcome import classify
    except ImportError:  # pragma: no cover - older tree
        from dbglog.core.model import infer_outcome as classify
    first = classify(h.line_text) if h.line_text else "inconclusive"
    if first != "inconclusive":
        return first
    return classify("\n".join(h._window.split("\n")[1:]) or h.line_text)


@dataclass
class TriedResult:
    result: Result
    close: list[Hit]
    mentioned: list[Hit] = field(default_factory=list)  # close, but only as an idea / a to-do
    another: list[Hit] = field(default_factory=list)  # the same knob, turned another way or to another value
    idea: object = None  # the idea's experiment (experiment.Experiment)

    @property
    def answer(self) -> str:
        """The answer's tier: "tried", "tried another way", "related" or "not tried"."""
        if self.close:
            return "tried"
        if self.another:
            return "tried another way"
        return "related" if self.mentioned or any(h.tier == "related" for h in self.result.hits) else "not tried"

    @property
    def vague(self) -> bool:
        """The idea names no experiment (one plain word), so no record can be judged the same as it."""
        return not self.close and not self.another and bool(self.result.query.active) \
            and names_no_experiment(self.result.query)

    def to_dict(self) -> dict:
        d = self.result.to_dict()
        d["tried"] = bool(self.close)
        d["answer"] = self.answer
        d["vague"] = self.vague
        if self.idea is not None:
            d["idea_experiment"] = self.idea.to_dict()
        d["close"] = [judged_dict(h) for h in self.close]
        d["another_way"] = [judged_dict(h) for h in self.another]
        d["mentioned"] = [judged_dict(h) for h in self.mentioned]
        d["others"] = [judged_dict(h) for h in self.result.hits
                       if h not in self.close and h not in self.mentioned and h not in self.another]
        del d["hits"]
        return d


# Why a hit is mentioned or only related when no closeness rule names it (see tried).
VERDICT_WHY = {
    "": "close: it holds the idea and no closeness rule refuses it",
    "background": "free text that sets the scene (a log, a trace, system info): it shows a setting, it does not try it",
    "proposed-here": "under a heading or on a line that proposes (next steps, ideas, 'could try'): named as an idea",
    "untested": "an untested key difference, a to-do or dropped step, or the investigation's title or symptom: "
                "it names the idea",
    "weaker": "close, but much weaker than the best close hit",
    "dbglog-options": "it matches only through dbglog's own options (--timeout, --repeat), not the experiment's",
    "other-knobs": "it turned other knobs than the idea's",
    "same-knob": "the same knob, turned the same way",
    "knob-other-way": "the same knob, turned another way or set to another value",
    "model-other": "the model judged it the same knob, turned another way or set to another value",
    "model-related": "the model judged it related, not the same experiment",
    "model-unrelated": "the model judged it unrelated",
}

# Each closeness rule in plain words (what ``tried`` prints; the rule's name stays in --json's "rule").
RULE_WORDS = {
    "no-terms": "none of the idea's terms, as phrased, is in any record (see the notes): nothing to compare",
    "names-no-experiment": "the idea is one plain word: it names no experiment to be the same as (add what was done "
                           "or the setting)",
    "name-no-record-has": "the idea names a flag, variable or value that no record holds",
    "name-missing": "this record lacks a flag, variable or value the idea names",
    "too-little-in-record": "the record itself holds too little of the idea (the rest only in its investigation's "
                            "title)",
    "too-little-overall": "the record holds too little of the idea",
    "too-little-in-text": "the text itself holds only one of the idea's telling words (the rest only around it)",
    "way-only-around": "the record does not go the idea's way (without, disable, raise ...): only its investigation "
                       "says so",
    "acronym-missing": "the record lacks the acronym that names the idea's thing",
    "another-fix-same-topic": "same topic, but the record tried another fix",
    "version-of-another-name": "the version belongs to another name than the record's",
    "value-missing": "the record does not give the value the idea gives",
    "another-value": "the record set the same knob to another value",
    "other-way": "the record turned it the other way",
    "switch-variable-other-way": "the record set the switch variable the other way",
    "switch-on-another-knob": "the record's switch word is about another knob",
    "negated-name": "the record holds the idea's name only negated",
    "replaced-thing": "the record holds only what the idea replaces",
    "only-the-old-side": "the record moved away from what the idea proposes",
    "another-target": "the record moved it to something else",
    "only-proposed": "the record only proposes it",
}


def verdict_why(verdict: str) -> str:
    """One line in plain words on a verdict of ``tried`` (never an internal name)."""
    if verdict in VERDICT_WHY:
        return VERDICT_WHY[verdict]
    return RULE_WORDS.get(verdict, "")


def judged_dict(h: Hit) -> dict:
    """A hit's JSON with how ``tried`` judged it: ``verdict`` {close, rule, why} (rule "" = close),
    ``tier`` (same / other / related / unrelated) and ``differs`` (how, in plain words), the record's
    ``experiment`` and its full ``text``; for free text, that its outcome is read from its words."""
    d = h.to_dict()
    d["verdict"] = {"close": not h.verdict, "rule": h.verdict, "why": verdict_why(h.verdict)}
    d["tier"] = h.tier or "unrelated"
    d["differs"] = h.differs
    d["judged_by"] = h.judged_by
    if h.same_p is not None:
        d["same_probability"] = round(h.same_p, 3)
    if h.experiment is not None:
        d["experiment"] = h.experiment.to_dict()
    d["full_text"] = record_text(h, full=True)
    if h.kind == "section":
        d["outcome_is_guess"] = True
    return d


TRIED_KINDS = ("attempt", "section", "difference", "next", "investigation")
TRIED_POOL = 10  # hits tried judges for closeness (at least)
# The kinds tried reads beside attempts and sections: a few of each are enough to judge (and each
# candidate costs its share of the ranking: see bench/agent_bench.py).
TRIED_CANDIDATES = {"investigation": 10, "difference": 10, "next": 10}

# Attempts that looked rather than fixed: what they found is an answer, but not "the fix worked".
_BISECTION_DID = recache.compile(r"^\s*(?:dbglog\s+bisect|git\s+bisect)\b")
_BASELINE_TITLE = recache.compile(r"^\s*(?:baseline|reproduc\w*|repro)\b|\bbaseline (?:run|repro)\b", re.IGNORECASE)


def diagnostic_kind(h: Hit) -> str:
    """"bisection" or "baseline" for an attempt that diagnosed rather than tried a fix ("" else):
    a `dbglog bisect` / `git bisect` run, or a baseline / repro run. Its stored outcome says whether
    the diagnosis succeeded, not whether a fix did."""
    if h.kind != "attempt":
        return ""
    if _BISECTION_DID.search(h.fields.get("did") or "") or h.fields.get("title", "").lower().startswith(
            ("bisect:", "toggle bisection:")):
        return "bisection"
    return "baseline" if _BASELINE_TITLE.search(h.fields.get("title") or "") else ""


def _tested(h: Hit) -> bool:
    """A structured record that says the idea was tried: an attempt, a key difference that was ruled
    out or found to be the culprit, a next step checked off. An untested row, a to-do step or a
    dropped one, and the investigation's own title / symptom only name the idea."""
    if h.kind == "difference":
        return h.outcome in ("ruled-out", "culprit")
    if h.kind == "next":
        return h.outcome == "done"
    if h.kind == "attempt":
        return h.outcome != "untested"  # a plan recorded as an attempt ("Option B: ...") names it only
    return h.kind != "investigation"


SYMPTOM_REPORT_LINES = 4  # a symptom this long is a report of its own (an issue's body), see _symptom_report


def _symptom_report(conn, h: Hit, q: Query) -> Hit | None:
    """An investigation whose symptom is a report of its own (an issue's body: "Tried llama-server
    and got the same error", "When not using -mla, the model works") as a free-text hit under the
    heading "Symptom", judged like any section with the investigation's title as its context; None
    for a short symptom (a line or two name the bug, they tell no tries) or when the line that
    matches best tells no try (``_TRY_CUE``)."""
    body = h.fields.get("symptom") or ""
    if sum(1 for ln in body.split("\n") if ln.strip()) < SYMPTOM_REPORT_LINES:
        return None
    # its paragraphs that tell a try (the rest describe the bug, a setup, a log)
    body = "\n\n".join(para for para in re.split(r"\n[ \t]*\n", body) if _TRY_CUE.search(para))
    if not body:
        return None
    s = Hit(kind="section", investigation=h.investigation, investigation_title=h.investigation_title,
            status=h.status, tags=h.tags, fields={"heading": "Symptom", "body": body}, score=h.score,
            similarity=h.similarity)
    terms = q.active
    regs = _term_regexes(terms)
    _annotate(s, terms, regs, h.fields.get("title") or "")
    _best_line(s, regs)
    if not _TRY_CUE.search(s.line_text):
        return None  # the line that matches describes the bug ("GC deadlocks with Qwen"), it tells no try
    s.snippet_parts = make_snippet(s.line_text, regs)
    return s


def _place_symptom(conn, s: Hit) -> None:
    """The mirror file and line of a symptom read as a report (only for one that is shown: the
    mirror renders the symptom under a label, not a heading, so its line is looked up by text)."""
    _locate(conn, [s])
    root = _root(conn)
    if not s.line and root is not None:
        try:
            lines = (root / s.path).read_text(encoding="utf-8").split("\n")
        except (OSError, UnicodeDecodeError):
            lines = []
        s.line = next((i + 1 for i, ln in enumerate(lines) if ln.strip() == s.line_text), 0)


# How a reporter tells a try in an issue's body: "Tried llama-server and ...", "I also set X",
# "When not using -mla, it works", "with/without X it ...", "after removing X".
_TRY_CUE = Lazy(r"\b(?:tried|trying|(?:I|we)\s+(?:also\s+|then\s+|have\s+|had\s+)?(?:set|used|ran|run|changed|built|"
                r"rebuilt|removed|added|disabled|enabled|switched|upgraded|downgraded|installed|reinstalled|"
                r"replaced|reduced|increased|lowered|raised|tested|checked)|when\s+(?:not\s+)?using|without|"
                r"after\s+(?:setting|adding|removing|changing|disabling|enabling|upgrading|downgrading))\b", re.I)


def tried(conn, idea, *, filters: Filters | None = None, limit: int = 5, judge=True,
          seen: list | None = None) -> TriedResult:
    """Prior attempts of the idea (structured attempts, bisection results, key differences that were
    tested, next steps done, free sections, watched docs), judged in tiers and best first.

    Each hit gets a ``tier`` (``_tier``): the same experiment (``close``), the same knob turned
    another way or to another value (``another``), related, or unrelated. The word rules
    (``judge``, ``CLOSE_RULES``) judge an idea that names no knob; the experiment model
    (``experiment``) overrules them when both sides name a knob. Free-text hits carry the outcome
    their text states (``section_outcome``); a diagnostic attempt (a bisection, a baseline run)
    carries ``diagnostic``; a hit that only proposes or names the idea goes to ``mentioned``.
    ``judge``/``seen``: the learned judge's model and a list collecting what it read (``judge_same``).
    Order: sameness (exact knobs first), then outcome, then score."""
    from dbglog.kb import experiment

    # judged over more hits than are shown: the close one may rank just below a related one
    # (an idea says more than its record: "manually restart the container with nvidia-docker restart" against
    # "`nvidia-docker restart 42c1`" -- attempts are gathered on any of its words, not only when every word found
    # too few of anything, and ranked and judged with the rest)
    res = search(conn, idea, kinds=TRIED_KINDS, filters=filters, limit=max(2 * limit, TRIED_POOL),
                 candidates=TRIED_CANDIDATES, widen=frozenset({"attempt"}))
    idea_exp = experiment.extract(experiment.spelled_out(res.query.text, _knob_names(res.hits)))
    _add_knob_hits(conn, res, idea_exp, filters)
    weigh(conn, res.query, TRIED_KINDS)
    for i, h in enumerate(res.hits):
        res.hits[i] = _judge_hit(conn, h, res.query)
        _tier(res.hits[i], res.query, idea_exp)
    judge_same(res.hits, res.query, idea_exp, judge, seen)
    said = _content_words(res.query.text)
    for h in res.hits:
        h.verbatim = len(said) >= 2 and _content_words(h.title or "") == said
    close = [h for h in res.hits if h.tier == "same"]
    if close:  # the answer is the best few: much weaker word-close hits are only related
        top = max(h.score for h in close)
        for h in close:
            if h.same_p is None and not h.exact and h.score < CLOSE_RELATIVE * top and any(
                    c.exact or c.score >= CLOSE_RELATIVE * top for c in close):
                h.verdict, h.tier = "weaker", "related"
    res.hits = _restated(sorted(res.hits, key=_tried_order))
    close = [h for h in res.hits if h.tier == "same"][:limit]
    another = [h for h in res.hits if h.tier == "other"][:limit]
    mentioned = [h for h in res.hits if h.tier == "related" and h.verdict in MENTIONED][:limit]
    shown = set(map(id, close + another + mentioned))
    res.hits = [h for h in res.hits if id(h) in shown] + [h for h in res.hits if id(h) not in shown][:limit]
    return TriedResult(res, close, mentioned, another, idea_exp)


def _knob_names(hits: list[Hit]) -> list[str]:
    """The names of the knobs the hits' records turn, as written ("--shm-size", "NCCL_SHM_DISABLE"), their values
    off: what an idea may spell in words."""
    from dbglog.kb import experiment

    return [re.split(r"[= ]", k.name, maxsplit=1)[0] for h in hits for k in experiment.extract(record_text(h)).knobs
            if k.kind in ("flag", "env", "config")]


def _restated(hits: list[Hit]) -> list[Hit]:
    """A free-text line and an attempt of the same investigation among the hits that tell the same thing, one holding
    the other's words (an imported doc keeps the text its attempts were read from): one record, shown once, as the
    attempt, in the closer tier of the two (the line may hold the idea's words that the attempt's title lacks)."""
    def norm(text: str) -> str:
        return " ".join(_LIST_LEAD.sub("", re.sub(r"[`*_]", "", text)).lower().split())

    told = [(h, norm(h.fields.get("did") or "")) for h in hits if h.kind == "attempt"]
    out, moved = [], False
    for h in hits:
        line = norm(h.line_text) if h.kind == "section" and h.investigation else ""
        a = next((a for a, d in told if a.investigation == h.investigation and (
            len(d) >= 8 and d in line or len(line) >= 12 and line in d)), None) if line else None
        if a is None:
            out.append(h)
            continue
        if TIER_ORDER.get(h.tier, 3) < TIER_ORDER.get(a.tier, 3):
            a.tier, a.verdict, moved = h.tier, h.verdict, True
            a.differs = h.differs or "the doc's line it was read from holds the idea's words"
    return sorted(out, key=_tried_order) if moved else out


_LIST_LEAD = re.compile(r"^\s*(?:[-*+]|\d+[.)]|-{1,2}>|=>|[→•])\s+")


MENTIONED = frozenset({"proposed-here", "untested", "only-proposed"})
TIER_ORDER = {"same": 0, "other": 1, "related": 2, "unrelated": 3, "": 3}
# a result that tells (it worked, it failed) before one that is unsure; a diagnosis last
OUTCOME_ORDER = {"worked": 0, "failed": 0, "culprit": 0, "ruled-out": 0, "done": 0, "partial": 1, "inconclusive": 2,
                 "diagnostic": 3}


def _tried_order(h: Hit) -> tuple:
    # (among the same tier, a record titled in the idea's own words first -- "Added JSON result persistence" asked,
    # that very title recorded, was ranked below another try the judge liked more -- then the judge's surest attempt:
    # a record it did not score counts as at its threshold)
    p = h.same_p if h.same_p is not None else SAME_AT
    return (TIER_ORDER.get(h.tier, 3), not h.exact, not h.verbatim, -round(p, 3), -round(h.score, 3),
            OUTCOME_ORDER.get(h.outcome, 2))


def _content_words(text: str) -> frozenset:
    """The words that carry a title's meaning, lower case, in any order ("No offload + VAE tiling" and "no offload +
    vae tiling" are the same words): the search's stop words aside, but not a negation ("no offload" is a setting)."""
    return frozenset(w for w in re.findall(r"\w+", text.lower()) if w not in STOPWORDS or w in ("no", "not"))


def _judge_hit(conn, h: Hit, q: Query) -> Hit:
    """The word rules' verdict on one hit (``h.verdict``; an investigation whose symptom tells a try
    is judged as that report)."""
    if h.kind == "investigation" and (rep := _symptom_report(conn, h, q)) is not None:
        rep.outcome = section_outcome(rep)
        if judge(rep, q) in ("", *MENTION_RULES):  # (else the investigation names the idea)
            _place_symptom(conn, rep)
            h = rep
    if h.kind == "section":
        h.outcome = section_outcome(h)
    diag = diagnostic_kind(h)
    if diag:
        h.fields["diagnostic"] = diag
        h.fields["stored_outcome"] = h.outcome
        h.outcome = "diagnostic"
    verdict = judge(h, q)
    if verdict and verdict not in MENTION_RULES:
        h.verdict = verdict
    elif is_background(h):
        h.verdict = "background"
    else:
        h.verdict = verdict or ("proposed-here" if is_idea(h) else "" if _tested(h) else "untested")
    return h


# Word rules whose refusal means "the same thing, another way" (the experiment model decides when
# both sides name a knob); rules whose refusal means the record is about something else.
OTHER_WAY_RULES = frozenset({"another-value", "other-way", "switch-variable-other-way", "negated-name",
                             "only-the-old-side", "another-target", "replaced-thing"})
UNRELATED_RULES = frozenset({"no-terms", "name-no-record-has", "too-little-overall"})


def record_text(h: Hit, full: bool = False) -> str:
    """What a record says was done, where its experiment is read (``full``: all its text, for agents)."""
    f = h.fields
    if h.kind == "attempt":
        parts = ("title", "hypothesis", "did", "result", "conclusion") if full else ("title", "did")
        return "\n".join(str(f.get(k) or "") for k in parts if f.get(k))
    if h.kind == "difference":
        return "\n".join(str(f.get(k) or "") for k in ("factor", "working", "broken", "apply") if f.get(k))
    if h.kind == "section":
        return f.get("body", "") if full else (h._window or h.line_text)
    if h.kind == "investigation":
        return "\n".join(str(f.get(k) or "") for k in ("title", "symptom", "root_cause") if f.get(k)) if full \
            else f.get("title", "")
    return "\n".join(str(f.get(k) or "") for k in ("text", "detail") if f.get(k)) if full else f.get("text", "")


def _tier(h: Hit, q: Query, idea) -> None:
    """The hit's tier (same / other / related / unrelated) and ``differs``, from the word rules'
    verdict and the two experiments: a knob both name decides (turned the same way: the same
    experiment, whatever the words; another way or value: tried another way); an idea whose knobs
    the record never turns, while it turns others, is only related."""
    from dbglog.kb import experiment

    text = record_text(h)
    rec = h.experiment = experiment.extract(text)
    h.word_verdict = h.verdict
    cmp = experiment.compare(idea, rec, text)
    # (an attempt whose action turns the idea's knob did it, its way or another, though its hypothesis proposed it in
    # other words)
    done = h.kind == "attempt" and h.verdict == "only-proposed" and cmp.tier in (experiment.SAME, experiment.OTHER)
    if (h.verdict in MENTIONED and not done) or h.verdict == "background" or not _tested(h):
        h.tier = "related"
        return
    if done:
        h.verdict = ""
    h.knob_tier = cmp.tier
    if cmp.tier == experiment.SAME:
        if h.verdict:  # the words refused it: the knob overrules them, but not a proposal or a log
            # (an attempt's knob is read from its title and action: what its hypothesis proposed, the action did)
            mention = "only-proposed" if h.kind != "attempt" and _only_proposed(_Pair(h, q)) else \
                "background" if is_background(h) else "proposed-here" if is_idea(h) else ""
            if mention:
                h.verdict, h.tier = mention, "related"
                return
            lacks = _lacking(h, q, idea)
            if lacks:  # the same setting on something the idea names and the record is not about
                h.tier, h.differs = "other", f"{cmp.how}, but the record is not about {', '.join(lacks)}"
                return
        h.tier, h.exact, h.differs, h.verdict = "same", True, cmp.how, ""
        return
    if cmp.tier == experiment.OTHER:
        h.tier, h.differs = "other", cmp.how
        h.verdict = h.verdict or "knob-other-way"
        return
    stated = [k for k in idea.knobs if k.state and k.kind != "feature"]  # (a name, not words: a sure knob)
    if not h.verdict and stated and any(k.state for k in rec.knobs) and not {k.id for k in stated} & \
            {k.id for k in rec.knobs}:
        h.verdict, h.tier = "other-knobs", "related"
        h.differs = "it turned " + "; ".join(k.words() for k in rec.knobs if k.state) + ", not " + \
            "; ".join(k.words() for k in stated)
        return
    if not h.verdict and stated and experiment.strip_dbglog(text) != text and not rec.knobs:
        h.verdict, h.tier = "dbglog-options", "related"
        return
    if not h.verdict:
        h.tier = "same"
    elif h.verdict in OTHER_WAY_RULES:
        h.tier, h.differs = "other", RULE_WORDS.get(h.verdict, "")
    else:
        h.tier = "unrelated" if h.verdict in UNRELATED_RULES else "related"


# --- the learned judge: one scorer over the word rules and the measures they read ----------------------
#
# The word rules above each refuse on one reason; on paraphrases they had never seen ("switched the model
# from A to B" against "I changed the model from A to B") one refusal ("the record holds too little of
# the idea") sank the right record below an unrelated one. The judge reads every rule's refusal as a
# feature beside the measures the rules threshold (the weighted share of the idea the record holds, the
# share of its fix, similarity, coverage, the knob comparison) and the hit's score against the best
# attempt's, in one logistic model (``same.json``) trained by bench/tried_learn.py on real write-ups
# imported and asked about in their labellers' words, grouped by document. It decides "same experiment?"
# for attempts the structure left open: a knob both name turned the same way (exact), or another way, a
# proposal, a log line and an untested record are still decided by structure.

SAME_MODEL = "same.json"
SAME_AT = 0.6  # the shipped model's threshold (same.json says it; this is the order key of unscored hits)


@lru_cache(maxsize=None)
def same_model(path: str | None = None):
    """The learned judge (``util.logit.Model``), or None when its file is absent (the rules alone)."""
    from pathlib import Path

    from dbglog.util.logit import Model

    p = Path(path) if path else Path(__file__).with_name(SAME_MODEL)
    if not p.exists():
        return None
    return Model.of(json.loads(p.read_text(encoding="utf-8")))


def same_features(h: Hit, q: Query, idea, top: float) -> dict[str, float]:
    """What the judge reads of one (attempt, idea) pair: each word rule that refuses it, the measures the
    rules threshold, how the knobs compare, and the hit's score against the best attempt's (``top``)."""
    p = _Pair(h, q)
    f = {"rule:" + r.name: 1.0 for r in CLOSE_RULES if r.refuses(p)}
    f |= {"share_direct": p.share(p.direct), "share_found": p.share(p.found), "fix_held": p.fix_held(),
          "sim": h.similarity / 100, "cov": h.coverage, "nterms": min(len(q.active), 12) / 12,
          "knob:" + (h.knob_tier or "none"): 1.0, "rel_score": h.score / top if top > 0 else 0.0}
    if h.experiment is not None and h.experiment.knobs:
        f["rec_knobs"] = 1.0
    if idea is not None and idea.knobs:
        f["idea_knobs"] = 1.0
    if "rule:name-missing" in f and any(_specific(t) and i not in p.found and re.search(r"\d", t.raw)
                                          for i, t in enumerate(p.active)):
        f["name-missing:value"] = 1.0  # the name the record lacks is a number ("at 1GB", "535"): another value
    return f


# The refusals the judge may overrule: "not enough of the idea's words" (a paraphrase's). A refusal that reads a
# difference (another value, the other way, another fix of the same topic, another target) stands, and so does a
# setting the idea names that no record holds, or a name this one lacks when the idea turns a knob or the name is
# a number.
JUDGED_RULES = frozenset({"rule:name-missing", "rule:too-little-in-record", "rule:too-little-overall",
                          "rule:acronym-missing"})


def _judgeable(h: Hit) -> bool:
    """An attempt whose sameness the structure left open (see the block comment above)."""
    return h.kind == "attempt" and h.tier in ("same", "related", "unrelated") and not h.exact and \
        h.verdict not in MENTIONED and h.verdict not in ("background", "other-knobs", "dbglog-options") and _tested(h)


def _overrulable(f: dict[str, float]) -> bool:
    refused = {k for k in f if k.startswith("rule:")}
    if not refused <= JUDGED_RULES:
        return False
    return "rule:name-missing" not in refused or not (f.get("name-missing:value") or f.get("idea_knobs"))


def judge_same(hits: list[Hit], q: Query, idea, model=True, seen: list | None = None) -> None:
    """The learned judge on the judgeable attempts among ``hits``: one the word rules refused only for holding
    too little of the idea's words is the same experiment at or above its threshold; every scored attempt is
    ordered by its probability. (It never refuses what the rules call the same: on the own-words sets that
    lost right answers to short questions.) ``model``: True the shipped one, None/False the rules alone;
    ``seen`` collects (hit, features) for training (bench/tried_learn.py), with or without a model."""
    m = same_model() if model is True else model or None
    if (m is None and seen is None) or not q.terms or not q.active or all(t.stop for t in q.active):
        return  # ("the", "a": an idea of stop words alone names no experiment to be the same as)
    top = max((h.score for h in hits if h.kind == "attempt"), default=0.0)
    for h in hits:
        if not _judgeable(h):
            continue
        f = same_features(h, q, idea, top)
        if seen is not None:
            seen.append((h, f))
        if m is None:
            continue
        h.same_p = m.probability(f)
        if h.tier != "same" and h.same_p >= m.threshold and _overrulable(f):
            h.tier, h.verdict, h.judged_by = "same", "", "learned"
            h.differs = (f"a guess of the learned judge (probability {h.same_p:.2f}): the words differ, "
                         f"the experiment reads the same")


LACKS_RULES = frozenset({"name-missing", "version-of-another-name", "acronym-missing"})


def _lacking(h: Hit, q: Query, idea) -> list[str]:
    """The idea's telling names (an identifier, a version, a GPU) that neither the record nor its
    investigation holds, its knobs' own names and values aside: "on the MI300X nodes"."""
    own = " ".join(f"{k.name} {k.value}" for k in idea.knobs).lower()
    lacks = [t.raw for i, t in enumerate(q.active)
             if i not in h._matched and _specific(t) and t.raw.lower().strip(":;,.") not in own]  # ("shm_size:")
    scope = _SCOPE.search(q.text)  # "... for the cleanup hang": the problem it is meant for
    if scope:
        words = set(scope.group(1).lower().split())
        said = [i for i, t in enumerate(q.active) if t.raw.lower() in words]
        if said and not any(i in h._matched for i in said):
            lacks.append(scope.group(1).strip())
    return lacks


_SCOPE = recache.compile(r"\bfor (?:the|this|our|that) ([a-z][\w-]*(?:\s+[a-z][\w-]*){0,3})\s*$", re.I)


KNOB_HITS = 10  # attempts that name the idea's knob another way, added to those judged


def _add_knob_hits(conn, res: Result, idea, filters) -> None:
    """Attempts that name the idea's knobs by another name (``NCCL_SHM_DISABLE`` for "no shared-memory
    transport", ``--max-num-seqs`` for "fewer concurrent sequences"): one OR match of the vocabulary's
    names of each knob the idea turns (no typo correction, no rerank: cheap), annotated against the
    idea and added to the hits judged."""
    from dbglog.kb import experiment

    voc = experiment.vocab()
    names = []
    for k in idea.knobs:  # (its other names: TORCH_COMPILE_DISABLE for TORCHDYNAMO_DISABLE too)
        if k.state and k.id in voc.features:
            names += [n.lstrip("-").rstrip("()") for n, (fid, _m) in voc.names.items() if fid == k.id][:4]
            if res.mode == "and" and getattr(k, "name", ""):
                names.append(k.name)  # the idea's own words for the knob ("kernel replay"), searched alone
    # A name the idea itself says was searched already, unless every word had to match ("and"): then a record that
    # names the knob the same way but lacks another word of the idea ("kernel replay" for "kernel replay mode")
    # was not looked at.
    said = res.query.text.lower().replace("-", "_")
    names = [n for n in dict.fromkeys(names) if res.mode == "and" or n.lower().replace("-", "_") not in said]
    if not names:
        return
    q = parse_query(" ".join(names[:8]))
    terms = [t for t in q.terms if _has(conn, "attempts_fts", t.fts)]
    for t in terms:
        t.kind = "word"
    rows = _candidates(conn, "attempt", terms, "or", filters or Filters(), KNOB_HITS) if terms else []
    seen = {(h.kind, h.investigation, h.number) for h in res.hits}
    extra = [h for h in (_make_hit("attempt", r) for r in rows) if ("attempt", h.investigation, h.number) not in seen]
    if not extra:
        return
    floor = min((h.score for h in res.hits), default=1.0)  # below the idea's own hits, in their order
    regs = _term_regexes(res.query.active)
    ctx = _inv_context(conn, {h.investigation for h in extra})
    found: dict[str, set[int]] = {}
    for i, h in enumerate(extra):
        c = ctx.get(h.investigation, "")
        _annotate(h, res.query.active, regs, c, _context_terms(found, h.investigation, regs, c))
        h.score = 0.99 * floor * (1 - i / (2 * len(extra)))
        h.snippet_parts = make_snippet(str(h.fields.get(h.snippet_field) or ""), regs)
        res.hits.append(h)


def similar_attempts(conn, inv_id: str, number: int, *, title: str = "", hypothesis: str = "", did: str = "",
                     threshold: float = 85.0, limit: int = 3) -> list[dict]:
    """Earlier failed/inconclusive attempts whose hypothesis or action reads like this one.

    Cheap: FTS OR over the distinctive words of each field (top 30), then rapidfuzz on the field
    pairs. Used by ``attempt add`` to warn before the same failed fix is tried again.
    """
    filters = Filters(outcomes=("failed", "inconclusive"), exclude=(inv_id, number))
    found: dict[tuple[str, int], dict] = {}
    fields = [("did", did), ("hypothesis", hypothesis), ("title", title)]
    fields = [(n, v.strip()) for n, v in fields if v and len(v.strip()) >= 8]
    if not fields:
        return []
    fuzz = proc = None  # rapidfuzz is imported only when there is a candidate to compare
    for name, value in fields:
        words = []
        for w in _WORD.findall(value.lower()):  # single words: a command is often one shell token
            if w not in STOPWORDS and w not in words and not w.isdigit():
                words.append(w)
        terms = [Term(raw=w, parts=[w]) for w in sorted(words, key=len, reverse=True)[:16]]
        if not terms:
            continue
        rows = _candidates(conn, "attempt", terms, "or", filters, 30)
        if not rows:
            continue
        if fuzz is None:
            from rapidfuzz import fuzz, utils

            proc = utils.default_process
        pv = proc(value)
        for r in rows:
            other = r[name] or ""
            if not other:
                continue
            po = proc(other)
            score = fuzz.token_sort_ratio(pv, po)
            score = max(score, fuzz.token_set_ratio(pv, po) * (0.95 if min(len(pv), len(po)) > 20 else 0.85))
            if score >= threshold:
                key = (r["inv_id"], r["num"])
                prev = found.get(key)
                if prev is None or prev["score"] < score:
                    found[key] = {"investigation": r["inv_id"], "attempt": r["num"],
                                  "title": r["title"] or _first_line(r["did"]), "outcome": r["outcome"],
                                  "conclusion": r["conclusion"], "field": name, "score": round(score, 1)}
    return sorted(found.values(), key=lambda d: -d["score"])[:limit]
