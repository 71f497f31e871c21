// Typed usage of the telemetry typings (index.d.ts -> lib/telemetry.d.ts),
// type-checked by `make lint-node` (tsc --strict) with the real
// @opentelemetry/api and SDK types. Never run.
import { trace, metrics } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { Server, telemetry, type OpenTelemetryOptions, type RequestContext, type Telemetry } from 'ferromcp';

const options: OpenTelemetryOptions = { tracerProvider: new BasicTracerProvider(), meterProvider: metrics.getMeterProvider() };
telemetry.useOpenTelemetry(options);
telemetry.useOpenTelemetry({ tracerProvider: trace.getTracerProvider() });
telemetry.useOpenTelemetry();
const on: boolean = telemetry.active;
const sent: boolean = telemetry.flush(2000) && telemetry.flush();
const same: Telemetry = telemetry;

new Server({ name: 'traced', version: '1.0.0' }).tool('echo', (_args, ctx: RequestContext) => {
  const parent: string | undefined = ctx.trace?.traceparent;
  const state: string | undefined = ctx.trace?.tracestate;
  return { parent, state, on, sent, same: same === telemetry };
});

// @ts-expect-error: a tracer provider has getTracer()
telemetry.useOpenTelemetry({ tracerProvider: {} });
// @ts-expect-error: read-only
telemetry.active = false;
