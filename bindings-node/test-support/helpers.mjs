// Test helpers: a minimal newline-delimited JSON-RPC client for a server
// started as a child process, and the 2026-07-28 request envelope.

import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export const PROTOCOL_VERSION = '2026-07-28';
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The per-request `_meta` every 2026-07-28 request carries. */
export function meta() {
  return {
    'io.modelcontextprotocol/protocolVersion': PROTOCOL_VERSION,
    'io.modelcontextprotocol/clientCapabilities': {},
  };
}

/** A JSON-RPC request object with `_meta` filled in. */
export function request(id, method, params = {}) {
  return { jsonrpc: '2.0', id, method, params: { ...params, _meta: { ...meta(), ...params._meta } } };
}

/**
 * Starts `node <script> ...args` from the repository root and talks JSON-RPC
 * to it over stdin/stdout. Everything it writes to stderr is kept for
 * failure messages.
 */
export class StdioClient {
  #child;
  #nextId = 1;
  #pending = new Map();
  #stray = [];
  /** Notifications the server sent (progress, log messages). */
  notifications = [];
  stderr = '';

  constructor(script, args = []) {
    this.#child = spawn(process.execPath, [script, ...args], {
      cwd: REPO_ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.#child.stderr.setEncoding('utf8');
    this.#child.stderr.on('data', (chunk) => {
      this.stderr += chunk;
    });
    this.exited = new Promise((resolve) => {
      this.#child.on('exit', (code, signal) => resolve({ code, signal }));
    });
    const lines = createInterface({ input: this.#child.stdout });
    lines.on('line', (line) => this.#receive(line));
  }

  #receive(line) {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      this.#stray.push(line);
      return;
    }
    if (message.id === undefined && typeof message.method === 'string') {
      this.notifications.push(message);
      return;
    }
    const waiter = this.#pending.get(message.id);
    if (waiter) {
      this.#pending.delete(message.id);
      waiter(message);
    } else {
      this.#stray.push(line);
    }
  }

  /** Lines on stdout that were neither answers nor notifications. */
  get stray() {
    return this.#stray;
  }

  /** Sends a request and resolves with the whole response message. */
  send(method, params = {}) {
    const id = this.#nextId++;
    const answered = new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`no answer to ${method} #${id}; stderr:\n${this.stderr}`));
      }, 10_000);
      this.#pending.set(id, (message) => {
        clearTimeout(timer);
        resolve(message);
      });
    });
    this.#child.stdin.write(`${JSON.stringify(request(id, method, params))}\n`);
    return answered;
  }

  /** `tools/call` and its `result` (fails on a JSON-RPC error). */
  async callTool(name, args) {
    const response = await this.send('tools/call', { name, arguments: args });
    if (response.error) {
      throw new Error(`tools/call ${name} failed: ${JSON.stringify(response.error)}`);
    }
    return response.result;
  }

  /** Closes stdin (EOF ends a stdio server) and waits for the exit. */
  async close() {
    this.#child.stdin.end();
    return this.exited;
  }

  kill() {
    this.#child.kill('SIGKILL');
  }
}

/** Resolves with `{ code, signal }` when `child` exits, or rejects after `ms`. */
export function exitWithin(child, ms) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`process still running after ${ms} ms`));
    }, ms);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
}

/** POSTs one JSON-RPC request to a Streamable HTTP endpoint. */
export async function postMcp(url, id, method, params = {}, { name } = {}) {
  const headers = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': PROTOCOL_VERSION,
    'Mcp-Method': method,
  };
  if (name !== undefined) headers['Mcp-Name'] = name;
  const response = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify(request(id, method, params)),
  });
  return { status: response.status, type: response.headers.get('content-type'), body: await response.json() };
}
