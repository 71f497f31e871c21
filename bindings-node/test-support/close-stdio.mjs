// Serves stdio while stdin stays open; close() must end serving and let the
// process exit although stdin never reaches EOF.

import { Server } from '../index.mjs';

const server = new Server({ name: 'close-stdio', version: '0.0.1' });
server.tool('echo', { inputSchema: { type: 'object' } }, () => 'hi');
const served = server.serveStdio();
setTimeout(() => server.close(), 200);
await served;
console.error('serveStdio resolved');
