// How JS handlers finish: values, promises, throws and rejections. A failing
// handler yields an isError result (or, for McpError, a JSON-RPC error) and
// the server keeps answering the next call.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { StdioClient } from '../test-support/helpers.mjs';

let client;
before(() => {
  client = new StdioClient('bindings-node/test-support/handlers-server.mjs');
});
after(async () => {
  const { code } = await client.close();
  assert.equal(code, 0, client.stderr);
  assert.deepEqual(client.stray, []);
});

const textOf = (result) => result.content.map((block) => block.text).join('');

test('a plain return value becomes a text result', async () => {
  const result = await client.callTool('echo', { text: 'plain' });
  assert.equal(textOf(result), 'plain');
  assert.notEqual(result.isError, true);
});

test('an async handler is awaited', async () => {
  const result = await client.callTool('async_echo', { text: 'later' });
  assert.equal(textOf(result), 'async later');
  assert.notEqual(result.isError, true);
});

test('a returned promise is awaited', async () => {
  const result = await client.callTool('promise_echo', { text: 'then' });
  assert.equal(textOf(result), 'THEN');
});

test('a throwing handler gives isError and the next call still succeeds', async () => {
  const failed = await client.callTool('throws', {});
  assert.equal(failed.isError, true);
  assert.equal(textOf(failed), 'TypeError: boom');

  const next = await client.callTool('echo', { text: 'still here' });
  assert.equal(textOf(next), 'still here');
  assert.notEqual(next.isError, true);
});

test('a rejecting handler gives isError and the next call still succeeds', async () => {
  const failed = await client.callTool('rejects', {});
  assert.equal(failed.isError, true);
  assert.equal(textOf(failed), 'QuotaError: over quota');

  const next = await client.callTool('async_echo', { text: 'again' });
  assert.equal(textOf(next), 'async again');
  assert.notEqual(next.isError, true);
});

test('throwing or rejecting with a non-Error is named Error', async () => {
  assert.equal(textOf(await client.callTool('throws_string', {})), 'Error: plain');
  const rejected = await client.callTool('rejects_plain', {});
  assert.equal(rejected.isError, true);
  assert.equal(textOf(rejected), 'Error: plain reason');
});

test('a thrown McpError becomes a JSON-RPC error', async () => {
  const response = await client.send('tools/call', { name: 'mcp_error', arguments: {} });
  assert.equal(response.result, undefined);
  assert.deepEqual(response.error, { code: -32002, message: 'nope', data: { why: 'missing' } });
  assert.equal(textOf(await client.callTool('echo', { text: 'ok' })), 'ok');
});

test('objects pass straight through as structuredContent, integers stay integers', async () => {
  const result = await client.callTool('structured', {});
  assert.deepEqual(result.structuredContent, { greeting: 'hi', big: 2 ** 40, half: 0.5 });
  // the text mirror is the JSON of structuredContent: 2**40 must not read "1099511627776.0"
  assert.match(textOf(result), /"big":1099511627776[,}]/);
});

test('undefined gives empty content; a value with no JSON form is a tool error', async () => {
  const nothing = await client.callTool('nothing', {});
  assert.deepEqual(nothing.content, []);
  assert.notEqual(nothing.isError, true);

  const notJson = await client.callTool('not_json', {});
  assert.equal(notJson.isError, true);
  assert.match(textOf(notJson), /^TypeError: /);
});

test('the handler sees its request context', async () => {
  const result = await client.callTool('context', {});
  const seen = result.structuredContent ?? JSON.parse(textOf(result));
  assert.equal(typeof seen.requestId, 'number');
  assert.equal(seen.method, 'tools/call');
  assert.equal(seen.protocolVersion, '2026-07-28');
  assert.equal(seen.cancelled, false);
  assert.equal(seen.isContext, true);
  // no progressToken in the request, so no progress notification
  assert.equal(seen.progressSent, false);
});

test('concurrent calls are answered independently', async () => {
  const texts = Array.from({ length: 25 }, (_, i) => `n${i}`);
  const results = await Promise.all(
    texts.map((text, i) => client.callTool(i % 2 ? 'async_echo' : 'echo', { text })),
  );
  assert.deepEqual(
    results.map(textOf),
    texts.map((text, i) => (i % 2 ? `async ${text}` : text)),
  );
});

test('progress and log notifications reach the client when asked for', async () => {
  const before = client.notifications.length;
  const response = await client.send('tools/call', {
    name: 'progress',
    arguments: {},
    _meta: { progressToken: 'p1', 'io.modelcontextprotocol/logLevel': 'info' },
  });
  assert.deepEqual(response.result.structuredContent ?? JSON.parse(textOf(response.result)), {
    first: true,
    second: true,
    logged: true,
  });
  const sent = client.notifications.slice(before);
  assert.deepEqual(
    sent.map((n) => n.method),
    ['notifications/progress', 'notifications/progress', 'notifications/message'],
  );
  assert.deepEqual(sent[0].params, { progressToken: 'p1', progress: 1, total: 2, message: 'halfway' });
  assert.deepEqual(sent[2].params, { level: 'warning', logger: 'progress-tool', data: { note: 'almost done' } });
});

test('a context used after its call ends is inert', async () => {
  assert.equal(textOf(await client.callTool('late_context', {})), 'ok');
  // the fixture sets a non-zero exit code if the late context misbehaved,
  // which the after() hook checks
  await new Promise((resolve) => setTimeout(resolve, 50));
});
