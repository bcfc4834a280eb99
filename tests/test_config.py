"""config.toml has one reader (issue 13): `config.load` for every setting, so a missing file is the
defaults everywhere and a broken one is the same one line whichever table a command reads."""

import pytest

from dbglog.diagnose import evidence, signatures
from dbglog.run import advice
from dbglog.util import config
from dbglog.util.errors import DbglogError


def test_every_table_reads_through_config_load(tmp_path, monkeypatch):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[[signature]]\nname = "mine"\npattern = "boom"\n'
                   '[[advice]]\nid = "a1"\nstep = "look"\n'
                   '[[kernel_op]]\nfragment = "frag"\nop = "Tensor.op"\n')
    seen = []
    real = config.load
    monkeypatch.setattr(config, "load", lambda path, needle=None: seen.append(path) or real(path, needle))
    assert [s.name for s in signatures.load_user_signatures(cfg)] == ["mine"]
    assert advice.load(cfg)[0].id == "a1"
    assert evidence.load_kernel_ops(cfg) == [("frag", "Tensor.op")]
    assert len(seen) == 3 and all(str(p) == str(cfg) for p in seen)


def test_a_missing_file_is_the_defaults(tmp_path):
    gone = tmp_path / "nope" / "config.toml"
    assert signatures.load_user_signatures(gone) == [] and evidence.load_kernel_ops(gone) == []
    assert [r.source for r in advice.load(gone)] == [r.source for r in advice.load(None)]
    assert config.table(gone, "runs") == {} and config.breaker_threshold(gone) == config.BREAKER_THRESHOLD


@pytest.mark.parametrize("raw", [b"this is = = not toml\n", b"[runs]\nmax_size = '\xff'\n"])
def test_a_broken_file_is_one_line_from_every_reader(tmp_path, raw):
    cfg = tmp_path / "config.toml"
    cfg.write_bytes(raw)
    lines = set()
    for read in (config.load, signatures.load_user_signatures, advice.load, lambda p: config.table(p, "runs")):
        with pytest.raises(DbglogError) as e:
            read(cfg)
        lines.add(str(e.value))
    assert len(lines) == 1
    line = lines.pop()
    assert line.startswith(f"cannot read {cfg}: ") and line.endswith("; fix or remove the file") and "\n" not in line
    # where a setting must never stop the command, the defaults
    assert evidence.load_kernel_ops(cfg) == [] and config.breaker_threshold(cfg) == config.BREAKER_THRESHOLD


def test_needle_skips_the_parse_and_a_bad_signature_is_not_written(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text("not = = toml\n")
    assert config.load(cfg, needle=b"kernel_op") == {}
    with pytest.raises(DbglogError, match="cannot read"):
        config.load(cfg, needle=b"toml")
    cfg.write_text('x = "unterminated\n')
    with pytest.raises(DbglogError, match="cannot read"):
        signatures.add_user_signature(cfg, "ok", "fine")
    assert cfg.read_text() == 'x = "unterminated\n'


@pytest.mark.parametrize("name, read", [("signature", signatures.load_user_signatures), ("advice", advice.load)])
def test_arrays_of_tables_are_checked_in_one_place(tmp_path, name, read):
    cfg = tmp_path / "config.toml"
    cfg.write_text(f"{name} = 3\n")
    with pytest.raises(DbglogError, match=rf"^{cfg}: '{name}' must be an array of tables \(\[\[{name}\]\]\)$"):
        read(cfg)
    cfg.write_text(f"{name} = [1]\n")
    with pytest.raises(DbglogError, match=rf"^{cfg}: {name} #1 must be a table$"):
        read(cfg)
