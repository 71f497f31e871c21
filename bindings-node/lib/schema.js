'use strict';
/**
 * Schemas given as plain JSON Schema objects or as any Standard Schema
 * (https://standardschema.dev: zod v4, valibot, arktype...). ferromcp never
 * imports a schema library: it calls the object's own `~standard`
 * interface, so zod stays an optional peer dependency.
 *
 * A Standard Schema is turned into JSON Schema once, at registration, by its
 * Standard JSON Schema converter (`~standard.jsonSchema`, which zod >= 4.2
 * provides); the core validates requests against that JSON Schema. The
 * schema's own `validate` then runs on the arguments the core accepted, so
 * the handler receives its parsed output (defaults, transforms, coercions).
 *
 * @example
 * const { z } = require('zod');
 * server.tool('add', { inputSchema: z.object({ a: z.number(), b: z.number() }) },
 *   ({ a, b }) => a + b);
 */

/** The JSON Schema draft requested from Standard JSON Schema converters. */
const TARGET = 'draft-2020-12';

/**
 * Whether `schema` implements Standard Schema (has `~standard.validate`).
 * @param {unknown} schema
 * @returns {boolean}
 */
function isStandardSchema(schema) {
  if (schema === null || (typeof schema !== 'object' && typeof schema !== 'function')) return false;
  const standard = /** @type {any} */ (schema)['~standard'];
  return standard !== null && typeof standard === 'object' && typeof standard.validate === 'function';
}

/**
 * The JSON Schema for `schema` (returned unchanged when it already is one).
 * @param {unknown} schema
 * @param {'input' | 'output'} io which side of a transforming schema
 * @param {string} what for error messages, e.g. `tool "add" inputSchema`
 * @returns {Record<string, unknown>}
 */
function toJsonSchema(schema, io, what) {
  if (isStandardSchema(schema)) {
    const converter = /** @type {any} */ (schema)['~standard'].jsonSchema;
    if (converter === null || typeof converter !== 'object' || typeof converter[io] !== 'function') {
      throw new TypeError(
        `${what}: this Standard Schema (${/** @type {any} */ (schema)['~standard'].vendor}) has no JSON Schema ` +
          'converter (~standard.jsonSchema); use zod >= 4.2 or give a JSON Schema object',
      );
    }
    return converter[io]({ target: TARGET });
  }
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
    throw new TypeError(`${what} must be a JSON Schema object or a Standard Schema (e.g. zod)`);
  }
  return /** @type {Record<string, unknown>} */ (schema);
}

/**
 * A function that runs a Standard Schema's `validate` on `value` and gives
 * its output, or throws a `TypeError` listing the issues. `null` for a plain
 * JSON Schema: the core already validated, nothing is left to do.
 * @param {unknown} schema
 * @param {string} what e.g. `arguments`
 * @returns {((value: unknown) => unknown) | null} the output, or a Promise of it
 */
function parser(schema, what) {
  if (!isStandardSchema(schema)) return null;
  const standard = /** @type {any} */ (schema)['~standard'];
  /** @param {any} result */
  const take = (result) => {
    if (result.issues) {
      const issues = result.issues
        .map((/** @type {any} */ issue) => {
          const path = (issue.path ?? []).map((/** @type {any} */ p) => (typeof p === 'object' ? p.key : p));
          return path.length ? `${path.join('.')}: ${issue.message}` : issue.message;
        })
        .join('; ');
      throw new TypeError(`invalid ${what}: ${issues}`);
    }
    return result.value;
  };
  return (value) => {
    const result = standard.validate(value);
    return typeof result?.then === 'function' ? result.then(take) : take(result);
  };
}

/**
 * `handler(parsed, ...rest)` where `parsed` is `parse(first)`; a parse that
 * returns a Promise is awaited first.
 * @param {(value: unknown) => unknown} parse
 * @param {(...args: any[]) => unknown} handler
 * @returns {(first: unknown, ...rest: any[]) => unknown}
 */
function parsingFirst(parse, handler) {
  return (first, ...rest) => {
    const parsed = parse(first);
    if (parsed instanceof Promise) return parsed.then((value) => handler(value, ...rest));
    return handler(parsed, ...rest);
  };
}

module.exports = { isStandardSchema, toJsonSchema, parser, parsingFirst };
