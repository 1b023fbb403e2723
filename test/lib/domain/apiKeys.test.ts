/**
 * API keys as digests (lib/domain/apiKeys.ts): what a key's digest and id are, which keys a plain
 * list holds, and that a check answers only for keys held now, whatever else the store holds, and
 * fails as an outage (503) when the store cannot be read.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { StaticApiKeys, digestKey, isValidKey, keyIdOf, type ApiKeyStore } from '../../../lib/domain/apiKeys.ts';
import { ApiError } from '../../../lib/domain/errors.ts';

const sha256 = (text: string) => createHash('sha256').update(Buffer.from(text, 'utf8')).digest();
const storeOf = (...digests: Buffer[]): ApiKeyStore => ({ keyDigests: async () => digests });

describe('digestKey and keyIdOf', () => {
  it("digest the key's UTF-8 with SHA-256 and name it by the digest's first 12 hex digits", () => {
    const key = 'clé-🔑';
    expect(digestKey(key)).toEqual(sha256(key));
    expect(keyIdOf(digestKey(key))).toBe(sha256(key).toString('hex').slice(0, 12));
  });
});

describe('StaticApiKeys', () => {
  it('holds each listed key, trimmed, and no empty one', async () => {
    const held = await StaticApiKeys.fromList(' first , ,second,').keyDigests();
    expect(held).toEqual([sha256('first'), sha256('second')]);
  });
});

describe('isValidKey', () => {
  it('accepts a key the store holds, first or last of several', async () => {
    const store = storeOf(sha256('a'), sha256('b'), sha256('c'));
    expect(await isValidKey(sha256('a'), store)).toBe(true);
    expect(await isValidKey(sha256('c'), store)).toBe(true);
  });

  it('refuses a key the store does not hold, and every key when it holds none', async () => {
    expect(await isValidKey(sha256('d'), storeOf(sha256('a'), sha256('b')))).toBe(false);
    expect(await isValidKey(sha256('a'), storeOf())).toBe(false);
  });

  it('passes over a stored digest of another length instead of failing', async () => {
    const store = storeOf(Buffer.alloc(16, 1), sha256('a'));
    expect(await isValidKey(sha256('a'), store)).toBe(true);
    expect(await isValidKey(sha256('b'), store)).toBe(false);
  });

  it('fails with a 503 that keeps the cause when the store cannot be read', async () => {
    const cause = new Error('the control table is down');
    const error = await isValidKey(sha256('a'), { keyDigests: () => Promise.reject(cause) }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE', cause });
  });
});
