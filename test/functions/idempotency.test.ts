import { DeleteCommand, PutCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { createHandler as createPetHandler } from '../../functions/createPet.ts';
import { digestKey } from '../../lib/domain/apiKeys.ts';
import { RECORD_TTL_SECONDS, bodyHashOf, recordKey } from '../../lib/store/idempotency.ts';
import { createDocumentClient } from '../../lib/store/dynamo.ts';
import type { NewPet } from '../../lib/domain/schemas.ts';
import { dependenciesFromEnvironment, type Environment } from '../../lib/service.ts';
import { toPet } from '../../lib/store/petReads.ts';
import { apiEvent, call } from '../support/events.ts';
import { TEST_API_KEY, freshEnvironment, useEmbeddedStore } from '../support/store.ts';

const OTHER_API_KEY = 'other-client-key-0123456789';
const endpoint = useEmbeddedStore();
let env: Environment;
let createPet: ReturnType<typeof createPetHandler>;

beforeEach(async () => {
  env = await freshEnvironment(endpoint(), { PETSTORE_API_KEYS: `${TEST_API_KEY},${OTHER_API_KEY}` });
  createPet = createPetHandler(dependenciesFromEnvironment(env));
});

const rex = { name: 'Rex', categoryId: 7, status: 'available' };
const post = (body: unknown, key?: string, apiKey = TEST_API_KEY) =>
  call(
    createPet,
    apiEvent('POST', '/pets', {
      body,
      headers: { Authorization: `Bearer ${apiKey}`, ...(key === undefined ? {} : { 'Idempotency-Key': key }) },
    }),
  );

const documents = () => createDocumentClient({ endpoint: env.DYNAMODB_ENDPOINT });
const scan = async (table: string | undefined) =>
  (await documents().send(new ScanCommand({ TableName: table }))).Items ?? [];
const pets = async () => (await scan(env.TABLE_NAME)).map(toPet);
const records = () => scan(env.CONTROL_TABLE_NAME);
const pk = (key: string, apiKey = TEST_API_KEY) => recordKey(digestKey(apiKey), key);

describe('createPet with an Idempotency-Key', () => {
  it('answers a retry with the same pet and Location, creating nothing', async () => {
    const first = await post(rex, 'order-1');
    const again = await post(rex, 'order-1');
    expect(first.status).toBe(201);
    expect(again).toMatchObject({ status: 201, body: first.body });
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(await pets()).toHaveLength(1);
  });

  it('treats the same pet written differently (JSON spacing, escapes, field order) as the same body', async () => {
    const first = await post(rex, 'k');
    const again = await post('{ "status" : "available",\n "categoryId":7, "name":"\\u0052ex" }', 'k');
    expect(again).toMatchObject({ status: 201, body: first.body });
    expect(await pets()).toHaveLength(1);
  });

  it('answers 422 IDEMPOTENCY_KEY_REUSED when the key comes back with another body', async () => {
    await post(rex, 'k');
    const res = await post({ ...rex, name: 'Max' }, 'k');
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      code: 'IDEMPOTENCY_KEY_REUSED',
      message: expect.stringMatching(/different body/),
      status: 422,
    });
    expect(await pets()).toHaveLength(1);
  });

  it('scopes keys to the API key: two clients with one idempotency key get two pets', async () => {
    const mine = await post(rex, 'shared');
    const theirs = await post({ ...rex, name: 'Max' }, 'shared', OTHER_API_KEY);
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(await pets()).toHaveLength(2);
  });

  it('creates a new pet for each request without a key, and for each new key', async () => {
    await post(rex);
    await post(rex);
    await post(rex, 'a');
    await post(rex, 'b');
    expect(await pets()).toHaveLength(4);
  });

  it('keeps only digests, for 24 hours', async () => {
    const before = Math.floor(Date.now() / 1000);
    const res = await post(rex, 'secret-order-key');
    const [record, ...others] = await records();
    expect(others).toEqual([]);
    expect(record).toMatchObject({
      pk: pk('secret-order-key'),
      sk: 'record',
      state: 'completed',
      petId: res.body.id,
      pet: res.body,
    });
    expect(record?.pk).toMatch(/^idempotency#[0-9a-f]{64}$/);
    expect(record?.expiresAt).toBeGreaterThanOrEqual(before + RECORD_TTL_SECONDS);
    expect(record?.expiresAt).toBeLessThanOrEqual(before + RECORD_TTL_SECONDS + 5);
    const text = JSON.stringify(record);
    expect(text).not.toContain('secret-order-key');
    expect(text).not.toContain(TEST_API_KEY);
  });

  it('creates one pet for 20 concurrent requests with one key; the others replay it or answer 409', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(rex, 'race')));
    const stored = await pets();
    expect(stored).toHaveLength(1);
    for (const res of answers) {
      if (res.status === 201) expect(res.body).toEqual({ ...rex, id: stored[0]?.id });
      else {
        expect(res).toMatchObject({ status: 409, body: { code: 'IDEMPOTENCY_IN_PROGRESS', status: 409 } });
        expect(res.headers['retry-after']).toBe('1');
      }
    }
    expect(answers.filter((res) => res.status === 201).length).toBeGreaterThanOrEqual(1);
  });

  it('forgets an expired record even before DynamoDB deletes it', async () => {
    const first = await post(rex, 'old');
    await documents().send(
      new UpdateCommand({
        TableName: env.CONTROL_TABLE_NAME,
        Key: { pk: pk('old'), sk: 'record' },
        UpdateExpression: 'SET expiresAt = :past',
        ExpressionAttributeValues: { ':past': Math.floor(Date.now() / 1000) - 1 },
      }),
    );
    const again = await post({ ...rex, name: 'Max' }, 'old');
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(first.body.id);
    expect(await pets()).toHaveLength(2);
  });

  describe('after an attempt that died in progress (its lease lapsed)', () => {
    const LOST_TOKEN = 'token-of-the-lost-attempt';
    const inProgress = (petId: number, leaseUntil: number, bodyOf = rex) =>
      documents().send(
        new PutCommand({
          TableName: env.CONTROL_TABLE_NAME,
          Item: {
            pk: pk('lost'),
            sk: 'record',
            state: 'in_progress',
            bodyHash: bodyHashOf(bodyOf as NewPet),
            token: LOST_TOKEN,
            petId,
            leaseUntil,
            expiresAt: Math.floor(Date.now() / 1000) + 3600,
          },
        }),
      );

    it('stores the pet under the recorded id when the first attempt never wrote it', async () => {
      await inProgress(424242, Date.now() - 1);
      const res = await post(rex, 'lost');
      expect(res).toMatchObject({ status: 201, body: { ...rex, id: 424242 } });
      expect(res.headers['idempotent-replayed']).toBeUndefined();
      expect(await pets()).toEqual([{ ...rex, id: 424242 }]);
      expect((await records())[0]).toMatchObject({ state: 'completed', pet: { ...rex, id: 424242 } });
    });

    it('answers the pet the first attempt did write, as a replay, creating nothing', async () => {
      await documents().send(
        new PutCommand({ TableName: env.TABLE_NAME, Item: { ...rex, id: 515151, writeToken: LOST_TOKEN } }),
      );
      await inProgress(515151, Date.now() - 1);
      const res = await post(rex, 'lost');
      expect(res).toMatchObject({ status: 201, body: { ...rex, id: 515151 } });
      expect(res.headers['idempotent-replayed']).toBe('true');
      expect(await pets()).toHaveLength(1);
    });

    it('moves the key to a new id when another create holds the recorded one, and is not bricked', async () => {
      // Another create of the same body drew the recorded id first: a collision, not this key's pet.
      await documents().send(
        new PutCommand({ TableName: env.TABLE_NAME, Item: { ...rex, id: 525252, writeToken: 'another-create' } }),
      );
      await inProgress(525252, Date.now() - 1);
      const res = await post(rex, 'lost');
      expect(res.status).toBe(201);
      expect(res.body.id).not.toBe(525252);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
      expect(await pets()).toHaveLength(2);
      expect((await records())[0]).toMatchObject({ state: 'completed', petId: res.body.id, pet: res.body });
      const again = await post(rex, 'lost');
      expect(again).toMatchObject({ status: 201, body: res.body });
      expect(again.headers['idempotent-replayed']).toBe('true');
    });

    it('answers 409 with Retry-After, after a short wait, while the lease is live', async () => {
      await inProgress(616161, Date.now() + 60_000);
      const res = await post(rex, 'lost');
      expect(res).toMatchObject({
        status: 409,
        body: { code: 'IDEMPOTENCY_IN_PROGRESS', message: expect.any(String), status: 409 },
      });
      expect(res.headers['retry-after']).toBe('1');
      expect(await pets()).toEqual([]);
    });
  });

  it.each([
    ['empty', ''],
    ['too long', 'k'.repeat(256)],
    ['not ASCII', 'clé-1'],
    ['a control character', 'key\u0007'],
  ])('answers 400 when the key is %s, storing nothing', async (_case, key) => {
    const res = await post(rex, key);
    expect(res).toMatchObject({
      status: 400,
      body: { code: 'VALIDATION_FAILED', message: expect.stringMatching(/Idempotency-Key/), status: 400 },
    });
    expect(await pets()).toEqual([]);
    expect(await records()).toEqual([]);
  });

  it('answers 410 GONE to a replay whose pet an operator has removed, and never writes it again', async () => {
    const first = await post(rex, 'order-1');
    expect(first.status).toBe(201);
    // As `npm run keys -- pets --remove` removes it: the pet only; the record stays until it expires.
    await documents().send(new DeleteCommand({ TableName: env.TABLE_NAME, Key: { id: first.body.id } }));
    const again = await post(rex, 'order-1');
    expect(again).toMatchObject({
      status: 410,
      body: { code: 'GONE', message: expect.stringMatching(/removed; use a new Idempotency-Key/), status: 410 },
    });
    expect(await pets()).toEqual([]);
    const fresh = await post(rex, 'order-2');
    expect(fresh.status).toBe(201);
    expect(await pets()).toEqual([fresh.body]);
  });

  it('accepts a key of 255 printable characters, spaces and symbols included', async () => {
    expect((await post(rex, `a b~!${'x'.repeat(250)}`)).status).toBe(201);
  });
});
