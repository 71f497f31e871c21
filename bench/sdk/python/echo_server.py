"""Echo server on the official MCP Python SDK (PyPI `mcp`, pinned in
requirements.txt), for `make bench`.

    python echo_server.py              # stdio
    python echo_server.py --http PORT  # Streamable HTTP at http://127.0.0.1:PORT/mcp

The SDK is set up the way its documentation recommends for a fast,
stateless HTTP server: `stateless_http=True` (no session per client) and
`json_response=True` (a plain JSON answer instead of an SSE stream), with
request logging off, so it is measured at its best. The tool is a plain
`def`, like the ferromcp Python echo example.
"""

from __future__ import annotations

import argparse

from mcp.server.mcpserver import MCPServer

server = MCPServer("python-sdk-echo", version="1.0.0", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    """Returns the text unchanged."""
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description="official-SDK echo server for the benchmark")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve Streamable HTTP on 127.0.0.1:PORT")
    args = parser.parse_args()
    if args.http is not None:
        server.run(
            "streamable-http",
            host="127.0.0.1",
            port=args.http,
            stateless_http=True,
            json_response=True,
        )
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
