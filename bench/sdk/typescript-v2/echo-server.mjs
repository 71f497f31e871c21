#!/usr/bin/env node
// Echo server on the official MCP TypeScript SDK v2 (npm @modelcontextprotocol/server
// 2.4.0 and @modelcontextprotocol/node, pinned in package.json next to this
// file), for `make bench`. It speaks 2026-07-28.
//
//   node echo-server.mjs              # stdio (serveStdio from .../server/stdio)
//   node echo-server.mjs --http PORT  # createMcpHandler + toNodeHandler on node:http
//
// HTTP follows the SDK's own recipe for plain node:http: `createMcpHandler`
// with a per-request server factory (the entry builds one McpServer per
// request, as its documentation asks), wrapped once by `toNodeHandler`, the
// localhost Host/Origin guards in front, bound to loopback.
//
// mcp-bench preloads bench/servers/event-loop-delay.mjs (`node --import`)
// into the HTTP server to read its event-loop delay; nothing here for it.
//
// The SDK is installed under .cache/bench/node-v2 (git-ignored), not next to
// this file, so modules are imported by path; BENCH_NODE_V2_MODULES overrides it.

import { createServer } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const modules = process.env.BENCH_NODE_V2_MODULES ?? resolve(here, '../../../.cache/bench/node-v2/node_modules');
const load = (path) => import(pathToFileURL(join(modules, path)).href);

const { McpServer, createMcpHandler } = await load('@modelcontextprotocol/server/dist/index.mjs');
const { serveStdio } = await load('@modelcontextprotocol/server/dist/stdio.mjs');
const { toNodeHandler, localhostHostValidation, localhostOriginValidation } = await load(
  '@modelcontextprotocol/node/dist/index.mjs',
);
const z = await load('zod/v4/index.js');

function makeServer() {
  const server = new McpServer({ name: 'typescript-sdk-v2-echo', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Returns the text unchanged.', inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  return server;
}

const args = process.argv.slice(2);
if (args.length === 0) {
  serveStdio(makeServer, { onerror: (error) => console.error('typescript-sdk-v2-echo:', error) });
} else if (args.length === 2 && args[0] === '--http') {
  const port = Number(args[1]);
  const handler = toNodeHandler(createMcpHandler(makeServer), {
    onerror: (error) => console.error('typescript-sdk-v2-echo:', error),
  });
  const validateHost = localhostHostValidation();
  const validateOrigin = localhostOriginValidation();
  createServer((req, res) => {
    if (!validateHost(req, res) || !validateOrigin(req, res)) return;
    void handler(req, res);
  }).listen(port, '127.0.0.1', () => {
    console.error(`typescript-sdk-v2-echo listening on http://127.0.0.1:${port}/mcp`);
  });
} else {
  console.error('usage: node echo-server.mjs [--http PORT]');
  process.exit(2);
}
