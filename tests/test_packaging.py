"""The wheel ships templates/ and finds it at run time."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def test_templates_found_from_source_tree():
    from dbglog.kb import mirror

    assert (mirror.templates_dir() / "investigation.md.j2").is_file()


def test_installed_package_has_templates(tmp_path):
    """When dbglog is installed as a wheel (CI does this), its templates ship inside it."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-c", "import dbglog, sys; print(dbglog.__file__)"],
                       cwd=tmp_path, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("dbglog is not installed in this interpreter")
    pkg = Path(r.stdout.strip()).parent
    if (pkg.parent / "pyproject.toml").exists():
        pytest.skip("dbglog is installed in editable mode (from a source tree)")
    assert (pkg / "templates" / "investigation.md.j2").is_file()
    r = subprocess.run([sys.executable, "-m", "dbglog", "demo", "--json"], cwd=tmp_path, env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
