/**
 * OpenTelemetry: ferromcp's spans in the application's own OpenTelemetry
 * SDK. See {@link telemetry}.
 */

/**
 * A tracer provider: `@opentelemetry/api`'s `TracerProvider`, such as an
 * SDK's `NodeTracerProvider` or `BasicTracerProvider` (typed structurally,
 * so that `@opentelemetry/api` stays an optional dependency).
 */
export interface OpenTelemetryTracerProvider {
  getTracer(name: string, version?: string): unknown;
}

/** A meter provider: `@opentelemetry/api`'s `MeterProvider`, such as the SDK's `MeterProvider`. */
export interface OpenTelemetryMeterProvider {
  getMeter(name: string, version?: string): unknown;
}

/** Options of {@link Telemetry.useOpenTelemetry}. */
export interface OpenTelemetryOptions {
  /** Where spans go (default: the provider registered with `@opentelemetry/api`, followed when registered later). */
  tracerProvider?: OpenTelemetryTracerProvider;
  /** Where the duration and active-request metrics go (default: the registered one). */
  meterProvider?: OpenTelemetryMeterProvider;
}

/**
 * How ferromcp reports its spans, `telemetry`.
 *
 * With the application's OpenTelemetry SDK (`@opentelemetry/api` installed
 * and a tracer provider registered when a `Server` or `Client` is created,
 * or {@link Telemetry.useOpenTelemetry} called), every request a server
 * serves gets a SERVER span and every call a client makes a CLIENT span in
 * the application's provider, named and attributed per the MCP semantic
 * conventions (`tools/call echo`, `mcp.method.name`, `gen_ai.tool.name`,
 * `error.type`: `tool_error` for a tool result with `isError`, the JSON-RPC
 * code for an error). A call's span is a child of the context active when
 * the call is made, and goes to the server in `_meta` (`traceparent`), so
 * the server's span is its child; handlers run in their request's span
 * (`context.with`), so the spans they start are its children. Nothing
 * else is exported: the SDK's exporters send the spans.
 *
 * Without an SDK, the standard variables (`OTEL_TRACES_EXPORTER=otlp`,
 * `OTEL_EXPORTER_OTLP_ENDPOINT`, ...) start ferromcp's own OTLP exporter,
 * flushed before the process exits.
 *
 * @example
 * ```js
 * import { trace, context } from '@opentelemetry/api';
 * import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
 * import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
 * import { Server, Client, telemetry } from 'ferromcp';
 *
 * const exporter = new InMemorySpanExporter();
 * context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
 * trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
 *
 * const server = new Server({ name: 'demo', version: '1.0.0' }); // telemetry.active is now true
 * server.tool('echo', ({ text }) => trace.getTracer('app').startActiveSpan('work', (span) => { span.end(); return text; }));
 * const client = await Client.inMemory(server);
 * await trace.getTracer('app').startActiveSpan('request', async (span) => {
 *   await client.callTool('echo', { text: 'hi' }); // request > tools/call echo (CLIENT) > tools/call echo (SERVER) > work
 *   span.end();
 * });
 * await client.close();
 * ```
 */
export interface Telemetry {
  /**
   * Reports ferromcp's spans (and metrics) to the application's
   * OpenTelemetry SDK from now on, replacing ferromcp's own exporter.
   * Automatic when a tracer provider is registered as a `Server` or
   * `Client` is created; call it to pass providers of your own. Throws
   * when `@opentelemetry/api` is not installed.
   *
   * @example
   * ```js
   * telemetry.useOpenTelemetry({ tracerProvider: myProvider });
   * ```
   */
  useOpenTelemetry(options?: OpenTelemetryOptions): void;
  /** Whether spans go to the application's OpenTelemetry SDK. */
  readonly active: boolean;
  /**
   * Sends what ferromcp's own exporter (the `OTEL_*` variables') holds,
   * waiting at most `timeoutMs` (default 5000); whether all was sent. Done
   * by itself before the process exits.
   *
   * @example
   * ```js
   * process.on('SIGTERM', () => { telemetry.flush(2000); process.exit(0); });
   * ```
   */
  flush(timeoutMs?: number): boolean;
}

/** How ferromcp reports its spans; see {@link Telemetry}. */
export declare const telemetry: Telemetry;
