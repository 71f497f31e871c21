"""What a handler knows about the request it serves, and what it may ask.

A handler asks for it by annotating a parameter with :class:`Context`::

    @server.tool
    async def greet(ctx: ferromcp.Context) -> str:
        answer = await ctx.elicit("What is your name?", {"name": str})
        return f"Hello, {answer.content['name']}!" if answer.accepted else "Hello!"

In an ``async def`` handler ``elicit``, ``sample`` and ``list_roots`` are
awaited; in a plain ``def`` handler the same calls block (the handler runs
on a worker thread). The same code serves both protocol revisions: under
2026-07-28 the core ends the round with ``input_required`` and runs the
handler again once the client answers (so code before an ask may run more
than once); in a 2025-11-25 session it sends a live request and waits.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from . import _native
from ._schema import elicitation_schema, from_json
from .auth import AuthInfo

__all__ = ["Caller", "Context", "ElicitResult", "InputRequired", "Root"]

T = TypeVar("T")


class InputRequired(BaseException):
    """Raised out of an ask when a 2026-07-28 request does not carry the answer yet.

    The core has recorded the question; the server answers the request with
    ``input_required`` and runs the handler again when the client retries
    with the answer. A ``BaseException`` (like ``asyncio.CancelledError``)
    so that ``except Exception`` in a handler does not swallow it; let it
    propagate.

    >>> issubclass(InputRequired, Exception)
    False
    """


@dataclass(frozen=True)
class ElicitResult(Generic[T]):
    """The user's answer to :meth:`Context.elicit`.

    >>> r = ElicitResult("accept", {"name": "Ada"})
    >>> r.accepted, r.content
    (True, {'name': 'Ada'})
    """

    action: str
    """``"accept"``, ``"decline"`` or ``"cancel"``."""
    content: T | None = None
    """The form's values when accepted: a dict, or an instance of the type
    the schema was given as (dataclass, TypedDict, pydantic model)."""

    @property
    def accepted(self) -> bool:
        """Whether the user accepted (and ``content`` holds the values).

        >>> ElicitResult("accept", {"name": "Ada"}).accepted, ElicitResult("decline").accepted
        (True, False)
        """
        return self.action == "accept"


@dataclass(frozen=True)
class Root:
    """One of the client's roots (:meth:`Context.list_roots`).

    >>> Root("file:///work", "work").uri
    'file:///work'
    """

    uri: str
    name: str | None = None


def _settle_future(future: asyncio.Future[Any], value: Any, exception: BaseException | None) -> None:
    """Resolves a live ask's future on its loop (called by the native module)."""
    if future.done():
        return
    if exception is not None:
        future.set_exception(exception)
    else:
        future.set_result(value)


class Context:
    """The request a handler is serving.

    Annotate a handler parameter with it; any handler kind (tool, resource,
    prompt, completion) may take one::

        @server.tool
        def slow(n: int, ctx: ferromcp.Context) -> str:
            for i in range(n):
                if ctx.cancelled:
                    return "stopped"
                ctx.progress(i, total=n)
            return "done"

    >>> import ferromcp
    >>> server = ferromcp.Server("demo")
    >>> @server.tool
    ... def slow(n: int, ctx: ferromcp.Context) -> str:
    ...     for i in range(n):
    ...         if ctx.cancelled:
    ...             return "stopped"
    ...         ctx.progress(i, total=n)
    ...     return f"done ({ctx.method})"
    >>> _example_call(server, "slow", {"n": 3})
    'done (tools/call)'
    """

    __slots__ = ("_asynchronous", "_native")

    def __init__(self, native: _native.Context, *, asynchronous: bool) -> None:
        self._native = native
        self._asynchronous = asynchronous

    # -- request info -----------------------------------------------------

    @property
    def request_id(self) -> int | str:
        """The JSON-RPC id of the request.

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> @server.tool
        ... def which(ctx: ferromcp.Context) -> str:
        ...     return type(ctx.request_id).__name__
        >>> _example_call(server, "which") in ("int", "str")
        True
        """
        return self._native.request_id

    @property
    def auth(self) -> AuthInfo | None:
        """The verified access token's claims on a server served with
        ``auth=ferromcp.Protection(...)``; ``None`` otherwise (stdio, or
        HTTP without protection). The token was meant for this server, not
        expired, and had the scopes the handler's registration requires.

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> @server.tool
        ... def whoami(ctx: ferromcp.Context) -> str:
        ...     return ctx.auth.subject or "?" if ctx.auth else "anonymous"
        >>> _example_call(server, "whoami")
        'anonymous'
        """
        native = self._native.auth
        return None if native is None else AuthInfo._from_native(native)

    @property
    def method(self) -> str:
        """The method being served, e.g. ``"tools/call"``.

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> @server.tool
        ... def which(ctx: ferromcp.Context) -> str:
        ...     return ctx.method
        >>> _example_call(server, "which")
        'tools/call'
        """
        return self._native.method

    @property
    def protocol_version(self) -> str:
        """The protocol revision the client speaks: ``"2026-07-28"`` or, in a
        legacy session, ``"2025-11-25"``.

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> @server.tool
        ... def which(ctx: ferromcp.Context) -> str:
        ...     return ctx.protocol_version
        >>> _example_call(server, "which")
        '2026-07-28'
        """
        return self._native.protocol_version

    @property
    def client_info(self) -> dict[str, Any] | None:
        """The client's ``{"name", "version", ...}``, when it sent one.

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> @server.tool
        ... def who(ctx: ferromcp.Context) -> str:
        ...     return (ctx.client_info or {}).get("name", "anonymous")
        >>> _example_call(server, "who", name="my-agent")
        'my-agent'
        """
        info = self._native.client_info
        return info if isinstance(info, dict) else None

    @property
    def client_capabilities(self) -> dict[str, Any]:
        """The capabilities the client declared (``{"elicitation": {}, ...}``).

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> @server.tool
        ... def can_ask(ctx: ferromcp.Context) -> bool:
        ...     return "elicitation" in ctx.client_capabilities
        >>> _example_call(server, "can_ask", on_elicitation=lambda params: {"action": "decline"})
        'true'
        """
        return self._native.client_capabilities

    @property
    def headers(self) -> dict[str, str]:
        """The HTTP request's headers (lower-case names) when served over HTTP;
        empty over stdio.

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> @server.tool
        ... def agent(ctx: ferromcp.Context) -> str:
        ...     return ctx.headers.get("x-agent", "?")
        >>> _example_call(server, "agent", headers={"X-Agent": "007"})
        '007'
        """
        return self._native.headers

    @property
    def log_level(self) -> str | None:
        """The level the client asked logs at, or ``None`` (then :meth:`log`
        sends nothing).

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> @server.tool
        ... def level(ctx: ferromcp.Context) -> str:
        ...     return str(ctx.log_level)
        >>> _example_call(server, "level")  # the client asked for no logs
        'None'
        """
        return self._native.log_level

    @property
    def cancelled(self) -> bool:
        """True once the client cancelled the request (or it ended); long
        handlers should check it and stop early.

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> @server.tool
        ... def busy(ctx: ferromcp.Context) -> str:
        ...     return "stopped" if ctx.cancelled else "working"
        >>> _example_call(server, "busy")
        'working'
        """
        return self._native.cancelled

    # -- notifications ----------------------------------------------------

    def close_sse_stream(self) -> bool:
        """On the 2025-11-25 HTTP wire, closes the request's SSE connection
        without ending its stream: the client reconnects (``Last-Event-ID``)
        and receives the rest, the result included. Returns whether there
        was such a stream (``False`` over stdio and under 2026-07-28).

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> @server.tool
        ... def close(ctx: ferromcp.Context) -> bool:
        ...     return ctx.close_sse_stream()
        >>> _example_call(server, "close")
        'false'
        """
        return self._native.close_sse_stream()

    def progress(self, progress: float, total: float | None = None, message: str | None = None) -> bool:
        """Reports progress when the client asked for it (a ``progressToken``);
        returns whether a notification was sent.

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> @server.tool
        ... def steps(ctx: ferromcp.Context) -> bool:
        ...     return ctx.progress(1, total=2, message="half way")
        >>> _example_call(server, "steps")  # no progressToken: nothing sent
        'false'
        """
        return self._native.progress(progress, total, message)

    def log(self, level: str, data: Any, logger: str | None = None) -> bool:
        """Sends a log message (``"debug"``, ``"info"``, ... ``"emergency"``)
        when the request's log level admits it; returns whether one was sent.

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> @server.tool
        ... def chatty(ctx: ferromcp.Context) -> bool:
        ...     return ctx.log("info", {"step": 1}, logger="demo")
        >>> _example_call(server, "chatty")  # the client asked for no logs
        'false'
        """
        return self._native.log(level, data, logger)

    def debug(self, data: Any, logger: str | None = None) -> bool:
        """``log("debug", data, logger)``.

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> @server.tool
        ... def chatty(ctx: ferromcp.Context) -> bool:
        ...     return ctx.debug("a message")
        >>> _example_call(server, "chatty")
        'false'
        """
        return self._native.log("debug", data, logger)

    def info(self, data: Any, logger: str | None = None) -> bool:
        """``log("info", data, logger)``.

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> @server.tool
        ... def chatty(ctx: ferromcp.Context) -> bool:
        ...     return ctx.info("a message")
        >>> _example_call(server, "chatty")
        'false'
        """
        return self._native.log("info", data, logger)

    def warning(self, data: Any, logger: str | None = None) -> bool:
        """``log("warning", data, logger)``.

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> @server.tool
        ... def chatty(ctx: ferromcp.Context) -> bool:
        ...     return ctx.warning("a message")
        >>> _example_call(server, "chatty")
        'false'
        """
        return self._native.log("warning", data, logger)

    def error(self, data: Any, logger: str | None = None) -> bool:
        """``log("error", data, logger)``.

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> @server.tool
        ... def chatty(ctx: ferromcp.Context) -> bool:
        ...     return ctx.error("a message")
        >>> _example_call(server, "chatty")
        'false'
        """
        return self._native.log("error", data, logger)

    # -- asking the client ------------------------------------------------

    def elicit(
        self,
        message: str,
        schema: Any = None,
        *,
        url: str | None = None,
        elicitation_id: str | None = None,
        key: str | None = None,
    ) -> Any:
        """Asks the user (``elicitation/create``); returns an :class:`ElicitResult`.

        Form mode takes ``schema``: a JSON Schema dict, a ``{"field": type}``
        dict, a TypedDict, a dataclass or a pydantic model (then an accepted
        answer's ``content`` is an instance of it). URL mode takes ``url``
        instead. ``key`` names the question in ``inputRequests`` (default:
        its position among this handler's asks). Awaitable in ``async def``
        handlers, blocking in plain ones::

            answer = await ctx.elicit("Your name?", {"name": str})
            if answer.accepted:
                print(answer.content["name"])

        Raises:
            ferromcp.MissingRequiredClientCapabilityError: the client cannot elicit.

        A plain ``def`` tool, answered by the client's ``on_elicitation``:

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> @server.tool
        ... def greet(ctx: ferromcp.Context) -> str:
        ...     answer = ctx.elicit("Your name?", {"name": str})
        ...     return f"Hello, {answer.content['name']}!" if answer.accepted else "Hello!"
        >>> def ask_user(params: dict) -> dict:  # the client's side
        ...     return {"action": "accept", "content": {"name": "Ada"}}
        >>> _example_call(server, "greet", on_elicitation=ask_user)
        'Hello, Ada!'
        """
        if url is not None:
            # The same id on every replay of the handler (the request id
            # changes when a 2026-07-28 client retries).
            ident = elicitation_id or str(uuid.uuid5(uuid.NAMESPACE_URL, f"{url}#{key or ''}#{message}"))
            params: dict[str, Any] = {"mode": "url", "message": message, "url": url, "elicitationId": ident}
            target = None
        else:
            requested, target = elicitation_schema(schema)
            params = {"mode": "form", "message": message, "requestedSchema": requested}

        def convert(answer: Any) -> ElicitResult[Any]:
            action = answer.get("action", "cancel") if isinstance(answer, Mapping) else "cancel"
            content = answer.get("content") if isinstance(answer, Mapping) else None
            if content is not None and target is not None and action == "accept":
                content = from_json(target, content)
            return ElicitResult(action, content)

        return self._ask("elicitation", params, key, convert)

    def sample(
        self,
        messages: str | Sequence[Mapping[str, Any]],
        *,
        max_tokens: int = 1000,
        system_prompt: str | None = None,
        temperature: float | None = None,
        model_preferences: Mapping[str, Any] | None = None,
        key: str | None = None,
        **params: Any,
    ) -> Any:
        """Asks the client's model (``sampling/createMessage``); returns the
        ``CreateMessageResult`` dict (``role``, ``content``, ``model``...).

        ``messages`` is a string (one user message) or ``SamplingMessage``
        dicts; further keyword arguments go into the request's params as is::

            reply = await ctx.sample("What is the capital of France?", max_tokens=100)
            print(reply["content"]["text"])

        >>> def model(params: dict) -> dict:  # the client's side: a stand-in for a model
        ...     return {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "stub"}
        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> @server.tool
        ... def capital(ctx: ferromcp.Context) -> str:
        ...     return ctx.sample("What is the capital of France?")["content"]["text"]
        >>> _example_call(server, "capital", on_sampling=model)
        'Paris'
        """
        if isinstance(messages, str):
            messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        request: dict[str, Any] = {"messages": list(messages), "maxTokens": max_tokens, **params}
        if system_prompt is not None:
            request["systemPrompt"] = system_prompt
        if temperature is not None:
            request["temperature"] = temperature
        if model_preferences is not None:
            request["modelPreferences"] = dict(model_preferences)
        return self._ask("sampling", request, key, lambda answer: answer)

    def list_roots(self, *, key: str | None = None) -> Any:
        """Asks for the client's roots (``roots/list``); returns a list of :class:`Root`::

            for root in await ctx.list_roots():
                print(root.uri)

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> @server.tool
        ... def where(ctx: ferromcp.Context) -> str:  # plain def: the ask blocks
        ...     return ", ".join(root.uri for root in ctx.list_roots())
        >>> _example_call(server, "where", on_roots=lambda params: {"roots": [{"uri": "file:///src"}]})
        'file:///src'
        """

        def convert(answer: Any) -> list[Root]:
            roots = answer.get("roots", []) if isinstance(answer, Mapping) else []
            return [Root(r["uri"], r.get("name")) for r in roots if isinstance(r, Mapping)]

        return self._ask("roots", {}, key, convert)

    # -- tasks --------------------------------------------------------------

    def start_task(self) -> Any:
        """Turns this call into a task; returns ``True`` once the client has
        the task handle (awaitable in ``async def`` handlers, blocking in
        plain ones).

        For a tool registered with ``task_start="handler"``: until the
        handler calls this, the call is a plain request, so it can first
        ask the client (multi round-trip) and then go on as a task, asking
        further questions through it (``tasks/update``). Returns ``False``,
        and the call stays plain, when the tool was not registered so or the
        client did not declare the tasks extension::

            @server.tool(task="optional", task_start="handler")
            async def deploy(env: str, ctx: ferromcp.Context) -> str:
                answer = await ctx.elicit(f"Deploy to {env}?", {"ok": bool})
                await ctx.start_task()  # the client polls from here on
                await rollout(env)
                return "deployed"

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> @server.tool
        ... def plain(ctx: ferromcp.Context) -> str:
        ...     return f"task: {ctx.start_task()}"
        >>> _example_call(server, "plain")
        'task: False'
        """
        if not self._asynchronous:
            return self._native.start_task()
        return self._native.start_task_async(asyncio.get_running_loop())

    def _ask(self, kind: str, params: dict[str, Any], key: str | None, convert: Callable[[Any], T]) -> Any:
        if not self._asynchronous:
            return convert(self._native.ask(kind, params, key))
        # Started now, not when awaited: several asks gathered together are
        # asked in call order and all go into one input_required round.
        future = self._native.ask_async(kind, params, asyncio.get_running_loop(), key)
        return _converted(future, convert)

    def __repr__(self) -> str:
        return f"<ferromcp.Context {self.method} id={self.request_id!r}>"


class Caller:
    """Who a request is from: what a visibility rule decides on (see
    :meth:`ferromcp.Server.visibility`), and what a middleware link knows
    of the caller (its :class:`ferromcp.MiddlewareContext` is a ``Caller``).

    Identify callers by :attr:`auth` on a protected server (the verified
    token), or by :attr:`client_info`, which the client chose itself.

    >>> import ferromcp
    >>> server = ferromcp.Server("demo")
    >>> _ = server.tool(name="ping")(lambda: "pong")
    >>> @server.visibility
    ... def for_ada_only(caller: ferromcp.Caller, item: ferromcp.VisibleItem) -> bool:
    ...     return (caller.client_info or {}).get("name") == "ada"
    >>> for name in ("ada", "bob"):
    ...     with ferromcp.SyncClient.in_memory(server, name=name) as client:
    ...         print(name, [tool.name for tool in client.list_tools()])
    ada ['ping']
    bob []
    """

    __slots__ = ("_facts",)

    def __init__(self, facts: Mapping[str, Any]) -> None:
        # The core's description of who asks (``protocolVersion``,
        # ``clientInfo``, ``clientCapabilities``, ``auth``, ``headers``).
        self._facts = facts

    @property
    def auth(self) -> AuthInfo | None:
        """The verified access token's claims on a server served with
        ``auth=ferromcp.Protection(...)`` (see :attr:`Context.auth`);
        ``None`` otherwise.

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> _ = server.tool(name="admin")(lambda: "done")
        >>> _ = server.visibility(lambda caller, item: caller.auth is not None and caller.auth.has_scope("admin"))
        >>> with ferromcp.SyncClient.in_memory(server) as client:  # no token
        ...     [tool.name for tool in client.list_tools()]
        []
        """
        auth = self._facts["auth"]
        return None if auth is None else AuthInfo._from_native(auth)

    @property
    def client_info(self) -> dict[str, Any] | None:
        """The client's ``{"name", "version", ...}``, when it sent one.

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> _ = server.tool(name="ping")(lambda: "pong")
        >>> _ = server.visibility(lambda caller, item: (caller.client_info or {}).get("name") != "blocked")
        >>> with ferromcp.SyncClient.in_memory(server, name="blocked") as client:
        ...     [tool.name for tool in client.list_tools()]
        []
        """
        info = self._facts["clientInfo"]
        return info if isinstance(info, dict) else None

    @property
    def protocol_version(self) -> str:
        """The protocol revision the client speaks: ``"2026-07-28"`` or, in a
        legacy session, ``"2025-11-25"``.

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> _ = server.tool(name="new_only")(lambda: "hi")
        >>> _ = server.visibility(lambda caller, item: caller.protocol_version >= "2026-07-28")
        >>> with ferromcp.SyncClient.in_memory(server) as client:
        ...     [tool.name for tool in client.list_tools()]
        ['new_only']
        """
        return str(self._facts["protocolVersion"])

    @property
    def client_capabilities(self) -> dict[str, Any]:
        """The capabilities the client declared (``{"elicitation": {}, ...}``).

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> _ = server.tool(name="confirm")(lambda: "yes")
        >>> _ = server.visibility(lambda caller, item: "elicitation" in caller.client_capabilities)
        >>> with ferromcp.SyncClient.in_memory(server) as client:  # no on_elicitation
        ...     [tool.name for tool in client.list_tools()]
        []
        """
        capabilities: dict[str, Any] = self._facts["clientCapabilities"]
        return capabilities

    @property
    def headers(self) -> dict[str, str]:
        """The HTTP request's headers (lower-case names) when served over
        HTTP; empty over stdio and in memory.

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> _ = server.tool(name="beta")(lambda: "hi")
        >>> _ = server.visibility(lambda caller, item: caller.headers.get("x-beta") == "1")
        >>> with ferromcp.SyncClient.in_memory(server) as client:
        ...     [tool.name for tool in client.list_tools()]
        []
        """
        headers: dict[str, str] = self._facts["headers"]
        return headers

    def __repr__(self) -> str:
        name = (self.client_info or {}).get("name")
        return f"<ferromcp.Caller client={name!r} protocol_version={self.protocol_version!r}>"


async def _converted(future: Awaitable[Any], convert: Callable[[Any], T]) -> T:
    return convert(await future)


def _example_call(server: Any, tool: str, arguments: Mapping[str, Any] | None = None, **client_options: Any) -> str:
    """Serves ``server`` over HTTP on a free port, calls ``tool`` with a
    :class:`ferromcp.SyncClient` made with ``client_options``, and returns
    the result's text: the docstring examples of this module run their
    handlers in a real request this way.

    >>> import ferromcp
    >>> server = ferromcp.Server("demo")
    >>> _ = server.tool(name="hello")(lambda: "hi")
    >>> _example_call(server, "hello")
    'hi'
    """
    from .client import SyncClient

    serving = server.start("http", port=0)
    try:
        with SyncClient.http(f"http://127.0.0.1:{serving.port}/mcp", **client_options) as client:
            return client.call_tool(tool, dict(arguments or {})).text
    finally:
        serving.stop()
        serving.wait(10)
