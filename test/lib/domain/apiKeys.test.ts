/**
 * API keys as digests (lib/domain/apiKeys.ts): what a key's digest and id are, which keys a plain
 * list holds, and that a check answers only for keys held now, whatever else the store holds, and
 * fails as an outage (503) when the store cannot be read.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  StaticApiKeys,
  digestKey,
  isValidKey,
  keyIdOf,
  keyIdOfKey,
  matchingKeyId,
  type ApiKeyStore,
} from '../../../lib/domain/apiKeys.ts';
import { ApiError } from '../../../lib/domain/errors.ts';

const sha256 = (text: string) => createHash('sha256').update(Buffer.from(text, 'utf8')).digest();
/** A store holding `digests`, each under its index as id ('0', '1', …). */
const storeOf = (...digests: Buffer[]): ApiKeyStore => ({
  keyDigests: async () => digests.map((digest, index) => ({ keyId: String(index), digest, scope: 'write' as const })),
});
/** A key as `npm run keys` issues it: id 12 hex digits, secret 43 base64url characters. */
const PSK = `psk_0123456789ab_${'A'.repeat(40)}-_z`;

describe('digestKey and keyIdOf', () => {
  it("digest the key's UTF-8 with SHA-256 and name it by the digest's first 12 hex digits", () => {
    const key = 'clé-🔑';
    expect(digestKey(key)).toEqual(sha256(key));
    expect(keyIdOf(digestKey(key))).toBe(sha256(key).toString('hex').slice(0, 12));
  });
});

describe('keyIdOfKey', () => {
  it("names a psk_ key by the id it carries, any other key by its digest's first 12 hex digits", () => {
    expect(keyIdOfKey(PSK)).toBe('0123456789ab');
    expect(keyIdOfKey('plain')).toBe(sha256('plain').toString('hex').slice(0, 12));
  });

  it.each([
    ['an id of 11 digits', `psk_0123456789a_${'A'.repeat(43)}`],
    ['an id in upper case', `psk_0123456789AB_${'A'.repeat(43)}`],
    ['a secret of 42 characters', `psk_0123456789ab_${'A'.repeat(42)}`],
    ['a secret with a character outside base64url', `psk_0123456789ab_${'A'.repeat(42)}=`],
    ['text before the psk_ form', `x psk_0123456789ab_${'A'.repeat(43)}`],
    ['text after the psk_ form', `${PSK} x`],
  ])('does not read an id out of a key with %s', (_case, key) => {
    expect(keyIdOfKey(key)).toBe(sha256(key).toString('hex').slice(0, 12));
  });
});

describe('StaticApiKeys', () => {
  it('holds each listed key, trimmed, and no empty one, each under its id, a write key without a ceiling', async () => {
    const held = await StaticApiKeys.fromList(` first , ,${PSK},`).keyDigests();
    expect(held).toEqual([
      { keyId: keyIdOf(sha256('first')), digest: sha256('first'), scope: 'write' },
      { keyId: '0123456789ab', digest: sha256(PSK), scope: 'write' },
    ]);
  });

  it('takes a read: or write: prefix as the scope of the key after it, and any other text as part of a key', async () => {
    const held = await StaticApiKeys.fromList(`read:${PSK}, write: second ,reed:third`).keyDigests();
    expect(held).toEqual([
      { keyId: '0123456789ab', digest: sha256(PSK), scope: 'read' },
      { keyId: keyIdOf(sha256('second')), digest: sha256('second'), scope: 'write' },
      { keyId: keyIdOf(sha256('reed:third')), digest: sha256('reed:third'), scope: 'write' },
    ]);
  });
});

describe('matchingKeyId', () => {
  it('names the key whose digest matches, first, middle or last of several', async () => {
    const store = storeOf(sha256('a'), sha256('b'), sha256('c'));
    expect(await matchingKeyId(sha256('a'), store)).toBe('0');
    expect(await matchingKeyId(sha256('b'), store)).toBe('1');
    expect(await matchingKeyId(sha256('c'), store)).toBe('2');
    expect(await matchingKeyId(sha256('d'), store)).toBeUndefined();
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
    const error = await isValidKey(sha256('a'), { keyDigests: () => Promise.reject(cause) }).catch(
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE', cause });
  });
});
