// Types of lib/auth.js: the `auth` option of `serveHttp()`, `fetchHandler()`
// and `nodeHandler()`.
import type { JwtVerifier } from '../native';

export { JwtVerifier } from '../native';
export type { AuthInfo, JwtVerifierOptions } from '../native';

/**
 * Thrown by a verifier for a token it does not accept: HTTP 401
 * `invalid_token`. Any other error from a verifier answers 503.
 *
 * @example
 * throw new InvalidToken('expired');
 */
export declare class InvalidToken extends Error {
  constructor(message?: string);
}

/**
 * A verifier function: the bearer token's claims (JWT names: `sub`, `scope`
 * or `scp`, `aud`, `exp`, `client_id` or `azp`), or a thrown
 * {@link InvalidToken}. `aud` must name the protected resource and `exp`,
 * when present, must be in the future: the core checks both whatever the
 * verifier says. `request` tells which resource (the protection's
 * `resource`), HTTP method and path the token came with.
 */
export type VerifyToken = (
  token: string,
  request: { resource: string; method: string; path: string },
) => Record<string, unknown> | Promise<Record<string, unknown>>;

/**
 * How an HTTP-served server is protected by OAuth bearer tokens.
 *
 * @example
 * const auth: AuthOptions = {
 *   resource: 'https://mcp.example.com/mcp',
 *   authorizationServers: ['https://auth.example.com'],
 *   verifier: new JwtVerifier({ issuer: 'https://auth.example.com', audience: 'https://mcp.example.com/mcp' }),
 *   scopesSupported: ['files:read', 'files:write'],
 * };
 */
export interface AuthOptions {
  /** The server's canonical URL (the MCP endpoint as clients reach it); tokens must name it in `aud`. */
  resource: string;
  /** Issuer URLs of the authorization servers whose tokens are accepted. */
  authorizationServers: string[];
  /** Checks a token: a {@link JwtVerifier} or a function. */
  verifier: JwtVerifier | VerifyToken;
  /** `scopes_supported` of the protected resource metadata (and the 401 challenge's `scope`). */
  scopesSupported?: string[];
  /** Scopes every request needs. */
  requiredScopes?: string[];
  /** `resource_name` of the metadata. */
  resourceName?: string;
  /** `resource_documentation` of the metadata (a URL). */
  resourceDocumentation?: string;
}
