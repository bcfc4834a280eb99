"""The executable ends without Python's module teardown (entry.run), but only when nothing is left
to do: the database is checkpointed and closed, the output complete, a working thread waited for."""

import json
import subprocess
import sys
from pathlib import Path

from conftest import cli_env, run_cli, run_cli_inproc


def test_a_write_command_leaves_the_database_checkpointed_and_closed(tmp_path):
    assert run_cli("init", cwd=tmp_path).returncode == 0
    assert run_cli("new", "NaN loss after step 300", "--no-env", cwd=tmp_path).returncode == 0
    r = run_cli("attempt", "add", "lower the learning rate", "-r", "still NaN", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    db = tmp_path / ".dbglog" / "dbglog.db"
    wal = Path(str(db) + "-wal")
    # The last connection's close checkpoints the WAL into the database file and removes it: a
    # process that skipped the close would leave the attempt only in the WAL.
    assert not wal.exists() or wal.stat().st_size == 0
    shown = run_cli("show", "--json", cwd=tmp_path)
    assert shown.returncode == 0 and "lower the learning rate" in shown.stdout


def test_exit_codes_and_long_output_are_kept(tmp_path):
    run_cli_inproc(tmp_path, "init")
    run_cli_inproc(tmp_path, "new", "hang in all_reduce", "--no-env")
    for i in range(40):  # (in-process: the records; the process under test is the reader below)
        title = "set NCCL_P2P_DISABLE=1" if i == 7 else f"try {i}"
        run_cli_inproc(tmp_path, "attempt", "add", title, "-r", "still hangs " + "x" * 4000)
    r = run_cli("show", "--json", cwd=tmp_path)  # a few hundred KB through the pipe: nothing cut at the end
    assert r.returncode == 0 and len(json.loads(r.stdout)["attempts"]) == 40
    assert run_cli("tried", "NCCL_P2P_DISABLE=1", cwd=tmp_path).returncode == 0  # exit 0: a close prior attempt
    assert run_cli("tried", "rewrite the allocator in rust", cwd=tmp_path).returncode == 1
    bad = run_cli("attempt", "add", "x", "--outcome", "maybe", "--json", cwd=tmp_path)
    assert bad.returncode == 2 and json.loads(bad.stdout)["error"]


def test_a_thread_still_working_is_waited_for(tmp_path):
    # A non-daemon thread alive when main returns: Python's own exit joins it; a quick exit would not.
    marker = tmp_path / "written"
    code = (
        "import sys, threading, time\n"
        "from dbglog import entry\n"
        "def work():\n"
        "    time.sleep(0.3)\n"
        f"    open({str(marker)!r}, 'w').write('done')\n"
        "def main():\n"
        "    threading.Thread(target=work).start()\n"
        "    sys.exit(3)\n"
        "entry.main = main\n"
        "entry.run()\n"
    )
    r = subprocess.run([sys.executable, "-c", code], env=cli_env(), capture_output=True, text=True, timeout=60)
    assert r.returncode == 3 and marker.read_text() == "done"


def test_quick_exit_keeps_the_exit_status_and_runs_exit_functions(tmp_path):
    marker = tmp_path / "atexit"
    code = (
        "import atexit, sys\n"
        "from dbglog import entry\n"
        f"atexit.register(lambda: open({str(marker)!r}, 'w').write('ran'))\n"
        "def main():\n"
        "    print('out', flush=False)\n"
        "    sys.exit(5)\n"
        "entry.main = main\n"
        "entry.run()\n"
    )
    r = subprocess.run([sys.executable, "-c", code], env=cli_env(), capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stdout, marker.read_text()) == (5, "out\n", "ran")
