"""The MCP server: tools from decorated functions, served over stdio or HTTP.

The protocol itself (JSON-RPC, validation, result shaping, transports) runs
in the Rust core; this module only turns Python functions into tool
definitions and handlers.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypedDict, TypeVar, overload

from . import _native, telemetry
from ._callables import is_coroutine_function
from ._json import json_default
from ._native import Serving
from ._primitives import CompletionRouter, CompletionSource, prompt_handler, resource_handler, tool_handler
from ._schema import JsonSchema, tool_signature
from .asgi import McpAsgiApp
from .auth import Protection
from .client import Client, SyncClient
from .context import Context
from .errors import ConnectionClosedError
from .middleware import BuiltinMiddleware, Middleware, NotificationLink, _link, _notification_link
from .visibility import ItemKind, ItemRule, VisibilityRule, _check, _Rule

if TYPE_CHECKING:
    # typing.Unpack is Python 3.11+; annotations are never evaluated at run
    # time (``from __future__ import annotations``), so only type checkers,
    # which ship typing_extensions' stubs, import it.
    from typing_extensions import Unpack

__all__ = ["HttpLimits", "Mount", "Server", "TaskSettings", "Transport"]

Transport = Literal["stdio", "http"]
"""How a server is reached: ``"stdio"`` (newline-delimited JSON-RPC on
stdin/stdout) or ``"http"`` (Streamable HTTP at ``http://host:port/mcp``)."""


class ServerTls(TypedDict, total=False):
    """TLS on the server itself (``tls=`` of :meth:`Server.run`,
    :meth:`Server.serve` and :meth:`Server.start`), for deployments without
    a proxy that terminates it. The files are PEM, read when the server
    starts (a bad file raises ``ferromcp.TransportError`` then) and read
    again when they change, so a renewed certificate is served without a
    restart. Core reads the keys (``host::server_tls``), the same in every
    language.

    >>> tls: ServerTls = {"cert_file": "cert.pem", "key_file": "key.pem"}
    """

    cert_file: str
    """The certificate chain (required)."""
    key_file: str
    """The private key (required)."""
    client_ca_file: str
    """CAs of the client certificates accepted: mutual TLS."""
    client_auth_optional: bool
    """With ``client_ca_file``: serve clients without a certificate too."""


class HttpLimits(TypedDict, total=False):
    """Limits of the HTTP server against clients that hold it without using
    it (``limits=`` of :meth:`Server.run`, :meth:`Server.serve` and
    :meth:`Server.start`). Every key is optional; a missing one keeps the
    default. Core reads them (``transport::http::HttpLimits``), so they and
    their defaults are the same in every language; an unknown key or a bad
    value raises ``ValueError`` naming it. See docs/SECURITY.md.

    >>> limits: HttpLimits = {"max_connections": 256, "idle_timeout": 30.0}
    """

    max_connections: int
    """Connections served at once (default 1024, lowered to fit the
    descriptor limit). At the cap a new client is admitted by closing a
    connection doing nothing (never used first, then idle, oldest first);
    only when all are busy does it wait."""
    max_connections_per_address: int | None
    """Connections from one IP address (default ``None``: no limit). Over
    it the address's own oldest idle connection is closed, or the new one
    refused with 429. Behind a reverse proxy every client has the proxy's
    address."""
    header_read_timeout: float
    """Seconds for a request head to arrive after its first byte, and for a
    new connection to send its first byte (default 10)."""
    body_read_timeout: float
    """Seconds for a request body to arrive after its head (default 30)."""
    idle_timeout: float
    """Seconds a kept-alive connection may wait for its next request
    (default 60); a streaming response is never cut."""
    max_body_bytes: int
    """Largest request body (default 16 MiB)."""
    max_sessions: int
    """Legacy (2025-11-25) sessions at once (default 10,000)."""
    max_sessions_per_address: int
    """Legacy sessions of one client address (default 64). Behind a reverse
    proxy every client has the proxy's address: raise it there."""


class TaskSettings(TypedDict, total=False):
    """How a server keeps tasks (the tasks extension; ``tasks=`` of
    :class:`Server`). Every key is optional; a missing one keeps the
    default. Core reads them, so they and their defaults are the same in
    every language; an unknown key or a bad value raises ``ValueError``
    naming it.

    >>> settings: TaskSettings = {"ttl_ms": 60_000, "max_tasks_per_client": 100}
    >>> Server("demo", tasks=settings).name
    'demo'
    """

    ttl_ms: int | None
    """How long after its creation a task is kept at least (default one
    hour); ``None`` keeps finished tasks until the limits push them out. A
    running task is never dropped."""
    keep_finished_ms: int
    """How long a finished task stays readable at least (default 60 s)."""
    poll_interval_ms: int
    """The ``pollIntervalMs`` suggested to clients (default 500; at most half of ``ttl_ms``)."""
    max_tasks: int
    """Tasks kept at once (default 10,000); finished ones make room first,
    and past the limit creating a task fails with an error naming it."""
    max_tasks_per_client: int
    """Tasks kept at once for one client (default 1,000)."""
    store: str
    """Where tasks are kept: ``"memory"`` (this process) or a ``redis://``
    URL, where every replica finds them. Default: ``FERROMCP_TASK_STORE``,
    else memory."""


F = TypeVar("F", bound=Callable[..., Any])
M = TypeVar("M", bound=Middleware)
N = TypeVar("N", bound=NotificationLink)
V = TypeVar("V", bound=VisibilityRule)

CacheScope = Literal["public", "private"]
"""Who may cache a result: ``"public"`` (any cache) or ``"private"`` (only
within the same authorization context)."""

# Seconds a cancelled serve() waits for the transport to wind down: a little
# more than core's grace period (10 s) for requests in flight.
_STOP_GRACE = 12.0

# The keyword arguments of the registering methods and of run/serve/start,
# each set spelled once: a decorator and its add_* method, or the three ways
# to serve, take the same ones as ``**options: Unpack[...]``, which type
# checkers read as the keyword-only parameters listed here. ``**options``
# itself accepts any name at run time: _check_keywords refuses the others as
# Python does for a parameter list.


class _Options(TypedDict, total=False):
    """What every primitive takes (see :meth:`Server.add_tool`)."""

    name: str | None
    title: str | None
    description: str | None
    icons: Sequence[Mapping[str, Any]] | None
    meta: Mapping[str, Any] | None
    scopes: Sequence[str] | None
    visible: ItemRule | None


class _ToolOptions(_Options, total=False):
    """:meth:`Server.tool` and :meth:`Server.add_tool`."""

    input_schema: JsonSchema | None
    output_schema: JsonSchema | None
    annotations: Mapping[str, Any] | None
    task: bool | Literal["optional", "required"] | None
    task_start: Literal["call", "handler"] | None


class _ResourceOptions(_Options, total=False):
    """:meth:`Server.resource` and :meth:`Server.add_resource`."""

    mime_type: str | None
    size: int | None
    annotations: Mapping[str, Any] | None
    completions: Mapping[str, CompletionSource] | None
    ttl_ms: int | None
    cache_scope: CacheScope | None


class _PromptOptions(_Options, total=False):
    """:meth:`Server.prompt` and :meth:`Server.add_prompt`."""

    completions: Mapping[str, CompletionSource] | None


class _HttpOptions(TypedDict, total=False):
    """The HTTP transport's options of :meth:`Server.run`, :meth:`Server.serve`
    and :meth:`Server.start` (stdio ignores them; see :meth:`Server.run`)."""

    host: str
    """Address or host name to listen on (default ``"127.0.0.1"``)."""
    port: int
    """TCP port (default 8000; 0 picks a free one)."""
    path: str
    """The endpoint's path (default ``"/mcp"``)."""
    allowed_hosts: Sequence[str] | None
    allowed_origins: Sequence[str] | None
    auth: Protection | None
    limits: HttpLimits | None
    health: bool
    """Serve ``GET /healthz`` (200 while serving) and ``GET /readyz`` (200,
    then 503 once the server starts stopping), for a load balancer or
    Kubernetes probes (default ``False``)."""
    drain_delay: float
    """Seconds a stopping server goes on serving, unready, before it stops
    accepting (default 0): time for a load balancer to see ``/readyz``
    fail. See ``docs/DEPLOYING.md``."""
    tls: ServerTls | None
    """Serve ``https://`` (see :class:`ServerTls`)."""


class Server:
    """An MCP server.

    Tools are plain or ``async`` functions; their type hints become the
    input schema and their docstring the description::

        import ferromcp

        server = ferromcp.Server("demo", version="1.0.0")

        @server.tool
        def add(a: int, b: int) -> int:
            \"\"\"Adds two integers.\"\"\"
            return a + b

        server.run()  # stdio; server.run("http", port=8000) for HTTP

    Args:
        name: The server's name, as clients see it.
        version: The server's version.
        instructions: Guidance for the model, returned by ``server/discover``.
        caching: The caching hints (``ttlMs``, ``cacheScope``) of the
            cacheable results, by kind: ``"tools"``, ``"prompts"``,
            ``"resources"``, ``"resource_templates"`` (the lists),
            ``"resource_read"`` (every read without its own hint, see
            :meth:`resource`) and ``"discover"``; each a
            ``(ttl_ms, "public" | "private")`` pair. Unnamed kinds are
            immediately stale and public (``(0, "public")``), since
            registrations can change at run time.
        tasks: How tasks are kept (see :class:`TaskSettings`).
        seal_keys: Keys protecting cursors and ``requestState``: base64
            secrets of at least 16 bytes, the first sealing, every one
            opening (to rotate, put the new key first). Replicas with the
            same keys accept each other's state. Default: the
            comma-separated ``FERROMCP_SEAL_KEYS``, else a random key.
        event_bus: Where replicas tell each other of changes (list changes,
            resource updates, tasks): a ``redis://host:port`` URL. Default:
            ``FERROMCP_EVENT_BUS``, else none (one process). See
            ``docs/DEPLOYING.md``.
        replica: This replica's name (letters, digits, ``-``, ``_``):
            2025-11-25 session ids start with it and a dot, for a load
            balancer to route on. Default: ``FERROMCP_REPLICA``.

    >>> Server("demo", caching={"tools": (60_000, "public")}).name
    'demo'
    """

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        instructions: str | None = None,
        caching: Mapping[str, tuple[int, CacheScope]] | None = None,
        tasks: TaskSettings | None = None,
        seal_keys: Sequence[str] | None = None,
        event_bus: str | None = None,
        replica: str | None = None,
    ) -> None:
        # Before the core server, which would start the core's own exporter
        # if the OTEL_* variables ask for it.
        telemetry._join_sdk()
        self._native = _native.Server(
            name,
            version,
            instructions=instructions,
            json_default=json_default,
            caching=dict(caching) if caching is not None else None,
            tasks=dict(tasks) if tasks is not None else None,
            seal_keys=list(seal_keys) if seal_keys is not None else None,
            event_bus=event_bus,
            replica=replica,
        )
        # (kind, name) of every async handler: run() needs an asyncio loop for them.
        self._async_handlers: set[tuple[str, str]] = set()
        self._resources: dict[str, bool] = {}  # uri or template -> is a template
        self._prompts: list[str] = []
        self._completions = CompletionRouter()
        # What is mounted in this server (see mount), to know whether a
        # mounted server's async handlers need run() to start a loop.
        self._mounts: list[Mount] = []
        # The visibility rules (see visibility): the server-wide one, and
        # each registration's own, by (kind, key).
        self._visibility: VisibilityRule | None = None
        self._visible: dict[tuple[ItemKind, str], ItemRule] = {}
        self._links = 0  # Python middleware links added

    @classmethod
    def _from_native(cls, native: _native.Server) -> Server:
        """A server around a native one made elsewhere (:meth:`proxy`)."""
        telemetry._join_sdk()
        server = cls.__new__(cls)
        server._native = native
        server._async_handlers = set()
        server._resources = {}
        server._prompts = []
        server._completions = CompletionRouter()
        server._mounts = []
        server._visibility = None
        server._visible = {}
        server._links = 0
        return server

    @property
    def name(self) -> str:
        """The server's name.

        >>> Server("demo").name
        'demo'
        """
        return self._native.name

    @property
    def version(self) -> str:
        """The server's version.

        >>> Server("demo", version="2.1").version
        '2.1'
        """
        return self._native.version

    @overload
    def tool(self, fn: F, /) -> F: ...

    @overload
    def tool(self, fn: None = None, /, **options: Unpack[_ToolOptions]) -> Callable[[F], F]: ...

    def tool(self, fn: F | None = None, /, **options: Unpack[_ToolOptions]) -> F | Callable[[F], F]:
        """Registers a function as a tool; use bare or with options.

        The function is returned unchanged, so it stays callable directly::

            @server.tool
            def echo(text: str) -> str:
                \"\"\"Returns the text unchanged.\"\"\"
                return text

            @server.tool(name="sum", title="Sum", annotations={"readOnlyHint": True})
            async def add(a: int, b: int) -> int:
                return a + b

        See :meth:`add_tool` for the options.

        >>> from ferromcp.context import _example_call  # serves, calls, returns the text
        >>> server = Server("demo")
        >>> @server.tool(name="sum", annotations={"readOnlyHint": True})
        ... async def add(a: int, b: int) -> int:
        ...     return a + b
        >>> @server.tool
        ... def twice(text: str) -> str:
        ...     return text * 2
        >>> server.tool_names(), twice("ab")
        (['sum', 'twice'], 'abab')
        >>> _example_call(server, "twice", {"text": "ha"})
        'haha'
        """

        _check_keywords("Server.tool", options, _ToolOptions)
        decorate = _registering(lambda f: self.add_tool(f, **options))
        return decorate if fn is None else decorate(fn)

    def add_tool(self, fn: Callable[..., Any], **options: Unpack[_ToolOptions]) -> None:
        """Registers (or replaces) a tool.

        Derived from ``fn`` unless given:

        - ``name``: the function's name;
        - ``description``: the docstring's first paragraph;
        - ``input_schema``: the parameters' type hints (``str``, ``int``,
          ``float``, ``bool``, ``list[T]``, ``dict``, ``T | None``,
          ``Literal``, ``Enum``, TypedDict, dataclass, pydantic model,
          ``Annotated[T, "description"]``); parameters with a default are
          optional; Google-style ``Args:`` lines describe them. A parameter
          annotated :class:`ferromcp.Context` receives the request context
          instead;
        - ``output_schema``: the return annotation. A TypedDict, dataclass,
          pydantic model or ``dict`` describes the structured content;
          another JSON type such as ``int`` is wrapped as
          ``{"result": value}``; ``str``, ``None`` and optional types
          declare none.

        ``title`` (a display name), ``annotations`` (``ToolAnnotations``:
        ``readOnlyHint``, ``destructiveHint``...), ``icons`` (``Icon``
        dicts: ``src``, ``mimeType``, ``sizes``) and ``meta`` (``_meta``)
        are listed as given. ``scopes`` are the OAuth scopes a request's
        access token needs to call the tool when the server is served with
        ``auth=`` (:class:`ferromcp.Protection`); a token without them gets
        HTTP 403 ``insufficient_scope``. ``visible`` decides which callers
        see and may call the tool: ``visible(caller) -> bool``, a plain
        function of the :class:`ferromcp.Caller` (with a server-wide
        :meth:`visibility` rule, both must allow it; to the others the tool
        is unknown).

        ``task`` lets calls become tasks (the tasks extension, SEP-2663):
        ``True`` or ``"optional"`` answers a client that declared the
        extension with a task handle at once while the handler goes on (its
        questions then go through the task, answered with ``tasks/update``;
        its cancellation is ``tasks/cancel``), and other clients with the
        result; ``"required"`` refuses those with
        :class:`ferromcp.MissingRequiredClientCapabilityError`.
        ``task_start="handler"`` waits instead until the handler calls
        :meth:`ferromcp.Context.start_task`, so it can ask first::

            @server.tool(task=True)
            async def render(scene: str) -> str:
                await asyncio.sleep(60)
                return "done"

        A handler's exception becomes a tool result with ``isError: true``
        (``"ValueError: message"``); raise :class:`ferromcp.McpError` to
        answer with a JSON-RPC error instead.

        >>> server = Server("demo")
        >>> def shout(text: str) -> str:
        ...     '''Upper-cases the text.'''
        ...     return text.upper()
        >>> server.add_tool(shout, name="shout", annotations={"readOnlyHint": True})
        >>> server.tool_names()
        ['shout']

        Raises:
            TypeError: a parameter's type has no JSON Schema (pass ``input_schema``).
            ferromcp.InvalidDefinitionError: core refused the name or a schema.
        """
        _check_keywords("Server.add_tool", options, _ToolOptions)
        _check_visible(options)
        tool_name = options.get("name") or getattr(fn, "__name__", None)
        if not tool_name:
            raise TypeError(f"cannot name a tool after {fn!r}: pass name=")
        input_schema = options.get("input_schema")
        signature = tool_signature(fn, Context, derive_input=input_schema is None)
        is_async = is_coroutine_function(fn)
        definition: dict[str, Any] = {"name": tool_name, "inputSchema": _given(input_schema, signature.input_schema)}
        _put(definition, "description", _given(options.get("description"), signature.description))
        _put(definition, "outputSchema", _given(options.get("output_schema"), signature.output_schema))
        _put_common(definition, options)
        task = options.get("task")
        # A rule goes in before its item, so no caller ever sees it unguarded.
        self._guard("tool", tool_name, options.get("visible"))
        self._native.register(
            "tool",
            definition,
            tool_handler(fn, signature, is_async),
            is_async,
            task="optional" if task is True else (task or None),
            task_start=options.get("task_start"),
        )
        self._native.require_scopes("tool", tool_name, list(options.get("scopes") or ()))
        self._mark_async(("tool", tool_name), is_async)
        self._unguard("tool", tool_name, options.get("visible"))

    def remove_tool(self, name: str) -> bool:
        """Removes a tool; returns whether it existed.

        >>> Server("demo").remove_tool("missing")
        False
        """
        self._mark_async(("tool", name), False)
        self._set_visible("tool", name, None)
        return self._native.remove_tool(name)

    def tool_names(self) -> list[str]:
        """Names of the registered tools, in listing order.

        >>> Server("demo").tool_names()
        []
        """
        return self._native.tool_names()

    def resource(self, uri: str, /, **options: Unpack[_ResourceOptions]) -> Callable[[F], F]:
        """Registers a function as the resource at ``uri``, or as a resource
        template when ``uri`` has ``{variables}`` (RFC 6570)::

            @server.resource("config://app", mime_type="application/json")
            def config() -> str:
                return '{"debug": false}'

            @server.resource("users://{id}/profile")
            async def profile(id: int) -> dict[str, Any]:
                return {"uri": f"users://{id}/profile", "text": f"user {id}"}

        Template variables bind to the parameters of the same name,
        converted to their annotations (``int``, ``float``, ``bool``,
        ``Enum``, ...). The function returns ``str`` (text), ``bytes``
        (binary, sent base64-encoded), a contents item
        (``{"uri", "text"|"blob", "mimeType"?}``), a list of them, or
        ``{"contents": [...]}``. ``completions`` maps a template variable to
        a completion function or a list of values (see :meth:`completion`).
        See :meth:`add_resource` for the other options.

        >>> import ferromcp
        >>> server = Server("demo")
        >>> @server.resource("config://app", mime_type="application/json")
        ... def config() -> str:
        ...     return '{"debug": false}'
        >>> @server.resource("users://{id}/profile")
        ... def profile(id: int) -> str:
        ...     return f"user {id + 1}"
        >>> serving = server.start("http", port=0)
        >>> with ferromcp.SyncClient.http(f"http://127.0.0.1:{serving.port}/mcp") as client:
        ...     print(client.read_resource("config://app").text)
        ...     print(client.read_resource("users://41/profile").text)
        {"debug": false}
        user 42
        >>> serving.stop(); serving.wait(10)
        True
        """

        _check_keywords("Server.resource", options, _ResourceOptions)
        return _registering(lambda f: self.add_resource(f, uri, **options))

    def add_resource(self, fn: Callable[..., Any], uri: str, **options: Unpack[_ResourceOptions]) -> None:
        """Registers (or replaces) a resource or resource template.

        ``name`` defaults to the function's name and ``description`` to its
        docstring; ``annotations`` are the resource's ``Annotations``
        (``audience``, ``priority``, ``lastModified``); ``size`` (bytes) is
        listed for fixed resources only. ``ttl_ms`` and ``cache_scope`` are
        the caching hint of its reads (``ttlMs``, ``cacheScope`` of the
        ``resources/read`` result: how long a client may reuse it, and
        whether shared caches may); unset, the server's (0 ms, public).
        ``scopes`` and ``visible`` (``visible(caller) -> bool``: which
        callers see and may read it) are as for :meth:`add_tool`.

        >>> server = Server("demo")
        >>> server.add_resource(lambda: "hello", "text://greeting", name="greeting")
        >>> server.resource_uris()
        ['text://greeting']

        Raises:
            TypeError: the parameters do not match the template's variables.
            ferromcp.InvalidDefinitionError: core refused the URI or template.
        """
        _check_keywords("Server.add_resource", options, _ResourceOptions)
        _check_visible(options)
        resource_name = options.get("name") or getattr(fn, "__name__", None)
        if not resource_name or resource_name == "<lambda>":
            resource_name = uri
        definition: dict[str, Any] = {"name": resource_name}
        _put(definition, "description", options.get("description"))
        _put(definition, "mimeType", options.get("mime_type"))
        _put_common(definition, options)
        if "{" in uri:
            definition["uriTemplate"] = uri
        else:
            definition["uri"] = uri
            _put(definition, "size", options.get("size"))
        spec = resource_handler(fn, uri, definition)
        completions = options.get("completions") or {}
        for variable in completions:
            if variable not in spec.variables:
                raise TypeError(f"cannot complete {variable!r}: not a variable of {uri!r}")
        kind: ItemKind = "resource_template" if spec.template else "resource"
        self._guard(kind, uri, options.get("visible"))
        self._native.register(
            kind,
            spec.definition,
            spec.handler,
            spec.is_async,
            ttl_ms=options.get("ttl_ms"),
            cache_scope=options.get("cache_scope"),
        )
        self._native.require_scopes(kind, uri, list(options.get("scopes") or ()))
        self._resources[uri] = spec.template
        self._mark_async(("resource", uri), spec.is_async)
        self._set_completions("ref/resource", uri, completions)
        self._unguard(kind, uri, options.get("visible"))

    def remove_resource(self, uri: str) -> bool:
        """Removes a resource or template (by the URI it was registered
        with); returns whether it existed.

        >>> Server("demo").remove_resource("text://missing")
        False
        """
        self._resources.pop(uri, None)
        self._mark_async(("resource", uri), False)
        self._completions.discard("ref/resource", uri)
        self._set_visible("resource", uri, None)
        self._set_visible("resource_template", uri, None)
        return self._native.remove_resource(uri)

    def resource_uris(self) -> list[str]:
        """URIs and URI templates of the registered resources, in
        registration order.

        >>> Server("demo").resource_uris()
        []
        """
        return list(self._resources)

    def notify_resource_updated(self, uri: str) -> None:
        """Tells clients subscribed to ``uri`` (``subscriptions/listen``, or
        ``resources/subscribe`` in a 2025-11-25 session) that it changed.

        >>> Server("demo").notify_resource_updated("config://app")
        """
        self._native.notify_resource_updated(uri)

    @overload
    def prompt(self, fn: F, /) -> F: ...

    @overload
    def prompt(self, fn: None = None, /, **options: Unpack[_PromptOptions]) -> Callable[[F], F]: ...

    def prompt(self, fn: F | None = None, /, **options: Unpack[_PromptOptions]) -> F | Callable[[F], F]:
        """Registers a function as a prompt; use bare or with options.

        Each parameter is a prompt argument (required unless it has a
        default), converted from the client's string to its annotation. The
        function returns a string (one user message), a ``PromptMessage``
        dict, a list of them, or a whole ``GetPromptResult``::

            @server.prompt(completions={"language": ["python", "rust"]})
            def review(code: str, language: str = "python") -> str:
                \"\"\"Asks for a code review.\"\"\"
                return f"Review this {language} code: {code}"

        See :meth:`add_prompt` for the options.

        >>> import ferromcp
        >>> server = Server("demo")
        >>> @server.prompt(completions={"language": ["python", "rust"]})
        ... def review(code: str, language: str = "python") -> str:
        ...     return f"Review this {language} code: {code}"
        >>> serving = server.start("http", port=0)
        >>> with ferromcp.SyncClient.http(f"http://127.0.0.1:{serving.port}/mcp") as client:
        ...     print(client.get_prompt("review", {"code": "x = 1", "language": "rust"}).text)
        ...     print(client.complete({"type": "ref/prompt", "name": "review"}, "language", "py").values)
        Review this rust code: x = 1
        ['python']
        >>> serving.stop(); serving.wait(10)
        True
        """

        _check_keywords("Server.prompt", options, _PromptOptions)
        decorate = _registering(lambda f: self.add_prompt(f, **options))
        return decorate if fn is None else decorate(fn)

    def add_prompt(self, fn: Callable[..., Any], **options: Unpack[_PromptOptions]) -> None:
        """Registers (or replaces) a prompt.

        ``name`` defaults to the function's name, ``description`` to its
        docstring, argument descriptions to ``Annotated[str, "..."]`` or the
        docstring's ``Args:``. ``completions`` maps an argument to a
        completion function or a list of values (see :meth:`completion`).
        ``scopes`` and ``visible`` (``visible(caller) -> bool``: which
        callers see and may get it) are as for :meth:`add_tool`.

        >>> server = Server("demo")
        >>> def hello(name: str) -> str:
        ...     return f"Say hello to {name}."
        >>> server.add_prompt(hello)
        >>> server.prompt_names()
        ['hello']
        """
        _check_keywords("Server.add_prompt", options, _PromptOptions)
        _check_visible(options)
        prompt_name = options.get("name") or getattr(fn, "__name__", None)
        if not prompt_name or prompt_name == "<lambda>":
            raise TypeError(f"cannot name a prompt after {fn!r}: pass name=")
        definition: dict[str, Any] = {"name": prompt_name}
        _put(definition, "description", options.get("description"))
        _put_common(definition, options)
        spec = prompt_handler(fn, definition)
        arguments = {a["name"] for a in spec.definition.get("arguments", [])}
        completions = options.get("completions") or {}
        for argument in completions:
            if argument not in arguments:
                raise TypeError(f"cannot complete {argument!r}: not an argument of prompt {prompt_name!r}")
        self._guard("prompt", prompt_name, options.get("visible"))
        self._native.register("prompt", spec.definition, spec.handler, spec.is_async)
        self._native.require_scopes("prompt", prompt_name, list(options.get("scopes") or ()))
        if prompt_name not in self._prompts:
            self._prompts.append(prompt_name)
        self._mark_async(("prompt", prompt_name), spec.is_async)
        self._set_completions("ref/prompt", prompt_name, completions)
        self._unguard("prompt", prompt_name, options.get("visible"))

    def remove_prompt(self, name: str) -> bool:
        """Removes a prompt; returns whether it existed.

        >>> Server("demo").remove_prompt("missing")
        False
        """
        if name in self._prompts:
            self._prompts.remove(name)
        self._mark_async(("prompt", name), False)
        self._completions.discard("ref/prompt", name)
        self._set_visible("prompt", name, None)
        return self._native.remove_prompt(name)

    def add_skills(self, path: str | os.PathLike[str]) -> list[str]:
        """Publishes every skill under ``path`` (the skills extension, SEP-2640)
        and returns their ``SKILL.md`` URIs.

        A skill is a directory holding a ``SKILL.md`` whose YAML frontmatter
        names it (``name`` equal to the directory's name) and describes it;
        its path below ``path`` is its ``skill://`` path. Every file of it
        becomes a resource, and ``skills/list`` lists it with each file's
        digest and size. Files are read once, now; hidden files and
        symbolic links are skipped.

        >>> import pathlib, tempfile
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> (root / "git-workflow").mkdir()
        >>> _ = (root / "git-workflow" / "SKILL.md").write_text(
        ...     "---\\nname: git-workflow\\ndescription: Our Git conventions\\n---\\n# Branches\\n")
        >>> Server("demo").add_skills(root)
        ['skill://git-workflow/SKILL.md']

        Raises:
            ferromcp.InvalidDefinitionError: a skill is malformed (the message names it).
        """
        return self._native.add_skills_dir(os.fspath(path))

    def prompt_names(self) -> list[str]:
        """Names of the registered prompts, in registration order.

        >>> Server("demo").prompt_names()
        []
        """
        return list(self._prompts)

    def completion(self, *, argument: str, prompt: str | None = None, resource: str | None = None) -> Callable[[F], F]:
        """Registers a function completing one argument of a prompt, or one
        variable of a resource template (``completion/complete``)::

            @server.completion(prompt="review", argument="language")
            def languages(value: str) -> list[str]:
                return [lang for lang in ("python", "rust") if lang.startswith(value)]

        The function gets the partial value as its first parameter; a
        parameter named ``arguments`` gets the values of the other
        arguments the client already resolved, one annotated
        :class:`ferromcp.Context` the context. It returns a list of strings
        or ``{"values": [...], "total"?: int, "hasMore"?: bool}`` (the core
        sends at most 100). Plain or ``async def``.

        >>> server = Server("demo")
        >>> def languages(value: str) -> list[str]:
        ...     return ["python"]
        >>> server.completion(prompt="review", argument="language")(languages) is languages
        True
        """
        if (prompt is None) == (resource is None):
            raise TypeError("pass exactly one of prompt= or resource=")

        def register(fn: Callable[..., Any]) -> None:
            if prompt is not None:
                self._completions.add("ref/prompt", prompt, argument, fn)
            elif resource is not None:
                self._completions.add("ref/resource", resource, argument, fn)
            self._install_completions()

        return _registering(register)

    def _set_completions(self, ref: str, key: str, completions: Mapping[str, CompletionSource]) -> None:
        """Replaces the completers of a prompt's arguments or a template's
        variables (``ref`` is ``"ref/prompt"`` or ``"ref/resource"``)."""
        self._completions.discard(ref, key)
        for name, source in completions.items():
            self._completions.add(ref, key, name, source)
        self._install_completions()

    def _install_completions(self) -> None:
        """(Re)installs the one native completion provider: async when any
        completer is, so async completers run on the serving loop."""
        if not self._completions:
            return
        router = self._completions
        is_async = router.is_async
        self._native.set_completion(router.async_handler if is_async else router.handler, is_async)
        self._mark_async(("completion", ""), is_async)

    def middleware(self, link: M, /) -> M:
        """Adds a function as a link of the middleware chain (see
        :mod:`ferromcp.middleware`); returns it unchanged. ``async def
        link(ctx, call_next)`` awaits ``call_next(ctx)``; a plain ``def``
        calls it (it blocks, on a worker thread)::

            @server.middleware
            async def audit(ctx: ferromcp.MiddlewareContext, call_next: AsyncCallNext) -> dict[str, Any]:
                result = await call_next(ctx)
                log.info("%s %s by %s", ctx.method, ctx.name, ctx.client_info)
                return result

        >>> import ferromcp
        >>> server = Server("demo")
        >>> _ = server.tool(name="hello")(lambda: "hi")
        >>> @server.middleware
        ... async def louder(ctx, call_next):
        ...     result = await call_next(ctx)
        ...     if ctx.method == "tools/call":
        ...         result["content"][0]["text"] += "!"
        ...     return result
        >>> with ferromcp.SyncClient.in_memory(server) as client:
        ...     client.call_tool("hello").text
        'hi!'
        """
        self.add_middleware(link)
        return link

    def add_middleware(self, link: Middleware) -> None:
        """Adds a link at the end of the middleware chain: the first added
        sees a request first and its result last. ``link`` is a function
        ``link(ctx, call_next)``, plain or ``async`` (see
        :meth:`middleware` and :mod:`ferromcp.middleware`), or a
        ready-made link: :func:`ferromcp.middleware.log_requests`,
        :func:`~ferromcp.middleware.mask_errors`,
        :func:`~ferromcp.middleware.rate_limit`. Links cannot be removed.

        >>> from ferromcp.middleware import log_requests, rate_limit
        >>> server = Server("demo")
        >>> server.add_middleware(log_requests())
        >>> server.add_middleware(rate_limit(per_second=10, burst=20))

        Raises:
            TypeError: ``link`` is neither callable nor a ready-made link.
        """
        if isinstance(link, BuiltinMiddleware):
            self._native.add_middleware(link)
            return
        if not callable(link):
            raise TypeError(f"a middleware link is a function link(ctx, call_next), not {type(link).__name__}")
        is_async = is_coroutine_function(link)
        self._native.add_middleware(_link(link, is_async), is_async)
        self._mark_async(("middleware", str(self._links)), is_async)
        self._links += 1

    def notification_middleware(self, link: N, /) -> N:
        """Adds a function as a link of the middleware chain for the
        notifications the server receives (see
        :meth:`add_notification_middleware`); returns it unchanged::

            @server.notification_middleware
            def keep_running(notification: ferromcp.MiddlewareNotification) -> bool:
                return notification.method != "notifications/cancelled"

        >>> import ferromcp
        >>> server = Server("demo")
        >>> _ = server.tool(name="ping")(lambda: "pong")
        >>> seen = []
        >>> @server.notification_middleware
        ... def record(notification: ferromcp.MiddlewareNotification) -> None:
        ...     seen.append(notification.method)
        >>> with ferromcp.SyncClient.in_memory(server, era="legacy") as client:
        ...     _ = client.call_tool("ping")
        >>> seen
        ['notifications/initialized']
        """
        self.add_notification_middleware(link)
        return link

    def add_notification_middleware(self, link: NotificationLink) -> None:
        """Adds ``link(notification)`` at the end of the middleware chain,
        for the notifications the server receives
        (``notifications/initialized``, ``notifications/cancelled``,
        ``notifications/roots/list_changed``...), before the server acts on
        them. ``notification`` is a :class:`ferromcp.MiddlewareNotification`:
        its ``method``, and its ``params`` dict, whose changes go on; return
        ``False`` to stop it (the links after this one and the server never
        see it: a stopped cancellation leaves its request running), ``None``
        or ``True`` to pass it on. Requests pass such a link straight on,
        so links run in the order they were added, whatever their kind.

        The link is a plain ``def``, called in arrival order where the
        notification is read, holding the GIL: keep it short, never block
        nor call a client or server from it. An exception it raises is
        logged (the ``ferromcp.middleware`` logger of :mod:`logging`, with
        its traceback) and the notification goes on as it came.

        >>> import ferromcp
        >>> server = Server("demo")
        >>> _ = server.tool(name="ping")(lambda: "pong")
        >>> server.add_notification_middleware(lambda notification: print(notification.method))
        >>> with ferromcp.SyncClient.in_memory(server, era="legacy") as client:
        ...     _ = client.call_tool("ping")
        notifications/initialized

        Raises:
            TypeError: ``link`` is not callable, or is an ``async def``.
        """
        if not callable(link):
            raise TypeError(f"a notification link is a function link(notification), not {type(link).__name__}")
        if is_coroutine_function(link):
            raise TypeError("a notification link is a plain def: it runs where the notification arrives")
        self._native.add_notification_middleware(_notification_link(link))

    def visibility(self, rule: V, /) -> V:
        """Sets the rule deciding which tools, prompts, resources and
        resource templates each caller sees (replacing any earlier one);
        returns it unchanged. ``rule(caller, item) -> bool`` gets the
        :class:`ferromcp.Caller` (``auth``, ``client_info``...) and a
        :class:`ferromcp.VisibleItem` (``kind``, ``key``). Lists leave out
        what it hides; calling, reading, getting or completing a hidden item
        fails exactly as for an unknown one. Items registered with their
        own ``visible=`` must pass both. A list filtered this way is marked
        ``cacheScope: "private"``.

        The rule is a plain function, called for each item a request needs
        judged (every tool of a listing) with the request's one ``Caller``,
        on a worker thread: keep it quick, the request waits for it. If it
        raises, the item is hidden and the exception goes to
        ``sys.unraisablehook`` (see :mod:`ferromcp.visibility`)::

            @server.visibility
            def by_scope(caller: ferromcp.Caller, item: ferromcp.VisibleItem) -> bool:
                return not item.key.startswith("admin_") or (
                    caller.auth is not None and caller.auth.has_scope("admin"))

        >>> import ferromcp
        >>> server = Server("demo")
        >>> for name in ("search", "admin_purge"):
        ...     _ = server.tool(name=name)(lambda: "done")
        >>> @server.visibility
        ... def by_name(caller: ferromcp.Caller, item: ferromcp.VisibleItem) -> bool:
        ...     admin = (caller.client_info or {}).get("name") == "admin"
        ...     return admin or not item.key.startswith("admin_")
        >>> guest = ferromcp.SyncClient.in_memory(server, name="guest")
        >>> [tool.name for tool in guest.list_tools()]
        ['search']
        >>> guest.call_tool("admin_purge")
        Traceback (most recent call last):
        ferromcp.errors.InvalidParamsError: Unknown tool: admin_purge
        >>> guest.close()

        Raises:
            TypeError: ``rule`` is not a plain function.
        """
        _check(rule, "a visibility rule")
        self._visibility = rule
        self._install_visibility()
        return rule

    def clear_visibility(self) -> None:
        """Takes the rule of :meth:`visibility` away; registrations' own
        ``visible=`` stay.

        >>> import ferromcp
        >>> server = Server("demo")
        >>> _ = server.tool(name="ping")(lambda: "pong")
        >>> _ = server.visibility(lambda caller, item: False)
        >>> server.clear_visibility()
        >>> with ferromcp.SyncClient.in_memory(server) as client:
        ...     [tool.name for tool in client.list_tools()]
        ['ping']
        """
        self._visibility = None
        self._install_visibility()

    def _guard(self, kind: ItemKind, key: str, rule: ItemRule | None) -> None:
        """Before registering: a new item's own rule is in force before the
        item can be listed or called."""
        if rule is not None:
            self._set_visible(kind, key, rule)

    def _unguard(self, kind: ItemKind, key: str, rule: ItemRule | None) -> None:
        """After registering: an item registered again without a rule loses
        its earlier one (only now: a refused registration keeps it)."""
        if rule is None:
            self._set_visible(kind, key, None)

    def _set_visible(self, kind: ItemKind, key: str, rule: ItemRule | None) -> None:
        """Sets (``None``: forgets) a registration's own rule."""
        if rule is None:
            if self._visible.pop((kind, key), None) is None:
                return
        else:
            self._visible[(kind, key)] = rule
        self._install_visibility()

    def _install_visibility(self) -> None:
        """Gives the core the one rule of this server: the registrations'
        own and the server-wide one, both of which must allow an item.
        Only the registrations' own: the core asks only about their items."""
        if self._visibility is None and not self._visible:
            self._native.clear_visibility()
            return
        items = None if self._visibility is not None else list(self._visible)
        self._native.set_visibility(_Rule(self.name, self._visibility, self._visible), items)

    def _mark_async(self, key: tuple[str, str], is_async: bool) -> None:
        if is_async:
            self._async_handlers.add(key)
        else:
            self._async_handlers.discard(key)

    def run(self, transport: Transport = "stdio", **http: Unpack[_HttpOptions]) -> None:
        """Serves until stdin ends (stdio), SIGTERM or Ctrl-C; blocks the calling thread.

        Async handlers run on an asyncio loop that ``run`` starts when any
        handler is async. SIGTERM and Ctrl-C (SIGINT) shut the server down
        gracefully and return: no more input is read (stdio) or accepted
        (HTTP), open ``subscriptions/listen`` streams end with their
        completion result, and requests in flight get 10 seconds to finish
        before they are cancelled. Called from the main thread, ``run``
        handles SIGTERM itself unless the program installed its own
        handler. If the client closes stdout, ``run`` prints one line to
        stderr and returns. While serving stdio, ``print`` output goes to
        stderr so stdout carries only MCP.

        Over HTTP the endpoint is ``http://host:port{path}``, by default
        ``host="127.0.0.1"``, ``port=8000``, ``path="/mcp"``. The core
        refuses requests whose ``Host`` or ``Origin`` header it does not
        accept (DNS rebinding protection): by default loopback names and
        origins when bound to a loopback address (any host otherwise);
        ``allowed_hosts`` (``Host`` values without the port) and
        ``allowed_origins`` (exact origins, e.g. ``"https://app.example"``)
        replace those defaults. ``auth`` protects the server with OAuth
        bearer tokens (:class:`ferromcp.Protection`). ``limits``
        (:class:`ferromcp.HttpLimits`) tunes the connection cap, the
        per-address limit, the timeouts and the body size limit.

        ::

            server.run()                            # stdio
            server.run("http", port=8000)           # http://127.0.0.1:8000/mcp
            server.run("http", host="0.0.0.0", port=8000, path="/api/mcp",
                       allowed_hosts=["mcp.example.com"],
                       limits={"max_connections_per_address": 32, "idle_timeout": 30})

        Raises:
            ferromcp.TransportError: the address cannot be bound.
            ValueError: an unknown key or a bad value in ``limits``.
        """
        _check_keywords("Server.run", http, _HttpOptions)
        _check_transport(transport)
        auth = http.get("auth")
        try:
            if self._has_async_handlers() or (auth is not None and auth._is_async):
                asyncio.run(self._serve_until_sigterm(transport, http))
                return
            with _sigterm_as_interrupt(), _stdout_reserved(transport):
                serving = self.start(transport, **http)
                try:
                    serving._block()
                except KeyboardInterrupt:
                    # An interrupt raised before `_block` took over (the
                    # server may already be answering) skips its graceful
                    # stop: stop here the same way (again is harmless).
                    serving.stop()
                    serving.wait(_STOP_GRACE + http.get("drain_delay", 0.0))
                    raise
        except KeyboardInterrupt:
            pass
        except ConnectionClosedError:
            if transport != "stdio":
                raise
            print("ferromcp: the client closed stdout; stopped serving", file=sys.stderr)

    async def _serve_until_sigterm(self, transport: Transport, http: _HttpOptions) -> None:
        """:meth:`serve`, cancelled by SIGTERM as asyncio cancels it on Ctrl-C.

        Cancelling only this task (not the loop) lets async handlers still in
        flight finish within the grace period.
        """
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        handle = task is not None and _may_handle_sigterm()
        if handle and task is not None:
            loop.add_signal_handler(signal.SIGTERM, task.cancel)
        try:
            await self.serve(transport, **http)
        except asyncio.CancelledError:
            pass  # serve() has shut down gracefully
        finally:
            if handle:
                loop.remove_signal_handler(signal.SIGTERM)

    async def serve(self, transport: Transport = "stdio", **http: Unpack[_HttpOptions]) -> None:
        """Serves until stdin ends (stdio) or the task is cancelled.

        Async handlers run on the calling asyncio loop; sync ones run on
        worker threads, so neither blocks the loop. The HTTP options are
        :meth:`run`'s::

            async def main() -> None:
                await server.serve("http", port=8000, path="/mcp")

            asyncio.run(main())
        """
        _check_keywords("Server.serve", http, _HttpOptions)
        _check_transport(transport)
        loop = asyncio.get_running_loop()
        with _stdout_reserved(transport):
            serving = self.start(transport, event_loop=loop, **http)
            try:
                await asyncio.to_thread(serving.wait)
            except asyncio.CancelledError:
                serving.stop()
                await asyncio.to_thread(serving.wait, _STOP_GRACE + http.get("drain_delay", 0.0))
                raise

    def start(
        self,
        transport: Transport = "stdio",
        *,
        event_loop: asyncio.AbstractEventLoop | None = None,
        **http: Unpack[_HttpOptions],
    ) -> Serving:
        """Starts serving in the background and returns at once.

        ``port=0`` picks a free port (read it from ``Serving.port``). Async
        handlers need ``event_loop``, a running loop to execute on. The HTTP
        options are :meth:`run`'s. Unlike :meth:`run`, nothing redirects
        ``print`` away from stdout::

            serving = server.start("http", port=0)
            print(f"http://127.0.0.1:{serving.port}/mcp")
            ...
            serving.stop()
            serving.wait()

        >>> import ferromcp
        >>> server = Server("demo")
        >>> _ = server.tool(name="hello")(lambda: "hi")
        >>> serving = server.start("http", port=0, path="/api/mcp")
        >>> with ferromcp.SyncClient.http(f"http://127.0.0.1:{serving.port}/api/mcp") as client:
        ...     client.call_tool("hello").text
        'hi'
        >>> serving.stop(); serving.wait(10)
        True
        """
        _check_keywords("Server.start", http, _HttpOptions)
        _check_transport(transport)
        telemetry._join_sdk()
        if transport == "stdio":
            return self._native.start_stdio(event_loop)
        auth, limits = http.get("auth"), http.get("limits")
        allowed_hosts, allowed_origins = http.get("allowed_hosts"), http.get("allowed_origins")
        return self._native.start_http(
            http.get("host", "127.0.0.1"),
            http.get("port", 8000),
            event_loop,
            path=http.get("path", "/mcp"),
            allowed_hosts=list(allowed_hosts) if allowed_hosts is not None else None,
            allowed_origins=list(allowed_origins) if allowed_origins is not None else None,
            auth=auth._native() if auth is not None else None,
            limits=dict(limits) if limits is not None else None,
            health=http.get("health", False),
            drain_delay=http.get("drain_delay"),
            tls=dict(tls) if (tls := http.get("tls")) is not None else None,
        )

    def mount(self, prefix: str, upstream: Server | Client | SyncClient) -> Mount:
        """Serves ``upstream``'s tools, prompts, resources, resource
        templates and completions as part of this server, renamed with
        ``prefix``: tool ``echo`` under ``"alpha"`` is ``alpha_echo``,
        resource ``mem://r`` is ``alpha+mem://r`` (a ``_`` of the prefix is
        written ``-`` in URIs; ``""`` keeps the names). Changes the upstream
        announces are followed, and calls are forwarded with their
        progress, logs, cancellation and questions for input.

        ``upstream`` is another :class:`Server` of this process (reached
        over an in-memory pipe; its ``async`` handlers run on the loop
        serving this server), or a connected :class:`Client` or
        :class:`SyncClient` (a process on stdio or a server on HTTP, of
        either protocol era), which must stay open while mounted. Blocks,
        with the GIL released, while the upstream is listed.

        Mounted prompts and templates complete through the upstream,
        whatever completions this server registers, before or after.

        >>> from ferromcp.context import _example_call  # serves, calls, returns the text
        >>> weather = Server("weather")
        >>> @weather.tool
        ... def forecast(city: str) -> str:
        ...     return f"sunny in {city}"
        >>> app = Server("app")
        >>> mount = app.mount("weather", weather)
        >>> app.tool_names()
        ['weather_forecast']
        >>> _example_call(app, "weather_forecast", {"city": "Oslo"})
        'sunny in Oslo'
        >>> app.mount("a b", weather)
        Traceback (most recent call last):
        ferromcp.errors.InvalidDefinitionError: invalid definition: invalid mount prefix "a b": ...

        Raises:
            ferromcp.InvalidDefinitionError: (a ``ValueError``) ``prefix`` is
                not a letter followed by letters, digits, ``-``, ``_`` and
                ``.``, or ``upstream`` is this server.
            TypeError: ``upstream`` is not a server or a client.
            ferromcp.McpError: the upstream cannot be reached or listed.
        """
        if isinstance(upstream, Server):
            native: Any = upstream._native
        elif isinstance(upstream, (Client, SyncClient)):
            native = upstream._connected()
        else:
            raise TypeError(
                f"a mount's upstream is a ferromcp.Server, Client or SyncClient, not {type(upstream).__name__}"
            )
        mount = Mount(self._native.mount(prefix, native), self, upstream if isinstance(upstream, Server) else None)
        self._mounts.append(mount)
        return mount

    @classmethod
    def proxy(cls, upstream: Client | SyncClient) -> Server:
        """A new server serving exactly what ``upstream`` serves, under its
        own names, to clients of either protocol era: what ``ferromcp
        proxy`` serves. Its name, version and instructions are the
        upstream's. ``upstream`` must stay open while the proxy serves.
        Blocks, with the GIL released, while the upstream is listed.

        >>> import ferromcp
        >>> remote = Server("remote", version="2.0")
        >>> _ = remote.tool(name="hello")(lambda: "hi")
        >>> serving = remote.start("http", port=0)
        >>> with ferromcp.SyncClient.http(f"http://127.0.0.1:{serving.port}/mcp") as client:
        ...     proxy = Server.proxy(client)
        ...     print(proxy.name, proxy.version, proxy.tool_names())
        remote 2.0 ['hello']
        >>> serving.stop(); serving.wait(10)
        True

        Raises:
            TypeError: ``upstream`` is not a client.
            ferromcp.McpError: the upstream cannot be reached or listed.
        """
        if not isinstance(upstream, (Client, SyncClient)):
            raise TypeError(f"a proxy's upstream is a ferromcp.Client or SyncClient, not {type(upstream).__name__}")
        return cls._from_native(_native.Server.proxy(upstream._connected(), json_default=json_default))

    def _has_async_handlers(self) -> bool:
        """Whether serving needs an asyncio loop: an async handler here or
        in a server mounted here."""
        return bool(self._async_handlers) or any(
            m._server is not None and m._server._has_async_handlers() for m in self._mounts
        )

    def asgi_app(
        self,
        *,
        path: str | None = "/mcp",
        allowed_hosts: Sequence[str] | None = None,
        allowed_origins: Sequence[str] | None = None,
        max_body_bytes: int | None = None,
        auth: Protection | None = None,
    ) -> McpAsgiApp[Server]:
        """An ASGI 3 application serving this server's MCP endpoint, to mount
        in Starlette, FastAPI or any ASGI server (see :mod:`ferromcp.asgi`).

        ``path`` is the endpoint's path inside the application (below any mount
        point; ``None`` answers on every path). ``allowed_hosts`` lists the
        ``Host`` names accepted (without port); by default only the loopback
        names, which protects local servers from DNS rebinding: list your
        public names when deploying. ``allowed_origins`` lists the browser
        ``Origin`` values accepted (by default loopback origins only).
        ``max_body_bytes`` caps a request body (16 MiB by default). ``auth``
        protects the endpoint with OAuth bearer tokens
        (:class:`ferromcp.Protection`); the application must then also route
        ``/.well-known/oauth-protected-resource`` (and that path followed by
        ``path``) to it, which the endpoint answers: mount it with
        ``path=None`` or route those paths too.

        Async tools run on the loop serving the application.

        >>> server = Server("mounted")
        >>> app = server.asgi_app(path="/mcp", allowed_hosts=["localhost", "api.example.com"])
        >>> app.path
        '/mcp'
        """
        telemetry._join_sdk()
        endpoint = _native.HttpEndpoint(
            self._native,
            path=path,
            allowed_hosts=list(allowed_hosts) if allowed_hosts is not None else None,
            allowed_origins=list(allowed_origins) if allowed_origins is not None else None,
            max_body_bytes=max_body_bytes,
            auth=auth._native() if auth is not None else None,
        )
        return McpAsgiApp(self, endpoint, path)

    def __repr__(self) -> str:
        return f"<ferromcp.Server {self.name!r} {self.version} tools={self.tool_names()}>"


class Mount:
    """An upstream mounted in a server, returned by :meth:`Server.mount`.
    Dropping it leaves the mount in place; :meth:`unmount` takes it out.

    >>> inner, app = Server("inner"), Server("app")
    >>> _ = inner.tool(name="ping")(lambda: "pong")
    >>> mount = app.mount("inner", inner)
    >>> mount
    <ferromcp.Mount 'inner'>
    >>> mount.prefix, mount.mounted
    ('inner', True)
    """

    def __init__(self, native: _native.Mount, server: Server, upstream: Server | None) -> None:
        self._native = native
        self._in = server
        # A mounted Server (not a client), whose async handlers need a loop.
        self._server = upstream

    @property
    def prefix(self) -> str:
        """The prefix the upstream's names are served under.

        >>> Server("app").mount("files", Server("files")).prefix
        'files'
        """
        return self._native.prefix

    @property
    def mounted(self) -> bool:
        """Whether the upstream is still mounted (``False`` after :meth:`unmount`).

        >>> mount = Server("app").mount("files", Server("files"))
        >>> mount.unmount(); mount.mounted
        False
        """
        return self._native.mounted

    def unmount(self) -> None:
        """Stops following the upstream and removes everything the mount
        registered; clients listening hear of a list change. Again, does
        nothing.

        >>> inner, app = Server("inner"), Server("app")
        >>> _ = inner.tool(name="ping")(lambda: "pong")
        >>> mount = app.mount("inner", inner)
        >>> app.tool_names()
        ['inner_ping']
        >>> mount.unmount(); app.tool_names()
        []
        """
        self._native.unmount()
        with contextlib.suppress(ValueError):
            self._in._mounts.remove(self)

    def __repr__(self) -> str:
        state = "" if self.mounted else " (unmounted)"
        return f"<ferromcp.Mount {self.prefix!r}{state}>"


def _check_transport(transport: str) -> None:
    if transport not in ("stdio", "http"):
        raise ValueError(f"unknown transport {transport!r}: use 'stdio' or 'http'")


def _may_handle_sigterm() -> bool:
    """Signal handlers belong to the main thread and to the program: ferromcp
    handles SIGTERM only on the main thread, and only if nobody else does."""
    return threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) in (
        signal.SIG_DFL,
        None,
    )


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """Makes SIGTERM stop :meth:`Server.run` the way Ctrl-C does (see
    :func:`_may_handle_sigterm` for when it does nothing)."""
    if not _may_handle_sigterm():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def _stdout_reserved(transport: str) -> Iterator[None]:
    """On stdio, stdout belongs to the protocol: send stray prints to stderr."""
    if transport != "stdio":
        yield
        return
    sys.stdout.flush()
    with contextlib.redirect_stdout(sys.stderr):
        yield


def _check_visible(options: Mapping[str, Any]) -> None:
    """Refuses a registration's ``visible=`` that cannot be a rule, before
    anything is registered."""
    visible = options.get("visible")
    if visible is not None:
        _check(visible, "visible=")


def _put(definition: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        definition[key] = value


def _given(value: Any, derived: Any) -> Any:
    """An option as given, or what was derived from the function."""
    return value if value is not None else derived


def _put_common(definition: dict[str, Any], options: Mapping[str, Any]) -> None:
    """The optional fields every primitive's definition may carry (a prompt
    takes no ``annotations``: _check_keywords refuses them)."""
    _put(definition, "title", options.get("title"))
    annotations, icons, meta = options.get("annotations"), options.get("icons"), options.get("meta")
    _put(definition, "annotations", dict(annotations) if annotations is not None else None)
    _put(definition, "icons", [dict(i) for i in icons] if icons is not None else None)
    _put(definition, "_meta", dict(meta) if meta is not None else None)


def _check_keywords(method: str, options: Mapping[str, Any], accepted: type[Mapping[str, Any]]) -> None:
    """Raises the TypeError Python raises for a keyword argument a method
    does not have: ``**options`` accepts any name, ``accepted`` (one of the
    option TypedDicts above) lists the method's.

    >>> _check_keywords("Server.tool", {"nme": "x"}, _ToolOptions)
    Traceback (most recent call last):
    TypeError: Server.tool() got an unexpected keyword argument 'nme'
    """
    keys: frozenset[str] = getattr(accepted, "__optional_keys__", frozenset())
    for key in options:
        if key not in keys:
            raise TypeError(f"{method}() got an unexpected keyword argument {key!r}")


def _registering(register: Callable[[Callable[..., Any]], object]) -> Callable[[F], F]:
    """The decorator of every ``@server.<primitive>``: registers the function
    and returns it unchanged, so it stays callable directly."""

    def decorate(fn: F) -> F:
        register(fn)
        return fn

    return decorate
