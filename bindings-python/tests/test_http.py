"""Streamable HTTP: the example started with `--http PORT`, and servers
started in process with `Server.start("http", port=0)`."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator

import ferromcp
import pytest
from conftest import EXAMPLE, REPO, SERVERS, TIMEOUT, free_port, http_post, params, wait_for_port


def call(port: int, tool: str, request_id: int = 1, **arguments: object) -> dict:
    return http_post(
        port,
        {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params(name=tool, arguments=arguments)},
    )


@pytest.fixture
def example_http() -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(EXAMPLE), "--http", str(port)], cwd=REPO, stderr=subprocess.PIPE)
    try:
        wait_for_port(port, proc)
        yield proc, port
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(TIMEOUT)
        assert proc.stderr is not None
        proc.stderr.close()


def test_example_over_http(example_http: tuple[subprocess.Popen[bytes], int]) -> None:
    proc, port = example_http
    listed = http_post(port, {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params()})
    assert [t["name"] for t in listed["result"]["tools"]] == ["echo", "add"]
    added = call(port, "add", a=2, b=3)["result"]
    assert added["structuredContent"] == {"result": 5}
    assert added["content"] == [{"type": "text", "text": "5"}]
    echoed = call(port, "echo", text="over http")["result"]
    assert echoed["content"] == [{"type": "text", "text": "over http"}]
    proc.send_signal(signal.SIGINT)
    assert proc.wait(TIMEOUT) == 0
    assert proc.stderr is not None
    assert b"Traceback" not in proc.stderr.read()


def test_async_server_over_http() -> None:
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(SERVERS / "mixed_server.py"), "--http", str(port)], cwd=REPO)
    try:
        wait_for_port(port, proc)
        assert call(port, "slow_add", a=5, b=6)["result"]["structuredContent"] == {"result": 11}
        failed = call(port, "async_boom")["result"]
        assert failed["isError"] is True
        assert call(port, "slow_add", a=1, b=1)["result"]["structuredContent"] == {"result": 2}
        proc.send_signal(signal.SIGINT)
        assert proc.wait(TIMEOUT) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(TIMEOUT)


def test_start_in_process_with_port_zero() -> None:
    server = ferromcp.Server("in-process", version="2.0")

    @server.tool
    def double(x: float) -> float:
        """Doubles x."""
        return 2 * x

    serving = server.start("http", port=0)
    try:
        assert serving.port is not None and serving.port > 0
        assert serving.address == ("127.0.0.1", serving.port)
        assert not serving.done
        assert call(serving.port, "double", x=1.25)["result"]["structuredContent"] == {"result": 2.5}
    finally:
        serving.stop()
        assert serving.wait(TIMEOUT) is True
    assert serving.done


def test_address_in_use_is_a_transport_error() -> None:
    server = ferromcp.Server("busy")
    first = server.start("http", port=0)
    try:
        with pytest.raises(ferromcp.TransportError) as info:
            server.start("http", port=first.port or 0)
        assert isinstance(info.value, OSError)
    finally:
        first.stop()
        first.wait(TIMEOUT)


def test_serve_in_a_running_loop_and_cancel() -> None:
    """`await server.serve()` runs async tools on the caller's loop and stops
    when its task is cancelled."""
    server = ferromcp.Server("async-serve")
    seen_threads: list[threading.Thread] = []

    @server.tool
    async def where() -> str:
        seen_threads.append(threading.current_thread())
        return "here"

    port = free_port()

    async def main() -> str:
        task = asyncio.create_task(server.serve("http", port=port))
        await asyncio.to_thread(wait_for_port, port)
        response = await asyncio.to_thread(call, port, "where")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return response["result"]["content"][0]["text"]

    assert asyncio.run(main()) == "here"
    assert seen_threads == [threading.main_thread()]


def test_async_tool_without_a_loop_is_a_tool_error() -> None:
    server = ferromcp.Server("no-loop")

    @server.tool
    async def lonely() -> str:
        return "never"

    serving = server.start("http", port=0)
    try:
        assert serving.port is not None
        result = call(serving.port, "lonely")["result"]
        assert result["isError"] is True
        assert "no asyncio loop" in result["content"][0]["text"]
    finally:
        serving.stop()
        serving.wait(TIMEOUT)
