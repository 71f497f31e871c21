"""Type stubs of the compiled module ``ferromcp._native`` (private: use ``ferromcp``)."""

import asyncio
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, final

__all__ = [
    "ERROR_KINDS",
    "LEGACY_PROTOCOL_VERSIONS",
    "PROTOCOL_VERSION",
    "VERSION",
    "WRAPPED_RESULT_KEY",
    "BuiltinMiddleware",
    "Client",
    "ClientCall",
    "Context",
    "Exchange",
    "HttpEndpoint",
    "JwtVerifier",
    "LoadedSkill",
    "LoopbackRedirect",
    "MiddlewareCall",
    "Mount",
    "Pages",
    "Protection",
    "Server",
    "Serving",
    "Subscription",
    "ToolResult",
    "ToolTask",
    "_close_host_threads",
    "_logs_emit",
    "_probe_host_call",
    "cli_main",
    "codes",
    "headless_authorize",
    "logs_close",
    "logs_install",
    "logs_next",
    "telemetry_flush",
    "telemetry_installed",
    "telemetry_stop",
    "telemetry_use",
    "uri_template_variables",
]

PROTOCOL_VERSION: str
"""The MCP revision spoken: ``"2026-07-28"``."""

VERSION: str
"""The release's version (the crates' version, which is the wheel's): ``ferromcp.__version__``."""

codes: dict[str, int]
"""JSON-RPC error codes by name (``"PARSE_ERROR"``, ``"HEADER_MISMATCH"``...), from the core."""

ERROR_KINDS: list[str]
"""The kinds core classifies failures into (``"peerError"``, ``"timeout"``...)."""

def _probe_host_call(
    kind: str,
    callable: Callable[[Any, None], Any],
    input: Any,
    event_loop: asyncio.AbstractEventLoop | None = None,
) -> str:
    """Private, for tests: runs ``callable`` as a handler of ``kind`` through
    the host-call adapter and returns the output core built, as debug text."""

def _close_host_threads() -> bool:
    """Private, run at interpreter exit: stops the threads that run Python
    handlers before the interpreter finalizes; whether the running ones ended."""

def cli_main(argv: list[str]) -> int:
    """The ``ferromcp`` command line (the Rust binary's) with ``argv``, the
    program name first; blocks with the GIL released and returns the exit
    status (0 ok, 1 failed, 2 usage error)."""

def logs_install(level: int) -> bool:
    """Private (``ferromcp._logs``): installs the ``tracing`` subscriber
    queuing core's events at ``level`` (a ``logging`` level) and above, or
    ``RUST_LOG``'s; ``False`` if a subscriber was installed already."""

def logs_next(block: bool) -> tuple[list[tuple[str, int, str]], int] | None:
    """Private (``ferromcp._logs``): the queued ``(logger, level, message)``
    records and the number of events dropped since the last call; with
    ``block``, waits (GIL released) for one. ``None`` once closed and empty."""

def logs_close() -> None:
    """Private (``ferromcp._logs``), at interpreter exit: closes the queue."""

def _logs_emit(level: str, message: str) -> None:
    """Private, for tests: a core ``tracing`` event of ``level`` (``"error"``,
    ``"warn"``, ``"info"``, ``"debug"``, ``"trace"``), target ``ferromcp::python``."""

def uri_template_variables(template: str) -> list[str]:
    """The variable names of an RFC 6570 URI template, in order (core's parser)."""

def telemetry_use(bridge: object, metrics: bool) -> None:
    """Private (``ferromcp.telemetry.use_opentelemetry``): makes spans and,
    with ``metrics``, measurements through ``bridge``, a
    ``ferromcp._otel.Bridge``, in place of any other telemetry."""

def telemetry_stop() -> None:
    """Private (``ferromcp.telemetry.disable``): removes the installed
    telemetry, whichever it is, after flushing it."""

def telemetry_flush(timeout: float) -> bool:
    """Private (``ferromcp.telemetry.flush``): sends what the installed
    telemetry holds, waiting at most ``timeout`` seconds; whether all of it
    went."""

def telemetry_installed() -> str | None:
    """Private (``ferromcp.telemetry.in_use``): ``"opentelemetry"``,
    ``"otlp"`` or ``None``."""

WRAPPED_RESULT_KEY: str
"""The key a non-object tool result is wrapped under with an output schema: ``"result"``."""

LEGACY_PROTOCOL_VERSIONS: list[str]
"""The revisions of the ``initialize`` era (2025-11-25 and earlier), newest first."""

# The client's methods return an awaitable of ``event_loop`` when one is given
# (an ``asyncio.Future``, or the native ``Pending`` that implements the same
# protocol), else block (GIL released) and return the value itself: ``Any``.

@final
class Client:
    """The native client; ``ferromcp.Client`` / ``ferromcp.SyncClient`` wrap it."""

    @staticmethod
    def connect_stdio(
        program: str,
        args: list[str],
        event_loop: asyncio.AbstractEventLoop | None,
        *,
        env: list[tuple[str, str]] | None = None,
        cwd: str | None = None,
        stderr: str = "capture",
        name: str | None = None,
        version: str | None = None,
        protocol_version: str | None = None,
        era: str = "auto",
        timeout: float | None = None,
        handlers: dict[str, tuple[Callable[[Any, None], Any], bool]] | None = None,
        handler_loop: asyncio.AbstractEventLoop | None = None,
        json_default: Callable[[Any], Any] | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> Any: ...
    @staticmethod
    def connect_http(
        url: str,
        event_loop: asyncio.AbstractEventLoop | None,
        *,
        headers: list[tuple[str, str]] | None = None,
        name: str | None = None,
        version: str | None = None,
        protocol_version: str | None = None,
        era: str = "auto",
        timeout: float | None = None,
        handlers: dict[str, tuple[Callable[[Any, None], Any], bool]] | None = None,
        handler_loop: asyncio.AbstractEventLoop | None = None,
        json_default: Callable[[Any], Any] | None = None,
        tls_roots: str = "native",
        ca_certs: list[str] | None = None,
        client_cert: tuple[str, str] | None = None,
        oauth: dict[str, Any] | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> Any: ...
    @staticmethod
    def connect_in_memory(
        server: Server,
        event_loop: asyncio.AbstractEventLoop | None,
        *,
        name: str | None = None,
        version: str | None = None,
        protocol_version: str | None = None,
        era: str = "auto",
        timeout: float | None = None,
        handlers: dict[str, tuple[Callable[[Any, None], Any], bool]] | None = None,
        handler_loop: asyncio.AbstractEventLoop | None = None,
        json_default: Callable[[Any], Any] | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> Any:
        """A client of ``server`` over an in-memory pipe (awaitable with a loop, else blocking)."""
    @property
    def protocol_version(self) -> str: ...
    @property
    def is_legacy(self) -> bool | None: ...
    def pages(self, kind: str) -> Pages: ...
    def request(
        self,
        method: str,
        params: dict[str, Any],
        timeout: float | None,
        progress: Callable[[float, float | None, str | None], Any] | None,
        meta: dict[str, Any] | None,
        event_loop: asyncio.AbstractEventLoop | None,
    ) -> Any: ...
    def listen(self, filter: dict[str, Any], event_loop: asyncio.AbstractEventLoop | None) -> Any: ...
    def close(self, event_loop: asyncio.AbstractEventLoop | None) -> Any: ...
    def add_middleware(
        self,
        link: Callable[[dict[str, Any], ClientCall], Any],
        is_async: bool,
        event_loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        """Appends ``link(params, call)`` (a coroutine function when
        ``is_async``, run on ``event_loop`` or the handler loop) to the chain."""
    def add_notification_middleware(self, link: Callable[[str, dict[str, Any]], dict[str, Any] | None]) -> None:
        """Appends ``link(method, params)`` to the chain for received
        notifications: called where each is delivered, holding the GIL; it
        returns ``None`` to stop it or the params it goes on with (an
        exception is logged and passes it on unchanged).

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> with ferromcp.SyncClient.in_memory(server) as client:
        ...     client._native.add_notification_middleware(lambda method, params: params)
        """
    def start_tool_task(
        self,
        name: str,
        arguments: dict[str, Any],
        timeout: float | None,
        meta: dict[str, Any] | None,
        event_loop: asyncio.AbstractEventLoop | None,
    ) -> Any:
        """A ``ToolTask`` (awaitable with a loop, else blocking)."""
    def tool_task(self, task_id: str) -> ToolTask: ...
    def load_skill(self, skill: str | dict[str, Any], event_loop: asyncio.AbstractEventLoop | None) -> Any:
        """A ``LoadedSkill`` (awaitable with a loop, else blocking)."""

@final
class ToolTask:
    """A ``tools/call`` the server runs as a task (core's ``ToolTask``)."""

    @property
    def id(self) -> str | None: ...
    @property
    def last(self) -> Any: ...
    def refresh(self, event_loop: asyncio.AbstractEventLoop | None) -> Any: ...
    def respond(self, responses: dict[str, Any], event_loop: asyncio.AbstractEventLoop | None) -> Any: ...
    def cancel(self, event_loop: asyncio.AbstractEventLoop | None) -> Any: ...
    def result(
        self, event_loop: asyncio.AbstractEventLoop | None, on_state: Callable[[dict[str, Any]], Any] | None = None
    ) -> Any: ...

@final
class LoadedSkill:
    """A skill whose ``SKILL.md`` core read and checked (core's ``LoadedSkill``)."""

    @property
    def skill(self) -> dict[str, Any]: ...
    @property
    def skill_md(self) -> str: ...
    def read(self, file: str, event_loop: asyncio.AbstractEventLoop | None) -> Any: ...

@final
class Pages:
    """Every page of a list, one ``next()`` at a time."""

    def next(self, event_loop: asyncio.AbstractEventLoop | None) -> Any: ...

@final
class Subscription:
    """An open ``subscriptions/listen`` stream."""

    @property
    def acknowledged(self) -> Any: ...
    def next(self, event_loop: asyncio.AbstractEventLoop | None) -> Any: ...
    def close(self) -> None: ...

@final
class Server:
    """The native server; ``ferromcp.Server`` derives schemas and wraps it."""

    def __new__(
        cls,
        name: str,
        version: str,
        *,
        instructions: str | None = None,
        json_default: Callable[[Any], Any] | None = None,
        caching: dict[str, tuple[int, str]] | None = None,
        tasks: dict[str, Any] | None = None,
        seal_keys: list[str] | None = None,
        event_bus: str | None = None,
        replica: str | None = None,
    ) -> Server: ...
    @property
    def name(self) -> str: ...
    @property
    def version(self) -> str: ...
    def add_tool(
        self,
        name: str,
        description: str | None,
        input_schema: dict[str, Any],
        output_schema: dict[str, Any] | None,
        handler: Callable[[dict[str, Any], Context], Any],
        is_async: bool,
    ) -> None: ...
    def register(
        self,
        kind: str,
        definition: dict[str, Any],
        handler: Callable[[dict[str, Any], Context], Any],
        is_async: bool,
        *,
        ttl_ms: int | None = None,
        cache_scope: str | None = None,
        task: str | None = None,
        task_start: str | None = None,
    ) -> None: ...
    def remove_tool(self, name: str) -> bool: ...
    def tool_names(self) -> list[str]: ...
    def remove_resource(self, uri: str) -> bool: ...
    def remove_prompt(self, name: str) -> bool: ...
    def add_skills_dir(self, path: str | os.PathLike[str]) -> list[str]: ...
    def set_completion(self, handler: Callable[[dict[str, Any], Context], Any], is_async: bool) -> None: ...
    def notify_resource_updated(self, uri: str) -> None: ...
    def require_scopes(self, kind: str, key: str, scopes: list[str]) -> None: ...
    def add_middleware(
        self,
        link: BuiltinMiddleware | Callable[[dict[str, Any], MiddlewareCall], Any],
        is_async: bool = False,
    ) -> None:
        """Adds a link at the end of the chain: a ``BuiltinMiddleware``, or
        ``link(params, call)`` returning the result dict (a coroutine when
        ``is_async``)."""
    def add_notification_middleware(self, link: Callable[[str, dict[str, Any]], dict[str, Any] | None]) -> None:
        """Adds ``link(method, params)`` at the end of the chain, for the
        notifications the server receives: called where each arrives,
        holding the GIL, before the server acts on it; it returns ``None``
        to stop it or the params it goes on with (an exception is logged
        and passes it on unchanged).

        >>> import ferromcp
        >>> server = ferromcp.Server("demo")
        >>> server._native.add_notification_middleware(lambda method, params: params)
        """
    def set_visibility(
        self,
        rule: Callable[[dict[str, Any], list[tuple[str, str]]], Iterable[object]],
        items: Sequence[tuple[str, str]] | None = None,
    ) -> None:
        """``rule(caller, items) -> verdicts``, asked once per request on a
        worker thread: ``caller`` is the core's description of who asks,
        ``items`` the ``(kind, key)`` pairs to judge, a verdict per item (an
        exception hides it and is reported); with ``items``, only about
        those ``(kind, key)``."""
    def clear_visibility(self) -> None: ...
    def mount(self, prefix: str, upstream: Server | Client) -> Mount:
        """Mounts ``upstream`` under ``prefix`` (blocks, GIL released); ``ValueError`` for a bad prefix."""
    @staticmethod
    def proxy(upstream: Client, *, json_default: Callable[[Any], Any] | None = None) -> Server:
        """A new server serving what ``upstream`` serves (blocks, GIL released)."""
    def start_stdio(self, event_loop: asyncio.AbstractEventLoop | None = None) -> Serving: ...
    def start_http(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        event_loop: asyncio.AbstractEventLoop | None = None,
        *,
        path: str | None = None,
        allowed_hosts: list[str] | None = None,
        allowed_origins: list[str] | None = None,
        auth: Protection | None = None,
        limits: Mapping[str, Any] | None = None,
        health: bool = False,
        drain_delay: float | None = None,
        tls: Mapping[str, Any] | None = None,
    ) -> Serving: ...

@final
class Mount:
    """One upstream mounted in a server (``ferromcp.Mount`` wraps it)."""

    @property
    def prefix(self) -> str: ...
    @property
    def mounted(self) -> bool: ...
    def unmount(self) -> None: ...

@final
class Serving:
    """A transport serving in the background."""

    def stop(self) -> None: ...
    def wait(self, timeout: float | None = None) -> bool: ...
    def _block(self) -> None:
        """Private, for ``Server.run()``: serves in the foreground; Ctrl-C
        stops the transport, lets it wind down and re-raises."""
    @property
    def done(self) -> bool: ...
    @property
    def address(self) -> tuple[str, int] | None: ...
    @property
    def port(self) -> int | None: ...

@final
class Context:
    """The request a handler is serving (``ferromcp.Context`` wraps it)."""

    @property
    def request_id(self) -> int | str: ...
    @property
    def auth(self) -> dict[str, Any] | None: ...
    @property
    def method(self) -> str: ...
    @property
    def protocol_version(self) -> str: ...
    @property
    def client_info(self) -> dict[str, Any] | None: ...
    @property
    def client_capabilities(self) -> dict[str, Any]: ...
    @property
    def headers(self) -> dict[str, str]: ...
    @property
    def log_level(self) -> str | None: ...
    @property
    def cancelled(self) -> bool: ...
    def progress(self, progress: float, total: float | None = None, message: str | None = None) -> bool: ...
    def log(self, level: str, data: Any, logger: str | None = None) -> bool: ...
    def close_sse_stream(self) -> bool: ...
    def ask(self, kind: str, params: dict[str, Any], key: str | None = None) -> Any:
        """Blocks until the answer is there (raises ``InputRequired`` when a
        2026-07-28 request does not carry it)."""
    def ask_async(
        self,
        kind: str,
        params: dict[str, Any],
        event_loop: asyncio.AbstractEventLoop,
        key: str | None = None,
    ) -> asyncio.Future[Any]:
        """A future of ``event_loop`` resolving with the answer."""
    def start_task(self) -> bool:
        """Blocks until the call is a task (``True``), or returns ``False``
        when it cannot become one."""
    def start_task_async(self, event_loop: asyncio.AbstractEventLoop) -> asyncio.Future[bool]:
        """A future of ``event_loop`` resolving as ``start_task`` returns."""

@final
class MiddlewareCall:
    """One request in a middleware link, and the rest of the chain
    (``ferromcp.MiddlewareContext`` wraps it)."""

    @property
    def request_id(self) -> int | str: ...
    @property
    def method(self) -> str: ...
    @property
    def caller(self) -> dict[str, Any]:
        """The core's description of who sent the request (``ferromcp.Caller`` reads it)."""
    def next(self, params: Mapping[str, Any], event_loop: asyncio.AbstractEventLoop | None = None) -> Any:
        """Runs the rest of the chain once: its result dict (blocking), or an
        awaitable of ``event_loop`` resolving with it."""

@final
class ClientCall:
    """One call in a client middleware link, and the rest of the chain
    (``ferromcp.ClientMiddlewareContext`` wraps it)."""

    @property
    def method(self) -> str: ...
    @property
    def timeout(self) -> float | None: ...
    @property
    def meta(self) -> dict[str, Any]: ...
    def next(
        self,
        params: Mapping[str, Any],
        meta: Mapping[str, Any] | None,
        timeout: float | None,
        event_loop: asyncio.AbstractEventLoop | None = None,
    ) -> Any:
        """Runs the rest of the chain once: the result dict (blocking), or an
        awaitable of ``event_loop`` resolving with it."""

@final
class BuiltinMiddleware:
    """One of core's ready-made links (``ferromcp.middleware``)."""

    @staticmethod
    def log_requests() -> BuiltinMiddleware: ...
    @staticmethod
    def mask_errors() -> BuiltinMiddleware: ...
    @staticmethod
    def rate_limit(per_second: float, burst: int) -> BuiltinMiddleware: ...

@final
class ToolResult:
    """A complete ``CallToolResult``, returned by a handler as is. The core
    assembles it (a ``str`` item is a text block) and checks it against the
    schema: an invalid content block raises ``ValueError``."""

    def __new__(
        cls,
        content: list[dict[str, Any] | str] | None = None,
        *,
        structured_content: dict[str, Any] | None = None,
        is_error: bool = False,
        meta: dict[str, Any] | None = None,
    ) -> ToolResult: ...
    @property
    def content(self) -> list[dict[str, Any]]: ...
    @property
    def structured_content(self) -> dict[str, Any] | None: ...
    @property
    def is_error(self) -> bool: ...

@final
class HttpEndpoint:
    """Core's MCP endpoint for a host's own HTTP server (``ferromcp.asgi`` drives it)."""

    def __new__(
        cls,
        server: Server,
        *,
        path: str | None,
        allowed_hosts: list[str] | None = None,
        allowed_origins: list[str] | None = None,
        max_body_bytes: int | None = None,
        auth: Protection | None = None,
    ) -> HttpEndpoint: ...
    def use_event_loop(self, event_loop: asyncio.AbstractEventLoop) -> None: ...
    def release_event_loop(self, event_loop: asyncio.AbstractEventLoop) -> None: ...
    def start(
        self,
        method: str,
        path: str,
        query: bytes,
        headers: list[tuple[bytes, bytes]],
        client: str | None,
        on_head: Callable[[tuple[int, list[tuple[bytes, bytes]]] | None], object],
    ) -> Exchange:
        """Starts one exchange; ``on_head((status, headers))`` (``None`` if cancelled) comes from another thread."""
    def close(self) -> None: ...

@final
class Exchange:
    """One request/response exchange of an ``HttpEndpoint``."""

    def feed(self, chunk: bytes) -> bool: ...
    def end_body(self) -> None: ...
    def abort_body(self) -> None: ...
    def next_chunk(self, wake_with: Callable[[bytes | None], object]) -> None:
        """Calls ``wake_with(chunk)`` (``None`` at the end) from another thread."""
    def cancel(self) -> None: ...

@final
class JwtVerifier:
    """Core's JWT access-token verifier (``ferromcp.JwtVerifier``)."""

    def __new__(
        cls,
        issuer: str,
        audience: str,
        *,
        jwks_uri: str | None = None,
        ca_certs: list[str] | None = None,
        leeway: float | None = None,
        cache_ttl: float | None = None,
    ) -> JwtVerifier: ...

@final
class Protection:
    """The native half of ``ferromcp.Protection``."""

    def __new__(
        cls,
        resource: str,
        authorization_servers: list[str],
        verifier: object,
        *,
        is_async: bool = False,
        scopes_supported: list[str] = ...,
        required_scopes: list[str] = ...,
        resource_name: str | None = None,
        resource_documentation: str | None = None,
    ) -> Protection: ...

@final
class LoopbackRedirect:
    """A one-shot listener on 127.0.0.1 for an OAuth redirect (use ``ferromcp.LoopbackRedirect``)."""

    def __new__(cls, port: int = 0, path: str = "/callback") -> LoopbackRedirect: ...
    @property
    def redirect_uri(self) -> str: ...
    def wait(self, timeout: float, event_loop: asyncio.AbstractEventLoop | None) -> Any: ...

def headless_authorize(url: str, event_loop: asyncio.AbstractEventLoop | None) -> Any: ...
