"""Protected servers (issue 15): ``auth=ferromcp.Protection(...)``, per-primitive
``scopes=``, ``ctx.auth``. The protocol (challenges, metadata, audience and
expiry checks) is core's; these tests show the binding carries the options,
the verifier callable and the claims across."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from email.message import Message
from typing import Any

import ferromcp
import pytest
from conftest import TIMEOUT, free_port, params

ISSUER = "https://auth.example.com"


def make_server() -> ferromcp.Server:
    server = ferromcp.Server("protected")

    @server.tool
    def whoami(ctx: ferromcp.Context) -> str:
        auth = ctx.auth
        assert auth is not None
        return json.dumps(
            {
                "subject": auth.subject,
                "client_id": auth.client_id,
                "scopes": list(auth.scopes),
                "expires_at": auth.expires_at,
                "extra": auth.claims.get("extra"),
            }
        )

    @server.tool(scopes=["files:write"])
    def delete_file(path: str) -> str:
        return f"deleted {path}"

    @server.resource("file:///secret.txt", scopes=["secrets"])
    def secret() -> str:
        return "s3cret"

    @server.prompt(scopes=["prompts"])
    def greet() -> str:
        return "hello"

    return server


def tokens(resource: str) -> dict[str, dict[str, Any]]:
    exp = int(time.time()) + 3600
    base = {"aud": resource, "exp": exp, "client_id": "app", "extra": 42}
    return {
        "reader": {**base, "sub": "alice", "scope": "files:read"},
        "writer": {**base, "sub": "bob", "scope": "files:read files:write secrets prompts"},
        "elsewhere": {**base, "sub": "eve", "aud": "https://other.example.com/mcp"},
        "expired": {**base, "sub": "old", "exp": int(time.time()) - 3600},
    }


class Served:
    def __init__(self, serving: ferromcp.Serving, resource: str) -> None:
        self.serving = serving
        self.port = serving.port
        self.resource = resource
        self.url = f"http://127.0.0.1:{self.port}/mcp"


def protection(resource: str, verifier: Any) -> ferromcp.Protection:
    return ferromcp.Protection(
        resource=resource,
        authorization_servers=[ISSUER],
        verifier=verifier,
        scopes_supported=["files:read", "files:write"],
        resource_name="Test files",
    )


@pytest.fixture
def served() -> Iterator[Served]:
    """A protected server with a sync verifier (a table of tokens)."""
    server = make_server()
    # The resource URL names the port: the test picks it first.
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    table = tokens(resource)

    def verify(token: str) -> dict[str, Any]:
        if token == "boom":
            raise RuntimeError("introspection endpoint down")
        if token not in table:
            raise ferromcp.InvalidToken("unknown token")
        return table[token]

    serving = server.start("http", port=port, auth=protection(resource, verify))
    yield Served(serving, resource)
    serving.stop()
    serving.wait(10)


def post(url: str, message: dict[str, Any], token: str | None) -> tuple[int, Message, bytes]:
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": ferromcp.PROTOCOL_VERSION,
        "Mcp-Method": message["method"],
    }
    name = message.get("params", {}).get("name")
    if name is not None:
        headers["Mcp-Name"] = name
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=json.dumps(message).encode(), headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def call(name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": params(name=name, arguments=arguments or {}),
    }


def test_no_token_is_401_with_a_challenge_naming_the_metadata(served: Served) -> None:
    status, headers, _ = post(served.url, call("whoami"), None)
    assert status == 401
    challenge = headers["WWW-Authenticate"]
    assert challenge.startswith("Bearer ")
    assert f'resource_metadata="http://127.0.0.1:{served.port}/.well-known/oauth-protected-resource/mcp"' in challenge


@pytest.mark.parametrize("token", ["nonsense", "elsewhere", "expired"])
def test_a_bad_token_is_401_invalid_token(served: Served, token: str) -> None:
    status, headers, _ = post(served.url, call("whoami"), token)
    assert status == 401
    assert 'error="invalid_token"' in headers["WWW-Authenticate"]


def test_a_verifier_that_fails_otherwise_answers_503(served: Served) -> None:
    status, _, _ = post(served.url, call("whoami"), "boom")
    assert status == 503


def test_the_protected_resource_metadata_document(served: Served) -> None:
    url = f"http://127.0.0.1:{served.port}/.well-known/oauth-protected-resource/mcp"
    with urllib.request.urlopen(url, timeout=TIMEOUT) as response:
        document = json.loads(response.read())
    assert document["resource"] == served.resource
    assert document["authorization_servers"] == [ISSUER]
    assert document["scopes_supported"] == ["files:read", "files:write"]
    assert document["resource_name"] == "Test files"


def test_the_handler_sees_the_claims(served: Served) -> None:
    with ferromcp.SyncClient.http(served.url, headers={"Authorization": "Bearer reader"}) as client:
        seen = json.loads(client.call_tool("whoami").text)
    assert seen["subject"] == "alice"
    assert seen["client_id"] == "app"
    assert seen["scopes"] == ["files:read"]
    assert isinstance(seen["expires_at"], int) and seen["expires_at"] > time.time()
    assert seen["extra"] == 42


def test_a_tool_scope_is_refused_with_403_insufficient_scope(served: Served) -> None:
    status, headers, _ = post(served.url, call("delete_file", {"path": "a"}), "reader")
    assert status == 403
    challenge = headers["WWW-Authenticate"]
    assert 'error="insufficient_scope"' in challenge
    assert "files:write" in challenge
    status, _, body = post(served.url, call("delete_file", {"path": "a"}), "writer")
    assert status == 200, body
    assert b"deleted a" in body


def test_resource_and_prompt_scopes(served: Served) -> None:
    with ferromcp.SyncClient.http(served.url, headers={"Authorization": "Bearer writer"}) as client:
        assert client.read_resource("file:///secret.txt").contents[0].text == "s3cret"
    read = {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": params(uri="file:///secret.txt")}
    status, headers, _ = post(served.url, read, "reader")
    assert status == 403 and "secrets" in headers["WWW-Authenticate"]
    get = {"jsonrpc": "2.0", "id": 3, "method": "prompts/get", "params": params(name="greet")}
    status, headers, _ = post(served.url, get, "reader")
    assert status == 403 and "prompts" in headers["WWW-Authenticate"]


def test_an_async_verifier_runs_on_the_serving_loop() -> None:
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    seen_loops: list[asyncio.AbstractEventLoop] = []

    async def verify(token: str) -> dict[str, Any]:
        seen_loops.append(asyncio.get_running_loop())
        await asyncio.sleep(0)
        if token != "good":
            raise ferromcp.InvalidToken("no")
        return {"sub": "carol", "scope": "files:read", "aud": resource}

    async def main() -> None:
        loop = asyncio.get_running_loop()
        serving = make_server().start("http", port=port, auth=protection(resource, verify), event_loop=loop)
        try:

            def use() -> str:
                with ferromcp.SyncClient.http(resource, headers={"Authorization": "Bearer good"}) as client:
                    return client.call_tool("whoami").text

            text = await asyncio.to_thread(use)
            assert json.loads(text)["subject"] == "carol"
            status, _, _ = await asyncio.to_thread(post, resource, call("whoami"), "bad")
            assert status == 401
            assert seen_loops and all(seen is loop for seen in seen_loops)
        finally:
            serving.stop()
            await asyncio.to_thread(serving.wait, 10)

    asyncio.run(main())


def test_jwt_verifier_rejects_a_token_that_is_not_a_jwt() -> None:
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    # The keys are never fetched: a token that is not a JWS fails first.
    verifier = ferromcp.JwtVerifier(ISSUER, resource, jwks_uri="http://127.0.0.1:9/jwks")
    serving = make_server().start("http", port=port, auth=protection(resource, verifier))
    try:
        status, headers, _ = post(resource, call("whoami"), "not-a-jwt")
        assert status == 401 and 'error="invalid_token"' in headers["WWW-Authenticate"]
    finally:
        serving.stop()
        serving.wait(10)


def test_jwt_verifier_durations_must_be_non_negative() -> None:
    # 0 turns the verified-token cache off; a negative duration is refused.
    ferromcp.JwtVerifier(ISSUER, "http://x/mcp", cache_ttl=0, leeway=0)
    with pytest.raises(ValueError, match="cache_ttl"):
        ferromcp.JwtVerifier(ISSUER, "http://x/mcp", cache_ttl=-1)
    with pytest.raises(ValueError, match="leeway"):
        ferromcp.JwtVerifier(ISSUER, "http://x/mcp", leeway=-1)


def test_a_verifier_must_be_callable() -> None:
    with pytest.raises(TypeError):
        ferromcp.Protection(resource="http://x/mcp", authorization_servers=[ISSUER], verifier=42)._native()  # type: ignore[arg-type]


def test_unprotected_servers_have_no_auth() -> None:
    from ferromcp.context import _example_call

    server = ferromcp.Server("open")

    @server.tool
    def who(ctx: ferromcp.Context) -> str:
        return repr(ctx.auth)

    assert _example_call(server, "who") == "None"
