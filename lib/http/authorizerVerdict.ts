/**
 * The key authorizer's verdict as it reaches an operation function. On AWS, API Gateway runs the
 * authorizer (./authorizer.ts) before any operation function and hands its `context` to the
 * function in `requestContext.authorizer`, replayed from its cache for up to the authorizer's TTL.
 * The verdict names the key, carries the SHA-256 digest of the token it vouched for, when the key
 * expires, its scope and its daily create ceiling (lib/domain/keyScope.ts), and says when the digests it was checked against were read. A function takes a
 * verdict whose digests are no older than its own key store would serve (`maxStaleMs`,
 * lib/store/controlTableKeys.ts) instead of reading the keys itself: a cold start then makes one
 * store round trip, not two, and the revocation bound is the same as for the function's own read.
 * It takes it only for the token it vouched for, and only until the key expires: a cached Allow
 * replayed for another token, or past the key's expiry, is refused as an unknown key is. Any other
 * verdict (none, as the local API sends; too old; or for keys the store does not keep) is checked
 * against the store as before, and so is one without a scope or ceiling (from an authorizer deployed
 * before them): the function never guesses what a key may do.
 */
import { timingSafeEqual } from 'node:crypto';
import { digestKey, type ApiKeyStore, type Caller, type MatchedKey } from '../domain/apiKeys.ts';
import { isExpired } from '../domain/keyLifetime.ts';
import { isCreatesPerDay, isKeyScope } from '../domain/keyScope.ts';

/** The verdict's `context`, as the authorizer writes it: strings, as API Gateway hands them on. */
export interface VerdictContext extends Record<string, string> {
  keyId: string;
  keysReadAt: string;
  /** Hex SHA-256 digest of the token the authorizer checked (the key's usageIdentifierKey too). */
  keyDigest: string;
  /** When the key expires, epoch ms. */
  expiresAt: string;
  /** What the key may call (`read` or `write`). */
  scope: string;
  /** The key's daily create ceiling. */
  createsPerDay: string;
}

/** What the authorizer found: the key, and the digest of the token it was found for. */
export interface Vouched extends MatchedKey {
  digest: Buffer;
}

/** The context an Allow carries: the key's id and the token's digest, and when known when its digests were read and it expires. */
export function verdictContext(
  vouched: Vouched,
): Partial<VerdictContext> & { keyId: string; keyDigest: string; scope: string } {
  return {
    keyId: vouched.keyId,
    keyDigest: vouched.digest.toString('hex'),
    scope: vouched.scope,
    ...(vouched.keysReadAt === undefined ? {} : { keysReadAt: String(vouched.keysReadAt) }),
    ...(vouched.expiresAt === undefined ? {} : { expiresAt: String(vouched.expiresAt) }),
    ...(vouched.createsPerDay === undefined ? {} : { createsPerDay: String(vouched.createsPerDay) }),
  };
}

/** What a fresh verdict about another token than this request's, or about a key expired since, shows: a 401. */
export const INVALID_KEY = 'invalid key';

/**
 * The caller a fresh verdict vouches for; INVALID_KEY when the verdict is not about this request's
 * token (`token`, its own bearer token: its digest is compared with the verdict's) or the key has
 * expired by `now`; undefined when the function must check the key itself.
 */
export function callerFromVerdict(
  authorizer: unknown,
  token: string,
  keys: ApiKeyStore,
  now: number,
): Caller | typeof INVALID_KEY | undefined {
  if (keys.maxStaleMs === undefined || typeof authorizer !== 'object' || authorizer === null) return undefined;
  const { keyId, keysReadAt, keyDigest, expiresAt, scope, createsPerDay } = authorizer as Record<string, unknown>;
  if (typeof keyId !== 'string' || keyId === '') return undefined;
  const readAt = wholeNumber(keysReadAt);
  const expires = wholeNumber(expiresAt);
  const ceiling = wholeNumber(createsPerDay);
  // A verdict from before verdicts named their token, expiry, scope and ceiling is checked against the store.
  if (readAt === undefined || expires === undefined || typeof keyDigest !== 'string' || now - readAt > keys.maxStaleMs)
    return undefined;
  if (!isKeyScope(scope) || !isCreatesPerDay(ceiling)) return undefined;
  const digest = digestKey(token);
  if (!sameDigest(keyDigest, digest) || isExpired(expires, now)) return INVALID_KEY;
  return { digest, keyId, keysReadAt: readAt, expiresAt: expires, scope, createsPerDay: ceiling };
}

/** A context value as a whole number (epoch ms, a ceiling): digits as API Gateway hands them on (or a number, as tests pass them). */
function wholeNumber(value: unknown): number | undefined {
  const parsed =
    typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : typeof value === 'number' ? value : NaN;
  return Number.isSafeInteger(parsed) && parsed >= 0 ? parsed : undefined;
}

/** Whether `hex` is the hex form of `digest`, compared in constant time. */
function sameDigest(hex: string, digest: Buffer): boolean {
  const given = /^[0-9a-f]{64}$/.test(hex) ? Buffer.from(hex, 'hex') : undefined;
  return given !== undefined && timingSafeEqual(given, digest);
}
