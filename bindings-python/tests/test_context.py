"""The Context in handlers: asking the client for input with the same code
under 2026-07-28 (input_required rounds, replayed by the core) and in a
2025-11-25 session (a live request), from plain and async handlers; and the
request info (protocol version, client info and capabilities, HTTP headers)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import SERVERS, TIMEOUT, StdioServer, free_port, http_post, params, wait_for_port

CAPS = {"elicitation": {}, "sampling": {}, "roots": {}}
MODERN = {"io.modelcontextprotocol/clientCapabilities": CAPS}


@pytest.fixture
def prims() -> Iterator[StdioServer]:
    server = StdioServer(SERVERS / "primitives_server.py")
    yield server
    server.kill()


# -- 2026-07-28: input_required rounds ---------------------------------------


@pytest.mark.parametrize("tool", ["ask_sync", "ask_async"])
def test_elicitation_under_2026_is_a_round_then_a_retry(prims: StdioServer, tool: str) -> None:
    first = prims.exchange("tools/call", meta=MODERN, name=tool, arguments={})[-1]["result"]
    assert first["resultType"] == "input_required"
    [(key, asked)] = first["inputRequests"].items()
    assert asked["method"] == "elicitation/create"
    assert asked["params"]["requestedSchema"] == {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    }
    retry = prims.exchange(
        "tools/call",
        meta=MODERN,
        name=tool,
        arguments={},
        inputResponses={key: {"action": "accept", "content": {"name": "Ada"}}},
        requestState=first["requestState"],
    )[-1]["result"]
    flavour = tool.removeprefix("ask_")
    assert retry["content"] == [{"type": "text", "text": f"{flavour} accept {{'name': 'Ada'}}"}]


def test_asks_gathered_together_go_into_one_round(prims: StdioServer) -> None:
    first = prims.exchange("tools/call", meta=MODERN, name="ask_all", arguments={})[-1]["result"]
    assert first["resultType"] == "input_required"
    assert set(first["inputRequests"]) == {"name", "reply", "roots"}
    answers = {
        "name": {"action": "accept", "content": {"name": "Ada"}},
        "reply": {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"},
        "roots": {"roots": [{"uri": "file:///work"}]},
    }
    done = prims.exchange(
        "tools/call",
        meta=MODERN,
        name="ask_all",
        arguments={},
        inputResponses=answers,
        requestState=first["requestState"],
    )[-1]["result"]
    assert done["content"][0]["text"] == "{'name': 'Ada'} hi ['file:///work']"


def test_a_round_ends_when_the_handler_does_not_at_the_first_ask(prims: StdioServer) -> None:
    first = prims.exchange("tools/call", meta=MODERN, name="ask_two_slowly", arguments={})[-1]["result"]
    assert set(first["inputRequests"]) == {"a", "b"}


def test_url_mode_elicitation(prims: StdioServer) -> None:
    first = prims.exchange("tools/call", meta=MODERN, name="ask_url", arguments={})[-1]["result"]
    [(key, asked)] = first["inputRequests"].items()
    params = asked["params"]
    assert (params["mode"], params["url"], params["message"]) == (
        "url",
        "https://auth.example.test/login",
        "Sign in, please.",
    )
    assert params["elicitationId"]
    done = prims.exchange(
        "tools/call",
        meta=MODERN,
        name="ask_url",
        arguments={},
        inputResponses={key: {"action": "accept"}},
        requestState=first["requestState"],
    )[-1]["result"]
    assert done["content"][0]["text"] == "url accept"


def test_an_ask_the_client_cannot_answer_is_minus_32021(prims: StdioServer) -> None:
    response = prims.exchange(
        "tools/call",
        meta={"io.modelcontextprotocol/clientCapabilities": {"sampling": {}}},
        name="ask_async",
        arguments={},
    )[-1]
    assert response["error"]["code"] == -32021
    assert response["error"]["data"] == {"requiredCapabilities": {"elicitation": {}}}


def test_input_required_is_not_swallowed_by_except_exception(prims: StdioServer) -> None:
    first = prims.exchange("tools/call", meta=MODERN, name="ask_uncaught", arguments={})[-1]["result"]
    assert first["resultType"] == "input_required"


# -- 2025-11-25 session: live requests ---------------------------------------


def legacy_session(server: StdioServer, capabilities: dict[str, Any]) -> None:
    server.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": capabilities,
                "clientInfo": {"name": "legacy-test", "version": "9.9"},
            },
        }
    )
    assert server.read()["result"]["protocolVersion"] == "2025-11-25"
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


@pytest.mark.parametrize("tool", ["ask_sync", "ask_async"])
def test_elicitation_in_a_2025_session_is_a_live_request(prims: StdioServer, tool: str) -> None:
    legacy_session(prims, {"elicitation": {}})
    prims.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": {}}})
    request = prims.read()
    assert request["method"] == "elicitation/create", request
    assert request["params"]["message"] == "Your name?"
    prims.send({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept", "content": {"name": "Bo"}}})
    response = prims.read()
    assert response["id"] == 2, response
    flavour = tool.removeprefix("ask_")
    assert response["result"]["content"] == [{"type": "text", "text": f"{flavour} accept {{'name': 'Bo'}}"}]


def test_gathered_asks_in_a_2025_session_are_concurrent_live_requests(prims: StdioServer) -> None:
    legacy_session(prims, CAPS)
    prims.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ask_all", "arguments": {}}})
    requests = {}
    while len(requests) < 3:
        message = prims.read()
        requests[message["method"]] = message
    answers = {
        "elicitation/create": {"action": "accept", "content": {"name": "Cy"}},
        "sampling/createMessage": {"role": "assistant", "content": {"type": "text", "text": "yo"}, "model": "m"},
        "roots/list": {"roots": [{"uri": "file:///a"}]},
    }
    for method, request in requests.items():
        prims.send({"jsonrpc": "2.0", "id": request["id"], "result": answers[method]})
    response = prims.read()
    assert response["result"]["content"][0]["text"] == "{'name': 'Cy'} yo ['file:///a']"


def test_a_refused_live_request_raises_in_the_handler(prims: StdioServer) -> None:
    legacy_session(prims, {"elicitation": {}})
    prims.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ask_async", "arguments": {}}})
    request = prims.read()
    prims.send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32603, "message": "user went away"}})
    response = prims.read()
    assert response["error"] == {"code": -32603, "message": "user went away"}
    # and the session keeps serving
    prims.send(
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}
    )
    assert prims.read()["result"]["structuredContent"] == {"result": 3}


def test_cancelling_a_request_frees_a_handler_blocked_on_a_live_ask(prims: StdioServer) -> None:
    legacy_session(prims, {"elicitation": {}})
    prims.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ask_watched", "arguments": {}}})
    request = prims.read()
    assert request["method"] == "elicitation/create", request
    prims.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}})
    outcome = "waiting"
    for n in range(50):
        prims.send(
            {
                "jsonrpc": "2.0",
                "id": 100 + n,
                "method": "tools/call",
                "params": {"name": "ask_outcome", "arguments": {}},
            }
        )
        response = prims.read()
        assert response["id"] == 100 + n, response  # nothing is sent for the cancelled request
        outcome = response["result"]["content"][0]["text"]
        if outcome != "waiting":
            break
        time.sleep(0.05)
    assert outcome == "RequestCancelledError"


def test_request_info_in_a_2025_session(prims: StdioServer) -> None:
    legacy_session(prims, {"roots": {}})
    prims.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "info", "arguments": {}}})
    info = prims.read()["result"]["structuredContent"]
    assert info["protocol_version"] == "2025-11-25"
    assert info["client_info"] == {"name": "legacy-test", "version": "9.9"}
    assert info["client_capabilities"] == {"roots": {}}
    assert info["headers"] == {}


def test_log_helpers_respect_the_requested_level(prims: StdioServer) -> None:
    received = prims.exchange(
        "tools/call",
        meta={"io.modelcontextprotocol/logLevel": "info", "progressToken": "p1"},
        name="chatty",
        arguments={},
    )
    logs = [m["params"] for m in received if m.get("method") == "notifications/message"]
    assert [(log["level"], log["data"]) for log in logs] == [("info", "i"), ("warning", {"w": 1}), ("error", "e")]
    assert logs[0]["logger"] == "x"
    progress = [m["params"] for m in received if m.get("method") == "notifications/progress"]
    assert progress == [{"progressToken": "p1", "progress": 1.0, "total": 2.0, "message": "half"}]
    assert received[-1]["result"]["structuredContent"] == {"result": [False, True, True, True]}


def test_request_info_under_2026(prims: StdioServer) -> None:
    client_info = {"name": "modern-test", "version": "1.2"}
    info = prims.exchange(
        "tools/call",
        meta={
            **MODERN,
            "io.modelcontextprotocol/clientInfo": client_info,
            "io.modelcontextprotocol/logLevel": "debug",
        },
        name="info",
        arguments={},
    )[-1]["result"]["structuredContent"]
    assert info == {
        "protocol_version": "2026-07-28",
        "client_info": client_info,
        "client_capabilities": CAPS,
        "method": "tools/call",
        "headers": {},
        "log_level": "debug",
    }


# -- HTTP headers ------------------------------------------------------------


@pytest.fixture
def http_prims() -> Iterator[int]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(SERVERS / "primitives_server.py"), "--http", str(port)])
    try:
        wait_for_port(port, proc)
        yield port
    finally:
        proc.terminate()
        proc.wait(TIMEOUT)


def test_http_headers_reach_the_handler(http_prims: int) -> None:
    response = http_post(
        http_prims,
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params(name="info", arguments={})},
        headers={"X-Tenant": "acme"},
    )
    headers = response["result"]["structuredContent"]["headers"]
    assert headers["x-tenant"] == "acme"
    assert headers["mcp-method"] == "tools/call"


def test_http_headers_reach_the_handler_in_a_2025_session(http_prims: int) -> None:
    def post(message: dict[str, Any], session: str | None = None) -> tuple[dict[str, str], bytes]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "X-Tenant": "old",
        }
        if session is not None:
            headers["Mcp-Session-Id"] = session
        request = urllib.request.Request(f"http://127.0.0.1:{http_prims}/mcp", json.dumps(message).encode(), headers)
        with urllib.request.urlopen(request, timeout=TIMEOUT) as reply:
            return dict(reply.headers), reply.read()

    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    reply_headers, _ = post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
    session = reply_headers["mcp-session-id"] if "mcp-session-id" in reply_headers else reply_headers["Mcp-Session-Id"]
    post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    _, body = post(
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "info", "arguments": {}}}, session
    )
    text = body.decode()
    if text.startswith("{"):
        response = json.loads(text)
    else:  # an SSE stream
        data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:") and line[5:].strip()]
        response = next(json.loads(d) for d in data if json.loads(d).get("id") == 2)
    info = response["result"]["structuredContent"]
    assert info["protocol_version"] == "2025-11-25"
    assert info["headers"]["x-tenant"] == "old"
