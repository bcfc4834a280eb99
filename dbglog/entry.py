"""The `dbglog` executable: `dbglog hook ...` goes straight to dbglog/hooks.py (no click, no CLI
module: an agent pays for it before every shell command), a plain `dbglog tried ...` or
`dbglog attempt add ...` to dbglog/fastpath.py; everything else to the CLI."""

import sys


def main() -> None:
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
            sys.stderr.write("dbglog: interrupted\n")
            sys.exit(130)
        if code is not None:
            sys.exit(code)
    from dbglog.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
