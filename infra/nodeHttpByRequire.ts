/**
 * The Lambda bundles' `node:http` (aliased in infra/bundling.ts): the built-in module itself,
 * loaded with `require`. An ES `import` of `node:http` builds its namespace, which reads every
 * export, and the `WebSocket`, `CloseEvent` and `MessageEvent` getters load Node's fetch and
 * WebSocket stack: about 15-30 ms of a cold start that `@middy/util` (createPet's body parser,
 * for `STATUS_CODES`) paid at import, where the SDK reaches for `node:http` only for a plain-http
 * endpoint. `require` returns the module object and reads nothing.
 *
 * Each name another module imports must be exported here; esbuild fails the build on one missing.
 */
import { createRequire } from 'node:module';

const http = createRequire(import.meta.url)('node:http') as typeof import('node:http');

export default http;
export const { Agent, STATUS_CODES, request } = http;
