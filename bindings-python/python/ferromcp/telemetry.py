"""OpenTelemetry: a span for every request a server serves and a client
sends, with the W3C trace context carried in ``_meta`` so that a server's
span is the child of its client's; and the duration of each operation as a
metric.

The spans, their names (``tools/call echo``) and attributes (the MCP
semantic conventions: ``mcp.method.name``, ``gen_ai.tool.name``,
``error.type``...) are the Rust core's. Where they go:

- **the application's OpenTelemetry SDK**, when it has one: ferromcp's
  spans are made by the application's tracer provider, so they join its
  traces and go to its exporters. A handler runs with its MCP server span
  as the current span (its own spans are children of it), and a client call
  is sent under the caller's current span. This happens by itself when a
  :class:`~ferromcp.Server` or :class:`~ferromcp.Client` is created, served
  or connected after the application set its global tracer provider (an
  SDK's, not the API's default); :func:`use_opentelemetry` chooses the
  providers explicitly.
- **otherwise, the core's own OTLP/HTTP exporter**, configured by the
  standard variables: ``OTEL_TRACES_EXPORTER=otlp``,
  ``OTEL_METRICS_EXPORTER=otlp``, ``OTEL_EXPORTER_OTLP_ENDPOINT``,
  ``OTEL_EXPORTER_OTLP_PROTOCOL`` (``http/protobuf`` or ``http/json``),
  ``OTEL_SERVICE_NAME``... Nothing else is needed, and the ``opentelemetry``
  packages are not.

Either way one exporter: the application's SDK replaces the core's. What
is still buffered is sent when the process exits (:func:`flush`).

>>> import ferromcp
>>> from opentelemetry.sdk.trace import TracerProvider
>>> from opentelemetry.sdk.trace.export import SimpleSpanProcessor
>>> from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
>>> exporter = InMemorySpanExporter()
>>> provider = TracerProvider()
>>> provider.add_span_processor(SimpleSpanProcessor(exporter))
>>> use_opentelemetry(provider)
>>> server = ferromcp.Server("demo")
>>> @server.tool
... def echo(text: str) -> str:
...     return text
>>> with ferromcp.SyncClient.in_memory(server) as client:
...     client.call_tool("echo", {"text": "hi"}).text
'hi'
>>> sorted(span.name for span in exporter.get_finished_spans() if span.name.startswith("tools/"))
['tools/call echo', 'tools/call echo']
>>> disable()
"""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING, Any, Literal

from . import _native

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import TracerProvider

__all__ = ["disable", "flush", "in_use", "use_opentelemetry"]

_lock = threading.Lock()
# Whether the program chose (use_opentelemetry or disable): then nothing is
# joined by itself any more.
_chosen = False
# The (tracer, meter) providers joined by themselves, to join again only
# when the application sets others.
_joined: tuple[object, object] | None = None


def use_opentelemetry(
    tracer_provider: TracerProvider | None = None,
    meter_provider: MeterProvider | None = None,
) -> None:
    """Makes ferromcp's spans and metrics through the application's
    OpenTelemetry providers, for every server and client of the process,
    instead of any exporter of ferromcp's own.

    ``None`` stands for the global provider (``opentelemetry.trace``'s and
    ``opentelemetry.metrics``'s), also one set later. The durations go to
    the histograms ``mcp.server.operation.duration`` and
    ``mcp.client.operation.duration`` (seconds), the requests in progress to
    ``mcp.server.active_requests``. Not needed when the application sets its
    global tracer provider before creating servers and clients: they join
    it by themselves.

    >>> from opentelemetry.sdk.trace import TracerProvider
    >>> use_opentelemetry(TracerProvider())
    >>> in_use()
    'opentelemetry'
    >>> disable()

    Raises:
        ImportError: the ``opentelemetry-api`` package is not installed.
    """
    global _chosen
    with _lock:
        _chosen = True
        _install(tracer_provider, meter_provider, metrics=True)


def disable() -> None:
    """Stops sending spans and metrics (after sending what is buffered),
    wherever they went; a later :func:`use_opentelemetry` starts again.

    >>> disable()
    >>> in_use() is None
    True
    """
    global _chosen, _joined
    with _lock:
        _chosen = True
        _joined = None
        _native.telemetry_stop()


def flush(timeout: float = 5.0) -> bool:
    """Sends the spans and metrics not sent yet, waiting at most
    ``timeout`` seconds; whether all of them went. Done at exit by itself;
    a program that ends otherwise (``os._exit``) calls it before.

    >>> flush()
    True
    """
    return _native.telemetry_flush(timeout)


def in_use() -> Literal["opentelemetry", "otlp"] | None:
    """Where spans go: ``"opentelemetry"`` (the application's SDK),
    ``"otlp"`` (the core's exporter, from the ``OTEL_*`` variables) or
    ``None`` (nowhere).

    >>> in_use() in ("opentelemetry", "otlp", None)
    True
    """
    installed = _native.telemetry_installed()
    if installed == "opentelemetry":
        return "opentelemetry"
    if installed == "otlp":
        return "otlp"
    return None


def _install(tracer_provider: Any, meter_provider: Any, metrics: bool) -> None:
    try:
        from ._otel import Bridge
    except ImportError as e:
        raise ImportError(
            "ferromcp.telemetry.use_opentelemetry needs the opentelemetry-api package (pip install opentelemetry-api)"
        ) from e
    _native.telemetry_use(Bridge(tracer_provider, meter_provider), metrics)


def _is_default(provider: object, module: Any, names: tuple[str, ...]) -> bool:
    """Whether ``provider`` is one of the API's own (a proxy or a no-op)."""
    return any(isinstance(provider, t) for t in (getattr(module, name, None) for name in names) if isinstance(t, type))


def _join_sdk() -> None:
    """Joins the application's OpenTelemetry SDK if it set its global tracer
    provider: called where servers and clients are created, served and
    connected. A dictionary lookup when ``opentelemetry`` was never imported.
    """
    global _joined
    if _chosen:
        return
    trace_api = sys.modules.get("opentelemetry.trace")
    if trace_api is None:
        return
    tracer_provider = trace_api.get_tracer_provider()
    if _is_default(tracer_provider, trace_api, ("ProxyTracerProvider", "NoOpTracerProvider")):
        return
    meter_provider: object = None
    metrics_api = sys.modules.get("opentelemetry.metrics")
    if metrics_api is not None:
        provider = metrics_api.get_meter_provider()
        internal = sys.modules.get("opentelemetry.metrics._internal")
        if not (
            _is_default(provider, metrics_api, ("NoOpMeterProvider",))
            or _is_default(provider, internal, ("_ProxyMeterProvider",))
        ):
            meter_provider = provider
    joined = _joined
    if joined is not None and joined[0] is tracer_provider and joined[1] is meter_provider:
        return
    with _lock:
        if _chosen:
            return
        _install(tracer_provider, meter_provider, metrics=meter_provider is not None)
        _joined = (tracer_provider, meter_provider)


def _flush_at_exit() -> None:
    """At interpreter exit: sends what is buffered (a short-lived client's
    spans), waiting at most 5 seconds."""
    _native.telemetry_flush(5.0)
