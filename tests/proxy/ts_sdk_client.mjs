#!/usr/bin/env node
// The official TypeScript SDK 1.32.2 client (npm @modelcontextprotocol/sdk,
// 2025-11-25 only) through `ferromcp proxy`: lists the tools, calls a plain
// one, and answers the upstream's elicitation and sampling. Prints one JSON
// object for tests/proxy/proxy_checks.py.
//
//   node tests/proxy/ts_sdk_client.mjs http://127.0.0.1:PORT/mcp
//
// The SDK is the one `make test-proxy` installs for the benchmark, under
// .cache/bench/node (BENCH_NODE_MODULES overrides the folder).

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const modules = process.env.BENCH_NODE_MODULES ?? resolve(here, '../../.cache/bench/node/node_modules');
const load = (path) => import(pathToFileURL(join(modules, path)).href);

const { Client } = await load('@modelcontextprotocol/sdk/dist/esm/client/index.js');
const { StreamableHTTPClientTransport } = await load('@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js');
const { ElicitRequestSchema, CreateMessageRequestSchema } = await load('@modelcontextprotocol/sdk/dist/esm/types.js');

const client = new Client(
  { name: 'typescript-sdk-1.32.2', version: '1.0.0' },
  { capabilities: { elicitation: {}, sampling: {} } },
);
const asked = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  asked.push(request.params.message);
  return { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } };
});
client.setRequestHandler(CreateMessageRequestSchema, async () => ({
  role: 'assistant',
  content: { type: 'text', text: 'sampled by the TypeScript SDK' },
  model: 'test-model',
}));

const transport = new StreamableHTTPClientTransport(new URL(process.argv[2]));
await client.connect(transport);
const text = (result) => result.content?.[0]?.text;
const tools = (await client.listTools()).tools.map((tool) => tool.name);
const simple = text(await client.callTool({ name: 'test_simple_text', arguments: {} }));
const elicited = text(await client.callTool({ name: 'test_elicitation', arguments: { message: 'who are you?' } }));
const sampled = text(await client.callTool({ name: 'test_sampling', arguments: { prompt: 'hello' } }));
console.log(
  JSON.stringify({
    protocolVersion: transport.protocolVersion,
    tools,
    simple,
    elicited,
    sampled,
    asked,
  }),
);
await client.close();
