// Graceful shutdown and quiet exits (issue 11, items 10 and 11): SIGTERM
// during serveStdio()/serveHttp() ends open subscriptions/listen streams with
// their completion result, lets the request in flight finish, and the
// process exits 0; a client that closes stdout ends the server with one line.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';

import { REPO_ROOT, PROTOCOL_VERSION, request, exitWithin } from '../test-support/helpers.mjs';

const SLOW = 'bindings-node/test-support/slow-server.mjs';
const SUB_ID = 'io.modelcontextprotocol/subscriptionId';
const LISTEN = ['subscriptions/listen', { notifications: { toolsListChanged: true } }];
const SLOW_CALL = ['tools/call', { name: 'slow', arguments: {} }];

function start(args) {
  const child = spawn(process.execPath, [SLOW, ...args], { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stderrText = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => {
    child.stderrText += chunk;
  });
  return child;
}

function stderrIncludes(child, text) {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (child.stderrText.includes(text)) resolve();
      else if (child.exitCode !== null) reject(new Error(`exited before "${text}":\n${child.stderrText}`));
      else setTimeout(check, 10);
    };
    check();
  });
}

function checkEndings(messages) {
  const byId = new Map(messages.filter((m) => m.id !== undefined).map((m) => [m.id, m]));
  const listen = byId.get(1);
  assert.ok(listen, `no listen result in ${JSON.stringify(messages)}`);
  assert.equal(listen.result.resultType, 'complete', JSON.stringify(listen));
  assert.equal(listen.result._meta[SUB_ID], 1);
  const slow = byId.get(2);
  assert.ok(slow, `no tool answer in ${JSON.stringify(messages)}`);
  assert.deepEqual(slow.result.content, [{ type: 'text', text: 'finished' }]);
}

test('SIGTERM during serveStdio ends listen streams and finishes the request', async (t) => {
  const child = start([]);
  t.after(() => child.kill('SIGKILL'));
  const messages = [];
  const lines = createInterface({ input: child.stdout });
  let acked;
  const ack = new Promise((resolve) => {
    acked = resolve;
  });
  lines.on('line', (line) => {
    const message = JSON.parse(line);
    messages.push(message);
    if (message.method === 'notifications/subscriptions/acknowledged') acked();
  });
  const ended = new Promise((resolve) => lines.on('close', resolve));
  child.stdin.write(`${JSON.stringify(request(1, ...LISTEN))}\n`);
  child.stdin.write(`${JSON.stringify(request(2, ...SLOW_CALL))}\n`);
  await ack;
  await stderrIncludes(child, 'started');
  const exited = exitWithin(child, 15_000);
  child.kill('SIGTERM');
  await ended;
  checkEndings(messages);
  const { code, signal } = await exited;
  assert.equal(signal, null, child.stderrText);
  assert.equal(code, 0, child.stderrText);
});

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** POSTs a request and resolves with every JSON-RPC message of the answer. */
async function post(url, id, [method, params], onMessage = () => {}) {
  const headers = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': PROTOCOL_VERSION,
    'Mcp-Method': method,
  };
  if (params.name !== undefined) headers['Mcp-Name'] = params.name;
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(request(id, method, params)) });
  if (!response.headers.get('content-type').startsWith('text/event-stream')) return [await response.json()];
  const messages = [];
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of response.body) {
    buffered += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, end).trim();
      buffered = buffered.slice(end + 1);
      if (line.startsWith('data:')) {
        const message = JSON.parse(line.slice(5));
        messages.push(message);
        onMessage(message);
      }
    }
  }
  return messages;
}

test('SIGTERM during serveHttp ends listen streams and finishes the request', async (t) => {
  const port = await freePort();
  const child = start(['--http', String(port)]);
  t.after(() => child.kill('SIGKILL'));
  await stderrIncludes(child, 'listening');
  const url = `http://127.0.0.1:${port}/mcp`;
  let acked;
  const ack = new Promise((resolve) => {
    acked = resolve;
  });
  const listen = post(url, 1, LISTEN, (m) => {
    if (m.method === 'notifications/subscriptions/acknowledged') acked();
  });
  const slow = post(url, 2, SLOW_CALL);
  await ack;
  await stderrIncludes(child, 'started');
  const exited = exitWithin(child, 15_000);
  child.kill('SIGTERM');
  checkEndings([...(await listen), ...(await slow)]);
  const { code, signal } = await exited;
  assert.equal(signal, null, child.stderrText);
  assert.equal(code, 0, child.stderrText);
});

test('a client that closes stdout ends serveStdio quietly', async (t) => {
  const child = start([]);
  t.after(() => child.kill('SIGKILL'));
  child.stdout.destroy(); // like `| head -c 0`
  const exited = exitWithin(child, 15_000);
  child.stdin.write(`${JSON.stringify(request(1, 'tools/list'))}\n`);
  const { code } = await exited;
  assert.equal(code, 0, child.stderrText);
  assert.equal(child.stderrText.trim(), 'ferromcp: the client closed stdout; stopped serving');
});
