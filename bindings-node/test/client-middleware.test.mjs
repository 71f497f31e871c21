// Client middleware (`client.use`): JS links in core's client chain
// (`Client::add_middleware`) around every request the client sends, in
// order; changing params, `_meta` and the timeout on the way out and the
// result on the way back; answering alone; failing the call with an
// McpError's code, or as an internal error for anything else thrown; a
// link awaiting other calls of the same client. In memory and over HTTP,
// in both protocol eras. Which requests go through the chain is core's
// (core/tests/client_middleware.rs); these tests show the binding carries
// JS links, `next` and the outcomes across without blocking either side.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { Server, Client, McpError, codes } from '../index.mjs';

const ERAS = ['modern', 'legacy'];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A server whose `echo` tool answers with its arguments as JSON, and counts its calls. */
function makeServer() {
  const server = new Server({ name: 'client-middleware', version: '1.0.0' });
  const served = { calls: 0 };
  server.tool('echo', { inputSchema: { type: 'object' } }, (args) => {
    served.calls += 1;
    return JSON.stringify(args);
  });
  server.tool('slow', { inputSchema: { type: 'object' } }, async () => {
    await sleep(300);
    return 'slow done';
  });
  server.prompt('greet', { arguments: [{ name: 'who', required: true }] }, ({ who }) => `hello ${who}`);
  server.resource('mem://note', { name: 'note' }, () => 'a note');
  return { server, served };
}

/** Runs `body(client)` with an in-memory client of `server`, closing it however `body` ends. */
async function withClient(server, options, body) {
  const client = await Client.inMemory(server, options);
  try {
    return await body(client);
  } finally {
    await client.close();
  }
}

/** The rejection of `promise` (which must reject). */
async function rejection(promise) {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('expected a rejection');
}

/** The arguments the echo tool received, from its result. */
const echoed = (result) => JSON.parse(result.content[0].text);

for (const era of ERAS) {
  test(`${era}: links run in order, around every kind of request`, async () => {
    const { server } = makeServer();
    const seen = [];
    await withClient(server, { era }, async (client) => {
      const returned = client
        .use(async (ctx, next) => {
          seen.push(`first> ${ctx.method} ${ctx.name ?? '-'}`);
          const result = await next(ctx);
          seen.push('first<');
          return result;
        })
        .use(async (ctx, next) => {
          seen.push(`second> ${ctx.method}`);
          const result = await next(ctx);
          seen.push('second<');
          return result;
        });
      assert.equal(returned, client, 'use() returns the client, for chaining');

      assert.deepEqual(echoed(await client.callTool('echo', { text: 'hi' })), { text: 'hi' });
      assert.deepEqual(seen, ['first> tools/call echo', 'second> tools/call', 'second<', 'first<']);

      seen.length = 0;
      await client.listTools();
      await client.readResource('mem://note');
      const prompt = await client.getPrompt('greet', { who: 'you' });
      assert.equal(prompt.messages[0].content.text, 'hello you');
      const tools = [];
      for await (const tool of client.tools()) tools.push(tool.name);
      assert.deepEqual(tools.sort(), ['echo', 'slow']);
      const outward = seen.filter((line) => line.startsWith('first>'));
      assert.deepEqual(outward, [
        'first> tools/list -',
        'first> resources/read -',
        'first> prompts/get greet',
        'first> tools/list -',
      ]);
      assert.equal(seen.filter((line) => line === 'first<').length, 4);
    });
  });

  test(`${era}: changed params reach the server, a changed result the caller`, async () => {
    const { server } = makeServer();
    await withClient(server, { era }, async (client) => {
      client.use(async (ctx, next) => {
        if (ctx.name === 'echo') ctx.params.arguments.addedBy = 'link';
        if (ctx.method === 'prompts/get') ctx.params = { ...ctx.params, arguments: { who: 'middleware' } };
        const result = await next(ctx);
        if (ctx.method === 'resources/read') {
          return { ...result, contents: [{ uri: 'mem://note', text: 'replaced on the way back' }] };
        }
        return result;
      });
      assert.deepEqual(echoed(await client.callTool('echo', { text: 'hi' })), { text: 'hi', addedBy: 'link' });
      const prompt = await client.getPrompt('greet', { who: 'you' });
      assert.equal(prompt.messages[0].content.text, 'hello middleware');
      const read = await client.readResource('mem://note');
      assert.equal(read.contents[0].text, 'replaced on the way back');
    });
  });

  test(`${era}: a link answers alone; McpError and other throws fail the call`, async () => {
    const { server, served } = makeServer();
    await withClient(server, { era }, async (client) => {
      client.use(async (ctx, next) => {
        if (ctx.name === 'cached') return { content: [{ type: 'text', text: 'from the cache' }] };
        if (ctx.name === 'refused') throw new McpError('refused by the client', { code: -32001, data: { why: 'policy' } });
        if (ctx.name === 'buggy') throw new RangeError('the link has a bug');
        if (ctx.name === 'nothing') return undefined;
        return next(ctx);
      });
      const cached = await client.callTool('cached', {});
      assert.equal(cached.content[0].text, 'from the cache');
      assert.equal(served.calls, 0, 'a short-circuit sends nothing');

      const refused = await rejection(client.callTool('refused', {}));
      assert.ok(refused instanceof McpError);
      assert.equal(refused.code, -32001);
      assert.equal(refused.message, 'refused by the client');
      assert.deepEqual(refused.data, { why: 'policy' });

      const buggy = await rejection(client.callTool('buggy', {}));
      assert.ok(buggy instanceof McpError);
      assert.equal(buggy.code, codes.INTERNAL_ERROR);
      assert.match(buggy.message, /RangeError: the link has a bug/);

      const nothing = await rejection(client.callTool('nothing', {}));
      assert.equal(nothing.code, codes.INTERNAL_ERROR);
      assert.match(nothing.message, /result object/);
      assert.equal(served.calls, 0);

      // The client goes on working.
      assert.deepEqual(echoed(await client.callTool('echo', { n: 1 })), { n: 1 });
      assert.equal(served.calls, 1);
    });
  });

  test(`${era}: meta and timeout go on to the next link and the call`, async () => {
    const { server } = makeServer();
    const seen = [];
    await withClient(server, { era }, async (client) => {
      client.use((ctx, next) => {
        seen.push({ meta: { ...ctx.meta }, timeout: ctx.timeout });
        if (ctx.name === 'slow') {
          ctx.timeout = 50;
        } else {
          ctx.meta['example.com/trace'] = 'abc';
          ctx.timeout = 2500;
        }
        return next(ctx);
      });
      client.use((ctx, next) => {
        seen.push({ meta: { ...ctx.meta }, timeout: ctx.timeout });
        return next(ctx);
      });
      await client.callTool('echo', {}, { timeout: 7000, meta: { a: 1 } });
      assert.deepEqual(seen, [
        { meta: { a: 1 }, timeout: 7000 },
        { meta: { a: 1, 'example.com/trace': 'abc' }, timeout: 2500 },
      ]);
      seen.length = 0;
      await client.listTools();
      assert.deepEqual(seen[0], { meta: {}, timeout: undefined });

      // A shorter timeout set by the link is the one the call keeps (with
      // the caller's 10 s, the 300 ms tool would answer).
      const late = await rejection(client.callTool('slow', {}, { timeout: 10_000 }));
      assert.equal(late.kind, 'timeout');
    });
  });

  test(`${era}: a longer timeout set by a link replaces the client's`, async () => {
    const { server } = makeServer();
    await withClient(server, { era, timeout: 50 }, async (client) => {
      assert.equal((await rejection(client.callTool('slow', {}))).kind, 'timeout');
      client.use((ctx, next) => {
        ctx.timeout = 10_000;
        return next(ctx);
      });
      const result = await client.callTool('slow', {});
      assert.equal(result.content[0].text, 'slow done');
    });
  });

  test(`${era}: a link awaits other calls of the same client, many calls at once`, async () => {
    const { server } = makeServer();
    await withClient(server, { era }, async (client) => {
      client.use(async (ctx, next) => {
        if (ctx.name !== 'echo') return next(ctx);
        // Another request of this client, through the chain too, while
        // this one waits in its link.
        const { tools } = await client.listTools();
        const { contents } = await client.readResource('mem://note');
        ctx.params.arguments.tools = tools.length;
        ctx.params.arguments.note = contents[0].text;
        return next(ctx);
      });
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => client.callTool('echo', { i })));
      assert.deepEqual(
        results.map(echoed),
        Array.from({ length: 20 }, (_, i) => ({ i, tools: 2, note: 'a note' })),
      );
    });
  });
}

test('next() runs once, with an object for params, meta and a positive timeout', async () => {
  const { server, served } = makeServer();
  await withClient(server, {}, async (client) => {
    client.use(async (ctx, next) => {
      switch (ctx.name) {
        case 'twice': {
          ctx.params.name = 'echo';
          await next(ctx);
          return next(ctx);
        }
        case 'params':
          ctx.params = 'nope';
          return next(ctx);
        case 'meta':
          ctx.meta = ['nope'];
          return next(ctx);
        case 'timeout':
          ctx.timeout = -5;
          return next(ctx);
        default:
          return next(ctx);
      }
    });
    const twice = await rejection(client.callTool('twice', {}));
    assert.equal(twice.code, codes.INTERNAL_ERROR);
    assert.match(twice.message, /only once/);
    assert.equal(served.calls, 1, 'the first next() ran');
    assert.match((await rejection(client.callTool('params', {}))).message, /ctx\.params must be an object/);
    assert.match((await rejection(client.callTool('meta', {}))).message, /ctx\.meta must be an object/);
    assert.match((await rejection(client.callTool('timeout', {}))).message, /ctx\.timeout must be a positive number/);
    // next() without an argument sends the link's own ctx.
    client.use((ctx, next) => next());
    assert.deepEqual(echoed(await client.callTool('echo', { ok: true })), { ok: true });
  });
  const client = await Client.inMemory(server);
  try {
    assert.throws(() => client.use(/** @type {any} */ (42)), TypeError);
  } finally {
    await client.close();
  }
});

test('an aborted call ends the link: its next() rejects as cancelled', async () => {
  const { server } = makeServer();
  await withClient(server, {}, async (client) => {
    let nextOutcome;
    const linkDone = new Promise((resolve) => {
      client.use(async (ctx, next) => {
        if (ctx.name !== 'slow') return next(ctx);
        try {
          return await next(ctx);
        } catch (error) {
          nextOutcome = error;
          throw error;
        } finally {
          resolve(undefined);
        }
      });
    });
    const abort = new AbortController();
    const pending = client.callTool('slow', {}, { signal: abort.signal });
    setTimeout(() => abort.abort(), 30);
    assert.equal((await rejection(pending)).kind, 'cancelled');
    await linkDone;
    assert.equal(nextOutcome?.kind, 'cancelled');
    // The client goes on working.
    assert.deepEqual(echoed(await client.callTool('echo', { after: 'abort' })), { after: 'abort' });
  });
});

test('modern: subscriptions/listen goes through the chain', async () => {
  const { server } = makeServer();
  await withClient(server, { era: 'modern' }, async (client) => {
    const seen = [];
    client.use((ctx, next) => {
      seen.push(ctx.method);
      return next(ctx);
    });
    const subscription = client.listen({ toolsListChanged: true });
    await subscription.acknowledged();
    subscription.close();
    assert.ok(seen.includes('subscriptions/listen'), String(seen));
  });
});

/** A server with a tool that always runs as a task, and completions. */
function taskServer() {
  const server = new Server({ name: 'tasks', version: '1.0.0', tasks: { pollIntervalMs: 20 } });
  server.tool('job', { inputSchema: { type: 'object' }, task: 'required' }, async ({ n }) => {
    await sleep(20);
    return `job ${n}`;
  });
  server.completion(({ argument }) => ['alpha', 'beta'].filter((v) => v.startsWith(argument.value)));
  server.prompt('pick', { arguments: [{ name: 'choice' }] }, ({ choice }) => choice);
  return server;
}

/** A link recording each method into `seen`, and calling tool `job` with `n: 7`. */
function jobLink(seen) {
  return async (ctx, next) => {
    seen.push(ctx.method);
    if (ctx.name === 'job') ctx.params.arguments = { n: 7 };
    return next(ctx);
  };
}

test('modern: a followed task and completions go through the chain', async () => {
  await withClient(taskServer(), { era: 'modern' }, async (client) => {
    const seen = [];
    client.use(jobLink(seen));
    // callTool follows the task to its result: the call, then its polls.
    assert.equal((await client.callTool('job', { n: 1 })).content[0].text, 'job 7');
    assert.equal(seen[0], 'tools/call');
    assert.ok(seen.includes('tasks/get'), String(seen));
    seen.length = 0;
    const completed = await client.complete({ ref: { type: 'ref/prompt', name: 'pick' }, argument: { name: 'choice', value: 'a' } });
    assert.deepEqual(completed.completion.values, ['alpha']);
    assert.deepEqual(seen, ['completion/complete']);
    // A task handle's own requests.
    seen.length = 0;
    const task = client.toolTask((await client.startToolTask('job', {})).id ?? 'none');
    await task.result();
    assert.ok(seen.includes('tasks/get'), String(seen));
  });
});

// A task handle's own requests (the call that starts it, tasks/get,
// tasks/cancel) go through the chain like any other (core/src/client/rounds.rs,
// `send_for_task`).
test('modern: a task handle sends its requests through the chain', async () => {
  await withClient(taskServer(), { era: 'modern' }, async (client) => {
    const seen = [];
    client.use(jobLink(seen));
    const task = await client.startToolTask('job', { n: 2 });
    await task.refresh();
    await task.cancel();
    assert.deepEqual(seen, ['tools/call', 'tasks/get', 'tasks/cancel']);
  });
});

test('links keep the event loop turning, and an idle client with links lets the process exit', () => {
  const index = fileURLToPath(new URL('../index.mjs', import.meta.url));
  // Unclosed on purpose: the links (weakly held) must not keep it alive.
  const script = `
    import { monitorEventLoopDelay } from 'node:perf_hooks';
    import { Server, Client } from ${JSON.stringify(index)};
    const server = new Server({ name: 'exit', version: '1.0.0' });
    server.tool('echo', ({ text }) => text);
    const client = await Client.inMemory(server);
    client.use(async (ctx, next) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      return next(ctx);
    });
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => client.callTool('echo', { text: String(i) })));
    delay.disable();
    console.log(JSON.stringify({ last: results.at(-1).content[0].text, maxDelayMs: delay.max / 1e6 }));
  `;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 15_000 });
  assert.equal(child.status, 0, `the process did not exit by itself: ${child.signal} ${child.stderr}`);
  const { last, maxDelayMs } = JSON.parse(child.stdout);
  assert.equal(last, '49');
  assert.ok(maxDelayMs < 1000, `the event loop was held ${maxDelayMs} ms`);
});

/** Serves `server` over HTTP on a free port; resolves the endpoint URL. */
function listen(server) {
  return new Promise((resolve, reject) => {
    server.serveHttp({ port: 0, handleSignals: false, onListening: ({ url }) => resolve(url) }).catch(reject);
  });
}

test('over HTTP, in both protocol eras: order, params, short-circuit, errors', async (t) => {
  const { server, served } = makeServer();
  const url = await listen(server);
  t.after(() => server.close());
  for (const era of ERAS) {
    const client = await Client.http(url, { era });
    const seen = [];
    try {
      client.use(async (ctx, next) => {
        seen.push(`outer ${ctx.method}`);
        if (ctx.name === 'refused') throw new McpError('no', { code: codes.INVALID_PARAMS });
        if (ctx.name === 'echo') ctx.params.arguments.era = era;
        return next(ctx);
      });
      client.use(async (ctx, next) => {
        seen.push(`inner ${ctx.method}`);
        if (ctx.name === 'cached') return { content: [{ type: 'text', text: 'cached' }] };
        return next(ctx);
      });
      const before = served.calls;
      assert.deepEqual(echoed(await client.callTool('echo', { text: 'hi' })), { text: 'hi', era }, era);
      assert.equal(served.calls, before + 1, era);
      assert.equal((await client.callTool('cached', {})).content[0].text, 'cached', era);
      assert.equal((await rejection(client.callTool('refused', {}))).code, codes.INVALID_PARAMS, era);
      assert.deepEqual(seen.slice(0, 2), ['outer tools/call', 'inner tools/call'], era);
      assert.equal(client.isLegacy, era === 'legacy', era);
    } finally {
      await client.close();
    }
  }
});

/**
 * A bare HTTP MCP endpoint that records every JSON-RPC message it is sent
 * and answers `tools/call` with the params it got (`_meta` included) as
 * JSON text: what the client put on the wire, whatever ferromcp's server
 * would make of it.
 */
async function recordingEndpoint() {
  const received = [];
  const http = createServer(async (req, res) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const message = JSON.parse(text);
    received.push(message);
    if (message.id === undefined) {
      res.writeHead(202).end();
      return;
    }
    let result;
    if (message.method === 'initialize') {
      result = {
        protocolVersion: message.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: 'recording', version: '1.0.0' },
      };
    } else if (message.method === 'tools/list') {
      result = { tools: [{ name: 'anything', inputSchema: { type: 'object' } }] };
    } else if (message.method === 'tools/call') {
      result = { content: [{ type: 'text', text: JSON.stringify(message.params) }] };
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: `not here: ${message.method}` } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
  });
  await new Promise((resolve) => http.listen(0, '127.0.0.1', () => resolve(undefined)));
  const { port } = /** @type {any} */ (http.address());
  return { url: `http://127.0.0.1:${port}/mcp`, received, close: () => http.close() };
}

test('over HTTP, in both protocol eras: the meta and params a link sets go on the wire', async (t) => {
  const endpoint = await recordingEndpoint();
  t.after(() => endpoint.close());
  for (const era of ERAS) {
    const client = await Client.http(endpoint.url, { era });
    try {
      client.use((ctx, next) => {
        ctx.meta['example.com/trace'] = `trace-${era}`;
        ctx.params.arguments = { ...ctx.params.arguments, by: 'link' };
        return next(ctx);
      });
      const result = await client.callTool('anything', { text: 'hi' }, { meta: { 'example.com/caller': 'test' } });
      const sent = JSON.parse(result.content[0].text);
      assert.deepEqual(sent.arguments, { text: 'hi', by: 'link' }, era);
      assert.equal(sent.name, 'anything', era);
      assert.equal(sent._meta['example.com/trace'], `trace-${era}`, era);
      assert.equal(sent._meta['example.com/caller'], 'test', era);
      const call = endpoint.received.findLast((message) => message.method === 'tools/call');
      assert.equal(call.params._meta['example.com/trace'], `trace-${era}`, era);
    } finally {
      await client.close();
    }
  }
});
