/**
 * An operation function takes the key authorizer's verdict (lib/http/authorizerVerdict.ts) instead
 * of reading the keys, only while the digests behind it are no older than its own store would serve:
 * the same revocation bound, one store round trip fewer on a cold start. Through the real pieces:
 * the authorizer over a control table on dynalite, its context handed on as API Gateway does, and the
 * getPet handler's pipeline over a second key store on the same table, whose reads are counted.
 */
import { randomUUID } from 'node:crypto';
import { PutCommand, DeleteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHandler as getPetHandler } from '../../../functions/getPet.ts';
import { StaticApiKeys, digestKey, type ApiKeyStore, type KeyDigests } from '../../../lib/domain/apiKeys.ts';
import { createAuthorizer } from '../../../lib/http/authorizer.ts';
import { INVALID_KEY, callerFromVerdict } from '../../../lib/http/authorizerVerdict.ts';
import { dependenciesFromEnvironment, type Dependencies } from '../../../lib/service.ts';
import { ControlTableApiKeys, KEY_REVOCATION_BOUND_MS, keyItem } from '../../../lib/store/controlTableKeys.ts';
import { createDocumentClient } from '../../../lib/store/dynamo.ts';
import { ensureControlTable } from '../../../local/embeddedStore.ts';
import { generateApiKey } from '../../../tools/keys/keys.ts';
import { apiEvent, call } from '../../support/events.ts';
import { freshEnvironment, useEmbeddedStore } from '../../support/store.ts';

const endpoint = useEmbeddedStore();
let documents: DynamoDBDocumentClient;
beforeAll(() => {
  documents = createDocumentClient({ endpoint: endpoint() });
});
afterAll(() => documents.destroy());

/** A key store that counts its reads. */
class CountedKeys implements ApiKeyStore {
  reads = 0;
  constructor(readonly inner: ApiKeyStore) {}
  get maxStaleMs() {
    return this.inner.maxStaleMs;
  }
  keyDigests(): Promise<KeyDigests> {
    this.reads += 1;
    return this.inner.keyDigests();
  }
}

describe('a function given the key authorizer verdict', () => {
  const { key, keyId } = generateApiKey();
  let tableName: string;
  let service: Dependencies;
  let functionKeys: CountedKeys;
  let authorize: ReturnType<typeof createAuthorizer>;

  beforeEach(async () => {
    tableName = `control-${randomUUID()}`;
    await ensureControlTable(endpoint(), tableName);
    await documents.send(
      new PutCommand({
        TableName: tableName,
        Item: keyItem({ keyId, sha256: digestKey(key).toString('hex'), createdAt: new Date().toISOString() }),
      }),
    );
    authorize = createAuthorizer(new ControlTableApiKeys({ documents, tableName }));
    functionKeys = new CountedKeys(new ControlTableApiKeys({ documents, tableName }));
    const env = await freshEnvironment(endpoint());
    service = { ...dependenciesFromEnvironment({ ...env, CONTROL_TABLE_NAME: tableName }), keys: functionKeys };
  });

  /** The authorizer's context for `key`, as API Gateway hands it to the integration. */
  async function verdict(): Promise<Record<string, unknown>> {
    const allowed = await authorize({
      type: 'REQUEST',
      methodArn: 'arn:aws:execute-api:us-east-1:1:a/v1/GET/pets/1',
      headers: { Authorization: `Bearer ${key}` },
    } as unknown as APIGatewayRequestAuthorizerEvent);
    return { principalId: allowed.principalId, ...allowed.context, integrationLatency: 4 };
  }

  const getPet = (authorizer: Record<string, unknown> | null, token = key, multiValue?: string[]) => {
    const event = apiEvent('GET', '/pets/1', { headers: { Authorization: `Bearer ${token}` } });
    const multiValueHeaders = multiValue
      ? { ...event.multiValueHeaders, Authorization: multiValue }
      : event.multiValueHeaders;
    return call(getPetHandler(service), {
      ...event,
      multiValueHeaders,
      requestContext: { ...event.requestContext, authorizer },
    });
  };

  it('says when the digests behind an Allow were read, as a string of epoch milliseconds', async () => {
    const before = Date.now();
    const context = await verdict();
    expect(context.keyId).toBe(keyId);
    expect(context.keysReadAt).toMatch(/^\d+$/);
    expect(Number(context.keysReadAt)).toBeGreaterThanOrEqual(before);
    expect(Number(context.keysReadAt)).toBeLessThanOrEqual(Date.now());
  });

  it('answers a fresh verdict without reading the keys, and names the verdict key in the caller', async () => {
    const answer = await getPet(await verdict());
    expect(answer.status).toBe(404);
    expect(functionKeys.reads).toBe(0);
  });

  it("refuses 401, reading nothing, a fresh verdict about another token: a cached Allow is no one else's", async () => {
    const other = generateApiKey();
    await documents.send(
      new PutCommand({
        TableName: tableName,
        Item: keyItem({
          keyId: other.keyId,
          sha256: digestKey(other.key).toString('hex'),
          createdAt: new Date().toISOString(),
        }),
      }),
    );
    const answer = await getPet(await verdict(), other.key);
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({ code: 'UNAUTHORIZED', message: 'The API key is invalid.', status: 401 });
    expect(functionKeys.reads).toBe(0);
    // The other key is valid on its own: only the verdict was not about it.
    expect((await getPet(null, other.key)).status).toBe(404);
  });

  it('refuses 401 a request with two Authorization headers, even when the verdict is about one of them', async () => {
    const other = generateApiKey();
    const answer = await getPet(await verdict(), key, [`Bearer ${other.key}`, `Bearer ${key}`]);
    expect(answer.status).toBe(401);
    expect(answer.body.message).toBe('Send one Authorization header, not several.');
  });

  it('refuses 401 a fresh verdict once its key has expired, as an unknown key is refused', async () => {
    const context = await verdict();
    expect(Number(context.expiresAt)).toBeGreaterThan(Date.now());
    const answer = await getPet({ ...context, expiresAt: String(Date.now() - 1) });
    expect(answer.status).toBe(401);
    expect(answer.body.message).toBe('The API key is invalid.');
    expect(functionKeys.reads).toBe(0);
  });

  it('reads the keys itself when there is no verdict (the local API), as before', async () => {
    expect((await getPet(null)).status).toBe(404);
    expect(functionKeys.reads).toBe(1);
  });

  it('reads the keys itself for a verdict older than the bound, and so refuses a key revoked since', async () => {
    const context = await verdict();
    await documents.send(new DeleteCommand({ TableName: tableName, Key: { pk: 'apikeys', sk: keyId } }));
    // API Gateway may replay a cached Allow for its TTL; the digests behind it may be older still.
    const stale = { ...context, keysReadAt: String(Date.now() - KEY_REVOCATION_BOUND_MS - 1) };
    const answer = await getPet(stale);
    expect(answer.status).toBe(401);
    expect(functionKeys.reads).toBe(1);
    // Within the bound, the revoked key's verdict is still taken: the bound is the documented one.
    expect((await getPet(context)).status).toBe(404);
    expect(functionKeys.reads).toBe(1);
  });
});

describe('callerFromVerdict', () => {
  const keys: ApiKeyStore = { keyDigests: () => Promise.reject(new Error('not read')), maxStaleMs: 1_000 };
  const NOW = 1_800_000_000_000;
  const token = 'psk_0123456789ab_token';
  const keyDigest = digestKey(token).toString('hex');
  const EXPIRES = String(NOW + 60_000);
  const about = (fields: Record<string, unknown>) => ({
    keyDigest,
    expiresAt: EXPIRES,
    scope: 'read',
    createsPerDay: '7',
    ...fields,
  });

  it('vouches up to exactly maxStaleMs after the read, with the token digest, the verdict key id, expiry, scope and ceiling', () => {
    expect(callerFromVerdict(about({ keyId: 'k1', keysReadAt: String(NOW - 1_000) }), token, keys, NOW)).toEqual({
      digest: digestKey(token),
      keyId: 'k1',
      keysReadAt: NOW - 1_000,
      expiresAt: NOW + 60_000,
      scope: 'read',
      createsPerDay: 7,
    });
    expect(
      (callerFromVerdict(about({ keyId: 'k1', keysReadAt: NOW - 1_000 }), token, keys, NOW) as { keyId: string }).keyId,
    ).toBe('k1');
    expect(
      callerFromVerdict(about({ keyId: 'k1', keysReadAt: String(NOW - 1_001) }), token, keys, NOW),
    ).toBeUndefined();
  });

  it.each<[string, Record<string, unknown>]>([
    ['another token', { keyDigest: digestKey('psk_0123456789ab_other').toString('hex') }],
    ['a digest that is not one', { keyDigest: 'not hex' }],
    ['a key expired at that instant', { expiresAt: String(NOW) }],
    ['a key expired before', { expiresAt: String(NOW - 1) }],
  ])('refuses a fresh verdict about %s', (_case, fields) => {
    expect(callerFromVerdict(about({ keyId: 'k1', keysReadAt: String(NOW), ...fields }), token, keys, NOW)).toBe(
      INVALID_KEY,
    );
  });

  it.each<[string, unknown]>([
    ['no authorizer', null],
    ['a verdict without keysReadAt (keys from configuration)', about({ keyId: 'k1' })],
    [
      'a verdict that names no token (an authorizer from before verdicts did)',
      { keyId: 'k1', keysReadAt: String(NOW), expiresAt: EXPIRES },
    ],
    [
      'a verdict without expiry',
      { keyId: 'k1', keysReadAt: String(NOW), keyDigest, scope: 'write', createsPerDay: '7' },
    ],
    [
      'a verdict without a scope (an authorizer from before scopes)',
      { keyId: 'k1', keysReadAt: String(NOW), keyDigest, expiresAt: EXPIRES, createsPerDay: '7' },
    ],
    ['a verdict with a scope that is not one', about({ keyId: 'k1', keysReadAt: String(NOW), scope: 'admin' })],
    [
      'a verdict without a daily create ceiling',
      { keyId: 'k1', keysReadAt: String(NOW), keyDigest, expiresAt: EXPIRES, scope: 'write' },
    ],
    ['a verdict with a ceiling that is not one', about({ keyId: 'k1', keysReadAt: String(NOW), createsPerDay: '0' })],
    ['an empty keyId', about({ keyId: '', keysReadAt: String(NOW) })],
    ['a keyId that is not a string', about({ keyId: 7, keysReadAt: String(NOW) })],
    ['keysReadAt not digits', about({ keyId: 'k1', keysReadAt: '1e12' })],
    ['keysReadAt empty', about({ keyId: 'k1', keysReadAt: '' })],
    ['keysReadAt negative', about({ keyId: 'k1', keysReadAt: `-${NOW}` })],
    ['keysReadAt a fraction', about({ keyId: 'k1', keysReadAt: NOW - 0.5 })],
    ['keysReadAt past the safe integers', about({ keyId: 'k1', keysReadAt: '9999999999999999' })],
  ])('does not vouch for %s', (_case, authorizer) => {
    expect(callerFromVerdict(authorizer, token, keys, NOW)).toBeUndefined();
  });

  it('never vouches for a store that keeps nothing (keys from configuration are checked directly)', () => {
    expect(
      callerFromVerdict(about({ keyId: 'k1', keysReadAt: String(NOW) }), token, new StaticApiKeys([token]), NOW),
    ).toBeUndefined();
  });
});
