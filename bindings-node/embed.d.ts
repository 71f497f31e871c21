// Types of embed.js: `server.fetch()`, `server.fetchHandler()` and
// `server.nodeHandler()`, merged into the `Server` class of index.d.ts.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthOptions } from './lib/auth';

/** What an embedded endpoint checks (the rules of `serveHttp()`). */
export interface HandlerOptions {
  /** Path the handler answers on; default: any path (the host routes). */
  path?: string;
  /** `Host` names (without port) accepted; default: the loopback names only. */
  allowedHosts?: string[];
  /** `Origin` values accepted; default: loopback origins only. */
  allowedOrigins?: string[];
  /** Largest accepted request body in bytes (default 16 MiB). */
  maxBodyBytes?: number;
  /**
   * Protection by OAuth bearer tokens; the host must also route
   * `/.well-known/oauth-protected-resource` (and that path followed by
   * `path`) to the handler, which answers it.
   */
  auth?: AuthOptions;
}

/** A `(req, res)` handler for `node:http`, Express and Fastify (`reply.raw`). */
export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

declare module './index.js' {
  interface Server {
    /**
     * Answers one web-standard request (Hono, Bun, Deno, Next.js route
     * handlers) through the core's HTTP endpoint, with the default options:
     * any path, loopback `Host` names only. SSE answers stream event by event.
     *
     * @example
     * app.all('/mcp', (c) => server.fetch(c.req.raw)); // Hono
     */
    fetch(request: Request): Promise<Response>;
    /**
     * A `fetch`-style handler with its own options.
     *
     * @example
     * export const POST = server.fetchHandler({ allowedHosts: ['app.example.com'] });
     */
    fetchHandler(options?: HandlerOptions): (request: Request) => Promise<Response>;
    /**
     * A `(req, res)` handler for `node:http`, Express (`app.all('/mcp', ...)`,
     * with or without `express.json()` before it) and Fastify, which reads
     * the body itself: `reply.hijack(); handler(Object.assign(request.raw,
     * { body: request.body }), reply.raw)`.
     *
     * @example
     * http.createServer(server.nodeHandler()).listen(3000);
     */
    nodeHandler(options?: HandlerOptions): NodeHandler;
  }
}
