from dbglog.entry import run

run()
