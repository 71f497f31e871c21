// A Node server for the client tests (test/client*.test.mjs): small pages,
// a tool that waits for its cancellation, a tool that registers another
// (list changed), a resource it can mark updated, a prompt with completion.
// `--http` serves HTTP on a free port and prints the URL; stdio otherwise.

import { Server } from '../index.mjs';

const server = new Server({ name: 'client-test', version: '1.0.0', pageSize: 2 });
for (const n of [1, 2, 3, 4, 5]) {
  server.tool(`t${n}`, { description: `tool ${n}`, inputSchema: { type: 'object' } }, () => `t${n}`);
}

let started = 0;
let aborted = 0;
server.tool('wait', { inputSchema: { type: 'object' } }, (_args, ctx) => {
  started += 1;
  // Never completes by itself: only the client's cancellation ends it.
  return new Promise((resolve) => {
    ctx.signal.addEventListener('abort', () => {
      aborted += 1;
      resolve('aborted');
    });
  });
});
server.tool('aborted', { inputSchema: { type: 'object' } }, () => ({ started, aborted }));

server.tool('register', { inputSchema: { type: 'object' } }, () => {
  server.tool('late', { inputSchema: { type: 'object' } }, () => 'late');
  server.notifyResourceUpdated('mem://counter');
  return 'registered';
});

server.tool('ask', { inputSchema: { type: 'object' } }, async (_args, ctx) => {
  const answer = await ctx.elicit('Your name?', {
    type: 'object',
    properties: { name: { type: 'string' } },
    required: ['name'],
  });
  const roots = await ctx.listRoots();
  const sampled = await ctx.sample({
    messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }],
    maxTokens: 10,
  });
  return {
    action: answer.action,
    name: answer.content?.name ?? null,
    roots: roots.roots.map((r) => r.uri),
    sampled: sampled.content.text,
  };
});

server.tool('progress', { inputSchema: { type: 'object' } }, async (_args, ctx) => {
  for (const step of [1, 2, 3]) ctx.progress(step, 3, `step ${step}`);
  return 'done';
});

server.resource('mem://counter', { name: 'counter', mimeType: 'text/plain' }, () => 'count=1');
server.prompt(
  'greet',
  {
    description: 'Greets someone',
    arguments: [{ name: 'name', required: true, complete: (value) => ['alice', 'albert', 'bob'].filter((v) => v.startsWith(value)) }],
  },
  ({ name }) => `Hello, ${name}!`,
);

if (process.argv.includes('--http')) {
  await server.serveHttp({ port: 0, onListening: ({ url }) => console.log(url) });
} else {
  await server.serveStdio();
}
