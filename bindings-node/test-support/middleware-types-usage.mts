// Compiled (never run) by test/types.test.mjs and `make lint-node`: typed
// usage of server middleware (`server.use`, the ready-made `middleware`),
// client middleware (`client.use`) and per-caller visibility
// (`server.visibility`, `visible`). Each misuse
// carries an expect-error directive, so the typings must reject it.

import {
  Server,
  Client,
  McpError,
  middleware,
  type BuiltinMiddleware,
  type CallerAuth,
  type CallerInfo,
  type ClientMiddleware,
  type ClientMiddlewareContext,
  type ClientNext,
  type Middleware,
  type MiddlewareContext,
  type MiddlewareResult,
  type Next,
  type RequestLogEntry,
  type Visible,
  type VisibleItem,
  type VisibilityRule,
} from 'ferromcp';

const server = new Server({ name: 'typed-middleware', version: '1.0.0' });

// An async link: reads and changes the params, awaits next, changes the result.
server.use(async (ctx, next) => {
  const method: string = ctx.method;
  const name: string | undefined = ctx.name;
  const id: string | number = ctx.requestId;
  const who: string | null | undefined = ctx.auth?.subject;
  const scopes: string[] | undefined = ctx.auth?.scopes;
  const client: string | undefined = ctx.clientInfo?.name;
  const version: string = ctx.protocolVersion;
  const header: string | undefined = ctx.headers['x-request-id'];
  ctx.params.arguments = { ...ctx.params.arguments, seenBy: `${method} ${name} ${id} ${who} ${scopes} ${client} ${version} ${header}` };
  if (ctx.name === 'secret') throw new McpError('refused', { code: -32602 });
  const result: MiddlewareResult = await next(ctx);
  return { ...result, _meta: { 'example.com/seen': true } };
});

// A sync link returning next's promise, and next() without an argument.
server.use((ctx, next) => (ctx.method === 'tools/list' ? next() : next(ctx)));

// A named link, typed.
const timing: Middleware = async (ctx: MiddlewareContext, next: Next) => {
  const started = performance.now();
  try {
    return await next(ctx);
  } finally {
    console.error(ctx.method, performance.now() - started);
  }
};
server.use(timing);

// The ready-made links.
const logged: BuiltinMiddleware = middleware.logRequests();
const name: 'logRequests' | 'maskErrors' | 'rateLimit' = logged.name;
server.use(logged);
server.use(middleware.logRequests({ log: (entry: RequestLogEntry) => console.error(entry.method, entry.ok, entry.durationMs, entry.code) }));
server.use(middleware.maskErrors({ log: null }));
server.use(middleware.maskErrors());
server.use(middleware.rateLimit({ perSecond: 2, burst: 5 }));
server.use(middleware.rateLimit({ perSecond: 2, burst: 5, maxClients: 100 }));
console.error(name);

// @ts-expect-error: a link takes (ctx, next), not a string
server.use('logRequests');
// @ts-expect-error: burst is required
middleware.rateLimit({ perSecond: 2 });
// @ts-expect-error: a link returns the result object
server.use(async () => 'done');
// @ts-expect-error: the ctx's method is read-only
server.use((ctx, next) => { ctx.method = 'tools/list'; return next(ctx); });

// Server-wide visibility: by item and caller.
const rule: VisibilityRule = (ctx: CallerInfo, item: VisibleItem) => {
  const kind: 'tool' | 'prompt' | 'resource' | 'resourceTemplate' = item.kind;
  return kind !== 'tool' || !item.key.startsWith('admin_') || (ctx.auth?.scopes.includes('admin') ?? false);
};
server.visibility(rule);
server.visibility((ctx) => ctx.clientInfo?.name !== 'blocked');
server.visibility(null);
// An async rule, reading the token (members absent from it are null).
server.visibility(async (ctx, item) => {
  const auth: CallerAuth | null = ctx.auth;
  const expires: number | null | undefined = auth?.expiresAt;
  return item.kind !== 'tool' || (expires !== null && expires !== undefined);
});
// @ts-expect-error: a rule answers with a boolean (or a Promise of one)
server.visibility(() => 'yes');

// Per registration: a predicate, sync or async, on every kind.
const adminOnly: Visible = (ctx) => ctx.auth?.scopes.includes('admin') ?? false;
server.tool('reset', { visible: adminOnly }, () => 'reset');
server.tool('debug', { visible: (ctx) => ctx.clientInfo?.name === 'inspector' }, () => 'state');
server.prompt('internal', { visible: async (ctx) => ctx.auth?.subject === 'alice' }, () => 'hi');
server.resource('mem://secret', { visible: (ctx) => ctx.auth !== null }, () => 'secret');
server.resource('mem://items/{id}', { visible: adminOnly }, ({ variables: { id } }) => id);
// @ts-expect-error: data rules are gone: a predicate says it
server.tool('data', { visible: { scopes: ['admin'] } }, () => 'x');

const client = await Client.inMemory(server, { name: 'console' });

// Client middleware: an async link changing params, meta and timeout,
// reading and replacing the result; use() chains.
const chained: Client = client.use(async (ctx, next) => {
  const method: string = ctx.method;
  const tool: string | undefined = ctx.name;
  ctx.params.arguments = { ...ctx.params.arguments, seenBy: `${method} ${tool}` };
  ctx.meta['example.com/trace'] = 'abc';
  const timeout: number | undefined = ctx.timeout;
  ctx.timeout = (timeout ?? 1000) * 2;
  if (ctx.name === 'refused') throw new McpError('refused', { code: -32602 });
  const result: MiddlewareResult = await next(ctx);
  return { ...result, _meta: { 'example.com/seen': true } };
});
// A sync link answering alone, or handing on its own ctx with next().
chained.use((ctx, next) => (ctx.name === 'cached' ? { content: [] } : next()));
// A named link, typed.
const clientTiming: ClientMiddleware = async (ctx: ClientMiddlewareContext, next: ClientNext) => {
  try {
    return await next(ctx);
  } finally {
    console.error(ctx.method);
  }
};
client.use(clientTiming);
// @ts-expect-error: a client link returns the result object
client.use(async () => 'done');
// @ts-expect-error: the ctx's method is read-only
client.use((ctx, next) => { ctx.method = 'tools/list'; return next(ctx); });
// @ts-expect-error: a timeout is milliseconds, a number
client.use((ctx, next) => { ctx.timeout = '5s'; return next(ctx); });
// @ts-expect-error: the ready-made links are a server's
client.use(middleware.rateLimit({ perSecond: 2, burst: 5 }));
await client.close();
