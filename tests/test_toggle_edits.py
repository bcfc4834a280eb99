"""Unit tests of what toggle bisection changes: suspect lines, config keys, dbglog.toggle, the journal."""

import json
import os
import stat
import subprocess
import sys

import pytest

from dbglog.bisect import configedit, suspects
from dbglog.util.errors import DbglogError

PY = '''\
import os
def f(x):
    y = x + 1  # dbglog: suspect add
    return y  # dbglog: suspect ret


class K:
    def m(self):
        # dbglog: begin blk
        for i in range(3):
            print(i,
                  """multi
line""")
        z = {"a": 1,
             "b": 2}
        # dbglog: end blk
        return 1


while True:
    break  # dbglog: suspect brk
print(f(1))  # dbglog: suspect add
'''


def test_scan_and_python_off_keeps_file_valid(tmp_path):
    p = tmp_path / "m.py"
    p.write_text(PY)
    found = suspects.scan([tmp_path])
    assert sorted(found) == ["add", "blk", "brk", "ret"]
    assert len(found["add"]) == 2  # one name, two places: they switch together
    original = p.read_bytes()
    compile(original, "m.py", "exec")
    all_regions = [r for rs in found.values() for r in rs]
    for _name, regions in found.items():  # each alone, and all together
        for off in (regions, all_regions):
            out = suspects.render(original, off)
            compile(out, "m.py", "exec")
            assert out.count(b"\n") == original.count(b"\n")  # line numbers unchanged
    out = suspects.render(original, found["add"]).decode()
    assert "    pass  # dbglog off: y = x + 1" in out
    assert out.splitlines()[21].startswith("pass  # dbglog off: print(f(1))")
    out = suspects.render(original, found["blk"]).decode()
    assert "        if False:  # dbglog off: # dbglog: begin blk" in out
    assert "            for i in range(3):" in out
    ns: dict = {}
    exec(compile(out, "m.py", "exec"), ns)  # runs: the block is dead code
    assert suspects.render(original, []) == original


def test_other_languages_and_errors(tmp_path):
    c = tmp_path / "k.cu"
    c.write_text("int main() {\n  launch();  // dbglog: suspect launch\n  // dbglog: begin sync\n"
                 "  sync();\n  check();\n  // dbglog: end sync\n}\n")
    sh = tmp_path / "run.sh"
    sh.write_text("#!/bin/sh\nif true; then\n  export A=1  # dbglog: suspect a\nfi\necho ok\n")
    found = suspects.scan([c, sh])
    out = suspects.render(c.read_bytes(), found["launch"] + found["sync"]).decode()
    assert "  // dbglog off: launch();  // dbglog: suspect launch" in out
    assert "  // dbglog off: sync();\n  // dbglog off: check();" in out
    out = suspects.render(sh.read_bytes(), found["a"])
    (tmp_path / "off.sh").write_bytes(out)
    r = subprocess.run(["sh", "-n", str(tmp_path / "off.sh")], capture_output=True)
    assert r.returncode == 0 and b": # dbglog off: export A=1" in out
    bad = tmp_path / "bad.py"
    bad.write_text("# dbglog: begin x\nprint(1)\n")
    with pytest.raises(DbglogError, match="no `dbglog: end x`"):
        suspects.scan([bad])
    bad.write_text("for i in range(2):  # dbglog: suspect loop\n    print(i)\n")
    found = suspects.scan([bad])
    with pytest.raises(DbglogError, match="not a complete statement"):
        suspects.render(bad.read_bytes(), found["loop"])


JSON_TEXT = '{\n  "model": {"fused": false, "dims": [1, 2, 3]},\n  "train": {\n    "lr": 0.01\n  }\n}\n'
YAML_TEXT = """\
# training config
model:
  fused: false   # the fast path
  dims: [1, 2, 3]
train:
  lr: 0.01
  name: 'run-1'
"""
TOML_TEXT = """\
# training config
[model]
fused = false  # the fast path
dims = [1, 2, 3]

[train]
lr = 0.01
"""


@pytest.mark.parametrize("fmt,text", [("json", JSON_TEXT), ("yaml", YAML_TEXT), ("toml", TOML_TEXT)])
def test_config_set_preserves_the_rest(fmt, text):
    out = configedit.set_value(text, fmt, ["model", "fused"], True)
    assert configedit.get_value(out, fmt, ["model", "fused"]) is True
    diff = [(a, b) for a, b in zip(text.splitlines(), out.splitlines()) if a != b]
    assert len(diff) == 1 and len(out.splitlines()) == len(text.splitlines())  # one line changed
    if fmt != "json":
        assert "# the fast path" in diff[0][1] and out.startswith("# training config")
    out2 = configedit.set_value(text, fmt, ["train", "opt"], "adam")  # a new key
    assert configedit.get_value(out2, fmt, ["train", "opt"]) == "adam"
    assert configedit.get_value(out2, fmt, ["train", "lr"]) == 0.01
    if fmt != "json":
        assert "# the fast path" in out2
    assert configedit.parse_value("3") == 3 and configedit.parse_value("abc") == "abc"


def test_coop_toggle(monkeypatch, tmp_path):
    import dbglog
    from dbglog import coop

    coop._reset_for_tests()
    for v in ("DBGLOG_TOGGLES", "DBGLOG_TOGGLES_ALL", "DBGLOG_TOGGLE_COUNT_FILE"):
        monkeypatch.delenv(v, raising=False)
    assert dbglog.toggle("anything") is True  # outside a bisection: everything on
    monkeypatch.setenv("DBGLOG_TOGGLES", '["a"]')
    monkeypatch.setenv("DBGLOG_TOGGLES_ALL", '["a", "b"]')
    assert dbglog.toggle("a") and not dbglog.toggle("b") and dbglog.toggle("unmanaged")
    monkeypatch.setenv("DBGLOG_TOGGLES", "a, b")
    monkeypatch.delenv("DBGLOG_TOGGLES_ALL")
    assert dbglog.toggle("b") and not dbglog.toggle("c")
    monkeypatch.delenv("DBGLOG_TOGGLES")
    monkeypatch.setenv(coop.limit_var("pass.x"), "3")
    monkeypatch.setenv("DBGLOG_TOGGLE_COUNT_FILE", str(tmp_path / "n.json"))
    assert [dbglog.toggle("pass.x", count=True) for _ in range(5)] == [True] * 3 + [False] * 2
    assert json.loads((tmp_path / "n.json").read_text()) == {"pass.x": 5}
    # importing dbglog for the API does not import the CLI
    code = "import sys, dbglog; dbglog.toggle('x'); print('dbglog.cli' in sys.modules, 'click' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(dbglog.__file__))))
    assert r.stdout.split() == ["False", "False"]


def test_journal_restores_orphans_byte_exact(tmp_path):
    from dbglog.bisect.journal import Journal, restore_orphans
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace

    recs = Records(Workspace(tmp_path / ".dbglog"), create=True)
    f = tmp_path / "src.py"
    f.write_bytes(b"print(1)\r\n\xff\n")
    os.chmod(f, 0o755)
    j = Journal(recs.store, "s1")
    j.write(f, b"pass\n")
    assert f.read_bytes() == b"pass\n"
    assert restore_orphans(recs.store) == []  # the owner (this process) is alive
    recs.store.q("UPDATE toggle_journal SET pid = 999999999")  # the owner died (kill -9)
    (tmp_path / ".src.py.abc.tmp").write_bytes(b"half")  # a write killed half-way
    recs.close()
    recs = Records(Workspace(tmp_path / ".dbglog"))  # any command restores at start-up
    assert recs.restored_files == [str(f)]
    assert f.read_bytes() == b"print(1)\r\n\xff\n" and stat.S_IMODE(f.stat().st_mode) == 0o755
    assert not (tmp_path / ".src.py.abc.tmp").exists()
    assert recs.store.q("SELECT count(*) FROM toggle_journal").fetchone()[0] == 0


def test_a_rewritten_module_never_runs_stale_bytecode(tmp_path):
    # Python trusts a .pyc whose recorded source mtime (whole seconds) and size match. Toggle trials
    # write variants of the same size within one second (two suspects of the same length switched
    # off), and a restore can put back an original of the last trial's size: each must run as written.
    from dbglog.bisect.journal import Journal, write_file
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace

    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": ""}  # bytecode is written, as for users
    f = tmp_path / "m.py"

    def runs(expected: str, same_second: bool = True) -> None:
        if same_second:
            os.utime(f, (1_700_000_000, 1_700_000_000))
        out = subprocess.run([sys.executable, "-c", "import m; print(m.x)"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, check=True).stdout.strip()
        assert out == expected
        assert list((tmp_path / "__pycache__").glob("m.*.pyc"))  # the cache is in use, not bypassed

    for v in (1, 2, 3):  # the copy-per-slot path
        write_file(f, f"x = {v}\n".encode())
        runs(str(v))
    recs = Records(Workspace(tmp_path / ".dbglog"), create=True)
    j = Journal(recs.store, "s1")  # the in-place path: edits, then the original put back
    j.write(f, b"x = 8\n")
    runs("8")
    j.release_all()
    runs("3")
    (tmp_path / "n.py").write_text("y = 1\n")
    (tmp_path / "__pycache__" / "n.cpython-0.pyc").write_bytes(b"")
    write_file(f, b"x = 4\n")
    assert (tmp_path / "__pycache__" / "n.cpython-0.pyc").exists()  # only the rewritten module's cache goes
    recs.close()
