"""Rebuild the labelled real docs whose text is a committed file, from the labels' own SOURCES lists.

The labels in bench/data/*/ are ours; the docs they label are other people's prose and stay out of this
repository. A machine that loses the directory the docs were gathered into loses every figure measured on
them. Most committed notes can be rebuilt exactly: SOURCES.txt names the repository, the commit and the path,
and a gathered doc is line 1 `<!-- source: URL -->` followed by the file as committed (LABELLING.md), so a
label's line numbers hold again. Threads pieced from an issue index (PARTIAL) cannot be rebuilt and are left out.

    python bench/recover_docs.py --repos            # the repositories to fetch (owner/name, one a line)
    python bench/recover_docs.py --out /work/pools   # rebuild from the fetched snapshots in /work/.mirror
    python bench/recover_docs.py --seen URL ... [--also /work/poolN/SOURCES.txt ...]   # gathered before?

Each rebuilt doc is checked against its labels (every labelled line range inside the file); a doc that fails
the check is not written. Output: OUT/<label dir>/<id>.md beside a copy of its labels, so `reader_eval.py
--pool OUT/<label dir> --set all` reads it as before.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

DATA = Path(__file__).with_name("data")
MIRROR = Path("/work/.mirror")
BLOB = re.compile(r"https://github\.com/([\w.-]+)/([\w.-]+)/blob/([0-9a-f]{40})/(\S+)")


def sources() -> list[tuple[Path, str, str, str, str, str]]:
    """(label dir, doc id, repo, commit, path, url) of every whole committed doc."""
    out = []
    for listing in sorted(DATA.glob("*/SOURCES.txt")):
        for line in listing.read_text(encoding="utf-8").splitlines():
            did, _, rest = line.partition(" | ")
            m = BLOB.search(rest)
            if not m or "PARTIAL" in rest or not (listing.parent / f"{did.strip()}.labels.json").exists():
                continue
            url = m.group(0).rstrip(").,")
            path = unquote(m.group(4).rstrip(").,").split("#")[0].split("?")[0])
            out.append((listing.parent, did.strip(), f"{m.group(1)}/{m.group(2)}", m.group(3), path, url))
    return out


def _keys(text: str) -> set[str]:
    """What names a gathered source, however its SOURCES line was written: a repository and a file path (any
    commit), an issue, discussion or pull request, or a code-search index file id."""
    keys = set()
    for m in re.finditer(r"github\.com/([\w.-]+)/([\w.-]+)/(?:blob|tree)/[0-9a-f]{7,40}/(\S+)", text):
        keys.add(f"{m.group(1)}/{m.group(2)}|{unquote(m.group(3)).rstrip(').,').split('#')[0]}".lower())
    for m in re.finditer(r"github\.com/([\w.-]+)/([\w.-]+)/(issues|discussions|pull)/(\d+)", text):
        keys.add(f"{m.group(1)}/{m.group(2)}/{m.group(3)}/{m.group(4)}".lower())
    # ("code-search index file id N", "code-index id N", "index:N": the index's number for a file it would not name)
    keys.update(f"id {m.group(1)}" for m in re.finditer(r"(?:\bid\s*|index:\s*)(\d{6,})", text))
    return keys


def seen(candidates: list[str], extra: list[Path] = ()) -> list[tuple[str, str]]:
    """(candidate, verdict) for sources a helper is about to gather: "gathered before" when a label set in
    bench/data (or an ``extra`` SOURCES.txt) already holds it: the search tools return the same documents to every
    session, and a document labelled twice is no held-out document."""
    listings = [*DATA.glob("*/SOURCES.txt"), *extra]
    old = "\n".join(p.read_text(encoding="utf-8") for p in listings if p.exists()).lower()
    out = []
    for c in candidates:
        keys = _keys(c)
        hit = any(_listed(k, old) for k in keys)
        out.append((c, "gathered before: choose another" if hit else "new" if keys else
                    "not understood: give a GitHub issue or blob URL, or 'code-search index file id N'"))
    return out


def _listed(key: str, old: str) -> bool:
    """Does the SOURCES text ``old`` hold the source ``key`` (``_keys``): an index id as a number of its own, a
    repository's file on one line with the repository (at whatever commit), an issue as written."""
    if key.startswith("id "):
        return re.search(rf"\b{key[3:]}\b", old) is not None
    if "|" in key:
        repo, path = key.split("|", 1)
        return any(repo in line and path in line for line in old.splitlines())
    return key in old


def _ranges(labels: dict) -> list[tuple[int, int]]:
    spans = [tuple(a["lines"]) for a in labels.get("attempts", []) if a.get("lines")]
    return spans + [tuple(r) for r in labels.get("next_step_lines", []) if r]


def rebuild(out: Path) -> tuple[int, list[str]]:
    made, problems = 0, []
    for folder, did, repo, commit, path, url in sources():
        git = MIRROR / repo.replace("/", "+") / "repo"
        if not git.is_dir():
            problems.append(f"{did}: {repo} not fetched")
            continue
        shown = subprocess.run(["git", "-C", str(git), "show", f"{commit}:{path}"], capture_output=True)
        if shown.returncode:
            problems.append(f"{did}: {commit[:8]}:{path} not in the snapshot")
            continue
        text = f"<!-- source: {url} -->\n" + shown.stdout.decode("utf-8", "replace")
        labels = json.loads((folder / f"{did}.labels.json").read_text(encoding="utf-8"))
        n = text.count("\n") + (not text.endswith("\n"))
        bad = [r for r in _ranges(labels) if len(r) != 2 or not 1 <= min(r) <= max(r) <= n]  # ([action, result]: either order)
        if bad:
            problems.append(f"{did}: labelled lines {bad[:3]} outside its {n} lines")
            continue
        dest = out / folder.name
        dest.mkdir(parents=True, exist_ok=True)
        (dest / f"{did}.md").write_text(text, encoding="utf-8")
        shutil.copy(folder / f"{did}.labels.json", dest / f"{did}.labels.json")
        made += 1
    return made, problems


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repos", action="store_true", help="print the repositories to fetch and stop")
    ap.add_argument("--out", type=Path, help="where the rebuilt docs go (outside the repository)")
    ap.add_argument("--seen", nargs="+", metavar="SOURCE", help="say of each source (a URL, or 'code-search index "
                    "file id N') whether a label set already holds it, and stop")
    ap.add_argument("--also", nargs="*", type=Path, default=[], metavar="SOURCES.txt",
                    help="with --seen: SOURCES lists not committed yet (this session's sets)")
    a = ap.parse_args()
    if a.seen:
        for c, verdict in seen(a.seen, a.also):
            print(f"{c}: {verdict}")
        return
    if a.repos:
        print("\n".join(sorted({s[2] for s in sources()})))
        return
    if not a.out:
        ap.error("give --out DIR or --repos")
    made, problems = rebuild(a.out)
    print(f"rebuilt {made} of {len(sources())} committed docs into {a.out}")
    for p in problems:
        print("  " + p, file=sys.stderr)


if __name__ == "__main__":
    main()
