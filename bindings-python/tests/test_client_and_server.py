"""The Python client against the Python server: handlers that ask the client
(`ctx.elicit`, `ctx.sample`, `ctx.list_roots`) are answered by the client's
`on_elicitation`/`on_sampling`/`on_roots`, for a 2026-07-28 client (rounds
replayed with `requestState`) and a 2025-11-25 session (live requests), with
sync and async handlers on both sides. The client is joined to the server in
memory (`Client.in_memory`; the server's async tool runs on the client's
loop): the transport is not what is tested here. The client answering over
HTTP is tested in test_client.py, the server's asks on the wire in
test_context.py."""

from __future__ import annotations

import asyncio
from typing import Any

import ferromcp
import pytest
from conftest import TIMEOUT


@pytest.fixture
def server() -> ferromcp.Server:
    server = ferromcp.Server("asks")

    @server.tool
    def register(ctx: ferromcp.Context) -> str:
        """A plain def: the asks block."""
        answer = ctx.elicit("Your name?", {"name": str})
        if not answer.accepted:
            return "declined"
        roots = ctx.list_roots()
        return f"{answer.content['name']} at {', '.join(r.uri for r in roots)}"

    @server.tool
    async def haiku(topic: str, ctx: ferromcp.Context) -> str:
        """An async def: the asks are awaited."""
        sampled = await ctx.sample(f"A haiku about {topic}", max_tokens=50)
        return str(sampled["content"]["text"])

    return server


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_a_python_servers_asks_are_answered_by_the_client(server: ferromcp.Server, era: str) -> None:
    asked: list[str] = []

    async def on_elicitation(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return {"action": "accept", "content": {"name": "Ada"}}

    def on_roots(params: dict[str, Any]) -> dict[str, Any]:
        return {"roots": [{"uri": "file:///work", "name": "work"}]}

    def on_sampling(params: dict[str, Any]) -> dict[str, Any]:
        prompt = params["messages"][0]["content"]["text"]
        return {"role": "assistant", "content": {"type": "text", "text": f"[{prompt}]"}, "model": "m"}

    async def main() -> None:
        async with ferromcp.Client.in_memory(
            server,
            era=era,  # type: ignore[arg-type]
            on_elicitation=on_elicitation,
            on_roots=on_roots,
            on_sampling=on_sampling,
        ) as client:
            assert (await client.call_tool("register")).text == "Ada at file:///work"
            assert (await client.call_tool("haiku", {"topic": "rust"})).text == "[A haiku about rust]"
            assert client.era == era
        assert asked == ["Your name?"]

    asyncio.run(asyncio.wait_for(main(), TIMEOUT))


def test_a_declined_elicitation_reaches_the_server(server: ferromcp.Server) -> None:
    with ferromcp.SyncClient.in_memory(server, on_elicitation=lambda params: {"action": "decline"}) as client:
        assert client.call_tool("register").text == "declined"
