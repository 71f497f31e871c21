// The client side of mcp-bench's client line protocol, for Node clients
// (see bench/src/clients.rs): print `ready <protocol-version>` once
// connected, then for each `run <in-flight> <seconds>` line on stdin call
// echo for that long with that many calls in flight and print
// `done <ok> <errors> <seconds>` (`error <message>` first when a call
// failed). stdin's end ends the client. Each program supplies only one
// `echo(text) -> Promise<string>` on its client library; this module gives
// every call its own text and checks the reply. Used by
// bench/clients/node-client.mjs (ferromcp) and
// bench/sdk/typescript-client/client.mjs (the official SDK v2).

import { createInterface } from 'node:readline';

const say = (line) => process.stdout.write(`${line}\n`);

/**
 * Runs the phases; resolves when stdin ends.
 * @param {(text: string) => Promise<unknown>} echo the reply's first text
 * @param {() => string} protocolVersion asked after the first call
 */
export async function serve(echo, protocolVersion) {
  const first = await echo('ready?');
  if (first !== 'ready?') {
    say(`error wrong reply to the first call: ${JSON.stringify(first)}`);
    process.exitCode = 1;
    return;
  }
  say(`ready ${protocolVersion()}`);
  let counter = 0;
  // Lines are read one at a time, between phases: nothing is parsed while
  // a phase runs.
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  for (;;) {
    const { value: line, done } = await lines.next();
    if (done) return;
    const words = line.trim().split(/\s+/);
    if (words.length !== 3 || words[0] !== 'run') continue;
    const inFlight = Math.max(1, Number.parseInt(words[1], 10));
    const seconds = Number.parseFloat(words[2]);
    let ok = 0;
    let errors = 0;
    let firstError = null;
    const started = performance.now();
    const deadline = started + seconds * 1000;
    const worker = async () => {
      while (performance.now() < deadline) {
        const text = `hello-${counter++}`;
        try {
          const got = await echo(text);
          if (got === text) {
            ok += 1;
          } else {
            errors += 1;
            firstError ??= `wrong reply for ${JSON.stringify(text)}: ${JSON.stringify(got)}`;
          }
        } catch (e) {
          errors += 1;
          firstError ??= String(e?.stack ?? e).replace(/\n/g, ' ');
        }
      }
    };
    await Promise.all(Array.from({ length: inFlight }, worker));
    const elapsed = (performance.now() - started) / 1000;
    if (firstError !== null) say(`error ${firstError}`);
    say(`done ${ok} ${errors} ${elapsed.toFixed(6)}`);
  }
}
