// A module for `ferromcp run` that exports no Server (test/cli.test.mjs).

export const answer = 42;
export function helper() {}
