"""A test server for the client's cancellation and timeout tests, over stdio
(`python cancel_server.py`) or HTTP (`--http PORT`).

`wait_for_cancel(marker)` sleeps until cancelled, then writes `marker` (a
file path) so the test can see that the server's handler was cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path

import ferromcp

server = ferromcp.Server("cancel-target", version="0.0.1")


@server.tool
async def wait_for_cancel(marker: str) -> str:
    """Waits a minute unless cancelled; records the cancellation in `marker`."""
    Path(marker + ".started").write_text("started")
    try:
        await asyncio.sleep(60)
    except asyncio.CancelledError:
        Path(marker).write_text("cancelled")
        raise
    return "not cancelled"


@server.tool
async def sleepy(seconds: float) -> str:
    """Sleeps, then answers."""
    await asyncio.sleep(seconds)
    return "awake"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        transport, port = "http", int(sys.argv[2])
    else:
        transport, port = "stdio", 0
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(server.serve(transport, port=port))  # type: ignore[arg-type]
