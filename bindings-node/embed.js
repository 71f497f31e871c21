'use strict';
/**
 * Serving MCP inside an existing web application: `server.fetch(request)`
 * (web-standard `Request` -> `Response`: Hono, Bun, Deno, Next.js route
 * handlers) and `server.nodeHandler()` (`(req, res)` for `node:http`,
 * Express, Fastify).
 *
 * Both only move bytes: every exchange goes through the Rust core's HTTP
 * endpoint, the one `serveHttp()` uses, so the same rules apply (`Host` /
 * `Origin` checks, the mirrored `MCP-Protocol-Version` / `Mcp-Method` /
 * `Mcp-Name` headers, the body limit, 2025-11-25 sessions, SSE streams sent
 * event by event). The host routes: by default the handlers answer on any
 * path they are mounted at.
 *
 * @example
 * const express = require('express');
 * const { Server } = require('ferromcp');
 *
 * const server = new Server({ name: 'demo', version: '1.0.0' });
 * server.tool('echo', { inputSchema: { type: 'object' } }, ({ text }) => text);
 * const app = express();
 * app.all('/mcp', server.nodeHandler({ allowedHosts: ['localhost', 'api.example.com'] }));
 * app.listen(3000);
 */

const native = require('./lib/load-native.js');
const { toNativeProtection } = require('./lib/auth.js');

/**
 * @typedef {{ path?: string, allowedHosts?: string[], allowedOrigins?: string[],
 *   maxBodyBytes?: number }} HandlerOptions
 */

/**
 * Adds `fetch`, `fetchHandler` and `nodeHandler` to the facade's `Server`;
 * `nativeOf(server)` reads its native server (a private field).
 * @param {Function} ServerClass
 * @param {(server: any) => InstanceType<typeof native.Server>} nativeOf
 */
function install(ServerClass, nativeOf) {
  /** @type {WeakMap<object, InstanceType<typeof native.HttpEndpoint>>} */
  const defaults = new WeakMap();
  const endpointOf = (/** @type {any} */ server) => {
    let endpoint = defaults.get(server);
    if (endpoint === undefined) {
      endpoint = new native.HttpEndpoint(nativeOf(server), undefined);
      defaults.set(server, endpoint);
    }
    return endpoint;
  };
  Object.defineProperties(ServerClass.prototype, {
    fetch: {
      /** @param {Request} request */
      value: function fetch(request) {
        return fetchWith(endpointOf(this), request);
      },
      writable: true,
      configurable: true,
    },
    fetchHandler: {
      /** @param {HandlerOptions} [options] */
      value: function fetchHandler(options) {
        const endpoint = new native.HttpEndpoint(nativeOf(this), endpointOptions(options), toNativeProtection(options?.auth));
        return (/** @type {Request} */ request) => fetchWith(endpoint, request);
      },
      writable: true,
      configurable: true,
    },
    nodeHandler: {
      /** @param {HandlerOptions} [options] */
      value: function nodeHandler(options) {
        const endpoint =
          options === undefined
            ? endpointOf(this)
            : new native.HttpEndpoint(nativeOf(this), endpointOptions(options), toNativeProtection(options?.auth));
        return (/** @type {any} */ req, /** @type {any} */ res) => serveNode(endpoint, req, res);
      },
      writable: true,
      configurable: true,
    },
  });
}

/** @param {HandlerOptions | undefined} options */
function endpointOptions(options) {
  if (options === undefined || options === null) return undefined;
  if (typeof options !== 'object') throw new TypeError('handler options must be an object');
  const { path, allowedHosts, allowedOrigins, maxBodyBytes } = options;
  return { path, allowedHosts, allowedOrigins, maxBodyBytes };
}

/**
 * One web-standard exchange.
 * @param {InstanceType<typeof native.HttpEndpoint>} endpoint
 * @param {Request} request
 * @returns {Promise<Response>}
 */
async function fetchWith(endpoint, request) {
  const url = new URL(request.url);
  /** @type {string[]} */
  const headers = [];
  request.headers.forEach((value, name) => headers.push(name, value));
  // A Request built from a URL often has no Host header; the URL's is the
  // one the client used.
  if (!request.headers.has('host')) headers.push('host', url.host);
  const exchange = endpoint.start(request.method, url.pathname + url.search, headers, undefined);
  const signal = request.signal;
  const onAbort = () => exchange.cancel();
  signal?.addEventListener('abort', onAbort, { once: true });
  void feedWeb(exchange, request.body);
  const head = await exchange.head();
  if (head === null) {
    // Cancelled before answering: the client is gone, nobody reads this.
    return new Response(null, { status: 503 });
  }
  const responseHeaders = new Headers();
  for (let i = 0; i + 1 < head.headers.length; i += 2) responseHeaders.append(head.headers[i], head.headers[i + 1]);
  const nullBody = head.status === 204 || head.status === 304 || request.method === 'HEAD';
  if (nullBody) {
    exchange.cancel();
    return new Response(null, { status: head.status, headers: responseHeaders });
  }
  const body = new ReadableStream({
    async pull(controller) {
      const chunk = await exchange.nextChunk();
      if (chunk === null) {
        signal?.removeEventListener('abort', onAbort);
        controller.close();
      } else {
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      }
    },
    cancel() {
      // The host stopped reading: its client went away.
      signal?.removeEventListener('abort', onAbort);
      exchange.cancel();
    },
  });
  return new Response(body, { status: head.status, headers: responseHeaders });
}

/**
 * Feeds a web `ReadableStream` body to the exchange.
 * @param {InstanceType<typeof native.Exchange>} exchange
 * @param {ReadableStream<Uint8Array> | null} body
 */
async function feedWeb(exchange, body) {
  if (body === null) {
    exchange.endBody();
    return;
  }
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!exchange.feed(Buffer.from(value.buffer, value.byteOffset, value.byteLength))) {
        await reader.cancel();
        return;
      }
    }
    exchange.endBody();
  } catch {
    exchange.abortBody();
  }
}

/**
 * One `node:http` exchange (Express and Fastify hand the same objects).
 * @param {InstanceType<typeof native.HttpEndpoint>} endpoint
 * @param {import('node:http').IncomingMessage & { body?: unknown, originalUrl?: string }} req
 * @param {import('node:http').ServerResponse} res
 */
async function serveNode(endpoint, req, res) {
  const exchange = endpoint.start(
    req.method ?? 'GET',
    req.url ?? '/',
    req.rawHeaders,
    req.socket?.remoteAddress,
  );
  let finished = false;
  res.on('close', () => {
    // Closed before the end of the response: the client left.
    if (!finished) exchange.cancel();
  });
  feedNode(exchange, req);
  try {
    const head = await exchange.head();
    if (head === null) {
      if (!res.headersSent && !res.destroyed) res.destroy();
      return;
    }
    res.writeHead(head.status, head.headers);
    if (typeof res.flushHeaders === 'function') res.flushHeaders();
    for (;;) {
      const chunk = await exchange.nextChunk();
      if (chunk === null) break;
      if (res.destroyed) break;
      if (!res.write(chunk)) {
        await new Promise((resolve) => {
          const done = () => {
            res.off('drain', done);
            res.off('close', done);
            resolve(undefined);
          };
          res.on('drain', done);
          res.on('close', done);
        });
      }
    }
    finished = true;
    if (!res.destroyed) res.end();
  } catch (error) {
    exchange.cancel();
    if (!res.headersSent) {
      res.statusCode = 500;
      res.end();
    } else {
      res.destroy(/** @type {Error} */ (error));
    }
  }
}

/**
 * Feeds a Node request body to the exchange, or the body a framework
 * already parsed (Express `express.json()`, Fastify).
 * @param {InstanceType<typeof native.Exchange>} exchange
 * @param {import('node:http').IncomingMessage & { body?: unknown }} req
 */
function feedNode(exchange, req) {
  if (req.readableEnded) {
    // Someone read the body before us: take what they parsed, if anything
    // (an empty body then gets core's parse error, not a wait for bytes
    // that will never come).
    const body = req.body;
    if (body !== undefined) {
      exchange.feed(
        Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
      );
    }
    exchange.endBody();
    return;
  }
  req.on('data', (/** @type {Buffer} */ chunk) => {
    if (!exchange.feed(chunk)) {
      // Core answered without the rest (too large): stop reading it.
      req.pause();
    }
  });
  req.on('end', () => exchange.endBody());
  req.on('aborted', () => exchange.abortBody());
  req.on('error', () => exchange.abortBody());
}

module.exports = { install };
