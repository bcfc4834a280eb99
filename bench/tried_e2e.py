"""`tried` end to end on real write-ups: import each labelled doc into a fresh workspace, then ask `tried` about
each labelled attempt the import found, in the labeller's words (the action, before the labeller's ": result"),
as an agent would ask about a try it is about to repeat.

    python bench/tried_e2e.py [--rules-only] DIR [DIR ...]   (labelled pools: NNN-slug.md beside NNN-slug.labels.json;
                                                             --rules-only: without the learned judge)

Printed, overall and per style: how often the first same-experiment answer is the attempt read from the
labelled lines, how often that attempt is among the answers (same experiment, or the same knob another way),
and how often `tried` gives no answer at all. The labeller's words are a paraphrase with context: they name
things the record may not (a model name, a layer count), and for a note in Chinese or Korean they are English.
So this is a hard test of recall; `bench/tried_eval.py` measures the judgement on own-words pairs, false
alarms included.
"""

from __future__ import annotations

import collections
import json
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import reader_eval  # noqa: E402

from dbglog.kb import importer, search  # noqa: E402
from dbglog.kb.records import Records  # noqa: E402
from dbglog.util.workspace import Workspace  # noqa: E402


def question(what: str) -> str:
    """The labeller's action, without the result it was written with ("ran X: it hangs" -> "ran X") and without
    the labeller's asides in parentheses ("(as suggested)", "(result not available)")."""
    parts = what.split(": ")
    if len(parts) > 1 and _ENTRY.fullmatch(parts[0].strip()):
        parts = parts[1:]  # "Attempt 7: enable LFS ...": the entry's number is no question
    action = re.split(r" -> (?!v?\d)", parts[0])[0]  # (not "NCCL 2.28.9 -> 2.30.7": that arrow is the change)
    return " ".join(re.sub(r"\s*\([^()]*\)", "", action).split())[:160] or action[:160]


# (an entry's name may open with what it belongs to: "forward try 1", "Train 3", "backward step 2")
_ENTRY = re.compile(r"(?:[\w-]+\s+){0,2}?(?:attempt|issue|bug|fix|problem|step|case|try|run|test|experiment|entry|train)\s*#?\d+[a-z]?"
                    r"(?:\s+(?:fix|bisect)(?:\s+[a-z])?)?", re.I)


def imported(path: Path) -> tuple[Records, dict]:
    """A fresh workspace holding one imported doc, and the source lines of each attempt the import read."""
    root = Path(tempfile.mkdtemp())
    (root / ".git").mkdir()
    recs = Records(Workspace(root / ".dbglog"), create=True)
    try:
        importer.import_files(recs, [str(path)])
        read = {(r[0], r[1]): json.loads(r[2] or "[]") for r in recs.store.conn.execute(
            "SELECT investigation_id, number, source_lines FROM attempts")}
    except BaseException:
        recs.close()
        raise
    return recs, read


def found(read: dict, labels: dict):
    """(labelled attempt, the attempts read from its lines) for each labelled attempt the import found (one it did
    not find, `tried` cannot)."""
    for a in labels["attempts"]:
        lo, hi = a["lines"]
        mine = {k for k, sl in read.items() if sl and sl[0] <= hi and sl[1] >= lo}
        if mine:
            yield a, mine


def ask_doc(path: Path, labels: dict, judge=True) -> list[tuple[bool, bool, bool]]:
    """(first answer is it, among the answers, no answer) for each labelled attempt the import found."""
    recs, read = imported(path)
    try:
        out = []
        for a, mine in found(read, labels):
            res = search.tried(recs.store.conn, question(a["what"]), judge=judge)
            answers = [(h.investigation, h.number) for h in res.close + res.another if h.kind == "attempt"]
            first = bool(res.close) and res.close[0].kind == "attempt" and \
                (res.close[0].investigation, res.close[0].number) in mine
            out.append((first, any(k in mine for k in answers), not (res.close or res.another)))
        return out
    finally:
        recs.close()


def main() -> int:
    pools = [a for a in sys.argv[1:] if a != "--rules-only"]
    judge = None if "--rules-only" in sys.argv else True
    if not pools:
        print(__doc__.split("\n\n")[1])
        return 2
    by_style: dict[str, list] = collections.defaultdict(list)
    for pool in pools:
        for did, _group, path, labels in reader_eval.pool_docs(Path(pool), "all"):
            by_style[reader_eval.style_of(did, labels)] += ask_doc(path, labels, judge)

    def line(name: str, rows: list) -> str:
        n = max(1, len(rows))
        first, among, none = (sum(r[k] for r in rows) for k in range(3))
        return (f"{name:32} {len(rows):5}  first {first:4} ({first / n:4.0%})  among {among:4} ({among / n:4.0%})"
                f"  no answer {none:4} ({none / n:4.0%})")

    print(line("all", [r for rows in by_style.values() for r in rows]))
    for style, rows in sorted(by_style.items()):
        print(line("  " + style, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
