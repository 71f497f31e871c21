#!/usr/bin/env node
'use strict';
/**
 * The `ferromcp` command of the npm package (`npx ferromcp ...`).
 *
 * Every command but `run` is the Rust command line itself (`tools`, `call`,
 * `read`, `prompts`, `discover`, `login`, `proxy`, ...), run in this process
 * by the addon's `cliMain`: the same program, options and output as the
 * `ferromcp` binary. `run` is this package's own: it serves the `Server` a
 * JavaScript module exports.
 *
 * @example
 * ```sh
 * npx ferromcp tools --stdio 'node server.mjs'
 * npx ferromcp run server.mjs                 # stdio
 * npx ferromcp run servers.mjs:admin          # its export named admin
 * npx ferromcp run server.mjs --http 8000     # http://127.0.0.1:8000/mcp
 * npx ferromcp run server.mjs --reload        # restarted when a file beside it changes
 * ```
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { parseArgs } = require('node:util');

const RUN_USAGE = `Serve the Server a JavaScript module exports

Usage: ferromcp run [OPTIONS] <FILE[:NAME]>

Arguments:
  <FILE[:NAME]>  A module (.mjs, .js, .cjs) exporting a Server: its export
                 named NAME when given, else its default export, else its
                 export named \`server\`, else the only Server it exports

Options:
      --http <PORT>  Serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio
      --host <ADDR>  Address the HTTP server listens on [default: 127.0.0.1]
      --reload       Restart the server when a file in FILE's folder changes; the
                     client stays connected and is told the lists changed
  -h, --help         Print help
`;

/** What `ferromcp --help` adds after the Rust command line's own help. */
const RUN_NOTE = `
The npm package adds:
  run       Serve the Server a JavaScript module exports (ferromcp run --help)
`;

/**
 * The command line's commands that serve until SIGTERM/SIGINT, stopping
 * gracefully on the first one (core's `run_stdio`/`run_http` install
 * signal handlers of their own).
 */
const SERVING_COMMANDS = new Set(['proxy']);

/** Options of the Node process that a `--reload` child must not repeat. */
const DEBUGGER_FLAG = /^--(inspect|debug)/;

/**
 * The addon, typed by `native.d.ts`; loaded only when needed, so that
 * `run`'s usage errors need no addon.
 * @returns {typeof import('../native')}
 */
function native() {
  return require('../lib/load-native.js');
}

/**
 * Runs the command `argv` (the arguments after `ferromcp`); resolves with
 * the exit status.
 * @param {string[]} argv
 * @returns {Promise<number>}
 */
async function main(argv) {
  if (argv[0] === 'run') return run(argv.slice(1));
  if (argv[0] === 'help' && argv[1] === 'run') return run(['--help']);
  const status = await cli(argv);
  if (status === 0 && argv.length === 1 && ['--help', '-h', 'help'].includes(argv[0])) {
    fs.writeSync(1, RUN_NOTE);
  }
  return status;
}

/**
 * Runs the command line's command `argv` (after `ferromcp`) in this process.
 * @param {string[]} argv
 * @returns {Promise<number>}
 */
function cli(argv) {
  if (SERVING_COMMANDS.has(argv[0])) listenToStopSignals();
  return native().cliMain(['ferromcp', ...argv]);
}

/**
 * Lets a serving command have SIGINT and SIGTERM. Node's own handler of
 * those signals (which restores the terminal and dies by re-raising the
 * signal) must not be the one the command's handler chains to: the
 * re-raised signal would reach the command's handler again, forever. A JS
 * listener, added before the command starts, puts libuv's handler there
 * instead; the command drains and returns, and this process exits with
 * its status. A second signal ends the process at once, as it ends the
 * Rust binary.
 */
function listenToStopSignals() {
  for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
    let received = false;
    process.on(signal, () => {
      if (received) process.exit(128 + os.constants.signals[signal]);
      received = true;
    });
  }
}

/**
 * `ferromcp run FILE[:NAME] [--http PORT] [--host ADDR] [--reload]`.
 * @param {string[]} args
 * @returns {Promise<number>}
 */
async function run(args) {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        http: { type: 'string' },
        host: { type: 'string' },
        reload: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    return usageError(/** @type {Error} */ (e).message);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    fs.writeSync(1, RUN_USAGE);
    return 0;
  }
  if (positionals.length !== 1) {
    return usageError(positionals.length === 0
      ? 'the FILE to serve is required'
      : `one FILE only, got ${positionals.length}: ${positionals.join(' ')}`);
  }
  let port;
  if (values.http !== undefined) {
    port = Number(values.http);
    if (!/^\d+$/.test(values.http) || port > 65535) {
      return usageError(`invalid --http PORT '${values.http}': a number from 0 to 65535`);
    }
  } else if (values.host !== undefined) {
    return usageError('--host needs --http PORT');
  }
  const target = parseTarget(positionals[0]);
  const file = path.resolve(target.file);
  if (!fs.existsSync(file)) {
    console.error(`ferromcp run: no such file: ${target.file}`);
    return 1;
  }
  if (values.reload) return runReloading(file, target.name, values.http, values.host);

  // On stdio, stdout is the protocol: what the module logs goes to stderr.
  if (port === undefined) logToStderr();
  let server;
  try {
    server = findServer(await import(pathToFileURL(file).href), target.file, target.name);
  } catch (e) {
    if (e instanceof NoServer) {
      console.error(`ferromcp run: ${e.message}`);
    } else {
      console.error(`ferromcp run: cannot load ${positionals[0]}:`);
      console.error(e);
    }
    return 1;
  }
  try {
    if (port === undefined) {
      await server.serveStdio();
    } else {
      await server.serveHttp({
        port,
        host: values.host,
        onListening: (/** @type {{ url: string }} */ { url }) => {
          console.error(`ferromcp run: serving ${url}`);
        },
      });
    }
  } catch (e) {
    console.error(`ferromcp run: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
  return 0;
}

/**
 * `run --reload`: the command line's `proxy` serves the client and runs
 * `ferromcp run FILE[:NAME]` (stdio) as its child, restarted when a file in
 * FILE's folder changes, so the client's connection outlives the restarts.
 * @param {string} file absolute
 * @param {string | undefined} name the export to serve, when named
 * @param {string | undefined} port
 * @param {string | undefined} host
 * @returns {Promise<number>}
 */
function runReloading(file, name, port, host) {
  const child = [
    process.execPath,
    // --import, --conditions, ... apply to the child too; a debugger port would clash.
    ...process.execArgv.filter((flag) => !DEBUGGER_FLAG.test(flag)),
    __filename,
    'run',
    name === undefined ? file : `${file}:${name}`,
  ];
  const serve = port === undefined
    ? ['--stdio']
    : ['--http', port, ...(host === undefined ? [] : ['--host', host])];
  return cli(['proxy', ...serve, '--reload', path.dirname(file), '--', ...child]);
}

/** The module exports no Server to serve (or several, none chosen). */
class NoServer extends Error {}

/** An export's name as `FILE:NAME` may give it. */
const EXPORT_NAME = /^[A-Za-z_$][\w$]*$/;

/**
 * `run`'s target: `FILE` or `FILE:NAME`. A `:` starts a name only when what
 * follows it is an identifier and the whole target is no file, so that a
 * Windows path (`C:\dir\server.mjs`) stays a path.
 * @param {string} target as given on the command line
 * @returns {{ file: string, name: string | undefined }}
 */
function parseTarget(target) {
  const colon = target.lastIndexOf(':');
  const name = target.slice(colon + 1);
  if (colon > 0 && EXPORT_NAME.test(name) && !fs.existsSync(target)) {
    return { file: target.slice(0, colon), name };
  }
  return { file: target, name: undefined };
}

/**
 * Whether `value` is a ferromcp `Server`: an instance of this package's
 * class or, from another copy of the package, an object with its serving
 * methods.
 * @param {unknown} value
 * @returns {value is import('../index').Server}
 */
function isServer(value) {
  if (value === null || typeof value !== 'object') return false;
  const { Server } = require('../index.js');
  if (value instanceof Server) return true;
  const candidate = /** @type {{ serveStdio?: unknown, serveHttp?: unknown }} */ (value);
  return typeof candidate.serveStdio === 'function' && typeof candidate.serveHttp === 'function';
}

/**
 * The Server a module exports: its export named `name` when given, else its
 * default export, else its export named `server`, else the only Server
 * among its exports. A CommonJS module's `module.exports` object is its
 * default export; its members count as exports.
 * @param {Record<string, unknown>} namespace
 * @param {string} shown the file as given on the command line
 * @param {string} [name] the export to serve (`FILE:NAME`)
 * @returns {import('../index').Server}
 */
function findServer(namespace, shown, name) {
  /** @type {Map<string, unknown>} */
  const exports = new Map(Object.entries(namespace).filter(([key]) => key !== 'default'));
  const commonJs = namespace.default;
  if (commonJs !== null && typeof commonJs === 'object' && Object.getPrototypeOf(commonJs) === Object.prototype) {
    for (const [key, value] of Object.entries(commonJs)) if (!exports.has(key)) exports.set(key, value);
  }
  if (name !== undefined) {
    const value = name === 'default' ? namespace.default : exports.get(name);
    if (isServer(value)) return value;
    if ((name === 'default' && namespace.default !== undefined) || exports.has(name)) {
      throw new NoServer(`${shown}:${name} is not a Server (${describe(value)})`);
    }
    const names = [...(namespace.default === undefined ? [] : ['default']), ...exports.keys()];
    throw new NoServer(`${shown} has no export named ${name} (its exports: ${names.join(', ') || 'none'})`);
  }
  if (isServer(namespace.default)) return namespace.default;
  const named = exports.get('server');
  if (isServer(named)) return named;
  const servers = [...exports].filter(([, value]) => isServer(value));
  const distinct = new Set(servers.map(([, value]) => value));
  if (distinct.size === 1) return /** @type {import('../index').Server} */ (servers[0][1]);
  if (distinct.size > 1) {
    throw new NoServer(`${shown} exports several Servers (${servers.map(([key]) => key).join(', ')}): ` +
      `name the one to serve (\`ferromcp run ${shown}:${servers[0][0]}\`), export it as default, or call it \`server\``);
  }
  const found = Object.entries(namespace).map(([name, value]) => `${name} (${describe(value)})`);
  throw new NoServer(`${shown} exports no Server (${found.length === 0 ? 'it exports nothing' : `its exports: ${found.join(', ')}`}); ` +
    "export the one to serve: `export default server` (or `module.exports = server`)");
}

/**
 * A value's kind, for the error naming what a module exports.
 * @param {unknown} value
 */
function describe(value) {
  if (value === null) return 'null';
  if (typeof value === 'function') return value.toString().startsWith('class') ? 'class' : 'function';
  if (typeof value !== 'object') return typeof value;
  if (Array.isArray(value)) return 'array';
  const name = Object.getPrototypeOf(value)?.constructor?.name;
  return name && name !== 'Object' ? `a ${name}` : 'object';
}

/** Sends what `console` writes to stdout (`log`, `info`, `table`, ...) to stderr. */
function logToStderr() {
  const stderr = new console.Console({ stdout: process.stderr, stderr: process.stderr });
  const target = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (console));
  const source = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (stderr));
  for (const key of Object.keys(source)) {
    if (typeof source[key] === 'function') target[key] = source[key];
  }
}

/**
 * A usage error: the message and `run`'s usage to stderr, status 2 (as the
 * command line's own usage errors).
 * @param {string} message
 */
function usageError(message) {
  process.stderr.write(`error: ${message}\n\nUsage: ferromcp run [OPTIONS] <FILE[:NAME]>\n\n` +
    "For more information, try 'ferromcp run --help'.\n");
  return 2;
}

main(process.argv.slice(2)).then(
  (status) => process.exit(status),
  (e) => {
    console.error('ferromcp:', e);
    process.exit(1);
  },
);
