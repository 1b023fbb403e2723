/** `node:timers` in the Lambda bundles (why: `builtinAliases` in infra/bundle/bundling.ts): the names the bundled code imports. */
const timers = process.getBuiltinModule('node:timers');

export default timers;
export const { setTimeout } = timers;
