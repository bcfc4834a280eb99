"""Agent-style `tried` trials: each workspace an agent's own records, each query a paraphrase of one of them.

    PYTHONPATH=. python bench/tried_trials.py bench/data/tried_trials/round1.json [--part study|held_out] [--misses]

A trial file (written by a helper who never read dbglog's code, after reading real issue threads) holds
workspaces: an investigation with 4-6 attempts, and queries an agent might type before re-trying something,
in other words than the record's. A query's ``expect`` is the attempt it restates (1-based) or null when it
names a nearby experiment that was not tried (the same knob to another value, another knob, a next idea).

Each workspace is built alone (one agent's knowledge base) and every query asked through ``search.tried``.
Printed: restatements answered "tried" with the right attempt first, answered "tried" with another attempt
first, not answered "tried"; and of the near misses, how many were answered "tried" (false alarms) and how
many "tried another way". A file names the workspaces that were studied and those held out (``--part``);
``--misses`` lists the queries judged wrong, never of the held-out part.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dbglog.kb import search  # noqa: E402
from dbglog.kb.records import Records  # noqa: E402
from dbglog.util.workspace import Workspace  # noqa: E402


def build(ws: dict, root: Path) -> Records:
    """One workspace: the investigation and its attempts, in order."""
    recs = Records(Workspace(root / ".dbglog"), create=True)
    inv = recs.new(ws["title"], symptom=ws.get("symptom", ""))
    for a in ws["attempts"]:
        recs.add_attempt(inv.id, title=a["title"], hypothesis=a.get("hypothesis", ""), did=a.get("did", ""),
                         result=a.get("result", ""), conclusion=a.get("conclusion", ""), outcome=a["outcome"])
    return recs


def judge(recs: Records, query: dict) -> str:
    """right / wrong-first / missed for a restatement; alarm / another / quiet for a near miss."""
    res = search.tried(recs.store.conn, query["q"])
    first = res.close[0].number if res.close else None
    if query["expect"] is None:
        return "alarm" if res.close else ("another" if res.another else "quiet")
    if first is None:
        return "missed"
    return "right" if first == query["expect"] else "wrong-first"


def run(path: Path, misses: bool = False, part: str = "") -> dict:
    """The figures over the file's workspaces, or over its ``study`` or ``held_out`` part alone."""
    spec = json.loads(path.read_text(encoding="utf-8"))
    names = set(spec[part]) if part else {ws["name"] for ws in spec["workspaces"]}
    hidden = set(spec.get("held_out", ()))  # (a held-out part's misses are not for tuning, whatever is asked)
    counts, wrong = Counter(), []
    for ws in (w for w in spec["workspaces"] if w["name"] in names):
        with tempfile.TemporaryDirectory() as tmp:
            recs = build(ws, Path(tmp))
            for q in ws["queries"]:
                verdict = judge(recs, q)
                counts[verdict] += 1
                if verdict not in ("right", "quiet", "another") and ws["name"] not in hidden:
                    wrong.append(f"{ws['name']} expect={q['expect']} {verdict}: {q['q']}")
            recs.close()
    same = counts["right"] + counts["wrong-first"] + counts["missed"]
    near = counts["alarm"] + counts["another"] + counts["quiet"]
    out = {"restatements": same, "right_first": counts["right"], "other_first": counts["wrong-first"],
           "not_tried": counts["missed"], "near_misses": near, "false_alarms": counts["alarm"],
           "another_way": counts["another"]}
    if misses:
        out["misses"] = wrong
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trials", type=Path, nargs="+")
    ap.add_argument("--misses", action="store_true", help="list the queries judged wrong (not of a held-out part)")
    ap.add_argument("--part", choices=("study", "held_out"), default="",
                    help="only the workspaces the file lists as studied, or as held out")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    for path in args.trials:
        f = run(path, args.misses, args.part)
        if args.json:
            print(json.dumps(f, indent=1))
            continue
        print(f"{path.name}{' ' + args.part if args.part else ''}: restatements answered 'tried' with the right attempt first "
              f"{f['right_first']}/{f['restatements']} ({100 * f['right_first'] / max(f['restatements'], 1):.0f} %), "
              f"another first {f['other_first']}, not answered 'tried' {f['not_tried']}; near misses answered "
              f"'tried' {f['false_alarms']}/{f['near_misses']}, 'tried another way' {f['another_way']}")
        for m in f.get("misses", []):
            print("  " + m)


if __name__ == "__main__":
    main()
