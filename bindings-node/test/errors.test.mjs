// Errors from the core surface as McpError (extends Error, with code and
// data); misuse of the facade as TypeError.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

import * as esm from '../index.mjs';

const cjs = createRequire(import.meta.url)('../index.js');

test('the ESM and CommonJS entries are the same module', () => {
  assert.equal(esm.Server, cjs.Server);
  assert.equal(esm.McpError, cjs.McpError);
});

test('McpError carries code and data', () => {
  const error = new esm.McpError('gone', { code: -32002, data: { uri: 'x' } });
  assert.ok(error instanceof Error);
  assert.equal(error.name, 'McpError');
  assert.equal(error.message, 'gone');
  assert.equal(error.code, -32002);
  assert.deepEqual(error.data, { uri: 'x' });
  assert.equal(new esm.McpError('plain').code, -32603);
});

test('invalid server info is an McpError', () => {
  assert.throws(
    () => new esm.Server({ version: '1.0.0' }),
    (error) => error instanceof esm.McpError && error.code === -32602 && error.data.kind === 'invalidDefinition',
  );
  assert.throws(() => new esm.Server(), TypeError);
});

test('an invalid tool definition is an McpError and registers nothing', () => {
  const server = new esm.Server({ name: 'x', version: '1' });
  assert.throws(
    () => server.tool('bad', { inputSchema: { type: 'object', properties: 5 } }, () => null),
    (error) => {
      assert.ok(error instanceof esm.McpError, String(error));
      assert.equal(error.code, -32602);
      assert.equal(error.data.kind, 'invalidDefinition');
      return true;
    },
  );
  assert.deepEqual(server.toolNames, []);
});

test('a handler that is not a function is a TypeError', () => {
  const server = new esm.Server({ name: 'x', version: '1' });
  assert.throws(() => server.tool('t', {}, 'nope'), TypeError);
});

test('tools can be listed, replaced and removed', () => {
  const server = new esm.Server({ name: 'x', version: '1' });
  server.tool('a', {}, () => 1).tool('b', {}, () => 2).tool('a', { description: 'again' }, () => 3);
  assert.deepEqual(server.toolNames, ['a', 'b']);
  assert.equal(server.removeTool('a'), true);
  assert.equal(server.removeTool('a'), false);
  assert.deepEqual(server.toolNames, ['b']);
});
