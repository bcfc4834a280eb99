"""Print what the dbglog MCP tool `doc_units(path)` answers for a document, one JSON object per line: first the
guide, the digest and the investigations, then each unit (`python units.py DOC.md [FIRST LAST]`)."""
import json
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from dbglog import mcp_server  # noqa: E402

signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # (piped into head: stop quietly, as a shell tool does)
span = [int(x) for x in sys.argv[2:4]] if len(sys.argv) >= 4 else [None, None]
res = mcp_server.doc_units(sys.argv[1], *span)
if getattr(res, "isError", False) or not hasattr(res, "guide"):  # (the tool's refusal: a missing file, not UTF-8 ...)
    print(" ".join(getattr(c, "text", "") for c in getattr(res, "content", [])) or "doc_units failed", file=sys.stderr)
    raise SystemExit(2)
# (the digest first: the guide is long, and a reader that looks at the line's start finds what to send back)
print(json.dumps({"digest": res.digest, "investigations": res.investigations, "guide": res.guide},
                 ensure_ascii=False))
for u in res.units:
    d = u.model_dump()
    keep = ("id", "kind", "lines", "author", "quoted", "quotes", "investigation", "label", "read_as", "text")
    shown = {k: d[k] for k in keep if d.get(k) not in ("", None, {}) and d.get(k) is not False}  # (0 is an id)
    print(json.dumps(shown, ensure_ascii=False))
