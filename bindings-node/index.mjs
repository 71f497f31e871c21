// ESM entry: the same module instance as `require('ferromcp')` (one native
// addon, one McpError class), with named exports.
import ferromcp from './index.js';

export const { Server, Mount, Client, JwtVerifier, InvalidToken, Subscription, ToolTask, LoadedSkill, LoopbackRedirect, headlessAuthorize, PROTOCOL_VERSION, LEGACY_PROTOCOL_VERSIONS, McpError, ToolResult, RequestContext, codes, ERROR_KINDS, middleware, telemetry, setLogger } = ferromcp;
