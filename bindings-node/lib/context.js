'use strict';
/**
 * The request context's asynchronous side, added to the native
 * `RequestContext` class: `ask`, `elicit`, `sample`, `listRoots` (asking
 * the client for input) and `signal` (an `AbortSignal`).
 *
 * The protocol stays in the core: the native `requestInput` hands the
 * question to core's `RequestContext::ask`, which under 2026-07-28 ends the
 * round with `input_required` (and replays the handler with the answers when
 * the client retries) and in a 2025-11-25 session sends a real request to
 * the client. The same handler code serves both.
 *
 * @example
 * server.tool('greet', {}, async (args, ctx) => {
 *   const { action, content } = await ctx.elicit('Your name?', {
 *     type: 'object', properties: { name: { type: 'string' } }, required: ['name'],
 *   });
 *   return action === 'accept' ? `Hello, ${content.name}!` : 'Hello!';
 * });
 */

const { toJsonSchema, parser } = require('./schema.js');

/** Where each watched call's controller waits for the core's verdict. */
const controllers = new Map();
const SIGNAL = Symbol('ferromcp.signal');
const BATCH = Symbol('ferromcp.asks');

/**
 * Installs the methods on `RequestContext.prototype` and registers the abort
 * hook. Called once by the facade.
 * @param {any} native the native module
 * @param {any} McpError the facade's error class
 */
function install(native, McpError) {
  const proto = native.RequestContext.prototype;

  native.registerAbortHook((/** @type {number} */ id, /** @type {boolean} */ aborted) => {
    const controller = controllers.get(id);
    controllers.delete(id);
    if (controller && aborted) controller.abort(cancelled(McpError));
  });

  Object.defineProperty(proto, 'signal', {
    configurable: true,
    enumerable: false,
    /** @this {any} */
    get() {
      let signal = this[SIGNAL];
      if (signal) return signal;
      const id = this.watchAbort();
      if (id === null || id === undefined) {
        // The call is already over: nothing will happen any more.
        signal = AbortSignal.abort(cancelled(McpError));
      } else {
        const controller = new AbortController();
        controllers.set(id, controller);
        signal = controller.signal;
      }
      Object.defineProperty(this, SIGNAL, { value: signal });
      return signal;
    },
  });

  /**
   * Asks are batched per context until the event loop's current turn is
   * over (`setImmediate`), so that the asks of a `Promise.all` reach the
   * core together and, under 2026-07-28, land in one round.
   * @this {any}
   * @param {'elicitation' | 'sampling' | 'roots'} kind
   * @param {Record<string, unknown>} params
   * @param {{ key?: string }} [options]
   * @returns {Promise<any>}
   */
  function ask(kind, params, options = {}) {
    return new Promise((resolve, reject) => {
      let batch = this[BATCH];
      if (!batch) {
        batch = [];
        Object.defineProperty(this, BATCH, { value: batch, writable: true, configurable: true });
        setImmediate(() => flush(this));
      }
      batch.push({ ask: { kind, params, key: options.key ?? null }, resolve, reject });
    });
  }

  /** @param {any} ctx */
  function flush(ctx) {
    const batch = ctx[BATCH];
    ctx[BATCH] = undefined;
    let sent;
    try {
      sent = ctx.requestInputs(batch.map((/** @type {any} */ entry) => entry.ask));
    } catch (error) {
      for (const entry of batch) entry.reject(error);
      return;
    }
    sent.then(
      (/** @type {any[]} */ answers) => {
        batch.forEach((/** @type {any} */ entry, /** @type {number} */ i) => {
          const { value, error } = answers[i];
          if (error === undefined) {
            entry.resolve(value);
          } else if (error.code === null) {
            entry.reject(new Error(error.message));
          } else {
            entry.reject(new McpError(error.message, { code: error.code, kind: error.kind, data: error.data ?? undefined }));
          }
        });
      },
      (/** @type {any} */ error) => {
        // The core gave up on this run of the handler: the round ended to
        // ask the client (2026-07-28; the handler runs again with the
        // answers) or the request was cancelled. Nothing the handler does
        // now is sent, so its asks simply never settle.
        if (error instanceof McpError && error.kind === 'cancelled') return;
        for (const entry of batch) entry.reject(error);
      },
    );
  }

  define(proto, 'ask', ask);

  define(
    proto,
    'elicit',
    /**
     * @this {any}
     * @param {string | Record<string, unknown>} messageOrParams
     * @param {unknown} [schema]
     * @param {{ key?: string }} [options]
     */
    async function elicit(messageOrParams, schema, options) {
      let params;
      let parse = null;
      if (typeof messageOrParams === 'string') {
        parse = parser(schema, 'elicitation content');
        params = {
          mode: 'form',
          message: messageOrParams,
          requestedSchema: toJsonSchema(schema, 'input', 'elicit(message, schema): schema'),
        };
      } else if (messageOrParams !== null && typeof messageOrParams === 'object') {
        // Full `elicitation/create` params: `{ mode: 'url', message, url,
        // elicitationId }`, or a form whose requestedSchema may be a
        // Standard Schema.
        options = /** @type {any} */ (schema);
        params = { ...messageOrParams };
        if (params.requestedSchema !== undefined) {
          parse = parser(params.requestedSchema, 'elicitation content');
          params.requestedSchema = toJsonSchema(params.requestedSchema, 'input', 'elicit(params): requestedSchema');
        }
        if (params.mode === undefined) params.mode = params.url !== undefined ? 'url' : 'form';
      } else {
        throw new TypeError('elicit(message, schema) or elicit(params): a message string or a params object');
      }
      const answer = await ask.call(this, 'elicitation', params, options);
      if (parse && answer.action === 'accept' && answer.content !== undefined) {
        return { ...answer, content: await parse(answer.content) };
      }
      return answer;
    },
  );

  define(
    proto,
    'sample',
    /**
     * @this {any}
     * @param {Record<string, unknown>} params
     * @param {{ key?: string }} [options]
     */
    function sample(params, options) {
      return ask.call(this, 'sampling', params, options);
    },
  );

  define(
    proto,
    'listRoots',
    /**
     * @this {any}
     * @param {{ key?: string }} [options]
     */
    function listRoots(options) {
      return ask.call(this, 'roots', {}, options);
    },
  );
}

/** @param {any} proto @param {string} name @param {Function} fn */
function define(proto, name, fn) {
  Object.defineProperty(proto, name, { value: fn, writable: true, configurable: true, enumerable: false });
}

/** @param {any} McpError */
function cancelled(McpError) {
  return new McpError('the request was cancelled or its handler run ended', { kind: 'cancelled' });
}

module.exports = { install };
