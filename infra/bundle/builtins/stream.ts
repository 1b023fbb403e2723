/** `node:stream` in the Lambda bundles (why: `builtinAliases` in infra/bundle/bundling.ts): the names the bundled code imports. */
const stream = process.getBuiltinModule('node:stream');

export default stream;
export const { PassThrough, Readable, Writable } = stream;
