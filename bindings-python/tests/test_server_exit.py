"""A stdio server that exits while a call waits is a closed connection
(``ConnectionClosedError``, core's ``closed`` kind), not a protocol error,
and the error carries the last lines of its stderr."""

from __future__ import annotations

import sys

import ferromcp
import pytest

# Reads the first request, says why it gives up, exits unanswered.
DYING_SERVER = "import sys; sys.stdin.readline(); print('fatal: no config file', file=sys.stderr); sys.exit(3)"


def test_a_server_that_exits_is_a_closed_connection() -> None:
    with (
        ferromcp.SyncClient.stdio(sys.executable, ["-c", DYING_SERVER]) as client,
        pytest.raises(ferromcp.ConnectionClosedError) as raised,
    ):
        client.discover()
    assert raised.value.kind == "closed"
    assert "fatal: no config file" in str(raised.value)
