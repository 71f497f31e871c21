"""The Python half of :func:`ferromcp.telemetry.use_opentelemetry`: core's
spans and measurements, made through the application's OpenTelemetry API.

The native telemetry (``bindings-python/src/telemetry.rs``) calls a
:class:`Bridge` with the GIL held: to start a span (a W3C ``traceparent``
as its parent, and the new span's ``traceparent`` back for core to carry
in ``_meta``), to end one with its attributes and error, to run a handler
under its server span and to read the caller's span when a client call
starts. Imported only when OpenTelemetry is in use.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import metrics, trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, Status, StatusCode, TraceFlags, TraceState

from . import _native

__all__ = ["Bridge"]

_SCOPE = "ferromcp"
# The bucket bounds (seconds) the MCP semantic conventions recommend for
# operation durations, as core's own exporter uses them.
_DURATION_BOUNDS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)

Attributes = Mapping[str, str | int | bool]
Measurement = tuple[bool, float, Attributes]


def traceparent(span_context: SpanContext) -> str:
    """The W3C ``traceparent`` of a span context.

    >>> traceparent(SpanContext(0x4BF92F3577B34DA6A3CE929D0E0E4736, 0xF067AA0BA902B7, False, TraceFlags(1)))
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
    """
    return f"00-{span_context.trace_id:032x}-{span_context.span_id:016x}-{int(span_context.trace_flags):02x}"


def span_context(traceparent: str, tracestate: str | None, remote: bool) -> SpanContext:
    """A span context from a ``traceparent`` core has checked (version 00).

    >>> ctx = span_context("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "rojo=1", True)
    >>> hex(ctx.span_id), ctx.trace_flags.sampled, ctx.is_remote, ctx.trace_state.to_header()
    ('0xf067aa0ba902b7', True, True, 'rojo=1')
    """
    return SpanContext(
        trace_id=int(traceparent[3:35], 16),
        span_id=int(traceparent[36:52], 16),
        is_remote=remote,
        trace_flags=TraceFlags(int(traceparent[53:55], 16)),
        trace_state=TraceState.from_header([tracestate]) if tracestate else None,
    )


class Bridge:
    """Core's telemetry calls, answered by a tracer and a meter of the
    application's providers (the global ones when ``None``: the API's
    proxies, which follow a provider set later)."""

    def __init__(
        self,
        tracer_provider: trace.TracerProvider | None,
        meter_provider: metrics.MeterProvider | None,
    ) -> None:
        self.tracer_provider = tracer_provider
        self.meter_provider = meter_provider
        self._tracer = trace.get_tracer(_SCOPE, _native.VERSION, tracer_provider)
        meter = metrics.get_meter(_SCOPE, _native.VERSION, meter_provider)
        self._durations = {
            server: meter.create_histogram(
                f"mcp.{'server' if server else 'client'}.operation.duration",
                unit="s",
                description="Duration of MCP operations",
                explicit_bucket_boundaries_advisory=_DURATION_BOUNDS,
            )
            for server in (False, True)
        }
        self._active = meter.create_up_down_counter(
            "mcp.server.active_requests", unit="{request}", description="MCP requests being served"
        )
        # The server spans in progress by their traceparent: what a handler
        # runs under (see attach). Changed with the GIL held only.
        self._serving: dict[str, trace.Span] = {}

    def start_span(
        self,
        name: str,
        server: bool,
        parent: str | None,
        parent_state: str | None,
        parent_is_remote: bool,
        attributes: Attributes,
    ) -> tuple[trace.Span, str | None, str | None]:
        """Starts a span: the span, and its ``traceparent`` and
        ``tracestate`` (``None`` when it has no valid context)."""
        # Never the context current on the calling thread (a runtime
        # worker's, or the loop's): the parent is the one core gives.
        parent_context = otel_context.Context()
        if parent is not None:
            parent_span = NonRecordingSpan(span_context(parent, parent_state, parent_is_remote))
            parent_context = trace.set_span_in_context(parent_span, parent_context)
        span = self._tracer.start_span(
            name,
            context=parent_context,
            kind=SpanKind.SERVER if server else SpanKind.CLIENT,
            attributes=attributes,
        )
        ctx = span.get_span_context()
        if not ctx.is_valid:
            return span, None, None
        own = traceparent(ctx)
        if server:
            self._serving[own] = span
        return span, own, ctx.trace_state.to_header() or None

    def end_span(
        self,
        span: trace.Span,
        server: bool,
        attributes: Attributes,
        error: tuple[str, str] | None,
        measured: Sequence[Measurement] | None,
    ) -> None:
        """Ends a span with the attributes and error set since it started,
        and records the measurements made meanwhile."""
        if attributes:
            span.set_attributes(attributes)
        if error is not None:
            error_type, message = error
            span.set_attribute("error.type", error_type)
            span.set_status(Status(StatusCode.ERROR, message))
        span.end()
        if server:
            own = traceparent(span.get_span_context())
            if self._serving.get(own) is span:
                del self._serving[own]
        if measured:
            self.record(measured)

    def record(self, measured: Sequence[Measurement]) -> None:
        """Records finished operations: ``(is_server, seconds, attributes)``."""
        for server, seconds, attributes in measured:
            self._durations[server].record(seconds, attributes)

    def active_requests(self, method: str, delta: int) -> None:
        """A request of ``method`` started (1) or ended (-1) being served."""
        self._active.add(delta, {"mcp.method.name": method})

    def attach(self, traceparent: str, tracestate: str | None) -> object:
        """Makes a server span current (the span object while it is in
        progress); the token to :meth:`detach` with."""
        span = self._serving.get(traceparent)
        if span is None:
            span = NonRecordingSpan(span_context(traceparent, tracestate, False))
        return otel_context.attach(trace.set_span_in_context(span))

    def detach(self, token: Any) -> None:
        """Restores the context :meth:`attach` replaced."""
        otel_context.detach(token)

    def current(self) -> tuple[str, str | None] | None:
        """The current span's ``traceparent`` and ``tracestate``: a client
        call's parent."""
        ctx = trace.get_current_span().get_span_context()
        if not ctx.is_valid:
            return None
        return traceparent(ctx), ctx.trace_state.to_header() or None

    def flush(self, timeout: float) -> bool:
        """Exports what the providers hold, waiting at most ``timeout``
        seconds; whether all of it went."""
        millis = max(int(timeout * 1000), 0)
        flushed = True
        for provider in (
            self.tracer_provider or trace.get_tracer_provider(),
            self.meter_provider or metrics.get_meter_provider(),
        ):
            force_flush = getattr(provider, "force_flush", None)
            if force_flush is not None:
                flushed = bool(force_flush(millis)) and flushed
        return flushed
