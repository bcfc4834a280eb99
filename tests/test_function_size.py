"""No function in the package is over 80 lines; a new long function fails here, and
``python bench/function_sizes.py`` prints the full list with the complexity findings."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 80


def _sizes():
    spec = importlib.util.spec_from_file_location("function_sizes", ROOT / "bench" / "function_sizes.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_no_function_in_the_package_is_over_80_lines():
    long_ = _sizes().long_functions([ROOT / "dbglog"], LIMIT)
    assert [f"{d['path']}:{d['line']} {d['name']} ({d['lines']} lines)" for d in long_] == []


def test_the_counter_counts_a_long_function_and_its_nested_ones(tmp_path):
    def lines(indent: str, n: int) -> str:
        return "\n".join(f"{indent}x{i} = {i}" for i in range(n))
    (tmp_path / "m.py").write_text(f"def short():\n    pass\n\n\nclass C:\n    def long(self):\n{lines(' ' * 8, 5)}\n"
                                   f"        def inner():\n{lines(' ' * 12, 85)}\n")
    mod = _sizes()
    mod.ROOT = tmp_path  # (paths are reported relative to ROOT)
    found = {d["name"]: d["lines"] for d in mod.long_functions([tmp_path], LIMIT)}
    assert found == {"C.long": 92, "C.long.inner": 86}
