"""The segmenter: a document cut into units, each with its source lines and its place.

A unit is the smallest piece a person writes one thing in: a heading, a sentence of a paragraph or
list item, a table row, a command (with the comment that says how it went), a code block, an HTML
block. Every source line belongs to at least one unit, so what the reader does not understand is
still somewhere (the lossless guarantee is structural before it is verified).

The place of a unit is what a reader uses before the words: the heading path above it, the list
item it sits in (checkbox, numbering, depth), the table it is a row of (and the header's cells), the
thread post it belongs to (author), whether it is quoted, and which paragraph or item it shares
with its neighbours. markdown-it-py gives the block structure and the line maps; sentences are cut
inside each paragraph, and each keeps the lines it spans.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from functools import lru_cache
from html.parser import HTMLParser

from dbglog.docreader import delimited
from dbglog.docreader.vocab import ATTEMPT_LABELS, INV_LABELS, VERDICT_MARKS, attempt_head
from dbglog.util import recache

KINDS = ("heading", "sentence", "row", "command", "code", "html", "rule", "front", "raw")


@dataclass
class Unit:
    id: int
    kind: str  # one of KINDS
    first: int  # 0-based, inclusive
    last: int  # 0-based, inclusive
    text: str  # the words, markdown markers of the container removed
    level: int = 0  # a heading's level
    path: tuple[int, ...] = ()  # ids of the enclosing headings, outermost first
    block: int = -1  # the paragraph / item / table / fence this unit is part of (shared by siblings)
    item: int = -1  # the list item it sits in (-1: none); items of one list share `group`
    group: int = -1  # the list (or table) the item (row) belongs to
    index: int = -1  # position of the item in its list / the row in its table
    depth: int = 0  # list nesting depth
    checkbox: str = ""  # "" none, " " empty, "x" ticked
    ordered: bool = False
    quoted: int = 0  # blockquote depth
    post: int = -1  # the thread post it belongs to (-1: not a thread)
    author: str = ""  # the post's author
    header: tuple[str, ...] = ()  # a row's table header cells
    said_col: int = -1  # the column whose cells say how each row went, read from the cells when no header names it
    cells: tuple[str, ...] = ()  # a row's cells
    comment: str = ""  # a command's outcome comment ("OK", "NOK (page fault)")
    desc: str = ""  # a command's describing comment above it ("# 1xGPU - OK"), when it has one
    prompted: bool = False  # a console session's "$ cmd": its comment is what it printed, its desc the author's caption
    lang: str = ""  # a fence's info string
    head: bool = False  # the first sentence of its paragraph / item
    lead: str = ""  # the run-in heading the paragraph opens with ("**Stacking kernels.**"), not part of ``text``

    @property
    def lines(self) -> tuple[int, int]:
        return (self.first, self.last)


@dataclass
class Doc:
    lines: list[str]
    units: list[Unit] = field(default_factory=list)
    posts: list[tuple[int, str]] = field(default_factory=list)  # (heading/line index, author)

    def text_lines(self) -> set[int]:
        """Lines of prose (sentences and headings): not code, HTML or comments, where labels are not fields."""
        if not hasattr(self, "_text"):
            self._text = {i for u in self.units if u.kind in ("sentence", "heading") for i in range(u.first, u.last + 1)}
        return self._text



@lru_cache(maxsize=1)
def _md():
    from markdown_it import MarkdownIt
    from mdit_py_plugins.front_matter import front_matter_plugin

    return MarkdownIt("commonmark").enable("table").use(front_matter_plugin).disable("inline")


# A thread post's header: "### alice — 2024-11-07", "**bob** commented on Mar 3", "carol · comment · 2023-03-20",
# "@dave wrote:". Structure of a post header (a name and a date or a verb of posting), not the words of one doc.
_DATE = r"(?:\d{4}-\d{2}(?:-\d{2})?|\d{1,2}[./]\d{1,2}[./]\d{4}|\d{4}[./]\d{1,2}[./]\d{1,2}|\d{4}年\d{1,2}月(?:\d{1,2}日)?|\d{1,2} [A-Z][a-z]{2,8},? \d{4}|[A-Z][a-z]{2,8} \d{1,2},? \d{4}|[A-Z][a-z]{2} \d{1,2})"
_POST = [
    recache.compile(rf"^\W{{0,3}}@?(?P<who>[\w][\w.-]{{0,38}})\s+(?:—|–|-|·)\s+(?:(?:comment|reply|review|description)\s+·\s+)?"
               rf"{_DATE}\b.*$"),
    recache.compile(r"^\W{0,3}(?:\*\*|__)?@?(?P<who>[\w][\w.-]{0,38})(?:\*\*|__)?\s+(?:commented|wrote|replied|answered|"
               r"responded|posted)\b.*$", re.I),
    recache.compile(r"^\W{0,3}(?:comment|reply|answer|post|question|antwort|frage|beitrag|kommentar|réponse|respuesta)\s+(?:by|from|von|de)\s+"
               r"@?(?P<who>[\w][\w.-]{0,38})\b.*$", re.I),
    # "## 回答 3", "### Answer 2": an unsigned post of a Q&A page, named by its number.
    recache.compile(r"^\W{0,3}(?P<who>(?:answer|reply|antwort|回答|回复|答案)\s*#?\d{1,3})\W{0,3}$", re.I),
]
_SHELL = {"bash", "sh", "shell", "console", "zsh", "shell-session", "shellsession", "cmd", "powershell", "ps1", "",
          "dockerfile", "docker"}
# A line a program printed: a bracketed tag ("[groupnorm]", "[rank0]:", not the shell's "[ -f x ]"), a timestamp, a level.
_LOG_LINE = recache.compile(r"^\s*(?:\[(?! )[\w.:/-][\w .:/-]{0,39}\]|\d{4}-\d\d-\d\d[ T]\d|\d\d:\d\d:\d\d\b|"
                            r"(?:INFO|WARNING|WARN|ERROR|DEBUG)\b[\s:])")
_CMD_COMMENT = recache.compile(r"^\s*(?:#|//|REM\b|::)\s?(?P<c>.*)$")
_TRAIL_COMMENT = recache.compile(r"\s#\s+(?P<c>[^#'\"]{1,80})$")
# "**2. HSA_OVERRIDE set:**" alone on its line; the inner text may hold the other emphasis mark (`_` in a name).
_CAPTION = recache.compile(r"^(\*\*|__)((?:(?!\1).){2,80}?)[:：]?\1[:：]?\s*$")
_BOLD_COMMAND = recache.compile(r"^\s*(?:export\s+)?[A-Z][A-Z0-9_]{2,}=\S|^\s*(?:export|pip3?|python3?|conda|sudo|docker|"
                           r"torchrun|cmake|make|git)\s+\S")
_LIST_CAPTION = recache.compile(r"^[^\W\d_][\w' /&-]{1,40}[:：]\s*$")
_LIST_START = recache.compile(r"^\s{0,3}(?:[-*+]|\d{1,2}[.)])\s+\S")
# A bullet as text (a web page's list copied as plain text): not markdown's, but a list item all the same.
# An arrow at a line's start ("-> tried X, no change", "=> ...") is such a bullet too.
_GLYPH_ITEM = recache.compile(r"^\s*(?:[•◦▪‣●○■□➤►▶→⇒]|-{1,2}>|=>)\s+(?=\S)")
# A line numbered as an entry where markdown sees none: "（1）", "(2)", "3)", "4、", "⑤" (markdown's own "2." inside a
# paragraph is text too, since only a "1." may interrupt one). Its number, for "the entries count up".
_ENUM_LINE = recache.compile(r"^\s*(?:[（(](?P<a>\d{1,2})[）)]|(?P<b>\d{1,2})[)、]|(?P<c>[①-⑳])|(?P<d>\d{1,2})\.(?!\d))\s*(?=\S)")
# A heading in all but markup: a short title-cased line with no sentence's end ("What Doesn't Work").
_PLAIN_TITLE = recache.compile(r"^[A-Z][^.!?。！？`=<>|:：]{1,48}$")
_RUN_IN = recache.compile(r"^(\*\*|__)(?:(?!\1)[^\n]){1,40}?[.!]\1\s+(?=\S)")


def _run_in(line: str) -> re.Match | None:
    """The run-in heading a paragraph opens with ("**Building.** I built ..."); None for a bold exclamation of four
    words or more, which is a sentence ("**All 191/191 shards loaded successfully!** 🎉")."""
    m = _RUN_IN.match(line)
    if m and m.group(0).rstrip().rstrip("*_").endswith("!") and len(m.group(0).split()) >= 4:
        return None
    return m


_MAIL_FROM = recache.compile(r"^(?:\*\*)?From:(?:\*\*)?\s+(?P<who>[^<>@\n]{2,60}?)\s*(?:<[^>]*>)?\s*$")
# an HTML tag: "<br>", "</p>", "<!-- x -->", "<details open>"; never "<0.30.0` ... `x>=0.30.0" (a version bound, then
# another: the text between them is the writer's) nor anything across a code span's backtick
_TAG = recache.compile(r"<(?=[A-Za-z/!])[^<>`]{0,200}>")
_CHECK = recache.compile(r"^\s*\[([ xX])\]\s+")


def _enum_number(line: str) -> int | None:
    m = _ENUM_LINE.match(line)
    if m is None:
        return None
    c = m.group("c")
    return ord(c) - ord("①") + 1 if c else int(m.group("a") or m.group("b") or m.group("d"))


# (an entry numbered the CJK way, "（2）", "②", "2、", opens a sentence as a capital does)
_CJK_BREAK = recache.compile(r"(?<=[\u3000-\u303f\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7a3\uff01-\uff60])\n|"
                            r"\n(?=[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7a3])")
_SENT = recache.compile(r"(?<=[.!?。！？])[\"')\]]?\s+(?=[\"'(\[`*_（【]*[A-Z0-9`@\[(\u4e00-\u9fff①-⑳]|[a-z]+[0-9_-])|(?<=[。！？；])")


def _numbered_try(line: str) -> bool:
    """Does a line open with a try's noun and number and then say what it was ("Attempt 2: pin the driver")? (A bold
    lead, "**Attempt 2 (FAILED):** ...", is a run-in label of the paragraph's own try, read as the paragraph.)"""
    t = line.strip()
    m = attempt_head().match(t) if len(t) <= 300 and not t.startswith(("**", "__")) else None
    return m is not None and bool((m.group("rest") or "").strip())


def _names_list_below(lines: list[str], text: str, b: int) -> bool:
    """Is a one-line paragraph the caption of the list right under it (blank lines aside)?"""
    t = text.strip()
    if _LIST_CAPTION.match(t):  # ("Open questions:" with the list on the very next line)
        return b < len(lines) and bool(_LIST_START.match(lines[b]))
    nxt = next((ln for ln in lines[b:b + 3] if ln.strip()), "")
    words = t.split()
    # (title case: each longer word capitalised, as a page's headings are and a sentence is not)
    return bool(_LIST_START.match(nxt) or _GLYPH_ITEM.match(nxt)) and len(words) <= 6 \
        and bool(_PLAIN_TITLE.match(t)) and all(w[0].isupper() for w in words if len(w) >= 4)


# A line that is an entry of its own by its form, not prose: a flag, a command, an inline code span, a setting
_ENTRY_LINE = recache.compile(r"^\s*(?:--?[A-Za-z][\w.-]*(?:[\s=]|$)|`[^`\n]{1,200}`|\$ |[A-Z][A-Z0-9_]{1,40}=\S)")


_ANY_MARK = recache.compile("|".join(re.escape(k) for k in sorted(VERDICT_MARKS, key=len, reverse=True)))


def _marked_cases(texts: list[str]) -> int:
    """Lines that each carry a verdict mark ("q8_0 / q4_0  ❌ crashes"), two or more, under an optional caption
    ending in a colon: 2 with the caption, 1 without, 0 when the paragraph is no such list."""
    cap = 1 if _LIST_CAPTION.match(texts[0].strip()) or texts[0].rstrip().endswith((":", "：")) else 0
    rest = texts[cap:]
    ok = len(rest) >= 2 and all(len(t) <= 160 and _ANY_MARK.search(t) for t in rest)
    return (cap + 1) if ok else 0


def _captioned_entries(texts: list[str]) -> bool:
    """A short caption ending in a colon, then lines that are each an entry (``_ENTRY_LINE``), one or more."""
    return len(texts) >= 2 and bool(_LIST_CAPTION.match(texts[0].strip())) and len(texts[0].split()) <= 4 \
        and all(_ENTRY_LINE.match(t) and len(t) <= 300 for t in texts[1:])


_YAML_KEY = recache.compile(r"^[\w-]{1,40}:(?:\s|$)")


def _front_after_comment(lines: list[str], a: int, b: int) -> int:
    """YAML front matter below a leading comment ("<!-- source -->" / "---" / "date: ..." / "---"): markdown-it
    takes front matter on the first line only, and reads this one as a "---" rule, paragraphs of keys (a blank line
    among them, as a Jekyll post has) and a setext heading of the last keys. The line of its opening "---", or -1."""
    if b - a < 1 or lines[b - 1].strip() != "---":
        return -1
    start = a
    while start > 0 and lines[start - 1].strip() != "---" and (
            not lines[start - 1].strip() or _YAML_KEY.match(lines[start - 1]) or lines[start - 1].startswith((" ", "-"))):
        start -= 1
    if start < 1 or lines[start - 1].strip() != "---" or b - 1 <= start:
        return -1
    # (a generator, so the first line of another kind ends the look: every "---" of a long document asks)
    before = (x.strip() for x in lines[:start - 1] if x.strip())
    keys = [x for x in lines[start:b - 1] if x.strip()]
    ok = bool(keys) and all(_YAML_KEY.match(x) or x.startswith((" ", "-")) for x in keys) and all(
        x.startswith("<!--") and x.endswith("-->") for x in before)
    return start - 1 if ok else -1


def post_author(text: str) -> str | None:
    s = text.strip().lstrip("#").strip()
    if len(s) > 120:
        return None
    for rx in _POST:
        m = rx.match(s)
        if m:
            return m.group("who")
    return None


class _Cut:
    """One pass over markdown-it's block tokens, turning each leaf into units."""

    def __init__(self, lines: list[str]):
        self.lines = lines
        self.doc = Doc(lines)
        self.path: list[tuple[int, int]] = []  # (level, heading unit id)
        self.items: list[dict] = []  # open list items (innermost last)
        self.lists: list[dict] = []
        self.quote = 0
        self.table: dict | None = None
        self.nblock = 0
        self.post = -1
        self.author = ""
        self.post_level = 99
        self.glyph: dict | None = None  # the list of "•" lines being read (a web page's list as plain text)
        # (the last line that heads a post: a heading above the posts' level before it is a post's own section)
        self.last_post = max((i for i, ln in enumerate(lines) if ln.startswith("#") and post_author(ln)), default=-1)
        self.sections_of_post: set[int] = set()  # the levels of the headings the current post opened its sections with

    def add(self, kind: str, first: int, last: int, text: str, **kw) -> Unit:
        it = self.items[-1] if self.items else None
        u = Unit(len(self.doc.units), kind, first, max(first, last), text, path=tuple(h for _, h in self.path),
                 quoted=self.quote, post=self.post, author=self.author,
                 item=it["id"] if it else -1, group=it["list"] if it else -1, index=it["index"] if it else -1,
                 depth=len(self.items), checkbox=it["check"] if it else "", ordered=it["ordered"] if it else False)
        for k, v in kw.items():
            setattr(u, k, v)
        self.doc.units.append(u)
        return u

    def _front(self, a: int, b: int) -> bool:
        """Front matter ending at line ``b - 1`` (its closing "---"), when the lines above it are (``_front_after_comment``):
        the units read from its opening "---" and its keys are taken back, and it is one unit."""
        top = _front_after_comment(self.lines, a, b)
        if top < 0:
            return False
        while self.doc.units and self.doc.units[-1].first >= top:
            self.doc.units.pop()
        self.add("front", top, b - 1, "\n".join(self.lines[top + 1:b - 1]))
        return True

    def rule(self, a: int, b: int) -> None:
        if not self._front(a, b):  # ("tags: [...]" continuing a "- etc" item, then the closing "---": a rule to markdown)
            self.add("rule", a, b - 1, self.lines[a].strip())

    def heading(self, a: int, b: int, level: int, text: str) -> None:
        if self._front(a, b):
            return
        if b - a >= 2 and _SETEXT_RULE.match(self.lines[b - 1]) and _told_not_titled(text):
            # A paragraph with "---" right under it: markdown makes it a setext heading, its writer a rule after a
            # paragraph ("I tried X. It loaded, but ... / ---"). Read as written: sentences, then the rule.
            self.paragraph(a, b - 1, text)
            self.rule(b - 1, b)
            return
        self.nblock += 1
        while self.path and self.path[-1][0] >= level:
            self.path.pop()
        who = post_author(text)
        if who is not None and level <= self.post_level + 1:
            self.post, self.author, self.post_level = len(self.doc.posts), who, level
            self.doc.posts.append((a, who))
            self.sections_of_post = set()
        elif level < self.post_level and who is None and self.post >= 0 and not self.quote and a > self.last_post:
            if self._opens_post():
                self.sections_of_post.add(level)  # ("## Your current environment" right under "### ana — date")
            elif level not in self.sections_of_post and not (self.sections_of_post
                                                             and level > min(self.sections_of_post)):
                # A heading above the posts' level that is no post, with no post after it: the thread is over. (One
                # with posts after it, "## The defect" in a post headed "### alice — 2025-03-01", is the post's own
                # section; so is one of the level the last post opened with: an issue form's "## Describe the bug",
                # and one under the title the post opened with: "## Summary" under "# Segfault in ifft".)
                self.post, self.author, self.post_level = -1, "", 99
        self.add("heading", a, b - 1, _heading_text(text), level=level)
        self.path.append((level, len(self.doc.units) - 1))

    def _opens_post(self) -> bool:
        """Is the heading being read the first thing in a post, right under the post's own header ("### eve — date" /
        "## Workarounds attempted")? Then it is the post's section, even in the last post."""
        last = self.doc.units[-1] if self.doc.units else None
        return last is not None and last.kind == "heading" and last.post == self.post and post_author(last.text) is not None

    def _glyph_items(self, a: int, texts: list[str], block: int) -> None:
        g = self.glyph
        if g is None or a - g["last"] > 2 or g["path"] != self.path or g["post"] != self.post:
            g = self.glyph = {"group": block, "last": a, "n": 0, "path": list(self.path), "post": self.post}
        for k, t in enumerate(texts):
            self.add("sentence", a + k, a + k, _GLYPH_ITEM.sub("", t).strip(), block=block, head=True, depth=1,
                     item=a + k, group=g["group"], index=g["n"])
            g["n"] += 1
            g["last"] = a + k

    def _numbered_lines(self, a: int, texts: list[str], block: int) -> bool:
        """ "利用…发现如下问题：" / "（1）单机多卡…，成功" / "（2）多机多卡…，成功": entries numbered 1, 2, 3… line after line in
        one paragraph are a list's items (each its own place, as a markdown list's are); the lines above the first are
        the paragraph's sentences, and a line without a number goes on the entry above it."""
        nums = [_enum_number(t) for t in texts]
        at = [k for k, n in enumerate(nums) if n is not None]
        if len(at) < 2 or [nums[k] for k in at] != list(range(nums[at[0]], nums[at[0]] + len(at))) or nums[at[0]] > 1:
            return False
        for lo, hi, s in _sentences(texts[:at[0]]) if at[0] else ():
            self.add("sentence", a + lo, a + hi, s, block=block, head=(lo == 0))
        for n, k in enumerate(at):
            end = at[n + 1] if n + 1 < len(at) else len(texts)
            body = " ".join(t.strip() for t in texts[k:end])
            self.nblock += 1  # (each entry its own block, as a markdown item's paragraph is)
            self.add("sentence", a + k, a + end - 1, _ENUM_LINE.sub("", body, count=1).strip(), block=self.nblock, head=True,
                     depth=1, item=a + k, group=block, index=n, ordered=True)
        return True

    def _as_heading(self, a: int, b: int, texts: list[str], block: int) -> bool:
        """A paragraph that is a heading in all but markup: read as one (level 7), its other lines as its body."""
        if len(texts) == 1 and _CAPTION.match(texts[0]) and not _BOLD_COMMAND.match(_CAPTION.match(texts[0]).group(2)):
            # "**Key Learnings from the Debugging Process**" alone on its line (not "**export NCCL_P2P_DISABLE=1**", a
            # command set in bold: what a reply suggests or ran)
            self.heading(a, b, 7, _CAPTION.match(texts[0]).group(2))
        elif _numbered_try(texts[0]):
            # "시도1. 보정 가중치를 적용" / "Attempt 2: pin the driver" opening a paragraph: the try's heading, what follows
            # it (the rest of the paragraph, the blocks under it) its body
            self.heading(a, a + 1, 7, texts[0].strip())
            for lo, hi, sent in _sentences(texts[1:]) if len(texts) > 1 else ():
                self.add("sentence", a + 1 + lo, a + 1 + hi, sent, block=block, head=(lo == 0))
        elif len(texts) == 1 and _names_list_below(self.lines, texts[0], b):
            # "Open questions:" on its own line right above a list names that list, as a heading would; so does a
            # page's plain-text heading ("What Doesn't Work" over "• ollama stop: ...").
            self.heading(a, b, 7, texts[0].strip().rstrip(":："))
        else:
            return False
        return True

    def paragraph(self, a: int, b: int, content: str) -> None:
        self.nblock += 1
        block = self.nblock
        texts = content.split("\n")
        if len(texts) != b - a:
            texts = [self.lines[i].strip() for i in range(a, b)]
        if self.items and self.items[-1]["fresh"]:
            it = self.items[-1]
            it["fresh"] = False
            m = _CHECK.match(texts[0])
            if m:
                it["check"] = m.group(1).lower()
                texts[0] = texts[0][m.end():]
            first_of_item = True
        else:
            first_of_item = False
        if self._shaped(a, b, texts, block, first_of_item):
            return
        mail = _MAIL_FROM.match(texts[0]) if not self.items and not self.quote and len(texts) <= 4 else None
        if mail and (len(texts) == 1 or any(t.lower().startswith(("date:", "sent:", "subject:")) for t in texts[1:])):
            # "From: Priya Raman" / "Date: Tue, 8 Apr 2025": a mailing-list message starts
            self.post, self.author, self.post_level = len(self.doc.posts), mail.group("who").strip(), 3
            self.doc.posts.append((a, self.author))
        elif not self.items and len(texts) == 1:
            who = post_author(texts[0]) if re.match(r"^\W{0,3}(?:\*\*|__|@)", texts[0]) else None
            if who:
                # A post signed in a paragraph ("**alice** commented on ..."): issue-form headings inside it
                # ("### Describe the bug") are part of it; only a top-level heading ends the thread.
                self.post, self.author, self.post_level = len(self.doc.posts), who, 3
                self.doc.posts.append((a, who))
        if not self.items and not self.quote and _bare_commands(self, a, texts, block):
            return
        run_in = _run_in(texts[0])
        lead = ""
        if run_in:
            # "**Building.** I built ...": a run-in heading names the paragraph; its words are no sentence
            texts, lead = [texts[0][run_in.end():]] + texts[1:], run_in.group(0).strip()
        for k, (lo, hi, s) in enumerate(_sentences(texts)):
            self.add("sentence", a + lo, a + hi, s, block=block, head=(k == 0 and (first_of_item or not self.items)),
                     lead=lead if k == 0 else "")

    def _shaped(self, a: int, b: int, texts: list[str], block: int, first_of_item: bool) -> bool:
        """A paragraph that is something else by its shape (a heading, a table, numbered entries, a command, a list
        under a caption, glyph items), cut as that; False for prose."""
        top = not self.items and not self.quote
        if top and self._as_heading(a, b, texts, block):
            return True
        table = delimited.table_in_paragraph(self.lines, a, texts) if not first_of_item else None
        if table:
            self.delimited_rows(a, table, block)
            return True
        if top and self._numbered_lines(a, texts, block):
            return True
        out = _printed_from(texts) if top else None
        if out:  # (a paragraph all of printed lines stays sentences, each read as pasted output: `cues._PASTED`)
            # (a paste of what a program printed, no fence around it, after the writer's lines: "@hiyouga" /
            # "/…/optimization.py:411: FutureWarning: ..." / "[2023-09-18 08:36:08] [INFO] ..." / 'File "…", line 14')
            for k, (lo, hi, sent) in enumerate(_sentences(texts[:out])):
                self.add("sentence", a + lo, a + hi, sent, block=block, head=(k == 0))
            self.add("code", a + out, a + len(texts) - 1, "\n".join(texts[out:]), block=block, lang="")
            return True
        run = _continued_run(texts)
        if run is not None:
            self._with_command(a, texts, run, block)
            return True
        cases = _marked_cases(texts) if top else 0
        if cases:
            # "Tested combinations:" / "q4_0 / q4_0  ✅ works" / "q8_0 / q4_0  ❌ crashes": cases line by line, each
            # with its verdict mark, are a list's items (under the caption, when there is one)
            if cases == 2:
                self.heading(a, a + 1, 7, texts[0].strip().rstrip(":："))
            self._glyph_items(a + cases - 1, texts[cases - 1:], block)
            return True
        if top and _captioned_entries(texts):
            # "Failing:" / '--samplers "top_k"' / '--sampling-seq "mt"': a caption over settings given line by line is
            # a list under its caption, one item per line, as if each line had a bullet
            self.heading(a, a + 1, 7, texts[0].strip().rstrip(":："))
            self._glyph_items(a + 1, texts[1:], block)
            return True
        if not self.items and all(_GLYPH_ITEM.match(t) for t in texts):
            # "• ollama stop: model unloads but the GPU stays stuck" line after line (or paragraph after paragraph):
            # a list as a page's text gives it, one item per line
            self._glyph_items(a, texts, block)
            return True
        return False

    def _with_command(self, a: int, texts: list[str], run: tuple[int, int], block: int) -> None:
        """A paragraph holding one command continued over lines with backslashes: the lines around it are sentences,
        the command one unit (not a sentence, or a list item, per flag)."""
        lo, hi = run
        for first, last in ((0, lo), (hi + 1, len(texts))):
            for k, (s_lo, s_hi, sent) in enumerate(_sentences(texts[first:last]) if last > first else ()):
                self.add("sentence", a + first + s_lo, a + first + s_hi, sent, block=block,
                         head=(first == 0 and k == 0 and not self.items))
        cmd = " ".join(t.strip().removesuffix("\\").strip() for t in texts[lo:hi + 1])
        self.add("command", a + lo, a + hi, cmd, block=block, comment="", lang="", desc="")

    def fence(self, a: int, b: int, info: str, content: str) -> None:
        self.nblock += 1
        lang = (info or "").strip().split(" ")[0].lower()
        body = list(range(a + 1, b - 1)) if b - a >= 2 else []
        table = delimited.table_in_fence(lang, [self.lines[i] for i in body]) if body else None
        if table:
            self.add("code", a, a, self.lines[a], block=self.nblock)
            self.delimited_rows(body[0], table, self.nblock)
            self.add("code", b - 1, b - 1, self.lines[b - 1], block=self.nblock)
            return
        if lang in _SHELL and body and _commands(self, body, lang, a, b, script=self.lines[body[0]].startswith("#!")):
            return
        if body and (_marked_lines(self, body, lang, a, b) or _arrowed_lines(self, body, lang, a, b)
                     or lang in _HASH_COMMENTED and _called_lines(self, body, lang, a, b)
                     or lang in _PLAIN_FENCE and _captioned_results(self, body, lang, a, b)):
            return
        if (lang in _SHELL or lang in _HASH_COMMENTED) and _note_runs(self.lines, body):
            _code_and_notes(self, list(range(a, b)), lang)
            return
        if not lang and body and _notes_in_fence([self.lines[i] for i in body]):
            self.add("code", a, a, self.lines[a], block=self.nblock)
            _as_notes(self, body[0], [self.lines[i] for i in body], lang)
            self.add("code", b - 1, b - 1, self.lines[b - 1], block=self.nblock)
            return
        self.add("code", a, b - 1, content, block=self.nblock, lang=lang)

    def html(self, a: int, b: int, content: str) -> None:
        """An HTML block of text lines ("case0：OOM<br>"): one unit per line, tags off; an HTML table (a wiki's or
        a word processor's export): a row unit per ``<tr>`` as a markdown table's; else one unit."""
        rows = _html_rows(content) if "<tr" in content.lower() else []
        if len(rows) >= 2:
            self._html_table(a, b, rows)
            return
        texts = [_TAG.sub("", self.lines[i]).strip() for i in range(a, b)]
        if sum(bool(x) for x in texts) < 2 or "<br" not in content.lower() and "<p" not in content.lower():
            self.add("html", a, b - 1, content)
            return
        self.nblock += 1
        for k, x in enumerate(texts):
            self.add("sentence" if x else "html", a + k, a + k, x or self.lines[a + k].strip(), block=self.nblock,
                     head=True)

    def _html_table(self, a: int, b: int, rows: list[tuple[int, int, list[str], bool]]) -> None:
        """Row units of an HTML table: its header row (``<th>`` cells, else the first row) first, each row over the
        lines it spans; the lines between rows (``<table>``, ``</table>``) are html units."""
        self.nblock += 1
        block, header, k, at = self.nblock, [], 0, a
        for n, (lo, hi, cells, head) in enumerate(rows):
            lo, hi = max(a + lo, at), min(a + hi, b - 1)
            if lo > hi:
                continue  # (two rows on one line: the first one's unit holds the line)
            if lo > at:
                self.add("html", at, lo - 1, "\n".join(self.lines[at:lo]))
            if not header and (head or n == 0):
                header = cells
                self.add("row", lo, hi, " | ".join(cells), block=block, group=block, index=-1, cells=tuple(cells))
            else:
                self.add("row", lo, hi, " | ".join(cells), block=block, group=block, index=k, header=tuple(header),
                         cells=tuple(cells))
                k += 1
            at = hi + 1
        if at <= b - 1:
            self.add("html", at, b - 1, "\n".join(self.lines[at:b]))

    def delimited_rows(self, first: int, table: delimited.Table, block: int) -> None:
        """A delimited table read from line ``first`` on, as a markdown table's rows: its header row first when
        the header is one of those lines, then one row unit per line."""
        header = table.header
        if table.header_first:
            self.add("row", first, first, " | ".join(header), block=block, group=block, index=-1, cells=header)
            first += 1
        for k, cells in enumerate(table.rows):
            self.add("row", first + k, first + k, " | ".join(cells), block=block, group=block, index=k,
                     header=header, cells=tuple(cells))

    def row(self, a: int, cells: list[str], index: int) -> None:
        t = self.table
        self.add("row", a, a, " | ".join(cells), block=t["block"], group=t["block"], index=index,
                 header=tuple(t["header"]), cells=tuple(cells))


# A verdict written after a command in Chinese, Japanese or Korean with only a space before it ("./llama-cli -m x.gguf
# -fa 乱码"): its comment, as "# garbled" would be. A program run from the current directory ("./llama-cli") is a run.
_TRAIL_CJK = recache.compile(r"\s(?P<c>[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7a3][^\x00-\x7f]{0,30})\s*$")
_LOCAL_RUN = recache.compile(r"^\s{0,3}\./[\w.+-]+(?:\s|$)")


# A line a program printed, by its shape: a traceback's lines, a log record's date or level, a source path with its
# line number, an exception or warning named at its start, a progress bar
_PRINTED = recache.compile(r"^\s*(?:Traceback \(most recent call last\)|File \"[^\"\n]+\", line \d+|"
                           r"\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d|\[(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL)\]|"
                           r"(?:/|[A-Za-z]:\\)[^\s:]+:\d+:|(?:[a-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning):\s|"
                           r".{0,80}\d{1,3}%\|)")


def _printed_from(texts: list[str]) -> int | None:
    """Where a paragraph's pasted program output begins (a line it printed, from which on three lines or more,
    and half its lines at least, are such lines), or None: the lines before it are the writer's."""
    said = [bool(_PRINTED.match(t)) for t in texts]
    after = [0] * (len(texts) + 1)  # (printed lines from k on, counted once: a paragraph of 100,000 lines stays linear)
    for k in range(len(texts) - 1, -1, -1):
        after[k] = after[k + 1] + said[k]
    return next((k for k in range(len(texts)) if said[k] and after[k] >= 3 and after[k] * 2 >= len(texts) - k), None)


def _continued_run(texts: list[str]) -> tuple[int, int] | None:
    """The lines (first, last) of a command pasted in a paragraph and continued with backslashes, three lines or more
    ("-ctx-size 71680 \\" / "-ctk q8_0 \\" / ... / "--no-mmap"), or None."""
    ends = [t.rstrip().endswith("\\") and not t.rstrip().endswith("\\\\") for t in texts]
    k = 0
    while k < len(texts):
        if ends[k]:
            j = k
            while j < len(texts) and ends[j]:
                j += 1
            if j - k >= 2 and j < len(texts):
                return k, j
            k = j
        k += 1
    return None


def _bare_commands(cut: _Cut, a: int, texts: list[str], block: int) -> bool:
    """Commands pasted into a paragraph without a fence, each with what it showed as a trailing comment ("uname -r #
    5.15.0-94-generic", "dkms status nvidia # nvidia/570.133.07 installed"): one command unit per such line, as in
    a shell block, and the paragraph's other lines its sentences; False (all prose) unless two lines, or the only
    one, are such commands."""
    said = [(_TRAIL_COMMENT.search(t) or _TRAIL_CJK.search(t)) if _TOOL.match(t) or _LOCAL_RUN.match(t) else None
            for t in texts]
    if sum(1 for m in said if m) < min(2, len(texts)):
        return False
    prose: list[int] = []
    for k, m in enumerate(said + [None]):
        if k < len(texts) and m is None:
            prose.append(k)
            continue
        if prose:  # (the lines of prose between commands, cut into sentences as any paragraph's)
            for lo, hi, sent in _sentences([texts[j] for j in prose]):
                cut.add("sentence", a + prose[0] + lo, a + prose[0] + hi, sent, block=block, head=False)
            prose = []
        if k < len(texts):
            cut.add("command", a + k, a + k, texts[k][:m.start()].strip(), block=block, comment=m.group("c").strip(),
                    lang="")
    return True


def _commands(cut: _Cut, body: list[int], lang: str, a: int, b: int, script: bool = False) -> bool:
    """A shell block of commands, each with the comment that says how it went ("# 1xGPU - OK" above it,
    "cmd  # NOK" after it, "# -> hangs at 128M" under it): one unit per command; False when it is no such block.
    ``script``: a program (a shebang, or a note that is all commands), whose lines it runs and never prints, so it
    is never read as a console session pasted without prompts."""
    whole, apart = body, _apart(cut.lines, body)
    docs = _heredocs(cut.lines, body)  # (a here-document's lines are its command's input, never commands of their own)
    inner = {i for lines in docs.values() for i in lines}
    body = [i for i in body if i not in apart and i not in inner]  # (notes and a shebang are read with the rest)
    prompted = _transcript_groups(cut.lines, body)
    groups = _with_heredocs(prompted or _command_groups(cut.lines, body), docs)
    said = [g for g in groups if g["result"] or g["desc"]]
    # ("export EPOCHS=1", "cd scripts" between the commented runs set them up: they are not counted as silent runs)
    runs = [g for g in groups if g["result"] or g["desc"] or not _SETUP_CMD.match(cut.lines[g["cmd"][0]])]
    # ("$ nvcc -V" and what it printed: one tool run with its prompt and output is a command too)
    single = [] if prompted else _transcript_groups(cut.lines, body, least=1)
    lead = next((i for i in body if cut.lines[i].strip()), -1)
    one_look = len(single) == 1 and bool(single[0]["result"]) and (single[0]["cmd"][0] == lead or bool(
        _TOOL.match(_PROMPT.sub("", cut.lines[single[0]["cmd"][0]]))))
    if one_look:
        groups = single
    elif len(said) < 2 or len(said) * 2 < len(runs):
        groups = [] if script else _bare_transcript_groups(cut.lines, body)
        if not groups and (a < 0 or len(said) >= _MANY_RUNS) and len(said) >= 3:
            # A script kept as notes ("ubuntu-drivers devices" and the devices it listed as comments under it,
            # among dozens of setup commands): the commands shown with what they printed or how they went are runs;
            # the rest of the script is code.
            _script_said(cut, whole, said, lang)
            return True
        told = [g for g in said if _put_away_line(cut.lines[g["cmd"][0]])
                and (g["result"] or _says_how(tuple(g["desc"])))] if script else []
        if not groups and told:
            # (a script with one or two runs put away in comments that say how they went: those are runs, the rest
            # is code and notes)
            _script_said(cut, whole, told, lang)
            return True
        if not groups:
            return False
    if a >= 0:
        cut.add("code", a, a, cut.lines[a].strip(), block=cut.nblock, lang=lang)  # the opening fence
    for g in groups:
        _add_command(cut, g, lang)
    inside = {i for g in groups for i in g["lines"]}
    rest = sorted({i for i in body if i not in inside} | apart)
    if _note_runs(cut.lines, rest):
        # ("# TODO next try --compile false" between the runs, no command's caption or output: the author's notes)
        _code_and_notes(cut, rest, lang, per_line=True)
    if b >= 0:
        cut.add("code", b - 1, b - 1, cut.lines[b - 1].strip(), block=cut.nblock, lang=lang)
    return True


# A here-document's opening ("cat > probe.py <<'EOF'", "python3 <<-PY"): its word ends it, alone on a line
_HEREDOC = recache.compile(r"<<-?\s*(['\"]?)(?P<end>[A-Za-z_]\w{0,20})\1\s*(?:[|;&>]|$)")


def _heredocs(lines: list[str], body: list[int]) -> dict[int, list[int]]:
    """The here-documents of a shell block: the line that opens one -> its lines, up to and with the closing word's
    line (to the block's end when it is never closed)."""
    out: dict[int, list[int]] = {}
    at, end = -1, ""
    for i in body:
        if at >= 0:
            out[at].append(i)
            if lines[i].strip() == end:
                at = -1
            continue
        m = _HEREDOC.search(lines[i]) if not lines[i].lstrip().startswith("#") else None
        if m:
            at, end = i, m.group("end")
            out[at] = []
    return {k: v for k, v in out.items() if v}


def _with_heredocs(groups: list[dict], docs: dict[int, list[int]]) -> list[dict]:
    """Each command's here-document lines added to its lines (its text stays the command line)."""
    for g in groups:
        extra = [i for c in g["cmd"] for i in docs.get(c, [])]
        if extra:
            g["lines"] = sorted(set(g["lines"]) | set(extra))
    return groups


# A run of comment prose this long is notes even right above a command: a caption or a verdict is a line or two
_LONG_NOTE = 9
# A fenced script (a pasted shell history) with this many runs told with a caption or a result: each run a unit of its
# own, the rest code, as in a script kept as a note (fewer, and the block stays one unit of code)
_MANY_RUNS = 6


def _apart(lines: list[str], body: list[int]) -> set[int]:
    """The lines of a shell block that belong to no command: its shebang, and each run of comment prose that stands
    alone between blank lines (a script's header of "hard-won settings, don't change casually: - X: measured Y"), which
    is the author's notes, read sentence by sentence, not the caption or the output of the command near it."""
    lead = [i for i in body if lines[i].strip() and not lines[i].lstrip().startswith("<!--")][:1]
    out = {i for i in lead if lines[i].startswith("#!")}
    prose = {i for run in _note_runs(lines, body) for i in run}
    blocks: list[list[int]] = []
    for i in body:  # (the runs of "#" lines; a commented-out setting inside one does not end it)
        if i not in out and _HASH_LINE.match(lines[i]):
            if blocks and blocks[-1][-1] == i - 1:
                blocks[-1].append(i)
            else:
                blocks.append([i])
    for block in blocks:
        before, after = block[0] - 1, block[-1] + 1
        alone = (before < 0 or before in out or not lines[before].strip()) and (after >= len(lines) or not lines[after].strip())
        if (alone or len(block) >= _LONG_NOTE) and len(prose.intersection(block)) * 3 >= len(block) * 2:
            out.update(block)
    return out


def _add_command(cut: _Cut, g: dict, lang: str) -> None:
    """One command unit for a group of ``_command_groups``: the command, and its comment (result, else what it is)."""
    comment = " ".join(g["result"]) or " ".join(g["desc"])
    # (a command continued over lines is one command: the continuation's backslashes go with the line breaks)
    cmd = ""
    for k, i in enumerate(g["cmd"]):
        line = _PROMPT.sub("", _CMD_COMMENT.sub(r"\g<c>", cut.lines[i])).strip()
        # (the lines of one command continued with backslashes are one line; commands under one caption are a list)
        glue = "" if not k else " " if cut.lines[g["cmd"][k - 1]].rstrip().endswith("\\") else "; "
        cmd += glue + line.removesuffix("\\").rstrip()
    cmd = g.get("text") or cmd
    cut.add("command", g["lines"][0], g["lines"][-1], cmd or comment, block=cut.nblock, comment=comment, lang=lang,
            desc=" ".join(g["desc"]), prompted=g.get("prompted", False))


def _script_said(cut: _Cut, body: list[int], said: list[dict], lang: str) -> None:
    inside = {i for g in said for i in g["lines"]}
    for g in said:
        _add_command(cut, g, lang)
    _code_and_notes(cut, [i for i in body if i not in inside], lang, per_line=True)


# Languages whose comments open with "#", besides the shells: a Python or YAML block's comment prose is notes too.
_PLAIN_FENCE = {"", "text", "txt", "plaintext", "console", "output", "log"}
_HASH_COMMENTED = {"python", "py", "python3", "yaml", "yml", "toml", "text", "txt", "plaintext", "conf", "ini", "makefile",
                   "cmake", "ebuild"}
_HASH_LINE = recache.compile(r"^\s*#(?![!#]*!)(?: ?)(?P<c>.*)$")
_LICENCE = recache.compile(r"^\s*(?:SPDX-[\w-]+:|Copyright\b|\(c\)\s|Licensed under\b|License:)", re.I)
_NOTE_LIST = recache.compile(r"^\s{0,6}(?:[-*+•]|\d{1,2}[.)])\s+\S")


def _code_and_notes(cut: _Cut, body: list[int], lang: str, per_line: bool = False) -> None:
    """Lines of a script or a code block: the runs of "#" comments that are prose ("Facts established by bisection:
    / - empty-kernel build hangs the same -> not kernel workload") cut into sentences and list items as a document of
    their own, each with its source lines; the other lines code, one unit per stretch (``per_line``: per line)."""
    notes = _note_runs(cut.lines, body)
    taken = {i for run in notes for i in run}
    stretch: list[int] = []

    def flush() -> None:
        if stretch and per_line:
            for i in stretch:
                cut.add("code", i, i, cut.lines[i].strip(), block=cut.nblock, lang=lang)
        elif stretch:
            cut.add("code", stretch[0], stretch[-1], "\n".join(cut.lines[i] for i in stretch), block=cut.nblock,
                    lang=lang)
        stretch.clear()

    runs = {run[0]: run for run in notes}
    for i in body:
        if i in runs:
            flush()
            _note_units(cut, runs[i], lang)
        elif i not in taken and (cut.lines[i].strip() or stretch):
            stretch.append(i)
    while stretch and not cut.lines[stretch[-1]].strip():
        stretch.pop()
    flush()


# What a program prints, not what a person writes: a traceback, a log record (a date, a time, a level), a prompt, code
_NOT_NOTES = recache.compile(r"^\s*(?:Traceback|File \"|\[?\d{4}-\d\d-\d\d|\[?\d\d:\d\d:\d\d|\$ |>>> |"
                             r"\[?(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE|FATAL|CRITICAL)\b|"
                             r"(?:def|class|import|from|for|if|return|#include)\b|.*[;{}]\s*$)")
# A person's own words in a fence: a line led by "Note:" (or "Update", "Edit", "TODO"), a list item of a sentence, a
# sentence in Chinese or Japanese (eight characters of the script in a row, with their punctuation)
_NOTE_LINE = recache.compile(r"^\s*(?:note|update|edit|todo)\b\W|^\s*[-*]\s+\S+(?:\s+\S+){4}|"
                             r"[\u4e00-\u9fff\u3040-\u30ff，、。]{8}", re.I)
# A character of a script that writes words without spaces between them (Chinese, Japanese): "下周再试一下升级驱动" is
# one "word" to str.split
CJK_CHAR = recache.compile(r"[\u3040-\u30ff\u3400-\u9fff]")


def _notes_in_fence(texts: list[str]) -> bool:
    """A fence with no language that holds a person's notes (a benchmark diary pasted whole: "eager:" / its numbers /
    "- torch.compile on whole model generates gibberish ..."): three or more paragraphs, at least two lines in the
    person's own words, and nothing a program prints (a traceback, a log record, code)."""
    filled = [t for t in texts if t.strip()]
    paragraphs = sum(1 for k, t in enumerate(texts) if t.strip() and (k == 0 or not texts[k - 1].strip()))
    return len(filled) >= 6 and paragraphs >= 3 and sum(bool(_NOTE_LINE.match(t)) for t in filled) >= 2 and not any(
        _NOT_NOTES.match(t) for t in filled) and sum(_prose_line(t) for t in filled) * 3 >= len(filled)


def _note_runs(lines: list[str], body: list[int]) -> list[list[int]]:
    """The runs of consecutive "#" comment lines that read as prose: mostly lines of words (``_prose_line``), three of
    them or a list item, and twelve words in all; not commented-out commands (those are code)."""
    runs: list[list[int]] = []
    cur: list[int] = []
    for i in body:
        m = _HASH_LINE.match(lines[i])
        if m and not _commented_cmd(m.group("c").strip()) and (not cur or cur[-1] == i - 1):
            cur.append(i)
            continue
        runs.append(cur)
        cur = [i] if m and not _commented_cmd(m.group("c").strip()) else []
    runs.append(cur)
    out = []
    for run in runs:
        texts = [_HASH_LINE.match(lines[i]).group("c") for i in run]
        filled = [t for t in texts if t.strip()]
        worded = [t for t in filled if _prose_line(t)]
        if len(worded) * 2 >= len(filled) and sum(len(t.split()) for t in worded) >= 12 and (len(worded) >= 3 or any(
                _NOTE_LIST.match(t) for t in worded)):
            out.append(run)
    return out


_WORD = recache.compile(r"^[(\[\"'`]?(?:[A-Za-z][a-z'’-]+|[\u4e00-\u9fff\u3040-\u30ff\uac00-\ud7a3]+)[)\]\"'`,.:;!?]*$")


def _prose_line(text: str) -> bool:
    """A comment line of words, three or more, most of them words (not a program's "#  Rank 0 Group 0 Pid 4766"
    header, not columns aligned with runs of spaces); in Chinese or Japanese, which put no spaces between words, six
    characters of the script or more, at least half the line's."""
    toks = text.split()
    if "   " in text.strip():
        return False
    cjk = len(CJK_CHAR.findall(text))
    if cjk >= 6 and cjk * 2 >= len(text.replace(" ", "")):
        return True
    return len(toks) >= 3 and sum(bool(_WORD.match(t)) for t in toks) * 5 >= len(toks) * 3


def _note_units(cut: _Cut, run: list[int], lang: str) -> None:
    """One run of comment prose, read as markdown: its sentences and list items become units on the run's source
    lines (item and block ids moved past the document's); whatever else it holds (a commented loop) is code."""
    # (a licence header is the file's, not the author's notes: a line of its own, kept as code)
    said = [_HASH_LINE.match(cut.lines[i]).group("c") for i in run]
    _as_notes(cut, run[0], ["" if _LICENCE.match(c) else c for c in said], lang, kept=said)


def _as_notes(cut: _Cut, first: int, texts: list[str], lang: str, kept: list[str] | None = None) -> None:
    """Lines read as markdown of their own from line ``first`` on: their sentences and list items become units on
    their source lines; a line that reads as neither (``kept``: the lines as written) stays code."""
    sub = _Cut(texts)
    for k, t in enumerate(tokens := _md().parse("\n".join(texts))):
        handler = _OPEN.get(t.type) if t.map else None
        if handler is None:
            if not t.map:
                _CLOSE.get(t.type, _nothing)(sub)
            continue
        handler(sub, t, t.map[0], t.map[1], tokens[k + 1] if k + 1 < len(tokens) else None)
    base = cut.nblock
    said: set[int] = set()
    for u in sub.doc.units:
        if u.kind != "sentence":
            continue
        cut.add("sentence", first + u.first, first + u.last, u.text, block=base + u.block, head=u.head,
                item=first + u.item if u.item >= 0 else -1, group=base + u.group if u.group >= 0 else -1,
                index=u.index, depth=u.depth, checkbox=u.checkbox, ordered=u.ordered)
        said.update(range(u.first, u.last + 1))
    cut.nblock = base + sub.nblock + 1
    rest = [first + k for k in range(len(texts)) if k not in said and (kept or texts)[k].strip()]
    for i in rest:
        cut.add("code", i, i, cut.lines[i].strip(), block=cut.nblock, lang=lang)


# A line that opens with a verdict mark ("✅ GPU: L40  Driver 525  CUDA 12.0"): the mark says how that setting went.
_MARKED_LINE = recache.compile(r"^\s*(?:[-*+]\s+)?(?P<m>" + "|".join(re.escape(k) for k in sorted(VERDICT_MARKS, key=len, reverse=True))
                          + r")\s*(?P<t>\S.*)$")


# A setting with its value: "Driver Version: 525.116.04", "CUDA 12.3", "NCCL_P2P_DISABLE=1".
_SETTING = recache.compile(r"\b[\w.-]+\s*=\s*\S|\bv?\d+\.\d+")


def _verdict_units(cut: _Cut, marked: dict, lang: str, a: int, b: int) -> None:
    """A fence's lines: each line with a verdict (its match's ``t`` and ``m``) a command unit whose comment is the
    verdict, as a command's "# OK" is; the fence lines and any other line code."""
    for i in range(a, b):
        m = marked.get(i)
        if m is None:
            cut.add("code", i, i, cut.lines[i].strip(), block=cut.nblock, lang=lang)
        else:
            cut.add("command", i, i, m.group("t").strip(), block=cut.nblock, comment=m.group("m"), lang=lang, desc="")


def _marked_lines(cut: _Cut, body: list[int], lang: str, a: int, b: int) -> bool:
    """A block of settings each marked with its verdict, pasted into a fence: one unit per marked line (the mark is
    its comment, as a command's "# OK" is), the fence lines and any other line code; False when fewer than two
    lines, or not most of its lines, are marked, or when most marked lines name no setting."""
    filled = [i for i in body if cut.lines[i].strip()]
    marked = {i: m for i in filled if (m := _MARKED_LINE.match(cut.lines[i]))}
    if len(marked) < 2 or len(marked) * 2 < len(filled):
        return False
    if sum(1 for m in marked.values() if _SETTING.search(m.group("t"))) * 2 <= len(marked):
        return False  # "✅ Model loads / ✅ Patches apply / ❌ HANGS": stages of one run ticked off, not settings tried
    _verdict_units(cut, marked, lang, a, b)
    return True


# "inputs-only   -> HANG", "prealloc-only -> PASS, PASS  (2/2)": a case and its verdict, one per line of a fence.
_ARROWED = recache.compile(r"^\s*(?:[-*+]\s+)?(?P<t>\S.{0,120}?)\s+(?:->|=>|→)\s+(?P<m>(?:pass(?:ed|es)?|fail(?:ed|s)?|hangs?|"
                           r"hung|ok|nok|crash(?:ed|es)?|works?|worked|oom|errors?|segfaults?|timeouts?|timed out|"
                           r"success|succeeded|broken|good|bad|fine|wedged?|deadlock(?:ed|s)?)\b.*)$", re.I)


def _arrowed_lines(cut: _Cut, body: list[int], lang: str, a: int, b: int) -> bool:
    """A fence of cases, each with an arrow to its verdict ("inputs-only -> HANG" / "none(0) -> PASS"): one command unit
    per case, the verdict its comment (as a command's "# OK" is); False unless two lines, and most lines, are such."""
    filled = [i for i in body if cut.lines[i].strip()]
    marked = {i: m for i in filled if (m := _ARROWED.match(cut.lines[i]))}
    if len(marked) < 2 or len(marked) * 3 < len(filled) * 2:
        return False
    _verdict_units(cut, marked, lang, a, b)
    return True


# "trial(32, 2)  # -> CUDA error: misaligned address", "run(bs=8)  # OOM": a call in a script and, after it, how it went.
_CALLED = recache.compile(r"^\s*(?P<t>[^#\s][^#]{0,160}?)\s+#\s*(?:->|=>|→)?\s*(?P<m>(?:ok|nok|pass(?:ed|es)?|fail(?:ed|s)?|"
                          r"hangs?|hung|crash(?:ed|es)?|works?|worked|oom|errors?|segfaults?|timeouts?|timed out|success|"
                          r"succeeded|broken|fine|cuda error|runtimeerror|illegal memory access|nan)\b.*)$", re.I)


def _called_lines(cut: _Cut, body: list[int], lang: str, a: int, b: int) -> bool:
    """A script's calls, each with the comment that says how it went ("trial(64, 2)  # -> OK"): one command unit per
    such call, the rest of the script code; False unless two calls say so."""
    marked = {i: m for i in body if (m := _CALLED.match(cut.lines[i]))}
    if len(marked) < 2:
        return False
    _verdict_units(cut, marked, lang, a, b)
    return True


# "--disable-xformers :" over "working but slow 160sec": a case named on its own line, ending in a colon, and what it
# gave on the next, one paragraph each; a YAML key ("model:") opens no case (no space, flag or setting in it, nor a
# space before its colon, as in "defaults :").
_CASE_CAPTION = recache.compile(r"^\s*(?P<t>\S.{0,120}?)\s*[:：]\s*$")
_CASE_NAME = recache.compile(r"\s|--?\w|=")


def _captioned_results(cut: _Cut, body: list[int], lang: str, a: int, b: int) -> bool:
    """A fence of results, each a paragraph of a case's caption and what it gave ("--disable-xformers :" / "working
    but slow 160sec"): one command unit per paragraph, the case its text and the result its comment (as a command's
    "# OK" is); False unless three paragraphs, and two in three of them, are such."""
    paras: list[list[int]] = []
    for i in body:
        if not cut.lines[i].strip():
            paras.append([])
        elif paras and paras[-1]:
            paras[-1].append(i)
        else:
            paras.append([i])
    paras = [p for p in paras if p]
    cases = {p[0]: p for p in paras if 2 <= len(p) <= 3 and (m := _CASE_CAPTION.match(cut.lines[p[0]]))
             and _CASE_NAME.search(m.group(0).strip()) and not cut.lines[p[1]][:1].isspace()
             and not any(_CASE_CAPTION.match(cut.lines[i]) for i in p[1:])}
    if len(cases) < 3 or len(cases) * 3 < len(paras) * 2:
        return False
    told = {k for p in cases.values() for k in p[1:]}  # (a set: a fence of thousands of cases stays linear)
    for i in range(a, b):
        p = cases.get(i)
        if p is not None:
            said = " ".join(cut.lines[k].strip() for k in p[1:])
            cut.add("command", p[0], p[-1], _CASE_CAPTION.match(cut.lines[i]).group("t"), block=cut.nblock,
                    comment=said, lang=lang, desc="")
        elif i not in told:
            cut.add("code", i, i, cut.lines[i].strip(), block=cut.nblock, lang=lang)
    return True


_ARROW_LINE = recache.compile(r"^\s*(?:->|=>|→)\s*(?P<c>.*)$")
_RESULT_COMMENT = recache.compile(r"^\s*(?:->|=>|→|result\b|output\b|got\b)", re.I)
# The C library's and the shell's words for a call that failed (strerror's text, bash's "command not found"), alone or
# behind the program and the path that failed: "bash: /opt/x.sh: No such file or directory", "# Operation not permitted"
SYSTEM_ERROR = (r"(?:Operation not permitted|Permission denied|No such file or directory|command not found|Read-only file "
                r"system|No space left on device|Connection refused|Cannot allocate memory|Device or resource busy|Too many "
                r"open files|Input/output error|Connection timed out|Network is unreachable)\b")
# The first words of a line a failing program prints: an exception or error line, a kill, a segfault, apt's "E: ..."
_ERROR_START = (r"(?:(?:[\w.]{0,60}(?:Error|Exception)|Traceback|Killed|Segmentation fault|command terminated|CUDA error|"
                r"terminate called|error|fatal)\b|E: \S|(?:[\w./~-]{1,80}:\s+){0,3}" + SYSTEM_ERROR + ")")
# A line of output that says the run failed ("Error! Bad return status ...", "ModuleNotFoundError: ...")
ERROR_LINE = recache.compile(r"^\s*" + _ERROR_START, re.I)
# A comment that is what a command printed, or says so: an error line, or a caption ending in "produces:" /
# "gives:" / "output:".
_OUTPUT_COMMENT = recache.compile(r"^(?:" + _ERROR_START + r"|.{0,80}\b(?:produces|produced|gives|gave|"
                                  r"outputs?|prints|printed|fails with|failed with)\s*:\s*$)", re.I)


def _caption_led(lines: list[str], body: list[int]) -> set[int]:
    """The comment lines of stretches (between blank lines) that alternate comment and command at least twice and
    open with a comment and close with a command ("# Fine." / "python train.py --bs 48" / "# OOM." / "python ..."):
    there a comment is the caption of the command under it, never the result of the one above. (A stretch that opens
    with a command and closes with a comment is the other way round; the reading line by line decides it.)"""
    out: set[int] = set()
    for chunk in _stretches(lines, body):
        kinds = ["c" if _CMD_COMMENT.match(lines[i]) and not lines[i].startswith("#!") else "x" for i in chunk]
        runs = [k for n, k in enumerate(kinds) if n == 0 or kinds[n - 1] != k]
        if len(runs) >= 4 and runs[0] == "c" and runs[-1] == "x":
            out |= {i for i, k in zip(chunk, kinds) if k == "c"}
    return out


def _stretches(lines: list[str], body: list[int]) -> list[list[int]]:
    out: list[list[int]] = [[]]
    for i in body:
        if lines[i].strip():
            out[-1].append(i)
        elif out[-1]:
            out.append([])
    return [c for c in out if c]


def _command_groups(lines: list[str], body: list[int]) -> list[dict]:
    led = _caption_led(lines, body)
    groups: list[dict] = []
    cur: dict | None = None
    desc: list[str] = []
    desc_at: list[int] = []  # (the caption's lines: every one is the command's, so no other unit is cut inside them)

    def new(i: int) -> dict:
        g = {"lines": desc_at + [i], "desc": list(desc), "cmd": [i], "result": []}
        groups.append(g)
        return g

    last: dict | None = None  # the last command, across the blank lines after it (its output may follow them)
    prev = None
    for i in body:
        line = lines[i]
        if prev is not None and any(lines[k].strip() for k in range(prev + 1, i)):
            # (lines left out of the body between, the author's notes read apart: nothing reaches across them, no
            # caption of a command below and no output of one above)
            cur, last, desc, desc_at = None, None, [], []
        prev = i
        if not line.strip():
            cur, last = _after_blank(cur, last)
            continue
        cm = _CMD_COMMENT.match(line)
        if cm and cur is None and not desc and _pasted_output(lines, i, last, cm.group("c").strip()):
            cur = last  # (the comment lines right under it follow it into the result)
            cur["result"].append(cm.group("c").strip())
            cur["lines"].append(i)
            continue
        if _output_line(cur, line, i):
            continue
        cm = _CMD_COMMENT.match(line)
        if cm and cur is not None and cur["cmd"] and cur["cmd"][-1] == i - 1 and lines[i - 1].rstrip().endswith("\\") \
                and _CMD_COMMENT.match(lines[i - 1]):
            cur["cmd"].append(i)  # a commented-out command continued with a backslash
            cur["lines"].append(i)
            continue
        tried = _tried_comment(lines, body, i, cm)
        if tried is not None:
            cur = new(i)
            desc, desc_at = [], []
            cur["text"], result = tried  # (the code alone, when the comment holds more; else "")
            cur["result"] += result
            continue
        if _put_away_line(line):
            text = cm.group("c").strip()
            setup = cur is not None and cur["cmd"] and _SETUP_CMD.match(lines[cur["cmd"][0]])  # "export X=1" says nothing
            # (under a caption that already says how its commands went, "# worked on node 3", the next comment line
            # is the next command's caption, not this one's result)
            told = cur is not None and cur["desc"] and _says_how(tuple(cur["desc"]))
            if cur is not None and cur["cmd"] and not cur["result"] and not desc and not setup and (
                    _RESULT_COMMENT.match(text) or cur["lines"][-1] == i - 1 and not told and i not in led) \
                    or cur is not None and cur["result"] and cur["lines"][-1] == i - 1 and not desc:
                cur["result"].append(text)
                cur["lines"].append(i)
            else:
                if desc and cur is None and i > 0 and not lines[i - 1].strip():
                    desc, desc_at = [], []  # a note a blank line ago that no command followed: its own, not this
                desc.append(text)
                desc_at.append(i)
                cur = None
            continue
        tm = _TRAIL_COMMENT.search(line)
        continues = cur is not None and not desc and cur["cmd"] and lines[cur["cmd"][-1]].rstrip().endswith("\\")
        # "# worked on skampere1" over three commands with no blank line between: the verdict is the three's
        captioned = cur is not None and not desc and cur["cmd"] and cur["desc"] and not cur["result"] \
            and _says_how(tuple(cur["desc"])) and cur["cmd"][-1] == i - 1 and not tm \
            and not _TRAIL_COMMENT.search(lines[i - 1])
        if continues or captioned:
            cur["cmd"].append(i)
            cur["lines"].append(i)
        else:
            cur = new(i)
            desc, desc_at = [], []
        if tm:
            cur["result"].append(tm.group("c").strip())
    for g in groups:
        g["lines"] = sorted(set(g["lines"]))
    return groups


def _output_line(cur: dict | None, line: str, i: int) -> bool:
    """Is the line output, not a command: "  -> NOK (Failed to initialize NVML)" under a command (its result), or a
    program's log line ("[groupnorm] var nan=32   # all groups NaN", annotated, never a command)?"""
    am = _ARROW_LINE.match(line)
    if am and cur is not None and cur["cmd"]:
        cur["result"].append(am.group("c").strip())
        cur["lines"].append(i)
        return True
    if not _LOG_LINE.match(line):
        return False
    if cur is not None and cur["cmd"]:
        cur["result"].append(line.strip())
        cur["lines"].append(i)
    return True


def _after_blank(cur: dict | None, last: dict | None) -> tuple[dict | None, dict | None]:
    """A blank line ends a command's group (a caption without its command yet goes on); the command stays the last
    one, whose output may be pasted after the blank."""
    if cur is not None and cur["cmd"]:
        return None, cur
    return cur, last


def _pasted_output(lines: list[str], i: int, last: dict | None, comment: str) -> bool:
    """ "trainer ... \\" / "" / "# RUN_ID 1 produces:" / "# torch.OutOfMemoryError: ...": what the last command printed,
    pasted under it as comments after a blank line, is how it went; so is a note of how it went ("# again failed on
    save:") that no command follows straight away (one that a command follows is that command's caption)."""
    if last is None or _SETUP_CMD.match(lines[last["cmd"][0]]):
        return False
    stop = min(i + 50, len(lines))  # (the comment run is looked at for 50 lines at most)
    end = next((j for j in range(i + 1, stop) if not _CMD_COMMENT.match(lines[j])), stop)
    if any(_commented_cmd(_CMD_COMMENT.match(lines[j]).group("c").strip()) for j in range(i + 1, end)):
        return False  # "# ⚠️ Hang 256k bs4" over "# BATCH_SIZE=4 ... bash run.sh": the caption of a command put away
    if _OUTPUT_COMMENT.match(comment):
        return True  # (a second block of what it printed, "# RUN_ID 1 produces:", joins the first)
    after = lines[end].strip() if end < len(lines) else ""
    return not last["result"] and (not after or after.startswith(("```", "#"))) and _says_how((comment,))


@lru_cache(maxsize=4096)
def _says_how(caption: tuple[str, ...]) -> bool:
    """Does a command's caption say how it went ("worked on skampere1", "def does not work for mac")?"""
    from dbglog.core.outcome import classify

    return classify(" ".join(caption)) in ("worked", "failed", "partial")


# a shell's prompt: "$ ", "(venv) user@host:~/x$ ", "% ", "❯ ", PowerShell's "PS>", Python's ">>> ", and cmd.exe's
# "C:\work\llama.cpp>" (no space after it)
_PROMPT = recache.compile(r"^\s*(?:\([\w.-]+\)\s*)?(?:(?:[\w.@:~/-]*[$%❯]|PS>|>>>)\s+|[A-Za-z]:\\[^<>|\n\"]{0,120}>)(?=\S)")


def _transcript_groups(lines: list[str], body: list[int], least: int = 2) -> list[dict]:
    """A console session ("$ cmd" and what it printed): each prompt line a command, the lines it printed its
    result (the output is how it went); [] when the block has fewer than ``least`` prompts."""
    prompts = {i for i in body if _PROMPT.match(lines[i])}  # (a set: a session of thousands of commands stays linear)
    if len(prompts) < least:
        return []
    captions = _captions(lines, body, prompts)
    captioning = {k for c in captions.values() for k in c}
    groups: list[dict] = []
    for i in body:
        if i in prompts:
            above = captions.get(i, [])
            groups.append({"lines": above + [i], "desc": [_CMD_COMMENT.sub(r"\g<c>", lines[k]).strip() for k in above],
                           "cmd": [i], "result": [], "prompted": True})
        elif groups and lines[i].strip() and i not in captioning:
            groups[-1]["lines"].append(i)
            groups[-1]["result"].append(_CMD_COMMENT.sub(r"\g<c>", lines[i]).strip())
    for g in groups:
        g["result"] = [" ".join(g["result"])[:300]] if g["result"] else []
    return groups


def _captions(lines: list[str], body: list[int], prompts: set[int]) -> dict[int, list[int]]:
    """The comment lines that introduce a prompt's command in an annotated session ("# with --gpus flag" over "$ docker
    run --gpus all ..."): those just above the prompt, after a blank line (what a command printed runs up to a blank
    line). A comment right under the output ("# -> fails") is still that command's result."""
    out: dict[int, list[int]] = {}
    pos = {i: k for k, i in enumerate(body)}
    for p in prompts:
        k, above = pos[p] - 1, []
        while k >= 0 and body[k] not in prompts and lines[body[k]].lstrip().startswith("#") \
                and not _RESULT_COMMENT.match(_CMD_COMMENT.sub(r"\g<c>", lines[body[k]])):
            above.insert(0, body[k])
            k -= 1
        if above and (k < 0 or not lines[body[k]].strip()):
            out[p] = above
    return out


# A tool at the start of a line of a transcript pasted without prompts ("lspci -k", "sudo modprobe nouveau").
_TOOL = recache.compile(r"^\s{0,3}(?:sudo\s+)?(?:nvidia-smi|nvidia-[\w-]+|nvcc|rocm-smi|rocminfo|hipcc|hipconfig|clinfo|vulkaninfo|"
                   r"lspci|lsmod|lsusb|lscpu|lsblk|modinfo|modprobe|rmmod|insmod|dmesg|journalctl|systemctl|cat|grep|"
                   r"egrep|ls|uname|which|whereis|dpkg|apt(?:-get)?|rpm|yum|dnf|pacman|pip3?|python3?|conda|glxinfo|"
                   r"glxgears|free|df|ldd|ldconfig|strace|docker|torchrun|mpirun|srun|ollama|ibstat|ibv_devinfo|numactl|"
                   r"mokutil|dkms|update-grub|xrandr|Xorg|nvtop|gpustat|env|printenv|echo)(?:\s|$)")


def _bare_transcript_groups(lines: list[str], body: list[int]) -> list[dict]:
    """A console session pasted without prompts: a tool's command after a blank line (or first), then what it
    printed until the next blank line that a command follows; [] unless two or more commands printed
    something. Lines before the first command describe it."""
    groups: list[dict] = []
    lead: list[int] = []
    blank = True
    for i in body:
        text = lines[i]
        if not text.strip():
            blank = True
            (groups[-1]["lines"] if groups else lead).append(i)
            continue
        if blank and _TOOL.match(text):
            first = not groups
            groups.append({"lines": ([*lead, i] if first else [i]), "cmd": [i], "result": [],
                           "desc": [lines[k].strip() for k in lead if lines[k].strip()] if first else []})
        elif groups:
            groups[-1]["lines"].append(i)
            groups[-1]["result"].append(text.strip())
        else:
            lead.append(i)
        blank = False
    if sum(1 for g in groups if g["cmd"] and g["result"]) < 2:
        return []
    for g in groups:
        while len(g["lines"]) > 1 and not lines[g["lines"][-1]].strip():
            g["lines"].pop()  # (a trailing blank line is nobody's)
        g["result"] = [" ".join(g["result"])[:300]] if g["result"] else []
    return groups


# (a bare assignment, "RUN_ID=2" alone on its line, sets up too; "X=1 python run.py" is a run)
_SETUP_CMD = recache.compile(r"^\s*(?:(?:export|set|cd|source|\.|mkdir|conda activate|module load|unset|pushd|popd)\b|"
                             r"[A-Za-z_]\w{0,40}=\S*\s*$)")


# A command kept as a comment: a Dockerfile instruction or a shell tool at the start.
_COMMENTED_CMD = recache.compile(r"^(?:RUN|ENV|ARG|FROM|COPY|CMD|ENTRYPOINT|pip3?|python3?|export|conda|mamba|apt(?:-get)?|cmake|"
                            r"make|torchrun|docker|nvcc|sudo|git|uv|srun|mpirun|bash|sh|[A-Z_][A-Z0-9_]*=\S+)\s+\S")

# A setting named in a sentence ("CUDAGRAPH_MODE=FULL_AND_PIECEWISE as unsafe: what it does is corrupt one"), not set
_SETTING_SAID = recache.compile(r"^[A-Z_][A-Z0-9_]*=\S+\s+(?P<rest>.+)$")


def _commented_cmd(text: str) -> bool:
    """A comment line that is a command put away ("# export CUDA_HOME=...", "# NCCL_DEBUG=INFO torchrun ..."); not a
    line of prose that opens with a setting it talks about, words after it and no option."""
    if not _COMMENTED_CMD.match(text):
        return False
    m = _SETTING_SAID.match(text)
    rest = m.group("rest").split() if m else []
    return not (len(rest) >= 4 and not any(t.startswith("-") for t in rest) and _prose_line(m.group("rest")))


def _tried_before(lines: list[str], body: list[int], i: int) -> bool:
    """A commented-out command counts when its result is written: on its line after an arrow, on the next line, or
    on the comment line just above it when that opens with a verdict ("# 🟢 Pass 128k bs8", "# OK: 2 nodes")."""
    if re.search(r"\s(?:->|=>|→)\s", lines[i]):
        return True
    above = i - 1
    while above >= 0 and (m := _CMD_COMMENT.match(lines[above])) and _commented_cmd(m.group("c").strip()) \
            and lines[above].rstrip().endswith("\\"):
        above -= 1  # (the lines of the same command continued with a backslash)
    floor = above - 8  # (a few settings at most: the walk up stays linear over a long run of them)
    while above > floor and (m := _CMD_COMMENT.match(lines[above])) and _SETUP_CMD.match(m.group("c").lstrip("# ")):
        above -= 1  # ("# CUDA_DEVICE_ORDER=PCI_BUS_ID" put away with it: its setting)
    cm = _CMD_COMMENT.match(lines[above]) if above >= 0 else None
    caption = cm.group("c").lstrip("# ").strip() if cm else ""
    if cm and above in body and (VERDICT_FIRST.match(caption) or _says_how((caption,))):
        # ("# OK: 2 nodes", "# TP=1, DP=4 crashes the vllm backend..": the caption says how the put-away run went)
        return True
    nxt = next((j for j in body if j > i and lines[j].strip()), None)
    if nxt is None:
        return False
    cm = _CMD_COMMENT.match(lines[nxt])
    return bool(cm and _RESULT_COMMENT.match(cm.group("c").strip()))


# Code put away with a comment of its own after it: the code (a few words with a code mark: a quote, "=", a path, a
# bracket, an option) and the comment, after one to three "#".
_PUT_AWAY = recache.compile(r"^(?P<code>[^#]{1,120}?)\s{1,40}#{1,3}\s{1,8}(?P<c>[^#]{1,120})$")
_CODE_MARK = recache.compile(r"[\"'=/()\[\]{}]|(?:^|\s)--?\w|\w[_.]\w")


def _tried_comment(lines: list[str], body: list[int], i: int, cm: re.Match | None) -> tuple[str, list[str]] | None:
    """A comment that is a try put away, as (its code when the comment holds more, what it says of how it went), or
    None: '# "videochat2-7b"   # OOM with 32 frames' and '# --max-model-len 4096 ## this works' (code with how it went
    after it), "# NOK docker run ..." (led by its verdict), "# RUN pip install flash-attn" over "#   -> same undefined
    symbol" or under a caption that says how it went."""
    if cm is None:
        return None
    text = cm.group("c").strip()
    put = _put_away(text)
    if put:
        return put[0], [put[1]]
    said = _verdict_led(text)
    if said:
        return "", [said]
    if _commented_cmd(text) and _tried_before(lines, body, i):
        got = re.split(r"\s+(?:->|=>|→)\s+", text, maxsplit=1)
        return "", [r.strip() for r in got[1:]]  # ("... -> same symbol": its result)
    return None


def _put_away_line(line: str) -> bool:
    """A line of code put away in a comment (never the shebang, "#!/bin/bash")."""
    return bool(_CMD_COMMENT.match(line)) and not line.lstrip().startswith("#!")


def _put_away(comment: str) -> tuple[str, str] | None:
    """A line of code put away in a comment and how it went, when a comment after it says so ('"videochat2-7b"  # OOM
    with 32 frames' -> the code and "OOM with 32 frames"); None for any other comment (prose, no outcome said)."""
    m = _PUT_AWAY.match(comment.strip())
    # (a short line of code, or a whole command of any length: "# torchrun --nproc_per_node 8 bench.py --zero 3  # OOM")
    if not m or not _CODE_MARK.search(m.group("code")) or len(m.group("code").split()) > 6 and not (
            _commented_cmd(m.group("code").strip())):
        return None
    said = m.group("c").strip()
    return (m.group("code").strip(), said) if _says_how((said,)) else None


def _verdict_led(comment: str) -> str | None:
    """The verdict of a commented-out command written after it ("NOK docker run --gpus all ...": "NOK"), or None."""
    m = VERDICT_FIRST.match(comment)
    return m.group(0) if m and _commented_cmd(comment[m.end():].lstrip(" :-")) else None


# A comment that opens with how the run went: a verdict mark, or a verdict word ("Pass", "NOK", "Hang", "OOM").
VERDICT_FIRST = recache.compile(r"^(?:" + "|".join(re.escape(k) for k in sorted(VERDICT_MARKS, key=len, reverse=True))
                            + r"|(?i:ok|nok|ng|pass(?:e[sd])?|fail(?:s|ed|ure)?|works?|worked|broken|hangs?|hung|oom|"
                            r"crash(?:es|ed)?|segfaults?|stable|unstable|good|bad)\b)")


_ENUM_ONLY = recache.compile(r"[\W_]{0,3}\d{1,3}[.)]")
# Words whose period ends no sentence (so the capital or the number after them starts none)
_ABBREVIATED = recache.compile(r"(?:^|[\s(\[])(?:vs|e\.g|i\.e|cf|approx|incl|resp|esp)\.$", re.I)


def _sentences(texts: list[str]) -> list[tuple[int, int, str]]:
    """(first line offset, last line offset, sentence) for a paragraph's lines; a sentence never
    crosses a line that starts like a new item or label ("Result: ...")."""
    out: list[tuple[int, int, str]] = []
    joined, starts = "", []
    for t in texts:
        starts.append(len(joined))
        joined += t + "\n"

    def line_of(pos: int) -> int:
        lo = 0
        for k, s in enumerate(starts):
            if s <= pos:
                lo = k
        return lo

    pos = 0
    breaks = [m for m in _SENT.finditer(joined)]
    # A line that ends in <br> (or two spaces) is a hard line break: a boundary whatever the punctuation.
    # (the two spaces are a run's first two: "(?<! )" keeps a line of many spaces linear)
    breaks += [m for m in re.finditer(r"(?:<br\s*/?>|(?<! )  )\s*\n", joined, re.I)]
    # Chinese, Japanese and Korean prose is not wrapped by hand: a line break beside such a character is the
    # writer's own, a boundary ("安装:conda install ... -c nvidia" / "安装后程序问题：..." / "尝试好几个版本都...").
    breaks += [m for m in _CJK_BREAK.finditer(joined)]
    breaks.sort(key=lambda m: m.start())
    for m in breaks + [None]:
        if m is not None and m.start() < pos:
            continue
        end = m.start() if m else len(joined)
        piece = joined[pos:end]
        if m is not None and _ENUM_ONLY.fullmatch(piece.strip()):
            continue  # "**2. Raised the limit**": the number of an entry, not a sentence of its own
        if m is not None and piece.count("`") % 2 and "`" in joined[end:]:
            continue  # (inside a code span: "`inputs: ... requested_port=None`" is one quoted line, not two sentences)
        if m is not None and _ABBREVIATED.search(piece):
            continue  # ("err == cudaSuccess (7 vs. 0)", "a newer driver, e.g. 550": the period is the word's)
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            a = line_of(pos + lead)
            b = line_of(pos + len(piece.rstrip()) - 1)
            out.append((a, b, " ".join(_TAG.sub(" ", piece).split())))
        pos = m.end() if m else end
    return _split_labels(out, texts)


# A soft-broken line that starts an entry of its own: a label ("Result: ..."), a time or date ("09:31 ..."), an
# arrow carrying a result ("-> OOM again"), a numbered issue ("issue 3: ..."), a number glued to its entry ("3.nvcc
# --version一致": no space, so no markdown list), a full-width parenthesis numbering one ("2）git checkout release",
# "b）set include=..."). Shapes of notes, not words of one.
_CJK_KEY = recache.compile(r"^\s*[\u4e00-\u9fff]{1,6}[一二三四五六七八九十\d]{0,3}\s*[:：]")
_LABEL_LINE = recache.compile(r"^\s*(?:(?:\*\*|__)?[A-Za-z][\w /()'-]{0,30}(?:\*\*|__)?\s*:(?:\*\*|__)?\s|"
                         r"[\u4e00-\u9fff]{1,6}[一二三四五六七八九十\d]{0,3}\s*[:：]|"
                         r"(?:\*\*|__)?(?:\d{1,2}:\d{2}|\d{4}-\d{2}-\d{2})\b|->|=>|→|"
                         r"(?:issue|step|case|run|test|try)\s*#?\d{1,3}\b|（\d{1,2}）|[①-⑳]|\d{1,2}、|\d{1,2}\.(?=[^\d\s.])(?![xX*]\b)|"
                         r"(?:\d{1,2}|[a-z])）)", re.I)


def _starts_entry(before: str, line: str) -> bool:
    """A label-shaped line starts an entry of its own unless it carries on a sentence ("... und jetzt /
    funktioniert es: ..."): the line before ended one, or the label is capitalised, or it is a time, date or arrow."""
    head = line.lstrip(" *_")
    word = re.split(r"\s*[:：]", head, maxsplit=1)[0].strip(" *_").lower()
    if word in ATTEMPT_LABELS or word in INV_LABELS:
        return True  # "edit: ...", "result: ...": a known label starts its own entry whatever came before
    ended = before.rstrip()[-1:] in tuple(".!?:;)`>。：）*_") or not before.strip() or _LABEL_LINE.match(before)
    # (a capital after a line that ended no sentence opens a label of a word or three, "Result: ..."; four words or
    # more before the colon are the sentence going on: "... while the unit is still activating instead / SIGTERMs the
    # start script: ...")
    short = len(word.split()) <= 3
    return bool(ended or head[:1].isupper() and short or not head[:1].isalpha() or _CJK_KEY.match(line))


# A labelled line whose value is only a date or a span of dates ("**Date:** 02-06-2025 - 05-06-2025"): a journal's
# entry line, whole on its own; the line after it starts the entry's text
_DATED_LINE = recache.compile(r"^\s*(?:\*\*|__)?[A-Za-z][\w ]{0,20}(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*"
                              r"\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}(?:\s*(?:-|–|—|to|~)\s*\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4})?"
                              r"\s*(?:\*\*|__)?\s*$")


def _split_labels(sents: list[tuple[int, int, str]], texts: list[str]) -> list[tuple[int, int, str]]:
    """A soft-broken "Action: ...\\nResult: ..." paragraph is two units, one per labelled line."""
    out = []
    for a, b, s in sents:
        cuts = [k for k in range(a + 1, b + 1) if _LABEL_LINE.match(texts[k]) and _starts_entry(texts[k - 1], texts[k])
                or _DATED_LINE.match(texts[k - 1])]
        if not cuts:
            out.append((a, b, s))
            continue
        bounds = [a] + cuts + [b + 1]
        placed = _words_placed(s, texts, a, b)
        for lo, hi in zip(bounds, bounds[1:]):
            if placed is None:
                out.append((lo, hi - 1, " ".join(" ".join(texts[lo:hi]).split())))
            elif any(lo <= k < hi for k, _ in placed):
                out.append((lo, hi - 1, " ".join(w for k, w in placed if lo <= k < hi)))
    return out


def _words_placed(sent: str, texts: list[str], a: int, b: int) -> list[tuple[int, str]] | None:
    """The words of a sentence on lines a..b, each with its line: a line's words before the sentence began, or after
    it ended, belong to the sentences beside it (None when the sentence is not the lines' words as written)."""
    words = [(k, w) for k in range(a, b + 1) for w in texts[k].split()]
    said = sent.split()
    for o in range(len(words) - len(said) + 1):
        if words[o][1] == said[0] and [w for _, w in words[o:o + len(said)]] == said:
            return words[o:o + len(said)]
    return None


def _heading_text(raw: str) -> str:
    s = raw.strip()
    s = re.sub(r"^#{1,6}\s*", "", s)
    s = re.sub(r"\s#+\s*$", "", s)
    return s.strip()


def segment(text: str) -> Doc:
    """The document's units, in source order, covering every non-blank line."""
    lines = text.split("\n")
    first = next((ln for ln in lines if ln.strip() and not ln.lstrip().startswith("<!--")), "")
    if first.startswith("#!") or _looks_like_script(lines):
        cut = _Cut(lines)
        _script(cut, lines)  # a command script saved as a note: its comments are the story, not headings
        _leftover_code(cut, 0, len(lines), 0)
        return _finish(cut, covered=None)
    read = _unnumbered(_uncommented(lines))
    cut = _Cut(read)  # (units read from the lines without a note's "# " or a history's numbers)
    cut.doc.lines = lines  # (the document keeps its lines as written)
    tokens = _parse_posts_apart(_rst_titles(read))
    covered = [False] * len(lines)
    for k, t in enumerate(tokens):
        if not t.map:
            _CLOSE.get(t.type, _nothing)(cut)
            continue
        a, b = t.map
        handler = _OPEN.get(t.type)
        if handler is None:
            continue
        made = len(cut.doc.units)
        handler(cut, t, a, b, tokens[k + 1] if k + 1 < len(tokens) else None)
        if t.type in ("fence", "code_block"):
            _leftover_code(cut, a, min(b, len(lines)), made)
        if t.type in _COVERS:
            for i in range(a, min(b, len(lines))):
                covered[i] = True
    return _finish(cut, covered)


_COMMENT_LINE = recache.compile(r"^#(?:\s|$)")


def _uncommented(lines: list[str]) -> list[str]:
    """A note written with "#" before every line, as a shell comment (a log kept by a script, a text file renamed
    .md), read as its writer laid it out: the first line of each block of such lines heads it, the lines under it
    are its text ("# " taken off), a lone "#" a blank line. Markdown reads every such line as a heading: a note of
    eighty one-line sections. Only when most lines are so written and some block has a lone "#" or three lines or
    more -- never a document of headings. The source lines are unchanged."""
    body = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("<!--")]
    marked = [i for i, ln in enumerate(lines) if _COMMENT_LINE.match(ln)]
    if len(body) < 6 or len(marked) < 0.8 * len(body):
        return lines
    out, run = list(lines), 0
    for i, ln in enumerate(lines):
        run = run + 1 if _COMMENT_LINE.match(ln) else 0
        if run > 1:
            out[i] = ln[2:] if ln[1:2] in (" ", "\t") else ""
    if all(a == b for a, b in zip(out, lines)) or max(_runs(marked)) < 3 and "#" not in (ln.strip() for ln in lines):
        return lines
    return out


_HISTORY_LINE = recache.compile(r"^\s{0,6}\d{1,6}\s\s(?=\S)")


def _unnumbered(lines: list[str]) -> list[str]:
    """A fenced block of shell history as ``history`` prints it ("   46  export NCCL_DEBUG=WARN"), read without the
    numbers: its lines are commands and "#" captions, as in any session. Most of the block's lines so numbered,
    three or more. The source lines are unchanged."""
    out, start = None, None
    for i, line in enumerate(lines):
        if not FENCE_LINE.match(line):
            continue
        if start is None:
            start = i
            continue
        body = [k for k in range(start + 1, i) if lines[k].strip()]
        numbered = [k for k in body if _HISTORY_LINE.match(lines[k])]
        if len(numbered) >= 3 and len(numbered) >= 0.8 * len(body):
            out = out or list(lines)
            for k in numbered:
                out[k] = _HISTORY_LINE.sub("", lines[k], count=1)
        start = None
    return out or lines


def _runs(idx: list[int]) -> list[int]:
    """The lengths of the runs of consecutive numbers in ``idx`` (sorted)."""
    out, prev = [], None
    for i in idx:
        out.append(out.pop() + 1 if out and prev == i - 1 else 1)
        prev = i
    return out or [0]


def _leftover_code(cut: _Cut, a: int, b: int, made: int) -> None:
    """The lines of a code block (lines A..B-1) that reading it as commands and notes put in no unit (a purge script
    run before the first "$ " prompt, a comment between two runs): code units, one per stretch, so every line of
    the document can still be cited (by an agent's extraction, by provenance)."""
    inside = {i for u in cut.doc.units[made:] for i in range(u.first, u.last + 1)}
    stretch: list[int] = []
    for i in range(a, b + 1):
        if i < b and i not in inside and cut.lines[i].strip():
            stretch.append(i)
            continue
        if stretch:
            cut.add("code", stretch[0], stretch[-1], "\n".join(cut.lines[k] for k in stretch), block=cut.nblock)
            stretch = []


_SETEXT_RULE = recache.compile(r"^ {0,3}-{3,}\s*$")  # (a "---" underline; "===" is a title's on purpose)


def _told_not_titled(text: str) -> bool:
    """A setext heading's text that is a paragraph, not a title: over two lines, or two sentences or more, or a
    sentence longer than a title runs (a title has no full stop inside it and is seldom over 120 characters)."""
    flat = " ".join(text.split())
    return text.count("\n") >= 2 or len(flat) > 120 or bool(re.search(r"(?<![\d\W])[.!?。]\s+\S", flat))


class _Rows(HTMLParser):
    """The rows of HTML tables: (first line, last line, cell texts, a header row), lines 0-based in the block."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[tuple[int, int, list[str], bool]] = []
        self.row: dict | None = None
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag == "tr":
            self._end_row()
            self.row = {"lo": self.getpos()[0] - 1, "cells": [], "head": False}
        elif tag in ("td", "th") and self.row is not None:
            self._end_cell()
            self.cell = []
            self.row["head"] = self.row["head"] or tag == "th"
        elif tag in ("p", "br", "li", "div") and self.cell is not None:
            self.cell.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th"):
            self._end_cell()
        elif tag in ("tr", "table"):
            self._end_row()

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)

    def _end_cell(self) -> None:
        if self.cell is not None and self.row is not None:
            self.row["cells"].append(" ".join("".join(self.cell).split()))
        self.cell = None

    def _end_row(self) -> None:
        self._end_cell()
        if self.row is not None and any(self.row["cells"]):
            self.rows.append((self.row["lo"], self.getpos()[0] - 1, self.row["cells"], self.row["head"]))
        self.row = None

    def close(self) -> None:
        super().close()
        self._end_row()  # (a row left open at the block's end: "<tr><td>x" with no "</tr>")


def _html_rows(content: str) -> list[tuple[int, int, list[str], bool]]:
    """The rows of the HTML tables in a block (``_Rows``); [] when the HTML does not parse."""
    parser = _Rows()
    try:
        parser.feed(content)
        parser.close()
    except (ValueError, AssertionError):
        return []
    return parser.rows


FENCE_LINE = recache.compile(r"^ {0,3}(`{3,}|~{3,})")  # a fence's opening or closing line
_UNDERLINE = recache.compile(r"^([~^\"'*+#:])\1{2,}\s*$")


def _rst_titles(lines: list[str]) -> list[str]:
    """The lines as markdown-it should parse them: a reStructuredText title's underline of ``~ ^ " ' * + # :``
    (as long as its title, a blank line after) made a setext underline. Markdown would read ``~~~~`` as a fence
    that swallows the rest of the page, and ``****`` as a rule under a paragraph. The source lines are unchanged."""
    out = None
    for i in range(1, len(lines)):
        m = _UNDERLINE.match(lines[i])
        title = lines[i - 1].rstrip()
        if m and title.strip() and len(lines[i].rstrip()) >= len(title) and (i + 1 == len(lines) or not lines[i + 1].strip()) \
                and not FENCE_LINE.match(title) and not _UNDERLINE.match(title) and not title.startswith((" " * 4, "\t")):
            out = out or list(lines)
            out[i] = "-" * len(lines[i].rstrip())
    return out or lines


def _parse_posts_apart(lines: list[str]) -> list:
    """markdown-it's tokens of the document, with every thread post its own document as the forge renders it: a
    fence left open in one post (a paste cut short) ends where the next post's header stands, instead of swallowing
    the rest of the thread.  The closing lines added for that are taken out of the tokens' line maps again."""
    fence, at, posts = None, [], 0
    for i, line in enumerate(lines):
        m = FENCE_LINE.match(line)
        header = line.lstrip().startswith("#") and post_author(line) is not None
        if fence is None:
            # (CommonMark: a backtick fence's info string holds no backtick; "```cmd```" is a code span)
            fence = m.group(1) if m and not (m.group(1)[0] == "`" and "`" in line[m.end():]) else None
            posts += header
        elif m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip().strip(fence[0]):
            fence = None
        elif header and posts:  # (in a thread only: a shell comment "# build - 2024-05-01" in a note is code)
            at.append((i, fence))
            fence = None
    if not at:
        return _md().parse("\n".join(lines))
    out, k = [], 0
    for i, line in enumerate(lines):
        if k < len(at) and at[k][0] == i:
            out.append(at[k][1])
            k += 1
        out.append(line)
    added = [i + n for n, (i, _) in enumerate(at)]  # the closing lines' places in the parsed text
    tokens = _md().parse("\n".join(out))
    for t in tokens:
        if t.map:
            t.map = [x - bisect.bisect_left(added, x) for x in t.map]
    return tokens


# A line of a shell script: a setup command, a command run with its environment ("BATCH_SIZE=8 bash run.sh"), a line
# continued with a backslash, or a tool's command.
_SHELL_LINE = recache.compile(r"^\s*(?:(?:export|set|unset|source|cd|bash|sh|python3?|torchrun|srun|sbatch|mpirun|sudo)\s"
                         r"|[A-Za-z_][A-Za-z0-9_]*=\S*(?:\s|$)|.*\s\\$)")
_MORE_SHELL = recache.compile(r"^\s*(?:curl|wget|git|make|cmake|exit|chmod|chown|ln|cp|mv|rm|tar|unzip|mkdir|kill|"
                              r"pkill|\.)\s")  # (besides the tools of ``_TOOL``)
_MARKDOWN_LINE = recache.compile(r"^\s*(?:[-*+]\s|\d+[.)]\s|\||`{3,}|~{3,}|>|#{2,6}\s)")


def _looks_like_script(lines: list[str]) -> bool:
    """A command script saved without its shebang: most lines commands or "#" comments (the comments would read as
    headings), at least three commands, and no line of markdown's own structure (lists, tables, fences, quotes)."""
    body = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("<!--")]
    if len(body) < 4 or any(_MARKDOWN_LINE.match(ln) for ln in body):
        return False
    shell = sum(1 for ln in body if _SHELL_LINE.match(ln) or _TOOL.match(ln) or _MORE_SHELL.match(ln))
    comments = sum(1 for ln in body if ln.lstrip().startswith("#"))
    return shell >= 3 and shell + comments >= 0.9 * len(body)


def _script(cut: _Cut, lines: list[str]) -> None:
    if not _commands(cut, list(range(len(lines))), "bash", -1, -1, script=True):
        _code_and_notes(cut, list(range(len(lines))), "bash", per_line=True)


def _finish(cut: _Cut, covered: list[bool] | None) -> Doc:
    """Lines no block token covers (link reference definitions, stray text) become raw units; ids in order."""
    for i, line in enumerate(cut.lines):
        if covered is not None and not covered[i] and line.strip() and not re.fullmatch(r"[\s:|-]+", line):
            cut.add("raw", i, i, line.strip())
    cut.doc.units.sort(key=lambda u: (u.first, u.id))
    for n, u in enumerate(cut.doc.units):
        u.id = n  # ids in source order (paths were set from the old ids: remap)
    _remap_paths(cut.doc)
    return cut.doc


def _nothing(cut: _Cut) -> None:
    return None


def _close_quote(cut: _Cut) -> None:
    cut.quote -= 1


def _close_table(cut: _Cut) -> None:
    cut.table = None


def _open_list(cut: _Cut, t, a: int, b: int, nxt) -> None:
    cut.nblock += 1
    cut.lists.append({"id": cut.nblock, "n": 0, "ordered": t.type == "ordered_list_open"})


def _open_item(cut: _Cut, t, a: int, b: int, nxt) -> None:
    lst = cut.lists[-1]
    cut.items.append({"id": a, "list": lst["id"], "index": lst["n"], "check": "", "fresh": True,
                      "ordered": lst["ordered"]})
    lst["n"] += 1


def _open_table(cut: _Cut, t, a: int, b: int, nxt) -> None:
    cut.nblock += 1
    cut.table = {"block": cut.nblock, "header": [], "rows": 0}


def _open_row(cut: _Cut, t, a: int, b: int, nxt) -> None:
    cells = _row_cells(cut.lines[a])
    table = cut.table
    if table is None:
        return
    if not table["header"]:
        table["header"] = cells
        cut.add("row", a, a, " | ".join(cells), block=table["block"], group=table["block"], index=-1,
                cells=tuple(cells))
    else:
        cut.row(a, cells, table["rows"])
        table["rows"] += 1


def _open_code(cut: _Cut, t, a: int, b: int, nxt) -> None:
    """An indented block: read as commands and their comments when it is one (a tab-indented build log), else code."""
    cut.nblock += 1
    body = [i for i in range(a, b) if cut.lines[i].strip()]
    if body and _commands(cut, body, "", -1, -1):
        return
    if _prose_block([cut.lines[i] for i in body]):
        # (a reply's last lines indented by accident, "    BUT, if i build it with ... no pp decrease anymore": the
        # writer's sentences, not code)
        _as_notes(cut, a, [ln.strip() for ln in cut.lines[a:b]], "")
        return
    cut.add("code", a, b - 1, t.content, block=cut.nblock)


_LETTERS = recache.compile(r"^[(\[\"'`]?[A-Za-z][A-Za-z'’-]*[)\]\"'`,.:;!?]*$")


def _prose_block(texts: list[str]) -> bool:
    """An indented block of a person's sentences: every line opens with three words, none is a command or what a
    program prints, one at least is a sentence's length."""
    def worded(t: str) -> bool:
        toks = t.split()
        return len(toks) >= 3 and all(_LETTERS.match(w) for w in toks[:3])
    return 0 < len(texts) <= 20 and any(len(t.split()) >= 6 for t in texts) and all(
        worded(t) and not (_NOT_NOTES.match(t) or _SHELL_LINE.match(t) or _MORE_SHELL.match(t) or _TOOL.match(t))
        for t in texts)


_CLOSE = {"blockquote_close": _close_quote, "list_item_close": lambda cut: cut.items.pop(),
          "bullet_list_close": lambda cut: cut.lists.pop(), "ordered_list_close": lambda cut: cut.lists.pop(),
          "table_close": _close_table}
_OPEN = {
    "front_matter": lambda cut, t, a, b, nxt: cut.add("front", a, b - 1, t.content),
    "heading_open": lambda cut, t, a, b, nxt: cut.heading(a, b, int(t.tag[1]), nxt.content if nxt else cut.lines[a]),
    "paragraph_open": lambda cut, t, a, b, nxt: cut.paragraph(a, b, nxt.content),
    "blockquote_open": lambda cut, t, a, b, nxt: setattr(cut, "quote", cut.quote + 1),
    "bullet_list_open": _open_list, "ordered_list_open": _open_list, "list_item_open": _open_item,
    "table_open": _open_table, "tr_open": _open_row,
    "fence": lambda cut, t, a, b, nxt: cut.fence(a, b, t.info, t.content),
    "code_block": _open_code,
    "html_block": lambda cut, t, a, b, nxt: cut.html(a, b, t.content),
    "hr": lambda cut, t, a, b, nxt: cut.rule(a, b),
}
_COVERS = {"front_matter", "heading_open", "paragraph_open", "fence", "code_block", "html_block", "hr", "tr_open"}


def _remap_paths(doc: Doc) -> None:
    """Paths were recorded with creation ids; after the sort by line, rebuild them from the headings."""
    stack: list[tuple[int, int]] = []
    signed = {line for line, _ in doc.posts}  # where posts start; a post signed in a paragraph resets form headings
    outside: list[tuple[int, int]] | None = None  # the headings above the thread
    for u in doc.units:
        if u.kind != "heading" and u.first in signed:
            signed.discard(u.first)
            while stack and stack[-1][0] >= 3:
                stack.pop()
        if u.kind == "heading":
            while stack and stack[-1][0] >= u.level:
                stack.pop()
            if u.first in signed:
                # A post's own headings ("# ❓ Questions and Help" of its issue form) end with it: the next post
                # sits under the headings above the thread, not under them.
                outside = list(stack) if outside is None else outside
                stack = list(outside)
            u.path = tuple(h for _, h in stack)
            stack.append((u.level, u.id))
        else:
            u.path = tuple(h for _, h in stack)


def _row_cells(line: str) -> list[str]:
    s = re.sub(r"^\s*(?:>\s?)+", "", line).strip()  # a table inside a blockquote: its "> " is no cell
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    # `\|` is a pipe inside a cell (GFM; `diff add` of the same value stores a plain `|`)
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", s)]


_EMPHASIS = recache.compile(r"[`*_]+")  # (units.py sits below cues.py: cues.plain is not in reach)


def quoted_authors(units: list[Unit]) -> dict[int, str]:
    """Whose words a thread's quoted sentences are: unit id -> the author of the earliest earlier post that said
    them ("> I tried -mla 3" in a reply: the asker's), or "" when no earlier post did (quoted from elsewhere)."""
    said: list[tuple[str, str]] = []  # (author, the post's own words), post by post
    out: dict[int, str] = {}
    post, upto = -1, 0
    for u in units:
        if u.post < 0 or u.kind != "sentence":
            continue
        if u.post != post:
            post, upto = u.post, len(said)
        words = " ".join(_EMPHASIS.sub("", u.text).split())
        if u.quoted:
            out[u.id] = next((who for who, text in said[:upto] if len(words) >= 12 and words in text), "")
        elif said and said[-1][0] == u.author and len(said) > upto:
            said[-1] = (u.author, said[-1][1] + " " + words)
        else:
            said.append((u.author, words))
    return out


def echoed_quotes(units: list[Unit]) -> set[int]:
    """The lines of quoted sentences in a thread that repeat words of an earlier post ("> I tried -mla 3" in the
    reply to the post that said it), twenty characters or more: 0-based line numbers (``quoted_authors`` finds whose)."""
    whose = quoted_authors(units)
    return {i for u in units if whose.get(u.id) and len(" ".join(_EMPHASIS.sub("", u.text).split())) >= 20
            for i in range(u.first, u.last + 1)}
