/**
 * API keys, held and compared only as SHA-256 digests, in constant time, through the small
 * `ApiKeyStore` interface: locally the keys come from the environment, when deployed from the
 * control table (lib/store/controlTableKeys.ts), and the handlers never know which. Reading the
 * bearer token off a request is the pipeline's part (lib/http/auth.ts).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { serviceUnavailable } from './errors.ts';

export interface ApiKeyStore {
  /** SHA-256 digests of every key that is valid now. */
  keyDigests(): Promise<readonly Buffer[]>;
}

/**
 * A key as `npm run keys` issues it: `psk_<keyId>_<secret>`, the id 12 hex characters, the secret
 * 32 random bytes in base64url (43 characters). Group 1 is the id. The production web ACL refuses
 * any Authorization that is not `Bearer ` and this (infra/constructs/firewall.ts).
 */
export const API_KEY_FORMAT = /^psk_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

export const digestKey = (key: string): Buffer => createHash('sha256').update(key, 'utf8').digest();

/**
 * A key's name in the logs: the first 12 hex digits of its SHA-256 digest (the digest its key item
 * holds). Enough to tell keys apart, useless for guessing one.
 */
export const keyIdOf = (digest: Buffer): string => digest.toString('hex').slice(0, 12);

/** Keys given in plain text, as `PETSTORE_API_KEYS` does locally. */
export class StaticApiKeys implements ApiKeyStore {
  readonly #digests: readonly Buffer[];

  constructor(keys: readonly string[]) {
    this.#digests = keys.map((key) => key.trim()).filter(Boolean).map(digestKey);
  }

  static fromList(commaSeparated: string): StaticApiKeys {
    return new StaticApiKeys(commaSeparated.split(','));
  }

  async keyDigests(): Promise<readonly Buffer[]> {
    return this.#digests;
  }
}

/** Who sent an authenticated request: the key's digest (the scope of its idempotency keys) and its id. */
export interface Caller {
  digest: Buffer;
  keyId: string;
}

/** Whether `digest` is the digest of a key `keys` holds now; 503 when the store cannot be read. */
export async function isValidKey(digest: Buffer, keys: ApiKeyStore): Promise<boolean> {
  return matchesAny(digest, await validDigests(keys));
}

/** A key store that cannot be read is an outage to retry, not a client error nor a bug. */
async function validDigests(keys: ApiKeyStore): Promise<readonly Buffer[]> {
  try {
    return await keys.keyDigests();
  } catch (error) {
    throw Object.assign(serviceUnavailable(), { cause: error });
  }
}

/** Compares against every digest, without stopping early, so timing says nothing about which matched. */
function matchesAny(digest: Buffer, digests: readonly Buffer[]): boolean {
  let matched = false;
  for (const candidate of digests) {
    if (candidate.length === digest.length && timingSafeEqual(candidate, digest)) matched = true;
  }
  return matched;
}
