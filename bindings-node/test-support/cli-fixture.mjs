// A module for `ferromcp run` (test/cli.test.mjs): it exports a Server and
// does not serve it itself. What it logs goes to stderr under `run` on stdio.

import { Server } from 'ferromcp';

const server = new Server({ name: 'cli-fixture', version: '1.0.0' });

server.tool('greet', {
  description: 'Greets someone.',
  inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
}, ({ name }) => `Hello, ${name}!`);

console.log('cli-fixture loaded'); // must not reach stdout, the protocol

export default server;
