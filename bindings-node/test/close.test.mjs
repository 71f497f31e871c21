// close() must leave nothing that keeps the event loop alive: processes
// that served (or merely registered tools) exit on their own.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';

import { REPO_ROOT, exitWithin } from '../test-support/helpers.mjs';

function run(script, { keepStdinOpen = false } = {}) {
  const child = spawn(process.execPath, [`bindings-node/test-support/${script}`], {
    cwd: REPO_ROOT,
    stdio: [keepStdinOpen ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
  return { child, output: () => ({ stderr, stdout }) };
}

test('a process exits after close() of an HTTP server that answered a call', async () => {
  const { child, output } = run('close-http.mjs');
  const { code } = await exitWithin(child, 10_000);
  assert.equal(code, 0, output().stderr);
  assert.match(output().stderr, /answered: hi/);
  assert.match(output().stderr, /serveHttp resolved/);
});

test('a process exits after close() of a stdio server whose stdin stays open', async () => {
  const { child, output } = run('close-stdio.mjs', { keepStdinOpen: true });
  const { code } = await exitWithin(child, 10_000);
  assert.equal(code, 0, output().stderr);
  assert.match(output().stderr, /serveStdio resolved/);
  assert.equal(output().stdout, '');
});

test('registered tools alone do not keep a process alive', async () => {
  const { child, output } = run('never-served.mjs');
  const { code } = await exitWithin(child, 10_000);
  assert.equal(code, 0, output().stderr);
});
