"""Core's own log events in :mod:`logging`.

The Rust core reports what goes wrong outside any request (an OpenTelemetry
export that failed, a connection lost while it was being set up, an event
bus that is unreachable) through Rust's ``tracing``. When the package is
imported, :func:`install` makes those events records of the loggers under
``ferromcp``: ``ferromcp.telemetry.otlp``, ``ferromcp.transport.http.listener``
and so on, the module of core that emitted them, with the event's fields
after its message (``OpenTelemetry export failed url=... error=...``).

Which events are forwarded is decided once, at import: those at or above
the ``ferromcp`` logger's effective level then (``WARNING`` unless the
program configured ``logging`` before importing ferromcp), or what the
``RUST_LOG`` variable says when it is set (``RUST_LOG=debug``,
``RUST_LOG=ferromcp::transport=debug``). Nothing is installed when the
process has a ``tracing`` subscriber already (another Rust extension's).

The thread that emits an event never waits for Python: events are queued
(at most 1,024; the excess is dropped and the number dropped is logged as a
warning of the ``ferromcp`` logger) and a daemon thread, ``ferromcp-logs``,
logs them. So a record arrives a moment after the event, on that thread.

>>> import logging, ferromcp
>>> installed()
True
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading

from . import _native

__all__ = ["install", "installed"]

_CAPACITY = 1024
_state: dict[str, bool] = {"installed": False}
_thread: list[threading.Thread] = []


def installed() -> bool:
    """Whether core's events are forwarded to :mod:`logging` in this
    process (``False`` when another ``tracing`` subscriber was there first).

    >>> installed()
    True
    """
    return _state["installed"]


def _log_batch(records: list[tuple[str, int, str]], dropped: int) -> None:
    for name, level, message in records:
        # `%s`: a message with `%` in it is not a format string.
        logging.getLogger(name).log(level, "%s", message)
    if dropped:
        logging.getLogger("ferromcp").warning(
            "%d log event(s) of the core were dropped: more than %d were waiting to be logged", dropped, _CAPACITY
        )


def _drain() -> None:
    while True:
        try:
            batch = _native.logs_next(True)
        except Exception:  # pragma: no cover - the queue itself does not fail
            return
        if batch is None:
            return
        # logging handles its handlers' errors; anything else must not end the thread.
        with contextlib.suppress(Exception):
            _log_batch(*batch)


def _start_thread() -> None:
    thread = threading.Thread(target=_drain, name="ferromcp-logs", daemon=True)
    thread.start()
    _thread[:] = [thread]


def _close() -> None:
    """At interpreter exit (registered before the package's other exit
    handlers, so it runs after them: their events are logged too): the
    queue is closed, the thread logs what it holds and ends, and what is
    left is logged here."""
    _native.logs_close()
    for thread in _thread:
        thread.join(timeout=2.0)
    while (batch := _native.logs_next(False)) is not None:
        _log_batch(*batch)


def install() -> bool:
    """Installs the forwarding (the package does it when imported; calling
    it again does nothing). Returns whether it is installed.

    >>> install()
    True
    """
    if _state["installed"]:
        return True
    level = logging.getLogger("ferromcp").getEffectiveLevel()
    if not _native.logs_install(level):
        return False
    _state["installed"] = True
    _start_thread()
    atexit.register(_close)
    if hasattr(os, "register_at_fork"):
        # A forked child has no thread: start its own.
        os.register_at_fork(after_in_child=_start_thread)
    return True
