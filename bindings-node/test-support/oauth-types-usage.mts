// Typed usage of the OAuth typings (index.d.ts -> lib/oauth.d.ts): every
// grant of `Client.http(url, { oauth })`, a token store, LoopbackRedirect
// and headlessAuthorize, type-checked by `make lint-node` (tsc --strict).
// Never run.
import {
  Client,
  LoopbackRedirect,
  headlessAuthorize,
  type OAuthClientCredentials,
  type OAuthOptions,
  type OAuthTokens,
  type TokenStore,
} from 'ferromcp';

export async function usage(): Promise<void> {
  const tokens = new Map<string, OAuthTokens>();
  const clients = new Map<string, OAuthClientCredentials>();
  const store: TokenStore = {
    loadTokens: (resource) => tokens.get(resource),
    saveTokens: (resource, saved) => void tokens.set(resource, saved),
    clearTokens: async (resource) => void tokens.delete(resource),
    loadClient: async (issuer) => clients.get(issuer) ?? null,
    saveClient: (issuer, client) => void clients.set(issuer, client),
  };
  const registeredFor: string[] | undefined = clients.get('https://as.example')?.redirectUris;
  void registeredFor;
  const loopback: LoopbackRedirect = await LoopbackRedirect.bind({ port: 0, path: '/callback' });
  const desktop: OAuthOptions = {
    redirectUri: loopback.redirectUri,
    authorize: async (url: string) => {
      console.log(`open ${url}`);
      return loopback.wait({ timeout: 60_000 });
    },
    store,
    dpop: true,
    clientName: 'demo',
    clientMetadataUrl: new URL('https://app.example/client.json'),
    preRegistered: [{ issuer: 'https://as.example', clientId: 'id', clientSecret: 's' }],
    offlineAccess: false,
    maxAuthorizations: 2,
  };
  const client: Client = await Client.http('https://mcp.example/mcp', { oauth: desktop });
  loopback.close();
  await Client.http('https://mcp.example/mcp', {
    oauth: { redirectUri: 'http://localhost:3000/callback', authorize: headlessAuthorize },
  });
  await Client.http('https://mcp.example/mcp', {
    oauth: { grant: 'clientCredentials', clientId: 'svc', clientSecret: 'pw' },
  });
  await Client.http('https://mcp.example/mcp', {
    oauth: { grant: 'clientCredentials', clientId: 'svc', privateKeyPem: '/etc/keys/svc.pem' },
  });
  await Client.http('https://mcp.example/mcp', {
    oauth: { grant: 'jwtBearer', clientId: 'wl', assertion: ({ issuer, resource }) => `${issuer} ${resource}` },
  });
  await Client.http('https://mcp.example/mcp', {
    oauth: {
      grant: 'enterpriseManaged',
      clientId: 'c',
      clientSecret: 's',
      idp: { tokenEndpoint: 'https://idp.example/token', clientId: 'idp-c', idToken: 'eyJ...' },
    },
  });
  // A command line tool's commands after its `login`: stored tokens only.
  await Client.http('https://mcp.example/mcp', {
    oauth: { storedOnly: 'run `demo login` first', store, maxAuthorizations: 1 },
  });
  const redirect: string = await headlessAuthorize(new URL('http://127.0.0.1:9000/authorize'));
  void redirect;
  await client.close();
}

export function rejected(): void {
  // @ts-expect-error: the authorization code grant needs `authorize`.
  const missing: OAuthOptions = { redirectUri: 'http://localhost/cb' };
  // @ts-expect-error: client credentials need a `clientId`.
  const noId: OAuthOptions = { grant: 'clientCredentials' };
  // @ts-expect-error: a stored-only client needs the store of the login.
  const noStore: OAuthOptions = { storedOnly: 'log in first' };
  void missing;
  void noId;
  void noStore;
}
