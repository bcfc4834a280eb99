"""`dbglog hook`: memory that comes to the agent. Small commands for a coding agent's hook points.

    dbglog hook pre-command   # before a shell command runs: was this exact experiment already a failure?
    dbglog hook prompt        # on a prompt that looks like a debugging task: the 3 most relevant prior attempts
    dbglog hook session-start # a fresh or compacted session: the open investigations, under a token budget

Each reads the proposed shell command or the prompt on stdin, either as plain text or as the JSON
that Claude Code's hooks send (Gemini CLI's and Cursor's too: ``DIALECTS`` below), and prints a
short notice (or nothing). Claude Code's hook input
(hooks reference, https://code.claude.com/docs/en/hooks, formerly
https://docs.anthropic.com/en/docs/claude-code/hooks), as read here:

* every event: ``{"session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name", ...}``
* PreToolUse (matcher ``Bash``): ``"tool_name": "Bash", "tool_input": {"command": "...",
  "description": "...", "timeout": ..., "run_in_background": ...}, "tool_use_id": "..."``
* UserPromptSubmit: ``"prompt": "..."``

and its output: on exit 0, a UserPromptSubmit hook's stdout is added to the model's context, while
a PreToolUse hook's plain stdout is only shown in the transcript; both events take
``{"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": TEXT}}`` to put TEXT in
front of the model without deciding anything, which is what we print for JSON input
(``--format text`` forces plain text). Exit code 2 would *block* the tool call, so a hook here
never exits with anything but 0: bad input prints nothing (one line on stderr at most), an
internal error one ``dbglog hook: ...`` line on stderr.

The command notice: the proposed command is split into its simple commands (``&&``, ``||``, ``;``,
``|``, newlines), each normalised — env assignments (prefix, ``export``, ``env``) as a set, logging-only
variables (``NCCL_DEBUG``, ...) dropped; wrappers (``time``, ``timeout 60``, ``nohup``, ``dbglog run
... --``) stripped; the program's directory and python's version dropped; flags as a set between
two positional words (``--b 2 --a 1`` = ``--a=1 --b 2``); paths resolved from the working directory
and made relative to the workspace root; redirections dropped — and compared with what recorded
**failed or inconclusive** attempts did (their supervised runs' exact argv, cwd and env when they
have runs, else the commands in their "what was done" text: code spans, fenced lines, or the
lines themselves). Output filters and navigation (``cd``, ``tail``, ``grep``, ...) never match alone.

The circuit breaker: when the most recent supervised runs (``dbglog run``) of the same normalised
command, and failed attempts that did it, are N failures in a row with the same outcome and
signature (N = ``--threshold``, else ``[hook] breaker_threshold`` in config.toml, else 3), the
notice says so and points at a bisection instead of another retry.

Cheap on purpose (``bench/agent_bench.py``): ``pre-command`` imports the standard library only and
reads the database read-only (``Recorded``: as the last dbglog command left it, without the record
layer); ``prompt`` opens the workspace like any command and runs the search engine, but only for a
prompt that looks like a debugging task. Neither records anything.
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys

from dbglog.fastpath import one_line  # (stdlib only at import, like the hook)
from dbglog.util import jsonsafe

MAX_INPUT = 1 << 20  # a hook input larger than this is not a command or a prompt
# The part of a shell command the notice reads: an agent's command is a line or a short script, and the hook must
# answer well inside the agent's hook timeout whatever it is given (the lexer's cost grows with the square of a
# word's length: 1 MB took 20 s; each simple command costs a lookup among the attempts that ran its program).
NOTICE_TEXT = 64 << 10
NOTICE_COMMANDS = 16
NOTICE_ATTEMPTS = 3

# Variables that change only what is logged, not what runs: a retry with NCCL_DEBUG=INFO is a retry.
LOGGING_ENV = frozenset("""
NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE RCCL_DEBUG TORCH_CPP_LOG_LEVEL TORCH_SHOW_CPP_STACKTRACES
TORCH_LOGS TORCH_DISTRIBUTED_DEBUG PYTHONUNBUFFERED PYTHONFAULTHANDLER PYTHONDONTWRITEBYTECODE PYTHONWARNINGS
AMD_LOG_LEVEL HIP_TRACE_API GLOG_v GLOG_minloglevel TF_CPP_MIN_LOG_LEVEL RUST_BACKTRACE RUST_LOG LOGLEVEL
LOG_LEVEL VLLM_LOGGING_LEVEL TERM COLUMNS LINES NO_COLOR FORCE_COLOR CLICOLOR PAGER
""".split())
# Commands that only move around or filter output: never an experiment on their own.
TRIVIAL = frozenset("""
cd pushd popd echo printf cat ls ll tee head tail grep egrep fgrep rg less more wc sort uniq cut tr jq true
false : sleep pwd which type clear exit wait set unset date history alias source .
""".split())
WRAPPERS = frozenset("time nohup exec command builtin nice ionice stdbuf chrt taskset unbuffer sudo".split())
SEPARATORS = frozenset(["&&", "||", ";", "|", "|&", "&", ";;", "(", ")", "\n"])
PY_FLAGS = frozenset("-u -O -OO -B -E -s -S -I -q -b -bb -d -v -i -P".split())  # python's own, no value
FAILING = ("fail", "crash", "hang", "oom", "server_died", "server_not_ready")  # runner.OUTCOMES that failed

_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
_FILEISH = re.compile(r"\.(py|sh|bash|yaml|yml|json|toml|cfg|ini|txt|cu|cuh|cpp|cc|c|h|so|pt|pth|bin|ckpt|"
                      r"safetensors|onnx|log|md|csv)$", re.IGNORECASE)


# --- normalising a shell command ----------------------------------------------------------


def _lex(text: str) -> list[str]:
    import shlex

    lex = shlex.shlex(text, posix=True, punctuation_chars="();<>|&\n")
    lex.whitespace_split = True
    lex.whitespace = " \t\r"
    lex.commenters = ""
    try:
        return list(lex)
    except ValueError:  # an unclosed quote: words are still words
        return text.replace("\n", " \n ").split(" ")


def _segments(tokens: list[str]) -> list[list[str]]:
    """Simple commands, redirections (and a bare fd number before them) dropped."""
    segs, cur, skip = [], [], False
    for t in tokens:
        if skip:
            skip = False
            continue
        if t in SEPARATORS:
            if cur:
                segs.append(cur)
            cur = []
        elif t and set(t) <= set("<>&|") and any(c in t for c in "<>"):
            skip = True  # the redirection's target
            if cur and cur[-1].isdigit() and len(cur[-1]) == 1:
                cur.pop()  # 2>&1: the '2'
        elif t:
            cur.append(t)
    if cur:
        segs.append(cur)
    return segs


class Norm:
    """Paths: resolved against ``cwd``, relative to ``root`` when inside it. ``was``: where the
    checkout was when the command ran (a moved checkout, a teammate's clone): a path inside it is
    relative to it, so the command's identity does not depend on where the checkout lives."""

    def __init__(self, cwd: str, root: str, was: str | None = None):
        self.cwd, self.root, self.was = cwd, root, was

    def path(self, tok: str) -> str:
        if not tok or tok.startswith("-") or "://" in tok:
            return tok
        if not ("/" in tok or tok.startswith("~") or _FILEISH.search(tok)):
            return tok
        p = os.path.expanduser(tok)
        p = os.path.normpath(p if os.path.isabs(p) else os.path.join(self.cwd, p))
        for base in (self.root, self.was) if self.was else (self.root,):
            rel = os.path.relpath(p, base)
            if not (rel == ".." or rel.startswith(".." + os.sep)):
                return rel
        return p

    def value(self, tok: str) -> str:
        return self.path(tok)


def _strip_env(words: list[str], env: dict) -> list[str]:
    """`env [-u NAME] [A=1 ...] CMD` -> CMD (assignments into ``env``, unsets out of it)."""
    words = words[1:]
    while words and (words[0].startswith("-") or _ASSIGN.match(words[0])):
        if words[0] in ("-u", "--unset") and len(words) > 1:
            env.pop(words[1], None)
            words = words[1:]
        elif _ASSIGN.match(words[0]):
            k, _, v = words[0].partition("=")
            env[k] = v
        words = words[1:]
    return words


def _strip_plain_wrapper(w: str, words: list[str]) -> list[str]:
    """`nice -n 10 CMD`, `stdbuf -o L CMD`, `taskset -c 0-3 CMD`, `taskset MASK CMD` -> CMD."""
    words = words[1:]
    while words and words[0].startswith("-"):
        flag = words[0]
        words = words[1:]
        if flag in ("-n", "-o", "-e", "-i", "-c", "-p") and words and not words[0].startswith("-"):
            words = words[1:]  # nice -n 10, stdbuf -o L, ionice -c 3, taskset -c 0-3
    if w == "taskset" and words and not words[0].startswith("-") and len(words) > 1:
        words = words[1:]  # taskset MASK CMD
    return words


def _strip_timeout(words: list[str]) -> list[str]:
    """`timeout [-s SIG] [-k T] DURATION CMD` -> CMD."""
    words = words[1:]
    while words and words[0].startswith("-"):
        flag = words[0]
        words = words[1:]
        if flag in ("-s", "-k", "--signal", "--kill-after") and words:
            words = words[1:]
    return words[1:]  # the duration


def _strip_dbglog_run(words: list[str], env: dict) -> list[str]:
    """`dbglog run [--env A=1] ... -- CMD` -> CMD (its --env pairs into ``env``); [] without ``--``
    (dbglog's own options are not the experiment's)."""
    rest = words[2:]
    if "--" not in rest:
        return []
    pre, post = rest[:rest.index("--")], rest[rest.index("--") + 1:]
    for i, t in enumerate(pre):
        if t == "--env" and i + 1 < len(pre) and "=" in pre[i + 1]:
            k, _, v = pre[i + 1].partition("=")
            env[k] = v
    return post


def _strip_wrappers(words: list[str], env: dict) -> list[str]:
    """`env A=1 time timeout 60 nohup dbglog run --timeout 9 -- CMD` -> CMD (env gathered)."""
    while words:
        w = os.path.basename(words[0])
        if _ASSIGN.match(words[0]):
            k, _, v = words[0].partition("=")
            env[k] = v
            words = words[1:]
        elif w == "env":
            words = _strip_env(words, env)
        elif w in WRAPPERS:
            words = _strip_plain_wrapper(w, words)
        elif w == "timeout":
            words = _strip_timeout(words)
        elif w == "dbglog" and len(words) > 1 and words[1] == "run":
            words = _strip_dbglog_run(words, env)
            if not words:
                return []
        else:
            break
    return words


def normalize(words: list[str], env: dict, norm: Norm):
    """A simple command's key: (program, env, groups). Groups: (positional, flags as a set) in
    order; flags reorder freely between two positional words."""
    env = dict(env)
    words = _strip_wrappers(list(words), env)
    if not words:
        return None
    prog = norm.path(words[0]) if "/" in words[0] else words[0]
    if os.path.isabs(prog):  # a program outside the workspace (/usr/bin/torchrun): its name
        prog = os.path.basename(prog)
    python = bool(_PYTHON.match(prog))
    if python:
        prog = "python"
    groups: list[tuple[str, frozenset]] = []
    pos, flags = prog, []
    i = 1
    while i < len(words):
        t = words[i]
        if python and t == "-m" and i + 1 < len(words):
            groups.append((pos, frozenset(flags)))
            pos, flags = f"-m {words[i + 1]}", []
            i += 2
            continue
        if python and t == "-c" and i + 1 < len(words):
            groups.append((pos, frozenset(flags)))
            pos, flags = f"-c {' '.join(words[i + 1].split())}", []
            i += 2
            continue
        if t.startswith("-") and len(t) > 1 and t != "--":
            if python and t in PY_FLAGS:
                if t != "-u":  # unbuffered output only
                    flags.append((t, ""))
                i += 1
                continue
            if "=" in t and t.startswith("--"):
                k, _, v = t.partition("=")
                flags.append((k, norm.value(v)))
                i += 1
                continue
            nxt = words[i + 1] if i + 1 < len(words) else None
            if nxt is not None and not nxt.startswith("-"):
                flags.append((t, norm.value(nxt)))
                i += 2
            else:
                flags.append((t, ""))
                i += 1
            continue
        groups.append((pos, frozenset(flags)))
        pos, flags = norm.path(t), []
        i += 1
    groups.append((pos, frozenset(flags)))
    env = frozenset((k, v) for k, v in env.items() if k not in LOGGING_ENV and not k.startswith("DBGLOG_"))
    return (prog, env, tuple(groups))


def command_keys(text: str, cwd: str, root: str, env: dict | None = None) -> list[tuple]:
    """The keys of the experiments in a shell command line (trivial commands left out)."""
    norm = Norm(cwd, root)
    shell_env = dict(env or {})
    keys = []
    for seg in _segments(_lex(text)):
        if seg[0] in ("cd", "pushd") and len(seg) > 1:  # later commands run (and resolve paths) there
            norm = Norm(os.path.normpath(os.path.join(norm.cwd, os.path.expanduser(seg[1]))), root)
            continue
        if seg[0] == "export" or all(_ASSIGN.match(w) for w in seg):
            for w in seg:
                if _ASSIGN.match(w):
                    k, _, v = w.partition("=")
                    shell_env[k] = v
            continue
        key = normalize(seg, shell_env, norm)
        if key is not None and key[0] not in TRIVIAL:
            keys.append(key)
    return keys


def argv_key(argv: list[str], cwd: str, root: str, env: dict | None = None, was: str | None = None):
    """The key of a supervised run: its exact argument list, cwd and env overrides (``was``: the
    checkout's root when it ran, see ``Norm``)."""
    return normalize(list(argv), {k: v for k, v in (env or {}).items() if v is not None}, Norm(cwd, root, was))


def checkout_of(run_dir: str | None) -> str | None:
    """Where the checkout was when a run was recorded: its run folder is <root>/.dbglog/runs/..."""
    marker = os.sep + ".dbglog" + os.sep
    i = (run_dir or "").find(marker)
    return run_dir[:i] if i > 0 else None


def describe_key(key) -> str:
    """The normalised command as a shell line (env first, through `env`, so it runs as an argv too)."""
    import shlex

    prog, env, groups = key
    words = ["env", *(f"{k}={v}" for k, v in sorted(env))] if env else []
    for pos, flags in groups:
        words += pos.split(" ", 1) if pos.startswith(("-m ", "-c ")) else [pos]
        for f, v in sorted(flags):
            words += [f, v] if v else [f]
    return " ".join(shlex.quote(w) for w in words)


_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def did_commands(did: str) -> list[str]:
    """The shell commands in an attempt's "what was done": code spans and fenced lines, else its lines."""
    lines = did.splitlines()
    out, fence = [], False
    for ln in lines:
        s = ln.strip()
        if s.startswith("```") or s.startswith("~~~"):
            fence = not fence
            continue
        if fence:
            if s and not s.startswith("#"):
                out.append(s[2:] if s.startswith("$ ") else s)
            continue
        out += _CODE_SPAN.findall(ln)
    if out:
        return out
    return [re.sub(r"^(?:[-*+]\s+|\$\s+)", "", ln.strip()) for ln in lines if ln.strip()]


# --- what the workspace recorded ------------------------------------------------------------


def _anchors(key) -> list[str]:
    """Words the recorded text must contain for the key to match (a cheap SQL prefilter): the
    program's name and the most telling positional word (a file name first, else the longest)."""
    prog, _env, groups = key
    words = []
    for pos, _flags in groups[1:]:
        w = pos.split(" ", 1)[-1] if pos.startswith(("-m ", "-c ")) else pos
        base = os.path.basename(w) if not pos.startswith("-c ") else max(w.split(), key=len, default="")
        if len(base) >= 3:
            words.append(base)
    files = [w for w in words if "." in w or _FILEISH.search(w)]
    best = max(files or words, key=len, default="")
    return [a for a in (best, os.path.basename(prog)) if a]


def _like(word: str) -> str:
    # A prefix is as good a prefilter, and SQLite refuses a LIKE pattern over 50,000 bytes ("LIKE or GLOB
    # pattern too complex": a 100 KB one-word command made the hook print that instead of its notice).
    word = word[:1000]
    return "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


# A flag's value as the text must hold it, whatever the quoting: a plain word that no path rule rewrote.
_PLAIN_VALUE = re.compile(r"^[\w.,:+@%-]+$", re.ASCII)  # (ASCII: a run's argv is stored as JSON, escaping the rest)


def _value_anchors(key) -> list[str]:
    """The two longest flag values a recorded command must hold too (``--seed 17``): at 10,000 attempts running
    one program with other values, the program and file alone let every one through to be parsed (0.6 s)."""
    vals = {v for _pos, flags in key[2] for _f, v in flags
            if len(v) >= 2 and _PLAIN_VALUE.match(v) and "/" not in v and not _FILEISH.search(v)}
    return sorted(vals, key=lambda v: (-len(v), v))[:2]


def _likes(key, values: bool = False) -> list[str]:
    """LIKE patterns of the anchors; with ``values`` those of the flag values too (for a run's argv, stored as JSON:
    a plain value is in it as it is, where a hand-written "did" may quote or escape it)."""
    a = _anchors(key)
    return [_like(w) for w in (a + a)[:2] + (_value_anchors(key) if values else [])]


_QUOTING = str.maketrans("", "", "'\"\\")


def _holds(text: str, values: list[str]) -> bool:
    """Whether ``text`` holds every value, whatever shell quoting or escapes surround or split it."""
    if not values:
        return True
    bare = text.translate(_QUOTING)
    return all(v in bare for v in values)


def _all_like(column: str, likes: list[str]) -> str:
    return " AND ".join(f"{column} LIKE ? ESCAPE '\\'" for _ in likes)


def matching_attempts(recs, keys: list[tuple]) -> list[dict]:
    """Failed or inconclusive attempts that did one of ``keys``, most recent first."""
    root = str(recs.ws.root)
    found: dict[tuple, dict] = {}
    for key in keys:
        likes, values = _likes(key), _value_anchors(key)
        rows = recs.store.q(
            """SELECT a.investigation_id inv, a.number, a.title, a.did, a.result, a.conclusion, a.outcome, a.created,
                      a.runs, i.title inv_title, i.status FROM attempts a JOIN investigations i ON i.id = a.investigation_id
               WHERE a.outcome IN ('failed', 'inconclusive') AND """ + _all_like("a.did", likes), *likes)
        for r in rows:
            if (r["inv"], r["number"]) in found or not _holds(r["did"], values):
                continue
            if key in _attempt_keys(recs, r, root):
                found[(r["inv"], r["number"])] = dict(r)
        # attempts recorded by `dbglog run --attempt`: their runs' exact argv, cwd and env
        for run in _runs_like(recs, key):
            if run["attempt_number"] is None or (run["investigation_id"], run["attempt_number"]) in found:
                continue
            if _run_key(run, root) == key:
                r = recs.store.q(
                    """SELECT a.investigation_id inv, a.number, a.title, a.did, a.result, a.conclusion, a.outcome,
                              a.created, a.runs, i.title inv_title, i.status FROM attempts a
                       JOIN investigations i ON i.id = a.investigation_id
                       WHERE a.investigation_id = ? AND a.number = ? AND a.outcome IN ('failed', 'inconclusive')""",
                    run["investigation_id"], run["attempt_number"]).fetchone()
                if r is not None:
                    found[(r["inv"], r["number"])] = dict(r)
    return sorted(found.values(), key=lambda r: r["created"], reverse=True)


def _attempt_keys(recs, r, root: str) -> list[tuple]:
    """The keys of what an attempt ran, read once per notice (a chain of commands asks for the same attempts' keys
    once per command: 10 commands at 10,000 attempts took 6 s)."""
    memo = (r["inv"], r["number"], r["runs"], r["did"], root)
    if memo not in _READ:
        _READ[memo] = _read_attempt_keys(recs, r, root)
    return _READ[memo]


_READ: dict[tuple, list[tuple]] = {}  # attempts' keys, for one notice (``pre_command_notice`` clears it)


def _read_attempt_keys(recs, r, root: str) -> list[tuple]:
    run_ids = json.loads(r["runs"] or "[]")
    if run_ids:  # the runs know exactly what ran, and where
        keys = []
        for rid in run_ids:
            row = recs.store.q("SELECT cmd, cwd, result, run_dir FROM runs WHERE id = ?", rid).fetchone()
            if row is not None:
                keys.append(_run_key(row, root))
        if keys:
            return keys
    return [k for c in did_commands(r["did"]) for k in command_keys(c, root, root)]


def _runs_like(recs, key):
    return recs.store.q("""SELECT id, investigation_id, attempt_number, started, cmd, cwd, outcome, signature, result,
                                  run_dir
                           FROM runs WHERE """ + _all_like("cmd", likes := _likes(key, values=True)) +
                         " ORDER BY started DESC, id DESC LIMIT 500", *likes).fetchall()


def _run_key(row, root: str):
    try:
        env = json.loads(row["result"]).get("env_overrides") or {}
    except (ValueError, TypeError, AttributeError):
        env = {}
    was = checkout_of(row["run_dir"]) if "run_dir" in row.keys() else None  # noqa: SIM118 - sqlite3.Row
    cwd = row["cwd"] or root
    if was and was != root:  # recorded in a checkout since moved (or a teammate's): its cwd, here
        rel = os.path.relpath(cwd, was)
        cwd = cwd if rel == ".." or rel.startswith(".." + os.sep) else os.path.normpath(os.path.join(root, rel))
    return argv_key(json.loads(row["cmd"]), cwd, root, env, was)


def _is_bisect_run(row, root: str) -> bool:
    cwd = row["cwd"] or ""
    was = checkout_of(row["run_dir"]) if "run_dir" in row.keys() else None  # noqa: SIM118 - sqlite3.Row
    if any(cwd.startswith(os.path.join(r, ".dbglog")) for r in (root, was) if r):  # (a moved checkout too)
        return True
    try:
        env = json.loads(row["result"]).get("env_overrides") or {}
    except (ValueError, TypeError, AttributeError):
        return False
    return any(k.startswith("DBGLOG_") for k in env)


def breaker(recs, key, attempts: list[dict], threshold: int) -> dict | None:
    """N failures in a row, the same way, of this command: {count, outcome, signature, runs}."""
    root = str(recs.ws.root)
    events = []  # (when, outcome, signature, run id)
    for row in _runs_like(recs, key):
        if _is_bisect_run(row, root) or _run_key(row, root) != key:
            continue
        events.append((row["started"], row["outcome"], row["signature"], row["id"]))
    run_ids = {e[3] for e in events}
    for a in attempts:  # failed attempts recorded by hand (no supervised run of this command)
        if a["outcome"] == "failed" and not run_ids.intersection(json.loads(a["runs"] or "[]")):
            events.append((a["created"], "fail", None, None))
    events.sort(key=lambda e: e[0] or "", reverse=True)
    if not events or events[0][1] not in FAILING:
        return None
    streak = [e for e in _takewhile_same(events)]
    if len(streak) < threshold:
        return None
    return {"count": len(streak), "outcome": streak[0][1], "signature": streak[0][2],
            "runs": [e[3] for e in streak if e[3]]}


def _takewhile_same(events):
    first = (events[0][1], events[0][2])
    for e in events:
        if (e[1], e[2]) != first:
            return
        yield e


def _untested_rows(recs, inv_ids: list[str]) -> list[dict]:
    if not inv_ids:
        return []
    marks = ",".join("?" * len(inv_ids))
    return [dict(r) for r in recs.store.q(
        f"""SELECT investigation_id inv, factor, apply FROM differences WHERE status = 'untested'
            AND investigation_id IN ({marks}) ORDER BY investigation_id, position""", *inv_ids)]


def _threshold(recs, given: int | None) -> int:
    if given is not None:
        return given
    from dbglog.util import config  # (stdlib only, like the hook)

    return config.breaker_threshold(recs.ws.config_path)  # shared with `attempt add`


class Recorded:
    """What ``pre-command`` reads: the workspace's database, read-only, found as ``workspace.find``
    finds it, without the record layer (its imports — dataclasses, the mirror — would cost more
    than the whole check). It reads the database as the last dbglog command left it: a hand edit of
    ``logs/`` since then is seen from the next command on."""

    def __init__(self, dotdir: str):
        import sqlite3
        from types import SimpleNamespace

        self.ws = SimpleNamespace(root=os.path.dirname(dotdir), config_path=os.path.join(dotdir, "config.toml"))
        db = os.path.join(dotdir, "dbglog.db")
        if not os.path.isfile(db):
            raise FileNotFoundError(db)
        # (a URI: '%', '?' and '#' in a directory name must be escaped, or SQLite opens another file)
        uri = "file:" + db.replace("%", "%25").replace("?", "%3f").replace("#", "%23") + "?mode=ro"
        self.conn = sqlite3.connect(uri, uri=True, timeout=5)
        try:
            self.conn.execute("SELECT 1 FROM sqlite_master LIMIT 1")
        except sqlite3.OperationalError:
            # a read-only workspace (a mount, a CI artifact): WAL wants to create its -shm file beside the
            # database; with nobody able to write, reading the file as it stands is exact
            self.conn.close()
            self.conn = sqlite3.connect(uri + "&immutable=1", uri=True, timeout=5)
        self.conn.row_factory = sqlite3.Row
        self.store = self

    @staticmethod
    def find(cwd: str) -> str | None:
        """The .dbglog directory that applies in ``cwd`` (``DBGLOG_DIR``, else the nearest one up)."""
        env = os.environ.get("DBGLOG_DIR")
        if env:
            p = os.path.abspath(os.path.expanduser(env))
            return p if os.path.isdir(p) else None
        p = os.path.abspath(cwd)
        while True:
            if os.path.isdir(os.path.join(p, ".dbglog")):
                return os.path.join(p, ".dbglog")
            parent = os.path.dirname(p)
            if parent == p:
                return None
            p = parent

    def q(self, sql: str, *args):
        return self.conn.execute(sql, args)

    def current(self) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'current'").fetchone()
        return row[0] if row else None

    def close(self) -> None:
        self.conn.close()


# --- the notices ---------------------------------------------------------------------------------


def _one_line(s: str, n: int = 160) -> str:
    return one_line(s, n)


# Failure fingerprints (issue 27, dbglog/kb/failures.py), read with plain SQL: the hook imports no more.
_FP_ROWS = """SELECT f.fp, f.signature, f.line, coalesce(f.investigation_id, r.investigation_id) AS inv,
                     coalesce(f.attempt_number, r.attempt_number) AS att
              FROM failures f LEFT JOIN runs r ON f.source = 'run' AND r.id = f.ref"""


def _fingerprints(db, inv: str, number: int | None = None) -> list:
    """The exact fingerprints an investigation (or one attempt of it) failed with, most recent first;
    none in a database older than the fingerprints."""
    import sqlite3

    sql = f"SELECT * FROM ({_FP_ROWS} ORDER BY f.seen DESC) WHERE inv = ?" + (" AND att = ?" if number else "")
    try:
        rows = db.q(sql, inv, *([number] if number else [])).fetchall()
    except sqlite3.OperationalError:  # (no failures table yet)
        return []
    return list({r["fp"]: r for r in rows}.values())


def _seen_elsewhere(db, inv: str) -> list[str]:
    """"seen before" lines of the digest: the other investigations that failed with this one's
    fingerprints (status, root cause, the attempt that worked)."""
    out = []
    for fp in _fingerprints(db, inv)[:2]:
        others = db.q(f"""SELECT DISTINCT i.id, i.title, i.status, i.root_cause FROM ({_FP_ROWS}) x
                          JOIN investigations i ON i.id = x.inv WHERE x.fp = ? AND x.inv != ?""", fp["fp"], inv).fetchall()
        for o in others[:2]:
            worked = db.q("""SELECT number, title FROM attempts WHERE investigation_id = ? AND outcome = 'worked'
                             ORDER BY number DESC LIMIT 1""", o["id"]).fetchone()
            out.append(f"seen before: {fp['fp']} [{fp['signature']}] also in {o['id']} ({o['status']}"
                       + (f"; root cause: {_one_line(o['root_cause'], 100)}" if o["root_cause"] else "")
                       + (f"; worked: #{worked['number']} {_one_line(worked['title'], 60)}" if worked else "") + ")")
    return out


def pre_command_notice(recs, command: str, cwd: str, threshold: int | None = None) -> str:
    """The notice before a shell command: failed fixes it repeats (the same command, or the same knob
    settings beyond the investigation's repro command), a circuit breaker, and env settings a toggle
    bisection or a key-differences row proved bad. A plain re-run of a repro command is not a repeat."""
    root = str(recs.ws.root)
    _READ.clear()  # (the records may have changed since the last notice of this process: an MCP server's)
    keys = command_keys(command[:NOTICE_TEXT], cwd, root)[:NOTICE_COMMANDS]
    if not keys:
        return ""
    repros = _Repros(recs, root)
    attempts = [a for a in matching_attempts(recs, keys) if not _is_repro(a, keys, repros)]
    lines = []
    if attempts:
        lines.append(f"dbglog: this was tried before — {len(attempts)} recorded attempt(s) that ran the same "
                     "command ended badly:")
        lines += _attempt_lines(recs, attempts)
    else:
        repeats = _knob_repeats(recs, keys, repros, root)
        if repeats:
            lines.append(f"dbglog: this repeats a failed fix — {len(repeats)} recorded attempt(s) changed the same "
                         "settings beyond the repro command and ended badly:")
            lines += _attempt_lines(recs, repeats, settings=True)
    lines += _proven_bad(recs, keys)
    lines += _breaker_lines(recs, keys, attempts, root, threshold)
    return "\n".join(lines)


def _attempt_lines(recs, attempts: list[dict], settings: bool = False) -> list[str]:
    lines = []
    for a in attempts[:NOTICE_ATTEMPTS]:
        lines.append(f"- [{a['outcome'].upper()}] attempt {a['number']} \"{_one_line(a['title'] or a['did'], 80)}\""
                     f" in {a['inv']} ({_one_line(a['inv_title'], 60)}, {a['status']})")
        if settings and a.get("settings"):
            lines.append(f"  the same settings: {_one_line(a['settings'], 120)}")
        if a["conclusion"]:
            lines.append(f"  conclusion: {_one_line(a['conclusion'])}")
        if a["result"]:
            lines.append(f"  result: {_one_line(a['result'])}")
        for fp in _fingerprints(recs.store, a["inv"], a["number"])[:1]:  # the failure this fix did not fix
            lines.append(f"  failed against {fp['fp']} [{fp['signature']}]: {_one_line(fp['line'], 120)}")
    if len(attempts) > NOTICE_ATTEMPTS:
        lines.append(f"  ... and {len(attempts) - NOTICE_ATTEMPTS} more (`dbglog search` the command)")
    return lines


def _breaker_lines(recs, keys, attempts, root: str, threshold) -> list[str]:
    n = _threshold(recs, threshold)
    for key in keys:
        b = breaker(recs, key, [a for a in attempts if key in _attempt_keys(recs, a, root)], n)
        if b is None:
            continue
        how = b["outcome"] + (f" [{b['signature']}]" if b["signature"] else "")
        runs = f" (runs {', '.join(b['runs'][:3])}{' ...' if len(b['runs']) > 3 else ''})" if b["runs"] else ""
        lines = [f"dbglog: circuit breaker: `{_one_line(describe_key(key), 100)}` failed {b['count']} times in a "
                 f"row, the same way: {how}{runs}. Stop re-running it; change one thing and record it, or bisect."]
        invs = sorted({a["inv"] for a in attempts}) or ([recs.current()] if recs.current() else [])
        rows = _untested_rows(recs, invs)
        cmd = _one_line(describe_key(key), 200)
        if rows:
            lines.append(f"  untested key differences: {', '.join(r['factor'] for r in rows[:5])}"
                         + (f" -> `dbglog bisect toggles --from-diffs -- {cmd}`" if any(r["apply"] for r in rows)
                            else " (give them --apply specs, then `dbglog bisect toggles --from-diffs -- CMD`)"))
        else:
            lines.append(f"  a last good commit? `dbglog bisect git --good REV --bad HEAD -- {cmd}`")
        return lines
    return []


# --- a repro is not a fix; a fix is its settings beyond the repro -----------------------------------

# (search.diagnostic_kind's rule for a baseline, stdlib here)
_REPRO_TITLE = re.compile(r"^\s*(?:baseline|reproduc\w*|repro)\b|\bbaseline (?:run|repro)\b", re.IGNORECASE)


class _Repros:
    """Each investigation's repro commands, read on demand (for the investigations a notice is about):
    its baseline / repro attempts' and its first supervised run's."""

    def __init__(self, recs, root: str):
        self.recs, self.root, self.keys = recs, root, {}

    def get(self, inv: str) -> list[tuple]:
        if inv not in self.keys:
            q = self.recs.store.q
            # its first run, unless that run was recorded as a fix (`run --attempt TITLE`, TITLE no baseline)
            out = [_run_key(r, self.root) for r in q(
                """SELECT r.cmd, r.cwd, r.result, a.title FROM runs r LEFT JOIN attempts a
                   ON a.investigation_id = r.investigation_id AND a.number = r.attempt_number
                   WHERE r.investigation_id = ? ORDER BY r.started, r.id LIMIT 1""", inv)
                if r["title"] is None or _REPRO_TITLE.search(r["title"])]
            for a in q("""SELECT investigation_id inv, number, title, did, runs FROM attempts WHERE investigation_id = ?
                          AND (title LIKE '%base%' OR title LIKE '%repro%')""", inv):
                if _REPRO_TITLE.search(a["title"] or ""):
                    out += _attempt_keys(self.recs, a, self.root)
            self.keys[inv] = out
        return self.keys[inv]


def _is_repro(a: dict, keys: list[tuple], repros: _Repros) -> bool:
    """A matched attempt that is only the repro: a baseline, or run with the investigation's repro command."""
    return bool(_REPRO_TITLE.search(a["title"] or "")) or any(k in repros.get(a["inv"]) for k in keys)


def _settings(key) -> set:
    """A command's knob settings: its env pairs and every flag with its value."""
    _prog, env, groups = key
    return set(env) | {f for _pos, flags in groups for f in flags}


def _skeleton(key) -> tuple:
    """The command without its settings: program and positional words."""
    return key[0], tuple(pos for pos, _f in key[2])


def _delta(key, repro_keys) -> frozenset | None:
    """The settings ``key`` changes beyond a repro command of the same program and positional words."""
    for r in repro_keys:
        if _skeleton(r) == _skeleton(key):
            return frozenset(_settings(key) - _settings(r))
    return None


def _knob_repeats(recs, keys, repros: _Repros, root: str) -> list[dict]:
    """Failed or inconclusive fix attempts whose settings beyond their investigation's repro command are
    the ones this command changes beyond it (another script path or flag order does not hide a repeat)."""
    found = {}
    # the env vars first (a fix is most often one), then the flags; a few are enough to find it
    env = sorted({k for key in keys for k, _v in key[1] if len(k) >= 3}, key=len, reverse=True)
    flags = sorted({f for key in keys for _p, fl in key[2] for f, _v in fl if len(f) >= 4}, key=len, reverse=True)
    names = (env + flags)[:4]
    if not names:
        return []
    where = " OR ".join("a.did LIKE ? ESCAPE '\\' OR a.title LIKE ? ESCAPE '\\'" for _ in names)
    args = [x for n in names for x in (_like(n), _like(n))]
    rows = recs.store.q(
        f"""SELECT a.investigation_id inv, a.number, a.title, a.did, a.result, a.conclusion, a.outcome, a.created,
                   a.runs, i.title inv_title, i.status FROM attempts a JOIN investigations i ON i.id = a.investigation_id
            WHERE a.outcome IN ('failed', 'inconclusive') AND ({where}) LIMIT 200""", *args)
    for r in rows:
        if _REPRO_TITLE.search(r["title"] or "") or _BISECTION.match(r["did"] or ""):
            continue
        rk = repros.get(r["inv"])
        if not rk or _REPRO_TITLE.search(r["title"] or "") or _BISECTION.match(r["did"] or ""):
            continue
        fixes = [f for f in (_delta(ak, rk) for ak in _attempt_keys(recs, r, root)) if f]
        fixes = fixes or [_text_settings(f"{r['title']}\n{r['did']}")]  # told in words: "set X=1 and reran"
        for fix in fixes:
            if fix and any(_delta(k, rk) == fix for k in keys):
                found[(r["inv"], r["number"])] = dict(r) | {"settings": " ".join(
                    f"{k}={v}" if v or not k.startswith("-") else k for k, v in sorted(fix))}
                break
    return sorted(found.values(), key=lambda a: a["created"], reverse=True)


_TEXT_ENV = re.compile(r"(?<![\w$.\-/])([A-Z][A-Z0-9_]*[A-Z0-9])=([^\s,;)`'\"\u3000-\u30ff\u3400-\u9fff\uac00-\ud7af\uff00-\uffef]+)")
_TEXT_FLAG = re.compile(r"(?<![\w/.\-])(--[A-Za-z][\w.\-]*)(?:=| +)([^\s\-`'\",;)][^\s`'\",;)]*)")


def _text_settings(text: str) -> frozenset:
    """The settings an attempt's words give (``set REQUEST_QUEUE_SIZE=128``, ``--max-num-seqs 64``)."""
    env = {(m.group(1), m.group(2)) for m in _TEXT_ENV.finditer(text) if m.group(1) not in LOGGING_ENV}
    return frozenset(env | {(m.group(1), m.group(2)) for m in _TEXT_FLAG.finditer(text)})


# --- settings proven bad: a toggle bisection's failing set, a culprit key-differences row ----------

_ENV_ARG = re.compile(r"--env(-off)?[ =]([A-Za-z_]\w*)=(\S*)")


def _bad_sets(recs) -> list[tuple[dict, str]]:
    """(env settings that fail together, where that was proven)."""
    out = []
    for r in recs.store.q("""SELECT investigation_id inv, factor, working, broken, apply FROM differences
                             WHERE status = 'culprit' AND apply LIKE 'env:%'"""):
        spec = r["apply"][4:].strip()
        name, eq, val = spec.partition("=")
        val = val if eq else (r["broken"] or "").strip()
        if val and val.lower() not in ("unset", "-", "none"):
            out.append(({name.strip(): val}, f"key difference '{r['factor']}' of {r['inv']} is the culprit"))
    for a in recs.store.q("""SELECT investigation_id inv, number, title, did, conclusion FROM attempts
                             WHERE title LIKE 'Toggle bisection:%' AND outcome = 'worked'"""):
        on, off = {}, {}
        for m in _ENV_ARG.finditer(a["did"] or ""):
            (off if m.group(1) else on)[m.group(2)] = m.group(3)
        disable = "off alone brings" in (a["conclusion"] or "") or "all off" in (a["conclusion"] or "")
        for part in a["title"].split(":", 1)[1].split(","):
            names = [n.strip() for n in part.split("+") if n.strip()]
            values = off if disable else on
            if names and all(n in values for n in names):
                out.append(({n: values[n] for n in names},
                            f"toggle bisection attempt {a['number']} of {a['inv']}: {_one_line(a['conclusion'], 100)}"))
    return out


def _proven_bad(recs, keys) -> list[str]:
    env = {k: v for key in keys for k, v in key[1]}
    if not env:
        return []
    lines = []
    for bad, where in _bad_sets(recs):
        if all(env.get(k) == v for k, v in bad.items()):
            both = " + ".join(f"{k}={v}" for k, v in bad.items())
            lines.append(f"dbglog: this command sets {both}, proven to cause the failure ({where}).")
    return lines[:NOTICE_ATTEMPTS]


_STRONG = (
    r"\b(bugs?|debug\w*|errors?|exceptions?|traceback|crash\w*|hang\w*|hung|stall\w*|deadlock\w*|races?|racy|"
    r"flak\w+|fail\w*|regress\w*|segfault\w*|segmentation|sigsegv|sigabrt|sigkill|core ?dump\w*|oom|"
    r"out of memory|nan|illegal|fault\w*|timeouts?|timed out|diagnos\w*|bisect\w*|root cause|stack ?trace|"
    r"assert\w*|panic\w*|leak\w*|corrupt\w*|killed|abort\w*|stuck|freez\w*|diverg\w*|xid|fell off|"
    r"recompil\w*)\b|\b\w+(Error|Exception)\b|exit (code|status) \d+", re.IGNORECASE)
_WEAK = (
    r"\b(fix\w*|broken|breaks?|wrong|invalid|mismatch\w*|not working|does ?n[o']t work|investigat\w*|repro\w*|"
    r"slow(er|down)?|unstable|instabilit\w*|throttl\w*|degrad\w*|does ?n[o']t|did ?n[o']t|won'?t|can'?t|cannot|"
    r"unable|no longer|stopped|why)\b", re.IGNORECASE)


# Words that say "this is a debugging task" but not which bug: never what makes an attempt relevant.
GENERIC = frozenset("""
error errors fail fails failed failing failure crash crashes crashed bug bugs fix fixes fixed debug debugging
issue issues problem problems broken wrong why investigate investigation please help again work works working
still happens happen getting get see job jobs run runs running test tests code figure out new our we it
please thanks can could would you help look into
""".split())


def looks_like_debugging(prompt: str) -> bool:
    """A failure word ("hangs", "RuntimeError", "exit code 139"), or two weaker ones ("why ... wrong")."""
    strong, weak = _debug_words()
    return bool(strong.search(prompt or "")) or len(weak.findall(prompt or "")) >= 2


@functools.lru_cache(maxsize=None)
def _debug_words():  # compiled on first use: the command hook never needs them
    return re.compile(*_STRONG), re.compile(*_WEAK)


def prompt_notice(recs, prompt: str, limit: int = NOTICE_ATTEMPTS) -> str:
    """The most relevant prior attempts for a debugging prompt: close ones (`tried`) first, then
    search hits that share at least two telling words (or one identifier) with the prompt."""
    import math

    from dbglog import ops
    from dbglog.kb import search
    from dbglog.util.errors import DbglogError

    text = " ".join(prompt.split())[:search.MAX_QUERY_CHARS]
    try:
        res = ops.tried(recs, text, limit=10)
    except DbglogError:  # a prompt the search refuses (no words) is not worth a line
        return ""
    q = res.result.query
    # how many records the weights were counted over (as search.weigh counts them)
    n = sum(min(search.DF_CAP, recs.store.q(f"SELECT coalesce(max(rowid), 0) FROM {t}").fetchone()[0])
            for t in ("attempts", "sections"))
    def held_by_at_most(share: float, least: float) -> float:  # the weight of a word that many records hold
        return math.log(1 + n / (1 + max(least, share * n)))

    specific_of = getattr(search, "_specific", lambda t: False)
    specific = {t.raw.lower() for t in q.active if specific_of(t)}
    words = [t for t in q.active if not t.stop and t.kind != "typo" and not {w.lower() for w in t.parts} <= GENERIC]
    telling = {t.raw.lower() for t in words if t.weight >= held_by_at_most(0.15, 5)} | specific
    rare = {t.raw.lower() for t in words if t.weight >= held_by_at_most(0.02, 3)} | specific
    # A prompt is long: `tried`'s closeness (made for a short idea) is not enough. An investigation (or a
    # watched doc) is relevant when its hits share an identifier with the prompt, three telling words, or two
    # of which one is rare (two common English words never make a match); then its close attempts come
    # first, then its other attempts in search order.
    shared: dict[str, set] = {}
    for h in res.result.hits:
        shared.setdefault(h.investigation or h.path, set()).update(m.lower() for m in h.matched_terms)
    relevant = {k for k, m in shared.items()
                if m & specific or len(m & telling) >= 3 or (len(m & telling) >= 2 and m & rare)}
    order = [h for h in res.close if h.kind == "attempt"] + [h for h in res.close if h.kind != "attempt"] + \
        [h for h in res.result.hits if h.kind == "attempt" and h not in res.close and h not in res.mentioned]
    picked = []
    for h in order:
        if (h.investigation or h.path) in relevant and h not in picked:
            picked.append(h)
    picked = picked[:limit]
    if not picked:
        return ""
    lines = ["dbglog: prior attempts that look relevant to this task (`dbglog tried \"IDEA\"` before trying a fix):"]
    for k, h in enumerate(picked, 1):
        where = f"in {h.investigation} ({_one_line(h.investigation_title, 60)}, {h.status})"
        label = (h.fields.get("diagnostic") or h.outcome or "noted").upper()  # a bisection: what it found
        if h.kind == "attempt":
            lines.append(f"{k}. [{label}] attempt {h.number} \"{_one_line(h.title, 80)}\" {where}")
            if h.fields.get("conclusion"):
                lines.append(f"   conclusion: {_one_line(h.fields['conclusion'])}")
            elif h.fields.get("result"):
                lines.append(f"   result: {_one_line(h.fields['result'])}")
        elif h.kind == "difference":
            lines.append(f"{k}. [{label}] key difference {h.number} \"{_one_line(h.title, 80)}\" (working: "
                         f"{_one_line(h.fields['working'], 40)}, broken: {_one_line(h.fields['broken'], 40)}) {where}")
        elif h.kind == "next":
            lines.append(f"{k}. [{label}] next step {h.number} \"{_one_line(h.title, 80)}\" {where}")
        elif h.kind == "investigation":
            lines.append(f"{k}. [{label}] investigation \"{_one_line(h.title, 80)}\" ({h.investigation})")
        else:
            lines.append(f"{k}. [{label}] {_one_line(h.title, 80)} ({h.path}:{h.line}): {_one_line(h.line_text)}")
    return "\n".join(lines)


# --- the session-start digest ------------------------------------------------------------------

DIGEST_BUDGET = 1500  # tokens: what a fresh or compacted agent gets before its first turn
DIGEST_ATTEMPTS = 3
DIGEST_DIFFS = 5
DIGEST_STEPS = 3
DIGEST_FULL = 3  # investigations shown whole; the others in two lines (the most recent first)


def estimate_tokens(text: str) -> int:
    """A conservative token count: ~3.5 characters a token (identifiers, paths and flags, which this
    text is full of, tokenize worse than English prose's ~4), and never fewer than its words."""
    return max(-(-len(text) * 2 // 7), len(text.split()))


_BISECTION = re.compile(r"\s*(?:dbglog\s+bisect|git\s+bisect)\b")  # (search.diagnostic_kind's rule, stdlib here)


def _digest_block(db, inv, full: bool) -> list[str]:
    """One investigation: title and symptom; with ``full`` its last attempts, untested key
    differences and the top of the what-to-try-next list."""
    n = db.q("SELECT count(*) FROM attempts WHERE investigation_id = ?", inv["id"]).fetchone()[0]
    lines = [f"## {_one_line(inv['title'], 100)} ({inv['id']}, {n} attempt(s))"]
    if inv["symptom"].strip():
        lines.append(f"symptom: {_one_line(inv['symptom'], 200 if full else 120)}")
    last = db.q("""SELECT number, title, did, outcome, conclusion, result FROM attempts WHERE investigation_id = ?
                   ORDER BY number DESC LIMIT ?""", inv["id"], DIGEST_ATTEMPTS if full else 1).fetchall()
    if last:
        lines.append("last attempts:" if full else "last attempt:")
    for a in last:
        why = a["conclusion"] or a["result"]
        diag = _BISECTION.match(a["did"] or "") or (a["title"] or "").lower().startswith(("bisect:", "toggle bisection:"))
        lines.append(f"- {a['number']}. [{'BISECTION' if diag else a['outcome'].upper()}] "
                     f"{_one_line(a['title'] or a['did'], 80)}"
                     + (f" — {_one_line(why, 140 if full else 80)}" if why.strip() else ""))
    if not full:
        return lines
    lines += _seen_elsewhere(db, inv["id"])
    rows = db.q("""SELECT factor, working, broken, apply FROM differences WHERE investigation_id = ?
                   AND status = 'untested' ORDER BY position""", inv["id"]).fetchall()
    if rows:
        lines.append("untested key differences (working vs broken):")
        for r in rows[:DIGEST_DIFFS]:
            lines.append(f"- {_one_line(r['factor'], 60)}: {_one_line(r['working'], 40)} vs {_one_line(r['broken'], 40)}"
                         + (" [bisectable]" if r["apply"] else ""))
        if len(rows) > DIGEST_DIFFS:
            lines.append(f"- ... {len(rows) - DIGEST_DIFFS} more (`dbglog diff list -i {inv['id']}`)")
        if any(r["apply"] for r in rows):
            lines.append("  -> `dbglog bisect toggles --from-diffs -- CMD` tests them all")
    steps = db.q("""SELECT position, text FROM next_steps WHERE investigation_id = ? AND status = 'todo'
                    ORDER BY position LIMIT ?""", inv["id"], DIGEST_STEPS).fetchall()
    if steps:
        lines.append("next to try:")
        lines += [f"- {s['position']}. {_one_line(s['text'], 120)}" for s in steps]
    return lines


def session_digest(db, budget: int = DIGEST_BUDGET) -> str:
    """The open investigations (the current one first, then the most recently updated) as a digest
    that fits ``budget`` tokens (``estimate_tokens``): the first ``DIGEST_FULL`` whole while they
    fit, the others as title, symptom and last attempt, then a count of the rest. Empty when
    nothing is open."""
    cur = db.current()
    invs = db.q("""SELECT id, title, symptom, updated FROM investigations WHERE status = 'open'
                   ORDER BY (id = ?) DESC, updated DESC, id""", cur or "").fetchall()
    if not invs:
        return ""
    head = [f"dbglog: {len(invs)} open investigation(s) in this workspace. Before trying a fix, "
            "`dbglog tried \"IDEA\"` (exit 0 = already tried: read its outcome); record with "
            "`dbglog attempt add` or `dbglog run --attempt TITLE -- CMD`; `dbglog agent-guide` has the protocol."]
    used = estimate_tokens("\n".join(head))
    if used > budget:  # (a budget smaller than the preamble got the preamble anyway, over it)
        short = f"dbglog: {len(invs)} open investigation(s): `dbglog list --status open`"
        return short if estimate_tokens(short) <= budget else ""
    out = list(head)
    for k, inv in enumerate(invs):
        rest = len(invs) - k - 1
        tail = estimate_tokens(f"... and {len(invs)} more open: `dbglog list --status open`") + 2
        for full in ((True, False) if k < DIGEST_FULL else (False,)):
            block = _digest_block(db, inv, full)
            cost = estimate_tokens("\n".join(block)) + 1
            if used + cost + (tail if rest else 0) <= budget:
                out += block
                used += cost
                break
        else:
            out.append(f"... and {len(invs) - k} more open: `dbglog list --status open`")
            break
    return "\n".join(out)


# --- the entry point ---------------------------------------------------------------------------

USAGE = """usage: dbglog hook pre-command|prompt|session-start [--format auto|text|claude|gemini|cursor] [--json]
                   [--threshold N] [--budget TOKENS]

Reads the proposed shell command (pre-command) or the prompt (prompt) on stdin, as plain text or as
the JSON a hook of Claude Code (PreToolUse, UserPromptSubmit), Gemini CLI (BeforeTool, BeforeAgent)
or Cursor (beforeShellExecution, preToolUse) sends; prints a short notice or nothing, in the
answer shape of the agent that sent it (--format auto). session-start prints a digest of the open
investigations (stdin: nothing, or a SessionStart / sessionStart hook's JSON) under --budget tokens
(default 1500). Always exits 0 (see README, "For coding agents")."""


EVENTS = ("pre-command", "prompt", "session-start")


def _parse(argv: list[str]):
    """(event, format, threshold or budget): --threshold for pre-command, --budget for session-start."""
    event, fmt, number = None, "auto", None
    it = iter(argv)
    for a in it:
        if a in ("-h", "--help"):
            return "help", fmt, number
        if a == "--json":  # (every command takes --json: here the JSON is the hook output's shape)
            fmt = "json"  # the sender's shape, Claude Code's when the input does not tell
        elif a.startswith("--format"):
            fmt = a.split("=", 1)[1] if "=" in a else next(it, "auto")
        elif a.startswith(("--threshold", "--budget")):
            value = a.split("=", 1)[1] if "=" in a else next(it, "")
            try:
                number = int(value)
            except ValueError:  # (int()'s own message named Python, not the option)
                raise ValueError(f"{a.split('=', 1)[0]} takes a number >= 1, got {value!r}") from None
        elif event is None and not a.startswith("-"):
            event = a
        else:
            raise ValueError(f"unknown argument {a!r}")
    if event is None:
        raise ValueError("name the hook point: pre-command, prompt or session-start (docs/agents.md wires them)")
    if event not in EVENTS:
        raise ValueError(f"unknown hook {event!r}: use pre-command, prompt or session-start")
    if fmt not in ("auto", "json", "text", *DIALECTS) or (number is not None and number < 1):
        raise ValueError(f"--format is auto, text, {', '.join(DIALECTS)}; --threshold and --budget are numbers >= 1")
    return event, fmt, number


# Whose hook sent the JSON, told by its event name (the agents name them differently), and how that
# agent takes a notice without a decision. Sources: Claude Code's hooks reference (module docstring);
# Gemini CLI's docs/hooks/reference.md (BeforeTool: tool_name "run_shell_command", tool_input.command;
# only ``systemMessage`` reaches the user there, the model gets nothing short of a denial;
# BeforeAgent and SessionStart take ``hookSpecificOutput.additionalContext``); Cursor's hooks
# (beforeShellExecution: ``command`` and ``cwd`` at the top level, answered with ``permission`` and
# ``agent_message``; preToolUse for its "Shell" tool; sessionStart: ``additional_context``;
# beforeSubmitPrompt takes no context at all, so the prompt hook says nothing there).
DIALECTS = ("claude", "gemini", "cursor")
_EVENT_DIALECT = {"PreToolUse": "claude", "UserPromptSubmit": "claude", "SessionStart": "claude",
                  "BeforeTool": "gemini", "BeforeAgent": "gemini",
                  "beforeShellExecution": "cursor", "preToolUse": "cursor", "sessionStart": "cursor",
                  "beforeSubmitPrompt": "cursor"}
SHELL_TOOLS = (None, "Bash", "run_shell_command", "Shell")  # Claude Code's, Gemini CLI's, Cursor's


def _answer(dialect: str, event: str, hook_event: str | None, notice: str) -> dict:
    """The JSON that puts ``notice`` before the agent's model without deciding anything (Cursor's
    prompt hook has no such channel: ``run`` stops before it)."""
    if dialect == "cursor":
        if event == "pre-command":
            return {"permission": "allow", "agent_message": notice}
        return {"additional_context": notice}
    if dialect == "gemini" and event == "pre-command":
        return {"systemMessage": notice}  # (BeforeTool: shown to the user; the model would need a denial)
    # (a forced --format gemini on plain input: Gemini CLI's own event name, not Claude Code's)
    prompt_event = "BeforeAgent" if dialect == "gemini" else "UserPromptSubmit"
    name = hook_event or {"pre-command": "PreToolUse", "prompt": prompt_event}.get(event, "SessionStart")
    return {"hookSpecificOutput": {"hookEventName": name, "additionalContext": notice}}


def _read_input(stdin) -> tuple[str, dict | None]:
    try:
        if stdin.isatty():  # `dbglog hook session-start` typed in a terminal: nothing to wait for
            return "", None
    except (AttributeError, ValueError):
        pass
    data = stdin.buffer.read(MAX_INPUT + 1) if hasattr(stdin, "buffer") else stdin.read(MAX_INPUT + 1)
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    if len(data) > MAX_INPUT:
        raise ValueError("input larger than 1 MB")
    text = data.decode("utf-8", "replace")
    s = text.strip()
    if s.startswith("{"):
        try:
            obj = jsonsafe.loads(s)
        except ValueError:
            return text, None  # a brace group, `{ cmd; }`, is a command too
        if isinstance(obj, dict):
            return "", obj
    return text, None


def _agent_json(event: str, fmt: str, obj: dict, cwd: str):
    """What an agent's hook JSON says: (text, dialect, hook event, cwd), or None when it is nothing to
    answer (another tool than a shell, no text)."""
    dialect = fmt if fmt in DIALECTS else None
    hook_event = obj.get("hook_event_name")
    if not isinstance(hook_event, str):
        hook_event = None
    if dialect is None and fmt in ("auto", "json") and hook_event:
        dialect = _EVENT_DIALECT.get(hook_event, "claude")
    roots = obj.get("workspace_roots")  # (Cursor: its sessionStart names no cwd)
    if isinstance(obj.get("cwd"), str) and os.path.isdir(obj["cwd"]):
        cwd = obj["cwd"]
    elif isinstance(roots, list) and roots and isinstance(roots[0], str) and os.path.isdir(roots[0]):
        cwd = roots[0]
    if event == "session-start":
        text = "-"
    elif event == "pre-command":
        tool_input = obj.get("tool_input") if "tool_input" in obj else obj  # {"command": ...} too
        if obj.get("tool_name") not in SHELL_TOOLS or not isinstance(tool_input, dict):
            return None
        text = tool_input.get("command")
    else:
        text = obj.get("prompt")
    if not isinstance(text, str):
        return None
    # JSON may escape a lone surrogate ("\\ud800"), which no encoder takes: one replacement char
    return text.encode("utf-8", "replace").decode("utf-8"), dialect, hook_event, cwd


def _notice(event: str, text: str, cwd: str, threshold: int | None) -> str | None:
    """The notice for ``text``: from the database alone before a command or at a session's start
    (no sync, no CLI), through the workspace for a prompt."""
    if event in ("pre-command", "session-start"):
        dotdir = Recorded.find(cwd)
        if dotdir is None or not os.path.isfile(os.path.join(dotdir, "dbglog.db")):
            return None
        db = Recorded(dotdir)
        try:
            return pre_command_notice(db, text, cwd, threshold) if event == "pre-command" else \
                session_digest(db, threshold or DIGEST_BUDGET)
        finally:
            db.close()
    from dbglog.util import workspace
    from dbglog.util.errors import DbglogError
    from dbglog.kb.records import Records

    ws = workspace.find()
    if not ws.exists:
        return None
    recs = Records(ws)
    try:
        try:
            recs.sync()
        except DbglogError:
            pass  # a conflict in logs/ is for the next real command to report; the database still answers
        return prompt_notice(recs, text)
    finally:
        recs.close()


def run(event: str, fmt: str, threshold: int | None, stdin, stdout) -> None:
    text, obj = _read_input(stdin)
    cwd = os.getcwd()
    hook_event = None
    dialect = fmt if fmt in DIALECTS else None
    if obj is not None:
        read = _agent_json(event, fmt, obj, cwd)
        if read is None:
            return
        text, dialect, hook_event, cwd = read
    if dialect is None and fmt == "json":
        dialect = "claude"
    if dialect == "cursor" and event == "prompt":
        return  # Cursor's beforeSubmitPrompt takes no context: no search for a notice it would not show
    if event == "session-start":
        text = text if text.strip() else "-"  # it reads nothing: stdin is only the hook's JSON
    if not text.strip() or (event == "prompt" and not looks_like_debugging(text)):
        return
    os.chdir(cwd)
    notice = _notice(event, text, cwd, threshold)
    if not notice:
        return
    if dialect is not None:
        stdout.write(json.dumps(_answer(dialect, event, hook_event, notice)) + "\n")
    else:
        stdout.write(notice + "\n")


def main(argv: list[str] | None = None) -> int:
    """Always 0: a hook must never block or fail the agent."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        event, fmt, threshold = _parse(argv)
        if event == "help":
            print(USAGE)
            return 0
        out = _Counted(sys.stdout)
        try:
            run(event, fmt, threshold, sys.stdin, out)
        finally:
            if fmt == "json" and not out.wrote:  # (--json: JSON whatever happened; {} is "nothing to say")
                sys.stdout.write("{}\n")
        sys.stdout.flush()
    except (ValueError, StopIteration) as e:
        _stderr(f"dbglog hook: {e} (see `dbglog hook --help`)")
    except BaseException as e:  # noqa: BLE001 - never fail the agent, whatever happened
        if isinstance(e, SystemExit) and not e.code:
            return 0
        if os.environ.get("DBGLOG_DEBUG") and not isinstance(e, (KeyboardInterrupt, SystemExit)):
            import traceback

            traceback.print_exc()
        _stderr(f"dbglog hook: {type(e).__name__}: {' '.join(str(e).split())[:200]}")
    return 0


class _Counted:
    """stdout, remembering whether anything was written to it."""

    def __init__(self, inner):
        self.inner, self.wrote = inner, False

    def write(self, text: str) -> None:
        self.wrote = self.wrote or bool(text)
        self.inner.write(text)


def _stderr(line: str) -> None:
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except Exception:  # noqa: BLE001
        pass
