// End-to-end: the examples/node/echo-server.mjs walking skeleton, driven over
// stdio and over Streamable HTTP exactly as examples/manifest.json starts it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';

import { StdioClient, REPO_ROOT, postMcp, exitWithin } from '../test-support/helpers.mjs';

const EXAMPLE = 'examples/node/echo-server.mjs';

test('echo server over stdio: tools/list and tools/call', async (t) => {
  const client = new StdioClient(EXAMPLE);
  t.after(() => client.kill());

  const list = await client.send('tools/list');
  assert.equal(list.error, undefined, JSON.stringify(list.error));
  const tools = list.result.tools;
  assert.deepEqual(tools.map((tool) => tool.name), ['echo', 'add']);
  assert.equal(tools[0].description, 'Returns the text unchanged.');
  assert.deepEqual(tools[0].inputSchema, {
    type: 'object',
    properties: { text: { type: 'string' } },
    required: ['text'],
  });
  assert.equal(tools[1].description, 'Adds two integers.');
  assert.deepEqual(tools[1].outputSchema, {
    type: 'object',
    properties: { result: { type: 'integer' } },
    required: ['result'],
  });

  const echo = await client.callTool('echo', { text: 'hello' });
  assert.deepEqual(echo.content, [{ type: 'text', text: 'hello' }]);
  assert.notEqual(echo.isError, true);

  const add = await client.callTool('add', { a: 2, b: 3 });
  assert.deepEqual(add.structuredContent, { result: 5 });
  assert.deepEqual(add.content, [{ type: 'text', text: '5' }]);
  assert.notEqual(add.isError, true);

  // core validates arguments against inputSchema before the handler runs
  const invalid = await client.send('tools/call', { name: 'add', arguments: { a: 'x', b: 3 } });
  assert.ok(invalid.error || invalid.result?.isError, JSON.stringify(invalid));

  // nothing but MCP on stdout; EOF on stdin ends the server cleanly
  const { code } = await client.close();
  assert.equal(code, 0, client.stderr);
  assert.deepEqual(client.stray, []);
});

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

test('echo server over HTTP: --http PORT serves /mcp until SIGTERM', async (t) => {
  const port = await freePort();
  const child = spawn(process.execPath, [EXAMPLE, '--http', String(port)], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => child.kill('SIGKILL'));
  let stderr = '';
  child.stderr.setEncoding('utf8');
  await new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      if (stderr.includes('listening on')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code} before listening:\n${stderr}`)));
  });
  const url = `http://127.0.0.1:${port}/mcp`;

  const add = await postMcp(url, 1, 'tools/call', { name: 'add', arguments: { a: 2, b: 3 } }, { name: 'add' });
  assert.equal(add.status, 200);
  assert.deepEqual(add.body.result.structuredContent, { result: 5 });

  const echo = await postMcp(url, 2, 'tools/call', { name: 'echo', arguments: { text: 'hi' } }, { name: 'echo' });
  assert.deepEqual(echo.body.result.content, [{ type: 'text', text: 'hi' }]);

  child.kill('SIGTERM');
  const { code } = await exitWithin(child, 5_000);
  assert.equal(code, 0, stderr);
});
