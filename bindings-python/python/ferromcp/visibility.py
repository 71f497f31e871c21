"""Per-caller visibility: which tools, prompts, resources and resource
templates each caller sees and may use.

A server-wide rule (:meth:`ferromcp.Server.visibility`) is asked about each
item with the :class:`~ferromcp.Caller` and a :class:`VisibleItem`; a
registration's own ``visible=`` is asked with the caller alone. An item is
visible when both allow it. Lists leave out what is hidden, and calling,
reading or completing a hidden item fails exactly as for an unknown one:
nothing tells a caller that it exists. The Rust core applies the rule; this
module only describes it::

    @server.tool(visible=lambda caller: caller.auth is not None and caller.auth.has_scope("admin"))
    def delete_everything() -> str:
        return "done"

A rule is a plain function (not ``async``). The core asks once per
request about every item the request needs judged (each tool of a
``tools/list``, the one tool of a ``tools/call``), without holding any
lock of its own: the rules are then called for each item, with the one
:class:`~ferromcp.Caller` of the request, on one of the package's worker
threads (as plain handlers are). Keep it quick: the request waits for
it. A rule that raises hides the item; its
exception is reported to ``sys.unraisablehook`` (printed to stderr by
default).

>>> import ferromcp
>>> server = ferromcp.Server("demo")
>>> @server.tool
... def search(query: str) -> str:
...     return f"results for {query}"
>>> @server.tool(visible=lambda caller: (caller.client_info or {}).get("name") == "admin")
... def purge() -> str:
...     return "purged"
>>> with ferromcp.SyncClient.in_memory(server, name="guest") as client:
...     print([tool.name for tool in client.list_tools()])
['search']
>>> with ferromcp.SyncClient.in_memory(server, name="admin") as client:
...     print([tool.name for tool in client.list_tools()])
['search', 'purge']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, NamedTuple, TypeAlias, cast

from ._callables import is_coroutine_function
from .context import Caller

__all__ = ["ItemKind", "ItemRule", "VisibilityRule", "VisibleItem"]

ItemKind: TypeAlias = Literal["tool", "prompt", "resource", "resource_template"]
"""What kind of item a rule is asked about."""


class VisibleItem(NamedTuple):
    """An item a visibility rule is asked about: its ``kind`` and its
    ``key`` (a tool's or prompt's name, a resource's URI, a template's URI
    template; reads of the URIs a template matches are asked about the
    template).

    >>> item = VisibleItem("tool", "search")
    >>> item.kind, item.key
    ('tool', 'search')
    >>> kind, key = item
    """

    kind: ItemKind
    """``"tool"``, ``"prompt"``, ``"resource"`` or ``"resource_template"``."""
    key: str
    """The item's name (tool, prompt) or URI (resource) or URI template."""


VisibilityRule: TypeAlias = Callable[[Caller, VisibleItem], bool]
"""A server-wide rule: ``rule(caller, item) -> bool`` (see
:meth:`ferromcp.Server.visibility`)."""

ItemRule: TypeAlias = Callable[[Caller], bool]
"""A registration's own rule: ``visible(caller) -> bool`` (the ``visible=``
of ``@server.tool``, ``@server.prompt`` and ``@server.resource``)."""


def _check(rule: object, what: str) -> None:
    """Refuses what cannot be a rule: not callable, or ``async``.

    >>> async def rule(caller: Caller) -> bool: ...
    >>> _check(rule, "visible=")
    Traceback (most recent call last):
    TypeError: visible= must be a plain function, not async: it is called, never awaited
    """
    if not callable(rule):
        raise TypeError(f"{what} must be callable, not {type(rule).__name__}")
    if is_coroutine_function(rule):
        raise TypeError(f"{what} must be a plain function, not async: it is called, never awaited")


class _Rule:
    """The one rule a server gives the core: its registrations' own rules
    and the server-wide one, both of which must allow an item. Called by the
    core once per request as ``rule(caller, items)``: ``caller`` is the
    core's description of who asks (a dict), ``items`` the ``(kind, key)``
    pairs to judge; it answers a verdict per item, in order, or the
    exception a rule raised on it (the core hides the item and reports it).

    >>> rule = _Rule("demo", None, {("tool", "x"): lambda caller: False})
    >>> rule
    <visibility rule of ferromcp.Server 'demo'>
    >>> caller = {"protocolVersion": "2026-07-28", "clientInfo": None,
    ...           "clientCapabilities": {}, "auth": None, "headers": {}}
    >>> rule(caller, [("tool", "x"), ("tool", "y")])
    [False, True]
    """

    __slots__ = ("_everything", "_items", "_server")

    def __init__(
        self,
        server: str,
        everything: VisibilityRule | None,
        items: Mapping[tuple[ItemKind, str], ItemRule],
    ) -> None:
        self._server = server
        self._everything = everything
        self._items = dict(items)

    def __call__(self, facts: Mapping[str, Any], items: Sequence[tuple[str, str]]) -> list[bool | Exception]:
        caller = Caller(facts)
        return [self._judge(caller, cast(ItemKind, kind), key) for kind, key in items]

    def _judge(self, caller: Caller, kind: ItemKind, key: str) -> bool | Exception:
        try:
            own = self._items.get((kind, key))
            if own is not None and not own(caller):
                return False
            return self._everything is None or bool(self._everything(caller, VisibleItem(kind, key)))
        except Exception as e:
            # Reported by the core to sys.unraisablehook, which prints notes
            # (Python 3.11+).
            add_note = getattr(e, "add_note", None)
            if add_note is not None:
                add_note(f"ferromcp: {kind} {key!r} is hidden from this caller: the visibility rule raised")
            return e

    def __repr__(self) -> str:
        return f"<visibility rule of ferromcp.Server {self._server!r}>"
