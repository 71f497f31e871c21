// The public typings are checked, not just written: tsc must accept typed
// usage of the package and the JS example (checkJs), and reject misuse.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');
const project = fileURLToPath(new URL('../test-support/tsconfig.json', import.meta.url));

test('index.d.ts, index.d.mts and native.d.ts type-check typed usage and the example', () => {
  const result = spawnSync(process.execPath, [tsc, '--project', project], { encoding: 'utf8' });
  assert.equal(result.status, 0, `${result.stdout}${result.stderr}`);
});
