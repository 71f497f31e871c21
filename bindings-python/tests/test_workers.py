"""Plain `def` handlers run on ferromcp's Python worker threads, which batch
calls under one GIL acquisition. Handlers that block must still overlap, as
they would in a thread pool, and never hold up the handlers behind them."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import ferromcp
from conftest import TIMEOUT, http_post, params

# Below the pool's smallest size, min(32, cpus + 4) with one CPU.
CONCURRENT = 5


def call(port: int, request_id: int, tool: str, **arguments: object) -> dict:
    params_ = params(name=tool, arguments=arguments)
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params_}
    return http_post(port, message)


def test_blocking_handlers_run_at_the_same_time() -> None:
    server = ferromcp.Server("workers")
    # Each call waits until all of them are inside a handler at once: if the
    # worker threads ran them one after another, the barrier would break.
    barrier = threading.Barrier(CONCURRENT, timeout=TIMEOUT)

    @server.tool
    def rendezvous(n: int) -> int:
        barrier.wait()
        return n

    serving = server.start("http", port=0)
    try:
        assert serving.port is not None
        with ThreadPoolExecutor(CONCURRENT) as clients:
            responses = list(clients.map(lambda n: call(serving.port, n, "rendezvous", n=n), range(CONCURRENT)))
    finally:
        serving.stop()
        serving.wait(TIMEOUT)
    for n, response in enumerate(responses):
        assert response["result"].get("isError") is not True, response
        assert response["result"]["structuredContent"] == {"result": n}


def test_a_handler_that_never_returns_does_not_hold_up_others() -> None:
    server = ferromcp.Server("workers-stuck")
    release = threading.Event()
    entered = threading.Event()

    @server.tool
    def stuck() -> str:
        entered.set()
        release.wait(TIMEOUT)
        return "released"

    @server.tool
    def echo(text: str) -> str:
        return text

    serving = server.start("http", port=0)
    try:
        assert serving.port is not None
        with ThreadPoolExecutor(1) as client:
            blocked = client.submit(call, serving.port, 1, "stuck")
            assert entered.wait(TIMEOUT)
            # Answered while `stuck` still holds its worker thread.
            for n in range(20):
                answer = call(serving.port, 100 + n, "echo", text=f"hi {n}")
                assert answer["result"]["content"] == [{"type": "text", "text": f"hi {n}"}]
            assert not blocked.done()
            release.set()
            assert blocked.result(TIMEOUT)["result"]["content"] == [{"type": "text", "text": "released"}]
    finally:
        release.set()
        serving.stop()
        serving.wait(TIMEOUT)
