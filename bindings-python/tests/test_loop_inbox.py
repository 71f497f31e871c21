"""Awaited client calls without progress callbacks reach their asyncio loop
through the loop's inbox (bindings-python/src/loop_inbox.rs) instead of a
Python worker thread: many calls at once, several loops one after another,
errors and cancellation all still arrive on the right loop."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import ferromcp
import pytest


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    server = ferromcp.Server("inbox")

    @server.tool
    def echo(text: str) -> str:
        return text

    @server.tool
    def nap(seconds: float) -> str:
        # A plain def: a server started in the background has no loop for
        # async handlers. It runs on a worker thread; the client cancels.
        time.sleep(seconds)
        return "rested"

    serving = server.start("http", port=0)
    yield f"http://127.0.0.1:{serving.port}/mcp"
    serving.stop()
    serving.wait(10)


def test_concurrent_calls_on_several_loops(url: str) -> None:
    async def main() -> None:
        async with ferromcp.Client.http(url) as client:
            texts = [f"t{i}" for i in range(200)]
            results = await asyncio.gather(*(client.call_tool("echo", {"text": t}) for t in texts))
            assert [r.text for r in results] == texts
            # The loop got its inbox (one per loop, reused by every call).
            assert hasattr(asyncio.get_running_loop(), "_ferromcp_inbox")

    for _ in range(3):  # a fresh loop each time: each gets its own inbox
        asyncio.run(main())


def test_errors_and_cancellation_still_arrive(url: str) -> None:
    async def main() -> None:
        async with ferromcp.Client.http(url) as client:
            with pytest.raises(ferromcp.InvalidParamsError):
                await client.call_tool("no_such_tool")
            task = asyncio.create_task(client.call_tool("nap", {"seconds": 5}))
            await asyncio.sleep(0.1)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            # The connection still serves after the cancelled call.
            assert (await client.call_tool("echo", {"text": "after"})).text == "after"

    asyncio.run(main())
