"""Core errors become typed exceptions through one table in ferromcp.errors:
a JSON-RPC error by its code (every code the spec names has a class), any
other failure by the kind the Rust core classified it as."""

from __future__ import annotations

import ferromcp
import pytest
from ferromcp import _native, errors

SPEC_CODES = {
    -32700: ferromcp.ParseError,
    -32600: ferromcp.InvalidRequestError,
    -32601: ferromcp.MethodNotFoundError,
    -32602: ferromcp.InvalidParamsError,
    -32603: ferromcp.InternalError,
    -32020: ferromcp.HeaderMismatchError,
    -32021: ferromcp.MissingRequiredClientCapabilityError,
    -32022: ferromcp.UnsupportedProtocolVersionError,
    # 2025-11-25 codes a client may still receive from legacy servers
    -32002: ferromcp.ResourceNotFoundError,
    -32042: ferromcp.UrlElicitationRequiredError,
}


def test_codes_come_from_the_core() -> None:
    assert sorted(_native.codes.values()) == sorted(SPEC_CODES)
    assert errors.HEADER_MISMATCH == -32020
    assert errors.MISSING_REQUIRED_CLIENT_CAPABILITY == -32021
    assert errors.UNSUPPORTED_PROTOCOL_VERSION == -32022


@pytest.mark.parametrize(("code", "cls"), sorted(SPEC_CODES.items()))
def test_every_spec_code_has_its_class(code: int, cls: type[ferromcp.McpError]) -> None:
    err = errors._from_native("peerError", code, "boom", {"x": 1})
    assert type(err) is cls
    assert (err.code, err.message, err.data, err.kind) == (code, "boom", {"x": 1}, "peerError")
    assert cls("raised by a tool").code == code


def test_an_unknown_peer_code_is_a_plain_mcp_error() -> None:
    err = errors._from_native("peerError", -32000, "custom", None)
    assert type(err) is ferromcp.McpError
    assert err.code == -32000


@pytest.mark.parametrize(
    ("kind", "cls", "builtin"),
    [
        ("io", ferromcp.TransportError, OSError),
        ("http", ferromcp.TransportError, OSError),
        ("httpStatus", ferromcp.TransportError, OSError),
        ("closed", ferromcp.ConnectionClosedError, ConnectionError),
        ("json", ferromcp.ParseError, ferromcp.McpError),
        ("protocol", ferromcp.ProtocolError, ferromcp.McpError),
        ("invalidDefinition", ferromcp.InvalidDefinitionError, ValueError),
        ("timeout", ferromcp.RequestTimeoutError, TimeoutError),
        ("cancelled", ferromcp.RequestCancelledError, ferromcp.McpError),
    ],
)
def test_local_failures_are_classed_by_kind(
    kind: str, cls: type[ferromcp.McpError], builtin: type[BaseException]
) -> None:
    err = errors._from_native(kind, -32603, "failed", None)
    assert type(err) is cls
    assert isinstance(err, builtin)
    assert err.kind == kind


def test_every_core_kind_is_mapped() -> None:
    """A kind added to the core without a class here fails this test."""
    local = set(_native.ERROR_KINDS) - {"peerError"}
    assert "peerError" in _native.ERROR_KINDS
    assert local == set(errors._BY_KIND)


def test_a_native_failure_carries_core_kind_and_code() -> None:
    server = ferromcp.Server("errors")
    with pytest.raises(ferromcp.InvalidDefinitionError) as info:
        server._native.add_tool("bad name!", None, {"type": "object"}, None, lambda a, c: None, False)
    assert info.value.kind == "invalidDefinition"
    assert info.value.code == -32602


def test_wrapped_result_key_comes_from_the_core() -> None:
    from ferromcp._schema import output_schema

    schema = output_schema(int)
    assert schema is not None
    assert schema["required"] == [_native.WRAPPED_RESULT_KEY]
