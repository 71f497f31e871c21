// Types of lib/middleware.js: server middleware (`server.use()`, the
// ready-made `middleware`) and per-caller visibility (`server.visibility()`,
// the `visible` registration option). Re-exported by index.d.ts; import
// them from 'ferromcp'.

/**
 * The verified access token of a request on a server served with `auth`,
 * as a visibility rule and a middleware link see it (a handler's
 * `ctx.auth` leaves absent members out instead).
 */
export interface CallerAuth {
  /** The resource owner (`sub`), or `null`. */
  readonly subject: string | null;
  /** The OAuth client the token was issued to (`client_id` or `azp`), or `null`. */
  readonly clientId: string | null;
  /** The granted scopes. */
  readonly scopes: string[];
  /** The audiences (`aud`); the server's resource is one of them. */
  readonly audience: string[];
  /** When the token expires (`exp`, seconds since the Unix epoch), or `null`. */
  readonly expiresAt: number | null;
  /** Every claim as the verifier returned or read it. */
  readonly claims: Record<string, unknown>;
}

/**
 * Who sends a request: what a visibility rule gets, and what a middleware
 * link's {@link MiddlewareContext} starts from (the Rust core describes
 * it, the same in every language).
 *
 * @example
 * ```js
 * server.visibility((ctx) => ctx.auth?.scopes.includes('beta') ?? false);
 * ```
 */
export interface CallerInfo {
  /** The verified access token's owner on a server served with `auth`; `null` otherwise. */
  readonly auth: CallerAuth | null;
  /** The client's `Implementation` (`name`, `version`...), when it sent one; else `null`. */
  readonly clientInfo: { name: string; version: string; [key: string]: unknown } | null;
  /** The protocol revision of the request, e.g. `"2026-07-28"`. */
  readonly protocolVersion: string;
  /** The capabilities the client declared. */
  readonly clientCapabilities: Record<string, unknown>;
  /** The HTTP request's headers (lower-case names, repeated ones joined with `", "`); empty over stdio. */
  readonly headers: Record<string, string>;
}

/**
 * What a middleware link gets: the request, which it may change before
 * calling `next`, and who sends it.
 *
 * @example
 * ```js
 * const server = new Server({ name: 'demo', version: '1.0.0' });
 * server.tool('echo', ({ text }) => text);
 * server.use((ctx, next) => {
 *   console.error(ctx.method, ctx.name, ctx.requestId, ctx.clientInfo?.name);
 *   return next(ctx);
 * });
 * const client = await Client.inMemory(server, { name: 'tester' });
 * await client.callTool('echo', { text: 'hi' }); // logs "tools/call echo <id> tester"
 * await client.close();
 * ```
 */
export interface MiddlewareContext extends CallerInfo {
  /** The method, e.g. `"tools/call"`, `"tools/list"`, `"resources/read"`. */
  readonly method: string;
  /**
   * The params as the client sent them (what `_meta` carries is read into
   * the other members: `clientInfo`, `protocolVersion`...): change them, or
   * replace the object, before calling `next` and the rest of the chain
   * runs with the change.
   */
  params: Record<string, any>;
  /** The tool or prompt the request is for (`params.name`), if any. */
  readonly name: string | undefined;
  /** The JSON-RPC id of the request. */
  readonly requestId: string | number;
}

/**
 * A request's result object as it comes back through the chain (a
 * `CallToolResult`, a list page...). A result without `resultType` is a
 * complete one.
 */
export type MiddlewareResult = Record<string, any>;

/**
 * Runs the rest of the chain, then the request, with `ctx.params` (default:
 * the link's own `ctx`): resolves to the result object, or rejects with the
 * {@link McpError} the request ended in. Once per request.
 */
export type Next = (ctx?: MiddlewareContext) => Promise<MiddlewareResult>;

/**
 * A middleware link: calls `next(ctx)` to go on (or not, to answer by
 * itself) and returns the result, changed or not, or a Promise of it. A
 * thrown {@link McpError} answers with that JSON-RPC error; any other
 * thrown error becomes an internal error (`"<ErrorName>: <message>"`).
 *
 * @example
 * ```js
 * const timing: Middleware = async (ctx, next) => {
 *   const started = performance.now();
 *   try {
 *     return await next(ctx);
 *   } finally {
 *     console.error(`${ctx.method} took ${performance.now() - started} ms`);
 *   }
 * };
 * server.use(timing);
 * ```
 */
export type Middleware = (
  ctx: MiddlewareContext,
  next: Next,
) => { [key: string]: unknown } | Promise<{ [key: string]: unknown }>;

/**
 * What a client middleware link gets: the call on its way out, which it may
 * change before calling `next` (see {@link Client.use}).
 *
 * @example
 * ```js
 * client.use((ctx, next) => {
 *   if (ctx.method === 'tools/call') ctx.timeout = 30_000;
 *   ctx.meta['example.com/trace'] = 'abc';
 *   console.error(ctx.method, ctx.name);
 *   return next(ctx);
 * });
 * ```
 */
export interface ClientMiddlewareContext {
  /** The method, e.g. `"tools/call"`, `"tools/list"`, `"resources/read"`. */
  readonly method: string;
  /**
   * The params as they will be sent (without the `_meta` the client adds):
   * change them, or replace the object, before calling `next`.
   */
  params: Record<string, any>;
  /** The tool or prompt called (`params.name`), if any. */
  readonly name: string | undefined;
  /** Extra `_meta` entries the request carries (the call's `meta` option): change them before calling `next`. */
  meta: Record<string, any>;
  /**
   * The call's own timeout in milliseconds, or `undefined` (the client's
   * `timeout`, if any): set it before calling `next` to change it.
   */
  timeout: number | undefined;
}

/**
 * Runs the rest of the client's chain, then sends the call with
 * `ctx.params`, `ctx.meta` and `ctx.timeout` (default: the link's own
 * `ctx`): resolves to the raw result object as the server answered it, or
 * rejects with the {@link McpError} the call failed with. Once per call.
 */
export type ClientNext = (ctx?: ClientMiddlewareContext) => Promise<MiddlewareResult>;

/**
 * A client middleware link (see {@link Client.use}): calls `next(ctx)` to
 * go on (or not, to answer by itself) and returns the result object,
 * changed or not, or a Promise of it. A thrown {@link McpError} fails the
 * call with that JSON-RPC error; any other thrown error fails it as an
 * internal error with its message.
 *
 * @example
 * ```js
 * const cache = new Map();
 * const cached: ClientMiddleware = async (ctx, next) => {
 *   if (ctx.method !== 'resources/read') return next(ctx);
 *   const uri = String(ctx.params.uri);
 *   if (!cache.has(uri)) cache.set(uri, await next(ctx));
 *   return cache.get(uri);
 * };
 * client.use(cached);
 * ```
 */
export type ClientMiddleware = (
  ctx: ClientMiddlewareContext,
  next: ClientNext,
) => { [key: string]: unknown } | Promise<{ [key: string]: unknown }>;

/**
 * A notification a server received, as a notification hook sees it (see
 * {@link Server.useNotifications}): change `params` (or replace the
 * object) to change what the server acts on. `method` is read-only.
 */
export interface ServerNotification {
  /** The method, e.g. `"notifications/initialized"`, `"notifications/cancelled"`. */
  readonly method: string;
  /** The params object as the client sent it (empty without). */
  params: Record<string, any>;
}

/**
 * A notification a client received, as a notification hook sees it (see
 * {@link Client.useNotifications}): change `params` (or replace them) to
 * change what the callbacks get. `method` is read-only.
 */
export interface ClientNotification {
  /** The method, e.g. `"notifications/progress"`, `"notifications/message"`. */
  readonly method: string;
  /** The params as the server sent them (`null` without). */
  params: any;
}

/**
 * A notification hook: returns `false` to stop the notification (no later
 * hook, and neither the server nor the client's callbacks, see it),
 * anything else (`true`, nothing) to let it go on, with `note.params` as
 * the hook left them. It must answer synchronously: the thread delivering
 * the notification waits for it, at most 1000 ms; past that, or if it
 * throws or returns a promise, the notification goes on unchanged and a
 * warning is logged (see `setLogger`).
 *
 * @example
 * ```js
 * const quiet: NotificationHook<ClientNotification> = (note) =>
 *   !(note.method === 'notifications/message' && note.params?.level === 'debug');
 * client.useNotifications(quiet);
 * ```
 */
export type NotificationHook<N extends ServerNotification | ClientNotification = ServerNotification | ClientNotification> = (
  note: N,
) => boolean | void;

/**
 * One of the ready-made links of {@link middleware}, the Rust core's. Using
 * the same object on two servers shares its state (a rate limit's buckets).
 *
 * @example
 * ```js
 * const limit = middleware.rateLimit({ perSecond: 5, burst: 10 });
 * console.error(limit.name); // 'rateLimit'
 * server.use(limit);
 * ```
 */
export declare class BuiltinMiddleware {
  private constructor();
  /** Which link it is. */
  get name(): 'logRequests' | 'maskErrors' | 'rateLimit';
}

/**
 * What `logRequests` (every request) and `maskErrors` (every internal
 * error, before it is masked) report once a request ends.
 */
export interface RequestLogEntry {
  /** The method, e.g. `"tools/call"`. */
  method: string;
  /** The tool or prompt name, if any. */
  name?: string;
  /** Whether it ended in a result (a tool result flagged `isError` counts as one). */
  ok: boolean;
  /** The JSON-RPC error code, when it failed. */
  code?: number;
  /** The error message (unmasked), when it failed. */
  message?: string;
  /** How long the rest of the chain and the request took, in milliseconds. */
  durationMs: number;
}

/** Where a ready-made link reports: a function, or `null` for nowhere (default: a line on stderr). */
export interface LogOptions {
  log?: ((entry: RequestLogEntry) => void) | null;
}

/**
 * The Rust core's ready-made links, for {@link Server.use}.
 *
 * @example
 * ```js
 * const server = new Server({ name: 'demo', version: '1.0.0' });
 * server.use(middleware.logRequests());
 * server.use(middleware.rateLimit({ perSecond: 10, burst: 20 }));
 * server.use(middleware.maskErrors({ log: (entry) => console.error('masked:', entry.message) }));
 * ```
 */
export declare const middleware: Readonly<{
  /**
   * Logs every request once it ends (method, tool or prompt name,
   * outcome, duration): to `log(entry)`, else one line on stderr (stdout
   * carries the protocol over stdio).
   *
   * @example
   * ```js
   * server.use(middleware.logRequests({ log: (entry) => console.error(JSON.stringify(entry)) }));
   * ```
   */
  logRequests(options?: LogOptions): BuiltinMiddleware;
  /**
   * Internal errors (-32603) reach the client as `"Internal error"` without
   * data; their real message goes to `log(entry)`, else to stderr. Errors
   * a client can act on (invalid params, unknown tool...) and tool results
   * flagged `isError` pass unchanged.
   *
   * @example
   * ```js
   * const server = new Server({ name: 'demo', version: '1.0.0' });
   * server.tool('db', () => { throw new McpError('password=hunter2 rejected', { code: -32603 }); });
   * server.use(middleware.maskErrors({ log: null }));
   * const client = await Client.inMemory(server);
   * await client.callTool('db').catch((e) => console.error(e.message)); // 'Internal error'
   * await client.close();
   * ```
   */
  maskErrors(options?: LogOptions): BuiltinMiddleware;
  /**
   * A token bucket per client (its auth subject or OAuth client id when
   * authenticated, else its `clientInfo`): `burst` requests at once and
   * `perSecond` more every second, for at most `maxClients` clients
   * (default 10,000; the one idle longest makes room). Beyond its budget a
   * request is refused before it runs, with code -32000 and
   * `data.retryAfterMs`.
   *
   * @example
   * ```js
   * server.use(middleware.rateLimit({ perSecond: 2, burst: 5 }));
   * ```
   */
  rateLimit(options: { perSecond: number; burst: number; maxClients?: number }): BuiltinMiddleware;
}>;

/**
 * An item a visibility rule is asked about: its kind and its key (a tool's
 * or a prompt's name, a resource's URI, a template's URI template).
 */
export interface VisibleItem {
  readonly kind: 'tool' | 'prompt' | 'resource' | 'resourceTemplate';
  readonly key: string;
}

/**
 * Whether a caller may see and use an item, or a Promise of that (an
 * `async` rule is awaited); a throw or a rejection hides the item. The
 * rules of one request are applied together, with one `ctx`.
 *
 * @example
 * ```js
 * const adminsOnly: VisibilityRule = (ctx, item) =>
 *   !item.key.startsWith('admin_') || (ctx.auth?.scopes.includes('admin') ?? false);
 * server.visibility(adminsOnly);
 * server.visibility(async (ctx, item) => item.kind !== 'tool' || (await allowedTools(ctx)).has(item.key));
 * ```
 */
export type VisibilityRule = (ctx: CallerInfo, item: VisibleItem) => boolean | Promise<boolean>;

/**
 * A registration's own visibility (besides the server-wide rule; both must
 * allow): a predicate of the caller, which may be `async`.
 *
 * @example
 * ```js
 * server.tool('reset', { visible: (ctx) => ctx.auth?.scopes.includes('admin') ?? false }, () => 'reset');
 * server.tool('debug', { visible: (ctx) => ctx.clientInfo?.name === 'inspector' }, () => 'state');
 * ```
 */
export type Visible = (ctx: CallerInfo) => boolean | Promise<boolean>;
