'use strict';
/**
 * ferromcp — Model Context Protocol (revision 2026-07-28) servers for Node.js.
 *
 * This file is the public face of the package. The protocol itself (JSON-RPC,
 * validation, transports) lives in the ferromcp Rust core, reached through the
 * native addon loaded by `native.js`; this facade only shapes the API.
 *
 * @example
 * const { Server } = require('ferromcp');
 *
 * const server = new Server({ name: 'demo', version: '1.0.0' });
 * server.tool('echo', {
 *   description: 'Returns the text unchanged.',
 *   inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
 * }, ({ text }) => text);
 * server.serveStdio();
 */

const native = require('./lib/load-native.js');

/**
 * JSON-RPC error codes by name (`PARSE_ERROR`, `HEADER_MISMATCH`, ...), from
 * the Rust core: the same numbers on the wire in every language.
 * @type {Readonly<Record<string, number>>}
 */
const codes = Object.freeze(native.errorCodes());

/**
 * The kinds the core classifies failures into (`"peerError"` for a JSON-RPC
 * error the peer answered with, `"timeout"`, `"closed"`, `"io"`, ...): the
 * values of {@link McpError#kind}.
 * @type {readonly string[]}
 */
const ERROR_KINDS = Object.freeze(native.errorKinds());

/**
 * An MCP error: a JSON-RPC error object as a JS `Error`.
 *
 * ferromcp throws it (or rejects with it) when the core reports a failure:
 * an invalid tool definition, an address already in use, ... `code` is the
 * JSON-RPC error code, `kind` how the core classified the failure (one of
 * {@link ERROR_KINDS}: `"peerError"`, `"invalidDefinition"`, `"io"`,
 * `"timeout"`, ...) and `data` its optional payload; failures that never
 * reached the wire also carry `data.kind`.
 *
 * A tool handler may throw one itself to answer the request with that
 * JSON-RPC error instead of a tool result with `isError: true`.
 *
 * @example
 * server.tool('lookup', { inputSchema: { type: 'object' } }, () => {
 *   throw new McpError('Resource not found', { code: -32002, data: { uri: 'file:///x' } });
 * });
 */
class McpError extends Error {
  /**
   * @param {string} message
   * @param {{ code?: number, kind?: string, data?: unknown, cause?: unknown }} [options]
   */
  constructor(message, options = {}) {
    super(message, 'cause' in options ? { cause: options.cause } : undefined);
    this.name = 'McpError';
    /** @type {number} */
    this.code = options.code ?? codes.INTERNAL_ERROR;
    /**
     * How the core classified the failure; `undefined` for an error created
     * by JS code.
     * @type {string | undefined}
     */
    this.kind = options.kind;
    /** @type {unknown} */
    this.data = options.data;
  }
}

native.registerErrorClass(McpError);
require('./lib/context.js').install(native, McpError);
const { ToolResult } = require('./lib/tool-result.js');
native.registerToolResultClass(ToolResult);
const { toJsonSchema, parser, parsingFirst } = require('./lib/schema.js');
const {
  Client,
  Subscription,
  ToolTask,
  LoadedSkill,
  PROTOCOL_VERSION,
  LEGACY_PROTOCOL_VERSIONS,
  nativeOf: nativeClientOf,
  registerServerAccess,
} = require('./lib/client.js');
const { LoopbackRedirect, headlessAuthorize } = require('./lib/oauth.js');
const { telemetry, atCreation } = require('./lib/telemetry.js');
const { setLogger, installDefault: installDefaultLogger } = require('./lib/logs.js');
// Core's warnings and errors to console.error until setLogger() is called.
installDefaultLogger();
const { adaptLink, adaptNotificationHook, middleware, VisibilityRules, visiblePredicate } = require('./lib/middleware.js');

/** Signals that stop a serving server gracefully (see `handleSignals`). */
const { InvalidToken, JwtVerifier, toNativeProtection } = require('./lib/auth.js');

/**
 * The scopes a registration requires (`[]`: none), checked for shape.
 * @param {unknown} scopes
 * @param {string} what
 * @returns {string[]}
 */
function scopesOf(scopes, what) {
  if (scopes === undefined || scopes === null) return [];
  if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === 'string')) {
    throw new TypeError(`${what}: scopes must be an array of strings`);
  }
  return scopes;
}

const SHUTDOWN_SIGNALS = ['SIGTERM', 'SIGINT'];

/**
 * One upstream mounted in a server, from {@link Server#mount}.
 *
 * @example
 * const mount = await server.mount('alpha', other);
 * mount.unmount(); // the alpha_* tools, prompts and resources are gone
 */
class Mount {
  /** @type {InstanceType<typeof native.Mount>} */
  #native;

  /**
   * Use {@link Server#mount}.
   * @param {InstanceType<typeof native.Mount>} mounted
   */
  constructor(mounted) {
    if (!(mounted instanceof native.Mount)) throw new TypeError('use server.mount(prefix, upstream)');
    this.#native = mounted;
  }

  /**
   * Stops following the upstream and removes everything the mount added;
   * later calls do nothing.
   */
  unmount() {
    this.#native.unmount();
  }
}

/**
 * An MCP server: tools registered with `tool()`, served over stdio or
 * Streamable HTTP.
 *
 * @example
 * const server = new Server({ name: 'ferromcp-echo', version: '1.0.0' });
 * server.tool('add', {
 *   description: 'Adds two integers.',
 *   inputSchema: {
 *     type: 'object',
 *     properties: { a: { type: 'integer' }, b: { type: 'integer' } },
 *     required: ['a', 'b'],
 *   },
 * }, ({ a, b }) => a + b);
 * await server.serveHttp({ port: 8000 });
 */
class Server {
  /** @type {InstanceType<typeof native.Server>} */
  #native;

  static {
    require('./embed.js').install(this, (/** @type {Server} */ server) => server.#native); // fetch(), nodeHandler()
    // Client.inMemory(server): a brand check (`#native in`) rather than
    // `instanceof`, which a look-alike prototype would pass.
    registerServerAccess((server) =>
      server !== null && typeof server === 'object' && #native in server ? server.#native : null,
    );
  }

  /**
   * @param {{ name: string, version: string, title?: string, description?: string,
   *   websiteUrl?: string, icons?: object[], instructions?: string, pageSize?: number,
   *   caching?: Record<string, { ttlMs: number, cacheScope?: 'public' | 'private' }>,
   *   tasks?: { ttlMs?: number | null, keepFinishedMs?: number, pollIntervalMs?: number,
   *     maxTasks?: number, maxTasksPerClient?: number, store?: string }, sealKeys?: string[],
   *   eventBus?: string, replica?: string }} info
   */
  constructor(info) {
    // First: with an OpenTelemetry SDK registered, its provider is in
    // place before core's would start one from the OTEL_* variables.
    atCreation();
    // Server.proxy() wraps the native server core made, as Client's
    // constructor wraps a connected native client.
    if (info instanceof native.Server) {
      this.#native = info;
      return;
    }
    if (info === null || typeof info !== 'object') {
      throw new TypeError('new Server(info): info must be an object like { name, version }');
    }
    const { instructions, pageSize, caching, tasks, sealKeys, eventBus, replica, ...implementation } = info;
    this.#native = new native.Server(implementation, {
      instructions,
      pageSize,
      caching,
      tasks,
      sealKeys,
      eventBus,
      replica,
    });
  }

  /**
   * Registers (or replaces) a tool and returns the server, for chaining.
   *
   * `handler(args, ctx)` gets the validated arguments and a
   * {@link RequestContext}; it returns the result or a Promise of it. A
   * string becomes one text block; with an `outputSchema`, an object is the
   * `structuredContent` and any other value is wrapped as `{ result: value }`;
   * `undefined`/`null` gives empty content. A thrown error or a rejected
   * promise becomes a result with `isError: true` and the text
   * `"<ErrorName>: <message>"`, except an {@link McpError}, which becomes a
   * JSON-RPC error.
   *
   * `task` lets calls become tasks (the tasks extension, SEP-2663): `true`
   * or `'optional'` answers a client that declared the extension with a task
   * handle at once while the handler goes on (its questions then go through
   * the task, its `ctx.signal` follows `tasks/cancel`), other clients with
   * the result; `'required'` refuses those with -32021. `taskStart:
   * 'handler'` waits until the handler calls `ctx.startTask()`, so it can
   * ask first.
   *
   * @example
   * server.tool('render', { task: true }, async () => {
   *   await new Promise((done) => setTimeout(done, 60_000));
   *   return 'done';
   * });
   *
   * @param {string} name
   * @param {{ description?: string, title?: string, inputSchema?: object,
   *   outputSchema?: object, annotations?: object, icons?: object[], _meta?: object,
   *   task?: boolean | 'optional' | 'required', taskStart?: 'call' | 'handler' }} definition
   * @param {(args: any, ctx: import('./native').RequestContext) => unknown} handler
   * @returns {this}
   */
  tool(name, definition, handler) {
    if (typeof definition === 'function' && handler === undefined) {
      handler = definition;
      definition = {};
    }
    if (typeof handler !== 'function') {
      throw new TypeError(`tool(${JSON.stringify(name)}): handler must be a function`);
    }
    const { inputSchema = { type: 'object' }, outputSchema, scopes, task, taskStart, visible, ...rest } = definition ?? {};
    const what = `tool ${JSON.stringify(name)}`;
    const visibleRule = visiblePredicate(visible, what);
    const tool = { ...rest, name, inputSchema: toJsonSchema(inputSchema, 'input', `${what} inputSchema`) };
    if (outputSchema !== undefined) {
      tool.outputSchema = toJsonSchema(outputSchema, 'output', `${what} outputSchema`);
    }
    const parse = parser(inputSchema, `arguments of ${what}`);
    // A rule is in force before its item exists, so no caller sees it unguarded.
    this.#visibility.guard('tool', name, visibleRule);
    this.#native.add(
      'tool',
      tool,
      parse ? parsingFirst(parse, handler) : handler,
      null,
      task === true ? 'optional' : task || null,
      taskStart ?? null,
    );
    this.#native.requireScopes('tool', name, scopesOf(scopes, what));
    this.#visibility.unguard('tool', name, visibleRule);
    return this;
  }

  /**
   * Removes a tool; returns whether it existed.
   * @param {string} name
   * @returns {boolean}
   */
  removeTool(name) {
    this.#visibility.setOwn('tool', name, null);
    return this.#native.remove('tool', name);
  }

  /** Names of the registered tools, in listing order. @type {string[]} */
  get toolNames() {
    return this.#native.toolNames;
  }

  /**
   * Registers (or replaces) a resource and returns the server, for chaining.
   *
   * `uri` is a fixed URI (`"file:///notes.txt"`) or an RFC 6570 template
   * (`"users://{id}/profile"`, recognised by its `{`): a template serves
   * every URI it matches, with the extracted `variables`. `handler({ uri,
   * variables }, ctx)` returns the contents: a string (text), a
   * `Uint8Array`/`Buffer` (a blob), a contents item `{ uri, text | blob,
   * mimeType? }`, a list of them or `{ contents }`, or a Promise of one.
   * `definition.complete` maps template variables to completers;
   * `definition.cache` (`{ ttlMs, cacheScope }`) is the caching hint its
   * reads carry instead of the server-wide `caching.resourceRead`.
   *
   * @example
   * server.resource('users://{id}/profile', {
   *   mimeType: 'application/json',
   *   complete: { id: (value) => ['1', '2'].filter((id) => id.startsWith(value)) },
   * }, ({ variables: { id } }) => JSON.stringify({ id }));
   *
   * @param {string} uri
   * @param {{ name?: string, title?: string, description?: string, mimeType?: string,
   *   size?: number, icons?: object[], annotations?: object, _meta?: object,
   *   cache?: { ttlMs: number, cacheScope?: 'public' | 'private' },
   *   complete?: Record<string, Function> } | Function} definition
   * @param {(request: { uri: string, variables: Record<string, unknown> }, ctx: any) => unknown} [handler]
   * @returns {this}
   */
  resource(uri, definition, handler) {
    if (typeof definition === 'function' && handler === undefined) {
      handler = definition;
      definition = {};
    }
    if (typeof uri !== 'string') throw new TypeError('resource(uri, ...): uri must be a string');
    if (typeof handler !== 'function') {
      throw new TypeError(`resource(${JSON.stringify(uri)}): handler must be a function`);
    }
    const { complete, cache, scopes, visible, name = uri, ...rest } = definition ?? {};
    const required = scopesOf(scopes, `resource ${JSON.stringify(uri)}`);
    const visibleRule = visiblePredicate(visible, `resource ${JSON.stringify(uri)}`);
    const template = uri.includes('{');
    if (!template && complete !== undefined) {
      throw new TypeError(`resource(${JSON.stringify(uri)}): only a URI template has variables to complete`);
    }
    const kind = template ? 'resourceTemplate' : 'resource';
    this.#visibility.guard(kind, uri, visibleRule);
    this.#native.add(kind, { ...rest, name, [template ? 'uriTemplate' : 'uri']: uri }, handler, cache);
    this.#native.requireScopes(kind, uri, required);
    this.#visibility.unguard(kind, uri, visibleRule);
    if (template) this.#completers(`resource\0${uri}`, complete);
    return this;
  }

  /**
   * Removes a resource (a fixed URI, or a template as registered); returns
   * whether it existed.
   * @example
   * server.removeResource('users://{id}/profile');
   * @param {string} uri
   * @returns {boolean}
   */
  removeResource(uri) {
    const kind = uri.includes('{') ? 'resourceTemplate' : 'resource';
    this.#visibility.setOwn(kind, uri, null);
    if (kind === 'resourceTemplate') this.#completerTable.delete(`resource\0${uri}`);
    return this.#native.remove(kind, uri);
  }

  /**
   * Registers (or replaces) a prompt and returns the server, for chaining.
   *
   * Arguments are described by `arguments` (`[{ name, description?,
   * required?, complete? }]`) or by `argsSchema`, an object schema (JSON
   * Schema or Standard Schema such as `z.object({...})`) whose properties
   * are the arguments. `handler(args, ctx)` returns a string (one user
   * message), a message `{ role, content }`, a list of them, or a
   * `GetPromptResult` `{ messages, description? }`, or a Promise of one.
   * `complete` (or an argument's own `complete`) maps argument names to
   * completers.
   *
   * @example
   * server.prompt('review', {
   *   arguments: [{ name: 'code', required: true }],
   * }, ({ code }) => `Review this code:\n${code}`);
   *
   * @param {string} name
   * @param {{ title?: string, description?: string, icons?: object[], _meta?: object,
   *   arguments?: Array<{ name: string, title?: string, description?: string, required?: boolean,
   *   complete?: Function }>, argsSchema?: object, complete?: Record<string, Function> } | Function} definition
   * @param {(args: any, ctx: any) => unknown} [handler]
   * @returns {this}
   */
  prompt(name, definition, handler) {
    if (typeof definition === 'function' && handler === undefined) {
      handler = definition;
      definition = {};
    }
    if (typeof handler !== 'function') {
      throw new TypeError(`prompt(${JSON.stringify(name)}): handler must be a function`);
    }
    const { arguments: args, argsSchema, complete, scopes, visible, ...rest } = definition ?? {};
    const visibleRule = visiblePredicate(visible, `prompt ${JSON.stringify(name)}`);
    const completers = { ...complete };
    /** @type {Array<Record<string, unknown>> | undefined} */
    let list;
    let parse = null;
    if (argsSchema !== undefined) {
      if (args !== undefined) {
        throw new TypeError(`prompt(${JSON.stringify(name)}): give arguments or argsSchema, not both`);
      }
      const schema = toJsonSchema(argsSchema, 'input', `prompt ${JSON.stringify(name)} argsSchema`);
      const required = Array.isArray(schema.required) ? schema.required : [];
      const properties = /** @type {Record<string, any>} */ (schema.properties ?? {});
      list = Object.entries(properties).map(([argName, property]) => {
        /** @type {Record<string, unknown>} */
        const argument = { name: argName, required: required.includes(argName) };
        if (property && typeof property.title === 'string') argument.title = property.title;
        if (property && typeof property.description === 'string') argument.description = property.description;
        return argument;
      });
      parse = parser(argsSchema, `arguments of prompt ${JSON.stringify(name)}`);
    } else if (args !== undefined) {
      list = args.map((/** @type {any} */ { complete: own, ...argument }) => {
        if (own !== undefined) completers[argument.name] = own;
        return argument;
      });
    }
    const prompt = { ...rest, name };
    if (list !== undefined) prompt.arguments = list;
    this.#visibility.guard('prompt', name, visibleRule);
    this.#native.add('prompt', prompt, parse ? parsingFirst(parse, handler) : handler);
    this.#native.requireScopes('prompt', name, scopesOf(scopes, `prompt ${JSON.stringify(name)}`));
    this.#visibility.unguard('prompt', name, visibleRule);
    this.#completers(`prompt\0${name}`, completers);
    return this;
  }

  /**
   * Removes a prompt; returns whether it existed.
   * @param {string} name
   * @returns {boolean}
   */
  removePrompt(name) {
    this.#completerTable.delete(`prompt\0${name}`);
    this.#visibility.setOwn('prompt', name, null);
    return this.#native.remove('prompt', name);
  }

  /**
   * Publishes every skill under `path` (the skills extension, SEP-2640) and
   * returns their `SKILL.md` URIs: each directory holding a `SKILL.md`
   * (YAML frontmatter with `name` equal to the directory's name and a
   * `description`) is a skill; its files become `skill://` resources, read
   * once now, and `skills/list` lists it with each file's digest and size.
   * Throws an {@link McpError} (kind `invalidDefinition`) naming what is wrong.
   * @example
   * server.addSkills('./skills'); // ['skill://git-workflow/SKILL.md', ...]
   * @param {string} path
   * @returns {string[]}
   */
  addSkills(path) {
    return this.#native.addSkills(String(path));
  }

  /**
   * Sets the completion provider for every argument and variable that has
   * no completer of its own: `handler(params, ctx)` gets the whole
   * `completion/complete` params (`ref`, `argument`, `context`). Returns
   * the server, for chaining.
   * @example
   * server.completion(({ argument }) => ['alpha', 'beta'].filter((v) => v.startsWith(argument.value)));
   * @param {(params: any, ctx: any) => unknown} handler
   * @returns {this}
   */
  completion(handler) {
    if (typeof handler !== 'function') throw new TypeError('completion(handler): handler must be a function');
    this.#fallbackCompleter = handler;
    this.#enableCompletion();
    return this;
  }

  /**
   * Adds a link at the end of the middleware chain around every request
   * the server answers (tool calls, reads, prompt gets, lists, completions,
   * `server/discover`...; not the 2025-11-25 handshake nor notifications: see `useNotifications`),
   * whatever the transport; returns the server, for chaining. The first
   * link added sees a request first and its result last.
   *
   * `link(ctx, next)` gets a {@link MiddlewareContext} (`method`, `params`,
   * `name`, `requestId`, `auth`, `clientInfo`, `protocolVersion`...) and
   * `next(ctx)`, which runs the rest of the chain with `ctx.params` (change
   * them first if need be) and resolves to the result object; the link
   * returns that result (changed or not) or one of its own, or a Promise of
   * it. A thrown {@link McpError} answers with that JSON-RPC error without
   * going on; any other thrown error becomes an internal error
   * (`"<ErrorName>: <message>"`), as from a resource handler. `next` may be
   * called once; an error it rejects with can be caught or passed on.
   * `link` may also be one of the ready-made {@link middleware}.
   *
   * @example
   * const server = new Server({ name: 'demo', version: '1.0.0' });
   * server.tool('echo', ({ text }) => text);
   * const seen = [];
   * server.use(async (ctx, next) => {
   *   seen.push(ctx.method);
   *   if (ctx.name === 'echo') ctx.params.arguments = { text: String(ctx.params.arguments?.text).toUpperCase() };
   *   const result = await next(ctx);
   *   return { ...result, _meta: { 'example.com/seen': true } };
   * });
   * const client = await Client.inMemory(server);
   * const result = await client.callTool('echo', { text: 'hi' }); // content[0].text === 'HI'
   * await client.close();
   *
   * @param {((ctx: import('./lib/middleware.js').MiddlewareContext, next: (ctx?: any) => Promise<any>) => unknown)
   *   | InstanceType<typeof native.BuiltinMiddleware>} link
   * @returns {this}
   */
  use(link) {
    if (link instanceof native.BuiltinMiddleware) {
      this.#native.useBuiltin(link);
    } else if (typeof link === 'function') {
      this.#native.useLink(adaptLink(link));
    } else {
      throw new TypeError('use(link): link must be a function (ctx, next) => result or one of middleware.*()');
    }
    return this;
  }

  /**
   * Adds a notification hook at the end of the middleware chain: `hook(note)`
   * sees each notification the server receives (`notifications/initialized`,
   * `notifications/cancelled`, `notifications/roots/list_changed`...), in
   * arrival order, before the server acts on it. `note` is `{ method, params }`;
   * the hook may change `note.params` (or replace the object), and returns
   * `false` to stop the notification there (the hooks after it and the
   * server never see it), anything else to let it go on. Requests pass
   * straight on; hooks and `use()` links share one chain, in the order added.
   *
   * The hook must answer synchronously: the thread delivering the
   * notification waits for it, at most 1000 ms. Past that (this thread
   * busy), or if the hook throws or returns a promise, the notification
   * goes on unchanged and a warning is logged (see `setLogger`).
   *
   * @example
   * const server = new Server({ name: 'demo', version: '1.0.0' });
   * // Cancellation requests are ignored: every call runs to its end.
   * server.useNotifications((note) => note.method !== 'notifications/cancelled');
   *
   * @param {(note: { readonly method: string, params: Record<string, any> }) => boolean | void} hook
   * @returns {this}
   */
  useNotifications(hook) {
    if (typeof hook !== 'function') {
      throw new TypeError('useNotifications(hook): hook must be a function (note) => boolean | void');
    }
    this.#native.useNotificationLink(adaptNotificationHook(hook));
    return this;
  }

  /**
   * Sets the rule deciding which tools, prompts, resources and resource
   * templates each caller sees (replacing any earlier one; `null` removes
   * it); returns the server, for chaining. `rule(ctx, item)` gets who asks
   * (`ctx.auth`, `ctx.clientInfo`, `ctx.protocolVersion`, `ctx.headers`)
   * and the item (`{ kind: 'tool' | 'prompt' | 'resource' |
   * 'resourceTemplate', key }`, the key being its name, URI or URI
   * template) and returns whether the caller may see and use it, or a
   * Promise of that (an `async` rule is awaited); a throw or a rejection
   * hides the item. Lists leave out what it hides, and calling, reading,
   * getting or completing a hidden item fails exactly as for an unknown
   * one. An item's own `visible` option (see {@link Server#tool}) must
   * allow too. The rules of one request are applied in one go, with one
   * `ctx` (a list: every item of its kind).
   *
   * @example
   * const server = new Server({ name: 'demo', version: '1.0.0' });
   * server.tool('search', () => 'found');
   * server.tool('admin_reset', () => 'reset');
   * server.visibility((ctx, item) => !item.key.startsWith('admin_') || ctx.clientInfo?.name === 'console');
   * const guest = await Client.inMemory(server, { name: 'guest' });
   * const tools = await guest.listTools(); // tools.tools.map((t) => t.name) is ['search']
   * await guest.close();
   *
   * @param {((ctx: any, item: { kind: 'tool' | 'prompt' | 'resource' | 'resourceTemplate', key: string }) => boolean | Promise<boolean>) | null} rule
   * @returns {this}
   */
  visibility(rule) {
    if (rule !== null && rule !== undefined && typeof rule !== 'function') {
      throw new TypeError('visibility(rule): rule must be a function (ctx, item) => boolean, or null');
    }
    this.#visibility.setRule(rule ?? null);
    return this;
  }

  /** The predicates of `visibility()` and of each item's `visible`. */
  #visibility = new VisibilityRules((/** @type {any} */ evaluate) => this.#native.setVisibility(evaluate));

  /**
   * Tells clients subscribed to `uri` that it changed
   * (`notifications/resources/updated` on their `subscriptions/listen`
   * streams, or in their 2025-11-25 sessions).
   * @example
   * server.notifyResourceUpdated('users://1/profile');
   * @param {string} uri
   */
  notifyResourceUpdated(uri) {
    this.#native.notifyResourceUpdated(uri);
  }

  /**
   * Serves `upstream`'s tools, prompts, resources, resource templates and
   * completions as part of this server, renamed with `prefix` (tool `echo`
   * under `'alpha'` is `alpha_echo`, resource `mem://r` is `alpha+mem://r`;
   * `''` keeps the names), following the changes it announces. `upstream`
   * is a {@link Client} connected to any MCP server, or another `Server`
   * of this process (reached in memory). Rejects when `prefix` is not a
   * letter followed by letters, digits, `-`, `_` and `.`, or with an
   * {@link McpError} when the upstream cannot be listed.
   * @example
   * const weather = new Server({ name: 'weather', version: '1.0.0' }).tool('forecast', () => 'sunny');
   * const mount = await server.mount('weather', weather); // tool weather_forecast
   * mount.unmount();
   * @param {string} prefix
   * @param {Server | Client} upstream
   * @returns {Promise<Mount>}
   */
  async mount(prefix, upstream) {
    if (typeof prefix !== 'string') throw new TypeError('mount(prefix, upstream): prefix must be a string');
    const mountServer = upstream instanceof Server;
    if (!mountServer && !(upstream instanceof Client)) {
      throw new TypeError('mount(prefix, upstream): upstream must be a Server or a Client');
    }
    const mounted = mountServer
      ? await this.#native.mountServer(prefix, upstream.#native)
      : await this.#native.mount(prefix, nativeClientOf(upstream));
    return new Mount(mounted);
  }

  /**
   * A new server serving exactly what `upstream` serves, under its names,
   * with its identity and instructions: serve it over stdio or HTTP to
   * bridge transports or protocol revisions.
   * @example
   * const remote = await Client.http('https://mcp.example.com/mcp');
   * await (await Server.proxy(remote)).serveStdio();
   * @param {Client} upstream
   * @returns {Promise<Server>}
   */
  static async proxy(upstream) {
    if (!(upstream instanceof Client)) throw new TypeError('Server.proxy(upstream): upstream must be a Client');
    return new Server(await native.Server.proxy(nativeClientOf(upstream)));
  }

  /** Completers by `"prompt\0<name>"` / `"resource\0<template>"`, then argument name. */
  #completerTable = new Map();
  /** @type {Function | null} */
  #fallbackCompleter = null;
  #completionEnabled = false;

  /**
   * @param {string} key
   * @param {Record<string, Function> | undefined} completers
   */
  #completers(key, completers) {
    const entries = Object.entries(completers ?? {});
    if (entries.length === 0) {
      this.#completerTable.delete(key);
      return;
    }
    for (const [argument, fn] of entries) {
      if (typeof fn !== 'function') throw new TypeError(`the completer for ${JSON.stringify(argument)} must be a function`);
    }
    this.#completerTable.set(key, new Map(entries));
    this.#enableCompletion();
  }

  /** Installs the one provider that routes each request to its completer. */
  #enableCompletion() {
    if (this.#completionEnabled) return;
    this.#completionEnabled = true;
    this.#native.setCompletionHandler((/** @type {any} */ params, /** @type {any} */ ctx) => {
      const ref = params.ref ?? {};
      const key = ref.type === 'ref/prompt' ? `prompt\0${ref.name}` : `resource\0${ref.uri}`;
      const completer = this.#completerTable.get(key)?.get(params.argument?.name);
      if (completer) return completer(params.argument?.value ?? '', params.context?.arguments ?? {}, ctx);
      if (this.#fallbackCompleter) return this.#fallbackCompleter(params, ctx);
      return [];
    });
  }

  /**
   * Serves this process's stdin/stdout (newline-delimited JSON-RPC) until
   * stdin ends, `close()` is called or (with `handleSignals`, the default)
   * SIGTERM/SIGINT arrives. Stopping is graceful: listen streams end with
   * their completion result, requests in flight get 10 s to finish. If the
   * client closes stdout, one line goes to stderr and the promise resolves.
   * Write logs to stderr: stdout carries the protocol.
   * @param {{ handleSignals?: boolean }} [options]
   * @returns {Promise<void>}
   */
  serveStdio(options = {}) {
    const serving = this.#native.serveStdio().catch((e) => {
      if (e instanceof McpError && e.kind === 'closed') {
        process.stderr.write('ferromcp: the client closed stdout; stopped serving\n');
        return;
      }
      throw e;
    });
    return this.#untilSignal(serving, options.handleSignals);
  }

  /**
   * Serves Streamable HTTP at `http://<host>:<port><path>` until `close()`
   * is called or (with `handleSignals`, the default) SIGTERM/SIGINT
   * arrives; stopping is graceful, as for `serveStdio()`. `onListening`
   * receives the bound address (useful with `port: 0`). Rejects with an
   * {@link McpError} if the address cannot be bound.
   * `limits` tunes the connection cap, the per-address limit, the timeouts
   * (seconds) and the body size limit; an unknown member or a bad value
   * throws, naming it:
   * `serveHttp({ port: 8000, limits: { maxConnectionsPerAddress: 32, idleTimeout: 30 } })`.
   * @param {{ port?: number, host?: string, path?: string, allowedHosts?: string[],
   *   allowedOrigins?: string[], handleSignals?: boolean, health?: boolean, drainDelayMs?: number,
   *   tls?: { certFile: string, keyFile: string, clientCaFile?: string, clientAuthOptional?: boolean },
   *   limits?: { maxConnections?: number, maxConnectionsPerAddress?: number | null,
   *     headerReadTimeout?: number, bodyReadTimeout?: number, idleTimeout?: number,
   *     maxBodyBytes?: number },
   *   onListening?: (address: { host: string, port: number, url: string }) => void }} [options]
   * @returns {Promise<void>}
   */
  serveHttp(options = {}) {
    const { onListening, handleSignals, auth, ...http } = options;
    if (onListening !== undefined && typeof onListening !== 'function') {
      throw new TypeError('serveHttp(options): onListening must be a function');
    }
    return this.#untilSignal(this.#native.serveHttp(http, onListening, toNativeProtection(auth)), handleSignals);
  }

  /**
   * While `serving` runs, SIGTERM and SIGINT call `close()`: signals belong
   * to the JS side, so this is a `process.on` listener, added only for a
   * signal the program does not already listen to, and removed when
   * serving ends (the process then exits normally, status 0).
   * @param {Promise<void>} serving
   * @param {boolean | undefined} handleSignals
   * @returns {Promise<void>}
   */
  #untilSignal(serving, handleSignals = true) {
    if (!handleSignals) return serving;
    const stop = () => this.close();
    const installed = SHUTDOWN_SIGNALS.filter((signal) => process.listenerCount(signal) === 0);
    for (const signal of installed) process.on(signal, stop);
    const remove = () => {
      for (const signal of installed) process.removeListener(signal, stop);
    };
    return serving.then(
      (value) => {
        remove();
        return value;
      },
      (error) => {
        remove();
        throw error;
      },
    );
  }

  /**
   * Stops serving: pending `serveStdio()`/`serveHttp()` promises resolve and
   * nothing of the server keeps the event loop alive any more.
   */
  close() {
    this.#native.close();
  }
}

module.exports = { Server, Mount, Client, JwtVerifier, InvalidToken, Subscription, ToolTask, LoadedSkill, LoopbackRedirect, headlessAuthorize, PROTOCOL_VERSION, LEGACY_PROTOCOL_VERSIONS, McpError, ToolResult, RequestContext: native.RequestContext, codes, ERROR_KINDS, middleware, telemetry, setLogger };
