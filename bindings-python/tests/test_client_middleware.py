"""Client middleware (issue 31): ``client.add_middleware`` /
``@client.middleware`` links, plain and ``async``, around every request a
``ferromcp.Client`` or ``SyncClient`` sends, in memory, in both eras. The
chain itself is core's (``Client::add_middleware``): these tests show the
binding carries the call, the rest of the chain, the result and the
errors across."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, Literal, TypeVar

import ferromcp
import pytest
from conftest import TIMEOUT
from ferromcp.errors import InvalidParamsError
from ferromcp.middleware import AsyncClientCallNext, ClientCallNext, ClientMiddlewareContext

T = TypeVar("T")
Result = dict[str, Any]
ERAS: list[Literal["modern", "legacy"]] = ["modern", "legacy"]


def run(main: Coroutine[Any, Any, T]) -> T:
    """Runs a test's coroutine, failing it rather than hanging."""
    return asyncio.run(asyncio.wait_for(main, TIMEOUT))


class Served:
    """A server with an ``echo`` tool that counts its calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.server = ferromcp.Server("cmw")

        @self.server.tool
        def echo(text: str, suffix: str = "") -> str:
            self.calls += 1
            return text + suffix

        @self.server.prompt
        def greet(who: str) -> str:
            return f"hello {who}"


@pytest.mark.parametrize("era", ERAS)
def test_async_links_run_in_order(era: Literal["modern", "legacy"]) -> None:
    served = Served()
    seen: list[str] = []

    async def main() -> None:
        client = ferromcp.Client.in_memory(served.server, era=era)

        @client.middleware
        async def first(ctx: ClientMiddlewareContext, call_next: AsyncClientCallNext) -> Result:
            seen.append(f"first>{ctx.method}")
            result = await call_next(ctx)
            seen.append("first<")
            return result

        @client.middleware
        async def second(ctx: ClientMiddlewareContext, call_next: AsyncClientCallNext) -> Result:
            seen.append(f"second>{ctx.name}")
            result = await call_next(ctx)
            seen.append("second<")
            return result

        async with client:
            result = await client.call_tool("echo", {"text": "hi"})
            assert result.text == "hi"
            assert client.era == era

    run(main())
    assert seen == ["first>tools/call", "second>echo", "second<", "first<"]


@pytest.mark.parametrize("era", ERAS)
def test_sync_links_run_in_order(era: Literal["modern", "legacy"]) -> None:
    served = Served()
    seen: list[str] = []
    with ferromcp.SyncClient.in_memory(served.server, era=era) as client:

        def first(ctx: ClientMiddlewareContext, call_next: ClientCallNext) -> Result:
            seen.append("first>")
            result = call_next(ctx)
            seen.append("first<")
            return result

        async def second(ctx: ClientMiddlewareContext, call_next: AsyncClientCallNext) -> Result:
            seen.append("second>")
            result = await call_next(ctx)
            seen.append("second<")
            return result

        client.add_middleware(first)
        client.add_middleware(second)
        assert client.call_tool("echo", {"text": "hi"}).text == "hi"
    assert seen == ["first>", "second>", "second<", "first<"]


@pytest.mark.parametrize("era", ERAS)
def test_changed_params_reach_the_tool(era: Literal["modern", "legacy"]) -> None:
    served = Served()

    async def main() -> None:
        async with ferromcp.Client.in_memory(served.server, era=era) as client:

            @client.middleware
            async def add_suffix(ctx: ClientMiddlewareContext, call_next: AsyncClientCallNext) -> Result:
                if ctx.method == "tools/call":
                    ctx.params["arguments"]["suffix"] = "!"
                    ctx.meta["example.com/trace"] = "abc"
                    ctx.timeout = 30
                return await call_next(ctx)

            assert (await client.call_tool("echo", {"text": "hi"})).text == "hi!"
            # Other requests pass too.
            assert [tool.name for tool in await client.list_tools()] == ["echo"]

    run(main())


@pytest.mark.parametrize("era", ERAS)
def test_sync_client_changes_params_and_result(era: Literal["modern", "legacy"]) -> None:
    served = Served()
    with ferromcp.SyncClient.in_memory(served.server, era=era) as client:

        @client.middleware
        def rewrite(ctx: ClientMiddlewareContext, call_next: ClientCallNext) -> Result:
            if ctx.method == "prompts/get":
                ctx.params["arguments"] = {"who": "middleware"}
            result = call_next(ctx)
            if ctx.method == "tools/call":
                result["content"][0]["text"] = result["content"][0]["text"].upper()
            return result

        assert client.call_tool("echo", {"text": "hi"}).text == "HI"
        prompt = client.get_prompt("greet", {"who": "you"})
        assert prompt.messages[0].content["text"] == "hello middleware"


@pytest.mark.parametrize("era", ERAS)
def test_changed_result_is_decoded(era: Literal["modern", "legacy"]) -> None:
    served = Served()

    async def main() -> None:
        async with ferromcp.Client.in_memory(served.server, era=era) as client:

            @client.middleware
            async def replace(ctx: ClientMiddlewareContext, call_next: AsyncClientCallNext) -> Result:
                result = await call_next(ctx)
                if ctx.method == "tools/call":
                    return {"content": [{"type": "text", "text": "replaced"}], "isError": False}
                return result

            assert (await client.call_tool("echo", {"text": "hi"})).text == "replaced"
            assert served.calls == 1

    run(main())


@pytest.mark.parametrize("era", ERAS)
def test_error_short_circuits_async(era: Literal["modern", "legacy"]) -> None:
    served = Served()

    async def main() -> None:
        async with ferromcp.Client.in_memory(served.server, era=era) as client:

            @client.middleware
            async def refuse(ctx: ClientMiddlewareContext, call_next: AsyncClientCallNext) -> Result:
                if ctx.name == "echo":
                    raise InvalidParamsError("refused by the client")
                return await call_next(ctx)

            with pytest.raises(InvalidParamsError, match="refused by the client"):
                await client.call_tool("echo", {"text": "hi"})
            # The client goes on working.
            assert len(await client.list_tools()) == 1

    run(main())
    assert served.calls == 0


@pytest.mark.parametrize("era", ERAS)
def test_error_short_circuits_sync(era: Literal["modern", "legacy"]) -> None:
    served = Served()
    with ferromcp.SyncClient.in_memory(served.server, era=era) as client:

        @client.middleware
        def refuse(ctx: ClientMiddlewareContext, call_next: ClientCallNext) -> Result:
            if ctx.name == "echo":
                raise InvalidParamsError("refused by the client")
            return call_next(ctx)

        with pytest.raises(InvalidParamsError, match="refused by the client"):
            client.call_tool("echo", {"text": "hi"})
        assert served.calls == 0
        assert client.get_prompt("greet", {"who": "x"}).messages[0].content["text"] == "hello x"


def test_server_errors_reach_the_link() -> None:
    served = Served()
    caught: list[BaseException] = []
    with ferromcp.SyncClient.in_memory(served.server) as client:

        @client.middleware
        def watch(ctx: ClientMiddlewareContext, call_next: ClientCallNext) -> Result:
            try:
                return call_next(ctx)
            except ferromcp.McpError as e:
                caught.append(e)
                raise

        with pytest.raises(ferromcp.McpError):
            client.get_prompt("missing")
    assert len(caught) == 1


def test_call_next_runs_once_and_takes_the_context() -> None:
    served = Served()
    with ferromcp.SyncClient.in_memory(served.server) as client:

        @client.middleware
        def twice(ctx: ClientMiddlewareContext, call_next: ClientCallNext) -> Result:
            if ctx.name == "echo":
                call_next(ctx)
                return call_next(ctx)
            return call_next(ctx)

        with pytest.raises(ferromcp.McpError, match="once"):
            client.call_tool("echo", {"text": "hi"})

    with pytest.raises(TypeError):
        ferromcp.SyncClient.in_memory(served.server).add_middleware(42)  # type: ignore[arg-type]


@pytest.mark.parametrize("era", ERAS)
def test_meta_and_timeout_go_on(era: Literal["modern", "legacy"]) -> None:
    """What a link sets in ``meta`` and ``timeout`` reaches the next link
    (the call's options, which core sends)."""
    served = Served()
    seen: list[tuple[dict[str, Any], float | None]] = []
    with ferromcp.SyncClient.in_memory(served.server, era=era) as client:

        @client.middleware
        def tag(ctx: ClientMiddlewareContext, call_next: ClientCallNext) -> Result:
            seen.append((dict(ctx.meta), ctx.timeout))
            ctx.meta["example.com/trace"] = "abc"
            ctx.timeout = 2.5
            return call_next(ctx)

        @client.middleware
        def read(ctx: ClientMiddlewareContext, call_next: ClientCallNext) -> Result:
            seen.append((dict(ctx.meta), ctx.timeout))
            return call_next(ctx)

        assert client.call_tool("echo", {"text": "hi"}, timeout=7, meta={"a": 1}).text == "hi"
    assert seen == [({"a": 1}, 7.0), ({"a": 1, "example.com/trace": "abc"}, 2.5)]


def test_plain_link_on_an_async_client() -> None:
    served = Served()

    def shout(ctx: ClientMiddlewareContext, call_next: ClientCallNext) -> Result:
        if ctx.method == "tools/call":
            ctx.params["arguments"]["suffix"] = "?"
        return call_next(ctx)

    async def main() -> None:
        client = ferromcp.Client.in_memory(served.server)
        client.add_middleware(shout)
        async with client:
            results = await asyncio.gather(*(client.call_tool("echo", {"text": str(i)}) for i in range(5)))
            assert [result.text for result in results] == [f"{i}?" for i in range(5)]
        # Links added before connecting apply again after a reconnect.
        async with client:
            assert (await client.call_tool("echo", {"text": "again"})).text == "again?"

    run(main())
