/** `node:crypto` in the Lambda bundles (why: `builtinAliases` in infra/bundle/bundling.ts): the names the bundled code imports. */
const crypto = process.getBuiltinModule('node:crypto');

export default crypto;
export const { createHash, createHmac, randomBytes, randomInt, randomUUID, timingSafeEqual } = crypto;
/** Read at each call: the module's `getRandomValues` is a getter that loads Web Crypto. */
export const getRandomValues: typeof crypto.getRandomValues = (array) => crypto.getRandomValues(array);
