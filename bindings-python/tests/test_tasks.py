"""Tasks (SEP-2663) in Python: tools registered with ``task=`` and
``task_start=``, served by a Python server and called by the Python clients,
which follow the task to the tool's result; the wire seen raw, too."""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Iterator
from typing import Any

import ferromcp
import pytest
from conftest import TIMEOUT, http_post

TASKS = "io.modelcontextprotocol/tasks"


class Served:
    def __init__(self, url: str, port: int, cancelled: threading.Event) -> None:
        self.url = url
        self.port = port
        self.cancelled = cancelled


@pytest.fixture
def served() -> Iterator[Served]:
    server = ferromcp.Server("tasks")
    cancelled = threading.Event()

    @server.tool(task=True)
    async def slow(ms: int = 10) -> str:
        """An async task: sleeps, or notices its cancellation."""
        try:
            await asyncio.sleep(ms / 1000)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return f"slept {ms}"

    @server.tool(task=True)
    def confirm(ctx: ferromcp.Context) -> str:
        """A plain def task: its question waits for tasks/update."""
        answer = ctx.elicit("Sure?", {"ok": bool})
        return "confirmed" if answer.accepted and answer.content["ok"] else "kept"

    @server.tool(task="required", task_start="handler")
    async def later(ctx: ferromcp.Context) -> str:
        """Asks first (multi round-trip), then goes on as a task."""
        answer = await ctx.elicit("Name?", {"name": str})
        started = await ctx.start_task()
        await asyncio.sleep(0.02)
        return f"{answer.content['name']} started={started}"

    @server.tool
    def plain() -> str:
        return "plain"

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    serving = server.start("http", port=0, event_loop=loop)
    yield Served(f"http://127.0.0.1:{serving.port}/mcp", serving.port, cancelled)
    serving.stop()
    serving.wait(TIMEOUT)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(TIMEOUT)
    loop.close()


def on_elicitation(params: dict[str, Any]) -> dict[str, Any]:
    if params["message"] == "Name?":
        return {"action": "accept", "content": {"name": "Ada"}}
    return {"action": "accept", "content": {"ok": True}}


def test_the_client_follows_tasks_to_their_results(served: Served) -> None:
    with ferromcp.SyncClient.http(served.url, on_elicitation=on_elicitation) as client:
        assert client.call_tool("slow", {"ms": 30}).text == "slept 30"
        assert client.call_tool("confirm").text == "confirmed"
        assert client.call_tool("later").text == "Ada started=True"
        assert client.call_tool("plain").text == "plain"


def test_an_async_client_follows_them_too(served: Served) -> None:
    async def main() -> None:
        async with ferromcp.Client.http(served.url, on_elicitation=on_elicitation) as client:
            results = await asyncio.gather(client.call_tool("slow", {"ms": 20}), client.call_tool("confirm"))
            assert [r.text for r in results] == ["slept 20", "confirmed"]

    asyncio.run(asyncio.wait_for(main(), TIMEOUT))


def test_a_call_becomes_a_task_on_the_wire(served: Served) -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}},
    }

    def post(id_: int, method: str, name: str, params: dict[str, Any]) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": id_, "method": method, "params": {**params, "_meta": meta}}
        headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": name}
        return http_post(served.port, body, headers)

    created = post(1, "tools/call", "slow", {"name": "slow", "arguments": {"ms": 10}})["result"]
    assert created["resultType"] == "task" and created["status"] == "working"
    task_id = created["taskId"]
    deadline = time.monotonic() + TIMEOUT
    while True:
        got = post(2, "tasks/get", task_id, {"taskId": task_id})["result"]
        if got["status"] == "completed":
            break
        assert time.monotonic() < deadline, got
        time.sleep(0.01)
    assert got["result"]["content"][0]["text"] == "slept 10"


def test_cancelling_the_call_cancels_the_python_handler(served: Served) -> None:
    async def main() -> None:
        async with ferromcp.Client.http(served.url) as client:
            call = asyncio.ensure_future(client.call_tool("slow", {"ms": 60_000}))
            await asyncio.sleep(0.3)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call

    asyncio.run(asyncio.wait_for(main(), TIMEOUT))
    assert served.cancelled.wait(TIMEOUT), "tasks/cancel reached the handler"


def test_task_options_are_checked() -> None:
    server = ferromcp.Server("bad")
    with pytest.raises(ValueError, match="task must be"):
        server.add_tool(lambda: "x", name="x", task="always")  # type: ignore[typeddict-item]
    with pytest.raises(ValueError, match="task start"):
        server.add_tool(lambda: "x", name="y", task=True, task_start="later")  # type: ignore[typeddict-item]


def test_a_task_handle_shows_answers_and_cancels(served: Served) -> None:
    # No input handler: the caller answers the task's question itself.
    with ferromcp.SyncClient.http(served.url, capabilities={"elicitation": {}}) as client:
        task = client.start_tool_task("confirm")
        assert task.id is not None
        deadline = time.monotonic() + TIMEOUT
        while (state := task.refresh()) is not None and state.status != "input_required":
            assert time.monotonic() < deadline, state
            time.sleep(0.01)
        assert state is not None and len(state.input_requests) == 1
        (key,) = state.input_requests
        task.respond({key: {"action": "accept", "content": {"ok": True}}})
        assert task.result().text == "confirmed"
        # A task resumed by id from another handle sees the same end.
        resumed = client.tool_task(task.id)
        final = resumed.refresh()
        assert final is not None and final.done and final.result is not None
        assert final.result.text == "confirmed"

        slow = client.start_tool_task("slow", {"ms": 60_000})
        slow.cancel()
        # Cancellation is eventually consistent (SEP-2663): the ack comes
        # first, the status follows.
        deadline = time.monotonic() + TIMEOUT
        while (state := slow.refresh()) is not None and state.status != "cancelled":
            assert time.monotonic() < deadline, state
            time.sleep(0.01)
        # A tool without task support answers at once: no id, no state.
        plain = client.start_tool_task("plain")
        assert plain.id is None and plain.state is None
        assert plain.result().text == "plain"


def test_an_async_task_handle_is_awaitable(served: Served) -> None:
    async def main() -> None:
        async with ferromcp.Client.http(served.url) as client:
            task = await client.start_tool_task("slow", {"ms": 20})
            assert task.state is not None and task.state.status == "working"
            assert (await task).text == "slept 20"
            # Cancelling the awaiting asyncio task cancels the server's task.
            slow = await client.start_tool_task("slow", {"ms": 60_000})
            waiting = asyncio.ensure_future(slow.result())
            await asyncio.sleep(0.05)
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
            deadline = time.monotonic() + TIMEOUT
            while (state := await slow.refresh()) is not None and state.status != "cancelled":
                assert time.monotonic() < deadline, state
                await asyncio.sleep(0.01)

    asyncio.run(main())
    assert served.cancelled.wait(TIMEOUT)


def test_on_state_sees_each_change_of_the_followed_task(served: Served) -> None:
    seen: list[tuple[str, str | None]] = []  # (status, status_message)
    with ferromcp.SyncClient.http(served.url, on_elicitation=on_elicitation) as client:
        thread = threading.get_ident()

        def shown(state: ferromcp.TaskState) -> None:
            assert threading.get_ident() == thread  # on the calling thread
            seen.append((state.status, state.status_message))

        task = client.start_tool_task("confirm")
        assert task.result(on_state=shown).text == "confirmed"
    statuses = [status for status, _ in seen]
    assert statuses[0] == "working" and statuses[-1] == "completed", seen
    assert "input_required" in statuses, seen
    # Each change once: the same status with a new message is a change.
    assert all(a != b for a, b in itertools.pairwise(seen)), seen


def test_on_state_runs_on_the_loop_and_may_be_async(served: Served) -> None:
    async def main() -> list[str]:
        seen: list[str] = []
        loop = asyncio.get_running_loop()

        async def shown(state: ferromcp.TaskState) -> None:
            assert asyncio.get_running_loop() is loop
            seen.append(state.status)

        async with ferromcp.Client.http(served.url) as client:
            task = await client.start_tool_task("slow", {"ms": 50})
            assert (await task.result(on_state=shown)).text == "slept 50"
            await asyncio.sleep(0.05)  # an async callback runs as a task of the loop
        return seen

    seen = asyncio.run(main())
    assert seen[0] == "working" and seen[-1] == "completed", seen
