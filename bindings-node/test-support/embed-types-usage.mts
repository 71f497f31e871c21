// Typed usage of embed.d.ts (server.fetch / fetchHandler / nodeHandler),
// checked by `tsc --strict` (make lint-node); never run.
import http from 'node:http';

import { Server, type HandlerOptions, type NodeHandler } from 'ferromcp';

const server = new Server({ name: 'typed', version: '1.0.0' });
const options: HandlerOptions = { path: '/mcp', allowedHosts: ['localhost'], allowedOrigins: [], maxBodyBytes: 1 << 20 };
const handler: NodeHandler = server.nodeHandler(options);
http.createServer(handler);
http.createServer(server.nodeHandler());
const answered: Promise<Response> = server.fetch(new Request('http://localhost/mcp', { method: 'POST', body: '{}' }));
const route: (request: Request) => Promise<Response> = server.fetchHandler({ allowedHosts: ['api.example'] });
void answered;
void route;
