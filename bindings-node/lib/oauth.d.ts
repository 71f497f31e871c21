// Types of lib/oauth.js: OAuth 2.1 for `Client.http(url, { oauth })`.

/** Tokens for one protected MCP server, as a {@link TokenStore} keeps them. */
export interface OAuthTokens {
  /** Sent as `Authorization: Bearer` (or `DPoP`). */
  accessToken: string;
  /** Exchanged for a new access token when the old one is refused or expires. */
  refreshToken?: string;
  /** Expiry, seconds since the Unix epoch, when the server said. */
  expiresAt?: number;
  /** The scopes asked for. */
  scopes?: string[];
  /** The issuer of the authorization server that issued them. */
  issuer: string;
  /** `"DPoP"` for a key-bound token; absent or `"Bearer"` otherwise. */
  tokenType?: string;
}

/** A client's identity at one authorization server (a registration). */
export interface OAuthClientCredentials {
  clientId: string;
  clientSecret?: string;
  /** `none`, `client_secret_basic`, `client_secret_post` or `private_key_jwt`. */
  tokenEndpointAuthMethod?: string;
  privateKeyPem?: string;
  /**
   * The redirect URIs a dynamic registration was made for: a login with
   * another redirect URI registers again (and saves over this one). Absent:
   * used with any redirect URI. Keep it when storing the record.
   */
  redirectUris?: string[];
}

/**
 * Where tokens (per MCP server URL) and registrations (per issuer) are kept
 * between runs: a file, a keychain... Methods may be sync or async; they
 * are called around a login only, not per request. One that throws is
 * reported as a process warning and reads as "nothing stored". Without a
 * store, tokens live in memory for the client's life.
 *
 * @example
 * ```ts
 * const saved = new Map<string, OAuthTokens>();
 * const clients = new Map<string, OAuthClientCredentials>();
 * const store: TokenStore = {
 *   loadTokens: (resource) => saved.get(resource),
 *   saveTokens: (resource, tokens) => void saved.set(resource, tokens),
 *   clearTokens: (resource) => void saved.delete(resource),
 *   loadClient: (issuer) => clients.get(issuer),
 *   saveClient: (issuer, client) => void clients.set(issuer, client),
 * };
 * ```
 */
export interface TokenStore {
  loadTokens(resource: string): OAuthTokens | null | undefined | Promise<OAuthTokens | null | undefined>;
  saveTokens(resource: string, tokens: OAuthTokens): void | Promise<void>;
  clearTokens(resource: string): void | Promise<void>;
  loadClient(issuer: string): OAuthClientCredentials | null | undefined | Promise<OAuthClientCredentials | null | undefined>;
  saveClient(issuer: string, client: OAuthClientCredentials): void | Promise<void>;
}

/** What every grant accepts. */
interface OAuthCommonOptions {
  /** Keeps tokens and registrations (default: in memory). */
  store?: TokenStore;
  /** Ask for DPoP-bound tokens (RFC 9449); the server must support it. */
  dpop?: boolean;
  /** Authorizations one request may trigger, step-ups included (default 3). */
  maxAuthorizations?: number;
  /** Ask for `offline_access` (a refresh token) when offered. */
  offlineAccess?: boolean;
}

/**
 * A user logs in in a browser (authorization code + PKCE): the default.
 * Client registration is automatic (pre-registered, client ID metadata
 * document, or dynamic registration).
 */
export interface AuthorizationCodeOAuth extends OAuthCommonOptions {
  grant?: 'authorizationCode';
  /** Where the authorization server sends the browser back. */
  redirectUri: string | URL;
  /**
   * Shows the authorization URL to the user and resolves with the redirect
   * URL the browser came back to (see {@link LoopbackRedirect}). A throw
   * rejects the connection with kind `"auth"`.
   */
  authorize: (url: string) => string | URL | Promise<string | URL>;
  /** `client_name` in dynamic registrations. */
  clientName?: string;
  /** This client's metadata document URL (SEP-991), used as its `client_id`. */
  clientMetadataUrl?: string | URL;
  /** Credentials registered out of band (for `issuer`, or any). */
  preRegistered?: Array<{ issuer?: string; clientId: string; clientSecret?: string }>;
}

/**
 * The client acts on its own behalf (`client_credentials`): a secret
 * (`client_secret_basic` / `_post`) or a P-256 key (`private_key_jwt`).
 */
export interface ClientCredentialsOAuth extends OAuthCommonOptions {
  grant: 'clientCredentials';
  clientId: string;
  clientSecret?: string;
  /** PKCS#8 PEM (text or file path) for `private_key_jwt`, instead of a secret. */
  privateKeyPem?: string;
}

/** A workload presents a JWT its platform issued (RFC 7523, workload identity). */
export interface JwtBearerOAuth extends OAuthCommonOptions {
  grant: 'jwtBearer';
  clientId: string;
  clientSecret?: string;
  /** The current assertion, asked for at each token request. */
  assertion: (request: { issuer: string; resource: string }) => string | Promise<string>;
}

/** Enterprise-managed authorization (SEP-990): the user's IdP ID token, exchanged. */
export interface EnterpriseManagedOAuth extends OAuthCommonOptions {
  grant: 'enterpriseManaged';
  clientId: string;
  clientSecret?: string;
  idp: { tokenEndpoint: string | URL; clientId: string; clientSecret?: string; idToken: string };
}

/** The `oauth` option of `Client.http`. */
/**
 * Only a login made elsewhere (a command line tool's commands after its
 * `login` command): the tokens in `store`, refreshed when they expire. A
 * request that needs a new login or more scopes rejects with kind `"auth"`
 * and `storedOnly` as its message, before anything is registered at the
 * authorization server; no browser, no callback.
 *
 * @example
 * ```ts
 * const oauth: StoredOnlyOAuth = { storedOnly: 'run `mytool login` first', store };
 * ```
 */
export interface StoredOnlyOAuth extends OAuthCommonOptions {
  grant?: 'authorizationCode';
  /** The message of the error a request that needs a new login gets. */
  storedOnly: string;
  /** Where the login made elsewhere kept its tokens and registration. */
  store: TokenStore;
}

export type OAuthOptions =
  | AuthorizationCodeOAuth
  | StoredOnlyOAuth
  | ClientCredentialsOAuth
  | JwtBearerOAuth
  | EnterpriseManagedOAuth;

/**
 * A one-shot listener on `127.0.0.1` for the browser's redirect (desktop login).
 *
 * @example
 * ```js
 * const loopback = await LoopbackRedirect.bind({ path: '/callback' });
 * const client = await Client.http(url, {
 *   oauth: {
 *     redirectUri: loopback.redirectUri,
 *     authorize: async (authUrl) => {
 *       console.log(`Open ${authUrl}`);
 *       return loopback.wait();
 *     },
 *   },
 * });
 * ```
 */
export declare class LoopbackRedirect {
  private constructor();
  /** Binds `127.0.0.1:port` (default 0: any free port) for `path` (default `/callback`). */
  static bind(options?: { port?: number; path?: string }): Promise<LoopbackRedirect>;
  /** `http://127.0.0.1:PORT/path`. */
  readonly redirectUri: string;
  /** The full redirect URL; rejects with kind `"auth"` after `timeout` ms (default 300000). */
  wait(options?: { timeout?: number }): Promise<string>;
  /** Stops listening. */
  close(): void;
}

/**
 * An `authorize` callback for servers that approve without a login page
 * (tests, CI): requests the URL and resolves with its redirect, unfollowed.
 */
export declare function headlessAuthorize(url: string | URL): Promise<string>;
