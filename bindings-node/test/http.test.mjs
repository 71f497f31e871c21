// Streamable HTTP served in-process: serveHttp on a free port, requests with
// the 2026-07-28 headers, close() resolving the serve promise.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';

import { Server, McpError } from '../index.mjs';
import { postMcp } from '../test-support/helpers.mjs';

function echoAddServer() {
  return new Server({ name: 'ferromcp-echo', version: '1.0.0' })
    .tool(
      'echo',
      {
        description: 'Returns the text unchanged.',
        inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      },
      async ({ text }) => text,
    )
    .tool(
      'add',
      {
        description: 'Adds two integers.',
        inputSchema: {
          type: 'object',
          properties: { a: { type: 'integer' }, b: { type: 'integer' } },
          required: ['a', 'b'],
        },
        outputSchema: { type: 'object', properties: { result: { type: 'integer' } }, required: ['result'] },
      },
      ({ a, b }) => a + b,
    )
    .tool('throws', { inputSchema: { type: 'object' } }, () => {
      throw new RangeError('out of range');
    });
}

/** Starts serving on a free port; resolves once listening. */
function listen(server, options = {}) {
  return new Promise((resolve, reject) => {
    const served = server.serveHttp({ ...options, port: 0, onListening: (address) => resolve({ address, served }) });
    served.catch(reject);
  });
}

test('tools/list and tools/call over HTTP', async () => {
  const server = echoAddServer();
  const { address, served } = await listen(server);
  try {
    assert.equal(address.host, '127.0.0.1');
    assert.ok(address.port > 0);
    assert.equal(address.url, `http://127.0.0.1:${address.port}/mcp`);

    const list = await postMcp(address.url, 1, 'tools/list');
    assert.equal(list.status, 200);
    assert.match(list.type, /^application\/json/);
    assert.deepEqual(list.body.result.tools.map((tool) => tool.name), ['echo', 'add', 'throws']);

    const echo = await postMcp(address.url, 2, 'tools/call', { name: 'echo', arguments: { text: 'hi' } }, { name: 'echo' });
    assert.equal(echo.status, 200);
    assert.equal(echo.body.id, 2);
    assert.deepEqual(echo.body.result.content, [{ type: 'text', text: 'hi' }]);

    const add = await postMcp(address.url, 3, 'tools/call', { name: 'add', arguments: { a: 2, b: 3 } }, { name: 'add' });
    assert.deepEqual(add.body.result.structuredContent, { result: 5 });
    assert.deepEqual(add.body.result.content, [{ type: 'text', text: '5' }]);

    const failed = await postMcp(address.url, 4, 'tools/call', { name: 'throws', arguments: {} }, { name: 'throws' });
    assert.equal(failed.body.result.isError, true);
    assert.deepEqual(failed.body.result.content, [{ type: 'text', text: 'RangeError: out of range' }]);

    const after = await postMcp(address.url, 5, 'tools/call', { name: 'echo', arguments: { text: 'again' } }, { name: 'echo' });
    assert.deepEqual(after.body.result.content, [{ type: 'text', text: 'again' }]);

    // header rules are core's: a wrong Mcp-Name is rejected
    const mismatch = await postMcp(address.url, 6, 'tools/call', { name: 'echo', arguments: { text: 'x' } }, { name: 'add' });
    assert.equal(mismatch.status, 400);
    assert.equal(mismatch.body.error.code, -32020);
  } finally {
    server.close();
  }
  await served;
});

test('a custom path is served', async () => {
  const server = echoAddServer();
  const { address, served } = await listen(server, { path: '/rpc' });
  try {
    assert.equal(address.url, `http://127.0.0.1:${address.port}/rpc`);
    const list = await postMcp(address.url, 1, 'tools/list');
    assert.equal(list.status, 200);
  } finally {
    server.close();
  }
  await served;
});

test('binding a port in use rejects with McpError', async () => {
  const first = echoAddServer();
  const { address, served } = await listen(first);
  const second = echoAddServer();
  try {
    await assert.rejects(second.serveHttp({ port: address.port }), (error) => {
      assert.ok(error instanceof McpError, String(error));
      assert.ok(error instanceof Error);
      assert.equal(error.name, 'McpError');
      assert.equal(error.code, -32603);
      assert.equal(error.data.kind, 'io');
      assert.equal(error.kind, 'io');
      assert.equal(error.data.ioKind, 'AddrInUse');
      return true;
    });
  } finally {
    first.close();
  }
  await served;
});

test('close() resolves serveHttp and the server can serve again', async () => {
  const server = echoAddServer();
  const firstRun = await listen(server);
  server.close();
  await firstRun.served;

  const secondRun = await listen(server);
  const echo = await postMcp(secondRun.address.url, 1, 'tools/call', { name: 'echo', arguments: { text: 'back' } }, { name: 'echo' });
  assert.deepEqual(echo.body.result.content, [{ type: 'text', text: 'back' }]);
  server.close();
  await secondRun.served;
});

test('limits apply: a silent connection is closed at the header timeout', async () => {
  const server = echoAddServer();
  const { address, served } = await listen(server, { limits: { headerReadTimeout: 0.3, idle_timeout: 3600 } });
  try {
    const started = Date.now();
    await new Promise((resolve, reject) => {
      const silent = net.connect(address.port, '127.0.0.1');
      const timer = setTimeout(() => reject(new Error('the silent connection was kept')), 10_000);
      silent.on('close', () => {
        clearTimeout(timer);
        resolve();
      });
      silent.on('error', () => {});
      silent.resume();
    });
    assert.ok(Date.now() - started < 5_000);
    const echo = await postMcp(address.url, 1, 'tools/call', { name: 'echo', arguments: { text: 'hi' } }, { name: 'echo' });
    assert.equal(echo.status, 200);
  } finally {
    server.close();
  }
  await served;
});

test('bad limits throw, naming the member', () => {
  const server = echoAddServer();
  for (const [limits, message] of [
    [{ idleTimeout: 0 }, 'HTTP limit "idleTimeout" must be a positive number of seconds, got 0'],
    [{ maxConnections: 'many' }, 'HTTP limit "maxConnections" must be a positive integer, got "many"'],
    [{ maxConnectionsPerAddress: 1.5 }, 'HTTP limit "maxConnectionsPerAddress" must be a positive integer, got 1.5'],
    [{ idle: 1 }, 'unknown HTTP limit "idle"'],
  ]) {
    assert.throws(
      () => server.serveHttp({ port: 0, limits, handleSignals: false }),
      (error) => {
        assert.ok(error.message.includes(message), error.message);
        return true;
      },
    );
  }
});
