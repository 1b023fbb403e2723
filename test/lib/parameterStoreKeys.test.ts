import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import type { SSMClient } from '@aws-sdk/client-ssm';
import { authenticate, digestKey } from '../../lib/auth.ts';
import { ApiError } from '../../lib/errors.ts';
import {
  ParameterStoreApiKeys,
  apiKeysPath,
  formatKeyRecord,
  parseKeyRecord,
} from '../../lib/parameterStoreKeys.ts';
import { fakeSsmClient, useFakeAws } from '../support/fakeAws.ts';

const fake = useFakeAws();
const BY_PATH = 'AmazonSSM.GetParametersByPath';
const TTL = 5 * 60_000;

let client: SSMClient;
beforeAll(() => {
  client = fakeSsmClient(fake());
});
afterAll(() => client.destroy());

let warnings: MockInstance<typeof console.warn>;
beforeAll(() => {
  warnings = vi.spyOn(console, 'warn').mockImplementation(() => {});
});
afterEach(() => warnings.mockClear());
afterAll(() => warnings.mockRestore());

/** A path of its own for each test: the stand-in is shared by the file. */
const freshPath = () => `/petstore/test-${randomUUID().slice(0, 8)}/api-keys`;

const newKey = () => `psk_${randomBytes(6).toString('hex')}_${randomBytes(32).toString('base64url')}`;

/** Stores `key` as the CLI does: its digest only. */
function storeKey(path: string, key: string, keyId = randomBytes(6).toString('hex')): string {
  fake().putParameter(`${path}/${keyId}`, formatKeyRecord({ sha256: digestKey(key).toString('hex'), createdAt: new Date().toISOString() }));
  return keyId;
}

const hex = (digests: readonly Buffer[]) => digests.map((digest) => digest.toString('hex')).sort();

/** A clock the test moves by hand. */
function clock(start = Date.parse('2025-01-01T00:00:00Z')) {
  let at = start;
  return { now: () => at, advance: (ms: number) => void (at += ms) };
}

function byPathRequests(path: string) {
  return fake().requests.filter((request) => request.target === BY_PATH && request.input.Path === path);
}

const warningLines = () => warnings.mock.calls.map(([line]) => JSON.parse(String(line)) as Record<string, unknown>);

describe('ParameterStoreApiKeys', () => {
  it('serves the digest of every key under the path, decrypted and not recursively', async () => {
    const path = freshPath();
    const keys = [newKey(), newKey(), newKey()];
    for (const key of keys) storeKey(path, key);
    fake().putParameter(`${path}/nested/deeper`, formatKeyRecord({ sha256: 'a'.repeat(64), createdAt: '2025-01-01T00:00:00Z' }));
    fake().putParameter(`${path}-old/abcdefabcdef`, formatKeyRecord({ sha256: 'b'.repeat(64), createdAt: '2025-01-01T00:00:00Z' }));

    const store = new ParameterStoreApiKeys({ path, client });

    expect(hex(await store.keyDigests())).toEqual(hex(keys.map(digestKey)));
    const [request] = byPathRequests(path);
    expect(request?.input).toMatchObject({ Path: path, Recursive: false, WithDecryption: true });
  });

  it('reads every page: more than 10 keys are all served', async () => {
    const path = freshPath();
    const keys = Array.from({ length: 23 }, newKey);
    for (const key of keys) storeKey(path, key);

    const digests = await new ParameterStoreApiKeys({ path, client }).keyDigests();

    expect(digests).toHaveLength(23);
    expect(hex(digests)).toEqual(hex(keys.map(digestKey)));
    expect(byPathRequests(path)).toHaveLength(3); // 10 + 10 + 3, following NextToken
    expect(byPathRequests(path).map((request) => request.input.NextToken !== undefined)).toEqual([false, true, true]);
  });

  it('skips malformed values with a warning that names the parameter but never shows the value', async () => {
    const path = freshPath();
    const good = newKey();
    storeKey(path, good);
    const malformed = {
      notJson: 'psk_not-json',
      noDigest: JSON.stringify({ createdAt: '2025-01-01T00:00:00Z' }),
      shortDigest: JSON.stringify({ sha256: 'abc123', createdAt: '2025-01-01T00:00:00Z' }),
      badDate: JSON.stringify({ sha256: 'c'.repeat(64), createdAt: 'yesterday' }),
      array: '[]',
    };
    for (const [id, value] of Object.entries(malformed)) fake().putParameter(`${path}/${id}`, value);

    const digests = await new ParameterStoreApiKeys({ path, client }).keyDigests();

    expect(hex(digests)).toEqual(hex([digestKey(good)]));
    const lines = warningLines();
    expect(lines).toHaveLength(Object.keys(malformed).length);
    for (const line of lines) expect(line.level).toBe('WARN');
    for (const id of Object.keys(malformed)) expect(lines.some((line) => String(line.message).includes(`${path}/${id}`))).toBe(true);
    expect(JSON.stringify(lines)).not.toContain('psk_not-json');
  });

  it('serves no digests, with a warning, when the path holds no keys', async () => {
    const path = freshPath();
    expect(await new ParameterStoreApiKeys({ path, client }).keyDigests()).toEqual([]);
    expect(warningLines()).toEqual([expect.objectContaining({ level: 'WARN', message: expect.stringContaining(path) })]);
  });

  it('makes one request for two calls within the TTL, and refreshes after it', async () => {
    const path = freshPath();
    const first = newKey();
    storeKey(path, first);
    const time = clock();
    const store = new ParameterStoreApiKeys({ path, client, ttlMs: TTL, now: time.now });

    expect(hex(await store.keyDigests())).toEqual(hex([digestKey(first)]));
    const second = newKey();
    storeKey(path, second);
    time.advance(TTL - 1);
    expect(hex(await store.keyDigests())).toEqual(hex([digestKey(first)]));
    expect(byPathRequests(path)).toHaveLength(1);

    time.advance(1);
    expect(hex(await store.keyDigests())).toEqual(hex([digestKey(first), digestKey(second)]));
    expect(byPathRequests(path)).toHaveLength(2);
  });

  it('shares one request between calls made while a load is in flight', async () => {
    const path = freshPath();
    storeKey(path, newKey());
    const store = new ParameterStoreApiKeys({ path, client });

    const results = await Promise.all(Array.from({ length: 5 }, () => store.keyDigests()));

    expect(byPathRequests(path)).toHaveLength(1);
    for (const result of results) expect(result).toBe(results[0]);
  });

  it('keeps serving the last digests, with a warning, when a refresh fails', async () => {
    const path = freshPath();
    const key = newKey();
    storeKey(path, key);
    const time = clock();
    const store = new ParameterStoreApiKeys({ path, client, ttlMs: TTL, now: time.now });
    expect(hex(await store.keyDigests())).toEqual(hex([digestKey(key)]));

    fake().failWith(BY_PATH, { status: 400, type: 'AccessDeniedException', message: 'User is not authorized' });
    try {
      time.advance(TTL);
      expect(hex(await store.keyDigests())).toEqual(hex([digestKey(key)]));
      expect(byPathRequests(path)).toHaveLength(2);
      expect(warningLines()).toEqual([
        expect.objectContaining({
          level: 'WARN',
          message: expect.stringContaining(path),
          error: { name: 'AccessDeniedException', message: 'User is not authorized' },
        }),
      ]);
      // While it is down, the stale value is served without a failing request on every call.
      expect(hex(await store.keyDigests())).toEqual(hex([digestKey(key)]));
      expect(byPathRequests(path)).toHaveLength(2);
    } finally {
      fake().failWith(BY_PATH, undefined);
    }

    const added = newKey();
    storeKey(path, added);
    time.advance(30_000);
    expect(hex(await store.keyDigests())).toEqual(hex([digestKey(key), digestKey(added)]));
    expect(byPathRequests(path)).toHaveLength(3);
  });

  it('serves the stale value through a server error too, after the SDK has retried it', async () => {
    const path = freshPath();
    const key = newKey();
    storeKey(path, key);
    const time = clock();
    const store = new ParameterStoreApiKeys({ path, client, ttlMs: TTL, now: time.now });
    await store.keyDigests();

    fake().failWith(BY_PATH, { status: 500, type: 'InternalServerError', message: 'boom' });
    try {
      time.advance(TTL);
      expect(hex(await store.keyDigests())).toEqual(hex([digestKey(key)]));
    } finally {
      fake().failWith(BY_PATH, undefined);
    }
    expect(byPathRequests(path)).toHaveLength(1 + 3); // maxAttempts: 3
  });

  it('throws when the first load fails, and tries again on the next call', async () => {
    const path = freshPath();
    const key = newKey();
    storeKey(path, key);
    const store = new ParameterStoreApiKeys({ path, client });

    fake().failWith(BY_PATH, { status: 400, type: 'AccessDeniedException', message: 'User is not authorized' });
    try {
      await expect(store.keyDigests()).rejects.toMatchObject({ name: 'AccessDeniedException' });
    } finally {
      fake().failWith(BY_PATH, undefined);
    }
    expect(hex(await store.keyDigests())).toEqual(hex([digestKey(key)]));
    expect(byPathRequests(path)).toHaveLength(2);
  });

  it('lets authenticate accept a stored key and reject any other', async () => {
    const path = freshPath();
    const key = newKey();
    storeKey(path, key);
    const store = new ParameterStoreApiKeys({ path, client });

    await expect(authenticate(`Bearer ${key}`, store)).resolves.toMatch(/^[0-9a-f]{12}$/);
    const rejected = await authenticate(`Bearer ${newKey()}`, store).catch((error: unknown) => error);
    expect(rejected).toBeInstanceOf(ApiError);
    expect((rejected as ApiError).status).toBe(401);
  });

  it('takes the path with or without a trailing slash, and refuses a relative one', async () => {
    const path = freshPath();
    const key = newKey();
    storeKey(path, key);
    const store = new ParameterStoreApiKeys({ path: `${path}/`, client });
    expect(store.path).toBe(path);
    expect(hex(await store.keyDigests())).toEqual(hex([digestKey(key)]));
    expect(() => new ParameterStoreApiKeys({ path: 'petstore/staging/api-keys', client })).toThrow(/must start with "\/"/);
  });

  it('makes no request before the first call', () => {
    const before = fake().count();
    new ParameterStoreApiKeys({ path: apiKeysPath('staging') });
    expect(fake().count()).toBe(before);
  });
});

describe('key records', () => {
  it('round-trip through the parameter value format', () => {
    const record = { sha256: digestKey('k').toString('hex'), createdAt: '2025-01-01T00:00:00.000Z' };
    expect(JSON.parse(formatKeyRecord(record))).toEqual(record);
    expect(parseKeyRecord(formatKeyRecord(record))).toEqual(record);
    expect(parseKeyRecord(undefined)).toBeUndefined();
    expect(parseKeyRecord('null')).toBeUndefined();
  });

  it('name each stage its own path', () => {
    expect(apiKeysPath('staging')).toBe('/petstore/staging/api-keys');
    expect(apiKeysPath('production')).toBe('/petstore/production/api-keys');
  });
});
