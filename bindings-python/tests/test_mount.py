"""Gateway mounting: `Server.mount` of another Python server or of a
client, `Server.proxy`, `Mount.unmount` (core's `gateway`), seen by a
client of the outer server over Streamable HTTP."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import ferromcp
import pytest
from conftest import TIMEOUT


def weather_server() -> ferromcp.Server:
    """The upstream: a sync and an async tool, a resource, a prompt."""
    server = ferromcp.Server("weather", version="3.1")

    @server.tool
    def forecast(city: str) -> str:
        """Tomorrow's weather."""
        return f"sunny in {city}"

    @server.tool
    async def alerts(region: str) -> str:
        """Weather alerts, awaited."""
        await asyncio.sleep(0)
        return f"no alerts for {region}"

    @server.resource("mem://r", mime_type="text/plain")
    def notes() -> str:
        return "remember the umbrella"

    @server.prompt
    def brief(city: str) -> str:
        return f"Brief me on {city}"

    return server


@contextmanager
def serving(server: ferromcp.Server) -> Iterator[str]:
    """Serves `server` over HTTP on a free port, its async handlers on a
    loop of their own thread, as a served application's would be; yields
    the endpoint's URL."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    running = server.start("http", port=0, event_loop=loop)
    try:
        yield f"http://127.0.0.1:{running.port}/mcp"
    finally:
        running.stop()
        assert running.wait(TIMEOUT)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(TIMEOUT)
        loop.close()


def eventually(check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not check():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.05)


def test_a_mounted_server_is_served_under_its_prefix() -> None:
    inner = weather_server()
    outer = ferromcp.Server("app")

    @outer.tool
    def own() -> str:
        return "outer's own"

    mount = outer.mount("alpha", inner)
    assert mount.prefix == "alpha"
    assert sorted(outer.tool_names()) == ["alpha_alerts", "alpha_forecast", "own"]
    with serving(outer) as url, ferromcp.SyncClient.http(url) as client:
        assert sorted(t.name for t in client.list_tools()) == ["alpha_alerts", "alpha_forecast", "own"]
        assert client.call_tool("alpha_forecast", {"city": "Oslo"}).text == "sunny in Oslo"
        # The inner server's async handler runs on the loop serving the outer one.
        assert client.call_tool("alpha_alerts", {"region": "north"}).text == "no alerts for north"
        assert client.call_tool("own").text == "outer's own"
        assert [r.uri for r in client.list_resources()] == ["alpha+mem://r"]
        assert client.read_resource("alpha+mem://r").text == "remember the umbrella"
        assert [p.name for p in client.list_prompts()] == ["alpha_brief"]


def test_a_mount_follows_the_upstreams_changes() -> None:
    inner = weather_server()
    outer = ferromcp.Server("app")
    outer.mount("alpha", inner)

    def humidity() -> str:
        return "80%"

    def registered_and_followed() -> bool:
        # Registered again until followed: core's mount starts listening
        # for changes after it returns, so a change made at once may be
        # missed (a change before the listen is acknowledged is not heard).
        inner.add_tool(humidity)
        return "alpha_humidity" in outer.tool_names()

    eventually(registered_and_followed)
    # Now the mount listens: one change is enough.
    inner.remove_tool("forecast")
    eventually(lambda: "alpha_forecast" not in outer.tool_names())


def test_a_mounted_client_is_served_under_its_prefix() -> None:
    with serving(weather_server()) as inner_url, ferromcp.SyncClient.http(inner_url) as upstream:
        outer = ferromcp.Server("app")
        outer.mount("beta", upstream)
        assert sorted(outer.tool_names()) == ["beta_alerts", "beta_forecast"]
        with serving(outer) as url, ferromcp.SyncClient.http(url) as client:
            assert client.call_tool("beta_forecast", {"city": "Rome"}).text == "sunny in Rome"
            assert client.call_tool("beta_alerts", {"region": "south"}).text == "no alerts for south"
            assert client.read_resource("beta+mem://r").text == "remember the umbrella"


def test_an_asyncio_client_mounts_too() -> None:
    with serving(weather_server()) as inner_url:

        async def main() -> list[str]:
            async with ferromcp.Client.http(inner_url) as upstream:
                outer = ferromcp.Server("app")
                outer.mount("gamma", upstream)
                return sorted(outer.tool_names())

        assert asyncio.run(asyncio.wait_for(main(), TIMEOUT)) == ["gamma_alerts", "gamma_forecast"]


def test_a_proxy_serves_what_the_upstream_serves() -> None:
    with serving(weather_server()) as inner_url, ferromcp.SyncClient.http(inner_url) as upstream:
        proxy = ferromcp.Server.proxy(upstream)
        assert isinstance(proxy, ferromcp.Server)
        assert (proxy.name, proxy.version) == ("weather", "3.1")
        assert sorted(proxy.tool_names()) == ["alerts", "forecast"]
        with serving(proxy) as url, ferromcp.SyncClient.http(url) as client:
            assert sorted(t.name for t in client.list_tools()) == ["alerts", "forecast"]
            assert client.call_tool("forecast", {"city": "Lima"}).text == "sunny in Lima"
            assert client.read_resource("mem://r").text == "remember the umbrella"


@pytest.mark.parametrize("prefix", ["a b", "1st", "x/y"])
def test_a_bad_prefix_is_refused(prefix: str) -> None:
    outer = ferromcp.Server("app")
    with pytest.raises(ValueError, match="invalid mount prefix"):
        outer.mount(prefix, weather_server())
    assert outer.tool_names() == []


def test_a_server_cannot_be_mounted_in_itself() -> None:
    server = weather_server()
    with pytest.raises(ValueError, match="mounted in itself"):
        server.mount("again", server)


def test_other_upstreams_are_refused() -> None:
    with pytest.raises(TypeError, match="not str"):
        ferromcp.Server("app").mount("alpha", "http://127.0.0.1/mcp")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not Server"):
        ferromcp.Server.proxy(weather_server())  # type: ignore[arg-type]


def test_a_closed_client_cannot_be_mounted() -> None:
    with serving(weather_server()) as inner_url:
        upstream = ferromcp.SyncClient.http(inner_url)
        upstream.close()
        with pytest.raises(RuntimeError, match="closed"):
            ferromcp.Server("app").mount("alpha", upstream)


def test_unmount_removes_what_was_mounted() -> None:
    inner = weather_server()
    outer = ferromcp.Server("app")

    @outer.tool
    def own() -> str:
        return "outer's own"

    mount = outer.mount("alpha", inner)
    with serving(outer) as url, ferromcp.SyncClient.http(url) as client:
        assert len(list(client.list_tools())) == 3
        with client.listen(tools=True) as changes:
            mount.unmount()
            assert changes.next().method == "notifications/tools/list_changed"
        assert [t.name for t in client.list_tools()] == ["own"]
        assert list(client.list_resources()) == []
        with pytest.raises(ferromcp.McpError):
            client.call_tool("alpha_forecast", {"city": "Oslo"})
    assert not mount.mounted
    mount.unmount()  # again: nothing
    assert outer.tool_names() == ["own"]
    # The same prefix mounts again.
    outer.mount("alpha", inner)
    assert sorted(outer.tool_names()) == ["alpha_alerts", "alpha_forecast", "own"]


def test_the_outer_server_keeps_a_mounted_server_alive() -> None:
    outer = ferromcp.Server("app")
    outer.mount("alpha", weather_server())  # no other reference to it
    gc.collect()
    with serving(outer) as url, ferromcp.SyncClient.http(url) as client:
        assert client.call_tool("alpha_forecast", {"city": "Bern"}).text == "sunny in Bern"


def test_completions_registered_after_mounting_leave_the_mounts_alone() -> None:
    inner = ferromcp.Server("inner")

    @inner.prompt(completions={"city": ["Oslo", "Osaka"]})
    def brief(city: str) -> str:
        return f"Brief me on {city}"

    outer = ferromcp.Server("app")
    outer.mount("alpha", inner)

    # Registered after the mount: the mounted prompt still completes
    # through its upstream.
    @outer.prompt(completions={"lang": ["python", "rust"]})
    def review(lang: str) -> str:
        return f"Review in {lang}"

    with serving(outer) as url, ferromcp.SyncClient.http(url) as client:
        mounted = client.complete({"type": "ref/prompt", "name": "alpha_brief"}, "city", "Os")
        assert mounted.values == ["Oslo", "Osaka"]
        own = client.complete({"type": "ref/prompt", "name": "review"}, "lang", "r")
        assert own.values == ["rust"]
