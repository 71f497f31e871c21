// Connects a client (stdio to the Node test server, or HTTP to the URL given
// as argument), calls a tool, closes it and returns: the process must exit
// on its own (test/client-close.test.mjs).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '../index.mjs';

const url = process.argv[2];
const server = path.join(path.dirname(fileURLToPath(import.meta.url)), 'client-server.mjs');
const client = url
  ? await Client.http(url)
  : await Client.stdio({ command: process.execPath, args: [server] });

// While calls are in flight the event loop keeps turning.
const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();
const calls = [];
for (let i = 0; i < 50; i++) calls.push(client.callTool('t1'));
calls.push(client.callTool('wait', {}, { timeout: 2000 }).catch((e) => e.kind));
const results = await Promise.all(calls);
delay.disable();
await client.close();
console.log(JSON.stringify({ last: results.at(-1), first: results[0].content[0].text, maxDelayMs: delay.max / 1e6 }));
