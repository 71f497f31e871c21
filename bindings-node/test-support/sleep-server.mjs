// An HTTP server with one async tool that sleeps `ms`, in its own process so
// that a test's client does not share its event loop. Prints its URL.

import { Server } from '../index.mjs';

const server = new Server({ name: 'sleep', version: '0' });
server.tool(
  'sleep',
  { inputSchema: { type: 'object', properties: { ms: { type: 'integer' } }, required: ['ms'] } },
  async ({ ms }) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return 'slept';
  },
);
await server.serveHttp({ port: 0, onListening: ({ url }) => console.log(url) });
