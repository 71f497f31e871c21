"""The physical-limit rows of the Python client benchmark: the least a Python
program can do to call ``echo`` over Streamable HTTP (2026-07-28) and check
the reply, with nothing but the standard library.

The request's bytes are written by hand, the reply's head is scanned for
its length and its body read with ``json.loads``: no HTTP library, no
session, no validation, no typed results. No MCP client can do less per
call in Python, so ``ferromcp-python / python-raw`` shows how much of the
machine's limit a client reaches, the way ``baseline-server`` does for the
servers. Two modes, one per way of waiting:

- blocking (default): one kept-alive socket per thread, ``sendall`` and
  ``recv``; the thread sleeps in ``recv`` and wakes once per reply.
- ``--asyncio``: one kept-alive connection per task, read by an
  ``asyncio.Protocol`` (the loop's own socket reader, no streams on top):
  the loop sleeps in its selector and wakes once per reply, and the reply
  completes the task's future. The ceiling of any asyncio client, the
  official one and ``ferromcp.Client`` included. (Until session 14 this
  mode used ``asyncio`` streams, a layer over the same protocol: the same
  sequential calls/s, 7% more CPU per call, 14% fewer calls/s with 16 in
  flight; see bench/PERFORMANCE.md, "Session 14".)

Driven by mcp-bench through bench_protocol.py::

    python bench/clients/python_raw_client.py [--asyncio] http://127.0.0.1:PORT/mcp
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import socket
import sys
import threading
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_protocol

VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientInfo": {"name": "python-raw", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": VERSION,
    "Mcp-Method": "tools/call",
    "Mcp-Name": "echo",
}


class Calls:
    """The bytes of each call, and what a reply says."""

    def __init__(self, url: urllib.parse.SplitResult) -> None:
        self.ids = itertools.count(1)
        self.head = (
            f"POST {url.path} HTTP/1.1\r\nHost: {url.hostname}:{url.port}\r\n"
            + "".join(f"{name}: {value}\r\n" for name, value in HEADERS.items())
            + "Content-Length: "
        ).encode()

    def request(self, text: str) -> bytes:
        params = {"name": "echo", "arguments": {"text": text}, "_meta": META}
        message = {"jsonrpc": "2.0", "id": next(self.ids), "method": "tools/call", "params": params}
        body = json.dumps(message).encode()
        return self.head + str(len(body)).encode() + b"\r\n\r\n" + body

    @staticmethod
    def body_length(head: bytes) -> int:
        """The reply's length; the echo server answers a call with plain
        JSON, never a stream."""
        if head[9:12] != b"200":
            raise RuntimeError(f"HTTP {head[9:12]!r}")
        lower = head.lower()
        at = lower.index(b"content-length:") + 15
        end = lower.find(b"\r\n", at)
        return int(lower[at : end if end >= 0 else len(lower)])

    @staticmethod
    def text(body: bytes) -> object:
        reply = json.loads(body)
        if "result" not in reply:
            raise RuntimeError(f"error reply: {reply}")
        return reply["result"]["content"][0]["text"]


def run_blocking(url: urllib.parse.SplitResult) -> None:
    calls = Calls(url)
    local = threading.local()

    def echo(text: str) -> object:
        sock = getattr(local, "sock", None)
        if sock is None:
            sock = local.sock = socket.create_connection((url.hostname, url.port))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            local.pending = b""
        sock.sendall(calls.request(text))
        data = local.pending
        while (end := data.find(b"\r\n\r\n")) < 0:
            data += sock.recv(65536)
        start = end + 4
        length = calls.body_length(data[:end])
        while len(data) < start + length:
            data += sock.recv(65536)
        local.pending = data[start + length :]
        return calls.text(data[start : start + length])

    bench_protocol.serve_sync(echo, lambda: VERSION)


class _Replies(asyncio.Protocol):
    """One connection's replies, handed to the call waiting for them (one
    at a time: each task owns its connection)."""

    def __init__(self) -> None:
        self.buffer = b""
        self.waiting: asyncio.Future[bytes] | None = None
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0 or self.waiting is None:
            return
        start = end + 4
        length = Calls.body_length(self.buffer[:end])
        if len(self.buffer) < start + length:
            return
        body, self.buffer = self.buffer[start : start + length], self.buffer[start + length :]
        waiting, self.waiting = self.waiting, None
        waiting.set_result(body)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.waiting is not None and not self.waiting.done():
            self.waiting.set_exception(exc or ConnectionError("connection closed"))

    def call(self, request: bytes) -> asyncio.Future[bytes]:
        assert self.transport is not None
        self.waiting = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        return self.waiting


async def run_asyncio(url: urllib.parse.SplitResult) -> None:
    calls = Calls(url)
    loop = asyncio.get_running_loop()
    # One connection per task (bench_protocol runs each caller as a task),
    # opened on its first call.
    connections: dict[asyncio.Task[object] | None, _Replies] = {}

    async def echo(text: str) -> object:
        task = asyncio.current_task()
        if (replies := connections.get(task)) is None:
            _, replies = await loop.create_connection(_Replies, url.hostname or "127.0.0.1", url.port or 80)
            connections[task] = replies
        return calls.text(await replies.call(calls.request(text)))

    await bench_protocol.serve_async(echo, lambda: VERSION)


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["--asyncio"]:
        asyncio.run(run_asyncio(urllib.parse.urlsplit(args[1])))
    else:
        run_blocking(urllib.parse.urlsplit(args[0]))


if __name__ == "__main__":
    main()
