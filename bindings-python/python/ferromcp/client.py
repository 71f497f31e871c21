"""The MCP client: :class:`Client` (asyncio) and :class:`SyncClient` (blocking).

Both drive the same native client of the Rust core, which detects the
server's revision (2026-07-28 or a 2025-11-25 session), adds the
per-request ``_meta``, answers ``input_required`` rounds with your handlers,
mirrors ``x-mcp-header`` arguments, caches cacheable results and follows
list cursors. This module converts arguments and wraps results in the typed
classes of :mod:`ferromcp.client_types`; failures raise the exceptions of
:mod:`ferromcp.errors`.

Against a server started here in the background::

    >>> import asyncio, ferromcp
    >>> server = ferromcp.Server("demo")
    >>> @server.tool
    ... def add(a: int, b: int) -> int:
    ...     return a + b
    >>> @server.tool
    ... def count(n: int, ctx: ferromcp.Context) -> str:
    ...     for i in range(n):
    ...         ctx.progress(i + 1, total=n)
    ...     return "counted"
    >>> serving = server.start("http", port=0)
    >>> url = f"http://127.0.0.1:{serving.port}/mcp"
    >>> async def main() -> None:
    ...     async with ferromcp.Client.http(url) as client:
    ...         print([tool.name async for tool in client.list_tools()])  # every page
    ...         print((await client.call_tool("add", {"a": 2, "b": 3})).text)
    ...         seen = []
    ...         done = await client.call_tool("count", {"n": 3}, progress=lambda p, total, msg: seen.append(p))
    ...         print(done.text, sorted(seen))
    ...         try:
    ...             await client.call_tool("no_such_tool")
    ...         except ferromcp.InvalidParamsError as e:
    ...             print("refused:", e.code)
    ...         async with client.listen(tools=True) as changes:
    ...             server.tool(name="ping")(lambda: "pong")  # a new tool: the list changed
    ...             print((await changes.next()).method)
    >>> asyncio.run(main())
    ['add', 'count']
    5
    counted [1.0, 2.0, 3.0]
    refused: -32602
    notifications/tools/list_changed
    >>> with ferromcp.SyncClient.http(url) as client:  # the same, without asyncio
    ...     client.call_tool("add", {"a": 4, "b": 5}).structured
    {'result': 9}
    >>> serving.stop(); serving.wait(10)
    True
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Generator, Iterable, Iterator, Mapping, Sequence
from types import MethodType
from typing import TYPE_CHECKING, Any, Generic, Literal, ParamSpec, TypedDict, TypeVar, overload

from . import _native, telemetry
from ._callables import is_coroutine_function
from ._json import json_default
from .client_types import (
    CallToolResult,
    CompleteResult,
    DiscoverResult,
    GetPromptResult,
    Notification,
    Page,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    Skill,
    TaskState,
    Tool,
)
from .middleware import ClientLink, NotificationLink, _client_link, _notification_link
from .oauth import OAuth

if TYPE_CHECKING:
    # server.py imports this module; at run time `in_memory` imports it late.
    from .server import Server

__all__ = [
    "LEGACY_PROTOCOL_VERSIONS",
    "Client",
    "Era",
    "InputHandler",
    "ItemIterator",
    "ItemStream",
    "LoadedSkill",
    "ProgressCallback",
    "StderrMode",
    "Subscription",
    "SyncClient",
    "SyncLoadedSkill",
    "SyncSubscription",
    "SyncToolTask",
    "ToolTask",
]

Era = Literal["auto", "modern", "legacy"]
"""Which revision family to speak: ``"auto"`` detects it (a
``server/discover`` probe, then the ``initialize`` handshake for a
2025-11-25 server), ``"modern"`` is 2026-07-28 only, ``"legacy"`` the
handshake only."""

TlsRoots = Literal["native", "webpki", "none"]
"""Which built-in roots an ``https://`` client trusts: the platform's store
(``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` replace it, as for OpenSSL), Mozilla's
roots built into ferromcp, or none (only ``ca_certs``)."""

PemSource = str | os.PathLike[str]
"""PEM text (it contains ``-----BEGIN``) or the path of a PEM file."""

StderrMode = Literal["capture", "inherit", "null"]
"""What happens to a spawned server's stderr: kept in the log (and quoted
if it crashes), passed through to this process's stderr, or discarded."""


class ClientLimits(TypedDict, total=False):
    """What a client accepts from a server, so that a misbehaving or hostile
    server cannot exhaust its memory or sockets (core's ``ClientLimits``; any
    key left out keeps its default; an unknown key is a ``ValueError``).
    A refusal names the limit it hit.

    >>> import sys
    >>> limits: ClientLimits = {"max_message_bytes": 1 << 20, "max_queued_notifications": 64}
    >>> with SyncClient.stdio(sys.executable, ["-c", _EXAMPLE_SERVER], limits=limits) as client:
    ...     print(client.call_tool("add", {"a": 2, "b": 2}).text)
    4
    """

    max_message_bytes: int
    """The largest message read: a JSON response, one SSE event, one stdio
    line (default 16 MiB). A larger one ends the call with an error."""
    max_queued_notifications: int
    """Notifications of one call or listen stream waiting for their callback
    (default 1,024); past it progress is coalesced to the newest and other
    notifications dropped, never the response. A progress callback further
    has at most 16 updates queued to it, the newest always delivered."""
    max_pending_server_requests: int
    """Server requests (``ping``, elicitation, ...) answered at once (default
    64); on a 2025-11-25 HTTP session's own stream more wait, elsewhere
    they are refused."""
    max_concurrent_server_answers: int
    """Over HTTP, answers to server requests POSTed at once, each on its own
    connection (default 4); the others wait."""
    max_stderr_line_bytes: int
    """A stdio server's stderr is read in lines of at most this many bytes
    (default 8 KiB); longer lines are split."""


InputHandler = Callable[[dict[str, Any]], Any]
"""Answers one kind of server request: receives its params
(``elicitation/create``, ``sampling/createMessage`` or ``roots/list``) and
returns the result object (a dict, a dataclass...); plain or ``async``.
Raising a :class:`ferromcp.errors.McpError` answers with that error."""

ProgressCallback = Callable[[float, "float | None", "str | None"], Any]
"""Receives ``(progress, total, message)`` for each progress notification of
a call; plain or ``async``."""

T = TypeVar("T")
L = TypeVar("L", bound=Callable[..., Any])
N = TypeVar("N", bound=NotificationLink)

LEGACY_PROTOCOL_VERSIONS: tuple[str, ...] = tuple(_native.LEGACY_PROTOCOL_VERSIONS)
"""The revisions of the ``initialize`` era (2025-11-25 and earlier), newest
first, from the core: a server speaking one of them gets a session."""

_Kind = Literal["tools", "resources", "resource_templates", "prompts", "skills"]

_BUILDERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "tools": Tool.from_dict,
    "resources": Resource.from_dict,
    "resource_templates": ResourceTemplate.from_dict,
    "prompts": Prompt.from_dict,
    "skills": Skill.from_dict,
}
_FIELDS = {
    "tools": "tools",
    "resources": "resources",
    "resource_templates": "resourceTemplates",
    "prompts": "prompts",
    "skills": "skills",
}

# The server the docstring examples start over stdio (`python -c`), so that
# each example runs on its own.
_EXAMPLE_SERVER = """
import asyncio, ferromcp
server = ferromcp.Server("example", version="1.0.0")

@server.tool
def add(a: int, b: int) -> int:
    return a + b

@server.tool
def count(n: int, ctx: ferromcp.Context) -> str:
    for i in range(n):
        ctx.progress(i + 1, total=n)
    return "counted"

@server.tool
async def slow(seconds: float) -> str:
    await asyncio.sleep(seconds)
    return "done"

@server.tool
def grow() -> str:
    server.tool(name="extra")(lambda: "extra")
    return "grown"

@server.resource("notes://today", mime_type="text/plain")
def today() -> str:
    return "buy milk"

@server.resource("users://{id}/profile")
def profile(id: int) -> str:
    return f"user {id}"

@server.prompt
def review(code: str, language: str = "python") -> str:
    return f"Review this {language}: {code}"

@server.completion(prompt="review", argument="language")
def languages(value: str) -> list[str]:
    return [lang for lang in ("python", "rust") if lang.startswith(value)]

server.run()
"""

# The server the tasks and skills examples start over stdio: a skill
# (`git-workflow`), a tool that runs as a task (`render`) and one whose
# task asks first (`deploy`).
_EXTENSIONS_SERVER = """
import asyncio, pathlib, tempfile, ferromcp
server = ferromcp.Server("extensions-example")

@server.tool(task=True)
async def render(pages: int) -> str:
    await asyncio.sleep(0.01 * pages)
    return f"rendered {pages} pages"

@server.tool(task=True)
async def deploy(env: str, ctx: ferromcp.Context) -> str:
    answer = await ctx.elicit(f"Deploy to {env}?", {"ok": bool}, key="confirm")
    return f"deployed to {env}" if answer.accepted else "kept"

with tempfile.TemporaryDirectory() as root:
    skill = pathlib.Path(root, "git-workflow")
    (skill / "references").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\\nname: git-workflow\\ndescription: Our Git conventions\\n---\\n# Branches\\n")
    (skill / "references" / "HOOKS.md").write_text("Run the hooks.\\n")
    server.add_skills(root)  # read once, now
server.run()
"""


def _adapt_handler(handler: InputHandler) -> tuple[Callable[[Any, None], Any], bool]:
    """The native calling convention (``handler(input, ctx)``) for a user
    handler, and whether it is ``async`` (an ``async def``, or an object
    with an ``async def __call__``).

    >>> class Confirm:
    ...     async def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
    ...         return {"action": "accept"}
    >>> _adapt_handler(Confirm())[1], _adapt_handler(lambda params: {})[1]
    (True, False)
    """
    if _is_async_callable(handler):

        async def call_async(params: Any, _ctx: None) -> Any:
            return await handler(params)

        return call_async, True

    def call(params: Any, _ctx: None) -> Any:
        return handler(params)

    return call, False


def _is_async_callable(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))  # noqa: B004 (an async __call__, not callability)


def _handlers(
    on_elicitation: InputHandler | None,
    on_sampling: InputHandler | None,
    on_roots: InputHandler | None,
) -> dict[str, tuple[Callable[[Any, None], Any], bool]]:
    given = {"elicitation": on_elicitation, "sampling": on_sampling, "roots": on_roots}
    return {kind: _adapt_handler(h) for kind, h in given.items() if h is not None}


def _filter(tools: bool, prompts: bool, resources: bool, resource_uris: Iterable[str]) -> dict[str, Any]:
    """The ``SubscriptionFilter`` object.

    >>> _filter(True, False, False, ["file:///a"])
    {'toolsListChanged': True, 'resourceSubscriptions': ['file:///a']}
    """
    wanted: dict[str, Any] = {}
    if tools:
        wanted["toolsListChanged"] = True
    if prompts:
        wanted["promptsListChanged"] = True
    if resources:
        wanted["resourcesListChanged"] = True
    uris = list(resource_uris)
    if uris:
        wanted["resourceSubscriptions"] = uris
    return wanted


def _meta(meta: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return None if meta is None else dict(meta)


def _skill_ref(skill: str | Skill) -> str | dict[str, Any]:
    """What core's ``load_skill`` reads: the entry as the server sent it, or
    the URI (then core fetches the entry), for a string or a ``Skill`` built
    by hand."""
    if isinstance(skill, str):
        return skill
    return skill.raw or skill.uri


def _era_name(is_legacy: bool | None) -> Literal["modern", "legacy"] | None:
    """The :attr:`Client.era` of the native flag.

    >>> _era_name(True), _era_name(False), _era_name(None)
    ('legacy', 'modern', None)
    """
    if is_legacy is None:
        return None
    return "legacy" if is_legacy else "modern"


def _walked_page(kind: str, page: dict[str, Any]) -> Page[Any]:
    """A page of core's list walk: ``{"items": [...], "nextCursor"?: ...}``."""
    build = _BUILDERS[kind]
    return Page([build(item) for item in page["items"]], page.get("nextCursor"))


def _page(kind: str, result: dict[str, Any]) -> Page[Any]:
    build = _BUILDERS[kind]
    return Page(
        [build(item) for item in result.get(_FIELDS[kind], [])],
        result.get("nextCursor"),
        result,
    )


_LIST_METHODS = {
    "tools": "tools/list",
    "resources": "resources/list",
    "resource_templates": "resources/templates/list",
    "prompts": "prompts/list",
    "skills": "skills/list",
}


class _Op(Generic[T]):
    """One call of a client or of a handle (a task, a loaded skill): how its
    result reads. :class:`_Method` makes each declared op a method."""

    __slots__ = ("read",)

    def __init__(self, read: Callable[[Any], T]) -> None:
        self.read = read


class _Call(_Op[T]):
    """One request of the client: the method (a row of core's client calls),
    its params as the wire has them, how its result reads, and the call's
    own timeout, ``_meta`` and progress callback. :class:`Client` awaits it,
    :class:`SyncClient` blocks on it, both through the native ``request``."""

    __slots__ = ("meta", "method", "params", "progress", "timeout")

    def __init__(
        self,
        method: str,
        params: dict[str, Any],
        read: Callable[[Any], T],
        timeout: float | None = None,
        meta: Mapping[str, Any] | None = None,
        progress: ProgressCallback | None = None,
    ) -> None:
        super().__init__(read)
        self.method = method
        self.params = params
        self.timeout = timeout
        self.meta = None if meta is None else dict(meta)
        self.progress = progress


# The calls both clients make, each declared once: what a method takes is
# the signature of its function here, what it does is the `_Call` it
# returns. `_Method` makes each a method of both clients.


def _discover() -> _Call[DiscoverResult]:
    """What the server supports (``server/discover``; for a 2025-11-25
    server, what it answered to ``initialize``).

    >>> import asyncio, sys
    >>> async def main() -> None:
    ...     async with Client.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
    ...         found = await client.discover()
    ...         print(found.server_info["name"], "tools" in found.capabilities)
    >>> asyncio.run(main())
    example True
    >>> with SyncClient.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
    ...     print(client.discover().server_info["name"])
    example
    """
    return _Call("server/discover", {}, DiscoverResult.from_dict)


def _list_page(kind: _Kind, cursor: str | None) -> _Call[Page[Any]]:
    params = {} if cursor is None else {"cursor": cursor}
    return _Call(_LIST_METHODS[kind], params, lambda result: _page(kind, result))


def _list_tools_page(cursor: str | None = None) -> _Call[Page[Tool]]:
    """One page of ``tools/list``, from ``cursor`` (the previous page's
    ``next_cursor``).

    >>> import asyncio, sys
    >>> async def main() -> None:
    ...     async with Client.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
    ...         page = await client.list_tools_page()
    ...         print(len(page), page.next_cursor)  # one page: no next cursor
    >>> asyncio.run(main())
    4 None
    >>> with SyncClient.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
    ...     print(len(client.list_tools_page()))
    4
    """
    return _list_page("tools", cursor)


def _list_resources_page(cursor: str | None = None) -> _Call[Page[Resource]]:
    """One page of ``resources/list`` (see ``list_tools_page``).

    >>> import sys
    >>> with SyncClient.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
    ...     page = client.list_resources_page()
    ...     print([r.name for r in page], page.next_cursor)
    ['today'] None
    """
    return _list_page("resources", cursor)


def _list_resource_templates_page(cursor: str | None = None) -> _Call[Page[ResourceTemplate]]:
    """One page of ``resources/templates/list`` (see ``list_tools_page``).

    >>> import asyncio, sys
    >>> async def main() -> None:
    ...     async with Client.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
    ...         print([t.name for t in await client.list_resource_templates_page()])
    >>> asyncio.run(main())
    ['profile']
    """
    return _list_page("resource_templates", cursor)


def _list_prompts_page(cursor: str | None = None) -> _Call[Page[Prompt]]:
    """One page of ``prompts/list`` (see ``list_tools_page``).

    >>> import sys
    >>> with SyncClient.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
    ...     print([p.name for p in client.list_prompts_page()])
    ['review']
    """
    return _list_page("prompts", cursor)


def _call_tool(
    name: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    timeout: float | None = None,
    progress: ProgressCallback | None = None,
    meta: Mapping[str, Any] | None = None,
) -> _Call[CallToolResult]:
    """Calls a tool. Cancelling the awaiting task (or Ctrl-C in a blocking
    call) cancels the request on the server.

    Args:
        timeout: Seconds, instead of the client's default.
        progress: Called with ``(progress, total, message)`` for each
            progress notification, in order (on the client's loop, or on the
            calling thread for a :class:`SyncClient`); all of them have run
            when ``call_tool`` returns.
        meta: Extra request ``_meta`` entries (e.g. trace context).

    >>> import asyncio, sys
    >>> from ferromcp.errors import RequestTimeoutError
    >>> async def main() -> None:
    ...     async with Client.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
    ...         seen = []
    ...         await client.call_tool("count", {"n": 2}, progress=lambda p, total, msg: seen.append((p, total)))
    ...         print(sorted(seen))
    ...         try:
    ...             await client.call_tool("slow", {"seconds": 10}, timeout=0.2)
    ...         except RequestTimeoutError:
    ...             print("timed out (and cancelled on the server)")
    ...         task = asyncio.create_task(client.call_tool("slow", {"seconds": 10}))
    ...         await asyncio.sleep(0.2)
    ...         task.cancel()  # cancels the request on the server too
    ...         print((await asyncio.gather(task, return_exceptions=True))[0].__class__.__name__)
    >>> asyncio.run(main())
    [(1.0, 2.0), (2.0, 2.0)]
    timed out (and cancelled on the server)
    CancelledError
    >>> with SyncClient.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
    ...     seen = []
    ...     result = client.call_tool("count", {"n": 2}, progress=lambda p, total, msg: seen.append(p))
    ...     print(result.text, seen)
    counted [1.0, 2.0]
    """
    params = {"name": name, "arguments": dict(arguments or {})}
    return _Call("tools/call", params, CallToolResult.from_dict, timeout, meta, progress)


def _read_resource(uri: str) -> _Call[ReadResourceResult]:
    """Reads a resource (``resources/read``).

    >>> import asyncio, sys
    >>> async def main() -> None:
    ...     async with Client.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
    ...         print((await client.read_resource("notes://today")).text)
    ...         print((await client.read_resource("users://7/profile")).text)
    >>> asyncio.run(main())
    buy milk
    user 7
    >>> with SyncClient.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
    ...     print(client.read_resource("notes://today").text)
    buy milk
    """
    return _Call("resources/read", {"uri": uri}, ReadResourceResult.from_dict)


def _get_prompt(name: str, arguments: Mapping[str, str] | None = None) -> _Call[GetPromptResult]:
    """Gets a prompt with its arguments (``prompts/get``).

    >>> import asyncio, sys
    >>> async def main() -> None:
    ...     async with Client.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
    ...         result = await client.get_prompt("review", {"code": "x = 1"})
    ...         print(result.messages[0].role, result.text)
    >>> asyncio.run(main())
    user Review this python: x = 1
    >>> with SyncClient.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
    ...     print(client.get_prompt("review", {"code": "x = 1", "language": "rust"}).text)
    Review this rust: x = 1
    """
    return _Call("prompts/get", {"name": name, "arguments": dict(arguments or {})}, GetPromptResult.from_dict)


def _complete(
    ref: Mapping[str, Any],
    argument: str,
    value: str,
    *,
    context: Mapping[str, str] | None = None,
) -> _Call[CompleteResult]:
    """Completion suggestions for ``argument`` (typed so far: ``value``) of
    ``ref``: ``{"type": "ref/prompt", "name": ...}`` or
    ``{"type": "ref/resource", "uri": template}``. ``context`` gives the
    values of arguments already chosen, for suggestions that depend on them.

    >>> import asyncio, sys
    >>> async def main() -> None:
    ...     async with Client.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
    ...         ref = {"type": "ref/prompt", "name": "review"}
    ...         print((await client.complete(ref, "language", "r")).values)
    >>> asyncio.run(main())
    ['rust']
    >>> with SyncClient.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
    ...     print(client.complete({"type": "ref/prompt", "name": "review"}, "language", "p").values)
    ['python']
    """
    # Core drops an empty `context` (no argument resolved yet).
    params: dict[str, Any] = {
        "ref": dict(ref),
        "argument": {"name": argument, "value": value},
        "context": {"arguments": dict(context or {})},
    }
    return _Call("completion/complete", params, CompleteResult.from_dict)


def _list_skills_page(cursor: str | None = None) -> _Call[Page[Skill]]:
    """One page of ``skills/list`` (the skills extension; see
    ``list_tools_page``). Reads no skill file.

    >>> import sys
    >>> with SyncClient.stdio(sys.executable, ["-c", _EXTENSIONS_SERVER]) as client:
    ...     print([s.name for s in client.list_skills_page()])
    ['git-workflow']
    """
    return _list_page("skills", cursor)


def _get_skill(uri: str) -> _Call[Skill]:
    """One skill's entry by its ``SKILL.md`` URI (``skills/get``).

    >>> import sys
    >>> with SyncClient.stdio(sys.executable, ["-c", _EXTENSIONS_SERVER]) as client:
    ...     skill = client.get_skill("skill://git-workflow/SKILL.md")
    ...     print(skill.description, [f.uri for f in skill.files or []])
    Our Git conventions ['skill://git-workflow/SKILL.md', 'skill://git-workflow/references/HOOKS.md']
    """
    return _Call("skills/get", {"uri": uri}, lambda result: Skill.from_dict(result["skill"]))


class _HandleCall(_Op[T]):
    """One call on a native handle: the native method's name and arguments
    (the event loop, or ``None`` to block, is added by the handle's
    ``_run``), and the callback the native call makes while it runs, with
    the keyword the native method takes it by (run on the caller's loop for
    an asyncio handle, on the calling thread for a blocking one)."""

    __slots__ = ("args", "callback", "name")

    def __init__(
        self,
        name: str,
        args: tuple[Any, ...],
        read: Callable[[Any], T],
        callback: tuple[str, Callable[..., Any]] | None = None,
    ) -> None:
        super().__init__(read)
        self.name = name
        self.args = args
        self.callback = callback


def _none(_: Any) -> None:
    return None


# A task's calls, declared once for ToolTask and SyncToolTask.


def _refresh() -> _HandleCall[TaskState | None]:
    """Asks the server for the task's state now (``tasks/get``); ``None``
    when the server answered the call at once (no task).
    """
    return _HandleCall("refresh", (), _state)


def _respond(responses: Mapping[str, Any]) -> _HandleCall[None]:
    """Answers some of the task's ``input_requests`` by key
    (``tasks/update``): an elicitation's ``{"action": "accept", "content":
    {...}}``, a sampling result, a roots list. Questions answered here are
    not answered again by the client's handlers when :meth:`result` follows
    the task.
    """
    return _HandleCall("respond", (dict(responses),), _none)


def _cancel() -> _HandleCall[None]:
    """Asks the server to cancel the task (``tasks/cancel``); the next
    :meth:`refresh` shows whether it did. Nothing to do without a task.
    """
    return _HandleCall("cancel", (), _none)


def _result(on_state: Callable[[TaskState], Any] | None = None) -> _HandleCall[CallToolResult]:
    """Follows the task to its end, answering its questions with the
    client's input handlers, and returns the tool's result (a failed task
    raises its error). Cancelling the awaiting asyncio task (or Ctrl-C
    while blocked) cancels the task on the server.

    Args:
        on_state: Called with the :class:`TaskState` each time the task's
            status or status message (its progress) changes, in order, all
            before the result (on the client's loop, or on the calling
            thread for a :class:`SyncToolTask`); plain or ``async``.
    """
    if on_state is None:
        return _HandleCall("result", (), CallToolResult.from_dict, None)

    def shown(state: dict[str, Any]) -> Any:
        return on_state(TaskState.from_dict(state))

    return _HandleCall("result", (), CallToolResult.from_dict, ("on_state", shown))


def _state(value: Any) -> TaskState | None:
    """A native task state: ``None`` for a call answered without a task."""
    if isinstance(value, dict) and "taskId" in value and "status" in value:
        return TaskState.from_dict(value)
    return None


def _read(file: str) -> _HandleCall[bytes]:
    """Reads one file of the skill: its path inside the skill
    (``"references/FORMS.md"``) or its URI. The bytes are checked against
    the entry's digest and size; a file the entry does not list is refused
    unread (:class:`ferromcp.ProtocolError`).
    """
    return _HandleCall("read", (file,), bytes)


class _Connection:
    """How to connect: the native constructor and its keyword arguments."""

    def __init__(
        self,
        connect: Callable[..., Any],
        target: tuple[Any, ...],
        kwargs: dict[str, Any],
        handlers: dict[str, tuple[Callable[[Any, None], Any], bool]],
        oauth: OAuth | None = None,
        in_process: bool = False,
    ) -> None:
        self.connect = connect
        self.target = target
        self.kwargs = kwargs
        self.handlers = handlers
        self.oauth = oauth
        # A server of this process (`in_memory`) runs its async handlers on
        # the client's loop, and may register one after the client connects.
        self.in_process = in_process

    @property
    def has_async_handler(self) -> bool:
        """Whether a :class:`SyncClient` needs a loop thread of its own."""
        return (
            self.in_process
            or any(is_async for _, is_async in self.handlers.values())
            or (self.oauth is not None and self.oauth.has_async_callback)
        )

    def open(self, event_loop: asyncio.AbstractEventLoop | None, handler_loop: asyncio.AbstractEventLoop | None) -> Any:
        # Settings read at each connect: the OAuth callbacks are registered
        # with (and released by) the native client made here.
        oauth = {} if self.oauth is None else {"oauth": self.oauth._native_settings()}
        telemetry._join_sdk()
        return self.connect(
            *self.target,
            event_loop,
            handlers=self.handlers,
            handler_loop=handler_loop,
            json_default=json_default,
            **self.kwargs,
            **oauth,
        )


def _common(
    name: str | None,
    version: str | None,
    protocol_version: str | None,
    era: Era,
    timeout: float | None,
    limits: ClientLimits | None,
    capabilities: Mapping[str, Any] | None,
    follow_tasks: bool,
) -> dict[str, Any]:
    # `settings` goes to core as it names them; core checks each.
    settings: dict[str, Any] = {"follow_tasks": follow_tasks}
    if limits is not None:
        settings["limits"] = dict(limits)
    if capabilities is not None:
        settings["capabilities"] = dict(capabilities)
    return {
        "name": name,
        "version": version,
        "protocol_version": protocol_version,
        "era": era,
        "timeout": timeout,
        "settings": settings,
    }


def _stdio(
    command: str | os.PathLike[str],
    args: Sequence[str | os.PathLike[str]],
    env: Mapping[str, str] | None,
    cwd: str | os.PathLike[str] | None,
    stderr: StderrMode,
    common: dict[str, Any],
    handlers: dict[str, tuple[Callable[[Any, None], Any], bool]],
) -> _Connection:
    kwargs = dict(common, env=list((env or {}).items()), cwd=None if cwd is None else os.fspath(cwd), stderr=stderr)
    target = (os.fspath(command), [os.fspath(a) for a in args])
    return _Connection(_native.Client.connect_stdio, target, kwargs, handlers)


def _pem(source: PemSource) -> str:
    """PEM text as is; anything else is a file to read (now, so a missing
    file fails where the client is made)."""
    if isinstance(source, str) and "-----BEGIN" in source:
        return source
    with open(source, encoding="ascii") as f:
        return f.read()


def _tls(
    tls_roots: TlsRoots,
    ca_certs: Sequence[PemSource] | None,
    client_cert: tuple[PemSource, PemSource] | None,
) -> dict[str, Any]:
    return {
        "tls_roots": tls_roots,
        "ca_certs": [_pem(c) for c in ca_certs or ()],
        "client_cert": None if client_cert is None else (_pem(client_cert[0]), _pem(client_cert[1])),
    }


def _http(
    url: str,
    headers: Mapping[str, str] | None,
    tls: dict[str, Any],
    common: dict[str, Any],
    handlers: dict[str, tuple[Callable[[Any, None], Any], bool]],
    oauth: OAuth | None,
) -> _Connection:
    if oauth is not None and not isinstance(oauth, OAuth):
        raise TypeError(f"oauth must be a ferromcp.OAuth, not {type(oauth).__name__}")
    kwargs = dict(common, headers=list((headers or {}).items()), **tls)
    return _Connection(_native.Client.connect_http, (url,), kwargs, handlers, oauth)


def _in_memory(
    server: Server,
    common: dict[str, Any],
    handlers: dict[str, tuple[Callable[[Any, None], Any], bool]],
) -> _Connection:
    from .server import Server  # a cycle at import time: server.py imports this module

    if not isinstance(server, Server):
        raise TypeError(f"an in-memory client's server is a ferromcp.Server, not {type(server).__name__}")
    return _Connection(_native.Client.connect_in_memory, (server._native,), common, handlers, in_process=True)


class ItemStream(Generic[T]):
    """Every item of a list, across pages: ``async for`` streams them (a page
    is fetched only when the previous one is used up), ``await`` collects
    them, :meth:`pages` walks page by page.

    >>> import asyncio, sys
    >>> async def main() -> None:
    ...     async with Client.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
    ...         print([tool.name async for tool in client.list_tools()])
    ...         print(len(await client.list_tools()))
    ...         print([len(page) async for page in client.list_tools().pages()])
    >>> asyncio.run(main())
    ['add', 'count', 'slow', 'grow']
    4
    [4]
    """

    def __init__(self, client: Client, kind: _Kind) -> None:
        self._client = client
        self._kind = kind

    async def pages(self) -> AsyncIterator[Page[T]]:
        """Each page, in order (core follows ``nextCursor`` and stops on a
        cursor seen before)."""
        native = self._client._connected().pages(self._kind)
        loop = asyncio.get_running_loop()
        while (page := await native.next(loop)) is not None:
            yield _walked_page(self._kind, page)

    async def __aiter__(self) -> AsyncIterator[T]:
        async for page in self.pages():
            for item in page.items:
                yield item

    async def _all(self) -> list[T]:
        return [item async for item in self]

    def __await__(self) -> Generator[Any, None, list[T]]:
        return self._all().__await__()


class Subscription:
    """An open ``subscriptions/listen`` stream of :class:`Notification`.

    ``async for`` yields notifications until the server ends the stream or
    :meth:`close` is called (``async with`` closes it on exit).

    >>> import asyncio, sys
    >>> async def main() -> None:
    ...     async with Client.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
    ...         async with client.listen(tools=True) as changes:
    ...             print(changes.acknowledged)
    ...             await client.call_tool("grow")  # registers a tool
    ...             async for note in changes:
    ...                 print(note.method)
    ...                 break
    >>> asyncio.run(main())
    {'toolsListChanged': True}
    notifications/tools/list_changed
    """

    def __init__(self, client: Client, wanted: dict[str, Any]) -> None:
        self._client = client
        self._wanted = wanted
        self._native: Any = None

    async def open(self) -> Subscription:
        """Sends the listen request and waits for the acknowledgement."""
        if self._native is None:
            self._native = await self._client._connected().listen(self._wanted, asyncio.get_running_loop())
        return self

    @property
    def acknowledged(self) -> dict[str, Any]:
        """The notification types the server agreed to send (after :meth:`open`)."""
        return {} if self._native is None else dict(self._native.acknowledged)

    async def next(self) -> Notification | None:
        """The next notification; ``None`` once the stream ended."""
        await self.open()
        note = await self._native.next(asyncio.get_running_loop())
        return None if note is None else Notification.from_dict(note)

    def close(self) -> None:
        """Ends the subscription (cancels the listen request)."""
        if self._native is not None:
            self._native.close()

    async def __aenter__(self) -> Subscription:
        return await self.open()

    async def __aexit__(self, *_: object) -> None:
        self.close()

    def __aiter__(self) -> AsyncIterator[Notification]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Notification]:
        while (note := await self.next()) is not None:
            yield note


P = ParamSpec("P")
_C = TypeVar("_C", bound="_ClientBase")


class _Awaits:
    """A client or handle whose calls are coroutines of the running loop."""


class _Blocks:
    """A client or handle whose calls block (the GIL released)."""


class _Method(Generic[P, T]):
    """A call declared once (by its ``_Op`` function, whose signature and
    docstring it takes) as a method of the asyncio object and of its
    blocking twin: a coroutine on a :class:`Client` (:class:`ToolTask`...),
    a blocking call on a :class:`SyncClient` (:class:`SyncToolTask`...).
    Each object's ``_run`` says how it is sent."""

    def __init__(self, declared: Callable[P, _Op[T]]) -> None:
        self.__doc__ = declared.__doc__

        def method(owner: Any, /, *args: P.args, **kwargs: P.kwargs) -> Any:
            return owner._run(declared(*args, **kwargs))

        method.__doc__ = declared.__doc__
        method.__name__ = method.__qualname__ = declared.__name__.lstrip("_")
        signature = inspect.signature(declared)
        client = inspect.Parameter("client", inspect.Parameter.POSITIONAL_ONLY)
        method.__signature__ = signature.replace(parameters=[client, *signature.parameters.values()])  # type: ignore[attr-defined]
        self._method = method

    @overload
    def __get__(self, client: None, owner: type[Any]) -> _Method[P, T]: ...
    @overload
    def __get__(self, client: _Awaits, owner: type[Any]) -> Callable[P, Coroutine[Any, Any, T]]: ...
    @overload
    def __get__(self, client: _Blocks, owner: type[Any]) -> Callable[P, T]: ...
    def __get__(self, client: object, owner: type[Any]) -> Any:
        if client is None:
            return self
        return MethodType(self._method, client)


class _Items(Generic[T]):
    """Every item of one list, across pages, as a method of both clients:
    an :class:`ItemStream` (``async for``, or awaited whole) on a
    :class:`Client`, an :class:`ItemIterator` on a :class:`SyncClient`."""

    def __init__(self, kind: _Kind, doc: str) -> None:
        self._kind: _Kind = kind
        self.__doc__ = doc

        def method(client: _ClientBase, /) -> Any:
            return client._items(kind)

        method.__doc__ = doc
        method.__name__ = method.__qualname__ = f"list_{kind}"
        self._method = method

    @overload
    def __get__(self, client: None, owner: type[Any]) -> _Items[T]: ...
    @overload
    def __get__(self, client: Client, owner: type[Any]) -> Callable[[], ItemStream[T]]: ...
    @overload
    def __get__(self, client: SyncClient, owner: type[Any]) -> Callable[[], ItemIterator[T]]: ...
    def __get__(self, client: _ClientBase | None, owner: type[Any]) -> Any:
        if client is None:
            return self
        return MethodType(self._method, client)


def _native_notification_link(link: NotificationLink) -> Callable[[str, dict[str, Any]], dict[str, Any] | None]:
    """The native form of a client's notification link, once checked.

    >>> _native_notification_link(print)("notifications/progress", {"progress": 1})
    <ferromcp.MiddlewareNotification notifications/progress>
    {'progress': 1}
    """
    if not callable(link):
        raise TypeError(f"a notification link is a function link(notification), not {type(link).__name__}")
    if is_coroutine_function(link):
        raise TypeError("a notification link is a plain def: it runs where the notification arrives")
    return _notification_link(link)


class _ClientBase:
    """What :class:`Client` and :class:`SyncClient` share: how they are
    made, what they tell about the connection, and every call whose result
    is one value (declared once above, sent by each client's ``_run``)."""

    def __init__(self, connection: _Connection) -> None:
        raise NotImplementedError

    def _connected(self) -> Any:
        raise NotImplementedError

    def _run(self, call: _Call[Any]) -> Any:
        raise NotImplementedError

    def add_middleware(self, link: ClientLink) -> None:
        raise NotImplementedError

    def middleware(self, link: L, /) -> L:
        """Adds a function as a link of this client's middleware chain (see
        :meth:`add_middleware`); returns it unchanged. ``async def
        link(ctx, call_next)`` awaits ``call_next(ctx)``; a plain ``def``
        calls it (it blocks, on a worker thread).

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> _ = server.tool(name="hello")(lambda: "hi")
        >>> with ferromcp.SyncClient.in_memory(server) as client:
        ...     @client.middleware
        ...     async def louder(ctx, call_next):
        ...         result = await call_next(ctx)
        ...         if ctx.method == "tools/call":
        ...             result["content"][0]["text"] += "!"
        ...         return result
        ...     client.call_tool("hello").text
        'hi!'
        """
        self.add_middleware(link)
        return link

    def add_notification_middleware(self, link: NotificationLink) -> None:
        raise NotImplementedError

    def notification_middleware(self, link: N, /) -> N:
        """Adds a function as a link of this client's middleware chain for
        the notifications it receives (see
        :meth:`Client.add_notification_middleware`); returns it unchanged.

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> @server.tool
        ... def count(ctx: ferromcp.Context) -> str:
        ...     for n in (1, 2, 3):
        ...         ctx.progress(n, total=3, message=f"step {n}")
        ...     return "done"
        >>> with ferromcp.SyncClient.in_memory(server) as client:
        ...     @client.notification_middleware
        ...     def quieter(notification: ferromcp.MiddlewareNotification) -> bool:
        ...         if notification.method == "notifications/progress":
        ...             notification.params["message"] = notification.params["message"].upper()
        ...         return notification.params.get("progress") != 2
        ...     client.call_tool("count", progress=lambda p, total, message: print(p, message)).text
        1.0 STEP 1
        3.0 STEP 3
        'done'
        """
        self.add_notification_middleware(link)
        return link

    def _items(self, kind: _Kind) -> Any:
        raise NotImplementedError

    @classmethod
    def stdio(
        cls: type[_C],
        command: str | os.PathLike[str],
        args: Sequence[str | os.PathLike[str]] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: StderrMode = "capture",
        name: str | None = None,
        version: str | None = None,
        protocol_version: str | None = None,
        era: Era = "auto",
        timeout: float | None = 60.0,
        on_elicitation: InputHandler | None = None,
        on_sampling: InputHandler | None = None,
        on_roots: InputHandler | None = None,
        limits: ClientLimits | None = None,
        capabilities: Mapping[str, Any] | None = None,
        follow_tasks: bool = True,
    ) -> _C:
        """A client that spawns ``command args...`` and speaks over its
        stdin/stdout (``env`` adds variables; the server is stopped on close).
        A :class:`Client` connects when awaited or entered, a
        :class:`SyncClient` at once.

        Args:
            name: ``clientInfo`` name (default ``"ferromcp-client"``).
            version: ``clientInfo`` version.
            protocol_version: The revision requests declare first.
            era: See :data:`Era`.
            timeout: Default seconds per call; ``None`` waits indefinitely.
            limits: What the client accepts from the server (see
                :class:`ClientLimits`).
            capabilities: Further client capabilities to declare, beside
                those the ``on_*`` handlers declare (``{"elicitation": {}}``
                for a caller that answers a task's questions itself with
                :meth:`ToolTask.respond`).
            follow_tasks: Whether :meth:`call_tool` follows a task the
                server makes of a call to its result (the tasks extension,
                declared while on); :meth:`start_tool_task` gives the
                handle instead.

        >>> import asyncio, sys
        >>> async def main() -> None:
        ...     async with Client.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
        ...         print((await client.call_tool("add", {"a": 1, "b": 2})).text)
        >>> asyncio.run(main())
        3
        """
        common = _common(name, version, protocol_version, era, timeout, limits, capabilities, follow_tasks)
        return cls(_stdio(command, args, env, cwd, stderr, common, _handlers(on_elicitation, on_sampling, on_roots)))

    @classmethod
    def http(
        cls: type[_C],
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        ca_certs: Sequence[PemSource] | None = None,
        client_cert: tuple[PemSource, PemSource] | None = None,
        tls_roots: TlsRoots = "native",
        name: str | None = None,
        version: str | None = None,
        protocol_version: str | None = None,
        era: Era = "auto",
        timeout: float | None = 60.0,
        on_elicitation: InputHandler | None = None,
        on_sampling: InputHandler | None = None,
        on_roots: InputHandler | None = None,
        oauth: OAuth | None = None,
        limits: ClientLimits | None = None,
        capabilities: Mapping[str, Any] | None = None,
        follow_tasks: bool = True,
    ) -> _C:
        """A client of the Streamable HTTP endpoint ``url``
        (``http://host:port/mcp`` or ``https://``); ``headers`` go with every
        request (e.g. ``Authorization``). For ``https://``: ``ca_certs`` are
        extra trusted CA certificates, ``client_cert`` a ``(certificate chain,
        private key)`` pair for mutual TLS (each a PEM file path or PEM text),
        ``tls_roots`` the built-in roots (see :data:`TlsRoots`); an untrusted
        certificate fails with an ``McpError`` of kind ``"http"`` naming the host
        and the reason. ``oauth`` (an :class:`ferromcp.OAuth`) logs in when
        the server answers 401 (see :mod:`ferromcp.oauth`); a failed login
        raises :class:`ferromcp.AuthError`. Other arguments as for
        :meth:`stdio`.

        >>> import asyncio, ferromcp
        >>> server = ferromcp.Server("demo")
        >>> _ = server.tool(name="hello")(lambda: "hi")
        >>> serving = server.start("http", port=0)
        >>> async def main() -> None:
        ...     url = f"http://127.0.0.1:{serving.port}/mcp"
        ...     async with Client.http(url, headers={"Authorization": "Bearer t"}) as client:
        ...         print((await client.call_tool("hello")).text)
        >>> asyncio.run(main())
        hi
        >>> serving.stop(); serving.wait(10)
        True
        """
        common = _common(name, version, protocol_version, era, timeout, limits, capabilities, follow_tasks)
        tls = _tls(tls_roots, ca_certs, client_cert)
        return cls(_http(url, headers, tls, common, _handlers(on_elicitation, on_sampling, on_roots), oauth))

    @classmethod
    def in_memory(
        cls: type[_C],
        server: Server,
        *,
        name: str | None = None,
        version: str | None = None,
        protocol_version: str | None = None,
        era: Era = "auto",
        timeout: float | None = 60.0,
        on_elicitation: InputHandler | None = None,
        on_sampling: InputHandler | None = None,
        on_roots: InputHandler | None = None,
        limits: ClientLimits | None = None,
        capabilities: Mapping[str, Any] | None = None,
        follow_tasks: bool = True,
    ) -> _C:
        """A client of ``server``, a :class:`ferromcp.Server` of this
        process, over an in-memory pipe: no socket, no subprocess, the whole
        protocol (questions for input, ``listen`` streams, tasks), which is
        how to test a server with pytest. The server serves it as it serves
        stdio until the client is closed; it needs no ``run`` or ``start``.

        The server's ``async def`` handlers run on the client's loop (the
        running loop of a :class:`Client`, the private loop thread of a
        :class:`SyncClient`), unless a transport serving the server has a
        loop of its own. A :class:`Client` connects when awaited or entered,
        a :class:`SyncClient` at once. Other arguments as for :meth:`stdio`.

        >>> import asyncio, ferromcp
        >>> server = ferromcp.Server("demo")
        >>> @server.tool
        ... async def greet(name: str) -> str:
        ...     return f"hello {name}"
        >>> async def main() -> None:
        ...     async with Client.in_memory(server) as client:
        ...         print((await client.call_tool("greet", {"name": "Ada"})).text)
        >>> asyncio.run(main())
        hello Ada
        >>> with SyncClient.in_memory(server) as client:
        ...     print(client.call_tool("greet", {"name": "Bob"}).text)
        hello Bob

        Raises:
            TypeError: ``server`` is not a :class:`ferromcp.Server`.
        """
        common = _common(name, version, protocol_version, era, timeout, limits, capabilities, follow_tasks)
        return cls(_in_memory(server, common, _handlers(on_elicitation, on_sampling, on_roots)))

    @property
    def protocol_version(self) -> str:
        """The revision requests currently declare.

        >>> import sys
        >>> with SyncClient.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
        ...     print(client.protocol_version)
        2026-07-28
        """
        return str(self._connected().protocol_version)

    @property
    def era(self) -> Literal["modern", "legacy"] | None:
        """The server's revision family, once the first request detected it.

        >>> import asyncio, sys
        >>> async def main() -> None:
        ...     async with Client.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
        ...         _ = await client.discover()
        ...         print(client.era)
        >>> asyncio.run(main())
        modern
        """
        return _era_name(self._connected().is_legacy)

    discover = _Method(_discover)
    list_tools_page = _Method(_list_tools_page)
    list_resources_page = _Method(_list_resources_page)
    list_resource_templates_page = _Method(_list_resource_templates_page)
    list_prompts_page = _Method(_list_prompts_page)
    call_tool = _Method(_call_tool)
    read_resource = _Method(_read_resource)
    get_prompt = _Method(_get_prompt)
    complete = _Method(_complete)
    list_skills_page = _Method(_list_skills_page)
    get_skill = _Method(_get_skill)
    list_tools: _Items[Tool] = _Items(
        "tools",
        """Every tool, across pages: ``async for tool in client.list_tools()``
        or ``await client.list_tools()`` on a :class:`Client`, a plain ``for``
        on a :class:`SyncClient`.

        >>> import asyncio, sys
        >>> async def main() -> None:
        ...     async with Client.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
        ...         print([tool.name async for tool in client.list_tools()])
        ...         print(len(await client.list_tools()))
        >>> asyncio.run(main())
        ['add', 'count', 'slow', 'grow']
        4
        >>> with SyncClient.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
        ...     print([tool.name for tool in client.list_tools()])
        ['add', 'count', 'slow', 'grow']
        """,
    )
    list_resources: _Items[Resource] = _Items(
        "resources",
        """Every resource, across pages (see ``list_tools``).

        >>> import asyncio, sys
        >>> async def main() -> None:
        ...     async with Client.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
        ...         print([r.uri for r in await client.list_resources()])
        >>> asyncio.run(main())
        ['notes://today']
        """,
    )
    list_resource_templates: _Items[ResourceTemplate] = _Items(
        "resource_templates",
        """Every resource template, across pages (see ``list_tools``).

        >>> import sys
        >>> with SyncClient.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
        ...     print([t.uri_template for t in client.list_resource_templates()])
        ['users://{id}/profile']
        """,
    )
    list_skills: _Items[Skill] = _Items(
        "skills",
        """Every skill the server offers (the skills extension, SEP-2640),
        across pages (see ``list_tools``). Listing reads no skill file; load
        one with :meth:`Client.load_skill`.

        >>> import asyncio, sys
        >>> async def main() -> None:
        ...     async with Client.stdio(sys.executable, ["-c", _EXTENSIONS_SERVER]) as client:
        ...         print([(s.name, s.description) for s in await client.list_skills()])
        >>> asyncio.run(main())
        [('git-workflow', 'Our Git conventions')]
        """,
    )
    list_prompts: _Items[Prompt] = _Items(
        "prompts",
        """Every prompt, across pages (see ``list_tools``).

        >>> import asyncio, sys
        >>> async def main() -> None:
        ...     async with Client.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
        ...         print([(p.name, len(p.arguments)) for p in await client.list_prompts()])
        >>> asyncio.run(main())
        [('review', 2)]
        """,
    )


class _AwaitsNative(_Awaits):
    """A handle whose native calls are awaited on the running loop."""

    _native: Any

    async def _run(self, call: _HandleCall[T]) -> T:
        method = getattr(self._native, call.name)
        loop = asyncio.get_running_loop()
        if call.callback is None:
            return call.read(await method(*call.args, loop))
        keyword, callback = call.callback
        return call.read(await method(*call.args, loop, **{keyword: _on_loop(loop, callback)}))


class _BlocksNative(_Blocks):
    """A handle whose native calls block (the GIL released)."""

    _native: Any

    def _run(self, call: _HandleCall[T]) -> T:
        method = getattr(self._native, call.name)
        if call.callback is None:
            return call.read(method(*call.args, None))
        keyword, callback = call.callback
        return call.read(method(*call.args, None, **{keyword: callback}))


class _ToolTaskBase:
    """What :class:`ToolTask` and :class:`SyncToolTask` share."""

    def __init__(self, native: Any) -> None:
        self._native = native

    @property
    def id(self) -> str | None:
        """The task's id (keep it to resume with ``client.tool_task(id)``);
        ``None`` when the server answered the call at once."""
        task_id: str | None = self._native.id
        return task_id

    @property
    def state(self) -> TaskState | None:
        """The last state seen (at start, or by :meth:`refresh`); ``None``
        without a task."""
        return _state(self._native.last)

    refresh = _Method(_refresh)
    respond = _Method(_respond)
    cancel = _Method(_cancel)
    result = _Method(_result)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.id or '(answered at once)'}>"


class ToolTask(_ToolTaskBase, _AwaitsNative):
    """A ``tools/call`` the server runs as a task (the tasks extension,
    SEP-2663), from :meth:`Client.start_tool_task`: its state, answers to
    its questions, cancellation, and its result (``await task`` is
    ``await task.result()``). ``call_tool`` does all of it for you; take a
    handle to show status, answer from your own UI, or resume later by id.

    >>> import asyncio, sys
    >>> async def main() -> None:
    ...     command = (sys.executable, ["-c", _EXTENSIONS_SERVER])
    ...     async with Client.stdio(*command, capabilities={"elicitation": {}}) as client:
    ...         task = await client.start_tool_task("render", {"pages": 2})
    ...         print(task.state.status, (await task).text)
    ...         deploy = await client.start_tool_task("deploy", {"env": "prod"})
    ...         while (state := await deploy.refresh()).status != "input_required":
    ...             await asyncio.sleep(0.02)
    ...         print(list(state.input_requests))
    ...         await deploy.respond({"confirm": {"action": "accept", "content": {"ok": True}}})
    ...         print((await deploy.result()).text)
    ...         slow = await client.start_tool_task("render", {"pages": 1000})
    ...         await slow.cancel()  # acknowledged at once; the status follows
    ...         while (state := await slow.refresh()).status == "working":
    ...             await asyncio.sleep(0.01)
    ...         print(state.status)
    >>> asyncio.run(main())
    working rendered 2 pages
    ['confirm']
    deployed to prod
    cancelled
    """

    def __await__(self) -> Generator[Any, None, CallToolResult]:
        return self.result().__await__()


class SyncToolTask(_ToolTaskBase, _BlocksNative):
    """:class:`ToolTask` for :class:`SyncClient`: every method blocks.

    >>> import sys
    >>> with SyncClient.stdio(sys.executable, ["-c", _EXTENSIONS_SERVER]) as client:
    ...     task = client.start_tool_task("render", {"pages": 1})
    ...     print(task.id is not None, task.result().text)
    ...     print(client.tool_task(task.id).refresh().status)  # resumed by id
    True rendered 1 pages
    completed
    """


class _LoadedSkillBase:
    """What :class:`LoadedSkill` and :class:`SyncLoadedSkill` share."""

    def __init__(self, native: Any) -> None:
        self._native = native

    @property
    def skill(self) -> Skill:
        """The entry the skill was loaded from."""
        return Skill.from_dict(self._native.skill)

    @property
    def skill_md(self) -> str:
        """The ``SKILL.md`` text, frontmatter included, checked against the
        entry (digest, size and frontmatter)."""
        text: str = self._native.skill_md
        return text

    read = _Method(_read)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.skill.uri}>"


class LoadedSkill(_LoadedSkillBase, _AwaitsNative):
    """A skill loaded with :meth:`Client.load_skill`: its ``SKILL.md``,
    checked, and its other files read on demand, each checked.

    >>> import asyncio, sys
    >>> async def main() -> None:
    ...     async with Client.stdio(sys.executable, ["-c", _EXTENSIONS_SERVER]) as client:
    ...         skill = await client.load_skill("skill://git-workflow/SKILL.md")
    ...         print(skill.skill_md.splitlines()[-1])
    ...         print(await skill.read("references/HOOKS.md"))
    >>> asyncio.run(main())
    # Branches
    b'Run the hooks.\\n'
    """


class SyncLoadedSkill(_LoadedSkillBase, _BlocksNative):
    """:class:`LoadedSkill` for :class:`SyncClient`.

    >>> import sys
    >>> with SyncClient.stdio(sys.executable, ["-c", _EXTENSIONS_SERVER]) as client:
    ...     skill = client.load_skill(next(iter(client.list_skills())))
    ...     print(skill.skill.name, skill.read("skill://git-workflow/references/HOOKS.md"))
    git-workflow b'Run the hooks.\\n'
    """


class Client(_ClientBase, _Awaits):
    """An asyncio MCP client; build one with :meth:`stdio`, :meth:`http` or
    :meth:`in_memory` and use it with ``async with`` (or ``await
    client.connect()`` and ``await client.close()``).

    >>> import asyncio, sys
    >>> async def main() -> None:
    ...     async with Client.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
    ...         result = await client.call_tool("add", {"a": 2, "b": 3})
    ...         print(result.text, result.structured, client.era)
    >>> asyncio.run(main())
    5 {'result': 5} modern

    Handlers answer the server's requests for input, in either revision
    (``input_required`` rounds of 2026-07-28, live requests of a 2025-11-25
    session); registering one declares the capability::

        async def confirm(params: dict) -> dict:
            return {"action": "accept", "content": {"ok": True}}

        async with ferromcp.Client.stdio("python", ["server.py"], on_elicitation=confirm) as client:
            result = await client.call_tool("deploy", {"env": "prod"})
    """

    def __init__(self, connection: _Connection) -> None:
        self._connection = connection
        self._native: Any = None
        # What each add_middleware / add_notification_middleware call does
        # to the native client, replayed in order when it connects.
        self._links: list[Callable[[Any], None]] = []

    def add_middleware(self, link: ClientLink) -> None:
        """Adds a link at the end of this client's middleware chain, around
        every request it sends (calls, lists, reads, prompts, completions,
        listen, tasks, skills; either era): the first added sees a call
        first and its result last. ``link(ctx, call_next)`` gets a
        :class:`ferromcp.middleware.ClientMiddlewareContext` (``method``,
        ``params``, ``name``, ``meta``, ``timeout``, all but the first two
        changeable) and returns the raw result dict ``call_next(ctx)``
        returned, changed or replaced; the typed methods decode it. An
        exception it raises (say :class:`ferromcp.McpError`) is the call's
        error, without sending it. An ``async def`` link runs on the
        client's loop, a plain ``def`` on a worker thread. Links added
        before :meth:`connect` apply from the connection on (the handshake
        does not go through them); they cannot be removed.

        >>> import asyncio, ferromcp
        >>> server = ferromcp.Server("demo")
        >>> _ = server.tool(name="echo")(lambda text, locale="en": f"{text} ({locale})")
        >>> async def french(ctx, call_next):
        ...     if ctx.method == "tools/call":
        ...         ctx.params["arguments"]["locale"] = "fr"
        ...     return await call_next(ctx)
        >>> async def main() -> None:
        ...     client = ferromcp.Client.in_memory(server)
        ...     client.add_middleware(french)
        ...     async with client:
        ...         print((await client.call_tool("echo", {"text": "hi"})).text)
        >>> asyncio.run(main())
        hi (fr)

        Raises:
            TypeError: ``link`` is not callable.
        """
        if not callable(link):
            raise TypeError(f"a middleware link is a function link(ctx, call_next), not {type(link).__name__}")
        is_async = is_coroutine_function(link)
        native_link = _client_link(link, is_async)
        self._add_link(lambda native: native.add_middleware(native_link, is_async))

    def add_notification_middleware(self, link: NotificationLink) -> None:
        """Adds ``link(notification)`` at the end of this client's
        middleware chain, for the notifications it receives (progress, log
        messages, list and resource changes, listen events), before its
        callbacks (``progress=``, listen streams) see them.
        ``notification`` is a :class:`ferromcp.MiddlewareNotification`: its
        ``method``, and its ``params`` dict, whose changes go on; return
        ``False`` to stop it (the links after this one and the callbacks
        never see it), ``None`` or ``True`` to pass it on. Calls pass such a
        link straight on, so links run in the order they were added,
        whatever their kind; added before :meth:`connect`, it applies from
        the connection on.

        The link is a plain ``def``, called in arrival order where the
        notification is delivered, holding the GIL: keep it short, never
        block nor call the client from it. An exception it raises is logged
        (the ``ferromcp.middleware`` logger of :mod:`logging`, with its
        traceback) and the notification goes on as it came.

        >>> import asyncio, ferromcp
        >>> server = ferromcp.Server("demo")
        >>> @server.tool
        ... async def work(ctx: ferromcp.Context) -> str:
        ...     ctx.progress(1, total=2, message="debug: warming up")
        ...     ctx.progress(2, total=2, message="done")
        ...     return "ok"
        >>> def hide_debug(notification: ferromcp.MiddlewareNotification) -> bool:
        ...     return not str(notification.params.get("message", "")).startswith("debug:")
        >>> async def main() -> None:
        ...     client = ferromcp.Client.in_memory(server)
        ...     client.add_notification_middleware(hide_debug)
        ...     async with client:
        ...         await client.call_tool("work", progress=lambda p, total, message: print(p, message))
        >>> asyncio.run(main())
        2.0 done

        Raises:
            TypeError: ``link`` is not callable, or is an ``async def``.
        """
        native_link = _native_notification_link(link)
        self._add_link(lambda native: native.add_notification_middleware(native_link))

    def _add_link(self, add: Callable[[Any], None]) -> None:
        """Adds a link to the native client now, or when it connects."""
        self._links.append(add)
        if self._native is not None:
            add(self._native)

    async def connect(self) -> Client:
        """Connects (spawns the server for stdio); idempotent. ``await client``
        does the same.

        >>> import asyncio, sys
        >>> async def main() -> None:
        ...     client = await Client.stdio(sys.executable, ["-c", _EXAMPLE_SERVER])
        ...     try:
        ...         print((await client.call_tool("add", {"a": 1, "b": 1})).text)
        ...     finally:
        ...         await client.close()
        >>> asyncio.run(main())
        2
        """
        if self._native is None:
            loop = asyncio.get_running_loop()
            native = await self._connection.open(loop, loop)
            for add in self._links:
                add(native)
            self._native = native
        return self

    def __await__(self) -> Generator[Any, None, Client]:
        return self.connect().__await__()

    async def __aenter__(self) -> Client:
        return await self.connect()

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Ends the connection (a spawned server is stopped) and releases the
        handlers. Safe to call twice.

        >>> import asyncio, sys
        >>> async def main() -> None:
        ...     client = await Client.stdio(sys.executable, ["-c", _EXAMPLE_SERVER])
        ...     await client.close()
        ...     await client.close()  # a no-op
        ...     try:
        ...         await client.discover()
        ...     except RuntimeError as e:
        ...         print(e)
        >>> asyncio.run(main())
        the client is not connected: use `async with` or `await client.connect()`
        """
        native, self._native = self._native, None
        if native is not None:
            await native.close(asyncio.get_running_loop())

    def _connected(self) -> Any:
        if self._native is None:
            raise RuntimeError("the client is not connected: use `async with` or `await client.connect()`")
        return self._native

    def _items(self, kind: _Kind) -> ItemStream[Any]:
        return ItemStream(self, kind)

    async def start_tool_task(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> ToolTask:
        """Calls a tool and returns a handle on the task the server makes
        of it, instead of following it as :meth:`call_tool` does (a server
        may also answer at once: then :attr:`ToolTask.id` is ``None`` and
        the result is there). See :class:`ToolTask`.

        >>> import asyncio, sys
        >>> async def main() -> None:
        ...     async with Client.stdio(sys.executable, ["-c", _EXTENSIONS_SERVER]) as client:
        ...         task = await client.start_tool_task("render", {"pages": 1})
        ...         print(task.id is not None, (await task.result()).text)
        >>> asyncio.run(main())
        True rendered 1 pages
        """
        native = await self._connected().start_tool_task(
            name, dict(arguments or {}), timeout, _meta(meta), asyncio.get_running_loop()
        )
        return ToolTask(native)

    def tool_task(self, task_id: str) -> ToolTask:
        """A handle on a task started earlier (by this client or another
        run of it: task ids are meant to be kept). See :class:`ToolTask`.

        >>> import asyncio, sys
        >>> async def main() -> None:
        ...     async with Client.stdio(sys.executable, ["-c", _EXTENSIONS_SERVER]) as client:
        ...         started = await client.start_tool_task("render", {"pages": 1})
        ...         print((await client.tool_task(started.id)).text)
        >>> asyncio.run(main())
        rendered 1 pages
        """
        return ToolTask(self._connected().tool_task(task_id))

    async def load_skill(self, skill: str | Skill) -> LoadedSkill:
        """Loads a skill (the skills extension, SEP-2640): ``skill`` is an
        entry of :meth:`list_skills` or its ``SKILL.md`` URI (then
        ``skills/get`` fetches the entry). ``SKILL.md`` is read and checked
        against the entry (digest, size, frontmatter): a mismatch raises
        :class:`ferromcp.ProtocolError` and nothing is returned. See
        :class:`LoadedSkill`.

        >>> import asyncio, sys
        >>> async def main() -> None:
        ...     async with Client.stdio(sys.executable, ["-c", _EXTENSIONS_SERVER]) as client:
        ...         (entry,) = await client.list_skills()
        ...         skill = await client.load_skill(entry)  # no skills/get: the entry is at hand
        ...         print(skill.skill.name, len(skill.skill_md) > 0)
        >>> asyncio.run(main())
        git-workflow True
        """
        native = await self._connected().load_skill(_skill_ref(skill), asyncio.get_running_loop())
        return LoadedSkill(native)

    async def _run(self, call: _Call[T]) -> T:
        """Sends ``call`` and reads its result; its progress callback runs on this loop."""
        loop = asyncio.get_running_loop()
        on_progress = None if call.progress is None else _progress_on_loop(loop, call.progress)
        result = await self._connected().request(call.method, call.params, call.timeout, on_progress, call.meta, loop)
        return call.read(result)

    def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Iterable[str] = (),
    ) -> Subscription:
        """Subscribes to change notifications (``subscriptions/listen``):
        list changes of tools, prompts, resources, and updates of the
        resources in ``resource_uris``::

            async with client.listen(tools=True) as changes:
                async for note in changes:
                    print(note.method)

        >>> import asyncio, sys
        >>> async def main() -> None:
        ...     async with Client.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
        ...         async with client.listen(tools=True) as changes:
        ...             _ = await client.call_tool("grow")  # registers a tool
        ...             print((await changes.next()).method)
        >>> asyncio.run(main())
        notifications/tools/list_changed
        """
        return Subscription(self, _filter(tools, prompts, resources, resource_uris))


def _progress_on_loop(loop: asyncio.AbstractEventLoop, progress: ProgressCallback) -> Callable[..., None]:
    """The native progress callback (called on a worker thread): runs
    ``progress`` on ``loop``, as a task when it is ``async``."""
    return _on_loop(loop, progress)


def _on_loop(loop: asyncio.AbstractEventLoop, callback: Callable[..., Any]) -> Callable[..., None]:
    """A native callback (called on a worker thread) that runs ``callback``
    on ``loop`` with its arguments, as a task when it is ``async``."""

    # Tasks of async callbacks, kept until done (the loop holds only weak
    # references to tasks).
    running: set[asyncio.Future[Any]] = set()

    def on_loop(*args: Any) -> None:
        returned = callback(*args)
        if inspect.isawaitable(returned):
            task = asyncio.ensure_future(returned)
            running.add(task)
            task.add_done_callback(running.discard)

    def from_worker(*args: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody listens
            loop.call_soon_threadsafe(on_loop, *args)

    return from_worker


class _LoopThread:
    """An asyncio loop on a daemon thread, for a :class:`SyncClient`'s
    ``async def`` handlers (and ``async`` progress callbacks)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="ferromcp-client-loop", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(5)
        if not self.loop.is_running():
            self.loop.close()


class ItemIterator(Generic[T]):
    """Every item of a list, across pages, for :class:`SyncClient`: iterate
    it (a page is fetched only when needed) or walk :meth:`pages`."""

    def __init__(self, native: Any, kind: _Kind) -> None:
        self._native = native
        self._kind = kind

    def pages(self) -> Iterator[Page[T]]:
        """Each page, in order."""
        pages = self._native.pages(self._kind)
        while (page := pages.next(None)) is not None:
            yield _walked_page(self._kind, page)

    def __iter__(self) -> Iterator[T]:
        for page in self.pages():
            yield from page.items


class SyncSubscription:
    """A :class:`Subscription` for :class:`SyncClient`: iterate it; ``with``
    closes it."""

    def __init__(self, native: Any) -> None:
        self._native = native

    @property
    def acknowledged(self) -> dict[str, Any]:
        """The notification types the server agreed to send."""
        return dict(self._native.acknowledged)

    def next(self) -> Notification | None:
        """The next notification (blocking); ``None`` once the stream ended."""
        note = self._native.next(None)
        return None if note is None else Notification.from_dict(note)

    def close(self) -> None:
        """Ends the subscription."""
        self._native.close()

    def __iter__(self) -> Iterator[Notification]:
        while (note := self.next()) is not None:
            yield note

    def __enter__(self) -> SyncSubscription:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class SyncClient(_ClientBase, _Blocks):
    """The same client without asyncio, for scripts and notebooks: every
    method blocks (with the GIL released; Ctrl-C interrupts and cancels the
    call). Connected on creation; ``with`` closes it.

    >>> import sys
    >>> with SyncClient.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
    ...     print([tool.name for tool in client.list_tools()])
    ...     print(client.call_tool("add", {"a": 1, "b": 2}).text)
    ...     with client.listen(tools=True) as changes:
    ...         _ = client.call_tool("grow")
    ...         print(changes.next().method)
    ['add', 'count', 'slow', 'grow']
    3
    notifications/tools/list_changed

    Handlers may be plain functions (run on worker threads) or ``async def``
    (run on a private event loop thread).
    """

    def __init__(self, connection: _Connection) -> None:
        self._loop_thread = _LoopThread() if connection.has_async_handler else None
        handler_loop = None if self._loop_thread is None else self._loop_thread.loop
        try:
            self._native: Any = connection.open(None, handler_loop)
        except BaseException:
            if self._loop_thread is not None:
                self._loop_thread.stop()
            raise

    def __enter__(self) -> SyncClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Ends the connection and releases the handlers. Safe to call twice.

        >>> import sys
        >>> client = SyncClient.stdio(sys.executable, ["-c", _EXAMPLE_SERVER])
        >>> client.close(); client.close()
        >>> client.discover()
        Traceback (most recent call last):
        RuntimeError: the client is closed
        """
        native, self._native = self._native, None
        if native is not None:
            native.close(None)
        if self._loop_thread is not None:
            self._loop_thread.stop()
            self._loop_thread = None

    def _connected(self) -> Any:
        if self._native is None:
            raise RuntimeError("the client is closed")
        return self._native

    def add_middleware(self, link: ClientLink) -> None:
        """Adds a link at the end of this client's middleware chain: as
        :meth:`ferromcp.Client.add_middleware`; an ``async def`` link runs
        on the client's private loop thread, a plain ``def`` on a worker
        thread (``call_next`` blocks there).

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> _ = server.tool(name="secret")(lambda: "42")
        >>> def refuse(ctx, call_next):
        ...     if ctx.name == "secret":
        ...         raise ferromcp.InvalidParamsError("not from this client")
        ...     return call_next(ctx)
        >>> with ferromcp.SyncClient.in_memory(server) as client:
        ...     client.add_middleware(refuse)
        ...     client.call_tool("secret")
        Traceback (most recent call last):
        ferromcp.errors.InvalidParamsError: not from this client

        Raises:
            TypeError: ``link`` is not callable.
        """
        if not callable(link):
            raise TypeError(f"a middleware link is a function link(ctx, call_next), not {type(link).__name__}")
        native = self._connected()
        is_async = is_coroutine_function(link)
        event_loop = None
        if is_async:
            # The loop of the client's async callbacks (idempotent when it
            # is so already).
            if self._loop_thread is None:
                self._loop_thread = _LoopThread()
            event_loop = self._loop_thread.loop
        native.add_middleware(_client_link(link, is_async), is_async, event_loop)

    def add_notification_middleware(self, link: NotificationLink) -> None:
        """Adds ``link(notification)`` at the end of this client's chain,
        for the notifications it receives: as
        :meth:`ferromcp.Client.add_notification_middleware`.

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> @server.tool
        ... def work(ctx: ferromcp.Context) -> str:
        ...     ctx.progress(1, message="started")
        ...     return "ok"
        >>> def record(notification: ferromcp.MiddlewareNotification) -> None:
        ...     print(notification.method, notification.params.get("message"))
        >>> with ferromcp.SyncClient.in_memory(server) as client:
        ...     client.add_notification_middleware(record)
        ...     client.call_tool("work", progress=lambda *update: None).text
        notifications/progress started
        'ok'

        Raises:
            TypeError: ``link`` is not callable, or is an ``async def``.
        """
        self._connected().add_notification_middleware(_native_notification_link(link))

    def _items(self, kind: _Kind) -> ItemIterator[Any]:
        return ItemIterator(self._connected(), kind)

    def start_tool_task(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> SyncToolTask:
        """:meth:`Client.start_tool_task`, blocking. See :class:`SyncToolTask`.

        >>> import sys
        >>> with SyncClient.stdio(sys.executable, ["-c", _EXTENSIONS_SERVER]) as client:
        ...     print(client.start_tool_task("render", {"pages": 2}).result().text)
        rendered 2 pages
        """
        return SyncToolTask(self._connected().start_tool_task(name, dict(arguments or {}), timeout, _meta(meta), None))

    def tool_task(self, task_id: str) -> SyncToolTask:
        """:meth:`Client.tool_task` for this client.

        >>> import sys
        >>> with SyncClient.stdio(sys.executable, ["-c", _EXTENSIONS_SERVER]) as client:
        ...     task_id = client.start_tool_task("render", {"pages": 1}).id
        ...     print(client.tool_task(task_id).result().text)
        rendered 1 pages
        """
        return SyncToolTask(self._connected().tool_task(task_id))

    def load_skill(self, skill: str | Skill) -> SyncLoadedSkill:
        """:meth:`Client.load_skill`, blocking. See :class:`SyncLoadedSkill`.

        >>> import sys
        >>> with SyncClient.stdio(sys.executable, ["-c", _EXTENSIONS_SERVER]) as client:
        ...     print(client.load_skill("skill://git-workflow/SKILL.md").skill_md.splitlines()[1])
        name: git-workflow
        """
        return SyncLoadedSkill(self._connected().load_skill(_skill_ref(skill), None))

    def _run(self, call: _Call[T]) -> T:
        """Sends ``call`` and reads its result; its progress callback runs on this thread."""
        on_progress = None if call.progress is None else self._sync_progress(call.progress)
        return call.read(
            self._connected().request(call.method, call.params, call.timeout, on_progress, call.meta, None)
        )

    def _sync_progress(self, progress: ProgressCallback) -> Callable[..., Any]:
        if not _is_async_callable(progress):
            return progress
        if self._loop_thread is None:
            self._loop_thread = _LoopThread()
        return _progress_on_loop(self._loop_thread.loop, progress)

    def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Iterable[str] = (),
    ) -> SyncSubscription:
        """Subscribes to change notifications; returns once the server
        acknowledged (see :meth:`Client.listen`).

        >>> import sys
        >>> with SyncClient.stdio(sys.executable, ["-c", _EXAMPLE_SERVER]) as client:
        ...     with client.listen(tools=True) as changes:
        ...         _ = client.call_tool("grow")
        ...         print(changes.next().method)
        notifications/tools/list_changed
        """
        wanted = _filter(tools, prompts, resources, resource_uris)
        return SyncSubscription(self._connected().listen(wanted, None))


# The item lists' examples are docstrings of `_Items` objects, not of
# functions: doctest runs them from here.
__test__ = {
    f"_ClientBase.{name}": member.__doc__ or ""
    for name, member in vars(_ClientBase).items()
    if isinstance(member, _Items)
}
