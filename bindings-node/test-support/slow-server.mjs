// A server with a slow tool, for the shutdown tests: `slow` says "started"
// on stderr, waits 500 ms, then answers "finished". Arguments: none (stdio)
// or `--http PORT`. No signal handling of its own: the serve functions'.

import { Server } from 'ferromcp';

const server = new Server({ name: 'slow', version: '1.0.0' });
server.tool('slow', { description: 'Answers after a while.' }, async () => {
  console.error('started');
  await new Promise((resolve) => setTimeout(resolve, 500));
  return 'finished';
});

const args = process.argv.slice(2);
if (args[0] === '--http') {
  await server.serveHttp({ port: Number(args[1]), onListening: () => console.error('listening') });
} else {
  await server.serveStdio();
}
