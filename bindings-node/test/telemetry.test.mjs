// OpenTelemetry (lib/telemetry.js, src/telemetry.rs): with the application's
// own SDK registered, ferromcp's spans join its provider and context. A
// CLIENT span per call, a child of the context active at call time; the
// SERVER span of the request it caused, in the same trace, its child (via
// the `_meta` traceparent, in memory and over HTTP); a handler's own spans
// and calls, children of the SERVER span; core's names, attributes and
// error types. Without a registered provider nothing is recorded and calls
// work as ever.
//
// The tests share the process's one global provider, so they run in order:
// the first one before any provider is registered.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';

import { context, trace, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

import { Client, Server, McpError, telemetry } from '../index.mjs';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const appTracer = () => trace.getTracer('app');

/** Registers the provider (and an AsyncLocalStorage context manager) globally, as `NodeSDK.start()` would. */
function register() {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
}

/** A server whose handlers start spans of their own. */
function makeServer(name = 'traced') {
  const server = new Server({ name, version: '1.0.0' });
  server.tool('echo', { inputSchema: { type: 'object' } }, ({ text }, ctx) => {
    const span = appTracer().startSpan('handler work');
    span.setAttribute('seen.trace', ctx.trace?.traceparent ?? 'none');
    span.end();
    return text;
  });
  server.tool('fails', () => {
    throw new Error('boom');
  });
  server.tool('refuses', () => {
    throw new McpError('not here', { code: -32002 });
  });
  server.tool('later', async ({ text }) => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    return appTracer().startActiveSpan('async work', (span) => {
      span.end();
      return text;
    });
  });
  return server;
}

/** Runs `body()` in an application span: what the test's spans hang under. */
async function underAppSpan(body) {
  return appTracer().startActiveSpan('app', async (span) => {
    try {
      return await body(span);
    } finally {
      span.end();
    }
  });
}

const spanId = (span) => span.spanContext().spanId;
const parentOf = (span) => span.parentSpanContext?.spanId;
/** The finished spans named `name` of kind `kind` (any kind if omitted). */
const named = (name, kind) =>
  exporter.getFinishedSpans().filter((s) => s.name === name && (kind === undefined || s.kind === kind));

/** Waits until `predicate()` holds (spans core ends reach the SDK asynchronously). */
async function until(predicate, what) {
  for (let i = 0; i < 200; i++) {
    if (predicate()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.fail(`timed out waiting for ${what}`);
}

test('without a registered provider nothing is recorded and calls still work', async () => {
  const server = makeServer();
  const client = await Client.inMemory(server);
  try {
    assert.equal(telemetry.active, false);
    const result = await client.callTool('echo', { text: 'hi' });
    assert.equal(result.content[0].text, 'hi');
    assert.equal((await client.callTool('fails')).isError, true);
  } finally {
    await client.close();
  }
  assert.equal(telemetry.active, false);
  assert.deepEqual(exporter.getFinishedSpans(), []);
});

test('a call joins the application trace: app -> CLIENT -> SERVER -> handler', async () => {
  register();
  exporter.reset();
  const server = makeServer(); // finds the registered provider
  assert.equal(telemetry.active, true);
  const client = await Client.inMemory(server);
  let app;
  try {
    await underAppSpan(async (span) => {
      app = span;
      const result = await client.callTool('echo', { text: 'hi' });
      assert.equal(result.content[0].text, 'hi');
    });
  } finally {
    await client.close();
  }
  const [clientSpan] = named('tools/call echo', SpanKind.CLIENT);
  const [serverSpan] = named('tools/call echo', SpanKind.SERVER);
  const [handlerSpan] = named('handler work');
  assert.ok(clientSpan && serverSpan && handlerSpan, exporter.getFinishedSpans().map((s) => s.name).join(', '));

  const traceId = app.spanContext().traceId;
  for (const span of [clientSpan, serverSpan, handlerSpan]) assert.equal(span.spanContext().traceId, traceId);
  assert.equal(parentOf(clientSpan), spanId(app));
  assert.equal(parentOf(serverSpan), spanId(clientSpan));
  assert.equal(parentOf(handlerSpan), spanId(serverSpan));

  assert.equal(clientSpan.instrumentationScope.name, 'ferromcp');
  assert.equal(serverSpan.instrumentationScope.name, 'ferromcp');
  assert.equal(clientSpan.attributes['mcp.method.name'], 'tools/call');
  assert.equal(clientSpan.attributes['gen_ai.tool.name'], 'echo');
  assert.equal(clientSpan.attributes['gen_ai.operation.name'], 'execute_tool');
  assert.equal(serverSpan.attributes['mcp.method.name'], 'tools/call');
  assert.equal(serverSpan.attributes['gen_ai.tool.name'], 'echo');
  assert.equal(serverSpan.attributes['network.transport'], 'pipe');
  assert.ok(serverSpan.attributes['jsonrpc.request.id'] !== undefined);
  assert.equal(clientSpan.status.code, SpanStatusCode.UNSET);
  assert.equal(serverSpan.status.code, SpanStatusCode.UNSET);
  // The server span lies within the client span.
  const ns = ([s, n]) => BigInt(s) * 1_000_000_000n + BigInt(n);
  assert.ok(ns(serverSpan.startTime) >= ns(clientSpan.startTime));
  assert.ok(ns(serverSpan.endTime) <= ns(clientSpan.endTime));
  // The handler's ctx.trace is its SERVER span, as the SDK knows it.
  assert.equal(handlerSpan.attributes['seen.trace'], `00-${traceId}-${spanId(serverSpan)}-01`);
});

test('a tool reporting an error and a JSON-RPC error mark both spans failed', async () => {
  exporter.reset();
  const client = await Client.inMemory(makeServer());
  try {
    await underAppSpan(async () => {
      assert.equal((await client.callTool('fails')).isError, true);
      await assert.rejects(client.callTool('refuses'), (error) => error instanceof McpError && error.code === -32002);
    });
  } finally {
    await client.close();
  }
  for (const kind of [SpanKind.CLIENT, SpanKind.SERVER]) {
    const [failed] = named('tools/call fails', kind);
    assert.equal(failed.attributes['error.type'], 'tool_error');
    assert.equal(failed.status.code, SpanStatusCode.ERROR);
    const [refused] = named('tools/call refuses', kind);
    assert.equal(refused.attributes['error.type'], '-32002');
    assert.equal(refused.attributes['rpc.response.status_code'], '-32002');
    assert.equal(refused.status.code, SpanStatusCode.ERROR);
    assert.equal(refused.status.message, 'not here');
  }
});

test('over HTTP, lists and pages, async handlers and many calls at once', async () => {
  exporter.reset();
  const server = makeServer('http');
  let url;
  const serving = server.serveHttp({ port: 0, handleSignals: false, onListening: (address) => (url = address.url) });
  await until(() => url !== undefined, 'the server to listen');
  const client = await Client.http(url);
  let app;
  try {
    await underAppSpan(async (span) => {
      app = span;
      assert.equal((await client.callTool('echo', { text: 'over http' })).content[0].text, 'over http');
      const names = [];
      for await (const tool of client.tools()) names.push(tool.name);
      assert.ok(names.includes('later'));
      const texts = await Promise.all(Array.from({ length: 20 }, (_, i) => client.callTool('later', { text: `n${i}` })));
      assert.deepEqual(
        texts.map((r) => r.content[0].text),
        Array.from({ length: 20 }, (_, i) => `n${i}`),
      );
    });
  } finally {
    await client.close();
    server.close();
    await serving;
  }
  await until(() => named('tools/call later', SpanKind.SERVER).length === 20, 'the 20 server spans');
  const [clientSpan] = named('tools/call echo', SpanKind.CLIENT);
  const [serverSpan] = named('tools/call echo', SpanKind.SERVER);
  assert.equal(parentOf(clientSpan), spanId(app));
  assert.equal(parentOf(serverSpan), spanId(clientSpan));
  assert.equal(serverSpan.spanContext().traceId, app.spanContext().traceId);
  assert.equal(serverSpan.attributes['network.transport'], 'tcp');
  assert.equal(parentOf(named('handler work')[0]), spanId(serverSpan));

  // A request no JS handler serves still has its SERVER span, a child of
  // the page's CLIENT span.
  const [listClient] = named('tools/list', SpanKind.CLIENT);
  assert.equal(parentOf(listClient), spanId(app));
  assert.ok(named('tools/list', SpanKind.SERVER).some((span) => parentOf(span) === spanId(listClient)));

  // Each concurrent call: its own CLIENT span under the app span, its
  // SERVER span under it, the handler's async span under that.
  const clients = named('tools/call later', SpanKind.CLIENT);
  const servers = named('tools/call later', SpanKind.SERVER);
  const works = named('async work');
  assert.equal(clients.length, 20);
  assert.equal(works.length, 20);
  const clientIds = new Set(clients.map(spanId));
  const serverIds = new Set(servers.map(spanId));
  for (const span of clients) assert.equal(parentOf(span), spanId(app));
  assert.equal(new Set(servers.map(parentOf)).size, 20);
  for (const span of servers) assert.ok(clientIds.has(parentOf(span)));
  assert.equal(new Set(works.map(parentOf)).size, 20);
  for (const span of works) assert.ok(serverIds.has(parentOf(span)));
});

test("a handler's own client call is a child of its server span", async () => {
  exporter.reset();
  const inner = makeServer('inner');
  const innerClient = await Client.inMemory(inner);
  const outer = new Server({ name: 'outer', version: '1.0.0' });
  outer.tool('relay', async ({ text }) => (await innerClient.callTool('echo', { text })).content[0].text);
  // A middleware link runs in the request's span too.
  const linkParents = [];
  outer.use(async (ctx, next) => {
    linkParents.push(trace.getActiveSpan()?.spanContext().spanId);
    return next(ctx);
  });
  const client = await Client.inMemory(outer);
  try {
    await underAppSpan(async () => {
      assert.equal((await client.callTool('relay', { text: 'nested' })).content[0].text, 'nested');
    });
  } finally {
    await client.close();
    await innerClient.close();
  }
  const [outerClient] = named('tools/call relay', SpanKind.CLIENT);
  const [outerServer] = named('tools/call relay', SpanKind.SERVER);
  const [innerCall] = named('tools/call echo', SpanKind.CLIENT);
  const [innerServer] = named('tools/call echo', SpanKind.SERVER);
  const [work] = named('handler work');
  assert.equal(parentOf(outerServer), spanId(outerClient));
  assert.equal(parentOf(innerCall), spanId(outerServer));
  assert.equal(parentOf(innerServer), spanId(innerCall));
  assert.equal(parentOf(work), spanId(innerServer));
  assert.ok(linkParents.includes(spanId(outerServer)), `${linkParents} / ${spanId(outerServer)}`);
  const traceIds = new Set([outerClient, outerServer, innerCall, innerServer, work].map((s) => s.spanContext().traceId));
  assert.equal(traceIds.size, 1);
});

test('a mounted server: the spans core makes for the forwarded call join the trace', async () => {
  exporter.reset();
  const gateway = new Server({ name: 'gateway', version: '1.0.0' });
  await gateway.mount('up', makeServer('upstream'));
  const client = await Client.inMemory(gateway);
  let app;
  try {
    await underAppSpan(async (span) => {
      app = span;
      assert.equal((await client.callTool('up_echo', { text: 'via' })).content[0].text, 'via');
    });
  } finally {
    await client.close();
  }
  const [outerClient] = named('tools/call up_echo', SpanKind.CLIENT);
  const [outerServer] = named('tools/call up_echo', SpanKind.SERVER);
  const [forwarded] = named('tools/call echo', SpanKind.CLIENT);
  const [upstream] = named('tools/call echo', SpanKind.SERVER);
  const [work] = named('handler work');
  assert.equal(parentOf(outerClient), spanId(app));
  assert.equal(parentOf(outerServer), spanId(outerClient));
  assert.equal(parentOf(forwarded), spanId(outerServer));
  assert.equal(parentOf(upstream), spanId(forwarded));
  assert.equal(parentOf(work), spanId(upstream));
  for (const span of [outerServer, forwarded, upstream, work]) {
    assert.equal(span.spanContext().traceId, app.spanContext().traceId);
  }
});

test('useOpenTelemetry takes providers of its own; metrics reach the meter provider', async () => {
  const own = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(own)] });
  const measured = [];
  const meterProvider = {
    getMeter: () => ({
      createHistogram: (name) => ({ record: (value, attributes) => measured.push({ name, value, attributes }) }),
      createUpDownCounter: (name) => ({ add: (value, attributes) => measured.push({ name, value, attributes }) }),
    }),
  };
  telemetry.useOpenTelemetry({ tracerProvider, meterProvider });
  const client = await Client.inMemory(makeServer());
  try {
    await client.callTool('echo', { text: 'hi' });
  } finally {
    await client.close();
  }
  const spans = own.getFinishedSpans().filter((s) => s.name === 'tools/call echo');
  assert.deepEqual(spans.map((s) => s.kind).sort(), [SpanKind.SERVER, SpanKind.CLIENT].sort());
  // Without an active span at call time, the client span is a root.
  const clientSpan = spans.find((s) => s.kind === SpanKind.CLIENT);
  assert.equal(clientSpan.parentSpanContext, undefined);
  const calls = measured.filter((m) => m.attributes['mcp.method.name'] === 'tools/call');
  const durations = calls.filter((m) => m.name === 'mcp.server.operation.duration');
  assert.equal(durations.length, 1);
  assert.equal(durations[0].attributes['gen_ai.tool.name'], 'echo');
  assert.ok(durations[0].value > 0);
  assert.equal(calls.filter((m) => m.name === 'mcp.client.operation.duration').length, 1);
  const active = calls.filter((m) => m.name === 'mcp.server.active_requests');
  assert.deepEqual(
    active.map((m) => m.value),
    [1, -1],
  );
  assert.throws(() => telemetry.useOpenTelemetry({ tracerProvider: {} }), TypeError);
  // Spans go to one place: ferromcp's own exporter is not installed.
  assert.equal(telemetry.flush(100), true);
});

test("without an SDK, the OTEL_* variables' exporter is flushed before the process exits", async () => {
  const bodies = [];
  const collector = createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      bodies.push({ path: request.url, body: Buffer.concat(chunks).toString('utf8') });
      response.end();
    });
  });
  await new Promise((resolve) => collector.listen(0, '127.0.0.1', resolve));
  const { port } = collector.address();
  const script = `
    import { Server, Client, telemetry } from ${JSON.stringify(new URL('../index.mjs', import.meta.url).href)};
    const server = new Server({ name: 'exiting', version: '1.0.0' }).tool('echo', ({ text }) => text);
    const client = await Client.inMemory(server);
    await client.callTool('echo', { text: 'bye' });
    await client.close();
    if (telemetry.active) process.exit(3);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    env: {
      ...process.env,
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      // Nothing is sent on schedule: only the flush at exit sends.
      OTEL_BSP_SCHEDULE_DELAY: '600000',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const status = await new Promise((resolve) => child.on('exit', resolve));
  collector.close();
  assert.equal(status, 0);
  const traces = bodies.filter((b) => b.path === '/v1/traces').map((b) => JSON.parse(b.body));
  const names = traces.flatMap((t) => t.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans.map((span) => span.name))));
  assert.ok(names.includes('tools/call echo'), JSON.stringify(names));
});
