// The ferromcp Node row of the client benchmark: `Client.http(url)` calling
// echo over Streamable HTTP, driven by mcp-bench through bench-protocol.mjs.
//
//   node bench/clients/node-client.mjs http://127.0.0.1:PORT/mcp

import { Client } from 'ferromcp';
import { serve } from './bench-protocol.mjs';

const client = await Client.http(process.argv[2]);
await serve(async (text) => {
  const result = await client.callTool('echo', { text });
  return result.content[0]?.text;
}, () => client.protocolVersion);
await client.close();
