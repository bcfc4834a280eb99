"""A log read in one pass with bounded memory: the signature scan and the kernel-API boundary of a
file of any size, and the lines around the failure for the readers that need them.

A log up to ``WHOLE_BELOW`` bytes is read whole (``classify_text``, with its joins of wrapped and
split lines). A bigger one is read in blocks cut at line ends. Each block is first *gated*: its
lines are grouped by key (the line with digits and hex letters masked, so counters, timestamps and
pointers collapse) and the first line of each key never seen before is looked at for the catalog's
needles. A block whose keys are all known to hold no needle is skipped; any other block is
classified by the catalog's own scan, in a window holding ``CONTEXT_LINES`` lines of the blocks
before and after it (a traceback's exception below its header, an NCCL WARN's unwinding), and
only its own lines' hits count. A key whose lines were looked at ``signatures._MAX_MEMBERS``
times is noise from then on -- the same bound the whole-text scan puts on one group.

Memory: a few blocks and the window's lines, whatever the log's size. What is kept across
blocks: the keys seen (bounded), the best hits, the lines around the best one.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass, field
from typing import BinaryIO, Iterable

from dbglog.diagnose import signatures as S
from dbglog.diagnose.kernel_api import ApiBoundary, ApiStream, parse_kernel_api_log
from dbglog.util.blocks import line_blocks

BLOCK = 2 << 20
WHOLE_BELOW = 8 << 20  # read whole below this: the joins of wrapped lines need the whole paste
CONTEXT_LINES = 2000  # >= signatures._TRACEBACK_SPAN: a traceback's exception is found below its header
AROUND = 400  # lines kept either side of the best hit (the fingerprint's window, dump readers)
_KEY_MAP = bytes.maketrans(b"0123456789abcdefABCDEF", b"0" * 22)  # same length: offsets stay the file's
_MAX_KEYS = 50_000  # keys remembered (a log of unique lines forgets and looks again)
_KEEP_HITS = 256
_SPARSE = 2000  # lines to read in a block up to which only their neighbourhoods are scanned
_BEFORE = 8  # lines above a line read (a frame above its source line, a message above "raised from")
_AFTER = 64  # lines below (> an NCCL WARN's look-ahead for its unwinding)


@dataclass
class Scan:
    """What one pass over a log found."""

    match: S.Match | None
    kernel_api: ApiBoundary | None
    data: bytes  # the whole log (read whole) or the lines around the match (streamed)
    data_line: int  # 0-based index in the log of ``data``'s first line
    size: int  # bytes read
    streamed: bool
    warnings: list[str] = field(default_factory=list)


def _needles(sigs: Iterable[S.Signature]) -> list[bytes]:
    out = {n for sig in sigs if sig.source == "builtin" for needles in sig.needles for n in needles}
    out |= {S._RAISED_FROM, S._TRACEBACK_HEADER_TEXT, S._FRAME_TEXT}
    return sorted(n.encode("utf-8") for n in out)


class _Gate:
    """Which blocks hold a line worth the catalog's scan (a needle in a key not yet saturated)."""

    def __init__(self, needles: list[bytes]):
        self.needles = needles
        self.quiet: set[bytes] = set()  # keys whose first line holds no needle
        self.loud: dict[bytes, bytes] = {}  # keys whose first line holds one -> its shape
        self.seen: dict[bytes, int] = {}  # shape -> lines of its keys looked at
        self.saturated: set[bytes] = set()
        self.api = False  # a line mentions a kernel-API call (the kernel-API reader reads on from there)

    def hot(self, block: bytes) -> tuple[dict[bytes, int] | None, bytes, int]:
        """The keys of ``block`` to read (key -> its lines in the block; None: read every line), the
        block's keys when some are to be read, and its line count."""
        masked = block.translate(_KEY_MAP)
        keys = masked.split(b"\n")
        uniq = set(keys)
        if len(uniq) > len(keys) // 4:
            self.api = self.api or b" API Call: " in block
            return None, b"", len(keys) - 1  # lines hardly repeat: grouping saves nothing, the scan reads them all
        quiet, loud, sat = self.quiet, self.loud, self.saturated
        new = [k for k in uniq if k not in quiet and k not in loud and k not in sat]
        if new:
            self._learn(block, masked, new)
        hot = {k: keys.count(k) for k in uniq if k in loud}
        seen = self.seen
        for k, n in hot.items():
            shape = loud.get(k)
            if shape is None:
                continue  # its shape saturated just now
            seen[shape] += n
            if seen[shape] >= S._MAX_MEMBERS:  # looked at as often as the whole-text scan would: noise
                for k2 in [k2 for k2, s2 in loud.items() if s2 == shape]:
                    del loud[k2]
                    sat.add(k2)
        return hot, (masked if hot else b""), len(keys) - 1

    def _learn(self, block: bytes, masked: bytes, new: list[bytes]) -> None:
        """Look the first line of each new key up for needles (in the file's bytes, not the key's)."""
        reps = []
        for k in new:
            at = _starts(block, k, masked, 1)
            reps.append(block[at[0]:at[0] + len(k)] if at else b"")
        text = b"\n".join(reps)
        self.api = self.api or b" API Call: " in text
        holding = {i for i, r in enumerate(reps) if any(n in r for n in self.needles)} if len(reps) < 64 \
            else self._holding(text, reps)
        if len(self.quiet) + len(new) > _MAX_KEYS:
            self.quiet.clear()
        if len(self.loud) + len(new) > _MAX_KEYS:  # (forgotten keys are looked at again: counts restart)
            self.loud.clear()
            self.seen.clear()
        for i, k in enumerate(new):
            if i in holding:
                # the whole-text scan's key: digits and hex letters deleted, so "0.5" and "12.25"
                # are one group (masked, they are two: their lengths differ)
                shape = k.replace(b"0", b"")
                self.loud[k] = shape
                self.seen.setdefault(shape, 0)
            else:
                self.quiet.add(k)

    def _holding(self, text: bytes, reps: list[bytes]) -> set[int]:
        import itertools

        starts = list(itertools.accumulate((len(r) + 1 for r in reps), initial=0))
        out: set[int] = set()
        for n in self.needles:
            pos = text.find(n)
            while pos != -1:
                i = bisect.bisect_right(starts, pos) - 1
                out.add(i)
                pos = text.find(n, starts[i + 1])
        return out


def _tail(data: bytes, lines: int, limit: int) -> bytes:
    """The last ``lines`` whole lines of ``data`` (at most ``limit`` bytes)."""
    end = data[-limit:]
    if len(end) < len(data):
        end = end[end.find(b"\n") + 1:]  # (a line cut by the limit is no context)
    parts = end.rsplit(b"\n", lines + 1)  # (the last part: after the last newline, usually empty)
    return end[len(parts[0]) + 1:] if len(parts) > lines + 1 else end


def _head(data: bytes, lines: int, limit: int) -> bytes:
    """The first ``lines`` lines of ``data`` (at most ``limit`` bytes, whole lines)."""
    start = data[:limit]
    parts = start.split(b"\n", lines)
    if len(parts) > lines:
        return start[:len(start) - len(parts[-1])]
    return start[:start.rfind(b"\n") + 1]


def _back(data: bytes, at: int, n: int) -> int:
    """The start of the line ``n`` lines above the line starting at ``at``."""
    for _ in range(n):
        if at <= 0:
            return 0
        at = data.rfind(b"\n", 0, at - 1) + 1
    return at


def _fwd(data: bytes, at: int, n: int) -> int:
    """Just past the end of the ``n`` lines starting at ``at``."""
    for _ in range(n):
        nxt = data.find(b"\n", at)
        if nxt < 0:
            return len(data)
        at = nxt + 1
    return at


def _starts(block: bytes, key: bytes, masked: bytes, count: int) -> list[int]:
    """Where the ``count`` lines of ``key`` start in ``block`` (``masked``: the block's keys)."""
    out = [0] if masked.startswith(key + b"\n") or masked == key else []
    needle = b"\n" + key + b"\n"
    pos = masked.find(needle)
    while pos >= 0 and len(out) < count:
        out.append(pos + 1)
        pos = masked.find(needle, pos + len(key) + 1)
    if len(out) < count and masked.endswith(b"\n" + key):
        out.append(len(masked) - len(key))
    return out


@dataclass
class _Segments:
    """Pieces of a window joined by an empty line: where each piece's lines are in the window."""

    text: bytes
    firsts: list[int]  # line of each piece in ``text``
    lines: list[int]  # line of each piece in the window
    offsets: list[int]  # byte offset of each piece in the window

    def window_line(self, i: int) -> int | None:
        """The window's line for line ``i`` of ``text`` (None: the empty line between two pieces)."""
        k = bisect.bisect_right(self.firsts, i) - 1
        if k + 1 < len(self.firsts) and i == self.firsts[k + 1] - 1:
            return None
        return self.lines[k] + i - self.firsts[k]


def _segments(data: bytes, starts: list[int]) -> _Segments:
    """The neighbourhoods of the lines starting at ``starts`` (window offsets): ``_BEFORE`` lines
    above, ``_AFTER`` below (a traceback header: up to its span), merged where they touch."""
    spans: list[list[int]] = []
    for o in sorted(starts):
        after = S._TRACEBACK_SPAN if data.find(S._TRACEBACK_HEADER_TEXT.encode(), o, data.find(b"\n", o) % (len(data) + 1)) >= 0 \
            else _AFTER
        lo, hi = _back(data, o, _BEFORE), _fwd(data, o, after + 1)
        if spans and lo <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], hi)
        else:
            spans.append([lo, hi])
    parts, firsts, lines, offsets = [], [], [], []
    line, prev, first = 0, 0, 0
    for lo, hi in spans:
        line += data.count(b"\n", prev, lo)
        prev = lo
        piece = data[lo:hi]
        piece = piece[:-1] if piece.endswith(b"\n") else piece
        parts.append(piece)
        firsts.append(first)
        lines.append(line)
        offsets.append(lo)
        first += piece.count(b"\n") + 2  # (the empty line between pieces)
    return _Segments(b"\n\n".join(parts), firsts, lines, offsets)


class _Stream:
    def __init__(self, sigs: list[S.Signature], max_key_lines: int, budget: float | None, block: int,
                 source: str | None):
        self.sigs = sigs
        self.builtin = [s for s in sigs if s.source == "builtin"]
        self.user = [s for s in sigs if s.source != "builtin"]
        self.max_key_lines, self.budget = max_key_lines, budget
        self.gate = _Gate(_needles(sigs))
        self.api = ApiStream(source)
        self.ctx_bytes = max(64 << 10, block // 4)
        self.prev = b""  # the block before the pending one (its last lines: the window's look-behind)
        self.pending: tuple | None = None  # (block, its first line in the log, hot keys, masked)
        self.lines = 0
        self.force = False  # a hit fell in the last window's look-ahead: read the next block whole
        self.hits: list[S._Hit] = []
        self.notes: list[str] = []
        self.around: tuple[int, bytes] = (0, b"")

    def feed(self, block: bytes) -> None:
        hot, masked, n = self.gate.hot(block)
        if self.gate.api:
            self.api.feed(block, self.lines)
        if self.pending is not None:
            self._window(block)
        self.pending = (block, self.lines, hot, masked, n)
        self.lines += n

    def finish(self) -> None:
        if self.pending is not None:
            self._window(b"", final=True)
            self.pending = None

    def _window(self, after: bytes, final: bool = False) -> None:
        """Scan the pending block if it is to be read, with the lines around it (``after``: the next block)."""
        block, first, hot, masked, n = self.pending  # type: ignore[misc]
        force, self.force = self.force, False
        full = hot is None or force or sum(hot.values()) > _SPARSE
        if full or hot or self.user:
            tail = _tail(self.prev, CONTEXT_LINES, self.ctx_bytes)
            data = tail + block + _head(after, CONTEXT_LINES, self.ctx_bytes)
            own0 = tail.count(b"\n")
            own = (own0, own0 + n + (1 if final and not block.endswith(b"\n") else 0))
            if full:
                self._scan(data, data, None, self.sigs, own, first)
            else:
                if hot:
                    starts = [len(tail) + o for k, c in hot.items() for o in _starts(block, k, masked, c)]
                    seg = _segments(data, starts)
                    self._scan(seg.text, data, seg, self.builtin, own, first)
                if self.user:
                    self._scan(data, data, None, self.user, own, first)
        self.prev = block

    def _scan(self, text: bytes, data: bytes, seg: _Segments | None, sigs: list[S.Signature],
              own: tuple[int, int], first: int) -> None:
        """Scan ``text`` (the window ``data``, or pieces ``seg`` of it); keep the hits on lines of
        the block (window lines ``own``), whose first line is line ``first`` of the log."""
        # (hubs: one pass per hub instead of one per needle pays on a window of unique lines)
        t, hits, notes = S._scan(text, sigs, self.budget, hubs_from=256 << 10)
        self.notes.extend(n for n in notes if n not in self.notes)
        best = self.hits[0] if self.hits else None
        shift = first - own[0]
        for h in hits:
            line = h.line if seg is None else seg.window_line(h.line)
            if line is None or line < own[0]:
                continue
            if line >= own[1]:
                self.force = True  # (the next block is read whole: this is its hit)
                continue
            h.text = t.display(h.line, h.col)
            h.line = line + shift
            self.hits.append(h)
        if not self.hits:
            return
        self.hits.sort(key=S._order)
        if self.hits[0] is not best:
            i = self.hits[0].line - shift
            if seg is None:
                at = sum(map(len, t.lines[:i])) + i
            else:
                k = bisect.bisect_right(seg.lines, i) - 1
                at = _fwd(data, seg.offsets[k], i - seg.lines[k])
            lo = _back(data, at, AROUND)
            self.around = (first + data.count(b"\n", 0, lo) - own[0], data[lo:_fwd(data, at, AROUND + 1)])
        if len(self.hits) > 2 * _KEEP_HITS:
            self._trim()

    def _trim(self) -> None:
        """Keep the best hits, and the best of each name (the Match's ``others``)."""
        kept, names = self.hits[:_KEEP_HITS], {h.name for h in self.hits[:_KEEP_HITS]}
        for h in self.hits[_KEEP_HITS:]:
            if h.name not in names:
                names.add(h.name)
                kept.append(h)
        self.hits = kept

    def match(self) -> S.Match | None:
        return S._best(self.hits, lambda h: h.text or "", self.max_key_lines, list(self.notes))


def scan(src: BinaryIO, signatures: Iterable[S.Signature] | None = None, *, max_key_lines: int = 8,
         budget: float | None = None, source: str | None = None, block: int | None = None,
         whole_below: int | None = None) -> Scan:
    """Classify the log read from ``src`` (a binary file object) in one pass; see the module's doc.
    ``block`` and ``whole_below`` default to BLOCK and WHOLE_BELOW."""
    block = BLOCK if block is None else block
    whole_below = WHOLE_BELOW if whole_below is None else whole_below
    sigs = list(S.BUILTIN if signatures is None else signatures)
    pos0 = src.tell() if _seekable(src) else None
    start = src.read(whole_below + 1) if whole_below > 0 else b""
    if whole_below > 0 and len(start) <= whole_below:
        warns: list[str] = []
        m = S.classify_text(start, sigs, max_key_lines=max_key_lines, warnings=warns, budget=budget) if start else None
        return Scan(m, parse_kernel_api_log(start, source=source), start, 0, len(start), False, warns)
    s = _Stream(sigs, max_key_lines, budget, block, source)
    size = 0
    paused = S.gc.isenabled()
    if paused:
        S.gc.disable()  # (as classify_text: many short-lived objects, no cycles)
    try:
        for piece in line_blocks(_Prefixed(start, src), block):
            size += len(piece)
            s.feed(piece)
        s.finish()
    finally:
        if paused:
            S.gc.enable()
    m = s.match()
    around = s.around
    if (m is None or m.rank < S._UNWRAP_BELOW) and size <= S._UNWRAP_MAX and pos0 is not None:
        src.seek(pos0)  # nothing causal: read again with split lines joined back, as a log read whole is
        j = _joined(src, sigs, max_key_lines, budget, block)
        if j is not None and (m is None or j.rank > m.rank):
            m, around = j, (0, b"")
    return Scan(m, s.api.result(), around[1], around[0], size, True, list(s.notes))


def _joined_lines(text: bytes, starts: list[int], n: int) -> tuple[bytes, list[int]]:
    """Only the lines a join made, the first of each key (with the two lines above it): the others
    were read in the first pass, and a joined line repeated with other numbers says nothing new."""
    lines = text.split(b"\n")
    ends = starts[1:] + [n]
    seen: set[bytes] = set()
    keep: set[int] = set()
    for k in range(len(starts)):
        if ends[k] - starts[k] > 1:
            key = lines[k].translate(_KEY_MAP)
            if key not in seen:
                seen.add(key)
                keep.update(range(max(0, k - 2), k + 1))
    order = sorted(keep)
    return b"\n".join(lines[k] for k in order), [starts[k] for k in order]


def _seekable(src) -> bool:
    try:
        return bool(src.seekable())
    except (AttributeError, OSError, ValueError):
        return False


def _joined(src: BinaryIO, sigs: list[S.Signature], max_key_lines: int, budget: float | None,
            block: int) -> S.Match | None:
    """The best match of the log read block by block with each kind of split line joined back
    (a terminal's wrap, the container runtime's partial lines, chunks under a log prefix, a pager's
    rows); line numbers are the log's."""
    best: S.Match | None = None
    first = 0
    for piece in line_blocks(src, block):
        for joiner in (S.unwrap, S.join_partial_lines, S.join_prefixed, S.join_numbered):
            j = joiner(piece)
            if j is None:
                continue
            text, starts = _joined_lines(j[0], j[2], piece.count(b"\n") + 1)
            m = S._classify(text, sigs, max_key_lines, None, budget) if text else None
            if m is None or (best is not None and m.rank <= best.rank):
                continue
            S._renumber(m, [first + i for i in starts])
            m.warnings.append(f"read with {j[1]} joined back")
            best = m
        first += piece.count(b"\n")
    return best


def scan_path(path: str | os.PathLike, signatures: Iterable[S.Signature] | None = None, **kw) -> Scan:
    with open(path, "rb") as f:
        return scan(f, signatures, source=kw.pop("source", str(path)), **kw)


class _Prefixed:
    """A file object whose first bytes were read already."""

    def __init__(self, first: bytes, rest: BinaryIO):
        self.first, self.rest = first, rest

    def read(self, n: int) -> bytes:
        if self.first:
            out, self.first = self.first[:n], self.first[n:]
            return out
        return self.rest.read(n)
