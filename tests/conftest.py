import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

# A runner that starts pytest with SIGINT ignored (a background job of a non-interactive shell, some
# CI agents) passes that on to every child, and the Ctrl-C tests then wait for their timeouts:
# handled, not ignored, the children start with the default disposition.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Started under nohup (or by any parent that ignores SIGHUP), every child inherits SIGHUP ignored, and dbglog
# leaves an ignored SIGHUP alone on purpose (the user's nohup wins): the SIGHUP cases cannot happen here.
# Kept ignored (resetting it would undo the nohup that keeps this run alive); those cases skip, saying why.
SIGHUP_IGNORED = signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
skip_if_sighup_ignored = pytest.mark.skipif(SIGHUP_IGNORED, reason="SIGHUP is inherited as ignored (nohup): dbglog "
                                            "leaves an ignored SIGHUP alone, so a SIGHUP cannot stop it here")
STOP_SIGNALS = [signal.SIGTERM, pytest.param(signal.SIGHUP, marks=skip_if_sighup_ignored, id="SIGHUP"),
                signal.SIGINT]

REPO = Path(__file__).resolve().parent.parent
ROOT = REPO
REPROS = Path(__file__).resolve().parent / "fixtures" / "repros"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from dbglog.kb.records import Records  # noqa: E402
from dbglog.util.workspace import Workspace  # noqa: E402


def _scratch_in_ram() -> None:
    """Temporary directories (tmp_path, and TMPDIR for every child) on /dev/shm when it is a roomy
    tmpfs and no TMPDIR was chosen. Every record write fsyncs twice and SQLite fsyncs its commits:
    ~3.5 ms each on this machine's ext4, nothing on tmpfs, and the suite makes thousands. The
    durability the fsyncs buy is against power loss, which no test can observe; kill -9 and a full
    disk (a tmpfs of its own) are tested the same on either. A container's 64 MB /dev/shm is not used."""
    import tempfile

    if os.environ.get("TMPDIR"):
        return
    try:
        st = os.statvfs("/dev/shm")
    except OSError:
        return
    if st.f_bavail * st.f_frsize >= 2 << 30 and os.access("/dev/shm", os.W_OK | os.X_OK):
        os.environ["TMPDIR"] = "/dev/shm"
        tempfile.tempdir = None  # gettempdir() reads TMPDIR again


_scratch_in_ram()


def pytest_configure(config):
    # The suite starts ~1,000 `python -m dbglog` processes. Where bytecode is not written
    # (PYTHONDONTWRITEBYTECODE=1, a fresh clone) each of them compiled the whole package from source:
    # ~0.35 s of CPU apiece. Compile it once here, in the controller before any worker starts; the
    # children only read the .pyc files (gitignored), which Python checks against the sources.
    if not hasattr(config, "workerinput"):
        import compileall

        compileall.compile_dir(str(REPO / "dbglog"), quiet=2)


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session):
    # pytest keeps the assertion-rewritten test modules only when bytecode may be written; without that
    # every worker re-rewrites all of them (~5 s of CPU each). Collection only: what the tests import
    # later (repros edited in place, for one) keeps the environment's setting.
    saved = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        yield
    finally:
        sys.dont_write_bytecode = saved


def pytest_xdist_auto_num_workers(config):
    """`-n auto`: half as many workers again as cores. Most of the slow tests wait (timeouts, hangs,
    a Slurm node, child processes) rather than compute; on 2 cores 3 workers overlap those waits
    (measured: 129 s -> 86 s on the slowest nine files) while 4 began to crowd timing-sensitive tests."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook honours it
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(2, cores + cores // 2)


# The files that take longest, measured, slowest first. With `--dist loadfile` a whole file runs on
# one worker, so a long file that starts last sets the wall time; these are handed out first (the
# pytest options turn xdist's own order, by number of tests, off). Other files keep their order; a
# name that no longer exists is harmless.
SLOW_FILES_FIRST = (
    "test_bisect_toggles_kill.py", "test_bisect_history.py", "test_search_corpus.py", "test_bisect_toggles.py",
    "test_bisect_bayes_cli.py", "test_slurm.py", "test_bisect_flaky.py", "test_startup.py", "test_bisect_bayes.py",
    "test_runner.py", "test_captures.py", "test_hooks.py", "test_durability.py", "test_mcp_server.py",
    "test_server_mode.py", "test_import_property.py", "test_cli_run.py", "test_bisect_toggles_options.py",
    "test_mirror_roundtrip.py", "test_run_signals.py", "test_search_index_sync.py", "test_runs_prune.py",
    "test_bisect_captures.py", "test_import_lossless.py", "test_corpus_import.py", "test_clean_text.py",
)


def pytest_collection_modifyitems(session, config, items):
    rank = {name: i for i, name in enumerate(SLOW_FILES_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: a file's tests keep their order


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """An empty directory as cwd, with no inherited DBGLOG_DIR and no editor prompts."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DBGLOG_DIR", raising=False)
    monkeypatch.setenv("DBGLOG_NO_EDITOR", "1")
    return tmp_path


def cli_env(extra=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("DBGLOG_DIR", None)
    env.update(extra or {})
    return env


def run_cli(*args, cwd, input=None, env=None, timeout=600):
    """The real entry point in a subprocess (python -m dbglog), stdin not a terminal. ``timeout`` bounds a
    command that never ends; a bisection's dozens of runs take minutes at load 20 on 2 cores."""
    return subprocess.run(
        [sys.executable, "-m", "dbglog", *map(str, args)], cwd=cwd, input=input,
        capture_output=True, text=True, env=cli_env(env), timeout=timeout,
        stdin=None if input is not None else subprocess.DEVNULL,
    )


class InProcess:
    """Call dbglog.cli.main in-process (fast); returns (exit code, stdout, stderr)."""

    def __init__(self, capsys):
        self.capsys = capsys

    def __call__(self, *args):
        from dbglog.cli import main

        self.capsys.readouterr()
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        out = self.capsys.readouterr()
        return code, out.out, out.err


@pytest.fixture
def dbg(workdir, capsys):
    return InProcess(capsys)


def _alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


@pytest.fixture
def pid_dir(tmp_path, monkeypatch):
    """Fixture repro scripts write their pid here; after the run none of them may be alive. Whatever is
    still alive at teardown (a test that failed before its check) is killed, so it loads no later test."""
    d = tmp_path / "pids"
    d.mkdir()
    monkeypatch.setenv("DBGLOG_TEST_PIDS", str(d))
    yield d
    for pid in recorded_pids(d):
        if _alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


@pytest.fixture
def spawn():
    """``subprocess.Popen`` for a test: every child it starts and that still runs at teardown (a
    ``communicate(timeout=...)`` that timed out, an assertion that failed first) is stopped -- SIGTERM, so
    a dbglog stops its own process tree, then SIGKILL after 10 s -- instead of loading the tests after it."""
    procs: list[subprocess.Popen] = []

    def start(*args, **kwargs) -> subprocess.Popen:
        p = subprocess.Popen(*args, **kwargs)
        procs.append(p)
        return p

    yield start
    for p in procs:
        if p.poll() is None:
            p.terminate()
            try:
                p.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.communicate()


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


def run_cli_at(cwd, *args, check=None, input=None):
    """Like run_cli, with the workspace first and an optional expected exit code."""
    p = run_cli(*args, cwd=cwd, input=input)
    if check is not None:
        assert p.returncode == check, (p.returncode, p.stdout, p.stderr)
    return p


@pytest.fixture
def cli():
    return run_cli_at


def run_cli_inproc(cwd, *args, check=None, input=None, env=None):
    """``run_cli_at`` without the process: the real entry point (dbglog.entry.main, so `hook` and the
    fast paths too) called in this process with the cwd, environment, argv and a non-terminal stdin
    that ``run_cli`` would give it; returns the same CompletedProcess. ~50x cheaper than a Python
    start-up. Keep ``run_cli`` for what is about the process itself: signals, kill -9, exit through
    the interpreter, non-UTF-8 arguments, start-up cost."""
    import io
    import tempfile

    from dbglog.entry import main

    argv = ["dbglog", *map(str, args)]
    saved = (os.getcwd(), dict(os.environ), sys.argv, sys.stdin, sys.stdout, sys.stderr)
    out, err = io.BytesIO(), io.BytesIO()
    stdin = tempfile.TemporaryFile("w+", encoding="utf-8")  # a real fd, like subprocess's DEVNULL / input
    if input is not None:
        stdin.write(input)
        stdin.seek(0)
    wrapped = [io.TextIOWrapper(b, encoding="utf-8", errors="surrogateescape", write_through=True)
               for b in (out, err)]
    try:
        os.chdir(cwd)
        os.environ.pop("DBGLOG_DIR", None)
        os.environ.update(env or {})
        sys.argv = argv
        sys.stdin = stdin
        sys.stdout, sys.stderr = wrapped
        try:
            main()
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        cwd0, env0, sys.argv, sys.stdin, sys.stdout, sys.stderr = saved
        os.chdir(cwd0)
        os.environ.clear()
        os.environ.update(env0)
        stdin.close()
        for w in wrapped:  # detach: a collected wrapper would close the buffer it wraps
            w.flush()
            w.detach()
    p = subprocess.CompletedProcess(argv, code, out.getvalue().decode("utf-8", "replace"),
                                    err.getvalue().decode("utf-8", "replace"))
    if check is not None:
        assert p.returncode == check, (p.returncode, p.stdout, p.stderr)
    return p


@pytest.fixture
def cli_fast():
    return run_cli_inproc


@pytest.fixture
def ws(tmp_path):
    d = tmp_path / "ws"
    d.mkdir()
    run_cli_inproc(d, "init", check=0)  # (the same init in-process: a Python start-up saved per test)
    return d



def load_corpus(recs: Records, corpus) -> dict[str, str]:
    """Record the corpus through the normal write paths; return key -> investigation id."""
    ids = {}
    for inv in corpus:
        i = recs.new(inv["title"], symptom=inv["symptom"], tags=inv["tags"]).id
        ids[inv["key"]] = i
        for title, hyp, did, result, concl, outcome in inv["attempts"]:
            recs.add_attempt(i, title=title, hypothesis=hyp, did=did, result=result, conclusion=concl,
                             outcome=outcome)
        for factor, w, b in inv["differences"]:
            recs.diff_add(i, factor, w, b)
        for text, detail in inv["next"]:
            recs.next_add(i, text, detail)
        if inv["status"] != "open":
            recs.set_status(i, inv["status"], inv["root_cause"])
    return ids


@pytest.fixture
def recs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = Records(Workspace(tmp_path / ".dbglog"), create=True)
    yield r
    r.close()


def module_records(tmp_path_factory, name: str) -> Records:
    """A fresh workspace of its own (a git root, so nothing above it is found) for one test module's records."""
    root = tmp_path_factory.mktemp(name)
    (root / ".git").mkdir()
    return Records(Workspace(root / ".dbglog"), create=True)


@contextlib.contextmanager
def attempts_workspace(tmp_path_factory, name: str, problem: str, attempts: list[dict]):
    """A workspace of one investigation (``problem``) holding ``attempts`` (each its fields), in order: its database
    connection, for asking `tried` about them; closed on leaving."""
    recs = module_records(tmp_path_factory, name)
    try:
        inv = recs.new(problem)
        for a in attempts:
            recs.add_attempt(inv.id, **a)
        yield recs.store.conn
    finally:
        recs.close()


def first_tried(conn, idea: str) -> str | None:
    """The title of the record `tried` judges first the same experiment as ``idea``, or None when none is."""
    from dbglog.kb import search

    res = search.tried(conn, idea)
    return res.close[0].title if res.close else None


def one_attempt(tmp_path_factory, name: str, problem: str, **attempt):
    """``attempts_workspace`` of one attempt (its fields as keywords)."""
    return attempts_workspace(tmp_path_factory, name, problem, [attempt])


@pytest.fixture(scope="session")
def corpus_recs(tmp_path_factory):
    from search_corpus import CORPUS

    root = tmp_path_factory.mktemp("corpus")
    r = Records(Workspace(root / ".dbglog"), create=True)
    ids = load_corpus(r, CORPUS)
    yield r, ids
    r.close()


def old_database(path: Path, below: str):
    """An open sqlite3 connection to a new database at ``path`` holding only the migrations named below ``below``
    (a workspace made by an older dbglog), its user_version set to match: the caller fills it, commits and closes."""
    import sqlite3

    import sqlite_utils
    from sqlite_utils.migrations import Migrations

    from dbglog.kb import store

    conn = sqlite3.connect(path)
    before = [m for m in store.MIGRATIONS if m[0] < below]
    old = Migrations("dbglog")
    for name, fn in before:
        old(name=name)(fn)
    old.apply(sqlite_utils.Database(conn))
    conn.execute(f"PRAGMA user_version = {len(before)}")
    return conn


def old_database_with_attempt(path: Path, below: str, title: str):
    """``old_database`` holding one investigation and its attempt 1, titled ``title`` and written as an older dbglog
    wrote it (no index words of its own)."""
    conn = old_database(path, below)
    conn.execute("INSERT INTO investigations (id, title) VALUES ('20260101-x-abcd', 'old')")
    conn.execute("INSERT INTO attempts (investigation_id, number, title, outcome) VALUES "
                 "('20260101-x-abcd', 1, ?, 'failed')", (title,))
    return conn


@contextlib.contextmanager
def opened_by_dbglog(conn, path: Path):
    """The old database ``conn`` (``old_database``) committed, closed, and opened as this dbglog opens a workspace's
    (its migrations run); the store is closed after the block."""
    from dbglog.kb import store

    conn.commit()
    conn.close()
    s = store.Store(path)
    try:
        yield s
    finally:
        s.close()
