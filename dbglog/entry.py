"""The `dbglog` executable: `dbglog hook ...` goes straight to dbglog/hooks.py (no click, no CLI
module: an agent pays for it before every shell command); everything else to the CLI."""

import sys


def main() -> None:
    if sys.argv[1:2] == ["hook"]:
        from dbglog.hooks import main as hook_main

        sys.exit(hook_main(sys.argv[2:]))
    from dbglog.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
