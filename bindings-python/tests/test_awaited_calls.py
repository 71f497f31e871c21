"""Awaited client calls without progress callbacks are awaited as a native
future (``Pending`` in bindings-python/src/client_future.rs) whose
completion wakes the awaiting task at once, by one of two paths:

- ``reactor`` (Linux): polled by the loop's own thread and woken through
  the loop's selector (``LoopReactor`` in bindings-python/src/loop_reactor.rs,
  core's ``runtime::HostReactor``);
- ``inbox``: finished by a runtime worker and handed to the loop through its
  inbox (``LoopInbox`` in bindings-python/src/loop_dispatch.rs), which is
  what a loop that refuses the reactor gets (elsewhere than on Linux).

Either way many calls at once, several loops one after another, errors,
cancellation, timeouts and context variables all behave as with an
``asyncio.Future``."""

from __future__ import annotations

import asyncio
import contextvars
import gc
import sys
import time
import weakref
from collections.abc import Iterator

import ferromcp
import pytest

PATHS = ["reactor", "inbox"] if sys.platform == "linux" else ["inbox"]


@pytest.fixture(params=PATHS)
def path(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def take(path: str) -> None:
    """Makes the running loop's calls take ``path``: a loop whose reactor
    attribute is something else refuses the reactor."""
    if path == "inbox":
        asyncio.get_running_loop()._ferromcp_reactor = None  # type: ignore[attr-defined]


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


def test_concurrent_calls_on_several_loops(url: str, path: str) -> None:
    async def main() -> None:
        take(path)
        async with ferromcp.Client.http(url) as client:
            texts = [f"t{i}" for i in range(200)]
            results = await asyncio.gather(*(client.call_tool("echo", {"text": t}) for t in texts))
            assert [r.text for r in results] == texts
            # The loop got its reactor or inbox (one per loop, reused by
            # every call), and not the other.
            running = asyncio.get_running_loop()
            if path == "reactor":
                assert type(running._ferromcp_reactor).__name__ == "LoopReactor"  # type: ignore[attr-defined]
                assert not hasattr(running, "_ferromcp_inbox")
            else:
                assert hasattr(running, "_ferromcp_inbox")

    for _ in range(3):  # a fresh loop each time: each gets its own
        asyncio.run(main())


def test_errors_and_cancellation_still_arrive(url: str, path: str) -> None:
    async def main() -> None:
        take(path)
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


def test_context_variables_survive_the_await(url: str, path: str) -> None:
    # The task's wake-up runs in the task's context: a value set before the
    # call is still seen after it (run it in another context and it is not).
    current: contextvars.ContextVar[str] = contextvars.ContextVar("current", default="unset")

    async def one(client: ferromcp.Client, name: str) -> str:
        current.set(name)
        await client.call_tool("echo", {"text": name})
        return current.get()

    async def main() -> None:
        take(path)
        async with ferromcp.Client.http(url) as client:
            names = [f"task{i}" for i in range(20)]
            assert await asyncio.gather(*(one(client, n) for n in names)) == names

    asyncio.run(main())


def test_timeouts_and_cancel_messages(url: str, path: str) -> None:
    async def main() -> None:
        take(path)
        async with ferromcp.Client.http(url) as client:
            started = time.monotonic()
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(client.call_tool("nap", {"seconds": 5}), 0.2)
            assert time.monotonic() - started < 3
            task = asyncio.create_task(client.call_tool("nap", {"seconds": 5}))
            await asyncio.sleep(0.1)
            task.cancel("enough")
            with pytest.raises(asyncio.CancelledError, match="enough"):
                await task
            assert (await client.call_tool("echo", {"text": "still"})).text == "still"

    asyncio.run(main())


def test_native_awaitable_follows_the_future_protocol(url: str, path: str) -> None:
    # What asyncio.ensure_future / gather / wait do with a future-like object.
    async def main() -> None:
        take(path)
        async with ferromcp.Client.http(url) as client:
            loop = asyncio.get_running_loop()
            native = client._connected().request(
                "tools/call", {"name": "echo", "arguments": {"text": "raw"}}, None, None, None, loop
            )
            assert asyncio.isfuture(native)
            assert native.get_loop() is loop
            assert not native.done()
            with pytest.raises(asyncio.InvalidStateError):
                native.result()
            seen: list[object] = []
            native.add_done_callback(seen.append)
            assert (await native)["content"][0]["text"] == "raw"
            assert seen == [native] and native.done() and not native.cancelled()
            assert native.exception() is None
            # A callback added once it is done runs on the loop's next turn.
            native.add_done_callback(seen.append)
            await asyncio.sleep(0)
            assert seen == [native, native]
            # remove_done_callback, and a failed call's exception.
            failing = client._connected().request(
                "tools/call", {"name": "no_such_tool", "arguments": {}}, None, None, None, loop
            )
            failing.add_done_callback(seen.append)
            assert failing.remove_done_callback(seen.append) == 1
            done, _ = await asyncio.wait([failing])
            assert done == {failing}
            assert isinstance(failing.exception(), ferromcp.InvalidParamsError)
            assert len(seen) == 2
            # Cancelled before it is done: stays cancelled when the answer comes.
            napping = client._connected().request(
                "tools/call", {"name": "nap", "arguments": {"seconds": 0.2}}, None, None, None, loop
            )
            assert napping.cancel() and napping.cancelled() and not napping.cancel()
            await asyncio.sleep(0.4)
            assert napping.cancelled()
            with pytest.raises(asyncio.CancelledError):
                napping.result()

    asyncio.run(main())


@pytest.mark.skipif(sys.platform != "linux", reason="the reactor path is Linux's")
def test_a_loop_closed_mid_call_is_collected(url: str) -> None:
    """The loop holds its reactor, which holds the awaitables of its calls in
    flight, which hold the loop: the reactor reports them to the collector,
    so a loop closed with a call in flight is still collected, with the
    client that made the call (a client holds the loop it connected on)."""
    loop = asyncio.new_event_loop()

    async def start() -> weakref.ref[ferromcp.Client]:
        client = ferromcp.Client.http(url)
        await client.connect()
        in_flight = asyncio.ensure_future(client.call_tool("nap", {"seconds": 5}))
        await asyncio.sleep(0.1)  # the call is in flight on the reactor
        assert not in_flight.done()
        assert type(asyncio.get_running_loop()._ferromcp_reactor).__name__ == "LoopReactor"  # type: ignore[attr-defined]
        return weakref.ref(client)

    client = loop.run_until_complete(start())
    loop.close()
    collected = weakref.ref(loop)
    del loop
    gc.collect()
    assert collected() is None
    assert client() is None


@pytest.mark.skipif(sys.platform != "linux", reason="the reactor path is Linux's")
def test_uvloop_takes_the_reactor_path(url: str) -> None:
    """uvloop (what uvicorn runs on when it is installed) watches the
    reactor's descriptor like asyncio's own loop: calls, cancellation and
    timeouts behave the same there."""
    uvloop = pytest.importorskip("uvloop")

    async def main() -> None:
        async with ferromcp.Client.http(url) as client:
            texts = [f"u{i}" for i in range(100)]
            results = await asyncio.gather(*(client.call_tool("echo", {"text": t}) for t in texts))
            assert [r.text for r in results] == texts
            running = asyncio.get_running_loop()
            assert type(running).__module__.startswith("uvloop")
            assert type(running._ferromcp_reactor).__name__ == "LoopReactor"  # type: ignore[attr-defined]
            task = asyncio.create_task(client.call_tool("nap", {"seconds": 5}))
            await asyncio.sleep(0.1)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            started = time.monotonic()
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(client.call_tool("nap", {"seconds": 5}), 0.2)
            assert time.monotonic() - started < 3
            assert (await client.call_tool("echo", {"text": "after"})).text == "after"

    uvloop.run(main())
