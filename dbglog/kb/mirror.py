"""The canonical markdown of an investigation with a user's own template: ``render`` (jinja2 when
``.dbglog/templates/investigation.md.j2`` exists, else the packaged layout in plain Python) and the check
that such a file reads back as the investigation.

The format itself (field encoding, tables, ``render_default``, ``parse``, ``ParseError``) is
``dbglog/core/markdown.py``, a bottom layer both ``kb`` and ``docreader`` read without importing each
other: import those names from there (this module re-exports none of them). Edit the format there.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from dbglog.core import markdown as fmt
from dbglog.core.model import Investigation
from dbglog.util.errors import DbglogError


@lru_cache(maxsize=4)
def _template(override_dir: str | None, cache_dir: str | None = None):
    import jinja2

    dirs = [d for d in (override_dir, str(templates_dir())) if d]
    bcc = None
    if cache_dir:
        # Compiling the template costs more than rendering 1,000 attempts: keep the bytecode.
        try:
            os.makedirs(cache_dir, exist_ok=True)
            bcc = jinja2.FileSystemBytecodeCache(cache_dir)
        except OSError:
            bcc = None
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(dirs),
        bytecode_cache=bcc,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        undefined=jinja2.StrictUndefined,
    )
    env.filters.update(
        field=lambda value, label, style="inline": fmt.render_field(label, value, style),
        heading=lambda s: s if fmt.heading_safe(s) else fmt._flat(s),
        heading_safe=fmt.heading_safe,
        block=fmt.block,
        provenance=lambda a: fmt.provenance_lines(a),
    )
    env.globals.update(
        field=fmt.render_field,
        block=fmt.block,
        scalar=fmt.scalar,
        files=fmt.files_lines,
        yaml_list=fmt.yaml_list,
        yaml_str=fmt.yaml_str,
        heading_safe=fmt.heading_safe,
        flat=fmt._flat,
        diff_lines=fmt.diff_section_lines,
        steps_lines=fmt.steps_section_lines,
        status_label=lambda s: fmt.STATUS_LABELS.get(s, s),
        default_labels=fmt.DEFAULT_LABELS,
    )
    return env.get_template("investigation.md.j2")


def templates_dir() -> Path:
    """Templates ship inside the wheel as dbglog/templates; from a source tree they are ../templates."""
    package = Path(__file__).resolve().parent.parent  # dbglog/ (this module is dbglog/kb/mirror.py)
    inside = package / "templates"
    if inside.is_dir():
        return inside
    return package.parent / "templates"


def render(inv: Investigation, override_dir: Path | None = None, cache_dir: Path | None = None) -> str:
    """The canonical markdown; ``override_dir`` holds user templates, ``cache_dir`` compiled ones.

    Without a user template, ``core.markdown.render_default`` writes the packaged template's output in plain
    Python: importing jinja2 alone costs ~20 ms of every recording command (bench/agent_bench.py).
    tests/test_startup.py holds the two byte for byte equal over the corpus and generated records."""
    if not (override_dir and override_dir.is_dir() and any(override_dir.iterdir())):
        return fmt.render_default(inv)
    # A user template is code of the user's: its errors are one line, not an internal error.
    try:
        return render_jinja(inv, override_dir, cache_dir)
    except Exception as e:  # jinja2.TemplateError, and whatever the template's own expressions raise
        raise DbglogError(f"the template {override_dir}/investigation.md.j2 cannot render ({type(e).__name__}: "
                          f"{e}); fix or remove it; nothing was changed") from None


def check_reads_back(inv: Investigation, text: str, override_dir: Path | None) -> None:
    """Before ``text`` (rendered with a user template) replaces a file in logs/: it must read back as
    ``inv``. An empty or partial template would otherwise leave a file that loses the investigation
    for whoever reads it next (a teammate after a pull)."""
    if not (override_dir and override_dir.is_dir() and any(override_dir.iterdir())):
        return  # the packaged template: parse(render(x)) == x is a tested property
    try:
        back = fmt.parse(text, "template check")
    except Exception:  # noqa: BLE001 (any failure to read it back is the same answer)
        back = None
    if back != inv:
        raise DbglogError(f"the template {override_dir}/investigation.md.j2 writes a file that does not read back "
                          "as the investigation (fields missing or renamed); fix or remove it; nothing was changed")


def render_jinja(inv: Investigation, override_dir: Path | None = None, cache_dir: Path | None = None) -> str:
    tpl = _template(str(override_dir) if override_dir and override_dir.is_dir() else None,
                    str(cache_dir) if cache_dir else None)
    return tpl.render(inv=inv, attempts=sorted(inv.attempts, key=lambda a: a.number))
