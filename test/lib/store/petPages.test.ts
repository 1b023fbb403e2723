/**
 * Status pages over the sharded index (lib/store/petPages.ts), against a reference model, on
 * dynalite: random interleavings of creates (every status, and none) with page walks of random
 * limits, for shard counts from 1 to more shards than pets. Every page must be exactly the model's
 * at the moment it is read, and every walk must return each pet that existed when it began once.
 */
import fc from 'fast-check';
import { QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import type { Pet, PetStatus } from '../../../lib/domain/schemas.ts';
import { createDocumentClient } from '../../../lib/store/dynamo.ts';
import { listPets, shareOf, statusShardQuery } from '../../../lib/store/petPages.ts';
import { createPet } from '../../../lib/store/petWrites.ts';
import type { PetsTable } from '../../../lib/store/table.ts';
import { freshEnvironment, useEmbeddedStore } from '../../support/store.ts';

const endpoint = useEmbeddedStore();
const STATUSES = ['available', 'pending', 'sold'] as const;

type Action =
  | { kind: 'create'; id: number; status: PetStatus | undefined }
  | { kind: 'start'; status: PetStatus; limit: number }
  | { kind: 'step'; walk: number };

interface Walk {
  status: PetStatus;
  limit: number;
  afterId?: number | undefined;
  finished: boolean;
  seen: number[];
  /** Ids of the status when the walk began: each must come exactly once. */
  existing: number[];
}

/** The model's page: the first `limit` ids of `status` after `afterId`, and whether more remain. */
function modelPage(model: Pet[], status: PetStatus, limit: number, afterId: number | undefined) {
  const after = model
    .filter((pet) => pet.status === status && (afterId === undefined || pet.id > afterId))
    .sort((a, b) => a.id - b.id);
  const pets = after.slice(0, limit);
  return after.length > limit ? { pets, lastId: pets.at(-1)!.id } : { pets };
}

/** Mostly one status, so that walks are long enough to need several reads of a shard. */
const newStatus = fc.oneof(
  { weight: 6, arbitrary: fc.constant('available' as const) },
  { weight: 1, arbitrary: fc.constantFrom('pending' as const, 'sold' as const, undefined) },
);

const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('create' as const),
      id: fc.integer({ min: 1, max: 2 ** 40 }),
      status: newStatus,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('start' as const),
      status: fc.constantFrom(...STATUSES),
      limit: fc.integer({ min: 1, max: 12 }),
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('step' as const), walk: fc.nat() }) },
);

async function run(shards: number, actions: Action[]): Promise<void> {
  const env = await freshEnvironment(endpoint());
  const documents = createDocumentClient({ endpoint: endpoint() });
  const table: PetsTable = { documents, tableName: env.TABLE_NAME!, statusIndexShards: shards };
  const model: Pet[] = [];
  const walks: Walk[] = [];
  try {
    for (const step of actions) {
      if (step.kind === 'create') {
        if (model.some((pet) => pet.id === step.id)) continue;
        const pet = await createPet(
          table,
          { name: `Pet ${step.id}`, categoryId: 1, ...(step.status ? { status: step.status } : {}) },
          { newId: () => step.id },
        );
        model.push(pet);
      } else if (step.kind === 'start') {
        const existing = model.filter((pet) => pet.status === step.status).map((pet) => pet.id);
        walks.push({ status: step.status, limit: step.limit, finished: false, seen: [], existing });
      } else {
        const open = walks.filter((walk) => !walk.finished);
        const walk = open[step.walk % Math.max(1, open.length)];
        if (walk) await nextPage(table, model, walk);
      }
    }
    for (const walk of walks) while (!walk.finished) await nextPage(table, model, walk);
  } finally {
    documents.destroy();
  }
}

async function nextPage(table: PetsTable, model: Pet[], walk: Walk): Promise<void> {
  const page = await listPets(table, { limit: walk.limit, status: walk.status, afterId: walk.afterId });
  expect(page).toEqual(modelPage(model, walk.status, walk.limit, walk.afterId));
  walk.seen.push(...page.pets.map((pet) => pet.id));
  walk.afterId = page.lastId;
  if (page.lastId !== undefined) return;
  walk.finished = true;
  expect(new Set(walk.seen).size).toBe(walk.seen.length);
  for (const id of walk.existing) expect(walk.seen).toContain(id);
}

describe('status pages over a sharded index', () => {
  it('match the reference model under interleaved creates and walks, for 1 to more shards than pets', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          { weight: 2, arbitrary: fc.constant(1) },
          { weight: 5, arbitrary: fc.integer({ min: 2, max: 8 }) },
          { weight: 1, arbitrary: fc.integer({ min: 40, max: 64 }) },
        ),
        fc.array(action, { minLength: 1, maxLength: 60, size: 'max' }),
        run,
      ),
      { numRuns: 25 },
    );
  }, 60_000);

  it('asks each shard for about its part of the page', () => {
    expect(shareOf(21, 1)).toBe(21);
    expect(shareOf(2, 2)).toBe(1);
    expect(shareOf(21, 2)).toBe(12);
    expect(shareOf(101, 2)).toBe(53);
    expect(shareOf(1, 64)).toBe(1);
  });
});

describe('the reads of a status page', () => {
  it('ask each shard for its share, then the one shard left for all that is still wanted', async () => {
    const env = await freshEnvironment(endpoint());
    const documents = createDocumentClient({ endpoint: endpoint() });
    const table: PetsTable = { documents, tableName: env.TABLE_NAME!, statusIndexShards: 4 };
    try {
      // 30 pets, every one on shard 1 of 4 (id mod 4): the other three shards are empty.
      for (let n = 0; n < 30; n++)
        await createPet(table, { name: `Pet ${n}`, categoryId: 1, status: 'sold' }, { newId: () => 4 * n + 1 });
      const send = vi.spyOn(documents, 'send');
      const page = await listPets(table, { limit: 10, status: 'sold' });
      expect(page.pets.map((pet) => pet.id)).toEqual(Array.from({ length: 10 }, (_, n) => 4 * n + 1));
      expect(page.lastId).toBe(37);
      const queries = send.mock.calls.map(([command]) => command).filter((command) => command instanceof QueryCommand);
      const results = await Promise.all(
        send.mock.results.map((result) => result.value as Promise<{ Items?: unknown[] }>),
      );
      // Round one: shareOf(11, 4) = 3 from each shard; three come back empty and are done. Round
      // two: shard 1 alone, for shareOf(11 - 3, 1) = 8. Eleven items read for ten pets listed.
      expect(queries.map((query) => [query.input.ExpressionAttributeValues?.[':shard'], query.input.Limit])).toEqual([
        ['sold#0', 3],
        ['sold#1', 3],
        ['sold#2', 3],
        ['sold#3', 3],
        ['sold#1', 8],
      ]);
      expect(results.reduce((sum, result) => sum + (result.Items?.length ?? 0), 0)).toBe(11);
    } finally {
      documents.destroy();
    }
  });

  it('read again only the shards that have nothing left to take, while another still holds unread pets', async () => {
    const env = await freshEnvironment(endpoint());
    const documents = createDocumentClient({ endpoint: endpoint() });
    const table: PetsTable = { documents, tableName: env.TABLE_NAME!, statusIndexShards: 2 };
    try {
      // Shard 0 (even ids) holds the small ids, shard 1 (odd ids) only larger ones.
      for (let n = 1; n <= 12; n++)
        await createPet(table, { name: `Pet ${n}`, categoryId: 1, status: 'sold' }, { newId: () => 2 * n });
      for (let n = 0; n < 8; n++)
        await createPet(table, { name: `Pet ${n}`, categoryId: 1, status: 'sold' }, { newId: () => 1001 + 2 * n });
      const send = vi.spyOn(documents, 'send');
      const page = await listPets(table, { limit: 10, status: 'sold' });
      expect(page.pets.map((pet) => pet.id)).toEqual(Array.from({ length: 10 }, (_, n) => 2 * n + 2));
      expect(page.lastId).toBe(20);
      const queries = send.mock.calls.map(([command]) => command).filter((command) => command instanceof QueryCommand);
      // Round one: shareOf(11, 2) = 6 from each; the six of shard 0 are taken, shard 1's wait behind
      // them. Then shard 0 alone, for shareOf(5, 2) = 3, and for shareOf(2, 2) = 1.
      expect(queries.map((query) => [query.input.ExpressionAttributeValues?.[':shard'], query.input.Limit])).toEqual([
        ['sold#0', 6],
        ['sold#1', 6],
        ['sold#0', 3],
        ['sold#0', 1],
      ]);
    } finally {
      documents.destroy();
    }
  });

  it('name the id bound only when there is one', () => {
    expect(statusShardQuery('pets', 'sold#0', 5).input).toMatchObject({
      KeyConditionExpression: '#shard = :shard',
      ExpressionAttributeNames: { '#shard': 'statusShard' },
      ExpressionAttributeValues: { ':shard': 'sold#0' },
    });
    expect(Object.keys(statusShardQuery('pets', 'sold#0', 5).input.ExpressionAttributeValues!)).toEqual([':shard']);
    expect(Object.keys(statusShardQuery('pets', 'sold#0', 5).input.ExpressionAttributeNames!)).toEqual(['#shard']);
    expect(statusShardQuery('pets', 'sold#0', 5, 7).input).toMatchObject({
      KeyConditionExpression: '#shard = :shard AND #id > :after',
      ExpressionAttributeNames: { '#shard': 'statusShard', '#id': 'id' },
      ExpressionAttributeValues: { ':shard': 'sold#0', ':after': 7 },
    });
  });
});

describe('the reads of a page without a status', () => {
  it('read on past a Scan page that 1 MB cut short, for only what is still wanted', async () => {
    const env = await freshEnvironment(endpoint());
    const documents = createDocumentClient({ endpoint: endpoint() });
    const table: PetsTable = { documents, tableName: env.TABLE_NAME!, statusIndexShards: 1 };
    try {
      // Pets of about 360 KB: a Scan answers at most three of them (DynamoDB and dynalite stop a page
      // once it holds 1 MB), whatever its Limit, and says where to resume.
      const name = 'x'.repeat(360_000);
      const ids = [11, 12, 13, 14, 15];
      for (const id of ids) await createPet(table, { name, categoryId: 1 }, { newId: () => id });
      const send = vi.spyOn(documents, 'send');
      const page = await listPets(table, { limit: 3 });
      const scans = send.mock.calls.map(([command]) => command).filter((command) => command instanceof ScanCommand);
      const results = await Promise.all(
        send.mock.results.map((result) => result.value as Promise<{ Items?: unknown[] }>),
      );
      // Three pets and a cut: one more is read only to know that more remain.
      expect(scans.map((scan) => scan.input.Limit)).toEqual([4, 1]);
      expect(results.map((result) => result.Items?.length)).toEqual([3, 1]);
      expect(page.pets).toHaveLength(3);
      expect(page.lastId).toBe(page.pets[2]!.id);
      const rest = await listPets(table, { limit: 3, afterId: page.lastId });
      expect([...page.pets, ...rest.pets].map((pet) => pet.id).sort()).toEqual(ids);
      expect(rest.lastId).toBeUndefined();
    } finally {
      documents.destroy();
    }
  }, 30_000);
});
