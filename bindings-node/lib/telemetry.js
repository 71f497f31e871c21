'use strict';
/**
 * OpenTelemetry: ferromcp's spans in the application's own OpenTelemetry
 * SDK (its tracer provider, exporters and context), with no second
 * exporter. A SERVER span for every request a server serves, a CLIENT
 * span for every call a client makes, named and attributed as the MCP
 * semantic conventions say (`tools/call echo`, `mcp.method.name`,
 * `gen_ai.tool.name`, `error.type`...), exactly as ferromcp's core names
 * them in every language.
 *
 * - A client call's span is a child of the context active when it is made
 *   (`context.active()`), and its context goes to the server in `_meta`
 *   (`traceparent`, SEP-414): the server's span is its child, in this
 *   process or another.
 * - A handler (tool, resource, prompt, completion, middleware link,
 *   visibility rule) runs in `context.with(<the server span>)`: the spans
 *   it starts, and the client calls it makes, are its children.
 * - The duration metrics (`mcp.server.operation.duration`,
 *   `mcp.client.operation.duration`) and `mcp.server.active_requests` go
 *   to the application's meter provider.
 *
 * It is on once `telemetry.useOpenTelemetry()` is called, or on its own
 * when a `Server` or `Client` is created while `@opentelemetry/api` is
 * installed and a tracer provider is registered with it (as
 * `NodeSDK.start()` or `provider.register()` do). `@opentelemetry/api` is
 * an optional peer dependency: nothing is loaded without it. Without an
 * SDK, the standard `OTEL_*` variables start ferromcp's own OTLP exporter
 * instead (see the README).
 *
 * How it works (the addon's `src/telemetry.rs` has the details): core
 * starts its spans on its own threads, which never wait for JavaScript.
 * Those spans' starts and ends are queued and become SDK spans here, on
 * the JS thread (woken without waiting, and before a handler runs under
 * one); the SDK chooses their ids, and the id core gave a span is mapped
 * to its SDK span. A call made from JavaScript gets its SDK span here
 * first, and core adopts it, so what goes out in `_meta` is the SDK's.
 *
 * @example
 * import { context, trace } from '@opentelemetry/api';
 * import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
 * import { BasicTracerProvider, ConsoleSpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
 * import { Server, Client } from 'ferromcp';
 *
 * context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
 * trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new ConsoleSpanExporter())] }));
 * const server = new Server({ name: 'demo', version: '1.0.0' }).tool('echo', ({ text }) => text); // finds the provider
 * const client = await Client.inMemory(server);
 * await client.callTool('echo', { text: 'hi' }); // a CLIENT and a SERVER span "tools/call echo"
 * await client.close();
 */

const native = require('./load-native.js');
const { version } = require('../package.json');

/** The tracer and meter name ferromcp reports under. */
const NAME = 'ferromcp';

/**
 * `@opentelemetry/api`, loaded on first need; `null` when it is not
 * installed.
 * @type {any}
 */
let otelApi;

/** @returns {any} */
function loadApi() {
  if (otelApi === undefined) {
    try {
      otelApi = require('@opentelemetry/api');
    } catch {
      otelApi = null;
    }
  }
  return otelApi;
}

/**
 * Where spans go, once on.
 * @type {{ api: any, tracer: any, meter: any, instruments: Map<string, any> } | null}
 */
let state = null;

/** Whether `@opentelemetry/api` was found missing: not looked for again. */
let noApi = false;

/**
 * The SDK spans being recorded, by the span id core knows them by (its
 * own for a span it started, the SDK's for a call's span it adopted).
 * `adopted`: core ends it; otherwise the call that made it does.
 * @type {Map<string, { span: any, adopted: boolean }>}
 */
const open = new Map();

/**
 * Span ids of spans core started that ended, mapped to their SDK span's
 * context, for what starts under them later (a task's handler): the
 * newest {@link ENDED_KEPT} only.
 * @type {Map<string, any>}
 */
const ended = new Map();
const ENDED_KEPT = 1024;

/**
 * Reports ferromcp's spans to the application's OpenTelemetry SDK from now
 * on: `tracerProvider` (default: the one registered with
 * `@opentelemetry/api`, followed even when registered later) and
 * `meterProvider` (default: the registered one). This replaces ferromcp's
 * own exporter (the one the `OTEL_*` variables start): spans go to one
 * place. A `Server` or `Client` created while a tracer provider is
 * registered calls it by itself; call it to pass providers of your own,
 * or before any server or client exists. Throws when
 * `@opentelemetry/api` is not installed.
 *
 * @example
 * const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
 * const { telemetry } = require('ferromcp');
 *
 * const exporter = new InMemorySpanExporter();
 * const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
 * telemetry.useOpenTelemetry({ tracerProvider });
 *
 * @param {{ tracerProvider?: { getTracer(name: string, version?: string): any },
 *   meterProvider?: { getMeter(name: string, version?: string): any } }} [options]
 */
function useOpenTelemetry(options = {}) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError('telemetry.useOpenTelemetry(options): options must be an object');
  }
  const { tracerProvider, meterProvider } = options;
  if (tracerProvider != null && typeof tracerProvider.getTracer !== 'function') {
    throw new TypeError('telemetry.useOpenTelemetry(options): tracerProvider must have getTracer()');
  }
  if (meterProvider != null && typeof meterProvider.getMeter !== 'function') {
    throw new TypeError('telemetry.useOpenTelemetry(options): meterProvider must have getMeter()');
  }
  const api = loadApi();
  if (api === null) {
    throw new Error('telemetry.useOpenTelemetry(): @opentelemetry/api is not installed (npm install @opentelemetry/api)');
  }
  drain();
  state = {
    api,
    tracer: (tracerProvider ?? api.trace).getTracer(NAME, version),
    meter: (meterProvider ?? api.metrics).getMeter(NAME, version),
    instruments: new Map(),
  };
  native.telemetryInstall(drain, run, true);
  atExit();
}

/**
 * Whether spans go to the application's OpenTelemetry SDK.
 * @returns {boolean}
 */
function active() {
  return state !== null;
}

/**
 * Sends what ferromcp's own exporter (the one the `OTEL_*` variables
 * start) holds, waiting at most `timeoutMs`; whether all of it was sent.
 * Done by itself before the process exits. Spans reported to your SDK are
 * your SDK's to send (`sdk.shutdown()`, `provider.forceFlush()`).
 * @param {number} [timeoutMs]
 * @returns {boolean}
 */
function flush(timeoutMs = 5000) {
  drain();
  return native.telemetryFlush(timeoutMs);
}

/**
 * What every `Server` and `Client` does when it is created: turns the SDK
 * reporting on if the application registered a tracer provider, and
 * makes sure spans are sent before the process exits.
 */
function atCreation() {
  atExit();
  if (state !== null || noApi) return;
  const api = loadApi();
  if (api === null) {
    noApi = true;
    return;
  }
  if (registered(api)) useOpenTelemetry();
}

/**
 * Whether a real tracer provider is registered with `@opentelemetry/api`
 * (its global provider delegates to something else than the no-op one).
 * @param {any} api
 */
function registered(api) {
  let provider = api.trace.getTracerProvider();
  if (typeof provider?.getDelegateTracer === 'function') {
    return provider.getDelegateTracer(NAME, version) !== undefined;
  }
  if (typeof provider?.getDelegate === 'function') provider = provider.getDelegate();
  return provider != null && provider.constructor?.name !== 'NoopTracerProvider';
}

let exitHooked = false;

/** Before the process exits: the last spans to the SDK, core's exporter flushed. */
function atExit() {
  if (exitHooked) return;
  exitHooked = true;
  process.on('beforeExit', () => {
    drain();
    native.telemetryFlush(5000);
  });
}

/**
 * Applies the events core queued (see `telemetryDrain` in the addon).
 * Runs when woken, before a handler runs under a span, and when a call
 * settles.
 */
function drain() {
  if (state === null) return;
  const events = native.telemetryDrain();
  for (const event of events) {
    try {
      apply(state, event);
    } catch (error) {
      state.api.diag.warn(`ferromcp: a span event could not be recorded: ${error}`);
    }
  }
}

/**
 * @param {NonNullable<typeof state>} on
 * @param {any} event
 */
function apply(on, event) {
  const { api } = on;
  switch (event.t) {
    case 'start': {
      const kind = event.kind === 'server' ? api.SpanKind.SERVER : api.SpanKind.CLIENT;
      const span = on.tracer.startSpan(
        event.name,
        { kind, attributes: event.attributes, startTime: event.time },
        parentContext(api, event.parent),
      );
      open.set(event.id, { span, adopted: false });
      break;
    }
    case 'adopt': {
      const entry = open.get(event.id);
      if (entry === undefined) break;
      entry.adopted = true;
      entry.span.updateName(event.name);
      entry.span.setAttributes(event.attributes);
      break;
    }
    case 'end':
    case 'abandon': {
      const entry = open.get(event.id);
      if (entry === undefined) break;
      open.delete(event.id);
      if (event.attributes) entry.span.setAttributes(event.attributes);
      if (event.error != null) entry.span.setStatus({ code: api.SpanStatusCode.ERROR, message: event.error });
      entry.span.end(event.time);
      if (!entry.adopted) {
        ended.set(event.id, entry.span.spanContext());
        if (ended.size > ENDED_KEPT) ended.delete(ended.keys().next().value);
      }
      break;
    }
    case 'operation': {
      const name = `mcp.${event.kind}.operation.duration`;
      let histogram = on.instruments.get(name);
      if (histogram === undefined) {
        histogram = on.meter.createHistogram(name, {
          description: 'Duration of MCP operations',
          unit: 's',
          advice: { explicitBucketBoundaries: [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300] },
        });
        on.instruments.set(name, histogram);
      }
      histogram.record(event.seconds, event.attributes);
      break;
    }
    case 'active': {
      const name = 'mcp.server.active_requests';
      let counter = on.instruments.get(name);
      if (counter === undefined) {
        counter = on.meter.createUpDownCounter(name, { description: 'MCP requests being served', unit: '{request}' });
        on.instruments.set(name, counter);
      }
      counter.add(event.delta, { 'mcp.method.name': event.method });
      break;
    }
    default:
      break;
  }
}

/**
 * The context a span core started is created in: under its parent's SDK
 * span when that is one of this process's, else under the parent as core
 * got it (a client's, from `_meta`); a root without a parent. Never the
 * active context: a drain may run inside a handler's.
 * @param {any} api
 * @param {{ traceId: string, spanId: string, flags: number, state?: string | null, remote: boolean } | null} parent
 */
function parentContext(api, parent) {
  const root = api.ROOT_CONTEXT;
  if (parent == null) return root;
  const local = open.get(parent.spanId);
  if (local !== undefined) return api.trace.setSpan(root, local.span);
  const gone = ended.get(parent.spanId);
  if (gone !== undefined) return api.trace.setSpanContext(root, gone);
  /** @type {Record<string, unknown>} */
  const spanContext = {
    traceId: parent.traceId,
    spanId: parent.spanId,
    traceFlags: parent.flags,
    isRemote: parent.remote,
  };
  if (parent.state && typeof api.createTraceState === 'function') spanContext.traceState = api.createTraceState(parent.state);
  return api.trace.setSpanContext(root, spanContext);
}

/**
 * The runner the addon calls a JS callable through when core calls it
 * under a span: `callable(...args)` in `context.with(<that span>)`. The
 * span's start is in the queue by then: drained first.
 * @param {string} traceparent
 * @param {(...args: any[]) => unknown} callable
 * @param {...any} args
 */
function run(traceparent, callable, ...args) {
  drain();
  const on = state;
  if (on === null) return callable(...args);
  const { api } = on;
  const [, traceId = '', spanId = '', flags = '01'] = traceparent.split('-');
  const local = open.get(spanId);
  const spanContext = local?.span.spanContext() ?? ended.get(spanId) ?? {
    traceId,
    spanId,
    traceFlags: Number.parseInt(flags, 16) || 0,
  };
  const context =
    local !== undefined
      ? api.trace.setSpan(api.context.active(), local.span)
      : api.trace.setSpanContext(api.context.active(), spanContext);
  // A handler's `ctx.trace` is its span as the SDK knows it.
  const ctx = args[1];
  if (ctx instanceof native.RequestContext && api.isSpanContextValid(spanContext)) {
    Object.defineProperty(ctx, 'trace', { value: traceOf(spanContext), configurable: true });
  }
  return api.context.with(context, callable, undefined, ...args);
}

/**
 * `{ traceparent, tracestate? }` of an OpenTelemetry span context.
 * @param {any} spanContext
 */
function traceOf(spanContext) {
  const flags = (spanContext.traceFlags & 0xff).toString(16).padStart(2, '0');
  /** @type {{ traceparent: string, tracestate?: string }} */
  const trace = { traceparent: `00-${spanContext.traceId}-${spanContext.spanId}-${flags}` };
  const state = spanContext.traceState?.serialize();
  if (state) trace.tracestate = state;
  return trace;
}

/**
 * Makes the client call `invoke()` (one native call) in a CLIENT span of
 * its own, a child of the active context; `name` is the span's name until
 * core names it (`tools/call echo`). Core adopts the span: its context
 * goes out in `_meta`, and core ends it with the outcome. A call that
 * sent nothing (refused before any request) ends it here when it
 * settles. Without the SDK reporting on, just `invoke()`.
 * @template T
 * @param {string} name
 * @param {() => Promise<T>} invoke
 * @returns {Promise<T>}
 */
function clientCall(name, invoke) {
  const on = state;
  if (on === null) return invoke();
  const { api } = on;
  const span = on.tracer.startSpan(name, { kind: api.SpanKind.CLIENT }, api.context.active());
  const spanContext = span.spanContext();
  if (!api.isSpanContextValid(spanContext)) {
    // A no-op tracer: nothing to carry.
    span.end();
    return invoke();
  }
  const id = spanContext.spanId;
  open.set(id, { span, adopted: false });
  const trace = traceOf(spanContext);
  /** @type {Promise<T>} */
  let pending;
  native.telemetryNextCall(trace.traceparent, trace.tracestate ?? null);
  try {
    pending = invoke();
  } catch (error) {
    settled(on, id, error);
    throw error;
  } finally {
    native.telemetryNextCall(null, null);
  }
  return Promise.resolve(pending).then(
    (value) => {
      settled(on, id, undefined);
      return value;
    },
    (error) => {
      settled(on, id, error);
      throw error;
    },
  );
}

/**
 * A traced call settled: its span is ended here unless core adopted it
 * (core's end is in the queue, or comes later for a stream).
 * @param {NonNullable<typeof state>} on
 * @param {string} id
 * @param {unknown} error
 */
function settled(on, id, error) {
  drain();
  const entry = open.get(id);
  if (entry === undefined || entry.adopted) return;
  open.delete(id);
  if (error !== undefined) {
    const { api } = on;
    const kind = /** @type {any} */ (error)?.kind;
    if (typeof kind === 'string') entry.span.setAttribute('error.type', kind);
    entry.span.setStatus({ code: api.SpanStatusCode.ERROR, message: String(/** @type {any} */ (error)?.message ?? error) });
  }
  entry.span.end();
}

/**
 * The initial name of a request's span (core's rule: the method, and the
 * tool or prompt it names).
 * @param {string} method
 * @param {any} [params]
 */
function spanName(method, params) {
  if ((method === 'tools/call' || method === 'prompts/get') && typeof params?.name === 'string') {
    return `${method} ${params.name}`;
  }
  return method;
}

/** The public `telemetry` namespace. */
const telemetry = Object.freeze({
  useOpenTelemetry,
  flush,
  get active() {
    return active();
  },
});

module.exports = { telemetry, atCreation, clientCall, spanName };
