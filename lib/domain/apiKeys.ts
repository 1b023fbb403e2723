/**
 * API keys, held and compared only as SHA-256 digests, in constant time, through the small
 * `ApiKeyStore` interface: locally the keys come from the environment, when deployed from the
 * control table (lib/store/controlTableKeys.ts), and the handlers never know which. Reading the
 * bearer token off a request is the pipeline's part (lib/http/auth.ts).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Deadline } from './deadline.ts';
import { serviceUnavailable } from './errors.ts';
import { isExpired } from './keyLifetime.ts';
import { DEFAULT_KEY_SCOPE, type KeyScope } from './keyScope.ts';

export interface ApiKeyStore {
  /**
   * Every key that is valid now: its SHA-256 digest and its id. A store that reads them waits for
   * its read no longer than the caller's `deadline`, and without one as long as the read takes.
   */
  keyDigests(deadline?: Deadline): Promise<KeyDigests>;
  /**
   * For a store that keeps what it reads: the oldest digests it ever serves, counted from the start
   * of their read. A verdict on digests read that long ago is as good as the store's own.
   */
  readonly maxStaleMs?: number;
}

/**
 * The digests a store holds now. `readAt` (epoch ms) is when the read that produced them began, for
 * a store that reads them from somewhere (the control table); keys given in configuration have none.
 */
export type KeyDigests = readonly KeyDigest[] & { readonly readAt?: number };

/** A valid key as the service holds it: never the key, only its digest, and the id that names it. */
export interface KeyDigest {
  /**
   * The key's one id: in the request log, in `npm run keys -- list`, and what `revoke` takes. When
   * deployed, the sort key of its control-table item (the `<keyId>` of `psk_<keyId>_<secret>`).
   */
  keyId: string;
  digest: Buffer;
  /** When the key stops working (epoch ms, ./keyLifetime.ts keyExpiry); none for keys given in configuration. */
  expiresAt?: number | undefined;
  /** What the key may call (./keyScope.ts). */
  scope: KeyScope;
  /** How many pets it may create per UTC day (./keyScope.ts); none for keys given in configuration: no ceiling. */
  createsPerDay?: number | undefined;
}

/**
 * A key as `npm run keys` issues it: `psk_<keyId>_<secret>`, the id 12 hex characters, the secret
 * 32 random bytes in base64url (43 characters). Group 1 is the id. The production web ACL refuses
 * any Authorization that is not `Bearer ` and this (infra/constructs/firewall.ts).
 */
export const API_KEY_FORMAT = /^psk_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

export const digestKey = (key: string): Buffer => createHash('sha256').update(key, 'utf8').digest();

/**
 * The id of a key that carries none (a local key not in the `psk_` format): the first 12 hex digits
 * of its SHA-256 digest. Enough to tell keys apart, useless for guessing one.
 */
export const keyIdOf = (digest: Buffer): string => digest.toString('hex').slice(0, 12);

/** A plain-text key's id: the one in its `psk_` form, as the keys CLI and the control table name it, else `keyIdOf`. */
export const keyIdOfKey = (key: string): string => API_KEY_FORMAT.exec(key)?.[1] ?? keyIdOf(digestKey(key));

/**
 * A key given in configuration may name its scope, `read:<key>` or `write:<key>` (a bearer token
 * never holds a colon, so no key is mistaken for one); without it, DEFAULT_KEY_SCOPE.
 */
export const SCOPED_KEY = /^(read|write):(.+)$/s;

/** Keys given in plain text, as `PETSTORE_API_KEYS` does locally: no expiry, no daily create ceiling. */
export class StaticApiKeys implements ApiKeyStore {
  readonly #digests: readonly KeyDigest[];

  constructor(keys: readonly string[]) {
    this.#digests = keys
      .map((given) => given.trim())
      .filter(Boolean)
      .map((given) => {
        const [, scope = DEFAULT_KEY_SCOPE, key = given] = SCOPED_KEY.exec(given) ?? [];
        return { keyId: keyIdOfKey(key.trim()), digest: digestKey(key.trim()), scope: scope as KeyScope };
      });
  }

  static fromList(commaSeparated: string): StaticApiKeys {
    return new StaticApiKeys(commaSeparated.split(','));
  }

  async keyDigests(): Promise<KeyDigests> {
    return this.#digests;
  }
}

/** Who sent an authenticated request: the key's digest (the scope of its idempotency keys) and its id. */
export interface Caller {
  digest: Buffer;
  keyId: string;
  /** When the read of the digests that vouched for the key began (epoch ms); none for configured keys. */
  keysReadAt?: number | undefined;
  /** When the key expires (epoch ms); none for configured keys. */
  expiresAt?: number | undefined;
  /** What the key may call. */
  scope: KeyScope;
  /** Its daily create ceiling; none (no ceiling) for configured keys. */
  createsPerDay?: number | undefined;
}

/** The key `keys` holds now whose digest is `digest`, with when those digests were read and when it expires. */
export interface MatchedKey {
  keyId: string;
  keysReadAt?: number | undefined;
  expiresAt?: number | undefined;
  scope: KeyScope;
  createsPerDay?: number | undefined;
}

/** Whether `digest` is the digest of a key `keys` holds now; 503 when the store cannot be read. */
export async function isValidKey(digest: Buffer, keys: ApiKeyStore): Promise<boolean> {
  return (await matchingKeyId(digest, keys)) !== undefined;
}

/** The id of the key `keys` holds now whose digest is `digest`, if any; 503 when the store cannot be read. */
export async function matchingKeyId(digest: Buffer, keys: ApiKeyStore): Promise<string | undefined> {
  return (await matchingKey(digest, keys))?.keyId;
}

/**
 * `matchingKeyId`, with when the digests it matched against were read and when the key expires; the
 * read waited for until `deadline`, if given. A key expired at `now` matches nothing, as an unknown key.
 */
export async function matchingKey(
  digest: Buffer,
  keys: ApiKeyStore,
  deadline?: Deadline,
  now: number = Date.now(),
): Promise<MatchedKey | undefined> {
  const digests = await validDigests(keys, deadline);
  const matched = matchAmong(digest, digests);
  if (matched === undefined || isExpired(matched.expiresAt, now)) return undefined;
  return {
    keyId: matched.keyId,
    keysReadAt: digests.readAt,
    scope: matched.scope,
    ...(matched.expiresAt === undefined ? {} : { expiresAt: matched.expiresAt }),
    ...(matched.createsPerDay === undefined ? {} : { createsPerDay: matched.createsPerDay }),
  };
}

/** A key store that cannot be read is an outage to retry, not a client error nor a bug. */
async function validDigests(keys: ApiKeyStore, deadline: Deadline | undefined): Promise<KeyDigests> {
  try {
    return await keys.keyDigests(deadline);
  } catch (error) {
    throw Object.assign(serviceUnavailable(), { cause: error });
  }
}

/** Compares against every digest, without stopping early, so timing says nothing about which matched. */
function matchAmong(digest: Buffer, keys: readonly KeyDigest[]): KeyDigest | undefined {
  let matched: KeyDigest | undefined;
  for (const candidate of keys) {
    if (candidate.digest.length === digest.length && timingSafeEqual(candidate.digest, digest)) matched = candidate;
  }
  return matched;
}
