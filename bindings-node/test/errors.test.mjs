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

test('codes and error kinds come from the core', () => {
  assert.equal(esm.codes, cjs.codes);
  assert.deepEqual(
    Object.values(esm.codes).sort((a, b) => a - b),
    [-32700, -32603, -32602, -32601, -32600, -32042, -32022, -32021, -32020, -32002],
  );
  assert.equal(esm.codes.HEADER_MISMATCH, -32020);
  assert.equal(esm.codes.MISSING_REQUIRED_CLIENT_CAPABILITY, -32021);
  assert.equal(esm.codes.UNSUPPORTED_PROTOCOL_VERSION, -32022);
  assert.ok(Object.isFrozen(esm.codes));
  for (const kind of ['peerError', 'io', 'json', 'http', 'httpStatus', 'protocol', 'invalidDefinition', 'closed', 'timeout', 'cancelled']) {
    assert.ok(esm.ERROR_KINDS.includes(kind), kind);
  }
});

test('a core failure carries the kind the core classified it as', () => {
  const server = new esm.Server({ name: 'x', version: '1' });
  assert.throws(
    () => server.tool('bad', { inputSchema: { type: 'object', properties: 5 } }, () => null),
    (error) => error instanceof esm.McpError && error.kind === 'invalidDefinition' && error.code === esm.codes.INVALID_PARAMS,
  );
  assert.equal(new esm.McpError('by JS').kind, undefined);
  assert.equal(new esm.McpError('x', { kind: 'timeout' }).kind, 'timeout');
});
