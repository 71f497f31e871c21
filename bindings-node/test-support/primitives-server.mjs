// A stdio server exercising the server surface beyond plain tools:
// resources, templates, prompts, completion, asking the client for input,
// ctx.signal, zod schemas and request info. Driven by the tests in
// test/primitives.test.mjs, test/input.test.mjs and test/zod.test.mjs.

import { z } from 'zod';

import { Server, McpError, ToolResult } from '../index.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const nameSchema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };

const server = new Server({
  name: 'primitives',
  version: '0.0.1',
  caching: { tools: { ttlMs: 1000 }, resourceRead: { ttlMs: 5, cacheScope: 'public' } },
});

// Resources: text, bytes, a template, decorations, a failing one.
server
  .resource(
    'mem://text',
    {
      name: 'text',
      title: 'Some text',
      description: 'A text resource',
      mimeType: 'text/plain',
      icons: [{ src: 'https://example.com/t.png', mimeType: 'image/png' }],
      annotations: { audience: ['user'], priority: 0.5 },
      _meta: { 'example.com/owner': 'tests' },
    },
    async () => {
      await sleep(1);
      return 'hello text';
    },
  )
  .resource('mem://cached', { cache: { ttlMs: 60_000, cacheScope: 'private' } }, () => 'cached')
  .resource('mem://bytes', { mimeType: 'application/octet-stream' }, () => new Uint8Array([0, 1, 2, 255]))
  .resource('mem://items', () => [{ uri: 'mem://items', text: 'one', mimeType: 'text/plain' }])
  .resource('mem://fails', () => {
    throw new RangeError('resource broke');
  })
  .resource(
    'users://{id}/profile',
    { name: 'profile', mimeType: 'application/json', complete: { id: (value) => ['17', '42', '420'].filter((v) => v.startsWith(value)) } },
    ({ uri, variables }) => JSON.stringify({ uri, id: variables.id }),
  );

// Prompts: string, messages, argsSchema (zod), a failing one, completion.
server
  .prompt(
    'greet',
    {
      title: 'Greeting',
      description: 'Greets someone',
      icons: [{ src: 'https://example.com/g.png' }],
      arguments: [
        { name: 'name', description: 'Who', required: true, complete: (value) => ['Ada', 'Alan', 'Grace'].filter((n) => n.startsWith(value)) },
        { name: 'style' },
      ],
    },
    ({ name, style }) => `Hello ${name}${style ? ` (${style})` : ''}`,
  )
  .prompt('messages', () => [
    { role: 'user', content: { type: 'text', text: 'first' } },
    { role: 'assistant', content: { type: 'text', text: 'second' } },
  ])
  .prompt(
    'typed',
    { argsSchema: z.object({ topic: z.string().describe('The topic'), tone: z.string().default('calm') }) },
    ({ topic, tone }) => `${topic} in a ${tone} tone`,
  )
  .prompt('fails', () => {
    throw new Error('prompt broke');
  })
  .completion(({ argument }) => [`fallback:${argument.name}`]);

// Tools that ask the client for input.
server
  .tool('elicit_name', async (_, ctx) => {
    const answer = await ctx.elicit('Your name?', nameSchema);
    return answer.action === 'accept' ? `Hello, ${answer.content.name}!` : `no name (${answer.action})`;
  })
  .tool('elicit_zod', async (_, ctx) => {
    const answer = await ctx.elicit('Age?', z.object({ age: z.coerce.number().int() }), { key: 'age' });
    return answer.action === 'accept' ? `age+1=${answer.content.age + 1}` : answer.action;
  })
  .tool('elicit_url', async (_, ctx) => {
    const answer = await ctx.elicit({ mode: 'url', message: 'Sign in', url: 'https://example.com/login', elicitationId: 'e1' });
    return `url: ${answer.action}`;
  })
  .tool('three_at_once', async (_, ctx) => {
    const [name, reply, roots] = await Promise.all([
      ctx.elicit('Your name?', nameSchema, { key: 'user_name' }),
      ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'Hi' } }], maxTokens: 10 }, { key: 'greeting' }),
      ctx.listRoots({ key: 'client_roots' }),
    ]);
    return `name=${name.content?.name}, reply=${reply.content.text}, roots=${roots.roots.length}`;
  })
  .tool('needs_sampling', async (_, ctx) => {
    try {
      await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'Hi' } }], maxTokens: 10 });
      return 'sampled';
    } catch (error) {
      return `caught ${error.name} ${error.code} ${error.kind} ${JSON.stringify(error.data)}`;
    }
  })
  .tool('after_ask_signal', async (_, ctx) => {
    // Records whether the signal of the first run (which asked and was
    // dropped when the round ended) was aborted.
    const signal = ctx.signal;
    signal.addEventListener('abort', () => {
      aborted.push(`round ended: ${signal.reason?.kind}`);
    });
    const answer = await ctx.elicit('Your name?', nameSchema);
    return `aborted=${JSON.stringify(aborted)} name=${answer.content?.name}`;
  });

/** What the abort listeners saw, read back by the `aborts` tool. */
const aborted = [];

server
  .tool('wait_for_abort', async (_, ctx) => {
    await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
    aborted.push(`cancelled: ${ctx.signal.reason?.kind}`);
    return 'never sent';
  })
  .tool('aborts', () => JSON.stringify(aborted))
  .tool('signal_after_completion', (_, ctx) => {
    const signal = ctx.signal;
    setTimeout(() => aborted.push(`completed call aborted=${signal.aborted}`), 50);
    return 'done';
  })
  .tool('sleep', { inputSchema: { type: 'object', properties: { ms: { type: 'integer' } }, required: ['ms'] } }, async ({ ms }) => {
    await sleep(ms);
    return `slept ${ms}`;
  })
  .tool('info', (_, ctx) =>
    JSON.stringify({
      method: ctx.method,
      protocolVersion: ctx.protocolVersion,
      clientInfo: ctx.clientInfo,
      clientCapabilities: ctx.clientCapabilities,
      headers: ctx.headers,
    }),
  )
  .tool('image', () => new ToolResult({ content: ['an image:', { type: 'image', data: 'AAAA', mimeType: 'image/png' }] }))
  .tool('protocol_error', () => {
    throw new McpError('nope', { code: -32602, data: { why: 'test' } });
  });

// zod tools.
server
  .tool(
    'zod_add',
    {
      title: 'Add',
      annotations: { readOnlyHint: true },
      inputSchema: z.object({ a: z.number(), b: z.number().default(10) }),
      outputSchema: z.object({ sum: z.number() }),
    },
    ({ a, b }) => ({ sum: a + b }),
  )
  .tool('zod_refined', { inputSchema: z.object({ even: z.number().refine((n) => n % 2 === 0, 'must be even') }) }, ({ even }) => `even ${even}`);

// Registration changes announce list_changed (core).
server.tool('add_prompt', () => {
  server.prompt('dynamic', () => 'dynamic');
  return 'added';
});
server.tool('drop_template', () => `${server.removeResource('users://{id}/profile')} ${server.removeResource('users://{id}/profile')}`);
server.tool('touch', (_, ctx) => {
  server.notifyResourceUpdated('mem://text');
  return 'touched';
});

await server.serveStdio();
