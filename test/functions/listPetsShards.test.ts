/**
 * listPets with a status over a sharded index, with faults on one shard's queries and the index's
 * per-partition write limit simulated on the wire (tools/stage-emulator/src/alarms/faultProxy.ts). The time bound is a
 * correctness bound on a hang (the store budget is 2.5 s), with slack for a loaded machine.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { createHandler as createPetHandler } from '../../functions/createPet.ts';
import { createHandler as listPetsHandler } from '../../functions/listPets.ts';
import { dependenciesFromEnvironment, type Environment, type Dependencies } from '../../lib/service.ts';
import { ANSWER_MARGIN_MS, STORE_BUDGET_MS } from '../../lib/store/deadline.ts';
import { createDocumentClient } from '../../lib/store/dynamo.ts';
import { petsTable, STATUS_INDEX_SHARDS_VARIABLE } from '../../lib/store/table.ts';
import { apiEvent, call } from '../support/events.ts';
import type { FaultKind } from '@petstore/stage-emulator/faultProxy';
import { useFaultProxy } from '../support/faultProxy.ts';
import { freshEnvironment, useEmbeddedStore } from '../support/store.ts';

const ANSWER_BOUND_MS = STORE_BUDGET_MS + 2_000;
const SHARDS = 4;
const PETS = 30;
const SHARD_KEY = petsTable.statusIndex.partitionKey.name;

const endpoint = useEmbeddedStore();
const proxy = useFaultProxy(endpoint);
let env: Environment;
let service: Dependencies;

beforeEach(async () => {
  env = await freshEnvironment(proxy().endpoint, { [STATUS_INDEX_SHARDS_VARIABLE]: String(SHARDS) });
  service = dependenciesFromEnvironment(env);
});

const create = (status?: string) =>
  call(
    createPetHandler(service),
    apiEvent('POST', '/pets', { body: { name: 'Rex', categoryId: 1, ...(status ? { status } : {}) } }),
  );

async function timed<T>(work: Promise<T>): Promise<T & { ms: number }> {
  const started = Date.now();
  const result = await work;
  return { ...result, ms: Date.now() - started };
}

describe('createPet on a sharded index', () => {
  it('stores the shard key of a pet with a status, answers only the Pet, and gives a pet without status none', async () => {
    const documents = createDocumentClient({ endpoint: endpoint() });
    const withStatus = await create('sold');
    const without = await create();
    expect(Object.keys(withStatus.body).sort()).toEqual(['categoryId', 'id', 'name', 'status']);
    const stored = async (id: number) =>
      (await documents.send(new GetCommand({ TableName: env.TABLE_NAME, Key: { id } }))).Item;
    expect((await stored(withStatus.body.id))?.[SHARD_KEY]).toBe(`sold#${withStatus.body.id % SHARDS}`);
    expect(await stored(without.body.id)).not.toHaveProperty(SHARD_KEY);
    const listed = await call(listPetsHandler(service), apiEvent('GET', '/pets?status=sold'));
    expect(listed.body).toEqual([withStatus.body]);
    documents.destroy();
  });

  it('is refused 503 once one index key value takes more writes than its partition allows; other values still write', async () => {
    env = await freshEnvironment(proxy().endpoint, { [STATUS_INDEX_SHARDS_VARIABLE]: '1' });
    service = dependenciesFromEnvironment(env);
    proxy().fault = { kind: 'indexPartitionLimit', keyAttribute: SHARD_KEY, writesPerSecond: 1 };
    // The SDK retries a throttled write with backoff, within the store budget: about 1 + 2.5 tokens.
    const hot = await Promise.all(Array.from({ length: 10 }, () => create('available')));
    const statuses = hot.map((res) => res.status);
    expect(statuses).toContain(201);
    expect(statuses).toContain(503);
    expect(hot.find((res) => res.status === 503)?.headers['retry-after']).toBe('1');
    expect((await create('pending')).status).toBe(201);
    expect((await create()).status).toBe(201);
  });
});

describe('listPets?status= when one shard fails', () => {
  let expected: unknown[];
  beforeEach(async () => {
    const created = [];
    for (let i = 0; i < PETS; i++) created.push((await create('available')).body as { id: number });
    expected = created.sort((a, b) => a.id - b.id).slice(0, 20);
  });

  it.each<[FaultKind, string]>([
    ['throughput', 'a throttled shard query'],
    ['hang', 'a shard query that times out'],
  ])('%s: answers 503 with Retry-After within the budget, never a short page (%s)', async (kind) => {
    // Which shard holds pets is up to the ids; fail one that does.
    const shard = `available#${(expected[0] as { id: number }).id % SHARDS}`;
    proxy().fault = { kind, operations: ['Query'], bodyIncludes: shard };
    // With 1.6 s of Lambda time left: a store budget of 600 ms, so the fault costs its wait at a fifth of 2.5 s.
    const res = await timed(
      call(listPetsHandler(service), apiEvent('GET', '/pets?status=available&limit=20'), ANSWER_MARGIN_MS + 600),
    );
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      code: 'SERVICE_UNAVAILABLE',
      message: expect.any(String),
      status: 503,
      requestId: expect.any(String),
    });
    expect(res.headers['retry-after']).toBe('1');
    expect(res.ms).toBeLessThan(ANSWER_BOUND_MS);
    expect(proxy().injected).toBeGreaterThan(0);
  });

  it('answers the whole, exact page when a throttled shard query succeeds on the SDK retry', async () => {
    const shard = `available#${(expected[0] as { id: number }).id % SHARDS}`;
    proxy().fault = { kind: 'throughput', operations: ['Query'], bodyIncludes: shard, times: 1 };
    const res = await call(listPetsHandler(service), apiEvent('GET', '/pets?status=available&limit=20'));
    expect(proxy().injected).toBe(1);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expected);
    expect(res.headers.link).toMatch(/rel="next"/);
  });
});

describe('the shard count from configuration', () => {
  it.each(['1', '2', '4', '64'])('takes %s', async (shards) => {
    expect(dependenciesFromEnvironment({ ...env, [STATUS_INDEX_SHARDS_VARIABLE]: shards }).pets.statusIndexShards).toBe(
      Number(shards),
    );
  });

  it.each(['0', '3', '6', '128', '2.0', 'two', '-2'])(
    'refuses %s in one line: a power of two from 1 to 64',
    async (shards) => {
      expect(() => dependenciesFromEnvironment({ ...env, [STATUS_INDEX_SHARDS_VARIABLE]: shards })).toThrow(
        `STATUS_INDEX_SHARDS must be a power of two from 1 to 64, not '${shards}'.`,
      );
    },
  );
});
