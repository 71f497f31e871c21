'use strict';
/**
 * Loads the native addon through the napi-rs loader (`../native.js`, which is
 * generated: `make regen-node` rewrites it) and, when no addon fits this
 * machine, replaces napi-rs's generic "Cannot find native binding" with what
 * the user needs to know: which platform was looked for, which prebuilt
 * platform packages exist, and how to build the addon from source.
 *
 * @example
 * const native = require('./lib/load-native.js');
 * native.errorCodes(); // { PARSE_ERROR: -32700, ... }
 */

/**
 * The platforms with a prebuilt addon: the optionalDependencies `make dist`
 * writes into the published package.json (none in a source checkout).
 */
const PREBUILT = Object.keys(require('../package.json').optionalDependencies || {})
  .map((name) => name.replace(/^ferromcp-/, ''));

/** This machine as napi-rs names platforms: `linux-x64-gnu`, `darwin-arm64`, ... */
function platformName() {
  let name = `${process.platform}-${process.arch}`;
  if (process.platform === 'linux') {
    const report = process.report && typeof process.report.getReport === 'function'
      ? process.report.getReport()
      : null;
    const glibc = report && report.header && report.header.glibcVersionRuntime;
    name += glibc ? '-gnu' : '-musl';
  }
  return name;
}

/**
 * The Windows addon is linked with MinGW-w64 (scripts/dist.py says why) and
 * published as `ferromcp-win32-x64-gnu`. napi-rs's loader looks for that name
 * only in a MinGW-built Node; the official Node is MSVC-built and loads it
 * just as well (the addon speaks N-API's C ABI and imports only system DLLs).
 */
function loadWindowsGnu() {
  try {
    return require('../ferromcp.win32-x64-gnu.node');
  } catch {
    return require('ferromcp-win32-x64-gnu');
  }
}

try {
  try {
    module.exports = require('../native.js');
  } catch (cause) {
    if (process.platform !== 'win32' || process.arch !== 'x64') throw cause;
    module.exports = loadWindowsGnu();
  }
} catch (cause) {
  const platform = platformName();
  const hint = PREBUILT.includes(platform)
    ? `The prebuilt addon for ${platform} is the optional dependency ferromcp-${platform}; ` +
      'it was not installed (installed with --omit=optional or --no-optional, or with a lock ' +
      'file made on another platform: remove node_modules and the lock file, then install again).'
    : `ferromcp has no prebuilt addon for ${platform} ` +
      `(${PREBUILT.length > 0 ? `prebuilt: ${PREBUILT.join(', ')}` : 'this copy lists no prebuilt addon'}).`;
  const error = new Error(
    `ferromcp: cannot load the native addon for ${platform}. ${hint} ` +
      'To build it from source (Rust >= 1.88, see rust-toolchain.toml): ' +
      'git clone https://github.com/ferromcp/ferromcp && cd ferromcp && make build-node RELEASE=1, ' +
      'then point NAPI_RS_NATIVE_LIBRARY_PATH at bindings-node/ferromcp.' + platform + '.node ' +
      '(or use that checkout\'s bindings-node directory as the package).',
  );
  error.code = 'ERR_FERROMCP_NO_NATIVE_ADDON';
  error.cause = cause;
  throw error;
}
