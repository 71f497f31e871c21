#!/usr/bin/env node
// Echo server on the official MCP TypeScript SDK (npm @modelcontextprotocol/sdk,
// pinned in package.json next to this file), for `make bench`.
//
//   node echo-server.mjs                          # stdio
//   node echo-server.mjs --http PORT              # Streamable HTTP, one session per client
//   node echo-server.mjs --http PORT --stateless  # the SDK's stateless example
//
// The SDK speaks protocol revisions up to 2025-11-25, so the benchmark drives
// it with the initialize handshake. Both HTTP setups use the SDK's Express
// helper and `enableJsonResponse` (plain JSON answers rather than an SSE
// stream, its fastest mode). The default keeps one McpServer and transport
// per session (the SDK's simpleStreamableHttp example); `--stateless` follows
// simpleStatelessStreamableHttp, with a new McpServer and transport per
// request because a stateless transport cannot be reused, and is about half
// as fast. The benchmark measures the faster one.
//
// The SDK is installed under .cache/bench/node (git-ignored), not next to
// this file, so modules are imported by path; BENCH_NODE_MODULES overrides it.

import { randomUUID } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const modules = process.env.BENCH_NODE_MODULES ?? resolve(here, '../../../.cache/bench/node/node_modules');
const load = (path) => import(pathToFileURL(join(modules, path)).href);

const { McpServer } = await load('@modelcontextprotocol/sdk/dist/esm/server/mcp.js');
const { StdioServerTransport } = await load('@modelcontextprotocol/sdk/dist/esm/server/stdio.js');
const { StreamableHTTPServerTransport } = await load('@modelcontextprotocol/sdk/dist/esm/server/streamableHttp.js');
const { createMcpExpressApp } = await load('@modelcontextprotocol/sdk/dist/esm/server/express.js');
const z = await load('zod/v4/index.js');

function makeServer() {
  const server = new McpServer({ name: 'typescript-sdk-echo', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Returns the text unchanged.', inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  return server;
}

const internalError = (res, error) => {
  console.error('error handling an MCP request:', error);
  if (!res.headersSent) {
    res.status(500).json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: null });
  }
};

// One McpServer and transport per session, created by `initialize`.
function sessionHandler() {
  const transports = new Map();
  return async (req, res) => {
    try {
      const id = req.headers['mcp-session-id'];
      let transport = id === undefined ? undefined : transports.get(id);
      if (transport === undefined) {
        if (id !== undefined) {
          res.status(404).json({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
          return;
        }
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableJsonResponse: true,
          onsessioninitialized: (sid) => transports.set(sid, transport),
        });
        transport.onclose = () => transports.delete(transport.sessionId);
        await makeServer().connect(transport);
      }
      await transport.handleRequest(req, res, req.body);
    } catch (error) {
      internalError(res, error);
    }
  };
}

// A new McpServer and transport for every request.
function statelessHandler() {
  return async (req, res) => {
    const server = makeServer();
    try {
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
      res.on('close', () => {
        transport.close();
        server.close();
      });
    } catch (error) {
      internalError(res, error);
    }
  };
}

const args = process.argv.slice(2);
if (args.length === 0) {
  await makeServer().connect(new StdioServerTransport());
} else if (args[0] === '--http' && (args.length === 2 || (args.length === 3 && args[2] === '--stateless'))) {
  const port = Number(args[1]);
  const app = createMcpExpressApp();
  app.post('/mcp', args.length === 3 ? statelessHandler() : sessionHandler());
  const methodNotAllowed = (_req, res) => res.status(405).set('Allow', 'POST').end();
  app.get('/mcp', methodNotAllowed);
  app.delete('/mcp', methodNotAllowed);
  app.listen(port, '127.0.0.1', (error) => {
    if (error) {
      console.error(error);
      process.exit(1);
    }
    console.error(`typescript-sdk-echo listening on http://127.0.0.1:${port}/mcp`);
  });
} else {
  console.error('usage: node echo-server.mjs [--http PORT [--stateless]]');
  process.exit(2);
}
