"""Every kind of handler runs through the one host-call adapter, and what a
callable returns becomes that kind's output by core's rule (server/output.rs).
Only tools have a public API yet; the private probe runs the other kinds."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from ferromcp import _native


def probe(kind: str, fn: Any, value: Any = None, loop: asyncio.AbstractEventLoop | None = None) -> str:
    return _native._probe_host_call(kind, fn, {} if value is None else value, loop)


def test_a_tool_value_is_kept_for_core_to_shape() -> None:
    assert probe("tool", lambda args, ctx: args["n"] + 1, {"n": 1}) == "Value(Number(2))"


def test_a_prompt_string_is_one_user_message() -> None:
    assert probe("prompt", lambda args, ctx: "hello") == 'Text("hello")'


def test_a_prompt_message_list_is_checked_by_core() -> None:
    message = {"role": "user", "content": {"type": "text", "text": "x"}}
    assert probe("prompt", lambda args, ctx: [message]).startswith("Messages(")
    with pytest.raises(ValueError, match="invalid prompt result: item 0 is not a valid PromptMessage"):
        probe("prompt", lambda args, ctx: [{"role": "robot"}])


def test_resource_and_completion_shapes() -> None:
    assert probe("resource", lambda req, ctx: "body") == 'Text("body")'
    assert "values: [\"a\", \"b\"]" in probe("completion", lambda params, ctx: ["a", "b"])
    with pytest.raises(ValueError, match="invalid completion result"):
        probe("completion", lambda params, ctx: 3)


def test_the_context_is_none_outside_a_request() -> None:
    seen: list[Any] = []

    def prompt(args: Any, ctx: Any) -> str:
        seen.append(ctx)
        return "x"

    probe("prompt", prompt)
    assert seen == [None]


def test_an_exception_is_a_handler_error() -> None:
    def boom(args: Any, ctx: Any) -> str:
        raise KeyError("missing")

    with pytest.raises(ValueError, match="KeyError"):
        probe("prompt", boom)


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    event_loop = asyncio.new_event_loop()
    thread = threading.Thread(target=event_loop.run_forever, daemon=True)
    thread.start()
    yield event_loop
    event_loop.call_soon_threadsafe(event_loop.stop)
    thread.join(5)
    event_loop.close()


def test_an_async_prompt_runs_on_the_loop(loop: asyncio.AbstractEventLoop) -> None:
    async def prompt(args: Any, ctx: Any) -> str:
        await asyncio.sleep(0)
        return "later"

    assert probe("prompt", prompt, loop=loop) == 'Text("later")'


def test_tool_result_is_assembled_and_checked_by_core() -> None:
    import ferromcp

    result = ferromcp.ToolResult(["a", {"type": "text", "text": "b"}], structured_content={"n": 1}, is_error=True)
    assert result.content == [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    assert result.structured_content == {"n": 1}
    assert result.is_error
    with pytest.raises(ValueError, match="invalid tool result: not a valid CallToolResult"):
        ferromcp.ToolResult([{"type": "no-such-block"}])
