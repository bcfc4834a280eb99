"""`dbglog tried IDEA` and `dbglog attempt add ...` without click: what an agent runs all the time.

Parsing the command line with click and importing the CLI module costs ~25 ms of a ~110 ms
command (``bench/agent_bench.py``). ``dbglog.entry`` hands a well-formed invocation here:
``tried`` with the idea's words, ``--status``, ``--tag``, ``-i/--investigation``, ``-n/--limit``,
``--json``; ``attempt add`` with its field options when no editor would open. Anything else --
``--help``, an unknown or malformed option, a value out of range -- goes to the click CLI, and so
does any error raised before something is written: the CLI does the same work again and reports
it exactly as always (nothing was changed, so running it twice changes nothing). The printers
below are the ones the CLI uses too, so the two paths cannot print differently.
"""

from __future__ import annotations

import json
import os
import re
import sys

_VALUED = {"--status": "status", "--tag": "tags", "-i": "inv_ref", "--investigation": "inv_ref",
           "--limit": "limit", "-n": "limit"}
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _scan(argv: list[str], valued: dict[str, str]):
    """The words of a plain command line as ("arg", word), ("json", None) and (key, value) pairs; a
    ("bad", None) pair for anything click must see instead (-h, --help, -n5, a typo, a missing value)."""
    it = iter(argv)
    words_only = False
    for a in it:
        if words_only or not a.startswith("-") or a == "-":
            yield "arg", a
            continue
        if a == "--":
            words_only = True
            continue
        name, eq, value = a.partition("=")
        if name == "--json" and not eq:
            yield "json", None
            continue
        key = valued.get(name)
        if key is None or (eq and not name.startswith("--")):
            yield "bad", None
            return
        if not eq:
            value = next(it, None)
            if value is None:
                yield "bad", None
                return
        yield key, value


def parse_tried(argv: list[str]) -> dict | None:
    """The options of a plain ``tried`` invocation, or None: let click parse (and refuse) it."""
    out: dict = {"words": [], "status": None, "tags": [], "inv_ref": None, "limit": None, "as_json": False}
    for key, value in _scan(argv, _VALUED):
        if key == "bad":
            return None
        if key == "arg":
            out["words"].append(value)
        elif key == "json":
            out["as_json"] = True
        elif key == "tags":
            out["tags"].append(value)
        elif key == "limit":
            if not re.fullmatch(r"[0-9]{1,3}", value) or not 1 <= int(value) <= 100:
                return None
            out["limit"] = int(value)
        else:
            out[key] = value
    return out if out["words"] else None


def _echo(text: str = "", err: bool = False) -> None:
    stream = sys.stderr if err else sys.stdout
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    stream.write((text if tty else _ANSI.sub("", text)) + "\n")


def _style(text: str, bold: bool = False, dim: bool = False) -> str:
    return ("\x1b[1m" if bold else "") + ("\x1b[2m" if dim else "") + text + "\x1b[0m"


def _where(h) -> str:
    from dbglog.util.redact import sanitize  # a watched doc's file name may hold escapes: shown inert

    return sanitize(f"{h.path}:{h.line}" if h.line else (h.path or ""))


def _print_prior(h, n: int, echo, style) -> None:
    """One close prior attempt: outcome and conclusion first, then the rest."""
    diag = h.fields.get("diagnostic") if h.kind == "attempt" else None
    outcome = style((diag or h.outcome or "noted").upper() + _guessed(h), bold=True)
    if h.kind == "attempt":
        done = "completed" if h.fields.get("stored_outcome") == "worked" else f"ended {h.fields.get('stored_outcome')}"
        echo(f"{n}. [{outcome}] {h.fields.get('conclusion') or 'no conclusion recorded'} -- Attempt {h.number}: "
             f"{h.title}" + (f"  (a {diag}, not a fix: it {done})" if diag else ""))
        if getattr(h, "differs", ""):
            echo(f"   matched: {h.differs}")
        # one line each: an imported attempt's field may hold a page of markdown, which broke the list apart
        # (the whole field is in --json and `dbglog show`)
        echo(f"   result: {one_line(h.fields.get('result')) or '-'}")
        if h.fields.get("did"):
            echo(f"   did: {one_line(h.fields['did'])}")
        echo(style(f"   {h.investigation}  {h.investigation_title}  ({h.status})", dim=True))
        return
    if h.kind == "difference":
        echo(f"{n}. [{outcome}] Key difference {h.number}: {h.title} "
             f"(working: {h.fields['working'] or '-'}, broken: {h.fields['broken'] or '-'})")
    elif h.kind == "next":
        echo(f"{n}. [{outcome}] Next step {h.number}: {h.title}"
             + (f" (-> attempt {h.fields['attempt']})" if h.fields.get("attempt") else ""))
    else:
        echo(f"{n}. [{outcome}] {h.title}")
        echo(f"   {_where(h)}: {h.line_text}")
    if h.investigation:
        guess = "; outcome read from its text, a guess" if h.kind == "section" else ""
        echo(style(f"   {h.investigation}  {h.investigation_title}  ({h.status}){guess}", dim=True))
    else:
        echo(style("   watched doc (outcome read from its text, a guess)", dim=True))


def _guessed(h) -> str:
    """ "?" after an outcome read from free text's words: a guess, as --json's outcome_is_guess says."""
    return "?" if h.kind == "section" and h.outcome in ("worked", "failed", "partial") else ""


def one_line(s: str | None, n: int = 200) -> str:
    """``s`` on one line, cut at ``n`` characters (shared with the hooks' notices)."""
    s = " ".join((s or "").split())
    return s if len(s) <= n else s[: n - 1] + "…"


def _brief(h) -> str:
    if h.kind == "attempt":
        return f"[{h.outcome}] Attempt {h.number}: {h.title}  ({h.investigation})"
    if h.kind in ("difference", "next", "investigation"):
        what = {"difference": "key difference", "next": "next step", "investigation": "investigation"}[h.kind]
        return f"[{h.outcome}] {what}: {h.title}  ({h.investigation})"
    return f"{h.title}  ({_where(h)})"


def _head(h) -> str:
    """A record's first line: its outcome and conclusion first, then what it is."""
    diag = h.fields.get("diagnostic") if h.kind == "attempt" else None
    outcome = (diag or h.outcome or "noted").upper() + _guessed(h)
    concl = {"attempt": h.fields.get("conclusion"), "section": h.line_text,
             "investigation": h.fields.get("root_cause") or _first(h.fields.get("symptom")),
             "difference": f"working: {h.fields.get('working') or '-'}, broken: {h.fields.get('broken') or '-'}",
             }.get(h.kind, h.fields.get("detail"))
    what = _brief(h).split("] ", 1)[-1] if h.kind != "section" else _brief(h)
    return f"[{outcome}] {concl or 'no conclusion recorded'} -- {what}"


def _first(text) -> str:
    return (text or "").strip().split("\n", 1)[0]


_TIER_LINES = (("close", "Tried", "the same experiment"),
               ("another", "Tried another way", "the same knob, turned another way or to another value"),
               ("mentioned", "Related", "named as an idea or a to-do, not tried"))


def print_tried(res, text: str, notes: list[str], echo=_echo, style=_style) -> None:
    """`dbglog tried`'s text output (``res``: ops.tried's result): the answer's tier first, then the
    records of each tier, each with its outcome and conclusion on its first line."""
    from dbglog.ops import quoted  # (loaded already: ops.tried gave ``res``)
    from dbglog.util.redact import clean

    text = clean(text)  # (the idea as asked: "'HF_TOKEN=hf_...' itself was not tried" echoed the token)
    for note in notes:
        echo(style(f"note: {note}", dim=True), err=True)
    another = getattr(res, "another", [])
    if res.close:
        echo(style(f"Tried: {len(res.close)} prior attempt(s) of the same experiment.", bold=True))
        for n, h in enumerate(res.close, 1):
            _print_prior(h, n, echo, style)
    elif another:
        echo(style(f"Tried another way: the same knob was turned differently in {len(another)} record(s); "
                   f"{quoted(text)} itself was not tried.", bold=True))
    elif getattr(res, "vague", False):
        echo(style(f"Too vague to tell: {quoted(text)} is one plain word and names no experiment; say what was done or "
                   "the setting (\"set NCCL_P2P_DISABLE=1\", \"downgrade the driver to 535\").", bold=True))
    else:
        echo(style(f"Not tried: no prior attempt of {quoted(text)} in the attempts, bisections, key differences, next "
                   "steps, free sections and watched docs.", bold=True))
    if another:
        echo("Tried another way:")
        for h in another:
            echo(f"  - {_head(h)}")
            if h.differs:
                echo(style(f"    how it differs: {h.differs}", dim=True))
    if res.mentioned:
        echo("Related (named as an idea, not tried):")
        for h in res.mentioned:
            echo(f"  - {_head(h)}")
    others = [h for h in res.result.hits if h not in res.close and h not in res.mentioned and h not in another]
    if others and not res.close and not another and getattr(others[0], "verdict", ""):
        from dbglog.kb.search import verdict_why  # (tried has loaded it)

        echo(f"Closest: {_head(others[0])}")
        why = others[0].differs or verdict_why(others[0].verdict)
        echo(style(f"  not the same experiment: {why}", dim=True))
        others = others[1:]
    if others:
        echo("Related:")
        for h in others:
            echo(f"  - {_head(h)}")


_ADD_VALUED = {"-t": "title_opt", "--title": "title_opt", "-H": "hypothesis", "--hypothesis": "hypothesis", "-d": "did", "--did": "did", "-r": "result",
               "--result": "result", "-c": "conclusion", "--conclusion": "conclusion", "-o": "outcome",
               "--outcome": "outcome", "--run": "runs", "-i": "inv_ref", "--investigation": "inv_ref"}


def parse_attempt_add(argv: list[str]) -> dict | None:
    """The fields of a plain ``attempt add``, or None: let click parse (and refuse) it, or open the editor."""
    out: dict = {"title": None, "hypothesis": None, "did": None, "result": None, "conclusion": None,
                 "outcome": None, "runs": [], "inv_ref": None, "as_json": False}
    for key, value in _scan(argv, _ADD_VALUED):
        if key == "bad":
            return None
        if key == "arg":
            if out["title"] is not None:
                return None  # a second positional: click's error
            out["title"] = value
        elif key == "json":
            out["as_json"] = True
        elif key == "runs":
            out["runs"].append(value)
        elif key == "title_opt":
            if out["title"] is not None:
                return None  # a title twice: click's to refuse
            out["title"] = value
        else:
            out[key] = value
    missing = any(out[k] is None for k in ("hypothesis", "did", "result", "conclusion"))
    if missing and not out["as_json"] and os.environ.get("DBGLOG_NO_EDITOR") != "1":
        try:
            if sys.stdin.isatty():
                return None  # the CLI opens $EDITOR for the missing fields
        except (AttributeError, ValueError):
            pass
    return out


def print_attempt(rec, echo=_echo) -> None:
    """`dbglog attempt add`'s text output (``rec``: ops.add_attempt's RecordedAttempt)."""
    a, inv_id = rec.attempt, rec.investigation
    note = (f"{a.outcome}, a guess from the result; set it with `dbglog attempt edit {a.number} -o OUTCOME`"
            if rec.outcome_inferred else a.outcome)
    echo(f"Attempt {a.number} recorded in {inv_id} ({note})")
    for s in rec.similar:
        echo(f"dbglog: warning: this looks like attempt {s['attempt']} of {s['investigation']} "
             f"({s['title']!r}, {s['outcome']}): {s['conclusion'] or 'no conclusion recorded'}", err=True)
    print_breaker(rec.breaker, echo)
    if not rec.breaker:
        echo(f"  next: {'; '.join(rec.to_dict()['next'])}")


def print_breaker(b: dict | None, echo=_echo) -> None:
    """The circuit breaker (ops.circuit_breaker): the same failure N times; what to do instead."""
    if not b:
        return
    echo(f"Circuit breaker: {b['message']}")
    for d in b["untested_differences"][:5]:
        echo(f"  untested: {d['position']}. {d['factor']}: {d['working']} vs {d['broken']}"
             + (f" [--apply {d['apply']}]" if d["apply"] else ""))
    echo(f"  next: {b['bisect']}")


def attempt_add(argv: list[str]) -> int | None:
    """Record ``dbglog attempt add ARGV`` and return the exit status, or None: run the click CLI instead
    (only when nothing was written)."""
    opts = parse_attempt_add(argv)
    if opts is None:
        return None
    from dbglog import ops

    warnings: list[str] = []
    try:
        recs = ops.open_records(warn=warnings.append)
        inv_id = recs.resolve(opts["inv_ref"])
        before = recs.store.next_attempt_number(inv_id)
    except KeyboardInterrupt:
        raise
    except Exception:  # noqa: BLE001 - reported by the CLI (nothing written yet)
        return None
    for w in warnings:
        _echo(f"dbglog: warning: {w}", err=True)
    try:
        rec = ops.add_attempt(recs, inv_id, title=opts["title"], hypothesis=opts["hypothesis"], did=opts["did"],
                              result=opts["result"], conclusion=opts["conclusion"], outcome=opts["outcome"],
                              runs=opts["runs"])
    except KeyboardInterrupt:
        raise
    except Exception as e:  # noqa: BLE001
        try:
            written = recs.store.next_attempt_number(inv_id) != before
        except Exception:  # noqa: BLE001
            written = True  # cannot tell: never risk recording it twice
        if not written:
            return None  # refused before anything changed: the CLI says why, as always
        msg = f"internal error: {type(e).__name__}: {e} (the attempt was recorded; set DBGLOG_DEBUG=1 for the traceback)"
        from dbglog.kb import sync

        sync.drop_listing()
        if opts["as_json"]:
            sys.stdout.write(json.dumps({"error": msg}) + "\n")
        _echo(f"dbglog: {msg}", err=True)
        return 1
    try:
        if opts["as_json"]:
            from dbglog.util.redact import json_text

            sys.stdout.write(json_text(json.dumps(rec.to_dict(), indent=2, ensure_ascii=False)) + "\n")
        else:
            print_attempt(rec)
        sys.stdout.flush()
    except BrokenPipeError:
        os._exit(0)
    return 0


def tried(argv: list[str]) -> int | None:
    """Answer ``dbglog tried ARGV`` and return the exit status, or None: run the click CLI instead."""
    opts = parse_tried(argv)
    if opts is None:
        return None
    try:
        from dbglog import ops

        text = " ".join(opts["words"])
        ops.check_text(text, "query")
        warnings: list[str] = []
        recs = ops.open_records(warn=warnings.append)
        try:
            res = ops.tried(recs, text, status=opts["status"], tags=opts["tags"], inv_ref=opts["inv_ref"],
                            limit=opts["limit"] or ops.TRIED_CANDIDATES, warn=warnings.append)
        finally:
            recs.close()
    except KeyboardInterrupt:
        raise
    except Exception:  # noqa: BLE001 - any error is reported by the CLI, which runs it again
        return None
    for w in warnings:
        _echo(f"dbglog: warning: {w}", err=True)
    try:
        if opts["as_json"]:
            from dbglog.util.redact import json_text

            sys.stdout.write(json_text(json.dumps(res.to_dict(), indent=2, ensure_ascii=False)) + "\n")
        else:
            print_tried(res, text, ops.query_notes(res.result.query))
        sys.stdout.flush()
    except BrokenPipeError:  # (the reader went away: nothing left to say, and no traceback at exit;
        os._exit(0 if res.close else 1)  # the answer is still the exit status: 0 only when it was tried)
    return 0 if res.close else 1
