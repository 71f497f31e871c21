// The README's OAuth client: `node oauth-client.mjs URL` logs in to a
// protected MCP server (the user opens the printed URL; the browser comes
// back to a listener on 127.0.0.1:8765) and lists its tools.
import { Client, LoopbackRedirect } from 'ferromcp';

const url = process.argv[2] ?? 'http://127.0.0.1:8000/mcp';
const client = await Client.http(url, {
  // The login happens inside the first call: leave the user time.
  timeout: 600_000,
  oauth: {
    redirectUri: 'http://127.0.0.1:8765/callback',
    authorize: async (authUrl) => {
      const loopback = await LoopbackRedirect.bind({ port: 8765, path: '/callback' });
      try {
        console.log(`Open this URL to authorize: ${authUrl}`);
        return await loopback.wait({ timeout: 300_000 });
      } finally {
        loopback.close();
      }
    },
  },
});
for await (const tool of client.tools()) console.log(tool.name);
await client.close();
