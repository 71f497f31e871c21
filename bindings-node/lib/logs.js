'use strict';
/**
 * Core's log events in Node: `setLogger`. The addon's `src/logs.rs` installs
 * a `tracing` subscriber (once per process) that hands each event at or above
 * the level to the function through a bounded, non-blocking threadsafe
 * function (never keeping the event loop alive; events that find its queue
 * full are dropped and counted). By default warnings and errors go to
 * `console.error`, as Node prints its own warnings and Python's `logging`
 * prints unhandled warnings to stderr.
 */

const native = require('./load-native.js');

/** @type {Record<string, number>} */
const LEVELS = { off: 0, error: 1, warn: 2, info: 3, debug: 4, trace: 5 };

/**
 * The default logger: `ferromcp warn ferromcp::telemetry: OpenTelemetry export failed ...`.
 * @param {string} level @param {string} target @param {string} message
 */
function toConsole(level, target, message) {
  console.error(`ferromcp ${level} ${target}: ${message}`);
}

/**
 * @param {((level: string, target: string, message: string) => void) | null} logger
 * @param {{ level?: string }} [options]
 * @returns {boolean}
 */
function setLogger(logger, options = {}) {
  if (logger !== null && typeof logger !== 'function') {
    throw new TypeError('setLogger: the logger must be a function or null');
  }
  const name = options.level ?? 'warn';
  const level = LEVELS[name];
  if (level === undefined) {
    throw new TypeError(`setLogger: unknown level ${JSON.stringify(name)} (one of ${Object.keys(LEVELS).join(', ')})`);
  }
  return native.logsSet(logger, logger === null ? 0 : level);
}

/** At load: warnings and errors to `console.error` until `setLogger` is called. */
function installDefault() {
  setLogger(toConsole, { level: 'warn' });
}

module.exports = { setLogger, installDefault };
