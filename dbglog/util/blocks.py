"""A file read in blocks cut at line ends: what streams a big log in bounded memory (secret
redaction of a run's output, the signature scan of a log)."""
from __future__ import annotations

from typing import BinaryIO, Callable, Iterator

BLOCK = 4 << 20
_LONGEST = 4  # a line longer than this many blocks is cut (memory stays bounded whatever the file holds)


def after_last_line(chunk: bytes) -> int:
    """Where a block ends by default: after its last whole line (0: no line ends in it)."""
    return chunk.rfind(b"\n") + 1


def _soft_cut(chunk: bytes) -> int:
    """Where a line too long to keep whole is cut: after its last carriage return, blank or tab in the chunk's
    second half (progress bars redraw with \r), so that no word -- a token to redact -- is cut in two; else at
    the end."""
    half = len(chunk) // 2
    at = max(chunk.rfind(b"\r", half), chunk.rfind(b" ", half), chunk.rfind(b"\t", half))
    return at + 1 if at >= 0 else len(chunk)


def line_blocks(src: BinaryIO, block: int = BLOCK, cut: Callable[[bytes], int] = after_last_line,
                hold: Callable[[bytes], bool] | None = None) -> Iterator[bytes]:
    """The bytes of ``src`` in pieces of about ``block`` bytes, each ending where ``cut`` says (a
    line end); the pieces joined are the file. ``hold(piece)`` true: read on and hand the piece out
    with the next block (a PEM key cut by the block). A piece grows to at most a few blocks."""
    carry = b""
    while True:
        data = src.read(block)
        chunk = carry + data if carry else data
        if not chunk:
            return
        at = cut(chunk) if data else len(chunk)
        if at == 0 and len(chunk) < _LONGEST * block:
            carry = chunk  # one line longer than a block: read on
            continue
        at = at or _soft_cut(chunk)
        piece, carry = chunk[:at], chunk[at:]
        if hold is not None and data and len(piece) < _LONGEST * block and hold(piece):
            carry = piece + carry
            continue
        yield piece
