"""The Python client against a misbehaving server (the Rust fixture
`target/bin/hostile-server`, built by `make cargo-build`, which the Rust, Node
and C client tests start too). The limits live in core; these tests cover the
Python side of the path: the options, the progress callbacks (queued to a
worker thread or run on the calling thread) and the errors raised. Memory is
measured in a subprocess of its own (its peak resident size)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import ferromcp
import pytest
from conftest import REPO, TIMEOUT
from ferromcp.errors import McpError, RequestTimeoutError

HOSTILE = REPO / "target" / "bin" / "hostile-server"
ECHO_SERVER = REPO / "target" / "bin" / "echo-server"

pytestmark = pytest.mark.skipif(not HOSTILE.exists(), reason="target/bin/hostile-server is built by `make cargo-build`")

# What a client may grow to while a server misbehaves (measured: about 60 MiB;
# without the limits these cases passed 1.5 GB).
MAX_RSS_MIB = 300


@contextmanager
def hostile_http(mode: str, *extra: str) -> Iterator[str]:
    """The hostile server over HTTP; yields its URL."""
    proc = subprocess.Popen([str(HOSTILE), mode, "--http", "0", *extra], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port = proc.stdout.readline().split()[-1]
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait(TIMEOUT)


def peak_rss_mib(code: str, *args: str) -> tuple[str, int]:
    """Runs `code` in a fresh interpreter; its output and peak RSS (MiB).
    The peak is the process's own (VmHWM): getrusage's maxrss survives exec
    on Linux and would report pytest's own peak."""
    footer = (
        "\nimport re\nwith open('/proc/self/status') as f:\n"
        "    print('RSS', int(re.search(r'VmHWM:\\s+(\\d+)', f.read()).group(1)) // 1024)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code + footer, *args], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    return "\n".join(lines[:-1]), int(lines[-1].split()[1])


@pytest.mark.parametrize("mode", ["endless-sse", "endless-line"])
def test_an_endless_sse_event_is_refused_naming_the_limit(mode: str) -> None:
    with hostile_http(mode) as url, ferromcp.SyncClient.http(url, limits={"max_message_bytes": 1 << 20}) as client:
        with pytest.raises(McpError, match=r"1048576-byte limit \(max_message_bytes\)"):
            client.call_tool("flood")
        # The client goes on.
        assert [t.name for t in client.list_tools()] == ["flood"]


def test_the_timeout_fires_while_an_endless_stream_is_read_on_the_calling_thread() -> None:
    # No size limit to stop it; SyncClient polls the call on this thread.
    with (
        hostile_http("endless-sse") as url,
        ferromcp.SyncClient.http(url, timeout=2, limits={"max_message_bytes": 1 << 50}) as client,
    ):
        started = time.monotonic()
        with pytest.raises(RequestTimeoutError):
            client.call_tool("flood")
        # The timer fires on time, not after the reader happens to pause
        # (it took 10 s for a 2 s timeout before the reader yielded).
        assert time.monotonic() - started < 6


def test_an_endless_sse_event_leaves_memory_bounded_with_the_default_limit() -> None:
    code = """
import sys, ferromcp
with ferromcp.SyncClient.http(sys.argv[1]) as client:
    try:
        client.call_tool("flood")
    except ferromcp.McpError as e:
        print(type(e).__name__, e)
"""
    with hostile_http("endless-sse") as url:
        output, rss = peak_rss_mib(code, url)
    assert "max_message_bytes" in output
    assert rss < MAX_RSS_MIB, f"peak RSS {rss} MiB"


def test_a_json_response_to_another_request_is_an_error_not_a_result() -> None:
    with (
        hostile_http("wrong-id") as url,
        ferromcp.SyncClient.http(url) as client,
        pytest.raises(McpError, match="not request"),
    ):
        client.call_tool("flood")


def slow_progress(seen: list[float]) -> ferromcp.client.ProgressCallback:
    def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)
        time.sleep(0.0002)  # far slower than the flood

    return on_progress


def test_a_progress_flood_with_a_slow_callback_returns_the_answer_awaited() -> None:
    seen: list[float] = []

    async def main(url: str) -> str | None:
        async with ferromcp.Client.http(url, timeout=60) as client:
            return (await client.call_tool("flood", progress=slow_progress(seen))).text

    with hostile_http("progress-flood", "--count", "100000") as url:
        assert asyncio.run(main(url)) == "done"
    assert seen[-1] == 100_000, "the newest progress runs, before the result"
    assert len(seen) < 100_000, "the flood is coalesced"


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_a_progress_flood_with_a_slow_callback_returns_the_answer_blocking(transport: str) -> None:
    seen: list[float] = []
    args = ["progress-flood", "--count", "100000"]
    if transport == "stdio":
        with ferromcp.SyncClient.stdio(str(HOSTILE), args, timeout=60) as client:
            result = client.call_tool("flood", progress=slow_progress(seen))
    else:
        with hostile_http(*args) as url, ferromcp.SyncClient.http(url, timeout=60) as client:
            result = client.call_tool("flood", progress=slow_progress(seen))
    assert result.text == "done"
    assert seen[-1] == 100_000
    assert len(seen) < 100_000


def test_a_progress_flood_leaves_memory_bounded() -> None:
    code = """
import asyncio, sys, time, ferromcp
async def main():
    async with ferromcp.Client.stdio(sys.argv[1], ["progress-flood", "--count", "300000"], timeout=60) as client:
        r = await client.call_tool("flood", progress=lambda p, t, m: time.sleep(0.0001))
        print(r.text)
asyncio.run(main())
"""
    output, rss = peak_rss_mib(code, str(HOSTILE))
    assert output == "done"
    assert rss < MAX_RSS_MIB, f"peak RSS {rss} MiB"


def test_stderr_without_a_newline_leaves_memory_bounded() -> None:
    code = """
import sys, time, ferromcp
with ferromcp.SyncClient.stdio(sys.argv[1], ["stderr-flood"]) as client:
    until = time.monotonic() + 2
    while time.monotonic() < until:
        assert client.call_tool("flood").text == "ok"
        time.sleep(0.05)
print("served")
"""
    output, rss = peak_rss_mib(code, str(HOSTILE))
    assert output == "served"
    assert rss < MAX_RSS_MIB, f"peak RSS {rss} MiB"


def test_a_ping_flood_is_answered_on_a_bounded_number_of_connections() -> None:
    with hostile_http("ping-flood", "--count", "10000") as url, ferromcp.SyncClient.http(url) as client:
        assert len(list(client.list_tools())) == 2
        assert client.era == "legacy"
        assert client.protocol_version == "2025-11-25"
        deadline = time.monotonic() + 60
        while True:
            stats = json.loads(client.call_tool("stats").text or "{}")
            if stats["answered"] == 10_000 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
    assert stats["answered"] == 10_000, stats
    # The GET stream, the stats call and at most 4 answers at once.
    assert stats["maxConnections"] <= 7, stats


@pytest.mark.skipif(not ECHO_SERVER.exists(), reason="target/bin/echo-server is built by `make cargo-build`")
def test_protocol_version_is_the_negotiated_one_on_a_legacy_connection() -> None:
    with ferromcp.SyncClient.stdio(str(ECHO_SERVER), era="legacy") as client:
        assert "echo" in [tool.name for tool in client.list_tools()]
        assert client.protocol_version == "2025-11-25"


def test_limits_are_checked_by_name_and_type() -> None:
    with pytest.raises(ValueError, match="bogus"):
        ferromcp.SyncClient.stdio(str(HOSTILE), ["wrong-id"], limits={"bogus": 1})  # type: ignore[typeddict-unknown-key]
    with pytest.raises(ValueError, match='client limit "max_message_bytes": invalid value'):
        ferromcp.SyncClient.stdio(str(HOSTILE), ["wrong-id"], limits={"max_message_bytes": -1})
