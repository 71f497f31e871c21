// Compiled (never run) by test/types.test.mjs: typed usage of the server
// surface beyond tools (resources, prompts, completion, ctx input and
// signal, Standard Schema / zod, ToolResult). Each misuse carries an
// expect-error directive, so the typings must reject it.

import { z } from 'zod';
import {
  Server,
  Client,
  Mount,
  ToolResult,
  McpError,
  RequestContext,
  type Infer,
  type ElicitResult,
  type CreateMessageResult,
  type ListRootsResult,
  type ResourceRequest,
  type Completer,
} from 'ferromcp';

const server = new Server({
  name: 'typed-surface',
  version: '1.0.0',
  caching: { tools: { ttlMs: 60_000 }, resourceRead: { ttlMs: 1000, cacheScope: 'private' } },
});
// @ts-expect-error: a scope is public or private
new Server({ name: 'x', version: '1', caching: { tools: { ttlMs: 1, cacheScope: 'shared' } } });

// Tool arguments typed from an inline JSON Schema...
server.tool(
  'add',
  {
    title: 'Add',
    icons: [{ src: 'https://example.com/add.png', mimeType: 'image/png' }],
    annotations: { readOnlyHint: true },
    _meta: { 'example.com/x': 1 },
    inputSchema: {
      type: 'object',
      properties: { a: { type: 'integer' }, b: { type: 'number' }, note: { type: 'string' } },
      required: ['a', 'b'],
    },
  },
  ({ a, b, note }) => {
    const sum: number = a + b;
    const text: string | undefined = note;
    // @ts-expect-error: `a` is a number
    const wrong: string = a;
    return `${sum} ${text ?? ''} ${wrong}`;
  },
);

// ...or from a zod schema (its output type, defaults applied).
server.tool(
  'greet',
  { inputSchema: z.object({ name: z.string(), times: z.number().default(1) }), outputSchema: z.object({ text: z.string() }) },
  async ({ name, times }, ctx) => {
    const n: number = times;
    // @ts-expect-error: `name` is a string
    const bad: number = name;
    const signal: AbortSignal = ctx.signal;
    return { text: `${name.repeat(n)} ${bad} ${signal.aborted}` };
  },
);

// A tool with no definition; a ToolResult with image content.
server.tool('logo', () => new ToolResult({ content: ['logo:', { type: 'image', data: 'AAAA', mimeType: 'image/png' }] }));

// Asking the client for input, typed answers.
server.tool('ask', async (_args, ctx: RequestContext) => {
  const form: ElicitResult<{ name: string; age?: number }> = await ctx.elicit('Who?', {
    type: 'object',
    properties: { name: { type: 'string' }, age: { type: 'integer' } },
    required: ['name'],
  });
  if (form.action === 'accept') {
    const name: string = form.content.name;
    console.error(name);
  }
  const zodForm = await ctx.elicit('Age?', z.object({ age: z.number() }), { key: 'age' });
  if (zodForm.action === 'accept') {
    const age: number = zodForm.content.age;
    console.error(age);
  }
  const url = await ctx.elicit({ mode: 'url', message: 'Sign in', url: 'https://example.com', elicitationId: 'e1' });
  const action: 'accept' | 'decline' | 'cancel' = url.action;
  const sampled: CreateMessageResult = await ctx.sample(
    { messages: [{ role: 'user', content: { type: 'text', text: 'Hi' } }], maxTokens: 10 },
    { key: 'hi' },
  );
  const roots: ListRootsResult = await ctx.listRoots();
  const raw: unknown = await ctx.ask('roots', {}, { key: 'client_roots' });
  const closed: boolean = ctx.closeSseStream();
  const tenant: string | undefined = ctx.headers['x-tenant'];
  console.error(tenant, ctx.protocolVersion, ctx.clientInfo, ctx.clientCapabilities);
  // @ts-expect-error: sampling needs maxTokens
  await ctx.sample({ messages: [] });
  // @ts-expect-error: unknown input kind
  await ctx.ask('telepathy', {});
  return `${action} ${sampled.model} ${roots.roots.length} ${String(raw)} ${closed}`;
});

// Resources: fixed URIs and templates, variables typed from the template.
server
  .resource(
    'file:///notes.txt',
    { mimeType: 'text/plain', title: 'Notes', annotations: { priority: 1 }, cache: { ttlMs: 5000, cacheScope: 'public' } },
    () => 'notes',
  )
  .resource('mem://bytes', () => new Uint8Array([1, 2, 3]))
  .resource(
    'users://{id}/files{/path*}{?version}',
    {
      description: 'A user file',
      complete: { id: (value: string) => ['1', '2'].filter((v) => v.startsWith(value)) },
    },
    ({ uri, variables }: ResourceRequest<'id' | 'path' | 'version'>) => {
      const id: string = variables.id;
      const path: string = variables.path;
      // @ts-expect-error: not a variable of this template
      const nope: string = variables.other;
      return { uri, text: `${id} ${path} ${variables.version} ${nope}` };
    },
  );
// @ts-expect-error: only the template's variables may have completers
server.resource('users://{id}', { complete: { name: () => [] } }, () => '');
const removed: boolean = server.removeResource('file:///notes.txt');

// Prompts: arguments typed from the list or from an argsSchema.
const completeLanguage: Completer = (value, args, ctx) => {
  const isContext: boolean = ctx instanceof RequestContext;
  return { values: ['js', 'rust'].filter((l) => l.startsWith(value)), total: 2, hasMore: isContext && !args };
};
server
  .prompt(
    'review',
    {
      title: 'Review',
      arguments: [
        { name: 'code', required: true },
        { name: 'language', complete: completeLanguage },
      ],
    },
    ({ code, language }) => {
      const required: string = code;
      const optional: string | undefined = language;
      return `${required} ${optional ?? ''}`;
    },
  )
  .prompt('typed', { argsSchema: z.object({ topic: z.string() }) }, async ({ topic }) => [
    { role: 'user', content: { type: 'text', text: topic } },
  ])
  .prompt('bare', () => 'hello')
  .completion(({ ref, argument }) => (ref.type === 'ref/prompt' ? [ref.name, argument.value] : [ref.uri]));
const promptRemoved: boolean = server.removePrompt('bare');
server.notifyResourceUpdated('file:///notes.txt');

type Args = Infer<{ type: 'object'; properties: { n: { type: 'integer' }; tags: { type: 'array'; items: { type: 'string' } } }; required: ['n'] }>;
const args: Args = { n: 1, tags: ['a'] };
// @ts-expect-error: n is required
const missing: Args = { tags: [] };

console.error(removed, promptRemoved, args, missing, McpError);

// Gateway: mount a Server or a Client, proxy a Client.
async function gateway(client: Client): Promise<Server> {
  const mount: Mount = await server.mount('alpha', new Server({ name: 'inner', version: '1' }));
  mount.unmount();
  (await server.mount('beta', client)).unmount();
  // @ts-expect-error: a prefix is a string
  await server.mount(1, client);
  // @ts-expect-error: the upstream is a Server or a Client
  await server.mount('gamma', { url: 'http://127.0.0.1/mcp' });
  // @ts-expect-error: a Mount is made by mount(), not constructed
  new Mount();
  // @ts-expect-error: a proxy's upstream is a Client
  await Server.proxy(server);
  return Server.proxy(client);
}
console.error(gateway);

