"""Python objects held by the native server are visible to the garbage
collector: a dropped server whose tools refer back to it is collected."""

from __future__ import annotations

import gc
import weakref

import ferromcp


def test_dropped_server_with_a_reference_cycle_is_collected() -> None:
    server = ferromcp.Server("gc")

    @server.tool
    def name() -> str:
        # refers to the server: server -> native -> handler -> this function -> server
        return server.name  # noqa: F821 (the test deletes `server` to drop the cycle)

    wrapper = weakref.ref(server)
    native = weakref.ref(server._native)
    del server, name
    gc.collect()
    assert wrapper() is None
    assert native() is None


def test_stopped_server_is_collected() -> None:
    server = ferromcp.Server("gc-served")

    @server.tool
    async def name() -> str:
        return server.name  # noqa: F821 (the test deletes `server` to drop the cycle)

    serving = server.start("http", port=0)
    serving.stop()
    assert serving.wait(10)
    native = weakref.ref(server._native)
    del server, name
    gc.collect()
    assert native() is None


def test_a_serving_server_stays_alive_until_stopped() -> None:
    """A running transport keeps its server (and the tools) alive even when
    no Python variable refers to it any more; once stopped, the collector
    frees it."""
    from conftest import http_post, params

    server = ferromcp.Server("outlived")

    @server.tool
    def ping() -> str:
        return "pong"

    ping.server = server  # type: ignore[attr-defined]  # a cycle through the handler
    serving = server.start("http", port=0)
    native = weakref.ref(server._native)
    del server, ping
    gc.collect()
    try:
        assert native() is not None
        assert serving.port is not None
        for request_id in (1, 2):
            response = http_post(
                serving.port,
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "method": "tools/call",
                    "params": params(name="ping", arguments={}),
                },
            )
            assert response["result"]["content"] == [{"type": "text", "text": "pong"}]
    finally:
        serving.stop()
        assert serving.wait(10)
    gc.collect()
    assert native() is None


def test_every_held_object_is_visible_to_the_collector() -> None:
    """The handler table (keyed by kind and name), the json default and the
    serving loop are all reported by the native server's traversal."""
    import asyncio

    from ferromcp._json import json_default as default

    server = ferromcp.Server("gc-traverse")

    @server.tool
    def first() -> str:
        return "1"

    @server.tool
    def second() -> str:
        return "2"

    referents = gc.get_referents(server._native)
    # The native layer holds the adapted callables; each tool contributes one.
    held = [r for r in referents if callable(r) and not isinstance(r, type) and r is not default]
    assert len(held) == 2
    assert any(r is default for r in referents)
    loop = asyncio.new_event_loop()
    try:
        serving = server._native.start_http("127.0.0.1", 0, loop)
        assert any(r is loop for r in gc.get_referents(server._native))
        serving.stop()
        assert serving.wait(10)
    finally:
        loop.close()
    server.remove_tool("first")
    held = [r for r in gc.get_referents(server._native) if callable(r) and not isinstance(r, type) and r is not default]
    assert len(held) == 1
