/**
 * The write path judged by its history (test/support/history.ts): the local API over real HTTP,
 * its store behind the fault proxy, ids forced to collide through the composition root (ids with
 * 4 random bits on a 50 ms clock: 16 ids a tick, where production has 2,048 a millisecond).
 * Every run records what each client was told and checks it against the stored state after.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { randomInt, randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { idAt, type IdGenerator } from '../../lib/domain/ids.ts';
import { PET_STATUSES, type PetStatus } from '../../lib/domain/schemas.ts';
import { ID_ATTEMPTS } from '../../lib/store/petWrites.ts';
import { createDocumentClient } from '../../lib/store/dynamo.ts';
import { toPet } from '../../lib/store/petReads.ts';
import { startLocalApi, type LocalApi } from '../../local/server.ts';
import type { FaultKind } from '@petstore/stage-emulator/faultProxy';
import { useFaultProxy } from '../support/faultProxy.ts';
import { History, RecordingClient, checkHistory, inParallel, type SentPet } from '../support/history.ts';
import { TEST_API_KEY, TEST_CURSOR_SECRET, useEmbeddedStore } from '../support/store.ts';

const endpoint = useEmbeddedStore();
const proxy = useFaultProxy(endpoint);

/**
 * Ids that collide on purpose, counting how many were drawn. The first draws of each tick come from
 * its 2^bits narrow values; past ID_ATTEMPTS - 1 of them, draws land in the tick's other
 * milliseconds, where ids are as sparse as production's. Narrowing every draw would let a fast
 * machine fill a tick's 16 values and a create exhaust its 8 draws: a 500 production only gives when
 * 8 draws from 2,048 values all collide (below 10^-25), not the behaviour under test.
 */
function collidingIds(bits = 4, tickMs = 50): IdGenerator & { drawn: () => number } {
  const narrowPerTick = Math.min(ID_ATTEMPTS - 1, 2 ** bits - 1);
  let drawn = 0;
  let tick = 0;
  let narrowInTick = 0;
  const next = () => {
    drawn++;
    const now = Math.floor(Date.now() / tickMs) * tickMs;
    if (now !== tick) [tick, narrowInTick] = [now, 0];
    if (narrowInTick++ < narrowPerTick) return idAt(tick, randomInt(2 ** bits), bits);
    return idAt(tick + 1 + randomInt(tickMs - 1), randomInt(2 ** bits), bits);
  };
  return Object.assign(next, { drawn: () => drawn });
}

let api: LocalApi | undefined;
let tableName = '';

/**
 * The local API on a fresh table, its store behind the fault proxy (`faults`) or not. Bursts of
 * 1,000 requests queue on one in-process dynalite, which answers slower than DynamoDB: without
 * faults the budget allows for that, so that nothing but an injected fault can fail a request.
 */
async function startApi(newId: IdGenerator, { faults = false } = {}): Promise<RecordingClient> {
  tableName = `pets-${randomUUID()}`;
  Object.assign(process.env, {
    PETSTORE_API_KEYS: TEST_API_KEY,
    PETSTORE_CURSOR_SECRET: TEST_CURSOR_SECRET,
    DYNAMODB_ENDPOINT: faults ? proxy().endpoint : endpoint(),
    TABLE_NAME: tableName,
    CONTROL_TABLE_NAME: `control-${tableName}`,
    ...(faults ? {} : { STORE_BUDGET_MS: '20000', DYNAMODB_ATTEMPT_TIMEOUT_MS: '10000' }),
  });
  api = await startLocalApi({ port: 0, quiet: true, serviceOverrides: { newId } });
  return new RecordingClient(api.url, TEST_API_KEY, new History(), () => proxy().fault !== undefined);
}

afterEach(async () => {
  await api?.close();
  api = undefined;
  for (const name of [
    'PETSTORE_API_KEYS',
    'PETSTORE_CURSOR_SECRET',
    'DYNAMODB_ENDPOINT',
    'TABLE_NAME',
    'CONTROL_TABLE_NAME',
    'STORE_BUDGET_MS',
    'DYNAMODB_ATTEMPT_TIMEOUT_MS',
  ]) {
    delete process.env[name];
  }
});

/** Every stored pet, read straight from dynalite (not through the proxy). */
async function storedPets() {
  const documents = createDocumentClient({ endpoint: endpoint() });
  const items = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await documents.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey }));
    items.push(...(page.Items ?? []));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  documents.destroy();
  return items.map(toPet);
}

async function violations(client: RecordingClient): Promise<string[]> {
  proxy().fault = undefined;
  return checkHistory(client.history, { stored: await storedPets(), read: (id) => client.read(id) });
}

const rex: SentPet = { name: 'Rex', categoryId: 7, status: 'available' };

/** 1,000-create bursts on one in-process dynalite: about 25-40 s on an idle 2-core machine, more beside other test files. */
const BURST_TIMEOUT_MS = 240_000;

describe('forced id collisions, on the local API', { timeout: BURST_TIMEOUT_MS }, () => {
  it('stores 1,000 identical creates without a key as 1,000 pets', async () => {
    const newId = collidingIds();
    const client = await startApi(newId);
    await inParallel(Array.from({ length: 1_000 }), 32, () => client.create(rex));
    const summary = client.history.summary();
    console.log(`collisions, keyless: ${JSON.stringify(summary)}, ${newId.drawn() - 1_000} ids drawn again`);
    expect(newId.drawn() - 1_000).toBeGreaterThan(10); // the run forced collisions, or it proves nothing (about 150 on an idle machine, 30 on a loaded one)
    expect(await violations(client)).toEqual([]);
    expect(summary).toMatchObject({ acknowledged: 1_000, failed: 0 });
    expect(await storedPets()).toHaveLength(1_000);
  });

  it('ends 1,000 keyed creates of one body in exactly one pet each, replayed on retry', async () => {
    const newId = collidingIds();
    const client = await startApi(newId);
    const keys = Array.from({ length: 1_000 }, (_, i) => `order-${i}`);
    await inParallel(keys, 32, (key) => client.create(rex, key));
    const drawnByFirst = newId.drawn();
    await inParallel(keys, 32, (key) => client.create(rex, key));
    const summary = client.history.summary();
    console.log(`collisions, keyed: ${JSON.stringify(summary)}, ${drawnByFirst - 1_000} ids drawn again`);
    expect(drawnByFirst - 1_000).toBeGreaterThan(10);
    expect(await violations(client)).toEqual([]);
    expect(summary).toMatchObject({ acknowledged: 2_000, replayed: 1_000, failed: 0 });
    expect(await storedPets()).toHaveLength(1_000);
  });
});

describe('half-closed connections, on the local API', () => {
  it('answers every create whose client half-closes: nothing stored goes unacknowledged', async () => {
    const client = await startApi(collidingIds());
    const creates = Array.from({ length: 60 }, (_, i) => ({
      pet: { ...rex, name: `Half ${i}` },
      key: i % 2 === 0 ? `half-${i}` : undefined,
    }));
    await inParallel(creates, 8, ({ pet, key }) => client.create(pet, key, { halfClose: true }));
    await client.walk(undefined, 9);
    const summary = client.history.summary();
    console.log(`half-closed: ${JSON.stringify(summary)}`);
    expect(await violations(client)).toEqual([]);
    expect(summary).toMatchObject({ acknowledged: 60, failed: 0 });
  });
});

type Step =
  | { kind: 'create'; pet: SentPet; key?: string | undefined }
  | { kind: 'walk'; status?: PetStatus | undefined; limit: number };

const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('create' as const),
    pet: fc.record({
      name: fc.constantFrom('Rex', 'Max', 'Rex Max'),
      categoryId: fc.constantFrom(1, 2),
      status: fc.constantFrom(...PET_STATUSES),
    }),
    key: fc.option(fc.constantFrom('k1', 'k2', 'k3'), { nil: undefined }),
  }),
  fc.record({
    kind: fc.constant('walk' as const),
    status: fc.option(fc.constantFrom(...PET_STATUSES), { nil: undefined }),
    limit: fc.integer({ min: 1, max: 5 }),
  }),
);

describe('interleavings chosen by fast-check, on the local API', () => {
  it('keeps every invariant for concurrent creates, retries of one key and walks, in any order', async () => {
    const client = await startApi(collidingIds(3, 200));
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(stepArbitrary, { minLength: 5, maxLength: 25 }),
        async (scheduler, steps) => {
          run++;
          // Keys are per run (a key's body is one pet); bodies differ per key so a reuse is a 422, not a merge.
          const tasks = steps.map(async (step) => {
            await scheduler.schedule(Promise.resolve(), `${step.kind}`);
            if (step.kind === 'walk')
              return client.walk(step.status, step.limit, () => scheduler.schedule(Promise.resolve(), 'next page'));
            const pet = step.key ? { ...step.pet, name: `${step.pet.name}-${step.key}` } : step.pet;
            return client.create(pet, step.key && `run${run}-${step.key}`);
          });
          await scheduler.waitFor(Promise.all(tasks));
          expect(await violations(client)).toEqual([]);
        },
      ),
      { numRuns: 12 },
    );
    const summary = client.history.summary();
    console.log(`interleavings: ${JSON.stringify(summary)}`);
    expect(summary.acknowledged).toBeGreaterThan(0);
    expect(summary.walks).toBeGreaterThan(0);
  });
});

describe('store faults through the fault proxy, on the local API', () => {
  it.each<[FaultKind, string[]]>([
    ['dropAnswer', ['PutItem']],
    ['throttle', ['PutItem', 'GetItem', 'UpdateItem']],
    ['hang', ['PutItem']],
    ['reset', ['PutItem', 'UpdateItem']],
    ['error500', ['PutItem', 'GetItem']],
  ])(
    '%s: keyed creates retried until answered end in one pet each; nothing acknowledged is lost',
    async (kind, operations) => {
      const client = await startApi(collidingIds(), { faults: true });
      const creates = Array.from({ length: 40 }, (_, i) => ({
        pet: { ...rex, name: `Pet ${i}` },
        key: i % 2 === 0 ? `key-${i}` : undefined,
      }));
      proxy().fault = { kind, operations, times: 30 };
      await inParallel(creates, 8, ({ pet, key }) => client.create(pet, key));
      const injected = proxy().injected;
      proxy().fault = undefined;
      // A client with a key retries until it is answered; one without cannot know, and does not.
      for (const { pet, key } of creates.filter(({ key }) => key !== undefined)) {
        for (let attempt = 0; attempt < 5 && (await client.create(pet, key)).status !== 201; attempt++);
      }
      await client.walk(undefined, 7);
      await client.walk('available', 3);
      const summary = client.history.summary();
      console.log(`${kind}: ${injected} requests faulted, ${JSON.stringify(summary)}`);
      expect(injected).toBeGreaterThan(0);
      expect(await violations(client)).toEqual([]);
      const keys = new Set(
        client.history.creates
          .filter((event) => event.status === 201 && event.idempotencyKey)
          .map((event) => event.idempotencyKey),
      );
      expect(keys.size).toBe(20);
    },
  );
});
