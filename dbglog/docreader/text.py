"""Small text helpers of the reader: field values, titles, steps, tables, statuses."""

from __future__ import annotations

import re

from dbglog.core.model import BOOKKEEPING_SECTIONS, NextStep
from dbglog.docreader.vocab import status_word
from dbglog.util import recache


def one_line(s: str) -> str:
    return " ".join((s or "").split())


def span_lines(lines, idxs: list[int]) -> list[str]:
    """The given lines, with one blank line where the source had a gap (so paragraphs stay apart)."""
    out: list[str] = []
    prev = None
    for i in sorted(set(idxs)):
        if prev is not None and i > prev + 1 and out and out[-1].strip():
            gap = [lines[j] for j in range(prev + 1, i)]
            if all(not g.strip() for g in gap):
                out.append("")
            else:
                out.append("")
        out.append(lines[i])
        prev = i
    return out


def field_value(buf: list[str]) -> str:
    """Field text: the lines joined, common indentation removed, outer blank lines and trailing
    thematic breaks (a separator between sections, not part of the value) dropped."""
    lines = list(buf)
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and (not lines[-1].strip() or re.fullmatch(r"\s{0,3}(?:[-*_]\s*){3,}", lines[-1])):
        lines.pop()
    if len(lines) > 1:
        body = [ln for ln in lines[1:] if ln.strip()]
        indent = min((len(ln) - len(ln.lstrip(" ")) for ln in body), default=0)
        if indent:
            lines = [lines[0]] + [ln[indent:] if ln[:indent].strip() == "" else ln.lstrip(" ") for ln in lines[1:]]
    out = "\n".join(ln.rstrip() for ln in lines).strip()
    return close_fences(out)


def close_fences(text: str) -> str:
    """A code fence the author never closed is closed, so it cannot swallow what follows."""
    fence = None
    for ln in text.split("\n"):
        m = re.match(r"^\s*(`{3,}|~{3,})(.*)$", ln)
        if not m:
            continue
        if fence is None:
            if not (m.group(1)[0] == "`" and "`" in m.group(2)):
                fence = m.group(1)
        elif m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not m.group(2).strip():
            fence = None
    return text + "\n" + fence if fence else text


# (compiled once: item titles and kept sections are read line by line)
_FENCE_MARK = recache.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_TOP_HEADING = recache.compile(r"^ {0,3}#{1,2}(\s|$)")
_SETEXT = recache.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_BLOCK_START = recache.compile(r"^ {0,3}([-*+]\s|\d+[.)]\s|>|#|\|)")
_BOX = recache.compile(r"^\[[ xX]\]\s*")
_STAMP_LEAD = recache.compile(r"^(?:\*\*|__)?[\d:./ -]{3,19}(?:\*\*|__)?\s*[:—–-]?\s+")
_BOLD_LEAD = recache.compile(r"^(?:[^\w\s`*_]{1,3}\s*)?(?:\*\*|__)(.+?)(?:\*\*|__)")
_DASH_CUT = recache.compile(r"(?<!\s)\s+-\s+")  # (from a run's first space: a long run stays linear)
_CODE_SPAN = recache.compile(r"`[^`]*`")
_CODE_LEAD = recache.compile(r"^(`[^`]{1,60}`[^:`]{0,30}?(?:\s*/\s*`[^`]{1,60}`)?)\s*:\s+\S")


def item_title(text: str) -> str:
    t = _BOX.sub("", (text or "").strip())
    # A time or date in bold first ("**09:05** tried ...") is when, not what.
    t = _STAMP_LEAD.sub("", t) or t
    m = _BOLD_LEAD.match(t)
    if m and len(m.group(1)) >= 3:
        return one_line(m.group(1).rstrip(":"))
    # "`--ctx-size` menor: no soluciona", "Guarding X only - crash remained": what was done, then what happened.
    cut = next((t[:m.start()] for m in re.finditer(r"\s+(?:→|->|=>|—|–)\s+|(?<=[.!?])\s+", t)
                if t[:m.start()].count("(") <= t[:m.start()].count(")")), t)  # not inside "(550.54 → 550.90)"
    dash = _DASH_CUT.split(cut, maxsplit=1)[0]
    if len(_CODE_SPAN.sub(" ", dash).split()) >= 3:
        cut = dash  # "Guarding X only - crash remained"; not "`0731143` - Excluded problematic nodes"
    t = cut if cut.count("**") % 2 == 0 and cut.count("`") % 2 == 0 else t  # not inside "**4 → 2**"
    m = _CODE_LEAD.match(t)
    if m:
        t = m.group(1)
    t = one_line(t)
    return t if len(t) <= 90 else t[:87].rsplit(" ", 1)[0] + "…"


_BOOKKEEPING_LOW = frozenset(h.lower() for h in BOOKKEEPING_SECTIONS)


def section_heading(text: str) -> str:
    """A kept section's heading, never one the canonical parser would read as its own section."""
    raw = text[3:] if text.startswith("## ") else text
    raw = " ".join(raw.split()) or "Notes"
    low = raw.lower()
    # (nor one of import's bookkeeping sections, which a re-import replaces and `show` hides)
    if low == "attempts" or low.startswith("key differences") or low == "what to try next" \
            or "## " + low in _BOOKKEEPING_LOW:
        raw = f"Notes: {raw}"
    return "## " + raw


def demote_headings(body: str) -> str:
    """Lines of a kept section that would read as a level-1/2 heading are demoted to level 3."""
    out, fence = [], None
    for ln in body.split("\n"):
        fm = _FENCE_MARK.match(ln)
        if fence is None and fm and not (fm.group(2)[0] == "`" and "`" in fm.group(3)):
            fence = fm.group(2)
        elif fence is not None and fm and fm.group(2)[0] == fence[0] and len(fm.group(2)) >= len(fence) \
                and not fm.group(3).strip():
            fence = None
        elif fence is None and _TOP_HEADING.match(ln):
            ln = "###" + ln.lstrip().lstrip("#")
        elif fence is None and _SETEXT.match(ln) and out and out[-1].strip() and not _BLOCK_START.match(out[-1]):
            out[-1] = "### " + out[-1].strip()
            continue
        out.append(ln)
    return "\n".join(out)


_CHECK = recache.compile(r"^\[([ xX~-])\]\s*")


# Each optional word takes its own spaces: no two space runs side by side to split a long blank run every way.
_ATT_REF = recache.compile(r"(?<!\s)\s*\(?(?:[—–-]+\s*)?(?:(?:done|tried|see|covered)\s*)?(?:(?:in|by)\s*)?(?:(?:→|->)\s*)?"
                      r"attempt\s*#?(\d+)\)?\.?\s*$", re.I)


def make_step(text: str, extra: list[str], position: int) -> NextStep | None:
    status = "todo"
    text = text.strip()
    cm = _CHECK.match(text)
    if cm:
        status = {" ": "todo", "x": "done", "X": "done", "~": "dropped", "-": "dropped"}[cm.group(1)]
        text = text[cm.end():]
    text = text.strip()
    for e in ("✅", "✔️", "✔"):
        if text.startswith(e):
            status = "done"
    if text.startswith("~~") and "~~" in text[2:]:
        status = "dropped"  # struck through; the words stay as written
    elif status == "todo" and re.search(r"\((?:done|completed?|fixed)\b[^)]*\)|\b(?:DONE|COMPLETED)\b|"
                                        r"\balready (?:run|done|tried|tested|applied|merged)\b", text):
        status = "done"  # "Pin the driver (DONE 2026-01-12)"
    attempt = None
    am = _ATT_REF.search(text[-160:])  # the reference ends the step: its tail is enough (and a long line stays cheap)
    if am:
        attempt = int(am.group(1))
        if "→" in am.group(0) and am.group(0).strip().startswith("(→"):
            text = text[:am.start()].rstrip(" .,;—–-")  # dbglog's own "(→ Attempt N)" link
        if status == "todo" and re.search(r"done|tried|covered", am.group(0), re.I):
            status = "done"
    detail = ""
    bm = re.match(r"^\*\*(.+?)\*\*\s*(?:[—–:-]+\s*|\.\s+)?(.*)$", text)
    if bm and bm.group(1).strip().rstrip(":"):
        text, detail = bm.group(1).strip().rstrip(":"), bm.group(2).strip()
    else:
        sm = re.match(r"^(.{1,120}?)\s+[—–]\s+(.*)$", text)
        if sm:
            text, detail = sm.group(1), sm.group(2)
    detail = " ".join([detail] + [e for e in extra if e]).strip()
    text = " ".join(text.split())
    detail = " ".join(detail.split())
    if not text:
        if not detail:
            return None
        text, detail = detail, ""
    return NextStep(position=position, text=text, detail=detail, status=status, attempt=attempt)


def diff_status(cell: str) -> str:
    c = cell.strip().lower()
    if not c or c in ("?", "-", "—", "todo", "pending", "untested", "not tested", "n/a"):
        return "untested"
    if re.search(r"culprit|root cause|🎯|\bthe cause\b|\bcause\b|confirmed|this is it", c):
        return "culprit"
    if re.search(r"ruled[ -]?out|eliminated|excluded|not it|not the cause|no effect|no change|same|✅|"
                 r"irrelevant|tested", c):
        return "ruled-out"
    return "untested"


def status_from_title(title: str) -> tuple[str, str | None]:
    m = re.match(r"^[\[(]([A-Za-z' ]{2,20})[\])]\s*[:—–-]?\s*(.+)$", title)
    if m and status_word(m.group(1)):
        return m.group(2).strip(), status_word(m.group(1))
    # (the tag at the end, searched from it: "^(.+?)\s*[(]" tried every space of a long run before it)
    m = re.search(r"[\[(]([A-Za-z' ]{2,20})[\])]$", title)
    if m and m.start() > 0 and title[:m.start()].strip() and status_word(m.group(1)) in ("resolved", "wontfix"):
        return title, status_word(m.group(1))
    m = re.match(r"^(?:✅|✔️?)\s*(.+)$", title)
    if m:
        return title, "resolved"
    return title, None


# How a try went, at the end of its title: "(FAILED)", "[WORKED]", "— partial", "✅" (its outcome says so already)
_TITLE_VERDICT = recache.compile(r"(?<=\S)\s*(?:[(\[](?:failed|fail|worked|works|ok|nok|pass(?:ed)?|success|successful|"
                                 r"partial|partially|no change|no effect|solved|fixed|done)[)\]]|[—–-]{1,2}\s*(?:failed|worked|"
                                 r"partial|no change|no effect|solved|fixed)|(?:✅|❌|⚠️?|✔️?|✗)+)\W{0,2}$", re.I)


def verdict_free(title: str) -> str:
    """An attempt's title without the verdict written at its end ("disable CUDA graphs (FAILED)", "pin 0.2.5 ✅"):
    the outcome field holds it, and `tried` reads the title as what was done."""
    return _TITLE_VERDICT.sub("", title).strip() or title


def parse_files(buf: list[str]) -> list[str]:
    out = []
    for line in buf:
        s = line.strip()
        if not s:
            continue
        if s[:2] in ("- ", "* ", "+ "):
            s = s[2:].strip()
        parts = [p.strip() for p in s.split(",")] if not s.startswith("`") or s.count("`") > 2 else [s]
        for p in parts:
            note = ""
            if p.startswith("`") and "`" in p[1:]:
                end = p.index("`", 1)
                p, note = p[1:end], p[end + 1:].strip()
            p = " ".join(p.split())
            if note:
                p = f"{p} {note}"
            if p:
                out.append(p)
    return out
