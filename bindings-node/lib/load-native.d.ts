/**
 * The native addon, as `native.d.ts` types it, loaded by `load-native.js`
 * (which replaces napi-rs's load failure with a message naming the platform
 * and how to build the addon). Private to the package.
 */
declare const native: typeof import('../native.js');
export = native;
