// No leak per call: 100k tool calls over stdio against a ferromcp Node server
// (test-support/leak-server.mjs), with the server's heap and resident set
// read after a forced garbage collection (`--expose-gc`) once warmed up and
// again at the end. Both must stay flat.
//
// The tolerances are below what a leak of 100 bytes per call would add over
// the 100k calls (10 MB of payload, more with allocator and V8 overhead):
// started with an injected leak (`leak-server.mjs 100`, the handler keeping
// 100 bytes per call) the heap grew by 31 MB and the RSS by 65 MB, and this
// test failed; with a native one (the host-call adapter forgetting a
// 100-byte Vec per call) the RSS grew by 12.9 MiB and it failed; without
// either, both moved by less than 1 MB.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const SERVER = fileURLToPath(new URL('../test-support/leak-server.mjs', import.meta.url));
const WARMUP_CALLS = 20_000;
const CALLS = 100_000;
const IN_FLIGHT = 64;
const HEAP_TOLERANCE = 2 * 1024 * 1024;
const RSS_TOLERANCE = 6 * 1024 * 1024;

/** A minimal pipelining client: the test's own cost must stay small. */
function startServer(args = []) {
  const child = spawn(process.execPath, ['--expose-gc', SERVER, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const pending = new Map();
  createInterface({ input: child.stdout }).on('line', (line) => {
    const message = JSON.parse(line);
    const resolve = pending.get(message.id);
    pending.delete(message.id);
    resolve?.(message);
  });
  const failed = new Promise((_, reject) => {
    child.on('exit', (code) => reject(new Error(`server exited (${code}): ${stderr}`)));
  });
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  let nextId = 0;
  const call = (name, args) => {
    const id = ++nextId;
    const reply = new Promise((resolve) => pending.set(id, resolve));
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: meta } })}\n`,
    );
    return Promise.race([reply, failed]);
  };
  return { child, call };
}

test('100k tool calls leave heap and RSS flat', { timeout: 120_000 }, async () => {
  const { child, call } = startServer();
  try {
    const echo = async (n) => {
      let left = n;
      const worker = async () => {
        while (left-- > 0) {
          const reply = await call('echo', { text: 'leak?' });
          assert.equal(reply.result?.content?.[0]?.text, 'leak?', JSON.stringify(reply));
        }
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    };
    const memory = async () => JSON.parse((await call('memory', {})).result.content[0].text);

    await echo(WARMUP_CALLS);
    const warm = await memory();
    await echo(CALLS);
    const end = await memory();
    const heap = end.heapUsed - warm.heapUsed;
    const rss = end.rss - warm.rss;
    const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(2)} MiB`;
    const report = `after ${CALLS} calls: heap ${mb(heap)}, RSS ${mb(rss)} (warm: heap ${mb(warm.heapUsed)}, RSS ${mb(warm.rss)})`;
    assert.ok(heap < HEAP_TOLERANCE, `the heap grew: ${report}`);
    assert.ok(rss < RSS_TOLERANCE, `the resident set grew: ${report}`);
  } finally {
    child.stdin.end();
    child.kill();
  }
});
