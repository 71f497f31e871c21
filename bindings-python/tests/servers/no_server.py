"""A file that defines no `ferromcp.Server`: `ferromcp run` refuses it,
naming what it found (tests/test_cli.py)."""

from __future__ import annotations

import ferromcp

TOOLS = ["greet"]


def make_server() -> ferromcp.Server:
    """A factory, not a Server: `ferromcp run` does not call it."""
    return ferromcp.Server("made")
