/**
 * `node:fs/promises` in the Lambda bundles (why: `builtinAliases` in infra/bundle/bundling.ts): `readFile` over `fs.readFile`'s
 * callback. Loading `fs/promises` also loads Node's readline, directory and watcher modules (about
 * 1.5 ms of a cold start) for the SDK's one look at the shared config files (`~/.aws/config`).
 */
const fs = process.getBuiltinModule('node:fs');
const { promisify } = process.getBuiltinModule('node:util');

export const readFile = promisify(fs.readFile);
