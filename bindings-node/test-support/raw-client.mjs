// A raw JSON-RPC client over a child's stdin/stdout that also answers the
// server's own requests (2025-11-25 sessions: elicitation, sampling, roots)
// and lets a test write any message (no `_meta` filled in).

import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

import { REPO_ROOT } from './helpers.mjs';

export const MODERN = '2026-07-28';
export const LEGACY = '2025-11-25';

/** 2026-07-28 `_meta` declaring `capabilities`. */
export function modernMeta(capabilities = { elicitation: {}, sampling: {}, roots: {} }, extra = {}) {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': capabilities,
    'io.modelcontextprotocol/clientInfo': { name: 'raw-client', version: '0.0.1' },
    ...extra,
  };
}

export class RawClient {
  #child;
  #nextId = 1;
  #pending = new Map();
  /** Notifications the server sent. */
  notifications = [];
  /** Requests the server sent (2025-11-25 sessions). */
  serverRequests = [];
  stderr = '';
  /** Answers a server request: `(request) => result` (or a Promise). */
  onRequest = (/** @type {any} */ request) => {
    throw new Error(`unexpected server request ${request.method}`);
  };

  constructor(script, args = []) {
    this.#child = spawn(process.execPath, [script, ...args], { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    this.#child.stderr.setEncoding('utf8');
    this.#child.stderr.on('data', (chunk) => {
      this.stderr += chunk;
    });
    this.exited = new Promise((resolve) => this.#child.on('exit', (code, signal) => resolve({ code, signal })));
    createInterface({ input: this.#child.stdout }).on('line', (line) => this.#receive(JSON.parse(line)));
  }

  async #receive(message) {
    if (typeof message.method === 'string' && message.id !== undefined) {
      this.serverRequests.push(message);
      try {
        const result = await this.onRequest(message);
        this.write({ jsonrpc: '2.0', id: message.id, result });
      } catch (error) {
        this.write({ jsonrpc: '2.0', id: message.id, error: { code: -32603, message: String(error) } });
      }
      return;
    }
    if (typeof message.method === 'string') {
      this.notifications.push(message);
      return;
    }
    const waiter = this.#pending.get(message.id);
    this.#pending.delete(message.id);
    waiter?.(message);
  }

  write(message) {
    this.#child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  /** A fresh request id. */
  nextId() {
    return this.#nextId++;
  }

  /** Sends a request as given (params untouched) and resolves with the response. */
  request(method, params, id = this.nextId()) {
    const answered = new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${method} #${id}; stderr:\n${this.stderr}`)), 10_000);
      this.#pending.set(id, (message) => {
        clearTimeout(timer);
        resolve(message);
      });
    });
    this.write({ jsonrpc: '2.0', id, method, params });
    return answered;
  }

  /** A 2026-07-28 request: `_meta` with every input capability unless given. */
  modern(method, params = {}, meta = modernMeta()) {
    return this.request(method, { ...params, _meta: { ...meta, ...params._meta } });
  }

  /** Opens a 2025-11-25 session declaring `capabilities`. */
  async initialize(capabilities = { elicitation: {}, sampling: {}, roots: {} }) {
    const response = await this.request('initialize', {
      protocolVersion: LEGACY,
      capabilities,
      clientInfo: { name: 'raw-client', version: '0.0.1' },
    });
    this.write({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return response;
  }

  async close() {
    this.#child.stdin.end();
    return this.exited;
  }
}

/** The joined text blocks of a result. */
export const textOf = (result) => (result.content ?? []).map((block) => block.text ?? '').join('');
