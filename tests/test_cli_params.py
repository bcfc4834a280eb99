"""The CLI's parameter types (dbglog/cli/common.py): each refusal is one line naming the option, exit 2,
before anything runs; what they accept is what the commands used to parse by hand."""

import click
import pytest
from hypothesis import given, settings, strategies as st

from dbglog.cli.common import COUNT, ENV_PAIR, GRACE, LIMIT_SIZE, SECONDS, SIZE, VAR_NAME


def _cmd(ptype, **kw):
    @click.command()
    @click.option("--x", type=ptype, **kw)
    def c(x):
        click.echo(repr(x))

    return c


def convert(ptype, text):
    """(value, None) or (None, the one-line message the user sees)."""
    try:
        return _cmd(ptype).main(["--x", text], standalone_mode=False), None
    except click.ClickException as e:
        return None, e.format_message()


def value(ptype, text):
    cmd = _cmd(ptype)
    ctx = cmd.make_context("c", ["--x", text])
    return ctx.params["x"]


@given(st.integers(min_value=-(2**40), max_value=2**40))
@settings(max_examples=60, deadline=None)
def test_count_takes_1_to_int32_and_names_the_option_otherwise(n):
    if 1 <= n <= 2**31 - 1:
        assert value(COUNT, str(n)) == n
    else:
        _, msg = convert(COUNT, str(n))
        assert msg == f"--x must be at {'least 1' if n < 1 else 'most 2147483647'}, got {n}"


def test_count_refuses_words_and_floats():
    for bad in ("abc", "1.5", "", "1e3"):
        _, msg = convert(COUNT, bad)
        assert msg and "'--x'" in msg and "not a valid integer" in msg, bad


@given(st.integers(min_value=0, max_value=2**50), st.sampled_from(["", "K", "M", "G", "k", "MiB", "gb"]))
@settings(max_examples=60, deadline=None)
def test_size_reads_units(n, unit):
    mult = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[unit[:1].lower()]
    assert value(SIZE, f"{n}{unit}") == (n * mult or None)
    assert value(LIMIT_SIZE, f"{n}{unit}") == n * mult  # 0: no cap, told apart from "not given"


def test_size_refusals_keep_their_words():
    for text in ("-5", "1e400", "lots", "nan", "inf"):
        assert convert(SIZE, text)[1] == f"--x: bad size {text!r}: use e.g. 2G, 500M, 64K or 0 for no cap"
    assert convert(SIZE, " ")[1] == "--x: empty size: give e.g. 64M, 512K, or 0 / none for no cap"
    for none in ("0", "none", "unlimited"):
        assert value(SIZE, none) is None and value(LIMIT_SIZE, none) == 0


@given(st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126, blacklist_characters="="), min_size=1),
       st.text(max_size=20).filter(lambda s: "\x00" not in s))
@settings(max_examples=60, deadline=None)
def test_env_pair_splits_at_the_first_equals(name, val):
    try:
        got = value(ENV_PAIR, f"{name}={val}")
    except click.ClickException:  # only a value the run would refuse (ops.check_env: control bytes)
        assert any(ord(c) < 32 or 0x7f <= ord(c) <= 0x9f for c in val) or any(0xd800 <= ord(c) <= 0xdfff for c in val)
        return
    assert got == (name, val)


@pytest.mark.parametrize("text,msg", [
    ("NOVALUE", "bad --x 'NOVALUE': use NAME=VALUE (NAME= sets empty; use --unset to remove)"),
    ("=1", "bad --x '=1': use NAME=VALUE (NAME= sets empty; use --unset to remove)"),
    ("BAD NAME=1", "bad --env name 'BAD NAME': a variable name has no '=', spaces or control characters"),
])
def test_env_pair_refusals(text, msg):
    assert convert(ENV_PAIR, text)[1] == msg


def test_var_name_refuses_what_no_process_has():
    assert value(VAR_NAME, "CUDA_VISIBLE_DEVICES") == "CUDA_VISIBLE_DEVICES"
    for bad in ("A=B", "", "A B", "A\nB"):
        assert convert(VAR_NAME, bad)[1].startswith(f"bad --unset name {bad!r}"), bad


def test_seconds_still_refuse_nan_inf_and_negatives():
    for bad in ("nan", "inf", "-1", "soon", "0"):
        assert convert(SECONDS, bad)[1], bad
    assert value(GRACE, "0") == 0.0 and value(SECONDS, "2.5") == 2.5


def test_refusals_through_the_cli_are_one_line_and_exit_2(cli_fast, tmp_path):
    for args, line in [
        (["run", "--repeat", "0", "--", "true"], "dbglog: --repeat must be at least 1, got 0"),
        (["run", "--env", "NOVALUE", "--", "true"], "dbglog: bad --env 'NOVALUE': use NAME=VALUE"),
        (["run", "--output-cap", "lots", "--", "true"], "dbglog: --output-cap: bad size 'lots'"),
        (["bisect", "git", "--good", "a", "--bad", "b", "--repeat", "0", "--", "true"],
         "dbglog: --repeat must be at least 1, got 0"),
        (["runs", "prune", "--max-size", ""], "dbglog: --max-size: empty size"),
    ]:
        r = cli_fast(tmp_path, *args)
        assert r.returncode == 2 and r.stderr.startswith(line) and r.stderr.count("\n") == 1, (args, r.stderr)
        assert not (tmp_path / ".dbglog").exists()  # refused before a workspace was made
