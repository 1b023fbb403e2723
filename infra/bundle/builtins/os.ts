/** `node:os` in the Lambda bundles (why: `builtinAliases` in infra/bundle/bundling.ts): the names the bundled code imports. */
const os = process.getBuiltinModule('node:os');

export default os;
export const { homedir, platform, release } = os;
