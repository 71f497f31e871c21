"""Serving MCP inside an existing ASGI web application (Starlette, FastAPI, uvicorn).

:meth:`ferromcp.Server.asgi_app` returns an :class:`McpAsgiApp`; mount it
like any ASGI application::

    from fastapi import FastAPI
    import ferromcp

    server = ferromcp.Server("agents")

    @server.tool
    def echo(text: str) -> str:
        \"\"\"Returns the text unchanged.\"\"\"
        return text

    app = FastAPI()
    app.mount("/agents", server.asgi_app(allowed_hosts=["localhost", "api.example.com"]))
    # MCP endpoint: http://localhost:8000/agents/mcp

The application only moves bytes: every request goes through the same
core as ``server.run("http")`` (``Host``/``Origin`` checks, the mirrored
``MCP-Protocol-Version``/``Mcp-Method``/``Mcp-Name`` headers, the body limit,
2025-11-25 sessions on the same endpoint, SSE streams), and its answer is
sent back chunk by chunk, one SSE event per ``http.response.body`` message.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Generic, TypeVar

from . import _native

__all__ = ["McpAsgiApp"]

# The server an application serves (a ferromcp.Server, which builds the
# application): a parameter, so that this module needs no import of it.
_S = TypeVar("_S")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def _settle(future: asyncio.Future[Any], value: object) -> None:
    if not future.done():  # cancelled meanwhile: nobody waits
        future.set_result(value)


def _waker(loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any]) -> Callable[[Any], None]:
    """What core calls, from one of its threads, with the answer for ``future``."""

    def wake(value: Any) -> None:
        # A closed loop (the host shut down mid-exchange) has nobody waiting.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(_settle, future, value)

    return wake


class McpAsgiApp(Generic[_S]):
    """The ASGI application of :meth:`ferromcp.Server.asgi_app`.

    Serves ``http`` scopes; answers ``lifespan`` (startup and shutdown
    complete, sessions closed at shutdown) and refuses ``websocket``.

    >>> import ferromcp
    >>> app = ferromcp.Server("s").asgi_app()
    >>> app.server.name
    's'
    """

    def __init__(self, server: _S, endpoint: _native.HttpEndpoint, path: str | None) -> None:
        self.server = server
        self.path = path
        self._endpoint = endpoint
        self._loop: asyncio.AbstractEventLoop | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "websocket":
            # Closing before accepting: the server answers 403.
            await send({"type": "websocket.close", "code": 1008})
        else:
            raise ValueError(f"unsupported ASGI scope type {kind!r}")

    def _bind_loop(self) -> asyncio.AbstractEventLoop:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._endpoint.use_event_loop(loop)
            self._loop = loop
        return loop

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self._bind_loop()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self._endpoint.close()
                if self._loop is not None:
                    self._endpoint.release_event_loop(self._loop)
                    self._loop = None
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        loop = self._bind_loop()
        path: str = scope["path"]
        # Starlette's Mount keeps the full path and adds the mount point to
        # root_path (older versions strip it from path): the endpoint's path
        # is relative to the mount either way.
        root: str = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :] or "/"
        client = scope.get("client")
        head: asyncio.Future[Any] = loop.create_future()
        exchange = self._endpoint.start(
            scope["method"],
            path,
            scope.get("query_string", b""),
            [(bytes(name), bytes(value)) for name, value in scope["headers"]],
            client[0] if client else None,
            _waker(loop, head),
        )
        pump = asyncio.create_task(_pump(receive, exchange))
        try:
            answered = await head
            if answered is None:
                return  # the client left before the answer
            status, headers = answered
            await send({"type": "http.response.start", "status": status, "headers": headers})
            while True:
                chunk_future: asyncio.Future[Any] = loop.create_future()
                exchange.next_chunk(_waker(loop, chunk_future))
                chunk = await chunk_future
                if chunk is None:
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                    return
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        finally:
            # Normal end, a failed send (client gone) or this task cancelled
            # (server shutdown): core stops the request if it still runs.
            exchange.cancel()
            pump.cancel()


async def _pump(receive: Receive, exchange: _native.Exchange) -> None:
    """Feeds the request body to core, then waits for the client to leave."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            exchange.abort_body()
            exchange.cancel()
            return
        if message["type"] != "http.request":
            continue
        body = message.get("body", b"")
        if body and not exchange.feed(body):
            break  # core answered without reading the rest
        if not message.get("more_body", False):
            exchange.end_body()
            break
    # The body is in; an ASGI server reports the client leaving as one more
    # message (uvicorn does while the response streams).
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            exchange.cancel()
            return
