/**
 * The key authorizer's verdict as it reaches an operation function. On AWS, API Gateway runs the
 * authorizer (./authorizer.ts) before any operation function and hands its `context` to the
 * function in `requestContext.authorizer`, replayed from its cache for up to the authorizer's TTL.
 * The verdict names the key and says when the digests it was checked against were read. A function
 * takes a verdict whose digests are no older than its own key store would serve (`maxStaleMs`,
 * lib/store/controlTableKeys.ts) instead of reading the keys itself: a cold start then makes one
 * store round trip, not two, and the revocation bound is the same as for the function's own read.
 * Any other verdict (none, as the local API sends; too old; or for keys the store does not keep) is
 * checked against the store as before.
 */
import { digestKey, type ApiKeyStore, type Caller, type MatchedKey } from '../domain/apiKeys.ts';

/** The verdict's `context`, as the authorizer writes it: strings, as API Gateway hands them on. */
export interface VerdictContext extends Record<string, string> {
  keyId: string;
  keysReadAt: string;
}

/** The context an Allow carries: the key's id, and when its digests were read (when the store says). */
export function verdictContext(matched: MatchedKey): Partial<VerdictContext> & { keyId: string } {
  return { keyId: matched.keyId, ...(matched.keysReadAt === undefined ? {} : { keysReadAt: String(matched.keysReadAt) }) };
}

/**
 * The caller a fresh verdict vouches for, or undefined when the function must check the key itself.
 * `token` is the request's own bearer token: the authorizer's cache is keyed by the Authorization
 * header, so the verdict is about this token; its digest scopes the caller's idempotency keys.
 */
export function vouchedCaller(authorizer: unknown, token: string, keys: ApiKeyStore, now: number): Caller | undefined {
  if (keys.maxStaleMs === undefined || typeof authorizer !== 'object' || authorizer === null) return undefined;
  const { keyId, keysReadAt } = authorizer as Record<string, unknown>;
  if (typeof keyId !== 'string' || keyId === '') return undefined;
  const readAt = typeof keysReadAt === 'string' && /^\d{1,15}$/.test(keysReadAt) ? Number(keysReadAt) : typeof keysReadAt === 'number' ? keysReadAt : NaN;
  if (!Number.isSafeInteger(readAt) || now - readAt > keys.maxStaleMs) return undefined;
  return { digest: digestKey(token), keyId, keysReadAt: readAt };
}
