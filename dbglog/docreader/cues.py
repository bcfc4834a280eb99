"""General cues of a unit: tense, person, mood, outcome words, place in the document, thread role.

The cue words are data (``cues/<lang>.toml``, one table per language); this module only finds them.
A cue never names the wording of one document: "I tried", "we set" (first person, past), "you could",
"have you tried" (second person, modal, question), "Try X" (imperative), "next I will" (future), an
outcome word with its negation, the role words of the heading path, the checkbox, the table column,
the comment after a command, the post's author against the thread's asker. `scorer.py` weighs them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from dbglog.docreader.columns import (AFTER_COL, ATTEMPT_COL, BEFORE_COL, BEST_RESULT, EXPECTED, KNOB_COL, NUMBER_COL, RESULT_COL,
                                      RUN_COL, WEAK_RESULT, WHAT_COL)
from dbglog.docreader.units import ERROR_LINE, Doc, Unit
from dbglog.docreader.vocab import ATTEMPT_LABELS, HTML_TAGS, LABEL, VERDICT_MARKS, attempt_head, label_of
from dbglog.util import datacache, recache

_DID_WORDS = {"edit", "edits", "edited", "workaround", "applied", "action", "actions", "what you did", "what we did", "what i did", "what was done", "what we tried",
              "what i tried", "did", "tried", "change", "changes", "command", "commands", "fix", "attempted fix",
              "patch", "solution", "try", "experiment", "approach", "steps", "procedure", "check", "checked",
              "actions taken", "action taken"}


_FLABEL = recache.compile(r"^\W{0,3}(?:\*\*|__)?(?P<l>[^:：*_\n]{1,24}?)(?:（[^）]*）|\([^)]*\))?\s*(?:(?:\*\*|__)\s*)?[:：]"
                     r"(?:\*\*|__)?\s*(?P<rest>.*)$")


def _foreign_label(text: str) -> tuple[str, str] | None:
    """ "解法：...", "**Lösung:** ...": a field label of another language's cue table."""
    m = _FLABEL.match(text.strip())
    if not m:
        return None
    name = m.group("l").strip().lower()
    for lang in LANGS[1:]:
        t = table(lang)
        for key, words in t.raw.get("labels", {}).items():
            if name in (w.lower() for w in words):
                return {"reasoning": "conclusion"}.get(key, key), m.group("rest")
    return None


def _label_word(text: str) -> str:
    m = re.match(r"^\W*([^:*_]{1,40}?)\s*(?:\*\*|__)?\s*:", text.strip())
    return m.group(1).strip().lower() if m else ""


# A labelled field ("**Action:** ...", "Result: ...") says what its text is, in any spelling (vocab.ATTEMPT_LABELS).
_LABELLED = {"did": "labelled as what was done", "result": "labelled as a result", "outcome": "labelled as a result",
             "expected": "labelled as expected", "hypothesis": "labelled as reasoning", "conclusion": "labelled as reasoning"}

_DIR = Path(__file__).with_name("cues")
LANGS = ("en", "zh", "ja", "ko", "de", "ru", "fr", "es", "pl", "pt")  # English first: the others are read beside it
# The Latin-script languages told from English (and from each other) by their tables' [detect] words and letters, in the
# order a tie goes: German first, then Polish, then Portuguese; French and Spanish only when they do not tie.
_LATIN = ("de", "pl", "fr", "es", "pt")
_SUBSTRING_LANGS = ("zh", "ja", "ko")  # words without spaces (or endings glued on): matched as substrings


@dataclass
class Table:
    """One language's cue words, compiled."""

    lang: str
    raw: dict
    rx: dict[str, re.Pattern] = field(default_factory=dict)
    #: per key, its one-word entries (lower case) and a pattern of the rest: ``has`` looks the text's words up in a
    #: set instead of running a long alternation at every position (the reader asks ~40,000 times per 10,000 lines)
    fast: dict[str, tuple[frozenset, re.Pattern | None, dict | None]] = field(default_factory=dict)

    def has(self, key: str, text: str) -> bool:
        quick = self.fast.get(key)
        if quick is not None:
            words, rest, firsts = quick
            toks = _tokens(text)
            if not words.isdisjoint(toks):
                return True
            if rest is None:
                return False
            # an entry of several words can only be there when all of its words are; a contraction's tail ("'ll")
            # only where an apostrophe is
            near = firsts is None or any(ws <= toks for t in toks & firsts.keys() for ws in firsts[t]) or (
                "'" in firsts and ("'" in text or "’" in text))
            return bool(near and rest.search(text))
        rx = self.rx.get(key)
        return bool(rx and rx.search(text))

    def find(self, key: str, text: str) -> re.Match | None:
        rx = self.rx.get(key)
        return rx.search(text) if rx else None


_TOKEN = recache.compile(r"[\w'-]+")  # a bounded entry stands between characters outside this class (``_words_rx``)


@lru_cache(maxsize=64)  # (the cues of one unit ask about the same text many times)
def _tokens(text: str) -> frozenset:
    return frozenset(w.lower() for w in _TOKEN.findall(text))


def _split_words(words: list[str]) -> tuple[frozenset, re.Pattern | None, dict | None]:
    """A bounded entry that is one token (and no contraction's tail) is found by set lookup; the rest by pattern,
    asked only when the text holds every word of one of them: by first word, the word sets of the entries (None:
    some entry opens with no word, so always)."""
    one = {w for w in words if _TOKEN.fullmatch(w) and w[0] not in "'’"}
    rest = [w for w in words if w not in one]
    firsts: dict | None = {}
    for w in rest:
        if w[0] in "'’":
            firsts["'"] = ()  # (a tail is stood for by "'", which no token is: looked for where an apostrophe is)
            continue
        toks = [t.lower() for t in _TOKEN.findall(w)]
        if not _TOKEN.match(w) or not toks:
            firsts = None
            break
        firsts[toks[0]] = firsts.get(toks[0], ()) + (frozenset(toks),)
    return frozenset(w.lower() for w in one), (_words_rx(rest, True) if rest else None), firsts


def _words_rx(words: list[str], bounded: bool) -> re.Pattern:
    # (recache: ~300 table patterns, 0.1-0.2 s of each reading command's start when compiled anew)
    # (longest first, then by text: a set's order changes with each process's hash seed, and so would the pattern)
    alts = "|".join(re.escape(w) for w in sorted(set(words), key=lambda w: (-len(w), w)))
    if not bounded:
        return recache.compile(f"(?:{alts})", re.I)
    # A contraction's tail ("'ll", "'ve") is bound to the word before it: "I'll", "we've".
    tails = "|".join(re.escape(w) for w in sorted({w for w in words if w[:1] in "'’"}, key=lambda w: (-len(w), w)))
    tail = rf"|(?<=\w)(?:{tails})(?![\w'-])" if tails else ""
    return recache.compile(rf"(?<![\w'-])(?:{alts})(?![\w'-]){tail}", re.I)


@lru_cache(maxsize=None)
def table(lang: str) -> Table:
    raw = datacache.load(_DIR / f"{lang}.toml")
    t = Table(lang, raw)
    bounded = lang not in _SUBSTRING_LANGS
    for section, entries in raw.items():
        if section == "detect":
            continue  # (read by ``_detect``: letters and words that tell the language, not cues)
        for key, words in entries.items():
            if section == "forms":  # verb forms by shape: patterns, not words
                t.rx[f"forms.{key}"] = recache.compile("|".join(f"(?:{w})" for w in words), re.I)
            elif isinstance(words, list) and words:
                t.rx[f"{section}.{key}"] = _words_rx(words, bounded)
                if bounded:
                    t.fast[f"{section}.{key}"] = _split_words(words)
    if lang == "en":
        t.rx["mood.imperative_lead"] = recache.compile(
            r"^(?:" + "|".join(re.escape(w) for w in sorted(raw["mood"]["imperative"], key=len, reverse=True))
            + r")(?![\w'-])", re.I)
        t.rx["mood.question_lead"] = recache.compile(
            r"^(?:" + "|".join(re.escape(w) for w in sorted(raw["mood"]["question_lead"], key=len, reverse=True))
            + r")(?![\w'-])", re.I)
        t.rx["mood.answer_lead"] = recache.compile(
            r"^(?:" + "|".join(re.escape(w) for w in sorted(raw["mood"]["answer_lead"], key=len, reverse=True))
            + r")(?![\w'-])", re.I)
        for key in ("mood.imperative_lead", "mood.question_lead", "mood.answer_lead"):
            t.fast.pop(key, None)  # (anchored at the start: the pattern, not a set of words)
    return t


_ARROW = recache.compile(r"\s(?:->|=>|→|⇒)\s?")
_DASH = recache.compile(r"\s(?:—|–|--)\s")
_CJK = recache.compile(r"[\u4e00-\u9fff]")
_KANA = recache.compile(r"[\u3040-\u30ff]")
_HANGUL = recache.compile(r"[\uac00-\ud7a3]")
_CYRILLIC = recache.compile(r"[\u0400-\u04ff]")
_EN = recache.compile(r"(?<!\w)(?:the|was|is|for|this|that|and|with|i|it|to|of|my|we|but|not)(?!\w)", re.I)


@lru_cache(maxsize=None)
def _detect(lang: str) -> re.Pattern:
    """A Latin-script language's own letters and common words (its table's [detect]), as one pattern: each match
    counts once towards telling the language (``_common_words``)."""
    d = table(lang).raw["detect"]
    letters = "".join(re.escape(c) for c in d.get("letters", []))
    words = "|".join(re.escape(w) for w in sorted(d["common"], key=lambda w: (-len(w), w)))
    return recache.compile((f"[{letters}]|" if letters else "") + rf"(?<!\w)(?:{words})(?!\w)", re.I)


# Names and addresses in any language's prose (a URL, `code`, NCCL_P2P_DISABLE=1, paddle.utils.run_check()): the
# share of a script is measured on the rest, so "问题解决：export NCCL_P2P_DISABLE=1 <url>" is Chinese.
_WIDE = recache.compile(r"([\u3000-\u30ff\u4e00-\u9fff\uac00-\ud7a3\uff00-\uffef]+)")
_CODE_SPAN = recache.compile(r"`[^`\n]*`")
_TECHNICAL = recache.compile(r"[_=/\\.(]")


def _prose(text: str) -> str:
    """The text without its code spans, links and names (each word scanned once: no pattern backtracks)."""
    spaced = _WIDE.sub(r" \1 ", _CODE_SPAN.sub(" ", text))
    return " ".join(w for w in spaced.split() if not _TECHNICAL.search(w))


@lru_cache(maxsize=8192)
def language(text: str) -> str:
    prose = _prose(text)
    kana, han = len(_KANA.findall(text)), len(_CJK.findall(text))
    width = max(1, len(re.sub(r"\s", "", prose if re.search(r"[^\W\d_]", prose) else text)))
    if kana >= 2 and (kana + han) * 5 >= width:
        return "ja"  # kana are Japanese only; Chinese text has none
    if han * 5 >= width:
        return "zh"
    if len(_HANGUL.findall(text)) * 5 >= width:
        return "ko"
    if len(_CYRILLIC.findall(text)) * 5 >= width:
        return "ru"
    words = max(1, len(text.split()))
    n = {lang: _common_words(_detect(lang), text, words) for lang in _LATIN}
    if n["de"] >= 2 and n["de"] >= max(n.values()):
        return "de"
    if n["pl"] >= 2 and n["pl"] > max(n["fr"], n["es"], n["pt"]):
        return "pl"
    if n["pt"] >= 2 and n["pt"] > max(n["fr"], n["es"]):
        return "pt"
    if max(n["fr"], n["es"]) >= 2 and n["fr"] != n["es"]:
        return "fr" if n["fr"] > n["es"] else "es"
    return "en"


def _common_words(rx: re.Pattern, text: str, words: int) -> int:
    """How many of a language's common words a text holds, or 0 unless two or more different ones make up at least
    4 % of its words (an English page about GPUs says "die" now and then; a German one says "die", "ist", "und")."""
    found = [m.lower() for m in rx.findall(text)]
    return len(found) if len(set(found)) >= 2 and len(found) * 25 >= words else 0


# Markdown decoration and list markers the words of a unit are read without.
# (and an empty HTML anchor a table of contents links to: "Discussion <a id="discussion"></a>")
# (the spaces before the anchor are taken from the first one only: a line of many spaces stays linear)
# (a single "_" or "*" is emphasis only as a pair, "_this_": an identifier's own underscore, "_ZN3c10...", stays)
_EMPH = recache.compile(r"(?<!\w)([*_])(?=[^\s*_])((?:(?!\1)[^\n]){0,200}?[^\s*_])\1(?!\w)")
_DECOR = recache.compile(r"(?:\*\*|__|~~|"
                    r"(?<!\s)\s*<a\s+(?:id|name)=[\"'][^\"'<>]{0,80}[\"']\s*/?>(?:\s*</a>)?)")
_LEAD = recache.compile(r"^\s*(?:[-*+•](?=\s)|>|\d{1,3}[.)](?=\s|$)|\[[ xX]\]|（\d{1,2}）|\d{1,2}、|[①-⑳]|"
                        r"(?!-{1,2}\w)[^\w\s`'\"(\[<@]{1,3})\s*")
_MENTION = recache.compile(r"^(?:`?@[\w.-]+`?[\s,:]*)+")
_KNOB = recache.compile(r"`[^`]{1,120}`|#\d{3,}\b|\b(?:nightly|pre-?release|main branch|latest (?:version|release|driver|wheel))\b|https?://\S+/(?:pull|commit|issues)/\w+|(?<!\w)--?[a-zA-Z][\w-]{1,40}|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\b\w+=\S+|"
                   r"\bv?\d+\.\d+(?:\.\d+)?\b|(?<![\w./-])[\w./-]+\.(?:py|cu|cpp|h|yaml|json|toml|sh|so)\b")
_PLACEHOLDER = recache.compile(r"<(?!/?" + HTML_TAGS + r"\b)[A-Za-z][^<>]{0,60}>|\{\{[^}]*\}\}|\bYYYY-MM-DD\b|^\s*\.\.\.\s*$|^\s*\d+\.\s*\.\.\.\s*$")
_ED = recache.compile(r"\b[a-z]{3,}(?:ed|t)\b")
_SUBJECT = recache.compile(r"\b(?:i|we|they|he|she|it|someone|somebody|(?-i:(?!(?:To|If|When|Then|And|But|So|Or|Please|Just|Also|After|Before|Once|With|Without|Maybe)\b)[A-Z][\w.-]+))(?:['’](?:ve|d))?\s+(?:(?:have|has|had|'ve|then|also|"
                      r"just|first|finally|now|already|again|even|both|all|later)\s+){0,2}(?P<v>[a-z]{3,}(?:ed|t)|[a-z]+)\b",
                      re.I)


_CODE = recache.compile(r"`[^`]*`")
_STAMP = recache.compile(r"^\W{0,4}(?:\d{4}-\d{2}-\d{2}(?:[ T]\d{1,2}:\d{2})?|\d{1,2}:\d{2}(?::\d{2})?)\W{0,4}\s+")


@lru_cache(maxsize=16384)
def plain(text: str) -> str:
    """The words of a unit: decoration (not inside code), list markers and a leading @mention off."""
    parts = _CODE.split(text or "")
    codes = _CODE.findall(text or "")
    s = "".join(_EMPH.sub(r"\2", _DECOR.sub("", p)) + (codes[k] if k < len(codes) else "") for k, p in enumerate(parts))
    s = _LEAD.sub("", s, count=1)
    s = _STAMP.sub("", s, count=1)  # "**09:50** tried loading ...": the time, then the words
    s = _MENTION.sub("", s)
    return s.strip()


def _past_words(t: Table) -> set[str]:
    return {w.lower() for w in t.raw["tense"]["irregular_past"]}


def _is_past(word: str, t: Table) -> bool:
    w = word.lower()
    if w in _past_set(t.lang):
        return True
    if w in _not_past(t.lang):
        return False
    return len(w) > 4 and w.endswith("ed")


@lru_cache(maxsize=None)
def _past_set(lang: str) -> frozenset:
    return frozenset(_past_words(table(lang))) if lang == "en" else frozenset()


@lru_cache(maxsize=None)
def _not_past(lang: str) -> frozenset:
    return frozenset(w.lower() for w in table("en").raw["tense"]["not_past"])


_REACTION = recache.compile(r"^\W*(?:(?:that'?s|that is)\s+)?(?:good|glad|great|nice|happy|awesome)\s+(?:to\s+(?:hear|see|know)|"
                           r"(?:that\s+)?(?:it|this)\s+(?:works?|helped|worked))\b", re.I)
# A question, from the end of the sentence before it to its question mark ("I removed it, is this OK?" keeps "I removed
# it,"; the clause before a comma is told, the rest asked).
# (tried only where a clause starts: from every position, a long clause with no question mark is read again and again)
_QUESTION = recache.compile(r"(?:^|(?<=[.!?。！？,，;；\n]))[^.!?。！？,，;；\n]*[?？]")


_ONE_SPAN = recache.compile(r"`([^`\n]+)`[\s.,;:!]*")


# a test runner's summary: "16/16 tests passed", "3 passed, 1 failed", "1/1 PASS"
_RUNNER_SUMMARY = recache.compile(r"\b\d+(?:/\d+)?\s+(?:tests?\s+)?(?:passed|failed|PASS|FAIL)\b")


def _unquoted(text: str) -> str:
    """ "`16/16 tests passed`": a test runner's summary quoted whole as code is read as words (a name in a code span,
    "`--no-fail`", stays a name; so does a pasted error line, which tells the symptom, not how a try went)."""
    span = _ONE_SPAN.fullmatch((text or "").strip())
    return span.group(1) if span and _RUNNER_SUMMARY.search(span.group(1)) else text


@lru_cache(maxsize=8192)
def outcome_of(text: str, lang: str) -> str | None:
    """worked / failed / partial / untested, or None when no word says (the reader's outcome cue)."""
    text = _unquoted(text)
    mark = _VERDICT_MARK.search(text or "")
    if mark and len(plain(text).split()) <= 3:
        return _MARKS[mark.group(0)]  # "❌" alone in a Status cell: the mark is the verdict
    s = _WHETHER.sub("", plain(text))  # "check whether it reproduces on H100": what is yet to be seen
    s = _QUESTION.sub("", s).strip()  # "Is this OK?", "Did that fix it?": a question asks how it went, it does not say
    if not s or _REACTION.match(s):
        return None  # ("Good to hear.", "Glad it works now!": a reply's reaction to someone else's news)
    if lang == "en":
        return _en_said(s, mark)
    lead = _OKNOK.match(s.lstrip(" -*>#:"))
    if lead:
        return _OKNOK_MAP[lead.group("w")]  # ("NG: nvcc が見つからない", "OK (2 時間)": a status in capitals leads the comment)
    t = table(lang)
    purpose = t.rx.get("outcome.purpose")
    if purpose is not None:
        s = _aim_dropped(s, purpose)
    pos = len(t.rx["outcome.worked"].findall(s))
    neg = len(t.rx["outcome.failed"].findall(s))
    still = t.has("outcome.still", s)
    negated = t.rx.get("outcome.negation")
    used = s  # (a negation read with its success word negates no failure after it: "Не решил, ошибка та же")
    if negated and pos:
        # "nicht funktioniert" / "没有解决": a success word right after a negation is a failure
        # (in Chinese, Japanese and Korean one or two characters may stand between: "没有解决", "并没有解决")
        gap = r"[^\s，。,.;；!！?？]{0,2}?" if lang in _SUBSTRING_LANGS else r"\W{0,3}(?:\w+\W+){0,2}?"
        near = recache.compile(rf"(?:{negated.pattern}){gap}(?:{t.rx['outcome.worked'].pattern})", re.I)
        flips = len(near.findall(s))
        used = near.sub(" ", s)
        if (late := t.rx.get("outcome.negation_after")) is not None and not flips:
            # German puts the negation after the verb: "es funktioniert nicht", "klappt leider nicht" (one word
            # between at most, and no comma: "läuft jetzt, nicht mehr abgestürzt" is a success); Japanese and Korean
            # glue it on, a verb's stem or a particle between: "解決しなかった", "해결되지 않음", "해결이 안 됐다"
            between = r"[^\s，。,.;；!！?？]{0,3}?\s?" if lang in _SUBSTRING_LANGS else r"\s+(?:\w+\s+)?"
            post = recache.compile(rf"(?:{t.rx['outcome.worked'].pattern}){between}(?:{late.pattern})", re.I)
            flips = min(pos, len(post.findall(s)))
            used = post.sub(" ", s)
        pos, neg = pos - flips, neg + flips
    if negated and neg:
        absent = _absent_failures(used, t, negated)
        pos, neg = pos + absent, neg - absent
    if pos and neg and lang in _SUBSTRING_LANGS:
        # "해결 실패", "解决失败": the success a try was after, then the word that it failed (one verdict, not two)
        after = recache.compile(rf"(?:{t.rx['outcome.worked'].pattern})[\s]?(?:{t.rx['outcome.failed'].pattern})", re.I)
        pos -= len(after.findall(s))
    if still:
        neg += 1
    if t.has("outcome.partial", s) and (pos or neg) or t.has("outcome.contrast", s) and pos and neg:
        return "partial"  # ("重装了驱动但是无效": a "but" before a failure alone is no catch)
    if pos > 0 and neg == 0:
        return "worked"
    if neg > 0 and pos == 0:
        return "failed"
    if pos and neg:
        return "partial" if not still else "failed"
    return "failed" if t.has("outcome.already", s) else None


def outcome_in(text: str, doc_lang: str) -> str | None:
    """``outcome_of`` in the text's own language, or, for a text of a word or two that shows none ("funktioniert",
    "ça marche": read as English), in the document's when English finds no verdict."""
    lang = language(text)
    said = outcome_of(text, lang)
    if said is None and lang == "en" and doc_lang != "en" and len(plain(text).split()) <= 4:
        said = outcome_of(text, doc_lang)
    return said


def _en_said(s: str, mark: re.Match | None) -> str | None:
    said = _en_outcome(s)
    if said is None and table("en").has("outcome.already", s):
        return "failed"  # "I'm already using packing": it was in place, and the failure with it
    return said if said is not None or not mark else _MARKS[mark.group(0)]


def _absent_failures(s: str, t: Table, negated: re.Pattern) -> int:
    """How many failure words the sentence negates: "没有报错" (no error), "keinen Absturz mehr", "エラーが出ない",
    "에러가 나지 않았다" say the failure is gone, as English "no more errors" does. Chinese and the languages of
    spaces put the negation before the word; Japanese and Korean after it, a particle and a verb between."""
    failed = t.rx["outcome.failed"].pattern
    masked = t.rx.get("outcome.not_negation")  # "不同的错误" (a different error), "不断报错" (errors on and on)
    text = masked.sub(" ", s) if masked is not None else s
    if t.lang in ("ja", "ko"):
        after = t.rx.get("outcome.absence", negated).pattern  # (Japanese "出なくなった": the negation's own forms)
        # (a particle and a verb between, no more: "エラーが出て動かない" is an error, then a failure; each failure word
        # counted, so "エラーは発生しなかった" negates both the error and its occurring)
        near = rf"(?:{failed})(?=[^\n，。,.;；!！?？]{{0,{4 if t.lang == 'ja' else 6}}}?(?:{after}))"
    else:
        gap = r"[^\s，。,.;；!！?？]{0,3}?" if t.lang in _SUBSTRING_LANGS else r"\W{0,3}(?:\w+\W+){0,2}?"
        near = rf"(?:{negated.pattern}){gap}(?:{failed})"
    return len(recache.compile(near, re.I).findall(text))


def _aim_dropped(s: str, purpose: re.Pattern) -> str:
    """The sentence without the clauses of purpose ("为了解决这个问题，我把batch size调小了": the aim, not what
    happened; English reads them in core/outcome.py's _PURPOSE)."""
    rx = recache.compile(rf"(?:{purpose.pattern})[^，。,.;；:：!！?？\n]{{0,40}}", purpose.flags)
    return rx.sub(" ", s)


_MARKS = VERDICT_MARKS
_VERDICT_MARK = recache.compile("|".join(re.escape(k) for k in sorted(_MARKS, key=len, reverse=True)))
# The marks that give a verdict (not "⏳ pending"): a cell holding one alone says how its try went.
_TRY_MARK = recache.compile("|".join(re.escape(k) for k in sorted(_MARKS, key=len, reverse=True)
                                if _MARKS[k] in ("worked", "failed", "partial")))
# "❌ `/usr/local/bin/ollama.backup` (33 MB)": a path and its size, ticked off a list of files (removed or kept),
# not a setting that was tried: no verb, no value, nothing run.
_BARE_PATH = recache.compile(r"(?:[\w ]{0,20}:\s*)?`?[~.]?/[^\s`=]+`?\s*(?:\([^()]{0,40}\))?")
_OKNOK = recache.compile(r"(?<![\w-])(?P<w>NOK|NG|OK|PASS(?:ED)?|FAIL(?:ED)?|GOOD|BAD|WORKS|BROKEN|STABLE|UNSTABLE)(?![\w-])")
_OKNOK_MAP = {"NOK": "failed", "NG": "failed", "OK": "worked", "PASS": "worked", "PASSED": "worked", "FAIL": "failed",
              "FAILED": "failed", "GOOD": "worked", "BAD": "failed", "WORKS": "worked", "BROKEN": "failed",
              "STABLE": "worked", "UNSTABLE": "partial"}
_ONE_WORD = recache.compile(r"\W{0,3}(\w{2,12})[.!]{0,3}")


def _marker_verdict(s: str, t) -> str | None:
    """A marker in a short text ("2xGPU - NOK"), or a verdict word alone ("Fine.", "OOM!": a comment over a run, a
    cell); "No." and "Same." answer something, they judge no run."""
    m = _OKNOK.search(s)
    if m and len(s.split()) <= 14:
        return _OKNOK_MAP[m.group("w")]
    one = _ONE_WORD.fullmatch(s)
    if one and t.rx["outcome.worked"].fullmatch(one.group(1)):
        return "worked"
    if one and t.rx["outcome.failed"].fullmatch(one.group(1)) and one.group(1).lower() not in ("no", "still", "same"):
        return "failed"
    return None


# "neither changed anything", "none of these helped", "didn't make any difference": an effect, negated.
_NO_EFFECT = recache.compile(r"\b(?:neither|none of (?:them|these|those|it)|nothing|didn't|did not|doesn't|does not|never|"
                        r"not)\b\W*(?:\w+\W+){0,2}?(?:chang(?:e|ed|es)|help(?:s|ed)?|fix(?:es|ed)?|improv(?:e|ed|es)|"
                        r"make any difference|made any difference|matter(?:s|ed)?)\b", re.I)


# "TP 4, model len 1000, enforce eager, multiple gpu utilizations; Nothing helps.": settings named one after another
# and one verdict over all of them, which says each was tried (the verdict needs its own clause: a colon or semicolon)
_LISTED_VERDICT = recache.compile(
    r"^(?P<l>[^;:.!?]{2,200}?,[^;:.!?]{1,200}?)\s*[;:]\s*(?P<v>(?:nothing|none(?: of (?:them|these|those|it))?|neither"
    r"(?: of them)?)\s+(?:\w+\s+){0,2}?(?:help|work|fix|chang|matter|solv)\w*\b.{0,80})$", re.I | re.S)


def listed_tries(text: str) -> list[str]:
    """The settings one verdict covers ("A, B, C; nothing helps"), each a few words; [] when the sentence is not that
    (a clause of prose between the commas is a sentence, not a list of settings)."""
    return _listed(text)[0]


def listed_sides(text: str) -> list[str]:
    """Each setting ``listed_tries`` reads, with the verdict they share ("TP 4: Nothing helps.")."""
    items, verdict = _listed(text)
    return [f"{x}: {verdict}" for x in items]


def _listed(text: str) -> tuple[list[str], str]:
    m = _LISTED_VERDICT.match(text.strip())
    if not m:
        return [], ""
    items = [x.strip() for x in re.split(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", m.group("l")) if x.strip()]
    items[0] = re.sub(r"^(?:hi|hello|hey)\b\W*", "", items[0], flags=re.I)
    ok = 2 <= len(items) <= 8 and all(1 <= len(x.split()) <= 5 for x in items)
    return (items, m.group("v").strip()) if ok else ([], "")


# Where a sentence turns from one run to another: a contrast word, a semicolon, or (Chinese, Japanese: clauses strung
# with commas) a comma
_TURN = {"en": recache.compile(r"\s*(?:[,;]\s*|\s)(?:but|whereas|while|however|though|although)\b|;", re.I),
         "de": recache.compile(r"\s*(?:[,;]\s*|\s)(?:aber|jedoch|während|doch)\b|;", re.I),
         "fr": recache.compile(r"\s*(?:[,;]\s*|\s)(?:mais|alors que|tandis que|cependant)\b|;", re.I),
         "es": recache.compile(r"\s*(?:[,;]\s*|\s)(?:pero|mientras que|sin embargo)\b|;", re.I),
         "pl": recache.compile(r"\s*(?:[,;]\s*|\s)(?:ale|jednak|natomiast|lecz|podczas gdy)\b|;", re.I),
         "pt": recache.compile(r"\s*(?:[,;]\s*|\s)(?:mas|porém|enquanto|contudo)\b|;", re.I),
         "ru": recache.compile(r"\s*(?:[,;]\s*|\s)(?:но|а|однако)\b|;", re.I),
         "zh": recache.compile(r"[，,；;]"), "ja": recache.compile(r"[，,、；;]|けど|が、")}


def opposite_clauses(text: str, lang: str) -> list[tuple[str, str]]:
    """The clauses of one sentence that tell of runs with opposite outcomes ("v100能运行不会报错，但是p100会报错", "It
    hangs with 4 cards, but 2 cards are fine"): each clause with its outcome, when one worked and one failed; else []."""
    turn = _TURN.get(lang)
    if turn is None or len(text) > 400 or not turn.search(text):
        return []
    said = [(c.strip(" ，,；;、。.!"), outcome_of(c, lang)) for c in turn.split(text)]
    said = [(c, o) for c, o in said if c]
    kinds = {o for _c, o in said}
    if not {"worked", "failed"} <= kinds or len(said) > 6:
        return []
    # each run is named by what set it apart (a card, a size, a version, a flag): "it crashed, but after the fix it
    # works" is one try and its baseline, not two runs
    named = [_named_things(c) for c, o in said if o in ("worked", "failed")]
    return said if all(named) and len(set(map(frozenset, named))) > 1 else []


_NAMED = recache.compile(r"[A-Za-z_.+-]*\d[\w.+-]*|`[^`]{1,60}`|(?<!\w)--?[a-zA-Z][\w-]{1,40}|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b")


def _named_things(clause: str) -> set[str]:
    """The names in a clause that can set one run apart from another: a token with a digit (v100, 2MB, 11.8), code, a
    flag, an environment variable (narrower than ``_KNOB``: with its file names, URLs and "nightly" the reading made
    one more junk row in sample)."""
    return {m.group(0).lower() for m in _NAMED.finditer(clause)}


_NO_ERROR = recache.compile(r"\b(?:no|without|never|not|nor)\b\W*(?:\w+\W+){0,2}?(?:misaligned|illegal|invalid|abort|timeout|"
                       r"deadlock|freeze|garbage|corrupt|stuck|exception|segfault)", re.I)
_MADE_IT_RUN = recache.compile(r"\b(?:made|makes|got|gets|let|lets)\s+(?:it|them|things|(?:the|my|our|both)\s+[\w-]+(?:\s[\w-]+)?)"
                          r"\s+(?:to\s+)?(?:start|run|work|pass|finish|complete|load|boot|train|converge)\b", re.I)
_PAST_INABILITY = recache.compile(r"\b(?:could(?:n't| not)|was(?:n't| not) able to|were(?:n't| not) able to)\b", re.I)
_NOT_A_THING = recache.compile(r" · |\blabels?\b|(?-i:^[A-Z][A-Z_ ]{2,}$)|^\W*(?:error|fatal|warning|exception|traceback)\b", re.I)
# "issue 3: `hipcc: error: unsupported option`": the problem an entry of a log is about, not a try of its own.
_PROBLEM_LINE = recache.compile(r"^(?:issue|problem|error|bug|failure|symptom|problème|fehler|问题|問題|문제)\s*#?\d{1,3}\s*[:：(]",
                                re.I)
_UPDATE_LEAD = recache.compile(r"^(?:update|edit|addendum|nachtrag|更新|补充)\b[^:：]{0,30}[:：]\s*", re.I)
# A success with a catch, and a failure that got better: the words that turn either into a partial.
_CATCH = recache.compile(r"\b(?:\d+(?:\.\d+)?x slower|slower|slowly|too slow|only (?:~|about |around )?\d|not (?:acceptable|usable|viable|"
                    r"an option|practical)|unusable|degraded|then (?:\w+ ){0,4}(?:errors?|fails?|crash(?:es)?|hangs?|returns?|"
                    r"dies|ooms?)\b|but only)", re.I)
_BETTER = recache.compile(r"\binstead of\b|\brarer\b|\bless often\b|\bfewer\b|\bonly (?:one|once|\d+) (?:\w+ )?in\b|"
                     r"\bone (?:hang|crash|failure) in\b|(?<!no )(?<!not )\bimproved\b|(?<!no )(?<!not )\bbetter\b", re.I)
_BUT = recache.compile(r"(?:,\s*|\s)(?:but|however|although|though)\b", re.I)


def _catch(s: str, verdict: str) -> str:
    """ "No hang anymore, but bandwidth drops to 2 GB/s": it worked, with a catch after a "but" that says no success
    of its own ("crashed before, but now it works" keeps its verdict)."""
    from dbglog.core import outcome

    if verdict == "worked" and _CATCH.search(s):
        return "partial"  # "starts, first token ~3x slower", "works ~2 h, then the NVML error returns"
    if verdict == "failed" and _BETTER.search(s):
        return "partial"  # "still crashes, after ~2 h instead of 30 min"
    m = _BUT.search(s)
    if not m or verdict != "worked":
        return verdict
    before, after = s[:m.start()], s[m.end():]
    t = table("en")
    said = t.has("outcome.said_worked", before) or outcome.classify(before) == "worked"
    if said and re.search(r"\w{2,}", after) and not (t.has("outcome.said_worked", after) or outcome.classify(after) == "worked") \
            and (_LIMIT.search(after) or outcome.classify(after) in ("failed", "partial")):
        return "partial"  # (a "but" that names no limit, "but I am sad I had to downgrade", is no catch)
    return verdict


# What a catch after a "but" names: a cost, a limit, a remaining failure ("but 20% slower", "but only on one GPU").
_LIMIT = recache.compile(r"\b(?:slow(?:er|s|ly|down)?|worse|less|lower|higher|only|still|sometimes|occasionally|intermittent(?:ly)?|"
                         r"except|not|no|never|cannot|without|drops?|dropped|degrad\w*|regress\w*|warnings?|leak\w*|"
                         r"overhead|penalty|costs?|loses?|lost|hurts?|takes?|took|requires?|needs?\s+(?:a|to\s+re)\w*)\b|n't\b|\d", re.I)


def _en_outcome(s: str) -> str | None:
    from dbglog.core import outcome

    if _MY_PLAN.match(s):
        return None  # "I'll file a separate issue for the hang": what the author will do says nothing of how a try went
    s = _PREDICTION.sub(" ", s)  # ("#578 should fix it": what someone expects of a change, not how it went)
    s = outcome.after_the_problem(s)  # ("OOM at startup -> fixed by lowering the batch": the problem, then the fix)
    s = _FIX_OBJECT.sub(r"\1 it", s)  # "solved my llama.cpp compilation problem": the problem is what went away
    m = _SAME_HERE.match(s)
    if m and (after := _en_verdict(s[m.end():])) is not None:
        s, v = s[m.end():], after  # "I had a similar issue, and for me it was fixed by g++ 9": the baseline, then the try
    else:
        v = _en_verdict(s)
    return _catch(s, v) if v in ("worked", "failed") else v


# A fix verb and the failure it removed ("solved my llama.cpp compilation problem", "fixed the crash on rank 3").
_FIX_OBJECT = recache.compile(r"\b(solved|fixed|resolved|solves|fixes|resolves|solve|fix|resolve)\s+(?:[\w.'-]+\s+){0,4}?"
                              r"(?:problems?|issues?|errors?|crash(?:es)?|bugs?|hangs?|failures?)\b", re.I)


# A reply's opening clause saying the author has the bug too ("I encountered a similar issue when ..., and"), before
# what they did about it: the failure it names is the baseline, not how their try went.
_SAME_HERE = recache.compile(r"^\W{0,3}(?:i|we)\s+(?:also\s+)?(?:have|had|got|get|encountered|hit|faced|ran into|run into|see|saw|"
                             r"am seeing|was seeing|'m seeing|am getting|was getting|'m getting)\s+(?:the\s+same|a\s+similar|"
                             r"this|that|the|a\s+same)\s+(?:\S+\s+){0,2}?(?:issue|error|problem|crash|bug|hang|behaviou?r|"
                             r"failure|oom)s?\b[^,;.!?]{0,120}?(?:,\s*(?:and\s+|but\s+)?|\s+but\s+|;\s*)", re.I)


# A verdict foretold ("should fix it", "will solve this", "should be resolved in 2.4"): an expectation, no outcome
_PREDICTION = recache.compile(r"\b(?:should|will|would|'ll)\s+(?:probably\s+|likely\s+|also\s+)?(?:(?:fix|solve|resolve|"
                              r"address|help\s+with)\b|be\s+(?:fixed|solved|resolved|addressed)\b|work\b(?!\s*(?:fine|now)"
                              r"\s*(?:after|with|since|once)\b))", re.I)


# A sentence opening with what the author will do ("I'll update the docs", "We are going to rerun it on 8 GPUs");
# "It will hang after 3 hours" is what happens, and keeps its verdict.
_MY_PLAN = recache.compile(r"^\W{0,3}(?:@[\w.-]{1,40}\s+)?(?:(?:then|next|so|ok(?:ay)?|now|thanks|thank you|yes|sure)[,，!.]?\s*)?"
                           r"(?:i|we)(?:'ll|\s+will|\s+(?:am|are)\s+going\s+to|"
                           r"'m\s+going\s+to|'re\s+going\s+to|\s+plan\s+to|\s+intend\s+to)\b(?!\s+(?:not|never)\b)", re.I)


def _unhedged(s: str) -> str | None:
    """ "seems that in my case the OOM is also fixed": the reporter saw it; the hedge is modesty, not doubt."""
    from dbglog.core import outcome

    if not _HEDGE.search(s):
        return None
    said = outcome.classify(_HEDGE.sub(" ", s))
    return said if said in ("worked", "failed", "partial") else None


def _en_verdict(s: str) -> str | None:
    from dbglog.core import outcome

    t = table("en")
    marked = _marker_verdict(s, t)
    if marked:
        return marked
    if t.has("outcome.unverified", s):
        return "inconclusive"  # applied, not yet seen to help: done, outcome unknown
    if t.has("outcome.untested", s):
        return "untested"
    got = outcome.classify(s)
    if _FIX_WAS.search(s) and not t.has("outcome.said_failed", s) and not t.has("mood.modal", s):
        return "worked"  # "The solution was to turn off ACSCtl": what fixed it, said after the fact
    if _MADE_IT_RUN.search(s) and not t.has("outcome.said_failed", s):
        return _catch(s, "worked")  # "made the job start immediately", "made it work"
    ne = _NO_EFFECT.search(s)
    rest = s[:ne.start()] + " " + s[ne.end():] if ne else s  # "nothing fixed it": its "fixed it" is negated
    rest, denied = outcome.without_denied_wins(rest)  # "Neither 0.1.13 or 0.1.16 worked": no success said
    sw, sf = t.has("outcome.said_worked", rest), t.has("outcome.said_failed", s) or ne is not None or denied
    if sw or sf:
        return _said_verdict(s, rest, sw, sf, got)
    if got in ("worked", "failed", "partial"):
        return _catch(s, got) if got == "worked" else got
    hedged = _unhedged(s) if got == "inconclusive" else None
    if hedged:
        return hedged
    low = s.lower().strip(" .!")
    if low in ("yes", "yes it does", "confirmed", "it does", "that did it", "works", "works for me", "working"):
        return "worked"
    if low in ("no", "nope", "no luck", "same", "same here", "same error", "still") or re.match(
            r"^(?:still\s+)?(?:the\s+)?same\s+(?!as\b)\w+", low):
        return "failed"  # "same undefined symbol": the failure before, again
    names = _CODE.sub(lambda m: " " if " " not in m.group(0).strip("` ") else m.group(0), low)  # `timeout` is a name
    if t.has("outcome.error_words", names) and not _NO_ERROR.search(low):
        return "failed"  # "misaligned address, first batch": the failure named, nothing else said
    lead = t.rx["outcome.ran_lead"].match(low)
    if lead and not re.match(r"\s*(?:out|into)\b", low[lead.end():]):
        # A verdict that opens with "runs" / "starts" / "builds" ("runs, first start 40 s"): it ran; a "but" after
        # it is a catch ("runs, but tuning takes 9 min").
        return "partial" if re.search(r"\b(?:but|however|although|though)\b", low) else "worked"
    return None


def _said_verdict(s: str, rest: str, sw: bool, sf: bool, got: str) -> str:
    """The verdict of a sentence that says it worked or failed in the cue table's words (``sw`` / ``sf``)."""
    from dbglog.core import outcome

    if outcome.only_the_step_went_through(s):
        return "failed"  # "Successfully downgraded, but still the same hang": the change made, the bug lasted
    if sw and sf:
        return "partial"
    if sf:
        return "failed"  # "neither helped", "still hangs": the words of a failed try outweigh a success word nearby
    # ("the program stops hanging": a failure word inside the words that say it went away is no failure)
    left = table("en").rx["outcome.said_worked"].sub(
        lambda m: " works " if outcome.classify(m.group(0)) in ("failed", "partial") else m.group(0), rest)
    got = outcome.classify(left) if left != rest else got
    return "partial" if got in ("failed", "partial") else _catch(s, "worked")


def diagnostic(did: str) -> bool:
    """Does the action only observe (check, dump, read logs, run nvidia-smi / dmesg / py-spy)? Its opening words say."""
    t = table("en")
    words = plain(did).lower().replace("`", "").split()
    while words and words[0] in ("i", "we", "then", "first", "also", "ran", "run", "running", "the", "a"):
        ran = words[0] in ("ran", "run", "running")
        words = words[1:]  # "I ran nvidia-smi", "then the dmesg of ...": the observation is what opens the rest
        if ran and words[:1] == ["with"]:
            words = words[1:]  # "Ran with NCCL_DEBUG=INFO on 48 nodes": the run was a look
    if words[:1] and words[0] in ("enable", "enabled", "set", "export", "exported", "turn", "turned") and _DEBUG_OUT.match(
            " ".join(w for w in words[1:4] if w != "on")):
        return True  # "enable NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=ALL": switching on a debug output is a look
    head = " ".join(words[:3])
    vm, tm = t.rx["diagnostic.verbs"].match(head), t.rx["diagnostic.tools"].match(head)
    code = _CODE_FIRST.match(did.strip())  # (a command is set as code: "final status" is no tool)
    return bool(vm or tm or code and _READ_ONLY.match(code.group(1).strip().lower()))


# A command that asks and changes nothing: a tool and its read-only subcommand or flag (`dkms status`, `docker ps`,
# `kubectl get pods`, `oc describe pod`, `systemctl status`, `git log`, `torch --version`), set as code.
_CODE_FIRST = recache.compile(r"^\W{0,3}(?:\$\s*)?`([^`]{2,200})`")
_READ_ONLY = recache.compile(r"^(?:sudo\s+)?[\w.-]+(?:\s+(?:volume|network|compose|image|container|node|pod|pods|module))?\s+"
                        r"(?:status|list|ls|ps|show|info|describe|get|inspect|version|--version|-v|-V|log|top|events)\b")


_TRIES_NOUN = recache.compile(r"\b(?:attempts|tries|trials|experiments)\b")


# "排障记录1：...", "Troubleshooting log 2: ...": a short label, its number, and a colon before the section's title.
_HEAD_LABEL = recache.compile(r"^\W*([^\W\d_][^:：]{0,24}?)\s*\d{0,3}\s*[:：]\s*\S")


def label_role(text: str) -> str | None:
    """The role of a heading's label, the words before its colon ("排障记录1：Docker 安装失败" -> tried), or None."""
    m = _HEAD_LABEL.match(plain(text))
    return heading_role(m.group(1), language(m.group(1))) if m else None


@lru_cache(maxsize=8192)  # (the context, the linker and the list captions ask about the same headings)
def heading_role(text: str, lang: str) -> str | None:
    """tried / plan / options / boilerplate / lessons for a heading's words, or None."""
    s = plain(re.sub(r"^\W*\d+(?:\.\d+)*[.)]?\s*", "", text)).lower()
    s = re.sub(r"[:：]\s*$", "", s)
    aside = _ASIDE.search(s)
    if aside and aside.start() > 0:
        # "Attempted fixes (all failed for this cross-node setup)": a verdict on them all in the aside is the section's
        said = outcome_of(aside.group(1), lang) if table(lang).has("outcome.collective", aside.group(1)) else None
        if said in ("worked", "failed") and heading_role(s[:aside.start()].rstrip(), lang) in (None, "tried"):
            return said
    if " | " in s:  # a bilingual form heading ("当前行为 | Current Behavior"): either half names the role
        return next((r for part in s.split(" | ") if (r := heading_role(part, language(part)))), None)
    if len(s.split()) > 6 or (lang in ("zh", "ja") and len(s) > 14) or (lang == "ko" and len(s) > 24):
        return None  # a title or a sentence, not a section's name
    # "Key learnings from the debugging process": the role is the head noun's, before the first preposition;
    # among several role words there, the last one is the head ("Debugging summary").
    s = _METRIC_USAGE.sub(" ", s).strip()  # ("Checking GPU usage": a quantity measured, not a section of instructions)
    head = _PREP.split(s, maxsplit=1)[0].strip() or s
    of = _CONTAINER_OF.match(s)
    if of:  # "Summary of attempts", "History of fixes": the noun after "of" says what the section holds
        inner = heading_role(of.group(1), lang)
        if inner is not None:
            return inner
    if len(s.split()) >= 3 and table("en").find("mood.imperative_lead", s) and not _TRIES_NOUN.search(s):
        # "Install CUDA components via pip", "Set XLA flags": a step, not a section's role ("Build attempts log" is
        # one: a step is not named after its attempts)
        return None
    role = None
    for lng in dict.fromkeys((lang, "en")):
        t = table(lng)
        best = None
        for r in ("boilerplate", "plan", "options", "failed", "worked", "tried", "lessons"):
            ends = [m.end() for m in t.rx[f"heading.{r}"].finditer(head)
                    if not _MODIFIER_PARTICLE.match(head, m.end())] if f"heading.{r}" in t.rx else []
            if ends and (best is None or max(ends) > best[0]):
                best = (max(ends), r)
        if best:
            role = best[1]
            break
    return _verdict_first(s, lang, role)


_ASIDE = recache.compile(r"[(（]([^()（）]{1,120})[)）]\s*$")
_METRIC_USAGE = recache.compile(r"\b(?:gpu|cpu|memory|vram|ram|disk|power|resource|cuda|device|bandwidth)\s+usage\b", re.I)
# A noun with a particle of place or direction makes it a modifier of the head noun after it (Korean and Japanese put
# the head last): "AWS EC2환경에서 PyTorch 버전" is about a version (in the EC2 environment), "環境での確認" a check: not a
# section of the environment. (A genitive may name a container, "解決方法の一覧": not among them.)
_MODIFIER_PARTICLE = recache.compile(r"(?:에서의|에서|에게|에|으로|로|での|における|で)(?=\s{0,8}\S)")
# A section's name made of a container and what it holds ("Summary of attempts", "List of things tried")
_CONTAINER_OF = recache.compile(r"^(?:(?:a|the|short|brief|quick|full)\s+)?(?:summary|overview|list|history|log|timeline|record|"
                           r"recap|table|series|set|round)\s+of\s+(.{3,60})$", re.I)


def _verdict_first(s: str, lang: str, role: str | None) -> str | None:
    """ "Failed workarounds", "❌ Rejected approaches", "Successful diagnostics": a heading that opens with a verdict
    names tries that went that way, whatever its noun (options, tries or none)."""
    if role not in (None, "options", "tried"):
        return role
    words = s.split()
    if words and _VERDICT_MARK.fullmatch(words[0]):
        words = words[1:]  # "❌ Failed workarounds": the words say it, the mark decorates
    # a verdict by its form, a participle or an adjective ("Fix attempts", "Error log" open with a noun)
    # (in Korean a modifier's ending: "실패한 방법" failed ways, where "해결 방안", solution options, opens with a noun)
    form = {"en": r"(?:ed|ful|ing)$", "ko": r"(?:된|한|던|은)$"}.get(lang)
    first = words[0] if len(words) > 1 and (form is None or re.search(form, words[0])) else ""
    said = outcome_of(first, lang) if first else None
    if role == "options" and (first.endswith("ed") and table(lang).has("heading.tried", first) if lang == "en"
                              else first and table(lang).has("tense.tries", first)):
        # "Attempted workarounds", "Tried approaches", "Versuchte Lösungen": options someone ran, no longer options
        return "tried"
    if said is None and table(lang).has("outcome.untested", s):
        return "plan"  # "Not tried", "Not yet run": what is left to do
    if said is None and role is None and 1 <= len(words) <= 2 and _VERDICT_ALONE.match(" ".join(words)):
        said = outcome_of(" ".join(words), lang)  # "Failing:", "Not working", "OK": a verdict alone names them too
    return said if said in ("worked", "failed") else role


# A heading that is a verdict and nothing else, by its form: a participle ("Failing", "Working"), its negation, or a
# status in capitals ("OK", "NG", "PASS"); not a noun ("Error", "Fix", "Solution"), which names a section's subject
_STATUS = r"(?-i:OK|NG|NOK|PASS(?:ED)?|FAIL(?:ED)?|SKIP(?:PED)?)"  # a run's status in capitals
_VERDICT_ALONE = recache.compile(r"^(?:(?:not|still|now)\s+)?[a-z]+ing$|^" + _STATUS + "$", re.I)


# "I still want to find out why", "we still need to rerun it": an intention, not a failure that lasted.
_STILL_MEANS = recache.compile(r"\bstill\s+(?=(?:want|need|have to|plan|intend|mean|hope|wish)\b)", re.I)
_HEDGE = recache.compile(r"\b(?:it\s+)?(?:seems|seemed|appears|appeared)(?:\s+(?:like|that|to\s+be|to))?\b|\blooks\s+like\b",
                    re.I)
# "Log attached.", "Trace attached below": a noun and its participle, not an order to log.
_NOUN_ATTACHED = recache.compile(r"^\W*\w+\s+(?:\w+\s+)?(?:attached|enclosed|included|uploaded|posted)\b", re.I)
_CAUSE_TAIL = recache.compile(r",?\s+(?:so|because|since|which means|which suggests)\s+", re.I)
_TRY_HEAD = recache.compile(r"\b(?:tried|tries|try|attempts?|experiments?|tests?|runs?|fix(?:es)?|solutions?|workarounds?|"
                       r"day|week)\b", re.I)
# Settings that only make a program tell more (CUDA_LAUNCH_BLOCKING also changes timing: often a workaround).
_DEBUG_OUT = recache.compile(r"(?:nccl[_ ]debug\w*|debug(?:ging)?\b|torch_distributed_debug|torch_show_cpp_stacktraces|amd_log_level|"
                        r"torch_cpp_log_level|hip_trace_api|amd_serialize_kernel|debug logging|logging|verbose)\b")
_WHETHER = recache.compile(r"\b(?:whether|(?:check|see|test|find out|verify|confirm|ask)\s+if)\b.*$", re.I)
_UNIT = r"(?:[KMGT]i?B|[kKMG]?bps|ms|µs|us|s|sec|min|h|tok/s|tokens?/s|t/s|it/s|img/s|samples?/s|TFLOPS|%|x|×)"
_MEASURED = recache.compile(rf"^(?P<cfg>[^:→]{{3,90}}?)\s*(?::|→|->|=>|—|–)\s*(?P<val>(?:~|≈|about\s+)?\d[\d',.]*\s*{_UNIT}\b|"
                       r"OOM\b|NaN\b|hangs?\b|crash(?:es)?\b|segfaults?\b|error\b)", re.I)
_CONFIG_CHARS = recache.compile(r"[=+`]|\w\(|--\w|\b(?:bs|batch|seq|tp|pp|dp|lr|dim|heads?|layers?|ckpt|fp16|bf16|fp8|int8|int4)\b", re.I)
_PREP = recache.compile(r"\s(?:from|of|for|about|during|in|on|with|von|der|des|für|bei|zum|zur|mit)\s")




def row_roles(u: Unit) -> tuple[int, int]:
    """A row's (what, result) columns: by the header's words, else the column its cells show to be the verdicts."""
    what, res = column_roles(u.header)
    if res < 0 and u.said_col >= 0:
        res = u.said_col
        what = what if what >= 0 and what != res else (0 if res > 0 else -1)
    if 0 <= what < len(u.cells) and _ORDINAL.fullmatch(plain(u.cells[what])) and (what >= len(u.header)
            or WHAT_COL.search(plain(u.header[what])) or NUMBER_COL.fullmatch(plain(u.header[what]))):
        # ("| Attempt | Configuration | Result |" over "| 4 | Compile bitsandbytes from source | ❌ |": the column the
        # header names holds the try's number; what was tried is the next column with words. A first column of
        # sizes ("| NNODES | TP | PP | MBS | Speed |") is a setting: its number is no try's.)
        what = next((k for k, c in enumerate(u.cells) if k not in (what, res) and plain(c).strip()
                     and not _ORDINAL.fullmatch(plain(c))), what)
    return what, res


_ORDINAL = recache.compile(r"\W{0,2}#?\d{1,3}[a-z]?\W{0,2}")


_YES_NO = recache.compile(r"^\W*(?:yes|no|y|n|ja|nein|是|否|true|false)\W*$", re.I)


def _said_columns(doc: Doc) -> None:
    """ "| run | nodes | hang? |" with "yes / no / after 2 h" below: a column most of whose cells carry a verdict is the
    result column, whatever its header says (a header names it in the author's words, the cells in everyone's)."""
    tables: dict[int, list[Unit]] = {}
    for u in doc.units:
        if u.kind == "row" and u.index >= 0 and column_roles(u.header)[1] < 0:
            tables.setdefault(u.group, []).append(u)
    for rows in tables.values():
        width = max(len(r.cells) for r in rows)
        if len(rows) < 2 or width < 2:
            continue
        share = []
        for k in range(1, width):
            cells = [r.cells[k] for r in rows if k < len(r.cells) and r.cells[k].strip()]
            # A bare yes / no takes its sense from the header ("hang?": yes is bad): not a verdict on its own; with a
            # mark it is one ("✅ Yes").
            said = [o for c in cells if (o := outcome_of(c, language(c))) in ("worked", "failed", "partial")
                    and (not _YES_NO.match(c) or _VERDICT_MARK.search(c))]
            # (of two verdict columns, "| 50 requests | ... | Stabilizes? |" with ✅ in every row of the first, the one
            # whose verdicts differ from row to row says how each went; the other is what all of them share)
            share.append((len(said) / len(rows) >= 0.5, len(set(said)) > 1, len(said) / len(rows), k))
        enough, _, _, k = max(share)
        if enough:
            for r in rows:
                r.said_col = k




def change_columns(header: tuple[str, ...]) -> tuple[int, int, int] | None:
    """(what, before, after) columns of a change table, or None: the first column names settings, and two columns
    next to each other are the value before and after (by their words, or as run N and a later run)."""
    cols = [plain(c).strip() for c in header]
    if len(cols) < 3 or not KNOB_COL.search(cols[0]):
        return None
    for k in range(1, len(cols) - 1):
        a, b = cols[k], cols[k + 1]
        ra, rb = RUN_COL.match(a), RUN_COL.match(b)
        if BEFORE_COL.match(a) and AFTER_COL.match(b) or ra and rb and int(rb[1]) > int(ra[1]):
            return 0, k, k + 1
    return None


def column_roles(header: tuple[str, ...]) -> tuple[int, int]:
    """(index of the column saying what was done, index of the column saying how it went), -1 when none.
    An "Expected" column is what was hoped for, never the result; "Actual", "Outcome", "Status" win over "Result"."""
    cols = [plain(c) for c in header]
    what = next((k for k, c in enumerate(cols) if WHAT_COL.search(c) and not EXPECTED.search(c)), -1)
    ranked = sorted((k for k, c in enumerate(cols) if RESULT_COL.search(c) and not EXPECTED.search(c) and k != what),
                    key=lambda k: (not BEST_RESULT.search(cols[k]), bool(WEAK_RESULT.search(cols[k])), k))
    res = ranked[0] if ranked else -1
    if what < 0 and res > 0:
        what = 0
    return what, res




@dataclass
class Context:
    """What the cues need to know beyond the unit itself."""

    doc: Doc
    roles: dict[int, str | None]  # heading id -> role
    asker: str
    lang: str
    pasted: set[int] = field(default_factory=set)  # blocks that are error output pasted as text
    opening: set[int] = field(default_factory=set)  # blocks that state the problem
    captions: dict[int, int] = field(default_factory=dict)  # list group -> the unit saying its items were done (-1: itself)
    sweeps: set[int] = field(default_factory=set)  # units: a setting each, with what it measured (``_sweeps``)
    fixes: set[int] = field(default_factory=set)  # units a caption says were the fix ("the solution for me was:")
    plans: dict[int, int] = field(default_factory=dict)  # an item a caption names as planned -> its caption (``_plan_items``)
    legend: set[int] = field(default_factory=set)  # list groups that define the fields the entries below use (``_legends``)
    results: set[int] = field(default_factory=set)  # list groups captioned as a run's result ("Result:"; ``_result_lists``)
    caption_items: set[int] = field(default_factory=set)  # items that only caption the tries nested under them


def context(doc: Doc) -> Context:
    body = " ".join(u.text for u in doc.units[:400] if u.kind in ("sentence", "heading"))
    lang = language(body)
    heads = [u for u in doc.units if u.kind == "heading"]
    roles = {u.id: heading_role(u.text, lang if language(u.text) == "en" else language(u.text)) for u in heads}
    tops = [u for u in heads if u.level == 1]
    named = ("options", "plan", "lessons", "worked", "failed") + (("boilerplate",) if doc.posts else ())
    if len(tops) == 1 and roles[tops[0].id] in named and (len(heads) > 1 or tops[0].first == min(
            (u.first for u in doc.units if u.kind != "front"), default=0)):
        # The title names the whole story ("GPU recovery guide", "flash-attn build notes"; a thread's "memory
        # requirements" is its question, not a section of setup): its text keeps its own cues.
        roles[tops[0].id] = None
    _marked_sections(heads, roles)
    _records_in_setup(heads, roles)
    _options_done(doc, roles, lang)
    _said_columns(doc)
    replying = _body_before_posts(doc)
    asker = doc.posts[0][1] if doc.posts and not replying else ""
    pasted = {u.block for u in doc.units if u.kind == "sentence" and u.head and _pasted_line(u.text)}
    sweeps = _sweeps(doc)
    # (a benchmark journal's first run, "219tok/s / temp 1 / MTP 2", first in its section: a run, not the problem)
    opening = _opening(doc, roles, replying) - {u.block for u in doc.units if u.id in sweeps}
    captions = done_captions(doc, lang)
    return Context(doc, roles, asker, lang, pasted, opening, captions, sweeps, _captioned_fixes(doc),
                   _plan_items(doc, lang), _legends(doc), _result_lists(doc),
                   {c for c in captions.values() if c >= 0 and doc.units[c].item >= 0})


def _records_in_setup(heads: list[Unit], roles: dict[int, str | None]) -> None:
    """ "#### Docker setup (brief)" / "##### Troubleshooting log 1: the plugin will not install": a record of tries
    inside a setup section, named so by its label, is a section of tries (its long title hides the role)."""
    for h in heads:
        near = next((roles.get(p) for p in reversed(h.path) if roles.get(p)), None)
        if roles.get(h.id) is None and near == "boilerplate" and h.level < 7 and label_role(h.text) == "tried":
            roles[h.id] = "tried"


def _options_done(doc: Doc, roles: dict[int, str | None], lang: str) -> None:
    """ "## Root Causes Discovered" / "### 1. Missing files" / "**Solution:** Created these files": a heading of
    options (causes, solutions) whose entries each say in a field of what was done that it was done, in the past
    tense, records fixes made, not options offered: the tense outranks the heading's word, and its role is tried."""
    done: dict[int, int] = {}
    for u in doc.units:
        if u.kind != "sentence" or not u.head or not any(roles.get(p) == "options" for p in u.path):
            continue
        lab = _sentence_label(u.text)
        words = plain(lab[1]).split() if lab and lab[0] == "did" else []
        if words and _is_past(_NOT_WORD.sub("", words[0]), table(lang)):
            for p in u.path:
                done[p] = done.get(p, 0) + 1
    for h, n in done.items():
        if roles.get(h) == "options" and n >= 2:
            roles[h] = "tried"


def _marked_sections(heads: list[Unit], roles: dict[int, str | None]) -> None:
    """ "## Installation Attempts" / "### ✅ Successfully installed" / "### ❌ Issues encountered": a section of tried
    things split by verdict marks; a sub-heading with no role of its own that opens with one takes the mark's verdict
    as its role, so its items are tries that went that way."""
    by_id = {h.id: h for h in heads}
    for h in heads:
        parent = by_id.get(h.path[-1]) if h.path else None
        if roles.get(h.id) is not None or parent is None or parent.level == 1 or roles.get(parent.id) != "tried":
            continue  # (the document's title is no section of tries)
        mark = _VERDICT_MARK.match(h.text.lstrip(" *_#"))
        said = outcome_of(mark.group(0), "en") if mark else None
        if said in ("worked", "failed"):
            roles[h.id] = said


def _bold_label(line: str) -> str | None:
    """The name of a bold field label opening the line (``vocab.LABEL``), lower case, whatever the name."""
    m = LABEL.match(line)
    return m.group("l1").strip().lower() if m and m.group("l1") else None


def _result_lists(doc: Doc) -> set[int]:
    """The lists captioned by a result label alone ("Result:", "**Output:**", "结果：") on the line or two above: their
    items are what the run before them gave ("- Scanned rows: 200", "- Corrupt tokens: [0, 0]"), not tries of their own."""
    out: set[int] = set()
    for u, cap in _list_captions(doc):
        if cap.kind == "sentence" or cap.kind == "heading" and cap.level >= 7:
            lab = _sentence_label(cap.text)
            if lab is not None and lab[0] in ("result", "outcome") and not lab[1].strip(" *_:："):
                out.add(u.group)
    return out


def _legends(doc: Doc) -> set[int]:
    """The lists that define the labelled fields the entries below them use ("Each issue includes: - **Symptom**: How
    it manifested / - **Fix**: How we resolved it"): three or more items, each a field name, every name then used
    as a field twice or more after the list. Their items describe a template; they report nothing. An issue log's
    own entries share the form (each "- **Problem**: ... / - **Solution**: ... / - **Status**: solved." is followed by
    the others): only the first list of its names is a legend, and only when what its names say is a description --
    no number, no code, a few words each ("How we resolved it"), not a report ("`export X=0` on the H100 nodes")."""
    from bisect import bisect_right

    groups: dict[int, list[Unit]] = {}
    for u in doc.units:
        if u.item >= 0 and u.head and u.depth == 1:
            groups.setdefault(u.group, []).append(u)
    used: dict[str, list[int]] | None = None  # a field name -> the lines that use it, in order (read once, if asked)
    out = set()
    seen: set[tuple] = set()  # the name lists of the lists before (in document order)
    for g, items in groups.items():
        # ("- **Fix**: How we resolved it": a bold label, the one form a legend and its entries share)
        names = [_bold_label(u.text) for u in items]
        if len(items) < 3 or None in names:
            continue
        again = tuple(names) in seen
        seen.add(tuple(names))
        if again or not all(_describes(doc.lines[u.first]) for u in items):
            continue
        if used is None:
            used = {}
            for i, ln in enumerate(doc.lines):
                if name := _bold_label(ln):  # ("**Fix** (`groupnorm.rs`):" too)
                    used.setdefault(name, []).append(i)
        last = items[-1].last
        if all(len(at := used.get(n, [])) - bisect_right(at, last) >= 2 for n in names):
            out.add(g)
    return out


def _describes(item: str) -> bool:
    """A legend item's text after its label says what the field holds: a few words, no number and no code."""
    said = _BOLD_LEAD.sub("", item, count=1)
    return len(said.split()) <= 10 and not re.search(r"\d|`", said)


_BOLD_LEAD = recache.compile(r"^\s*(?:[-*+]\s+|\d{1,3}[.)]\s+)?(?:\*\*|__)[^*_\n]{1,60}?(?:\*\*|__)\s*[:：]?")


# "the solution was", "the best fix for this error is": what fixed it, named (``_FIX_WAS`` and ``_FIX_CAPTION``)
_FIX_NOUN = (r"(?:the|my|our) (?:(?:best|only|real|simplest|easiest|actual|final) )?(?:solution|fix|workaround|answer|cure)"
             r"(?: for (?:me|us|this(?: \w+)?|that|it))? (?:was|is|has been|has become|became|ended up being)")


# "the solution for me was:", "I fixed it by doing this:": a caption whose next paragraph is the fix (a fence under it is
# read by the linker, ``_shown_below``).
_FIX_CAPTION = recache.compile(rf"\b{_FIX_NOUN}\s*[:：]\s*$|\b(?:solved|fixed|resolved) (?:it|this|the (?:issue|problem))"
                               r"(?: for (?:me|us))? (?:by|with)(?: doing)?(?: this| the following)?\s*[:：]\s*$", re.I)


def _captioned_fixes(doc: Doc) -> set[int]:
    """The sentences right under a caption that says they were the fix, in the caption's post."""
    out, prev = set(), None
    for u in doc.units:
        if u.kind not in ("sentence", "heading"):
            continue
        if prev is not None and u.kind == "sentence" and u.post == prev.post and 0 < u.first - prev.last <= 2 and (
                _FIX_CAPTION.search(plain(prev.text))):
            out.add(u.id)
        prev = u
    return out


# "- v2.11.4-1: 7.05", "- bs=16: 41.2": a setting (a version, a name with a digit, a value set) and the number it
# measured; "critical (w=3.0): 123" names a category.
_SWEEP_ITEM = recache.compile(r"^(?P<cfg>v?\d[\w.+-]{0,40}|[\w.+-]{0,40}\d[\w.+-]{0,40}|[\w.-]{1,40}\s*=\s*[^\s:：]{1,40}"
                              r"(?:[ ,]{1,3}[\w.-]{1,40}\s*=\s*[^\s:：]{1,40}){0,4})"
                              r"\s*[:：]\s*(?:~|≈)?\d[\d',.]*\s*(?:" + _UNIT + r")?\s*(?:\([^()]{0,40}\))?\s*$", re.I)


def _sweeps(doc: Doc) -> set[int]:
    """The lists whose items are settings, each with the number it measured, three or more and all of them alike
    ("- v2.9.9-1: 53.95" / "- v2.11.4-1: 7.05"): a run per setting, as a results table's rows are. A list of metrics
    names no setting in its labels ("- Throughput: 53"), so it is no sweep."""
    items: dict[int, list[bool]] = {}
    for u in doc.units:
        if u.item >= 0 and u.kind == "sentence" and u.group >= 0:
            items.setdefault(u.group, []).append(len(u.text) <= 200 and bool(_SWEEP_ITEM.match(plain(u.text))))
    groups = {g for g, marks in items.items() if len(marks) >= 3 and all(marks)}
    return {u.id for u in doc.units if u.item >= 0 and u.group in groups} | _series(doc) | _stacks(doc)


# "2.2.0+cu121" / "time elapsed 48.99": a setting on its line and what one run of it printed on the next
_SERIES = recache.compile(r"^(?P<cfg>[^\s\d]{0,40}\d[^\s]{0,40}|[\w.-]{1,40}=[^\s]{1,40})\s+(?P<what>[^\d]{2,40}?)"
                          r"\s*[:=]?\s*(?:~|≈)?\d[\d',.]*\s*(?:" + _UNIT + r")?\s*$", re.I)


def _series(doc: Doc) -> set[int]:
    """Paragraphs of a setting and the one number a run of it measured, three or more in a row and each measuring
    the same thing ("2.2.0+cu121 / time elapsed 48.99", "2.2.0+cu118 / time elapsed 38.23"): a sweep told without a
    list, each paragraph one run."""
    out: set[int] = set()
    run: list[tuple[Unit, str]] = []
    for u in doc.units + [None]:
        m = u is not None and u.kind == "sentence" and u.item < 0 and not u.quoted and len(u.text) <= 160 and \
            _SERIES.match(plain(u.text).strip())
        what = m.group("what").strip().lower() if m else None
        if run and not (m and what == run[-1][1] and u.path == run[-1][0].path and u.first - run[-1][0].last <= 2):
            if len(run) >= 3:
                out.update(x.id for x, _ in run)
            run = []
        if m:
            run.append((u, what))
    return out


# A line that is one measurement and nothing else ("219tok/s", "~38 GB/s"), and a short line setting something
# ("temp .6", "MTP 5", "context 1.5M", "bs=8"): a digit or an "=" in at most four words
_BARE_MEASURE = recache.compile(r"^(?:~|≈)?\d[\d',.]*\s*(?!%|x\b|×)" + _UNIT + r"$", re.I)
_SET_LINE = recache.compile(r"^(?=.{1,40}$)(?=.*[\d=])\S+(?:\s+\S+){0,3}$")


def _stacks(doc: Doc) -> set[int]:
    """Paragraphs of a run's settings one per line with what it measured on a line of its own ("219tok/s" / "temp 1" /
    "MTP 2" / "context 1.5M"), two or more measuring in the same unit: a benchmark journal's runs, each paragraph one
    run, as a results table's rows are."""
    seen: dict[str, list[int]] = {}
    for u in doc.units:
        if u.kind != "sentence" or u.item >= 0 or u.quoted or not u.head or u.last - u.first > 7:
            continue
        rows = [x.strip() for x in doc.lines[u.first:u.last + 1] if x.strip()]
        measures = [x for x in rows if _BARE_MEASURE.match(x)]
        if len(rows) < 2 or len(measures) != 1 or not all(_SET_LINE.match(x) for x in rows):
            continue
        unit = re.sub(r"^[~≈\d',.\s]+", "", measures[0]).lower()
        seen.setdefault(unit, []).append(u.id)
    return {i for ids in seen.values() if len(ids) >= 2 for i in ids}


def done_captions(doc: Doc, lang: str) -> dict[int, int]:
    """The lists of things that were done, each with the unit that says so (-1: the list itself does): one
    introduced with a verb of trying ("I rebuilt it with:" + a list of flags, "Things I tried:") or right under a
    heading of tries ("## Attempted fixes"), or one that ends
    in its items' result ("- **Result:** no effect"). The caption's tense and person carry to its items, which
    alone are bare settings; a caption that asks, suggests, plans or hedges ("You could try:") carries nothing."""
    out = _captioned_lists(doc, lang)
    out.update({g: -1 for g in _result_closed_lists(doc) if g not in out})
    return out


# "- PyTorch: 2.10.0", "- 크기: 33GB": an item that names a property and its value
_PROPERTY = recache.compile(r"^[^:：\s][^:：]{0,30}[:：]\s*[^\s].{0,40}$")


def _settings_list(doc: Doc, group: int) -> bool:
    """A list of properties and their values ("### Successful configuration" / "- Image: …" / "- CUDA: 12.8") is a
    description of a setup, not its tries one by one."""
    heads = [plain(u.text) for u in doc.units if u.group == group and u.item >= 0 and u.head and u.kind == "sentence"]
    return bool(heads) and sum(1 for t in heads if _PROPERTY.match(t)) * 2 > len(heads)


def _tries_heading(doc: Doc, h: Unit, lang: str) -> bool:
    """Does the heading say that what is under it was tried: by its own words ("## Attempted fixes", "## What didn't
    work"), or as a topic under such a heading ("## All optimizations attempted" / "### Memory optimizations")?"""
    for k in (h.id, *reversed(h.path)):
        x = doc.units[k]
        own = language(x.text) if language(x.text) != "en" else lang
        role = heading_role(x.text, own)
        if role is not None:
            said = table(own).has("tense.tries", plain(x.text))
            # (above a topic, only a heading's own verb of trying carries: "## Required resolution" names a plan)
            return said and role in ("tried", "worked", "failed") or k == h.id and role in ("worked", "failed")
    return False


def _captioned_lists(doc: Doc, lang: str) -> dict[int, int]:
    """A caption right above the list says its items were done: a sentence or a one-line caption (level 7) with a
    verb of trying ("Things I tried:"), or a heading of tries (``_tries_heading``: "## Attempted fixes") over a list
    that is not a setup's properties. Other headings' role words speak through ``Context.roles`` instead."""
    return {u.group: cap.id for u, cap in _list_captions(doc) if _says_list_done(doc, cap, u, lang)}


def _list_captions(doc: Doc) -> list[tuple[Unit, Unit]]:
    """Each list's first item with the unit right above it (a line or two up, not an item itself): its caption, if
    anything is."""
    out: list[tuple[Unit, Unit]] = []
    seen: set[int] = set()
    prev = None
    for u in doc.units:
        if u.item >= 0 and u.index == 0 and u.head and prev is not None and u.group not in seen \
                and (prev.item < 0 or _captioning_item(prev, u)) and 0 < u.first - prev.last <= 2:
            seen.add(u.group)
            out.append((u, prev))
        if u.kind not in ("html", "rule"):
            prev = u
    return out


def caption_names_tries(words: str, lang: str) -> bool:
    """Do a caption's words name what is listed under it as tried ("Attempted Solutions", "Mitigations attempted",
    "What was tried"), by the cue table's verbs of trying and heading roles, not one try's own field ("What I did")?"""
    return table(lang).has("tense.tries", words) and heading_role(words, lang) in ("tried", "worked", "failed")


def _captioning_item(prev: Unit, first: Unit) -> bool:
    """Is ``prev`` an item that only captions the list nested under it ("- **Mitigations Attempted**:" over
    "  - Workers reduced to 2 → Still OOM")?"""
    return prev.head and prev.depth == first.depth - 1 and plain(prev.text).rstrip().endswith((":", "：")) \
        and len(plain(prev.text).split()) <= 6


# A line that is only a caption: a label and its colon, nothing after ("- **Attempted Solutions**:", "Tried:")
BARE_CAPTION = recache.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*|__)?(?P<w>[^*_:：\n]{2,60}?)(?:\*\*|__)?\s*[:：]\s*(?:\*\*|__)?\s*$")


def _short_caption(u: Unit) -> bool:
    """A line of its own that only names what follows: a few words ending in a colon."""
    cap = BARE_CAPTION.match(plain(u.text)) if u.head and u.first == u.last else None
    return cap is not None and len(cap.group("w").split()) <= 6


def _says_list_done(doc: Doc, cap: Unit, first: Unit, lang: str) -> bool:
    if (cap.kind == "sentence" or cap.kind == "heading" and cap.level >= 7) \
            and _says_done(cap.text, language(cap.text) if language(cap.text) != "en" else lang):
        return True
    if cap.kind == "sentence" and _short_caption(cap) \
            and caption_names_tries(plain(cap.text).strip(" :："), language(cap.text) if language(cap.text) != "en" else lang):
        # ("Things tried:", "시도한 방법:" over a list: a heading of tries written as a line of its own)
        return True
    if cap.item >= 0 and _captioning_item(cap, first):
        # ("- **Mitigations Attempted**:" over its own nested list: a heading of tries, written as an item)
        return caption_names_tries(plain(cap.text).strip(" :："), lang)
    # (a caption in bold, "**Attempted Solutions (All Failed)**:", is a heading of tries as "## Attempted fixes" is)
    return cap.kind == "heading" and first.depth == 1 and _tries_heading(doc, cap, lang) \
        and not _settings_list(doc, first.group)


def _plan_items(doc: Doc, lang: str) -> dict[int, int]:
    """The items of a list whose caption names it a plan, each with that caption: "**Next steps:**" or "TODO:" on the
    line above the list, or an item holding a nested list ("- Something to try" / "    - Parallelize the loader").
    The caption's role words are a heading's (``heading_role``), so its items are steps as under a next-steps
    heading. An item that captions a list of its own is not a step: its items are."""
    caps: dict[int, int] = {}  # list group -> its caption
    parent: dict[int, Unit] = {}  # depth -> the last item's first unit at that depth
    prev = None
    for u in doc.units:
        if u.item >= 0 and u.head:
            if u.index == 0 and u.group not in caps:
                cap = parent.get(u.depth - 1) if u.depth >= 2 else prev
                if cap is not None and 0 < u.first - cap.last <= 2 and (cap.item >= 0 or cap.kind == "sentence" or
                                                                     cap.kind == "heading" and cap.level >= 7) \
                        and _names_plan(cap.text, lang):
                    caps[u.group] = cap.id
            parent[u.depth] = u
        if u.kind not in ("html", "rule"):
            prev = u
    holders = {u.item for u, nxt in zip(doc.units, doc.units[1:]) if u.item >= 0 and nxt.item >= 0 and nxt.depth > u.depth}
    return {u.id: caps[u.group] for u in doc.units
            if u.item >= 0 and u.head and u.group in caps and u.item not in holders}


def _names_plan(text: str, lang: str) -> bool:
    """A caption of a few words whose role is a plan ("Next steps:", "**TODO**", "Something to try"); a longer
    sentence is no caption ("This remaining gap is due to:"), and one told to the reader is instructions ("Things
    you need to do:")."""
    t = plain(text).strip(" :：*_")
    own = language(t)
    if len(t.split()) > 4 or len(t) > 40 or re.search(r"\b(?:you|your|was|were)\b", t, re.I):
        return False
    return heading_role(t, own if own != "en" else lang) == "plan"


def _result_closed_lists(doc: Doc) -> list[int]:
    """ "- HSA_ENABLE_SDMA=0" / "- MIOPEN_* flags" / "- **Result:** no effect": tries and their result. A list of
    one setup's fields ("- Model: dim=768" / "- Runtime: BF16" / "- Status: hangs") describes that setup instead."""
    items: dict[int, list[Unit]] = {}
    for u in doc.units:
        if u.item >= 0 and u.head:
            items.setdefault(u.group, []).append(u)
    out = []
    for group, us in items.items():
        lab = _sentence_label(us[-1].text)
        fields = sum(bool(_FIELD_ITEM.match(plain(x.text))) for x in us[:-1])
        if us[-1].index >= 2 and lab and lab[0] in ("result", "outcome") and fields * 2 < len(us) - 1:
            out.append(group)
    return out


_FIELD_ITEM = recache.compile(r"^[A-Za-z][\w /-]{0,24}:\s+\S")


_PRO_DROP = frozenset({"zh", "ja", "ko"})
# A sentence with one of these asks, proposes or plans: it reports no try, whatever verb of trying it holds
_NOT_TOLD = frozenset({"a question", "modal (could, should, maybe)", "future or plan words", "conditional", "imperative",
                       "second person"})


def _says_done(text: str, lang: str) -> bool:
    if not table(lang).has("tense.tries", plain(text)):
        # "We began with the following settings:" lists the setup, and "此处一并分享给大家：" (shared with you
        # here:) a routine to follow, not tries: a caption's own verb of trying carries to its items
        return False
    f: dict[str, float] = {}
    _word_features(plain(text), lang, f)
    # (Chinese, Japanese and Korean leave the subject out: "尝试过以下方法" is "I tried these", its verb's form says done)
    did = ("first person" in f or lang in _PRO_DROP) and (
        "a subject with a past-tense verb" in f or "opens with a past-tense verb" in f or "an action verb" in f)
    return did and not f.keys() & _NOT_TOLD


def _body_before_posts(doc: Doc) -> bool:
    """An issue body with no author line above it ("### Describe the bug" ... then "### alice — date"): the first post
    is a reply, and who asked is not known."""
    start = doc.posts[0][0] if doc.posts else 0
    return any(u.kind == "sentence" and u.post < 0 and u.first < start and len(u.path) >= 2 and not _META.search(u.text)
               for u in doc.units)


# A script's first lines before its story: the shebang, the note of where it came from, a licence line.
_HEADER_LINE = recache.compile(r"^\s*(?:#!|<!--.*-->\s*$|#\s*(?:SPDX-[\w-]+:|Copyright\b)|#?\s*$)", re.I)


def _file_header(doc: Doc, u) -> bool:
    return u.kind == "code" and all(_HEADER_LINE.match(doc.lines[i]) for i in range(u.first, u.last + 1))


def _opening(doc: Doc, roles: dict[int, str | None] | None = None, replying: bool = False) -> set[int]:
    """The blocks that state the problem: the first paragraph under the title, and the first paragraph of the
    thread's first post (the failing baseline, not a try) unless `replying` (an issue body stands above it)."""
    out: set[int] = set()
    sents = [u for u in doc.units if u.kind == "sentence" and not u.quoted]
    sub = next((u.first for u in doc.units if u.kind == "heading" and u.level >= 2 and u.level <= 6), None)
    # The paragraphs under the title, before any section (a document without sections: its first one).
    top = [u for u in sents if u.item < 0 and u.post < 0 and len(u.path) <= 1 and u.head and not _META.search(u.text)
           and not _FIELD.match(u.text) and not _PROBLEM_LINE.match(plain(u.text)) and not _numbered_try(u.text)
           and (sub is None or u.first < sub)]
    # (a paragraph that follows a command block or a list is no statement of the problem: the story has begun)
    body = next((u for u in doc.units if u.kind not in ("heading", "front", "html", "rule") and u.post < 0
                 and not _file_header(doc, u)), None)
    if body is not None and not (body.kind == "sentence" and body.item < 0):
        top = []
    out |= {u.block for u in (top if sub is not None else top[:1])}
    roles = roles or {}
    begun = sub is not None and any(u.first < sub and u.post < 0 and (u.kind in ("code", "command", "row") or u.item >= 0)
                                    for u in doc.units)
    if not top and sub is not None and not doc.posts and not begun:
        # No paragraph under the title: the first section's first paragraph states the problem ("## Status" /
        # "PyTorch 2.3 on gfx1010: every Conv2d forward segfaults"), unless that section is a try or a dated entry
        # (or the story began before it: entries listed under the title, a command block)
        h = next(u for u in doc.units if u.kind == "heading" and u.first == sub)
        first = next((u for u in sents if u.path and u.path[-1] == h.id and u.item < 0 and u.head), None)
        if first is not None and roles.get(h.id) not in ("worked", "failed") and not _STAMP.match(plain(h.text) + " ") \
                and not _TRY_HEAD.search(plain(h.text)) and not _VERDICT_MARK.search(first.text[:4]) \
                and not _MEASURED.match(plain(first.text)) and not _numbered_try(first.text):
            out.add(first.block)  # ("Attempt 1: batch 8 → OOM" first: the story of the tries has begun)
    from dbglog.docreader.units import post_author

    post0 = next((u for u in sents if u.post == 0 and u.item < 0 and not _FIELD.match(u.text) and not post_author(u.text)
                  and not any(roles.get(h) == "boilerplate" for h in u.path)
                  and not (u.first > 0 and doc.lines[u.first - 1].lstrip().startswith("<summary"))), None)
    if post0 is not None and not _ADDRESSED.match(post0.text) and not replying:
        out.add(post0.block)  # ("Hi @x, I have tried ...": a reply, not the report)
    # An issue form's problem field ("### Describe the bug", "当前行为 | Current Behavior"): its first paragraph.
    for h in doc.units:
        if h.kind == "heading" and h.level >= 2 and any(table(lg).has("heading.problem", plain(h.text).lower())
                                                        for lg in LANGS):
            first = next((u for u in sents if u.path and u.path[-1] == h.id and u.item < 0), None)
            if first is not None:
                out.add(first.block)
    return out


# "Then we pinned ...", "First I rebuilt ...": an adverb that may open an imperative, followed by who did it.
_NARRATED = recache.compile(r"^(?:just|simply|first|then|finally|always|never|after that|next)\b[\s,]+"
                       r"(?:i|we|they|he|she|someone|somebody|nobody)\b", re.I)


# "To split the problem, try with X", "If you can, also run Y": an imperative after a leading clause.
_LATE_IMPERATIVE = recache.compile(r"^(?:(?:to|if|when|for|once|before|after|while)\b[^,;:]{2,60}[,;:]|(?:until|unless)\b[^,;:]{2,60}?[,;:]?)"
                              r"\s*(?:please\s+|also\s+|just\s+)?"
                              r"(?:try|use|set|add|run|install|disable|enable|check|update|upgrade|downgrade|rebuild|pass|"
                              r"export|increase|reduce|switch|verify|apply|replace|change|restart|remove)\b", re.I)
# "**Status:** Open", "Environment: ..." above the problem statement: fields, not the statement itself.
_FIELD = recache.compile(r"^\W{0,3}(?:\*\*|__)?(?:status|state|environment|env|setup|hardware|versions?|tags|labels|"
                    r"related files|owner|date|priority|severity)(?:\*\*|__)?\s*:", re.I)
_META = recache.compile(r" · |^<!--")
_ADDRESSED = recache.compile(r"^\W{0,3}(?:(?:hi|hey|hello|thanks|thank you|dear)\b[\s,]*)?`?@[\w.-]+", re.I)


# A paragraph that starts like an error line ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate ...")
# is output pasted as text: its words are the program's, not the author's.
# (and a package manager's progress lines: "Requirement already satisfied: ...", "Installing collected packages")
_PASTED = recache.compile(r"^\W{0,2}(?:[\w.]*(?:Error|Exception|Warning)\b:|Traceback\b|FATAL\b|ERROR\b|\[E\]|E\d{4} |"
                     # a C++ library's log record (glog, c10): "[E ProcessGroupNCCL.cpp:737] ...", "[rank0]:[W socket.cpp:663]"
                     r"(?:\[rank\d+\]:)?\[[EWIF]\d{0,4} [^\]\n]{0,60}\.(?:cpp|cc|cu|h|hpp|c):\d+\]|"
                     # (a source line, with its path: "/app/ggml/src/iqk/iqk_mul_mat.cpp:16600: GGML_ASSERT(...) failed")
                     r"RuntimeError|CUDA error|terminate called|Segmentation fault|GGML_ASSERT\b|OMP: (?:Warning|Error) #|"
                     r"Tried to allocate \d|"  # (torch's out-of-memory message, pasted without its exception's name)
                     r"(?:/?[\w.-]+/){0,30}[\w-]+\.(?:cpp|cc|cu|cuh|c|h|hpp|py):\d+|"
                     r"Requirement already satisfied:|Installing collected packages\b|Successfully (?:installed|built|uninstalled) \S|"
                     r"Collecting \S+|Downloading \S+\.(?:whl|tar\.gz)|Building wheels? for\b|"
                     # a log record: a time to the second, then a level ("[2021-01-25 23:17:21,310][x.utils][INFO] - ...")
                     r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[,.\d]{0,7}\]?[^\n]{0,80}?\b(?:INFO|DEBUG|WARN|WARNING|ERROR|CRITICAL|TRACE)\b)")


def printed_failure(doc: Doc, u: Unit) -> bool:
    """Do the lines a console command printed ("$ python -c 'import flash_attn'" and the traceback under it) show a
    failure the signature catalog knows (an exception, a CUDA error, a missing library)? Words need not say so. So
    does a comment after a command that is what it printed ("ulimit -l unlimited  # Operation not permitted")."""
    if u.kind != "command":
        return False
    if u.comment and u.comment != u.desc and not u.prompted and ERROR_LINE.match(plain(u.comment)):
        return True
    if not u.prompted or u.last <= u.first:
        return False
    return _fails("\n".join(doc.lines[u.first + 1:u.last + 1]))


@lru_cache(maxsize=1024)
def _fails(printed: str) -> bool:
    from dbglog.diagnose.signatures import classify_text  # (the catalog loads only for a console session's output)

    return classify_text(printed[:64 * 1024]) is not None


def features(u: Unit, ctx: Context) -> dict[str, float]:
    """The cues one unit shows, each named in plain words (they are what `import --explain` prints)."""
    f: dict[str, float] = {}
    _place_features(u, ctx, f)
    if u.kind == "command":
        oc = outcome_in(u.comment, ctx.lang) if u.comment else None
        if not oc and u.prompted and u.desc:
            oc = outcome_in(u.desc, ctx.lang)  # "# succeeds with --gpus all" over "$ docker run --gpus all"
        f["a command"] = 1.0
        if oc:
            f["its comment gives an outcome"] = 1.0
        elif printed_failure(ctx.doc, u):
            f["what it printed shows a failure"] = 1.0
    elif u.kind == "row":
        _row_features(u, f)
    elif u.kind == "sentence":
        _sentence_features(u, ctx, f)
        if "pasted error output" in f:
            # ("/app/ggml/src/x.cpp:16600: GGML_ASSERT(...) failed": the program's words name a file and a failure;
            # they are no arrow from a change to its result)
            for cue in ("an arrow from what was done to how it went", "opens with a named setting or file, and how it went"):
                f.pop(cue, None)
        if "an item of a list of what was done" in f:
            f.pop("imperative", None)  # "Things I tried:" / "• Flash with other VMs": the list's tense, not an order
        if "an action verb" in f and "'still' or 'no change'" in f and not u.head \
                and not f.keys() & {"a question", "modal (could, should, maybe)", "conditional", "future or plan words"}:
            # "... it hangs at init; turning deepspeed off, the same": after the problem, a change that left it as it
            # was is a try, even in the paragraph that states the problem
            f.pop("the opening paragraph (the problem)", None)
        elif "the opening paragraph (the problem)" in f and (_names_tries(u.text, f, ctx.lang)
                                                              or "a dated entry that names a change" in f):
            # "Have tried using environment variable values of: 9.0.0, 9.0.6, 10.3.0": the problem's post lists what
            # was tried already; "**2025-03-02** — upgraded NCCL ...": a log's dated entry, not the problem
            f.pop("the opening paragraph (the problem)", None)
    return f


def _names_tries(text: str, f: dict[str, float], lang: str) -> bool:
    """A sentence whose verb of trying ("tried", "tested") names the settings or versions tried, neither asking,
    proposing nor planning."""
    return "names a setting, flag, version or file" in f and "a subject with a past-tense verb" in f and \
        table(lang).has("tense.tries", plain(text)) and not f.keys() & _NOT_TOLD


# An error quoted in a code span and then told about ("`ModuleNotFoundError: No module named 'fire'` が出た。",
# "`CUDA error: out of memory` again after the update"): the writer's sentence, not the program's output.
_QUOTED_THEN_TOLD = recache.compile(r"^\W{0,2}`[^`\n]{1,300}`\s*[(\[]?[^\W\d_]")


def _pasted_line(text: str) -> bool:
    """Is this sentence a program's output pasted as text (``_PASTED``), not a writer's sentence quoting one?"""
    return bool(_PASTED.match(text)) and not _QUOTED_THEN_TOLD.match(text)


def _place_features(u: Unit, ctx: Context, f: dict[str, float]) -> None:
    """Where the unit sits: the heading path's role, the thread, the quote, the problem statement."""
    role = next((ctx.roles.get(h) for h in reversed(u.path) if ctx.roles.get(h)), None)
    if role in ("worked", "failed"):
        f[f"under a heading saying what {role}"] = 1.0
        role = "tried"
    if role:
        f[f"under a {role} heading"] = 1.0
    if u.block in ctx.pasted or (u.kind == "sentence" and not u.head and _pasted_line(u.text)):
        # (a log line pasted into the middle of a paragraph, "CUDA error: an illegal memory access was encountered"
        # under "When I redo the prompt it crashed again:", is the program's words too)
        f["pasted error output"] = 1.0
    cap = ctx.captions.get(u.group) if u.item >= 0 else None
    if cap is not None and (u.depth == 1 or cap < 0 or ctx.doc.units[cap].item >= 0) and (
            u.head or cap < 0 or ctx.doc.units[cap].kind != "heading"):
        # (under "## What worked", an item's later sentences tell how its try went: "That also held for 3 days.")
        f["an item of a list of what was done"] = 1.0
    if u.id in ctx.caption_items:
        f["an item that captions the tries listed under it"] = 1.0  # ("- **Attempted Solutions**:": not a try itself)
    if u.item >= 0 and u.group in ctx.legend:
        f["a legend of the fields the entries use"] = 1.0
    if u.item >= 0 and u.group in ctx.results:
        f["an item of a list captioned as the result (Result:)"] = 1.0
    if u.block in ctx.opening:
        f["the opening paragraph (the problem)"] = 1.0
    if u.post >= 0:
        f["in a thread"] = 1.0
        f["by the asker" if u.author == ctx.asker else "by another person"] = 1.0
        if u.post > 0:
            f["a reply"] = 1.0
    if u.quoted:
        f["quoted"] = 1.0


def names_change(text: str) -> bool:
    """Does the sentence name a change in any tense ("roll back", "reboots", "upgraded", "capping")?"""
    verbs = _change_verbs()
    for w in re.findall(r"[a-z]+", _CODE.sub(" ", text.lower())):
        stem = re.sub(r"(?:ing|ed|es|s|d)$", "", w)
        if w in verbs or stem in verbs or stem + "e" in verbs or (len(stem) > 3 and stem[-1] == stem[-2] and stem[:-1] in verbs):
            return True
    return False


@lru_cache(maxsize=1)
def _change_verbs() -> frozenset:
    t = table("en")
    skip = {"see", "note", "do", "look", "read", "write", "please", "remember", "never", "always", "just", "simply", "first",
            "then", "finally", "go", "open", "follow", "refer", "navigate", "choose", "select", "call", "point", "search",
            "be sure", "feel free", "don't", "do not", "log", "print", "record", "document", "maintain", "summarize"}
    return frozenset(w for w in t.raw["mood"]["imperative"] if w not in skip) | {"roll", "drain", "cap", "rollback"}


# An entry's number in brackets before its words ("(2) ..."): the words' shape starts after it (``plain`` already takes
# the CJK forms, "（2）", "②", "2、", off).
_ENUM_LEAD = recache.compile(r"^\s*\(\d{1,2}\)\s*")


def _several_runs(text: str, lang: str, f: dict[str, float]) -> None:
    """One sentence that tells of several runs: settings under one verdict, or runs with opposite outcomes."""
    if lang == "en" and listed_tries(text):
        f["settings listed under one verdict (A, B; nothing helps)"] = 1.0
    if opposite_clauses(text, lang):
        f["runs set side by side with opposite outcomes (A fails, B works)"] = 1.0


def _sentence_language(text: str, doc_lang: str) -> str:
    """The language a sentence is read in: its own, unless its words are too few to tell it from the document's."""
    lang = language(text) if text else doc_lang
    if lang == "en" and doc_lang != "en" and _common_words(_EN, text, max(1, len(text.split()))) < 3:
        # a short German or Chinese sentence full of code names reads as the document does; an English reply in a
        # Russian thread ("I found the best solution for this error was ...") is English
        return doc_lang
    if lang == "zh" and doc_lang == "ja":
        return "ja"  # (kanji are Japanese too: "`pip install fire` で解決。" has one kana and is the document's)
    return lang


def _sentence_features(u: Unit, ctx: Context, f: dict[str, float]) -> None:
    text = _ENUM_LEAD.sub("", plain(u.text))
    lang = _sentence_language(text, ctx.lang)
    lab = _sentence_label(u.text)
    if lab:
        f[_LABELLED.get(lab[0], "labelled as reasoning")] = 1.0
        text = lab[1] or text
        if lab[0] == "did" and _numbered_try(u.text):
            f.pop("under a lessons heading", None)  # ("Lessons learned" / "Attempt 1: bs 8 → OOM": a try told there)
    text = _UPDATE_LEAD.sub("", text) or text  # "**UPDATE (same evening):** `--lowvram` alone: still OOM"
    topic = None if lab else _TOPIC_LEAD.match(u.text)
    _word_features(text, lang, f, shape=plain(u.text[topic.end():]) if topic else None)
    if _MEASURED.match(text) and (_CONFIG_CHARS.search(_MEASURED.match(text).group("cfg"))) or (
            u.id in ctx.sweeps):
        # "ckpt(mlp) + compile(fwd + bwd): 17'446 MiB, 1055 ms", "bs=8, seq=4096 -> OOM": a setting and what it measured
        f["a setting and what it measured"] = 1.0
    if lang == "en" and _STAMP.match(_DECOR.sub("", u.text).lstrip("-*+ ")) and names_change(text):
        # "10:25 — we roll the driver back to 550": a timeline tells its past in the present tense
        f["a dated entry that names a change"] = 1.0
    # In the problem statement "PyTorch 2.3 on gfx1010: every Conv2d segfaults" is the setup and its symptom, not a try
    # and its verdict; an explicit arrow is still one.
    if _verdict_after(text, lang, bool(lab)) and ("the opening paragraph (the problem)" not in f or "→" in text
                                                  or "->" in text):
        f["an arrow from what was done to how it went"] = 1.0
    if "imperative" in f and lang == "en" and _steps_then_verdict(text):
        # "Delete `r9nano_*.yaml` from rocBLAS, rebuild rocBLAS, issue resolved.": verb-first notes of steps done, and
        # how they went; advice says what will happen ("..., and it should work")
        f.pop("imperative")
        f["an arrow from what was done to how it went"] = 1.0
    if _VERDICT_MARK.match(u.text.lstrip("-*+ 0123456789.)[]xX")):
        _ticked_features(u.text, text, lang, f)
    _several_runs(text, lang, f)
    if u.item >= 0:
        _item_features(u, f)
    if _PLACEHOLDER.search(u.text):
        f["template placeholder"] = 1.0
    if u.id in ctx.fixes:
        # "the solution for me was:" / "export XLA_PYTHON_CLIENT_MEM_FRACTION=0.8": the asker's fix, not an order
        f.pop("imperative", None)
        f.pop("outcome: failed", None)
        f["says what fixed it"] = f["outcome: worked"] = 1.0
    if _PROBLEM_LINE.match(plain(u.text)):
        f["an entry's problem line (issue N: the error)"] = 1.0
    if "labelled as what was done" in f:
        f.pop("imperative", None)  # "edit: export ROCM_PATH=...": a note of what was done, in the verb-first style
    lead = PLAN_LEAD.match(plain(u.text))
    if lead and plain(u.text)[lead.end():].strip():
        f["labelled as a plan"] = 1.0


def _sentence_label(raw: str) -> tuple[str, str] | None:
    """The field label a sentence opens with ("Result: ...", "edit: ...", "解法：..."), or None."""
    lab = label_of(raw, ATTEMPT_LABELS)
    if lab and lab[0] == "did" and _label_word(raw) not in _DID_WORDS:
        lab = None  # "Setup:", "Config:", "Code:" name a thing, not something done
    if not lab:
        rest = _numbered_try(raw)
        lab = ("did", rest) if rest else None
    return lab or _foreign_label(raw)


def _numbered_try(raw: str) -> str:
    """ "**Attempt 2:** batch size 4, no checkpointing", "Versuch 3: mit Gradient Checkpointing": what a try's noun and
    number label (in any language a cue table names the noun for), or ''."""
    m = attempt_head().match(plain(raw)) if len(raw) <= 600 else None
    return (m.group("rest") or "").strip() if m else ""


def _steps_then_verdict(text: str) -> bool:
    """Steps told verb first, then a short last clause, after a comma, that says how they went in the past or as a
    state ("..., issue resolved", "..., still hangs", "..., works"), not what will or might happen."""
    parts = text.rstrip(" .!").rsplit(", ", 1)
    if len(parts) < 2 or not parts[0].strip() or len(parts[1].split()) > 4:
        return False
    last, t = parts[1], table("en")
    if t.has("mood.modal", last) or t.has("tense.future", last) or re.search(r"\b(?:will|should|would|can|to)\b", last, re.I):
        return False
    return outcome_of(last, "en") in ("worked", "failed", "partial")


def _verdict_after(text: str, lang: str, labelled: bool) -> bool:
    """Does the sentence part what was done from how it went: an arrow, a dash, or a colon before a verdict?"""
    arrow = _ARROW.split(text, maxsplit=1)
    if len(arrow) < 2:
        arrow = _DASH.split(text, maxsplit=1)  # "Eager mode (`--enforce-eager`) — crash rate unchanged"
    if len(arrow) < 2 and not labelled:
        arrow = colon_verdict(text, lang) or _closing_verdict(text, lang) or arrow
    return len(arrow) == 2 and bool(arrow[0].strip()) and bool(outcome_of(arrow[1], lang))


# A verdict closing a CJK sentence on its own: "…，成功", "…，不成功。", "… zero3+offload 不成功", "…lora 7b成功" (after
# a comma or a space, or glued to the latin name it judges; a negation and "了" may go with it).
_CJK_TAIL = recache.compile(r"(?:[，,；;、]\s*|(?<=[A-Za-z0-9+)])\s?)(?P<n>不|没有?|未|无法|不能|没能)?(?P<v>[^\s，,；;。：:、（）()A-Za-z0-9]{1,4}?)"
                            r"[了啦]?[。！!～~]*$")


def _closing_verdict(text: str, lang: str) -> list[str] | None:
    """[what, verdict] when a Chinese, Japanese or Korean sentence ends on a bare verdict (no arrow, dash or colon
    parts them there); a question ("…能跑嘛") or a clause that only ends on one ("就会卡住") is no such sentence."""
    if lang not in _SUBSTRING_LANGS:
        return None
    whole = text.strip()
    cut = max(0, len(whole) - 40)  # (the verdict closes the sentence: its last 40 characters hold it)
    m = _CJK_TAIL.search(whole, cut)
    if m is None or table(lang).has("mood.question", whole[-2:]):
        return None
    t = table(lang)
    if not (t.rx["outcome.worked"].fullmatch(m.group("v")) or t.rx["outcome.failed"].fullmatch(m.group("v"))):
        return None  # ("…,就会卡住": a clause that tells more than how it went)
    verdict = (m.group("n") or "") + m.group("v")
    head = whole[:m.start("v") - len(m.group("n") or "")].rstrip(" ，,；;、")
    said = outcome_of(verdict, lang)
    return [head, verdict] if said in ("worked", "failed") and len(head) >= 4 else None


# A verb in the third person opening a sentence with no subject ("Detects", "Registers", "Ensures"): what a component
# does. (Not "Access", "Process": -ss; not "Was"/"Has"/"Is": auxiliaries open a sentence of their own kind.)
_DOES = recache.compile(r"^(?!(?:Is|Was|Has|Does|This|Its|Yes|Thanks|Bus|Gas)\b)[A-Z][a-z]{1,14}[^s\W]s\s+[`a-z]")


def _ticked_features(raw: str, text: str, lang: str, f: dict[str, float]) -> None:
    f["marked with a verdict (✅ ❌)"] = 1.0
    if lang == "en" and _DOES.match(_VERDICT_MARK.sub("", plain(raw), count=1).strip()) \
            and not table("en").has("mood.gerund_result", text.split(None, 1)[0].lower() if text.split() else ""):
        # "✅ Detects the GPU using NVML", "❌ Prevents over-subscription": what a thing does, ticked off (a try is
        # told as done or to do, "✅ Set X", "✅ Rebuilt Y"; "✅ Works on H100" is a verdict)
        f["says what a thing does (third person)"] = 1.0


# "- [Removing the unused import fixes it](#import)": an entry of a table of contents, a link to a heading below.
_TOC_ENTRY = recache.compile(r"^\W{0,3}(?:\d{1,3}[.)]\s*)?\[[^\]]{1,200}\]\(#[^)\s]{1,120}\)\W{0,3}$")


def _item_features(u: Unit, f: dict[str, float]) -> None:
    f["a list item"] = 1.0
    if _TOC_ENTRY.match(u.text.strip()):
        f["a table of contents entry"] = 1.0
    if _BARE_PATH.fullmatch(_VERDICT_MARK.sub("", plain(u.text)).strip(" -*:")):
        f["only names a file or path"] = 1.0
    if u.checkbox == " ":
        f["an empty checkbox"] = 1.0
    elif u.checkbox == "x":
        f["a ticked checkbox"] = 1.0
    if u.checkbox and table("en").has("boilerplate.checkbox", u.text):
        f["issue-form wording"] = 1.0  # ("- [x] I am on the latest version": a form's box)
    if u.checkbox and u.post < 0:
        # A task list is written in the imperative ("- [x] Try fp16", "- [ ] Check H100"): its box, not its mood,
        # says whether it was done (in a thread, "- [ ] try X" may still be a suggestion to someone).
        f.pop("imperative", None)


# "Next: ...", "todo: ...", "Not yet run: ...": a label that says the rest is a plan (read.py strips it off the step).
PLAN_LEAD = recache.compile(r"^(?:todo|to do|next(?: (?:steps?|actions?|experiments?|tests?|runs?))?|not yet (?:run|tried)|still to try|things i still want to try|"
                       r"later|plan|action required|待办|下一步|次(?:のステップ)?|今後|다음 단계|nächster schritt|"
                       r"als nächstes)\s*[:：-]\s*", re.I)


CARD_FIELD = "a field of a record card (| **Outcome** | ... |)"
HEADER_TRIES = "its header names tries and their results"  # ("| Attempt | Result |", "| Change | Latency |")
_BOLD_CELL = recache.compile(r"(?:\*\*|__)[^*_\n]{1,40}(?:\*\*|__)")


def _row_features(u: Unit, f: dict[str, float]) -> None:
    if u.index < 0:
        f["a table header"] = 1.0
        return
    f["a table row"] = 1.0
    if len(u.cells) == 2 and not any(h.strip() for h in u.header) and _BOLD_CELL.fullmatch(u.cells[0].strip()):
        # "| | |" over "| **Outcome** | PASSED |", "| **Image** | ... |": a card of one record's fields, written as a
        # table without a header; a field of that record, not a try of its own
        f[CARD_FIELD] = 1.0
        return
    what, res = row_roles(u)
    box = next((c.strip().lower() for c in u.cells if c.strip().lower() in ("[ ]", "[x]")), None)
    if box:  # "| [ ] | Roll the fix out to the fleet | |": a task list kept as a table
        f["an empty checkbox" if box == "[ ]" else "a ticked checkbox"] = 1.0
    if res >= 0 and res < len(u.cells) and u.cells[res].strip():
        cell = u.cells[res]
        said = outcome_of(cell, language(cell))
        if said == "untested" or (box == "[ ]" and said == "inconclusive"):
            f["outcome: untested"] = 1.0  # "waiting on change approval": listed, not done yet
        elif said:
            f["its result column gives an outcome"] = 1.0
        elif box is None and column_roles(u.header)[1] == res and ATTEMPT_COL.search(plain(u.header[what] if 0 <= what < len(u.header) else "")):
            # "| Attempt | Result |" over "| GPU reset | Fabric state back to In Progress |": the header says each row
            # is a try and what came of it, in words no outcome table knows (unless another cell says it was never
            # run: "| xformers 0.0.28 | not tried, the resolver wants torch 2.5 | — |")
            untried = outcome_of(" | ".join(u.cells), language(u.text)) == "untested"
            f["outcome: untested" if untried else HEADER_TRIES] = 1.0


def colon_verdict(text: str, lang: str) -> list[str] | None:
    """ "fp8 weights on top of `--lowvram`: works, 74 s per image": [the thing, the verdict] when a colon (not one
    inside `code`) parts a short thing from words that open with how it went."""
    text = _UPDATE_LEAD.sub("", text) or text
    masked = _CODE.sub(lambda m: "x" * len(m.group(0)), text)
    cut = masked.find(": ")
    if cut <= 0:
        return None
    left, right = text[:cut], text[cut + 2:]
    if lang == "en" and len(right.split()) >= 3 and table("en").rx["mood.imperative_lead"].match(right.strip()) \
            and outcome_of(right.split()[0], lang) is None:
        return None  # "8-GPU validation: Confirm the fix resolves the issue": a test to run, not how one went
    if 0 < len(left.split()) <= 10 and not _NOT_A_THING.search(left) and left.count("(") <= left.count(")") \
            and outcome_of(" ".join(right.split()[:4]), lang) not in (None, "untested"):
        return [left, right]
    return None


# "**Proton line-level profiling**: Added PC-sampling mode to ...", "**TMA kernel** (`fla-tma`): New variant ...": a
# bold name for the item, then what was done; its tense and mood are the rest's (a field label is read as a label).
_TOPIC_LEAD = recache.compile(r"^\s*(?:\*\*|__)[^*_\n]{1,60}?(?:[:：](?:\*\*|__)|(?:\*\*|__)\s*(?:\([^()\n]{0,80}\)\s*)?"
                              r"(?:[:：]|\s[—–-]))\s*(?=\S)")


# (a contrast or a time after it tells a try: "Same error, but with --enforce-eager it works")
_TRY_FOLLOWS = recache.compile(r"\b(?:but|however|when|after|until|once|by|so i|then|except)\b", re.I)


def me_too(text: str) -> bool:
    """ "I have the exact same issue here", "Also seeing this on H100", "P100 有同样问题": a report that the bug happens
    to the writer too (the cue table's words for "the same problem"), short and telling no try of its own; not "I have
    the same error but when I disable eager mode it works", nor "Upgraded to 2.4, same issue"."""
    s = plain(text)
    lang = language(s)
    t = table(lang)
    if not t.has("mood.same_problem", s):
        return False
    if lang in ("zh", "ja"):
        return len(s) <= 40 and not t.has("tense.action", s)
    words = s.split()
    return len(words) <= 16 and not _TRY_FOLLOWS.search(s) and not t.has("tense.tries", s) and not (
        lang == "en" and words and _is_past(_NOT_WORD.sub("", words[0]).lower(), t)) and (
        outcome_of(s, lang) != "worked" or s.rstrip().endswith("?"))  # ("how to solve it?" asks; it tells no fix)


def _outcome_words(text: str, lang: str, t: Table, f: dict[str, float]) -> None:
    """How the sentence says it went: an outcome, or "still" / "no change"."""
    oc = outcome_of(text, lang)
    if oc:
        f[f"outcome: {oc}"] = 1.0
    if t.has("outcome.still", _STILL_MEANS.sub(" ", text)):
        f["'still' or 'no change'"] = 1.0


def _word_features(text: str, lang: str, f: dict[str, float], shape: str | None = None) -> None:
    """The cues of the sentence's words; ``shape``: the part whose tense and mood are the sentence's (after a bold
    name for it), when not the whole."""
    t = table(lang)
    words = text.split()
    if len(words) <= 8:
        f["short"] = 1.0
    prose_only = _CODE.sub(" ", text)
    if t.has("person.first", prose_only):
        f["first person"] = 1.0
    if t.has("person.second", prose_only):
        f["second person"] = 1.0
    _outcome_words(text, lang, t, f)
    if _KNOB.search(text):
        f["names a setting, flag, version or file"] = 1.0
    # (a code span's words are the program's: "`I once saw a UFO`" printed; "several months later" tells a story)
    if t.has("tense.future", _SPAN_LATER.sub(" ", prose_only)):
        f["future or plan words"] = 1.0
    # "could not run it after 0.4.2" is what happened; "..., so #10753 probably fixed it" hedges a cause, not the try
    if t.has("mood.modal", _PAST_INABILITY.sub(" ", _CAUSE_TAIL.split(_up_to_verdict(text, lang), maxsplit=1)[0])):
        f["modal (could, should, maybe)"] = 1.0
    if text.rstrip().endswith(("?", "？")) or (lang != "en" and t.has("mood.question", _last_clause(text))):
        f["a question"] = 1.0
    if lang == "en":
        # Tense and mood are read from the prose: a code span's words ("cudaMalloc failed") are the program's.
        prose = _CODE.sub(" CODE ", shape or text)
        _en_shape(prose, prose.split(), t, f)
    else:
        if t.has("tense.action", text) or t.has("forms.action", text):
            f["an action verb"] = 1.0
        lead = text[:6] if lang in _SUBSTRING_LANGS else " ".join(text.split()[:2])  # (the first word or two)
        if t.has("mood.imperative", lead) and not t.has("tense.future", lead):
            f["imperative"] = 1.0  # "试试 X" suggests; "下周试一下 X" plans
    if t.has("boilerplate.form", text) or (lang != "en" and table("en").has("boilerplate.form", text)):
        f["issue-form wording"] = 1.0  # bilingual forms ("我已经搜索过 ... | I have searched ...")
    if _LINKED_TEXT.sub("", text).count(" · ") >= 2:
        f["a metadata line (a · b · c)"] = 1.0


# A link's text: a page's title ("[error: ... · Issue #119 · NVlabs/instant-ngp](url)") is no metadata line of its own
_LINKED_TEXT = recache.compile(r"\[[^\[\]\n]{0,300}\]\([^()\s]{0,500}\)")


# Where a Chinese or Japanese clause ends: its punctuation, or a space between two CJK characters ("怎么都不行 后来换成
# 3090可以了": informal writing parts clauses with spaces; a space before a Latin word or `code` is word spacing, and
# Korean puts spaces between words, so hangul is not among them).
CJK_SPACE_GAP = r"(?<=[\u4e00-\u9fff\u3040-\u30ff])(?:\s|&nbsp;)+(?=[\u4e00-\u9fff\u3040-\u30ff])"
CLAUSE_GAP = recache.compile(r"[，,；;。：:]|" + CJK_SPACE_GAP)


def _up_to_verdict(text: str, lang: str) -> str:
    """A Chinese, Japanese or Korean sentence up to the clause that says how it went: "重装cudnn就解决了，可能 ..." hedges
    the cause after the verdict (English says it with "so ... probably", ``_CAUSE_TAIL``)."""
    if lang not in _SUBSTRING_LANGS:
        return text
    kept = []
    for clause in re.split(r"(?<=[，,；;。])", text):
        kept.append(clause)
        if outcome_of(clause, lang) in ("worked", "failed", "partial"):
            break
    return "".join(kept)


def _last_clause(text: str) -> str:
    """The clause a sentence ends with: a question is asked there ("数据传输是否有问题不是很明白，cpu是能跑的，换gpu就报错了"
    holds an embedded "whether" early on, and reports what ran)."""
    return CLAUSE_GAP.split(text.strip().rstrip("，,；;。 "))[-1]


def _gerund_of_action(word: str, t: Table) -> bool:
    """ "rebuilding", "running", "disabling": the -ing form of a verb one does to a system."""
    stem = word[:-3]
    verbs = _imperatives(t.lang)
    return stem in verbs or stem + "e" in verbs or (len(stem) > 2 and stem[-1] == stem[-2] and stem[:-1] in verbs) or (
        stem.startswith("re") and (stem[2:] in verbs or stem[2:] + "e" in verbs))


@lru_cache(maxsize=None)
def _imperatives(lang: str) -> frozenset:
    return frozenset(w.lower() for w in table(lang).raw["mood"]["imperative"] if " " not in w)


# "The solution was to turn off ACSCtl", "What finally fixed it was bucketing", "solved it by pinning 2.5.8": what
# fixed the problem, said after the fact.
_FIX_WAS = recache.compile(rf"\b(?:{_FIX_NOUN} (?:just |simply |actually )?(?:to )?|what (?:finally )?(?:fixed|solved|"
                      r"worked) (?:it |this )?(?:for (?:me|us) )?(?:was|is)|(?:fixed|solved|resolved) (?:it|this|the (?:issue|"
                      r"problem)) by)\b", re.I)


# "I needed to install the nightly and set ...", "we had to pin NCCL 2.18.6", "I ended up building it": what it took,
# told after the fact by the one who got it working
WHAT_IT_TOOK = recache.compile(r"(?<![\w'])(?:I|[Ww]e)\s+(?:(?:really|just|finally|also)\s+)?"
                               r"(?:(?:needed|had) to\s+(?!guess|say|admit|wait|ask)|ended up\b)")


_NOT_WORD = recache.compile(r"[^\w'-]")
_CONDITIONAL = recache.compile(r"^(?:if|when|unless|in case)\b", re.I)
_ED_OR_S = recache.compile(r"^\w+(?:ed|s)\b")


def _adverb_then_past(words: list[str], t: Table) -> bool:
    """ "Just ran into this with SDXL", "Then rebuilt it": an adverb that can open an order, before a past verb."""
    return len(words) > 1 and _NOT_WORD.sub("", words[0]).lower() in _ORDER_ADVERBS and _is_past(
        _NOT_WORD.sub("", words[1]).lower(), t)


_ORDER_ADVERBS = frozenset({"just", "simply", "first", "then", "finally", "always", "never", "also", "next"})


# A sentence opening with the order of the story ("Next,", "Later", "Then"): a plan only when the rest says so.
_SEQUENCER = recache.compile(r"^\W{0,3}(?:next|then|later|afterwards)\b,?", re.I)


# "Thread-based parallelization", "CPU-based fallback": a compound that names a kind of thing, not a past verb
_COMPOUND_ADJ = recache.compile(r"\w-(?:based|related|sized|shaped|specific)\W*$", re.I)


# A status in capitals opening the line ("PASS (no kill)", "FAIL: OOM", "SKIP"): a verdict, not the verb "pass"
_STATUS_WORD = recache.compile(r"^\W*" + _STATUS + r"\b")


# A time that has passed since ("several months later", "two days later"): the story's order, never a plan.
_SPAN_LATER = recache.compile(r"\b\w+ (?:seconds?|minutes?|hours?|days?|weeks?|months?|years?) later\b", re.I)
# Words of the future that also order a story told in the past ("I later updated", "once we pinned it, it held").
_NARRATING = recache.compile(r"\b(?:later|once)\b", re.I)


def _en_shape(text: str, words: list[str], t: Table, f: dict[str, float]) -> None:
    first = _NOT_WORD.sub("", words[0]).lower() if words else ""
    if t.find("mood.question_lead", text) and "?" in text:
        f["a question"] = 1.0
    if t.find("mood.answer_lead", text):
        f["opens like an answer (yes, no, confirmed)"] = 1.0
    if _CONDITIONAL.match(text):
        f["conditional"] = 1.0
    if first and _is_past(first, t) and not _COMPOUND_ADJ.search(words[0]):
        f["opens with a past-tense verb"] = 1.0
    elif first.endswith("ing") and len(first) > 4 and not t.has("mood.modal", text) and (
            t.has("mood.gerund_result", text) or (_gerund_of_action(first, t) and (any(
                _is_past(_NOT_WORD.sub("", w).lower(), t) for w in words[1:40]) or any(
                k in f for k in ("outcome: worked", "outcome: failed", "outcome: partial"))))):
        # "Rebuilding with X and running with Y got me further": the doing is the subject, the past verb its effect
        f["an action that says how it went (-ing ... worked)"] = 1.0
    elif (t.find("mood.imperative_lead", text) and not _ED_OR_S.match(text) and not _NARRATED.match(text)
          and not _STATUS_WORD.match(text)
          and not _NOUN_ATTACHED.match(text) and not _adverb_then_past(words, t)) or _LATE_IMPERATIVE.search(
            text[:80]):
        f["imperative"] = 1.0
    pos = 0
    while (m := _SUBJECT.search(text, pos)) is not None:  # overlapping: "At first we restarted" holds "we restarted"
        # A code span is a subject when it opens the sentence ("`NCCL_P2P_DISABLE=1` made the job start"),
        # not mid-sentence ("... gave `error` followed by ...").
        if _is_past(m.group("v"), t) and not (m.group(0).startswith("CODE") and text[:m.start()].strip()):
            f["a subject with a past-tense verb"] = 1.0
            break
        pos = m.start() + 1
    seq = _SEQUENCER.match(text)
    if seq and "a subject with a past-tense verb" in f and not t.has("tense.future", text[seq.end():]):
        f.pop("future or plan words", None)  # "Next, I built it from source": the story's order, told in the past
    if "future or plan words" in f and "a subject with a past-tense verb" in f and \
            not t.has("tense.future", _NARRATING.sub(" ", text)):
        f.pop("future or plan words")  # "I later updated it to 2.2, which resolved it": "later" tells the story's order
    if re.search(r"\b(?:works?|worked|helps?|helped|fixe[sd]|solved|resolved)\b.{0,40}\b(?:by|with|after|when)\s+"
                 r"(?:\w+ing)\b", text, re.I) and not t.has("mood.modal", text):
        f["an action that says how it went (-ing ... worked)"] = 1.0
    if (_FIX_WAS.search(text) or WHAT_IT_TOOK.search(text) and "outcome: failed" not in f) and not t.has("mood.modal", text):
        f["says what fixed it"] = 1.0
        f.pop("outcome: failed", None)
        f["outcome: worked"] = 1.0
    if _KNOB.match(text) and ("outcome: worked" in f or "outcome: failed" in f):
        f["opens with a named setting or file, and how it went"] = 1.0
    if re.search(r"\b(?:with|without|after|using|by|setting|adding|disabling|enabling|removing)\b.{0,80}\b"
                 r"(?:works?|worked|fixed|fixes|resolved|helps?|helped|solved|seems? to work|runs? fine|is fine)\b",
                 text, re.I):
        f["an action that says how it went (-ing ... worked)"] = 1.0
