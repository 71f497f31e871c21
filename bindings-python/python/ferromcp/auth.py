"""Protected servers: only requests with a valid OAuth access token get in.

Give ``server.run("http", ...)`` (or ``serve``, ``start``, ``asgi_app``) an
``auth=Protection(...)``: every request must then carry
``Authorization: Bearer <token>`` that the verifier accepts, meant for the
server (``aud`` names ``resource``) and not expired; the server publishes
its protected resource metadata (RFC 9728) at
``/.well-known/oauth-protected-resource`` and answers 401 / 403 with the
``WWW-Authenticate`` challenges MCP clients follow to log in. Tools,
resources and prompts registered with ``scopes=[...]`` need those scopes
too. Handlers read the verified claims as ``ctx.auth``. All of it is the
Rust core's; this module only describes the options.

>>> import ferromcp
>>> server = ferromcp.Server("files")
>>> @server.tool(scopes=["files:read"])
... def whoami(ctx: ferromcp.Context) -> str:
...     return ctx.auth.subject if ctx.auth else "nobody"
>>> def verify(token: str) -> dict[str, object]:
...     if token != "let-me-in":
...         raise ferromcp.InvalidToken("unknown token")
...     return {"sub": "alice", "scope": "files:read", "aud": "http://127.0.0.1/mcp"}
>>> auth = ferromcp.Protection(resource="http://127.0.0.1/mcp",
...                            authorization_servers=["https://auth.example.com"],
...                            verifier=verify, scopes_supported=["files:read"])
>>> serving = server.start("http", port=0, auth=auth)
>>> url = f"http://127.0.0.1:{serving.port}/mcp"
>>> with ferromcp.SyncClient.http(url, headers={"Authorization": "Bearer let-me-in"}) as client:
...     client.call_tool("whoami").text
'alice'
>>> serving.stop(); serving.wait(10)
True
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from . import _native
from ._callables import is_coroutine_function
from ._native import JwtVerifier

__all__ = ["AuthInfo", "InvalidToken", "JwtVerifier", "Protection", "Verifier"]


class InvalidToken(Exception):
    """Raised by a verifier for a token it does not accept.

    The client gets HTTP 401 ``invalid_token`` (and logs in again). Any
    other exception from a verifier answers 503: the token could not be
    checked right now, which is not the client's fault.

    >>> str(InvalidToken("expired"))
    'expired'
    """


Verifier: TypeAlias = (
    JwtVerifier | Callable[[str], Mapping[str, Any]] | Callable[[str], Awaitable[Mapping[str, Any]]]
)
"""A :class:`JwtVerifier`, or a plain or ``async`` function from the bearer
token to its claims (JWT claim names: ``sub``, ``scope`` or ``scp``,
``aud``, ``exp``, ``client_id`` or ``azp``), raising :class:`InvalidToken`
for a bad one. ``aud`` must name the protected resource and ``exp``, when
present, must be in the future: the core checks both whatever the verifier
says."""


@dataclass(frozen=True)
class Protection:
    """How an HTTP-served server is protected (the ``auth=`` of ``run``,
    ``serve``, ``start`` and ``asgi_app``).

    ``resource`` is the server's canonical URL as clients reach it (the MCP
    endpoint); ``authorization_servers`` the issuers whose tokens it
    accepts; ``scopes_supported`` goes into the metadata (and the 401
    challenge); ``required_scopes`` are needed by every request.

    >>> p = Protection(resource="https://mcp.example.com/mcp",
    ...                authorization_servers=["https://auth.example.com"],
    ...                verifier=JwtVerifier("https://auth.example.com", "https://mcp.example.com/mcp"))
    >>> p.resource
    'https://mcp.example.com/mcp'
    """

    resource: str
    authorization_servers: Sequence[str]
    verifier: Verifier
    scopes_supported: Sequence[str] = field(default_factory=tuple)
    required_scopes: Sequence[str] = field(default_factory=tuple)
    resource_name: str | None = None
    resource_documentation: str | None = None

    def _native(self) -> _native.Protection:
        """The native options, with a callable verifier adapted to the
        native convention (``adapter(request, None)``)."""
        verifier = self.verifier
        is_async = False
        native_verifier: object
        if isinstance(verifier, JwtVerifier):
            native_verifier = verifier
        elif callable(verifier):
            is_async = self._is_async
            native_verifier = _adapt_async(verifier) if is_async else _adapt(verifier)
        else:
            raise TypeError("verifier must be a ferromcp.JwtVerifier or a callable")
        return _native.Protection(
            self.resource,
            list(self.authorization_servers),
            native_verifier,
            is_async=is_async,
            scopes_supported=list(self.scopes_supported),
            required_scopes=list(self.required_scopes),
            resource_name=self.resource_name,
            resource_documentation=self.resource_documentation,
        )

    @property
    def _is_async(self) -> bool:
        """Whether serving it needs an asyncio loop (an ``async`` verifier)."""
        return not isinstance(self.verifier, JwtVerifier) and is_coroutine_function(self.verifier)


def _answer(claims: object) -> dict[str, Any]:
    if not isinstance(claims, Mapping):
        raise TypeError(f"a verifier must return a dict of claims, not {type(claims).__name__}")
    return {"claims": dict(claims)}


def _adapt(verifier: Callable[[str], Any]) -> Callable[[dict[str, Any], None], dict[str, Any]]:
    def call(request: dict[str, Any], _ctx: None) -> dict[str, Any]:
        try:
            return _answer(verifier(request["token"]))
        except InvalidToken as e:
            return {"invalid": str(e) or "invalid token"}

    return call


def _adapt_async(
    verifier: Callable[[str], Any],
) -> Callable[[dict[str, Any], None], Awaitable[dict[str, Any]]]:
    async def call(request: dict[str, Any], _ctx: None) -> dict[str, Any]:
        try:
            return _answer(await verifier(request["token"]))
        except InvalidToken as e:
            return {"invalid": str(e) or "invalid token"}

    return call


@dataclass(frozen=True)
class AuthInfo:
    """Who a protected request's access token belongs to (``ctx.auth``).

    >>> info = AuthInfo(subject="alice", client_id="app", scopes=("files:read",),
    ...                 audience=("https://mcp.example.com/mcp",), expires_at=None, claims={})
    >>> info.has_scope("files:read"), info.has_scope("files:write")
    (True, False)
    """

    subject: str | None
    """The resource owner (``sub``)."""
    client_id: str | None
    """The OAuth client the token was issued to (``client_id`` or ``azp``)."""
    scopes: tuple[str, ...]
    """The granted scopes."""
    audience: tuple[str, ...]
    """The audiences (``aud``); the server's resource is one of them."""
    expires_at: int | None
    """When the token expires (``exp``, seconds since the Unix epoch)."""
    claims: dict[str, Any]
    """Every claim as the verifier returned or read it."""

    def has_scope(self, scope: str) -> bool:
        """Whether ``scope`` was granted (exactly).

        >>> AuthInfo("alice", None, ("a",), (), None, {}).has_scope("a")
        True
        """
        return scope in self.scopes

    @classmethod
    def _from_native(cls, native: Mapping[str, Any]) -> AuthInfo:
        """Reads the core's description of a token's claims.

        >>> AuthInfo._from_native({"subject": "alice", "clientId": "app", "scopes": ["a"],
        ...                        "audience": [], "expiresAt": None, "claims": {}}).client_id
        'app'
        """
        return cls(
            subject=native["subject"],
            client_id=native["clientId"],
            scopes=tuple(native["scopes"]),
            audience=tuple(native["audience"]),
            expires_at=native["expiresAt"],
            claims=native["claims"],
        )
