/**
 * Bearer API-key authentication. Keys are held and compared only as SHA-256 digests, in constant
 * time, through the small `ApiKeyStore` interface: locally the keys come from the environment,
 * when deployed from the control table (lib/controlTableKeys.ts), and the handlers never know which.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError, serviceUnavailable } from './errors.ts';

export const AUTH_REALM = 'petstore';

export interface ApiKeyStore {
  /** SHA-256 digests of every key that is valid now. */
  keyDigests(): Promise<readonly Buffer[]>;
}

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

/** RFC 6750 b64token. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

const unauthorized = (message: string, tokenPresented: boolean) =>
  new ApiError('UNAUTHORIZED', message, {
    'WWW-Authenticate': tokenPresented
      ? `Bearer realm="${AUTH_REALM}", error="invalid_token"`
      : `Bearer realm="${AUTH_REALM}"`,
  });

/** Who sent an authenticated request: the key's digest (the scope of its idempotency keys) and its id. */
export interface Caller {
  digest: Buffer;
  keyId: string;
}

/** Resolves to the key's id (`keyIdOf`) when `authorization` carries a valid key; throws a 401 otherwise. */
export async function authenticate(authorization: string | undefined, keys: ApiKeyStore): Promise<string> {
  return (await authenticateCaller(authorization, keys)).keyId;
}

/** The caller when `authorization` carries a valid key; throws a 401 otherwise. */
export async function authenticateCaller(authorization: string | undefined, keys: ApiKeyStore): Promise<Caller> {
  const header = authorization?.trim() ?? '';
  if (header === '') throw unauthorized('Missing Authorization header; send "Authorization: Bearer <API_KEY>".', false);
  if (!/^Bearer(\s|$)/i.test(header)) throw unauthorized('The Authorization scheme must be Bearer.', false);
  const token = BEARER.exec(header)?.[1];
  if (!token) {
    const empty = header.replace(/^Bearer/i, '').trim() === '';
    throw unauthorized(empty ? 'The bearer token is empty.' : 'The API key is invalid.', !empty);
  }
  const digest = digestKey(token);
  if (!matchesAny(digest, await validDigests(keys))) throw unauthorized('The API key is invalid.', true);
  return { digest, keyId: keyIdOf(digest) };
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

const callers = new WeakMap<object, Caller>();

/** Remembers who sent `event`, once the pipeline has authenticated it. */
export const rememberCaller = (event: object, caller: Caller): void => void callers.set(event, caller);

/**
 * Who sent `event`, as the pipeline authenticated it: two clients never see each other's
 * idempotency records. Only for an event that passed authentication.
 */
export function callerOf(event: object): Caller {
  const caller = callers.get(event);
  if (!caller) throw new Error('callerOf needs an authenticated request.');
  return caller;
}
