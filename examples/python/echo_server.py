"""The ferromcp walking-skeleton server in Python: tools `echo` and `add`.

Run from the repository root after `make build`:

    .venv/bin/python examples/python/echo_server.py              # stdio
    .venv/bin/python examples/python/echo_server.py --http 8000  # http://127.0.0.1:8000/mcp
"""

from __future__ import annotations

import argparse

import ferromcp

server = ferromcp.Server("ferromcp-echo", version="1.0.0")


@server.tool
def echo(text: str) -> str:
    """Returns the text unchanged."""
    return text


@server.tool
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


def main() -> None:
    parser = argparse.ArgumentParser(description="ferromcp echo/add example server")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve Streamable HTTP on 127.0.0.1:PORT")
    args = parser.parse_args()
    if args.http is not None:
        server.run("http", port=args.http)
    else:
        server.run()


if __name__ == "__main__":
    main()
