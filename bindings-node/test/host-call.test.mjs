// Every kind of handler runs through the one host-call adapter, and what a
// callable returns (a value or a Promise) becomes that kind's output by
// core's rule (server/output.rs). Only tools have a public API yet; the
// internal probe runs the other kinds.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const native = createRequire(import.meta.url)('../native.js');

const probe = (kind, fn, input = {}) => native.probeHostCall(kind, fn, input);

test('a tool value is kept for core to shape', async () => {
  assert.equal(await probe('tool', ({ n }) => n + 1, { n: 1 }), 'Value(Number(2))');
});

test('a prompt string is one user message, sync or async', async () => {
  assert.equal(await probe('prompt', () => 'hello'), 'Text("hello")');
  assert.equal(await probe('prompt', async () => 'later'), 'Text("later")');
});

test('a prompt message list is checked by core', async () => {
  const message = { role: 'user', content: { type: 'text', text: 'x' } };
  assert.match(await probe('prompt', () => [message]), /^Messages\(/);
  await assert.rejects(probe('prompt', () => [{ role: 'robot' }]), /invalid prompt result: item 0 is not a valid PromptMessage/);
});

test('resource and completion shapes', async () => {
  assert.equal(await probe('resource', () => 'body'), 'Text("body")');
  assert.match(await probe('completion', async () => ['a', 'b']), /values: \["a", "b"\]/);
  await assert.rejects(probe('completion', () => 3), /invalid completion result/);
});

test('the context is null outside a request, and a throw is a handler error', async () => {
  let seen;
  await probe('prompt', (input, ctx) => {
    seen = ctx;
    return 'x';
  });
  assert.equal(seen, null);
  await assert.rejects(
    probe('prompt', () => {
      throw new RangeError('nope');
    }),
    /RangeError: nope/,
  );
});
