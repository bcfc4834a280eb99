"""The record-keeping operations: each is one transaction plus a re-render of the mirror file.

Order inside every write (all under ``BEGIN IMMEDIATE``):
sync edits from `logs/` -> change rows -> render -> atomic file write -> record baseline -> COMMIT.
A kill before the rename leaves the old file and rolls the database back; a kill between the
rename and the commit leaves a file that is ahead of the database, which the next command's
sync imports (its hash differs from the baseline and the database revision did not move).
Either way nothing is torn and nothing is lost.
"""

from __future__ import annotations

import json
import os
import re
from contextlib import contextmanager
from pathlib import Path

from dbglog.core import model
from dbglog.kb import sync
from dbglog.util import jsonsafe, redact
from dbglog.util.errors import DbglogError
from dbglog.util.fsutil import atomic_write
from dbglog.core.model import Attempt, Difference, Investigation, NextStep
from dbglog.kb.store import Store
from dbglog.util.workspace import Workspace

CURRENT = "current"


class JournaledStore(Store):
    """The store, whose write transaction also takes back the mirror files written inside it.

    A command that fails after it wrote `logs/<id>.md` but before (or while) its transaction
    committed — a full disk refusing the commit, an error, Ctrl-C — leaves `logs/` as it found it:
    the replaced file comes back (a hard link to it is kept until the commit, so putting it back
    is a rename that needs no free space), a new file is removed."""

    def __init__(self, path):
        super().__init__(path)
        self._undo: dict[Path, Path | bytes | None] | None = None
        self._seq = 0
        self.runs_added: list[str] = []  # run ids inserted by the open transaction
        self.after_runs = None  # called with them once that transaction committed (the size cap)

    @contextmanager
    def write(self):
        if self.conn.in_transaction:
            with super().write() as c:
                yield c
            return
        self._undo = {}
        ok = False
        try:
            with super().write() as c:
                yield c
            ok = True
        finally:
            undo, self._undo = self._undo, None
            if not ok:
                try:
                    if self.conn.in_transaction:  # a COMMIT that failed leaves it open
                        self.conn.execute("ROLLBACK")
                except Exception:
                    pass
                _restore(undo)
            else:
                for saved in undo.values():
                    if isinstance(saved, Path):
                        try:
                            os.unlink(saved)
                        except OSError:
                            pass
            added, self.runs_added = self.runs_added, []
            if ok and added and self.after_runs is not None:
                try:
                    self.after_runs(added)
                except DbglogError as e:  # (a bad [runs] max_size: said, or the cap is off for ever unseen)
                    import sys

                    print(f"dbglog: warning: {e}; .dbglog/runs/ was not kept under its size cap", file=sys.stderr)
                except Exception:  # upkeep never fails the command that recorded the runs
                    pass

    def insert_run(self, result: dict, *args, **kwargs) -> None:
        """Runs are stored cleaned (captured lines without control characters, secrets redacted),
        whoever records them (``dbglog run``, a bisection's trials): once, here, unless the record
        already went through ``redact.clean_run`` (``record_runs``)."""
        result = redact.clean_run(result)
        super().insert_run(result, *args, **kwargs)
        self.runs_added.append(result.get("id"))

    def journal(self, path: Path) -> None:
        """Remember ``path`` as it is now, before this transaction writes it."""
        if self._undo is None or path in self._undo:
            return
        if not os.path.lexists(path):
            self._undo[path] = None
            return
        self._seq += 1
        keep = path.with_name(f".{path.name}.{os.getpid()}-{self._seq}.undo.tmp")
        try:
            os.link(path, keep)
            self._undo[path] = keep
        except OSError:
            self._undo[path] = path.read_bytes()


def _restore(undo: dict) -> None:
    for path, saved in undo.items():
        try:
            if saved is None:
                os.unlink(path)
            elif isinstance(saved, Path):
                if os.path.lexists(path) and os.path.samefile(saved, path):
                    os.unlink(saved)  # never replaced (rename() of two links to one file does nothing)
                else:
                    os.replace(saved, path)
            else:
                atomic_write(path, saved)
        except OSError:
            pass


class Records:
    """An open workspace: store + mirror. One per command."""

    def __init__(self, ws: Workspace, *, create: bool = False):
        if not ws.exists:
            # A fresh clone of a repository whose logs/ holds investigations is a workspace too:
            # `.dbglog/` is local (never committed), so the first command sets it up.
            if not create and not _holds_investigations(ws.logs_dir):
                raise DbglogError(
                    f"no dbglog workspace here (looked for .dbglog/ up from {Path.cwd()}); run `dbglog init`"
                )
            private = not os.access(ws.root, os.W_OK | os.X_OK) and _holds_investigations(ws.logs_dir)
            if not private:
                ws.create()
        else:
            private = False
        self.ws = ws
        self.store = _from_logs(ws) if private else JournaledStore(ws.db_path)
        self.last_sync: sync.SyncReport | None = None
        self.unsynced: list[str] = []  # read-only: logs/ files the database could not take in
        self.fresh_stamp: str | None = None  # logs/ stamp at the last check that found it in order (sync.unchanged_since)
        if self.store.readonly:  # (a reviewer's checkout, a CI artifact: read, change nothing, git config included)
            self.restored_files = []
            if self.store.q("SELECT 1 FROM toggle_journal LIMIT 1").fetchone() is not None:
                import sys

                print("dbglog: warning: a killed bisection left source files edited in place; they are put "
                      "back by the next dbglog command in a writable workspace", file=sys.stderr)
        else:
            self.restored_files = self._restore_bisect_edits()
            self._ensure_git()
        self.store.after_runs = self._cap_runs

    def _ensure_git(self) -> None:
        """The first command in a clone (fresh, or set up by an older dbglog) registers git's merge
        driver for `logs/` and the excludes for `.dbglog/`, whatever files the clone came with.
        Three small file reads when it is already done."""
        from dbglog.kb import merge

        try:
            if merge.is_configured(self.ws.root, self.ws.logs_dir, self.ws.dir) is False:
                merge.configure_git(self.ws.root, self.ws.logs_dir, self.ws.dir)
                self.ws.upgrade_gitignore()
        except Exception:  # never a reason to refuse a command
            pass

    def close(self) -> None:
        self.store.close()

    def _restore_bisect_edits(self) -> list[str]:
        # Source files a toggle bisection edited in place and whose driver died (kill -9):
        # put the original bytes back before doing anything else. One SELECT when there are none.
        if self.store.q("SELECT 1 FROM toggle_journal LIMIT 1").fetchone() is None:
            return []
        from dbglog.bisect.journal import restore_orphans

        import sys

        restored = restore_orphans(self.store)
        for p, saved in restored:
            print(f"dbglog: restored {p} (edited in place by a bisection that was killed)" if saved is None else
                  f"dbglog: left {p} as it is: a bisection that was killed had edited it, and it was edited again "
                  f"since; its original is in {saved}", file=sys.stderr)
        return [p for p, _saved in restored]

    def _temp_files(self) -> list[str]:
        try:
            return [e.path for e in os.scandir(self.ws.logs_dir)
                    if e.name.startswith(".") and e.name.endswith(".tmp")]
        except FileNotFoundError:
            return []

    def _clean_temp_files(self) -> None:
        """Remove temp files of a writer killed before its rename (the real file is intact).

        Only call this holding the write lock: every mirror write happens under it, so then no
        temp file can belong to a live writer."""
        for path in self._temp_files():
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass

    # --- sync -----------------------------------------------------------------------

    def sync(self, resolve: set[str] | None = None, force: bool = False, prune: bool = False,
             keep_newer: bool = False) -> sync.SyncReport:
        """Import outside edits. Cheap when nothing changed (a stat pass, no transaction).

        A moved git HEAD (pull, checkout, rebase) makes it hash every file, not just the ones
        whose size or mtime changed.
        """
        sync.refuse_unmerged(self.store, self.ws)  # a logs/ file git could not merge: nothing is trusted
        if self.store.readonly:
            if resolve or force or prune:
                self.store.refuse_if_readonly()
            self.unsynced = self._differs_from_baseline()
            self.last_sync = sync.SyncReport()
            return self.last_sync
        moved, head = sync.head_moved(self.store, self.ws)
        stamp, info = sync.dir_stamp(self.ws), {}  # (taken first: a change during the check makes it differ)
        if not force and not resolve and not prune and not keep_newer and not moved \
                and not sync.is_stale(self.store, self.ws, info):
            if info["temp"]:  # (a writer's temp file seen by the check's own listing)
                with self.store.write():
                    self._clean_temp_files()
            self.last_sync = sync.SyncReport(links=info["links"])
            self.fresh_stamp = stamp
            return self.last_sync
        with self.store.write():
            self._clean_temp_files()
            self.last_sync = sync.sync(self.store, self.ws, resolve=resolve, rehash=moved or force, prune=prune,
                                       keep_newer=keep_newer)
            if head is not None:
                self.store.set_meta(sync.HEAD_KEY, head)
        return self.last_sync

    def _differs_from_baseline(self) -> list[str]:
        """The mirror files whose content is not what the database last wrote or read, by hash (a
        copied or checked-out tree has new mtimes but the same bytes); a stat pass when none changed."""
        if not sync.is_stale(self.store, self.ws):
            return []
        base = {rel: row["sha256"] for rel, row in self.store.mirror_rows().items()}
        files = sync.mirror_files(self.ws)
        out = [rel for rel in base if rel not in files]
        for rel in files:
            try:
                data = (self.ws.root / rel).read_bytes()
            except OSError:
                continue
            if (base[rel] != sync.sha256(data)) if rel in base else sync.looks_like_ours(data):
                out.append(rel)
        return sorted(out)

    @contextmanager
    def change(self, inv_id: str | None):
        """Transaction for one change to ``inv_id``; the mirror is re-rendered before commit.

        The record methods clean what they are given (``redact.clean``: no control characters,
        no secrets) before it gets here, so the re-render does not scan the whole file again."""
        with self.store.write():
            # The command's own check found logs/ in order; if nothing was added, removed or renamed
            # since and the file this write replaces is untouched, there is nothing to take in first
            # (issue 26: the second pass over every file cost more than the first).
            stamp = self.fresh_stamp
            if inv_id is not None:
                sync.spoil_if_edited(self.store, self.ws, self.path_for(inv_id))
            if inv_id is None or not sync.unchanged_since(self.store, self.ws, stamp, self.path_for(inv_id)):
                stamp = None
                self._clean_temp_files()
                sync.sync(self.store, self.ws)
            yield
            if inv_id is not None:
                self.store.touch(inv_id, model.now_iso())
                self.publish(inv_id, scan=False)
        # our own rename (and the journal's undo link, gone at the commit) moved the directory's stamp:
        # still in order, unless it had moved before
        self.fresh_stamp = sync.dir_stamp(self.ws) if stamp is not None else None
        if stamp is not None:
            sync.after_own_write(self.store, self.ws, stamp, self.fresh_stamp)

    def path_for(self, inv_id: str) -> str:
        row = self.store.mirror_for(inv_id)
        return row["path"] if row else f"logs/{inv_id}.md"

    def publish(self, inv_id: str, scan: bool = True) -> Path:
        """Re-render ``logs/<id>.md``. ``scan``: make sure first that nothing stored for it holds a
        control character or a secret (text that did not come through a record method: an import,
        an old database), cleaning the stored investigation when it does."""
        from dbglog.kb import mirror  # (commands that only read never render: see bench/agent_bench.py)

        inv = self.store.load(inv_id)
        text = mirror.render(inv, self.ws.templates_dir, self.ws.dir / "cache")
        if scan and redact.clean(text) != text and redact.clean_record(inv):
            self.store.replace_investigation(inv)
            text = mirror.render(inv, self.ws.templates_dir, self.ws.dir / "cache")
        mirror.check_reads_back(inv, text, self.ws.templates_dir)  # (a user template's output)
        data = text.encode("utf-8")
        rel = self.path_for(inv_id)
        path = self.ws.root / rel
        if isinstance(self.store, JournaledStore):
            self.store.journal(path)
        st = atomic_write(path, data)
        self.store.set_mirror(rel, inv_id, st.st_size, st.st_mtime_ns, sync.sha256(data), self.store.rev(inv_id))
        sync.note_written(rel)
        return path

    # --- selection ------------------------------------------------------------------

    def resolve(self, ref: str | None) -> str:
        """An investigation id from an id, a unique id prefix, title words, the id's tail, or the current pointer."""
        if ref is None or ref == "":
            cur = self.store.get_meta(CURRENT)
            if cur and self.store.exists(cur):
                return cur
            raise DbglogError("no current investigation: pass an ID or run `dbglog use ID` (see `dbglog list`)")
        if self.store.exists(ref):
            return ref
        rows = self.store.title_rows()
        by_prefix = [i for i, _ in rows if i.startswith(ref)]
        if len(by_prefix) == 1:
            return by_prefix[0]
        if not by_prefix:
            words = re.findall(r"\w+", ref.casefold())
            if words:
                by_prefix = [i for i, t in rows
                             if all(any(tw.startswith(w) for tw in re.findall(r"\w+", t.casefold())) for w in words)]
            if len(by_prefix) == 1:
                return by_prefix[0]
        if not by_prefix and re.fullmatch(r"[a-z0-9]{3,8}", ref):
            # the id's own tail ("k5uw" of 20261202-suite-a-live-bisection-driver-read-as-k5uw), as people copy it
            by_prefix = [i for i, _ in rows if i.endswith("-" + ref)]
            if len(by_prefix) == 1:
                return by_prefix[0]
        if not by_prefix:
            raise DbglogError(f"unknown investigation {ref!r} (see `dbglog list`)")
        shown = ", ".join(sorted(by_prefix)[:5]) + (" ..." if len(by_prefix) > 5 else "")
        raise DbglogError(f"{ref!r} matches {len(by_prefix)} investigations ({shown}); give more of the id")

    # --- investigations -------------------------------------------------------------

    def new(self, title: str, *, symptom: str = "", files=(), tags=(), environment: str = "") -> Investigation:
        title, symptom, environment = _clean(title, symptom, environment)
        files, tags = _clean(*files), _clean(*tags)
        title = model.check_title(title)
        tags = [model.check_cell(t, "tag") for t in tags if t.strip()]
        now = model.now_iso()
        inv = Investigation(id=model.new_id(title), title=title, symptom=symptom.strip(),
                            environment=environment.strip(), related_files=[f.strip() for f in files if f.strip()],
                            tags=tags, created=now, updated=now)
        with self.store.write():
            sync.sync(self.store, self.ws)
            while self.store.exists(inv.id):
                inv.id = model.new_id(title)
            self.store.insert_investigation(inv)
            self.store.set_meta(CURRENT, inv.id)
            self.publish(inv.id, scan=False)
        return self.store.load(inv.id)

    def use(self, ref: str) -> str:
        if ref is None or not ref.strip():  # (resolve() reads an empty reference as "the current one")
            raise DbglogError("`use` needs an investigation: an id, an id prefix or title words (see `dbglog list`)")
        inv_id = self.resolve(ref)
        with self.store.write():
            self.store.set_meta(CURRENT, inv_id)
        return inv_id

    def current(self) -> str | None:
        return self.store.get_meta(CURRENT)

    def set_status(self, inv_id: str, status: str, root_cause: str | None = None) -> Investigation:
        status = model.check_choice(status, model.STATUSES, "status")
        with self.change(inv_id):
            fields = {"status": status}
            if root_cause is not None:
                fields["root_cause"] = redact.clean(root_cause).strip()
            self.store.update_fields(inv_id, **fields)
        return self.store.load(inv_id)

    def edit(self, inv_id: str, **fields) -> Investigation:
        fields = {k: redact.clean_obj(v) for k, v in fields.items() if v is not None}
        if "title" in fields:
            fields["title"] = model.check_title(fields["title"])
        with self.change(inv_id):
            if fields:
                self.store.update_fields(inv_id, **fields)
        return self.store.load(inv_id)

    # --- attempts -------------------------------------------------------------------

    def add_attempt(self, inv_id: str, *, title: str = "", hypothesis: str = "", did: str = "",
                    result: str = "", conclusion: str = "", outcome: str | None = None,
                    runs=()) -> Attempt:
        title, hypothesis, did, result, conclusion = _clean(title or "", hypothesis, did, result, conclusion)
        title = title.strip()
        if "\n" in title:
            raise DbglogError("the attempt title must be one line")
        if not (title or hypothesis.strip() or did.strip()):
            raise DbglogError("an attempt needs at least a title, --hypothesis or --did")
        if outcome is None:
            outcome = model.infer_outcome(result)  # "Still hangs" -> failed, "Works" -> worked
        outcome = model.check_choice(outcome, model.OUTCOMES, "outcome")
        with self.change(inv_id):
            number = self.store.next_attempt_number(inv_id)
            a = Attempt(number=number, title=title, hypothesis=hypothesis.strip(), did=did.strip(),
                        result=result.strip(), conclusion=conclusion.strip(), outcome=outcome,
                        created=model.now_iso(), runs=list(dict.fromkeys(runs)))  # (a run cited twice is one run)
            self.store.upsert_attempt(inv_id, a)
        return a

    def edit_attempt(self, inv_id: str, number: int, **fields) -> Attempt:
        fields = {k: redact.clean_obj(v) for k, v in fields.items() if v is not None}
        if "outcome" in fields:
            fields["outcome"] = model.check_choice(fields["outcome"], model.OUTCOMES, "outcome")
        if "\n" in fields.get("title", ""):
            raise DbglogError("the attempt title must be one line")
        with self.change(inv_id):
            a = self.store.get_attempt(inv_id, number)
            for k, v in fields.items():
                setattr(a, k, v.strip() if isinstance(v, str) else v)
            self.store.upsert_attempt(inv_id, a)
        return a

    def delete_attempt(self, inv_id: str, number: int) -> tuple[Attempt, list[NextStep]]:
        """Remove attempt NUMBER (the numbers of the others do not change); returns it and the next steps that
        linked it, unlinked: a link left behind would name no attempt, then whichever attempt took the number."""
        with self.change(inv_id):
            a = self.store.get_attempt(inv_id, number)
            self.store.q("DELETE FROM attempts WHERE investigation_id = ? AND number = ?", inv_id, number)
            # (an import that read it remembers its number: the attempt recorded next under that number is not the
            # document's, and a re-import took it for one and wrote the document's text over it)
            self.store.q("DELETE FROM import_items WHERE investigation_id = ? AND kind = 'attempt' AND ref = ?",
                         inv_id, str(number))
            steps = self.store.load(inv_id).next_steps
            unlinked = [s for s in steps if s.attempt == number]
            for s in unlinked:
                s.attempt = None
            if unlinked:
                self.store.set_next_steps(inv_id, steps)
        return a, unlinked

    # --- key differences ------------------------------------------------------------

    def diff_add(self, inv_id: str, factor: str, working: str, broken: str, *,
                 labels: tuple[str | None, str | None] = (None, None), status: str = "untested",
                 apply: str = "") -> Difference:
        factor, working, broken, apply = _clean(factor, working, broken, apply)
        labels = tuple(_clean(*labels))
        factor = model.check_cell(factor, "factor")
        if not factor:
            raise DbglogError("empty factor: name what differs (e.g. 'Launch context')")
        status = model.check_choice(status, model.DIFF_STATUSES, "difference status")
        with self.change(inv_id):
            inv = self.store.load(inv_id)
            if any(d.factor.casefold() == factor.casefold() for d in inv.differences):
                raise DbglogError(f"factor {factor!r} is already in the table; use `dbglog diff set`")
            self._set_labels(inv_id, labels)
            if _secret_row(factor, apply):
                working, broken = _redacted(working, broken)
            d = Difference(position=len(inv.differences) + 1, factor=factor,
                           working=model.check_cell(working, "working value"),
                           broken=model.check_cell(broken, "broken value"), status=status,
                           apply=model.check_cell(apply, "apply spec"))
            self.store.set_differences(inv_id, inv.differences + [d])
        return d

    def _set_labels(self, inv_id: str, labels) -> None:
        lw, lb = labels
        if lw is not None:
            self.store.update_fields(inv_id, label_working=model.check_cell(lw, "column label") or "Working")
        if lb is not None:
            self.store.update_fields(inv_id, label_broken=model.check_cell(lb, "column label") or "Broken")

    def diff_set(self, inv_id: str, factor: str, *, working=None, broken=None, status=None, apply=None,
                 labels=(None, None)) -> Difference | None:
        working, broken, apply = _clean(working, broken, apply)
        labels = tuple(_clean(*labels))
        with self.change(inv_id):
            inv = self.store.load(inv_id)
            self._set_labels(inv_id, labels)
            if not factor:
                return None
            d = self.find_diff(inv, factor)
            if _secret_row(d.factor, d.apply if apply is None else apply):  # (values kept before included)
                working, broken = _redacted(d.working if working is None else working,
                                            d.broken if broken is None else broken)
            if working is not None:
                d.working = model.check_cell(working, "working value")
            if broken is not None:
                d.broken = model.check_cell(broken, "broken value")
            if status is not None:
                d.status = model.check_choice(status, model.DIFF_STATUSES, "difference status")
            if apply is not None:
                d.apply = model.check_cell(apply, "apply spec")
            self.store.set_differences(inv_id, inv.differences)
        return d

    @staticmethod
    def find_diff(inv: Investigation, factor: str) -> Difference:
        """The key-differences row ``factor`` names: its number, its name (any case), or a unique prefix."""
        if factor.isdigit() and 1 <= int(factor) <= len(inv.differences):
            return inv.differences[int(factor) - 1]
        hits = [d for d in inv.differences if d.factor.casefold() == factor.casefold()] or \
               [d for d in inv.differences if d.factor.casefold().startswith(factor.casefold())]
        if len(hits) == 1:
            return hits[0]
        if not hits:
            raise DbglogError(f"no factor {factor!r} in the differences table (see `dbglog diff list`)")
        raise DbglogError(f"{factor!r} matches several factors: {', '.join(d.factor for d in hits)}")

    # --- what to try next -----------------------------------------------------------

    def next_add(self, inv_id: str, text: str, detail: str = "", position: int | None = None) -> NextStep:
        text, detail = _clean(text, detail)
        text = model.check_cell(text, "step")
        if not text:
            raise DbglogError("empty step: say what to try")
        with self.change(inv_id):
            steps = self.store.load(inv_id).next_steps
            step = NextStep(position=0, text=text, detail=model.check_cell(detail, "detail"))
            idx = len(steps) if position is None else min(len(steps), _place(position) - 1)
            steps.insert(idx, step)
            self.store.set_next_steps(inv_id, steps)
            step.position = idx + 1
        return step

    def next_mark(self, inv_id: str, ref: str, status: str, attempt: int | None = None) -> NextStep:
        with self.change(inv_id):
            steps = self.store.load(inv_id).next_steps
            step = self._find_step(steps, ref)
            step.status = status
            if attempt is not None:
                self.store.get_attempt(inv_id, attempt)  # must exist
                step.attempt = attempt
            self.store.set_next_steps(inv_id, steps)
        return step

    def next_move(self, inv_id: str, ref: str, to: int) -> NextStep:
        with self.change(inv_id):
            steps = self.store.load(inv_id).next_steps
            step = self._find_step(steps, ref)
            steps.remove(step)
            idx = min(len(steps), _place(to) - 1)
            steps.insert(idx, step)
            self.store.set_next_steps(inv_id, steps)
            step.position = idx + 1
        return step

    @staticmethod
    def _find_step(steps: list[NextStep], ref: str) -> NextStep:
        if ref.isdigit():
            n = int(ref)
            if 1 <= n <= len(steps):
                return steps[n - 1]
            raise DbglogError(f"no step {n} (the list has {len(steps)}; see `dbglog next list`)")
        hits = [s for s in steps if ref.casefold() in s.text.casefold()]
        if len(hits) == 1:
            return hits[0]
        if not hits:
            raise DbglogError(f"no step matches {ref!r} (see `dbglog next list`)")
        raise DbglogError(f"{ref!r} matches {len(hits)} steps; use the step number")

    # --- free sections (bisection reports, notes) ------------------------------------

    def set_section(self, inv_id: str, heading: str, body: str) -> None:
        """Replace the `## heading` section (or append it): reports regenerate in place."""
        import json

        heading, body = _clean(heading, body)
        heading = heading if heading.startswith("#") else f"## {heading}"
        if "\n" in heading:
            raise DbglogError("a section heading must be one line")
        with self.change(inv_id):
            inv = self.store.load(inv_id)
            body = "\n".join(line.rstrip() for line in body.strip("\n").split("\n"))
            for s in inv.sections:
                if s.heading == heading:
                    s.body = body
                    break
            else:
                inv.sections.append(model.Section(heading, body))
            self.store.update_fields(inv_id, sections=json.dumps([s.to_dict() for s in inv.sections]))

    # --- supervised runs -----------------------------------------------------------

    def bisection_recall(self, sid: str, signatures=None, **how) -> dict | None:
        """What the knowledge base knows about a bisection's bad verdict (``failures.bisection_recall``):
        the bisection engine, which does not import kb/, asks through the Records it is handed."""
        from dbglog.kb import failures

        return failures.bisection_recall(self.store, sid, signatures, **how)

    def record_runs(self, results: list[dict], run_dirs: list[str], *, attempt_title: str | None = None,
                             inv_ref: str | None = None, hypothesis: str = "", did: str = "",
                             baseline: list[dict] | None = None) -> Attempt | None:
        """Store runs; with ``attempt_title`` also record them as an attempt of an investigation.

        The run records are cleaned in place (``redact.clean_obj``: captured lines without control
        characters, secrets in the command, its environment and its output redacted)."""
        for r in results:  # --env HF_TOKEN=...: that value is redacted wherever it shows up, in every run
            redact.remember_env({k: v for k, v in (r.get("env_overrides") or {}).items() if isinstance(v, str)})
        results[:] = [redact.clean_run(r) for r in results]  # (insert_run does not clean them again)
        attempt_title, hypothesis, did = _clean(attempt_title, hypothesis, did)
        if attempt_title is None:
            # (a plain run belongs to the investigation it was made in, when there is one: its failure is then that
            # investigation's, and a later investigation that meets it is told so; never a reason to lose the run)
            home = self._run_home(inv_ref)
            with self.store.write():
                for r, d in zip(results, run_dirs):
                    self.store.insert_run(r, d, home)
            return None
        inv_id = self.resolve(inv_ref)
        with self.change(inv_id):
            number = self.store.next_attempt_number(inv_id)
            base, where = (baseline, "") if baseline is not None else self._baseline_runs(inv_id, results)
            outcome, rate_words = attempt_outcome_from_runs(results, base)
            rate_words += where if rate_words and base else ""
            result = run_result_line(results) + (f"\n- {rate_words}" if rate_words else "")
            a = Attempt(number=number, title=attempt_title.strip() or "Supervised run", hypothesis=hypothesis.strip(),
                        did=did.strip(), result=result, outcome=outcome,
                        created=model.now_iso(), runs=[r["id"] for r in results])
            self.store.upsert_attempt(inv_id, a)
            for r, d in zip(results, run_dirs):
                self.store.insert_run(r, d, inv_id, number)
        return a

    def _run_home(self, inv_ref: str | None) -> str | None:
        """The investigation a plain run is recorded in: the one named, else the current one while it is open;
        None when there is none (a run made before any investigation), or the current one was resolved: a
        failure seen after that is a regression to be told about, not a run of it."""
        try:
            inv_id = self.resolve(inv_ref)
        except DbglogError:
            return None
        if inv_ref is None:
            row = self.store.q("SELECT status FROM investigations WHERE id = ?", inv_id).fetchone()
            if row is None or row[0] != "open":
                return None
        return inv_id

    def _baseline_runs(self, inv_id: str, results: list[dict]) -> tuple[list[dict], str]:
        """The investigation's earlier runs of the same command in the same place (its server
        included; ``_run_key``), outside attempts recorded as having worked or helped (``dbglog run`` with no
        --attempt records its runs in the current investigation); else the runs of it that belong to no
        investigation (made before there was a current one, or by an older dbglog) since the investigation
        began. With the words saying which, when they are plain runs."""
        if not results:
            return [], ""
        key, env = _run_key(results[0]), results[0].get("env_overrides") or {}

        def base(r: dict) -> bool:  # (earlier runs with this attempt's own --env/--unset ran the fix, not the repro)
            return _run_key(r) == key and not (env and (r.get("env_overrides") or {}) == env)

        rows = self.store.q(
            """SELECT r.result, r.attempt_number FROM runs r LEFT JOIN attempts a
                 ON a.investigation_id = r.investigation_id AND a.number = r.attempt_number
               WHERE r.investigation_id = ? AND (a.outcome IS NULL OR a.outcome NOT IN ('worked', 'partial'))""",
            inv_id).fetchall()
        own = [(r, x[1]) for x in rows if base(r := json.loads(x[0]))]
        if own:  # (plain runs made in the investigation are said to be: no attempt's runs among them)
            plain = all(n is None for _r, n in own)
            return [r for r, _n in own], (f" (the baseline: {len(own)} run(s) of this command made without --attempt "
                                          "in this investigation)" if plain else "")
        # (seconds compared: a run's "...:51.323Z" sorts before the investigation's "...:51Z" as text)
        rows = self.store.q(
            """SELECT r.result FROM runs r JOIN investigations i ON i.id = ?
               WHERE r.investigation_id IS NULL AND substr(r.started, 1, 19) >= substr(i.created, 1, 19)""",
            inv_id).fetchall()
        plain = [r for r in (json.loads(x[0]) for x in rows) if base(r)]
        return plain, (f" (the baseline: {len(plain)} run(s) of this command made without --attempt since the "
                       "investigation began)" if plain else "")

    def prune_runs(self, *, older_than_days: float | None = None, keep: int | None = None,
                   max_bytes: int | None = None, dry_run: bool = False) -> dict:
        """`dbglog runs prune`: remove run outputs (see ``plan_prune``)."""
        plan = plan_prune(self, older_than_days=older_than_days, keep=keep, max_bytes=max_bytes)
        if dry_run:
            plan.pop("_units")
            return plan | {"dry_run": True}
        return apply_prune(self, plan) | {"dry_run": False}

    def _cap_runs(self, added: list[str]) -> None:
        """After runs were recorded: keep `.dbglog/runs/` under its size cap, oldest outputs first
        (never the runs just recorded)."""
        cap = runs_cap(self.ws.config_path)
        if cap is None:
            return
        est = self.__dict__.setdefault("_runs_size", RunsSize(self.ws.runs_dir))
        if est.total(added) <= cap:
            return  # plan_prune would drop nothing (it adds up the same folders)
        plan = plan_prune(self, max_bytes=cap, protect=set(added))
        est.forget()  # measured afresh next time
        if plan["pruned"]:
            apply_prune(self, plan)
            import sys

            print(f"dbglog: .dbglog/runs/ is over its cap ({cap >> 20} MiB): removed the outputs of "
                  f"{len(plan['pruned'])} older run(s), {plan['freed_bytes'] >> 20} MiB ([runs] max_size in "
                  f"{self.ws.config_path.name})", file=sys.stderr)


# --- run outputs: prune and the size cap ----------------------------------------------

DEFAULT_RUNS_CAP = 2 << 30  # .dbglog/runs/ beyond this loses its oldest outputs ([runs] max_size)


def parse_size(text) -> int | None:
    """``64M``, ``2G``, ``512K``, a number of bytes; ``0``/``none``/``unlimited`` = no cap (None)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return None if text <= 0 else int(text)
    t = str(text).strip().lower().removesuffix("b").removesuffix("i")
    if t in ("0", "none", "unlimited", ""):
        return None
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}.get(t[-1:], 1)
    try:
        n = float(t[:-1] if mult != 1 else t)
    except ValueError:
        raise DbglogError(f"bad size {text!r}: use e.g. 2G, 500M, 64K or 0 for no cap") from None
    if n < 0 or n != n or n == float("inf"):
        raise DbglogError(f"bad size {text!r}: use e.g. 2G, 500M, 64K or 0 for no cap")
    return int(n * mult) or None


def runs_cap(config_path: Path) -> int | None:
    """The size cap of `.dbglog/runs/` from ``[runs] max_size`` in config.toml (default 2 GiB)."""
    from dbglog.util import config

    value = config.table(config_path, "runs").get("max_size", DEFAULT_RUNS_CAP)
    try:
        return parse_size(value)
    except DbglogError as e:
        raise DbglogError(f"{config_path}: [runs] max_size: {e}") from None


def _du(path: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
            except OSError:
                pass
    return total


class RunsSize:
    """The size of `.dbglog/runs/` as ``plan_prune`` adds it up (its top-level folders), kept up to
    date cheaply for the cap check after every recorded run.

    Measuring every folder (and reading every run row) after each run made every bisection step
    pay for the workspace's whole history. Here a folder is measured when first seen and again
    only when it holds runs just recorded (a run's folder does not change once it is recorded);
    folders that are gone drop out. Everything is measured afresh at least every ``REFRESH_S``
    seconds: growth the estimate cannot see (another dbglog process's run, still writing) is
    caught then, and that process checks the cap itself once its run is recorded. Over the cap,
    the caller makes the exact plan (``plan_prune``)."""

    REFRESH_S = 60.0

    def __init__(self, root: Path):
        self.root = root
        self.sizes: dict[str, int] = {}
        self.measured: float | None = None  # time.monotonic() of the last full measurement

    def total(self, added=()) -> int:
        import time

        try:
            names = [e.name for e in os.scandir(self.root) if e.is_dir(follow_symlinks=False)]
        except FileNotFoundError:
            names = []
        now = time.monotonic()
        if self.measured is None or now - self.measured >= self.REFRESH_S:
            self.sizes, self.measured = {}, now
        fresh = set(added)
        old = self.sizes
        self.sizes = {n: old[n] if n in old and n not in fresh else _du(self.root / n) for n in names}
        return sum(self.sizes.values())

    def forget(self) -> None:
        self.measured = None


def plan_prune(recs: "Records", *, older_than_days: float | None = None, keep: int | None = None,
               max_bytes: int | None = None, protect=()) -> dict:
    """Which run outputs to remove. A unit is one top-level entry of `.dbglog/runs/` (one `dbglog
    run`, its repeats inside; or one trial of a bisection). Newest first; ``keep`` keeps the newest
    N, ``older_than_days`` drops older ones, ``max_bytes`` drops the oldest until the rest fits.
    ``protect``: run ids never dropped (the ones just recorded)."""
    import time

    units = _prune_units(recs, protect)
    drop: list[dict] = []
    now = time.time()
    for i, u in enumerate(units):
        if u["protected"]:
            continue
        if (keep is not None and i >= keep) or \
                (older_than_days is not None and u["when"] < now - older_than_days * 86400):
            drop.append(u)
    if max_bytes is not None:
        _drop_to_fit(units, drop, max_bytes)
    linked = set()
    for (ids,) in recs.store.q("SELECT runs FROM bisect_trials"):
        try:
            linked.update(json.loads(ids or "[]"))
        except ValueError:
            pass
    out = {"pruned": [], "rows_deleted": [], "rows_kept": [], "freed_bytes": 0}
    for u in list(drop):
        # a run an attempt or a bisection cites keeps its record (only its output goes)
        cited = [r["id"] for r in u["rows"] if r["attempt_number"] is not None or r["id"] in linked]
        if u["path"] is None and len(cited) == len(u["rows"]):
            drop.remove(u)  # its output went before and its records stay: nothing to remove, nothing to count
            continue
        out["pruned"].append(u["name"])
        if u["path"] is not None:
            out["freed_bytes"] += _du(u["path"])
        out["rows_kept"] += cited
        out["rows_deleted"] += [r["id"] for r in u["rows"] if r["id"] not in cited]
    out["_units"] = drop
    return out


def _prune_units(recs: "Records", protect) -> list[dict]:
    """Every top-level entry of `.dbglog/runs/` and every run row, as units (name, path, newest start,
    rows, protected), newest first."""
    root = recs.ws.runs_dir
    try:
        names = [e.name for e in os.scandir(root) if e.is_dir(follow_symlinks=False)]
    except FileNotFoundError:
        names = []
    rows: dict[str, list] = {}
    here = set(names)
    for r in recs.store.q("SELECT id, run_dir, started, investigation_id, attempt_number FROM runs"):
        try:
            top = Path(r["run_dir"]).resolve().relative_to(root.resolve()).parts[0]
        except (ValueError, IndexError, TypeError, OSError):
            # a workspace copied or moved keeps the old absolute run_dir: its folder is here by the same name
            top = Path(r["run_dir"]).name if r["run_dir"] and Path(r["run_dir"]).name in here else None
        rows.setdefault(top or f"?{r['id']}", []).append(r)
    live = _live_units(recs, root)
    units = []
    for name in set(names) | set(rows):
        rs = rows.get(name, [])
        path = root / name if name in names else None
        units.append({"name": name, "path": path, "when": _unit_time(rs, path), "rows": rs,
                      "protected": any(r["id"] in protect for r in rs) or name in protect or name in live})
    units.sort(key=lambda u: (u["when"], u["name"]), reverse=True)
    return units


def _live_units(recs: "Records", root: Path) -> set[str]:
    """The top-level entries of `.dbglog/runs/` of runs still supervised (``proctree.live_enter``; a
    repeated run's folder is runs/<id>/NNN): removed, the run could not write its result and was
    recorded without its signature. An entry whose supervisor was killed counts too: its output is
    read when the run is recorded as interrupted."""
    out = set()
    try:
        entries = [e.path for e in os.scandir(recs.ws.dir / "live") if ".json" in e.name]
    except OSError:
        return out
    for path in entries:
        out.add(Path(path).name.lstrip(".").split(".json")[0])
        try:
            run_dir = Path(jsonsafe.loads(Path(path).read_text()).get("run_dir") or "")
            out.add(run_dir.resolve().relative_to(root.resolve()).parts[0])
        except (OSError, ValueError, TypeError, AttributeError, IndexError):
            pass
    return out


def _unit_time(rows: list, path: Path | None) -> float:
    """A unit's newest run start, else its folder's mtime, else 0."""
    from datetime import datetime

    when = None
    for r in rows:
        try:
            t = datetime.fromisoformat(r["started"].replace("Z", "+00:00")).timestamp()
        except (ValueError, AttributeError):
            continue
        when = t if when is None else max(when, t)
    if when is None:
        try:
            when = os.stat(path).st_mtime if path is not None else 0.0
        except OSError:
            when = 0.0
    return when


def _drop_to_fit(units: list[dict], drop: list[dict], max_bytes: int) -> None:
    """Add the oldest units not yet dropped (nor protected) to ``drop`` until the rest fits ``max_bytes``."""
    sizes = {u["name"]: (_du(u["path"]) if u["path"] is not None else 0) for u in units}
    total = sum(sizes[u["name"]] for u in units if u not in drop)
    for u in reversed(units):  # oldest first
        if total <= max_bytes:
            break
        if u in drop or u["protected"]:
            continue
        drop.append(u)
        total -= sizes[u["name"]]


def apply_prune(recs: "Records", plan: dict) -> dict:
    """Delete the rows, commit, then remove the directories (a failed commit removes nothing)."""
    import shutil

    units = plan.pop("_units")
    with recs.store.write():
        for rid in plan["rows_deleted"]:
            recs.store.q("DELETE FROM runs WHERE id = ?", rid)
        for rid in plan["rows_kept"]:
            row = recs.store.q("SELECT result FROM runs WHERE id = ?", rid).fetchone()
            if row is None:
                continue
            try:
                d = json.loads(row[0])
            except ValueError:
                continue
            note = "outputs pruned (`dbglog runs prune` or the [runs] max_size cap)"
            if note not in d.get("notes", []):
                d.setdefault("notes", []).append(note)
                recs.store.q("UPDATE runs SET result = ? WHERE id = ?", json.dumps(d), rid)
    root = recs.ws.runs_dir.resolve()
    for u in units:
        p = u["path"]
        if p is not None and Path(p).resolve().parent == root:
            shutil.rmtree(p, ignore_errors=True)
    return plan


def _from_logs(ws: Workspace) -> JournaledStore:
    """A clone without `.dbglog/` that cannot make one (a CI artifact, a read-only mount): its
    `logs/` read into a private temporary database, read-only, gone with the command."""
    import shutil
    import tempfile

    tmp = tempfile.mkdtemp(prefix="dbglog-ro-")
    store = JournaledStore(Path(tmp) / "dbglog.db")
    try:
        with store.write():
            sync.reindex(store, ws, force=True, rewrite_dirty=False)
    except BaseException:
        store.close()
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    store.readonly, store._copy, store.refusal_path = True, tmp, ws.db_path
    return store


def _holds_investigations(logs_dir: Path) -> bool:
    try:
        entries = sorted(e.path for e in os.scandir(logs_dir) if e.name.endswith(".md") and e.is_file())
    except OSError:
        return False
    for p in entries[:50]:
        try:
            with open(p, "rb") as f:
                if sync.looks_like_ours(f.read(8192)):
                    return True
        except OSError:
            continue
    return False


def _place(position: int) -> int:
    """A place in the numbered list as given (1 is the first; one past the end is the end)."""
    if position < 1:
        raise DbglogError(f"position {position} is not in the list: 1 is the first step")
    return position


def _secret_row(factor: str, apply: str | None) -> bool:
    """Does a key-differences row's factor, or the variable its apply spec sets (``env:HF_TOKEN``), name a secret?
    Then its values are the secret's, and are stored redacted like a secret-named assignment anywhere else."""
    target = re.match(r"\s*env:([A-Za-z_][A-Za-z0-9_]*)", apply or "")
    return redact.is_secret_name(factor) or bool(target and redact.is_secret_name(target.group(1)))


def _redacted(*values):
    """Each value as ``<redacted>``, but none, empty and "unset" (they say nothing of the secret) as they are."""
    return tuple(v if v is None or v.strip().lower() in ("", "unset", "-") else redact.REDACTED for v in values)


def _clean(*texts):
    """``redact.clean`` each of ``texts`` (None stays None)."""
    return [redact.clean(t) if isinstance(t, str) else t for t in texts]


# --- supervised runs ----------------------------------------------------------------


def _run_key(r: dict) -> tuple:
    """What makes two runs runs of the same repro: command, directory and server. Not the
    environment: the commonest fix is an --env change, and its baseline is the same command
    without it (runs of attempts that worked or helped are left out of a baseline anyway)."""
    srv = r.get("server") or {}
    return (tuple(r.get("cmd") or ()), r.get("cwd"), tuple(srv.get("cmd") or ()) if isinstance(srv, dict) else None)


def run_result_line(results: list[dict]) -> str:
    """The generated Result text of an attempt recorded from runs: outcome, signature, time, key lines."""
    if len(results) == 1:
        r = results[0]
        what = r["outcome"] + (f" ({r['signature']})" if r["signature"] else "")
        if r.get("signal_name") and r["outcome"] != "hang":  # a hang's signal is our own SIGTERM
            what += f", {r['signal_name']}"
        elif r["exit_code"] not in (None, 0):
            what += f", exit {r['exit_code']}"
        line = f"{what} after {r['duration_s']:.1f}s [run {r['id']}]"
        keys = [k["text"].strip() for k in r.get("key_lines", [])[:3] if k.get("text", "").strip()]
        if keys:
            line += "\n" + "\n".join(f"- `{k[:200]}`" if "`" not in k else f"- {k[:200]}" for k in keys)
        return line + _stuck_lines(r)
    hist: dict[str, int] = {}
    for r in results:
        key = r["outcome"] + (f" ({r['signature']})" if r["signature"] else "")
        hist[key] = hist.get(key, 0) + 1
    parts = ", ".join(f"{n}× {k}" for k, n in sorted(hist.items(), key=lambda kv: -kv[1]))
    last_stuck = next((r for r in reversed(results) if r.get("stuck")), None)
    return (f"{len(results)} runs: {parts}" + (" — flaky" if len(hist) > 1 else "")
            + (_stuck_lines(last_stuck) if last_stuck else ""))


def _stuck_lines(r: dict) -> str:
    """The hang captures' stuck-process guess and its top frames, for the attempt's Result."""
    st = r.get("stuck")
    if not st:
        return ""
    def code(t: str) -> str:
        return f"`{t}`" if "`" not in t else t
    out = (f"\n- stuck process (guess, run {r['id']}): pid {st.get('pid')} {code((st.get('cmdline') or '?')[:100])}"
           f" — {(st.get('reason') or '').removeprefix('guess: ')[:200]}")
    return out + "".join(f"\n  - at {code(f[:160])}" for f in (st.get("frames") or [])[:5])


def attempt_outcome_from_runs(results: list[dict], baseline: list[dict] | None = None) -> tuple[str, str]:
    """(outcome, the words saying why when it is a guess from failure rates).

    With baseline runs (the investigation's earlier runs of the same command) that show the failure
    is intermittent, the attempt's failure rate is compared with theirs (``rates.compare``): a
    "fix" failing as often as the baseline is ``failed``.  Without one, runs that all pass are ``worked``, all fail ``failed``, and a mix is
    ``inconclusive``: passing now and then is what an intermittent failure does anyway."""
    from dbglog.kb import rates

    outcomes = {r["outcome"] for r in results}
    if "error" in outcomes:
        return "inconclusive", ""
    fails = sum(r["outcome"] != "pass" for r in results)
    base = [r for r in baseline or () if r.get("outcome") != "error"]
    f0 = sum(r["outcome"] != "pass" for r in base)
    # rates decide when the failure is intermittent: the baseline's runs disagree, or it always
    # failed and this attempt's runs disagree (a baseline that never failed has nothing to compare)
    if f0 and (f0 < len(base) or 0 < fails < len(results)):
        v = rates.compare(fails, len(results), f0, len(base))
        return v.outcome, v.words
    if outcomes == {"pass"}:
        return "worked", ""
    if "pass" not in outcomes:
        return "failed", ""
    return "inconclusive", (f"runs disagree ({fails} of {len(results)} failed) and no baseline runs of this "
                            "command are recorded in the investigation to compare with: a guess either way (runs "
                            "of it without the fix give one: `dbglog run --repeat 8 -- CMD` first, or --baseline N)")
