// The Node client's OAuth option against a small protected MCP endpoint and
// authorization server (one node:http listener, routed by path, as
// core/tests/client_oauth.rs does in Rust): a 401 leads to core's discovery,
// registration, PKCE and code exchange through the JS `authorize` callback;
// the token then goes on every request; a JS token store sees camelCase
// records and a second client reuses them; client credentials and
// jwt-bearer need no user; a failing callback rejects with kind "auth".

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import http from 'node:http';

import { Client, LoopbackRedirect, McpError, headlessAuthorize } from '../index.mjs';

/** Reads a request body. @param {http.IncomingMessage} req */
async function body(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * @param {http.ServerResponse} res
 * @param {number} status
 * @param {unknown} value
 * @param {Record<string, string>} [headers]
 */
function json(res, status, value, headers = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(value));
}

/** The mock; `seen` records what the client did. */
async function protectedServer() {
  const seen = {
    grants: /** @type {string[]} */ ([]),
    resources: /** @type {string[]} */ ([]),
    assertions: /** @type {string[]} */ ([]),
    basic: /** @type {string[]} */ ([]),
    registrations: 0,
    bearers: /** @type {(string | null)[]} */ ([]),
  };
  /** @type {string | undefined} */
  let challenge;
  let issued = 0;
  const tokens = new Set();
  const server = http.createServer(async (req, res) => {
    const base = `http://127.0.0.1:${/** @type {any} */ (server.address()).port}`;
    const url = new URL(req.url ?? '/', base);
    const text = await body(req);
    switch (url.pathname) {
      case '/.well-known/oauth-protected-resource/mcp':
        return json(res, 200, { resource: `${base}/mcp`, authorization_servers: [base], scopes_supported: ['read'] });
      case '/.well-known/oauth-authorization-server':
        return json(res, 200, {
          issuer: base,
          authorization_endpoint: `${base}/authorize`,
          token_endpoint: `${base}/token`,
          registration_endpoint: `${base}/register`,
          code_challenge_methods_supported: ['S256'],
          grant_types_supported: [
            'authorization_code',
            'refresh_token',
            'client_credentials',
            'urn:ietf:params:oauth:grant-type:jwt-bearer',
          ],
          token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
          authorization_response_iss_parameter_supported: true,
        });
      case '/register':
        seen.registrations += 1;
        return json(res, 201, { client_id: 'registered', client_secret: 's3cret' });
      case '/authorize': {
        challenge = url.searchParams.get('code_challenge') ?? undefined;
        const back = new URL(String(url.searchParams.get('redirect_uri')));
        back.searchParams.set('code', 'the-code');
        back.searchParams.set('state', String(url.searchParams.get('state')));
        back.searchParams.set('iss', base);
        res.writeHead(302, { location: back.href });
        return res.end();
      }
      case '/token': {
        const form = new URLSearchParams(text);
        const grant = String(form.get('grant_type'));
        seen.grants.push(grant);
        seen.resources.push(String(form.get('resource')));
        const basic = req.headers.authorization?.replace(/^Basic /, '');
        if (basic) seen.basic.push(Buffer.from(basic, 'base64').toString('utf8'));
        if (form.get('assertion')) seen.assertions.push(String(form.get('assertion')));
        if (grant === 'authorization_code') {
          const expected = createHash('sha256').update(String(form.get('code_verifier'))).digest('base64url');
          if (expected !== challenge) return json(res, 400, { error: 'invalid_grant' });
        }
        issued += 1;
        const token = `token-${issued}`;
        tokens.add(token);
        return json(res, 200, { access_token: token, token_type: 'Bearer', expires_in: 3600, refresh_token: `refresh-${issued}` });
      }
      case '/mcp': {
        const bearer = req.headers.authorization?.replace(/^Bearer /, '') ?? null;
        seen.bearers.push(bearer);
        if (bearer === null || !tokens.has(bearer)) {
          return json(res, 401, { error: 'invalid_token' }, {
            'www-authenticate': `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
          });
        }
        const message = JSON.parse(text);
        const result =
          message.method === 'tools/list'
            ? { tools: [{ name: 'echo', inputSchema: { type: 'object' } }] }
            : { content: [{ type: 'text', text: 'ok' }] };
        return json(res, 200, { jsonrpc: '2.0', id: message.id, result });
      }
      default:
        return json(res, 404, {});
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const port = /** @type {any} */ (server.address()).port;
  return { url: `http://127.0.0.1:${port}/mcp`, issuer: `http://127.0.0.1:${port}`, seen, close: () => server.close() };
}

/** The authorization endpoint's redirect, unfollowed (what a browser would be sent to). */
async function redirectOf(/** @type {string} */ url) {
  const answer = await fetch(url, { redirect: 'manual' });
  return String(answer.headers.get('location'));
}

/** A token store in two Maps, counting calls; async when asked. */
function mapStore(asynchronous = false) {
  const tokens = new Map();
  const clients = new Map();
  const calls = /** @type {string[]} */ ([]);
  /** @param {string} op @param {() => unknown} work */
  const answer = (op, work) => {
    calls.push(op);
    const value = work();
    return asynchronous ? new Promise((resolve) => setTimeout(() => resolve(value), 5)) : value;
  };
  return {
    tokens,
    clients,
    calls,
    loadTokens: (/** @type {string} */ r) => answer('loadTokens', () => tokens.get(r)),
    saveTokens: (/** @type {string} */ r, /** @type {any} */ t) => answer('saveTokens', () => void tokens.set(r, t)),
    clearTokens: (/** @type {string} */ r) => answer('clearTokens', () => void tokens.delete(r)),
    loadClient: (/** @type {string} */ i) => answer('loadClient', () => clients.get(i)),
    saveClient: (/** @type {string} */ i, /** @type {any} */ c) => answer('saveClient', () => void clients.set(i, c)),
  };
}

test('a 401 logs in through the authorize callback; the token goes on every request', async () => {
  const mock = await protectedServer();
  try {
    const asked = [];
    const client = await Client.http(mock.url, {
      era: 'modern',
      oauth: {
        redirectUri: 'http://127.0.0.1:1/callback',
        authorize: async (url) => {
          asked.push(url);
          return redirectOf(url);
        },
      },
    });
    const tools = [];
    for await (const tool of client.tools()) tools.push(tool.name);
    assert.deepEqual(tools, ['echo']);
    await client.callTool('echo');
    await client.close();
    assert.equal(asked.length, 1);
    const authorization = new URL(asked[0]);
    assert.equal(authorization.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(authorization.searchParams.get('resource'), mock.url);
    assert.equal(authorization.searchParams.get('client_id'), 'registered');
    assert.deepEqual(mock.seen.grants, ['authorization_code']);
    assert.equal(mock.seen.bearers[0], null);
    assert.ok(mock.seen.bearers.slice(1).every((b) => b === 'token-1'), String(mock.seen.bearers));
  } finally {
    mock.close();
  }
});

for (const asynchronous of [false, true]) {
  test(`a ${asynchronous ? 'promise-returning' : 'sync'} token store keeps camelCase records that a second client reuses`, async () => {
    const mock = await protectedServer();
    try {
      const store = mapStore(asynchronous);
      let logins = 0;
      const oauth = {
        store,
        redirectUri: 'http://127.0.0.1:1/callback',
        authorize: (/** @type {string} */ url) => {
          logins += 1;
          return headlessAuthorize(url);
        },
      };
      const first = await Client.http(mock.url, { era: 'modern', oauth });
      await first.callTool('echo');
      await first.close();
      const saved = store.tokens.get(mock.url);
      assert.equal(saved.accessToken, 'token-1');
      assert.equal(saved.refreshToken, 'refresh-1');
      assert.equal(saved.issuer, mock.issuer);
      assert.equal(typeof saved.expiresAt, 'number');
      assert.deepEqual(saved.scopes, ['read']);
      assert.equal(saved.access_token, undefined);
      assert.deepEqual(store.clients.get(mock.issuer), {
        clientId: 'registered',
        clientSecret: 's3cret',
        tokenEndpointAuthMethod: 'client_secret_basic',
        redirectUris: ['http://127.0.0.1:1/callback'],
      });

      const second = await Client.http(mock.url, { era: 'modern', oauth });
      await second.callTool('echo');
      await second.close();
      assert.equal(logins, 1, 'the second client used the stored token');
      assert.equal(mock.seen.registrations, 1);
      assert.equal(mock.seen.bearers.at(-1), 'token-1');
      assert.ok(store.calls.includes('loadTokens') && store.calls.includes('saveClient'), String(store.calls));
    } finally {
      mock.close();
    }
  });
}

test('storedOnly uses a login made elsewhere and never starts one', async () => {
  const mock = await protectedServer();
  try {
    const store = mapStore(false);
    const storedOnly = { storedOnly: 'run `mytool login` first', store };
    // No login yet: the message at once; nothing registered, nothing granted.
    await assert.rejects(
      Client.http(mock.url, { era: 'modern', oauth: storedOnly }).then((client) => client.callTool('echo')),
      (error) => error instanceof McpError && error.kind === 'auth' && /mytool login/.test(error.message),
    );
    assert.equal(mock.seen.registrations, 0);
    // A login (the tool's `login` command) keeps its tokens in the store...
    const login = await Client.http(mock.url, {
      era: 'modern',
      oauth: { store, redirectUri: 'http://127.0.0.1:1/callback', authorize: headlessAuthorize },
    });
    await login.callTool('echo');
    await login.close();
    // ...which the stored-only client then uses.
    const client = await Client.http(mock.url, { era: 'modern', oauth: storedOnly });
    await client.callTool('echo');
    await client.close();
    assert.equal(mock.seen.registrations, 1);
    assert.equal(mock.seen.bearers.at(-1), 'token-1');
  } finally {
    mock.close();
  }
});

test('a token store method that throws is a warning, and the login goes on', async () => {
  const mock = await protectedServer();
  const warnings = [];
  const onWarning = (/** @type {Error} */ w) => warnings.push(w.message);
  process.on('warning', onWarning);
  try {
    const store = {
      ...mapStore(),
      saveTokens: () => {
        throw new Error('disk full');
      },
    };
    const client = await Client.http(mock.url, {
      era: 'modern',
      oauth: { store, redirectUri: 'http://127.0.0.1:1/callback', authorize: headlessAuthorize },
    });
    await client.callTool('echo');
    await client.close();
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(warnings.some((w) => w.includes('oauth.store.saveTokens failed: Error: disk full')), String(warnings));
  } finally {
    process.off('warning', onWarning);
    mock.close();
  }
});

test('client credentials: no user, the secret goes to the token endpoint', async () => {
  const mock = await protectedServer();
  try {
    const client = await Client.http(mock.url, {
      era: 'modern',
      oauth: { grant: 'clientCredentials', clientId: 'svc', clientSecret: 'pw' },
    });
    await client.callTool('echo');
    await client.close();
    assert.deepEqual(mock.seen.grants, ['client_credentials']);
    assert.deepEqual(mock.seen.basic, ['svc:pw']);
    assert.equal(mock.seen.registrations, 0);
  } finally {
    mock.close();
  }
});

test('jwt-bearer: the assertion callback is asked for this issuer and resource', async () => {
  const mock = await protectedServer();
  try {
    const asked = [];
    const client = await Client.http(mock.url, {
      era: 'modern',
      oauth: {
        grant: 'jwtBearer',
        clientId: 'workload',
        assertion: async (request) => {
          asked.push(request);
          return 'platform.jwt.value';
        },
      },
    });
    await client.callTool('echo');
    await client.close();
    assert.deepEqual(asked, [{ issuer: mock.issuer, resource: mock.url }]);
    assert.deepEqual(mock.seen.grants, ['urn:ietf:params:oauth:grant-type:jwt-bearer']);
    assert.deepEqual(mock.seen.assertions, ['platform.jwt.value']);
  } finally {
    mock.close();
  }
});

test('an authorize callback that throws rejects the connection with kind "auth"', async () => {
  const mock = await protectedServer();
  try {
    await assert.rejects(
      Client.http(mock.url, {
        era: 'modern',
        oauth: {
          redirectUri: 'http://127.0.0.1:1/callback',
          authorize: () => {
            throw new Error('the user closed the browser');
          },
        },
      }).then((client) => client.callTool('echo')),
      (error) => {
        assert.ok(error instanceof McpError);
        assert.equal(error.kind, 'auth');
        assert.match(error.message, /the user closed the browser/);
        return true;
      },
    );
    await assert.rejects(
      Client.http(mock.url, {
        era: 'modern',
        oauth: { redirectUri: 'http://127.0.0.1:1/callback', authorize: () => /** @type {any} */ (42) },
      }).then((client) => client.callTool('echo')),
      (error) => error instanceof McpError && error.kind === 'auth' && /must return a string/.test(error.message),
    );
  } finally {
    mock.close();
  }
});

test('bad oauth options throw before anything is sent', async () => {
  const url = 'http://127.0.0.1:1/mcp';
  await assert.rejects(Client.http(url, { oauth: /** @type {any} */ ({ authorize: headlessAuthorize }) }), /redirectUri is required/);
  await assert.rejects(Client.http(url, { oauth: /** @type {any} */ ({ redirectUri: 'http://x/cb' }) }), /authorize must be a function/);
  await assert.rejects(Client.http(url, { oauth: /** @type {any} */ ({ grant: 'password' }) }), /oauth.grant must be one of/);
  await assert.rejects(Client.http(url, { oauth: /** @type {any} */ ({ grant: 'clientCredentials' }) }), /clientId is required/);
  await assert.rejects(
    Client.http(url, { oauth: { grant: 'clientCredentials', clientId: 'a', clientSecret: 'b', privateKeyPem: '-----BEGIN PRIVATE KEY-----\n' } }),
    /not both/,
  );
  await assert.rejects(
    Client.stdio(/** @type {any} */ ({ command: 'node', oauth: { redirectUri: 'http://x/cb', authorize: headlessAuthorize } })),
    /oauth is for Client.http/,
  );
  await assert.rejects(
    Client.http(url, { oauth: /** @type {any} */ ({ redirectUri: 'http://x/cb', authorize: headlessAuthorize, store: {} }) }),
    /oauth.store.loadTokens must be a function/,
  );
});

test('LoopbackRedirect returns the browser redirect and times out with kind "auth"', async () => {
  const loopback = await LoopbackRedirect.bind({ path: 'callback' });
  assert.match(loopback.redirectUri, /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
  const waiting = loopback.wait({ timeout: 5000 });
  const page = await fetch(`${loopback.redirectUri}?code=c&state=s`);
  assert.match(await page.text(), /Authorization complete/);
  assert.equal(await waiting, `${loopback.redirectUri}?code=c&state=s`);
  await assert.rejects(loopback.wait({ timeout: 20 }), (error) => error instanceof McpError && error.kind === 'auth');
  loopback.close();
  await assert.rejects(loopback.wait({ timeout: 20 }), /closed/);
});
