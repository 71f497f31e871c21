"""The Python client's OAuth (``Client.http(url, oauth=ferromcp.OAuth(...))``)
against a small protected server on loopback: a mock authorization server
and protected resource (Python's ``http.server``, the same endpoints as
core's ``core/tests/client_oauth.rs``) in front of a real ferromcp server.
``/mcp`` answers 401 with ``WWW-Authenticate: Bearer resource_metadata=...``
until a token it issued comes; then the request is passed to the ferromcp
server. The protocol is core's: these tests check that the binding hands it
the settings, runs the Python callbacks (plain and ``async``) and the
Python token store, and surfaces failures as ``ferromcp.AuthError``."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import http.client
import json
import sys
import threading
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import ferromcp
import pytest
from ferromcp.oauth import AssertionRequest, ClientCredentials, StoredTokens

ASSERTION = "eyJ.workload.jwt"


@dataclass
class Mock:
    """What the mock saw, and the tokens it issued (token -> grant)."""

    base: str = ""
    backend: str = ""
    tokens: dict[str, str] = field(default_factory=dict)
    grants: list[str] = field(default_factory=list)
    resources: list[str] = field(default_factory=list)
    bearers: list[str | None] = field(default_factory=list)
    challenge: str | None = None
    registrations: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def issue(self, grant: str) -> dict[str, Any]:
        token = f"token-{len(self.tokens) + 1}"
        self.tokens[token] = grant
        return {"access_token": token, "token_type": "Bearer", "expires_in": 3600}


def handler_for(mock: Mock) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_: Any) -> None:
            pass

        def answer(self, status: int, body: Any = None, headers: dict[str, str] | None = None) -> None:
            data = b"" if body is None else json.dumps(body).encode()
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            if body is not None:
                self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def body(self) -> bytes:
            return self.rfile.read(int(self.headers.get("content-length") or 0))

        def do_GET(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            base = mock.base
            if url.path == "/.well-known/oauth-protected-resource/mcp":
                self.answer(200, {"resource": f"{base}/mcp", "authorization_servers": [base]})
            elif url.path == "/.well-known/oauth-authorization-server":
                self.answer(
                    200,
                    {
                        "issuer": base,
                        "authorization_endpoint": f"{base}/authorize",
                        "token_endpoint": f"{base}/token",
                        "registration_endpoint": f"{base}/register",
                        "code_challenge_methods_supported": ["S256"],
                        "grant_types_supported": [
                            "authorization_code",
                            "client_credentials",
                            "urn:ietf:params:oauth:grant-type:jwt-bearer",
                        ],
                        "token_endpoint_auth_methods_supported": ["client_secret_post"],
                        "authorization_response_iss_parameter_supported": True,
                    },
                )
            elif url.path == "/authorize":
                q = dict(urllib.parse.parse_qsl(url.query))
                mock.challenge = q.get("code_challenge")
                redirect = (
                    q["redirect_uri"]
                    + "?"
                    + urllib.parse.urlencode({"code": "the-code", "state": q["state"], "iss": base})
                )
                self.answer(302, headers={"location": redirect})
            elif url.path == "/mcp":
                # The modern era opens no GET stream; a legacy one is refused.
                self.answer(405)
            else:
                self.answer(404)

        def do_POST(self) -> None:
            path = urllib.parse.urlsplit(self.path).path
            body = self.body()
            if path == "/register":
                mock.registrations += 1
                self.answer(201, {"client_id": "registered", "client_secret": "s3cret"})
            elif path == "/token":
                self.token(dict(urllib.parse.parse_qsl(body.decode())))
            elif path == "/mcp":
                self.mcp(body)
            else:
                self.answer(404)

        def token(self, form: dict[str, str]) -> None:
            grant = form.get("grant_type", "")
            with mock.lock:
                mock.grants.append(grant)
                mock.resources.append(form.get("resource", ""))
            if grant == "authorization_code":
                verifier = form.get("code_verifier", "").encode()
                expected = base64.urlsafe_b64encode(hashlib.sha256(verifier).digest()).rstrip(b"=").decode()
                if form.get("client_secret") != "s3cret" or expected != mock.challenge:
                    return self.answer(400, {"error": "invalid_grant"})
            elif grant == "client_credentials":
                if (form.get("client_id"), form.get("client_secret")) != ("service", "s3cret"):
                    return self.answer(401, {"error": "invalid_client"})
            elif grant == "urn:ietf:params:oauth:grant-type:jwt-bearer":
                if form.get("assertion") != ASSERTION:
                    return self.answer(400, {"error": "invalid_grant"})
            else:
                return self.answer(400, {"error": "unsupported_grant_type"})
            with mock.lock:
                self.answer(200, mock.issue(grant))

        def mcp(self, body: bytes) -> None:
            auth = self.headers.get("authorization")
            token = auth.removeprefix("Bearer ") if auth and auth.startswith("Bearer ") else None
            with mock.lock:
                mock.bearers.append(token)
                known = token in mock.tokens
            if not known:
                challenge = f'Bearer resource_metadata="{mock.base}/.well-known/oauth-protected-resource/mcp"'
                return self.answer(401, {"error": "invalid_token"}, {"www-authenticate": challenge})
            # Passed on to the real server, without the token.
            forwarded = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "authorization")}
            request = urllib.request.Request(mock.backend, data=body, headers=forwarded, method="POST")
            with urllib.request.urlopen(request, timeout=30) as upstream:
                data = upstream.read()
                self.send_response(upstream.status)
                for name, value in upstream.headers.items():
                    if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(name, value)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

    return Handler


@pytest.fixture
def protected() -> Iterator[Mock]:
    server = ferromcp.Server("protected")
    server.tool(name="whoami")(lambda: "a protected answer")
    serving = server.start("http", port=0)
    mock = Mock(backend=f"http://127.0.0.1:{serving.port}/mcp")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(mock))
    mock.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield mock
    finally:
        httpd.shutdown()
        httpd.server_close()
        serving.stop()
        serving.wait(10)


def follow_without_redirect(url: str) -> str:
    """The "user": asks the authorization endpoint, returns its redirect."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.netloc, timeout=10)
    connection.request("GET", f"{parts.path}?{parts.query}")
    location = connection.getresponse().getheader("location")
    connection.close()
    assert location is not None
    return location


REDIRECT = "http://127.0.0.1:9/callback"


def test_without_oauth_the_protected_server_refuses(protected: Mock) -> None:
    with pytest.raises(ferromcp.McpError) as refused:
        ferromcp.SyncClient.http(f"{protected.base}/mcp", era="modern").call_tool("whoami")
    assert "401" in str(refused.value)


def test_sync_client_logs_in_with_a_plain_authorize_callback(protected: Mock) -> None:
    asked: list[str] = []

    def authorize(url: str) -> str:
        asked.append(url)
        return follow_without_redirect(url)

    oauth = ferromcp.OAuth(REDIRECT, authorize)
    with ferromcp.SyncClient.http(f"{protected.base}/mcp", era="modern", oauth=oauth) as client:
        assert client.call_tool("whoami").text == "a protected answer"
        assert client.call_tool("whoami").text == "a protected answer"
    assert len(asked) == 1, "one login serves every request"
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(asked[0]).query))
    assert query["code_challenge_method"] == "S256"
    assert query["redirect_uri"] == REDIRECT
    assert query["resource"] == f"{protected.base}/mcp"
    assert protected.grants == ["authorization_code"]
    assert protected.bearers[0] is None and protected.bearers[-1] == "token-1"


def test_async_client_runs_an_async_authorize_on_its_loop(protected: Mock) -> None:
    loops: list[asyncio.AbstractEventLoop] = []

    async def authorize(url: str) -> str:
        loops.append(asyncio.get_running_loop())
        return await asyncio.get_running_loop().run_in_executor(None, follow_without_redirect, url)

    async def main() -> str:
        oauth = ferromcp.OAuth(REDIRECT, authorize)
        async with ferromcp.Client.http(f"{protected.base}/mcp", era="modern", oauth=oauth) as client:
            text = (await client.call_tool("whoami")).text
            assert loops == [asyncio.get_running_loop()]
            return text

    assert asyncio.run(main()) == "a protected answer"


def test_sync_client_runs_an_async_authorize_too(protected: Mock) -> None:
    async def authorize(url: str) -> str:
        await asyncio.sleep(0)
        return await asyncio.get_running_loop().run_in_executor(None, follow_without_redirect, url)

    oauth = ferromcp.OAuth(REDIRECT, authorize)
    with ferromcp.SyncClient.http(f"{protected.base}/mcp", era="modern", oauth=oauth) as client:
        assert client.call_tool("whoami").text == "a protected answer"


def test_a_failing_authorize_is_an_auth_error(protected: Mock) -> None:
    def authorize(url: str) -> str:
        raise PermissionError("the user closed the browser")

    oauth = ferromcp.OAuth(REDIRECT, authorize)
    with pytest.raises(ferromcp.AuthError) as failed:
        ferromcp.SyncClient.http(f"{protected.base}/mcp", era="modern", oauth=oauth).call_tool("whoami")
    assert failed.value.kind == "auth"
    assert isinstance(failed.value, ferromcp.TransportError)
    assert "PermissionError: the user closed the browser" in str(failed.value)


def test_an_authorize_that_returns_no_string_is_an_auth_error(protected: Mock) -> None:
    oauth = ferromcp.OAuth(REDIRECT, lambda url: 42)  # type: ignore[arg-type, return-value]
    with pytest.raises(ferromcp.AuthError, match="expected a string"):
        ferromcp.SyncClient.http(f"{protected.base}/mcp", era="modern", oauth=oauth).call_tool("whoami")


def test_client_credentials(protected: Mock) -> None:
    oauth = ferromcp.OAuth.client_credentials("service", "s3cret")
    with ferromcp.SyncClient.http(f"{protected.base}/mcp", era="modern", oauth=oauth) as client:
        assert client.call_tool("whoami").text == "a protected answer"
    assert protected.grants == ["client_credentials"]
    assert protected.resources == [f"{protected.base}/mcp"]


def test_client_credentials_with_a_wrong_secret_is_an_auth_error(protected: Mock) -> None:
    oauth = ferromcp.OAuth.client_credentials("service", "wrong")
    with pytest.raises(ferromcp.AuthError, match="token endpoint"):
        ferromcp.SyncClient.http(f"{protected.base}/mcp", era="modern", oauth=oauth).call_tool("whoami")


def test_jwt_bearer_asks_the_assertion_callback(protected: Mock) -> None:
    asked: list[AssertionRequest] = []

    async def assertion(request: AssertionRequest) -> str:
        asked.append(request)
        return ASSERTION

    async def main() -> str:
        oauth = ferromcp.OAuth.jwt_bearer("workload", assertion)
        async with ferromcp.Client.http(f"{protected.base}/mcp", era="modern", oauth=oauth) as client:
            return (await client.call_tool("whoami")).text

    assert asyncio.run(main()) == "a protected answer"
    assert asked == [{"issuer": protected.base, "resource": f"{protected.base}/mcp"}]
    assert protected.grants == ["urn:ietf:params:oauth:grant-type:jwt-bearer"]


class RecordingStore:
    """A TokenStore in a dict, recording the calls."""

    def __init__(self) -> None:
        self.tokens: dict[str, StoredTokens] = {}
        self.clients: dict[str, ClientCredentials] = {}
        self.calls: list[str] = []

    def load_tokens(self, resource: str) -> StoredTokens | None:
        self.calls.append("load_tokens")
        return self.tokens.get(resource)

    def save_tokens(self, resource: str, tokens: StoredTokens) -> None:
        self.calls.append("save_tokens")
        self.tokens[resource] = tokens

    def clear_tokens(self, resource: str) -> None:
        self.calls.append("clear_tokens")
        self.tokens.pop(resource, None)

    def load_client(self, issuer: str) -> ClientCredentials | None:
        self.calls.append("load_client")
        return self.clients.get(issuer)

    def save_client(self, issuer: str, client: ClientCredentials) -> None:
        self.calls.append("save_client")
        self.clients[issuer] = client


def test_a_python_token_store_keeps_tokens_across_clients(protected: Mock) -> None:
    store = RecordingStore()
    logins: list[str] = []

    def authorize(url: str) -> str:
        logins.append(url)
        return follow_without_redirect(url)

    url = f"{protected.base}/mcp"
    with ferromcp.SyncClient.http(url, era="modern", oauth=ferromcp.OAuth(REDIRECT, authorize, store=store)) as c:
        c.call_tool("whoami")
    assert store.tokens[url]["access_token"] == "token-1"
    assert store.tokens[url]["issuer"] == protected.base
    assert store.clients[protected.base]["client_id"] == "registered"
    # A second client (a later run) starts with the saved token: no login.
    with ferromcp.SyncClient.http(url, era="modern", oauth=ferromcp.OAuth(REDIRECT, authorize, store=store)) as c:
        assert c.call_tool("whoami").text == "a protected answer"
    assert len(logins) == 1
    assert protected.bearers[-1] == "token-1"


def test_a_token_store_that_raises_is_reported_and_only_costs_a_login(
    protected: Mock, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Broken(RecordingStore):
        def load_tokens(self, resource: str) -> StoredTokens | None:
            raise OSError("keychain locked")

    reported: list[BaseException | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: reported.append(u.exc_value))
    oauth = ferromcp.OAuth.client_credentials("service", "s3cret", store=Broken())
    with ferromcp.SyncClient.http(f"{protected.base}/mcp", era="modern", oauth=oauth) as client:
        assert client.call_tool("whoami").text == "a protected answer"
    assert [str(e) for e in reported] == ["keychain locked"]
    assert protected.grants == ["client_credentials"]


def test_a_token_store_record_of_the_wrong_shape_is_ignored(protected: Mock, monkeypatch: pytest.MonkeyPatch) -> None:
    class Odd(RecordingStore):
        def load_tokens(self, resource: str) -> StoredTokens | None:
            return {"token": "x"}  # type: ignore[typeddict-item]

    reported: list[BaseException | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: reported.append(u.exc_value))
    oauth = ferromcp.OAuth.client_credentials("service", "s3cret", store=Odd())
    with ferromcp.SyncClient.http(f"{protected.base}/mcp", era="modern", oauth=oauth) as client:
        assert client.call_tool("whoami").text == "a protected answer"
    assert len(reported) == 1 and "invalid record" in str(reported[0])


def test_preregistered_client_skips_registration(protected: Mock) -> None:
    store = RecordingStore()
    oauth = ferromcp.OAuth(
        REDIRECT, follow_without_redirect, client_id="registered", client_secret="s3cret", issuer=None, store=store
    )
    with ferromcp.SyncClient.http(f"{protected.base}/mcp", era="modern", oauth=oauth) as client:
        client.call_tool("whoami")
    assert "save_client" not in store.calls


def test_stored_only_uses_a_login_made_elsewhere_and_never_starts_one(protected: Mock) -> None:
    store = RecordingStore()
    url = f"{protected.base}/mcp"
    message = "run `mytool login` first"
    # No login yet: the message at once; nothing registered, nothing granted.
    with pytest.raises(ferromcp.AuthError, match="mytool login"):
        ferromcp.SyncClient.http(url, era="modern", oauth=ferromcp.OAuth.stored_only(store, message)).call_tool(
            "whoami"
        )
    assert protected.registrations == 0 and protected.grants == []
    # A login (the tool's `login` command) keeps its tokens in the store...
    with ferromcp.SyncClient.http(
        url, era="modern", oauth=ferromcp.OAuth(REDIRECT, follow_without_redirect, store=store)
    ) as client:
        client.call_tool("whoami")
    # ...which the stored-only client then uses.
    with ferromcp.SyncClient.http(url, era="modern", oauth=ferromcp.OAuth.stored_only(store, message)) as client:
        assert client.call_tool("whoami").text == "a protected answer"
    assert protected.grants == ["authorization_code"]
    assert protected.registrations == 1


def test_oauth_must_be_an_oauth() -> None:
    with pytest.raises(TypeError, match=r"ferromcp\.OAuth"):
        ferromcp.Client.http("http://127.0.0.1:9/mcp", oauth={"grant": "client_credentials"})  # type: ignore[arg-type]


def test_loopback_redirect_returns_the_redirect_sync_and_async() -> None:
    loopback = ferromcp.LoopbackRedirect(path="cb")
    assert loopback.redirect_uri.startswith("http://127.0.0.1:") and loopback.redirect_uri.endswith("/cb")

    def browser(query: str) -> None:
        with urllib.request.urlopen(f"{loopback.redirect_uri}?{query}", timeout=10) as page:
            assert b"Authorization complete" in page.read()

    t = threading.Thread(target=browser, args=("code=1&state=a",))
    t.start()
    assert loopback.wait(10) == f"{loopback.redirect_uri}?code=1&state=a"
    t.join()

    async def main() -> str:
        waiting = asyncio.ensure_future(loopback.wait_async(10))
        await asyncio.get_running_loop().run_in_executor(None, browser, "code=2&state=b")
        return await waiting

    assert asyncio.run(main()) == f"{loopback.redirect_uri}?code=2&state=b"


def test_loopback_redirect_gives_up_with_an_auth_error() -> None:
    with pytest.raises(ferromcp.AuthError, match="no redirect"):
        ferromcp.LoopbackRedirect().wait(0.05)
