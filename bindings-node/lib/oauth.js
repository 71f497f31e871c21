'use strict';
/**
 * OAuth 2.1 for `Client.http(url, { oauth })`: the facade over the native
 * `OAuth` settings (src/oauth.rs). Core runs the whole protocol (discovery,
 * registration, PKCE, resource indicators, step-up, refresh, DPoP); this
 * file only shapes the options, adapts the callbacks (sync or async) and
 * maps a token store object's camelCase records to core's.
 *
 * @example
 * const { Client, LoopbackRedirect } = require('ferromcp');
 *
 * const loopback = await LoopbackRedirect.bind({ port: 8765, path: '/callback' });
 * const client = await Client.http('https://mcp.example.com/mcp', {
 *   oauth: {
 *     redirectUri: loopback.redirectUri,
 *     authorize: async (url) => {
 *       console.log(`Open ${url} in your browser`);
 *       return loopback.wait({ timeout: 300_000 });
 *     },
 *   },
 * });
 */

const { readFileSync } = require('node:fs');
const native = require('./load-native.js');

/** Grants `oauth.grant` takes. */
const GRANTS = ['authorizationCode', 'clientCredentials', 'jwtBearer', 'enterpriseManaged'];

/**
 * PEM text as is, or the file at that path read now.
 * @param {string | Buffer} source
 */
function pem(source) {
  const text = String(source);
  return text.includes('-----BEGIN') ? text : readFileSync(text, 'ascii');
}

/**
 * Record field names: core's (snake_case, the stored JSON) <-> the JS API's.
 * @type {Record<string, Array<[string, string]>>}
 */
const FIELDS = {
  tokens: [
    ['access_token', 'accessToken'],
    ['refresh_token', 'refreshToken'],
    ['expires_at', 'expiresAt'],
    ['scopes', 'scopes'],
    ['issuer', 'issuer'],
    ['token_type', 'tokenType'],
  ],
  client: [
    ['client_id', 'clientId'],
    ['client_secret', 'clientSecret'],
    ['token_endpoint_auth_method', 'tokenEndpointAuthMethod'],
    ['private_key_pem', 'privateKeyPem'],
    ['redirect_uris', 'redirectUris'],
  ],
};

/**
 * Renames the fields of `record` (`from` index 0 -> 1 or 1 -> 0); absent
 * and `null` fields are left out.
 * @param {any} record
 * @param {Array<[string, string]>} fields
 * @param {0 | 1} from
 */
function rename(record, fields, from) {
  if (record == null) return null;
  if (typeof record !== 'object') throw new TypeError('a token store must return an object or null');
  /** @type {Record<string, unknown>} */
  const out = {};
  for (const pair of fields) {
    const value = record[pair[from]];
    if (value != null) out[pair[1 - from]] = value;
  }
  return out;
}

/** What each store operation is: its record kind, whether it loads. */
const OPS = /** @type {const} */ ({
  loadTokens: ['tokens', true],
  saveTokens: ['tokens', false],
  clearTokens: [null, false],
  loadClient: ['client', true],
  saveClient: ['client', false],
});

/**
 * The native dispatcher for a token store object: `{op, key, value}` ->
 * the method's answer in core's field names. A method that throws or
 * rejects is reported as a process warning and reads as "nothing stored"
 * (the login then happens again); it never breaks the connection.
 * @param {any} store
 */
function storeDispatcher(store) {
  for (const op of Object.keys(OPS)) {
    if (typeof store[op] !== 'function') throw new TypeError(`oauth.store.${op} must be a function`);
  }
  return async (/** @type {{ op: keyof typeof OPS, key: string, value: any }} */ call) => {
    const [kind, loads] = OPS[call.op];
    try {
      if (loads) {
        return rename(await store[call.op](call.key), FIELDS[/** @type {string} */ (kind)], 1);
      }
      const args = kind === null ? [call.key] : [call.key, rename(call.value, FIELDS[kind], 0)];
      await store[call.op](...args);
    } catch (error) {
      process.emitWarning(`ferromcp: oauth.store.${call.op} failed: ${error}`, 'FerromcpOAuthWarning');
    }
    return null;
  };
}

/**
 * A string callback answer: a `URL` is accepted for a redirect.
 * @param {Function} fn
 * @param {string} name
 */
function textCallback(fn, name) {
  if (typeof fn !== 'function') throw new TypeError(`oauth.${name} must be a function`);
  return async (/** @type {unknown} */ input) => {
    const answer = await fn(input);
    if (typeof answer === 'string') return answer;
    if (answer instanceof URL) return answer.href;
    throw new TypeError(`oauth.${name} must return a string, not ${typeof answer}`);
  };
}

/**
 * The native `OAuth` for the `oauth` option of `Client.http`, or `null`.
 * @param {any} oauth
 */
function nativeOAuth(oauth) {
  if (oauth == null) return null;
  if (typeof oauth !== 'object') throw new TypeError('oauth must be an object');
  const grant = oauth.grant ?? 'authorizationCode';
  if (!GRANTS.includes(grant)) {
    throw new TypeError(`oauth.grant must be one of ${GRANTS.map((g) => JSON.stringify(g)).join(', ')}`);
  }
  const idp = oauth.idp;
  const options = {
    grant,
    redirectUri: oauth.redirectUri == null ? undefined : String(oauth.redirectUri),
    clientName: oauth.clientName,
    clientMetadataUrl: oauth.clientMetadataUrl == null ? undefined : String(oauth.clientMetadataUrl),
    preRegistered: oauth.preRegistered?.map((/** @type {any} */ p) => ({
      issuer: p.issuer,
      clientId: p.clientId,
      clientSecret: p.clientSecret,
    })),
    offlineAccess: oauth.offlineAccess,
    dpop: oauth.dpop,
    maxAuthorizations: oauth.maxAuthorizations,
    storedOnly: oauth.storedOnly == null ? undefined : String(oauth.storedOnly),
    clientId: oauth.clientId,
    clientSecret: oauth.clientSecret,
    privateKeyPem: oauth.privateKeyPem == null ? undefined : pem(oauth.privateKeyPem),
    idp:
      idp == null
        ? undefined
        : {
            tokenEndpoint: String(idp.tokenEndpoint),
            clientId: idp.clientId,
            clientSecret: idp.clientSecret,
            idToken: idp.idToken,
          },
  };
  // A stored-only client never logs anyone in: no callback to check.
  const storedOnly = oauth.storedOnly != null && oauth.authorize == null;
  const authorize = grant === 'authorizationCode' && !storedOnly ? textCallback(oauth.authorize, 'authorize') : null;
  const assertion = grant === 'jwtBearer' ? textCallback(oauth.assertion, 'assertion') : null;
  const store = oauth.store == null ? null : storeDispatcher(oauth.store);
  return new native.OAuth(options, authorize, assertion, store);
}

/**
 * Listens on `127.0.0.1` for the browser coming back from the
 * authorization server (a desktop login, RFC 8252): give `redirectUri` as
 * `oauth.redirectUri` and `wait()` in `oauth.authorize`.
 *
 * @example
 * const loopback = await LoopbackRedirect.bind({ port: 0, path: '/callback' });
 * const oauth = {
 *   redirectUri: loopback.redirectUri,
 *   authorize: async (url) => {
 *     openInBrowser(url);
 *     return loopback.wait({ timeout: 300_000 });
 *   },
 * };
 */
class LoopbackRedirect {
  /** @type {InstanceType<typeof native.LoopbackRedirect>} */
  #native;

  /**
   * Use {@link LoopbackRedirect.bind}.
   * @param {InstanceType<typeof native.LoopbackRedirect>} bound
   */
  constructor(bound) {
    if (!(bound instanceof native.LoopbackRedirect)) {
      throw new TypeError('use LoopbackRedirect.bind(...)');
    }
    this.#native = bound;
  }

  /**
   * Binds `127.0.0.1:port` (default 0: any free port) for redirects to
   * `path` (default `/callback`).
   * @param {{ port?: number, path?: string }} [options]
   */
  static async bind(options = {}) {
    return new LoopbackRedirect(await native.LoopbackRedirect.bind(options.port ?? 0, options.path ?? '/callback'));
  }

  /** The redirect URI to register: `http://127.0.0.1:PORT/path`. */
  get redirectUri() {
    return this.#native.redirectUri;
  }

  /**
   * Resolves with the full redirect URL the browser requested; rejects with
   * an `McpError` of kind `"auth"` after `timeout` ms (default 5 minutes).
   * @param {{ timeout?: number }} [options]
   * @returns {Promise<string>}
   */
  wait(options = {}) {
    return this.#native.wait(options.timeout ?? 300_000);
  }

  /** Stops listening. */
  close() {
    this.#native.close();
  }
}

/**
 * Requests an authorization URL and resolves with where it redirects (the
 * redirect carrying `code`, `state`, `iss`), without following it: an
 * `authorize` callback for servers that approve without a login page (test
 * and CI setups). A real user authorizes in a browser instead.
 *
 * @example
 * const client = await Client.http(url, {
 *   oauth: { redirectUri: 'http://localhost:3000/callback', authorize: headlessAuthorize },
 * });
 * @param {string | URL} url
 * @returns {Promise<string>}
 */
function headlessAuthorize(url) {
  return native.headlessAuthorize(String(url));
}

module.exports = { nativeOAuth, LoopbackRedirect, headlessAuthorize };
