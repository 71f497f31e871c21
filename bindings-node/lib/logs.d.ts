/**
 * Core's log events in Node. See {@link setLogger}.
 */

/** How severe an event is, most severe first; `'off'` passes none. */
export type LogLevel = 'off' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * Receives one of core's log events: its level (never `'off'`), where it
 * comes from (a Rust module path such as `ferromcp::telemetry::otlp`) and
 * its message with its fields (`OpenTelemetry export failed url=... error=...`).
 * Called on the JS thread, some time after the event.
 */
export type Logger = (level: Exclude<LogLevel, 'off'>, target: string, message: string) => void;

/** Options of {@link setLogger}. */
export interface SetLoggerOptions {
  /** The most detailed level passed on (default `'warn'`: warnings and errors). */
  level?: LogLevel;
}

/**
 * Sends ferromcp's own log events (core's `tracing` events: a failed
 * OpenTelemetry export, a refused connection, a misbehaving peer...) at
 * `level` or more severe to `logger`, replacing the logger set before;
 * `null` stops them.
 *
 * By default (until this is called) warnings and errors are printed with
 * `console.error` (`ferromcp warn ferromcp::telemetry: ...`), as Node prints
 * its own warnings; `setLogger(null)` silences them.
 *
 * The event's thread never waits for JS: events are queued (at most 1,024
 * waiting) and the logger is called on the JS thread; events that find the
 * queue full are dropped, and their count is reported with the next event
 * (`ferromcp_node::logs`). The logger never keeps the process alive.
 *
 * Returns false when the process already has another `tracing` subscriber
 * (a Rust library in the process installed one), whose logs stay its own.
 *
 * @example
 * ```js
 * import { setLogger } from 'ferromcp';
 *
 * setLogger((level, target, message) => myLogger[level === 'trace' ? 'debug' : level]({ target }, message), { level: 'info' });
 * setLogger(null); // nothing more
 * ```
 */
export function setLogger(logger: Logger | null, options?: SetLoggerOptions): boolean;
