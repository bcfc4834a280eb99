"""dbglog: a debug-log knowledge base and bisection assistant.

``dbglog.toggle(name)`` (see :mod:`dbglog.coop`) is importable cheaply from code under test.
"""

__version__ = "0.1.0"


def __getattr__(name):  # lazy: `import dbglog` stays free for the CLI
    if name == "toggle":
        from dbglog.coop import toggle

        return toggle
    raise AttributeError(f"module 'dbglog' has no attribute {name!r}")
