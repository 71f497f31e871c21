// The Node echo example (examples/node/echo-server.mjs), tested as the README
// says a server is tested: imported (it then serves nothing) and driven by
// Client.inMemory, no process, no socket. The conformance suite runs the same
// file as a process (examples/manifest.json).

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { Client } from '../index.mjs';
import { server } from '../../examples/node/echo-server.mjs';

test('the echo example echoes, adds, and says why it cannot', async () => {
  const client = await Client.inMemory(server);
  try {
    const names = (await client.listTools()).tools.map((tool) => tool.name).sort();
    assert.deepEqual(names, ['add', 'echo']);
    assert.equal((await client.callTool('echo', { text: 'hi' })).content[0].text, 'hi');
    const sum = await client.callTool('add', { a: 2, b: 3 });
    assert.deepEqual(sum.structuredContent, { result: 5 });
    // Tool errors the model can read, not protocol errors.
    const tooLarge = await client.callTool('add', { a: Number.MAX_SAFE_INTEGER, b: 2 });
    assert.equal(tooLarge.isError, true);
    assert.match(tooLarge.content[0].text, /too large/);
    assert.equal((await client.callTool('add', { a: 'two', b: 3 })).isError, true);
  } finally {
    await client.close();
  }
});
