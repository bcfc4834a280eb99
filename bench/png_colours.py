"""Count the pixels of the report charts' verdict colours in a PNG screenshot (stdlib only), so the
screenshot bench says whether the charts were drawn, not only that a file was written.

    python bench/png_colours.py shot.png      ->  good=1234 bad=567 flaky=0 posterior=890
"""

from __future__ import annotations

import struct
import sys
import zlib

# dbglog/util/svgchart.py's colours (the posterior's bars are the "bad" red too)
COLOURS = {"good": (0x2B, 0x83, 0xBA), "bad": (0xD7, 0x19, 0x1C), "flaky": (0xFD, 0xAE, 0x61)}


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def pixels(path: str):
    """Yield (r, g, b) of every pixel of an 8-bit RGB or RGBA, non-interlaced PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and not interlace, "only 8-bit RGB(A), not interlaced"
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride = zlib.decompress(idat), width * bpp
    prev = bytearray(stride)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif f == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                line[i] = (line[i] + ((line[i - bpp] if i >= bpp else 0) + prev[i]) // 2) & 0xFF
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                c = prev[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + _paeth(a, prev[i], c)) & 0xFF
        for x in range(0, stride, bpp):
            yield line[x], line[x + 1], line[x + 2]
        prev = line


def main(path: str) -> None:
    want = {rgb: name for name, rgb in COLOURS.items()}
    counts = dict.fromkeys(COLOURS, 0)
    for px in pixels(path):
        name = want.get(px)
        if name:
            counts[name] += 1
    print(" ".join(f"{k}={v}" for k, v in counts.items()))


if __name__ == "__main__":
    main(sys.argv[1])
