// Registers a tool and never serves: the handler's threadsafe function must
// not keep the process alive.

import { Server } from '../index.mjs';

new Server({ name: 'idle', version: '0.0.1' }).tool('echo', { inputSchema: { type: 'object' } }, () => 'hi');
console.error('registered');
