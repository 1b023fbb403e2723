/**
 * One-off measurement: what the start after an unclean stop pays for local/storeRepair.ts on a
 * persisted store of many pets, with no phantom and with a few, and what the alternative the
 * design started from (scan the index, BatchGet its ids) would pay.
 *
 *   node --import tsx scripts/measureStoreRepair.ts [pets=100000] [phantoms=5]
 *
 * Works in a temporary folder, on loopback only; removes it at the end.
 */
import '../local/requireNode22.mjs';
import { BatchGetCommand, BatchWriteCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { Level } from 'level';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PET_STATUSES } from '../lib/domain/schemas.ts';
import { createDocumentClient } from '../lib/store/dynamo.ts';
import { DEFAULT_STATUS_INDEX_SHARDS, STATUS_INDEX, petsTable, statusShardOf } from '../lib/store/table.ts';
import { ensurePetsTable, startEmbeddedStore } from '../local/embeddedStore.ts';
import { repairPetsTable } from '../local/storeRepair.ts';

const PETS = Number(process.argv[2] ?? 100_000);
const PHANTOMS = Number(process.argv[3] ?? 5);
const TABLE = 'pets';
const BATCH = 25;
const IN_FLIGHT = 16;

const dir = mkdtempSync(join(tmpdir(), 'petstore-repair-measure-'));
const levelDir = join(dir, 'dynalite');

async function inParallel<T>(items: T[], width: number, run: (item: T) => Promise<void>): Promise<void> {
  let at = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (at < items.length) await run(items[at++] as T);
    }),
  );
}

async function withStore<T>(use: (endpoint: string) => Promise<T>): Promise<T> {
  const store = await startEmbeddedStore({ path: levelDir });
  try {
    return await use(store.endpoint);
  } finally {
    await store.close();
  }
}

async function seed(endpoint: string): Promise<void> {
  await ensurePetsTable(endpoint, TABLE);
  const documents = createDocumentClient({ endpoint, attemptTimeoutMs: 30_000 });
  const base = 1_000_000_000_000;
  const batches = Array.from({ length: Math.ceil(PETS / BATCH) }, (_, b) =>
    Array.from({ length: Math.min(BATCH, PETS - b * BATCH) }, (_, i) => {
      const id = base + (b * BATCH + i) * 2048 + ((b * 7 + i * 13) % 2048);
      const status = PET_STATUSES[id % PET_STATUSES.length] as string;
      const item = { id, name: `Pet ${id}`, categoryId: 1 + (id % 9), status };
      return {
        ...item,
        [petsTable.statusIndex.partitionKey.name]: statusShardOf(status, id, DEFAULT_STATUS_INDEX_SHARDS),
      };
    }),
  );
  await inParallel(batches, IN_FLIGHT, async (items) => {
    let requests = { [TABLE]: items.map((Item) => ({ PutRequest: { Item } })) } as
      | Record<string, unknown[]>
      | undefined;
    while (requests && Object.keys(requests).length) {
      const out = await documents.send(new BatchWriteCommand({ RequestItems: requests as never }));
      requests = out.UnprocessedItems as typeof requests;
    }
  });
  documents.destroy();
}

/** Deletes `count` items behind the index's back: what a kill between dynalite's two writes leaves. */
async function makePhantoms(count: number): Promise<void> {
  const db = new Level<string, unknown>(levelDir, { valueEncoding: 'json' });
  const keys = await db.keys({ gte: `item-${TABLE}~`, lt: `item-${TABLE}~\uffff`, limit: count }).all();
  await db.batch(keys.map((key) => ({ type: 'del' as const, key })));
  await db.close();
}

/** The alternative: scan the index, BatchGet its ids (projection id), count the missing ones. */
async function scanAndBatchGet(endpoint: string): Promise<{ missing: number; ms: number }> {
  const started = performance.now();
  const documents = createDocumentClient({ endpoint, attemptTimeoutMs: 30_000 });
  const ids: number[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await documents.send(
      new ScanCommand({ TableName: TABLE, IndexName: STATUS_INDEX, ExclusiveStartKey: startKey }),
    );
    ids.push(...(page.Items ?? []).map((item) => item.id as number));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  const chunks = Array.from({ length: Math.ceil(ids.length / 100) }, (_, c) => ids.slice(c * 100, c * 100 + 100));
  let found = 0;
  await inParallel(chunks, 8, async (chunk) => {
    let keys = chunk.map((id) => ({ id }));
    while (keys.length) {
      const out = await documents.send(
        new BatchGetCommand({ RequestItems: { [TABLE]: { Keys: keys, ProjectionExpression: 'id' } } }),
      );
      found += out.Responses?.[TABLE]?.length ?? 0;
      keys = (out.UnprocessedKeys?.[TABLE]?.Keys ?? []) as typeof keys;
    }
  });
  documents.destroy();
  return { missing: ids.length - found, ms: performance.now() - started };
}

const ms = (value: number) => `${Math.round(value)} ms`;
try {
  let started = performance.now();
  await withStore(seed);
  console.log(`seeded ${PETS} pets in ${ms(performance.now() - started)}`);

  started = performance.now();
  await withStore(async () => {});
  console.log(`open and close of the store (what every start pays): ${ms(performance.now() - started)}`);

  const clean = await withStore((endpoint) => repairPetsTable(endpoint, TABLE));
  console.log(`repair, no phantom: repaired ${clean.repaired} in ${ms(clean.ms)}`);
  const alternative = await withStore(scanAndBatchGet);
  console.log(
    `alternative (scan index + BatchGet), no phantom: ${alternative.missing} missing in ${ms(alternative.ms)}`,
  );

  await makePhantoms(PHANTOMS);
  const before = await withStore(scanAndBatchGet);
  const repaired = await withStore((endpoint) => repairPetsTable(endpoint, TABLE));
  console.log(`repair, ${before.missing} phantoms: repaired ${repaired.repaired} in ${ms(repaired.ms)}`);
  const after = await withStore(scanAndBatchGet);
  console.log(`after the repair: ${after.missing} index entries without their pet`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
