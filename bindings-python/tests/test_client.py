"""The Python client (`ferromcp.Client`, `ferromcp.SyncClient`) against the Rust
everything-server (`target/bin/everything-server`, built by `make cargo-build`)
and Python servers."""

from __future__ import annotations

import asyncio
import gc
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ferromcp
import pytest
from conftest import REPO, SERVERS, TIMEOUT, free_port, wait_for_port
from ferromcp.client_types import CallToolResult, Page, Tool
from ferromcp.errors import (
    InvalidParamsError,
    McpError,
    MissingRequiredClientCapabilityError,
    RequestTimeoutError,
    TransportError,
)

EVERYTHING_SERVER = REPO / "target" / "bin" / "everything-server"

pytestmark = pytest.mark.skipif(
    not EVERYTHING_SERVER.exists(), reason="target/bin/everything-server is built by `make cargo-build`"
)


@pytest.fixture(scope="module")
def everything() -> Iterator[str]:
    """The Rust everything-server over HTTP; yields its URL."""
    port = free_port()
    proc = subprocess.Popen([str(EVERYTHING_SERVER), str(port)], stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait(TIMEOUT)


@pytest.fixture
def many_tools() -> Iterator[str]:
    """An in-process Python server with 250 tools (three pages of 100)."""
    server = ferromcp.Server("many")
    for i in range(250):
        server._native.add_tool(f"t{i:03}", None, {"type": "object"}, None, lambda args, ctx: "ok", False)
    serving = server.start("http", port=0)
    yield f"http://127.0.0.1:{serving.port}/mcp"
    serving.stop()
    serving.wait(TIMEOUT)


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT))


def fill(params: dict[str, Any]) -> dict[str, Any]:
    """Answers an elicitation form with a value per field."""
    fields = params.get("requestedSchema", {}).get("properties", {})
    return {"action": "accept", "content": {name: f"py-{name}" for name in fields}}


# --- every method -------------------------------------------------------------


def test_every_method_over_http(everything: str) -> None:
    async def main() -> None:
        async with ferromcp.Client.http(everything) as client:
            assert client.protocol_version == ferromcp.PROTOCOL_VERSION
            discovered = await client.discover()
            assert ferromcp.PROTOCOL_VERSION in discovered.supported_versions
            assert "tools" in discovered.capabilities

            tools = await client.list_tools()
            assert all(isinstance(t, Tool) for t in tools)
            assert "test_simple_text" in {t.name for t in tools}
            streamed = [t.name async for t in client.list_tools()]
            assert streamed == [t.name for t in tools]
            page = await client.list_tools_page()
            assert isinstance(page, Page) and [t.name for t in page] == streamed[: len(page)]

            result = await client.call_tool("test_simple_text")
            assert isinstance(result, CallToolResult)
            assert result.text == "This is a simple text response for testing."
            assert not result.is_error

            resources = await client.list_resources()
            assert "test://static-text" in {r.uri for r in resources}
            read = await client.read_resource("test://static-text")
            assert read.contents[0].uri == "test://static-text"
            assert read.text
            binary = await client.read_resource("test://static-binary")
            assert binary.contents[0].blob is not None and binary.contents[0].data

            templates = await client.list_resource_templates()
            assert "test://template/{id}/data" in {t.uri_template for t in templates}
            assert (await client.list_resource_templates_page()).items == templates

            prompts = await client.list_prompts()
            with_args = next(p for p in prompts if p.name == "test_prompt_with_arguments")
            assert [a.name for a in with_args.arguments] == ["arg1", "arg2"]
            got = await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
            assert got.text == "Prompt with arguments: arg1='a', arg2='b'"
            assert got.messages[0].role == "user"
            assert [p.name for p in (await client.list_prompts_page()).items] == [p.name for p in prompts]
            assert (await client.list_resources_page()).items == resources

            reference = {"type": "ref/prompt", "name": "test_prompt_with_arguments"}
            completed = await client.complete(reference, "arg1", "pa")
            assert completed.values == ["paris", "park", "party", "pasta"]
            assert completed.total == 4 and not completed.has_more
            in_context = await client.complete(reference, "arg2", "wo", context={"arg1": "paris"})
            assert in_context.values == ["world"]

    run(main())


def test_stdio_spawns_the_server_and_stops_it_on_close() -> None:
    async def main() -> None:
        async with ferromcp.Client.stdio(EVERYTHING_SERVER, ["--stdio"], env={"RUST_LOG": "warn"}) as client:
            result = await client.call_tool("test_simple_text")
            assert result.text == "This is a simple text response for testing."
            assert [p.name async for p in client.list_prompts()]

    run(main())


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_the_revision_is_detected_or_chosen(everything: str, era: str) -> None:
    async def main() -> None:
        async with ferromcp.Client.http(everything, era=era) as client:  # type: ignore[arg-type]
            assert client.era is None  # nothing asked yet
            discovered = await client.discover()
            assert discovered.server_info is not None
            assert discovered.server_info["name"] == "ferromcp-everything-server"
            if era == "auto":
                assert client.era == "modern"
                assert ferromcp.PROTOCOL_VERSION in discovered.supported_versions
            else:
                # A 2025-11-25 session: the initialize answer describes the server.
                assert client.era == "legacy"
                assert discovered.supported_versions == ["2025-11-25"]
                assert "tools" in discovered.capabilities
            assert (await client.call_tool("test_simple_text")).text

    run(main())


def test_typed_errors(everything: str) -> None:
    async def main() -> None:
        async with ferromcp.Client.http(everything) as client:
            with pytest.raises(InvalidParamsError) as unknown:
                await client.call_tool("no_such_tool")
            assert unknown.value.kind == "peerError"
            with pytest.raises(InvalidParamsError):
                await client.read_resource("test://no-such-resource")
            failed = await client.call_tool("test_error_handling")
            assert failed.is_error and failed.text

    run(main())


def test_connection_errors_are_typed() -> None:
    async def main() -> None:
        port = free_port()  # nothing listens there
        with pytest.raises(TransportError):
            async with ferromcp.Client.http(f"http://127.0.0.1:{port}/mcp", timeout=5) as client:
                await client.list_tools()
        with pytest.raises(TransportError):
            await ferromcp.Client.http("http://127.0.0.1:1/mcp", headers={"Mcp-Method": "x"})

    run(main())


# --- pages --------------------------------------------------------------------


def test_lists_follow_every_page(many_tools: str) -> None:
    async def main() -> None:
        async with ferromcp.Client.http(many_tools) as client:
            names = [t.name async for t in client.list_tools()]
            assert names == [f"t{i:03}" for i in range(250)]
            pages = [page async for page in client.list_tools().pages()]
            assert [len(page) for page in pages] == [100, 100, 50]
            assert [bool(page.next_cursor) for page in pages] == [True, True, False]
            first = await client.list_tools_page()
            assert len(first) == 100 and first.next_cursor
            second = await client.list_tools_page(first.next_cursor)
            assert second.items[0].name == "t100"
            third = await client.list_tools_page(second.next_cursor)
            assert len(third) == 50 and third.next_cursor is None

    run(main())


# --- call options: progress, timeout, cancellation ----------------------------


def test_progress_callbacks_run_on_the_loop(everything: str) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        seen: list[tuple[float, float | None, str | None]] = []
        on_loop: list[bool] = []

        def progress(value: float, total: float | None, message: str | None) -> None:
            on_loop.append(asyncio.get_running_loop() is loop)
            seen.append((value, total, message))

        async with ferromcp.Client.http(everything) as client:
            result = await client.call_tool("test_tool_with_progress", progress=progress)
            assert result.text == "Progress test completed"
            # Every update ran, in order, before the call returned.
            assert seen == [(0.0, 100.0, "step 1"), (50.0, 100.0, "step 2"), (100.0, 100.0, "step 3")]
        assert all(on_loop)

    run(main())


@pytest.fixture(params=["stdio", "http"])
def cancel_server(request: pytest.FixtureRequest) -> Iterator[ferromcp.Client]:
    """A Python server whose `wait_for_cancel` tool records its cancellation."""
    script = SERVERS / "cancel_server.py"
    if request.param == "stdio":
        yield ferromcp.Client.stdio(sys.executable, [str(script)], cwd=str(REPO))
        return
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(script), "--http", str(port)], cwd=REPO)
    try:
        wait_for_port(port, proc)
        yield ferromcp.Client.http(f"http://127.0.0.1:{port}/mcp")
    finally:
        proc.kill()
        proc.wait(TIMEOUT)


async def wait_for_file(path: Path) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        await asyncio.sleep(0.02)


def test_cancelling_the_task_cancels_the_server_handler(cancel_server: ferromcp.Client, tmp_path: Path) -> None:
    marker = tmp_path / "cancelled"

    async def main() -> None:
        async with cancel_server as client:
            call = asyncio.create_task(client.call_tool("wait_for_cancel", {"marker": str(marker)}))
            await wait_for_file(Path(str(marker) + ".started"))
            assert not marker.exists()
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            await wait_for_file(marker)
            # The connection still serves other calls.
            assert (await client.call_tool("sleepy", {"seconds": 0})).text == "awake"

    run(main())


def test_timeouts_raise_request_timeout_and_cancel(cancel_server: ferromcp.Client, tmp_path: Path) -> None:
    marker = tmp_path / "cancelled"

    async def main() -> None:
        async with cancel_server as client:
            started = time.monotonic()
            with pytest.raises(RequestTimeoutError) as timed_out:
                await client.call_tool("wait_for_cancel", {"marker": str(marker)}, timeout=0.5)
            assert isinstance(timed_out.value, TimeoutError)
            assert time.monotonic() - started < 10
            # On a loaded machine the handler may not have started within the
            # 0.5 s; then it must never start. One that started must see the
            # cancellation.
            timed_out_at = time.monotonic()
            handler_started = Path(f"{marker}.started")
            while not marker.exists():
                if not handler_started.exists() and time.monotonic() - timed_out_at > 3:
                    return
                assert time.monotonic() - timed_out_at < TIMEOUT, "the handler was never cancelled"
                await asyncio.sleep(0.02)

    run(main())


def test_the_loop_keeps_running_while_calls_wait(cancel_server: ferromcp.Client) -> None:
    async def main() -> None:
        async with cancel_server as client:
            ticks = 0

            async def ticker() -> None:
                nonlocal ticks
                while True:
                    ticks += 1
                    await asyncio.sleep(0.01)

            background = asyncio.create_task(ticker())
            results = await asyncio.gather(*(client.call_tool("sleepy", {"seconds": 0.3}) for _ in range(10)))
            background.cancel()
            assert [r.text for r in results] == ["awake"] * 10
            assert ticks >= 10  # the loop ran while ten calls were in flight

    run(main())


# --- handlers: elicitation, sampling, roots, under both revisions -------------


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_elicitation_is_answered_by_on_elicitation(everything: str, era: str) -> None:
    asked: list[dict[str, Any]] = []

    async def on_elicitation(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        await asyncio.sleep(0)
        return fill(params)

    async def main() -> None:
        client = ferromcp.Client.http(everything, era=era, on_elicitation=on_elicitation)  # type: ignore[arg-type]
        async with client:
            result = await client.call_tool("test_elicitation", {"message": "Who are you?"})
            assert "action=accept" in result.text and "py-username" in result.text, result.text
            assert asked[0]["message"] == "Who are you?"

    run(main())


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_sampling_and_roots_are_answered_by_plain_functions(everything: str, era: str) -> None:
    def on_sampling(params: dict[str, Any]) -> dict[str, Any]:
        asked = params["messages"][0]["content"]["text"]
        return {"role": "assistant", "content": {"type": "text", "text": f"echo {asked}"}, "model": "m"}

    def on_roots(params: dict[str, Any]) -> dict[str, Any]:
        return {"roots": [{"uri": "file:///work", "name": "work"}]}

    async def main() -> None:
        async with ferromcp.Client.http(
            everything,
            era=era,  # type: ignore[arg-type]
            on_sampling=on_sampling,
            on_roots=on_roots,
        ) as client:
            sampled = await client.call_tool("test_sampling", {"prompt": "2+2?"})
            assert sampled.text == "LLM response: echo 2+2?", sampled.text
            roots = await client.call_tool("test_input_required_result_list_roots")
            assert roots.text == "Client roots: file:///work"

    run(main())


def test_mrtr_rounds_use_the_handlers(everything: str) -> None:
    async def main() -> None:
        def answer(params: dict[str, Any]) -> dict[str, Any]:
            return {"action": "accept", "content": {k: "Ada" for k in params["requestedSchema"]["properties"]}}

        async with ferromcp.Client.http(everything, on_elicitation=answer) as client:
            result = await client.call_tool("test_input_required_result_elicitation")
            assert result.text == "Hello, Ada!"
            prompt = await client.get_prompt("test_input_required_result_prompt")
            assert prompt.text == "Prompt with context: Ada"

    run(main())


def test_a_raising_handler_fails_the_call_with_its_error(everything: str) -> None:
    def refuse(params: dict[str, Any]) -> dict[str, Any]:
        raise InvalidParamsError("no elicitation today")

    def broken(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "maybe"}

    async def main() -> None:
        async with ferromcp.Client.http(everything, era="modern", on_elicitation=refuse) as client:
            with pytest.raises(InvalidParamsError, match="no elicitation today"):
                await client.call_tool("test_input_required_result_elicitation")
        async with ferromcp.Client.http(everything, era="modern", on_elicitation=broken) as client:
            with pytest.raises(McpError, match="invalid elicitation result"):
                await client.call_tool("test_input_required_result_elicitation")

    run(main())


def test_without_a_handler_the_capability_is_not_declared(everything: str) -> None:
    async def main() -> None:
        async with ferromcp.Client.http(everything, era="modern") as client:
            with pytest.raises(MissingRequiredClientCapabilityError) as missing:
                await client.call_tool("test_missing_capability")
            assert missing.value.code == -32021

    run(main())


# --- listen ---------------------------------------------------------------------


def test_listen_delivers_list_changes(everything: str) -> None:
    async def main() -> None:
        async with ferromcp.Client.http(everything) as client:
            async with client.listen(tools=True) as changes:
                assert changes.acknowledged.get("toolsListChanged") is True
                await client.call_tool("test_trigger_tool_change")
                note = await changes.next()
                assert note is not None and note.method == "notifications/tools/list_changed"
            assert await changes.next() is None  # closed
            await client.call_tool("test_trigger_tool_change")  # restores the tool list

    run(main())


# --- the synchronous facade -----------------------------------------------------------


def test_sync_client_has_the_same_methods(everything: str) -> None:
    async def confirm(params: dict[str, Any]) -> dict[str, Any]:
        return fill(params)

    with ferromcp.SyncClient.http(everything, on_elicitation=confirm) as client:
        assert client.discover().supported_versions
        names = [t.name for t in client.list_tools()]
        assert "test_simple_text" in names
        assert [t.name for page in client.list_tools().pages() for t in page] == names
        assert client.list_tools_page().items[0].name == names[0]
        assert client.call_tool("test_simple_text").text == "This is a simple text response for testing."
        assert "py-username" in client.call_tool("test_elicitation", {"message": "hi"}).text
        assert client.read_resource("test://static-text").text
        assert client.list_resources() and client.list_resource_templates() and client.list_prompts()
        assert next(iter(client.list_resources())).uri
        assert client.list_resources_page().items
        assert client.list_resource_templates_page().items
        assert client.list_prompts_page().items
        assert client.get_prompt("test_simple_prompt").text == "This is a simple prompt for testing."
        assert client.complete({"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "arg1", "he").values == [
            "hello"
        ]
        seen: list[tuple[float, bool]] = []
        caller = threading.current_thread()
        client.call_tool(
            "test_tool_with_progress", progress=lambda v, t, m: seen.append((v, threading.current_thread() is caller))
        )
        assert seen == [(0.0, True), (50.0, True), (100.0, True)]  # in order, on this thread, before returning
        with client.listen(tools=True) as changes:
            client.call_tool("test_trigger_tool_change")
            note = changes.next()
            assert note is not None and note.method == "notifications/tools/list_changed"
        client.call_tool("test_trigger_tool_change")
        with pytest.raises(InvalidParamsError):
            client.call_tool("no_such_tool")
    with pytest.raises(RuntimeError):
        client.call_tool("test_simple_text")


class Interrupted(Exception):
    pass


def test_a_signal_interrupts_a_blocking_call_and_cancels_it(tmp_path: Path) -> None:
    """The synchronous facade runs signal handlers while it waits (Ctrl-C
    works), and an exception from one abandons the call, which cancels it
    on the server."""
    marker = tmp_path / "cancelled"

    def interrupt(signum: int, frame: object) -> None:
        raise Interrupted

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        with ferromcp.SyncClient.stdio(sys.executable, [str(SERVERS / "cancel_server.py")], cwd=REPO) as client:
            signal.setitimer(signal.ITIMER_REAL, 1.0)
            started = time.monotonic()
            with pytest.raises(Interrupted):
                client.call_tool("wait_for_cancel", {"marker": str(marker)})
            assert time.monotonic() - started < 10
            asyncio.run(wait_for_file(marker))
            assert client.call_tool("sleepy", {"seconds": 0}).text == "awake"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_sync_client_over_stdio_with_a_sync_handler() -> None:
    with ferromcp.SyncClient.stdio(str(EVERYTHING_SERVER), ["--stdio"], on_elicitation=fill) as client:
        result = client.call_tool("test_elicitation", {"message": "hi"})
        assert "py-email" in result.text, result.text


# --- garbage collection -------------------------------------------------------


def test_a_closed_client_is_collected(everything: str) -> None:
    async def main() -> tuple[weakref.ref[Any], weakref.ref[Any]]:
        client = ferromcp.Client.http(everything, on_elicitation=lambda p: fill(p) if client else None)
        async with client:
            await client.call_tool("test_elicitation", {"message": "hi"})
        refs = weakref.ref(client), weakref.ref(client._connection)
        return refs

    wrapper, connection = run(main())
    gc.collect()
    assert wrapper() is None
    assert connection() is None


def test_a_dropped_client_with_a_cycle_through_its_handler_is_collected(everything: str) -> None:
    """The native client reports its handlers to the collector, so a cycle
    client -> native -> handler -> client is found even without close()."""
    def handler(params: dict[str, Any]) -> dict[str, Any]:
        return fill(params)

    client = ferromcp.SyncClient.http(everything, on_elicitation=handler)
    handler.client = client  # type: ignore[attr-defined]  # the cycle
    native = weakref.ref(client._native)
    assert handlers_held(client._native)
    del client, handler
    gc.collect()
    assert native() is None


def handlers_held(native: Any) -> list[Any]:
    """The callables the native client reports to the collector (its type aside)."""
    return [r for r in gc.get_referents(native) if callable(r) and not isinstance(r, type)]


def test_closing_releases_the_handlers(everything: str) -> None:
    client = ferromcp.SyncClient.http(everything, on_elicitation=fill, on_roots=lambda p: {"roots": []})
    native = client._native
    assert len(handlers_held(native)) == 3  # two handlers and the JSON default
    client.close()
    assert handlers_held(native) == []
    client.close()  # twice is fine

