'use strict';
/**
 * The MCP client: the facade over the native `Client` (src/client.rs),
 * which runs core's `ferromcp::client` (era detection, MRTR rounds,
 * pagination, cancellation...). This file only shapes the API: options
 * objects, async iterables over pages and notifications, `AbortSignal`
 * wiring, and handlers that may be sync or async.
 *
 * @example
 * const { Client } = require('ferromcp');
 *
 * const client = await Client.http('http://127.0.0.1:8000/mcp');
 * for await (const tool of client.tools()) console.log(tool.name);
 * const result = await client.callTool('echo', { text: 'hi' });
 * await client.close();
 */

const { readFileSync } = require('node:fs');
const native = require('./load-native.js');
const { nativeOAuth } = require('./oauth.js');
const { atCreation, clientCall, spanName } = require('./telemetry.js');
const { adaptClientLink, adaptNotificationHook } = require('./middleware.js');

/** Which list each iterable / page call walks. */
const LISTS = Object.freeze({
  tools: 'tools',
  resources: 'resources',
  resourceTemplates: 'resourceTemplates',
  prompts: 'prompts',
  skills: 'skills',
});

/** The request each list's pages are fetched with (a page's span name). */
const LIST_METHODS = Object.freeze({
  tools: 'tools/list',
  resources: 'resources/list',
  resourceTemplates: 'resources/templates/list',
  prompts: 'prompts/list',
  skills: 'skills/list',
});

/**
 * The params of one list page: a `cursor` only when there is one.
 * @param {{ cursor?: string } | undefined} params
 */
function page(params) {
  return params?.cursor == null ? {} : { cursor: params.cursor };
}

/**
 * The native handler arguments for `options`: each of `onElicitation`,
 * `onSampling`, `onRoots` is called with the request params only (the
 * native adapter passes a `null` context, as no server request is being
 * served here); its return value or promise is the answer.
 * @param {any} options
 */
function handlers(options) {
  const wrap = (/** @type {string} */ name) => {
    const handler = options?.[name];
    if (handler == null) return null;
    if (typeof handler !== 'function') throw new TypeError(`${name} must be a function`);
    return (/** @type {any} */ params) => handler(params);
  };
  return [wrap('onElicitation'), wrap('onSampling'), wrap('onRoots')];
}

/**
 * PEM text as is (it contains `-----BEGIN`), or the file at that path read
 * now, so a missing file fails where the client is made.
 * @param {string | Buffer} source
 */
function pem(source) {
  const text = String(source);
  return text.includes('-----BEGIN') ? text : readFileSync(text, 'ascii');
}

/**
 * The native connect options (name/value pairs as arrays).
 * @param {any} options
 */
function connectOptions(options = {}) {
  const pairs = (/** @type {any} */ record) =>
    record == null ? undefined : Object.entries(record).map(([k, v]) => [k, String(v)]);
  return {
    name: options.name,
    version: options.version,
    protocolVersion: options.protocolVersion,
    era: options.era,
    timeout: options.timeout,
    headers: pairs(options.headers),
    tlsRoots: options.tlsRoots,
    caCerts: options.caCerts == null ? undefined : options.caCerts.map(pem),
    clientCert: options.clientCert == null ? undefined : pem(options.clientCert),
    clientKey: options.clientKey == null ? undefined : pem(options.clientKey),
    env: pairs(options.env),
    cwd: options.cwd,
    stderr: options.stderr,
    limits: options.limits,
    capabilities: options.capabilities,
    followTasks: options.followTasks,
  };
}

/**
 * A native cancel token that `signal` cancels when it aborts, and the
 * function that stops listening once the call is over.
 * @param {AbortSignal | undefined} signal
 */
function abortToken(signal) {
  if (signal == null) return { token: null, unlisten: () => {} };
  const token = new native.CancelToken();
  if (signal.aborted) {
    token.cancel();
    return { token, unlisten: () => {} };
  }
  const abort = () => token.cancel();
  signal.addEventListener('abort', abort, { once: true });
  return { token, unlisten: () => signal.removeEventListener('abort', abort) };
}

/**
 * The task state of a native `last`/`refresh` value: `null` when the
 * server answered without a task.
 * @param {any} value
 */
function taskState(value) {
  return value != null && typeof value === 'object' && 'taskId' in value && 'status' in value ? value : null;
}

/**
 * A `tools/call` the server runs as a task (the tasks extension,
 * SEP-2663), from `client.startToolTask(...)`: its state, answers to its
 * questions, cancellation, and its result. `callTool` does all of it for
 * you; take a handle to show status, answer from your own UI, or resume
 * later by id (`client.toolTask(id)`).
 *
 * @example
 * const task = await client.startToolTask('render', { pages: 2 });
 * console.log(task.id, (await task.refresh()).status); // "working"
 * const result = await task.result({ signal: AbortSignal.timeout(60_000) });
 */
class ToolTask {
  /** @type {InstanceType<typeof native.ToolTask>} */
  #native;

  /** @param {InstanceType<typeof native.ToolTask>} task */
  constructor(task) {
    this.#native = task;
  }

  /** The task's id; `null` when the server answered the call at once. */
  get id() {
    return this.#native.id;
  }

  /** The last state seen (at start, or by `refresh()`); `null` without a task. */
  get state() {
    return taskState(this.#native.last);
  }

  /** Asks the server for the task's state now (`tasks/get`); `null` without a task. */
  async refresh() {
    return taskState(await clientCall('tasks/get', () => this.#native.refresh()));
  }

  /**
   * Answers some of the task's `inputRequests` by key (`tasks/update`);
   * questions answered here are not answered again by the client's
   * handlers when `result()` follows the task.
   * @param {Record<string, unknown>} responses
   */
  respond(responses) {
    return clientCall('tasks/update', () => this.#native.respond(responses));
  }

  /** Asks the server to cancel the task (`tasks/cancel`). */
  cancel() {
    return clientCall('tasks/cancel', () => this.#native.cancel());
  }

  /**
   * Follows the task to its end (answering its questions with the
   * client's handlers) and resolves with the tool's result; a failed task
   * rejects with its error. Aborting `signal` cancels the task.
   * `onState(state)` is called each time the task's status or status
   * message (its progress) changes, in order, all before the promise
   * settles.
   * @param {{ signal?: AbortSignal, onState?: (state: any) => void }} [options]
   */
  result(options = {}) {
    const { token, unlisten } = abortToken(options.signal);
    const { onState } = options;
    const shown =
      typeof onState === 'function'
        ? (/** @type {any} */ state) => {
            try {
              onState(state);
            } catch (error) {
              process.emitWarning(`onState threw: ${error}`, 'McpClientWarning');
            }
          }
        : null;
    return clientCall('tasks/get', () => this.#native.result(token, shown)).finally(unlisten);
  }
}

/**
 * A skill loaded with `client.loadSkill(...)` (the skills extension,
 * SEP-2640): its `SKILL.md`, checked against the entry (digest, size,
 * frontmatter), and its other files read on demand, each checked.
 *
 * @example
 * const skill = await client.loadSkill('skill://git-workflow/SKILL.md');
 * console.log(skill.skillMd);
 * const hooks = await skill.read('references/HOOKS.md'); // a Buffer
 */
class LoadedSkill {
  /** @type {InstanceType<typeof native.LoadedSkill>} */
  #native;

  /** @param {InstanceType<typeof native.LoadedSkill>} loaded */
  constructor(loaded) {
    this.#native = loaded;
  }

  /** The entry the skill was loaded from. */
  get skill() {
    return this.#native.skill;
  }

  /** The `SKILL.md` text, frontmatter included. */
  get skillMd() {
    return this.#native.skillMd;
  }

  /**
   * Reads one file of the skill: its path inside the skill or its URI.
   * A file the entry does not list is refused unread.
   * @param {string} file
   */
  read(file) {
    return clientCall('resources/read', () => this.#native.read(file));
  }
}

/**
 * An async iterable over every item of a list, fetching one page at a
 * time, only as iteration asks for it.
 * @param {InstanceType<typeof native.Client>} client
 * @param {string} kind
 */
async function* items(client, kind) {
  const pages = client.pages(kind);
  const method = LIST_METHODS[/** @type {keyof typeof LIST_METHODS} */ (kind)];
  for (;;) {
    const page = await clientCall(method, () => pages.next());
    if (page === null) return;
    yield* page.items;
    // The last page: no request (and no span) for the end.
    if (page.nextCursor == null) return;
  }
}

/**
 * An open `subscriptions/listen` stream: `for await (const n of sub)`
 * yields each notification as `{ method, params }`; breaking out of the
 * loop (or `close()`) cancels the listen request.
 */
class Subscription {
  /** @type {Promise<InstanceType<typeof native.Subscription>>} */
  #opened;
  /** @type {InstanceType<typeof native.Subscription> | null} */
  #native = null;
  #closed = false;

  /** @param {Promise<InstanceType<typeof native.Subscription>>} opened */
  constructor(opened) {
    this.#opened = opened.then((sub) => {
      this.#native = sub;
      if (this.#closed) sub.close();
      return sub;
    });
    // Iteration or `acknowledged()` reports a failure to open; a
    // subscription nobody reads must not be an unhandled rejection.
    this.#opened.catch(() => {});
  }

  /**
   * Resolves once the server acknowledged the subscription, with the
   * notification types it agreed to send.
   * @returns {Promise<Record<string, unknown>>}
   */
  async acknowledged() {
    return (await this.#opened).acknowledged;
  }

  /** Ends the subscription; a pending iteration step finishes. */
  close() {
    this.#closed = true;
    this.#native?.close();
  }

  async *[Symbol.asyncIterator]() {
    const sub = await this.#opened;
    try {
      for (;;) {
        const note = await sub.next();
        if (note === null) return;
        yield note;
      }
    } finally {
      this.close();
    }
  }
}

/**
 * The native client a facade `Client` wraps, for the package's own use
 * (`server.mount`, `Server.proxy` in index.js); not re-exported.
 * @type {(client: Client) => InstanceType<typeof native.Client>}
 */
let nativeOf;

/**
 * The native server of a facade `Server`, or `null` for any other value.
 * index.js sets it (`Server` is defined there and its native server is a
 * private field; requiring index.js from here would be a cycle).
 * @type {(server: unknown) => InstanceType<typeof native.Server> | null}
 */
let nativeServerOf = () => null;

/**
 * Lets `Client.inMemory` reach the native server of a facade `Server`;
 * called once by index.js.
 * @param {(server: unknown) => InstanceType<typeof native.Server> | null} of
 */
function registerServerAccess(of) {
  nativeServerOf = of;
}

/**
 * Options of `Client.stdio` / `Client.http` that an in-memory client has no
 * use for: refused rather than silently ignored.
 */
const TRANSPORT_OPTIONS = Object.freeze([
  'command',
  'args',
  'env',
  'cwd',
  'stderr',
  'headers',
  'tlsRoots',
  'caCerts',
  'clientCert',
  'clientKey',
  'oauth',
]);

/**
 * An MCP client connected to one server, over stdio (a spawned process),
 * Streamable HTTP, or in memory to a `Server` of this process. The protocol revision is detected (2026-07-28
 * stateless, or the 2025-11-25 `initialize` handshake) unless `era` says.
 *
 * @example
 * const client = await Client.stdio({ command: 'node', args: ['server.mjs'] });
 * const { content } = await client.callTool('add', { a: 1, b: 2 });
 * await client.close();
 */
class Client {
  /** @type {InstanceType<typeof native.Client>} */
  #native;

  static {
    nativeOf = (client) => client.#native;
  }

  /**
   * Use {@link Client.stdio}, {@link Client.http} or {@link Client.inMemory}.
   * @param {InstanceType<typeof native.Client>} connected
   */
  constructor(connected) {
    if (!(connected instanceof native.Client)) {
      throw new TypeError('use Client.stdio(...), Client.http(...) or Client.inMemory(...) to connect');
    }
    this.#native = connected;
  }

  /**
   * Spawns `command args...` and speaks MCP over its stdin/stdout.
   * @param {any} options
   * @returns {Promise<Client>}
   */
  static async stdio(options) {
    atCreation();
    if (options === null || typeof options !== 'object' || typeof options.command !== 'string') {
      throw new TypeError('Client.stdio(options): options.command must be a string');
    }
    if (options.oauth != null) {
      // A stdio server is the user's own process: nothing to log in to.
      throw new TypeError('Client.stdio(options): oauth is for Client.http');
    }
    const connected = await native.Client.connectStdio(
      options.command,
      (options.args ?? []).map(String),
      connectOptions(options),
      ...handlers(options),
    );
    return new Client(connected);
  }

  /**
   * Connects to a Streamable HTTP endpoint (`http://host:port/mcp`);
   * `options.oauth` logs in to a protected server (see `lib/oauth.js`).
   * @param {string | URL} url
   * @param {any} [options]
   * @returns {Promise<Client>}
   */
  static async http(url, options = {}) {
    atCreation();
    const connected = await native.Client.connectHttp(
      String(url),
      connectOptions(options),
      ...handlers(options),
      nativeOAuth(options.oauth),
    );
    return new Client(connected);
  }

  /**
   * A client of `server`, a {@link Server} of this process, joined to it by
   * an in-memory pipe: no socket, no child process, yet the whole protocol
   * as over stdio (questions answered by `onElicitation`/`onSampling`/
   * `onRoots`, listen streams, tasks). The way to test a server with
   * `node --test`. Takes the options of `Client.stdio`/`Client.http` that
   * are not about a transport (`name`, `version`, `protocolVersion`, `era`,
   * `timeout`, the input handlers, `limits`, `capabilities`,
   * `followTasks`); a transport's option (`headers`, `env`, `oauth`...) is
   * a `TypeError`, as is a `server` that is not a `Server` of this package.
   *
   * The server serves the client until `client.close()` (the server's own
   * `close()` stops only its stdio and HTTP serving); an idle in-memory
   * client does not keep the process alive.
   *
   * @example
   * const server = new Server({ name: 'demo', version: '1.0.0' });
   * server.tool('add', ({ a, b }) => a + b);
   * const client = await Client.inMemory(server);
   * const { content } = await client.callTool('add', { a: 1, b: 2 }); // content[0].text === '3'
   * await client.close();
   *
   * @param {unknown} server
   * @param {any} [options]
   * @returns {Promise<Client>}
   */
  static async inMemory(server, options = {}) {
    atCreation();
    const serving = nativeServerOf(server);
    if (serving === null) {
      throw new TypeError('Client.inMemory(server, options): server must be a Server of ferromcp');
    }
    if (options === null || typeof options !== 'object') {
      throw new TypeError('Client.inMemory(server, options): options must be an object');
    }
    const transport = TRANSPORT_OPTIONS.find((name) => options[name] !== undefined);
    if (transport !== undefined) {
      throw new TypeError(`Client.inMemory(server, options): ${transport} is an option of a transport; an in-memory client has none`);
    }
    const connected = await native.Client.connectInMemory(serving, connectOptions(options), ...handlers(options));
    return new Client(connected);
  }

  /**
   * The native `request`, in a CLIENT span when ferromcp reports to the
   * application's OpenTelemetry SDK (see `lib/telemetry.js`).
   * @param {string} method
   * @param {Record<string, any>} [params]
   * @param {...any} rest the native options, progress callback and cancel token
   * @returns {Promise<any>}
   */
  #request(method, params, ...rest) {
    return clientCall(spanName(method, params), () => this.#native.request(method, params, ...rest));
  }

  /**
   * Adds a link at the end of this client's middleware chain (the Rust
   * core's), around every request the client sends: calls, lists, reads,
   * prompts, completions, `listen`, tasks, skills; either protocol
   * revision, every transport. Returns the client, for chaining. The first
   * link added sees a call first and its result last.
   *
   * `link(ctx, next)` gets a `ClientMiddlewareContext` (`method`,
   * `params`, `name`, `meta`, `timeout`) and `next(ctx)`, which runs the
   * rest of the chain and sends the call with `ctx.params`, `ctx.meta` and
   * `ctx.timeout` (change them first if need be) and resolves to the raw
   * result object; the link returns it (changed or not) or one of its
   * own, or a Promise of it. A thrown {@link McpError} fails the call with
   * that JSON-RPC error; any other thrown error fails it as an internal
   * error with its message. A link runs on this thread like any callback
   * and may await other calls of the client (they go through the chain
   * too).
   *
   * @example
   * const client = await Client.inMemory(server);
   * client.use(async (ctx, next) => {
   *   ctx.meta['example.com/trace'] = 'abc';
   *   const result = await next(ctx);
   *   console.error(ctx.method, ctx.name, 'done');
   *   return result;
   * });
   *
   * @param {(ctx: import('./middleware.js').ClientMiddlewareContext, next: (ctx?: any) => Promise<any>) => unknown} link
   * @returns {this}
   */
  use(link) {
    if (typeof link !== 'function') throw new TypeError('use(link): link must be a function (ctx, next) => result');
    this.#native.useLink(adaptClientLink(link));
    return this;
  }

  /**
   * Adds a notification hook at the end of the client's middleware chain:
   * `hook(note)` sees each notification the client receives (progress, log
   * messages, list and resource changes, listen events), in arrival order,
   * before the `onProgress` and `onNotification` callbacks and `listen()`
   * streams. `note` is `{ method, params }` (`params` as the server sent
   * them, `null` without); the hook may change `note.params` (or replace
   * it), and returns `false` to stop the notification there, anything else
   * to let it go on. Requests pass straight on.
   *
   * The hook must answer synchronously: the thread delivering the
   * notification waits for it, at most 1000 ms. Past that (this thread
   * busy), or if the hook throws or returns a promise, the notification
   * goes on unchanged and a warning is logged (see `setLogger`).
   *
   * @example
   * client.useNotifications((note) => {
   *   if (note.method === 'notifications/message' && note.params.level === 'debug') return false;
   * });
   *
   * @param {(note: { readonly method: string, params: any }) => boolean | void} hook
   * @returns {this}
   */
  useNotifications(hook) {
    if (typeof hook !== 'function') {
      throw new TypeError('useNotifications(hook): hook must be a function (note) => boolean | void');
    }
    this.#native.useNotificationLink(adaptNotificationHook(hook));
    return this;
  }

  /** The protocol version requests currently declare. */
  get protocolVersion() {
    return this.#native.protocolVersion;
  }

  /**
   * Whether the server speaks a legacy revision (2025-11-25 or earlier);
   * `null` until the first request detected it.
   */
  get isLegacy() {
    return this.#native.isLegacy;
  }

  /** `server/discover` (a legacy server: what it answered to `initialize`). */
  discover() {
    return this.#request('server/discover');
  }

  /** One page of `tools/list`. @param {{ cursor?: string }} [params] */
  listTools(params) {
    return this.#request('tools/list', page(params));
  }

  /** One page of `resources/list`. @param {{ cursor?: string }} [params] */
  listResources(params) {
    return this.#request('resources/list', page(params));
  }

  /** One page of `resources/templates/list`. @param {{ cursor?: string }} [params] */
  listResourceTemplates(params) {
    return this.#request('resources/templates/list', page(params));
  }

  /** One page of `prompts/list`. @param {{ cursor?: string }} [params] */
  listPrompts(params) {
    return this.#request('prompts/list', page(params));
  }

  /** Every tool, over every page. */
  tools() {
    return items(this.#native, LISTS.tools);
  }

  /** Every resource, over every page. */
  resources() {
    return items(this.#native, LISTS.resources);
  }

  /** Every resource template, over every page. */
  resourceTemplates() {
    return items(this.#native, LISTS.resourceTemplates);
  }

  /** Every prompt, over every page. */
  prompts() {
    return items(this.#native, LISTS.prompts);
  }

  /** One page of `skills/list` (the skills extension). @param {{ cursor?: string }} [params] */
  listSkills(params) {
    return this.#request('skills/list', page(params));
  }

  /** Every skill, over every page. Listing reads no skill file. */
  skills() {
    return items(this.#native, LISTS.skills);
  }

  /** One skill's entry by its `SKILL.md` URI (`skills/get`). @param {string} uri */
  async getSkill(uri) {
    return (await this.#request('skills/get', { uri })).skill;
  }

  /**
   * Loads a skill: an entry of `skills()` or its `SKILL.md` URI (then
   * `skills/get` fetches the entry). `SKILL.md` is read and checked
   * against the entry; a mismatch rejects and nothing is returned.
   * @param {string | Record<string, unknown>} skill
   */
  async loadSkill(skill) {
    const first = typeof skill === 'string' ? 'skills/get' : 'resources/read';
    return new LoadedSkill(await clientCall(first, () => this.#native.loadSkill(skill)));
  }

  /**
   * `tools/call`, returning a handle on the task the server makes of it
   * instead of following it as `callTool` does.
   * @param {string} name
   * @param {Record<string, unknown>} [args]
   * @param {{ timeout?: number, meta?: Record<string, unknown> }} [options]
   */
  async startToolTask(name, args = {}, options = {}) {
    const { timeout, meta } = options;
    const started = clientCall(spanName('tools/call', { name }), () =>
      this.#native.startToolTask(name, args ?? {}, { timeout, meta }),
    );
    return new ToolTask(await started);
  }

  /**
   * A handle on a task started earlier (task ids are meant to be kept).
   * @param {string} taskId
   */
  toolTask(taskId) {
    return new ToolTask(this.#native.toolTask(taskId));
  }

  /**
   * `tools/call`. A tool that fails answers with `isError: true` (no
   * throw); a JSON-RPC error, a timeout or an abort rejects with an
   * `McpError` (`kind` `"peerError"`, `"timeout"`, `"cancelled"`).
   * @param {string} name
   * @param {Record<string, unknown>} [args]
   * @param {{ timeout?: number, onProgress?: (update: any) => void,
   *   signal?: AbortSignal, meta?: Record<string, unknown> }} [options]
   */
  callTool(name, args = {}, options = {}) {
    const { timeout, onProgress, signal, meta } = options;
    const { token, unlisten } = abortToken(signal);
    const progress =
      typeof onProgress === 'function'
        ? (/** @type {any} */ update) => {
            try {
              onProgress(update);
            } catch (error) {
              process.emitWarning(`onProgress threw: ${error}`, 'McpClientWarning');
            }
          }
        : null;
    const params = { name, arguments: args ?? {} };
    const pending = this.#request('tools/call', params, { timeout, meta }, progress, token);
    return pending.finally(unlisten);
  }

  /** `resources/read`. @param {string} uri */
  readResource(uri) {
    return this.#request('resources/read', { uri });
  }

  /**
   * `prompts/get`.
   * @param {string} name
   * @param {Record<string, string>} [args]
   */
  getPrompt(name, args) {
    return this.#request('prompts/get', { name, arguments: args ?? {} });
  }

  /**
   * `completion/complete`, with the request's own params shape.
   * @param {{ ref: { type: string, name?: string, uri?: string },
   *   argument: { name: string, value: string },
   *   context?: { arguments?: Record<string, string> } }} params
   */
  complete(params) {
    return this.#request('completion/complete', params);
  }

  /**
   * Opens `subscriptions/listen` (2026-07-28): iterate the result with
   * `for await`.
   * @param {Record<string, unknown>} filter e.g. `{ toolsListChanged: true }`
   */
  listen(filter) {
    return new Subscription(this.#native.listen(filter));
  }

  /** Ends the connection (a spawned server is stopped). */
  close() {
    return this.#native.close();
  }
}

const versions = native.protocolVersions();

/** The protocol revision a client declares by default. */
const PROTOCOL_VERSION = versions.latest;

/** The revisions that speak the `initialize` handshake (2025-11-25 and earlier). */
const LEGACY_PROTOCOL_VERSIONS = Object.freeze([...versions.legacy]);

module.exports = { Client, Subscription, ToolTask, LoadedSkill, PROTOCOL_VERSION, LEGACY_PROTOCOL_VERSIONS, nativeOf, registerServerAccess };
