import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REPROS = Path(__file__).resolve().parent / "fixtures" / "repros"
sys.path.insert(0, str(ROOT))


def _alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


@pytest.fixture
def pid_dir(tmp_path, monkeypatch):
    """Fixture repro scripts write their pid here; after the run none of them may be alive."""
    d = tmp_path / "pids"
    d.mkdir()
    monkeypatch.setenv("DBGLOG_TEST_PIDS", str(d))
    return d


def recorded_pids(d: Path) -> list[int]:
    return [int(p.stem) for p in d.glob("*.pid")]


def assert_none_alive(d: Path) -> None:
    pids = recorded_pids(d)
    alive = [p for p in pids if _alive(p)]
    for p in alive:  # clean up before failing so one bad test does not poison the rest
        try:
            os.kill(p, 9)
        except OSError:
            pass
    assert not alive, f"processes left alive: {alive}"
