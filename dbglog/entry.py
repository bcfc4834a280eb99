"""The `dbglog` executable: `dbglog hook ...` goes straight to dbglog/hooks.py (no click, no CLI
module: an agent pays for it before every shell command), a plain `dbglog tried ...` or
`dbglog attempt add ...` to dbglog/fastpath.py; everything else to the CLI. ``run`` is the
executable's entry point: ``main`` and then a quick exit."""

import os
import sys


def _line_buffered() -> None:
    """Every stdout line leaves before the next stderr note: with both streams on one pipe
    (``2>&1``, an agent's tool), a block-buffered stdout was cut mid-line by a note
    ("... (partial)note: ..."). Each message ends its own line; this keeps them whole."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(line_buffering=True)
        except (AttributeError, ValueError):  # a replaced stream (tests, embedding): leave it
            pass


def _closed_streams_to_devnull() -> None:
    """A stream the caller closed (`dbglog run ... >&-`) is None in Python: every print then failed
    after the repro had run, and the run was lost. /dev/null takes its descriptor (the lowest free
    one, so in order 0, 1, 2) and a later file cannot land on it; what cannot be shown is dropped."""
    for name, mode in (("stdin", "r"), ("stdout", "w"), ("stderr", "w")):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, mode))  # noqa: SIM115 - lives as long as the process


def main() -> None:
    """The command; then the freshness check's manifest it found is written (``kb.sync.flush_listing``)
    -- unless the command reported an error, which drops it: such a command changes nothing."""
    try:
        _main()
    except SystemExit:
        _flush_listing()
        raise
    _flush_listing()


def _flush_listing(keep: bool = True) -> None:
    sync = sys.modules.get("dbglog.kb.sync")  # (not imported: no workspace was opened)
    if sync is not None:
        if keep:
            sync.flush_listing()
        else:
            sync.drop_listing()


def _main() -> None:
    _closed_streams_to_devnull()
    _line_buffered()
    if sys.argv[1:2] == ["hook"]:
        from dbglog.hooks import main as hook_main

        sys.exit(hook_main(sys.argv[2:]))
    fast = {("tried",): "tried", ("attempt", "add"): "attempt_add"}  # without click when the line is plain
    name = fast.get(tuple(sys.argv[1:2])) or fast.get(tuple(sys.argv[1:3]))
    if name:
        from dbglog import fastpath

        try:
            code = getattr(fastpath, name)(sys.argv[2 if name == "tried" else 3:])
        except KeyboardInterrupt:
            _flush_listing(keep=False)
            sys.stderr.write("dbglog: interrupted\n")
            sys.exit(130)
        if code is not None:
            sys.exit(code)
    from dbglog.cli import main as cli_main

    cli_main()


def run() -> None:
    """The console script and ``python -m dbglog``: ``main()``, then the process ends without
    Python's teardown of every module it imported (~11 ms of each command, after its output: click,
    sqlite3, the regex tables). Taken only when nothing is left to do -- no thread but daemons, the
    output flushed, the exit functions run, every database connection closed (the last close
    checkpoints the WAL, which syncs what a bisection step wrote without an fsync); anything else
    (an exit message, a closed pipe, a thread still working) takes Python's own exit. Tests call
    ``main`` in-process; this is for a process of its own only."""
    try:
        main()
        code = 0
    except SystemExit as e:
        code = 0 if e.code is None else e.code
    if not isinstance(code, int) or not _quiet():
        sys.exit(code)
    import atexit

    atexit._run_exitfuncs()  # (what Python would run at exit; they are cleared once run)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - written by an exit function into a closed pipe: as Python would
        code = code or 120
    store = sys.modules.get("dbglog.kb.store")
    if store is not None:
        store.close_all()
    os._exit(code)


def _quiet() -> bool:
    """No thread but daemons alive, and the output written."""
    import threading

    main_thread = threading.main_thread()
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not main_thread):
        return False
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - a closed pipe: Python's exit reports it its own way
        return False
    return True


if __name__ == "__main__":
    run()
