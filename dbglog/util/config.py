"""Reading `.dbglog/config.toml`: one rule for every setting (bottom layer, stdlib only).

A missing file or table is the defaults. A file that cannot be read or parsed is one line naming
it (`DbglogError`), except where a caller must never fail (the agent hooks) and asks for the
default instead. ``needle``: bytes the setting's key must contain, so that the common case (the
key is not there) costs no TOML parse on the commands an agent runs all the time.
"""

from __future__ import annotations

from pathlib import Path

from dbglog.util.errors import DbglogError

BREAKER_THRESHOLD = 3  # failed attempts ending the same way before the circuit breaker speaks


def parse(text: str) -> dict:
    """TOML text as a dict (ValueError when it is not TOML): the one TOML reader, also for the
    package's own tables (advice.toml) and for checking a config before it is written."""
    try:
        import tomllib  # Python >= 3.11
    except ModuleNotFoundError:  # pragma: no cover
        import tomli as tomllib
    return tomllib.loads(text)


def unreadable(config_path, why) -> DbglogError:
    """The one line for a config file that cannot be read or parsed."""
    return DbglogError(f"cannot read {config_path}: {why}; fix or remove the file")


def load(config_path, needle: bytes | None = None) -> dict:
    """The parsed file, or {} when it is missing (or lacks ``needle``)."""
    try:
        raw = Path(config_path).read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except OSError as e:
        raise unreadable(config_path, e.strerror or e) from None
    if needle is not None and needle not in raw:
        return {}
    try:
        return parse(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise unreadable(config_path, e) from None


def tables(doc: dict, name: str, where) -> list[dict]:
    """The ``[[name]]`` array of tables of a parsed file ([] when absent); anything else is one
    line naming ``where``."""
    entries = doc.get(name, [])
    if not isinstance(entries, list):
        raise DbglogError(f"{where}: '{name}' must be an array of tables ([[{name}]])")
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            raise DbglogError(f"{where}: {name} #{i + 1} must be a table")
    return entries


def table(config_path, name: str, needle: bytes | None = None) -> dict:
    """The ``[name]`` table ({} when absent, or when it is not a table)."""
    value = load(config_path, needle).get(name)
    return value if isinstance(value, dict) else {}


def breaker_threshold(config_path) -> int:
    """``[breaker] threshold`` (``[hook] breaker_threshold``, the command hook's older name, also
    read), else 3. Never fails: the hooks and `attempt add` must not stop over a bad setting."""
    try:
        doc = load(config_path, b"threshold")
        value = doc.get("breaker", {}).get("threshold", doc.get("hook", {}).get("breaker_threshold"))
        return int(value) if value is not None and int(value) >= 1 else BREAKER_THRESHOLD
    except (DbglogError, ValueError, TypeError, AttributeError):
        return BREAKER_THRESHOLD
