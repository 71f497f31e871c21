"""The ferromcp Python echo server with an ``async def`` handler, for
``make bench`` (the plain ``def`` variant is examples/python/echo_server.py).

Run from the repository root after ``make build``:

    .venv/bin/python bench/servers/python_async_echo.py              # stdio
    .venv/bin/python bench/servers/python_async_echo.py --http 8000  # http://127.0.0.1:8000/mcp

An async tool runs on the asyncio loop that ``server.run`` starts, so this
measures the hop from the Rust core to that loop and back.
"""

from __future__ import annotations

import argparse

import ferromcp

server = ferromcp.Server("ferromcp-echo-async", version="1.0.0")


@server.tool
async def echo(text: str) -> str:
    """Returns the text unchanged."""
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description="ferromcp async echo server for the benchmark")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve Streamable HTTP on 127.0.0.1:PORT")
    args = parser.parse_args()
    if args.http is not None:
        server.run("http", port=args.http)
    else:
        server.run()


if __name__ == "__main__":
    main()
