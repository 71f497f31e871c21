"""Resources, templates, prompts, completions and the decorator options, end
to end over stdio against tests/servers/primitives_server.py (MCP 2026-07-28)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from conftest import SERVERS, StdioServer

ICON = {"src": "https://example.test/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}


@pytest.fixture
def prims() -> Iterator[StdioServer]:
    server = StdioServer(SERVERS / "primitives_server.py")
    yield server
    server.kill()


def by(items: list[dict[str, Any]], key: str, value: str) -> dict[str, Any]:
    return next(item for item in items if item[key] == value)


def test_resources_list_with_every_decorator_option(prims: StdioServer) -> None:
    resources = prims.request("resources/list")["result"]["resources"]
    assert by(resources, "uri", "text://motd") == {
        "uri": "text://motd",
        "name": "motd",
        "title": "Message of the day",
        "description": "Today's message.",
        "mimeType": "text/plain",
        "size": 5,
        "annotations": {"audience": ["user"], "priority": 0.5},
        "icons": [ICON],
        "_meta": {"example.test/tag": "motd"},
    }
    templates = prims.request("resources/templates/list")["result"]["resourceTemplates"]
    assert by(templates, "uriTemplate", "users://{id}/profile") == {
        "uriTemplate": "users://{id}/profile",
        "name": "profile",
        "description": "A user's profile.",
        "mimeType": "application/json",
    }


def test_reading_text_bytes_and_items(prims: StdioServer) -> None:
    motd = prims.request("resources/read", uri="text://motd")["result"]
    assert motd["contents"] == [{"uri": "text://motd", "mimeType": "text/plain", "text": "hello"}]
    blob = prims.request("resources/read", uri="bin://blob")["result"]
    assert blob["contents"] == [{"uri": "bin://blob", "mimeType": "application/octet-stream", "blob": "AAEC"}]


def test_cache_hints_of_a_resource_and_the_server_default(prims: StdioServer) -> None:
    motd = prims.request("resources/read", uri="text://motd")["result"]
    assert (motd["ttlMs"], motd["cacheScope"]) == (60_000, "private")
    blob = prims.request("resources/read", uri="bin://blob")["result"]
    assert (blob["ttlMs"], blob["cacheScope"]) == (0, "public")


def test_template_variables_are_typed_from_the_signature(prims: StdioServer) -> None:
    profile = prims.request("resources/read", uri="users://42/profile")["result"]
    assert profile["contents"] == [{"uri": "users://42/profile", "text": "id=42 (int)"}]
    # an Enum and an int, with the context (async handler)
    paint = prims.request("resources/read", uri="paint://blue/3")["result"]
    assert paint["contents"][0]["text"] == "BLUE 3 via resources/read"


def test_a_variable_that_does_not_convert_is_invalid_params(prims: StdioServer) -> None:
    error = prims.request("resources/read", uri="users://abc/profile")["error"]
    assert error["code"] == -32602
    assert "id" in error["message"]
    error = prims.request("resources/read", uri="paint://green/3")["error"]
    assert error["code"] == -32602
    assert "'green' is not one of ['red', 'blue']" in error["message"]


def test_a_raising_resource_or_prompt_is_an_error_and_the_server_keeps_serving(prims: StdioServer) -> None:
    error = prims.request("resources/read", uri="broken://always")["error"]
    assert error["code"] == -32603
    assert error["message"] == "RuntimeError: the disk is on fire"
    error = prims.request("prompts/get", name="broken_prompt")["error"]
    assert error["message"] == "ValueError: no prompt today"
    assert prims.request("resources/read", uri="text://motd")["result"]["contents"][0]["text"] == "hello"


def test_unknown_resource_is_not_found(prims: StdioServer) -> None:
    error = prims.request("resources/read", uri="nothing://here")["error"]
    assert error["code"] == -32602
    assert error["data"] == {"uri": "nothing://here"}


def test_prompts_list_arguments_from_the_signature(prims: StdioServer) -> None:
    prompts = prims.request("prompts/list")["result"]["prompts"]
    assert by(prompts, "name", "greet") == {
        "name": "greet",
        "title": "Greeting",
        "description": "Greets someone.",
        "arguments": [
            {"name": "name", "description": "Who to greet", "required": True},
            {"name": "times", "required": False},
        ],
        "icons": [ICON],
        "_meta": {"example.test/tag": "greet"},
    }


def test_prompt_results_a_string_a_message_or_a_list(prims: StdioServer) -> None:
    greet = prims.request("prompts/get", name="greet", arguments={"name": "Ada", "times": "2"})["result"]
    assert greet["messages"] == [{"role": "user", "content": {"type": "text", "text": "Hello, Ada! Hello, Ada!"}}]
    single = prims.request("prompts/get", name="single", arguments={"text": "hi"})["result"]
    assert single["messages"] == [{"role": "assistant", "content": {"type": "text", "text": "hi"}}]
    conversation = prims.request("prompts/get", name="conversation", arguments={"topic": "Rust"})["result"]
    assert [m["role"] for m in conversation["messages"]] == ["user", "assistant"]


def test_prompt_arguments_convert_and_missing_ones_are_refused(prims: StdioServer) -> None:
    picky = prims.request("prompts/get", name="picky", arguments={"color": "red"})["result"]
    assert picky["messages"][0]["content"]["text"] == "picked red"
    error = prims.request("prompts/get", name="greet", arguments={"name": "Ada", "times": "twice"})["error"]
    assert error["code"] == -32602
    error = prims.request("prompts/get", name="greet", arguments={})["error"]
    assert error["code"] == -32602  # core: a required argument is missing


def test_completion_of_prompt_arguments_and_template_variables(prims: StdioServer) -> None:
    names = prims.request(
        "completion/complete",
        ref={"type": "ref/prompt", "name": "greet"},
        argument={"name": "name", "value": "A"},
    )["result"]["completion"]
    assert names == {"values": ["Ada", "Alan"], "total": 2, "hasMore": False}
    # the other arguments the client resolved reach the function
    with_context = prims.request(
        "completion/complete",
        ref={"type": "ref/prompt", "name": "greet"},
        argument={"name": "name", "value": "G"},
        context={"arguments": {"times": "2"}},
    )["result"]["completion"]
    assert with_context["values"] == ["Grace", "ctx:{'times': '2'}"]
    ids = prims.request(
        "completion/complete",
        ref={"type": "ref/resource", "uri": "users://{id}/profile"},
        argument={"name": "id", "value": "4"},
    )["result"]["completion"]
    assert ids["values"] == ["42"]
    # an argument nobody completes has no values
    nothing = prims.request(
        "completion/complete",
        ref={"type": "ref/prompt", "name": "greet"},
        argument={"name": "times", "value": ""},
    )["result"]["completion"]
    assert nothing["values"] == []


def test_tool_decorator_options_and_annotated_descriptions(prims: StdioServer) -> None:
    tools = prims.request("tools/list")["result"]["tools"]
    assert by(tools, "name", "add") == {
        "name": "add",
        "title": "Adder",
        "description": "Adds two integers.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "a": {"type": "integer", "description": "First"},
                "b": {"type": "integer", "description": "Second"},
            },
            "required": ["a", "b"],
        },
        "outputSchema": {
            "type": "object",
            "properties": {"result": {"type": "integer"}},
            "required": ["result"],
        },
        "annotations": {"readOnlyHint": True, "idempotentHint": True},
        "icons": [ICON],
        "_meta": {"example.test/tag": "add"},
    }


def test_a_raised_mcp_error_is_a_jsonrpc_error(prims: StdioServer) -> None:
    error = prims.request("tools/call", name="reject", arguments={})["error"]
    assert error == {"code": -32602, "message": "nope", "data": {"why": "testing"}}


LISTEN_ALL = {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True}


def listen(prims: StdioServer, notifications: dict[str, Any]) -> int:
    """Opens a subscriptions/listen stream (id 1000) and waits for its acknowledgement."""
    from conftest import params

    prims.send(
        {"jsonrpc": "2.0", "id": 1000, "method": "subscriptions/listen", "params": params(notifications=notifications)}
    )
    ack = prims.read()
    assert ack["method"] == "notifications/subscriptions/acknowledged", ack
    return 1000


def test_registration_changes_are_announced_on_listen_streams(prims: StdioServer) -> None:
    listen(prims, LISTEN_ALL)
    received = prims.exchange("tools/call", name="toggle", arguments={})
    methods = {m.get("method") for m in received[:-1]}
    assert received[-1]["result"]["content"][0]["text"] == "added"
    # announcements may trail the answer: read until all three arrived
    while (
        not {
            "notifications/tools/list_changed",
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed",
        }
        <= methods
    ):
        methods.add(prims.read().get("method"))
    assert "dynamic" in [t["name"] for t in prims.request("tools/list")["result"]["tools"]]


def test_notify_resource_updated_reaches_subscribers(prims: StdioServer) -> None:
    listen(prims, {"resourceSubscriptions": ["text://motd"]})
    received = prims.exchange("tools/call", name="touch", arguments={"uri": "text://motd"})
    notes = [m for m in received if m.get("method") == "notifications/resources/updated"]
    while not notes:
        message = prims.read()
        if message.get("method") == "notifications/resources/updated":
            notes.append(message)
    assert notes[0]["params"]["uri"] == "text://motd"
