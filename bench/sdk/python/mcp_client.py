"""The official Python SDK's client row of the client benchmark: mcp 2.3.0
``ClientSession`` over its Streamable HTTP transport, calling ``echo``.
Driven by mcp-bench through bench/clients/bench_protocol.py (the loop every
Python row shares)::

    .cache/bench/py/bin/python bench/sdk/python/mcp_client.py http://127.0.0.1:PORT/mcp

The session negotiates the revision the SDK documents: ``discover()`` (the
2026-07-28 ``server/discover``), falling back to ``initialize()`` for a
2025-11-25 server.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients"))

import anyio
import bench_protocol
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError


async def main(url: str) -> None:
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
        try:
            await session.discover()
        except MCPError:
            await session.initialize()

        async def echo(text: str) -> object:
            result = await session.call_tool("echo", {"text": text})
            first = result.content[0] if result.content else None
            return getattr(first, "text", None)

        await bench_protocol.serve_async(echo, lambda: str(session.protocol_version))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
