// The Node client (lib/client.js over src/client.rs) against the Rust
// everything-server (target/bin/everything-server, from `make cargo-build`)
// and the Node test server (test-support/client-server.mjs), over stdio and
// HTTP, in both protocol eras.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';

import { Client, McpError, PROTOCOL_VERSION, LEGACY_PROTOCOL_VERSIONS } from '../index.mjs';
import { REPO_ROOT } from '../test-support/helpers.mjs';

const RUST_SERVER = path.join(REPO_ROOT, 'target/bin/everything-server');
const NODE_SERVER = path.join(REPO_ROOT, 'bindings-node/test-support/client-server.mjs');
const noRust = existsSync(RUST_SERVER) ? false : 'target/bin/everything-server missing (make cargo-build)';

/** @param {AsyncIterable<any>} iterable */
async function all(iterable) {
  const items = [];
  for await (const item of iterable) items.push(item);
  return items;
}

const handlers = {
  onElicitation: async (params) => ({
    action: 'accept',
    content: Object.fromEntries(
      Object.keys(params.requestedSchema?.properties ?? {}).map((k) => [k, k === 'email' ? 'a@b.c' : 'Ada']),
    ),
  }),
  onSampling: (params) => ({
    role: 'assistant',
    content: { type: 'text', text: `echo ${params.messages[0].content.text}` },
    model: 'test-model',
  }),
  onRoots: () => ({ roots: [{ uri: 'file:///root', name: 'root' }] }),
};

function rustStdio(era = 'auto') {
  return Client.stdio({ command: RUST_SERVER, args: ['--stdio'], era, ...handlers });
}

function nodeStdio(era = 'auto') {
  return Client.stdio({ command: process.execPath, args: [NODE_SERVER], era, ...handlers });
}

async function freePort() {
  const probe = createServer();
  await new Promise((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = /** @type {import('node:net').AddressInfo} */ (probe.address());
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Starts the Rust everything-server over HTTP; resolves with its URL and a stop function. */
async function rustHttp(t) {
  const port = await freePort();
  const child = spawn(RUST_SERVER, [String(port)], { stdio: ['ignore', 'ignore', 'pipe'] });
  t.after(() => child.kill());
  const url = `http://127.0.0.1:${port}/mcp`;
  for (let i = 0; i < 100; i++) {
    const up = await fetch(url, { method: 'GET' }).then(() => true, () => false);
    if (up) return url;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('everything-server did not start');
}

/** Starts the Node test server over HTTP; resolves with its URL. */
async function nodeHttp(t) {
  const child = spawn(process.execPath, [NODE_SERVER, '--http'], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => child.kill());
  const lines = createInterface({ input: child.stdout });
  for await (const line of lines) return line.trim();
  throw new Error('the Node test server printed no URL');
}

test('exports the protocol revisions', () => {
  assert.equal(PROTOCOL_VERSION, '2026-07-28');
  assert.ok(LEGACY_PROTOCOL_VERSIONS.includes('2025-11-25'));
  assert.throws(() => new Client(/** @type {any} */ ({})), TypeError);
});

for (const era of ['auto', 'legacy']) {
  test(`every method against the Rust everything-server over stdio (era ${era})`, { skip: noRust }, async () => {
    const client = await rustStdio(era);
    try {
      const found = await client.discover();
      // 2026-07-28 names the server in `_meta`; initialize in `serverInfo`.
      const info = found.serverInfo ?? found._meta?.['io.modelcontextprotocol/serverInfo'];
      assert.equal(info?.name, 'ferromcp-everything-server');
      assert.ok(found.capabilities?.tools);
      assert.equal(client.isLegacy, era === 'legacy');

      const page = await client.listTools();
      const tools = await all(client.tools());
      assert.ok(tools.length > 20);
      assert.deepEqual(tools.map((t) => t.name), page.tools.map((t) => t.name));
      assert.ok(tools.some((t) => t.name === 'test_simple_text'));

      const resources = await all(client.resources());
      assert.ok(resources.some((r) => r.uri === 'test://static-text'));
      const templates = await all(client.resourceTemplates());
      assert.ok(templates.some((r) => r.uriTemplate === 'test://template/{id}/data'));
      const prompts = await all(client.prompts());
      assert.ok(prompts.some((p) => p.name === 'test_prompt_with_arguments'));
      assert.equal((await client.listPrompts()).prompts.length, prompts.length);
      assert.equal((await client.listResources()).resources.length, resources.length);
      assert.equal((await client.listResourceTemplates()).resourceTemplates.length, templates.length);

      const text = await client.callTool('test_simple_text');
      assert.equal(text.content[0].type, 'text');
      assert.notEqual(text.isError, true);

      const failed = await client.callTool('test_error_handling');
      assert.equal(failed.isError, true);

      const updates = [];
      const progressed = await client.callTool('test_tool_with_progress', {}, { onProgress: (u) => updates.push(u) });
      // Every update arrives, in order, before the call settles.
      assert.deepEqual(updates.map((u) => u.progress), [0, 50, 100]);
      assert.equal(updates[0].total, 100);
      assert.equal(updates[0].message, 'step 1');
      assert.equal(progressed.content[0].text, 'Progress test completed');

      const elicited = await client.callTool('test_elicitation', { message: 'who?' });
      assert.match(elicited.content[0].text, /action=accept/);
      const sampled = await client.callTool('test_sampling', { prompt: 'ping' });
      assert.match(sampled.content[0].text, /echo ping/);

      const read = await client.readResource('test://static-text');
      assert.equal(read.contents[0].uri, 'test://static-text');
      assert.equal(typeof read.contents[0].text, 'string');

      const prompt = await client.getPrompt('test_prompt_with_arguments', { arg1: 'x', arg2: 'y' });
      assert.match(prompt.messages[0].content.text, /arg1='x', arg2='y'/);

      const completed = await client.complete({
        ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
        argument: { name: 'arg1', value: '' },
      });
      assert.ok(Array.isArray(completed.completion.values));

      await assert.rejects(client.callTool('no_such_tool'), (error) => {
        assert.ok(error instanceof McpError);
        assert.equal(error.kind, 'peerError');
        assert.equal(typeof error.code, 'number');
        return true;
      });
    } finally {
      await client.close();
    }
  });
}

for (const era of ['modern', 'legacy']) {
  test(`elicitation, sampling and roots over HTTP (era ${era})`, { skip: noRust }, async (t) => {
    const url = await rustHttp(t);
    const client = await Client.http(url, { era, ...handlers });
    try {
      const elicited = await client.callTool('test_elicitation', { message: 'who?' });
      assert.match(elicited.content[0].text, /action=accept/);
      assert.match(elicited.content[0].text, /Ada/);
      const sampled = await client.callTool('test_sampling', { prompt: 'ping' });
      assert.match(sampled.content[0].text, /echo ping/);
      assert.equal(client.isLegacy, era === 'legacy');
    } finally {
      await client.close();
    }
  });
}

test('HTTP headers are sent with every request', { skip: noRust }, async (t) => {
  const url = await rustHttp(t);
  const client = await Client.http(url, { headers: { 'X-Test-Header': 'from-node' } });
  try {
    const tools = await all(client.tools());
    assert.ok(tools.length > 0);
  } finally {
    await client.close();
  }
});

for (const era of ['modern', 'legacy']) {
  test(`a Node server's ctx.elicit/listRoots/sample reach sync and async handlers (era ${era})`, async () => {
    const client = await nodeStdio(era);
    try {
      const result = await client.callTool('ask');
      assert.deepEqual(JSON.parse(result.content[0].text), {
        action: 'accept',
        name: 'Ada',
        roots: ['file:///root'],
        sampled: 'echo hi',
      });
    } finally {
      await client.close();
    }
  });
}

for (const era of ['modern', 'legacy']) {
test(`a throwing handler fails that call only (era ${era})`, async () => {
  const client = await Client.stdio({
    command: process.execPath,
    args: [NODE_SERVER],
    era,
    onElicitation: async () => {
      throw new Error('no user here');
    },
    onRoots: handlers.onRoots,
    onSampling: handlers.onSampling,
  });
  try {
    if (era === 'modern') {
      // The client runs the input rounds itself: the call fails here.
      await assert.rejects(client.callTool('ask'), /the elicitation handler failed: Error: no user here/);
    } else {
      // The server asked over the session and got a JSON-RPC error back;
      // its ctx.elicit() threw that McpError, which its tool rethrew.
      await assert.rejects(client.callTool('ask'), (error) => {
        assert.ok(error instanceof McpError);
        assert.equal(error.kind, 'peerError');
        assert.match(error.message, /no user here/);
        return true;
      });
    }
    // The client keeps working.
    assert.equal((await client.callTool('t1')).content[0].text, 't1');
  } finally {
    await client.close();
  }
});
}

test('pages: one page with a cursor, and iteration over every page', async () => {
  const client = await nodeStdio();
  try {
    const first = await client.listTools();
    assert.equal(first.tools.length, 2);
    assert.equal(typeof first.nextCursor, 'string');
    const second = await client.listTools({ cursor: first.nextCursor });
    assert.equal(second.tools.length, 2);
    assert.notDeepEqual(second.tools, first.tools);
    const names = (await all(client.tools())).map((t) => t.name);
    assert.equal(names.length, 10); // t1..t5, wait, aborted, register, ask, progress
    assert.equal(new Set(names).size, names.length);
    assert.deepEqual(names.slice(0, 4), [...first.tools, ...second.tools].map((t) => t.name));
    // Breaking out early fetches no further page and leaves the client usable.
    for await (const tool of client.tools()) {
      assert.equal(tool.name, first.tools[0].name);
      break;
    }
    assert.equal((await client.listTools()).tools.length, 2);
  } finally {
    await client.close();
  }
});

for (const transport of ['stdio', 'http']) {
  test(`aborting a call cancels the server handler (${transport})`, async (t) => {
    const client = transport === 'stdio' ? await nodeStdio() : await Client.http(await nodeHttp(t));
    try {
      const controller = new AbortController();
      // The timeout only bounds the test if cancellation were broken.
      const pending = client.callTool('wait', {}, { signal: controller.signal, timeout: 5_000 });
      // Abort once the handler runs (a slow start must not make the
      // cancellation arrive first).
      const counts = async () => JSON.parse((await client.callTool('aborted')).content[0].text);
      for (let i = 0; i < 200 && (await counts()).started === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      assert.equal((await counts()).started, 1);
      controller.abort();
      await assert.rejects(pending, (error) => {
        assert.ok(error instanceof McpError);
        assert.equal(error.kind, 'cancelled');
        return true;
      });
      let aborted = 0;
      for (let i = 0; i < 200 && aborted === 0; i++) {
        aborted = (await counts()).aborted;
        if (aborted === 0) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      assert.equal(aborted, 1, "the server handler's signal was not aborted");

      // A signal aborted before the call never runs it.
      await assert.rejects(client.callTool('t1', {}, { signal: AbortSignal.abort() }), { kind: 'cancelled' });
    } finally {
      await client.close();
    }
  });
}

test('timeout rejects with kind "timeout"', async () => {
  const client = await nodeStdio();
  try {
    await assert.rejects(client.callTool('wait', {}, { timeout: 200 }), (error) => {
      assert.ok(error instanceof McpError);
      assert.equal(error.kind, 'timeout');
      return true;
    });
  } finally {
    await client.close();
  }
});

test('progress from a Node server', async () => {
  const client = await nodeStdio();
  try {
    const updates = [];
    await client.callTool('progress', {}, { onProgress: (u) => updates.push(u) });
    assert.deepEqual(updates, [
      { progress: 1, total: 3, message: 'step 1' },
      { progress: 2, total: 3, message: 'step 2' },
      { progress: 3, total: 3, message: 'step 3' },
    ]);
  } finally {
    await client.close();
  }
});

test('readResource, getPrompt and complete against a Node server', async () => {
  const client = await nodeStdio();
  try {
    const read = await client.readResource('mem://counter');
    assert.deepEqual(read.contents[0], { uri: 'mem://counter', mimeType: 'text/plain', text: 'count=1' });
    const prompt = await client.getPrompt('greet', { name: 'Ada' });
    assert.equal(prompt.messages[0].content.text, 'Hello, Ada!');
    const completed = await client.complete({ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'name', value: 'al' } });
    assert.deepEqual(completed.completion.values, ['alice', 'albert']);
  } finally {
    await client.close();
  }
});

for (const transport of ['stdio', 'http']) {
  test(`listen delivers list changed and resource updated notifications (${transport})`, async (t) => {
    const client = transport === 'stdio' ? await nodeStdio() : await Client.http(await nodeHttp(t));
    try {
      const subscription = client.listen({ toolsListChanged: true, resourceSubscriptions: ['mem://counter'] });
      const acknowledged = await subscription.acknowledged();
      assert.equal(acknowledged.toolsListChanged, true);
      await client.callTool('register');
      const seen = new Set();
      for await (const note of subscription) {
        seen.add(note.method);
        if (note.method === 'notifications/resources/updated') assert.equal(note.params.uri, 'mem://counter');
        if (seen.size === 2) break;
      }
      assert.deepEqual([...seen].sort(), ['notifications/resources/updated', 'notifications/tools/list_changed']);
      // Breaking out closed it; the client still works.
      assert.ok((await all(client.tools())).some((tool) => tool.name === 'late'));
    } finally {
      await client.close();
    }
  });
}

test('invalid arguments throw before anything is sent', async () => {
  await assert.rejects(Client.stdio(/** @type {any} */ ({})), TypeError);
  await assert.rejects(Client.stdio({ command: process.execPath, args: [NODE_SERVER], era: /** @type {any} */ ('future') }), /"era" must be/);
  await assert.rejects(Client.stdio({ command: process.execPath, args: [NODE_SERVER], onRoots: /** @type {any} */ (42) }), TypeError);
});

test('a server that cannot be started rejects with an McpError', async () => {
  await assert.rejects(Client.stdio({ command: '/nonexistent/server' }), (error) => {
    assert.ok(error instanceof McpError);
    assert.equal(error.kind, 'io');
    return true;
  });
});
