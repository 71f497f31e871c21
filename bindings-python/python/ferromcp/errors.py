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

from ferromcp._native import codes as _codes

__all__ = [
    "HEADER_MISMATCH",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "PARSE_ERROR",
    "RESOURCE_NOT_FOUND_LEGACY",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "URL_ELICITATION_REQUIRED_LEGACY",
    "AuthError",
    "ConnectionClosedError",
    "HeaderMismatchError",
    "InternalError",
    "InvalidDefinitionError",
    "InvalidParamsError",
    "InvalidRequestError",
    "McpError",
    "MethodNotFoundError",
    "MissingRequiredClientCapabilityError",
    "ParseError",
    "ProtocolError",
    "RequestCancelledError",
    "RequestTimeoutError",
    "ResourceNotFoundError",
    "TransportError",
    "UnsupportedProtocolVersionError",
    "UrlElicitationRequiredError",
]

# JSON-RPC error codes, from the Rust core (the same numbers on the wire in
# every language; never retyped here).
PARSE_ERROR: int = _codes["PARSE_ERROR"]
INVALID_REQUEST: int = _codes["INVALID_REQUEST"]
METHOD_NOT_FOUND: int = _codes["METHOD_NOT_FOUND"]
INVALID_PARAMS: int = _codes["INVALID_PARAMS"]
INTERNAL_ERROR: int = _codes["INTERNAL_ERROR"]
HEADER_MISMATCH: int = _codes["HEADER_MISMATCH"]
MISSING_REQUIRED_CLIENT_CAPABILITY: int = _codes["MISSING_REQUIRED_CLIENT_CAPABILITY"]
UNSUPPORTED_PROTOCOL_VERSION: int = _codes["UNSUPPORTED_PROTOCOL_VERSION"]
# Codes of 2025-11-25 and earlier: never sent by ferromcp, but a client may
# receive them from a legacy server.
RESOURCE_NOT_FOUND_LEGACY: int = _codes["RESOURCE_NOT_FOUND_LEGACY"]
URL_ELICITATION_REQUIRED_LEGACY: int = _codes["URL_ELICITATION_REQUIRED_LEGACY"]


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
    kind: str | None
    """How the Rust core classified the failure (``"peerError"`` for a
    JSON-RPC error the peer answered with, ``"timeout"``, ``"closed"``,
    ``"io"``...; see ``ferromcp._native.ERROR_KINDS``), or ``None`` for an
    error raised by Python code."""

    def __init__(
        self,
        message: str,
        *,
        code: int | None = None,
        data: Any = None,
        kind: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = self.default_code if code is None else code
        self.data = data
        self.kind = kind

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


class HeaderMismatchError(McpError):
    """``-32020`` (MCP ``HeaderMismatch``): HTTP headers disagree with the
    body, or a required header is missing.

    >>> HeaderMismatchError("Mcp-Name differs").code
    -32020
    """

    default_code = HEADER_MISMATCH


class MissingRequiredClientCapabilityError(McpError):
    """``-32021`` (MCP ``MissingRequiredClientCapability``): the request needs
    a client capability the client did not declare; ``data`` lists them as
    ``requiredCapabilities``.

    >>> MissingRequiredClientCapabilityError("needs elicitation").code
    -32021
    """

    default_code = MISSING_REQUIRED_CLIENT_CAPABILITY


class UnsupportedProtocolVersionError(McpError):
    """``-32022`` (MCP ``UnsupportedProtocolVersion``): the peer does not
    speak the requested protocol revision; ``data`` lists the ``supported``
    ones.

    >>> UnsupportedProtocolVersionError("unsupported").code
    -32022
    """

    default_code = UNSUPPORTED_PROTOCOL_VERSION


class ResourceNotFoundError(McpError):
    """``-32002``: a 2025-11-25 (or earlier) server did not find the resource.
    Servers of 2026-07-28 answer ``-32602`` (:class:`InvalidParamsError`)
    instead; ferromcp never sends this code.

    >>> ResourceNotFoundError("no such resource").code
    -32002
    """

    default_code = RESOURCE_NOT_FOUND_LEGACY


class UrlElicitationRequiredError(McpError):
    """``-32042`` (2025-11-25 ``URLElicitationRequiredError``): a legacy server
    needs the user to complete a URL-mode elicitation first; ``data`` carries
    the elicitations. ferromcp never sends this code.

    >>> UrlElicitationRequiredError("visit the URL").code
    -32042
    """

    default_code = URL_ELICITATION_REQUIRED_LEGACY


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


class AuthError(TransportError):
    """OAuth authorization failed (kind ``"auth"``): discovery, client
    registration, the user's consent (the ``authorize`` callback raised),
    the token endpoint, or a server that kept refusing the token.

    >>> issubclass(AuthError, TransportError)
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


# The one table from the Rust core's classification to classes. A JSON-RPC
# error the peer answered with is classed by its code (every code the
# specification names has a class); a failure that never was a JSON-RPC
# error by its kind. Anything unknown is a plain McpError.
_BY_CODE: dict[int, type[McpError]] = {
    PARSE_ERROR: ParseError,
    INVALID_REQUEST: InvalidRequestError,
    METHOD_NOT_FOUND: MethodNotFoundError,
    INVALID_PARAMS: InvalidParamsError,
    INTERNAL_ERROR: InternalError,
    HEADER_MISMATCH: HeaderMismatchError,
    MISSING_REQUIRED_CLIENT_CAPABILITY: MissingRequiredClientCapabilityError,
    UNSUPPORTED_PROTOCOL_VERSION: UnsupportedProtocolVersionError,
    RESOURCE_NOT_FOUND_LEGACY: ResourceNotFoundError,
    URL_ELICITATION_REQUIRED_LEGACY: UrlElicitationRequiredError,
}

_BY_KIND: dict[str, type[McpError]] = {
    "io": TransportError,
    "http": TransportError,
    "httpStatus": TransportError,
    "closed": ConnectionClosedError,
    "json": ParseError,
    "protocol": ProtocolError,
    "invalidDefinition": InvalidDefinitionError,
    "timeout": RequestTimeoutError,
    "cancelled": RequestCancelledError,
    "auth": AuthError,
}


def _class_for(kind: str, code: int) -> type[McpError]:
    """The class of a core failure of ``kind`` carrying ``code``.

    >>> _class_for("peerError", -32021).__name__
    'MissingRequiredClientCapabilityError'
    >>> _class_for("timeout", -32603).__name__
    'RequestTimeoutError'
    """
    if kind == "peerError":
        return _BY_CODE.get(code, McpError)
    return _BY_KIND.get(kind, McpError)


def _from_native(kind: str, code: int, message: str, data: Any) -> McpError:
    """Builds the exception for a core failure (called by ``ferromcp._native``)."""
    return _class_for(kind, code)(message, code=code, data=data, kind=kind)
