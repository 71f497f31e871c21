// Asking the client for input from a JS handler (issue 13, "ctx"): the same
// handler code serves a 2026-07-28 client (the round ends with
// input_required, the retry replays the handler with the answers) and a
// 2025-11-25 session (a live elicitation/create request to the client).
// ctx.signal is aborted when core stops waiting for a run of the handler.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { RawClient, modernMeta, textOf } from '../test-support/raw-client.mjs';

const SCRIPT = 'bindings-node/test-support/primitives-server.mjs';
const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let modern;
before(() => {
  modern = new RawClient(SCRIPT);
});
after(async () => {
  const { code } = await modern.close();
  assert.equal(code, 0, modern.stderr);
});

/** Round 1 of a tool call: must be input_required; returns the result. */
async function firstRound(name, meta) {
  const response = await modern.modern('tools/call', { name }, meta);
  assert.equal(response.result?.resultType, 'input_required', JSON.stringify(response));
  return response.result;
}

test('2026-07-28: elicitation ends the round, the retry with the answer completes', async () => {
  const round1 = await firstRound('elicit_name');
  const [[key, ask]] = Object.entries(round1.inputRequests);
  assert.equal(ask.method, 'elicitation/create');
  assert.deepEqual(ask.params, {
    mode: 'form',
    message: 'Your name?',
    requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  });
  const done = await modern.modern('tools/call', {
    name: 'elicit_name',
    requestState: round1.requestState,
    inputResponses: { [key]: { action: 'accept', content: { name: 'Ada' } } },
  });
  assert.equal(textOf(done.result), 'Hello, Ada!');
  const declined = await modern.modern('tools/call', {
    name: 'elicit_name',
    requestState: round1.requestState,
    inputResponses: { [key]: { action: 'decline' } },
  });
  assert.equal(textOf(declined.result), 'no name (decline)');
});

test('2026-07-28: asks made together (Promise.all) land in one round', async () => {
  const round1 = await firstRound('three_at_once');
  assert.deepEqual(Object.keys(round1.inputRequests).sort(), ['client_roots', 'greeting', 'user_name']);
  const done = await modern.modern('tools/call', {
    name: 'three_at_once',
    requestState: round1.requestState,
    inputResponses: {
      user_name: { action: 'accept', content: { name: 'Ada' } },
      greeting: { role: 'assistant', content: { type: 'text', text: 'Hello!' }, model: 'm' },
      client_roots: { roots: [{ uri: 'file:///a' }, { uri: 'file:///b' }] },
    },
  });
  assert.equal(textOf(done.result), 'name=Ada, reply=Hello!, roots=2');
});

test('2026-07-28: a zod elicitation schema is sent as JSON Schema and parses the answer', async () => {
  const round1 = await firstRound('elicit_zod');
  const schema = round1.inputRequests.age.params.requestedSchema;
  assert.equal(schema.type, 'object');
  assert.deepEqual(schema.required, ['age']);
  const done = await modern.modern('tools/call', {
    name: 'elicit_zod',
    requestState: round1.requestState,
    inputResponses: { age: { action: 'accept', content: { age: 41 } } },
  });
  assert.equal(textOf(done.result), 'age+1=42');
});

test('2026-07-28: URL-mode elicitation', async () => {
  const round1 = await firstRound('elicit_url');
  const [[key, ask]] = Object.entries(round1.inputRequests);
  assert.deepEqual(ask.params, { mode: 'url', message: 'Sign in', url: 'https://example.com/login', elicitationId: 'e1' });
  const done = await modern.modern('tools/call', {
    name: 'elicit_url',
    requestState: round1.requestState,
    inputResponses: { [key]: { action: 'accept' } },
  });
  assert.equal(textOf(done.result), 'url: accept');
});

test('2026-07-28: a missing client capability rejects the ask with McpError -32021', async () => {
  const response = await modern.modern('tools/call', { name: 'needs_sampling' }, modernMeta({ elicitation: {} }));
  assert.equal(
    textOf(response.result),
    'caught McpError -32021 peerError {"requiredCapabilities":{"sampling":{}}}',
  );
});

test('ctx.signal: aborted when the round ends to ask, not after a completed call', async () => {
  const round1 = await firstRound('after_ask_signal');
  const [key] = Object.keys(round1.inputRequests);
  const done = await modern.modern('tools/call', {
    name: 'after_ask_signal',
    requestState: round1.requestState,
    inputResponses: { [key]: { action: 'accept', content: { name: 'Ada' } } },
  });
  assert.equal(textOf(done.result), 'aborted=["round ended: cancelled"] name=Ada');
  const completed = await modern.modern('tools/call', { name: 'signal_after_completion' });
  assert.equal(textOf(completed.result), 'done');
  await wait(100);
  const seen = JSON.parse(textOf((await modern.modern('tools/call', { name: 'aborts' })).result));
  assert.ok(seen.includes('completed call aborted=false'), JSON.stringify(seen));
});

test('ctx.signal: aborted when the client cancels the request', async () => {
  const id = modern.nextId();
  void modern.request('tools/call', { name: 'wait_for_abort', _meta: modernMeta() }, id).catch(() => {});
  await wait(100);
  modern.write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } });
  let seen = [];
  for (let i = 0; i < 50 && !seen.some((s) => s.startsWith('cancelled')); i++) {
    await wait(20);
    seen = JSON.parse(textOf((await modern.modern('tools/call', { name: 'aborts' })).result));
  }
  assert.ok(seen.includes('cancelled: cancelled'), JSON.stringify(seen));
});

test('2025-11-25 session: the same handler sends a live elicitation/create and gets the answer', async () => {
  const legacy = new RawClient(SCRIPT);
  try {
    const init = await legacy.initialize({ elicitation: {}, sampling: {}, roots: {} });
    assert.equal(init.result.protocolVersion, '2025-11-25');
    legacy.onRequest = (request) => {
      if (request.method === 'elicitation/create') return { action: 'accept', content: { name: 'Grace' } };
      if (request.method === 'sampling/createMessage') {
        return { role: 'assistant', content: { type: 'text', text: 'Hey' }, model: 'm' };
      }
      if (request.method === 'roots/list') return { roots: [{ uri: 'file:///x' }] };
      throw new Error(request.method);
    };
    const one = await legacy.request('tools/call', { name: 'elicit_name', arguments: {} });
    assert.equal(textOf(one.result), 'Hello, Grace!');
    assert.equal(legacy.serverRequests[0].method, 'elicitation/create');
    assert.equal(legacy.serverRequests[0].params.message, 'Your name?');
    const three = await legacy.request('tools/call', { name: 'three_at_once', arguments: {} });
    assert.equal(textOf(three.result), 'name=Grace, reply=Hey, roots=1');
    assert.deepEqual(
      legacy.serverRequests.slice(1).map((r) => r.method).sort(),
      ['elicitation/create', 'roots/list', 'sampling/createMessage'],
    );
  } finally {
    const { code } = await legacy.close();
    assert.equal(code, 0, legacy.stderr);
  }
});

test('2025-11-25 session without the capability: the ask rejects with -32021', async () => {
  const legacy = new RawClient(SCRIPT);
  try {
    await legacy.initialize({ elicitation: {} });
    const response = await legacy.request('tools/call', { name: 'needs_sampling', arguments: {} });
    assert.match(textOf(response.result), /^caught McpError -32021 peerError/);
  } finally {
    await legacy.close();
  }
});

test('2025-11-25 session: notifications/cancelled aborts ctx.signal', async () => {
  const legacy = new RawClient(SCRIPT);
  try {
    await legacy.initialize();
    const id = legacy.nextId();
    void legacy.request('tools/call', { name: 'wait_for_abort', arguments: {} }, id).catch(() => {});
    await wait(100);
    legacy.write({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } });
    let seen = [];
    for (let i = 0; i < 50 && !seen.length; i++) {
      await wait(20);
      seen = JSON.parse(textOf((await legacy.request('tools/call', { name: 'aborts', arguments: {} })).result));
    }
    assert.deepEqual(seen, ['cancelled: cancelled']);
  } finally {
    await legacy.close();
  }
});
