"""The examples in the package's docstrings run and say what they show, and
every public function and class has one.

An example that rots fails here: `>>>` examples run as doctests (those that
need a server start one in-process, or spawn one over stdio); the few
public calls that block until the process is told to stop (``Server.run``,
``Server.serve``) show a ``::`` block instead, which is compiled here so
that at least its syntax and names stay current.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import inspect
import re
import textwrap
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import ferromcp
import pytest
from ferromcp import _native

MODULES = [
    "ferromcp",
    "ferromcp._native",
    "ferromcp.asgi",
    "ferromcp.errors",
    "ferromcp._docstring",
    "ferromcp._schema",
    "ferromcp._json",
    "ferromcp.server",
    "ferromcp.client",
    "ferromcp.oauth",
    "ferromcp.client_types",
    "ferromcp.context",
    "ferromcp._primitives",
    "ferromcp.middleware",
    "ferromcp.visibility",
    "ferromcp.telemetry",
    "ferromcp._otel",
    "ferromcp._logs",
    "ferromcp.cli",
]

# Public calls whose example is a `::` block: they serve until the process is
# told to stop, so a doctest would never return.
BLOCKING = {"ferromcp.Server.run", "ferromcp.Server.serve"}


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples(module: str) -> None:
    imported = importlib.import_module(module)
    # The native module's own examples name it as the package does.
    result = doctest.testmod(imported, extraglobs={"_native": _native}, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    if module != "ferromcp":  # the package docstring shows a server to run (a `::` block)
        assert result.attempted > 0


def _public() -> Iterator[tuple[str, Any]]:
    """Every public name of the package, and every public method and
    property of its public classes, as ``(qualified name, object)``."""
    others = (
        "ferromcp.client_types",
        "ferromcp.asgi",
        "ferromcp.middleware",
        "ferromcp.visibility",
        "ferromcp.telemetry",
        "ferromcp.cli",
    )
    modules: list[ModuleType] = [ferromcp, *(importlib.import_module(m) for m in others)]
    for module in modules:
        names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
        for name in names:
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or inspect.isroutine(obj)):
                continue  # constants and type aliases
            if not getattr(obj, "__module__", "").startswith("ferromcp"):
                continue  # re-exported from elsewhere
            qualified = f"{module.__name__}.{name}"
            yield qualified, obj
            if inspect.isclass(obj):
                for member_name, member in vars(obj).items():
                    if member_name.startswith("_"):
                        continue
                    if isinstance(member, (staticmethod, classmethod)):
                        member = member.__func__
                    if isinstance(member, property) or inspect.isroutine(member):
                        yield f"{qualified}.{member_name}", member


def test_every_public_function_and_class_has_an_example() -> None:
    missing = []
    for name, obj in _public():
        doc = inspect.getdoc(obj.fget if isinstance(obj, property) else obj) or ""
        wanted = "::" if name in BLOCKING else ">>>"
        if wanted not in doc:
            missing.append(name)
    assert missing == [], f"no example in the docstring of: {', '.join(missing)}"


def _literal_blocks(doc: str) -> Iterator[str]:
    """The indented block after each paragraph that ends with ``::``."""
    lines = doc.splitlines()
    for i, line in enumerate(lines):
        if not line.rstrip().endswith("::"):
            continue
        block: list[str] = []
        for following in lines[i + 1 :]:
            if following.strip() and not following.startswith((" ", "\t")):
                break
            block.append(following)
        code = textwrap.dedent("\n".join(block)).strip("\n")
        if code and not code.lstrip().startswith(">>>"):
            yield code


def test_literal_examples_compile() -> None:
    """`::` blocks are Python that parses; a bare ``...`` line stands for
    the rest of a program."""
    checked = 0
    for name, obj in [("ferromcp", ferromcp), *_public()]:
        doc = inspect.getdoc(obj.fget if isinstance(obj, property) else obj) or ""
        for code in _literal_blocks(doc):
            # Shell lines and JSON shown as literal blocks are not Python.
            if re.match(r"^(\$|\{|pip |python |uvicorn )", code):
                continue
            try:
                ast.parse(code)
            except SyntaxError as e:  # pragma: no cover - the failure message
                pytest.fail(f"the `::` example of {name} does not parse: {e}\n{code}")
            checked += 1
    assert checked > 0
