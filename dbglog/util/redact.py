"""What may be stored or shown: text without control bytes, and without secrets.

Everything dbglog stores (the markdown in `logs/`, which is committed and shared, and the
database's text fields) and everything it prints from stored or captured text goes through
``clean``:

* **Control characters and terminal escapes** (``sanitize``): ANSI/VT escape sequences (CSI, OSC,
  DCS, 8-bit CSI, two-byte ESC sequences) are removed, ``\\r\\n`` and a lone ``\\r`` become ``\\n``,
  every other C0/C1 control character and DEL is dropped (NUL included: one NUL makes git treat
  a mirror file as binary). Tabs and newlines are kept.
* **Secrets** (``redact``), replaced by ``<redacted>``:
  - by the variable's name: ``NAME=VALUE`` / ``NAME: VALUE`` / ``--name VALUE`` where the name says
    secret (``HF_TOKEN``, ``WANDB_API_KEY``, ``AWS_SECRET_ACCESS_KEY``, ``--hf-token``,
    ``password=``...; not ``MAX_TOKENS``, ``EOS_TOKEN_ID``, ``TOKEN_FILE``);
  - by the value's shape: ``hf_...``, ``ghp_...``/``github_pat_...``, ``sk-...``, ``AKIA...``/``ASIA...``,
    ``xox?-...``, ``glpat-...``, JWTs, ``Bearer ...``, ``user:password@`` in URLs, PEM private keys;
  - by value: the values of secret-named variables in dbglog's environment, and values the user
    passed for secret-named variables (``dbglog run --env HF_TOKEN=...``, ``bisect toggles --env``:
    see ``remember``), wherever they appear (a repro that prints its token, an argument).

``clean_obj`` applies ``clean`` to every string in a JSON-like value (and redacts a dict value, or
the argument after a flag, whose name says secret). All functions are idempotent.
"""

from __future__ import annotations

import os
import re

from dbglog.util import recache  # (compiled once per install: see util/recache.py)
from dbglog.util.lazyre import Lazy

REDACTED = "<redacted>"
# Most patterns below are needed only once a cheap test says so (a hint literal in the text, an escape
# byte): they are compiled on first use (compiling all was ~2 ms of every command that redacts).


# --- control characters and escape sequences ------------------------------------------------

_ESCAPES = Lazy(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"          # CSI ... final byte (a cut-off one too)
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC ... BEL or ST (titles, hyperlinks)
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"    # DCS / SOS / PM / APC ... ST
    r"|\x1b[ -/]*[0-~]?"                 # two/three-byte ESC sequences (charset, keypad, RIS)
    r"|\x9b[0-?]*[ -/]*[@-~]?"           # 8-bit CSI
)
# Bidi embeddings, overrides and isolates (U+202A-E, U+2066-9) reorder what is shown after them (an id printed
# backwards) and the invisible zero-width space, word joiner and BOM make a blank title look filled in: dropped like
# control bytes. The joiners U+200C/U+200D stay: Persian, Indic scripts and emoji sequences need them.
_INVISIBLE = "\u200b\u2060\ufeff\u202a-\u202e\u2066-\u2069"
_CONTROLS = Lazy(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f" + _INVISIBLE + "]")
# (~5 ms to compile: kept between processes)
_NEEDS_SANITIZE = Lazy(r"[\x00-\x08\x0b-\x1f\x7f-\x9f" + _INVISIBLE + r"\ud800-\udfff]")
# A lone surrogate (a YAML "\uDCFF" in a hand edit, a JSON one from an agent) is no character: stored,
# it could never be written as UTF-8 again (the MCP answer, a --json line, the mirror file).
_SURROGATES = Lazy("[\ud800-\udfff]")


def sanitize_lines(text: str) -> str:
    """``sanitize`` line by line: no escape sequence can take a newline with it, so every line keeps its number (a
    document's lines are cited by number)."""
    if not text or _NEEDS_SANITIZE.search(text) is None:
        return text
    return "\n".join(sanitize(line) for line in text.split("\n"))


def sanitize(text: str) -> str:
    """``text`` without terminal escapes, control characters (tab and newline kept), bidi controls and invisible
    zero-width characters; a lone surrogate becomes U+FFFD."""
    if not text or _NEEDS_SANITIZE.search(text) is None:
        return text
    text = _ESCAPES.sub("", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _SURROGATES.sub("\ufffd", _CONTROLS.sub("", text))


_SGR = Lazy(r"\x1b\[[0-9;:]*m")


def terminal_text(text: str, colour: bool = False) -> str:
    """``text`` as a terminal may show it: ``sanitize``, except that with ``colour`` SGR sequences
    (colours, bold) are kept. They only change how text looks; cursor moves, clears, titles, OSC 52
    clipboard writes, hyperlinks and the rest are dropped like any other control byte."""
    if not colour or "\x1b[" not in text:
        return sanitize(text)
    keep = _SGR.findall(text)
    parts = _SGR.split(text)
    return "".join(sanitize(p) + (keep[i] if i < len(keep) else "") for i, p in enumerate(parts))


_C1 = Lazy("[\x7f-\x9f]")


def json_text(dumped: str) -> str:
    """The output of ``json.dumps(..., ensure_ascii=False)`` with DEL and the C1 controls escaped as
    well (json escapes only C0): U+009B is a CSI to terminals that honour 8-bit controls."""
    return _C1.sub(lambda m: "\\u%04x" % ord(m.group()), dumped) if _C1.search(dumped) else dumped


# --- secrets --------------------------------------------------------------------------------

# Upper-case (environment-style) names: any of these words, as a whole _-separated word.
_ENV_SECRET_WORD = recache.compile(r"(?:^|_)(?:SECRET|SECRETS|TOKEN|PASSWORD|PASSWD|PASS|PASSPHRASE|KEY|APIKEY|"
                              r"CREDENTIAL|CREDENTIALS|AUTH|COOKIE)(?:_|$)")
# Any other name (flags, kwargs, config keys): ends with a word that cannot mean anything else
# (hf_token, --api-key, client_secret; not token_budget).
_WORD_SECRET = recache.compile(r"(?:^|[_.-])(?:secret|token|password|passwd|passphrase|api[_-]?key|access[_-]?key|"
                          r"secret[_-]?key|private[_-]?key|credentials?)$", re.I)
# ... and names that hold a number, an id or a path, not the secret itself.
_NOT_SECRET = recache.compile(r"(?:^|[_-])(?:ID|IDS|IDX|INDEX|LEN|LENGTH|SIZE|COUNT|NUM|LIMIT|FILE|PATH|DIR|SOCK|"
                         r"TYPE|NAME|URL_FILE|ENABLED?|DISABLED?)$|^(?:MAX|MIN|NUM|N|TOTAL)[_-]", re.I)


# Clients' own password variables whose names hold no secret word on its own: PostgreSQL's libpq,
# MySQL's client, sshpass -e.
_CLIENT_SECRET_VARS = frozenset({"PGPASSWORD", "MYSQL_PWD", "SSHPASS"})


def is_secret_name(name: str) -> bool:
    """Does a variable / flag / key named ``name`` hold a secret? (``HF_TOKEN`` yes, ``MAX_TOKENS``,
    ``PAD_TOKEN_ID``, ``TOKENIZERS_PARALLELISM`` no.)"""
    name = name.strip().lstrip("-")
    if name.upper() in _CLIENT_SECRET_VARS:
        return True
    if not name or _NOT_SECRET.search(name):
        return False
    if name.isupper() or (name.upper() == name and any(c.isalpha() for c in name)):
        return _ENV_SECRET_WORD.search(name.replace("-", "_")) is not None
    return _WORD_SECRET.search(name) is not None


# A token starts here: not inside a longer word (after "=" or "/" it does: KEY=hf_...), and right after a terminal
# colour (`\x1b[1m`, `\x1b[38;5;196m`: a colourful log's token was kept in a run's output files).
_B = r"(?:(?<![A-Za-z0-9_+-])|(?<=[0-9;]m)|(?<=\x1b\[m))"
_E = r"(?![A-Za-z0-9_+/=-])"
# (a literal every match contains: a cheap `in` test first, the regex only when it is there)
_VALUE_PATTERNS = [
    ("hf_", rf"{_B}hf_[A-Za-z0-9]{{20,}}{_E}"),
    ("_", rf"{_B}gh[pousr]_[A-Za-z0-9]{{20,}}{_E}"),
    ("github_pat_", rf"{_B}github_pat_[A-Za-z0-9_]{{20,}}{_E}"),
    ("sk-", rf"{_B}sk-(?=[A-Za-z0-9_-]*[0-9])(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{{20,}}{_E}"),
    ("A", rf"{_B}(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{{16}}{_E}"),
    ("xox", rf"{_B}xox[abposr]-[A-Za-z0-9-]{{10,}}{_E}"),
    ("glpat-", rf"{_B}glpat-[A-Za-z0-9_-]{{20,}}{_E}"),
    ("npm_", rf"{_B}npm_[A-Za-z0-9]{{30,}}{_E}"),
    ("eyJ", rf"{_B}eyJ[A-Za-z0-9_-]{{8,}}\.eyJ[A-Za-z0-9_-]{{8,}}\.[A-Za-z0-9_-]{{8,}}"),
    ("PRIVATE KEY-----", r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)"),
]
_VALUES = [(lit, Lazy(rx)) for lit, rx in _VALUE_PATTERNS]
_AKIA = ("AKIA", "ASIA", "AGPA", "AIDA", "AROA")
_GH = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")
_BEARER = Lazy(r"(?i)\b(bearer)(\s+)(?!<redacted>)([A-Za-z0-9._~+/-]{12,}=*)")
_AUTH_HEADER = Lazy(r"(?i)\b((?:proxy-)?authorization\s*[:=]\s*)(?!<redacted>)([^\s\"',;]+(?:\s+[^\s\"',;]+)?)")
# A secret-looking name followed by = or : (or a flag followed by a value): worth the full scan.
_NAME_HINT = recache.compile(r"(?:token|secret|passw|key|auth|credential|cookie|phrase|mysql_pwd|sshpass)[\w.-]*[\"']?[ \t]*[=:]"
                        r"|--?[\w.-]*(?:token|secret|passw\w*|key|credential|phrase)[ \t]", re.I)
# One search for every literal the value patterns, URLs and headers need: most text has none of them.
_VALUE_HINT = recache.compile(r"hf_|gh[pousr]_|github_pat_|sk-|A(?:KIA|SIA|GPA|IDA|ROA)|xox|glpat-|npm_|eyJ|"
                         r"PRIVATE KEY-----|://|[Aa][Uu][Tt][Hh][Oo][Rr][Ii][Zz][Aa][Tt][Ii][Oo][Nn]|[Bb][Ee][Aa][Rr][Ee][Rr]|"
                         r"mysql|curl")
_URL_CREDS = Lazy(r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^:/@\s]+:)(?!<redacted>@)[^@\s/]+@")
# The clients that take a password on their command line: `mysql -pSECRET` (the value joined to -p:
# `-p NAME` asks for it and names the database) and `curl -u user:SECRET` / `--user user:SECRET`.
# (bounded: each "mysql" or "curl" looks at most 300 characters ahead, whatever the line's length)
_MYSQL_P = Lazy(r"(\bmysql\w*\b[^\n|;&]{0,300}?(?<!\S)-p)(?!<redacted>)(?=[^\s$])[^\s'\"]+")
_CURL_USER = Lazy(r"(\bcurl\b[^\n|;&]{0,300}?(?<!\S)(?:-u[ \t]*|--user[ \t]+|--user=)['\"]?[^\s:'\"]{1,200}:)"
                  r"(?!<redacted>)(?=[^\s$])[^\s'\"]+")
# NAME=VALUE, NAME = VALUE, "NAME": "VALUE", --name=VALUE (the value: quoted, or one word)
_ASSIGN = Lazy(
    r"""(?P<pre>(?<![A-Za-z0-9_/])(?P<q>["']?)(?P<flag>--?)?(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)(?P=q)"""
    r"""(?P<sep>[ \t]*[=:][ \t]*)(?P<lead>\$\{?|))(?!//)"""  # (not a URL's scheme: "https://x/?token=...")
    r"""(?P<val>"[^"\n]*"|'[^'\n]*'|[^\s"'`,;|&)}\]]+)""")
# --name VALUE
_FLAG = Lazy(
    r"""(?P<pre>(?<![A-Za-z0-9_-])(?P<q>)(?P<flag>--?)(?P<name>[A-Za-z][A-Za-z0-9_.-]*)(?P<sep>[ \t]+)(?P<lead>))"""
    r"""(?P<val>"[^"\n]*"|'[^'\n]*'|[^\s"'`,;|&)}\]<$-][^\s"'`,;|&)}\]]*)""")

_env_values: re.Pattern | None | bool = None
_remembered: set[str] = set()


def remember(value: str) -> None:
    """A value the user passed for a secret-named variable: redact it wherever it shows up."""
    global _env_values
    if value and len(value) >= 4 and value != REDACTED:
        _remembered.add(value)
        _env_values = None


def remember_env(pairs) -> None:
    """``remember`` the values of the secret-named ones among NAME=VALUE pairs (or a dict)."""
    items = pairs.items() if isinstance(pairs, dict) else (p.split("=", 1) for p in pairs if "=" in p)
    for name, value in items:
        if value and is_secret_name(name):
            remember(value)


def _literal_values() -> re.Pattern | None:
    global _env_values
    if _env_values is None:
        vals = set(_remembered)
        for name, value in os.environ.items():
            if len(value) >= 8 and not value.startswith(("/", "~", ".")) and not value.isdigit() \
                    and is_secret_name(name) and value.lower() not in ("true", "false"):
                vals.add(value)
        vals.discard(REDACTED)
        _env_values = re.compile("|".join(re.escape(v) for v in sorted(vals, key=len, reverse=True))) \
            if vals else False
    return _env_values or None


def reset_cache() -> None:
    """Forget what was learnt from the environment (tests change it)."""
    global _env_values
    _env_values = None


_PASSWORD = Lazy(r"pass(?:word|wd|phrase)", re.I)
# After "password: " (a blank after the colon: "password:tiger" is a key and its value) a word that
# names a part of the password's own story -- its prompt, field, dialog, reset, policy -- or a grammar
# word, with a sentence going on after it on the line (a grammar word -- article, preposition,
# auxiliary, conjunction -- within the next four words), is prose ("the password: prompt never
# appeared", "Password: field in the form", "ssh asks Password: and waits"). Any other word may be the
# password itself ("the password: changeme is the default", "db password: tiger and user scott"):
# redacted. A prose word redacted costs a word; a password kept in clear costs the secret.
_GRAMMAR = (r"the|a|an|in|on|of|to|for|from|with|at|by|and|or|but|not|never|no|was|were|is|are|be|been|did|"
            r"does|do|has|had|have|it|its|this|that|when|after|before|until|while|then|so|as|into|again")
_PROSE_WORD = Lazy(r"(?i)(?:prompts?|fields?|box|boxes|dialogs?|dialogues?|screens?|pages?|forms?|windows?|"
                   r"pop-?ups?|requests?|entry|entries|inputs?|checks?|resets?|changes?|managers?|polic(?:y|ies)|"
                   r"expired|expiry|expiration|required|requirements?|mismatch|errors?|incorrect|wrong|invalid|"
                   r"rejected|hash(?:es|ing)?|length|complexity|authentication|auth|login|rotation|protected|"
                   rf"less|based|strength|hint|question|not|none|empty|blank|missing|{_GRAMMAR})")
_SENTENCE_GOES_ON = Lazy(rf"(?i)(?:(?:{_GRAMMAR})(?:[ \t]+[A-Za-z]+)+|[A-Za-z]+(?:[ \t]+[A-Za-z]+){{0,3}}?[ \t]+(?:{_GRAMMAR}))\b")
_MORE_WORDS = Lazy(r"[ \t]+[A-Za-z]")
# ... and the rest of such a run of words, to the end of its line or clause ("<redacted> horse battery staple").
_PASS_TAIL = Lazy(rf"(?im)(?<![\w.-])(pass(?:word|wd|phrase)[ \t]*:[ \t]*{REDACTED})"
                  rf"((?:[ \t]+(?!(?:{_GRAMMAR})\b)[A-Za-z]+)+)(?=[ \t]*(?:$|[;,)]))")


def _assign(m: re.Match) -> str:
    name, sep, val = m.group("name"), m.group("sep"), m.group("val")
    if not is_secret_name(name) or val.strip("\"'") in ("", REDACTED) or val.startswith(("<redacted", '"<redacted')):
        return m.group(0)
    if sep.strip() == ":" and not (m.group("q") or "_" in name or "-" in name or _PASSWORD.fullmatch(name)):
        # "Token: expired" in prose; "api_key: x", '"token": "x"' and "password: x" (a credential, whatever
        # the prose around it) are redacted
        return m.group(0)
    if sep.strip() == ":" and sep[-1:] in (" ", "\t") and _PASSWORD.fullmatch(name) \
            and not (m.group("q") or m.group("flag") or name.isupper()) \
            and _PROSE_WORD.fullmatch(val) and _MORE_WORDS.match(m.string, m.end()) \
            and _SENTENCE_GOES_ON.match(m.string, m.start("val")):
        return m.group(0)  # "the password: prompt never appeared": prose (see _PROSE_WORD)
    if m.group("lead"):  # NAME=$OTHER, ${OTHER}: a reference, not the value
        return m.group(0)
    if re.fullmatch(r"[\d.,:+-]+|0[xX][0-9a-fA-F]{1,16}", val.strip("\"'")):
        # "BOS token = 151643", "KEY=4", "KIND_WITH_KEY = 0x04": numbers (up to 64-bit hex constants) are ids,
        # counts and flags, not secrets; a longer hex string may be a key and stays redacted
        return m.group(0)
    q = val[0] if val[:1] in "\"'" else ""
    return f"{m.group('pre')}{q}{REDACTED}{q}"


def redact(text: str) -> str:
    """``text`` with secrets replaced by ``<redacted>`` (see the module docstring)."""
    if not text:
        return text
    out = _redact_once(text)
    while out != text:  # a match that kept its text can hide the next ("token: password: x"): until stable
        text, out = out, _redact_once(out)
    return out


def _redact_once(text: str) -> str:
    lit = _literal_values()
    if lit is not None:
        text = lit.sub(REDACTED, text)
    if _VALUE_HINT.search(text) is None:
        return _assignments(text) if _NAME_HINT.search(text) is not None else text
    for hint, rx in _VALUES:
        if hint == "A":
            if not any(a in text for a in _AKIA):
                continue
        elif hint == "_":
            if not any(g in text for g in _GH):
                continue
        elif hint not in text:
            continue
        text = rx.sub(REDACTED, text)
    if "://" in text:
        text = _URL_CREDS.sub(rf"\1{REDACTED}@", text)
    if "mysql" in text:
        text = _MYSQL_P.sub(rf"\1{REDACTED}", text)
    if "curl" in text:
        text = _CURL_USER.sub(rf"\1{REDACTED}", text)
    low = text.lower()
    if "authorization" in low:
        text = _AUTH_HEADER.sub(rf"\1{REDACTED}", text)
    if "bearer" in low:
        text = _BEARER.sub(rf"\1\2{REDACTED}", text)
    return _assignments(text) if _NAME_HINT.search(text) is not None else text


def _assignments(text: str) -> str:
    text = _FLAG.sub(_assign, _ASSIGN.sub(_assign, text))
    if f":{REDACTED} " in text or f": {REDACTED} " in text:  # (a passphrase of several words)
        text = _PASS_TAIL.sub(rf"\1 {REDACTED}", text)
    return text


def clean(text: str) -> str:
    """What may be stored or shown: ``redact(sanitize(text))``."""
    if not isinstance(text, str) or not text:
        return text
    return redact(sanitize(text))


def clean_argv(argv: list[str]) -> list[str]:
    """A command's argument list: every word cleaned, the word after a secret-named flag redacted."""
    out: list[str] = []
    hide = False
    for a in argv:
        if hide and not a.startswith("-"):
            out.append(REDACTED)
            hide = False
            continue
        hide = a.startswith("-") and "=" not in a and is_secret_name(a.lstrip("-"))
        out.append(clean(a))
    return out


def clean_obj(value):
    """``clean`` every string of a JSON-like value; a dict entry or flag value named secret is redacted."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            ck = clean(k) if isinstance(k, str) else k
            if isinstance(k, str) and isinstance(v, str) and v and is_secret_name(k):
                out[ck] = REDACTED
            else:
                out[ck] = clean_obj(v)
        return out
    if isinstance(value, (list, tuple)):
        if value and all(isinstance(x, str) for x in value):
            return type(value)(clean_argv(list(value)))
        return type(value)(clean_obj(v) for v in value)
    return value


class Cleaned(dict):
    """A run's record that went through ``clean_run``: a store takes it as it is instead of cleaning
    it again. Any change gives a plain dict (``record | {...}``, ``dict(record)``), cleaned again where
    it is stored; never set a key of one in place."""

    __slots__ = ()


def clean_run(record: dict) -> Cleaned:
    """A run's record as it may be stored or shown, once: the values its ``--env`` gave secret-named
    variables remembered (so they are redacted wherever they show up, its output included), then
    every string cleaned (``clean_obj``). A record already cleaned is returned as it is."""
    if isinstance(record, Cleaned):
        return record
    remember_env({k: v for k, v in (record.get("env_overrides") or {}).items() if isinstance(v, str)})
    return Cleaned(clean_obj(record))


def clean_record(obj):
    """A model dataclass (Investigation, Attempt, ...) with every string field cleaned, in place;
    returns True when something changed."""
    import dataclasses

    changed = False
    for f in dataclasses.fields(obj):
        v = getattr(obj, f.name)
        if isinstance(v, str):
            c = clean(v)
        elif isinstance(v, tuple) and all(isinstance(x, str) for x in v):
            c = tuple(clean(x) for x in v)
        elif isinstance(v, list):
            c = v
            for x in v:
                if dataclasses.is_dataclass(x):
                    changed |= clean_record(x)
            if v and all(isinstance(x, str) for x in v):
                c = [clean(x) for x in v]
        else:
            continue
        if c != v:
            setattr(obj, f.name, c)
            changed = True
    return changed


# --- big text: a run's output files, streamed (issue 30) ----------------------------------------
# A run's output may be hundreds of MB. ``redact`` on all of it at once cost ~130 ms per MB (its
# case-insensitive hint searches try ten words at every position) and held the file in memory
# twice. Here the text goes in blocks cut at line ends; in each, the same hints are found with
# cheaper searches (lower-cased text, one word list per regex, case-sensitive value literals) and
# only the lines around a hint -- the line and the next, since a header's value may follow a line
# break -- go through ``redact``. Every substitution of ``redact`` matches within one line (or
# across one line break), except a PEM private key, whose block goes through whole.

_NAME_WORDS = Lazy(r"(?:token|secret|passw|key|auth|credential|cookie|phrase|mysql_pwd|sshpass)[\w.-]*[\"']?[ \t]*[=:]")
_FLAG_WORDS = Lazy(r"--?[\w.-]*(?:token|secret|passw\w*|key|credential|phrase)[ \t]")
_VALUE_WORDS = Lazy(r"hf_|gh[pousr]_|github_pat_|sk-|A(?:KIA|SIA|GPA|IDA|ROA)|xox|glpat-|npm_|eyJ|://|mysql|curl")
_LOWER_WORDS = Lazy(r"authorization|bearer")
BLOCK = 4 << 20


def _hint_spans(text: str):
    """Where a secret may start in ``text``: the start of every hint (see ``redact``'s gates)."""
    low = text.lower()
    if len(low) != len(text):  # (a character whose lower case is longer: positions would drift)
        yield from (m.start() for m in _NAME_HINT.finditer(text))
        yield from (m.start() for m in _VALUE_HINT.finditer(text))
    else:
        for rx in (_NAME_WORDS, _FLAG_WORDS, _LOWER_WORDS):
            yield from (m.start() for m in rx.finditer(low))
        yield from (m.start() for m in _VALUE_WORDS.finditer(text))
    lit = _literal_values()
    if lit is not None:
        yield from (m.start() for m in lit.finditer(text))


def redact_block(text: str) -> str:
    """``redact(text)`` for a long text, costing a few scans when it holds no secret (see above)."""
    if "PRIVATE KEY-----" in text:
        return redact(text)
    starts = sorted(set(_hint_spans(text)))
    if not starts:
        return text
    spans: list[list[int]] = []
    for pos in starts:  # the hint's line and the next, merged where they touch
        a = text.rfind("\n", 0, pos) + 1
        b = text.find("\n", pos)
        b = -1 if b < 0 else text.find("\n", b + 1)
        b = len(text) if b < 0 else b
        if spans and a <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], b)
        else:
            spans.append([a, b])
    out, done = [], 0
    for a, b in spans:
        out.append(text[done:a])
        out.append(redact(text[a:b]))
        done = b
    out.append(text[done:])
    return "".join(out)


_DIGITS = bytes.maketrans(b"0123456789", b"0000000000")


def _block_needs(piece: bytes) -> bool:
    """Whether ``redact`` could change anything in ``piece`` (bytes of whole lines). A log repeats
    itself but for its numbers, and no hint of a secret holds a digit: the hints are looked for in
    the block's distinct line shapes (digits made 0), a few dozen lines where there were 50,000.
    The values dbglog knows to be secret (``remember``, its environment) are looked for as they are."""
    lit = _literal_values()
    if lit is not None:
        for value in _literal_bytes():
            if value in piece:
                return True
    shapes = b"\n".join(set(piece.translate(_DIGITS).split(b"\n"))).decode("utf-8", "surrogateescape")
    return "PRIVATE KEY-----" in shapes or _NAME_HINT.search(shapes) is not None \
        or _VALUE_HINT.search(shapes) is not None


_LIT_BYTES: list = [None, ()]


def _literal_bytes() -> tuple:
    """The literal secret values as UTF-8 bytes (cached per compiled pattern)."""
    lit = _literal_values()
    if _LIT_BYTES[0] is not lit:
        vals = set(_remembered)
        for name, value in os.environ.items():
            if len(value) >= 8 and not value.startswith(("/", "~", ".")) and not value.isdigit() \
                    and is_secret_name(name) and value.lower() not in ("true", "false"):
                vals.add(value)
        vals.discard(REDACTED)
        _LIT_BYTES[:] = [lit, tuple(v.encode("utf-8", "surrogateescape") for v in vals)]
    return _LIT_BYTES[1]


def _cut(chunk: bytes) -> int:
    """Where to end a block: after its last whole line, but before any last lines naming a bearer
    token or an authorization header, whose value may be on the next line (0: no line ends here)."""
    cut = chunk.rfind(b"\n") + 1
    while cut > 0:
        start = chunk.rfind(b"\n", 0, cut - 1) + 1
        line = chunk[start:cut].lower()
        if b"bearer" not in line and b"authorization" not in line:
            break
        cut = start
    return cut


def _key_cut(piece: bytes) -> bool:
    """A PEM private key begins in ``piece`` and does not end there: cut by the block."""
    return b"-----BEGIN" in piece and b"-----END" not in piece[piece.rfind(b"-----BEGIN"):]


def redact_file(path, block: int = BLOCK) -> bool:
    """Secrets out of a file, in place, in blocks cut at line ends (memory bounded by ``block``): the
    bytes stay the file's own otherwise (escapes, invalid UTF-8 and all). The file is replaced
    atomically, and only when something was redacted; returns whether it was."""
    import tempfile

    from dbglog.util.blocks import line_blocks

    path = os.fspath(path)
    changed = False
    tmp = None
    with open(path, "rb") as src:
        before = 0  # bytes of the file ahead of this piece
        for piece in line_blocks(src, block, cut=_cut, hold=_key_cut):
            if _block_needs(piece):
                text = piece.decode("utf-8", "surrogateescape")
                clean = redact_block(text).encode("utf-8", "surrogateescape")
            else:
                clean = piece
            if clean != piece and tmp is None:
                fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=".redact-")
                out = os.fdopen(fd, "wb")
                src_pos = src.tell()
                src.seek(0)
                copied = 0
                while copied < before:  # the clean bytes ahead of this piece, copied as they are
                    buf = src.read(min(block, before - copied))
                    out.write(buf)
                    copied += len(buf)
                src.seek(src_pos)
                changed = True
            if tmp is not None:
                out.write(clean)
            before += len(piece)
    if tmp is None:
        return False
    try:
        out.close()
        os.replace(tmp, path)
    except OSError:
        os.unlink(tmp)
        raise
    return changed
