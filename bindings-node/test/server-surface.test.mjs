// The rest of the Node server surface (issue 13, "Server"): zod / Standard
// Schema tools, ToolResult, request info on ctx, a throwing handler, HTTP
// options, and concurrency (async handlers overlap; the event loop is
// never blocked by the core).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { Server } from '../index.mjs';
import { RawClient, modernMeta, textOf } from '../test-support/raw-client.mjs';
import { spawn } from 'node:child_process';
import { once } from 'node:events';

import { postMcp, REPO_ROOT } from '../test-support/helpers.mjs';

let client;
before(() => {
  client = new RawClient('bindings-node/test-support/primitives-server.mjs');
});
after(async () => {
  const { code } = await client.close();
  assert.equal(code, 0, client.stderr);
});

test('a zod tool is listed with JSON Schemas and gets parsed arguments', async () => {
  const { result } = await client.modern('tools/list');
  const tool = result.tools.find((t) => t.name === 'zod_add');
  assert.equal(tool.title, 'Add');
  assert.deepEqual(tool.annotations, { readOnlyHint: true });
  assert.deepEqual(tool.inputSchema.required, ['a']);
  assert.deepEqual(tool.inputSchema.properties.b, { default: 10, type: 'number' });
  assert.deepEqual(tool.outputSchema.properties, { sum: { type: 'number' } });
  const call = await client.modern('tools/call', { name: 'zod_add', arguments: { a: 1 } });
  assert.deepEqual(call.result.structuredContent, { sum: 11 });
  // core validates against the JSON Schema before the handler runs
  const wrong = await client.modern('tools/call', { name: 'zod_add', arguments: { a: 'x' } });
  assert.equal(wrong.result.isError, true, JSON.stringify(wrong));
});

test("a zod refinement the JSON Schema cannot express fails as the tool's error", async () => {
  const odd = await client.modern('tools/call', { name: 'zod_refined', arguments: { even: 3 } });
  assert.equal(odd.result.isError, true);
  assert.match(textOf(odd.result), /TypeError: invalid arguments of tool "zod_refined": even: must be even/);
  const even = await client.modern('tools/call', { name: 'zod_refined', arguments: { even: 4 } });
  assert.equal(textOf(even.result), 'even 4');
});

test('a ToolResult is a whole result built by core; McpError is a JSON-RPC error', async () => {
  const image = await client.modern('tools/call', { name: 'image' });
  assert.deepEqual(image.result.content, [
    { type: 'text', text: 'an image:' },
    { type: 'image', data: 'AAAA', mimeType: 'image/png' },
  ]);
  const error = await client.modern('tools/call', { name: 'protocol_error' });
  assert.deepEqual(error.error, { code: -32602, message: 'nope', data: { why: 'test' } });
});

test('ctx carries the protocol version, client info and capabilities', async () => {
  const { result } = await client.modern('tools/call', { name: 'info' }, modernMeta({ sampling: {} }));
  assert.deepEqual(JSON.parse(textOf(result)), {
    method: 'tools/call',
    protocolVersion: '2026-07-28',
    clientInfo: { name: 'raw-client', version: '0.0.1' },
    clientCapabilities: { sampling: {} },
    headers: {},
  });
});

test('ctx.headers: the HTTP request headers, in both revisions', async () => {
  const server = new Server({ name: 'headers', version: '0' });
  server.tool('whoami', (_, ctx) => `${ctx.headers['x-tenant']} ${ctx.headers['mcp-method'] ?? '-'} ${ctx.protocolVersion}`);
  let url;
  const serving = server.serveHttp({ port: 0, handleSignals: false, onListening: (a) => (url = a.url) });
  const post = (body, headers = {}) =>
    fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'X-Tenant': 'acme', ...headers },
      body: JSON.stringify(body),
    });
  try {
    while (!url) await new Promise((r) => setTimeout(r, 5));
    const modern = await post(
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', _meta: modernMeta({}) } },
      { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'whoami' },
    );
    assert.equal(textOf((await modern.json()).result), 'acme tools/call 2026-07-28');
    const init = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } },
    });
    const session = init.headers.get('mcp-session-id');
    await init.text();
    const legacyHeaders = { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-11-25' };
    await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, legacyHeaders)).text();
    const legacy = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: {} } }, legacyHeaders);
    const text = await legacy.text();
    const message = legacy.headers.get('content-type')?.startsWith('text/event-stream')
      ? JSON.parse(text.split('\n').filter((l) => l.startsWith('data: ') && l.length > 6).pop().slice(6))
      : JSON.parse(text);
    assert.equal(textOf(message.result), 'acme - 2025-11-25');
  } finally {
    server.close();
    await serving;
  }
});

test('a throwing handler gives isError and the server keeps serving', async () => {
  const server = new Server({ name: 'throws', version: '0' });
  let calls = 0;
  server.tool('flaky', () => {
    calls += 1;
    if (calls === 1) throw new SyntaxError('first call fails');
    return 'second call works';
  });
  let url;
  const serving = server.serveHttp({ port: 0, handleSignals: false, onListening: (a) => (url = a.url) });
  try {
    while (!url) await new Promise((r) => setTimeout(r, 5));
    const first = await postMcp(url, 1, 'tools/call', { name: 'flaky' }, { name: 'flaky' });
    assert.equal(first.body.result.isError, true);
    assert.equal(textOf(first.body.result), 'SyntaxError: first call fails');
    const second = await postMcp(url, 2, 'tools/call', { name: 'flaky' }, { name: 'flaky' });
    assert.equal(textOf(second.body.result), 'second call works');
  } finally {
    server.close();
    await serving;
  }
});

test('serveHttp: host, port, path, allowedHosts and allowedOrigins', async () => {
  const server = new Server({ name: 'http-options', version: '0' });
  server.tool('ping', () => 'pong');
  let address;
  const serving = server.serveHttp({
    host: '127.0.0.1',
    port: 0,
    path: '/agents/mcp',
    allowedHosts: ['127.0.0.1', 'mcp.example'],
    allowedOrigins: ['https://app.example'],
    handleSignals: false,
    onListening: (a) => (address = a),
  });
  try {
    while (!address) await new Promise((r) => setTimeout(r, 5));
    assert.equal(address.url, `http://127.0.0.1:${address.port}/agents/mcp`);
    const ok = await postMcp(address.url, 1, 'tools/call', { name: 'ping' }, { name: 'ping' });
    assert.equal(textOf(ok.body.result), 'pong');
    const call = (headers) =>
      fetch(address.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': '2026-07-28',
          'Mcp-Method': 'server/discover',
          ...headers,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: modernMeta({}) } }),
      });
    assert.equal((await call({ Origin: 'https://app.example' })).status, 200);
    assert.equal((await call({ Origin: 'https://evil.example' })).status, 403);
    const wrongPath = await fetch(address.url.replace('/agents/mcp', '/mcp'), { method: 'POST' });
    assert.equal(wrongPath.status, 404);
  } finally {
    server.close();
    await serving;
  }
});

test('100 concurrent async tools sleeping 100 ms finish in about 100 ms', async () => {
  // The server runs in its own process, so the 100 fetches of this test
  // do not share its event loop.
  const child = spawn(process.execPath, ['bindings-node/test-support/sleep-server.mjs'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const [chunk] = await once(child.stdout, 'data');
    const url = chunk.toString().trim();
    const batch = (ms) =>
      Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          postMcp(url, i + 1, 'tools/call', { name: 'sleep', arguments: { ms } }, { name: 'sleep' }),
        ),
      );
    await batch(0); // warm up connections and code paths
    const started = performance.now();
    const answers = await batch(100);
    const elapsed = performance.now() - started;
    assert.ok(answers.every((a) => textOf(a.body.result) === 'slept'));
    // One after another they would take 10 s; well under 1 s means they
    // overlapped (measured ~250 ms on a loaded 2-core debug build).
    assert.ok(elapsed < 1000, `100 calls took ${elapsed.toFixed(0)} ms`);
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
});

test('HTTP: a client that hangs up aborts the handler signal', async () => {
  const server = new Server({ name: 'hangup', version: '0' });
  let aborted;
  const abortedOnce = new Promise((resolve) => (aborted = resolve));
  server.tool('wait', async (_, ctx) => {
    await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
    aborted(ctx.signal.reason?.kind);
    return 'never sent';
  });
  let url;
  const serving = server.serveHttp({ port: 0, handleSignals: false, onListening: (a) => (url = a.url) });
  try {
    while (!url) await new Promise((r) => setTimeout(r, 5));
    const controller = new AbortController();
    const call = fetch(url, {
      method: 'POST',
      signal: controller.signal,
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2026-07-28',
        'Mcp-Method': 'tools/call',
        'Mcp-Name': 'wait',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'wait', _meta: modernMeta({}) } }),
    }).catch((error) => error.name);
    await new Promise((r) => setTimeout(r, 200));
    controller.abort();
    assert.equal(await call, 'AbortError');
    const kind = await Promise.race([abortedOnce, new Promise((r) => setTimeout(() => r('timed out'), 5000))]);
    assert.equal(kind, 'cancelled');
  } finally {
    server.close();
    await serving;
  }
});
