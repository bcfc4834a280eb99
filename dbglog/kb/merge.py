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
import os
import re
from dataclasses import dataclass, field, fields

from dbglog.util.fsutil import atomic_write
from dbglog.core.model import Attempt, Investigation


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

    def keyed(self, what: str, base: list, ours: list, theirs: list, key, merge_one, name=repr) -> list:
        """Merge lists of records identified by ``key``: ours' order, theirs' additions appended (``name``: a key
        as a conflict names it)."""
        b = {key(x): x for x in base}
        o = {key(x): x for x in ours}
        t = {key(x): x for x in theirs}
        out = []
        for k, ox in o.items():
            if k in t:
                out.append(merge_one(b.get(k), ox, t[k]))
            elif k in b:  # theirs deleted it
                if ox != b[k]:
                    self.conflicts.append(f"{what} {name(k)} edited here, deleted there")
                    out.append(ox)
            else:
                out.append(ox)
        for k, tx in t.items():
            if k in o:
                continue
            if k in b:  # we deleted it
                if tx != b[k]:
                    self.conflicts.append(f"{what} {name(k)} deleted here, edited there")
                    out.append(tx)
            else:
                out.append(tx)
        return out

    def strings(self, what: str, base: list[str], ours: list[str], theirs: list[str]) -> list[str]:
        return self.keyed(what, base, ours, theirs, key=lambda s: s, merge_one=lambda b, o, t: o)



def merge(base: Investigation | None, ours: Investigation, theirs: Investigation) -> MergeResult:
    m = _Merger()
    base_missing = base is None
    base = base or Investigation(id=ours.id, title=ours.title)
    out = copy.deepcopy(ours)
    for name in ("id", "title", "status", "symptom", "environment", "root_cause", "created", "labels", "source"):
        setattr(out, name, m.value(name, getattr(base, name), getattr(ours, name), getattr(theirs, name)))
    out.updated = max(ours.updated, theirs.updated)
    out.tags = m.strings("tag", base.tags, ours.tags, theirs.tags)
    out.related_files = m.strings("related file", base.related_files, ours.related_files, theirs.related_files)

    # Attempts are only ever appended, so attempt N of the base is the same record on both sides -- while its
    # creation stamp is the base's: a number `attempt delete` freed and a new attempt took is another record.
    # A number the base does not have was added on a branch: the same number added on both sides
    # is two different attempts (unless identical), and theirs moves after the last. A file both sides added
    # (no base: unrelated histories) holds the same attempts where number and stamp agree.
    base_numbers = {a.number for a in base.attempts}

    def akey(a: Attempt):
        if a.number in base_numbers or (base_missing and a.created):
            return a.number, a.created
        return a.number, repr(a)

    attempts = m.keyed("attempt", base.attempts, ours.attempts, theirs.attempts, akey,
                       lambda b, o, t: m.record(f"attempt {o.number}", b, o, t, skip=("number",)),
                       name=lambda k: str(k[0]))
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
    from dbglog.core.markdown import parse

    b = parse(base, "base") if base and base.strip() else None
    return merge(b, parse(ours, "ours"), parse(theirs, "theirs"))



# The driver git runs for `logs/*.md`. Not a bare interpreter path (a rebuilt venv or another
# machine would make git fail to run it, which git reports as a conflict while leaving only our
# side, no markers: the other side's attempts silently lost). Instead a shell line that tries the
# interpreter that registered it, then `dbglog` on PATH, and if neither runs (or one fails without
# leaving markers) falls back to git's own text merge: a conflict WITH markers, which dbglog
# refuses to read until it is resolved. ``DRIVER_MARK`` tells this driver from older ones.
DRIVER_MARK = "dbglog-merge-v2"
_DRIVER_SCRIPT = (
    f": {DRIVER_MARK}; "
    'if "$0" -c "import dbglog" >/dev/null 2>&1; then "$0" -m dbglog merge-driver "$@"; '
    'elif command -v dbglog >/dev/null 2>&1; then dbglog merge-driver "$@"; '
    'else echo "dbglog: the merge driver cannot run ($0 is gone and there is no dbglog on PATH): '
    'text merge of $4 instead" >&2; false; fi; '
    'rc=$?; if [ $rc -ne 0 ] && ! grep -q "^<<<<<<< " "$2"; then '
    'git merge-file -L ours -L base -L theirs "$2" "$1" "$3"; if [ $? -eq 0 ]; then rc=0; else rc=1; fi; fi; '
    "exit $rc"
)


def driver_command(python: str | None = None) -> str:
    """The `merge.dbglog.driver` line (git fills in %O %A %B %P)."""
    import shlex
    import sys

    return f"sh -c '{_DRIVER_SCRIPT}' {shlex.quote(python or sys.executable)} %O %A %B %P"


def git_dirs(start) -> tuple | None:
    """(work tree top, git dir, common git dir) from the files alone (no subprocess); None outside git."""
    from pathlib import Path

    start = Path(start).resolve()
    for top in (start, *start.parents):
        dot = top / ".git"
        if dot.is_dir():
            gitdir = dot
            break
        if dot.is_file():
            try:
                gitdir = Path(dot.read_text().split(":", 1)[1].strip())
            except (OSError, IndexError, UnicodeDecodeError):
                return None
            if not gitdir.is_absolute():
                gitdir = (top / gitdir).resolve()
            break
    else:
        return None
    common = gitdir
    try:
        cd = gitdir / "commondir"
        if cd.is_file():
            common = (gitdir / cd.read_text().strip()).resolve()
    except OSError:
        pass
    return top, gitdir, common


def _attributes_line(top, logs_dir) -> str | None:
    from pathlib import Path

    try:
        rel = Path(logs_dir).resolve().relative_to(top).as_posix()
    except ValueError:
        return None
    return f"/{rel}/*.md merge=dbglog"


def _exclude_lines(top, dbglog_dir) -> list[str]:
    """`.git/info/exclude` lines that keep the workspace's local files out of `git status`
    (the database, runs, caches) and let config.toml and templates/ be committed."""
    from pathlib import Path

    try:
        rel = Path(dbglog_dir).resolve().relative_to(top).as_posix()
    except ValueError:
        return []
    return [f"/{rel}/*", f"!/{rel}/config.toml", f"!/{rel}/templates/"]


def is_configured(root, logs_dir, dbglog_dir=None) -> bool | None:
    """Is this clone set up (attributes line, this driver, exclude lines)? None outside git or when
    `logs/` is not in the work tree. Reads three small files: cheap enough for every command."""
    dirs = git_dirs(root)
    if dirs is None:
        return None
    top, _, common = dirs
    line = _attributes_line(top, logs_dir)
    if line is None:
        return None
    try:
        attrs = (common / "info" / "attributes").read_text().splitlines() \
            if (common / "info" / "attributes").exists() else []
        config = (common / "config").read_text()
        exclude = (common / "info" / "exclude").read_text().splitlines() \
            if (common / "info" / "exclude").exists() else []
    except (OSError, UnicodeDecodeError):
        return False
    want_exclude = _exclude_lines(top, dbglog_dir) if dbglog_dir is not None else []
    if not (line in attrs and DRIVER_MARK in config and all(x in exclude for x in want_exclude)):
        return False
    # The interpreter it names first is gone (a rebuilt venv): point it at this one.
    m = re.search(r"' ('[^']+'|\S+) %O %A %B %P", config)
    return m is None or os.path.exists(m.group(1).strip("'"))


def ensure_git(root, logs_dir, dbglog_dir=None) -> bool:
    """Register the merge driver in this clone unless it already is (a fresh clone, a clone set up
    by an older dbglog): whatever files the clone came with."""
    state = is_configured(root, logs_dir, dbglog_dir)
    if state is None or state:
        return bool(state)
    return configure_git(root, logs_dir, dbglog_dir)


def configure_git(root, logs_dir, dbglog_dir=None, python: str | None = None) -> bool:
    """Make git merge `logs/*.md` with dbglog in this clone (local only: `.git/info/attributes`
    and the repository's own config, so nothing appears in the working tree), and keep
    ``dbglog_dir``'s local files out of `git status` (`.git/info/exclude`). False outside git."""
    import subprocess
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
    line = _attributes_line(top, logs_dir)
    if line is None:
        return False
    try:
        _append_lines(common / "info" / "attributes", [line])
        if dbglog_dir is not None:
            _append_lines(common / "info" / "exclude", _exclude_lines(top, dbglog_dir))
        git("config", "merge.dbglog.name", "dbglog: merge investigations record by record")
        git("config", "merge.dbglog.driver", driver_command(python))
    except (OSError, subprocess.CalledProcessError):
        return False
    return True


def _append_lines(path, lines: list[str]) -> None:
    text = path.read_text() if path.exists() else ""
    missing = [ln for ln in lines if ln not in text.splitlines()]
    if missing:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a") as f:
            f.write(("\n" if text and not text.endswith("\n") else "") + "\n".join(missing) + "\n")


def run_driver(base: str, ours: str, theirs: str, path: str = "") -> tuple[int, str]:
    """Git's merge-driver contract: merge into ``ours`` in place; 0 when clean, else non-zero with
    git's own text merge (conflict markers) left in ``ours``. Returns (exit code, message)."""
    import subprocess
    from pathlib import Path

    from dbglog.kb import mirror
    from dbglog.util.errors import DbglogError
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
