/**
 * `node:http` in the Lambda bundles (why: `builtinAliases` in infra/bundle/bundling.ts). Its ES namespace is the dearest of all: its
 * `WebSocket`, `CloseEvent` and `MessageEvent` getters load Node's fetch and WebSocket stack, 15-30 ms
 * of a cold start that `@middy/util` (createPet's body parser, for `STATUS_CODES`) paid at import.
 */
const http = process.getBuiltinModule('node:http');

export default http;
export const { Agent, STATUS_CODES, request } = http;
