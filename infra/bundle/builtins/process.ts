/**
 * `node:process` in the Lambda bundles (why: `builtinAliases` in infra/bundle/bundling.ts): the global `process`. Its ES namespace
 * reads every property of `process`, whose getters build the report, finalization and stdio
 * objects: 3-5 ms of a cold start for two names.
 */
export default process;
export const { env, versions } = process;
