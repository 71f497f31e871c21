// close() lets the process exit, and the core never blocks the event loop
// while calls are in flight (test-support/client-exit.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { REPO_ROOT } from '../test-support/helpers.mjs';

const SCRIPT = path.join(REPO_ROOT, 'bindings-node/test-support/client-exit.mjs');
const SERVER = path.join(REPO_ROOT, 'bindings-node/test-support/client-server.mjs');

function run(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SCRIPT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the client process did not exit after close(): ${err}`));
    }, 15_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`exit ${code}: ${err}`));
      else resolve(JSON.parse(out));
    });
  });
}

function check(report) {
  assert.equal(report.first, 't1');
  assert.equal(report.last, 'timeout');
  // 51 calls in flight for 2 s: a loop blocked while they wait would show a
  // delay of about 2 s. The margin is wide because a busy machine alone
  // delays a loop by a few hundred ms (296 ms seen with the load at 10).
  assert.ok(report.maxDelayMs < 1000, `event loop delay ${report.maxDelayMs} ms`);
}

test('close() over stdio lets the process exit', async () => {
  check(await run([]));
});

test('close() over HTTP lets the process exit', async (t) => {
  const server = spawn(process.execPath, [SERVER, '--http'], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => server.kill());
  let url = '';
  for await (const line of createInterface({ input: server.stdout })) {
    url = line.trim();
    break;
  }
  check(await run([url]));
});
