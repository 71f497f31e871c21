// Compiled (never run) by test/types.test.mjs: typed usage of protected
// servers (`auth`, `scopes`, `ctx.auth`, JwtVerifier, InvalidToken). Each
// misuse carries an expect-error directive, so the typings must reject it.

import { Server, JwtVerifier, InvalidToken, type AuthOptions, type AuthInfo } from 'ferromcp';

const server = new Server({ name: 'typed-auth', version: '1.0.0' });
server.tool('whoami', { scopes: ['files:read'] }, (_args, ctx) => {
  const info: AuthInfo | null | undefined = ctx.auth;
  const subject: string | undefined = info?.subject;
  const scopes: string[] | undefined = info?.scopes;
  return `${subject} ${scopes?.join(' ')} ${info?.expiresAt} ${String(info?.claims['extra'])}`;
});
server.resource('file:///a', { scopes: ['files:read'] }, () => 'a');
server.prompt('p', { scopes: ['prompts'] }, () => 'p');
// @ts-expect-error: scopes is a list
server.tool('bad', { scopes: 'files:read' }, () => '');

const jwt = new JwtVerifier({ issuer: 'https://auth.example.com', audience: 'https://mcp.example.com/mcp', leewaySeconds: 30 });
const auth: AuthOptions = {
  resource: 'https://mcp.example.com/mcp',
  authorizationServers: ['https://auth.example.com'],
  verifier: jwt,
  scopesSupported: ['files:read'],
};
await server.serveHttp({ port: 0, auth });
await server.serveHttp({
  auth: {
    resource: 'http://127.0.0.1:8000/mcp',
    authorizationServers: ['https://auth.example.com'],
    verifier: async (token, { resource }) => {
      if (token !== 'ok') throw new InvalidToken('no');
      return { sub: 'alice', aud: resource };
    },
  },
});
server.nodeHandler({ path: '/mcp', auth });
// @ts-expect-error: a verifier is a JwtVerifier or a function
server.fetchHandler({ auth: { ...auth, verifier: 'secret' } });
// @ts-expect-error: the resource is required
const missing: AuthOptions = { authorizationServers: [], verifier: jwt };
void missing;
