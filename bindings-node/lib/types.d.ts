/**
 * Types of the server surface beyond tools: schemas (JSON Schema or any
 * Standard Schema such as zod v4) and what handlers receive from them,
 * resources, prompts, completion, and the request context's asynchronous
 * side (`ctx.elicit`, `ctx.sample`, `ctx.listRoots`, `ctx.signal`).
 * Re-exported by `index.d.ts`; import them from `'ferromcp'`.
 *
 * @packageDocumentation
 */

import type { RequestContext as NativeRequestContext, CacheHint } from '../native';
import type { Visible } from './middleware';

/** A JSON Schema object (`inputSchema`, `outputSchema`, `requestedSchema`). */
export type JsonSchema = Record<string, unknown>;

/**
 * The Standard Schema interface (https://standardschema.dev) that zod v4,
 * valibot and arktype implement; ferromcp needs no schema library of its
 * own. To be used as a schema here it must also offer the Standard JSON
 * Schema converter (`~standard.jsonSchema`, zod >= 4.2 does).
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => unknown;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  };
}

/** A schema: a JSON Schema object or a Standard Schema. */
export type Schema = JsonSchema | StandardSchemaV1;

/**
 * The value a schema describes: a Standard Schema's output type, or for a
 * JSON Schema written inline (its literal types are kept) the object,
 * string, number, boolean, array or enum it describes; `any` when the
 * schema says too little.
 *
 * @example
 * ```ts
 * type Args = Infer<{ type: 'object'; properties: { n: { type: 'integer' } }; required: ['n'] }>;
 * // { n: number }
 * ```
 */
export type Infer<S> =
  S extends StandardSchemaV1<any, infer Output> ? Output : FromJsonSchema<S>;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** What an inline JSON Schema describes (see {@link Infer}). */
export type FromJsonSchema<S> = S extends { readonly enum: readonly (infer E)[] }
  ? E
  : S extends { readonly const: infer C }
    ? C
    : S extends { readonly type: 'object'; readonly properties: infer P extends Record<string, unknown> }
      ? Simplify<
          {
            -readonly [K in keyof P as K extends RequiredOf<S> ? K : never]: FromJsonSchema<P[K]>;
          } & {
            -readonly [K in keyof P as K extends RequiredOf<S> ? never : K]?: FromJsonSchema<P[K]>;
          }
        >
      : S extends { readonly type: 'string' }
        ? string
        : S extends { readonly type: 'number' | 'integer' }
          ? number
          : S extends { readonly type: 'boolean' }
            ? boolean
            : S extends { readonly type: 'null' }
              ? null
              : S extends { readonly type: 'array'; readonly items: infer I }
                ? FromJsonSchema<I>[]
                : any;

type RequiredOf<S> = S extends { readonly required: readonly (infer R extends string)[] } ? R : never;

/** Extra fields every registration may carry. */
export interface Decorations {
  /** Human-readable title. */
  title?: string;
  /** What it is for (for the model and the user). */
  description?: string;
  /** Icons (`{ src, mimeType?, sizes?, theme? }`). */
  icons?: Array<{ src: string; mimeType?: string; sizes?: string[]; theme?: 'light' | 'dark' }>;
  /** Extra metadata. */
  _meta?: Record<string, unknown>;
  /**
   * OAuth scopes a request's access token needs to use it when the server
   * is served with `auth` (HTTP 403 `insufficient_scope` otherwise).
   */
  scopes?: string[];
  /**
   * Who sees it (lists) and may use it; to anyone else it is as unknown as
   * an item never registered. A predicate of the caller (it may be
   * `async`); the server-wide {@link Server.visibility} rule must allow
   * too. See {@link Visible}.
   */
  visible?: Visible;
}

/**
 * A completer: the values that complete `value` for one prompt argument or
 * template variable, given the arguments already filled in. Returns a list
 * of strings or `{ values, total?, hasMore? }` (or a Promise of one); the
 * core caps the answer at 100 values.
 */
export type Completer = (
  value: string,
  args: Record<string, string>,
  ctx: RequestContext,
) => string[] | CompletionValues | Promise<string[] | CompletionValues>;

/** A completion answer with its totals. */
export interface CompletionValues {
  values: string[];
  total?: number;
  hasMore?: boolean;
}

/** The variable names of an RFC 6570 URI template, e.g. `'users://{id}/{+path}'` -> `'id' | 'path'`. */
export type TemplateVariables<T extends string> = T extends `${string}{${infer Expression}}${infer Rest}`
  ? ExpressionNames<Expression> | TemplateVariables<Rest>
  : never;

type ExpressionNames<E extends string> = E extends `${'+' | '#' | '.' | '/' | ';' | '?' | '&'}${infer Names}`
  ? VariableNames<Names>
  : VariableNames<E>;

type VariableNames<N extends string> = N extends `${infer First},${infer Rest}`
  ? VariableName<First> | VariableNames<Rest>
  : VariableName<N>;

type VariableName<V extends string> = V extends `${infer Name}*`
  ? Name
  : V extends `${infer Name}:${string}`
    ? Name
    : V;

/** What a resource handler is called with. */
export interface ResourceRequest<Variables extends string = string> {
  /** The URI the client read. */
  uri: string;
  /** The values of the template's variables (empty for a fixed URI). */
  variables: { [K in Variables]: string };
}

/** A resource's definition, besides its URI. */
export interface ResourceDefinition<Variables extends string = string> extends Decorations {
  /** Programmatic name (default: the URI). */
  name?: string;
  /** MIME type of the contents, e.g. `"text/plain"`. */
  mimeType?: string;
  /** Size in bytes, when known. */
  size?: number;
  /** Hints for the client (`audience`, `priority`, `lastModified`). */
  annotations?: Record<string, unknown>;
  /** Completers for the template's variables. */
  complete?: { [K in Variables]?: Completer };
  /**
   * The caching hint its reads carry (`{ ttlMs, cacheScope }`), instead of
   * the server-wide `caching.resourceRead`.
   */
  cache?: CacheHint;
}

/**
 * A resource implementation: returns a string (text), a `Uint8Array` or
 * `Buffer` (a blob), a contents item `{ uri, text | blob, mimeType? }`, a
 * list of them or `{ contents }`, or a Promise of one.
 */
export type ResourceHandler<Variables extends string = string> = (
  request: ResourceRequest<Variables>,
  ctx: RequestContext,
) => unknown;

/** One argument of a prompt. */
export interface PromptArgument {
  name: string;
  title?: string;
  description?: string;
  required?: boolean;
  /** Completes this argument. */
  complete?: Completer;
}

/** The arguments a prompt handler gets for an `arguments` list. */
export type PromptArgs<A> = A extends readonly PromptArgument[]
  ? Simplify<
      { [P in A[number] as P extends { required: true } ? P['name'] : never]: string } & {
        [P in A[number] as P extends { required: true } ? never : P['name']]?: string;
      }
    >
  : Record<string, string>;

/** A prompt's definition, besides its name. */
export interface PromptDefinition<A extends readonly PromptArgument[] = readonly PromptArgument[], S = undefined>
  extends Decorations {
  /** The arguments, each `{ name, description?, required?, complete? }`. */
  arguments?: A;
  /**
   * The arguments as an object schema (JSON Schema or `z.object({...})`),
   * instead of `arguments`; the handler gets its parsed output.
   */
  argsSchema?: S;
  /** Completers by argument name. */
  complete?: Record<string, Completer>;
}

/**
 * A prompt implementation: returns a string (one user message), a message
 * `{ role, content }`, a list of them or a `GetPromptResult`
 * `{ messages, description? }`, or a Promise of one.
 */
export type PromptHandler<Args = Record<string, string>> = (args: Args, ctx: RequestContext) => unknown;

/** The `completion/complete` params a catch-all completion provider gets. */
export interface CompleteParams {
  ref: { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string };
  argument: { name: string; value: string };
  context?: { arguments?: Record<string, string> };
}

/** Options of an ask. */
export interface AskOptions {
  /**
   * The question's key in a 2026-07-28 `inputRequests` map. Default: its
   * position among the handler's asks (stable for a deterministic handler).
   */
  key?: string;
}

/** The user's answer to an elicitation. */
export type ElicitResult<Content = Record<string, unknown>> =
  | { action: 'accept'; content: Content; _meta?: Record<string, unknown> }
  | { action: 'decline' | 'cancel'; content?: undefined; _meta?: Record<string, unknown> };

/** `elicitation/create` params in URL mode: the user is sent to `url`. */
export interface ElicitUrlParams {
  mode: 'url';
  message: string;
  url: string;
  elicitationId: string;
  _meta?: Record<string, unknown>;
}

/** `elicitation/create` params in form mode. */
export interface ElicitFormParams<S extends Schema = Schema> {
  mode?: 'form';
  message: string;
  requestedSchema: S;
  _meta?: Record<string, unknown>;
}

/** A message of a sampling request or result. */
export interface SamplingMessage {
  role: 'user' | 'assistant';
  content: Record<string, unknown> | Array<Record<string, unknown>>;
  _meta?: Record<string, unknown>;
}

/** `sampling/createMessage` params. */
export interface CreateMessageParams {
  messages: SamplingMessage[];
  maxTokens: number;
  systemPrompt?: string;
  temperature?: number;
  stopSequences?: string[];
  modelPreferences?: Record<string, unknown>;
  includeContext?: 'none' | 'thisServer' | 'allServers';
  metadata?: Record<string, unknown>;
  tools?: Array<Record<string, unknown>>;
  toolChoice?: Record<string, unknown>;
  [key: string]: unknown;
}

/** The client's answer to a sampling request. */
export interface CreateMessageResult extends SamplingMessage {
  model: string;
  stopReason?: string;
  [key: string]: unknown;
}

/** The client's roots. */
export interface ListRootsResult {
  roots: Array<{ uri: string; name?: string; _meta?: Record<string, unknown> }>;
  [key: string]: unknown;
}

/**
 * What a handler knows about the request it serves, and the channels it
 * may use while it runs: request info, `progress`, `log`, `signal`, and
 * asking the client for input (`elicit`, `sample`, `listRoots`), which
 * works the same for 2026-07-28 clients (the core ends the round with
 * `input_required` and runs the handler again with the answers) and
 * 2025-11-25 sessions (a live request to the client).
 *
 * @example
 * ```js
 * server.tool('book', { inputSchema: { type: 'object' } }, async (args, ctx) => {
 *   const answer = await ctx.elicit('Confirm the booking?', {
 *     type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'],
 *   });
 *   if (answer.action !== 'accept' || !answer.content.ok) return 'Not booked.';
 *   const res = await fetch('https://example.com/book', { method: 'POST', signal: ctx.signal });
 *   return res.ok ? 'Booked.' : 'Failed.';
 * });
 * ```
 */
export declare class RequestContext extends NativeRequestContext {
  /**
   * Aborted when the core stops waiting for this run of the handler: the
   * client cancelled or went away, or (2026-07-28) the round ended to ask
   * the client for input. Pass it to `fetch` and other abortable work.
   */
  readonly signal: AbortSignal;

  /**
   * Asks the user to fill a form (`elicitation/create`, mode `form`);
   * `schema` is a flat object JSON Schema or a Standard Schema (its output
   * type types `content`, and it parses an accepted answer).
   *
   * @example
   * ```js
   * const { action, content } = await ctx.elicit('Your name?', z.object({ name: z.string() }));
   * ```
   * @throws {McpError} code -32021 when the client cannot elicit.
   */
  elicit<const S extends Schema>(message: string, schema: S, options?: AskOptions): Promise<ElicitResult<Infer<S>>>;
  /** Asks with full `elicitation/create` params: a form, or a URL to open (mode `url`). */
  elicit<const S extends Schema>(params: ElicitFormParams<S>, options?: AskOptions): Promise<ElicitResult<Infer<S>>>;
  elicit(params: ElicitUrlParams, options?: AskOptions): Promise<ElicitResult<never>>;

  /**
   * Asks the client's model (`sampling/createMessage`).
   *
   * @example
   * ```js
   * const reply = await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: 'Hi' } }], maxTokens: 50 });
   * ```
   */
  sample(params: CreateMessageParams, options?: AskOptions): Promise<CreateMessageResult>;

  /**
   * Asks for the client's roots (`roots/list`).
   *
   * @example
   * ```js
   * const { roots } = await ctx.listRoots();
   * ```
   */
  listRoots(options?: AskOptions): Promise<ListRootsResult>;

  /**
   * Asks the client for any kind of input, with its raw params; `elicit`,
   * `sample` and `listRoots` are shorthands.
   *
   * @example
   * ```js
   * const roots = await ctx.ask('roots', {}, { key: 'client_roots' });
   * ```
   */
  ask(kind: 'elicitation' | 'sampling' | 'roots', params: Record<string, unknown>, options?: AskOptions): Promise<any>;
}

/**
 * A whole `tools/call` result, for a tool that returns more than a value:
 * image, audio or resource content, several blocks, `isError`, `_meta`. The
 * core builds and checks the result from these parts (a string item is a
 * text block).
 *
 * @example
 * ```js
 * server.tool('logo', {}, () => new ToolResult({
 *   content: ['The logo:', { type: 'image', data: PNG_BASE64, mimeType: 'image/png' }],
 * }));
 * ```
 */
export declare class ToolResult {
  constructor(parts?: {
    content?: Array<string | Record<string, unknown>> | string | Record<string, unknown>;
    structuredContent?: Record<string, unknown>;
    isError?: boolean;
    _meta?: Record<string, unknown>;
  });
  content: Array<string | Record<string, unknown>>;
  structuredContent: Record<string, unknown> | undefined;
  isError: boolean;
  _meta: Record<string, unknown> | undefined;
}
