"""Shared helpers: a minimal newline-delimited JSON-RPC client for servers
started as subprocesses, and the request `_meta` MCP 2026-07-28 requires."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# A run started in the background by a non-interactive shell inherits SIGINT
# ignored, and so would every server it starts (Python then installs no
# KeyboardInterrupt handler, and the Ctrl-C tests wait forever). A caught
# signal is reset to the default in children, so catch it here.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "python" / "echo_server.py"
SERVERS = Path(__file__).resolve().parent / "servers"

PROTOCOL_VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
}

# Generous: CI machines are small and a debug build is slow to start.
TIMEOUT = 30.0


def params(meta: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    """Request params with the required `_meta` (plus `meta`, if given)."""
    return {**fields, "_meta": {**META, **(meta or {})}}


class StdioServer:
    """A server subprocess spoken to over stdin/stdout."""

    def __init__(self, script: Path, *args: str) -> None:
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close(), after the process)
        self.proc = subprocess.Popen(
            [sys.executable, str(script), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=REPO,
        )
        self._next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, f"server closed stdout; stderr:\n{self.stderr()}"
        return json.loads(line)

    def request(self, method: str, **fields: Any) -> dict[str, Any]:
        """Sends one request and returns its response (skipping notifications)."""
        return self.exchange(method, **fields)[-1]

    def exchange(self, method: str, meta: dict[str, Any] | None = None, **fields: Any) -> list[dict[str, Any]]:
        """Sends one request; returns the notifications it caused, then its response."""
        self._next_id += 1
        request_id = self._next_id
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params(meta, **fields)})
        received = []
        while True:
            message = self.read()
            received.append(message)
            if message.get("id") == request_id:
                return received

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        """`tools/call`; returns the result (fails on a JSON-RPC error)."""
        response = self.request("tools/call", name=tool, arguments=arguments)
        assert "result" in response, response
        return response["result"]

    def close_stdin(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(TIMEOUT)

    def stderr(self) -> str:
        # pread, not seek+read: the child writes through the same open file
        # description, so moving its offset would make the child's next
        # write land over what it wrote before (a lost "started" once made
        # a shutdown test time out).
        fd = self._stderr.fileno()
        return os.pread(fd, os.fstat(fd).st_size, 0).decode(errors="replace")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(TIMEOUT)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()
        self._stderr.close()


@pytest.fixture
def example() -> Iterator[StdioServer]:
    server = StdioServer(EXAMPLE)
    yield server
    server.kill()


@pytest.fixture
def mixed() -> Iterator[StdioServer]:
    server = StdioServer(SERVERS / "mixed_server.py")
    yield server
    server.kill()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_post(port: int, message: dict[str, Any], headers: dict[str, str] | None = None) -> dict[str, Any]:
    """POSTs one JSON-RPC request to http://127.0.0.1:port/mcp."""
    body = json.dumps(message).encode()
    all_headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": PROTOCOL_VERSION,
        "Mcp-Method": message["method"],
    }
    name = message.get("params", {}).get("name")
    if name is not None:
        all_headers["Mcp-Name"] = name
    all_headers.update(headers or {})
    request = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", data=body, headers=all_headers)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            content_type = response.headers.get("Content-Type", "")
            body = response.read().decode()
    except urllib.error.HTTPError as e:
        return json.loads(e.read())
    if not content_type.startswith("text/event-stream"):
        return json.loads(body)
    # An SSE stream: notifications, then the response to this request.
    for event in body.split("\n\n"):
        data = "\n".join(line[5:].lstrip() for line in event.splitlines() if line.startswith("data:"))
        if data:
            decoded = json.loads(data)
            if decoded.get("id") == message["id"]:
                return decoded
    raise AssertionError(f"no response in the event stream: {body!r}")


def wait_for_port(port: int, proc: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"server exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on port {port}")


os.environ.setdefault("PYTHONUNBUFFERED", "1")
