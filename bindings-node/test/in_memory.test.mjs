// Client.inMemory(server): a client of a Server of this process over an
// in-memory pipe (core's Client::in_memory_with), the way to test a server
// with `node --test` and no socket. Tools sync and async, questions answered
// by the client's handlers, a task followed to its result, list changes,
// the client's options, closing, and the arguments refused.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { Client, Server, McpError } from '../index.mjs';
import native from '../native.js';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const nameSchema = { type: 'object', properties: { name: { type: 'string' } } };
const addSchema = {
  type: 'object',
  properties: { a: { type: 'number' }, b: { type: 'number' } },
  required: ['a', 'b'],
};

/** A fresh server per test: tests that add tools do not leak into others. */
function makeServer() {
  const server = new Server({ name: 'in-memory', version: '1.0.0' });
  server.tool('add', { inputSchema: addSchema }, ({ a, b }) => a + b);
  server.tool('later', { inputSchema: nameSchema }, async ({ name }) => {
    await sleep(5);
    return `later ${name}`;
  });
  server.tool('greet', async (_, ctx) => {
    const answer = await ctx.elicit({ mode: 'form', message: 'Name?', requestedSchema: nameSchema });
    return answer.action === 'accept' ? `hello ${answer.content?.name}` : `no name (${answer.action})`;
  });
  server.tool('render', { task: true }, async () => {
    await sleep(30);
    return 'rendered';
  });
  // Asks first, then becomes a task: its question goes over the pipe
  // before the task exists.
  server.tool('enrol', { task: 'required', taskStart: 'handler' }, async (_, ctx) => {
    const answer = await ctx.elicit({ mode: 'form', message: 'Name?', requestedSchema: nameSchema });
    const started = await ctx.startTask();
    await sleep(20);
    return `${answer.content?.name} enrolled, task=${started}`;
  });
  server.tool('stuck', (_, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve('aborted'))));
  return server;
}

/** Runs `body(client)` with a client of `server`, closing it however `body` ends. */
async function withClient(server, options, body) {
  const client = await Client.inMemory(server, options);
  try {
    return await body(client);
  } finally {
    await client.close();
  }
}

test('calls a sync and an async tool', async () => {
  await withClient(makeServer(), undefined, async (client) => {
    assert.ok(client instanceof Client);
    const sum = await client.callTool('add', { a: 2, b: 3 });
    assert.equal(sum.isError ?? false, false);
    assert.deepEqual(sum.content, [{ type: 'text', text: '5' }]);
    assert.equal((await client.callTool('later', { name: 'Ada' })).content[0].text, 'later Ada');
    // The 2026-07-28 era, detected over the pipe as over a socket.
    assert.equal(client.isLegacy, false);
    // Arguments are validated by the server as for any client.
    const bad = await client.callTool('add', { a: 'two' });
    assert.equal(bad.isError, true);
  });
});

test('a question of a tool is answered by the client handlers', async () => {
  const server = makeServer();
  server.tool('ask-all', async (_, ctx) => {
    const sampled = await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 });
    const { roots } = await ctx.listRoots();
    return `${sampled.content.text} ${roots.map((root) => root.name).join(',')}`;
  });
  const asked = [];
  const options = {
    onElicitation: async (params) => {
      asked.push(params.message);
      return { action: 'accept', content: { name: 'Ada' } };
    },
    onSampling: () => ({ role: 'assistant', content: { type: 'text', text: 'sampled' }, model: 'test' }),
    onRoots: () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }),
  };
  await withClient(server, options, async (client) => {
    assert.equal((await client.callTool('greet')).content[0].text, 'hello Ada');
    assert.deepEqual(asked, ['Name?']);
    assert.equal((await client.callTool('ask-all')).content[0].text, 'sampled work');
  });
  // Without a handler the client declares no elicitation: the tool's
  // question fails with -32021, an McpError the call rejects with.
  await withClient(server, undefined, async (client) => {
    await assert.rejects(client.callTool('greet'), (error) => error instanceof McpError && error.code === -32021);
  });
});

test('a tool that becomes a task is followed to its result', async () => {
  const onElicitation = () => ({ action: 'accept', content: { name: 'Grace' } });
  await withClient(makeServer(), { onElicitation }, async (client) => {
    // callTool follows the task to the tool's result.
    assert.equal((await client.callTool('render')).content[0].text, 'rendered');
    assert.equal((await client.callTool('enrol')).content[0].text, 'Grace enrolled, task=true');
    // A handle shows that it was a task indeed, with an id and a status.
    const task = await client.startToolTask('render');
    assert.equal(typeof task.id, 'string');
    assert.equal(task.state.status, 'working');
    const seen = [];
    const result = await task.result({ onState: (state) => seen.push(state.status) });
    assert.equal(result.content[0].text, 'rendered');
    assert.equal(seen.at(-1), 'completed');
    assert.equal((await client.toolTask(task.id).refresh()).status, 'completed');
  });
});

test('the listing changes when a tool is added, and listeners hear of it', async () => {
  const server = makeServer();
  await withClient(server, undefined, async (client) => {
    const names = async () => (await client.listTools()).tools.map((tool) => tool.name);
    const before = await names();
    assert.ok(!before.includes('fresh'));
    const subscription = client.listen({ toolsListChanged: true });
    assert.deepEqual(await subscription.acknowledged(), { toolsListChanged: true });
    server.tool('fresh', () => 'new');
    for await (const note of subscription) {
      assert.equal(note.method, 'notifications/tools/list_changed');
      break;
    }
    assert.deepEqual(await names(), [...before, 'fresh']);
    assert.equal((await client.callTool('fresh')).content[0].text, 'new');
    server.removeTool('fresh');
    assert.deepEqual(await names(), before);
  });
});

test('the client options apply: era, timeout', async () => {
  const server = makeServer();
  await withClient(server, { era: 'legacy', onElicitation: () => ({ action: 'decline' }) }, async (client) => {
    // The 2025-11-25 initialize handshake over the pipe, questions included.
    assert.equal((await client.callTool('greet')).content[0].text, 'no name (decline)');
    assert.equal(client.isLegacy, true);
  });
  await withClient(server, { timeout: 100 }, async (client) => {
    await assert.rejects(client.callTool('stuck'), (error) => error instanceof McpError && error.kind === 'timeout');
  });
});

test('closing the client ends it; other clients of the server go on', async () => {
  const server = makeServer();
  const other = await Client.inMemory(server);
  const client = await Client.inMemory(server);
  assert.equal((await client.callTool('add', { a: 1, b: 1 })).content[0].text, '2');
  await client.close();
  await assert.rejects(client.callTool('add', { a: 1, b: 1 }), (error) => error instanceof McpError && error.kind === 'closed');
  await assert.rejects(client.listTools(), (error) => error instanceof McpError && error.kind === 'closed');
  await client.close(); // again: nothing happens
  assert.equal((await other.callTool('add', { a: 2, b: 2 })).content[0].text, '4');
  await other.close();
});

test('anything but a Server of this package is a TypeError', async () => {
  const server = makeServer();
  const client = await Client.inMemory(server);
  try {
    const notServers = [
      undefined,
      null,
      {},
      'http://127.0.0.1:8000/mcp',
      client,
      Object.create(Server.prototype), // looks like one, holds no server
      new native.Server({ name: 'raw', version: '1' }, {}), // the native class, not the facade's
    ];
    for (const value of notServers) {
      await assert.rejects(Client.inMemory(value), (error) => {
        assert.ok(error instanceof TypeError, `${error}`);
        assert.match(error.message, /server must be a Server/);
        return true;
      });
    }
    // Options of a transport would be ignored: refused, naming the option.
    for (const [option, value] of [
      ['headers', { Authorization: 'Bearer x' }],
      ['command', 'node'],
      ['env', { A: '1' }],
      ['oauth', { grant: 'clientCredentials' }],
      ['tlsRoots', 'webpki'],
    ]) {
      await assert.rejects(Client.inMemory(server, { [option]: value }), (error) => {
        assert.ok(error instanceof TypeError, `${error}`);
        assert.match(error.message, new RegExp(`${option} is an option of a transport`));
        return true;
      });
    }
    await assert.rejects(Client.inMemory(server, 'fast'), TypeError);
    // A bad value of a shared option is refused as by the other factories.
    await assert.rejects(Client.inMemory(server, { era: 'future' }), /era/);
    await assert.rejects(Client.inMemory(server, { onElicitation: 'yes' }), /onElicitation must be a function/);
  } finally {
    await client.close();
  }
});
