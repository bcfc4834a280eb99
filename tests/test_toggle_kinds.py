"""Toggle kinds (dbglog/bisect/kinds.py): each built-in kind's parsing, states and trial effects,
table-driven and in-process; the stored record round-trips; a kind registered by a test is usable
by a real `bisect toggles` (the README's "Adding a toggle kind")."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbglog.bisect import kinds
from dbglog.bisect.kinds import Toggle, apply_spec_toggle, build_toggles
from dbglog.coop import ENABLED_VAR, MANAGED_VAR
from dbglog.util.errors import DbglogError

SUSPECTS = "x = 1\ny = 2  # dbglog: suspect two\nprint(x)  # dbglog: suspect pr\n"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "serve.json").write_text('{"tp": 1, "cache": {"dtype": "fp16"}}\n')
    (tmp_path / "m.py").write_text(SUSPECTS)
    (tmp_path / "args.txt").write_text("# a comment\n--fast\n\n--seed 3\n")
    return tmp_path


def _one(cwd, **opts) -> list[Toggle]:
    return build_toggles(None, cwd=cwd, **opts)


# --- options -> toggles and their states in words ---------------------------------------------

OPTION_CASES = [  # (options, [(name, kind, (on, off))])
    ({"envs": ["A=1"]}, [("A", "env", ("A=1", "A unset"))]),
    ({"envs": ["A=1"], "env_offs": ["A=0"]}, [("A", "env", ("A=1", "A=0"))]),
    ({"args": ["--x 1"]}, [("--x 1", "arg", ("--x 1", "absent"))]),
    ({"args_from": ["args.txt"]}, [("--fast", "arg", ("--fast", "absent")), ("--seed 3", "arg", ("--seed 3", "absent"))]),
    ({"configs": ["serve.json:cache.dtype=\"bf16\""]},
     [("cache.dtype", "config", ('serve.json: cache.dtype = "bf16"', "the file's value"))]),
    ({"suspect_paths": ["m.py"]}, [("two", "suspect", ("lines as written (m.py:2)", "disabled")),
                                   ("pr", "suspect", ("lines as written (m.py:3)", "disabled"))]),
    ({"coops": ["swa"]}, [("swa", "coop", ("dbglog.toggle('swa') True", "False"))]),
    ({"envs": ["A=1", "B=2"], "coops": ["c"], "args": ["-v"]},  # registry order: env, arg, config, suspect, coop
     [("A", "env", ("A=1", "A unset")), ("B", "env", ("B=2", "B unset")), ("-v", "arg", ("-v", "absent")),
      ("c", "coop", ("dbglog.toggle('c') True", "False"))]),
]


@pytest.mark.parametrize(("opts", "expected"), OPTION_CASES)
def test_options_make_toggles_with_states(files, opts, expected):
    ts = _one(files, **opts)
    assert [(t.name, t.kind, t.states()) for t in ts] == expected


def test_config_toggles_of_one_key_in_two_files_are_named_by_their_file(files):
    # They were `cache.dtype` and `cache.dtype#2`, and nothing in the output said which file `#2` was.
    (files / "conf").mkdir()
    (files / "conf" / "serve.json").write_text('{"cache": {"dtype": "fp16"}}\n')
    ts = _one(files, configs=['serve.json:cache.dtype="bf16"', 'conf/serve.json:cache.dtype="bf16"', "serve.json:tp=2"])
    assert [t.name for t in ts] == ["serve.json:cache.dtype", "conf/serve.json:cache.dtype", "tp"]


OPTION_ERRORS = [
    ({"envs": ["NOVALUE"]}, "bad --env 'NOVALUE': use NAME=VALUE"),
    ({"envs": ["=1"]}, "bad --env '=1': use NAME=VALUE"),
    ({"env_offs": ["A=0"]}, "--env-off A: no --env toggle for that variable"),
    ({"envs": ["A=1", "A=2"]}, "A is set by two toggles ('A', 'A#2')"),
    ({"args": ["'open"]}, "bad --arg \"'open\": No closing quotation"),
    ({"args": ["  "]}, "empty --arg"),
    ({"args_from": ["nope.txt"]}, "nope.txt"),
    ({"configs": ["serve.json=1"]}, "bad --config 'serve.json=1': use FILE:KEY.PATH=VALUE"),
    ({"configs": ["missing.json:a=1"]}, "no such file"),
    ({"suspect_paths": ["serve.json"]}, "no `dbglog: suspect NAME` or `dbglog: begin NAME` markers found in serve.json"),
]


@pytest.mark.parametrize(("opts", "message"), OPTION_ERRORS)
def test_bad_options_are_one_line_errors(files, opts, message):
    with pytest.raises(DbglogError) as e:
        _one(files, **opts)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_an_option_no_kind_has_is_a_programming_error(files):
    with pytest.raises(TypeError):
        _one(files, nonsense=["x"])


# --- apply specs (a key-differences row) ----------------------------------------------------------

APPLY_CASES = [  # (spec, working, broken, kind, (on, off))
    ("env:NCCL_ALGO", "Ring", "Tree", "env", ("NCCL_ALGO=Tree", "NCCL_ALGO=Ring")),
    ("env:HIP_LAUNCH_BLOCKING", "1", "unset", "env", ("HIP_LAUNCH_BLOCKING unset", "HIP_LAUNCH_BLOCKING=1")),
    ("env:X=5", "a", "b", "env", ("X=5", "X unset")),
    ("env:X on=unset off=1", "a", "b", "env", ("X unset", "X=1")),
    ("arg", "", "--compile", "arg", ("--compile", "absent")),
    ("arg:--eager", "x", "y", "arg", ("--eager", "absent")),
    ("arg on=--a off=--b", "x", "y", "arg", ("--a", "--b")),
    ("config:serve.json:tp", "1", "2", "config", ("serve.json: tp = 2", "serve.json: tp = 1")),
    ("config:serve.json:tp=4", "1", "2", "config", ("serve.json: tp = 4", "the file's value")),
    ("CONFIG:serve.json:tp", "unset", "8", "config", ("serve.json: tp = 8", "the file's value")),
]


@pytest.mark.parametrize(("spec", "working", "broken", "kind", "states"), APPLY_CASES)
def test_apply_specs(files, spec, working, broken, kind, states):
    t = apply_spec_toggle("row", spec, files, factor="row", working=working, broken=broken)
    assert (t.kind, t.states(), t.factor) == (kind, states, "row")


APPLY_ERRORS = [
    ("env:", "env:NAME, e.g. env:HIP_LAUNCH_BLOCKING"),
    ("env:1BAD", "env:NAME, e.g."),
    ("env:X", "nothing to switch"),  # working == broken below
    ("arg", "the working and broken arguments are the same"),
    ("config:onlyfile", "config:FILE:KEY.PATH"),
    ("env:X on=1 sideways=2", "expected on=VALUE and/or off=VALUE"),
    ("suspect:two", "unknown apply spec"),  # kinds without an apply spec are not usable from a row
    ("coop:c", "unknown apply spec"),
    ("bogus:x", "use env:NAME, arg or config:FILE:KEY (both states from the row's columns), or env:NAME=VALUE, "
                "arg:TEXT, config:FILE:KEY=VALUE"),
]


@pytest.mark.parametrize(("spec", "message"), APPLY_ERRORS)
def test_unusable_apply_specs(files, spec, message):
    with pytest.raises(DbglogError) as e:
        apply_spec_toggle("row", spec, files, working="same", broken="same")
    assert message in str(e.value)


# --- what a trial gets ------------------------------------------------------------------------------


def test_effects_of_each_kind(files):
    ts = _one(files, envs=["A=1"], env_offs=["A=0"], args=["--x 1"], configs=['serve.json:tp=8'],
              suspect_paths=["m.py"], coops=["c1", "c2"])
    names = {t.name for t in ts}
    assert kinds.env_for(ts, names) == {"A": "1", ENABLED_VAR: '["c1", "c2"]', MANAGED_VAR: '["c1", "c2"]'}
    assert kinds.env_for(ts, {"c2"}) == {"A": "0", ENABLED_VAR: '["c2"]', MANAGED_VAR: '["c1", "c2"]'}
    assert kinds.words_for(ts, names) == ["--x", "1"] and kinds.words_for(ts, set()) == []
    cfg = str(files / "serve.json")
    original = (files / "serve.json").read_bytes()
    assert json.loads(kinds.edit_file(cfg, original, ts, {"tp"}))["tp"] == 8
    assert kinds.edit_file(cfg, original, ts, set()) == original
    py = str((files / "m.py").resolve())
    src = (files / "m.py").read_bytes()
    assert kinds.edit_file(py, src, ts, names) == src  # suspects on: the lines as written
    off = kinds.edit_file(py, src, ts, names - {"two"}).decode()
    assert "pass  # dbglog off: y = 2" in off and "print(x)  # dbglog: suspect pr" in off
    compile(off, "m.py", "exec")
    # which files each kind edits (start() hashes them and checks they are in the workspace)
    assert {f for t in ts for f in kinds.kind_of(t.kind).files(t)} == {cfg, py}


def test_secrets_of_the_options_are_remembered_for_redaction():
    from dbglog.util import redact

    kinds.remember_secrets({"envs": ["HF_TOKEN=hf_abcdefgh12345678"], "env_offs": ["HF_TOKEN=hf_zyxwvuts87654321"],
                            "configs": ["c.yaml:auth.api_key=sk-live-0123456789abcdef"]})
    text = redact.clean("hf_abcdefgh12345678 hf_zyxwvuts87654321 sk-live-0123456789abcdef")
    assert "hf_abcdefgh" not in text and "hf_zyxwvuts" not in text and "sk-live-0123" not in text


def test_a_stored_toggle_of_an_unknown_kind_is_one_line():
    with pytest.raises(DbglogError, match="toggle kind 'gone' is not known"):
        Toggle("x", "gone").states()


# --- properties: the stored record round-trips; "as given" states change nothing ------------------

_text = st.text(st.characters(min_codepoint=33, max_codepoint=126, exclude_characters="=:'\"\\#"), min_size=1,
                max_size=8)
_var = st.from_regex(r"[A-Z_][A-Z0-9_]{0,6}", fullmatch=True)


@st.composite
def toggle_sets(draw):
    out = []
    for i in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["env", "arg", "config", "coop"]))
        name = f"t{i}"
        if kind == "env":
            out.append(Toggle(name, "env", var=f"{draw(_var)}_{i}", value=draw(_text),
                              off=draw(st.none())))  # off unset: the environment as given
        elif kind == "arg":
            out.append(Toggle(name, "arg", words=draw(st.lists(_text, min_size=1, max_size=3))))
        elif kind == "config":
            out.append(Toggle(name, "config", file="CFG", key=draw(st.sampled_from(["tp", "a.b", "cache.dtype"])),
                              value=draw(st.one_of(st.integers(), _text, st.booleans()))))
        else:
            out.append(Toggle(name, "coop"))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ts=toggle_sets(), enabled_bits=st.integers(0, 31))
def test_toggles_round_trip_and_all_off_leaves_command_and_files_as_given(tmp_path, ts, enabled_bits):
    for t in ts:
        d = json.loads(json.dumps(t.to_dict()))  # as stored in the session's spec
        assert Toggle.from_dict(d) == t
    cfg = tmp_path / "c.json"
    original = b'{"tp": 2, "a": {"b": 1}}\n'
    for t in ts:
        t.file = str(cfg) if t.kind == "config" else t.file
    enabled = {t.name for i, t in enumerate(ts) if enabled_bits >> i & 1}
    # all off: no argument words, the files byte for byte, variables only unset (or dbglog's own)
    assert kinds.words_for(ts, set()) == []
    assert kinds.edit_file(str(cfg), original, ts, set()) == original
    env = kinds.env_for(ts, set())
    assert all(v is None for k, v in env.items() if k not in (ENABLED_VAR, MANAGED_VAR))
    # and any set: exactly the enabled ones' words, in the toggles' order
    assert kinds.words_for(ts, enabled) == [w for t in ts if t.kind == "arg" and t.name in enabled for w in t.words]


def test_suspects_all_on_leave_the_file_as_given(files):
    ts = _one(files, suspect_paths=["m.py"])
    py = str((files / "m.py").resolve())
    src = (files / "m.py").read_bytes()
    assert kinds.edit_file(py, src, ts, {t.name for t in ts}) == src
    assert kinds.edit_file(py, src, ts, set()) != src


# --- a kind of one's own: one definition, and `bisect toggles` takes it -------------------------


class FlagKind(kinds.Kind):
    """``--flag FILE``: on writes ``1`` into FILE (it must exist), off leaves it as it is."""
    name = "flag"
    options = (kinds.Option("--flag", "flag_files", "FILE", "Toggle: FILE holds 1 (off: its own content)."),)

    def from_options(self, values, cwd):
        out = []
        for f in values["flag_files"]:
            p = (cwd / f).resolve()
            if not p.is_file():
                raise DbglogError(f"--flag {f}: no such file {p}")
            out.append(Toggle(Path(f).stem, self.name, file=str(p)))
        return out

    apply_forms = ("flag:FILE", "flag:FILE")

    def from_apply_spec(self, row):  # a key-differences row: `diff add ... --apply flag:FILE`
        p = (row.cwd / row.rest).resolve()
        if not row.rest:
            raise DbglogError(f"apply spec {row.spec!r} (row {row.name!r}): flag:FILE")
        return Toggle(row.name, self.name, file=str(p), factor=row.factor)

    def states(self, t):
        return f"{Path(t.file).name} = 1", f"{Path(t.file).name} as it is"

    def files(self, t):
        return [t.file]

    def edit(self, path, data, toggles, enabled):
        return b"1\n" if any(t.name in enabled for t in toggles) else data


@pytest.fixture
def flag_kind():
    kinds.register(FlagKind())
    yield
    kinds.unregister("flag")


def test_registering_a_kind_twice_or_with_a_taken_option_is_refused(flag_kind):
    with pytest.raises(ValueError, match="already registered"):
        kinds.register(FlagKind())
    other = type("Other", (kinds.Kind,), {"name": "other", "options": (kinds.Option("--env", "x", "X", "h"),)})
    with pytest.raises(ValueError, match="option --env is already"):
        kinds.register(other())
    # an option of the command itself (--timeout) cannot be taken by a kind either
    kinds.register(type("Late", (kinds.Kind,), {"name": "late", "options": (kinds.Option("--timeout", "t", "S", "h"),)})())
    try:
        from dbglog.cli import cli

        cmd = cli.commands["bisect"].commands["toggles"]
        with pytest.raises(ValueError, match="--timeout clashes"):
            cmd.get_params(click.Context(cmd))
    finally:
        kinds.unregister("late")


REPRO = ("import pathlib, sys\n"
         "on = [f for f in ('a', 'b', 'c') if pathlib.Path(f + '.flag').read_text().strip() == '1']\n"
         "if 'a' in on and 'c' in on:\n"
         "    sys.exit('RuntimeError: CUDA error: an illegal memory access was encountered')\n")


def test_a_registered_kind_drives_a_real_toggle_bisection(ws, flag_kind):
    import sys

    from conftest import run_cli_inproc

    run_cli_inproc(ws, "new", "flags race", "--no-env", check=0)
    for f in "abc":
        (ws / f"{f}.flag").write_text("0\n")
    (ws / "repro.py").write_text(REPRO)
    p = run_cli_inproc(ws, "bisect", "toggles", "--help")
    assert "--flag FILE" in p.stdout and "FILE holds 1" in p.stdout
    p = run_cli_inproc(ws, "bisect", "toggles", "--flag", "a.flag", "--flag", "b.flag", "--flag", "c.flag",
                       "--json", "--", sys.executable, "repro.py")
    assert p.returncode == 0, p.stdout + p.stderr
    out = json.loads(p.stdout)
    assert out["status"] == "complete" and out["sets"] == [["a", "c"]]
    assert all((ws / f"{f}.flag").read_text() == "0\n" for f in "abc")  # edits were made in copies only
    md = run_cli_inproc(ws, "show", "--markdown").stdout
    assert "| a | flag | a.flag = 1 | a.flag as it is |" in md
    p = run_cli_inproc(ws, "bisect", "toggles", "--flag", "nope.flag", "--", sys.executable, "repro.py")
    assert p.returncode == 2 and p.stderr.startswith("dbglog: --flag nope.flag: no such file")


def test_a_registered_kind_takes_apply_specs_and_is_in_the_diff_help(ws, flag_kind):
    from conftest import run_cli_inproc

    run_cli_inproc(ws, "new", "flags race", "--no-env", check=0)
    assert "env:NAME, arg, config:FILE:KEY or flag:FILE (off = WORKING" in " ".join(
        run_cli_inproc(ws, "diff", "add", "--help").stdout.split())
    p = run_cli_inproc(ws, "diff", "add", "fast path", "off", "on", "--apply", "flag:a.flag", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["toggle"]["on"] == "a.flag = 1"
    p = run_cli_inproc(ws, "diff", "add", "other", "off", "on", "--apply", "flag:")
    assert p.returncode == 2 and "flag:FILE" in p.stderr and p.stderr.count("\n") == 1
