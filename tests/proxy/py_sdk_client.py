"""The official Python SDK client (mcp 2.3.0) at 2026-07-28 through
``ferromcp proxy`` to a 2025-11-25-only upstream: lists the tools, calls
``echo`` and answers the upstream's elicitation and sampling. Prints one
JSON object for tests/proxy/proxy_checks.py::

    .cache/bench/py/bin/python tests/proxy/py_sdk_client.py http URL
    .cache/bench/py/bin/python tests/proxy/py_sdk_client.py stdio PROGRAM ARG...

The SDK's high-level ``Client`` pinned to 2026-07-28 (``mode``): it speaks
2026-07-28 to the proxy, whatever the upstream speaks, and answers the
proxy's ``InputRequiredResult`` rounds with its callbacks.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
from mcp import Client, types
from mcp.client.stdio import StdioServerParameters


async def answer_elicitation(_context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "Ada"})


async def answer_sampling(_context: Any, _params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="sampled by the Python SDK"),
        model="test-model",
    )


def first_text(result: types.CallToolResult) -> str | None:
    first = result.content[0] if result.content else None
    return getattr(first, "text", None)


async def main(argv: list[str]) -> None:
    stdio = StdioServerParameters(command=argv[1], args=argv[2:]) if argv[0] == "stdio" else None
    server: StdioServerParameters | str = stdio or argv[1]
    async with Client(
        server,
        mode="2026-07-28",
        sampling_callback=answer_sampling,
        elicitation_callback=answer_elicitation,
    ) as client:
        tools = await client.list_tools()
        echoed = await client.call_tool("echo", {"text": "through the proxy"})
        asked = await client.call_tool("ask", {})
        summarized = await client.call_tool("summarize", {})
        print(
            json.dumps(
                {
                    "protocolVersion": str(client.protocol_version),
                    "tools": sorted(tool.name for tool in tools.tools),
                    "echo": first_text(echoed),
                    "ask": first_text(asked),
                    "summarize": first_text(summarized),
                }
            )
        )


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
