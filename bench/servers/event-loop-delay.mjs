// Event-loop delay of a Node server under load, for mcp-bench; preloaded
// into a server unchanged with `node --import ./bench/servers/event-loop-delay.mjs
// SERVER.mjs ...` (bench/servers.json).
//
// Each SIGUSR2 prints one stderr line `mcp-bench event-loop-delay {json}`
// with the delay since the previous SIGUSR2 (or since start), then starts
// over: mcp-bench signals right before and right after its c=32 phase and
// reads the second line from the server's log. Figures are in
// milliseconds: p50, p99, max and mean of how late the sampling timer of
// perf_hooks.monitorEventLoopDelay fired (it records the whole interval
// between two firings, `RESOLUTION_MS` when the loop is idle, so that is
// subtracted: an idle loop reports 0).
//
// A signal handler does not keep the process alive, so a server that
// would exit still exits.

import { monitorEventLoopDelay } from 'node:perf_hooks';

// 1 ms: the finest sampling perf_hooks offers, so a delay shorter than the
// default 10 ms is not smoothed away; the timer costs about 1000 wake-ups/s.
const RESOLUTION_MS = 1;
const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
histogram.enable();

const ms = (ns) => Math.max(0, Math.round(ns / 1e4) / 100 - RESOLUTION_MS);

process.on('SIGUSR2', () => {
  const figures = {
    samples: histogram.count,
    p50_ms: ms(histogram.percentile(50)),
    p99_ms: ms(histogram.percentile(99)),
    max_ms: ms(histogram.max),
    mean_ms: ms(histogram.mean),
  };
  histogram.reset();
  process.stderr.write(`mcp-bench event-loop-delay ${JSON.stringify(figures)}\n`);
});
