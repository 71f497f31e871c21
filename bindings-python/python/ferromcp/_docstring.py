"""Reading a tool's description and parameter descriptions from its docstring.

Understands the first paragraph (the tool description) and a Google-style
``Args:`` section (one description per parameter). Other sections
(``Returns:``, ``Raises:``, ``Example:``...) are ignored.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

__all__ = ["Docstring", "parse_docstring"]

_SECTION = re.compile(r"^([A-Za-z][A-Za-z ]*):\s*$")
_ARGS_SECTIONS = frozenset(
    {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments"}
)
# "name: text", "name (int): text", "*name: text"
_ARG_LINE = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


@dataclass
class Docstring:
    """What a docstring says about a tool.

    >>> Docstring("Adds.", {"a": "First."}).params["a"]
    'First.'
    """

    description: str | None = None
    """The first paragraph, on one line; ``None`` when there is no docstring."""
    params: dict[str, str] = field(default_factory=dict)
    """Parameter name -> description, from the ``Args:`` section."""


def parse_docstring(doc: str | None) -> Docstring:
    """Parses a (possibly indented) docstring.

    >>> d = parse_docstring('''Adds two integers.
    ...
    ...     Args:
    ...         a: The first one.
    ...         b (int): The second
    ...             one.
    ...     Returns:
    ...         The sum.
    ...     ''')
    >>> d.description
    'Adds two integers.'
    >>> d.params
    {'a': 'The first one.', 'b': 'The second one.'}
    """
    if not doc or not doc.strip():
        return Docstring()
    lines = inspect.cleandoc(doc).splitlines()
    return Docstring(_first_paragraph(lines), _args_section(lines))


def _first_paragraph(lines: list[str]) -> str | None:
    summary: list[str] = []
    for line in lines:
        if not line.strip() or _SECTION.match(line):
            break
        summary.append(line.strip())
    return " ".join(summary) or None


def _args_section(lines: list[str]) -> dict[str, str]:
    params: dict[str, str] = {}
    in_args = False
    current: str | None = None
    entry_indent: int | None = None
    for line in lines:
        stripped = line.strip()
        header = _SECTION.match(line)
        if header:
            in_args = header.group(1).strip().lower() in _ARGS_SECTIONS
            current, entry_indent = None, None
            continue
        if not in_args or not stripped:
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:
            # Text back at the margin ends the section.
            in_args, current = False, None
            continue
        match = _ARG_LINE.match(stripped)
        if match and (entry_indent is None or indent <= entry_indent):
            entry_indent = indent
            current = match.group(1)
            params[current] = match.group(2).strip()
        elif current is not None:
            params[current] = f"{params[current]} {stripped}".strip()
    return params
