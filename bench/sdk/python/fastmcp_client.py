"""The FastMCP client row of the client benchmark: FastMCP 4.1.6
``fastmcp.Client`` over Streamable HTTP (its default for an http URL),
calling ``echo``. Driven by mcp-bench through bench/clients/bench_protocol.py
(the loop every Python row shares)::

    .cache/bench/py-fastmcp/bin/python bench/sdk/python/fastmcp_client.py http://127.0.0.1:PORT/mcp

The client negotiates as it does by default (``mode="auto"``: a
``server/discover`` probe, 2025-11-25 ``initialize`` as the fallback).
"""

from __future__ import annotations

import asyncio
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients"))

import bench_protocol
from fastmcp import Client


async def main(url: str) -> None:
    async with Client(url) as client:

        async def echo(text: str) -> object:
            result = await client.call_tool("echo", {"text": text})
            first = result.content[0] if result.content else None
            return getattr(first, "text", None)

        await bench_protocol.serve_async(echo, lambda: str(client.protocol_version))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
