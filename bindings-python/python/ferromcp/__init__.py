"""ferromcp: Model Context Protocol servers in Python, on a Rust core.

Write tools as plain or ``async`` functions; type hints become JSON Schemas
and docstrings become descriptions::

    import ferromcp

    server = ferromcp.Server("ferromcp-echo", version="1.0.0")

    @server.tool
    def echo(text: str) -> str:
        \"\"\"Returns the text unchanged.\"\"\"
        return text

    if __name__ == "__main__":
        server.run()  # stdio; server.run("http", port=8000) for Streamable HTTP

The protocol (MCP revision 2026-07-28: JSON-RPC, validation, transports)
runs in the compiled ``ferromcp._native`` module; this package is its
Python face.
"""

from __future__ import annotations

import atexit as _atexit

from . import _logs, telemetry
from ._native import PROTOCOL_VERSION, VERSION, Serving, ToolResult, _close_host_threads
from .auth import AuthInfo, InvalidToken, JwtVerifier, Protection
from .client import Client, ClientLimits, LoadedSkill, SyncClient, SyncLoadedSkill, SyncToolTask, ToolTask
from .client_types import Skill, SkillFile, TaskState
from .context import Caller, Context, ElicitResult, InputRequired, Root
from .errors import (
    AuthError,
    ConnectionClosedError,
    HeaderMismatchError,
    InternalError,
    InvalidDefinitionError,
    InvalidParamsError,
    InvalidRequestError,
    McpError,
    MethodNotFoundError,
    MissingRequiredClientCapabilityError,
    ParseError,
    ProtocolError,
    RequestCancelledError,
    RequestTimeoutError,
    ResourceNotFoundError,
    TransportError,
    UnsupportedProtocolVersionError,
    UrlElicitationRequiredError,
)
from .middleware import ClientMiddlewareContext, MiddlewareContext, MiddlewareNotification
from .oauth import LoopbackRedirect, OAuth, TokenStore
from .server import HttpLimits, Mount, Server, ServerTls, TaskSettings, Transport
from .visibility import VisibleItem

# The version compiled into the extension, which is the wheel's (both come
# from Cargo.toml). Not importlib.metadata: importing it costs about 60 ms,
# a third of a server's cold start.
__version__: str = VERSION

# Core's `tracing` events to `logging` (ferromcp._logs). First, so that its
# exit handler, registered here, runs after the two below and logs what
# they report (a failed export of the last spans).
_logs.install()

# Registered at import, so they run after the application's own exit
# handlers (atexit runs them last-in, first-out): the threads that run
# handlers stop while the interpreter is still whole (one of them taking
# the GIL back during finalization would be ended mid-job by CPython);
# then the spans of the handlers they finished are sent.
_atexit.register(telemetry._flush_at_exit)
_atexit.register(_close_host_threads)

__all__ = [
    "PROTOCOL_VERSION",
    "AuthError",
    "AuthInfo",
    "Caller",
    "Client",
    "ClientLimits",
    "ClientMiddlewareContext",
    "ConnectionClosedError",
    "Context",
    "ElicitResult",
    "HeaderMismatchError",
    "HttpLimits",
    "InputRequired",
    "InternalError",
    "InvalidDefinitionError",
    "InvalidParamsError",
    "InvalidRequestError",
    "InvalidToken",
    "JwtVerifier",
    "LoadedSkill",
    "LoopbackRedirect",
    "McpError",
    "MethodNotFoundError",
    "MiddlewareContext",
    "MiddlewareNotification",
    "MissingRequiredClientCapabilityError",
    "Mount",
    "OAuth",
    "ParseError",
    "Protection",
    "ProtocolError",
    "RequestCancelledError",
    "RequestTimeoutError",
    "ResourceNotFoundError",
    "Root",
    "Server",
    "ServerTls",
    "Serving",
    "Skill",
    "SkillFile",
    "SyncClient",
    "SyncLoadedSkill",
    "SyncToolTask",
    "TaskSettings",
    "TaskState",
    "TokenStore",
    "ToolResult",
    "ToolTask",
    "Transport",
    "TransportError",
    "UnsupportedProtocolVersionError",
    "UrlElicitationRequiredError",
    "VisibleItem",
]
