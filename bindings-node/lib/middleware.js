'use strict';
/**
 * Server middleware and per-caller visibility, the JS side: the `ctx` and
 * `next` a link gets, the ready-made links (`middleware`), and the
 * predicates that decide visibility; and the `ctx` and `next` of a
 * client's links (`client.use`, core's `ferromcp::client` chain, run the
 * same way: src/client_middleware.rs).
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
 * Notification hooks (`server.useNotifications`, `client.useNotifications`,
 * `adaptNotificationHook` here) are links of the same chains for the
 * notifications received; core calls them synchronously, so the delivering
 * thread waits for the hook's synchronous answer, at most 1000 ms (see
 * src/notification_middleware.rs).
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
    const run = (/** @type {MiddlewareContext} */ passed) => nativeNext.run(passed.params);
    return link(ctx, nextOnce(ctx, run));
  };
}

/**
 * The `next(ctx)` a link gets (`ctx` by default): once per request, with
 * `ctx.params` an object; `run(ctx)` hands it to the native `next`. Every
 * misuse is a rejection, as the native `next`'s outcome is.
 * @template C
 * @param {C} ctx
 * @param {(ctx: C) => Promise<any>} run
 * @returns {(ctx?: C) => Promise<any>}
 */
function nextOnce(ctx, run) {
  let called = false;
  return (passed = ctx) => {
    if (called) return Promise.reject(new Error('next() may be called only once per request'));
    called = true;
    const params = /** @type {any} */ (passed)?.params;
    if (params === null || typeof params !== 'object' || Array.isArray(params)) {
      return Promise.reject(new TypeError('next(ctx): ctx.params must be an object'));
    }
    try {
      return run(passed);
    } catch (error) {
      return Promise.reject(error);
    }
  };
}

/**
 * What a client middleware link gets: the call on its way out (`method`,
 * `params`, the extra `_meta` entries and the timeout), which it may change
 * before calling `next`.
 *
 * @example
 * client.use((ctx, next) => {
 *   ctx.meta['example.com/trace'] = 'abc';
 *   return next(ctx);
 * });
 */
class ClientMiddlewareContext {
  /**
   * @param {{ method: string, params: Record<string, any>, meta: Record<string, any>, timeout: number | null }} call
   *   the plain object the native side made
   */
  constructor(call) {
    /** The method, e.g. `"tools/call"`. @type {string} */
    this.method = call.method;
    /**
     * The params as they will be sent (without the `_meta` the client adds);
     * a link may change them (or replace the object) before calling `next`.
     * @type {Record<string, any>}
     */
    this.params = call.params;
    /** Extra `_meta` entries the call adds (its `meta` option); changeable. @type {Record<string, any>} */
    this.meta = call.meta;
    /** The call's own timeout in milliseconds, or `undefined` (the client's); changeable. @type {number | undefined} */
    this.timeout = call.timeout ?? undefined;
  }

  /**
   * The tool or prompt called (`params.name`), if any.
   * @returns {string | undefined}
   */
  get name() {
    const name = this.params?.name;
    return typeof name === 'string' ? name : undefined;
  }
}

/**
 * The native link of a client for a user's `(ctx, next) => result`
 * function: `next(ctx)` sends on `ctx.params`, `ctx.meta` and `ctx.timeout`.
 * @param {Function} link
 * @returns {(call: any, nativeNext: any) => unknown}
 */
function adaptClientLink(link) {
  return (call, nativeNext) => {
    const ctx = new ClientMiddlewareContext(call);
    // The native `next` checks `meta` (an object) and `timeout` (positive
    // milliseconds); `null` for either keeps the call's own.
    const run = (/** @type {ClientMiddlewareContext} */ passed) =>
      nativeNext.run(passed.params, passed.meta ?? null, passed.timeout ?? null);
    return link(ctx, nextOnce(ctx, run));
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
   * (`null`: only the core's `tracing` events). Errors a client can act on and tool results flagged
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
    const what = 'middleware.rateLimit(options)';
    const { perSecond, burst, maxClients } = optionsObject(options, what);
    try {
      return native.BuiltinMiddleware.rateLimit(perSecond, burst, maxClients ?? null);
    } catch (error) {
      // The Rust core's reason (or why the number is not one it takes).
      throw new TypeError(`${what}: ${/** @type {Error} */ (error).message}`);
    }
  },
});

/**
 * Whether `value` is a promise (or any thenable) to wait for.
 * @param {unknown} value
 * @returns {value is PromiseLike<unknown>}
 */
function isThenable(value) {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (/** @type {any} */ (value).then) === 'function'
  );
}

/**
 * `then(answer)`, after `answer` settles when it is a promise, at once
 * otherwise (synchronous predicates cost no microtask).
 * @param {unknown} answer
 * @param {(value: unknown) => unknown} then
 */
function after(answer, then) {
  return isThenable(answer) ? Promise.resolve(answer).then(then) : then(answer);
}

/**
 * The visibility predicates of one server: the server-wide `rule(ctx,
 * item)` and each registration's own `visible(ctx)`, by `"<kind>\0<key>"`.
 * While any exists, the native server has the evaluator, which the Rust
 * core calls once per request with every item it needs judged; without
 * one, core has no rule (lists keep their configured cache scope).
 */
class VisibilityRules {
  /** @type {((ctx: any, item: any) => unknown) | null} */
  #rule = null;
  /** @type {Map<string, (ctx: any) => unknown>} */
  #own = new Map();
  #installed = false;
  #warned = false;
  #install;

  /** @param {(evaluate: Function | null) => void} install gives the native server its evaluator */
  constructor(install) {
    this.#install = install;
  }

  /** @param {((ctx: any, item: any) => unknown) | null} rule */
  setRule(rule) {
    this.#rule = rule;
    this.#sync();
  }

  /**
   * Sets (a function) or drops (`null`) an item's own predicate.
   * @param {string} kind
   * @param {string} key
   * @param {((ctx: any) => unknown) | null} predicate
   */
  /** Before registering: an item's own predicate is in force before the item exists. */
  guard(kind, key, predicate) {
    if (predicate !== null) this.setOwn(kind, key, predicate);
  }

  /** After registering: an item registered again without one loses its earlier predicate. */
  unguard(kind, key, predicate) {
    if (predicate === null) this.setOwn(kind, key, null);
  }

  setOwn(kind, key, predicate) {
    if (predicate === null) this.#own.delete(`${kind}\0${key}`);
    else this.#own.set(`${kind}\0${key}`, predicate);
    this.#sync();
  }

  /** Gives the native server the evaluator, or takes it away, as predicates come and go. */
  #sync() {
    const wanted = this.#rule !== null || this.#own.size > 0;
    if (wanted === this.#installed) return;
    this.#install(wanted ? (/** @type {any} */ ctx, /** @type {any[]} */ items) => this.#evaluate(ctx, items) : null);
    this.#installed = wanted;
  }

  /**
   * One boolean per item (a promise of the list when a predicate answered
   * with one): the item's own predicate and the server-wide rule must
   * both allow. A predicate that throws or rejects hides its item (failing
   * closed) and is reported once as a process warning.
   * @param {any} ctx the caller, one object for the whole request
   * @param {Array<{ kind: string, key: string }>} items
   */
  #evaluate(ctx, items) {
    Object.freeze(ctx);
    const rule = this.#rule;
    const hide = (/** @type {unknown} */ error) => {
      if (!this.#warned) {
        this.#warned = true;
        process.emitWarning(`a visibility rule threw (the item is hidden): ${error}`, 'FerromcpVisibilityWarning');
      }
      return false;
    };
    const verdicts = items.map(({ kind, key }) => {
      try {
        const own = this.#own.get(`${kind}\0${key}`);
        const byRule = () => rule === null || after(rule(ctx, Object.freeze({ kind, key })), Boolean);
        const verdict = own === undefined ? byRule() : after(own(ctx), (allowed) => Boolean(allowed) && byRule());
        return isThenable(verdict) ? Promise.resolve(verdict).then(Boolean, hide) : verdict;
      } catch (error) {
        return hide(error);
      }
    });
    return verdicts.some(isThenable) ? Promise.all(verdicts) : verdicts;
  }
}

/**
 * A registration's `visible` option, checked: the predicate, or `null`.
 * @param {unknown} visible
 * @param {string} what
 * @returns {((ctx: any) => unknown) | null}
 */
function visiblePredicate(visible, what) {
  if (visible === undefined || visible === null) return null;
  if (typeof visible !== 'function') throw new TypeError(`${what}: visible must be a function (ctx) => boolean`);
  return /** @type {(ctx: any) => unknown} */ (visible);
}

/**
 * The native notification hook for a user's `(note) => boolean | void`
 * function (`server.useNotifications`, `client.useNotifications`). The
 * native side waits for the answer on the thread delivering the
 * notification, so the adapter always answers, synchronously, with a plain
 * object: `{ stop: true }`, `{ params }` (go on with them), or
 * `{ fault }` (go on unchanged; the native side logs why). Nothing it does
 * may throw: an exception escaping a threadsafe call would end the
 * process. `late`: the notification went on without waiting any longer
 * (the hook did not answer in time); the user's function is not called.
 * @param {Function} hook
 * @returns {(note: { method: string, params: any }, late: boolean) => unknown}
 */
function adaptNotificationHook(hook) {
  return (note, late) => {
    if (late) return null;
    try {
      const passing = Object.defineProperties(
        {},
        {
          method: { value: note.method, enumerable: true },
          params: { value: note.params, enumerable: true, writable: true },
        },
      );
      const returned = hook(passing);
      if (returned !== null && (typeof returned === 'object' || typeof returned === 'function') &&
        typeof returned.then === 'function') {
        // Not awaited: its rejection is not left unhandled either.
        Promise.resolve(returned).catch(() => {});
        return { fault: 'the hook returned a promise; it must answer synchronously (true, false or nothing)' };
      }
      if (returned === false) return { stop: true };
      return { params: passing.params === undefined ? null : passing.params };
    } catch (error) {
      return { fault: `the hook threw ${describeThrown(error)}` };
    }
  };
}

/**
 * What a hook threw, for a log line (never throws itself).
 * @param {unknown} error
 */
function describeThrown(error) {
  try {
    if (error instanceof Error) return `${error.name}: ${error.message}`;
    return String(error);
  } catch {
    return 'a value that cannot be shown';
  }
}

module.exports = {
  MiddlewareContext,
  ClientMiddlewareContext,
  adaptLink,
  adaptClientLink,
  adaptNotificationHook,
  middleware,
  VisibilityRules,
  visiblePredicate,
};
