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

/** Which list each iterable / page call walks. */
const LISTS = Object.freeze({
  tools: 'tools',
  resources: 'resources',
  resourceTemplates: 'resourceTemplates',
  prompts: 'prompts',
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
  };
}

/**
 * An async iterable over every item of a list, fetching one page at a
 * time, only as iteration asks for it.
 * @param {InstanceType<typeof native.Client>} client
 * @param {string} kind
 */
async function* items(client, kind) {
  const pages = client.pages(kind);
  for (;;) {
    const page = await pages.next();
    if (page === null) return;
    yield* page.items;
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
 * An MCP client connected to one server, over stdio (a spawned process)
 * or Streamable HTTP. The protocol revision is detected (2026-07-28
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

  /**
   * Use {@link Client.stdio} or {@link Client.http}.
   * @param {InstanceType<typeof native.Client>} connected
   */
  constructor(connected) {
    if (!(connected instanceof native.Client)) {
      throw new TypeError('use Client.stdio(...) or Client.http(...) to connect');
    }
    this.#native = connected;
  }

  /**
   * Spawns `command args...` and speaks MCP over its stdin/stdout.
   * @param {any} options
   * @returns {Promise<Client>}
   */
  static async stdio(options) {
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
    const connected = await native.Client.connectHttp(
      String(url),
      connectOptions(options),
      ...handlers(options),
      nativeOAuth(options.oauth),
    );
    return new Client(connected);
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
    return this.#native.request('server/discover');
  }

  /** One page of `tools/list`. @param {{ cursor?: string }} [params] */
  listTools(params) {
    return this.#native.request('tools/list', page(params));
  }

  /** One page of `resources/list`. @param {{ cursor?: string }} [params] */
  listResources(params) {
    return this.#native.request('resources/list', page(params));
  }

  /** One page of `resources/templates/list`. @param {{ cursor?: string }} [params] */
  listResourceTemplates(params) {
    return this.#native.request('resources/templates/list', page(params));
  }

  /** One page of `prompts/list`. @param {{ cursor?: string }} [params] */
  listPrompts(params) {
    return this.#native.request('prompts/list', page(params));
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
    let token = null;
    let unlisten = () => {};
    if (signal != null) {
      token = new native.CancelToken();
      if (signal.aborted) {
        token.cancel();
      } else {
        const abort = () => token?.cancel();
        signal.addEventListener('abort', abort, { once: true });
        unlisten = () => signal.removeEventListener('abort', abort);
      }
    }
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
    const pending = this.#native.request('tools/call', params, { timeout, meta }, progress, token);
    return pending.finally(unlisten);
  }

  /** `resources/read`. @param {string} uri */
  readResource(uri) {
    return this.#native.request('resources/read', { uri });
  }

  /**
   * `prompts/get`.
   * @param {string} name
   * @param {Record<string, string>} [args]
   */
  getPrompt(name, args) {
    return this.#native.request('prompts/get', { name, arguments: args ?? {} });
  }

  /**
   * `completion/complete`, with the request's own params shape.
   * @param {{ ref: { type: string, name?: string, uri?: string },
   *   argument: { name: string, value: string },
   *   context?: { arguments?: Record<string, string> } }} params
   */
  complete(params) {
    return this.#native.request('completion/complete', params);
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

module.exports = { Client, Subscription, PROTOCOL_VERSION, LEGACY_PROTOCOL_VERSIONS };
