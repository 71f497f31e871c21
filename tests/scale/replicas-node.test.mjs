// Two replicas of a Node server on one real Redis (issue 29): the event bus,
// the task store, the seal keys, the replica name and the health endpoints,
// set through the Node API (`new Server({ eventBus, replica, sealKeys,
// tasks: { store } })`, `serveHttp({ health, drainDelayMs })`).
//
// Run by `make test-scale` (which installs Debian's redis-server):
//   node --test tests/scale/replicas-node.test.mjs

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import net from 'node:net';

import { Client, Server } from '../../bindings-node/index.mjs';

const WATCHED = 'mem://watched';
// One key for both replicas: what one seals, the other opens.
const SEAL_KEY = Buffer.from('scale-test-seal-key-of-32-bytes!').toString('base64');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const freePort = () =>
  new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });

let redis;
let redisUrl;
const replicas = [];

before(async () => {
  const redisServer = execFileSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).trim();
  const port = await freePort();
  redis = spawn(redisServer, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  redisUrl = `redis://127.0.0.1:${port}`;
  for (let tries = 0; ; tries++) {
    const up = await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => resolve(socket.end() && true));
      socket.once('error', () => resolve(false));
    });
    if (up) break;
    assert.ok(tries < 300, 'redis-server did not start');
    await sleep(50);
  }
  for (const name of ['js1', 'js2']) {
    const replica = { name, aborted: false };
    const server = new Server({
      name: 'replicated',
      version: '1.0.0',
      eventBus: redisUrl,
      replica: name,
      sealKeys: [SEAL_KEY],
      tasks: { store: redisUrl },
    });
    server.resource(WATCHED, {}, () => 'watched');
    server.tool('wait', { task: true }, async (_, ctx) => {
      await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
      replica.aborted = true;
      return 'cancelled';
    });
    replica.server = server;
    await new Promise((resolve, reject) => {
      replica.served = server.serveHttp({
        port: 0,
        health: true,
        drainDelayMs: 200,
        handleSignals: false,
        onListening: (address) => resolve((replica.address = address)),
      });
      replica.served.catch(reject);
    });
    replicas.push(replica);
  }
});

after(async () => {
  for (const replica of replicas) {
    replica.server.close();
    await replica.served;
  }
  redis?.kill();
});

test('a change on one replica reaches a listen stream on the other', async () => {
  const [a, b] = replicas;
  const client = await Client.http(b.address.url);
  try {
    const subscription = client.listen({ resourceSubscriptions: [WATCHED] });
    await subscription.acknowledged();
    const notes = subscription[Symbol.asyncIterator]();
    // The bus connects lazily: announce until B's stream hears it.
    const deadline = Date.now() + 15_000;
    let heard;
    while (!heard) {
      a.server.notifyResourceUpdated(WATCHED);
      heard = await Promise.race([notes.next(), sleep(300).then(() => undefined)]);
      assert.ok(heard || Date.now() < deadline, 'never heard');
    }
    assert.equal(heard.value.method, 'notifications/resources/updated');
    assert.equal(heard.value.params.uri, WATCHED);
    subscription.close();
  } finally {
    await client.close();
  }
});

test('a task made on one replica is read and cancelled through the other', async () => {
  const [a, b] = replicas;
  const onA = await Client.http(a.address.url);
  const onB = await Client.http(b.address.url);
  try {
    const task = await onA.startToolTask('wait');
    assert.ok(task.id);
    const throughB = onB.toolTask(task.id);
    assert.equal((await throughB.refresh()).status, 'working');
    await throughB.cancel();
    const deadline = Date.now() + 15_000;
    while (!a.aborted) {
      assert.ok(Date.now() < deadline, 'the handler on A saw no cancel');
      await sleep(20);
    }
    assert.equal(b.aborted, false);
    let state;
    while ((state = await throughB.refresh()).status !== 'cancelled') {
      assert.ok(Date.now() < deadline, JSON.stringify(state));
      await sleep(20);
    }
  } finally {
    await onA.close();
    await onB.close();
  }
});

test('legacy sessions carry the replica name, and health answers', async () => {
  const [a] = replicas;
  const response = await fetch(a.address.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    }),
  });
  await response.text();
  assert.equal(response.status, 200);
  assert.match(response.headers.get('mcp-session-id') ?? '', /^js1\./);
  const base = a.address.url.replace(/\/mcp$/, '');
  assert.deepEqual(await (await fetch(`${base}/healthz`)).json(), { status: 'ok' });
  assert.deepEqual(await (await fetch(`${base}/readyz`)).json(), { status: 'ready' });
});

test('bad replica options are refused', () => {
  assert.throws(() => new Server({ name: 'x', version: '1', replica: 'r1.bad' }), /replica name/);
  assert.throws(() => new Server({ name: 'x', version: '1', eventBus: 'kafka://nowhere' }), /eventBus/);
});
