// server.nodeHandler() in node:http and Express, server.fetch() in Hono: the
// same protocol rules as serveHttp(), the bytes through the Rust core.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';

import express from 'express';
import { Hono } from 'hono';

import { Server } from '../index.mjs';
import { request as rpc } from '../test-support/helpers.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function makeServer() {
  const state = { cancelled: 0 };
  const server = new Server({ name: 'embedded', version: '1.0.0' })
    .tool(
      'echo',
      { inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
      ({ text }) => text,
    )
    .tool('steps', { inputSchema: { type: 'object', properties: { n: { type: 'integer' } } } }, async ({ n }, ctx) => {
      for (let i = 1; i <= n; i++) {
        ctx.progress(i, n, `step ${i}`);
        await sleep(50);
      }
      return `${n} steps`;
    })
    .tool('hang', { inputSchema: { type: 'object' } }, async (_args, ctx) => {
      ctx.progress(0, undefined, 'started');
      while (!ctx.cancelled) await sleep(10);
      state.cancelled += 1;
      return 'cancelled';
    });
  return { server, state };
}

function callBody(id, name, args, progressToken) {
  const params = { name, arguments: args };
  if (progressToken !== undefined) params._meta = { progressToken };
  return rpc(id, 'tools/call', params);
}

function mcpHeaders(name, host) {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/call',
    'mcp-name': name,
    ...(host ? { host } : {}),
  };
}

/** Listens on a free loopback port; resolves the port. */
function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

/**
 * POSTs with node:http (which, unlike fetch, lets a test choose `Host`);
 * resolves status, headers, and the body's chunks with their arrival times.
 */
function post(port, path, body, headers) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', headers }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push({ at: performance.now(), text: chunk.toString() }));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, chunks }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(typeof body === 'string' ? body : JSON.stringify(body));
  });
}

function sseMessages(text) {
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: {'))
    .map((line) => JSON.parse(line.slice('data: '.length)));
}

async function checkCallStreamAndGuard(port, path) {
  const echoed = await post(port, path, callBody(1, 'echo', { text: 'hi' }), mcpHeaders('echo'));
  assert.equal(echoed.status, 200);
  assert.equal(echoed.headers['content-type'], 'application/json');
  assert.deepEqual(JSON.parse(echoed.chunks.map((c) => c.text).join('')).result.content, [
    { type: 'text', text: 'hi' },
  ]);

  const streamed = await post(port, path, callBody(2, 'steps', { n: 3 }, 'p'), mcpHeaders('steps'));
  assert.equal(streamed.status, 200);
  assert.equal(streamed.headers['content-type'], 'text/event-stream');
  const messages = sseMessages(streamed.chunks.map((c) => c.text).join(''));
  assert.deepEqual(
    messages.slice(0, 3).map((m) => m.params.progress),
    [1, 2, 3],
  );
  assert.equal(messages[3].id, 2);
  assert.equal(messages[3].result.content[0].text, '3 steps');
  // Written event by event: the chunks arrived spread over the 150 ms.
  const dataChunks = streamed.chunks.filter((c) => c.text.includes('data: '));
  assert.ok(dataChunks.length >= 3, `${dataChunks.length} chunks`);
  assert.ok(dataChunks.at(-1).at - dataChunks[0].at >= 80, 'flushed per event');

  const refused = await post(port, path, callBody(3, 'echo', { text: 'x' }), mcpHeaders('echo', 'evil.example'));
  assert.equal(refused.status, 403);

  const mismatch = await post(port, path, callBody(4, 'echo', { text: 'x' }), mcpHeaders('other'));
  assert.equal(mismatch.status, 400);
  assert.equal(JSON.parse(mismatch.chunks.map((c) => c.text).join('')).error.code, -32020);
}

async function checkLegacySession(port, path) {
  const base = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = await post(
    port,
    path,
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'old', version: '1' } },
    },
    base,
  );
  assert.equal(init.status, 200);
  const session = init.headers['mcp-session-id'];
  assert.ok(session);
  const headers = { ...base, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
  const ack = await post(port, path, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  assert.equal(ack.status, 202);
  const called = await post(
    port,
    path,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'old' } } },
    headers,
  );
  assert.equal(called.status, 200);
  const text = called.chunks.map((c) => c.text).join('');
  const reply = called.headers['content-type'] === 'application/json' ? JSON.parse(text) : sseMessages(text).at(-1);
  assert.deepEqual(reply.result.content, [{ type: 'text', text: 'old' }]);
}

/** Opens a hanging call, reads its first event, hangs up; waits for the cancellation. */
async function checkHangUpCancels(port, path, state) {
  const before = state.cancelled;
  await new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path, method: 'POST', headers: mcpHeaders('hang') },
      (res) => {
        res.once('data', (chunk) => {
          assert.match(chunk.toString(), /started/);
          req.destroy();
          resolve(undefined);
        });
      },
    );
    req.on('error', () => {});
    req.end(JSON.stringify(callBody(9, 'hang', {}, 'h')));
    setTimeout(() => reject(new Error('no first event')), 10_000).unref();
  });
  const deadline = Date.now() + 10_000;
  while (state.cancelled === before) {
    assert.ok(Date.now() < deadline, 'the handler was not cancelled');
    await sleep(10);
  }
}

test('node:http serves through nodeHandler()', async () => {
  const { server, state } = makeServer();
  const httpServer = http.createServer(server.nodeHandler());
  const port = await listen(httpServer);
  try {
    await checkCallStreamAndGuard(port, '/mcp');
    await checkLegacySession(port, '/mcp');
    await checkHangUpCancels(port, '/mcp', state);
  } finally {
    httpServer.closeAllConnections();
    httpServer.close();
  }
});

test('nodeHandler({ path }) answers 404 elsewhere', async () => {
  const { server } = makeServer();
  const httpServer = http.createServer(server.nodeHandler({ path: '/mcp' }));
  const port = await listen(httpServer);
  try {
    const elsewhere = await post(port, '/other', callBody(1, 'echo', { text: 'x' }), mcpHeaders('echo'));
    assert.equal(elsewhere.status, 404);
  } finally {
    httpServer.closeAllConnections();
    httpServer.close();
  }
});

test('Express mounts nodeHandler(), with or without express.json()', async () => {
  const { server, state } = makeServer();
  const app = express();
  app.get('/health', (_req, res) => res.json({ ok: true }));
  app.all('/agents/mcp', server.nodeHandler());
  app.post('/parsed/mcp', express.json(), server.nodeHandler());
  const httpServer = http.createServer(app);
  const port = await listen(httpServer);
  try {
    const health = await fetch(`http://127.0.0.1:${port}/health`);
    assert.deepEqual(await health.json(), { ok: true });
    await checkCallStreamAndGuard(port, '/agents/mcp');
    await checkLegacySession(port, '/agents/mcp');
    await checkHangUpCancels(port, '/agents/mcp', state);
    // A body express.json() already read is handed over as parsed.
    const parsed = await post(port, '/parsed/mcp', callBody(5, 'echo', { text: 'parsed' }), mcpHeaders('echo'));
    assert.equal(parsed.status, 200);
    assert.equal(JSON.parse(parsed.chunks.map((c) => c.text).join('')).result.content[0].text, 'parsed');
  } finally {
    httpServer.closeAllConnections();
    httpServer.close();
  }
});

test('Hono routes to server.fetch()', async () => {
  const { server } = makeServer();
  const app = new Hono();
  app.get('/health', (c) => c.json({ ok: true }));
  app.all('/mcp', (c) => server.fetch(c.req.raw));
  assert.deepEqual(await (await app.request('/health')).json(), { ok: true });

  const echoed = await app.request('/mcp', {
    method: 'POST',
    headers: mcpHeaders('echo'),
    body: JSON.stringify(callBody(1, 'echo', { text: 'hono' })),
  });
  assert.equal(echoed.status, 200);
  assert.equal((await echoed.json()).result.content[0].text, 'hono');

  const streamed = await app.request('/mcp', {
    method: 'POST',
    headers: mcpHeaders('steps'),
    body: JSON.stringify(callBody(2, 'steps', { n: 3 }, 'p')),
  });
  assert.equal(streamed.headers.get('content-type'), 'text/event-stream');
  const reader = streamed.body.getReader();
  const decoder = new TextDecoder();
  const arrivals = [];
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const chunk = decoder.decode(value);
    if (chunk.includes('data: ')) arrivals.push(performance.now());
    text += chunk;
  }
  const messages = sseMessages(text);
  assert.deepEqual(
    messages.map((m) => m.method ?? 'result'),
    ['notifications/progress', 'notifications/progress', 'notifications/progress', 'result'],
  );
  assert.ok(arrivals.at(-1) - arrivals[0] >= 80, 'streamed event by event');

  const foreign = await app.request('http://evil.example/mcp', {
    method: 'POST',
    headers: mcpHeaders('echo'),
    body: JSON.stringify(callBody(3, 'echo', { text: 'x' })),
  });
  assert.equal(foreign.status, 403);

  const allowed = server.fetchHandler({ allowedHosts: ['api.example'] });
  const viaOptions = await allowed(
    new Request('http://api.example/mcp', {
      method: 'POST',
      headers: mcpHeaders('echo'),
      body: JSON.stringify(callBody(4, 'echo', { text: 'allowed' })),
    }),
  );
  assert.equal(viaOptions.status, 200);
  assert.equal((await viaOptions.json()).result.content[0].text, 'allowed');
});

test('CommonJS sees the same handlers', async () => {
  const { createRequire } = await import('node:module');
  const { Server: CjsServer } = createRequire(import.meta.url)('../index.js');
  assert.equal(CjsServer, Server);
  const server = new CjsServer({ name: 'cjs', version: '1.0.0' });
  assert.equal(typeof server.fetch, 'function');
  assert.equal(typeof server.nodeHandler(), 'function');
  assert.equal(typeof server.fetchHandler({ path: '/mcp' }), 'function');
  assert.throws(() => server.fetchHandler({ path: 'mcp' }), /path must start with/);
});
