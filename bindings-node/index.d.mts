// Types of the ESM entry (index.mjs): the same API as index.d.ts.
export * from './index.js';
