// Serves HTTP on a free port, answers one request, closes, and must then
// exit on its own: nothing of ferromcp may keep the event loop alive.

import { Server } from '../index.mjs';

const server = new Server({ name: 'close-http', version: '0.0.1' });
server.tool('echo', { inputSchema: { type: 'object' } }, () => 'hi');
await server.serveHttp({
  port: 0,
  onListening: async ({ url }) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2026-07-28',
        'Mcp-Method': 'tools/call',
        'Mcp-Name': 'echo',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'echo',
          arguments: {},
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    });
    const body = await response.json();
    console.error(`answered: ${body.result.content[0].text}`);
    server.close();
  },
});
console.error('serveHttp resolved');
