"""End to end over stdio: the example server and a server with sync, async
and failing tools, spoken to as a subprocess with newline-delimited
JSON-RPC (MCP 2026-07-28)."""

from __future__ import annotations

import signal
import time

import pytest
from conftest import TIMEOUT, StdioServer


def test_example_lists_the_walking_skeleton_tools(example: StdioServer) -> None:
    response = example.request("tools/list")
    tools = response["result"]["tools"]
    assert tools == [
        {
            "name": "echo",
            "description": "Returns the text unchanged.",
            "inputSchema": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            },
        },
        {
            "name": "add",
            "description": "Adds two integers.",
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
            },
            "outputSchema": {
                "type": "object",
                "properties": {"result": {"type": "integer"}},
                "required": ["result"],
            },
        },
    ]


def test_example_calls(example: StdioServer) -> None:
    echo = example.call("echo", text="hello")
    assert echo["content"] == [{"type": "text", "text": "hello"}]
    assert "isError" not in echo
    add = example.call("add", a=2, b=3)
    assert add["content"] == [{"type": "text", "text": "5"}]
    assert add["structuredContent"] == {"result": 5}
    assert add["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "ferromcp-echo", "version": "1.0.0"}


def test_invalid_arguments_are_rejected_by_core(example: StdioServer) -> None:
    response = example.request("tools/call", name="add", arguments={"a": "two", "b": 3})
    rejected = "error" in response or response["result"].get("isError") is True
    assert rejected, response
    # and the server keeps answering
    assert example.call("add", a=1, b=1)["structuredContent"] == {"result": 2}


def test_example_exits_cleanly_at_end_of_input(example: StdioServer) -> None:
    assert example.call("echo", text="bye")["content"][0]["text"] == "bye"
    assert example.close_stdin() == 0
    assert "Traceback" not in example.stderr()


def test_example_exits_cleanly_on_ctrl_c(example: StdioServer) -> None:
    assert example.call("echo", text="up")["content"][0]["text"] == "up"
    started = time.monotonic()
    example.proc.send_signal(signal.SIGINT)
    assert example.proc.wait(TIMEOUT) == 0
    assert time.monotonic() - started < 5
    assert "Traceback" not in example.stderr()


def test_sync_and_async_handlers(mixed: StdioServer) -> None:
    assert mixed.call("echo", text="sync")["content"] == [{"type": "text", "text": "sync"}]
    result = mixed.call("slow_add", a=20, b=22)
    assert result["structuredContent"] == {"result": 42}
    assert result["content"] == [{"type": "text", "text": "42"}]


def test_sync_handlers_run_off_the_main_thread(mixed: StdioServer) -> None:
    assert mixed.call("where")["structuredContent"] == {"main_thread": False}


def test_async_handlers_run_on_the_serving_loop(mixed: StdioServer) -> None:
    assert mixed.call("async_where")["structuredContent"] == {"on_loop": True}


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("boom", {}, "ValueError: boom"),
        ("boom", {"message": "custom"}, "ValueError: custom"),
        ("async_boom", {}, "RuntimeError: async boom"),
    ],
)
def test_raising_handler_gives_is_error_and_server_keeps_serving(
    mixed: StdioServer, tool: str, arguments: dict[str, str], message: str
) -> None:
    result = mixed.call(tool, **arguments)
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": message}]
    # the very next calls still succeed, sync and async
    assert mixed.call("echo", text="still here")["content"][0]["text"] == "still here"
    assert mixed.call("slow_add", a=1, b=2)["structuredContent"] == {"result": 3}


def test_mcp_error_in_handler_is_a_json_rpc_error(mixed: StdioServer) -> None:
    response = mixed.request("tools/call", name="reject", arguments={"value": 7})
    assert response["error"]["code"] == -32602
    assert response["error"]["message"] == "value is not acceptable"
    assert response["error"]["data"] == {"value": 7}
    assert mixed.call("echo", text="ok")["content"][0]["text"] == "ok"


def test_structured_results(mixed: StdioServer) -> None:
    stats = mixed.call("stats", values=[1, 2, 3, 4])
    assert stats["structuredContent"] == {"count": 4, "mean": 2.5}
    point = mixed.call("point", x=1, y=-2)
    assert point["structuredContent"] == {"x": 1, "y": -2}


def test_tool_result_passes_through(mixed: StdioServer) -> None:
    result = mixed.call("rich")
    assert result["content"] == [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}]
    assert result["structuredContent"] == {"n": 2}


def test_unserializable_result_is_a_tool_error(mixed: StdioServer) -> None:
    result = mixed.call("unserializable")
    assert result["isError"] is True
    assert "not JSON serializable" in result["content"][0]["text"]
    assert mixed.call("echo", text="fine")["content"][0]["text"] == "fine"


def test_json_values_round_trip(mixed: StdioServer) -> None:
    value = {
        "null": None,
        "bools": [True, False],
        "ints": [0, -1, 2**53, -(2**63), 2**64 - 1],
        "floats": [0.5, -1e300],
        "text": "héllo \u2603 \"quoted\"\n",
        "nested": {"list": [[], {}, [1, {"a": [None]}]]},
    }
    assert mixed.call("roundtrip", value=value)["structuredContent"] == value


def test_context_reaches_handler(mixed: StdioServer) -> None:
    assert mixed.call("whoami")["content"][0]["text"] == "2026-07-28"


def test_context_sends_progress_and_logs(mixed: StdioServer) -> None:
    messages = mixed.exchange(
        "tools/call",
        meta={"progressToken": "tok", "io.modelcontextprotocol/logLevel": "info"},
        name="count",
        arguments={"n": 2},
    )
    *notifications, response = messages
    progress = [m["params"] for m in notifications if m.get("method") == "notifications/progress"]
    assert progress == [
        {"progressToken": "tok", "progress": 1.0, "total": 2.0, "message": "step 1"},
        {"progressToken": "tok", "progress": 2.0, "total": 2.0, "message": "step 2"},
    ]
    logs = [m["params"] for m in notifications if m.get("method") == "notifications/message"]
    assert logs == [{"level": "info", "logger": "count", "data": {"counted": 2}}]
    assert response["result"]["structuredContent"] == {"result": 2}


def test_no_progress_without_a_token(mixed: StdioServer) -> None:
    messages = mixed.exchange("tools/call", name="count", arguments={"n": 3})
    assert len(messages) == 1
    assert messages[0]["result"]["structuredContent"] == {"result": 3}


def test_print_in_handler_does_not_corrupt_stdout(mixed: StdioServer) -> None:
    assert mixed.call("chatty")["content"][0]["text"] == "ok"
    assert mixed.call("echo", text="after")["content"][0]["text"] == "after"
    assert mixed.close_stdin() == 0
    assert "this goes to stderr while serving stdio" in mixed.stderr()


def test_async_server_exits_cleanly_on_ctrl_c(mixed: StdioServer) -> None:
    assert mixed.call("slow_add", a=1, b=1)["structuredContent"] == {"result": 2}
    mixed.proc.send_signal(signal.SIGINT)
    assert mixed.proc.wait(TIMEOUT) == 0
    assert "Traceback" not in mixed.stderr()


def test_async_server_exits_cleanly_at_end_of_input(mixed: StdioServer) -> None:
    assert mixed.call("slow_add", a=2, b=2)["structuredContent"] == {"result": 4}
    assert mixed.close_stdin() == 0
    assert "Traceback" not in mixed.stderr()
