/**
 * A revoked key stops working within KEY_REVOCATION_BOUND_MS, on a busy instance and an idle one,
 * and with the key store down the service fails closed (503) past that bound. The keys CLI issues
 * and revokes on dynalite; getPet answers through the real pipeline with ControlTableApiKeys on a
 * fake clock (the cache's `now`), through the fault proxy so the store can be taken down.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createHandler as getPetHandler } from '../../functions/getPet.ts';
import { dependenciesFromEnvironment, type Dependencies } from '../../lib/service.ts';
import { ControlTableApiKeys, DEFAULT_KEYS_TTL_MS, KEY_REVOCATION_BOUND_MS } from '../../lib/store/controlTableKeys.ts';
import { createDocumentClient } from '../../lib/store/dynamo.ts';
import { API_KEY_FORMAT, EXIT_OK } from '../../tools/keys/keys.ts';
import { apiEvent, call } from '../support/events.ts';
import { keyIn, runKeysCollected } from '../support/keys.ts';
import { useFaultProxy } from '../support/faultProxy.ts';
import { trackSends } from '../support/pendingSends.ts';
import { freshEnvironment, useEmbeddedStore } from '../support/store.ts';

const endpoint = useEmbeddedStore();
const proxy = useFaultProxy(endpoint);
/** Requests on a busy instance come this often (fake time). */
const EVERY_MS = 5_000;

let direct: DynamoDBDocumentClient;
let throughProxy: DynamoDBDocumentClient;
let warnings: MockInstance<typeof console.warn>;
beforeAll(() => {
  direct = createDocumentClient({ endpoint: endpoint() });
  warnings = vi.spyOn(console, 'warn').mockImplementation(() => {});
});
afterAll(() => {
  direct.destroy();
  warnings.mockRestore();
});

/** Resolves once the key reads on their way (the cache's background refreshes among them) have landed. */
let readsLanded: () => Promise<void>;
let at: number;
let service: Dependencies;
let table: string;
beforeEach(async () => {
  const env = await freshEnvironment(endpoint());
  table = env.CONTROL_TABLE_NAME!;
  throughProxy = createDocumentClient({ endpoint: proxy().endpoint });
  readsLanded = trackSends(throughProxy).landed;
  at = Date.parse('2025-06-01T00:00:00Z');
  const keys = new ControlTableApiKeys({ documents: throughProxy, tableName: table, now: () => at });
  service = { ...dependenciesFromEnvironment(env), keys };
});

async function cli(...argv: string[]): Promise<string> {
  const run = await runKeysCollected([...argv, '--stage', 'staging', '--table', table], { client: direct, env: {} });
  expect(run.code).toBe(EXIT_OK);
  return run.out;
}

async function issueKey(): Promise<{ key: string; keyId: string }> {
  const key = keyIn(await cli('create')) ?? '';
  return { key, keyId: API_KEY_FORMAT.exec(key)?.[1] ?? '' };
}

/** getPet with `key`, at the fake time `at`: 404 (an unknown pet) means the key was accepted. */
async function statusWith(key: string): Promise<number> {
  const status = (
    await call(getPetHandler(service), apiEvent('GET', '/pets/1', { headers: { Authorization: `Bearer ${key}` } }))
  ).status;
  // Lets a background refresh that the call started land, as real traffic would.
  await readsLanded();
  return status;
}

describe(`a revoked key stops working within ${KEY_REVOCATION_BOUND_MS / 1000} s of the revocation`, () => {
  it('on a busy instance (a request every 5 s), and never answers with it past the bound', async () => {
    const { key, keyId } = await issueKey();
    expect(await statusWith(key)).toBe(404);
    // Revoked in the middle of a TTL, and again just after a refresh read: both are bounded.
    for (const revokeAfter of [DEFAULT_KEYS_TTL_MS / 2, 0]) {
      const { key: later, keyId: laterId } = revokeAfter === 0 ? await issueKey() : { key, keyId };
      let revokedAt = at;
      for (; at - revokedAt < revokeAfter; at += EVERY_MS) await statusWith(later);
      expect(await cli('revoke', laterId)).toContain(`Revoked API key ${laterId}`);
      revokedAt = at;
      let lastAccepted = revokedAt;
      for (; at <= revokedAt + KEY_REVOCATION_BOUND_MS + 60_000; at += EVERY_MS) {
        const status = await statusWith(later);
        expect([401, 404]).toContain(status);
        if (status === 404) lastAccepted = at;
        if (at - revokedAt > KEY_REVOCATION_BOUND_MS)
          expect(status, `${(at - revokedAt) / 1000} s after revoke`).toBe(401);
      }
      expect(lastAccepted - revokedAt).toBeLessThanOrEqual(KEY_REVOCATION_BOUND_MS);
    }
  });

  it('on an idle instance: the first request after a quiet spell longer than the bound waits for a read', async () => {
    const { key, keyId } = await issueKey();
    const { key: kept } = await issueKey();
    expect(await statusWith(key)).toBe(404);
    await cli('revoke', keyId);
    // Idle for any time past the bound: 20 minutes (the old cache served its kept keys for 60).
    at += 20 * 60_000;
    expect(await statusWith(key)).toBe(401);
    expect(await statusWith(kept)).toBe(404);
  });

  it('fails closed with the store down: kept keys are served until the bound, then every request is 503', async () => {
    const { key } = await issueKey();
    const readAt = at;
    expect(await statusWith(key)).toBe(404);
    proxy().fault = { kind: 'error500', bodyIncludes: table };
    const seen = new Map<number, number>();
    for (; at <= readAt + KEY_REVOCATION_BOUND_MS + 60_000; at += EVERY_MS) {
      const status = await statusWith(key);
      seen.set(status, (seen.get(status) ?? 0) + 1);
      expect(status, `${(at - readAt) / 1000} s after the last read`).toBe(
        at - readAt > KEY_REVOCATION_BOUND_MS ? 503 : 404,
      );
    }
    expect(seen.get(503)).toBeGreaterThan(0);
    expect(warnings).toHaveBeenCalled();
    // The store back: the next request reads the keys again and is answered.
    proxy().fault = undefined;
    expect(await statusWith(key)).toBe(404);
  });
});
