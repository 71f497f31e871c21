"""The ferromcp Python rows of the client benchmark: ``ferromcp.Client``
(asyncio) or, with ``--sync``, ``ferromcp.SyncClient``, calling ``echo`` over
Streamable HTTP. Driven by mcp-bench through bench_protocol.py::

    python bench/clients/python_client.py [--sync] http://127.0.0.1:PORT/mcp
"""

from __future__ import annotations

import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_protocol
import ferromcp


async def run_async(url: str) -> None:
    async with ferromcp.Client.http(url) as client:

        async def echo(text: str) -> object:
            result = await client.call_tool("echo", {"text": text})
            return result.content[0].get("text") if result.content else None

        await bench_protocol.serve_async(echo, lambda: client.protocol_version)


def run_sync(url: str) -> None:
    with ferromcp.SyncClient.http(url) as client:

        def echo(text: str) -> object:
            result = client.call_tool("echo", {"text": text})
            return result.content[0].get("text") if result.content else None

        bench_protocol.serve_sync(echo, lambda: client.protocol_version)


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["--sync"]:
        run_sync(args[1])
    else:
        asyncio.run(run_async(args[0]))


if __name__ == "__main__":
    main()
