"""Core's own `tracing` events reach Python's `logging` (ferromcp._logs):
under `ferromcp.<core module>`, from the level of the `ferromcp` logger at
import (or `RUST_LOG`), through a bounded queue that drops and counts the
excess instead of making core wait."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
import time
from typing import Any

import ferromcp
import pytest
from conftest import TIMEOUT, free_port
from ferromcp import _logs, _native


def wait_for_record(caplog: pytest.LogCaptureFixture, logger: str, text: str) -> logging.LogRecord:
    """The first record of `logger` whose message contains `text`; they
    arrive a moment after the event, from the `ferromcp-logs` thread."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        for record in caplog.records:
            if record.name == logger and text in record.getMessage():
                return record
        time.sleep(0.02)
    raise AssertionError(f"no record of {logger} with {text!r}: {[r.getMessage() for r in caplog.records]}")


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "RUST_LOG"))}
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=TIMEOUT,
    )


def test_installed_at_import() -> None:
    assert _logs.installed()
    # Once per process: a second subscriber is refused.
    assert _native.logs_install(logging.WARNING) is False


def test_a_core_warning_reaches_logging(caplog: pytest.LogCaptureFixture) -> None:
    """Core warns (with `tracing`) when a tool's structured output does
    not match its output schema: a record of the logger named after the
    core module, with the event's fields after the message."""
    server = ferromcp.Server("warns")

    @server.tool(output_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    def mismatched() -> dict[str, Any]:
        return {"n": "not a number"}

    with ferromcp.SyncClient.in_memory(server) as client:
        assert client.call_tool("mismatched").is_error
    record = wait_for_record(
        caplog, "ferromcp.server.primitives.tools", "structured output does not match outputSchema"
    )
    assert record.levelno == logging.WARNING
    assert "tool=mismatched" in record.getMessage()
    assert "problems=" in record.getMessage()


def test_events_below_the_level_are_not_forwarded(caplog: pytest.LogCaptureFixture) -> None:
    # Emitted in order on this thread: once the warning is there, the
    # debug event would have been too.
    _native._logs_emit("debug", "quiet debug event")
    _native._logs_emit("info", "quiet info event")
    _native._logs_emit("warn", "loud warning %s")  # a `%` is not a format
    _native._logs_emit("error", "loud error")
    warning = wait_for_record(caplog, "ferromcp.python", "loud warning")
    assert warning.getMessage() == "loud warning %s extra=1"
    error = wait_for_record(caplog, "ferromcp.python", "loud error")
    assert error.levelno == logging.ERROR
    messages = [r.getMessage() for r in caplog.records]
    assert not any("quiet" in m for m in messages), messages


def test_otlp_export_failure_is_logged() -> None:
    """The core's OTLP exporter (from the OTEL_* variables) posting to a
    port where nothing listens: the failure is a warning of
    `ferromcp.telemetry.otlp`, logged by the program's handler."""
    done = run_python(
        """
        import logging, sys
        import ferromcp
        logging.basicConfig(stream=sys.stdout, format="%(name)s|%(levelname)s|%(message)s")
        server = ferromcp.Server("exported")
        server.tool(name="ping")(lambda: "pong")
        with ferromcp.SyncClient.in_memory(server) as client:
            client.call_tool("ping")
        assert ferromcp.telemetry.in_use() == "otlp", ferromcp.telemetry.in_use()
        ferromcp.telemetry.flush(10)
        """,
        OTEL_TRACES_EXPORTER="otlp",
        OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{free_port()}",
        OTEL_EXPORTER_OTLP_TIMEOUT="5000",
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("ferromcp.telemetry.otlp|WARNING|")]
    assert lines, done.stdout + done.stderr
    assert "OpenTelemetry export failed url=http://127.0.0.1:" in lines[0], lines


def test_the_level_is_the_ferromcp_loggers_at_import() -> None:
    done = run_python(
        """
        import logging, sys, time
        logging.basicConfig(stream=sys.stdout, format="%(name)s|%(levelname)s|%(message)s")
        logging.getLogger("ferromcp").setLevel(logging.ERROR)
        import ferromcp
        from ferromcp import _native
        _native._logs_emit("warn", "a warning")
        _native._logs_emit("error", "an error")
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["ferromcp.python|ERROR|an error"]


def test_rust_log_overrides_the_level() -> None:
    done = run_python(
        """
        import logging, sys
        logging.basicConfig(stream=sys.stdout, level=logging.DEBUG, format="%(name)s|%(levelname)s|%(message)s")
        import ferromcp
        from ferromcp import _native
        _native._logs_emit("trace", "a trace event")
        _native._logs_emit("debug", "a debug event")
        """,
        RUST_LOG="ferromcp::python=debug",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["ferromcp.python|DEBUG|a debug event"]


def test_a_full_queue_drops_and_counts() -> None:
    """While Python cannot run the logging thread (this one keeps the GIL),
    the queue fills: the excess is dropped, and the number dropped logged."""
    done = run_python(
        """
        import logging, sys, time
        logging.basicConfig(stream=sys.stdout, format="%(name)s|%(levelname)s|%(message)s")
        import ferromcp
        from ferromcp import _native
        sys.setswitchinterval(30)  # the GIL is not handed over while this loop runs
        for i in range(3000):
            _native._logs_emit("warn", f"event {i}")
        sys.setswitchinterval(0.005)
        time.sleep(0.5)
        """
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    events = [line for line in lines if line.startswith("ferromcp.python|WARNING|event ")]
    dropped = [line for line in lines if "were dropped" in line]
    # The logging thread may take a batch before the loop starts: at least
    # the queue's 1,024, and every event either logged or counted.
    assert len(events) >= 1024, len(events)
    assert len(dropped) >= 1, lines[-3:]
    counted = sum(int(line.split("|")[2].split()[0]) for line in dropped)
    assert len(events) + counted == 3000
