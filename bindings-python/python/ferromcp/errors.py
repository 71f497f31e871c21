"""Exceptions raised by ferromcp, and raised by tools to send JSON-RPC errors.

Every error ferromcp raises is a :class:`McpError` carrying a JSON-RPC
``code`` (and optional ``data``); subclasses also inherit the matching
builtin exception where one exists, so ``except TimeoutError`` still works.

Inside a tool, raising an :class:`McpError` answers the request with that
JSON-RPC error; any other exception becomes a tool result with
``isError: true``::

    from ferromcp import Server
    from ferromcp.errors import InvalidParamsError

    server = Server("demo")

    @server.tool
    def divide(a: float, b: float) -> float:
        if b == 0:
            raise InvalidParamsError("b must not be zero", data={"field": "b"})
        return a / b
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "ConnectionClosedError",
    "InternalError",
    "InvalidDefinitionError",
    "InvalidParamsError",
    "InvalidRequestError",
    "McpError",
    "MethodNotFoundError",
    "ParseError",
    "ProtocolError",
    "RequestCancelledError",
    "RequestTimeoutError",
    "TransportError",
]

# JSON-RPC error codes (the same numbers on the wire in every language).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class McpError(Exception):
    """A JSON-RPC error: a ``code``, a ``message`` and optional ``data``.

    >>> err = McpError("quota exceeded", code=-32000, data={"retryAfter": 30})
    >>> (err.code, err.message, err.data)
    (-32000, 'quota exceeded', {'retryAfter': 30})
    """

    default_code: ClassVar[int] = INTERNAL_ERROR
    """The code used when none is given."""

    code: int
    """The JSON-RPC error code."""
    message: str
    """A short human-readable description."""
    data: Any
    """Extra structured information (JSON-compatible), or ``None``."""

    def __init__(self, message: str, *, code: int | None = None, data: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = self.default_code if code is None else code
        self.data = data

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, code={self.code})"


class ParseError(McpError):
    """``-32700``: the peer sent invalid JSON.

    >>> ParseError("bad JSON").code
    -32700
    """

    default_code = PARSE_ERROR


class InvalidRequestError(McpError):
    """``-32600``: the message is not a valid request.

    >>> InvalidRequestError("no method").code
    -32600
    """

    default_code = INVALID_REQUEST


class MethodNotFoundError(McpError):
    """``-32601``: the method does not exist.

    >>> MethodNotFoundError("Method not found: x").code
    -32601
    """

    default_code = METHOD_NOT_FOUND


class InvalidParamsError(McpError):
    """``-32602``: the parameters are invalid; raise it from a tool to reject
    its arguments with a JSON-RPC error.

    >>> InvalidParamsError("b must not be zero").code
    -32602
    """

    default_code = INVALID_PARAMS


class InternalError(McpError):
    """``-32603``: the server failed.

    >>> InternalError("oops").code
    -32603
    """


class ProtocolError(McpError):
    """The peer broke the protocol (an unexpected message, a missing field).

    >>> isinstance(ProtocolError("unexpected"), McpError)
    True
    """


class InvalidDefinitionError(McpError, ValueError):
    """A tool definition was refused: a bad name, or an invalid JSON Schema.

    >>> issubclass(InvalidDefinitionError, ValueError)
    True
    """

    default_code = INVALID_PARAMS


class TransportError(McpError, OSError):
    """Reading or writing a stream or socket failed (the address is in use...).

    >>> issubclass(TransportError, OSError)
    True
    """


class ConnectionClosedError(TransportError, ConnectionError):
    """The connection closed before the answer arrived.

    >>> issubclass(ConnectionClosedError, ConnectionError)
    True
    """


class RequestTimeoutError(McpError, TimeoutError):
    """A request took longer than its timeout.

    >>> issubclass(RequestTimeoutError, TimeoutError)
    True
    """


class RequestCancelledError(McpError):
    """A request was cancelled.

    >>> RequestCancelledError("cancelled").code
    -32603
    """
