"""The one exception type the CLI turns into a clear line and exit status 2.

Library code raises DbglogError for anything the user can fix (bad input, unknown id,
conflict, missing tool). cli.py prints ``dbglog: <message>`` and exits 2; nothing else
should ever reach the user as a traceback.
"""


class DbglogError(Exception):
    """A problem the user can fix; the message is one line saying what and what to do."""

    exit_code = 2


class ConflictError(DbglogError):
    """A mirror file and the database both changed since the last sync."""
