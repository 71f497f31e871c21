// Behaviour of tasks (SEP-2663) and skills (SEP-2640) end to end in Node
// (issue 28): a Node server served over HTTP, the Node client calling it.
// A task that runs ~3 s reporting progress, one that asks for input and
// resumes, one cancelled, one whose result expired; a skills directory with
// nested files; bad input (unknown task id, tampered task id, update of a
// finished task, skill paths escaping the directory, links pointing
// outside) gets the spec's error and the server keeps serving.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, mkdirSync, writeFileSync, symlinkSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { Client, Server, McpError } from '../index.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const nameSchema = { type: 'object', properties: { name: { type: 'string' } } };
const INVALID_PARAMS = -32602;
const SECRET = 'TOP-SECRET-OUTSIDE-THE-SKILLS-DIRECTORY';

/** Serves `server` over HTTP on a free port; resolves with its URL and stop(). */
async function serve(server) {
  let served;
  const url = await new Promise((resolve, reject) => {
    served = server.serveHttp({ port: 0, handleSignals: false, onListening: (address) => resolve(address.url) });
    served.catch(reject);
  });
  return {
    url,
    async stop() {
      server.close();
      await served;
    },
  };
}

/** Polls `task.refresh()` until `done(state)` or about 10 s; returns the last state. */
async function pollUntil(task, done, every = 20) {
  let state = await task.refresh();
  for (let i = 0; !done(state) && i < 10_000 / every; i += 1) {
    await sleep(every);
    state = await task.refresh();
  }
  return state;
}

/** Waits for `check()` to be true, about 10 s at most. */
async function waitFor(check) {
  for (let i = 0; !check() && i < 400; i += 1) await sleep(25);
  return check();
}

/** An assertion that `promise` rejects with an McpError of `code`, its message free of `mustNotContain`. */
async function rejectsWith(promise, code, mustNotContain = SECRET) {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof McpError, `an McpError, got ${error}`);
    assert.equal(error.code, code, `code of ${error.message}`);
    assert.ok(!String(error.message).includes(mustNotContain), `message leaks: ${error.message}`);
    assert.ok(!/root:x?:0:0/.test(String(error.message)), `message leaks /etc/passwd: ${error.message}`);
    return true;
  });
}

const sha256 = (bytes) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

// --- The server under test: tools for every task behaviour, and skills ---

let main; // { url, stop }
let skillsDir;
let outsideDir;
const aborted = new Set(); // tags of `wait` calls whose signal aborted
const skillFiles = {}; // path under skillsDir -> bytes

function writeSkillFile(rel, content) {
  const full = path.join(skillsDir, rel);
  mkdirSync(path.dirname(full), { recursive: true });
  const bytes = Buffer.isBuffer(content) ? content : Buffer.from(content);
  writeFileSync(full, bytes);
  skillFiles[rel] = bytes;
}

before(async () => {
  skillsDir = mkdtempSync(path.join(tmpdir(), 'ferromcp-behaviour-skills-'));
  outsideDir = mkdtempSync(path.join(tmpdir(), 'ferromcp-behaviour-outside-'));
  writeSkillFile('docs-lint/SKILL.md', '---\nname: docs-lint\ndescription: Lints our docs\n---\n# Rules\n');
  writeSkillFile('docs-lint/references/style.md', 'Short sentences.\n');
  writeSkillFile(
    'acme/billing/refunds/SKILL.md',
    '---\nname: refunds\ndescription: How refunds are issued\n---\nRun scripts/deep/refund.py.\n',
  );
  writeSkillFile('acme/billing/refunds/scripts/deep/refund.py', 'print("refund")\n');
  // Not UTF-8: read back as bytes, not as text.
  writeSkillFile('acme/billing/refunds/assets/data/table.bin', Buffer.from([0, 0xff, 0xfe, 0x80, 10, 13, 0x7f]));
  // Outside the directory: a secret file and a whole skill, linked from inside.
  writeFileSync(path.join(outsideDir, 'secret.txt'), SECRET);
  mkdirSync(path.join(outsideDir, 'linked'));
  writeFileSync(path.join(outsideDir, 'linked', 'SKILL.md'), `---\nname: linked\ndescription: ${SECRET}\n---\n`);
  symlinkSync(path.join(outsideDir, 'secret.txt'), path.join(skillsDir, 'docs-lint', 'references', 'secret.md'));
  symlinkSync(path.join(outsideDir, 'linked'), path.join(skillsDir, 'linked'));
  symlinkSync(path.join(outsideDir, 'secret.txt'), path.join(skillsDir, 'acme', 'billing', 'refunds', 'leak.md'));

  const server = new Server({ name: 'behaviour', version: '1.0.0', tasks: { pollIntervalMs: 50 } });
  server.tool(
    'steps',
    { inputSchema: { type: 'object', properties: { steps: { type: 'number' }, ms: { type: 'number' } } }, task: true },
    async ({ steps = 30, ms = 100 }, ctx) => {
      for (let k = 1; k <= steps; k += 1) {
        await sleep(ms);
        ctx.progress(k, steps, 'step');
      }
      return `did ${steps} steps`;
    },
  );
  server.tool('ask', { task: true }, async (_, ctx) => {
    const answer = await ctx.elicit({ mode: 'form', message: 'Name?', requestedSchema: nameSchema }, { key: 'name' });
    return answer.action === 'accept' ? `hello ${answer.content.name}` : `no name (${answer.action})`;
  });
  server.tool(
    'wait',
    { inputSchema: { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] }, task: true },
    async ({ tag }, ctx) => {
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, 60_000);
        ctx.signal.addEventListener('abort', () => {
          aborted.add(tag);
          clearTimeout(timer);
          resolve();
        });
      });
      return `waited ${tag}`;
    },
  );
  server.tool('quick', { inputSchema: { type: 'object', properties: { n: { type: 'number' } } }, task: true }, async ({ n = 0 }) => `quick ${n}`);
  server.tool('echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }, async ({ text }) => `echo ${text}`);
  assert.deepEqual(server.addSkills(skillsDir).sort(), [
    'skill://acme/billing/refunds/SKILL.md',
    'skill://docs-lint/SKILL.md',
  ]);
  main = await serve(server);
});

after(async () => {
  await main?.stop();
  rmSync(skillsDir, { recursive: true, force: true });
  rmSync(outsideDir, { recursive: true, force: true });
});

/** The server still answers a plain call and a skill read. */
async function stillServing(client, label) {
  assert.equal((await client.callTool('echo', { text: label })).content[0].text, `echo ${label}`);
  const read = await client.readResource('skill://docs-lint/references/style.md');
  assert.equal(read.contents[0].text, 'Short sentences.\n');
}

// --- Tasks ---

test('a task running ~3 s shows its progress while it works, then its result', async () => {
  const client = await Client.http(main.url);
  try {
    const started = Date.now();
    const task = await client.startToolTask('steps', { steps: 30, ms: 100 });
    // 128 random bits sealed with the server's key: payload.tag, base64url.
    assert.match(task.id, /^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    assert.equal(task.state.status, 'working');
    const seen = [];
    let state = await task.refresh();
    while (state.status === 'working' && Date.now() - started < 15_000) {
      const match = /^step \((\d+)\/30\)$/.exec(state.statusMessage ?? '');
      if (state.statusMessage !== undefined) assert.ok(match, `status message ${JSON.stringify(state.statusMessage)}`);
      if (match) seen.push(Number(match[1]));
      await sleep(150);
      state = await task.refresh();
    }
    assert.equal(state.status, 'completed', JSON.stringify(state));
    assert.equal(state.result.content[0].text, 'did 30 steps');
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 3000, `ran ${elapsed} ms`);
    // Progress was seen while it ran, moving forward only.
    assert.ok(new Set(seen).size >= 5, `progress seen: ${seen}`);
    for (let i = 1; i < seen.length; i += 1) assert.ok(seen[i] >= seen[i - 1], `progress went back: ${seen}`);
    assert.ok(seen.at(-1) > seen[0], `progress never advanced: ${seen}`);
    assert.ok(seen.every((k) => k >= 1 && k <= 30), `progress out of range: ${seen}`);
    assert.equal((await task.result()).content[0].text, 'did 30 steps');
  } finally {
    await client.close();
  }
});

test('a task that asks for input resumes with the answer of the client handler', async () => {
  const asked = [];
  const client = await Client.http(main.url, {
    onElicitation: async (params) => {
      asked.push(params);
      return { action: 'accept', content: { name: 'Ada' } };
    },
  });
  try {
    assert.equal((await client.callTool('ask')).content[0].text, 'hello Ada');
    assert.equal(asked.length, 1);
    assert.equal(asked[0].message, 'Name?');
    assert.deepEqual(asked[0].requestedSchema, nameSchema);
    await stillServing(client, 'after-ask');
  } finally {
    await client.close();
  }
});

test('a task that asks for input resumes with the answer of the caller', async () => {
  const client = await Client.http(main.url, { capabilities: { elicitation: {} } });
  try {
    const task = await client.startToolTask('ask');
    assert.ok(task.id);
    const waiting = await pollUntil(task, (s) => s.status === 'input_required');
    assert.equal(waiting.status, 'input_required', JSON.stringify(waiting));
    assert.deepEqual(Object.keys(waiting.inputRequests), ['name']);
    assert.equal(waiting.inputRequests.name.method, 'elicitation/create');
    assert.equal(waiting.inputRequests.name.params.message, 'Name?');
    assert.equal(await task.respond({ name: { action: 'accept', content: { name: 'Grace' } } }), undefined);
    assert.equal((await task.result()).content[0].text, 'hello Grace');
    const done = await task.refresh();
    assert.equal(done.status, 'completed');
    assert.equal(done.inputRequests, undefined);
    assert.equal(done.result.content[0].text, 'hello Grace');
  } finally {
    await client.close();
  }
});

test('a cancelled task ends cancelled and its handler is aborted', async () => {
  const client = await Client.http(main.url);
  try {
    // Through the handle.
    const task = await client.startToolTask('wait', { tag: 'handle' });
    assert.equal((await task.refresh()).status, 'working');
    await sleep(50);
    assert.ok(!aborted.has('handle'), 'the handler runs before the cancel');
    assert.equal(await task.cancel(), undefined);
    const end = await pollUntil(task, (s) => s.status === 'cancelled');
    assert.equal(end.status, 'cancelled', JSON.stringify(end));
    assert.equal(end.result, undefined);
    assert.ok(await waitFor(() => aborted.has('handle')), 'tasks/cancel aborted ctx.signal');
    await assert.rejects(task.result(), (error) => error instanceof McpError);

    // By aborting the signal of result().
    const other = await client.startToolTask('wait', { tag: 'signal' });
    const controller = new AbortController();
    const following = other.result({ signal: controller.signal });
    await sleep(100);
    assert.equal((await other.refresh()).status, 'working');
    controller.abort();
    await assert.rejects(following, (error) => error instanceof McpError && error.kind === 'cancelled');
    const otherEnd = await pollUntil(other, (s) => s.status === 'cancelled');
    assert.equal(otherEnd.status, 'cancelled', JSON.stringify(otherEnd));
    assert.ok(await waitFor(() => aborted.has('signal')), 'aborting result() aborted ctx.signal');
    await stillServing(client, 'after-cancel');
  } finally {
    await client.close();
  }
});

test('a finished task is forgotten once its ttl passed: tasks/get answers -32602', async () => {
  const server = new Server({ name: 'expiring', version: '1.0.0', tasks: { ttlMs: 300, keepFinishedMs: 0, pollIntervalMs: 50 } });
  // (pollIntervalMs below the ttl: a client following a task polls no sooner.)
  server.tool('quick', { task: true }, async () => 'quick done');
  const served = await serve(server);
  try {
    const client = await Client.http(served.url);
    try {
      const created = Date.now();
      const task = await client.startToolTask('quick');
      assert.equal(task.state.ttlMs, 300);
      const done = await pollUntil(task, (s) => s.status === 'completed', 10);
      assert.ok(Date.now() - created < 280, 'the test needs the task finished well within its ttl');
      assert.equal(done.status, 'completed');
      assert.equal(done.result.content[0].text, 'quick done');
      assert.equal(done.ttlMs, 300, 'finished within its ttl, the ttl is unchanged');
      await sleep(Math.max(0, created + 500 - Date.now()));
      await rejectsWith(task.refresh(), INVALID_PARAMS);
      await rejectsWith(client.toolTask(task.id).refresh(), INVALID_PARAMS);
      // The server goes on: a new task works.
      assert.equal((await client.callTool('quick')).content[0].text, 'quick done');
    } finally {
      await client.close();
    }
  } finally {
    await served.stop();
  }
});

// --- Skills ---

test('a skills directory with nested skills and files is listed, loaded and read byte for byte', async () => {
  const client = await Client.http(main.url);
  try {
    const skills = [];
    for await (const skill of client.skills()) skills.push(skill);
    assert.deepEqual(skills.map((s) => s.uri).sort(), ['skill://acme/billing/refunds/SKILL.md', 'skill://docs-lint/SKILL.md']);
    const refunds = skills.find((s) => s.uri === 'skill://acme/billing/refunds/SKILL.md');
    assert.equal(refunds.frontmatter.name, 'refunds');
    assert.equal(refunds.frontmatter.description, 'How refunds are issued');
    // Every file with its digest and size; links out are not published.
    const expected = Object.entries(skillFiles)
      .filter(([rel]) => rel.startsWith('acme/billing/refunds/'))
      .map(([rel, bytes]) => ({ uri: `skill://${rel}`, digest: sha256(bytes), size: bytes.length }))
      .sort((a, b) => a.uri.localeCompare(b.uri));
    assert.deepEqual([...refunds.resources].sort((a, b) => a.uri.localeCompare(b.uri)), expected);
    for (const file of refunds.resources) assert.match(file.digest, /^sha256:[0-9a-f]{64}$/);
    const docs = skills.find((s) => s.uri === 'skill://docs-lint/SKILL.md');
    assert.deepEqual(docs.resources.map((r) => r.uri).sort(), [
      'skill://docs-lint/SKILL.md',
      'skill://docs-lint/references/style.md',
    ]);
    assert.deepEqual(await client.getSkill(refunds.uri), refunds);

    const loaded = await client.loadSkill(refunds.uri);
    assert.equal(loaded.skillMd, skillFiles['acme/billing/refunds/SKILL.md'].toString());
    const script = await loaded.read('scripts/deep/refund.py');
    assert.ok(Buffer.isBuffer(script));
    assert.ok(script.equals(skillFiles['acme/billing/refunds/scripts/deep/refund.py']));
    const table = await loaded.read('skill://acme/billing/refunds/assets/data/table.bin');
    assert.ok(table.equals(skillFiles['acme/billing/refunds/assets/data/table.bin']), `got ${table.toString('hex')}`);
    assert.equal(sha256(table), sha256(readFileSync(path.join(skillsDir, 'acme/billing/refunds/assets/data/table.bin'))));
  } finally {
    await client.close();
  }
});

// --- Bad input ---

test('an unknown task id gets -32602 and the server keeps serving', async () => {
  const client = await Client.http(main.url, { capabilities: { elicitation: {} } });
  try {
    await rejectsWith(client.toolTask('nope').refresh(), INVALID_PARAMS);
    await stillServing(client, 'unknown-get');
    await rejectsWith(client.toolTask('nope').cancel(), INVALID_PARAMS);
    await stillServing(client, 'unknown-cancel');
    await rejectsWith(client.toolTask('nope').respond({ name: { action: 'cancel' } }), INVALID_PARAMS);
    await stillServing(client, 'unknown-update');
    await rejectsWith(client.toolTask('0'.repeat(32)).refresh(), INVALID_PARAMS);
    await stillServing(client, 'unknown-zeros');
  } finally {
    await client.close();
  }
});

test('a tampered task id gets -32602, the real one still works, and the server keeps serving', async () => {
  const client = await Client.http(main.url);
  try {
    const task = await client.startToolTask('quick', { n: 7 });
    assert.equal((await task.result()).content[0].text, 'quick 7');
    const id = task.id;
    const last = id.at(-1);
    const flipped = last === 'f' ? 'e' : (parseInt(last, 16) + 1).toString(16);
    const tampered = id.slice(0, -1) + flipped;
    assert.notEqual(tampered, id);
    await rejectsWith(client.toolTask(tampered).refresh(), INVALID_PARAMS);
    await rejectsWith(client.toolTask(tampered).cancel(), INVALID_PARAMS);
    const first = id[0] === 'a' ? 'b' : 'a';
    await rejectsWith(client.toolTask(first + id.slice(1)).refresh(), INVALID_PARAMS);
    await rejectsWith(client.toolTask(id.toUpperCase() === id ? id.toLowerCase() : id.toUpperCase()).refresh(), INVALID_PARAMS);
    await rejectsWith(client.toolTask(`${id}0`).refresh(), INVALID_PARAMS);
    const real = await client.toolTask(id).refresh();
    assert.equal(real.status, 'completed');
    assert.equal(real.result.content[0].text, 'quick 7');
    await stillServing(client, 'after-tamper');
  } finally {
    await client.close();
  }
});

test('an update or cancel of a finished task is acknowledged and changes nothing', async () => {
  const client = await Client.http(main.url, { capabilities: { elicitation: {} } });
  try {
    // A task that asked a question and was answered: answering again, or
    // answering a key never asked, is acknowledged and ignored.
    const task = await client.startToolTask('ask');
    const waiting = await pollUntil(task, (s) => s.status === 'input_required');
    assert.equal(waiting.status, 'input_required', JSON.stringify(waiting));
    await task.respond({ name: { action: 'accept', content: { name: 'Lin' } } });
    assert.equal((await task.result()).content[0].text, 'hello Lin');
    const before = await task.refresh();
    assert.equal(before.status, 'completed');

    assert.equal(await task.respond({ name: { action: 'accept', content: { name: 'Mallory' } } }), undefined);
    assert.equal(await task.respond({ other: { action: 'accept', content: { name: 'Mallory' } } }), undefined);
    assert.equal(await client.toolTask(task.id).respond({ name: { action: 'decline' } }), undefined);
    assert.equal(await task.cancel(), undefined);
    const afterwards = await task.refresh();
    assert.equal(afterwards.status, 'completed');
    assert.deepEqual(afterwards.result, before.result);
    assert.equal(afterwards.result.content[0].text, 'hello Lin');
    assert.equal(afterwards.error, undefined);
    assert.equal(afterwards.inputRequests, undefined);
    await stillServing(client, 'after-late-update');
  } finally {
    await client.close();
  }
});

test('skill paths escaping the directory read nothing: -32602, and the server keeps serving', async () => {
  const client = await Client.http(main.url);
  try {
    const escapes = [
      'skill://../../etc/passwd',
      'skill://docs-lint/../../etc/passwd',
      'skill://docs-lint/../../../../../../etc/passwd',
      'skill://docs-lint/references/../../../etc/passwd',
      'skill://acme/billing/refunds/../../../../etc/passwd',
      'skill://docs-lint/%2e%2e/%2e%2e/etc/passwd',
      'skill://docs-lint/..%2f..%2fetc%2fpasswd',
      'skill:///etc/passwd',
      'skill://docs-lint//etc/passwd',
      'file:///etc/passwd',
      // Links inside the directory pointing outside are not published.
      'skill://docs-lint/references/secret.md',
      'skill://acme/billing/refunds/leak.md',
      'skill://linked/SKILL.md',
      `skill://docs-lint/../../..${outsideDir}/secret.txt`,
    ];
    for (const uri of escapes) {
      await rejectsWith(client.readResource(uri), INVALID_PARAMS);
      await stillServing(client, `read ${uri}`);
    }
    for (const uri of [
      'skill://../../etc/passwd/SKILL.md',
      'skill://docs-lint/../../etc/passwd',
      'skill://docs-lint/../SKILL.md',
      'skill://linked/SKILL.md',
    ]) {
      await rejectsWith(client.getSkill(uri), INVALID_PARAMS);
      await rejectsWith(client.loadSkill(uri), INVALID_PARAMS);
      await stillServing(client, `skill ${uri}`);
    }
    // A loaded skill refuses paths it does not list, without asking the server.
    const loaded = await client.loadSkill('skill://docs-lint/SKILL.md');
    for (const file of ['../../etc/passwd', 'references/../../../etc/passwd', 'references/secret.md', 'skill://docs-lint/../../etc/passwd']) {
      await assert.rejects(loaded.read(file), (error) => {
        assert.ok(!String(error.message).includes(SECRET));
        return true;
      });
    }
    assert.equal((await loaded.read('references/style.md')).toString(), 'Short sentences.\n');
    await stillServing(client, 'after-escapes');
  } finally {
    await client.close();
  }
});
