// Notification hooks (`server.useNotifications`, `client.useNotifications`):
// JS functions as links of core's chains (`Middleware::notification`,
// `ClientMiddleware::notification`) that see each notification received,
// in order, before the server or the client acts on it; they may change
// its params or stop it. The delivering thread waits for the hook's
// synchronous answer, at most 1000 ms; a hook that throws, returns a
// promise or answers too late lets the notification go on unchanged, with
// a warning to the package's logger. Which notifications pass the chain is
// core's (core/tests/middleware.rs, core/tests/client_middleware.rs).

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { Server, Client, setLogger } from '../index.mjs';

const ERAS = ['modern', 'legacy'];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Collects the package's warnings while `body` runs. */
async function withWarnings(body) {
  const warnings = [];
  setLogger((level, target, message) => warnings.push({ level, target, message }), { level: 'warn' });
  try {
    return await body(warnings);
  } finally {
    setLogger((level, target, message) => console.error(`ferromcp ${level} ${target}: ${message}`), { level: 'warn' });
  }
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

/** A server whose `steps` tool reports progress 1, 2 and 3 of 3. */
function progressServer() {
  const server = new Server({ name: 'notification-middleware', version: '1.0.0' });
  server.tool('steps', { inputSchema: { type: 'object' } }, async (_args, ctx) => {
    for (const step of [1, 2, 3]) {
      ctx.progress(step, 3, `step ${step}`);
      await sleep(5);
    }
    return 'done';
  });
  server.tool('echo', { inputSchema: { type: 'object' } }, (args) => JSON.stringify(args));
  return server;
}

/** A server whose `slow` tool takes 400 ms and records how it ended. */
function slowServer() {
  const server = new Server({ name: 'notification-middleware', version: '1.0.0' });
  const runs = [];
  server.tool('slow', { inputSchema: { type: 'object' } }, async (_args, ctx) => {
    const run = { finished: false, aborted: false };
    runs.push(run);
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, 400);
      ctx.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    run.aborted = ctx.signal.aborted;
    run.finished = !run.aborted;
    return 'slow done';
  });
  return { server, runs };
}

test('server: a hook sees notifications/initialized from a 2025-11-25 client', async () => {
  const server = progressServer();
  const seen = [];
  const returned = server.useNotifications((note) => {
    seen.push(note.method);
  });
  assert.equal(returned, server, 'useNotifications() returns the server, for chaining');
  await withClient(server, { era: 'legacy' }, async (client) => {
    assert.deepEqual(JSON.parse((await client.callTool('echo', { a: 1 })).content[0].text), { a: 1 });
    assert.equal(client.isLegacy, true);
    assert.deepEqual(seen, ['notifications/initialized'], 'requests pass the hook straight on');
  });
});

for (const era of ERAS) {
  test(`server (${era}): stopping notifications/cancelled keeps a slow tool running to its end`, async () => {
    // Without a hook the abort reaches the tool: the control run shows the
    // test can tell the difference.
    const control = slowServer();
    await withClient(control.server, { era }, async (client) => {
      const controller = new AbortController();
      const call = client.callTool('slow', {}, { signal: controller.signal });
      await sleep(100);
      controller.abort();
      assert.equal((await rejection(call)).kind, 'cancelled');
      await sleep(500);
      assert.deepEqual(control.runs, [{ finished: false, aborted: true }], 'without the hook the tool is cancelled');
    });

    const { server, runs } = slowServer();
    const seen = [];
    server
      .useNotifications((note) => {
        seen.push(note.method);
        return note.method !== 'notifications/cancelled';
      })
      .useNotifications((note) => {
        seen.push(`after ${note.method}`);
      });
    await withClient(server, { era }, async (client) => {
      const controller = new AbortController();
      const call = client.callTool('slow', {}, { signal: controller.signal });
      await sleep(100);
      controller.abort();
      assert.equal((await rejection(call)).kind, 'cancelled', 'the client gives up on its side');
      await sleep(500);
      assert.deepEqual(runs, [{ finished: true, aborted: false }], 'the tool ran to its end');
      assert.ok(seen.includes('notifications/cancelled'), JSON.stringify(seen));
      assert.ok(!seen.includes('after notifications/cancelled'), 'a stopped notification reaches no later hook');
    });
  });

  test(`client (${era}): a hook stops one progress update and changes another before onProgress`, async () => {
    const server = progressServer();
    await withClient(server, { era }, async (client) => {
      const seen = [];
      client
        .useNotifications((note) => {
          if (note.method !== 'notifications/progress') return;
          seen.push(note.params.progress);
          if (note.params.progress === 2) return false;
          if (note.params.progress === 3) note.params = { ...note.params, message: 'changed' };
          return true;
        })
        .useNotifications((note) => {
          // The second hook sees what the first left.
          if (note.method === 'notifications/progress' && note.params.progress === 3) {
            note.params.message += ' twice';
          }
        });
      const updates = [];
      const result = await client.callTool('steps', {}, { onProgress: (update) => updates.push(update) });
      assert.equal(result.content[0].text, 'done');
      assert.deepEqual(seen, [1, 2, 3]);
      assert.deepEqual(updates, [
        { progress: 1, total: 3, message: 'step 1' },
        { progress: 3, total: 3, message: 'changed twice' },
      ]);
    });
  });
}

test('server: a hook changes the params the server acts on (a cancellation for another request)', async () => {
  const { server, runs } = slowServer();
  server.useNotifications((note) => {
    if (note.method === 'notifications/cancelled') note.params.requestId = 'nobody';
  });
  await withClient(server, { era: 'legacy' }, async (client) => {
    const controller = new AbortController();
    const call = client.callTool('slow', {}, { signal: controller.signal });
    await sleep(100);
    controller.abort();
    assert.equal((await rejection(call)).kind, 'cancelled');
    await sleep(500);
    assert.deepEqual(runs, [{ finished: true, aborted: false }]);
  });
});

test('client: a throwing hook, or one returning a promise, lets the notification through, with a warning', async () => {
  await withWarnings(async (warnings) => {
    const server = progressServer();
    await withClient(server, {}, async (client) => {
      let calls = 0;
      client.useNotifications((note) => {
        if (note.method !== 'notifications/progress') return;
        calls += 1;
        if (note.params.progress === 1) throw new RangeError('hook broke');
        if (note.params.progress === 2) return Promise.reject(new Error('async hooks are not waited for'));
        note.params.message = 'changed';
        return true;
      });
      const updates = [];
      await client.callTool('steps', {}, { onProgress: (update) => updates.push(update) });
      assert.equal(calls, 3);
      assert.deepEqual(updates, [
        { progress: 1, total: 3, message: 'step 1' },
        { progress: 2, total: 3, message: 'step 2' },
        { progress: 3, total: 3, message: 'changed' },
      ]);
    });
    const ours = warnings.filter((w) => w.target === 'ferromcp_node::notifications');
    assert.equal(ours.length, 2, JSON.stringify(warnings));
    assert.match(ours[0].message, /RangeError: hook broke/);
    assert.match(ours[0].message, /notifications\/progress/);
    assert.match(ours[1].message, /promise/);
  });
});

test('server: a throwing hook lets notifications/initialized through; changing the method is refused', async () => {
  await withWarnings(async (warnings) => {
    const server = progressServer();
    server.useNotifications((note) => {
      // Module code is strict: assigning the read-only method throws.
      note.method = 'notifications/other';
    });
    server.useNotifications(() => {
      throw new Error('no');
    });
    const seen = [];
    server.useNotifications((note) => {
      seen.push(note.method);
    });
    await withClient(server, { era: 'legacy' }, async (client) => {
      assert.equal((await client.callTool('echo', {})).content[0].text, '{}');
    });
    assert.deepEqual(seen, ['notifications/initialized'], 'the next hook still sees it');
    assert.equal(warnings.filter((w) => /Error: no/.test(w.message)).length, 1, JSON.stringify(warnings));
    assert.equal(warnings.filter((w) => /TypeError: .*read[- ]only/.test(w.message)).length, 1, JSON.stringify(warnings));
  });
});

test('client: a hook that does not answer within 1000 ms lets the notification through unchanged', async () => {
  await withWarnings(async (warnings) => {
    const server = progressServer();
    await withClient(server, {}, async (client) => {
      let calls = 0;
      client.useNotifications((note) => {
        if (note.method !== 'notifications/progress') return;
        calls += 1;
        if (note.params.progress === 1) {
          // Keeps this thread busy past the wait.
          const until = Date.now() + 1300;
          while (Date.now() < until);
        }
        note.params.message = 'changed';
      });
      const updates = [];
      await client.callTool('steps', {}, { onProgress: (update) => updates.push(update) });
      assert.deepEqual(
        updates.map((u) => u.message),
        ['step 1', 'changed', 'changed'],
      );
      assert.ok(calls >= 3);
    });
    assert.ok(
      warnings.some((w) => /did not answer within 1000 ms/.test(w.message)),
      JSON.stringify(warnings),
    );
  });
});

test('server: a notification that arrives while this thread is blocked goes on without the hook, which is not called late', async () => {
  await withWarnings(async (warnings) => {
    const server = progressServer();
    const seen = [];
    server.useNotifications((note) => {
      seen.push(note.method);
      return false;
    });
    await withClient(server, { era: 'legacy' }, async (client) => {
      // The handshake (initialize, then notifications/initialized) and
      // tools/list need no JavaScript: they go on while this thread is
      // blocked, and the hook's wait ends.
      const listed = client.listTools();
      const until = Date.now() + 1600;
      while (Date.now() < until);
      assert.ok((await listed).tools.some((tool) => tool.name === 'echo'));
      await sleep(50);
      assert.deepEqual(seen, [], 'the hook is not called once the notification went on');
      assert.equal(client.isLegacy, true);
    });
    assert.ok(
      warnings.some((w) => /notifications\/initialized: the hook did not answer within 1000 ms/.test(w.message)),
      JSON.stringify(warnings),
    );
  });
});

/** Serves `server` over HTTP on a free port; resolves the endpoint URL. */
function listen(server) {
  return new Promise((resolve, reject) => {
    server.serveHttp({ port: 0, handleSignals: false, onListening: ({ url }) => resolve(url) }).catch(reject);
  });
}

test('over HTTP, in both protocol eras: server and client hooks', async (t) => {
  const server = progressServer();
  const serverSaw = [];
  server.useNotifications((note) => {
    serverSaw.push(note.method);
  });
  const url = await listen(server);
  t.after(() => server.close());
  for (const era of ERAS) {
    serverSaw.length = 0;
    const client = await Client.http(url, { era });
    try {
      client.useNotifications((note) => {
        if (note.method !== 'notifications/progress') return;
        if (note.params.progress === 2) return false;
        note.params.message = `${era} ${note.params.message}`;
      });
      const updates = [];
      await client.callTool('steps', {}, { onProgress: (update) => updates.push(update.message) });
      assert.deepEqual(updates, [`${era} step 1`, `${era} step 3`], era);
      assert.equal(client.isLegacy, era === 'legacy', era);
      assert.deepEqual(serverSaw, era === 'legacy' ? ['notifications/initialized'] : [], era);
    } finally {
      await client.close();
    }
  }
});

test('useNotifications refuses what is not a function', () => {
  const server = new Server({ name: 'x', version: '1' });
  assert.throws(() => server.useNotifications(/** @type {any} */ ('nope')), TypeError);
});
