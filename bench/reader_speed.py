"""Reader speed on one big document: CPU seconds to read a 10,000-line DEBUG.md and a 10,000-line issue thread
(the own-words corpus's docs of that style, repeated with fresh authors and numbers) and a log of one try per line,
beside markdown-it-py's parse of the same text (the floor: the reader parses once and reads every unit).

    PYTHONPATH=. python bench/reader_speed.py [LINES] [--profile] [--import]

"read" is ``read_document`` in this process, the better of two, each with the caches keyed by a text emptied first
(a second read of the same document would find its sentences' answers there). ``--import`` adds what a user waits for:
``dbglog import FILE`` into a fresh workspace, in its own process (start-up, reading, redaction, the store and its
search index, the mirror file, the failure fingerprints), its CPU seconds from the child's rusage, the better of two.

The issue's bar: a 10,000-line doc imported in at most 1.5 s of CPU.
"""

import cProfile
import os
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from markdown_it import MarkdownIt

from dbglog.docreader.read import read_document

ROOT = Path(__file__).resolve().parent.parent
STYLES = ROOT / "tests" / "corpus" / "styles"


def _grow(paths: list[Path], lines: int, thread: bool) -> str:
    """Bodies of the given docs repeated (titles dropped, numbers and authors made unique) up to `lines` lines."""
    bodies = [p.read_text().split("\n", 1)[1] for p in paths]
    out = ["# A long running investigation", ""]
    k = 0
    while len(out) < lines:
        body = bodies[k % len(bodies)]
        if thread:
            body = body.replace("### ", f"### r{k}-", 1)
        out += body.replace("2025", str(2025 + k % 7)).split("\n")
        k += 1
    return "\n".join(out[:lines])


def _tries_log(lines: int) -> str:
    """A log of one try per line ("- halved the batch size on node 7: still OOM"), the shape where every line is an
    attempt: the costliest per line (each line's outcome is read), and the one a long-running DEBUG.md grows into."""
    import random

    rng = random.Random(2)
    acts = ["set NCCL_P2P_DISABLE=1", "raised the timeout to 2h", "pinned torch 2.3.1", "disabled cuda graphs",
            "ran with --enforce-eager", "halved the batch size", "switched to the XFORMERS backend",
            "rebuilt flash-attn from source", "reverted the driver to 535", "enabled NCCL_DEBUG=INFO"]
    results = ["still hangs at step 512", "works", "OOM at the second shard", "no change",
               "fixed the crash but 20% slower", "crashes with an illegal memory access", "passes 20/20 runs",
               "hangs after 3 hours"]
    out = ["# Tried log", ""]
    out += [f"- {rng.choice(acts)} on node {i % 64}: {rng.choice(results)}" for i in range(lines - 2)]
    return "\n".join(out)


def _forget_texts() -> None:
    """Empty the caches keyed by a text (the cues of a sentence, its outcome, its language): a second read of one
    document found every sentence's answers there and took half the time a user's first read takes. The caches of
    what a process builds once (compiled tables, the models) stay: a command pays for those at its start."""
    for name, mod in list(sys.modules.items()):
        if not name.startswith("dbglog."):
            continue
        for obj in vars(mod).values():
            info = getattr(obj, "cache_info", None)
            if callable(info) and info().maxsize not in (None, 1):
                obj.cache_clear()


def cpu(fn) -> float:
    _forget_texts()
    t = time.process_time()
    fn()
    return time.process_time() - t


def import_cpu(text: str) -> float:
    """CPU seconds of ``dbglog import`` of ``text`` into a fresh workspace, in a process of its own."""
    with tempfile.TemporaryDirectory() as tmp:
        doc = Path(tmp) / "big.md"
        doc.write_text(text, encoding="utf-8")
        ws = Path(tmp) / "ws"
        ws.mkdir()
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        # (as a user's install runs: its modules' bytecode and the regex cache written once and read after; with
        # PYTHONDONTWRITEBYTECODE set, as on these machines, every run compiled every module and pattern, 0.7 s)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        cmd = [sys.executable, "-m", "dbglog"]
        subprocess.run(cmd + ["init"], cwd=ws, env=env, check=True, capture_output=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd + ["import", str(doc)], cwd=ws, env=env, check=True, capture_output=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    lines = int(next((a for a in sys.argv[1:] if a.isdigit()), 10000))
    docs = {
        "protocol DEBUG.md": _grow(sorted(STYLES.glob("*protocol*.md")), lines, False),
        "issue thread": _grow(sorted(STYLES.glob("*thread*.md")), lines, True),
        "notes and postmortems": _grow(sorted(STYLES.glob("*postmortem*.md")) + sorted(STYLES.glob("*blog*.md")),
                                       lines, False),
        "a log of tries": _tries_log(lines),
    }
    md = MarkdownIt("commonmark").enable("table")
    whole = "--import" in sys.argv
    print(f"{'document':24} {'lines':>6} {'read CPU s':>11} {'markdown-it CPU s':>18}"
          + (f" {'import CPU s':>13}" if whole else ""))
    for name, text in docs.items():
        ours = min(cpu(lambda: read_document(text, "big.md")) for _ in range(2))
        peer = min(cpu(lambda: md.parse(text)) for _ in range(2))
        tail = f" {min(import_cpu(text) for _ in range(2)):>13.2f}" if whole else ""
        print(f"{name:24} {text.count(chr(10)) + 1:>6} {ours:>11.2f} {peer:>18.2f}{tail}")
        if "--profile" in sys.argv:
            pr = cProfile.Profile()
            pr.enable()
            read_document(text, "big.md")
            pr.disable()
            pstats.Stats(pr).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
