"""Advice: the next steps the GPU playbooks give for a signature or a piece of evidence.

The rules are data (dbglog/advice.toml, extended by ``[[advice]]`` tables in .dbglog/config.toml),
matched against what one supervised run produced plus the investigation's earlier runs. `dbglog run
--attempt` adds the steps that apply to the investigation, once each (see apply_to_investigation).
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from dbglog.util import config
from dbglog.util.errors import DbglogError

BUILTIN_FILE = Path(__file__).with_name("advice.toml")
_WHEN_KEYS = {"signature", "outcome", "evidence", "reason", "kernel", "status", "finding", "no_evidence",
              "vanishes_with", "text"}
_DEBUG_SWITCHES = {"CUDA_LAUNCH_BLOCKING": "1", "HIP_LAUNCH_BLOCKING": "1", "AMD_SERIALIZE_KERNEL": "3"}


@dataclass(frozen=True)
class Advice:
    id: str
    step: str
    detail: str = ""
    when: dict = field(default_factory=dict)
    source: str = "builtin"


@dataclass
class Context:
    """What one run (and its investigation) tells the rules."""

    run: dict  # the run record (runner.RunResult.to_dict())
    text: str = ""  # attempt title + hypothesis + command
    history: Sequence[dict] = ()  # earlier runs of the same investigation (run records)
    warnings: list = field(default_factory=list)  # a user rule's regex that ran out of time, in words


def _parse(doc: dict, where: str) -> list[Advice]:
    out = []
    for i, e in enumerate(config.tables(doc, "advice", where)):
        aid, step = e.get("id"), e.get("step")
        if not isinstance(aid, str) or not re.fullmatch(r"[A-Za-z0-9_.:\-]+", aid):
            raise DbglogError(f"{where}: advice #{i + 1} needs an id of letters, digits, '.', '_', ':' or '-'")
        if not isinstance(step, str) or not step.strip() or "\n" in step.strip():
            raise DbglogError(f"{where}: advice {aid!r} needs a one-line 'step'")
        when = e.get("when", {})
        if not isinstance(when, dict) or set(when) - _WHEN_KEYS:
            raise DbglogError(f"{where}: advice {aid!r}: 'when' keys must be among {', '.join(sorted(_WHEN_KEYS))}")
        for k in ("kernel", "finding", "text"):
            if k in when:
                try:
                    re.compile(when[k])
                except (re.error, TypeError, OverflowError, RecursionError) as err:  # a{4294967296}: OverflowError
                    raise DbglogError(f"{where}: advice {aid!r}: bad regex in when.{k}: {err}") from None
        detail = e.get("detail", "")
        out.append(Advice(id=aid, step=step.strip(), detail=str(detail).replace("\n", " ").strip(), when=dict(when),
                          source=where))
    return out


def load(config_path: str | Path | None = None) -> list[Advice]:
    """The user's advice first (from config.toml, if any), then the built-in rules."""
    rules: list[Advice] = []
    if config_path:
        rules.extend(_parse(config.load(config_path), str(config_path)))
    rules.extend(_parse(config.parse(BUILTIN_FILE.read_text(encoding="utf-8")), "builtin"))
    seen: set[str] = set()
    out = []
    for r in rules:  # a user rule with a built-in's id replaces it
        if r.id not in seen:
            seen.add(r.id)
            out.append(r)
    return out


def _cmd(run: dict) -> str:
    return " ".join(shlex.quote(c) for c in run.get("cmd") or [])


def _switched(run: dict, var: str) -> bool:
    v = (run.get("env_overrides") or {}).get(var)
    return v is not None and v not in ("", "0")


def _vanishes(ctx: Context, names: Iterable[str]) -> bool:
    run = ctx.run
    names = list(names)
    if run.get("outcome") != "pass" or not any(_switched(run, n) for n in names):
        return False
    for h in ctx.history:
        if h.get("cmd") == run.get("cmd") and h.get("outcome") not in ("pass", "error") \
                and not any(_switched(h, n) for n in names):
            return True
    return False


def _search(rule: Advice, pattern: str, text: str, flags: int = 0, warnings: list | None = None) -> bool:
    """Does ``pattern`` of ``rule`` match ``text``? A user's regex runs under the user signatures' time
    budget (``(a+)+$`` against a title of 40 a's backtracks for hours): out of time is no match, and
    said in ``warnings`` (a rule that silently never fires would look like one that did not apply)."""
    if rule.source == "builtin":
        return re.search(pattern, text, flags) is not None
    from dbglog.diagnose import signatures

    probe = signatures.Signature(name="advice", patterns=(pattern,), rank=0, flags=flags, source=rule.source)
    slow: list[str] = []
    found = signatures.classify_text(text, [probe], max_key_lines=1, warnings=slow) is not None
    if slow and warnings is not None:
        msg = (f"advice rule {rule.id!r} ({rule.source}) was skipped: its pattern {pattern!r} ran out of time; "
               "simplify it (avoid nested quantifiers such as (a+)+)")
        if msg not in warnings:
            warnings.append(msg)
    return found


def _evidence_matches(rule: Advice, ev: dict, warnings: list | None = None) -> bool:
    when = rule.when
    if "evidence" in when and ev.get("kind") != when["evidence"]:
        return False
    if "reason" in when and when["reason"] not in (ev.get("reason") or ev.get("exception") or ""):
        return False
    if "kernel" in when and not _search(rule, when["kernel"], ev.get("kernel") or "", warnings=warnings):
        return False
    if "status" in when and ev.get("status") != when["status"]:
        return False
    if "finding" in when:
        blob = " ".join([ev.get("summary") or "", *(ev.get("findings") or [])])
        if not _search(rule, when["finding"], blob, warnings=warnings):
            return False
    return True


def _matches(rule: Advice, ctx: Context) -> dict | None:
    """The evidence the rule matched ({} when it needs none), or None."""
    w, run = rule.when, ctx.run
    if "signature" in w and not fnmatch.fnmatchcase(run.get("signature") or "", w["signature"]):
        return None
    if "outcome" in w and run.get("outcome") != w["outcome"]:
        return None
    evidence = run.get("evidence") or []
    if "no_evidence" in w and any(e.get("kind") == w["no_evidence"] for e in evidence):
        return None
    if "vanishes_with" in w:
        names = w["vanishes_with"] if isinstance(w["vanishes_with"], list) else [w["vanishes_with"]]
        if not _vanishes(ctx, names):
            return None
    if "text" in w and not _search(rule, w["text"], ctx.text or "", re.IGNORECASE, ctx.warnings):
        return None
    if {"evidence", "reason", "kernel", "status", "finding"} & set(w):
        for e in evidence:
            if _evidence_matches(rule, e, ctx.warnings):
                return e
        return None
    return {}


def _fill(template: str, ctx: Context, ev: dict) -> str:
    from dbglog.diagnose.evidence import short_kernel

    run = ctx.run
    op = ev.get("op") or {}
    kernel = short_kernel(ev.get("kernel")) or "the faulting kernel"
    values = {
        "cmd": _cmd(run) or "CMD", "signature": run.get("signature") or "",
        "kernel": kernel, "reason": ev.get("reason") or ev.get("exception") or "",
        "op": (op.get("op", "") + (f" on {op['dtype']}" if op.get("dtype") else "")) if op else kernel,
        "pc": ev.get("pc") or ev.get("errorpc") or "the PC", "core": ev.get("core") or "CORE",
        "code_object_file": ev.get("code_object_file") or ev.get("code_object") or "the saved code object",
        "site": next((k.get("text", "") for k in run.get("key_lines") or []), "")[:120],
        "access": ev.get("access") or "the access the report names",
        "timeout": str(max(60, int(3 * float(run.get("duration_s") or 20)))),
        # (a run that hung: its own timeout showed the hang, and shows it again)
        "hang_timeout": f"{float(run.get('timeout') or 0):g}" if run.get("timeout") else
        str(max(60, int(3 * float(run.get("duration_s") or 20)))),
    }
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), template)


def advise(ctx: Context, rules: Sequence[Advice]) -> list[dict]:
    """The steps that apply, most specific rule first, one per rule id: {id, step, detail}."""
    out = []
    for r in rules:
        ev = _matches(r, ctx)
        if ev is None:
            continue
        step = _fill(r.step, ctx, ev).replace("\n", " ").strip()
        detail = _fill(r.detail, ctx, ev).replace("\n", " ").strip()
        out.append({"id": r.id, "step": step, "detail": detail, "source": r.source})
    # The general "name the kernel" rules are noise once a more specific rule about the same fault
    # applied (e.g. an ASSERT_TRAP bound check): keep at most one of each family.
    if any(a["id"] == "assert-trap-index-bound" for a in out):
        out = [a for a in out if a["id"] != "assert-trap"]
    return out


def marker(advice_id: str) -> str:
    return f"[advice:{advice_id}]"


def apply_to_investigation(recs, inv_id: str, steps: Iterable[dict]) -> list:
    """Add each step to the investigation's next steps unless a step with its advice id is there
    already (in any state): the same advice is never added twice."""
    steps = list(steps)
    if not steps:
        return []
    # (read and added in one write transaction: runs finishing at once each read the list before any had added to
    # it, and four concurrent failing runs left four copies of one advice)
    with recs.store.write():
        existing = recs.store.load(inv_id).next_steps
        have = " ".join(f"{s.text} {s.detail}" for s in existing)
        added = []
        for a in steps:
            tag = marker(a["id"])
            if tag in have or a["step"] in have:
                continue
            detail = f"{tag} {a['detail']}".strip()
            added.append(recs.next_add(inv_id, a["step"], detail=detail))
            have += f" {tag} {a['step']}"
    return added
