// Seal keys in Node (issue 29): replicas given the same keys accept each
// other's requestState, a rotation keeps state sealed before it valid,
// other keys refuse it, and bad keys are refused with the reason.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { Server } from '../index.mjs';

const OLD = 'b2xkLXNlY3JldC0yMDI2LTEx';
const NEW = 'bmV3LXNlY3JldC0yMDI2LTEy';
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
};

async function replica(sealKeys) {
  const server = new Server({ name: 'replica', version: '1.0.0', sealKeys });
  server.tool('greet', {}, async (_, ctx) => {
    const answer = await ctx.elicit('Name?', { type: 'object', properties: { name: { type: 'string' } } }, { key: 'name' });
    return `Hello, ${answer.content.name}!`;
  });
  let url;
  const served = server.serveHttp({ port: 0, onListening: (address) => (url = address.url) });
  while (!url) await new Promise((resolve) => setTimeout(resolve, 5));
  return { url, close: async () => { server.close(); await served; } };
}

async function call(url, params) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'greet',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'greet', ...params, _meta: META } }),
  });
  return response.json();
}

const sealed = async (url) => (await call(url, {})).result.requestState;
const retry = (url, requestState) =>
  call(url, { requestState, inputResponses: { name: { action: 'accept', content: { name: 'Ada' } } } });

test('state moves between replicas sharing keys, and across a rotation', async () => {
  const [before, rotated, after, random] = await Promise.all([
    replica([OLD]),
    replica([NEW, OLD]),
    replica([NEW]),
    replica(undefined),
  ]);
  try {
    const sealedOld = await sealed(before.url);
    assert.equal((await retry(rotated.url, sealedOld)).result.content[0].text, 'Hello, Ada!');
    const sealedNew = await sealed(rotated.url);
    assert.equal((await retry(after.url, sealedNew)).result.content[0].text, 'Hello, Ada!');
    assert.equal((await retry(before.url, sealedNew)).error.code, -32602);
    assert.equal((await retry(random.url, sealedOld)).error.code, -32602);
  } finally {
    await Promise.all([before, rotated, after, random].map((r) => r.close()));
  }
});

test('bad seal keys are refused with the reason', () => {
  assert.throws(() => new Server({ name: 'x', version: '1', sealKeys: ['c2hvcnQ='] }), /seal key 1 is 5 bytes/);
  assert.throws(() => new Server({ name: 'x', version: '1', sealKeys: [NEW, 'not base64!'] }), /seal key 2 is not base64/);
});
