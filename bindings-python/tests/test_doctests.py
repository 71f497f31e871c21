"""The examples in the package's docstrings run and say what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize(
    "module",
    [
        "ferromcp.errors",
        "ferromcp._docstring",
        "ferromcp._schema",
        "ferromcp._json",
        "ferromcp.server",
        "ferromcp.client",
        "ferromcp.client_types",
        "ferromcp.context",
        "ferromcp._primitives",
    ],
)
def test_docstring_examples(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0
