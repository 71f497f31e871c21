"""A server with a slow tool, for the shutdown tests: `slow` says "started"
on stderr, sleeps, then answers "finished". Argument: `stdio` or
`http PORT`; `async` as the last argument makes the tool async."""

from __future__ import annotations

import asyncio
import sys
import time

import ferromcp

server = ferromcp.Server("slow", version="1.0.0")
args = sys.argv[1:]
use_async = args[-1:] == ["async"]

if use_async:

    @server.tool
    async def slow() -> str:
        """Answers after a while."""
        print("started", file=sys.stderr, flush=True)
        await asyncio.sleep(0.5)
        return "finished"

else:

    @server.tool
    def slow() -> str:
        """Answers after a while."""
        print("started", file=sys.stderr, flush=True)
        time.sleep(0.5)
        return "finished"


if __name__ == "__main__":
    if args[0] == "http":
        server.run("http", port=int(args[1]))
    else:
        server.run()
