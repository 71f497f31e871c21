// Core's log events (`tracing`) in Node: setLogger(fn, { level }), and the
// default (warnings and errors to console.error). Each case runs in a child
// process whose OTLP exporter points at a closed port (127.0.0.1:9), so
// that `telemetry.flush()` makes core warn "OpenTelemetry export failed".

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';

import { setLogger } from 'ferromcp';
import { exitWithin } from '../test-support/helpers.mjs';

const INDEX = JSON.stringify(new URL('../index.mjs', import.meta.url).href);

/** Runs `body` in a child with core's exporter failing; its stdout, stderr and exit. */
async function runChild(body) {
  const script = `
    import { Server, Client, telemetry, setLogger } from ${INDEX};
    const server = new Server({ name: 'logs', version: '1.0.0' }).tool('echo', ({ text }) => text);
    const client = await Client.inMemory(server);
    const settle = () => new Promise((resolve) => setTimeout(resolve, 200));
    /** One call, its span exported (and failing) now, the events delivered. */
    async function failExport() {
      await client.callTool('echo', { text: 'hi' });
      telemetry.flush(5000);
      await settle();
    }
    const seen = [];
    const logger = (level, target, message) => seen.push({ level, target, message });
    const show = (label) => { console.log(JSON.stringify({ label, seen: seen.splice(0) })); };
    ${body}
    await client.close();
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    env: {
      ...process.env,
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '600000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const { code } = await exitWithin(child, 30_000);
  const shown = Object.fromEntries(
    stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line))
      .map(({ label, seen }) => [label, seen]),
  );
  return { code, shown, stderr };
}

const isExportFailure = (event) =>
  event.level === 'warn' && event.target.startsWith('ferromcp::telemetry') && event.message.startsWith('OpenTelemetry export failed');

test('a core warning reaches the logger; events below its level do not; after removal nothing does', async () => {
  const { code, shown, stderr } = await runChild(`
    setLogger(logger, { level: 'error' });
    await failExport();
    show('error');
    setLogger(logger, { level: 'warn' });
    await failExport();
    show('warn');
    setLogger(null);
    await failExport();
    show('removed');
    // Set again while the process ends: it must not keep it alive.
    setLogger(logger, { level: 'trace' });
  `);
  assert.equal(code, 0, stderr);
  assert.deepEqual(
    shown.error.filter((event) => event.level !== 'error'),
    [],
    'only errors pass the level "error"',
  );
  assert.ok(shown.warn.some(isExportFailure), JSON.stringify(shown.warn));
  const failure = shown.warn.find(isExportFailure);
  assert.match(failure.message, /url=http:\/\/127\.0\.0\.1:9\/v1\/traces/);
  assert.deepEqual(shown.removed, []);
  // The default logger was replaced: nothing of core's on stderr.
  assert.doesNotMatch(stderr, /OpenTelemetry export failed/);
});

test('by default, core warnings go to console.error; setLogger(null) silences them', async () => {
  const loud = await runChild(`await failExport();`);
  assert.equal(loud.code, 0, loud.stderr);
  assert.match(loud.stderr, /^ferromcp warn ferromcp::telemetry\S*: OpenTelemetry export failed/m);

  const quiet = await runChild(`setLogger(null); await failExport();`);
  assert.equal(quiet.code, 0, quiet.stderr);
  assert.doesNotMatch(quiet.stderr, /OpenTelemetry export failed/);
});

test('setLogger checks its arguments', () => {
  assert.throws(() => setLogger('console'), TypeError);
  assert.throws(() => setLogger(() => {}, { level: 'loud' }), /unknown level "loud"/);
});
