// A stdio server for test/leak.test.mjs, run as
// `node --expose-gc leak-server.mjs [RETAIN_BYTES]`: `echo`, and `memory`,
// which collects garbage and answers with this process's heap and resident
// set. RETAIN_BYTES makes `echo` keep that many bytes per call: an injected
// leak, to show that the check sees one.

import { Server } from '../index.mjs';

const retainBytes = Number(process.argv[2] ?? 0);
if (typeof globalThis.gc !== 'function') {
  console.error('run with --expose-gc');
  process.exit(2);
}

const retained = [];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

await new Server({ name: 'leak-check', version: '1.0.0' })
  .tool(
    'echo',
    { inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
    ({ text }, ctx) => {
      // Read the context as handlers do, so its objects are exercised too.
      if (ctx.cancelled) return 'cancelled';
      if (retainBytes > 0) retained.push(`${retained.length}`.padEnd(retainBytes, 'x'));
      return text;
    },
  )
  .tool('memory', { inputSchema: { type: 'object' } }, async () => {
    // Let the runtime release the last calls' contexts, then collect
    // (finalizers of native wrappers run between collections).
    for (let i = 0; i < 3; i++) {
      await sleep(50);
      globalThis.gc();
    }
    const { heapUsed, rss } = process.memoryUsage();
    return JSON.stringify({ heapUsed, rss });
  })
  .serveStdio();
