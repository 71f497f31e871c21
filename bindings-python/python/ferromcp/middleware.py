"""Middleware: functions around every request a server answers.

A link gets the request as a :class:`MiddlewareContext` and ``call_next``,
the rest of the chain; it may read or change ``ctx.params``, call
``call_next(ctx)`` (or not: raise a :class:`ferromcp.McpError` to refuse
the request), and read or change the result dict it returns::

    @server.middleware
    async def timing(ctx: MiddlewareContext, call_next: AsyncCallNext) -> dict[str, Any]:
        started = time.perf_counter()
        result = await call_next(ctx)
        log.info("%s %s took %.1f ms", ctx.method, ctx.name, 1000 * (time.perf_counter() - started))
        return result

An ``async def`` link runs on the serving loop and awaits ``call_next``; a
plain ``def`` runs on a worker thread and ``call_next`` blocks there. Links
run in the order they were added: the first sees a request first and its
result last. Every request for a tool, prompt, resource, completion or list
goes through the chain, whatever the transport (stdio, HTTP, in memory) and
protocol revision. Notifications the server receives have plain links of
their own in the same chain (:meth:`ferromcp.Server.notification_middleware`,
each getting a :class:`MiddlewareNotification`); so do a client's
(:meth:`ferromcp.Client.notification_middleware`).

A link's exception fails the request as a handler's would: a
:class:`ferromcp.McpError` (say :class:`ferromcp.InvalidParamsError`) is
that JSON-RPC error, anything else an internal error whose message reads
``"ValueError: ..."`` (hide it from clients with :func:`mask_errors`). The
connection goes on serving.

Ready-made links are the Rust core's own: :func:`log_requests`,
:func:`mask_errors` and :func:`rate_limit`. The first two report to the
``ferromcp.requests`` logger of :mod:`logging`.

>>> import ferromcp
>>> from ferromcp.errors import InvalidParamsError
>>> server = ferromcp.Server("demo")
>>> @server.tool
... def echo(text: str) -> str:
...     return text
>>> @server.middleware
... def shout(ctx: MiddlewareContext, call_next: CallNext) -> dict[str, Any]:
...     if ctx.name == "echo":
...         if ctx.params["arguments"].get("text") == "forbidden":
...             raise InvalidParamsError("refused by policy")
...         ctx.params["arguments"]["text"] += "!"
...     return call_next(ctx)
>>> client = ferromcp.SyncClient.in_memory(server)
>>> client.call_tool("echo", {"text": "hi"}).text
'hi!'
>>> client.call_tool("echo", {"text": "forbidden"})
Traceback (most recent call last):
ferromcp.errors.InvalidParamsError: refused by policy
>>> client.close()
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeAlias

from . import _native
from ._native import BuiltinMiddleware
from .context import Caller

__all__ = [
    "AsyncCallNext",
    "AsyncClientCallNext",
    "AsyncClientLink",
    "AsyncLink",
    "BuiltinMiddleware",
    "CallNext",
    "ClientCallNext",
    "ClientLink",
    "ClientMiddlewareContext",
    "Middleware",
    "MiddlewareContext",
    "MiddlewareNotification",
    "NotificationLink",
    "SyncClientLink",
    "SyncLink",
    "log_requests",
    "mask_errors",
    "rate_limit",
]


class MiddlewareContext(Caller):
    """One request on its way through the middleware chain: its method and
    params (a dict a link may change before ``call_next(ctx)``), its id,
    and who sent it (:class:`ferromcp.Caller`: ``auth``, ``client_info``,
    ``protocol_version``, ``headers``).

    >>> import ferromcp
    >>> server = ferromcp.Server("demo")
    >>> _ = server.tool(name="ping")(lambda: "pong")
    >>> seen = []
    >>> @server.middleware
    ... def record(ctx: MiddlewareContext, call_next: CallNext) -> dict[str, Any]:
    ...     seen.append((ctx.method, ctx.name, (ctx.client_info or {}).get("name")))
    ...     return call_next(ctx)
    >>> with ferromcp.SyncClient.in_memory(server, name="agent") as client:
    ...     _ = client.call_tool("ping")
    >>> seen[-1]
    ('tools/call', 'ping', 'agent')
    """

    __slots__ = ("_call", "params")

    params: dict[str, Any]
    """The request's params as the client sent them (a tool call's ``name``
    and ``arguments``, a read's ``uri``...). Changes (or a new dict) go on
    to the rest of the chain when the link calls ``call_next(ctx)``."""

    def __init__(self, native: _native.MiddlewareCall, params: dict[str, Any]) -> None:
        super().__init__(native.caller)
        self._call = native
        self.params = params

    @property
    def method(self) -> str:
        """The request's method, e.g. ``"tools/call"`` or ``"resources/read"``.

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> _ = server.tool(name="ping")(lambda: "pong")
        >>> methods = []
        >>> @server.middleware
        ... def record(ctx: MiddlewareContext, call_next: CallNext) -> dict[str, Any]:
        ...     methods.append(ctx.method)
        ...     return call_next(ctx)
        >>> with ferromcp.SyncClient.in_memory(server) as client:
        ...     _ = list(client.list_tools())
        >>> methods[-1]
        'tools/list'
        """
        return self._call.method

    @property
    def name(self) -> str | None:
        """The tool or prompt the request is for (its ``name`` param), or
        ``None`` (``resources/read`` names its resource in
        ``params["uri"]``).

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> _ = server.tool(name="ping")(lambda: "pong")
        >>> names = []
        >>> @server.middleware
        ... def record(ctx: MiddlewareContext, call_next: CallNext) -> dict[str, Any]:
        ...     names.append(ctx.name)
        ...     return call_next(ctx)
        >>> with ferromcp.SyncClient.in_memory(server) as client:
        ...     _ = client.call_tool("ping")
        >>> names[-1]
        'ping'
        """
        name = self.params.get("name") if isinstance(self.params, Mapping) else None
        return name if isinstance(name, str) else None

    @property
    def request_id(self) -> int | str:
        """The JSON-RPC id of the request.

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> _ = server.tool(name="ping")(lambda: "pong")
        >>> ids = []
        >>> @server.middleware
        ... def record(ctx: MiddlewareContext, call_next: CallNext) -> dict[str, Any]:
        ...     ids.append(ctx.request_id)
        ...     return call_next(ctx)
        >>> with ferromcp.SyncClient.in_memory(server) as client:
        ...     _ = client.call_tool("ping")
        >>> type(ids[-1]).__name__ in ("int", "str")
        True
        """
        return self._call.request_id

    def __repr__(self) -> str:
        return f"<ferromcp.MiddlewareContext {self.method} id={self.request_id!r}>"


CallNext: TypeAlias = Callable[[MiddlewareContext], dict[str, Any]]
"""A plain link's ``call_next``: runs the rest of the chain (blocking) and
returns its result dict, or raises its :class:`ferromcp.McpError`."""

AsyncCallNext: TypeAlias = Callable[[MiddlewareContext], Awaitable[dict[str, Any]]]
"""An ``async`` link's ``call_next``: awaited, as :data:`CallNext`."""

SyncLink: TypeAlias = Callable[[MiddlewareContext, CallNext], dict[str, Any]]
"""``def link(ctx, call_next) -> dict``."""

AsyncLink: TypeAlias = Callable[[MiddlewareContext, AsyncCallNext], Awaitable[dict[str, Any]]]
"""``async def link(ctx, call_next) -> dict``."""

Middleware: TypeAlias = SyncLink | AsyncLink | BuiltinMiddleware
"""What :meth:`ferromcp.Server.add_middleware` takes."""


def log_requests() -> BuiltinMiddleware:
    """Logs each request once it ends to the ``ferromcp.requests`` logger
    of :mod:`logging`: method, tool or prompt name, outcome and duration,
    at ``INFO`` (``"tools/call echo: ok in 0.4 ms"``), a failed request at
    ``WARNING`` with its error code and message. The log record carries
    the fields as attributes too: ``mcp_method``, ``mcp_name`` (``None``
    without one), ``mcp_micros``, ``mcp_error_code`` and
    ``mcp_error_message`` (``None`` for a success).

    The request is never held up by the log: the Rust core hands the record
    to the package's worker threads, and one of them logs it just after the
    answer went out (so the record's thread is not the one that served the
    request, and records of requests ending at once may arrive out of
    order). Nothing is printed until :mod:`logging` is configured for
    ``INFO`` (say ``logging.basicConfig(level=logging.INFO)``).

    >>> import ferromcp
    >>> server = ferromcp.Server("demo")
    >>> server.add_middleware(log_requests())
    """
    return BuiltinMiddleware.log_requests()


def mask_errors() -> BuiltinMiddleware:
    """Hides internal errors' details: a ``-32603`` error (a link's or a
    prompt's exception, a failed resource read...) reaches the client as
    ``"Internal error"`` without data, and the original message is logged
    at ``ERROR`` to the ``ferromcp.requests`` logger of :mod:`logging` (as
    :func:`log_requests` logs: just after, from a worker thread, with the
    same record attributes). Errors a client can act on (invalid params,
    unknown tool) pass unchanged, as do tool results flagged ``isError``
    (the model is meant to read those). Add it first: it masks what the
    links after it raise.

    >>> import ferromcp
    >>> server = ferromcp.Server("demo")
    >>> server.add_middleware(mask_errors())
    >>> @server.prompt
    ... def broken() -> str:
    ...     raise RuntimeError("db password is hunter2")
    >>> with ferromcp.SyncClient.in_memory(server) as client:
    ...     client.get_prompt("broken")
    Traceback (most recent call last):
    ferromcp.errors.InternalError: Internal error
    """
    return BuiltinMiddleware.mask_errors()


def rate_limit(per_second: float, burst: int) -> BuiltinMiddleware:
    """A token bucket per client: each may make ``burst`` requests at once
    and ``per_second`` more every second; past that a request is refused,
    before it runs, with a ``-32000`` error whose ``data`` says when to
    retry (``{"retryAfterMs": ...}``). A client is its token's subject (or
    OAuth client id) on a protected server, else its ``clientInfo`` name
    and version. At most 10,000 clients' buckets are kept (the one idle
    longest makes room), so made-up identities cost no memory.

    The budget counts every request through the chain (listings and
    discovery too). One ``rate_limit`` added to several servers is one
    budget.

    >>> import ferromcp
    >>> server = ferromcp.Server("demo")
    >>> _ = server.tool(name="ping")(lambda: "pong")
    >>> server.add_middleware(rate_limit(per_second=0.001, burst=2))
    >>> with ferromcp.SyncClient.in_memory(server) as client:
    ...     for _ in range(3):
    ...         client.call_tool("ping").text
    Traceback (most recent call last):
    ferromcp.errors.McpError: Too many requests: retry in ... ms

    Raises:
        ValueError: ``per_second`` is not a number, or negative or not
            finite; ``burst`` is not an int, or below 1 (the core's checks
            and messages).
    """
    if isinstance(per_second, bool) or not isinstance(per_second, (int, float)):
        raise ValueError(f"per_second must be a number of requests, not {per_second!r}")
    if isinstance(burst, bool) or not isinstance(burst, int):
        raise ValueError(f"burst must be an int, not {burst!r}")
    # The core's burst is a u32: below 0 is as refused as 0, above its
    # largest value as good as it.
    return BuiltinMiddleware.rate_limit(float(per_second), min(max(burst, 0), 2**32 - 1))


def _params_of(ctx: object) -> Mapping[str, Any]:
    """The params ``call_next(ctx)`` goes on with.

    >>> _params_of({"name": "x"})
    Traceback (most recent call last):
    TypeError: call_next takes the link's MiddlewareContext, not dict
    """
    if not isinstance(ctx, MiddlewareContext):
        raise TypeError(f"call_next takes the link's MiddlewareContext, not {type(ctx).__name__}")
    if not isinstance(ctx.params, Mapping):
        raise TypeError(f"ctx.params must be a dict, not {type(ctx.params).__name__}")
    return ctx.params


def _link(fn: Callable[..., Any], is_async: bool) -> Callable[[dict[str, Any], _native.MiddlewareCall], Any]:
    """The native link calling ``fn(ctx, call_next)``: the native convention
    is ``link(params, call)``, where ``call`` (a ``MiddlewareCall``) runs
    the rest of the chain once.

    >>> def passthrough(ctx: MiddlewareContext, call_next: CallNext) -> dict[str, Any]:
    ...     return call_next(ctx)
    >>> callable(_link(passthrough, is_async=False))
    True
    """
    if is_async:

        async def run_async(params: dict[str, Any], call: _native.MiddlewareCall) -> Any:
            async def call_next(ctx: MiddlewareContext) -> dict[str, Any]:
                result: dict[str, Any] = await call.next(_params_of(ctx), asyncio.get_running_loop())
                return result

            return await fn(MiddlewareContext(call, params), call_next)

        return run_async

    def run(params: dict[str, Any], call: _native.MiddlewareCall) -> Any:
        def call_next(ctx: MiddlewareContext) -> dict[str, Any]:
            result: dict[str, Any] = call.next(_params_of(ctx))
            return result

        return fn(MiddlewareContext(call, params), call_next)

    return run


class ClientMiddlewareContext:
    """One call a client sends, on its way through the client's middleware
    chain (:meth:`ferromcp.Client.add_middleware`): its ``method``, its
    ``params`` (what will be sent, without ``_meta``), the extra ``_meta``
    entries (``meta``) and its ``timeout``; a link may change any of them
    before ``call_next(ctx)``.

    >>> import ferromcp
    >>> server = ferromcp.Server("demo")
    >>> _ = server.tool(name="hello")(lambda: "hi")
    >>> with ferromcp.SyncClient.in_memory(server) as client:
    ...     @client.middleware
    ...     def show(ctx, call_next):
    ...         print(ctx.method, ctx.name, sorted(ctx.params), ctx.timeout)
    ...         return call_next(ctx)
    ...     client.call_tool("hello").text
    tools/call hello ['arguments', 'name'] None
    'hi'
    """

    __slots__ = ("_call", "meta", "params", "timeout")

    params: dict[str, Any]
    """The call's params as they will be sent (a tool call's ``name`` and
    ``arguments``, a read's ``uri``...), without ``_meta``. Changes (or a
    new dict) go on to the rest of the chain with ``call_next(ctx)``."""

    meta: dict[str, Any]
    """Extra ``_meta`` entries the call carries (the client adds its own);
    a link may add or remove some."""

    timeout: float | None
    """The call's timeout in seconds, or ``None`` for the client's default;
    a link may set it (positive) for this call."""

    def __init__(self, native: _native.ClientCall, params: dict[str, Any]) -> None:
        self._call = native
        self.params = params
        self.meta = native.meta
        self.timeout = native.timeout

    @property
    def method(self) -> str:
        """The call's method, e.g. ``"tools/call"`` or ``"resources/read"``.

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> _ = server.tool(name="hello")(lambda: "hi")
        >>> with ferromcp.SyncClient.in_memory(server) as client:
        ...     client.add_middleware(lambda ctx, call_next: print(ctx.method) or call_next(ctx))
        ...     [tool.name for tool in client.list_tools()]
        tools/list
        ['hello']
        """
        return self._call.method

    @property
    def name(self) -> str | None:
        """The tool or prompt called (the ``name`` param), or ``None``
        (``resources/read`` names its resource in ``params["uri"]``).

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> _ = server.prompt(name="greet")(lambda: "hello")
        >>> with ferromcp.SyncClient.in_memory(server) as client:
        ...     client.add_middleware(lambda ctx, call_next: print(ctx.name) or call_next(ctx))
        ...     client.get_prompt("greet").messages[0].text
        greet
        'hello'
        """
        name = self.params.get("name") if isinstance(self.params, Mapping) else None
        return name if isinstance(name, str) else None

    def __repr__(self) -> str:
        return f"<ferromcp.ClientMiddlewareContext {self.method}>"


ClientCallNext: TypeAlias = Callable[[ClientMiddlewareContext], dict[str, Any]]
"""A plain client link's ``call_next``: sends the call through the rest of
the chain (blocking) and returns the raw result dict, or raises the call's
error (:class:`ferromcp.McpError`, a timeout...)."""

AsyncClientCallNext: TypeAlias = Callable[[ClientMiddlewareContext], Awaitable[dict[str, Any]]]
"""An ``async`` client link's ``call_next``: awaited, as :data:`ClientCallNext`."""

SyncClientLink: TypeAlias = Callable[[ClientMiddlewareContext, ClientCallNext], dict[str, Any]]
"""``def link(ctx, call_next) -> dict`` (a client's)."""

AsyncClientLink: TypeAlias = Callable[[ClientMiddlewareContext, AsyncClientCallNext], Awaitable[dict[str, Any]]]
"""``async def link(ctx, call_next) -> dict`` (a client's)."""

ClientLink: TypeAlias = SyncClientLink | AsyncClientLink
"""What :meth:`ferromcp.Client.add_middleware` takes."""


def _client_next_args(ctx: object) -> tuple[Mapping[str, Any], Mapping[str, Any] | None, float | None]:
    """What ``call_next(ctx)`` goes on with: params, meta, timeout.

    >>> _client_next_args({"name": "x"})
    Traceback (most recent call last):
    TypeError: call_next takes the link's ClientMiddlewareContext, not dict
    """
    if not isinstance(ctx, ClientMiddlewareContext):
        raise TypeError(f"call_next takes the link's ClientMiddlewareContext, not {type(ctx).__name__}")
    if not isinstance(ctx.params, Mapping):
        raise TypeError(f"ctx.params must be a dict, not {type(ctx.params).__name__}")
    if ctx.meta is not None and not isinstance(ctx.meta, Mapping):
        raise TypeError(f"ctx.meta must be a dict, not {type(ctx.meta).__name__}")
    timeout = ctx.timeout
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))):
        raise TypeError(f"ctx.timeout must be a number of seconds or None, not {type(timeout).__name__}")
    return ctx.params, ctx.meta, None if timeout is None else float(timeout)


def _client_link(fn: Callable[..., Any], is_async: bool) -> Callable[[dict[str, Any], _native.ClientCall], Any]:
    """The native client link calling ``fn(ctx, call_next)``: the native
    convention is ``link(params, call)``, where ``call`` (a ``ClientCall``)
    runs the rest of the chain once.

    >>> callable(_client_link(lambda ctx, call_next: call_next(ctx), is_async=False))
    True
    """
    if is_async:

        async def run_async(params: dict[str, Any], call: _native.ClientCall) -> Any:
            async def call_next(ctx: ClientMiddlewareContext) -> dict[str, Any]:
                result: dict[str, Any] = await call.next(*_client_next_args(ctx), asyncio.get_running_loop())
                return result

            return await fn(ClientMiddlewareContext(call, params), call_next)

        return run_async

    def run(params: dict[str, Any], call: _native.ClientCall) -> Any:
        def call_next(ctx: ClientMiddlewareContext) -> dict[str, Any]:
            result: dict[str, Any] = call.next(*_client_next_args(ctx))
            return result

        return fn(ClientMiddlewareContext(call, params), call_next)

    return run


class MiddlewareNotification:
    """A notification on its way through a middleware chain: one the
    server received (``notifications/initialized``,
    ``notifications/cancelled``, ``notifications/roots/list_changed``...)
    or one the client received (``notifications/progress``,
    ``notifications/message``, list changes...). A link
    (:meth:`ferromcp.Server.notification_middleware`,
    :meth:`ferromcp.Client.notification_middleware`) reads its ``method``,
    may change its ``params`` (the changes go on to the links after it and
    to the server or the client's callbacks), and returns ``False`` to stop
    it there.

    >>> note = MiddlewareNotification("notifications/progress", {"progress": 1})
    >>> note.params["message"] = "halfway"
    >>> note
    <ferromcp.MiddlewareNotification notifications/progress>
    >>> note.method, note.params
    ('notifications/progress', {'progress': 1, 'message': 'halfway'})
    """

    __slots__ = ("_method", "params")

    params: dict[str, Any]
    """The notification's params (``{}`` without any); changes, or a new
    dict, go on."""

    def __init__(self, method: str, params: dict[str, Any]) -> None:
        self._method = method
        self.params = params

    @property
    def method(self) -> str:
        """The notification's method, e.g. ``"notifications/cancelled"``.

        >>> MiddlewareNotification("notifications/initialized", {}).method
        'notifications/initialized'
        """
        return self._method

    def __repr__(self) -> str:
        return f"<ferromcp.MiddlewareNotification {self._method}>"


NotificationLink: TypeAlias = Callable[[MiddlewareNotification], bool | None]
"""``def link(notification) -> bool | None``: ``False`` stops the
notification, ``None`` or ``True`` passes it on."""


def _notification_link(fn: NotificationLink) -> Callable[[str, dict[str, Any]], dict[str, Any] | None]:
    """The native notification link calling ``fn(notification)``: the
    native convention is ``link(method, params)``, returning the params the
    notification goes on with, or ``None`` to stop it.

    >>> stop = _notification_link(lambda note: note.method != "notifications/cancelled")
    >>> stop("notifications/cancelled", {"requestId": 1}) is None
    True
    >>> _notification_link(lambda note: note.params.update(seen=True))("notifications/initialized", {})
    {'seen': True}
    """

    def run(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        note = MiddlewareNotification(method, params)
        passed = fn(note)
        if passed is not None and not passed:
            return None
        return note.params

    return run
