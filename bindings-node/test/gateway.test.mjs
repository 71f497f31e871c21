// Gateway (core's gateway module, issue 30) from JS: server.mount(prefix,
// upstream) with another Server object or a connected Client,
// Server.proxy(client), Mount.unmount(), and the prefix check. Every
// downstream check goes through a real client over HTTP.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { Server, Client, Mount } from '../index.mjs';

/** Serves `server` over HTTP on a free port; resolves with its URL and a stop function. */
async function serve(server) {
  let url;
  const serving = server.serveHttp({ port: 0, handleSignals: false, onListening: (a) => (url = a.url) });
  // A failed bind rejects `serving`: race it so the wait below ends.
  const failed = serving.then(() => {
    throw new Error('stopped before listening');
  });
  while (!url) await Promise.race([new Promise((r) => setTimeout(r, 5)), failed]);
  failed.catch(() => {});
  return {
    url,
    stop: async () => {
      server.close();
      await serving;
    },
  };
}

/** A server of its own with one tool, one resource and one prompt, named by `who`. */
function inner(who) {
  return new Server({ name: who, version: '1.0.0' })
    .tool(
      'echo',
      { inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
      ({ text }) => `${who}: ${text}`,
    )
    .resource('mem://r', { mimeType: 'text/plain' }, () => `${who} resource`)
    .prompt(
      'greet',
      { arguments: [{ name: 'lang', required: true, complete: (value) => ['en', 'eo'].filter((v) => v.startsWith(value)) }] },
      ({ lang }) => `hello in ${lang}`,
    );
}

/** `server` served over HTTP with a client connected to it; `done()` ends both. */
async function downstream(server) {
  const served = await serve(server);
  const client = await Client.http(served.url);
  return {
    client,
    done: async () => {
      await client.close();
      await served.stop();
    },
  };
}

const textOf = (result) => result.content.map((block) => block.text).join('');
const toolNames = async (client) => (await client.listTools()).tools.map((tool) => tool.name).sort();

/** Polls `check` (an async predicate) for up to 5 s. */
async function eventually(check, what) {
  for (let i = 0; i < 250; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`timed out waiting until ${what}`);
}

test('gateway:mount:server: another Server object under "alpha" serves its tools, resources and prompts', async () => {
  const outer = new Server({ name: 'outer', version: '1.0.0' }).tool('own', () => 'outer own');
  const mount = await outer.mount('alpha', inner('inner'));
  assert.ok(mount instanceof Mount);
  assert.deepEqual([...outer.toolNames].sort(), ['alpha_echo', 'own']);
  const { client, done } = await downstream(outer);
  try {
    assert.deepEqual(await toolNames(client), ['alpha_echo', 'own']);
    assert.equal(textOf(await client.callTool('alpha_echo', { text: 'hi' })), 'inner: hi');
    assert.equal(textOf(await client.callTool('own')), 'outer own');

    const { resources } = await client.listResources();
    assert.deepEqual(
      resources.map((r) => r.uri),
      ['alpha+mem://r'],
    );
    const read = await client.readResource('alpha+mem://r');
    assert.equal(read.contents[0].text, 'inner resource');
    assert.equal(read.contents[0].uri, 'alpha+mem://r');

    const { prompts } = await client.listPrompts();
    assert.deepEqual(
      prompts.map((p) => p.name),
      ['alpha_greet'],
    );
    const prompt = await client.getPrompt('alpha_greet', { lang: 'eo' });
    assert.equal(prompt.messages[0].content.text, 'hello in eo');
  } finally {
    await done();
  }
});

test('gateway:mount:follow: a tool added to the mounted Server later appears, one removed goes', async () => {
  const upstream = inner('inner');
  const outer = new Server({ name: 'outer', version: '1.0.0' });
  await outer.mount('alpha', upstream);
  upstream.tool('late', () => 'late answer');
  await eventually(async () => outer.toolNames.includes('alpha_late'), 'alpha_late is mounted');
  const { client, done } = await downstream(outer);
  try {
    assert.equal(textOf(await client.callTool('alpha_late')), 'late answer');
    upstream.removeTool('echo');
    await eventually(async () => !(await toolNames(client)).includes('alpha_echo'), 'alpha_echo is gone');
    assert.deepEqual(await toolNames(client), ['alpha_late']);
  } finally {
    await done();
  }
});

test('gateway:mount:completion: the mount completes its prompts and JS completers added later still answer', async () => {
  const outer = new Server({ name: 'outer', version: '1.0.0' });
  await outer.mount('alpha', inner('inner'));
  outer.prompt('own', { arguments: [{ name: 'x', complete: () => ['x1', 'x2'] }] }, () => 'own');
  const { client, done } = await downstream(outer);
  try {
    const mounted = await client.complete({ ref: { type: 'ref/prompt', name: 'alpha_greet' }, argument: { name: 'lang', value: 'e' } });
    assert.deepEqual(mounted.completion.values, ['en', 'eo']);
    const own = await client.complete({ ref: { type: 'ref/prompt', name: 'own' }, argument: { name: 'x', value: '' } });
    assert.deepEqual(own.completion.values, ['x1', 'x2']);
  } finally {
    await done();
  }
});

test('gateway:mount:client: a Client connected to another server, under "beta"', async () => {
  const upstream = await serve(inner('remote'));
  const upstreamClient = await Client.http(upstream.url);
  const outer = new Server({ name: 'outer', version: '1.0.0' });
  const mount = await outer.mount('beta', upstreamClient);
  const { client, done } = await downstream(outer);
  try {
    assert.deepEqual(await toolNames(client), ['beta_echo']);
    assert.equal(textOf(await client.callTool('beta_echo', { text: 'via client' })), 'remote: via client');
    const read = await client.readResource('beta+mem://r');
    assert.equal(read.contents[0].text, 'remote resource');
  } finally {
    mount.unmount();
    await done();
    await upstreamClient.close();
    await upstream.stop();
  }
});

test('gateway:proxy: Server.proxy(client) serves the upstream under its own names', async () => {
  const upstream = await serve(inner('proxied').tool('second', () => 'two'));
  const upstreamClient = await Client.http(upstream.url);
  const proxy = await Server.proxy(upstreamClient);
  assert.ok(proxy instanceof Server);
  assert.deepEqual([...proxy.toolNames].sort(), ['echo', 'second']);
  const { client, done } = await downstream(proxy);
  try {
    assert.deepEqual(await toolNames(client), ['echo', 'second']);
    assert.equal(textOf(await client.callTool('echo', { text: 'through' })), 'proxied: through');
    const discovered = await client.discover();
    assert.deepEqual(discovered._meta['io.modelcontextprotocol/serverInfo'], { name: 'proxied', version: '1.0.0' });
    const read = await client.readResource('mem://r');
    assert.equal(read.contents[0].text, 'proxied resource');
  } finally {
    await done();
    await upstreamClient.close();
    await upstream.stop();
  }
});

test('gateway:mount:prefix: a bad prefix or upstream rejects, and nothing is mounted', async () => {
  const outer = new Server({ name: 'outer', version: '1.0.0' });
  const upstream = inner('inner');
  await assert.rejects(outer.mount('a b', upstream), /invalid mount prefix/);
  await assert.rejects(outer.mount('1abc', upstream), /invalid mount prefix/);
  await assert.rejects(outer.mount('self', outer), /mounted in itself/);
  await assert.rejects(outer.mount('a b', /** @type {any} */ (null)), TypeError);
  await assert.rejects(outer.mount('ok', /** @type {any} */ ({ url: 'x' })), TypeError);
  await assert.rejects(Server.proxy(/** @type {any} */ (upstream)), TypeError);
  assert.deepEqual(outer.toolNames, []);
  // A prefix with '_' is written '-' in URIs.
  const good = await outer.mount('my_files', upstream);
  assert.deepEqual(outer.toolNames, ['my_files_echo']);
  const { client, done } = await downstream(outer);
  try {
    assert.equal((await client.readResource('my-files+mem://r')).contents[0].text, 'inner resource');
  } finally {
    good.unmount();
    await done();
  }
});

test('gateway:unmount: unmount() removes what the mount added, and only that', async () => {
  const outer = new Server({ name: 'outer', version: '1.0.0' }).tool('own', () => 'own');
  const alpha = await outer.mount('alpha', inner('a'));
  const beta = await outer.mount('beta', inner('b'));
  const { client, done } = await downstream(outer);
  try {
    assert.deepEqual(await toolNames(client), ['alpha_echo', 'beta_echo', 'own']);
    alpha.unmount();
    assert.deepEqual([...outer.toolNames].sort(), ['beta_echo', 'own']);
    assert.deepEqual(await toolNames(client), ['beta_echo', 'own']);
    assert.deepEqual(
      (await client.listResources()).resources.map((r) => r.uri),
      ['beta+mem://r'],
    );
    const gone = await client.callTool('alpha_echo', { text: 'x' }).then(
      (result) => result,
      (error) => error,
    );
    assert.ok(gone instanceof Error || gone.isError === true, `alpha_echo still answers: ${JSON.stringify(gone)}`);
    alpha.unmount(); // a second call does nothing
    beta.unmount();
    assert.deepEqual(outer.toolNames, ['own']);
    assert.deepEqual(await toolNames(client), ['own']);
  } finally {
    await done();
  }
});
