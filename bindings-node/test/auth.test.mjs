// Protected servers (issue 15): `auth` on serveHttp()/fetchHandler(),
// `scopes` on registrations, `ctx.auth`. The protocol (challenges, metadata,
// audience and expiry checks) is core's; these tests show the binding
// carries the options, the verifier function and the claims across.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { Server, Client, InvalidToken, JwtVerifier } from '../index.mjs';
import { request } from '../test-support/helpers.mjs';

const ISSUER = 'https://auth.example.com';

function protectedServer() {
  return new Server({ name: 'protected', version: '1.0.0' })
    .tool('whoami', (_args, ctx) =>
      JSON.stringify({
        subject: ctx.auth?.subject,
        clientId: ctx.auth?.clientId,
        scopes: ctx.auth?.scopes,
        expiresAt: ctx.auth?.expiresAt,
        extra: ctx.auth?.claims.extra,
      }),
    )
    .tool('delete_file', { scopes: ['files:write'] }, () => 'deleted')
    .resource('file:///secret.txt', { scopes: ['secrets'] }, () => 's3cret')
    .prompt('greet', { scopes: ['prompts'] }, () => 'hello');
}

/** A table of tokens; `aud` names the resource the request is for. */
const table = {
  reader: { sub: 'alice', scope: 'files:read' },
  writer: { sub: 'bob', scope: 'files:read files:write secrets prompts' },
};

async function verify(token, { resource }) {
  const exp = Math.floor(Date.now() / 1000) + 3600;
  if (token === 'boom') throw new Error('introspection endpoint down');
  if (token === 'elsewhere') return { sub: 'eve', aud: 'https://other.example.com/mcp', exp };
  if (token === 'expired') return { sub: 'old', aud: resource, exp: exp - 7200 };
  const claims = table[token];
  if (claims === undefined) throw new InvalidToken('unknown token');
  return { ...claims, aud: resource, exp, client_id: 'app', extra: 42 };
}

function listen(server, auth) {
  return new Promise((resolve, reject) => {
    // The resource URL names the port: served first on port 0 to learn it
    // would need a second bind, so the verifier takes `aud` from `request`.
    const served = server.serveHttp({ port: 0, auth, onListening: (address) => resolve({ address, served }) });
    served.catch(reject);
  });
}

function auth(verifier = verify) {
  return {
    resource: 'http://127.0.0.1/mcp',
    authorizationServers: [ISSUER],
    verifier,
    scopesSupported: ['files:read', 'files:write'],
    resourceName: 'Test files',
  };
}

async function post(url, message, token) {
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': message.method,
  };
  if (message.params.name !== undefined) headers['mcp-name'] = message.params.name;
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(message) });
  return { status: response.status, challenge: response.headers.get('www-authenticate'), text: await response.text() };
}

const call = (name, args = {}) => request(1, 'tools/call', { name, arguments: args });

test('401 with a challenge, the metadata document, 403 on a tool scope, claims in the handler', async () => {
  const server = protectedServer();
  const { address, served } = await listen(server, auth());
  try {
    const url = address.url;
    const none = await post(url, call('whoami'));
    assert.equal(none.status, 401);
    assert.match(none.challenge, /^Bearer /);
    // Derived from the resource URL, not from the request's Host.
    assert.match(none.challenge, /resource_metadata="http:\/\/127\.0\.0\.1\/\.well-known\/oauth-protected-resource\/mcp"/);

    for (const token of ['nonsense', 'elsewhere', 'expired']) {
      const bad = await post(url, call('whoami'), token);
      assert.equal(bad.status, 401, token);
      assert.match(bad.challenge, /error="invalid_token"/, token);
    }
    assert.equal((await post(url, call('whoami'), 'boom')).status, 503);

    const metadata = await (await fetch(`http://127.0.0.1:${address.port}/.well-known/oauth-protected-resource/mcp`)).json();
    assert.equal(metadata.resource, 'http://127.0.0.1/mcp');
    assert.deepEqual(metadata.authorization_servers, [ISSUER]);
    assert.deepEqual(metadata.scopes_supported, ['files:read', 'files:write']);
    assert.equal(metadata.resource_name, 'Test files');

    const refused = await post(url, call('delete_file'), 'reader');
    assert.equal(refused.status, 403);
    assert.match(refused.challenge, /error="insufficient_scope"/);
    assert.match(refused.challenge, /files:write/);
    const allowed = await post(url, call('delete_file'), 'writer');
    assert.equal(allowed.status, 200, allowed.text);
    assert.match(allowed.text, /deleted/);

    const read = await post(url, request(2, 'resources/read', { uri: 'file:///secret.txt' }), 'reader');
    assert.equal(read.status, 403);
    assert.match(read.challenge, /secrets/);
    const prompt = await post(url, request(3, 'prompts/get', { name: 'greet' }), 'reader');
    assert.equal(prompt.status, 403);
    assert.match(prompt.challenge, /prompts/);

    const client = await Client.http(url, { headers: { authorization: 'Bearer reader' } });
    try {
      const seen = JSON.parse((await client.callTool('whoami')).content[0].text);
      assert.equal(seen.subject, 'alice');
      assert.equal(seen.clientId, 'app');
      assert.deepEqual(seen.scopes, ['files:read']);
      assert.ok(seen.expiresAt > Date.now() / 1000);
      assert.equal(seen.extra, 42);
    } finally {
      await client.close();
    }
  } finally {
    server.close();
    await served;
  }
});

test('a sync verifier, and fetchHandler with auth', async () => {
  const server = protectedServer();
  const handler = server.fetchHandler({
    path: '/mcp',
    allowedHosts: ['localhost'],
    auth: auth((token, { resource }) => {
      if (token !== 'good') throw new InvalidToken('no');
      return { sub: 'carol', aud: resource };
    }),
  });
  const send = (token) =>
    handler(
      new Request('http://localhost/mcp', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': 'whoami',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify(call('whoami')),
      }),
    );
  const refused = await send('bad');
  assert.equal(refused.status, 401);
  assert.match(refused.headers.get('www-authenticate'), /invalid_token/);
  const answered = await send('good');
  assert.equal(answered.status, 200);
  assert.match(await answered.text(), /carol/);
  const metadata = await handler(new Request('http://localhost/.well-known/oauth-protected-resource/mcp'));
  assert.equal(metadata.status, 200);
  assert.equal((await metadata.json()).resource, 'http://127.0.0.1/mcp');
});

test('JwtVerifier durations must be non-negative numbers of seconds', () => {
  // 0 turns the verified-token cache off; a negative duration is refused.
  new JwtVerifier({ issuer: ISSUER, audience: 'http://x/mcp', cacheTtlSeconds: 0, leewaySeconds: 0 });
  assert.throws(
    () => new JwtVerifier({ issuer: ISSUER, audience: 'http://x/mcp', cacheTtlSeconds: -1 }),
    /cacheTtlSeconds/,
  );
  assert.throws(
    () => new JwtVerifier({ issuer: ISSUER, audience: 'http://x/mcp', leewaySeconds: -1 }),
    /leewaySeconds/,
  );
});

test('JwtVerifier refuses a token that is not a JWT (no key fetch needed)', async () => {
  const server = protectedServer();
  const verifier = new JwtVerifier({ issuer: ISSUER, audience: 'http://127.0.0.1/mcp', jwksUri: 'http://127.0.0.1:9/jwks' });
  const { address, served } = await listen(server, auth(verifier));
  try {
    const bad = await post(address.url, call('whoami'), 'not-a-jwt');
    assert.equal(bad.status, 401);
    assert.match(bad.challenge, /invalid_token/);
  } finally {
    server.close();
    await served;
  }
});

test('bad options are refused at once', () => {
  const server = protectedServer();
  assert.throws(() => server.fetchHandler({ auth: { ...auth(), verifier: 42 } }), TypeError);
  assert.throws(() => server.tool('x', { scopes: 'files' }, () => ''), TypeError);
});

test('ctx.auth is absent without protection', async () => {
  const server = new Server({ name: 'open', version: '1.0.0' }).tool('who', (_a, ctx) => String(ctx.auth));
  const handler = server.fetchHandler({ path: '/mcp', allowedHosts: ['localhost'] });
  const answered = await handler(
    new Request('http://localhost/mcp', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'who',
      },
      body: JSON.stringify(request(1, 'tools/call', { name: 'who', arguments: {} })),
    }),
  );
  assert.match(await answered.text(), /"(undefined|null)"/);
});
