'use strict';
/**
 * Protected servers: the `auth` option of `serveHttp()`, `fetchHandler()`
 * and `nodeHandler()`. Every request must then carry
 * `Authorization: Bearer <token>` that the verifier accepts, meant for the
 * server (`aud` names `resource`) and not expired; the server publishes its
 * protected resource metadata (RFC 9728) at
 * `/.well-known/oauth-protected-resource` and answers 401 / 403 with the
 * `WWW-Authenticate` challenges MCP clients follow to log in. All of that
 * is the Rust core's; this file only turns the options into the native
 * `Protection`.
 *
 * @example
 * const { Server, InvalidToken } = require('ferromcp');
 * const server = new Server({ name: 'files', version: '1.0.0' });
 * server.tool('whoami', { scopes: ['files:read'] }, (_args, ctx) => ctx.auth?.subject ?? 'nobody');
 * await server.serveHttp({
 *   port: 8000,
 *   auth: {
 *     resource: 'http://127.0.0.1:8000/mcp',
 *     authorizationServers: ['https://auth.example.com'],
 *     verifier: async (token) => {
 *       if (token !== 'let-me-in') throw new InvalidToken('unknown token');
 *       return { sub: 'alice', scope: 'files:read', aud: 'http://127.0.0.1:8000/mcp' };
 *     },
 *   },
 * });
 */

const native = require('./load-native.js');

/**
 * Thrown by a verifier for a token it does not accept: the client gets HTTP
 * 401 `invalid_token` (and logs in again). Any other error from a verifier
 * answers 503: the token could not be checked right now.
 *
 * @example
 * throw new InvalidToken('expired');
 */
class InvalidToken extends Error {
  /** @param {string} [message] */
  constructor(message = 'invalid token') {
    super(message);
    this.name = 'InvalidToken';
  }
}

/**
 * The native protection for the `auth` option, or `undefined`.
 * @param {any} auth
 * @returns {InstanceType<typeof native.Protection> | undefined}
 */
function toNativeProtection(auth) {
  if (auth === undefined || auth === null) return undefined;
  if (typeof auth !== 'object') throw new TypeError('auth must be an object like { resource, authorizationServers, verifier }');
  const { verifier, resource, authorizationServers, scopesSupported, requiredScopes, resourceName, resourceDocumentation } = auth;
  const settings = { resource, authorizationServers, scopesSupported, requiredScopes, resourceName, resourceDocumentation };
  if (verifier instanceof native.JwtVerifier) return new native.Protection(settings, null, verifier);
  if (typeof verifier !== 'function') {
    throw new TypeError('auth.verifier must be a JwtVerifier or a function (token) => claims');
  }
  return new native.Protection(settings, adapt(verifier));
}

/**
 * The native calling convention: `(request, null)` answers `{ claims }` or
 * `{ invalid }`; anything else thrown becomes a 503 in core.
 * @param {(token: string, request: { resource: string, method: string, path: string }) => unknown} verifier
 */
function adapt(verifier) {
  return async (/** @type {{ token: string, resource: string, method: string, path: string }} */ request) => {
    const { token, ...about } = request;
    let claims;
    try {
      claims = await verifier(token, about);
    } catch (e) {
      if (e instanceof InvalidToken) return { invalid: e.message };
      throw e;
    }
    if (claims === null || typeof claims !== 'object' || Array.isArray(claims)) {
      throw new TypeError('a verifier must return an object of claims or throw InvalidToken');
    }
    return { claims };
  };
}

module.exports = { InvalidToken, JwtVerifier: native.JwtVerifier, toNativeProtection };
