"""Serving: many concurrent async handlers, the HTTP options of
run/serve/start (path, allowed hosts and origins, limits), and servers with every
kind of handler being garbage-collected once dropped."""

from __future__ import annotations

import asyncio
import gc
import http.client
import json
import socket
import threading
import time
import urllib.error
import urllib.request
import weakref
from collections.abc import Iterator
from typing import Any

import ferromcp
import pytest
from conftest import PROTOCOL_VERSION, StdioServer, params

SLEEPER = """
import asyncio
import ferromcp

server = ferromcp.Server("sleepers")

@server.tool
async def nap(n: int) -> int:
    await asyncio.sleep(0.1)
    return n

server.run()
"""


@pytest.fixture
def sleepers(tmp_path: Any) -> Iterator[StdioServer]:
    script = tmp_path / "sleepers.py"
    script.write_text(SLEEPER)
    server = StdioServer(script)
    yield server
    server.kill()


def test_100_concurrent_async_tools_overlap(sleepers: StdioServer) -> None:
    assert sleepers.call("nap", n=0)["structuredContent"] == {"result": 0}  # warm up
    started = time.monotonic()
    for i in range(100):
        sleepers.send(
            {"jsonrpc": "2.0", "id": 1000 + i, "method": "tools/call", "params": params(name="nap", arguments={"n": i})}
        )
    answers = {}
    while len(answers) < 100:
        message = sleepers.read()
        answers[message["id"]] = message["result"]["structuredContent"]["result"]
    elapsed = time.monotonic() - started
    assert answers == {1000 + i: i for i in range(100)}
    # 100 x 100 ms one after the other would take 10 s; overlapping, about
    # 100 ms (two waves of at most 64 in flight over stdio at worst).
    assert elapsed < 1.0, f"100 async naps took {elapsed:.2f} s"


# -- HTTP options ------------------------------------------------------------


def post(port: int, path: str, host: str | None = None, origin: str | None = None) -> tuple[int, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params()}
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": PROTOCOL_VERSION,
        "Mcp-Method": "tools/list",
    }
    if host is not None:
        headers["Host"] = host
    if origin is not None:
        headers["Origin"] = origin
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", json.dumps(body).encode(), headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_http_path_and_allowed_hosts_and_origins() -> None:
    server = ferromcp.Server("options")
    server.add_tool(lambda: "ok", name="ok")
    serving = server.start(
        "http",
        port=0,
        path="/api/mcp",
        allowed_hosts=["mcp.example.test"],
        allowed_origins=["https://app.example.test"],
    )
    try:
        port = serving.port
        assert port is not None
        status, reply = post(port, "/api/mcp", host="mcp.example.test", origin="https://app.example.test")
        assert status == 200 and reply["result"]["tools"][0]["name"] == "ok"
        assert post(port, "/mcp", host="mcp.example.test")[0] == 404
        assert post(port, "/api/mcp", host="127.0.0.1")[0] == 403  # not in allowed_hosts any more
        assert post(port, "/api/mcp", host="mcp.example.test", origin="https://evil.example")[0] == 403
    finally:
        serving.stop()
        assert serving.wait(10)


def test_http_limits_are_applied() -> None:
    server = ferromcp.Server("limits")
    server.add_tool(lambda: "ok", name="ok")
    # a silent connection is closed at the header timeout (here 0.3 s, the
    # idle timeout an hour); camelCase keys are accepted too
    serving = server.start("http", port=0, limits={"header_read_timeout": 0.3, "idleTimeout": 3600})
    try:
        port = serving.port
        assert port is not None
        with socket.create_connection(("127.0.0.1", port), timeout=10) as silent:
            started = time.monotonic()
            assert silent.recv(1) == b""  # closed by the server
            assert time.monotonic() - started < 5
        assert post(port, "/mcp")[0] == 200
    finally:
        serving.stop()
        assert serving.wait(10)


def test_legacy_sessions_per_address_follow_the_limit() -> None:
    """Behind a proxy every client has one address: the per-address cap of
    legacy sessions (64 by default) is an HTTP limit, here 2."""
    server = ferromcp.Server("sessions")
    serving = server.start("http", port=0, limits={"max_sessions_per_address": 2})
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    try:
        assert serving.port is not None
        statuses = []
        for _ in range(3):
            conn = http.client.HTTPConnection("127.0.0.1", serving.port, timeout=10)
            headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
            conn.request("POST", "/mcp", json.dumps(body), headers)
            response = conn.getresponse()
            response.read()
            statuses.append(response.status)
            conn.close()
        assert statuses == [200, 200, 429]
    finally:
        serving.stop()
        assert serving.wait(10)


@pytest.mark.parametrize(
    ("limits", "message"),
    [
        ({"idle_timeout": 0}, 'HTTP limit "idle_timeout" must be a positive number of seconds, got 0'),
        ({"max_connections": "many"}, 'HTTP limit "max_connections" must be a positive integer, got "many"'),
        ({"max_connections_per_address": True}, 'HTTP limit "max_connections_per_address" must be'),
        ({"idle": 1}, 'unknown HTTP limit "idle"'),
    ],
)
def test_bad_http_limits_raise_value_error_naming_the_key(limits: Any, message: str) -> None:
    server = ferromcp.Server("bad-limits")
    with pytest.raises(ValueError) as raised:
        server.start("http", port=0, limits=limits)
    assert message in str(raised.value)


def test_default_http_options_accept_loopback_only() -> None:
    server = ferromcp.Server("defaults")
    server.add_tool(lambda: "ok", name="ok")
    serving = server.start("http", port=0)
    try:
        port = serving.port
        assert port is not None
        assert post(port, "/mcp")[0] == 200
        assert post(port, "/mcp", host="evil.example")[0] == 403
    finally:
        serving.stop()
        assert serving.wait(10)


def test_serve_takes_the_http_options() -> None:
    server = ferromcp.Server("served")

    @server.tool
    async def hello() -> str:
        return "hi"

    result: dict[str, Any] = {}

    async def main() -> None:
        from conftest import free_port

        port = free_port()
        task = asyncio.create_task(server.serve("http", port=port, path="/p", allowed_hosts=["h.test"]))
        for _ in range(100):
            await asyncio.sleep(0.05)
            try:
                status, _reply = await asyncio.to_thread(post, port, "/p", "h.test")
                result["status"] = status
                break
            except OSError:
                continue
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert result["status"] == 200


# -- garbage collection ------------------------------------------------------


def test_a_dropped_server_with_every_kind_of_handler_is_collected() -> None:
    server = ferromcp.Server("gc-all")

    # Each handler refers back to the server: cycles through the native side.
    @server.tool
    async def tool(ctx: ferromcp.Context) -> str:
        return server.name  # noqa: F821 (the test deletes `server` to drop the cycle)

    @server.resource("mem://{id}", completions={"id": lambda value: [server.name]})  # noqa: F821
    def resource(id: str) -> str:
        return server.name  # noqa: F821

    @server.prompt(completions={"x": lambda value: [server.name]})  # noqa: F821
    async def prompt(x: str) -> str:
        return server.name  # noqa: F821

    native = weakref.ref(server._native)
    wrapper = weakref.ref(server)
    del server, tool, resource, prompt
    gc.collect()
    assert wrapper() is None
    assert native() is None


def test_a_stopped_server_that_served_asks_is_collected() -> None:
    server = ferromcp.Server("gc-served-asks")

    @server.tool
    async def ask(ctx: ferromcp.Context) -> str:
        answer = await ctx.elicit("name?", {"name": str})
        return f"{answer.content} {server.name}"  # noqa: F821

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        serving = server.start("http", port=0, event_loop=loop)
        port = serving.port
        assert port is not None
        from conftest import http_post

        caps = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
        first = http_post(
            port, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params(caps, name="ask", arguments={})}
        )
        assert first["result"]["resultType"] == "input_required"
        serving.stop()
        assert serving.wait(10)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
    native = weakref.ref(server._native)
    del server, ask
    gc.collect()
    assert native() is None


# -- caching hints -----------------------------------------------------------


def test_server_wide_caching_hints_and_a_resource_of_its_own() -> None:
    server = ferromcp.Server("cached", caching={"tools": (60_000, "private"), "resource_read": (5, "public")})
    server.add_tool(lambda: "ok", name="ok")
    server.add_resource(lambda: "a", "mem://a")
    server.add_resource(lambda: "b", "mem://b", ttl_ms=1_000, cache_scope="private")
    serving = server.start("http", port=0)
    try:
        port = serving.port
        assert port is not None
        from conftest import http_post

        def result(method: str, **fields: Any) -> dict[str, Any]:
            message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params(**fields)}
            headers = {"Mcp-Name": fields["uri"]} if "uri" in fields else None
            reply: dict[str, Any] = http_post(port, message, headers)["result"]
            return reply

        tools = result("tools/list")
        assert (tools["ttlMs"], tools["cacheScope"]) == (60_000, "private")
        a = result("resources/read", uri="mem://a")
        assert (a["ttlMs"], a["cacheScope"]) == (5, "public")
        b = result("resources/read", uri="mem://b")
        assert (b["ttlMs"], b["cacheScope"]) == (1_000, "private")
        listed = result("resources/list")
        assert (listed["ttlMs"], listed["cacheScope"]) == (0, "public")
    finally:
        serving.stop()
        assert serving.wait(10)


def test_bad_caching_hints_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown cacheable result"):
        ferromcp.Server("x", caching={"tool": (1, "public")})
    with pytest.raises(ValueError, match="cache_scope"):
        ferromcp.Server("x", caching={"tools": (1, "everyone")})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="cache_scope"):
        ferromcp.Server("x").add_resource(lambda: "", "mem://x", cache_scope="shared")  # type: ignore[arg-type]
