"""The experiment a record or an idea describes: which knobs, turned which way, applied to what.

``extract(text)`` reads an ``Experiment`` out of an attempt's title and "what was done", a key
difference, a next step, a free-text line, or the idea given to ``tried``:

- the knobs: env vars (``NCCL_SHM_DISABLE=1``), flags (``--max-num-seqs 64``, ``--no-X``,
  ``--disable-X``), config keys (``request_queue_size=128``, ``set batch_size to 8``), packages and
  versions (``flash-attn==2.5.8``, "downgrade torch", "an older flash-attn"), and the features the
  field's vocabulary names in words ("no shared-memory transport", "eager mode");
- the state of each: on / off, raise / lower, set to a value, pin / upgrade / downgrade, or only named;
- what it was applied to (client, server, build, kernel), when the text says.

Names are normalised through the vocabulary in ``knobs.json`` (package data, loaded once on first
use): ``NCCL_SHM_DISABLE=1`` and "no shared-memory transport" are one knob turned off; ``--max-num-seqs``
and ``max_num_seqs`` one knob; ``HIP_VISIBLE_DEVICES=0`` and "only the first GPU" one setting.

Only the experiment's own command line counts: dbglog's options in ``dbglog run --timeout 4 -- CMD``
are not knobs of the experiment (``--env K=V`` of ``dbglog run`` is: it is set for the command), and
the candidate toggles of a ``dbglog bisect`` line are not settings.

``compare(idea, record)`` says how two experiments relate: ``SAME`` (every knob of the idea, turned
the same way), ``OTHER`` (a knob of the idea turned another way or set to another value, or only
part of the idea), or ``NONE`` (no knob in common), with the differences in plain words.

Standard library only and pure (no I/O but reading the vocabulary): the command hook uses it too.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from dbglog.core.purpose import PURPOSE_OPENER
from dbglog.util import recache  # (patterns compiled once per install, not per command)

SAME, OTHER, NONE = "same", "other", ""


class Knob(NamedTuple):
    id: str  # the feature's name in the vocabulary, else the normalised name
    name: str  # as written: NCCL_SHM_DISABLE, --max-num-seqs, "shared-memory transport"
    kind: str  # env | flag | config | package | feature
    state: str  # on | off | raise | lower | set | pin | upgrade | downgrade | "" (only named)
    value: str = ""

    def words(self) -> str:
        """The setting in plain words: "NCCL shared-memory transport off (NCCL_SHM_DISABLE=1)"; a knob the
        vocabulary does not know, as written ("--set full", "NCCL_DEBUG=INFO")."""
        how = {"on": "on", "off": "off", "raise": "raised", "lower": "lowered", "upgrade": "upgraded",
               "downgrade": "downgraded", "": "named"}.get(self.state, "")
        value = self.value.replace("|", " or ")  # (alternatives: "8|4")
        if self.state == "off" and self.value:
            how = "set to anything but " + value  # "disable kernel replay"
        elif self.state in ("set", "pin"):
            how = ("pinned to " if self.state == "pin" else "set to ") + value
        elif self.value and self.state in ("upgrade", "downgrade", "raise", "lower"):
            how += f" to {value}"
        written = self.name
        if self.value and "=" not in written and " " not in written and self.kind != "feature":
            written += f" {self.value}" if self.kind == "flag" else f"={self.value}"
        if self.state == "off" and self.value and self.kind != "feature":
            return f"not {written}"  # "without --target-processes all", "no NCCL_DEBUG=INFO"
        if self.kind not in ("feature", "package") and norm_name(re.split(r"[= ]", self.name)[0]) == self.id:
            return written if self.state in ("set", "") or written != self.name else f"{written} {how}"
        shown = written if norm_name(self.name) != norm_name(self.id) and self.kind != "feature" else ""
        return f"{self.id} {how}" + (f" ({shown})" if shown else "")

    def to_dict(self) -> dict:
        return {"knob": self.id, "name": self.name, "kind": self.kind, "state": self.state, "value": self.value}


class Experiment(NamedTuple):
    knobs: tuple[Knob, ...]
    target: str = ""  # client | server | build | kernel | ""

    def to_dict(self) -> dict:
        return {"knobs": [k.to_dict() for k in self.knobs], "applied_to": self.target,
                "summary": "; ".join(k.words() for k in self.knobs)}


class Comparison(NamedTuple):
    tier: str  # SAME | OTHER | NONE
    shared: tuple[str, ...]  # the knobs both name
    how: str  # plain words: which knob matched and how the idea differs


# --- the vocabulary (data: knobs.json) ---------------------------------------------------------


class Vocab:
    """``knobs.json`` read once: names -> (feature, meaning), phrases -> feature, packages."""

    def __init__(self, data: dict):
        self.names: dict[str, tuple[str, str]] = {}  # normalised name -> (feature id, meaning)
        self.phrases: list[tuple[str, str, str]] = []  # (phrase, feature id, state or "=value" or "")
        self.defaults: dict[str, float] = {}
        self.value_only: set[str] = set()  # features set by a value only (no on / off)
        self.one_of: dict[str, str] = {}  # a feature -> the choice it is one answer of (bf16 / fp16 training)
        self.bare: dict[str, str] = {}  # a feature's state when its words are given with no cue ("train in bfloat16")
        self.features = {k["id"] for k in data.get("knob", [])}
        for k in data.get("knob", []):
            fid = k["id"]
            for name, meaning in k.get("names", {}).items():
                self.names.setdefault(norm_name(name), (fid, meaning))
            for w in k.get("words", []):
                self.phrases.append((_spaced(w.lower()), fid, ""))
            for w, st in k.get("states", {}).items():
                self.phrases.append((_spaced(w.lower()), fid, st))
            if "one of" in k:
                self.one_of[fid] = k["one of"]
            if "bare" in k:
                self.bare[fid] = k["bare"]
            if "default" in k:
                self.defaults[fid] = number(k["default"])
            if all(m == "value" for m in k.get("names", {}).values()):
                self.value_only.add(fid)
        # the longest phrase first: "shared memory transport" before "shared memory"
        self.phrases.sort(key=lambda p: -len(p[0]))
        self.packages: dict[str, str] = {}
        for pkg, aliases in data.get("packages", {}).items():
            for a in (pkg, *aliases):
                self.packages[a.lower()] = pkg
        # looked up by their words (a dict of word sequences, not one big regex: nothing to compile);
        # a phrase that says a state ("kernel replay" = replay mode kernel) wins over the same words as a name
        self.by_phrase: dict[str, tuple[str, str]] = {}
        for p, f, st in self.phrases:
            key = _words_key(p)
            if key not in self.by_phrase or st:
                self.by_phrase[key] = (f, st)
        self.by_package = {_words_key(_spaced(a)): pkg for a, pkg in self.packages.items()}
        # a library's variable written without its prefix ("P2P_DISABLE=1 for NCCL"): the one name it ends
        self.unprefixed: dict[str, tuple[str, str] | None] = {}
        for key, got in self.names.items():
            head, _, rest = key.partition("-")
            if head in _LIBRARY_PREFIXES and "-" in rest:
                self.unprefixed[rest] = got if self.unprefixed.get(rest, got) == got else None
        self.longest = max((k.count(" ") + 1 for k in (*self.by_phrase, *self.by_package)), default=1)


_TOKEN = recache.compile(r"[a-z0-9]+(?:\.[a-z0-9]+)*")
_LIBRARY_PREFIXES = frozenset("nccl torch pytorch vllm sglang hsa hip cuda rocr miopen xla tf jax ucx gloo".split())


def _words_key(text: str) -> str:
    return " ".join(_TOKEN.findall(text))


def find_phrases(spaced: str, table: dict, longest: int):
    """(start, end, key) of the longest word sequences of ``spaced`` (lower case, ``_spaced``) that
    are keys of ``table``, left to right, none overlapping."""
    toks = [(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(spaced)]
    i = 0
    while i < len(toks):
        for n in range(min(longest, len(toks) - i), 0, -1):
            key = " ".join(t[2] for t in toks[i:i + n])
            if key in table:
                yield toks[i][0], toks[i + n - 1][1], key
                i += n
                break
        else:
            i += 1


# "upgrade triton to 3.2.0 to fix the shared memory overflow": what follows a purpose in its clause is the problem,
# not a knob turned (not "since": "since enabling cuda graphs" says when)
_PURPOSE = recache.compile(r"\b(?:" + PURPOSE_OPENER + r")\b[^.;,:()]*$", re.I)


def _inside_name(low: str, start: int, end: int) -> bool:
    """Is ``low[start:end]`` the middle of a longer name joined by hyphens or underscores on both sides
    ("p2p" in "overlap-p2p-communication": another knob, not NCCL's P2P)? A verb before it still turns it
    ("disable-cuda-graph")."""
    return bool(_JOINED_BEFORE.search(low, 0, start) and _JOINED_AFTER.match(low, end))


_JOINED_BEFORE = recache.compile(r"\w[-_]$")
_JOINED_AFTER = recache.compile(r"[-_]\w")


def _spaced(text: str) -> str:
    """Hyphens and underscores inside words read as spaces ("max-num-seqs" = "max num seqs"), length kept."""
    return re.sub(r"(?<=\w)[-_](?=\w)", " ", text)


# a unit a name ends with that a writer leaves out when spelling the name in words ("max split size" for
# max_split_size_mb)
_NAME_UNIT = frozenset("mb gb kb ms sec s secs seconds bytes".split())


def spelled_out(text: str, names) -> str:
    """``text`` with the names of ``names`` (knob names the records hold: "--shm-size", "NCCL_SHM_DISABLE") put in
    where it spells one in words ("docker shm size" -> "docker --shm-size", "nccl shm disable = 1" ->
    "NCCL_SHM_DISABLE = 1"): a writer says a setting by its words as often as by its name. Only names of two words
    or more, written with spaces between them."""
    voc = vocab()

    def put(m: re.Match, name: str, known: list) -> str:
        # (words a phrase of the vocabulary holds whole are read by it, with their cues: "drop the batch size to 8",
        # "NCCL debug output enabled"; so are words a phrase that says a state overlaps: "kernel replay mode")
        kept = any(s <= m.start() and m.end() <= e or s < m.end() and m.start() < e and voc.by_phrase[key][1]
                   for s, e, key in known)
        if not re.search(r"\s", m.group(0)):
            # ("kv-cache-free-gpu-mem-fraction" for kv_cache_free_gpu_mem_fraction: the name in other separators,
            # never a phrase of the vocabulary inside it)
            return name if "_" in name and "-" in m.group(0) else m.group(0)
        return name if not kept else m.group(0)

    low = text.lower()
    for name in sorted(set(names), key=len, reverse=True):
        words = [w for w in re.split(r"[-_.]+", name.lstrip("-").lower()) if w]
        if len(words) > 2 and words[-1] in _NAME_UNIT:
            words = words[:-1]
        if len(words) < 2 or not all(w.isalnum() for w in words):
            continue
        absent = [w for w in words if w not in low]
        # (a long name may be spelled with one of its words left out, "kv cache free memory fraction" for
        # kv_cache_free_gpu_mem_fraction; never its first or last word)
        if absent and (len(words) < _LONG_NAME or len(absent) > 1 or absent[0] in (words[0], words[-1])):
            continue  # (a name whose words the idea does not hold is passed by without a pattern compiled)
        rx = re.compile(r"(?<![\w\-])" + _spelled_words(words, absent[0] if absent else None) + r"(?:e?s)?(?![\w\-])",
                        re.I)
        known = list(find_phrases(_spaced(text.lower()), voc.by_phrase, voc.longest))
        text = rx.sub(lambda m, name=name, known=known: put(m, name, known), text)
    return text


# A knob name of this many words or more may be spelled with one of its middle words left out
_LONG_NAME = 5


def _spelled_words(words: list[str], absent: str | None) -> str:
    """The pattern of a name's words spelled out, one after another: a word of three letters or more may be written
    whole where the name shortens it ("memory" for mem, "sequences" for seqs is the plural below), and ``absent``, a
    word the text does not hold, may be left out."""
    parts = [re.escape(w) + (r"\w*" if len(w) >= 3 and w.isalpha() else "") for w in words]
    if absent is not None:
        k = words.index(absent)
        parts = parts[:k] + parts[k + 1:]
    return r"[\s_\-]+".join(parts)


_VOCAB: Vocab | None = None


def vocab() -> Vocab:
    """The vocabulary, read on first use (package data ``knobs.json``: JSON, which reads in a tenth of a
    millisecond where TOML took several, before every `tried`)."""
    global _VOCAB
    if _VOCAB is None:
        import json
        from pathlib import Path

        _VOCAB = Vocab(json.loads(Path(__file__).with_name("knobs.json").read_text(encoding="utf-8")))
    return _VOCAB


def norm_name(name: str) -> str:
    """One spelling per knob name: ``--max-num-seqs``, ``max_num_seqs``, ``MAX-NUM-SEQS`` alike."""
    return name.strip().lstrip("-").replace("_", "-").lower()


# --- values ----------------------------------------------------------------------------------------

TRUE = frozenset("1 true yes on enable enabled y".split())
FALSE = frozenset("0 false no off disable disabled none n".split())
_UNITS = {"k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "kib": 1024.0, "mib": 2.0 ** 20,
          "gib": 2.0 ** 30, "ms": 1e-3, "s": 1.0, "sec": 1.0, "min": 60.0, "h": 3600.0, "x": 1.0, "%": 0.01}
_NUM = recache.compile(r"^v?((?:\d+(?:\.\d+)?|\.\d+)(?:e[-+]?\d+)?)\s*([a-z%]*)$", re.I)  # (".7" is 0.7)


_NUMBER_WORDS = {w: str(n) for n, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve "
                                                   "thirteen fourteen fifteen sixteen".split())}
_NUMBER_WORDS.update({"twenty": "20", "thirty-two": "32", "sixty-four": "64", "half": "0.5"})


def number(v) -> float | None:
    """A value as a number (``8k`` = 8000, ``30s`` = 30, ``90%`` = 0.9, ``zero`` = 0), or None."""
    v = str(v).strip().strip("\"'")
    m = _NUM.match(_NUMBER_WORDS.get(v.lower(), v))
    if not m:
        return None
    unit = m.group(2).lower()
    if unit and unit not in _UNITS:
        return None
    return float(m.group(1)) * _UNITS.get(unit, 1.0)


def same_value(a: str, b: str) -> bool:
    if "|" in a or "|" in b:  # alternatives ("8|4": either was tried)
        return any(same_value(x, y) for x in a.split("|") for y in b.split("|"))
    a, b = a.strip("\"'").lower(), b.strip("\"'").lower()
    if a == b or a.replace("-", "_") == b.replace("-", "_") and not number(a):
        return True  # ("guaranteed-no-evict" is guaranteed_no_evict; "-1" is no "_1")
    a, b = wildcard_series(a) or a, wildcard_series(b) or b
    if (a in TRUE and b in TRUE) or (a in FALSE and b in FALSE):
        return True
    if _series(a, b) or _series(b, a):
        return True
    na, nb = number(a), number(b)
    if na is None or nb is None:
        return False
    # ("8k" tokens is 8192 as often as 8000: a context length, a batch of tokens, a buffer counted in powers of two;
    # "8192m" is "8g" to docker)
    return any(abs(x - y) <= 1e-9 * max(abs(x), abs(y), 1.0) for x in _kilo(a, na) for y in _kilo(b, nb))


def _series(short: str, full: str) -> bool:
    """Is ``short`` a version series that ``full`` is one of ("2.18" of "2.18.3"; not "2.1" of "2.10", nor "1" of
    "1.5": a series has a dot of its own)?"""
    return "." in short and _VERSION_LIKE.fullmatch(short) is not None and _VERSION_LIKE.fullmatch(full) is not None \
        and full.startswith(short + ".")


_VERSION_LIKE = recache.compile(r"v?\d+(?:\.\d+)+")
_WILDCARD = recache.compile(r"(\d+(?:\.\d+)+)\.[x*]")


def wildcard_series(text: str) -> str | None:
    """The series a version with a wildcard names ("2.21.x", "8.9.*" -> "2.21", "8.9"), or None: any release of it
    (``_series``) is that value."""
    m = _WILDCARD.fullmatch(text)
    return m.group(1) if m else None


_BINARY = {"k": 2.0 ** 10, "kb": 2.0 ** 10, "m": 2.0 ** 20, "mb": 2.0 ** 20, "g": 2.0 ** 30, "gb": 2.0 ** 30}


def _kilo(text: str, n: float) -> tuple[float, ...]:
    """A value and, when it is counted in "k", "m" or "g" (with or without a "b"), the same count in binary units:
    "8192m" of shared memory is "8g" (docker counts in binary), "8k" tokens are 8192."""
    m = _NUM.match(text)
    unit = m.group(2).lower() if m else ""
    return (n, n / _UNITS[unit] * _BINARY[unit]) if unit in _BINARY else (n,)


_RELEASE_PARTS = recache.compile(r"v?(\d+(?:\.\d+)*)(?:[.\-]?post(\d+))?(?:\+[\w.]+)?")


def _version(v: str) -> tuple:
    """A version as numbers to compare: its release and post-release ("2.7.4.post1" after "2.7.4"); a local build
    tag is the same release ("2.3.0+cu121" is 2.3.0)."""
    m = _RELEASE_PARTS.fullmatch(v.strip())
    if not m:
        return tuple(int(x) for x in re.findall(r"\d+", v)[:4])
    return tuple(int(x) for x in m.group(1).split(".")[:4]) + ((int(m.group(2)),) if m.group(2) else ())


# --- reading a text --------------------------------------------------------------------------------

# dbglog's own command: `dbglog run OPTS -- CMD` is CMD (and its --env); a bisection's toggles are
# candidates, not settings
_DBGLOG_CMD = recache.compile(r"\bdbglog\s+(run|bisect\s+[\w-]+|repro)\b(.*?)(?:\s--(?=\s)|$)", re.S | re.M)
_DBGLOG_ENV = recache.compile(r"--env[ =]([A-Za-z_]\w*=\S*)")
# (a value ends at CJK text: "VLLM_USE_V1=0可以跑" is VLLM_USE_V1=0, then "it runs")
_ENV = recache.compile(r"(?<![\w$.\-/])([A-Z][A-Z0-9_]*[A-Z0-9])=(\"[^\"\n]*\"|'[^'\n]*'|"
                       r"(?:[^\s,;)`'\"\u3000-\u30ff\u3400-\u9fff\uac00-\ud7af\uff00-\uffef]|,(?=\w))*)")
# a call the vocabulary names (``clip_grad_norm_(params, 1.0)``, ``set_detect_anomaly(True)``): its last argument
# (an argument may hold a call of its own: clip_grad_norm_(model.parameters(), 1.0))
_CALL = recache.compile(r"(?<![\w])([A-Za-z_][\w.]*)\(((?:[^()\n]|\([^()\n]{0,40}\)){0,80})\)")
# "lr 3e-4 -> 1e-4": a setting changed, written with an arrow
# ("`learning_rate: 0.0003` → `learning_rate: 0.0001`": the key written again on the new side is one change)
# "lr 3e-4 -> 1e-4", "learning_rate: 1e-4 changed to 2e-5", "scale from 20 to 2": a setting moved from one value to another
_KEY_ARROW = recache.compile(r"(?<![\w.\-])([A-Za-z][\w.\-]*)\s*(?:[:=]?\s+|\s+from\s+)([\w.+\-]+?)`?\s*"
                             r"(?:->|→|=>|\s(?:changed\s+to|became)\s|(?<=\s)(to)\s)\s*`?(?:\1\s*[:=]\s*)?([\w.+\-]+)")
_ENVIRON = recache.compile(r"environ\[\s*[\"'](\w+)[\"']\s*\]\s*=\s*[\"']?([^\"'\s)]*)|"
                      r"environ\.setdefault\(\s*[\"'](\w+)[\"']\s*,\s*[\"']?([^\"'\s)]*)")
# code: `RETAIN_GRAPH: bool = False` (an annotated assignment sets the name, not its type)
_ANNOTATED = recache.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*:\s*[A-Za-z_][\w\[\], |]*=\s*(\"[^\"\n]*\"|'[^'\n]*'|[\w.+\-]+)")
_FLAG = recache.compile(r"(?<![\w/.\-])(--?[A-Za-z][\w.\-]*[A-Za-z0-9])(?:[ \t]?=[ \t]?(\S+)|[ \t]+([^\s\-`'\"=][^\s`'\",;)]*))?")
_CONFIG = recache.compile(r"(?<![\w.\-/])([a-z][a-z0-9]*(?:[_.]+[a-z0-9]+)+|[a-z][a-z0-9]{1,})\s*(=|:\s)\s*"
                     r"(\"[^\"\n]*\"|'[^'\n]*'|[\w.+\-]+)")
# (a value may join its parts with colons: "set PYTORCH_CUDA_ALLOC_CONF to expandable_segments:True")
_SET_TO = recache.compile(r"\b(?:set|setting|change|changed|changing)\s+(?:the\s+)?`?([A-Za-z][\w.\-]*)`?\s+(?:to|=)\s+"
                     r"`?([\w.+\-]+(?::[\w.+\-]+)*)", re.I)
_PIN = recache.compile(r"(?<![\w.\-])([A-Za-z][\w.\-]*?)\s*(==|~=|>=|<=)\s*v?(\d[\w.+\-]*)")
# a number as written, in scientific notation with its exponent ("1e-5", not "1e")
_NUMBER_TEXT = r"\d[\w.]*(?:(?<=[eE])[-+]\d+)?"
# "`num_workers` 16", "num_workers 16": a config key written before its number
_KEY_NUMBER = recache.compile(r"`?(?<![\w.\-])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)`?\s+(?:to\s+|of\s+)?(" + _NUMBER_TEXT
                              + r"%?)(?![\w.])")  # ("..._fraction to 75%": a share, as 0.75)
# right before a name: it was taken away ("without --enforce-eager", "removed `NCCL_P2P_DISABLE`")
_NEGATED = recache.compile(r"(?:\bwithout|\bno|\bnot|\bremov\w*|\bdrop\w*|\bunset\w*|\bdon'?t\s+use|\bdisabl\w*)"
                      r"\s+(?:the\s+)?[`'\"(]*$", re.I)
_ARROW = recache.compile(r"v?(\d[\w.]*)\s*(?:→|->|=>|\bto\b)\s*v?(\d[\w.]*)")
_VALUE_WORDS = frozenset("""flag option options and or to the a an with without for in on of is was it that this
    then so but as by at from into only just also when if which flag, argument arg env variable var""".split())
_PROGRAMS = frozenset("python python3 torchrun bash sh srun mpirun deepspeed accelerate vllm sglang pip uv".split())

_OFF = (r"no|not|non|without|w/o|disabl\w*|turn\w*\s+off|switch\w*\s+off|drop\w*|remov\w*|skip\w*|bypass\w*|"
        r"avoid\w*|kill\w*|deactivat\w*|unset\w*|stop\w*|don'?t\s+use|do\s+not\s+use|instead\s+of|"
        r"get\s+rid\s+of|off")
_ON = r"set|export\w*|enabl\w*|turn\w*\s+on|switch\w*\s+on|use|used|using|uses|with|forc\w*|add\w*|activat\w*|keep\w*|on|re-?enabl\w*"
_RAISE = (r"rais\w*|increas\w*|bump\w*|more|higher|larger|bigger|doubl\w*|longer|extend\w*|grow\w*|up|"
          r"bigger|greater|max\w*\s+out")
# ("cap", "capped", "capping"; not "capture")
_LOWER = r"lower\w*|reduc\w*|decreas\w*|fewer|less|smaller|shrink\w*|cut\w*|halv\w*|shorter|caps?|capp(?:ed|ing)|limit\w*|down"
_DOWN = r"downgrad\w*|roll\w*\s+back|rolled\s+back|revert\w*|older|previous|earlier|prior|pinn?\w*\s+(?:back|below)"
_UP = r"upgrad\w*|newer|latest|bump\w*|updat\w*|nightly"
_BACK_TO = recache.compile(r"^\W{0,3}back\s+(?:down\s+)?to\s+v?(\d+(?:\.\d+)*)\b", re.I)
_CUE_WORD = {g: recache.compile(rf"(?<![\w-])(?:{p})(?![\w-])", re.I) for g, p in
             (("off", _OFF), ("on", _ON), ("raise", _RAISE), ("lower", _LOWER), ("downgrade", _DOWN),
              ("upgrade", _UP))}
_AFTER_OFF = recache.compile(r"^\W{0,3}(?:off|disabled|removed|dropped|turned\s+off|switched\s+off|unset)\b", re.I)
_AFTER_ON = recache.compile(r"^\W{0,3}(?:back\s+on|on|enabled|turned\s+on|switched\s+on)\b", re.I)
# (Chinese sets a value with 设为 / 改成 / 调到 ... : "batchsize设为了1", "cutoff_len 调小到 1024")
_AFTER_VALUE = recache.compile(r"^\s*(?:to|=|of|at|:|from\s+(?:the\s+)?\S+(?:\s+default)?\s+to|(?:设置?[为成]|改[为成]|调[小大低高]?[到为至]|降[到为至]|"
                          r"升[到为至]|减[小少]?[到为至]|增[大加]?[到为至]|为)了?)?\s*`?(\d(?:[\w.%]|(?<=[eE])[-+])*)(?![\w.])|"
                          r"^\s+to\s+(?:the\s+|a\s+)?`?([a-z][\w.+\-]*)", re.I)
_UNIT_AFTER = recache.compile(r"\s*(hours?|hrs?|minutes?|mins?|seconds?|secs?|ms|milliseconds?)\b")
_ONE_UNIT = recache.compile(r"^\s*(?:to\s+|of\s+)?(?:a|an|one)\s+(hour|minute|second)\b", re.I)
_UNIT_WORDS = {"hour": "h", "hours": "h", "hr": "h", "hrs": "h", "minute": "min", "minutes": "min", "min": "min",
               "mins": "min", "second": "s", "seconds": "s", "sec": "s", "secs": "s", "ms": "ms",
               "millisecond": "ms", "milliseconds": "ms"}
_BEFORE_VALUE = recache.compile(r"(?:\bto\s+|\bwith\s+|\buse\s+|^|\s)(\d[\w.]*|"
                                + "|".join(w for w in _NUMBER_WORDS if w != "half") + r")\s+$", re.I)
_TARGETS = (("client", recache.compile(r"\bclients?\b|\bclient'?s\b", re.I)),
            ("server", recache.compile(r"\bserv(?:er|ers|ing)\b|\bserver'?s\b", re.I)),
            ("build", recache.compile(r"\bbuild\w*\b|\bwheel\b|\bnvcc\b|\bcmake\b|\bpip install\b", re.I)),
            ("kernel", recache.compile(r"\bkernels?\b", re.I)))
# A path's words name where a file is, not what a change was applied to: "./build/all_gather_perf" runs a test.
_PATH_WORD = recache.compile(r"\S*/\S*")
WINDOW = 32  # characters before a name in which a cue word says which way it was turned


def strip_dbglog(text: str) -> str:
    """The text with dbglog's own command options taken out (``dbglog run --timeout 4 -- CMD`` -> CMD;
    ``--env K=V`` of ``dbglog run`` kept as ``K=V``)."""
    if "dbglog" not in text:
        return text

    def repl(m):
        if m.group(1) != "run":
            return " "
        return " " + " ".join(_DBGLOG_ENV.findall(m.group(2))) + " "
    return _DBGLOG_CMD.sub(repl, text)


def _cue(before: str, after: str = "") -> str:
    """The way a name is turned, read from the words just before it (the nearest cue wins) or right after."""
    if _AFTER_OFF.match(after):
        return "off"
    if _AFTER_ON.match(after):
        return "on"
    best, where = "", -1
    for g, rg in _CUE_WORD.items():
        for m in rg.finditer(before):
            if m.start() > where or (m.start() == where and g == "off"):
                best, where = g, m.start()
    return best


def _state_for(meaning: str, value: str) -> tuple[str, str]:
    """(state, value) of a knob set to ``value`` under its vocabulary meaning."""
    v = value.strip("\"'")
    low = v.lower()
    if meaning in ("enable", "disable"):
        if low in TRUE or (not v):
            return ("on" if meaning == "enable" else "off"), ""
        if low in FALSE:
            return ("off" if meaning == "enable" else "on"), ""
        return "set", v
    if meaning.startswith("off:"):
        return ("off", "") if low == meaning[4:].lower() else ("set", v)
    if not v:
        return "on", ""
    return "set", v


def _meaning(name: str) -> tuple[str, str]:
    """(feature id, meaning) of a name: the vocabulary's, else read off the name itself."""
    voc = vocab()
    key = norm_name(name)
    if key in voc.names:
        return voc.names[key]
    for prefix, meaning in (("no-", "disable"), ("disable-", "disable"), ("enable-", "enable"), ("use-", "enable")):
        if key.startswith(prefix) and len(key) > len(prefix) + 2:
            base = key[len(prefix):]
            return voc.names.get(base, (base, ""))[0], meaning
    if voc.unprefixed.get(key):
        return voc.unprefixed[key]
    if "." in key and not key.replace(".", "").isdigit():  # torch._dynamo.config.cache_size_limit
        last = key.rsplit(".", 1)[-1]
        return voc.names.get(last, (last, "value"))
    # NCCL_FOO_DISABLE and NCCL_FOO_ENABLE turn one feature, "nccl-foo", opposite ways
    for pattern, meaning in ((r"(?:^|-)(?:disable|disabled|no)(?=-|$)", "disable"),
                             (r"(?:^|-)(?:enable|enabled|use)(?=-|$)", "enable")):
        if re.search(pattern, key):
            return (re.sub(pattern, "", key).strip("-") or key), meaning
    return key, "value"


class _Reader:
    """One pass over a text: knobs found by position (a place read once is not read again)."""

    def __init__(self, text: str):
        self.text = text
        self.low = text.lower()
        self.taken: list[tuple[int, int]] = []
        self.knobs: list[Knob] = []

    def free(self, a: int, b: int) -> bool:
        return all(b <= s or a >= e for s, e in self.taken)

    def add(self, span: tuple[int, int], knob: Knob) -> None:
        self.taken.append(span)
        if knob not in self.knobs:
            self.knobs.append(knob)

    def before(self, at: int) -> str:
        return self.low[max(0, at - WINDOW):at]

    def named(self, span, name: str, kind: str, value: str | None) -> None:
        """A knob name with the value given to it (None: named bare, the way read from cue words)."""
        fid, meaning = _meaning(name)
        if value is None:
            state, val = self._bare(span, kind, meaning)
        else:
            state, val = _state_for(meaning, value)
            if self.negated(span):
                # "without --target-processes all": anything but that value (``agree``); "without
                # NCCL_P2P_DISABLE=1": the transport on
                state = {"set": "off", "on": "off", "off": "on"}.get(state, state)
            if state in ("on", "off") and value:  # the name as set: NCCL_SHM_DISABLE=1
                name = f"{name}={value}" if kind != "flag" else f"{name} {value}"
        self.add(span, Knob(fid, name, kind, state, val))

    def negated(self, span) -> bool:
        """Is the name taken away right before it ("without --enforce-eager", "no NCCL_DEBUG=INFO")?"""
        return bool(_NEGATED.search(self.text[max(0, span[0] - WINDOW):span[0]]))

    def _bare(self, span, kind: str, meaning: str) -> tuple[str, str]:
        """The state of a name written without a value: a flag present is set (unless taken away
        right before it: "without --enforce-eager"); an env var by its cue word ("set X", "unset X")."""
        negated = self.negated(span)
        if meaning in ("enable", "disable"):
            if kind == "flag":
                return _state_for(meaning, "0" if negated else "1")
            cue = _cue(self.before(span[0]), self.low[span[1]:span[1] + 16])
            to = _NAME_TO.match(self.text, span[1])
            if to and to.group(1).lower() in TRUE | FALSE and not negated:
                return _state_for(meaning, to.group(1))  # ("NCCL_SHM_DISABLE = 0", "set NCCL_P2P_DISABLE to 1")
            if negated or cue == "off":
                return _state_for(meaning, "0")
            return _state_for(meaning, "1") if cue == "on" else ("", "")
        cue = _cue(self.before(span[0]), self.low[span[1]:span[1] + 16])
        to = _NAME_TO.match(self.text, span[1]) if meaning == "value" else None
        if to and (number(to.group(1)) is not None or to.group(1).lower() in TRUE | FALSE or to.group(1).isupper()):
            # "bump XLA_PYTHON_CLIENT_MEM_FRACTION to 0.95", "set NCCL_ALGO to Tree": the value after "to"
            return (cue if cue in ("raise", "lower") else "set"), to.group(1)
        if cue in ("raise", "lower", "upgrade", "downgrade"):
            return cue, ""
        if kind == "flag" and meaning != "value":
            return ("off", "") if negated else ("on", "")
        return "", ""


_OR_VALUE = recache.compile(r"\s+or\s+(\d[\w.%]*)(?![\w.])")
# "to 0.95", "= 1", "to 8 GB": the value written after a name ("set X to Y", "X = Y")
_NAME_TO = recache.compile(r"(?:\s+to\s+|\s*=\s*)`?(\.?\d[\w.%]*(?:\s(?:[KMGT]i?B|[kmgt]b)\b)?|[A-Za-z][\w-]{0,15})`?"
                           r"(?![\w.-])")
_TIMEDELTA = recache.compile(r"init_process_group\([^)]*?timeout\s*=\s*(?:datetime\.)?timedelta\(\s*(\w+)\s*=\s*(\d+)")
_TD_UNIT = {"seconds": "s", "minutes": "min", "hours": "h"}


def _flag_value(name: str, nxt: str) -> bool:
    """Whether the word after a flag is its value: a valued flag's (the vocabulary's, or a number, or a
    short word), never a program, a script, a path or an everyday word ("the -mla flag")."""
    fid, meaning = _meaning(name)
    low = nxt.lower()
    if meaning in ("enable", "disable") and (low in TRUE or low in FALSE):
        return True  # "--fp16 False"
    if meaning != "value" or low in _VALUE_WORDS or low in _PROGRAMS or nxt.endswith(".py") or "/" in nxt:
        return False
    return fid != norm_name(name) or number(nxt) is not None or len(nxt) <= 12


def _read_calls(r: _Reader) -> None:
    """Calls the vocabulary names as knobs (``name()`` entries): the value is the last argument; and a switch's call
    named by its own words with a boolean (``torch.backends.cuda.enable_cudnn_sdp(False)``): that switch turned."""
    voc = vocab()
    for m in _CALL.finditer(r.text):
        short = m.group(1).rsplit(".", 1)[-1]
        name = short + "()"
        if norm_name(name) not in voc.names:
            switch = _SWITCH_CALL.fullmatch(f"{short}({m.group(2)})")
            turned = _TURNING_CALL.fullmatch(short) if not m.group(2).strip() else None
            if switch:
                r.named(m.span(), switch.group(1), "config", switch.group(2))
            elif turned:  # model._set_static_graph(), model.gradient_checkpointing_enable(): that switch turned
                on = (turned.group(1) or turned.group(4)) != "disable"
                if r.negated(m.span()) or _cue(r.before(m.start())) == "off":
                    on = not on  # "removed model.gradient_checkpointing_enable()"
                key = turned.group(2) or turned.group(3)
                r.add(m.span(), Knob(_meaning(key)[0], short + "()", "config", "on" if on else "off", ""))
            continue
        args = [a.strip().strip("\"'") for a in _ARG_SPLIT.split(m.group(2)) if a.strip()]
        # (max_norm=1.0 is the value 1.0 given by its keyword, as clip_grad_norm_(params, 1.0) gives it)
        last = _KEYWORD.sub("", args[-1]) if args else "1"
        r.named(m.span(), name, "config", last)


_ARG_SPLIT = recache.compile(r",(?![^()]*\))")  # commas between arguments, not inside a nested call
# a name that says which way it turns a switch: "enable_kv_cache_reuse", "use_cache", "disable_custom_all_reduce"
_SWITCH_NAME = r"(?:enable|disable|use|no)_[a-z0-9]+(?:_[a-z0-9]+)*"
_SWITCH_CALL = recache.compile(r"(" + _SWITCH_NAME + r")\(\s*(True|False|true|false|0|1)\s*\)")
# a call without arguments whose name says which way it turns a switch: "_set_static_graph", "x_enable", "disable_x"
_TURNING_CALL = recache.compile(r"_?(set|enable|disable)_([a-z][a-z0-9_]*)|([a-z][a-z0-9_]*?)_(enable|disable)")
_KEYWORD = recache.compile(r"^[A-Za-z_]\w*\s*=\s*")


# "enable_kv_cache_reuse -> false": a setting's key and the value it was set to, no old value given
_KEY_TO = recache.compile(r"(?<![\w.\-])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)`?\s*(?:->|→|=>)\s*`?([\w.+\-]+)")
# A Triton model config's parameter, in protobuf text format: key: "enable_kv_cache_reuse" value { string_value: "false" }
_PBTXT_PARAM = recache.compile(r"key:\s*\"([A-Za-z_][\w.\-]*)\"\s*,?\s*value:?\s*\{\s*string_value:\s*\"([^\"\n]*)\"")


def _read_arrows(r: _Reader) -> None:
    """``lr 3e-4 -> 1e-4``: the setting's new value, and which way it went when both are numbers;
    ``enable_kv_cache_reuse -> false``: the value a key was set to; a Triton config's parameter."""
    for m in _PBTXT_PARAM.finditer(r.text):
        r.named(m.span(), m.group(1), "config", m.group(2))
    for m in _KEY_ARROW.finditer(r.text):
        if not r.free(*m.span()) or m.group(1).lower() in _VALUE_WORDS or number(m.group(1)) is not None:
            continue
        fid, meaning = _meaning(m.group(1))
        if meaning != "value" or fid in vocab().packages.values():
            continue
        a, b = number(m.group(2)), number(m.group(4))
        if (m.group(3) or " from " in m.group(0)) and not ("_" in m.group(1) or "." in m.group(1) or (
                norm_name(m.group(1)) in vocab().names and a is not None and b is not None)):
            # ("precision from fp16 to bf16", "version 430 to 418": a word is read with its phrase)
            continue
        if m.group(3) and (a is None or b is None) and " from " not in m.group(0):
            continue  # ("set batch 8 to fix the OOM": "to" alone joins two numbers only)
        state = "set" if a is None or b is None or a == b else "raise" if b > a else "lower"
        r.add(m.span(), Knob(fid, m.group(1), "config", state, m.group(4)))
    for m in _KEY_TO.finditer(r.text):
        if r.free(*m.span()):
            r.named(m.span(), m.group(1), "config", m.group(2))


def _read_names(r: _Reader) -> None:
    text = r.text
    _read_calls(r)
    for m in _TIMEDELTA.finditer(text):  # init_process_group(timeout=timedelta(hours=2))
        r.add(m.span(), Knob("collective timeout", "init_process_group timeout", "config", "set",
                             m.group(2) + _TD_UNIT.get(m.group(1), "")))
    for m in _ENVIRON.finditer(text):
        r.named(m.span(), m.group(1) or m.group(3), "env", m.group(2) if m.group(1) else m.group(4))
    for m in _ANNOTATED.finditer(text):
        if r.free(*m.span()):
            r.named(m.span(), m.group(1), "config", m.group(2))
    for m in _ENV.finditer(text):
        if r.free(*m.span()):
            r.named(m.span(), m.group(1), "env", m.group(2))
            for key, value in sub_settings(m.group(2)):
                # (PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128 sets max_split_size_mb to 128 as well)
                r.named(m.span(), key, "config", value)
    _read_flags(r)
    _read_arrows(r)
    _read_config(r)
    for m in re.finditer(r"(?<![\w.\-])([A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9])(?![\w=])", text):
        if r.free(*m.span()):
            r.named(m.span(), m.group(1), "env", None)
    for m in _SWITCH_KEY.finditer(text):  # "turn enable_kv_cache_reuse off": a switch's key named bare, with its cue
        if r.free(*m.span()):
            r.named(m.span(), m.group(1), "config", None)


_SUB_SETTING = recache.compile(r"^([a-z][a-z0-9]*(?:[_.][a-z0-9]+)+|[a-z]{3,})[:=]([\w.+\-]+)$")


def sub_settings(value: str) -> list[tuple[str, str]]:
    """The settings an env var's value holds when it is a list of them ("expandable_segments:True,
    max_split_size_mb:128"): [(key, value)], or [] when any part is no such setting."""
    parts = [p.strip() for p in value.strip("\"'").split(",")]
    got = [_SUB_SETTING.match(p) for p in parts]
    return [(m.group(1), m.group(2)) for m in got] if parts and all(got) else []


# a switch's key named bare, with the cue that turns it ("turn enable_kv_cache_reuse off")
_SWITCH_KEY = recache.compile(r"(?<![\w.\-])(" + _SWITCH_NAME + r")(?![\w=(])")


# what follows a switch on a command line: the end of the line or of the command, or the next option
_COMMAND_GOES_ON = recache.compile(r"[ \t]*(?:$|\n|\\|&&|;|\||-)")


def _read_flags(r: _Reader) -> None:
    for m in _FLAG.finditer(r.text):
        if not r.free(*m.span(1)):
            continue
        name, eq, nxt = m.group(1), m.group(2), m.group(3)
        if name.startswith("-") and not name.startswith("--") and len(name) > 4:
            continue  # "-lineinfo"-like single-dash words are rarely knobs we can read
        value, end = eq, (m.end(1) if eq is None else m.end())
        if value is None and nxt is not None and _flag_value(name, nxt):
            value, end = nxt, m.end()
        elif value is None and nxt is None and _meaning(name) == (norm_name(name), "value") \
                and _COMMAND_GOES_ON.match(r.text, m.end(1)):
            # a flag the vocabulary does not know, last on its command or before the next option: a switch given
            r.add((m.start(1), end), Knob(norm_name(name), name, "flag", "off" if r.negated(m.span(1)) else "on", ""))
            continue
        r.named((m.start(1), end), name, "flag", value)


def _read_config(r: _Reader) -> None:
    text = r.text
    for m in _SET_TO.finditer(text):
        if r.free(*m.span(1)) and ("_" in m.group(1) or "." in m.group(1) or norm_name(m.group(1)) in vocab().names):
            r.named(m.span(), m.group(1), "config", m.group(2))
    for m in _KEY_NUMBER.finditer(text):
        if r.free(*m.span(1)) and m.group(1).lower() not in vocab().packages:  # ("flash_attn 2.7.4": a package's version)
            r.named(m.span(), m.group(1), "config", m.group(2))
    for m in _CONFIG.finditer(text):
        key = m.group(1)
        if not r.free(*m.span(1)) or (m.group(2) != "=" and "_" not in key and "." not in key):
            continue
        if key in ("http", "https", "file") or (m.group(2) == "=" and key in ("x", "n", "i")) or _FILE_NAME.search(key):
            continue  # (a file named before what it holds: "requirements.txt: flash-attn==2.7.4")
        r.named(m.span(), key, "config", m.group(3))


_FILE_NAME = recache.compile(r"\.(?:txt|py|ya?ml|json|toml|cfg|ini|sh|md|log|conf|lock)$")
# a diff of a pin: "-flash-attn==2.8.0.post2 +flash-attn==2.7.4.post1" moves the package from one to the other
_PIN_DIFF = recache.compile(r"(?<![\w.])-\s*([A-Za-z][\w.\-]*?)\s*==\s*v?(\d[\w.+\-]*)\s+\+\s*\1\s*==\s*v?(\d[\w.+\-]*)")
# a version as a release names it: "2.7.4.post1", "2.3.0+cu121", "0.6.1rc2" (its numbers, then any tags)
_TAGS = r"(?:[.+\-]?[a-z]+\d*(?:\.\d+)*)*"
_RELEASE = r"\d+(?:\.\d+)*" + _TAGS
_INSTEAD = recache.compile(r"^\W*v?(\d[\w.]*)\s+(?:[a-z]+\s+){0,2}(?:instead\s+of|rather\s+than|over)\s+v?(\d[\w.]*)")
_FROM_TO = recache.compile(r"^\s*(?:from\s+)?v?(\d[\w.]*)\s*(?:→|->|=>|to)\s*v?(\d[\w.]*)")


def _change(after: str, longer: str) -> tuple[str, str] | None:
    """(from, to) of a version change written after a package: "2.4 -> 2.3", "from 2.4 to 2.3",
    "550 LTS instead of 565" (from 565 to 550)."""
    m = _ARROW.match(after.lstrip(" :v")) or _FROM_TO.match(after)
    if m:
        return m.group(1), m.group(2)
    m = _INSTEAD.match(longer)
    return (m.group(2), m.group(1)) if m else None


def _read_packages(r: _Reader) -> None:
    voc = vocab()
    text, low = r.text, r.low
    for m in _PIN_DIFF.finditer(text):
        a, b = _version(m.group(2)), _version(m.group(3))
        pkg = voc.packages.get(m.group(1).lower(), m.group(1).lower().replace("_", "-"))
        r.add(m.span(), Knob(pkg, m.group(1), "package", "upgrade" if b > a else "downgrade" if b < a else "pin",
                             m.group(3)))
    for m in _PIN.finditer(text):
        if not r.free(*m.span()) or not re.search(r"[a-z]", m.group(1), re.I) or m.group(1).isupper():
            continue
        pkg = voc.packages.get(m.group(1).lower(), m.group(1).lower().replace("_", "-"))
        state = {"==": "pin", "~=": "pin", ">=": "upgrade", "<=": "downgrade"}[m.group(2)]
        r.add(m.span(), Knob(pkg, m.group(1), "package", state, m.group(3)))
    for start, end, key in find_phrases(_spaced(low), voc.by_package, voc.longest):
        if not r.free(start, end):
            continue
        pkg = voc.by_package[key]
        after = low[end:end + 40]
        before = low[max(0, start - 40):start]
        change = _change(after, low[end:end + 60])
        cue = _cue(before, after)
        if cue in ("raise", "lower") and _TO_RELEASE.match(after):
            cue = "upgrade" if cue == "raise" else "downgrade"  # "bump triton to 3.2", "bump cudnn wheel to 9.5"
        ver = re.match(r"^\s*v?(\d+(?:\.\d+)+" + _TAGS + r"|\d{3,})\b", after)
        if change:
            a, b = _version(change[0]), _version(change[1])
            state, val = ("upgrade" if b > a else "downgrade" if b < a else "pin"), change[1]
        elif re.search(r"\bpinn?(?:ed|ing|s)?\s+(?:the\s+)?$", before) and re.match(r"^\s*(?:to|at)\s+v?\d", after):
            state, val = "pin", re.match(r"^\s*(?:to|at)\s+v?(\d[\w.]*)", after).group(1)  # "pin torch to 2.3.1"
        elif cue in ("upgrade", "downgrade"):
            to = re.search(r"\bto\s+v?(" + _RELEASE + ")", after)
            state, val = cue, (to.group(1) if to else ver.group(1) if ver else "")
        elif re.match(r"^\W{0,3}(?:downgrad\w*|rollback)", after):
            state, val = "downgrade", ""
        elif back := _BACK_TO.match(after):
            state, val = "downgrade", back.group(1)  # "rolled the nvidia driver back to 418": the verb's two halves apart
        elif re.match(r"^\W{0,3}(?:upgrad\w*)", after):
            state, val = "upgrade", ""
        elif ver:
            state, val = "pin", ver.group(1)
        else:
            continue  # a package named without a version or a change: the topic, not a knob
        r.add((start, end), Knob(pkg, text[start:end], "package", state, val))


_FROM_BEFORE = recache.compile(r"\bfrom\s+$")
# a release a package is raised or lowered to, its kind named between ("... wheel to 9.5", "... package to 2.21")
_TO_RELEASE = recache.compile(r"^\s*(?:(?:pip\s+)?(?:wheel|package|version|release|build)s?\s+)?to\s+v?\d+\.\d")
_BARE_END = recache.compile(r"^\s*(?:$|[.,;:)!?]|(?:training|mode|precision|mixed|amp|runs?|instead|and|or|for|on|to|with)\b)", re.I)


def _read_phrases(r: _Reader) -> None:
    voc = vocab()
    low = r.low
    for start, end, key in find_phrases(_spaced(low), voc.by_phrase, voc.longest):  # max-num-seqs: "max num seqs"
        if not r.free(start, end) or _inside_name(low, start, end) or _PURPOSE.search(r.before(start)):
            continue
        fid, st = voc.by_phrase[key]
        after = low[end:end + 36]  # (" from the 64m default to 16g")
        if st.startswith("="):
            # "disable kernel replay", "no range replay": away from that value, not set to it
            state, val = ("off" if _cue(r.before(start)) == "off" else "set"), st[1:]
        elif st:
            state, val = st, ""
        elif fid in voc.bare and _FROM_BEFORE.search(r.before(start)):
            state, val = "off", ""  # "switch from fp16 to bf16": away from it
        else:
            val_m = _AFTER_VALUE.match(after) or _BEFORE_VALUE.search(r.before(start))
            cue = _cue(r.before(start), after)
            value = val_m and next((g for g in val_m.groups() if g), "")
            if value and value.lower() in _VALUE_WORDS:
                value = ""
            alt = _OR_VALUE.match(after, val_m.end()) if value and val_m.re is _AFTER_VALUE else None
            if alt:  # "reduce batch size to 8 or 4": either value is the one tried
                value += "|" + alt.group(1)
            one = None if value else _ONE_UNIT.match(after)
            if one:  # "give the NCCL watchdog an hour": one of the unit
                value = "1" + _UNIT_WORDS[one.group(1)]
            unit = None if one else _UNIT_AFTER.match(low, end + (val_m.end() if val_m and val_m.re is _AFTER_VALUE else 0))
            if value and unit and number(value) is not None:  # "to two hours" is 2h, as timedelta(hours=2)
                value = f"{_NUMBER_WORDS.get(value.lower(), value)}{_UNIT_WORDS[unit.group(1)]}"
            if value and cue not in ("off",):
                state, val = "set", value
                before = r.before(start)
                if _CUE_WORD["raise"].search(before) or _CUE_WORD["lower"].search(before):
                    state = "raise" if _CUE_WORD["raise"].search(before) else "lower"
            else:
                state, val = cue, ""
                if not state and fid in voc.bare and _BARE_END.match(after):
                    state = voc.bare[fid]  # "train in bfloat16" (not "fp16 accumulator": the dtype of a thing)
                if state in ("on", "off") and fid in voc.value_only:
                    state = ""  # "use the attention backend" names it; a value would set it
        r.add((start, end), Knob(fid, low[start:end], "feature", state, val))


# "on 8 GPUs", "8xGPU", "2 x NPUs", "a single GPU": how many devices a run used (a run on 1 GPU and one on 8 are two
# experiments, whatever else they share).
# (Chinese counts cards: "4卡" four, "单卡" one, "双卡" two; "显卡" is a graphics card, no count)
_GPU_COUNT = recache.compile(r"(?<![\w.])(\d{1,4})\s*(?:x\s*)?(?:gpus?|npus?|cards?|devices)\b(?!\s+layers?\b)|\b(single|one)[- ](?:gpu|npu|card)\b|"
                        r"(?<![\d.])(\d{1,3})\s*(?:张|块)?卡|(单|双)(?:张|块)?卡", re.I)


# "give vllm 80% of VRAM", "70% of the GPU memory": the share of device memory a server takes (not a reading: "peaks at
# 95% of memory", "uses 80% of VRAM")
_SHARE = recache.compile(r"(?<![\w.])(\d{1,3}(?:\.\d+)?)\s*%\s+of\s+(?:the\s+|its\s+|all\s+|total\s+)?(?:gpu'?s?\s+|device\s+)?"
                         r"(?:vram|memory|hbm)\b", re.I)
_READING = recache.compile(r"(?:\busag\w*|\bus(?:ed|es|ing)|\butiliz\w*|\bat|\bpeak\w*|\breach\w*|\bhit\w*|\bfull)\W*$", re.I)


def _read_share(r: _Reader) -> None:
    for m in _SHARE.finditer(r.text):
        if r.free(*m.span()) and not _READING.search(r.text[max(0, m.start() - 16):m.start()]):
            r.add(m.span(), Knob("GPU memory fraction", m.group(0), "feature", "set", m.group(1) + "%"))


def _read_gpu_count(r: _Reader) -> None:
    for m in _GPU_COUNT.finditer(r.text):
        if r.free(*m.span()):
            n = m.group(1) or m.group(3) or {"双": "2"}.get(m.group(4) or "", "1")
            r.add(m.span(), Knob("GPU count", m.group(0), "feature", "set", n))


def _merge(knobs: list[Knob]) -> tuple[Knob, ...]:
    """Every stated setting (a record may hold two versions of one package); a bare mention of a
    feature only when nothing sets it; a feature named in words dropped where a name sets it."""
    stated = {k.id for k in knobs if k.state}
    named_by = {k.id for k in knobs if k.state and k.kind != "feature"}
    moved = {k.id for k in knobs if k.kind == "package" and k.state in ("upgrade", "downgrade")}
    knobs = [k for k in knobs if not (k.kind == "package" and k.state == "pin" and k.id in moved)]
    out: list[Knob] = []
    for k in knobs:
        if (not k.state and k.id in stated) or (k.kind == "feature" and k.id in named_by):
            continue
        if all((o.id, o.state, o.value.lower()) != (k.id, k.state, k.value.lower()) for o in out):
            out.append(k)
    return tuple(out)


@functools.lru_cache(maxsize=4096)  # (a warm process -- the MCP server -- reads the same records again)
def extract(text: str) -> Experiment:
    """The experiment ``text`` describes (see the module docstring). Immutable: cached by text."""
    text = strip_dbglog(text or "")
    r = _Reader(text)
    _read_names(r)
    _read_packages(r)
    _read_gpu_count(r)
    _read_share(r)
    _read_phrases(r)
    return Experiment(tuple(_with_previous(k, text) for k in _merge(r.knobs)), _target(text))


def _target(text: str) -> str:
    """The first of ``targets`` in the order of ``_TARGETS`` (client, server, build, kernel), or ""."""
    named = targets(text)
    return next((t for t, _ in _TARGETS if t in named), "")


# the value a setting had before, written after the new one: "--tp 4 instead of 8", "8192 (was 32768)", "1e-5 (from 2e-5)"
_PREVIOUS = r"\s*(?:\(\s*(?:was|from|previously)\s+|instead of\s+|rather than\s+)`?(" + _NUMBER_TEXT + ")"


def _with_previous(k: Knob, text: str) -> Knob:
    """A number set, with the one it replaced written after it, is a knob raised or lowered to it: the record says which
    way ("halve the tensor parallel degree" is what "--tp 4 instead of 8" did)."""
    now = number(k.value) if k.state == "set" else None
    m = re.search(re.escape(k.value) + _PREVIOUS, text, re.I) if now is not None else None
    was = number(m.group(1)) if m else None
    if was is None or was == now:
        return k
    return k._replace(state="raise" if now > was else "lower")


def targets(text: str) -> set[str]:
    """What the text says a change was applied to (client, server, build, kernel); a path's words are none."""
    bare = _PATH_WORD.sub(" ", text or "")
    return {t for t, rg in _TARGETS if rg.search(bare)}


# --- comparing two experiments ---------------------------------------------------------------------

_OPPOSITE = {("on", "off"), ("off", "on"), ("raise", "lower"), ("lower", "raise"), ("upgrade", "downgrade"),
             ("downgrade", "upgrade")}


def _direction_of(value: str, fid: str) -> str:
    """raise / lower for a value against the vocabulary's documented default ("" when unknown)."""
    d = vocab().defaults.get(fid)
    n = number(value)
    if d is None or n is None or n == d:
        return ""
    return "raise" if n > d else "lower"


def _versions_differ(a: str, b: str) -> bool:
    if "|" in a or "|" in b:
        return all(_versions_differ(x, y) for x in a.split("|") for y in b.split("|"))
    return bool(a and b) and not same_value(a, b) and (not re.search(r"\d", a + b) or _version(a) != _version(b))


def agree(idea: Knob, rec: Knob) -> str:
    """SAME when ``rec`` turns the knob the idea's way, OTHER when another way or to another value,
    NONE when the record only names it (a knob named is not a knob turned)."""
    a, b = idea.state, rec.state
    if not b:
        return NONE
    a, b = ("pin" if a == "set" and b == "pin" else a), ("pin" if b == "set" and a == "pin" else b)
    if a != b and {a, b} <= {"set", "raise", "lower"} and idea.value and rec.value:
        # both give the value: the value decides ("lr 3e-4 -> 1e-4" is "learning rate 1e-4")
        return OTHER if _versions_differ(idea.value, rec.value) else SAME
    if not a or a == b:
        # (both lowered, to two values: "lr down to 5e-5" is not "lr 3e-4 -> 1e-4")
        if a in ("set", "pin", "upgrade", "downgrade", "raise", "lower") and _versions_differ(idea.value, rec.value):
            return OTHER
        return SAME
    if {a, b} == {"set", "off"} and (idea.value if a == "off" else rec.value):
        # away from a value ("disable kernel replay") against a value set: the same way unless it is that value
        return OTHER if same_value(idea.value, rec.value) else SAME
    if (a, b) in _OPPOSITE:
        return OTHER
    pair = {a, b}
    if pair <= {"set", "on"}:  # keep_alive=1 is "on"; a value set is the knob used
        v = idea.value or rec.value
        return OTHER if v.lower() in FALSE else SAME
    if pair <= {"set", "off"}:
        v = idea.value or rec.value
        return SAME if v.lower() in FALSE or v == "" else OTHER
    if pair <= {"set", "raise", "lower"}:
        way = a if a != "set" else b
        d = _direction_of(rec.value if b == "set" else idea.value, idea.id)
        return NONE if not d else SAME if d == way else OTHER  # (a value alone tells no way)
    if pair <= {"pin", "upgrade", "downgrade"}:
        # a pin is the version change the record made; which way is not told, but another version is another try
        return OTHER if _versions_differ(idea.value, rec.value) else SAME
    return OTHER


def _implied(knobs: list[Knob]) -> set[Knob]:
    """The alternatives an idea turns off by choosing another ("fp16 instead of bf16": bf16 off): a record that turns
    them another way differs, one that does not name them lacks nothing."""
    one_of = vocab().one_of
    on = {one_of[k.id] for k in knobs if k.id in one_of and k.state in ("on", "set")}
    return {k for k in knobs if k.state == "off" and one_of.get(k.id) in on}


def _abbrev(a: str, b: str) -> bool:
    """Two words of knob names alike, one the other's shortening ("mem" of "memory"), at three letters or more."""
    return a == b or min(len(a), len(b)) >= 3 and (a.startswith(b) or b.startswith(a))


def _alias(k: Knob, by_id: dict) -> str | None:
    """The record's knob that ``k`` names in an API's or a layer's spelling, when the record has no knob of its own
    name: a config key of three words or more whose words all stand, in order, in the record's (shortened or not),
    the last word the same ("free_gpu_memory_fraction" in Python, kv_cache_free_gpu_mem_fraction in the server's
    config). One such knob, or None."""
    if k.kind != "config":
        return None
    mine = k.id.split("-")
    if len(mine) < 3:
        return None
    found = []
    for other, knobs in by_id.items():
        theirs = other.split("-")
        if knobs[0].kind != "config" or len(theirs) < len(mine) or not _abbrev(mine[-1], theirs[-1]):
            continue
        at = 0
        for w in mine:
            while at < len(theirs) and not _abbrev(w, theirs[at]):
                at += 1
            at += 1
        if at <= len(theirs):
            found.append(other)
    return found[0] if len(found) == 1 else None


def compare(idea: Experiment, rec: Experiment, rec_text: str = "") -> Comparison:
    """How the record's experiment relates to the idea's (see the module docstring). Only the
    knobs the idea turns count ("per-head scales for the fp8 KV cache" names the cache as where, it
    does not turn it); an idea that turns none is left to the words."""
    by_id: dict[str, list[Knob]] = {}
    for k in rec.knobs:
        by_id.setdefault(k.id, []).append(k)
    turned = [k for k in idea.knobs if k.state]
    implied = _implied(turned)
    shared, diffs, missing, named = [], [], [], []
    alike: list[Knob] = []  # the record's knob each shared knob was turned the same way as
    for k in turned:
        ways = [(agree(k, o), o) for o in by_id.get(k.id) or by_id.get(_alias(k, by_id), [])]
        best = next((w for w in ways if w[0] == SAME), None) or next((w for w in ways if w[0] == OTHER), None) \
            or (ways[0] if ways else None)
        way, other = best if best else (None, None)
        if way is None:
            if k not in implied:
                missing.append(k)
        elif way == NONE:
            named.append(k)
        else:
            shared.append(k.id)
            if way == OTHER:
                diffs.append(f"the record has {other.words()}, the idea {k.words()}")
            else:
                alike.append(other)
    if not shared:
        return Comparison(NONE, (), "")
    if diffs:
        return Comparison(OTHER, tuple(shared), "; ".join(diffs))
    if missing or named:
        return Comparison(OTHER, tuple(shared), "the record changed " + ", ".join(shared) + " but not "
                          + ", ".join(k.words() for k in missing + named))
    if idea.target and rec_text:
        where = targets(rec_text)
        if where and idea.target not in where and idea.target in ("client", "server"):
            return Comparison(OTHER, tuple(shared), f"the record applied it to the {'/'.join(sorted(where))}, "
                                                    f"the idea to the {idea.target}")
    return Comparison(SAME, tuple(shared), f"same knob, same way: {'; '.join(o.words() for o in alike)}")
