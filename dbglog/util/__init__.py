"""Utilities every layer may use; they import nothing of dbglog's above this folder.

``errors`` (the one-line usage error), ``fsutil`` (atomic writes, bytecode drop), ``fserrors`` (what a failing
filesystem means, in one line), ``config`` (the one ``config.toml`` reader), ``workspace`` (where a
workspace's files are), ``redact`` (control bytes, terminal escapes and secrets out of stored text), ``lazyre`` (a regex
compiled on first use).
Importing this package imports nothing.
"""
