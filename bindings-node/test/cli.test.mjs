// The package's `ferromcp` command (bin/ferromcp.js): the Rust command line
// run by the addon's cliMain, and `run FILE`, which serves the Server a
// module exports (over stdio, Streamable HTTP, or behind the command line's
// reloading proxy).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { Client } from 'ferromcp';
import { REPO_ROOT, StdioClient, exitWithin } from '../test-support/helpers.mjs';

const BIN = 'bindings-node/bin/ferromcp.js';
const FIXTURE = 'bindings-node/test-support/cli-fixture.mjs';
const NO_SERVER = 'bindings-node/test-support/cli-no-server.mjs';
// What `--stdio` starts: split on whitespace by the command line.
const RUN_FIXTURE = `${process.execPath} ${BIN} run ${FIXTURE}`;

/** Runs the bin with `args` from the repository root: `{ code, stdout, stderr }`. */
function ferromcp(args, { timeout = 30_000 } = {}) {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: REPO_ROOT, timeout }, (error, stdout, stderr) => {
      resolve({ code: error ? error.code : 0, signal: error?.signal, stdout, stderr });
    });
  });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** Resolves once `child` wrote `text` to stderr; rejects if it exits first. */
function stderrSays(child, text) {
  let stderr = '';
  child.stderr.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      if (stderr.includes(text)) resolve(stderr);
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code} before "${text}":\n${stderr}`)));
  });
}

test('--version and --help are the command line\'s, and --help lists run', async () => {
  const version = await ferromcp(['--version']);
  assert.equal(version.code, 0, version.stderr);
  assert.match(version.stdout, /^ferromcp \d+\.\d+\.\d+\n$/);

  const help = await ferromcp(['--help']);
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout, /Usage: ferromcp <COMMAND>/);
  assert.match(help.stdout, /\n {2}tools +/);
  assert.match(help.stdout, /\n {2}run +Serve the Server a JavaScript module exports/);

  const runHelp = await ferromcp(['run', '--help']);
  assert.equal(runHelp.code, 0, runHelp.stderr);
  assert.match(runHelp.stdout, /Usage: ferromcp run \[OPTIONS\] <FILE\[:NAME\]>/);
  assert.match(runHelp.stdout, /--reload/);
});

test('tools and call through the bin, against `run FILE` of the same bin over stdio', async () => {
  const tools = await ferromcp(['tools', '--stdio', RUN_FIXTURE]);
  assert.equal(tools.code, 0, tools.stderr);
  assert.equal(tools.stdout, 'greet\tGreets someone.\n');

  const call = await ferromcp(['call', '--stdio', RUN_FIXTURE, 'greet', '{"name":"Ada"}']);
  assert.equal(call.code, 0, call.stderr);
  const result = JSON.parse(call.stdout);
  assert.deepEqual(result.content, [{ type: 'text', text: 'Hello, Ada!' }]);
  assert.equal(result._meta['io.modelcontextprotocol/serverInfo'].name, 'cli-fixture');

  // A failing command is the command line's status 1, its error on stderr.
  const missing = await ferromcp(['call', '--stdio', RUN_FIXTURE, 'nope', '{}']);
  assert.equal(missing.code, 1, missing.stderr);
  assert.match(missing.stderr, /^ferromcp: /m);
});

test('run over stdio: stdout carries only the protocol, the module\'s console.log goes to stderr', async (t) => {
  const client = new StdioClient(BIN, ['run', FIXTURE]);
  t.after(() => client.kill());
  const result = await client.callTool('greet', { name: 'Bo' });
  assert.deepEqual(result.content, [{ type: 'text', text: 'Hello, Bo!' }]);
  const { code } = await client.close();
  assert.equal(code, 0, client.stderr);
  assert.deepEqual(client.stray, []);
  assert.match(client.stderr, /cli-fixture loaded/);
});

test('run --http PORT serves at http://127.0.0.1:PORT/mcp until SIGTERM', async (t) => {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'run', FIXTURE, '--http', String(port)], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  t.after(() => child.kill('SIGKILL'));
  const url = `http://127.0.0.1:${port}/mcp`;
  await stderrSays(child, `serving ${url}`);

  const client = await Client.http(url);
  try {
    const tools = [];
    for await (const tool of client.tools()) tools.push(tool.name);
    assert.deepEqual(tools, ['greet']);
    const result = await client.callTool('greet', { name: 'Cy' });
    assert.deepEqual(result.content, [{ type: 'text', text: 'Hello, Cy!' }]);
  } finally {
    await client.close();
  }

  child.kill('SIGTERM');
  const { code } = await exitWithin(child, 10_000);
  assert.equal(code, 0);
});

test('run: a module exporting no Server is a clear error, status 1', async () => {
  const { code, stdout, stderr } = await ferromcp(['run', NO_SERVER]);
  assert.equal(code, 1, stderr);
  assert.equal(stdout, '');
  assert.match(stderr, /ferromcp run: .*cli-no-server\.mjs exports no Server \(its exports: answer \(number\), helper \(function\)\)/);
  assert.match(stderr, /export default server/);
});

test('run: several Servers and none chosen, a file that does not load, a missing file', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'ferromcp-run-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const index = pathToFileURL(path.join(REPO_ROOT, 'bindings-node/index.mjs')).href;
  const several = path.join(dir, 'several.mjs');
  await writeFile(several, `import { Server } from ${JSON.stringify(index)};
export const a = new Server({ name: 'a', version: '1' });
export const b = new Server({ name: 'b', version: '1' });
b.tool('which', () => 'b');
export const label = 'two servers';
`);
  const both = await ferromcp(['run', several]);
  assert.equal(both.code, 1, both.stderr);
  assert.match(both.stderr, /exports several Servers \(a, b\): name the one to serve \(`ferromcp run .*several\.mjs:a`\)/);

  // FILE:NAME serves the export of that name...
  const named = await ferromcp(['call', '--stdio', `${process.execPath} ${BIN} run ${several}:b`, 'which', '{}']);
  assert.equal(named.code, 0, named.stderr);
  assert.deepEqual(JSON.parse(named.stdout).content, [{ type: 'text', text: 'b' }]);
  // ... and says so when there is none, or it is no Server.
  const unknown = await ferromcp(['run', `${several}:c`]);
  assert.equal(unknown.code, 1, unknown.stderr);
  assert.match(unknown.stderr, /ferromcp run: .*several\.mjs has no export named c \(its exports: a, b, label\)/);
  const notServer = await ferromcp(['run', `${several}:label`]);
  assert.equal(notServer.code, 1, notServer.stderr);
  assert.match(notServer.stderr, /ferromcp run: .*several\.mjs:label is not a Server \(string\)/);

  const broken = path.join(dir, 'broken.mjs');
  await writeFile(broken, 'export default {;\n');
  const syntax = await ferromcp(['run', broken]);
  assert.equal(syntax.code, 1, syntax.stderr);
  assert.match(syntax.stderr, /ferromcp run: cannot load .*broken\.mjs/);
  assert.match(syntax.stderr, /SyntaxError/);

  const absent = await ferromcp(['run', path.join(dir, 'absent.mjs')]);
  assert.equal(absent.code, 1, absent.stderr);
  assert.match(absent.stderr, /ferromcp run: no such file: .*absent\.mjs/);
});

test('run: a CommonJS module\'s `module.exports = { server }` is served', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'ferromcp-run-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'server.cjs');
  await writeFile(file, `const { Server } = require(${JSON.stringify(path.join(REPO_ROOT, 'bindings-node/index.js'))});
const server = new Server({ name: 'cjs', version: '1' });
server.tool('ping', () => 'pong');
module.exports = { server, other: 1 };
`);
  const call = await ferromcp(['call', '--stdio', `${process.execPath} ${BIN} run ${file}`, 'ping', '{}']);
  assert.equal(call.code, 0, call.stderr);
  assert.deepEqual(JSON.parse(call.stdout).content, [{ type: 'text', text: 'pong' }]);
});

test('usage errors exit 2 with the usage on stderr', async () => {
  const unknown = await ferromcp(['frobnicate']);
  assert.equal(unknown.code, 2);
  assert.equal(unknown.stdout, '');
  assert.match(unknown.stderr, /unrecognized subcommand 'frobnicate'/);
  assert.match(unknown.stderr, /Usage: ferromcp <COMMAND>/);

  for (const args of [['run'], ['run', FIXTURE, '--port', '1'], ['run', FIXTURE, '--http', 'x'],
    ['run', FIXTURE, '--host', '0.0.0.0'], ['run', FIXTURE, FIXTURE]]) {
    const { code, stdout, stderr } = await ferromcp(args);
    assert.equal(code, 2, `${args.join(' ')}: ${stderr}`);
    assert.equal(stdout, '');
    assert.match(stderr, /^error: .*\n\nUsage: ferromcp run \[OPTIONS\] <FILE\[:NAME\]>/, args.join(' '));
  }
});

/**
 * A server module for the reload test: the export `app`'s `version`
 * answers `label`; a second Server beside it, so that only `FILE:app`
 * names what to serve.
 */
function reloadingModule(label, extraTool) {
  const index = pathToFileURL(path.join(REPO_ROOT, 'bindings-node/index.mjs')).href;
  return `import { Server } from ${JSON.stringify(index)};
const server = new Server({ name: 'reloading', version: '1.0.0' });
server.tool('version', () => ${JSON.stringify(label)});
${extraTool ? `server.tool(${JSON.stringify(extraTool)}, () => 'new');` : ''}
export const app = server;
export const other = new Server({ name: 'other', version: '1.0.0' });
`;
}

/** Polls `check` until it returns a value other than undefined (errors count as not yet). */
async function eventually(check, ms, what) {
  const deadline = Date.now() + ms;
  let last;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (e) {
      last = e;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${what} not seen within ${ms} ms${last ? `: ${last.message}` : ''}`);
}

test('run FILE:NAME --reload: an edit restarts the server behind a connection that stays open', async (t) => {
  const help = await ferromcp(['proxy', '--help']);
  if (!help.stdout.includes('--reload')) {
    t.skip('the command line\'s proxy has no --reload yet');
    return;
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'ferromcp-reload-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'server.mjs');
  await writeFile(file, reloadingModule('first'));

  const client = await Client.stdio({
    command: process.execPath,
    args: [path.join(REPO_ROOT, BIN), 'run', `${file}:app`, '--reload'],
    cwd: REPO_ROOT,
  });
  t.after(() => client.close());
  const first = await client.callTool('version', {});
  assert.deepEqual(first.content, [{ type: 'text', text: 'first' }]);
  const changes = client.listen({ toolsListChanged: true })[Symbol.asyncIterator]();
  const changed = changes.next();

  await writeFile(file, reloadingModule('second, edited', 'added'));
  // The proxy tells the client the tool list changed...
  let timer;
  const note = await Promise.race([
    changed,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error('no list change within 15 s')), 15_000);
    }),
  ]).finally(() => clearTimeout(timer));
  assert.equal(note.value.method, 'notifications/tools/list_changed');
  await changes.return?.();
  // ... and the same connection now reaches the new server.
  const tools = await eventually(async () => {
    const names = [];
    for await (const tool of client.tools()) names.push(tool.name);
    return names.includes('added') ? names : undefined;
  }, 15_000, 'the edited tool list');
  assert.deepEqual(tools.sort(), ['added', 'version']);
  const second = await client.callTool('version', {});
  assert.deepEqual(second.content, [{ type: 'text', text: 'second, edited' }]);
});

test('run FILE:NAME --reload --http PORT: served through the proxy, stopped by SIGTERM with status 0', async (t) => {
  const help = await ferromcp(['proxy', '--help']);
  if (!help.stdout.includes('--reload')) {
    t.skip('the command line\'s proxy has no --reload yet');
    return;
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'ferromcp-reload-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'server.mjs');
  await writeFile(file, reloadingModule('over http'));
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'run', `${file}:app`, '--reload', '--http', String(port)], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  t.after(() => child.kill('SIGKILL'));
  const url = `http://127.0.0.1:${port}/mcp`;
  await stderrSays(child, `serving ${url}`);

  const client = await Client.http(url);
  try {
    const result = await eventually(() => client.callTool('version', {}), 10_000, 'the first answer');
    assert.deepEqual(result.content, [{ type: 'text', text: 'over http' }]);
  } finally {
    await client.close();
  }

  // The command line's proxy owns SIGTERM in this process: it drains and
  // returns, and the bin exits with its status (Node's own handler, chained
  // to, would re-raise the signal into the proxy's handler forever).
  child.kill('SIGTERM');
  const { code, signal } = await exitWithin(child, 15_000);
  assert.deepEqual({ code, signal }, { code: 0, signal: null });
});
