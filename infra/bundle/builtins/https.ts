/** `node:https` in the Lambda bundles (why: `builtinAliases` in infra/bundle/bundling.ts). */
const https = process.getBuiltinModule('node:https');

export default https;
export const { Agent, request } = https;
