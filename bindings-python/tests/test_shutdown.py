"""Graceful shutdown and quiet exits (issue 11, items 10 and 11): on
SIGTERM, `Server.run()` ends open `subscriptions/listen` streams with their
completion result, lets the request in flight finish, and exits 0; when the
client closes stdout, the server ends with one line on stderr."""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
import sys
import threading
import time
from typing import Any

import pytest
from conftest import EXAMPLE, PROTOCOL_VERSION, REPO, SERVERS, TIMEOUT, StdioServer, free_port, params, wait_for_port

SLOW = SERVERS / "slow_server.py"
SUB_ID = "io.modelcontextprotocol/subscriptionId"
LISTEN = {"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen"}
SLOW_CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}


def wait_started(server_stderr: Any) -> None:
    """Waits until the slow tool has printed "started" to stderr."""
    deadline = time.monotonic() + TIMEOUT
    while "started" not in server_stderr():
        assert time.monotonic() < deadline, "the slow tool never started"
        time.sleep(0.02)


def check_endings(messages: list[dict[str, Any]]) -> None:
    by_id = {m.get("id"): m for m in messages if "id" in m}
    assert 1 in by_id, f"no listen result in {messages}"
    assert by_id[1]["result"]["resultType"] == "complete", by_id[1]
    assert by_id[1]["result"]["_meta"][SUB_ID] == 1, by_id[1]
    assert 2 in by_id, f"no tool answer in {messages}"
    assert by_id[2]["result"]["content"][0]["text"] == "finished", by_id[2]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_sigterm_on_stdio_ends_listen_and_finishes_the_request(mode: str) -> None:
    server = StdioServer(SLOW, "stdio", *(["async"] if mode == "async" else []))
    try:
        server.send({**LISTEN, "params": params(notifications={"toolsListChanged": True})})
        server.send({**SLOW_CALL, "params": params(name="slow", arguments={})})
        ack = server.read()
        assert ack["method"] == "notifications/subscriptions/acknowledged", ack
        wait_started(server.stderr)
        server.proc.send_signal(signal.SIGTERM)
        messages = []
        while True:
            assert server.proc.stdout is not None
            line = server.proc.stdout.readline()
            if not line:
                break
            messages.append(json.loads(line))
        check_endings(messages)
        assert server.proc.wait(TIMEOUT) == 0
        assert "Traceback" not in server.stderr()
    finally:
        server.kill()


def post(port: int, message: dict[str, Any], out: list[dict[str, Any]]) -> None:
    """POSTs `message` and appends every JSON-RPC message of the answer."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": PROTOCOL_VERSION,
        "Mcp-Method": message["method"],
    }
    if "name" in message["params"]:
        headers["Mcp-Name"] = message["params"]["name"]
    conn.request("POST", "/mcp", body=json.dumps(message), headers=headers)
    response = conn.getresponse()
    if not response.getheader("Content-Type", "").startswith("text/event-stream"):
        out.append(json.loads(response.read()))
        return
    for raw in response:
        line = raw.decode().strip()
        if line.startswith("data:"):
            out.append(json.loads(line[5:]))


def test_sigterm_on_http_ends_listen_and_finishes_the_request() -> None:
    port = free_port()
    stderr = []

    proc = subprocess.Popen(
        [sys.executable, str(SLOW), "http", str(port)], stderr=subprocess.PIPE, cwd=REPO, text=True
    )

    def drain_stderr() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            stderr.append(line)

    reader = threading.Thread(target=drain_stderr, daemon=True)
    reader.start()
    try:
        wait_for_port(port, proc)
        listen: list[dict[str, Any]] = []
        slow: list[dict[str, Any]] = []
        streams = [
            threading.Thread(
                target=post,
                args=(port, {**LISTEN, "params": params(notifications={"toolsListChanged": True})}, listen),
            ),
            threading.Thread(
                target=post, args=(port, {**SLOW_CALL, "params": params(name="slow", arguments={})}, slow)
            ),
        ]
        for t in streams:
            t.start()
        deadline = time.monotonic() + TIMEOUT
        while not listen:
            assert time.monotonic() < deadline, "no listen acknowledgement"
            time.sleep(0.02)
        wait_started(lambda: "".join(stderr))
        proc.send_signal(signal.SIGTERM)
        for t in streams:
            t.join(TIMEOUT)
        check_endings(listen + slow)
        assert proc.wait(TIMEOUT) == 0
        reader.join(TIMEOUT)
        assert "Traceback" not in "".join(stderr)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(TIMEOUT)


def test_a_closed_stdout_ends_the_server_quietly() -> None:
    server = StdioServer(EXAMPLE)
    try:
        assert server.proc.stdout is not None
        server.proc.stdout.close()  # the client stops reading, like `| head -c 0`
        server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params()})
        assert server.proc.wait(TIMEOUT) == 0
        stderr = server.stderr()
        assert "Traceback" not in stderr, stderr
        assert stderr.strip().splitlines() == ["ferromcp: the client closed stdout; stopped serving"], stderr
    finally:
        server.kill()
