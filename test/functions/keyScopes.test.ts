/**
 * What a key may do, as the functions enforce it (lib/domain/keyScope.ts) on dynalite: a read key
 * is refused 403 on createPet and reads as before; a write key's creates are counted per UTC day
 * in the control table (lib/store/dailyCreates.ts) and refused 429 with Retry-After past its
 * ceiling, atomically under concurrency; an idempotent replay is not counted. The clock is injected.
 */
import { GetCommand, PutCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHandler as createPetHandler } from '../../functions/createPet.ts';
import { createHandler as getPetHandler } from '../../functions/getPet.ts';
import { createHandler as listPetsHandler } from '../../functions/listPets.ts';
import { digestKey, keyIdOfKey, type ApiKeyStore, type KeyDigests } from '../../lib/domain/apiKeys.ts';
import { SCOPE_REFUSED_MESSAGE, type KeyScope } from '../../lib/domain/keyScope.ts';
import { createAuthorizer } from '../../lib/http/authorizer.ts';
import { dependenciesFromEnvironment, type Dependencies, type Environment } from '../../lib/service.ts';
import { createCountKey } from '../../lib/store/dailyCreates.ts';
import { ControlTableApiKeys, keyItem } from '../../lib/store/controlTableKeys.ts';
import { createDocumentClient } from '../../lib/store/dynamo.ts';
import { generateApiKey } from '../../tools/keys/keys.ts';
import { apiEvent, call } from '../support/events.ts';
import { TEST_API_KEY, freshEnvironment, useEmbeddedStore } from '../support/store.ts';

const endpoint = useEmbeddedStore();
let documents: DynamoDBDocumentClient;
let env: Environment;
let clock: Date;

beforeAll(() => {
  documents = createDocumentClient({ endpoint: endpoint() });
});
afterAll(() => documents.destroy());
beforeEach(async () => {
  // Keys from the control table, as deployed (no PETSTORE_API_KEYS).
  env = await freshEnvironment(endpoint(), { PETSTORE_API_KEYS: undefined });
  clock = new Date('2026-11-29T23:59:30.250Z');
});

/** A key issued into the control table as `npm run keys -- create` writes it. */
async function issued(scope: KeyScope, createsPerDay?: number): Promise<string> {
  const { key, keyId } = generateApiKey();
  const item = keyItem({
    keyId,
    sha256: digestKey(key).toString('hex'),
    createdAt: new Date(clock.getTime() - 60_000).toISOString(),
    scope,
    createsPerDay,
  });
  await documents.send(new PutCommand({ TableName: env.CONTROL_TABLE_NAME, Item: item }));
  return key;
}

const serviceOf = (overrides: Partial<Dependencies> = {}): Dependencies => ({
  ...dependenciesFromEnvironment(env),
  now: () => clock,
  ...overrides,
});

const post = (service: Dependencies, key: string, headers: Record<string, string> = {}, name = 'Rex') =>
  call(
    createPetHandler(service),
    apiEvent('POST', '/pets', {
      body: { name, categoryId: 1, status: 'available' },
      headers: { Authorization: `Bearer ${key}`, ...headers },
    }),
  );

const storedPets = async () =>
  (await documents.send(new ScanCommand({ TableName: env.TABLE_NAME, ConsistentRead: true }))).Items ?? [];

const countOf = async (key: string) =>
  (
    await documents.send(
      new GetCommand({
        TableName: env.CONTROL_TABLE_NAME,
        Key: createCountKey(keyIdOfKey(key), clock.getTime()),
        ConsistentRead: true,
      }),
    )
  ).Item;

describe('a read key', () => {
  it('is refused 403 FORBIDDEN in the Error shape on createPet, storing and counting nothing, and reads as before', async () => {
    const service = serviceOf();
    const key = await issued('read');
    const refused = await post(service, key);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ code: 'FORBIDDEN', message: SCOPE_REFUSED_MESSAGE, status: 403 });
    expect(await storedPets()).toEqual([]);
    expect(await countOf(key)).toBeUndefined();

    const auth = { headers: { Authorization: `Bearer ${key}` } };
    expect((await call(listPetsHandler(service), apiEvent('GET', '/pets', auth))).status).toBe(200);
    expect((await call(getPetHandler(service), apiEvent('GET', '/pets/1', auth))).status).toBe(404);
  });

  it("is refused by the function on the authorizer's verdict alone, without reading the keys", async () => {
    const key = await issued('read');
    const control = dependenciesFromEnvironment(env).control;
    const authorize = createAuthorizer(new ControlTableApiKeys(control));
    const allow = await authorize({
      type: 'REQUEST',
      methodArn: 'arn:aws:execute-api:us-east-1:1:api/v1/GET/pets',
      headers: { Authorization: `Bearer ${key}` },
    } as unknown as APIGatewayRequestAuthorizerEvent);
    const reads = { count: 0 };
    const store = new ControlTableApiKeys(control);
    const counted: ApiKeyStore = {
      maxStaleMs: store.maxStaleMs,
      keyDigests: (): Promise<KeyDigests> => {
        reads.count += 1;
        return store.keyDigests();
      },
    };
    const event = apiEvent('POST', '/pets', {
      body: { name: 'Rex', categoryId: 1 },
      headers: { Authorization: `Bearer ${key}` },
    });
    event.requestContext.authorizer = { principalId: allow.principalId, ...allow.context };
    const refused = await call(createPetHandler(serviceOf({ keys: counted })), event);
    expect(refused.status).toBe(403);
    expect(reads.count).toBe(0);
  });
});

describe("a write key's daily create ceiling", () => {
  it('answers 429 TOO_MANY_REQUESTS past it, with Retry-After until 00:00 UTC, and again from then on', async () => {
    const service = serviceOf();
    const key = await issued('write', 3);
    for (const name of ['a', 'b', 'c']) expect((await post(service, key, {}, name)).status).toBe(201);
    const refused = await post(service, key, {}, 'd');
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      code: 'TOO_MANY_REQUESTS',
      message: 'This API key has created its 3 pets for today (UTC); it may create more from 00:00 UTC.',
      status: 429,
    });
    // 29.75 s to midnight, rounded up.
    expect(refused.headers['retry-after']).toBe('30');
    expect(await storedPets()).toHaveLength(3);
    // The day's count, kept by the table's TTL until the day ends.
    expect(await countOf(key)).toMatchObject({ creates: 3, expiresAt: Date.parse('2026-11-30T00:00:00Z') / 1000 });

    clock = new Date('2026-11-30T00:00:00.000Z');
    expect((await post(service, key, {}, 'e')).status).toBe(201);
    expect(await countOf(key)).toMatchObject({ creates: 1 });
  });

  it('holds under concurrent creates: exactly the ceiling are stored, the rest are 429', async () => {
    const service = serviceOf();
    const key = await issued('write', 5);
    const answers = await Promise.all(Array.from({ length: 12 }, (_, n) => post(service, key, {}, `pet ${n}`)));
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(5);
    expect(answers.filter((answer) => answer.status === 429)).toHaveLength(7);
    expect(await storedPets()).toHaveLength(5);
  });

  it('counts each key apart', async () => {
    const service = serviceOf();
    const [first, second] = [await issued('write', 1), await issued('write', 1)];
    expect((await post(service, first)).status).toBe(201);
    expect((await post(service, first)).status).toBe(429);
    expect((await post(service, second)).status).toBe(201);
  });

  it('does not count an idempotent replay, and a create refused 429 leaves its Idempotency-Key to a later day', async () => {
    const service = serviceOf();
    const key = await issued('write', 2);
    const once = await post(service, key, { 'Idempotency-Key': 'order-1' });
    expect(once.status).toBe(201);
    for (let replay = 0; replay < 3; replay++) {
      const again = await post(service, key, { 'Idempotency-Key': 'order-1' });
      expect([again.status, again.body.id, again.headers['idempotent-replayed']]).toEqual([201, once.body.id, 'true']);
    }
    expect(await countOf(key)).toMatchObject({ creates: 1 });
    expect((await post(service, key, { 'Idempotency-Key': 'order-2' })).status).toBe(201);
    const refused = await post(service, key, { 'Idempotency-Key': 'order-3' });
    expect(refused.status).toBe(429);
    expect(await storedPets()).toHaveLength(2);

    clock = new Date('2026-11-30T08:00:00.000Z');
    const later = await post(service, key, { 'Idempotency-Key': 'order-3' });
    expect(later.status).toBe(201);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
    expect(await storedPets()).toHaveLength(3);
  });
});

describe('keys given in configuration (PETSTORE_API_KEYS)', () => {
  it('are write keys without a ceiling, counted nowhere; a read: prefix makes a read key', async () => {
    const { key: reader } = generateApiKey();
    env = { ...env, PETSTORE_API_KEYS: `${TEST_API_KEY},read:${reader}` };
    const service = serviceOf();
    for (let n = 0; n < 3; n++) expect((await post(service, TEST_API_KEY)).status).toBe(201);
    const { Items = [] } = await documents.send(new ScanCommand({ TableName: env.CONTROL_TABLE_NAME }));
    expect(Items).toEqual([]);
    expect((await post(service, reader)).status).toBe(403);
  });
});
