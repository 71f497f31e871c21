"""Notification middleware: ``server.notification_middleware`` /
``add_notification_middleware`` and the same on ``Client`` and
``SyncClient``: plain links that see the notifications a server or a client
receives, in the one chain core runs (``Middleware::notification``,
``ClientMiddleware::notification``). These tests show the binding carries
the notification into Python and the verdict (stop, changed params, an
exception that passes it on) back, in memory, in both eras."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine
from typing import Any, Literal, TypeVar

import ferromcp
import pytest
from conftest import TIMEOUT
from ferromcp.middleware import CallNext, MiddlewareContext, MiddlewareNotification

T = TypeVar("T")
Era = Literal["modern", "legacy"]
ERAS: list[Era] = ["modern", "legacy"]
PROGRESS = "notifications/progress"


def run(main: Coroutine[Any, Any, T]) -> T:
    """Runs a test's coroutine, failing it rather than hanging."""
    return asyncio.run(asyncio.wait_for(main, TIMEOUT))


# --- server side ---------------------------------------------------------------


def test_a_server_link_sees_a_legacy_clients_initialized_in_the_order_added() -> None:
    server = ferromcp.Server("notes")
    _ = server.tool(name="ping")(lambda: "pong")
    seen: list[str] = []

    @server.notification_middleware
    def first(notification: MiddlewareNotification) -> None:
        seen.append(f"first {notification.method} {sorted(notification.params)}")

    @server.middleware
    def requests(ctx: MiddlewareContext, call_next: CallNext) -> dict[str, Any]:
        seen.append(f"request {ctx.method}")
        return call_next(ctx)

    server.add_notification_middleware(lambda n: seen.append(f"second {n.method}") and None)

    with ferromcp.SyncClient.in_memory(server, era="legacy") as client:
        assert client.call_tool("ping").text == "pong"
    # The handshake's notification went through both notification links
    # in order, after the request link saw initialize; the notification
    # links passed the requests straight on.
    assert seen == [
        "request initialize",
        "first notifications/initialized []",
        "second notifications/initialized",
        "request tools/call",
    ], seen


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("stop", [True, False], ids=["stopped", "passed"])
def test_a_server_link_that_stops_cancelled_keeps_the_tool_running(era: Era, stop: bool) -> None:
    server = ferromcp.Server("notes")
    outcome: list[str] = []
    seen: list[str] = []

    @server.tool
    async def slow() -> str:
        try:
            await asyncio.sleep(0.4)
        except asyncio.CancelledError:
            outcome.append("cancelled")
            raise
        outcome.append("finished")
        return "done"

    @server.notification_middleware
    def keep_running(notification: MiddlewareNotification) -> bool:
        seen.append(notification.method)
        return not (stop and notification.method == "notifications/cancelled")

    async def main() -> None:
        async with ferromcp.Client.in_memory(server, era=era) as client:
            call = asyncio.create_task(client.call_tool("slow"))
            await asyncio.sleep(0.1)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            deadline = time.monotonic() + 5
            while not outcome:
                assert time.monotonic() < deadline, "the tool neither finished nor was cancelled"
                await asyncio.sleep(0.02)

    run(main())
    assert "notifications/cancelled" in seen, seen
    # Stopped, the cancellation never reached the server: the tool ran to
    # its end. Passed on, it cancelled the tool (the control).
    assert outcome == (["finished"] if stop else ["cancelled"])


def test_a_server_links_exception_is_logged_and_passes_the_notification_on(caplog: pytest.LogCaptureFixture) -> None:
    server = ferromcp.Server("notes")
    _ = server.tool(name="ping")(lambda: "pong")
    after: list[dict[str, Any]] = []

    @server.notification_middleware
    def broken(notification: MiddlewareNotification) -> bool:
        notification.params["spoiled"] = True
        raise ValueError("link bug")

    @server.notification_middleware
    def later(notification: MiddlewareNotification) -> None:
        after.append(dict(notification.params))

    with (
        caplog.at_level(logging.ERROR, logger="ferromcp.middleware"),
        ferromcp.SyncClient.in_memory(server, era="legacy") as client,
    ):
        # The session went on: the initialized notification was not lost.
        assert client.call_tool("ping").text == "pong"
    # The next link got it as it came, without the raising link's change.
    assert after == [{}]
    records = [r for r in caplog.records if r.name == "ferromcp.middleware"]
    assert len(records) == 1, records
    assert "notifications/initialized" in records[0].getMessage()
    assert records[0].exc_info is not None and isinstance(records[0].exc_info[1], ValueError)


def test_notification_links_are_plain_callables() -> None:
    server = ferromcp.Server("notes")

    async def later(notification: MiddlewareNotification) -> None:
        pass

    with pytest.raises(TypeError, match="plain def"):
        server.add_notification_middleware(later)
    with pytest.raises(TypeError, match="not int"):
        server.add_notification_middleware(3)  # type: ignore[arg-type]
    with ferromcp.SyncClient.in_memory(server) as client, pytest.raises(TypeError, match="plain def"):
        client.add_notification_middleware(later)
    with pytest.raises(TypeError, match="plain def"):
        ferromcp.Client.in_memory(server).add_notification_middleware(later)


# --- client side ---------------------------------------------------------------


def progress_server() -> ferromcp.Server:
    """A server whose ``steps`` tool reports progress 1, 2 and 3."""
    server = ferromcp.Server("steps")

    @server.tool
    def steps(ctx: ferromcp.Context) -> str:
        for n, word in ((1, "one"), (2, "two"), (3, "three")):
            ctx.progress(n, total=3, message=word)
        return "done"

    return server


def edit(notification: MiddlewareNotification) -> bool:
    """Stops progress 2 and shouts progress 3's message."""
    if notification.method != PROGRESS:
        return True
    if notification.params.get("progress") == 2:
        return False
    if notification.params.get("progress") == 3:
        notification.params["message"] = "THREE"
    return True


@pytest.mark.parametrize("era", ERAS)
def test_a_sync_client_link_stops_and_changes_progress_before_the_callback(era: Era) -> None:
    got: list[tuple[float, str | None]] = []
    with ferromcp.SyncClient.in_memory(progress_server(), era=era) as client:
        client.add_notification_middleware(edit)
        result = client.call_tool("steps", progress=lambda p, total, message: got.append((p, message)))
        assert result.text == "done"
        assert client.era == era
    assert got == [(1.0, "one"), (3.0, "THREE")]


@pytest.mark.parametrize("era", ERAS)
def test_an_async_client_link_added_before_connecting_stops_and_changes_progress(era: Era) -> None:
    got: list[tuple[float, str | None]] = []
    seen: list[str] = []

    async def main() -> None:
        client = ferromcp.Client.in_memory(progress_server(), era=era)

        @client.notification_middleware
        def record(notification: MiddlewareNotification) -> None:
            seen.append(f"{notification.method} {notification.params.get('progress')}")

        client.add_notification_middleware(edit)
        async with client:
            result = await client.call_tool("steps", progress=lambda p, total, message: got.append((p, message)))
            assert result.text == "done"

    run(main())
    assert got == [(1.0, "one"), (3.0, "THREE")]
    # The first link saw every update, the stopped one included.
    assert seen == [f"{PROGRESS} 1.0", f"{PROGRESS} 2.0", f"{PROGRESS} 3.0"]


@pytest.mark.parametrize("era", ERAS)
def test_a_client_links_exception_is_logged_and_passes_the_notification_on(
    era: Era, caplog: pytest.LogCaptureFixture
) -> None:
    got: list[tuple[float, str | None]] = []

    def broken(notification: MiddlewareNotification) -> bool:
        notification.params["message"] = "spoiled"
        raise RuntimeError("link bug")

    with (
        caplog.at_level(logging.ERROR, logger="ferromcp.middleware"),
        ferromcp.SyncClient.in_memory(progress_server(), era=era) as client,
    ):
        client.add_notification_middleware(broken)
        client.add_notification_middleware(edit)
        client.call_tool("steps", progress=lambda p, total, message: got.append((p, message)))
    # Unchanged by the raising link, and still seen by the link after it.
    assert got == [(1.0, "one"), (3.0, "THREE")]
    records = [r for r in caplog.records if r.name == "ferromcp.middleware"]
    assert len(records) == 3, records
    assert all(r.exc_info is not None and isinstance(r.exc_info[1], RuntimeError) for r in records)
    assert PROGRESS in records[0].getMessage()


@pytest.mark.parametrize("era", ERAS)
def test_both_sides_over_http(era: Era) -> None:
    server = progress_server()
    received: list[str] = []
    server.add_notification_middleware(lambda notification: received.append(notification.method) and None)
    got: list[tuple[float, str | None]] = []
    serving = server.start("http", port=0)
    try:
        with ferromcp.SyncClient.http(f"http://127.0.0.1:{serving.port}/mcp", era=era) as client:
            client.add_notification_middleware(edit)
            assert client.call_tool("steps", progress=lambda p, total, message: got.append((p, message))).text == "done"
    finally:
        serving.stop()
        serving.wait(10)
    assert got == [(1.0, "one"), (3.0, "THREE")]
    # A 2025-11-25 session starts with the client's initialized
    # notification; a 2026-07-28 client sends none here.
    assert received == (["notifications/initialized"] if era == "legacy" else [])
