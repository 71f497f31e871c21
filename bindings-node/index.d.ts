/**
 * ferromcp — Model Context Protocol (revision 2026-07-28) servers for Node.js,
 * on the ferromcp Rust core.
 *
 * @example
 * ```js
 * import { Server } from 'ferromcp';
 *
 * const server = new Server({ name: 'ferromcp-echo', version: '1.0.0' });
 * server.tool('echo', {
 *   description: 'Returns the text unchanged.',
 *   inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
 * }, ({ text }) => text);
 * await server.serveStdio();
 * ```
 *
 * @packageDocumentation
 */

import type { HttpAddress, HttpOptions as NativeHttpOptions, Caching } from './native';
import type { AuthOptions } from './lib/auth';
import type { Client } from './lib/client';
import type { Middleware, BuiltinMiddleware, NotificationHook, ServerNotification, VisibilityRule } from './lib/middleware';
import type {
  RequestContext,
  Schema,
  Infer,
  ResourceDefinition,
  ResourceHandler,
  TemplateVariables,
  PromptArgument,
  PromptDefinition,
  PromptHandler,
  PromptArgs,
  CompleteParams,
  CompletionValues,
  Decorations,
} from './lib/types';

export { RequestContext, ToolResult } from './lib/types';
export type {
  JsonSchema,
  StandardSchemaV1,
  Schema,
  Infer,
  FromJsonSchema,
  Decorations,
  Completer,
  CompletionValues,
  TemplateVariables,
  ResourceRequest,
  ResourceDefinition,
  ResourceHandler,
  PromptArgument,
  PromptArgs,
  PromptDefinition,
  PromptHandler,
  CompleteParams,
  AskOptions,
  ElicitResult,
  ElicitFormParams,
  ElicitUrlParams,
  SamplingMessage,
  CreateMessageParams,
  CreateMessageResult,
  ListRootsResult,
} from './lib/types';
export type { HttpAddress, CacheHint, Caching } from './native';
export type { HandlerOptions, NodeHandler } from './embed.js';
export { InvalidToken, JwtVerifier } from './lib/auth';
export type { AuthOptions, AuthInfo, JwtVerifierOptions, VerifyToken } from './lib/auth';
export * from './lib/client'; // Client, Subscription and the result types
export * from './lib/oauth'; // OAuthOptions, TokenStore, LoopbackRedirect, headlessAuthorize
export { middleware } from './lib/middleware';
export { telemetry } from './lib/telemetry';
export type { Telemetry, OpenTelemetryOptions, OpenTelemetryTracerProvider, OpenTelemetryMeterProvider } from './lib/telemetry';
export { setLogger } from './lib/logs';
export type { LogLevel, Logger, SetLoggerOptions } from './lib/logs';
export type {
  BuiltinMiddleware,
  CallerAuth,
  CallerInfo,
  ClientMiddleware,
  ClientMiddlewareContext,
  ClientNext,
  ClientNotification,
  LogOptions,
  Middleware,
  MiddlewareContext,
  MiddlewareResult,
  Next,
  NotificationHook,
  RequestLogEntry,
  ServerNotification,
  Visible,
  VisibleItem,
  VisibilityRule,
} from './lib/middleware';

/**
 * How the core classifies a failure: `"peerError"` (the peer answered with a
 * JSON-RPC error; `code` is its code), or a failure that never was one.
 */
export type ErrorKind =
  | 'peerError'
  | 'io'
  | 'json'
  | 'http'
  | 'httpStatus'
  | 'protocol'
  | 'invalidDefinition'
  | 'closed'
  | 'timeout'
  | 'cancelled'
  | 'auth';

/** Every {@link ErrorKind}, from the core. */
export declare const ERROR_KINDS: readonly ErrorKind[];

/** JSON-RPC error codes by name, from the core (the numbers on the wire). */
export declare const codes: Readonly<{
  PARSE_ERROR: -32700;
  INVALID_REQUEST: -32600;
  METHOD_NOT_FOUND: -32601;
  INVALID_PARAMS: -32602;
  INTERNAL_ERROR: -32603;
  /** MCP `HeaderMismatch`. */
  HEADER_MISMATCH: -32020;
  /** MCP `MissingRequiredClientCapability`. */
  MISSING_REQUIRED_CLIENT_CAPABILITY: -32021;
  /** MCP `UnsupportedProtocolVersion`. */
  UNSUPPORTED_PROTOCOL_VERSION: -32022;
  /** Resource not found, from 2025-11-25 servers (never sent by ferromcp). */
  RESOURCE_NOT_FOUND_LEGACY: -32002;
  /** URL elicitation required, from 2025-11-25 servers (never sent by ferromcp). */
  URL_ELICITATION_REQUIRED_LEGACY: -32042;
}>;

/**
 * An MCP error: a JSON-RPC error object as a JS `Error`.
 *
 * ferromcp throws it (or rejects with it) when the core reports a failure: an
 * invalid tool definition, an address already in use, ... `code` is the
 * JSON-RPC code and `kind` the core's classification ({@link ErrorKind}).
 * Failures that never reached the wire also carry `data.kind`; I/O errors add
 * `data.ioKind`, e.g. `"AddrInUse"`.
 *
 * A tool handler may throw one itself to answer the request with that JSON-RPC
 * error instead of a tool result with `isError: true`.
 *
 * @example
 * ```js
 * server.tool('lookup', { inputSchema: { type: 'object' } }, () => {
 *   throw new McpError('Resource not found', { code: -32002, data: { uri: 'file:///x' } });
 * });
 * ```
 */
export declare class McpError extends Error {
  /**
   * @param message - a short description (the JSON-RPC `message`).
   * @param options - `code` (default -32603, Internal error), optional `data`
   *   and `cause`.
   */
  constructor(message: string, options?: { code?: number; kind?: ErrorKind; data?: unknown; cause?: unknown });
  /** Always `"McpError"`. */
  name: 'McpError';
  /** The JSON-RPC error code. */
  code: number;
  /** How the core classified the failure; `undefined` for an error created by JS code. */
  kind: ErrorKind | undefined;
  /** Extra structured information, if any. */
  data: unknown;
}

/** Who the server is, and server-wide settings. */
export interface ServerInfo {
  /** Programmatic name, e.g. `"ferromcp-echo"`. */
  name: string;
  /** Version string, e.g. `"1.0.0"`. */
  version: string;
  /** Human-readable title. */
  title?: string;
  /** What the server is for. */
  description?: string;
  /** Where to learn more. */
  websiteUrl?: string;
  /** Icons (`{ src, mimeType?, sizes?, theme? }`). */
  icons?: Array<Record<string, unknown>>;
  /** Natural-language guidance for the client, returned by `server/discover`. */
  instructions?: string;
  /** Items per page of `tools/list` (default 100). */
  pageSize?: number;
  /**
   * Caching hints (`{ ttlMs, cacheScope }`) of the cacheable results, by
   * kind: `discover`, `tools`, `resources`, `resourceTemplates`,
   * `resourceRead`, `prompts` (default: immediately stale, `"public"`). A
   * resource registered with its own `cache` keeps it.
   */
  caching?: Caching;
  /** How tasks are kept (the tasks extension); see {@link TaskSettings}. */
  tasks?: TaskSettings;
  /**
   * Keys protecting cursors and `requestState`: base64 secrets of at least
   * 16 bytes, the first sealing, every one opening (rotation: put the new
   * key first). Replicas with the same keys accept each other's state.
   * Default: `FERROMCP_SEAL_KEYS` (comma-separated), else a random key.
   *
   * @example
   * ```js
   * new Server({ name: 'api', version: '1.0.0', sealKeys: [process.env.NEW_KEY, process.env.OLD_KEY] });
   * ```
   */
  sealKeys?: string[];
  /**
   * Where replicas tell each other of changes (list changes, resource
   * updates, tasks): a `redis://host:port` URL. Default:
   * `FERROMCP_EVENT_BUS`, else none (one process). See docs/DEPLOYING.md.
   *
   * @example
   * ```js
   * new Server({ name: 'api', version: '1.0.0', eventBus: 'redis://redis:6379', replica: 'r1' });
   * ```
   */
  eventBus?: string;
  /**
   * This replica's name (letters, digits, `-`, `_`): 2025-11-25 session ids
   * start with it and a dot, for a load balancer to route on. Default:
   * `FERROMCP_REPLICA`.
   */
  replica?: string;
}

/**
 * How a server keeps tasks. Every key is optional; core reads them, so the
 * defaults are the same in every language; a bad value throws naming it.
 *
 * @example
 * ```js
 * const server = new Server({ name: 'jobs', version: '1.0.0', tasks: { ttlMs: 60_000, maxTasksPerClient: 100 } });
 * ```
 */
export interface TaskSettings {
  /** How long after its creation a task is kept at least (default one hour); `null`: until the limits push it out. */
  ttlMs?: number | null;
  /** How long a finished task stays readable at least (default 60 s). */
  keepFinishedMs?: number;
  /** The `pollIntervalMs` suggested to clients (default 500; at most half of `ttlMs`). */
  pollIntervalMs?: number;
  /** Tasks kept at once (default 10,000); past it creating a task fails with an error naming the limit. */
  maxTasks?: number;
  /** Tasks kept at once for one client (default 1,000). */
  maxTasksPerClient?: number;
  /**
   * Where tasks are kept: `'memory'` (this process) or a `redis://` URL, where
   * every replica finds them. Default: `FERROMCP_TASK_STORE`, else memory.
   */
  store?: string;
}

/** A tool's definition, besides its name. */
export interface ToolDefinition<S extends Schema = Schema> extends Decorations {
  /**
   * Schema of the arguments (JSON Schema or a Standard Schema such as
   * `z.object({...})`); default `{ type: 'object' }`. The handler's `args`
   * are typed from it.
   */
  inputSchema?: S;
  /**
   * Schema of `structuredContent`. With it, a handler's object result is
   * the structured content and any other value is wrapped as `{ result: value }`.
   */
  outputSchema?: Schema;
  /** Behaviour hints (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`). */
  annotations?: {
    title?: string;
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
    [key: string]: unknown;
  };
  /**
   * Whether calls may become tasks (the tasks extension, SEP-2663): `true`
   * or `'optional'` answers a client that declared the extension with a task
   * handle while the handler goes on, other clients with the result;
   * `'required'` refuses those with -32021.
   */
  task?: boolean | 'optional' | 'required';
  /**
   * When a call becomes a task: `'call'` (default) as it arrives, `'handler'`
   * when the handler calls `ctx.startTask()`, so it can ask the client first.
   */
  taskStart?: 'call' | 'handler';
}

/**
 * A tool implementation. It gets the arguments, already validated against
 * `inputSchema`, and the request context, and returns the result or a
 * Promise of it:
 *
 * - a string becomes one text content block;
 * - with an `outputSchema`, an object is the `structuredContent` (mirrored as
 *   JSON text) and any other value is wrapped as `{ result: value }`;
 * - `undefined` or `null` gives empty content;
 * - a {@link ToolResult} is a whole result (images, audio, resources,
 *   several blocks, `isError`, `_meta`);
 * - a thrown error or a rejected promise becomes a result with
 *   `isError: true` and the text `"<ErrorName>: <message>"`, except a thrown
 *   {@link McpError}, which answers with that JSON-RPC error.
 */
export type ToolHandler<Args = any> = (args: Args, ctx: RequestContext) => unknown;

/**
 * Limits of the HTTP server against clients that hold it without using it
 * (`limits` of {@link HttpOptions}). Every member is optional; a missing
 * one (or `undefined`, `null`) keeps its default. The Rust core reads them
 * (`transport::http::HttpLimits`), so names, defaults and errors are the
 * same in every language; an unknown member or a bad value makes
 * `serveHttp()` throw, naming it. See docs/SECURITY.md.
 *
 * @example
 * ```js
 * await server.serveHttp({ port: 8000, limits: { maxConnectionsPerAddress: 32, idleTimeout: 30 } });
 * ```
 */
export interface HttpLimits {
  /**
   * Connections served at once (default 1024, lowered to fit the descriptor
   * limit). At the cap a new client is admitted by closing a connection
   * doing nothing (never used first, then idle, oldest first); only when
   * all are busy does it wait.
   */
  maxConnections?: number;
  /**
   * Connections from one IP address (default: no limit). Over it the
   * address's own oldest idle connection is closed, or the new one refused
   * with 429. Behind a reverse proxy every client has the proxy's address.
   */
  maxConnectionsPerAddress?: number | null;
  /**
   * Seconds for a request head to arrive after its first byte, and for a
   * new connection to send its first byte (default 10).
   */
  headerReadTimeout?: number;
  /** Seconds for a request body to arrive after its head (default 30). */
  bodyReadTimeout?: number;
  /**
   * Seconds a kept-alive connection may wait for its next request (default
   * 60); a streaming response is never cut.
   */
  idleTimeout?: number;
  /** Largest request body in bytes (default 16 MiB). */
  maxBodyBytes?: number;
  /** Legacy (2025-11-25) sessions at once (default 10,000). */
  maxSessions?: number;
  /**
   * Legacy sessions of one client address (default 64). Behind a reverse
   * proxy every client has the proxy's address: raise it there.
   */
  maxSessionsPerAddress?: number;
}

/** Where and how to serve Streamable HTTP. */
export interface HttpOptions extends Omit<NativeHttpOptions, 'limits'> {
  /** Connection cap, per-address limit, timeouts and body size (see {@link HttpLimits}). */
  limits?: HttpLimits;
  /** Called once the socket is bound, with the real address (useful with `port: 0`). */
  onListening?: (address: HttpAddress) => void;
  /**
   * Whether SIGTERM/SIGINT stop the server gracefully while it serves
   * (default `true`; a signal the program already listens to is left alone).
   */
  handleSignals?: boolean;
  /** Protection by OAuth bearer tokens (see {@link AuthOptions}); default: none. */
  auth?: AuthOptions;
}

/**
 * An MCP server: tools registered with {@link Server.tool}, served over stdio
 * ({@link Server.serveStdio}) or Streamable HTTP ({@link Server.serveHttp}).
 * Tests reach it without a socket through {@link Client.inMemory}.
 *
 * @example
 * ```js
 * const server = new Server({ name: 'ferromcp-echo', version: '1.0.0' });
 * server.tool('add', {
 *   description: 'Adds two integers.',
 *   inputSchema: {
 *     type: 'object',
 *     properties: { a: { type: 'integer' }, b: { type: 'integer' } },
 *     required: ['a', 'b'],
 *   },
 *   outputSchema: { type: 'object', properties: { result: { type: 'integer' } }, required: ['result'] },
 * }, ({ a, b }) => a + b); // structuredContent: { result: a + b }
 * await server.serveHttp({ port: 8000 }); // http://127.0.0.1:8000/mcp
 * ```
 */
export declare class Server {
  /**
   * @throws {McpError} when `info` is not a valid `Implementation` (code -32602).
   * @throws {TypeError} when `info` is not an object.
   */
  constructor(info: ServerInfo);

  /**
   * Registers (or replaces) a tool; returns the server, for chaining.
   *
   * @example
   * ```js
   * server.tool('echo', {
   *   description: 'Returns the text unchanged.',
   *   inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
   * }, async ({ text }, ctx) => {
   *   ctx.log('info', { echoing: text });
   *   return text;
   * });
   * ```
   *
   * @throws {McpError} when the definition is not acceptable (an invalid
   *   JSON Schema, a bad name): code -32602, `data.kind` `"invalidDefinition"`.
   * @throws {TypeError} when `handler` is not a function.
   */
  tool<const S extends Schema = Schema>(name: string, definition: ToolDefinition<S>, handler: ToolHandler<Infer<S>>): this;
  /** A tool that takes no arguments beyond an object. */
  tool(name: string, handler: ToolHandler<Record<string, unknown>>): this;

  /**
   * Removes a tool; returns whether it existed.
   *
   * @example
   * ```js
   * server.removeTool('echo'); // true
   * ```
   */
  removeTool(name: string): boolean;

  /**
   * Names of the registered tools, in listing order.
   *
   * @example
   * ```js
   * console.error(server.toolNames); // [ 'echo', 'add' ]
   * ```
   */
  get toolNames(): string[];

  /**
   * Registers (or replaces) a resource; returns the server, for chaining.
   * `uri` is a fixed URI or an RFC 6570 template (recognised by its `{`),
   * whose variables type `request.variables` and may have completers.
   *
   * @example
   * ```js
   * server.resource('file:///notes.txt', { mimeType: 'text/plain' }, () => 'my notes');
   * server.resource('users://{id}/profile', {
   *   mimeType: 'application/json',
   *   complete: { id: (value) => ['1', '2'].filter((id) => id.startsWith(value)) },
   * }, ({ variables: { id } }) => JSON.stringify({ id }));
   * ```
   *
   * @throws {McpError} when the definition is not acceptable (kind `"invalidDefinition"`).
   */
  resource<const U extends string>(
    uri: U,
    definition: ResourceDefinition<TemplateVariables<U>>,
    handler: ResourceHandler<TemplateVariables<U>>,
  ): this;
  resource<const U extends string>(uri: U, handler: ResourceHandler<TemplateVariables<U>>): this;

  /**
   * Removes a resource (a fixed URI, or a template as registered); returns
   * whether it existed.
   *
   * @example
   * ```js
   * server.removeResource('file:///notes.txt'); // true
   * server.removeResource('users://{id}/profile');
   * ```
   */
  removeResource(uri: string): boolean;

  /**
   * Registers (or replaces) a prompt; returns the server, for chaining.
   * Its arguments come from `arguments` (each may have a `complete`r) or
   * from `argsSchema`, and type the handler's `args`.
   *
   * @example
   * ```js
   * server.prompt('review', {
   *   description: 'Reviews code.',
   *   arguments: [{ name: 'code', required: true }, { name: 'language', complete: () => ['js', 'rust'] }],
   * }, ({ code, language }) => `Review this ${language ?? ''} code:\n${code}`);
   * ```
   */
  prompt<const A extends readonly PromptArgument[] = readonly PromptArgument[], const S extends Schema | undefined = undefined>(
    name: string,
    definition: PromptDefinition<A, S>,
    handler: PromptHandler<S extends Schema ? Infer<S> : PromptArgs<A>>,
  ): this;
  prompt(name: string, handler: PromptHandler<Record<string, string>>): this;

  /**
   * Removes a prompt; returns whether it existed.
   *
   * @example
   * ```js
   * server.removePrompt('review');
   * ```
   */
  removePrompt(name: string): boolean;

  /**
   * Publishes every skill under `path` (the skills extension, SEP-2640) and
   * returns their `SKILL.md` URIs: each directory holding a `SKILL.md`
   * whose YAML frontmatter names it is a skill; its files become `skill://`
   * resources and `skills/list` lists it with each file's digest and size.
   * Throws an {@link McpError} naming what is wrong.
   *
   * @example
   * ```js
   * server.addSkills('./skills'); // ['skill://git-workflow/SKILL.md', ...]
   * ```
   */
  addSkills(path: string): string[];

  /**
   * Sets the completion provider for arguments and variables without a
   * completer of their own; returns the server, for chaining.
   *
   * @example
   * ```js
   * server.completion(({ argument }) => ['alpha', 'beta'].filter((v) => v.startsWith(argument.value)));
   * ```
   */
  completion(
    handler: (params: CompleteParams, ctx: RequestContext) => string[] | CompletionValues | Promise<string[] | CompletionValues>,
  ): this;

  /**
   * Adds a link at the end of the middleware chain around every request
   * the server answers (tool calls, reads, prompt gets, lists,
   * completions, `server/discover`; not the 2025-11-25 handshake nor
   * notifications), over every transport; returns the server, for
   * chaining. The first link added sees a request first and its result
   * last.
   *
   * `link(ctx, next)` may read or change `ctx.params`, call `next(ctx)`
   * (once) to run the rest of the chain, and return its result, changed or
   * not, or answer by itself; sync or async. A thrown {@link McpError}
   * answers with that JSON-RPC error and nothing further runs; any other
   * thrown error becomes an internal error (-32603, `"<ErrorName>:
   * <message>"`), as from a resource handler, and the server goes on
   * serving. `link` may also be one of the ready-made {@link middleware}.
   * Notifications the server receives go to {@link Server.useNotifications}
   * hooks instead.
   *
   * @example
   * ```js
   * const server = new Server({ name: 'demo', version: '1.0.0' });
   * server.tool('echo', ({ text }) => text);
   * server.use(async (ctx, next) => {
   *   if (ctx.name === 'echo' && ctx.params.arguments?.text === 'forbidden') {
   *     throw new McpError('refused by policy', { code: -32602 });
   *   }
   *   if (ctx.name === 'echo') ctx.params.arguments = { text: String(ctx.params.arguments?.text).toUpperCase() };
   *   const result = await next(ctx);
   *   return { ...result, _meta: { ...result._meta, 'example.com/checked': true } };
   * });
   * server.use(middleware.rateLimit({ perSecond: 10, burst: 20 }));
   * const client = await Client.inMemory(server);
   * const { content } = await client.callTool('echo', { text: 'hi' }); // content[0].text === 'HI'
   * await client.callTool('echo', { text: 'forbidden' }).catch((e) => console.error(e.code)); // -32602
   * await client.close();
   * ```
   */
  use(link: Middleware | BuiltinMiddleware): this;

  /**
   * Adds a notification hook at the end of the middleware chain; returns
   * the server, for chaining. `hook(note)` sees each notification the
   * server receives (`notifications/initialized` from a 2025-11-25 client,
   * `notifications/cancelled`, `notifications/roots/list_changed`...), in
   * arrival order, before the server acts on it: it may change
   * `note.params`, and returns `false` to stop the notification there (the
   * hooks after it and the server never see it; a stopped
   * `notifications/cancelled` leaves the request running). Requests pass
   * the hook straight on; hooks and {@link Server.use} links share one
   * chain, in the order added.
   *
   * The hook runs on this thread and must answer synchronously: the
   * thread delivering the notification waits for it, at most 1000 ms.
   * Past that (this thread busy or blocked), or if the hook throws or
   * returns a promise, the notification goes on unchanged and a warning is
   * logged (see `setLogger`); a hook that comes too late is not called.
   *
   * @example
   * ```js
   * const server = new Server({ name: 'demo', version: '1.0.0' });
   * server.tool('report', async () => { await new Promise((r) => setTimeout(r, 100)); return 'done'; });
   * const initialized = [];
   * server.useNotifications((note) => {
   *   if (note.method === 'notifications/initialized') initialized.push(Date.now());
   *   // Cancellation is ignored: every call runs to its end.
   *   return note.method !== 'notifications/cancelled';
   * });
   * const client = await Client.inMemory(server, { era: 'legacy' });
   * await client.callTool('report'); // initialized.length === 1 (the handshake came first)
   * await client.close();
   * ```
   */
  useNotifications(hook: NotificationHook<ServerNotification>): this;

  /**
   * Sets the rule deciding which tools, prompts, resources and resource
   * templates each caller sees (replacing any earlier one; `null` removes
   * it); returns the server, for chaining. Lists leave out what it hides,
   * and calling, reading, getting or completing a hidden item fails
   * exactly as for an unknown one; filtered lists are marked
   * `cacheScope: "private"`. The rule answers with a boolean or a Promise
   * of one (an `async` rule is awaited; a throw or a rejection hides the
   * item), for every item of a request with the same `ctx`. A
   * registration's own `visible` option must allow too.
   *
   * @example
   * ```js
   * const server = new Server({ name: 'demo', version: '1.0.0' });
   * server.tool('search', () => 'found');
   * server.tool('admin_reset', () => 'reset');
   * server.visibility((ctx, item) => !item.key.startsWith('admin_') || ctx.clientInfo?.name === 'console');
   * const guest = await Client.inMemory(server, { name: 'guest' });
   * const { tools } = await guest.listTools(); // tools.map((t) => t.name) is ['search']
   * await guest.callTool('admin_reset').catch((e) => console.error(e.message)); // 'Unknown tool: admin_reset'
   * await guest.close();
   * ```
   */
  visibility(rule: VisibilityRule | null): this;

  /**
   * Tells clients subscribed to `uri` that it changed.
   *
   * @example
   * ```js
   * server.notifyResourceUpdated('file:///notes.txt');
   * ```
   */
  notifyResourceUpdated(uri: string): void;

  /**
   * Serves `upstream`'s tools, prompts, resources, resource templates and
   * completions as part of this server, renamed with `prefix`: tool `echo`
   * under `'alpha'` is `alpha_echo`, resource `mem://r` is `alpha+mem://r`
   * (in URIs a `_` of the prefix is written `-`; `''` keeps the names).
   * Calls are forwarded with their progress, logs, cancellation and
   * questions; list changes the upstream announces are followed.
   * `upstream` is a {@link Client} connected to any MCP server (stdio or
   * HTTP, either protocol revision), or another `Server` of this process,
   * reached in memory. Mounting sets up this server's completion provider
   * (see {@link Server.completion}) so that both answer.
   *
   * @example
   * ```js
   * const weather = new Server({ name: 'weather', version: '1.0.0' });
   * weather.tool('forecast', () => 'sunny');
   * const app = new Server({ name: 'app', version: '1.0.0' });
   * const mount = await app.mount('weather', weather);
   * console.error(app.toolNames); // [ 'weather_forecast' ]
   * mount.unmount();
   * ```
   *
   * @returns a promise of the {@link Mount}, whose `unmount()` takes it out.
   * @throws (as a rejection) an `Error` whose message starts with
   *   `invalid mount prefix` when `prefix` is not a letter followed by
   *   letters, digits, `-`, `_` and `.`; an {@link McpError} when the
   *   upstream cannot be reached or listed; a `TypeError` when `upstream`
   *   is neither a `Server` nor a `Client`.
   */
  mount(prefix: string, upstream: Server | Client): Promise<Mount>;

  /**
   * A new server serving exactly what `upstream` serves, under the
   * upstream's names, with its identity and instructions, in whichever
   * protocol revision each of its own clients speaks: serve it over stdio
   * or HTTP to bridge transports or revisions.
   *
   * @example
   * ```js
   * const remote = await Client.http('https://mcp.example.com/mcp');
   * const proxy = await Server.proxy(remote);
   * await proxy.serveStdio();
   * ```
   *
   * @throws {McpError} (as a rejection) when the upstream cannot be listed.
   */
  static proxy(upstream: Client): Promise<Server>;

  /**
   * Serves this process's stdin/stdout (newline-delimited JSON-RPC) until
   * stdin ends, {@link Server.close} is called or (with `handleSignals`,
   * the default) SIGTERM/SIGINT arrives. Stopping is graceful: listen
   * streams end with their completion result, requests in flight get 10 s
   * to finish. If the client closes stdout, one line goes to stderr and the
   * promise resolves. stdout carries the protocol: write logs to stderr
   * (`console.error`), never `console.log`.
   *
   * @example
   * ```js
   * await server.serveStdio();
   * ```
   */
  serveStdio(options?: { handleSignals?: boolean }): Promise<void>;

  /**
   * Serves Streamable HTTP at `http://<host>:<port><path>` (default
   * `http://127.0.0.1:8000/mcp`) until {@link Server.close} is called or
   * (with `handleSignals`, the default) SIGTERM/SIGINT arrives; stopping is
   * graceful, as for {@link Server.serveStdio}.
   *
   * @example
   * ```js
   * await server.serveHttp({
   *   port: 0,
   *   onListening: ({ url }) => console.error(`listening on ${url}`),
   * });
   * ```
   *
   * @returns a promise that resolves when the server stops.
   * @throws {McpError} (as a rejection) when the address cannot be bound:
   *   `data.kind` `"io"`, e.g. `data.ioKind` `"AddrInUse"`.
   */
  serveHttp(options?: HttpOptions): Promise<void>;

  /**
   * Stops serving: pending {@link Server.serveStdio} / {@link Server.serveHttp}
   * promises resolve and nothing of the server keeps the event loop alive any
   * more. The server may be served again afterwards.
   *
   * @example
   * ```js
   * process.once('SIGTERM', () => server.close());
   * ```
   */
  close(): void;
}

/**
 * One upstream mounted in a server, from {@link Server.mount}. Dropping it
 * leaves the mount in place; {@link Mount.unmount} takes it out.
 *
 * @example
 * ```js
 * const mount = await server.mount('alpha', other);
 * mount.unmount(); // the alpha_* tools, prompts and resources are gone
 * ```
 */
export declare class Mount {
  private constructor();
  /**
   * Stops following the upstream and removes everything the mount added
   * (clients listening hear of it as a list change); later calls do
   * nothing.
   *
   * @example
   * ```js
   * mount.unmount();
   * console.error(server.toolNames.some((name) => name.startsWith('alpha_'))); // false
   * ```
   */
  unmount(): void;
}
