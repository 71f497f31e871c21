// Types of the MCP client (lib/client.js). Results are the JSON results of
// the protocol, as the server sent them (camelCase, `_meta` kept).

import type { OAuthOptions } from './oauth';
import type { ClientMiddleware, ClientNotification, NotificationHook } from './middleware';
// A type-only cycle (index.d.ts re-exports this file): `Client.inMemory`
// takes the `Server` declared there.
import type { Server } from '../index';
import type {
  ElicitResult,
  ElicitFormParams,
  ElicitUrlParams,
  CreateMessageParams,
  CreateMessageResult,
  ListRootsResult,
} from './types';

/** Free-form `_meta` of any protocol object. */
export type Meta = Record<string, unknown>;

/** An icon of a tool, resource, prompt or implementation. */
export interface Icon {
  src: string;
  mimeType?: string;
  sizes?: string[];
  theme?: 'light' | 'dark';
}

/** `clientInfo` / `serverInfo`. */
export interface Implementation {
  name: string;
  version: string;
  title?: string;
  description?: string;
  websiteUrl?: string;
  icons?: Icon[];
}

/** A tool as listed by `tools/list`. */
export interface Tool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  icons?: Icon[];
  _meta?: Meta;
}

/** A resource as listed by `resources/list`. */
export interface Resource {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  annotations?: Record<string, unknown>;
  icons?: Icon[];
  _meta?: Meta;
}

/** A resource template as listed by `resources/templates/list`. */
export interface ResourceTemplate {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  annotations?: Record<string, unknown>;
  icons?: Icon[];
  _meta?: Meta;
}

/** A prompt as listed by `prompts/list`. */
export interface Prompt {
  name: string;
  title?: string;
  description?: string;
  arguments?: Array<{ name: string; title?: string; description?: string; required?: boolean }>;
  icons?: Icon[];
  _meta?: Meta;
}

/** One page of a list; `nextCursor` is absent on the last page. */
export interface ListPage {
  nextCursor?: string;
  _meta?: Meta;
  [key: string]: unknown;
}
export interface ListToolsResult extends ListPage {
  tools: Tool[];
}
export interface ListResourcesResult extends ListPage {
  resources: Resource[];
}
export interface ListResourceTemplatesResult extends ListPage {
  resourceTemplates: ResourceTemplate[];
}
export interface ListPromptsResult extends ListPage {
  prompts: Prompt[];
}

/** The contents of a resource: text or a base64 blob. */
export type ResourceContents =
  | { uri: string; mimeType?: string; text: string; _meta?: Meta }
  | { uri: string; mimeType?: string; blob: string; _meta?: Meta };

/** A content block of a tool result or a prompt message. */
export type ContentBlock =
  | { type: 'text'; text: string; annotations?: Record<string, unknown>; _meta?: Meta }
  | { type: 'image' | 'audio'; data: string; mimeType: string; annotations?: Record<string, unknown>; _meta?: Meta }
  | { type: 'resource'; resource: ResourceContents; annotations?: Record<string, unknown>; _meta?: Meta }
  | ({ type: 'resource_link' } & Resource);

/** The result of `tools/call`. A tool that failed says `isError: true`. */
export interface CallToolResult {
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Meta;
  [key: string]: unknown;
}

/** The result of `resources/read`. */
export interface ReadResourceResult {
  contents: ResourceContents[];
  _meta?: Meta;
  [key: string]: unknown;
}

/** The result of `prompts/get`. */
export interface GetPromptResult {
  description?: string;
  messages: Array<{ role: 'user' | 'assistant'; content: ContentBlock }>;
  _meta?: Meta;
  [key: string]: unknown;
}

/** The result of `completion/complete`. */
export interface CompleteResult {
  completion: { values: string[]; total?: number; hasMore?: boolean };
  _meta?: Meta;
  [key: string]: unknown;
}

/**
 * What `discover()` gives: `server/discover` (2026-07-28), or for a legacy
 * server its `initialize` result.
 */
export interface DiscoverResult {
  /** Legacy servers only; 2026-07-28 names the server in `_meta['io.modelcontextprotocol/serverInfo']`. */
  serverInfo?: Implementation;
  capabilities?: Record<string, unknown>;
  instructions?: string;
  supportedVersions?: string[];
  protocolVersion?: string;
  _meta?: Meta;
  [key: string]: unknown;
}

/** A progress notification of a call. */
export interface ProgressUpdate {
  progress: number;
  total?: number;
  message?: string;
}

/** The notifications wanted from `subscriptions/listen`. */
export interface SubscriptionFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  /** URIs whose `notifications/resources/updated` are wanted. */
  resourceSubscriptions?: string[];
}

/** One notification of a subscription. */
export interface SubscriptionNotification {
  method: string;
  params: Record<string, unknown>;
}

/** A function answering one kind of server request; sync or async. */
export type InputHandler<P, R> = (params: P) => R | Promise<R>;

/**
 * Options of every client: `Client.inMemory` takes these, `Client.stdio`
 * and `Client.http` these and their transport's own.
 */
export interface ClientOptions {
  /** `clientInfo.name`. */
  name?: string;
  /** `clientInfo.version`. */
  version?: string;
  /** The revision requests declare (default: the latest, {@link PROTOCOL_VERSION}). */
  protocolVersion?: string;
  /** `"auto"` (default: detect), `"modern"` (2026-07-28) or `"legacy"` (initialize). */
  era?: 'auto' | 'modern' | 'legacy';
  /** Default timeout of every request, in milliseconds. */
  timeout?: number;
  /** Answers `elicitation/create` (declares the `elicitation` capability). */
  onElicitation?: InputHandler<ElicitFormParams | ElicitUrlParams, ElicitResult>;
  /** Answers `sampling/createMessage` (declares `sampling`). */
  onSampling?: InputHandler<CreateMessageParams, CreateMessageResult>;
  /** Answers `roots/list` (declares `roots`). */
  onRoots?: InputHandler<Record<string, unknown>, ListRootsResult>;
  /** What the client accepts from the server; see {@link ClientLimits}. */
  limits?: ClientLimits;
  /**
   * Further capabilities to declare, beside those the handlers declare
   * (`{ elicitation: {} }` for a caller that answers a task's questions
   * itself with `ToolTask.respond`).
   */
  capabilities?: Record<string, unknown>;
  /**
   * Whether `callTool` follows a task the server makes of a call to its
   * result (default `true`; declares the tasks extension).
   */
  followTasks?: boolean;
}

/**
 * What a client accepts from a server, so that a misbehaving or hostile
 * server cannot exhaust its memory or sockets. Keys left out keep their
 * defaults; an unknown key is a `TypeError`. A refusal names the limit.
 *
 * @example
 * ```js
 * const client = Client.stdio({ command: 'node', args: ['server.mjs'],
 *   limits: { maxMessageBytes: 1 << 20, maxQueuedNotifications: 64 } });
 * ```
 */
export interface ClientLimits {
  /** The largest message read: a JSON response, one SSE event, one stdio line (default 16 MiB). */
  maxMessageBytes?: number;
  /**
   * Notifications of one call or listen stream waiting (default 1,024); past it
   * progress is coalesced to the newest and others dropped, never the result.
   * `onProgress` further has at most 16 updates queued, the newest always delivered.
   */
  maxQueuedNotifications?: number;
  /**
   * Server requests (`ping`, elicitation, ...) answered at once (default 64); on a
   * 2025-11-25 HTTP session's own stream more wait, elsewhere they are refused.
   */
  maxPendingServerRequests?: number;
  /** HTTP: answers to server requests POSTed at once, one connection each (default 4). */
  maxConcurrentServerAnswers?: number;
  /** A stdio server's stderr is read in lines of at most this many bytes (default 8 KiB). */
  maxStderrLineBytes?: number;
}

/** Options of `Client.stdio`. */
export interface StdioClientOptions extends ClientOptions {
  /** The server program. */
  command: string;
  args?: string[];
  /** Extra environment variables of the server. */
  env?: Record<string, string>;
  /** The server's working directory. */
  cwd?: string;
  /** The server's stderr: `"capture"` (default), `"inherit"` or `"null"`. */
  stderr?: 'capture' | 'inherit' | 'null';
}

/** Options of `Client.http`. */
export interface HttpClientOptions extends ClientOptions {
  /** Extra headers sent with every request (e.g. `Authorization`). */
  headers?: Record<string, string>;
  /**
   * `https://` only: the built-in roots trusted. `"native"` (default) is the
   * platform's store, which `SSL_CERT_FILE` / `SSL_CERT_DIR` replace as for
   * OpenSSL; `"webpki"` is Mozilla's set built into ferromcp; `"none"` trusts
   * `caCerts` only. An untrusted certificate rejects with kind `"http"`.
   */
  tlsRoots?: 'native' | 'webpki' | 'none';
  /** `https://` only: extra trusted CA certificates, each a PEM file path or PEM text. */
  caCerts?: string[];
  /** `https://` only: client certificate chain for mutual TLS (PEM path or text). */
  clientCert?: string;
  /** `https://` only: the private key of `clientCert` (PEM path or text). */
  clientKey?: string;
  /**
   * Logs in to a protected server (OAuth 2.1) when it answers 401: the
   * token then goes with every request, refreshed and stepped up as
   * needed. A failed login rejects with kind `"auth"`.
   */
  oauth?: OAuthOptions;
}

/** Options of one `callTool`. */
export interface CallToolOptions {
  /** Milliseconds; overrides the client's timeout (rejects with kind `"timeout"`). */
  timeout?: number;
  /** Called for each progress notification, before the call settles. */
  onProgress?: (update: ProgressUpdate) => void;
  /**
   * Aborting it cancels the request on the server (its handler's signal
   * aborts) and rejects the call with kind `"cancelled"`.
   */
  signal?: AbortSignal;
  /** Extra `_meta` entries of the request. */
  meta?: Meta;
}

/** Params of `complete`, as in the `completion/complete` request. */
export interface CompleteRequest {
  ref: { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string };
  argument: { name: string; value: string };
  context?: { arguments?: Record<string, string> };
}

/**
 * An open `subscriptions/listen`: iterate it with `for await`; breaking out
 * or `close()` cancels the request.
 */
export declare class Subscription implements AsyncIterable<SubscriptionNotification> {
  private constructor();
  /** The notification types the server agreed to send, once it acknowledged. */
  acknowledged(): Promise<SubscriptionFilter>;
  /** Ends the subscription. */
  close(): void;
  [Symbol.asyncIterator](): AsyncIterator<SubscriptionNotification>;
}

/**
 * An MCP client connected to one server, over stdio, Streamable HTTP, or
 * in memory to a `Server` of this process.
 * Failures reject with an `McpError` (`code`, `kind`: `"peerError"` for a
 * JSON-RPC error from the server, `"timeout"`, `"cancelled"`, `"closed"`...).
 *
 * @example
 * ```js
 * import { Client } from 'ferromcp';
 *
 * const client = await Client.stdio({ command: 'node', args: ['server.mjs'] });
 * for await (const tool of client.tools()) console.log(tool.name);
 * const result = await client.callTool('add', { a: 1, b: 2 });
 * await client.close();
 * ```
 */
export declare class Client {
  private constructor();
  /** Spawns `command args...` and speaks MCP over its stdin/stdout. */
  static stdio(options: StdioClientOptions): Promise<Client>;
  /** Connects to a Streamable HTTP endpoint (`http://host:port/mcp`). */
  static http(url: string | URL, options?: HttpClientOptions): Promise<Client>;
  /**
   * A client of `server`, a `Server` of this process, joined to it by an
   * in-memory pipe: no socket, no child process, yet the whole protocol as
   * over stdio (questions answered by `onElicitation`/`onSampling`/
   * `onRoots`, listen streams, tasks). The way to test a server with
   * `node --test`. The server serves the client until `client.close()`
   * (the server's own `close()` stops only its stdio and HTTP serving); an
   * idle in-memory client does not keep the process alive.
   *
   * @example
   * ```js
   * import { Client, Server } from 'ferromcp';
   *
   * const server = new Server({ name: 'demo', version: '1.0.0' });
   * server.tool('add', ({ a, b }) => a + b);
   * const client = await Client.inMemory(server);
   * const { content } = await client.callTool('add', { a: 1, b: 2 }); // content[0].text === '3'
   * await client.close();
   * ```
   *
   * @throws {TypeError} (as a rejection) when `server` is not a `Server` of
   *   this package, or `options` holds a transport's option (`headers`,
   *   `env`, `oauth`...).
   */
  static inMemory(server: Server, options?: ClientOptions): Promise<Client>;

  /**
   * Adds a link at the end of this client's middleware chain, around every
   * request the client sends (calls, lists, reads, prompts, completions,
   * `listen`, tasks, skills), in either protocol revision and over every
   * transport; returns the client, for chaining. The first link added sees
   * a call first and its result last.
   *
   * `link(ctx, next)` may read or change `ctx.params`, `ctx.meta` (extra
   * `_meta` entries) and `ctx.timeout` (ms), call `next(ctx)` (once) to run
   * the rest of the chain and send the call, and return its raw result
   * object, changed or not, or answer by itself without calling `next`;
   * sync or async. A thrown `McpError` fails the call with that JSON-RPC
   * error (its `code` kept); any other thrown error fails it as an internal
   * error (-32603) with its message. A link never blocks the thread and may
   * await other calls of the same client (which go through the chain too).
   *
   * @example
   * ```js
   * import { Client, McpError, Server } from 'ferromcp';
   *
   * const server = new Server({ name: 'demo', version: '1.0.0' });
   * server.tool('echo', ({ text }) => text);
   * const client = await Client.inMemory(server);
   * client.use(async (ctx, next) => {
   *   if (ctx.name === 'forbidden') throw new McpError('refused by the client', { code: -32602 });
   *   if (ctx.name === 'echo') ctx.params.arguments = { text: `${ctx.params.arguments?.text}!` };
   *   ctx.meta['example.com/trace'] = 'abc'; // goes out in the request's _meta
   *   const result = await next(ctx);
   *   console.error(ctx.method, 'answered');
   *   return result;
   * });
   * const { content } = await client.callTool('echo', { text: 'hi' }); // content[0].text === 'hi!'
   * await client.callTool('forbidden').catch((e) => console.error(e.code)); // -32602
   * await client.close();
   * ```
   */
  use(link: ClientMiddleware): this;

  /**
   * Adds a notification hook at the end of the client's middleware chain;
   * returns the client, for chaining. `hook(note)` sees each notification
   * the client receives (progress, log messages, list and resource
   * changes, listen events), in arrival order, before the `onProgress` and
   * `onNotification` callbacks and `listen()` streams do: it may change
   * `note.params` (`null` when the server sent none), and returns `false`
   * to stop the notification there. Requests pass the hook straight on;
   * a hook added after connecting sees what arrives from then on.
   *
   * The hook runs on this thread and must answer synchronously: the
   * thread delivering the notification waits for it, at most 1000 ms.
   * Past that (this thread busy or blocked), or if the hook throws or
   * returns a promise, the notification goes on unchanged and a warning is
   * logged (see `setLogger`); a hook that comes too late is not called.
   *
   * @example
   * ```js
   * import { Client, Server } from 'ferromcp';
   *
   * const server = new Server({ name: 'demo', version: '1.0.0' });
   * server.tool('steps', async (_args, ctx) => {
   *   for (const step of [1, 2, 3]) ctx.progress(step, 3, `step ${step}`);
   *   return 'done';
   * });
   * const client = await Client.inMemory(server);
   * client.useNotifications((note) => {
   *   if (note.method !== 'notifications/progress') return;
   *   if (note.params.progress === 2) return false; // this update is dropped
   *   note.params.message = `[${note.params.message}]`;
   * });
   * await client.callTool('steps', {}, { onProgress: (u) => console.error(u.message) }); // [step 1], [step 3]
   * await client.close();
   * ```
   */
  useNotifications(hook: NotificationHook<ClientNotification>): this;

  /** The protocol version requests currently declare. */
  readonly protocolVersion: string;
  /** Whether the server speaks a legacy revision; `null` until detected. */
  readonly isLegacy: boolean | null;

  /** `server/discover` (a legacy server: its `initialize` result). */
  discover(): Promise<DiscoverResult>;

  /** One page of `tools/list`. */
  listTools(params?: { cursor?: string }): Promise<ListToolsResult>;
  /** One page of `resources/list`. */
  listResources(params?: { cursor?: string }): Promise<ListResourcesResult>;
  /** One page of `resources/templates/list`. */
  listResourceTemplates(params?: { cursor?: string }): Promise<ListResourceTemplatesResult>;
  /** One page of `prompts/list`. */
  listPrompts(params?: { cursor?: string }): Promise<ListPromptsResult>;

  /** Every tool, over every page (fetched as iteration goes). */
  tools(): AsyncIterableIterator<Tool>;
  /** Every resource, over every page. */
  resources(): AsyncIterableIterator<Resource>;
  /** Every resource template, over every page. */
  resourceTemplates(): AsyncIterableIterator<ResourceTemplate>;
  /** Every prompt, over every page. */
  prompts(): AsyncIterableIterator<Prompt>;

  /** One page of `skills/list` (the skills extension, SEP-2640). */
  listSkills(params?: { cursor?: string }): Promise<ListSkillsResult>;
  /** Every skill, over every page. Listing reads no skill file. */
  skills(): AsyncIterableIterator<Skill>;
  /** One skill's entry by its `SKILL.md` URI (`skills/get`). */
  getSkill(uri: string): Promise<Skill>;
  /**
   * Loads a skill (an entry of `skills()` or its `SKILL.md` URI): reads
   * `SKILL.md` and checks it against the entry (digest, size,
   * frontmatter); a mismatch rejects.
   */
  loadSkill(skill: string | Skill): Promise<LoadedSkill>;

  /**
   * `tools/call`, returning a handle on the task the server makes of it
   * (the tasks extension, SEP-2663) instead of following it.
   */
  startToolTask(
    name: string,
    args?: Record<string, unknown>,
    options?: { timeout?: number; meta?: Meta },
  ): Promise<ToolTask>;
  /** A handle on a task started earlier (task ids are meant to be kept). */
  toolTask(taskId: string): ToolTask;

  /** `tools/call`. */
  callTool(name: string, args?: Record<string, unknown>, options?: CallToolOptions): Promise<CallToolResult>;
  /** `resources/read`. */
  readResource(uri: string): Promise<ReadResourceResult>;
  /** `prompts/get`. */
  getPrompt(name: string, args?: Record<string, string>): Promise<GetPromptResult>;
  /** `completion/complete`. */
  complete(params: CompleteRequest): Promise<CompleteResult>;
  /** `subscriptions/listen` (2026-07-28). */
  listen(filter: SubscriptionFilter): Subscription;
  /** Ends the connection (a spawned server is stopped). */
  close(): Promise<void>;
}

/** One file of a skill as its entry lists it. */
export interface SkillFile {
  uri: string;
  /** `sha256:` and 64 lowercase hex digits of the raw bytes. */
  digest: string;
  size: number;
}

/** A skill as `skills/list` and `skills/get` describe it. */
export interface Skill {
  /** The `SKILL.md` URI: the skill's identity on this server. */
  uri: string;
  /** The `SKILL.md` YAML frontmatter (`name`, `description`...). */
  frontmatter: { name: string; description?: string; [key: string]: unknown };
  /** Every file with digest and size, or `"dynamic"` (generated, no integrity). */
  resources: SkillFile[] | 'dynamic';
}

export interface ListSkillsResult extends ListPage {
  skills: Skill[];
}

/**
 * A skill loaded with `client.loadSkill(...)`: its `SKILL.md`, checked,
 * and its other files read on demand, each checked.
 *
 * @example
 * ```js
 * const skill = await client.loadSkill('skill://git-workflow/SKILL.md');
 * console.log(skill.skillMd, (await skill.read('references/HOOKS.md')).toString());
 * ```
 */
export declare class LoadedSkill {
  private constructor();
  /** The entry the skill was loaded from. */
  readonly skill: Skill;
  /** The `SKILL.md` text, frontmatter included. */
  readonly skillMd: string;
  /** Reads a file of the skill (its path inside it, or its URI), checked; unlisted files are refused. */
  read(file: string): Promise<Buffer>;
}

/** A task's status (the tasks extension, SEP-2663). */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** A task's state, as `tasks/get` answers it. */
export interface TaskState {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt?: string;
  lastUpdatedAt?: string;
  ttlMs?: number | null;
  pollIntervalMs?: number;
  /** `input_required`: the outstanding requests by key; answer with `respond`. */
  inputRequests?: Record<string, { method: string; params: Record<string, unknown> }>;
  /** `completed`: the tool's result. */
  result?: CallToolResult;
  /** `failed`: the JSON-RPC error. */
  error?: { code: number; message: string; data?: unknown };
  [key: string]: unknown;
}

/**
 * A `tools/call` the server runs as a task, from `client.startToolTask`.
 *
 * @example
 * ```js
 * const task = await client.startToolTask('render', { pages: 2 });
 * console.log(task.id, (await task.refresh())?.status);
 * const result = await task.result({ signal: AbortSignal.timeout(60_000) });
 * ```
 */
export declare class ToolTask {
  private constructor();
  /** The task's id; `null` when the server answered the call at once. */
  readonly id: string | null;
  /** The last state seen; `null` without a task. */
  readonly state: TaskState | null;
  /** `tasks/get` now; `null` without a task. */
  refresh(): Promise<TaskState | null>;
  /** Answers some of the task's `inputRequests` by key (`tasks/update`). */
  respond(responses: Record<string, unknown>): Promise<void>;
  /** `tasks/cancel`. */
  cancel(): Promise<void>;
  /**
   * Follows the task to its end; aborting `signal` cancels the task.
   * `onState` sees each change of its status or status message (its
   * progress), in order, before the promise settles.
   */
  result(options?: { signal?: AbortSignal; onState?: (state: TaskState) => void }): Promise<CallToolResult>;
}

/** The protocol revision a client declares by default. */
export declare const PROTOCOL_VERSION: string;
/** The revisions that speak the `initialize` handshake (2025-11-25 and earlier). */
export declare const LEGACY_PROTOCOL_VERSIONS: readonly string[];
