// Schemas as JSON Schema or any Standard Schema (issue 13): ferromcp calls
// the object's own `~standard` interface, so libraries other than zod work,
// an async `validate` is awaited, and a schema with no JSON Schema
// converter is refused at registration with a message saying why.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { Server } from '../index.mjs';
import { postMcp } from '../test-support/helpers.mjs';

/** A hand-written Standard Schema for `{ n: integer }` that doubles `n`. */
function doublingSchema({ withJsonSchema = true } = {}) {
  const standard = {
    version: 1,
    vendor: 'hand-written',
    // async on purpose: the Standard Schema spec allows a Promise
    validate: async (value) =>
      Number.isInteger(value?.n) ? { value: { n: value.n * 2 } } : { issues: [{ message: 'n must be an integer', path: ['n'] }] },
  };
  if (withJsonSchema) {
    standard.jsonSchema = {
      input: () => ({ type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] }),
      output: () => ({ type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] }),
    };
  }
  return { '~standard': standard };
}

test('any Standard Schema with a JSON Schema converter: listed as JSON Schema, output handed to the handler', async () => {
  const server = new Server({ name: 'schemas', version: '0' });
  server.tool('double', { inputSchema: doublingSchema() }, ({ n }) => `n=${n}`);
  let url;
  const serving = server.serveHttp({ port: 0, handleSignals: false, onListening: (a) => (url = a.url) });
  try {
    while (!url) await new Promise((r) => setTimeout(r, 5));
    const list = await postMcp(url, 1, 'tools/list');
    assert.deepEqual(list.body.result.tools[0].inputSchema, {
      type: 'object',
      properties: { n: { type: 'integer' } },
      required: ['n'],
    });
    const call = await postMcp(url, 2, 'tools/call', { name: 'double', arguments: { n: 21 } }, { name: 'double' });
    assert.equal(call.body.result.content[0].text, 'n=42');
  } finally {
    server.close();
    await serving;
  }
});

test('a Standard Schema without a JSON Schema converter is refused at registration', () => {
  const server = new Server({ name: 'schemas', version: '0' });
  assert.throws(
    () => server.tool('double', { inputSchema: doublingSchema({ withJsonSchema: false }) }, () => 'x'),
    /tool "double" inputSchema: this Standard Schema \(hand-written\) has no JSON Schema converter/,
  );
  assert.throws(() => server.tool('bad', { inputSchema: 'object' }, () => 'x'), /must be a JSON Schema object or a Standard Schema/);
});
