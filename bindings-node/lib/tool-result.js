'use strict';
/**
 * A whole `tools/call` result, for a tool that returns more than a value:
 * image, audio or resource content, several blocks, `isError`, `_meta`.
 * The core builds and checks the result from these parts (a string item is
 * a text block), exactly as for the other languages.
 *
 * @example
 * server.tool('logo', {}, () => new ToolResult({
 *   content: ['The logo:', { type: 'image', data: PNG_BASE64, mimeType: 'image/png' }],
 * }));
 */
class ToolResult {
  /**
   * @param {{ content?: unknown[] | unknown, structuredContent?: Record<string, unknown>,
   *   isError?: boolean, _meta?: Record<string, unknown> }} [parts]
   */
  constructor(parts = {}) {
    const { content = [], structuredContent, isError = false, _meta } = parts;
    /** Content blocks; a string is a text block. */
    this.content = Array.isArray(content) ? content : [content];
    /** Structured content, checked against the tool's outputSchema. */
    this.structuredContent = structuredContent;
    /** Whether the result reports a failure of the tool. */
    this.isError = isError;
    /** Result metadata. */
    this._meta = _meta;
  }
}

module.exports = { ToolResult };
