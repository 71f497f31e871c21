// The Node client against a misbehaving server (the Rust fixture
// target/bin/hostile-server, from `make cargo-build`, which the Rust, Python
// and C client tests start too). The limits live in core; these tests cover
// the Node side of the path: the options, the onProgress queue to JS, and the
// errors thrown. Memory is measured in a child process of its own.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { existsSync } from 'node:fs';
import path from 'node:path';

import { Client, McpError } from '../index.mjs';
import { REPO_ROOT } from '../test-support/helpers.mjs';

const HOSTILE = path.join(REPO_ROOT, 'target/bin/hostile-server');
const ECHO_SERVER = path.join(REPO_ROOT, 'target/bin/echo-server');
const skip = existsSync(HOSTILE) ? false : 'target/bin/hostile-server missing (make cargo-build)';
const INDEX = path.join(REPO_ROOT, 'bindings-node/index.mjs');
// What a client may grow to while a server misbehaves (without the limits
// these cases passed 1.5 GB).
const MAX_RSS_MIB = 400;

/** Starts the hostile server over HTTP; resolves to `{ url, stop }`. */
async function hostileHttp(mode, ...extra) {
  const child = spawn(HOSTILE, [mode, '--http', '0', ...extra], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const [line] = await Promise.race([
    new Promise((resolve) => lines.once('line', (l) => resolve([l]))),
    new Promise((_, reject) => child.once('exit', () => reject(new Error('hostile-server exited')))),
  ]);
  const port = line.trim().split(' ').at(-1);
  return { url: `http://127.0.0.1:${port}/mcp`, stop: () => child.kill() };
}

/**
 * Runs an ESM snippet in a fresh Node; its output and peak RSS (MiB). The
 * peak is the process's own (VmHWM): getrusage's maxRSS survives exec on
 * Linux and would report the test runner's own peak.
 */
function peakRss(code, ...args) {
  const footer = `\nimport { readFileSync as __read } from 'node:fs';
process.stdout.write('RSS ' + Math.floor(Number(/VmHWM:\\s+(\\d+)/.exec(__read('/proc/self/status', 'utf8'))[1]) / 1024) + '\\n');\n`;
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', code + footer, ...args], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  const lines = output.trim().split('\n');
  return { output: lines.slice(0, -1).join('\n'), rss: Number(lines.at(-1).split(' ')[1]) };
}

function slowProgress(seen) {
  return (update) => {
    seen.push(update.progress);
    const until = performance.now() + 0.2; // far slower than the flood
    while (performance.now() < until);
  };
}

test('an endless SSE event or line is refused with an error naming the limit', { skip }, async () => {
  for (const mode of ['endless-sse', 'endless-line']) {
    const server = await hostileHttp(mode);
    const client = await Client.http(server.url, { limits: { maxMessageBytes: 1 << 20 } });
    try {
      await assert.rejects(client.callTool('flood'), (e) => {
        assert.ok(e instanceof McpError);
        assert.match(e.message, /1048576-byte limit \(max_message_bytes\)/);
        return true;
      });
      // The client goes on.
      assert.equal((await client.listTools()).tools.length, 1, mode);
    } finally {
      await client.close();
      server.stop();
    }
  }
});

test('an endless SSE event leaves memory bounded with the default limit', { skip }, async () => {
  const server = await hostileHttp('endless-sse');
  try {
    const { output, rss } = peakRss(
      `import { Client } from ${JSON.stringify(INDEX)};
       const client = await Client.http(process.argv[1]);
       try { await client.callTool('flood'); } catch (e) { console.log(e.message); }
       await client.close();`,
      server.url,
    );
    assert.match(output, /max_message_bytes/);
    assert.ok(rss < MAX_RSS_MIB, `peak RSS ${rss} MiB`);
  } finally {
    server.stop();
  }
});

test('a JSON response to another request is an error, not its result', { skip }, async () => {
  const server = await hostileHttp('wrong-id');
  const client = await Client.http(server.url);
  try {
    await assert.rejects(client.callTool('flood'), /not request/);
  } finally {
    await client.close();
    server.stop();
  }
});

for (const transport of ['http', 'stdio']) {
  test(`a progress flood with a slow onProgress returns the answer (${transport})`, { skip }, async () => {
    const args = ['progress-flood', '--count', '100000'];
    const server = transport === 'http' ? await hostileHttp(...args) : null;
    const client = server
      ? await Client.http(server.url, { timeout: 60_000 })
      : await Client.stdio({ command: HOSTILE, args, timeout: 60_000 });
    try {
      const seen = [];
      const result = await client.callTool('flood', {}, { onProgress: slowProgress(seen) });
      assert.equal(result.content[0].text, 'done');
      assert.equal(seen.at(-1), 100_000, 'the newest progress reached JS before the result');
      assert.ok(seen.length < 100_000, 'the flood is coalesced');
    } finally {
      await client.close();
      server?.stop();
    }
  });
}

test('a progress flood leaves memory bounded', { skip }, () => {
  const { output, rss } = peakRss(
    `import { Client } from ${JSON.stringify(INDEX)};
     const client = await Client.stdio({ command: process.argv[1], args: ['progress-flood', '--count', '300000'], timeout: 60_000 });
     const result = await client.callTool('flood', {}, { onProgress: () => {
       const until = performance.now() + 0.1; while (performance.now() < until);
     } });
     console.log(result.content[0].text);
     await client.close();`,
    HOSTILE,
  );
  assert.equal(output, 'done');
  assert.ok(rss < MAX_RSS_MIB, `peak RSS ${rss} MiB`);
});

test('stderr without a newline leaves memory bounded', { skip }, () => {
  const { output, rss } = peakRss(
    `import { Client } from ${JSON.stringify(INDEX)};
     const client = await Client.stdio({ command: process.argv[1], args: ['stderr-flood'] });
     const until = Date.now() + 2000;
     while (Date.now() < until) {
       const r = await client.callTool('flood');
       if (r.content[0].text !== 'ok') throw new Error('bad answer');
       await new Promise((resolve) => setTimeout(resolve, 50));
     }
     console.log('served');
     await client.close();`,
    HOSTILE,
  );
  assert.equal(output, 'served');
  assert.ok(rss < MAX_RSS_MIB, `peak RSS ${rss} MiB`);
});

test('a ping flood is answered on a bounded number of connections', { skip }, async () => {
  const server = await hostileHttp('ping-flood', '--count', '10000');
  const client = await Client.http(server.url);
  try {
    assert.equal((await client.listTools()).tools.length, 2);
    assert.equal(client.isLegacy, true);
    assert.equal(client.protocolVersion, '2025-11-25');
    const deadline = Date.now() + 60_000;
    let stats;
    for (;;) {
      stats = JSON.parse((await client.callTool('stats')).content[0].text);
      if (stats.answered === 10_000 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.equal(stats.answered, 10_000, JSON.stringify(stats));
    // The GET stream, the stats call and at most 4 answers at once.
    assert.ok(stats.maxConnections <= 7, JSON.stringify(stats));
  } finally {
    await client.close();
    server.stop();
  }
});

test('protocolVersion is the negotiated one on a legacy connection', {
  skip: existsSync(ECHO_SERVER) ? false : 'target/bin/echo-server missing (make cargo-build)',
}, async () => {
  const client = await Client.stdio({ command: ECHO_SERVER, era: 'legacy' });
  try {
    await client.listTools();
    assert.equal(client.protocolVersion, '2025-11-25');
  } finally {
    await client.close();
  }
});

test('limits are checked by name', { skip }, async () => {
  await assert.rejects(
    async () => {
      const client = await Client.stdio({ command: HOSTILE, args: ['wrong-id'], limits: { bogus: 1 } });
      await client.listTools();
    },
    /bogus/,
  );
});
