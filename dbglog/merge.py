"""Three-way merge of one investigation, record by record: dbglog's git merge driver.

Two teammates who add attempts to the same investigation on two branches both append an
``### Attempt N`` block at the same place, so git's line merge always conflicts. Merging the
*records* instead is almost always clean:

* header fields, each attempt's fields, difference rows and next steps merge field by field with
  the usual 3-way rule (a side that did not change a value takes the other side's change);
* attempts are matched by number *and* creation stamp (or title), so "both added attempt 6" is
  two attempts: theirs is renumbered after the last one, and next-step links to it follow;
* rows, steps, tags, files and free sections are matched by factor / text / value / heading and
  keep ours' order with theirs' additions appended;
* a value changed differently on both sides is a real conflict: the caller falls back to git's
  text merge, so the user sees ordinary conflict markers and nothing is decided silently.

Pure functions over ``model`` objects; ``merge_files`` adds the markdown parse/render around them.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, fields

from dbglog.model import Attempt, Investigation


@dataclass
class MergeResult:
    inv: Investigation
    conflicts: list[str] = field(default_factory=list)
    renumbered: dict[int, int] = field(default_factory=dict)  # theirs' attempt number -> merged number


class _Merger:
    def __init__(self) -> None:
        self.conflicts: list[str] = []

    def value(self, what: str, base, ours, theirs):
        if ours == theirs:
            return ours
        if ours == base:
            return theirs
        if theirs == base:
            return ours
        self.conflicts.append(what)
        return ours

    def record(self, what: str, base, ours, theirs, skip: tuple[str, ...] = ()):
        """Field-wise 3-way merge of two dataclass records (``base`` may be None: both added it)."""
        out = copy.deepcopy(ours)
        for f in fields(ours):
            if f.name in skip:
                continue
            b = getattr(base, f.name) if base is not None else None
            o, t = getattr(ours, f.name), getattr(theirs, f.name)
            if base is None and o != t:
                self.conflicts.append(f"{what}: {f.name}")
                continue
            setattr(out, f.name, self.value(f"{what}: {f.name}", b, o, t))
        return out

    def keyed(self, what: str, base: list, ours: list, theirs: list, key, merge_one) -> list:
        """Merge lists of records identified by ``key``: ours' order, theirs' additions appended."""
        b = {key(x): x for x in base}
        o = {key(x): x for x in ours}
        t = {key(x): x for x in theirs}
        out = []
        for k, ox in o.items():
            if k in t:
                out.append(merge_one(b.get(k), ox, t[k]))
            elif k in b:  # theirs deleted it
                if ox != b[k]:
                    self.conflicts.append(f"{what} {k!r} edited here, deleted there")
                    out.append(ox)
            else:
                out.append(ox)
        for k, tx in t.items():
            if k in o:
                continue
            if k in b:  # we deleted it
                if tx != b[k]:
                    self.conflicts.append(f"{what} {k!r} deleted here, edited there")
                    out.append(tx)
            else:
                out.append(tx)
        return out

    def strings(self, what: str, base: list[str], ours: list[str], theirs: list[str]) -> list[str]:
        return self.keyed(what, base, ours, theirs, key=lambda s: s, merge_one=lambda b, o, t: o)



def merge(base: Investigation | None, ours: Investigation, theirs: Investigation) -> MergeResult:
    m = _Merger()
    base = base or Investigation(id=ours.id, title=ours.title)
    out = copy.deepcopy(ours)
    for name in ("id", "title", "status", "symptom", "environment", "root_cause", "created", "labels", "source"):
        setattr(out, name, m.value(name, getattr(base, name), getattr(ours, name), getattr(theirs, name)))
    out.updated = max(ours.updated, theirs.updated)
    out.tags = m.strings("tag", base.tags, ours.tags, theirs.tags)
    out.related_files = m.strings("related file", base.related_files, ours.related_files, theirs.related_files)

    # Attempts are only ever appended, so attempt N of the base is the same record on both sides.
    # A number the base does not have was added on a branch: the same number added on both sides
    # is two different attempts (unless identical), and theirs moves after the last.
    base_numbers = {a.number for a in base.attempts}

    def akey(a: Attempt):
        return a.number if a.number in base_numbers else (a.number, repr(a))

    attempts = m.keyed("attempt", base.attempts, ours.attempts, theirs.attempts, akey,
                       lambda b, o, t: m.record(f"attempt {o.number}", b, o, t, skip=("number",)))
    renumbered: dict[int, int] = {}
    theirs_keys = {akey(a) for a in theirs.attempts} - {akey(a) for a in ours.attempts}
    theirs_new = sorted((a for a in attempts if akey(a) in theirs_keys), key=lambda a: a.number)
    ours_numbers = {a.number for a in attempts if akey(a) not in theirs_keys}
    if any(a.number in ours_numbers for a in theirs_new):
        # Their new attempts move, as a block and in their order, after everything ours has.
        start = max(ours_numbers | base_numbers) + 1
        for i, a in enumerate(theirs_new):
            renumbered[a.number] = start + i
            a.number = start + i
    out.attempts = sorted(attempts, key=lambda a: a.number)

    theirs_steps = copy.deepcopy(theirs.next_steps)
    for s in theirs_steps:  # links to renumbered attempts follow them
        if s.attempt in renumbered:
            s.attempt = renumbered[s.attempt]
    out.next_steps = m.keyed("next step", base.next_steps, ours.next_steps, theirs_steps,
                             key=lambda s: s.text.casefold(),
                             merge_one=lambda b, o, t: m.record(f"next step {o.text!r}", b, o, t, skip=("position",)))
    for i, s in enumerate(out.next_steps, 1):
        s.position = i
    out.differences = m.keyed("difference", base.differences, ours.differences, theirs.differences,
                              key=lambda d: d.factor.casefold(),
                              merge_one=lambda b, o, t: m.record(f"difference {o.factor!r}", b, o, t,
                                                                 skip=("position",)))
    for i, d in enumerate(out.differences, 1):
        d.position = i
    out.sections = m.keyed("section", base.sections, ours.sections, theirs.sections, key=lambda s: s.heading,
                           merge_one=lambda b, o, t: m.record(f"section {o.heading!r}", b, o, t))
    return MergeResult(out, m.conflicts, renumbered)


def merge_texts(base: str | None, ours: str, theirs: str) -> MergeResult:
    """Parse the three versions of a mirror file and merge them (ParseError if one is not ours)."""
    from dbglog import mirror

    b = mirror.parse(base, "base") if base and base.strip() else None
    return merge(b, mirror.parse(ours, "ours"), mirror.parse(theirs, "theirs"))



def configure_git(root, logs_dir) -> bool:
    """Make git merge `logs/*.md` with dbglog in this clone (local only: `.git/info/attributes`
    and the repository's own config, so nothing appears in the working tree). False outside git."""
    import shlex
    import subprocess
    import sys
    from pathlib import Path

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True,
                              stdin=subprocess.DEVNULL).stdout.strip()

    try:
        top = Path(git("rev-parse", "--show-toplevel")).resolve()
        common = Path(git("rev-parse", "--git-common-dir"))
    except (OSError, subprocess.CalledProcessError):
        return False
    common = common if common.is_absolute() else (Path(root) / common).resolve()
    try:
        rel = Path(logs_dir).resolve().relative_to(top).as_posix()
    except ValueError:
        return False
    line = f"/{rel}/*.md merge=dbglog"
    attributes = common / "info" / "attributes"
    try:
        existing = attributes.read_text().splitlines() if attributes.exists() else []
        if line not in existing:
            attributes.parent.mkdir(parents=True, exist_ok=True)
            with open(attributes, "a") as f:
                f.write(("\n" if existing and existing[-1] else "") + line + "\n")
        driver = f"{shlex.quote(sys.executable)} -m dbglog merge-driver %O %A %B %P"
        git("config", "merge.dbglog.name", "dbglog: merge investigations record by record")
        git("config", "merge.dbglog.driver", driver)
    except (OSError, subprocess.CalledProcessError):
        return False
    return True


def run_driver(base: str, ours: str, theirs: str, path: str = "") -> tuple[int, str]:
    """Git's merge-driver contract: merge into ``ours`` in place; 0 when clean, else non-zero with
    git's own text merge (conflict markers) left in ``ours``. Returns (exit code, message)."""
    import subprocess
    from pathlib import Path

    from dbglog import mirror
    from dbglog.errors import DbglogError
    from dbglog.records import atomic_write

    def read(p):
        try:
            return Path(p).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    texts = [read(p) for p in (base, ours, theirs)]
    result = None
    if texts[1] is not None and texts[2] is not None:
        try:
            result = merge_texts(texts[0], texts[1], texts[2])
        except DbglogError:
            result = None
    name = path or ours
    if result is not None and not result.conflicts:
        atomic_write(Path(ours), mirror.render(result.inv).encode("utf-8"))
        moved = ", ".join(f"{a}->{b}" for a, b in sorted(result.renumbered.items()))
        return 0, f"merged {name}: their new attempts renumbered {moved}" if moved else ""
    why = "; ".join(result.conflicts[:3]) if result is not None else "not a canonical dbglog file"
    r = subprocess.run(["git", "merge-file", "-L", "ours", "-L", "base", "-L", "theirs", ours, base, theirs])
    return (1 if r.returncode != 0 else 0), f"{name}: cannot merge record by record ({why}); text merge instead"
