'use strict';
/**
 * Server middleware and per-caller visibility, the JS side: the `ctx` and
 * `next` a link gets, the ready-made links (`middleware`), and the
 * evaluator that applies visibility predicates.
 *
 * The chain itself is the Rust core's (`ferromcp::server::middleware`):
 * which requests go through it (every primitive request, whatever the
 * transport and protocol revision; not the 2025-11-25 handshake nor
 * notifications), in which order, what an error means. A JS link runs on
 * the JS thread like a tool handler; its `next(ctx)` hands the request
 * back to the core, which runs the rest of the chain on its own threads
 * and settles the promise: nothing blocks either side. See
 * src/middleware.rs and src/visibility.rs.
 *
 * @example
 * const { Server, Client, McpError, middleware } = require('ferromcp');
 * const server = new Server({ name: 'demo', version: '1.0.0' });
 * server.tool('echo', ({ text }) => text);
 * server.use(middleware.rateLimit({ perSecond: 5, burst: 10 }));
 * server.use(async (ctx, next) => {
 *   if (ctx.name === 'echo' && ctx.params.arguments?.text === 'secret') {
 *     throw new McpError('not today', { code: -32602 });
 *   }
 *   const result = await next(ctx);
 *   return { ...result, _meta: { 'example.com/checked': true } };
 * });
 */

const native = require('./load-native.js');

/**
 * What a middleware link gets: the request (`method`, `params`, which it
 * may change before calling `next`) and who sends it.
 *
 * @example
 * server.use((ctx, next) => {
 *   console.error(ctx.method, ctx.name, ctx.clientInfo?.name, ctx.auth?.subject);
 *   return next(ctx);
 * });
 */
class MiddlewareContext {
  /**
   * @param {any} request the plain object the native side made
   */
  constructor(request) {
    /** The method, e.g. `"tools/call"`. @type {string} */
    this.method = request.method;
    /**
     * The params as the client sent them (what `_meta` carries is read into
     * the other members); a link may change them (or replace the object)
     * before calling `next`.
     * @type {Record<string, any>}
     */
    this.params = request.params;
    /** The JSON-RPC id. @type {string | number} */
    this.requestId = request.requestId;
    /** The verified access token's owner, on a protected server; `null` otherwise. */
    this.auth = request.auth;
    /** The client's `Implementation` (`name`, `version`...), when it sent one; else `null`. */
    this.clientInfo = request.clientInfo;
    /** The protocol revision of the request. @type {string} */
    this.protocolVersion = request.protocolVersion;
    /** The capabilities the client declared. @type {Record<string, unknown>} */
    this.clientCapabilities = request.clientCapabilities;
    /** The HTTP request's headers (lower-case names); empty over stdio. @type {Record<string, string>} */
    this.headers = request.headers;
  }

  /**
   * The tool or prompt the request is for (`params.name`), if any.
   * @returns {string | undefined}
   */
  get name() {
    const name = this.params?.name;
    return typeof name === 'string' ? name : undefined;
  }
}

/**
 * The native link for a user's `(ctx, next) => result` function.
 * @param {Function} link
 * @returns {(request: any, nativeNext: any) => unknown}
 */
function adaptLink(link) {
  return (request, nativeNext) => {
    const ctx = new MiddlewareContext(request);
    let called = false;
    /** @param {MiddlewareContext} [passed] */
    const next = (passed = ctx) => {
      if (called) return Promise.reject(new Error('next() may be called only once per request'));
      called = true;
      const params = passed?.params;
      if (params === null || typeof params !== 'object' || Array.isArray(params)) {
        return Promise.reject(new TypeError('next(ctx): ctx.params must be an object'));
      }
      return nativeNext.run(params);
    };
    return link(ctx, next);
  };
}

/**
 * Writes a request's outcome to stderr (stdout may carry the protocol).
 * @param {{ method: string, name?: string, ok: boolean, code?: number, message?: string, durationMs: number }} entry
 */
function logToStderr(entry) {
  const what = entry.name === undefined ? entry.method : `${entry.method} ${entry.name}`;
  const outcome = entry.ok ? 'ok' : `failed ${entry.code}: ${entry.message}`;
  process.stderr.write(`ferromcp: ${what} ${outcome} (${entry.durationMs.toFixed(1)} ms)\n`);
}

/**
 * The `log` option of a ready-made link: a function, `null` for none, or
 * (absent) stderr.
 * @param {unknown} log
 * @param {string} what
 */
function logOption(log, what) {
  if (log === undefined) return logToStderr;
  if (log === null || log === false) return null;
  if (typeof log !== 'function') throw new TypeError(`${what}: log must be a function or null`);
  return log;
}

/**
 * @param {unknown} options
 * @param {string} what
 * @returns {Record<string, any>}
 */
function optionsObject(options, what) {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object') throw new TypeError(`${what}: options must be an object`);
  return /** @type {Record<string, any>} */ (options);
}

/**
 * Ready-made links, the Rust core's, for {@link Server#use}.
 *
 * @example
 * server.use(middleware.logRequests());
 * server.use(middleware.maskErrors());
 * server.use(middleware.rateLimit({ perSecond: 10, burst: 20 }));
 */
const middleware = Object.freeze({
  /**
   * Logs every request once it ends (method, tool or prompt name, outcome,
   * duration): to `log(entry)` if given, else one line on stderr (`null`:
   * only the core's `tracing` events).
   * @param {{ log?: ((entry: any) => void) | null }} [options]
   */
  logRequests(options) {
    const { log } = optionsObject(options, 'middleware.logRequests(options)');
    return native.BuiltinMiddleware.logRequests(logOption(log, 'middleware.logRequests(options)'));
  },

  /**
   * Internal errors (-32603) reach the client as `"Internal error"` without
   * data; their real message goes to `log(entry)` if given, else to stderr
   * (`null`: nowhere). Errors a client can act on and tool results flagged
   * `isError` pass unchanged.
   * @param {{ log?: ((entry: any) => void) | null }} [options]
   */
  maskErrors(options) {
    const { log } = optionsObject(options, 'middleware.maskErrors(options)');
    return native.BuiltinMiddleware.maskErrors(logOption(log, 'middleware.maskErrors(options)'));
  },

  /**
   * A token bucket per client (its auth subject, else its `clientInfo`):
   * `burst` requests at once and `perSecond` more every second; beyond
   * that a request is refused with code -32000 and
   * `data.retryAfterMs`, before it runs.
   * @param {{ perSecond: number, burst: number, maxClients?: number }} options
   */
  rateLimit(options) {
    const { perSecond, burst, maxClients } = optionsObject(options, 'middleware.rateLimit(options)');
    if (typeof perSecond !== 'number' || !Number.isFinite(perSecond) || perSecond < 0) {
      throw new TypeError('middleware.rateLimit(options): perSecond must be a finite number >= 0');
    }
    if (!Number.isInteger(burst) || burst < 1 || burst > 0xffffffff) {
      throw new TypeError('middleware.rateLimit(options): burst must be an integer >= 1');
    }
    if (maxClients !== undefined && (!Number.isInteger(maxClients) || maxClients < 1 || maxClients > 0xffffffff)) {
      throw new TypeError('middleware.rateLimit(options): maxClients must be an integer >= 1');
    }
    return native.BuiltinMiddleware.rateLimit(perSecond, burst, maxClients);
  },
});

/**
 * Whether a predicate's answer lets the item be seen: a promise (an
 * `async` predicate) cannot be waited for, and hides.
 * @param {unknown} answer
 */
function allows(answer) {
  if (answer !== null && typeof answer === 'object' && typeof (/** @type {any} */ (answer).then) === 'function') {
    return false;
  }
  return Boolean(answer);
}

/**
 * The predicates of one server, and the evaluator the native side calls:
 * `(ctx, items) => boolean[]`, every predicate applied synchronously; one
 * that throws hides its item (failing closed) and is reported once as a
 * process warning.
 */
class VisibilityRules {
  /** @type {((ctx: any, item: any) => unknown) | null} */
  rule = null;
  /** Each item's own predicate, by `"<kind>\0<key>"`. @type {Map<string, (ctx: any) => unknown>} */
  own = new Map();
  #warned = false;

  /** The evaluator for `setVisibilityEvaluator`. */
  evaluator() {
    return (/** @type {any} */ ctx, /** @type {Array<{ kind: string, key: string }>} */ items) => {
      Object.freeze(ctx);
      return items.map((item) => {
        try {
          const own = this.own.get(`${item.kind}\0${item.key}`);
          if (own !== undefined && !allows(own(ctx))) return false;
          return this.rule === null || allows(this.rule(ctx, Object.freeze({ kind: item.kind, key: item.key })));
        } catch (error) {
          if (!this.#warned) {
            this.#warned = true;
            process.emitWarning(`a visibility rule threw (the item is hidden): ${error}`, 'FerromcpVisibilityWarning');
          }
          return false;
        }
      });
    };
  }
}

/**
 * The native form of a registration's `visible` option: `null` (none), a
 * data rule `{ scopes?, clients?, subjects? }`, or `{ predicate: true }`
 * for a function (kept by the caller).
 * @param {unknown} visible
 * @param {string} what
 * @returns {Record<string, unknown> | null}
 */
function nativeVisible(visible, what) {
  if (visible === undefined || visible === null) return null;
  if (typeof visible === 'function') return { predicate: true };
  if (typeof visible !== 'object' || Array.isArray(visible)) {
    throw new TypeError(`${what}: visible must be a function (ctx) => boolean or { scopes?, clients?, subjects? }`);
  }
  for (const [key, value] of Object.entries(visible)) {
    if (!['scopes', 'clients', 'subjects'].includes(key)) {
      throw new TypeError(`${what}: visible has no ${JSON.stringify(key)}; expected scopes, clients or subjects`);
    }
    if (value !== undefined && (!Array.isArray(value) || !value.every((v) => typeof v === 'string'))) {
      throw new TypeError(`${what}: visible.${key} must be an array of strings`);
    }
  }
  return Object.fromEntries(Object.entries(visible).filter(([, value]) => value !== undefined));
}

module.exports = { MiddlewareContext, adaptLink, middleware, VisibilityRules, nativeVisible };
