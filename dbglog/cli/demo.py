"""demo: a throwaway workspace with a realistic investigation (dbglog/demo.py builds it).

Imports ``common`` and dbglog/demo.py."""

from __future__ import annotations

import click

from dbglog.cli.common import emit, json_option


@click.command()
@click.option("--keep", is_flag=True, help="Keep the throwaway workspace and print its path.")
@json_option
def demo(keep, as_json):
    """Build a throwaway workspace with a realistic investigation and show it."""
    from dbglog.demo import run_demo

    result = run_demo(keep=keep, as_json=as_json)
    if as_json:
        emit(True, result)
