// Server middleware (`server.use`): JS links in core's chain, in order,
// sync and async, changing params and results, short-circuiting with an
// McpError, a thrown error classified as a handler's (and the server goes
// on), and core's ready-made links (rate limit, error masking, request
// log). In memory (Client.inMemory) and over HTTP in both protocol eras.
// Which requests go through the chain and what its outcomes mean is
// core's (core/tests/middleware.rs); these tests show the binding carries
// JS links, `next` and the results across without blocking either side.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { Server, Client, McpError, codes, middleware } from '../index.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const textSchema = { type: 'object', properties: { text: { type: 'string' } } };

/** A server with an echo tool, a slow tool and one failing with an internal error. */
function makeServer() {
  const server = new Server({ name: 'middleware', version: '1.0.0' });
  server.tool('echo', { inputSchema: textSchema }, ({ text }) => text);
  server.tool('slow', { inputSchema: textSchema }, async ({ text }) => {
    await sleep(20);
    return `slow ${text}`;
  });
  server.tool('broken', () => {
    throw new McpError('db password is hunter2', { code: codes.INTERNAL_ERROR });
  });
  server.tool('fails', () => {
    throw new Error('the model should read this');
  });
  server.prompt('hello', () => 'hello');
  return server;
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

/** Serves `server` over HTTP on a free port; resolves the endpoint URL. */
function listen(server) {
  return new Promise((resolve, reject) => {
    server.serveHttp({ port: 0, handleSignals: false, onListening: ({ url }) => resolve(url) }).catch(reject);
  });
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

test('links run in order around the request, changing its params and its result', async () => {
  const server = makeServer();
  const seen = [];
  server.use(async (ctx, next) => {
    seen.push(`outer ${ctx.method}`);
    if (ctx.name === 'echo') ctx.params.arguments.text = 'changed on the way in';
    const result = await next(ctx);
    seen.push('outer done');
    return { ...result, _meta: { ...result._meta, 'example.com/seen': true } };
  });
  server.use(async (ctx, next) => {
    seen.push(`inner ${ctx.method}`);
    const result = await next(ctx);
    seen.push('inner done');
    return result;
  });
  await withClient(server, { name: 'tester' }, async (client) => {
    await client.discover();
    // The client's discovery went through the chain too.
    assert.deepEqual(seen.slice(0, 4), ['outer server/discover', 'inner server/discover', 'inner done', 'outer done']);
    seen.length = 0;
    const echoed = await client.callTool('echo', { text: 'hi' });
    assert.equal(echoed.content[0].text, 'changed on the way in');
    assert.equal(echoed._meta['example.com/seen'], true);
    assert.deepEqual(seen, ['outer tools/call', 'inner tools/call', 'inner done', 'outer done']);
    // Lists go through it, and their results can be changed too.
    seen.length = 0;
    const { tools } = await client.listTools();
    assert.ok(tools.some((tool) => tool.name === 'echo'));
    assert.deepEqual(seen, ['outer tools/list', 'inner tools/list', 'inner done', 'outer done']);
  });
});

test('ctx tells the method, name, request id, client and protocol; params can be replaced', async () => {
  const server = makeServer();
  const contexts = [];
  server.use((ctx, next) => {
    contexts.push({
      method: ctx.method,
      name: ctx.name,
      requestId: ctx.requestId,
      client: ctx.clientInfo?.name,
      protocolVersion: ctx.protocolVersion,
      auth: ctx.auth,
      headers: ctx.headers,
    });
    // A new params object (the name changes too): the rest of the chain gets it.
    if (ctx.name === 'echo') ctx.params = { ...ctx.params, name: 'slow' };
    return next(ctx);
  });
  await withClient(server, { name: 'inspector', version: '9.9.9' }, async (client) => {
    const result = await client.callTool('echo', { text: 'x' });
    assert.equal(result.content[0].text, 'slow x');
    const call = contexts.find((ctx) => ctx.method === 'tools/call');
    assert.equal(call.name, 'echo');
    assert.equal(call.client, 'inspector');
    assert.equal(call.protocolVersion, '2026-07-28');
    assert.equal(call.auth, null);
    assert.deepEqual(call.headers, {});
    assert.ok(typeof call.requestId === 'number' || typeof call.requestId === 'string');
    assert.equal(contexts.find((ctx) => ctx.method === 'server/discover').name, undefined);
  });
});

test('sync links: returning next(ctx) as is, and answering without next', async () => {
  const server = makeServer();
  let ran = false;
  server.tool('cached', () => {
    ran = true;
    return 'computed';
  });
  // A plain function returning next's promise.
  server.use((ctx, next) => next(ctx));
  // A plain function answering by itself with a result object.
  server.use((ctx, next) => {
    if (ctx.name === 'cached') return { content: [{ type: 'text', text: 'from the cache' }] };
    return next();
  });
  await withClient(server, undefined, async (client) => {
    const cached = await client.callTool('cached');
    assert.equal(cached.content[0].text, 'from the cache');
    assert.equal(ran, false);
    assert.equal((await client.callTool('echo', { text: 'sync' })).content[0].text, 'sync');
  });
});

test('a thrown McpError short-circuits with that JSON-RPC error', async () => {
  const server = makeServer();
  let handled = 0;
  server.tool('guarded', () => {
    handled += 1;
    return 'ran';
  });
  const after = [];
  server.use(async (ctx, next) => {
    if (ctx.name === 'guarded' && ctx.params.arguments?.token !== 'ok') {
      throw new McpError('refused by policy', { code: codes.INVALID_PARAMS, data: { policy: 'token' } });
    }
    return next(ctx);
  });
  server.use((ctx, next) => {
    after.push(ctx.method);
    return next(ctx);
  });
  await withClient(server, undefined, async (client) => {
    const refused = await rejection(client.callTool('guarded', { token: 'no' }));
    assert.ok(refused instanceof McpError);
    assert.equal(refused.code, codes.INVALID_PARAMS);
    assert.equal(refused.message, 'refused by policy');
    assert.deepEqual(refused.data, { policy: 'token' });
    assert.equal(handled, 0);
    assert.ok(!after.includes('tools/call'), 'the links after it did not run');
    assert.equal((await client.callTool('guarded', { token: 'ok' })).content[0].text, 'ran');
    assert.equal(handled, 1);
  });
});

test('any other thrown error is an internal error, like a handler error, and the next call works', async () => {
  const server = makeServer();
  server.use(async (ctx, next) => {
    if (ctx.params.arguments?.text === 'bug') throw new TypeError('a bug in a link');
    if (ctx.params.arguments?.text === 'sync bug') return JSON.parse('{');
    return next(ctx);
  });
  await withClient(server, undefined, async (client) => {
    const failed = await rejection(client.callTool('echo', { text: 'bug' }));
    assert.equal(failed.code, codes.INTERNAL_ERROR);
    assert.equal(failed.message, 'TypeError: a bug in a link');
    const syncFailed = await rejection(client.callTool('echo', { text: 'sync bug' }));
    assert.equal(syncFailed.code, codes.INTERNAL_ERROR);
    assert.match(syncFailed.message, /^SyntaxError: /);
    // The server goes on serving.
    assert.equal((await client.callTool('echo', { text: 'fine' })).content[0].text, 'fine');
  });
});

test('errors from next() reach the link, which may rethrow, translate or recover', async () => {
  const server = makeServer();
  const caught = [];
  server.use(async (ctx, next) => {
    try {
      return await next(ctx);
    } catch (error) {
      caught.push({ code: error.code, message: error.message, isMcpError: error instanceof McpError });
      if (ctx.name === 'nope') throw error; // passed on unchanged
      return { content: [{ type: 'text', text: `recovered from ${error.code}` }], isError: true };
    }
  });
  await withClient(server, undefined, async (client) => {
    const unknown = await rejection(client.callTool('nope', {}));
    assert.equal(unknown.code, codes.INVALID_PARAMS);
    assert.equal(unknown.message, 'Unknown tool: nope');
    assert.deepEqual(unknown.data, { name: 'nope' });
    const recovered = await client.callTool('broken', {});
    assert.equal(recovered.isError, true);
    assert.equal(recovered.content[0].text, `recovered from ${codes.INTERNAL_ERROR}`);
    // A tool's own failure is a result, not an error: nothing to catch.
    const toolError = await client.callTool('fails', {});
    assert.equal(toolError.isError, true);
    assert.deepEqual(caught, [
      { code: codes.INVALID_PARAMS, message: 'Unknown tool: nope', isMcpError: true },
      { code: codes.INTERNAL_ERROR, message: 'db password is hunter2', isMcpError: true },
    ]);
  });
});

test('misused links: no result, next twice, params not an object', async () => {
  const server = makeServer();
  const second = [];
  server.use(async (ctx, next) => {
    const text = ctx.params.arguments?.text;
    if (text === 'nothing') {
      await next(ctx);
      return undefined;
    }
    if (text === 'twice') {
      const result = await next(ctx);
      second.push(await rejection(next(ctx)));
      return result;
    }
    if (text === 'bad params') {
      ctx.params = 'oops';
      return next(ctx);
    }
    return next(ctx);
  });
  await withClient(server, undefined, async (client) => {
    const nothing = await rejection(client.callTool('echo', { text: 'nothing' }));
    assert.equal(nothing.code, codes.INTERNAL_ERROR);
    assert.match(nothing.message, /invalid middleware result: a link returns the result object/);
    assert.equal((await client.callTool('echo', { text: 'twice' })).content[0].text, 'twice');
    assert.match(second[0].message, /only once/);
    const bad = await rejection(client.callTool('echo', { text: 'bad params' }));
    assert.equal(bad.code, codes.INTERNAL_ERROR);
    assert.match(bad.message, /^TypeError: next\(ctx\): ctx.params must be an object/);
  });
  assert.throws(() => server.use('logRequests'), TypeError);
  assert.throws(() => server.use({}), TypeError);
});

test('many calls in flight through an async link, each with its own params and result', async () => {
  const server = makeServer();
  server.use(async (ctx, next) => {
    await sleep(Math.random() * 5);
    const result = await next(ctx);
    await sleep(Math.random() * 5);
    return result;
  });
  await withClient(server, undefined, async (client) => {
    const texts = Array.from({ length: 40 }, (_, i) => `call ${i}`);
    const results = await Promise.all(texts.map((text, i) => client.callTool(i % 2 ? 'slow' : 'echo', { text })));
    results.forEach((result, i) => assert.equal(result.content[0].text, i % 2 ? `slow ${texts[i]}` : texts[i]));
  });
});

test('a call cancelled by the client rejects the pending next() with kind "cancelled"', async () => {
  const server = makeServer();
  let settled;
  const done = new Promise((resolve) => {
    settled = resolve;
  });
  server.tool('forever', (_, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve('aborted'))));
  server.use(async (ctx, next) => {
    try {
      return await next(ctx);
    } catch (error) {
      if (ctx.name === 'forever') settled(error);
      throw error;
    }
  });
  await withClient(server, undefined, async (client) => {
    const controller = new AbortController();
    const call = client.callTool('forever', {}, { signal: controller.signal });
    await sleep(50);
    controller.abort();
    assert.equal((await rejection(call)).kind, 'cancelled');
    const error = await done;
    assert.ok(error instanceof McpError);
    assert.equal(error.kind, 'cancelled');
    assert.equal((await client.callTool('echo', { text: 'after' })).content[0].text, 'after');
  });
});

test('rateLimit refuses past its budget, saying when to retry; another client has its own', async () => {
  const server = makeServer();
  server.use(middleware.rateLimit({ perSecond: 0.001, burst: 6 }));
  await withClient(server, { name: 'greedy' }, async (client) => {
    let answered = 0;
    let refused = 0;
    for (let i = 0; i < 10; i++) {
      try {
        await client.callTool('echo', { text: String(i) });
        assert.equal(refused, 0, 'answered after a refusal');
        answered += 1;
      } catch (error) {
        assert.ok(error instanceof McpError, String(error));
        assert.equal(error.code, -32000);
        assert.match(error.message, /^Too many requests: retry in \d+ ms$/);
        assert.ok(error.data.retryAfterMs > 0);
        refused += 1;
      }
    }
    // Discovery counts too: the budget of 6 runs out within ten calls.
    assert.ok(answered >= 1 && answered <= 5, `${answered} answered`);
    assert.equal(answered + refused, 10);
  });
  await withClient(server, { name: 'another' }, async (client) => {
    assert.equal((await client.callTool('echo', { text: 'mine' })).content[0].text, 'mine');
  });
  assert.equal(middleware.rateLimit({ perSecond: 1, burst: 1 }).name, 'rateLimit');
  // Settings the core refuses, with its reason.
  const refused = (options, reason) =>
    assert.throws(() => middleware.rateLimit(options), (error) => error instanceof TypeError && reason.test(error.message));
  refused({ perSecond: -1, burst: 1 }, /^middleware\.rateLimit\(options\): perSecond must be a finite number >= 0, not -1$/);
  refused({ perSecond: Number.NaN, burst: 1 }, /perSecond must be a finite number >= 0, not NaN$/);
  refused({ perSecond: 1, burst: 0 }, /: burst must be at least 1$/);
  refused({ perSecond: 1, burst: -3 }, /: burst must be at least 1$/);
  refused({ perSecond: 1, burst: 1.5 }, /: burst must be a whole number, not 1.5$/);
  refused({ perSecond: 1, burst: 1, maxClients: 0 }, /: maxClients must be at least 1$/);
  assert.throws(() => middleware.rateLimit(), TypeError);
});

test('maskErrors hides an internal message from the client and reports it', async () => {
  const server = makeServer();
  const masked = [];
  server.use(middleware.maskErrors({ log: (entry) => masked.push(entry) }));
  await withClient(server, undefined, async (client) => {
    const broken = await rejection(client.callTool('broken', {}));
    assert.equal(broken.code, codes.INTERNAL_ERROR);
    assert.equal(broken.message, 'Internal error');
    assert.ok(!JSON.stringify(broken.data ?? null).includes('hunter2'));
    // What a client can act on passes unchanged, as does a tool's own failure.
    const unknown = await rejection(client.callTool('nope', {}));
    assert.equal(unknown.message, 'Unknown tool: nope');
    const toolError = await client.callTool('fails', {});
    assert.equal(toolError.isError, true);
    assert.match(toolError.content[0].text, /the model should read this/);
  });
  // The detail stays with the server (the log function runs on the JS thread, later).
  for (let i = 0; i < 50 && masked.length === 0; i++) await sleep(10);
  assert.equal(masked.length, 1);
  assert.equal(masked[0].method, 'tools/call');
  assert.equal(masked[0].name, 'broken');
  assert.equal(masked[0].ok, false);
  assert.equal(masked[0].code, codes.INTERNAL_ERROR);
  assert.equal(masked[0].message, 'db password is hunter2');
});

test('maskErrors also masks what a JS link inside it throws', async () => {
  const server = makeServer();
  server.use(middleware.maskErrors({ log: null }));
  server.use((ctx, next) => {
    if (ctx.method === 'tools/call') throw new RangeError('secret detail');
    return next(ctx);
  });
  await withClient(server, undefined, async (client) => {
    const error = await rejection(client.callTool('echo', { text: 'x' }));
    assert.equal(error.code, codes.INTERNAL_ERROR);
    assert.equal(error.message, 'Internal error');
  });
});

test('logRequests reports every request with its outcome and duration', async () => {
  const server = makeServer();
  const entries = [];
  server.use(middleware.logRequests({ log: (entry) => entries.push(entry) }));
  await withClient(server, undefined, async (client) => {
    await client.callTool('slow', { text: 'x' });
    await rejection(client.callTool('nope', {}));
    await client.getPrompt('hello');
  });
  for (let i = 0; i < 50 && entries.length < 4; i++) await sleep(10);
  const slow = entries.find((entry) => entry.name === 'slow');
  assert.equal(slow.method, 'tools/call');
  assert.equal(slow.ok, true);
  assert.ok(slow.durationMs >= 15, `${slow.durationMs} ms`);
  const nope = entries.find((entry) => entry.name === 'nope');
  assert.equal(nope.ok, false);
  assert.equal(nope.code, codes.INVALID_PARAMS);
  assert.equal(nope.message, 'Unknown tool: nope');
  assert.ok(entries.some((entry) => entry.method === 'prompts/get' && entry.name === 'hello' && entry.ok));
  assert.ok(entries.some((entry) => entry.method === 'server/discover'));
  assert.equal(middleware.logRequests({ log: null }).name, 'logRequests');
  assert.throws(() => middleware.logRequests({ log: 'stderr' }), TypeError);
});

test('over HTTP, in both protocol eras: links, headers and the ready-made links', async (t) => {
  const server = makeServer();
  const seen = [];
  server.use(middleware.rateLimit({ perSecond: 1000, burst: 1000 }));
  server.use(async (ctx, next) => {
    seen.push({ method: ctx.method, protocolVersion: ctx.protocolVersion, header: ctx.headers['x-trace'] });
    if (ctx.name === 'echo') ctx.params.arguments = { text: `${ctx.params.arguments.text} via http` };
    const result = await next(ctx);
    return ctx.name === 'echo' ? { ...result, _meta: { ...result._meta, 'example.com/era': ctx.protocolVersion } } : result;
  });
  server.use(middleware.maskErrors({ log: null }));
  const url = await listen(server);
  t.after(() => server.close());
  for (const era of ['modern', 'legacy']) {
    seen.length = 0;
    const client = await Client.http(url, { era, headers: { 'X-Trace': `trace-${era}` } });
    try {
      const echoed = await client.callTool('echo', { text: 'hi' });
      assert.equal(echoed.content[0].text, 'hi via http', era);
      const call = seen.find((ctx) => ctx.method === 'tools/call');
      assert.equal(call.header, `trace-${era}`, era);
      assert.equal(echoed._meta['example.com/era'], call.protocolVersion, era);
      assert.equal(call.protocolVersion === '2026-07-28', era === 'modern', era);
      const broken = await rejection(client.callTool('broken', {}));
      assert.equal(broken.message, 'Internal error', era);
    } finally {
      await client.close();
    }
  }
});
