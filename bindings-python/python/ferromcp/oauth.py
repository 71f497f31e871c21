"""OAuth 2.1 for the HTTP client: pass an :class:`OAuth` as
``Client.http(url, oauth=...)`` (or ``SyncClient.http``).

The Rust core does the whole protocol (the 2026-07-28 authorization spec):
on a 401 it discovers the protected resource and authorization server
metadata, registers the client (pre-registered, client ID metadata
document, or dynamic registration), runs the authorization-code flow with
PKCE, ``resource`` and ``iss`` checks, sends the token on every request,
refreshes it, steps up on ``insufficient_scope``, and binds tokens with
DPoP when asked. This module only describes what the core needs from you:

- how a user consents: ``authorize(url) -> redirect URL`` (plain or
  ``async``), e.g. :meth:`LoopbackRedirect.authorize` for a desktop app;
- or a grant without a user: :meth:`OAuth.client_credentials`,
  :meth:`OAuth.client_credentials_jwt`, :meth:`OAuth.jwt_bearer`,
  :meth:`OAuth.enterprise_managed`;
- where tokens live: any object with the :class:`TokenStore` methods (in
  memory unless given).

A failed authorization raises :class:`ferromcp.AuthError` (kind ``"auth"``).

A desktop login, with the browser coming back to a loopback listener::

    import ferromcp

    loopback = ferromcp.LoopbackRedirect(port=8765)
    oauth = ferromcp.OAuth(loopback.redirect_uri, loopback.authorize)
    with ferromcp.SyncClient.http("https://mcp.example.com/mcp", oauth=oauth) as client:
        print([tool.name for tool in client.list_tools()])

A service with its own credentials, no user (runs against a server that
needs no token too: the OAuth settings are only used on a 401)::

    >>> import ferromcp
    >>> server = ferromcp.Server("demo")
    >>> _ = server.tool(name="hello")(lambda: "hi")
    >>> serving = server.start("http", port=0)
    >>> oauth = ferromcp.OAuth.client_credentials("my-service", "s3cret")
    >>> with ferromcp.SyncClient.http(f"http://127.0.0.1:{serving.port}/mcp", oauth=oauth) as client:
    ...     client.call_tool("hello").text
    'hi'
    >>> serving.stop(); serving.wait(10)
    True
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Awaitable, Callable
from typing import Any, Literal, Protocol, TypedDict

from . import _native

__all__ = [
    "AssertionCallback",
    "AssertionRequest",
    "AuthorizeCallback",
    "ClientCredentials",
    "LoopbackRedirect",
    "MemoryTokenStore",
    "OAuth",
    "StoredTokens",
    "TokenStore",
    "headless_authorize",
]

AuthorizeCallback = Callable[[str], "str | Awaitable[str]"]
"""The user interaction: receives the authorization URL to open (in a
browser) and returns the URL the authorization server redirected the user
back to (with ``code``, ``state`` and usually ``iss``); plain or ``async``.
Raising stops the login with an :class:`ferromcp.AuthError`."""


class AssertionRequest(TypedDict):
    """What a jwt-bearer assertion is asked for."""

    issuer: str
    """The authorization server's issuer (the assertion's audience)."""
    resource: str
    """The protected resource (the MCP server)."""


AssertionCallback = Callable[[AssertionRequest], "str | Awaitable[str]"]
"""Returns the JWT the workload presents (a Kubernetes service account
token, a cloud identity token), asked at each token request since platform
tokens rotate; plain or ``async``."""


class _Tokens(TypedDict):
    access_token: str
    issuer: str


class StoredTokens(_Tokens, total=False):
    """Tokens for one MCP server, as a :class:`TokenStore` keeps them:
    ``access_token`` and ``issuer`` (the authorization server that issued
    them) always, the rest when known."""

    scopes: list[str]
    refresh_token: str
    expires_at: int
    """Seconds since the Unix epoch."""
    token_type: str
    """``"DPoP"`` for a token bound to the client's DPoP key."""


class _Client(TypedDict):
    client_id: str


class ClientCredentials(_Client, total=False):
    """A client's registration at one authorization server: ``client_id``
    always, the rest when it has them."""

    client_secret: str
    token_endpoint_auth_method: str
    private_key_pem: str
    redirect_uris: list[str]
    """The redirect URIs a dynamic registration was made for: a login with
    another redirect URI registers again (and saves over this one). Absent:
    used with any redirect URI. Keep it when storing the record."""


class TokenStore(Protocol):
    """Where tokens (per MCP server URL) and client registrations (per
    issuer) live; the default keeps them in memory for the client's life.

    Implement these five methods to keep them in a file or a keychain. The
    core calls them briefly and only around an authorization, from a
    thread of its own (make the store thread-safe); an exception is
    reported as unraisable and treated as "nothing saved".

    >>> import json, os, tempfile
    >>> class FileStore:
    ...     def __init__(self, path: str) -> None:
    ...         self.path = path
    ...     def _read(self) -> dict:
    ...         if not os.path.exists(self.path):
    ...             return {"tokens": {}, "clients": {}}
    ...         with open(self.path) as f:
    ...             return json.load(f)
    ...     def _write(self, data: dict) -> None:
    ...         with open(self.path, "w") as f:
    ...             json.dump(data, f)
    ...     def load_tokens(self, resource):
    ...         return self._read()["tokens"].get(resource)
    ...     def save_tokens(self, resource, tokens):
    ...         data = self._read(); data["tokens"][resource] = tokens; self._write(data)
    ...     def clear_tokens(self, resource):
    ...         data = self._read(); data["tokens"].pop(resource, None); self._write(data)
    ...     def load_client(self, issuer):
    ...         return self._read()["clients"].get(issuer)
    ...     def save_client(self, issuer, client):
    ...         data = self._read(); data["clients"][issuer] = client; self._write(data)
    >>> store = FileStore(os.path.join(tempfile.mkdtemp(), "tokens.json"))
    >>> oauth = OAuth("http://127.0.0.1:8765/callback", lambda url: url, store=store)
    """

    def load_tokens(self, resource: str) -> StoredTokens | None:
        """The tokens saved for an MCP server URL, or ``None``.

        >>> MemoryTokenStore().load_tokens("https://mcp.example.com/mcp") is None
        True
        """
        ...

    def save_tokens(self, resource: str, tokens: StoredTokens) -> None:
        """Saves (replaces) the tokens for an MCP server URL.

        >>> store = MemoryTokenStore()
        >>> store.save_tokens("https://mcp.example.com/mcp", {"access_token": "t", "issuer": "https://as.example.com"})
        >>> store.load_tokens("https://mcp.example.com/mcp")["access_token"]
        't'
        """
        ...

    def clear_tokens(self, resource: str) -> None:
        """Forgets the tokens for an MCP server URL (they were refused).

        >>> store = MemoryTokenStore()
        >>> store.save_tokens("https://mcp.example.com/mcp", {"access_token": "t", "issuer": "https://as.example.com"})
        >>> store.clear_tokens("https://mcp.example.com/mcp")
        >>> store.load_tokens("https://mcp.example.com/mcp") is None
        True
        """
        ...

    def load_client(self, issuer: str) -> ClientCredentials | None:
        """The registration saved for an authorization server, or ``None``.

        >>> MemoryTokenStore().load_client("https://as.example.com") is None
        True
        """
        ...

    def save_client(self, issuer: str, client: ClientCredentials) -> None:
        """Saves a registration made with an authorization server.

        >>> store = MemoryTokenStore()
        >>> store.save_client("https://as.example.com", {"client_id": "abc"})
        >>> store.load_client("https://as.example.com")
        {'client_id': 'abc'}
        """
        ...


class MemoryTokenStore:
    """A :class:`TokenStore` in dicts, safe to use from several threads:
    a base to subclass (save elsewhere too) or to seed with known tokens.
    (``store=None`` uses the core's own in-memory store, which is the same.)

    >>> store = MemoryTokenStore()
    >>> oauth = OAuth.client_credentials("my-service", "s3cret", store=store)
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokens: dict[str, StoredTokens] = {}
        self._clients: dict[str, ClientCredentials] = {}

    def load_tokens(self, resource: str) -> StoredTokens | None:
        """See :meth:`TokenStore.load_tokens`."""
        with self._lock:
            return self._tokens.get(resource)

    def save_tokens(self, resource: str, tokens: StoredTokens) -> None:
        """See :meth:`TokenStore.save_tokens`."""
        with self._lock:
            self._tokens[resource] = tokens

    def clear_tokens(self, resource: str) -> None:
        """See :meth:`TokenStore.clear_tokens`."""
        with self._lock:
            self._tokens.pop(resource, None)

    def load_client(self, issuer: str) -> ClientCredentials | None:
        """See :meth:`TokenStore.load_client`."""
        with self._lock:
            return self._clients.get(issuer)

    def save_client(self, issuer: str, client: ClientCredentials) -> None:
        """See :meth:`TokenStore.save_client`."""
        with self._lock:
            self._clients[issuer] = client


def _is_async(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))  # noqa: B004 (an async __call__, not callability)


def _adapt(callback: Callable[[Any], Any]) -> tuple[Callable[[Any, None], Any], bool]:
    """The native calling convention (``callback(input, ctx)``) and whether
    the callback is ``async``.

    >>> call, is_async = _adapt(lambda url: url + "?code=c")
    >>> call("http://x/cb", None), is_async
    ('http://x/cb?code=c', False)
    """
    if _is_async(callback):

        async def call_async(value: Any, _ctx: None) -> Any:
            return await callback(value)

        return call_async, True

    def call(value: Any, _ctx: None) -> Any:
        return callback(value)

    return call, False


Grant = Literal["authorization_code", "client_credentials", "jwt_bearer", "enterprise_managed"]


class OAuth:
    """OAuth settings of an HTTP client: a user's consent in a browser
    (this constructor), or a grant without a user (the class methods).

    The login runs inside the first request the server refuses; the time
    the ``authorize`` callback takes (the user in the browser) does not
    count against that call's timeout.

    Args:
        redirect_uri: Where the authorization server sends the user back
            (registered with it): a loopback URL for a desktop app
            (:class:`LoopbackRedirect`), the app's own page for a web app.
        authorize: See :data:`AuthorizeCallback`.
        store: See :class:`TokenStore`; in memory when ``None``.
        client_id: A client registered out of band (else the client uses
            a client ID metadata document or dynamic registration).
        client_secret: Its secret, for a confidential client.
        issuer: The authorization server ``client_id`` is valid at; ``None``
            uses it with any (a client that talks to one server only).
        client_name: ``client_name`` in dynamic registrations.
        client_metadata_url: The URL of this client's metadata document,
            used as its ``client_id`` where supported.
        offline_access: Ask for a refresh token when the server offers one.
        dpop: Ask for DPoP-bound tokens (RFC 9449): each request proves
            possession of a key made for this client.
        max_authorizations: Authorizations one request may trigger (first
            login and step-ups) before the client gives up.

    >>> oauth = OAuth("http://127.0.0.1:8765/callback", lambda url: input(f"open {url}, paste the redirect: "))
    >>> oauth.grant, oauth.dpop
    ('authorization_code', False)
    """

    def __init__(
        self,
        redirect_uri: str,
        authorize: AuthorizeCallback,
        *,
        store: TokenStore | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        issuer: str | None = None,
        client_name: str | None = None,
        client_metadata_url: str | None = None,
        offline_access: bool = True,
        dpop: bool = False,
        max_authorizations: int = 3,
    ) -> None:
        if not callable(authorize):
            raise TypeError("authorize must be callable")
        self.grant: Grant = "authorization_code"
        self.dpop = dpop
        self._callbacks: dict[str, tuple[Callable[[Any, None], Any], bool]] = {"authorize": _adapt(authorize)}
        self._settings: dict[str, Any] = {
            "redirect_uri": redirect_uri,
            "client_id": client_id,
            "client_secret": client_secret,
            "issuer": issuer,
            "client_name": client_name,
            "client_metadata_url": client_metadata_url,
            "offline_access": offline_access,
            "max_authorizations": max_authorizations,
            "store": store,
        }

    @classmethod
    def _without_user(cls, grant: Grant, store: TokenStore | None, dpop: bool, **settings: Any) -> OAuth:
        oauth = cls.__new__(cls)
        oauth.grant = grant
        oauth.dpop = dpop
        oauth._callbacks = {}
        oauth._settings = dict(settings, store=store)
        return oauth

    @classmethod
    def client_credentials(
        cls,
        client_id: str,
        client_secret: str | None = None,
        *,
        store: TokenStore | None = None,
        dpop: bool = False,
    ) -> OAuth:
        """A client acting on its own behalf (the ``client_credentials``
        grant): no user, no redirect; the secret goes as the authorization
        server supports (``client_secret_basic`` or ``client_secret_post``).

        >>> OAuth.client_credentials("my-service", "s3cret").grant
        'client_credentials'
        """
        return cls._without_user("client_credentials", store, dpop, client_id=client_id, client_secret=client_secret)

    @classmethod
    def client_credentials_jwt(
        cls,
        client_id: str,
        private_key_pem: str,
        *,
        store: TokenStore | None = None,
        dpop: bool = False,
    ) -> OAuth:
        """:meth:`client_credentials` authenticating with
        ``private_key_jwt``: a short-lived ES256 assertion signed with
        ``private_key_pem`` (PKCS#8 PEM, P-256) instead of a secret.

        >>> OAuth.client_credentials_jwt("my-service", "-----BEGIN PRIVATE KEY-----...").grant
        'client_credentials'
        """
        return cls._without_user(
            "client_credentials", store, dpop, client_id=client_id, private_key_pem=private_key_pem
        )

    @classmethod
    def jwt_bearer(
        cls,
        client_id: str,
        assertion: AssertionCallback,
        *,
        client_secret: str | None = None,
        store: TokenStore | None = None,
        dpop: bool = False,
    ) -> OAuth:
        """A workload presenting a JWT its platform issued (RFC 7523
        ``jwt-bearer``, workload identity federation): ``assertion`` is
        asked for the current JWT at each token request.

        >>> def token(request: AssertionRequest) -> str:
        ...     with open("/var/run/secrets/tokens/mcp") as f:
        ...         return f.read()
        >>> OAuth.jwt_bearer("my-workload", token).grant
        'jwt_bearer'
        """
        if not callable(assertion):
            raise TypeError("assertion must be callable")
        oauth = cls._without_user("jwt_bearer", store, dpop, client_id=client_id, client_secret=client_secret)
        oauth._callbacks["assertion"] = _adapt(assertion)
        return oauth

    @classmethod
    def enterprise_managed(
        cls,
        client_id: str,
        client_secret: str | None,
        *,
        idp_token_endpoint: str,
        idp_client_id: str,
        id_token: str,
        idp_client_secret: str | None = None,
        store: TokenStore | None = None,
        dpop: bool = False,
    ) -> OAuth:
        """Enterprise-managed authorization: the user's ID token from the
        enterprise identity provider is exchanged there for an identity
        assertion grant for this server, which the client presents with its
        own credentials. No browser round trip. The identity provider is
        reached with the client's TLS settings.

        >>> oauth = OAuth.enterprise_managed(
        ...     "mcp-client", "secret",
        ...     idp_token_endpoint="https://idp.example.com/token",
        ...     idp_client_id="mcp-client-at-idp",
        ...     id_token="eyJ...",
        ... )
        >>> oauth.grant
        'enterprise_managed'
        """
        return cls._without_user(
            "enterprise_managed",
            store,
            dpop,
            client_id=client_id,
            client_secret=client_secret,
            idp_token_endpoint=idp_token_endpoint,
            idp_client_id=idp_client_id,
            idp_client_secret=idp_client_secret,
            id_token=id_token,
        )

    @classmethod
    def stored_only(cls, store: TokenStore, message: str, *, dpop: bool = False) -> OAuth:
        """A client that only uses a login made elsewhere (a command line
        tool's commands after its ``login`` command): the tokens in
        ``store``, refreshed when they expire. A request that needs a new
        login or more scopes raises :class:`ferromcp.errors.AuthError` with
        ``message``, before anything is registered at the authorization
        server; no browser, no prompt.

        >>> oauth = OAuth.stored_only(MemoryTokenStore(), "run `mytool login` first")
        >>> oauth.grant, oauth.has_async_callback
        ('authorization_code', False)
        """
        return cls._without_user("authorization_code", store, dpop, stored_only=message)

    @property
    def has_async_callback(self) -> bool:
        """Whether a callback is ``async`` (a :class:`ferromcp.SyncClient`
        then runs an event loop thread for it).

        >>> async def authorize(url: str) -> str:
        ...     return url
        >>> OAuth("http://127.0.0.1:8765/callback", authorize).has_async_callback
        True
        >>> OAuth.client_credentials("my-service", "s3cret").has_async_callback
        False
        """
        return any(is_async for _, is_async in self._callbacks.values())

    def _native_settings(self) -> dict[str, Any]:
        """The settings dict ``_native.Client.connect_http(oauth=...)`` reads."""
        return dict(self._settings, grant=self.grant, dpop=self.dpop, **self._callbacks)

    def __repr__(self) -> str:
        return f"<ferromcp.OAuth {self.grant}{' dpop' if self.dpop else ''}>"


class LoopbackRedirect:
    """A listener on ``127.0.0.1`` for the browser coming back from the
    authorization server (RFC 8252), for a desktop app's login: it answers
    the redirect with a short "you can close this window" page.

    ``port=0`` picks a free port (fine for servers that allow any loopback
    port, as RFC 8252 asks); register :attr:`redirect_uri` otherwise.

    >>> import urllib.request
    >>> loopback = LoopbackRedirect()
    >>> loopback.redirect_uri.startswith("http://127.0.0.1:")
    True
    >>> import threading
    >>> browser = threading.Thread(target=urllib.request.urlopen, args=(loopback.redirect_uri + "?code=c&state=s",))
    >>> browser.start()
    >>> loopback.wait(10).endswith("/callback?code=c&state=s")
    True
    >>> browser.join()
    """

    def __init__(self, port: int = 0, path: str = "/callback", *, timeout: float = 300.0) -> None:
        self._native = _native.LoopbackRedirect(port, path)
        self.timeout = timeout

    @property
    def redirect_uri(self) -> str:
        """``http://127.0.0.1:PORT/path``: the redirect URI to register.

        >>> LoopbackRedirect(path="done").redirect_uri.endswith("/done")
        True
        """
        return str(self._native.redirect_uri)

    def wait(self, timeout: float | None = None) -> str:
        """Blocks until the redirect arrives (at most ``timeout`` seconds,
        :attr:`timeout` by default) and returns its full URL; raises
        :class:`ferromcp.AuthError` when none came in time.

        >>> from ferromcp import AuthError
        >>> try:
        ...     LoopbackRedirect().wait(0.01)
        ... except AuthError as e:
        ...     print(e.kind)
        auth
        """
        return str(self._native.wait(self.timeout if timeout is None else timeout, None))

    async def wait_async(self, timeout: float | None = None) -> str:
        """:meth:`wait` for asyncio.

        >>> import threading, urllib.request
        >>> loopback = LoopbackRedirect()
        >>> async def main() -> str:
        ...     waiting = asyncio.ensure_future(loopback.wait_async(10))
        ...     browser = f"{loopback.redirect_uri}?code=c&state=s"
        ...     await asyncio.get_running_loop().run_in_executor(None, urllib.request.urlopen, browser)
        ...     return await waiting
        >>> asyncio.run(main()).endswith("?code=c&state=s")
        True
        """
        loop = asyncio.get_running_loop()
        return str(await self._native.wait(self.timeout if timeout is None else timeout, loop))

    async def authorize(self, url: str) -> str:
        """An :data:`AuthorizeCallback`: opens ``url`` in the user's browser
        (printing it too, for a machine without one) and waits for the
        redirect.

        >>> loopback = LoopbackRedirect(port=0)
        >>> oauth = OAuth(loopback.redirect_uri, loopback.authorize)
        >>> oauth.has_async_callback
        True
        """
        print(f"Opening {url} in your browser to authorize")
        # Imported here: it costs milliseconds at every start of a program
        # that never opens a browser (a server).
        import webbrowser

        await asyncio.get_running_loop().run_in_executor(None, webbrowser.open, url)
        return await self.wait_async()

    def __repr__(self) -> str:
        return f"<ferromcp.LoopbackRedirect {self.redirect_uri}>"


def headless_authorize(url: str) -> str:
    """Requests the authorization URL without following its redirect and
    returns the redirect (``Location``): the "user interaction" against an
    authorization server that approves at once, as test servers do. Usable
    as an :data:`AuthorizeCallback` in tests; a real user needs a browser.

    >>> oauth = OAuth("http://localhost:3000/callback", headless_authorize)
    """
    return str(_native.headless_authorize(url, None))
