// The conformance fixture client, in Node: `node everything-client.mjs URL`.
//
// The official suite names the scenario in MCP_CONFORMANCE_SCENARIO, the wire
// revision in MCP_CONFORMANCE_PROTOCOL_VERSION and scenario data in
// MCP_CONFORMANCE_CONTEXT (JSON); the URL is the last argument. The same
// contract as examples/rust/src/bin/everything-client.rs.
import { Client, LEGACY_PROTOCOL_VERSIONS, PROTOCOL_VERSION, headlessAuthorize } from 'ferromcp';

/**
 * A plausible value of a property's type (its first enum value if any).
 * @param {any} prop
 */
function placeholder(prop) {
  if (Array.isArray(prop?.enum) && prop.enum.length > 0) return prop.enum[0];
  /** @type {Record<string, unknown>} */
  const byType = { integer: 1, number: 1.0, boolean: true, array: [], object: {} };
  return byType[String(prop?.type)] ?? 'test';
}

/**
 * Fills a form: each field's default, else a placeholder (the suite checks
 * that defaults are applied).
 * @param {any} schema
 * @returns {Record<string, unknown>}
 */
function fillFromSchema(schema) {
  const properties = schema?.properties;
  if (properties === null || typeof properties !== 'object') return {};
  return Object.fromEntries(
    Object.entries(properties).map(([name, prop]) => [name, prop?.default ?? placeholder(prop)]),
  );
}

/**
 * Every required argument of a tool, from its default or a placeholder.
 * @param {{ inputSchema: any }} tool
 */
function argumentsFor(tool) {
  const required = tool.inputSchema?.required ?? [];
  return Object.fromEntries(
    Object.entries(fillFromSchema(tool.inputSchema)).filter(([k]) => required.includes(k)),
  );
}

/**
 * @template T
 * @param {AsyncIterable<T>} iterable
 * @returns {Promise<T[]>}
 */
async function all(iterable) {
  /** @type {T[]} */
  const items = [];
  for await (const item of iterable) items.push(item);
  return items;
}

/** @param {Client} client */
async function callEachListedTool(client) {
  for await (const tool of client.tools()) {
    const result = await client.callTool(tool.name, argumentsFor(tool));
    console.error(`called ${tool.name}: isError=${result.isError}`);
  }
}

/**
 * The client ID metadata document URL the suite's authorization server
 * accepts as a `client_id` (it never fetches it).
 */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';

/**
 * A value the scenario's context must carry.
 * @param {any} context
 * @param {string} key
 * @returns {string}
 */
function need(context, key) {
  const value = context?.[key];
  if (typeof value !== 'string') throw new Error(`no ${key} in the context`);
  return value;
}

/**
 * OAuth for an `auth/*` scenario, as the Rust fixture sets it up. The
 * suite's mock authorization server approves at once, so the "user
 * interaction" requests the authorization URL and hands back its redirect
 * (`headlessAuthorize`), as a headless client does; pre-registered
 * credentials come from the scenario's context.
 * @param {string} scenario
 * @param {any} context
 * @returns {import('ferromcp').OAuthOptions}
 */
function oauthFor(scenario, context) {
  switch (scenario) {
    case 'auth/client-credentials-basic':
      return {
        grant: 'clientCredentials',
        clientId: need(context, 'client_id'),
        clientSecret: context?.client_secret,
      };
    case 'auth/client-credentials-jwt':
      return {
        grant: 'clientCredentials',
        clientId: need(context, 'client_id'),
        privateKeyPem: need(context, 'private_key_pem'),
      };
    case 'auth/wif-jwt-bearer': {
      const jwt = need(context, 'valid_jwt');
      return { grant: 'jwtBearer', clientId: need(context, 'client_id'), assertion: () => jwt };
    }
    case 'auth/enterprise-managed-authorization':
      return {
        grant: 'enterpriseManaged',
        clientId: need(context, 'client_id'),
        clientSecret: need(context, 'client_secret'),
        idp: {
          tokenEndpoint: need(context, 'idp_token_endpoint'),
          clientId: need(context, 'idp_client_id'),
          idToken: need(context, 'idp_id_token'),
        },
      };
    default:
      return {
        redirectUri: 'http://localhost:3000/callback',
        authorize: headlessAuthorize,
        clientName: 'ferromcp-everything-client-node',
        clientMetadataUrl: CLIENT_METADATA_URL,
        preRegistered:
          typeof context?.client_id === 'string'
            ? [{ issuer: context.issuer, clientId: context.client_id, clientSecret: context.client_secret }]
            : [],
        // The DPoP extension scenarios: ask for key-bound tokens.
        dpop: scenario.startsWith('auth/dpop'),
      };
  }
}

/**
 * @param {string} scenario
 * @param {string} url
 * @param {string} version
 * @param {any} context
 */
async function run(scenario, url, version, context) {
  // The suite names the wire: the initialize era, or a stateless revision.
  const legacy = LEGACY_PROTOCOL_VERSIONS.includes(version);
  const client = await Client.http(url, {
    name: 'ferromcp-everything-client-node',
    version: '0.1.0',
    protocolVersion: legacy ? undefined : version,
    era: legacy ? 'legacy' : 'modern',
    onElicitation: async (params) => ({
      action: 'accept',
      content: fillFromSchema('requestedSchema' in params ? params.requestedSchema : {}),
    }),
    onSampling: (params) => {
      const first = /** @type {any} */ (params.messages?.[0]?.content);
      return {
        role: 'assistant',
        content: { type: 'text', text: `Answer to: ${first?.text ?? ''}` },
        model: 'ferromcp-conformance-model',
        stopReason: 'endTurn',
      };
    },
    onRoots: () => ({ roots: [{ uri: 'file:///test/root', name: 'Test Root' }] }),
    oauth: scenario.startsWith('auth/') ? oauthFor(scenario, context) : undefined,
  });
  try {
    if (scenario.startsWith('auth/')) {
      // Every authorization scenario ends the same way once logged in:
      // list the tools and call the first (`test-tool`).
      const [first] = await all(client.tools());
      if (!first) throw new Error('the server lists no tools');
      await client.callTool(first.name, argumentsFor(first));
      return;
    }
    switch (scenario) {
      case 'initialize':
      case 'json-schema-ref-no-deref':
        await all(client.tools());
        break;
      case 'elicitation-sep1034-client-defaults':
        await all(client.tools());
        await client.callTool('test_client_elicitation_defaults');
        break;
      case 'sse-retry':
        await all(client.tools());
        await client.callTool('test_reconnection');
        break;
      case 'tools_call':
        await all(client.tools());
        await client.callTool('add_numbers', { a: 5, b: 3 });
        break;
      case 'request-metadata':
        await client.discover();
        await callEachListedTool(client);
        break;
      case 'sep-2322-client-request-state':
        await all(client.tools());
        for (const name of [
          'test_mrtr_echo_state',
          'test_mrtr_no_state',
          'test_mrtr_unrelated',
          'test_mrtr_no_result_type',
        ]) {
          await client.callTool(name);
        }
        break;
      case 'http-standard-headers': {
        const [tool] = await all(client.tools());
        if (tool) await client.callTool(tool.name, argumentsFor(tool));
        const [resource] = await all(client.resources());
        if (resource) await client.readResource(resource.uri);
        const [prompt] = await all(client.prompts());
        if (prompt) {
          const args = Object.fromEntries((prompt.arguments ?? []).map((a) => [a.name, 'test']));
          await client.getPrompt(prompt.name, args);
        }
        break;
      }
      case 'http-custom-headers':
        await all(client.tools());
        for (const call of context?.toolCalls ?? []) {
          await client.callTool(call.name, call.arguments ?? {});
        }
        break;
      case 'http-invalid-tool-headers':
        await callEachListedTool(client);
        break;
      case 'json-schema-2020-12-preservation': {
        const tools = await all(client.tools());
        const focal = tools.find((t) => t.name === 'json_schema_2020_12_tool');
        if (!focal) throw new Error('json_schema_2020_12_tool not listed');
        await client.callTool('json_schema_echo', { schema: focal.inputSchema });
        break;
      }
      // The skills extension (SEP-2640): listing reads no file.
      case 'sep-2640-client-no-prefetch':
        await all(client.skills());
        break;
      // Loading checks SKILL.md against the entry (digest, size,
      // frontmatter) and refuses it on a mismatch; only a verified skill's
      // other files are read, each checked too.
      case 'sep-2640-client-verify-digest':
      case 'sep-2640-client-verify-size':
      case 'sep-2640-client-verify-frontmatter':
        for (const skill of await all(client.skills())) {
          const loaded = await client.loadSkill(skill);
          const files = Array.isArray(skill.resources) ? skill.resources : [];
          for (const file of files.filter((f) => f.uri !== skill.uri)) await loaded.read(file.uri);
        }
        break;
      default:
        throw new Error(`unknown scenario ${JSON.stringify(scenario)}`);
    }
  } finally {
    await client.close();
  }
}

const url = process.argv.at(-1);
if (process.argv.length < 3 || url === undefined) {
  console.error('usage: everything-client.mjs URL (scenario in MCP_CONFORMANCE_SCENARIO)');
  process.exit(2);
}
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const version = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION ?? PROTOCOL_VERSION;
let context = null;
try {
  context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? 'null');
} catch {
  context = null;
}
try {
  await run(scenario, url, version, context);
} catch (error) {
  // The suite reads the exit status; stderr says why.
  console.error(`everything-client.mjs: scenario ${JSON.stringify(scenario)} failed: ${error}`);
  process.exitCode = 1;
}
