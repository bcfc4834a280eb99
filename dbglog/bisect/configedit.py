"""Set one key of a JSON, YAML or TOML file, preserving the rest of the file.

* YAML: PyYAML's composer gives every node's exact start/end offsets, so the value's text span
  is replaced and nothing else changes (comments, quoting, key order, blank lines, anchors).
  A missing last key is inserted as a new line in its block mapping. This needs no extra
  dependency (ruamel.yaml round-trips comments too but re-flows indentation and quoting of
  untouched lines); the result is re-parsed and must equal the expected data.
* JSON: the same span replacement (JSON is YAML flow syntax), checked by ``json.loads``; when that
  cannot be done exactly (a missing key, a JSON feature PyYAML does not read), the file is
  re-dumped with its key order and detected indentation.
* TOML: tomlkit (format-preserving round trip).

Values are JSON literals when they parse as one (``3``, ``true``, ``null``, ``"x"``, ``[1,2]``),
strings otherwise.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

from dbglog.util.errors import DbglogError
from dbglog.util import jsonsafe

_MISSING = object()


def parse_value(text: str):
    try:
        return jsonsafe.loads(text)
    except ValueError:
        return text


def file_format(path: str) -> str:
    ext = Path(path).suffix.lower()
    if ext == ".json":
        return "json"
    if ext in (".yaml", ".yml"):
        return "yaml"
    if ext == ".toml":
        return "toml"
    raise DbglogError(f"--config {path}: unknown format (use a .json, .yaml/.yml or .toml file)")


def split_key(key: str) -> list[str]:
    parts = key.split(".")
    if not key or any(not p for p in parts):
        raise DbglogError(f"bad config key {key!r}: use KEY or KEY.PATH (dots between names)")
    return parts


def _get(data, path: list[str]):
    cur = data
    for p in path:
        if isinstance(cur, dict) and p in cur:
            cur = cur[p]
        elif isinstance(cur, list) and p.isdigit() and int(p) < len(cur):
            cur = cur[int(p)]
        else:
            return _MISSING
    return cur


def _set(data, path: list[str], value, fmt_path: str):
    cur = data
    for p in path[:-1]:
        if isinstance(cur, dict):
            if p not in cur:
                cur[p] = {}
            cur = cur[p]
        elif isinstance(cur, list) and p.isdigit() and int(p) < len(cur):
            cur = cur[int(p)]
        else:
            raise DbglogError(f"{fmt_path}: cannot follow key {'.'.join(path)!r} (at {p!r})")
    last = path[-1]
    if isinstance(cur, dict):
        cur[last] = value
    elif isinstance(cur, list) and last.isdigit() and int(last) < len(cur):
        cur[int(last)] = value
    else:
        raise DbglogError(f"{fmt_path}: cannot set key {'.'.join(path)!r}")
    return data


def get_value(text: str, fmt: str, path: list[str], where: str = "config"):
    return _get(_load(text, fmt, where), path)


def _load(text: str, fmt: str, where: str):
    try:
        if fmt == "json":
            return jsonsafe.loads(text)
        if fmt == "yaml":
            import yaml

            return yaml.safe_load(text)
        import tomlkit

        return tomlkit.parse(text).unwrap()
    except Exception as e:  # noqa: BLE001 - any parser error is the user's file
        raise DbglogError(f"{where}: cannot parse as {fmt.upper()}: {str(e).splitlines()[0]}") from None


def set_value(text: str, fmt: str, path: list[str], value, where: str = "config") -> str:
    """``text`` with ``path`` set to ``value``; everything else preserved."""
    data = _load(text, fmt, where)
    want = _set(copy.deepcopy(data), path, value, where)
    if fmt == "toml":
        return _toml_set(text, path, value, where)
    try:
        out = _span_set(text, fmt, path, value)
    except (_NoSpan, Exception):  # noqa: BLE001 - fall back below
        out = None
    if out is not None and _load_quiet(out, fmt) == want:
        return out
    if fmt == "json":
        return _json_dump(text, want)
    raise DbglogError(f"{where}: cannot set {'.'.join(path)!r} in place in this YAML file "
                      "(only block mappings and existing values are supported)")


def _load_quiet(text: str, fmt: str):
    try:
        return _load(text, fmt, "")
    except DbglogError:
        return _MISSING


class _NoSpan(Exception):
    pass


def _render_scalar(value, fmt: str) -> str:
    if fmt == "yaml" and isinstance(value, str):
        import yaml

        plain = re.fullmatch(r"[A-Za-z_./][\w./\-]*", value) is not None
        if plain and yaml.safe_load(value) == value:
            return value
    return json.dumps(value, ensure_ascii=False)


def _span_set(text: str, fmt: str, path: list[str], value) -> str:
    import yaml
    from yaml.nodes import MappingNode, ScalarNode, SequenceNode

    node = yaml.compose(text)
    if node is None:
        raise _NoSpan()
    for i, key in enumerate(path):
        last = i == len(path) - 1
        if isinstance(node, MappingNode):
            hit = [v for k, v in node.value if isinstance(k, ScalarNode) and k.value == key]
            if not hit:
                if not last or node.flow_style or not node.value or fmt != "yaml":
                    raise _NoSpan()
                return _yaml_insert(text, node, key, value)
            node = hit[-1]
        elif isinstance(node, SequenceNode) and key.isdigit() and int(key) < len(node.value):
            node = node.value[int(key)]
        else:
            raise _NoSpan()
    start, end = node.start_mark.index, node.end_mark.index
    while end > start and text[end - 1] in " \t\r\n":
        end -= 1
    rendered = _render_scalar(value, fmt)
    if fmt == "yaml" and not isinstance(node, ScalarNode) and (isinstance(value, (dict, list))):
        rendered = json.dumps(value, ensure_ascii=False)  # flow style: valid YAML
    return text[:start] + rendered + text[end:]


def _yaml_insert(text: str, mapping, key: str, value) -> str:
    col = mapping.value[0][0].start_mark.column
    pos = mapping.value[-1][1].end_mark.index
    if pos > 0 and text[pos - 1] == "\n":
        pass
    else:
        nl = text.find("\n", pos)
        if nl == -1:
            text += "\n"
            pos = len(text)
        else:
            pos = nl + 1
    line = " " * col + f"{key}: {_render_scalar(value, 'yaml')}\n"
    return text[:pos] + line + text[pos:]


def _json_dump(original: str, data) -> str:
    m = re.search(r"\n([ \t]+)\S", original)
    indent = (m.group(1) if m else None) if "\n" in original.strip() else None
    if indent is not None and indent.strip(" ") == "":
        indent = len(indent)
    out = json.dumps(data, indent=indent, ensure_ascii=False)
    return out + ("\n" if original.endswith("\n") else "")


def _toml_set(text: str, path: list[str], value, where: str) -> str:
    import tomlkit

    doc = tomlkit.parse(text)
    cur = doc
    for p in path[:-1]:
        if p not in cur:
            cur[p] = tomlkit.table()
        cur = cur[p]
        if not hasattr(cur, "__setitem__") or isinstance(cur, (str, int, float, bool)):
            raise DbglogError(f"{where}: cannot follow key {'.'.join(path)!r} (at {p!r})")
    cur[path[-1]] = value
    return tomlkit.dumps(doc)
