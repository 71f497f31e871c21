"""A FastAPI application with ferromcp mounted under /agents, for
test_asgi.py: `python -m uvicorn fastapi_app:app --port N` (from this folder).

The MCP endpoint is http://127.0.0.1:N/agents/mcp; FastAPI keeps its own
routes beside it.
"""

from __future__ import annotations

import asyncio

import ferromcp
from fastapi import FastAPI

server = ferromcp.Server("mounted", version="1.2.3")


@server.tool
def echo(text: str) -> str:
    """Returns the text unchanged."""
    return text


@server.tool
async def steps(n: int, ctx: ferromcp.Context) -> str:
    """Reports n progress steps, 50 ms apart, on the serving loop."""
    for i in range(n):
        ctx.progress(i + 1, total=n, message=f"step {i + 1}")
        await asyncio.sleep(0.05)
    return f"{n} steps"


cancelled: list[str] = []


@server.tool
async def hang(ctx: ferromcp.Context) -> str:
    """Reports one step, then waits until cancelled (counted in /stats)."""
    ctx.progress(0, message="started")
    try:
        await asyncio.sleep(60)
    except asyncio.CancelledError:
        cancelled.append("hang")
        raise
    return "never"


app = FastAPI()


@app.get("/stats")
def stats() -> dict[str, int]:
    return {"cancelled": len(cancelled)}


@app.get("/health")
def health() -> dict[str, str]:
    return {"status": "ok"}


app.mount("/agents", server.asgi_app(allowed_hosts=["127.0.0.1", "localhost"]))
# The same server again, with a small body limit, at its own mount point.
app.mount("/small", server.asgi_app(allowed_hosts=["127.0.0.1"], max_body_bytes=300))
