"""Toggle kinds: what ``bisect toggles`` can switch, one registered :class:`Kind` each.

A *toggle* (:class:`Toggle`, the record stored in a session's spec) is a named suspect with an on
and an off state; its ``kind`` names an entry of :data:`REGISTRY`. Everything that differs between
kinds is said by the kind, in one place:

=========  =====================================  ============================================
kind       on                                     off
=========  =====================================  ============================================
env        ``NAME=VALUE`` set                     unset (or ``--env-off NAME=VALUE``)
arg        its words at ``{toggles}`` in the      absent
           command (appended when there is none)
config     ``FILE:KEY.PATH=VALUE`` written        the file's own value
suspect    marked source lines as written         disabled, file kept valid (``suspects.py``)
coop       ``dbglog.toggle(NAME)`` returns True   returns False (``coop.py``)
=========  =====================================  ============================================

A kind says:

* ``name`` (the stored ``Toggle.kind``) and ``options``: the :class:`Option` s it adds to
  ``bisect toggles`` (the CLI builds them, and their help, from the registry);
* :meth:`Kind.from_options`: those options' values -> toggles (parse and validate, one-line
  :class:`DbglogError` on bad input); :meth:`Kind.check`: refusals across its toggles;
  :meth:`Kind.secrets`: (name, value) pairs among its option values, for ``redact`` (a secret-named
  one never reaches ``logs/`` or the database);
* :meth:`Kind.from_apply_spec`: a key-differences row's ``KIND:...`` apply spec -> a toggle (kinds
  without one are not usable from ``--from-diffs``); ``apply_forms`` names its spec forms for help
  and errors;
* :meth:`Kind.states`: (on, off) in words, for reports and ``diff`` notes;
* what a trial with a set of enabled toggles gets from it: :meth:`Kind.env` (variables; ``None``
  unsets one), :meth:`Kind.argv` (words at ``{toggles}``), :meth:`Kind.files` (the files its
  toggles edit: hashed at start, copied into each trial's workspace copy) and :meth:`Kind.edit`
  (one file's bytes for the trial).

Adding a kind is one ``register(MyKind())`` plus its test (README, "Adding a toggle kind").

Layering: a service module under ``bisect/``; imports the edit helpers (``configedit``,
``suspects``), ``coop``'s variable names, ``redact``, ``fserrors`` and ``errors``; imported by
``toggles.py``, ``ops.py`` and the CLI (never the reverse).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path

from dbglog.bisect import configedit, suspects
from dbglog.coop import ENABLED_VAR, MANAGED_VAR
from dbglog.util import redact
from dbglog.util.errors import DbglogError

# --- the stored record ------------------------------------------------------------------------


@dataclass
class Toggle:
    name: str
    kind: str  # a name in REGISTRY: env | arg | config | suspect | coop (+ registered ones)
    var: str = ""
    value: object = None  # env: on value (None: unset); config: on value
    off: str | None = None  # env: off value (None: unset)
    words: list = field(default_factory=list)  # arg: on words
    off_words: list = field(default_factory=list)  # arg: off words (a diff row's working value)
    file: str = ""
    key: str = ""
    on_unset: bool = False  # config: on = the file as it is
    off_value: object = None  # config: off value, when not off_unset
    off_unset: bool = True  # config: off = the file as it is
    regions: list = field(default_factory=list)
    factor: str | None = None

    def to_dict(self) -> dict:
        # defaults left out: the stored spec stays the format existing sessions were written in
        defaults = {f.name: f.default if f.default is not MISSING else f.default_factory()  # type: ignore[misc]
                    for f in fields(self) if f.default is not MISSING or f.default_factory is not MISSING}
        return {k: v for k, v in asdict(self).items() if k not in defaults or v != defaults[k]}

    @classmethod
    def from_dict(cls, d: dict) -> "Toggle":
        return cls(**d)

    def states(self) -> tuple[str, str]:
        """(on, off) in words, for the report."""
        return kind_of(self.kind).states(self)


# --- kinds ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Option:
    """A ``bisect toggles`` option a kind adds; its values reach :meth:`Kind.from_options` under ``dest``."""
    flag: str
    dest: str
    metavar: str
    help: str
    multiple: bool = True
    gives_toggles: bool = True  # False: it only qualifies another option's toggles (--env-off)


class Kind:
    """One kind of toggle. Subclass, set ``name`` (and ``options``), override what applies."""

    name: str = ""
    options: tuple[Option, ...] = ()
    #: the apply-spec forms, for help and errors: (states from the row's columns, explicit value)
    apply_forms: tuple[str, str] | None = None

    def from_options(self, values: dict, cwd: Path) -> list[Toggle]:
        """Toggles from this kind's option values (``values[dest]``: a tuple, empty when not given)."""
        return []

    def check(self, toggles: list[Toggle]) -> None:
        """Refuse a combination of this kind's toggles (after names were made unique)."""

    def secrets(self, values: dict) -> list[tuple[str, str]]:
        """(name, value) pairs among its option values; a secret-named one never reaches logs/ or the database."""
        return []

    def from_apply_spec(self, row: "ApplyRow") -> Toggle:
        raise row.unknown()

    def states(self, t: Toggle) -> tuple[str, str]:
        return "on", "off"

    def env(self, toggles: list[Toggle], enabled: set[str]) -> dict:
        return {}

    def argv(self, toggles: list[Toggle], enabled: set[str]) -> list[str]:
        return []

    def files(self, t: Toggle) -> list[str]:
        return []

    def edit(self, path: str, data: bytes, toggles: list[Toggle], enabled: set[str]) -> bytes:
        """``path``'s bytes for a trial; ``toggles`` are this kind's toggles that edit ``path``."""
        return data


REGISTRY: dict[str, Kind] = {}


def register(kind: Kind) -> Kind:
    if not kind.name or kind.name in REGISTRY:
        raise ValueError(f"toggle kind {kind.name!r} is unnamed or already registered")
    taken = {o.flag for k in REGISTRY.values() for o in k.options} | {o.dest for k in REGISTRY.values()
                                                                       for o in k.options}
    clash = [o.flag for o in kind.options if o.flag in taken or o.dest in taken]
    if clash:
        raise ValueError(f"toggle kind {kind.name!r}: option {clash[0]} is already another kind's")
    REGISTRY[kind.name] = kind
    return kind


def unregister(name: str) -> None:
    """For tests that register a kind of their own."""
    REGISTRY.pop(name, None)


def kind_of(name: str) -> Kind:
    try:
        return REGISTRY[name]
    except KeyError:
        raise DbglogError(f"toggle kind {name!r} is not known to this dbglog (known: {', '.join(REGISTRY)})") from None


def options() -> list[Option]:
    """Every kind's options, in registry order (the CLI adds them in this order)."""
    return [o for k in REGISTRY.values() for o in k.options]


def option_flags(toggles_only: bool = False) -> list[str]:
    return [o.flag for o in options() if o.gives_toggles or not toggles_only]


def _or(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def apply_forms() -> list[tuple[str, str]]:
    """(states from the row's columns, explicit value) spec forms of every kind that has them."""
    return [k.apply_forms for k in REGISTRY.values() if k.apply_forms]


def apply_forms_text() -> str:
    """The apply-spec forms in a sentence, for ``unknown apply spec``."""
    forms = apply_forms()
    return (f"use {_or([f[0] for f in forms])} (both states from the row's columns), "
            f"or {', '.join(f[1] for f in forms)}")


def grouped(toggles: list[Toggle]) -> list[tuple[Kind, list[Toggle]]]:
    """(kind, its toggles) in registry order; a kind with no toggle is left out."""
    by: dict[str, list[Toggle]] = {}
    for t in toggles:
        kind_of(t.kind)
        by.setdefault(t.kind, []).append(t)
    return [(k, by[n]) for n, k in REGISTRY.items() if n in by]


# --- what a trial gets (Trials.env_for / argv_for / files_for) ---------------------------------


def env_for(toggles: list[Toggle], enabled: set[str]) -> dict:
    env: dict = {}
    for k, ts in grouped(toggles):
        env |= k.env(ts, enabled)
    return env


def words_for(toggles: list[Toggle], enabled: set[str]) -> list[str]:
    return [w for k, ts in grouped(toggles) for w in k.argv(ts, enabled)]


def edit_file(path: str, data: bytes, toggles: list[Toggle], enabled: set[str]) -> bytes:
    for k, ts in grouped(toggles):
        mine = [t for t in ts if path in k.files(t)]
        if mine:
            data = k.edit(path, data, mine, enabled)
    return data


# --- parsing helpers shared by kinds -------------------------------------------------------------


def _parse_env(text: str, what: str = "--env") -> tuple[str, str]:
    if "=" not in text or not text.split("=", 1)[0]:
        raise DbglogError(f"bad {what} {text!r}: use NAME=VALUE")
    k, v = text.split("=", 1)
    return k, v


def _parse_config(text: str, cwd: Path, what: str = "--config") -> tuple[str, str, object]:
    if "=" not in text:
        raise DbglogError(f"bad {what} {text!r}: use FILE:KEY.PATH=VALUE")
    left, value = text.split("=", 1)
    if ":" not in left:
        raise DbglogError(f"bad {what} {text!r}: use FILE:KEY.PATH=VALUE")
    f, key = left.rsplit(":", 1)
    configedit.split_key(key)
    path = (cwd / f).resolve()
    configedit.file_format(str(path))
    if not path.is_file():
        raise DbglogError(f"{what} {text!r}: no such file {path}")
    return str(path), key, configedit.parse_value(value)


#: a diff cell that means "not set" (the variable unset, the argument absent, the file as it is)
UNSET_WORDS = ("", "unset", "(unset)", "<unset>", "not set")


def _cell(text: str | None) -> str | None:
    """A diff row's cell as a state: None when it means unset."""
    t = (text or "").strip().strip("`").strip()
    return None if t.lower() in UNSET_WORDS else t


def _explicit_states(rest: str, spec: str) -> tuple[str, dict[str, str | None]]:
    """``NAME on=VALUE off=VALUE`` -> (NAME, {"on": ..., "off": ...}); a value ``unset`` is None."""
    try:
        words = shlex.split(rest)
    except ValueError as e:
        raise DbglogError(f"apply spec {spec!r}: {e}") from None
    head, states = (words[0] if words else ""), {}
    for w in words[1:]:
        k, eq, v = w.partition("=")
        if not eq or k not in ("on", "off"):
            raise DbglogError(f"apply spec {spec!r}: expected on=VALUE and/or off=VALUE after the name, got {w!r}")
        states[k] = _cell(v)
    return head, states


@dataclass
class ApplyRow:
    """A key-differences row's apply spec, split for :meth:`Kind.from_apply_spec`: ``rest`` is the
    spec after ``KIND:``; ``on``/``off`` the BROKEN/WORKING columns as states (None: unset);
    ``explicit``: ``rest`` carries ``on=``/``off=`` words (see :meth:`states`)."""
    name: str
    spec: str
    rest: str
    cwd: Path
    factor: str | None
    on: str | None
    off: str | None
    explicit: bool

    def states(self, rest: str | None = None) -> tuple[str, str | None, str | None]:
        """(the knob, on, off): the columns, overridden by explicit ``on=``/``off=`` words."""
        rest = self.rest if rest is None else rest
        head, st = _explicit_states(rest, self.spec) if self.explicit else (rest, {})
        return head, st.get("on", self.on), st.get("off", self.off)

    def unknown(self) -> DbglogError:
        return DbglogError(f"unknown apply spec {self.spec!r} (row {self.name!r}): {apply_forms_text()}")


def apply_spec_toggle(name: str, spec: str, cwd: Path, factor: str | None = None, working: str | None = None,
                      broken: str | None = None) -> Toggle:
    """A toggle from a key-differences row. The spec names the knob, and the two states come from
    the row's columns -- on = the BROKEN value, off = the WORKING value, ``unset``/empty = not set:
    ``env:NAME``, ``config:FILE:KEY``, ``arg``. Explicit states remain possible:
    ``env:NAME=VALUE`` (off: unset), ``arg:TEXT`` (off: absent), ``config:FILE:KEY=VALUE`` (off: the
    file's value), or ``KNOB on=VALUE off=VALUE`` for any of them."""
    spec = spec.strip()
    kind = re.split(r"[:\s]", spec, maxsplit=1)[0].lower()
    rest = spec[len(kind):].lstrip(":").strip() if spec[:len(kind)].lower() == kind else ""
    row = ApplyRow(name, spec, rest, cwd, factor, _cell(broken), _cell(working),
                   any(w.startswith(("on=", "off=")) for w in rest.split()))
    k = REGISTRY.get(kind)
    if k is None or k.apply_forms is None:
        raise row.unknown()
    return k.from_apply_spec(row)


def build_toggles(recs, *, cwd: Path, values: dict | None = None, from_diffs_inv: str | None = None,
                  **given) -> list[Toggle]:
    """Every toggle of a bisection: each kind's from its options (``values``/keywords by option
    dest: ``envs=``, ``args=``, ...), then the rows of ``from_diffs_inv`` that have an apply spec."""
    values = values or {}
    known = {o.dest for o in options()}
    unknown = sorted((set(values) | set(given)) - known)
    if unknown:
        raise TypeError(f"build_toggles: no toggle kind has an option {unknown[0]!r}")
    values = {d: tuple(values.get(d) or ()) + tuple(given.get(d) or ()) for d in known}
    out: list[Toggle] = []
    for k in REGISTRY.values():
        out += k.from_options(values, cwd)
    if from_diffs_inv is not None:
        inv = recs.store.load(from_diffs_inv)
        rows = [d for d in inv.differences if d.apply.strip()]
        if not rows:
            raise DbglogError(f"no row of {from_diffs_inv}'s key-differences table has an apply spec; add one with "
                              "`dbglog diff set FACTOR --apply 'env:NAME=VALUE'`")
        for d in rows:
            if redact.REDACTED in (d.working, d.broken):
                raise DbglogError(f"row {d.factor!r} of the key differences holds a secret, stored redacted: give its "
                                  f"values with --env NAME=VALUE instead (kept out of logs/), and drop its apply spec "
                                  f"with `dbglog diff set {d.factor} --apply ''`")
            out.append(apply_spec_toggle(d.factor, d.apply.strip(), cwd, factor=d.factor, working=d.working,
                                         broken=d.broken))
    _name_config_keys_by_file(out, cwd)
    # unique names, stable
    seen: dict[str, int] = {}
    for t in out:
        # (a name is shown and stored everywhere -- the trials' keys, the chart, `bisect log`, the report -- while
        # the words, values and spec that run it are sealed: `--arg '--hf-token hf_...'` showed its token)
        base = t.name = redact.clean(t.name)
        if base in seen:
            seen[base] += 1
            t.name = f"{base}#{seen[base]}"
        else:
            seen[base] = 1
    for k, ts in grouped(out):
        k.check(ts)
    return out


def _name_config_keys_by_file(toggles: list[Toggle], cwd) -> None:
    """Config toggles named by the same key in several files (``--config a.yaml:model.fused=true --config
    b.yaml:model.fused=true``) are named ``FILE:KEY``: a ``#2`` said nowhere which file it was."""
    count: dict[str, int] = {}
    for t in toggles:
        count[t.name] = count.get(t.name, 0) + 1
    for t in toggles:
        if t.kind == "config" and t.name == t.key and count[t.name] > 1:
            rel = os.path.relpath(t.file, cwd) if cwd is not None else t.file
            t.name = f"{t.file if rel.startswith('..') else rel}:{t.key}"


def remember_secrets(values: dict) -> None:
    """Before anything is stored: every kind's (name, value) pairs among the option values (by dest)
    go to ``redact``, which keeps the secret-named ones' values out of logs/ and the database."""
    from dbglog.util import redact

    for k in REGISTRY.values():
        for name, value in k.secrets({o.dest: tuple(values.get(o.dest) or ()) for o in k.options}):
            redact.remember_env({name: value})


# --- the built-in kinds ---------------------------------------------------------------------------


class EnvKind(Kind):
    name = "env"
    options = (Option("--env", "envs", "NAME=VALUE", "Toggle: on sets it, off unsets it."),
               Option("--env-off", "env_offs", "NAME=VALUE",
                      "The off (working) value of an --env toggle instead of unset.", gives_toggles=False))
    apply_forms = ("env:NAME", "env:NAME=VALUE")

    def from_options(self, values, cwd):
        out = []
        offs = dict(_parse_env(e, "--env-off") for e in values["env_offs"])
        for e in values["envs"]:
            var, val = _parse_env(e)
            out.append(Toggle(var, "env", var=var, value=val, off=offs.pop(var, None)))
        if offs:
            raise DbglogError(f"--env-off {next(iter(offs))}: no --env toggle for that variable")
        return out

    def check(self, toggles):
        envs_seen: dict[str, str] = {}
        for t in toggles:
            if t.var in envs_seen:
                raise DbglogError(f"{t.var} is set by two toggles ({envs_seen[t.var]!r}, {t.name!r})")
            envs_seen[t.var] = t.name

    def secrets(self, values):
        # --env HF_TOKEN=...: the value is redacted wherever it would be stored
        return [tuple(e.split("=", 1)) for e in (*values["envs"], *values["env_offs"]) if "=" in e]

    def from_apply_spec(self, row):
        if row.explicit or "=" not in row.rest:  # the knob, states from the columns (or on=/off=)
            var, on, off = row.states()
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", var or ""):
                raise DbglogError(f"apply spec {row.spec!r} (row {row.name!r}): env:NAME, e.g. env:HIP_LAUNCH_BLOCKING")
            t = Toggle(row.name, "env", var=var, value=on, off=off, factor=row.factor)
        else:
            var, val = _parse_env(row.rest, "apply spec")
            t = Toggle(row.name, "env", var=var, value=val, factor=row.factor)
        if t.value == t.off:
            raise DbglogError(f"row {row.name!r}: the working and broken states of {t.var} are the same "
                              f"({t.states()[0]}): nothing to switch")
        return t

    def states(self, t):
        def env(v):
            return f"{t.var}={v}" if v is not None else f"{t.var} unset"
        return env(t.value), env(t.off)

    def env(self, toggles, enabled):
        return {t.var: t.value if t.name in enabled else t.off for t in toggles}


class ArgKind(Kind):
    name = "arg"
    options = (Option("--arg", "args", "TEXT", "Toggle: these words at {toggles} in the command (or appended)."),
               Option("--args-from", "args_from", "FILE", "One --arg per line of FILE."))
    apply_forms = ("arg", "arg:TEXT")

    def from_options(self, values, cwd):
        arg_texts = list(values["args"])
        for f in values["args_from"]:
            from dbglog.util.fserrors import check_regular_file

            check_regular_file(Path(cwd / f), f"--args-from {f}")  # a FIFO or /dev/zero would never end
            try:
                lines = Path(cwd / f).read_text(encoding="utf-8").splitlines()
            except OSError as e:
                raise DbglogError(f"--args-from {f}: {e.strerror}") from None
            arg_texts += [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
        out = []
        for a in arg_texts:
            try:
                words = shlex.split(a)
            except ValueError as e:
                raise DbglogError(f"bad --arg {a!r}: {e}") from None
            if not words:
                raise DbglogError("empty --arg")
            out.append(Toggle(a.strip(), "arg", words=words))
        return out

    def from_apply_spec(self, row):
        if row.explicit or not row.rest:
            _, on, off = row.states("arg " + row.rest)
            t = Toggle(row.name, "arg", words=shlex.split(on or ""), off_words=shlex.split(off or ""),
                       factor=row.factor)
        else:
            t = Toggle(row.name, "arg", words=shlex.split(row.rest), factor=row.factor)
        if t.words == t.off_words:
            raise DbglogError(f"row {row.name!r}: the working and broken arguments are the same: nothing to switch")
        return t

    def states(self, t):
        return shlex.join(t.words) or "absent", shlex.join(t.off_words) or "absent"

    def argv(self, toggles, enabled):
        return [w for t in toggles for w in (t.words if t.name in enabled else t.off_words)]


class ConfigKind(Kind):
    name = "config"
    options = (Option("--config", "configs", "FILE:KEY.PATH=VALUE",
                      "Toggle: a JSON/YAML/TOML key set to VALUE (off: the file's value)."),)
    apply_forms = ("config:FILE:KEY", "config:FILE:KEY=VALUE")

    def from_options(self, values, cwd):
        out = []
        for c in values["configs"]:
            f, key, value = _parse_config(c, cwd)
            out.append(Toggle(key, "config", file=f, key=key, value=value))
        return out

    def secrets(self, values):
        out = []
        for c in values["configs"]:  # FILE:KEY.PATH=VALUE with a secret-named last key
            key, _, value = c.split(":", 1)[-1].partition("=")
            out.append((key.rsplit(".", 1)[-1], value))
        return out

    def from_apply_spec(self, row):
        if row.explicit or "=" not in row.rest:
            target, on, off = row.states()
            if ":" not in target:
                raise DbglogError(f"apply spec {row.spec!r} (row {row.name!r}): config:FILE:KEY.PATH")
            f, key, _ = _parse_config(target + "=null", row.cwd, "apply spec")
            t = Toggle(row.name, "config", file=f, key=key, factor=row.factor,
                       value=configedit.parse_value(on) if on is not None else None, on_unset=on is None,
                       off_value=configedit.parse_value(off) if off is not None else None, off_unset=off is None)
            if t.on_unset and t.off_unset:
                raise DbglogError(f"row {row.name!r}: both states of {key} are unset: nothing to switch")
            return t
        f, key, value = _parse_config(row.rest, row.cwd, "apply spec")
        return Toggle(row.name, "config", file=f, key=key, value=value, factor=row.factor)

    def states(self, t):
        def cfg(unset, v):
            return "the file's value" if unset else f"{Path(t.file).name}: {t.key} = {json.dumps(v)}"
        return cfg(t.on_unset, t.value), cfg(t.off_unset, t.off_value)

    def files(self, t):
        return [t.file]

    def edit(self, path, data, toggles, enabled):
        cfg = [(t, t.value) if t.name in enabled else (t, t.off_value) for t in toggles
               if not (t.on_unset if t.name in enabled else t.off_unset)]
        if not cfg:
            return data  # the file as it is, byte for byte
        text = data.decode("utf-8")
        fmt = configedit.file_format(path)
        for t, value in cfg:
            text = configedit.set_value(text, fmt, configedit.split_key(t.key), value, where=path)
        return text.encode("utf-8")


class SuspectKind(Kind):
    name = "suspect"
    options = (Option("--suspects", "suspect_paths", "PATH",
                      "Files/dirs with `dbglog: suspect NAME` / `dbglog: begin|end NAME` markers."),)

    def from_options(self, values, cwd):
        paths = values["suspect_paths"]
        if not paths:
            return []
        found = suspects.scan([cwd / p for p in paths])
        if not found:
            raise DbglogError("no `dbglog: suspect NAME` or `dbglog: begin NAME` markers found in "
                              + ", ".join(map(str, paths)))
        return [Toggle(name, "suspect", regions=[r.to_list() for r in regions]) for name, regions in found.items()]

    def states(self, t):
        where = ", ".join(f"{Path(r[0]).name}:{r[1] + 1}" + (f"-{r[2] + 1}" if r[2] != r[1] else "")
                          for r in t.regions[:4]) + (" ..." if len(t.regions) > 4 else "")
        return f"lines as written ({where})", "disabled"

    def files(self, t):
        return list(dict.fromkeys(r[0] for r in t.regions))

    def edit(self, path, data, toggles, enabled):
        off = [suspects.Region.from_list(r) for t in toggles if t.name not in enabled for r in t.regions
               if r[0] == path]
        return suspects.render(data, off) if off else data


class CoopKind(Kind):
    name = "coop"
    options = (Option("--coop", "coops", "NAME", "Toggle: dbglog.toggle(NAME) in the code."),)

    def from_options(self, values, cwd):
        return [Toggle(c, "coop") for c in values["coops"]]

    def states(self, t):
        return f"dbglog.toggle({t.name!r}) True", "False"

    def env(self, toggles, enabled):
        names = [t.name for t in toggles]
        return {ENABLED_VAR: json.dumps([n for n in names if n in enabled]), MANAGED_VAR: json.dumps(names)}


for _k in (EnvKind(), ArgKind(), ConfigKind(), SuspectKind(), CoopKind()):
    register(_k)
