"""OpenTelemetry (issue 31): ferromcp's spans join the application's SDK
(its provider, its current span, its exporters: nothing goes to a second
exporter), and without one the core's OTLP/HTTP exporter sends them where
the OTEL_* variables say, decoded here by a receiver of the test's own."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import ferromcp
import pytest
from conftest import EXAMPLE, REPO, TIMEOUT
from ferromcp import telemetry
from ferromcp.middleware import CallNext, MiddlewareContext
from opentelemetry import trace
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

CLI = next(
    (p for p in (REPO / "target" / d / "ferromcp" for d in ("debug", "release")) if p.exists()),
    REPO / "target" / "debug" / "ferromcp",
)


@dataclass
class App:
    """The application's SDK: a tracer provider exporting to memory, and a
    meter provider read in memory."""

    exporter: InMemorySpanExporter
    provider: TracerProvider
    reader: InMemoryMetricReader

    def spans(self, prefix: str = "") -> list[ReadableSpan]:
        return [s for s in self.exporter.get_finished_spans() if s.name.startswith(prefix)]

    def one(self, name: str, kind: SpanKind | None = None) -> ReadableSpan:
        found = [s for s in self.spans() if s.name == name and (kind is None or s.kind == kind)]
        assert len(found) == 1, f"{name} {kind}: {[(s.name, s.kind) for s in self.spans()]}"
        return found[0]

    def metric_names(self) -> set[str]:
        data = self.reader.get_metrics_data()
        assert data is not None
        return {m.name for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics}


@pytest.fixture
def app() -> Iterator[App]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    telemetry.use_opentelemetry(provider, MeterProvider(metric_readers=[reader]))
    try:
        yield App(exporter, provider, reader)
    finally:
        telemetry.disable()
        provider.shutdown()


def traced_server(app: App) -> ferromcp.Server:
    """Tools that start spans of their own, a failing tool and a link."""
    tracer = app.provider.get_tracer("tools")
    server = ferromcp.Server("traced")

    @server.tool
    def echo(text: str) -> str:
        with tracer.start_as_current_span("echo work"):
            return text

    @server.tool
    async def slow_echo(text: str) -> str:
        with tracer.start_as_current_span("slow_echo work"):
            await asyncio.sleep(0.01)
            return text

    @server.tool
    def fail() -> str:
        raise ValueError("nope")

    @server.middleware
    def link(ctx: MiddlewareContext, call_next: CallNext) -> dict[str, Any]:
        with tracer.start_as_current_span(f"link {ctx.name}"):
            return call_next(ctx)

    return server


def assert_joined(app: App, tool: str, app_span: ReadableSpan) -> None:
    """app span -> CLIENT span -> SERVER span -> the link's span -> the
    handler's span, in one trace."""
    client = app.one(f"tools/call {tool}", SpanKind.CLIENT)
    server = app.one(f"tools/call {tool}", SpanKind.SERVER)
    link = app.one(f"link {tool}")
    work = app.one(f"{tool} work")
    trace_id = app_span.context.trace_id
    assert {s.context.trace_id for s in (client, server, link, work)} == {trace_id}
    assert client.parent is not None and client.parent.span_id == app_span.context.span_id
    assert not client.parent.is_remote
    assert server.parent is not None and server.parent.span_id == client.context.span_id
    assert server.parent.is_remote
    assert link.parent is not None and link.parent.span_id == server.context.span_id
    assert work.parent is not None and work.parent.span_id == server.context.span_id
    assert client.attributes["mcp.method.name"] == "tools/call"
    assert server.attributes["gen_ai.tool.name"] == tool
    assert server.attributes["jsonrpc.request.id"]
    assert client.status.status_code == server.status.status_code == StatusCode.UNSET
    assert client.instrumentation_scope is not None and client.instrumentation_scope.name == "ferromcp"


def test_spans_join_the_application_sdk_in_memory(app: App) -> None:
    tracer = app.provider.get_tracer("app")
    server = traced_server(app)
    with ferromcp.SyncClient.in_memory(server) as client, tracer.start_as_current_span("app") as span:
        assert client.call_tool("echo", {"text": "hi"}).text == "hi"
    assert_joined(app, "echo", app.one("app"))
    assert span.get_span_context().trace_id == app.one("app").context.trace_id
    assert telemetry.in_use() == "opentelemetry"


def test_an_async_handler_and_an_async_client_join_too(app: App) -> None:
    tracer = app.provider.get_tracer("app")
    server = traced_server(app)

    async def main() -> None:
        async with ferromcp.Client.in_memory(server) as client:
            with tracer.start_as_current_span("app"):
                assert (await client.call_tool("slow_echo", {"text": "hi"})).text == "hi"

    asyncio.run(main())
    assert_joined(app, "slow_echo", app.one("app"))


def test_spans_join_over_http(app: App) -> None:
    tracer = app.provider.get_tracer("app")
    serving = traced_server(app).start("http", port=0)
    try:
        url = f"http://127.0.0.1:{serving.port}/mcp"
        with ferromcp.SyncClient.http(url) as client, tracer.start_as_current_span("app"):
            assert client.call_tool("echo", {"text": "hi"}).text == "hi"
    finally:
        serving.stop()
        serving.wait(TIMEOUT)
    assert_joined(app, "echo", app.one("app"))
    assert app.one("tools/call echo", SpanKind.SERVER).attributes["network.transport"] == "tcp"


def test_a_tool_error_marks_both_spans(app: App) -> None:
    with ferromcp.SyncClient.in_memory(traced_server(app)) as client:
        assert client.call_tool("fail").is_error
    for kind in (SpanKind.CLIENT, SpanKind.SERVER):
        span = app.one("tools/call fail", kind)
        assert span.attributes["error.type"] == "tool_error"
        assert span.status.status_code == StatusCode.ERROR
    # Unknown tool: a JSON-RPC error, its code the error type.
    with ferromcp.SyncClient.in_memory(traced_server(app)) as client, pytest.raises(ferromcp.McpError):
        client.call_tool("missing")
    server_span = app.one("tools/call missing", SpanKind.SERVER)
    assert server_span.attributes["error.type"] == server_span.attributes["rpc.response.status_code"]
    assert server_span.status.status_code == StatusCode.ERROR


def test_a_call_outside_any_span_starts_a_trace_and_pages_follow_theirs(app: App) -> None:
    tracer = app.provider.get_tracer("app")
    with ferromcp.SyncClient.in_memory(traced_server(app)) as client:
        client.call_tool("echo", {"text": "hi"})
        with tracer.start_as_current_span("app"):
            assert "echo" in [tool.name for tool in client.list_tools()]
    assert app.one("tools/call echo", SpanKind.CLIENT).parent is None
    # Pages are fetched on core's threads, under the span current when the
    # listing started.
    listing = app.one("tools/list", SpanKind.CLIENT)
    assert listing.parent is not None and listing.parent.span_id == app.one("app").context.span_id
    listed = app.one("tools/list", SpanKind.SERVER)
    assert listed.parent is not None and listed.parent.span_id == listing.context.span_id


def test_a_visibility_rule_runs_under_the_server_span(app: App) -> None:
    server = traced_server(app)
    seen: list[int] = []

    @server.visibility
    def rule(caller: ferromcp.Caller, item: ferromcp.VisibleItem) -> bool:
        seen.append(trace.get_current_span().get_span_context().span_id)
        return True

    with ferromcp.SyncClient.in_memory(server) as client:
        assert "echo" in [tool.name for tool in client.list_tools()]
    assert set(seen) == {app.one("tools/list", SpanKind.SERVER).context.span_id}


def test_operations_are_measured_by_the_application_meter(app: App) -> None:
    with ferromcp.SyncClient.in_memory(traced_server(app)) as client:
        client.call_tool("echo", {"text": "hi"})
    assert {
        "mcp.server.operation.duration",
        "mcp.client.operation.duration",
        "mcp.server.active_requests",
    } <= app.metric_names()
    data = app.reader.get_metrics_data()
    assert data is not None
    points = [
        point
        for rm in data.resource_metrics
        for sm in rm.scope_metrics
        for m in sm.metrics
        if m.name == "mcp.server.operation.duration"
        for point in m.data.data_points
    ]
    echo = [p for p in points if p.attributes.get("gen_ai.tool.name") == "echo"]
    assert len(echo) == 1 and echo[0].count == 1 and echo[0].attributes["mcp.method.name"] == "tools/call"


def test_disabled_telemetry_makes_no_spans(app: App) -> None:
    telemetry.disable()
    assert telemetry.in_use() is None
    with ferromcp.SyncClient.in_memory(traced_server(app)) as client:
        client.call_tool("echo", {"text": "hi"})
    assert app.spans("tools/") == []
    assert telemetry.flush(1.0)


# -- Without an application SDK: the core's OTLP/HTTP exporter ------------


@dataclass
class Received:
    """What an OTLP/HTTP receiver was sent."""

    spans: list[dict[str, Any]] = field(default_factory=list)
    metrics: set[str] = field(default_factory=set)
    posts: list[tuple[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _attributes(pairs: Any) -> dict[str, Any]:
    return {kv.key: getattr(kv.value, kv.value.WhichOneof("value")) for kv in pairs}


def _json_attributes(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    return {kv["key"]: next(iter(kv["value"].values())) for kv in pairs}


def _decode(received: Received, path: str, content_type: str, body: bytes) -> None:
    with received.lock:
        received.posts.append((path, content_type))
        if path == "/v1/traces" and content_type == "application/x-protobuf":
            request = ExportTraceServiceRequest.FromString(body)
            for rs in request.resource_spans:
                service = _attributes(rs.resource.attributes).get("service.name")
                for ss in rs.scope_spans:
                    for s in ss.spans:
                        received.spans.append(
                            {
                                "name": s.name,
                                "kind": s.kind,
                                "trace_id": s.trace_id.hex(),
                                "span_id": s.span_id.hex(),
                                "parent_span_id": s.parent_span_id.hex(),
                                "attributes": _attributes(s.attributes),
                                "service": service,
                            }
                        )
        elif path == "/v1/traces":
            request_json = json.loads(body)
            for rs in request_json["resourceSpans"]:
                service = _json_attributes(rs.get("resource", {}).get("attributes", [])).get("service.name")
                for ss in rs["scopeSpans"]:
                    for s in ss["spans"]:
                        received.spans.append(
                            {
                                "name": s["name"],
                                "kind": s["kind"],
                                "trace_id": s["traceId"],
                                "span_id": s["spanId"],
                                "parent_span_id": s.get("parentSpanId", ""),
                                "attributes": _json_attributes(s.get("attributes", [])),
                                "service": service,
                            }
                        )
        elif path == "/v1/metrics" and content_type == "application/x-protobuf":
            metrics_request = ExportMetricsServiceRequest.FromString(body)
            for rm in metrics_request.resource_metrics:
                for sm in rm.scope_metrics:
                    received.metrics.update(m.name for m in sm.metrics)
        elif path == "/v1/metrics":
            for rm in json.loads(body)["resourceMetrics"]:
                for sm in rm["scopeMetrics"]:
                    received.metrics.update(m["name"] for m in sm["metrics"])


@pytest.fixture
def receiver() -> Iterator[tuple[str, Received]]:
    """A local OTLP/HTTP receiver: its endpoint, and what it was sent."""
    received = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            content_type = self.headers.get("Content-Type", "").split(";")[0]
            _decode(received, self.path, content_type, body)
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", received
    finally:
        httpd.shutdown()
        httpd.server_close()


def otel_env(endpoint: str, protocol: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(
        OTEL_TRACES_EXPORTER="otlp",
        OTEL_METRICS_EXPORTER="otlp",
        OTEL_EXPORTER_OTLP_ENDPOINT=endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL=protocol,
        OTEL_BSP_SCHEDULE_DELAY="50",
        OTEL_METRIC_EXPORT_INTERVAL="100",
    )
    return env


def assert_exported(received: Received, tool: str) -> None:
    with received.lock:
        spans = [s for s in received.spans if s["name"] == f"tools/call {tool}"]
        metrics = set(received.metrics)
    kinds = {s["kind"]: s for s in spans}
    assert len(spans) == 2 and set(kinds) == {2, 3}, spans  # SERVER = 2, CLIENT = 3
    server, client = kinds[2], kinds[3]
    assert server["trace_id"] == client["trace_id"]
    assert server["parent_span_id"] == client["span_id"]
    for span in (server, client):
        assert span["attributes"]["mcp.method.name"] == "tools/call"
        assert span["attributes"]["gen_ai.tool.name"] == tool
    assert "mcp.server.operation.duration" in metrics, metrics
    assert "mcp.client.operation.duration" in metrics, metrics


@pytest.mark.skipif(not CLI.exists(), reason="the ferromcp CLI (target/debug/ferromcp) is built by `make cargo-build`")
def test_the_cli_and_a_python_server_export_one_trace_over_otlp_protobuf(receiver: tuple[str, Received]) -> None:
    endpoint, received = receiver
    env = otel_env(endpoint, "http/protobuf")
    env["OTEL_SERVICE_NAME"] = "otel-test"
    done = subprocess.run(
        [str(CLI), "call", "--stdio", f"{sys.executable} {EXAMPLE}", "echo", '{"text":"hi"}'],
        env=env,
        cwd=REPO,
        capture_output=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout)["content"][0]["text"] == "hi"
    # Both processes sent their spans before exiting.
    assert_exported(received, "echo")
    with received.lock:
        assert {s["service"] for s in received.spans} == {"otel-test"}
        assert all(ctype == "application/x-protobuf" for _, ctype in received.posts)


CLIENT_SCRIPT = textwrap.dedent(
    """
    import sys
    import ferromcp

    with ferromcp.SyncClient.stdio(sys.executable, [sys.argv[1]]) as client:
        assert client.call_tool("add", {"a": 2, "b": 3}).text == "5"
    assert ferromcp.telemetry.in_use() == "otlp"
    """
)


def test_a_python_client_and_server_export_over_otlp_json(receiver: tuple[str, Received], tmp_path: Path) -> None:
    endpoint, received = receiver
    script = tmp_path / "client.py"
    script.write_text(CLIENT_SCRIPT)
    done = subprocess.run(
        [sys.executable, str(script), str(EXAMPLE)],
        env=otel_env(endpoint, "http/json"),
        cwd=REPO,
        capture_output=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr.decode()
    # The client's spans went at exit (atexit), the server's when its
    # input ended.
    assert_exported(received, "add")
    with received.lock:
        assert all(ctype == "application/json" for _, ctype in received.posts)


SDK_SCRIPT = textwrap.dedent(
    """
    import json
    import ferromcp
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    # Made before the application sets its provider: the OTEL_* variables
    # start the core's exporter here ...
    server = ferromcp.Server("late")
    server.tool(name="echo")(lambda text: text)
    before = ferromcp.telemetry.in_use()

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)

    # ... which the application's SDK replaces when the client connects.
    with ferromcp.SyncClient.in_memory(server) as client:
        with trace.get_tracer("app").start_as_current_span("app"):
            client.call_tool("echo", {"text": "hi"})
    print(json.dumps({
        "before": before,
        "after": ferromcp.telemetry.in_use(),
        "spans": sorted(s.name for s in exporter.get_finished_spans()),
    }))
    """
)


GLOBAL_SCRIPT = textwrap.dedent(
    """
    import json
    import ferromcp
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    # The global providers, before the application has set any: calls work
    # (no SDK, no spans) and follow the provider once it is set.
    ferromcp.telemetry.use_opentelemetry()
    server = ferromcp.Server("global")
    server.tool(name="echo")(lambda text: text)
    with ferromcp.SyncClient.in_memory(server) as client:
        client.call_tool("echo", {"text": "before"})
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        client.call_tool("echo", {"text": "after"})
    print(json.dumps(sorted(s.kind.name for s in exporter.get_finished_spans() if s.name == "tools/call echo")))
    """
)


def test_the_global_providers_are_followed_once_set(tmp_path: Path) -> None:
    script = tmp_path / "app.py"
    script.write_text(GLOBAL_SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run([sys.executable, str(script)], env=env, cwd=REPO, capture_output=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout) == ["CLIENT", "SERVER"]


def test_an_application_sdk_replaces_the_core_exporter(receiver: tuple[str, Received], tmp_path: Path) -> None:
    endpoint, received = receiver
    script = tmp_path / "app.py"
    script.write_text(SDK_SCRIPT)
    done = subprocess.run(
        [sys.executable, str(script)],
        env=otel_env(endpoint, "http/protobuf"),
        cwd=REPO,
        capture_output=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr.decode()
    out = json.loads(done.stdout)
    assert out["before"] == "otlp"
    assert out["after"] == "opentelemetry"
    assert [name for name in out["spans"] if name != "server/discover"] == ["app", "tools/call echo", "tools/call echo"]
    # Nothing went to a second exporter.
    with received.lock:
        assert received.spans == [] and received.metrics == set()
