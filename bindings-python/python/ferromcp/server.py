"""The MCP server: tools from decorated functions, served over stdio or HTTP.

The protocol itself (JSON-RPC, validation, result shaping, transports) runs
in the Rust core; this module only turns Python functions into tool
definitions and handlers.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Literal, TypeVar, overload

from . import _native
from ._json import json_default
from ._native import Context, Serving
from ._schema import JsonSchema, ToolSignature, tool_signature
from .asgi import asgi_app as _asgi_app
from .errors import ConnectionClosedError

__all__ = ["Server", "Transport"]

Transport = Literal["stdio", "http"]
"""How a server is reached: ``"stdio"`` (newline-delimited JSON-RPC on
stdin/stdout) or ``"http"`` (Streamable HTTP at ``http://host:port/mcp``)."""

F = TypeVar("F", bound=Callable[..., Any])

# Seconds a cancelled serve() waits for the transport to wind down: a little
# more than core's grace period (10 s) for requests in flight.
_STOP_GRACE = 12.0


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
    """

    def __init__(self, name: str, version: str = "0.1.0", *, instructions: str | None = None) -> None:
        self._native = _native.Server(name, version, instructions=instructions, json_default=json_default)
        self._async_tools: set[str] = set()

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
    def tool(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        input_schema: JsonSchema | None = None,
        output_schema: JsonSchema | None = None,
    ) -> Callable[[F], F]: ...

    def tool(
        self,
        fn: F | None = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        input_schema: JsonSchema | None = None,
        output_schema: JsonSchema | None = None,
    ) -> F | Callable[[F], F]:
        """Registers a function as a tool; use bare or with options.

        The function is returned unchanged, so it stays callable directly::

            @server.tool
            def echo(text: str) -> str:
                \"\"\"Returns the text unchanged.\"\"\"
                return text

            @server.tool(name="sum", description="Adds two integers.")
            async def add(a: int, b: int) -> int:
                return a + b

        See :meth:`add_tool` for the options.
        """

        def register(f: F) -> F:
            self.add_tool(
                f,
                name=name,
                description=description,
                input_schema=input_schema,
                output_schema=output_schema,
            )
            return f

        return register if fn is None else register(fn)

    def add_tool(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        input_schema: JsonSchema | None = None,
        output_schema: JsonSchema | None = None,
    ) -> None:
        """Registers (or replaces) a tool.

        Derived from ``fn`` unless given:

        - ``name``: the function's name;
        - ``description``: the docstring's first paragraph;
        - ``input_schema``: the parameters' type hints (``str``, ``int``,
          ``float``, ``bool``, ``list[T]``, ``dict``, ``T | None``,
          ``Literal``, ``Enum``, TypedDict, dataclass); parameters with a
          default are optional; Google-style ``Args:`` lines describe them.
          A parameter annotated :class:`ferromcp.Context` receives the
          request context instead;
        - ``output_schema``: the return annotation. A TypedDict, dataclass
          or ``dict`` describes the structured content; another JSON type
          such as ``int`` is wrapped as ``{"result": value}``; ``str``,
          ``None`` and optional types declare none.

        A handler's exception becomes a tool result with ``isError: true``
        (``"ValueError: message"``); raise :class:`ferromcp.McpError` to
        answer with a JSON-RPC error instead.

        >>> server = Server("demo")
        >>> def shout(text: str) -> str:
        ...     '''Upper-cases the text.'''
        ...     return text.upper()
        >>> server.add_tool(shout, name="shout")
        >>> server.tool_names()
        ['shout']

        Raises:
            TypeError: a parameter's type has no JSON Schema (pass ``input_schema``).
            ferromcp.InvalidDefinitionError: core refused the name or a schema.
        """
        tool_name = name or getattr(fn, "__name__", None)
        if not tool_name:
            raise TypeError(f"cannot name a tool after {fn!r}: pass name=")
        signature = tool_signature(fn, Context, derive_input=input_schema is None)
        is_async = _is_coroutine_function(fn)
        self._native.add_tool(
            tool_name,
            description if description is not None else signature.description,
            input_schema if input_schema is not None else signature.input_schema,
            output_schema if output_schema is not None else signature.output_schema,
            _native_handler(fn, signature, is_async),
            is_async,
        )
        if is_async:
            self._async_tools.add(tool_name)
        else:
            self._async_tools.discard(tool_name)

    def remove_tool(self, name: str) -> bool:
        """Removes a tool; returns whether it existed.

        >>> Server("demo").remove_tool("missing")
        False
        """
        self._async_tools.discard(name)
        return self._native.remove_tool(name)

    def tool_names(self) -> list[str]:
        """Names of the registered tools, in listing order.

        >>> Server("demo").tool_names()
        []
        """
        return self._native.tool_names()

    def run(self, transport: Transport = "stdio", *, host: str = "127.0.0.1", port: int = 8000) -> None:
        """Serves until stdin ends (stdio), SIGTERM or Ctrl-C; blocks the calling thread.

        Async tools run on an asyncio loop that ``run`` starts when any tool
        is async. SIGTERM and Ctrl-C (SIGINT) shut the server down
        gracefully and return: no more input is read (stdio) or accepted
        (HTTP), open ``subscriptions/listen`` streams end with their
        completion result, and requests in flight get 10 seconds to finish
        before they are cancelled. Called from the main thread, ``run``
        handles SIGTERM itself unless the program installed its own
        handler. If the client closes stdout, ``run`` prints one line to
        stderr and returns. While serving stdio, ``print`` output goes to
        stderr so stdout carries only MCP.

        ::

            server.run()                            # stdio
            server.run("http", port=8000)           # http://127.0.0.1:8000/mcp

        Raises:
            ferromcp.TransportError: the address cannot be bound.
        """
        _check_transport(transport)
        try:
            if self._async_tools:
                asyncio.run(self._serve_until_sigterm(transport, host, port))
                return
            with _sigterm_as_interrupt(), _stdout_reserved(transport):
                if transport == "stdio":
                    self._native.serve_stdio()
                else:
                    self._native.serve_http(host, port)
        except KeyboardInterrupt:
            pass
        except ConnectionClosedError:
            if transport != "stdio":
                raise
            print("ferromcp: the client closed stdout; stopped serving", file=sys.stderr)

    async def _serve_until_sigterm(self, transport: Transport, host: str, port: int) -> None:
        """:meth:`serve`, cancelled by SIGTERM as asyncio cancels it on Ctrl-C.

        Cancelling only this task (not the loop) lets async tools still in
        flight finish within the grace period.
        """
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        handle = task is not None and _may_handle_sigterm()
        if handle and task is not None:
            loop.add_signal_handler(signal.SIGTERM, task.cancel)
        try:
            await self.serve(transport, host=host, port=port)
        except asyncio.CancelledError:
            pass  # serve() has shut down gracefully
        finally:
            if handle:
                loop.remove_signal_handler(signal.SIGTERM)

    async def serve(self, transport: Transport = "stdio", *, host: str = "127.0.0.1", port: int = 8000) -> None:
        """Serves until stdin ends (stdio) or the task is cancelled.

        Async tools run on the calling asyncio loop; sync tools run on worker
        threads, so neither blocks the loop::

            async def main() -> None:
                await server.serve("http", port=8000)

            asyncio.run(main())
        """
        _check_transport(transport)
        loop = asyncio.get_running_loop()
        with _stdout_reserved(transport):
            serving = self.start(transport, host=host, port=port, event_loop=loop)
            try:
                await asyncio.to_thread(serving.wait)
            except asyncio.CancelledError:
                serving.stop()
                await asyncio.to_thread(serving.wait, _STOP_GRACE)
                raise

    def start(
        self,
        transport: Transport = "stdio",
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        event_loop: asyncio.AbstractEventLoop | None = None,
    ) -> Serving:
        """Starts serving in the background and returns at once.

        ``port=0`` picks a free port (read it from ``Serving.port``). Async
        tools need ``event_loop``, a running loop to execute on. Unlike
        :meth:`run`, nothing redirects ``print`` away from stdout::

            serving = server.start("http", port=0)
            print(f"http://127.0.0.1:{serving.port}/mcp")
            ...
            serving.stop()
            serving.wait()
        """
        _check_transport(transport)
        if transport == "stdio":
            return self._native.start_stdio(event_loop)
        return self._native.start_http(host, port, event_loop)

    asgi_app = _asgi_app  # ferromcp.asgi: mount MCP in Starlette/FastAPI/uvicorn apps

    def __repr__(self) -> str:
        return f"<ferromcp.Server {self.name!r} {self.version} tools={self.tool_names()}>"


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


def _is_coroutine_function(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))  # noqa: B004 (an async __call__, not callability)


def _native_handler(
    fn: Callable[..., Any], signature: ToolSignature, is_async: bool
) -> Callable[[dict[str, Any], Context], Any]:
    """Adapts ``fn`` to the native convention ``handler(arguments, ctx)``."""
    parameters = signature.parameters
    known = {p.name for p in parameters}
    context_name = signature.context_parameter
    accepts_extra = signature.accepts_extra

    def keywords(arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        for p in parameters:
            if p.name in arguments:
                value = arguments[p.name]
                kwargs[p.name] = p.convert(value) if p.convert is not None and value is not None else value
        if accepts_extra:
            for key, value in arguments.items():
                if key not in known and key != context_name:
                    kwargs[key] = value
        if context_name is not None:
            kwargs[context_name] = ctx
        return kwargs

    if is_async:
        coroutine_fn: Callable[..., Awaitable[Any]] = fn

        async def call_async(arguments: dict[str, Any], ctx: Context) -> Any:
            return await coroutine_fn(**keywords(arguments, ctx))

        return call_async

    def call(arguments: dict[str, Any], ctx: Context) -> Any:
        return fn(**keywords(arguments, ctx))

    return call
