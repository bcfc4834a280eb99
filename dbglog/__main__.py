from dbglog.cli import main

main()
