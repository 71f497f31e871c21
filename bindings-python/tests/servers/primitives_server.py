"""A test server with resources, templates, prompts, completions and
handlers that ask the client for input, in plain and async flavours.

Started over stdio by the tests (`python primitives_server.py`), or over
HTTP with `--http PORT`.
"""

from __future__ import annotations

import asyncio
import enum
import sys
import time
from typing import Annotated, Any

import ferromcp
from ferromcp import Context
from ferromcp.errors import InvalidParamsError

server = ferromcp.Server("primitives", version="0.0.1")
ICON = {"src": "https://example.test/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


# -- resources -------------------------------------------------------------


@server.resource(
    "text://motd",
    title="Message of the day",
    mime_type="text/plain",
    size=5,
    annotations={"audience": ["user"], "priority": 0.5},
    icons=[ICON],
    meta={"example.test/tag": "motd"},
    ttl_ms=60_000,
    cache_scope="private",
)
def motd() -> str:
    """Today's message."""
    return "hello"


@server.resource("bin://blob", mime_type="application/octet-stream")
async def blob() -> bytes:
    return b"\x00\x01\x02"


@server.resource("users://{id}/profile", mime_type="application/json", completions={"id": ["17", "42", "7"]})
def profile(id: int) -> dict[str, Any]:
    """A user's profile."""
    return {"uri": f"users://{id}/profile", "text": f"id={id} ({type(id).__name__})"}


@server.resource("paint://{color}/{shade}")
async def paint(color: Color, shade: int, ctx: Context) -> str:
    return f"{color.name} {shade} via {ctx.method}"


@server.resource("broken://always")
def broken() -> str:
    raise RuntimeError("the disk is on fire")


# -- prompts ---------------------------------------------------------------


@server.prompt(title="Greeting", icons=[ICON], meta={"example.test/tag": "greet"})
def greet(name: Annotated[str, "Who to greet"], times: int = 1) -> str:
    """Greets someone."""
    return " ".join([f"Hello, {name}!"] * times)


@server.prompt
async def conversation(topic: str) -> list[dict[str, Any]]:
    """A short conversation."""
    return [
        {"role": "user", "content": {"type": "text", "text": f"Tell me about {topic}."}},
        {"role": "assistant", "content": {"type": "text", "text": f"{topic} is interesting."}},
    ]


@server.prompt
def single(text: str) -> dict[str, Any]:
    """One message, as a dict."""
    return {"role": "assistant", "content": {"type": "text", "text": text}}


@server.prompt
def picky(color: Color) -> str:
    """Takes an enum argument."""
    return f"picked {color.value}"


@server.prompt
def broken_prompt() -> str:
    raise ValueError("no prompt today")


@server.completion(prompt="greet", argument="name")
async def complete_name(value: str, arguments: dict[str, str]) -> list[str]:
    names = ["Ada", "Alan", "Grace"]
    return [n for n in names if n.startswith(value)] + ([f"ctx:{arguments}"] if arguments else [])


# -- tools -----------------------------------------------------------------


@server.tool(
    title="Adder",
    annotations={"readOnlyHint": True, "idempotentHint": True},
    icons=[ICON],
    meta={"example.test/tag": "add"},
)
def add(a: Annotated[int, "First"], b: Annotated[int, "Second"]) -> int:
    """Adds two integers."""
    return a + b


@server.tool
async def chatty(ctx: Context) -> list[bool]:
    """Logs at four levels and reports progress."""
    sent = [ctx.debug("d"), ctx.info("i", logger="x"), ctx.warning({"w": 1}), ctx.error("e")]
    ctx.progress(1, total=2, message="half")
    return sent


@server.tool
def info(ctx: Context) -> dict[str, Any]:
    """What the handler knows about the request."""
    return {
        "protocol_version": ctx.protocol_version,
        "client_info": ctx.client_info,
        "client_capabilities": ctx.client_capabilities,
        "method": ctx.method,
        "headers": ctx.headers,
        "log_level": ctx.log_level,
    }


@server.tool
def ask_sync(ctx: Context) -> str:
    """Elicits in a plain def (blocks)."""
    answer = ctx.elicit("Your name?", {"name": str})
    return f"sync {answer.action} {answer.content}"


@server.tool
async def ask_async(ctx: Context) -> str:
    """Elicits in an async def (awaits)."""
    answer = await ctx.elicit("Your name?", {"name": str})
    return f"async {answer.action} {answer.content}"


@server.tool
async def ask_all(ctx: Context) -> str:
    """Three asks at once: one round under 2026-07-28."""
    name, reply, roots = await asyncio.gather(
        ctx.elicit("Your name?", {"name": str}, key="name"),
        ctx.sample("Say hi", max_tokens=5, key="reply"),
        ctx.list_roots(key="roots"),
    )
    return f"{name.content} {reply['content']['text']} {[r.uri for r in roots]}"


@server.tool
async def ask_two_slowly(ctx: Context) -> str:
    """Starts an ask, keeps the loop busy, starts another: still one round."""
    first = ctx.elicit("First?", {"a": str}, key="a")
    time.sleep(0.2)  # the round must not end before the handler does
    second = ctx.list_roots(key="b")
    a, b = await asyncio.gather(first, second)
    return f"{a.content} {len(b)}"


@server.tool
def ask_url(ctx: Context) -> str:
    """URL-mode elicitation."""
    answer = ctx.elicit("Sign in, please.", url="https://auth.example.test/login")
    return f"url {answer.action}"


OUTCOMES: dict[str, str] = {}


@server.tool
def ask_watched(ctx: Context) -> str:
    """Records how its (blocking) ask ended, for `ask_outcome`."""
    OUTCOMES["ask_watched"] = "waiting"
    try:
        answer = ctx.elicit("Your name?", {"name": str})
        OUTCOMES["ask_watched"] = f"answered {answer.action}"
    except Exception as e:
        OUTCOMES["ask_watched"] = type(e).__name__
        raise
    return OUTCOMES["ask_watched"]


@server.tool
def ask_outcome() -> str:
    return OUTCOMES.get("ask_watched", "never asked")


@server.tool
def ask_uncaught(ctx: Context) -> str:
    """InputRequired is not an Exception: `except Exception` does not swallow it."""
    try:
        ctx.elicit("Your name?", {"name": str})
    except Exception:
        return "swallowed"
    return "answered"


@server.tool
def reject() -> str:
    raise InvalidParamsError("nope", data={"why": "testing"})


def dynamic() -> str:
    return "dynamic"


@server.tool
def toggle() -> str:
    """Adds or removes the `dynamic` tool, prompt and resource."""
    if server.remove_tool("dynamic"):
        server.remove_prompt("dynamic")
        server.remove_resource("dyn://x")
        return "removed"
    server.add_tool(dynamic)
    server.add_prompt(dynamic)
    server.add_resource(dynamic, "dyn://x")
    return "added"


@server.tool
def touch(uri: str) -> str:
    """Tells subscribers that `uri` changed."""
    server.notify_resource_updated(uri)
    return "touched"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("http", port=int(sys.argv[2]))
    else:
        server.run()
