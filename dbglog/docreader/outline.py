"""A document's outline: markdown-it block tokens with their line maps, as a tree of sections."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from dbglog.docreader.vocab import INV_LABELS, DIFF_HEAD, NEXT_HEAD, STRONG_CONTAINER, bare_words, field_of


@dataclass
class Block:
    kind: str  # paragraph | list | table | fence | code | html | quote | hr | raw
    start: int  # 0-based line index
    end: int  # exclusive
    items: list[tuple[int, int]] = field(default_factory=list)  # list items / table rows (start, end)
    ordered: bool = False


@dataclass
class Node:
    level: int  # 0 = the document itself
    text: str  # heading text, emphasis removed
    start: int  # heading line index (-1 for the document)
    head_end: int  # first line after the heading (setext headings take two)
    blocks: list[Block] = field(default_factory=list)
    children: list[Node] = field(default_factory=list)
    parent: Node | None = None

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()

    @property
    def end(self) -> int:
        ends = [b.end for b in self.blocks] + [c.end for c in self.children] + [self.head_end]
        return max(ends)

    def lines(self) -> list[int]:
        """Every line index of this subtree that belongs to it (heading, blocks, children)."""
        out = list(range(self.start, self.head_end)) if self.start >= 0 else []
        for b in self.blocks:
            out.extend(range(b.start, b.end))
        for c in self.children:
            out.extend(c.lines())
        return sorted(out)


@lru_cache(maxsize=1)
def _md():
    from markdown_it import MarkdownIt
    from mdit_py_plugins.front_matter import front_matter_plugin

    return MarkdownIt("commonmark").enable("table").use(front_matter_plugin).disable("inline")


_SIGNATURE = re.compile(r"^--\s*$")
_KINDS = {"paragraph_open": "paragraph", "bullet_list_open": "list", "ordered_list_open": "list",
          "table_open": "table", "fence": "fence", "code_block": "code", "html_block": "html",
          "blockquote_open": "quote", "hr": "hr"}


def outline(lines: list[str]) -> tuple[tuple[int, int] | None, Node]:
    """(front matter line span or None, the section tree)."""
    text = "\n".join(lines)
    tokens = _md().parse(text)
    root = Node(0, "", -1, 0)
    stack = [root]
    front = None
    covered = [False] * len(lines)
    cur_block: Block | None = None
    for t in tokens:
        if t.level == 0 and t.map:
            a, b = t.map
            if t.type == "front_matter":
                front = (a, b)
            elif t.type == "heading_open" and b - a > 1 and _SIGNATURE.match(lines[b - 1]) \
                    and (lines[b - 1].endswith(" ") or re.search(r"[.!?,]\W*$", lines[b - 2])):
                # "... but that didn't help either." over an email's "-- " signature line: a paragraph, not a
                # setext heading (the signature mark stays a line of its own)
                cur_block = Block("paragraph", a, b - 1)
                stack[-1].blocks.append(cur_block)
                stack[-1].blocks.append(Block("raw", b - 1, b))
            elif t.type == "heading_open":
                level = int(t.tag[1])
                while stack[-1].level >= level:
                    stack.pop()
                raw = lines[a]
                node = Node(level, heading_text(raw, setext=(b - a) > 1 and not raw.lstrip().startswith("#")),
                            a, b, parent=stack[-1])
                stack[-1].children.append(node)
                stack.append(node)
            elif t.type in _KINDS:
                cur_block = Block(_KINDS[t.type], a, b, ordered=t.type == "ordered_list_open")
                stack[-1].blocks.append(cur_block)
            for i in range(a, min(b, len(lines))):
                covered[i] = True
        elif cur_block is not None and t.map and (
                (t.type == "list_item_open" and t.level == 1) or (t.type == "tr_open" and t.level == 2)):
            cur_block.items.append((t.map[0], t.map[1]))
    _split_lazy_labels(root, lines)
    _pseudo_headings(root, lines)
    _title_items(root, lines)
    # Lines no block token covers (link reference definitions, stray text) are kept as raw blocks,
    # attached to the section they sit in.
    for i, line in enumerate(lines):
        if not covered[i] and line.strip():
            node = _node_at(root, i)
            node.blocks.append(Block("raw", i, i + 1))
            node.blocks.sort(key=lambda b: b.start)
    return front, root


def _pseudo_heading(line: str) -> str | None:
    """ "**Next steps:**", "What I tried, in order:", "TODO" on a line of their own act as headings."""
    raw = line.strip()
    m = re.fullmatch(r"(?:\*\*|__)(.{2,80}?)(?:\*\*|__)\s*:?", raw)
    if m:
        text = m.group(1).strip().rstrip(":").strip()
    elif raw.endswith(":") and len(raw) <= 80 and not raw.startswith(("-", "*", "|", ">", "`")):
        text = raw[:-1].strip()
    elif len(raw.split()) <= 3 and not raw.startswith(("-", "*", "|", ">", "`", "#")):
        text = raw
        if not (NEXT_HEAD.fullmatch(bare_words(text)) or STRONG_CONTAINER.fullmatch(bare_words(text))):
            return None
    else:
        return None
    bare = bare_words(text)
    if not bare or bare in INV_LABELS:
        return None
    if NEXT_HEAD.search(bare) or STRONG_CONTAINER.search(bare) or field_of(text) or DIFF_HEAD.search(bare):
        return text
    return None


# "**Attempted Solutions**:" at the margin: a label, whatever markdown's lazy continuation makes of it
_MARGIN_LABEL = re.compile(r"^(?:\*\*|__)[^*_]{2,60}(?:\*\*|__)\s*:?(?:\s|$)")
_ITEM_MARK = re.compile(r"^\s*(?:[-*+]|\d{1,4}[.)])\s")


def _split_lazy_labels(root: Node, lines: list[str]) -> None:
    """A bold label at the margin right under a list item ("- MUSIQ's patch extraction" then
    "**Attempted Solutions**:" then "- Upgraded T4 ...") is read by markdown as the item's lazy
    continuation, so the items before and after it and the label make one list. Writers mean a new
    paragraph: split the list there, the label a paragraph of its own."""
    for node in root.walk():
        out: list[Block] = []
        for b in node.blocks:
            if b.kind != "list":
                out.append(b)
                continue
            cuts = [i for i in range(b.start + 1, b.end) if _MARGIN_LABEL.match(lines[i]) and lines[i - 1].strip()
                    and not any(i == a for a, _e in b.items)]
            if not cuts:
                out.append(b)
                continue
            lo = b.start
            for i in cuts + [b.end]:
                if i > lo:
                    items = [(a, min(e, i)) for a, e in b.items if lo <= a < i]
                    if items:
                        if items[0][0] > lo:  # the label's own text went on over more lines
                            out.append(Block("paragraph", lo, items[0][0]))
                        out.append(Block("list", items[0][0], i, items, ordered=b.ordered))
                    else:
                        out.append(Block("paragraph", lo, i))
                if i < b.end:
                    out.append(Block("paragraph", i, i + 1))
                lo = i + 1
        node.blocks = out


def _pseudo_headings(root: Node, lines: list[str]) -> None:
    """A one-line paragraph that names a role, right above a list or table, becomes a heading node."""
    for node in list(root.walk()):
        blocks = node.blocks
        k = 0
        while k < len(blocks) - 1:
            b = blocks[k]
            nxt = blocks[k + 1]
            text = _pseudo_heading(lines[b.start]) if b.kind == "paragraph" and b.end - b.start == 1 else None
            if text is None and b.kind == "paragraph" and nxt.kind == "list":
                last = lines[b.end - 1].strip()
                # (a short line: a long one ending in ":" is a story's sentence leading into its list)
                if last.endswith(":") and len(last) <= 100 and STRONG_CONTAINER.search(bare_words(last)) \
                        and not NEXT_HEAD.search(bare_words(last)):
                    # "... `auto` is fine. What I already tried:" right above a list.
                    if b.end - b.start > 1:
                        blocks.insert(k + 1, Block("paragraph", b.end - 1, b.end))
                        b.end -= 1
                        continue
                    text = last.rstrip(":")
            # blank lines only between ("Plan", "", " ", " * Finalize ..." in an HTML-to-text export)
            if text and nxt.kind in ("list", "table") and not any(lines[i].strip() for i in range(b.end, nxt.start)):
                j = k + 1
                while j + 1 < len(blocks) and blocks[j + 1].kind in ("list", "table", "fence", "code") \
                        and blocks[j + 1].start - blocks[j].end <= 1:
                    j += 1
                # never level 1: a "Plan" line in a doc without headings is a section, not the doc's title
                child = Node(max(2, node.level + 1) if node.level < 6 else 6, text, b.start, b.end,
                             blocks=blocks[k + 1:j + 1], parent=node)
                node.children.append(child)
                node.children.sort(key=lambda c: c.start)
                del blocks[k:j + 1]
                continue
            k += 1


_TITLE_ITEM = re.compile(r"^\s{0,3}(\d{1,3})[.)]\s+(?:\*\*|__)([^*_]{2,100})(?:\*\*|__)\s*:?\s*$")


def _title_items(root: Node, lines: list[str]) -> None:
    """ "1. **Disable P2P**" alone on its line, then "- Action: ..." / "- Result: ..." bullets (and the
    fences between them): a numbered entry written as a list, read like a numbered heading."""
    for node in list(root.walk()):
        blocks = node.blocks
        starts = [k for k, b in enumerate(blocks) if b.kind == "list" and len(b.items) == 1
                  and b.items[0][1] - b.items[0][0] <= 2 and _TITLE_ITEM.match(lines[b.start])]
        if len(starts) < 2:
            continue
        made = []
        for j, k in enumerate(starts):
            end = starts[j + 1] if j + 1 < len(starts) else len(blocks)
            body = blocks[k + 1:end]
            # The entry ends at a paragraph that is not part of it (a blank-separated conclusion).
            cut = next((i for i, b in enumerate(body) if b.kind in ("hr",)), len(body))
            body = body[:cut]
            labelled = any(re.match(r"^\s*[-*+]\s+(?:\*\*)?[A-Za-z][\w ]{0,25}(?:\*\*)?\s*:", lines[i])
                           for b in body for i in range(b.start, b.end))
            if not labelled:
                continue
            m = _TITLE_ITEM.match(lines[blocks[k].start])
            head = blocks[k]
            child = Node(min(node.level + 1, 6), f"{m.group(1)}. {m.group(2).strip()}", head.start, head.end,
                         blocks=list(body), parent=node)
            made.append((k, k + 1 + len(body), child))
        for k, stop, child in reversed(made):
            del blocks[k:stop]
            node.children.append(child)
        node.children.sort(key=lambda c: c.start)


def _node_at(root: Node, i: int) -> Node:
    best = root
    for n in root.walk():
        if 0 <= n.start <= i and n.start >= best.start:
            best = n
    return best


_EMPH = ("**", "__", "*", "_", "`")


def heading_text(raw: str, setext: bool = False) -> str:
    s = raw.strip() if setext else re.sub(r"^\s{0,3}#{1,6}\s*", "", raw).strip()
    s = re.sub(r"\s+#+\s*$", "", s) if not setext else s
    s = s.strip()
    for mark in _EMPH:
        if len(s) > 2 * len(mark) and s.startswith(mark) and s.endswith(mark) and mark not in s[len(mark):-len(mark)]:
            s = s[len(mark):-len(mark)].strip()
    return " ".join(s.split())


_RULE = re.compile(r"^\s*([=\-━─═~*_#+])\1{2,}\s*$")
_CAPS_LABEL = re.compile(r"^[A-Z][A-Z0-9 /&()'-]{2,60}:$")


def plain_text_structure(lines: list[str]) -> list[str]:
    """The outline of a plain-text note (.txt), read as its author drew it: a line between two rules
    ("====" / "NOTEBOOK HANG INVESTIGATION" / "====") is a top heading, a line over a rule ("SOLUTION
    1: ..." / "━━━━") a sub-heading, an upper-case line ending in a colon ("ROOT CAUSE:") a small
    heading; a "#" in an indented line is a shell comment, not a heading. Only the structure is read
    from this copy: every line's text is still read from the file as written."""
    out = list(lines)
    n = len(lines)
    rule = [bool(_RULE.match(ln)) for ln in lines]
    i = 0
    while i < n:
        ln = lines[i]
        text = ln.strip()
        if rule[i] and i + 2 < n and lines[i + 1].strip() and not rule[i + 1] and rule[i + 2]:
            out[i], out[i + 1], out[i + 2] = "", "# " + lines[i + 1].strip(), ""
            i += 3
            continue
        if text and not rule[i] and not ln[:1].isspace() and i + 1 < n and rule[i + 1] \
                and (i == 0 or not lines[i - 1].strip()):
            out[i], out[i + 1] = "## " + text, ""
            i += 2
            continue
        if _CAPS_LABEL.match(ln) and sum(c.isalpha() for c in ln) >= 3:
            out[i] = "### " + text
        elif ln[:1].isspace() and text.startswith("#"):
            out[i] = ln.replace("#", "\\#", 1)
        i += 1
    return out
