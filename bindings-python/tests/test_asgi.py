"""`Server.asgi_app()` mounted in FastAPI under a sub-path, served by a real
uvicorn, spoken to with httpx: the same protocol rules as `server.run("http")`."""

from __future__ import annotations

import asyncio
import doctest
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import ferromcp
import ferromcp.asgi
import httpx
import pytest
from conftest import META, SERVERS, TIMEOUT, free_port, wait_for_port


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "fastapi_app:app", "--port", str(port), "--log-level", "warning"],
        cwd=SERVERS,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(TIMEOUT)
        finally:
            if proc.poll() is None:
                proc.kill()
            assert proc.stderr is not None
            errors = proc.stderr.read().decode()
            proc.stderr.close()
            assert "Traceback" not in errors, errors


def headers(method: str, name: str | None = None, version: str = "2026-07-28") -> dict[str, str]:
    h = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": version,
        "Mcp-Method": method,
    }
    if name is not None:
        h["Mcp-Name"] = name
    return h


def call(tool: str, request_id: int, meta: dict[str, Any] | None = None, **arguments: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": {**META, **(meta or {})}},
    }


def sse_messages(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[len("data: ") :]) for line in text.splitlines() if line.startswith("data: {")]


def test_the_host_app_keeps_its_routes(base_url: str) -> None:
    assert httpx.get(f"{base_url}/health").json() == {"status": "ok"}


def test_2026_call_under_the_mount(base_url: str) -> None:
    response = httpx.post(
        f"{base_url}/agents/mcp", json=call("echo", 1, text="mounted"), headers=headers("tools/call", "echo")
    )
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    assert response.json()["result"]["content"] == [{"type": "text", "text": "mounted"}]
    # Only the endpoint's path answers inside the mount.
    elsewhere = httpx.post(
        f"{base_url}/agents/other", json=call("echo", 2, text="x"), headers=headers("tools/call", "echo")
    )
    assert elsewhere.status_code == 404


def test_progress_streams_as_sse_events(base_url: str) -> None:
    body = call("steps", 3, meta={"progressToken": "t"}, n=3)
    arrivals: list[float] = []
    messages: list[dict[str, Any]] = []
    with httpx.stream(
        "POST", f"{base_url}/agents/mcp", json=body, headers=headers("tools/call", "steps"), timeout=TIMEOUT
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        for line in response.iter_lines():
            if line.startswith("data: "):
                arrivals.append(time.monotonic())
                messages.append(json.loads(line[len("data: ") :]))
    assert [m.get("method") for m in messages[:3]] == ["notifications/progress"] * 3
    assert [m["params"]["progress"] for m in messages[:3]] == [1, 2, 3]
    assert messages[3]["id"] == 3
    assert messages[3]["result"]["content"][0]["text"] == "3 steps"
    # Flushed per event: the events arrived spread over the handler's
    # 150 ms, not all at once at the end.
    assert arrivals[-1] - arrivals[0] >= 0.08, arrivals


def test_2025_session_initialize_and_call(base_url: str) -> None:
    url = f"{base_url}/agents/mcp"
    accept = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}},
    }
    response = httpx.post(url, json=initialize, headers=accept)
    assert response.status_code == 200, response.text
    assert response.json()["result"]["protocolVersion"] == "2025-11-25"
    assert response.json()["result"]["serverInfo"]["name"] == "mounted"
    session = {**accept, "Mcp-Session-Id": response.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
    initialized = httpx.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
    assert initialized.status_code == 202
    echo = {"name": "echo", "arguments": {"text": "o"}}
    called = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": echo}, headers=session)
    assert called.status_code == 200
    message = called.json() if called.headers["content-type"] == "application/json" else sse_messages(called.text)[-1]
    assert message["result"]["content"] == [{"type": "text", "text": "o"}]
    assert httpx.delete(url, headers=session).status_code == 200
    assert httpx.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "ping"}, headers=session).status_code == 404


def test_a_foreign_host_is_refused(base_url: str) -> None:
    response = httpx.post(
        f"{base_url}/agents/mcp",
        json=call("echo", 4, text="x"),
        headers={**headers("tools/call", "echo"), "Host": "evil.example"},
    )
    assert response.status_code == 403
    assert "evil.example" in response.json()["error"]["message"]


def test_mirrored_headers_are_checked(base_url: str) -> None:
    response = httpx.post(
        f"{base_url}/agents/mcp", json=call("echo", 5, text="x"), headers=headers("tools/call", "not-echo")
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32020


def test_leaving_mid_stream_cancels_the_handler(base_url: str) -> None:
    before = httpx.get(f"{base_url}/stats").json()["cancelled"]
    body = call("hang", 6, meta={"progressToken": "h"})
    with httpx.stream(
        "POST", f"{base_url}/agents/mcp", json=body, headers=headers("tools/call", "hang"), timeout=TIMEOUT
    ) as response:
        for line in response.iter_lines():
            if line.startswith("data: "):
                assert json.loads(line[len("data: ") :])["params"]["message"] == "started"
                break
    # The client hung up: uvicorn tells the app, the app cancels the
    # exchange, core cancels the request and the coroutine.
    deadline = time.monotonic() + TIMEOUT
    while httpx.get(f"{base_url}/stats").json()["cancelled"] == before:
        assert time.monotonic() < deadline, "the handler was not cancelled"
        time.sleep(0.05)


def test_docstring_examples() -> None:
    result = doctest.testmod(ferromcp.asgi)
    assert result.failed == 0
    assert result.attempted > 0


def test_body_limit(base_url: str) -> None:
    small = httpx.post(f"{base_url}/small/mcp", json=call("echo", 7, text="ok"), headers=headers("tools/call", "echo"))
    assert small.status_code == 200, small.text
    big = httpx.post(
        f"{base_url}/small/mcp", json=call("echo", 8, text="x" * 1000), headers=headers("tools/call", "echo")
    )
    assert big.status_code == 413


def test_lifespan_and_websocket_scopes() -> None:
    app = ferromcp.Server("scopes").asgi_app()
    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(dict(message))

    async def run() -> None:
        incoming = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])

        async def receive() -> Any:
            return next(incoming)

        await app({"type": "lifespan"}, receive, send)
        await app({"type": "websocket", "path": "/mcp"}, receive, send)

    asyncio.run(run())
    assert [m["type"] for m in sent] == [
        "lifespan.startup.complete",
        "lifespan.shutdown.complete",
        "websocket.close",
    ]
