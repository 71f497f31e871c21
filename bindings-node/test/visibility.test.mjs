// Per-caller visibility (`server.visibility(rule)` and the `visible`
// registration option): lists filtered per caller (page by page), hidden
// items used as if unknown, per-registration predicates combined with the
// server-wide rule, async predicates, failing closed, items core adds by
// itself (a mount), and a protected HTTP server whose rules read the
// caller's token. The protocol side (filtered pages, "hidden is unknown",
// private cache scope, which items a request needs judged) is core's
// (core/tests/visibility.rs); these tests show the binding answers core's
// question with one call to JS per request, awaited, never blocking (see
// src/visibility.rs).

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { Server, Client, InvalidToken, McpError, codes } from '../index.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Hides every item whose key mentions "admin" from all but the client named "admin". */
const adminsOnly = (ctx, item) => !item.key.includes('admin') || ctx.clientInfo?.name === 'admin';

/** A server with public and admin items of every kind, listed 2 per page. */
function makeServer() {
  const server = new Server({
    name: 'visibility',
    version: '1.0.0',
    pageSize: 2,
    caching: { tools: { ttlMs: 60_000, cacheScope: 'public' } },
  });
  for (const name of ['a', 'b', 'admin_x', 'c', 'admin_y']) server.tool(name, () => name);
  server.prompt('greet', () => 'hello');
  server.prompt('admin_prompt', { arguments: [{ name: 'topic', complete: () => ['x'] }] }, () => 'secret');
  server.resource('mem://public', () => 'public');
  server.resource('mem://admin', () => 'secret');
  server.resource('mem://admin/{id}', ({ variables: { id } }) => `secret ${id}`);
  return server;
}

/** Runs `body(client)` with an in-memory client named `name`, closing it however `body` ends. */
async function withClient(server, name, body) {
  const client = await Client.inMemory(server, { name });
  try {
    return await body(client);
  } finally {
    await client.close();
  }
}

/** Every item of every list the client sees, by kind. */
async function everything(client) {
  const all = async (iterable, key) => {
    const items = [];
    for await (const item of iterable) items.push(item[key]);
    return items;
  };
  return {
    tools: await all(client.tools(), 'name'),
    prompts: await all(client.prompts(), 'name'),
    resources: await all(client.resources(), 'uri'),
    templates: await all(client.resourceTemplates(), 'uriTemplate'),
  };
}

/** Every tool name the client sees. */
async function toolNames(client) {
  const names = [];
  for await (const tool of client.tools()) names.push(tool.name);
  return names;
}

/** The rejection of `promise` (which must reject) as `{ code, message, data }`. */
async function failure(promise) {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof McpError, String(error));
    return { code: error.code, message: error.message, data: error.data };
  }
  assert.fail('expected a rejection');
}

test('lists show each caller what the rule lets it see, page by page', async () => {
  const server = makeServer().visibility(adminsOnly);
  await withClient(server, 'guest', async (guest) => {
    assert.deepEqual(await everything(guest), {
      tools: ['a', 'b', 'c'],
      prompts: ['greet'],
      resources: ['mem://public'],
      templates: [],
    });
    // A filtered list is not for shared caches.
    assert.equal((await guest.listTools()).cacheScope, 'private');
  });
  await withClient(server, 'admin', async (admin) => {
    assert.deepEqual(await everything(admin), {
      tools: ['a', 'b', 'admin_x', 'c', 'admin_y'],
      prompts: ['greet', 'admin_prompt'],
      resources: ['mem://public', 'mem://admin'],
      templates: ['mem://admin/{id}'],
    });
  });
  // Without a rule, everyone sees everything, and the configured scope stands.
  server.visibility(null);
  await withClient(server, 'guest', async (guest) => {
    assert.equal((await everything(guest)).tools.length, 5);
    assert.equal((await guest.listTools()).cacheScope, 'public');
  });
});

test('a hidden item fails exactly like an unknown one: call, read, get, complete', async () => {
  const server = makeServer().visibility(adminsOnly);
  await withClient(server, 'guest', async (guest) => {
    const hidden = await failure(guest.callTool('admin_x', {}));
    const unknown = await failure(guest.callTool('admin_nope', {}));
    assert.deepEqual(hidden, {
      code: unknown.code,
      message: unknown.message.replace('admin_nope', 'admin_x'),
      data: { name: 'admin_x' },
    });
    assert.equal(hidden.code, codes.INVALID_PARAMS);

    assert.deepEqual(await failure(guest.readResource('mem://admin')), {
      ...(await failure(guest.readResource('mem://nope'))),
      message: 'Resource not found: mem://admin',
      data: { uri: 'mem://admin' },
    });
    // A URI of a hidden template is as unknown as any other.
    assert.deepEqual(await failure(guest.readResource('mem://admin/7')), {
      ...(await failure(guest.readResource('mem://nope/7'))),
      message: 'Resource not found: mem://admin/7',
      data: { uri: 'mem://admin/7' },
    });
    const prompt = await failure(guest.getPrompt('admin_prompt'));
    const noPrompt = await failure(guest.getPrompt('admin_nope'));
    assert.deepEqual(prompt, { ...noPrompt, message: noPrompt.message.replace('admin_nope', 'admin_prompt'), data: { name: 'admin_prompt' } });
    const completed = await failure(
      guest.complete({ ref: { type: 'ref/prompt', name: 'admin_prompt' }, argument: { name: 'topic', value: '' } }),
    );
    assert.match(completed.message, /Prompt not found: admin_prompt/);
  });
  await withClient(server, 'admin', async (admin) => {
    assert.equal((await admin.callTool('admin_x', {})).content[0].text, 'admin_x');
    assert.equal((await admin.readResource('mem://admin/7')).contents[0].text, 'secret 7');
    assert.equal((await admin.getPrompt('admin_prompt')).messages.length, 1);
    const completed = await admin.complete({ ref: { type: 'ref/prompt', name: 'admin_prompt' }, argument: { name: 'topic', value: '' } });
    assert.deepEqual(completed.completion.values, ['x']);
  });
});

test('per-registration predicates, with the server-wide rule', async () => {
  const server = new Server({ name: 'per-item', version: '1.0.0' });
  server.tool('everyone', () => 'hi');
  server.tool('inspector_only', { visible: (ctx) => ctx.clientInfo?.name === 'inspector' }, () => 'state');
  const clients = (...names) => (ctx) => names.includes(ctx.clientInfo?.name);
  server.tool('console_only', { visible: clients('console') }, () => 'console');
  server.prompt('console_prompt', { visible: clients('console', 'inspector') }, () => 'p');
  server.resource('mem://debug', { visible: (ctx) => ctx.clientInfo?.version === '2.0.0' }, () => 'dbg');
  server.resource('mem://items/{id}', { visible: clients('inspector') }, ({ variables: { id } }) => id);
  const names = async (client) => (await everything(client)).tools;
  await withClient(server, 'inspector', async (inspector) => {
    assert.deepEqual(await names(inspector), ['everyone', 'inspector_only']);
    assert.deepEqual((await everything(inspector)).prompts, ['console_prompt']);
    assert.deepEqual((await everything(inspector)).templates, ['mem://items/{id}']);
    assert.equal((await inspector.readResource('mem://items/3')).contents[0].text, '3');
  });
  await withClient(server, 'console', async (consoleClient) => {
    assert.deepEqual(await names(consoleClient), ['everyone', 'console_only']);
    assert.equal((await failure(consoleClient.callTool('inspector_only', {}))).message, 'Unknown tool: inspector_only');
    assert.equal((await failure(consoleClient.readResource('mem://items/3'))).message, 'Resource not found: mem://items/3');
  });
  const v2 = await Client.inMemory(server, { name: 'other', version: '2.0.0' });
  try {
    assert.deepEqual((await everything(v2)).resources, ['mem://debug']);
  } finally {
    await v2.close();
  }
  // Both must allow: the server-wide rule narrows what an item's own lets through.
  server.visibility((ctx, item) => item.key !== 'inspector_only' || ctx.clientInfo?.version === '9');
  await withClient(server, 'inspector', async (inspector) => {
    assert.deepEqual(await names(inspector), ['everyone']);
  });
  server.visibility(null);
  // Registering again without `visible` (or removing) drops the item's own rule.
  server.tool('console_only', () => 'for all now');
  server.removeTool('inspector_only');
  server.tool('inspector_only', () => 'for all now');
  await withClient(server, 'guest', async (guest) => {
    assert.deepEqual(await names(guest), ['everyone', 'console_only', 'inspector_only']);
  });
});

test('the rule judges what the request names after every link: a call asks about one tool', async () => {
  const server = makeServer();
  const asked = [];
  server.visibility((ctx, item) => {
    asked.push(item.key);
    return adminsOnly(ctx, item);
  });
  // Added after the rule: it still runs before the rule is asked.
  server.use((ctx, next) => {
    if (ctx.name === 'alias') ctx.params.name = 'admin_x';
    return next(ctx);
  });
  await withClient(server, 'guest', async (guest) => {
    asked.length = 0;
    assert.equal((await failure(guest.callTool('alias', {}))).message, 'Unknown tool: admin_x');
    assert.deepEqual(asked, ['admin_x']);
    asked.length = 0;
    assert.equal((await guest.callTool('a', {})).content[0].text, 'a');
    assert.deepEqual(asked, ['a']);
  });
  await withClient(server, 'admin', async (admin) => {
    assert.equal((await admin.callTool('alias', {})).content[0].text, 'admin_x');
  });
});

test('a rule that throws or rejects hides the item (failing closed)', async () => {
  const server = new Server({ name: 'closed', version: '1.0.0' });
  server.tool('fine', () => 'fine');
  server.tool('throws', { visible: () => { throw new Error('bug in a rule'); } }, () => 'x');
  server.tool('rejects', { visible: async () => { throw new Error('bug in an async rule'); } }, () => 'x');
  const warnings = [];
  const onWarning = (warning) => warnings.push(warning);
  process.on('warning', onWarning);
  try {
    await withClient(server, 'guest', async (guest) => {
      assert.deepEqual(await toolNames(guest), ['fine']);
      assert.equal((await failure(guest.callTool('throws', {}))).message, 'Unknown tool: throws');
      assert.equal((await failure(guest.callTool('rejects', {}))).message, 'Unknown tool: rejects');
    });
    for (let i = 0; i < 20 && warnings.length === 0; i++) await sleep(5);
    assert.equal(warnings.length, 1, 'warned once');
    assert.match(warnings[0].message, /bug in a rule/);
  } finally {
    process.off('warning', onWarning);
  }
});

test('bad options are refused before anything is registered', () => {
  const server = new Server({ name: 'bad', version: '1.0.0' });
  // Data rules are gone: a predicate says the same.
  assert.throws(() => server.tool('t', { visible: { scopes: ['admin'] } }, () => 'x'), /visible must be a function/);
  assert.throws(() => server.prompt('p', { visible: true }, () => 'x'), TypeError);
  assert.throws(() => server.resource('mem://r', { visible: ['admin'] }, () => 'x'), TypeError);
  assert.deepEqual(server.toolNames, []);
  assert.throws(() => server.visibility('admins'), TypeError);
});

test('items core adds by itself (a mount) are judged too, one call to JS per request', async () => {
  const upstream = new Server({ name: 'upstream', version: '1.0.0' });
  upstream.tool('admin_tool', () => 'secret').tool('open_tool', () => 'open');
  upstream.prompt('admin_p', () => 'p').prompt('open_p', () => 'o');
  upstream.resource('mem://admin', () => 'secret');
  const server = new Server({ name: 'gateway', version: '1.0.0' });
  server.tool('local', () => 'local');
  const contexts = [];
  server.visibility((ctx, item) => {
    contexts.push(ctx);
    return adminsOnly(ctx, item);
  });
  const mount = await server.mount('up', upstream);
  const expected = {
    guest: { tools: ['local', 'up_open_tool'], prompts: ['up_open_p'], resources: [], templates: [] },
    admin: {
      tools: ['local', 'up_admin_tool', 'up_open_tool'],
      prompts: ['up_admin_p', 'up_open_p'],
      resources: ['up+mem://admin'],
      templates: [],
    },
  };
  for (const round of [1, 2]) {
    for (const name of ['guest', 'admin']) {
      await withClient(server, name, async (client) => {
        assert.deepEqual(await everything(client), expected[name], `${name}, round ${round}`);
        const call = client.callTool('up_admin_tool', {});
        if (name === 'admin') {
          assert.equal((await call).content[0].text, 'secret');
        } else {
          assert.equal((await failure(call)).message, 'Unknown tool: up_admin_tool');
        }
      });
    }
  }
  // One `ctx` for every item of a list: core asks once per request.
  await withClient(server, 'guest', async (guest) => {
    contexts.length = 0;
    await guest.listTools();
    assert.equal(contexts.length, 3);
    assert.equal(new Set(contexts).size, 1);
  });
  mount.unmount();
});

test('registering while lists are served does not stall', async () => {
  const server = makeServer().visibility(adminsOnly);
  await withClient(server, 'guest', async (guest) => {
    const started = Date.now();
    const lists = Array.from({ length: 30 }, () => guest.listTools());
    for (let i = 0; i < 30; i++) {
      server.tool(`extra_${i}`, () => 'x');
      server.tool(`admin_extra_${i}`, () => 'x');
      await sleep(0);
    }
    await Promise.all(lists);
    const { tools } = await everything(guest);
    assert.equal(tools.filter((name) => name.startsWith('extra_')).length, 30);
    assert.ok(!tools.some((name) => name.includes('admin')));
    assert.ok(Date.now() - started < 900, `${Date.now() - started} ms`);
  });
});

test('over protected HTTP: rules read the caller\'s token', async (t) => {
  const tokens = {
    alice: { sub: 'alice', scope: 'files:read admin' },
    bob: { sub: 'bob', scope: 'files:read' },
  };
  const server = new Server({ name: 'protected', version: '1.0.0' });
  server.tool('whoami', (_args, ctx) => ctx.auth?.subject ?? 'nobody');
  const tokensSeen = [];
  server.tool('reset', { visible: (ctx) => ctx.auth?.scopes.includes('admin') === true }, () => 'reset');
  server.tool('alice_notes', { visible: async (ctx) => {
    tokensSeen.push(ctx.auth);
    return ctx.auth?.subject === 'alice';
  } }, () => 'notes');
  server.tool('beta', () => 'beta');
  server.visibility((ctx, item) => item.key !== 'beta' || ctx.auth?.scopes.includes('admin') === true);
  const url = await new Promise((resolve, reject) => {
    server
      .serveHttp({
        port: 0,
        handleSignals: false,
        onListening: ({ url: bound }) => resolve(bound),
        auth: {
          resource: 'http://127.0.0.1/mcp',
          authorizationServers: ['https://auth.example.com'],
          verifier: (token, { resource }) => {
            const claims = tokens[token];
            if (claims === undefined) throw new InvalidToken('unknown token');
            return { ...claims, aud: resource, exp: Math.floor(Date.now() / 1000) + 3600 };
          },
        },
      })
      .catch(reject);
  });
  t.after(() => server.close());
  for (const era of ['modern', 'legacy']) {
    for (const [token, expected] of [
      ['alice', ['whoami', 'reset', 'alice_notes', 'beta']],
      ['bob', ['whoami']],
    ]) {
      const client = await Client.http(url, { era, headers: { authorization: `Bearer ${token}` } });
      try {
        assert.deepEqual(await toolNames(client), expected, `${token} over ${era}`);
        const reset = client.callTool('reset', {});
        if (token === 'alice') {
          assert.equal((await reset).content[0].text, 'reset');
        } else {
          assert.equal((await failure(reset)).message, 'Unknown tool: reset');
        }
      } finally {
        await client.close();
      }
    }
  }
  // The token as core describes it for every binding: absent members are null.
  const bob = tokensSeen.find((auth) => auth?.subject === 'bob');
  assert.deepEqual(bob.scopes, ['files:read']);
  assert.equal(bob.clientId, null);
  assert.ok(bob.expiresAt > Date.now() / 1000);
  assert.equal(bob.claims.sub, 'bob');
});

test('async predicates are awaited; a list of N items is one call to JS, with one ctx', async () => {
  const server = new Server({ name: 'async', version: '1.0.0' });
  const names = ['t0', 't1', 't2', 't3', 't4', 't5', 't6'];
  for (const name of names) server.tool(name, () => name);
  server.tool('later', { visible: async (ctx) => {
    await sleep(5);
    return ctx.clientInfo?.name === 'admin';
  } }, () => 'later');
  const calls = [];
  server.visibility(async (ctx, item) => {
    calls.push({ ctx, key: item.key });
    await sleep(1);
    return item.key !== 't3' || ctx.clientInfo?.name === 'admin';
  });
  await withClient(server, 'guest', async (guest) => {
    calls.length = 0;
    assert.deepEqual((await guest.listTools()).tools.map((tool) => tool.name), ['t0', 't1', 't2', 't4', 't5', 't6']);
    // The rule is a per-item predicate, applied to the N + 1 items of the
    // list, all in one evaluation: one ctx, so one call from core.
    assert.equal(calls.length, names.length);
    assert.equal(new Set(calls.map((call) => call.ctx)).size, 1);
    // `later`'s own predicate hid it before the server-wide rule was asked.
    assert.ok(!calls.some((call) => call.key === 'later'));
    calls.length = 0;
    await guest.listTools();
    await guest.listTools();
    assert.equal(calls.length, 2 * names.length);
    assert.equal(new Set(calls.map((call) => call.ctx)).size, 2, 'one call to JS per request');
    assert.equal((await failure(guest.callTool('t3', {}))).message, 'Unknown tool: t3');
    assert.equal((await failure(guest.callTool('later', {}))).message, 'Unknown tool: later');
  });
  await withClient(server, 'admin', async (admin) => {
    assert.deepEqual(await toolNames(admin), [...names, 'later']);
    assert.equal((await admin.callTool('later', {})).content[0].text, 'later');
  });
});
