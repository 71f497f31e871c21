// When no addon loads (a platform without a prebuilt package, or the platform
// package left out by --omit=optional), requiring ferromcp must fail with an
// error that names the platform and says how to build from source, not only
// napi-rs's generic "Cannot find native binding" (lib/load-native.js).
// NAPI_RS_NATIVE_LIBRARY_PATH pointing at a missing file makes the loader
// find nothing, whatever is built in the tree.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

import { REPO_ROOT } from '../test-support/helpers.mjs';

for (const [kind, args] of [
  ['CommonJS', ['-e', "require('./bindings-node/index.js')"]],
  ['ESM', ['--input-type=module', '-e', "import './bindings-node/index.mjs'"]],
]) {
  test(`${kind}: no loadable addon -> an error naming the platform and the build from source`, () => {
    const run = spawnSync(process.execPath, args, {
      cwd: REPO_ROOT,
      env: { ...process.env, NAPI_RS_NATIVE_LIBRARY_PATH: '/nonexistent/ferromcp.node' },
      encoding: 'utf8',
    });
    assert.notEqual(run.status, 0, 'the package loaded without an addon');
    const platform = `${process.platform}-${process.arch}`;
    assert.match(run.stderr, new RegExp(`ferromcp: cannot load the native addon for ${platform}`));
    assert.match(run.stderr, /make build-node RELEASE=1/);
    assert.match(run.stderr, /code: 'ERR_FERROMCP_NO_NATIVE_ADDON'/);
    // napi-rs's own chain stays reachable (the cause) for debugging.
    assert.match(run.stderr, /Cannot find native binding/);
  });
}
