/** `node:path` in the Lambda bundles (why: `builtinAliases` in infra/bundle/bundling.ts): the names the bundled code imports. */
const path = process.getBuiltinModule('node:path');

export default path;
export const { join, sep } = path;
