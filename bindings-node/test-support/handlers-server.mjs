// A stdio server whose tools exercise every way a JS handler can finish:
// plain values, promises, throws, rejections, McpError, non-JSON values.

import { Server, McpError, RequestContext } from '../index.mjs';

class QuotaError extends Error {
  constructor(message) {
    super(message);
    this.name = 'QuotaError';
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const object = { type: 'object' };
const text = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };

const server = new Server({ name: 'handlers', version: '0.0.1' });
server
  .tool('echo', { inputSchema: text }, ({ text }) => text)
  .tool('async_echo', { inputSchema: text }, async ({ text }) => {
    await sleep(5);
    return `async ${text}`;
  })
  .tool('promise_echo', { inputSchema: text }, ({ text }) => sleep(1).then(() => text.toUpperCase()))
  .tool('throws', { inputSchema: object }, () => {
    throw new TypeError('boom');
  })
  .tool('rejects', { inputSchema: object }, async () => {
    await sleep(1);
    throw new QuotaError('over quota');
  })
  .tool('rejects_plain', { inputSchema: object }, () => Promise.reject('plain reason'))
  .tool('throws_string', { inputSchema: object }, () => {
    throw 'plain';
  })
  .tool('mcp_error', { inputSchema: object }, () => {
    throw new McpError('nope', { code: -32002, data: { why: 'missing' } });
  })
  .tool(
    'structured',
    {
      inputSchema: object,
      outputSchema: {
        type: 'object',
        properties: { greeting: { type: 'string' }, big: { type: 'integer' }, half: { type: 'number' } },
        required: ['greeting', 'big', 'half'],
      },
    },
    () => ({ greeting: 'hi', big: 2 ** 40, half: 0.5 }),
  )
  .tool('nothing', { inputSchema: object }, () => undefined)
  .tool('not_json', { inputSchema: object }, () => () => 1)
  .tool('context', { inputSchema: object }, (_args, ctx) => ({
    requestId: ctx.requestId,
    method: ctx.method,
    protocolVersion: ctx.protocolVersion,
    cancelled: ctx.cancelled,
    isContext: ctx instanceof RequestContext,
    progressSent: ctx.progress(1, 2),
  }))
  .tool('progress', { inputSchema: object }, async (_args, ctx) => {
    const first = ctx.progress(1, 2, 'halfway');
    await sleep(1);
    const second = ctx.progress(2, 2);
    const logged = ctx.log('warning', { note: 'almost done' }, 'progress-tool');
    return { first, second, logged };
  })
  .tool('late_context', { inputSchema: object }, (_args, ctx) => {
    // used after the call ended: reads as cancelled and sends nothing
    setTimeout(() => {
      if (!ctx.cancelled || ctx.progress(1) || ctx.log('error', 'late')) process.exitCode = 3;
    }, 20);
    return 'ok';
  });

await server.serveStdio();
