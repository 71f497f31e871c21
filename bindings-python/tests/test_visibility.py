"""Per-caller visibility (issue 31): ``@server.visibility`` (one rule for
every item) and ``visible=`` on a registration, compiled into core's one
rule, both of which must allow an item. Core filters the lists and makes a
hidden item as unknown as one never registered; these tests show the
binding asks the Python rules about the right items, with the caller's
identity (``client_info`` in memory, ``auth`` over protected HTTP)."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import ferromcp
import pytest
from conftest import TIMEOUT, free_port
from ferromcp.errors import McpError
from ferromcp.visibility import _Rule

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """Runs a test's coroutine, failing it rather than hanging."""
    return asyncio.run(asyncio.wait_for(main, TIMEOUT))


def name_of(caller: ferromcp.Caller) -> str:
    return str((caller.client_info or {}).get("name", ""))


def make_server(**options: Any) -> ferromcp.Server:
    """Tools, a prompt, a resource and a template whose names say who may
    see them: ``admin`` ones only the client named ``admin``."""
    server = ferromcp.Server("vis", **options)
    for name in ["a", "b", "admin_x", "c", "admin_y"]:
        server.tool(name=name)(lambda name=name: name)

    @server.prompt(completions={"topic": ["budget", "hiring"]})
    def admin_prompt(topic: str) -> str:
        return f"secret {topic}"

    @server.prompt
    def greet() -> str:
        return "hello"

    @server.resource("mem://admin")
    def admin_note() -> str:
        return "secret"

    @server.resource("mem://public")
    def public_note() -> str:
        return "public"

    @server.resource("mem://admin/{id}")
    def admin_item(id: str) -> str:
        return f"secret {id}"

    @server.visibility
    def admins_see_everything(caller: ferromcp.Caller, item: ferromcp.VisibleItem) -> bool:
        return name_of(caller) == "admin" or "admin" not in item.key

    return server


def listing(client: ferromcp.SyncClient) -> dict[str, list[str]]:
    return {
        "tools": [t.name for t in client.list_tools()],
        "prompts": [p.name for p in client.list_prompts()],
        "resources": [r.uri for r in client.list_resources()],
        "templates": [t.uri_template for t in client.list_resource_templates()],
    }


EVERYTHING = {
    "tools": ["a", "b", "admin_x", "c", "admin_y"],
    "prompts": ["admin_prompt", "greet"],
    "resources": ["mem://admin", "mem://public"],
    "templates": ["mem://admin/{id}"],
}
GUEST = {"tools": ["a", "b", "c"], "prompts": ["greet"], "resources": ["mem://public"], "templates": []}


def test_each_client_lists_what_the_rule_lets_it_see() -> None:
    server = make_server()
    for name, expected in [("guest", GUEST), ("admin", EVERYTHING)]:
        with ferromcp.SyncClient.in_memory(server, name=name) as client:
            assert listing(client) == expected, name


def test_an_async_client_lists_and_calls_by_its_own_identity() -> None:
    server = make_server()

    async def main() -> None:
        async with (
            ferromcp.Client.in_memory(server, name="guest") as guest,
            ferromcp.Client.in_memory(server, name="admin") as admin,
        ):
            assert [t.name for t in await guest.list_tools()] == GUEST["tools"]
            assert [t.name for t in await admin.list_tools()] == EVERYTHING["tools"]
            assert (await admin.call_tool("admin_x")).text == "admin_x"
            with pytest.raises(McpError, match="Unknown tool: admin_x"):
                await guest.call_tool("admin_x")

    run(main())


def failure(call: Any, *args: Any) -> McpError:
    with pytest.raises(McpError) as failed:
        call(*args)
    return failed.value


def same_failure(hidden: McpError, unknown: McpError, hidden_key: str, unknown_key: str) -> None:
    """The two errors say the same, up to the item's key."""
    assert type(hidden) is type(unknown)
    assert hidden.code == unknown.code
    assert hidden.message == unknown.message.replace(unknown_key, hidden_key)
    assert str(hidden.data) == str(unknown.data).replace(unknown_key, hidden_key)


def test_a_hidden_item_fails_exactly_like_an_unknown_one() -> None:
    server = make_server()
    with ferromcp.SyncClient.in_memory(server, name="guest") as client:
        same_failure(
            failure(client.call_tool, "admin_x"), failure(client.call_tool, "admin_nope"), "admin_x", "admin_nope"
        )
        same_failure(
            failure(client.get_prompt, "admin_prompt"),
            failure(client.get_prompt, "admin_nope"),
            "admin_prompt",
            "admin_nope",
        )
        same_failure(
            failure(client.read_resource, "mem://admin"),
            failure(client.read_resource, "mem://admin-nope"),
            "mem://admin",
            "mem://admin-nope",
        )
        assert "Resource not found" in str(failure(client.read_resource, "mem://admin/7"))
        ref = {"type": "ref/prompt", "name": "admin_prompt"}
        assert "Prompt not found" in str(failure(client.complete, ref, "topic", "b"))
    with ferromcp.SyncClient.in_memory(server, name="admin") as client:
        assert client.call_tool("admin_x").text == "admin_x"
        assert client.get_prompt("admin_prompt", {"topic": "budget"}).text == "secret budget"
        assert client.read_resource("mem://admin/7").text == "secret 7"
        assert client.complete({"type": "ref/prompt", "name": "admin_prompt"}, "topic", "b").values == ["budget"]


def test_a_listing_asks_the_rule_once_with_every_item(monkeypatch: pytest.MonkeyPatch) -> None:
    """Core asks once per request about every item; the binding calls the
    server's rule once for them (one GIL acquisition, one Caller), and the
    server-wide function once per item with that Caller."""
    server = ferromcp.Server("vis")
    count = 30
    for i in range(count):
        server.tool(name=f"t{i}")(lambda: "t")
    asked: list[list[tuple[str, str]]] = []
    judge = _Rule.__call__

    def counted(self: _Rule, facts: Any, items: Any) -> Any:
        asked.append(list(items))
        return judge(self, facts, items)

    monkeypatch.setattr(_Rule, "__call__", counted)
    callers: list[ferromcp.Caller] = []
    keys: list[str] = []

    @server.visibility
    def even_only(caller: ferromcp.Caller, item: ferromcp.VisibleItem) -> bool:
        callers.append(caller)
        keys.append(item.key)
        return int(item.key[1:]) % 2 == 0

    with ferromcp.SyncClient.in_memory(server, name="guest") as client:
        asked.clear()
        names = [t.name for t in client.list_tools()]
        assert names == [f"t{i}" for i in range(0, count, 2)]
        assert asked == [[("tool", f"t{i}") for i in range(count)]], "not one call with every item"
        assert keys == [f"t{i}" for i in range(count)]
        assert len({id(caller) for caller in callers}) == 1, "a Caller per item"
        assert name_of(callers[0]) == "guest"
        # A call is judged once too, about its one tool.
        asked.clear()
        assert client.call_tool("t2").text == "t"
        assert asked == [[("tool", "t2")]]


def test_a_filtered_list_is_marked_private() -> None:
    server = make_server(caching={"tools": (60_000, "public")})
    with ferromcp.SyncClient.in_memory(server) as client:
        assert client.list_tools_page().raw["cacheScope"] == "private"
    server.clear_visibility()
    with ferromcp.SyncClient.in_memory(server) as client:
        assert client.list_tools_page().raw["cacheScope"] == "public"
        assert [t.name for t in client.list_tools()] == EVERYTHING["tools"]


# -- a registration's own rule -------------------------------------------------


def staff_only(caller: ferromcp.Caller) -> bool:
    return name_of(caller) in ("staff", "admin")


def test_visible_on_each_kind_of_registration() -> None:
    server = ferromcp.Server("vis")
    server.tool(name="open")(lambda: "open")
    server.tool(name="payroll", visible=staff_only)(lambda: "payroll")

    @server.prompt(visible=staff_only)
    def review() -> str:
        return "review"

    @server.resource("mem://handbook", visible=staff_only)
    def handbook() -> str:
        return "handbook"

    @server.resource("mem://staff/{id}", visible=staff_only)
    def staff(id: str) -> str:
        return f"staff {id}"

    with ferromcp.SyncClient.in_memory(server, name="visitor") as client:
        assert listing(client) == {"tools": ["open"], "prompts": [], "resources": [], "templates": []}
        with pytest.raises(McpError, match="Unknown tool: payroll"):
            client.call_tool("payroll")
        with pytest.raises(McpError):
            client.read_resource("mem://staff/1")
    with ferromcp.SyncClient.in_memory(server, name="staff") as client:
        assert listing(client) == {
            "tools": ["open", "payroll"],
            "prompts": ["review"],
            "resources": ["mem://handbook"],
            "templates": ["mem://staff/{id}"],
        }
        assert client.read_resource("mem://staff/1").text == "staff 1"


def test_a_registrations_rule_and_the_server_wide_one_must_both_allow() -> None:
    server = ferromcp.Server("vis")
    server.tool(name="report", visible=staff_only)(lambda: "report")
    server.tool(name="admin_report", visible=staff_only)(lambda: "admin report")
    server.tool(name="open")(lambda: "open")
    asked: list[str] = []

    @server.visibility
    def admin_prefix(caller: ferromcp.Caller, item: ferromcp.VisibleItem) -> bool:
        asked.append(item.key)
        return name_of(caller) == "admin" or not item.key.startswith("admin_")

    def tools(name: str) -> list[str]:
        with ferromcp.SyncClient.in_memory(server, name=name) as client:
            return [t.name for t in client.list_tools()]

    assert tools("visitor") == ["open"]
    assert tools("staff") == ["report", "open"]
    assert tools("admin") == ["report", "admin_report", "open"]
    # The server-wide rule is not asked about what the item's own hides.
    asked.clear()
    tools("visitor")
    assert asked == ["open"]
    # Without it, the registrations' own stay.
    server.clear_visibility()
    assert tools("visitor") == ["open"]
    assert tools("staff") == ["report", "admin_report", "open"]


def test_removing_or_reregistering_drops_an_items_rule() -> None:
    server = ferromcp.Server("vis")
    server.tool(name="t", visible=staff_only)(lambda: "t")
    server.prompt(name="p", visible=staff_only)(lambda: "p")
    server.resource("mem://r", visible=staff_only)(lambda: "r")

    def seen() -> dict[str, list[str]]:
        with ferromcp.SyncClient.in_memory(server, name="visitor") as client:
            found = listing(client)
            del found["templates"]
            return found

    assert seen() == {"tools": [], "prompts": [], "resources": []}
    server.tool(name="t")(lambda: "t")  # replaced, without a rule
    assert server.remove_prompt("p") and server.remove_resource("mem://r")
    server.prompt(name="p")(lambda: "p")
    server.resource("mem://r")(lambda: "r")
    assert seen() == {"tools": ["t"], "prompts": ["p"], "resources": ["mem://r"]}
    # No rule left at all: the lists are public again.
    with ferromcp.SyncClient.in_memory(server) as client:
        assert client.list_tools_page().raw.get("cacheScope") != "private"


def test_a_rule_must_be_a_plain_function() -> None:
    server = ferromcp.Server("vis")

    async def later(caller: ferromcp.Caller) -> bool:
        return True

    with pytest.raises(TypeError, match="visible= must be a plain function, not async"):
        server.tool(name="t", visible=later)(lambda: "t")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="visible= must be callable"):
        server.prompt(name="p", visible=True)(lambda: "p")  # type: ignore[arg-type]
    # Nothing was registered.
    assert server.tool_names() == [] and server.prompt_names() == []

    async def everywhere(caller: ferromcp.Caller, item: ferromcp.VisibleItem) -> bool:
        return True

    with pytest.raises(TypeError, match="a visibility rule must be a plain function"):
        server.visibility(everywhere)  # type: ignore[arg-type]


# -- a rule that fails -----------------------------------------------------------


def test_a_rule_that_raises_hides_the_item_and_reports_it(monkeypatch: pytest.MonkeyPatch) -> None:
    server = ferromcp.Server("vis")
    for name in ["fine", "fragile", "solid"]:
        server.tool(name=name)(lambda name=name: name)
    reported: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)

    @server.visibility
    def buggy(caller: ferromcp.Caller, item: ferromcp.VisibleItem) -> bool:
        if item.key == "fragile":
            raise KeyError("no such role")
        return True

    with ferromcp.SyncClient.in_memory(server) as client:
        assert [t.name for t in client.list_tools()] == ["fine", "solid"]
        with pytest.raises(McpError, match="Unknown tool: fragile"):
            client.call_tool("fragile")
        assert client.call_tool("solid").text == "solid"
    assert reported, "the exception was not reported"
    first = reported[0]
    assert isinstance(first.exc_value, KeyError)
    assert "visibility rule of ferromcp.Server 'vis'" in repr(first.object)
    if sys.version_info >= (3, 11):
        assert any("'fragile' is hidden" in note for note in first.exc_value.__notes__)


# -- over HTTP, by the token --------------------------------------------------------


@pytest.fixture
def protected() -> Iterator[str]:
    server = ferromcp.Server("vis")
    server.tool(name="read")(lambda: "read")
    server.tool(name="purge", visible=lambda caller: caller.auth is not None and caller.auth.has_scope("admin"))(
        lambda: "purged"
    )

    @server.visibility
    def signed_in(caller: ferromcp.Caller, item: ferromcp.VisibleItem) -> bool:
        return caller.auth is not None and caller.headers.get("x-tenant") != "blocked"

    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    scopes = {"reader-token": "files:read", "admin-token": "files:read admin"}

    def verify(token: str) -> dict[str, Any]:
        if token not in scopes:
            raise ferromcp.InvalidToken("unknown token")
        return {"sub": token.split("-")[0], "scope": scopes[token], "aud": resource, "exp": int(time.time()) + 3600}

    auth = ferromcp.Protection(resource=resource, authorization_servers=["https://auth.example.com"], verifier=verify)
    serving = server.start("http", port=port, auth=auth)
    yield resource
    serving.stop()
    serving.wait(10)


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_over_http_the_rule_sees_the_token_and_headers(protected: str, era: Any) -> None:
    def client(token: str, **headers: str) -> ferromcp.SyncClient:
        return ferromcp.SyncClient.http(protected, headers={"Authorization": f"Bearer {token}", **headers}, era=era)

    with client("reader-token") as reader:
        assert [t.name for t in reader.list_tools()] == ["read"]
        with pytest.raises(McpError, match="Unknown tool: purge"):
            reader.call_tool("purge")
    with client("admin-token") as admin:
        assert [t.name for t in admin.list_tools()] == ["read", "purge"]
        assert admin.call_tool("purge").text == "purged"
    with client("admin-token", **{"X-Tenant": "blocked"}) as blocked:
        assert [t.name for t in blocked.list_tools()] == []


# -- the registry lock -----------------------------------------------------------


def test_registering_while_clients_list_does_not_deadlock() -> None:
    """The rule needs the GIL, and registering takes core's registry lock
    while holding the GIL: core asks the rule without holding that lock, so
    a thread registering never waits for a rule that waits for the GIL."""
    server = ferromcp.Server("vis")
    for i in range(20):
        server.tool(name=f"t{i}")(lambda: "t")

    @server.visibility
    def slow_rule(caller: ferromcp.Caller, item: ferromcp.VisibleItem) -> bool:
        time.sleep(0.0002)  # lets other threads take the GIL mid-listing
        return True

    stop = threading.Event()
    errors: list[BaseException] = []

    def churn() -> None:
        try:
            n = 0
            while not stop.is_set():
                server.tool(name=f"extra{n % 5}", visible=lambda caller: True)(lambda: "x")
                server.remove_tool(f"extra{(n + 2) % 5}")
                server.tool_names()
                n += 1
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    def lister() -> None:
        try:
            with ferromcp.SyncClient.in_memory(server) as client:
                while not stop.is_set():
                    assert len([t.name for t in client.list_tools()]) >= 20
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=churn, daemon=True)] + [
        threading.Thread(target=lister, daemon=True) for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    time.sleep(1.5)
    stop.set()
    for thread in threads:
        thread.join(TIMEOUT)
    assert not any(thread.is_alive() for thread in threads), "deadlocked"
    assert errors == []
