"""dbglog: a debug-log knowledge base and bisection assistant."""

__version__ = "0.1.0"
