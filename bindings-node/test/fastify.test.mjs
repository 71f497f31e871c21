// server.nodeHandler() mounted in a Fastify app: a call through it, and the
// core's protocol rules (Host / Origin checks, JSON-RPC parse errors)
// applied as by serveHttp(), while the rest of the app keeps Fastify's own
// body parsing.
//
// The mount: Fastify parses bodies before its handlers run, so the MCP route
// lives in a plugin (an encapsulated context) whose content-type parser
// leaves the body unread for core; `reply.hijack()` tells Fastify that the
// handler writes the response itself.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import Fastify from 'fastify';

import { Server } from '../index.mjs';

function makeServer() {
  return new Server({ name: 'fastify-mounted', version: '1.0.0' }).tool(
    'echo',
    { inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
    ({ text }) => text,
  );
}

const call = (id, text) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: {
      name: 'echo',
      arguments: { text },
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'fastify-test', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  });

const headers = (extra = {}) => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'echo',
  ...extra,
});

async function startApp() {
  const mcp = makeServer().nodeHandler();
  const app = Fastify();
  // Elsewhere in the app, Fastify parses JSON as usual.
  app.post('/api/sum', async (request) => ({ sum: request.body.a + request.body.b }));
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    scope.all('/mcp', (request, reply) => {
      reply.hijack();
      return mcp(request.raw, reply.raw);
    });
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address();
  return { app, url: `http://127.0.0.1:${port}` };
}

test('Fastify mounts nodeHandler(): a tool call goes through', async () => {
  const { app, url } = await startApp();
  try {
    const reply = await fetch(`${url}/mcp`, { method: 'POST', headers: headers(), body: call(1, 'via fastify') });
    assert.equal(reply.status, 200);
    assert.equal(reply.headers.get('content-type'), 'application/json');
    const body = await reply.json();
    assert.equal(body.id, 1);
    assert.deepEqual(body.result.content, [{ type: 'text', text: 'via fastify' }]);

    // The app's own JSON routes are untouched by the MCP scope's parser.
    const sum = await fetch(`${url}/api/sum`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ a: 2, b: 3 }),
    });
    assert.deepEqual(await sum.json(), { sum: 5 });
  } finally {
    await app.close();
  }
});

test('Fastify mount applies the protocol rules of serveHttp()', async () => {
  const { app, url } = await startApp();
  try {
    // A browser page from another site: refused before any handler runs.
    const foreign = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: headers({ origin: 'https://evil.example' }),
      body: call(2, 'x'),
    });
    assert.equal(foreign.status, 403);
    await foreign.arrayBuffer();

    // The same request from a local page is served.
    const local = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: headers({ origin: url }),
      body: call(3, 'local'),
    });
    assert.equal(local.status, 200);
    assert.equal((await local.json()).result.content[0].text, 'local');

    // The body reaches core unparsed: malformed JSON gets core's JSON-RPC
    // parse error, not a Fastify error page.
    const malformed = await fetch(`${url}/mcp`, { method: 'POST', headers: headers(), body: '{"jsonrpc":' });
    assert.equal(malformed.status, 400);
    assert.equal((await malformed.json()).error.code, -32700);

    // Mcp-Name must match the body's tool name.
    const mismatch = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: headers({ 'mcp-name': 'other' }),
      body: call(4, 'x'),
    });
    assert.equal(mismatch.status, 400);
    assert.equal((await mismatch.json()).error.code, -32020);
  } finally {
    await app.close();
  }
});
