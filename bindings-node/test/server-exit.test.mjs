// A stdio server that exits while a call waits is a closed connection
// (kind "closed", core's classification), not a protocol error, and the
// error carries the last lines of its stderr.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { Client, McpError } from '../index.mjs';

test('a stdio server that exits rejects the waiting call with kind "closed"', async () => {
  // Reads the first request, says why it gives up, exits unanswered.
  const client = await Client.stdio({
    command: 'sh',
    args: ['-c', "read -r request; echo 'fatal: no config file' >&2; exit 3"],
  });
  try {
    await assert.rejects(client.discover(), (err) => {
      assert.ok(err instanceof McpError, String(err));
      assert.equal(err.kind, 'closed');
      assert.match(err.message, /fatal: no config file/);
      return true;
    });
  } finally {
    await client.close();
  }
});
