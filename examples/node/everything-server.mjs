#!/usr/bin/env node
// The conformance fixture server in Node: every tool, resource, prompt and
// completion the official MCP conformance suite calls, implemented for real
// on the public `ferromcp` API (the same fixture as
// examples/rust/src/bin/everything-server.rs).
//
//   node examples/node/everything-server.mjs PORT     # http://127.0.0.1:PORT/mcp
//   node examples/node/everything-server.mjs --stdio  # stdio
//
// The same handler code serves 2026-07-28 clients (the core replays a
// handler that asked for input, with the answers, when the client retries)
// and 2025-11-25 sessions (the core sends a live request to the client).

import { fileURLToPath } from 'node:url';

import { McpError, Server, ToolResult } from '../../bindings-node/index.mjs';

/** A 1x1 transparent PNG. */
const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
/** A silent, empty 44.1 kHz mono WAV. */
const WAV_BASE64 = 'UklGRiQAAABXQVZFZm10IBAAAAABAAEARKwAAIhYAQACABAAZGF0YQAAAAA=';

/** @typedef {import('../../bindings-node/index.mjs').CreateMessageParams} CreateMessageParams */
/** @typedef {import('../../bindings-node/index.mjs').ElicitFormParams} ElicitFormParams */

const noArgs = { type: 'object', properties: {} };
/** @param {...string} names */
const stringArgs = (...names) => ({
  type: 'object',
  properties: Object.fromEntries(names.map((n) => [n, { type: 'string' }])),
  required: names,
});
const nameSchema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** @param {string} prompt @returns {CreateMessageParams} */
const samplingParams = (prompt) => ({
  messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
  maxTokens: 100,
});
/**
 * The text of a sampling answer (`content` is one block or a list).
 * @param {{ content: any }} answer
 * @returns {string}
 */
const textOf = (answer) =>
  Array.isArray(answer.content)
    ? answer.content.map((/** @type {any} */ c) => c.text ?? '').filter(Boolean).join(' ')
    : (answer.content?.text ?? '');
/** @param {string} message @param {Record<string, unknown>} requestedSchema @returns {ElicitFormParams} */
const form = (message, requestedSchema) => ({ mode: 'form', message, requestedSchema });

const server = new Server({ name: 'ferromcp-everything-server', version: '0.1.0' });

// Content tools.
server.tool('test_simple_text', { description: 'Returns a simple text response', inputSchema: noArgs }, () =>
  'This is a simple text response for testing.',
);
server.tool('test_image_content', { description: 'Returns an image', inputSchema: noArgs }, () =>
  new ToolResult({ content: [{ type: 'image', data: PNG_BASE64, mimeType: 'image/png' }] }),
);
server.tool('test_audio_content', { description: 'Returns audio', inputSchema: noArgs }, () =>
  new ToolResult({ content: [{ type: 'audio', data: WAV_BASE64, mimeType: 'audio/wav' }] }),
);
server.tool('test_embedded_resource', { description: 'Returns an embedded resource', inputSchema: noArgs }, () =>
  new ToolResult({
    content: [
      {
        type: 'resource',
        resource: {
          uri: 'test://embedded-resource',
          mimeType: 'text/plain',
          text: 'This is an embedded resource content.',
        },
      },
    ],
  }),
);
server.tool(
  'test_multiple_content_types',
  { description: 'Returns text, an image and an embedded resource', inputSchema: noArgs },
  () =>
    new ToolResult({
      content: [
        'Multiple content types test:',
        { type: 'image', data: PNG_BASE64, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: {
            uri: 'test://mixed-content-resource',
            mimeType: 'application/json',
            text: '{"test":"data","value":123}',
          },
        },
      ],
    }),
);
server.tool('test_error_handling', { description: 'Always fails as a tool error', inputSchema: noArgs }, () => {
  throw new Error('This tool intentionally returns an error for testing');
});
server.tool('test_tool_with_progress', { description: 'Reports progress', inputSchema: noArgs }, async (_, ctx) => {
  for (const [i, step] of [0, 50, 100].entries()) {
    if (i > 0) await sleep(50);
    ctx.progress(step, 100, `step ${i + 1}`);
  }
  return 'Progress test completed';
});
server.tool('test_tool_with_logging', { description: 'Logs while it runs', inputSchema: noArgs }, async (_, ctx) => {
  for (const [i, message] of ['Tool execution started', 'Tool processing data', 'Tool execution completed'].entries()) {
    if (i > 0) await sleep(50);
    ctx.log('info', message, 'everything-server');
  }
  return 'Logging test completed';
});
server.tool(
  'test_logging_tool',
  { description: 'Logs only when the request asks for a log level', inputSchema: noArgs },
  (_, ctx) => (ctx.log('info', 'test_logging_tool ran') ? 'logged' : 'no log level requested'),
);
server.tool(
  'json_schema_2020_12_tool',
  {
    description: 'Carries a JSON Schema 2020-12 inputSchema',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: {
        address: {
          $anchor: 'addressDef',
          type: 'object',
          properties: { street: { type: 'string' }, city: { type: 'string' } },
        },
      },
      properties: {
        name: { type: 'string' },
        address: { $ref: '#/$defs/address' },
        contactMethod: { type: 'string', enum: ['phone', 'email'] },
        phone: { type: 'string' },
        email: { type: 'string' },
      },
      allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
      if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
      then: { required: ['phone'] },
      else: { required: ['email'] },
      additionalProperties: false,
    },
  },
  () => 'ok',
);
server.tool(
  'test_custom_header',
  {
    description: 'Mirrors its argument into the Mcp-Param-Value header',
    inputSchema: {
      type: 'object',
      properties: { value: { type: 'string', 'x-mcp-header': 'Value' } },
      required: ['value'],
    },
  },
  ({ value }) => `value: ${value}`,
);

// Tools that ask the client for input (live requests on 2025-11-25, input
// rounds on 2026-07-28).
server.tool('test_sampling', { description: "Asks the client's model", inputSchema: stringArgs('prompt') }, async ({ prompt }, ctx) => {
  const answer = await ctx.sample(samplingParams(prompt));
  return `LLM response: ${textOf(answer)}`;
});
server.tool('test_elicitation', { description: 'Asks the user', inputSchema: stringArgs('message') }, async ({ message }, ctx) => {
  const answer = await ctx.elicit(message, {
    type: 'object',
    properties: {
      username: { type: 'string', description: "User's response" },
      email: { type: 'string', description: "User's email address" },
    },
    required: ['username', 'email'],
  });
  return `User response: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`;
});
server.tool(
  'test_elicitation_sep1034_defaults',
  { description: 'Asks the user with a schema whose fields have defaults', inputSchema: noArgs },
  async (_, ctx) => {
    const answer = await ctx.elicit('Please review your profile', {
      type: 'object',
      properties: {
        name: { type: 'string', default: 'John Doe' },
        age: { type: 'integer', default: 30 },
        score: { type: 'number', default: 95.5 },
        status: { type: 'string', enum: ['active', 'inactive', 'pending'], default: 'active' },
        verified: { type: 'boolean', default: true },
      },
    });
    return `Elicitation result: ${JSON.stringify(answer)}`;
  },
);
server.tool(
  'test_elicitation_sep1330_enums',
  { description: 'Asks the user with every enum shape', inputSchema: noArgs },
  async (_, ctx) => {
    const answer = await ctx.elicit('Choose your options', {
      type: 'object',
      properties: {
        untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
        titledSingle: {
          type: 'string',
          oneOf: [
            { const: 'value1', title: 'First Option' },
            { const: 'value2', title: 'Second Option' },
            { const: 'value3', title: 'Third Option' },
          ],
        },
        legacyEnum: {
          type: 'string',
          enum: ['opt1', 'opt2', 'opt3'],
          enumNames: ['Option One', 'Option Two', 'Option Three'],
        },
        untitledMulti: { type: 'array', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
        titledMulti: {
          type: 'array',
          items: {
            anyOf: [
              { const: 'value1', title: 'First Choice' },
              { const: 'value2', title: 'Second Choice' },
              { const: 'value3', title: 'Third Choice' },
            ],
          },
        },
      },
    });
    return `Elicitation result: ${JSON.stringify(answer)}`;
  },
);
server.tool(
  'test_reconnection',
  { description: 'Closes its SSE connection mid-call; the result arrives on the resumed stream', inputSchema: noArgs },
  async (_, ctx) => {
    // Only the 2025-11-25 HTTP wire has resumable streams; elsewhere this
    // does nothing and the call simply completes.
    ctx.closeSseStream();
    await sleep(100);
    return 'Reconnection test completed';
  },
);
server.tool(
  'test_missing_capability',
  { description: "Needs the client's sampling capability", inputSchema: noArgs },
  async (_, ctx) => {
    // Without `sampling` the ask fails with -32021 naming it.
    const answer = await ctx.sample(samplingParams('Say hello'));
    return `Sampled: ${textOf(answer)}`;
  },
);
server.tool(
  'test_streaming_elicitation',
  { description: 'Streams a log line, then asks the user through an input request', inputSchema: noArgs },
  async (_, ctx) => {
    ctx.log('info', 'about to ask for confirmation');
    const answer = await ctx.elicit(
      form('Continue?', { type: 'object', properties: { ok: { type: 'boolean' } } }),
      { key: 'confirmation' },
    );
    return `answer: ${JSON.stringify(answer)}`;
  },
);

// Multi round-trip (input_required) tools, with the keys the suite expects.
server.tool(
  'test_input_required_result_elicitation',
  { description: "Asks for the user's name through an input request", inputSchema: noArgs },
  async (_, ctx) => {
    const answer = await ctx.elicit(form('What is your name?', nameSchema), { key: 'user_name' });
    return `Hello, ${answer.content?.name ?? 'stranger'}!`;
  },
);
server.tool(
  'test_input_required_result_sampling',
  { description: "Asks the client's model through an input request", inputSchema: noArgs },
  async (_, ctx) => {
    const answer = await ctx.sample(samplingParams('What is the capital of France?'), { key: 'capital_question' });
    return `The model answered: ${textOf(answer)}`;
  },
);
server.tool(
  'test_input_required_result_list_roots',
  { description: "Asks for the client's roots through an input request", inputSchema: noArgs },
  async (_, ctx) => {
    const { roots = [] } = await ctx.listRoots({ key: 'client_roots' });
    return `Client roots: ${roots.map((r) => r.uri).join(', ')}`;
  },
);
server.tool(
  'test_input_required_result_request_state',
  { description: 'Carries sealed request state across rounds', inputSchema: noArgs },
  async (_, ctx) => {
    const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] };
    const answer = await ctx.elicit(form('Confirm?', schema), { key: 'confirm' });
    // Reaching here means the requestState verified (integrity, method,
    // params digest and expiry are checked by the core).
    return `state-ok: confirmed=${JSON.stringify(answer.content?.ok)}`;
  },
);
server.tool(
  'test_input_required_result_multiple_inputs',
  { description: 'Asks for three inputs in one round', inputSchema: noArgs },
  async (_, ctx) => {
    // Asked together, so the three land in the same round.
    const [name, greeting, roots] = await Promise.all([
      ctx.elicit(form('What is your name?', nameSchema), { key: 'user_name' }),
      ctx.sample(samplingParams('Write a short greeting.'), { key: 'greeting' }),
      ctx.listRoots({ key: 'client_roots' }),
    ]);
    return `name=${name.content?.name ?? ''}, greeting=${textOf(greeting)}, roots=${roots.roots?.length ?? 0}`;
  },
);
server.tool(
  'test_input_required_result_multi_round',
  { description: 'Asks for input over two rounds', inputSchema: noArgs },
  async (_, ctx) => {
    const schema = { type: 'object', properties: { value: { type: 'string' } } };
    const first = await ctx.elicit(form('Step 1: enter a value', schema), { key: 'step1' });
    const second = await ctx.elicit(form('Step 2: enter another value', schema), { key: 'step2' });
    return `step1=${JSON.stringify(first.content ?? null)}, step2=${JSON.stringify(second.content ?? null)}`;
  },
);
server.tool(
  'test_input_required_result_tampered_state',
  { description: 'Rejects tampered request state', inputSchema: noArgs },
  async (_, ctx) => {
    await ctx.elicit(form('Confirm?', { type: 'object', properties: { ok: { type: 'boolean' } } }), { key: 'confirm' });
    return 'state verified';
  },
);
server.tool(
  'test_input_required_result_capabilities',
  { description: 'Asks only for input the client declared it can give', inputSchema: noArgs },
  async (_, ctx) => {
    const answer =
      'elicitation' in ctx.clientCapabilities
        ? await ctx.elicit(form('What is your name?', nameSchema), { key: 'user_name' })
        : await ctx.sample(samplingParams('What is the capital of France?'), { key: 'capital_question' });
    return `answer: ${JSON.stringify(answer)}`;
  },
);

// Tools whose calls change the tool and prompt lists (the core announces
// list_changed on every registration change).
let dynamicTool = false;
server.tool('test_trigger_tool_change', { description: 'Adds or removes a tool', inputSchema: noArgs }, () => {
  dynamicTool = !dynamicTool;
  if (!dynamicTool) {
    server.removeTool('test_dynamic_tool');
    return 'removed test_dynamic_tool';
  }
  server.tool('test_dynamic_tool', { description: 'Added at run time', inputSchema: noArgs }, () => 'dynamic');
  return 'added test_dynamic_tool';
});
let dynamicPrompt = false;
server.tool('test_trigger_prompt_change', { description: 'Adds or removes a prompt', inputSchema: noArgs }, () => {
  dynamicPrompt = !dynamicPrompt;
  if (!dynamicPrompt) {
    server.removePrompt('test_dynamic_prompt');
    return 'removed test_dynamic_prompt';
  }
  server.prompt('test_dynamic_prompt', { description: 'Added at run time' }, () => 'dynamic');
  return 'added test_dynamic_prompt';
});

// Resources.
server.resource(
  'test://static-text',
  { name: 'Static text resource', description: 'A static text resource for testing', mimeType: 'text/plain' },
  () => 'This is the content of the static text resource.',
);
server.resource(
  'test://static-binary',
  { name: 'Static binary resource', description: 'A static binary resource (a PNG image)', mimeType: 'image/png' },
  () => Buffer.from(PNG_BASE64, 'base64'),
);
server.resource(
  'test://watched-resource',
  { name: 'Watched resource', description: 'A resource that can be subscribed to', mimeType: 'text/plain' },
  () => 'Watched resource content',
);
server.resource(
  'test://template/{id}/data',
  {
    name: 'Template resource',
    description: 'A resource template with an id parameter',
    mimeType: 'application/json',
    complete: { id: (value) => ['1', '2', '3', '123'].filter((id) => id.startsWith(value)) },
  },
  ({ variables: { id } }) => JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
);

// Prompts, with completion of their arguments.
const WORDS = ['paris', 'park', 'party', 'pasta', 'hello', 'world'];
/** @param {string} value */
const completeWord = (value) => {
  const values = WORDS.filter((w) => w.startsWith(value));
  return { values, total: values.length, hasMore: false };
};
server.prompt('test_simple_prompt', { description: 'A simple prompt without arguments' }, () =>
  'This is a simple prompt for testing.',
);
server.prompt(
  'test_prompt_with_arguments',
  {
    description: 'A prompt with required arguments',
    arguments: [
      { name: 'arg1', description: 'First test argument', required: true, complete: completeWord },
      { name: 'arg2', description: 'Second test argument', required: true, complete: completeWord },
    ],
  },
  ({ arg1, arg2 }) => `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`,
);
server.prompt(
  'test_prompt_with_embedded_resource',
  {
    description: 'A prompt that embeds a resource',
    arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
  },
  ({ resourceUri }) => [
    {
      role: 'user',
      content: {
        type: 'resource',
        resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
      },
    },
    { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
  ],
);
server.prompt('test_prompt_with_image', { description: 'A prompt that includes an image' }, () => [
  { role: 'user', content: { type: 'image', data: PNG_BASE64, mimeType: 'image/png' } },
  { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
]);
server.prompt(
  'test_input_required_result_prompt',
  { description: 'A prompt that asks for context first' },
  async (_, ctx) => {
    const schema = { type: 'object', properties: { context: { type: 'string' } }, required: ['context'] };
    const answer = await ctx.elicit(form('What context should the prompt use?', schema), { key: 'user_context' });
    return `Prompt with context: ${answer.content?.context ?? ''}`;
  },
);

// The tasks extension's fixtures (SEP-2663; the suite's tasks-* scenarios).
server.tool('greet', { description: 'Says hello (never a task)', inputSchema: nameSchema }, ({ name }) => `Hello, ${name}!`);
server.tool(
  'slow_compute',
  {
    description: 'Sleeps `seconds` seconds, then answers (a task when the client can take one)',
    inputSchema: { type: 'object', properties: { seconds: { type: 'number', minimum: 0 }, label: { type: 'string' } } },
    task: true,
  },
  async ({ seconds = 1, label = 'job' }, ctx) => {
    // Stops early once cancelled (tasks/cancel aborts the signal).
    await new Promise((/** @type {(value?: unknown) => void} */ resolve) => {
      const timer = setTimeout(resolve, Math.min(seconds, 3600) * 1000);
      ctx.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    return `Computed ${label} after ${seconds} s`;
  },
);
server.tool(
  'failing_job',
  { description: 'Fails as a tool after about a second (only as a task)', inputSchema: noArgs, task: 'required' },
  async () => {
    await sleep(1000);
    throw new Error('The job failed: the input could not be processed');
  },
);
server.tool(
  'protocol_error_job',
  { description: 'Ends with a JSON-RPC error (a failed task)', inputSchema: noArgs, task: true },
  async () => {
    await sleep(100);
    throw new McpError('The job hit an internal error', { code: -32603 });
  },
);
server.tool(
  'confirm_delete',
  { description: 'Asks the user to confirm, then deletes (pretend)', inputSchema: stringArgs('filename'), task: true },
  async ({ filename }, ctx) => {
    const schema = { type: 'object', properties: { confirm: { type: 'boolean' } } };
    const answer = await ctx.elicit(form(`Delete ${filename}?`, schema));
    return answer.action === 'accept' ? `Deleted ${filename}` : `Kept ${filename}`;
  },
);
server.tool(
  'multi_input',
  { description: 'Asks two questions at once, then answers with both', inputSchema: noArgs, task: true },
  async (_, ctx) => {
    const schema = { type: 'object', properties: { value: { type: 'string' } } };
    const [first, second] = await Promise.all([
      ctx.elicit(form('First value?', schema)),
      ctx.elicit(form('Second value?', schema)),
    ]);
    return `Got ${JSON.stringify(first.content)} and ${JSON.stringify(second.content)}`;
  },
);
server.tool(
  'test_tool_with_task',
  {
    description: 'Asks for a name (multi round-trip), then finishes as a task',
    inputSchema: noArgs,
    task: 'required',
    taskStart: 'handler',
  },
  async (_, ctx) => {
    const answer = await ctx.elicit(form('What is your name?', nameSchema));
    const name = answer.content?.name ?? 'stranger';
    await ctx.startTask();
    await sleep(200);
    return `Hello, ${name}! (finished as a task)`;
  },
);

// The skills extension's fixture (SEP-2640): examples/skills.
server.addSkills(fileURLToPath(new URL('../skills', import.meta.url)));

function usage() {
  console.error('usage: node examples/node/everything-server.mjs PORT | --stdio');
  process.exit(2);
}

const args = process.argv.slice(2);
if (args.length !== 1) usage();
if (args[0] === '--stdio') {
  await server.serveStdio();
} else {
  const port = Number(args[0]);
  if (!Number.isInteger(port) || port < 0 || port > 65535) usage();
  await server.serveHttp({ port });
}
