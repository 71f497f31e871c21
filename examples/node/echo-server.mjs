#!/usr/bin/env node
// The walking-skeleton example: `echo` and `add`, served over stdio or, with
// `--http PORT`, over Streamable HTTP at http://127.0.0.1:PORT/mcp.
//
//   node examples/node/echo-server.mjs              # stdio
//   node examples/node/echo-server.mjs --http 8000  # HTTP
//
// On stdio, stdout carries the protocol: log to stderr only. Imported, it
// serves nothing and exports `server` (what its test drives in memory, and
// what `ferromcp run` serves).

import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

import { Server } from '../../bindings-node/index.mjs';

export const server = new Server({ name: 'ferromcp-echo', version: '1.0.0' });

server.tool(
  'echo',
  {
    description: 'Returns the text unchanged.',
    inputSchema: {
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
    },
  },
  // The server validated the arguments against inputSchema: `text` is a string.
  ({ text }) => text,
);

server.tool(
  'add',
  {
    description: 'Adds two integers.',
    inputSchema: {
      type: 'object',
      properties: { a: { type: 'integer' }, b: { type: 'integer' } },
      required: ['a', 'b'],
    },
    outputSchema: {
      type: 'object',
      properties: { result: { type: 'integer' } },
      required: ['result'],
    },
  },
  ({ a, b }) => {
    const sum = a + b;
    // JS numbers are doubles: past 2^53 the sum would silently be rounded.
    if (!Number.isSafeInteger(sum)) {
      throw new RangeError('the sum is too large to be exact');
    }
    return sum; // core wraps it: structuredContent {"result": sum}
  },
);

function usage() {
  console.error('usage: node examples/node/echo-server.mjs [--http PORT]');
  process.exit(2);
}

// Run as `node echo-server.mjs` (through a symlink too), not imported.
const ranAsProgram =
  process.argv[1] !== undefined &&
  import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
const args = process.argv.slice(2);
if (!ranAsProgram) {
  // Imported: the importer serves or tests `server`.
} else if (args.length === 0) {
  await server.serveStdio();
} else if (args.length === 2 && args[0] === '--http') {
  const port = Number(args[1]);
  if (!Number.isInteger(port) || port < 0 || port > 65535) usage();
  await server.serveHttp({
    port,
    onListening: ({ url }) => console.error(`ferromcp-echo listening on ${url}`),
  });
} else {
  usage();
}
