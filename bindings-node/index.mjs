// ESM entry: the same module instance as `require('polymcp')` (one native
// addon, one McpError class), with named exports.
import polymcp from './index.js';

export const { Server, McpError, RequestContext } = polymcp;
