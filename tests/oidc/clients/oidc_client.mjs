// The Node client of the OpenID provider test (core/tests/oidc_provider.rs):
// logs in to a protected ferromcp server with `Client.http(url, { oauth })`,
// calls a tool and prints its result as JSON on stdout. Environment as for
// oidc_client.py (OIDC_SERVER, OIDC_CA, OIDC_GRANT, OIDC_CLIENT_ID,
// OIDC_CLIENT_SECRET, OIDC_ISSUER, OIDC_REDIRECT, OIDC_TOOL); the authorize
// callback of the authorization code grant runs ../browser.sh, the test's
// browser, and returns the redirect it prints.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from 'ferromcp';

const env = process.env;
const browser = fileURLToPath(new URL('../browser.sh', import.meta.url));

async function browse(url) {
  const { stdout } = await promisify(execFile)(browser, [url]);
  return stdout.trim();
}

function oauth() {
  switch (env.OIDC_GRANT) {
    case 'client-credentials':
      return { grant: 'clientCredentials', clientId: env.OIDC_CLIENT_ID, clientSecret: env.OIDC_CLIENT_SECRET };
    case 'code':
      return {
        redirectUri: env.OIDC_REDIRECT,
        authorize: browse,
        preRegistered: [{ issuer: env.OIDC_ISSUER, clientId: env.OIDC_CLIENT_ID }],
      };
    default:
      throw new Error(`unknown OIDC_GRANT ${JSON.stringify(env.OIDC_GRANT)}`);
  }
}

const client = await Client.http(env.OIDC_SERVER, {
  caCerts: [env.OIDC_CA],
  oauth: oauth(),
  timeout: 30_000,
});
try {
  const result = await client.callTool(env.OIDC_TOOL ?? 'whoami', {});
  console.log(JSON.stringify(result));
} finally {
  await client.close();
}
