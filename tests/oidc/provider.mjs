// A real OpenID provider for core/tests/oidc_provider.rs: oidc-provider on
// loopback over TLS (certificate and key from the test, made at test time:
// OIDC_CERT, OIDC_KEY), a confidential client `service` / `s3cret` for the
// client_credentials grant, a public client `app` for the authorization
// code grant with PKCE (redirect URI OIDC_REDIRECT), and resource
// indicators (RFC 8707) issuing JWT access tokens (ES256) whose audience is
// the requested resource. A token asking for the scope `short` lives 2
// seconds (the expiry test). The user interaction (login, consent) is
// answered at once for the user `alice`, so the test drives the browser's
// part with plain redirects. Prints `ISSUER <url>` once listening; runs
// until killed or until its stdin closes (the test that started it ended).
import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import Provider from 'oidc-provider';

// The test holds our stdin open for as long as it needs us; when it ends,
// however it ends, the pipe closes and we go too.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();

const server = https.createServer({
  key: fs.readFileSync(process.env.OIDC_KEY),
  cert: fs.readFileSync(process.env.OIDC_CERT),
});

// Signing keys made now: nothing secret is checked in.
function jwk(type, options, kid) {
  const { privateKey } = crypto.generateKeyPairSync(type, options);
  return { ...privateKey.export({ format: 'jwk' }), kid, use: 'sig' };
}
const keys = [
  jwk('rsa', { modulusLength: 2048 }, 'rs-1'),
  jwk('ec', { namedCurve: 'P-256' }, 'es-1'),
];

const SCOPES = 'notes:read notes:write short';

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  const issuer = `https://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: 'service',
        client_secret: 's3cret',
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
        token_endpoint_auth_method: 'client_secret_basic',
        scope: SCOPES,
      },
      {
        client_id: 'app',
        grant_types: ['authorization_code'],
        response_types: ['code'],
        redirect_uris: [process.env.OIDC_REDIRECT || 'http://127.0.0.1:8765/callback'],
        token_endpoint_auth_method: 'none',
        scope: SCOPES,
      },
    ],
    jwks: { keys },
    scopes: SCOPES.split(' '),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resource) => ({
          scope: SCOPES,
          audience: resource,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        }),
      },
    },
    ttl: {
      ClientCredentials: (ctx, token) => (String(token.scope || '').split(' ').includes('short') ? 2 : 600),
    },
  });
  // The login and consent pages, answered without a user: `alice` logs in
  // and grants what the client asked for.
  provider.use(async (ctx, next) => {
    if (!/^\/interaction\/[^/]+$/.test(ctx.path)) {
      return next();
    }
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    const { prompt, params } = details;
    let result;
    if (prompt.name === 'login') {
      result = { login: { accountId: 'alice' } };
    } else {
      const grant = details.grantId
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({ accountId: details.session.accountId, clientId: params.client_id });
      // The scopes are both OpenID scopes of the provider (`scopes`) and
      // scopes of the resource: both consents are needed.
      if (params.scope) {
        grant.addOIDCScope(params.scope);
      }
      const resources = [params.resource].flat().filter(Boolean);
      for (const resource of resources) {
        grant.addResourceScope(resource, params.scope || '');
      }
      result = { consent: { grantId: await grant.save() } };
    }
    ctx.respond = false;
    await provider.interactionFinished(ctx.req, ctx.res, result, { mergeWithLastSubmission: true });
  });
  server.on('request', provider.callback());
  console.log(`ISSUER ${issuer}`);
});
