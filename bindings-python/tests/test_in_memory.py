"""`Client.in_memory` and `SyncClient.in_memory`: a client of a server of
this process over core's in-memory pipe (no socket, no subprocess), the way
a server is tested with pytest. The whole protocol goes through it: plain
and async handlers (on the client's loop), questions for input, tasks,
listen streams, both eras."""

from __future__ import annotations

import asyncio
import gc
import re
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

import ferromcp
import pytest
from conftest import TIMEOUT

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """Runs a test's coroutine, failing it rather than hanging."""
    return asyncio.run(asyncio.wait_for(main, TIMEOUT))


def make_server() -> ferromcp.Server:
    """A plain and an async tool, one that asks for input (sync and async),
    and task tools (one that asks inside its task)."""
    # Clients poll a task at the interval the server suggests (500 ms by default).
    server = ferromcp.Server("memory", version="2.0", tasks={"poll_interval_ms": 10})

    @server.tool
    def add(a: int, b: int) -> int:
        """A plain def: runs on a worker thread."""
        return a + b

    @server.tool
    async def greet(name: str) -> str:
        """An async def: runs on the client's loop."""
        await asyncio.sleep(0)
        return f"hello {name} from {threading.current_thread().name}"

    @server.tool
    def confirm(action: str, ctx: ferromcp.Context) -> str:
        """A plain def whose question blocks until the client answers."""
        answer = ctx.elicit(f"{action}?", {"ok": bool})
        return f"{action}: {'yes' if answer.accepted and answer.content['ok'] else 'no'}"

    @server.tool
    async def ask_name(ctx: ferromcp.Context) -> str:
        """An async def whose question is awaited."""
        answer = await ctx.elicit("Your name?", {"name": str})
        return f"named {answer.content['name']}" if answer.accepted else "anonymous"

    @server.tool(task=True)
    async def render(pages: int) -> str:
        """A task: the client follows it to its result."""
        await asyncio.sleep(0.01 * pages)
        return f"rendered {pages} pages"

    @server.tool(task=True)
    async def deploy(env: str, ctx: ferromcp.Context) -> str:
        """A task that asks inside it (answered through tasks/update)."""
        answer = await ctx.elicit(f"Deploy to {env}?", {"ok": bool}, key="confirm")
        return f"deployed to {env}" if answer.accepted and answer.content["ok"] else "kept"

    return server


def accept(params: dict[str, Any]) -> dict[str, Any]:
    """Fills every field the question asks for."""
    fields = params["requestedSchema"]["properties"]
    content = {k: ("Ada" if v.get("type") == "string" else True) for k, v in fields.items()}
    return {"action": "accept", "content": content}


# -- the async client ----------------------------------------------------------


def test_an_async_client_calls_plain_and_async_tools() -> None:
    server = make_server()

    async def main() -> None:
        async with ferromcp.Client.in_memory(server, name="tester") as client:
            assert (await client.call_tool("add", {"a": 2, "b": 3})).structured == {"result": 5}
            greeting = (await client.call_tool("greet", {"name": "Ada"})).text
            # The async handler ran on this loop, the test's own thread.
            assert greeting == f"hello Ada from {threading.current_thread().name}"
            found = await client.discover()
            assert found.server_info["name"] == "memory" and client.era == "modern"
            results = await asyncio.gather(*(client.call_tool("add", {"a": n, "b": n}) for n in range(20)))
            assert [r.structured for r in results] == [{"result": 2 * n} for n in range(20)]

    run(main())


def test_an_async_client_answers_questions_with_its_handlers() -> None:
    server = make_server()
    asked: list[str] = []

    async def on_elicitation(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        await asyncio.sleep(0)
        return accept(params)

    async def main() -> None:
        async with ferromcp.Client.in_memory(server, on_elicitation=on_elicitation) as client:
            assert (await client.call_tool("confirm", {"action": "ship"})).text == "ship: yes"
            assert (await client.call_tool("ask_name")).text == "named Ada"

    run(main())
    assert asked == ["ship?", "Your name?"]


def test_an_async_client_follows_a_task_to_its_result() -> None:
    server = make_server()

    async def main() -> None:
        async with ferromcp.Client.in_memory(server, on_elicitation=accept) as client:
            assert (await client.call_tool("render", {"pages": 2})).text == "rendered 2 pages"
            task = await client.start_tool_task("render", {"pages": 1})
            assert task.id is not None
            assert (await task.result()).text == "rendered 1 pages"
            # The question inside the task is answered by on_elicitation.
            assert (await client.call_tool("deploy", {"env": "prod"})).text == "deployed to prod"

    run(main())


def test_an_async_client_hears_of_a_tool_added_later() -> None:
    server = make_server()

    async def main() -> None:
        async with ferromcp.Client.in_memory(server) as client:
            async with client.listen(tools=True) as changes:
                assert changes.acknowledged == {"toolsListChanged": True}

                @server.tool
                async def late() -> str:
                    return "late"

                note = await changes.next()
                assert note is not None and note.method == "notifications/tools/list_changed"
            names = [tool.name async for tool in client.list_tools()]
            assert "late" in names
            assert (await client.call_tool("late")).text == "late"

    run(main())


def test_a_timed_out_call_cancels_the_async_handler() -> None:
    server = ferromcp.Server("slow")
    cancelled = asyncio.Event()

    @server.tool
    async def sleepy() -> str:
        try:
            await asyncio.sleep(TIMEOUT)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "awake"

    async def main() -> None:
        async with ferromcp.Client.in_memory(server) as client:
            with pytest.raises(ferromcp.RequestTimeoutError):
                await client.call_tool("sleepy", timeout=0.2)
            await asyncio.wait_for(cancelled.wait(), TIMEOUT)

    run(main())


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_both_eras_go_through_the_pipe(era: str) -> None:
    server = make_server()

    async def main() -> None:
        async with ferromcp.Client.in_memory(server, era=era, on_elicitation=accept) as client:  # type: ignore[arg-type]
            assert (await client.call_tool("confirm", {"action": "go"})).text == "go: yes"
            assert (await client.call_tool("greet", {"name": "Bo"})).text.startswith("hello Bo")
            assert client.era == era

    run(main())


# -- the blocking client -------------------------------------------------------


def test_a_sync_client_calls_plain_and_async_tools() -> None:
    server = make_server()
    with ferromcp.SyncClient.in_memory(server) as client:
        assert client.call_tool("add", {"a": 4, "b": 5}).structured == {"result": 9}
        # Async handlers run on the client's private loop thread.
        assert client.call_tool("greet", {"name": "Bob"}).text == "hello Bob from ferromcp-client-loop"
        assert [tool.name for tool in client.list_tools()] == [
            "add",
            "greet",
            "confirm",
            "ask_name",
            "render",
            "deploy",
        ]


def test_a_sync_client_answers_questions_and_follows_tasks() -> None:
    server = make_server()

    async def on_elicitation(params: dict[str, Any]) -> dict[str, Any]:
        return accept(params)

    with ferromcp.SyncClient.in_memory(server, on_elicitation=on_elicitation) as client:
        assert client.call_tool("confirm", {"action": "merge"}).text == "merge: yes"
        assert client.call_tool("ask_name").text == "named Ada"
        assert client.call_tool("render", {"pages": 3}).text == "rendered 3 pages"
        assert client.start_tool_task("deploy", {"env": "staging"}).result().text == "deployed to staging"
    with ferromcp.SyncClient.in_memory(server, on_elicitation=lambda params: {"action": "decline"}) as client:
        assert client.call_tool("confirm", {"action": "merge"}).text == "merge: no"


def test_a_sync_client_lists_and_hears_of_an_async_tool_added_later() -> None:
    server = make_server()
    with ferromcp.SyncClient.in_memory(server) as client:
        with client.listen(tools=True) as changes:

            @server.tool
            async def later() -> str:
                return "later"

            note = changes.next()
            assert note is not None and note.method == "notifications/tools/list_changed"
        assert "later" in [tool.name for tool in client.list_tools()]
        # Registered after connecting, still run: the loop thread is there.
        assert client.call_tool("later").text == "later"


def test_the_client_keeps_its_server_alive() -> None:
    client = ferromcp.SyncClient.in_memory(make_server())  # nothing else holds the server
    try:
        gc.collect()
        assert client.call_tool("greet", {"name": "Cy"}).text.startswith("hello Cy")
    finally:
        client.close()


def test_clients_one_after_another_and_side_by_side() -> None:
    server = make_server()

    async def main() -> None:
        async with ferromcp.Client.in_memory(server) as client:
            assert (await client.call_tool("greet", {"name": "A"})).text.startswith("hello A")

    # A loop that ran a closed client's calls is gone: later clients lend theirs.
    run(main())
    run(main())
    with ferromcp.SyncClient.in_memory(server) as first, ferromcp.SyncClient.in_memory(server) as second:
        assert first.call_tool("greet", {"name": "B"}).text.startswith("hello B")
        second.close()
        assert first.call_tool("greet", {"name": "C"}).text.startswith("hello C")


def test_a_client_left_open_on_a_finished_loop_does_not_hold_up_a_newer_one() -> None:
    server = make_server()

    async def leave_open() -> ferromcp.Client:
        client = await ferromcp.Client.in_memory(server)
        assert (await client.call_tool("greet", {"name": "E"})).text.startswith("hello E")
        return client

    stale = run(leave_open())  # never closed; its loop is closed now
    # The newest client's loop runs the server's async handlers.
    with ferromcp.SyncClient.in_memory(server) as client:
        assert client.call_tool("greet", {"name": "F"}).text == "hello F from ferromcp-client-loop"
    del stale


def test_a_server_served_elsewhere_keeps_its_own_loop() -> None:
    server = make_server()
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="serving-loop", daemon=True)
    thread.start()
    serving = server.start("http", port=0, event_loop=loop)
    try:
        with ferromcp.SyncClient.in_memory(server) as client:
            assert client.call_tool("greet", {"name": "D"}).text == "hello D from serving-loop"
    finally:
        serving.stop()
        assert serving.wait(TIMEOUT)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(TIMEOUT)
        loop.close()


# -- mistakes ------------------------------------------------------------------


@pytest.mark.parametrize("not_a_server", [object(), "memory", None])
def test_anything_but_a_server_is_refused(not_a_server: Any) -> None:
    refused = re.escape(f"an in-memory client's server is a ferromcp.Server, not {type(not_a_server).__name__}")
    with pytest.raises(TypeError, match=f"^{refused}$"):
        ferromcp.SyncClient.in_memory(not_a_server)
    with pytest.raises(TypeError, match=f"^{refused}$"):
        ferromcp.Client.in_memory(not_a_server)


def test_a_native_client_refuses_anything_but_a_native_server() -> None:
    from ferromcp import _native

    with pytest.raises(TypeError, match=r"a ferromcp\._native\.Server, not ferromcp\.server\.Server"):
        _native.Client.connect_in_memory(make_server(), None)  # the wrapper, not its native server


def test_an_unknown_setting_is_refused_before_connecting() -> None:
    with pytest.raises(ValueError, match="era"):
        ferromcp.SyncClient.in_memory(make_server(), era="newest")  # type: ignore[arg-type]


def test_a_closed_client_says_so() -> None:
    client = ferromcp.SyncClient.in_memory(make_server())
    client.close()
    client.close()  # again: nothing
    with pytest.raises(RuntimeError, match="closed"):
        client.call_tool("add", {"a": 1, "b": 1})
