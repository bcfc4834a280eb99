"""Send an extraction to the dbglog MCP tool `import_extraction(path, extraction)` in a scratch workspace and print
what it imported, or the one-line error (fix it and check again): `python check.py DOC.md EXTRACTION.json`."""
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
doc = os.path.abspath(sys.argv[1])
ext = json.loads(Path(sys.argv[2]).read_text(encoding="utf-8"))
os.chdir(tempfile.mkdtemp())
from dbglog import mcp_server  # noqa: E402

res = mcp_server.import_extraction(doc, ext)
d = res.model_dump() if hasattr(res, "model_dump") else res
if not d.get("investigations"):
    print(json.dumps(d)[:2000])
for i in d.get("investigations") or []:
    print(f"investigation {i.get('title')!r}: {len(i.get('attempt_list', []))} attempt(s), {i.get('next_steps')} "
          "next step(s)")
    for a in i.get("attempt_list", []):
        print(f"  {a.get('number')}. [{a.get('outcome')}] {a.get('title')}  lines {a.get('source_lines')}")
for w in d.get("warnings", []):
    print("warning:", w)
