#!/usr/bin/env node
// A server on the official TypeScript SDK 1.32.2 (2025-11-25 only), the
// upstream of tests/proxy/proxy_checks.py's Python SDK client: `echo`, and `ask` and
// `summarize`, which ask the client through the request they serve
// (elicitation and sampling on the call's own stream).
//
//   node tests/proxy/ts_sdk_server.mjs PORT     # Streamable HTTP, sessions
//   node tests/proxy/ts_sdk_server.mjs          # stdio

import { randomUUID } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const modules = process.env.BENCH_NODE_MODULES ?? resolve(here, '../../.cache/bench/node/node_modules');
const load = (path) => import(pathToFileURL(join(modules, path)).href);

const { McpServer } = await load('@modelcontextprotocol/sdk/dist/esm/server/mcp.js');
const { StdioServerTransport } = await load('@modelcontextprotocol/sdk/dist/esm/server/stdio.js');
const { StreamableHTTPServerTransport } = await load('@modelcontextprotocol/sdk/dist/esm/server/streamableHttp.js');
const { createMcpExpressApp } = await load('@modelcontextprotocol/sdk/dist/esm/server/express.js');
const { ElicitResultSchema, CreateMessageResultSchema } = await load('@modelcontextprotocol/sdk/dist/esm/types.js');
const z = await load('zod/v4/index.js');

function makeServer() {
  const server = new McpServer({ name: 'typescript-sdk-upstream', version: '1.0.0' });
  server.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  server.registerTool('ask', { inputSchema: {} }, async (_args, extra) => {
    const answer = await extra.sendRequest(
      {
        method: 'elicitation/create',
        params: {
          message: 'your name?',
          requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        },
      },
      ElicitResultSchema,
    );
    return { content: [{ type: 'text', text: `hi ${answer.content?.name} (${answer.action})` }] };
  });
  server.registerTool('summarize', { inputSchema: {} }, async (_args, extra) => {
    const answer = await extra.sendRequest(
      {
        method: 'sampling/createMessage',
        params: { messages: [{ role: 'user', content: { type: 'text', text: 'summarize' } }], maxTokens: 20 },
      },
      CreateMessageResultSchema,
    );
    return { content: [{ type: 'text', text: `model said: ${answer.content.text}` }] };
  });
  return server;
}

const port = process.argv[2];
if (!port) {
  await makeServer().connect(new StdioServerTransport());
} else {
  const app = createMcpExpressApp();
  const transports = new Map();
  app.all('/mcp', async (req, res) => {
    const id = req.headers['mcp-session-id'];
    let transport = id && transports.get(id);
    if (!transport) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => transports.set(sessionId, transport),
      });
      await makeServer().connect(transport);
    }
    await transport.handleRequest(req, res, req.body);
  });
  app.listen(Number(port), '127.0.0.1');
}
