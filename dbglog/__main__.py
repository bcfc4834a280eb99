from dbglog.entry import main

main()
