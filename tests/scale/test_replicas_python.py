"""Two replicas of a Python server on one real Redis (issue 29): the event
bus, the task store, the seal keys, the replica name and the health
endpoints, set through the Python API (``Server(event_bus=..., replica=...,
seal_keys=..., tasks={"store": ...})``, ``start(health=True)``).

Run by ``make test-scale`` (which installs Debian's ``redis-server``)::

    .venv/bin/python -m pytest -q tests/scale/test_replicas_python.py
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import http.client
import json
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass
from typing import Any

import ferromcp
import pytest

TIMEOUT = 15.0
WATCHED = "mem://watched"
# One key for both replicas: what one seals (cursors, requestState), the other opens.
SEAL_KEY = base64.b64encode(b"scale-test-seal-key-of-32-bytes!").decode()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    server = shutil.which("redis-server")
    assert server is not None, "redis-server is missing: make system-tools-scale installs it"
    port = free_port()
    proc = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + TIMEOUT
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}"
    finally:
        proc.kill()
        proc.wait()


def waiting(cancelled: threading.Event) -> Callable[[], Coroutine[Any, Any, str]]:
    """A task's handler that runs until cancelled, and flags it."""

    async def wait() -> str:
        """Runs until cancelled."""
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    return wait


@dataclass
class Replica:
    name: str
    port: int
    server: ferromcp.Server
    cancelled: threading.Event

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"


@pytest.fixture(scope="module")
def replicas(redis_url: str) -> Iterator[tuple[Replica, Replica]]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    started: list[tuple[Replica, ferromcp.Serving]] = []
    for name in ("py1", "py2"):
        server = ferromcp.Server(
            "replicated",
            event_bus=redis_url,
            replica=name,
            seal_keys=[SEAL_KEY],
            tasks={"store": redis_url},
        )
        cancelled = threading.Event()

        @server.resource(WATCHED)
        def watched() -> str:
            return "watched"

        server.add_tool(waiting(cancelled), name="wait", task=True)

        serving = server.start("http", port=0, event_loop=loop, health=True, drain_delay=0.2)
        assert serving.port is not None
        started.append((Replica(name, serving.port, server, cancelled), serving))
    yield started[0][0], started[1][0]
    for _, serving in started:
        serving.stop()
        serving.wait(TIMEOUT)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(TIMEOUT)
    loop.close()


def test_a_change_on_one_replica_reaches_a_listen_stream_on_the_other(replicas: tuple[Replica, Replica]) -> None:
    a, b = replicas

    async def main() -> None:
        async with ferromcp.Client.http(b.url) as client, client.listen(resource_uris=[WATCHED]) as changes:
            # The bus connects lazily: announce until B's stream hears it.
            deadline = time.monotonic() + TIMEOUT
            while True:
                a.server.notify_resource_updated(WATCHED)
                try:
                    note = await asyncio.wait_for(changes.next(), 0.3)
                except TimeoutError:
                    assert time.monotonic() < deadline, "never heard"
                    continue
                assert note is not None and note.uri == WATCHED
                return

    asyncio.run(main())


def test_a_task_made_on_one_replica_is_read_and_cancelled_through_the_other(
    replicas: tuple[Replica, Replica],
) -> None:
    a, b = replicas
    with ferromcp.SyncClient.http(a.url) as on_a, ferromcp.SyncClient.http(b.url) as on_b:
        task = on_a.start_tool_task("wait")
        assert task.id is not None
        through_b = on_b.tool_task(task.id)
        state = through_b.refresh()
        assert state is not None and state.status == "working"
        through_b.cancel()
        # The handler runs on A: the cancel crossed the bus to it.
        assert a.cancelled.wait(TIMEOUT), "the handler on A saw no cancel"
        assert not b.cancelled.is_set()
        deadline = time.monotonic() + TIMEOUT
        while (state := through_b.refresh()) is not None and state.status != "cancelled":
            assert time.monotonic() < deadline, state
            time.sleep(0.02)


def test_legacy_sessions_carry_the_replica_name_and_health_answers(replicas: tuple[Replica, Replica]) -> None:
    a, _ = replicas
    conn = http.client.HTTPConnection("127.0.0.1", a.port, timeout=TIMEOUT)
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    conn.request(
        "POST",
        "/mcp",
        json.dumps(body),
        {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
    )
    response = conn.getresponse()
    response.read()
    assert response.status == 200
    assert (response.getheader("mcp-session-id") or "").startswith("py1."), response.getheaders()
    for path, answer in (("/healthz", {"status": "ok"}), ("/readyz", {"status": "ready"})):
        conn.request("GET", path)
        response = conn.getresponse()
        assert (response.status, json.loads(response.read())) == (200, answer)
    conn.close()


def test_bad_replica_options_are_refused() -> None:
    with pytest.raises(ValueError, match="replica name"):
        ferromcp.Server("x", replica="r1.bad")
    with pytest.raises(ValueError, match="event_bus"):
        ferromcp.Server("x", event_bus="kafka://nowhere")
