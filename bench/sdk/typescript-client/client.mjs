// The official TypeScript SDK v2 row of the client benchmark:
// @modelcontextprotocol/client 2.4.0, `Client` over its
// `StreamableHTTPClientTransport`, calling echo; driven by mcp-bench through
// bench/clients/bench-protocol.mjs (the loop every Node row shares).
//
//   node bench/sdk/typescript-client/client.mjs http://127.0.0.1:PORT/mcp
//
// versionNegotiation 'auto' (a `server/discover` probe, `initialize` as the
// fallback), as the SDK documents for talking to a 2026-07-28 server; its
// default ('legacy') would speak 2025-11-25 only.
//
// The SDK is installed under .cache/bench/node-client (git-ignored), not next
// to this file, so it is imported by path; BENCH_NODE_CLIENT_MODULES
// overrides the folder.

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { serve } from '../../clients/bench-protocol.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const modules =
  process.env.BENCH_NODE_CLIENT_MODULES ?? resolve(here, '../../../.cache/bench/node-client/node_modules');
const { Client, StreamableHTTPClientTransport } = await import(
  pathToFileURL(join(modules, '@modelcontextprotocol/client/dist/index.mjs')).href
);

const client = new Client(
  { name: 'ferromcp-bench', version: '1.0.0' },
  { versionNegotiation: { mode: 'auto' } },
);
const transport = new StreamableHTTPClientTransport(new URL(process.argv[2]));
await client.connect(transport);
await serve(async (text) => {
  const result = await client.callTool({ name: 'echo', arguments: { text } });
  return result.content[0]?.text;
}, () => client.getNegotiatedProtocolVersion() ?? "?");
await client.close();
