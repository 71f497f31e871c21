"""The client side of mcp-bench's client line protocol, for Python clients.

mcp-bench (bench/src/clients.rs) starts a client program with the server's
URL, waits for ``ready <protocol-version>``, then writes ``run <in-flight>
<seconds>`` lines; the client calls ``echo`` for that long and answers
``done <ok> <errors> <seconds>`` (``error <message>`` first when a call
failed). Closing stdin ends the client. Each program only supplies one
``echo(text) -> str`` call on its own client library; this module runs the
phases, gives every call its own text and checks the reply.

Used by bench/clients/python_client.py (ferromcp) and bench/sdk/python/
(the official ``mcp`` SDK and FastMCP), so every Python row is driven by the
same loop.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any


class _Tally:
    def __init__(self) -> None:
        self.ok = 0
        self.errors = 0
        self.first_error: str | None = None
        self.lock = threading.Lock()

    def check(self, text: str, got: Any) -> None:
        if got == text:
            self.ok += 1
        else:
            self.fail(f"wrong reply for {text!r}: {got!r}")

    def fail(self, why: str) -> None:
        self.errors += 1
        if self.first_error is None:
            self.first_error = why.replace("\n", " ")


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _report(tally: _Tally, elapsed: float) -> None:
    if tally.first_error is not None:
        _say(f"error {tally.first_error}")
    _say(f"done {tally.ok} {tally.errors} {elapsed:.6f}")


async def _async_worker(
    echo: Callable[[str], Awaitable[Any]], tally: _Tally, deadline: float, counter: Iterator[int]
) -> None:
    """Calls ``echo`` one call after another until ``deadline``."""
    while time.perf_counter() < deadline:
        text = f"hello-{next(counter)}"
        try:
            tally.check(text, await echo(text))
        except Exception as e:  # every failure is counted and reported
            tally.fail(f"{type(e).__name__}: {e}")


def _sync_worker(echo: Callable[[str], Any], tally: _Tally, deadline: float, counter: Iterator[int]) -> None:
    """The same on a thread; the tally is shared with the other threads."""
    while time.perf_counter() < deadline:
        text = f"hello-{next(counter)}"
        try:
            got = echo(text)
        except Exception as e:  # every failure is counted and reported
            with tally.lock:
                tally.fail(f"{type(e).__name__}: {e}")
            continue
        with tally.lock:
            tally.check(text, got)


def _commands() -> Any:
    for line in sys.stdin:
        words = line.split()
        if len(words) == 3 and words[0] == "run":
            yield int(words[1]), float(words[2])


async def serve_async(echo: Callable[[str], Awaitable[Any]], protocol_version: Callable[[], str]) -> None:
    """Runs the phases with ``in_flight`` asyncio tasks calling ``echo``.

    ``echo`` returns the reply's first text content. The first call is made
    (and checked) before ``ready``, which reports ``protocol_version()``
    (asked after that call: clients detect the server's revision on it).
    """
    got = await echo("ready?")
    if got != "ready?":
        _say(f"error wrong reply to the first call: {got!r}")
        raise SystemExit(1)
    _say(f"ready {protocol_version()}")
    loop = asyncio.get_running_loop()
    commands = _commands()
    counter = itertools.count()
    while True:
        # stdin is read between phases only (in a thread, so the event loop
        # keeps serving the connection meanwhile).
        command = await loop.run_in_executor(None, next, commands, None)
        if command is None:
            return
        in_flight, seconds = command
        tally = _Tally()
        deadline = time.perf_counter() + seconds
        started = time.perf_counter()
        await asyncio.gather(*(_async_worker(echo, tally, deadline, counter) for _ in range(max(in_flight, 1))))
        _report(tally, time.perf_counter() - started)


def serve_sync(echo: Callable[[str], Any], protocol_version: Callable[[], str]) -> None:
    """The same with a blocking ``echo``: ``in_flight`` threads call it."""
    got = echo("ready?")
    if got != "ready?":
        _say(f"error wrong reply to the first call: {got!r}")
        raise SystemExit(1)
    _say(f"ready {protocol_version()}")
    counter = itertools.count()
    for in_flight, seconds in _commands():
        tally = _Tally()
        deadline = time.perf_counter() + seconds
        started = time.perf_counter()
        if in_flight <= 1:
            _sync_worker(echo, tally, deadline, counter)
        else:
            threads = [
                threading.Thread(target=_sync_worker, args=(echo, tally, deadline, counter)) for _ in range(in_flight)
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        _report(tally, time.perf_counter() - started)
