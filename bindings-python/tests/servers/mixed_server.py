"""A test server with sync and async tools, failing tools and context use.

Started over stdio by the tests (`python mixed_server.py`), or over HTTP
with `--http PORT`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import sys
import threading
from typing import TypedDict

import ferromcp
from ferromcp.errors import InvalidParamsError

server = ferromcp.Server("mixed", version="0.0.1")


class Stats(TypedDict):
    count: int
    mean: float


@dataclasses.dataclass
class Point:
    x: int
    y: int


@server.tool
def echo(text: str) -> str:
    """Returns the text unchanged."""
    return text


@server.tool
async def slow_add(a: int, b: int) -> int:
    """Adds two integers, asynchronously."""
    await asyncio.sleep(0.01)
    return a + b


@server.tool
def boom(message: str = "boom") -> str:
    """Always fails."""
    raise ValueError(message)


@server.tool
async def async_boom() -> str:
    """Always fails, asynchronously."""
    await asyncio.sleep(0)
    raise RuntimeError("async boom")


@server.tool
def reject(value: int) -> int:
    """Rejects its argument with a JSON-RPC error."""
    raise InvalidParamsError("value is not acceptable", data={"value": value})


@server.tool
def stats(values: list[float]) -> Stats:
    """Count and mean of the values."""
    return {"count": len(values), "mean": sum(values) / len(values)}


@server.tool
def point(x: int, y: int) -> Point:
    """A point, returned as a dataclass."""
    return Point(x, y)


@server.tool
def whoami(ctx: ferromcp.Context) -> str:
    """The protocol version of the request."""
    return ctx.protocol_version


@server.tool
def count(n: int, ctx: ferromcp.Context) -> int:
    """Counts to n, reporting progress and logging."""
    for i in range(n):
        ctx.progress(i + 1, total=n, message=f"step {i + 1}")
    ctx.log("info", {"counted": n}, logger="count")
    return n


@server.tool
def where() -> dict[str, bool]:
    """Which thread a sync handler runs on."""
    return {"main_thread": threading.current_thread() is threading.main_thread()}


@server.tool
async def async_where() -> dict[str, bool]:
    """Whether an async handler runs on the serving asyncio loop."""
    running = asyncio.get_running_loop()
    return {"on_loop": running is LOOP.get("loop")}


@server.tool
def chatty() -> str:
    """Prints to stdout, which must not corrupt the stdio stream."""
    print("this goes to stderr while serving stdio")
    return "ok"


@server.tool
def rich() -> ferromcp.ToolResult:
    """A complete result with two blocks."""
    return ferromcp.ToolResult(["first", {"type": "text", "text": "second"}], structured_content={"n": 2})


@server.tool
def unserializable() -> object:
    """Returns something with no JSON form."""
    return object()


@server.tool
def roundtrip(value: dict) -> dict:
    """Returns its argument."""
    return value


LOOP: dict[str, asyncio.AbstractEventLoop] = {}


async def main(transport: str, port: int) -> None:
    LOOP["loop"] = asyncio.get_running_loop()
    await server.serve(transport, port=port)  # type: ignore[arg-type]


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        transport, port = "http", int(sys.argv[2])
    else:
        transport, port = "stdio", 0
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main(transport, port))
