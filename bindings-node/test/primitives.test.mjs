// Resources, resource templates, prompts and completion registered from JS
// (issue 13, "Server"): listings carry every decoration, reads and gets go
// through core's output rules, completers are routed per argument, a
// failing handler answers an error and the server keeps serving, and
// registration changes and notifyResourceUpdated reach subscriptions/listen.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { RawClient, modernMeta, textOf } from '../test-support/raw-client.mjs';

let client;
before(() => {
  client = new RawClient('bindings-node/test-support/primitives-server.mjs');
});
after(async () => {
  const { code } = await client.close();
  assert.equal(code, 0, client.stderr);
});

const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

test('resources/list carries title, icons, annotations, _meta and mimeType', async () => {
  const { result } = await client.modern('resources/list');
  const text = result.resources.find((r) => r.uri === 'mem://text');
  assert.deepEqual(text, {
    uri: 'mem://text',
    name: 'text',
    title: 'Some text',
    description: 'A text resource',
    mimeType: 'text/plain',
    icons: [{ src: 'https://example.com/t.png', mimeType: 'image/png' }],
    annotations: { audience: ['user'], priority: 0.5 },
    _meta: { 'example.com/owner': 'tests' },
  });
  // name defaults to the URI
  assert.equal(result.resources.find((r) => r.uri === 'mem://bytes').name, 'mem://bytes');
  const { result: templates } = await client.modern('resources/templates/list');
  assert.deepEqual(templates.resourceTemplates, [
    { uriTemplate: 'users://{id}/profile', name: 'profile', mimeType: 'application/json' },
  ]);
});

test('a resource handler returns text, bytes or contents items', async () => {
  const text = await client.modern('resources/read', { uri: 'mem://text' });
  assert.deepEqual(text.result.contents, [{ uri: 'mem://text', mimeType: 'text/plain', text: 'hello text' }]);
  const bytes = await client.modern('resources/read', { uri: 'mem://bytes' });
  assert.deepEqual(bytes.result.contents, [
    { uri: 'mem://bytes', mimeType: 'application/octet-stream', blob: Buffer.from([0, 1, 2, 255]).toString('base64') },
  ]);
  const items = await client.modern('resources/read', { uri: 'mem://items' });
  assert.deepEqual(items.result.contents, [{ uri: 'mem://items', text: 'one', mimeType: 'text/plain' }]);
});

test('cache hints: per resource registration, else server-wide by kind', async () => {
  const cached = await client.modern('resources/read', { uri: 'mem://cached' });
  assert.deepEqual([cached.result.ttlMs, cached.result.cacheScope], [60_000, 'private']);
  const plain = await client.modern('resources/read', { uri: 'mem://text' });
  assert.deepEqual([plain.result.ttlMs, plain.result.cacheScope], [5, 'public']);
  const tools = await client.modern('tools/list');
  assert.deepEqual([tools.result.ttlMs, tools.result.cacheScope], [1000, 'public']);
  const prompts = await client.modern('prompts/list');
  assert.equal(prompts.result.ttlMs, 0);
});

test('a template read gets the URI and its variables', async () => {
  const { result } = await client.modern('resources/read', { uri: 'users://42/profile' });
  assert.deepEqual(JSON.parse(result.contents[0].text), { uri: 'users://42/profile', id: '42' });
});

test('a failing resource handler is a JSON-RPC error and the server keeps serving', async () => {
  const failed = await client.modern('resources/read', { uri: 'mem://fails' });
  assert.equal(failed.error.code, -32603);
  assert.match(failed.error.message, /RangeError: resource broke/);
  const again = await client.modern('resources/read', { uri: 'mem://text' });
  assert.equal(again.result.contents[0].text, 'hello text');
});

test('prompts/list carries arguments, title and icons; completers are not sent', async () => {
  const { result } = await client.modern('prompts/list');
  const greet = result.prompts.find((p) => p.name === 'greet');
  assert.deepEqual(greet, {
    name: 'greet',
    title: 'Greeting',
    description: 'Greets someone',
    icons: [{ src: 'https://example.com/g.png' }],
    arguments: [{ name: 'name', description: 'Who', required: true }, { name: 'style' }],
  });
  const typed = result.prompts.find((p) => p.name === 'typed');
  assert.deepEqual(typed.arguments, [
    { name: 'topic', required: true, description: 'The topic' },
    { name: 'tone', required: false },
  ]);
});

test('prompts/get: a string, a message list, and zod-parsed arguments', async () => {
  const greet = await client.modern('prompts/get', { name: 'greet', arguments: { name: 'Ada' } });
  assert.deepEqual(greet.result.messages, [{ role: 'user', content: { type: 'text', text: 'Hello Ada' } }]);
  const messages = await client.modern('prompts/get', { name: 'messages' });
  assert.deepEqual(
    messages.result.messages.map((m) => [m.role, m.content.text]),
    [
      ['user', 'first'],
      ['assistant', 'second'],
    ],
  );
  const typed = await client.modern('prompts/get', { name: 'typed', arguments: { topic: 'rust' } });
  assert.equal(typed.result.messages[0].content.text, 'rust in a calm tone');
});

test('a failing prompt is a JSON-RPC error and the server keeps serving', async () => {
  const failed = await client.modern('prompts/get', { name: 'fails' });
  assert.match(failed.error.message, /Error: prompt broke/);
  const again = await client.modern('prompts/get', { name: 'greet', arguments: { name: 'Bo' } });
  assert.equal(again.result.messages[0].content.text, 'Hello Bo');
});

test('completion is routed to the argument or variable completer, else the fallback', async () => {
  const prompt = await client.modern('completion/complete', {
    ref: { type: 'ref/prompt', name: 'greet' },
    argument: { name: 'name', value: 'A' },
  });
  assert.deepEqual(prompt.result.completion, { values: ['Ada', 'Alan'], total: 2, hasMore: false });
  const variable = await client.modern('completion/complete', {
    ref: { type: 'ref/resource', uri: 'users://{id}/profile' },
    argument: { name: 'id', value: '42' },
  });
  assert.deepEqual(variable.result.completion.values, ['42', '420']);
  const fallback = await client.modern('completion/complete', {
    ref: { type: 'ref/prompt', name: 'greet' },
    argument: { name: 'style', value: '' },
  });
  assert.deepEqual(fallback.result.completion.values, ['fallback:style']);
  // core checks the reference before any completer runs
  const unknown = await client.modern('completion/complete', {
    ref: { type: 'ref/prompt', name: 'nope' },
    argument: { name: 'x', value: '' },
  });
  assert.equal(unknown.error.code, -32602);
});

test('server/discover declares resources, prompts and completions', async () => {
  const { result } = await client.modern('server/discover');
  assert.ok(result.capabilities.resources, JSON.stringify(result.capabilities));
  assert.ok(result.capabilities.prompts);
  assert.ok(result.capabilities.completions);
});

test('a registration change and notifyResourceUpdated reach subscriptions/listen', async () => {
  const listenId = client.nextId();
  const listening = client.request(
    'subscriptions/listen',
    {
      notifications: { promptsListChanged: true, resourceSubscriptions: ['mem://text'] },
      _meta: modernMeta(),
    },
    listenId,
  );
  for (let i = 0; i < 100 && !client.notifications.some((n) => n.method === 'notifications/subscriptions/acknowledged'); i++) {
    await wait(10);
  }
  assert.equal(textOf((await client.modern('tools/call', { name: 'add_prompt' })).result), 'added');
  assert.equal(textOf((await client.modern('tools/call', { name: 'touch' })).result), 'touched');
  for (let i = 0; i < 100 && client.notifications.length < 3; i++) await wait(10);
  const seen = client.notifications.map((n) => [n.method, n.params?.uri]);
  assert.deepEqual(seen, [
    ['notifications/subscriptions/acknowledged', undefined],
    ['notifications/prompts/list_changed', undefined],
    ['notifications/resources/updated', 'mem://text'],
  ]);
  client.write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: listenId } });
  void listening.catch(() => {});
});

test('removeResource removes a template (announced as list_changed by core)', async () => {
  assert.equal(textOf((await client.modern('tools/call', { name: 'drop_template' })).result), 'true false');
  const { result } = await client.modern('resources/templates/list');
  assert.deepEqual(result.resourceTemplates, []);
  const read = await client.modern('resources/read', { uri: 'users://42/profile' });
  assert.equal(read.error.code, -32602);
});
