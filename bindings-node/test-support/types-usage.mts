// Compiled (never run) by test/types.test.mjs: the public typings must accept
// this usage and reject the misuse marked @ts-expect-error.

import { Server, McpError, RequestContext, type HttpAddress, type HttpLimits, type ToolHandler } from 'ferromcp';

const server: Server = new Server({ name: 'typed', version: '1.0.0', instructions: 'Be brief.' });

const add: ToolHandler<{ a: number; b: number }> = ({ a, b }) => a + b;

const chained: Server = server
  .tool('echo', { inputSchema: { type: 'object' } }, ({ text }: { text: string }) => text)
  .tool(
    'add',
    { description: 'Adds.', outputSchema: { type: 'object', properties: { result: { type: 'integer' } } } },
    add,
  )
  .tool('ctx', {}, async (_args, ctx: RequestContext) => {
    const id: string | number = ctx.requestId;
    const isContext: boolean = ctx instanceof RequestContext;
    const sent: boolean = ctx.progress(1, 2, 'half') || ctx.log('info', { id });
    return { id, sent, isContext, cancelled: ctx.cancelled, version: ctx.protocolVersion };
  });

const names: string[] = chained.toolNames;
const removed: boolean = server.removeTool(names[0] ?? 'echo');

const limits: HttpLimits = {
  maxConnections: 256,
  maxConnectionsPerAddress: null,
  headerReadTimeout: 2.5,
  bodyReadTimeout: 30,
  idleTimeout: 30,
  maxBodyBytes: 1 << 20,
};

async function serve(): Promise<void> {
  await server.serveHttp({
    port: 0,
    host: '127.0.0.1',
    path: '/mcp',
    limits,
    onListening: (address: HttpAddress) => {
      const url: string = address.url;
      const port: number = address.port;
      console.error(url, port, removed);
      server.close();
    },
  });
  await server.serveStdio();
}

try {
  await serve();
} catch (error) {
  if (error instanceof McpError) {
    const code: number = error.code;
    const data: unknown = error.data;
    console.error(code, data, error.message);
  }
}

const custom = new McpError('Resource not found', { code: -32002, data: { uri: 'file:///x' } });
const name: 'McpError' = custom.name;
console.error(name);

// @ts-expect-error: a server needs a version
new Server({ name: 'no-version' });
// @ts-expect-error: the handler must be a function
server.tool('bad', {}, 'not a function');
// @ts-expect-error: ports are numbers
server.serveHttp({ port: '8000' });
// @ts-expect-error: limits are named in camelCase and known
server.serveHttp({ limits: { maxConections: 5 } });
// @ts-expect-error: timeouts are numbers of seconds
server.serveHttp({ limits: { idleTimeout: '30s' } });

// Core's log events.
import { setLogger, type Logger, type LogLevel } from 'ferromcp';
const logLevel: LogLevel = 'info';
const logger: Logger = (level, target, message) => console.log(level.toUpperCase(), target, message);
const installed: boolean = setLogger(logger, { level: logLevel });
setLogger(null);
// @ts-expect-error: not a level
setLogger(logger, { level: 'loud' });
// @ts-expect-error: a logger is a function
setLogger('console');
void installed;
