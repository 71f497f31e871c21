"""Middleware (issue 31): ``@server.middleware`` / ``server.add_middleware``
links, plain and ``async``, around every request, in memory and over HTTP;
and core's ready-made links (``ferromcp.middleware.log_requests``,
``mask_errors``, ``rate_limit``). The chain itself (what goes through it,
how a link's failure fails its request) is core's: these tests show the
binding carries the request, the rest of the chain, the result and the
errors across."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

import ferromcp
import pytest
from conftest import TIMEOUT, free_port
from ferromcp.errors import InternalError, InvalidParamsError, McpError
from ferromcp.middleware import AsyncCallNext, CallNext, MiddlewareContext, log_requests, mask_errors, rate_limit

T = TypeVar("T")
Result = dict[str, Any]


def run(main: Coroutine[Any, Any, T]) -> T:
    """Runs a test's coroutine, failing it rather than hanging."""
    return asyncio.run(asyncio.wait_for(main, TIMEOUT))


def make_server() -> ferromcp.Server:
    server = ferromcp.Server("mw")

    @server.tool
    def echo(text: str) -> str:
        return text

    @server.tool
    async def shout(text: str) -> str:
        await asyncio.sleep(0)
        return text.upper()

    @server.prompt
    def broken() -> str:
        raise RuntimeError("db password is hunter2")

    @server.resource("mem://note")
    def note() -> str:
        return "a note"

    return server


def text_of(arguments: Any) -> Any:
    return arguments.get("text") if isinstance(arguments, dict) else None


# -- order, params and results ------------------------------------------------


def recording_chain(server: ferromcp.Server, seen: list[str]) -> None:
    """An async outer link that changes the params on the way in and the
    result on the way out, and a plain inner one."""

    @server.middleware
    async def outer(ctx: MiddlewareContext, call_next: AsyncCallNext) -> Result:
        seen.append(f"outer {ctx.method}")
        if ctx.name == "echo":
            ctx.params["arguments"]["text"] = "changed on the way in"
        result = await call_next(ctx)
        result["_meta"] = {**result.get("_meta", {}), "example.com/seen": True}
        seen.append("outer done")
        return result

    @server.middleware
    def inner(ctx: MiddlewareContext, call_next: CallNext) -> Result:
        seen.append(f"inner {ctx.method}")
        return call_next(ctx)


def test_links_run_in_order_and_change_params_and_results_sync_client() -> None:
    server = make_server()
    seen: list[str] = []
    recording_chain(server, seen)
    with ferromcp.SyncClient.in_memory(server) as client:
        client.discover()
        assert "outer server/discover" in seen
        seen.clear()
        result = client.call_tool("echo", {"text": "hi"})
        assert result.text == "changed on the way in"
        assert result.meta is not None and result.meta["example.com/seen"] is True
        assert seen == ["outer tools/call", "inner tools/call", "outer done"]
        # Lists and reads go through the chain too.
        seen.clear()
        assert [tool.name for tool in client.list_tools()] == ["echo", "shout"]
        assert client.read_resource("mem://note").text == "a note"
        assert "inner tools/list" in seen and "inner resources/read" in seen


def test_links_run_in_order_and_change_params_and_results_async_client() -> None:
    server = make_server()
    seen: list[str] = []
    recording_chain(server, seen)

    async def main() -> None:
        async with ferromcp.Client.in_memory(server) as client:
            seen.clear()
            result = await client.call_tool("echo", {"text": "hi"})
            assert result.text == "changed on the way in"
            assert result.meta is not None and result.meta["example.com/seen"] is True
            # (The client's first request, its discovery, went through first.)
            assert seen[-3:] == ["outer tools/call", "inner tools/call", "outer done"]
            # An async tool behind the links; many calls at once.
            results = await asyncio.gather(*(client.call_tool("shout", {"text": f"n{i}"}) for i in range(20)))
            assert [r.text for r in results] == [f"N{i}" for i in range(20)]

    run(main())


def test_a_plain_chain_and_an_async_chain_give_the_same_results() -> None:
    for is_async in (False, True):
        server = make_server()
        if is_async:

            @server.middleware
            async def suffix(ctx: MiddlewareContext, call_next: AsyncCallNext) -> Result:
                result = await call_next(ctx)
                if ctx.method == "tools/call":
                    result["content"][0]["text"] += " (async)"
                return result

        else:

            @server.middleware
            def suffix(ctx: MiddlewareContext, call_next: CallNext) -> Result:
                result = call_next(ctx)
                if ctx.method == "tools/call":
                    result["content"][0]["text"] += " (plain)"
                return result

        label = "async" if is_async else "plain"
        with ferromcp.SyncClient.in_memory(server) as client:
            assert client.call_tool("echo", {"text": "x"}).text == f"x ({label})"
            assert client.call_tool("shout", {"text": "x"}).text == f"X ({label})"

        async def main(label: str = label, server: ferromcp.Server = server) -> None:
            async with ferromcp.Client.in_memory(server) as client:
                assert (await client.call_tool("echo", {"text": "y"})).text == f"y ({label})"

        run(main())


def test_many_requests_through_plain_links_at_once_never_starve_the_workers() -> None:
    """A plain link waits for the rest of its chain on its worker thread,
    where the plain links and handlers after it run too: more requests at
    once than there are worker threads still all finish."""
    server = make_server()
    threads: list[tuple[str, str]] = []

    @server.tool
    def slow(n: int) -> int:
        time.sleep(0.005)
        threads.append(("tool", threading.current_thread().name))
        return n

    @server.tool
    def confirm(ctx: ferromcp.Context) -> str:
        answer = ctx.elicit("Sure?", {"ok": bool})  # blocks, behind a plain link
        return "yes" if answer.accepted else "no"

    @server.middleware
    async def outer(ctx: MiddlewareContext, call_next: AsyncCallNext) -> Result:
        return await call_next(ctx)

    for depth in range(2):

        @server.middleware
        def plain(ctx: MiddlewareContext, call_next: CallNext, depth: int = depth) -> Result:
            if ctx.name == "slow":
                threads.append((f"link {depth}", threading.current_thread().name))
            return call_next(ctx)

    async def accept(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"ok": True}}

    async def main() -> None:
        async with ferromcp.Client.in_memory(server, on_elicitation=accept) as client:
            calls = [client.call_tool("slow", {"n": i}) for i in range(60)]
            calls += [client.call_tool("confirm") for _ in range(10)]
            results = await asyncio.gather(*calls)
            assert [r.structured for r in results[:60]] == [{"result": i} for i in range(60)]
            assert [r.text for r in results[60:]] == ["yes"] * 10

    run(main())
    # Each request's plain links and plain tool ran on one thread.
    by_thread: dict[str, set[str]] = {}
    for what, name in threads:
        by_thread.setdefault(what, set()).add(name)
    assert by_thread["tool"] <= by_thread["link 0"]


def test_the_context_describes_the_request() -> None:
    server = make_server()
    seen: list[MiddlewareContext] = []
    facts: list[dict[str, Any]] = []

    @server.middleware
    def record(ctx: MiddlewareContext, call_next: CallNext) -> Result:
        seen.append(ctx)
        facts.append(
            {
                "method": ctx.method,
                "name": ctx.name,
                "id": ctx.request_id,
                "client": ctx.client_info,
                "version": ctx.protocol_version,
                "auth": ctx.auth,
                "headers": ctx.headers,
                "params": {k: v for k, v in ctx.params.items() if k != "_meta"},
                "capabilities": ctx.client_capabilities,
            }
        )
        return call_next(ctx)

    with ferromcp.SyncClient.in_memory(server, name="agent-7", version="3.1") as client:
        client.call_tool("echo", {"text": "hi"})
        client.read_resource("mem://note")
    call, read = facts[-2], facts[-1]
    assert call["method"] == "tools/call" and call["name"] == "echo"
    assert isinstance(call["id"], (int, str)) and call["id"] != read["id"]
    assert call["client"] == {"name": "agent-7", "version": "3.1"}
    assert call["version"] == ferromcp.PROTOCOL_VERSION
    assert call["auth"] is None and call["headers"] == {}
    assert call["params"] == {"name": "echo", "arguments": {"text": "hi"}}
    assert isinstance(call["capabilities"], dict)
    assert read["method"] == "resources/read" and read["name"] is None
    assert "resources/read" in repr(seen[-1])


# -- short-circuits and errors -------------------------------------------------


def test_a_link_short_circuits_with_a_json_rpc_error() -> None:
    server = make_server()
    ran: list[str] = []

    @server.tool
    def secret() -> str:
        ran.append("secret")
        return "42"

    @server.middleware
    def policy(ctx: MiddlewareContext, call_next: CallNext) -> Result:
        if ctx.name == "secret":
            raise InvalidParamsError("refused by policy", data={"policy": "no-secrets"})
        return call_next(ctx)

    with ferromcp.SyncClient.in_memory(server) as client:
        with pytest.raises(InvalidParamsError) as refused:
            client.call_tool("secret")
        assert refused.value.message == "refused by policy"
        assert refused.value.data == {"policy": "no-secrets"}
        assert ran == []
        # A custom code goes through as is.
        assert client.call_tool("echo", {"text": "fine"}).text == "fine"


def test_a_link_may_answer_without_the_rest_of_the_chain() -> None:
    server = make_server()

    @server.middleware
    async def cache(ctx: MiddlewareContext, call_next: AsyncCallNext) -> Result:
        if ctx.name == "echo" and text_of(ctx.params.get("arguments")) == "cached":
            return {"content": [{"type": "text", "text": "from the cache"}]}
        return await call_next(ctx)

    async def main() -> None:
        async with ferromcp.Client.in_memory(server) as client:
            assert (await client.call_tool("echo", {"text": "cached"})).text == "from the cache"
            assert (await client.call_tool("echo", {"text": "live"})).text == "live"

    run(main())


@pytest.mark.parametrize("is_async", [False, True], ids=["plain", "async"])
def test_an_exception_in_a_link_is_an_internal_error_and_the_next_call_works(is_async: bool) -> None:
    server = make_server()

    def check(ctx: MiddlewareContext) -> None:
        if text_of(ctx.params.get("arguments")) == "boom":
            raise ValueError("a bug in a link")

    if is_async:

        @server.middleware
        async def buggy(ctx: MiddlewareContext, call_next: AsyncCallNext) -> Result:
            check(ctx)
            return await call_next(ctx)

    else:

        @server.middleware
        def buggy(ctx: MiddlewareContext, call_next: CallNext) -> Result:
            check(ctx)
            return call_next(ctx)

    with ferromcp.SyncClient.in_memory(server) as client:
        with pytest.raises(InternalError) as failed:
            client.call_tool("echo", {"text": "boom"})
        # Classified as a prompt's or resource's exception is.
        assert failed.value.message == "ValueError: a bug in a link"
        assert client.call_tool("echo", {"text": "fine"}).text == "fine"


def test_the_rest_of_the_chains_error_reaches_the_link_and_passes_unchanged() -> None:
    server = make_server()
    caught: list[McpError] = []

    @server.middleware
    def observe(ctx: MiddlewareContext, call_next: CallNext) -> Result:
        try:
            return call_next(ctx)
        except McpError as e:
            caught.append(e)
            if ctx.name == "recover":
                return {"content": [{"type": "text", "text": "recovered"}]}
            raise

    @server.middleware
    async def refuse(ctx: MiddlewareContext, call_next: AsyncCallNext) -> Result:
        if ctx.name == "recover":
            raise McpError("quota exceeded", code=-32001, data={"retryAfter": 30})
        return await call_next(ctx)

    with ferromcp.SyncClient.in_memory(server) as client:
        # Core's own error (an unknown tool) comes back whole.
        with pytest.raises(InvalidParamsError) as unknown:
            client.call_tool("nope")
        assert unknown.value.message == "Unknown tool: nope"
        assert unknown.value.data == {"name": "nope"}
        assert isinstance(caught[-1], InvalidParamsError)
        # A later link's error, caught and turned into a result.
        assert client.call_tool("recover").text == "recovered"
        assert (caught[-1].code, caught[-1].message, caught[-1].data) == (-32001, "quota exceeded", {"retryAfter": 30})


def test_call_next_runs_once_and_a_link_must_return_a_dict() -> None:
    server = make_server()

    @server.middleware
    def misbehave(ctx: MiddlewareContext, call_next: CallNext) -> Any:
        mode = text_of(ctx.params.get("arguments"))
        if mode == "twice":
            call_next(ctx)
            return call_next(ctx)
        if mode == "forgot":
            call_next(ctx)
            return None
        if mode == "wrong":
            return call_next({"not": "a context"})  # type: ignore[arg-type]
        return call_next(ctx)

    with ferromcp.SyncClient.in_memory(server) as client:
        with pytest.raises(InternalError, match="call_next was called already"):
            client.call_tool("echo", {"text": "twice"})
        with pytest.raises(InternalError, match=r"a link returns the result dict .* not None"):
            client.call_tool("echo", {"text": "forgot"})
        with pytest.raises(InternalError, match="call_next takes the link's MiddlewareContext"):
            client.call_tool("echo", {"text": "wrong"})
        assert client.call_tool("echo", {"text": "ok"}).text == "ok"


def test_a_link_may_replace_the_params_dict() -> None:
    server = make_server()

    @server.middleware
    def rewrite(ctx: MiddlewareContext, call_next: CallNext) -> Result:
        if ctx.name == "echo":
            ctx.params = {**ctx.params, "name": "shout"}
        return call_next(ctx)

    with ferromcp.SyncClient.in_memory(server) as client:
        assert client.call_tool("echo", {"text": "quiet"}).text == "QUIET"


# -- ready-made links -----------------------------------------------------------


def test_rate_limit_refuses_past_the_budget_per_client() -> None:
    server = make_server()
    server.add_middleware(rate_limit(per_second=0.001, burst=6))
    answered = refused = 0
    with ferromcp.SyncClient.in_memory(server, name="greedy") as client:
        for i in range(10):
            try:
                client.call_tool("echo", {"text": str(i)})
            except McpError as e:
                assert e.code == -32000, e
                assert e.data["retryAfterMs"] > 0
                refused += 1
            else:
                assert refused == 0, "answered after a refusal"
                answered += 1
    # The budget of 6 counts discovery too.
    assert 1 <= answered <= 5 and answered + refused == 10
    # Another client has its own budget.
    with ferromcp.SyncClient.in_memory(server, name="another") as client:
        assert client.call_tool("echo", {"text": "mine"}).text == "mine"


def test_rate_limit_checks_its_arguments() -> None:
    assert "rate_limit(2.0, 5)" in repr(rate_limit(2, 5))
    for per_second, burst in [(-1, 5), (float("inf"), 5), (float("nan"), 5), (1, 0), (1, 1.5), (True, 1)]:
        with pytest.raises(ValueError):
            rate_limit(per_second, burst)  # type: ignore[arg-type]
    # The core's checks and messages.
    with pytest.raises(ValueError, match="burst must be at least 1"):
        rate_limit(1, -3)
    with pytest.raises(ValueError, match=r"finite number >= 0, not -0\.5"):
        rate_limit(-0.5, 1)
    assert "rate_limit(1.0, 4294967295)" in repr(rate_limit(1, 2**40))


def test_mask_errors_hides_an_internal_errors_message() -> None:
    server = make_server()
    server.add_middleware(log_requests())
    server.add_middleware(mask_errors())

    @server.middleware
    def buggy(ctx: MiddlewareContext, call_next: CallNext) -> Result:
        if text_of(ctx.params.get("arguments")) == "boom":
            raise KeyError("api key sk-123")
        return call_next(ctx)

    with ferromcp.SyncClient.in_memory(server) as client:
        with pytest.raises(InternalError) as prompt:
            client.get_prompt("broken")
        assert prompt.value.message == "Internal error" and prompt.value.data is None
        assert "hunter2" not in str(prompt.value)
        with pytest.raises(InternalError) as link:
            client.call_tool("echo", {"text": "boom"})
        assert link.value.message == "Internal error"
        # What the client can act on passes unchanged.
        with pytest.raises(InvalidParamsError, match="Unknown tool: nope"):
            client.call_tool("nope")
        assert client.call_tool("echo", {"text": "fine"}).text == "fine"


class RequestLog(logging.Handler):
    """The records of the ``ferromcp.requests`` logger, which arrive from
    the package's worker threads a moment after the request's answer."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self.arrived = threading.Condition()

    def emit(self, record: logging.LogRecord) -> None:
        with self.arrived:
            self.records.append(record)
            self.arrived.notify_all()

    def wait_for(self, match: Callable[[Any], bool]) -> Any:
        """The first record ``match`` accepts, once it arrived."""
        found: list[logging.LogRecord] = []

        def arrived() -> bool:
            found[:] = [record for record in self.records if match(record)]
            return bool(found)

        with self.arrived:
            assert self.arrived.wait_for(arrived, TIMEOUT), f"no such record in {self.records}"
        return found[0]


@pytest.fixture
def request_log() -> Iterator[RequestLog]:
    logger = logging.getLogger("ferromcp.requests")
    handler = RequestLog()
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


def test_log_requests_and_mask_errors_report_to_python_logging(request_log: RequestLog) -> None:
    server = make_server()
    server.add_middleware(log_requests())
    server.add_middleware(mask_errors())
    with ferromcp.SyncClient.in_memory(server) as client:
        assert client.call_tool("echo", {"text": "hi"}).text == "hi"
        with pytest.raises(InvalidParamsError):
            client.call_tool("nope")
        with pytest.raises(InternalError):
            client.get_prompt("broken")

    ok = request_log.wait_for(lambda r: r.mcp_name == "echo")
    assert ok.name == "ferromcp.requests" and ok.levelno == logging.INFO
    assert ok.mcp_method == "tools/call" and ok.mcp_error_code is None and ok.mcp_micros >= 0
    assert ok.getMessage().startswith("tools/call echo: ok in ")
    # Logged by a worker thread, not by the thread that made the request.
    assert ok.thread != threading.get_ident()

    failed = request_log.wait_for(lambda r: r.mcp_name == "nope")
    assert failed.levelno == logging.WARNING and failed.mcp_error_code == -32602
    assert "Unknown tool: nope" in failed.getMessage()

    # mask_errors logs the original; log_requests, before it, sees the mask.
    masked = request_log.wait_for(lambda r: r.levelno == logging.ERROR)
    assert masked.mcp_method == "prompts/get" and masked.mcp_name == "broken"
    assert "hunter2" in masked.mcp_error_message and "hunter2" in masked.getMessage()
    logged = request_log.wait_for(lambda r: r.mcp_name == "broken" and r.levelno == logging.WARNING)
    assert logged.mcp_error_code == -32603 and logged.mcp_error_message == "Internal error"


def test_add_middleware_refuses_what_is_not_a_link() -> None:
    server = make_server()
    with pytest.raises(TypeError, match="a middleware link is a function"):
        server.add_middleware("log everything")  # type: ignore[arg-type]

    plain = ferromcp.Server("plain")
    plain.add_middleware(lambda ctx, call_next: call_next(ctx))
    assert not plain._has_async_handlers()

    async def link(ctx: MiddlewareContext, call_next: AsyncCallNext) -> Result:
        return await call_next(ctx)

    # An async link needs the loop `run()` starts.
    assert plain.middleware(link) is link
    assert plain._has_async_handlers()


# -- over HTTP -----------------------------------------------------------------


@pytest.fixture
def protected() -> Iterator[tuple[ferromcp.Server, str, list[Any]]]:
    """A protected HTTP server with a plain and an async link, served with
    the test's own loop thread for the async one."""
    server = make_server()
    seen: list[Any] = []

    @server.middleware
    async def outer(ctx: MiddlewareContext, call_next: AsyncCallNext) -> Result:
        result = await call_next(ctx)
        if ctx.method == "tools/call":
            result["content"][0]["text"] += f" for {ctx.auth.subject if ctx.auth else '?'}"
        return result

    @server.middleware
    def inner(ctx: MiddlewareContext, call_next: CallNext) -> Result:
        seen.append((ctx.method, ctx.auth, ctx.headers.get("x-trace")))
        if text_of(ctx.params.get("arguments")) == "forbidden":
            raise InvalidParamsError("refused by policy")
        return call_next(ctx)

    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"

    def verify(token: str) -> dict[str, Any]:
        if token != "alice-token":
            raise ferromcp.InvalidToken("unknown token")
        return {"sub": "alice", "scope": "files:read", "aud": resource, "exp": int(time.time()) + 3600}

    auth = ferromcp.Protection(resource=resource, authorization_servers=["https://auth.example.com"], verifier=verify)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    serving = server.start("http", port=port, auth=auth, event_loop=loop)
    yield server, resource, seen
    serving.stop()
    serving.wait(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(TIMEOUT)
    loop.close()


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_links_run_over_http_with_the_requests_auth_and_headers(
    protected: tuple[ferromcp.Server, str, list[Any]], era: Any
) -> None:
    _, url, seen = protected
    headers = {"Authorization": "Bearer alice-token", "X-Trace": "t-1"}
    with ferromcp.SyncClient.http(url, headers=headers, era=era) as client:
        assert client.call_tool("echo", {"text": "hi"}).text == "hi for alice"
        assert client.call_tool("shout", {"text": "hi"}).text == "HI for alice"
        with pytest.raises(InvalidParamsError, match="refused by policy"):
            client.call_tool("echo", {"text": "forbidden"})
        assert client.call_tool("echo", {"text": "again"}).text == "again for alice"
    method, auth, trace = seen[-1]
    assert method == "tools/call" and trace == "t-1"
    assert isinstance(auth, ferromcp.AuthInfo) and auth.subject == "alice" and auth.has_scope("files:read")
    # A 2025-11-25 session's initialize goes through the chain too (core
    # runs the links around the first handshake); 2026-07-28 has none.
    assert ("initialize" in [m for m, _, _ in seen]) == (era == "legacy")


def test_an_async_client_over_http_goes_through_the_chain(protected: tuple[ferromcp.Server, str, list[Any]]) -> None:
    _, url, _ = protected

    async def main() -> None:
        async with ferromcp.Client.http(url, headers={"Authorization": "Bearer alice-token"}) as client:
            results = await asyncio.gather(*(client.call_tool("echo", {"text": f"n{i}"}) for i in range(10)))
            assert [r.text for r in results] == [f"n{i} for alice" for i in range(10)]

    run(main())


def test_a_served_async_link_needs_a_loop() -> None:
    server = make_server()

    @server.middleware
    async def link(ctx: MiddlewareContext, call_next: AsyncCallNext) -> Result:
        return await call_next(ctx)

    serving = server.start("http", port=0)
    try:
        with (
            ferromcp.SyncClient.http(f"http://127.0.0.1:{serving.port}/mcp") as client,
            pytest.raises(McpError, match="async but no asyncio loop is serving"),
        ):
            client.call_tool("echo", {"text": "hi"})
    finally:
        serving.stop()
        serving.wait(10)


def test_results_round_trip_unchanged_through_a_passthrough_link() -> None:
    plain, linked = make_server(), make_server()

    @linked.middleware
    def passthrough(ctx: MiddlewareContext, call_next: CallNext) -> Result:
        return call_next(ctx)

    def snapshot(server: ferromcp.Server) -> list[Any]:
        with ferromcp.SyncClient.in_memory(server) as client:
            return [
                client.call_tool("echo", {"text": "é ☃"}).raw,
                [tool.name for tool in client.list_tools()],
                client.read_resource("mem://note").text,
            ]

    assert json.dumps(snapshot(plain), sort_keys=True) == json.dumps(snapshot(linked), sort_keys=True)
