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

The same trials measure an agent judging for itself: ``--mcp-dump DIR`` writes, per query, the idea and what
the MCP tool ``tried`` answered (no expectation in it), for an agent to read; ``--agent-answers FILE`` scores the
agent's answers (``{"w1_q3": attempt number or null, ...}``) as the built-in verdicts are scored, and says how
often the right attempt was among the tool's candidates at all.
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


def _queries(spec: dict):
    """Each query with its id (``w1_q3``: workspace w1, third query) and its workspace."""
    for ws in spec["workspaces"]:
        for k, q in enumerate(ws["queries"], 1):
            yield f"{ws['name']}_q{k}", ws, q


def mcp_dump(path: Path, out: Path) -> int:
    """Write DIR/<query id>.json: the idea and the MCP tool ``tried``'s answer in that workspace."""
    import os

    from dbglog import mcp_server

    spec = json.loads(path.read_text(encoding="utf-8"))
    out.mkdir(parents=True, exist_ok=True)
    here, n = os.getcwd(), 0
    for ws in spec["workspaces"]:
        with tempfile.TemporaryDirectory() as tmp:
            build(ws, Path(tmp)).close()
            os.chdir(tmp)  # (the MCP server reads the workspace of its directory)
            try:
                for qid, _, q in (x for x in _queries(spec) if x[1] is ws):
                    res = mcp_server.tried(q["q"]).model_dump()
                    (out / f"{qid}.json").write_text(json.dumps({"idea": q["q"], "tool_result": res},
                                                                ensure_ascii=False, indent=1), encoding="utf-8")
                    n += 1
            finally:
                os.chdir(here)
    return n


def score_answers(path: Path, answers: dict, dump: Path | None = None) -> dict:
    """An agent's answers against the file's expectations; ``dump``: the tool answers it read, for "among"."""
    spec = json.loads(path.read_text(encoding="utf-8"))
    c = Counter()
    for qid, _, q in _queries(spec):
        got = answers.get(qid, "absent")
        if q["expect"] is None:
            c["near"] += 1
            c["alarm"] += got not in (None, "absent")
            continue
        c["same"] += 1
        c["right"] += got == q["expect"]
        c["absent"] += got == "absent"
        if dump is not None and (dump / f"{qid}.json").exists():
            r = json.loads((dump / f"{qid}.json").read_text(encoding="utf-8"))["tool_result"]
            c["among"] += q["expect"] in {h.get("attempt") for k in ("close", "another_way", "mentioned", "others")
                                          for h in r[k] if h.get("kind") == "attempt"}
    return {"restatements": c["same"], "right": c["right"], "unanswered": c["absent"], "among": c["among"],
            "near_misses": c["near"], "false_alarms": c["alarm"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trials", type=Path, nargs="+")
    ap.add_argument("--misses", action="store_true", help="list the queries judged wrong (not of a held-out part)")
    ap.add_argument("--part", choices=("study", "held_out"), default="",
                    help="only the workspaces the file lists as studied, or as held out")
    ap.add_argument("--mcp-dump", type=Path, metavar="DIR", help="write each query's idea and MCP `tried` answer")
    ap.add_argument("--agent-answers", type=Path, metavar="FILE", help="score an agent's answers (JSON: query id "
                    "to attempt number or null); with --mcp-dump DIR, also how often the right one was shown")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.agent_answers:
        f = score_answers(args.trials[0], json.loads(args.agent_answers.read_text(encoding="utf-8")), args.mcp_dump)
        print(json.dumps(f) if args.json else
              f"{args.trials[0].name}, judged by an agent from the MCP answers: right attempt {f['right']}/"
              f"{f['restatements']} ({100 * f['right'] / max(f['restatements'], 1):.0f} %), unanswered "
              f"{f['unanswered']}, right one among the tool's candidates {f['among']}; near misses called tried "
              f"{f['false_alarms']}/{f['near_misses']}")
        return
    if args.mcp_dump:
        print(f"{sum(mcp_dump(p, args.mcp_dump) for p in args.trials)} queries written to {args.mcp_dump}")
        return
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
