/** `node:fs` in the Lambda bundles (why: `builtinAliases` in infra/bundle/bundling.ts): the names the bundled code imports. */
const fs = process.getBuiltinModule('node:fs');

export default fs;
export const { createReadStream, fstatSync, lstatSync } = fs;
/**
 * `fs.ReadStream` is a getter that loads Node's file streams; the SDK only tests `instanceof` it
 * (a request body's length), so it is read then, not at import. `new ReadStream(...)` still makes
 * a real one.
 */
export const ReadStream = class ReadStream {
  constructor(...args: Parameters<typeof fs.createReadStream>) {
    return fs.createReadStream(...args);
  }

  static [Symbol.hasInstance](value: unknown): boolean {
    return value instanceof fs.ReadStream;
  }
} as unknown as typeof fs.ReadStream;
