import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CursorCodec } from '../../lib/pagination.ts';
import { secretsManagerSecret } from '../../lib/secretsManagerSecret.ts';
import { fakeSecretsManagerClient, useFakeAws } from '../support/fakeAws.ts';

const fake = useFakeAws();
const GET = 'secretsmanager.GetSecretValue';
const TTL = 15 * 60_000;

let client: SecretsManagerClient;
beforeAll(() => {
  client = fakeSecretsManagerClient(fake());
});
afterAll(() => client.destroy());

function freshSecret(value: string): string {
  const secretId = `petstore/test-${randomUUID().slice(0, 8)}/cursor-secret`;
  fake().secrets.set(secretId, value);
  return secretId;
}

const requestsFor = (secretId: string) =>
  fake().requests.filter((request) => request.target === GET && request.input.SecretId === secretId);

function clock(start = Date.parse('2025-01-01T00:00:00Z')) {
  let at = start;
  return { now: () => at, advance: (ms: number) => void (at += ms) };
}

describe('secretsManagerSecret', () => {
  it("returns the secret's SecretString", async () => {
    const secretId = freshSecret('first-secret-0123456789');
    await expect(secretsManagerSecret({ secretId, client })()).resolves.toBe('first-secret-0123456789');
  });

  it('caches the value for the TTL, then reads it again (a rotated secret is picked up)', async () => {
    const secretId = freshSecret('first-secret-0123456789');
    const time = clock();
    const secret = secretsManagerSecret({ secretId, client, ttlMs: TTL, now: time.now });

    expect(await secret()).toBe('first-secret-0123456789');
    fake().secrets.set(secretId, 'rotated-secret-0123456789');
    time.advance(TTL - 1);
    expect(await secret()).toBe('first-secret-0123456789');
    expect(requestsFor(secretId)).toHaveLength(1);

    time.advance(1);
    expect(await secret()).toBe('rotated-secret-0123456789');
    expect(requestsFor(secretId)).toHaveLength(2);
  });

  it('shares one request between concurrent calls', async () => {
    const secretId = freshSecret('shared-secret-0123456789');
    const secret = secretsManagerSecret({ secretId, client });
    expect(await Promise.all([secret(), secret(), secret()])).toEqual(Array(3).fill('shared-secret-0123456789'));
    expect(requestsFor(secretId)).toHaveLength(1);
  });

  it('throws when the secret does not exist, as AWS answers it', async () => {
    const secretId = `petstore/missing-${randomUUID()}`;
    await expect(secretsManagerSecret({ secretId, client })()).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
  });

  it('keeps serving the last value, with a warning, when a refresh fails', async () => {
    const secretId = freshSecret('stale-secret-0123456789');
    const time = clock();
    const secret = secretsManagerSecret({ secretId, client, ttlMs: TTL, now: time.now });
    expect(await secret()).toBe('stale-secret-0123456789');

    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    fake().failWith(GET, { status: 400, type: 'AccessDeniedException', message: 'no' });
    try {
      time.advance(TTL);
      expect(await secret()).toBe('stale-secret-0123456789');
      expect(warn).toHaveBeenCalledTimes(1);
      const line = JSON.parse(String(warn.mock.calls[0]?.[0])) as Record<string, unknown>;
      expect(line).toMatchObject({ level: 'WARN', error: { name: 'AccessDeniedException' } });
      expect(JSON.stringify(line)).not.toContain('stale-secret');
    } finally {
      fake().failWith(GET, undefined);
      warn.mockRestore();
    }
    expect(requestsFor(secretId)).toHaveLength(2);
  });

  it('signs and checks page cursors', async () => {
    const secretId = freshSecret('cursor-secret-0123456789abcdef');
    const codec = new CursorCodec(secretsManagerSecret({ secretId, client }));
    const cursor = await codec.encode(42, 'available');
    await expect(codec.decode(cursor, 'available')).resolves.toBe(42);
    expect(requestsFor(secretId)).toHaveLength(1);
  });
});
