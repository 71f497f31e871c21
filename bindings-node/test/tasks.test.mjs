// Tasks (SEP-2663) in Node: tools registered with `task` and `taskStart`,
// called by the Node client in memory (Client.inMemory: no socket), which
// follows the task to the tool's result; cancelling the call aborts the
// handler's signal. Tasks over HTTP: task-behaviour.test.mjs.

import { test, before } from 'node:test';
import assert from 'node:assert/strict';

import { Client, Server } from '../index.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const nameSchema = { type: 'object', properties: { name: { type: 'string' } } };

let server;
let aborted = false;

before(async () => {
  server = new Server({ name: 'tasks', version: '1.0.0' });
  server.tool('slow', { inputSchema: { type: 'object', properties: { ms: { type: 'number' } } }, task: true }, async ({ ms = 10 }, ctx) => {
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      ctx.signal.addEventListener('abort', () => {
        aborted = true;
        clearTimeout(timer);
        resolve();
      });
    });
    return `slept ${ms}`;
  });
  server.tool('confirm', { task: 'optional' }, async (_, ctx) => {
    const answer = await ctx.elicit({ mode: 'form', message: 'Name?', requestedSchema: nameSchema });
    return `hello ${answer.content?.name}`;
  });
  server.tool('later', { task: 'required', taskStart: 'handler' }, async (_, ctx) => {
    const answer = await ctx.elicit({ mode: 'form', message: 'Name?', requestedSchema: nameSchema });
    const started = await ctx.startTask();
    await sleep(20);
    return `${answer.content?.name} started=${started}`;
  });
  server.tool('plain', {}, async (_, ctx) => `started=${await ctx.startTask()}`);
});

const onElicitation = async () => ({ action: 'accept', content: { name: 'Ada' } });

test('the client follows tasks to their results and answers their questions', async () => {
  const client = await Client.inMemory(server, { onElicitation });
  try {
    assert.equal((await client.callTool('slow', { ms: 30 })).content[0].text, 'slept 30');
    assert.equal((await client.callTool('confirm')).content[0].text, 'hello Ada');
    assert.equal((await client.callTool('later')).content[0].text, 'Ada started=true');
    assert.equal((await client.callTool('plain')).content[0].text, 'started=false');
  } finally {
    await client.close();
  }
});

test('aborting the call cancels the task and aborts the handler', async () => {
  const client = await Client.inMemory(server);
  try {
    const controller = new AbortController();
    const call = client.callTool('slow', { ms: 60_000 }, { signal: controller.signal });
    await sleep(300);
    controller.abort();
    await assert.rejects(call);
    for (let i = 0; i < 200 && !aborted; i++) await sleep(25);
    assert.ok(aborted, 'tasks/cancel reached the handler');
  } finally {
    await client.close();
  }
});

test('task options are checked', () => {
  const bad = new Server({ name: 'bad', version: '1' });
  assert.throws(() => bad.tool('x', { task: 'always' }, () => 'x'), /task must be/);
  assert.throws(() => bad.tool('y', { task: true, taskStart: 'later' }, () => 'y'), /task start/);
});

test('a task handle shows the task, takes answers, cancels and resumes by id', async () => {
  // No handler: the caller answers the task's question itself.
  const client = await Client.inMemory(server, { capabilities: { elicitation: {} } });
  try {
    const task = await client.startToolTask('confirm');
    assert.ok(task.id);
    assert.equal(task.state.status, 'working');
    let state = await task.refresh();
    for (let i = 0; state.status !== 'input_required' && i < 500; i += 1) {
      await sleep(10);
      state = await task.refresh();
    }
    const keys = Object.keys(state.inputRequests);
    assert.equal(keys.length, 1);
    assert.equal(state.inputRequests[keys[0]].method, 'elicitation/create');
    await task.respond({ [keys[0]]: { action: 'accept', content: { name: 'Grace' } } });
    assert.equal((await task.result()).content[0].text, 'hello Grace');
    const resumed = await client.toolTask(task.id).refresh();
    assert.equal(resumed.status, 'completed');
    assert.equal(resumed.result.content[0].text, 'hello Grace');

    // Aborting the signal of result() cancels the task on the server.
    aborted = false;
    const slow = await client.startToolTask('slow', { ms: 60_000 });
    const controller = new AbortController();
    const following = slow.result({ signal: controller.signal });
    await sleep(50);
    controller.abort();
    await assert.rejects(following, (error) => error.kind === 'cancelled');
    let end = await slow.refresh();
    for (let i = 0; end.status !== 'cancelled' && i < 500; i += 1) {
      await sleep(10);
      end = await slow.refresh();
    }
    assert.equal(end.status, 'cancelled');

    // A tool without task support answers at once: no id, no state.
    const plain = await client.startToolTask('plain');
    assert.equal(plain.id, null);
    assert.equal(plain.state, null);
    assert.equal((await plain.result()).content[0].text, 'started=false');
  } finally {
    await client.close();
  }
});

test('onState sees each change of the followed task, before the result', async () => {
  const client = await Client.inMemory(server, { onElicitation });
  try {
    const seen = [];
    const task = await client.startToolTask('confirm');
    // `status|statusMessage` of each report.
    const result = await task.result({
      onState: (state) => seen.push(`${state.status}|${state.statusMessage ?? ''}`),
    });
    assert.equal(result.content[0].text, 'hello Ada');
    const statuses = seen.map((s) => s.split('|')[0]);
    assert.equal(statuses[0], 'working');
    assert.equal(statuses.at(-1), 'completed');
    assert.ok(statuses.includes('input_required'), seen.join(','));
    // Each change once: the same status with a new message is a change.
    assert.ok(seen.every((s, i) => i === 0 || s !== seen[i - 1]), seen.join(','));
  } finally {
    await client.close();
  }
});
